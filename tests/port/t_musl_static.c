/* Static programs on musl (tests/port/run.sh: musl-gcc -static, with and
 * without -Wl,--eh-frame-hdr, and -static-pie).  Debian's musl libc.a
 * carries no CFI at all: no .eh_frame, no SFrame (readelf
 * --debug-dump=frames finds no FDE in any of its members; crt1.o's
 * _start_c has .debug_frame only, which is not loaded).  So no walk can
 * go through musl's code: what must hold is that a walk reaching it stops
 * there with its own reason, no-unwind-info, at the libc frame, having
 * given every frame before it right and none after it; and that the
 * program's own frames are whole, down to main's return address into
 * libc's start-up code.  (libgcc's unwinder cannot serve as the oracle
 * here: libgcc_eh needs _dl_find_object, which musl lacks, and would face
 * the same missing CFI.)
 *
 * Ground truth: the program's own functions record their return
 * addresses (__builtin_return_address, computed by the compiler from its
 * frame layout); the crash's context gives the PC; and the program's
 * functions lie in two sections of their own, "sfb_prog" and "sfb_cmp"
 * (the comparator), whose bounds (__start_sfb_prog, __stop_sfb_prog ...)
 * tell a PC in the program from one in libc.
 *   1. A chain in the program, walked from its innermost function, on the
 *      main thread (down to main) and on another (down to its start
 *      routine, called by musl's thread start-up).
 *   2. SIGPROF samples: of a chain spinning in the program, and of a loop
 *      through libc's qsort (with a comparator of the program), memcpy
 *      and strlen.
 *   3. Crashes, each in a child: abort(), a failed assert(),
 *      strlen(NULL), a qsort() comparator that faults; walked from the
 *      handler and written by sframe_write_crash_report(), whose report
 *      must end with "# stopped: no-unwind-info at" the libc frame.
 * Built -fomit-frame-pointer -fno-optimize-sibling-calls: only SFrame
 * rows (or .eh_frame) can unwind the program's frames. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "sig_install.h"
#include "uc_regs.h"

#ifdef __GLIBC__
#error "t_musl_static checks what holds for musl's libc.a"
#endif

#define PROG __attribute__((noinline, section("sfb_prog")))
#define RA() ((uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define NF 64

/* The comparator called through qsort() in a section of its own. */
#define CMP __attribute__((noinline, section("sfb_cmp")))

extern char __start_sfb_prog[], __stop_sfb_prog[], __start_sfb_cmp[], __stop_sfb_cmp[];
static bool in_cmp(uintptr_t pc)
{
	return pc >= (uintptr_t)__start_sfb_cmp && pc < (uintptr_t)__stop_sfb_cmp;
}
static bool in_prog(uintptr_t pc)
{
	return in_cmp(pc) || (pc >= (uintptr_t)__start_sfb_prog && pc < (uintptr_t)__stop_sfb_prog);
}

static uintptr_t main_ra;
static volatile unsigned sink;

struct walk {
	int n;
	struct sframe_bt_status st;
	struct sframe_bt_frame f[NF];
};

static inline __attribute__((always_inline)) void walk(const void *uc, struct walk *w)
{
	memset(w, 0, sizeof *w);
	w->n = sframe_backtrace_ex(uc, w->f, NF, 0, &w->st);
}

static void print(const struct walk *w)
{
	for (int i = 0; i < w->n; i++)
		printf("#   %2d %#lx%s\n", i, (unsigned long)w->f[i].pc,
		       in_prog(w->f[i].pc) ? "" : " (libc)");
	printf("#   stopped: %s at %#lx\n", sframe_bt_stop_name(w->st.stop),
	       (unsigned long)w->st.stop_pc);
}

/* The walk's frames from the second on are want[0..n), the last of them
 * in libc, where it stops with no-unwind-info. */
