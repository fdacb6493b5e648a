#!/bin/sh
# Names past a function's end: noreturn_tail's check_invariant ends in a
# call to abort(), so the call's return address lies past its end, where
# the nearest symbol below is sfb_tail_nosize, which has no size.  Every
# frame of sframebt's crash report, of the drop-in backtrace_symbols_fd()
# and of sframe_symbolize() on each PC as given is named as nm names it
# (tests/lib/symbols.sh): the return address as a call, check_invariant;
# as given, no name.
. tests/lib/check.sh
. tests/lib/install-deps.sh
install_deps libc6-dbg binutils
. tests/lib/symbols.sh
prog=$B/tests/noreturn_tail
ulimit -c 0 2>/dev/null
[ -x "$prog" ] || { notok "$prog not built"; exit 1; }

# The layout the case needs, from nm: the return address of the call to
# abort() is check_invariant's end, and sfb_tail_nosize, without a size,
# is the symbol before check_invariant.
syms "$prog" >"$tmp/syms"
ci=$(awk '$3 == "check_invariant" { print $1, $2 }' "$tmp/syms")
end=$((${ci% *} + ${ci#* }))
ra=$(objdump -d --no-show-raw-insn --disassemble=check_invariant "$prog" |
	awk '/:\t/ { last = $0 } END { print last }')
echo "# check_invariant: start+size $ci, last instruction: $ra"
before=$(awk -v s="${ci% *}" '$1 < s { n = $3; z = $2 } END { print n, z }' "$tmp/syms")
check "layout: check_invariant's last instruction is the call to abort()" \
	sh -c "echo '$ra' | grep -Eq 'call.*abort|bl.*abort|brasl.*abort'"
check "layout: the symbol before it is sfb_tail_nosize, without a size ($before)" \
	[ "$before" = "sfb_tail_nosize 0" ]

# report: sframebt's crash handler.
timeout 60 ${SFB_WRAP:-} "$prog" report >"$tmp/report" 2>&1
echo "--- report: status $?"
cat "$tmp/report"
check "report: the return address past the end names check_invariant" \
	grep -Eq '^#[0-9]+ 0x[0-9a-f]+ in check_invariant\+0x[0-9a-f]+ ' "$tmp/report"
check "report: every frame named as nm names it" report_as_nm "$tmp/report"

# given: sframe_symbolize() of each PC as given; the return address past
# check_invariant's end is covered by no symbol: no name.
timeout 60 ${SFB_WRAP:-} "$prog" given >"$tmp/given" 2>&1
echo "--- given: status $?"
cat "$tmp/given"
check "given: the return address itself gets no name, as nm gives it none" \
	sh -c "grep -q '^#[0-9]* 0x[0-9a-f]* in ?? (.*/noreturn_tail+$(printf %#x "$end"))' '$tmp/given'"
check "given: every PC named as nm names it" report_as_nm "$tmp/given" given

# dropin: glibc's backtrace() through libsframebt-preload.so (x86-64
# glibc, not in a sanitizer build: see t_preload.sh).
P=$(cd "$B" && pwd)/libsframebt-preload.so
if readelf -h "$prog" | grep -q 'X86-64' && [ -e "$P" ] &&
	! readelf -sW --dyn-syms "$P" | grep -q ' UND __[a-z]*san_'; then
	LD_PRELOAD=$P timeout 60 "$prog" dropin >"$tmp/dropin" 2>&1
	echo "--- dropin: status $?"
	cat "$tmp/dropin"
	check "dropin: the return address past the end names check_invariant" \
		grep -q '(check_invariant+0x[0-9a-f]*) \[0x' "$tmp/dropin"
	check "dropin: every line named as nm names it" glibc_lines_as_nm "$tmp/dropin"
fi
exit 0
