/* libFuzzer target for the .eh_frame decoder (src/rows/cfi.c): load, find,
 * table rows, walker rows, expressions.
 *
 * Input: a 20-byte header, then .eh_frame_hdr, then .eh_frame:
 *     u64 hdr_addr, u64 frame_addr, u32 hdr_len   (little-endian)
 * Each section is copied into a heap buffer of exactly its size (ASan
 * catches any over-read); .eh_frame is readable up to its end
 * (frame_limit = frame_addr + its length).  If the input loads, PCs from
 * the table (entry starts, the PC before, middles, ends), every row of
 * the FDEs found, and PCs from the input's tail are looked up; every row
 * is checked for its invariants (the PC inside the row, the row inside
 * the FDE, sfb_cfi_lookup() agreeing with sfb_cfi_table_row()), and every
 * DWARF expression rule is evaluated with made-up registers and memory
 * (tests/rows/cfi_fake.h).  Any broken invariant aborts.
 *
 * Build and run: make fuzz (tests/fuzz/build.mk).  With -DSFB_FUZZ_MAIN the
 * file has its own main(): it runs each file named on the command line
 * once (tests/fuzz/t_fuzz_smoke.sh replays tests/fuzz/corpus-cfi/ so), and
 *     fuzz_cfi -seed ELF OUT [FRAME_BYTES]
 * writes a seed from an x86-64 ELF object: its .eh_frame_hdr and the
 * first FRAME_BYTES (default 8192) of its .eh_frame, with the table cut
 * down to the FDEs that lie wholly in them (how tests/fuzz/corpus-cfi/
 * was made from libc, ld.so, libstdc++, libgcc_s, libm, the AArch64
 * fixture library, and sframebt's sources built as t_cfi_oracle.sh
 * builds them, at -O0 and -O2 without frame pointers). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows/cfi.h"
#include "rows/cfi_cache.h"
#include "rows/cfi_fake.h"

#define FUZZ_NAME "fuzz_cfi"
#define FUZZ_OWN_MAIN
#include "fuzz_target.h"

#define HDR_SIZE 20

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static bool valid_err(int err)
{
	return err >= SFB_CFI_OK && err <= SFB_CFI_E_LEB &&
	       strcmp(sfb_cfi_err_name(err), "unknown") != 0;
}

static void eval_loc(const struct sfb_cfi_section *s, const struct sfb_loc *l, bool push_cfa)
{
	if (l->kind != SFB_LOC_DWARF)
		return;
	if (l->off < 0 || (uint64_t)l->off + l->reg > s->frame.len)
		FAIL("expression rule [%d, +%u) outside .eh_frame", l->off, l->reg);
	uint64_t v;
	int err = sfb_cfi_eval(s->frame.p, s->frame.len, (uint32_t)l->off, l->reg, &fake_ctx,
			       push_cfa, 0x7ffc00100000ull, &v);
	if (err != SFB_CFI_OK && err != SFB_CFI_E_EXPR)
		FAIL("eval -> %d", err);
}

static bool rows_differ(const struct sfb_row *a, const struct sfb_row *b)
{
	if (a->func_start != b->func_start || a->func_size != b->func_size ||
	    a->pc_lo != b->pc_lo || a->pc_hi != b->pc_hi || a->flags != b->flags ||
	    a->nregs != b->nregs || a->expr != b->expr || a->expr_len != b->expr_len ||
	    memcmp(&a->cfa, &b->cfa, sizeof a->cfa) || memcmp(&a->ra, &b->ra, sizeof a->ra) ||
	    memcmp(&a->fp, &b->fp, sizeof a->fp))
		return true;
	for (unsigned i = 0; i < a->nregs && i < SFB_ROW_REGS; i++)
		if (a->regs[i].reg != b->regs[i].reg ||
		    memcmp(&a->regs[i].loc, &b->regs[i].loc, sizeof a->regs[i].loc))
			return true;
	return false;
}

/* What the cache of rows by range (src/rows/cfi_cache.h) relies on: the
 * row is the same from every PC of its range (checked at both ends), and
 * kept there, it comes back whole. */
