/* sfbench.c - the benchmark driver behind `make bench` (tests/bench/run.sh
 * runs its modes and assembles build/bench-results.md).
 *
 * Modes (all print Markdown; lines starting "TARGET: " are PASS/FAIL lines
 * and lines starting "GOAL: " the walker's targets, MET/MISSED, that
 * run.sh gathers):
 *   time                 warm backtraces in normal context, every method,
 *                        depths 8/32/128, medians of interleaved rounds
 *   async                SIGPROF samples: time spent in the handler, the
 *                        methods rotating sample by sample in one process
 *   async-solo           the same, one method per (forked) process, as in
 *                        a profiler: every build at 125 us between samples
 *                        (where the <= 300 ns target is judged), then
 *                        main, distinct and v3 at 1 ms (a 1 kHz profiler)
 *   async-only M B N [US]  N SIGPROF samples of one method (M: sframebt,
 *                        sframebt-kept, unw or fp; with -nat: walked to
 *                        the natural end), US us apart
 *                        (default 125) (for strace -c)
 *   firstcall            first backtrace in fresh processes with 1/10/100
 *                        objects loaded (spawns "firstcall-child K METHOD")
 *   callgrind            fixed batches under valgrind --tool=callgrind,
 *                        one dump per (method, build, depth), one per
 *                        coarse-index size for the lookups below, and one
 *                        per (method, build, depth) of varied captures
 *   natural              walks to the stack's natural end (through libc to
 *                        _start, a NAT_SIZE buffer) at depth 32: warm
 *                        against the frame-pointer walk to its own end,
 *                        libunwind and glibc; a .eh_frame row's first
 *                        interpretation (memo emptied, and fresh processes:
 *                        "natcold-child METHOD NPRE"); SIGPROF samples
 *                        walked to the natural end, one unwinder a process
 *   varied               stacks that differ from call to call (bench_varied.h):
 *                        each capture a chain built along a new path, walked
 *                        to the natural end, every method, depths 8/32/128,
 *                        libbench-varied-{fp,v1,v3}.so and the main program
 *   lookup               FDE lookups in libbench-big.so (4096 functions),
 *                        warm and with the section flushed from the caches,
 *                        without and with coarse indexes of several sizes
 *   syscalls M B D N     warm up, then N backtraces (for strace -c); M-nat:
 *                        walked to the natural end (D = 32)
 *   spin M B D SECONDS   backtraces in a loop (for perf record)
 * M: fp | sframebt | unw | glibc;
 * B: fp | v1 | v2 | v3 | main | linked | distinct.
 *
 * The chain libraries libbench-{fp,v1,v2,v3}.so and objs/libbobjNNN.so are
 * looked for next to this executable; the "main" build is the same chain
 * linked into it, and "linked" the chain in libbench-linked.so, which it
 * is linked with (both show what a backtrace costs where no per-walk
 * dlclose() confirmation is needed), and the "distinct" build
 * a chain of distinct functions linked into it with frame pointers
 * (bench_distinct.h; SIGPROF samples only: a real stack's return address
 * per frame, where the recursive chain has one for all).  Built with frame
 * pointers (so the frame-pointer walk can cross timed_cb) and with
 * -Wa,--gsframe.
 *
 * How every method is made to do the same work: the backtrace is taken
 * from one indirect call site in timed_cb(), at the leaf of a chain of
 * `depth` recursive frames, with a buffer of exactly `depth` entries.  So
 * every method must return exactly `depth` frames, all inside the chain,
 * and each frame is checked against ground truth (the chain records its
 * own return addresses; frame 0 must equal the frame-pointer walk's).
 * The natural mode gives the same call site a buffer larger than the
 * stack instead, and checks each trace against libunwind's. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <libunwind.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <x86intrin.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define HAVE_CALLGRIND 0
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#define RUNNING_ON_VALGRIND 0
#endif

#include "backtrace.h"
#include "objects/objcache.h"
#include "walk/rowmemo.h"
#include "rows/sframe_decode.h"
#include "bench_chain.h"
#include "bench_distinct.h"
#include "bench_varied.h"
#include "keep.h"
#include "sig_install.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

#define NOINLINE BENCH_KEEP

/* ---- Allocation counter (interposes glibc's malloc family) ------------ */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic unsigned long n_allocs;

static inline void count_alloc(void)
{
	atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
}
static inline unsigned long allocs_now(void)
{
	return atomic_load_explicit(&n_allocs, memory_order_relaxed);
}

void *malloc(size_t n)
{
	count_alloc();
	return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
	count_alloc();
	return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	count_alloc();
	return __libc_realloc(p, n);
}
void *memalign(size_t al, size_t n)
{
	count_alloc();
	return __libc_memalign(al, n);
}
void *aligned_alloc(size_t al, size_t n)
{
	count_alloc();
	return __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n)
{
	count_alloc();
	void *p = __libc_memalign(al, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

/* ---- Clocks ----------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of this thread: a batch that was preempted is not charged for
 * the time it waited (this 2-CPU machine is often shared with builds). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void loadavg(char *out, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	out[0] = 0;
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, " ")] = 0; /* the 1-minute figure */
		fclose(f);
	}
}

static inline uint64_t tsc_begin(void)
{
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
}

static inline uint64_t tsc_end(void)
{
	unsigned aux;
	uint64_t t = __rdtscp(&aux);
	_mm_lfence();
	return t;
}

static double ns_per_tick;

static void calibrate_tsc(void)
{
	uint64_t n0 = now_ns(), c0 = tsc_begin(), n1;
	do
		n1 = now_ns();
	while (n1 - n0 < 50000000u);
	uint64_t c1 = tsc_end();
	ns_per_tick = (double)(n1 - n0) / (double)(c1 - c0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v in place; the q-quantile (nearest rank). */
static double quantile(double *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static double median(double *v, size_t n)
{
	return quantile(v, n, 0.5);
}

static void die(const char *what)
{
	fprintf(stderr, "sfbench: %s\n", what);
	exit(2);
}

/* ---- Methods ---------------------------------------------------------- */

typedef int (*bt_fn)(void **, int);

/* The hand-written frame-pointer walk: what a profiler does with
 * -fno-omit-frame-pointer code.  Checks only what such walkers check (the
 * chain goes up, stays aligned, frames are not absurdly large).  Frames
 * n.. of buf, from the frame record at fp. */
static inline __attribute__((always_inline)) int fp_walk(const uintptr_t *fp, void **buf,
							 int n, int size)
{
	while (n < size) {
		uintptr_t ra = fp[1];
		const uintptr_t *next = (const uintptr_t *)fp[0];
		if (!ra)
			break;
		buf[n++] = (void *)ra;
		if (next <= fp || ((uintptr_t)next & 7) ||
		    (uintptr_t)next - (uintptr_t)fp > (1u << 24))
			break;
		fp = next;
	}
	return n;
}

static NOINLINE int fp_backtrace(void **buf, int size)
{
	return fp_walk(__builtin_frame_address(0), buf, 0, size);
}

static NOINLINE int empty_backtrace(void **buf, int size)
{
	(void)buf;
	return size;
}

enum { MK_FP, MK_SFB, MK_UNW, MK_GLIBC, MK_EMPTY, MK_COUNT };
static const char *const mk_name[MK_COUNT] = {
	"frame-pointer walk", "sframebt", "libunwind unw_backtrace", "glibc backtrace()",
	"empty call (loop overhead)",
};
static const char *const mk_key[MK_COUNT] = { "fp", "sframebt", "unw", "glibc", "empty" };
/* glibc's backtrace() is looked up in libc.so.6 itself: libunwind.so
 * exports a weak `backtrace` (an alias of unw_backtrace) that would win the
 * link-time binding. */
static bt_fn mk_fn[MK_COUNT] = { fp_backtrace, sframe_backtrace, unw_backtrace, NULL,
				 empty_backtrace };

static void die(const char *what);

static void resolve_glibc_backtrace(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "backtrace") : NULL;
	Dl_info di;
	if (!f || !dladdr(f, &di) || !di.dli_fname || !strstr(di.dli_fname, "libc.so"))
		die("cannot find glibc's own backtrace()");
	mk_fn[MK_GLIBC] = (bt_fn)f;
}

static int mk_parse(const char *s)
{
	for (int i = 0; i < MK_COUNT; i++)
		if (!strcmp(s, mk_key[i]))
			return i;
	die("unknown method (fp|sframebt|unw|glibc|empty)");
	return -1;
}

/* ---- Chain builds ----------------------------------------------------- */

struct build {
	const char *key, *label;
	bool ok;
	void *h;
	int (*entry)(int, bench_cb, void *);
	bench_cb work;
	void **ra;
	uintptr_t work_lo, work_hi;
	int sframe_version, want_version;
	int frame_pointer; /* built with -fno-omit-frame-pointer */
};

/* B_FP..B_V3 are dlopen()ed libraries and take part in every mode; B_MAIN,
 * B_LINKED and B_DISTINCT are loaded at start-up.  The warm tables compare
 * the SFrame builds of the recursive chain (warm_builds); B_DISTINCT takes
 * part in the SIGPROF samples only (it is at most DISTINCT_MAX_DEPTH frames
 * deep: it has no depth 128). */
enum { B_FP, B_V1, B_V2, B_V3, B_MAIN, B_LINKED, B_DISTINCT, B_COUNT };
#define B_LIBS_END B_MAIN
/* The versions side by side, dlopen()ed (what the version comparison
 * needs: one process cannot link three copies of one chain), then the
 * common case: code loaded at start-up, whose descriptions sframebt keeps
 * without confirming them on each walk. */
static const int warm_builds[] = { B_V1, B_V2, B_V3, B_LINKED, B_MAIN };
#define N_WARM_BUILDS (int)(sizeof warm_builds / sizeof warm_builds[0])
static struct build builds[B_COUNT] = {
	{ .key = "fp", .label = "FP build (-fno-omit-frame-pointer)", .frame_pointer = 1,
	  .want_version = 1 },
	{ .key = "v1", .label = "SFrame V1 (binutils 2.40)", .want_version = 1 },
	{ .key = "v2", .label = "SFrame V2 (binutils 2.44)", .want_version = 2 },
	{ .key = "v3", .label = "SFrame V3 (binutils 2.47)", .want_version = 3 },
	{ .key = "main", .label = "SFrame V1 (binutils 2.40), chain in the main program",
	  .want_version = 1 },
	{ .key = "linked",
	  .label = "SFrame V1 (binutils 2.40), chain in a library linked at start-up",
	  .want_version = 1 },
	{ .key = "distinct",
	  .label = "main program, 32 distinct functions, frame pointers (SFrame V1)",
	  .frame_pointer = 1, .want_version = 1 },
};

static char exe_dir[PATH_MAX];

static void find_exe_dir(void)
{
	char p[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
	if (n <= 0)
		die("readlink /proc/self/exe");
	p[n] = 0;
	snprintf(exe_dir, sizeof exe_dir, "%s", dirname(p));
}

static int b_parse(const char *s)
{
	for (int i = 0; i < B_COUNT; i++)
		if (!strcmp(s, builds[i].key))
			return i;
	die("unknown build (fp|v1|v2|v3|main|linked|distinct)");
	return -1;
}

/* The .sframe version of the object holding addr. */
struct ver_query {
	uintptr_t addr;
	int version;
};

static int ver_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ver_query *q = arg;
	(void)size;
	bool holds = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && q->addr - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
			holds = true;
	}
	if (!holds)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_SFRAME) {
			const uint8_t *s = (const uint8_t *)(info->dlpi_addr +
							     info->dlpi_phdr[i].p_vaddr);
			q->version = s[2];
		}
	return 1;
}

