/* The walker on AArch64 and s390x (run under qemu-user by tests/cross/run.sh;
 * builds and runs natively on x86-64 too).
 *
 * The call chain: drive -> ex_a -> ex_b -> lb_a -> lb_b -> lb_c (in
 * cross_lib.so, dlopen()ed) -> cb -> the scenario's action.  Ground truth
 * is the chain itself: each frame must lie in the function the chain puts
 * there (ranges from dladdr1() symbol sizes; the program is linked
 * -rdynamic).  Scenarios:
 *   chain       sframe_backtrace() and sframe_backtrace_ex() from the action
 *   threads     SIGUSR1 to threads spinning in the action: walks from the
 *               ucontext and from the handler (across the signal frame)
 *   nested      a trap in the action, a fault in its handler: a walk from
 *               the second handler crosses both signal frames
 *   outermost   (V3 sections) an asm function whose RA is undefined
 *   garbage     contexts with random registers: every walk ends with a
 *               reason, none faults
 *   every insn  a breakpoint on every instruction of the chain in turn
 *               (a trap written into the code): the walk from the trap's
 *               context must give the chain, or stop with a reason; a
 *               wrong frame is a failure; also cross_cfi.so's functions, by CFI
 *   cfi         through cross_cfi.so (.eh_frame, no .sframe) by its CFI
 *   memo        the row memo's entries, whose sequence number and epoch
 *               are read as one word: on this byte order a row put is
 *               found again under its epoch, and under no other
 *   lazy        a walk from an IFUNC resolver that the dynamic linker runs
 *               while binding a PLT call lazily, through its resolver
 *   libc        whole stacks through libc's .eh_frame: a walk from qsort's
 *               callback, one on a thread, one on a makecontext() fiber
 *               (to libc's trampoline, as libgcc), one on a fiber entered as
 *               boost.context enters one (to its exit, as libgcc), SIGUSR1
 *               samples landing in
 *               memset/memcpy/qsort; each to the outermost frame (_start,
 *               or the thread's first frame in libc); a context at a stub
 *               of libc's .plt, which has no CFI
 * Arguments: the path of cross_lib.so, the prebuilt fixture library, and
 * the outermost FDEs (undefined RA) of libc and of this program, "LO HI"
 * lines from the target's readelf (tests/cross/outermost.awk); libgcc's
 * unwinder checks the frames inside libc.  CROSS_V3
 * is defined when the sections are SFrame V3. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "gcc_trace.h"
#include "loaded_object.h"
#include "sig_install.h"
#include "uc_regs.h"
#include "objects/objcache.h"
#include "walk/rowmemo.h"

#if defined(__aarch64__)
#define UC_RA(uc) ((uc)->uc_mcontext.regs[30])
/* brk #0: SIGTRAP, pc at the brk. */
#define TRAP_LEN 4
static const uint8_t trap_code[4] = { 0x00, 0x00, 0x20, 0xd4 };
#define TRAP_ASM "brk #1"
#define TRAP_ASM_LEN 4
static unsigned insn_len(const uint8_t *c) { (void)c; return 4; }
#elif defined(__s390x__)
#define UC_RA(uc) ((uc)->uc_mcontext.gregs[14])
/* An invalid opcode: SIGILL, si_addr at it, the PSW after it. */
#define TRAP_LEN 2
static const uint8_t trap_code[2] = { 0x00, 0x01 };
#define TRAP_ASM ".short 0x0001"
#define TRAP_ASM_LEN 2
/* The length of an instruction from its first two bits. */
static unsigned insn_len(const uint8_t *c) { return c[0] < 0x40 ? 2 : c[0] < 0xc0 ? 4 : 6; }
#elif defined(__x86_64__)
#define UC_RA(uc) ((uc)->uc_mcontext.gregs[REG_RAX]) /* any other register */
#define TRAP_ASM "int3"
#define TRAP_ASM_LEN 0 /* the trap leaves the PC after it */
#endif

typedef int (*cross_cb)(int);
static int (*lb_a)(cross_cb, int);

/* ---- functions and their ranges ---------------------------------------- */

enum { F_ACTION_WALK, F_SPIN, F_ACTION_TRAP, F_CB, F_LB_C, F_LB_B, F_LB_A, F_EX_B, F_EX_A,
       F_DRIVE, F_ON_USR1, F_ON_TRAP, F_FAULT_FN, F_ON_SEGV, F_OUTER_CB, F_OUTERMOST,
       F_FX_DRIVE, F_ACTION_CAPTURE, F_FP_A, F_FP_B, F_DRIVE_FP, F_CMP_WALK, F_SORT_CALLER,
       F_MAIN, F_TWALK, F_TWALK_MAIN, F_MEM_LOOP, F_MEM_MAIN, F_LIBC_START_MAIN, F_CF_A,
       F_CF_B, F_CF_C, F_DRIVE_CFI, F_QSORT_R, F_SORT_BP, F_CMP_PLAIN, F_ACTION_PLT, F_FWALK,
       F_FWALK_MAIN, F_BWALK, F_BFIB_BODY, F_CF_LAZY, F_LAZY_RESOLVE, F_LAZY_DRIVE, NF };
/* The prebuilt fixture library's functions (tests/fixtures), after those. */
#define FX_MAX 24
#define F_ANY_FX (-1) /* expected: any fixture function (several call fx_lib_use) */
static const char *const fn_name[NF] = {
	"action_walk", "spin",	 "action_trap", "cb",	     "lb_c",	 "lb_b",
	"lb_a",	       "ex_b",	 "ex_a",	"drive",     "on_usr1",	 "on_trap",
	"fault_fn",    "on_segv", "outer_cb",	"cross_outermost", "fx_drive",
	"action_capture", "fp_a", "fp_b", "drive_fp", "cmp_walk", "sort_caller",
	"main", "twalk", "twalk_main", "mem_loop", "mem_main", "__libc_start_main",
	"cf_a", "cf_b", "cf_c", "drive_cfi", "qsort_r", "sort_bp", "cmp_plain", "action_plt",
	"fwalk", "fwalk_main", "bwalk", "bfib_body", "cf_lazy", "lazy_resolve", "lazy_drive",
};
static uintptr_t fn_lo[NF + FX_MAX], fn_hi[NF + FX_MAX];
static const char *fx_name[FX_MAX];
static int nfx;

static bool range_of(void *addr, int f)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!addr || !dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !sym->st_size)
		return false;
	fn_lo[f] = (uintptr_t)info.dli_saddr;
	fn_hi[f] = fn_lo[f] + sym->st_size;
	return true;
}

static bool in_fn(const struct sframe_bt_frame *fr, int f)
{
	uintptr_t pc = fr->exact ? fr->pc : fr->pc - 1;
	if (f == F_ANY_FX) {
		for (int i = NF; i < NF + nfx; i++)
			if (pc >= fn_lo[i] && pc < fn_hi[i])
				return true;
		return false;
	}
	return pc >= fn_lo[f] && pc < fn_hi[f];
}

enum { RIGHT, STOPPED, WRONG };

static uintptr_t libc_lo, libc_hi; /* libc's mapped segments */

static bool in_libc(const struct sframe_bt_frame *fr)
{
	uintptr_t pc = fr->exact ? fr->pc : fr->pc - 1;
	return pc >= libc_lo && pc < libc_hi;
}

#define F_LIBC_RUN (-2) /* expected: any number of frames in libc */

/* frames[at..] against the functions exp[0..nexp). */
static int judge(const struct sframe_bt_frame *fr, int n, int at, const struct sframe_bt_status *st,
		 const int *exp, int nexp)
{
	int j = at;
	for (int i = 0; i < nexp; i++) {
		if (exp[i] == F_LIBC_RUN) {
			while (j < n && in_libc(&fr[j]))
				j++;
			continue;
		}
		if (j >= n)
			return st->stop != SFRAME_BT_STOP_NONE && st->stop != SFRAME_BT_STOP_BUFFER_FULL
				       ? STOPPED
				       : WRONG;
		if (!in_fn(&fr[j++], exp[i]))
			return WRONG;
	}
	return RIGHT;
}

static const char *name_of(int f)
{
	return f < NF ? fn_name[f] : fx_name[f - NF];
}

static const char *fn_of(uintptr_t pc)
{
	for (int f = 0; f < NF + nfx; f++)
		if (pc >= fn_lo[f] && pc < fn_hi[f])
			return name_of(f);
	return pc >= libc_lo && pc < libc_hi ? "(libc)" : "?";
}

static void show(const char *what, const struct sframe_bt_frame *fr, int n,
		 const struct sframe_bt_status *st)
{
	printf("# %s: %d frames, stop %s at %#lx\n", what, n, sframe_bt_stop_name(st->stop),
	       (unsigned long)st->stop_pc);
	for (int i = 0; i < n; i++) {
		uintptr_t pc = fr[i].exact ? fr[i].pc : fr[i].pc - 1;
		printf("#   %2d %#lx %s", i, (unsigned long)fr[i].pc, fn_of(pc));
		if (pc >= libc_lo && pc < libc_hi) /* libc's first segment is at 0 */
			printf("+%#lx", (unsigned long)(fr[i].pc - libc_lo));
		printf("%s src %d\n", fr[i].exact ? " (exact)" : "", fr[i].source);
	}
}

/* ---- the chain ------------------------------------------------------------ */

static int (*volatile action)(int);

__attribute__((noinline)) int cb(int x)
{
	volatile int k = x;
	int r = action ? action(k) : k * 2;
	return r + k;
}

__attribute__((noinline)) int ex_b(int x)
{
	int r = lb_a(cb, x ^ 5);
	return r * 3;
}

__attribute__((noinline)) int ex_a(int x)
{
	int r = ex_b(x + 11);
	return r - 1;
}

__attribute__((noinline)) int drive(int x)
{
	int r = ex_a(x);
	return r ^ 0x55;
}

