# Test programs: tests/LAYER/t_NAME.c -> build/tests/t_NAME, linked with
# the static library.  Each folder's build.mk holds the rules of its tests
# that need more than the generic one below (helper objects, flags).
#   lib/      what every test uses: check.h, check.sh, install-deps.sh, ...
#   base/     the inflater and deflater
#   rows/     SFrame and CFI decoding against readelf and libgcc
#   objects/  discovery, the object cache, dlclose
#   walk/     whole walks: chains, every instruction (also of Lua, zlib and
#             bzip2 built from Debian's sources), signals, the memo,
#             libunwind on the same context
#   safety/   the signal path's proof (interposer) and garbage contexts
#   symbols/  names, debug files, perf maps
#   report/   crash reports and the crash handler
#   tools/    the examples and the preload library, run as users run them
#   world/    the distribution corpus: Debian programs sampled, every stack
#             compared with libunwind's (t_world.sh)
#   fuzz/     libFuzzer targets, their seed corpora, the replay smoke test
#   port/ cross/ fixtures/ bench/   other C libraries, other architectures,
#             binaries from other binutils, the benchmark
TEST_DIRS := base rows objects walk safety symbols report tools
TEST_SRCS := $(foreach d,$(TEST_DIRS),$(wildcard tests/$(d)/t_*.c))
TEST_BINS := $(patsubst %.c,$(B)/tests/%,$(notdir $(TEST_SRCS)))

# Chain code that only unwind tables can walk: no frame pointer unless a
# function needs one (VLA, alloca), no sibling calls, so that every frame
# stays on the stack.  The spinning chains fold values with wrapping int
# arithmetic, and the fault tests store through NULL on purpose: tell
# sanitizer builds so.  Helper objects for dlopen() are built the same way,
# with -fno-semantic-interposition so that calls inside an object go
# straight to the function, not through its PLT.
CHAIN_CFLAGS := $(SFRAME_AS) -fomit-frame-pointer -fno-optimize-sibling-calls \
	-fno-sanitize=signed-integer-overflow,null
CHAIN_SOFLAGS := $(CHAIN_CFLAGS) -fPIC -shared -fno-semantic-interposition

define test_rule
$(B)/tests/t_%: tests/$(1)/t_%.c $(STATIC) tests/lib/check.h backtrace.h | $(B)/tests
	$$(CC) $$(TESTFLAGS) $$(SFRAME_AS) $$< -o $$@ $$(STATIC) -ldl -lpthread
endef
$(foreach d,$(TEST_DIRS),$(eval $(call test_rule,$(d))))

include $(foreach d,$(TEST_DIRS) world fuzz port cross bench,tests/$(d)/build.mk)
