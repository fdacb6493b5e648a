/* The row memo (src/rowmemo.[ch]) and the walker's fast path that follows
 * its hints (src/walk/walk.c: fast_run, memo_find_and_hint).
 *
 * Ground truth: every function of a chain records its own return address
 * (__builtin_return_address(0)) before it calls the next one; the chain
 * ends in take(), which walks with sframe_backtrace(),
 * sframe_backtrace_ex() and sframe_backtrace_ucontext(getcontext()).  A
 * walk must give, frame by frame, exactly the recorded return addresses,
 * through main and into libc (frame 0 must lie in take()), with the full
 * depth, or the first `size` of them when the buffer is smaller; the _ex
 * walk also its frame sources, increasing CFAs and stop reason.  The
 * chain functions are compiled without frame pointers (tests/memo.mk.inc),
 * except those with a VLA or alloca(), whose CFA is FP-based; one keeps
 * seven values live across its call, so that it saves RBP as a plain
 * register (FP restored from a slot under an SP-based CFA).
 *
 * In the order run:
 * 4. sfb_memo_row_of(): rows it must refuse and rows it must accept, with
 *    the compiled fields (where the memo takes the RA only in a fixed slot,
 *    x86-64's CFA-8, rows with the RA elsewhere are refused).
 * 1. Stale hints: a leaf reached alternately through two callers (the
 *    hint of the leaf's entry flips on every walk), then the same at the
 *    end of deeper chains with alternating prefixes, then random chains of
 *    all the function kinds (recursion included: an entry whose right
 *    hint is itself), with random buffer sizes.  First, the chain's return
 *    addresses must all be memoised, or the fast path would not be tested.
 * 2. Corrupted hints: right before each walk, the hint of EVERY entry of
 *    sfb_memo[] is overwritten: with a random other entry; all with one
 *    entry (random, or the leaf's); each with itself; and with decoys,
 *    entries planted in unused pairs that look right but are not: the right
 *    key with another epoch, the right key and epoch but a busy (odd)
 *    sequence number, the key plus one, epoch 0 -- each with a wrong row,
 *    which would change the walk if it were used (a control run, not a
 *    check, shows it does when the decoys are made valid; skipped under
 *    valgrind, as its walks read stack words never written).  Then the
 *    table is wiped and the walks checked again from cold.
 * 5. Exact PCs (a ucontext's, memoised under their own key in the second
 *    entry of its pair): after a walk from take()'s getcontext(), the entry
 *    is there, and later walks from it are right; with decoys in its pair
 *    (the kinds above, and the return-address key of the same address)
 *    walks stay right, and a control shows that a valid wrong row there is
 *    used; and with a valid-looking entry under the exact key in the pair
 *    of every return address, walks stay right (an exact row never serves
 *    a return address).
 * 6. An exact PC that no object holds (code the loader does not know, such
 *    as a JIT's): the walk gives that PC alone, with the stop reason
 *    no-object, and asks _dl_find_object() about it once, although both
 *    the fast path and the general path look for its object (this program
 *    defines _dl_find_object(), counting, and forwards to libc's).
 * 7. The recall (rowmemo.h: the pairs of a thread's last sample, fetched
 *    ahead in its next): after every ucontext walk, the thread's record
 *    holds its return addresses' pairs, a repeated one once, the first
 *    SFB_MEMO_RECALL of those, whether the fast path noted them (from the
 *    entries it used) or the general path (every entry held busy), also
 *    when the frames are records (sframe_backtrace_ex()); walks from the
 *    caller's own registers leave it alone; and with garbage in it before
 *    each ucontext walk, walks stay right.
 * 3. Seqlock: two writer threads sfb_memo_put() keys that all fall into one
 *    pair, with rows derived from the key, while three readers
 *    sfb_memo_get()/sfb_memo_try() them: every read that succeeds must
 *    return exactly its key's row, and some must succeed; lookups with
 *    another epoch, and of a colliding key never put, never succeed.
 *
 * Everything that knows the memo's key and row layout is in one section
 * below ("The memo's layout").
 *
 * Environment: SFB_MEMO_SECONDS, the duration of part 3 (default 2, or 0.5
 * under valgrind: SFB_VALGRIND=1 or valgrind's LD_PRELOAD); SFB_MEMO_WORK,
 * a scale of the number of walks (default 1; 1/4 under valgrind);
 * SFB_MEMO_SEED. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "uc_regs.h"
#include "arch/arch.h"
#include "walk/rowmemo.h"

#if defined(__clang__)
#define NOINL __attribute__((noinline, used))
#else
#define NOINL __attribute__((noinline, noclone, used))
#endif
#define RA0() ((uintptr_t)__builtin_return_address(0))

#define MAXLEN 48            /* chain functions from the path */
#define MAXD (MAXLEN + 4)    /* + leaf, take */
#define MAXTAIL 16           /* frames past main's caller, if libc has rows */
#define MAXF (MAXD + 8 + MAXTAIL)

/* ---- Small helpers ------------------------------------------------------- */

static uint64_t rnd_state = 0x9d2c5680a1b2c3d4ull;
static uint64_t rnd(void)
{
	uint64_t x = rnd_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rnd_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}
static uint64_t rnd_r(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool vg; /* under valgrind */

static const char *sym_of(uintptr_t pc)
{
	Dl_info di;
	if (!pc || !dladdr((void *)pc, &di))
		return "?";
	if (di.dli_sname)
		return di.dli_sname;
	const char *slash = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
	return slash ? slash + 1 : di.dli_fname ? di.dli_fname : "?";
}

/* The entry holding key (any epoch), if stable: it can only be in its
 * pair. */
static struct sfb_memo_entry *entry_of(uintptr_t key)
{
	struct sfb_memo_entry *p = sfb_memo_pair(key);
	for (int k = 0; k < 2; k++) {
		uint32_t seq = atomic_load(&p[k].seq);
		if (seq && !(seq & 1) && p[k].key == key)
			return &p[k];
	}
	return NULL;
}

static void entry_clear(struct sfb_memo_entry *e)
{
	atomic_store(&e->seq, 0);
	e->key = 0;
	e->epoch = 0;
	memset(&e->row, 0, sizeof e->row);
	sfb_memo_set_hint(e, NULL);
}

/* ---- The memo's layout (rowmemo.h), in one place ------------------------- */

/* Entries are keyed by the return address itself (walk.c: row_from_object, memoise_row), and
 * an exact PC (a ucontext's) by the PC with the top bit set. */
#define MEMO_KEY(ra) ((uintptr_t)(ra))
#define MEMO_EXACT_KEY(pc) ((uintptr_t)(pc) | (uintptr_t)1 << 63)

/* A compiled row: the CFA offset with the base (FP: 1) in its low bit. */
static int32_t mr_cfa_off(const struct sfb_memo_row *r) { return r->cfa_word & ~(int32_t)1; }
static int mr_on_fp(const struct sfb_memo_row *r) { return r->cfa_word & 1; }
static int mr_ra_slot(const struct sfb_memo_row *r) { return r->ra_slot; }
static int mr_fp_slot(const struct sfb_memo_row *r) { return r->fp_slot; }
static struct sfb_memo_row mr_make(int32_t cfa_off, int on_fp, int ra_slot, int fp_slot)
{
	struct sfb_memo_row r;
	memset(&r, 0, sizeof r);
	r.cfa_word = cfa_off | (on_fp != 0);
	r.ra_slot = (int8_t)ra_slot;
	r.fp_slot = (int8_t)fp_slot;
	return r;
}

/* Where the RA is on this architecture, if the memo only takes that. */
#ifdef SFB_RA_SLOT
#define FIXED_RA_SLOT SFB_RA_SLOT
#else
#define FIXED_RA_SLOT 0
#endif

static bool row_eq(const struct sfb_memo_row *a, const struct sfb_memo_row *b)
{
	return memcmp(a, b, sizeof *a) == 0;
}

static void row_str(char *b, size_t n, const struct sfb_memo_row *r)
{
	snprintf(b, n, "CFA=%s%+" PRId32 " RA slot %d FP slot %d", mr_on_fp(r) ? "FP" : "SP",
		 mr_cfa_off(r), mr_ra_slot(r), mr_fp_slot(r));
}

/* ---- Chains with recorded return addresses ----------------------------------- */

static uintptr_t gt[MAXD + 2]; /* gt[d]: return address of the function at depth d */
static int gt_d;               /* depth of take() in the last chain */
static uintptr_t drv_ra, phase_ra, main_ra; /* drive() -> phase -> main -> libc */
static volatile unsigned long sink;

enum { API_PCS, API_EX, API_UC, NAPI };
static const char *const api_name[NAPI] = { "sframe_backtrace", "sframe_backtrace_ex",
					    "sframe_backtrace_ucontext" };
#define A_PCS (1u << API_PCS)
#define A_EX (1u << API_EX)
#define A_UC (1u << API_UC)

/* The walks take() makes, and their results. */
static struct {
	unsigned apis; /* A_* */
	int size;
	int cur_api;   /* the walk about to be made (for pre_walk) */
	bool first;    /* pre_walk: first walk of this take() */
	void *pcs[MAXF];
	int n_pcs;
	struct sframe_bt_frame fr[MAXF];
	int n_ex;
	struct sframe_bt_status st;
	void *ucs[MAXF];
	int n_uc;
} W;
static void (*pre_walk)(void); /* run right before each walk */

NOINL int take(int d)
{
	gt[d] = RA0();
	gt_d = d;
	W.first = true;
	if (W.apis & A_PCS) {
		W.cur_api = API_PCS;
		if (pre_walk)
			pre_walk();
		W.first = false;
		W.n_pcs = sframe_backtrace(W.pcs, W.size);
	}
	if (W.apis & A_EX) {
		W.cur_api = API_EX;
		if (pre_walk)
			pre_walk();
		W.first = false;
		memset(W.fr, 0, sizeof W.fr);
		W.n_ex = sframe_backtrace_ex(NULL, W.fr, W.size, 0, &W.st);
	}
	if (W.apis & A_UC) {
		static ucontext_t uc;
		W.n_uc = -1;
		W.cur_api = API_UC;
		if (getcontext(&uc) == 0) {
			if (pre_walk)
				pre_walk();
			W.first = false;
			W.n_uc = sframe_backtrace_ucontext(&uc, W.ucs, W.size);
		}
	}
	return (int)(sink & 1);
}

typedef int (*mfn)(const uint8_t *p, int len, int d);
int m_plain(const uint8_t *p, int len, int d);
int m_vla(const uint8_t *p, int len, int d);
int m_big(const uint8_t *p, int len, int d);
int m_saves(const uint8_t *p, int len, int d);
int m_alloca(const uint8_t *p, int len, int d);
int caller_a(const uint8_t *p, int len, int d);
int caller_b(const uint8_t *p, int len, int d);
enum { F_PLAIN, F_VLA, F_BIG, F_SAVES, F_ALLOCA, F_A, F_B, NFN };
static mfn const fns[NFN] = { m_plain, m_vla, m_big, m_saves, m_alloca, caller_a, caller_b };

/* The leaf: every chain ends here, whatever its caller. */
NOINL int m_leaf(const uint8_t *p, int len, int d)
{
	(void)p;
	(void)len;
	gt[d] = RA0();
	int r = take(d + 1);
	return r + 1;
}

/* The next function of the path, or the leaf after the last one. */
#define NEXT(p, len, d) \
	((d) + 1 < (len) ? fns[(p)[(d) + 1]]((p), (len), (d) + 1) : m_leaf((p), (len), (d) + 1))

/* Two callers of the leaf (they end the path). */
NOINL int caller_a(const uint8_t *p, int len, int d)
{
	gt[d] = RA0();
	int r = m_leaf(p, len, d + 1);
	return r * 3 + 1;
}
NOINL int caller_b(const uint8_t *p, int len, int d)
{
	volatile char pad[40];
	pad[d & 31] = (char)d;
	gt[d] = RA0();
	int r = m_leaf(p, len, d + 1);
	return r + pad[d & 31] + 2;
}

NOINL int m_plain(const uint8_t *p, int len, int d)
{
	gt[d] = RA0();
	int r = NEXT(p, len, d);
	return r + 5;
}

/* A variable-length array: an FP-based CFA. */
NOINL int m_vla(const uint8_t *p, int len, int d)
{
	volatile char buf[(d & 15) + 16];
	buf[0] = (char)d;
	gt[d] = RA0();
	int r = NEXT(p, len, d);
	return (r + buf[0]) ^ 3;
}

/* A large fixed frame. */
NOINL int m_big(const uint8_t *p, int len, int d)
{
	volatile char big[6000];
	big[(d * 7) & 4095] = (char)d;
	gt[d] = RA0();
	int r = NEXT(p, len, d);
	return (r + big[(d * 7) & 4095]) ^ 9;
}

/* Values live across the call in every callee-saved register, RBP too. */
NOINL int m_saves(const uint8_t *p, int len, int d)
{
	unsigned long a0 = sink, a1 = sink * 3, a2 = sink ^ 7, a3 = sink + 11,
		      a4 = sink * 13, a5 = sink >> 2, a6 = sink | 5;
	gt[d] = RA0();
	int r = NEXT(p, len, d);
	return r + (int)(a0 + a1 * a2 + a3 * a4 + (a5 ^ a6) + (a0 * a6 ^ a1 * a5));
}

/* alloca(): an FP-based CFA too. */
NOINL int m_alloca(const uint8_t *p, int len, int d)
{
	volatile char *a = __builtin_alloca(16 + (unsigned)(d & 31) * 8);
	a[0] = (char)d;
	gt[d] = RA0();
	int r = NEXT(p, len, d);
	return (r + a[0]) ^ 1;
}

NOINL int drive(const uint8_t *p, int len)
{
	drv_ra = RA0();
	int r = fns[p[0]](p, len, 0);
	return r + (int)(sink & 2);
}

/* ---- Judging walks -------------------------------------------------------- */

static uintptr_t take_lo, take_hi;
static uintptr_t tail[MAXTAIL]; /* frames past main's caller (libc) */
static int ntail, tail_stop = -1;

static int take_range(void)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	void *fn = (void *)take;
	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    info.dli_saddr != fn || sym->st_size == 0)
		return -1;
	take_lo = (uintptr_t)fn;
	take_hi = (uintptr_t)fn + sym->st_size;
	return 0;
}