/* The chain below an action, innermost first. */
static const int chain_below[] = { F_CB, F_LB_C, F_LB_B, F_LB_A, F_EX_B, F_EX_A, F_DRIVE };
#define NCHAIN (int)(sizeof chain_below / sizeof chain_below[0])

static int expect_from(int first, int *exp)
{
	exp[0] = first;
	memcpy(exp + 1, chain_below, sizeof chain_below);
	return NCHAIN + 1;
}

/* ---- chain: walks from the action -------------------------------------- */

#define MAXF 64
static struct sframe_bt_frame walk_fr[MAXF];
static struct sframe_bt_status walk_st;
static int walk_n;
static void *walk_pcs[MAXF];
static int walk_npcs;

static int report_fd = -1, report_n;

__attribute__((noinline)) int action_walk(int x)
{
	walk_n = sframe_backtrace_ex(NULL, walk_fr, MAXF, 0, &walk_st);
	walk_npcs = sframe_backtrace(walk_pcs, MAXF);
	if (report_fd >= 0)
		report_n = sframe_write_crash_report(NULL, report_fd);
	return x + 1;
}

/* The crash report names the chain's functions in order (the symbolizer
 * on this architecture: ELF hash tables, dynamic symbols). */
static void test_report(void)
{
	int p[2];
	if (pipe(p)) {
		CHECK(0, "report: pipe");
		return;
	}
	report_fd = p[1];
	action = action_walk;
	drive(5);
	action = NULL;
	report_fd = -1;
	close(p[1]);
	static char text[65536];
	size_t len = 0;
	ssize_t r;
	while (len < sizeof text - 1 && (r = read(p[0], text + len, sizeof text - 1 - len)) > 0)
		len += (size_t)r;
	close(p[0]);
	text[len] = 0;
	static const char *const names[] = { "action_walk", "cb", "lb_c", "lb_b",
					     "lb_a", "ex_b", "ex_a", "drive" };
	const char *at = text;
	unsigned found = 0;
	for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
		char pat[32];
		snprintf(pat, sizeof pat, " %s+", names[i]);
		const char *q = strstr(at, pat);
		if (!q)
			break;
		at = q + 1;
		found++;
	}
	if (found < sizeof names / sizeof names[0])
		printf("# report (%d frames):\n%s", report_n, text);
	CHECK(found == sizeof names / sizeof names[0],
	      "report: sframe_write_crash_report() names the chain in order (%u of 8)", found);
}

static void test_chain(void)
{
	action = action_walk;
	drive(3);
	action = NULL;
	int exp[NCHAIN + 1], ne = expect_from(F_ACTION_WALK, exp);
	int r = judge(walk_fr, walk_n, 0, &walk_st, exp, ne);
	if (r != RIGHT)
		show("chain", walk_fr, walk_n, &walk_st);
	CHECK(r == RIGHT, "chain: sframe_backtrace_ex() from the action gives action, cb, the "
			  "dlopen()ed lb_c/lb_b/lb_a, ex_b, ex_a, drive");
	/* Frame 0 is the return address of each call, which differ. */
	bool same = walk_npcs == walk_n && in_fn(&(struct sframe_bt_frame){
						   .pc = (uintptr_t)walk_pcs[0] }, F_ACTION_WALK);
	for (int i = 1; same && i < walk_n; i++)
		same = (uintptr_t)walk_pcs[i] == walk_fr[i].pc;
	CHECK(walk_npcs >= ne && same, "chain: sframe_backtrace() gives the same %d PCs",
	      walk_npcs);
}

/* ---- frame pointers: code without unwind tables ------------------------ */

static void *fp_lib;
static int (*fp_a)(cross_cb, int);

__attribute__((noinline)) int drive_fp(int x)
{
	int r = fp_a(cb, x + 2);
	return r - 3;
}

/* Through fp_a and fp_b by the frame-pointer rule, then on into drive_fp,
 * whose rows are SFrame's again: the rule must give the frames right, or
 * stop with a reason; never a wrong frame. */
static void test_fp(void)
{
	if (!fp_a) {
		CHECK(0, "fp: cross_fp.so loaded");
		return;
	}
	action = action_walk;
	struct sframe_bt_frame fr[MAXF];
	struct sframe_bt_status st;
	sframe_backtrace_set_default_flags(SFRAME_BT_FP_FALLBACK_ANY);
	drive_fp(1);
	sframe_backtrace_set_default_flags(0);
	action = NULL;
	memcpy(fr, walk_fr, sizeof fr);
	st = walk_st;
	int n = walk_n;
	static const int exp[] = { F_ACTION_WALK, F_CB, F_FP_B, F_FP_A, F_DRIVE_FP };
	int r = judge(fr, n, 0, &st, exp, 5);
	/* A frame's source says how it was reached: fp_a and drive_fp by the
	 * rule (fp_b's and fp_a's frames unwound with it). */
	bool by_fp = n >= 5 && fr[3].source == SFRAME_BT_FROM_FRAME_POINTER &&
		     fr[4].source == SFRAME_BT_FROM_FRAME_POINTER;
	printf("# fp: %d frames, stop %s\n", n, sframe_bt_stop_name(st.stop));
	CHECK(r != WRONG, "fp: through code without unwind tables by the frame-pointer rule: %s",
	      r == RIGHT ? "right" : r == STOPPED ? "stopped with a reason" : "WRONG");
#if defined(__s390x__)
	/* No frame-pointer rule on s390x: the walk stops in fp_b. */
	(void)by_fp;
	bool ok = r == STOPPED && n == 3 && st.stop == SFRAME_BT_STOP_NO_UNWIND_INFO;
	if (!ok)
		show("fp", fr, n, &st);
	CHECK(ok, "fp: s390x has no frame-pointer rule: the walk stops in fp_b, no-unwind-info");
#else
	if (r != RIGHT || !by_fp)
		show("fp", fr, n, &st);
	CHECK(r == RIGHT && by_fp, "fp: fp_b and fp_a unwound by the rule, on to drive_fp");
#endif
}

/* ---- CFI only: code with .eh_frame and no .sframe ---------------------- */

static int (*cf_a)(cross_cb, int);

__attribute__((noinline)) int drive_cfi(int x)
{
	int r = cf_a(cb, x + 3);
	return r - 1;
}

/* libc's qsort_r, for a breakpoint on each of its instructions. */
__attribute__((noinline)) int cmp_plain(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) int sort_bp(int seed)
{
	int v[24];
	for (int i = 0; i < 24; i++)
		v[i] = (seed + i * 29) % 53;
	qsort(v, 24, sizeof v[0], cmp_plain);
	return v[0] - v[23];
}

/* Through cross_cfi.so's cf_c, cf_b, cf_a by their CFI (signed return
 * addresses in the pac builds), on to drive_cfi. */
static void test_cfi(void)
{
	if (!cf_a) {
		CHECK(0, "cfi: cross_cfi.so loaded");
		return;
	}
	action = action_walk;
	drive_cfi(1);
	action = NULL;
	static const int exp[] = { F_ACTION_WALK, F_CB, F_CF_C, F_CF_B, F_CF_A, F_DRIVE_CFI };
	int r = judge(walk_fr, walk_n, 0, &walk_st, exp, 6);
	bool by_cfi = walk_n >= 6 && walk_fr[3].source == SFRAME_BT_FROM_EH_FRAME &&
		      walk_fr[4].source == SFRAME_BT_FROM_EH_FRAME &&
		      walk_fr[5].source == SFRAME_BT_FROM_EH_FRAME;
	if (r != RIGHT || !by_cfi)
		show("cfi", walk_fr, walk_n, &walk_st);
	CHECK(r == RIGHT && by_cfi, "cfi: cf_c, cf_b, cf_a unwound with their .eh_frame CFI, on "
				    "to drive_cfi (frames_eh_frame %d)", walk_st.frames_eh_frame);
}

/* ---- threads: SIGUSR1 while spinning ------------------------------------ */

#define NTHREADS 4
#define SIGNALS_EACH 25

struct tres {
	_Atomic int got, ctx_right, ctx_stopped, ctx_wrong, h_right, h_stopped, h_wrong;
	_Atomic int go;
};
static struct tres tres[NTHREADS];
static __thread int my_slot = -1;
static _Atomic int spin_stop;

__attribute__((noinline)) int spin(int x)
{
	volatile int v = x;
	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
		v = v * 7 + 1;
	return v;
}

static void tally(_Atomic int *right, _Atomic int *stopped, _Atomic int *wrong, int r)
{
	atomic_fetch_add(r == RIGHT ? right : r == STOPPED ? stopped : wrong, 1);
}

static _Atomic int shown;

void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	int slot = my_slot;
	if (slot < 0)
		return;
	struct tres *t = &tres[slot];
	struct sframe_bt_frame fr[MAXF];
	struct sframe_bt_status st;
	int exp[NCHAIN + 1], ne = expect_from(F_SPIN, exp);
	/* Only a sample that landed in spin itself has a known chain. */
	uintptr_t pc = (uintptr_t)UC_PC((ucontext_t *)uc);
	if (pc < fn_lo[F_SPIN] || pc >= fn_hi[F_SPIN])
		return;
	atomic_fetch_add(&t->got, 1);
	int n = sframe_backtrace_ex(uc, fr, MAXF, 0, &st);
	int r = judge(fr, n, 0, &st, exp, ne);
	if (r == WRONG && !atomic_exchange(&shown, 1))
		show("thread ucontext walk", fr, n, &st);
	tally(&t->ctx_right, &t->ctx_stopped, &t->ctx_wrong, r);
	/* From the handler: on_usr1, the trampoline, then the chain. */
	n = sframe_backtrace_ex(NULL, fr, MAXF, 0, &st);
	int k = 1;
	while (k < n && fr[k].source != SFRAME_BT_FROM_SIGNAL_FRAME)
		k++;
	r = n < 1 || !in_fn(&fr[0], F_ON_USR1) ? WRONG
	    : k >= n				? (st.stop ? STOPPED : WRONG)
	    : k != 2				? WRONG
						: judge(fr, n, k, &st, exp, ne);
	if (r != RIGHT && !atomic_exchange(&shown, 1))
		show("thread handler walk", fr, n, &st);
	tally(&t->h_right, &t->h_stopped, &t->h_wrong, r);
}

