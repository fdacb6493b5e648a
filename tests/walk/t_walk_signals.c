/* Walks from signal handlers, checked against the known call chains of the
 * interrupted code.
 *
 * (a) SIGPROF from per-thread CPU-time timers on 4 threads spinning in 4
 *     distinct chains (depths 3..6, one with a VLA frame, i.e. an RBP-based
 *     CFA, one with a 6 KB frame); the handler alternates
 *     sframe_backtrace_ucontext() and sframe_backtrace_ex(uc).  >= 95% of
 *     samples whose frame 0 is in the chain must be the whole chain, none
 *     may contain a wrong frame.
 * (b) SIGSEGV on a sigaltstack from a NULL store three calls below main:
 *     the ucontext walk, and sframe_backtrace_ex(NULL) from the handler,
 *     which must cross the signal frame back into the same chain.
 * (c) SIGUSR1 by pthread_kill() to 3 threads spinning in known chains:
 *     every walk exact, and the NULL-context walk crosses the signal frame.
 * (d) Nested signals: SIGUSR1 interrupts a spinning thread, its handler
 *     faults in a function of its own (SIGSEGV); the SIGSEGV handler's walk
 *     must cross both signal frames back to the original chain.
 *
 * Compiled without frame pointers (tests/walk.mk.inc), so only SFrame can
 * unwind these functions.  SFB_WALK_QUICK=1 shrinks it (for valgrind);
 * under valgrind, or with SFB_WALK_FPE=1, the faults of (b) and (d) are
 * divisions by zero (SIGFPE) instead of NULL stores, which memcheck would
 * report as errors. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "walk_common.h"
#include "uc_regs.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define ON_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef ON_VALGRIND
#define ON_VALGRIND() 0
#endif

#define NF 32

static int quick;
int main(void);

/* ---- Chains ---------------------------------------------------------------- */

/* (a): four distinct chains. */
LEAF(a0_l3, 3000)
LEVEL(a0_l2, a0_l3, 300)
LEVEL(a0_l1, a0_l2, 300)

LEAF(a1_l4, 3000)
VLA_LEVEL(a1_l3, a1_l4, 300)
LEVEL(a1_l2, a1_l3, 300)
LEVEL(a1_l1, a1_l2, 300)

LEAF(a2_l2, 4000)
LEVEL(a2_l1, a2_l2, 500)

LEAF(a3_l5, 2000)
LEVEL(a3_l4, a3_l5, 200)
BIG_LEVEL(a3_l3, a3_l4, 200)
LEVEL(a3_l2, a3_l3, 200)
LEVEL(a3_l1, a3_l2, 200)

/* (c): three more. */
LEAF(c0_l2, 3000)
LEVEL(c0_l1, c0_l2, 300)

LEAF(c1_l3, 3000)
VLA_LEVEL(c1_l2, c1_l3, 300)
LEVEL(c1_l1, c1_l2, 300)

LEAF(c2_l4, 3000)
LEVEL(c2_l3, c2_l4, 300)
LEVEL(c2_l2, c2_l3, 300)
LEVEL(c2_l1, c2_l2, 300)

/* (d) */
LEAF(d_l3, 3000)
LEVEL(d_l2, d_l3, 300)
LEVEL(d_l1, d_l2, 300)

/* ---- Per-thread state ------------------------------------------------------ */

struct sample {
	int n, stop;
	int api;          /* 0: _ex(uc), 1: _ucontext */
	int n2, stop2, signals2;
	uintptr_t rip;
	struct sframe_bt_frame f[NF];
	struct sframe_bt_frame f2[NF]; /* (c): sframe_backtrace_ex(NULL) */
	void *pcs[NF];
};

#define MAXS 1500

struct thr {
	int idx;
	pthread_t th;
	_Atomic int ready;
	volatile int stop;
	_Atomic int ns;
	timer_t timer;
	int use_timer;
	int chain[8], len;
	struct sample *s;
};

static __thread struct thr *self;

static void thread_setup(struct thr *t)
{
	self = t;
	if (t->use_timer)
		t->timer = start_thread_cpu_timer(1000000);
	atomic_store(&t->ready, 1);
}

static void thread_teardown(struct thr *t)
{
	if (t->use_timer)
		stop_thread_cpu_timer(t->timer);
}

