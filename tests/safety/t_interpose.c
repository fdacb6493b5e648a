/* The signal path takes no lock and never allocates, and preserves errno.
 *
 * This program defines malloc, free, calloc, realloc, memalign,
 * posix_memalign, aligned_alloc, pthread_mutex_{lock,trylock,unlock},
 * pthread_rwlock_*, pthread_spin_*, sem_wait/sem_post, dl_iterate_phdr,
 * dladdr, dladdr1 and the stdio entry points (fopen, fwrite, fputs, fputc,
 * puts, fflush, vfprintf, printf, fprintf) (forwarding to the next definition, found with
 * dlsym(RTLD_NEXT); dlsym's own allocations come from a static buffer),
 * and syscall() (counting SYS_futex).  Each counts its calls while the
 * global flag `window` is set.  The flag is set right before and cleared
 * right after each call into the library, with only one thread running
 * library code at a time, so any count is the library's.
 *
 * Walks: ucontext walks from SIGPROF handlers on the main thread (the very
 * first walk of the process, which discovers every object and reads
 * libc's .eh_frame for the first time, included, and samples taken while
 * the thread runs inside libc: memcpy, and qsort calling back into the
 * program),
 * sframe_backtrace_ucontext / _ex(uc) / _ex(NULL) / sframe_backtrace from
 * the handlers, the same from SIGUSR1 handlers on a second thread
 * (pthread_kill), and sframe_backtrace / _ex(NULL) from normal context.
 * The symbolization functions are checked the same way, separately, and
 * so are the naming of JIT code from a perf map and the crash handler's
 * run from a fault to the handler it passes the fault on to.
 * Controls prove the counters work: malloc, strdup (libc calling malloc),
 * a mutex and dl_iterate_phdr with the flag set do count, and so does
 * sframe_backtrace_warmup() (the library's own dl_iterate_phdr call goes
 * through this program's definition). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "sig_install.h"
#include "walk/walk_common.h"
#include "uc_regs.h"

#define NF 32

int main(int argc, char **argv);

/* ---- The interposer ------------------------------------------------------------ */

enum {
	C_MALLOC, C_FREE, C_CALLOC, C_REALLOC, C_MEMALIGN, C_POSIX_MEMALIGN, C_ALIGNED_ALLOC,
	C_MUTEX_LOCK, C_MUTEX_TRYLOCK, C_MUTEX_UNLOCK,
	C_RW_RDLOCK, C_RW_WRLOCK, C_RW_TRYRDLOCK, C_RW_TRYWRLOCK, C_RW_TIMEDRDLOCK,
	C_RW_TIMEDWRLOCK, C_RW_UNLOCK,
	C_SPIN_LOCK, C_SPIN_TRYLOCK, C_SPIN_UNLOCK, C_SEM_WAIT, C_SEM_POST,
	C_FUTEX, C_DL_ITERATE_PHDR, C_DLADDR, C_DLADDR1,
	C_FOPEN, C_FWRITE, C_FPUTS, C_FPUTC, C_PUTS, C_FFLUSH, C_VFPRINTF, C_PRINTF, C_FPRINTF,
	C_N
};
static const char *const cname[C_N] = {
	"malloc", "free", "calloc", "realloc", "memalign", "posix_memalign", "aligned_alloc",
	"pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_unlock",
	"pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_tryrdlock",
	"pthread_rwlock_trywrlock", "pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
	"pthread_rwlock_unlock", "pthread_spin_lock", "pthread_spin_trylock",
	"pthread_spin_unlock", "sem_wait", "sem_post", "syscall(SYS_futex)",
	"dl_iterate_phdr", "dladdr", "dladdr1",
	"fopen", "fwrite", "fputs", "fputc", "puts", "fflush", "vfprintf", "printf", "fprintf",
};

/* 0: not in a window; W_WALK: a backtrace call; W_SYM: a symbolization
 * call; W_CONTROL: the controls. */
enum { W_NONE, W_WALK, W_SYM, W_CONTROL, W_NKIND };
static volatile sig_atomic_t window;
static _Atomic unsigned long counts[W_NKIND][C_N];

#define COUNT(c)                                                                       \
	do {                                                                           \
		int w_ = window;                                                       \
		if (w_ > 0 && w_ < W_NKIND)                                            \
			atomic_fetch_add_explicit(&counts[w_][c], 1, memory_order_relaxed); \
	} while (0)

static unsigned long total(int w)
{
	unsigned long s = 0;
	for (int c = 0; c < C_N; c++)
		s += atomic_load(&counts[w][c]);
	return s;
}
static void reset(int w)
{
	for (int c = 0; c < C_N; c++)
		atomic_store(&counts[w][c], 0);
}
static void print_counts(const char *what, int w)
{
	for (int c = 0; c < C_N; c++)
		if (atomic_load(&counts[w][c]))
			printf("#   %s: %s called %lu times\n", what, cname[c],
			       atomic_load(&counts[w][c]));
}

/* dlsym() may allocate before the real allocator is known. */
static _Alignas(64) char boot_buf[1 << 16];
static size_t boot_used;
static int resolving;

static void *boot_alloc(size_t n)
{
	n = (n + 63) & ~(size_t)63;
	if (n > sizeof boot_buf - boot_used)
		abort();
	void *p = boot_buf + boot_used;
	boot_used += n;
	return p;
}
static int is_boot(const void *p)
{
	return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof boot_buf;
}

static void *(*r_malloc)(size_t);
static void (*r_free)(void *);
static void *(*r_calloc)(size_t, size_t);
static void *(*r_realloc)(void *, size_t);
static void *(*r_memalign)(size_t, size_t);
static int (*r_posix_memalign)(void **, size_t, size_t);
static void *(*r_aligned_alloc)(size_t, size_t);

