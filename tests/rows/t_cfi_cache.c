/* The cache of CFI rows by PC range (src/rows/cfi_cache.h), against
 * sfb_cfi_lookup() itself on libc's .eh_frame:
 * - a row kept for one PC is found from every PC of its range that the
 *   stored blocks cover (the PC's own block always, the whole range when
 *   it spans few blocks), field by field what sfb_cfi_lookup() gives
 *   there, and never from a PC outside it;
 * - keyed by epoch: the same addresses under another epoch (another
 *   object, or the same one after dlclose() gave it a new description)
 *   find nothing, and each epoch finds its own row;
 * - a row's range is cut to its object's addresses;
 * - what is refused: rows not from CFI, memoised rows, epoch 0, a PC
 *   outside the row or its object, more saved-register rules than SFB_CFI_CACHE_REGS
 *   (exactly that many are kept), ranges of 2^32 bytes or more (2^32 - 1
 *   are kept);
 * - the levels at their bounds;
 * - sfb_cfi_lookup()'s range is where it gives the same row: checked at
 *   both ends and just outside, for every FDE of libc's table;
 * - whole walks through an object with .eh_frame alone, dlopen()ed,
 *   dlclose()d and replaced by another of the same code but a larger
 *   frame (cfi_cache_lib.c), usually at the same address: each walk's
 *   first frame has its own object's CFA, never the unloaded one's, both
 *   from the PC whose row was interpreted and kept and from another PC
 *   of the same row, never seen, which a sample's walk takes from here
 *   without the general path (walk.c, memo_find_exact()). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "rows/cfi.h"
#include "rows/cfi_cache.h"

static struct sfb_cfi_section libc_cfi;

/* Where find_cfi() looks, and what it loads. */
struct find {
	const char *name;
	struct sfb_cfi_section *cfi;
};

/* dl_iterate_phdr()'s callback: the .eh_frame search table of the
 * object whose name contains f->name, into *f->cfi. */
static int find_cfi(struct dl_phdr_info *info, size_t size, void *arg)
{
	const struct find *f = arg;
	(void)size;
	if (!strstr(info->dlpi_name, f->name))
		return 0;
	const ElfW(Phdr) *hdr = NULL;
	uint64_t limit = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = &info->dlpi_phdr[i];
	if (!hdr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && hdr->p_vaddr >= p->p_vaddr &&
		    hdr->p_vaddr < p->p_vaddr + p->p_memsz)
			limit = info->dlpi_addr + p->p_vaddr + p->p_memsz;
	}
	uint64_t h = info->dlpi_addr + hdr->p_vaddr;
	return sfb_cfi_load(f->cfi, (const void *)(uintptr_t)h, hdr->p_memsz, h, limit, 0) ==
	       SFB_CFI_OK;
}

/* Table entry i's initial location (as cfi.c reads it). */
static uint64_t entry_pc(uint32_t i)
{
	int32_t a;
	memcpy(&a, (const uint8_t *)libc_cfi.hdr.p + libc_cfi.table_off + 8 * (uint64_t)i, 4);
	return libc_cfi.hdr_addr + (uint64_t)(int64_t)a;
}

static bool loc_eq(const struct sfb_loc *a, const struct sfb_loc *b)
{
	return a->kind == b->kind && a->deref == b->deref && a->reg == b->reg && a->off == b->off;
}

/* The fields a walker reads, equal. */
static bool row_eq(const struct sfb_row *a, const struct sfb_row *b)
{
	if (a->func_start != b->func_start || a->func_size != b->func_size ||
	    a->pc_lo != b->pc_lo || a->pc_hi != b->pc_hi || !loc_eq(&a->cfa, &b->cfa) ||
	    !loc_eq(&a->ra, &b->ra) || !loc_eq(&a->fp, &b->fp) || a->flags != b->flags ||
	    a->nregs != b->nregs || a->expr != b->expr || a->expr_len != b->expr_len)
		return false;
	for (unsigned i = 0; i < a->nregs; i++)
		if (a->regs[i].reg != b->regs[i].reg || !loc_eq(&a->regs[i].loc, &b->regs[i].loc))
			return false;
	return true;
}

