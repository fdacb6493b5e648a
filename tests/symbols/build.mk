# t_symbolize dlopen()s (and copies) a helper object; see
# tests/symbols/symbolize_helper.c.  -Wl,--hash-style=sysv so that the DT_HASH
# path is tested too (libc covers DT_GNU_HASH).
SYMBOLIZE_HELPER := $(B)/tests/libsfb_symbolize_helper.so

$(SYMBOLIZE_HELPER): tests/symbols/symbolize_helper.c | $(B)/tests
	$(CC) $(TESTFLAGS) -fPIC -shared -Wl,--hash-style=sysv $< -o $@

$(B)/tests/t_symbolize: $(SYMBOLIZE_HELPER)

# noreturn_tail: a function ending in a call to abort() right after a
# symbol without a size (tests/symbols/t_noreturn_tail.sh).  Module-level
# assembly stays in source order with -fno-toplevel-reorder (gcc; clang
# puts it first anyway, and knows no such flag).
NORETURN_TAIL := $(B)/tests/noreturn_tail
$(NORETURN_TAIL): tests/symbols/noreturn_tail.c $(STATIC) backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(SFRAME_AS) $(if $(findstring clang,$(CC)),,-fno-toplevel-reorder) \
		$< -o $@ $(STATIC) -ldl -lpthread
TEST_BINS += $(NORETURN_TAIL)
