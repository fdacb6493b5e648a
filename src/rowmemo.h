/* A memo of the common rows by return address, shared by all threads.
 *
 * Profilers and servers walk the same stacks over and over.  The walker
 * memoises the row of every return address it has verified (a call
 * instruction ends there) when the row has the common shape: CFA = SP or
 * FP + offset, RA and FP saved at CFA + offset (or FP unchanged).  The
 * next walk through that address applies the memoised row directly,
 * without the FDE search, the FRE scan and the call-site check.
 *
 * Entries are keyed by the PC looked up and by the object's epoch (a
 * number describe() gives each object description), so a row cannot
 * outlive its object: a reloaded object gets a new epoch.  Each entry is a
 * seqlock, like the object cache's slots (objcache.h): a writer claims it
 * with a compare-and-swap and skips it if busy; a reader checks the
 * sequence number before and after.  The table is two-way associative: a
 * new key goes to the first entry of its pair and the previous first
 * moves to the second.  No allocation: SFB_MEMO_ENTRIES entries of 32
 * bytes, static. */
#ifndef SFB_ROWMEMO_H
#define SFB_ROWMEMO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "sframe_decode.h"

#define SFB_MEMO_ENTRIES 4096

/* A row of the common shape, compiled. */
struct sfb_simple_row {
	int32_t cfa_off;
	int32_t ra_off;   /* RA at CFA + ra_off */
	int32_t fp_off;   /* FP at CFA + fp_off; 0: FP unchanged */
	uint8_t cfa_on_fp; /* CFA base is FP (else SP) */
};

struct sfb_memo_entry {
	_Atomic uint32_t seq; /* 0 empty, odd busy, even stable */
	uint32_t epoch;
	uintptr_t key;
	struct sfb_simple_row row;
};

extern struct sfb_memo_entry sfb_memo[SFB_MEMO_ENTRIES];

/* Two-way: a key may sit in either entry of its pair (one cache line), so
 * that two hot return addresses whose hashes collide do not evict each
 * other on every walk. */
static inline struct sfb_memo_entry *sfb_memo_pair(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return &sfb_memo[(unsigned)(h >> 52) % SFB_MEMO_ENTRIES & ~1u];
}

static inline bool sfb_memo_try(struct sfb_memo_entry *e, uintptr_t key, uint32_t epoch,
				struct sfb_simple_row *row)
{
	uint32_t seq = atomic_load_explicit(&e->seq, memory_order_acquire);
	/* An entry never written has epoch 0, which no object has. */
	if ((seq & 1) || e->key != key || e->epoch != epoch)
		return false;
	*row = e->row;
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->seq, memory_order_relaxed) == seq;
}

/* The memoised row of key in the object of this epoch.  Inline: this is
 * the walker's hot path. */
static inline bool sfb_memo_get(uintptr_t key, uint32_t epoch, struct sfb_simple_row *row)
{
	struct sfb_memo_entry *e = sfb_memo_pair(key);
	return sfb_memo_try(e, key, epoch, row) || sfb_memo_try(e + 1, key, epoch, row);
}

/* Compile row into *out if it has the common shape. */
bool sfb_simple_row_of(const struct sfb_row *row, int sp_reg, int fp_reg,
		       struct sfb_simple_row *out);

/* Remember the row of key (a return address minus one, verified to
 * follow a call instruction). */
void sfb_memo_put(uintptr_t key, uint32_t epoch, const struct sfb_simple_row *row);

#endif
