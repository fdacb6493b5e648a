#!/bin/sh
# run.sh BUILD_DIR - the body of `make bench` (rules: tests/bench/build.mk).
#
# Make has built BUILD_DIR/bench/{sfbench, libbench-fp.so, libbench-v1.so,
# libbench-varied-fp.so, libbench-varied-v1.so, libbench-big.so,
# objs/libbobj000..099.so} and tests/world's probe ($BENCH_PROBE).  This
# script:
#   1. builds libbench-v2.so / libbench-v3.so and libbench-varied-v3.so
#      with binutils 2.44 / 2.47,
#      fetched privately by tests/fixtures/toolchains.sh (network, once;
#      skipped with "V2/V3 skipped: toolchain unavailable" if that fails);
#   2. runs sfbench time, async, async-solo, lookup, firstcall, natural and
#      varied (timings; async-solo: every build at 125 us between SIGPROF
#      samples, then main, distinct and v3 at 1 ms; natural: walks to the
#      stack's natural end through libc, warm, cold and in SIGPROF samples;
#      varied: stacks that differ from call to call), and samples real
#      programs with tests/world/probe.c;
#   3. counts syscalls per backtrace with strace -f -c (two runs with
#      different iteration counts, the difference divided by the extra
#      iterations);
#   4. counts instructions with valgrind --tool=callgrind (one dump per
#      method, build and depth, of the repeated chains and of the varied
#      ones; the empty call is subtracted), keeps per-function profiles of
#      sframebt and measures the memo lookup behind a missed hint;
#   5. profiles sframebt with perf record, when perf works;
#   6. writes BUILD_DIR/bench-results.md and prints it (the TARGET lines as
#      PASS/FAIL, the GOAL lines, the walker's targets, as MET/MISSED), and
#      puts its figures in docs/SPEED.md and README.md
#      (tests/bench/speed-md.sh).
# Environment (from make): CC, BENCH_SOFLAGS, BENCH_CFLAGS, BENCH_PROBE.
# Optional: SFB_TC (toolchain cache), SFB_BENCH_NO_FETCH=1 (never download).
set -u
B=${1:-build}
D=$B/bench
OUT=$B/bench-results.md
CC=${CC:-cc}
BENCH_SOFLAGS=${BENCH_SOFLAGS:?run through make bench}
SFB_TC=${SFB_TC:-${SFRAME_TOOLCHAINS:-$HOME/.cache/sframebt-toolchains}}
export SFB_TC
BIN=$D/sfbench
SRC=tests/bench/bench_chain.c
start=$(date +%s)
log() { printf '[bench %ss] %s\n' "$(($(date +%s) - start))" "$*" >&2; }

# ---- 1. V2 / V3 chain builds ---------------------------------------------
suite_of() { case $1 in 2) echo trixie ;; 3) echo sid ;; esac; }
have_tc() { [ -x "$SFB_TC/bin/x86_64-$(suite_of "$1")/as" ] && [ -x "$SFB_TC/bin/x86_64-$(suite_of "$1")/ld" ]; }
if ! { have_tc 2 && have_tc 3; } && [ -z "${SFB_BENCH_NO_FETCH:-}" ] &&
	[ -f tests/fixtures/toolchains.sh ] && command -v bash >/dev/null 2>&1; then
	log "fetching binutils 2.44 / 2.47 (tests/fixtures/toolchains.sh, log: $D/toolchains.log)"
	timeout 600 bash tests/fixtures/toolchains.sh x86_64-v2 x86_64-v3 >"$D/toolchains.log" 2>&1 ||
		log "toolchains.sh failed (see $D/toolchains.log)"
fi
skipped=
for v in 2 3; do
	so=$D/libbench-v$v.so
	if have_tc $v; then
		# Always rebuilt (two compiles): as and ld must both come from
		# the suite, hence -B with the trailing slash.
		# shellcheck disable=SC2086
		$CC $BENCH_SOFLAGS -fomit-frame-pointer -B"$SFB_TC/bin/x86_64-$(suite_of $v)/" \
			"$SRC" -o "$so" || { rm -f "$so"; skipped="$skipped V$v"; }
	else
		rm -f "$so"
		skipped="$skipped V$v"
	fi
done
vso=$D/libbench-varied-v3.so
rm -f "$vso"
# shellcheck disable=SC2086
have_tc 3 && $CC $BENCH_SOFLAGS -fomit-frame-pointer -B"$SFB_TC/bin/x86_64-$(suite_of 3)/" \
	tests/bench/bench_varied.c -o "$vso"
[ -n "$skipped" ] && echo "V2/V3 skipped: toolchain unavailable (${skipped# })"

# ---- 2. Timings ------------------------------------------------------------
log "warm backtraces (sfbench time)"
"$BIN" time >"$D/time.md" 2>"$D/time.err" || echo "**sfbench time failed** (exit $?): $(cat "$D/time.err")" >>"$D/time.md"
log "SIGPROF samples (sfbench async)"
"$BIN" async >"$D/async.md" 2>"$D/async.err" || echo "**sfbench async failed** (exit $?): $(cat "$D/async.err")" >>"$D/async.md"
log "SIGPROF samples, one unwinder per process, 125 us and 1 ms apart (sfbench async-solo)"
"$BIN" async-solo >"$D/async-solo.md" 2>"$D/async-solo.err" ||
	printf '**sfbench async-solo failed** (exit %s): %s\n\nTARGET: FAIL: the SIGPROF samples, one unwinder per process, were measured (sfbench async-solo failed)\n' "$?" "$(cat "$D/async-solo.err")" >>"$D/async-solo.md"