static void check_range(const struct sfb_cfi_section *s, uint64_t pc, const struct sfb_row *row)
{
	struct sfb_row end, got;
	if (sfb_cfi_lookup(s, row->pc_lo, 6, &end) || rows_differ(&end, row))
		FAIL("lookup %#llx: another row at its range's start %#llx", (unsigned long long)pc,
		     (unsigned long long)row->pc_lo);
	if (sfb_cfi_lookup(s, row->pc_hi - 1, 6, &end) || rows_differ(&end, row))
		FAIL("lookup %#llx: another row at its range's end %#llx", (unsigned long long)pc,
		     (unsigned long long)row->pc_hi - 1);
	static uint32_t epoch;
	epoch += 2;
	sfb_cfi_cache_put((uintptr_t)pc, epoch, row, 0, UINTPTR_MAX);
	bool kept = row->nregs <= SFB_CFI_CACHE_REGS && row->pc_hi - row->pc_lo <= UINT32_MAX;
	bool hit = sfb_cfi_cache_get((uintptr_t)pc, epoch, &got);
	if (hit != kept || (hit && rows_differ(&got, row)))
		FAIL("cache %#llx: %s", (unsigned long long)pc,
		     hit == kept ? "another row" : kept ? "not kept" : "kept");
	if (sfb_cfi_cache_get((uintptr_t)row->pc_lo, epoch, &got) && rows_differ(&got, row))
		FAIL("cache %#llx: another row at %#llx", (unsigned long long)pc,
		     (unsigned long long)row->pc_lo);
}

static void check_row(const struct sfb_cfi_section *s, const struct sfb_cfi_fde *f,
		      uint64_t pc, const struct sfb_cfi_table_row *t)
{
	if (pc < t->pc_lo || pc >= t->pc_hi || t->pc_lo < f->pc_begin || t->pc_hi > f->pc_end)
		FAIL("row [%#llx, %#llx) for pc %#llx in FDE [%#llx, %#llx)",
		     (unsigned long long)t->pc_lo, (unsigned long long)t->pc_hi,
		     (unsigned long long)pc, (unsigned long long)f->pc_begin,
		     (unsigned long long)f->pc_end);
	if (t->ra_column >= SFB_CFI_REGS)
		FAIL("ra column %u", t->ra_column);
	if (t->cfa.kind > SFB_LOC_DWARF)
		FAIL("CFA kind %u", t->cfa.kind);
	if (t->cfa.kind == SFB_LOC_EXPR && t->cfa.reg >= SFB_CFI_REGS)
		FAIL("CFA register %u", t->cfa.reg);
	eval_loc(s, &t->cfa, false);
	for (unsigned r = 0; r < SFB_CFI_REGS; r++) {
		const struct sfb_loc *l = &t->reg[r];
		if (l->kind > SFB_LOC_DWARF)
			FAIL("register %u kind %u", r, l->kind);
		if (l->kind != SFB_LOC_SAME && !((t->explicit_regs >> r) & 1))
			FAIL("register %u has a rule but no instruction gave it", r);
		if (l->kind == SFB_LOC_REGISTER && l->reg >= SFB_CFI_REGS)
			FAIL("register %u in register %u", r, l->reg);
		eval_loc(s, l, true);
	}

	/* The walker's row agrees with the table row, when the search finds
	 * this FDE for pc (overlapping FDEs may give another). */
	struct sfb_cfi_fde f2;
	if (sfb_cfi_find(s, pc, &f2) != SFB_CFI_OK || f2.pc_begin != f->pc_begin ||
	    f2.pc_end != f->pc_end || f2.fde_insns != f->fde_insns)
		return;
	struct sfb_row row;
	int err = sfb_cfi_lookup(s, pc, 6, &row);
	if (!valid_err(err) || err == SFB_CFI_E_NOT_FOUND)
		FAIL("lookup %#llx -> %d where table_row found a row", (unsigned long long)pc, err);
	if (err)
		return; /* no CFA, or more rules than a row holds */
	/* The row's range: the table row's, narrowed to the PCs whose search
	 * finds the same table entry. */
	if (pc < row.pc_lo || pc >= row.pc_hi || row.pc_lo < t->pc_lo || row.pc_hi > t->pc_hi ||
	    row.func_start != f->pc_begin || row.func_start + row.func_size != f->pc_end ||
	    !(row.flags & SFB_ROW_CFI))
		FAIL("lookup %#llx: row range or flags differ", (unsigned long long)pc);
	check_range(s, pc, &row);
	if (memcmp(&row.cfa, &t->cfa, sizeof row.cfa) ||
	    memcmp(&row.ra, &t->reg[t->ra_column], sizeof row.ra) ||
	    memcmp(&row.fp, &t->reg[6], sizeof row.fp))
		FAIL("lookup %#llx: CFA, RA or FP rule differs", (unsigned long long)pc);
	if (!!(row.flags & SFB_ROW_OUTERMOST) != (row.ra.kind == SFB_LOC_UNDEFINED) ||
	    !!(row.flags & SFB_ROW_SIGNAL) != !!t->signal_frame)
		FAIL("lookup %#llx: flags", (unsigned long long)pc);
	unsigned n = 0;
	for (unsigned r = 0; r < SFB_CFI_REGS; r++)
		if (r != 6 && r != t->ra_column && t->reg[r].kind != SFB_LOC_SAME) {
			if (n >= row.nregs || row.regs[n].reg != r ||
			    memcmp(&row.regs[n].loc, &t->reg[r], sizeof row.regs[n].loc))
				FAIL("lookup %#llx: register rule %u differs", (unsigned long long)pc, r);
			n++;
		}
	if (n != row.nregs)
		FAIL("lookup %#llx: %u register rules, table row %u", (unsigned long long)pc,
		     row.nregs, n);
}

