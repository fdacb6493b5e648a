# `make bench`: the benchmark (tests/bench/run.sh does the runs and writes
# $(B)/bench-results.md).  Not part of `make test`.  Benchmark-only
# dependencies (libunwind, strace, valgrind, the sampled programs) are installed by
# tests/bench/deps.sh and never linked into the library.
BENCH_DIR := $(B)/bench
# The chain libraries and the first-call objects: project warnings, PIC,
# and code shape pinned down across gcc configurations.
BENCH_CODEFLAGS := $(TESTFLAGS) -fasynchronous-unwind-tables \
	-fno-stack-clash-protection -fcf-protection=none $(GSFRAME)
BENCH_SOFLAGS := $(BENCH_CODEFLAGS) -fPIC -shared
BENCH_IDS := $(shell seq -f '%03g' 0 99)
BENCH_OBJ_SOS := $(BENCH_IDS:%=$(BENCH_DIR)/objs/libbobj%.so)

$(BENCH_DIR) $(BENCH_DIR)/objs:
	mkdir -p $@

.PHONY: bench-deps
bench-deps:
	@sh tests/bench/deps.sh

# The work functions are exported so that the driver can find their sizes
# (dladdr1).
BENCH_MAIN_OBJS := $(BENCH_DIR)/bench_chain_main.o $(BENCH_DIR)/bench_distinct.o \
	$(BENCH_DIR)/bench_chain_fpmain.o $(BENCH_DIR)/bench_varied_main.o
$(BENCH_DIR)/sfbench: tests/bench/sfbench.c tests/bench/bench_chain.h tests/bench/bench_distinct.h \
		tests/bench/bench_varied.h \
		tests/lib/sig_install.h $(STATIC) backtrace.h src/objects/objcache.h src/walk/rowmemo.h $(BENCH_MAIN_OBJS) \
		$(BENCH_DIR)/libbench-linked.so | $(BENCH_DIR) bench-deps
	$(CC) $(TESTFLAGS) -fno-omit-frame-pointer $(GSFRAME) $< $(BENCH_MAIN_OBJS) -o $@ \
		-Wl,--export-dynamic-symbol=main_chain_work -Wl,--export-dynamic-symbol=fpmain_chain_work \
		-L$(BENCH_DIR) -l:libbench-linked.so -Wl,-rpath,'$$ORIGIN' \
		$(STATIC) -lunwind -ldl -lpthread

# The "linked" build (SIGPROF samples only): the chain in a library that
# sfbench is linked with, loaded at start-up.
$(BENCH_DIR)/libbench-linked.so: tests/bench/bench_chain.c tests/bench/bench_chain.h | $(BENCH_DIR)
	$(CC) $(BENCH_SOFLAGS) -fomit-frame-pointer -DBENCH_CHAIN_LINKED $< -o $@

# The "main" build: the chain linked into sfbench itself.
$(BENCH_DIR)/bench_chain_main.o: tests/bench/bench_chain.c tests/bench/bench_chain.h | $(BENCH_DIR)
	$(CC) $(BENCH_CODEFLAGS) -fPIE -fomit-frame-pointer -DBENCH_CHAIN_IN_MAIN -c $< -o $@

# The "distinct" build (SIGPROF samples only): DISTINCT_MAX_DEPTH distinct
# functions in sfbench itself, frame pointers and SFrame V1 alike, ending
# in a frame-pointer copy of the work function.
BENCH_DISTINCT_FUNCS := $(shell sed -n 's/^\#define DISTINCT_MAX_DEPTH //p' tests/bench/bench_distinct.h)
$(BENCH_DIR)/distinct_list.inc: tests/bench/bench_distinct.h | $(BENCH_DIR)
	@seq 1 $(BENCH_DISTINCT_FUNCS) | awk '{ print "F(" $$1 ", " $$1 - 1 ")" }' >$@

$(BENCH_DIR)/bench_distinct.o: tests/bench/bench_distinct.c tests/bench/bench_distinct.h \
		tests/bench/bench_chain.h $(BENCH_DIR)/distinct_list.inc
	$(CC) $(BENCH_CODEFLAGS) -fPIE -fno-omit-frame-pointer -I$(BENCH_DIR) -c $< -o $@

$(BENCH_DIR)/bench_chain_fpmain.o: tests/bench/bench_chain.c tests/bench/bench_chain.h | $(BENCH_DIR)
	$(CC) $(BENCH_CODEFLAGS) -fPIE -fno-omit-frame-pointer -DBENCH_CHAIN_IN_MAIN_FP -c $< -o $@

$(BENCH_DIR)/libbench-fp.so: tests/bench/bench_chain.c tests/bench/bench_chain.h | $(BENCH_DIR)
	$(CC) $(BENCH_SOFLAGS) -fno-omit-frame-pointer $< -o $@