static void *thread_main(void *arg)
{
	my_slot = (int)(intptr_t)arg;
	atomic_store(&tres[my_slot].go, 1);
	drive(my_slot);
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[NTHREADS];
	action = spin;
	atomic_store(&spin_stop, 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		while (!atomic_load(&tres[i].go))
			usleep(1000);
	for (int round = 0; round < SIGNALS_EACH * 4; round++) {
		bool done = true;
		for (int i = 0; i < NTHREADS; i++)
			if (atomic_load(&tres[i].got) < SIGNALS_EACH) {
				done = false;
				pthread_kill(th[i], SIGUSR1);
			}
		if (done)
			break;
		usleep(2000);
	}
	atomic_store(&spin_stop, 1);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	action = NULL;
	int got = 0, cr = 0, cs = 0, cw = 0, hr = 0, hs = 0, hw = 0;
	for (int i = 0; i < NTHREADS; i++) {
		got += tres[i].got, cr += tres[i].ctx_right, cs += tres[i].ctx_stopped;
		cw += tres[i].ctx_wrong, hr += tres[i].h_right, hs += tres[i].h_stopped;
		hw += tres[i].h_wrong;
	}
	CHECK(got >= NTHREADS * SIGNALS_EACH / 2, "threads: %d samples in spin on %d threads", got,
	      NTHREADS);
	CHECK(cr == got, "threads: ucontext walks give the chain: %d right, %d stopped, %d wrong",
	      cr, cs, cw);
	CHECK(hr == got, "threads: walks from the handler cross the signal frame: %d right, "
			 "%d stopped, %d wrong", hr, hs, hw);
}

/* ---- nested: a fault in the handler of a trap ---------------------------- */

static char *fault_page;
static struct sframe_bt_frame nest_fr[MAXF];
static struct sframe_bt_status nest_st;
static int nest_n = -1;

__attribute__((noinline)) int action_trap(int x)
{
	__asm__ volatile(TRAP_ASM ::: "memory");
	return x + 2;
}

__attribute__((noinline)) void fault_fn(void)
{
	*(volatile char *)fault_page = 1;
}

void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if ((char *)si->si_addr != fault_page)
		abort();
	nest_n = sframe_backtrace_ex(NULL, nest_fr, MAXF, 0, &nest_st);
	mprotect(fault_page, 4096, PROT_READ | PROT_WRITE);
}

void on_trap(int sig, siginfo_t *si, void *ucv)
{
	(void)sig, (void)si;
	ucontext_t *uc = ucv;
	fault_fn();
	UC_PC(uc) += TRAP_ASM_LEN;
#if defined(__s390x__)
	UC_PC(uc) = (uintptr_t)si->si_addr + TRAP_ASM_LEN; /* the PSW is past it already */
#endif
}

/* A trap (TRAP_ASM, trap_code) raises SIGTRAP (brk, int3) or SIGILL
 * (s390x's invalid opcode): fn handles both until traps_restore() puts
 * back the handlers they had. */
static struct sigaction old_trap, old_ill;

static void traps_to(void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa = { .sa_sigaction = fn, .sa_flags = SA_SIGINFO };
	sigaction(SIGTRAP, &sa, &old_trap);
	sigaction(SIGILL, &sa, &old_ill);
}

static void traps_restore(void)
{
	sigaction(SIGTRAP, &old_trap, NULL);
	sigaction(SIGILL, &old_ill, NULL);
}

static void test_nested(void)
{
	traps_to(on_trap);
	sig_install(SIGSEGV, on_segv, 0);
	fault_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	action = action_trap;
	drive(9);
	action = NULL;
	traps_restore();
	signal(SIGSEGV, SIG_DFL);
	munmap(fault_page, 4096);
	/* on_segv, trampoline, fault_fn, on_trap, trampoline, action_trap, chain */
	int sig1 = -1, sig2 = -1;
	for (int i = 1; i < nest_n; i++)
		if (nest_fr[i].source == SFRAME_BT_FROM_SIGNAL_FRAME) {
			if (sig1 < 0)
				sig1 = i;
			else if (sig2 < 0)
				sig2 = i;
		}
	int exp_in[] = { F_FAULT_FN, F_ON_TRAP };
	int exp[NCHAIN + 1], ne = expect_from(F_ACTION_TRAP, exp);
	bool ok = nest_n > 0 && in_fn(&nest_fr[0], F_ON_SEGV) && sig1 == 2 && sig2 == 5 &&
		  judge(nest_fr, nest_n, sig1, &nest_st, exp_in, 2) == RIGHT &&
		  judge(nest_fr, nest_n, sig2, &nest_st, exp, ne) == RIGHT;
	if (!ok)
		show("nested", nest_fr, nest_n, &nest_st);
	CHECK(ok, "nested: a walk from a fault's handler inside a trap's handler crosses both "
		  "signal frames to the chain");
}

/* ---- outermost ---------------------------------------------------------------- */

int cross_outermost(int (*f)(int), int x);
#if defined(__aarch64__)
__asm__(".text\n.globl cross_outermost\n.type cross_outermost, %function\n"
	"cross_outermost:\n.cfi_startproc\n.cfi_undefined x30\n"
	"stp x29, x30, [sp, -16]!\n.cfi_def_cfa_offset 16\n"
	"mov x16, x0\nmov w0, w1\nblr x16\n"
	"ldp x29, x30, [sp], 16\n.cfi_def_cfa_offset 0\nret\n.cfi_endproc\n"
	".size cross_outermost, .-cross_outermost\n");
#elif defined(__s390x__)
__asm__(".text\n.globl cross_outermost\n.type cross_outermost, @function\n"
	"cross_outermost:\n.cfi_startproc\n.cfi_undefined %r14\n"
	"stmg %r14,%r15,112(%r15)\naghi %r15,-160\n.cfi_def_cfa_offset 320\n"
	"lgr %r1,%r2\nlgr %r2,%r3\nbasr %r14,%r1\n"
	"lmg %r14,%r15,272(%r15)\n.cfi_def_cfa_offset 160\nbr %r14\n.cfi_endproc\n"
	".size cross_outermost, .-cross_outermost\n");
#elif defined(__x86_64__)
__asm__(".text\n.globl cross_outermost\n.type cross_outermost, @function\n"
	"cross_outermost:\n.cfi_startproc\n.cfi_undefined rip\n"
	"sub $8, %rsp\n.cfi_def_cfa_offset 16\nmov %rdi, %rax\nmov %esi, %edi\ncall *%rax\n"
	"add $8, %rsp\n.cfi_def_cfa_offset 8\nret\n.cfi_endproc\n"
	".size cross_outermost, .-cross_outermost\n");
#endif

__attribute__((noinline)) int outer_cb(int x)
{
	walk_n = sframe_backtrace_ex(NULL, walk_fr, MAXF, 0, &walk_st);
	return x;
}

static void test_outermost(void)
{
#ifdef CROSS_V3
	cross_outermost(outer_cb, 1);
	bool ok = walk_n == 2 && in_fn(&walk_fr[0], F_OUTER_CB) &&
		  in_fn(&walk_fr[1], F_OUTERMOST) && walk_st.stop == SFRAME_BT_STOP_OUTERMOST;
	if (!ok)
		show("outermost", walk_fr, walk_n, &walk_st);
	CHECK(ok, "outermost: a function whose RA is undefined ends the walk (outermost)");
#endif
}

/* ---- garbage contexts --------------------------------------------------------- */

static ucontext_t good_uc;
static _Atomic int captured;

__attribute__((noinline)) int action_capture(int x)
{
	getcontext(&good_uc);
	captured = 1;
	/* Walked while its frames still exist. */
	walk_n = sframe_backtrace_ex(&good_uc, walk_fr, MAXF, 0, &walk_st);
	return x;
}

static uint64_t rnd = 0x9e3779b97f4a7c15ull;
static uint64_t next_rnd(void)
{
	rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
	return rnd;
}

/* A plausible-looking value: near a real one, in the code, or anything. */
static uintptr_t garble(uintptr_t real, uintptr_t code)
{
	switch (next_rnd() % 6) {
	case 0: return real + (next_rnd() % 4096) - 2048;
	case 1: return code + next_rnd() % 65536;
	case 2: return next_rnd();
	case 3: return real & ~(uintptr_t)7;
	case 4: return 0;
	default: return real + 8 * (next_rnd() % 64);
	}
}

static void test_garbage(void)
{
	action = action_capture;
	drive(1);
	action = NULL;
	CHECK(captured, "garbage: a context captured in the chain");
	{
		/* The captured context itself: getcontext()'s caller, then the chain
		 * (s390x's getcontext() saves no PSW: the walk resumes at r14). */
		int exp[NCHAIN + 1], ne = expect_from(F_ACTION_CAPTURE, exp);
		int r = judge(walk_fr, walk_n, 0, &walk_st, exp, ne);
		if (r != RIGHT)
			show("getcontext", walk_fr, walk_n, &walk_st);
		CHECK(r == RIGHT, "getcontext(): a walk from its context gives the chain");
	}
	struct sframe_bt_frame fr[MAXF];
	struct sframe_bt_status st;
	int bad = 0, runs = 3000;
	int reasons[16] = { 0 };
	for (int i = 0; i < runs; i++) {
		ucontext_t uc = good_uc;
		uintptr_t code = fn_lo[F_CB] & ~(uintptr_t)0xffff;
		UC_PC(&uc) = garble(UC_PC(&uc), code);
		UC_SP(&uc) = garble(UC_SP(&uc), code);
		UC_FP(&uc) = garble(UC_FP(&uc), code);
		UC_RA(&uc) = garble(UC_RA(&uc), code);
		unsigned flags = next_rnd() % 2 ? SFRAME_BT_FP_FALLBACK_ANY : 0;
		int n = sframe_backtrace_ex(&uc, fr, MAXF, flags, &st);
		if (n < 0 || n > MAXF || st.stop == SFRAME_BT_STOP_NONE)
			bad++;
		reasons[st.stop & 15]++;
	}
	CHECK(bad == 0, "garbage: %d contexts with random pc/sp/fp/ra, every walk ended with a "
			"reason (outermost %d, no-object %d, no-unwind-info %d, bad-cfa %d, "
			"unreadable %d, bad-ra %d, unsafe-rule %d)",
	      runs, reasons[1], reasons[3], reasons[4], reasons[5], reasons[6], reasons[7],
	      reasons[8]);
}

