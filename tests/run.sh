#!/bin/sh
# Runs every test program (build/tests/t_*) and script (tests/*/t_*.sh).
# Each prints "ok - ..." / "not ok - ..." lines; a program that exits
# non-zero without a "not ok" line (a crash, a timeout) counts as one
# failure.  Ends with "N passed, N failed".
# Usage: tests/run.sh BUILD_DIR ["name-substring ..."]
# SFB_WRAP, if set, prefixes every test program (e.g. valgrind); test
# scripts see it in their environment and apply it to what they run.
# SFB_SKIP, a space-separated list of test names to leave out of this run.
B=${1:-build}
filter=${2:-}
pass=0
fail=0
logdir=$B/test-logs
mkdir -p "$logdir"
: "${SFB_TEST_TIMEOUT:=300}"
for t in "$B"/tests/t_* tests/*/t_*.sh; do
	[ -e "$t" ] || continue
	case "$t" in *.c|*.o|*.d) continue ;; esac
	name=$(basename "$t")
	if [ -n "$filter" ]; then
		keep=no
		for f in $filter; do
			case "$name" in *"$f"*) keep=yes ;; esac
		done
		[ "$keep" = yes ] || continue
	fi
	case " ${SFB_SKIP:-} " in *" $name "*) echo "SKIP $name"; continue ;; esac
	log=$logdir/$name.log
	t0=$(date +%s)
	case "$t" in
	*.sh) SFB_BUILD=$B timeout "$SFB_TEST_TIMEOUT" sh "$t" >"$log" 2>&1 ;;
	*) SFB_BUILD=$B timeout "$SFB_TEST_TIMEOUT" ${SFB_WRAP:-} "$t" >"$log" 2>&1 ;;
	esac
	rc=$?
	secs=$(($(date +%s) - t0))
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$log"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$f" -ne 0 ]; then
		echo "FAIL $name ($p passed, $f failed, ${secs} s) — $log:"
		grep '^not ok - ' "$log" | head -20
		tail -5 "$log"
	else
		echo "PASS $name ($p checks, ${secs} s)"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
