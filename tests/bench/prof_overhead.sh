#!/bin/sh
# The profiler's overhead (not a timed test): lua5.4, python3 and sqlite3
# workloads of about SCALE seconds each (default 1), run RUNS times
# (default 7) without a profiler, under sframe-prof at 99 Hz and at 1 kHz,
# and under `perf record --call-graph dwarf` at 1 kHz (cpu-clock, where
# perf works); prints the median and the minimum CPU time of each (perf's
# own included), the overhead against no profiler, the median of the
# rounds' paired differences, the profile's size and how many of its
# stacks are whole (rooted at _start or clone3).
# With SIMULTANEOUS=1 it measures only the other way: each round runs a
# workload without a profiler on one CPU and under sframe-prof on the
# other at the same time, then again with the CPUs swapped; a round's
# overhead is the geometric mean of its two ratios of CPU time.  Both runs
# of a pair see the same machine (neighbours, frequency), which sequential
# runs do not, and the swap cancels what differs between the two CPUs.
# Usage: sh tests/bench/prof_overhead.sh [BUILD_DIR [RUNS [SCALE]]]
B=${1:-build}
RUNS=${2:-7}
SCALE=${3:-1}
case $B in /*) ;; *) B=$PWD/$B ;; esac
P=$B/sframe-prof
[ -x "$P" ] || { echo "prof_overhead: $P not built (make B=$B examples)" >&2; exit 1; }
. tests/lib/install-deps.sh
install_deps lua5.4 python3 sqlite3 >/dev/null
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/work.lua" <<EOF
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t, f = {}, 0
for r = 1, $SCALE do
  f = fib(34)
  for i = 1, 600000 do t[#t + 1] = tostring(i * 7) end
end
print(f, #table.concat(t, ","))
EOF
cat >"$tmp/work.py" <<EOF
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
d = {}
for r in range($SCALE):
    f = fib(31)
    for i in range(900000):
        d[str(r * 900000 + i)] = i * 7
print(f, len(d))
EOF
SQL="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT $((2500000 * SCALE)))
SELECT sum(x * x % 7), count(DISTINCT x % 1000) FROM c;"

# run NAME: the workload NAME, its output discarded.
run() {
	case $1 in
	lua) lua5.4 "$tmp/work.lua" ;;
	python3) /usr/bin/python3 "$tmp/work.py" ;;
	sqlite3) sqlite3 :memory: "$SQL" ;;
	esac >/dev/null
}

median() { LC_ALL=C sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }
minimum() { LC_ALL=C sort -n | awk 'NR == 1 { print $1 } END { if (!NR) print "-" }'; }

# time_run NAME MODE: one run's CPU time (user + system, the process and
# its children) in ms: on a shared machine wall time measures the
# neighbours as much as the profiler.  The summaries of the workload
# process (the largest of the run) are kept as $tmp/sum.MODE.NAME.N.
time_run() {
	sh=". '$tmp/run.sh'; run $1"
	T="/usr/bin/time -f %U+%S -o $tmp/t"
	rm -f "$tmp"/p.*
	case $2 in
	none) $T sh -c "$sh" ;;
	99 | 1000) SFRAME_PROF_QUIET=1 $T "$P" -F "$2" -o "$tmp/p.pb.gz" sh -c "$sh" ;;
	perf) $T perf record -q -e cpu-clock -F 1000 --call-graph dwarf \
		-o "$tmp/perf.$1.data" sh -c "$sh" >/dev/null 2>&1 ;;
	esac
	case $2 in
	99 | 1000)
		n=$(ls "$tmp"/sum.$2.$1.* 2>/dev/null | wc -l)
		cp "$(ls -S "$tmp"/p.*summary.txt | head -n 1)" "$tmp/sum.$2.$1.$n"
		cp "$(ls -S "$tmp"/p.*pb.gz | head -n 1)" "$tmp/prof.$2.$1.pb.gz" ;;
	esac
	awk -F+ '{ printf "%d\n", 1000 * ($1 + $2) }' "$tmp/t"
}

# The workloads as a file the profiled shell sources (sh itself is then
# profiled too, as its child is: the profile of interest is the child's).
{
	echo "tmp='$tmp'"
	echo "SQL='$SQL'"
	sed -n '/^run() {/,/^}/p' "$0"
} >"$tmp/run.sh"

# pair_run NAME HZ CPU_NONE CPU_PROF: "NONE_MS PROF_MS", the two run at once.
pair_run() {
	d=$tmp/pair
	rm -rf "$d" && mkdir -p "$d"
	sh=". '$tmp/run.sh'; run $1"
	taskset -c "$3" /usr/bin/time -f %U+%S -o "$d/t.none" sh -c "$sh" &
	SFRAME_PROF_QUIET=1 taskset -c "$4" /usr/bin/time -f %U+%S -o "$d/t.prof" \
		"$P" -F "$2" -o "$d/p.pb.gz" sh -c "$sh" &
	wait
	cat "$d/t.none" "$d/t.prof" | awk -F+ '{ printf "%d ", 1000 * ($1 + $2) } END { print "" }'
}

if [ "${SIMULTANEOUS:-0}" = 1 ]; then
	[ "$(nproc)" -ge 2 ] || { echo "prof_overhead: SIMULTANEOUS needs 2 CPUs" >&2; exit 1; }
	echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg); CPU ms; $RUNS rounds, each a pair on CPUs 0,1 and one on 1,0"
	printf '%-8s %6s %9s %9s  %s\n' workload hz median min "rounds (%)"
	for w in lua python3 sqlite3; do
		run "$w"
		for hz in 99 1000; do
			: >"$tmp/pairs"
			for i in $(seq "$RUNS"); do
				a=$(pair_run "$w" "$hz" 0 1)
				b=$(pair_run "$w" "$hz" 1 0)
				echo "$a $b" | awk '{ printf "%.2f\n", 100 * (sqrt(($2 / $1) * ($4 / $3)) - 1) }' >>"$tmp/pairs"
			done
			printf '%-8s %6s %8s%% %8s%%  %s\n' "$w" "$hz" "$(median <"$tmp/pairs")" \
				"$(minimum <"$tmp/pairs")" "$(tr '\n' ' ' <"$tmp/pairs")"
		done
	done
	exit 0
fi

perf_ok=0
perf record -q -e cpu-clock -o "$tmp/probe.data" true >/dev/null 2>&1 && perf_ok=1

# Each workload gets two lines: the medians of the runs, and their
# minimums ("min"): on a shared machine the neighbours only ever add CPU
# time (a busy sibling hyperthread, caches, frequency), so the fastest
# run of each mode is the one least disturbed.
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs; CPU ms, medians and minimums of $RUNS"
printf '%-8s %9s %9s %7s %9s %7s %9s %7s %8s %8s\n' workload none_ms 99Hz_ms over \
	1kHz_ms over perf_ms over 1k_hndlr 1k_exit
modes="none 99 1000"
[ "$perf_ok" = 1 ] && modes="$modes perf"
for w in lua python3 sqlite3; do
	run "$w" # warm the page cache
	# Modes interleaved, so that a change in the machine's load falls on
	# all of them alike.
	for i in $(seq "$RUNS"); do
		for m in $modes; do
			time_run "$w" "$m" >>"$tmp/ms.$m.$w"
		done
	done
	pct() { [ "$1" = - ] && { echo -; return; }; awk -v a="$1" -v b="$base" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'; }
	# The profiler's own account (its summary's cost line): the share of
	# CPU time in the handler, and the CPU milliseconds spent at exit.
	hnd=$(cat "$tmp"/sum.1000.$w.* | sed -n 's/.*us each, \([0-9.]*\)% of.*/\1/p' | median)
	ex=$(cat "$tmp"/sum.1000.$w.* | sed -n 's/.*), \([0-9.]*\) ms of CPU at exit.*/\1/p' | median)
	for stat in median minimum; do
		base=$($stat <"$tmp/ms.none.$w")
		t99=$($stat <"$tmp/ms.99.$w")
		t1k=$($stat <"$tmp/ms.1000.$w")
		tp=-
		[ "$perf_ok" = 1 ] && tp=$($stat <"$tmp/ms.perf.$w")
		name=$w
		[ $stat = minimum ] && name="  min" hnd= ex=
		printf '%-8s %9s %9s %7s %9s %7s %9s %7s %8s %8s\n' "$name" "$base" "$t99" "$(pct "$t99")" \
			"$t1k" "$(pct "$t1k")" "$tp" "$(pct "$tp")" "${hnd:+$hnd%}" "${ex:+${ex}ms}"
	done
	# Paired: a round runs every mode back to back, so the median of the
	# rounds' own differences leaves out the drift of the machine's speed
	# from round to round that the medians above carry.
	paired() { paste "$tmp/ms.none.$w" "$tmp/ms.$1.$w" |
		awk '{ printf "%.2f\n", 100 * ($2 - $1) / $1 }' | median |
		awk '{ printf "%+.1f%%", $1 }'; }
	pp=-
	[ "$perf_ok" = 1 ] && pp=$(paired perf)
	printf '%-8s %9s %9s %7s %9s %7s %9s %7s\n' "  paired" "" "" "$(paired 99)" "" "$(paired 1000)" "" "$pp"
