# The signal path's proof (t_interpose: every libc entry the walk could
# reach interposed, a TLS object loaded late) and garbage contexts
# (t_garbage).  Linked -rdynamic, chain code built with CHAIN_CFLAGS.
SAFETY_TESTS := $(B)/tests/t_interpose $(B)/tests/t_garbage
$(SAFETY_TESTS): $(B)/tests/%: tests/safety/%.c tests/walk/walk_common.h \
		tests/lib/sig_install.h $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(CHAIN_CFLAGS) -Itests/walk -rdynamic $< -o $@ $(STATIC) -ldl -lpthread

$(B)/tests/walk_tls_lib.so: tests/safety/walk_tls_lib.c | $(B)/tests
	$(CC) $(TESTFLAGS) -fPIC -shared $< -o $@

$(B)/tests/t_interpose: $(SHARED) $(B)/tests/walk_tls_lib.so
$(B)/tests/t_garbage: $(WALK_FC_LIB) $(WALK_CHURN_LIBS)
