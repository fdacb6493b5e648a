/* Registered code under churn: registrar threads register and unregister
 * JIT functions all along while runner threads call them, each runner
 * sampled at 5 kHz by a timer of its own (SIGPROF), and every walk, the
 * runners' own from a callback the JIT code calls and the samples', is
 * judged against ground truth.  10.5 s when built with AddressSanitizer,
 * with SFB_ASAN or SFB_VALGRIND set (make test-asan, make test-valgrind),
 * under valgrind, 2 s otherwise (SFB_JIT_CHURN_SECONDS overrides).
 *
 * Each of SLOTS JIT functions (x86-64: sub $8,%rsp; nops; call *%rdi;
 * add $8,%rsp; ret) has a code page and a page for its .eh_frame.  A
 * registrar keeps its slots registered but one, in turn: it unregisters
 * it, overwrites its tables and makes their page inaccessible, waits a
 * moment, makes the page writable, writes the tables and registers them
 * again (half the slots through sframe_jit_register(), half by key as the
 * preloads' __register_frame() does).  A walk that read tables after
 * their unregistration returned would fault, in every build; the
 * registry's own memory, freed then, is AddressSanitizer's and
 * valgrind's to watch.
 *
 * A wrong frame: a PC in a slot's code that is not its call's return
 * address (but for a sample's first frame), or a JIT frame whose caller is
 * not run_slot() (its extent from the symbol table: the program is linked
 * with -rdynamic).  A sample taken in JIT code and walked past it must
 * reach the outermost frame.  A hang: the watchdog (alarm) ends the
 * program. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "objects/jit_registry.h"

#if defined(__x86_64__)

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

#define SLOTS 8
#define RUNNERS 2
#define REGISTRARS 2
#define PAGE 4096
#define FN_SIZE 17
#define RET_OFF 12
#define SAMPLE_NS 200000 /* 5 kHz */

static uint8_t *area; /* slot s: code at 2 s pages, tables at 2 s + 1 */

static uint8_t *code_of(unsigned s)
{
	return area + (size_t)2 * s * PAGE;
}

static uint8_t *tables_of(unsigned s)
{
	return code_of(s) + PAGE;
}

