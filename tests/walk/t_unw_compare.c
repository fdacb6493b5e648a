/* Whole stacks against libunwind: four threads doing libc-heavy work
 * (qsort calling back into the program, malloc/free, memset/memcpy/strlen
 * on large buffers, snprintf, write() to /dev/null, nanosleep,
 * clock_gettime in the vDSO, a contended mutex, a qsort in a handler of
 * a signal the thread raises itself) are sampled with SIGPROF,
 * from per-thread CPU-time timers (at most one expiry per scheduler tick)
 * and from tgkill() at wall-clock intervals (which also lands in threads
 * blocked in a system call); the main thread, sending them, samples
 * itself too.  The handler walks the interrupted context twice: with
 * sframe_backtrace_ex(uc) and with libunwind (unw_init_local2(uc,
 * UNW_INIT_SIGNAL_FRAME), a local walk from a signal handler, which
 * libunwind supports).  After the run, in normal context, every sample's
 * two stacks are compared whole: the same number of frames, the same PCs
 * (frame 0 the interrupted PC, then return addresses as both report them)
 * and the same CFAs (libunwind's SP of frame k+1 is frame k's CFA), and
 * both must say the stack ended there.  At least 99.9% must be equal;
 * every disagreement is printed with its reason and, for the first 200,
 * both stacks symbolized, sframebt's stop reason and each frame's source.
 *
 * The program's functions are built without frame pointers and with
 * SFrame (tests/unw_compare.mk.inc): sframebt unwinds them with SFrame
 * rows, libunwind with .eh_frame; libc, ld.so and the vDSO both unwind
 * with .eh_frame, each with its own decoder.  Both walks end where the
 * stack ends, as gdb's backtrace does: a thread's clone3 frame, or the
 * main thread's _start, whose CFI marks the return address undefined.
 *
 * The program then runs again with LD_BIND_NOT=1, where every call
 * through a PLT goes through ld.so's lazy-binding resolver and symbol
 * lookup, sampled and compared the same way. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>

#define UNW_CMP_NF 48 /* frames per walk */
#include "sig_install.h"
#include "unw_compare.h"
#include "walk_common.h"

#define NTHREADS 4
#define MAXSAMPLES 12000

struct sample {
	int thread;
	int from_timer; /* SI_TIMER: the thread's CPU timer; else tgkill() */
	int on_fiber;   /* taken while a fiber ran (below) */
	struct unw_stacks cmp;
};

static struct sample *samples;
static atomic_uint nsamples;
static atomic_int sampling;
static __thread int self_idx = -1;
static __thread volatile int self_on_fiber;

/* ---- Sampling ---------------------------------------------------------- */

static void on_prof(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	int saved = errno;
	if (!atomic_load_explicit(&sampling, memory_order_relaxed) || self_idx < 0)
		goto out;
	unsigned i = atomic_fetch_add_explicit(&nsamples, 1, memory_order_relaxed);
	if (i >= MAXSAMPLES)
		goto out;
	struct sample *s = &samples[i];
	s->thread = self_idx;
	s->from_timer = si && si->si_code == SI_TIMER;
	s->on_fiber = self_on_fiber;

	struct sframe_bt_frame f[UNW_CMP_NF];
	unw_cmp_walk_sfb(&s->cmp, ucv, f);
	unw_cmp_keep_sfb(&s->cmp, f);
	unw_cmp_walk_unw(&s->cmp, ucv);
out:
	errno = saved;
}

/* ---- The work: libc-heavy, with a callback into the program ------------ */

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared_count;
static volatile size_t vsize = 1 << 16; /* not a constant: no inlined memcpy */

NOINL int uc_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	SPIN(8);
	return (x > y) - (x < y);
}

NOINL int uc_qsort(uint64_t *rnd)
{
	int n = 1500 + (int)(rnd_next(rnd) % 1000);
	int *a = malloc(sizeof *a * (size_t)n);
	if (!a)
		return 0;
	for (int i = 0; i < n; i++)
		a[i] = (int)(rnd_next(rnd) >> 33);
	qsort(a, (size_t)n, sizeof *a, uc_cmp_int);
	int r = a[n / 2];
	free(a);
	return r;
}

