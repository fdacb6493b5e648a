/* The walker where users' programs run: glibc or musl, dynamic or static.
 * Ground truth is each function's own __builtin_return_address(0), which
 * the compiler computes from its frame layout, not from SFrame.
 *  1. A chain in the program, walked from its innermost function.
 *  2. SIGPROF samples of three threads spinning at the end of a chain.
 *  3. A crash: a NULL store at the end of a chain, walked and symbolized
 *     from the SIGSEGV handler.
 *  4. Dynamic builds (PORT_DLOPEN): a chain through a dlopen()ed object,
 *     before and after sframe_backtrace_warmup(); where the object table
 *     is used (glibc < 2.35, musl), the walk before the warm-up stops in
 *     the new object with no-object; after dlclose(), a PC in the unloaded
 *     object is never walked with the stale entry.
 * Built -fomit-frame-pointer -fno-optimize-sibling-calls: only SFrame
 * rows can unwind these frames. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#ifdef PORT_DLOPEN
#include <dlfcn.h>
#endif

#include "backtrace.h"
#include "check.h"
#include "uc_regs.h"

#define NOINLINE __attribute__((noinline))
#define RA() ((uintptr_t)__builtin_return_address(0))
#define BARRIER() __asm__ volatile("" ::: "memory")

static uintptr_t pcs(void *const *buf, int i)
{
	return (uintptr_t)buf[i];
}

/* ---- 1. A chain in the program ------------------------------------------ */

static volatile uintptr_t chain_ra[4];
static void *chain_buf[32];
static int chain_n;

NOINLINE int chain4(int x)
{
	chain_ra[3] = RA();
	chain_n = sframe_backtrace(chain_buf, 32);
	BARRIER();
	return x + chain_n;
}
NOINLINE int chain3(int x) { chain_ra[2] = RA(); int r = chain4(x + 1); BARRIER(); return r + 1; }
NOINLINE int chain2(int x) { chain_ra[1] = RA(); int r = chain3(x + 1); BARRIER(); return r + 1; }
NOINLINE int chain1(int x) { chain_ra[0] = RA(); int r = chain2(x + 1); BARRIER(); return r + 1; }

static void test_chain(void)
{
	chain1(1);
	CHECK(chain_n >= 5, "chain: %d frames", chain_n);
	CHECK(pcs(chain_buf, 0) - (uintptr_t)chain4 < 256, "chain: frame 0 in chain4");
	for (int i = 1; i <= 4; i++)
		CHECK(chain_n > i && pcs(chain_buf, i) == chain_ra[4 - i],
		      "chain: frame %d is the return address into chain%s", i,
		      (const char *[]){ "", "3", "2", "1", " caller" }[i]);
}

/* ---- 2. SIGPROF samples on threads -------------------------------------- */

#define THREADS 3
#define ROUNDS 150
struct spinner {
	volatile uintptr_t ra[3];
	_Atomic int ready;
	_Atomic int good, bad;
	pthread_t tid;
};
static struct spinner spinners[THREADS];
static _Atomic int stop_spinning;
static __thread struct spinner *self;

NOINLINE int spin3(int x)
{
	self->ra[2] = RA();
	atomic_store(&self->ready, 1);
	while (!atomic_load_explicit(&stop_spinning, memory_order_relaxed))
		x = x * 7 + 1;
	BARRIER();
	return x;
}
NOINLINE int spin2(int x) { self->ra[1] = RA(); int r = spin3(x + 1); BARRIER(); return r + 1; }
NOINLINE int spin1(int x) { self->ra[0] = RA(); int r = spin2(x + 1); BARRIER(); return r + 1; }

static void *spin_main(void *arg)
{
	self = arg;
	return (void *)(intptr_t)spin1(3);
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	void *buf[32];
	int n = sframe_backtrace_ucontext(uc, buf, 32);
	struct spinner *s = self;
	if (!s)
		return;
	bool ok = n >= 4 && pcs(buf, 0) - (uintptr_t)spin3 < 512 &&
		  pcs(buf, 1) == s->ra[2] && pcs(buf, 2) == s->ra[1] && pcs(buf, 3) == s->ra[0];
	atomic_fetch_add(ok ? &s->good : &s->bad, 1);
}

