/* crash-handler: print a symbolized stack trace when the program crashes.
 *
 *   crash-handler [segv|abort|fpe|ill|bus|stack-smash|overflow|strlen]
 *
 * crashes on purpose inside nested functions of this program and of
 * libcrashdemo.so (examples/demo/), or inside libc (abort, strlen), and
 * prints, on stderr:
 *
 *   *** SIGSEGV (SEGV_MAPERR) fault address 0x10, pid 4242, tid 4242 ***
 *   #0 0x7f3a1c2b1256 in crash_leaf+0xa6 (/path/libcrashdemo.so+0x1256)
 *   #1 0x7f3a1c2b12ae in static_helper+0xe (/path/libcrashdemo.so+0x12ae)
 *   ...
 *   #4 0x55d0c3a1f2cd in main+0x6d (/path/crash-handler+0x22cd)
 *   #5 0x7f3a1c04624a in __libc_start_call_main+0x7a (/lib/.../libc.so.6+0x2724a)
 *   #6 0x7f3a1c046305 in __libc_start_main+0x85 (/lib/.../libc.so.6+0x27305)
 *   #7 0x55d0c3a1f4a1 in _start+0x21 (/path/crash-handler+0x24a1)
 *   # stopped: outermost at 0x55d0c3a1f4a1
 *
 * then dies from the same signal, exactly as it would have without the
 * handler: same exit status, same core dump.  "# stopped" says why the
 * walk ended: "outermost" is the natural end, _start (or clone3 on other
 * threads).  Frames without .sframe (libc, on most systems) are unwound
 * with their .eh_frame.  A stripped library's static functions (libc's
 * __libc_start_call_main) are named from its detached debug file when one
 * is installed (Debian: libc6-dbg), else "??".
 *
 * The handler part (between the "copy from here" and "to here" lines) is
 * meant to be copied into a program: call crash_handler_install() early in
 * main(), and crash_handler_thread_init() at the start of every other
 * thread.  It needs only <sframebt/backtrace.h> and -lsframebt, and the
 * program built with -Wa,--gsframe (GCC/binutils 2.40 or later) so that
 * the walk can go beyond the crashing function. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backtrace.h"
#include "demo/crashdemo.h"

/* ======================= copy from here ============================== */

/* A signal handler may only call async-signal-safe functions: no printf,
 * no malloc (the crash may have happened inside malloc, holding its lock).
 * So the header line is built by hand in a stack buffer and written with
 * write(2); the library's report functions are async-signal-safe. */
struct line {
	char buf[256];
	size_t len;
};

static void put_str(struct line *l, const char *s)
{
	while (*s && l->len < sizeof l->buf - 1)
		l->buf[l->len++] = *s++;
}

static void put_num(struct line *l, uintptr_t v, unsigned base)
{
	char tmp[24], *p = tmp + sizeof tmp;
	*--p = '\0';
	do
		*--p = "0123456789abcdef"[v % base];
	while (v /= base);
	if (base == 16)
		put_str(l, "0x");
	put_str(l, p);
}

static void write_line(const struct line *l)
{
	const char *p = l->buf;
	size_t n = l->len;
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, p, n);
		if (w <= 0)
			return; /* nowhere to complain to */
		p += w;
		n -= (size_t)w;
	}
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	default: return "signal";
	}
}

/* The most common si_code values; the number is printed for the rest. */
static const char *code_name(int sig, int code)
{
	if (code == SI_USER) return "SI_USER";
	if (code == SI_TKILL) return "SI_TKILL";
	switch (sig) {
	case SIGSEGV:
		return code == SEGV_MAPERR ? "SEGV_MAPERR"
		     : code == SEGV_ACCERR ? "SEGV_ACCERR" : NULL;
	case SIGBUS:
		return code == BUS_ADRALN ? "BUS_ADRALN"
		     : code == BUS_ADRERR ? "BUS_ADRERR"
		     : code == BUS_OBJERR ? "BUS_OBJERR" : NULL;
	case SIGILL:
		return code == ILL_ILLOPC ? "ILL_ILLOPC"
		     : code == ILL_ILLOPN ? "ILL_ILLOPN" : NULL;
	case SIGFPE:
		return code == FPE_INTDIV ? "FPE_INTDIV"
		     : code == FPE_FLTDIV ? "FPE_FLTDIV" : NULL;
	}
	return NULL;
}

/* The thread id that is writing a report, or 0. */
static atomic_int crash_reporter;