static void load_builds(void)
{
	for (int i = 0; i < B_COUNT; i++) {
		struct build *b = &builds[i];
		char path[PATH_MAX + 32];
		if (i == B_MAIN) {
			b->entry = main_chain_entry;
			b->work = main_chain_work;
			b->ra = main_chain_ra;
		} else if (i == B_LINKED) {
			b->entry = linked_chain_entry;
			b->work = linked_chain_work;
			b->ra = linked_chain_ra;
		} else if (i == B_DISTINCT) {
			b->entry = distinct_chain_entry;
			b->work = fpmain_chain_work;
			b->ra = distinct_chain_ra;
		} else {
			snprintf(path, sizeof path, "%s/libbench-%s.so", exe_dir, b->key);
			if (access(path, R_OK))
				continue;
			b->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (!b->h) {
				fprintf(stderr, "sfbench: %s\n", dlerror());
				continue;
			}
			b->entry = (int (*)(int, bench_cb, void *))dlsym(b->h, "bench_chain_entry");
			b->work = (bench_cb)dlsym(b->h, "bench_chain_work");
			b->ra = dlsym(b->h, "bench_chain_ra");
		}
		Dl_info di;
		const ElfW(Sym) *sym = NULL;
		if (!b->entry || !b->work || !b->ra ||
		    !dladdr1((void *)b->work, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym)
			die("chain library lacks its symbols");
		b->work_lo = (uintptr_t)b->work;
		b->work_hi = b->work_lo + sym->st_size;
		struct ver_query q = { (uintptr_t)b->work, 0 };
		dl_iterate_phdr(ver_cb, &q);
		b->sframe_version = q.version;
		b->ok = true;
	}
	if (!builds[B_FP].ok || !builds[B_V1].ok)
		die("libbench-fp.so / libbench-v1.so missing: run `make bench`");
}

/* ---- Timed batches in normal context ---------------------------------- */

struct run {
	bt_fn fn;
	int size;
	long iters;
	void **buf;
	long sum_n;
	uint64_t ns, cpu;
	void *cb_ra;
	int cg;
	unsigned long allocs;
	void **ref; /* natural-end rows: a reference trace (libunwind), untimed */
	int ref_n;
	bool to_ref; /* a buffer of exactly ref_n entries (the walk ends full, at _start) */
};

/* Natural-end walks: a buffer larger than the whole stack, so that a walk
 * ends where the stack does (_start, through libc) and not at a full
 * buffer. */
#define NAT_SIZE 256

static NOINLINE int timed_cb(void *arg)
{
	struct run *r = arg;
	r->cb_ra = __builtin_return_address(0);
	bt_fn fn = r->fn;
	void **buf = r->buf;
	int size = r->size;
	long iters = r->iters, sum = 0;
	int cg = r->cg;
	if (r->ref) {
		r->ref_n = unw_backtrace(r->ref, NAT_SIZE);
		if (r->to_ref)
			size = r->ref_n;
	}
	unsigned long a0 = allocs_now();
	uint64_t c0 = cpu_ns(), t0 = now_ns();
	if (cg)
		CALLGRIND_TOGGLE_COLLECT;
	for (long i = 0; i < iters; i++)
		sum += fn(buf, size); /* the one call site of every method */
	if (cg)
		CALLGRIND_TOGGLE_COLLECT;
	uint64_t t1 = now_ns(), c1 = cpu_ns();
	r->allocs = allocs_now() - a0;
	r->ns = t1 - t0;
	r->cpu = c1 - c0;
	r->sum_n = sum;
	return (int)(sum & 1);
}

static void *site0; /* frame 0 of every trace: the return address in timed_cb */

/* Frames seen from inside cb: [0] site0, [1] cb's return address, [k]
 * bench_chain_ra[k - 1]. */
static bool trace_ok(const struct build *b, void *cb_ra, void *const *buf, int n,
		     int depth, char *why, size_t whylen)
{
	if (n != depth) {
		snprintf(why, whylen, "%d frames, expected %d", n, depth);
		return false;
	}
	for (int k = 0; k < n; k++) {
		void *want = k == 0 ? site0 : k == 1 ? cb_ra : b->ra[k - 1];
		if (buf[k] != want) {
			snprintf(why, whylen, "frame %d is %p, expected %p", k, buf[k], want);
			return false;
		}
	}
	return true;
}

struct row {
	int kind, build;
	bool nat;            /* walked to the natural end (NAT_SIZE buffer), depth 32 only */
	bool to_ref;         /* nat, but a buffer of exactly the natural frame count */
	bool thread;         /* the chain runs on a new thread (natural end: clone3) */
	bool fiber;          /* on a makecontext() fiber (natural end: __start_context) */
	bool named;          /* fiber: its stack named (sframe_backtrace_set_stack()) */
	int frames;          /* natural-end rows: frames a call returned (last batch) */
	double *ns[3];       /* per depth: CPU ns per backtrace, one per round */
	double *wall[3];     /* the same in wall-clock time */
	long iters[3];
	unsigned long allocs, calls;
	unsigned bad;
	char why[160];
};

static const int depths[3] = { 8, 32, 128 };
#define ROUNDS 31
#define BATCH_NS 4000000.0 /* one measurement: ~4 ms */

static struct row rows[64];
static int nrows;

static void add_row(int kind, int build)
{
	if (!builds[build].ok)
		return;
	if (nrows == (int)(sizeof rows / sizeof rows[0]))
		die("too many rows");
	struct row *r = &rows[nrows++];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->build = build;
	for (int d = 0; d < 3; d++) {
		r->ns[d] = calloc(ROUNDS, sizeof(double));
		r->wall[d] = calloc(ROUNDS, sizeof(double));
	}
}

/* Did every method return what it should in every timed batch? */
static bool rows_all_good(void)
{
	for (int i = 0; i < nrows; i++)
		if (rows[i].bad)
			return false;
	return true;
}

/* Did sframebt allocate nothing in any of its rows' timed batches? */
static bool sfb_rows_alloc_free(void)
{
	for (int i = 0; i < nrows; i++)
		if (rows[i].kind == MK_SFB && rows[i].allocs)
			return false;
	return true;
}

/* The rows every timing mode compares: the FP walk and sframebt on the FP
 * build, then sframebt, libunwind and glibc on each SFrame build. */
static void add_method_rows(void)
{
	add_row(MK_FP, B_FP);
	add_row(MK_SFB, B_FP);
	for (int i = 0; i < N_WARM_BUILDS; i++) {
		int b = warm_builds[i];
		add_row(MK_SFB, b);
		add_row(MK_UNW, b);
		add_row(MK_GLIBC, b);
	}
}

/* A natural-end trace of n frames against the reference ref[0..ref_n)
 * that libunwind took in the same callback (frame 0 differs: another call
 * site in timed_cb), itself at least ref_min frames long (the chain and
 * the frames the stack has beyond it).  Every method but the frame-pointer walk must return
 * the reference exactly; the frame-pointer walk a prefix of it, ending
 * where the frame records end (main(): libc keeps none), past the chain. */
static bool nat_trace_ok(int kind, void *cb_ra, void *const *buf, int n, void *const *ref,
			 int ref_n, int ref_min, char *why, size_t whylen)
{
	if (ref_n < ref_min || ref_n >= NAT_SIZE) {
		snprintf(why, whylen, "the reference (unw_backtrace) has %d frames", ref_n);
		return false;
	}
	if (kind == MK_FP ? n < 35 || n >= ref_n : n != ref_n) {
		snprintf(why, whylen, "%d frames, the reference %d", n, ref_n);
		return false;
	}
	if (buf[0] != site0 || buf[1] != cb_ra) {
		snprintf(why, whylen, "frame 0 or 1 is not the call site");
		return false;
	}
	for (int k = 1; k < n; k++)
		if (buf[k] != ref[k]) {
			snprintf(why, whylen, "frame %d is %p, the reference %p", k, buf[k], ref[k]);
			return false;
		}
	return true;
}

struct on_thread {
	const struct build *b;
	int depth;
	struct run *r;
};

static void *on_thread_main(void *arg)
{
	struct on_thread *t = arg;
	t->b->entry(t->depth, timed_cb, t->r);
	return NULL;
}

/* A fiber: a makecontext() context on a stack of its own (mmap()ed, as
 * fiber libraries allocate theirs), entered with swapcontext() and
 * returning to it through uc_link; its stack ends in glibc's
 * __start_context. */
#define FIBER_STACK (1u << 20)
static ucontext_t fiber_back, fiber_ctx;
static struct on_thread *fiber_arg;
static bool fiber_named;

static void on_fiber_main(void)
{
	if (fiber_named)
		sframe_backtrace_set_stack(fiber_ctx.uc_stack.ss_sp, FIBER_STACK);
	on_thread_main(fiber_arg);
	sframe_backtrace_set_stack(NULL, 0);
}

static void run_on_fiber(struct on_thread *t, bool named)
{
	static void *stack;
	if (!stack) {
		stack = mmap(NULL, FIBER_STACK, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stack == MAP_FAILED)
			die("mmap");
	}
	if (getcontext(&fiber_ctx))
		die("getcontext");
	fiber_ctx.uc_stack.ss_sp = stack;
	fiber_ctx.uc_stack.ss_size = FIBER_STACK;
	fiber_ctx.uc_link = &fiber_back;
	fiber_arg = t;
	fiber_named = named;
	makecontext(&fiber_ctx, on_fiber_main, 0);
	if (swapcontext(&fiber_back, &fiber_ctx))
		die("swapcontext");
}

/* One batch: returns CPU ns per backtrace (*wall: wall-clock ns); checks
 * the frame count of every iteration and the PCs of the last. */
static double batch_wall(struct row *rw, int di, long iters, int cg, double *wall)
{
	const struct build *b = &builds[rw->build];
	int depth = depths[di];
	void *buf[NAT_SIZE + 8], *ref[NAT_SIZE + 8];
	memset(buf, 0, sizeof buf);
	struct run r = { .fn = mk_fn[rw->kind], .size = rw->nat ? NAT_SIZE : depth,
			 .iters = iters, .buf = buf, .cg = cg, .ref = rw->nat ? ref : NULL,
			 .to_ref = rw->to_ref };
	if (rw->thread) {
		/* The timing is the thread's own (timed_cb), not its creation. */
		struct on_thread t = { b, depth, &r };
		pthread_t th;
		if (pthread_create(&th, NULL, on_thread_main, &t) || pthread_join(th, NULL))
			die("pthread_create");
	} else if (rw->fiber) {
		struct on_thread t = { b, depth, &r };
		run_on_fiber(&t, rw->named);
	} else {
		b->entry(depth, timed_cb, &r);
	}
	char why[120];
	if (rw->nat) {
		/* Every call of the batch returned the last call's count. */
		int n = (int)(r.sum_n / iters);
		if (rw->kind != MK_EMPTY &&
		    (r.sum_n != iters * (long)n ||
		     !nat_trace_ok(rw->kind, r.cb_ra, buf, n, ref, r.ref_n,
				   /* a fiber's stack ends sooner: at __start_context,
				    * without main()'s frames and libc's */
				   rw->fiber ? 35 : 36, why, sizeof why))) {
			if (!rw->bad++)
				snprintf(rw->why, sizeof rw->why, "natural end: %s", why);
		}
		if (rw->kind != MK_EMPTY && rw->frames && rw->frames != n && !rw->bad++)
			snprintf(rw->why, sizeof rw->why, "natural end: %d frames, before %d", n,
				 rw->frames);
		rw->frames = n;
	} else if (r.sum_n != iters * depth) {
		if (!rw->bad++)
			snprintf(rw->why, sizeof rw->why, "depth %d: %ld frames in %ld calls",
				 depth, r.sum_n, iters);
	} else if (rw->kind != MK_EMPTY &&
		   !trace_ok(b, r.cb_ra, buf, depth, depth, why, sizeof why)) {
		if (!rw->bad++)
			snprintf(rw->why, sizeof rw->why, "depth %d: %s", depth, why);
	}
	rw->allocs += r.allocs;
	rw->calls += (unsigned long)iters;
	if (wall)
		*wall = (double)r.ns / (double)iters;
	return (double)r.cpu / (double)iters;
}

static double batch(struct row *rw, int di, long iters, int cg)
{
	return batch_wall(rw, di, iters, cg, NULL);
}

static long calibrate(struct row *rw, int di)
{
	long iters = 1;
	for (;;) {
		double el = batch(rw, di, iters, 0) * (double)iters;
		if (el > 1e6 || iters > (1L << 24)) {
			long n = (long)(BATCH_NS / (el / (double)iters));
			return n < 1 ? 1 : n;
		}
		iters *= 2;
	}
}

/* Establish site0 from the frame-pointer walk of the FP build, and check
 * the FP walk against the chain's own record of its return addresses. */
static void find_site0(void)
{
	void *buf[40];
	struct run r = { .fn = fp_backtrace, .size = 32, .iters = 1, .buf = buf };
	builds[B_FP].entry(32, timed_cb, &r);
	site0 = buf[0];
	char why[120];
	if (!trace_ok(&builds[B_FP], r.cb_ra, buf, (int)r.sum_n, 32, why, sizeof why))
		fprintf(stderr, "sfbench: frame-pointer walk disagrees with the chain: %s\n",
			why);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rng(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* order[0..n) := a random permutation of 0..n-1. */
static void shuffled(unsigned *order, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		order[k] = k;
	for (unsigned k = n; k > 1; k--) {
		unsigned j = rng(k), t = order[k - 1];
		order[k - 1] = order[j];
		order[j] = t;
	}
}

static void print_build_line(void)
{
	printf("Chain builds (same source, tests/bench/bench_chain.c):");
	for (int i = 0; i < B_DISTINCT; i++) {
		if (builds[i].ok)
			printf(" %s = %s, .sframe version %d;", builds[i].key, builds[i].label,
			       builds[i].sframe_version);
		else
			printf(" %s = not built;", builds[i].key);
	}
	printf("\n\n");
	if (!builds[B_V2].ok || !builds[B_V3].ok)
		printf("**V2/V3 skipped: toolchain unavailable** (%s%s%s missing).\n\n",
		       builds[B_V2].ok ? "" : "V2", !builds[B_V2].ok && !builds[B_V3].ok ? ", " : "",
		       builds[B_V3].ok ? "" : "V3");
	for (int i = 0; i < B_COUNT; i++)
		if (builds[i].ok && builds[i].sframe_version != builds[i].want_version)
			printf("**Warning**: build %s carries .sframe version %d, not %d.\n\n",
			       builds[i].key, builds[i].sframe_version, builds[i].want_version);
}

static double row_median(struct row *r, int di)
{
	double tmp[ROUNDS];
	memcpy(tmp, r->ns[di], sizeof tmp);
	return median(tmp, ROUNDS);
}

static double row_wall_median(struct row *r, int di)
{
	double tmp[ROUNDS];
	memcpy(tmp, r->wall[di], sizeof tmp);
	return median(tmp, ROUNDS);
}

/* Median over the rounds of num / den, each ratio taken within one round.
 * Every round runs every method once, so the two batches of a ratio ran
 * close in time: a slow stretch of this shared 2-vCPU VM slows both and
 * cancels out, where a ratio of medians would take its two medians from
 * different rounds. */
static double paired_ratio(const struct row *num, const struct row *den, int di)
{
	double v[ROUNDS];
	for (int r = 0; r < ROUNDS; r++)
		v[r] = num->ns[di][r] / den->ns[di][r];
	return median(v, ROUNDS);
}

static struct row *find_row(int kind, int build)
{
	for (int i = 0; i < nrows; i++)
		if (rows[i].kind == kind && rows[i].build == build)
			return &rows[i];
	return NULL;
}

/* PASS/FAIL lines are collected and printed after the tables. */
static char targets[4096];

static void target(bool pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void target(bool pass, const char *fmt, ...)
{
	size_t at = strlen(targets);
	va_list ap;
	va_start(ap, fmt);
	at += (size_t)snprintf(targets + at, sizeof targets - at, "TARGET: %s: ",
			       pass ? "PASS" : "FAIL");
	if (at < sizeof targets)
		at += (size_t)vsnprintf(targets + at, sizeof targets - at, fmt, ap);
	if (at < sizeof targets - 1)
		strcat(targets, "\n");
	va_end(ap);
}

static void print_targets(void)
{
	fputs(targets, stdout);
	targets[0] = 0;
}

/* The targets the walker is to reach, judged MET or MISSED (they fail
 * no run), are printed at once as "GOAL: MET|MISSED: ..." lines; run.sh gathers
 * them apart from the TARGET lines. */
static void goal(bool met, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void goal(bool met, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("GOAL: %s: ", met ? "MET" : "MISSED");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static int mode_time(void)
{
	char load0[32], load1[32];
	loadavg(load0, sizeof load0);
	load_builds();
	find_site0();
	add_method_rows();
	/* Warm-up: discovery, libgcc_s, libunwind caches, page faults. */
	for (int i = 0; i < nrows; i++)
		for (int d = 0; d < 3; d++)
			batch(&rows[i], d, 50, 0);
	for (int i = 0; i < nrows; i++)
		for (int d = 0; d < 3; d++)
			rows[i].iters[d] = calibrate(&rows[i], d);
	for (int i = 0; i < nrows; i++) {
		rows[i].allocs = rows[i].calls = 0;
		rows[i].bad = 0;
	}
	/* Interleaved rounds: every (method, depth) once per round, in a new
	 * random order each round. */
	int npairs = nrows * 3;
	unsigned order[3 * sizeof rows / sizeof rows[0]];
	for (int round = 0; round < ROUNDS; round++) {
		shuffled(order, (unsigned)npairs);
		for (int k = 0; k < npairs; k++) {
			struct row *rw = &rows[order[k] / 3];
			int d = order[k] % 3;
			rw->ns[d][round] = batch_wall(rw, d, rw->iters[d], 0, &rw->wall[d][round]);
		}
	}

	loadavg(load1, sizeof load1);
	printf("### Warm backtraces, normal context\n\n");
	print_build_line();
	printf("Median of %d interleaved rounds (each round runs every method and depth once, "
	       "in a new random order, ~%.0f ms per batch); the thread's CPU time per backtrace "
	       "and per frame (the last column is wall-clock time; load average %s at the "
	       "start, %s at the end). A backtrace is taken at the leaf of a chain of "
	       "`depth` recursive frames with a `depth`-entry buffer: every call must return "
	       "exactly `depth` frames, and the PCs must equal the chain's recorded return "
	       "addresses (which the frame-pointer walk reproduces).\n\n",
	       ROUNDS, BATCH_NS / 1e6, load0, load1);
	printf("| method | build | d=8 ns/bt | ns/frame | d=32 ns/bt | ns/frame | d=128 ns/bt | "
	       "ns/frame | allocs/bt | frames checked | d=32 wall ns/bt |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		printf("| %s | %s |", mk_name[r->kind], builds[r->build].key);
		for (int d = 0; d < 3; d++) {
			double m = row_median(r, d);
			printf(" %.0f | %.2f |", m, m / depths[d]);
		}
		printf(" %.3g | %s | %.0f |\n",
		       (double)r->allocs / (double)(r->calls ? r->calls : 1),
		       r->bad ? r->why : "ok", row_wall_median(r, 1));
	}
	printf("\n");

	/* Ratios and targets. */
	struct row *fp = find_row(MK_FP, B_FP);
	printf("Ratios (per frame, same depth): sframebt / FP walk, unw_backtrace / sframebt, "
	       "glibc / sframebt, each the median over the %d rounds of that round's ratio "
	       "(each round runs every method once, so a ratio pairs two batches taken close "
	       "in time and a slow stretch of this shared VM cancels out); the targets are "
	       "judged on these paired ratios.\n\n", ROUNDS);
	printf("| sframebt build | d | sframebt / FP | unw / sframebt | glibc / sframebt |\n");
	printf("|---|---:|---:|---:|---:|\n");
	for (int i = 0; i < N_WARM_BUILDS; i++) {
		int b = warm_builds[i];
		struct row *s = find_row(MK_SFB, b), *u = find_row(MK_UNW, b),
			   *g = find_row(MK_GLIBC, b);
		if (!s)
			continue;
		double r_fp[3], r_unw[3], r_glibc[3];
		for (int d = 0; d < 3; d++) {
			r_fp[d] = paired_ratio(s, fp, d);
			r_unw[d] = paired_ratio(u, s, d);
			r_glibc[d] = paired_ratio(g, s, d);
			printf("| %s | %d | %.2f | %.2f | %.1f |\n", builds[b].key, depths[d],
			       r_fp[d], r_unw[d], r_glibc[d]);
		}
		/* Targets for deep stacks, judged at d=128, where a walk's
		 * fixed cost weighs least; the shallower ratios alongside (the
		 * walker's targets at d=32 follow the table). */
		target(r_fp[2] <= 2.0 && !s->bad,
		       "%s warm per-frame <= 2x frame-pointer walk at d=128: %.2fx "
		       "(d=32 %.2fx, d=8 %.2fx)",
		       builds[b].label, r_fp[2], r_fp[1], r_fp[0]);
		target(r_unw[2] >= 3.0 && !s->bad,
		       "%s >= 3x faster than unw_backtrace at d=128: %.2fx (d=32 %.2fx, d=8 %.2fx)",
		       builds[b].label, r_unw[2], r_unw[1], r_unw[0]);
		target(r_glibc[2] >= 50.0 && !s->bad,
		       "%s >= 50x faster than glibc backtrace() at d=128: %.1fx (d=32 %.1fx, "
		       "d=8 %.1fx)",
		       builds[b].label, r_glibc[2], r_glibc[1], r_glibc[0]);
	}
	printf("\n");
	/* The walker's targets for the repeated chain, at depth 32 (a full
	 * buffer): one line each, every SFrame build's figure. */
	char g_fp[256] = "", g_unw[256] = "", g_glibc[256] = "";
	bool m_fp = true, m_unw = true, m_glibc = true;
	for (int i = 0; i < N_WARM_BUILDS; i++) {
		int b = warm_builds[i];
		struct row *s = find_row(MK_SFB, b), *u = find_row(MK_UNW, b),
			   *g = find_row(MK_GLIBC, b);
		if (!s)
			continue;
		double rf = paired_ratio(s, fp, 1), ru = paired_ratio(u, s, 1),
		       rg = paired_ratio(g, s, 1);
		m_fp = m_fp && !s->bad && rf <= 2.0;
		m_unw = m_unw && !s->bad && ru >= 4.0;
		m_glibc = m_glibc && !s->bad && rg >= 80.0;
		size_t l = strlen(g_fp);
		snprintf(g_fp + l, sizeof g_fp - l, "%s%s %.2fx", l ? ", " : "", builds[b].key, rf);
		l = strlen(g_unw);
		snprintf(g_unw + l, sizeof g_unw - l, "%s%s %.2fx", l ? ", " : "", builds[b].key, ru);
		l = strlen(g_glibc);
		snprintf(g_glibc + l, sizeof g_glibc - l, "%s%s %.1fx", l ? ", " : "", builds[b].key,
			 rg);
	}
	goal(m_fp, "repeated chain, depth 32: sframebt <= 2x the frame-pointer walk a frame (%s)",
	     g_fp);
	goal(m_unw, "repeated chain, depth 32: >= 4x faster than unw_backtrace() (%s)", g_unw);
	goal(m_glibc, "repeated chain, depth 32: >= 80x faster than glibc backtrace() (%s)",
	     g_glibc);
	target(sfb_rows_alloc_free(),
	       "zero allocations per sframebt backtrace after warm-up (malloc-family interposer, "
	       "all timed batches)");
	target(rows_all_good(), "every method returned exactly `depth` frames with the expected "
				"PCs in every timed batch");
	print_targets();
	return 0;
}

/* ---- SIGPROF samples -------------------------------------------------- */

/* AK_SFB_KEPT: sframebt on a dlopen()ed build that the process made stay
 * loaded first (sframe_backtrace_keep_loaded(): no per-walk lookup). */
/* The _NAT kinds walk to the stack's natural end (a NAT_SIZE buffer):
 * through the driver's frames and main() into libc, to _start. */
enum { AK_SFB, AK_UNW, AK_FP, AK_EMPTY, AK_SFB_KEPT, AK_VERIFY,
       AK_SFB_NAT, AK_SFB_KEPT_NAT, AK_FP_NAT, AK_UNW_NAT, AK_COUNT };
static const char *const ak_name[AK_COUNT] = {
	"sframebt sframe_backtrace_ucontext",
	"libunwind unw_init_local2(SIGNAL_FRAME)+unw_step",
	"frame-pointer walk from ucontext",
	"empty (rdtsc pair only)",
	"sframebt, object kept loaded (sframe_backtrace_keep_loaded)",
	"verify",
	"sframebt, natural end",
	"sframebt, natural end, object kept loaded",
	"frame-pointer walk, natural end (where frame records end)",
	"libunwind, natural end",
};

static bool ak_nat(int kind)
{
	return kind >= AK_SFB_NAT;
}

/* For AK_SFB_KEPT: make build bi's library stay loaded, so that walks
 * trust its description without glibc's lookup. */
static void keep_if_asked(int bi, int kind)
{
	if (kind != AK_SFB_KEPT && kind != AK_SFB_KEPT_NAT)
		return;
	if (bi >= B_LIBS_END || sframe_backtrace_keep_loaded((void *)builds[bi].work) != 0)
		die("sframe_backtrace_keep_loaded() failed on a dlopen()ed build");
}

#define ASYNC_SIZE 32
#define ASYNC_CAP 4096

struct aslot {
	int kind;
	uint32_t *cyc;
	unsigned n;
	unsigned bad;      /* frame count != ASYNC_SIZE */
	unsigned long allocs;
};

static struct {
	struct aslot slot[5];
	int nslots;
	unsigned k, target;
	volatile int stop;
	const struct build *b;
	void *work_ra;
	unsigned verify_n, verify_bad, truth_n, truth_bad, fp_mismatch;
	unsigned long extra;
	/* Natural-end slots (one a process, async-solo): in the warm-up,
	 * samples in the hash loop are checked against libunwind and set the
	 * frame count every later sample in the hash loop must return. */
	bool nat_warm;
	unsigned nat_frames, nat_verified, nat_mismatch, nat_outside;
} A;

static int unw_from_uc(void *uc, void **buf, int size)
{
	unw_cursor_t c;
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	int n = 0;
	do {
		unw_word_t ip;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		buf[n++] = (void *)ip;
	} while (n < size && unw_step(&c) > 0);
	return n;
}

static int fp_from_uc(void *ucv, void **buf, int size)
{
	const ucontext_t *uc = ucv;
	buf[0] = (void *)uc->uc_mcontext.gregs[REG_RIP];
	return fp_walk((const uintptr_t *)uc->uc_mcontext.gregs[REG_RBP], buf, 1, size);
}

/* A slot's recorded samples in ns: median, p10 and p90; the count used. */
static unsigned slot_percentiles(const struct aslot *sl, double *med, double *p10, double *p90)
{
	unsigned n = sl->n < ASYNC_CAP ? sl->n : ASYNC_CAP;
	double *v = malloc(sizeof(double) * (n ? n : 1));
	if (!v)
		die("malloc");
	for (unsigned j = 0; j < n; j++)
		v[j] = sl->cyc[j] * ns_per_tick;
	*med = median(v, n);
	*p10 = quantile(v, n, 0.1);
	*p90 = quantile(v, n, 0.9);
	free(v);
	return n;
}

static bool async_truth(void *const *buf, int n)
{
	if (n != ASYNC_SIZE)
		return false;
	for (int k = 1; k < n; k++)
		if (buf[k] != (k == 1 ? A.work_ra : A.b->ra[k - 1]))
			return false;
	return true;
}

/* A natural-end sample of n frames in buf.  Samples outside the hash
 * loop are counted apart (their stack is another).  In the warm-up, each
 * sample in the loop is checked against libunwind on the same context
 * (the frame-pointer walk must give a prefix of it) and against the
 * chain's recorded return addresses, sframebt's walk must stop
 * "outermost", and the count is set; after, every sample in the loop
 * must return that count. */
static bool nat_sample_ok(int kind, void *uc, void *const *buf, int n)
{
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	if (pc < A.b->work_lo || pc >= A.b->work_hi) {
		A.nat_outside++;
		return true;
	}
	if (!A.nat_warm)
		return n == (int)A.nat_frames;
	void *u[NAT_SIZE + 4];
	int nu = unw_from_uc(uc, u, NAT_SIZE);
	bool same = kind == AK_FP_NAT ? n > ASYNC_SIZE && n < nu : n == nu;
	if (same && memcmp(buf, u, sizeof(void *) * (size_t)n))
		same = false;
	for (int k = 1; same && k < ASYNC_SIZE; k++)
		if (buf[k] != (k == 1 ? A.work_ra : A.b->ra[k - 1]))
			same = false;
	if (same && (kind == AK_SFB_NAT || kind == AK_SFB_KEPT_NAT)) {
		static struct sframe_bt_frame f[NAT_SIZE]; /* one thread samples */
		struct sframe_bt_status st;
		if (sframe_backtrace_ex(uc, f, NAT_SIZE, 0, &st) != n ||
		    st.stop != SFRAME_BT_STOP_OUTERMOST)
			same = false;
	}
	if (!A.nat_frames)
		A.nat_frames = (unsigned)n;
	else if (A.nat_frames != (unsigned)n)
		same = false;
	A.nat_verified++;
	if (!same)
		A.nat_mismatch++;
	return same;
}

static void prof_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	int saved = errno;
	if (A.stop) {
		A.extra++;
		errno = saved;
		return;
	}
	struct aslot *sl = &A.slot[A.k++ % (unsigned)A.nslots];
	void *buf[NAT_SIZE + 4];
	if (sl->kind == AK_VERIFY) {
		void *u[ASYNC_SIZE + 4];
		int n1 = sframe_backtrace_ucontext(uc, buf, ASYNC_SIZE);
		int n2 = unw_from_uc(uc, u, ASYNC_SIZE);
		A.verify_n++;
		if (n1 != n2 || memcmp(buf, u, sizeof(void *) * (size_t)n1))
			A.verify_bad++;
		uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
		if (pc >= A.b->work_lo && pc < A.b->work_hi) {
			A.truth_n++;
			if (!async_truth(buf, n1))
				A.truth_bad++;
			if (A.b->frame_pointer) {
				int n3 = fp_from_uc(uc, u, ASYNC_SIZE);
				if (n3 != n1 || memcmp(buf, u, sizeof(void *) * (size_t)n1))
					A.fp_mismatch++;
			}
		}
		sl->n++;
	} else {
		unsigned long a0 = allocs_now();
		int n, size = ak_nat(sl->kind) ? NAT_SIZE : ASYNC_SIZE;
		uint64_t t0 = tsc_begin();
		switch (sl->kind) {
		case AK_SFB:
		case AK_SFB_KEPT:
		case AK_SFB_NAT:
		case AK_SFB_KEPT_NAT:
			n = sframe_backtrace_ucontext(uc, buf, size);
			break;
		case AK_UNW:
		case AK_UNW_NAT:
			n = unw_from_uc(uc, buf, size);
			break;
		case AK_FP:
		case AK_FP_NAT:
			n = fp_from_uc(uc, buf, size);
			break;
		default:
			n = ASYNC_SIZE;
			break;
		}
		uint64_t t1 = tsc_end();
		if (sl->n < ASYNC_CAP)
			sl->cyc[sl->n] = (uint32_t)(t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0);
		sl->n++;
		if (ak_nat(sl->kind)) {
			if (!nat_sample_ok(sl->kind, uc, buf, n))
				sl->bad++;
		} else if (n != ASYNC_SIZE) {
			sl->bad++;
		}
		sl->allocs += allocs_now() - a0;
	}
	bool done = true;
	for (int i = 0; i < A.nslots; i++)
		if (A.slot[i].n < A.target)
			done = false;
	if (done)
		A.stop = 1;
	errno = saved;
}

/* Time between two samples: ASYNC_WARM_NS in async, async-only (by
 * default) and the first async-solo table; SOLO_COLD_NS in the second. */
#define ASYNC_WARM_NS 125000L
#define SOLO_COLD_NS 1000000L
#define ASYNC_ROUNDS 5
#define ASYNC_PER_ROUND 600

struct aresult {
	struct aslot slot[5];
	int nslots;
	unsigned verify_n, verify_bad, truth_n, truth_bad, fp_mismatch;
	unsigned nat_frames, nat_verified, nat_mismatch, nat_outside;
};
static struct aresult ares[B_COUNT];

/* target samples of build bi's slots, interval_ns apart; keep: append
 * them to ares[bi] (else a warm-up, discarded). */
static void async_segment(int bi, struct bench_work *w, unsigned target, bool keep,
			  long interval_ns)
{
	struct aresult *R = &ares[bi];
	memset(&A, 0, sizeof A);
	A.b = &builds[bi];
	A.nslots = R->nslots;
	for (int i = 0; i < R->nslots; i++) {
		A.slot[i] = R->slot[i];
		A.slot[i].n = keep ? R->slot[i].n : 0;
	}
	A.target = target + (keep ? A.slot[0].n : 0);
	for (int i = 0; i < R->nslots; i++)
		if (A.slot[i].n != A.slot[0].n)
			die("async slot counts diverged");
	A.stop = 0;
	A.nat_warm = !keep;
	A.nat_frames = R->nat_frames;
	w->ra_out = &A.work_ra;

	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t))
		die("timer_create");
	/* First expiry after 1 ms: by then the worker is in the hash loop. */
	struct itimerspec its = { { interval_ns / 1000000000, interval_ns % 1000000000 },
				  { 0, 1000000 } };
	timer_settime(t, 0, &its, NULL);
	w->stop = &A.stop;
	builds[bi].entry(ASYNC_SIZE, builds[bi].work, w);
	timer_delete(t);
	R->nat_frames = A.nat_frames;
	R->nat_verified += A.nat_verified;
	R->nat_mismatch += A.nat_mismatch;
	R->nat_outside += A.nat_outside;
	if (!keep)
		return;
	/* Samples rotate over the slots, so each ends at exactly A.target. */
	for (int i = 0; i < R->nslots; i++)
		R->slot[i] = A.slot[i];
	R->verify_n += A.verify_n;
	R->verify_bad += A.verify_bad;
	R->truth_n += A.truth_n;
	R->truth_bad += A.truth_bad;
	R->fp_mismatch += A.fp_mismatch;
}

static struct bench_work async_setup(void)
{
	calibrate_tsc();
	size_t nwords = (64u << 20) / 8;
	uint64_t *words = malloc(nwords * 8);
	if (!words)
		die("malloc");
	for (size_t i = 0; i < nwords; i++)
		words[i] = i * 0x9e3779b97f4a7c15ull;
	struct bench_work w = { .words = words, .nwords = nwords };

	sig_install(SIGPROF, prof_handler, SA_RESTART);
	return w;
}

/* async-only METHOD(sframebt|sframebt-kept|unw|fp) BUILD SAMPLES [INTERVAL_US]: 100
 * warm-up samples, then SAMPLES samples of one method (for strace -c:
 * system calls per sample), with no other method's samples in between,
 * INTERVAL_US microseconds apart (default 125); the median, p10 and p90
 * go to stderr. */
static int mode_async_only(int argc, char **argv)
{
	if (argc < 5)
		die("async-only sframebt|sframebt-kept|unw|fp[-nat] BUILD SAMPLES [INTERVAL_US]");
	long interval_ns = ASYNC_WARM_NS;
	if (argc >= 6) {
		char *end;
		long us = strtol(argv[5], &end, 10);
		if (end == argv[5] || *end || us <= 0 || us > 10000000)
			die("async-only: INTERVAL_US must be 1..10000000");
		interval_ns = us * 1000;
	}
	load_builds();
	int bi = b_parse(argv[3]);
	if (!builds[bi].ok)
		die("build not available");
	struct bench_work w = async_setup();
	struct aresult *R = &ares[bi];
	R->nslots = 1;
	static const struct {
		const char *key;
		int kind;
	} ak_keys[] = { { "sframebt", AK_SFB },	  { "sframebt-kept", AK_SFB_KEPT },
			{ "unw", AK_UNW },	  { "fp", AK_FP },
			{ "sframebt-nat", AK_SFB_NAT }, { "sframebt-kept-nat", AK_SFB_KEPT_NAT },
			{ "unw-nat", AK_UNW_NAT }, { "fp-nat", AK_FP_NAT } };
	R->slot[0].kind = -1;
	for (size_t i = 0; i < sizeof ak_keys / sizeof ak_keys[0]; i++)
		if (!strcmp(argv[2], ak_keys[i].key))
			R->slot[0].kind = ak_keys[i].kind;
	if (R->slot[0].kind < 0)
		die("async-only: unknown method");
	if ((R->slot[0].kind == AK_FP || R->slot[0].kind == AK_FP_NAT) && !builds[bi].frame_pointer)
		die("the fp method needs the fp build");
	keep_if_asked(bi, R->slot[0].kind);
	R->slot[0].cyc = calloc(ASYNC_CAP, sizeof(uint32_t));
	async_segment(bi, &w, 100, false, interval_ns);
	async_segment(bi, &w, (unsigned)atoi(argv[4]), true, interval_ns);
	struct aslot *sl = &R->slot[0];
	double med, p10, p90;
	unsigned n = slot_percentiles(sl, &med, &p10, &p90);
	fprintf(stderr, "%s %s: %u samples %ld us apart, median %.0f ns, p10 %.0f, p90 %.0f, "
		"short %u, natural-end frames %u (%u of %u checked differ)\n", argv[2], argv[3], n,
		interval_ns / 1000, med, p10, p90, sl->bad, R->nat_frames, R->nat_mismatch,
		R->nat_verified);
	return sl->bad != 0 || R->nat_mismatch != 0;
}

static int mode_async(void)
{
	load_builds();
	struct bench_work w = async_setup();

	for (int bi = 0; bi < B_COUNT; bi++) {
		if (!builds[bi].ok)
			continue;
		struct aresult *R = &ares[bi];
		int kinds[5], nk = 0;
		if (builds[bi].frame_pointer)
			kinds[nk++] = AK_FP;
		kinds[nk++] = AK_SFB;
		kinds[nk++] = AK_UNW;
		kinds[nk++] = AK_EMPTY;
		kinds[nk++] = AK_VERIFY;
		R->nslots = nk;
		for (int i = 0; i < nk; i++) {
			R->slot[i].kind = kinds[i];
			R->slot[i].cyc = calloc(ASYNC_CAP, sizeof(uint32_t));
		}
		async_segment(bi, &w, 100, false, ASYNC_WARM_NS); /* warm-up, discarded */
	}
	for (int round = 0; round < ASYNC_ROUNDS; round++)
		for (int bi = 0; bi < B_COUNT; bi++)
			if (builds[bi].ok)
				async_segment(bi, &w, ASYNC_PER_ROUND, true, ASYNC_WARM_NS);

	printf("### SIGPROF handler, depth %d, methods rotating in one process\n\n", ASYNC_SIZE);
	printf("A POSIX timer (CLOCK_MONOTONIC, SIGEV_THREAD_ID to the worker, every %ld us; "
	       "per-thread CPU-time timers tick at only HZ here) sends SIGPROF while the "
	       "worker runs, at the leaf of a depth-%d chain of the build under test, a hash "
	       "over a %zu MiB buffer (one load per cache line). The handler rotates over the "
	       "methods sample by sample and times the call with rdtsc (%.3f ns/tick); buffer "
	       "of %d frames, every sample must fill it. %d rounds x %d samples per method, "
	       "interleaved across builds. A `verify` sample runs sframebt and libunwind on "
	       "the same context and compares all PCs; when the sample is in the hash loop "
	       "the PCs are also checked against the chain's recorded return addresses. "
	       "The `distinct` build is a chain of %d distinct functions in the main program "
	       "(frame pointers and SFrame V1, so the FP walk runs on the same code): a real "
	       "stack has a return address of its own in every frame, each its own entry in "
	       "sframebt's memo, where the recursive chain of the other builds has one for "
	       "all its frames. "
	       "The <= 300 ns target is judged on the one-unwinder-per-process table below, "
	       "not here: in this rotation each sframebt sample comes right after a libunwind "
	       "one (`verify`: ~20 us of work and ~60 system calls; on the fp and distinct "
	       "builds with an FP walk between), a cache state a profiler running one "
	       "unwinder does not have.\n\n",
	       ASYNC_WARM_NS / 1000, ASYNC_SIZE, (w.nwords * 8) >> 20, ns_per_tick, ASYNC_SIZE,
	       ASYNC_ROUNDS, ASYNC_PER_ROUND, ASYNC_SIZE);
	printf("| build | method | samples | median ns | p10 ns | p90 ns | short traces | "
	       "allocs |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (int bi = 0; bi < B_COUNT; bi++) {
		if (!builds[bi].ok)
			continue;
		struct aresult *R = &ares[bi];
		for (int i = 0; i < R->nslots; i++) {
			struct aslot *s = &R->slot[i];
			if (s->kind == AK_VERIFY)
				continue;
			double med, p10, p90;
			unsigned n = slot_percentiles(s, &med, &p10, &p90);
			printf("| %s | %s | %u | %.0f | %.0f | %.0f | %u | %lu |\n", builds[bi].key,
			       ak_name[s->kind], n, med, p10, p90, s->bad, s->allocs);
		}
	}
	printf("\n| build | verify samples | sframebt != libunwind | in hash loop | "
	       "!= recorded return addresses | FP walk differs |\n|---|---:|---:|---:|---:|---:|\n");
	bool all_ok = true;
	for (int bi = 0; bi < B_COUNT; bi++) {
		if (!builds[bi].ok)
			continue;
		struct aresult *R = &ares[bi];
		printf("| %s | %u | %u | %u | %u | %s |\n", builds[bi].key, R->verify_n,
		       R->verify_bad, R->truth_n, R->truth_bad,
		       builds[bi].frame_pointer ? (R->fp_mismatch ? "some (prologue samples)" : "0")
						: "n/a");
		if (builds[bi].frame_pointer && R->fp_mismatch)
			printf("\n(FP walk differs in %u samples of %s: a sample in a prologue, "
			       "before `mov %%rsp,%%rbp`, skips the caller.)\n\n", R->fp_mismatch,
			       builds[bi].key);
		if (R->verify_bad || R->truth_bad)
			all_ok = false;
		for (int i = 0; i < R->nslots; i++)
			if (R->slot[i].bad && R->slot[i].kind != AK_FP)
				all_ok = false;
	}
	printf("\n");
	target(all_ok, "async: sframebt and libunwind agree on every verify sample and fill "
		       "every %d-frame buffer", ASYNC_SIZE);
	print_targets();
	return 0;
}

/* ---- SIGPROF samples, one unwinder per process ------------------------
 * A profiler runs one unwinder: its samples follow one another, with only
 * the sampled program's work in between.  In the rotation above each
 * sframebt sample comes right after ~20 us of libunwind and its system
 * calls.  Here every process (a forked child)
 * samples with one method only; the rounds interleave the processes of all
 * cells, so a slow stretch of the machine is spread over all of them. */

#define SOLO_WARMUP 100
#define SOLO_MAGIC 0x736f6c6fu /* "solo" */
#define SOLO_COLD_ROUNDS 3 /* the 1 ms table: fewer rounds (each sample takes 8x longer) */
_Static_assert(ASYNC_ROUNDS * ASYNC_PER_ROUND <= ASYNC_CAP, "a cell holds all its samples");
_Static_assert(SOLO_COLD_ROUNDS * ASYNC_PER_ROUND <= ASYNC_CAP, "a cell holds all its samples");

/* What a child sends back through its pipe, in one write (< PIPE_BUF). */
struct solo_msg {
	uint32_t magic;
	int32_t bi, kind;
	uint32_t n, bad;
	uint32_t interval_us; /* echoed: the child sampled at the interval asked */
	uint64_t allocs;
	uint32_t nat_frames, nat_verified, nat_mismatch, nat_outside; /* natural-end kinds */
	uint32_t cyc[ASYNC_PER_ROUND];
};
_Static_assert(sizeof(struct solo_msg) <= PIPE_BUF, "one atomic pipe write");

struct solo_cell {
	int bi;
	struct aslot s; /* all rounds' samples, appended */
	unsigned nat_frames, nat_verified, nat_mismatch, nat_outside;
};

/* In the child: SOLO_WARMUP samples (discarded: discovery, the first
 * touches of copy-on-write pages), then ASYNC_PER_ROUND samples of kind,
 * interval_ns apart. */
static void solo_child(int bi, int kind, struct bench_work *w, int fd, long interval_ns)
{
	/* A child whose samples never come is killed by SIGALRM, and the
	 * parent then fails on its status instead of waiting forever. */
	alarm(20 + (unsigned)((SOLO_WARMUP + ASYNC_PER_ROUND) * interval_ns / 1000000000));
	static uint32_t cyc[ASYNC_CAP];
	struct aresult *R = &ares[bi];
	memset(R, 0, sizeof *R);
	R->nslots = 1;
	R->slot[0].kind = kind;
	R->slot[0].cyc = cyc;
	keep_if_asked(bi, kind);
	async_segment(bi, w, SOLO_WARMUP, false, interval_ns);
	async_segment(bi, w, ASYNC_PER_ROUND, true, interval_ns);
	static struct solo_msg m;
	m.magic = SOLO_MAGIC;
	m.bi = bi;
	m.kind = kind;
	m.n = R->slot[0].n;
	m.bad = R->slot[0].bad;
	m.interval_us = (uint32_t)(interval_ns / 1000);
	m.allocs = R->slot[0].allocs;
	m.nat_frames = R->nat_frames;
	m.nat_verified = R->nat_verified;
	m.nat_mismatch = R->nat_mismatch;
	m.nat_outside = R->nat_outside;
	if (m.n != ASYNC_PER_ROUND)
		_exit(3);
	memcpy(m.cyc, cyc, sizeof m.cyc);
	const char *p = (const char *)&m;
	size_t left = sizeof m;
	while (left) {
		ssize_t k = write(fd, p, left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			_exit(4);
		p += k;
		left -= (size_t)k;
	}
	_exit(0);
}

/* One visit of a cell: fork, collect the child's samples (interval_ns
 * apart), append them. */
static void solo_visit(struct solo_cell *c, struct bench_work *w, long interval_ns)
{
	int p[2];
	if (pipe(p))
		die("async-solo: pipe");
	fflush(stdout); /* nothing buffered for the child to print twice */
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		die("async-solo: fork");
	if (pid == 0) {
		close(p[0]);
		solo_child(c->bi, c->s.kind, w, p[1], interval_ns);
	}
	close(p[1]);
	static struct solo_msg m;
	memset(&m, 0, sizeof m);
	size_t got = 0;
	for (;;) {
		ssize_t k = read(p[0], (char *)&m + got, sizeof m - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		if (got == sizeof m)
			break;
	}
	close(p[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("async-solo: waitpid");
	char why[200];
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, sizeof why, "async-solo: child for %s/%s at %ld us %s %d",
			 builds[c->bi].key, ak_name[c->s.kind], interval_ns / 1000,
			 WIFSIGNALED(status) ? "killed by signal" : "exited with",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		die(why);
	}
	if (got != sizeof m || m.magic != SOLO_MAGIC || m.bi != c->bi || m.kind != c->s.kind ||
	    m.n != ASYNC_PER_ROUND || m.interval_us != (uint32_t)(interval_ns / 1000)) {
		snprintf(why, sizeof why, "async-solo: child for %s/%s at %ld us sent %zu bytes, "
			 "not its %u samples", builds[c->bi].key, ak_name[c->s.kind],
			 interval_ns / 1000, got, ASYNC_PER_ROUND);
		die(why);
	}
	if (c->s.n + m.n > ASYNC_CAP)
		die("async-solo: too many samples for a cell");
	memcpy(c->s.cyc + c->s.n, m.cyc, sizeof m.cyc);
	c->s.n += m.n;
	c->s.bad += m.bad;
	c->s.allocs += m.allocs;
	if (c->nat_frames && c->nat_frames != m.nat_frames)
		c->nat_mismatch++; /* another process, another count */
	c->nat_frames = m.nat_frames;
	c->nat_verified += m.nat_verified;
	c->nat_mismatch += m.nat_mismatch;
	c->nat_outside += m.nat_outside;
}

static const struct aslot *solo_find(const struct solo_cell *cells, int nc, int bi, int kind)
{
	for (int i = 0; i < nc; i++)
		if (cells[i].bi == bi && cells[i].s.kind == kind)
			return &cells[i].s;
	return NULL;
}

static void solo_add(struct solo_cell *cells, int *nc, int bi, int kind)
{
	struct solo_cell *c = &cells[(*nc)++];
	memset(c, 0, sizeof *c);
	c->bi = bi;
	c->s.kind = kind;
	c->s.cyc = calloc(ASYNC_CAP, sizeof(uint32_t));
	if (!c->s.cyc)
		die("calloc");
}

/* rounds rounds, each visiting every cell once in a new random order. */
static void solo_run(struct solo_cell *cells, int nc, int rounds, long interval_ns,
		     struct bench_work *w)
{
	unsigned order[4 * B_COUNT];
	for (int round = 0; round < rounds; round++) {
		shuffled(order, (unsigned)nc);
		for (int k = 0; k < nc; k++)
			solo_visit(&cells[order[k]], w, interval_ns);
	}
}

static const char solo_header[] =
	"| build | method | samples | median ns | p10 ns | p90 ns | short traces | "
	"allocs |\n|---|---|---:|---:|---:|---:|---:|---:|\n";

/* Prints a cell's table row; its median and p90 in ns. */
static void solo_row(const struct solo_cell *c, double *med, double *p90)
{
	double p10;
	unsigned n = slot_percentiles(&c->s, med, &p10, p90);
	printf("| %s | %s | %u | %.0f | %.0f | %.0f | %u | %lu |\n", builds[c->bi].key,
	       ak_name[c->s.kind], n, *med, p10, *p90, c->s.bad, c->s.allocs);
}

static int mode_async_solo(void)
{
	load_builds();
	/* The buffer is filled once, here: the children share it
	 * copy-on-write and only read it. */
	struct bench_work w = async_setup();
	struct solo_cell cells[4 * B_COUNT];
	int nc = 0;
	for (int bi = 0; bi < B_COUNT; bi++) {
		if (!builds[bi].ok)
			continue;
		if (builds[bi].frame_pointer)
			solo_add(cells, &nc, bi, AK_FP);
		solo_add(cells, &nc, bi, AK_SFB);
		if (bi != B_FP && bi < B_LIBS_END)
			solo_add(cells, &nc, bi, AK_SFB_KEPT);
		solo_add(cells, &nc, bi, AK_UNW);
		if (bi == B_FP)
			solo_add(cells, &nc, bi, AK_EMPTY); /* the timing's own cost, once */
	}
	solo_run(cells, nc, ASYNC_ROUNDS, ASYNC_WARM_NS, &w);

	printf("### SIGPROF handler, depth %d, one unwinder per process\n\n", ASYNC_SIZE);
	printf("The same timer (every %ld us), %zu MiB hash buffer, depth-%d chain and rdtsc "
	       "timing as the rotation above, but each process samples with one method only, "
	       "as a profiler runs one unwinder; in the rotation each sframebt sample comes "
	       "right after another method's (a libunwind `verify` sample). One cell is one forked child per round of a parent that "
	       "filled the buffer once (the children only read it, copy-on-write): %d warm-up "
	       "samples (discarded), then %d samples, sent back through a pipe. %d rounds, each "
	       "visiting every cell once in a new random order, so the processes of all "
	       "methods and builds interleave in time; median, p10 and p90 over all %d samples "
	       "of a cell. The `distinct` build's depth-%d chain is %d distinct functions (frame "
	       "pointers, SFrame V1: the FP walk and sframebt on the same code), because a "
	       "real stack has a return address of its own per frame, each a separate "
	       "(cold) sframebt memo entry, where the recursive chain has one for all its "
	       "frames.\n\n",
	       ASYNC_WARM_NS / 1000, (w.nwords * 8) >> 20, ASYNC_SIZE, SOLO_WARMUP,
	       ASYNC_PER_ROUND, ASYNC_ROUNDS, ASYNC_ROUNDS * ASYNC_PER_ROUND, ASYNC_SIZE,
	       ASYNC_SIZE);
	fputs(solo_header, stdout);
	double med_of[B_COUNT][AK_VERIFY];
	memset(med_of, 0, sizeof med_of);
	for (int i = 0; i < nc; i++) {
		const struct aslot *s = &cells[i].s;
		int bi = cells[i].bi;
		double med, p90;
		solo_row(&cells[i], &med, &p90);
		med_of[bi][s->kind] = med;
		if ((s->kind == AK_SFB && bi != B_FP) || s->kind == AK_SFB_KEPT) {
			const char *how =
				s->kind == AK_SFB_KEPT
					? ", dlopen()ed and kept loaded (sframe_backtrace_keep_loaded)"
				: bi < B_LIBS_END ? ", dlopen()ed"
						  : "";
			target(med <= 300.0 && s->bad == 0,
			       "%s%s: async sample at depth 32 <= 300 ns in the handler, one unwinder "
			       "per process (median %.0f ns, p90 %.0f ns, %u short traces)",
			       builds[bi].label, how, med, p90, s->bad);
		}
	}
	printf("\nRatios of the medians above, per build:\n\n"
	       "| build | sframebt / FP walk | libunwind / sframebt |\n|---|---:|---:|\n");
	for (int bi = 0; bi < B_COUNT; bi++) {
		if (!solo_find(cells, nc, bi, AK_SFB))
			continue;
		char fpr[32] = "-";
		if (solo_find(cells, nc, bi, AK_FP))
			snprintf(fpr, sizeof fpr, "%.2f", med_of[bi][AK_SFB] / med_of[bi][AK_FP]);
		printf("| %s | %s | %.1f |\n", builds[bi].key, fpr,
		       med_of[bi][AK_UNW] / med_of[bi][AK_SFB]);
	}
	printf("\n");
	print_targets();

	/* The same at 1 ms between samples, on fewer cells (no target). */
	struct solo_cell cold[4 * B_COUNT];
	int ncold = 0;
	for (int bi = 0; bi < B_COUNT; bi++) {
		if (!builds[bi].ok || (bi != B_MAIN && bi != B_DISTINCT && bi != B_V3))
			continue;
		if (builds[bi].frame_pointer)
			solo_add(cold, &ncold, bi, AK_FP);
		solo_add(cold, &ncold, bi, AK_SFB);
		if (bi == B_V3)
			solo_add(cold, &ncold, bi, AK_SFB_KEPT);
		if (bi == B_DISTINCT)
			solo_add(cold, &ncold, bi, AK_UNW);
	}
	solo_run(cold, ncold, SOLO_COLD_ROUNDS, SOLO_COLD_NS, &w);

	printf("\n### SIGPROF handler, depth %d, one unwinder per process, 1 ms between "
	       "samples\n\n", ASYNC_SIZE);
	printf("A profiler samples at 100 Hz to 4 kHz; %ld us is the warm end. At 1 kHz or "
	       "slower the program runs %ldx longer between two samples than above, so the "
	       "walker's code, sframebt's memo and the sampled stack itself are colder in the "
	       "caches (and the branch predictors) when a sample starts. The same cells as "
	       "above (one forked child per cell and round, %d warm-up samples discarded, "
	       "then %d samples), with the timer every %ld us, on fewer cells to keep "
	       "`make bench` short: the `main` and `v3` recursive chains (in the main program; "
	       "the dlopen()ed SFrame V3 library) and the `distinct` chain, sframebt on each, "
	       "the FP walk and libunwind on `distinct` only. %d rounds in random order, "
	       "median, p10 and p90 over all %d samples of a cell. The <= 300 ns target is "
	       "judged at %ld us (above), not here.%s\n\n",
	       ASYNC_WARM_NS / 1000, SOLO_COLD_NS / ASYNC_WARM_NS, SOLO_WARMUP, ASYNC_PER_ROUND,
	       SOLO_COLD_NS / 1000, SOLO_COLD_ROUNDS, SOLO_COLD_ROUNDS * ASYNC_PER_ROUND,
	       ASYNC_WARM_NS / 1000,
	       builds[B_V3].ok ? "" : " **v3 not built (toolchain unavailable): skipped.**");
	fputs(solo_header, stdout);
	double cold_of[B_COUNT][AK_VERIFY];
	memset(cold_of, 0, sizeof cold_of);
	for (int i = 0; i < ncold; i++) {
		double med, p90;
		solo_row(&cold[i], &med, &p90);
		cold_of[cold[i].bi][cold[i].s.kind] = med;
	}
	printf("\nRatios of the medians above, per build (the last column against the "
	       "%ld us table):\n\n"
	       "| build | sframebt / FP walk | libunwind / sframebt | sframebt 1 ms / %ld us |\n"
	       "|---|---:|---:|---:|\n", ASYNC_WARM_NS / 1000, ASYNC_WARM_NS / 1000);
	for (int bi = 0; bi < B_COUNT; bi++) {
		if (!solo_find(cold, ncold, bi, AK_SFB))
			continue;
		char fpr[32] = "-", unwr[32] = "-", warm[32] = "-";
		if (solo_find(cold, ncold, bi, AK_FP))
			snprintf(fpr, sizeof fpr, "%.2f", cold_of[bi][AK_SFB] / cold_of[bi][AK_FP]);
		if (solo_find(cold, ncold, bi, AK_UNW))
			snprintf(unwr, sizeof unwr, "%.1f", cold_of[bi][AK_UNW] / cold_of[bi][AK_SFB]);
		if (med_of[bi][AK_SFB] > 0)
			snprintf(warm, sizeof warm, "%.2f", cold_of[bi][AK_SFB] / med_of[bi][AK_SFB]);
		printf("| %s | %s | %s | %s |\n", builds[bi].key, fpr, unwr, warm);
	}
	printf("\n```\n");
	for (int bi = 0; bi < B_COUNT; bi++)
		if (solo_find(cold, ncold, bi, AK_SFB))
			printf("1 ms: %s: median %.0f ns (FP walk on distinct: %.0f ns)\n",
			       builds[bi].key, cold_of[bi][AK_SFB], cold_of[B_DISTINCT][AK_FP]);
	printf("```\n\n");
	return 0;
}

/* ---- FDE lookups in a large object --------------------------------------
 * The memo serves the stacks a program keeps walking; a PC seen for the
 * first time (a profiler's sample in code it has not sampled yet) takes
 * the FDE binary search and the FRE scan, over a table that is then cold.
 * This measures that lookup, with and without the coarse index, in a
 * library of 4096 small functions. */

#define LOOKUP_PCS 2048
#define LOOKUP_COLD 600
static const unsigned lookup_buckets[] = { 0, 64, 256, 1024 };
#define N_LB (sizeof lookup_buckets / sizeof lookup_buckets[0])

static struct {
	struct sfb_section s[N_LB];
	uint32_t *index[N_LB];
	uint64_t pcs[LOOKUP_PCS];
	uintptr_t sec;
	size_t len;
	unsigned long sink;
} L;

static int big_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	static const char suffix[] = "/libbench-big.so";
	const char *n = info->dlpi_name;
	size_t ln = n ? strlen(n) : 0;
	if (ln < sizeof suffix - 1 || strcmp(n + ln - (sizeof suffix - 1), suffix))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_SFRAME) {
			L.sec = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			L.len = info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

/* LOOKUP_PCS PCs inside random functions of s, each of which must have a
 * row. */
static void pick_pcs(const struct sfb_section *s, uint64_t *pcs, const char *fail)
{
	for (unsigned k = 0; k < LOOKUP_PCS; k++) {
		struct sfb_fde f;
		struct sfb_row r;
		sfb_fde_get(s, rng(s->num_fdes), &f);
		pcs[k] = f.start + rng(f.size ? f.size : 1);
		if (sfb_lookup(s, pcs[k], &r) != SFB_OK)
			die(fail);
	}
}

static void lookup_setup(void)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/libbench-big.so", exe_dir);
	if (!dlopen(path, RTLD_NOW | RTLD_LOCAL))
		die("libbench-big.so missing: run `make bench`");
	dl_iterate_phdr(big_cb, NULL);
	if (!L.sec)
		die("libbench-big.so has no PT_GNU_SFRAME");
	for (unsigned i = 0; i < N_LB; i++) {
		if (sfb_section_load(&L.s[i], (const void *)L.sec, L.len, L.sec, NULL, 0) != SFB_OK)
			die("libbench-big.so: .sframe rejected");
		if (lookup_buckets[i]) {
			L.index[i] = calloc(lookup_buckets[i], sizeof(uint32_t));
			if (!L.index[i] || !sfb_coarse_build(&L.s[i], L.index[i], lookup_buckets[i]))
				die("coarse index not built");
		}
	}
	/* Every variant must give the same row. */
	pick_pcs(&L.s[0], L.pcs, "lookup failed in libbench-big.so");
	for (unsigned k = 0; k < LOOKUP_PCS; k++) {
		struct sfb_row want, got;
		memset(&want, 0, sizeof want);
		sfb_lookup(&L.s[0], L.pcs[k], &want);
		for (unsigned i = 1; i < N_LB; i++) {
			memset(&got, 0, sizeof got);
			if (sfb_lookup(&L.s[i], L.pcs[k], &got) != SFB_OK ||
			    memcmp(&got, &want, sizeof got))
				die("a coarse index changed a lookup's answer");
		}
	}
}

/* Real code for the FRE scan: libbench-real.so is sframebt's own sources
 * built without frame pointers, as distributions build libraries, so a
 * function has a FRE at every push and pop; libbench-big.so's generated
 * functions have one or two.  Its .sframe is read from the file (the
 * object is never loaded), with the cache's 256-bucket index. */
static struct {
	struct sfb_section s;
	uint32_t index[SFB_COARSE_BUCKETS];
	uint64_t pcs[LOOKUP_PCS];
	const uint8_t *sec;
	size_t len;
} R;

/* The header's count, which the decoder checked against the FDEs'. */
static double fres_per_fde(const struct sfb_section *s)
{
	return (double)s->num_fres / s->num_fdes;
}

static void real_setup(void)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/libbench-real.so", exe_dir);
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr))
		die("libbench-real.so missing: run `make bench`");
	const uint8_t *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		die("libbench-real.so: mmap");
	/* Our own build's file: its headers are trusted. */
	const Elf64_Ehdr *eh = (const void *)m;
	const Elf64_Phdr *ph = (const void *)(m + eh->e_phoff);
	uint64_t vaddr = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_SFRAME) {
			R.sec = m + ph[i].p_offset;
			R.len = ph[i].p_filesz;
			vaddr = ph[i].p_vaddr;
		}
	/* FDE starts come out as the file's addresses. */
	if (!R.sec || sfb_section_load(&R.s, R.sec, R.len, vaddr, NULL, 0) != SFB_OK)
		die("libbench-real.so: no valid .sframe");
	sfb_coarse_build(&R.s, R.index, SFB_COARSE_BUCKETS);
	pick_pcs(&R.s, R.pcs, "lookup failed in libbench-real.so");
}

/* Variant i < N_LB: libbench-big.so with lookup_buckets[i]; N_LB: real code. */
#define N_LV (N_LB + 1)

/* Variant i's section and the PCs looked up in it. */
static const struct sfb_section *variant(unsigned i, const uint64_t **pcs)
{
	*pcs = i < N_LB ? L.pcs : R.pcs;
	return i < N_LB ? &L.s[i] : &R.s;
}

static void lookup_batch(unsigned i)
{
	struct sfb_row r;
	const uint64_t *pcs;
	const struct sfb_section *s = variant(i, &pcs);
	for (unsigned k = 0; k < LOOKUP_PCS; k++) {
		sfb_lookup(s, pcs[k], &r);
		L.sink += r.cfa.off;
	}
}

/* Evict the section and the indexes from every cache level. */
static void flush_lines(const void *p, size_t len)
{
	for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < (uintptr_t)p + len; a += 64)
		_mm_clflush((const void *)a);
}