static bool frames_then_libc(const struct walk *w, const uintptr_t *want, int n)
{
	if (w->n != n + 1 || w->st.stop != SFRAME_BT_STOP_NO_UNWIND_INFO ||
	    w->st.stop_pc != want[n - 1] || in_prog(want[n - 1]))
		return false;
	for (int i = 0; i < n; i++)
		if (w->f[i + 1].pc != want[i])
			return false;
	return true;
}

/* A walk from a PC in libc: that one frame, and the stop there. */
static bool stops_at_once(const struct walk *w, uintptr_t pc)
{
	return !in_prog(pc) && w->n == 1 && w->f[0].pc == pc &&
	       w->st.stop == SFRAME_BT_STOP_NO_UNWIND_INFO && w->st.stop_pc == pc;
}

/* ---- 1. A chain in the program ------------------------------------------ */

static volatile uintptr_t chain_ra[3];
static struct walk chain_walk;

PROG static void chain3(void)
{
	chain_ra[2] = RA();
	walk(NULL, &chain_walk);
	BARRIER();
}
PROG static void chain2(void) { chain_ra[1] = RA(); chain3(); BARRIER(); }
PROG static void chain1(void) { chain_ra[0] = RA(); chain2(); BARRIER(); }

static void test_chain(void)
{
	chain1();
	uintptr_t want[] = { chain_ra[2], chain_ra[1], chain_ra[0], main_ra };
	CHECK(chain_walk.n >= 1 && in_prog(chain_walk.f[0].pc) &&
		      frames_then_libc(&chain_walk, want, 4),
	      "chain: %d frames, chain3 < chain2 < chain1 < main < libc's start-up, where it "
	      "stops with %s", chain_walk.n, sframe_bt_stop_name(chain_walk.st.stop));
	if (chain_walk.n != 5)
		print(&chain_walk);
}

/* On a thread: its start routine's caller is musl's, without CFI. */
static volatile uintptr_t thread_ra[2];
static struct walk thread_walk;

PROG static void thread_leaf(void)
{
	thread_ra[1] = RA();
	walk(NULL, &thread_walk);
	BARRIER();
}

PROG static void *thread_main(void *arg)
{
	thread_ra[0] = RA();
	thread_leaf();
	BARRIER();
	return arg;
}

static void test_thread_chain(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) != 0) {
		CHECK(0, "thread: pthread_create");
		return;
	}
	pthread_join(t, NULL);
	uintptr_t want[] = { thread_ra[1], thread_ra[0] };
	CHECK(thread_walk.n >= 1 && in_prog(thread_walk.f[0].pc) &&
		      frames_then_libc(&thread_walk, want, 2),
	      "thread: %d frames, thread_leaf < the start routine < musl's thread start-up, "
	      "where it stops with %s", thread_walk.n, sframe_bt_stop_name(thread_walk.st.stop));
	if (thread_walk.n != 3)
		print(&thread_walk);
}

/* ---- 2. SIGPROF samples --------------------------------------------------- */

#define SAMPLES 40
static struct walk samples[SAMPLES];
static uintptr_t sample_pc[SAMPLES];
static volatile sig_atomic_t nsamples;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	if (nsamples < SAMPLES) {
		sample_pc[nsamples] = (uintptr_t)UC_PC((ucontext_t *)uc);
		walk(uc, &samples[nsamples++]);
	}
}

static inline __attribute__((always_inline)) void prof_on(void)
{
	nsamples = 0;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_PROF, &it, NULL);
}

static inline __attribute__((always_inline)) void prof_off(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
}

static volatile uintptr_t spin_ra[3];

PROG static void spin3(void)
{
	spin_ra[2] = RA();
	prof_on();
	unsigned x = 1;
	for (long i = 0; nsamples < SAMPLES && i < 4000000000L; i++)
		x = x * 7 + 1;
	prof_off();
	sink = x;
	BARRIER();
}
PROG static void spin2(void) { spin_ra[1] = RA(); spin3(); BARRIER(); }
PROG static void spin1(void) { spin_ra[0] = RA(); spin2(); BARRIER(); }

