/* The one way shared records are published: a sequence number per record.
 *
 * 0: never written.  Odd: a writer owns the record.  Even: stable.
 *
 * A writer never waits: sfb_seq_claim() takes a record with one
 * compare-and-swap from the even value it saw to the next odd one, and
 * fails if another writer got there first (the caller then skips the
 * record).  The claim is an acquire operation, so the writer's stores to
 * the record cannot be seen before the record turns odd.  The writer then
 * fills the record and sfb_seq_publish() makes it even again with a
 * release store, so a reader that sees the new even value sees every
 * store made before it.
 *
 * A reader never waits and never writes: sfb_seq_begin() loads the number
 * (acquire: the copy that follows cannot be read before it), the reader
 * copies the record, and sfb_seq_changed() tells whether the copy is
 * whole: after an acquire fence, the number must still be the even value
 * it began with.  A copy taken while a writer held the record, or across
 * a write, is thrown away.  The copy is a racy read of plain memory; it is
 * used only once the number proves no writer touched it meanwhile.
 *
 * Users: the object cache's slots (objcache.c), the CFI row cache's
 * entries (cfi_cache.c) and the row memo's entries (rowmemo.h), whose
 * readers load the number together with the epoch beside it, as one
 * word, and check both at once (sfb_memo_try_head()).  docs/DESIGN.md
 * lists the library's other publish-once patterns. */
#ifndef SFB_SEQLOCK_H
#define SFB_SEQLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef _Atomic uint32_t sfb_seq;

static inline uint32_t sfb_seq_begin(const sfb_seq *seq)
{
	return atomic_load_explicit((sfb_seq *)seq, memory_order_acquire);
}

/* A record a reader may copy: written, and no writer inside. */
static inline bool sfb_seq_stable(uint32_t begin)
{
	return begin != 0 && !(begin & 1);
}

/* Zero if the copy taken since sfb_seq_begin() returned begin is whole
 * (begin even and unchanged), else non-zero: a value, not a branch, so
 * that callers can fold it with their own checks into one test.  An odd
 * begin never compares equal (the number never goes back). */
static inline uint32_t sfb_seq_changed(const sfb_seq *seq, uint32_t begin)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit((sfb_seq *)seq, memory_order_relaxed) ^ (begin & ~1u);
}

/* Claim a record whose number was seen as seen: false if it is odd or
 * has changed since (another writer). */
static inline bool sfb_seq_claim(sfb_seq *seq, uint32_t seen)
{
	return !(seen & 1) &&
	       atomic_compare_exchange_strong_explicit(seq, &seen, seen | 1, memory_order_acquire,
						       memory_order_relaxed);
}

/* Claim a record of a table whose pages are touched only when written
 * (the row memo, the CFI row cache), page_written telling whether the
 * record's page has been: on a page never written the record is taken as
 * never written without reading it, so that the compare-and-swap is the
 * page's first touch (reading first would fault the zero page in, and
 * the write fault again to copy it).  The writer marks the page written
 * after publishing; a reader that sees the mark late misses one record,
 * never reads a wrong one. */
static inline bool sfb_seq_claim_fresh(sfb_seq *seq, bool page_written)
{
	uint32_t seen = page_written ? atomic_load_explicit(seq, memory_order_relaxed) : 0;
	return sfb_seq_claim(seq, seen);
}

/* Publish a record claimed by this writer. */
static inline void sfb_seq_publish(sfb_seq *seq)
{
	uint32_t odd = atomic_load_explicit(seq, memory_order_relaxed);
	atomic_store_explicit(seq, odd + 1, memory_order_release);
}

#endif