#define ENTRY(name, callee)                                  \
	NOINL void *name(void *arg)                          \
	{                                                    \
		struct thr *t = arg;                         \
		thread_setup(t);                             \
		int r = 0;                                   \
		while (!t->stop) {                           \
			r += callee(r);                      \
			SPIN(50);                            \
		}                                            \
		thread_teardown(t);                          \
		return (void *)(long)r;                      \
	}
ENTRY(a_entry0, a0_l1)
ENTRY(a_entry1, a1_l1)
ENTRY(a_entry2, a2_l1)
ENTRY(a_entry3, a3_l1)
ENTRY(c_entry0, c0_l1)
ENTRY(c_entry1, c1_l1)
ENTRY(c_entry2, c2_l1)
ENTRY(d_entry, d_l1)

static void set_chain(struct thr *t, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		t->chain[i] = va_arg(ap, int);
	va_end(ap);
	t->len = n;
}

static void start(struct thr *t, void *(*fn)(void *))
{
	if (pthread_create(&t->th, NULL, fn, t) != 0) {
		perror("pthread_create");
		exit(1);
	}
}

static int wait_ready(struct thr *t, int n)
{
	double t0 = now_s();
	for (int i = 0; i < n; i++)
		while (!atomic_load(&t[i].ready)) {
			if (now_s() - t0 > 10)
				return 0;
			sched_yield();
		}
	return 1;
}

static void install(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | flags;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGPROF);
	sigaddset(&sa.sa_mask, SIGUSR1);
	if (sigaction(sig, &sa, NULL) != 0) {
		perror("sigaction");
		exit(1);
	}
}

static uintptr_t uc_rip(const void *uc)
{
	return (uintptr_t)UC_PC((const ucontext_t *)uc);
}

/* ---- (a) SIGPROF on 4 threads ------------------------------------------------ */

static void prof_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	struct thr *t = self;
	if (!t)
		return;
	int k = atomic_load_explicit(&t->ns, memory_order_relaxed);
	if (k >= MAXS)
		return;
	struct sample *s = &t->s[k];
	s->rip = uc_rip(uc);
	s->api = k & 1;
	if (s->api) {
		s->n = sframe_backtrace_ucontext(uc, s->pcs, NF);
		s->stop = -1;
	} else {
		struct sframe_bt_status st;
		s->n = sframe_backtrace_ex(uc, s->f, NF, 0, &st);
		s->stop = st.stop;
	}
	atomic_store_explicit(&t->ns, k + 1, memory_order_release);
}

static int is_chain_fn(const struct thr *all, int nall, int id)
{
	for (int i = 0; i < nall; i++)
		for (int j = 0; j < all[i].len; j++)
			if (all[i].chain[j] == id)
				return 1;
	return 0;
}