static void test_samples(void)
{
	struct sigaction sa = { .sa_sigaction = on_prof, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	for (int t = 0; t < THREADS; t++)
		pthread_create(&spinners[t].tid, NULL, spin_main, &spinners[t]);
	for (int t = 0; t < THREADS; t++)
		while (!atomic_load(&spinners[t].ready))
			sched_yield();
	/* One sample at a time per thread: a pending signal sent again is
	 * lost, so wait (at most a second) for each to be taken. */
	struct timespec ms = { 0, 1000000 };
	/* valgrind runs one thread at a time: fewer rounds. */
	int rounds = under_valgrind() ? ROUNDS / 10 : ROUNDS;
	for (int r = 0; r < rounds; r++) {
		for (int t = 0; t < THREADS; t++) {
			struct spinner *s = &spinners[t];
			int before = atomic_load(&s->good) + atomic_load(&s->bad);
			pthread_kill(s->tid, SIGPROF);
			for (int w = 0; w < 1000 && atomic_load(&s->good) + atomic_load(&s->bad) == before; w++)
				nanosleep(&ms, NULL);
		}
	}
	atomic_store(&stop_spinning, 1);
	for (int t = 0; t < THREADS; t++) {
		pthread_join(spinners[t].tid, NULL);
		int good = atomic_load(&spinners[t].good), bad = atomic_load(&spinners[t].bad);
		CHECK(bad == 0 && good >= rounds / 2,
		      "samples: thread %d: %d samples end spin3 < spin2 < spin1, %d do not", t,
		      good, bad);
	}
	signal(SIGPROF, SIG_IGN);
}

/* ---- 3. A crash ------------------------------------------------------------ */

static volatile uintptr_t crash_ra[3];
static void *crash_buf[32];
static int crash_n;
static char crash_name[64];
static sigjmp_buf crash_env;
static int *volatile null_ptr;

NOINLINE int crash3(int x)
{
	crash_ra[2] = RA();
	*null_ptr = x;
	BARRIER();
	return x;
}
NOINLINE int crash2(int x) { crash_ra[1] = RA(); int r = crash3(x + 1); BARRIER(); return r + 1; }
NOINLINE int crash1(int x) { crash_ra[0] = RA(); int r = crash2(x + 1); BARRIER(); return r + 1; }

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	crash_n = sframe_backtrace_ucontext(uc, crash_buf, 32);
	static char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct sframe_symbol sym;
	if (crash_n > 1 &&
	    sframe_symbolize(pcs(crash_buf, 1) - 1, &sym, scratch, sizeof scratch) == 1) {
		size_t k = strlen(sym.name);
		memcpy(crash_name, sym.name, k < sizeof crash_name ? k + 1 : 1);
	}
	siglongjmp(crash_env, 1);
}

static void test_crash(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	if (!sigsetjmp(crash_env, 1))
		crash1(5);
	signal(SIGSEGV, SIG_DFL);
	CHECK(crash_n >= 4 && pcs(crash_buf, 0) - (uintptr_t)crash3 < 256,
	      "crash: %d frames, frame 0 is the faulting store in crash3", crash_n);
	CHECK(crash_n >= 4 && pcs(crash_buf, 1) == crash_ra[2] && pcs(crash_buf, 2) == crash_ra[1] &&
		      pcs(crash_buf, 3) == crash_ra[0],
	      "crash: frames 1-3 return into crash2, crash1 and the caller");
	CHECK(!strcmp(crash_name, "crash2"), "crash: frame 1 symbolized as crash2 (\"%s\")",
	      crash_name);
}

/* ---- 4. A dlopen()ed object ------------------------------------------------ */

#ifdef PORT_DLOPEN
typedef int (*port_cb)(int);
typedef int (*port_entry_fn)(port_cb, int, volatile uintptr_t *);

static volatile uintptr_t dl_ra[3]; /* [0] into us, [1] into port_dl_entry, [2] into dl2 */
static struct sframe_bt_frame dl_frames[32];
static struct sframe_bt_status dl_status;
static int dl_n;

NOINLINE int dl_callback(int x)
{
	dl_ra[2] = RA();
	dl_n = sframe_backtrace_ex(NULL, dl_frames, 32, 0, &dl_status);
	BARRIER();
	return x + dl_n;
}

static bool dl_chain_ok(void)
{
	return dl_n >= 4 && dl_frames[1].pc == dl_ra[2] && dl_frames[2].pc == dl_ra[1] &&
	       dl_frames[3].pc == dl_ra[0];
}

