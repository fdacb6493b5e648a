# sframebt — see README.md.  `make`, `make test`, `make install PREFIX=dir`.
CC      ?= cc
CFLAGS  ?= -O2 -g
PREFIX  ?= /usr/local
B       := build
VERSION := 2.0.0
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))

WARN      := -std=gnu11 -Wall -Wextra -Werror
# The library's own frames carry SFrame rows (binutils >= 2.40), so that a
# walk started inside it (sframe_write_crash_report) can step out of it.
# clang's integrated assembler has no --gsframe: it then hands the
# assembly to GNU as.
GSFRAME   := $(shell echo 'int f(void){return 0;}' | $(CC) -Wa,--gsframe -x c -c - -o /dev/null 2>/dev/null && \
	echo -Wa,--gsframe || { echo 'int f(void){return 0;}' | $(CC) -fno-integrated-as -Wa,--gsframe -x c -c - \
	-o /dev/null 2>/dev/null && echo -fno-integrated-as -Wa,--gsframe; })
# Programs built for tests and examples carry SFrame too, where the
# assembler can write it (binutils before 2.46 cannot for s390x).
comma     := ,
SFRAME_AS := $(if $(GSFRAME),-Wa$(comma)--gsframe)
# ld drops .sframe sections with --gc-sections before binutils 2.47 (2.40
# on x86-64 and AArch64, 2.44 on AArch64): the shared libraries collect
# unused sections only where the linker keeps them.
GC_SECTIONS := $(if $(GSFRAME),$(shell d=$$(mktemp -d) && echo 'int f(void){return 0;}' | \
	$(CC) $(GSFRAME) -fPIC -shared -Wl,--gc-sections -x c - -o $$d/t.so 2>/dev/null && \
	grep -q '\.sframe' $$d/t.so && echo -Wl,--gc-sections; rm -rf $$d),-Wl,--gc-sections)
LIBFLAGS  := $(WARN) -fPIC -fvisibility=hidden -I. -Isrc $(GSFRAME) $(CFLAGS)
TESTFLAGS := $(WARN) -I. -Isrc -Itests -Itests/lib $(CFLAGS)

# The target architecture is the compiler's, not the host's.
ARCH     := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
# The library, layer by layer (docs/DESIGN.md, Overview): each folder of
# src/ lists its sources in its build.mk.  Headers are included by their
# path below src/ ("rows/cfi.h").
LIB_SRCS :=
NO_FRAME_POINTER :=
include src/base/build.mk src/arch/build.mk src/rows/build.mk src/objects/build.mk \
	src/walk/build.mk src/symbols/build.mk src/report/build.mk src/api/build.mk