static void lookup_flush(void)
{
	flush_lines((const void *)L.sec, L.len);
	for (unsigned i = 0; i < N_LB; i++)
		flush_lines(L.index[i], lookup_buckets[i] * sizeof(uint32_t));
	flush_lines(R.sec, R.len);
	flush_lines(R.index, sizeof R.index);
	_mm_mfence();
}

static int mode_lookup(void)
{
	calibrate_tsc();
	lookup_setup();
	real_setup();
	static double warm[N_LV][ROUNDS], cold[N_LV][LOOKUP_COLD];
	for (int round = 0; round < ROUNDS; round++) {
		unsigned order[N_LV];
		shuffled(order, N_LV);
		for (unsigned x = 0; x < N_LV; x++) {
			unsigned i = order[x];
			lookup_batch(i); /* warm the lines this variant reads */
			uint64_t t0 = cpu_ns();
			for (int rep = 0; rep < 10; rep++)
				lookup_batch(i);
			warm[i][round] = (double)(cpu_ns() - t0) / (10.0 * LOOKUP_PCS);
		}
	}
	for (unsigned k = 0; k < LOOKUP_COLD; k++)
		for (unsigned i = 0; i < N_LV; i++) {
			struct sfb_row r;
			const uint64_t *pcs;
			const struct sfb_section *s = variant(i, &pcs);
			lookup_flush();
			uint64_t t0 = tsc_begin();
			sfb_lookup(s, pcs[k % LOOKUP_PCS], &r);
			uint64_t t1 = tsc_end();
			L.sink += r.cfa.off;
			cold[i][k] = (double)(t1 - t0) * ns_per_tick;
		}
	printf("### FDE lookups in a large object\n\n");
	printf("`sfb_lookup` (FDE search + FRE scan) at %d random PCs in libbench-big.so: %u "
	       "functions, .sframe V%u of %zu bytes. Warm: median of %d interleaved rounds, "
	       "thread CPU time. Cold: the section and the index flushed from every cache "
	       "level (clflush) before each lookup, rdtsc, median of %d per variant, "
	       "interleaved. sframebt itself uses %d buckets per cached object.\n\n",
	       LOOKUP_PCS, L.s[0].num_fdes, L.s[0].version, L.len, ROUNDS, LOOKUP_COLD,
	       SFB_COARSE_BUCKETS);
	printf("| coarse index | memory per object | warm ns/lookup | cold ns/lookup | cold p90 |\n"
	       "|---|---:|---:|---:|---:|\n");
	for (unsigned i = 0; i < N_LB; i++) {
		char what[128], mem[32];
		if (lookup_buckets[i])
			snprintf(what, sizeof what, "%u buckets (%u used, %llu bytes of text each)",
				 lookup_buckets[i], L.s[i].coarse_n, 1ull << L.s[i].coarse_shift);
		else
			snprintf(what, sizeof what, "none (binary search over all FDEs)");
		snprintf(mem, sizeof mem, "%zu bytes", lookup_buckets[i] * sizeof(uint32_t));
		printf("| %s | %s | %.1f | %.0f | %.0f |\n", what, mem, median(warm[i], ROUNDS),
		       median(cold[i], LOOKUP_COLD), quantile(cold[i], LOOKUP_COLD, 0.9));
	}
	printf("\nThe same in real code: libbench-real.so, sframebt's own sources built as "
	       "distributions build libraries (-O2 -fomit-frame-pointer), so each function has a "
	       "FRE at every push and pop, which a lookup scans: %u functions with %.1f FREs "
	       "each on average, against %.1f in libbench-big.so; %d buckets for both.\n\n",
	       R.s.num_fdes, fres_per_fde(&R.s), fres_per_fde(&L.s[0]),
	       SFB_COARSE_BUCKETS);
	printf("| object | functions | FREs a function | warm ns/lookup | cold ns/lookup | cold p90 "
	       "|\n|---|---:|---:|---:|---:|---:|\n");
	for (unsigned i = 0; i < N_LB; i++)
		if (lookup_buckets[i] == SFB_COARSE_BUCKETS)
			printf("| libbench-big.so | %u | %.1f | %.1f | %.0f | %.0f |\n",
			       L.s[i].num_fdes, fres_per_fde(&L.s[i]),
			       median(warm[i], ROUNDS), median(cold[i], LOOKUP_COLD),
			       quantile(cold[i], LOOKUP_COLD, 0.9));
	printf("| libbench-real.so | %u | %.1f | %.1f | %.0f | %.0f |\n\n", R.s.num_fdes,
	       fres_per_fde(&R.s), median(warm[N_LB], ROUNDS), median(cold[N_LB], LOOKUP_COLD),
	       quantile(cold[N_LB], LOOKUP_COLD, 0.9));
	return L.sink == 42; /* keeps the lookups' results alive */
}