log "FDE lookups in a large object (sfbench lookup)"
"$BIN" lookup >"$D/lookup.md" 2>"$D/lookup.err" || echo "**sfbench lookup failed** (exit $?): $(cat "$D/lookup.err")" >>"$D/lookup.md"
log "first calls (sfbench firstcall)"
"$BIN" firstcall >"$D/firstcall.md" 2>"$D/firstcall.err" || echo "**sfbench firstcall failed** (exit $?): $(cat "$D/firstcall.err")" >>"$D/firstcall.md"
log "walks to the natural end through libc (sfbench natural)"
"$BIN" natural >"$D/natural.md" 2>"$D/natural.err" ||
	printf '**sfbench natural failed** (exit %s): %s\n\nTARGET: FAIL: the natural-end walks were measured (sfbench natural failed)\n' "$?" "$(cat "$D/natural.err")" >>"$D/natural.md"
log "varied stacks (sfbench varied)"
"$BIN" varied >"$D/varied.md" 2>"$D/varied.err" ||
	printf '**sfbench varied failed** (exit %s): %s\n\nTARGET: FAIL: the varied stacks were measured (sfbench varied failed)\n' "$?" "$(cat "$D/varied.err")" >>"$D/varied.md"

# ---- SIGPROF samples of real programs ----------------------------------------
# Debian programs run with tests/world/probe.c preloaded (a 1 kHz
# SIGPROF timer on every thread; the handler walks each sample with
# sframebt and with libunwind on the same ucontext, in alternating order,
# each walk timed with CLOCK_MONOTONIC, and compares the two stacks at
# exit).  Each program's result files hold one "c SFRAMEBT_NS LIBUNWIND_NS"
# line a sample and "samples N equal E" a process.
real=$D/real.md
REAL_RUNS=3
probe=${BENCH_PROBE:-$B/tests/world/probe.so}
case $probe in /*) ;; *) probe=$PWD/$probe ;; esac
log "SIGPROF samples of real programs (tests/world/probe.c)"
rw=$D/real
rm -rf "$rw"
mkdir -p "$rw/in"
# Input for the compressors: deterministic text (2.5 MB, and its first
# megabyte for xz, the slowest), random-looking
# enough that they work for their output.
awk 'BEGIN { srand(1); for (i = 0; i < 50000; i++) { l = i
	for (j = 0; j < 8; j++) l = l sprintf(" %x", int(rand() * 65536) * (j + 1)); print l } }' \
	>"$rw/in/data.txt"
head -c 1000000 "$rw/in/data.txt" >"$rw/in/data-1m.txt"
# name|command (run by sh in $rw/in, output thrown away), each about a
# second; the name is how the program's executable is named.  Debian's
# programs: /usr/bin first in PATH (a python3 from pyenv or a venv would
# be another interpreter, with its own shims and build).
REAL='python3|python3 -c "import json, re; d = [{\"k\": i, \"v\": str(i) * 3} for i in range(250000)]; s = json.dumps(d); print(len(re.findall(r\"[0-9]+\", s)))"
lua5.4|lua5.4 -e "local t = {} for i = 1, 8000000 do local k = i % 1000 t[k] = (t[k] or 0) + i end local s = {} for i = 1, 100000 do s[#s + 1] = tostring(i) end print(#table.concat(s, \",\"))"
sqlite3|sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500000) SELECT sum(x * x % 7), count(*) FROM c;"
xz|xz -6 -T1 -c data-1m.txt
gzip|gzip -6 -c data.txt data.txt data.txt data.txt'
{
	echo "### SIGPROF samples of real programs"
	echo
	echo "Each program runs with \`tests/world/probe.c\` preloaded (built as \`$probe\`): a 1 kHz"
	echo "SIGPROF timer on every thread; the handler walks each sample to the end of its stack with"
	echo "\`sframe_backtrace_ex()\` and with libunwind (\`unw_init_local2(UNW_INIT_SIGNAL_FRAME)\` and"
	echo "\`unw_step()\`) on the same ucontext, in alternating order, each walk timed with"
	echo "\`CLOCK_MONOTONIC\` (a clock read, about 20 ns, in both), and at exit compares the two stacks"
	echo "frame by frame (PCs, CFAs, both ending at the stack's end). Each program runs $REAL_RUNS times;"
	echo "per program: the median ns a walk of each unwinder over the samples of all its runs, and their"
	echo "ratio; the geometric mean of the ratios judges the target."
	echo
	echo "| program | samples | equal to libunwind | sframebt median ns | p90 | libunwind median ns | p90 | libunwind / sframebt |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$real"
rw=$(cd "$rw" && pwd)
# q FILE F: the F-quantile (nearest rank) of the numbers in FILE.
q() { sort -n "$1" | awk -v f="$2" '{ v[NR] = $1 } END { if (NR) print v[int(f * (NR - 1) + 0.5) + 1] }'; }
real_ok=yes
while IFS='|' read -r name cmd; do
	[ -n "$name" ] || continue
	out=$rw/out-$name
	mkdir -p "$out"
	if ! PATH="/usr/bin:/bin:$PATH" command -v "$name" >/dev/null 2>&1; then
		echo "| $name | not installed | | | | | | |" >>"$real"
		real_ok=no
		continue
	fi
	# REAL_RUNS runs, their samples pooled: one run's medians move by
	# +-30% with the machine's state (docs/SPEED.md, fifth pass).
	k=1
	while [ "$k" -le "$REAL_RUNS" ]; do
		mkdir -p "$out/run$k"
		(cd "$rw/in" && timeout -s KILL 60 env PATH="/usr/bin:/bin:$PATH" LD_PRELOAD="$probe" \
			SFB_WORLD_OUT="$out/run$k" sh -c "$cmd") >/dev/null 2>>"$out/stderr" </dev/null ||
			real_ok=no
		k=$((k + 1))
	done
	# The program's own processes only (not the shell that started it).
	awk -v o="$out" -v prog="$name" '
		FNR == 1 { keep = 0 }
		$1 == "exe" { x = $2; sub(/.*\//, "", x); keep = index(x, prog) == 1 }
		keep && $1 == "samples" { s += $2; e += $4 }
		keep && $1 == "c" { print $2 > (o "/cost.sfb"); print $3 > (o "/cost.unw") }
		END { print s + 0, e + 0 }' "$out"/run*/*.txt >"$out/counts" 2>/dev/null
	read -r s e <"$out/counts"
	if [ "$s" -eq 0 ]; then
		echo "| $name | 0 | - | - | - | - | - | - |" >>"$real"
		real_ok=no
		continue
	fi
	[ $((e * 100)) -ge $((s * 99)) ] || real_ok=no
	awk -v name="$name" -v s="$s" -v e="$e" -v ms="$(q "$out/cost.sfb" 0.5)" \
		-v ps="$(q "$out/cost.sfb" 0.9)" -v mu="$(q "$out/cost.unw" 0.5)" \
		-v pu="$(q "$out/cost.unw" 0.9)" 'BEGIN {
		printf "| %s | %d | %d (%.1f%%) | %d | %d | %d | %d | %.1f |\n", name, s, e, 100 * e / s,
			ms, ps, mu, pu, (ms > 0 ? mu / ms : 0) }' >>"$real"
