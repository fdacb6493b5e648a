/* Rows of .eh_frame kept by PC range, for PCs that are not return
 * addresses.
 *
 * A CFI row holds over a range of PCs, [pc_lo, pc_hi): from the location
 * the interpreter reached to the next one an instruction advances to
 * (cfi.h; sfb_cfi_lookup() narrows it to the search table's entry, so
 * that any PC in it finds the same FDE).  A profiler's sample lands on an
 * arbitrary instruction, rarely one seen before, so its exact PC is seldom
 * memoised (rowmemo.h) and each sample paid an FDE search and the CFI
 * interpretation from the FDE's start to the PC: about 4000 instructions
 * for python's eval loop, and more cache misses.  Here a row, once
 * interpreted, serves every PC of its range.
 *
 * Finding a range by a PC: the cache is hashed by aligned blocks of
 * 2^6, 2^9, 2^12 and 2^15 bytes (levels).  A row is stored at the largest
 * level whose block around the PC it was looked up for lies wholly inside
 * its range (else at the smallest), so that any later PC of that block
 * finds it; a lookup probes the PC's block at every level.  The blocks of
 * the range on either side are stored too, the largest that fit,
 * SFB_CFI_CACHE_COVER each way: a function body's range is then found
 * from any of its PCs after one interpretation, a long one's (python's
 * eval loop: 42 KiB) after a few.
 *
 * Rules:
 * - An entry is keyed by the memo epoch of the object's description
 *   (objcache.h, rowmemo.h), unique per description, so a row cannot
 *   outlive the description it came from: after dlclose() no walk
 *   confirms that description again, and no lookup asks for its epoch.
 *   Epoch 0 (an entry never written) is no object's.
 * - Only rows whose source serves every PC of the range: the caller puts
 *   rows of objects whose rows come from one .eh_frame search table alone
 *   (no SFrame section before it, no other index after it, no registered
 *   code), and only CFI rows (SFB_ROW_CFI) with at most
 *   SFB_CFI_CACHE_REGS saved-register rules.
 * - The whole row is kept, the callee-saved registers' rules included: a
 *   row from here is what sfb_cfi_lookup() would give, field by field
 *   (t_cfi_cache checks it), but for its range, cut to its object's
 *   addresses; not a memoised row of the common shape.
 * - Entries are seqlocks (seqlock.h): writers never wait (one skips an
 *   entry another holds), readers never write.  Fixed static storage, no
 *   allocation, a fixed number of probes: async-signal-safe.
 * - Pages of the table never written are not read (as the memo's, and
 *   for the same reason: rowmemo.h). */
#ifndef SFB_CFI_CACHE_H
#define SFB_CFI_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include "base/seqlock.h"
#include "rows/row.h"

#define SFB_CFI_CACHE_ENTRIES 1024 /* 192 bytes each: 192 KiB */
#define SFB_CFI_CACHE_REGS 9      /* saved-register rules a kept row may have */
#define SFB_CFI_CACHE_LEVELS 4
#define SFB_CFI_CACHE_SHIFT0 6    /* the smallest block: 64 bytes */
#define SFB_CFI_CACHE_STEP 3      /* each level's blocks 8 times the last's */
#define SFB_CFI_CACHE_COVER 4     /* blocks stored each way around the PC's */

struct sfb_cfi_cache_entry {
	sfb_seq seq;
	uint32_t epoch;
	uint64_t lo;            /* the row holds for [lo, lo + len) */
	uint32_t len;
	uint32_t func_size;
	uint64_t func_start;
	struct sfb_loc cfa, ra, fp;
	uint16_t flags;
	uint8_t nregs;
	const uint8_t *expr;
	uint64_t expr_len;
	struct sfb_reg_rule regs[SFB_CFI_CACHE_REGS];
} __attribute__((aligned(64)));

/* The entry that a PC's block at a level hashes to (for tests). */
struct sfb_cfi_cache_entry *sfb_cfi_cache_slot(uintptr_t pc, unsigned level);

/* The level a row whose range is [lo, hi) is stored at when looked up
 * for pc (for tests). */
unsigned sfb_cfi_cache_level(uintptr_t pc, uint64_t lo, uint64_t hi);

/* The row kept for pc (a PC as the row source is asked for it: exact, or
 * a return address minus one) in the object of this epoch, into *row;
 * false if none. */
/* Touch every page of the table from normal context (the warm-up), so
 * that a walk's first rows cost no page fault: up to 2 * SFB_CFI_CACHE_COVER
 * + 1 entries a row, each possibly on a page of its own.  An atomic
 * read-modify-write that adds nothing: safe beside walks writing. */
void sfb_cfi_cache_prefault(void);

bool sfb_cfi_cache_get(uintptr_t pc, uint32_t epoch, struct sfb_row *row);

/* Keep row, just looked up for pc in the object of this epoch, whose
 * addresses are [lo, hi), if it is a CFI row that fits (above); any other
 * is ignored.  The row's range is cut to the object's addresses: objects
 * never unloaded share one epoch, and an FDE whose range runs past its
 * object's end must not give its row to a PC of the next object. */
void sfb_cfi_cache_put(uintptr_t pc, uint32_t epoch, const struct sfb_row *row, uintptr_t lo,
		       uintptr_t hi);

#endif
