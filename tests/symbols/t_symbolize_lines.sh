#!/bin/sh
# sframe_symbolize()'s source positions (file, line and inlined[], with
# SFRAME_SYMBOLIZE_LINES_SCRATCH of scratch) against binutils' addr2line
# and llvm-symbolizer-14, on random addresses of the .text of objects
# loaded in the process: tests/symbols/lines_prog.c built as a library at
# -O0 and -O2 (its own DWARF), lines_prog_cxx.cc at -O2, and libc (its
# debug file from libc6-dbg, whose sections are compressed).  symlines_driver prints them as
# `addr2line -i -f -a` does: inlined[] innermost first, then sym.name at
# sym.file:sym.line; the outermost name is the symbol table's
# (`outer-from-symtab`: not compared).  Each object: >= 99% agreement on
# the first frame's file:line and on the whole inline chain, except
# addr2line on libc (binutils 2.40 takes some rows' files from the unit's
# file 0: see t_lines.sh), printed, not asserted.  Each lookup runs in a
# signal handler on a 64 KiB alternate stack: its deepest use is checked.
# A symbolizer (sframe_symbolizer_lookup(): one for all the addresses)
# must give the same answers, follow a library unloaded and another
# loaded in its place, and read zstd frames up to its window's bound.
. tests/lib/check.sh
. tests/lib/install-deps.sh
. tests/lib/symbols.sh
install_deps binutils llvm-14 libc6-dbg gcc g++ python3
N=${SFB_LINES_PCS:-1000}
# The driver is built as the library is ($CC, $CFLAGS: under make
# test-asan, clang with ASan and UBSan); the programs looked up always
# with gcc and g++, whose DWARF binutils' addr2line reads whole (not the
# inline chains of clang's DWARF 5).
CC=${CC:-gcc}

if [ ! -f "$B/libsframebt.a" ]; then
	notok "$B/libsframebt.a not built"
	exit 1
fi
if ! $CC ${CFLAGS:-} -std=gnu11 -Wall -Wextra -Werror -O2 -g -I. tests/symbols/symlines_driver.c \
	-o "$tmp/driver" "$B/libsframebt.a" -ldl -lpthread; then
	notok "symlines_driver builds"
	exit 1
fi