NOINL void test_a(void)
{
	static struct thr t[4];
	static struct sample samples[4][MAXS];
	void *(*entries[4])(void *) = { a_entry0, a_entry1, a_entry2, a_entry3 };
	set_chain(&t[0], 4, WFN(a0_l3), WFN(a0_l2), WFN(a0_l1), WFN(a_entry0));
	set_chain(&t[1], 5, WFN(a1_l4), WFN(a1_l3), WFN(a1_l2), WFN(a1_l1), WFN(a_entry1));
	set_chain(&t[2], 3, WFN(a2_l2), WFN(a2_l1), WFN(a_entry2));
	set_chain(&t[3], 6, WFN(a3_l5), WFN(a3_l4), WFN(a3_l3), WFN(a3_l2), WFN(a3_l1),
		  WFN(a_entry3));
	install(SIGPROF, prof_handler, 0);

	int target = quick ? 60 : 150;
	double t0 = now_s();
	for (int i = 0; i < 4; i++) {
		t[i].idx = i;
		t[i].use_timer = 1;
		t[i].s = samples[i];
		start(&t[i], entries[i]);
	}
	CHECK(wait_ready(t, 4), "(a) 4 sampled threads started");
	/* The loop ends once every thread has its samples (about 1 s on an
	 * idle machine); the limit is for a machine so loaded that the
	 * threads' CPU-time timers fire a few times a second. */
	double limit = 120;
	for (;;) {
		int done = 1;
		for (int i = 0; i < 4; i++)
			done &= atomic_load(&t[i].ns) >= target;
		if (done || now_s() - t0 > limit)
			break;
		usleep(10000);
	}
	for (int i = 0; i < 4; i++)
		t[i].stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i].th, NULL);
	double el = now_s() - t0;

	for (int i = 0; i < 4; i++) {
		int cnt[V_NVERDICT] = { 0 }, rip_bad = 0, printed = 0, foreign = 0;
		int ns = atomic_load(&t[i].ns);
		for (int k = 0; k < ns; k++) {
			struct sample *s = &t[i].s[k];
			if (s->api)
				pcs_to_frames(s->pcs, s->n, 1, s->f);
			int bad;
			int v = verify_chain(NULL, s->f, s->n, s->stop, NF, t[i].chain, t[i].len,
					     &bad);
			if (s->n < 1 || s->f[0].pc != s->rip)
				rip_bad++, v = V_WRONG;
			if (v == V_OTHER && is_chain_fn(t, 4, wfn_lookup(NULL, s->f[0].pc)))
				foreign++, v = V_WRONG; /* frame 0 in another thread's chain */
			cnt[v]++;
			if (v == V_WRONG && printed++ < 3) {
				printf("# (a) thread %d sample %d (%s), first bad frame %d:\n", i, k,
				       s->api ? "_ucontext" : "_ex", bad);
				print_walk("walk", NULL, s->f, s->n, s->stop);
			}
		}
		int in_chain = cnt[V_EXACT] + cnt[V_TRUNC] + cnt[V_WRONG];
		printf("# (a) thread %d: %d samples: %d exact, %d truncated, %d wrong, "
		       "%d frame 0 elsewhere\n",
		       i, ns, cnt[V_EXACT], cnt[V_TRUNC], cnt[V_WRONG], cnt[V_OTHER]);
		/* Under valgrind threads run one at a time, and CPU-time
		 * timers fire far less evenly: fewer samples, same checks. */
		int want = under_valgrind() ? 1 : target / 2;
		CHECK(in_chain >= want, "(a) thread %d: %d samples in its chain (want >= %d)",
		      i, in_chain, want);
		CHECK(cnt[V_WRONG] == 0 && rip_bad == 0 && foreign == 0,
		      "(a) thread %d: no wrong frame (%d wrong, %d frame 0 != RIP, %d foreign)", i,
		      cnt[V_WRONG], rip_bad, foreign);
		CHECK(in_chain > 0 && cnt[V_EXACT] * 100 >= in_chain * 95,
		      "(a) thread %d: %d of %d in-chain samples are the exact chain (>= 95%%)", i,
		      cnt[V_EXACT], in_chain);
	}
	printf("# (a) took %.2f s\n", el);
}

/* ---- (b) SIGSEGV on a sigaltstack ------------------------------------------- */

static int *volatile null_ptr;
static volatile int zero_div;
/* The synchronous fault of (b) and (d): a NULL store (SIGSEGV), or under
 * valgrind, which reports the store as an error, a division by zero
 * (SIGFPE).  Either way the faulting PC is in the test's function. */
static int fault_sig = SIGSEGV;
#define FAULT(x)                                                  \
	do {                                                      \
		if (fault_sig == SIGFPE)                          \
			w_sink += (unsigned long)((x) / zero_div); \
		else                                              \
			*null_ptr = (x);                          \
	} while (0)
static sigjmp_buf b_env;
static char *alt_lo;
static size_t alt_size = 1 << 16;

static struct {
	uintptr_t rip;
	int on_alt;
	int n1, n2, n3;
	struct sframe_bt_status st1, st2;
	struct sframe_bt_frame f1[NF], f2[NF];
	void *pcs3[NF];
} bres;

NOINL void segv_b_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	char here;
	bres.on_alt = &here >= alt_lo && &here < alt_lo + alt_size;
	bres.rip = uc_rip(uc);
	bres.n1 = sframe_backtrace_ex(uc, bres.f1, NF, 0, &bres.st1);
	bres.n2 = sframe_backtrace_ex(NULL, bres.f2, NF, 0, &bres.st2);
	bres.n3 = sframe_backtrace(bres.pcs3, NF);
	siglongjmp(b_env, 1);
}