static void check_pc(const struct sfb_cfi_section *s, uint64_t pc, bool all_rows)
{
	struct sfb_cfi_fde f;
	int err = sfb_cfi_find(s, pc, &f);
	if (!valid_err(err))
		FAIL("find %#llx -> %d", (unsigned long long)pc, err);
	if (err) {
		struct sfb_row row;
		int lerr = sfb_cfi_lookup(s, pc, 6, &row);
		if (lerr != err)
			FAIL("find %#llx -> %d, lookup %d", (unsigned long long)pc, err, lerr);
		return;
	}
	if (pc < f.pc_begin || pc >= f.pc_end)
		FAIL("find %#llx -> FDE not covering it", (unsigned long long)pc);
	if (f.cie_insns > f.cie_insns_end || f.cie_insns_end > s->frame.len ||
	    f.fde_insns > f.fde_insns_end || f.fde_insns_end > s->frame.len)
		FAIL("find %#llx: instructions outside .eh_frame", (unsigned long long)pc);
	struct sfb_cfi_table_row t;
	err = sfb_cfi_table_row(s, &f, pc, &t);
	if (!valid_err(err) || err == SFB_CFI_E_NOT_FOUND)
		FAIL("table_row %#llx -> %d", (unsigned long long)pc, err);
	if (err == SFB_CFI_OK)
		check_row(s, &f, pc, &t);
	if (!all_rows)
		return;
	/* Every row of the FDE, each from its own start. */
	uint64_t at = f.pc_begin;
	for (int i = 0; i < 16 && at < f.pc_end; i++) {
		if (sfb_cfi_table_row(s, &f, at, &t) != SFB_CFI_OK)
			break;
		check_row(s, &f, at, &t);
		if (t.pc_lo > at || t.pc_hi <= at)
			FAIL("row does not hold at %#llx", (unsigned long long)at);
		at = t.pc_hi;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR_SIZE)
		return 0;
	/* Registers that look like stack addresses. */
	for (unsigned n = 0; n < sizeof fake_regs / sizeof fake_regs[0]; n++)
		fake_regs[n] = 0x7ffc00000000ull + (uint64_t)n * 0x1000;
	uint64_t hdr_addr = rd(data, 8), frame_addr = rd(data + 8, 8);
	uint64_t hdr_len = rd(data + 16, 4);
	size -= HDR_SIZE;
	data += HDR_SIZE;
	if (hdr_len > size)
		hdr_len = size;
	size_t frame_len = size - hdr_len;
	uint8_t *hdr = malloc(hdr_len ? hdr_len : 1);
	uint8_t *frame = malloc(frame_len ? frame_len : 1);
	if (!hdr || !frame)
		abort();
	memcpy(hdr, data, hdr_len);
	memcpy(frame, data + hdr_len, frame_len);

	struct sfb_cfi_section s;
	int err = sfb_cfi_load(&s, hdr, hdr_len, hdr_addr, frame_addr + frame_len,
			       (uintptr_t)frame - (uintptr_t)frame_addr);
	if (!valid_err(err) || err == SFB_CFI_E_NOT_FOUND)
		FAIL("load -> %d", err);
	/* The header may point .eh_frame anywhere; this harness owns only
	 * the bytes from frame_addr (the caller's promise, cfi.h). */
	if (err == SFB_CFI_OK && s.frame_addr >= frame_addr) {
		if (s.frame.len > frame_len || s.frame.p < frame)
			FAIL("frame bytes outside the buffer");
		uint32_t n = s.fde_count;
		for (uint32_t k = 0; k < n && k < 12; k++) {
			uint32_t i = n <= 12 ? k : (uint32_t)((uint64_t)k * (n - 1) / 11);
			uint64_t at = (uint64_t)s.table_off + (uint64_t)i * 8, v;
			if (!sfb_get(&s.hdr, at, 4, &v))
				FAIL("table entry %u outside the header", i);
			uint64_t pc = hdr_addr + (uint64_t)sfb_sext(v, 4);
			check_pc(&s, pc - 1, false);
			check_pc(&s, pc, k < 4);
			check_pc(&s, pc + 1, false);
			check_pc(&s, pc + 7, false);
		}
		for (size_t k = 0; k < 4 && size >= 8 * (k + 1); k++)
			check_pc(&s, rd(data + size - 8 * (k + 1), 8), false);
	}
	/* Expressions straight from the input's bytes. */
	for (size_t k = 0; k + 2 <= frame_len && k < 4; k++) {
		uint64_t v;
		uint32_t off = frame[k] % frame_len, len = frame[k + 1];
		if (len > frame_len - off)
			len = (uint32_t)(frame_len - off);
		err = sfb_cfi_eval(frame, frame_len, off, len, &fake_ctx, k & 1, 0x1000, &v);
		if (err != SFB_CFI_OK && err != SFB_CFI_E_EXPR)
			FAIL("eval -> %d", err);
	}
	free(hdr);
	free(frame);
	return 0;
}