/* Instruction counts of the same lookups (run under callgrind). */
static void callgrind_lookups(void)
{
	lookup_setup();
	real_setup();
	for (unsigned i = 0; i < N_LV; i++) {
		lookup_batch(i);
		CALLGRIND_TOGGLE_COLLECT;
		lookup_batch(i);
		CALLGRIND_TOGGLE_COLLECT;
		char name[64];
		if (i < N_LB)
			snprintf(name, sizeof name, "sfb:lookup:b%u:0:%d", lookup_buckets[i],
				 LOOKUP_PCS);
		else
			snprintf(name, sizeof name, "sfb:lookup:real:0:%d", LOOKUP_PCS);
		CALLGRIND_DUMP_STATS_AT(name);
	}
}

/* ---- First call ------------------------------------------------------- */

struct bobj_ctx {
	int count;
	int (**hops)(int i, struct bobj_ctx *ctx);
	int (*leaf)(struct bobj_ctx *ctx);
};

enum { FC_SFB, FC_SFB_WARMUP, FC_UNW, FC_GLIBC, FC_COUNT };
static const char *const fc_key[FC_COUNT] = { "sframebt", "sframebt-warmup", "unw", "glibc" };
static const char *const fc_name[FC_COUNT] = { "sframebt", "sframebt after warmup()",
					       "unw_backtrace", "glibc backtrace()" };

