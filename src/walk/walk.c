/* The walker: from one frame's registers to the caller's, until a stop.
 *
 * Each step finds the object holding the PC (objcache.h), asks it for the
 * row that covers the PC, from whichever source has one (SFrame, else
 * .eh_frame CFI; sfb_object_row()), or falls back to the frame-pointer
 * row where that is allowed, and applies the row: the CFA, then the
 * caller's RA, FP and saved registers relative to it.  Two paths do this
 * (docs/DESIGN.md, "Walker"):
 * - the fast path applies memoised rows (rowmemo.h) to consecutive return
 *   addresses, with the walk's state in registers;
 * - the general path, general_step(), does everything else, one frame at
 *   a time: finds its row (find_frame_row()), applies it (apply_row()) or
 *   crosses a signal frame, and gives the stop reason.
 * Invariants: every stack read goes through memread.h, and every step is
 * validated, so a corrupted stack ends the walk with a reason, never a
 * fault or a loop: the stack pointer strictly increases except across
 * signal frames, whose number is bounded. */
#include "walk/walk.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>

#include "arch/arch.h"
#include "rows/cfi.h"
#include "rows/cfi_cache.h"
#include "objects/objcache.h"
#include "walk/rowmemo.h"
#include "rows/sframe_format.h"

/* On a stack of FP-based rows each frame's CFA waits for the saved FP
 * that the frame below loaded, so a sample's fast path prefetches the
 * stack this far above each such CFA (about two frames ahead;
 * docs/SPEED.md).  SP-based rows need none: their CFAs do not wait for the
 * stack. */
#define STACK_PREFETCH_AHEAD 128

/* A CFA further than this above the stack pointer is not a frame. */
#define MAX_FRAME_SIZE (256u << 20)
#define MAX_SIGNAL_FRAMES 64

/* Objects a walk has confirmed and copied (objcache.h): stacks bounce
 * between a program and a few libraries, and each object is confirmed
 * once per walk, never longer, so that no copy outlives a dlclose() that
 * returned before the walk began.  Kept objects are not copied: objs[]
 * then points at their kept description. */
#define WALK_OBJECTS 4

/* Callee-saved registers are tracked by DWARF number below this. */
#define TRACKED_REGS 32
_Static_assert(SFB_CALLEE_SAVED < (1ull << TRACKED_REGS), "tracked registers fit");

struct walker {
	struct sfb_mem mem;
	const struct sfb_object *objs[WALK_OBJECTS];
	struct sfb_object copies[WALK_OBJECTS];
	/* objs[0..nobj) in use; objs[last_hit] held the last PC asked for;
	 * once all are in use, a new object replaces objs[nreplaced %
	 * WALK_OBJECTS], oldest first. */
	unsigned nobj, last_hit, nreplaced;
	unsigned flags;
	/* Added to an object's epoch for the memo: a walk that refuses
	 * .eh_frame (SFRAME_BT_NO_EH_FRAME) keeps its rows apart, so that the
	 * fast path never applies a CFI row for it.  kept_epoch: the memo
	 * epoch of objects never unloaded, for this walk (memo_epoch());
	 * kept_head: the same as an entry's head holds it. */
	uint32_t epoch_add, kept_epoch;
	uint64_t kept_head;
	/* The memo's written pages (rowmemo.h) as the fast run under way read
	 * them once: a page written since counts as unwritten, which costs a
	 * lookup again, never a wrong row. */
	uint32_t pages;
	/* The last PC no object holds, and why: the fast path and the
	 * general path may both ask about it, and it costs a lookup. */
	uintptr_t miss_pc;
	int miss_stop;
	/* The object confirmed last through the cache in this walk (none:
	 * an empty range), so that the memo's lookups use its epoch without
	 * another confirmation (confirmed_epoch()). */
	struct sfb_confirmed conf;
	struct sfb_saved_regs saved; /* the last signal frame's registers */
	/* Callee-saved registers other than SP and FP whose caller's values
	 * CFI rows gave (bit n: reg_val[n]); none after an SFrame or memoised
	 * row, which do not say where they were saved. */
	uint64_t known_regs;
	uintptr_t reg_val[TRACKED_REGS];
	/* use_memo: memoised rows are used (the fast path, and the general
	 * path where the memo holds a frame's row); lost_regs: one of them
	 * left registers unknown that a CFI row would have said (sfb_walk()). */
	bool use_memo, lost_regs;
	/* The stop reason a fast run ended the walk with (the outermost
	 * frame's, memoised), or 0: then the general path goes on. */
	int fast_stop;
	/* What the next sample fetches ahead (rowmemo.h, the recall): the
	 * pairs of the memo entries that hold, or would hold, the rows of
	 * this walk's frames after the first, in order, a repeated frame
	 * once; trail_key is the key trail_note() noted last. */
	unsigned ntrail;
	uintptr_t trail_key;
	uint16_t trail[SFB_MEMO_RECALL];
	/* Where the walk writes: frames[] (frame records), or only the PCs
	 * to pcs[] when frames is NULL; size entries.  Its counts and stop
	 * reason go to *st. */
	struct sframe_bt_frame *frames;
	void **pcs;
	int size;
	struct sframe_bt_status *st;
};

/* Where a walk is between steps. */
struct position {
	int n;          /* frames written */
	bool sp_low;    /* regs->sp is only a lower bound of the real SP: after a
			   frame-pointer step where the frame record need not
			   sit at the top of the frame (!SFB_FP_CFA_EXACT) */
	bool exact;     /* regs->pc is an exact PC, not a return address */
	bool topmost;   /* the frame is the first of its context: the walk's
			   first, or the one a signal frame's registers give
			   (its CFA may equal SP; arch.h's topmost-frame rows) */
	uint8_t source; /* how this frame was reached (SFRAME_BT_FROM_...) */
	int signals;    /* signal frames crossed */
};

/* Note a frame's memo key for the recall: the general path's frames, and
 * the first of each fast run (the fast path notes the rest from the
 * entries it uses). */
static inline void trail_note(struct walker *w, uintptr_t key)
{
	if (key == w->trail_key || w->ntrail == SFB_MEMO_RECALL)
		return;
	w->trail_key = key;
	w->trail[w->ntrail++] = (uint16_t)sfb_memo_pair_of_key(key);
}

static inline bool object_contains(const struct sfb_object *o, uintptr_t pc)
{
	return pc - o->map_start < o->map_end - o->map_start;
}

/* The object holding pc, confirmed for this walk: one of the walk's
 * objects, the one the memo's lookups confirmed (w->conf: its slot's
 * description copied, if it is still the one confirmed), a kept one, or
 * one sfb_objcache_find() confirms and the walk copies.  0, or the stop
 * reason.  The kept tables come before the cache: a kept object is used
 * without a lookup, even where its rows are not memoised
 * (docs/DESIGN.md, "Object cache"). */
