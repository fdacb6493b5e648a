/* profiler: a sampling CPU profiler in one file, on top of sframebt.
 *
 * Run an unmodified program under it:
 *
 *   build/sframe-prof [-F HZ] [-o FILE] [--wall] -- ./program   (sframe-prof.c)
 *   LD_PRELOAD=$PWD/build/libsframe-profiler.so SFRAME_PROF_SVG=1 ./program
 *
 * or link this file in and call sframe_prof_start()/sframe_prof_stop()
 * (see profiler.h; `build/profiler` is examples/demo/hotcold.c built that
 * way).  It writes
 *
 *   PREFIX.folded  one line per distinct stack, root first, with its sample
 *                  count: "main;parse;lex 42" -- the input of
 *                  flamegraph.pl, inferno and speedscope;
 *   PREFIX.svg     (SFRAME_PROF_SVG=1) a flame graph drawn by this file:
 *                  open it in a browser, hover a frame for its name and
 *                  sample count;
 *   PREFIX.pb.gz   (SFRAME_PROF_PPROF=1) the same stacks as a pprof
 *                  profile (prof/pprof.c), each sample labelled with its
 *                  thread, each address with its file:line and the
 *                  functions inlined there where the object's DWARF (or
 *                  its debug file's) says;
 *
 *   PREFIX.summary.txt  the summary, also printed on stderr (which the
 *                  program may have closed): samples taken and dropped,
 *                  why each walk stopped, and each thread with its
 *                  samples, named where it took none or blocks SIGPROF
 *                  (a thread that blocks it is never sampled: xz's
 *                  workers block every signal).
 *
 * How it works:
 *   1. Every thread gets a POSIX timer on its own CPU-time clock
 *      (timer_create(CLOCK_THREAD_CPUTIME_ID) with SIGEV_THREAD_ID), so
 *      a thread is sampled in proportion to the CPU it uses, and the
 *      SIGPROF lands on the thread that used it.  Threads running at
 *      start are found in /proc/self/task; threads created later are
 *      caught by wrapping pthread_create() (this file defines it and calls
 *      the real one: in the LD_PRELOAD build it interposes on libc's for
 *      the whole program, linked in it covers calls made by the program
 *      itself).  Threads created another way (raw clone(), libc-internal
 *      helper threads) are not sampled.
 *   2. The SIGPROF handler walks the interrupted stack with
 *      sframe_backtrace_ex() -- async-signal-safe: no lock, no malloc --
 *      and stores the PCs in the thread's ring buffer: preallocated, one
 *      writer (the thread's own handler) and one reader (the drain
 *      thread), with atomic head/tail indices.  A full ring drops the
 *      sample and counts it.
 *   3. A drain thread empties the rings every few milliseconds and counts
 *      identical stacks in a hash table (normal context: malloc is fine).
 *   4. At stop, each distinct PC is symbolized once with
 *      sframe_symbolize(), which demangles it (keeping the symbol for
 *      pprof's system_name); stacks are folded and written.  For pprof,
 *      the PCs' source positions and inlined functions are read from the
 *      line tables too, in a child process given a CPU-time budget
 *      (prof/srclines.h: read_lines()).  The folded stacks and the SVG
 *      name the functions the symbol table has, not the ones inlined
 *      into them.
 *
 * With SFRAME_PROF_WALL=1 (sframe-prof --wall) the timers run on
 * CLOCK_MONOTONIC instead: every thread is sampled at the same rate
 * whether it runs or waits, and a waiting thread's stack ends in the
 * system call it waits in.  A thread kept off the CPU by others takes
 * fewer signals than its timer expires (the kernel counts the rest as the
 * timer's overrun): each sample counts for the expirations it stands for.
 *
 * What the stacks look like: walks go through libc (unwound with its
 * .eh_frame, glibc carrying no .sframe) to the outermost frame (stop
 * reason "outermost"), so stacks are rooted at _start on the main thread
 * and at libc's clone3 on the others, and a sample taken inside libc
 * keeps its callers.  libc's frames show as [libc.so.6+0x1098eb] and the
 * like where its symbol table is stripped, as on Debian.  The program's
 * frames are walked with its .sframe (-Wa,--gsframe, binutils 2.40+).
 *
 * The rate: a CPU-time timer is checked at the kernel's tick, so a thread
 * gets at most CONFIG_HZ samples per CPU-second (often 100 or 250) however
 * high SFRAME_PROF_HZ is; the summary says so when it happens.
 *
 * Side effects on the profiled program: SIGPROF is taken over (a handler
 * stays installed after stop, because a late signal with the default
 * action would kill the process), and system calls may fail with EINTR
 * where the program does not expect it, as with any signal-based
 * profiler (the handler is installed with SA_RESTART, which covers most;
 * --wall interrupts sleeping threads too, and nanosleep() is never
 * restarted).  After fork() the child is profiled into files of its own
 * if SFRAME_PROF_FORK=1, else not (the parent's summary counts it); a
 * program exec'd with LD_PRELOAD inherited is profiled from its start. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "backtrace.h"
#include "prof/pprof.h"
#include "prof/srclines.h"
#include "profiler.h"

#ifndef sigev_notify_thread_id /* glibc < 2.35 */
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define MAX_THREADS 1024  /* profiled at once */
#define MAX_DEPTH 128     /* frames per sample; deeper stacks are cut */
#define RING_SAMPLES 256  /* per thread: ~250 ms at 999 Hz before drops */
#define DRAIN_MS 20       /* how often the drain thread empties the rings */

/* ---- Sampling: the part that runs in the signal handler --------------- */

struct sample {
	uint32_t depth;
	uint32_t stop;              /* enum sframe_bt_stop */
	uint32_t weight;            /* the timer's periods it stands for */
	uintptr_t pc[MAX_DEPTH];    /* leaf first; already "pc - 1" for
				       return addresses, see take_sample() */
};

enum { FREE, CLAIMED, ACTIVE, EXITING, EXITED }; /* slot states */

/* One profiled thread.  Only the thread's own SIGPROF handler writes head
 * and the samples; only the drain thread writes tail.  state is changed
 * with compare-and-swap by whoever registers or retires the thread. */
struct slot {
	_Atomic int state;
	pid_t tid;
	timer_t timer;
	struct sample *ring;        /* RING_SAMPLES, allocated once, kept */
	_Atomic uint64_t head, tail;
	/* Written by the drain thread only: samples drained for tid. */
	unsigned long taken;
	/* Written by the thread itself as it exits, before its slot is
	 * EXITED: its name, CPU time, and whether it blocked SIGPROF (-1:
	 * unknown). */
	char name[16];
	double cpu;
	int blocked;
};

static struct slot slots[MAX_THREADS];
static atomic_bool running;
static atomic_int inflight;     /* handlers executing right now */
static atomic_ulong dropped;    /* samples lost to a full ring */
static atomic_ulong unprofiled; /* threads that found no free slot */
static _Atomic uint64_t handler_ns; /* time spent taking samples */