/* Every sample: in spin3, the chain whole to main's return address, then
 * the stop in libc; in libc (setitimer), the stop at once. */
static void test_spin(void)
{
	spin1();
	int whole = 0, at_once = 0, bad = 0;
	uintptr_t want[] = { spin_ra[2], spin_ra[1], spin_ra[0], main_ra };
	for (int i = 0; i < nsamples; i++) {
		const struct walk *w = &samples[i];
		bool ok = w->n >= 1 && w->f[0].pc == sample_pc[i];
		if (in_prog(sample_pc[i]))
			whole += ok = ok && frames_then_libc(w, want, 4);
		else
			at_once += ok = ok && stops_at_once(w, sample_pc[i]);
		if (!ok && bad++ == 0)
			print(w);
	}
	CHECK(nsamples == SAMPLES && bad == 0 && whole >= SAMPLES / 2,
	      "samples in the program: %d of %d whole to main < libc's start-up (stopped "
	      "there: no-unwind-info), %d in libc stopped at once, %d wrong",
	      whole, (int)nsamples, at_once, bad);
}

/* Through libc: qsort() calling a comparator of the program, memcpy(),
 * strlen().  The comparator records each return address it is called
 * with (qsort's few call sites). */
#define CMP_SITES 16
static volatile uintptr_t cmp_sites[CMP_SITES];
static volatile uintptr_t loop_ra;

