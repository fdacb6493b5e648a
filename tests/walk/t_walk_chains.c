/* Synchronous walks through known call chains, checked against ground
 * truth: the functions each frame must be in (dladdr() of the PC, PC-1 for
 * return addresses), and glibc backtrace() (the .eh_frame unwinder) frame
 * by frame.
 *
 * Chains: the executable -> a linked shared object -> a dlopen()ed one
 * (tests/walk/chains_lib.h); 1000-deep recursion; alloca, DRAP and a hand-made
 * realigned frame in the executable; and the prebuilt
 * tests/fixtures/bin/x86_64-v{1,2,3}/libchain.so (SFrame V1/V2/V3,
 * tests/fixtures/src/chain.h): chain_entry and the tail call of
 * chain_tail_entry, with truncation by buffer size.
 *
 * A walk is judged by these rules: every frame it returns must be the
 * expected one (a wrong frame always fails); it must reach main and then
 * end as outermost (through libc and _start, by their .eh_frame), except
 * where a function can be described neither by its SFrame rows nor by
 * its .eh_frame (a "gap", see tests/fixtures/README.md), where it must
 * instead stop exactly at that function with a non-zero stop reason. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "chains_lib.h"
#include "chains_paths.h"
#include "fixtures/src/chain.h"

#define MAXF 1200

/* What the callback records: the same stack walked three ways. */
static struct {
	int size;
	void *buf[MAXF];
	int n_simple;
	struct sframe_bt_frame fr[MAXF];
	int n_ex;
	struct sframe_bt_status st;
	void *gbuf[MAXF];
	int n_glibc;
	void *ubuf[MAXF]; /* sframe_backtrace_ucontext() from getcontext() */
	int n_uc;
	int calls;
} R;

/* The callback at the end of every chain.  frame 0 of each walk is a
 * return address into wc_cb. */
CHAINS_FN int wc_cb(void *arg)
{
	(void)arg;
	memset(R.fr, 0, sizeof R.fr);
	R.n_simple = sframe_backtrace(R.buf, R.size);
	R.n_ex = sframe_backtrace_ex(NULL, R.fr, R.size, 0, &R.st);
	R.n_glibc = backtrace(R.gbuf, MAXF);
	static ucontext_t uc;
	R.n_uc = getcontext(&uc) == 0 ? sframe_backtrace_ucontext(&uc, R.ubuf, R.size) : -1;
	R.calls++;
	return 1;
}

static const char *name_of(uintptr_t pc, bool exact)
{
	Dl_info di;
	if (!pc || !dladdr((void *)(exact ? pc : pc - 1), &di) || !di.dli_sname)
		return "?";
	return di.dli_sname;
}

/* ---- Expected chains ------------------------------------------------- */

struct want {
	const char *name[MAXF];
	int n;
	const char *gap;   /* function the walk may (or must) stop at */
	bool must_stop;    /* the version cannot describe gap: must stop there */
};

static void want_add(struct want *w, const char *name, int times)
{
	while (times-- > 0 && w->n < MAXF)
		w->name[w->n++] = name;
}

/* Judge the frames of R's _ex walk against w; size: the buffer size the
 * walk had.  Returns true if right; why explains either way. */