static void take_sample(struct slot *s, const void *uc, uint32_t weight)
{
	uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
	if (head - tail >= RING_SAMPLES) {
		atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
		return;
	}
	struct sample *out = &s->ring[head % RING_SAMPLES];
	struct sframe_bt_frame f[MAX_DEPTH];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(uc, f, MAX_DEPTH, 0, &st);
	/* Frame 0 is the exact interrupted PC; the others are return
	 * addresses, which point after the call and may already be in the
	 * next function: the call itself is at pc - 1.  Store the address
	 * to symbolize, so that no later step needs to know. */
	for (int i = 0; i < n; i++)
		out->pc[i] = f[i].exact ? f[i].pc : f[i].pc - 1;
	out->depth = (uint32_t)n;
	out->stop = (uint32_t)st.stop;
	out->weight = weight;
	atomic_store_explicit(&s->head, head + 1, memory_order_release);
}

/* --wall: every thread's timer runs on CLOCK_MONOTONIC, so a thread is
 * sampled as often sleeping or blocked as running. */
static bool wall_clock;

/* The periods a sample stands for.  A wall-clock timer expires whether
 * or not its thread runs; a thread waiting for a CPU takes one signal
 * for several expirations, and the kernel counts the others as the
 * timer's overrun: each is a period of the thread's wall time too, so the
 * sample counts for them (else a busy machine's runnable threads would
 * show less time than its sleeping ones).  A CPU-time timer's missed
 * expirations are the kernel's tick limit instead, which the summary and
 * the pprof period account for. */
static uint32_t sample_weight(const siginfo_t *si)
{
	if (!wall_clock || si->si_overrun <= 0)
		return 1;
	return si->si_overrun < 1000000 ? 1 + (uint32_t)si->si_overrun : 1000000;
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	/* inflight lets sframe_prof_stop() wait until no handler is still
	 * writing; running is checked after announcing ourselves. */
	atomic_fetch_add(&inflight, 1);
	/* The timer's sigev_value says which slot; someone else's SIGPROF
	 * (another timer, setitimer, kill) carries no pointer to one. */
	uintptr_t p = si->si_code == SI_TIMER ? (uintptr_t)si->si_value.sival_ptr : 0;
	uintptr_t off = p - (uintptr_t)slots;
	bool ours = p && off < sizeof slots && off % sizeof slots[0] == 0;
	if (ours && atomic_load(&running)) {
		/* The profiler's own cost, for the summary: clock_gettime()
		 * is async-signal-safe, and CLOCK_MONOTONIC is read in the
		 * vDSO, without a system call. */
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		take_sample((struct slot *)p, uc, sample_weight(si));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		atomic_fetch_add_explicit(&handler_ns,
					  (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000 +
						     (t1.tv_nsec - t0.tv_nsec)),
					  memory_order_relaxed);
	}
	atomic_fetch_sub(&inflight, 1);
}

/* ---- Threads: timers on, timers off (normal context) ------------------ */

static int prof_hz = 99;

/* The CPU clock of another thread of this process, from its tid: the
 * encoding glibc's pthread_getcpuclockid() uses, which needs a pthread_t
 * that /proc/self/task does not give. */
static clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6); /* PERTHREAD | SCHED */
}

static struct slot *find_active(pid_t tid)
{
	for (int i = 0; i < MAX_THREADS; i++)
		if (atomic_load(&slots[i].state) == ACTIVE && slots[i].tid == tid)
			return &slots[i];
	return NULL;
}

static void retire(struct slot *s)
{
	int expect = ACTIVE;
	if (atomic_compare_exchange_strong(&s->state, &expect, EXITING)) {
		timer_delete(s->timer);
		atomic_store(&s->state, EXITED); /* the drain thread frees it */
	}
}

/* Start sampling thread tid, whose CPU clock is clock. */
static void register_thread(pid_t tid, clockid_t clock)
{
	if (find_active(tid))
		return;
	struct slot *s = NULL;
	for (int i = 0; i < MAX_THREADS && !s; i++) {
		int expect = FREE;
		if (atomic_compare_exchange_strong(&slots[i].state, &expect, CLAIMED))
			s = &slots[i];
	}
	if (!s) {
		atomic_fetch_add(&unprofiled, 1);
		return;
	}
	if (!s->ring) {
		void *p = mmap(NULL, RING_SAMPLES * sizeof(struct sample),
			       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			atomic_store(&s->state, FREE);
			atomic_fetch_add(&unprofiled, 1);
			return;
		}
		s->ring = p;
	}
	s->tid = tid;
	s->name[0] = '\0';
	s->cpu = 0;
	s->blocked = -1;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;  /* signal this thread only */
	sev.sigev_notify_thread_id = tid;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_ptr = s;       /* the handler's si_value */
	if (timer_create(wall_clock ? CLOCK_MONOTONIC : clock, &sev, &s->timer) != 0) {
		atomic_store(&s->state, FREE); /* e.g. the thread just exited */
		return;
	}
	atomic_store(&s->state, ACTIVE);
	long ns = 1000000000L / prof_hz;
	struct itimerspec its = { { ns / 1000000000L, ns % 1000000000L },
				  { ns / 1000000000L, ns % 1000000000L } };
	timer_settime(s->timer, 0, &its, NULL);
	/* sframe_prof_stop() may have run since we checked: then it either
	 * saw this slot ACTIVE and retired it, or we see running false. */
	if (!atomic_load(&running))
		retire(s);
}

/* Runs when a thread started through our pthread_create() exits (a
 * pthread key destructor: on return, pthread_exit() and cancellation). */
static void thread_exit(void *unused)
{
	(void)unused;
	/* Block SIGPROF first, so that no sample can be taken into the slot
	 * once the drain thread may hand it to another thread. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	struct slot *s = find_active(gettid());
	if (s) {
		/* For the summary: the thread is gone by then. */
		struct timespec ts;
		prctl(PR_GET_NAME, s->name);
		s->name[sizeof s->name - 1] = '\0';
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		s->cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		s->blocked = sigismember(&old, SIGPROF);
		retire(s);
	}
}

static pthread_key_t exit_key;

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
				 void *(*)(void *), void *);

static pthread_create_fn real_pthread_create(void)
{
	static _Atomic(pthread_create_fn) real;
	pthread_create_fn f = atomic_load(&real);
	if (!f) {
		/* dlsym returns void *; the copy avoids an ISO C cast warning. */
		void *p = dlsym(RTLD_NEXT, "pthread_create");
		memcpy(&f, &p, sizeof f);
		atomic_store(&real, f);
	}
	return f;
}

struct start_args {
	void *(*fn)(void *);
	void *arg;
};

/* Every thread created through pthread_create() starts here. */
static void *sframe_prof_thread_start(void *p)
{
	struct start_args a = *(struct start_args *)p;
	free(p);
	if (atomic_load(&running)) {
		pthread_setspecific(exit_key, &exit_key); /* arms thread_exit() */
		register_thread(gettid(), CLOCK_THREAD_CPUTIME_ID);
	}
	return a.fn(a.arg);
}

