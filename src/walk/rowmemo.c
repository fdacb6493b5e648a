/* The row memo; see rowmemo.h. */
#include "walk/rowmemo.h"

#include <stddef.h>

#include "arch/arch.h"

/* Page-aligned: a bit of sfb_memo_pages_written must cover one page. */
struct sfb_memo_entry sfb_memo[SFB_MEMO_ENTRIES] __attribute__((aligned(4096)));
__thread struct sfb_memo_recall sfb_memo_recalled __attribute__((tls_model("initial-exec")));

_Atomic uint32_t sfb_memo_pages_written;

_Static_assert(sizeof(struct sfb_memo_entry) == 32, "two entries per cache line");
_Static_assert(offsetof(struct sfb_memo_entry, epoch) == 4 && sizeof(sfb_seq) == 4,
	       "seq and epoch fill head");
_Static_assert(sizeof sfb_memo <= 32 * 4096, "a bit of sfb_memo_pages_written per page");

/* The lowest slot a row reads (slots are negative; fp_slot 0: none). */
static int lowest_slot_of(int ra_slot, int fp_slot)
{
	return fp_slot && fp_slot < ra_slot ? fp_slot : ra_slot;
}

/* A slot offset as a word count in [-128, -1], or 0 if it is not one. */
static int8_t slot_of(int32_t off)
{
	if (off >= 0 || off % 8 || off < -8 * 128)
		return 0;
	return (int8_t)(off / 8);
}

bool sfb_memo_row_of(const struct sfb_row *row, int sp_reg, int fp_reg,
		     struct sfb_memo_row *out)
{
	const struct sfb_loc *c = &row->cfa, *r = &row->ra, *f = &row->fp;
	if (row->flags & (SFB_ROW_SIGNAL | SFB_ROW_OUTERMOST | SFB_ROW_PCMASK))
		return false;
	if ((row->flags & SFB_ROW_MANGLED_RA) && !SFB_ARCH_PAC)
		return false;
	/* The fast path takes the caller's SP from the CFA. */
	if (sfb_row_reg_rule(row, (unsigned)sp_reg))
		return false;
	if (c->kind != SFB_LOC_EXPR || c->deref || (c->reg != sp_reg && c->reg != fp_reg))
		return false;
	if (r->kind != SFB_LOC_EXPR || !r->deref || r->reg != SFB_REG_CFA)
		return false;
	int8_t ra_slot = slot_of(r->off), fp_slot = 0;
	if (!ra_slot)
		return false;
	if (f->kind == SFB_LOC_EXPR) {
		if (!f->deref || f->reg != SFB_REG_CFA || !(fp_slot = slot_of(f->off)))
			return false;
	} else if (f->kind != SFB_LOC_SAME) {
		return false;
	}
#ifdef SFB_RA_SLOT
	if (ra_slot != SFB_RA_SLOT)
		return false;
#endif
	int lowest_slot = lowest_slot_of(ra_slot, fp_slot);
	/* With SP as base, the walker checks only the top of the stack:
	 * an aligned SP plus an aligned offset that reaches above the lowest
	 * slot gives an aligned CFA whose slots all lie above SP.  The
	 * outermost row's offset, and any beyond it, are no real row's. */
	if (c->reg == sp_reg &&
	    (c->off % (int32_t)SFB_CFA_ALIGN || c->off < -8 * (int32_t)lowest_slot ||
	     c->off >= SFB_MEMO_OUTERMOST_CFA))
		return false;
	if (c->off % 2)
		return false;
	if (c->reg == fp_reg && lowest_slot < SFB_MEMO_FP_LOWEST_SLOT)
		return false;
	*out = (struct sfb_memo_row){
		.cfa_word = c->off | (c->reg == fp_reg),
		.ra_slot = ra_slot,
		.fp_slot = fp_slot,
		.flags = (uint16_t)((row->flags & SFB_ROW_CFI ? SFB_MEMO_CFI : 0) |
				    (row->flags & SFB_ROW_MANGLED_RA ? SFB_MEMO_PAC : 0)),
	};
	return true;
}

void sfb_memo_row_expand(const struct sfb_memo_row *m, int sp_reg, int fp_reg,
			 struct sfb_row *row)
{
	int on_fp = m->cfa_word & 1;
	*row = (struct sfb_row){
		.cfa = { SFB_LOC_EXPR, 0, (uint16_t)(on_fp ? fp_reg : sp_reg), m->cfa_word - on_fp },
		.ra = { SFB_LOC_EXPR, 1, SFB_REG_CFA, 8 * m->ra_slot },
		.fp = m->fp_slot ? (struct sfb_loc){ SFB_LOC_EXPR, 1, SFB_REG_CFA, 8 * m->fp_slot }
				 : (struct sfb_loc){ SFB_LOC_SAME, 0, 0, 0 },
		.flags = (uint16_t)(SFB_ROW_MEMO | (m->flags & SFB_MEMO_CFI ? SFB_ROW_CFI : 0) |
				    (m->flags & SFB_MEMO_PAC ? SFB_ROW_MANGLED_RA : 0)),
	};
}

/* Write one entry, unless another writer holds it (never wait); its page
 * first touched by the claim (seqlock.h). */
static void memo_write(struct sfb_memo_entry *e, uintptr_t key, uint32_t epoch,
		       const struct sfb_memo_row *row)
{
	bool written = sfb_memo_page_written(e);
	if (!sfb_seq_claim_fresh(&e->seq, written))
		return;
	e->key = key;
	e->epoch = epoch;
	e->row = *row;
	sfb_memo_set_hint(e, e); /* never NULL once written: see walk.c */
	sfb_seq_publish(&e->seq);
	if (!written)
		atomic_fetch_or_explicit(&sfb_memo_pages_written, sfb_memo_page_bit(e),
					 memory_order_relaxed);
}

void sfb_memo_put(uintptr_t key, uint32_t epoch, const struct sfb_memo_row *row)
{
	struct sfb_memo_entry *e = sfb_memo_pair(key);
	struct sfb_memo_row first_row;
	if (!sfb_memo_page_written(e)) {
		memo_write(e, key, epoch, row);
		return;
	}
	/* The first entry's key, if it is a different one, moves to the
	 * second entry; the new key takes the first. */
	uintptr_t first_key = e->key;
	uint32_t first_epoch = e->epoch;
	if (first_key == key && first_epoch == epoch)
		return;
	if (first_key != key && sfb_memo_try(e, first_key, first_epoch, &first_row))
		memo_write(e + 1, first_key, first_epoch, &first_row);
	memo_write(e, key, epoch, row);
}

void sfb_memo_put_exact(uintptr_t key, uint32_t epoch, const struct sfb_memo_row *row)
{
	memo_write(sfb_memo_pair(key) + 1, key, SFB_MEMO_EXACT_EPOCH(epoch), row);
}