/* The return addresses a walk from take() must give, innermost first;
 * [0] (a return address into take(), or a PC in it) is judged apart. */
static int expected(uintptr_t *exp)
{
	int k = 0;
	exp[k++] = 0;
	for (int d = gt_d; d >= 0; d--)
		exp[k++] = gt[d];
	exp[k++] = drv_ra;
	exp[k++] = phase_ra;
	exp[k++] = main_ra;
	for (int i = 0; i < ntail; i++)
		exp[k++] = tail[i];
	return k;
}

/* The first frame of got[0..n) that is wrong, n if the count is, or -1. */
static int diff_walk(const uintptr_t *got, int n, int size, bool exact0, int *want_n)
{
	uintptr_t exp[MAXF + 8];
	int e = expected(exp);
	int want = size < e ? size : e;
	*want_n = want;
	for (int i = 0; i < n && i < want; i++) {
		bool ok = i ? got[i] == exp[i]
			    : exact0 ? got[0] >= take_lo && got[0] < take_hi
				     : got[0] > take_lo && got[0] <= take_hi;
		if (!ok)
			return i;
	}
	return n == want ? -1 : n < want ? n : want;
}

static void print_walk(const char *api, const uintptr_t *got, int n, int bad, int want)
{
	uintptr_t exp[MAXF + 8];
	int e = expected(exp);
	printf("# %s: %d frames (want %d), first wrong #%d\n", api, n, want, bad);
	for (int i = 0; i < n || i < e; i++)
		printf("#   %2d got %#14" PRIxPTR " %-10s want %#14" PRIxPTR " %s%s\n", i,
		       i < n ? got[i] : 0, i < n ? sym_of(got[i] - (i > 0)) : "",
		       i < e ? exp[i] : 0, i < e ? sym_of(exp[i] - (i > 0)) : "",
		       i == bad ? "   <--" : "");
}

struct tally {
	const char *phase;
	unsigned long n[NAPI], bad[NAPI];
	int printed;
};

/* Judge the walks of the last take() against the ground truth. */
static void judge(struct tally *t)
{
	uintptr_t got[MAXF];
	for (int a = 0; a < NAPI; a++) {
		if (!(W.apis & (1u << a)))
			continue;
		int n = a == API_PCS ? W.n_pcs : a == API_EX ? W.n_ex : W.n_uc;
		if (n < 0 || n > MAXF)
			n = 0;
		for (int i = 0; i < n; i++)
			got[i] = a == API_PCS ? (uintptr_t)W.pcs[i]
			       : a == API_EX  ? W.fr[i].pc
					      : (uintptr_t)W.ucs[i];
		int want, bad = diff_walk(got, n, W.size, a == API_UC, &want);
		const char *why = "";
		if (bad < 0 && a == API_EX) {
			/* Frame 0 from the caller's context, the rest return
			 * addresses unwound from it, CFAs strictly increasing,
			 * and the stop reason. */
			for (int i = 0; i < n && bad < 0; i++) {
				bool ok = !W.fr[i].exact &&
					  (i == 0 ? W.fr[i].source == SFRAME_BT_FROM_CONTEXT
						  : W.fr[i].source != SFRAME_BT_FROM_CONTEXT);
				if (i > 0 && W.fr[i].cfa && W.fr[i - 1].cfa &&
				    W.fr[i].cfa <= W.fr[i - 1].cfa)
					ok = false;
				if (!ok) {
					bad = i;
					why = " (source, exact flag or CFA)";
				}
			}
			uintptr_t exp[MAXF + 8];
			int want_stop = W.size < expected(exp) ? SFRAME_BT_STOP_BUFFER_FULL : tail_stop;
			if (bad < 0 && W.st.stop != want_stop) {
				bad = n;
				why = " (stop reason)";
			}
		}
		t->n[a]++;
		if (bad >= 0) {
			t->bad[a]++;
			if (t->printed++ < 3) {
				printf("# %s: wrong walk%s, size %d, stop %s\n", t->phase, why,
				       W.size, a == API_EX ? sframe_bt_stop_name(W.st.stop) : "-");
				print_walk(api_name[a], got, n, bad, want);
			}
		}
	}
}

static void tally_report(const struct tally *t)
{
	for (int a = 0; a < NAPI; a++)
		if (t->n[a])
			CHECK(t->bad[a] == 0, "%s: %lu of %lu %s() walks equal the ground truth",
			      t->phase, t->n[a] - t->bad[a], t->n[a], api_name[a]);
}

/* ---- Paths ---------------------------------------------------------------- */

static uint8_t path[MAXLEN];

/* A random path of 1..MAXLEN functions; runs of one function recurse. */
static int random_path(void)
{
	int len = 1 + (int)(rnd() % MAXLEN);
	for (int i = 0; i < len; i++) {
		uint64_t r = rnd();
		if (i && r % 4 == 0)
			path[i] = path[i - 1];
		else
			path[i] = (uint8_t)((r >> 8) % NFN);
		if (path[i] == F_BIG && (r >> 20) % 3)
			path[i] = F_PLAIN; /* keep the stack small */
	}
	return len;
}

static int random_size(int len)
{
	uint64_t r = rnd();
	if (r % 4)
		return MAXF;
	return 1 + (int)((r >> 8) % (unsigned)(len + 8));
}

/* ---- Part 4: sfb_memo_row_of() ----------------------------------------------- */

#define CFA SFB_REG_CFA
static struct sfb_loc L_SAME(void) { return (struct sfb_loc){ SFB_LOC_SAME, 0, 0, 0 }; }
static struct sfb_loc L_UNDEF(void) { return (struct sfb_loc){ SFB_LOC_UNDEFINED, 0, 0, 0 }; }
/* value = reg + off */
static struct sfb_loc X(unsigned reg, int32_t off) { return (struct sfb_loc){ SFB_LOC_EXPR, 0, (uint16_t)reg, off }; }
/* value = *(reg + off) */
static struct sfb_loc D(unsigned reg, int32_t off) { return (struct sfb_loc){ SFB_LOC_EXPR, 1, (uint16_t)reg, off }; }

static struct sfb_row ROW(struct sfb_loc cfa, struct sfb_loc ra, struct sfb_loc fp, unsigned flags)
{
	struct sfb_row r;
	memset(&r, 0, sizeof r);
	r.func_start = 0x401000;
	r.func_size = 0x100;
	r.pc_lo = 0x401010;
	r.pc_hi = 0x401020;
	r.cfa = cfa;
	r.ra = ra;
	r.fp = fp;
	r.flags = (uint16_t)flags;
	return r;
}

static bool loc_eq(const struct sfb_loc *a, const struct sfb_loc *b)
{
	if (a->kind != b->kind)
		return false;
	return a->kind != SFB_LOC_EXPR ||
	       (a->deref == b->deref && a->reg == b->reg && a->off == b->off);
}