/* The prebuilt fixture library's driver (every insn). */
static int (*fx_run_all)(int);

__attribute__((noinline)) int fx_drive(int x)
{
	int r = fx_run_all(x);
	return r + 1;
}

/* ---- every instruction ------------------------------------------------------- */

#if defined(__aarch64__) || defined(__s390x__)
static uintptr_t bp_addr;
static uint8_t bp_saved[TRAP_LEN];
static _Atomic int bp_hit;
static int bp_result, bp_exp[NCHAIN + 2], bp_nexp;
static struct sframe_bt_frame bp_fr[MAXF];
static struct sframe_bt_status bp_st;
static int bp_n;
static unsigned bp_flags = SFRAME_BT_NO_EH_FRAME;

static void put_code(uintptr_t at, const uint8_t *code)
{
	memcpy((void *)at, code, TRAP_LEN);
	__builtin___clear_cache((char *)at, (char *)at + TRAP_LEN);
}

void on_bp(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t at = sig == SIGILL ? (uintptr_t)si->si_addr : (uintptr_t)UC_PC(uc);
	if (at != bp_addr)
		abort();
	put_code(bp_addr, bp_saved);
	UC_PC(uc) = bp_addr;
	bp_n = sframe_backtrace_ex(uc, bp_fr, MAXF, bp_flags, &bp_st);
	bp_result = bp_n > 0 && bp_fr[0].pc == bp_addr && bp_fr[0].exact
			    ? judge(bp_fr, bp_n, 0, &bp_st, bp_exp, bp_nexp)
			    : WRONG;
	atomic_store(&bp_hit, 1);
}

/* The chain's stops make no walk of their own: a plain action. */
__attribute__((noinline)) int action_plain(int x)
{
	return x * 3 + 1;
}

struct tally {
	int checked, right, stopped, wrong, unreached, shown;
};

/* A trap on each instruction of function f in turn; run() must execute
 * it, and the walk from there must give exp[0..nexp). */
static void every_insn_of(int f, const int *exp, int nexp, void (*run)(void), struct tally *t)
{
	uintptr_t lo = fn_lo[f] & ~(uintptr_t)4095, hi = (fn_hi[f] + 4095) & ~(uintptr_t)4095;
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		CHECK(0, "every insn: %s's code made writable", name_of(f));
		return;
	}
	memcpy(bp_exp, exp, sizeof(int) * (size_t)nexp);
	bp_nexp = nexp;
	for (uintptr_t a = fn_lo[f]; a < fn_hi[f]; a += insn_len((const uint8_t *)a)) {
		bp_addr = a;
		bp_hit = 0;
		memcpy(bp_saved, (const void *)a, TRAP_LEN);
		put_code(a, trap_code);
		run();
		if (!bp_hit) {
			put_code(a, bp_saved);
			t->unreached++;
			continue;
		}
		t->checked++;
		if (bp_result == RIGHT)
			t->right++;
		else if (bp_result == STOPPED)
			t->stopped++;
		else
			t->wrong++;
		if (bp_result == WRONG && t->shown++ < 3) {
			printf("# wrong at %s+%#lx\n", name_of(f), (unsigned long)(a - fn_lo[f]));
			show("every insn", bp_fr, bp_n, &bp_st);
		}
		if (bp_result == STOPPED)
			printf("# stopped at %s+%#lx: %s\n", name_of(f), (unsigned long)(a - fn_lo[f]),
			       sframe_bt_stop_name(bp_st.stop));
	}
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
}

static void run_chain(void)
{
	drive(4);
}

static void run_fixture(void)
{
	fx_drive(2);
}

static void run_cfi(void)
{
	drive_cfi(5);
}

static void run_sort(void)
{
	sort_bp(7);
}

static void test_every_insn(void)
{
	traps_to(on_bp);
	struct tally t = { 0 };
	action = action_plain;
	for (int k = 0; k < NCHAIN; k++)
		every_insn_of(chain_below[k], chain_below + k, NCHAIN - k, run_chain, &t);
	action = NULL;
	CHECK(t.checked > 50 && t.wrong == 0,
	      "every insn: the chain, %d instructions checked: %d right, %d stopped with a "
	      "reason, %d wrong (%d never executed)",
	      t.checked, t.right, t.stopped, t.wrong, t.unreached);
	/* Every instruction of these functions has a complete row. */
	CHECK(t.stopped == 0, "every insn: the chain, no walk stopped short");
	if (fx_run_all) {
		struct tally u = { 0 };
		for (int f = NF; f < NF + nfx; f++) {
			int exp[4], ne = 0;
			exp[ne++] = f;
			if (!strcmp(fx_name[f - NF], "use")) {
				exp[ne++] = F_ANY_FX;
			} else if (!strcmp(fx_name[f - NF], "pac_a")) {
				for (int g = NF; g < NF + nfx; g++)
					if (!strcmp(fx_name[g - NF], "pac_b"))
						exp[ne++] = g;
			}
			if (strcmp(fx_name[f - NF], "run_all")) {
				for (int g = NF; g < NF + nfx; g++)
					if (!strcmp(fx_name[g - NF], "run_all"))
						exp[ne++] = g;
			}
			exp[ne++] = F_FX_DRIVE;
			every_insn_of(f, exp, ne, run_fixture, &u);
		}
		CHECK(u.checked > 50 && u.wrong == 0,
		      "every insn: the prebuilt libfixture.so (%d functions), %d instructions "
		      "checked: %d right, %d stopped with a reason, %d wrong (%d never executed)",
		      nfx, u.checked, u.right, u.stopped, u.wrong, u.unreached);
		CHECK(u.stopped == 0, "every insn: libfixture.so, no walk stopped short");
	}
	if (cf_a) {
		/* cross_cfi.so by its CFI alone. */
		static const int cfi_chain[] = { F_CF_C, F_CF_B, F_CF_A, F_DRIVE_CFI };
		struct tally c = { 0 };
		action = action_plain;
		bp_flags = 0;
		for (int k = 0; k < 3; k++)
			every_insn_of(cfi_chain[k], cfi_chain + k, 4 - k, run_cfi, &c);
		bp_flags = SFRAME_BT_NO_EH_FRAME;
		action = NULL;
		CHECK(c.checked > 30 && c.wrong == 0 && c.stopped == 0,
		      "every insn: cross_cfi.so by .eh_frame, %d instructions checked: %d right, "
		      "%d stopped with a reason, %d wrong (%d never executed)",
		      c.checked, c.right, c.stopped, c.wrong, c.unreached);
	}
	if (libc_lo && fn_lo[F_QSORT_R]) {
		/* libc's qsort_r by libc's CFI: it, any libc frames (qsort), sort_bp. */
		static const int exp[] = { F_QSORT_R, F_LIBC_RUN, F_SORT_BP };
		struct tally c = { 0 };
		bp_flags = 0;
		every_insn_of(F_QSORT_R, exp, 3, run_sort, &c);
		bp_flags = SFRAME_BT_NO_EH_FRAME;
		CHECK(c.checked > 20 && c.wrong == 0 && c.stopped == 0,
		      "every insn: libc's qsort_r by its .eh_frame, %d instructions checked: %d "
		      "right, %d stopped with a reason, %d wrong (%d never executed)",
		      c.checked, c.right, c.stopped, c.wrong, c.unreached);
	}
	traps_restore();
}
#else
static void test_every_insn(void)
{
}
#endif

/* ---- libc: whole stacks through its .eh_frame ------------------------------ */

/* libc carries no .sframe: its frames are unwound with its CFI.  Ground
 * truth: libc's mapped range (dl_iterate_phdr), return addresses taken
 * with __builtin_return_address in normal context, symbol ranges, and
 * the FDEs whose return-address rule is undefined (the outermost frames),
 * listed by the target's readelf (tests/cross/outermost.awk) for libc and
 * for this program (_start). */

#define MAXOUTER 8
struct outer {
	uintptr_t lo[MAXOUTER], hi[MAXOUTER];
	int n;
};
static struct outer libc_outer, prog_outer;
static uintptr_t start_addr;	 /* _start */
static uintptr_t main_ra;	 /* main's return address */
static uintptr_t sort_ra;	 /* sort_caller's return address, in main */
static _Atomic uintptr_t thr_ra; /* the thread functions' return address */

/* A return address without its pointer-authentication code. */
__attribute__((noinline)) static uintptr_t strip_ra(void *p)
{
	uintptr_t a = (uintptr_t)p;
#if defined(__aarch64__)
	uintptr_t r;
	/* xpaclri (hint 7) works on x30 only: x30 kept in x9 meanwhile. */
	__asm__ volatile("mov x9, x30\n\tmov x30, %1\n\thint 7\n\tmov %0, x30\n\tmov x30, x9"
			 : "=&r"(r)
			 : "r"(a)
			 : "x9");
	a = r;
#endif
	return a;
}

static bool in_outer(const struct outer *o, uintptr_t lo_only, const struct sframe_bt_frame *fr)
{
	uintptr_t pc = fr->exact ? fr->pc : fr->pc - 1;
	for (int i = 0; i < o->n; i++)
		if (pc >= o->lo[i] && pc < o->hi[i] && (!lo_only || o->lo[i] == lo_only))
			return true;
	return false;
}

