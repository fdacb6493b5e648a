# Object tests: dlopen/dlclose churn under sampling (t_churn) and objects
# kept loaded (t_keep_loaded).  Ground truth comes from dladdr1() symbol
# sizes, so the programs are linked with -rdynamic; chain code is built
# with CHAIN_CFLAGS (tests/tests.mk).
WALK_CHURN_LIBS := $(patsubst %,$(B)/tests/walk_churn_%.so,a b c d x y p q)

$(B)/tests/t_churn: tests/objects/t_churn.c tests/walk/walk_common.h tests/lib/sig_install.h \
		$(WALK_CHURN_LIBS) $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -Itests/walk -rdynamic $< -o $@ $(STATIC) -ldl -lpthread

# One source, several objects: each variant has its own chain depth, frame
# sizes and layout (tests/objects/walk_churn_lib.c).
$(B)/tests/walk_churn_%.so: tests/objects/walk_churn_lib.c | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_SOFLAGS) -DCHURN_VARIANT_$* $< -o $@

# t_keep_loaded is also linked with walk_churn_c.so (DT_NEEDED, found next
# to the program): an object loaded at start-up.
$(B)/tests/t_keep_loaded: tests/objects/t_keep_loaded.c tests/walk/walk_common.h \
		$(WALK_CHURN_LIBS) $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -Itests/walk -rdynamic $< -o $@ $(STATIC) \
		-L$(B)/tests -Wl,--no-as-needed -l:walk_churn_c.so -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' -ldl -lpthread
