#!/bin/sh
# libsframebt-preload.so makes an unmodified program's backtrace() and
# backtrace_symbols_fd() async-signal-safe (tests/port/preload_victim.c:
# a SIGSEGV handler calls them while another thread holds the malloc
# lock).  The frames are checked against the program's call chain; the
# same program without the preload is expected to hang there.  A C++
# program's frames are printed with their names demangled.
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

# C++: the drop-in prints each name demangled, as c++filt demangles the
# symbol nm finds (a static member of a class template and a function
# template, in a namespace); glibc's own prints them mangled, or not at
# all (only .dynsym names, and the program exports none).
install_deps g++ >/dev/null 2>&1
cat >"$tmp/cxx.cc" <<'CXX'
#include <execinfo.h>
namespace shapes {
template <typename T> struct Box {
	__attribute__((noinline)) static int dump(T depth)
	{
		void *pc[32];
		int n = backtrace(pc, 32);
		backtrace_symbols_fd(pc, n, 1);
		return n + (int)depth;
	}
};
template <typename T> __attribute__((noinline)) int walk(T x)
{
	return Box<T>::dump(x) + 1;
}
} // namespace shapes
int main()
{
	return shapes::walk<long>(0) > 2 ? 0 : 1;
}
CXX
if g++ -O1 -g "$tmp/cxx.cc" -o "$tmp/cxx"; then
	cxx_out=$(LD_PRELOAD=$P timeout 20 "$tmp/cxx")
	rc=$?
	glibc_out=$(timeout 20 "$tmp/cxx")
	echo "$cxx_out" | sed 's/^/# c++: /'
	bad=0
	for s in $(nm "$tmp/cxx" | awk '$3 ~ /^_ZN6shapes/ { print $3 }'); do
		d=$(echo "$s" | c++filt)
		echo "# $s: c++filt says $d"
		echo "$cxx_out" | grep -qF "($d+0x" || bad=$((bad + 1))
		echo "$glibc_out" | grep -qF "($d+0x" && bad=$((bad + 1))
	done
	n=$(nm "$tmp/cxx" | grep -c ' _ZN6shapes')
	[ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && [ "$bad" -eq 0 ] &&
		ok "preload, C++: Box<long>::dump and walk<long> printed as c++filt demangles them ($n symbols, $bad bad; glibc's own does not)" ||
		notok "preload, C++: Box<long>::dump and walk<long> printed as c++filt demangles them ($n symbols, $bad bad, exit $rc)"
	order=$(echo "$cxx_out" | sed -n 's/^[^(]*(\(.*\)+0x[0-9a-f]*) \[0x[0-9a-f]*\]$/\1/p' | head -3 |
		tr '\n' ';')
	[ "$order" = "shapes::Box<long>::dump(long);int shapes::walk<long>(long);main;" ] &&
		ok "preload, C++: frames dump < walk < main (got: $order)" ||
		notok "preload, C++: frames dump < walk < main (got: $order)"
else
	notok "preload, C++: the program builds (g++)"
fi
