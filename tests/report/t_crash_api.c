/* sframe_install_crash_handler(): each case runs in a child process
 * whose report goes to a file; the parent checks the file and how the
 * child ended.  Ground truth: the child's own fault address, the names of
 * its functions (nm-free: this program's symbols are in its .symtab), and
 * the kernel's account of the child's end (waitpid).
 * - With nothing installed before, the child dies from the signal
 *   (SIGSEGV for a fault, SIGABRT for abort()) after a complete report.
 * - A handler installed before gets the signal afterwards: for a fault,
 *   the genuine fault (its si_addr and si_code); for abort(), SIGABRT.
 * - Installing twice changes the file and does not chain the handler to
 *   itself.
 * - Two threads faulting at once: one complete report, then the process
 *   dies from SIGSEGV (the other thread's fault must not end it first).
 * - A stack overflow on a thread that called
 *   sframe_crash_handler_thread_init() is reported from its alternate
 *   stack. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"

static volatile int sink;
static int *volatile bad_pointer = (int *)16;

__attribute__((noinline)) static void fault_here(void)
{
	sink += *bad_pointer; /* SIGSEGV, fault address 0x10 */
	sink++;
}

__attribute__((noinline)) static void abort_here(void)
{
	abort();
}

/* The previous handlers: say what they got, then end the child with a
 * status of their own. */
static void previous_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	char msg[] = "previous handler: SIGSEGV at 0x10\n";
	if (sig == SIGSEGV && si->si_code == SEGV_MAPERR && si->si_addr == (void *)16)
		(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	_exit(42);
}

static void previous_abrt(int sig)
{
	_exit(sig == SIGABRT ? 43 : 44);
}

/* Reads the whole report file. */
static char *slurp(int fd)
{
	static char buf[1 << 16];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* A report that starts with the header and whose walk reached the
 * natural end through `fn` and then `root`. */
static bool complete_to(const char *r, const char *header, const char *fn, const char *root)
{
	char want[64], below[64];
	snprintf(want, sizeof want, " in %s+0x", fn);
	snprintf(below, sizeof below, " in %s+0x", root);
	const char *h = strstr(r, header), *f = h ? strstr(h, want) : NULL;
	const char *m = f ? strstr(f, below) : NULL;
	return r == h && m && strstr(m, "# stopped: outermost at 0x");
}

static bool complete(const char *r, const char *header, const char *fn)
{
	return complete_to(r, header, fn, "main");
}

static pthread_barrier_t both;

static void *fault_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&both);
	fault_here();
	return NULL;
}

static volatile int forever = 1;

__attribute__((noinline)) static int recurse(int n)
{
	volatile char pad[512];
	pad[0] = (char)n;
	if (!forever)
		return 0;
	return recurse(n + 1) + pad[0];
}

static void *overflow_thread(void *arg)
{
	(void)arg;
	if (sframe_crash_handler_thread_init() != 0)
		_exit(3);
	return (void *)(intptr_t)recurse(0);
}

enum kind { PLAIN_FAULT, PLAIN_ABORT, CHAIN_FAULT, CHAIN_ABORT, TWICE, TWO_THREADS, OVERFLOW };

/* The child: install, crash; never returns. */
static void child(enum kind k, int fd, int fd2)
{
	/* Nothing installed before, but what each case installs: the
	 * defaults (an ASan build has installed its own handlers). */
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	if (k == CHAIN_FAULT) {
		sa.sa_sigaction = previous_segv;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
	} else if (k == CHAIN_ABORT) {
		sa.sa_handler = previous_abrt;
		sigaction(SIGABRT, &sa, NULL);
	}
	if (sframe_install_crash_handler(fd) != 0)
		_exit(2);
	if (k == TWICE && sframe_install_crash_handler(fd2) != 0)
		_exit(2);
	if (k == TWO_THREADS) {
		pthread_t t[2];
		pthread_barrier_init(&both, NULL, 2);
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, fault_thread, NULL);
		pthread_join(t[0], NULL);
	} else if (k == OVERFLOW) {
		pthread_t t;
		pthread_create(&t, NULL, overflow_thread, NULL);
		pthread_join(t, NULL);
	} else if (k == PLAIN_ABORT || k == CHAIN_ABORT) {
		abort_here();
	} else {
		fault_here();
	}
	_exit(1); /* did not crash */
}

/* Runs one case; returns the wait status and leaves the report (and the
 * second file's, for TWICE) in r / r2. */