static struct {
	int method, k;
	void *buf[256];
	int n, n2;
	uint64_t first_ns, second_ns;
	unsigned long allocs;
	long faults;
} FC;

static NOINLINE int fc_leaf(struct bobj_ctx *ctx)
{
	(void)ctx;
	bt_fn fn = FC.method == FC_UNW ? unw_backtrace
		   : FC.method == FC_GLIBC ? mk_fn[MK_GLIBC] : sframe_backtrace;
	void *buf2[256];
	int size = FC.k + 2;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	unsigned long a0 = allocs_now();
	uint64_t t0 = now_ns();
	if (RUNNING_ON_VALGRIND)
		CALLGRIND_TOGGLE_COLLECT; /* profile the first call alone */
	FC.n = fn(FC.buf, size);
	if (RUNNING_ON_VALGRIND)
		CALLGRIND_TOGGLE_COLLECT;
	uint64_t t1 = now_ns();
	FC.allocs = allocs_now() - a0;
	getrusage(RUSAGE_SELF, &ru1);
	FC.faults = (ru1.ru_minflt - ru0.ru_minflt) + (ru1.ru_majflt - ru0.ru_majflt);
	uint64_t t2 = now_ns();
	FC.n2 = fn(buf2, size);
	uint64_t t3 = now_ns();
	FC.first_ns = t1 - t0;
	FC.second_ns = t3 - t2;
	return FC.n;
}

static int mode_firstcall_child(int k, const char *method)
{
	int m = -1;
	for (int i = 0; i < FC_COUNT; i++)
		if (!strcmp(method, fc_key[i]))
			m = i;
	if (m < 0 || k < 1 || k > 100)
		die("firstcall-child K(1..100) sframebt|sframebt-warmup|unw|glibc");
	FC.method = m;
	FC.k = k;
	int (*hops[100])(int, struct bobj_ctx *);
	uintptr_t base[100];
	for (int i = 0; i < k; i++) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/objs/libbobj%03d.so", exe_dir, i);
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			die(dlerror());
		hops[i] = (int (*)(int, struct bobj_ctx *))dlsym(h, "bobj_hop");
		Dl_info di;
		if (!hops[i] || !dladdr((void *)hops[i], &di))
			die("bobj_hop");
		base[i] = (uintptr_t)di.dli_fbase;
	}
	uint64_t warm_ns = 0;
	if (m == FC_SFB_WARMUP) {
		uint64_t t0 = now_ns();
		sframe_backtrace_warmup();
		warm_ns = now_ns() - t0;
	}
	struct bobj_ctx ctx = { k, hops, fc_leaf };
	hops[0](0, &ctx);
	/* buf[0] is in fc_leaf, buf[1 + j] in object k - 1 - j, buf[k + 1] in
	 * this function. */
	int crossed = 0;
	for (int j = 0; j < k && 1 + j < FC.n; j++) {
		Dl_info di;
		if (dladdr((char *)FC.buf[1 + j] - 1, &di) &&
		    (uintptr_t)di.dli_fbase == base[k - 1 - j])
			crossed++;
	}
	struct sfb_cache_stats st = { 0, 0, 0, 0 };
	if (m == FC_SFB || m == FC_SFB_WARMUP)
		sfb_objcache_stats(&st);
	printf("%d %d %llu %llu %d %d %d %lu %llu %u %u %ld\n", m, k,
	       (unsigned long long)FC.first_ns, (unsigned long long)FC.second_ns, FC.n, FC.n2,
	       crossed, FC.allocs, (unsigned long long)warm_ns, st.slots_used, st.discoveries,
	       FC.faults);
	return 0;
}

#define FC_REPS 15

struct mirror_slot { /* objcache.c's struct sfb_slot */
	_Atomic uint32_t seq;
	struct sfb_object obj;
};

static int mode_firstcall(void)
{
	static const int ks[3] = { 1, 10, 100 };
	double first[FC_COUNT][3][FC_REPS], second[FC_COUNT][3][FC_REPS],
		warm[FC_COUNT][3][FC_REPS];
	int bad[FC_COUNT][3];
	unsigned slots100 = 0, disc100 = 0;
	unsigned long allocs[FC_COUNT][3];
	long faults[FC_COUNT][3];
	memset(faults, 0, sizeof faults);
	memset(bad, 0, sizeof bad);
	memset(allocs, 0, sizeof allocs);
	for (int rep = 0; rep < FC_REPS; rep++)
		for (int ki = 0; ki < 3; ki++)
			for (int m = 0; m < FC_COUNT; m++) {
				int p[2];
				if (pipe(p))
					die("pipe");
				pid_t pid = fork();
				if (pid == 0) {
					dup2(p[1], 1);
					close(p[0]);
					close(p[1]);
					char kk[16];
					snprintf(kk, sizeof kk, "%d", ks[ki]);
					execl("/proc/self/exe", "sfbench", "firstcall-child", kk,
					      fc_key[m], (char *)NULL);
					_exit(127);
				}
				close(p[1]);
				char line[512] = "";
				FILE *f = fdopen(p[0], "r");
				if (!f || !fgets(line, sizeof line, f))
					line[0] = 0;
				if (f)
					fclose(f);
				int status;
				waitpid(pid, &status, 0);
				int mm, k, n, n2, crossed;
				unsigned long long a, b, wn;
				unsigned long al;
				unsigned su, di;
				long pf;
				if (sscanf(line, "%d %d %llu %llu %d %d %d %lu %llu %u %u %ld", &mm, &k,
					   &a, &b, &n, &n2, &crossed, &al, &wn, &su, &di, &pf) != 12 ||
				    !WIFEXITED(status) || WEXITSTATUS(status)) {
					bad[m][ki]++;
					first[m][ki][rep] = second[m][ki][rep] = warm[m][ki][rep] = 0;
					continue;
				}
				first[m][ki][rep] = (double)a;
				second[m][ki][rep] = (double)b;
				warm[m][ki][rep] = (double)wn;
				allocs[m][ki] += al;
				faults[m][ki] += pf;
				if (n != k + 2 || n2 != k + 2 || crossed != k)
					bad[m][ki]++;
				if (m == FC_SFB && k == 100) {
					slots100 = su;
					disc100 = di;
				}
			}

	printf("### First call\n\n");
	printf("Fresh process per measurement (%d per cell, interleaved; median shown): dlopen K "
	       "small objects (objs/libbobjNNN.so: 10 FDEs each, -Wa,--gsframe), then one "
	       "call chain through all of them (executable -> obj 0 -> ... -> obj K-1 -> leaf); "
	       "the leaf times its first backtrace (buffer K+2: every object's frame plus the "
	       "two executable frames; each method must return K+2 frames crossing all K "
	       "objects), then a second one.\n\n", FC_REPS);
	printf("| objects | method | first call us | second call us | warmup() us | allocs in "
	       "first call | page faults in first call | checks |\n"
	       "|---:|---|---:|---:|---:|---:|---:|---|\n");
	double sfb100 = 0;
	bool fc_ok = true;
	for (int ki = 0; ki < 3; ki++)
		for (int m = 0; m < FC_COUNT; m++) {
			double fm = median(first[m][ki], FC_REPS) / 1000.0,
			       sm = median(second[m][ki], FC_REPS) / 1000.0,
			       wm = median(warm[m][ki], FC_REPS) / 1000.0;
			char wbuf[32] = "-";
			if (m == FC_SFB_WARMUP)
				snprintf(wbuf, sizeof wbuf, "%.1f", wm);
			printf("| %d | %s | %.1f | %.2f | %s | %.1f | %.1f | %s |\n", ks[ki], fc_name[m],
			       fm, sm, wbuf, (double)allocs[m][ki] / FC_REPS,
			       (double)faults[m][ki] / FC_REPS, bad[m][ki] ? "**FAILED**" : "ok");
			if (m == FC_SFB && ks[ki] == 100)
				sfb100 = fm;
			if (bad[m][ki] && (m == FC_SFB || m == FC_SFB_WARMUP))
				fc_ok = false;
		}
	printf("\n");
	size_t slot = sizeof(struct mirror_slot);
	printf("Memory: the object cache is one static table of %d slots x %zu bytes = %zu "
	       "bytes (%.0f KiB, in .bss: untouched pages cost nothing; slots are handed out "
	       "densely, so the first %zu objects share a page) and %d two-byte hash "
	       "positions; each object seen "
	       "uses one slot (%zu bytes: struct sfb_object is %zu bytes) and no heap, the "
	       "SFrame data is read in place from the object's mapping. After the first call "
	       "with 100 objects: %u slots used, %u objects described.\n\n",
	       SFB_CACHE_SLOTS, slot, slot * SFB_CACHE_SLOTS,
	       (double)(slot * SFB_CACHE_SLOTS) / 1024.0, (size_t)4096 / slot, SFB_CACHE_SLOTS, slot,
	       sizeof(struct sfb_object),
	       slots100, disc100);
	target(sfb100 <= 1000.0 && fc_ok,
	       "first sframebt backtrace with 100 objects loaded <= 1 ms (median %.1f us)",
	       sfb100);
	unsigned long fa = 0;
	for (int ki = 0; ki < 3; ki++)
		fa += allocs[FC_SFB][ki];
	target(fa == 0, "no allocation in sframebt's first call (%lu over all processes)", fa);
	print_targets();
	return 0;
}

/* ---- Natural-end walks ------------------------------------------------
 * The tables above take every backtrace with a buffer of exactly `depth`
 * entries, so a walk stops at a full buffer inside the chain.  A user's
 * buffer is larger than the stack, and the walk goes on to the stack's
 * natural end: through the driver's own frames and main() into libc
 * (__libc_start_call_main, __libc_start_main: .eh_frame CFI, no SFrame)
 * and to _start, whose CFI marks the return address undefined.  The
 * frame-pointer walk ends earlier, where frame records end: main()'s
 * record holds the frame pointer libc left, which is no frame record, so
 * it stops after main()'s return address into libc.  Each method is
 * compared per frame it returned (and per call, the frame-pointer walk
 * returning those few frames fewer). */

#define NAT_DEPTH 32
#define NAT_DI 1 /* depths[1] == NAT_DEPTH */
_Static_assert(NAT_DEPTH == 32, "depths[NAT_DI]");

struct nat_probe {
	struct sframe_bt_frame f[NAT_SIZE];
	struct sframe_bt_status st;
	int n;
	int first_cfi;  /* index of the first frame unwound with a CFI row */
	int ncfi;       /* frames unwound with CFI rows */
};

static NOINLINE int nat_probe_cb(void *arg)
{
	struct nat_probe *p = arg;
	p->n = sframe_backtrace_ex(NULL, p->f, NAT_SIZE, 0, &p->st);
	p->first_cfi = -1;
	p->ncfi = 0;
	for (int k = 0; k < p->n; k++)
		if (p->f[k].source == SFRAME_BT_FROM_EH_FRAME) {
			if (p->first_cfi < 0)
				p->first_cfi = k;
			p->ncfi++;
		}
	return p->n;
}

/* Where the frames of a natural-end walk are, grouped: "sfbench x5
 * (SFrame), libc.so.6:__libc_start_call_main (CFI), ...". */
static void nat_describe(const struct nat_probe *p, char *out, size_t len)
{
	size_t at = 0;
	out[0] = 0;
	for (int k = 0; k < p->n;) {
		char what[160];
		Dl_info di;
		const char *obj = "?", *sym = NULL;
		if (dladdr((char *)p->f[k].pc - (k > 0), &di)) {
			obj = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
			obj = obj ? obj + 1 : di.dli_fname ? di.dli_fname : "?";
			sym = di.dli_sname;
		}
		const char *src = p->f[k].source == SFRAME_BT_FROM_EH_FRAME ? "CFI"
				  : p->f[k].source == SFRAME_BT_FROM_SFRAME   ? "SFrame"
				  : p->f[k].source == SFRAME_BT_FROM_CONTEXT  ? "start"
									      : "other";
		snprintf(what, sizeof what, "%s%s%s (%s)", obj, sym ? ":" : "", sym ? sym : "", src);
		int run = 1;
		while (k + run < p->n && p->f[k + run].source == p->f[k].source) {
			Dl_info d2;
			if (!dladdr((char *)p->f[k + run].pc - 1, &d2) || d2.dli_fname != di.dli_fname ||
			    d2.dli_sname != di.dli_sname)
				break;
			run++;
		}
		at += (size_t)snprintf(out + at, at < len ? len - at : 0, "%s%s", k ? ", " : "",
				       what);
		if (run > 1 && at < len)
			at += (size_t)snprintf(out + at, len - at, " x%d", run);
		k += run;
		if (at >= len)
			break;
	}
}

static const int nat_builds[] = { B_V1, B_V2, B_V3, B_LINKED, B_MAIN };
#define N_NAT_BUILDS (int)(sizeof nat_builds / sizeof nat_builds[0])

static struct row *add_nat_row(int kind, int build, bool nat)
{
	int before = nrows;
	add_row(kind, build);
	if (nrows == before)
		return NULL;
	rows[before].nat = nat;
	return &rows[before];
}

/* The natural-end rows, and the buffer-full depth-32 rows of the same
 * methods and builds for the cost of the frames past the chain. */
static void add_nat_rows(void)
{
	add_nat_row(MK_FP, B_FP, true);
	add_nat_row(MK_SFB, B_FP, true);
	for (int i = 0; i < N_NAT_BUILDS; i++) {
		add_nat_row(MK_SFB, nat_builds[i], true);
		add_nat_row(MK_UNW, nat_builds[i], true);
		add_nat_row(MK_GLIBC, nat_builds[i], true);
	}
	add_nat_row(MK_FP, B_FP, false);
	add_nat_row(MK_SFB, B_FP, false);
	for (int i = 0; i < N_NAT_BUILDS; i++)
		add_nat_row(MK_SFB, nat_builds[i], false);
	/* To _start with a buffer of exactly the natural frame count: the same
	 * frames, but the walk ends with a full buffer, not at _start's row
	 * (which marks the return address undefined). */
	struct row *r = add_nat_row(MK_SFB, B_MAIN, true);
	if (r)
		r->to_ref = true;
	/* On a thread: the natural end is clone3, through start_thread. */
	static const int on_thread[] = { MK_FP, MK_SFB, MK_UNW, MK_GLIBC };
	for (size_t i = 0; i < sizeof on_thread / sizeof on_thread[0]; i++) {
		r = add_nat_row(on_thread[i], on_thread[i] == MK_FP ? B_FP : B_MAIN, true);
		if (r)
			r->thread = true;
	}
	/* On a fiber: the natural end is __start_context.  No frame-pointer
	 * walk: makecontext() leaves no frame record to end it. */
	static const int on_fiber[] = { MK_SFB, MK_UNW, MK_GLIBC };
	for (size_t i = 0; i < sizeof on_fiber / sizeof on_fiber[0]; i++) {
		r = add_nat_row(on_fiber[i], B_MAIN, true);
		if (r)
			r->fiber = true;
	}
	r = add_nat_row(MK_SFB, B_MAIN, true);
	if (r)
		r->fiber = r->named = true;
}

static struct row *find_nat_row(int kind, int build, bool nat)
{
	for (int i = 0; i < nrows; i++)
		if (rows[i].kind == kind && rows[i].build == build && rows[i].nat == nat &&
		    !rows[i].to_ref && !rows[i].thread && !rows[i].fiber)
			return &rows[i];
	return NULL;
}

/* Median over the rounds of (num / num_frames) / (den / den_frames). */
static double paired_frame_ratio(const struct row *num, const struct row *den, int di,
				 int num_frames, int den_frames)
{
	double v[ROUNDS];
	for (int r = 0; r < ROUNDS; r++)
		v[r] = (num->ns[di][r] / num_frames) / (den->ns[di][r] / den_frames);
	return median(v, ROUNDS);
}

