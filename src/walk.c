/* The walker: from one frame's registers to the caller's, until a stop.
 *
 * Each step finds the object holding the PC (objcache), asks it for the row
 * (decoder), and applies the row: CFA, then RA and FP relative to it.
 * Every step is validated, and every stack read goes through memread.h, so
 * a corrupted stack ends the walk with a reason, never a fault or a loop:
 * the stack pointer strictly increases except across signal frames, whose
 * number is bounded. */
#include "walk.h"

#include <stdatomic.h>
#include <string.h>

#include "arch.h"
#include "objcache.h"
#include "rowmemo.h"
#include "sframe_format.h"

/* On a stack of FP-based rows each frame's CFA waits for the saved FP
 * that the frame below it loaded, so the stack's cache misses come one
 * after another, as in a frame-pointer walk; a sample's fast path
 * prefetches the stack this far above each such CFA (about two frames
 * ahead).  Measured on the benchmark's distinct chain (frame pointers),
 * means of 20-30 alternated runs: 394 -> 362 ns a sample at 125 us, 991
 * -> 910 ns at 1 ms; 256 and 512 did no better.  SP-based rows need none:
 * their CFAs do not wait for the stack, whose lines then arrive in
 * parallel. */
#define STACK_PREFETCH_AHEAD 128

/* A CFA further than this above the stack pointer is not a frame. */
#define MAX_FRAME_SIZE (256u << 20)
#define MAX_SIGNAL_FRAMES 64

/* Objects a walk has confirmed (through _dl_find_object) and copied:
 * stacks bounce between a program and a few libraries, and each object is
 * confirmed once per walk, never longer, so that no copy outlives a
 * dlclose() that returned before the walk began.  The main program, which
 * cannot be unloaded, is not copied: objs[] then points at its permanent
 * description (objcache.h). */
#define WALK_OBJECTS 4

struct walker {
	struct sfb_mem mem;
	const struct sfb_object *objs[WALK_OBJECTS];
	struct sfb_object copies[WALK_OBJECTS];
	unsigned nobj, last, next_obj;
	unsigned flags;
	/* The last PC no object holds, and why: the fast path and the
	 * general path may both ask about it, and it costs a lookup. */
	uintptr_t miss_pc;
	int miss_stop;
	struct sfb_saved_regs saved; /* the last signal frame's registers */
	/* What the next sample fetches ahead (rowmemo.h, the recall): the
	 * pairs of the memo entries that hold, or would hold, the rows of
	 * this walk's frames after the first, in order, a repeated frame
	 * once; trail_key is the key trail_note() noted last. */
	unsigned ntrail;
	uintptr_t trail_key;
	uint16_t trail[SFB_MEMO_RECALL];
};

/* Note a frame's memo key for the recall: the general path's frames, and
 * the first of each fast run (the fast path notes the rest from the
 * entries it uses).  Walks that are no samples note too, unused: only the
 * general path, which costs far more anyway. */
static inline void trail_note(struct walker *w, uintptr_t key)
{
	if (key == w->trail_key || w->ntrail == SFB_MEMO_RECALL)
		return;
	w->trail_key = key;
	w->trail[w->ntrail++] = (uint16_t)sfb_memo_pair_number(key);
}

static inline bool holds(const struct sfb_object *o, uintptr_t pc)
{
	return pc - o->map_start < o->map_end - o->map_start;
}

static inline __attribute__((always_inline)) int
find_object(struct walker *w, uintptr_t pc, const struct sfb_object **out)
{
	if (w->nobj && holds(w->objs[w->last], pc)) {
		*out = w->objs[w->last];
		return 0;
	}
	for (unsigned i = 0; i < w->nobj; i++) {
		if (holds(w->objs[i], pc)) {
			w->last = i;
			*out = w->objs[i];
			return 0;
		}
	}
	if (w->miss_stop && pc == w->miss_pc)
		return w->miss_stop;
	const struct sfb_object *o = sfb_objcache_permanent(pc);
	unsigned i = w->nobj < WALK_OBJECTS ? w->nobj : w->next_obj % WALK_OBJECTS;
	if (!o) {
		int stop = sfb_objcache_find(pc, &w->copies[i]);
		if (stop) {
			w->miss_pc = pc;
			w->miss_stop = stop;
			return stop;
		}
		o = &w->copies[i];
	}
	if (w->nobj < WALK_OBJECTS)
		w->nobj++;
	else
		w->next_obj++;
	w->objs[i] = o;
	w->last = i;
	*out = o;
	return 0;
}

