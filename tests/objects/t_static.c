/* Crashes and samples through glibc in a static program, whose libc code
 * has .eh_frame but, unless linked --eh-frame-hdr, no search table: the
 * index sframebt builds at load (objects/main_eh.h) must walk it whole.
 * tests/objects/build.mk builds this file with gcc -static, with and
 * without -Wl,--eh-frame-hdr, and -static-pie; static_cxx.cc adds an
 * uncaught C++ exception.  Not musl: Debian's musl libc.a has no CFI at
 * all (no FDE in any member), so a walk there stops at the first libc
 * frame; and libgcc_eh, the oracle here, needs glibc's _dl_find_object
 * and links against no musl.  tests/port/t_musl_static.c checks that
 * stop instead.
 *
 * With no argument the program runs itself once per case, each in a
 * child that crashes: abort(), a failed assert(), strlen(NULL), a qsort()
 * comparator that faults; and SIGPROF samples of a thread sorting and
 * copying through libc.  In the handler, on the same context,
 * sframe_backtrace_ex(uc) and libgcc's _Unwind_Backtrace() (libgcc_eh,
 * which finds this .eh_frame through crtbegin's __register_frame_info)
 * must give the same frames, through main to _start, where the walk
 * ends at the outermost frame.
 *
 * With report-CASE (tests/objects/t_static_report.sh) the case's crash is
 * reported by the library's crash handler, sframe_install_crash_handler(),
 * and libgcc's frames of the same context are written beside it.
 *
 * Built with TABLE_FULL and linked with 17000 functions of its own that
 * have CFI (more FDEs than objects/main_eh.h's table holds, and before
 * libc's in the section), the program checks the bound instead: abort()'s
 * walk, in libc code whose FDEs were left out, stops with
 * eh-frame-unindexed. */
#define _GNU_SOURCE
#include <assert.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "gcc_compare.h"
#include "sig_install.h"
#include "uc_regs.h"

extern char _start[];
static const char *mode = "";
static volatile unsigned sink;
static uintptr_t main_ra;

#define RA() ((uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))

/* Whole: libgcc's frames, main's return address among ours, the end in
 * _start. */
static void check_whole(const char *how, const struct walk *w)
{
	bool same = walk_same(w), has_main = false;
	for (int i = 0; i < w->n; i++)
		has_main |= w->pc[i] == main_ra;
	CHECK(same, "%s %s: %d frames, the same as libgcc's _Unwind_Backtrace", mode, how, w->n);
	CHECK(has_main && w->stop == SFRAME_BT_STOP_OUTERMOST && w->n > 0 &&
		      w->pc[w->n - 1] - (uintptr_t)_start < 64,
	      "%s %s: through main to the outermost frame, in _start (%s)", mode, how,
	      sframe_bt_stop_name(w->stop));
	if (!same || !has_main)
		walk_print(w);
}

static struct walk crash;

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	walk_now(uc, &crash);
#ifdef TABLE_FULL
	CHECK(crash.stop == SFRAME_BT_STOP_EH_FRAME_UNINDEXED && crash.n >= 1 &&
		      crash.pc[0] == (uintptr_t)UC_PC((ucontext_t *)uc),
	      "%s, more FDEs than the table holds: stopped at %#lx in libc with %s after %d frame",
	      mode, (unsigned long)crash.pc[0], sframe_bt_stop_name(crash.stop), crash.n);
	_exit(check_failures ? 1 : 0);
#endif
	char how[32];
	snprintf(how, sizeof how, "(%s)", strsignal(sig));
	check_whole(how, &crash);
	_exit(check_failures ? 1 : 0);
}

/* Mode report-CASE: the library's crash handler reports the crash.  It is
 * installed first; on_report, installed over it, writes libgcc's frames
 * of the same context to stdout, "# libgcc #N 0xPC" from the context's
 * PC on, then hands the signal to it (same signal, siginfo and context),
 * which writes its report to stderr and lets the process die of the
 * signal.  t_static_report.sh compares the two, frame by frame. */
static struct sigaction lib_handler[NSIG];

static void on_report(int sig, siginfo_t *si, void *uc)
{
	walk_now(uc, &crash);
	uintptr_t pc = (uintptr_t)UC_PC((ucontext_t *)uc);
	int from = 0;
	while (from < crash.n_gcc && crash.gcc[from] != pc)
		from++;
	char line[64];
	for (int i = from; i < crash.n_gcc; i++) {
		int k = snprintf(line, sizeof line, "# libgcc #%d %#lx\n", i - from,
				 (unsigned long)crash.gcc[i]);
		if (write(STDOUT_FILENO, line, (size_t)k) != k)
			break;
	}
	lib_handler[sig].sa_sigaction(sig, si, uc);
}

