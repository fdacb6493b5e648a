/* Walks on fibers' stacks: makecontext() contexts whose stacks are
 * mmap()ed apart from the thread's, with a PROT_NONE guard page below.
 *
 * Ground truth: the return addresses the chain records as it descends
 * (__builtin_return_address), and libunwind's unw_backtrace() from the
 * same leaf, which ends at glibc's __start_context, the return address
 * makecontext() gives the fiber's function.
 *
 * What is checked:
 * - a walk on a fiber gives the chain's frames, then the fiber's entry
 *   and __start_context, and stops outermost, as libunwind does, through
 *   sframe_backtrace(), sframe_backtrace_ex() and from a signal handler
 *   on a sigaltstack (sframe_backtrace_ucontext()); on a fiber entered
 *   as boost.context enters one, the exit trampoline is the last frame;
 * - the pages of the fiber's stack a walk reads are checked with one
 *   probe (rt_sigprocmask, counted by interposing syscall()) each, once a
 *   walk; none at all once sframe_backtrace_set_stack() named the stack,
 *   and again after it was named the thread's own again (size 0);
 * - at the probe budget's bound (64 a walk): a chain whose frames span
 *   more pages stops "unreadable" after exactly 64 probes, and walks
 *   whole once its stack is named;
 * - a thread whose first walks all run on a fiber still proves its own
 *   stack readable at its first walk there (no probe for it after). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "backtrace.h"
#include "check.h"

#if defined(__clang__)
#define NOINL __attribute__((noinline, used))
#else
#define NOINL __attribute__((noinline, noclone, used))
#endif
#define PAGE 4096u
#define FIBER_STACK (1u << 20)
#define MAXF 2048

/* ---- Probes: rt_sigprocmask with an invalid 'how' (memread.c) ---------- */

static long (*real_syscall)(long, ...);
static volatile unsigned probes;

long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_rt_sigprocmask && a[0] == ~0L)
		probes++;
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ---- The chain -------------------------------------------------------- */

/* What the leaf does: the walks, their frames and probe counts. */
enum leaf_what { LEAF_WALK, LEAF_SIGNAL };

struct walk {
	int n, n_ex, n_unw;
	struct sframe_bt_status st;
	unsigned probes;
	void *pcs[MAXF];
	void *unw[MAXF];
};

static struct {
	int depth;
	enum leaf_what what;
	void *ra[MAXF]; /* ra[k]: where level k returns to, in its caller */
	uintptr_t leaf_sp; /* an address in the leaf's frame */
	struct walk w;
} run;

static struct sframe_bt_frame frames_ex[MAXF];

NOINL void leaf(void)
{
	struct walk *w = &run.w;
	volatile int here = 0;
	run.leaf_sp = (uintptr_t)&here;
	if (run.what == LEAF_SIGNAL) {
		raise(SIGUSR1);
		return;
	}
	unsigned p0 = probes;
	w->n = sframe_backtrace(w->pcs, MAXF);
	w->probes = probes - p0;
	w->n_ex = sframe_backtrace_ex(NULL, frames_ex, MAXF, 0, &w->st);
	w->n_unw = unw_backtrace(w->unw, MAXF);
}

/* A frame of about 160 bytes: a chain of depth d spans d * 176 bytes. */
NOINL int level(int k)
{
	volatile char pad[160];
	pad[k % 160] = (char)k;
	run.ra[k] = __builtin_return_address(0);
	if (k + 1 < run.depth)
		level(k + 1);
	else
		leaf();
	return pad[k % 160];
}

/* ---- Signals on a sigaltstack ------------------------------------------ */

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	struct walk *w = &run.w;
	unsigned p0 = probes;
	w->n = sframe_backtrace_ucontext(uc, w->pcs, MAXF);
	w->probes = probes - p0;
	w->n_ex = sframe_backtrace_ex(uc, frames_ex, MAXF, 0, &w->st);
	unw_cursor_t c;
	w->n_unw = 0;
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0)
		do {
			unw_word_t ip = 0;
			unw_get_reg(&c, UNW_REG_IP, &ip);
			w->unw[w->n_unw++] = (void *)ip;
		} while (w->n_unw < MAXF && unw_step(&c) > 0);
}

/* ---- Fibers ------------------------------------------------------------ */

static ucontext_t back, fiber_ctx, boost_left;
static char *fiber_stack; /* a guard page, then FIBER_STACK bytes */

NOINL void fiber_main(void)
{
	level(0);
}

/* boost.context's way into a fiber (its x86-64 make_fcontext(), as PHP
 * carries it), without CFI as there: boost_start aligns the stack and
 * goes to the trampoline, which pushes %rbp, the exit, as the return
 * address of the fiber's function (in %rbx) and jumps to it.  The
 * function never returns here: boost_body goes back to main. */
