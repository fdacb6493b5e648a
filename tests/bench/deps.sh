#!/bin/sh
# Benchmark-only dependencies (never linked into the library): libunwind
# (a comparison point) and, for the syscall / instruction counts, strace
# and valgrind.  Installs what is missing with apt-get; runs `apt-get
# update` only if a first install attempt fails.  Without root, reports
# what is missing and fails (libunwind) or carries on (strace, valgrind).
need=
for p in libunwind-dev strace valgrind; do
	dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "bench: installing$need" >&2
if [ "$(id -u)" != 0 ]; then
	echo "bench: not root: install$need yourself" >&2
	case $need in *libunwind-dev*) exit 1 ;; esac
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # $need is a list of package names
apt-get install -y -q $need >/dev/null 2>&1 ||
	{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $need >/dev/null; } ||
	{ echo "bench: could not install$need" >&2
	  dpkg -s libunwind-dev >/dev/null 2>&1 || exit 1; }
exit 0
