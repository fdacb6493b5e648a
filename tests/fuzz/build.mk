# The libFuzzer targets (clang: libFuzzer + ASan + UBSan, the sources under
# test compiled in; needs clang's libFuzzer runtime, Debian's
# libclang-rt-14-dev).
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_ARGS='-jobs=2 ...']
#
# runs each target for its share of FUZZ_SECONDS on a working copy of its
# seed corpus; crashes are written to build/fuzz/artifacts/.
# tests/fuzz/t_fuzz_smoke.sh runs every target over its seeds without
# libFuzzer, as part of `make test`.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_ARGS    ?=
# FUZZ_CMP=0 leaves out libFuzzer's tracing of comparisons: it guides
# the search to magic values, and is most of a run's cost in the
# demangler's and the inflater's loops (six times the inputs a second
# without it), so long campaigns run without it on a corpus grown with it.
FUZZ_CMP     ?= 1
FUZZ_FLAGS   := -std=gnu11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	$(if $(filter 0,$(FUZZ_CMP)),-fno-sanitize-coverage=trace-cmp) \
	-I. -Isrc -Itests -Itests/lib

# The targets, as NAME:MAX_LEN: tests/fuzz/fuzz_NAME.c, compiled with the
# library sources FUZZ_SRCS_NAME and linked with FUZZ_LIBS_NAME, seeds in
# tests/fuzz/corpus-NAME/ (copied to build/fuzz/corpus-NAME, where new
# inputs accumulate).
#   decode   the SFrame decoder, lookups checked against a slow reference
#   cfi      the .eh_frame decoder and its expression evaluator
#   symfile  the symbolizer's ELF file reader and perf-map parser
#   jit      the registration of code at run time
#   demangle the demangler (compared with __cxa_demangle where both print)
#   inflate  the inflater against zlib, and deflate round trips
#   lines    the line-table and DIE reader over made-up debug files
#   zstd     the Zstandard decoder against libzstd
FUZZ_TARGETS := decode:4096 cfi:4096 symfile:8192 jit:4096 demangle:1100 inflate:8192 lines:65536 \
	zstd:16384
FUZZ_SRCS_decode := src/rows/sframe_decode.c
FUZZ_SRCS_symfile := src/base/inflate.c
FUZZ_SRCS_cfi := src/rows/cfi.c src/rows/cfi_cache.c
FUZZ_SRCS_jit := src/objects/jit_registry.c src/rows/cfi.c src/rows/eh_index.c src/rows/sframe_decode.c
FUZZ_LIBS_jit := -lpthread
FUZZ_SRCS_demangle := src/symbols/demangle.c src/symbols/demangle_rust.c
FUZZ_LIBS_demangle := -lstdc++
FUZZ_SRCS_inflate := src/base/inflate.c src/base/deflate.c
FUZZ_LIBS_inflate := -lz
FUZZ_SRCS_lines := src/symbols/lines.c src/symbols/inlines.c src/symbols/debug_section.c src/base/inflate.c \
	src/base/zstd.c
FUZZ_SRCS_zstd := src/base/zstd.c
FUZZ_LIBS_zstd := -lzstd
FUZZ_NAMES := $(foreach t,$(FUZZ_TARGETS),$(firstword $(subst :, ,$(t))))

define fuzz_rule
$(B)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/fuzz_target.h $$(FUZZ_SRCS_$(1)) \
		$$(LIB_HDRS) $$(wildcard tests/rows/*.h) backtrace.h
	@mkdir -p $$(@D)
	$$(FUZZ_CC) $$(FUZZ_FLAGS) $$< $$(FUZZ_SRCS_$(1)) -o $$@ $$(FUZZ_LIBS_$(1))
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call fuzz_rule,$(n))))

# make fuzz gives each target an equal share of FUZZ_SECONDS.
FUZZ_PART = $(shell expr \( $(FUZZ_SECONDS) + $(words $(FUZZ_NAMES)) - 1 \) / $(words $(FUZZ_NAMES)))

fuzz: $(FUZZ_NAMES:%=$(B)/fuzz/fuzz_%)
	@mkdir -p $(B)/fuzz/artifacts
	@for t in $(FUZZ_TARGETS); do \
		n=$${t%%:*}; len=$${t#*:}; \
		mkdir -p $(B)/fuzz/corpus-$$n && cp tests/fuzz/corpus-$$n/* $(B)/fuzz/corpus-$$n/ && \
		echo "== fuzz_$$n for $(FUZZ_PART) s" && \
		$(B)/fuzz/fuzz_$$n -max_total_time=$(FUZZ_PART) -max_len=$$len -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix=$(B)/fuzz/artifacts/ $(FUZZ_ARGS) $(B)/fuzz/corpus-$$n || exit 1; \
	done
