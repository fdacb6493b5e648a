#!/bin/sh
# The test command of the README and of CI (.ci/run).  On a fresh Debian
# machine it installs what the tests need, then runs:
#   1. make test                      every test, gcc build
#   2. the same under valgrind memcheck
#   3. the same built with clang -fsanitize=address,undefined
#   4. fixtures regenerated from Debian's binutils 2.40/2.44/2.47, and the
#      readelf comparison run on the fresh builds   (needs the network)
#   5. the libFuzzer targets (make fuzz) for FUZZ_SECONDS in all (default 120)
#   6. make test-port: the walker where users' programs run (static
#      glibc, Debian bullseye's glibc 2.31, musl dynamic and static;
#      needs the network the first time)
#   7. make test-cross: the walker built for AArch64 (SFrame V1, V2, V3,
#      pointer authentication) and s390x, run under qemu-user (needs the
#      network the first time)
# and ends with the total "N passed, N failed".
# Environment: SFB_QUICK=1 runs step 1 only.
set -u
cd "$(dirname "$0")/.."
. tests/lib/install-deps.sh
install_deps build-essential clang libclang-rt-14-dev valgrind binutils libunwind-dev \
	gcc-aarch64-linux-gnu gcc-s390x-linux-gnu qemu-user file libc6-dbg zlib1g-dev \
	zstd libzstd-dev

total_pass=0
total_fail=0
mkdir -p build
: >build/ci-failures
step() { # step NAME COMMAND...: run, tally its "N passed, N failed" line
	name=$1; shift
	log=build/ci-$name.log
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	grep -E '^(FAIL |not ok)' "$log" | sed "s/^/$name: /" >>build/ci-failures
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "$name: no result line" | tee -a build/ci-failures
		total_fail=$((total_fail + 1))
		return
	fi
	p=${line%% passed*}
	f=${line#*passed, }; f=${f%% failed*}
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
}

step test make -j2 test
if [ "${SFB_QUICK:-0}" != 1 ]; then
	step valgrind make -j2 test-valgrind
	step asan make -j2 test-asan
	step fixtures sh tests/fixtures/check-fresh.sh
	step fuzz sh -c 'if make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-120}"; then
		echo "ok - fuzzing found nothing"; echo "1 passed, 0 failed"
	else
		echo "not ok - fuzzing found a crash or a disagreement"; echo "0 passed, 1 failed"
	fi' 
	step port make test-port
	step cross make test-cross
fi
# CI shows only the tail of the output: the failures again, just above
# the total, so a failing run names its tests.
if [ -s build/ci-failures ]; then
	echo "=== failures"
	cat build/ci-failures
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
