/* The row memo; see rowmemo.h. */
#include "rowmemo.h"

struct sfb_memo_entry sfb_memo[SFB_MEMO_ENTRIES] __attribute__((aligned(64)));

bool sfb_simple_row_of(const struct sfb_row *row, int sp_reg, int fp_reg,
		       struct sfb_simple_row *out)
{
	const struct sfb_loc *c = &row->cfa, *r = &row->ra, *f = &row->fp;
	if (row->flags & (SFB_ROW_SIGNAL | SFB_ROW_OUTERMOST | SFB_ROW_MANGLED_RA |
			  SFB_ROW_PCMASK))
		return false;
	if (c->kind != SFB_LOC_EXPR || c->deref || (c->reg != sp_reg && c->reg != fp_reg))
		return false;
	if (r->kind != SFB_LOC_EXPR || !r->deref || r->reg != SFB_REG_CFA)
		return false;
	if (f->kind == SFB_LOC_EXPR) {
		if (!f->deref || f->reg != SFB_REG_CFA || f->off >= 0 || f->off % 8)
			return false;
	} else if (f->kind != SFB_LOC_SAME) {
		return false;
	}
	/* Slots below the CFA, word-aligned: what fast_frames() relies on. */
	if (r->off >= 0 || r->off % 8)
		return false;
	*out = (struct sfb_simple_row){ c->off, r->off,
					f->kind == SFB_LOC_EXPR ? f->off : 0,
					c->reg == fp_reg };
	return true;
}

/* Write one entry, unless another writer holds it (never wait). */
static void memo_write(struct sfb_memo_entry *e, uintptr_t key, uint32_t epoch,
		       const struct sfb_simple_row *row)
{
	uint32_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
	if ((seq & 1) || !atomic_compare_exchange_strong_explicit(
				 &e->seq, &seq, seq + 1, memory_order_acquire,
				 memory_order_relaxed))
		return;
	e->key = key;
	e->epoch = epoch;
	e->row = *row;
	atomic_store_explicit(&e->seq, seq + 2, memory_order_release);
}

void sfb_memo_put(uintptr_t key, uint32_t epoch, const struct sfb_simple_row *row)
{
	struct sfb_memo_entry *e = sfb_memo_pair(key);
	struct sfb_simple_row old;
	/* The first entry's key, if it is a different one, moves to the
	 * second entry; the new key takes the first. */
	uintptr_t old_key = e->key;
	uint32_t old_epoch = e->epoch;
	if (old_key != key && sfb_memo_try(e, old_key, old_epoch, &old))
		memo_write(e + 1, old_key, old_epoch, &old);
	memo_write(e, key, epoch, row);
}
