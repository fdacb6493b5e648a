/* libFuzzer target for the SFrame decoder: load + lookups.
 *
 * The input is a .sframe section.  It is copied into a heap buffer of
 * exactly its size (so ASan catches any over-read), loaded with and without
 * a scratch order array, and, if it loads, looked up at PCs derived from the
 * input and at FDE and PCMASK block boundaries.  Every lookup is
 * cross-checked against the slow reference in sframe_builder.h (linear scan
 * over sfb_fde_get + sfb_fre_row); any disagreement or broken invariant
 * aborts.
 *
 * Build and run: make fuzz FUZZ_SECONDS=60 (tests/fuzz/build.mk).
 * With -DSFB_FUZZ_MAIN the file has its own main() that runs each file named
 * on the command line once (tests/fuzz/t_fuzz_smoke.sh: the seed corpus as a
 * regression test without libFuzzer). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows/sframe_builder.h"
#include "rows/sframe_decode.h"
#include "rows/sframe_format.h"

#define FUZZ_NAME "fuzz_decode"
#include "fuzz_target.h"

static void check_pc(const struct sfb_section *s, uint64_t pc)
{
	struct sfb_row got, ref;
	struct sfb_fde f;
	int err = sfb_lookup(s, pc, &got);
	if (err != SFB_OK && err != SFB_E_NOT_FOUND)
		FAIL("lookup %#llx -> %d on a loaded section", (unsigned long long)pc, err);
	int ferr = sfb_find_fde(s, pc, &f);
	if (ferr != SFB_OK && ferr != SFB_E_NOT_FOUND)
		FAIL("find_fde %#llx -> %d", (unsigned long long)pc, ferr);
	if (ferr == SFB_OK && (pc < f.start || pc - f.start >= f.size))
		FAIL("find_fde %#llx -> FDE not covering it", (unsigned long long)pc);
	if (err == SFB_OK) {
		if (ferr != SFB_OK || f.start != got.func_start || f.size != got.func_size)
			FAIL("lookup and find_fde disagree at %#llx", (unsigned long long)pc);
		if (pc < got.pc_lo || pc >= got.pc_hi || pc < got.func_start ||
		    pc - got.func_start >= got.func_size ||
		    got.pc_hi - got.func_start > got.func_size)
			FAIL("row range invariant at %#llx", (unsigned long long)pc);
		if (got.cfa.kind > SFB_LOC_EXPR || got.ra.kind > SFB_LOC_EXPR ||
		    got.fp.kind > SFB_LOC_EXPR)
			FAIL("bad loc kind at %#llx", (unsigned long long)pc);
		if (!(got.flags & SFB_ROW_OUTERMOST) && got.cfa.kind != SFB_LOC_EXPR)
			FAIL("non-outermost row without a CFA rule at %#llx", (unsigned long long)pc);
	}
	int rerr = sb_ref_lookup(s, pc, &ref, 64);
	if (rerr == -2)
		return; /* FDE with too many FREs for the quadratic reference */
	if (rerr == -1)
		FAIL("reference cannot read a loaded section at %#llx", (unsigned long long)pc);
	if (rerr != err)
		FAIL("lookup %#llx -> %d, reference %d", (unsigned long long)pc, err, rerr);
	if (err == SFB_OK && !sb_row_eq(&got, &ref))
		FAIL("lookup %#llx: row differs from the reference", (unsigned long long)pc);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	if (size)
		memcpy(p, data, size);
	size_t nscratch = size / 16 + 1;
	uint32_t *scratch = malloc(nscratch * sizeof *scratch);
	/* Where the section is: vary it with the length so wrap-around paths
	 * get exercised too. */
	static const uint64_t addrs[4] = { 0x400000, 0, 0xfffffffffff00000ull,
					   0x7f1234560000ull };
	uint64_t addr = addrs[size % 4];

	struct sfb_section s, s0;
	int err = sfb_section_load(&s, p, size, addr, scratch, nscratch);
	int err0 = sfb_section_load(&s0, p, size, addr, NULL, 0);
	if (err != SFB_OK && (err < SFB_E_TRUNCATED || err > SFB_E_TOO_BIG))
		FAIL("load -> %d, not a load error", err);
	if (!strcmp(sfb_err_name(err), "unknown"))
		FAIL("load -> %d without a name", err);
	if (err0 != err && err0 != SFB_E_UNSORTED)
		FAIL("load -> %d with scratch, %d without", err, err0);
	if (err == SFB_OK) {
		if (err0 == SFB_OK && s.order)
			FAIL("sorted section given an order array");
		if (err0 == SFB_E_UNSORTED && !s.order)
			FAIL("unsorted section without an order array");
		if (s.num_fdes == 0 && (s.pc_lo || s.pc_hi))
			FAIL("empty section with a PC range");
		if (s.pc_hi < s.pc_lo)
			FAIL("pc_hi < pc_lo");

		/* Every FDE (up to a cap) readable; every FRE row decodable. */
		uint32_t nf = s.num_fdes;
		for (uint32_t i = 0; i < nf && i < 256; i++) {
			struct sfb_fde f;
			uint32_t fi = i < 128 ? i : nf - 1 - (i - 128);
			if (fi >= nf)
				break;
			if (sfb_fde_get(&s, fi, &f) != SFB_OK)
				FAIL("fde_get(%u) failed on a loaded section", fi);
			struct sfb_row r;
			for (uint32_t j = 0; j < f.num_fres && j < 16; j++)
				if (sfb_fre_row(&s, &f, j, &r) != SFB_OK)
					FAIL("fre_row(%u, %u) failed on a loaded section", fi, j);
			if (i < 32 || i >= 224) {
				check_pc(&s, f.start - 1);
				check_pc(&s, f.start);
				check_pc(&s, f.start + f.size / 2);
				check_pc(&s, f.start + f.size - 1);
				check_pc(&s, f.start + f.size);
				if (f.pcmask && f.rep_size) {
					check_pc(&s, f.start + f.rep_size - 1);
					check_pc(&s, f.start + f.rep_size);
					check_pc(&s, f.start + 2 * (uint64_t)f.rep_size + 1);
				}
			}
		}
		if (sfb_fde_get(&s, nf, &(struct sfb_fde){ 0 }) != SFB_E_NOT_FOUND)
			FAIL("fde_get past the end");
		/* Around the range, and PCs taken from the input's tail. */
		check_pc(&s, s.pc_lo - 1);
		check_pc(&s, s.pc_lo);
		check_pc(&s, s.pc_hi - 1);
		check_pc(&s, s.pc_hi);
		uint64_t span = s.pc_hi - s.pc_lo;
		for (size_t k = 0; k < 16 && size >= 8 * (k + 1); k++) {
			uint64_t v = rd64(p + size - 8 * (k + 1));
			check_pc(&s, v);
			check_pc(&s, s.pc_lo + (v % (span + 64)) - 32);
		}
	}
	free(scratch);
	free(p);
	return 0;
}
