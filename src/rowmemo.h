/* A memo of decoded rows by PC, shared by all threads.
 *
 * Profilers and servers walk the same stacks over and over; a row found
 * once is found again here in a few instructions instead of an FDE binary
 * search and an FRE scan.  Entries are keyed by the PC looked up and by the
 * object's epoch (a number describe() gives each object description), so
 * a row can never outlive the object it came from: a reloaded object gets
 * a new epoch.  Each entry is a seqlock, written and read as the object
 * cache's slots are (objcache.h); a write that finds an entry busy is
 * skipped.  Entries hold only verified return addresses (a hit skips the
 * lookup and the call-site check).  No allocation: the table is static,
 * SFB_MEMO_ENTRIES entries of 48 bytes. */
#ifndef SFB_ROWMEMO_H
#define SFB_ROWMEMO_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include "sframe_decode.h"

#define SFB_MEMO_ENTRIES 4096

struct sfb_memo_entry {
	_Atomic uint32_t seq;    /* 0 empty, odd busy, even stable */
	uint32_t epoch;
	uintptr_t key;
	struct sfb_loc cfa, ra, fp;
	uint16_t flags;
};

extern struct sfb_memo_entry sfb_memo[SFB_MEMO_ENTRIES];

static inline unsigned sfb_memo_index(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 52) % SFB_MEMO_ENTRIES;
}

/* Found: row->cfa/ra/fp/flags are set (nothing else).  Inline: this is
 * the walker's hot path. */
static inline bool sfb_memo_get(uintptr_t key, uint32_t epoch, struct sfb_row *row)
{
	struct sfb_memo_entry *e = &sfb_memo[sfb_memo_index(key)];
	uint32_t seq = atomic_load_explicit(&e->seq, memory_order_acquire);
	if ((seq & 1) || e->key != key || e->epoch != epoch || seq == 0)
		return false;
	row->cfa = e->cfa;
	row->ra = e->ra;
	row->fp = e->fp;
	row->flags = e->flags;
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->seq, memory_order_relaxed) == seq;
}

/* Remember the row of key, a return address minus one that was seen to
 * follow a call instruction. */
void sfb_memo_put(uintptr_t key, uint32_t epoch, const struct sfb_row *row);

#endif