void boost_start(void);
extern const char boost_exit[];
__asm__(".text\n"
	".globl boost_start\n"
	".type boost_start, @function\n"
	"boost_start:\n"
	"	lea boost_exit(%rip), %rbp\n"
	"	lea boost_body(%rip), %rbx\n"
	"	and $-16, %rsp\n"
	"	jmp boost_trampoline\n"
	"boost_trampoline:\n"
	"	push %rbp\n"
	"	jmp *%rbx\n"
	".globl boost_exit\n"
	"boost_exit:\n"
	"	xor %rdi, %rdi\n"
	"	call _exit@PLT\n"
	"	hlt\n"
	".size boost_start, . - boost_start\n");

NOINL void boost_body(void)
{
	level(0);
	swapcontext(&boost_left, &back);
	_exit(1); /* never resumed */
}

/* Run the chain of depth on a fresh fiber, the leaf doing what; entered
 * as makecontext() enters it, or as boost.context does. */
static void on_fiber_as(int depth, enum leaf_what what, void (*entry)(void))
{
	memset(&run.w, 0, sizeof run.w);
	run.depth = depth;
	run.what = what;
	if (getcontext(&fiber_ctx))
		abort();
	fiber_ctx.uc_stack.ss_sp = fiber_stack + PAGE;
	fiber_ctx.uc_stack.ss_size = FIBER_STACK;
	fiber_ctx.uc_link = &back;
	makecontext(&fiber_ctx, entry, 0);
	if (swapcontext(&back, &fiber_ctx))
		abort();
}

static void on_fiber(int depth, enum leaf_what what)
{
	on_fiber_as(depth, what, fiber_main);
}

static void on_stack(int depth)
{
	memset(&run.w, 0, sizeof run.w);
	run.depth = depth;
	run.what = LEAF_WALK;
	level(0);
}

/* Does the walk give libunwind's frames, ending where libunwind's walk
 * ends, outermost, with the chain's recorded return addresses among them
 * in order?  from: the first frame compared with libunwind's (frame 0
 * differs where each walker is called from its own call site). */
static bool walk_is_whole(const struct walk *w, int from, const char *what)
{
	int d = run.depth;
	if (w->n != w->n_unw || w->n_ex != w->n || w->st.stop != SFRAME_BT_STOP_OUTERMOST) {
		printf("# %s: sframebt %d frames (ex %d, stop %s), libunwind %d\n", what, w->n,
		       w->n_ex, sframe_bt_stop_name(w->st.stop), w->n_unw);
		return false;
	}
	for (int k = from; k < w->n; k++)
		if (w->pcs[k] != w->unw[k] || (void *)frames_ex[k].pc != w->pcs[k]) {
			printf("# %s: frame %d: sframebt %p, libunwind %p\n", what, k, w->pcs[k],
			       w->unw[k]);
			return false;
		}
	/* the chain's recorded return addresses, deepest first */
	int base = 1;
	while (base < w->n && w->pcs[base] != run.ra[d - 1])
		base++;
	if (base + d > w->n) {
		printf("# %s: the chain's return addresses are not in the walk\n", what);
		return false;
	}
	for (int k = 0; k < d; k++)
		if (w->pcs[base + k] != run.ra[d - 1 - k]) {
			printf("# %s: frame %d is %p, the chain recorded %p\n", what, base + k,
			       w->pcs[base + k], run.ra[d - 1 - k]);
			return false;
		}
	return true;
}

/* The pages from the leaf's to the fiber stack's top: a walk from below
 * the leaf reads no more, its own frame's page among them or below. */
static unsigned pages_from_leaf(void)
{
	uintptr_t top = (uintptr_t)fiber_stack + PAGE + FIBER_STACK;
	return (unsigned)((top - (run.leaf_sp & ~(uintptr_t)(PAGE - 1))) / PAGE);
}

/* ---- A thread whose first walks run on fibers --------------------------- */

static unsigned thread_stack_probes;

static void *first_walks_on_fibers(void *arg)
{
	(void)arg;
	for (int i = 0; i < 6; i++)
		on_fiber(8, LEAF_WALK);
	on_stack(8);
	on_stack(8);
	thread_stack_probes = run.w.probes;
	return NULL;
}

