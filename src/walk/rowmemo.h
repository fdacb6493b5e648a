/* A memo of rows by return address, shared by all threads; what is
 * memoised and why: docs/DESIGN.md, "Row memo".  Rules:
 * - Each entry is a seqlock (seqlock.h), keyed by the return address and
 *   the epoch of its object's description, so a row cannot outlive the
 *   description it came from.
 * - The walker finds every entry by hash (sfb_memo_probe() in its loop),
 *   never by following pointers.  An entry's hint field (the entry the
 *   walk needed next, last time) is no longer read or updated by the
 *   walker: hints missed at most frames of stacks that vary, and wrote a
 *   shared line on every miss (docs/SPEED.md).  It stays, set to the entry
 *   itself, a relaxed atomic outside the seqlock whose value can never
 *   matter (t_memo plants wrong ones).
 * No allocation: SFB_MEMO_ENTRIES entries of 32 bytes, static. */
#ifndef SFB_ROWMEMO_H
#define SFB_ROWMEMO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "arch/arch.h"
#include "base/seqlock.h"
#include "rows/sframe_decode.h"

#define SFB_MEMO_ENTRIES 4096

/* A row of the common shape, compiled.  Slots are in words relative to
 * the CFA, all below it.  The CFA's base register is in the low bit of
 * cfa_word, so that one load gives both (offsets are even). */
struct sfb_memo_row {
	int32_t cfa_word;   /* CFA offset | 1 if the base is FP (else SP) */
	int8_t ra_slot;     /* RA at CFA + 8 * ra_slot (SFB_RA_SLOT where fixed) */
	int8_t fp_slot;     /* FP at CFA + 8 * fp_slot; 0: FP unchanged */
	uint16_t flags;     /* SFB_MEMO_CFI, SFB_MEMO_PAC */
};

#define SFB_MEMO_CFI 1 /* the row came from .eh_frame (reported per frame) */
#define SFB_MEMO_PAC 2 /* the RA is signed: strip it (SFB_ROW_MANGLED_RA) */

/* An FP-based row is memoised only if its slots lie in the two words
 * below the CFA (the frame record that frame-pointer code keeps on every
 * architecture here), so that the walker checks them against SP with a
 * constant, not one computed or loaded for each frame (docs/SPEED.md).
 * A row with deeper slots is left to the general path. */
#define SFB_MEMO_FP_LOWEST_SLOT (-2)

struct sfb_memo_entry {
	/* The sequence number (seqlock.h) and the epoch, side by side, so
	 * that a reader's second look at the number checks the epoch in the
	 * same load (sfb_memo_try()).  Writers claim and publish seq alone
	 * and store epoch like the rest of the entry. */
	union {
		struct {
			sfb_seq seq;
			uint32_t epoch;
		};
		_Atomic uint64_t head;
	};
	uintptr_t key;
	struct sfb_memo_row row;
	struct sfb_memo_entry *_Atomic hint; /* see above */
};

/* The halves of head: seq first in memory, on either byte order. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SFB_MEMO_SEQ_SHIFT 0
#define SFB_MEMO_EPOCH_SHIFT 32
#else
#define SFB_MEMO_SEQ_SHIFT 32
#define SFB_MEMO_EPOCH_SHIFT 0
#endif

/* Hidden (the library's own, never exported): addressed directly, not
 * through the GOT, in the shared library too. */
extern struct sfb_memo_entry sfb_memo[SFB_MEMO_ENTRIES] __attribute__((visibility("hidden")));

/* The memo's pages that have been written, a bit for each 4 KiB.  An
 * entry on a page never written holds nothing, and reading it would cost
 * a page fault (the zero page mapped) only for the first write to cost
 * another (the page copied).  So lookups skip such pages and writers
 * write them first.  A bit seen late
 * costs one miss of an entry just written, never a wrong row. */
extern _Atomic uint32_t sfb_memo_pages_written __attribute__((visibility("hidden")));