NOINL int b_leaf(int x)
{
	SPIN(10);
	FAULT(x);
	return x + (int)w_sink;
}
NOINL int b_mid(int x)
{
	int r = b_leaf(x + 1);
	return r * 3;
}
NOINL int b_top(int x)
{
	int r = b_mid(x + 2);
	return r + 7;
}

NOINL int test_b_run(void)
{
	if (sigsetjmp(b_env, 1) == 0) {
		int r = b_top(1);
		w_sink += (unsigned long)r;
		return 0; /* no fault */
	}
	return 1;
}

/* Checks a NULL-context walk taken in a handler whose first frames are
 * [handler, the libc restorer, the interrupted PC (signal frame)].
 * Returns the index of the signal frame, or -1. */
static int check_handler_prefix(const char *what, const struct sframe_bt_frame *f, int n,
				int handler_id, uintptr_t rip)
{
	int ok0 = n > 0 && !f[0].exact && wfn_lookup(NULL, f[0].pc - 1) == handler_id;
	int ok1 = n > 1 && !f[1].exact && in_libc(f[1].pc - 1);
	int ok2 = n > 2 && f[2].exact && f[2].source == SFRAME_BT_FROM_SIGNAL_FRAME &&
		  f[2].pc == rip;
	CHECK(ok0, "%s: frame 0 is the return address into %s", what,
	      wfn_name(NULL, handler_id));
	CHECK(ok1, "%s: frame 1 is the signal restorer in libc", what);
	CHECK(ok2, "%s: frame 2 is the interrupted PC, from the signal frame, exact", what);
	return ok0 && ok1 && ok2 ? 2 : -1;
}

NOINL int test_b(void)
{
	int h = WFN(segv_b_handler);
	int chain[] = { WFN(b_leaf), WFN(b_mid), WFN(b_top), WFN(test_b_run), WFN(test_b),
			WFN(main) };
	int len = (int)(sizeof chain / sizeof chain[0]);
	alt_lo = mmap(NULL, alt_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack_t ss = { .ss_sp = alt_lo, .ss_size = alt_size, .ss_flags = 0 };
	stack_t old;
	if (alt_lo == MAP_FAILED || sigaltstack(&ss, &old) != 0) {
		perror("sigaltstack");
		exit(1);
	}
	struct sigaction sa, olds;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = segv_b_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(fault_sig, &sa, &olds);

	double t0 = now_s();
	int faulted = test_b_run();
	double el = now_s() - t0;
	sigaction(fault_sig, &olds, NULL);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);

	CHECK(faulted, "(b) the fault happened and the handler jumped back");
	CHECK(bres.on_alt, "(b) the fault handler ran on the sigaltstack");
	CHECK(wfn_lookup(NULL, bres.rip) == chain[0], "(b) the fault is in b_leaf");

	int bad;
	int v = verify_chain(NULL, bres.f1, bres.n1, bres.st1.stop, NF, chain, len, &bad);
	CHECK(v == V_EXACT && bres.f1[0].pc == bres.rip,
	      "(b) ucontext walk: b_leaf..main then libc, stop %s (%s, bad frame %d)",
	      sframe_bt_stop_name(bres.st1.stop), verdict_name[v], bad);
	if (v != V_EXACT)
		print_walk("(b) ucontext walk", NULL, bres.f1, bres.n1, bres.st1.stop);

	int s = check_handler_prefix("(b) walk from the handler", bres.f2, bres.n2, h, bres.rip);
	v = s < 0 ? V_WRONG
		  : verify_chain(NULL, bres.f2 + s, bres.n2 - s, bres.st2.stop, NF - s, chain,
				 len, &bad);
	CHECK(v == V_EXACT && bres.st2.frames_signal == 1,
	      "(b) walk from the handler crosses the signal frame into b_leaf..main "
	      "(%s, bad frame %d, %d signal frames)",
	      verdict_name[v], bad < 0 ? bad : bad + s, bres.st2.frames_signal);
	if (v != V_EXACT || s < 0)
		print_walk("(b) walk from the handler", NULL, bres.f2, bres.n2, bres.st2.stop);
	int same = bres.n2 == bres.n1 + 2;
	for (int i = 0; same && i < bres.n1; i++)
		same = bres.f2[i + 2].pc == bres.f1[i].pc;
	CHECK(same, "(b) past the signal frame, the handler's walk equals the ucontext walk");
	/* Frame 0 is another call site in the handler; the rest must agree. */
	same = bres.n3 == bres.n2 && bres.n3 > 0 &&
	       wfn_lookup(NULL, (uintptr_t)bres.pcs3[0] - 1) == h;
	for (int i = 1; same && i < bres.n3; i++)
		same = (uintptr_t)bres.pcs3[i] == bres.f2[i].pc;
	CHECK(same, "(b) sframe_backtrace() in the handler gives the same PCs (%d vs %d frames)",
	      bres.n3, bres.n2);
	printf("# (b) took %.3f ms\n", el * 1e3);
	return 0;
}

