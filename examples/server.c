/* server: where do my threads wait?  sframe_backtrace() on a hot path.
 *
 *   server [WORKERS [SECONDS]]          (default: 4 workers, 1 second)
 *
 * WORKERS threads serve fake requests (GET, PUT, REPORT) against a cache
 * behind one shared mutex.  Two events are worth knowing the call site
 * of, and both are too frequent for anything slow:
 *   - a lock acquisition that had to wait (pthread_mutex_trylock failed);
 *   - a request that took longer than SLOW_US.
 * At each, the worker takes a stack trace with sframe_backtrace() and
 * counts it in its own table (no lock, no sharing: merged at exit).  At
 * exit the top call sites are printed, symbolized, then what the traces
 * cost: measured on the hot path itself, and in batches against glibc's
 * backtrace() on the same stack.
 *
 * To do this in your own program: call sframe_backtrace(buf, n) where the
 * event happens, keep the PCs (cheap), and symbolize only the few
 * distinct stacks at the end with sframe_format_frame() or
 * sframe_backtrace_symbols_fd().  Build with -Wa,--gsframe. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backtrace.h"

/* noinline (and, for gcc, noipa: no cloning or merging of look-alike
 * functions) keeps each function of this small demo a frame of its own,
 * as in a larger program. */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif

#define MAX_FRAMES 32
#define SITES 512          /* distinct stacks per worker */
#define SLOW_US 200        /* a request slower than this is "slow" */

enum event { LOCK_WAIT, SLOW_REQUEST };
static const char *const event_name[] = { "lock wait", "slow request" };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- Per-worker call-site table: no locks, only its worker writes ---- */

struct site {
	uint64_t hash, count;
	int event, depth;
	void *pc[MAX_FRAMES];
};

struct worker {
	pthread_t thread;
	uint64_t rng, dispatched, requests, served[3]; /* by kind: GET, PUT, REPORT */
	uint64_t bt_calls, bt_frames, bt_ns; /* cost on the hot path */
	uint32_t bt_each[1024];              /* the first calls' times, ns */
	struct site sites[SITES];
};

/* Called where an event happens.  Inlined, so that the trace starts in
 * the function where the event happened: pc[0] is the return address of
 * sframe_backtrace() into it. */
static inline __attribute__((always_inline)) void record_site(struct worker *w,
							      enum event ev)
{
	void *pc[MAX_FRAMES];
	uint64_t t0 = now_ns();
	int depth = sframe_backtrace(pc, MAX_FRAMES);
	uint64_t t1 = now_ns();
	if (w->bt_calls < 1024)
		w->bt_each[w->bt_calls] = (uint32_t)(t1 - t0);
	w->bt_calls++;
	w->bt_frames += (uint64_t)depth;
	w->bt_ns += t1 - t0;

	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)ev;
	for (int i = 0; i < depth; i++)
		h = (h ^ (uintptr_t)pc[i]) * 0x100000001b3ull;
	for (unsigned i = 0, j = (unsigned)(h % SITES); i < SITES; i++, j = (j + 1) % SITES) {
		struct site *s = &w->sites[j];
		if (s->count == 0) {
			s->hash = h;
			s->event = ev;
			s->depth = depth;
			memcpy(s->pc, pc, (size_t)depth * sizeof *pc);
		} else if (s->hash != h || s->event != (int)ev || s->depth != depth ||
			   memcmp(s->pc, pc, (size_t)depth * sizeof *pc) != 0) {
			continue;
		}
		s->count++;
		return;
	}
	/* Table full: this event goes uncounted. */
}

/* ---- The fake server ---------------------------------------------------- */

static pthread_mutex_t cache_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cache[4096];
static volatile uint64_t sink;