/* The page e lies on: its bit's number. */
static inline __attribute__((always_inline)) unsigned
sfb_memo_page_of(const struct sfb_memo_entry *e)
{
	return (unsigned)(((uintptr_t)e - (uintptr_t)sfb_memo) / 4096);
}

static inline uint32_t sfb_memo_page_bit(const struct sfb_memo_entry *e)
{
	return 1u << sfb_memo_page_of(e);
}

/* Whether e's page is among pages, a snapshot of sfb_memo_pages_written
 * that a caller read once for many lookups: a bit missing costs a miss,
 * never a wrong row. */
static inline __attribute__((always_inline)) bool
sfb_memo_page_in(const struct sfb_memo_entry *e, uint32_t pages)
{
	return pages >> sfb_memo_page_of(e) & 1;
}

static inline bool sfb_memo_page_written(const struct sfb_memo_entry *e)
{
	return sfb_memo_page_in(e, atomic_load_explicit(&sfb_memo_pages_written,
							 memory_order_relaxed));
}

/* Two-way: a key may sit in either entry of its pair (one cache line), so
 * that two hot return addresses whose hashes collide do not evict each
 * other on every walk.  A multiplicative hash: the low bits alone (one
 * AND on the walker's chain from a return address to its entry, not a
 * multiply) gave the same code loaded twice, or two builds of it, the
 * same pairs, and were no faster (docs/SPEED.md). */
#define SFB_MEMO_PAIRS (SFB_MEMO_ENTRIES / 2)
static inline unsigned sfb_memo_pair_of_key(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 53) % SFB_MEMO_PAIRS;
}

static inline struct sfb_memo_entry *sfb_memo_pair(uintptr_t key)
{
	return &sfb_memo[2 * sfb_memo_pair_of_key(key)];
}

/* Seqlock read of e's row, if e holds key in the object of this epoch.
 * An entry never written has epoch 0, which no object has.  The head is
 * read twice, as seqlock.h reads a sequence number, and the second read
 * must hold the sequence number the first one saw, even (seqlock.h's
 * sfb_seq_changed()), beside the epoch asked for: one load and one
 * compare for both, and the epoch read there is the one of the copy,
 * since no writer came between. */
static inline bool sfb_memo_try_head(const struct sfb_memo_entry *e, uintptr_t key,
				     uint64_t head_epoch, struct sfb_memo_row *row)
{
	uint64_t begin = atomic_load_explicit((_Atomic uint64_t *)&e->head, memory_order_acquire);
	uintptr_t other_key = e->key ^ key;
	*row = e->row;
	atomic_thread_fence(memory_order_acquire);
	uint64_t now = atomic_load_explicit((_Atomic uint64_t *)&e->head, memory_order_relaxed);
	uint64_t want = (begin & (uint64_t)0xfffffffeu << SFB_MEMO_SEQ_SHIFT) | head_epoch;
	/* One branch for all the conditions: the walker's inner loop is
	 * limited by branches as much as by instructions.  A row read while
	 * the entry changed is discarded unused. */
	return (other_key | (now ^ want)) == 0;
}

/* An epoch as it sits in an entry's head: what sfb_memo_try_head() and
 * sfb_memo_probe() take, computed once by a caller that probes many
 * entries under one epoch. */
#define SFB_MEMO_HEAD_EPOCH(epoch) ((uint64_t)(uint32_t)(epoch) << SFB_MEMO_EPOCH_SHIFT)

static inline bool sfb_memo_try(const struct sfb_memo_entry *e, uintptr_t key,
				uint32_t epoch, struct sfb_memo_row *row)
{
	return sfb_memo_try_head(e, key, SFB_MEMO_HEAD_EPOCH(epoch), row);
}

