#!/bin/sh
# Runs the decoder fuzz target (tests/fuzz_decode.c, built without libFuzzer
# through its own main) once over every seed in tests/fuzz-corpus/: each
# seed is loaded from an exact-size buffer and its lookups are cross-checked
# against the slow reference.  Uses ASan+UBSan when the compiler has them.
B=${SFB_BUILD:-build}
CC=${CC:-cc}
out=$B/fuzz/fuzz_decode_smoke
mkdir -p "$B/fuzz"
src="tests/fuzz_decode.c src/sframe_decode.c"
flags="-std=gnu11 -Wall -Wextra -Werror -g -O1 -DSFB_FUZZ_MAIN -I. -Isrc -Itests"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
if $CC $flags $san $src -o "$out" 2>"$out.log"; then
	how="with ASan+UBSan"
elif $CC $flags $src -o "$out" 2>>"$out.log"; then
	how="without sanitizers"
else
	echo "not ok - fuzz_decode builds with $CC"
	cat "$out.log"
	exit 1
fi
echo "ok - fuzz_decode builds with $CC ($how)"
n=$(ls tests/fuzz-corpus | wc -l)
if res=$(ASAN_OPTIONS=detect_leaks=1 "$out" tests/fuzz-corpus/* 2>&1); then
	echo "ok - fuzz_decode over $n seeds: $res"
else
	echo "not ok - fuzz_decode over $n seeds"
	echo "$res" | tail -30
	exit 1
fi
# The same for the .eh_frame decoder's target over tests/fuzz-corpus-cfi/.
out=$B/fuzz/fuzz_cfi_smoke
src="tests/fuzz_cfi.c src/cfi.c"
if $CC $flags $san $src -o "$out" 2>"$out.log"; then
	how="with ASan+UBSan"
elif $CC $flags $src -o "$out" 2>>"$out.log"; then
	how="without sanitizers"
else
	echo "not ok - fuzz_cfi builds with $CC"
	cat "$out.log"
	exit 1
fi
echo "ok - fuzz_cfi builds with $CC ($how)"
n=$(ls tests/fuzz-corpus-cfi | wc -l)
if res=$(ASAN_OPTIONS=detect_leaks=1 "$out" tests/fuzz-corpus-cfi/* 2>&1); then
	echo "ok - fuzz_cfi over $n seeds: $res"
else
	echo "not ok - fuzz_cfi over $n seeds"
	echo "$res" | tail -30
	exit 1
fi