static void resolve_alloc(void)
{
	if (r_malloc || resolving)
		return;
	resolving = 1;
	r_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	r_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	r_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	r_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	r_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
	r_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	void *(*m)(size_t) = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	resolving = 0;
	r_malloc = m;
	if (!r_malloc || !r_free || !r_calloc || !r_realloc)
		abort();
}

void *malloc(size_t n)
{
	COUNT(C_MALLOC);
	resolve_alloc();
	return r_malloc ? r_malloc(n) : boot_alloc(n);
}
void free(void *p)
{
	COUNT(C_FREE);
	if (!p || is_boot(p))
		return;
	resolve_alloc();
	r_free(p);
}
void *calloc(size_t a, size_t b)
{
	COUNT(C_CALLOC);
	resolve_alloc();
	if (!r_malloc)
		return boot_alloc(a * b); /* static: already zero */
	return r_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
	COUNT(C_REALLOC);
	resolve_alloc();
	if (is_boot(p)) {
		void *q = r_malloc ? r_malloc(n) : boot_alloc(n);
		size_t avail = (size_t)(boot_buf + sizeof boot_buf - (char *)p);
		if (q)
			memcpy(q, p, n < avail ? n : avail);
		return q;
	}
	return r_malloc ? r_realloc(p, n) : boot_alloc(n);
}
void *memalign(size_t a, size_t n)
{
	COUNT(C_MEMALIGN);
	resolve_alloc();
	return r_memalign ? r_memalign(a, n) : NULL;
}
int posix_memalign(void **out, size_t a, size_t n)
{
	COUNT(C_POSIX_MEMALIGN);
	resolve_alloc();
	return r_posix_memalign ? r_posix_memalign(out, a, n) : ENOMEM;
}
void *aligned_alloc(size_t a, size_t n)
{
	COUNT(C_ALIGNED_ALLOC);
	resolve_alloc();
	return r_aligned_alloc ? r_aligned_alloc(a, n) : NULL;
}

/* Forward one function to the next definition.  The next definitions are
 * looked up once, by a constructor, before main (dlsym is not
 * async-signal-safe and may allocate: it must not run inside a window). */
#define FORWARD(ret, name, cnt, params, args)                              \
	static ret(*r_##name) params;                                      \
	static void resolve_##name(void)                                   \
	{                                                                  \
		r_##name = (ret(*) params)dlsym(RTLD_NEXT, #name);         \
	}                                                                  \
	ret name params                                                    \
	{                                                                  \
		COUNT(cnt);                                                \
		if (!r_##name)                                             \
			resolve_##name();                                  \
		return r_##name args;                                      \
	}

FORWARD(int, pthread_mutex_lock, C_MUTEX_LOCK, (pthread_mutex_t * m), (m))
FORWARD(int, pthread_mutex_trylock, C_MUTEX_TRYLOCK, (pthread_mutex_t * m), (m))
FORWARD(int, pthread_mutex_unlock, C_MUTEX_UNLOCK, (pthread_mutex_t * m), (m))
FORWARD(int, pthread_rwlock_rdlock, C_RW_RDLOCK, (pthread_rwlock_t * l), (l))
FORWARD(int, pthread_rwlock_wrlock, C_RW_WRLOCK, (pthread_rwlock_t * l), (l))
FORWARD(int, pthread_rwlock_tryrdlock, C_RW_TRYRDLOCK, (pthread_rwlock_t * l), (l))
FORWARD(int, pthread_rwlock_trywrlock, C_RW_TRYWRLOCK, (pthread_rwlock_t * l), (l))
FORWARD(int, pthread_rwlock_timedrdlock, C_RW_TIMEDRDLOCK,
	(pthread_rwlock_t *__restrict l, const struct timespec *__restrict t), (l, t))
FORWARD(int, pthread_rwlock_timedwrlock, C_RW_TIMEDWRLOCK,
	(pthread_rwlock_t *__restrict l, const struct timespec *__restrict t), (l, t))
FORWARD(int, pthread_rwlock_unlock, C_RW_UNLOCK, (pthread_rwlock_t * l), (l))
FORWARD(int, pthread_spin_lock, C_SPIN_LOCK, (pthread_spinlock_t * l), (l))
FORWARD(int, pthread_spin_trylock, C_SPIN_TRYLOCK, (pthread_spinlock_t * l), (l))
FORWARD(int, pthread_spin_unlock, C_SPIN_UNLOCK, (pthread_spinlock_t * l), (l))
FORWARD(int, sem_wait, C_SEM_WAIT, (sem_t * s), (s))
FORWARD(int, sem_post, C_SEM_POST, (sem_t * s), (s))
FORWARD(int, dl_iterate_phdr, C_DL_ITERATE_PHDR,
	(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data), (cb, data))
FORWARD(int, dladdr, C_DLADDR, (const void *a, Dl_info *i), (a, i))
FORWARD(int, dladdr1, C_DLADDR1, (const void *a, Dl_info *i, void **e, int f), (a, i, e, f))
/* stdio: every call takes the stream's lock (and may allocate its buffer). */
FORWARD(FILE *, fopen, C_FOPEN, (const char *__restrict p, const char *__restrict m), (p, m))
FORWARD(size_t, fwrite, C_FWRITE,
	(const void *__restrict b, size_t z, size_t n, FILE *__restrict f), (b, z, n, f))
FORWARD(int, fputs, C_FPUTS, (const char *__restrict b, FILE *__restrict f), (b, f))
FORWARD(int, fputc, C_FPUTC, (int c, FILE *f), (c, f))
FORWARD(int, puts, C_PUTS, (const char *b), (b))
FORWARD(int, fflush, C_FFLUSH, (FILE * f), (f))
FORWARD(int, vfprintf, C_VFPRINTF,
	(FILE *__restrict f, const char *__restrict fmt, va_list ap), (f, fmt, ap))

static int counted_vfprintf(int c, FILE *f, const char *fmt, va_list ap)
{
	COUNT(c);
	if (!r_vfprintf)
		resolve_vfprintf();
	return r_vfprintf(f, fmt, ap);
}

int printf(const char *__restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = counted_vfprintf(C_PRINTF, stdout, fmt, ap);
	va_end(ap);
	return r;
}

int fprintf(FILE *__restrict f, const char *__restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = counted_vfprintf(C_FPRINTF, f, fmt, ap);
	va_end(ap);
	return r;
}

static long (*r_syscall)(long, ...);

long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_futex)
		COUNT(C_FUTEX);
	if (!r_syscall)
		r_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return r_syscall(nr, a1, a2, a3, a4, a5, a6);
}