/* Rows are memoised for exact PCs too (the interrupted instruction of a
 * signal): a profiler's samples keep landing on the same hot instructions,
 * and by the time the next sample comes, the lines of .sframe a lookup
 * reads have gone cold.  The key is the PC with the top bit set, which no
 * user-space address has, so an exact PC and the same address taken as a
 * return address (whose row is the call's, at pc - 1) never share an
 * entry. */
#define SFB_MEMO_EXACT(pc) ((uintptr_t)(pc) | (uintptr_t)1 << 63)

/* The entry holding key in the object of this epoch, and its row; NULL if
 * none. */
static inline struct sfb_memo_entry *sfb_memo_get(uintptr_t key, uint32_t epoch,
						  struct sfb_memo_row *row)
{
	struct sfb_memo_entry *e = sfb_memo_pair(key);
	if (!sfb_memo_page_written(e))
		return NULL;
	if (sfb_memo_try(e, key, epoch, row))
		return e;
	return sfb_memo_try(e + 1, key, epoch, row) ? e + 1 : NULL;
}

/* sfb_memo_get() for the walker's loop, inline: the epoch in head form
 * (SFB_MEMO_HEAD_EPOCH()), the pages written as the caller read them
 * (sfb_memo_page_in()), way 0 first, where the last key written to the
 * pair sits. */
static inline __attribute__((always_inline)) const struct sfb_memo_entry *
sfb_memo_probe(uintptr_t key, uint64_t head_epoch, uint32_t pages, struct sfb_memo_row *row)
{
	const struct sfb_memo_entry *e = sfb_memo_pair(key);
	if (!sfb_memo_page_in(e, pages))
		return NULL;
	if (__builtin_expect(sfb_memo_try_head(e, key, head_epoch, row), 1))
		return e;
	return sfb_memo_try_head(e + 1, key, head_epoch, row) ? e + 1 : NULL;
}

/* An exact PC's entry is kept under its epoch with bit 30 set, which no
 * object's epoch has (SFB_MEMO_KEPT_EPOCH is the highest), besides its
 * key's top bit: the fast loop probes return addresses loaded from the
 * stack by key and the object's epoch, and a corrupt stack word that
 * equals an exact key must not find that entry's row there. */
#define SFB_MEMO_EXACT_EPOCH(epoch) ((uint32_t)(epoch) | 0x40000000u)

/* The entry holding an exact PC's row (key: SFB_MEMO_EXACT(pc)) in the
 * object of epoch, and the row; NULL if none.  Only the second entry of
 * its pair can hold one (sfb_memo_put_exact()). */
static inline struct sfb_memo_entry *sfb_memo_get_exact(uintptr_t key, uint32_t epoch,
							struct sfb_memo_row *row)
{
	struct sfb_memo_entry *e = sfb_memo_pair(key) + 1;
	return sfb_memo_page_written(e) &&
			       sfb_memo_try(e, key, SFB_MEMO_EXACT_EPOCH(epoch), row)
		       ? e
		       : NULL;
}

static inline struct sfb_memo_entry *sfb_memo_hint(const struct sfb_memo_entry *e)
{
	return atomic_load_explicit(&((struct sfb_memo_entry *)e)->hint, memory_order_relaxed);
}

static inline void sfb_memo_set_hint(struct sfb_memo_entry *e, struct sfb_memo_entry *hint)
{
	atomic_store_explicit(&e->hint, hint, memory_order_relaxed);
}

/* The pair an entry belongs to (the recall's unit). */
static inline uint16_t sfb_memo_pair_of_entry(const struct sfb_memo_entry *e)
{
	return (uint16_t)(((uintptr_t)e - (uintptr_t)sfb_memo) / (2 * sizeof *e));
}

/* What this thread's last sample walked through, fetched ahead in its next.
 *
 * A sample's rows are cold: between two samples the program evicts the
 * memo entries a walk needs, and each frame's entry is known only once
 * the frame below it has been applied, so a walk through distinct return
 * addresses waits for one cache miss after another.  But a thread's
 * consecutive samples share most of their stack: the entries the last
 * one used are fetched all at once before the walk starts, and those
 * still needed arrive in parallel.  Hints only: a stale or torn record
 * (a signal interrupting a walk) costs a useless prefetch, never a wrong
 * frame.  Initial-exec TLS, like memread.c's: no allocation. */