static int run(enum kind k, char **r, char **r2)
{
	char p1[] = "/tmp/sfb-crash-XXXXXX", p2[] = "/tmp/sfb-crash-XXXXXX";
	int fd = mkstemp(p1), fd2 = mkstemp(p2), status = 0;
	unlink(p1);
	unlink(p2);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, STDERR_FILENO); /* previous_segv writes there */
		child(k, fd, fd2);
	}
	waitpid(pid, &status, 0);
	static char a[1 << 16], b[1 << 16];
	strcpy(a, slurp(fd));
	strcpy(b, slurp(fd2));
	*r = a;
	*r2 = b;
	close(fd);
	close(fd2);
	return status;
}

/* A failed check shows the report, as comment lines. */
static void show(bool passed, const char *r)
{
	if (passed)
		return;
	for (const char *p = r; *p;) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);
		printf("#   %.*s\n", n, p);
		p += n + (e != NULL);
	}
}

static bool killed_by(int status, int sig)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

int main(void)
{
	char *r, *r2;
	int st;
	bool c;

	st = run(PLAIN_FAULT, &r, &r2);
	CHECK(killed_by(st, SIGSEGV), "fault: the child dies from SIGSEGV (status %#x)", st);
	c = complete(r, "*** SIGSEGV (SEGV_MAPERR) fault address 0x10, pid ", "fault_here");
	CHECK(c, "fault: the header, then fault_here, main, outermost");
	show(c, r);

	st = run(PLAIN_ABORT, &r, &r2);
	CHECK(killed_by(st, SIGABRT), "abort: the child dies from SIGABRT (status %#x)", st);
	c = complete(r, "*** SIGABRT (SI_TKILL) sent by pid ", "abort_here");
	CHECK(c, "abort: the header, then abort_here, main, outermost");
	show(c, r);

	st = run(CHAIN_FAULT, &r, &r2);
	/* Under valgrind the child's exit status is valgrind's: its fault is
	 * an error (make test-valgrind: --error-exitcode=99). */
	CHECK(WIFEXITED(st) && (WEXITSTATUS(st) == 42 || (under_valgrind() && WEXITSTATUS(st) == 99)),
	      "fault, handler installed before: it ran last (status %#x)", st);
	c = strstr(r, "# stopped: outermost") &&
	    strstr(strstr(r, "# stopped: outermost"), "previous handler: SIGSEGV at 0x10\n");
	CHECK(c, "fault, handler installed before: the report, then the genuine fault "
		 "(SEGV_MAPERR at 0x10) to it");
	show(c, r);
	CHECK(complete(r, "*** SIGSEGV (SEGV_MAPERR) fault address 0x10", "fault_here"),
	      "fault, handler installed before: the report is complete");

	st = run(CHAIN_ABORT, &r, &r2);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 43,
	      "abort, handler installed before: it got SIGABRT after the report (status %#x)", st);
	c = complete(r, "*** SIGABRT (SI_TKILL) sent by pid ", "abort_here");
	CHECK(c, "abort, handler installed before: the report is complete");
	show(c, r);

	st = run(TWICE, &r, &r2);
	CHECK(killed_by(st, SIGSEGV),
	      "installed twice: the child dies from SIGSEGV, no loop (status %#x)", st);
	CHECK(r[0] == '\0' && complete(r2, "*** SIGSEGV (SEGV_MAPERR)", "fault_here"),
	      "installed twice: one report, in the second call's file (first: %zu bytes)",
	      strlen(r));

	int bad = 0;
	for (int i = 0; i < 20; i++) {
		st = run(TWO_THREADS, &r, &r2);
		if (!killed_by(st, SIGSEGV) ||
		    !complete_to(r, "*** SIGSEGV (SEGV_MAPERR) fault address 0x10", "fault_here",
				 "fault_thread")) {
			if (!bad) {
				printf("# status %#x, report:\n", st);
				show(false, r);
			}
			bad++;
		}
	}
	CHECK(bad == 0, "two threads faulting at once, 20 times: a complete first report, "
			"then death by SIGSEGV (%d bad)", bad);

	st = run(OVERFLOW, &r, &r2);
	CHECK(killed_by(st, SIGSEGV), "overflow on a thread: the child dies from SIGSEGV (status %#x)", st);
	c = strstr(r, "*** SIGSEGV (SEGV_") && strstr(r, " in recurse+0x") && strstr(r, "# stopped: ");
	CHECK(c, "overflow on a thread: reported from its alternate stack");
	show(c, r);
	CHECK_DONE();
}
