# The libFuzzer targets for the decoders and the symbolizer's file reader.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_ARGS='-jobs=2 ...']
#
# builds build/fuzz/fuzz_decode with clang (libFuzzer + ASan + UBSan, the
# decoder sources compiled in) and runs it for FUZZ_SECONDS on a working
# copy of the seed corpus tests/fuzz/corpus-decode/ (build/fuzz/corpus: new inputs
# accumulate there, the committed corpus is not modified).  Crashes are
# written to build/fuzz/artifacts/.  Needs clang's libFuzzer runtime
# (Debian/Ubuntu package libclang-rt-NN-dev, e.g. libclang-rt-14-dev, which
# clang-14 pulls in on bookworm).  tests/fuzz/t_fuzz_smoke.sh runs the same target
# over the seed corpus without libFuzzer as part of `make test`.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_ARGS    ?=
FUZZ_SRCS    := src/rows/sframe_decode.c
FUZZ_FLAGS   := -std=gnu11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I. -Isrc -Itests -Itests/lib

$(B)/fuzz/fuzz_decode: tests/fuzz/fuzz_decode.c tests/fuzz/fuzz_target.h tests/rows/sframe_builder.h $(FUZZ_SRCS) \
		$(LIB_HDRS)
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) tests/fuzz/fuzz_decode.c $(FUZZ_SRCS) -o $@

# The .eh_frame decoder's target (tests/fuzz/fuzz_cfi.c, seeds in
# tests/fuzz/corpus-cfi/, working copy in build/fuzz/corpus-cfi) and the
# symbolizer's ELF file reader's (tests/fuzz/fuzz_symfile.c, which compiles
# src/symbols/elf_file.c, perf_map.c and pick.c in; seeds in tests/fuzz/corpus-sym/): make fuzz gives
# each of the four targets (with fuzz_jit, below) a quarter of FUZZ_SECONDS.
$(B)/fuzz/fuzz_cfi: tests/fuzz/fuzz_cfi.c tests/fuzz/fuzz_target.h tests/rows/cfi_fake.h src/rows/cfi.c $(LIB_HDRS)
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) tests/fuzz/fuzz_cfi.c src/rows/cfi.c -o $@

$(B)/fuzz/fuzz_symfile: tests/fuzz/fuzz_symfile.c tests/fuzz/fuzz_target.h src/symbols/elf_file.c src/symbols/perf_map.c src/symbols/pick.c $(LIB_HDRS) backtrace.h
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) tests/fuzz/fuzz_symfile.c -o $@

# The registration of code (tests/fuzz/fuzz_jit.c, seeds in
# tests/fuzz/corpus-jit/): the registry with the decoders it parses with.
FUZZ_JIT_SRCS := src/objects/jit_registry.c src/rows/cfi.c src/rows/eh_index.c \
	src/rows/sframe_decode.c
$(B)/fuzz/fuzz_jit: tests/fuzz/fuzz_jit.c tests/fuzz/fuzz_target.h $(FUZZ_JIT_SRCS) $(LIB_HDRS) backtrace.h
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) tests/fuzz/fuzz_jit.c $(FUZZ_JIT_SRCS) -o $@ -lpthread

FUZZ_PART = $(shell expr \( $(FUZZ_SECONDS) + 3 \) / 4)

fuzz: $(B)/fuzz/fuzz_decode $(B)/fuzz/fuzz_cfi $(B)/fuzz/fuzz_symfile $(B)/fuzz/fuzz_jit
	mkdir -p $(B)/fuzz/corpus $(B)/fuzz/corpus-cfi $(B)/fuzz/corpus-sym $(B)/fuzz/corpus-jit \
		$(B)/fuzz/artifacts
	cp tests/fuzz/corpus-jit/* $(B)/fuzz/corpus-jit/
	cp tests/fuzz/corpus-decode/* $(B)/fuzz/corpus/
	cp tests/fuzz/corpus-cfi/* $(B)/fuzz/corpus-cfi/
	cp tests/fuzz/corpus-sym/* $(B)/fuzz/corpus-sym/
	$(B)/fuzz/fuzz_decode -max_total_time=$(FUZZ_PART) -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=$(B)/fuzz/artifacts/ $(FUZZ_ARGS) $(B)/fuzz/corpus
	$(B)/fuzz/fuzz_cfi -max_total_time=$(FUZZ_PART) -max_len=4096 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=$(B)/fuzz/artifacts/ $(FUZZ_ARGS) $(B)/fuzz/corpus-cfi
	$(B)/fuzz/fuzz_symfile -max_total_time=$(FUZZ_PART) -max_len=8192 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=$(B)/fuzz/artifacts/ $(FUZZ_ARGS) $(B)/fuzz/corpus-sym
	$(B)/fuzz/fuzz_jit -max_total_time=$(FUZZ_PART) -max_len=4096 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix=$(B)/fuzz/artifacts/ $(FUZZ_ARGS) $(B)/fuzz/corpus-jit