__attribute__((constructor)) static void resolve_all(void)
{
	resolve_alloc();
	resolve_pthread_mutex_lock();
	resolve_pthread_mutex_trylock();
	resolve_pthread_mutex_unlock();
	resolve_pthread_rwlock_rdlock();
	resolve_pthread_rwlock_wrlock();
	resolve_pthread_rwlock_tryrdlock();
	resolve_pthread_rwlock_trywrlock();
	resolve_pthread_rwlock_timedrdlock();
	resolve_pthread_rwlock_timedwrlock();
	resolve_pthread_rwlock_unlock();
	resolve_pthread_spin_lock();
	resolve_pthread_spin_trylock();
	resolve_pthread_spin_unlock();
	resolve_sem_wait();
	resolve_sem_post();
	resolve_dl_iterate_phdr();
	resolve_dladdr();
	resolve_dladdr1();
	r_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!r_syscall || !r_dl_iterate_phdr || !r_pthread_mutex_lock || !r_dladdr)
		abort();
}

/* ---- Walks in windows -------------------------------------------------------------- */

struct rec {
	int n_uc, n_ex, n_ex0, n_bt, stop_ex, stop_ex0;
	int eh_ex, eh_ex0;  /* frames_eh_frame of the _ex(uc) and _ex(NULL) walks */
	int errno_bad;      /* walk calls that changed errno */
	int sym_errno_bad;  /* symbolization calls that changed errno */
	unsigned long during_walk, during_sym; /* counts in this handler's windows */
	uintptr_t rip;
	struct sframe_bt_frame f[NF];
};

static int devnull = -1;

/* Run one library call in a window, with errno set to a canary. */
#define IN_WINDOW(kind, bad, stmt)              \
	do {                                    \
		errno = 1234;                   \
		window = (kind);                \
		stmt;                           \
		window = W_NONE;                \
		if (errno != 1234)              \
			(bad)++;                \
	} while (0)

/* Every backtrace entry point, then every symbolization entry point, from
 * a signal handler with context uc (or from normal context if uc is
 * NULL). */
NOINL void walk_all(const void *uc, struct rec *r)
{
	int saved = errno;
	void *pcs[NF];
	struct sframe_bt_frame f0[NF];
	struct sframe_bt_status st;
	unsigned long w0 = total(W_WALK), s0 = total(W_SYM);
	if (uc) {
		/* _ex first: in the first handler, the process's first walk. */
		IN_WINDOW(W_WALK, r->errno_bad,
			  r->n_ex = sframe_backtrace_ex(uc, r->f, NF, 0, &st));
		r->stop_ex = st.stop;
		r->eh_ex = st.frames_eh_frame;
		IN_WINDOW(W_WALK, r->errno_bad, r->n_uc = sframe_backtrace_ucontext(uc, pcs, NF));
	}
	IN_WINDOW(W_WALK, r->errno_bad, r->n_ex0 = sframe_backtrace_ex(NULL, f0, NF, 0, &st));
	r->stop_ex0 = st.stop;
	r->eh_ex0 = st.frames_eh_frame;
	IN_WINDOW(W_WALK, r->errno_bad, r->n_bt = sframe_backtrace(pcs, NF));
	IN_WINDOW(W_WALK, r->errno_bad,
		  sframe_backtrace_ex(NULL, f0, NF, SFRAME_BT_FP_FALLBACK_ANY, &st));
	IN_WINDOW(W_WALK, r->errno_bad, (void)sframe_bt_stop_name(st.stop));
	IN_WINDOW(W_WALK, r->errno_bad, sframe_backtrace_set_default_flags(0));

	char scratch[SFRAME_SYMBOLIZE_SCRATCH], line[256];
	struct sframe_symbol sym;
	uintptr_t pc = uc ? (uintptr_t)UC_PC((const ucontext_t *)uc)
			  : (uintptr_t)pcs[0];
	IN_WINDOW(W_SYM, r->sym_errno_bad, sframe_symbolize(pc, &sym, scratch, sizeof scratch));
	IN_WINDOW(W_SYM, r->sym_errno_bad, sframe_format_frame(0, pc, 0, line, sizeof line));
	IN_WINDOW(W_SYM, r->sym_errno_bad, sframe_backtrace_symbols_fd(pcs, 4, devnull));
	IN_WINDOW(W_SYM, r->sym_errno_bad, sframe_write_crash_report(uc, devnull));
	r->during_walk = total(W_WALK) - w0;
	r->during_sym = total(W_SYM) - s0;
	errno = saved;
}

/* ---- Phase 1: SIGPROF on the main thread, from the first walk on ---------------- */

#define MAXREC 640
static struct rec recs[MAXREC];
static _Atomic int nrec;
/* The SIGPROF phases record up to rec_limit (then the handler does
 * nothing): a handler that takes more CPU time than the timer's period
 * finds the next SIGPROF pending as it returns, so records can follow
 * each other faster than the spinning loop checks their count, and one
 * phase would otherwise fill the buffer and leave the next none. */
static _Atomic int rec_limit = MAXREC;

