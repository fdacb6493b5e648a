#!/bin/sh
# libsframebt-preload.so makes an unmodified program's backtrace() and
# backtrace_symbols_fd() async-signal-safe (tests/port/preload_victim.c:
# a SIGSEGV handler calls them while another thread holds the malloc
# lock).  The frames are checked against the program's call chain; the
# same program without the preload is expected to hang there.
B=${SFB_BUILD:-build}
V=$B/tests/preload_victim
P=$(cd "$(dirname "$B/libsframebt-preload.so")" && pwd)/libsframebt-preload.so
pass=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
[ -x "$V" ] && [ -e "$P" ] || { notok "preload: $V or $P missing"; exit 1; }
# The victim's frames and glibc's signal trampoline as on x86-64.
readelf -h "$V" | grep -q 'X86-64' || { echo "# preload: x86-64 only"; exit 0; }
# A sanitizer build's preload library needs the sanitizer's runtime in
# the program, which an unmodified program does not have.
if readelf -sW --dyn-syms "$P" | grep -q ' UND __[a-z]*san_'; then
	echo "# preload: left out in a sanitizer build"
	exit 0
fi

out=$(LD_PRELOAD=$P timeout 20 "$V")
rc=$?
[ "$rc" -eq 0 ] && ok "preload: the handler's backtrace() returned with the malloc lock held (exit 0)" ||
	notok "preload: the handler's backtrace() did not complete (exit $rc)"
n=$(echo "$out" | sed -n 's/^frames //p')
echo "$out" | sed 's/^/# /'
# The frames, innermost first: the handler, the signal trampoline (libc),
# then the faulting function and its callers.
order=$(echo "$out" | grep -o '(\(on_segv\|victim_c\|victim_b\|victim_a\|main\)+0x[0-9a-f]*)' |
	sed 's/^(\([a-z_]*\)+.*/\1/' | tr '\n' ' ')
[ "$order" = "on_segv victim_c victim_b victim_a main " ] &&
	ok "preload: frames on_segv < victim_c < victim_b < victim_a < main (got: $order)" ||
	notok "preload: frames on_segv < victim_c < victim_b < victim_a < main (got: $order)"
line2=$(echo "$out" | sed -n 3p)
case $line2 in
*libc.so.6*) ok "preload: frame 1 is the signal trampoline in libc ($line2)" ;;
*) notok "preload: frame 1 is the signal trampoline in libc ($line2)" ;;
esac
# Every line named as nm names it (tests/lib/symbols.sh), libc's static
# functions from its detached debug file.
. tests/lib/install-deps.sh
install_deps libc6-dbg binutils
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
. tests/lib/symbols.sh
echo "$out" >"$tmp/out"
glibc_lines_as_nm "$tmp/out" && ok "preload: every frame named as nm names it" ||
	notok "preload: every frame named as nm names it"
[ -n "$n" ] && [ "$(echo "$out" | grep -c ' \[0x[0-9a-f]*\]$')" -eq "$n" ] &&
	ok "preload: backtrace_symbols_fd() wrote one line per frame ($n), glibc's format" ||
	notok "preload: backtrace_symbols_fd() wrote one line per frame ($n)"

# Without the preload: glibc's backtrace() loads libgcc_s with dlopen(),
# which needs the malloc lock.  Skipped under valgrind (its malloc).
if [ -z "${SFB_VALGRIND:-}" ]; then
	timeout 3 "$V" >/dev/null
	rc=$?
	[ "$rc" -eq 124 ] && ok "glibc's own backtrace() hangs in the same handler (killed after 3 s)" ||
		notok "glibc's own backtrace() hangs in the same handler (exit $rc)"
fi