static bool judge(const struct want *w, int size, char *why, size_t whysz)
{
	int n = R.n_ex, stop = R.st.stop;
	for (int i = 0; i < n && i < w->n; i++) {
		const char *got = name_of(R.fr[i].pc, R.fr[i].exact);
		if (strcmp(got, w->name[i]) != 0) {
			snprintf(why, whysz, "WRONG frame #%d: %s (%#lx), want %s", i, got,
				 (unsigned long)R.fr[i].pc, w->name[i]);
			return false;
		}
	}
	if (size < w->n) { /* truncated on purpose */
		if (n != size || stop != SFRAME_BT_STOP_BUFFER_FULL) {
			snprintf(why, whysz, "size %d: %d frames, stop %s", size, n,
				 sframe_bt_stop_name(stop));
			return false;
		}
		snprintf(why, whysz, "%d right frames, buffer-full", n);
		return true;
	}
	if (n >= w->n && !w->must_stop) {
		snprintf(why, whysz, "%d frames, all %d expected right (then %s)", n, w->n,
			 sframe_bt_stop_name(stop));
		return stop == SFRAME_BT_STOP_OUTERMOST && n <= w->n + 3 &&
		       strcmp(name_of(R.fr[n - 1].pc, false), "_start") == 0;
	}
	if (n >= w->n) {
		snprintf(why, whysz, "walked through %s, which should be a gap", w->gap);
		return false;
	}
	if (w->gap && n >= 1 && strcmp(w->name[n - 1], w->gap) == 0 &&
	    stop != SFRAME_BT_STOP_NONE && stop != SFRAME_BT_STOP_BUFFER_FULL) {
		snprintf(why, whysz, "%d right frames, stopped at %s: %s", n, w->gap,
			 sframe_bt_stop_name(stop));
		return true;
	}
	snprintf(why, whysz, "stopped early after %d of %d frames (last %s): %s", n, w->n,
		 n ? w->name[n - 1] : "-", sframe_bt_stop_name(stop));
	return false;
}

/* Everything checked about one recorded walk. */
static void check_walk(const char *what, const struct want *w, int size)
{
	char why[256];
	bool ok = judge(w, size, why, sizeof why);
	CHECK(ok, "%s: %s", what, why);
	if (!ok)
		for (int i = 0; i < R.n_ex && i < 40; i++)
			printf("#   %2d %#lx %s cfa=%#lx src=%d exact=%d\n", i,
			       (unsigned long)R.fr[i].pc, name_of(R.fr[i].pc, R.fr[i].exact),
			       (unsigned long)R.fr[i].cfa, R.fr[i].source, R.fr[i].exact);

	/* The frames themselves: return addresses (no ucontext), frame 0
	 * from the caller's context, CFAs strictly increasing. */
	bool shape = R.n_ex > 0 && R.fr[0].source == SFRAME_BT_FROM_CONTEXT;
	for (int i = 0; i < R.n_ex && shape; i++) {
		shape = R.fr[i].exact == 0 &&
			(i == 0 || R.fr[i].source != SFRAME_BT_FROM_CONTEXT);
		if (i > 0 && R.fr[i].cfa && R.fr[i - 1].cfa)
			shape = shape && R.fr[i].cfa > R.fr[i - 1].cfa;
	}
	CHECK(shape, "%s: frame sources, exact flags and CFAs consistent", what);

	/* sframe_backtrace(): the same frames (frame 0 is another return
	 * address into wc_cb: the two calls are at different sites). */
	bool same = R.n_simple == R.n_ex && R.n_simple > 0 &&
		    strcmp(name_of((uintptr_t)R.buf[0], false), "wc_cb") == 0;
	int diff = -1;
	for (int i = 1; i < R.n_simple && i < R.n_ex && diff < 0; i++)
		if ((uintptr_t)R.buf[i] != R.fr[i].pc)
			diff = i;
	CHECK(same && diff < 0, "%s: sframe_backtrace() gives the same %d frames (got %d%s)",
	      what, R.n_ex, R.n_simple, diff >= 0 ? ", differing" : "");

	/* sframe_backtrace_ucontext() from a getcontext() in wc_cb: frame 0
	 * is an exact PC in wc_cb, the rest the same return addresses. */
	diff = -1;
	for (int i = 1; i < R.n_uc && i < R.n_ex && diff < 0; i++)
		if ((uintptr_t)R.ubuf[i] != R.fr[i].pc)
			diff = i;
	CHECK(R.n_uc == R.n_ex && strcmp(name_of((uintptr_t)R.ubuf[0], true), "wc_cb") == 0 &&
		      diff < 0,
	      "%s: sframe_backtrace_ucontext(getcontext()) gives the same %d frames (got %d%s)",
	      what, R.n_ex, R.n_uc, diff >= 0 ? ", differing" : "");

	/* glibc backtrace() (.eh_frame): frame i >= 1 is the same return
	 * address, as far as both walks go.  (Under AddressSanitizer,
	 * backtrace() is intercepted and reports the interceptor's frame
	 * first: start at the first frame in wc_cb.) */
	int g0 = 0;
	while (g0 < R.n_glibc && g0 < 3 && strcmp(name_of((uintptr_t)R.gbuf[g0], false), "wc_cb"))
		g0++;
	int k = R.n_ex < R.n_glibc - g0 ? R.n_ex : R.n_glibc - g0;
	diff = -1;
	for (int i = 1; i < k && diff < 0; i++)
		if ((uintptr_t)R.gbuf[g0 + i] != R.fr[i].pc)
			diff = i;
	CHECK(g0 < 3 && R.n_glibc - g0 > 1 && diff < 0,
	      "%s: glibc backtrace() agrees on frames 1..%d (glibc %d frames)%s", what, k - 1,
	      R.n_glibc - g0, diff >= 0 ? " -- differs" : "");
	if (diff >= 0)
		printf("#   frame %d: ours %#lx (%s), glibc %p (%s)\n", diff,
		       (unsigned long)R.fr[diff].pc, name_of(R.fr[diff].pc, false),
		       R.gbuf[g0 + diff], name_of((uintptr_t)R.gbuf[g0 + diff], false));
}