/* ---- (c) pthread_kill to 3 spinning threads -------------------------------- */

NOINL void usr1_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	struct thr *t = self;
	if (!t)
		return;
	int k = atomic_load_explicit(&t->ns, memory_order_relaxed);
	if (k >= MAXS)
		return;
	struct sample *s = &t->s[k];
	struct sframe_bt_status st;
	s->rip = uc_rip(uc);
	s->api = 0;
	s->n = sframe_backtrace_ex(uc, s->f, NF, 0, &st);
	s->stop = st.stop;
	s->n2 = sframe_backtrace_ex(NULL, s->f2, NF, 0, &st);
	s->stop2 = st.stop;
	s->signals2 = st.frames_signal;
	atomic_store_explicit(&t->ns, k + 1, memory_order_release);
}

NOINL void test_c(void)
{
	static struct thr t[3];
	static struct sample samples[3][MAXS];
	void *(*entries[3])(void *) = { c_entry0, c_entry1, c_entry2 };
	int h = WFN(usr1_handler);
	set_chain(&t[0], 3, WFN(c0_l2), WFN(c0_l1), WFN(c_entry0));
	set_chain(&t[1], 4, WFN(c1_l3), WFN(c1_l2), WFN(c1_l1), WFN(c_entry1));
	set_chain(&t[2], 5, WFN(c2_l4), WFN(c2_l3), WFN(c2_l2), WFN(c2_l1), WFN(c_entry2));
	install(SIGUSR1, usr1_handler, 0);
	double t0 = now_s();
	for (int i = 0; i < 3; i++) {
		t[i].idx = i;
		t[i].s = samples[i];
		start(&t[i], entries[i]);
	}
	CHECK(wait_ready(t, 3), "(c) 3 threads started");
	int rounds = quick ? 20 : 100, lost = 0;
	/* Each round signals the 3 threads, then waits for all 3 handlers. */
	for (int r = 0; r < rounds && !lost; r++) {
		int before[3];
		for (int i = 0; i < 3; i++) {
			before[i] = atomic_load(&t[i].ns);
			pthread_kill(t[i].th, SIGUSR1);
		}
		double w0 = now_s();
		for (int i = 0; i < 3 && !lost; i++)
			while (atomic_load(&t[i].ns) == before[i]) {
				if (now_s() - w0 > 5) {
					lost = 1;
					break;
				}
				sched_yield();
			}
	}
	CHECK(!lost, "(c) every pthread_kill() was handled");
	for (int i = 0; i < 3; i++)
		t[i].stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i].th, NULL);
	double el = now_s() - t0;

	for (int i = 0; i < 3; i++) {
		int ns = atomic_load(&t[i].ns);
		int cnt[V_NVERDICT] = { 0 }, cross_bad = 0, printed = 0;
		for (int k = 0; k < ns; k++) {
			struct sample *s = &t[i].s[k];
			int bad;
			int v = verify_chain(NULL, s->f, s->n, s->stop, NF, t[i].chain, t[i].len,
					     &bad);
			if (s->n < 1 || s->f[0].pc != s->rip)
				v = V_WRONG;
			cnt[v]++;
			/* The handler's own walk: [handler, restorer, signal frame,
			 * then exactly the ucontext walk]. */
			int ok = s->n2 == s->n + 2 && s->signals2 == 1 && s->stop2 == s->stop &&
				 !s->f2[0].exact && wfn_lookup(NULL, s->f2[0].pc - 1) == h &&
				 in_libc(s->f2[1].pc - 1) && s->f2[2].exact &&
				 s->f2[2].source == SFRAME_BT_FROM_SIGNAL_FRAME;
			for (int j = 0; ok && j < s->n; j++)
				ok = s->f2[j + 2].pc == s->f[j].pc;
			cross_bad += !ok;
			if ((v != V_EXACT || !ok) && printed++ < 3) {
				printf("# (c) thread %d sample %d: %s, bad frame %d\n", i, k,
				       verdict_name[v], bad);
				print_walk("ucontext walk", NULL, s->f, s->n, s->stop);
				print_walk("walk from the handler", NULL, s->f2, s->n2, s->stop2);
			}
		}
		printf("# (c) thread %d: %d samples: %d exact, %d truncated, %d wrong, %d other\n",
		       i, ns, cnt[V_EXACT], cnt[V_TRUNC], cnt[V_WRONG], cnt[V_OTHER]);
		/* A signal can arrive while the thread is between two trips
		 * through its chain (frame 0 elsewhere: "other"); every sample
		 * inside the chain must be exact, and nearly all land there. */
		CHECK(ns == rounds && cnt[V_WRONG] == 0 && cnt[V_TRUNC] == 0 &&
			      cnt[V_EXACT] >= rounds * 95 / 100,
		      "(c) thread %d: %d of %d pthread_kill samples are the exact chain, "
		      "none wrong or truncated", i, cnt[V_EXACT], ns);
		CHECK(ns > 0 && cross_bad == 0,
		      "(c) thread %d: the handler's own walk crosses the signal frame into the "
		      "same chain (%d bad)",
		      i, cross_bad);
	}
	printf("# (c) took %.2f s\n", el);
}