static int load_outer(const char *path, uintptr_t base, struct outer *o)
{
	FILE *f = fopen(path, "r");
	unsigned long lo, hi;
	if (!f)
		return -1;
	while (o->n < MAXOUTER && fscanf(f, "%lx %lx", &lo, &hi) == 2) {
		o->lo[o->n] = base + lo;
		o->hi[o->n] = base + hi;
		o->n++;
	}
	fclose(f);
	return o->n;
}


/* frames[at..n): libc's __libc_start_main frames (any libc frames, one
 * of them in __libc_start_main), then _start last, stopped outermost. */
static bool start_tail_right(const struct sframe_bt_frame *fr, int n, int at,
			     const struct sframe_bt_status *st)
{
	bool saw = false;
	int i = at;
	for (; i < n && in_libc(&fr[i]); i++) {
		saw |= in_fn(&fr[i], F_LIBC_START_MAIN);
		if (fr[i - 1].source != SFRAME_BT_FROM_CONTEXT && in_libc(&fr[i - 1]) &&
		    fr[i].source != SFRAME_BT_FROM_EH_FRAME)
			return false;
	}
	return saw && i == n - 1 && in_outer(&prog_outer, start_addr, &fr[i]) &&
	       fr[i].source == SFRAME_BT_FROM_EH_FRAME && st->stop == SFRAME_BT_STOP_OUTERMOST;
}

/* frames[from..to) all in libc, each one after a libc frame found with
 * libc's CFI, and frames[to] (found from a libc frame) too. */
static uintptr_t plt_lo, plt_hi; /* libc's .plt */

/* Frame i was found from a frame in libc's .plt, which has no CFI: the
 * architecture's PLT row takes the RA from the link register. */
static bool after_plt(const struct sframe_bt_frame *fr, int i)
{
	return i > 0 && fr[i - 1].exact && fr[i - 1].pc >= plt_lo && fr[i - 1].pc < plt_hi &&
	       fr[i].source == SFRAME_BT_FROM_LINK_REGISTER;
}

static bool libc_run_right(const struct sframe_bt_frame *fr, int n, int from, int to)
{
	if (to <= from || to >= n)
		return false;
	for (int i = from; i < to; i++)
		if (!in_libc(&fr[i]) || (i > from && fr[i].source != SFRAME_BT_FROM_EH_FRAME &&
					 !after_plt(fr, i)))
			return false;
	return fr[to].source == SFRAME_BT_FROM_EH_FRAME;
}

/* A second oracle for the frames inside libc, which have no symbols: the
 * target's libgcc unwinder (tests/lib/gcc_trace.h, normal context only)
 * reads the same .eh_frame with its own code.  frames[1..n) are libgcc's
 * frames from the one at frames[1].pc on. */
static bool same_as_libgcc(const struct sframe_bt_frame *fr, int n, const struct gcc_trace *g)
{
	int j = 0;
	while (j < g->n && (n < 2 || g->ip[j] != fr[1].pc))
		j++;
	bool same = j < g->n && g->n - j == n - 1;
	for (int i = 1; same && i < n; i++)
		same = fr[i].pc == g->ip[j + i - 1];
	if (!same)
		for (int i = 0; i < g->n; i++)
			printf("#   libgcc %2d %#lx %s\n", i, (unsigned long)g->ip[i], fn_of(g->ip[i] - 1));
	return same;
}

/* program -> qsort in libc -> cmp_walk -> the walk */
static struct sframe_bt_frame sort_fr[MAXF];
static struct sframe_bt_status sort_st;
static int sort_n = -1;
static struct gcc_trace sort_gcc;

__attribute__((noinline)) int cmp_walk(const void *a, const void *b)
{
	if (sort_n < 0) {
		sort_n = sframe_backtrace_ex(NULL, sort_fr, MAXF, 0, &sort_st);
		gcc_trace(&sort_gcc);
	}
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) int sort_caller(int seed)
{
	sort_ra = strip_ra(__builtin_return_address(0));
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = (seed + i * 37) % 101;
	qsort(v, 64, sizeof v[0], cmp_walk);
	return v[0] + v[63];
}

static void test_libc_sort(void)
{
	const struct sframe_bt_frame *fr = sort_fr;
	int n = sort_n, k = 1;
	while (k < n && in_libc(&fr[k]))
		k++;
	/* cmp_walk, libc (k-1 frames), sort_caller, main, libc..., _start */
	bool ok = n > 0 && in_fn(&fr[0], F_CMP_WALK) && libc_run_right(fr, n, 1, k) &&
		  in_fn(&fr[k], F_SORT_CALLER) && k + 2 < n && fr[k + 1].pc == sort_ra &&
		  in_fn(&fr[k + 1], F_MAIN) && fr[k + 2].pc == main_ra &&
		  start_tail_right(fr, n, k + 2, &sort_st);
	if (!ok || sort_st.frames_eh_frame <= 0)
		show("libc qsort", fr, n, &sort_st);
	CHECK(ok, "libc qsort: the callback, %d frames of libc by its CFI, sort_caller, main, "
		  "__libc_start_main's frames, _start, outermost (%d frames, stop %s)",
	      k - 1, n, sframe_bt_stop_name(sort_st.stop));
	CHECK(sort_st.frames_eh_frame > 0, "libc qsort: frames_eh_frame %d (sframe %d)",
	      sort_st.frames_eh_frame, sort_st.frames_sframe);
	CHECK(same_as_libgcc(fr, n, &sort_gcc),
	      "libc qsort: the same return addresses as libgcc's _Unwind_Backtrace (%d frames)",
	      sort_gcc.n);
}

/* A thread: twalk_main (started by libc) -> twalk -> the walk; its tail is
 * start_thread, then the thread's outermost frame in libc. */
static struct sframe_bt_frame thr_fr[MAXF];
static struct sframe_bt_status thr_st;
static int thr_n = -1;
static struct gcc_trace thr_gcc;

static bool thread_tail_right(const struct sframe_bt_frame *fr, int n, int at,
			      const struct sframe_bt_status *st)
{
	return at + 2 == n && fr[at].pc == thr_ra && in_libc(&fr[at]) &&
	       in_outer(&libc_outer, 0, &fr[at + 1]) &&
	       fr[at + 1].source == SFRAME_BT_FROM_EH_FRAME &&
	       st->stop == SFRAME_BT_STOP_OUTERMOST;
}

__attribute__((noinline)) int twalk(int x)
{
	thr_n = sframe_backtrace_ex(NULL, thr_fr, MAXF, 0, &thr_st);
	gcc_trace(&thr_gcc);
	return x + 1;
}

__attribute__((noinline)) void *twalk_main(void *arg)
{
	atomic_store(&thr_ra, strip_ra(__builtin_return_address(0)));
	int r = twalk((int)(intptr_t)arg);
	return (void *)(intptr_t)(r + 1);
}

static void test_libc_thread(void)
{
	pthread_t t;
	void *ret;
	if (pthread_create(&t, NULL, twalk_main, (void *)(intptr_t)3) || pthread_join(t, &ret)) {
		CHECK(0, "libc thread: pthread_create");
		return;
	}
	bool ok = thr_n == 4 && in_fn(&thr_fr[0], F_TWALK) && in_fn(&thr_fr[1], F_TWALK_MAIN) &&
		  thread_tail_right(thr_fr, thr_n, 2, &thr_st);
	if (!ok || thr_st.frames_eh_frame <= 0)
		show("libc thread", thr_fr, thr_n, &thr_st);
	CHECK(ok, "libc thread: twalk, twalk_main, start_thread, the thread's outermost frame "
		  "(undefined RA in libc's CFI), outermost (%d frames, stop %s)",
	      thr_n, sframe_bt_stop_name(thr_st.stop));
	CHECK(thr_st.frames_eh_frame > 0, "libc thread: frames_eh_frame %d",
	      thr_st.frames_eh_frame);
	CHECK(same_as_libgcc(thr_fr, thr_n, &thr_gcc),
	      "libc thread: the same return addresses as libgcc's _Unwind_Backtrace (%d frames)",
	      thr_gcc.n);
}

/* A fiber: a makecontext() context on a stack of its own (in .bss, apart
 * from the thread's) entering fwalk_main, whose return address is the one
 * makecontext() gives it: libc's trampoline for a fiber's end (x86-64's
 * __start_context, AArch64's __startcontext), which no call precedes. */
static struct sframe_bt_frame fib_fr[MAXF];
static struct sframe_bt_status fib_st;
static int fib_n = -1;
static struct gcc_trace fib_gcc;
static ucontext_t fib_back, fib_ctx;

__attribute__((noinline)) int fwalk(int x)
{
	fib_n = sframe_backtrace_ex(NULL, fib_fr, MAXF, 0, &fib_st);
	gcc_trace(&fib_gcc);
	return x + 1;
}

__attribute__((noinline)) void fwalk_main(void)
{
	fwalk(7);
}

/* Run fn on ctx, a makecontext() context on a stack of its own, from
 * fib_back, to which fn comes back (through link, or by a swapcontext()
 * of its own). */
#define FIB_STACK (64 * 1024)
static bool run_fiber(const char *what, ucontext_t *ctx, char *stack, void (*fn)(void),
		      ucontext_t *link)
{
	if (getcontext(ctx)) {
		CHECK(0, "%s: getcontext", what);
		return false;
	}
	ctx->uc_stack.ss_sp = stack;
	ctx->uc_stack.ss_size = FIB_STACK;
	ctx->uc_link = link;
	makecontext(ctx, fn, 0);
	if (swapcontext(&fib_back, ctx)) {
		CHECK(0, "%s: swapcontext", what);
		return false;
	}
	return true;
}

/* A fiber's walk: ok (its frames as want says, outermost), and the same
 * return addresses as libgcc's walk g from the same place. */