/* ---- The executable's chains ---------------------------------------- */

/* main -> wc_test_cross -> chains_ex_a -> chains_ex_alloca -> chains_ex_big
 * -(.plt)-> chains_lk_outer -(PLT)-> chains_lk_mid -> chains_ex_mid
 * -(.plt.got)-> chains_lk_got -> chains_ex_to_dl -> chains_dl_outer -(PLT)->
 * chains_dl_big -(PLT)-> chains_dl_mid -> wc_cb. */
CHAINS_FN int wc_test_cross(int size)
{
	volatile int zero = 0;
	struct chains_ctx c = { .hop = { chains_ex_mid, chains_ex_to_dl, wc_cb } };
	R.size = size;
	int r = chains_ex_a(&c);
	return r + zero;
}

static void want_cross(struct want *w)
{
	static const char *const names[] = {
		"wc_cb", "chains_dl_mid", "chains_dl_big", "chains_dl_outer",
		"chains_ex_to_dl", "chains_lk_got", "chains_ex_mid", "chains_lk_mid",
		"chains_lk_outer", "chains_ex_big", "chains_ex_alloca", "chains_ex_a",
		"wc_test_cross", "main",
	};
	memset(w, 0, sizeof *w);
	for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
		want_add(w, names[i], 1);
}

CHAINS_FN int wc_test_recurse(int depth, int size)
{
	volatile int zero = 0;
	struct chains_ctx c = { .hop = { wc_cb }, .depth = depth };
	R.size = size;
	int r = chains_ex_recurse(&c);
	return r + zero;
}

CHAINS_FN int wc_test_drap(int size)
{
	volatile int zero = 0;
	struct chains_ctx c = { .hop = { wc_cb } };
	R.size = size;
	int r = chains_ex_drap(&c);
	return r + zero;
}

CHAINS_FN int wc_test_realign(int size)
{
	volatile int zero = 0;
	struct chains_ctx c = { .hop = { wc_cb } };
	R.size = size;
	int r = chains_realign(&c);
	return r + zero;
}

CHAINS_FN int wc_test_badrow(int size)
{
	volatile int zero = 0;
	struct chains_ctx c = { .hop = { wc_cb } };
	R.size = size;
	int r = chains_badrow(&c);
	return r + zero;
}

/* ---- libchain.so ----------------------------------------------------- */

struct libchain {
	int version;
	void *h;
	int (*entry)(int, chain_cb, void *);
	int (*tail_entry)(chain_cb, void *);
};
static struct libchain lc[4];

CHAINS_FN int wc_test_chain(int v, int depth, int size)
{
	volatile int zero = 0;
	R.size = size;
	int r = lc[v].entry(depth, wc_cb, NULL);
	return r + zero;
}

