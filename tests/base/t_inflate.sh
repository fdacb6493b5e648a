#!/bin/sh
# t_inflate.sh - the DEFLATE decoder against streams the system's tools
# write, and the encoder's output through the system's decoders.
#
# Makes, in $B/inflate-fixtures: data (the project's sources, part of
# libc.so.6, zeros, random bytes, small pieces); its zlib streams at
# levels 0-9 and raw streams with each of zlib's strategies (python3's
# zlib); gzip files from gzip(1) at -1 and -9 (with a file name) and from
# python; compressed debug sections from 'gcc -gz=zlib' and 'objcopy
# --compress-debug-sections=zlib', with objcopy's decompression as the
# expected bytes (and zstd ones, whose Chdr alone is checked); and, when libc6-dbg is installed, libc's compressed
# .debug_info and .debug_line (the first timed).  tests/base/t_inflate.c
# decodes each (see there how), and compresses the data with sfb_deflate;
# gzip -d and python's zlib must give the data back.
#
# env: SFB_BUILD  build directory (default: build)
#      CC         compiler (default: cc)
#      SFB_WRAP   prefix for the test program (e.g. valgrind)

B=${SFB_BUILD:-build}
CC=${CC:-cc}
dir=$B/inflate-fixtures
rm -rf "$dir"
mkdir -p "$dir"

for f in tests/lib/install-deps.sh tests/install-deps.sh; do
	[ -f "$f" ] && . "./$f" && break
done
install_deps binutils gzip python3 >/dev/null 2>&1 || true

prog=$B/tests/t_inflate
if [ ! -x "$prog" ]; then
	prog=$dir/t_inflate
	if ! $CC -std=gnu11 -O2 -g -Isrc -Itests/lib tests/base/t_inflate.c \
		src/base/inflate.c src/base/deflate.c -o "$prog" 2>"$dir/build.log"; then
		echo "not ok - t_inflate builds"
		sed 's/^/#   /' "$dir/build.log" | head -10
		exit 1
	fi
fi

# ---- data -------------------------------------------------------------------
cat src/*/*.c src/*/*.h 2>/dev/null | head -c 400000 >"$dir/text"
libc=$($CC -print-file-name=libc.so.6)
[ -f "$libc" ] || libc=/lib/x86_64-linux-gnu/libc.so.6
head -c 1000000 "$libc" >"$dir/bin"
head -c 100000 /dev/zero >"$dir/zeros"
head -c 300 "$dir/text" >"$dir/small"
head -c 2000 "$dir/text" >"$dir/medium"
printf a >"$dir/one"
: >"$dir/empty"

cat >"$dir/cases" <<EOF
# FORMAT NAME COMPRESSED EXPECTED, data NAME FILE, speed NAME
EOF

python3 - "$dir" <<'EOF' || echo "not ok - python3 writes the zlib fixtures"
import gzip, os, random, sys, zlib
d = sys.argv[1]
random.seed(1951)
with open(f"{d}/random", "wb") as f:
    f.write(bytes(random.getrandbits(8) for _ in range(50000)))
cases = open(f"{d}/cases", "a")
def stream(data, level, wbits, strategy=zlib.Z_DEFAULT_STRATEGY):
    c = zlib.compressobj(level, zlib.DEFLATED, wbits, 9, strategy)
    return c.compress(data) + c.flush()
def add(fmt, name, blob, src):
    with open(f"{d}/{name}", "wb") as f:
        f.write(blob)
    cases.write(f"{fmt} {name} {name} {src}\n")
for src in ["text", "bin", "zeros", "random", "small", "medium", "one", "empty"]:
    data = open(f"{d}/{src}", "rb").read()
    big = len(data) > 100000
    for level in ([0, 1, 6, 9] if big else range(10)):
        add("zlib", f"{src}.z{level}", stream(data, level, 15), src)
    strategies = {"fixed": zlib.Z_FIXED, "huffman": zlib.Z_HUFFMAN_ONLY,
                  "rle": zlib.Z_RLE, "filtered": zlib.Z_FILTERED}
    for sname, s in strategies.items():
        add("raw", f"{src}.raw-{sname}", stream(data, 9, -15, s), src)
    add("zlib", f"{src}.z-window9", stream(data, 9, 9), src)
    add("gzip", f"{src}.py.gz", gzip.compress(data, 9, mtime=0), src)
    cases.write(f"data {src} {src}\n")