static void refuse(const char *what, struct sfb_row row, int sp, int fp)
{
	struct sfb_memo_row out;
	memset(&out, 0x5a, sizeof out);
	bool ok = sfb_memo_row_of(&row, sp, fp, &out);
	CHECK(!ok, "row_of refuses: %s", what);
}

/* A row of the common shape: accepted, with these compiled fields --
 * unless this architecture's memo takes the RA only in its fixed slot
 * (x86-64: CFA-8) and ra_slot is another one. */
static void accept(const char *what, struct sfb_row row, int sp, int fp, int32_t cfa_off,
		   int on_fp, int ra_slot, int fp_slot)
{
	char want[96], got[96];
	if (FIXED_RA_SLOT && ra_slot != FIXED_RA_SLOT) {
		char why[200];
		snprintf(why, sizeof why, "%s (the RA is not in the fixed slot %d)", what,
			 FIXED_RA_SLOT);
		refuse(why, row, sp, fp);
		return;
	}
	struct sfb_memo_row out, w = mr_make(cfa_off, on_fp, ra_slot, fp_slot);
	memset(&out, 0x5a, sizeof out);
	bool ok = sfb_memo_row_of(&row, sp, fp, &out);
	row_str(want, sizeof want, &w);
	row_str(got, sizeof got, &out);
	CHECK(ok && mr_cfa_off(&out) == cfa_off && mr_on_fp(&out) == on_fp &&
		      mr_ra_slot(&out) == ra_slot && mr_fp_slot(&out) == fp_slot,
	      "row_of accepts: %s -> %s (%s%s)", what, want, ok ? "got " : "refused",
	      ok ? got : "");
	/* An exact PC's memoised row is expanded back for the general step:
	 * it must give the rules it was compiled from. */
	if (ok) {
		struct sfb_row back;
		memset(&back, 0x5a, sizeof back);
		sfb_memo_row_expand(&out, sp, fp, &back);
		CHECK(loc_eq(&back.cfa, &row.cfa) && loc_eq(&back.ra, &row.ra) &&
			      loc_eq(&back.fp, &row.fp) && back.flags == SFB_ROW_MEMO,
		      "row_expand gives back: %s, marked as memoised", what);
	}
}

/* ---- First touches: the memo's pages ------------------------------------
 * A lookup skips a page of the memo that was never written, and a write
 * to such a page does not read it first (rowmemo.h: each first touch by a
 * read costs a page fault that the first write then repeats).  Run first,
 * before anything else reads the table: no page is resident; after a few
 * walks, which memoise their return addresses, exactly the pages marked
 * written are resident (mincore() counts a page mapped to the zero page
 * by a read as resident too, so a lookup that read an unwritten page
 * would show).  Not under valgrind, whose memory is its own. */

static NOINL int first_touch_leaf(void **buf)
{
	return sframe_backtrace(buf, 64);
}

/* A caller of next: one more return address. */
#define FT_LINK(name, next)                                   \
	static NOINL int name(void **buf)                     \
	{                                                     \
		return next(buf) + 0 * (int)(uintptr_t)buf;   \
	}
FT_LINK(first_touch_mid, first_touch_leaf)

/* Sixteen distinct return addresses for the write side: a chain of its
 * own. */
FT_LINK(ft16, first_touch_leaf)
FT_LINK(ft15, ft16)
FT_LINK(ft14, ft15)
FT_LINK(ft13, ft14)
FT_LINK(ft12, ft13)
FT_LINK(ft11, ft12)
FT_LINK(ft10, ft11)
FT_LINK(ft9, ft10)
FT_LINK(ft8, ft9)
FT_LINK(ft7, ft8)
FT_LINK(ft6, ft7)
FT_LINK(ft5, ft6)
FT_LINK(ft4, ft5)
FT_LINK(ft3, ft4)
FT_LINK(ft2, ft3)
FT_LINK(ft1, ft2)

/* The stack below this frame, touched (so that a walk's frames do not
 * fault it in). */