CHAINS_FN int wc_test_tail(int v, int size)
{
	volatile int zero = 0;
	R.size = size;
	int r = lc[v].tail_entry(wc_cb, NULL);
	return r + zero;
}

/* V1 and V2 have no SFrame FDE for chain_drap (tests/fixtures/README.md):
 * its .eh_frame describes it.  V3 has a flexible FDE. */
static void want_chain(struct want *w, int depth, const char *caller)
{
	memset(w, 0, sizeof *w);
	want_add(w, "wc_cb", 1);
	want_add(w, "chain_leafcall", 1);
	want_add(w, "chain_drap", 1);
	want_add(w, "chain_alloca", 1);
	want_add(w, "chain_recurse", depth);
	want_add(w, "chain_entry", 1);
	want_add(w, caller, 1);
	want_add(w, "main", 1);
}

static int count_named(const char *name)
{
	int k = 0;
	for (int i = 0; i < R.n_ex; i++)
		k += strcmp(name_of(R.fr[i].pc, R.fr[i].exact), name) == 0;
	return k;
}

int main(void)
{
	struct want w;
	char what[128], path[2 * PATH_MAX + 128];

	find_exe_dir();
	snprintf(path, sizeof path, "%s/libsfb_chains_dl.so", exe_dir);
	void *dlh = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	chains_dl_entry = dlh ? (chains_fn)dlsym(dlh, "chains_dl_outer") : NULL;
	CHECK(chains_dl_entry != NULL, "dlopen %s: %s", path, dlh ? "ok" : dlerror());
	if (!chains_dl_entry)
		CHECK_DONE();

	/* 1. The executable, a linked object and a dlopen()ed one. */
	wc_test_cross(MAXF);
	want_cross(&w);
	check_walk("exe/linked/dlopen chain", &w, MAXF);
	CHECK(R.st.frames_sframe >= w.n - 1 && R.st.frames_fp == 0,
	      "exe/linked/dlopen chain: %d frames unwound by SFrame rows, %d by the FP rule",
	      R.st.frames_sframe, R.st.frames_fp);

	/* Truncation by size. */
	static const int sizes[] = { 1, 2, 5 };
	for (unsigned i = 0; i < 3; i++) {
		wc_test_cross(sizes[i]);
		snprintf(what, sizeof what, "exe/linked/dlopen chain, size %d", sizes[i]);
		check_walk(what, &w, sizes[i]);
	}

	/* 2. Recursion 1000 deep, buffer 1100. */
	wc_test_recurse(1000, 1100);
	memset(&w, 0, sizeof w);
	want_add(&w, "wc_cb", 1);
	want_add(&w, "chains_ex_recurse", 1000);
	want_add(&w, "wc_test_recurse", 1);
	want_add(&w, "main", 1);
	check_walk("exe recursion 1000", &w, 1100);
	CHECK(count_named("chains_ex_recurse") == 1000 && R.n_ex >= 1003,
	      "exe recursion 1000: %d chains_ex_recurse frames of %d", count_named("chains_ex_recurse"),
	      R.n_ex);

	/* 3. Realigned frames in the executable (host binutils 2.40: no FDE
	 * for the DRAP function, a wrong one for chains_realign): right, or
	 * stopped there -- never a wrong frame. */
	wc_test_drap(MAXF);
	memset(&w, 0, sizeof w);
	want_add(&w, "wc_cb", 1);
	want_add(&w, "chains_ex_drap", 1);
	want_add(&w, "wc_test_drap", 1);
	want_add(&w, "main", 1);
	w.gap = "chains_ex_drap";
	check_walk("exe DRAP function", &w, MAXF);

	wc_test_realign(MAXF);
	memset(&w, 0, sizeof w);
	want_add(&w, "wc_cb", 1);
	want_add(&w, "chains_realign", 1);
	want_add(&w, "wc_test_realign", 1);
	want_add(&w, "main", 1);
	w.gap = "chains_realign";
	check_walk("exe realigned asm function (CFA in %rbx)", &w, MAXF);

	/* A wrong row whose "return address" is a data address: the check
	 * that a return address follows a call must stop the walk there. */
	wc_test_badrow(MAXF);
	memset(&w, 0, sizeof w);
	want_add(&w, "wc_cb", 1);
	want_add(&w, "chains_badrow", 1);
	want_add(&w, "wc_test_badrow", 1);
	want_add(&w, "main", 1);
	w.gap = "chains_badrow";
	w.must_stop = true;
	check_walk("deliberately wrong row", &w, MAXF);
	CHECK(R.n_ex == 2 && R.st.stop == SFRAME_BT_STOP_BAD_RA,
	      "deliberately wrong row: stop bad-return-address after 2 frames (%d, %s)", R.n_ex,
	      sframe_bt_stop_name(R.st.stop));

	/* 4. libchain.so V1, V2, V3. */
	const char *fx = fixtures_dir();
	for (int v = 1; v <= 3; v++) {
		snprintf(path, sizeof path, "%s/x86_64-v%d/libchain.so", fx, v);
		lc[v].version = v;
		lc[v].h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (lc[v].h) {
			lc[v].entry = (int (*)(int, chain_cb, void *))dlsym(lc[v].h, "chain_entry");
			lc[v].tail_entry = (int (*)(chain_cb, void *))dlsym(lc[v].h, "chain_tail_entry");
		}
		CHECK(lc[v].entry && lc[v].tail_entry, "V%d: dlopen %s%s%s", v, path,
		      lc[v].h ? "" : ": ", lc[v].h ? "" : dlerror());
		if (!lc[v].entry || !lc[v].tail_entry)
			continue;

		wc_test_chain(v, 3, MAXF);
		want_chain(&w, 3, "wc_test_chain");
		snprintf(what, sizeof what, "V%d chain_entry depth 3", v);
		check_walk(what, &w, MAXF);
		/* chain_drap, then libc's outermost frames: two from glibc
		 * 2.34 on, one before (no __libc_start_call_main). */
		if (v < 3)
			CHECK(R.n_ex > 3 && R.fr[3].source == SFRAME_BT_FROM_EH_FRAME &&
			      R.st.frames_eh_frame >= (__GLIBC_MINOR__ >= 34 ? 3 : 2),
			      "V%d: no SFrame FDE for chain_drap: unwound with its .eh_frame (frame 3's "
			      "source %d, %d frames by .eh_frame, %d in all)",
			      v, R.n_ex > 3 ? R.fr[3].source : -1, R.st.frames_eh_frame, R.n_ex);

		wc_test_chain(v, 1000, 1100);
		want_chain(&w, 1000, "wc_test_chain");
		snprintf(what, sizeof what, "V%d chain_entry depth 1000, buffer 1100", v);
		check_walk(what, &w, 1100);
		if (v == 3)
			CHECK(count_named("chain_recurse") == 1000 && R.n_ex >= 1006,
			      "V3 depth 1000: %d chain_recurse frames, %d in all",
			      count_named("chain_recurse"), R.n_ex);

		for (unsigned i = 0; i < 3; i++) {
			wc_test_chain(v, 3, sizes[i]);
			want_chain(&w, 3, "wc_test_chain");
			snprintf(what, sizeof what, "V%d chain_entry, size %d", v, sizes[i]);
			check_walk(what, &w, sizes[i]);
		}

		wc_test_tail(v, MAXF);
		memset(&w, 0, sizeof w);
		want_add(&w, "wc_cb", 1);
		want_add(&w, "chain_leafcall2", 1);
		want_add(&w, "chain_tail_entry", 1);
		want_add(&w, "wc_test_tail", 1);
		want_add(&w, "main", 1);
		snprintf(what, sizeof what, "V%d chain_tail_entry (tail call)", v);
		check_walk(what, &w, MAXF);
		CHECK(count_named("chain_tail") == 0, "V%d: chain_tail (tail-called away) not in the walk", v);
	}
	CHECK_DONE();
}
