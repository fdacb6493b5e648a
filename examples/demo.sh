#!/bin/sh
# Quick start, first command: installs a compiler if missing, builds the
# library and examples, and runs the crash-handler example, which crashes
# on purpose inside nested functions of a program and a shared object and
# prints a symbolized report from inside its SIGSEGV handler.
set -u
cd "$(dirname "$0")/.."
. tests/lib/install-deps.sh
install_deps build-essential binutils
make -s -j2 all >/dev/null || { echo "build failed"; exit 1; }
echo "\$ ./build/crash-handler segv"
./build/crash-handler segv
status=$?
echo "(exit status $status: the process died of SIGSEGV, as it would have without the handler)"
echo
echo "Next: ./build/profiler (a flame graph of a demo workload), ./build/server,"
echo "      ./build/sframe-dump ./build/crash-handler (the decoded .sframe table)."
[ "$status" -eq 139 ]