static void check_fiber_walk(const char *what, const char *want, bool ok,
			     const struct sframe_bt_frame *fr, int n,
			     const struct sframe_bt_status *st, const struct gcc_trace *g)
{
	if (!ok)
		show(what, fr, n, st);
	CHECK(ok, "%s: %s, outermost (%d frames, stop %s)", what, want, n,
	      sframe_bt_stop_name(st->stop));
	CHECK(same_as_libgcc(fr, n, g),
	      "%s: the same return addresses as libgcc's _Unwind_Backtrace (%d frames)", what, g->n);
}

static void test_libc_fiber(void)
{
	static char stack[FIB_STACK] __attribute__((aligned(16)));
	if (!run_fiber("libc fiber", &fib_ctx, stack, fwalk_main, &fib_back))
		return;
	bool ok = fib_n == 3 && in_fn(&fib_fr[0], F_FWALK) && in_fn(&fib_fr[1], F_FWALK_MAIN) &&
		  in_libc(&fib_fr[2]) && fib_st.stop == SFRAME_BT_STOP_OUTERMOST;
	check_fiber_walk("libc fiber", "fwalk, fwalk_main, then libc's trampoline makecontext() gave it",
			 ok, fib_fr, fib_n, &fib_st, &fib_gcc);
}

/* A fiber entered as boost.context's make_fcontext() enters one (PHP's
 * Fibers), without CFI as there: bfib_start sets the return register to
 * bfib_exit, the exit that follows the return of make_fcontext() itself,
 * and branches to bfib_body, which walks and goes back to the caller for
 * good.  The walk ends at the exit, as libgcc's _Unwind_Backtrace() ends
 * there (no FDE covers it). */
static struct sframe_bt_frame bfib_fr[MAXF];
static struct sframe_bt_status bfib_st;
static int bfib_n = -1;
static struct gcc_trace bfib_gcc;
static ucontext_t bfib_ctx, bfib_left;
void bfib_start(void);
extern const char bfib_exit[];
#if defined(__aarch64__)
__asm__(".text\n.globl bfib_start\n.type bfib_start, %function\n"
	"bfib_start:\n"
	"adr x30, bfib_exit\nmov x29, #0\nb bfib_body\n"
	"ret x30\n"
	".globl bfib_exit\nbfib_exit:\nmov x0, #0\nbl _exit\n"
	".size bfib_start, .-bfib_start\n");
#elif defined(__s390x__)
__asm__(".text\n.globl bfib_start\n.type bfib_start, @function\n"
	"bfib_start:\n"
	"larl %r14,bfib_exit\njg bfib_body\n"
	"br %r14\n"
	".globl bfib_exit\nbfib_exit:\nlghi %r2,0\nbrasl %r14,_exit@PLT\n"
	".size bfib_start, .-bfib_start\n");
#elif defined(__x86_64__)
__asm__(".text\n.globl bfib_start\n.type bfib_start, @function\n"
	"bfib_start:\n"
	"lea bfib_exit(%rip), %rbp\nlea bfib_body(%rip), %rbx\nand $-16, %rsp\n"
	"push %rbp\njmp *%rbx\n"
	".globl bfib_exit\nbfib_exit:\nxor %rdi, %rdi\ncall _exit@PLT\nhlt\n"
	".size bfib_start, .-bfib_start\n");
#endif

__attribute__((noinline)) int bwalk(int x)
{
	bfib_n = sframe_backtrace_ex(NULL, bfib_fr, MAXF, 0, &bfib_st);
	gcc_trace(&bfib_gcc);
	return x + 1;
}

__attribute__((noinline, used)) void bfib_body(void)
{
	bwalk(5);
	swapcontext(&bfib_left, &fib_back);
	_exit(1); /* never resumed */
}

static void test_boost_fiber(void)
{
	static char stack[FIB_STACK] __attribute__((aligned(16)));
	if (!run_fiber("boost fiber", &bfib_ctx, stack, bfib_start, NULL))
		return;
	bool ok = bfib_n == 3 && in_fn(&bfib_fr[0], F_BWALK) && in_fn(&bfib_fr[1], F_BFIB_BODY) &&
		  bfib_fr[2].pc == (uintptr_t)bfib_exit && bfib_st.stop == SFRAME_BT_STOP_OUTERMOST;
	check_fiber_walk("boost fiber", "bwalk, bfib_body, then the exit make_fcontext() gave it", ok,
			 bfib_fr, bfib_n, &bfib_st, &bfib_gcc);
}

/* Lazy binding: cross_cfi.so's cf_lazy calls cross_lazy_target through
 * its PLT, bound at that first call by the dynamic linker's resolver
 * (_dl_runtime_resolve, entered from the PLT header), which runs the
 * program's IFUNC resolver for it: a walk from there crosses the
 * resolver's frame.  glibc's AArch64 resolver has CFI whose CFA leaves out
 * the PLT header's push (arch.h, sfb_arch_fix_row()); as written it gives
 * cf_lazy twice and then garbage, as libgcc's unwinder gives it.  Ground
 * truth is the chain: lazy_resolve, the dynamic linker's frames,
 * cf_lazy once, lazy_drive, on to the outermost frame. */
static struct sframe_bt_frame lazy_fr[MAXF];
static struct sframe_bt_status lazy_st;
static int lazy_n = -1;

static int lazy_impl(int x)
{
	return x * 2;
}

__attribute__((noinline)) int (*lazy_resolve(void))(int)
{
	lazy_n = sframe_backtrace_ex(NULL, lazy_fr, MAXF, 0, &lazy_st);
	return lazy_impl;
}

int cross_lazy_target(int x) __attribute__((ifunc("lazy_resolve")));

__attribute__((noinline)) int lazy_drive(int (*f)(int), int x)
{
	return f(x) + 1;
}

/* Is pc in the dynamic linker (loaded at AT_BASE)? */
static bool in_ld_so(uintptr_t pc)
{
	Dl_info info;
	return dladdr((void *)(pc - 1), &info) && info.dli_fbase &&
	       (uintptr_t)info.dli_fbase == getauxval(AT_BASE);
}

#if defined(__aarch64__)
/* sfb_arch_fix_row() on the rows glibc's AArch64 resolver has, over its
 * code written out here, and on an ordinary function's: the resolver's
 * CFA moves up over the PLT's 16 bytes at its landing pad and wherever
 * its row saves x30 above the CFA; nothing else moves.  (At the landing
 * pad no walk through the real resolver can be made to stop.) */
static void test_resolver_rows(void)
{
	static const uint32_t resolver[3] = { 0xd503245f /* bti c */,
					      0xa9b327e8 /* stp x8, x9, [sp, #-208]! */,
					      0xa9011fe6 /* stp x6, x7, [sp, #16] */ };
	static const uint32_t plain[3] = { 0xd503245f /* bti c */,
					   0xa9bf7bfd /* stp x29, x30, [sp, #-16]! */,
					   0x910003fd /* mov x29, sp */ };
	uintptr_t r = (uintptr_t)resolver, p = (uintptr_t)plain;
	const struct sfb_row entry = { .cfa = { SFB_LOC_EXPR, 0, SFB_DWARF_SP, 0 },
				       .ra = { SFB_LOC_SAME, 0, 0, 0 } };
	struct sfb_row e = entry;
	e.func_start = r;
	sfb_arch_fix_row(r, r, r + sizeof resolver, &e);
	struct sfb_row body = { .func_start = r, .cfa = { SFB_LOC_EXPR, 0, SFB_DWARF_SP, 208 },
				.ra = { SFB_LOC_EXPR, 1, SFB_REG_CFA, 8 }, .nregs = 1 };
	body.regs[0] = (struct sfb_reg_rule){ 8, { SFB_LOC_EXPR, 1, SFB_REG_CFA, -208 } };
	sfb_arch_fix_row(r + 8, r, r + sizeof resolver, &body);
	CHECK(e.cfa.off == 16 && e.ra.kind == SFB_LOC_SAME && body.cfa.off == 224 &&
		      body.ra.off == -8 && body.regs[0].loc.off == -224,
	      "resolver rows: the landing pad's CFA SP+%d (16), the body's SP+%d (224) with x30 "
	      "at CFA%+d (-8), x8 at CFA%+d (-224)",
	      e.cfa.off, body.cfa.off, body.ra.off, body.regs[0].loc.off);
	struct sfb_row pe = entry, later = entry;
	pe.func_start = p;
	sfb_arch_fix_row(p, p, p + sizeof plain, &pe);
	later.func_start = r;
	sfb_arch_fix_row(r + 4, r, r + sizeof resolver, &later);
	CHECK(pe.cfa.off == 0 && later.cfa.off == 0,
	      "an ordinary function's entry row, and a CFA = SP row past the resolver's landing "
	      "pad, are left alone (CFA SP+%d, SP+%d)", pe.cfa.off, later.cfa.off);
	/* Code is read only inside [lo, hi): a return address after a BL
	 * is one there, and not where the BL lies below lo (a gap between
	 * an object's segments may be PROT_NONE). */
	static const uint32_t call[2] = { 0x94000000 /* bl . */, 0xd503201f /* nop */ };
	uintptr_t c = (uintptr_t)call, after = c + 4;
	CHECK(sfb_arch_is_return_address(after, c, c + sizeof call) &&
		      !sfb_arch_is_return_address(after, after, c + sizeof call) &&
		      !sfb_arch_is_return_address(after, c + sizeof call, c + sizeof call + 64),
	      "a return address after a BL: one inside the code, none where the BL lies below it");
}
#endif