static inline __attribute__((always_inline)) int
walk_object(struct walker *w, uintptr_t pc, const struct sfb_object **out)
{
	if (w->nobj && object_contains(w->objs[w->last_hit], pc)) {
		*out = w->objs[w->last_hit];
		return 0;
	}
	for (unsigned i = 0; i < w->nobj; i++) {
		if (object_contains(w->objs[i], pc)) {
			w->last_hit = i;
			*out = w->objs[i];
			return 0;
		}
	}
	if (w->miss_stop && pc == w->miss_pc)
		return w->miss_stop;
	unsigned i = w->nobj < WALK_OBJECTS ? w->nobj : w->nreplaced % WALK_OBJECTS;
	const struct sfb_object *o = NULL;
	/* Copied only into a free copy: a failed attempt writes it, and the
	 * one at i may still be in use once all are.  A slot that no longer
	 * holds what was confirmed ends the confirmation for the walk. */
	if (pc - w->conf.lo < w->conf.hi - w->conf.lo) {
		if (i == w->nobj && sfb_objcache_copy_confirmed(&w->conf, &w->copies[i]))
			o = &w->copies[i];
		else
			w->conf.lo = w->conf.hi = 0;
	}
	const unsigned pins = sfb_objcache_pins();
	if (!o)
		o = sfb_objcache_kept(pc);
	if (!o) {
		int stop = sfb_objcache_find(pc, &w->copies[i]);
		if (stop) {
			w->miss_pc = pc;
			w->miss_stop = stop;
			return stop;
		}
		o = &w->copies[i];
		sfb_objcache_note_recent(o, pins, &w->conf);
	}
	if (w->nobj < WALK_OBJECTS)
		w->nobj++;
	else
		w->nreplaced++;
	w->objs[i] = o;
	w->last_hit = i;
	*out = o;
	return 0;
}

/* The memo epoch of the object holding pc, if it is the one this walk
 * confirmed last through the cache or, confirmed again now from its slot
 * (objcache.h), the one this thread did; else 0, which no epoch is.  For
 * the memo's lookups, which need no more of the object: a dlopen()ed
 * object's per-walk confirmation without the search of the kept tables,
 * the cache's probe and the copy of the description. */
static inline uint32_t confirmed_epoch(struct walker *w, uintptr_t pc)
{
	if (pc - w->conf.lo < w->conf.hi - w->conf.lo ||
	    sfb_objcache_confirm_recent(pc, &w->conf))
		return w->conf.epoch + w->epoch_add;
	return 0;
}

/* The epoch under which the memo keeps o's rows: its description's, or
 * for an object never unloaded (sfb_object_is_kept()) one epoch shared by all such
 * objects (rowmemo.h), so that the fast path crosses between them (the
 * program, libc, ld.so and the start-up objects) without a lookup. */
static inline uint32_t memo_epoch(const struct walker *w, const struct sfb_object *o)
{
	return sfb_object_is_kept(o) ? w->kept_epoch : o->epoch + w->epoch_add;
}

/* ---- Applying a row (the general path) ------------------------------------ */

/* The value of DWARF register n in this frame, if known. */
static bool reg_value(const struct walker *w, const struct sfb_regs *r, unsigned n,
		      uintptr_t *out)
{
	if (n == SFB_DWARF_SP) {
		*out = r->sp;
		return true;
	}
	if (n == SFB_DWARF_FP) {
		*out = r->fp;
		return true;
	}
	if (r->all)
		return sfb_arch_reg(r, n, out);
	if (n < TRACKED_REGS && (w->known_regs >> n & 1)) {
		*out = w->reg_val[n];
		return true;
	}
	return false;
}

/* A row's rules evaluated in a frame. */
struct frame_eval {
	struct walker *w;
	const struct sfb_regs *r; /* the frame's registers */
	const struct sfb_row *row;
	uintptr_t cfa;            /* the frame's CFA, once known (else 0) */
	uintptr_t live;           /* the lowest address holding anything: SP */
};

/* A DWARF expression's register and memory reads (sfb_cfi_eval()). */
static bool eval_reg(void *arg, unsigned n, uint64_t *out)
{
	const struct frame_eval *fe = arg;
	uintptr_t v;
	if (!reg_value(fe->w, fe->r, n, &v))
		return false;
	*out = v;
	return true;
}

static bool eval_mem(void *arg, uint64_t addr, uint64_t *out)
{
	const struct frame_eval *fe = arg;
	uintptr_t v;
	if (!sfb_mem_read(&fe->w->mem, (uintptr_t)addr, &v))
		return false;
	*out = v;
	return true;
}

/* What a rule says of a value, for the caller's frame. */
enum { VAL_OK, VAL_UNKNOWN, VAL_BELOW_SP, VAL_UNREADABLE };

/* Evaluate rule, one of fe->row's or made from one.  same_reg: the
 * register whose value SFB_LOC_SAME keeps. */
static int rule_value(const struct frame_eval *fe, const struct sfb_loc *rule, unsigned same_reg,
		      uintptr_t *out)
{
	struct walker *w = fe->w;
	const struct sfb_regs *r = fe->r;
	const struct sfb_row *row = fe->row;
	uintptr_t addr;
	switch (rule->kind) {
	case SFB_LOC_SAME:
		return reg_value(w, r, same_reg, out) ? VAL_OK : VAL_UNKNOWN;
	case SFB_LOC_REGISTER:
		return reg_value(w, r, rule->reg, out) ? VAL_OK : VAL_UNKNOWN;
	case SFB_LOC_EXPR:
		if (rule->reg == SFB_REG_CFA)
			addr = fe->cfa;
		else if (!reg_value(w, r, rule->reg, &addr))
			return VAL_UNKNOWN;
		addr += (uintptr_t)(intptr_t)rule->off;
		break;
	case SFB_LOC_DWARF: {
		const struct sfb_cfi_eval_ctx cx = { eval_reg, eval_mem, (void *)fe };
		uint64_t v;
		if (sfb_cfi_eval(row->expr, row->expr_len, (uint32_t)rule->off, rule->reg, &cx,
				 rule != &row->cfa, fe->cfa, &v) != SFB_CFI_OK)
			return VAL_UNKNOWN;
		addr = (uintptr_t)v;
		break;
	}
	default:
		return VAL_UNKNOWN;
	}
	if (!rule->deref) {
		*out = addr;
		return VAL_OK;
	}
	/* Below the stack pointer is dead memory: nothing is saved there. */
	if (addr < fe->live)
		return VAL_BELOW_SP;
	return sfb_mem_read(&w->mem, addr, out) ? VAL_OK : VAL_UNREADABLE;
}

