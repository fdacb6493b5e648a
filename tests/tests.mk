# Test programs: tests/t_NAME.c -> build/tests/t_NAME, linked with the
# static library.  Tests with special build needs have their own rules in
# tests/*.mk fragments included below.
TEST_SRCS := $(wildcard tests/t_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(B)/tests/%)

$(B)/tests/t_%: tests/t_%.c $(STATIC) tests/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(SFRAME_AS) $< -o $@ $(STATIC) -ldl -lpthread

-include tests/*.mk.inc