static uint64_t next_random(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static NOINLINE uint64_t burn(uint64_t n) /* stands in for real work */
{
	uint64_t x = sink | 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

static NOINLINE void cache_lock(struct worker *w)
{
	if (pthread_mutex_trylock(&cache_mutex) == 0)
		return;
	record_site(w, LOCK_WAIT); /* contended: where from? */
	pthread_mutex_lock(&cache_mutex);
}

static NOINLINE uint64_t cache_get(struct worker *w, unsigned key)
{
	cache_lock(w);
	uint64_t v = cache[key % 4096] + burn(1000); /* work under the lock */
	pthread_mutex_unlock(&cache_mutex);
	return v;
}

/* The classic mistake this tool should find: I/O under the lock. */
static NOINLINE void journal_write(uint64_t v)
{
	struct timespec ts = { 0, 20000 + (long)(v % 20000) }; /* 20-40 us */
	nanosleep(&ts, NULL);
}

static NOINLINE void cache_put(struct worker *w, unsigned key, uint64_t v)
{
	cache_lock(w);
	cache[key % 4096] = v + burn(1500);
	if (key % 16 == 0)
		journal_write(v); /* still holding cache_mutex */
	pthread_mutex_unlock(&cache_mutex);
}

static NOINLINE uint64_t backend_fetch(unsigned key)
{
	return burn(60000 + key % 30000); /* slow: ~100 us */
}

/* Ends every request: notes the slow ones, from the handler that ran. */
static NOINLINE void finish_request(struct worker *w, uint64_t start)
{
	if (now_ns() - start > SLOW_US * 1000u)
		record_site(w, SLOW_REQUEST);
	w->requests++;
}

/* Each handler ends by counting its request: work after the call to
 * finish_request(), so that the call is not compiled into a jump (a tail
 * call leaves no frame: the handler would vanish from the stack). */
static NOINLINE void handle_get(struct worker *w, unsigned key, uint64_t start)
{
	uint64_t v = cache_get(w, key);
	if (v % 256 == 0) /* a miss: 1 in 256 goes to the backend */
		cache_put(w, key, backend_fetch(key));
	finish_request(w, start);
	w->served[0]++;
}

static NOINLINE void handle_put(struct worker *w, unsigned key, uint64_t start)
{
	cache_put(w, key, burn(200));
	finish_request(w, start);
	w->served[1]++;
}

static NOINLINE void handle_report(struct worker *w, unsigned key, uint64_t start)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < 8; i++)
		sum += cache_get(w, key + i);
	sink += sum + backend_fetch(key) + backend_fetch(key + 1);
	finish_request(w, start);
	w->served[2]++;
}

static NOINLINE void serve(struct worker *w)
{
	uint64_t start = now_ns();
	unsigned r = (unsigned)next_random(w), key = r >> 8;
	burn(300); /* "parse" */
	if (r % 100 < 70)
		handle_get(w, key, start);
	else if (r % 100 < 99)
		handle_put(w, key, start);
	else
		handle_report(w, key, start);
	w->dispatched++; /* work after the calls: they stay calls, see above */
}

static uint64_t deadline_ns;

static NOINLINE void *worker_main(void *arg)
{
	struct worker *w = arg;
	while (now_ns() < deadline_ns)
		for (int i = 0; i < 64; i++)
			serve(w);
	return NULL;
}

/* ---- Report ------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int by_count(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* Batches of backtraces from a stack of the given depth (counted in this
 * function's recursion), timed with clock_gettime around each batch. */
#define BATCH 2000
struct bench {
	double sframe_ns, glibc_ns;
	int sframe_frames, glibc_frames;
};

static NOINLINE void bench_at_depth(int levels, struct bench *b)
{
	if (levels > 0) {
		bench_at_depth(levels - 1, b);
		sink++; /* not a tail call: keep the frame */
		return;
	}
	void *buf[MAX_FRAMES];
	b->sframe_ns = b->glibc_ns = 1e18;
	backtrace(buf, MAX_FRAMES); /* glibc loads libgcc_s on first use */
	for (int round = 0; round < 5; round++) { /* best of 5 batches */
		uint64_t t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			b->sframe_frames = sframe_backtrace(buf, MAX_FRAMES);
		uint64_t t1 = now_ns();
		for (int i = 0; i < BATCH; i++)
			b->glibc_frames = backtrace(buf, MAX_FRAMES);
		uint64_t t2 = now_ns();
		if ((double)(t1 - t0) / BATCH < b->sframe_ns)
			b->sframe_ns = (double)(t1 - t0) / BATCH;
		if ((double)(t2 - t1) / BATCH < b->glibc_ns)
			b->glibc_ns = (double)(t2 - t1) / BATCH;
	}
}

