#!/bin/sh
# Source lines and inlined frames (src/symbols/lines.c) against binutils'
# addr2line and llvm-symbolizer: random PCs of the .text of programs
# built here (gcc -O0 and -O2, DWARF 5 and 4, zlib- and zstd-compressed
# sections, C++, clang) and of libc through its compressed libc6-dbg debug file
# (through one lookup state kept from address to address, and through a
# lookup each).
# Each binary: >= 99% agreement on the first frame's file:line and on the
# whole inline chain (functions as linkage names, call sites), except
# where an oracle is known to differ, which is then printed, not asserted:
#  - addr2line (binutils 2.40) shows no inlined frames in clang's DWARF 5
#    (its range lists by DW_FORM_rnglistx), names an inlined C++ member
#    template that has no linkage name by its caller's linkage name, and
#    in glibc's line tables
#    takes some rows' files from the unit's file 0 where llvm-symbolizer
#    and this reader take the row's own (strfroml.c for
#    strfrom-skeleton.c); its functions without DWARF come from .symtab;
#  - llvm-symbolizer names the outermost frame from the symbol table
#    (setlocale for DWARF's __GI_setlocale): that name is not compared;
#  - llvm-symbolizer 14 reads no zstd-compressed section: those programs
#    are compared with addr2line alone.
# The lookups run in a signal handler on a 64 KiB alternate stack.
. tests/lib/check.sh
. tests/lib/install-deps.sh
. tests/lib/symbols.sh
install_deps binutils llvm-14 libc6-dbg gcc g++ clang python3
N=${SFB_LINES_PCS:-2000}
CC=${CC:-gcc}

srcs="src/symbols/lines.c src/symbols/inlines.c src/symbols/debug_section.c src/base/inflate.c
	src/base/zstd.c"
if ! $CC -std=gnu11 -Wall -Wextra -Werror -O2 -Isrc tests/symbols/lines_driver.c $srcs \
	-o "$tmp/lines_driver"; then
	notok "lines_driver builds"
	exit 1
fi

p=tests/symbols/lines_prog.c
q=tests/symbols/lines_prog_cxx.cc
build() { # build NAME COMPILER ARGS...
	n=$1
	shift
	"$@" -o "$tmp/$n" && echo "$n"
}
bins=$(
	build c_O0 gcc -O0 -g $p
	build c_O2 gcc -O2 -g $p
	build c_O2_dwarf4 gcc -O2 -gdwarf-4 $p
	build c_O3_zlib gcc -O3 -g -gz=zlib $p
	build c_O2_dwarf4_zlib gcc -O2 -gdwarf-4 -gz=zlib $p
	build cxx_O2 g++ -O2 -g $q
	build cxx_O2_zlib g++ -O2 -g -gz=zlib $q
	build clang_O2 clang -O2 -g $p
	build clangxx_O2 clang++ -O2 -g $q
	build clangxx_O2_dwarf4 clang++ -O2 -gdwarf-4 $q
)
# zstd-compressed sections (objcopy --compress-debug-sections=zstd, which
# binutils 2.40 writes and addr2line reads; gcc 12 has no -gz=zstd).
zstd_bins=
for b in c_O2 c_O0; do
	if objcopy --compress-debug-sections=zstd "$tmp/$b" "$tmp/${b}_zstd" 2>/dev/null &&
		readelf -SW "$tmp/${b}_zstd" | grep -q '\.debug_info .* C '; then
		zstd_bins="$zstd_bins ${b}_zstd"
		readelf -tW "$tmp/${b}_zstd" | grep -q ZSTD ||
			notok "${b}_zstd: readelf -t shows ZSTD compression"
	fi
done
bins="$bins $zstd_bins"

