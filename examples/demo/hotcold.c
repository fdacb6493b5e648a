/* hotcold: a CPU-bound workload with known hot paths, to profile.
 *
 *   hotcold [THREADS [MILLISECONDS]]      (default: 3 threads, 500 ms)
 *   profiler [THREADS [MILLISECONDS [late]]]
 *
 * main and THREADS worker threads each burn MILLISECONDS of CPU time,
 * 70% of it in hot_a -> hot_b -> spin and 30% in cold_c -> spin, so a
 * profile should show (below the libc root frame)
 *
 *   main;worker;hot_a;hot_b;spin     ~70% of main's samples
 *   main;worker;cold_c;spin          ~30%
 *   worker;hot_a;hot_b;spin          ~70% of each thread's samples
 *   worker;cold_c;spin               ~30%
 *
 * Built twice (examples/build.mk): build/hotcold, a plain program to
 * run under LD_PRELOAD=build/libsframe-profiler.so, and build/profiler,
 * the same with examples/profiler.c linked in and HOTCOLD_LINKED defined,
 * which calls sframe_prof_start()/sframe_prof_stop() itself.
 *
 * noinline and the work after each call keep -O2 from inlining the
 * functions or turning the calls into jumps: the profile then shows each
 * one, as a larger program's would. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HOTCOLD_LINKED
#include "../profiler.h"
#endif

/* gcc would otherwise also clone hot_a for its constant argument
 * ("hot_a.constprop.0") and fold cold_c and hot_b, whose code is
 * identical, into one function: noipa keeps each as written. */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif
#define UNIT 20000 /* spin iterations per tenth of a round, ~20 us */

static volatile uint64_t sink;

/* Pure computation, no calls: every sample here is a full stack. */
static NOINLINE uint64_t spin(uint64_t n)
{
	uint64_t x = sink | 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i; /* a dependency chain */
	return x;
}

static NOINLINE uint64_t hot_b(uint64_t n)
{
	uint64_t r = spin(n);
	sink ^= r;
	return r;
}

static NOINLINE uint64_t hot_a(uint64_t n)
{
	uint64_t r = hot_b(n);
	sink += r;
	return r;
}

static NOINLINE uint64_t cold_c(uint64_t n)
{
	uint64_t r = spin(n);
	sink ^= r;
	return r;
}

static long budget_ms = 500;

static double thread_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static NOINLINE void *worker(void *arg)
{
	(void)arg;
	double end = thread_cpu_ms() + (double)budget_ms;
	while (thread_cpu_ms() < end) {
		hot_a(7 * UNIT);  /* 70% */
		cold_c(3 * UNIT); /* 30% */
	}
	sink++;
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 3;
	if (argc > 2)
		budget_ms = atol(argv[2]);
	if (nthreads < 0 || nthreads > 256 || budget_ms <= 0) {
		fprintf(stderr, "usage: %s [THREADS [MILLISECONDS]]\n", argv[0]);
		return 2;
	}
#ifdef HOTCOLD_LINKED
	/* "late": start profiling once the threads run, which the profiler
	 * then finds in /proc/self/task instead of in pthread_create(). */
	bool late = argc > 3 && strcmp(argv[3], "late") == 0;
	/* Options left 0/NULL come from SFRAME_PROF_* or the defaults. */
	struct sframe_prof_opts opts = { .svg = 1 };
	if (!late && sframe_prof_start(&opts) != 0) {
		perror("sframe_prof_start");
		return 1;
	}
#endif
	pthread_t t[256];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
#ifdef HOTCOLD_LINKED
	if (late && sframe_prof_start(&opts) != 0) {
		perror("sframe_prof_start");
		return 1;
	}
#endif
	worker(NULL); /* main works too */
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
#ifdef HOTCOLD_LINKED
	return sframe_prof_stop() == 0 ? 0 : 1;
#else
	return 0;
#endif
}