/* The interposed pthread_create(). */
int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	pthread_create_fn real = real_pthread_create();
	struct start_args *a = malloc(sizeof *a);
	if (!a)
		return real(thread, attr, fn, arg); /* just not profiled */
	a->fn = fn;
	a->arg = arg;
	int rc = real(thread, attr, sframe_prof_thread_start, a);
	if (rc != 0)
		free(a);
	return rc;
}

/* ---- Aggregation (the drain thread) ----------------------------------- */

/* A distinct stack and how many samples had it.  stop is kept only when
 * it cut the stack short (see truncating()), so that complete stacks
 * differing only in how the walk ended are counted together. */
struct stack {
	uint64_t hash, count;
	uint32_t depth, stop;
	pid_t tid; /* the thread that took the samples (pprof labels them) */
	uintptr_t pc[];
};

/* A thread the profiler sampled, or tried to: kept for the summary when
 * its slot is freed (drain thread and stop only). */
struct thread_rec {
	pid_t tid;
	unsigned long samples;
	char name[16];
	double cpu;  /* seconds, its whole life */
	int blocked; /* 1: SIGPROF blocked, 0: not, -1: unknown */
};
static struct thread_rec *threads;
static size_t threads_used, threads_cap;

static void read_proc_task(pid_t tid, char *name, size_t size, int *blocked);
static clockid_t thread_cpu_clock(pid_t tid);