static NOINL void touch_stack_below(void)
{
	volatile char pad[32768];
	for (size_t i = 0; i < sizeof pad; i += 512)
		pad[i] = 0;
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void test_first_touches(void)
{
	if (vg)
		return;
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = sizeof sfb_memo;
	unsigned char vec[sizeof sfb_memo / 4096 + 1];
	if (pg != 4096 || (uintptr_t)sfb_memo % 4096) {
		CHECK(0, "first touches: 4 KiB pages and a page-aligned memo (page %ld)", pg);
		return;
	}
	int resident = 0;
	if (mincore((void *)sfb_memo, len, vec) == 0)
		for (size_t i = 0; i < len / 4096; i++)
			resident += vec[i] & 1;
	CHECK(resident == 0 && atomic_load(&sfb_memo_pages_written) == 0,
	      "first touches: before any walk no page of the memo is resident (%d)", resident);
	void *buf[64];
	for (int i = 0; i < 3; i++) {
		first_touch_mid(buf);
		first_touch_leaf(buf);
		sframe_backtrace(buf, 64);
	}
	uint32_t bits = atomic_load(&sfb_memo_pages_written);
	int mismatched = 0, marked = 0;
	if (mincore((void *)sfb_memo, len, vec) != 0)
		mismatched = -1;
	for (size_t i = 0; mismatched >= 0 && i < len / 4096; i++) {
		bool written = bits >> i & 1;
		marked += written;
		mismatched += written != (bool)(vec[i] & 1);
	}
	CHECK(marked > 0 && mismatched == 0,
	      "first touches: after walks the resident pages are exactly the %d written ones "
	      "(%d differ)", marked, mismatched);
	/* The write side: a walk through new return addresses costs one fault
	 * per memo page it writes first, not two (a read first, then the
	 * write).  Fewer than two a page, not exactly one: a sanitizer build
	 * also faults in the shadow of what the walk touches. */
	touch_stack_below();
	uint32_t before = atomic_load(&sfb_memo_pages_written);
	long f0 = minor_faults();
	ft1(buf);
	long faults = minor_faults() - f0;
	int fresh = __builtin_popcount(atomic_load(&sfb_memo_pages_written) & ~before);
	CHECK(fresh >= 4 && faults < 2 * fresh,
	      "first touches: a walk writing %d fresh pages of the memo took %ld page faults",
	      fresh, faults);
}

static void test_row_of(void)
{
	const int SP = 7, FP = 6;                    /* x86-64 */
	const int A64_SP = 31, A64_FP = 29;          /* AArch64 numbering */

	/* The common shapes. */
	accept("CFA=SP+8, RA=*(CFA-8), FP same", ROW(X(SP, 8), D(CFA, -8), L_SAME(), 0), SP, FP,
	       8, 0, -1, 0);
	accept("CFA=SP+16, RA=*(CFA-8), FP=*(CFA-16)", ROW(X(SP, 16), D(CFA, -8), D(CFA, -16), 0),
	       SP, FP, 16, 0, -1, -2);
	accept("CFA=FP+16, RA=*(CFA-8), FP=*(CFA-16)", ROW(X(FP, 16), D(CFA, -8), D(CFA, -16), 0),
	       SP, FP, 16, 1, -1, -2);
	accept("CFA=FP+16, RA=*(CFA-8), FP same", ROW(X(FP, 16), D(CFA, -8), L_SAME(), 0), SP, FP,
	       16, 1, -1, 0);
	accept("CFA=FP+4096 (FP-based, any size)", ROW(X(FP, 4096), D(CFA, -8), D(CFA, -16), 0), SP,
	       FP, 4096, 1, -1, -2);
	accept("big frame CFA=SP+6016", ROW(X(SP, 6016), D(CFA, -8), L_SAME(), 0), SP, FP, 6016, 0,
	       -1, 0);
	accept("huge frame CFA=SP+0x7fffffe0", ROW(X(SP, 0x7fffffe0), D(CFA, -8), L_SAME(), 0), SP,
	       FP, 0x7fffffe0, 0, -1, 0);
	/* The outermost row's offset (rowmemo.h) and beyond: no real row's,
	 * whatever their slots. */
	refuse("CFA=SP+0x7ffffff0, the outermost row's offset",
	       ROW(X(SP, SFB_MEMO_OUTERMOST_CFA), D(CFA, -8), L_SAME(), 0), SP, FP);
	refuse("CFA=SP+0x7ffffff8", ROW(X(SP, 0x7ffffff8), D(CFA, -8), L_SAME(), 0), SP, FP);
	accept("FP at the last slot, CFA-1024 (slot -128), CFA=SP+1024",
	       ROW(X(SP, 1024), D(CFA, -8), D(CFA, -1024), 0), SP, FP, 1024, 0, -1, -128);
	accept("SP-based CFA reaching exactly the lowest slot: SP+48, FP=*(CFA-48)",
	       ROW(X(SP, 48), D(CFA, -8), D(CFA, -48), 0), SP, FP, 48, 0, -1, -6);
	accept("flags RA_FIXED|FLEX|RA_PADDING|PAUTH_B do not matter",
	       ROW(X(SP, 16), D(CFA, -8), D(CFA, -16),
		   SFB_ROW_RA_FIXED | SFB_ROW_FLEX | SFB_ROW_RA_PADDING | SFB_ROW_PAUTH_B),
	       SP, FP, 16, 0, -1, -2);
	accept("AArch64 numbering: CFA=x29+16, RA=*(CFA-8), FP=*(CFA-16)",
	       ROW(X(A64_FP, 16), D(CFA, -8), D(CFA, -16), 0), A64_SP, A64_FP, 16, 1, -1, -2);
	/* The RA elsewhere than CFA-8 (x86-64 refuses these: FIXED_RA_SLOT). */
	accept("RA at the last slot, CFA-1024 (slot -128), CFA=SP+1024",
	       ROW(X(SP, 1024), D(CFA, -1024), L_SAME(), 0), SP, FP, 1024, 0, -128, 0);
	accept("FP above RA: RA=*(CFA-16), FP=*(CFA-8), CFA=SP+24",
	       ROW(X(SP, 24), D(CFA, -16), D(CFA, -8), 0), SP, FP, 24, 0, -2, -1);
	accept("AArch64 numbering: CFA=sp(31)+32, RA=*(CFA-24), FP=*(CFA-32)",
	       ROW(X(A64_SP, 32), D(CFA, -24), D(CFA, -32), 0), A64_SP, A64_FP, 32, 0, -3, -4);

	/* CFA rule. */
	const struct sfb_loc ra = D(CFA, -8), fps = D(CFA, -16);
	refuse("CFA same", ROW(L_SAME(), ra, fps, 0), SP, FP);
	refuse("CFA undefined", ROW(L_UNDEF(), ra, fps, 0), SP, FP);
	refuse("CFA based on RBX (3)", ROW(X(3, 16), ra, fps, 0), SP, FP);
	refuse("CFA based on R10 (10)", ROW(X(10, 16), ra, fps, 0), SP, FP);
	refuse("CFA based on the CFA", ROW(X(CFA, 16), ra, fps, 0), SP, FP);
	refuse("CFA dereferenced: *(SP+16)", ROW(D(SP, 16), ra, fps, 0), SP, FP);
	refuse("CFA dereferenced: *(FP+16)", ROW(D(FP, 16), ra, fps, 0), SP, FP);
	refuse("CFA=FP+15 (odd: the base bit)", ROW(X(FP, 15), ra, fps, 0), SP, FP);
	refuse("x86-64 SP (7) under AArch64 numbering", ROW(X(SP, 16), ra, fps, 0), A64_SP, A64_FP);
	refuse("x86-64 FP (6) under AArch64 numbering", ROW(X(FP, 16), ra, fps, 0), A64_SP, A64_FP);

	/* RA rule. */
	refuse("RA same (link register)", ROW(X(SP, 16), L_SAME(), fps, 0), SP, FP);
	refuse("RA undefined", ROW(X(SP, 16), L_UNDEF(), fps, 0), SP, FP);
	refuse("RA = CFA-8 (not dereferenced)", ROW(X(SP, 16), X(CFA, -8), fps, 0), SP, FP);
	refuse("RA = *(SP+8) (not CFA-relative)", ROW(X(SP, 16), D(SP, 8), fps, 0), SP, FP);
	refuse("RA = *(FP+8) (not CFA-relative)", ROW(X(SP, 16), D(FP, 8), fps, 0), SP, FP);
	refuse("RA at CFA+0", ROW(X(SP, 16), D(CFA, 0), fps, 0), SP, FP);
	refuse("RA at CFA+8 (positive)", ROW(X(SP, 16), D(CFA, 8), fps, 0), SP, FP);
	refuse("RA at CFA-4 (unaligned)", ROW(X(SP, 16), D(CFA, -4), fps, 0), SP, FP);
	refuse("RA at CFA-12 (unaligned)", ROW(X(SP, 16), D(CFA, -12), fps, 0), SP, FP);
	refuse("RA at CFA-1032 (beyond -8*128)", ROW(X(SP, 2048), D(CFA, -1032), L_SAME(), 0), SP, FP);
	refuse("RA at CFA-4096", ROW(X(SP, 8192), D(CFA, -4096), L_SAME(), 0), SP, FP);
	refuse("RA at CFA+INT32_MIN", ROW(X(SP, 16), D(CFA, INT32_MIN), L_SAME(), 0), SP, FP);

	/* FP rule. */
	refuse("FP undefined", ROW(X(SP, 16), ra, L_UNDEF(), 0), SP, FP);
	refuse("FP = CFA-16 (not dereferenced)", ROW(X(SP, 16), ra, X(CFA, -16), 0), SP, FP);
	refuse("FP = *(SP+0) (not CFA-relative)", ROW(X(SP, 16), ra, D(SP, 0), 0), SP, FP);
	refuse("FP = *(FP+0) (not CFA-relative)", ROW(X(FP, 16), ra, D(FP, 0), 0), SP, FP);
	refuse("FP at CFA+0", ROW(X(SP, 16), ra, D(CFA, 0), 0), SP, FP);
	refuse("FP at CFA+16 (positive)", ROW(X(SP, 16), ra, D(CFA, 16), 0), SP, FP);
	refuse("FP at CFA-20 (unaligned)", ROW(X(SP, 24), ra, D(CFA, -20), 0), SP, FP);
	refuse("FP at CFA-1032 (beyond -8*128)", ROW(X(SP, 2048), ra, D(CFA, -1032), 0), SP, FP);
	refuse("FP at CFA-1032 (beyond -8*128), FP-based CFA", ROW(X(FP, 2048), ra, D(CFA, -1032), 0),
	       SP, FP);
	/* FP-based CFA: the slots in the frame record's two words (the
	 * walker checks those against SP, a constant). */
	refuse("CFA=FP+24, FP at CFA-24 (below the frame record)",
	       ROW(X(FP, 24), ra, D(CFA, -24), 0), SP, FP);
	refuse("CFA=FP+1024, FP at CFA-1024 (below the frame record)",
	       ROW(X(FP, 1024), ra, D(CFA, -1024), 0), SP, FP);
	refuse("AArch64 numbering: CFA=x29+32, RA=*(CFA-24), FP=*(CFA-32)",
	       ROW(X(A64_FP, 32), D(CFA, -24), D(CFA, -32), 0), A64_SP, A64_FP);

	/* SP-based CFA: aligned, and at least as far above SP as the
	 * lowest slot is below the CFA. */
	refuse("CFA=SP+12 (unaligned)", ROW(X(SP, 12), ra, L_SAME(), 0), SP, FP);
	refuse("CFA=SP+20 (unaligned)", ROW(X(SP, 20), ra, fps, 0), SP, FP);
	refuse("CFA=SP+0, RA at CFA-8 (below SP)", ROW(X(SP, 0), ra, L_SAME(), 0), SP, FP);
	refuse("CFA=SP-8", ROW(X(SP, -8), ra, L_SAME(), 0), SP, FP);
	refuse("CFA=SP+8, FP at CFA-16 (below SP)", ROW(X(SP, 8), ra, fps, 0), SP, FP);
	refuse("CFA=SP+40, FP at CFA-48 (below SP)", ROW(X(SP, 40), ra, D(CFA, -48), 0), SP, FP);
	refuse("CFA=SP+1016, FP at CFA-1024 (below SP)", ROW(X(SP, 1016), ra, D(CFA, -1024), 0), SP,
	       FP);

	/* Flags that make a row special. */
	static const struct {
		unsigned flag;
		const char *name;
	} special[] = {
		{ SFB_ROW_SIGNAL, "SIGNAL" },
		{ SFB_ROW_OUTERMOST, "OUTERMOST" },
		{ SFB_ROW_MANGLED_RA, "MANGLED_RA" },
		{ SFB_ROW_PCMASK, "PCMASK" },
	};
	char what[128];
	for (unsigned i = 0; i < sizeof special / sizeof special[0]; i++) {
		snprintf(what, sizeof what, "flag %s on a common row", special[i].name);
		refuse(what, ROW(X(SP, 16), ra, fps, special[i].flag), SP, FP);
		snprintf(what, sizeof what, "flag %s on an FP-based row", special[i].name);
		refuse(what, ROW(X(FP, 16), ra, fps, special[i].flag | SFB_ROW_RA_FIXED), SP, FP);
	}
}

/* ---- Part 1: stale hints ------------------------------------------------------ */

static int work_scale_num = 4, work_scale_den = 4;
static int scaled(int n)
{
	int k = n * work_scale_num / work_scale_den;
	return k > 0 ? k : 1;
}

/* Counted by pre_walk_stale: the leaf's entry (return address into
 * m_leaf) and whether its hint points at the caller's entry. */
static unsigned long leaf_seen, leaf_stale;

static void pre_walk_stale(void)
{
	if (!W.first || gt_d < 2)
		return;
	struct sfb_memo_entry *leaf = entry_of(MEMO_KEY(gt[gt_d]));
	struct sfb_memo_entry *want = entry_of(MEMO_KEY(gt[gt_d - 1]));
	if (!leaf || !want)
		return;
	leaf_seen++;
	leaf_stale += sfb_memo_hint(leaf) != want;
}

/* Keys of the chain of the last take() that should be memoised: every
 * return address into this program (frame 0 from W.pcs[0]). */
static int chain_keys(uintptr_t *keys)
{
	uintptr_t exp[MAXF + 8];
	int e = expected(exp), k = 0;
	if (W.n_pcs > 0)
		keys[k++] = MEMO_KEY(W.pcs[0]);
	for (int i = 1; i < e - 1 - ntail; i++) /* not main's caller (libc) */
		keys[k++] = MEMO_KEY(exp[i]);
	return k;
}

static uint32_t exe_epoch;

NOINL int phase_stale(void)
{
	phase_ra = RA0();

	/* The first (cold) walk: learn what lies beyond main's caller, if
	 * anything (libc has no .sframe on most systems: nothing). */
	path[0] = F_A;
	W.apis = A_PCS | A_EX;
	W.size = MAXF;
	drive(path, 1);
	{
		uintptr_t got[MAXF], exp[MAXF + 8];
		int e = expected(exp), want;
		for (int i = 0; i < W.n_pcs; i++)
			got[i] = (uintptr_t)W.pcs[i];
		int n = W.n_pcs < e ? W.n_pcs : e;
		int bad = diff_walk(got, n, e, false, &want);
		bool ok = bad < 0 && W.n_pcs - e <= MAXTAIL && W.n_ex == W.n_pcs;
		if (ok) {
			ntail = W.n_pcs - e;
			for (int i = 0; i < ntail; i++)
				tail[i] = got[e + i];
			tail_stop = W.st.stop;
		} else {
			print_walk("cold sframe_backtrace", got, W.n_pcs, bad, e);
		}
		CHECK(ok, "cold walk: the %d recorded frames, then %d past main's caller (%s), stop %s",
		      e, W.n_pcs - e, sym_of(main_ra - 1), sframe_bt_stop_name(W.st.stop));
	}

	/* Warm up with every kind of function, then check that the chain's
	 * return addresses are memoised: else the fast path and its hints
	 * would not be tested at all. */
	static const uint8_t all[] = { F_PLAIN, F_VLA, F_BIG, F_SAVES, F_ALLOCA, F_PLAIN, F_PLAIN,
				       F_SAVES, F_VLA, F_ALLOCA, F_ALLOCA, F_B };
	memcpy(path, all, sizeof all);
	W.apis = A_PCS | A_EX | A_UC;
	for (int i = 0; i < 3; i++)
		drive(path, (int)sizeof all);
	{
		uintptr_t keys[MAXF + 8];
		int nk = chain_keys(keys), have = 0, excused = 0;
		for (int i = 0; i < nk; i++) {
			struct sfb_memo_entry *e = entry_of(keys[i]);
			if (e) {
				have++;
				exe_epoch = e->epoch;
				continue;
			}
			/* Two-way: two other keys the walks wrote to the same
			 * pair evict it: the chain's, the frames past main
			 * (libc's, the last walked: libc's base and the
			 * program's are apart by chance) or an exact PC's. */
			struct sfb_memo_entry *p = sfb_memo_pair(keys[i]);
			int others = 0;
			for (int w = 0; w < 2; w++) {
				uintptr_t k = p[w].key;
				bool walked = k != keys[i] && k >> 63;
				for (int j = 0; j < nk && !walked; j++)
					walked = k != keys[i] && k == keys[j];
				for (int j = 0; j < ntail && !walked; j++)
					walked = k != keys[i] && k == MEMO_KEY(tail[j]);
				others += walked;
			}
			if (others >= 2)
				excused++;
			else
				printf("# not memoised: key %#" PRIxPTR " (%s)\n", keys[i],
				       sym_of(keys[i] - 1));
		}
		CHECK(nk > 10 && have + excused == nk && exe_epoch != 0,
		      "warm: %d of the chain's %d return addresses memoised (%d evicted by a "
		      "colliding key), epoch %" PRIu32, have, nk, excused, exe_epoch);
	}

	/* The leaf through two callers, alternately. */
	struct tally t = { .phase = "a->leaf / b->leaf alternating" };
	pre_walk = pre_walk_stale;
	int n = scaled(10000);
	for (int i = 0; i < n; i++) {
		path[0] = i & 1 ? F_B : F_A;
		W.apis = i % 8 == 0 ? A_PCS | A_EX | A_UC : i % 4 == 0 ? A_EX : A_PCS;
		W.size = MAXF;
		drive(path, 1);
		judge(&t);
	}
	tally_report(&t);
	CHECK(leaf_seen >= (unsigned long)n / 2 && leaf_stale > 0,
	      "a/b alternating: the leaf's hint was stale before %lu of %lu walks", leaf_stale,
	      leaf_seen);

	/* The same at the end of deeper chains: alternate the last caller,
	 * and also the prefix, every walk. */
	struct tally t2 = { .phase = "deep chains, alternating callers and prefixes" };
	leaf_seen = leaf_stale = 0;
	uint8_t pre[2][MAXLEN];
	int plen[2];
	for (int i = 0; i < scaled(10000); i++) {
		if (i % 64 == 0)
			for (int k = 0; k < 2; k++) {
				plen[k] = random_path() - 1;
				for (int j = 0; j < plen[k]; j++)
					pre[k][j] = path[j] == F_A || path[j] == F_B ? F_SAVES : path[j];
			}
		int k = (i >> 1) & 1;
		memcpy(path, pre[k], (size_t)plen[k]);
		path[plen[k]] = i & 1 ? F_B : F_A;
		W.apis = i % 3 == 0 ? A_EX : i % 7 == 0 ? A_UC : A_PCS;
		W.size = i % 5 == 0 ? random_size(plen[k] + 1) : MAXF;
		drive(path, plen[k] + 1);
		judge(&t2);
	}
	tally_report(&t2);
	CHECK(leaf_stale > 0, "deep chains: the leaf's hint was stale before %lu of %lu walks",
	      leaf_stale, leaf_seen);
	pre_walk = NULL;

	/* Random chains of every kind, random buffer sizes. */
	struct tally t3 = { .phase = "random chains" };
	for (int i = 0; i < scaled(10000); i++) {
		int len = random_path();
		W.apis = i % 3 == 0 ? A_EX : i % 11 == 0 ? A_UC | A_PCS : A_PCS;
		W.size = random_size(len);
		drive(path, len);
		judge(&t3);
	}
	tally_report(&t3);
	return (int)(sink & 1);
}

/* ---- Part 2: corrupted hints ----------------------------------------------------- */

enum corrupt { C_RANDOM, C_ONE_RANDOM, C_ONE_REAL, C_SELF, C_DECOY, C_CONTROL, NCORRUPT };
static const char *const corrupt_name[NCORRUPT] = {
	"every hint a random other entry",
	"every hint one random entry",
	"every hint the leaf's entry",
	"every hint its own entry",
	"every hint a decoy (wrong epoch, busy, key+1, epoch 0)",
	"control: decoys made valid",
};
static enum corrupt corrupt_mode;

/* Decoys live in pairs that hold nothing. */
#define MAXDECOY (MAXF + 8)
static struct sfb_memo_entry *decoy_slot[MAXDECOY];
static int ndecoy_slot, ndecoy;
static uintptr_t decoy_for[MAXDECOY]; /* the key each one imitates */
static uintptr_t f0_ra[NAPI];          /* frame 0 of each API's walk from take() */
static unsigned long decoy_walks, control_walks;

static int find_decoy_slots(void)
{
	ndecoy_slot = 0;
	for (int i = SFB_MEMO_ENTRIES - 2; i >= 0 && ndecoy_slot < MAXDECOY; i -= 2) {
		struct sfb_memo_entry *p = &sfb_memo[i];
		if (atomic_load(&p[0].seq) == 0 && atomic_load(&p[1].seq) == 0 && !p[0].key &&
		    !p[1].key)
			decoy_slot[ndecoy_slot++] = p; /* the first of the pair only */
	}
	return ndecoy_slot;
}

static void clear_decoys(void)
{
	for (int i = 0; i < ndecoy; i++)
		entry_clear(decoy_slot[i]);
	ndecoy = 0;
}

static void fill_decoy(struct sfb_memo_entry *d, uintptr_t key, unsigned kind, bool valid);

/* Plant a decoy of key: looks like its entry, but is not usable (unless
 * valid, the control), and has a row that would change the walk. */
static struct sfb_memo_entry *plant(uintptr_t key, unsigned kind, bool valid)
{
	if (ndecoy >= ndecoy_slot)
		return NULL;
	struct sfb_memo_entry *d = decoy_slot[ndecoy];
	decoy_for[ndecoy++] = key;
	fill_decoy(d, key, kind, valid);
	return d;
}

/* Make d an entry for key whose row is wrong (two words up: not the
 * frame's RA), usable (valid) or spoilt in one way (kind). */
static void fill_decoy(struct sfb_memo_entry *d, uintptr_t key, unsigned kind, bool valid)
{
	struct sfb_memo_entry *real = entry_of(key);
	struct sfb_memo_row row = mr_make(16, 0, -1, 0);
	if (real)
		row = mr_make(mr_cfa_off(&real->row) + 16, mr_on_fp(&real->row),
			      mr_ra_slot(&real->row), mr_fp_slot(&real->row));
	/* An exact key's entry is valid only under the exact epoch, a return
	 * address's only under the plain one: each kind's wrong epoch is the
	 * other's right one. */
	uint32_t epoch = key >> 63 ? SFB_MEMO_EXACT_EPOCH(exe_epoch) : exe_epoch;
	atomic_store(&d->seq, 1);
	d->row = row;
	d->key = key;
	d->epoch = epoch;
	uint32_t seq = 2;
	if (!valid) {
		switch (kind % 4) {
		case 0:
			d->epoch = epoch ^ 0x40000000u;
			break;
		case 1:
			seq = 3; /* a writer holds it */
			break;
		case 2:
			d->key = key + 1;
			break;
		default:
			d->epoch = 0;
			break;
		}
	}
	sfb_memo_set_hint(d, d);
	atomic_store(&d->seq, seq);
}

static void pre_walk_corrupt(void)
{
	struct sfb_memo_entry *one = NULL;
	switch (corrupt_mode) {
	case C_RANDOM:
		for (int i = 0; i < SFB_MEMO_ENTRIES; i++) {
			int j = (int)(rnd() % (SFB_MEMO_ENTRIES - 1));
			sfb_memo_set_hint(&sfb_memo[i], &sfb_memo[j >= i ? j + 1 : j]);
		}
		return;
	case C_ONE_RANDOM:
		one = &sfb_memo[rnd() % SFB_MEMO_ENTRIES];
		break;
	case C_ONE_REAL:
		one = entry_of(MEMO_KEY(gt[gt_d]));
		if (!one)
			one = &sfb_memo[0];
		break;
	case C_SELF:
		for (int i = 0; i < SFB_MEMO_ENTRIES; i++)
			sfb_memo_set_hint(&sfb_memo[i], &sfb_memo[i]);
		return;
	case C_DECOY:
	case C_CONTROL: {
		/* A decoy of every return address of the walk (main's caller
		 * in libc too: there the decoy has the program's epoch); the
		 * entry of each frame hints at the decoy of the next one,
		 * every other entry at a random decoy. */
		bool valid = corrupt_mode == C_CONTROL;
		uintptr_t exp[MAXF + 8];
		int e = expected(exp);
		struct sfb_memo_entry *dec[MAXF + 8];
		clear_decoys();
		for (int i = 1; i < e; i++)
			dec[i] = plant(MEMO_KEY(exp[i]), (unsigned)(i + decoy_walks), valid);
		if (!ndecoy)
			return;
		for (int i = 0; i < SFB_MEMO_ENTRIES; i++)
			sfb_memo_set_hint(&sfb_memo[i], decoy_slot[rnd() % (unsigned)ndecoy]);
		for (int i = 0; i < e - 1; i++) {
			uintptr_t key = MEMO_KEY(i ? exp[i] : f0_ra[W.cur_api]);
			struct sfb_memo_entry *from = i || f0_ra[W.cur_api] ? entry_of(key) : NULL;
			if (from && dec[i + 1])
				sfb_memo_set_hint(from, dec[i + 1]);
		}
		if (valid)
			control_walks++;
		else
			decoy_walks++;
		return;
	}
	default:
		return;
	}
	for (int i = 0; i < SFB_MEMO_ENTRIES; i++)
		sfb_memo_set_hint(&sfb_memo[i], one);
}

static void remember_f0(void)
{
	if ((W.apis & A_PCS) && W.n_pcs > 0)
		f0_ra[API_PCS] = (uintptr_t)W.pcs[0];
	if ((W.apis & A_EX) && W.n_ex > 0)
		f0_ra[API_EX] = W.fr[0].pc;
}

NOINL int phase_corrupt(void)
{
	phase_ra = RA0();
	char name[160];
	CHECK(find_decoy_slots() >= MAXDECOY / 2, "%d empty pairs for decoys", ndecoy_slot);

	for (int m = 0; m < NCORRUPT; m++) {
		if (m == C_CONTROL && vg) {
			printf("# control skipped under valgrind: its walks read stack words that "
			       "were never written\n");
			continue;
		}
		corrupt_mode = (enum corrupt)m;
		snprintf(name, sizeof name, "corrupted hints, %s", corrupt_name[m]);
		struct tally t = { .phase = name, .printed = m == C_CONTROL ? 3 : 0 };
		pre_walk = pre_walk_corrupt;
		int n = scaled(m == C_CONTROL ? 200 : 1000);
		for (int i = 0; i < n; i++) {
			int len;
			if (i % 4 == 0) {
				path[0] = i & 4 ? F_B : F_A;
				len = 1;
			} else {
				len = random_path();
			}
			W.apis = i % 3 == 0 ? A_EX | A_PCS : i % 5 == 0 ? A_UC | A_PCS : A_PCS;
			W.size = i % 4 == 3 ? random_size(len) : MAXF;
			drive(path, len);
			remember_f0();
			judge(&t);
		}
		pre_walk = NULL;
		clear_decoys();
		if (m == C_CONTROL) {
			/* Not a check of the library: shows that the decoys'
			 * rows would change a walk that used them. */
			unsigned long total = 0, bad = 0;
			for (int a = 0; a < NAPI; a++) {
				total += t.n[a];
				bad += t.bad[a];
			}
			printf("# control: with the decoys made valid (right key, epoch, even "
			       "sequence), %lu of %lu walks differ from the ground truth\n",
			       bad, total);
		} else {
			tally_report(&t);
		}
	}
	printf("# decoy walks %lu, control walks %lu\n", decoy_walks, control_walks);

	/* Wipe the table (what is left of the control's hints with it),
	 * then walk again from cold. */
	for (int i = 0; i < SFB_MEMO_ENTRIES; i++)
		entry_clear(&sfb_memo[i]);
	struct tally t = { .phase = "after wiping the memo" };
	for (int i = 0; i < scaled(1000); i++) {
		int len = random_path();
		W.apis = i % 2 ? A_EX : A_PCS | A_UC;
		W.size = random_size(len);
		drive(path, len);
		judge(&t);
	}
	tally_report(&t);
	return (int)(sink & 1);
}

/* ---- Part 5: exact PCs --------------------------------------------------------------- */

/* A ucontext's PC is exact; its row is memoised under MEMO_EXACT_KEY in
 * the second entry of that key's pair (walk.c: row_from_object).  take()'s
 * getcontext() gives the same PC every time. */
enum exact_mode { X_DECOY, X_CONTROL, X_CROSS, NX };
static const char *const exact_name[NX] = {
	("exact PC: its pair holds decoys (wrong epoch, busy, key+1, epoch 0, the "
	 "return-address key of the same address)"),
	"control: exact decoys made valid",
	"every return address's pair holds a valid-looking entry under the exact key",
};
static enum exact_mode exact_mode;
static uintptr_t uc_pc;
static unsigned long exact_walks;

static void pre_walk_exact(void)
{
	exact_walks++;
	if (exact_mode == X_CROSS) {
		/* An exact PC's row must never serve a return address. */
		uintptr_t exp[MAXF + 8];
		int e = expected(exp);
		for (int i = 1; i < e; i++) {
			struct sfb_memo_entry *p = sfb_memo_pair(MEMO_KEY(exp[i]));
			for (int k = 0; k < 2; k++)
				fill_decoy(&p[k], MEMO_EXACT_KEY(exp[i]), 0, true);
		}
		return;
	}
	if (W.cur_api != API_UC)
		return;
	struct sfb_memo_entry *p = sfb_memo_pair(MEMO_EXACT_KEY(uc_pc));
	unsigned kind = (unsigned)(exact_walks % 5);
	/* The control's valid decoy goes only where exact rows are looked up,
	 * the second entry: a lookup anywhere else misses it, and the control
	 * then fails to go wrong. */
	if (exact_mode == X_CONTROL)
		entry_clear(&p[0]);
	for (int k = exact_mode == X_CONTROL ? 1 : 0; k < 2; k++) {
		fill_decoy(&p[k], MEMO_EXACT_KEY(uc_pc), kind, exact_mode == X_CONTROL || kind == 4);
		if (exact_mode == X_DECOY && kind == 4) {
			/* valid, but the return-address key */
			p[k].key = MEMO_KEY(uc_pc);
			p[k].epoch = exe_epoch;
		}
	}
}

/* A corrupt stack: the return-address slot of a frame at the memoised
 * exact PC holds that PC's exact key (the PC with its top bit set, which
 * no return address has).  The walk from there must stop after frame 0,
 * in the fast loop's inline probe as anywhere: the key and the object's
 * epoch are those of the exact entry, whose row must not serve it. */
static NOINL void exact_key_on_stack(const struct sfb_memo_entry *e)
{
	enum { WORDS = 4096 };
	uintptr_t stk[WORDS];
	memset(stk, 0, sizeof stk);
	const struct sfb_memo_row row = e->row;
	const uintptr_t base = (uintptr_t)&stk[WORDS / 2];
	const uintptr_t fp = base, sp = mr_on_fp(&row) ? base - 64 : base;
	const uintptr_t cfa = (mr_on_fp(&row) ? fp : sp) + (uintptr_t)(intptr_t)mr_cfa_off(&row);
#ifdef SFB_RA_SLOT
	const uintptr_t ra_at = cfa + 8 * (uintptr_t)(intptr_t)SFB_RA_SLOT;
#else
	const uintptr_t ra_at = cfa + 8 * (uintptr_t)(intptr_t)mr_ra_slot(&row);
#endif
	bool inside = ra_at >= (uintptr_t)stk && ra_at < (uintptr_t)&stk[WORDS] && ra_at % 8 == 0;
	CHECK(inside, "exact key on the stack: the exact row (%s) puts the return address "
		      "inside the test's stack array", mr_on_fp(&row) ? "FP-based" : "SP-based");
	if (!inside)
		return;
	*(uintptr_t *)ra_at = MEMO_EXACT_KEY(uc_pc);
	static ucontext_t uc;
	getcontext(&uc);
	UC_PC(&uc) = uc_pc;
	UC_SP(&uc) = sp;
	UC_FP(&uc) = fp;
	void *out[8];
	int n = sframe_backtrace_ucontext(&uc, out, 8);
	CHECK(n == 1 && out[0] == (void *)uc_pc,
	      "exact key on the stack: the walk stops at frame 0 (%d frames, frame 1 %p)", n,
	      n > 1 ? out[1] : NULL);
	sink += stk[WORDS - 1];
}

NOINL int phase_exact(void)
{
	phase_ra = RA0();
	/* A walk from take()'s ucontext memoises its exact PC. */
	path[0] = F_A;
	W.apis = A_UC;
	W.size = MAXF;
	drive(path, 1);
	uc_pc = W.n_uc > 0 ? (uintptr_t)W.ucs[0] : 0;
	drive(path, 1);
	struct sfb_memo_entry *e = uc_pc ? entry_of(MEMO_EXACT_KEY(uc_pc)) : NULL;
	CHECK(e && e == sfb_memo_pair(MEMO_EXACT_KEY(uc_pc)) + 1 &&
		      e->epoch == SFB_MEMO_EXACT_EPOCH(exe_epoch) &&
		      !entry_of(MEMO_KEY(uc_pc)),
	      "the exact PC %#" PRIxPTR " (%s) is memoised, in the second entry of its pair, "
	      "with the program's exact epoch, and not under its return-address key",
	      uc_pc, sym_of(uc_pc));
	if (!e)
		return (int)(sink & 1);
	exact_key_on_stack(e);

	/* Then walks from it must stay right, with that entry used. */
	struct tally t0 = { .phase = "exact PC memoised" };
	for (int i = 0; i < scaled(1000); i++) {
		int len = random_path();
		W.apis = A_UC;
		W.size = random_size(len);
		drive(path, len);
		judge(&t0);
	}
	tally_report(&t0);

	for (int m = 0; m < NX; m++) {
		if (m == X_CONTROL && vg) {
			printf("# exact control skipped under valgrind (stack words never "
			       "written)\n");
			continue;
		}
		exact_mode = (enum exact_mode)m;
		struct tally t = { .phase = exact_name[m], .printed = m == X_CONTROL ? 3 : 0 };
		pre_walk = pre_walk_exact;
		for (int i = 0; i < scaled(m == X_CONTROL ? 200 : 1000); i++) {
			int len = random_path();
			W.apis = m == X_CROSS ? A_UC | A_PCS | A_EX : A_UC;
			W.size = i % 4 == 3 ? random_size(len) : MAXF;
			drive(path, len);
			judge(&t);
		}
		pre_walk = NULL;
		/* The control's entries are valid: gone before the next mode. */
		struct sfb_memo_entry *p = sfb_memo_pair(MEMO_EXACT_KEY(uc_pc));
		entry_clear(&p[0]);
		entry_clear(&p[1]);
		if (m == X_CONTROL) {
			CHECK(t.bad[API_UC] > t.n[API_UC] / 2,
			      "control: with a valid wrong row under the exact key, %lu of %lu "
			      "ucontext walks differ from the ground truth (the entry is used)",
			      t.bad[API_UC], t.n[API_UC]);
		} else {
			tally_report(&t);
		}
	}
	for (int i = 0; i < SFB_MEMO_ENTRIES; i++)
		entry_clear(&sfb_memo[i]);
	return (int)(sink & 1);
}

/* ---- Part 7: the recall of a thread's last sample ------------------------------ */

/* The pairs a sample's record must hold: those of its return addresses
 * pcs[1..n), a repeated one once, the first SFB_MEMO_RECALL of those (a
 * recursion does not use up the record). */
static bool recall_is(const uintptr_t *pcs, int n)
{
	uint16_t want[SFB_MEMO_RECALL];
	unsigned k = 0;
	for (int i = 1; i < n && k < SFB_MEMO_RECALL; i++)
		if (i == 1 || pcs[i] != pcs[i - 1])
			want[k++] = (uint16_t)((sfb_memo_pair(MEMO_KEY(pcs[i])) - sfb_memo) / 2);
	return sfb_memo_recalled.n == k &&
	       !memcmp(sfb_memo_recalled.pair, want, k * sizeof want[0]);
}

/* A path longer than the record: random_path()'s end early at the first
 * caller_a/caller_b. */
static int random_long_path(void)
{
	static const uint8_t kinds[] = { F_PLAIN, F_VLA, F_SAVES, F_ALLOCA };
	int len = SFB_MEMO_RECALL + 2 + (int)(rnd() % (MAXLEN - SFB_MEMO_RECALL - 1));
	for (int i = 0; i < len; i++) {
		uint64_t r = rnd();
		path[i] = i && r % 4 == 0 ? path[i - 1] : kinds[(r >> 8) % sizeof kinds];
	}
	return len;
}

static void recall_garble(void)
{
	sfb_memo_recalled.n = (uint16_t)rnd();
	for (int i = 0; i < SFB_MEMO_RECALL; i++)
		sfb_memo_recalled.pair[i] = (uint16_t)rnd();
}

static void pre_walk_recall(void)
{
	if (W.cur_api == API_UC)
		recall_garble();
}

/* The PCs of the last drive()'s ucontext walk into got[] (none if it
 * failed); *repeats counts return addresses equal to the one before. */
static int last_uc_walk(uintptr_t *got, unsigned long *repeats)
{
	int n = W.n_uc > 0 && W.n_uc <= MAXF ? W.n_uc : 0;
	for (int k = 0; k < n; k++) {
		got[k] = (uintptr_t)W.ucs[k];
		*repeats += k > 1 && got[k] == got[k - 1];
	}
	return n;
}

NOINL int phase_recall(void)
{
	phase_ra = RA0();
	/* A walk from a ucontext records its return addresses' pairs. */
	struct tally t = { .phase = "recall: ucontext walks" };
	unsigned long recorded = 0, wrong = 0, repeats = 0, long_walks = 0;
	for (int i = 0; i < scaled(1000); i++) {
		int len = i % 4 ? random_path() : random_long_path();
		W.apis = A_UC;
		W.size = i % 3 == 2 ? random_size(len) : MAXF;
		struct sfb_memo_recall before = sfb_memo_recalled;
		drive(path, len);
		judge(&t);
		uintptr_t got[MAXF];
		int n = last_uc_walk(got, &repeats);
		long_walks += n > SFB_MEMO_RECALL + 1;
		recorded++;
		/* A walk of one frame has no return address: the last
		 * record is still the best guess. */
		wrong += n > 1 ? !recall_is(got, n) : !!memcmp(&before, &sfb_memo_recalled, sizeof before);
	}
	tally_report(&t);
	CHECK(wrong == 0 && repeats && long_walks,
	      "recall: after each of %lu ucontext walks, the thread's record holds the pairs "
	      "of its return addresses, a repeated one once, the first %d (a walk of one "
	      "frame leaves it as it was; %lu differ; %lu "
	      "repeated addresses, %lu walks longer than the record)",
	      recorded, SFB_MEMO_RECALL, wrong, repeats, long_walks);

	/* With every entry held by a writer, nothing is memoised or found:
	 * each frame is the general path's, which records the same (its
	 * frames are noted one by one, a recursion's repeated address once,
	 * where the fast path notes the entries it uses). */
	for (int i = 0; i < SFB_MEMO_ENTRIES; i++)
		atomic_store(&sfb_memo[i].seq, 1);
	wrong = repeats = 0;
	unsigned long general_walks = 0;
	for (int i = 0; i < scaled(300); i++) {
		int len = i % 4 ? random_path() : random_long_path();
		W.apis = A_UC;
		W.size = MAXF;
		drive(path, len);
		uintptr_t got[MAXF];
		int n = last_uc_walk(got, &repeats);
		general_walks += n > 1;
		wrong += n > 1 && !recall_is(got, n);
	}
	for (int i = 0; i < SFB_MEMO_ENTRIES; i++)
		entry_clear(&sfb_memo[i]);
	CHECK(wrong == 0 && repeats && general_walks,
	      "recall: with every entry busy, %lu walks by the general path alone record their "
	      "return addresses' pairs the same way (%lu differ; %lu repeated addresses)",
	      general_walks, wrong, repeats);

	/* The same through sframe_backtrace_ex(), whose frames are records. */
	ucontext_t uc;
	getcontext(&uc);
	struct sframe_bt_frame fr[MAXF];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(&uc, fr, MAXF, 0, &st);
	uintptr_t got[MAXF];
	for (int k = 0; k < n; k++)
		got[k] = fr[k].pc;
	CHECK(n >= 3 && recall_is(got, n),
	      "recall: sframe_backtrace_ex() from a ucontext records its %d frames' pairs", n);

	/* Walks from the caller's own registers are no samples: they leave
	 * the record alone. */
	recall_garble();
	struct sfb_memo_recall before = sfb_memo_recalled;
	for (int i = 0; i < scaled(100); i++) {
		int len = random_path();
		W.apis = A_PCS | A_EX;
		W.size = MAXF;
		drive(path, len);
	}
	CHECK(!memcmp(&before, &sfb_memo_recalled, sizeof before),
	      "recall: sframe_backtrace() and sframe_backtrace_ex() without a ucontext leave "
	      "the record alone");

	/* A garbage record (a walk interrupted by a signal's walk) only
	 * costs useless prefetches. */
	struct tally tg = { .phase = "recall: garbage record before each ucontext walk" };
	pre_walk = pre_walk_recall;
	for (int i = 0; i < scaled(1000); i++) {
		int len = random_path();
		W.apis = A_UC;
		W.size = i % 3 == 2 ? random_size(len) : MAXF;
		drive(path, len);
		judge(&tg);
	}
	pre_walk = NULL;
	tally_report(&tg);
	return (int)(sink & 1);
}

/* ---- Part 3: the seqlock under concurrent writers --------------------------------- */

#define NKEYS 4            /* keys put; one more collides but is never put */
#define EPOCH 0x5eed1234u
#define NWRITERS 2
#define NREADERS 3
static uintptr_t ckey[NKEYS + 1];
static struct sfb_memo_row crow[NKEYS];
static struct sfb_memo_entry *cpair;
static _Atomic int cstop;
/* The workers stop by themselves at this time, not by a flag from the
 * main thread: under valgrind's default scheduler, threads that never
 * block can starve the main thread out of a nanosleep for hours. */
static struct timespec cdeadline;
/* Readers that have had both kinds of hit.  The deadline stops the
 * workers only once all have: under valgrind (one thread at a time, long
 * slices) the writers once used the whole time while the readers were
 * not yet scheduled, and the test failed with 0 lookups.  A broken
 * reader that never hits is stopped CSTOP_GRACE seconds later and fails
 * the checks instead of hanging the suite. */
static _Atomic int creaders_ready;
#define CSTOP_GRACE 60

static bool past(time_t extra_sec)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	time_t sec = cdeadline.tv_sec + extra_sec;
	return now.tv_sec > sec || (now.tv_sec == sec && now.tv_nsec >= cdeadline.tv_nsec);
}