static void nat_warm(void)
{
	char load0[32], load1[32];
	loadavg(load0, sizeof load0);
	static struct nat_probe probe;
	builds[B_MAIN].entry(NAT_DEPTH, nat_probe_cb, &probe);
	char where[2048];
	nat_describe(&probe, where, sizeof where);
	add_nat_rows();
	for (int i = 0; i < nrows; i++)
		batch(&rows[i], NAT_DI, 50, 0);
	for (int i = 0; i < nrows; i++)
		rows[i].iters[NAT_DI] = calibrate(&rows[i], NAT_DI);
	for (int i = 0; i < nrows; i++) {
		rows[i].allocs = rows[i].calls = 0;
		rows[i].bad = 0;
		rows[i].frames = 0;
	}
	unsigned order[sizeof rows / sizeof rows[0]];
	for (int round = 0; round < ROUNDS; round++) {
		shuffled(order, (unsigned)nrows);
		for (int k = 0; k < nrows; k++) {
			struct row *rw = &rows[order[k]];
			rw->ns[NAT_DI][round] = batch_wall(rw, NAT_DI, rw->iters[NAT_DI], 0,
							   &rw->wall[NAT_DI][round]);
		}
	}
	loadavg(load1, sizeof load1);
	struct row *fpn = find_nat_row(MK_FP, B_FP, true), *sfn = find_nat_row(MK_SFB, B_FP, true);

	printf("### Natural-end walks, depth %d, warm\n\n", NAT_DEPTH);
	printf("The same chains, call site and timing as the warm table (median of %d "
	       "interleaved rounds, thread CPU time, ~%.0f ms per batch; load average %s at the "
	       "start, %s at the end), but with a %d-entry buffer, larger than the stack: "
	       "every walk goes from the leaf of the depth-%d chain through the chain's entry, "
	       "the driver's own frames and main() into libc and on to the stack's natural end. "
	       "Seen by sframe_backtrace_ex() from the same place (main build): %d frames, "
	       "stop \"%s\", %d of them found with .eh_frame CFI rows (from frame %d); each "
	       "frame named by the object its PC is in and the kind of row that found it (the "
	       "row of the frame below): %s. "
	       "Every trace is checked against the one unw_backtrace() takes in the same "
	       "callback (untimed): sframebt, libunwind and glibc must return it exactly. The "
	       "frame-pointer walk (FP build) ends where frame records end: main()'s record "
	       "holds whatever libc left in the frame-pointer register, not a frame record, "
	       "so it stops after main()'s return address into libc, a prefix of the "
	       "reference (checked) %d frame(s) short. To compare fairly, each method is "
	       "charged per frame it returned, and per call (where the frame-pointer walk does "
	       "less work). The `buffer full` rows are the depth-%d walks of the warm table, "
	       "in the same rounds: the difference is what the frames past the chain cost. "
	       "`on a thread`: the chain runs on a new thread (created outside the timing), "
	       "whose stack ends in libc's start_thread and clone3. `on a fiber`: on a "
	       "makecontext() context with a stack of its own (1 MiB, mmap()ed), whose stack "
	       "ends in libc's __start_context; `its stack named`: the fiber names it with "
	       "sframe_backtrace_set_stack().\n\n",
	       ROUNDS, BATCH_NS / 1e6, load0, load1, NAT_SIZE, NAT_DEPTH, probe.n,
	       sframe_bt_stop_name(probe.st.stop), probe.ncfi, probe.first_cfi, where,
	       sfn && fpn ? sfn->frames - fpn->frames : -1, NAT_DEPTH);
	printf("| method | build | walk | frames | ns/call | ns/frame | allocs/call | "
	       "frames checked | wall ns/call |\n|---|---|---|---:|---:|---:|---:|---|---:|\n");
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		int fr = r->nat ? r->frames : NAT_DEPTH;
		double m = row_median(r, NAT_DI);
		printf("| %s | %s | %s | %d | %.0f | %.2f | %.3g | %s | %.0f |\n", mk_name[r->kind],
		       builds[r->build].key,
		       r->thread   ? "natural end, on a thread"
		       : r->named  ? "natural end, on a fiber, its stack named"
		       : r->fiber  ? "natural end, on a fiber"
		       : r->to_ref ? "to _start, buffer = frames"
		       : r->nat	   ? "natural end"
				   : "buffer full",
		       fr, m,
		       fr ? m / fr : 0, (double)r->allocs / (double)(r->calls ? r->calls : 1),
		       r->bad ? r->why : "ok", row_wall_median(r, NAT_DI));
	}
	printf("\n");

	printf("Ratios, each the median over the %d rounds of that round's ratio: sframebt "
	       "against the frame-pointer walk per frame (each divided by its own frame count) "
	       "and per call; libunwind and glibc against sframebt (the same frames: per call "
	       "and per frame alike); and what a frame past the chain costs sframebt, "
	       "(natural end - buffer full) / (frames - %d), paired in the round.\n\n",
	       ROUNDS, NAT_DEPTH);
	printf("| sframebt build | frames | sframebt / FP per frame | sframebt / FP per call | "
	       "unw / sframebt | glibc / sframebt | ns a frame past the chain |\n"
	       "|---|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < N_NAT_BUILDS; i++) {
		int b = nat_builds[i];
		struct row *s = find_nat_row(MK_SFB, b, true), *u = find_nat_row(MK_UNW, b, true),
			   *g = find_nat_row(MK_GLIBC, b, true), *f = find_nat_row(MK_SFB, b, false);
		if (!s || !u || !g || !f || !fpn || !fpn->frames || !s->frames)
			continue;
		double r_fpf = paired_frame_ratio(s, fpn, NAT_DI, s->frames, fpn->frames);
		double r_fpc = paired_ratio(s, fpn, NAT_DI);
		double r_unw = paired_ratio(u, s, NAT_DI), r_glibc = paired_ratio(g, s, NAT_DI);
		double past[ROUNDS];
		for (int r = 0; r < ROUNDS; r++)
			past[r] = (s->ns[NAT_DI][r] - f->ns[NAT_DI][r]) / (s->frames - NAT_DEPTH);
		printf("| %s | %d | %.2f | %.2f | %.2f | %.1f | %.2f |\n", builds[b].key, s->frames,
		       r_fpf, r_fpc, r_unw, r_glibc, median(past, ROUNDS));
		bool ok = !s->bad && !fpn->bad;
		target(r_fpf <= 2.0 && ok,
		       "%s, natural end (%d frames) at depth %d, warm: per frame <= 2x the "
		       "frame-pointer walk to its own end (%d frames): %.2fx (per call %.2fx)",
		       builds[b].label, s->frames, NAT_DEPTH, fpn->frames, r_fpf, r_fpc);
		target(r_unw >= 3.0 && ok && !u->bad,
		       "%s, natural end at depth %d, warm: >= 3x faster than unw_backtrace: %.2fx",
		       builds[b].label, NAT_DEPTH, r_unw);
		target(r_glibc >= 50.0 && ok && !g->bad,
		       "%s, natural end at depth %d, warm: >= 50x faster than glibc backtrace(): "
		       "%.1fx", builds[b].label, NAT_DEPTH, r_glibc);
	}
	printf("\n");
	for (int i = 0; i < nrows; i++) {
		struct row *t = &rows[i], *s = find_nat_row(MK_SFB, t->build, true);
		if (!t->to_ref || !s || !fpn || !fpn->frames || !t->frames)
			continue;
		double last[ROUNDS];
		for (int r = 0; r < ROUNDS; r++)
			last[r] = s->ns[NAT_DI][r] - t->ns[NAT_DI][r];
		printf("- %s, `to _start, buffer = frames`: a buffer of exactly %d entries, the same "
		       "frames ending with a full buffer instead of at _start's row (the return "
		       "address undefined): %.0f ns a call, %.2fx the frame-pointer walk per frame, "
		       "%.0f ns less than the natural end (paired).\n",
		       builds[t->build].key, t->frames, row_median(t, NAT_DI),
		       paired_frame_ratio(t, fpn, NAT_DI, t->frames, fpn->frames),
		       median(last, ROUNDS));
	}
	struct row *th[MK_COUNT] = { NULL };
	for (int i = 0; i < nrows; i++)
		if (rows[i].thread)
			th[rows[i].kind] = &rows[i];
	if (th[MK_FP] && th[MK_SFB] && th[MK_UNW] && th[MK_GLIBC] && th[MK_FP]->frames &&
	    th[MK_SFB]->frames)
		printf("- main, `natural end, on a thread`: the chain on a new thread, whose stack "
		       "ends in libc's start_thread and clone3 (%d frames; the frame-pointer walk "
		       "%d): sframebt / FP %.2fx per frame (%.2fx per call), unw / sframebt "
		       "%.2fx, glibc / sframebt %.1fx (paired).\n",
		       th[MK_SFB]->frames, th[MK_FP]->frames,
		       paired_frame_ratio(th[MK_SFB], th[MK_FP], NAT_DI, th[MK_SFB]->frames,
					  th[MK_FP]->frames),
		       paired_ratio(th[MK_SFB], th[MK_FP], NAT_DI),
		       paired_ratio(th[MK_UNW], th[MK_SFB], NAT_DI),
		       paired_ratio(th[MK_GLIBC], th[MK_SFB], NAT_DI));
	struct row *fb[MK_COUNT] = { NULL }, *on_stack = find_nat_row(MK_SFB, B_MAIN, true);
	struct row *named = NULL;
	for (int i = 0; i < nrows; i++)
		if (rows[i].named)
			named = &rows[i];
		else if (rows[i].fiber)
			fb[rows[i].kind] = &rows[i];
	if (fb[MK_SFB] && fb[MK_UNW] && fb[MK_GLIBC] && on_stack && fb[MK_SFB]->frames &&
	    on_stack->frames)
		printf("- main, `natural end, on a fiber`: the chain on a makecontext() fiber, "
		       "whose stack ends in libc's __start_context (%d frames): sframebt %.0f ns a "
		       "call, %.2fx its walk on the thread's stack per frame, unw / sframebt "
		       "%.2fx, glibc / sframebt %.1fx (paired).\n",
		       fb[MK_SFB]->frames, row_median(fb[MK_SFB], NAT_DI),
		       paired_frame_ratio(fb[MK_SFB], on_stack, NAT_DI, fb[MK_SFB]->frames,
					  on_stack->frames),
		       paired_ratio(fb[MK_UNW], fb[MK_SFB], NAT_DI),
		       paired_ratio(fb[MK_GLIBC], fb[MK_SFB], NAT_DI));
	if (named && fb[MK_SFB] && fb[MK_UNW] && on_stack && named->frames && on_stack->frames)
		printf("- main, `natural end, on a fiber, its stack named`: the same, the fiber's "
		       "stack named with sframe_backtrace_set_stack(), so that the walk reads it "
		       "without a probe a page: sframebt %.0f ns a call, %.2fx its walk on the "
		       "thread's stack per frame, unw / sframebt %.2fx (paired).\n",
		       row_median(named, NAT_DI),
		       paired_frame_ratio(named, on_stack, NAT_DI, named->frames, on_stack->frames),
		       paired_ratio(fb[MK_UNW], named, NAT_DI));
	printf("\n");
	target(sfb_rows_alloc_free(),
	       "zero allocations per sframebt natural-end walk after warm-up (malloc-family interposer, "
	       "all timed batches)");
	target(rows_all_good() && probe.st.stop == SFRAME_BT_STOP_OUTERMOST,
	       "every natural-end walk returned the reference trace (the frame-pointer walk "
	       "its prefix) in every timed batch, and sframebt's walk stops \"outermost\"");
	print_targets();
}

/* SIGPROF samples at depth 32 walked to the natural end, one unwinder per
 * process (the async-solo machinery), next to the buffer-full samples of
 * the same builds in the same rounds. */
