/* The distribution-corpus probe: an LD_PRELOAD object that samples an
 * unmodified program and checks every sample's whole stack against
 * libunwind's, walked from the same ucontext.
 *
 * Loaded with SFB_WORLD_OUT=DIR in the environment (without it the probe
 * does nothing), it arms a 1 kHz (SFB_WORLD_HZ) SIGPROF timer (signal:
 * SFB_WORLD_SIGNAL) for every thread: a CLOCK_MONOTONIC POSIX timer aimed
 * at the thread (SIGEV_THREAD_ID), created by the constructor for the thread that runs
 * it, by an interposed pthread_create() for each new thread, and again in
 * a fork child.  Thread CPU-time timers would be the natural choice, but
 * they expire at most once per scheduler tick (250 Hz on Debian's
 * kernels).  A tick of a thread that used no CPU time since its last one
 * (blocked in a system call) is recorded one time in IDLE_EVERY, so that
 * waiting threads neither flood the samples nor go unsampled.
 *
 * The handler walks the interrupted context with sframe_backtrace_ex(uc)
 * and with libunwind (unw_init_local2(UNW_INIT_SIGNAL_FRAME)), in
 * alternating order, timing each walk with CLOCK_MONOTONIC, into a buffer
 * mapped by the constructor: no allocation, no lock, no stdio.
 *
 * When the process ends (the destructor, an interposed _exit()/_Exit(),
 * or an interposed exec function (execve, execv, execvp, execvpe, execl,
 * execlp, execle) about to replace the image), every sample is compared
 * as tests/walk/t_unw_compare.c compares (the rule in
 * tests/lib/unw_compare.h) and one result file is written: DIR/PID.txt
 * (PID.N.txt if the name is taken).  Nothing is written to stdout or stderr: programs
 * close them or use them for their output.  A process killed by a signal
 * writes nothing.  A vfork() child (posix_spawn, libiberty's pex) shares
 * its parent's memory and has no timer: it never writes, and its own
 * getpid() tells it apart.
 *
 * The result file, one record a line (read by tests/world/t_world.sh):
 *   pid P ppid Q end exit|_exit|exec
 *   exe PATH
 *   cmd ARGV...
 *   samples N equal E differ D incomplete I dropped X ticks T idle_skipped S threads H
 *   median_ns sfb A unw B
 *   stops NAME COUNT ...
 *   sources sframe N eh_frame M fp F signal S   frames unwound by each source
 *   d REASON|SFRAMEBT-STOP|WHERE        one per differing sample
 *   c SFB_NS UNW_NS                     one per compared sample
 *   # ...                               both stacks of the first differing samples */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define UNW_CMP_NF 128   /* frames per walk */
#include "backtrace.h"
#include "sig_install.h"
#include "unw_compare.h"

#define MAXSAMPLES 16384 /* per process */
#define IDLE_EVERY 10    /* record one idle tick in this many */
#define EXPLAIN 4        /* differing samples shown with both stacks */

#define IE __attribute__((tls_model("initial-exec")))
#define EXPORT __attribute__((visibility("default")))

struct sample {
	_Atomic int done; /* written whole (release) */
	int tid;
	uint8_t unw_first; /* libunwind walked first */
	uint8_t idle;
	uint32_t ns_sfb, ns_unw;
	struct unw_stacks cmp;
};

static struct sample *samples;
static atomic_uint nsamples, nticks, nidle_skipped, nthreads;
static atomic_int sampling;
static atomic_int dumped;
static pid_t sampled_pid; /* the process the buffer belongs to */
static long period_ns;
static int tick_signal = SIGPROF;
static char outdir[512];

static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				  void *);
static void (*real_exit_fn)(int) __attribute__((noreturn));
static void (*real_Exit_fn)(int) __attribute__((noreturn));
static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execv)(const char *, char *const[]);
static int (*real_execvp)(const char *, char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);

/* ---- Per-thread timers -------------------------------------------------- */

struct tstate {
	int armed;
	timer_t timer;
	uint64_t last_cpu;
	unsigned idle;
};
static __thread struct tstate ts IE;
static pthread_key_t disarm_key;

