/* jit_cost.c - what registered JIT code costs (`make bench`, section "JIT
 * registration"; tests/bench/run.sh runs it).
 *
 * N functions of FN_SIZE bytes each are registered one FDE each, every
 * FDE with its own CIE, as LLVM's lazy JIT hands them to
 * __register_frame(): through sframe_jit_register() (SFRAME_JIT_EH_FRAME)
 * and, keyed by the table's address, through the path the preloads'
 * __register_frame() takes.  Modes:
 *   time [N]       CPU time of this thread per call, the median of ROUNDS
 *                  rounds: register in shuffled and in ascending order,
 *                  find + row, unregister in shuffled and in ascending
 *                  order, with N (default 100000) registered; then a
 *                  backtrace that enters no JIT code (this program's own
 *                  stack, to _start) with none and with N registered,
 *                  rounds interleaved.  Prints Markdown.
 *   callgrind [N]  the same batches once each under valgrind
 *                  --tool=callgrind --collect-atstart=no, one dump per
 *                  batch named "jit:BATCH:CALLS" (run.sh divides).
 * Every batch checks its results (a failed registration, a function not
 * found or a walk that differs exits non-zero): the figures are of calls
 * that did their work. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backtrace.h"
#include "objects/jit_registry.h"
#include "objects/objcache.h"
#include "jit_fde.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#define FN_SIZE 32
#define REC JIT_FDE_REC
#define ROUNDS 7
#define WALKS 20000
#define DEPTH 64

static unsigned n_fns = 100000;
static uint8_t *code, *tables;
static unsigned *order;
static int callgrind;

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}



static uintptr_t fn_at(unsigned i)
{
	return (uintptr_t)code + (size_t)i * FN_SIZE;
}

static void die(const char *what)
{
	fprintf(stderr, "jit_cost: %s\n", what);
	exit(1);
}

static int reg(unsigned i)
{
	struct sframe_jit_code c = { .start = fn_at(i), .end = fn_at(i) + FN_SIZE,
				     .kind = SFRAME_JIT_EH_FRAME,
				     .tables = tables + (size_t)i * REC, .tables_size = REC };
	return sframe_jit_register(&c);
}

/* One batch: n calls of what `which` names; checked; CPU ns per call (or
 * 0 under callgrind, where the dump holds the count). */
enum batch { REG_SHUF, REG_UP, REG_KEYED, FIND, UNREG_SHUF, UNREG_UP, UNREG_KEYED };
static const char *const batch_name[] = { "register-shuffled", "register-ascending",
					  "register-keyed-ascending", "find-row-shuffled",
					  "unregister-shuffled", "unregister-ascending",
					  "unregister-keyed-shuffled" };

/* Only the keyed tables need their terminator: a copy with one, per
 * function, built once. */
static uint8_t *keyed_tables;

static double batch(enum batch which)
{
	unsigned bad = 0;
	struct sfb_object o;
	struct sfb_row row;
	if (callgrind)
		CALLGRIND_TOGGLE_COLLECT;
	double t0 = cpu_ns();
	for (unsigned k = 0; k < n_fns; k++) {
		unsigned i = order[k], j = order[(k * 7919u) % n_fns];
		switch (which) {
		case REG_SHUF: bad += reg(i) != 0; break;
		case REG_UP: bad += reg(k) != 0; break;
		case REG_KEYED:
			bad += sfb_jit_register_eh_frame(keyed_tables + (size_t)k * (REC + 4), REC + 4,
							 NULL) != 0;
			break;
		case FIND: {
			uintptr_t pc = fn_at(i) + k % FN_SIZE;
			bad += sfb_objcache_find(pc, &o) != 0 || o.map_start != fn_at(i) ||
			       sfb_object_row(&o, pc, 0, &row) != 0;
			break;
		}
		case UNREG_SHUF: bad += sframe_jit_unregister(fn_at(j)) != 0; break;
		case UNREG_UP: bad += sframe_jit_unregister(fn_at(k)) != 0; break;
		case UNREG_KEYED:
			bad += sfb_jit_unregister_eh_frame(keyed_tables + (size_t)j * (REC + 4)) != 0;
			break;
		}
	}
	double ns = (cpu_ns() - t0) / n_fns;
	if (callgrind) {
		CALLGRIND_TOGGLE_COLLECT;
		char name[64];
		snprintf(name, sizeof name, "jit:%s:%u", batch_name[which], n_fns);
		CALLGRIND_DUMP_STATS_AT(name);
	}
	if (bad)
		die(batch_name[which]);
	return ns;
}

static void *first_walk[DEPTH];
static int first_n;

/* Backtraces from here to _start, none entering JIT code: ns per walk,
 * each checked against the first walk made here (always called from
 * main(), so the same stack but for frame 1, the call site). */
static __attribute__((noinline)) double walks(unsigned n, const char *tag)
{
	void *pcs[DEPTH];
	int bad = 0;
	if (callgrind)
		CALLGRIND_TOGGLE_COLLECT;
	double t0 = cpu_ns();
	for (unsigned i = 0; i < n; i++) {
		int got = sframe_backtrace(pcs, DEPTH);
		if (!first_n) {
			memcpy(first_walk, pcs, sizeof pcs);
			first_n = got;
		}
		bad += got < 3 || got != first_n || pcs[0] != first_walk[0] ||
		       memcmp(pcs + 2, first_walk + 2, sizeof(void *) * (size_t)(got - 2)) != 0;
	}
	double ns = (cpu_ns() - t0) / n;
	if (callgrind) {
		CALLGRIND_TOGGLE_COLLECT;
		char name[64];
		snprintf(name, sizeof name, "jit:%s:%u", tag, n);
		CALLGRIND_DUMP_STATS_AT(name);
	}

	if (bad)
		die("a walk differed");
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[n / 2];
}