#define SFB_MEMO_RECALL 31

struct sfb_memo_recall {
	uint16_t n;
	uint16_t pair[SFB_MEMO_RECALL]; /* entry index / 2 */
};

extern __thread struct sfb_memo_recall sfb_memo_recalled
	__attribute__((tls_model("initial-exec")));

/* Always inlined: gcc finds a function of prefetches alone "pure" and
 * deletes its calls. */
static inline __attribute__((always_inline)) void sfb_memo_fetch_recalled(void)
{
	const struct sfb_memo_recall *r = &sfb_memo_recalled;
	unsigned n = r->n < SFB_MEMO_RECALL ? r->n : SFB_MEMO_RECALL;
	for (unsigned i = 0; i < n; i++)
		__builtin_prefetch(&sfb_memo[2 * (r->pair[i] % (SFB_MEMO_ENTRIES / 2u))]);
}

/* Keep a sample's pairs (the walker's trail: its frames after the first,
 * in order, a repeated frame once, at most SFB_MEMO_RECALL) for this
 * thread's next sample.  The whole array is copied, a fixed size that
 * compiles to a few moves: entries from n on are never read. */
static inline __attribute__((always_inline)) void
sfb_memo_recall_keep(const uint16_t pairs[SFB_MEMO_RECALL], unsigned n)
{
	memcpy(sfb_memo_recalled.pair, pairs, sizeof sfb_memo_recalled.pair);
	sfb_memo_recalled.n = (uint16_t)n;
}

/* The fast path's safety condition: must the walker refuse to apply a
 * memoised row to a frame whose stack pointer is sp, inside a stack window
 * whose top is win_hi, given the CFA the row computes from SP
 * (SFB_MEMO_SP_CFA_BAD) or from FP (SFB_MEMO_FP_CFA_BAD)?  Two
 * predicates, one per base, so that the walker's loop keeps one branch on
 * the base; macros, because gcc compiled the same tests written as inline
 * functions to register spills in that loop.
 *
 * The walker's general step checks that the CFA lies above SP, aligned
 * and not absurdly far, and that every slot it reads lies at or above SP
 * and is readable (walk.c, apply_row()).  For a memoised row the same
 * follows from these checks, given that sp is aligned and inside the
 * window [lo, win_hi), which holds when the fast path starts and then by
 * induction (each step's new SP is a CFA proved here):
 * - SP-based row: sfb_memo_row_of() accepted only an aligned offset that
 *   reaches above the lowest slot, so the CFA is aligned and every slot
 *   lies at or above SP; only the top needs a check: CFA <= win_hi.  (A
 *   fast run starts only where win_hi - sp < SFB_MEMO_WINDOW_MAX, and SP
 *   only rises: the outermost row always fails this check.)
 * - FP-based row: FP is any value, so the CFA is checked for alignment,
 *   for its lowest possible slot (SFB_MEMO_FP_LOWEST_SLOT words below it)
 *   lying at or above SP (signed: a garbage FP below 1 KiB must not wrap
 *   round to the top), and against win_hi.
 * Slots lie below the CFA (sfb_memo_row_of()), so every slot is in the
 * window, which memread.h proved readable.  Any doubt counts as bad: the
 * general path then redoes the frame from scratch and gives the reason. */
#define SFB_MEMO_SP_CFA_BAD(cfa, win_hi) ((cfa) > (win_hi))
#define SFB_MEMO_FP_CFA_BAD(cfa, sp, win_hi)                                                  \
	((cfa) % SFB_CFA_ALIGN || (intptr_t)((cfa) + 8 * SFB_MEMO_FP_LOWEST_SLOT - (sp)) < 0 || \
	 (cfa) > (win_hi))

