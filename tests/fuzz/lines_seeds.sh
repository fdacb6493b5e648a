#!/bin/sh
# Seeds of tests/fuzz/fuzz_lines.c: the debug sections of
# tests/symbols/lines_prog.c, built five ways, packed as the target reads
# them (struct fuzz_hdr, then the sections), into tests/fuzz/corpus-lines/.
#
# Fuzzing (one core):
#   clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
#     -fno-sanitize-recover=undefined -Isrc -Itests/fuzz tests/fuzz/fuzz_lines.c \
#     src/symbols/lines.c src/symbols/inlines.c src/symbols/debug_section.c \
#     src/base/inflate.c src/base/zstd.c -o build-lines/fuzz_lines
#   mkdir -p build-lines/corpus && cp tests/fuzz/corpus-lines/* build-lines/corpus/
#   build-lines/fuzz_lines -runs=10000000 build-lines/corpus
set -e
out=tests/fuzz/corpus-lines
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
secs=".debug_info .debug_abbrev .debug_line .debug_line_str .debug_str .debug_str_offsets .debug_addr .debug_rnglists .debug_ranges .debug_aranges"
seed() { # seed NAME COMPILER ARGS...
	n=$1
	shift
	"$@" tests/symbols/lines_prog.c -o "$tmp/$n"
	pc=$(nm "$tmp/$n" | awk '$3 == "fold" { print $1 }')
	i=0
	mask=0
	for s in $secs; do
		: >"$tmp/s$i"
		objcopy --dump-section "$s=$tmp/s$i" "$tmp/$n" "$tmp/junk" 2>/dev/null || :
		if readelf -SW "$tmp/$n" | grep -q " $s .* [A-Z]*C[A-Z]* "; then mask=$((mask | (1 << i))); fi
		i=$((i + 1))
	done
	python3 - "$tmp" "$pc" "$mask" "$out/$n" <<'PY'
import struct, sys
tmp, pc, mask, dst = sys.argv[1], int(sys.argv[2], 16) + 0x10, int(sys.argv[3]), sys.argv[4]
data = [open("%s/s%d" % (tmp, i), "rb").read() for i in range(10)]
hdr = struct.pack("<Q10IIxxxx", pc, *[len(d) for d in data], mask)
open(dst, "wb").write(hdr + b"".join(data))
PY
}
seed gcc_O2 gcc -O2 -g
seed gcc_O2_dwarf4 gcc -O2 -gdwarf-4
seed gcc_O2_zlib gcc -O2 -g -gz=zlib
seed gcc_O0 gcc -O0 -g
seed clang_O2 clang -O2 -g
ls -la "$out"