NOINL void prof_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	int k = atomic_load_explicit(&nrec, memory_order_relaxed);
	if (k >= MAXREC || k >= atomic_load_explicit(&rec_limit, memory_order_relaxed))
		return;
	recs[k].rip = (uintptr_t)UC_PC((const ucontext_t *)uc);
	walk_all(uc, &recs[k]);
	atomic_store_explicit(&nrec, k + 1, memory_order_release);
}

static volatile int spin_stop;

LEAF(ip_leaf, 3000)
LEVEL(ip_mid, ip_leaf, 300)
LEVEL(ip_top, ip_mid, 300)

NOINL int phase1_spin(int want)
{
	int r = 0;
	while (atomic_load(&nrec) < want)
		r += ip_top(r);
	return r;
}

static void summarize(const char *phase, int from, int to, const int *chain, int len,
		      int with_sym)
{
	int cnt[V_NVERDICT] = { 0 }, ebad = 0, sebad = 0, short_bt = 0;
	unsigned long walk = 0, sym = 0;
	for (int k = from; k < to; k++) {
		struct rec *r = &recs[k];
		int v = verify_chain(NULL, r->f, r->n_ex, r->stop_ex, NF, chain, len, NULL);
		if (r->n_ex < 1 || r->f[0].pc != r->rip)
			v = V_WRONG;
		cnt[v]++;
		ebad += r->errno_bad;
		sebad += r->sym_errno_bad;
		walk += r->during_walk;
		sym += r->during_sym;
		/* From a handler, the NULL-context walks cross the signal frame
		 * into the interrupted chain: [handler..., restorer, chain, libc]. */
		short_bt += v == V_EXACT && (r->n_bt < r->n_ex + 3 || r->n_ex0 < r->n_ex + 3);
	}
	printf("# %s: %d handlers: ucontext walks %d exact, %d truncated, %d wrong, %d with frame "
	       "0 elsewhere\n",
	       phase, to - from, cnt[V_EXACT], cnt[V_TRUNC], cnt[V_WRONG], cnt[V_OTHER]);
	CHECK(cnt[V_EXACT] > 0 && cnt[V_WRONG] == 0 && short_bt == 0,
	      "%s: the walks are real (%d exact chains, %d wrong, %d short NULL-context walks)",
	      phase, cnt[V_EXACT], cnt[V_WRONG], short_bt);
	CHECK(walk == 0, "%s: backtrace calls made %lu lock/allocation/dl calls", phase, walk);
	CHECK(ebad == 0, "%s: backtrace calls preserve errno (%d changed it)", phase, ebad);
	if (!with_sym)
		return;
	CHECK(sym == 0, "%s: symbolization calls made %lu lock/allocation/dl calls", phase, sym);
	CHECK(sebad == 0, "%s: symbolization calls preserve errno (%d changed it)", phase, sebad);
}

/* ---- Phase 2: SIGUSR1 on a second thread ----------------------------------------- */

LEAF(it_leaf, 3000)
LEVEL(it_mid, it_leaf, 300)
LEVEL(it_top, it_mid, 300)

static _Atomic int t_ready;
NOINL void *it_entry(void *arg)
{
	(void)arg;
	int r = 0;
	atomic_store(&t_ready, 1);
	while (!spin_stop)
		r += it_top(r);
	return (void *)(long)r;
}

/* Start it_entry() on a new thread, send it count SIGUSR1, each once the
 * last one's handler has recorded, then stop it.  False if a handler did
 * not record within 5 s. */
static bool signal_spinning_thread(int count)
{
	pthread_t th;
	spin_stop = 0;
	atomic_store(&t_ready, 0);
	pthread_create(&th, NULL, it_entry, NULL);
	while (!atomic_load(&t_ready))
		sched_yield();
	bool lost = false;
	for (int i = 0; i < count && !lost; i++) {
		int before = atomic_load(&nrec);
		if (before >= MAXREC)
			break;
		pthread_kill(th, SIGUSR1);
		double w0 = now_s();
		while (atomic_load(&nrec) == before)
			if (now_s() - w0 > 5) {
				lost = true;
				break;
			}
	}
	spin_stop = 1;
	pthread_join(th, NULL);
	return !lost;
}

/* ---- Phase 4: the shared library, dlopen()ed ------------------------------------------
 * Thread-local data of a dlopen()ed object is allocated lazily, per thread,
 * by __tls_get_addr() calling malloc: a library that keeps per-thread state
 * must not touch it from a signal handler when it may be loaded that way.
 * So: dlopen build/libsframebt.so, start a fresh thread, and take its
 * walks from SIGUSR1 handlers through the shared object's entry points. */

static int (*so_bt_uc)(const void *, void **, int);
static int (*so_bt_ex)(const void *, struct sframe_bt_frame *, int, unsigned,
		       struct sframe_bt_status *);
static int (*so_bt)(void **, int);

NOINL void so_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	int saved = errno;
	int k = atomic_load_explicit(&nrec, memory_order_relaxed);
	if (k >= MAXREC)
		return;
	struct rec *r = &recs[k];
	void *pcs[NF];
	struct sframe_bt_frame f0[NF];
	struct sframe_bt_status st;
	unsigned long w0 = total(W_WALK);
	r->rip = (uintptr_t)UC_PC((const ucontext_t *)uc);
	IN_WINDOW(W_WALK, r->errno_bad, r->n_uc = so_bt_uc(uc, pcs, NF));
	IN_WINDOW(W_WALK, r->errno_bad, r->n_ex = so_bt_ex(uc, r->f, NF, 0, &st));
	r->stop_ex = st.stop;
	IN_WINDOW(W_WALK, r->errno_bad, r->n_ex0 = so_bt_ex(NULL, f0, NF, 0, &st));
	r->stop_ex0 = st.stop;
	IN_WINDOW(W_WALK, r->errno_bad, r->n_bt = so_bt(pcs, NF));
	r->during_walk = total(W_WALK) - w0;
	r->n_ex0 += 1; /* summarize() expects walk_all()'s extra frame */
	r->n_bt += 1;
	atomic_store_explicit(&nrec, k + 1, memory_order_release);
	errno = saved;
}