/* The stop reason for a CFA or RA rule that could not be evaluated. */
static int stop_for_value(int val)
{
	return val == VAL_UNKNOWN    ? SFRAME_BT_STOP_UNSAFE_RULE /* a register known only elsewhere */
	       : val == VAL_BELOW_SP ? SFRAME_BT_STOP_BAD_CFA
				     : SFRAME_BT_STOP_UNREADABLE;
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

/* What one step yields: the caller's PC, SP and FP, and this frame's CFA. */
struct step {
	uintptr_t pc, sp, fp, cfa;
};

/* Apply row to the frame r, at a walk's position at: its CFA, the
 * caller's RA and FP, every stack read checked.  Returns 0 and the
 * caller's registers in next (and the callee-saved registers the row
 * recovers in w->known_regs, w->reg_val), or a stop reason. */
static inline __attribute__((always_inline)) int
apply_row(struct walker *w, const struct sfb_regs *r, const struct position *at,
	  const struct sfb_row *row, struct step *next)
{
	uintptr_t cfa, ra, fp;
	struct frame_eval fe = { w, r, row, 0, r->sp };
	/* A rule based on SP is unusable while SP is only a lower bound. */
	if (at->sp_low && row->cfa.kind == SFB_LOC_EXPR && row->cfa.reg == SFB_DWARF_SP)
		return SFRAME_BT_STOP_UNSAFE_RULE;
	if (row->flags & SFB_ROW_OUTERMOST)
		return SFRAME_BT_STOP_OUTERMOST;
	if (row->cfa.kind != SFB_LOC_EXPR && row->cfa.kind != SFB_LOC_DWARF)
		return SFRAME_BT_STOP_NO_UNWIND_INFO;
	int outcome = rule_value(&fe, &row->cfa, 0, &cfa);
	if (outcome != VAL_OK)
		return stop_for_value(outcome);
	if (!cfa_ok(cfa, r->sp, at->topmost))
		return SFRAME_BT_STOP_BAD_CFA;
	fe.cfa = cfa;

	if (row->ra.kind == SFB_LOC_UNDEFINED)
		return SFRAME_BT_STOP_OUTERMOST;
	if (row->ra.kind == SFB_LOC_SAME) {
		/* Still in the link register: only where it is live. */
		if (!r->have_ra)
			return SFRAME_BT_STOP_UNSAFE_RULE;
		ra = r->ra;
	} else {
		/* In the interrupted frame the ABI's red zone below SP is
		 * live: a signal leaves it alone, and code that has popped
		 * its return address (OCaml's caml_c_call) has its CFI say
		 * the return address is still there.  Not for SFrame rows:
		 * binutils 2.40 writes CFA = SP + 0 for the body of a
		 * function it cannot describe (a realigned stack), where the
		 * word below SP is a callee's stale return address. */
#if SFB_RED_ZONE
		if (at->topmost && (row->flags & SFB_ROW_CFI) && r->sp >= SFB_RED_ZONE)
			fe.live = r->sp - SFB_RED_ZONE;
#endif
		outcome = rule_value(&fe, &row->ra, 0, &ra);
		fe.live = r->sp;
		if (outcome != VAL_OK)
			return stop_for_value(outcome);
	}
	if (row->flags & SFB_ROW_MANGLED_RA)
		ra = sfb_arch_strip_pac(ra);

	/* A saved FP below SP, or at or above the CFA, has already been
	 * restored (an epilogue after its pop): the caller keeps FP. */
	uintptr_t fp_at;
	if (row->fp.kind == SFB_LOC_EXPR && row->fp.deref &&
	    rule_value(&fe, &(struct sfb_loc){ SFB_LOC_EXPR, 0, row->fp.reg, row->fp.off }, 0,
		       &fp_at) == VAL_OK &&
	    (fp_at < r->sp || fp_at >= cfa)) {
		fp = r->fp;
	} else {
		switch (rule_value(&fe, &row->fp, SFB_DWARF_FP, &fp)) {
		case VAL_OK:
			break;
		case VAL_UNREADABLE:
			return SFRAME_BT_STOP_UNREADABLE;
		default: /* the caller's FP is unknown: nothing can use it */
			fp = 0;
			break;
		}
	}

	/* The callee-saved registers: a CFI row says where each was saved or
	 * that it kept its value; other rows say nothing of them, and a
	 * memoised CFI row has forgotten what it said. */
	if ((row->flags & (SFB_ROW_CFI | SFB_ROW_MEMO)) == SFB_ROW_CFI) {
		uint64_t known = 0;
		uintptr_t value[TRACKED_REGS];
		for (uint64_t m = SFB_CALLEE_SAVED; m; m &= m - 1) {
			unsigned n = (unsigned)__builtin_ctzll(m);
			const struct sfb_loc *rule = sfb_row_reg_rule(row, n);
			const struct sfb_loc same = { SFB_LOC_SAME, 0, 0, 0 };
			outcome = rule_value(&fe, rule ? rule : &same, n, &value[n]);
			/* Saved below SP: already restored (an epilogue after its
			 * pop, where gcc's CFI keeps the save's rule), as for FP. */
			if (outcome == VAL_BELOW_SP)
				outcome = rule_value(&fe, &same, n, &value[n]);
			if (outcome == VAL_OK)
				known |= 1ull << n;
		}
		w->known_regs = known;
		for (uint64_t m = known; m; m &= m - 1)
			w->reg_val[__builtin_ctzll(m)] = value[__builtin_ctzll(m)];
	} else {
		w->known_regs = 0;
		w->lost_regs |= (row->flags & SFB_ROW_MEMO) != 0;
	}
	/* The caller's SP is the CFA's (arch.h), unless the row gives SP a
	 * rule of its own, as libgcc's unwinder reads it: glibc's __longjmp
	 * describes the jump as a return to setjmp()'s caller, whose SP is
	 * in a register (%r8 on x86-64), its CFA at the jmp_buf.  Such a row
	 * is never memoised (sfb_memo_row_of()).  That SP must not fall (it
	 * is the frame's own at __longjmp's last instructions, once moved). */
	uintptr_t sp = SFB_SP_FROM_CFA(cfa);
	const struct sfb_loc *sp_rule = sfb_row_reg_rule(row, SFB_DWARF_SP);
	if (sp_rule) {
		if ((outcome = rule_value(&fe, sp_rule, SFB_DWARF_SP, &sp)) != VAL_OK)
			return stop_for_value(outcome);
		if (!cfa_ok(sp, r->sp, true))
			return SFRAME_BT_STOP_BAD_CFA;
	}
	*next = (struct step){ ra, sp, fp, cfa };
	return 0;
}

/* ---- Finding a frame's row (the general path) ------------------------------- */

/* The frame-pointer rule, as a row (arch.h): where the object has no row
 * for a PC and fp_allowed() says the rule may stand in.  The RA in a
 * frame record may be signed (AArch64 pac-ret): stripping is a no-op
 * where there is no pointer authentication. */
#if SFB_FP_RULE
static const struct sfb_row fp_row = {
	.cfa = { SFB_LOC_EXPR, 0, SFB_DWARF_FP, SFB_FP_CFA_OFFSET },
	.ra = { SFB_LOC_EXPR, 1, SFB_REG_CFA, SFB_FP_RA_OFFSET },
	.fp = { SFB_LOC_EXPR, 1, SFB_REG_CFA, SFB_FP_FP_OFFSET },
	.flags = SFB_ROW_MANGLED_RA,
};
#endif

/* May the frame-pointer rule be used for a PC the object has no row for? */
static bool fp_allowed(const struct walker *w, const struct sfb_object *o)
{
	if (!SFB_FP_RULE)
		return false;
	if (o->frame_pointer)
		return true; /* a V1/V2 section promises frame pointers */
	return (w->flags & SFRAME_BT_FP_FALLBACK_ANY) != 0;
}

#if SFB_FP_RULE
/* Does regs->pc lie in the stack window that holds regs->sp (the stack
 * being walked: never code)? */
static bool on_the_stack(const struct walker *w, const struct sfb_regs *regs)
{
	const struct sfb_window *s = sfb_mem_window_of(&w->mem, regs->sp, 1);
	return s && regs->pc - s->lo < s->hi - s->lo;
}
#endif

/* Is the code at pc the kernel's signal-return trampoline (arch.h)?
 * [lo, hi): where code may be read directly (the object's executable
 * segment); with lo == hi, the code is read through the walk's checked
 * accessor instead (a trampoline on a page no object holds). */
static bool is_sigreturn(struct walker *w, uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	uint8_t code[SFB_SIGRETURN_LEN];
	if (pc % SFB_INSN_ALIGN)
		return false;
	if (lo == hi)
		return sfb_mem_copy(&w->mem, pc, code, sizeof code) &&
		       !memcmp(code, sfb_arch_sigreturn_code, sizeof code);
	return pc >= lo && pc < hi && hi - pc >= sizeof code &&
	       !memcmp((const void *)pc, sfb_arch_sigreturn_code, sizeof code);
}

/* A frame's row, as find_frame_row() found it. */
struct frame_row {
	/* The row to apply: &row, or the frame-pointer rule (unused for the
	 * kernel's signal trampoline). */
	const struct sfb_row *rule;
	uint8_t source;     /* where rule came from (SFRAME_BT_FROM_...): how
			       the caller is reached */
	bool sigreturn;     /* the kernel's signal trampoline, which a handler
			       returns to without a call: the caller's registers
			       are in the signal frame above it */
	bool caller_exact;  /* a row marked as a signal frame ('S'): as in
			       DWARF, the PC it unwinds to was interrupted, not
			       called */
	bool is_frame;      /* with a stop reason: the PC is a frame all the
			       same, written out before the walk stops */
	struct sfb_row row; /* from the object's sources, the memo or arch.h */
};

/* Whether o's rows are kept by PC range (cfi_cache.h): an object whose
 * rows all come from its .eh_frame search table, in a walk that reads
 * .eh_frame. */
static inline bool rows_by_range(const struct walker *w, const struct sfb_object *o)
{
	return !sfb_object_has_sframe(o) && o->source != SFB_SRC_JIT && !o->main_eh_index &&
	       !(w->flags & SFRAME_BT_NO_EH_FRAME);
}

/* Whether a return address pc that no call precedes is where a fiber's
 * function returns to, pushed in place of a return address when the
 * fiber was made: a function's first instruction with a row there
 * (makecontext() makes it return to glibc's __start_context, which
 * nothing called), or boost.context's exit trampoline, recognised by its
 * code (arch.h).  Such a frame is the last of its stack, as libgcc's
 * _Unwind_Backtrace() and libunwind end there too: *row is then an
 * outermost row.  Out of line: a walk meets one at most once. */
static __attribute__((noinline)) bool is_fiber_end(struct walker *w, const struct sfb_object *o,
						   uintptr_t pc, struct sfb_row *row)
{
	struct sfb_row at_pc;
	if (sfb_arch_is_fiber_exit(pc, o->exec_lo, o->exec_hi)) {
		*row = (struct sfb_row){ .flags = SFB_ROW_OUTERMOST };
		return true;
	}
	if (sfb_object_row(o, pc, w->flags, &at_pc) || at_pc.func_start != pc ||
	    (at_pc.flags & SFB_ROW_SIGNAL))
		return false;
	*row = (struct sfb_row){ .flags = SFB_ROW_OUTERMOST | (at_pc.flags & SFB_ROW_CFI) };
	return true;
}

/* Is the return address pc in the program's entry function (_start, at
 * AT_ENTRY), which calls __libc_start_main() at most this far in?  Its
 * frame is the outermost: where no row covers it (Debian's arm64 bc and
 * dc link no CFI for it), the walk ends there as it ends at an undefined
 * return address, as libgcc's unwinder ends there too.  Only the stop
 * reason changes: no row, no frame above it either way. */
#define PROGRAM_START_MAX 128

static bool in_program_start(uintptr_t pc)
{
	uintptr_t entry = getauxval(AT_ENTRY);
	return entry && pc > entry && pc - entry <= PROGRAM_START_MAX;
}

/* The row that object o gives for the frame at pc into f->row, or that the
 * memo holds for it (rowmemo.h; marked SFB_ROW_MEMO); f->sigreturn if the
 * frame is the kernel's signal trampoline, recognised by its code.
 * Return addresses are looked up at pc - 1 and must follow a call
 * instruction (or be where a fiber's function returns to, pushed as one:
 * the last frame, is_fiber_end()).  Returns 0,
 * or the stop reason: no source has a row for pc (f->is_frame), or pc is
 * not a return address (!f->is_frame). */
static inline __attribute__((always_inline)) int
row_from_object(struct walker *w, const struct sfb_object *o, uintptr_t pc, bool exact,
		struct frame_row *f)
{
	uintptr_t key = exact ? pc : pc - 1;
	uint32_t epoch = memo_epoch(w, o);
	struct sfb_memo_row compiled;
	struct sfb_row *row = &f->row;
	/* A memoised exact row is what the lines below gave last time: a row
	 * of the common shape, which is no trampoline's. */
	if (exact && w->use_memo && sfb_object_has_rows(o) &&
	    sfb_memo_get_exact(SFB_MEMO_EXACT(pc), epoch, &compiled)) {
		sfb_memo_row_expand(&compiled, SFB_DWARF_SP, SFB_DWARF_FP, row);
		return 0;
	}
	/* A verified return address with a memoised row: no lookup, no
	 * call-site check again.  The general path comes here for a frame the
	 * fast path could not take although its row is memoised: one whose
	 * slots lie past the window a run had, on a stack other than the
	 * thread's (a fiber's), whose pages are probed as the walk reaches
	 * them; and the outermost row (rowmemo.h). */
	if (!exact && w->use_memo && sfb_object_has_rows(o) &&
	    sfb_memo_get(pc, epoch, &compiled)) {
		if (sfb_memo_is_outermost(&compiled))
			*row = (struct sfb_row){ .flags = SFB_ROW_OUTERMOST | SFB_ROW_MEMO };
		else
			sfb_memo_row_expand(&compiled, SFB_DWARF_SP, SFB_DWARF_FP, row);
		return 0;
	}
	/* Rows kept by PC range (cfi_cache.h) spare a sample's first frame
	 * the FDE search and the CFI interpretation. */
	bool by_range = rows_by_range(w, o);
	int why_no_row = 0;
	if (!by_range || !sfb_cfi_cache_get(key, epoch, row)) {
		why_no_row = sfb_object_row(o, key, w->flags, row);
		if (by_range && !why_no_row)
			sfb_cfi_cache_put(key, epoch, row, o->map_start, o->map_end);
	}
	if (!why_no_row)
		sfb_arch_fix_row(pc, o->exec_lo, o->exec_hi, row);
	if (why_no_row || (row->flags & SFB_ROW_SIGNAL))
		f->sigreturn = is_sigreturn(w, pc, o->exec_lo, o->exec_hi);
	if (exact || f->sigreturn)
		return why_no_row;
	if (!sfb_arch_is_return_address(pc, o->exec_lo, o->exec_hi)) {
		/* A trampoline the toolchain described as a plain function
		 * (binutils before 2.46 drop .cfi_signal_frame). */
		f->sigreturn = is_sigreturn(w, pc, o->exec_lo, o->exec_hi);
		if (f->sigreturn)
			return why_no_row;
		if (is_fiber_end(w, o, pc, row))
			return 0;
		f->is_frame = false;
		return SFRAME_BT_STOP_BAD_RA;
	}
	if (why_no_row == SFRAME_BT_STOP_NO_UNWIND_INFO && in_program_start(pc)) {
		*row = (struct sfb_row){ .flags = SFB_ROW_OUTERMOST };
		return 0;
	}
	return why_no_row;
}

/* Memoise row, which object o gave for the frame at pc (exact: an exact PC,
 * else a return address verified to follow a call), if it has the common
 * shape (rowmemo.h), and an outermost return address's row as such. */
static void memoise_row(struct walker *w, const struct sfb_object *o, uintptr_t pc, bool exact,
			const struct sfb_row *row)
{
	uint32_t epoch = memo_epoch(w, o);
	struct sfb_memo_row compiled;
	if (sfb_memo_row_of(row, SFB_DWARF_SP, SFB_DWARF_FP, &compiled)) {
		if (exact)
			sfb_memo_put_exact(SFB_MEMO_EXACT(pc), epoch, &compiled);
		else
			sfb_memo_put(pc, epoch, &compiled);
	} else if (!exact && (row->flags & (SFB_ROW_OUTERMOST | SFB_ROW_SIGNAL)) ==
				     SFB_ROW_OUTERMOST) {
		sfb_memo_put(pc, epoch, &SFB_MEMO_OUTERMOST_ROW);
	}
}

/* The row for the frame at regs->pc, at a walk's position at, into *f:
 * the object's (row_from_object(), memoised here when just looked up),
 * corrected by the architecture in the topmost frame; where there is
 * none, the architecture's row for a PLT stub, or the frame-pointer rule
 * where allowed.  Or the kernel's signal trampoline, on a page of an
 * object or of none.  Returns 0, or the stop reason, with f->is_frame if
 * the PC is a frame all the same. */
static inline __attribute__((always_inline)) int
find_frame_row(struct walker *w, const struct sfb_regs *regs, const struct position *at,
	       struct frame_row *f)
{
	/* Return addresses point after the call; look up the call. */
	uintptr_t lookup = at->exact ? regs->pc : regs->pc - 1;
	const struct sfb_object *o;
	f->rule = &f->row;
	f->sigreturn = false;
	f->caller_exact = false;
	f->is_frame = true;
	int stop = walk_object(w, lookup, &o);
	if (stop && !at->exact && is_sigreturn(w, regs->pc, 0, 0)) {
		/* A signal trampoline on a page no object holds (qemu-user
		 * maps no vDSO; a kernel's on-stack trampoline). */
		f->sigreturn = true;
		return 0;
	}
	if (stop) {
		/* An exact PC is a frame even outside any object (JIT code); an
		 * unverifiable return address is not. */
		f->is_frame = at->exact;
#if SFB_FP_RULE
		/* Code in no object and not registered (a JIT that keeps frame
		 * pointers and registers nothing, as V8): the validated
		 * frame-pointer rule, where the caller allows it anywhere.  A
		 * return address on the stack being walked is not code: a word
		 * that a frame-pointer step took from a function's realigned
		 * frame (libjpeg-turbo's SIMD code keeps its frame record so). */
		if (stop == SFRAME_BT_STOP_NO_OBJECT && (w->flags & SFRAME_BT_FP_FALLBACK_ANY) &&
		    (at->exact || !on_the_stack(w, regs))) {
			f->is_frame = true;
			f->rule = &fp_row;
			f->source = SFRAME_BT_FROM_FRAME_POINTER;
			return 0;
		}
#endif
		return stop;
	}
	int why_no_row = row_from_object(w, o, regs->pc, at->exact, f);
	if (!f->is_frame)
		return why_no_row;
	if (f->sigreturn)
		return 0;
	if (!why_no_row) {
		/* A row just looked up, not the memo's, and verified. */
		if (!(f->row.flags & SFB_ROW_MEMO))
			memoise_row(w, o, regs->pc, at->exact, &f->row);
		f->caller_exact = (f->row.flags & SFB_ROW_SIGNAL) != 0;
		if (at->topmost)
			sfb_arch_fix_topmost_row(regs->pc, o->exec_lo, o->exec_hi, &f->row);
		f->source = f->row.flags & SFB_ROW_CFI ? SFRAME_BT_FROM_EH_FRAME
						       : SFRAME_BT_FROM_SFRAME;
		return 0;
	}
	if (at->topmost && at->exact && sfb_arch_in_plt_stub(regs->pc, o->exec_lo, o->exec_hi)) {
		/* A PLT stub without unwind info (arch.h): the function entry's
		 * row, its RA still in the link register. */
		f->row = (struct sfb_row){
			.cfa = { SFB_LOC_EXPR, 0, SFB_DWARF_SP, SFB_ENTRY_CFA },
			.ra = { SFB_LOC_SAME, 0, SFB_DWARF_RA, 0 },
			.fp = { SFB_LOC_SAME, 0, SFB_DWARF_FP, 0 },
		};
		f->source = SFRAME_BT_FROM_LINK_REGISTER;
		return 0;
	}
	if (fp_allowed(w, o)) {
#if SFB_FP_RULE
		f->rule = &fp_row;
#endif
		f->source = SFRAME_BT_FROM_FRAME_POINTER;
		return 0;
	}
	return why_no_row;
}

/* ---- The fast path ---------------------------------------------------------- */

/* The fast path's out-of-line lookups: each finds the row of a PC in the
 * memo, into *row, and returns the epoch it is memoised under as an
 * entry's head holds it (SFB_MEMO_HEAD_EPOCH()), which the loop's probes
 * then use; 0, which no epoch gives, if there is none.  row points into
 * the caller's frame, not at the row the caller's loop keeps in
 * registers. */

/* memo_find_in_object() past its first probe: the key in the second entry
 * of its pair under the epoch of objects never unloaded; else its object,
 * confirmed for this walk, and the entry under that object's epoch. */
static __attribute__((noinline)) uint64_t memo_from_object(struct walker *w, uintptr_t pc,
							   struct sfb_memo_row *row)
{
	const struct sfb_memo_entry *second = sfb_memo_pair(pc) + 1;
	if (sfb_memo_page_in(second, w->pages) && sfb_memo_try_head(second, pc, w->kept_head, row))
		return w->kept_head;
	if (pc == 0)
		return 0;
	uint32_t epoch = confirmed_epoch(w, pc - 1);
	if (!epoch) {
		const struct sfb_object *o;
		if (walk_object(w, pc - 1, &o))
			return 0; /* no object */
		/* A kept object's entries were looked for already. */
		if (sfb_object_is_kept(o))
			return 0;
		epoch = memo_epoch(w, o);
	}
	return sfb_memo_get(pc, epoch, row) ? SFB_MEMO_HEAD_EPOCH(epoch) : 0;
}

/* The row of the return address pc (perhaps the outermost row:
 * rowmemo.h).  Out of line: the fast loop finds an entry inline in the
 * object it is in (sfb_memo_probe()), and comes here only for the walk's
 * first return address and where the walk enters another object.  First
 * the first entry of pc's pair under the epoch of objects never unloaded,
 * which needs no object lookup: the program, libc and the objects loaded
 * with them (no other object ever takes their addresses); then, out of
 * the way of that hit, the rest.  A key with the top bit set (a corrupt
 * stack word equal to an exact PC's key) finds nothing under these
 * epochs: exact rows are kept under SFB_MEMO_EXACT_EPOCH(). */
static __attribute__((noinline)) uint64_t memo_find_in_object(struct walker *w, uintptr_t pc,
							      struct sfb_memo_row *row)
{
	const uint64_t kept = w->kept_head;
	const struct sfb_memo_entry *e = sfb_memo_pair(pc);
	if (__builtin_expect(sfb_memo_page_in(e, w->pages) && sfb_memo_try_head(e, pc, kept, row),
			     1))
		return kept;
	uint64_t head = memo_from_object(w, pc, row);
	/* Not a tail call: what this function costs, as profiled
	 * (docs/SPEED.md), is then the whole lookup's. */
	__asm__ volatile("");
	return head;
}

/* The row of the exact PC a walk starts at (a ucontext, or the registers
 * a signal frame saved): the row memoise_row() kept the last time the
 * general path found it, or, in an object whose rows are kept by PC
 * range, the row of the range that holds pc, if it has the common shape:
 * memoised here, as the general path would memoise it (a sample's PC is
 * seldom seen twice, its range often).  Such a row is no trampoline's and
 * needs no topmost-frame correction (sfb_arch_fix_topmost_row() changes
 * only PC-mask rows, never memoised): the fast path applies it like a
 * return address's. */
static __attribute__((noinline)) uint64_t memo_find_exact(struct walker *w, uintptr_t pc,
							  struct sfb_memo_row *row)
{
	uint32_t epoch = confirmed_epoch(w, pc);
	if (epoch && sfb_memo_get_exact(SFB_MEMO_EXACT(pc), epoch, row))
		return SFB_MEMO_HEAD_EPOCH(epoch);
	const struct sfb_object *o;
	if (walk_object(w, pc, &o) || !sfb_object_has_rows(o))
		return 0;
	epoch = memo_epoch(w, o);
	if (sfb_memo_get_exact(SFB_MEMO_EXACT(pc), epoch, row))
		return SFB_MEMO_HEAD_EPOCH(epoch);
	struct sfb_row full;
	if (!rows_by_range(w, o) || !sfb_cfi_cache_get(pc, epoch, &full) ||
	    !sfb_memo_row_of(&full, SFB_DWARF_SP, SFB_DWARF_FP, row))
		return 0;
	sfb_memo_put_exact(SFB_MEMO_EXACT(pc), epoch, row);
	return SFB_MEMO_HEAD_EPOCH(epoch);
}

#ifdef SFB_RA_SLOT
#define RA_SLOT(row) SFB_RA_SLOT
#else
#define RA_SLOT(row) ((row).ra_slot)
#endif

/* The fast path: consecutive return addresses whose rows are memoised,
 * from the walk's position at on, written to w's output.  For each,
 * SFB_MEMO_SP_CFA_BAD or SFB_MEMO_FP_CFA_BAD (rowmemo.h: the safety
 * condition and its proof), then the same computation as apply_row() for
 * a row of that shape.  Any doubt ends the run, leaving that frame to the
 * general path.  When at->exact, the first PC is an exact PC, whose row is
 * memoised under its own key.  Returns whether it wrote any frame; then r
 * and at are the caller's of the last, its frames counted in w->st, and
 * r->pc is 0 when a return address of 0 ended the walk.  A template: the
 * named variants below instantiate it with records, sample and
 * exact_start (whether the run may start at an exact PC) constant. */
static inline __attribute__((always_inline)) bool
fast_run(struct walker *w, struct sfb_regs *r, struct position *at, const bool records,
	 const bool sample, const bool exact_start)
{
	const int n = at->n;
	bool exact = at->exact, first_exact = exact_start && exact;
	uintptr_t pc = r->pc, sp = r->sp, fp = r->fp;
	/* The window holding SP bounds the run: window 0, the thread's own
	 * stack (the caller saw one window at least), or the pages of
	 * another stack (a fiber's, a coroutine's) that the general path has
	 * probed so far; past its top, the general path probes the next page
	 * and a new run goes on in the grown window. */
	const struct sfb_window *win = &w->mem.win[0];
	if (__builtin_expect(sp - win->lo >= win->hi - win->lo, 0) &&
	    !(win = sfb_mem_window_of(&w->mem, sp, 1)))
		return false;
	const uintptr_t win_hi = win->hi;
	if (sp % SFB_CFA_ALIGN || win_hi - sp >= SFB_MEMO_WINDOW_MAX)
		return false;
	/* Saturated (0 refuses every frame record), though no readable
	 * window ends that low. */
	const uintptr_t record_hi = win_hi > SFB_FP_CFA_OFFSET ? win_hi - SFB_FP_CFA_OFFSET : 0;
	/* row has a copy whose address the lookups take, so that row itself
	 * can stay in registers. */
	struct sfb_memo_row found;
	/* The run ended at a frame whose memoised row marks the outermost. */
	bool outermost = false;
	const uint32_t pages = atomic_load_explicit(&sfb_memo_pages_written, memory_order_relaxed);
	w->pages = pages;
	/* The epoch the rows are memoised under, in head form. */
	uint64_t head = exact ? memo_find_exact(w, pc, &found) : memo_find_in_object(w, pc, &found);
	if (!head)
		return false;
	struct sfb_memo_row row = found;
	uint8_t src = at->source;
	/* The recall's trail: the pair of each entry the loop moves to; the
	 * first one, if the walk did not start here, by trail_note().  In the
	 * loop, where the entry is at hand; from the output afterwards it
	 * would have to be hashed again. */
	if (sample && n > 0)
		trail_note(w, exact ? SFB_MEMO_EXACT(pc) : pc);
	unsigned nt = w->ntrail;
	int ncfi = 0;
	/* Only the output in use: arithmetic on the NULL one is undefined. */
	struct sframe_bt_frame *const frames = records ? w->frames : NULL;
	void **const pcs = records ? NULL : w->pcs;
	struct sframe_bt_frame *frame_out = records ? frames + n : NULL;
	const struct sframe_bt_frame *frame_end = records ? frames + w->size : NULL;
	void **pc_out = records ? NULL : pcs + n, **pc_end = records ? NULL : pcs + w->size;
	for (;;) {
		uintptr_t cfa;
		if (SFB_FP_RULE && row.cfa_word == (SFB_FP_CFA_OFFSET | 1) &&
		    row.fp_slot == SFB_FP_FP_OFFSET / 8) {
			/* A frame record's row: the CFA from FP alone, so that the
			 * next frame's loads wait for FP, not for the memo's row
			 * (the row's test is a predicted branch). */
			if (SFB_MEMO_RECORD_BAD(fp, sp, record_hi))
				break;
			cfa = fp + SFB_FP_CFA_OFFSET;
			if (sample)
				__builtin_prefetch((const void *)(cfa + STACK_PREFETCH_AHEAD));
			fp = sfb_mem_load_proved(cfa + SFB_FP_FP_OFFSET);
		} else {
			if (!(row.cfa_word & 1)) {
				cfa = sp + (uintptr_t)(intptr_t)row.cfa_word;
				if (SFB_MEMO_SP_CFA_BAD(cfa, win_hi)) {
					outermost = sfb_memo_is_outermost(&row);
					break;
				}
			} else {
				cfa = fp + (uintptr_t)(intptr_t)(row.cfa_word - 1);
				if (SFB_MEMO_FP_CFA_BAD(cfa, sp, win_hi))
					break;
				if (sample)
					__builtin_prefetch((const void *)(cfa + STACK_PREFETCH_AHEAD));
			}
			/* Expected: laid out inline, FP stays in a register. */
			if (__builtin_expect(row.fp_slot != 0, 1))
				fp = sfb_mem_load_proved(cfa + 8 * (uintptr_t)(intptr_t)row.fp_slot);
		}
		if (records) {
			*frame_out++ = (struct sframe_bt_frame){ .pc = pc, .cfa = cfa, .source = src,
								 .exact = exact };
			src = row.flags & SFB_MEMO_CFI ? SFRAME_BT_FROM_EH_FRAME
						       : SFRAME_BT_FROM_SFRAME;
			ncfi += row.flags & SFB_MEMO_CFI;
			exact = false;
		} else {
			*pc_out++ = (void *)pc;
		}
		const uintptr_t callee_pc = pc;
		pc = sfb_mem_load_proved(cfa + 8 * (uintptr_t)(intptr_t)RA_SLOT(row));
		if (SFB_ARCH_PAC && (row.flags & SFB_MEMO_PAC))
			pc = sfb_arch_strip_pac(pc);
		sp = SFB_SP_FROM_CFA(cfa);
		if (records ? frame_out == frame_end : pc_out == pc_end)
			break;
		/* Recursion: the same return address again has the same row,
		 * already verified for this key and epoch in this walk.  Not
		 * after an exact PC equal to it: its row is the exact PC's, and
		 * the return address's is the call's, at pc - 1 (a call that
		 * ends a function whose next one it calls).  first_exact holds
		 * only until the first frame's caller is looked up. */
		if (pc == callee_pc && __builtin_expect(!first_exact, 1))
			continue;
		first_exact = false;
		/* The caller's entry, looked up in the object of this frame's
		 * (its epoch): a return address in another object fails the
		 * epoch check there, and is looked up again in its own. */
		const struct sfb_memo_entry *next = sfb_memo_probe(pc, head, pages, &row);
		if (__builtin_expect(next != NULL, 1)) {
			if (sample && nt < SFB_MEMO_RECALL)
				w->trail[nt++] = sfb_memo_pair_of_entry(next);
			continue;
		}
		head = memo_find_in_object(w, pc, &found);
		if (!head)
			break;
		row = found;
		if (sample && nt < SFB_MEMO_RECALL)
			w->trail[nt++] = (uint16_t)sfb_memo_pair_of_key(pc);
	}
	/* The outermost frame is written out, and ends the walk (as
	 * general_step() would: no CFA).  The loop stopped before writing it,
	 * with room for it. */
	if (outermost) {
		if (records)
			*frame_out++ = (struct sframe_bt_frame){ .pc = pc, .source = src };
		else
			*pc_out++ = (void *)pc;
	}
	int m = records ? (int)(frame_out - frames) : (int)(pc_out - pcs);
	w->ntrail = nt;
	w->fast_stop = outermost ? SFRAME_BT_STOP_OUTERMOST : 0;
	if (m == n)
		return false;
	r->pc = pc;
	r->sp = sp;
	r->fp = fp;
	r->all = NULL;
	r->have_ra = false;
	w->known_regs = 0;
	w->lost_regs = true;
	at->n = m;
	at->exact = false;
	at->topmost = false;
	at->source = records ? src : SFRAME_BT_FROM_SFRAME;
	w->st->frames_sframe += m - n - ncfi - outermost;
	w->st->frames_eh_frame += ncfi;
	return true;
}

/* The variants, out of line: a sample's code is then one of these, a few
 * lines of sfb_walk() and the lookups.  Only samples keep a trail (for the
 * next sample) and prefetch the stack; sframe_backtrace(), called in loops
 * on a stack its caller has just used, goes without.  Frame records always
 * do both: the richer call, rarely the hot one.  A run of
 * sframe_backtrace() starts at a return address, except after a signal
 * frame (fast_pcs_exact()): fast_pcs() then needs no test of its first
 * frame's kind in the loop. */
SFB_NO_ASAN static __attribute__((noinline)) bool
fast_pcs(struct walker *w, struct sfb_regs *r, struct position *at)
{
	return fast_run(w, r, at, false, false, false);
}

SFB_NO_ASAN static __attribute__((noinline)) bool
fast_pcs_exact(struct walker *w, struct sfb_regs *r, struct position *at)
{
	return fast_run(w, r, at, false, false, true);
}

SFB_NO_ASAN static __attribute__((noinline)) bool
fast_pcs_sample(struct walker *w, struct sfb_regs *r, struct position *at)
{
	return fast_run(w, r, at, false, true, true);
}

SFB_NO_ASAN static __attribute__((noinline)) bool
fast_records(struct walker *w, struct sfb_regs *r, struct position *at)
{
	return fast_run(w, r, at, true, true, true);
}

/* ---- The general step ------------------------------------------------------- */

/* The registers the signal frame at sp saved (arch.h), copied word by
 * word through the walk's checked accessor into w->saved, which regs->all
 * then points at.  False if any word is unreadable.  Out of line: signal
 * frames are rare, and general_step() keeps its registers for the rest. */
static __attribute__((noinline)) bool sigframe_regs(struct walker *w, uintptr_t sp,
						   struct sfb_regs *regs)
{
	uintptr_t saved_at = sfb_arch_sigframe_saved_at(sp);
	if (saved_at < sp)
		return false;
	for (unsigned i = 0; i < SFB_SAVED_WORDS; i++)
		if (!sfb_mem_read(&w->mem, saved_at + 8 * i, &w->saved.w[i]))
			return false;
	sfb_arch_from_saved(w->saved.w, regs);
	return true;
}

/* Write frame f as the walk's frame i (to w->frames[], or only its PC to
 * w->pcs[]) and note it for the recall. */
static void emit_frame(struct walker *w, int i, struct sframe_bt_frame f)
{
	if (w->frames)
		w->frames[i] = f;
	else
		w->pcs[i] = (void *)f.pc;
	if (i > 0)
		trail_note(w, f.exact ? SFB_MEMO_EXACT(f.pc) : f.pc);
}

/* One step by the general path: the frame at regs->pc is written out, its
 * row found and applied (or the signal frame above a trampoline crossed),
 * and counted; its caller's registers replace regs.  0 to go on, else the
 * stop reason.  Out of line: a sample whose frames are all memoised never
 * comes here. */
static __attribute__((noinline)) int
general_step(struct walker *w, struct sfb_regs *regs, struct position *at)
{
	struct frame_row f;
	int stop = find_frame_row(w, regs, at, &f);
	if (stop && !f.is_frame)
		return stop;
	emit_frame(w, at->n, (struct sframe_bt_frame){
		.pc = regs->pc, .source = at->source, .exact = at->exact });
	at->n++;
	if (stop)
		return stop;
	if (f.sigreturn) {
		if (++at->signals > MAX_SIGNAL_FRAMES ||
		    !sigframe_regs(w, regs->sp, regs))
			return SFRAME_BT_STOP_UNREADABLE;
		at->exact = true;
		at->topmost = true;
		at->source = SFRAME_BT_FROM_SIGNAL_FRAME;
		w->st->frames_signal++;
		if (w->frames)
			w->frames[at->n - 1].cfa = regs->sp;
		return regs->pc == 0 ? SFRAME_BT_STOP_BAD_RA : 0;
	}
	struct step next;
	stop = apply_row(w, regs, at, f.rule, &next);
	if (stop)
		return stop;
	at->sp_low = !SFB_FP_CFA_EXACT && f.rule != &f.row;
	if (w->frames)
		w->frames[at->n - 1].cfa = next.cfa;
	if (f.source == SFRAME_BT_FROM_SFRAME)
		w->st->frames_sframe++;
	else if (f.source == SFRAME_BT_FROM_EH_FRAME)
		w->st->frames_eh_frame++;
	else if (f.source == SFRAME_BT_FROM_FRAME_POINTER)
		w->st->frames_fp++;
	if (next.pc == 0)
		return SFRAME_BT_STOP_OUTERMOST;
	regs->pc = next.pc;
	regs->sp = next.sp;
	regs->fp = next.fp;
	regs->all = NULL;
	regs->have_ra = false;
	at->exact = f.caller_exact;
	at->topmost = false;
	at->source = f.source;
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
	if (!first && w->conf.hi)
		first = w->conf.home;
	sfb_objcache_recalled = first;
	if (w->ntrail)
		sfb_memo_recall_keep(w->trail, w->ntrail);
}

int sfb_walk(struct sfb_regs *regs, bool exact, struct sframe_bt_frame *frames,
	     void **pcs, int size, unsigned flags, struct sframe_bt_status *st)
{
	struct walker w;
	w.frames = frames;
	w.pcs = pcs;
	w.size = size;
	w.st = st;
	w.nobj = w.last_hit = w.nreplaced = 0;
	w.flags = flags;
	w.epoch_add = (flags & SFRAME_BT_NO_EH_FRAME) ? 1 : 0;
	w.kept_epoch = SFB_MEMO_KEPT_EPOCH + w.epoch_add;
	w.kept_head = SFB_MEMO_HEAD_EPOCH(w.kept_epoch);
	w.miss_pc = 0;
	w.miss_stop = 0;
	w.conf.lo = w.conf.hi = 0;
	w.known_regs = 0;
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
	/* Memoised rows keep only SP and FP: below one, the other callee-
	 * saved registers are unknown.  A rule that then needs one (ld.so's
	 * lazy-binding resolver: CFA = rbx + 32) stops the walk as
	 * unsafe-rule; it is walked again from the start without the memo,
	 * on the general path, which tracks them through CFI rows. */
	const struct sfb_regs start = *regs;
	w.use_memo = true;
	w.lost_regs = false;
	struct position at = { 0, false, exact, true, SFRAME_BT_FROM_CONTEXT, 0 };
	/* After a fast run, the frame it stopped at is the general path's:
	 * another fast run would stop there again. */
	bool try_fast = true;
	for (;;) {
		if (at.n == size) {
			/* Another frame exists (the step gave a non-zero PC); it
			 * is not looked at. */
			st->stop = SFRAME_BT_STOP_BUFFER_FULL;
			break;
		}
		/* Memoised rows may be based on SP: not while it is a bound. */
		if (try_fast && w.use_memo && w.mem.nwin && !at.sp_low &&
		    (frames     ? fast_records(&w, regs, &at)
		     : exact    ? fast_pcs_sample(&w, regs, &at)
		     : at.exact ? fast_pcs_exact(&w, regs, &at)
				: fast_pcs(&w, regs, &at))) {
			if (regs->pc == 0) {
				st->stop = SFRAME_BT_STOP_OUTERMOST;
				break;
			}
			if (w.fast_stop) {
				st->stop = w.fast_stop;
				break;
			}
			try_fast = false;
			continue;
		}
		try_fast = true;
		int stop = general_step(&w, regs, &at);
		if (stop == SFRAME_BT_STOP_UNSAFE_RULE && w.lost_regs && w.use_memo) {
			*regs = start;
			at = (struct position){ 0, false, exact, true, SFRAME_BT_FROM_CONTEXT, 0 };
			memset(st, 0, sizeof *st);
			w.known_regs = 0;
			w.ntrail = 0;
			w.trail_key = 0;
			w.use_memo = false;
			continue;
		}
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