#ifdef SFB_FUZZ_MAIN
#include <elf.h>

/* A seed from an ELF object: see the comment at the top. */
static int make_seed(const char *path, const char *out, size_t cut)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *img = malloc((size_t)n);
	if (!img || fread(img, 1, (size_t)n, f) != (size_t)n)
		return 1;
	fclose(f);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff), *hp = NULL;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			hp = &ph[i];
	if (!hp)
		return 1;
	uint8_t *hdr = img + hp->p_offset;
	uint64_t hdr_addr = hp->p_vaddr;
	/* As ld writes it: pcrel|sdata4 .eh_frame pointer, udata4 count,
	 * datarel|sdata4 table. */
	if (hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return 1;
	int32_t eptr;
	uint32_t count;
	memcpy(&eptr, hdr + 4, 4);
	memcpy(&count, hdr + 8, 4);
	uint64_t frame_addr = hdr_addr + 4 + (int64_t)eptr;
	uint64_t frame_off = frame_addr - hdr_addr + hp->p_offset;
	if (frame_off + cut > (uint64_t)n)
		cut = (size_t)n - frame_off;
	uint8_t *frame = img + frame_off;
	/* The table's entries whose FDE lies wholly in the first cut bytes. */
	uint8_t *table = malloc((size_t)count * 8 + 1);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < count; i++) {
		int32_t loc, fde;
		uint32_t len;
		memcpy(&loc, hdr + 12 + 8 * i, 4);
		memcpy(&fde, hdr + 16 + 8 * i, 4);
		uint64_t off = hdr_addr + (int64_t)fde - frame_addr;
		if (off + 4 > cut)
			continue;
		memcpy(&len, frame + off, 4);
		if (len == 0xffffffffu || off + 4 + len > cut)
			continue;
		memcpy(table + 8 * kept++, hdr + 12 + 8 * i, 8);
	}
	FILE *o = fopen(out, "wb");
	if (!o)
		return 1;
	uint8_t head[HDR_SIZE];
	uint32_t hlen = 12 + 8 * kept;
	for (int i = 0; i < 8; i++) {
		head[i] = (uint8_t)(hdr_addr >> (8 * i));
		head[8 + i] = (uint8_t)(frame_addr >> (8 * i));
	}
	memcpy(head + 16, &hlen, 4);
	fwrite(head, 1, sizeof head, o);
	fwrite(hdr, 1, 8, o);
	fwrite(&kept, 4, 1, o);
	fwrite(table, 8, kept, o);
	fwrite(frame, 1, cut, o);
	fclose(o);
	printf("%s: %u of %u FDEs, %zu bytes of .eh_frame\n", out, kept, count, cut);
	free(table);
	free(img);
	return 0;
}

/* -seed makes a seed from a real object; otherwise each file runs once. */
int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "-seed"))
		return make_seed(argv[2], argv[3], argc > 4 ? strtoul(argv[4], NULL, 0) : 8192);
	return fuzz_replay(argc, argv, 1);
}
#endif