int main(void)
{
	fiber_stack = mmap(NULL, PAGE + FIBER_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fiber_stack == MAP_FAILED || mprotect(fiber_stack, PAGE, PROT_NONE)) {
		perror("mmap");
		return 1;
	}
	sframe_backtrace_warmup();
	/* Each walk twice: the first describes the objects and memoises. */
	on_fiber(32, LEAF_WALK);
	on_fiber(32, LEAF_WALK);
	CHECK(walk_is_whole(&run.w, 1, "depth 32"),
	      "a walk on a fiber: the chain, its entry and __start_context, stop outermost, as "
	      "libunwind's (%d frames)", run.w.n);
	Dl_info d = { 0 };
	CHECK(run.w.n > 0 && dladdr(run.w.pcs[run.w.n - 1], &d) && d.dli_fname &&
		      strstr(d.dli_fname, "libc.so"),
	      "its last frame lies in libc: %s", run.w.n > 0 && d.dli_fname ? d.dli_fname : "?");

	/* boost.context's fibers end at its exit trampoline. */
	on_fiber_as(32, LEAF_WALK, boost_start);
	on_fiber_as(32, LEAF_WALK, boost_start);
	CHECK(walk_is_whole(&run.w, 1, "boost") &&
		      run.w.pcs[run.w.n - 1] == (void *)boost_exit,
	      "a fiber entered as boost.context enters one: the chain, its function and the exit "
	      "trampoline, stop outermost, as libunwind's (%d frames)", run.w.n);

	on_fiber(200, LEAF_WALK);
	on_fiber(200, LEAF_WALK);
	unsigned deep = run.w.probes;
	on_fiber(200, LEAF_WALK);
	CHECK(walk_is_whole(&run.w, 1, "depth 200") && deep > 0 && deep == run.w.probes,
	      "a depth-200 chain (%d frames): the same %u probes a walk, every walk", run.w.n,
	      deep);
	unsigned pages = pages_from_leaf();
	CHECK(deep <= pages,
	      "at most one probe a page: %u probes, %u pages from the leaf's to the stack's top",
	      deep, pages);

	sframe_backtrace_set_stack(fiber_stack + PAGE, FIBER_STACK);
	on_fiber(200, LEAF_WALK);
	CHECK(walk_is_whole(&run.w, 1, "named") && run.w.probes == 0,
	      "the fiber's stack named (sframe_backtrace_set_stack): the same walk, %u probes",
	      run.w.probes);
	sframe_backtrace_set_stack(NULL, 0);
	on_fiber(200, LEAF_WALK);
	CHECK(walk_is_whole(&run.w, 1, "unnamed") && run.w.probes == deep,
	      "named the thread's own again (size 0): %u probes again", run.w.probes);

	/* The probe budget: 64 a walk. */
	int deepest = 2000;
	on_fiber(deepest, LEAF_WALK);
	pages = pages_from_leaf();
	CHECK(pages > 65 && run.w.st.stop == SFRAME_BT_STOP_UNREADABLE && run.w.probes == 64 &&
		      run.w.n > 64 * (deepest / (int)pages) && run.w.n < deepest,
	      "a chain spanning %u pages: stops %s after %u probes (the budget, 64), %d frames",
	      pages, sframe_bt_stop_name(run.w.st.stop), run.w.probes, run.w.n);
	sframe_backtrace_set_stack(fiber_stack + PAGE, FIBER_STACK);
	on_fiber(deepest, LEAF_WALK);
	CHECK(walk_is_whole(&run.w, 1, "deepest, named") && run.w.probes == 0,
	      "the same stack named: walked whole (%d frames), %u probes", run.w.n, run.w.probes);
	sframe_backtrace_set_stack(NULL, 0);

	/* From a signal handler on a sigaltstack, into the fiber. */
	stack_t ss = { .ss_sp = mmap(NULL, 64 * 1024, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
		       .ss_size = 64 * 1024 };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL)) {
		perror("sigaltstack");
		return 1;
	}
	on_fiber(32, LEAF_SIGNAL);
	on_fiber(32, LEAF_SIGNAL);
	unsigned from_alt = run.w.probes;
	CHECK(walk_is_whole(&run.w, 0, "signal") && from_alt > 0,
	      "from a handler on a sigaltstack: the interrupted fiber's stack whole (%d frames), "
	      "%u probes", run.w.n, from_alt);
	sframe_backtrace_set_stack(fiber_stack + PAGE, FIBER_STACK);
	on_fiber(32, LEAF_SIGNAL);
	CHECK(walk_is_whole(&run.w, 0, "signal, named") && run.w.probes == 0,
	      "the same, the fiber's stack named: %u probes", run.w.probes);
	sframe_backtrace_set_stack(NULL, 0);

	/* A new thread's first walks on fibers, then on its own stack. */
	pthread_t th;
	CHECK(pthread_create(&th, NULL, first_walks_on_fibers, NULL) == 0 &&
		      pthread_join(th, NULL) == 0 && thread_stack_probes == 0,
	      "a thread whose first 6 walks ran on a fiber: its own stack proved at its first walk "
	      "there (%u probes at the next)", thread_stack_probes);
	CHECK_DONE();
}