NOINL int uc_mem(uint64_t *rnd)
{
	size_t n = vsize + (size_t)(rnd_next(rnd) % 4096);
	char *p = malloc(n), *q = malloc(n);
	if (!p || !q) {
		free(p);
		free(q);
		return 0;
	}
	memset(p, 'a' + (int)(rnd_next(rnd) % 26), n - 1);
	p[n - 1] = 0;
	memcpy(q, p, n);
	size_t len = strlen(q);
	/* many small blocks too */
	void *small[64];
	for (int i = 0; i < 64; i++)
		small[i] = malloc(16 + (size_t)(rnd_next(rnd) % 512));
	for (int i = 63; i >= 0; i--)
		free(small[i]);
	free(q);
	free(p);
	return (int)len;
}

NOINL int uc_io(int fd, uint64_t *rnd)
{
	char buf[256];
	int r = 0;
	for (int i = 0; i < 50; i++) {
		int len = snprintf(buf, sizeof buf, "%d %s %.3f %lx\n", i, "sample",
				   (double)(rnd_next(rnd) % 1000) / 7.0, (unsigned long)rnd_next(rnd));
		if (len > 0 && write(fd, buf, (size_t)len) == len)
			r++;
	}
	return r;
}

NOINL int uc_time(void)
{
	struct timespec ts = { 0, 20000 }, now;
	int r = 0;
	for (int i = 0; i < 200; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		r += (int)(now.tv_nsec & 1);
	}
	nanosleep(&ts, NULL);
	return r;
}

NOINL int uc_lock(void)
{
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&shared_lock);
		shared_count++;
		pthread_mutex_unlock(&shared_lock);
	}
	return (int)(shared_count & 1);
}

/* Work inside a signal handler (SIGUSR2, raised by the thread itself):
 * samples taken there cross the kernel's signal frame (__restore_rt). */
static volatile unsigned long in_handler_sink;

NOINL int uc_in_handler_work(void)
{
	int a[1500];
	uint64_t rnd = 12345;
	for (int i = 0; i < 1500; i++)
		a[i] = (int)(rnd_next(&rnd) >> 40);
	qsort(a, 1500, sizeof a[0], uc_cmp_int);
	char b[2048];
	memset(b, a[7] & 0x7f, sizeof b);
	return a[750] + b[100];
}

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	int saved = errno;
	in_handler_sink += (unsigned long)uc_in_handler_work();
	errno = saved;
}

NOINL int uc_signal(void)
{
	raise(SIGUSR2);
	return (int)(in_handler_sink & 1);
}

struct thr {
	int idx;
	pthread_t th;
	_Atomic pid_t tid;
	volatile int stop;
	long loops;
	void *fiber_stacks[2]; /* unmapped once the thread has ended */
};

/* One piece of the work; each thread its own mix. */
NOINL unsigned long uc_work(struct thr *t, int fd, uint64_t *rnd)
{
	switch ((t->loops + t->idx) % 6) {
	case 0: return (unsigned)uc_qsort(rnd);
	case 1: return (unsigned)uc_mem(rnd);
	case 2: return (unsigned)uc_io(fd, rnd);
	case 3: return (unsigned)uc_time();
	case 4: return (unsigned)uc_signal();
	default: return (unsigned)uc_lock();
	}
}

/* Fibers: threads from FIBER_THREADS on do their work in two fibers in
 * turn, makecontext() contexts on stacks of their own (mmap()ed, a
 * PROT_NONE guard page below), each a piece of work a turn.  Their
 * samples' stacks end in glibc's __start_context, the return address
 * makecontext() gives the fiber's function: a function's entry, which no
 * call precedes, and which libunwind reports as the last frame. */
#define FIBER_THREADS 2
#define FIBER_STACK (256u << 10)

struct fiber {
	ucontext_t ctx, *back;
	struct thr *t;
	int fd;
	uint64_t rnd;
	unsigned long r;
};

NOINL void uc_fiber(unsigned lo, unsigned hi)
{
	struct fiber *f = (struct fiber *)((uintptr_t)hi << 32 | lo);
	for (;;) {
		self_on_fiber = 1;
		f->r += uc_work(f->t, f->fd, &f->rnd);
		self_on_fiber = 0;
		swapcontext(&f->ctx, f->back);
	}
}