static bool past_deadline(void)
{
	if (!past(0))
		return false;
	return atomic_load(&creaders_ready) == NREADERS || past(CSTOP_GRACE);
}


static bool keep_going(void)
{
	/* valgrind runs one thread at a time, each for a long slice: without
	 * a yield the readers may get no slice before the deadline. */
	if (vg)
		sched_yield();
	if (atomic_load_explicit(&cstop, memory_order_relaxed))
		return false;
	if (past_deadline()) {
		atomic_store_explicit(&cstop, 1, memory_order_relaxed);
		return false;
	}
	return true;
}

struct cstat {
	pthread_t th;
	uint64_t seed;
	unsigned long ops, ok_get, ok_try, miss, mixed, bad_entry, other_epoch, absent;
	struct sfb_memo_row bad_row;
	int bad_key;
	bool ready; /* counted in creaders_ready */
};
static struct cstat wst[NWRITERS], rst[NREADERS];

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* A row of the common shape derived from key, as a decoded row; *want
 * gets its compiled form, computed here independently of row_of(). */
static struct sfb_row row_for_key(uintptr_t key, struct sfb_memo_row *want)
{
	uint64_t h = mix64(key);
	int on_fp = (int)(h & 1);
	int ra_slot = FIXED_RA_SLOT ? FIXED_RA_SLOT : -1 - (int)((h >> 1) % 128);
	int fp_slot = 0;
	if ((h >> 8) % 4) {
		fp_slot = -1 - (int)((h >> 10) % 128);
		if (fp_slot == ra_slot)
			fp_slot = ra_slot == -1 ? -2 : ra_slot + 1;
	}
	if (on_fp) {
		/* FP-based: both slots in the frame record (SFB_MEMO_FP_LOWEST_SLOT). */
		ra_slot = FIXED_RA_SLOT ? FIXED_RA_SLOT : -1 - (int)((h >> 1) % 2);
		if (fp_slot)
			fp_slot = ra_slot == -1 ? -2 : -1;
	}
	int lowest = fp_slot && fp_slot < ra_slot ? fp_slot : ra_slot;
	int32_t off = on_fp ? 8 * (int32_t)(2 + (h >> 20) % 4000)
			    : 8 * (int32_t)(-lowest + (h >> 20) % 4000);
	*want = mr_make(off, on_fp, ra_slot, fp_slot);
	return ROW(X(on_fp ? 6 : 7, off), D(CFA, 8 * ra_slot),
		   fp_slot ? D(CFA, 8 * fp_slot) : L_SAME(), SFB_ROW_RA_FIXED);
}