static uint64_t now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void arm_thread(void)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = tick_signal;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	ts.armed = 0;
	ts.last_cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (timer_create(CLOCK_MONOTONIC, &sev, &ts.timer) != 0)
		return;
	struct itimerspec its = { { 0, period_ns }, { 0, period_ns } };
	if (timer_settime(ts.timer, 0, &its, NULL) != 0) {
		timer_delete(ts.timer);
		return;
	}
	ts.armed = 1;
	atomic_fetch_add(&nthreads, 1);
	/* the key's destructor runs at thread exit, pthread_exit() included;
	 * it is called only for a non-NULL value */
	pthread_setspecific(disarm_key, &ts);
}

static void disarm_thread(void *p)
{
	struct tstate *t = p;
	if (t->armed) {
		t->armed = 0;
		timer_delete(t->timer);
	}
}

/* ---- Sampling ----------------------------------------------------------- */

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	int saved = errno;
	if (!atomic_load_explicit(&sampling, memory_order_relaxed) || !si ||
	    si->si_code != SI_TIMER || !ts.armed)
		goto out;
	atomic_fetch_add_explicit(&nticks, 1, memory_order_relaxed);
	/* a thread that used less than a quarter of a period since its last
	 * tick was waiting */
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	bool idle = cpu - ts.last_cpu < (uint64_t)period_ns / 4;
	ts.last_cpu = cpu;
	if (idle && ts.idle++ % IDLE_EVERY != 0) {
		atomic_fetch_add_explicit(&nidle_skipped, 1, memory_order_relaxed);
		goto out;
	}
	unsigned i = atomic_fetch_add_explicit(&nsamples, 1, memory_order_relaxed);
	if (i >= MAXSAMPLES)
		goto out;
	struct sample *s = &samples[i];
	atomic_store_explicit(&s->done, 0, memory_order_relaxed);
	s->tid = (int)syscall(SYS_gettid);
	s->idle = idle;
	s->unw_first = i & 1;

	struct sframe_bt_frame f[UNW_CMP_NF];
	for (int pass = 0; pass < 2; pass++) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		if (pass == s->unw_first) {
			unw_cmp_walk_sfb(&s->cmp, uc, f);
			s->ns_sfb = (uint32_t)(now_ns(CLOCK_MONOTONIC) - t0);
		} else {
			unw_cmp_walk_unw(&s->cmp, uc);
			s->ns_unw = (uint32_t)(now_ns(CLOCK_MONOTONIC) - t0);
		}
	}
	unw_cmp_keep_sfb(&s->cmp, f);
	atomic_store_explicit(&s->done, 1, memory_order_release);
out:
	errno = saved;
}

/* ---- Result file: a buffered writer, no stdio, no allocation ------------ */

static char obuf[1 << 16];
static size_t olen;
static int ofd = -1;