$(BENCH_DIR)/libbench-v1.so: tests/bench/bench_chain.c tests/bench/bench_chain.h | $(BENCH_DIR)
	$(CC) $(BENCH_SOFLAGS) -fomit-frame-pointer $< -o $@

# The varied chains (bench_varied.h): in sfbench itself and dlopen()ed with
# frame pointers, dlopen()ed without (SFrame V1 here, V3 in run.sh).
BENCH_VARIED_DEPS := tests/bench/bench_varied.c tests/bench/bench_varied.h tests/bench/bench_chain.h
$(BENCH_DIR)/bench_varied_main.o: $(BENCH_VARIED_DEPS) | $(BENCH_DIR)
	$(CC) $(BENCH_CODEFLAGS) -fPIE -fno-omit-frame-pointer -DVARIED_IN_MAIN -c $< -o $@

$(BENCH_DIR)/libbench-varied-fp.so: $(BENCH_VARIED_DEPS) | $(BENCH_DIR)
	$(CC) $(BENCH_SOFLAGS) -fno-omit-frame-pointer $< -o $@

$(BENCH_DIR)/libbench-varied-v1.so: $(BENCH_VARIED_DEPS) | $(BENCH_DIR)
	$(CC) $(BENCH_SOFLAGS) -fomit-frame-pointer $< -o $@

# The cold-lookup library: 4096 functions, one FDE each.
BENCH_BIG_FUNCS := 4096
$(BENCH_DIR)/big_list.inc: | $(BENCH_DIR)
	@seq 0 $$(($(BENCH_BIG_FUNCS) - 1)) | sed 's/.*/F(&)/' >$@

$(BENCH_DIR)/libbench-big.so: tests/bench/bench_big.c $(BENCH_DIR)/big_list.inc
	$(CC) $(BENCH_SOFLAGS) -fomit-frame-pointer -I$(BENCH_DIR) $< -o $@

# Real code for the FRE scan: sframebt's own sources, built as distributions
# build libraries (no frame pointers, so a FRE at every push and pop).
# Only its .sframe is read (from the file, never loaded).
BENCH_REAL_SRCS := $(LIB_SRCS)
$(BENCH_DIR)/libbench-real.so: $(BENCH_REAL_SRCS) $(LIB_HDRS) backtrace.h | $(BENCH_DIR)
	$(CC) $(BENCH_SOFLAGS) -fvisibility=hidden -fomit-frame-pointer $(BENCH_REAL_SRCS) -o $@

# OBJ_ID 1000..1099 (no leading zero: not octal).
$(BENCH_DIR)/objs/libbobj%.so: tests/bench/bench_obj.c | $(BENCH_DIR)/objs
	@$(CC) $(BENCH_SOFLAGS) -fomit-frame-pointer -DOBJ_ID=1$* $< -o $@

bench: $(BENCH_DIR)/sfbench $(BENCH_DIR)/libbench-fp.so $(BENCH_DIR)/libbench-v1.so \
		$(BENCH_DIR)/libbench-varied-fp.so $(BENCH_DIR)/libbench-varied-v1.so \
		$(WORLD_PROBE) $(BENCH_DIR)/libbench-big.so $(BENCH_DIR)/libbench-real.so \
		$(BENCH_OBJ_SOS)
	@CC="$(CC)" BENCH_SOFLAGS="$(BENCH_SOFLAGS)" BENCH_CFLAGS="$(CFLAGS)" BENCH_PROBE="$(WORLD_PROBE)" \
		sh tests/bench/run.sh $(B)

# JIT registration (tests/bench/jit_cost.c): what registering and
# unregistering 100,000 functions costs, and a walk entering no JIT code
# with none and with all of them registered.  Linked with the static
# library (it calls the registry's internal entry points too).
$(BENCH_DIR)/jit_cost: tests/bench/jit_cost.c tests/lib/jit_fde.h $(STATIC) backtrace.h src/objects/jit_registry.h \
		src/objects/objcache.h | $(BENCH_DIR)
	$(CC) $(TESTFLAGS) $< -o $@ $(STATIC) -ldl -lpthread
bench: $(BENCH_DIR)/jit_cost

# The crash report with source lines (tests/bench/report_cost.c): built
# -O2 -g, so that its own frames have DWARF to read.
$(BENCH_DIR)/report_cost: tests/bench/report_cost.c $(STATIC) backtrace.h | $(BENCH_DIR)
	$(CC) $(TESTFLAGS) -g $< -o $@ $(STATIC) -ldl -lpthread
bench: $(BENCH_DIR)/report_cost

# CFI interpretation (tests/bench/cfi_cost.c): every FDE of libc and ld.so
# looked up at 4 PCs, for callgrind.  Not among make bench's runs.
$(BENCH_DIR)/cfi_cost: tests/bench/cfi_cost.c $(STATIC) src/rows/cfi.h | $(BENCH_DIR)
	$(CC) $(TESTFLAGS) $< -o $@ $(STATIC)