static void *writer(void *arg)
{
	struct cstat *s = arg;
	while (keep_going()) {
		for (int k = 0; k < 256; k++) {
			int i = (int)(rnd_r(&s->seed) % NKEYS);
			sfb_memo_put(ckey[i], EPOCH, &crow[i]);
			s->ops++;
		}
	}
	return NULL;
}

static void reader_got(struct cstat *s, int i, const struct sfb_memo_entry *e,
		       const struct sfb_memo_row *row)
{
	if (e != cpair && e != cpair + 1) {
		s->bad_entry++;
	} else if (!row_eq(row, &crow[i])) {
		if (!s->mixed++) {
			s->bad_row = *row;
			s->bad_key = i;
		}
	}
}

static void *reader(void *arg)
{
	struct cstat *s = arg;
	struct sfb_memo_row row;
	while (keep_going()) {
		for (int k = 0; k < 256; k++) {
			int i = (int)(rnd_r(&s->seed) % NKEYS);
			s->ops++;
			memset(&row, 0xa5, sizeof row);
			const struct sfb_memo_entry *e = sfb_memo_get(ckey[i], EPOCH, &row);
			if (e) {
				s->ok_get++;
				reader_got(s, i, e, &row);
			} else {
				s->miss++;
			}
			int w = (int)(rnd_r(&s->seed) & 1);
			if (sfb_memo_try(cpair + w, ckey[i], EPOCH, &row)) {
				s->ok_try++;
				reader_got(s, i, cpair + w, &row);
			}
			static const uint32_t other[] = { EPOCH + 1, EPOCH ^ 0x80000000u, 0, ~EPOCH };
			uint32_t oe = other[rnd_r(&s->seed) % 4];
			if (sfb_memo_get(ckey[i], oe, &row) || sfb_memo_try(cpair + w, ckey[i], oe, &row))
				s->other_epoch++;
			if (sfb_memo_get(ckey[NKEYS], EPOCH, &row))
				s->absent++;
		}
		if (!s->ready && s->ok_get > 0 && s->ok_try > 0) {
			s->ready = true;
			atomic_fetch_add(&creaders_ready, 1);
		}
	}
	return NULL;
}

