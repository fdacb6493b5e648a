/* The registry at scale: 100,000 functions registered one FDE each (each
 * with its own CIE, as LLVM's lazy JIT registers them), in shuffled
 * order; every one found by its PCs, none after it is unregistered.
 * Prints (in CPU time) what a registration, a lookup and an unregistration cost (a
 * figure, not a timed assertion), and what a walk that never enters JIT
 * code costs with none and with all of them registered. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backtrace.h"
#include "check.h"
#include "objects/jit_registry.h"
#include "objects/objcache.h"
#include "jit_fde.h"

#define N 100000
#define FN_SIZE 32
#define CODE_BYTES ((size_t)N * FN_SIZE)
#define REC JIT_FDE_REC

/* CPU time of this thread: the figures stay meaningful on a loaded
 * machine. */
static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}



static unsigned order[N];

static void shuffle(void)
{
	uint64_t s = 88172645463325252ull;
	for (unsigned i = 0; i < N; i++)
		order[i] = i;
	for (unsigned i = N - 1; i > 0; i--) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		unsigned j = (unsigned)(s % (i + 1));
		unsigned t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

static __attribute__((noinline)) double walk_cost(void)
{
	void *pcs[64];
	double t0 = now_ns();
	for (int i = 0; i < 100000; i++)
		sframe_backtrace(pcs, 64);
	return (now_ns() - t0) / 100000;
}

int main(void)
{
	uint8_t *m = mmap(NULL, CODE_BYTES + (size_t)N * REC, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	uint8_t *tables = m + CODE_BYTES;
	for (unsigned i = 0; i < N; i++)
		jit_fde_write(tables + (size_t)i * REC, (uintptr_t)m + (size_t)i * FN_SIZE, FN_SIZE);
	shuffle();
	sframe_backtrace_warmup();
	double walk_none = walk_cost();

	int bad = 0;
	double t0 = now_ns();
	for (unsigned k = 0; k < N; k++) {
		unsigned i = order[k];
		struct sframe_jit_code c = { .start = (uintptr_t)m + (size_t)i * FN_SIZE,
					     .end = (uintptr_t)m + (size_t)(i + 1) * FN_SIZE,
					     .kind = SFRAME_JIT_EH_FRAME,
					     .tables = tables + (size_t)i * REC,
					     .tables_size = REC };
		bad += sframe_jit_register(&c) != 0;
	}
	double reg = (now_ns() - t0) / N;
	/* Ascending, as a JIT that allocates code upwards registers it. */
	for (unsigned k = 0; k < N; k++)
		bad += sframe_jit_unregister((uintptr_t)m + (size_t)k * FN_SIZE) != 0;
	t0 = now_ns();
	for (unsigned i = 0; i < N; i++) {
		struct sframe_jit_code c = { .start = (uintptr_t)m + (size_t)i * FN_SIZE,
					     .end = (uintptr_t)m + (size_t)(i + 1) * FN_SIZE,
					     .kind = SFRAME_JIT_EH_FRAME,
					     .tables = tables + (size_t)i * REC,
					     .tables_size = REC };
		bad += sframe_jit_register(&c) != 0;
	}
	double reg_up = (now_ns() - t0) / N;
	CHECK(bad == 0 && sfb_jit_count() == N, "%d functions registered, one FDE each", N);

	struct sfb_object o;
	struct sfb_row row;
	bad = 0;
	t0 = now_ns();
	for (unsigned k = 0; k < N; k++) {
		uintptr_t pc = (uintptr_t)m + (size_t)order[k] * FN_SIZE + (k % FN_SIZE);
		bad += sfb_objcache_find(pc, &o) != 0 || o.map_start != pc - k % FN_SIZE ||
		       sfb_object_row(&o, pc, 0, &row) != 0;
	}
	double look = (now_ns() - t0) / N;
	CHECK(bad == 0, "every function found, with its row");
	double walk_all = walk_cost();

	bad = 0;
	t0 = now_ns();
	for (unsigned k = 0; k < N; k++)
		bad += sframe_jit_unregister((uintptr_t)m + (size_t)order[(k * 7919u) % N] * FN_SIZE) != 0;
	double unreg = (now_ns() - t0) / N;
	CHECK(bad == 0 && sfb_jit_count() == 0, "all unregistered");
	bad = 0;
	for (unsigned i = 0; i < N; i += 97)
		bad += sfb_objcache_find((uintptr_t)m + (size_t)i * FN_SIZE, &o) == 0;
	CHECK(bad == 0, "none found once unregistered");

	printf("# %d registrations: register %.0f ns (shuffled), %.0f ns (ascending), find + row "
	       "%.0f ns, unregister %.0f ns (shuffled) each\n",
	       N, reg, reg_up, look, unreg);
	printf("# a walk that enters no JIT code (depth of this program): %.0f ns with none "
	       "registered, %.0f ns with %d\n",
	       walk_none, walk_all, N);
	CHECK_DONE();
}