pcs() { # pcs FILE: N random addresses of FILE's .text, sorted
	readelf -SW "$1" | python3 -c '
import random, re, sys
n = int(sys.argv[1])
for l in sys.stdin:
    m = re.search(r"\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if m:
        a, s = int(m.group(1), 16), int(m.group(2), 16)
        random.seed(a ^ s ^ 7)
        for x in sorted(random.randrange(a, a + s) for _ in range(n)):
            print("%x" % x)
' "$N"
}

compare() { # compare NAME LOADED DWARF_FILE A2L_MIN_LINE A2L_MIN_CHAIN
	pcs "$2" >"$tmp/$1.pcs"
	addr2line -i -f -a -e "$3" <"$tmp/$1.pcs" >"$tmp/$1.a2l"
	sed 's/^/0x/' "$tmp/$1.pcs" |
		llvm-symbolizer-14 --output-style=GNU -i -f -a --no-demangle -e "$3" |
		sed 's/^0x\(.*\)/\1/; t x; b; :x s/^/0x0000000000000000/; s/^0x0*\(................\)$/0x\1/' \
		>"$tmp/$1.llvm"
	"$tmp/driver" "$2" <"$tmp/$1.pcs" >"$tmp/$1.ours" 2>"$tmp/$1.log"
	cat "$tmp/$1.log" | sed "s/^/# $1: /"
	used=$(sed -n 's/^alternate stack used: \([0-9]*\) bytes.*/\1/p' "$tmp/$1.log")
	check "$1: sframe_symbolize() with lines used ${used:-?} of 65536 alternate-stack bytes (< 32 KiB)" \
		test "${used:-99999}" -lt 32768
	python3 tests/symbols/lines_compare.py "$1 vs addr2line" "$tmp/$1.a2l" "$tmp/$1.ours" \
		$4 $5 outer-from-symtab
	python3 tests/symbols/lines_compare.py "$1 vs llvm-symbolizer" "$tmp/$1.llvm" "$tmp/$1.ours" \
		99 99 outer-from-symtab
	# A symbolizer (sframe_symbolizer_lookup(), files kept open from one
	# address to the next) gives what sframe_symbolize() gives.
	"$tmp/driver" -s "$2" <"$tmp/$1.pcs" >"$tmp/$1.kept" 2>"$tmp/$1.kept.log"
	check "$1: a symbolizer gives sframe_symbolize()'s answers" cmp -s "$tmp/$1.ours" "$tmp/$1.kept"
	used=$(sed -n 's/^alternate stack used: \([0-9]*\) bytes.*/\1/p' "$tmp/$1.kept.log")
	check "$1: sframe_symbolizer_lookup() used ${used:-?} of 65536 alternate-stack bytes (< 32 KiB)" \
		test "${used:-99999}" -lt 32768
}

for opt in O0 O2; do
	gcc -$opt -g -fPIC -shared -Dmain=lines_prog_main tests/symbols/lines_prog.c \
		-o "$tmp/liblp_$opt.so"
	compare "lines_prog_$opt" "$tmp/liblp_$opt.so" "$tmp/liblp_$opt.so" 99 99
done

# A library unloaded and another loaded in its place, as like it as can
# be: the same code, size and ELF header (built in directories whose
# paths have the same length), its lines moved down by 50, so that only
# its DWARF and its build-id differ.  Symbolized through the same
# symbolizer, each gives its own lines, not the first's file kept open.
mkdir -p "$tmp/first" "$tmp/moved"
cp tests/symbols/lines_prog.c "$tmp/first/lines_prog.c"
{ i=0; while [ $i -lt 50 ]; do echo; i=$((i + 1)); done; cat tests/symbols/lines_prog.c; } \
	>"$tmp/moved/lines_prog.c"
for d in first moved; do
	(cd "$tmp/$d" && gcc -O2 -g -fPIC -shared -Dmain=lines_prog_main lines_prog.c -o liblp.so)
done
"$tmp/driver" "$tmp/first/liblp.so" <"$tmp/lines_prog_O2.pcs" >"$tmp/first.ours" 2>/dev/null
"$tmp/driver" "$tmp/moved/liblp.so" <"$tmp/lines_prog_O2.pcs" >"$tmp/moved.ours" 2>/dev/null
"$tmp/driver" -s -R "$tmp/moved/liblp.so" "$tmp/first/liblp.so" <"$tmp/lines_prog_O2.pcs" \
	>"$tmp/reload.kept" 2>"$tmp/reload.log"
sed 's/^/# reload: /' "$tmp/reload.log"
check "two libraries with the same ELF header, lines 50 apart" \
	sh -c "cmp -s -n 64 '$tmp/first/liblp.so' '$tmp/moved/liblp.so' &&
	       ! cmp -s '$tmp/first.ours' '$tmp/moved.ours'"
check "the second loaded in the place of the first, unloaded" grep -q '^same place' "$tmp/reload.log"
check "a symbolizer across dlclose() and dlopen(): each library's own lines" \
	sh -c "cat '$tmp/first.ours' '$tmp/moved.ours' | cmp -s - '$tmp/reload.kept'"

# A symbolizer's file has 16 slots of SFB_DSEC_ZSTATE (37520) bytes for
# its decompression streams (srcpos.h, SFB_SRCPOS_ROOMY), so a zstd frame
# with a window of up to 16 * 37520 - SFB_DSEC_ZSTD_STRUCT (11232) =
# 589088 bytes is read (on x86-64): lines_prog's .debug_str padded with
# NULs to that size and compressed (one single-segment frame: the window
# is the section's size) gives main's line as addr2line does; one byte
# more gives no line, where addr2line still reads it.  sframe_symbolize()
# (four slots: 138848 bytes) reads neither.
pc=$(nm "$tmp/liblp_O2.so" | awk '$3 == "lines_prog_main" { print $1 }')
zstd_ok=yes
for n in 589088 589089; do
	zstd_padded "$tmp/liblp_O2.so" $n "$tmp/libpad${n}_zstd.so" || zstd_ok=
	echo "$pc" | "$tmp/driver" -s "$tmp/libpad${n}_zstd.so" >"$tmp/pad$n.kept" 2>/dev/null
	echo "$pc" | "$tmp/driver" "$tmp/libpad${n}_zstd.so" >"$tmp/pad$n.ours" 2>/dev/null
	addr2line -e "$tmp/libpad${n}_zstd.so" "$pc" >"$tmp/pad$n.want"
done
if [ -n "$zstd_ok" ]; then
	check "zstd, a .debug_str of 589088 bytes: a symbolizer gives main's line as addr2line's" \
		sh -c "grep -q 'lines_prog.c:[0-9]' '$tmp/pad589088.want' &&
		       grep -qxF \"\$(cat '$tmp/pad589088.want')\" '$tmp/pad589088.kept'"
	check "zstd, a .debug_str of 589089 bytes: a symbolizer gives no line, addr2line does" \
		sh -c "grep -q 'lines_prog.c:[0-9]' '$tmp/pad589089.want' &&
		       tail -n 1 '$tmp/pad589089.kept' | grep -qx '??:0'"
	check "zstd, a .debug_str of 589088 bytes: sframe_symbolize() gives no line (138848 at most)" \
		sh -c "tail -n 1 '$tmp/pad589088.ours' | grep -qx '??:0'"
else
	echo "# objcopy cannot write zstd-compressed sections: not checked"
fi

# C++ (inlined std:: templates, lambdas): file:line as both oracles give
# it; the chains' names are not asserted (addr2line names some inlined
# functions by their callers, LLVM's demangler spells clones and
# templates its own way: t_lines.sh), but every inlined function with a
# linkage name is given demangled.
g++ -O2 -g -fPIC -shared -Dmain=lines_prog_main tests/symbols/lines_prog_cxx.cc -o "$tmp/liblp_cxx.so"
pcs "$tmp/liblp_cxx.so" >"$tmp/cxx.pcs"
addr2line -i -f -a -C -e "$tmp/liblp_cxx.so" <"$tmp/cxx.pcs" >"$tmp/cxx.a2l"
"$tmp/driver" "$tmp/liblp_cxx.so" <"$tmp/cxx.pcs" >"$tmp/cxx.ours" 2>"$tmp/cxx.log"
sed 's/^/# lines_prog_cxx: /' "$tmp/cxx.log"
python3 tests/symbols/lines_compare.py "lines_prog_cxx vs addr2line -C" "$tmp/cxx.a2l" "$tmp/cxx.ours" \
	99 0 outer-from-symtab
check "lines_prog_cxx: inlined functions named demangled (no _Z name)" \
	sh -c "! grep -q '^_Z' '$tmp/cxx.ours'"

libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ { print $NF; exit }')
bid=$(readelf -n "$libc" | awk '/Build ID:/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(printf %.2s "$bid")/${bid#??}.debug
# A stable copy (tests/lib/symbols.sh), found through SFRAME_BT_DEBUG_DIR.
sub=$(printf %.2s "$bid")
mkdir -p "$tmp/debug/.build-id/$sub"
if [ -f "$dbg" ] && copy_stable "$dbg" "$tmp/debug/.build-id/$sub/${bid#??}.debug"; then
	SFRAME_BT_DEBUG_DIR=$tmp/debug
	export SFRAME_BT_DEBUG_DIR
	compare libc "$libc" "$tmp/debug/.build-id/$sub/${bid#??}.debug" 0 0
	unset SFRAME_BT_DEBUG_DIR
else
	notok "libc's debug file $dbg (libc6-dbg)"
fi

# Without the room, names alone: one frame an address, no file, no line;
# and the names are those given with the room.
"$tmp/driver" -n "$tmp/liblp_O2.so" <"$tmp/lines_prog_O2.pcs" >"$tmp/names_only" 2>/dev/null
check "a scratch of SFRAME_SYMBOLIZE_SCRATCH bytes: no file, line or inlined frame" \
	awk '/^0x/ { n = 0; next } { n++ } n == 2 && $0 != "??:0" { bad = 1 } n > 2 { bad = 1 }
	     END { exit bad || NR == 0 }' "$tmp/names_only"
same_names() { # same_names WITH_LINES NAMES_ONLY: each address's outermost name
	python3 - "$1" "$2" <<'PY'
import sys
def outer(path):
    out, cur = {}, None
    for l in open(path):
        l = l.rstrip("\n")
        if l.startswith("0x"):
            cur = l
            out[cur] = []
        else:
            out[cur].append(l)
    return {a: v[-2] for a, v in out.items() if len(v) >= 2}
a, b = outer(sys.argv[1]), outer(sys.argv[2])
sys.exit(not a or a != b)
PY
}
check "a scratch of SFRAME_SYMBOLIZE_SCRATCH bytes: the same names" \
	same_names "$tmp/lines_prog_O2.ours" "$tmp/names_only"
exit 0
