#!/bin/sh
# Benchmark-only dependencies (never linked into the library): libunwind
# (a comparison point); strace and valgrind, for the syscall and
# instruction counts; and the Debian programs whose SIGPROF samples the
# benchmark times (an interpreter, a database, compressors).  Installed
# with the project's helper (tests/lib/install-deps.sh: apt-get, through
# sudo when not root).  Without libunwind the benchmark cannot build;
# anything else missing only leaves its table out.
# shellcheck source=tests/lib/install-deps.sh
. tests/lib/install-deps.sh
install_deps libunwind-dev strace valgrind python3 lua5.4 sqlite3 xz-utils gzip >&2 ||
	echo "bench: could not install every package (see above)" >&2
dpkg -s libunwind-dev >/dev/null 2>&1 || {
	echo "bench: libunwind-dev is missing: apt-get install libunwind-dev" >&2
	exit 1
}
exit 0
