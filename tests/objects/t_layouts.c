/* Whole walks through a main program of any segment layout (gaps between
 * segments, -z separate-code or not, a large max-page-size, PIE or not,
 * a text segment at a fixed address), with SFrame rows or .eh_frame only:
 * tests/objects/build.mk builds this file once per layout and
 * t_layouts.sh runs each build; `make test` also runs the default build.
 *
 * A chain of DEPTH functions without frame pointers (through a shared
 * object of its own, itself linked with a gap between its segments, where
 * LAYOUT_LIB is defined) is walked three ways, each checked whole against
 * two ground truths: every return address the chain's functions recorded
 * themselves (__builtin_return_address), in order, and libgcc's
 * _Unwind_Backtrace() on the same context; every walk must end at the
 * outermost frame, in _start.
 *   normal  sframe_backtrace_ex(NULL) at the bottom of the chain;
 *   raise   the bottom raises SIGUSR1: sframe_backtrace_ex(uc) in the
 *           handler, from the interrupted PC in libc;
 *   sample  the bottom spins under a CPU-time timer: each SIGPROF sample,
 *           at whatever instruction it interrupts. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "backtrace.h"
#include "check.h"
#include "gcc_compare.h"
#include "sig_install.h"
#include "uc_regs.h"

#define DEPTH 24
#define SAMPLES 20

extern char _start[];

/* Return addresses as the chain's functions saw them: ra[k] is where
 * chain function k returns to (ra[0]: into main; main_ra: into libc). */
static uintptr_t ra[DEPTH];
static uintptr_t main_ra;
#ifdef LAYOUT_LIB
/* In the shared object (layouts_lib.c): a chain of its own, whose return
 * addresses it records in ras[] (ras[4]: into main), then a call through
 * `next`. */
unsigned layout_lib_chain(unsigned x, unsigned (*next)(unsigned), uintptr_t *ras);
static uintptr_t lib_ra[5];
#endif

#define RA() ((uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))

/* The walk is whole: libgcc's frames from the same place, the chain's
 * return addresses in order, the end in _start. */
static void check_walk(const char *how, const struct walk *w, int first_ra)
{
	bool same = walk_same(w);
	CHECK(same, "%s: %d frames, the same as libgcc's _Unwind_Backtrace (%d from %d)", how, w->n,
	      w->n_gcc - w->from, w->from);
	if (!same)
		walk_print(w);
	/* The chain's return addresses, innermost first, then main's. */
	uintptr_t want[DEPTH + 8];
	int nwant = 0;
	for (int k = DEPTH - 1; k >= 0; k--)
		want[nwant++] = ra[k];
#ifdef LAYOUT_LIB
	for (int k = 3; k >= 0; k--)
		want[nwant++] = lib_ra[k];
	want[nwant++] = lib_ra[4];
#endif
	want[nwant++] = main_ra;
	int at = -1;
	for (int i = 0; i < w->n && at < 0; i++)
		if (w->pc[i] == want[0])
			at = i;
	bool chain = at >= first_ra && at + nwant <= w->n;
	for (int k = 0; chain && k < nwant; k++)
		chain = w->pc[at + k] == want[k];
	CHECK(chain, "%s: the chain's %d return addresses and main's, in order (from frame %d)",
	      how, nwant - 1, at);
	CHECK(w->stop == SFRAME_BT_STOP_OUTERMOST && w->n > 0 &&
		      w->pc[w->n - 1] - (uintptr_t)_start < 64,
	      "%s: ends at the outermost frame, in _start (%s at %#lx, _start %p)", how,
	      sframe_bt_stop_name(w->stop), w->n ? (unsigned long)w->pc[w->n - 1] : 0ul,
	      (void *)_start);
}

/* ---- Signals ------------------------------------------------------------- */

static struct walk raised, samples[SAMPLES];
static volatile sig_atomic_t nsamples;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	walk_now(uc, &raised);
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	if (nsamples < SAMPLES)
		walk_now(uc, &samples[nsamples++]);
}

/* ---- The chain ----------------------------------------------------------- */

static volatile unsigned sink;

__attribute__((noinline)) static unsigned spin(void)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned v = 1;
	do {
		for (int i = 0; i < 100000; i++)
			v = v * 1103515245u + 12345u;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (nsamples < SAMPLES && t.tv_sec - t0.tv_sec < 5);
	return v;
}

static struct walk normal;

__attribute__((noinline)) static unsigned bottom(unsigned x)
{
	walk_now(NULL, &normal);
	raise(SIGUSR1);
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	x += spin();
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	return x;
}

typedef unsigned chain_fn(unsigned);
static chain_fn *const chain[DEPTH + 1];

/* Each chain function keeps a frame of its own size (a volatile array)
 * and is never a sibling call: every frame stays on the stack. */
#define CHAIN(k)                                                                   \
	__attribute__((noinline)) static unsigned chain_##k(unsigned x)              \
	{                                                                          \
		volatile unsigned pad[(k) % 5 + 1];                                  \
		ra[k] = RA();                                                      \
		pad[0] = x;                                                        \
		unsigned r = chain[(k) + 1](pad[0] + (k));                          \
		sink = pad[(k) % 5];                                                \
		return r + 1;                                                      \
	}
CHAIN(0) CHAIN(1) CHAIN(2) CHAIN(3) CHAIN(4) CHAIN(5) CHAIN(6) CHAIN(7)
CHAIN(8) CHAIN(9) CHAIN(10) CHAIN(11) CHAIN(12) CHAIN(13) CHAIN(14) CHAIN(15)
CHAIN(16) CHAIN(17) CHAIN(18) CHAIN(19) CHAIN(20) CHAIN(21) CHAIN(22) CHAIN(23)

static chain_fn *const chain[DEPTH + 1] = {
	chain_0, chain_1, chain_2, chain_3, chain_4, chain_5, chain_6, chain_7,
	chain_8, chain_9, chain_10, chain_11, chain_12, chain_13, chain_14, chain_15,
	chain_16, chain_17, chain_18, chain_19, chain_20, chain_21, chain_22, chain_23,
	bottom,
};

int main(void)
{
	main_ra = RA();
	sig_install(SIGUSR1, on_usr1, 0);
	sig_install(SIGPROF, on_prof, SA_RESTART);
	unsigned r;
#ifdef LAYOUT_LIB
	/* main -> the library's chain -> chain_0 ... -> bottom. */
	r = layout_lib_chain(1, chain_0, lib_ra);
#else
	r = chain_0(1);
#endif
	sink = r;
	/* Frame 0 of the normal walk is in bottom(); the raised one starts in
	 * libc's raise(); a sample anywhere in spin() or below. */
	check_walk("normal", &normal, 1);
	check_walk("raise", &raised, 1);
	CHECK(nsamples > 0, "%d SIGPROF samples", (int)nsamples);
	int whole = 0;
	for (int i = 0; i < nsamples; i++) {
		char how[32];
		snprintf(how, sizeof how, "sample %d", i);
		if (i < 3)
			check_walk(how, &samples[i], 1);
		const struct walk *w = &samples[i];
		whole += walk_same(w) && w->stop == SFRAME_BT_STOP_OUTERMOST;
	}
	CHECK(whole == nsamples, "%d of %d samples whole and the same as libgcc's", whole,
	      (int)nsamples);
	CHECK_DONE();
}