static unsigned blocks_of(uint64_t lo, uint64_t hi)
{
	return (unsigned)(((hi + 63) & ~(uint64_t)63) - (lo & ~(uint64_t)63)) / 64;
}

/* What the walks from the library's two contexts found for its frame. */
static struct {
	uintptr_t pc, cfa, want_cfa;
	int n;
	uint8_t caller_source;
} seen[2];
static unsigned nseen;

static int walk_here(ucontext_t *uc, void *cfa)
{
	struct sframe_bt_frame f[8];
	struct sframe_bt_status st;
	if (nseen >= 2)
		return 0;
	int n = sframe_backtrace_ex(uc, f, 8, 0, &st);
	seen[nseen].n = n;
	seen[nseen].pc = n > 0 ? f[0].pc : 0;
	seen[nseen].cfa = n > 0 ? f[0].cfa : 0;
	seen[nseen].caller_source = n > 1 ? f[1].source : 0xff;
	seen[nseen].want_cfa = (uintptr_t)cfa;
	nseen++;
	return 0;
}

/* Load cfi_cache_BYTES.so (next to this program), call its function
 * twice, each call walking from its two contexts, unload it; false if it
 * could not be loaded.  *fn: where its function was; *good counts the
 * walks whose first frame has the object's CFA and whose caller was
 * reached through .eh_frame; *one_row counts the loads where the two
 * contexts' PCs lie in one row of the object's .eh_frame (so that a
 * walk from the second finds the row the first one kept: cfi_cache.h),
 * their PCs different. */
static bool walk_in_lib(int bytes, uintptr_t *fn, unsigned *good, unsigned *one_row)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return false;
	self[n] = 0;
	*strrchr(self, '/') = 0;
	snprintf(path, sizeof path, "%s/cfi_cache_%d.so", self, bytes);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	int (*f)(int (*)(ucontext_t *, void *)) =
		(int (*)(int (*)(ucontext_t *, void *)))dlsym(h, "cfi_cache_lib_fn");
	*fn = (uintptr_t)f;
	for (int i = 0; f && i < 2; i++) {
		memset(&seen, 0, sizeof seen);
		nseen = 0;
		f(walk_here);
		for (unsigned k = 0; k < 2; k++)
			*good += seen[k].n >= 2 && seen[k].pc - *fn < 0x100 &&
				 seen[k].cfa == seen[k].want_cfa &&
				 seen[k].caller_source == SFRAME_BT_FROM_EH_FRAME;
	}
	struct sfb_cfi_section cfi;
	struct find where = { path, &cfi };
	struct sfb_row r0, r1;
	*one_row += f && dl_iterate_phdr(find_cfi, &where) == 1 && seen[0].pc != seen[1].pc &&
		    sfb_cfi_lookup(&cfi, seen[0].pc, 6, &r0) == SFB_CFI_OK &&
		    sfb_cfi_lookup(&cfi, seen[1].pc, 6, &r1) == SFB_CFI_OK &&
		    r0.pc_lo == r1.pc_lo && r0.pc_hi == r1.pc_hi;
	dlclose(h);
	return f != NULL;
}