static int (*tls_touch)(int);
static void *tls_thread(void *arg)
{
	(void)arg;
	window = W_CONTROL;
	int r = tls_touch(1);
	window = W_NONE;
	return (void *)(long)r;
}

/* ---- Phase 6: SIGPROF while the main thread runs inside libc -------------------------
 * memcpy (a leaf of libc's, written in assembly, with CFI) on a large
 * buffer, and qsort, whose loops in libc call back into the program's
 * comparator.  Frame 0 is then in libc (or in the comparator, under
 * libc's frames); the walk must leave libc through its .eh_frame, find
 * the program's chain, and go on to _start. */

#define LC_BYTES (256 * 1024)
#define LC_ELEMS 4096
static char lc_src[LC_BYTES], lc_dst[LC_BYTES];
static unsigned lc_elems[LC_ELEMS];
static volatile size_t lc_bytes = LC_BYTES; /* not a constant: a call */

NOINL int lc_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

NOINL int lc_copy(int x)
{
	memcpy(lc_dst, lc_src, lc_bytes);
	w_sink += (unsigned char)lc_dst[x & 1023];
	return x + 1;
}

NOINL int lc_sort(int x)
{
	uint64_t seed = (uint64_t)x * 2654435761u + 1;
	for (int i = 0; i < LC_ELEMS; i++)
		lc_elems[i] = (unsigned)rnd_next(&seed);
	qsort(lc_elems, LC_ELEMS, sizeof lc_elems[0], lc_cmp);
	w_sink += lc_elems[x & (LC_ELEMS - 1)];
	return x + 1;
}

NOINL int lc_spin(int (*fn)(int), int want)
{
	int r = 0;
	while (atomic_load(&nrec) < want)
		r += fn(r);
	return r;
}

/* A walk from inside libc: frame 0 in libc, or in lc_cmp (only with
 * cmp_ok), then libc frames (at least one when frame 0 is lc_cmp), then
 * chain (ids, innermost first), then libc's frames and _start, stopped
 * outermost.  V_OTHER: frame 0 is in neither.  *libc_top: the number of
 * frames above the chain that are libc's. */
static int verify_from_libc(const struct sframe_bt_frame *f, int n, int stop,
			    const int *chain, int len, int cmp_ok, int cmp_id,
			    int *libc_top)
{
	*libc_top = 0;
	if (n < 1 || !f[0].exact)
		return V_WRONG;
	int cmp = cmp_ok && wfn_lookup(NULL, f[0].pc) == cmp_id;
	if (!cmp && !in_libc(f[0].pc))
		return V_OTHER;
	int j = 1;
	while (j < n && !f[j].exact && in_libc(lookup_pc(&f[j])))
		j++;
	*libc_top = j - cmp;
	if (*libc_top == 0)
		return V_WRONG;
	for (int i = 0; i < len; i++, j++)
		if (j >= n || f[j].exact || wfn_lookup(NULL, lookup_pc(&f[j])) != chain[i])
			return V_WRONG;
	int tail = 0;
	for (; j < n; j++, tail++)
		if (f[j].exact || tail >= W_TAIL_MAX ||
		    !(in_libc(lookup_pc(&f[j])) || in_start(lookup_pc(&f[j]))))
			return V_WRONG;
	if (tail < 2 || !in_start(lookup_pc(&f[n - 1])) || stop != SFRAME_BT_STOP_OUTERMOST)
		return V_WRONG;
	return V_EXACT;
}

/* Samples of fn (lc_copy or lc_sort) under SIGPROF: every walk whose
 * frame 0 is in libc (or lc_cmp) is checked whole. */
NOINL void phase_in_libc(const char *what, int (*fn)(int), int fn_id, int count,
			 int cmp_ok, int cmp_id)
{
	int chain[] = { fn_id, WFN(lc_spin), WFN(phase_in_libc), WFN(main) };
	int start = atomic_load(&nrec), want = start + count;
	if (want > MAXREC)
		want = MAXREC;
	reset(W_WALK);
	reset(W_SYM);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	atomic_store(&rec_limit, want);
	setitimer(ITIMER_PROF, &it, NULL);
	w_sink += (unsigned long)lc_spin(fn, want);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_PROF, &it, NULL);
	atomic_store(&rec_limit, MAXREC);
	int end = atomic_load(&nrec);
	int inside = 0, exact = 0, wrong = 0, eh_bad = 0, ebad = 0, deepest = 0, one = -1;
	for (int k = start; k < end; k++) {
		struct rec *r = &recs[k];
		int top;
		int v = verify_from_libc(r->f, r->n_ex, r->stop_ex, chain, 4, cmp_ok, cmp_id,
					 &top);
		ebad += r->errno_bad + r->sym_errno_bad;
		if (v == V_OTHER)
			continue;
		inside++;
		if (v == V_EXACT && exact++ == 0)
			one = k;
		else if (v != V_EXACT && wrong++ == 0)
			print_walk("a wrong walk from inside libc", NULL, r->f, r->n_ex, r->stop_ex);
		/* Each libc frame above the chain, and libc's start-up frames,
		 * are unwound with .eh_frame: at least top + 2 of them. */
		eh_bad += r->eh_ex < top + 2;
		if (top > deepest)
			deepest = top;
	}
	printf("# %s: %d samples, %d with frame 0 in libc%s, %d exact, %d wrong, "
	       "up to %d libc frames above the program's\n",
	       what, end - start, inside, cmp_ok ? " or in the comparator" : "", exact, wrong,
	       deepest);
	CHECK(inside >= count / 4 && wrong == 0,
	      "%s: walks interrupting libc leave it to the program's chain and _start, "
	      "outermost (%d of %d, %d wrong)", what, exact, inside, wrong);
	CHECK(eh_bad == 0, "%s: every libc frame unwound with .eh_frame (%d walks short)",
	      what, eh_bad);
	CHECK(total(W_WALK) == 0 && total(W_SYM) == 0 && ebad == 0,
	      "%s: no lock/allocation/dl call (%lu walk, %lu symbolization), errno kept",
	      what, total(W_WALK), total(W_SYM));
	print_counts(what, W_WALK);
	print_counts(what, W_SYM);
	/* The checker rejects a walk that ends early, one that ends at the
	 * chain's end but not as outermost, and a wrong chain frame. */
	if (one >= 0) {
		struct rec *r = &recs[one];
		struct sframe_bt_frame g[NF];
		int top, n = r->n_ex, rej = 0;
		memcpy(g, r->f, sizeof g);
		rej += verify_from_libc(g, n - 1, SFRAME_BT_STOP_NO_UNWIND_INFO, chain, 4, cmp_ok,
					cmp_id, &top) == V_WRONG;
		rej += verify_from_libc(g, n, SFRAME_BT_STOP_BAD_RA, chain, 4, cmp_ok, cmp_id,
					&top) == V_WRONG;
		g[n - 4].pc = (uintptr_t)lc_cmp + 1; /* a chain frame (main's callee) */
		rej += verify_from_libc(g, n, r->stop_ex, chain, 4, cmp_ok, cmp_id, &top) == V_WRONG;
		CHECK(rej == 3, "%s: the checker rejects a short walk, a wrong stop and a wrong "
		      "frame (%d of 3)", what, rej);
	}
}