/* ---- (d) nested signals ----------------------------------------------------- */

static sigjmp_buf d_env;
static struct {
	uintptr_t rip_outer, rip_inner;
	int n_in, n_inuc, n_out;
	struct sframe_bt_status st_in, st_inuc, st_out;
	struct sframe_bt_frame f_in[NF], f_inuc[NF], f_out[NF];
	_Atomic int done;
	int faulted;
} dres;

NOINL int d_fault_leaf(int x)
{
	SPIN(5);
	FAULT(x);
	return x + (int)w_sink;
}
NOINL int d_fault_top(int x)
{
	int r = d_fault_leaf(x + 1);
	return r * 5;
}

NOINL void segv_d_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	dres.rip_inner = uc_rip(uc);
	dres.n_in = sframe_backtrace_ex(NULL, dres.f_in, NF, 0, &dres.st_in);
	dres.n_inuc = sframe_backtrace_ex(uc, dres.f_inuc, NF, 0, &dres.st_inuc);
	dres.faulted = 1;
	siglongjmp(d_env, 1);
}

NOINL void usr1_nested(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	if (!self)
		return;
	dres.rip_outer = uc_rip(uc);
	dres.n_out = sframe_backtrace_ex(uc, dres.f_out, NF, 0, &dres.st_out);
	if (sigsetjmp(d_env, 1) == 0)
		w_sink += (unsigned long)d_fault_top(1);
	atomic_fetch_add(&dres.done, 1);
}