int main(void)
{
	struct find libc = { "libc.so", &libc_cfi };
	CHECK(dl_iterate_phdr(find_cfi, &libc) == 1, "libc's .eh_frame_hdr: %u FDEs",
	      libc_cfi.fde_count);
	if (!libc_cfi.fde_count)
		CHECK_DONE();

	/* 1. sfb_cfi_lookup()'s ranges, every FDE: the row at both ends is
	 * the same, and the PCs just outside give another row or none. */
	unsigned fdes = 0, range_bad = 0, rows = 0;
	for (uint32_t i = 0; i < libc_cfi.fde_count; i++) {
		uint64_t pc = entry_pc(i);
		struct sfb_row r, at;
		while (sfb_cfi_lookup(&libc_cfi, pc, 6, &r) == SFB_CFI_OK) {
			rows++;
			if (r.pc_lo > pc || r.pc_hi <= pc ||
			    sfb_cfi_lookup(&libc_cfi, r.pc_lo, 6, &at) || !row_eq(&r, &at) ||
			    sfb_cfi_lookup(&libc_cfi, r.pc_hi - 1, 6, &at) || !row_eq(&r, &at) ||
			    (!sfb_cfi_lookup(&libc_cfi, r.pc_hi, 6, &at) && row_eq(&r, &at)) ||
			    (!sfb_cfi_lookup(&libc_cfi, r.pc_lo - 1, 6, &at) && row_eq(&r, &at)))
				range_bad++;
			pc = r.pc_hi;
		}
		fdes++;
	}
	CHECK(range_bad == 0, "%u rows of %u FDEs: each the same at its range's ends, not beyond "
	      "(%u not)", rows, fdes, range_bad);

	/* 2. A row kept for one PC, found from its range, nowhere else.  Each
	 * FDE's rows in turn, the cache emptied of them by a fresh epoch. */
	uint32_t epoch = 2;
	unsigned kept = 0, own_block_missed = 0, wrong = 0, outside = 0, whole_missed = 0,
		 small = 0, probes = 0;
	for (uint32_t i = 0; i < libc_cfi.fde_count; i += 7) {
		uint64_t pc = entry_pc(i);
		struct sfb_row r, got, truth;
		while (sfb_cfi_lookup(&libc_cfi, pc, 6, &r) == SFB_CFI_OK) {
			epoch += 2;
			/* a PC in the middle of the range */
			uint64_t at = r.pc_lo + (r.pc_hi - r.pc_lo) / 2;
			sfb_cfi_cache_put((uintptr_t)at, epoch, &r, 0, UINTPTR_MAX);
			if (r.nregs <= SFB_CFI_CACHE_REGS)
				kept++;
			uint64_t own = at & ~(uint64_t)63;
			bool whole = blocks_of(r.pc_lo, r.pc_hi) <= 2 * SFB_CFI_CACHE_COVER + 1;
			small += whole;
			uint64_t from = r.pc_lo > 64 ? r.pc_lo - 64 : 0, to = r.pc_hi + 64;
			for (uint64_t p = from; p < to; p++) {
				bool hit = sfb_cfi_cache_get((uintptr_t)p, epoch, &got);
				probes++;
				bool in = p >= r.pc_lo && p < r.pc_hi;
				if (hit && !in)
					outside++;
				if (hit && (sfb_cfi_lookup(&libc_cfi, p, 6, &truth) ||
					    !row_eq(&got, &truth)))
					wrong++;
				if (in && !hit && r.nregs <= SFB_CFI_CACHE_REGS &&
				    (p & ~(uint64_t)63) == own)
					own_block_missed++;
				if (in && !hit && r.nregs <= SFB_CFI_CACHE_REGS && whole)
					whole_missed++;
			}
			pc = r.pc_hi;
		}
	}
	CHECK(kept > 100, "%u rows kept, one at a time", kept);
	CHECK(wrong == 0, "every hit is sfb_cfi_lookup()'s row there (%u probes, %u wrong)", probes,
	      wrong);
	CHECK(outside == 0, "no hit outside the row's range (%u)", outside);
	CHECK(own_block_missed == 0, "every PC of the kept PC's block finds it (%u missed)",
	      own_block_missed);
	CHECK(small > 100 && whole_missed == 0,
	      "every PC of a range of at most %u blocks finds it (%u such rows; %u missed)",
	      2 * SFB_CFI_CACHE_COVER + 1, small, whole_missed);

	/* 3. Epochs: the same addresses under another epoch (another object
	 * at the same place, or the same one described again after
	 * dlclose()) find nothing; each finds its own row. */
	struct sfb_row a, b, got;
	uint64_t pc = entry_pc(libc_cfi.fde_count / 2);
	CHECK(sfb_cfi_lookup(&libc_cfi, pc, 6, &a) == SFB_CFI_OK, "a row at %#lx",
	      (unsigned long)pc);
	b = a;
	b.cfa.off += 8; /* another object's row at the same addresses */
	epoch += 2;
	sfb_cfi_cache_put((uintptr_t)pc, epoch, &a, 0, UINTPTR_MAX);
	CHECK(sfb_cfi_cache_get((uintptr_t)pc, epoch, &got) && row_eq(&got, &a),
	      "found under its epoch");
	CHECK(!sfb_cfi_cache_get((uintptr_t)pc, epoch + 2, &got), "not under the next epoch");
	CHECK(!sfb_cfi_cache_get((uintptr_t)pc, epoch + 1, &got),
	      "not under the epoch of a walk without .eh_frame");
	sfb_cfi_cache_put((uintptr_t)pc, epoch + 2, &b, 0, UINTPTR_MAX);
	CHECK(sfb_cfi_cache_get((uintptr_t)pc, epoch + 2, &got) && row_eq(&got, &b),
	      "the new epoch finds its own row");
	CHECK(!sfb_cfi_cache_get((uintptr_t)pc, epoch, &got) ||
	      row_eq(&got, &a), "the old epoch never finds the new row");

	/* 4. What is refused, and the bounds that are not. */
	struct sfb_row s = {
		.pc_lo = 0x7f0000001000, .pc_hi = 0x7f0000001400, .func_start = 0x7f0000001000,
		.func_size = 0x400, .cfa = { SFB_LOC_EXPR, 0, 7, 16 },
		.ra = { SFB_LOC_EXPR, 1, SFB_REG_CFA, -8 }, .flags = SFB_ROW_CFI,
	};
	uintptr_t p = 0x7f0000001200;
	epoch += 4;
	struct sfb_row t = s;
	t.flags = 0; /* an SFrame row */
	sfb_cfi_cache_put(p, epoch, &t, 0, UINTPTR_MAX);
	CHECK(!sfb_cfi_cache_get(p, epoch, &got), "a row not from CFI is not kept");
	t.flags = SFB_ROW_CFI | SFB_ROW_MEMO;
	sfb_cfi_cache_put(p, epoch, &t, 0, UINTPTR_MAX);
	CHECK(!sfb_cfi_cache_get(p, epoch, &got), "a memoised row is not kept");
	sfb_cfi_cache_put(p, 0, &s, 0, UINTPTR_MAX);
	CHECK(!sfb_cfi_cache_get(p, 0, &got), "epoch 0 is not kept");
	sfb_cfi_cache_put(0x7f0000001400, epoch, &s, 0, UINTPTR_MAX);
	CHECK(!sfb_cfi_cache_get(0x7f00000013ff, epoch, &got), "a PC outside the row: not kept");
	t = s;
	t.nregs = SFB_CFI_CACHE_REGS + 1;
	for (unsigned i = 0; i < t.nregs; i++)
		t.regs[i] = (struct sfb_reg_rule){ (uint16_t)i, { SFB_LOC_EXPR, 1, SFB_REG_CFA,
								  -16 - 8 * (int32_t)i } };
	sfb_cfi_cache_put(p, epoch, &t, 0, UINTPTR_MAX);
	CHECK(!sfb_cfi_cache_get(p, epoch, &got), "%d saved-register rules: not kept",
	      SFB_CFI_CACHE_REGS + 1);
	t.nregs = SFB_CFI_CACHE_REGS;
	sfb_cfi_cache_put(p, epoch, &t, 0, UINTPTR_MAX);
	CHECK(sfb_cfi_cache_get(p, epoch, &got) && row_eq(&got, &t),
	      "%d saved-register rules: kept whole", SFB_CFI_CACHE_REGS);
	epoch += 2;
	t = s;
	t.pc_lo = 0x7f0000000000;
	t.pc_hi = t.pc_lo + ((uint64_t)1 << 32);
	sfb_cfi_cache_put(p, epoch, &t, 0, UINTPTR_MAX);
	CHECK(!sfb_cfi_cache_get(p, epoch, &got), "a range of 2^32 bytes: not kept");
	t.pc_hi--;
	sfb_cfi_cache_put(p, epoch, &t, 0, UINTPTR_MAX);
	CHECK(sfb_cfi_cache_get(p, epoch, &got) && row_eq(&got, &t) &&
	      sfb_cfi_cache_get(p + 0x8000, epoch, &got) && row_eq(&got, &t),
	      "a range of 2^32 - 1 bytes: kept, found from the next 32 KiB block");

	/* The row's range cut to its object's addresses: under the epoch that
	 * objects never unloaded share, a row from an FDE running past its
	 * object's end must not serve the next object's PCs. */
	epoch += 2;
	sfb_cfi_cache_put(p, epoch, &s, 0x7f0000001100, 0x7f0000001300);
	CHECK(sfb_cfi_cache_get(p, epoch, &got) && got.pc_lo == 0x7f0000001100 &&
	      got.pc_hi == 0x7f0000001300 && loc_eq(&got.cfa, &s.cfa),
	      "a row cut to its object: found inside, its range cut");
	CHECK(!sfb_cfi_cache_get(0x7f0000001300, epoch, &got) &&
	      !sfb_cfi_cache_get(0x7f00000013ff, epoch, &got) &&
	      !sfb_cfi_cache_get(0x7f00000010ff, epoch, &got),
	      "not from the row's PCs outside its object");
	sfb_cfi_cache_put(0x7f0000001300, epoch + 2, &s, 0x7f0000001100, 0x7f0000001300);
	CHECK(!sfb_cfi_cache_get(0x7f0000001300, epoch + 2, &got),
	      "a PC outside its object: not kept");

	/* 5. Levels at their bounds: the largest aligned block around the PC
	 * inside the range. */
	CHECK(sfb_cfi_cache_level(0x10000, 0x10000, 0x10040) == 0, "one 64-byte block: level 0");
	CHECK(sfb_cfi_cache_level(0x10000, 0x10000, 0x1003f) == 0, "less than a block: level 0");
	CHECK(sfb_cfi_cache_level(0x10000, 0x10000, 0x10200) == 1, "one 512-byte block: level 1");
	CHECK(sfb_cfi_cache_level(0x101ff, 0x10000, 0x10200) == 1, "its last byte: level 1");
	CHECK(sfb_cfi_cache_level(0x10200, 0x10000, 0x10200) == 0, "past it: level 0");
	CHECK(sfb_cfi_cache_level(0x10000, 0x10001, 0x10200) == 0, "one byte short: level 0");
	CHECK(sfb_cfi_cache_level(0x18000, 0x18000, 0x20000) == 3, "a 32 KiB block: level 3");
	CHECK(sfb_cfi_cache_level(0x18000, 0x18000, 0x1ffff) == 2, "a byte less: level 2");
	CHECK(sfb_cfi_cache_level(0x18000, 0x0, UINT64_MAX) == 3, "the top level is the last");

	/* 6. Whole walks: objects of .eh_frame alone loaded, walked, unloaded,
	 * replaced. */
	unsigned good = 0, loads = 0, same_place = 0, one_row = 0;
	uintptr_t last = 0, fn = 0;
	for (int i = 0; i < 8; i++) {
		if (walk_in_lib(i % 2 ? 512 : 256, &fn, &good, &one_row))
			loads++;
		same_place += i > 0 && fn == last;
		last = fn;
	}
	CHECK(loads == 8, "cfi_cache_256.so and cfi_cache_512.so loaded in turn, 8 times");
	CHECK(one_row == loads, "each load's two contexts: two PCs of one .eh_frame row (%u of %u)",
	      one_row, loads);
	CHECK(good == 4 * loads, "every walk's first frame has its object's CFA, its caller "
	      "reached through .eh_frame: from the first context (row interpreted, kept), "
	      "from the second (its exact PC never seen, the row found by range), and both "
	      "again (%u of %u; %u loads at the address of the one before)", good, 4 * loads,
	      same_place);
	CHECK_DONE();
}