/* ---- Phase 3: normal context -------------------------------------------------------- */

static struct rec normal_rec;
NOINL int nc_leaf(int x)
{
	walk_all(NULL, &normal_rec);
	return x + normal_rec.n_ex0;
}
NOINL int nc_top(int x)
{
	int r = nc_leaf(x + 1);
	return r * 3;
}

/* ---- Phase 5: a fresh process whose first walk starts inside libc -----------------
 * "t_interpose first-in-libc", exec'd by main(): nothing has called the
 * library, no .eh_frame has been read; the first SIGPROF lands in memcpy,
 * and its handler's walks are the process's first.  Exit status: 0 good,
 * 2 frame 0 was not in libc (the parent runs it again), 1 otherwise. */
NOINL int first_in_libc(void)
{
	objs_init();
	devnull = open("/dev/null", O_WRONLY);
	int chain[] = { WFN(lc_copy), WFN(lc_spin), WFN(first_in_libc), WFN(main) };
	sig_install(SIGPROF, prof_handler, SA_RESTART);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	w_sink += (unsigned long)lc_spin(lc_copy, 1);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_PROF, &it, NULL);
	struct rec *r = &recs[0];
	int top, v = verify_from_libc(r->f, r->n_ex, r->stop_ex, chain, 4, 0, -1, &top);
	printf("# fresh process, first walk: frame 0 %s, %s, %d frames, %d through .eh_frame, "
	       "stopped %s; %lu lock/allocation/dl calls\n",
	       in_libc(r->rip) ? "in libc" : "elsewhere", verdict_name[v], r->n_ex, r->eh_ex,
	       sframe_bt_stop_name(r->stop_ex), r->during_walk + r->during_sym);
	print_counts("fresh process", W_WALK);
	print_counts("fresh process", W_SYM);
	if (v == V_OTHER)
		return 2;
	if (v != V_EXACT)
		print_walk("the fresh process's first walk", NULL, r->f, r->n_ex, r->stop_ex);
	return v == V_EXACT && r->eh_ex >= top + 2 && r->during_walk == 0 &&
	       r->during_sym == 0 && r->errno_bad == 0 && r->sym_errno_bad == 0 ? 0 : 1;
}

/* ---- Phase 7: the crash handler -----------------------------------------------------
 * In a child: sframe_install_crash_handler(), then a fault with the flag
 * set.  The handler reports (to /dev/null) and passes the fault on to the
 * handler installed before it, which clears the flag and ends the child:
 * 0 if nothing was counted and errno is what it was at the fault. */
#define CRASH_ERRNO 4242
static int *volatile crash_address = (int *)16;
static void crash_after(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	int e = errno;
	window = W_NONE;
	printf("# crash handler: %lu lock/allocation/dl calls, errno %d after it\n",
	       total(W_SYM), e);
	print_counts("crash handler", W_SYM);
	fflush(stdout);
	_exit(total(W_SYM) == 0 && e == CRASH_ERRNO ? 0 : 1);
}