static bool fiber_start(struct fiber *f, struct thr *t, int fd, ucontext_t *back)
{
	char *m = mmap(NULL, FIBER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) != 0 || getcontext(&f->ctx) != 0)
		return false;
	f->ctx.uc_stack.ss_sp = m;
	f->ctx.uc_stack.ss_size = FIBER_STACK;
	f->ctx.uc_link = NULL; /* never returns */
	f->back = back;
	f->t = t;
	f->fd = fd;
	f->rnd = 0x9E3779B97F4A7C15ull * (uint64_t)(t->idx + 7) + (uintptr_t)f;
	f->r = 0;
	uintptr_t a = (uintptr_t)f;
	makecontext(&f->ctx, (void (*)(void))uc_fiber, 2, (unsigned)a, (unsigned)(a >> 32));
	return true;
}

NOINL void *uc_thread(void *arg)
{
	struct thr *t = arg;
	self_idx = t->idx;
	atomic_store(&t->tid, (pid_t)syscall(SYS_gettid));
	uint64_t rnd = 0x9E3779B97F4A7C15ull * (uint64_t)(t->idx + 1);
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ucontext_t here;
	struct fiber fib[2];
	bool fibers = t->idx >= FIBER_THREADS && fiber_start(&fib[0], t, fd, &here) &&
		      fiber_start(&fib[1], t, fd, &here);
	timer_t timer = start_thread_cpu_timer(1000000);
	unsigned long r = 0;
	while (!t->stop) {
		if (fibers)
			swapcontext(&here, &fib[t->loops & 1].ctx);
		else
			r += uc_work(t, fd, &rnd);
		t->loops++;
	}
	stop_thread_cpu_timer(timer);
	close(fd);
	if (fibers) {
		r += fib[0].r + fib[1].r;
		t->fiber_stacks[0] = fib[0].ctx.uc_stack.ss_sp;
		t->fiber_stacks[1] = fib[1].ctx.uc_stack.ss_sp;
	}
	return (void *)(long)r;
}

/* ---- Report ------------------------------------------------------------ */

static const char *obj_name(uintptr_t pc, uintptr_t *off)
{
	Dl_info d;
	if (pc && dladdr((void *)pc, &d) && d.dli_fname) {
		*off = pc - (uintptr_t)d.dli_fbase;
		const char *slash = strrchr(d.dli_fname, '/');
		return slash ? slash + 1 : d.dli_fname;
	}
	*off = pc;
	return "?";
}

/* One frame: lookup at pc - 1 for return addresses (frame > 0). */
static void print_frame(const char *who, int k, uintptr_t pc, uintptr_t cfa, int src)
{
	Dl_info d;
	uintptr_t look = k ? pc - 1 : pc, off;
	const char *obj = obj_name(look, &off);
	const char *fn = "?";
	uintptr_t fnoff = 0;
	if (look && dladdr((void *)look, &d) && d.dli_sname) {
		fn = d.dli_sname;
		fnoff = pc - (uintptr_t)d.dli_saddr;
	}
	printf("#     %s %2d %#14lx cfa %#14lx %s+%#lx (%s+%#lx)", who, k, (unsigned long)pc,
	       (unsigned long)cfa, fn, (unsigned long)fnoff, obj, (unsigned long)(off + (k ? 1 : 0)));
	if (src >= 0)
		printf(" src=%d", src);
	printf("\n");
}

/* Both stacks, sframebt's then libunwind's, a frame a line. */
static void print_stacks(const struct unw_stacks *w)
{
	for (int k = 0; k < w->n_sfb; k++)
		print_frame("sframebt ", k, w->sfb_pc[k], w->sfb_cfa[k], w->sfb_src[k]);
	for (int k = 0; k < w->n_unw; k++)
		print_frame("libunwind", k, w->unw_pc[k], unw_cmp_unw_cfa(w, k), -1);
}

/* ld.so's lazy-binding resolver takes its CFA from rbx (rbx + 32): below
 * frames whose rows came from the memo, which keeps no callee-saved
 * register, the walker must still know rbx.  A sample that stops with
 * unsafe-rule in ld.so where libunwind goes on (sframebt's frames a
 * prefix of libunwind's) is counted apart, and fails the test. */
static bool resolver_stop(const struct unw_stacks *w)
{
	return w->st.stop == SFRAME_BT_STOP_UNSAFE_RULE && in_obj(&w_ldso, w->st.stop_pc) &&
	       w->n_sfb < w->n_unw;
}

