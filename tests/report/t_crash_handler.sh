#!/bin/sh
# examples/crash-handler: each crash kind prints a header naming the
# signal, a symbolized report whose frames come in call order across the
# executable and libcrashdemo.so (static functions included), a "# stopped:"
# line, and the process still dies from the original signal.
. tests/lib/check.sh
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

under_valgrind() { case "${SFB_WRAP:-}" in *valgrind*) return 0 ;; esac; return 1; }

# How a crash must end, the AddressSanitizer build's included.
. tests/lib/crash_status.sh
asan_of "$prog"

# frame0_is_call FILE: the report's frame #0 is a call instruction.
frame0_is_call() {
	loc=$(sed -n 's/^#0 0x[0-9a-f]* in .* (\(.*\)+\(0x[0-9a-f]*\))$/\1 \2/p' "$1")
	[ -n "$loc" ] || return 1
	obj=${loc% *}
	off=${loc##* }
	objdump -d --no-show-raw-insn --start-address="$off" --stop-address=$((off + 16)) \
		"$obj" | grep -E -m1 '^ *[0-9a-f]+:' | grep -Eq ':[[:space:]]+call'
}
not_at_call() { grep -q '^#0 ' "$1" && ! frame0_is_call "$1"; }

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

# The names of functions come from nm, not from sframebt's symbolizer:
# from the object's detached debug symbols (/usr/lib/debug/.build-id,
# e.g. libc6-dbg for Debian's stripped libc) when installed, else from
# its own .symtab and .dynsym.
. tests/lib/install-deps.sh
install_deps libc6-dbg binutils

. tests/lib/symbols.sh

# whole_stack FILE SPEC...: the report's frames are exactly SPEC..., #0
# first, and the walk stopped "outermost".  A SPEC "@OBJECT:GLOB" is a
# frame in the object whose file name is OBJECT, at an offset that a
# function named GLOB covers (the call, pc - 1, for frames after #0);
# "@OBJECT:" any frame in OBJECT.  A frame's mismatch is printed.
whole_stack() {
	f=$1
	shift
	n=0
	for spec in "$@"; do
		line=$(grep "^#$n 0x" "$f")
		obj=${spec#@}
		obj=${obj%%:*}
		want=${spec#*:}
		loc=$(echo "$line" | sed -n 's/^#[0-9]* 0x[0-9a-f]* in .* (\(.*\)+\(0x[0-9a-f]*\))$/\1 \2/p')
		path=${loc% *}
		case $path in
		*/"$obj") ;;
		*) echo "# frame #$n is not in $obj: $line"; return 1 ;;
		esac
		if [ -n "$want" ]; then
			off=$((${loc##* } - (n > 0)))
			names=$(syms "$path" | awk -v a="$off" \
				'$1 <= a && a < $1 + $2 { sub(/@.*/, "", $3); print $3 }')
			hit=
			for name in $names; do
				case $name in $want) hit=$name ;; esac
			done
			if [ -z "$hit" ]; then
				echo "# frame #$n is in [$(echo $names)], not $want: $line"
				return 1
			fi
		fi
		n=$((n + 1))
	done
	if grep -q "^#$n 0x" "$f"; then
		echo "# more than $n frames"
		return 1
	fi
	grep -q '^# stopped: outermost at 0x' "$f"
}

# all_named FILE: every frame carries the name nm gives its address (the
# call, pc - 1, after #0; tests/lib/symbols.sh): sframebt's symbolizer
# checked against binutils', libc's detached debug file included.  "??"
# fails.
all_named() {
	report_as_nm "$1" && ! grep -q '^#[0-9]* 0x[0-9a-f]* in ?? ' "$1"
}

fails() { ! "$@" >/dev/null; }

# The program's root frames, below main, on glibc.
ROOT="@libc.so.6:__libc_start_call_main @libc.so.6:__libc_start_main* @crash-handler:_start"

# (a) SIGSEGV in a leaf of the shared object, called through a static
# function of the .so, from a static function of the executable.
crash segv
check "segv: killed by SIGSEGV (status 139), or passed on to ASan" died_of "$tmp/segv" SIGSEGV 139
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
check "segv: every frame named as nm names it" all_named "$tmp/segv"
check "segv: the whole stack, through libc's start-up code to _start, outermost" \
	whole_stack "$tmp/segv" @libcrashdemo.so:crash_leaf @libcrashdemo.so:static_helper \
	@libcrashdemo.so:crashdemo_run @crash-handler:run_scenario @crash-handler:main $ROOT
# The checker itself must reject what it should.
check "whole_stack: rejects two frames swapped" fails whole_stack "$tmp/segv" \
	@libcrashdemo.so:static_helper @libcrashdemo.so:crash_leaf @libcrashdemo.so:crashdemo_run \
	@crash-handler:run_scenario @crash-handler:main $ROOT
check "whole_stack: rejects a missing frame" fails whole_stack "$tmp/segv" \
	@libcrashdemo.so:crash_leaf @libcrashdemo.so:static_helper @libcrashdemo.so:crashdemo_run \
	@crash-handler:run_scenario @crash-handler:main @libc.so.6:__libc_start_call_main
check "whole_stack: rejects a frame in the wrong object" fails whole_stack "$tmp/segv" \
	@crash-handler:crash_leaf @libcrashdemo.so:static_helper @libcrashdemo.so:crashdemo_run \
	@crash-handler:run_scenario @crash-handler:main $ROOT

# The other signals: right exit status, header, and the same chain.
for kind_sig in fpe:SIGFPE:136 ill:SIGILL:132 bus:SIGBUS:135; do
	kind=${kind_sig%%:*}
	rest=${kind_sig#*:}
	sig=${rest%%:*}
	status=${rest#*:}
	crash "$kind"
	check "$kind: killed by $sig (status $status), or passed on to ASan" \
		died_of "$tmp/$kind" "$sig" "$status"
	check "$kind: header names $sig" grep -q "^\*\*\* $sig (" "$tmp/$kind"
	# gcc may move the trap into crash_leaf.cold: match the prefix.
	check "$kind: frames in call order" in_order "$tmp/$kind" \
		"in crash_leaf" "in static_helper+0x" "in crashdemo_run+0x" \
		"in run_scenario+0x" "in main+0x"
	check "$kind: the whole stack to _start, outermost" whole_stack "$tmp/$kind" \
		"@libcrashdemo.so:crash_leaf*" @libcrashdemo.so:static_helper \
		@libcrashdemo.so:crashdemo_run @crash-handler:run_scenario @crash-handler:main $ROOT
	check "$kind: every frame named as nm names it" all_named "$tmp/$kind"
done

# abort(): the signal is raised inside libc, which has no .sframe: the
# walk starts in libc's pthread_kill and goes up through raise and abort
# with libc's .eh_frame, then the program's chain with SFrame, then libc's
# start-up code again, to _start.
crash abort
check "abort: killed by SIGABRT (status 134)" [ "$rc" -eq 134 ]
check "abort: header names SIGABRT and the sender" \
	grep -q '^\*\*\* SIGABRT (SI_TKILL) sent by pid' "$tmp/abort"
check "abort: frame #0 in libc (object path)" \
	grep -Eq '^#0 0x[0-9a-f]+ in .* \(/.*/libc\.so\.6\+0x[0-9a-f]+\)$' "$tmp/abort"
check "abort: pthread_kill, raise, abort, the program's chain, main, libc's start, _start, outermost" \
	whole_stack "$tmp/abort" "@libc.so.6:*pthread_kill*" @libc.so.6:raise @libc.so.6:abort \
	"@libcrashdemo.so:crash_leaf*" @libcrashdemo.so:static_helper @libcrashdemo.so:crashdemo_run \
	@crash-handler:run_scenario @crash-handler:main $ROOT
check "abort: every frame named as nm names it, libc's static functions by its debug file" \
	all_named "$tmp/abort"

# strlen on an unmapped address: the fault is inside libc's strlen (the
# variant its IFUNC picked for this CPU).  Under valgrind, memcheck's own
# strlen (in its preloaded object) replaces libc's, and faults instead.
# In the AddressSanitizer build, its strlen interceptor (linked into the
# program) calls libc's: one more frame.
crash strlen
strlen0="@libc.so.6:__strlen_*"
under_valgrind && strlen0="@vgpreload_memcheck-amd64-linux.so:*strlen*"
interceptor=
[ -n "$asan" ] && interceptor="@crash-handler:*strlen"
check "strlen: killed by SIGSEGV (status 139), or passed on to ASan" died_of "$tmp/strlen" SIGSEGV 139
check "strlen: header names the fault address 0x10" \
	grep -q '^\*\*\* SIGSEGV (SEGV_MAPERR) fault address 0x10,' "$tmp/strlen"
strlen0obj=${strlen0#@}
strlen0obj=${strlen0obj%%:*}
check "strlen: frame #0 in $strlen0obj (object path)" \
	grep -Eq "^#0 0x[0-9a-f]+ in .* \(/.*/$strlen0obj\+0x[0-9a-f]+\)\$" "$tmp/strlen"
check "strlen: strlen, measure_string, run_scenario, main, libc's start, _start, outermost" \
	whole_stack "$tmp/strlen" "$strlen0" $interceptor @crash-handler:measure_string \
	@crash-handler:run_scenario @crash-handler:main $ROOT
check "strlen: every frame named as nm names it" all_named "$tmp/strlen"

# An uncaught C++ exception (examples/crash-cxx.cc): std::terminate()
# calls abort().  Its two unexported libstdc++ frames are
# __verbose_terminate_handler's cold part and __cxxabiv1::__terminate.
cxx=$B/crash-cxx
timeout 120 ${SFB_WRAP:-} "$cxx" >"$tmp/cxx" 2>&1
rc=$?
echo "--- crash-cxx: status $rc"
cat "$tmp/cxx"
check "c++: killed by SIGABRT (status 134)" [ "$rc" -eq 134 ]
check "c++: libstdc++ printed the exception" \
	grep -q "^terminate called after throwing an instance of 'std::runtime_error'" "$tmp/cxx"
check "c++: raise, abort, terminate, __cxa_throw, the throwing function, main, _start, outermost" \
	whole_stack "$tmp/cxx" "@libc.so.6:*pthread_kill*" @libc.so.6:raise @libc.so.6:abort \
	@libstdc++.so.6: @libstdc++.so.6: @libstdc++.so.6:_ZSt9terminatev \
	@libstdc++.so.6:__cxa_throw "@crash-cxx:*parse_config*" "@crash-cxx:*load_config*" \
	@crash-cxx:main @libc.so.6:__libc_start_call_main "@libc.so.6:__libc_start_main*" \
	@crash-cxx:_start
check "c++: every frame named as nm names it (libstdc++'s unexported ones: none)" \
	report_as_nm "$tmp/cxx"
# cxx_demangled FILE: each frame in crash-cxx carries c++filt's spelling of
# the symbol nm gives its call (pc - 1), the C++ ones (_Z...) included,
# and no frame shows a mangled name.
cxx_demangled() {
	syms "$cxx" >"$tmp/cxx.syms"
	nmangled=0
	for k in $(grep -n "^#[0-9]* 0x[0-9a-f]* in .* (.*/crash-cxx+0x[0-9a-f]*)$" "$1" | cut -d: -f1); do
		fl=$(sed -n "${k}p" "$1")
		got=$(echo "$fl" | sed -n 's/^#[0-9]* 0x[0-9a-f]* in \(.*\)+0x[0-9a-f]* (.*)$/\1/p')
		off=$(($(echo "$fl" | sed -n 's/.*+\(0x[0-9a-f]*\))$/\1/p') - 1))
		sym=$(names_at "$off" <"$tmp/cxx.syms" | head -1)
		case $sym in _Z*) nmangled=$((nmangled + 1)) ;; esac
		if [ "$got" != "$(echo "$sym" | c++filt -i)" ]; then
			echo "# \"$got\" is not c++filt's \"$(echo "$sym" | c++filt -i)\" ($sym)"
			return 1
		fi
	done
	[ "$nmangled" -ge 2 ] && ! grep -Eq '^#[0-9]+ 0x[0-9a-f]+ in _Z' "$1"
}
check "c++: names demangled as c++filt demangles nm's symbols" cxx_demangled "$tmp/cxx"

# (b) A smashed stack: the return addresses are garbage.  The handler
# still reports frame #0 and why the walk stopped, and the process dies
# from SIGSEGV rather than hanging or crashing in the handler.
crash stack-smash
check "stack-smash: killed by SIGSEGV, no hang (status 139), or passed on to ASan" \
	died_of "$tmp/stack-smash" SIGSEGV 139
check "stack-smash: frame #0 is the smashing function" \
	grep -Eq '^#0 0x[0-9a-f]+ in smash_stack_and_fault\+0x' "$tmp/stack-smash"
check "stack-smash: every frame reported named as nm names it" report_as_nm "$tmp/stack-smash"
check "stack-smash: a stop reason other than outermost" \
	sh -c "grep -E '^# stopped: [a-z-]+' '$tmp/stack-smash' | grep -qv outermost"
check "stack-smash: no frame taken from the garbage" \
	sh -c "! grep -q '^#[0-9]* 0x4141414141414141' '$tmp/stack-smash'"

# A stack overflow: only possible to report from the alternate stack.
# The fault lands on a new frame's first store or, for one stack start in
# 17 (recurse_forever's frames are 272 bytes), on the call whose push
# crosses into the guard page.  valgrind gives that call's context with SP
# already lowered by the push, 8 below the hardware's, and the walk reads
# the return address 8 bytes off (tests/walk/t_overflow.c covers that case).
# The report is then taken from a run whose larger environment moves the
# stack by less than a frame, putting the fault on a store.
crash overflow
check "overflow: killed by SIGSEGV (status 139), or passed on to ASan" \
	died_of "$tmp/overflow" SIGSEGV 139
if under_valgrind && frame0_is_call "$tmp/overflow"; then
	echo "# overflow: valgrind's context at a faulting call; the stack moved, again"
	crash overflow SFB_STACK_MOVED=0123456789abcdef
	check "overflow (stack moved): killed by SIGSEGV (status 139)" \
		died_of "$tmp/overflow" SIGSEGV 139
	check "overflow (stack moved): the fault is not on a call" not_at_call "$tmp/overflow"
fi
check "overflow: report from the alternate stack, the recursion collapsed, down to _start" \
	sh -c "grep -q '^#0 0x[0-9a-f]* in recurse_forever' '$tmp/overflow' &&
	       grep -Eq '^#[0-9]+\.\.#[0-9]+ repeat [0-9]+ times: 0x[0-9a-f]+ in recurse_forever\+' '$tmp/overflow' &&
	       grep -Eq '^#[0-9]+ 0x[0-9a-f]+ in main\+' '$tmp/overflow' &&
	       grep -q '^# stopped: outermost' '$tmp/overflow'"
check "overflow: every frame named as nm names it" all_named "$tmp/overflow"
exit 0
