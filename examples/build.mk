# Build rules for the examples that need more than the generic
# `$(B)/%: examples/%.c` rule (see the Makefile), and for their demo
# workloads.  Example workloads are compiled -O2 WITHOUT frame pointers, so
# that the stack traces come from SFrame (-Wa,--gsframe), not from %rbp.
EX_CFLAGS := $(TESTFLAGS) -O2 -fomit-frame-pointer $(SFRAME_AS)
EX_DEPS   := examples/build.mk backtrace.h   # rebuild when these change

# crash-handler: a program plus a shared object it calls into, found next
# to it through the $ORIGIN rpath.  The shared object crashes on purpose:
# no sanitizer (UBSan would report the division by zero instead of letting
# it raise SIGFPE), even in the sanitizer build (make test-asan).
$(B)/libcrashdemo.so: examples/demo/libcrashdemo.c examples/demo/crashdemo.h $(EX_DEPS) | $(B)/obj
	$(CC) $(EX_CFLAGS) -fno-sanitize=all -fPIC -shared -Wl,-soname,libcrashdemo.so \
		$< -o $@

$(B)/crash-handler: examples/crash-handler.c examples/demo/crashdemo.h \
		$(B)/libcrashdemo.so $(STATIC) $(EX_DEPS)
	$(CC) $(EX_CFLAGS) $< -o $@ $(B)/libcrashdemo.so -Wl,-rpath,'$$ORIGIN' \
		$(STATIC) -ldl -lpthread

# profiler: examples/profiler.c three ways.
#  - build/libsframe-profiler.so: for LD_PRELOAD.  A shared object needs
#    position-independent code throughout, so it links the library's PIC
#    objects (build/pic/*.o), not build/libsframebt.a.
#  - build/profiler: the demo workload with the profiler linked in, using
#    sframe_prof_start()/sframe_prof_stop() (replaces the generic rule).
#  - build/hotcold: the same workload, unmodified, to run under LD_PRELOAD.
#  - examples/prof/pprof.c, the pprof writer, and examples/prof/srclines.c,
#    its source lines, are compiled into both.
PROF_SO := $(B)/libsframe-profiler.so
PROF_SRCS := examples/profiler.c examples/prof/pprof.c examples/prof/srclines.c
PROF_DEPS := $(PROF_SRCS) examples/profiler.h examples/prof/pprof.h examples/prof/srclines.h \
	$(EX_DEPS)

# The profiler's preload also sees JIT code registered through
# __register_frame() (src/preload/register_frame.c), as libsframebt-preload.so does.
$(PROF_SO): $(PROF_DEPS) $(PIC_OBJS) $(B)/pic/preload/register_frame.o
	$(CC) $(EX_CFLAGS) -fPIC -shared -DSFRAME_PROF_PRELOAD $(PROF_SRCS) $(PIC_OBJS) \
		$(B)/pic/preload/register_frame.o -o $@ -ldl -lpthread

$(B)/profiler: $(PROF_DEPS) examples/demo/hotcold.c $(STATIC)
	$(CC) $(EX_CFLAGS) -DHOTCOLD_LINKED examples/demo/hotcold.c $(PROF_SRCS) -o $@ \
		$(STATIC) -ldl -lpthread

# sframe-prof: the launcher (examples/sframe-prof.c), which needs nothing of
# the library: it sets LD_PRELOAD to libsframe-profiler.so and execs.
$(B)/sframe-prof: examples/sframe-prof.c $(EX_DEPS) | $(B)/obj
	$(CC) $(EX_CFLAGS) $< -o $@

examples: $(B)/sframe-prof

$(B)/hotcold: examples/demo/hotcold.c $(EX_DEPS) | $(B)/obj
	$(CC) $(EX_CFLAGS) $< -o $@ -lpthread

examples: $(PROF_SO) $(B)/hotcold

# server: the generic rule would do, but for the explicit -O2 without frame
# pointers of the other example workloads.
$(B)/server: examples/server.c $(STATIC) $(EX_DEPS)
	$(CC) $(EX_CFLAGS) $< -o $@ $(STATIC) -ldl -lpthread

# crash-cxx: examples/crash-cxx.cc, the crash report of an uncaught C++
# exception (tests/report/t_crash_handler.sh), built with the C++ driver that
# matches $(CC) (g++ for gcc, clang++ for clang), -O2 without frame
# pointers, with SFrame, and linked with the static library.
CRASH_CXX := $(if $(findstring clang,$(CC)),$(subst clang,clang++,$(CC)),$(if \
	$(findstring gcc,$(CC)),$(subst gcc,g++,$(CC)),g++))

$(B)/crash-cxx: examples/crash-cxx.cc $(STATIC) backtrace.h examples/build.mk
	$(CRASH_CXX) -std=gnu++17 -Wall -Wextra -Werror -I. $(CFLAGS) -O2 -fomit-frame-pointer \
		$(SFRAME_AS) $< -o $@ $(STATIC) -ldl -lpthread

examples: $(B)/crash-cxx