NOINL void test_d(void)
{
	static struct thr t;
	static struct sample dummy[1];
	int hin = WFN(segv_d_handler), hout = WFN(usr1_nested);
	int fl = WFN(d_fault_leaf), ft = WFN(d_fault_top);
	set_chain(&t, 4, WFN(d_l3), WFN(d_l2), WFN(d_l1), WFN(d_entry));
	install(SIGUSR1, usr1_nested, 0);
	struct sigaction sa, olds;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = segv_d_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(fault_sig, &sa, &olds);

	t.s = dummy;
	double t0 = now_s();
	start(&t, d_entry);
	CHECK(wait_ready(&t, 1), "(d) thread started");
	int rounds = quick ? 10 : 100;
	int ok_in = 0, ok_inuc = 0, ok_out = 0, lost = 0, printed = 0;
	for (int r = 0; r < rounds; r++) {
		int before = atomic_load(&dres.done);
		dres.faulted = 0;
		pthread_kill(t.th, SIGUSR1);
		double w0 = now_s();
		while (atomic_load(&dres.done) == before) {
			if (now_s() - w0 > 5) {
				lost = 1;
				break;
			}
			sched_yield();
		}
		if (lost)
			break;
		int bad = -1, v;
		/* Outer ucontext walk: the spinning chain. */
		v = verify_chain(NULL, dres.f_out, dres.n_out, dres.st_out.stop, NF, t.chain, t.len,
				 &bad);
		ok_out += v == V_EXACT;
		/* Inner NULL-context walk: [segv handler, restorer, SIG d_fault_leaf,
		 * d_fault_top, usr1_nested, restorer, SIG chain..., libc]. */
		const struct sframe_bt_frame *f = dres.f_in;
		int n = dres.n_in;
		int okp = dres.faulted && n > 7 && !f[0].exact &&
			  wfn_lookup(NULL, f[0].pc - 1) == hin && in_libc(f[1].pc - 1) &&
			  !f[1].exact && f[2].exact && f[2].source == SFRAME_BT_FROM_SIGNAL_FRAME &&
			  f[2].pc == dres.rip_inner && wfn_lookup(NULL, f[2].pc) == fl &&
			  !f[3].exact && wfn_lookup(NULL, f[3].pc - 1) == ft && !f[4].exact &&
			  wfn_lookup(NULL, f[4].pc - 1) == hout && !f[5].exact &&
			  in_libc(f[5].pc - 1) && f[6].exact &&
			  f[6].source == SFRAME_BT_FROM_SIGNAL_FRAME && f[6].pc == dres.rip_outer;
		v = okp ? verify_chain(NULL, f + 6, n - 6, dres.st_in.stop, NF - 6, t.chain, t.len,
				       &bad)
			: V_WRONG;
		int good_in = okp && v == V_EXACT && dres.st_in.frames_signal == 2;
		ok_in += good_in;
		/* Inner ucontext walk: [d_fault_leaf, d_fault_top, usr1_nested,
		 * restorer, SIG chain..., libc]. */
		f = dres.f_inuc;
		n = dres.n_inuc;
		okp = n > 5 && f[0].exact && f[0].pc == dres.rip_inner &&
		      wfn_lookup(NULL, f[0].pc) == fl && wfn_lookup(NULL, f[1].pc - 1) == ft &&
		      wfn_lookup(NULL, f[2].pc - 1) == hout && in_libc(f[3].pc - 1) && f[4].exact &&
		      f[4].source == SFRAME_BT_FROM_SIGNAL_FRAME && f[4].pc == dres.rip_outer;
		v = okp ? verify_chain(NULL, f + 4, n - 4, dres.st_inuc.stop, NF - 4, t.chain, t.len,
				       &bad)
			: V_WRONG;
		int good_inuc = okp && v == V_EXACT && dres.st_inuc.frames_signal == 1;
		ok_inuc += good_inuc;
		if ((!good_in || !good_inuc) && printed++ < 2) {
			print_walk("(d) inner walk from the SIGSEGV handler", NULL, dres.f_in,
				   dres.n_in, dres.st_in.stop);
			print_walk("(d) inner ucontext walk", NULL, dres.f_inuc, dres.n_inuc,
				   dres.st_inuc.stop);
			print_walk("(d) outer ucontext walk", NULL, dres.f_out, dres.n_out,
				   dres.st_out.stop);
		}
	}
	t.stop = 1;
	pthread_join(t.th, NULL);
	sigaction(fault_sig, &olds, NULL);
	CHECK(!lost, "(d) every nested round completed");
	CHECK(ok_out == rounds, "(d) outer ucontext walks exact: %d/%d", ok_out, rounds);
	CHECK(ok_in == rounds,
	      "(d) inner handler's walk crosses both signal frames to the original chain: %d/%d",
	      ok_in, rounds);
	CHECK(ok_inuc == rounds,
	      "(d) inner ucontext walk crosses the outer signal frame: %d/%d", ok_inuc, rounds);
	printf("# (d) took %.2f s\n", now_s() - t0);
}

int main(void)
{
	quick = env_long("SFB_WALK_QUICK", 0) != 0;
	if (ON_VALGRIND() || env_long("SFB_WALK_FPE", 0)) {
		fault_sig = SIGFPE;
		printf("# faults by division by zero (SIGFPE) instead of NULL stores\n");
	}
	objs_init();
	double t0 = now_s();
	test_a();
	test_b();
	test_c();
	test_d();
	printf("# total %.2f s\n", now_s() - t0);
	CHECK_DONE();
}