done <<REAL_END
$REAL
REAL_END
echo >>"$real"
# The geometric mean of the per-program ratios (the last column).
awk -v ok="$real_ok" '
	/^\| / && $(NF - 1) ~ /^[0-9.]+$/ && $(NF - 1) > 0 {
		n++; l += log($(NF - 1)); list = list (list == "" ? "" : ", ") $2 " " $(NF - 1) "x" }
	END {
		g = n ? exp(l / n) : 0
		if (n) printf "Geometric mean of libunwind / sframebt over the %d programs: %.1f.\n\n", n, g
		printf "GOAL: %s: SIGPROF samples of real programs: sframebt >= 15x cheaper than libunwind (geometric mean of the per-program ratios of medians: %.1fx; %s)\n", \
			g >= 15 ? "MET" : "MISSED", g, list
		printf "TARGET: %s: SIGPROF samples of real programs: every program ran and was sampled, its stacks >= 99%% equal to libunwind'"'"'s\n", \
			ok == "yes" ? "PASS" : "FAIL"
	}' "$real" >"$real.tail"
cat "$real.tail" >>"$real"

# Cross-check of the table size from the object file itself, and the whole
# library's static data.
tsz=$(nm -S "$B/obj/objcache.o" 2>/dev/null | awk '$3 ~ /^[bBdD]$/ && $4 == "table" { print $2 }')
bss=$(size -t "$B/libsframebt.a" 2>/dev/null | awk '/TOTALS/ { print $3 " bytes .bss, " $2 " bytes .data" }')
{
	[ -n "$tsz" ] && echo "Cross-check: \`nm -S $B/obj/objcache.o\` gives the table $((0x$tsz)) bytes."
	[ -n "$bss" ] && echo "The whole library: $bss (\`size -t $B/libsframebt.a\`), no heap."
	echo
} >>"$D/firstcall.md"

