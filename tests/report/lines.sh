# lines_as_addr2line FILE: under each frame line of the report FILE, the
# source lines are exactly what `addr2line -i -f -C` (binutils: the
# oracle) gives for the frame's offset (the call, offset - 1, after #0):
# "    inlined: NAME at FILE:LINE" per inlined frame, innermost first, then
# "    at FILE:LINE"; no lines when addr2line knows no file.  Where
# addr2line differs, llvm-symbolizer's answer, when installed, is taken
# as well: binutils 2.40 misnames the file of some rows of Debian's libc
# (libc-start.c for libc_start_call_main.h, where gdb and llvm agree).
# lines_as_addr2line FILE 1: frame #0 is a return address too (a report
# from sframe_write_crash_report(NULL, fd)).
lines_as_addr2line() {
	first_ra=${2:-0}
	nlocated=0
	ninlined=0
	grep -n '^#[0-9]* 0x' "$1" | while IFS= read -r hit; do
		k=${hit%%:*}
		fl=${hit#*:}
		n=$(echo "$fl" | sed -n 's/^#\([0-9]*\) .*/\1/p')
		loc=$(echo "$fl" | sed -n 's/^#[0-9]* 0x[0-9a-f]* in .* (\(.*\)+\(0x[0-9a-f]*\))$/\1 \2/p')
		[ -n "$loc" ] || continue
		obj=${loc% *}
		off=$((${loc##* } - (n > 0 || first_ra)))
		got=$(sed -n "$((k + 1)),\$p" "$1" | awk '/^    (at|inlined:) /{ print; next } { exit }')
		want=$(addr2line -i -f -C -e "$obj" "$(printf '0x%x' "$off")" 2>/dev/null |
			sed 's/ (discriminator [0-9]*)$//' | awk '
			NR % 2 == 1 { fn[++m] = $0; next }
			{ loc[m] = $0 }
			END {
				if (m == 0 || loc[m] ~ /^\?\?:/) exit
				for (i = 1; i < m; i++)
					print "    inlined: " fn[i] " at " loc[i]
				print "    at " loc[m]
			}')
		if [ "$got" != "$want" ] && command -v llvm-symbolizer >/dev/null; then
			want2=$(llvm-symbolizer --obj="$obj" "$(printf '0x%x' "$off")" 2>/dev/null | awk '
			/^$/ { next }
			{ line[++k] = $0 }
			END {
				m = 0
				for (i = 1; i + 1 <= k; i += 2) { fn[++m] = line[i]; l = line[i + 1]; sub(/:[0-9]+$/, "", l); loc[m] = l }
				if (m == 0 || loc[m] ~ /^\?\?:/) exit
				for (i = 1; i < m; i++)
					print "    inlined: " fn[i] " at " loc[i]
				print "    at " loc[m]
			}')
			[ "$got" = "$want2" ] && want=$want2
		fi
		if [ "$got" != "$want" ]; then
			echo "# frame #$n ($obj+$(printf '0x%x' "$off")): lines"
			echo "$got" | sed 's/^/#   got: /'
			echo "# addr2line:"
			echo "$want" | sed 's/^/#   want: /'
			echo bad
		fi
	done | tee "$1.cmp" | grep -q '^bad$' && { grep -v '^bad$' "$1.cmp"; return 1; }
	nlocated=$(grep -c '^    at ' "$1")
	ninlined=$(grep -c '^    inlined: ' "$1")
	return 0
}

# lines_as_llvm FILE [1]: the same, with llvm-symbolizer-14 --inlining
# (LLVM's DWARF reader: the second oracle) alone as the reference; its
# columns are dropped, the report printing FILE:LINE.
lines_as_llvm() {
	first_ra=${2:-0}
	grep -n '^#[0-9]* 0x' "$1" | while IFS= read -r hit; do
		k=${hit%%:*}
		fl=${hit#*:}
		n=$(echo "$fl" | sed -n 's/^#\([0-9]*\) .*/\1/p')
		loc=$(echo "$fl" | sed -n 's/^#[0-9]* 0x[0-9a-f]* in .* (\(.*\)+\(0x[0-9a-f]*\))$/\1 \2/p')
		[ -n "$loc" ] || continue
		obj=${loc% *}
		off=$((${loc##* } - (n > 0 || first_ra)))
		got=$(sed -n "$((k + 1)),\$p" "$1" | awk '/^    (at|inlined:) /{ print; next } { exit }')
		want=$(llvm-symbolizer-14 --inlining --obj="$obj" "$(printf '0x%x' "$off")" 2>/dev/null | awk '
			/^$/ { next }
			{ line[++k] = $0 }
			END {
				m = 0
				for (i = 1; i + 1 <= k; i += 2) { fn[++m] = line[i]; l = line[i + 1]; sub(/:[0-9]+$/, "", l); loc[m] = l }
				if (m == 0 || loc[m] ~ /^\?\?:/) exit
				for (i = 1; i < m; i++)
					print "    inlined: " fn[i] " at " loc[i]
				print "    at " loc[m]
			}')
		if [ "$got" != "$want" ]; then
			echo "# frame #$n ($obj+$(printf '0x%x' "$off")): lines"
			echo "$got" | sed 's/^/#   got: /'
			echo "# llvm-symbolizer-14:"
			echo "$want" | sed 's/^/#   want: /'
			echo bad
		fi
	done | tee "$1.llvmcmp" | grep -q '^bad$' && { grep -v '^bad$' "$1.llvmcmp"; return 1; }
	return 0
}