# pcs FILE [TEXT_FROM]: N random addresses of TEXT_FROM's .text, sorted.
pcs() {
	readelf -SW "${2:-$1}" | python3 -c '
import random, re, sys
n = int(sys.argv[1])
for l in sys.stdin:
    m = re.search(r"\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if m:
        a, s = int(m.group(1), 16), int(m.group(2), 16)
        random.seed(a ^ s)
        for x in sorted(random.randrange(a, a + s) for _ in range(n)):
            print("%x" % x)
' "$N"
}

compare() { # compare NAME FILE TEXT_FROM A2L_MIN_LINE A2L_MIN_CHAIN [no-llvm]
	pcs "$2" "$3" >"$tmp/$1.pcs"
	addr2line -i -f -a -e "$2" <"$tmp/$1.pcs" >"$tmp/$1.a2l"
	sed 's/^/0x/' "$tmp/$1.pcs" |
		llvm-symbolizer-14 --output-style=GNU -i -f -a --no-demangle -e "$2" |
		sed 's/^0x\(.*\)/\1/; t x; b; :x s/^/0x0000000000000000/; s/^0x0*\(................\)$/0x\1/' \
		>"$tmp/$1.llvm"
	# shellcheck disable=SC2086
	"$tmp/lines_driver" -s -v ${DRIVER_FLAGS:-} "$2" <"$tmp/$1.pcs" >"$tmp/$1.ours" 2>"$tmp/$1.log"
	grep '^alternate stack' "$tmp/$1.log" | sed "s/^/# $1: /"
	python3 tests/symbols/lines_compare.py "$1 vs addr2line" "$tmp/$1.a2l" "$tmp/$1.ours" $4 $5
	[ "${6:-}" = no-llvm ] && return
	python3 tests/symbols/lines_compare.py "$1 vs llvm-symbolizer" "$tmp/$1.llvm" "$tmp/$1.ours" \
		99 99 outer-from-symtab
}

for b in $bins; do
	case $b in
	clang_O2 | clangxx_O2 | cxx_*) compare "$b" "$tmp/$b" "$tmp/$b" 99 0 ;;
	*_zstd) compare "$b" "$tmp/$b" "$tmp/$b" 99 99 no-llvm ;;
	*) compare "$b" "$tmp/$b" "$tmp/$b" 99 99 ;;
	esac
done

libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ { print $NF; exit }')
bid=$(readelf -n "$libc" | awk '/Build ID:/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(printf %.2s "$bid")/${bid#??}.debug
# A stable copy (tests/lib/symbols.sh).
if [ -f "$dbg" ] && copy_stable "$dbg" "$tmp/libc.debug"; then
	# All the addresses through one kept lookup state, as a crash report
	# reads (lines.h: sfb_lines_open(), sfb_lines_find(); with the room
	# for two inflaters and their copies), and a twentieth through a
	# lookup each in SFB_LINES_SCRATCH: both paths, in the time a test
	# has (a fresh lookup inflates libc's sections from their start).
	DRIVER_FLAGS="-k -S 161712"
	compare libc_dbg "$tmp/libc.debug" "$libc" 0 0
	DRIVER_FLAGS=
	N=$((N / 20))
	compare libc_dbg_fresh "$tmp/libc.debug" "$libc" 0 0
else
	notok "libc's debug file $dbg (libc6-dbg)"
fi

# The inline-depth budget at its bound: a chain of 20 always_inline
# functions gives SFB_LINES_MAX_FRAMES (16) frames, the innermost ones,
# as addr2line's first 16.
{
	echo 'volatile int sink;'
	echo 'static inline __attribute__((always_inline)) void f0(int x) { sink = x; }'
	i=1
	while [ $i -lt 20 ]; do
		echo "static inline __attribute__((always_inline)) void f$i(int x) { f$((i - 1))(x + $i); sink++; }"
		i=$((i + 1))
	done
	echo 'int main(int c, char **v) { (void)v; f19(c); return 0; }'
} >"$tmp/deep.c"
gcc -O2 -g "$tmp/deep.c" -o "$tmp/deep"
pc=$(addr2line -i -f -a -e "$tmp/deep" $(nm "$tmp/deep" | awk '$3 == "main" { print $1 }') >/dev/null;
	objdump -d "$tmp/deep" | awk '/<main>:/ { m = 1; next } m && /mov .*,0x[0-9a-f]*\(%rip\)/ { sub(":", "", $1); print $1; exit }')
addr2line -i -f -a -e "$tmp/deep" "$pc" | sed -n 2,33p >"$tmp/deep.want"
"$tmp/lines_driver" -s "$tmp/deep" "$pc" | sed 1d >"$tmp/deep.got"
echo "# deep: $(($(wc -l <"$tmp/deep.want") / 2)) frames from addr2line at $pc"
check "inline depth at its bound: the 16 innermost of addr2line's frames" \
	cmp -s "$tmp/deep.want" "$tmp/deep.got"

# zstd sections whose frame's window exceeds a stream's history: the
# C++ program's .debug_info and .debug_str (about 100 KB each, one
# single-segment frame: the window is the section's size) are read with
# the scratch a crash report gives each file (161712 bytes: four slots,
# 135 KiB of history at most: debug_section.h), compared with addr2line
# at 300 addresses;
# with SFB_LINES_SCRATCH (one slot, SFB_DSEC_ZSTD_HISTORY) the lookup ends
# with zstd-window-too-large and no frames, where addr2line reads them.
if [ -n "$zstd_bins" ] && objcopy --compress-debug-sections=zstd "$tmp/cxx_O2" "$tmp/cxx_zstd" 2>/dev/null; then
	# 300 addresses: a lookup there decodes about 1.2 MB (the two large
	# sections evict each other from the slots).
	DRIVER_FLAGS="-k -S 161712" N=300
	compare cxx_zstd_pool "$tmp/cxx_zstd" "$tmp/cxx_zstd" 99 0 no-llvm
	DRIVER_FLAGS=
	pc=$(nm "$tmp/cxx_zstd" | awk '$3 == "main" { print $1 }')
	"$tmp/lines_driver" -v "$tmp/cxx_zstd" "$pc" >"$tmp/zstd.out" 2>"$tmp/zstd.err"
	sed 's/^/# cxx_zstd: /' "$tmp/zstd.err"
	check "zstd, window too large: addr2line reads the sections" \
		sh -c "addr2line -e '$tmp/cxx_zstd' '$pc' | grep -q 'lines_prog_cxx.cc:[0-9]'"
	check "zstd, window too large: the error zstd-window-too-large, no frames" \
		sh -c "grep -q ': zstd-window-too-large inline=' '$tmp/zstd.err' && grep -qx '??:0' '$tmp/zstd.out'"
	# The bound: c_O2's .debug_str padded with NULs to SFB_DSEC_ZSTD_HISTORY
	# (26288) bytes is read, one byte more is refused.
	pc=$(nm "$tmp/c_O2" | awk '$3 == "main" { print $1 }')
	for n in 26288 26289; do
		zstd_padded "$tmp/c_O2" $n "$tmp/pad${n}_zstd"
		"$tmp/lines_driver" -v "$tmp/pad${n}_zstd" "$pc" >"$tmp/pad$n.out" 2>"$tmp/pad$n.err"
		sed "s/^/# pad$n: /" "$tmp/pad$n.err"
	done
	addr2line -e "$tmp/pad26288_zstd" "$pc" >"$tmp/pad.want"
	check "zstd, a .debug_str of 26288 bytes: main's line as addr2line's" \
		sh -c "grep -q ': ok inline=' '$tmp/pad26288.err' && grep -q 'lines_prog.c:' '$tmp/pad.want' &&
			grep -qxF \"\$(cat '$tmp/pad.want')\" '$tmp/pad26288.out'"
	check "zstd, a .debug_str of 26289 bytes: zstd-window-too-large" \
		grep -q ': zstd-window-too-large inline=' "$tmp/pad26289.err"
else
	echo "# objcopy cannot write zstd-compressed sections: not checked"
fi