/* Move a slot's thread into the records; the drain thread and stop only. */
static void record_thread(struct slot *s)
{
	if (threads_used == threads_cap) {
		size_t cap = threads_cap ? 2 * threads_cap : 64;
		struct thread_rec *t = realloc(threads, cap * sizeof *t);
		if (!t)
			return;
		threads = t;
		threads_cap = cap;
	}
	struct thread_rec *r = &threads[threads_used++];
	r->tid = s->tid;
	r->samples = s->taken;
	memcpy(r->name, s->name, sizeof r->name);
	r->blocked = s->blocked;
	r->cpu = s->cpu;
	if (!r->name[0]) { /* stopped while it runs: ask /proc and its clock */
		struct timespec ts;
		read_proc_task(r->tid, r->name, sizeof r->name, &r->blocked);
		if (clock_gettime(thread_cpu_clock(r->tid), &ts) == 0)
			r->cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	s->taken = 0;
}

static struct stack **stacks;     /* open addressing, NULL = empty */
static size_t stacks_cap, stacks_used;
static unsigned long samples, stop_counts[32];

/* Only the outermost frame (_start, clone3) ends a whole stack; any other
 * stop, no-unwind-info included (code with neither .sframe nor .eh_frame),
 * cut it short. */
static bool truncating(int stop)
{
	return stop != SFRAME_BT_STOP_OUTERMOST;
}

static uint64_t hash_stack(const uintptr_t *pc, uint32_t depth, uint32_t stop, pid_t tid)
{
	uint64_t h = (0xcbf29ce484222325ull ^ stop ^ (uint64_t)tid << 32);
	for (uint32_t i = 0; i < depth; i++)
		h = (h ^ pc[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void count_stack(const uintptr_t *pc, uint32_t depth, uint32_t stop, pid_t tid,
			uint32_t weight)
{
	if (2 * (stacks_used + 1) > stacks_cap) { /* grow, keep load <= 1/2 */
		size_t cap = stacks_cap ? 2 * stacks_cap : 1024;
		struct stack **t = calloc(cap, sizeof *t);
		if (!t)
			return;
		for (size_t i = 0; i < stacks_cap; i++) {
			if (!stacks[i])
				continue;
			size_t j = stacks[i]->hash & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = stacks[i];
		}
		free(stacks);
		stacks = t;
		stacks_cap = cap;
	}
	uint64_t h = hash_stack(pc, depth, stop, tid);
	size_t j = h & (stacks_cap - 1);
	for (; stacks[j]; j = (j + 1) & (stacks_cap - 1)) {
		struct stack *s = stacks[j];
		if (s->hash == h && s->depth == depth && s->stop == stop && s->tid == tid &&
		    memcmp(s->pc, pc, depth * sizeof *pc) == 0) {
			s->count += weight;
			return;
		}
	}
	struct stack *s = malloc(sizeof *s + depth * sizeof *pc);
	if (!s)
		return;
	*s = (struct stack){ .hash = h, .count = weight, .depth = depth, .stop = stop, .tid = tid };
	memcpy(s->pc, pc, depth * sizeof *pc);
	stacks[j] = s;
	stacks_used++;
}

static void drain(void)
{
	for (int i = 0; i < MAX_THREADS; i++) {
		struct slot *s = &slots[i];
		int state = atomic_load(&s->state);
		if (state == FREE || state == CLAIMED)
			continue;
		uint64_t tail = atomic_load_explicit(&s->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
		for (; tail != head; tail++) {
			const struct sample *smp = &s->ring[tail % RING_SAMPLES];
			samples += smp->weight;
			s->taken += smp->weight;
			stop_counts[smp->stop % 32] += smp->weight;
			count_stack(smp->pc, smp->depth,
				    truncating((int)smp->stop) ? smp->stop : 0, s->tid, smp->weight);
		}
		atomic_store_explicit(&s->tail, tail, memory_order_release);
		/* An EXITED thread takes no more samples: recycle its slot. */
		if (state == EXITED) {
			record_thread(s);
			atomic_store(&s->state, FREE);
		}
	}
}

static pthread_t drain_thread;
static atomic_bool drain_quit;

static void *drain_main(void *unused)
{
	(void)unused;
	/* Not a profiled thread: never interrupt it with SIGPROF. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	struct timespec ts = { 0, DRAIN_MS * 1000000L };
	while (!atomic_load(&drain_quit)) {
		nanosleep(&ts, NULL);
		drain();
	}
	return NULL;
}

/* ---- Output ----------------------------------------------------------- */

/* PC -> frame name, each PC symbolized once: the demangled name (the
 * folded lines, the SVG and pprof's function name) and the symbol as the
 * object has it (pprof's system_name); for pprof also the source
 * position, with the functions inlined at the PC (pprof's lines). */
struct name {
	uintptr_t key; /* pc * 2 + leaf */
	struct pprof_frame frame;
	uint64_t count; /* samples with this frame (read_lines()) */
	uint8_t rank;   /* 0: a program's or its own library's PC, 1: a
			   system library's, 2: in no file */
	uintptr_t object; /* its object: a hash of its path, 0 if none */
};
static struct name *names;
static size_t names_cap;

static void free_lines(struct pprof_frame *f)
{
	for (uint32_t i = 0; i < f->nlines; i++) {
		free((char *)f->lines[i].name);
		free((char *)f->lines[i].mangled);
		free((char *)f->lines[i].file);
	}
	free((void *)f->lines);
	f->lines = NULL;
	f->nlines = 0;
}

static char *strdup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* f's lines from sym: inlined[] innermost first, then the function they
 * were inlined into (named as f is).  None when nothing is known. */
static void set_lines(struct pprof_frame *f, const struct sframe_symbol *sym)
{
	free_lines(f);
	f->lines_read = 1;
	if (!sym->line && !sym->file[0] && sym->inlined_count <= 0)
		return;
	int n = sym->inlined_count > 0 ? sym->inlined_count : 0;
	if (n > SFRAME_MAX_INLINED)
		n = SFRAME_MAX_INLINED;
	struct pprof_line *l = calloc((size_t)n + 1, sizeof *l);
	if (!l)
		return;
	bool oom = false;
	for (int i = 0; i < n; i++) {
		const struct sframe_inlined *in = &sym->inlined[i];
		l[i].name = strdup(in->name[0] ? in->name : "[unknown]");
		l[i].file = strdup(in->file);
		l[i].line = in->line;
		l[i].column = in->column;
		oom |= !l[i].name || !l[i].file;
	}
	l[n].name = strdup(f->name);
	l[n].mangled = strdup_or_null(f->mangled);
	l[n].file = strdup(sym->file);
	l[n].line = sym->line;
	l[n].column = sym->column;
	oom |= !l[n].name || !l[n].file || (f->mangled && !l[n].mangled);
	f->lines = l;
	f->nlines = (uint32_t)n + 1;
	if (oom) /* the names alone, then */
		free_lines(f);
}

/* ';' separates frames in the folded format: no name may hold one. */
static char *frame_strdup(const char *s)
{
	char *c = strdup(s);
	for (char *p = c; p && *p; p++)
		if (*p == ';')
			*p = ':';
	return c;
}

static const struct pprof_frame *pc_frame(uintptr_t pc, bool leaf)
{
	uintptr_t key = pc * 2 + leaf;
	size_t j = (key * 0x9e3779b97f4a7c15ull >> 20) & (names_cap - 1);
	for (; names[j].frame.name; j = (j + 1) & (names_cap - 1))
		if (names[j].key == key)
			return &names[j].frame;
	static char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct sframe_symbol sym;
	char buf[1024];
	const char *mangled = NULL;
	if (sframe_symbolize(pc, &sym, scratch, sizeof scratch)) {
		/* name is demangled (as sframe_demangle() does), mangled is
		 * the symbol. */
		mangled = sym.mangled;
		snprintf(buf, sizeof buf, "%s", sym.name);
	} else if (sym.object[0]) {
		/* No symbol (a stripped object, e.g. libc's internal
		 * functions): name the object, as perf does, and for a caller
		 * the call site too, which tells e.g. start_thread from
		 * __libc_start_call_main.  A leaf gets no offset, or each PC
		 * would be a frame of its own. */
		const char *base = strrchr(sym.object, '/');
		base = base ? base + 1 : sym.object;
		if (leaf)
			snprintf(buf, sizeof buf, "[%s]", base);
		else
			snprintf(buf, sizeof buf, "[%s+0x%lx]", base,
				 (unsigned long)sym.object_offset);
	} else {
		snprintf(buf, sizeof buf, "[unknown]");
	}
	names[j].key = key;
	names[j].frame.pc = pc;
	names[j].frame.name = frame_strdup(buf);
	names[j].frame.mangled = mangled ? strdup(mangled) : NULL;
	if (!names[j].frame.name) {
		static const struct pprof_frame oom = { 0, "[oom]", NULL, NULL, 0, 0 };
		return &oom;
	}
	static const char *const system[] = { "/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/" };
	names[j].object = 0;
	for (const char *c = sym.object; *c; c++) /* FNV-1a; 0 only for "" */
		names[j].object = (names[j].object ? names[j].object : 0xcbf29ce484222325ull) *
					  0x100000001b3ull ^ (unsigned char)*c;
	names[j].rank = sym.object[0] == '/' ? 0 : 2;
	for (size_t i = 0; i < sizeof system / sizeof system[0]; i++)
		if (strncmp(sym.object, system[i], strlen(system[i])) == 0)
			names[j].rank = 1;
	return &names[j].frame;
}

static const char *pc_name(uintptr_t pc, bool leaf)
{
	return pc_frame(pc, leaf)->name;
}

struct folded {
	char *line; /* "root;...;leaf" */
	unsigned long count;
};

/* Order stacks frame by frame ("a;b" < "a;b;c" < "a;b-x"), as a plain
 * strcmp would not (';' sorts after '-'): then the flame graph's frames
 * sharing a prefix are adjacent. */
static int frame_cmp(const void *pa, const void *pb)
{
	const unsigned char *a = (const void *)((const struct folded *)pa)->line;
	const unsigned char *b = (const void *)((const struct folded *)pb)->line;
	for (;; a++, b++) {
		int ca = *a == ';' ? 1 : *a, cb = *b == ';' ? 1 : *b;
		if (ca != cb || !ca)
			return ca - cb;
	}
}

/* Symbolize and fold every stack; returns the sorted, merged lines. */
static struct folded *fold_all(size_t *count)
{
	names_cap = 1;
	while (names_cap < 4 * stacks_used + 1024)
		names_cap *= 2;
	names = calloc(names_cap, sizeof *names);
	struct folded *out = calloc(stacks_used + 1, sizeof *out);
	if (!names || !out)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < stacks_cap; i++) {
		struct stack *s = stacks[i];
		if (!s)
			continue;
		char *line = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&line, &len);
		if (!f)
			continue;
		/* A cut stack gets a pseudo-root naming why, so that it stands
		 * apart in the flame graph instead of posing as a root. */
		if (s->stop)
			fprintf(f, "[truncated:%s];", sframe_bt_stop_name((int)s->stop));
		for (uint32_t d = s->depth; d-- > 0;)
			fprintf(f, "%s%s", pc_name(s->pc[d], d == 0), d ? ";" : "");
		if (s->depth == 0)
			fprintf(f, "[no frames]");
		fclose(f);
		out[n++] = (struct folded){ line, s->count };
	}
	/* Different PCs in the same functions fold to the same line: merge. */
	qsort(out, n, sizeof *out, frame_cmp);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && strcmp(out[m - 1].line, out[i].line) == 0) {
			out[m - 1].count += out[i].count;
			free(out[i].line);
		} else {
			out[m++] = out[i];
		}
	}
	*count = m;
	return out;
}

static void xml_escaped(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], f);
		}
	}
}

#define SVG_WIDTH 1200.0
#define SVG_PAD 10.0
#define FRAME_H 16
#define CHAR_W 7.0 /* average glyph width at font-size 12 */