static void test_lazy_binding(void *cfi_lib)
{
	int (*cf_lazy)(int) = NULL;
	if (cfi_lib)
		*(void **)&cf_lazy = dlsym(cfi_lib, "cf_lazy");
	if (!cf_lazy) {
		CHECK(0, "lazy binding: cf_lazy in cross_cfi.so");
		return;
	}
	int r = lazy_drive(cf_lazy, 5);
	int k = 1, ld = 0;
	while (k < lazy_n && in_ld_so(lazy_fr[k].pc))
		k++, ld++;
	bool ok = r == 12 && lazy_n > k + 1 && in_fn(&lazy_fr[0], F_LAZY_RESOLVE) && ld >= 1 &&
		  in_fn(&lazy_fr[k], F_CF_LAZY) && in_fn(&lazy_fr[k + 1], F_LAZY_DRIVE) &&
		  lazy_st.stop == SFRAME_BT_STOP_OUTERMOST;
	if (!ok)
		show("lazy binding", lazy_fr, lazy_n, &lazy_st);
	CHECK(ok, "lazy binding: a walk from an IFUNC resolver run at a PLT call's first binding: "
		  "lazy_resolve, %d frames of the dynamic linker, cf_lazy once, lazy_drive, to the "
		  "outermost frame (%d frames, stop %s)", ld, lazy_n, sframe_bt_stop_name(lazy_st.stop));
#if defined(__aarch64__)
	/* The resolver's own entry row, as this glibc's CFI gives it, and
	 * corrected: its landing pad told by its code. */
	struct sfb_object o;
	struct sfb_row row, at;
	uintptr_t ra = k >= 2 ? lazy_fr[k - 1].pc : 0;
	bool got = ra && sfb_objcache_find(ra, &o) == 0 && sfb_object_row(&o, ra - 1, 0, &row) == 0 &&
		   sfb_object_row(&o, row.func_start, 0, &at) == 0;
	int before = got ? at.cfa.off : -1;
	if (got)
		sfb_arch_fix_row(row.func_start, o.exec_lo, o.exec_hi, &at);
	CHECK(got && before == 0 && at.cfa.off == 16 && at.ra.kind == SFB_LOC_SAME,
	      "lazy binding: the dynamic linker's resolver's entry row, CFA SP+%d as its CFI has "
	      "it, SP+%d corrected (16)", before, got ? at.cfa.off : -1);
#endif
}

/* SIGUSR1 samples of threads copying big buffers (memset, memcpy) and
 * sorting them (qsort, calling back cmp_plain): those that land in libc,
 * or in cmp_plain under libc's frames, walk through libc's frames to the
 * thread's chain. */
#define MEM_THREADS 2
#define MEM_SAMPLES 40
#define MEM_SIZE (1 << 20)
#define MEM_SORT 4096 /* ints */
static _Atomic int mem_stop, mem_go, mem_in_libc, mem_in_cb, mem_elsewhere, mem_right,
	mem_wrong, mem_no_eh, mem_shown, mem_in_plt;
/* libc's .plt: its stubs have no CFI (ld writes none on AArch64 and s390x),
 * so a sample there stops at once with no-unwind-info. */
static struct sframe_bt_frame mem_bad_fr[MAXF];
static struct sframe_bt_status mem_bad_st;
static int mem_bad_n;

__attribute__((noinline)) int mem_loop(char *buf)
{
	volatile size_t sz = MEM_SIZE / 8;
	int *v = (int *)(buf + MEM_SIZE / 2);
	unsigned x = 1;
	int i = 0;
	atomic_fetch_add(&mem_go, 1);
	while (!atomic_load_explicit(&mem_stop, memory_order_relaxed)) {
		memset(buf, i++, sz);
		memcpy(buf + sz, buf, sz);
		for (int j = 0; j < MEM_SORT; j++)
			v[j] = (int)((x = x * 1103515245u + 12345u) >> 8);
		qsort(v, MEM_SORT, sizeof v[0], cmp_plain);
	}
	return buf[i % MEM_SIZE] + v[0];
}

__attribute__((noinline)) void *mem_main(void *arg)
{
	atomic_store(&thr_ra, strip_ra(__builtin_return_address(0)));
	int r = mem_loop(arg);
	return (void *)(intptr_t)(r + 1);
}

static void on_usr1_libc(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	int e = errno;
	uintptr_t pc = (uintptr_t)UC_PC((ucontext_t *)uc);
	bool in_cb = pc >= fn_lo[F_CMP_PLAIN] && pc < fn_hi[F_CMP_PLAIN];
	if (!in_cb && (pc < libc_lo || pc >= libc_hi)) {
		atomic_fetch_add(&mem_elsewhere, 1);
		return;
	}
	struct sframe_bt_frame fr[MAXF];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(uc, fr, MAXF, 0, &st);
	int from = in_cb ? 1 : 0, k = from + 1;
	while (k < n && in_libc(&fr[k]))
		k++;
	/* (cmp_plain,) libc (the first exact unless under cmp_plain), mem_loop,
	 * mem_main, start_thread, the outermost frame */
	bool ok = n > 0 && fr[0].exact && fr[0].pc == pc && libc_run_right(fr, n, from, k) &&
		  k + 1 < n && in_fn(&fr[k], F_MEM_LOOP) && in_fn(&fr[k + 1], F_MEM_MAIN) &&
		  thread_tail_right(fr, n, k + 2, &st);
	if (pc >= plt_lo && pc < plt_hi)
		atomic_fetch_add(&mem_in_plt, 1);
	atomic_fetch_add(ok ? &mem_right : &mem_wrong, 1);
	if (st.frames_eh_frame <= 0)
		atomic_fetch_add(&mem_no_eh, 1);
	if ((!ok || st.frames_eh_frame <= 0) && !atomic_exchange(&mem_shown, 1)) {
		memcpy(mem_bad_fr, fr, sizeof fr);
		mem_bad_st = st, mem_bad_n = n;
	}
	atomic_fetch_add(in_cb ? &mem_in_cb : &mem_in_libc, 1);
	errno = e;
}

static void test_libc_sample(void)
{
	struct sigaction sa = { 0 }, old;
	sa.sa_sigaction = on_usr1_libc;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, &old);
	static char bufs[MEM_THREADS][MEM_SIZE];
	pthread_t th[MEM_THREADS];
	for (int i = 0; i < MEM_THREADS; i++)
		pthread_create(&th[i], NULL, mem_main, bufs[i]);
	while (atomic_load(&mem_go) < MEM_THREADS)
		usleep(1000);
	for (int round = 0; round < MEM_SAMPLES * 40 &&
			    (mem_in_libc < MEM_SAMPLES * MEM_THREADS || mem_in_cb < MEM_SAMPLES);
	     round++) {
		for (int i = 0; i < MEM_THREADS; i++)
			pthread_kill(th[i], SIGUSR1);
		usleep(2000);
	}
	atomic_store(&mem_stop, 1);
	for (int i = 0; i < MEM_THREADS; i++)
		pthread_join(th[i], NULL);
	sigaction(SIGUSR1, &old, NULL);
	if (mem_shown)
		show("libc sample", mem_bad_fr, mem_bad_n, &mem_bad_st);
	CHECK(mem_in_libc >= MEM_SAMPLES && mem_in_cb >= MEM_SAMPLES / 4,
	      "libc sample: %d samples in libc (memset, memcpy, qsort), %d in qsort's callback "
	      "cmp_plain (%d elsewhere)", (int)mem_in_libc, (int)mem_in_cb, (int)mem_elsewhere);
	CHECK(mem_wrong == 0 && mem_right == mem_in_libc + mem_in_cb,
	      "libc sample: ucontext walks from libc give libc's frames by its CFI, mem_loop, "
	      "mem_main, start_thread, the outermost frame: %d right, %d wrong (%d of them in "
	      "libc's .plt, stepped by the architecture's PLT row)",
	      (int)mem_right, (int)mem_wrong, (int)mem_in_plt);
	CHECK(mem_no_eh == 0, "libc sample: frames_eh_frame > 0 in every walk (%d without)",
	      (int)mem_no_eh);
}

/* The address range of section name in the ELF file path loaded at base. */
static bool section_range(const char *path, uintptr_t base, const char *name, uintptr_t *lo,
			  uintptr_t *hi)
{
	static ElfW(Shdr) sh[256];
	static char names[4096];
	ElfW(Ehdr) eh;
	bool found = false;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_shnum <= 256 &&
	    eh.e_shstrndx < eh.e_shnum &&
	    pread(fd, sh, eh.e_shnum * sizeof sh[0], (off_t)eh.e_shoff) ==
		    (ssize_t)(eh.e_shnum * sizeof sh[0])) {
		ssize_t len = pread(fd, names, sizeof names - 1, (off_t)sh[eh.e_shstrndx].sh_offset);
		names[len > 0 ? len : 0] = 0;
		for (int i = 0; len > 0 && i < eh.e_shnum; i++)
			if (sh[i].sh_name < (size_t)len && !strcmp(names + sh[i].sh_name, name)) {
				*lo = base + sh[i].sh_addr;
				*hi = *lo + sh[i].sh_size;
				found = true;
			}
	}
	close(fd);
	return found;
}

/* Contexts as if action_plt had just called a stub of libc's .plt: its
 * registers at its call of getcontext(), the PC on each instruction of the
 * first stub after the 32-byte PLT0 (AArch64: adrp, ldr, add, br; s390x:
 * larl, lg, br, basr, lgf, jg).  The stub has no CFI; each walk must stop
 * there with a reason or give action_plt and the chain, nothing else. */
#if defined(__aarch64__)
#define PLT_STUB_CODE 16
#elif defined(__s390x__)
#define PLT_STUB_CODE 26
#else
#define PLT_STUB_CODE 1
static unsigned insn_len(const uint8_t *c) { (void)c; return 1; }
#endif
static int plt_right, plt_stopped, plt_wrong, plt_insns;

