#!/bin/sh
# What a crash report costs: sframe_write_crash_report() from a context
# taken by getcontext() in a chain of 8 frames, to /dev/null, repeated
# (cold first call apart, then the mean of the rest), and the whole run of
# examples/crash-handler for a fault and for a stack overflow (the
# recursion walked whole, collapsed into one line), from exec to death.
# A measurement, not a test: `sh tests/bench/report_cost.sh [BUILD]`.
B=${1:-${SFB_BUILD:-build}}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cost.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <ucontext.h>
#include "backtrace.h"
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
__attribute__((noinline)) static void chain(int n, int fd)
{
	if (n) {
		chain(n - 1, fd);
		__asm__ volatile("");
		return;
	}
	ucontext_t uc;
	getcontext(&uc);
	double t0 = now();
	sframe_write_crash_report(&uc, fd);
	double t1 = now();
	for (int i = 0; i < 200; i++)
		sframe_write_crash_report(&uc, fd);
	double t2 = now();
	printf("report of 8+ frames with modules and registers: first %.0f us, then %.0f us each\n",
	       t1 - t0, (t2 - t1) / 200);
}
int main(void)
{
	chain(8, open("/dev/null", O_WRONLY));
	return 0;
}
C
$CC -O2 -g -I. "$tmp/cost.c" -o "$tmp/cost" "$B/libsframebt.a" -ldl -lpthread || exit 1
"$tmp/cost"
for kind in segv overflow; do
	t0=$(date +%s%N)
	"$B/crash-handler" $kind >"$tmp/$kind" 2>&1
	t1=$(date +%s%N)
	echo "crash-handler $kind: $(( (t1 - t0) / 1000000 )) ms from exec to death," \
		"$(grep -c '^#[0-9]' "$tmp/$kind") frame lines," \
		"$(grep -o 'repeat [0-9]* times' "$tmp/$kind" | head -1)"
done