/* Value of a rule's base. */
static inline __attribute__((always_inline)) bool loc_base(const struct sfb_regs *r, const struct sfb_loc *l,
		     uintptr_t cfa, uintptr_t *out)
{
	if (l->reg == SFB_REG_CFA) {
		*out = cfa;
		return true;
	}
	if (l->reg == SFB_DWARF_SP) {
		*out = r->sp;
		return true;
	}
	if (l->reg == SFB_DWARF_FP) {
		*out = r->fp;
		return true;
	}
	return sfb_arch_reg(r, l->reg, out);
}

/* Apply one location rule.  stop is set when it cannot be evaluated. */
static inline __attribute__((always_inline)) bool apply_loc(struct walker *w, const struct sfb_regs *r,
		      const struct sfb_loc *l, uintptr_t cfa, uintptr_t *out, int *stop,
		      bool fp_rule)
{
	uintptr_t base;
	if (!loc_base(r, l, cfa, &base)) {
		*stop = SFRAME_BT_STOP_UNSAFE_RULE;
		return false;
	}
	uintptr_t addr = base + (uintptr_t)(intptr_t)l->off;
	if (!l->deref) {
		*out = addr;
		return true;
	}
	/* Below the stack pointer is dead memory: a return address (or CFA)
	 * is never saved there; a wrong row (e.g. CFA = sp+0 on x86-64)
	 * would read a stale one.  A saved FP there has already been
	 * restored (epilogue after leave/pop): the caller keeps FP. */
	if (addr < r->sp || (fp_rule && addr >= cfa)) {
		if (fp_rule) {
			*out = r->fp;
			return true;
		}
		*stop = SFRAME_BT_STOP_BAD_CFA;
		return false;
	}
	if (!sfb_mem_read(&w->mem, addr, out)) {
		*stop = SFRAME_BT_STOP_UNREADABLE;
		return false;
	}
	return true;
}

/* A new CFA must lie above the stack pointer (at it, only in the topmost
 * frame, e.g. an AArch64 leaf at entry), aligned, and not absurdly far. */
static bool cfa_ok(uintptr_t cfa, uintptr_t sp, bool topmost)
{
	if (cfa % SFB_CFA_ALIGN)
		return false;
	if (cfa < sp || (cfa == sp && !topmost))
		return false;
	return cfa - sp <= MAX_FRAME_SIZE;
}

/* What one step yields: the caller's PC, SP and FP, and this frame's CFA.
 * Other registers become unknown. */
struct step {
	uintptr_t pc, sp, fp, cfa;
};

/* One step with an SFrame row.  Returns 0 and the caller's registers in
 * next, or a stop reason. */
static int step_row(struct walker *w, const struct sfb_regs *r, bool topmost,
		    const struct sfb_row *row, struct step *next)
{
	int stop = 0;
	uintptr_t cfa, ra, fp;
	if (row->flags & SFB_ROW_OUTERMOST)
		return SFRAME_BT_STOP_OUTERMOST;
	/* A rule based on a register other than SP/FP is sound only where all
	 * registers are known: the topmost frame. */
	if (row->cfa.kind != SFB_LOC_EXPR)
		return SFRAME_BT_STOP_NO_UNWIND_INFO;
	if (!apply_loc(w, r, &row->cfa, 0, &cfa, &stop, false))
		return stop;
	if (!cfa_ok(cfa, r->sp, topmost))
		return SFRAME_BT_STOP_BAD_CFA;

	switch (row->ra.kind) {
	case SFB_LOC_EXPR:
		if (!apply_loc(w, r, &row->ra, cfa, &ra, &stop, false))
			return stop;
		break;
	case SFB_LOC_SAME: /* still in the link register: only where it is live */
		if (!r->have_ra)
			return SFRAME_BT_STOP_UNSAFE_RULE;
		ra = r->ra;
		break;
	default:
		return SFRAME_BT_STOP_OUTERMOST;
	}
	if (row->flags & SFB_ROW_MANGLED_RA)
		ra = sfb_arch_strip_pac(ra);

	switch (row->fp.kind) {
	case SFB_LOC_EXPR:
		if (!apply_loc(w, r, &row->fp, cfa, &fp, &stop, true))
			return stop;
		break;
	default:
		fp = r->fp;
		break;
	}
	*next = (struct step){ ra, SFB_SP_FROM_CFA(cfa), fp, cfa };
	return 0;
}