static void put4(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* CIE (zR, pcrel sdata4: CFA = rsp + 8, RA at CFA - 8), one FDE (advance
 * 4: CFA offset 16; advance 12: 8), a zero terminator. */
static size_t write_tables(unsigned s)
{
	static const uint8_t cie[24] = { 20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16,
					 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0 };
	static const uint8_t insns[8] = { 0, 0x44, 0x0e, 16, 0x4c, 0x0e, 8, 0 };
	uint8_t *t = tables_of(s), *f = t + 24;
	memcpy(t, cie, sizeof cie);
	put4(f, 20);
	put4(f + 4, 28);
	put4(f + 8, (uint32_t)((uintptr_t)code_of(s) - (uintptr_t)(f + 8)));
	put4(f + 12, FN_SIZE);
	memcpy(f + 16, insns, sizeof insns);
	memset(f + 24, 0, 4);
	return 52;
}

/* ---- Ground truth and judging -------------------------------------------- */

static uintptr_t run_lo, run_hi;
static atomic_long judged, through, wrong, sampled_in_jit, sampled_in_jit_cut;
static atomic_int saved;
static uintptr_t wrong_pcs[32];
static int wrong_n;

static int slot_at(uintptr_t pc)
{
	if (pc < (uintptr_t)area || pc >= (uintptr_t)area + (size_t)2 * SLOTS * PAGE)
		return -1;
	return (int)((pc - (uintptr_t)area) / (2 * PAGE));
}

/* Async-signal-safe: atomics and a one-time copy. */
static void judge(const struct sframe_bt_frame *f, int n, int stop, bool sampled)
{
	bool bad = false, jit = false;
	for (int i = 0; i < n; i++) {
		int s = slot_at(f[i].pc);
		if (s < 0)
			continue;
		uintptr_t off = f[i].pc - (uintptr_t)code_of((unsigned)s);
		jit = true;
		if (sampled && i == 0 ? off >= FN_SIZE : off != RET_OFF)
			bad = true;
		if (i + 1 < n && (f[i + 1].pc < run_lo || f[i + 1].pc >= run_hi))
			bad = true;
	}
	if (sampled && n > 0 && slot_at(f[0].pc) >= 0) {
		atomic_fetch_add(&sampled_in_jit, 1);
		if (n > 1 && stop != SFRAME_BT_STOP_OUTERMOST) {
			atomic_fetch_add(&sampled_in_jit_cut, 1);
			bad = true;
		}
	}
	atomic_fetch_add(&judged, 1);
	if (jit)
		atomic_fetch_add(&through, 1);
	if (bad) {
		atomic_fetch_add(&wrong, 1);
		int zero = 0;
		if (atomic_compare_exchange_strong(&saved, &zero, 1)) {
			wrong_n = n < 32 ? n : 32;
			for (int i = 0; i < wrong_n; i++)
				wrong_pcs[i] = f[i].pc;
		}
	}
}

/* ---- Runners ------------------------------------------------------------- */

static atomic_bool stop_all;
static atomic_long calls, samples, expirations;

static __attribute__((noinline)) void callback(void)
{
	struct sframe_bt_frame f[64];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(NULL, f, 64, 0, &st);
	judge(f, n, st.stop, false);
}

/* Calls slot s's function; the count after the call keeps it a call. */
__attribute__((noinline, visibility("default"))) void run_slot(unsigned s)
{
	((void (*)(void (*)(void)))(void *)code_of(s))(callback);
	atomic_fetch_add(&calls, 1);
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	struct sframe_bt_frame f[64];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(uc, f, 64, 0, &st);
	judge(f, n, st.stop, true);
	atomic_fetch_add(&samples, 1);
	/* The timer's expirations: one a signal, plus those merged into it
	 * while the runner waited for a CPU. */
	atomic_fetch_add(&expirations, 1 + (si->si_code == SI_TIMER ? si->si_overrun : 0));
}

static void *runner(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF };
#ifdef sigev_notify_thread_id
	sev.sigev_notify_thread_id = gettid();
#else
	sev._sigev_un._tid = gettid();
#endif
	timer_t timer;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer))
		return NULL;
	struct itimerspec its = { { 0, SAMPLE_NS }, { 0, SAMPLE_NS } };
	timer_settime(timer, 0, &its, NULL);
	while (!atomic_load(&stop_all))
		run_slot(k++ % SLOTS);
	timer_delete(timer);
	return NULL;
}

/* ---- Registrars ---------------------------------------------------------- */

static atomic_long registered_ok, unregistered_ok, reg_errors;

/* Slot s's tables written and registered: 0, or an error counted. */
static int register_slot(unsigned s)
{
	uint8_t *t = tables_of(s);
	if (mprotect(t, PAGE, PROT_READ | PROT_WRITE)) {
		atomic_fetch_add(&reg_errors, 1);
		return -1;
	}
	size_t len = write_tables(s);
	struct sframe_jit_code c = { .start = (uintptr_t)code_of(s),
				     .end = (uintptr_t)code_of(s) + FN_SIZE,
				     .kind = SFRAME_JIT_EH_FRAME,
				     .tables = t,
				     .tables_size = len };
	int err = s & 1 ? sfb_jit_register_eh_frame(t, PAGE, NULL) : sframe_jit_register(&c);
	atomic_fetch_add(err ? &reg_errors : &registered_ok, 1);
	return err;
}

/* Slot s unregistered, its tables overwritten and made inaccessible, as
 * a caller may once unregistration returns. */
static void unregister_slot(unsigned s)
{
	uint8_t *t = tables_of(s);
	int err = s & 1 ? sfb_jit_unregister_eh_frame(t)
			: sframe_jit_unregister((uintptr_t)code_of(s));
	atomic_fetch_add(err ? &reg_errors : &unregistered_ok, 1);
	memset(t, 0xcc, PAGE);
	mprotect(t, PAGE, PROT_NONE);
}

/* Registrar r keeps its slots registered but one at a time, which it
 * unregisters, leaves unregistered for a moment, and registers again. */
