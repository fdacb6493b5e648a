#!/bin/sh
# The crash handler's report in static programs (gcc -static without and
# with --eh-frame-hdr, -static-pie; g++ -static for an uncaught
# exception): t_static report-CASE installs sframe_install_crash_handler()
# and, over it, a handler that writes libgcc's _Unwind_Backtrace() frames
# of the crash's context ("# libgcc #N 0xPC", from the context's PC on)
# before handing it the same signal and context.  Each report must be
# libgcc's frames exactly, one for one (a recursion's collapsed
# "#A..#B repeat" line counted as its frames), every frame named as nm
# names the binary's symbols (tests/lib/symbols.sh), the case's functions
# in call order, through main to _start with "# stopped: outermost"; and
# the process dies of the signal.
. tests/lib/check.sh
ulimit -c 0 2>/dev/null # the crashes are on purpose: no core files

progs="t_static_glibc t_static_glibc_hdr t_static_pie t_static_cxx"
# The sanitizers' runtimes do not link statically: tests/objects/build.mk
# builds no static program there.
if [ ! -e "$B/tests/t_static_glibc" ] && nm "$B/libsframebt.a" 2>/dev/null | grep -q __asan_; then
	ok "# SKIP no static programs in a sanitizer build"
	exit 0
fi

. tests/lib/install-deps.sh
install_deps binutils >/dev/null 2>&1
. tests/lib/symbols.sh

# frames REPORT: the report's frame lines, one a frame, "#N 0xPC in
# NAME+0xOFF (OBJECT+0xOFF)", a collapsed "#A..#B repeat K times: LINE"
# written out as its K frames.
frames() {
	awk '
		/^#[0-9]+\.\.#[0-9]+ repeat [0-9]+ times: / {
			split(substr($1, 2), r, /\.\.#/)
			line = $0
			sub(/^[^:]*: /, "", line)
			for (i = r[1]; i <= r[2]; i++) print "#" i " " line
			next
		}
		/^#[0-9]+ 0x/' "$1"
}

# same_as_libgcc FRAMES OUT: the frames' PCs are libgcc's, one for one.
same_as_libgcc() {
	awk '{ print $2 }' "$1" >"$tmp/ours"
	sed -n 's/^# libgcc #[0-9]* \(0x[0-9a-f]*\)$/\1/p' "$2" >"$tmp/theirs"
	[ -s "$tmp/theirs" ] && cmp -s "$tmp/ours" "$tmp/theirs" && return 0
	paste "$tmp/ours" "$tmp/theirs" | awk '{ print "#   " NR - 1 " report " $1 " libgcc " $2 }'
	return 1
}

# names_match FRAMES GLOB: the frames' names, joined by spaces, match GLOB.
names_match() {
	fnames=$(sed -n 's/^#[0-9]* 0x[0-9a-f]* in \(.*\)+0x[0-9a-f]* (.*)$/\1/p' "$1" | tr '\n' ' ')
	case "$fnames" in $2) return 0 ;; esac
	echo "# names: $fnames"
	return 1
}

ends_at_start() { tail -1 "$1" | grep -q ' in _start+0x' && grep -q '^# stopped: outermost at 0x' "$2"; }

fails() { ! "$@" >/dev/null; }

CHAIN="run_case* chain chain chain chain chain main __libc_start_call_main __libc_start_main* _start "
for p in $progs; do
	prog=$B/tests/$p
	if [ ! -x "$prog" ]; then
		notok "$prog built"
		continue
	fi
	if [ "$p" = t_static_cxx ]; then
		cases="cxx:SIGABRT:134"
	else
		cases="abort:SIGABRT:134 assert:SIGABRT:134 strlen:SIGSEGV:139 qsort:SIGSEGV:139"
	fi
	for c in $cases; do
		kind=${c%%:*}
		sig=${c#*:}
		status=${sig#*:}
		sig=${sig%:*}
		label="$p $kind"
		timeout 120 "$prog" "report-$kind" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		echo "--- $label: status $rc"
		cat "$tmp/err"
		frames "$tmp/err" >"$tmp/frames"
		case $kind in
		abort) order="*pthread_kill* * abort $CHAIN" ;;
		assert) order="*pthread_kill* * abort __assert_fail_base* __assert_fail $CHAIN" ;;
		strlen) order="*strlen* $CHAIN" ;;
		qsort) order="cmp_fault msort* *qsort* $CHAIN" ;;
		cxx) order="*pthread_kill* * abort * std::terminate() __cxa_throw thrower(int)* thrower(int) thrower(int) thrower(int) thrower(int) main __libc_start_call_main __libc_start_main* _start " ;;
		esac
		check "$label: killed by $sig (status $status)" [ "$rc" -eq "$status" ]
		check "$label: the header names $sig" grep -q "^\*\*\* $sig (" "$tmp/err"
		check "$label: $(wc -l <"$tmp/frames") frames, libgcc's _Unwind_Backtrace's one for one" \
			same_as_libgcc "$tmp/frames" "$tmp/out"
		check "$label: every frame named as nm names it" report_as_nm "$tmp/frames"
		check "$label: the case's functions in call order, through main" \
			names_match "$tmp/frames" "$order"
		check "$label: the last frame is _start, stopped outermost" \
			ends_at_start "$tmp/frames" "$tmp/err"
		# The checks can fail: a frame left out, a frame misnamed,
		# two frames swapped.
		if [ "$p$kind" = t_static_glibcabort ]; then
			sed 2d "$tmp/frames" >"$tmp/short"
			check "the comparison with libgcc rejects a report missing a frame" \
				fails same_as_libgcc "$tmp/short" "$tmp/out"
			sed '3s/ in [^ ]*+0x/ in raise+0x/' "$tmp/frames" >"$tmp/misnamed"
			check "the names' check rejects abort's frame named raise" \
				fails report_as_nm "$tmp/misnamed"
			sed -n '2{h;d};3{p;x;p;d};p' "$tmp/frames" >"$tmp/swapped"
			check "the order's check rejects raise and abort swapped" \
				fails names_match "$tmp/swapped" "$order"
		fi
	done
done