/* The frame-pointer rule, validated like any other step. */
static int step_fp(struct walker *w, const struct sfb_regs *r, bool topmost,
		   struct step *next)
{
	uintptr_t cfa = r->fp + SFB_FP_CFA_OFFSET, ra, fp;
	if (r->fp < r->sp || !cfa_ok(cfa, r->sp, topmost))
		return SFRAME_BT_STOP_BAD_CFA;
	if (!sfb_mem_read(&w->mem, cfa + SFB_FP_RA_OFFSET, &ra) ||
	    !sfb_mem_read(&w->mem, cfa + SFB_FP_FP_OFFSET, &fp))
		return SFRAME_BT_STOP_UNREADABLE;
	*next = (struct step){ sfb_arch_strip_pac(ra), SFB_SP_FROM_CFA(cfa), fp, cfa };
	return 0;
}

/* May the frame-pointer rule be used for a PC the object has no row for? */
static bool fp_allowed(const struct walker *w, const struct sfb_object *o)
{
	if (o->frame_pointer)
		return true; /* a V1/V2 section promises frame pointers */
	return (w->flags & SFRAME_BT_FP_FALLBACK_ANY) != 0;
}

/* Frames go to frames[], or only their PCs to pcs[] when frames is NULL. */
static void put(struct walker *w, struct sframe_bt_frame *frames, void **pcs, int i,
		struct sframe_bt_frame f)
{
	if (frames)
		frames[i] = f;
	else
		pcs[i] = (void *)f.pc;
	if (i > 0)
		trail_note(w, f.exact ? SFB_MEMO_EXACT(f.pc) : f.pc);
}

/* Find this frame's row and decide what kind of frame it is.  Return
 * addresses are looked up at pc - 1 and must follow a call instruction;
 * the kernel's signal trampoline, which a handler returns to without a
 * call, is recognised by its code.  A verified return address with a row
 * of the common shape is memoised for fast_step(). */
static int classify(const struct sfb_object *o, uintptr_t pc, bool exact,
		    struct sfb_row *row, bool *have_row, bool *is_signal)
{
	bool has_rows = sfb_object_has_rows(o);
	uintptr_t key = exact ? pc : pc - 1;
	struct sfb_memo_row simple;
	*is_signal = false;
	/* A memoised exact row is what the lines below gave last time: a row
	 * of the common shape, which is no trampoline's. */
	if (exact && has_rows && sfb_memo_get_exact(SFB_MEMO_EXACT(pc), o->epoch, &simple)) {
		sfb_memo_row_expand(&simple, SFB_DWARF_SP, SFB_DWARF_FP, row);
		*have_row = true;
		return 0;
	}
	*have_row = has_rows && sfb_lookup(&o->sec, key, row) == SFB_OK;
	if (!*have_row || (row->flags & SFB_ROW_SIGNAL))
		*is_signal = sfb_arch_is_sigreturn(pc, o->exec_lo, o->exec_hi);
	if (exact && *have_row && !*is_signal &&
	    sfb_memo_row_of(row, SFB_DWARF_SP, SFB_DWARF_FP, &simple))
		sfb_memo_put_exact(SFB_MEMO_EXACT(pc), o->epoch, &simple);
	if (exact || *is_signal)
		return 0;
	if (!sfb_arch_is_return_address(pc, o->exec_lo, o->exec_hi)) {
		/* A trampoline the toolchain described as a plain function
		 * (binutils before 2.46 drop .cfi_signal_frame). */
		*is_signal = sfb_arch_is_sigreturn(pc, o->exec_lo, o->exec_hi);
		return *is_signal ? 0 : SFRAME_BT_STOP_BAD_RA;
	}
	if (*have_row && sfb_memo_row_of(row, SFB_DWARF_SP, SFB_DWARF_FP, &simple))
		sfb_memo_put(pc, o->epoch, &simple);
	return 0;
}