/* One frame of the flame graph: a box spanning samples [from, to). */
static void svg_frame(FILE *f, const char *name, size_t len, int depth,
		      unsigned long from, unsigned long to, unsigned long total,
		      int max_depth)
{
	double scale = (SVG_WIDTH - 2 * SVG_PAD) / (double)total;
	double x = SVG_PAD + (double)from * scale, w = (double)(to - from) * scale;
	if (w < 0.5)
		return; /* too thin to see or hover */
	double y = 40 + (double)(max_depth - depth) * FRAME_H;
	/* Warm colours, fixed per name, so a function looks the same
	 * everywhere in the graph. */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	int r = 205 + (int)(h % 50), g = (int)((h >> 8) % 180), b = (int)((h >> 16) % 55);
	fputs("<g><title>", f);
	xml_escaped(f, name, len);
	fprintf(f, " (%lu samples, %.2f%%)</title>", to - from,
		100.0 * (double)(to - from) / (double)total);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		   "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
		x, y, w, FRAME_H - 1, r, g, b);
	size_t fit = (size_t)((w - 6) / CHAR_W);
	if (fit >= 3) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
		if (fit >= len) {
			xml_escaped(f, name, len);
		} else {
			xml_escaped(f, name, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

/* The flame graph: x is the share of samples, y the stack depth (root at
 * the bottom), frames of the same function under the same parent merged.
 * The folded lines are sorted frame by frame, so walking them in order
 * and keeping the current stack of open frames is enough: a frame closes
 * when the next line no longer shares it. */
static int write_svg(const char *path, const struct folded *lines, size_t n)
{
	unsigned long total = 0;
	int max_depth = 0;
	for (size_t i = 0; i < n; i++) {
		total += lines[i].count;
		int d = 1;
		for (const char *c = lines[i].line; *c; c++)
			d += *c == ';';
		if (d > max_depth)
			max_depth = d;
	}
	if (total == 0)
		total = 1;
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int height = 40 + (max_depth + 1) * FRAME_H + 30;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		   "<style>text { font-family: monospace; font-size: 12px; "
		   "pointer-events: none; } rect:hover { stroke: black; }</style>\n"
		   "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fdf6e3\"/>\n"
		   "<text x=\"%d\" y=\"24\" style=\"font-size: 17px\" text-anchor=\"middle\">"
		   "CPU flame graph (sframebt)</text>\n"
		   "<text x=\"%.0f\" y=\"%d\">%lu samples; hover a frame for its name "
		   "and share</text>\n",
		(int)SVG_WIDTH, height, (int)SVG_WIDTH, height, (int)SVG_WIDTH / 2,
		SVG_PAD, height - 10, total);

	/* open[1..depth]: the frames of the current stack (0 is "all"). */
	struct open_frame {
		const char *name;
		size_t len;
		unsigned long from;
	} open[MAX_DEPTH + 2];
	int depth = 0;
	unsigned long x = 0;
	for (size_t i = 0; i <= n; i++) {
		/* Split this line into frames (the pass i == n closes all). */
		const char *fr[MAX_DEPTH + 1];
		size_t fl[MAX_DEPTH + 1];
		int k = 0;
		for (const char *c = i < n ? lines[i].line : ""; *c && k <= MAX_DEPTH;) {
			const char *e = strchr(c, ';');
			size_t len = e ? (size_t)(e - c) : strlen(c);
			fr[k] = c;
			fl[k++] = len;
			c += len + (e != NULL);
		}
		/* Frames shared with the open stack stay open; the others are
		 * drawn, now that their width is known. */
		int keep = 0;
		while (keep < k && keep < depth && open[keep + 1].len == fl[keep] &&
		       memcmp(open[keep + 1].name, fr[keep], fl[keep]) == 0)
			keep++;
		for (; depth > keep; depth--)
			svg_frame(f, open[depth].name, open[depth].len, depth,
				  open[depth].from, x, total, max_depth);
		for (int d = keep; d < k; d++)
			open[++depth] = (struct open_frame){ fr[d], fl[d], x };
		if (i < n)
			x += lines[i].count;
	}
	svg_frame(f, "all", 3, 0, 0, total, total, max_depth);
	fputs("</svg>\n", f);
	return fclose(f);
}

/* ---- Threads in the summary ------------------------------------------ */

/* A live thread's name (/proc/self/task/TID/comm) and whether it blocks
 * SIGPROF (the SigBlk mask of its status file); normal context. */
static void read_proc_task(pid_t tid, char *name, size_t size, int *blocked)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
	FILE *f = fopen(path, "r");
	if (f && fgets(line, sizeof line, f)) {
		size_t len = strcspn(line, "\n");
		len = len < size - 1 ? len : size - 1;
		memcpy(name, line, len);
		name[len] = '\0';
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long mask;
		if (sscanf(line, "SigBlk: %llx", &mask) == 1)
			*blocked = (int)(mask >> (SIGPROF - 1) & 1);
	}
	if (f)
		fclose(f);
}

static bool recorded(pid_t tid)
{
	for (size_t i = 0; i < threads_used; i++)
		if (threads[i].tid == tid)
			return true;
	return false;
}

static int rec_cmp(const void *pa, const void *pb)
{
	const struct thread_rec *a = pa, *b = pb;
	if (a->samples != b->samples)
		return a->samples < b->samples ? -1 : 1; /* unsampled first */
	return a->tid - b->tid;
}

#define SUMMARY_THREADS 32 /* threads listed one by one */

/* Each thread with its samples: the ones that took none or block
 * SIGPROF first, since their CPU time is missing from the profile; then
 * the threads of the process that were never profiled (not created with
 * pthread_create(), or no free slot). */
static void thread_summary(FILE *out)
{
	unsigned long silent = 0, blocked = 0;
	qsort(threads, threads_used, sizeof *threads, rec_cmp);
	for (size_t i = 0; i < threads_used; i++) {
		silent += threads[i].samples == 0;
		blocked += threads[i].blocked == 1;
	}
	fprintf(out, "sframe-prof: %zu threads profiled, %lu took no sample, "
		     "%lu blocked SIGPROF%s\n", threads_used, silent, blocked,
		blocked ? " (a thread is not sampled while it blocks SIGPROF: "
			  "its CPU time is missing)" : "");
	for (size_t i = 0; i < threads_used; i++) {
		const struct thread_rec *t = &threads[i];
		if (i == SUMMARY_THREADS) {
			fprintf(out, "sframe-prof:   ... and %zu more\n", threads_used - i);
			break;
		}
		fprintf(out, "sframe-prof:   thread %d \"%s\": %lu samples, %.2f s of CPU%s\n",
			(int)t->tid, t->name[0] ? t->name : "?", t->samples, t->cpu,
			t->blocked == 1 ? ", SIGPROF blocked" : "");
	}
	DIR *dir = opendir("/proc/self/task");
	for (struct dirent *e; dir && (e = readdir(dir));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || recorded(tid))
			continue;
		char name[16] = "?";
		int blk = -1;
		read_proc_task(tid, name, sizeof name, &blk);
		fprintf(out, "sframe-prof:   thread %d \"%s\": not profiled%s\n", (int)tid, name,
			blk == 1 ? ", SIGPROF blocked" : "");
	}
	if (dir)
		closedir(dir);
}

