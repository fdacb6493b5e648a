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