/* The memo entry for the return address pc, and its row: prev's hint
 * (see rowmemo.h) if it holds pc in a confirmed object, else by hash;
 * prev's hint is then set to what was found.  Out of line: the fast loop
 * calls it only when the hint fails, which also happens each time the
 * walk crosses into another object (*epoch is then updated). */
static __attribute__((noinline)) const struct sfb_memo_entry *
memo_find(struct walker *w, const struct sfb_memo_entry *prev, uintptr_t pc,
	  uint32_t *epoch, struct sfb_memo_row *row)
{
	const struct sfb_object *o;
	if (pc == 0 || find_object(w, pc - 1, &o))
		return NULL; /* a return address of 0, or no object */
	/* The caller has tried prev's hint with the old epoch: worth a second
	 * try only in another object. */
	bool new_object = o->epoch != *epoch;
	*epoch = o->epoch;
	struct sfb_memo_entry *hint = prev ? sfb_memo_hint(prev) : NULL;
	if (hint && new_object && sfb_memo_try(hint, pc, *epoch, row))
		return hint;
	struct sfb_memo_entry *e = sfb_memo_get(pc, *epoch, row);
	if (e && prev)
		sfb_memo_set_hint((struct sfb_memo_entry *)prev, e);
	return e;
}

/* The memo entry for the exact PC a walk starts at (a ucontext, or the
 * registers a signal frame saved), and its row: the row classify()
 * memoised last time the walk stopped there.  Such a row has the common
 * shape, so it is no trampoline's and needs no topmost-frame correction
 * (sfb_arch_fix_topmost_row() changes only PC-mask rows, never memoised):
 * the fast path applies it like a return address's. */
static __attribute__((noinline)) const struct sfb_memo_entry *
memo_find_exact(struct walker *w, uintptr_t pc, uint32_t *epoch, struct sfb_memo_row *row)
{
	const struct sfb_object *o;
	if (find_object(w, pc, &o) || !sfb_object_has_rows(o))
		return NULL;
	*epoch = o->epoch;
	return sfb_memo_get_exact(SFB_MEMO_EXACT(pc), o->epoch, row);
}

#ifdef SFB_RA_SLOT
#define RA_SLOT(row) SFB_RA_SLOT
#else
#define RA_SLOT(row) ((row).ra_slot)
#endif

/* The fast path: consecutive return addresses whose rows are memoised
 * (rowmemo.h).  For each, the same computation as step_row() for a row of
 * that shape, with the walk's state in registers.  The checks are those of
 * step_row() and cfa_ok() in cheaper form: every slot read lies at or
 * above SP (so the CFA is above SP and the walk moves up the stack) and at
 * or below the top of the thread's stack window, and the CFA is aligned.
 * For an SP-based row, sfb_memo_row_of() has proved all but the top, given
 * an aligned SP inside the window, which holds on entry and then by
 * induction.  Any doubt (an unknown address, an implausible CFA) ends the
 * run, leaving that frame to the general path, which redoes it from
 * scratch and gives the stop reason.  When exact, the first PC is an exact
 * PC, whose row is memoised under its own key (memo_find_exact()).
 * Returns the new frame count; *outermost when a return address of 0
 * ended the walk.  Inlined three times, so that with_frames and sample
 * (caches are cold: keep the recall's trail, prefetch the stack) are
 * constants in each copy. */