int main(int argc, char **argv)
{
	int nworkers = argc > 1 ? atoi(argv[1]) : 4;
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	if (nworkers < 1 || nworkers > 64 || seconds <= 0) {
		fprintf(stderr, "usage: %s [WORKERS [SECONDS]]\n", argv[0]);
		return 2;
	}
	/* Optional: find and validate the .sframe sections now rather than
	 * in the first backtrace. */
	sframe_backtrace_warmup();

	struct worker *w = calloc((size_t)nworkers, sizeof *w);
	if (!w)
		return 1;
	deadline_ns = now_ns() + (uint64_t)(seconds * 1e9);
	for (int i = 0; i < nworkers; i++) {
		w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}

	/* Merge the workers' tables (they have exited: no locks needed). */
	static struct site all[SITES * 4];
	int nall = 0;
	uint64_t requests = 0, calls = 0, frames = 0, ns = 0, events[2] = { 0, 0 };
	for (int i = 0; i < nworkers; i++) {
		pthread_join(w[i].thread, NULL);
		requests += w[i].requests;
		calls += w[i].bt_calls;
		frames += w[i].bt_frames;
		ns += w[i].bt_ns;
		for (int j = 0; j < SITES; j++) {
			struct site *s = &w[i].sites[j];
			if (!s->count)
				continue;
			events[s->event] += s->count;
			int k = 0;
			while (k < nall && !(all[k].hash == s->hash && all[k].event == s->event &&
					     all[k].depth == s->depth &&
					     memcmp(all[k].pc, s->pc, (size_t)s->depth * sizeof(void *)) == 0))
				k++;
			if (k == nall) {
				if (nall == (int)(sizeof all / sizeof all[0]))
					continue;
				all[nall] = *s;
				all[nall++].count = 0;
			}
			all[k].count += s->count;
		}
	}
	qsort(all, (size_t)nall, sizeof all[0], by_count);

	printf("server: %d workers, %.2f s, %llu requests; %llu lock waits, %llu slow requests (> %d us)\n",
	       nworkers, seconds, (unsigned long long)requests,
	       (unsigned long long)events[LOCK_WAIT], (unsigned long long)events[SLOW_REQUEST], SLOW_US);
	printf("\ntop call sites (%d distinct stacks):\n", nall);
	for (int k = 0; k < nall && k < 6; k++) {
		printf("%8llu x %s\n", (unsigned long long)all[k].count, event_name[all[k].event]);
		for (int i = 0; i < all[k].depth; i++) {
			char line[1024];
			/* Every entry is a return address: look up pc - 1. */
			sframe_format_frame(i, (uintptr_t)all[k].pc[i], 1, line, sizeof line);
			printf("           %s\n", line);
		}
	}

	/* The cost.  On the hot path, each call was timed with clock_gettime;
	 * the median is robust to the odd call that was preempted, and a
	 * clock_gettime's own cost is subtracted: the median of back-to-back
	 * readings too (a mean would count the preemptions of a loaded
	 * machine, and could exceed the calls it is subtracted from). */
	static uint32_t each[64 * 1024];
	for (int i = 0; i < 1001; i++) {
		uint64_t t0 = now_ns();
		each[i] = (uint32_t)(now_ns() - t0);
	}
	qsort(each, 1001, sizeof each[0], by_value);
	double clock_ns = each[500];
	size_t ne = 0;
	for (int i = 0; i < nworkers; i++)
		for (uint64_t j = 0; j < w[i].bt_calls && j < 1024; j++)
			each[ne++] = w[i].bt_each[j];
	qsort(each, ne, sizeof each[0], by_value);
	printf("\nsframe_backtrace cost:\n");
	if (ne) {
		double per_call = (double)each[ne / 2] - clock_ns;
		double depth = (double)frames / (double)calls;
		printf("  hot path: %llu calls, %.1f frames/call, median %.0f ns/call, "
		       "%.1f ns/frame (mean %.0f ns/call)\n",
		       (unsigned long long)calls, depth, per_call, per_call / depth,
		       (double)ns / (double)calls - clock_ns);
	}
	struct bench b;
	bench_at_depth(8, &b);
	printf("  batches of %d from one stack: %d frames, %.0f ns/call, %.1f ns/frame\n",
	       BATCH, b.sframe_frames, b.sframe_ns, b.sframe_ns / b.sframe_frames);
	printf("  glibc backtrace(), same stack: %d frames, %.0f ns/call, %.1f ns/frame\n",
	       b.glibc_frames, b.glibc_ns, b.glibc_ns / b.glibc_frames);
	free(w);
	return 0;
}
