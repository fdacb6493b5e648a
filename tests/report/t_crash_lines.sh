#!/bin/sh
# Source lines in crash reports, against addr2line (binutils): under each
# frame line of examples/crash-handler's reports (built -g) and of
# t_report_lines' (code inlined two levels deep), "    inlined: NAME at
# FILE:LINE" for each inlined frame, innermost first, then "    at
# FILE:LINE", exactly as `addr2line -i -f -C` gives them, and as
# `llvm-symbolizer-14 --inlining` does; libc's frames from its debug file
# (libc6-dbg).
. tests/lib/check.sh
ulimit -c 0 2>/dev/null
. tests/lib/install-deps.sh
install_deps libc6-dbg binutils llvm-14
. tests/report/lines.sh

for prog in $B/crash-handler $B/tests/t_report_lines; do
	if [ ! -x "$prog" ]; then
		notok "$prog not built"
		exit 1
	fi
done

fails_() { ! "$@" >/dev/null; }
libc_dbg() { [ -n "$(ls /usr/lib/debug/.build-id 2>/dev/null)" ] && dpkg -s libc6-dbg >/dev/null 2>&1; }

for kind in segv abort strlen overflow; do
	timeout 120 ${SFB_WRAP:-} "$B/crash-handler" "$kind" >"$tmp/$kind" 2>&1
	echo "--- crash-handler $kind"
	cat "$tmp/$kind"
	check "$kind: every frame's source lines as addr2line gives them" \
		lines_as_addr2line "$tmp/$kind"
	check "$kind: every frame's source lines as llvm-symbolizer-14 gives them" \
		lines_as_llvm "$tmp/$kind"
	# Frame #0 is libc's (strlen, raise) or the program's, with lines; under
	# valgrind, strlen is memcheck's own (vgpreload_memcheck), without.
	if grep -q '^#0 .*(/.*/vgpreload_[a-z]*-[a-z0-9]*-linux\.so+' "$tmp/$kind"; then
		ok "# SKIP $kind: frame #0 is valgrind's replacement, no DWARF"
	else
		check "$kind: frame #0 has a source location" \
			sh -c "sed -n '/^#0 /{n;p;}' '$tmp/$kind' | grep -Eq '^    (at|inlined:) .*:[0-9]+\$'"
	fi
	check "$kind: the main program's frames located in examples/crash-handler.c" \
		grep -Eq '^    at .*/examples/crash-handler\.c:[0-9]+$' "$tmp/$kind"
done
# A C++ program's report (an uncaught exception: libstdc++'s frames too).
if [ -x "$B/crash-cxx" ]; then
	timeout 120 ${SFB_WRAP:-} "$B/crash-cxx" >"$tmp/cxx" 2>&1
	echo "--- crash-cxx"
	cat "$tmp/cxx"
	check "crash-cxx: every frame's source lines as addr2line gives them" \
		lines_as_addr2line "$tmp/cxx"
	check "crash-cxx: every frame's source lines as llvm-symbolizer-14 gives them" \
		lines_as_llvm "$tmp/cxx"
	check "crash-cxx: the program's frames located in examples/crash-cxx.cc" \
		grep -Eq '^    at .*/examples/crash-cxx\.cc:[0-9]+$' "$tmp/cxx"
else
	notok "$B/crash-cxx not built"
fi
check "the frame lines keep their format" \
	grep -Eq '^#0 0x[0-9a-f]+ in crash_leaf\+0x[0-9a-f]+ \(.*/libcrashdemo\.so\+0x[0-9a-f]+\)$' "$tmp/segv"
if libc_dbg; then
	check "abort: libc's frames located through its debug file" \
		sh -c "grep -A1 '^#[0-9]* 0x[0-9a-f]* in abort+' '$tmp/abort' | grep -Eq '^    at .*abort\.c:[0-9]+\$'"
else
	echo "# libc6-dbg not installed: libc's frames not checked for lines"
fi

"$B/tests/t_report_lines" report >"$tmp/inl" 2>&1
echo "--- t_report_lines report"
cat "$tmp/inl"
check "inlined: every frame's source lines as addr2line gives them" lines_as_addr2line "$tmp/inl" 1
check "inlined: every frame's source lines as llvm-symbolizer-14 gives them" lines_as_llvm "$tmp/inl" 1
check "inlined: two inlined frames, innermost first, then the function's own line" \
	sh -c "grep -A3 '^#0 ' '$tmp/inl' | sed -n 2,4p | awk '
		NR == 1 && /^    inlined: inner_report at .*t_report_lines\.c:[0-9]+\$/ { ok++ }
		NR == 2 && /^    inlined: middle_report at .*t_report_lines\.c:[0-9]+\$/ { ok++ }
		NR == 3 && /^    at .*t_report_lines\.c:[0-9]+\$/ { ok++ }
		END { exit ok != 3 }'"
# The oracle must reject what it should.
sed 's/^\(    at .*:\)\([0-9]*\)$/\1999999/' "$tmp/inl" >"$tmp/inl.bad"
check "lines_as_addr2line: rejects a wrong line" fails_ lines_as_addr2line "$tmp/inl.bad" 1
grep -v '^    inlined: ' "$tmp/inl" >"$tmp/inl.bad2"
check "lines_as_addr2line: rejects a missing inlined frame" fails_ lines_as_addr2line "$tmp/inl.bad2" 1
check "lines_as_llvm: rejects a wrong line" fails_ lines_as_llvm "$tmp/inl.bad" 1
check "lines_as_llvm: rejects a missing inlined frame" fails_ lines_as_llvm "$tmp/inl.bad2" 1
exit 0