int main(int argc, char **argv)
{
	double t0 = now_s();
	double seconds = env_long("SFB_UNW_SECONDS", 3);
	/* Run again with LD_BIND_NOT=1 (below): every call through a PLT
	 * then goes through ld.so's lazy-binding resolver. */
	bool bind_not = argc > 1 && strcmp(argv[1], "--bind-not") == 0;
	const char *mode = bind_not ? "LD_BIND_NOT=1: " : "";
	if (bind_not)
		seconds = seconds > 2 ? 2 : seconds;
	objs_init();

	samples = mmap(NULL, sizeof *samples * MAXSAMPLES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (samples == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	unw_cmp_warmup();

	sig_install(SIGPROF, on_prof, SA_RESTART);
	sig_install(SIGUSR2, on_usr2, SA_RESTART);
	atomic_store(&sampling, 1);

	struct thr t[NTHREADS];
	memset(t, 0, sizeof t);
	for (int i = 0; i < NTHREADS; i++) {
		t[i].idx = i;
		if (pthread_create(&t[i].th, NULL, uc_thread, &t[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	/* Besides the CPU timers (at most one expiry per scheduler tick),
	 * signals sent at wall-clock intervals: these also land in threads
	 * blocked in a system call (nanosleep, futex, write). */
	pid_t pid = getpid();
	unsigned sent = 0;
	self_idx = NTHREADS; /* the main thread: samples itself, down to _start */
	while (now_s() - t0 < seconds && atomic_load(&nsamples) < MAXSAMPLES) {
		for (int i = 0; i < NTHREADS; i++) {
			pid_t tid = atomic_load(&t[i].tid);
			if (tid > 0 && syscall(SYS_tgkill, pid, tid, SIGPROF) == 0)
				sent++;
		}
		if (syscall(SYS_tgkill, pid, pid, SIGPROF) == 0)
			sent++;
		struct timespec ts = { 0, 300000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < NTHREADS; i++)
		t[i].stop = 1;
	long loops = 0;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i].th, NULL);
		loops += t[i].loops;
		for (int k = 0; k < 2; k++)
			if (t[i].fiber_stacks[k])
				munmap(t[i].fiber_stacks[k], FIBER_STACK);
	}
	atomic_store(&sampling, 0);

	unsigned ns = atomic_load(&nsamples);
	if (ns > MAXSAMPLES)
		ns = MAXSAMPLES;
	unsigned equal = 0, differ = 0, sys0 = 0, sys_frames = 0, by_src[6] = { 0 };
	unsigned stops[16] = { 0 }, timer = 0, printed = 0, main_equal = 0, crossed = 0;
	unsigned known = 0; /* resolver_stop() */
	unsigned fiber = 0, fiber_equal = 0; /* taken on a fiber; equal, ending in libc */
	/* frame 0 by object: libc, ld.so, vDSO, the program, other */
	unsigned where0[5] = { 0 };
	struct wobj vdso = { 0, 0 }, exe = { 0, 0 };
	obj_of((const void *)getauxval(AT_SYSINFO_EHDR), &vdso);
	obj_of((const void *)main, &exe);
	unsigned long frames = 0;
	int maxdepth = 0;
	for (unsigned i = 0; i < ns; i++) {
		const struct sample *s = &samples[i];
		const struct unw_stacks *w = &s->cmp;
		int at;
		enum unw_cmp_diff d = unw_cmp(w, &at);
		const char *why = unw_cmp_reason(d);
		stops[w->st.stop & 15]++;
		timer += s->from_timer != 0;
		if (w->n_sfb > 0 && in_sys(w->sfb_pc[0]))
			sys0++;
		if (w->n_sfb > 0) {
			uintptr_t pc = w->sfb_pc[0];
			where0[in_libc(pc) ? 0 : in_obj(&w_ldso, pc) ? 1 : in_obj(&vdso, pc) ? 2
			       : in_obj(&exe, pc) ? 3 : 4]++;
		}
		for (int k = 1; k < w->n_sfb; k++) {
			by_src[w->sfb_src[k] < 6 ? w->sfb_src[k] : 0]++;
			sys_frames += in_sys(w->sfb_pc[k] - 1);
		}
		frames += (unsigned long)w->n_sfb;
		if (w->n_sfb > maxdepth)
			maxdepth = w->n_sfb;
		fiber += s->on_fiber != 0;
		if (d == UNW_CMP_EQUAL) {
			equal++;
			fiber_equal += s->on_fiber && w->n_sfb > 1 &&
				       in_libc(w->sfb_pc[w->n_sfb - 1]);
			crossed += w->st.frames_signal > 0;
			main_equal += s->thread == NTHREADS && w->n_sfb > 1 &&
				      in_start(w->sfb_pc[w->n_sfb - 1] - 1);
			continue;
		}
		if (d == UNW_CMP_SFB_EARLIER && resolver_stop(w)) {
			if (++known > 1)
				continue;
			printf("# sample %u, the first stopped at the resolver: sframebt %d frames, "
			       "stop %s at %#lx; libunwind %d frames\n", i, w->n_sfb,
			       sframe_bt_stop_name(w->st.stop), (unsigned long)w->st.stop_pc, w->n_unw);
			print_stacks(w);
			continue;
		}
		differ++;
		/* every disagreement, with both stacks for the first 200 */
		printf("# sample %u (thread %d, %s) differs: %s at frame %d; sframebt %d frames, "
		       "stop %s at %#lx; libunwind %d frames, last unw_step %d\n",
		       i, s->thread, s->from_timer ? "CPU timer" : "tgkill", why, at, w->n_sfb,
		       sframe_bt_stop_name(w->st.stop), (unsigned long)w->st.stop_pc, w->n_unw,
		       w->unw_end);
		if (++printed > 200)
			continue;
		print_stacks(w);
	}
	printf("# %s%u samples from %d threads and main (%u from CPU timers, %u of %u tgkill()s; "
	       "%ld work loops, %.1f s): %u equal, %u differing, %u stopped at the resolver; %lu "
	       "frames (deepest %d), frame 0 in libc/ld.so in %u samples; frames after frame 0 in "
	       "libc/ld.so: %u; main's samples equal and ending in _start: %u\n",
	       mode, ns, NTHREADS, timer, ns - timer, sent, loops, now_s() - t0, equal, differ,
	       known, frames, maxdepth, sys0, sys_frames, main_equal);
	printf("# samples on fibers: %u, %u equal and ending in libc\n", fiber, fiber_equal);
	printf("# frame 0 in: libc %u, ld.so %u, vDSO %u, the program %u, elsewhere %u\n",
	       where0[0], where0[1], where0[2], where0[3], where0[4]);
	printf("# sframebt frame sources after frame 0:");
	for (int k = 1; k < 6; k++)
		if (by_src[k])
			printf(" %s %u", unw_cmp_src_name(k), by_src[k]);
	printf("; stops:");
	for (int k = 0; k < 16; k++)
		if (stops[k])
			printf(" %s %u", sframe_bt_stop_name(k), stops[k]);
	printf("\n");

	unsigned need = under_valgrind() ? 20 : 300;
	unsigned compared = ns - known;
	CHECK(ns >= need, "%s%u SIGPROF samples (at least %u)", mode, ns, need);
	CHECK(compared > 0 && (double)equal >= 0.999 * compared,
	      "%swhole stacks equal to libunwind's in %u of %u samples (%u differing; at least "
	      "99.9%% equal)", mode, equal, compared, differ);
	CHECK(known == 0,
	      "%sno sample stopped with unsafe-rule in ld.so where libunwind went on: %u did "
	      "(of %u with frame 0 in ld.so)", mode, known, where0[1]);
	CHECK(crossed > 0, "%ssamples taken in a signal handler, across the signal frame: %u "
	      "equal", mode, crossed);
	CHECK(main_equal > 0, "%sthe main thread's stacks too, to _start: %u equal", mode,
	      main_equal);
	CHECK(fiber_equal > 0 && fiber_equal >= fiber * 99 / 100,
	      "%sstacks of makecontext() fibers, to __start_context: %u of %u equal", mode,
	      fiber_equal, fiber);
	CHECK(sys0 > ns / 10 && by_src[SFRAME_BT_FROM_EH_FRAME] > 0 &&
		      by_src[SFRAME_BT_FROM_SFRAME] > 0,
	      "%sthe samples cover libc and ld.so (frame 0 there in %u) and both row sources (%u "
	      "SFrame, %u .eh_frame frames)", mode, sys0, by_src[SFRAME_BT_FROM_SFRAME],
	      by_src[SFRAME_BT_FROM_EH_FRAME]);
	if (!bind_not && !under_valgrind()) {
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			setenv("LD_BIND_NOT", "1", 1);
			execl("/proc/self/exe", argv[0], "--bind-not", (char *)NULL);
			_exit(127);
		}
		int status = 0;
		CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
			      WEXITSTATUS(status) == 0,
		      "the run with LD_BIND_NOT=1 passed (status %#x)", status);
	}
	CHECK_DONE();
}