NOINL void crash_child(void)
{
	sig_install(SIGSEGV, crash_after, 0);
	if (sframe_install_crash_handler(devnull) != 0)
		_exit(3);
	reset(W_SYM);
	window = W_SYM;
	errno = CRASH_ERRNO;
	w_sink += *crash_address;
	_exit(4);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "first-in-libc") == 0)
		return first_in_libc();
	objs_init(); /* dlopen(RTLD_NOLOAD)/dlsym/_dl_find_object only */
	devnull = open("/dev/null", O_WRONLY);
	double t0 = now_s();
	int chain1[] = { WFN(ip_leaf), WFN(ip_mid), WFN(ip_top), WFN(phase1_spin), WFN(main) };
	int chain2[] = { WFN(it_leaf), WFN(it_mid), WFN(it_top), WFN(it_entry) };

	/* Controls first (they do not call the library). */
	reset(W_CONTROL);
	window = W_CONTROL;
	void *volatile p = malloc(24);
	free(p);
	window = W_NONE;
	CHECK(atomic_load(&counts[W_CONTROL][C_MALLOC]) == 1 &&
	      atomic_load(&counts[W_CONTROL][C_FREE]) == 1,
	      "control: malloc/free in a window are counted");
	reset(W_CONTROL);
	window = W_CONTROL;
	char *volatile s = strdup("libc allocates through malloc");
	window = W_NONE;
	free(s);
	CHECK(atomic_load(&counts[W_CONTROL][C_MALLOC]) >= 1,
	      "control: libc's own malloc call (strdup) is counted");
	reset(W_CONTROL);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
	window = W_CONTROL;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	Dl_info di;
	dladdr((void *)main, &di);
	fflush(stdout);
	/* Prints nothing, in a form the compiler does not turn into another
	 * call (it does "%s" into fputs). */
	fprintf(stderr, "%.*s", 0, "x");
	window = W_NONE;
	CHECK(atomic_load(&counts[W_CONTROL][C_MUTEX_LOCK]) == 1 &&
	      atomic_load(&counts[W_CONTROL][C_RW_RDLOCK]) == 1 &&
	      atomic_load(&counts[W_CONTROL][C_DLADDR]) == 1 &&
	      atomic_load(&counts[W_CONTROL][C_FFLUSH]) == 1 &&
	      atomic_load(&counts[W_CONTROL][C_FPRINTF]) == 1,
	      "control: mutex, rwlock, dladdr and stdio calls in a window are counted");
	reset(W_CONTROL);

	/* Phase 1.  Nothing has called the library yet: the first SIGPROF
	 * walk discovers every object. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = prof_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaction(SIGPROF, &sa, NULL);
	sa.sa_sigaction = prof_handler;
	sigaction(SIGUSR1, &sa, NULL);
	int n1 = (int)env_long("SFB_INTERPOSE_SAMPLES", 100);
	if (n1 > MAXREC / 2)
		n1 = MAXREC / 2;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	atomic_store(&rec_limit, n1);
	setitimer(ITIMER_PROF, &it, NULL);
	w_sink += (unsigned long)phase1_spin(n1);
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_PROF, &it, NULL);
	atomic_store(&rec_limit, MAXREC);
	int end1 = atomic_load(&nrec);
	struct rec *first = &recs[0];
	int v0 = verify_chain(NULL, first->f, first->n_ex, first->stop_ex, NF, chain1, 5, NULL);
	printf("# first walk of the process: frame 0 %s, %s, %lu calls counted\n",
	       wfn_lookup(NULL, first->rip) >= 0 ? "in the spinning chain" : "elsewhere",
	       verdict_name[v0], first->during_walk);
	CHECK(first->during_walk == 0 && first->errno_bad == 0,
	      "the first walk (object discovery in a SIGPROF handler): no lock, no allocation, "
	      "errno kept");
	printf("# first walk: %d frames, %d through .eh_frame, stopped %s; from the handler: "
	       "%d frames, %d through .eh_frame, stopped %s\n",
	       first->n_ex, first->eh_ex, sframe_bt_stop_name(first->stop_ex), first->n_ex0,
	       first->eh_ex0, sframe_bt_stop_name(first->stop_ex0));
	CHECK(end1 > 0 && first->eh_ex >= 2 && first->stop_ex == SFRAME_BT_STOP_OUTERMOST &&
	      in_start(lookup_pc(&first->f[first->n_ex - 1])),
	      "the first walk goes through libc's .eh_frame to _start, outermost "
	      "(%d .eh_frame frames)", first->eh_ex);
	CHECK(first->eh_ex0 >= 2 && first->stop_ex0 == SFRAME_BT_STOP_OUTERMOST,
	      "the first handler's NULL-context walk crosses the signal frame, then libc's "
	      ".eh_frame to _start, outermost (%d .eh_frame frames)", first->eh_ex0);
	summarize("SIGPROF on the main thread", 0, end1, chain1, 5, 1);
	print_counts("SIGPROF walks", W_WALK);
	print_counts("SIGPROF symbolization", W_SYM);
	reset(W_WALK);
	reset(W_SYM);

	/* Phase 2. */
	bool all_recorded = signal_spinning_thread(n1 / 2);
	int end2 = atomic_load(&nrec);
	CHECK(all_recorded && end2 > end1, "SIGUSR1 to a second thread: %d handlers ran", end2 - end1);
	summarize("SIGUSR1 on a second thread", end1, end2, chain2, 4, 1);
	print_counts("SIGUSR1 walks", W_WALK);
	print_counts("SIGUSR1 symbolization", W_SYM);
	reset(W_WALK);
	reset(W_SYM);

	/* Phase 3: normal context.  backtrace.h allows dl_iterate_phdr() here
	 * (discovery of new objects); everything else must stay at 0. */
	w_sink += (unsigned long)nc_top(1);
	unsigned long dl = atomic_load(&counts[W_WALK][C_DL_ITERATE_PHDR]);
	unsigned long other = total(W_WALK) - dl;
	print_counts("normal-context walks", W_WALK);
	print_counts("normal-context symbolization", W_SYM);
	CHECK(normal_rec.n_ex0 >= 4 && normal_rec.n_bt >= 4,
	      "normal context: the walks are real (%d, %d frames)", normal_rec.n_ex0,
	      normal_rec.n_bt);
	CHECK(other == 0,
	      "normal context: backtrace calls made %lu lock/allocation calls (dl_iterate_phdr: "
	      "%lu, allowed)",
	      other, dl);
	CHECK(normal_rec.errno_bad == 0, "normal context: backtrace calls preserve errno");
	CHECK(total(W_SYM) == 0, "normal context: symbolization made %lu lock/allocation calls",
	      total(W_SYM));
	CHECK(normal_rec.sym_errno_bad == 0, "normal context: symbolization preserves errno");

	/* Control for phase 4: a dlopen()ed object's TLS, first touched by a
	 * fresh thread, is allocated through the counted malloc. */
	char tls_path[PATH_MAX];
	build_path("walk_tls_lib.so", tls_path, sizeof tls_path);
	void *th_tls = dlopen(tls_path, RTLD_NOW | RTLD_LOCAL);
	tls_touch = th_tls ? (int (*)(int))dlsym(th_tls, "walk_tls_touch") : NULL;
	CHECK(tls_touch != NULL, "dlopen %s", tls_path);
	if (tls_touch) {
		reset(W_CONTROL);
		pthread_t th;
		pthread_create(&th, NULL, tls_thread, NULL);
		pthread_join(th, NULL);
		CHECK(total(W_CONTROL) > 0,
		      "control: lazily allocated TLS of a dlopen()ed object is counted (%lu calls)",
		      total(W_CONTROL));
		print_counts("TLS control", W_CONTROL);
		reset(W_CONTROL);
	}

	/* Phase 4. */
	char so_path[PATH_MAX];
	const char *b = getenv("SFB_BUILD");
	if (b && *b) {
		snprintf(so_path, sizeof so_path, "%s/libsframebt.so", b);
	} else {
		build_path("../libsframebt.so", so_path, sizeof so_path);
	}
	void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
	so_bt_uc = h ? (int (*)(const void *, void **, int))dlsym(h, "sframe_backtrace_ucontext")
		     : NULL;
	so_bt_ex = h ? (int (*)(const void *, struct sframe_bt_frame *, int, unsigned,
				struct sframe_bt_status *))dlsym(h, "sframe_backtrace_ex")
		     : NULL;
	so_bt = h ? (int (*)(void **, int))dlsym(h, "sframe_backtrace") : NULL;
	CHECK(so_bt_uc && so_bt_ex && so_bt, "dlopen %s", so_path);
	if (so_bt_uc && so_bt_ex && so_bt) {
		sa.sa_sigaction = so_handler;
		sigaction(SIGUSR1, &sa, NULL);
		int start4 = atomic_load(&nrec);
		all_recorded = signal_spinning_thread(n1 / 2);
		int end4 = atomic_load(&nrec);
		CHECK(all_recorded && end4 > start4, "dlopen()ed libsframebt.so, fresh thread: %d handlers",
		      end4 - start4);
		summarize("libsframebt.so from SIGUSR1 on a fresh thread", start4, end4, chain2, 4, 0);
		print_counts("libsframebt.so walks", W_WALK);
		reset(W_WALK);
	}

	/* Phase 5: the first walk of a fresh process, from inside libc. */
	int st6 = -1;
	for (int tries = 0; tries < 5 && (st6 == -1 || st6 == 2); tries++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "first-in-libc", (char *)NULL);
			_exit(127);
		}
		int ws = 0;
		if (pid < 0 || waitpid(pid, &ws, 0) != pid)
			break;
		st6 = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	}
	CHECK(st6 == 0,
	      "a fresh process's first walk, from a SIGPROF in libc's memcpy: through libc's "
	      ".eh_frame to the chain and _start, outermost, no lock/allocation/dl call, errno "
	      "kept (status %d)", st6);

	/* Phase 6: inside libc.  The SIGPROF handler is prof_handler again. */
	sa.sa_sigaction = prof_handler;
	sigaction(SIGPROF, &sa, NULL);
	int lc_cmp_id = WFN(lc_cmp);
	phase_in_libc("SIGPROF in memcpy", lc_copy, WFN(lc_copy), n1 / 2, 0, -1);
	phase_in_libc("SIGPROF in qsort", lc_sort, WFN(lc_sort), n1 / 2, 1, lc_cmp_id);

	/* Phase 7a: JIT code, which no object holds, named from a perf map:
	 * reading and parsing the map take no lock and do not allocate. */
	{
		char map[64], jscratch[SFRAME_SYMBOLIZE_SCRATCH];
		struct sframe_symbol js;
		char *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
		int mfd = open(map, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dprintf(mfd, "%lx 80 jit_a\n%lx 80 jit_b\n", (unsigned long)jit,
			(unsigned long)jit + 0x80);
		close(mfd);
		reset(W_SYM);
		window = W_SYM;
		int named = sframe_symbolize((uintptr_t)jit + 0x90, &js, jscratch, sizeof jscratch);
		window = W_NONE;
		CHECK(named && strcmp(js.name, "jit_b") == 0 && js.name_offset == 0x10 &&
			      total(W_SYM) == 0,
		      "JIT code named from the perf map (%s+%#lx), no lock/allocation/dl call (%lu)",
		      js.name, (unsigned long)js.name_offset, total(W_SYM));
		print_counts("perf map", W_SYM);
		munmap(jit, 4096);
		unlink(map);
	}

	/* Phase 7: the crash handler, in a child. */
	fflush(stdout);
	pid_t cpid = fork();
	if (cpid == 0)
		crash_child();
	int cws = 0;
	waitpid(cpid, &cws, 0);
	CHECK(WIFEXITED(cws) && WEXITSTATUS(cws) == 0,
	      "sframe_install_crash_handler(): a fault reported and passed on to the handler "
	      "installed before, with no lock/allocation/dl call and errno kept (status %#x)", cws);

	/* Control: the library's own calls reach this interposer. */
	reset(W_CONTROL);
	window = W_CONTROL;
	sframe_backtrace_warmup();
	window = W_NONE;
	CHECK(atomic_load(&counts[W_CONTROL][C_DL_ITERATE_PHDR]) > 0,
	      "control: sframe_backtrace_warmup()'s dl_iterate_phdr call is counted (%lu)",
	      atomic_load(&counts[W_CONTROL][C_DL_ITERATE_PHDR]));
	printf("# took %.2f s\n", now_s() - t0);
	CHECK_DONE();
}