static void nat_sigprof(void)
{
	struct bench_work w = async_setup();
	static const struct {
		int bi, kind;
	} want[] = {
		{ B_MAIN, AK_SFB },	     { B_MAIN, AK_SFB_NAT },	 { B_MAIN, AK_UNW_NAT },
		{ B_LINKED, AK_SFB_NAT },    { B_V3, AK_SFB_NAT },	 { B_V3, AK_SFB_KEPT_NAT },
		{ B_DISTINCT, AK_SFB },	     { B_DISTINCT, AK_SFB_NAT }, { B_DISTINCT, AK_FP },
		{ B_DISTINCT, AK_FP_NAT },
	};
	struct solo_cell cells[sizeof want / sizeof want[0]];
	int nc = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (builds[want[i].bi].ok)
			solo_add(cells, &nc, want[i].bi, want[i].kind);
	solo_run(cells, nc, ASYNC_ROUNDS, ASYNC_WARM_NS, &w);

	printf("### SIGPROF handler, depth %d, natural end, one unwinder per process\n\n",
	       ASYNC_SIZE);
	printf("The one-unwinder-per-process samples above (timer every %ld us, %zu MiB hash "
	       "buffer, rdtsc around the call, %d warm-up samples discarded then %d, %d rounds of "
	       "forked children in random order), with a %d-entry buffer: a sample at the leaf of "
	       "the depth-%d chain is walked through the chain's entry, the driver's frames and "
	       "main() into libc and to _start. In the warm-up every sample in the hash loop is "
	       "checked against libunwind on the same context (the frame-pointer walk: a prefix "
	       "of it, ending where frame records end, in main()) and against the chain's "
	       "recorded return addresses, sframebt's walk must stop \"outermost\", and it sets "
	       "the frame count; afterwards every sample in the hash loop must return that count "
	       "(`bad`). The buffer-full rows are the depth-%d samples of the table above, in the "
	       "same rounds.\n\n",
	       ASYNC_WARM_NS / 1000, (w.nwords * 8) >> 20, SOLO_WARMUP, ASYNC_PER_ROUND,
	       ASYNC_ROUNDS, NAT_SIZE, ASYNC_SIZE, ASYNC_SIZE);
	printf("| build | method | frames | samples | median ns | p10 ns | p90 ns | ns/frame | "
	       "bad | checked (differ) | allocs |\n"
	       "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	double med_of[B_COUNT][AK_COUNT];
	memset(med_of, 0, sizeof med_of);
	for (int i = 0; i < nc; i++) {
		const struct solo_cell *c = &cells[i];
		double med, p10, p90;
		unsigned n = slot_percentiles(&c->s, &med, &p10, &p90);
		int fr = ak_nat(c->s.kind) ? (int)c->nat_frames : ASYNC_SIZE;
		med_of[c->bi][c->s.kind] = med;
		char chk[48] = "-";
		if (ak_nat(c->s.kind))
			snprintf(chk, sizeof chk, "%u (%u)", c->nat_verified, c->nat_mismatch);
		printf("| %s | %s | %d | %u | %.0f | %.0f | %.0f | %.1f | %u | %s | %lu |\n",
		       builds[c->bi].key, ak_name[c->s.kind], fr, n, med, p10, p90,
		       fr ? med / fr : 0, c->s.bad, chk, c->s.allocs);
		if (c->s.kind == AK_SFB_NAT || c->s.kind == AK_SFB_KEPT_NAT)
			target(med <= 400.0 && !c->s.bad && !c->nat_mismatch && c->nat_verified &&
				       !c->s.allocs,
			       "%s%s: SIGPROF sample at depth %d walked to the natural end (%u "
			       "frames, through libc to _start) <= 400 ns, one unwinder per process "
			       "(median %.0f ns, p90 %.0f ns; %u bad, %u of %u warm-up samples "
			       "differ from libunwind)",
			       builds[c->bi].label,
			       c->s.kind == AK_SFB_KEPT_NAT ? ", dlopen()ed and kept loaded"
			       : c->bi < B_LIBS_END	    ? ", dlopen()ed"
							    : "",
			       ASYNC_SIZE, c->nat_frames, med, p90, c->s.bad, c->nat_mismatch,
			       c->nat_verified);
	}
	printf("\n");
	for (int i = 0; i < nc; i++) {
		const struct solo_cell *c = &cells[i];
		int bk = c->s.kind == AK_SFB_NAT ? AK_SFB : c->s.kind == AK_FP_NAT ? AK_FP : -1;
		if (bk >= 0 && med_of[c->bi][bk] > 0 && c->nat_frames > ASYNC_SIZE)
			printf("- %s, %s: the %u frames past the chain add %.0f ns (%.1f ns a "
			       "frame)\n", builds[c->bi].key, ak_name[c->s.kind],
			       c->nat_frames - ASYNC_SIZE, med_of[c->bi][c->s.kind] - med_of[c->bi][bk],
			       (med_of[c->bi][c->s.kind] - med_of[c->bi][bk]) /
				       (c->nat_frames - ASYNC_SIZE));
	}
	printf("\n");
	print_targets();
}

/* ---- The first interpretation of a .eh_frame row -----------------------
 * Once seen, a CFI row of the common shape is memoised like an SFrame row;
 * the first time, the walker searches .eh_frame_hdr, parses the CIE and
 * the FDE and runs the CFA program up to the PC.  Measured two ways:
 * in this process with the row memo emptied (sfb_memo zeroed: no walk runs
 * meanwhile) and the chain's SFrame rows memoised again by a walk that
 * stops just before libc, so that a natural-end walk pays only for the
 * CFI rows (a walk finds a frame's row before it stores the frame, so
 * storing main()'s return address into libc would read libc's row: that
 * walk stops one frame earlier); and in fresh processes (natcold-child), where the first walk
 * through libc also finds .eh_frame cold in the caches and its pages not
 * yet mapped. */

#define NAT_COLD_REPS 201
#define NAT_FRESH_REPS 15

struct nat_cold {
	int npre;       /* frames stored without reading a CFI row, from this callback */
	int ncfi;       /* frames unwound with CFI rows */
	int n;          /* frames of a natural-end walk */
	int bad;
	double cfi_cold[NAT_COLD_REPS], warm[NAT_COLD_REPS], all_cold[NAT_COLD_REPS];
};

static void memo_flush(void)
{
	memset(sfb_memo, 0, sizeof sfb_memo);
}

static NOINLINE int nat_cold_cb(void *arg)
{
	struct nat_cold *c = arg;
	static struct nat_probe p;
	nat_probe_cb(&p); /* one frame deeper than this callback's walks */
	c->npre = p.first_cfi - 2;
	c->ncfi = p.ncfi;
	c->n = p.n - 1;
	void *buf[NAT_SIZE];
	for (int r = 0; r < NAT_COLD_REPS; r++) {
		memo_flush();
		if (sframe_backtrace(buf, c->npre) != c->npre)
			c->bad++;
		uint64_t t0 = tsc_begin();
		int n1 = sframe_backtrace(buf, NAT_SIZE);
		uint64_t t1 = tsc_end();
		uint64_t t2 = tsc_begin();
		int n2 = sframe_backtrace(buf, NAT_SIZE);
		uint64_t t3 = tsc_end();
		memo_flush();
		uint64_t t4 = tsc_begin();
		int n3 = sframe_backtrace(buf, NAT_SIZE);
		uint64_t t5 = tsc_end();
		if (n1 != c->n || n2 != c->n || n3 != c->n)
			c->bad++;
		c->cfi_cold[r] = (double)(t1 - t0) * ns_per_tick;
		c->warm[r] = (double)(t3 - t2) * ns_per_tick;
		c->all_cold[r] = (double)(t5 - t4) * ns_per_tick;
	}
	return 0;
}

/* natcold-child METHOD NPRE: in a fresh process, at the leaf of the main
 * build's depth-32 chain, the first natural-end walk and a second one;
 * "sframebt-split" walks NPRE frames first (the chain and the driver, up
 * to main()'s own frame: SFrame rows only), so that its first natural-end
 * walk adds only the CFI rows.  "probe" prints the index of the first
 * frame found with a CFI row (NPRE is one less) and the number of CFI
 * frames for this stack. */
enum { NF_SPLIT, NF_SPLIT_WARM, NF_SFB, NF_WARMUP, NF_UNW, NF_GLIBC, NF_COUNT };
static const char *const nf_key[NF_COUNT] = { "sframebt-split", "sframebt-split-warmup",
					      "sframebt", "sframebt-warmup", "unw", "glibc" };
static const char *const nf_name[NF_COUNT] = {
	"sframebt, the chain walked first (SFrame rows only)",
	"the same after sframe_backtrace_warmup() (objects described)", "sframebt",
	"sframebt after sframe_backtrace_warmup()", "unw_backtrace", "glibc backtrace()" };

static struct {
	int method, npre;
	uint64_t pre_ns, first_ns, second_ns, warm_ns;
	long pre_faults, faults, faults2;
	int n_pre, n1, n2;
	unsigned long allocs;
} NF;

static long faults_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static NOINLINE int natcold_leaf(void *arg)
{
	(void)arg;
	bt_fn fn = NF.method == NF_UNW ? unw_backtrace
		   : NF.method == NF_GLIBC ? mk_fn[MK_GLIBC] : sframe_backtrace;
	void *buf[NAT_SIZE];
	if (NF.method == NF_SPLIT || NF.method == NF_SPLIT_WARM) {
		long f0 = faults_now();
		uint64_t t0 = now_ns();
		NF.n_pre = sframe_backtrace(buf, NF.npre);
		NF.pre_ns = now_ns() - t0;
		NF.pre_faults = faults_now() - f0;
	}
	long f0 = faults_now();
	unsigned long a0 = allocs_now();
	uint64_t t0 = now_ns();
	NF.n1 = fn(buf, NAT_SIZE);
	uint64_t t1 = now_ns();
	NF.allocs = allocs_now() - a0;
	NF.faults = faults_now() - f0;
	f0 = faults_now();
	uint64_t t2 = now_ns();
	NF.n2 = fn(buf, NAT_SIZE);
	NF.second_ns = now_ns() - t2;
	NF.faults2 = faults_now() - f0;
	NF.first_ns = t1 - t0;
	double w[31];
	for (int i = 0; i < 31; i++) {
		uint64_t t = now_ns();
		if (fn(buf, NAT_SIZE) != NF.n1)
			NF.n2 = -1;
		w[i] = (double)(now_ns() - t);
	}
	NF.warm_ns = (uint64_t)median(w, 31);
	return NF.n1;
}

static int mode_natcold_child(int argc, char **argv)
{
	if (argc < 4)
		die("natcold-child probe|sframebt-split|sframebt|sframebt-warmup|unw|glibc NPRE");
	if (!strcmp(argv[2], "probe")) {
		static struct nat_probe p;
		main_chain_entry(NAT_DEPTH, nat_probe_cb, &p);
		/* frames 1.. are the same in natcold_leaf */
		printf("%d %d %d %d\n", p.first_cfi, p.ncfi, p.n, p.st.stop);
		return 0;
	}
	NF.method = -1;
	for (int i = 0; i < NF_COUNT; i++)
		if (!strcmp(argv[2], nf_key[i]))
			NF.method = i;
	NF.npre = atoi(argv[3]);
	if (NF.method < 0 || NF.npre < 2 || NF.npre >= NAT_SIZE)
		die("natcold-child: bad method or NPRE");
	if (NF.method == NF_WARMUP || NF.method == NF_SPLIT_WARM)
		sframe_backtrace_warmup();
	main_chain_entry(NAT_DEPTH, natcold_leaf, NULL);
	printf("%d %d %llu %ld %llu %llu %ld %d %d %lu %llu %ld\n", NF.method, NF.n_pre,
	       (unsigned long long)NF.pre_ns, NF.pre_faults, (unsigned long long)NF.first_ns,
	       (unsigned long long)NF.second_ns, NF.faults, NF.n1, NF.n2, NF.allocs,
	       (unsigned long long)NF.warm_ns, NF.faults2);
	return 0;
}

/* Runs "sfbench natcold-child ARGS..." in a fresh process; its one line of
 * output in line. */
static bool run_child(char *line, size_t len, const char *a1, const char *a2, const char *a3)
{
	int p[2];
	if (pipe(p))
		die("pipe");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl("/proc/self/exe", "sfbench", a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	line[0] = 0;
	FILE *f = fdopen(p[0], "r");
	if (!f || !fgets(line, (int)len, f))
		line[0] = 0;
	if (f)
		fclose(f);
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && line[0];
}

static void nat_cold(void)
{
	static struct nat_cold c;
	builds[B_MAIN].entry(NAT_DEPTH, nat_cold_cb, &c);
	double cold = median(c.cfi_cold, NAT_COLD_REPS), warm = median(c.warm, NAT_COLD_REPS),
	       all = median(c.all_cold, NAT_COLD_REPS);
	double per_row = c.ncfi > 0 ? (cold - warm) / c.ncfi : 0;

	char line[256], npre_s[16];
	int pf = -1, pncfi = 0, pn = 0, pstop = 0;
	if (!run_child(line, sizeof line, "natcold-child", "probe", "0") ||
	    sscanf(line, "%d %d %d %d", &pf, &pncfi, &pn, &pstop) != 4 || pf < 2 || pncfi < 1)
		die("natcold-child probe failed");
	snprintf(npre_s, sizeof npre_s, "%d", pf - 1);
	static double pre[NF_COUNT][NAT_FRESH_REPS], first[NF_COUNT][NAT_FRESH_REPS],
		second[NF_COUNT][NAT_FRESH_REPS], faults[NF_COUNT][NAT_FRESH_REPS],
		warmf[NF_COUNT][NAT_FRESH_REPS], faults2[NF_COUNT][NAT_FRESH_REPS],
		pre_faults[NF_COUNT][NAT_FRESH_REPS];
	int bad[NF_COUNT] = { 0 };
	unsigned long allocs[NF_COUNT] = { 0 };
	for (int rep = 0; rep < NAT_FRESH_REPS; rep++) {
		unsigned order[NF_COUNT];
		shuffled(order, NF_COUNT);
		for (int k = 0; k < NF_COUNT; k++) {
			int m = (int)order[k];
			int mm, npre, n1, n2;
			unsigned long long a, b, d, e;
			long fa, fb, fc;
			unsigned long al;
			if (!run_child(line, sizeof line, "natcold-child", nf_key[m], npre_s) ||
			    sscanf(line, "%d %d %llu %ld %llu %llu %ld %d %d %lu %llu %ld", &mm, &npre,
				   &a, &fa, &b, &d, &fb, &n1, &n2, &al, &e, &fc) != 12 ||
			    mm != m || n1 != pn || n2 != pn ||
			    ((m == NF_SPLIT || m == NF_SPLIT_WARM) && npre != pf - 1)) {
				bad[m]++;
				continue;
			}
			pre[m][rep] = (double)a;
			pre_faults[m][rep] = (double)fa;
			first[m][rep] = (double)b;
			second[m][rep] = (double)d;
			warmf[m][rep] = (double)e;
			faults2[m][rep] = (double)fc;
			faults[m][rep] = (double)fb;
			allocs[m] += al;
		}
	}

	printf("### First interpretation of .eh_frame rows\n\n");
	printf("A CFI row of the common shape is memoised like an SFrame row once seen; the "
	       "first time, the walker searches .eh_frame_hdr, parses the CIE and FDE and runs "
	       "the CFA program. The natural-end walk at the leaf of the `main` build's "
	       "depth-%d chain goes through %d frames, %d of them found with CFI rows (the rows "
	       "of libc's start-up functions); one more CFI row, _start's, says the return "
	       "address is undefined, and is looked up on every walk, cold or warm.\n\n"
	       "In this process (caches warm), median of %d, rdtsc: the row memo emptied, then "
	       "the first %d frames walked again, to main()'s own frame (SFrame rows only, "
	       "memoised again: a walk finds a frame's row before it stores the frame, so "
	       "main()'s return address into libc would read libc's row), then a "
	       "natural-end walk (its %d CFI rows not memoised), and at once a second one "
	       "(warm); and a natural-end walk right after emptying the memo (every row, SFrame "
	       "and CFI, looked up).\n\n",
	       NAT_DEPTH, c.n, c.ncfi, NAT_COLD_REPS, c.npre, c.ncfi);
	printf("| walk (in this process) | ns/walk | per CFI row |\n|---|---:|---:|\n");
	printf("| natural end, CFI rows first seen | %.0f | %.0f ns more than warm |\n", cold,
	       per_row);
	printf("| natural end, warm | %.0f | - |\n", warm);
	printf("| natural end, every row first seen | %.0f | - |\n\n", all);
	if (c.bad)
		printf("**%d walks returned another frame count.**\n\n", c.bad);

	/* Each process's own difference, then the median. */
	double diff[NAT_FRESH_REPS];
	for (int r = 0; r < NAT_FRESH_REPS; r++)
		diff[r] = first[NF_SPLIT][r] - warmf[NF_SPLIT][r];
	double fresh_libc = median(diff, NAT_FRESH_REPS) / pncfi;
	for (int r = 0; r < NAT_FRESH_REPS; r++)
		diff[r] = first[NF_SPLIT_WARM][r] - warmf[NF_SPLIT_WARM][r];
	double fresh_row = median(diff, NAT_FRESH_REPS) / pncfi;
	printf("In fresh processes (%d a method, interleaved; medians; wall-clock time, page "
	       "faults from getrusage), at the same depth-%d leaf, before any other backtrace: "
	       "the first natural-end walk (%d frames), a second one, and the median of 31 more "
	       "(warm). For the first row, "
	       "sframebt first walks the %d frames up to main()'s own frame (the executable "
	       "described, its SFrame rows memoised), so that its first natural-end walk adds "
	       "only the %d libc frames' CFI rows and _start's row, with libc's description, "
	       ".eh_frame cold in the caches and its pages not yet touched by this process; "
	       "the warm walks read _start's row too. The second row does the same after "
	       "sframe_backtrace_warmup() (every object described in advance, from normal "
	       "context), so that its first natural-end walk pays only for the rows: a CFI "
	       "row's first interpretation is (first - warm) / %d there, each process's own "
	       "difference, the median.\n\n",
	       NAT_FRESH_REPS, NAT_DEPTH, pn, pf - 1, pncfi, pncfi);
	printf("| method | chain walk first, us (faults) | first natural-end walk, us (faults) "
	       "| second, us (faults) | warm, us | allocs in first | checks |\n"
	       "|---|---:|---:|---:|---:|---:|---|\n");
	for (int m = 0; m < NF_COUNT; m++) {
		char prebuf[48] = "-";
		if (m == NF_SPLIT || m == NF_SPLIT_WARM)
			snprintf(prebuf, sizeof prebuf, "%.1f (%.0f)",
				 median(pre[m], NAT_FRESH_REPS) / 1000.0,
				 median(pre_faults[m], NAT_FRESH_REPS));
		printf("| %s | %s | %.1f (%.0f) | %.2f (%.0f) | %.2f | %.1f | %s |\n", nf_name[m],
		       prebuf, median(first[m], NAT_FRESH_REPS) / 1000.0,
		       median(faults[m], NAT_FRESH_REPS), median(second[m], NAT_FRESH_REPS) / 1000.0,
		       median(faults2[m], NAT_FRESH_REPS),
		       median(warmf[m], NAT_FRESH_REPS) / 1000.0,
		       (double)allocs[m] / NAT_FRESH_REPS, bad[m] ? "**FAILED**" : "ok");
	}
	printf("\nCold CFI: %.1f us a CFI row in a fresh process (objects described first; "
	       "(first - warm) / %d); %.1f us a libc frame with libc's description and its page "
	       "faults (no warm-up); %.0f ns in this process with the memo emptied (caches "
	       "warm).\n\n", fresh_row / 1000.0, pncfi, fresh_libc / 1000.0, per_row);
	target(fresh_row <= 5000.0 && !bad[NF_SPLIT_WARM] && !c.bad,
	       "a CFI row's first interpretation <= 5 us cold: %.1f us a row in a fresh process, "
	       "objects described first (%.1f us a libc frame with libc's description; %.0f ns "
	       "with the memo emptied, caches warm)", fresh_row / 1000.0, fresh_libc / 1000.0,
	       per_row);
	target(!allocs[NF_SFB] && !allocs[NF_SPLIT] && !allocs[NF_WARMUP] && !allocs[NF_SPLIT_WARM],
	       "no allocation in sframebt's first natural-end walk in a fresh process");
	print_targets();
}

static int mode_natural(void)
{
	load_builds();
	find_site0();
	calibrate_tsc();
	nat_warm();
	nat_cold();
	nat_sigprof();
	return 0;
}

/* ---- Varied stacks -------------------------------------------------------
 * The chains above repeat one stack: every capture of a batch walks the
 * same frames.  Here each capture walks a chain built anew along a path
 * drawn from a seeded PRNG (bench_varied.h: VARIED_SHAPES functions of
 * different frame sizes calling each other directly), so that the frame
 * above a return address differs from capture to capture, as it does on
 * a real program's stacks.  A capture is the chain built, one backtrace
 * at its leaf with a NAT_SIZE buffer (to the natural end: through the
 * chain's entry, the driver's frames and main() into libc, to _start),
 * timed alone with rdtsc, and the trace checked: the chain's frames
 * against the return addresses the chain recorded, the frames past it
 * against the trace unw_backtrace() took at the same leaf in the batch's
 * first capture (itself checked against that capture's path). */

enum { VB_MAIN, VB_FP, VB_V1, VB_V3, VB_COUNT };
static struct vbuild {
	const char *key, *label, *lib;
	int want_version;
	bool ok;
	int sframe_version;
	int (*entry)(const struct varied_path *);
} vbuilds[VB_COUNT] = {
	{ .key = "main", .label = "varied chain in the main program, frame pointers (SFrame V1)",
	  .want_version = 1 },
	{ .key = "fp", .label = "varied chain dlopen()ed, frame pointers (SFrame V1)",
	  .lib = "libbench-varied-fp.so", .want_version = 1 },
	{ .key = "v1", .label = "varied chain dlopen()ed, SFrame V1 (binutils 2.40)",
	  .lib = "libbench-varied-v1.so", .want_version = 1 },
	{ .key = "v3", .label = "varied chain dlopen()ed, SFrame V3 (binutils 2.47)",
	  .lib = "libbench-varied-v3.so", .want_version = 3 },
};
/* The frame-pointer walk each build's sframebt is compared with: on the
 * same code where it has frame pointers, else on the dlopen()ed build
 * with frame pointers (as the recursive chain's v1/v2/v3). */
static const int vb_fp_of[VB_COUNT] = { VB_MAIN, VB_FP, VB_FP, VB_FP };

#define VARIED_POOL 1024     /* paths drawn per depth */
#define VARIED_CAPTURES 256  /* captures per batch, each on the next path of the pool */
#define VARIED_CG_CAPTURES 200

static uint8_t vpool[3][VARIED_POOL][VARIED_MAX_DEPTH + 1];
/* Frame 0 of every varied trace: the call site in varied_cb, and in
 * varied_cb_cg. */
static void *vsite0[2];

static void varied_load(void)
{
	for (int i = 0; i < VB_COUNT; i++) {
		struct vbuild *b = &vbuilds[i];
		if (!b->lib) {
			b->entry = main_varied_entry;
		} else {
			char path[PATH_MAX + 32];
			snprintf(path, sizeof path, "%s/%s", exe_dir, b->lib);
			void *h = access(path, R_OK) ? NULL : dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (!h)
				continue;
			b->entry = (int (*)(const struct varied_path *))dlsym(h, "varied_chain_entry");
			if (!b->entry)
				die("varied chain library lacks varied_chain_entry");
		}
		struct ver_query q = { (uintptr_t)b->entry, 0 };
		dl_iterate_phdr(ver_cb, &q);
		b->sframe_version = q.version;
		b->ok = true;
	}
	if (!vbuilds[VB_FP].ok || !vbuilds[VB_V1].ok)
		die("libbench-varied-fp.so / libbench-varied-v1.so missing: run `make bench`");
	/* The paths: a fixed seed, so that every run and method walks the
	 * same stacks. */
	uint64_t s = 0x5851f42d4c957f2dull;
	for (int d = 0; d < 3; d++)
		for (int i = 0; i < VARIED_POOL; i++)
			for (int k = 0; k <= VARIED_MAX_DEPTH; k++) {
				s ^= s << 13;
				s ^= s >> 7;
				s ^= s << 17;
				vpool[d][i][k] = (uint8_t)(s % VARIED_SHAPES);
			}
}

struct vrun {
	bt_fn fn;
	void **buf;
	int n;
	uint64_t ticks;
	void *cb_ra;
	unsigned long allocs;
	void **ref; /* when set and ref_n is 0: unw_backtrace() after the capture */
	int ref_n;
};

/* The leaf of a varied chain: one backtrace, timed with rdtsc or (cg)
 * counted by callgrind, then the batch's reference if it has none.  One
 * call site of every method in each of the two instances below: with cg
 * a run-time flag the compiler would duplicate the call. */
static inline __attribute__((always_inline)) int varied_capture(struct vrun *r, const bool cg)
{
	bt_fn fn = r->fn;
	void **buf = r->buf;
	unsigned long a0 = allocs_now();
	uint64_t t0 = tsc_begin();
	if (cg)
		CALLGRIND_TOGGLE_COLLECT;
	int n = fn(buf, NAT_SIZE);
	if (cg)
		CALLGRIND_TOGGLE_COLLECT;
	uint64_t t1 = tsc_end();
	r->allocs += allocs_now() - a0;
	r->ticks = t1 - t0;
	r->n = n;
	if (r->ref && !r->ref_n)
		r->ref_n = unw_backtrace(r->ref, NAT_SIZE);
	return n;
}

static NOINLINE int varied_cb(void *arg)
{
	struct vrun *r = arg;
	r->cb_ra = __builtin_return_address(0);
	return varied_capture(r, false);
}

static NOINLINE int varied_cb_cg(void *arg)
{
	struct vrun *r = arg;
	r->cb_ra = __builtin_return_address(0);
	return varied_capture(r, true);
}

/* Frames 1..depth + 1 of trace t (n frames) as the path p's chain left
 * them: [1] cb's return address, [k] p->ra[k - 1]. */
static bool varied_chain_ok(void *const *t, int n, const struct varied_path *p, void *cb_ra,
			    char *why, size_t len)
{
	if (n < p->depth + 3) {
		snprintf(why, len, "%d frames, the chain alone has %d", n, p->depth + 2);
		return false;
	}
	for (int k = 1; k <= p->depth + 1; k++) {
		void *want = k == 1 ? cb_ra : p->ra[k - 1];
		if (t[k] != want) {
			snprintf(why, len, "frame %d is %p, the chain's %p", k, t[k], want);
			return false;
		}
	}
	return true;
}

/* A capture of method kind against its path and the batch's reference:
 * the chain's frames exactly, then the reference's; every method the
 * reference's count but the frame-pointer walk, which ends where frame
 * records end (main()), a prefix of it. */
static bool varied_trace_ok(int kind, const struct vrun *r, const struct varied_path *p,
			    bool cg, char *why, size_t len)
{
	if (r->buf[0] != vsite0[cg]) {
		snprintf(why, len, "frame 0 is %p, not the call site %p", r->buf[0], vsite0[cg]);
		return false;
	}
	if (!varied_chain_ok(r->buf, r->n, p, r->cb_ra, why, len))
		return false;
	if (kind == MK_FP ? r->n >= r->ref_n : r->n != r->ref_n) {
		snprintf(why, len, "%d frames, the reference %d", r->n, r->ref_n);
		return false;
	}
	for (int k = p->depth + 2; k < r->n; k++)
		if (r->buf[k] != r->ref[k]) {
			snprintf(why, len, "frame %d is %p, the reference %p", k, r->buf[k], r->ref[k]);
			return false;
		}
	return true;
}

struct vrow {
	int kind, vb;
	double ns[3][ROUNDS];   /* per depth and round: median ns a capture */
	int frames[3];          /* frames a capture returned */
	unsigned long allocs, calls;
	unsigned bad;
	char why[200];
};

static struct vrow vrows[24];
static int nvrows;

static void add_vrow(int kind, int vb)
{
	if (!vbuilds[vb].ok)
		return;
	if (nvrows == (int)(sizeof vrows / sizeof vrows[0]))
		die("too many varied rows");
	struct vrow *r = &vrows[nvrows++];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->vb = vb;
}

static struct vrow *find_vrow(int kind, int vb)
{
	for (int i = 0; i < nvrows; i++)
		if (vrows[i].kind == kind && vrows[i].vb == vb)
			return &vrows[i];
	return NULL;
}

/* One batch: captures on paths first..first + count of the depth's pool;
 * each capture's ticks in ticks[] (when given); every trace checked. */
static void varied_batch(struct vrow *rw, int di, unsigned first, unsigned count, bool cg,
			 uint64_t *ticks)
{
	const struct vbuild *b = &vbuilds[rw->vb];
	void *buf[NAT_SIZE + 8], *ref[NAT_SIZE + 8], *ra[VARIED_MAX_DEPTH + 2];
	struct vrun r = { .fn = mk_fn[rw->kind], .buf = buf, .ref = ref };
	struct varied_path p = { .depth = depths[di], .ra = ra, .cb = cg ? varied_cb_cg : varied_cb,
				 .arg = &r };
	char why[160];
	for (unsigned i = 0; i < count; i++) {
		p.shape = vpool[di][(first + i) % VARIED_POOL];
		memset(buf, 0, sizeof buf);
		b->entry(&p);
		if (ticks)
			ticks[i] = r.ticks;
		if (rw->kind == MK_EMPTY)
			continue;
		bool ok = true;
		if (i == 0 && !varied_chain_ok(ref, r.ref_n, &p, r.cb_ra, why, sizeof why)) {
			ok = false;
			snprintf(rw->why, sizeof rw->why, "the reference (unw_backtrace): %s", why);
		} else if (!varied_trace_ok(rw->kind, &r, &p, cg, why, sizeof why)) {
			ok = false;
			snprintf(rw->why, sizeof rw->why, "depth %d: %s", depths[di], why);
		} else if (rw->frames[di] && rw->frames[di] != r.n) {
			ok = false;
			snprintf(rw->why, sizeof rw->why, "depth %d: %d frames, before %d", depths[di],
				 r.n, rw->frames[di]);
		}
		if (!ok)
			rw->bad++;
		rw->frames[di] = r.n;
	}
	rw->allocs += r.allocs;
	rw->calls += count;
}

/* vsite0 from the frame-pointer walk on the main build, whose chain part
 * is checked against the path. */
static void varied_find_site0(void)
{
	for (int cg = 0; cg < 2; cg++) {
		void *buf[NAT_SIZE + 8], *ra[VARIED_MAX_DEPTH + 2];
		struct vrun r = { .fn = fp_backtrace, .buf = buf };
		struct varied_path p = { .shape = vpool[1][0], .depth = depths[1], .ra = ra,
					 .cb = cg ? varied_cb_cg : varied_cb, .arg = &r };
		main_varied_entry(&p);
		vsite0[cg] = buf[0];
		char why[160];
		if (!varied_chain_ok(buf, r.n, &p, r.cb_ra, why, sizeof why))
			fprintf(stderr, "sfbench: frame-pointer walk disagrees with the varied chain: "
				"%s\n", why);
	}
}

static void add_varied_rows(void)
{
	for (int vb = 0; vb < VB_COUNT; vb++) {
		if (vb_fp_of[vb] == vb)
			add_vrow(MK_FP, vb);
		add_vrow(MK_SFB, vb);
		add_vrow(MK_UNW, vb);
		add_vrow(MK_GLIBC, vb);
	}
}

/* Median over the rounds of (num per frame) / (den per frame). */
static double vratio(const struct vrow *num, const struct vrow *den, int di, bool per_frame)
{
	double v[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		v[r] = num->ns[di][r] / den->ns[di][r];
		if (per_frame)
			v[r] *= (double)den->frames[di] / num->frames[di];
	}
	return median(v, ROUNDS);
}

static double vrow_median(const struct vrow *r, int di)
{
	double v[ROUNDS];
	memcpy(v, r->ns[di], sizeof v);
	return median(v, ROUNDS);
}

static int mode_varied(void)
{
	char load0[32], load1[32];
	loadavg(load0, sizeof load0);
	/* On the CPU it started on: no migration between a capture's chain
	 * and its walk. */
	cpu_set_t one;
	CPU_ZERO(&one);
	int cpu = sched_getcpu();
	if (cpu >= 0) {
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof one, &one);
	}
	calibrate_tsc();
	varied_load();
	varied_find_site0();
	add_vrow(MK_EMPTY, VB_MAIN);
	add_varied_rows();
	static uint64_t ticks[VARIED_CAPTURES];
	double tv[VARIED_CAPTURES];
	/* Warm-up: discovery, libgcc_s, libunwind's caches, the memo. */
	for (int i = 0; i < nvrows; i++)
		for (int d = 0; d < 3; d++)
			varied_batch(&vrows[i], d, 0, VARIED_POOL, false, NULL);
	for (int i = 0; i < nvrows; i++) {
		vrows[i].allocs = vrows[i].calls = 0;
		vrows[i].bad = 0;
	}
	/* Interleaved rounds, each row and depth once in a new random order,
	 * every row of a round on the same paths; the loop's own cost (the
	 * rdtsc pair, an empty call) is the empty row's median of the same
	 * round, subtracted. */
	int npairs = nvrows * 3;
	unsigned order[3 * sizeof vrows / sizeof vrows[0]];
	for (int round = 0; round < ROUNDS; round++) {
		unsigned first = (unsigned)round * VARIED_CAPTURES % VARIED_POOL;
		double raw[3 * sizeof vrows / sizeof vrows[0]];
		shuffled(order, (unsigned)npairs);
		for (int k = 0; k < npairs; k++) {
			struct vrow *rw = &vrows[order[k] / 3];
			int d = order[k] % 3;
			varied_batch(rw, d, first, VARIED_CAPTURES, false, ticks);
			for (int i = 0; i < VARIED_CAPTURES; i++)
				tv[i] = (double)ticks[i] * ns_per_tick;
			raw[order[k]] = median(tv, VARIED_CAPTURES);
		}
		for (int k = 0; k < npairs; k++)
			vrows[k / 3].ns[k % 3][round] = raw[k] - raw[k % 3]; /* row 0: empty */
	}
	loadavg(load1, sizeof load1);

	printf("### Varied stacks, warm, to the natural end\n\n");
	printf("Builds (tests/bench/bench_varied.c):");
	for (int i = 0; i < VB_COUNT; i++)
		printf(" %s = %s, .sframe version %d;", vbuilds[i].key,
		       vbuilds[i].ok ? vbuilds[i].label : "not built", vbuilds[i].sframe_version);
	printf("\n\n");
	for (int i = 0; i < VB_COUNT; i++)
		if (vbuilds[i].ok && vbuilds[i].sframe_version != vbuilds[i].want_version)
			printf("**Warning**: build %s carries .sframe version %d, not %d.\n\n",
			       vbuilds[i].key, vbuilds[i].sframe_version, vbuilds[i].want_version);
	if (!vbuilds[VB_V3].ok)
		printf("**V3 skipped: toolchain unavailable**.\n\n");
	printf("Each capture walks a chain built anew along the next of %d paths a depth drawn "
	       "from a seeded PRNG (%d function shapes of different frame sizes, each calling the "
	       "next directly: up to %d return addresses, each with several possible frames "
	       "above it), with a %d-entry buffer, so that the walk goes on past the chain "
	       "through the driver's frames and main() into libc to _start. %d captures a batch, "
	       "each timed alone with rdtsc (lfence'd); a batch's figure is the median capture, "
	       "less the median of an empty call's batch in the same round (%d interleaved "
	       "rounds, each on other paths, in a new random order; medians over the rounds; one "
	       "CPU; load average %s at the start, %s at the end). Every trace is checked: the "
	       "chain's frames against the return addresses the chain recorded on that path, the "
	       "frames past it against unw_backtrace() at the same leaf (itself checked against "
	       "its path); the frame-pointer walk ends where frame records end (main()), a prefix "
	       "of it.\n\n",
	       VARIED_POOL, VARIED_SHAPES, VARIED_SHAPES * (VARIED_SHAPES + 1), NAT_SIZE,
	       VARIED_CAPTURES, ROUNDS, load0, load1);
	printf("| method | build | d=8 frames | ns/call | ns/frame | d=32 frames | ns/call | ns/frame "
	       "| d=128 frames | ns/call | ns/frame | allocs/call | frames checked |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (int i = 1; i < nvrows; i++) {
		struct vrow *r = &vrows[i];
		printf("| %s | %s |", mk_name[r->kind], vbuilds[r->vb].key);
		for (int d = 0; d < 3; d++) {
			double m = vrow_median(r, d);
			printf(" %d | %.0f | %.2f |", r->frames[d], m, m / r->frames[d]);
		}
		printf(" %.3g | %s |\n", (double)r->allocs / (double)(r->calls ? r->calls : 1),
		       r->bad ? r->why : "ok");
	}
	printf("\n");
	printf("Paired ratios, each the median over the rounds of that round's ratio: sframebt "
	       "against the frame-pointer walk per frame (each divided by its own frame count; "
	       "the `fp` build's walk for `v1` and `v3`, which keep no frame pointers) and per "
	       "call, libunwind and glibc against sframebt per call (the same frames).\n\n");
	printf("| build | d | sframebt / FP per frame | sframebt / FP per call | unw / sframebt | "
	       "glibc / sframebt |\n|---|---:|---:|---:|---:|---:|\n");
	char g_fp[256] = "", g_unw[256] = "", g_glibc[256] = "";
	bool m_fp = true, m_unw = true, m_glibc = true;
	for (int vb = 0; vb < VB_COUNT; vb++) {
		struct vrow *s = find_vrow(MK_SFB, vb), *f = find_vrow(MK_FP, vb_fp_of[vb]),
			    *u = find_vrow(MK_UNW, vb), *g = find_vrow(MK_GLIBC, vb);
		if (!s || !f || !u || !g)
			continue;
		for (int d = 0; d < 3; d++) {
			double rf = vratio(s, f, d, true), rc = vratio(s, f, d, false),
			       ru = vratio(u, s, d, false), rg = vratio(g, s, d, false);
			printf("| %s | %d | %.2f | %.2f | %.2f | %.1f |\n", vbuilds[vb].key, depths[d],
			       rf, rc, ru, rg);
			if (depths[d] != 32)
				continue;
			bool ok = !s->bad && !f->bad;
			m_fp = m_fp && ok && rf <= 2.5;
			m_unw = m_unw && ok && !u->bad && ru >= 3.0;
			m_glibc = m_glibc && ok && !g->bad && rg >= 50.0;
			size_t l = strlen(g_fp);
			snprintf(g_fp + l, sizeof g_fp - l, "%s%s %.2fx", l ? ", " : "",
				 vbuilds[vb].key, rf);
			l = strlen(g_unw);
			snprintf(g_unw + l, sizeof g_unw - l, "%s%s %.2fx", l ? ", " : "",
				 vbuilds[vb].key, ru);
			l = strlen(g_glibc);
			snprintf(g_glibc + l, sizeof g_glibc - l, "%s%s %.1fx", l ? ", " : "",
				 vbuilds[vb].key, rg);
		}
	}
	printf("\n");
	goal(m_fp, "varied stacks, depth 32, to the natural end: sframebt <= 2.5x the "
		   "frame-pointer walk a frame (%s)", g_fp);
	goal(m_unw, "varied stacks, depth 32: >= 3x faster than unw_backtrace() (%s)", g_unw);
	goal(m_glibc, "varied stacks, depth 32: >= 50x faster than glibc backtrace() (%s)",
	     g_glibc);
	bool all_ok = true, alloc_free = true;
	for (int i = 1; i < nvrows; i++) {
		all_ok = all_ok && !vrows[i].bad;
		alloc_free = alloc_free && (vrows[i].kind != MK_SFB || !vrows[i].allocs);
	}
	target(alloc_free, "zero allocations per sframebt backtrace on varied stacks after "
			   "warm-up (malloc-family interposer, every capture)");
	target(all_ok, "every varied-stack trace of every method matched its path's return "
		       "addresses and the reference past the chain");
	print_targets();
	return 0;
}

/* Callgrind dumps of the varied captures: sfb:var-METHOD:BUILD:DEPTH:CAPTURES:FRAMES,
 * collection switched on around each backtrace call only. */
static int varied_callgrind(void)
{
	varied_load();
	varied_find_site0();
	add_vrow(MK_EMPTY, VB_MAIN);
	add_varied_rows();
	for (int i = 0; i < nvrows; i++)
		for (int d = 0; d < 3; d++)
			varied_batch(&vrows[i], d, 0, 64, true, NULL);
	/* The warm-up collected into a dump of its own.  (Callgrind counts
	 * calls with collection off too, and a dump zeroes only the call arcs
	 * that have a cost: a warm-up not collected would add its calls to
	 * the first measured dump.) */
	CALLGRIND_DUMP_STATS_AT("varied-warmup");
	int bad = 0;
	for (int i = 0; i < nvrows; i++)
		for (int d = 0; d < 3; d++) {
			struct vrow *r = &vrows[i];
			unsigned n = r->kind == MK_GLIBC || r->kind == MK_UNW ? VARIED_CG_CAPTURES / 4
									      : VARIED_CG_CAPTURES;
			varied_batch(r, d, 64, n, true, NULL);
			char name[96];
			snprintf(name, sizeof name, "sfb:var-%s:%s:%d:%u:%d", mk_key[r->kind],
				 vbuilds[r->vb].key, depths[d], n, r->kind == MK_EMPTY ? 0 : r->frames[d]);
			CALLGRIND_DUMP_STATS_AT(name);
			if (r->bad) {
				fprintf(stderr, "sfbench callgrind: varied %s/%s: %s\n", mk_key[r->kind],
					vbuilds[r->vb].key, r->why);
				bad = 1;
			}
		}
	return bad;
}

/* ---- Callgrind, syscalls, spin ---------------------------------------- */

static int mode_callgrind(void)
{
	load_builds();
	find_site0();
	add_row(MK_EMPTY, B_FP);
	add_method_rows();
	for (int i = 0; i < nrows; i++)
		for (int d = 0; d < 3; d++)
			batch(&rows[i], d, 20, 0);
	CALLGRIND_DUMP_STATS_AT("warmup");
	for (int i = 0; i < nrows; i++)
		for (int d = 0; d < 3; d++) {
			long iters = rows[i].kind == MK_GLIBC || rows[i].kind == MK_UNW ? 100 : 500;
			batch(&rows[i], d, iters, 1);
			char name[96];
			snprintf(name, sizeof name, "sfb:%s:%s:%d:%ld", mk_key[rows[i].kind],
				 builds[rows[i].build].key, depths[d], iters);
			CALLGRIND_DUMP_STATS_AT(name);
		}
	int bad = 0;
	for (int i = 0; i < nrows; i++)
		if (rows[i].bad) {
			fprintf(stderr, "sfbench callgrind: %s/%s: %s\n", mk_key[rows[i].kind],
				builds[rows[i].build].key, rows[i].why);
			bad = 1;
		}
	/* Natural-end walks at depth 32: the dump's depth field is the number
	 * of frames a call returned. */
	int nat0 = nrows;
	add_nat_row(MK_EMPTY, B_FP, true);
	add_nat_row(MK_FP, B_FP, true);
	for (int i = 0; i < N_NAT_BUILDS; i++)
		add_nat_row(MK_SFB, nat_builds[i], true);
	add_nat_row(MK_SFB, B_FP, true);
	add_nat_row(MK_UNW, B_MAIN, true);
	add_nat_row(MK_GLIBC, B_MAIN, true);
	struct row *exact = add_nat_row(MK_SFB, B_MAIN, true);
	if (exact)
		exact->to_ref = true;
	for (int i = nat0; i < nrows; i++)
		batch(&rows[i], NAT_DI, 20, 0);
	for (int i = nat0; i < nrows; i++) {
		long iters = rows[i].kind == MK_GLIBC || rows[i].kind == MK_UNW ? 100 : 500;
		batch(&rows[i], NAT_DI, iters, 1);
		char name[96];
		snprintf(name, sizeof name, "sfb:nat-%s%s:%s:%d:%ld", mk_key[rows[i].kind],
			 rows[i].to_ref ? "-exact" : "", builds[rows[i].build].key, rows[i].frames,
			 iters);
		CALLGRIND_DUMP_STATS_AT(name);
		if (rows[i].bad) {
			fprintf(stderr, "sfbench callgrind: natural end %s/%s: %s\n",
				mk_key[rows[i].kind], builds[rows[i].build].key, rows[i].why);
			bad = 1;
		}
	}
	callgrind_lookups();
	bad |= varied_callgrind();
	if (!RUNNING_ON_VALGRIND)
		fprintf(stderr, "sfbench: callgrind mode is meant to run under valgrind\n");
	return bad;
}

static int mode_syscalls(int argc, char **argv, bool spin)
{
	if (argc < 6)
		die("syscalls|spin METHOD BUILD DEPTH N");
	load_builds();
	find_site0();
	int b = b_parse(argv[3]);
	if (!builds[b].ok)
		die("build not available");
	if (b == B_DISTINCT)
		die("the distinct build takes part in the SIGPROF modes only");
	char mk[32];
	snprintf(mk, sizeof mk, "%s", argv[2]);
	size_t ml = strlen(mk);
	bool nat = ml > 4 && !strcmp(mk + ml - 4, "-nat");
	if (nat)
		mk[ml - 4] = 0;
	add_row(mk_parse(mk), b);
	rows[0].nat = nat;
	int depth = atoi(argv[4]), di = -1;
	for (int d = 0; d < 3; d++)
		if (depths[d] == depth)
			di = d;
	if (di < 0 || (nat && depth != NAT_DEPTH))
		die("depth must be 8, 32 or 128 (32 for a natural-end walk)");
	batch(&rows[0], di, 200, 0);
	rows[0].bad = 0;
	if (spin) {
		double secs = atof(argv[5]);
		uint64_t t0 = now_ns();
		while ((double)(now_ns() - t0) < secs * 1e9)
			batch(&rows[0], di, 1000, 0);
	} else {
		batch(&rows[0], di, atol(argv[5]), 0);
	}
	if (rows[0].bad)
		fprintf(stderr, "sfbench: %s\n", rows[0].why);
	return rows[0].bad != 0;
}

int main(int argc, char **argv)
{
	find_exe_dir();
	resolve_glibc_backtrace();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: sfbench time|async|async-solo|firstcall|callgrind|syscalls|spin ...");
	const char *m = argv[1];
	if (!strcmp(m, "time"))
		return mode_time();
	if (!strcmp(m, "async"))
		return mode_async();
	if (!strcmp(m, "async-solo"))
		return mode_async_solo();
	if (!strcmp(m, "async-only"))
		return mode_async_only(argc, argv);
	if (!strcmp(m, "firstcall"))
		return mode_firstcall();
	if (!strcmp(m, "firstcall-child") && argc >= 4)
		return mode_firstcall_child(atoi(argv[2]), argv[3]);
	if (!strcmp(m, "lookup"))
		return mode_lookup();
	if (!strcmp(m, "natural"))
		return mode_natural();
	if (!strcmp(m, "varied"))
		return mode_varied();
	if (!strcmp(m, "natcold-child"))
		return mode_natcold_child(argc, argv);
	if (!strcmp(m, "callgrind"))
		return mode_callgrind();
	if (!strcmp(m, "syscalls"))
		return mode_syscalls(argc, argv, false);
	if (!strcmp(m, "spin"))
		return mode_syscalls(argc, argv, true);
	die("unknown mode");
	return 2;
}
