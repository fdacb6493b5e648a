/* The row memo; see rowmemo.h. */
#include "rowmemo.h"

struct sfb_memo_entry sfb_memo[SFB_MEMO_ENTRIES];

void sfb_memo_put(uintptr_t key, uint32_t epoch, const struct sfb_row *row)
{
	struct sfb_memo_entry *e = &sfb_memo[sfb_memo_index(key)];
	uint32_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
	if ((seq & 1) || !atomic_compare_exchange_strong_explicit(
				 &e->seq, &seq, seq + 1, memory_order_acquire,
				 memory_order_relaxed))
		return; /* another writer has it: skip, never wait */
	e->key = key;
	e->epoch = epoch;
	e->cfa = row->cfa;
	e->ra = row->ra;
	e->fp = row->fp;
	e->flags = row->flags;
	atomic_store_explicit(&e->seq, seq + 2, memory_order_release);
}