/* SFB_MEMO_FP_CFA_BAD() for a frame record's row (CFA = FP +
 * SFB_FP_CFA_OFFSET, slots from FP up), tested on FP itself, with
 * record_hi = win_hi - SFB_FP_CFA_OFFSET computed once for the run: FP
 * aligned, at or above SP (FP is the record's lowest slot) and at most
 * record_hi.  Unsigned, so that an FP near the top of the address space
 * fails the last test rather than wrapping the CFA round to a small
 * value; given SP inside the window, the same frames pass as with the
 * CFA's test. */
#define SFB_MEMO_RECORD_BAD(fp, sp, record_hi) \
	((fp) % SFB_CFA_ALIGN || (fp) < (sp) || (fp) > (record_hi))

/* Compile row into *out if it has the common shape. */
bool sfb_memo_row_of(const struct sfb_row *row, int sp_reg, int fp_reg,
		     struct sfb_memo_row *out);

/* The row that row_of() compiled, as the decoder would give it (without
 * its PC range and flags, which the walker does not use for such a row). */
void sfb_memo_row_expand(const struct sfb_memo_row *m, int sp_reg, int fp_reg,
			 struct sfb_row *row);

/* Remember the row of key (a return address, verified to follow a call
 * instruction; the row is the one of key - 1, the call), or the outermost
 * row of where a fiber's function returns to, pushed as its return
 * address (walk.c, is_fiber_end()). */
void sfb_memo_put(uintptr_t key, uint32_t epoch, const struct sfb_memo_row *row);

/* Remember the row of an exact PC (key: SFB_MEMO_EXACT(pc)) in the object
 * of epoch (kept under SFB_MEMO_EXACT_EPOCH(epoch)).  It goes to the second
 * entry of its pair only: samples spread over many instructions, and must
 * not push out the return addresses that every walk needs. */
void sfb_memo_put_exact(uintptr_t key, uint32_t epoch, const struct sfb_memo_row *row);

/* The memo epoch of every object never unloaded (sfb_object_is_kept(): the
 * program, libc, ld.so, objects loaded at start-up, pinned ones), in place
 * of its description's.  Such an object's rows never change and no other
 * object can ever take its addresses, so an entry with this epoch is right
 * for its key whichever description wrote it, and a walk crossing between
 * such objects stays on the fast path.  Even, like description epochs
 * (objcache.c: a walk without .eh_frame adds 1), and above any they reach
 * before they would collide with SFB_MEMO_EXACT_EPOCH's bit 30. */
#define SFB_MEMO_KEPT_EPOCH 0x3ffffffeu

/* Return addresses whose row marks the outermost frame (_start, clone3:
 * RA undefined) are memoised too, so that a walk to the natural end does
 * not look the last row up every time: under their object's epoch like
 * any row, as an SP-based row whose CFA offset (SFB_MEMO_OUTERMOST_CFA)
 * is further than the fast path lets a stack window reach above SP
 * (SFB_MEMO_WINDOW_MAX): wherever a lookup finds it, SFB_MEMO_SP_CFA_BAD()
 * turns it away, and the walker then asks whether it was this row
 * (sfb_memo_is_outermost()).  sfb_memo_row_of() compiles no real row with
 * an offset this large. */
#define SFB_MEMO_OUTERMOST_CFA 0x7ffffff0
#define SFB_MEMO_WINDOW_MAX ((uintptr_t)SFB_MEMO_OUTERMOST_CFA)
#define SFB_MEMO_OUTERMOST_ROW ((struct sfb_memo_row){ .cfa_word = SFB_MEMO_OUTERMOST_CFA })

static inline bool sfb_memo_is_outermost(const struct sfb_memo_row *row)
{
	return row->cfa_word == SFB_MEMO_OUTERMOST_CFA;
}

#endif