static void crash_handler(int sig, siginfo_t *si, void *ucontext)
{
	/* Several threads can crash at once.  The first one reports; the
	 * others wait (boundedly: the first one might hang) so that they do
	 * not kill the process before the report is out.  A thread that
	 * crashes again inside its own report falls through: SA_RESETHAND
	 * has already restored the default action for this signal. */
	int me = gettid(), none = 0;
	if (!atomic_compare_exchange_strong(&crash_reporter, &none, me) && none != me) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		for (int i = 0; i < 100 && atomic_load(&crash_reporter); i++)
			nanosleep(&ts, NULL);
	}

	struct line l = { .len = 0 };
	const char *code = code_name(sig, si->si_code);
	put_str(&l, "*** ");
	put_str(&l, signal_name(sig));
	put_str(&l, " (");
	if (code)
		put_str(&l, code);
	else
		put_num(&l, (uintptr_t)(unsigned)si->si_code, 10);
	put_str(&l, ")");
	if (si->si_code > 0) {
		/* Sent by the kernel for a fault: si_addr is meaningful. */
		put_str(&l, " fault address ");
		put_num(&l, (uintptr_t)si->si_addr, 16);
	} else {
		/* kill(), raise(), abort(): who sent it. */
		put_str(&l, " sent by pid ");
		put_num(&l, (uintptr_t)si->si_pid, 10);
	}
	put_str(&l, ", pid ");
	put_num(&l, (uintptr_t)getpid(), 10);
	put_str(&l, ", tid ");
	put_num(&l, (uintptr_t)me, 10);
	put_str(&l, " ***\n");
	write_line(&l);

	/* Walk from the interrupted context (not from here: the frames of
	 * this handler are of no interest), symbolize each frame and end
	 * with "# stopped: <reason>".  Needs about 20 KiB of stack. */
	sframe_write_crash_report(ucontext, STDERR_FILENO);

	/* Die from the same signal with the default action, so that the
	 * exit status, the core dump and a parent's waitpid() all see the
	 * original crash.  The signal is blocked while its handler runs:
	 * unblock it, or raise() would only leave it pending.  (Returning
	 * would also work for a genuine fault, which re-executes and faults
	 * again, but not for abort() or kill(), so raise() it is.) */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig); /* not reached */
}

/* Give the calling thread an alternate signal stack, so that the handler
 * can run even when the crash is a stack overflow (the thread's own stack
 * is then unusable).  Each thread needs its own.  The stack is never
 * freed: a thread may crash at any time until it exits.  Returns 0, or -1
 * if memory is short. */
int crash_handler_thread_init(void)
{
	/* The report needs ~20 KiB; SIGSTKSZ is what the kernel itself needs
	 * for the signal frame (a run-time value on recent glibc). */
	size_t size = 64 * 1024 + SIGSTKSZ;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	stack_t ss = { .ss_sp = p, .ss_size = size, .ss_flags = 0 };
	return sigaltstack(&ss, NULL);
}

/* Install the crash handler for the fatal signals, and an alternate
 * signal stack for the calling thread.  Call from main() before starting
 * threads.  Returns 0 on success. */
int crash_handler_install(void)
{
	static const int signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

	/* Find the loaded objects and validate their .sframe sections now,
	 * in normal context, rather than at crash time.  Optional. */
	sframe_backtrace_warmup();

	if (crash_handler_thread_init() != 0)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = crash_handler;
	/* SA_ONSTACK: run on the alternate stack.  SA_SIGINFO: get the
	 * fault address and the ucontext to walk from.  SA_RESETHAND: a
	 * crash inside the handler itself kills the process instead of
	 * looping. */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
		if (sigaction(signals[i], &sa, NULL) != 0)
			return -1;
	return 0;
}

/* ========================= to here =================================== */

/* The demo.  noinline, and work after each call, keep -O2 from inlining
 * the functions or turning the calls into jumps, so the report shows each
 * one; see examples/demo/libcrashdemo.c. */
volatile int demo_sink;

/* strlen: a fault inside libc, whose code has no .sframe: the walk starts
 * in libc's strlen and leaves it through its .eh_frame. */
enum { CRASH_IN_LIBC = 1000 };
static const char *volatile bad_string = (const char *)16;

static __attribute__((noinline)) void measure_string(void)
{
	demo_sink += (int)strlen(bad_string); /* SIGSEGV, in libc */
	demo_sink++;
}

static __attribute__((noinline)) void run_scenario(int how)
{
	if (how == CRASH_IN_LIBC)
		measure_string();
	else
		crashdemo_run(how); /* into libcrashdemo.so */
	demo_sink++;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		[CRASH_SEGV] = "segv",   [CRASH_ABORT] = "abort",
		[CRASH_FPE] = "fpe",     [CRASH_ILL] = "ill",
		[CRASH_BUS] = "bus",     [CRASH_STACK_SMASH] = "stack-smash",
		[CRASH_OVERFLOW] = "overflow",
	};
	const char *want = argc > 1 ? argv[1] : "segv";
	int how = strcmp(want, "strlen") == 0 ? CRASH_IN_LIBC : -1;
	for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
		if (strcmp(want, names[i]) == 0)
			how = i;
	if (how < 0 || argc > 2) {
		fprintf(stderr, "usage: %s [segv|abort|fpe|ill|bus|stack-smash|overflow|strlen]\n",
			argv[0]);
		return 2;
	}
	if (crash_handler_install() != 0) {
		perror("crash_handler_install");
		return 1;
	}
	run_scenario(how);
	demo_sink++;
	fprintf(stderr, "%s: did not crash?\n", argv[0]);
	return 1;
}
