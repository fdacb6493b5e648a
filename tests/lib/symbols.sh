# Sourced by the shell tests that check sframebt's names against
# binutils': the function symbols nm gives an object, and the names that
# cover an offset by the rule sframebt follows (a symbol's size bounds it;
# one without a size ends where the next symbol starts).  Needs binutils;
# reads an object's detached debug file (/usr/lib/debug/.build-id, e.g.
# libc6-dbg for Debian's stripped libc) when installed.

# syms OBJECT: its function symbols, "start size name" in decimal, size 0
# for a symbol without one, sorted by start.
syms() {
	bid=$(readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3 }')
	dbg=/usr/lib/debug/.build-id/$(printf %.2s "$bid")/${bid#??}.debug
	if [ -n "$bid" ] && [ -f "$dbg" ]; then
		nm -S -t d --defined-only "$dbg"
	else
		nm -S -t d --defined-only "$1"
		nm -D -S -t d --defined-only "$1"
	fi 2>/dev/null | awk '
		NF == 4 && $3 ~ /^[tTwWiI]$/ { print $1 + 0, $2 + 0, $4 }
		NF == 3 && $2 ~ /^[tTwWiI]$/ { print $1 + 0, 0, $3 }' | sort -n -k1,1
}

# names_at OFFSET < SYMS: the names covering OFFSET (decimal), one a line,
# versions (@GLIBC_2.2.5) cut: every sized symbol holding it, else every
# symbol without a size at the highest start at or below it.
names_at() {
	awk -v a="$1" '
		{ sub(/@.*/, "", $3) }
		$1 > a { exit }
		$2 > 0 && a < $1 + $2 { held[$3] = 1; nheld++ }
		$1 > floor { floor = $1; nfloor = 0 }
		$2 == 0 && $1 == floor { atfloor[++nfloor] = $3 }
		END {
			if (nheld) { for (n in held) print n; exit }
			for (i = 1; i <= nfloor; i++) print atfloor[i]
		}'
}

# named_as_nm NAME OBJECT OFFSET [RA]: NAME ("" for none) is what nm
# gives OFFSET (decimal) of OBJECT, or, with RA = 1, OFFSET - 1, else
# OFFSET when nothing covers OFFSET - 1; as nm spells it or as c++filt -i
# demangles it (sframebt prints names demangled).
named_as_nm() {
	syms "$2" >"$tmp/syms.$$"
	want=$(names_at "$(($3 - ${4:-0}))" <"$tmp/syms.$$")
	if [ -z "$want" ] && [ "${4:-0}" = 1 ]; then
		want=$(names_at "$3" <"$tmp/syms.$$")
	fi
	if [ -z "$1" ]; then
		[ -z "$want" ]
		return
	fi
	echo "$want" | grep -qxF -- "$1" || echo "$want" | c++filt -i | grep -qxF -- "$1"
}

# report_as_nm FILE [given]: every frame line of an sframebt report in
# FILE ("#N 0xPC in NAME+0xOFF (OBJECT+0xOFF)", "??" for no name) is named
# as nm names it: frame #0 at its PC, the others as return addresses, or
# every one at its PC with "given".  A mismatch is printed.
report_as_nm() {
	n=0
	ra=1
	[ "${2:-}" = given ] && ra=0
	while line=$(grep "^#$n 0x" "$1") && [ -n "$line" ]; do
		name=$(echo "$line" | sed -n 's/^#[0-9]* 0x[0-9a-f]* in \(.*\)+0x[0-9a-f]* (.*)$/\1/p')
		loc=$(echo "$line" | sed -n 's/^#[0-9]* 0x[0-9a-f]* in .* (\(.*\)+\(0x[0-9a-f]*\))$/\1 \2/p')
		if [ -z "$loc" ] || ! named_as_nm "$name" "${loc% *}" "$((${loc##* }))" $((n > 0 && ra)); then
			echo "# frame #$n is not named as nm names it: $line"
			return 1
		fi
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# glibc_lines_as_nm FILE: every line of backtrace_symbols_fd() in FILE
# ("OBJECT(NAME+0xOFF) [0xPC]", "OBJECT(+0xOFF) [0xPC]" for no name), the
# PCs being return addresses, is named as nm names it.
glibc_lines_as_nm() {
	n=0
	for line in $(grep -o '^[^ ]*([^ ]*) \[0x[0-9a-f]*\]$' "$1" | tr -d ' '); do
		obj=${line%%(*}
		name=$(echo "$line" | sed -n 's/^[^(]*(\(.*\)+0x[0-9a-f]*).*/\1/p')
		pc=$(echo "$line" | sed -n 's/.*\[\(0x[0-9a-f]*\)\]$/\1/p')
		off=$(echo "$line" | sed -n 's/^[^(]*(.*+\(0x[0-9a-f]*\)).*/\1/p')
		# NAME+OFF: the object offset is a start of NAME plus OFF (static
		# functions of several files may share a name).
		starts=0
		[ -n "$name" ] && starts=$(syms "$obj" |
			awk -v n="$name" '{ sub(/@.*/, "", $3) } $3 == n { print $1 }')
		hit=
		for start in $starts; do
			named_as_nm "$name" "$obj" "$((start + off))" 1 && hit=1
		done
		if [ -z "$hit" ]; then
			echo "# not named as nm names it: $line"
			return 1
		fi
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# copy_stable FROM TO: copy a debug file that may be rewritten in place
# while a test runs (perf's build-id cache hard-links it, which a lookup
# then reads as a file shorter than its headers say): two copies that
# agree, tried five times a second apart.
copy_stable() {
	for i in 1 2 3 4 5; do
		cp "$1" "$2" && cp "$1" "$2.again" && cmp -s "$2" "$2.again" && rm -f "$2.again" &&
			return 0
		sleep 1
	done
	return 1
}

# zstd_padded OBJECT N OUT: OBJECT with its .debug_str padded with NULs to
# N bytes, its debug sections zstd-compressed by objcopy (one
# single-segment frame a section: the window is its size), as OUT.  False
# where objcopy cannot write zstd sections.
zstd_padded() {
	objcopy --dump-section .debug_str="$3.str" "$1" &&
		python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); n = int(sys.argv[2])
open(sys.argv[1], "wb").write(d + bytes(n - len(d)))' "$3.str" "$2" &&
		objcopy --update-section .debug_str="$3.str" "$1" "$3.pad" &&
		objcopy --compress-debug-sections=zstd "$3.pad" "$3" &&
		readelf -tW "$3" | grep -q ZSTD
} 2>/dev/null