#ifdef __x86_64__
/* A context whose PC lies in code that is gone: the walk must stop at once
 * with no-object, never read the unloaded object. */
static int walk_at(uintptr_t pc, struct sframe_bt_status *st)
{
	static uintptr_t stack[64];
	ucontext_t uc;
	memset(&uc, 0, sizeof uc);
	UC_PC(&uc) = (greg_t)pc;
	UC_SP(&uc) = (greg_t)(uintptr_t)&stack[32];
	struct sframe_bt_frame f[8];
	return sframe_backtrace_ex(&uc, f, 8, 0, st);
}
#endif

static void test_dlopen(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/port_dl.so", dir);
	void *h = dlopen(path, RTLD_NOW);
	CHECK(h != NULL, "dlopen %s", path);
	if (!h)
		return;
	port_entry_fn entry = (port_entry_fn)(uintptr_t)dlsym(h, "port_dl_entry");
	uintptr_t dl2 = (uintptr_t)dlsym(h, "port_dl2");
	/* _dl_find_object (glibc >= 2.35) finds a new object at once; the
	 * object table (glibc < 2.35, musl) only after a normal-context call. */
	bool at_once = dlsym(RTLD_DEFAULT, "_dl_find_object") != NULL;
	entry(dl_callback, 1, dl_ra);
	if (at_once)
		CHECK(dl_chain_ok(), "dlopen: before warm-up, %d frames through the new object "
				     "(_dl_find_object)", dl_n);
	else
		CHECK(dl_n == 1 && dl_status.stop == SFRAME_BT_STOP_NO_OBJECT &&
			      dl_status.stop_pc == dl_ra[2],
		      "dlopen: before warm-up, the walk stops in the new object with no-object "
		      "(%d frames, %s)", dl_n, sframe_bt_stop_name(dl_status.stop));
	int with_rows = sframe_backtrace_warmup();
	CHECK(with_rows >= 2, "warm-up: %d objects with SFrame rows", with_rows);
	entry(dl_callback, 1, dl_ra);
	CHECK(dl_chain_ok(), "dlopen: after warm-up, %d frames: callback < port_dl2 < "
			     "port_dl_entry < caller (%s)", dl_n, sframe_bt_stop_name(dl_status.stop));
	static char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct sframe_symbol sym;
	int named = sframe_symbolize(dl_ra[2] - 1, &sym, scratch, sizeof scratch);
	size_t ol = strlen(sym.object);
	CHECK(named == 1 && !strcmp(sym.name, "port_dl2") && ol >= 10 &&
		      !strcmp(sym.object + ol - 10, "port_dl.so"),
	      "symbolize: a return address in the object is port_dl2 in port_dl.so (%s in %s)",
	      sym.name, sym.object);
#ifdef __x86_64__
	struct sframe_bt_status st;
	int n = walk_at(dl2 + 4, &st);
	CHECK(n >= 1 && st.stop != SFRAME_BT_STOP_NO_OBJECT,
	      "a context in the loaded object walks (%d frames, %s)", n,
	      sframe_bt_stop_name(st.stop));
#ifdef __GLIBC__
	dlclose(h);
	n = walk_at(dl2 + 4, &st);
	CHECK(n == 1 && st.stop == SFRAME_BT_STOP_NO_OBJECT,
	      "after dlclose, without a refresh, a context in the unloaded object stops at "
	      "once with no-object (%d frames, %s)", n, sframe_bt_stop_name(st.stop));
#endif
#endif
	(void)dl2;
}
#endif

int main(int argc, char **argv)
{
	(void)argc;
	test_chain();
	test_samples();
	/* memcheck rightly reports the NULL store (t_crash_handler.sh covers
	 * crash walks under valgrind). */
	if (under_valgrind())
		printf("# crash: left out under valgrind\n");
	else
		test_crash();
#ifdef PORT_DLOPEN
	char dir[4096];
	const char *slash = strrchr(argv[0], '/');
	size_t k = slash ? (size_t)(slash - argv[0]) : 1;
	memcpy(dir, slash ? argv[0] : ".", k);
	dir[k] = '\0';
	test_dlopen(dir);
#else
	(void)argv;
#endif
	CHECK_DONE();
}
