#!/bin/sh
# examples/crash-handler: each crash kind prints a header naming the
# signal, a symbolized report whose frames come in call order across the
# executable and libcrashdemo.so (static functions included), a "# stopped:"
# line, and the process still dies from the original signal.
. tests/check.sh
prog=$B/crash-handler
ulimit -c 0 2>/dev/null # the crashes are on purpose: no core files

if [ ! -x "$prog" ]; then
	notok "$prog not built (make examples)"
	exit 1
fi

# crash KIND [VAR=VALUE...]: runs the demo (under $SFB_WRAP, e.g.
# valgrind, if set) with the variables added to its environment, leaving
# its stderr in $tmp/KIND and its status (128+signal when killed, as the
# shell reports it) in $rc.
crash() {
	kind=$1
	shift
	env "$@" timeout 120 ${SFB_WRAP:-} "$prog" "$kind" >"$tmp/$kind" 2>&1
	rc=$?
	echo "--- crash-handler $kind${*:+ $*}: status $rc"
	cat "$tmp/$kind"
}

not_at_call() { grep -q '^#0 ' "$1" && ! frame0_is_call "$1"; }

under_valgrind() { case "${SFB_WRAP:-}" in *valgrind*) return 0 ;; esac; return 1; }

# frame0_is_call FILE: the report's frame #0 is a call instruction.
frame0_is_call() {
	loc=$(sed -n 's/^#0 0x[0-9a-f]* in .* (\(.*\)+\(0x[0-9a-f]*\))$/\1 \2/p' "$1")
	[ -n "$loc" ] || return 1
	obj=${loc% *}
	off=${loc##* }
	objdump -d --no-show-raw-insn --start-address="$off" --stop-address=$((off + 16)) \
		"$obj" | grep -E -m1 '^ *[0-9a-f]+:' | grep -Eq ':[[:space:]]+call'
}

# in_order FILE PATTERN...: the frame lines (#N ...) contain the patterns
# on consecutive frames, the first one on frame #0.
in_order() {
	f=$1
	shift
	pats=$1
	shift
	for p in "$@"; do pats="$pats|$p"; done
	grep '^#[0-9]' "$f" | awk -v pats="$pats" '
		BEGIN { n = split(pats, p, "|") }
		NR <= n && index($0, p[NR]) == 0 { bad = 1 }
		END { exit (bad || NR < n) }'
}

stopped_line() { grep -Eq '^# stopped: [a-z-]+' "$1"; }

# (a) SIGSEGV in a leaf of the shared object, called through a static
# function of the .so, from a static function of the executable.
crash segv
check "segv: killed by SIGSEGV (status 139)" [ "$rc" -eq 139 ]
check "segv: header names the signal and fault address" \
	grep -q '^\*\*\* SIGSEGV (SEGV_MAPERR) fault address 0x10, pid [0-9]*, tid [0-9]* \*\*\*$' "$tmp/segv"
check "segv: frames in call order across exe and .so, static functions named" \
	in_order "$tmp/segv" \
	"in crash_leaf+0x" "in static_helper+0x" "in crashdemo_run+0x" \
	"in run_scenario+0x" "in main+0x"
check "segv: .so frames name libcrashdemo.so with an offset" \
	grep -Eq '^#0 0x[0-9a-f]+ in crash_leaf\+0x[0-9a-f]+ \(.*/libcrashdemo\.so\+0x[0-9a-f]+\)$' "$tmp/segv"
check "segv: exe frames name the executable" \
	grep -Eq '^#4 0x[0-9a-f]+ in main\+0x[0-9a-f]+ \(.*/crash-handler\+0x[0-9a-f]+\)$' "$tmp/segv"
check "segv: report ends with the stop reason" stopped_line "$tmp/segv"

# The other signals: right exit status, header, and the same chain.
for kind_sig in fpe:SIGFPE:136 ill:SIGILL:132 bus:SIGBUS:135; do
	kind=${kind_sig%%:*}
	rest=${kind_sig#*:}
	sig=${rest%%:*}
	status=${rest#*:}
	crash "$kind"
	check "$kind: killed by $sig (status $status)" [ "$rc" -eq "$status" ]
	check "$kind: header names $sig" grep -q "^\*\*\* $sig (" "$tmp/$kind"
	# gcc may move the trap into crash_leaf.cold: match the prefix.
	check "$kind: frames in call order" in_order "$tmp/$kind" \
		"in crash_leaf" "in static_helper+0x" "in crashdemo_run+0x" \
		"in run_scenario+0x" "in main+0x"
done

# abort(): the signal is raised inside libc, which has no .sframe, so the
# report is frame #0 in libc and the stop reason; the status must be 134.
crash abort
check "abort: killed by SIGABRT (status 134)" [ "$rc" -eq 134 ]
check "abort: header names SIGABRT and the sender" \
	grep -q '^\*\*\* SIGABRT (SI_TKILL) sent by pid' "$tmp/abort"
check "abort: frame #0 and a stop reason" \
	sh -c "grep -q '^#0 0x' '$tmp/abort' && grep -Eq '^# stopped: [a-z-]+' '$tmp/abort'"

# (b) A smashed stack: the return addresses are garbage.  The handler
# still reports frame #0 and why the walk stopped, and the process dies
# from SIGSEGV rather than hanging or crashing in the handler.
crash stack-smash
check "stack-smash: killed by SIGSEGV, no hang (status 139)" [ "$rc" -eq 139 ]
check "stack-smash: frame #0 is the smashing function" \
	grep -Eq '^#0 0x[0-9a-f]+ in smash_stack_and_fault\+0x' "$tmp/stack-smash"
check "stack-smash: a stop reason other than outermost" \
	sh -c "grep -E '^# stopped: [a-z-]+' '$tmp/stack-smash' | grep -qv outermost"
check "stack-smash: no frame taken from the garbage" \
	sh -c "! grep -q '^#[0-9]* 0x4141414141414141' '$tmp/stack-smash'"

# A stack overflow: only possible to report from the alternate stack.
# The fault lands on a new frame's first store or, for one stack start in
# 17 (recurse_forever's frames are 272 bytes), on the call whose push
# crosses into the guard page.  valgrind gives that call's context with SP
# already lowered by the push, 8 below the hardware's, and the walk reads
# the return address 8 bytes off (tests/t_overflow.c covers that case).
# The report is then taken from a run whose larger environment moves the
# stack by less than a frame, putting the fault on a store.
crash overflow
check "overflow: killed by SIGSEGV (status 139)" [ "$rc" -eq 139 ]
if under_valgrind && frame0_is_call "$tmp/overflow"; then
	echo "# overflow: valgrind's context at a faulting call; the stack moved, again"
	crash overflow SFB_STACK_MOVED=0123456789abcdef
	check "overflow (stack moved): killed by SIGSEGV (status 139)" [ "$rc" -eq 139 ]
	check "overflow (stack moved): the fault is not on a call" not_at_call "$tmp/overflow"
fi
check "overflow: report from the alternate stack, depth-limited" \
	sh -c "grep -q '^#0 0x[0-9a-f]* in recurse_forever' '$tmp/overflow' &&
	       grep -q '^# stopped: buffer-full' '$tmp/overflow'"
exit 0