/* ---- Start and stop --------------------------------------------------- */

static char out_prefix[512];
static double cpu_at_start;
/* What to write: PREFIX.folded (and PREFIX.svg, PREFIX.pb.gz) by default;
 * SFRAME_PROF_FILE names one file instead, its format by its suffix. */
enum { OUT_FOLDED = 1, OUT_SVG = 2, OUT_PPROF = 4 };
static unsigned out_formats;
static char out_file[600]; /* "" unless SFRAME_PROF_FILE */
static struct timespec wall_at_start, mono_at_start;
static struct sframe_prof_opts start_opts; /* for a forked child's restart */
static bool follow_fork;
static bool forking_for_lines; /* read_lines(): the atfork handlers leave
				  its child alone */
static atomic_ulong forks;

static double process_cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static bool quiet, started;

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

static void after_fork_child(void)
{
	if (forking_for_lines)
		return;
	/* The child has no timers and no drain thread, and the copy of the
	 * tables is the parent's: forget it.  Then profile the child into a
	 * file of its own if asked (SFRAME_PROF_FORK=1), else nothing. */
	atomic_store(&running, false);
	bool was_started = started;
	started = false;
	for (int i = 0; i < MAX_THREADS; i++) {
		atomic_store(&slots[i].state, FREE);
		atomic_store(&slots[i].tail, atomic_load(&slots[i].head));
		slots[i].taken = 0;
	}
	threads_used = 0;
	for (size_t i = 0; i < stacks_cap; i++)
		free(stacks[i]);
	free(stacks);
	stacks = NULL;
	stacks_cap = stacks_used = 0;
	atomic_store(&forks, 0);
	if (was_started && follow_fork && sframe_prof_start(&start_opts) != 0)
		perror("sframe-prof: start in a forked child");
}

static void after_fork_parent(void)
{
	if (started)
		atomic_fetch_add(&forks, 1);
}