__attribute__((noinline)) int action_plt(int x)
{
	static ucontext_t uc;
	getcontext(&uc);
#if defined(__s390x__)
	uc.uc_mcontext.psw.mask |= 0x180000000ul; /* 64-bit mode, as in a signal's context */
#endif
	int exp[NCHAIN + 1], ne = expect_from(F_ACTION_PLT, exp);
	for (uintptr_t a = plt_lo + 32; a < plt_lo + 32 + PLT_STUB_CODE;
	     a += insn_len((const uint8_t *)a)) {
		UC_PC(&uc) = a;
		walk_n = sframe_backtrace_ex(&uc, walk_fr, MAXF, 0, &walk_st);
		int r = walk_n > 0 && walk_fr[0].pc == a && walk_fr[0].exact
				? judge(walk_fr, walk_n, 1, &walk_st, exp, ne)
				: WRONG;
		if (r != RIGHT && plt_insns == 0)
			show("libc plt", walk_fr, walk_n, &walk_st);
		plt_insns++;
		*(r == RIGHT ? &plt_right : r == STOPPED ? &plt_stopped : &plt_wrong) += 1;
	}
	return x + 1;
}

static void test_libc_plt(void)
{
	action = action_plt;
	drive(6);
	action = NULL;
	CHECK(plt_insns > 0 && plt_right == plt_insns,
	      "libc plt: walks from each of the %d instructions of a stub of libc's .plt (no "
	      "CFI: the stub's row is the architecture's): %d give the caller and the chain, "
	      "%d stop there with a reason, %d wrong",
	      plt_insns, plt_right, plt_stopped, plt_wrong);
}

/* Ranges for the libc tests: argv[3] and argv[4] list the outermost FDEs
 * of libc and of this program. */
static bool libc_setup(const char *libc_outer_path, const char *prog_outer_path)
{
	struct loaded_object q;
	Dl_info info;
	extern char _start[];
	start_addr = (uintptr_t)_start;
	bool ok = loaded_object_of((void *)qsort, &q) && dladdr((void *)qsort, &info) &&
		  strstr(info.dli_fname, "libc.so");
	if (ok) {
		libc_lo = q.lo, libc_hi = q.hi;
		ok = load_outer(libc_outer_path, q.bias, &libc_outer) > 0 &&
		     section_range(info.dli_fname, q.bias, ".plt", &plt_lo, &plt_hi);
	}
	CHECK(ok, "libc: its range, its .plt, and its outermost FDEs from %s (%d)",
	      libc_outer_path, libc_outer.n);
	bool pok = loaded_object_of(_start, &q) &&
		   load_outer(prog_outer_path, q.bias, &prog_outer) > 0;
	bool has_start = false;
	for (int i = 0; i < prog_outer.n; i++)
		has_start |= prog_outer.lo[i] == start_addr;
	CHECK(pok && has_start, "libc: the program's outermost FDEs from %s, one at _start",
	      prog_outer_path);
	return ok && pok && has_start;
}

/* A key no walk looks up (the address of data, never a return address)
 * and an epoch no object has (SFB_MEMO_KEPT_EPOCH - 2 is reached by no
 * description here): the memo is the process's own. */
static const char memo_key_place[16];

static void test_memo(void)
{
	const uintptr_t key = (uintptr_t)memo_key_place;
	const uint32_t epoch = SFB_MEMO_KEPT_EPOCH - 2;
	const struct sfb_memo_row put = { .cfa_word = 48, .ra_slot = -1, .fp_slot = -2 };
	struct sfb_memo_row got;
	sfb_memo_put(key, epoch, &put);
	bool found = sfb_memo_get(key, epoch, &got) != NULL;
	CHECK(found && got.cfa_word == 48 && got.ra_slot == -1 && got.fp_slot == -2,
	      "memo: a row put is found again under its epoch (sequence and epoch read as one word)");
	CHECK(!sfb_memo_get(key, epoch + 1, &got) && !sfb_memo_get(key, epoch ^ 0x10000u, &got) &&
		      !sfb_memo_get(key + 1, epoch, &got),
	      "memo: not under another epoch, nor another key");
}

int main(int argc, char **argv)
{
	main_ra = strip_ra(__builtin_return_address(0));
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *lib = argc > 1 ? argv[1] : "cross_lib.so";
	void *h = dlopen(lib, RTLD_NOW);
	CHECK(h != NULL, "dlopen %s", lib);
	if (!h) {
		printf("# %s\n", dlerror());
		CHECK_DONE();
	}
	*(void **)&lb_a = dlsym(h, "lb_a");
	/* cross_fp.so, next to cross_lib.so. */
	char fp_path[4096];
	snprintf(fp_path, sizeof fp_path, "%s", lib);
	char *slash = strrchr(fp_path, '/');
	snprintf(slash ? slash + 1 : fp_path, sizeof fp_path - (size_t)(slash ? slash + 1 - fp_path : 0),
		 "cross_fp.so");
	fp_lib = dlopen(fp_path, RTLD_NOW);
	if (fp_lib)
		*(void **)&fp_a = dlsym(fp_lib, "fp_a");
	/* cross_cfi.so, next to it too. */
	snprintf(slash ? slash + 1 : fp_path, sizeof fp_path - (size_t)(slash ? slash + 1 - fp_path : 0),
		 "cross_cfi.so");
	void *cfi_lib = dlopen(fp_path, RTLD_LAZY); /* cf_lazy's call is bound lazily */
	if (cfi_lib)
		*(void **)&cf_a = dlsym(cfi_lib, "cf_a");
	void *fp[NF] = {
		(void *)action_walk, (void *)spin,     (void *)action_trap, (void *)cb,
		dlsym(h, "lb_c"),    dlsym(h, "lb_b"), dlsym(h, "lb_a"),    (void *)ex_b,
		(void *)ex_a,	     (void *)drive,    (void *)on_usr1,	    (void *)on_trap,
		(void *)fault_fn,    (void *)on_segv,  (void *)outer_cb,    (void *)cross_outermost,
		(void *)fx_drive,    (void *)action_capture,  fp_lib ? dlsym(fp_lib, "fp_a") : NULL,
		fp_lib ? dlsym(fp_lib, "fp_b") : NULL, (void *)drive_fp, (void *)cmp_walk,
		(void *)sort_caller, (void *)main,	(void *)twalk,	    (void *)twalk_main,
		(void *)mem_loop,    (void *)mem_main,	dlsym(RTLD_DEFAULT, "__libc_start_main"),
		cfi_lib ? dlsym(cfi_lib, "cf_a") : NULL, cfi_lib ? dlsym(cfi_lib, "cf_b") : NULL,
		cfi_lib ? dlsym(cfi_lib, "cf_c") : NULL, (void *)drive_cfi,
		dlsym(RTLD_DEFAULT, "qsort_r"), (void *)sort_bp, (void *)cmp_plain,
		(void *)action_plt, (void *)fwalk, (void *)fwalk_main,
		(void *)bwalk,	     (void *)bfib_body,
		cfi_lib ? dlsym(cfi_lib, "cf_lazy") : NULL, (void *)lazy_resolve, (void *)lazy_drive,
	};
	test_memo();
	bool all = true;
	for (int f = 0; f < NF; f++)
		all &= range_of(fp[f], f);
	CHECK(all, "every function's range from dladdr1()");
	/* The prebuilt fixture library of this architecture and version. */
	static const char *const fx_fns[] = {
		"use",	    "frame_small", "frame_1k", "frame_128k", "drap", "alloca",
		"plt_calls", "plt_got",	   "sigframe", "ra_undef_mid", "run_all",
#if defined(__aarch64__)
		"pac_a",    "pac_b",
#elif defined(__s390x__)
		"fp_only",  "regsave",	   "cfa_r1",
#endif
	};
	void *fxh = argc > 2 ? dlopen(argv[2], RTLD_NOW) : NULL;
	if (argc > 2) {
		CHECK(fxh != NULL, "dlopen %s", argv[2]);
		char sym[64];
		for (unsigned i = 0; fxh && i < sizeof fx_fns / sizeof fx_fns[0]; i++) {
			snprintf(sym, sizeof sym, "fx_lib_%s", fx_fns[i]);
			fx_name[nfx] = fx_fns[i];
			if (range_of(dlsym(fxh, sym), NF + nfx))
				nfx++;
			else
				CHECK(0, "fixture function %s", sym);
		}
		if (fxh)
			*(void **)&fx_run_all = dlsym(fxh, "fx_lib_run_all");
	}
	sig_install(SIGUSR1, on_usr1, SA_RESTART);

#if defined(__ARM_FEATURE_PAC_DEFAULT)
	/* Signatures are real (qemu -cpu max), or the PAC builds test nothing:
	 * pacia1716 signs x17 with modifier x16, xpaclri strips it off.  With
	 * a 48-bit address space and the top byte ignored, a signature is
	 * 7 bits, so one pointer signs to itself once in 128 processes:
	 * sixteen modifiers, of which one signature must differ. */
	bool pac_on = false, strips = true;
	uintptr_t signed_cb = 0;
	for (uintptr_t m = 1; m <= 16; m++) {
		register uintptr_t x17 __asm__("x17") = (uintptr_t)cb, x16 __asm__("x16") = m;
		__asm__ volatile("hint 8" : "+r"(x17) : "r"(x16));
		register uintptr_t x30 __asm__("x30") = x17;
		__asm__ volatile("hint 7" : "+r"(x30));
		if (x17 != (uintptr_t)cb)
			pac_on = true, signed_cb = x17;
		strips &= x30 == (uintptr_t)cb;
	}
	CHECK(pac_on && strips, "pointer authentication is on: %#lx signed is %#lx",
	      (unsigned long)(uintptr_t)cb, (unsigned long)signed_cb);
#endif
	test_chain();
	test_report();
	test_fp();
	test_cfi();
	test_threads();
	test_nested();
	test_outermost();
	test_garbage();
	if (argc > 4 && libc_setup(argv[3], argv[4])) {
		sort_caller(argc);
		test_libc_sort();
		test_libc_thread();
		test_libc_fiber();
		test_libc_sample();
		test_libc_plt();
	}
	test_boost_fiber();
	test_lazy_binding(cfi_lib);
#if defined(__aarch64__)
	test_resolver_rows();
#endif
	test_every_insn();
	CHECK_DONE();
}