/* ---- The cases ----------------------------------------------------------- */

static int *volatile nowhere;

static int cmp_fault(const void *a, const void *b)
{
	/* Faults on the first comparison, called from inside libc's sort. */
	return *nowhere + *(const int *)a - *(const int *)b;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

#define SAMPLES 20
static struct walk samples[SAMPLES];
static volatile sig_atomic_t nsamples;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	if (nsamples < SAMPLES)
		walk_now(uc, &samples[nsamples++]);
}

/* Sorting and copying through libc until enough samples were taken. */
static void through_libc(void)
{
	enum { N = 1 << 16 };
	static int v[N];
	static char a[1 << 20], b[1 << 20];
	memset(a, 'x', sizeof a - 1);
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	for (int round = 0; nsamples < SAMPLES && round < 20000; round++) {
		for (int i = 0; i < N; i++)
			v[i] = (int)((unsigned)i * 2654435761u >> 7);
		qsort(v, N, sizeof v[0], cmp_int);
		memcpy(b, a, sizeof a);
		sink += (unsigned)strlen(b);
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	/* A sample in an IFUNC's PLT stub (.iplt: memcpy, strlen), which has
	 * no CFI, stops there for both; every other one reaches _start. */
	int same = 0, whole = 0;
	for (int i = 0; i < nsamples; i++) {
		bool ok = walk_same(&samples[i]);
		if (!ok && same == i)
			walk_print(&samples[i]);
		same += ok;
		whole += ok && samples[i].stop == SFRAME_BT_STOP_OUTERMOST;
	}
	CHECK(nsamples == SAMPLES && same == nsamples && whole >= nsamples / 2,
	      "%s: %d of %d SIGPROF samples the same as libgcc's, %d whole to _start", mode,
	      same, (int)nsamples, whole);
}

__attribute__((noinline)) static void run_case(const char *m)
{
	static int two[2] = { -1, 1 };
	char *volatile null = NULL;
	if (!strcmp(m, "abort"))
		abort();
	else if (!strcmp(m, "assert"))
		assert(sink == 12345);
	else if (!strcmp(m, "strlen"))
		sink = (unsigned)strlen(null);
	else if (!strcmp(m, "qsort"))
		qsort(two, 2, sizeof two[0], cmp_fault);
	else if (!strcmp(m, "samples"))
		through_libc();
}

/* A few frames of our own between main and the case. */
__attribute__((noinline)) static void chain(int depth, const char *m)
{
	if (depth)
		chain(depth - 1, m);
	else
		run_case(m);
	sink++;
}

#if defined(__SANITIZE_ADDRESS__)
#define T_STATIC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_STATIC_ASAN 1
#endif
#endif

#ifdef TABLE_FULL
static const char *const cases[] = { "abort" };
#elif defined(T_STATIC_ASAN)
/* ASan's strlen() reports a NULL argument itself, before libc's faults. */
static const char *const cases[] = { "abort", "assert", "qsort", "samples" };
#else
static const char *const cases[] = { "abort", "assert", "strlen", "qsort", "samples" };
#endif

int main(int argc, char **argv)
{
	main_ra = RA();
	if (argc > 1 && !strncmp(argv[1], "report-", 7)) {
		mode = argv[1] + 7;
		sframe_install_crash_handler(STDERR_FILENO);
		int sigs[] = { SIGABRT, SIGSEGV, SIGBUS };
		for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
			sigaction(sigs[i], NULL, &lib_handler[sigs[i]]);
			sig_install(sigs[i], on_report, SA_ONSTACK);
		}
		chain(4, mode);
		return 1;
	}
	if (argc > 1) {
		mode = argv[1];
		sig_install(SIGPROF, on_prof, SA_RESTART);
		int sigs[] = { SIGABRT, SIGSEGV, SIGBUS };
		for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			sig_install(sigs[i], on_crash, SA_RESETHAND);
		chain(4, mode);
		CHECK_DONE();
	}
	/* Each case in a child, which prints its own lines. */
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], cases[i], (char *)NULL);
			_exit(127);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child exits 0 (%#x)",
		      cases[i], status);
	}
	CHECK_DONE();
}