EOF

for src in text bin small medium; do
	gzip -c -9 "$dir/$src" >"$dir/$src.cli9.gz" # FNAME and MTIME set
	gzip -c -1 -n "$dir/$src" >"$dir/$src.cli1.gz"
	echo "gzip $src.cli9.gz $src.cli9.gz $src" >>"$dir/cases"
	echo "gzip $src.cli1.gz $src.cli1.gz $src" >>"$dir/cases"
done

# ---- compressed debug sections -------------------------------------------------
# section_cases OBJ TAG [FORMAT]: each SHF_COMPRESSED debug section of
# OBJ (readelf's flag C) as stored, and as objcopy decompresses it.
section_cases() {
	obj=$1 tag=$2 fmt=${3:-elf}
	objcopy --decompress-debug-sections "$obj" "$dir/$tag.plain" || return 1
	n=0
	for sec in $(readelf -S -W "$obj" 2>/dev/null | awk '/ \.debug_/ && / C / { print $2 }'); do
		[ "$sec" = "]" ] && continue
		objcopy --dump-section "$sec=$dir/$tag$sec.cz" "$obj" &&
			objcopy --dump-section "$sec=$dir/$tag$sec" "$dir/$tag.plain" &&
			echo "$fmt $tag$sec $tag$sec.cz $tag$sec" >>"$dir/cases" && n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}
ok_or_not() {
	if "$@"; then echo "ok - fixtures: $*"; else echo "not ok - fixtures: $*"; fi
}
if $CC -g -O2 -gz=zlib -Isrc -c src/base/inflate.c -o "$dir/gz.o" 2>"$dir/gz.log"; then
	ok_or_not section_cases "$dir/gz.o" gcc-gz
else
	echo "not ok - $CC -gz=zlib builds"
fi
if $CC -g -O0 -Isrc -Itests/lib tests/base/t_inflate.c src/base/inflate.c src/base/deflate.c \
	-o "$dir/plain.exe" 2>/dev/null &&
	objcopy --compress-debug-sections=zlib "$dir/plain.exe" "$dir/objcopy.exe"; then
	ok_or_not section_cases "$dir/objcopy.exe" objcopy
	# zstd (binutils 2.40 writes it; not decoded): the Chdr tells it.
	if objcopy --compress-debug-sections=zstd "$dir/plain.exe" "$dir/zstd.exe" 2>/dev/null; then
		ok_or_not section_cases "$dir/zstd.exe" zstd zstd
	else
		echo "ok - objcopy cannot write zstd sections: skipped"
	fi
else
	echo "not ok - objcopy --compress-debug-sections=zlib"
fi

# libc's debug file from libc6-dbg, when installed: large real sections.
id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
if [ -n "$id" ] && [ -f "$dbg" ] && readelf -S -W "$dbg" 2>/dev/null | grep -q '\.debug_info .* C '; then
	echo "speed libc-dbg.debug_info" >>"$dir/cases"
	ok_or_not section_cases "$dbg" libc-dbg
else
	echo "ok - libc6-dbg's compressed sections: not installed, skipped"
fi

# ---- decode everything; encode the data -------------------------------------------
${SFB_WRAP:-} "$prog" "$dir"
status=$?

for gz in "$dir"/*.l0.gz "$dir"/*.l1.gz; do
	[ -f "$gz" ] || continue
	name=$(basename "$gz")
	src=$dir/${name%.l?.gz}
	if gzip -dc "$gz" | cmp -s - "$src"; then
		echo "ok - gzip -d decodes sfb_deflate's $name"
	else
		echo "not ok - gzip -d decodes sfb_deflate's $name"
		status=1
	fi
	if python3 -c 'import sys, zlib
d = zlib.decompressobj(31)
out = d.decompress(open(sys.argv[1], "rb").read())
sys.exit(0 if d.eof and not d.unused_data and out == open(sys.argv[2], "rb").read() else 1)' "$gz" "$src"; then
		echo "ok - python zlib decodes sfb_deflate's $name"
	else
		echo "not ok - python zlib decodes sfb_deflate's $name"
		status=1
	fi
done
exit $status
