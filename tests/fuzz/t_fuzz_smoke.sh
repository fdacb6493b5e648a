#!/bin/sh
# Runs each decoder's fuzz target, built without libFuzzer through its own
# main (tests/fuzz/fuzz_target.h), once over every seed of its corpus: the
# SFrame decoder (tests/fuzz/fuzz_decode.c: each seed loaded from an exact-size
# buffer and its lookups cross-checked against the slow reference) over
# tests/fuzz/corpus-decode/, the .eh_frame decoder (tests/fuzz/fuzz_cfi.c) over
# tests/fuzz/corpus-cfi/, the symbolizer's ELF file reader
# (tests/fuzz/fuzz_symfile.c) over tests/fuzz/corpus-symfile/, the registration
# of code (tests/fuzz/fuzz_jit.c) over tests/fuzz/corpus-jit/, and the
# demangler, the inflater, the line-table reader and the Zstandard decoder
# (tests/fuzz/fuzz_zstd.c, against libzstd) over theirs
# (tests/fuzz/corpus-NAME/).  Uses ASan+UBSan when the compiler has them.
B=${SFB_BUILD:-build}
CC=${CC:-cc}
mkdir -p "$B/fuzz"
flags="-std=gnu11 -Wall -Wextra -Werror -g -O1 -DSFB_FUZZ_MAIN -I. -Isrc -Itests -Itests/lib"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
status=0

# smoke NAME CORPUS SOURCE...: build NAME's target and run it over CORPUS.
smoke() {
	name=$1 corpus=$2
	shift 2
	out=$B/fuzz/${name}_smoke
	if $CC $flags $san "$@" -o "$out" 2>"$out.log"; then
		how="with ASan+UBSan"
	elif $CC $flags "$@" -o "$out" 2>>"$out.log"; then
		how="without sanitizers"
	else
		echo "not ok - $name builds with $CC"
		cat "$out.log"
		status=1
		return
	fi
	echo "ok - $name builds with $CC ($how)"
	n=$(ls "$corpus" | wc -l)
	if res=$(ASAN_OPTIONS=detect_leaks=1 "$out" "$corpus"/* 2>&1); then
		echo "ok - $name over $n seeds: $res"
	else
		echo "not ok - $name over $n seeds"
		echo "$res" | tail -30
		status=1
	fi
}

smoke fuzz_decode tests/fuzz/corpus-decode tests/fuzz/fuzz_decode.c src/rows/sframe_decode.c
smoke fuzz_cfi tests/fuzz/corpus-cfi tests/fuzz/fuzz_cfi.c src/rows/cfi.c src/rows/cfi_cache.c
smoke fuzz_symfile tests/fuzz/corpus-symfile tests/fuzz/fuzz_symfile.c src/base/inflate.c
smoke fuzz_jit tests/fuzz/corpus-jit tests/fuzz/fuzz_jit.c src/objects/jit_registry.c \
	src/rows/cfi.c src/rows/eh_index.c src/rows/sframe_decode.c -lpthread
smoke fuzz_demangle tests/fuzz/corpus-demangle tests/fuzz/fuzz_demangle.c \
	src/symbols/demangle.c src/symbols/demangle_rust.c -lstdc++
smoke fuzz_inflate tests/fuzz/corpus-inflate tests/fuzz/fuzz_inflate.c src/base/inflate.c \
	src/base/deflate.c -lz
smoke fuzz_lines tests/fuzz/corpus-lines tests/fuzz/fuzz_lines.c src/symbols/lines.c \
	src/symbols/inlines.c src/symbols/debug_section.c src/base/inflate.c src/base/zstd.c
smoke fuzz_zstd tests/fuzz/corpus-zstd tests/fuzz/fuzz_zstd.c src/base/zstd.c -lzstd
exit $status