static inline __attribute__((always_inline)) int
fast_frames_as(struct walker *w, struct sfb_regs *r, struct sframe_bt_frame *frames,
	       void **pcs, int n, int size, bool exact, uint8_t *source, bool *outermost,
	       const bool with_frames, const bool sample)
{
	uintptr_t pc = r->pc, sp = r->sp, fp = r->fp;
	const uintptr_t win_hi = w->mem.win[0].hi;
	if (sp < w->mem.win[0].lo || sp >= win_hi || sp % SFB_CFA_ALIGN)
		return n;
	/* row and epoch have copies whose addresses memo_find() takes, so
	 * that they themselves can stay in registers. */
	struct sfb_memo_row found;
	uint32_t found_epoch = 0;
	const struct sfb_memo_entry *e = exact ? memo_find_exact(w, pc, &found_epoch, &found)
					       : memo_find(w, NULL, pc, &found_epoch, &found);
	if (!e)
		return n;
	struct sfb_memo_row row = found;
	uint32_t epoch = found_epoch;
	uint8_t src = *source;
	/* The recall's trail (struct walker): the entry the loop moves to is
	 * noted by its pair, unless it is the same again; the first one, if
	 * the walk did not start here, by trail_note().  In the loop, not
	 * from the output afterwards: the entry is at hand, where the output
	 * would have to be hashed again (about 300 instructions a sample for
	 * 31 return addresses; noting each frame as it is written, with the
	 * last noted entry in a register, cost 130 more in spills).  A frame
	 * the loop moved to but then left to the general path (a check
	 * below failed where the general step's would not) is noted twice:
	 * one useless prefetch. */
	if (sample && n > 0)
		trail_note(w, exact ? SFB_MEMO_EXACT(pc) : pc);
	unsigned nt = w->ntrail;
	/* Only the output in use: arithmetic on the NULL one is undefined. */
	struct sframe_bt_frame *frame_out = with_frames ? frames + n : NULL;
	const struct sframe_bt_frame *frame_end = with_frames ? frames + size : NULL;
	void **pc_out = with_frames ? NULL : pcs + n, **pc_end = with_frames ? NULL : pcs + size;
	for (;;) {
		uintptr_t cfa;
		if (!(row.cfa_word & 1)) {
			cfa = sp + (uintptr_t)(intptr_t)row.cfa_word;
			if (cfa > win_hi)
				break;
		} else {
			cfa = fp + (uintptr_t)(intptr_t)(row.cfa_word - 1);
			/* Signed: a CFA computed from a garbage FP that is
			 * below 1 KiB would wrap the lowest slot's address
			 * round to the top. */
			if (cfa % SFB_CFA_ALIGN ||
			    (intptr_t)(cfa + 8 * SFB_MEMO_FP_LOWEST_SLOT - sp) < 0 ||
			    cfa > win_hi)
				break;
			if (sample)
				__builtin_prefetch((const void *)(cfa + STACK_PREFETCH_AHEAD));
		}
		/* Expected: laid out inline, FP stays in a register; out of
		 * line it cost two taken branches and a spill a frame. */
		if (__builtin_expect(row.fp_slot != 0, 1))
			fp = sfb_mem_load_proved(cfa + 8 * (uintptr_t)(intptr_t)row.fp_slot);
		if (with_frames) {
			*frame_out++ = (struct sframe_bt_frame){ .pc = pc, .cfa = cfa, .source = src,
								 .exact = exact };
			src = SFRAME_BT_FROM_SFRAME;
			exact = false;
		} else {
			*pc_out++ = (void *)pc;
		}
		pc = sfb_mem_load_proved(cfa + 8 * (uintptr_t)(intptr_t)RA_SLOT(row));
		sp = SFB_SP_FROM_CFA(cfa);
		if (with_frames ? frame_out == frame_end : pc_out == pc_end)
			break;
		/* A verified entry's hint is never NULL (memo_write() sets
		 * it to the entry itself before publishing). */
		const struct sfb_memo_entry *next = sfb_memo_hint(e);
		if (!sfb_memo_try(next, pc, epoch, &row)) {
			found_epoch = epoch;
			next = memo_find(w, e, pc, &found_epoch, &found);
			if (!next)
				break;
			row = found;
			epoch = found_epoch;
		}
		if (sample && next != e && nt < SFB_MEMO_RECALL)
			w->trail[nt++] = sfb_memo_pair_index(next);
		e = next;
	}
	int m = with_frames ? (int)(frame_out - frames) : (int)(pc_out - pcs);
	w->ntrail = nt;
	if (m > n) {
		*outermost = pc == 0;
		r->pc = pc;
		r->sp = sp;
		r->fp = fp;
		r->all = NULL;
		r->have_ra = false;
		*source = with_frames ? src : SFRAME_BT_FROM_SFRAME;
	}
	return m;
}

