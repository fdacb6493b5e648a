#!/bin/sh
# t_zstd.sh - the Zstandard decoder against frames the zstd CLI and
# objcopy write.
#
# Makes, in $B/zstd-fixtures: data (the project's sources, part of
# libc.so.6, random bytes, zeros, a repeated pattern, small pieces, one
# byte, nothing); its frames from zstd(1) at levels 1, 3 and 19, at
# --ultra -22, with --long=27, without a checksum, from a pipe (no
# content size: the window is the level's), and two frames in a row;
# the debug sections that 'objcopy --compress-debug-sections=zstd'
# writes, Chdr cut off, with objcopy's decompression as the expected
# bytes.  Each "ok" case gives the history the frame needs: the window
# 'zstd -lv' reports, or the content size when smaller; t_zstd checks
# the bytes, and that one byte less of history is refused.  A frame
# whose window exceeds the history given (--ultra -22 on 1 MB with 512
# KiB) must fail with window-too-large; small frames are truncated and
# have every bit flipped (tests/base/t_zstd.c).
#
# env: SFB_BUILD  build directory (default: build)
#      CC         compiler (default: cc)
#      SFB_WRAP   prefix for the test program (e.g. valgrind)

B=${SFB_BUILD:-build}
CC=${CC:-cc}
dir=$B/zstd-fixtures
rm -rf "$dir"
mkdir -p "$dir"

for f in tests/lib/install-deps.sh tests/install-deps.sh; do
	[ -f "$f" ] && . "./$f" && break
done
install_deps binutils zstd python3 >/dev/null 2>&1 || true
if ! command -v zstd >/dev/null 2>&1; then
	echo "not ok - the zstd command is installed (Debian: zstd)"
	exit 1
fi

prog=$B/tests/t_zstd
if [ ! -x "$prog" ]; then
	prog=$dir/t_zstd
	if ! $CC -std=gnu11 -O2 -g -Isrc -Itests/lib tests/base/t_zstd.c src/base/zstd.c \
		-o "$prog" 2>"$dir/build.log"; then
		echo "not ok - t_zstd builds"
		sed 's/^/#   /' "$dir/build.log" | head -10
		exit 1
	fi
fi

# ---- data -------------------------------------------------------------------
cat src/*/*.c src/*/*.h 2>/dev/null | head -c 400000 >"$dir/text"
libc=$($CC -print-file-name=libc.so.6)
[ -f "$libc" ] || libc=/lib/x86_64-linux-gnu/libc.so.6
head -c 1000000 "$libc" >"$dir/bin"
head -c 200000 /dev/urandom >"$dir/random"
head -c 300000 /dev/zero >"$dir/zeros"
i=0
while [ $i -lt 2000 ]; do printf 'abcabcabd%d\n' $((i % 7)); i=$((i + 1)); done >"$dir/pattern"
head -c 300 "$dir/text" >"$dir/small"
head -c 5000 "$dir/text" >"$dir/medium"
printf a >"$dir/one"
: >"$dir/empty"

echo "# ok NAME COMPRESSED EXPECTED HIST | err NAME COMPRESSED HIST ERROR" >"$dir/cases"

# The history a frame needs: zstd -lv's window, or the content size when
# smaller (no match reaches before the frame's start).
hist_of() {
	w=$(zstd -lv "$1" 2>/dev/null | awk '/Window Size:/ { gsub(/[()]/, "", $0); print $(NF-1); exit }')
	s=$(wc -c <"$2")
	[ -n "$w" ] || w=$s
	if zstd -lv "$1" 2>/dev/null | grep -q 'Decompressed Size:' && [ "$s" -lt "$w" ]; then
		w=$s
	fi
	[ "$w" -gt 0 ] || w=1
	echo "$w"
}
add() { # KIND NAME SRC ZSTD-ARGS...
	kind=$1 name=$2 src=$3
	shift 3
	zstd -q -f "$@" "$dir/$src" -o "$dir/$name.zst" 2>/dev/null || {
		echo "not ok - zstd $* $src"
		return
	}
	echo "$kind $name $name.zst $src $(hist_of "$dir/$name.zst" "$dir/$src")" >>"$dir/cases"
}
for src in text bin random zeros pattern small medium one empty; do
	for l in 1 3 19; do
		add ok "$src.l$l" "$src" -$l
	done
	add ok "$src.ultra22" "$src" --ultra -22
	add ok "$src.long" "$src" --long=27 -19
	add ok "$src.nocheck" "$src" -3 --no-check
	# From a pipe: no content size, the level's window.
	zstd -q -3 -c <"$dir/$src" >"$dir/$src.pipe.zst"
	echo "ok $src.pipe $src.pipe.zst $src $(hist_of "$dir/$src.pipe.zst" "$dir/$src")" >>"$dir/cases"
done
for src in small medium pattern; do
	add fuzz "$src.fuzz19" "$src" -19
done
add fuzz "medium.fuzz1" medium -1
# Two frames in a row decode to the two inputs in a row.
cat "$dir/small" "$dir/medium" >"$dir/two"
cat "$dir/small.l19.zst" "$dir/medium.l3.zst" >"$dir/two.zst"
echo "ok two two.zst two $(hist_of "$dir/medium.l3.zst" "$dir/medium")" >>"$dir/cases"
# A window beyond the history given: the named error.
zstd -q -f --ultra -22 "$dir/bin" -o "$dir/big.zst"
echo "err big-window big.zst 524288 window-too-large" >>"$dir/cases"
# A frame cut short, and one with trailing garbage.
head -c 1000 "$dir/text.l3.zst" >"$dir/cut.zst"
echo "err cut cut.zst 1048576 truncated" >>"$dir/cases"
{ cat "$dir/small.l3.zst"; printf 'garbage!'; } >"$dir/trail.zst"
echo "err trailing trail.zst 1048576 magic" >>"$dir/cases"

# ---- compressed debug sections -------------------------------------------------
ok_or_not() {
	if "$@"; then echo "ok - fixtures: $*"; else echo "not ok - fixtures: $*"; fi
}
# section_cases OBJ TAG: each SHF_COMPRESSED debug section of OBJ
# (readelf's flag C) as stored, Chdr (24 bytes) cut, and as objcopy
# decompresses it.
section_cases() {
	obj=$1 tag=$2
	objcopy --decompress-debug-sections "$obj" "$dir/$tag.plain" || return 1
	n=0
	for sec in $(readelf -S -W "$obj" 2>/dev/null | awk '/ \.debug_/ && / C / { print $2 }'); do
		[ "$sec" = "]" ] && continue
		objcopy --dump-section "$sec=$dir/$tag$sec.cz" "$obj" &&
			tail -c +25 "$dir/$tag$sec.cz" >"$dir/$tag$sec.zst" &&
			objcopy --dump-section "$sec=$dir/$tag$sec" "$dir/$tag.plain" || continue
		echo "ok $tag$sec $tag$sec.zst $tag$sec $(hist_of "$dir/$tag$sec.zst" "$dir/$tag$sec")" \
			>>"$dir/cases"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}
if $CC -g -O0 -Isrc -Itests/lib tests/base/t_zstd.c src/base/zstd.c -o "$dir/plain.exe" 2>/dev/null &&
	objcopy --compress-debug-sections=zstd "$dir/plain.exe" "$dir/zstd.exe" 2>/dev/null; then
	ok_or_not section_cases "$dir/zstd.exe" objcopy
else
	echo "ok - objcopy cannot write zstd sections: skipped"
fi

${SFB_WRAP:-} "$prog" "$dir"