LIB_HDRS := $(wildcard src/*/*.h)
LIB_OBJS := $(LIB_SRCS:src/%.c=$(B)/obj/%.o)
PIC_OBJS := $(LIB_SRCS:src/%.c=$(B)/pic/%.o)

STATIC := $(B)/libsframebt.a
SHARED := $(B)/libsframebt.so.$(VERSION)
PRELOAD := $(B)/libsframebt-preload.so

EXAMPLES := $(patsubst examples/%.c,$(B)/%,$(wildcard examples/*.c))

.PHONY: all lib examples test test-valgrind test-asan install clean fuzz bench
all: lib examples

lib: $(STATIC) $(SHARED) $(PRELOAD)

include src/preload/build.mk

# Frame pointers everywhere but where a folder's build.mk says otherwise
# (NO_FRAME_POINTER).
frame_flags = $(if $(filter $(NO_FRAME_POINTER),$(1)),-fomit-frame-pointer,-fno-omit-frame-pointer)
$(B)/obj/%.o: src/%.c $(LIB_HDRS) backtrace.h Makefile
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(call frame_flags,$*) -c $< -o $@
$(B)/pic/%.o: src/%.c $(LIB_HDRS) backtrace.h Makefile
	@mkdir -p $(@D)
	$(CC) $(LIBFLAGS) $(call frame_flags,$*) -c $< -o $@

$(STATIC): $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^
$(SHARED): $(PIC_OBJS)
	$(CC) -shared -Wl,-soname,libsframebt.so.$(SOMAJOR) $(GC_SECTIONS) -o $@ $^
	ln -sf libsframebt.so.$(VERSION) $(B)/libsframebt.so.$(SOMAJOR)
	ln -sf libsframebt.so.$(VERSION) $(B)/libsframebt.so

$(B)/obj $(B)/pic $(B)/tests:
	mkdir -p $@

examples: $(EXAMPLES)
$(B)/%: examples/%.c $(STATIC) backtrace.h
	$(CC) $(TESTFLAGS) $(SFRAME_AS) $< -o $@ $(STATIC) -ldl -lpthread

# Tests: each tests/LAYER/t_*.c is a program; tests/run.sh runs them all
# plus the script checks (tests/LAYER/t_*.sh) and prints "N passed, N failed".
# The examples' own build rules are examples/build.mk's.
include examples/build.mk
include tests/tests.mk
# Single-stepping with the x86 trap flag, x86 assembly or glibc's x86-64
# signal-frame CFI: x86-64 only (make test-cross steps the other
# architectures with breakpoints); and the libunwind comparisons, which
# link the host's libunwind.
ifneq ($(ARCH),x86_64)
TEST_BINS := $(filter-out $(addprefix $(B)/tests/,t_every_insn t_walk_chains t_overflow \
	t_cfi t_unw_compare t_fibers t_jit t_jit_scale t_jit_churn t_start_nocfi),$(TEST_BINS))
endif

# Build everything `make test` runs, without running it (cross builds).
.PHONY: test-build
test-build: all $(TEST_BINS)

# make test first installs the Debian packages the tests need, as
# tests/run-all.sh does (tests/lib/install-deps.sh: apt-get, through sudo
# when not root), or stops with the command that installs them; then
# builds (t_unw_compare links libunwind; the inflater's fuzz target, replayed
# by t_fuzz_smoke.sh, compares with zlib, the Zstandard decoder's with
# libzstd, whose CLI t_zstd.sh runs) and runs.
TEST_PKGS := build-essential binutils clang libunwind-dev libc6-dbg xz-utils zlib1g-dev \
	zstd libzstd-dev
.PHONY: test-deps
test-deps:
	@if command -v dpkg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
		. tests/lib/install-deps.sh && install_deps $(TEST_PKGS) || { \
		echo "make test: could not install the packages the tests need; run"; \
		echo "    sudo apt-get install $(TEST_PKGS)"; exit 1; }; \
	else \
		echo "make test: not Debian: install binutils, clang, libunwind's headers," \
		     "glibc's debug symbols, xz, zstd and zlib's and libzstd's headers yourself"; \
	fi

test: test-deps
	@$(MAKE) --no-print-directory test-build
	@sh tests/run.sh $(B)

# The suite under valgrind memcheck.  Left out: tests that single-step with
# the trap flag, interpose malloc themselves, or fault on purpose with a
# NULL store (t_first_call, t_report_parts: memcheck rightly reports the
# access, and t_report_parts' measure of the alternate stack reads a
# pattern memcheck marks unaddressable); and the
# ones that need threads to run and be sampled in parallel for a while
# (t_churn, t_walk_signals, t_profiler.sh), which valgrind's one-at-a-time
# scheduler turns into timeouts.  Walks from real signal handlers stay
# covered here by t_crash_handler.sh, and all of them under ASan.  And
# t_port_static and t_static_*: memcheck cannot replace a static program's
# malloc (t_static, the dynamic build, re-executes itself through
# /proc/self/exe, which is valgrind's launcher there).  And t_world.sh, whose probe runs inside Debian's programs, not
# under valgrind; and t_lines.sh, which builds and runs its own driver,
# not the build under test, so that here it would only repeat `make test`.
# --fair-sched=yes: valgrind runs one thread at a time, and with its
# default lock a thread spinning at a chain's leaf can take it back at
# once, on an idle machine for good: the thread meant to signal it, or to
# walk beside it, then starves (t_port_walk hung, t_jit's other thread
# never walked, t_jit_churn's alarm fired).
VALGRIND := valgrind -q --error-exitcode=99 --fair-sched=yes \
	--suppressions=$(CURDIR)/tests/lib/valgrind.supp
test-valgrind: all $(TEST_BINS)
	@SFB_VALGRIND=1 SFB_WRAP="$(VALGRIND)" \
	 SFB_SKIP="t_every_insn t_every_insn_world.sh t_unw_compare t_interpose t_churn t_first_call t_report_parts t_walk_signals t_profiler.sh t_readelf.sh t_port_static t_world.sh t_lines.sh \
	   t_static t_static_glibc t_static_glibc_hdr t_static_pie t_static_cxx t_static_full \
	   t_static_report.sh" \
	 sh tests/run.sh $(B)

# The suite built with clang, AddressSanitizer and UBSan, in build-asan/.
# -fno-integrated-as: GNU as writes the .sframe sections.  Left out:
# t_interpose (it interposes malloc, as ASan does), t_world.sh (its probe,
# preloaded into Debian's programs, cannot carry ASan's runtime there) and
# t_lines.sh (it builds its own driver without ASan: a repeat of make test).
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all
test-asan:
	@$(MAKE) --no-print-directory B=build-asan CC="clang -fno-integrated-as" \
	  CFLAGS="$(ASAN_CFLAGS)" SFB_SKIP="t_interpose t_world.sh t_lines.sh" test

# The library, its header and pkg-config file, the two preload objects
# (libsframebt-preload.so, libsframe-profiler.so), sframe-dump and
# sframe-prof (which finds the profiler in ../lib/).
install: lib $(PROF_SO) $(B)/sframe-dump $(B)/sframe-prof
	install -d $(DESTDIR)$(PREFIX)/include/sframebt $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/bin
	install -m 644 backtrace.h $(DESTDIR)$(PREFIX)/include/sframebt/backtrace.h
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(PRELOAD) $(PROF_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/sframe-dump $(B)/sframe-prof $(DESTDIR)$(PREFIX)/bin/
	ln -sf libsframebt.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libsframebt.so.$(SOMAJOR)
	ln -sf libsframebt.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libsframebt.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' sframebt.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/sframebt.pc

clean:
	rm -rf $(B)