static void oflush(void)
{
	size_t off = 0;
	while (ofd >= 0 && off < olen) {
		ssize_t w = write(ofd, obuf + off, olen - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	olen = 0;
}

__attribute__((format(printf, 1, 2))) static void out(const char *fmt, ...)
{
	if (sizeof obuf - olen < 1024)
		oflush();
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(obuf + olen, sizeof obuf - olen, fmt, ap);
	va_end(ap);
	if (n > 0)
		olen += (size_t)n < sizeof obuf - olen ? (size_t)n : sizeof obuf - olen - 1;
}

static int open_result(pid_t pid)
{
	char path[600];
	for (int k = 0; k < 100; k++) {
		if (k == 0)
			snprintf(path, sizeof path, "%s/%d.txt", outdir, (int)pid);
		else
			snprintf(path, sizeof path, "%s/%d.%d.txt", outdir, (int)pid, k);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* object+offset (and function) of a PC, return addresses looked up at pc-1 */
static void where(uintptr_t pc, int is_ra, char *buf, size_t size)
{
	static char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct sframe_symbol sym;
	uintptr_t look = is_ra && pc ? pc - 1 : pc;
	sframe_symbolize(look, &sym, scratch, sizeof scratch);
	const char *obj = sym.object[0] ? strrchr(sym.object, '/') : NULL;
	obj = obj ? obj + 1 : sym.object[0] ? sym.object : "?";
	snprintf(buf, size, "%s%s%s+%#lx", sym.name[0] ? sym.name : "", sym.name[0] ? "@" : "",
		 obj, (unsigned long)(sym.object[0] ? sym.object_offset + (look != pc) : pc));
}

static void explain(unsigned i, const struct sample *s, enum unw_cmp_diff d, int at)
{
	const struct unw_stacks *c = &s->cmp;
	char line[512], w[256];
	where(c->st.stop_pc, 0, w, sizeof w);
	out("# sample %u (thread %d%s) differs: %s at frame %d; sframebt %d frames, stop %s at "
	    "%#lx %s; libunwind %d frames, last unw_step %d\n",
	    i, s->tid, s->idle ? ", idle" : "", unw_cmp_reason(d), at, c->n_sfb,
	    sframe_bt_stop_name(c->st.stop), (unsigned long)c->st.stop_pc, w, c->n_unw, c->unw_end);
	for (int k = 0; k < c->n_sfb; k++) {
		sframe_format_frame(k, c->sfb_pc[k], !c->sfb_exact[k], line, sizeof line);
		out("#   sframebt  %s cfa %#lx %s\n", line, (unsigned long)c->sfb_cfa[k],
		    unw_cmp_src_name(c->sfb_src[k]));
	}
	for (int k = 0; k < c->n_unw; k++) {
		/* frame k's exactness as sframebt saw it where the PCs agree */
		int exact = k == 0 || (k < c->n_sfb && c->sfb_pc[k] == c->unw_pc[k] &&
				       c->sfb_exact[k]);
		sframe_format_frame(k, c->unw_pc[k], !exact, line, sizeof line);
		out("#   libunwind %s cfa %#lx\n", line, (unsigned long)unw_cmp_unw_cfa(c, k));
	}
}

/* A differing sample's signature: what went wrong and where. */
static void signature(const struct sample *s, enum unw_cmp_diff d, int at, char *buf,
		      size_t size)
{
	const struct unw_stacks *c = &s->cmp;
	char w[256] = "-";
	if (d == UNW_CMP_SFB_EARLIER || d == UNW_CMP_SFB_NOT_OUTER)
		where(c->st.stop_pc, 0, w, sizeof w);
	else if (at >= 0 && at < c->n_sfb)
		where(c->sfb_pc[at], !c->sfb_exact[at], w, sizeof w);
	else if (at >= 0 && at < c->n_unw)
		where(c->unw_pc[at], at > 0, w, sizeof w);
	snprintf(buf, size, "%s|%s|%s", unw_cmp_reason(d), sframe_bt_stop_name(c->st.stop), w);
}

static void sort_u32(uint32_t *a, unsigned n)
{
	/* shell sort: no allocation (glibc's qsort may allocate) */
	static const unsigned gaps[] = { 1750, 701, 301, 132, 57, 23, 10, 4, 1 };
	for (unsigned g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
		for (unsigned i = gaps[g]; i < n; i++) {
			uint32_t v = a[i];
			unsigned j = i;
			for (; j >= gaps[g] && a[j - gaps[g]] > v; j -= gaps[g])
				a[j] = a[j - gaps[g]];
			a[j] = v;
		}
}

static void read_file(const char *path, char *buf, size_t size, bool nul_to_space)
{
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (ssize_t k = 0; k < n; k++)
		if (buf[k] == '\n' || (nul_to_space && buf[k] == 0))
			buf[k] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = 0;
}

/* Compares and writes once per process.  Async-signal-safe enough for an
 * _exit() called from a signal handler: no allocation, no lock, no stdio. */
static void dump(const char *end)
{
	if (!samples || getpid() != sampled_pid)
		return; /* a vfork() child, sharing the parent's memory */
	if (atomic_exchange(&dumped, 1))
		return;
	atomic_store(&sampling, 0);
	int saved = errno;
	ofd = open_result(sampled_pid);
	if (ofd < 0) {
		errno = saved;
		return;
	}
	static char text[1024];
	out("pid %d ppid %d end %s\n", (int)sampled_pid, (int)getppid(), end);
	ssize_t n = readlink("/proc/self/exe", text, sizeof text - 1);
	text[n > 0 ? n : 0] = 0;
	out("exe %s\n", text);
	read_file("/proc/self/cmdline", text, 200, true);
	out("cmd %s\n", text);

	unsigned ns = atomic_load(&nsamples), dropped = 0;
	if (ns > MAXSAMPLES) {
		dropped = ns - MAXSAMPLES;
		ns = MAXSAMPLES;
	}
	unsigned equal = 0, differ = 0, incomplete = 0, explained = 0, stops[16] = { 0 };
	uint32_t *cs = NULL, *cu = NULL;
	if (ns) {
		cs = mmap(NULL, 2 * sizeof *cs * ns, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (cs == MAP_FAILED)
			cs = NULL;
		cu = cs ? cs + ns : NULL;
	}
	unsigned nc = 0, src[4] = { 0, 0, 0, 0 };
	for (unsigned i = 0; i < ns; i++) {
		const struct sample *s = &samples[i];
		if (!atomic_load_explicit(&s->done, memory_order_acquire)) {
			incomplete++;
			continue;
		}
		int at;
		enum unw_cmp_diff d = unw_cmp(&s->cmp, &at);
		stops[s->cmp.st.stop & 15]++;
		src[0] += (unsigned)s->cmp.st.frames_sframe;
		src[1] += (unsigned)s->cmp.st.frames_eh_frame;
		src[2] += (unsigned)s->cmp.st.frames_fp;
		src[3] += (unsigned)s->cmp.st.frames_signal;
		if (cs) {
			cs[nc] = s->ns_sfb;
			cu[nc] = s->ns_unw;
		}
		nc++;
		if (d == UNW_CMP_EQUAL) {
			equal++;
			continue;
		}
		differ++;
	}
	uint32_t med_s = 0, med_u = 0;
	if (cs && nc) {
		sort_u32(cs, nc);
		sort_u32(cu, nc);
		med_s = cs[nc / 2];
		med_u = cu[nc / 2];
	}
	out("samples %u equal %u differ %u incomplete %u dropped %u ticks %u idle_skipped %u "
	    "threads %u\n",
	    equal + differ, equal, differ, incomplete, dropped, atomic_load(&nticks),
	    atomic_load(&nidle_skipped), atomic_load(&nthreads));
	out("median_ns sfb %u unw %u\n", med_s, med_u);
	out("stops");
	for (int k = 0; k < 16; k++)
		if (stops[k])
			out(" %s %u", sframe_bt_stop_name(k), stops[k]);
	out("\n");
	out("sources sframe %u eh_frame %u fp %u signal %u\n", src[0], src[1], src[2], src[3]);
	for (unsigned i = 0; i < ns; i++) {
		const struct sample *s = &samples[i];
		int at;
		enum unw_cmp_diff d;
		if (!atomic_load_explicit(&s->done, memory_order_acquire) ||
		    (d = unw_cmp(&s->cmp, &at)) == UNW_CMP_EQUAL)
			continue;
		signature(s, d, at, text, sizeof text);
		out("d %s\n", text);
	}
	for (unsigned i = 0; i < ns; i++) {
		const struct sample *s = &samples[i];
		if (atomic_load_explicit(&s->done, memory_order_acquire))
			out("c %u %u\n", s->ns_sfb, s->ns_unw);
	}
	for (unsigned i = 0; i < ns && explained < EXPLAIN; i++) {
		const struct sample *s = &samples[i];
		int at;
		enum unw_cmp_diff d;
		if (!atomic_load_explicit(&s->done, memory_order_acquire) ||
		    (d = unw_cmp(&s->cmp, &at)) == UNW_CMP_EQUAL)
			continue;
		explain(i, s, d, at);
		explained++;
	}
	oflush();
	close(ofd);
	ofd = -1;
	if (cs)
		munmap(cs, 2 * sizeof *cs * ns);
	errno = saved;
}

/* ---- Process life ------------------------------------------------------- */

static void after_fork_child(void)
{
	if (!samples)
		return;
	/* the child's copy of the buffer holds the parent's samples; its
	 * timers were not inherited */
	sampled_pid = getpid();
	atomic_store(&nsamples, 0);
	atomic_store(&nticks, 0);
	atomic_store(&nidle_skipped, 0);
	atomic_store(&nthreads, 0);
	atomic_store(&dumped, 0);
	arm_thread();
}

__attribute__((constructor)) static void probe_init(void)
{
	real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	real_exit_fn = dlsym(RTLD_NEXT, "_exit");
	real_Exit_fn = dlsym(RTLD_NEXT, "_Exit");
	real_execve = dlsym(RTLD_NEXT, "execve");
	real_execv = dlsym(RTLD_NEXT, "execv");
	real_execvp = dlsym(RTLD_NEXT, "execvp");
	real_execvpe = dlsym(RTLD_NEXT, "execvpe");
	const char *dir = getenv("SFB_WORLD_OUT");
	if (!dir || !*dir || strlen(dir) >= sizeof outdir)
		return;
	strcpy(outdir, dir);
	const char *hz = getenv("SFB_WORLD_HZ");
	long rate = hz ? atol(hz) : 1000;
	if (rate < 1 || rate > 100000)
		rate = 1000;
	period_ns = 1000000000L / rate;
	/* SFB_WORLD_SIGNAL=rt: SIGRTMIN+5 instead of SIGPROF, for programs that
	 * take SIGPROF as a request to end (coreutils sort cleans up and
	 * re-raises it) */
	const char *sig = getenv("SFB_WORLD_SIGNAL");
	if (sig && !strcmp(sig, "rt"))
		tick_signal = SIGRTMIN + 5;
	void *p = mmap(NULL, sizeof *samples * MAXSAMPLES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (pthread_key_create(&disarm_key, disarm_thread) != 0) {
		munmap(p, sizeof *samples * MAXSAMPLES);
		return;
	}
	samples = p;
	sampled_pid = getpid();
	unw_cmp_warmup();
	sig_install(tick_signal, on_tick, SA_RESTART);
	pthread_atfork(NULL, NULL, after_fork_child);
	/* the probe's own constructor is not the program's: sampling starts
	 * as it returns */
	arm_thread();
	atomic_store(&sampling, 1);
}

__attribute__((destructor)) static void probe_fini(void)
{
	dump("exit");
}

/* ---- Interposed: thread creation, _exit, exec --------------------------- */

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *start_sampled(void *p)
{
	struct start st = *(struct start *)p;
	free(p);
	arm_thread();
	return st.fn(st.arg);
}

EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	if (!real_pthread_create)
		real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	struct start *st = samples ? malloc(sizeof *st) : NULL;
	if (!st)
		return real_pthread_create(th, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	int r = real_pthread_create(th, attr, start_sampled, st);
	if (r != 0)
		free(st);
	return r;
}

EXPORT void _exit(int status)
{
	dump("_exit");
	if (real_exit_fn)
		real_exit_fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT void _Exit(int status)
{
	dump("_exit");
	if (real_Exit_fn)
		real_Exit_fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

/* Before the image is replaced: the results, then the tick ignored, so
 * that a tick pending at execve() cannot kill the new image before its
 * constructor has installed the handler (pending signals survive execve(),
 * and an ignored one is discarded).  A failed exec leaves the tick ignored
 * and sampling stopped. */
static void before_exec(void)
{
	dump("exec");
	signal(tick_signal, SIG_IGN);
}

static void *next(void **fn, const char *name)
{
	if (!*fn)
		*fn = dlsym(RTLD_NEXT, name);
	return *fn;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	return ((int (*)(const char *, char *const[], char *const[]))next(
		(void **)&real_execve, "execve"))(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	before_exec();
	return ((int (*)(const char *, char *const[]))next((void **)&real_execv, "execv"))(path,
											   argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	before_exec();
	return ((int (*)(const char *, char *const[]))next((void **)&real_execvp, "execvp"))(
		file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	return ((int (*)(const char *, char *const[], char *const[]))next(
		(void **)&real_execvpe, "execvpe"))(file, argv, envp);
}

/* execl, execlp, execle: the arguments into an array on the stack (the
 * list ends with NULL; execle's environment follows it), then the v form */
#define LIST_TO_ARGV(arg, argv, envp)                                    \
	do {                                                             \
		va_list ap_;                                             \
		va_start(ap_, arg);                                      \
		size_t n_ = 1;                                           \
		while (va_arg(ap_, char *))                              \
			n_++;                                            \
		va_end(ap_);                                             \
		argv = __builtin_alloca((n_ + 1) * sizeof(char *));      \
		va_start(ap_, arg);                                      \
		argv[0] = (char *)(arg);                                 \
		for (size_t k_ = 1; k_ < n_; k_++)                       \
			argv[k_] = va_arg(ap_, char *);                  \
		argv[n_] = va_arg(ap_, char *);                          \
		envp = va_arg(ap_, char **);                             \
		va_end(ap_);                                             \
	} while (0)

EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv, **envp;
	LIST_TO_ARGV(arg, argv, envp);
	(void)envp;
	return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv, **envp;
	LIST_TO_ARGV(arg, argv, envp);
	(void)envp;
	return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp;
	LIST_TO_ARGV(arg, argv, envp);
	return execve(path, argv, envp);
}
