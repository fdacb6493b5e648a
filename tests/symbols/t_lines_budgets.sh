#!/bin/sh
# Each bound of the lines reader (symbols/lines.h: SFB_LINES_MAX_*) at its
# bound: the driver built with the bound set (-D) to exactly what a
# lookup needs (the count the reader reports for it, lines_driver -v)
# gives the same frames as without bounds, and built with one less ends
# that lookup with the bound's own error (the inline chain's, for the
# bounds of step 2; for SFB_LINES_MAX_HOPS, past which a frame keeps the
# name found so far, different frames).  The unbounded frames are checked
# against addr2line first.  Programs: tests/symbols/lines_prog.c at -O2,
# and the same linked with three more units and no .debug_aranges (for
# SFB_LINES_MAX_UNITS).  SFB_LINES_MAX_FRAMES is t_lines.sh's.
. tests/lib/check.sh
. tests/lib/install-deps.sh
install_deps binutils gcc python3
CC=${CC:-gcc}
srcs="src/symbols/lines.c src/symbols/inlines.c src/symbols/debug_section.c src/base/inflate.c
	src/base/zstd.c"
driver() { # driver NAME CFLAGS...: $tmp/NAME
	n=$1
	shift
	# -Wno-type-limits: a bound of 0 makes a loop's test constant.
	$CC -std=gnu11 -Wall -Wextra -Werror -Wno-type-limits -O1 -Isrc "$@" tests/symbols/lines_driver.c $srcs \
		-o "$tmp/$n"
}
if ! driver free; then
	notok "lines_driver builds"
	exit 1
fi

gcc -O2 -g tests/symbols/lines_prog.c -o "$tmp/prog"
for i in 1 2 3; do
	echo "int unit$i(int x) { return x * $i + 1; }" >"$tmp/u$i.c"
done
# The program's own unit last, after the three small ones.
gcc -O2 -g "$tmp/u1.c" "$tmp/u2.c" "$tmp/u3.c" tests/symbols/lines_prog.c -o "$tmp/units"
objcopy --remove-section=.debug_aranges "$tmp/units" "$tmp/units_noar"

# 300 addresses of prog's .text, with what each lookup cost.
readelf -SW "$tmp/prog" | python3 -c '
import random, re, sys
for l in sys.stdin:
    m = re.search(r"\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if m:
        a, s = int(m.group(1), 16), int(m.group(2), 16)
        random.seed(a ^ s)
        for x in sorted(random.randrange(a, a + s) for _ in range(300)):
            print("%x" % x)
' >"$tmp/pcs"
"$tmp/free" -v "$tmp/prog" <"$tmp/pcs" >/dev/null 2>"$tmp/costs"

# pick FIELD: the address whose lookup has the largest FIELD (>= 1), and
# that count, as "ADDR COUNT"; only lookups that found a line and the
# whole inline chain.
pick() {
	awk -v f="$1" '$2 == "ok" && $3 == "inline=ok" {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) v = kv[2] + 0 }
		if (v > best) { best = v; a = $1; sub(/:$/, "", a) } }
		END { if (best > 0) print a, best }' "$2"
}

# at_bound MACRO FIELD ERROR FILE [ADDR COUNT]
at_bound() {
	m=$1 field=$2 want=$3 file=$4
	set -- $(pick "$field" "$tmp/costs.$(basename "$file")")
	if [ $# -ne 2 ]; then
		notok "$m: no lookup of $(basename "$file") needs any $field"
		return
	fi
	a=$1 c=$2
	"$tmp/free" "$file" "$a" >"$tmp/free.out"
	addr2line -i -f -a -e "$file" "$a" | sed 's/ (discriminator [0-9]*)$//' >"$tmp/a2l.out"
	check "$m: the unbounded frames at $a are addr2line's" cmp -s "$tmp/free.out" "$tmp/a2l.out"
	driver "at_$m" "-D$m=$c" && driver "below_$m" "-D$m=$(($c - 1))" || {
		notok "$m: drivers build"
		return
	}
	"$tmp/at_$m" "$file" "$a" >"$tmp/at.out"
	"$tmp/at_$m" -v "$file" "$a" 2>&1 >/dev/null | sed "s/^/# $m=$c: /"
	check "$m=$c (what $a needs): the same frames" cmp -s "$tmp/at.out" "$tmp/free.out"
	"$tmp/below_$m" "$file" "$a" >"$tmp/below.out"
	"$tmp/below_$m" -v "$file" "$a" 2>"$tmp/below.err" >/dev/null
	sed "s/^/# $m=$(($c - 1)): /" "$tmp/below.err"
	if [ "$want" = differs ]; then
		check "$m=$(($c - 1)): other frames" sh -c "! cmp -s '$tmp/below.out' '$tmp/free.out'"
	else
		check "$m=$(($c - 1)): $want" \
			grep -Eq "^0x[0-9a-f]+: ($want inline=|[a-z-]+ inline=$want )" "$tmp/below.err"
	fi
}

cp "$tmp/costs" "$tmp/costs.prog"
at_bound SFB_LINES_MAX_ARANGES aranges arange-budget "$tmp/prog"
at_bound SFB_LINES_MAX_DIES dies die-budget "$tmp/prog"
at_bound SFB_LINES_MAX_DEPTH depth depth-budget "$tmp/prog"
at_bound SFB_LINES_MAX_ABBREVS abbrevs abbrev-budget "$tmp/prog"
at_bound SFB_LINES_MAX_ATTRS attrs abbrev-budget "$tmp/prog"
at_bound SFB_LINES_MAX_RANGES ranges range-budget "$tmp/prog"
at_bound SFB_LINES_MAX_HOPS hops differs "$tmp/prog"
at_bound SFB_LINES_MAX_PROGRAM program program-budget "$tmp/prog"
at_bound SFB_LINES_MAX_FILES files file-budget "$tmp/prog"

# Units: the addresses of the last unit (lines_prog.c's) of units_noar.
nm "$tmp/units_noar" | awk '$3 == "main" || $3 == "fold" { print $1 }' >"$tmp/pcs.units"
"$tmp/free" -v "$tmp/units_noar" <"$tmp/pcs.units" >/dev/null 2>"$tmp/costs.units_noar"
at_bound SFB_LINES_MAX_UNITS units unit-budget "$tmp/units_noar"
exit 0