static void register_all(void)
{
	for (unsigned i = 0; i < n_fns; i++)
		if (reg(i))
			die("register");
}

static void unregister_all(void)
{
	for (unsigned i = 0; i < n_fns; i++)
		if (sframe_jit_unregister(fn_at(i)))
			die("unregister");
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "time") && strcmp(argv[1], "callgrind")))
		die("usage: jit_cost time|callgrind [N]");
	callgrind = !strcmp(argv[1], "callgrind");
	if (argc > 2)
		n_fns = (unsigned)strtoul(argv[2], NULL, 10);
	if (n_fns < 2)
		die("N < 2");
	size_t code_len = (size_t)n_fns * FN_SIZE;
	code = mmap(NULL, code_len + (size_t)n_fns * (2 * REC + 4), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	order = malloc(n_fns * sizeof *order);
	if (code == MAP_FAILED || !order)
		die("no memory");
	tables = code + code_len;
	keyed_tables = tables + (size_t)n_fns * REC;
	for (unsigned i = 0; i < n_fns; i++) {
		jit_fde_write(tables + (size_t)i * REC, fn_at(i), FN_SIZE);
		jit_fde_write(keyed_tables + (size_t)i * (REC + 4), fn_at(i), FN_SIZE); /* + 4 zero bytes */
	}
	uint64_t s = 88172645463325252ull;
	for (unsigned i = 0; i < n_fns; i++)
		order[i] = i;
	for (unsigned i = n_fns - 1; i > 0; i--) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		unsigned j = (unsigned)(s % (i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	sframe_backtrace_warmup();

	int rounds = callgrind ? 1 : ROUNDS;
	walks(1000, "warm-up"); /* the memo filled: both measured walk batches find it so */
	double t[7][ROUNDS], w0[ROUNDS], wn[ROUNDS];
	for (int r = 0; r < rounds; r++) {
		w0[r] = walks(callgrind ? 1000 : WALKS, "walk-none");
		t[REG_SHUF][r] = batch(REG_SHUF);
		t[FIND][r] = batch(FIND);
		wn[r] = walks(callgrind ? 1000 : WALKS, "walk-all");
		t[UNREG_SHUF][r] = batch(UNREG_SHUF);
		t[REG_UP][r] = batch(REG_UP);
		t[UNREG_UP][r] = batch(UNREG_UP);
		t[REG_KEYED][r] = batch(REG_KEYED);
		t[UNREG_KEYED][r] = batch(UNREG_KEYED);
	}
	/* Each unregistration with N - 1 others registered: the cost at N. */
	register_all();
	unregister_all();
	if (sfb_jit_count())
		die("left registered");
	if (callgrind)
		return 0;

	printf("| operation, %u functions registered (one FDE each) | ns per call (CPU time, median of %d) |\n",
	       n_fns, ROUNDS);
	printf("|---|---:|\n");
	static const enum batch shown[] = { REG_SHUF, REG_UP, REG_KEYED, FIND, UNREG_SHUF, UNREG_UP,
					    UNREG_KEYED };
	for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++)
		printf("| %s | %.0f |\n", batch_name[shown[k]], median(t[shown[k]], rounds));
	double a = median(w0, rounds), b = median(wn, rounds);
	printf("| a backtrace entering no JIT code (%d frames), none registered | %.0f |\n", first_n, a);
	printf("| the same, %u registered | %.0f |\n", n_fns, b);
	printf("\n");
	/* Judged in the order a JIT allocates code and registers it (the
	 * TARGET), and in shuffled order, where every search misses the
	 * cache (the GOAL). */
	double reg_up = median(t[REG_UP], rounds), reg_key = median(t[REG_KEYED], rounds),
	       unreg_up = median(t[UNREG_UP], rounds), reg_sh = median(t[REG_SHUF], rounds),
	       unreg_sh = median(t[UNREG_SHUF], rounds), unreg_key = median(t[UNREG_KEYED], rounds);
	double up = reg_up > reg_key ? reg_up : reg_key;
	up = up > unreg_up ? up : unreg_up;
	double sh = reg_sh > unreg_sh ? reg_sh : unreg_sh;
	sh = sh > unreg_key ? sh : unreg_key;
	printf("TARGET: %s: JIT registration in allocation order: <= 1 us per register / "
	       "unregister at %u functions (CPU time: register %.2f us, by key %.2f us, "
	       "unregister %.2f us)\n",
	       up <= 1000 ? "PASS" : "FAIL", n_fns, reg_up / 1000, reg_key / 1000, unreg_up / 1000);
	printf("GOAL: %s: JIT registration in shuffled order: <= 1 us per register / unregister "
	       "at %u functions (register %.2f us, unregister %.2f us, by key %.2f us)\n",
	       sh <= 1000 ? "MET" : "MISSED", n_fns, reg_sh / 1000, unreg_sh / 1000,
	       unreg_key / 1000);
	printf("GOAL: %s: a backtrace that enters no JIT code costs the same with %u functions "
	       "registered (%.0f ns, none registered: %.0f ns; CPU time, noise: see Ir)\n",
	       b <= a * 1.1 + 5 ? "MET" : "MISSED", n_fns, b, a);
	return 0;
}