# ---- 3. Syscalls per backtrace ----------------------------------------------
sc=$D/syscalls.md
# strace_pair LABEL BUILD N1 N2 EXCLUDE SFBENCH-ARGS... (the last argument
# of the sfbench command line is the iteration count, appended here):
# appends a table row with (calls(N2) - calls(N1)) / (N2 - N1), not
# counting the syscall named EXCLUDE; fails if that is not 0.
strace_pair() {
	label=$1 pb=$2 n1=$3 n2=$4 excl=$5
	shift 5
	tag=$(echo "$*" | tr ' ' '-')
	for n in $n1 $n2; do
		$norand strace -f -c -U calls,name -o "$D/strace-$tag-$n.txt" "$BIN" "$@" "$n" \
			>/dev/null 2>"$D/strace-$tag-$n.err" || {
			echo "| $label | $pb | run failed | $(head -c 200 "$D/strace-$tag-$n.err") |" >>"$sc"
			return 1
		}
	done
	awk -v n1="$n1" -v n2="$n2" -v label="$label" -v b="$pb" -v excl="$excl" '
		FNR == 1 { f++ }
		$NF ~ /^[a-z_0-9]+$/ && $1 ~ /^[0-9]+$/ { c[f, $NF] = $1; names[$NF] = 1 }
		END {
			d = n2 - n1
			tot = (c[2, "total"] - c[1, "total"] - (c[2, excl] - c[1, excl])) / d
			which = ""
			for (k in names)
				if (k != "total" && k != excl && c[2, k] - c[1, k] != 0)
					which = which sprintf("%s%s %.3g", which == "" ? "" : ", ", k, (c[2, k] - c[1, k]) / d)
			printf "| %s | %s | %.3g | %s |\n", label, b, tot, which == "" ? "-" : which
			if (tot != 0) exit 1
		}' "$D/strace-$tag-$n1.txt" "$D/strace-$tag-$n2.txt" >>"$sc"
}
if command -v strace >/dev/null 2>&1; then
	log "syscalls per backtrace (strace -f -c)"
	# Without address randomisation both runs lay out the stack the same
	# way, so their warm-ups make the same probes and the difference is
	# exactly what the extra backtraces did.
	norand=
	setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"
	{
		echo "### System calls per warm backtrace"
		echo
		echo "\`strace -f -c\` (${norand:-with ASLR}) of \`sfbench syscalls METHOD BUILD 32 N\` (warm-up, then N"
		echo "depth-32 backtraces) for N = 1000 and 11000, and of \`sfbench async-only METHOD BUILD N\` (100"
		echo "warm-up SIGPROF samples, then N samples, depth 32) for N = 1000 and 3000: the difference of the"
		echo "totals divided by the extra backtraces (in the handler rows, without the one rt_sigreturn"
		echo "every signal costs). METHOD-nat: walked to the stack's natural end (a 256-entry buffer,"
		echo "through libc to _start) instead of to a full buffer."
		echo
		echo "| method | build | syscalls/bt | which |"
		echo "|---|---|---:|---|"
	} >"$sc"
	sfb_zero=yes
	sfb_rows=0
	for mb in fp:fp sframebt:fp sframebt:v1 sframebt:v2 sframebt:v3 unw:v1 glibc:v1 \
		fp-nat:fp sframebt-nat:main sframebt-nat:v3 unw-nat:main; do
		m=${mb%:*}
		b=${mb#*:}
		[ "$b" = main ] || [ -e "$D/libbench-$b.so" ] || continue
		if strace_pair "$m" "$b" 1000 11000 none syscalls "$m" "$b" 32; then :; else
			case $m in sframebt*) sfb_zero=no ;; esac
		fi
		case $m in sframebt*) sfb_rows=$((sfb_rows + 1)) ;; esac
	done
	for m in sframebt unw sframebt-nat; do
		if strace_pair "$m (SIGPROF handler)" v1 1000 3000 rt_sigreturn async-only "$m" v1; then :; else
			case $m in sframebt*) sfb_zero=no ;; esac
		fi
	done
	echo >>"$sc"
	if [ $sfb_zero = yes ] && [ $sfb_rows -gt 0 ]; then
		echo "TARGET: PASS: zero syscalls per sframebt backtrace after warm-up (strace -f -c; every build, to a full buffer and to the natural end, and in the SIGPROF handler)" >>"$sc"
	else
		echo "TARGET: FAIL: zero syscalls per sframebt backtrace after warm-up (see the syscall table)" >>"$sc"
	fi
else
	printf '### System calls per warm backtrace\n\nstrace not available: not measured.\n\nTARGET: SKIP: zero syscalls per backtrace (strace missing)\n' >"$sc"
fi