NOINL int phase_seqlock(double seconds)
{
	phase_ra = RA0();
	/* A pair that holds nothing, and keys that hash to it. */
	cpair = NULL;
	for (int i = 0; i < SFB_MEMO_ENTRIES && !cpair; i += 2)
		if (atomic_load(&sfb_memo[i].seq) == 0 && atomic_load(&sfb_memo[i + 1].seq) == 0)
			cpair = &sfb_memo[i];
	if (!cpair)
		cpair = &sfb_memo[SFB_MEMO_ENTRIES / 2];
	/* Their rows differ in every field that can (a key whose row
	 * would repeat an offset or slot of an earlier one is skipped). */
	int nk = 0;
	uintptr_t base = (uintptr_t)0x55aa00000000ull + (uintptr_t)(rnd() % 4096) * 16;
	for (uintptr_t k = base; nk < NKEYS + 1 && k < base + (uintptr_t)(1u << 28); k += 1) {
		if (sfb_memo_pair(k) != cpair)
			continue;
		struct sfb_memo_row r;
		row_for_key(k, &r);
		bool fresh = true;
		for (int j = 0; j < nk && nk < NKEYS; j++)
			fresh = fresh && mr_cfa_off(&r) != mr_cfa_off(&crow[j]) &&
				mr_fp_slot(&r) != mr_fp_slot(&crow[j]) &&
				(FIXED_RA_SLOT || mr_ra_slot(&r) != mr_ra_slot(&crow[j]));
		if (!fresh)
			continue;
		if (nk < NKEYS)
			crow[nk] = r;
		ckey[nk++] = k;
	}
	CHECK(nk == NKEYS + 1, "%d keys found that share pair %d of sfb_memo[]", nk,
	      (int)(cpair - sfb_memo));
	if (nk != NKEYS + 1)
		return 0;

	/* Rows derived from the keys, all different, compiled by row_of()
	 * as computed here. */
	bool rows_ok = true;
	for (int i = 0; i < NKEYS; i++) {
		struct sfb_memo_row want, got;
		struct sfb_row r = row_for_key(ckey[i], &want);
		memset(&got, 0, sizeof got);
		rows_ok = rows_ok && sfb_memo_row_of(&r, 7, 6, &got) &&
			  mr_cfa_off(&got) == mr_cfa_off(&want) && mr_on_fp(&got) == mr_on_fp(&want) &&
			  mr_ra_slot(&got) == mr_ra_slot(&want) && mr_fp_slot(&got) == mr_fp_slot(&want);
		crow[i] = got; /* what the writers put: readers compare all its bytes */
		char b[96];
		row_str(b, sizeof b, &want);
		printf("# key %d %#" PRIxPTR ": %s\n", i, ckey[i], b);
	}
	CHECK(rows_ok, "rows derived from the %d keys: accepted by row_of() as computed here",
	      NKEYS);

	uint32_t seq0 = atomic_load(&cpair[0].seq) + atomic_load(&cpair[1].seq);
	atomic_store(&cstop, 0);
	atomic_store(&creaders_ready, 0);
	clock_gettime(CLOCK_MONOTONIC, &cdeadline);
	cdeadline.tv_sec += (time_t)seconds;
	cdeadline.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (cdeadline.tv_nsec >= 1000000000L) {
		cdeadline.tv_sec++;
		cdeadline.tv_nsec -= 1000000000L;
	}
	for (int i = 0; i < NWRITERS; i++) {
		wst[i].seed = 0x1234567ull * (uint64_t)(i + 1) + rnd();
		if (pthread_create(&wst[i].th, NULL, writer, &wst[i]) != 0) {
			CHECK(0, "pthread_create writer %d", i);
			return 0;
		}
	}
	for (int i = 0; i < NREADERS; i++) {
		rst[i].seed = 0x7654321ull * (uint64_t)(i + 1) + rnd();
		if (pthread_create(&rst[i].th, NULL, reader, &rst[i]) != 0) {
			CHECK(0, "pthread_create reader %d", i);
			return 0;
		}
	}
	/* The workers stop themselves (past_deadline()). */
	for (int i = 0; i < NWRITERS; i++)
		pthread_join(wst[i].th, NULL);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(rst[i].th, NULL);

	struct cstat r = { 0 };
	unsigned long puts = 0;
	for (int i = 0; i < NWRITERS; i++)
		puts += wst[i].ops;
	for (int i = 0; i < NREADERS; i++) {
		r.ops += rst[i].ops;
		r.ok_get += rst[i].ok_get;
		r.ok_try += rst[i].ok_try;
		r.miss += rst[i].miss;
		r.mixed += rst[i].mixed;
		r.bad_entry += rst[i].bad_entry;
		r.other_epoch += rst[i].other_epoch;
		r.absent += rst[i].absent;
		if (rst[i].mixed) {
			char b1[96], b2[96];
			row_str(b1, sizeof b1, &rst[i].bad_row);
			row_str(b2, sizeof b2, &crow[rst[i].bad_key]);
			printf("# reader %d: key %d read as %s, want %s\n", i, rst[i].bad_key, b1, b2);
		}
	}
	uint32_t writes = (atomic_load(&cpair[0].seq) + atomic_load(&cpair[1].seq) - seq0) / 2;
	printf("# %.2f s: %lu puts by %d writers (%" PRIu32 " entry writes), %lu lookups by %d "
	       "readers: %lu get hits, %lu try hits, %lu misses\n",
	       seconds, puts, NWRITERS, writes, r.ops, NREADERS, r.ok_get, r.ok_try, r.miss);
	CHECK(r.mixed == 0 && r.bad_entry == 0,
	      "seqlock: all %lu successful reads returned their key's row (%lu mixed, %lu from "
	      "another entry)", r.ok_get + r.ok_try, r.mixed, r.bad_entry);
	CHECK(r.ok_get > 0 && r.ok_try > 0 && writes > 0,
	      "seqlock: reads succeeded while the pair was rewritten (%lu get, %lu try, %" PRIu32
	      " writes)", r.ok_get, r.ok_try, writes);
	CHECK(r.other_epoch == 0 && r.ops > 0,
	      "seqlock: %lu lookups with another epoch never succeeded (%lu did)", r.ops,
	      r.other_epoch);
	CHECK(r.absent == 0, "seqlock: a colliding key never put was never found (%lu times)",
	      r.absent);

	/* At rest: both entries stable, each holding one of the keys with
	 * its row.  (Racing writers may leave one key in both: harmless, so
	 * not checked.) */
	bool rest = true;
	for (int k = 0; k < 2; k++) {
		uint32_t seq = atomic_load(&cpair[k].seq);
		int i = 0;
		while (i < NKEYS && ckey[i] != cpair[k].key)
			i++;
		struct sfb_memo_row row;
		rest = rest && seq && !(seq & 1) && i < NKEYS && cpair[k].epoch == EPOCH &&
		       sfb_memo_try(&cpair[k], ckey[i], EPOCH, &row) && row_eq(&row, &crow[i]) &&
		       sfb_memo_get(ckey[i], EPOCH, &row) && row_eq(&row, &crow[i]);
	}
	CHECK(rest, "seqlock: at rest both entries of the pair are stable and hold a key with its "
		    "row");
	entry_clear(&cpair[0]);
	entry_clear(&cpair[1]);
	return (int)(sink & 1);
}