static void *registrar(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg;
	bool on[SLOTS] = { false };
	for (unsigned s = r; s < SLOTS; s += REGISTRARS)
		on[s] = register_slot(s) == 0;
	while (!atomic_load(&stop_all)) {
		for (unsigned s = r; s < SLOTS; s += REGISTRARS) {
			if (on[s])
				unregister_slot(s);
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
			on[s] = register_slot(s) == 0;
		}
	}
	for (unsigned s = r; s < SLOTS; s += REGISTRARS)
		if (on[s])
			unregister_slot(s);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	const char *asan = getenv("SFB_ASAN");
	double secs = ASAN_BUILD || (asan && *asan && strcmp(asan, "0")) || under_valgrind() ? 10.5
												: 2.0;
	const char *e = getenv("SFB_JIT_CHURN_SECONDS");
	if (e && *e)
		secs = strtod(e, NULL);
	/* A hang ends the program (and run.sh counts it failed). */
	alarm((unsigned)secs + 240);

	Dl_info di;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1((void *)(uintptr_t)run_slot, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !sym->st_size) {
		CHECK(0, "run_slot's extent from the symbol table");
		CHECK_DONE();
	}
	run_lo = (uintptr_t)di.dli_saddr;
	run_hi = run_lo + sym->st_size;

	area = mmap(NULL, (size_t)2 * SLOTS * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	static const uint8_t fn[FN_SIZE] = { 0x48, 0x83, 0xec, 0x08, 0x0f, 0x1f, 0x44, 0x00, 0x00,
					     0x90, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	for (unsigned s = 0; s < SLOTS; s++) {
		mprotect(code_of(s), PAGE, PROT_READ | PROT_WRITE);
		memcpy(code_of(s), fn, sizeof fn);
		mprotect(code_of(s), PAGE, PROT_READ | PROT_EXEC);
	}
	sframe_backtrace_warmup();
	struct sigaction sa = { .sa_sigaction = on_prof, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigaction(SIGPROF, &sa, NULL);

	pthread_t run[RUNNERS], reg[REGISTRARS];
	double t0 = now_s();
	for (unsigned i = 0; i < REGISTRARS; i++)
		pthread_create(&reg[i], NULL, registrar, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < RUNNERS; i++)
		pthread_create(&run[i], NULL, runner, (void *)(uintptr_t)(i * 3));
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	while (nanosleep(&ts, &ts))
		;
	atomic_store(&stop_all, true);
	for (unsigned i = 0; i < RUNNERS; i++)
		pthread_join(run[i], NULL);
	for (unsigned i = 0; i < REGISTRARS; i++)
		pthread_join(reg[i], NULL);
	double took = now_s() - t0;
	signal(SIGPROF, SIG_IGN);

	printf("# %.1f s: %ld registrations, %ld unregistrations; %ld calls of JIT code; %ld "
	       "samples (%.0f a second a runner, of %.0f timer expirations); %ld walks judged, "
	       "%ld through JIT code; %ld samples in JIT code\n",
	       took, atomic_load(&registered_ok), atomic_load(&unregistered_ok),
	       atomic_load(&calls), atomic_load(&samples),
	       atomic_load(&samples) / took / RUNNERS,
	       atomic_load(&expirations) / took / RUNNERS, atomic_load(&judged),
	       atomic_load(&through), atomic_load(&sampled_in_jit));
	CHECK(took >= secs, "ran %.1f s (>= %.1f)", took, secs);
	CHECK(atomic_load(&reg_errors) == 0 && atomic_load(&registered_ok) > 0 &&
		      atomic_load(&registered_ok) == atomic_load(&unregistered_ok) &&
		      sfb_jit_count() == 0,
	      "every registration and unregistration succeeded (%ld errors), none left",
	      atomic_load(&reg_errors));
	CHECK(atomic_load(&samples) > 0 && atomic_load(&through) > 0,
	      "walks went through registered JIT code (%ld of %ld)", atomic_load(&through),
	      atomic_load(&judged));
	CHECK(atomic_load(&wrong) == 0,
	      "no wrong frame in %ld walks (%ld wrong; samples in JIT code cut short: %ld)",
	      atomic_load(&judged), atomic_load(&wrong), atomic_load(&sampled_in_jit_cut));
	if (atomic_load(&wrong)) {
		printf("# the first wrong walk (run_slot at %#lx..%#lx, slots at %p):\n",
		       (unsigned long)run_lo, (unsigned long)run_hi, (void *)area);
		for (int i = 0; i < wrong_n; i++)
			printf("#   %d %#lx\n", i, (unsigned long)wrong_pcs[i]);
	}
	CHECK_DONE();
}

#else
int main(void)
{
	printf("ok - # SKIP the JIT code is x86-64's\n");
	return check_failures;
}
#endif