# ---- 4. Callgrind -------------------------------------------------------------
cg=$D/callgrind.md
prof=$D/profile-callgrind.txt
# The 14 functions with the most self cost in a callgrind_annotate listing
# ($1), as a Markdown table: column $2 is their instructions divided by $3
# (the batch's iterations) and $4 (frames a walk, or 1), printed with the
# format $5; their share of the total follows.
self_cost_table() {
	echo "| function (file where the code is) | $2 | share |"
	echo "|---|---:|---:|"
	awk -v it="$3" -v per="$4" -v fmt="$5" '
		/^-+$/ { sep++; next }
		sep == 6 && match($0, /^ *[0-9,]+ \( *[0-9.]+%\)/) {
			ir = $1; gsub(/,/, "", ir)
			pct = substr($0, 1, RLENGTH); sub(/^.*\( */, "", pct); sub(/%\)$/, "", pct)
			if (pct + 0 >= 99.9) next
			fn = substr($0, RLENGTH + 1); sub(/^ +/, "", fn)
			sub(/ \[.*\]$/, "", fn); sub(/^.*\/(src|tests|elf|csu)\//, "", fn)
			if (++k <= 14) printf "| %s | " fmt " | %s%% |\n", fn, ir / it / per, pct
		}' "$1"
}
# The varied stacks' counts (dumps "var-METHOD BUILD DEPTH CAPTURES FRAMES"
# in $D/cg/summary.txt), where their instructions go, and the memo lookup
# the walk makes when a memo entry's hint misses.
MEMO_FN_RE='memo_(find|lookup)[a-z_]*'
varied_callgrind() {
	echo "Varied stacks (the captures of \`sfbench varied\`, to the natural end; collection switched on"
	echo "around each backtrace call only, minus an empty call), instructions per backtrace and per frame:"
	echo
	echo "| method | build | d=8 frames | Ir/bt | Ir/frame | d=32 frames | Ir/bt | Ir/frame | d=128 frames | Ir/bt | Ir/frame |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk '
		$1 !~ /^var-/ { next }
		{ m = $1; b = $2; d = $3; per[m, b, d] = $6 / $4; fr[m, b, d] = $5
		  if (!((m, b) in seen)) { seen[m, b] = 1; order[++n] = m SUBSEP b } }
		END {
			name["var-fp"] = "frame-pointer walk"; name["var-sframebt"] = "sframebt"
			name["var-unw"] = "libunwind unw_backtrace"; name["var-glibc"] = "glibc backtrace()"
			split("8 32 128", ds, " ")
			for (i = 1; i <= n; i++) {
				split(order[i], mb, SUBSEP)
				if (mb[1] == "var-empty") continue
				line = "| " name[mb[1]] " | " mb[2] " |"
				for (j = 1; j <= 3; j++) {
					v = per[mb[1], mb[2], ds[j]] - per["var-empty", "main", ds[j]]
					f = fr[mb[1], mb[2], ds[j]]
					line = line sprintf(" %d | %.0f | %.1f |", f, v, f ? v / f : 0)
				}
				print line
			}
		}' "$D/cg/summary.txt"
	echo
	# Where sframebt's instructions go on varied stacks (main build, depth 32).
	# shellcheck disable=SC2046 # three words: dump file, captures, frames
	set -- $(awk '$1 == "var-sframebt" && $2 == "main" && $3 == 32 { print $7, $4, $5 }' "$D/cg/summary.txt")
	[ $# -eq 3 ] || return 0
	callgrind_annotate --threshold=100 --auto=no "$1" >"$D/profile-callgrind-varied.txt" 2>&1
	echo "Where sframebt's instructions go on varied stacks (main build, depth 32, $3 frames; self"
	echo "cost per frame, \`$D/profile-callgrind-varied.txt\`):"
	echo
	self_cost_table "$D/profile-callgrind-varied.txt" Ir/frame "$2" "$3" %.1f
	echo
	# The memo lookup behind a missed hint: calls a walk and instructions a
	# call with what it calls (callgrind's inclusive cost over its calls),
	# at each depth on the main build (no per-walk confirmation of the
	# object) and at depth 32 on the others.
	echo "The memo lookup by return address that the walk makes when a memo entry's hint misses"
	echo "(also at a walk's first frame and where it crosses into another object): calls a walk, and"
	echo "instructions a call with what it calls (inclusive cost / calls):"
	echo
	echo "| build | d | frames | function | calls a walk | Ir a call |"
	echo "|---|---:|---:|---|---:|---:|"
	awk '$1 == "var-sframebt" { print $2, $3, $4, $5, $7 }' "$D/cg/summary.txt" |
		while read -r b d it fr f; do
			[ "$b" = main ] || [ "$d" = 32 ] || continue
			callgrind_annotate --inclusive=yes --tree=calling --threshold=100 --auto=no "$f" 2>/dev/null |
				awk -v b="$b" -v d="$d" -v it="$it" -v fr="$fr" -v re="$MEMO_FN_RE" '
					/^ *[0-9,]+ \( *[0-9.]+%\) +> / {
						fn = $0; sub(/^.*> +/, "", fn); sub(/ \(.*/, "", fn); sub(/.*:/, "", fn)
						if (fn !~ ("^" re "(\\.[a-z]+\\.[0-9]+)*$") || fn ~ /exact/) next
						ir = $1; gsub(/,/, "", ir); c = $0; sub(/.*> [^(]*\(/, "", c); sub(/x\).*/, "", c)
						gsub(/,/, "", c); inc += ir; calls += c; name = fn }
					END {
						if (calls) printf "| %s | %s | %s | %s() | %.1f | %.1f |\n", b, d, fr, name, calls / it, inc / calls
						else printf "| %s | %s | %s | not found | - | - |\n", b, d, fr
					}'
		done >"$D/cg/memo-miss.txt"
	cat "$D/cg/memo-miss.txt"
	echo
	awk -F'|' '
		{ for (i = 2; i <= NF; i++) gsub(/^ +| +$/, "", $i) }
		$2 == "main" && $3 == 128 { v = $7; fn = $5 }
		END {
			if (v == "" || v == "-") print "GOAL: MISSED: a memo lookup missing its hint <= 25 instructions (main build, depth 128: not measured)"
			else printf "GOAL: %s: a memo lookup missing its hint <= 25 instructions (%s, callgrind inclusive cost / calls, main build, depth 128: %s)\n", v + 0 <= 25 ? "MET" : "MISSED", fn, v
		}' "$D/cg/memo-miss.txt"
	echo
}
# sfbench issues callgrind client requests when <valgrind/callgrind.h> was
# there to compile them in.
if command -v valgrind >/dev/null 2>&1 && [ -e /usr/include/valgrind/callgrind.h ]; then
	log "instruction counts (valgrind --tool=callgrind)"
	rm -rf "$D/cg"
	mkdir -p "$D/cg"
	if valgrind --tool=callgrind --collect-atstart=no --dump-instr=yes \
		--callgrind-out-file="$D/cg/cg.out" "$BIN" callgrind >"$D/cg/log" 2>&1; then
		# One line per dump, in dump order: METHOD BUILD DEPTH ITERS IR FILE
		for f in "$D"/cg/cg.out.*; do
			awk '/^part:/ { p = $2 }
			     /^desc: Trigger: Client Request: sfb:/ { sub(/.*Request: sfb:/, ""); n = $0 }
			     /^summary:/ { s = $2 }
			     END { if (n != "") { gsub(/:/, " ", n); print p, n, s, FILENAME } }' "$f"
		done | sort -n | cut -d' ' -f2- >"$D/cg/summary.txt"
		{
			echo "### Instructions per backtrace (callgrind)"
			echo
			echo "\`valgrind --tool=callgrind\`, collection switched on only around each batch (500 backtraces;"
			echo "100 for libunwind and glibc), minus an empty call in the same loop. Ir = instructions executed"
			echo "in user space (syscalls' kernel work is not counted)."
			echo
			echo "| method | build | d=8 Ir/bt | Ir/frame | d=32 Ir/bt | Ir/frame | d=128 Ir/bt | Ir/frame |"
			echo "|---|---|---:|---:|---:|---:|---:|---:|"
			awk '
				$1 == "lookup" || $1 ~ /^(nat|var)-/ { next }
				{ m = $1; b = $2; d = $3; it = $4; ir = $5
				  per[m, b, d] = ir / it
				  if (!((m, b) in seen)) { seen[m, b] = 1; order[++n] = m SUBSEP b } }
				END {
					name["fp"] = "frame-pointer walk"; name["sframebt"] = "sframebt"
					name["unw"] = "libunwind unw_backtrace"; name["glibc"] = "glibc backtrace()"
					for (i = 1; i <= n; i++) {
						split(order[i], mb, SUBSEP)
						if (mb[1] == "empty") continue
						line = "| " name[mb[1]] " | " mb[2] " |"
						split("8 32 128", ds, " ")
						for (j = 1; j <= 3; j++) {
							v = per[mb[1], mb[2], ds[j]] - per["empty", "fp", ds[j]]
							line = line sprintf(" %.0f | %.1f |", v, v / ds[j])
						}
						print line
					}
				}' "$D/cg/summary.txt"
			echo
			echo "FDE lookups (the PCs of \`sfbench lookup\`), instructions per lookup:"
			echo
			echo "| object | coarse index buckets | Ir/lookup |"
			echo "|---|---|---:|"
			awk '$1 == "lookup" { b = $2; sub(/^b/, "", b)
				if (b == "real") printf "| libbench-real.so (real code) | 256 | %.0f |\n", $5 / $4
				else printf "| libbench-big.so | %s | %.0f |\n", b == "0" ? "none" : b, $5 / $4 }' \
				"$D/cg/summary.txt"
			echo
			echo "Walks to the natural end (depth 32, a 256-entry buffer, through libc to _start; the"
			echo "frame-pointer walk to where frame records end), instructions per call and per frame"
			echo "returned, minus the same empty call:"
			echo
			echo "| method | build | frames | Ir/call | Ir/frame |"
			echo "|---|---|---:|---:|---:|"
			awk '
				$1 == "nat-empty" { e = $5 / $4 }
				$1 ~ /^nat-/ && $1 != "nat-empty" { n++; m[n] = $1; b[n] = $2; f[n] = $3; v[n] = $5 / $4 }
				END {
					name["nat-fp"] = "frame-pointer walk"; name["nat-sframebt"] = "sframebt"
					name["nat-unw"] = "libunwind unw_backtrace"; name["nat-glibc"] = "glibc backtrace()"
					name["nat-sframebt-exact"] = "sframebt, a buffer of exactly the frames (to _start)"
					for (i = 1; i <= n; i++)
						printf "| %s | %s | %d | %.0f | %.1f |\n", name[m[i]], b[i], f[i], v[i] - e, (v[i] - e) / f[i]
				}' "$D/cg/summary.txt"
			echo
		} >"$cg"
		# Per-function profile of sframebt at depth 32 (the newest SFrame
		# version built).
		pb=v1
		[ -e "$D/libbench-v2.so" ] && pb=v2
		[ -e "$D/libbench-v3.so" ] && pb=v3
		pf=$(awk -v b=$pb '$1 == "sframebt" && $2 == b && $3 == 32 { print $6 }' "$D/cg/summary.txt")
		pit=$(awk -v b=$pb '$1 == "sframebt" && $2 == b && $3 == 32 { print $4 }' "$D/cg/summary.txt")
		if [ -n "$pf" ]; then
			callgrind_annotate --threshold=100 --auto=no "$pf" >"$prof" 2>&1
			callgrind_annotate --threshold=100 --auto=yes --context=2 "$pf" >"$D/profile-callgrind-source.txt" 2>&1
			{
				echo "Where sframebt's instructions go ($pb build, depth 32; self cost per frame,"
				echo "functions as compiled: static helpers are often inlined into their callers; the full"
				echo "listing with per-line counts is in \`$D/profile-callgrind-source.txt\`):"
				echo
				self_cost_table "$prof" Ir/frame "$pit" 32 %.1f
				echo
			} >>"$cg"
		fi
		# The same for the natural-end walk of the main build: where the
		# frames past the chain (libc's CFI rows, _start's) go.
		# shellcheck disable=SC2046 # three words: dump file, iterations, frames
		set -- $(awk '$1 == "nat-sframebt" && $2 == "main" { print $6, $4, $3 }' "$D/cg/summary.txt")
		if [ $# -eq 3 ]; then
			callgrind_annotate --threshold=100 --auto=no "$1" >"$D/profile-callgrind-natural.txt" 2>&1
			{
				echo "Where sframebt's instructions go in the natural-end walk (main build, $3 frames; self"
				echo "cost per call, \`$D/profile-callgrind-natural.txt\`):"
				echo
				self_cost_table "$D/profile-callgrind-natural.txt" Ir/call "$2" 1 %.0f
				echo
				# Calls of the unmemoised paths and their inclusive cost.
				echo "Calls past the memo in each natural-end walk (the general step, the SFrame lookup"
				echo "and the CFI lookup), with the instructions of what they call:"
				echo
				callgrind_annotate --inclusive=yes --tree=calling --threshold=100 --auto=no "$1" 2>/dev/null |
					awk -v it="$2" '
						/> .*:(general_step|sfb_cfi_lookup|sfb_lookup) \(/ {
							ir = $1; gsub(/,/, "", ir); c = $0; sub(/.*\(/, "", c); sub(/x\).*/, "", c)
							fn = $0; sub(/^.*> +/, "", fn); sub(/ \(.*/, "", fn); sub(/.*:/, "", fn)
							inc[fn] += ir; calls[fn] += c }
						END {
							for (fn in calls)
								printf "- %s(): %.1f calls a walk, %.0f Ir a walk with what it calls\n", fn, calls[fn] / it, inc[fn] / it
						}' | sort
				echo
			} >>"$cg"
		fi
		varied_callgrind >>"$cg"
	else
		printf '### Instructions per backtrace (callgrind)\n\nvalgrind run failed: see %s\n\n' "$D/cg/log" >"$cg"
	fi
else
	printf '### Instructions per backtrace (callgrind)\n\nvalgrind or <valgrind/callgrind.h> missing: not measured.\n\n' >"$cg"
fi

# ---- 5. perf -------------------------------------------------------------------
pm=$D/perf.md
: >"$pm"
if command -v perf >/dev/null 2>&1; then
	pb=v1
	[ -e "$D/libbench-v3.so" ] && pb=v3
	if perf record -q -e cpu-clock -F 20000 -o "$D/perf.data" "$BIN" spin sframebt $pb 32 2 \
		>/dev/null 2>"$D/perf.err"; then
		log "perf profile of sframebt ($pb, depth 32)"
		perf report -i "$D/perf.data" --stdio --no-children --sort symbol 2>/dev/null |
			grep -v '^#' | grep -v '^$' >"$D/profile-perf.txt"
		for s in sfb_lookup sfb_walk parse_fre sfb_find_fde; do
			perf annotate -i "$D/perf.data" --stdio -s "$s" 2>/dev/null
		done >"$D/profile-perf-annotate.txt"
		{
			echo "perf record -e cpu-clock (sframebt, $pb, depth 32, 2 s; the VM has no hardware counters),"
			echo "self time by symbol (\`$D/profile-perf.txt\`, annotated: \`$D/profile-perf-annotate.txt\`):"
			echo
			echo "| symbol | share |"
			echo "|---|---:|"
			awk 'NF >= 3 && $1 ~ /%$/ && ++k <= 10 { printf "| %s | %s |\n", $3, $1 }' "$D/profile-perf.txt"
			echo
		} >"$pm"
	fi
fi

# ---- 6. Results file ------------------------------------------------------------
log "writing $OUT"
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>/dev/null | head -1)
ccv=$($CC --version 2>/dev/null | head -1)
asv() { "$1" --version 2>/dev/null | head -1 | sed 's/.* //'; }
bu="host $(asv as) (V1)"
have_tc 2 && bu="$bu, $(asv "$SFB_TC/bin/x86_64-trixie/as") (V2)"
have_tc 3 && bu="$bu, $(asv "$SFB_TC/bin/x86_64-sid/as") (V3)"
pkgv() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null || echo '?'; }
rev=$(git rev-parse --short HEAD 2>/dev/null || echo 'unknown')
[ -n "$(git status --porcelain -- src backtrace.h 2>/dev/null)" ] && rev="$rev + uncommitted changes in src/"
{
	echo "## Benchmark results"
	echo
	echo "Written by \`make bench\` ($(date -u '+%Y-%m-%d %H:%M UTC'), $(($(date +%s) - start)) s)."
	echo
	echo "- sframebt: $rev"
	echo "- CPU: $cpu, $ncpu CPUs online"
	echo "- Kernel: $(uname -sr); $glibc"
	echo "- Compiler: $ccv; library CFLAGS \`${BENCH_CFLAGS:-?}\` (src/walk/walk.c with -fomit-frame-pointer, the rest with -fno-omit-frame-pointer)"
	echo "- Binutils: $bu"
	echo "- libunwind $(pkgv libunwind-dev), valgrind $(pkgv valgrind), strace $(pkgv strace)"
	[ -n "$skipped" ] && echo "- **V2/V3 skipped: toolchain unavailable** (${skipped# })"
	echo
	echo "### Targets"
	echo
	cat "$D/time.md" "$D/async.md" "$D/async-solo.md" "$D/firstcall.md" "$D/natural.md" \
		"$D/varied.md" "$real" "$sc" |
		sed -n 's/^TARGET: \([A-Z]*\): \(.*\)/- **\1** \2/p'
	echo
	echo "### Walker targets"
	echo
	cat "$D/time.md" "$D/varied.md" "$real" "$cg" |
		sed -n 's/^GOAL: \([A-Z]*\): \(.*\)/- **\1** \2/p'
	echo
	for f in "$D/time.md" "$D/async.md" "$D/async-solo.md" "$D/lookup.md" "$D/firstcall.md" \
		"$D/natural.md" "$D/varied.md" "$real" "$sc" "$cg" "$pm"; do
		grep -v '^TARGET: \|^GOAL: ' "$f"
	done
} >"$OUT"
cat "$OUT"
# The figures in docs/SPEED.md and README.md are always the last run's.
sh tests/bench/speed-md.sh "$OUT" docs/SPEED.md README.md || log "speed-md.sh failed"
log "done: $OUT"

# ---- 7. JIT registration --------------------------------------------------------
# tests/bench/jit_cost.c: CPU time per call (medians of rounds) and, under
# callgrind, instructions per call; appended to the results file (the
# figures in docs/SPEED.md's "JIT registration" are copied from it).
jm=$D/jit.md
JIT_BIN=$D/jit_cost
if [ -x "$JIT_BIN" ]; then
	log "JIT registration (jit_cost)"
	{
		echo "### JIT registration"
		echo
		echo "\`jit_cost time\`: 100,000 functions of 32 bytes registered one FDE each (each with its own"
		echo "CIE, as LLVM's lazy JIT registers them), CPU time per call, median of 7 rounds."
		echo
		"$JIT_BIN" time 2>&1 || echo "**jit_cost time failed** (exit $?)"
		echo
	} >"$jm"
	if command -v valgrind >/dev/null 2>&1; then
		rm -rf "$D/cg-jit"
		mkdir -p "$D/cg-jit"
		if valgrind --tool=callgrind --collect-atstart=no \
			--callgrind-out-file="$D/cg-jit/cg.out" "$JIT_BIN" callgrind >"$D/cg-jit/log" 2>&1; then
			{
				echo "Instructions per call (\`valgrind --tool=callgrind\`, collection on around each batch):"
				echo
				echo "| batch | calls | Ir per call |"
				echo "|---|---:|---:|"
				# In dump order (cg.out.1, .2, ..., .10).
				for f in $(ls "$D"/cg-jit/cg.out.* | awk -F. '{ print $NF, $0 }' | sort -n | cut -d" " -f2-); do
					awk '/^desc: Trigger: Client Request: jit:/ { sub(/.*Request: jit:/, ""); n = $0 }
					     /^summary:/ { s = $2 }
					     END { if (n != "" && n !~ /^warm-up/) { split(n, a, ":"); printf "| %s | %s | %.0f |\n", a[1], a[2], s / a[2] } }' "$f"
				done
				echo
			} >>"$jm"
		else
			echo "callgrind run failed: see $D/cg-jit/log" >>"$jm"
		fi
	fi
	sed -n 's/^\(TARGET\|GOAL\): \([A-Z]*\): \(.*\)/- **\2** \3/p' "$jm" >>"$OUT"
	grep -v '^TARGET: \|^GOAL: ' "$jm" >>"$OUT"
	grep -v '^TARGET: \|^GOAL: ' "$jm"
	sed -n 's/^\(TARGET\|GOAL\): \([A-Z]*\): \(.*\)/- **\2** \3/p' "$jm"
fi

# ---- The crash report with source lines -------------------------------------
# tests/bench/report_cost.c: CPU time of sframe_write_crash_report() with
# file:line and inlined frames under each frame (libc's from its debug
# file), against the same PCs symbolized one by one; appended to the
# results file.
rcm=$D/report-lines.md
if [ -x "$D/report_cost" ]; then
	log "crash report with source lines (report_cost)"
	"$D/report_cost" >"$rcm" 2>&1 || echo "**report_cost failed** (exit $?)" >>"$rcm"
	{
		echo
		sed -n 's/^TARGET: \([A-Z]*\): \(.*\)/- **\1** \2/p' "$rcm"
		echo
		grep -v '^TARGET: ' "$rcm"
	} | tee -a "$OUT"
fi