/* ---- main ---------------------------------------------------------------------------- */

/* ---- 6. An exact PC no object holds -------------------------------------- */

static atomic_int find_object_calls;
static atomic_bool count_find_object;

int _dl_find_object(void *pc, struct dl_find_object *result)
{
	static int (*next)(void *, struct dl_find_object *);
	if (!next)
		next = (int (*)(void *, struct dl_find_object *))dlsym(RTLD_NEXT,
									"_dl_find_object");
	if (atomic_load(&count_find_object))
		atomic_fetch_add(&find_object_calls, 1);
	return next ? next(pc, result) : -1;
}

static void phase_no_object(void)
{
	void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		CHECK(0, "no-object PC: mmap");
		return;
	}
	uintptr_t pc = (uintptr_t)page + 64;
	struct dl_find_object probe;
	CHECK(_dl_find_object((void *)pc, &probe) != 0,
	      "no-object PC: no object holds an anonymous mapping");
	ucontext_t uc;
	getcontext(&uc);
	UC_PC(&uc) = (greg_t)pc;
	int bad = 0, calls_bad = 0;
	for (int round = 0; round < 3; round++) {
		struct sframe_bt_frame f[8];
		struct sframe_bt_status st;
		atomic_store(&find_object_calls, 0);
		atomic_store(&count_find_object, true);
		int n = sframe_backtrace_ex(&uc, f, 8, 0, &st);
		atomic_store(&count_find_object, false);
		if (n != 1 || f[0].pc != pc || !f[0].exact || st.stop != SFRAME_BT_STOP_NO_OBJECT)
			bad++;
		if (atomic_load(&find_object_calls) != 1)
			calls_bad++;
		void *pcs[8];
		n = sframe_backtrace_ucontext(&uc, pcs, 8);
		if (n != 1 || pcs[0] != (void *)pc)
			bad++;
	}
	CHECK(bad == 0, "no-object PC: the walk is that PC alone, stop no-object (%d bad of 6)",
	      bad);
	CHECK(calls_bad == 0,
	      "no-object PC: one _dl_find_object() call per walk (%d of 3 walks differ, "
	      "last %d calls)", calls_bad, atomic_load(&find_object_calls));
	munmap(page, 4096);
}

int main(void)
{
	main_ra = RA0();
	vg = under_valgrind();
	const char *s = getenv("SFB_MEMO_SEED");
	if (s && *s)
		rnd_state = strtoull(s, NULL, 0) | 1;
	printf("# seed %#" PRIx64 "\n", rnd_state);
	s = getenv("SFB_MEMO_WORK");
	if (s && *s)
		work_scale_num = (int)(4 * strtod(s, NULL));
	else if (vg)
		work_scale_num = 1;
	double seconds = vg ? 0.5 : 2.0;
	s = getenv("SFB_MEMO_SECONDS");
	if (s && *s)
		seconds = strtod(s, NULL);
	if (seconds < 0.05)
		seconds = 0.05;
	if (seconds > 60)
		seconds = 60;

	if (take_range()) {
		CHECK(0, "ground truth: no symbol size for take(); link with -rdynamic");
		CHECK_DONE();
	}

	double t0 = now_s();
	test_first_touches();
	test_row_of();
	phase_stale();
	double t1 = now_s();
	phase_corrupt();
	phase_exact();
	phase_no_object();
	phase_recall();
	double t2 = now_s();
	phase_seqlock(seconds);
	double t3 = now_s();
	printf("# times: row_of and stale hints %.3f s, corrupted hints and exact PCs %.3f s, seqlock %.3f s\n", t1 - t0,
	       t2 - t1, t3 - t2);
	CHECK_DONE();
}