CMP static int cmp_int(const void *a, const void *b)
{
	uintptr_t ra = RA();
	for (int i = 0; i < CMP_SITES; i++) {
		if (cmp_sites[i] == ra)
			break;
		if (!cmp_sites[i]) {
			cmp_sites[i] = ra;
			break;
		}
	}
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

PROG static void through_libc(void)
{
	loop_ra = RA();
	enum { N = 1 << 14 };
	static int v[N];
	static char a[1 << 18], b[1 << 18];
	memset(a, 'x', sizeof a - 1);
	prof_on();
	for (int round = 0; nsamples < SAMPLES && round < 100000; round++) {
		for (int i = 0; i < N; i++)
			v[i] = (int)((unsigned)i * 2654435761u >> 7);
		qsort(v, N, sizeof v[0], cmp_int);
		memcpy(b, a, sizeof a);
		sink += (unsigned)strlen(b);
	}
	prof_off();
}

static bool cmp_site(uintptr_t pc)
{
	for (int i = 0; i < CMP_SITES && cmp_sites[i]; i++)
		if (cmp_sites[i] == pc)
			return true;
	return false;
}

/* Every sample: in libc, the stop at once; in the comparator, its
 * frame, then qsort's (a return address the comparator was called with),
 * where the walk stops; in through_libc, whole to main. */
static void test_through_libc(void)
{
	through_libc();
	int in_libc = 0, at_cmp = 0, in_loop = 0, bad = 0;
	for (int i = 0; i < nsamples; i++) {
		const struct walk *w = &samples[i];
		uintptr_t pc = sample_pc[i];
		bool ok = w->n >= 1 && w->f[0].pc == pc;
		if (!in_prog(pc)) {
			in_libc += ok = ok && stops_at_once(w, pc);
		} else if (in_cmp(pc)) {
			at_cmp += ok = ok && w->n == 2 && cmp_site(w->f[1].pc) &&
				       frames_then_libc(w, &w->f[1].pc, 1);
		} else {
			uintptr_t want[] = { loop_ra, main_ra };
			in_loop += ok = ok && frames_then_libc(w, want, 2);
		}
		if (!ok && bad++ == 0)
			print(w);
	}
	CHECK(nsamples == SAMPLES && bad == 0 && in_libc > 0,
	      "samples through libc: %d in libc stopped there at once with no-unwind-info, "
	      "%d in the comparator stopped at qsort's frame, %d in the loop whole to main "
	      "(of %d; %d wrong)", in_libc, at_cmp, in_loop, (int)nsamples, bad);
}

/* ---- 3. Crashes ------------------------------------------------------------ */

static const char *mode = "";
static struct walk crash;
static volatile uintptr_t cmp_fault_ra;
static int *volatile nowhere;

PROG static int cmp_fault(const void *a, const void *b)
{
	cmp_fault_ra = RA();
	/* Faults on the first comparison, called from inside libc's sort. */
	return *nowhere + *(const int *)a - *(const int *)b;
}

/* The report, read back: "#0 0x<pc> ", the qsort case's "#1 0x<ra> ",
 * no frame after the last, and "# stopped: no-unwind-info at 0x<last>". */
static bool report_stops(const void *uc, uintptr_t pc, uintptr_t ra)
{
	static char buf[16384];
	int fd = memfd_create("report", 0);
	if (fd < 0)
		return false;
	sframe_write_crash_report(uc, fd);
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char want[64];
	snprintf(want, sizeof want, "#0 %#lx ", (unsigned long)pc);
	bool ok = !strncmp(buf, want, strlen(want));
	if (ra) {
		snprintf(want, sizeof want, "\n#1 %#lx ", (unsigned long)ra);
		ok = ok && strstr(buf, want);
	}
	ok = ok && !strstr(buf, ra ? "\n#2 " : "\n#1 ");
	snprintf(want, sizeof want, "\n# stopped: no-unwind-info at %#lx\n",
		 (unsigned long)(ra ? ra : pc));
	ok = ok && strstr(buf, want);
	if (!ok)
		printf("# the report:\n%s", buf);
	return ok;
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	uintptr_t pc = (uintptr_t)UC_PC((ucontext_t *)uc);
	walk(uc, &crash);
	bool ok;
	if (!strcmp(mode, "qsort")) {
		uintptr_t want[] = { cmp_fault_ra };
		ok = in_prog(pc) && pc - (uintptr_t)cmp_fault < 256 && crash.f[0].pc == pc &&
		     frames_then_libc(&crash, want, 1);
		CHECK(ok, "%s: the comparator's frame, then qsort's in libc (%#lx), where the "
			  "walk stops (%d frames, %s)", mode, (unsigned long)cmp_fault_ra,
		      crash.n, sframe_bt_stop_name(crash.st.stop));
	} else {
		ok = stops_at_once(&crash, pc);
		CHECK(ok, "%s: frame 0 in libc (%#lx), where the walk stops at once (%d frames, "
			  "%s)", mode, (unsigned long)pc, crash.n,
		      sframe_bt_stop_name(crash.st.stop));
	}
	if (!ok)
		print(&crash);
	CHECK(report_stops(uc, pc, !strcmp(mode, "qsort") ? cmp_fault_ra : 0),
	      "%s: the crash report ends at that frame with \"# stopped: no-unwind-info\"", mode);
	_exit(check_failures ? 1 : 0);
}

PROG static void run_case(const char *m)
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
	BARRIER();
}

static const char *const cases[] = { "abort", "assert", "strlen", "qsort" };

PROG int main(int argc, char **argv)
{
	main_ra = RA();
	/* Warm up out of signal context, as a program would. */
	sframe_backtrace_warmup();
	if (argc > 1) {
		mode = argv[1];
		sig_install(SIGABRT, on_crash, SA_RESETHAND);
		sig_install(SIGSEGV, on_crash, SA_RESETHAND);
		run_case(mode);
		CHECK(0, "%s: crashed", mode);
		CHECK_DONE();
	}
	test_chain();
	test_thread_chain();
	sig_install(SIGPROF, on_prof, SA_RESTART);
	test_spin();
	test_through_libc();
	/* Each crash in a child, which prints its own lines. */
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
