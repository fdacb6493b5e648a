/* Rows of .eh_frame kept by PC range; see cfi_cache.h. */
#include "rows/cfi_cache.h"

#include <stdatomic.h>
#include <stddef.h>

/* Page-aligned: a bit of pages_written must cover one page. */
static struct sfb_cfi_cache_entry table[SFB_CFI_CACHE_ENTRIES] __attribute__((aligned(4096)));
/* The table's pages that have been written, a bit for each 4 KiB. */
static _Atomic uint64_t pages_written;

_Static_assert(sizeof(struct sfb_cfi_cache_entry) == 192, "three cache lines an entry");
_Static_assert(sizeof table <= 64 * 4096, "a bit of pages_written per page");
_Static_assert((SFB_CFI_CACHE_ENTRIES & (SFB_CFI_CACHE_ENTRIES - 1)) == 0, "a power of two");

static unsigned shift_of(unsigned level)
{
	return SFB_CFI_CACHE_SHIFT0 + SFB_CFI_CACHE_STEP * level;
}

struct sfb_cfi_cache_entry *sfb_cfi_cache_slot(uintptr_t pc, unsigned level)
{
	uint64_t block = ((uint64_t)pc >> shift_of(level)) << 2 | level;
	uint64_t h = block * 0x9e3779b97f4a7c15ull;
	return &table[h >> 32 & (SFB_CFI_CACHE_ENTRIES - 1)];
}

static uint64_t page_bit(const struct sfb_cfi_cache_entry *e)
{
	return (uint64_t)1 << (((uintptr_t)e - (uintptr_t)table) / 4096);
}

unsigned sfb_cfi_cache_level(uintptr_t pc, uint64_t lo, uint64_t hi)
{
	for (unsigned level = SFB_CFI_CACHE_LEVELS - 1; level > 0; level--) {
		uint64_t size = (uint64_t)1 << shift_of(level);
		uint64_t start = (uint64_t)pc & ~(size - 1);
		if (start >= lo && hi - start >= size)
			return level;
	}
	return 0;
}

/* Seqlock read of e's row if e holds one for pc in the object of this
 * epoch.  A copy torn by a writer is thrown away by the final check; a
 * torn count is bounded before it is used. */
static bool try_entry(const struct sfb_cfi_cache_entry *e, uintptr_t pc, uint32_t epoch,
		      struct sfb_row *row)
{
	uint32_t seq = sfb_seq_begin(&e->seq);
	if (!sfb_seq_stable(seq) || e->epoch != epoch || (uint64_t)pc - e->lo >= e->len)
		return false;
	row->func_start = e->func_start;
	row->func_size = e->func_size;
	row->pc_lo = e->lo;
	row->pc_hi = e->lo + e->len;
	row->cfa = e->cfa;
	row->ra = e->ra;
	row->fp = e->fp;
	row->flags = e->flags;
	unsigned n = e->nregs < SFB_CFI_CACHE_REGS ? e->nregs : SFB_CFI_CACHE_REGS;
	row->nregs = (uint8_t)n;
	row->expr = e->expr;
	row->expr_len = e->expr_len;
	for (unsigned i = 0; i < n; i++)
		row->regs[i] = e->regs[i];
	return sfb_seq_changed(&e->seq, seq) == 0;
}

bool sfb_cfi_cache_get(uintptr_t pc, uint32_t epoch, struct sfb_row *row)
{
	uint64_t pages = atomic_load_explicit(&pages_written, memory_order_relaxed);
	const struct sfb_cfi_cache_entry *e[SFB_CFI_CACHE_LEVELS];
	/* The blocks' entries fetched together: a sample finds them cold. */
	for (unsigned l = 0; l < SFB_CFI_CACHE_LEVELS; l++) {
		e[l] = sfb_cfi_cache_slot(pc, l);
		if (pages & page_bit(e[l]))
			__builtin_prefetch(e[l]);
	}
	for (unsigned l = SFB_CFI_CACHE_LEVELS; l-- > 0;)
		if ((pages & page_bit(e[l])) && try_entry(e[l], pc, epoch, row))
			return true;
	return false;
}

/* Write row, for the PCs of [lo, hi), into the entry for the block at
 * level that starts at start; skipped if another writer holds it. */
