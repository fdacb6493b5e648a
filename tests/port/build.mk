# Portable walker test (tests/port/t_port_walk.c), built twice: dynamic with
# a dlopen()ed object, and static.  Both run in `make test`; `make
# test-port` (tests/port/run.sh) also builds them, and the walker tests,
# for glibc 2.31 and musl.  The chain functions have no frame pointers:
# only SFrame rows unwind them.
PORT_CFLAGS := $(SFRAME_AS) -fomit-frame-pointer -fno-optimize-sibling-calls \
	-fno-sanitize=signed-integer-overflow,null
PORT_DL := $(B)/tests/port_dl.so

$(PORT_DL): tests/port/port_dl.c | $(B)/tests
	$(CC) $(TESTFLAGS) $(PORT_CFLAGS) -fPIC -shared -fno-semantic-interposition $< -o $@

$(B)/tests/t_port_walk: tests/port/t_port_walk.c $(PORT_DL) $(STATIC) tests/lib/check.h \
		backtrace.h | $(B)/tests
	$(CC) $(TESTFLAGS) $(PORT_CFLAGS) -DPORT_DLOPEN $< -o $@ $(STATIC) -ldl -lpthread

# Static: discovery from the program's own headers.  Not under the
# sanitizers, whose runtimes do not link statically.
$(B)/tests/t_port_static: tests/port/t_port_walk.c $(STATIC) tests/lib/check.h backtrace.h \
		| $(B)/tests
	$(CC) $(TESTFLAGS) $(PORT_CFLAGS) -static $< -o $@ $(STATIC) -lpthread

TEST_BINS += $(B)/tests/t_port_walk
TEST_BINS += $(if $(findstring sanitize,$(CFLAGS)),,$(B)/tests/t_port_static)

.PHONY: test-port
test-port:
	@bash tests/port/run.sh

# An unmodified program for the preload library (tests/tools/t_preload.sh):
# no sframebt, SFrame rows in its code as a distribution would build it.
$(B)/tests/preload_victim: tests/port/preload_victim.c | $(B)/tests
	$(CC) $(TESTFLAGS) $(PORT_CFLAGS) -rdynamic $< -o $@ -lpthread
TEST_BINS += $(B)/tests/preload_victim $(PRELOAD)