done

# Size and completeness of the last 1 kHz run of each: sframe-prof's file
# of the workload process against perf.data; whole stacks are the ones
# rooted at _start or clone3.
echo
printf '%-8s %12s %12s %12s %12s\n' workload sfp_bytes sfp_whole perf_bytes perf_whole
for w in lua python3 sqlite3; do
	f=$tmp/prof.1000.$w.pb.gz
	s=$(ls "$tmp"/sum.1000.$w.* | tail -n 1)
	sb=$(stat -c %s "$f" 2>/dev/null || echo -)
	whole=$(awk '/samples (from|over)/ { n = $2 } /stacks truncated/ { t = $2 } END { if (n) printf "%.1f%%", 100 * (n - t) / n; else print "-" }' "$s")
	pb=- pw=-
	if [ "$perf_ok" = 1 ] && [ -f "$tmp/perf.$w.data" ]; then
		pb=$(stat -c %s "$tmp/perf.$w.data")
		pw=$(perf script -i "$tmp/perf.$w.data" -F comm,ip,sym 2>/dev/null | awk -v w="$w" '
			/^[^ \t]/ { if (inside && keep) { n++; if (last ~ /_start|clone3|start_thread/) ok++ }
				    inside = 1; keep = ($1 != "sh"); last = ""; next }
			/^[ \t]+[0-9a-f]+ / { last = $2; next }
			END { if (inside && keep) { n++; if (last ~ /_start|clone3|start_thread/) ok++ }
			      if (n) printf "%.1f%%", 100 * ok / n; else print "-" }')
	fi
	printf '%-8s %12s %12s %12s %12s\n' "$w" "$sb" "$whole" "$pb" "$pw"
done