static void write_entry(uintptr_t start, unsigned level, uint32_t epoch, const struct sfb_row *row,
			uint64_t lo, uint64_t hi)
{
	struct sfb_cfi_cache_entry *e = sfb_cfi_cache_slot(start, level);
	/* Its page first touched by the claim (seqlock.h). */
	bool written = atomic_load_explicit(&pages_written, memory_order_relaxed) & page_bit(e);
	if (!sfb_seq_claim_fresh(&e->seq, written))
		return;
	e->epoch = epoch;
	e->lo = lo;
	e->len = (uint32_t)(hi - lo);
	e->func_start = row->func_start;
	e->func_size = row->func_size;
	e->cfa = row->cfa;
	e->ra = row->ra;
	e->fp = row->fp;
	e->flags = row->flags;
	e->nregs = row->nregs;
	e->expr = row->expr;
	e->expr_len = row->expr_len;
	for (unsigned i = 0; i < row->nregs; i++)
		e->regs[i] = row->regs[i];
	sfb_seq_publish(&e->seq);
	if (!written)
		atomic_fetch_or_explicit(&pages_written, page_bit(e), memory_order_relaxed);
}

void sfb_cfi_cache_prefault(void)
{
	uint64_t all = 0;
	for (size_t page = 0; page * 4096 < sizeof table; page++) {
		/* The first entry starting on the page: its sequence word is
		 * there. */
		size_t i = (page * 4096 + sizeof table[0] - 1) / sizeof table[0];
		if (i >= SFB_CFI_CACHE_ENTRIES)
			break;
		atomic_fetch_add_explicit(&table[i].seq, 0, memory_order_relaxed);
		all |= page_bit(&table[i]);
	}
	atomic_fetch_or_explicit(&pages_written, all, memory_order_relaxed);
}

/* The largest level whose block starting at pos lies in [pos, hi)
 * (going up) or whose block ending at pos lies in [lo, pos) (going
 * down); 0 if none, for the partial block at a range's end. */
static unsigned level_at(uint64_t pos, uint64_t lo, uint64_t hi, bool up)
{
	for (unsigned level = SFB_CFI_CACHE_LEVELS - 1; level > 0; level--) {
		uint64_t size = (uint64_t)1 << shift_of(level);
		if (pos % size == 0 && (up ? hi - pos >= size : pos - lo >= size))
			return level;
	}
	return 0;
}

void sfb_cfi_cache_put(uintptr_t pc, uint32_t epoch, const struct sfb_row *row, uintptr_t obj_lo,
		       uintptr_t obj_hi)
{
	uint64_t lo = row->pc_lo > obj_lo ? row->pc_lo : obj_lo;
	uint64_t hi = row->pc_hi < obj_hi ? row->pc_hi : obj_hi;
	if ((row->flags & (SFB_ROW_CFI | SFB_ROW_MEMO)) != SFB_ROW_CFI || epoch == 0 ||
	    row->nregs > SFB_CFI_CACHE_REGS || pc < lo || pc >= hi || hi - lo > UINT32_MAX)
		return;
	/* The PC's own block first, then the range's blocks on either side
	 * of it, largest first, SFB_CFI_CACHE_COVER at most each way: later
	 * PCs of the same range, in other blocks, find it too. */
	unsigned level = sfb_cfi_cache_level(pc, lo, hi);
	uint64_t size = (uint64_t)1 << shift_of(level);
	uint64_t start = (uint64_t)pc & ~(size - 1);
	write_entry((uintptr_t)start, level, epoch, row, lo, hi);
	uint64_t pos = start + size;
	for (unsigned n = 0; n < SFB_CFI_CACHE_COVER && pos < hi; n++) {
		size = (uint64_t)1 << shift_of(level = level_at(pos, lo, hi, true));
		write_entry((uintptr_t)pos, level, epoch, row, lo, hi);
		pos += size;
	}
	pos = start;
	for (unsigned n = 0; n < SFB_CFI_CACHE_COVER && pos > lo; n++) {
		size = (uint64_t)1 << shift_of(level = level_at(pos, lo, hi, false));
		pos -= size;
		write_entry((uintptr_t)pos, level, epoch, row, lo, hi);
	}
}