/* PATTERN with "%p" replaced by the process id, into out (size bytes). */
static void expand_pid(const char *pattern, char *out, size_t size)
{
	size_t len = 0;
	for (const char *c = pattern; *c && len < size - 16; c++) {
		if (c[0] == '%' && c[1] == 'p') {
			len += (size_t)sprintf(out + len, "%d", (int)getpid());
			c++;
		} else {
			out[len++] = *c;
		}
	}
	out[len] = '\0';
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* SFRAME_PROF_FILE: one output file, in the format its name says, the
 * summary beside it (PREFIX.summary.txt, PREFIX being the name without
 * its suffix).  Other processes than SFRAME_PROF_PID (the one sframe-prof
 * started: its children, exec'd or forked) insert ".PID" before the
 * suffix, unless the name has "%p" already. */
static void file_output(const char *file)
{
	static const struct { const char *suffix; unsigned format; } kinds[] = {
		{ ".pb.gz", OUT_PPROF }, { ".pb", OUT_PPROF }, { ".folded", OUT_FOLDED },
		{ ".svg", OUT_SVG },
	};
	char name[512];
	expand_pid(file, name, sizeof name);
	size_t base = strlen(name);
	const char *suffix = ".pb.gz";
	out_formats = OUT_PPROF;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (ends_with(name, kinds[i].suffix)) {
			suffix = kinds[i].suffix;
			out_formats = kinds[i].format;
			base -= strlen(suffix);
			break;
		}
	name[base] = '\0';
	int main_pid = env_int("SFRAME_PROF_PID", 0);
	if (main_pid && main_pid != (int)getpid() && !strstr(file, "%p"))
		snprintf(out_prefix, sizeof out_prefix, "%.480s.%d", name, (int)getpid());
	else
		snprintf(out_prefix, sizeof out_prefix, "%s", name);
	snprintf(out_file, sizeof out_file, "%s%s", out_prefix, suffix);
}

static void stop_at_exit(void)
{
	if (started)
		sframe_prof_stop();
}

int sframe_prof_start(const struct sframe_prof_opts *opts)
{
	static bool once;
	struct sframe_prof_opts o = opts ? *opts : (struct sframe_prof_opts){ 0 };
	if (started) {
		errno = EBUSY;
		return -1;
	}
	start_opts = o;
	prof_hz = o.hz > 0 ? o.hz : env_int("SFRAME_PROF_HZ", 99);
	if (prof_hz <= 0 || prof_hz > 100000)
		prof_hz = 99;
	/* Under LD_PRELOAD every process of a pipeline or script is profiled
	 * and would write the same files: "%p" stands for the process id. */
	const char *out = o.out ? o.out : getenv("SFRAME_PROF_OUT");
	const char *file = o.out ? NULL : getenv("SFRAME_PROF_FILE");
	out_file[0] = '\0';
	if (file && *file) {
		file_output(file);
	} else {
		expand_pid(out && *out ? out : "sframe-prof.%p", out_prefix, sizeof out_prefix);
		out_formats = OUT_FOLDED;
		if (o.svg || env_int("SFRAME_PROF_SVG", 0))
			out_formats |= OUT_SVG;
		if (o.pprof || env_int("SFRAME_PROF_PPROF", 0))
			out_formats |= OUT_PPROF;
	}
	quiet = o.quiet || env_int("SFRAME_PROF_QUIET", 0);
	wall_clock = o.wall || env_int("SFRAME_PROF_WALL", 0);
	follow_fork = o.follow_fork || env_int("SFRAME_PROF_FORK", 0);
	if (o.frame_pointers || env_int("SFRAME_PROF_FRAME_POINTERS", 0))
		sframe_backtrace_set_default_flags(SFRAME_BT_FP_FALLBACK_ANY);

	/* Find the loaded objects now, not in the first signal handlers. */
	sframe_backtrace_warmup();
	if (!once) {
		once = true;
		pthread_key_create(&exit_key, thread_exit);
		pthread_atfork(NULL, after_fork_parent, after_fork_child);
		atexit(stop_at_exit);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return -1;

	samples = 0;
	cpu_at_start = process_cpu_seconds();
	clock_gettime(CLOCK_REALTIME, &wall_at_start);
	clock_gettime(CLOCK_MONOTONIC, &mono_at_start);
	memset(stop_counts, 0, sizeof stop_counts);
	atomic_store(&dropped, 0);
	atomic_store(&unprofiled, 0);
	atomic_store(&handler_ns, 0);
	atomic_store(&running, true);
	started = true;

	/* The threads running now.  Later ones register themselves in
	 * sframe_prof_thread_start(). */
	pid_t self = gettid();
	DIR *dir = opendir("/proc/self/task");
	for (struct dirent *e; dir && (e = readdir(dir));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid > 0)
			register_thread(tid, tid == self ? CLOCK_THREAD_CPUTIME_ID
							 : thread_cpu_clock(tid));
	}
	if (dir)
		closedir(dir);
	if (!find_active(self))
		register_thread(self, CLOCK_THREAD_CPUTIME_ID);
	/* The drain thread is created with the real pthread_create, after the
	 * scan: it is not profiled. */
	atomic_store(&drain_quit, false);
	if (real_pthread_create()(&drain_thread, NULL, drain_main, NULL) != 0) {
		sframe_prof_stop();
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

static int64_t wall_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - mono_at_start.tv_sec) * 1000000000 +
	       (now.tv_nsec - mono_at_start.tv_nsec);
}

static const char *thread_name(pid_t tid)
{
	for (size_t i = 0; i < threads_used; i++)
		if (threads[i].tid == tid && threads[i].name[0])
			return threads[i].name;
	return "?";
}

/* ---- Source lines, for pprof ------------------------------------------ */

/* SFRAME_PROF_LINES_MS: the CPU time the line lookups may take (-1: no
 * limit); by default 1% of the CPU time profiled, which keeps a profile
 * at 1 kHz within its overhead budget (docs/SPEED.md) however slow the
 * lookups are (see prof/srclines.h).  The PCs most worth a line go first:
 * those of the program and its own libraries before the system's, then
 * by samples. */
#define LINES_SHARE 0.01
static struct srclines_cost lines_cost;
static size_t lines_wanted;
static int64_t lines_budget_ns;

static struct name *find_name(uintptr_t key)
{
	size_t j = (key * 0x9e3779b97f4a7c15ull >> 20) & (names_cap - 1);
	for (; names[j].frame.name; j = (j + 1) & (names_cap - 1))
		if (names[j].key == key)
			return &names[j];
	return NULL;
}

static int want_cmp(const void *pa, const void *pb)
{
	const struct name *a = *(struct name *const *)pa, *b = *(struct name *const *)pb;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

static void got_lines(void *ctx, size_t i, const struct sframe_symbol *sym)
{
	struct name **want = ctx;
	set_lines(&want[i]->frame, sym);
}

/* After fold_all(): each named PC's lines, within the budget. */
static void read_lines(void)
{
	for (size_t i = 0; i < stacks_cap; i++) {
		const struct stack *s = stacks[i];
		for (uint32_t d = 0; s && d < s->depth; d++) {
			struct name *nm = find_name(s->pc[d] * 2 + (d == 0));
			if (nm)
				nm->count += s->count;
		}
	}
	size_t m = 0;
	for (size_t i = 0; i < names_cap; i++)
		m += names[i].frame.name && names[i].frame.pc;
	struct name **want = calloc(m + 1, sizeof *want);
	uintptr_t *pcs = calloc(m + 1, sizeof *pcs), *objs = calloc(m + 1, sizeof *objs);
	if (want && pcs && objs) {
		m = 0;
		for (size_t i = 0; i < names_cap; i++)
			if (names[i].frame.name && names[i].frame.pc)
				want[m++] = &names[i];
		qsort(want, m, sizeof *want, want_cmp);
		for (size_t i = 0; i < m; i++) {
			pcs[i] = want[i]->frame.pc;
			objs[i] = want[i]->object;
		}
		const char *env = getenv("SFRAME_PROF_LINES_MS");
		if (env && *env)
			lines_budget_ns = atoll(env) < 0 ? -1 : atoll(env) * 1000000;
		else
			lines_budget_ns = (int64_t)(LINES_SHARE * 1e9 *
						    (process_cpu_seconds() - cpu_at_start));
		lines_wanted = m;
		lines_cost = (struct srclines_cost){ 0, 0 };
		forking_for_lines = true;
		lines_cost = srclines_read(pcs, objs, m, lines_budget_ns, got_lines, want);
		forking_for_lines = false;
	}
	free(want);
	free(pcs);
	free(objs);
}

/* The stacks as a pprof profile (after fold_all(), which sets up the
 * names): one sample per stack and thread, frames named as in the folded
 * lines, a cut stack rooted at the same "[truncated:REASON]" pseudo-frame. */
static int write_pprof(const char *path)
{
	size_t nframes = 1;
	for (size_t i = 0; i < stacks_cap; i++)
		nframes += stacks[i] ? stacks[i]->depth + 1 : 0;
	struct pprof_sample *smp = calloc(stacks_used + 1, sizeof *smp);
	const struct pprof_frame **frames = calloc(nframes, sizeof *frames);
	struct pprof_frame *cut = calloc(stacks_used + 1, sizeof *cut);
	int rc = -1;
	if (!smp || !frames || !cut)
		goto out;
	size_t n = 0, used = 0;
	for (size_t i = 0; i < stacks_cap; i++) {
		const struct stack *s = stacks[i];
		if (!s)
			continue;
		const struct pprof_frame **f = frames + used;
		uint32_t d = 0;
		for (; d < s->depth; d++)
			f[d] = pc_frame(s->pc[d], d == 0);
		if (s->stop) {
			char buf[64];
			snprintf(buf, sizeof buf, "[truncated:%s]", sframe_bt_stop_name((int)s->stop));
			cut[n].name = strdup(buf);
			if (cut[n].name)
				f[d++] = &cut[n];
		}
		used += d;
		smp[n++] = (struct pprof_sample){ .frames = f, .depth = d, .count = s->count,
						  .tid = s->tid, .thread = thread_name(s->tid) };
	}
	/* A CPU-time timer fires at most once per kernel tick: when fewer
	 * samples came than asked, each stands for more CPU time. */
	int64_t period = 1000000000 / prof_hz;
	double cpu = process_cpu_seconds() - cpu_at_start;
	if (!wall_clock && samples > 0 && (double)samples < 0.8 * cpu * prof_hz)
		period = (int64_t)(cpu * 1e9 / (double)samples);
	struct pprof_profile p = {
		.sample_type = wall_clock ? "wall" : "cpu",
		.period_ns = period,
		.time_ns = (int64_t)wall_at_start.tv_sec * 1000000000 + wall_at_start.tv_nsec,
		.duration_ns = wall_ns(),
		.samples = smp,
		.nsamples = n,
	};
	rc = pprof_write(path, &p);
	for (size_t i = 0; i < n; i++)
		free((char *)cut[i].name);
out:
	free(smp);
	free(frames);
	free(cut);
	return rc;
}

int sframe_prof_stop(void)
{
	if (!started)
		return -1;
	started = false;
	atomic_store(&running, false);
	for (int i = 0; i < MAX_THREADS; i++)
		retire(&slots[i]);
	/* A handler that started before running went false may still be
	 * writing its sample: wait for it, then drain for the last time. */
	while (atomic_load(&inflight) > 0)
		sched_yield();
	atomic_store(&drain_quit, true);
	pthread_join(drain_thread, NULL);
	drain();

	/* The exit's cost in CPU time (this thread's, and the line lookups'
	 * child's): on a loaded machine wall time would count the
	 * neighbours too. */
	struct timespec w0, w1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &w0);
	size_t n = 0;
	struct folded *lines = fold_all(&n);
	if (lines && (out_formats & OUT_PPROF))
		read_lines();
	int rc = lines ? 0 : -1;
	char path[600], wrote[2000] = "";
	size_t wl = 0;
	if (out_formats & OUT_FOLDED) {
		snprintf(path, sizeof path, "%s", out_file[0] ? out_file : out_prefix);
		if (!out_file[0])
			strncat(path, ".folded", sizeof path - strlen(path) - 1);
		FILE *f = fopen(path, "w");
		for (size_t i = 0; f && lines && i < n; i++)
			fprintf(f, "%s %lu\n", lines[i].line, lines[i].count);
		if (!f || fclose(f) != 0)
			rc = -1;
		wl += (size_t)snprintf(wrote + wl, sizeof wrote - wl, "%s (%zu stacks), ", path, n);
	}
	if ((out_formats & OUT_SVG) && lines) {
		snprintf(path, sizeof path, "%s", out_file[0] ? out_file : out_prefix);
		if (!out_file[0])
			strncat(path, ".svg", sizeof path - strlen(path) - 1);
		if (write_svg(path, lines, n) != 0)
			rc = -1;
		wl += (size_t)snprintf(wrote + wl, sizeof wrote - wl, "%s, ", path);
	}
	if (out_formats & OUT_PPROF) {
		snprintf(path, sizeof path, "%s", out_file[0] ? out_file : out_prefix);
		if (!out_file[0])
			strncat(path, ".pb.gz", sizeof path - strlen(path) - 1);
		if (write_pprof(path) != 0)
			rc = -1;
		wl += (size_t)snprintf(wrote + wl, sizeof wrote - wl, "%s (pprof), ", path);
	}

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &w1);
	double write_ms = (double)(w1.tv_sec - w0.tv_sec) * 1e3 +
			  (double)(w1.tv_nsec - w0.tv_nsec) / 1e6;
	double names_ms = write_ms;
	if (out_formats & OUT_PPROF)
		write_ms += (double)lines_cost.cpu_ns / 1e6;

	/* The summary goes to PREFIX.summary.txt and, unless quiet, to
	 * stderr, which the program may have closed. */
	char sum_path[600];
	snprintf(sum_path, sizeof sum_path, "%s.summary.txt", out_prefix);
	char *text = NULL;
	size_t text_len = 0;
	FILE *o = open_memstream(&text, &text_len);
	if (o) {
		unsigned long truncated = 0;
		for (int s = 0; s < 32; s++)
			if (truncating(s))
				truncated += stop_counts[s];
		/* A thread's CPU-time timer is checked at the kernel's tick:
		 * asking for more than CONFIG_HZ per second gets CONFIG_HZ. */
		double cpu = process_cpu_seconds() - cpu_at_start;
		double rate = cpu > 0 ? (double)samples / cpu : 0;
		if (wall_clock) {
			fprintf(o, "sframe-prof: %lu samples over %.2f s of wall-clock time "
				   "(--wall: each thread %d/s, running or not)",
				samples, (double)wall_ns() / 1e9, prof_hz);
		} else {
			fprintf(o, "sframe-prof: %lu samples from %.2f s of CPU time (%.0f/s",
				samples, cpu, rate);
			if (rate < 0.8 * prof_hz && samples > 0)
				fprintf(o, " of the %d/s asked: CPU-time timers fire at most "
					   "once per kernel tick", prof_hz);
			fputc(')', o);
		}
		fprintf(o, "\nsframe-prof: %lu samples dropped (ring full), "
			   "%lu threads not profiled (thread table full)\n",
			atomic_load(&dropped), atomic_load(&unprofiled));
		fprintf(o, "sframe-prof: %lu stacks truncated; walks stopped by:", truncated);
		for (int s = 0; s < 32; s++)
			if (stop_counts[s])
				fprintf(o, " %s %lu%s", sframe_bt_stop_name(s), stop_counts[s],
					truncating(s) ? " (truncated)" : "");
		fputc('\n', o);
		double hms = (double)atomic_load(&handler_ns) / 1e6;
		fprintf(o, "sframe-prof: cost: %.1f ms taking samples (%.1f us each, %.2f%% of "
			   "the CPU time), %.1f ms of CPU at exit symbolizing and writing",
			hms, samples ? 1e3 * hms / (double)samples : 0.0,
			cpu > 0 ? hms / (10 * cpu) : 0.0, write_ms);
		if (out_formats & OUT_PPROF)
			fprintf(o, " (%.1f ms naming and writing, %.1f ms reading source lines)",
				names_ms, (double)lines_cost.cpu_ns / 1e6);
		fputc('\n', o);
		if (out_formats & OUT_PPROF) {
			fprintf(o, "sframe-prof: source lines read for %zu of %zu addresses in "
				   "%.1f ms of CPU (", lines_cost.answered, lines_wanted,
				(double)lines_cost.cpu_ns / 1e6);
			if (lines_budget_ns < 0)
				fprintf(o, "no limit");
			else
				fprintf(o, "at most %.1f ms%s", (double)lines_budget_ns / 1e6,
					getenv("SFRAME_PROF_LINES_MS") ? ""
					: ": 1% of the CPU time profiled; SFRAME_PROF_LINES_MS=-1 reads them all");
			fprintf(o, ")\n");
		}
		thread_summary(o);
		unsigned long nforks = atomic_load(&forks);
		if (nforks)
			fprintf(o, "sframe-prof: %lu child processes forked: %s\n", nforks,
				follow_fork ? "each profiled into a file of its own (its pid in the name)"
					    : "not followed (SFRAME_PROF_FORK=1 follows them)");
		fprintf(o, "sframe-prof: wrote %s%s%s\n", wrote, sum_path,
			rc ? " -- write FAILED" : "");
		if (fclose(o) != 0)
			text = NULL;
	}
	FILE *sf = text ? fopen(sum_path, "w") : NULL;
	if (!sf || fputs(text, sf) == EOF || fclose(sf) != 0)
		rc = -1;
	if (text && !quiet)
		fputs(text, stderr);
	free(text);
	free(threads);
	threads = NULL;
	threads_used = threads_cap = 0;

	/* Free the aggregation; the rings stay for a later start. */
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i].line);
	free(lines);
	for (size_t i = 0; names && i < names_cap; i++) {
		free((char *)names[i].frame.name);
		free((char *)names[i].frame.mangled);
		free_lines(&names[i].frame);
	}
	free(names);
	names = NULL;
	for (size_t i = 0; i < stacks_cap; i++)
		free(stacks[i]);
	free(stacks);
	stacks = NULL;
	stacks_cap = stacks_used = 0;
	return rc;
}

/* ---- LD_PRELOAD entry point ------------------------------------------ */

#ifdef SFRAME_PROF_PRELOAD
/* Built as libsframe-profiler.so (see examples/build.mk): start when
 * loaded, before main(); sframe_prof_start() registers the stop at exit. */
__attribute__((constructor)) static void preload_start(void)
{
	if (sframe_prof_start(NULL) != 0)
		perror("sframe-prof: start");
}
#endif
