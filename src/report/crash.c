/* The one-call crash handler (backtrace.h: sframe_install_crash_handler).
 * How it reports and where the signal goes afterwards: docs/DESIGN.md,
 * "Crash handler".  It runs on the crashing thread, maybe inside malloc or
 * with its stack overflowed: only async-signal-safe calls, the header
 * built on the stack and written with write(2). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backtrace.h"
#include "base/entry.h"
#include "base/textbuf.h"

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define NSIG_CRASH (sizeof crash_signals / sizeof crash_signals[0])

/* Written in normal context before the handler is installed (sigaction()
 * orders them), read by the handler. */
static struct sigaction previous[NSIG_CRASH];
static _Atomic int report_fd = -1;
/* The thread id writing a report, or 0. */
static _Atomic long reporter;

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

/* The common si_code values; the number is printed for the others. */
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

static void write_header(int fd, int sig, const siginfo_t *si, long tid)
{
	char buf[256];
	struct sfb_text l = { buf, 0, sizeof buf };
	const char *code = code_name(sig, si->si_code);
	sfb_put(&l, "*** ");
	sfb_put(&l, signal_name(sig));
	sfb_put(&l, " (");
	if (code)
		sfb_put(&l, code);
	else
		sfb_put_dec(&l, (long)(unsigned)si->si_code);
	sfb_put(&l, ")");
	if (si->si_code > 0) { /* a fault: si_addr is meaningful */
		sfb_put(&l, " fault address ");
		sfb_put_hex(&l, (uintptr_t)si->si_addr);
	} else { /* kill(), raise(), abort(): who sent it */
		sfb_put(&l, " sent by pid ");
		sfb_put_dec(&l, (long)si->si_pid);
	}
	sfb_put(&l, ", pid ");
	sfb_put_dec(&l, (long)getpid());
	sfb_put(&l, ", tid ");
	sfb_put_dec(&l, tid);
	sfb_put(&l, " ***\n");
	sfb_write_all(fd, buf, l.len);
}

/* Give sig the disposition `to` and raise it again.  The signal is
 * blocked while its handler runs: unblock it, or raise() would only leave
 * it pending. */
static void raise_again(int sig, const struct sigaction *to)
{
	sigaction(sig, to, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	SFB_ENTRY;
	struct sigaction next;
	memset(&next, 0, sizeof next);
	next.sa_handler = SIG_DFL;
	sigemptyset(&next.sa_mask);

	/* Several threads can crash at once.  The first one reports; the
	 * others wait, boundedly (the first might hang), so that they do not
	 * end the process before the report is out. */
	long me = syscall(SYS_gettid), none = 0;
	if (atomic_load(&reporter) == me) { /* crashed inside its own report */
		raise_again(sig, &next);
		return;
	}
	if (!atomic_compare_exchange_strong(&reporter, &none, me)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		for (int i = 0; i < 100 && atomic_load(&reporter); i++)
			nanosleep(&ts, NULL);
		atomic_store(&reporter, me);
	}
	int fd = atomic_load(&report_fd);
	write_header(fd, sig, si, me);
	sframe_write_crash_report(uc, fd);

	size_t i = 0;
	while (i < NSIG_CRASH && crash_signals[i] != sig)
		i++;
	bool chained = i < NSIG_CRASH && previous[i].sa_handler != SIG_DFL &&
		       previous[i].sa_handler != SIG_IGN;
	if (chained)
		next = previous[i];
	atomic_store(&reporter, 0);
	if (chained && si->si_code > 0) {
		sigaction(sig, &next, NULL);
		return; /* the fault recurs, for the previous handler */
	}
	raise_again(sig, &next);
}

SFRAMEBT_API int sframe_crash_handler_thread_init(void)
{
	SFB_ENTRY;
	stack_t old;
	if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE) &&
	    old.ss_size >= SFRAME_CRASH_STACK_SIZE)
		return 0; /* the thread's own, large enough */
	/* Never freed: the thread may crash at any moment until it exits. */
	size_t size = SFRAME_CRASH_STACK_SIZE + SIGSTKSZ;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	stack_t ss = { .ss_sp = p, .ss_size = size, .ss_flags = 0 };
	if (sigaltstack(&ss, NULL) != 0) {
		munmap(p, size);
		return -1;
	}
	return 0;
}

SFRAMEBT_API int sframe_install_crash_handler(int fd)
{
	SFB_ENTRY;
	if (fd < 0)
		return -1;
	atomic_store(&report_fd, fd);
	sframe_backtrace_warmup();
	if (sframe_crash_handler_thread_init() != 0)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = crash_handler;
	/* SA_ONSTACK: on the alternate stack, so that a stack overflow can
	 * be reported. */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIG_CRASH; i++) {
		struct sigaction old;
		if (sigaction(crash_signals[i], NULL, &old) != 0)
			return -1;
		/* Installing twice must not chain the handler to itself. */
		if (!((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == crash_handler))
			previous[i] = old;
		if (sigaction(crash_signals[i], &sa, NULL) != 0)
			return -1;
	}
	return 0;
}
