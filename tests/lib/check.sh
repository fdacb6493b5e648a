# Sourced by the shell tests: the ok/not ok lines tests/run.sh counts, a
# temporary directory removed at exit, and B, the build directory.
B=${SFB_BUILD:-build}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { # check DESCRIPTION COMMAND...
	d=$1
	shift
	if "$@"; then ok "$d"; else notok "$d"; fi
}

# JIT tests that preload sframebt into an unmodified program:
# need_x86_64_preload sets preload to $B/libsframebt-preload.so (B made
# absolute), or says SKIP and exits: on another architecture (the tests
# run x86-64 code), or when the preload is missing or built with ASan
# (whose runtime cannot be preloaded into another program).
need_x86_64_preload() {
	case $B in /*) ;; *) B=$PWD/$B ;; esac
	preload=$B/libsframebt-preload.so
	if [ "$(uname -m)" != x86_64 ]; then
		ok "# SKIP tested on x86-64"
		exit 0
	fi
	if [ ! -e "$preload" ] || nm -D "$preload" 2>/dev/null | grep -q __asan_init; then
		ok "# SKIP no uninstrumented $preload"
		exit 0
	fi
}

# need_command COMMAND PACKAGE: COMMAND, installed from Debian's PACKAGE
# if it is missing; else not ok, and exit.
need_command() {
	command -v "$1" >/dev/null && return 0
	. tests/lib/install-deps.sh
	install_deps "$2" >/dev/null 2>&1
	command -v "$1" >/dev/null && return 0
	notok "$1 is there (Debian's $2)"
	exit 1
}