/* The copies, out of line: a sample's code is then one of these, a few
 * lines of sfb_walk() and the lookups, not spread among the general
 * step's.  Only samples keep a trail (sfb_walk() remembers it for the
 * next) and prefetch the stack; sframe_backtrace(), called in loops on a
 * stack its caller has just used, goes without (3 instructions a frame on
 * a recursion, 2 more on FP-based rows).  Frame records always do both:
 * the richer call, rarely the hot one. */
SFB_NO_ASAN static __attribute__((noinline)) int
fast_pcs(struct walker *w, struct sfb_regs *r, void **pcs, int n, int size, bool exact,
	 uint8_t *source, bool *outermost)
{
	return fast_frames_as(w, r, NULL, pcs, n, size, exact, source, outermost, false, false);
}

SFB_NO_ASAN static __attribute__((noinline)) int
fast_pcs_sample(struct walker *w, struct sfb_regs *r, void **pcs, int n, int size,
		bool exact, uint8_t *source, bool *outermost)
{
	return fast_frames_as(w, r, NULL, pcs, n, size, exact, source, outermost, false, true);
}

SFB_NO_ASAN static __attribute__((noinline)) int
fast_records(struct walker *w, struct sfb_regs *r, struct sframe_bt_frame *frames, int n,
	     int size, bool exact, uint8_t *source, bool *outermost)
{
	return fast_frames_as(w, r, frames, NULL, n, size, exact, source, outermost, true, true);
}

/* Where a walk is between steps. */
struct position {
	int n;          /* frames written */
	bool exact;     /* regs->pc is an exact PC, not a return address */
	bool topmost;   /* registers beyond SP/FP are known */
	uint8_t source; /* how this frame was reached (SFRAME_BT_FROM_...) */
	int signals;    /* signal frames crossed */
};

/* One step by the general path: the frame at regs->pc is looked up from
 * scratch, written out, and its caller's registers replace regs.  0 to go
 * on, else the stop reason.  Out of line: a sample whose frames are all
 * memoised never comes here. */
static __attribute__((noinline)) int
general_step(struct walker *w, struct sfb_regs *regs, struct position *at,
	     struct sframe_bt_frame *frames, void **pcs, struct sframe_bt_status *st)
{
	/* Return addresses point after the call; look up the call. */
	uintptr_t lookup = at->exact ? regs->pc : regs->pc - 1;
	const struct sfb_object *o;
	int stop = find_object(w, lookup, &o);
	if (stop) {
		/* An exact PC is a frame even outside any object (JIT code); an
		 * unverifiable return address is not. */
		if (at->exact)
			put(w, frames, pcs, at->n++, (struct sframe_bt_frame){
				.pc = regs->pc, .source = at->source, .exact = 1 });
		return stop;
	}
	struct sfb_row row;
	bool have_row, is_signal;
	stop = classify(o, regs->pc, at->exact, &row, &have_row, &is_signal);
	if (stop)
		return stop;
	/* A V3 FDE marked 'S' is applied like any other row but, as in DWARF,
	 * the PC it unwinds to was interrupted, not called. */
	bool next_exact = have_row && (row.flags & SFB_ROW_SIGNAL);
	put(w, frames, pcs, at->n, (struct sframe_bt_frame){ .pc = regs->pc, .source = at->source,
							   .exact = at->exact });
	at->n++;
	if (is_signal) {
		if (++at->signals > MAX_SIGNAL_FRAMES ||
		    !sfb_arch_sigframe_regs(&w->mem, regs->sp, &w->saved, regs))
			return SFRAME_BT_STOP_UNREADABLE;
		at->exact = true;
		at->topmost = true;
		at->source = SFRAME_BT_FROM_SIGNAL_FRAME;
		st->frames_signal++;
		if (frames)
			frames[at->n - 1].cfa = regs->sp;
		return regs->pc == 0 ? SFRAME_BT_STOP_BAD_RA : 0;
	}
	struct step next = { 0, 0, 0, 0 };
	if (have_row) {
		if (at->topmost)
			sfb_arch_fix_topmost_row(regs->pc, o->exec_lo, o->exec_hi, &row);
		stop = step_row(w, regs, at->topmost, &row, &next);
		at->source = SFRAME_BT_FROM_SFRAME;
	} else if (fp_allowed(w, o)) {
		stop = step_fp(w, regs, at->topmost, &next);
		at->source = SFRAME_BT_FROM_FRAME_POINTER;
	} else {
		stop = o->source != SFB_SRC_NONE && o->status != SFB_OK
			       ? SFRAME_BT_STOP_BAD_SECTION
			       : SFRAME_BT_STOP_NO_UNWIND_INFO;
	}
	if (stop)
		return stop;
	if (frames)
		frames[at->n - 1].cfa = next.cfa;
	if (at->source == SFRAME_BT_FROM_SFRAME)
		st->frames_sframe++;
	else
		st->frames_fp++;
	if (next.pc == 0)
		return SFRAME_BT_STOP_OUTERMOST;
	regs->pc = next.pc;
	regs->sp = next.sp;
	regs->fp = next.fp;
	regs->all = NULL;
	regs->have_ra = false;
	at->exact = next_exact;
	at->topmost = false;
	return 0;
}

/* What the next sample of this thread fetches ahead (sfb_walk()): the
 * first object this one confirmed, in walk order (objs[] fills in order
 * until it wraps), usually the sampled code's (objcache.h); and the trail
 * of its frames' memo pairs (rowmemo.h), unless it has none. */
static void remember_sample(const struct walker *w)
{
	const struct sfb_object *first = NULL;
	for (unsigned i = 0; i < w->nobj && !first; i++)
		if (w->objs[i] == &w->copies[i])
			first = w->copies[i].home;
	sfb_objcache_recalled = first;
	if (w->ntrail)
		sfb_memo_recall_keep(w->trail, w->ntrail);
}

int sfb_walk(struct sfb_regs *regs, bool exact, struct sframe_bt_frame *frames,
	     void **pcs, int size, unsigned flags, struct sframe_bt_status *st)
{
	struct walker w;
	w.nobj = w.last = w.next_obj = 0;
	w.flags = flags;
	w.miss_pc = 0;
	w.miss_stop = 0;
	w.ntrail = 0;
	w.trail_key = 0;
	sfb_mem_init(&w.mem, (uintptr_t)&w);
	memset(st, 0, sizeof *st);
	if (regs->pc == 0) {
		st->stop = SFRAME_BT_STOP_BAD_CONTEXT;
		return 0;
	}
	/* A walk from an exact PC is a sample, whose rows are likely cold:
	 * fetch its first row's entry and those the thread's last sample
	 * used (rowmemo.h), before the walk waits for them one by one. */
	if (exact) {
		__builtin_prefetch(sfb_memo_pair(SFB_MEMO_EXACT(regs->pc)) + 1);
		sfb_memo_fetch_recalled();
		sfb_objcache_fetch_recalled();
	}
	struct position at = { 0, exact, true, SFRAME_BT_FROM_CONTEXT, 0 };
	for (;;) {
		if (at.n == size) {
			/* Another frame exists (the step gave a non-zero PC); it
			 * is not looked at. */
			st->stop = SFRAME_BT_STOP_BUFFER_FULL;
			break;
		}
		bool outermost = false;
		int m = !w.mem.nwin ? at.n
			: frames ? fast_records(&w, regs, frames, at.n, size, at.exact, &at.source,
						&outermost)
			: exact	 ? fast_pcs_sample(&w, regs, pcs, at.n, size, at.exact, &at.source,
						   &outermost)
				 : fast_pcs(&w, regs, pcs, at.n, size, at.exact, &at.source,
					    &outermost);
		if (m > at.n) {
			st->frames_sframe += m - at.n;
			at.n = m;
			at.exact = false;
			at.topmost = false;
			if (outermost) {
				st->stop = SFRAME_BT_STOP_OUTERMOST;
				break;
			}
			continue;
		}
		int stop = general_step(&w, regs, &at, frames, pcs, st);
		if (stop) {
			st->stop = stop;
			break;
		}
	}
	st->stop_pc = regs->pc;
	if (exact)
		remember_sample(&w);
	return at.n;
}
