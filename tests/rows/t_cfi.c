/* The .eh_frame decoder (src/rows/cfi.c) on .eh_frame_hdr + .eh_frame images
 * built here byte by byte: every CFA opcode family, pointer encoding and
 * augmentation, remember/restore nesting, DWARF expressions, and
 * malformed input, each giving its own error code.  t_cfi_oracle checks
 * the same decoder against readelf on real objects. */
#define _GNU_SOURCE
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "rows/cfi.h"
#include "cfi_fake.h"
#include "check.h"

#define HDR_ADDR 0x10000u
#define FRAME_ADDR 0x20000u
#define PC0 0x401000u

/* ---- An image builder ------------------------------------------------- */

static uint8_t F[1 << 16];
static size_t FL;
static struct { uint64_t pc, off; } ents[64];
static int nents;
static uint8_t *hbuf, *fbuf; /* exact-size copies handed to the decoder */
static struct sfb_cfi_section S;

/* Header bytes for the next load(): as ld writes them unless changed. */
static uint8_t hdr_version = 1, hdr_eptr_enc = 0x1b, hdr_count_enc = 0x03,
	hdr_table_enc = 0x3b;
static int64_t hdr_count_delta; /* added to the count written */

static void reset(void)
{
	FL = 0;
	nents = 0;
	memset(F, 0, sizeof F);
	hdr_version = 1;
	hdr_eptr_enc = 0x1b;
	hdr_count_enc = 0x03;
	hdr_table_enc = 0x3b;
	hdr_count_delta = 0;
}

static void b1(uint64_t v) { F[FL++] = (uint8_t)v; }
static void bn(uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b1(v >> (8 * i));
}
static void uleb(uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		b1(c | (v ? 0x80 : 0));
	} while (v);
}
static void sleb(int64_t v)
{
	for (;;) {
		uint8_t c = v & 0x7f;
		v >>= 7;
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			b1(c);
			return;
		}
		b1(c | 0x80);
	}
}
static void bytes(const uint8_t *p, size_t n)
{
	if (n)
		memcpy(F + FL, p, n);
	FL += n;
}
static void patch_len(size_t at)
{
	uint32_t len = (uint32_t)(FL - at - 4);
	memcpy(F + at, &len, 4);
}

/* A pointer with encoding enc, for a field at FL. */
static void ptr(uint64_t v, uint8_t enc)
{
	uint64_t field = FRAME_ADDR + FL;
	if ((enc & 0x70) == 0x10)
		v -= field;
	else if ((enc & 0x70) == 0x30)
		v -= HDR_ADDR;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: bn(v, 8); break;
	case 0x01: uleb(v); break;
	case 0x09: sleb((int64_t)v); break;
	case 0x02: case 0x0a: bn(v, 2); break;
	default: bn(v, 4); break;
	}
}

#define INS(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
#define NONE NULL, 0

/* A CIE; its offset. */
static size_t cie(int version, const char *aug, uint64_t caf, int64_t daf, unsigned ra,
		  const uint8_t *augdata, size_t auglen, const uint8_t *ins, size_t n)
{
	size_t at = FL;
	bn(0, 4);
	bn(0, 4);
	b1(version);
	bytes((const uint8_t *)aug, strlen(aug) + 1);
	if (version == 4) {
		b1(8);
		b1(0);
	}
	uleb(caf);
	sleb(daf);
	if (version == 1)
		b1(ra);
	else
		uleb(ra);
	if (aug[0] == 'z') {
		uleb(auglen);
		bytes(augdata, auglen);
	}
	bytes(ins, n);
	patch_len(at);
	return at;
}

/* The usual x86-64 CIE: "zR", pcrel|sdata4, CFA rsp+8, RA at CFA-8. */
static size_t std_cie(void)
{
	return cie(1, "zR", 1, -8, 16, INS(0x1b), INS(0x0c, 7, 8, 0x90, 1));
}

/* An FDE for [pc, pc + range) with pointer encoding enc; auglen < 0: no
 * augmentation data (a CIE without 'z').  Listed in the table. */
static size_t fde_aug(size_t cie_off, uint64_t pc, uint64_t range, uint8_t enc,
		      const uint8_t *augdata, int auglen, const uint8_t *ins, size_t n)
{
	size_t at = FL;
	bn(0, 4);
	bn(FL - cie_off, 4);
	ptr(pc, enc);
	ptr(range, enc & 0x0f);
	if (auglen >= 0) {
		uleb((uint64_t)auglen);
		bytes(augdata, (size_t)auglen);
	}
	bytes(ins, n);
	patch_len(at);
	ents[nents].pc = pc;
	ents[nents++].off = at;
	return at;
}

static size_t fde(size_t cie_off, uint64_t pc, uint64_t range, const uint8_t *ins, size_t n)
{
	return fde_aug(cie_off, pc, range, 0x1b, NULL, 0, ins, n);
}

/* Build .eh_frame_hdr for the FDEs so far and load both. */
static int load(void)
{
	static uint8_t h[4096];
	size_t hl = 0;
	for (int i = 1; i < nents; i++) /* sort the table by PC */
		for (int j = i; j > 0 && ents[j - 1].pc > ents[j].pc; j--) {
			uint64_t pc = ents[j].pc, off = ents[j].off;
			ents[j] = ents[j - 1];
			ents[j - 1].pc = pc;
			ents[j - 1].off = off;
		}
	h[hl++] = hdr_version;
	h[hl++] = hdr_eptr_enc;
	h[hl++] = hdr_count_enc;
	h[hl++] = hdr_table_enc;
	int32_t eptr = (int32_t)(FRAME_ADDR - (HDR_ADDR + 4));
	memcpy(h + hl, &eptr, 4);
	hl += 4;
	uint32_t count = (uint32_t)(nents + hdr_count_delta);
	memcpy(h + hl, &count, 4);
	hl += 4;
	for (int i = 0; i < nents; i++) {
		int32_t a = (int32_t)(ents[i].pc - HDR_ADDR);
		int32_t f = (int32_t)(FRAME_ADDR + ents[i].off - HDR_ADDR);
		memcpy(h + hl, &a, 4);
		memcpy(h + hl + 4, &f, 4);
		hl += 8;
	}
	free(hbuf);
	free(fbuf);
	hbuf = malloc(hl);
	fbuf = malloc(FL ? FL : 1);
	memcpy(hbuf, h, hl);
	memcpy(fbuf, F, FL);
	return sfb_cfi_load(&S, hbuf, hl, HDR_ADDR, FRAME_ADDR + FL,
			    (uintptr_t)fbuf - FRAME_ADDR);
}

/* Load, find and table_row at pc. */
static int row_at(uint64_t pc, struct sfb_cfi_table_row *t)
{
	struct sfb_cfi_fde f;
	int err = load();
	if (!err)
		err = sfb_cfi_find(&S, pc, &f);
	if (!err)
		err = sfb_cfi_table_row(&S, &f, pc, t);
	return err;
}

static bool loc_is(struct sfb_loc l, int kind, int deref, int reg, int32_t off)
{
	return l.kind == kind && l.deref == deref && l.reg == reg && l.off == off;
}

#define AT(r, n, off) loc_is((r).reg[n], SFB_LOC_EXPR, 1, SFB_REG_CFA, off)

/* ---- Expressions --------------------------------------------------- */

static int ev(const uint8_t *e, size_t n, uint64_t *out)
{
	return sfb_cfi_eval(e, n, 0, (uint32_t)n, &fake_ctx, false, 0, out);
}
#define EV(out, ...) \
	ev((const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }), out)

static void test_eval(void)
{
	uint64_t v = 0;
	fake_regs[7] = 0x7ffe1000;
	fake_regs[6] = 0x7ffe2000;
	/* The x86-64 PLT's CFA: rsp + 8 + ((rip & 15) >= 11) << 3. */
	static const uint8_t plt[] = { 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
	fake_regs[16] = 0x401025; /* 5 bytes into a 16-byte PLT entry */
	CHECK(ev(plt, sizeof plt, &v) == 0 && v == 0x7ffe1008, "PLT CFA before the push: %#llx",
	      (unsigned long long)v);
	fake_regs[16] = 0x40102b; /* 11 bytes in: after the push */
	CHECK(ev(plt, sizeof plt, &v) == 0 && v == 0x7ffe1010, "PLT CFA after the push: %#llx",
	      (unsigned long long)v);
	/* __restore_rt's CFA: *(rsp + 160); DRAP: *(rbp - 8). */
	CHECK(EV(&v, 0x77, 0xa0, 0x01, 0x06) == 0 && v == 0x7ffe10a0 + FAKE_MEM_BIAS,
	      "breg7 160; deref");
	CHECK(EV(&v, 0x76, 0x78, 0x06) == 0 && v == 0x7ffe1ff8 + FAKE_MEM_BIAS,
	      "breg6 -8; deref");
	/* push_cfa: DW_CFA_expression rules start with the CFA. */
	static const uint8_t add8[] = { 0x23, 8 };
	CHECK(sfb_cfi_eval(add8, 2, 0, 2, &fake_ctx, true, 0x5000, &v) == 0 && v == 0x5008,
	      "push_cfa; plus_uconst 8");
	CHECK(EV(&v, 0x92, 16, 0x7f) == 0 && v == 0x40102a, "bregx 16 -1");
	CHECK(EV(&v, 0x08, 0xff) == 0 && v == 0xff, "const1u");
	CHECK(EV(&v, 0x09, 0xff) == 0 && v == (uint64_t)-1, "const1s");
	CHECK(EV(&v, 0x0a, 0x34, 0x12) == 0 && v == 0x1234, "const2u");
	CHECK(EV(&v, 0x0b, 0x00, 0x80) == 0 && v == (uint64_t)-32768, "const2s");
	CHECK(EV(&v, 0x0c, 1, 2, 3, 4) == 0 && v == 0x04030201, "const4u");
	CHECK(EV(&v, 0x0d, 0, 0, 0, 0x80) == 0 && v == 0xffffffff80000000ull, "const4s");
	CHECK(EV(&v, 0x0e, 1, 2, 3, 4, 5, 6, 7, 8) == 0 && v == 0x0807060504030201ull, "const8u");
	CHECK(EV(&v, 0x03, 1, 2, 3, 4, 5, 6, 7, 0x88) == 0 && v == 0x8807060504030201ull, "addr");
	CHECK(EV(&v, 0x10, 0xe5, 0x8e, 0x26) == 0 && v == 624485, "constu");
	CHECK(EV(&v, 0x11, 0xc0, 0xbb, 0x78) == 0 && v == (uint64_t)-123456, "consts");
	CHECK(EV(&v, 0x31, 0x12, 0x22) == 0 && v == 2, "dup; plus");
	CHECK(EV(&v, 0x31, 0x32, 0x13) == 0 && v == 1, "drop");
	CHECK(EV(&v, 0x35, 0x32, 0x14) == 0 && v == 5, "over");
	CHECK(EV(&v, 0x35, 0x32, 0x33, 0x15, 2) == 0 && v == 5, "pick 2");
	CHECK(EV(&v, 0x35, 0x32, 0x16, 0x1c) == 0 && v == (uint64_t)-3, "swap; minus");
	CHECK(EV(&v, 0x31, 0x32, 0x33, 0x17) == 0 && v == 2, "rot: top is the old second");
	CHECK(EV(&v, 0x31, 0x32, 0x33, 0x17, 0x13, 0x13) == 0 && v == 3, "rot: third is the old top");
	CHECK(EV(&v, 0x11, 0x7b, 0x19) == 0 && v == 5, "abs");
	CHECK(EV(&v, 0x3c, 0x3a, 0x1a) == 0 && v == 8, "and");
	CHECK(EV(&v, 0x11, 0x79, 0x32, 0x1b) == 0 && v == (uint64_t)-3, "div is signed");
	CHECK(EV(&v, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x11, 0x7f, 0x1b) == 0 &&
	      v == 0x8000000000000000ull, "INT64_MIN / -1 wraps");
	CHECK(EV(&v, 0x31, 0x30, 0x1b) == SFB_CFI_E_EXPR, "div by zero");
	CHECK(EV(&v, 0x37, 0x33, 0x1d) == 0 && v == 1, "mod");
	CHECK(EV(&v, 0x37, 0x30, 0x1d) == SFB_CFI_E_EXPR, "mod by zero");
	CHECK(EV(&v, 0x37, 0x33, 0x1e) == 0 && v == 21, "mul");
	CHECK(EV(&v, 0x37, 0x1f) == 0 && v == (uint64_t)-7, "neg");
	CHECK(EV(&v, 0x30, 0x20) == 0 && v == ~0ull, "not");
	CHECK(EV(&v, 0x34, 0x31, 0x21) == 0 && v == 5, "or");
	CHECK(EV(&v, 0x33, 0x34, 0x24) == 0 && v == 48, "shl");
	CHECK(EV(&v, 0x31, 0x08, 64, 0x24) == 0 && v == 0, "shl by 64");
	CHECK(EV(&v, 0x08, 0xf0, 0x34, 0x25) == 0 && v == 0xf, "shr");
	CHECK(EV(&v, 0x11, 0x70, 0x32, 0x26) == 0 && v == (uint64_t)-4, "shra");
	CHECK(EV(&v, 0x11, 0x70, 0x08, 200, 0x26) == 0 && v == (uint64_t)-1, "shra by 200");
	CHECK(EV(&v, 0x36, 0x33, 0x27) == 0 && v == 5, "xor");
	CHECK(EV(&v, 0x33, 0x33, 0x29) == 0 && v == 1, "eq");
	CHECK(EV(&v, 0x11, 0x7f, 0x30, 0x2a) == 0 && v == 0, "ge is signed");
	CHECK(EV(&v, 0x34, 0x33, 0x2b) == 0 && v == 1, "gt");
	CHECK(EV(&v, 0x34, 0x33, 0x2c) == 0 && v == 0, "le");
	CHECK(EV(&v, 0x11, 0x7f, 0x30, 0x2d) == 0 && v == 1, "lt is signed");
	CHECK(EV(&v, 0x34, 0x33, 0x2e) == 0 && v == 1, "ne");
	CHECK(EV(&v, 0x31, 0x2f, 1, 0, 0x32) == 0 && v == 1, "skip over an op");
	CHECK(EV(&v, 0x35, 0x31, 0x28, 1, 0, 0x32, 0x96) == 0 && v == 5, "bra taken");
	CHECK(EV(&v, 0x35, 0x30, 0x28, 1, 0, 0x32) == 0 && v == 2, "bra not taken");
	CHECK(EV(&v, 0x30, 0x94, 1) == SFB_CFI_E_EXPR, "deref of an unreadable address");
	CHECK(EV(&v, 0x0a, 0x00, 0x20, 0x94, 2) == 0 && v == 0x2000, "deref_size 2");
	CHECK(EV(&v, 0x0a, 0x00, 0x20, 0x94, 9) == SFB_CFI_E_EXPR, "deref_size 9");
	CHECK(EV(&v, 0x92, FAKE_NO_REG, 0) == SFB_CFI_E_EXPR,
	      "bregx of a register the walker does not know");
	CHECK(EV(&v, 0x55) == SFB_CFI_E_EXPR, "DW_OP_reg5 is no value");
	CHECK(EV(&v, 0xe0) == SFB_CFI_E_EXPR, "unknown operation");
	CHECK(EV(&v, 0x96) == SFB_CFI_E_EXPR, "empty stack at the end");
	CHECK(EV(&v, 0x22) == SFB_CFI_E_EXPR, "plus on an empty stack");
	CHECK(EV(&v, 0x31, 0x17) == SFB_CFI_E_EXPR, "rot with one entry");
	CHECK(EV(&v, 0x31, 0x15, 1) == SFB_CFI_E_EXPR, "pick past the stack");
	CHECK(EV(&v, 0x0c, 1, 2) == SFB_CFI_E_EXPR, "operand past the end");
	CHECK(EV(&v, 0x2f, 0xfd, 0xff) == SFB_CFI_E_EXPR, "skip to itself: over budget");
	CHECK(EV(&v, 0x2f, 0x10, 0x00) == SFB_CFI_E_EXPR, "skip past the end");
	CHECK(EV(&v, 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01) ==
	      SFB_CFI_E_EXPR, "11-byte constu");
	uint8_t deep[SFB_CFI_EXPR_STACK + 1];
	memset(deep, 0x31, sizeof deep);
	CHECK(ev(deep, SFB_CFI_EXPR_STACK, &v) == 0 && v == 1, "%d entries fit", SFB_CFI_EXPR_STACK);
	CHECK(ev(deep, sizeof deep, &v) == SFB_CFI_E_EXPR, "%d entries overflow",
	      SFB_CFI_EXPR_STACK + 1);
	static const uint8_t e5[] = { 0x35 };
	CHECK(sfb_cfi_eval(e5, 1, 0, 2, &fake_ctx, false, 0, &v) == SFB_CFI_E_EXPR,
	      "expression past its buffer");
	CHECK(sfb_cfi_eval(e5, 1, 2, 0, &fake_ctx, false, 0, &v) == SFB_CFI_E_EXPR,
	      "offset past its buffer");
	CHECK(sfb_cfi_eval(e5, 1, 0, 1, NULL, false, 0, &v) == 0 && v == 5, "no callbacks needed");
	static const uint8_t b7[] = { 0x77, 0 };
	CHECK(sfb_cfi_eval(b7, 2, 0, 2, NULL, false, 0, &v) == SFB_CFI_E_EXPR,
	      "breg without a register callback");
}

/* ---- CFA instructions ---------------------------------------------- */

static void test_basic(void)
{
	struct sfb_cfi_table_row t;
	struct sfb_row r;
	reset();
	size_t c = std_cie();
	/* push rbp; mov rbp,rsp; ... leave; ret */
	fde(c, PC0, 0x40, INS(0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x4a, 0x0c, 7, 8));
	CHECK(load() == 0 && S.fde_count == 1, "one FDE loads");
	CHECK(row_at(PC0, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 7, 8) && AT(t, 16, -8) &&
	      t.reg[6].kind == SFB_LOC_SAME && t.pc_lo == PC0 && t.pc_hi == PC0 + 1 &&
	      t.explicit_regs == (1ull << 16),
	      "entry row: CFA rsp+8, RA c-8, [pc, pc+1)");
	CHECK(row_at(PC0 + 1, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 7, 16) && AT(t, 6, -16) &&
	      t.pc_lo == PC0 + 1 && t.pc_hi == PC0 + 4, "after push: CFA rsp+16, rbp c-16");
	CHECK(row_at(PC0 + 5, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 6, 16) &&
	      t.pc_lo == PC0 + 4 && t.pc_hi == PC0 + 14, "after mov: CFA rbp+16");
	CHECK(row_at(PC0 + 0x3f, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 7, 8) &&
	      t.pc_lo == PC0 + 14 && t.pc_hi == PC0 + 0x40, "after leave: CFA rsp+8 to the end");
	CHECK(row_at(PC0 + 0x40, &t) == SFB_CFI_E_NOT_FOUND, "the FDE's end is outside it");
	CHECK(row_at(PC0 - 1, &t) == SFB_CFI_E_NOT_FOUND, "before the first FDE");
	CHECK(sfb_cfi_lookup(&S, PC0 + 5, 6, &r) == 0 && r.func_start == PC0 &&
	      r.func_size == 0x40 && r.pc_lo == PC0 + 4 && r.pc_hi == PC0 + 14 &&
	      loc_is(r.cfa, SFB_LOC_EXPR, 0, 6, 16) &&
	      loc_is(r.ra, SFB_LOC_EXPR, 1, SFB_REG_CFA, -8) &&
	      loc_is(r.fp, SFB_LOC_EXPR, 1, SFB_REG_CFA, -16) && r.flags == SFB_ROW_CFI &&
	      r.nregs == 0 && r.expr == fbuf && r.expr_len == FL,
	      "lookup: the walker's row");
	CHECK(strcmp(sfb_cfi_err_name(SFB_CFI_E_BUDGET), "over-budget") == 0 &&
	      strcmp(sfb_cfi_err_name(99), "unknown") == 0 &&
	      strcmp(sfb_cfi_err_name(-1), "unknown") == 0,
	      "error names");

	/* Several FDEs: the search picks the right one, gaps are not found. */
	reset();
	c = std_cie();
	for (int i = 7; i >= 0; i--)
		fde(c, PC0 + 0x100 * i, 0x80, INS(0x41, 0x0e, (uint8_t)(16 + 8 * i)));
	int ok = load() == 0;
	for (int i = 0; i < 8; i++) {
		ok &= row_at(PC0 + 0x100 * i + 1, &t) == 0 && t.cfa.off == 16 + 8 * i;
		ok &= row_at(PC0 + 0x100 * i + 0x80, &t) == SFB_CFI_E_NOT_FOUND;
	}
	CHECK(ok, "8 FDEs: each found at its PCs, gaps not found");
}

static void test_advance(void)
{
	struct sfb_cfi_table_row t;
	reset();
	size_t c = std_cie();
	fde(c, PC0, 0x200000,
	    INS(0x02, 0x10, 0x0e, 16,                        /* advance_loc1 16 */
		0x03, 0x00, 0x01, 0x0e, 24,                  /* advance_loc2 256 */
		0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, 32,      /* advance_loc4 65536 */
		0x1d, 0, 0, 0x10, 0, 0, 0, 0, 0, 0x0e, 40)); /* MIPS_advance_loc8 2^20 */
	CHECK(row_at(PC0 + 15, &t) == 0 && t.cfa.off == 8 && t.pc_hi == PC0 + 16, "advance_loc1");
	CHECK(row_at(PC0 + 16, &t) == 0 && t.cfa.off == 16 && t.pc_hi == PC0 + 272, "advance_loc2");
	CHECK(row_at(PC0 + 272, &t) == 0 && t.cfa.off == 24 && t.pc_hi == PC0 + 65808,
	      "advance_loc4");
	CHECK(row_at(PC0 + 65808, &t) == 0 && t.cfa.off == 32 && t.pc_lo == PC0 + 65808 &&
	      t.pc_hi == PC0 + 65808 + 0x100000, "MIPS_advance_loc8");
	CHECK(row_at(PC0 + 65808 + 0x100000, &t) == 0 && t.cfa.off == 40 &&
	      t.pc_hi == PC0 + 0x200000, "the last row runs to the FDE's end");

	/* set_loc with the CIE's encoding (pcrel|sdata4), and code alignment. */
	reset();
	c = cie(3, "zR", 4, -8, 16, INS(0x1b), INS(0x0c, 7, 8, 0x90, 1));
	size_t f = FL;
	(void)f;
	/* The set_loc operand is at FDE start + 4 + 4 + 4 + 4 + 1 (aug len) + 1. */
	fde(c, PC0, 0x100, INS(0x42, 0x0e, 16, 0x01, 0, 0, 0, 0, 0x0e, 24));
	/* Patch the set_loc operand: PC0 + 0x40, pcrel to its field. */
	size_t opnd = ents[0].off + 4 + 4 + 4 + 4 + 1 + 3 + 1;
	int32_t rel = (int32_t)(PC0 + 0x40 - (FRAME_ADDR + opnd));
	memcpy(F + opnd, &rel, 4);
	CHECK(row_at(PC0 + 7, &t) == 0 && t.cfa.off == 8 && t.pc_hi == PC0 + 8,
	      "advance_loc by 2 * code alignment 4");
	CHECK(row_at(PC0 + 8, &t) == 0 && t.cfa.off == 16 && t.pc_hi == PC0 + 0x40,
	      "set_loc ends a row");
	CHECK(row_at(PC0 + 0x40, &t) == 0 && t.cfa.off == 24 && t.pc_lo == PC0 + 0x40,
	      "set_loc starts one");

	/* set_loc backwards. */
	reset();
	c = std_cie();
	fde(c, PC0, 0x100, INS(0x48, 0x01, 0, 0, 0, 0));
	opnd = ents[0].off + 4 + 4 + 4 + 4 + 1 + 1 + 1;
	rel = (int32_t)(PC0 + 4 - (FRAME_ADDR + opnd));
	memcpy(F + opnd, &rel, 4);
	CHECK(row_at(PC0 + 0x20, &t) == SFB_CFI_E_FDE, "set_loc backwards");

	/* Advance of 0: the next row starts where the last did. */
	reset();
	c = std_cie();
	fde(c, PC0, 0x10, INS(0x42, 0x0e, 16, 0x40, 0x0e, 24));
	CHECK(row_at(PC0 + 2, &t) == 0 && t.cfa.off == 24 && t.pc_lo == PC0 + 2 &&
	      t.pc_hi == PC0 + 0x10,
	      "advance_loc 0");
}

static void test_rules(void)
{
	struct sfb_cfi_table_row t;
	reset();
	/* CIE: rbx at c-24 besides the usual, so restore has a CIE rule to go
	 * back to. */
	size_t c = cie(1, "zR", 1, -8, 16, INS(0x1b), INS(0x0c, 7, 8, 0x90, 1, 0x83, 3));
	fde(c, PC0, 0x100,
	    INS(0x41,
		0x05, 12, 2,            /* offset_extended r12 c-16 */
		0x11, 13, 0x7d,         /* offset_extended_sf r13 (-3 * -8) c+24 */
		0x14, 14, 4,            /* val_offset r14 v-32 */
		0x15, 15, 0x01,         /* val_offset_sf r15 v-8 */
		0x2f, 1, 2,             /* GNU_negative_offset_extended rdx c+16 */
		0x07, 2,                /* undefined rcx */
		0x08, 4,                /* same_value rsi */
		0x09, 5, 0,             /* register rdi in rax */
		0x83, 5,                /* offset rbx c-40 */
		0x2e, 32,               /* GNU_args_size 32 */
		0x00,                   /* nop */
		0x41,
		0xc3,                   /* restore rbx: c-24 again */
		0x06, 12,               /* restore_extended r12: SAME, as in the CIE */
		0x41,
		0x07, 50, 0x05, 60, 1,  /* rules for untracked registers: ignored */
		0x08, 16));             /* same_value RA */
	CHECK(row_at(PC0 + 1, &t) == 0 && AT(t, 12, -16) && AT(t, 13, 24) &&
	      loc_is(t.reg[14], SFB_LOC_EXPR, 0, SFB_REG_CFA, -32) &&
	      loc_is(t.reg[15], SFB_LOC_EXPR, 0, SFB_REG_CFA, -8) && AT(t, 1, 16) &&
	      t.reg[2].kind == SFB_LOC_UNDEFINED && t.reg[4].kind == SFB_LOC_SAME &&
	      ((t.explicit_regs >> 4) & 1) && loc_is(t.reg[5], SFB_LOC_REGISTER, 0, 0, 0) &&
	      AT(t, 3, -40) && t.args_size == 32,
	      "offset_extended(_sf), val_offset(_sf), negative_offset, undefined, same_value, "
	      "register, args_size");
	CHECK(row_at(PC0 + 2, &t) == 0 && AT(t, 3, -24) && t.reg[12].kind == SFB_LOC_SAME &&
	      !((t.explicit_regs >> 12) & 1) && ((t.explicit_regs >> 3) & 1),
	      "restore and restore_extended give the CIE's rules");
	CHECK(row_at(PC0 + 3, &t) == 0 && t.reg[16].kind == SFB_LOC_SAME && AT(t, 3, -24),
	      "rules for registers >= %d ignored", SFB_CFI_REGS);

	/* Lookup: rules besides RA and FP go to regs[]; RA undefined is the
	 * outermost frame. */
	struct sfb_row r;
	reset();
	c = std_cie();
	fde(c, PC0, 0x10, INS(0x83, 2, 0x8c, 3, 0x86, 4, 0x09, 13, 0, 0x41, 0x07, 16));
	CHECK(load() == 0 && sfb_cfi_lookup(&S, PC0, 6, &r) == 0 && r.nregs == 3 &&
	      r.regs[0].reg == 3 && loc_is(r.regs[0].loc, SFB_LOC_EXPR, 1, SFB_REG_CFA, -16) &&
	      r.regs[1].reg == 12 && loc_is(r.regs[1].loc, SFB_LOC_EXPR, 1, SFB_REG_CFA, -24) &&
	      r.regs[2].reg == 13 && loc_is(r.regs[2].loc, SFB_LOC_REGISTER, 0, 0, 0) &&
	      loc_is(r.fp, SFB_LOC_EXPR, 1, SFB_REG_CFA, -32) && r.flags == SFB_ROW_CFI,
	      "lookup: saved registers in regs[], FP in fp");
	CHECK(sfb_cfi_lookup(&S, PC0 + 1, 6, &r) == 0 && r.ra.kind == SFB_LOC_UNDEFINED &&
	      r.flags == (SFB_ROW_CFI | SFB_ROW_OUTERMOST), "RA undefined: outermost");
	CHECK(sfb_cfi_lookup(&S, PC0, 3, &r) == 0 &&
	      loc_is(r.fp, SFB_LOC_EXPR, 1, SFB_REG_CFA, -16) &&
	      r.nregs == 3 && r.regs[0].reg == 6, "lookup with another FP register");

	/* More rules than a row holds: SFB_ROW_REGS registers saved (every
	 * one but FP 6 and the RA column 16), then one more at PC0 + 1. */
	reset();
	c = std_cie();
	uint8_t many[2 * (SFB_ROW_REGS + 3) + 1];
	size_t nm = 0;
	unsigned reg = 0;
	for (int k = 0; k <= SFB_ROW_REGS; k++, reg++) {
		while (reg == 6 || reg == 16)
			reg++;
		if (k == SFB_ROW_REGS)
			many[nm++] = 0x41; /* advance_loc 1 */
		many[nm++] = (uint8_t)(0x80 | reg);
		many[nm++] = (uint8_t)(k + 1);
	}
	fde(c, PC0, 0x10, many, nm);
	CHECK(load() == 0 && sfb_cfi_lookup(&S, PC0, 6, &r) == 0 && r.nregs == SFB_ROW_REGS,
	      "%d saved registers fit a row", SFB_ROW_REGS);
	CHECK(sfb_cfi_lookup(&S, PC0 + 1, 6, &r) == SFB_CFI_E_REGISTER, "%d do not",
	      SFB_ROW_REGS + 1);
}

static void test_cfa(void)
{
	struct sfb_cfi_table_row t;
	struct sfb_row r;
	reset();
	size_t c = std_cie();
	static const uint8_t plt[] = { 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
	uint8_t ins[64];
	size_t n = 0;
	ins[n++] = 0x12; ins[n++] = 6; ins[n++] = 0x7e;        /* def_cfa_sf rbp, 16 */
	ins[n++] = 0x41;
	ins[n++] = 0x13; ins[n++] = 0x7d;                      /* def_cfa_offset_sf 24 */
	ins[n++] = 0x41;
	ins[n++] = 0x0f; ins[n++] = sizeof plt;                /* def_cfa_expression */
	size_t plt_at = n;
	memcpy(ins + n, plt, sizeof plt);
	n += sizeof plt;
	ins[n++] = 0x41;
	/* expression rbx: plus_uconst 8 */
	ins[n++] = 0x10; ins[n++] = 3; ins[n++] = 2; ins[n++] = 0x23; ins[n++] = 8;
	/* val_expression r12: neg */
	ins[n++] = 0x16; ins[n++] = 12; ins[n++] = 1; ins[n++] = 0x1f;
	ins[n++] = 0x41;
	/* def_cfa_register after an expression */
	ins[n++] = 0x0d; ins[n++] = 6;
	size_t off = fde(c, PC0, 0x10, ins, n);
	uint32_t ins_at = (uint32_t)(off + 4 + 4 + 4 + 4 + 1);
	CHECK(row_at(PC0, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 6, 16), "def_cfa_sf");
	CHECK(row_at(PC0 + 1, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 6, 24), "def_cfa_offset_sf");
	CHECK(row_at(PC0 + 2, &t) == 0 &&
	      loc_is(t.cfa, SFB_LOC_DWARF, 0, sizeof plt, (int32_t)(ins_at + plt_at)),
	      "def_cfa_expression: offset and length in .eh_frame");
	fake_regs[7] = 0x7ffe1000;
	fake_regs[16] = PC0 + 0x0b;
	uint64_t v = 0;
	CHECK(load() == 0 && sfb_cfi_lookup(&S, PC0 + 2, 6, &r) == 0 && r.cfa.kind == SFB_LOC_DWARF &&
	      sfb_cfi_eval(r.expr, r.expr_len, (uint32_t)r.cfa.off, r.cfa.reg, &fake_ctx, false, 0,
			   &v) == 0 &&
	      v == 0x7ffe1010, "the PLT expression evaluated from the row: %#llx",
	      (unsigned long long)v);
	CHECK(row_at(PC0 + 3, &t) == 0 && t.reg[3].kind == SFB_LOC_DWARF && t.reg[3].deref == 1 &&
	      t.reg[3].reg == 2 && t.reg[12].kind == SFB_LOC_DWARF && t.reg[12].deref == 0 &&
	      t.reg[12].reg == 1, "expression and val_expression rules");
	CHECK(load() == 0 && sfb_cfi_lookup(&S, PC0 + 3, 6, &r) == 0 && r.nregs == 2 &&
	      sfb_cfi_eval(r.expr, r.expr_len, (uint32_t)r.regs[0].loc.off, r.regs[0].loc.reg, &fake_ctx,
			   true, 0x5000, &v) == 0 && v == 0x5008,
	      "DW_CFA_expression evaluated with the CFA pushed");
	CHECK(row_at(PC0 + 4, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 6, 24),
	      "def_cfa_register after an expression: the offset from before it");

	/* def_cfa_offset changes the offset, the expression stays in force;
	 * remember_state keeps both. */
	reset();
	c = std_cie();
	fde(c, PC0, 0x10, INS(0x0f, 2, 0x77, 8, 0x0a, 0x41, 0x0e, 40, 0x41, 0x0d, 6, 0x41, 0x0b));
	CHECK(row_at(PC0 + 1, &t) == 0 && t.cfa.kind == SFB_LOC_DWARF,
	      "def_cfa_offset on an expression CFA: still the expression");
	CHECK(row_at(PC0 + 2, &t) == 0 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 6, 40),
	      "then def_cfa_register: that register + the new offset");
	CHECK(row_at(PC0 + 3, &t) == 0 && t.cfa.kind == SFB_LOC_DWARF,
	      "restore_state: the expression again");
	reset();
	c = std_cie();
	fde(c, PC0, 0x10, INS(0x0c, 40, 8));
	CHECK(row_at(PC0, &t) == SFB_CFI_E_REGISTER, "def_cfa with register 40");
	reset();
	c = std_cie();
	fde(c, PC0, 0x10, INS(0x09, 3, 40));
	CHECK(row_at(PC0, &t) == SFB_CFI_E_REGISTER, "register rule naming register 40");
	reset();
	c = std_cie();
	fde(c, PC0, 0x10, INS(0x05, 3, 0x80, 0x80, 0x80, 0x80, 0x08));
	CHECK(row_at(PC0, &t) == SFB_CFI_E_REGISTER, "offset that overflows 32 bits");
	reset();
	c = std_cie();
	fde(c, PC0, 0x10,
	    INS(0x05, 3, 0x80, 0x80, 0x80, 0x08, 0x41, 0x05, 3, 0x80, 0x80, 0x80, 0x10));
	CHECK(row_at(PC0, &t) == 0 && AT(t, 3, -(1 << 27)), "register rule offset -2^27");
	CHECK(row_at(PC0 + 1, &t) == SFB_CFI_E_REGISTER, "register rule offset -2^28: too far");
	reset();
	c = std_cie();
	fde(c, PC0, 0x10, INS(0x10, 3, 0x05, 0x77));
	CHECK(row_at(PC0, &t) == SFB_CFI_E_TRUNCATED, "expression block past the FDE");

	/* No CFA rule at all: a table row, but no walker row. */
	reset();
	c = cie(1, "zR", 1, -8, 16, INS(0x1b), INS(0x90, 1));
	fde(c, PC0, 0x10, NONE);
	CHECK(row_at(PC0, &t) == 0 && t.cfa.kind == SFB_LOC_UNDEFINED, "no CFA rule: undefined");
	CHECK(sfb_cfi_lookup(&S, PC0, 6, &r) == SFB_CFI_E_FDE, "no CFA rule: no walker row");
}

static void test_state(void)
{
	struct sfb_cfi_table_row t;
	reset();
	size_t c = std_cie();
	/* push rbx (remember), push r12 (remember), pops with restores. */
	fde(c, PC0, 0x20,
	    INS(0x41, 0x0e, 16, 0x83, 2, 0x0a,
		0x41, 0x0e, 24, 0x8c, 3, 0x0a,
		0x41, 0x0e, 32,
		0x41, 0x0b,
		0x41, 0x0b,
		0x41, 0x0b));
	CHECK(row_at(PC0 + 3, &t) == 0 && t.cfa.off == 32 && AT(t, 12, -24), "nested: innermost row");
	CHECK(row_at(PC0 + 4, &t) == 0 && t.cfa.off == 24 && AT(t, 12, -24) && AT(t, 3, -16),
	      "restore_state: the CFA comes back too");
	CHECK(row_at(PC0 + 5, &t) == 0 && t.cfa.off == 16 && t.reg[12].kind == SFB_LOC_SAME &&
	      !((t.explicit_regs >> 12) & 1) && AT(t, 3, -16), "second restore_state");
	CHECK(row_at(PC0 + 6, &t) == SFB_CFI_E_STATE, "restore_state with nothing remembered");

	uint8_t ins[64];
	size_t n = 0;
	for (int i = 0; i < SFB_CFI_STATE_DEPTH; i++) {
		ins[n++] = 0x0e;
		ins[n++] = (uint8_t)(16 + 8 * i);
		ins[n++] = 0x0a;
	}
	ins[n++] = 0x41;
	for (int i = 0; i < SFB_CFI_STATE_DEPTH; i++)
		ins[n++] = 0x0b;
	ins[n++] = 0x41;
	ins[n++] = 0x0a;
	for (int i = 0; i <= SFB_CFI_STATE_DEPTH; i++)
		ins[n++] = 0x0a;
	reset();
	c = std_cie();
	fde(c, PC0, 0x20, ins, n);
	CHECK(row_at(PC0, &t) == 0 && t.cfa.off == 16 + 8 * (SFB_CFI_STATE_DEPTH - 1) &&
	      row_at(PC0 + 1, &t) == 0 && t.cfa.off == 16, "%d levels remembered and restored",
	      SFB_CFI_STATE_DEPTH);
	CHECK(row_at(PC0 + 2, &t) == SFB_CFI_E_STATE, "%d levels: too deep", SFB_CFI_STATE_DEPTH + 1);
}

static void test_aarch64(void)
{
	struct sfb_cfi_table_row t;
	struct sfb_row r;
	/* AArch64: code alignment 4, data -8, RA x30, CFA sp+0. */
	reset();
	size_t c = cie(1, "zR", 4, -8, 30, INS(0x1b), INS(0x0c, 31, 0));
	fde(c, PC0, 0x20, INS(0x2d, 0x41, 0x0e, 16, 0x9d, 2, 0x9e, 1, 0x42, 0x2d));
	CHECK(row_at(PC0, &t) == 0 && t.ra_signed == 1 && loc_is(t.cfa, SFB_LOC_EXPR, 0, 31, 0),
	      "negate_ra_state sets RA_SIGN_STATE");
	CHECK(load() == 0 && sfb_cfi_lookup(&S, PC0 + 4, 29, &r) == 0 &&
	      r.flags == (SFB_ROW_CFI | SFB_ROW_MANGLED_RA) &&
	      loc_is(r.ra, SFB_LOC_EXPR, 1, SFB_REG_CFA, -8) &&
	      loc_is(r.fp, SFB_LOC_EXPR, 1, SFB_REG_CFA, -16) && r.pc_hi == PC0 + 12,
	      "AArch64 row: mangled RA, fp x29, lr x30");
	CHECK(sfb_cfi_lookup(&S, PC0 + 12, 29, &r) == 0 && r.flags == SFB_ROW_CFI,
	      "negate_ra_state again clears it");
	reset();
	c = cie(1, "zRB", 4, -8, 30, INS(0x1b), INS(0x0c, 31, 0));
	fde(c, PC0, 0x20, INS(0x2d));
	CHECK(load() == 0 && sfb_cfi_lookup(&S, PC0, 29, &r) == 0 &&
	      r.flags == (SFB_ROW_CFI | SFB_ROW_MANGLED_RA | SFB_ROW_PAUTH_B), "'B': key B");
	/* remember_state keeps RA_SIGN_STATE. */
	reset();
	c = cie(1, "zR", 4, -8, 30, INS(0x1b), INS(0x0c, 31, 0));
	fde(c, PC0, 0x20, INS(0x2d, 0x0a, 0x41, 0x2d, 0x41, 0x0b));
	CHECK(row_at(PC0 + 4, &t) == 0 && t.ra_signed == 0 && row_at(PC0 + 8, &t) == 0 &&
	      t.ra_signed == 1, "RA_SIGN_STATE remembered and restored");
}

/* ---- Pointer encodings and augmentations ----------------------------- */

static void test_encodings(void)
{
	struct sfb_cfi_table_row t;
	static const uint8_t encs[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0a, 0x0b, 0x0c,
					0x10 | 0x0b, 0x10 | 0x0c, 0x10 | 0x09, 0x10 | 0x03,
					0x30 | 0x0b, 0x30 | 0x03, 0x30 | 0x01 };
	for (size_t i = 0; i < sizeof encs; i++) {
		reset();
		uint64_t pc = (encs[i] & 0x0f) == 0x02 || (encs[i] & 0x0f) == 0x0a ? 0x7000 : PC0;
		size_t c = cie(1, "zR", 1, -8, 16, (const uint8_t[]){ encs[i] }, 1,
			       INS(0x0c, 7, 8, 0x90, 1));
		fde_aug(c, pc, 0x20, encs[i], NULL, 0, INS(0x48, 0x0e, 16));
		int err = row_at(pc + 8, &t);
		CHECK(err == 0 && t.cfa.off == 16 && t.pc_lo == pc + 8 && t.pc_hi == pc + 0x20,
		      "FDE pointer encoding %#04x: %s", encs[i], sfb_cfi_err_name(err));
	}
	static const struct { uint8_t enc; const char *what; } bad[] = {
		{ 0x20 | 0x0b, "textrel" }, { 0x40 | 0x0b, "funcrel" }, { 0x50 | 0x0b, "aligned" },
		{ 0x80 | 0x1b, "indirect" }, { 0x05, "format 5" }, { 0x0d, "format 13" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		reset();
		size_t c = cie(1, "zR", 1, -8, 16, (const uint8_t[]){ bad[i].enc }, 1,
			       INS(0x0c, 7, 8));
		fde_aug(c, PC0, 0x20, 0x1b, NULL, 0, NONE);
		CHECK(row_at(PC0, &t) == SFB_CFI_E_CIE, "FDE pointer encoding %s: bad CIE", bad[i].what);
	}
	/* No 'R': absptr. */
	reset();
	size_t c = cie(1, "", 1, -8, 16, NONE, INS(0x0c, 7, 8));
	fde_aug(c, PC0, 0x20, 0x00, NULL, -1, INS(0x44, 0x0e, 16));
	CHECK(row_at(PC0 + 4, &t) == 0 && t.cfa.off == 16, "CIE without augmentation: absptr");
}

static void test_augmentations(void)
{
	struct sfb_cfi_table_row t;
	struct sfb_row r;
	/* zPLR, personality indirect pcrel|sdata4, LSDA in the FDE. */
	reset();
	size_t c = cie(1, "zPLR", 1, -8, 16, INS(0x9b, 0x10, 0x20, 0x30, 0x40, 0x1b, 0x1b),
		       INS(0x0c, 7, 8, 0x90, 1));
	fde_aug(c, PC0, 0x20, 0x1b, INS(0x11, 0x22, 0x33, 0x44), INS(0x44, 0x0e, 16));
	CHECK(row_at(PC0 + 4, &t) == 0 && t.cfa.off == 16, "zPLR with an indirect personality");
	/* Personality udata8 and uleb128. */
	reset();
	c = cie(3, "zPR", 1, -8, 16, INS(0x04, 1, 2, 3, 4, 5, 6, 7, 8, 0x1b), INS(0x0c, 7, 8));
	fde(c, PC0, 0x20, INS(0x44, 0x0e, 16));
	CHECK(row_at(PC0 + 4, &t) == 0 && t.cfa.off == 16, "personality udata8, CIE version 3");
	reset();
	c = cie(1, "zPR", 1, -8, 16, INS(0x01, 0x80, 0x01, 0x1b), INS(0x0c, 7, 8));
	fde(c, PC0, 0x20, NONE);
	CHECK(row_at(PC0 + 4, &t) == 0, "personality uleb128");
	/* S, G, and an unknown letter skipped by the augmentation length. */
	reset();
	c = cie(1, "zRSG", 1, -8, 16, INS(0x1b), INS(0x0c, 7, 8, 0x90, 1));
	fde(c, PC0, 0x20, NONE);
	CHECK(row_at(PC0, &t) == 0 && t.signal_frame == 1 && load() == 0 &&
	      sfb_cfi_lookup(&S, PC0, 6, &r) == 0 && r.flags == (SFB_ROW_CFI | SFB_ROW_SIGNAL),
	      "'S': signal frame");
	reset();
	c = cie(1, "zRX", 1, -8, 16, INS(0x1b, 0xee, 0xee), INS(0x0c, 7, 8));
	fde(c, PC0, 0x20, INS(0x44, 0x0e, 16));
	CHECK(row_at(PC0 + 4, &t) == 0 && t.cfa.off == 16, "unknown letter after 'z': skipped");
	/* CIE versions. */
	reset();
	c = cie(4, "zR", 1, -8, 16, INS(0x1b), INS(0x0c, 7, 8, 0x90, 1));
	fde(c, PC0, 0x20, INS(0x44, 0x0e, 16));
	CHECK(row_at(PC0 + 4, &t) == 0 && t.cfa.off == 16 && AT(t, 16, -8), "CIE version 4");
	F[c + 4 + 4 + 1 + 3] = 4; /* address size 4 */
	CHECK(row_at(PC0, &t) == SFB_CFI_E_CIE, "CIE version 4 with 4-byte addresses");
	/* A CIE's remember_state carries into the FDE; restore in a CIE. */
	reset();
	c = cie(1, "zR", 1, -8, 16, INS(0x1b), INS(0x0c, 7, 8, 0x83, 2, 0x0a, 0xc3));
	fde(c, PC0, 0x20, INS(0x41, 0x0b));
	CHECK(row_at(PC0, &t) == 0 && t.reg[3].kind == SFB_LOC_SAME && row_at(PC0 + 1, &t) == 0 &&
	      AT(t, 3, -16), "remember_state and restore in a CIE");

	/* CIEs refused, each with an FDE as it asks for (without 'z': no
	 * augmentation, absolute pointers). */
	const struct {
		int version;
		const char *aug;
		uint64_t caf;
		unsigned ra;
		const uint8_t *augdata;
		size_t auglen;
		const uint8_t *ins;
		size_t n;
		int err;
		const char *what;
	} bad_cie[] = {
		{ 1, "zPR", 1, 16, INS(0x50, 0, 0, 0, 0, 0x1b), INS(0x0c, 7, 8), SFB_CFI_E_CIE,
		  "personality aligned: bad CIE" },
		{ 1, "zPR", 1, 16, INS(0x03, 0, 0), INS(0x0c, 7, 8), SFB_CFI_E_CIE,
		  "personality past the augmentation data" },
		{ 1, "eh", 1, 16, NONE, INS(0x0c, 7, 8), SFB_CFI_E_CIE, "'eh': rejected" },
		{ 1, "S", 1, 16, NONE, INS(0x0c, 7, 8), SFB_CFI_E_CIE,
		  "augmentation without 'z': rejected" },
		{ 1, "zRRRRRRRR", 1, 16, INS(0x1b), INS(0x0c, 7, 8), SFB_CFI_E_CIE,
		  "augmentation string too long" },
		{ 2, "zR", 1, 16, INS(0x1b), INS(0x0c, 7, 8), SFB_CFI_E_CIE, "CIE version 2" },
		{ 3, "zR", 1, 40, INS(0x1b), INS(0x0c, 7, 8), SFB_CFI_E_REGISTER, "RA column 40" },
		{ 1, "zR", 0, 16, INS(0x1b), INS(0x0c, 7, 8), SFB_CFI_E_CIE, "code alignment 0" },
		{ 1, "zR", 1, 16, INS(0x1b), INS(0x0c, 7, 8, 0x41), SFB_CFI_E_OPCODE,
		  "advance_loc in a CIE" },
	};
	for (size_t i = 0; i < sizeof bad_cie / sizeof bad_cie[0]; i++) {
		reset();
		c = cie(bad_cie[i].version, bad_cie[i].aug, bad_cie[i].caf, -8, bad_cie[i].ra,
			bad_cie[i].augdata, bad_cie[i].auglen, bad_cie[i].ins, bad_cie[i].n);
		if (bad_cie[i].aug[0] == 'z')
			fde(c, PC0, 0x20, NONE);
		else
			fde_aug(c, PC0, 0x20, 0x00, NULL, -1, NONE);
		CHECK(row_at(PC0, &t) == bad_cie[i].err, "%s", bad_cie[i].what);
	}
}

static void test_lengths(void)
{
	struct sfb_cfi_table_row t;
	/* 64-bit lengths: 0xffffffff, 8-byte length, 8-byte CIE id/pointer. */
	reset();
	size_t c = FL;
	bn(0xffffffff, 4);
	size_t lat = FL;
	bn(0, 8);
	bn(0, 8);             /* CIE id */
	b1(1);
	bytes((const uint8_t *)"zR", 3);
	uleb(1);
	sleb(-8);
	b1(16);
	uleb(1);
	b1(0x1b);
	bytes(INS(0x0c, 7, 8, 0x90, 1));
	uint64_t len = FL - lat - 8;
	memcpy(F + lat, &len, 8);
	size_t f = FL;
	bn(0xffffffff, 4);
	lat = FL;
	bn(0, 8);
	bn(FL - c, 8);        /* CIE pointer */
	ptr(PC0, 0x1b);
	ptr(0x20, 0x0b);
	uleb(0);
	bytes(INS(0x44, 0x0e, 16));
	len = FL - lat - 8;
	memcpy(F + lat, &len, 8);
	ents[0].pc = PC0;
	ents[0].off = f;
	nents = 1;
	CHECK(row_at(PC0 + 4, &t) == 0 && t.cfa.off == 16 && AT(t, 16, -8),
	      "64-bit CIE and FDE lengths");
	memcpy(F + lat, &(uint64_t){ 0x7ffffffffffull }, 8);
	CHECK(row_at(PC0, &t) == SFB_CFI_E_TRUNCATED, "64-bit length past the end");
}

/* .eh_frame_hdr field encodings other than ld's. */
static void test_hdr_encodings(void)
{
	struct sfb_cfi_fde f;
	reset();
	size_t c = std_cie();
	fde(c, PC0, 0x20, NONE);
	fde(c, PC0 + 0x40, 0x20, NONE);
	CHECK(load() == 0, "two FDEs");
	const uint8_t *table = hbuf + 12;
	static const struct { uint8_t eptr_enc, count_enc; const char *what; } v[] = {
		{ 0x04, 0x01, "absolute udata8 .eh_frame pointer, uleb128 count" },
		{ 0x3b, 0x03, "datarel sdata4 .eh_frame pointer" },
		{ 0x1c, 0x04, "pcrel sdata8 .eh_frame pointer, udata8 count" },
		{ 0x00, 0x02, "absptr .eh_frame pointer, udata2 count" },
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		uint8_t h[64];
		size_t n = 0;
		h[n++] = 1;
		h[n++] = v[i].eptr_enc;
		h[n++] = v[i].count_enc;
		h[n++] = 0x3b;
		uint64_t e = FRAME_ADDR;
		if ((v[i].eptr_enc & 0x70) == 0x10)
			e -= HDR_ADDR + n;
		else if ((v[i].eptr_enc & 0x70) == 0x30)
			e -= HDR_ADDR;
		unsigned w = (v[i].eptr_enc & 0x0f) == 0x0b ? 4 : 8;
		memcpy(h + n, &e, w);
		n += w;
		if (v[i].count_enc == 0x01) {
			h[n++] = 2;
		} else {
			unsigned cw = v[i].count_enc == 0x02 ? 2 : v[i].count_enc == 0x03 ? 4 : 8;
			uint64_t cnt = 2;
			memcpy(h + n, &cnt, cw);
			n += cw;
		}
		memcpy(h + n, table, 16);
		n += 16;
		int err = sfb_cfi_load(&S, h, n, HDR_ADDR, FRAME_ADDR + FL, (uintptr_t)fbuf - FRAME_ADDR);
		CHECK(err == 0 && S.fde_count == 2 && S.frame_addr == FRAME_ADDR &&
		      sfb_cfi_find(&S, PC0 + 0x41, &f) == 0 && f.pc_begin == PC0 + 0x40,
		      "%s: %s", v[i].what, sfb_cfi_err_name(err));
	}
}

/* ---- Malformed input --------------------------------------------------- */

static void test_malformed(void)
{
	struct sfb_cfi_table_row t;
	size_t c, f;

	/* The header. */
	reset();
	c = std_cie();
	fde(c, PC0, 0x20, NONE);
	fde(c, PC0 + 0x100, 0x20, NONE);
	CHECK(load() == 0, "a good image loads");
	const struct {
		uint8_t *field; /* one byte of the header, set to v */
		uint8_t v;
		int err;
		const char *what;
	} bad_hdr[] = {
		{ &hdr_version, 2, SFB_CFI_E_HDR, "hdr version 2" },
		{ &hdr_table_enc, 0x03, SFB_CFI_E_NO_TABLE, "table encoding udata4: not searchable" },
		{ &hdr_table_enc, 0xff, SFB_CFI_E_NO_TABLE, "no table" },
		{ &hdr_count_enc, 0xff, SFB_CFI_E_NO_TABLE, "no FDE count" },
		{ &hdr_count_enc, 0x13, SFB_CFI_E_HDR, "pc-relative FDE count" },
		{ &hdr_eptr_enc, 0x9b, SFB_CFI_E_HDR, "indirect .eh_frame pointer" },
	};
	for (size_t i = 0; i < sizeof bad_hdr / sizeof bad_hdr[0]; i++) {
		uint8_t good = *bad_hdr[i].field;
		*bad_hdr[i].field = bad_hdr[i].v;
		CHECK(load() == bad_hdr[i].err, "%s", bad_hdr[i].what);
		*bad_hdr[i].field = good;
	}
	hdr_count_delta = 1;
	CHECK(load() == SFB_CFI_E_HDR, "table shorter than its count");
	hdr_count_delta = 0;
	CHECK(sfb_cfi_load(&S, NULL, 0, HDR_ADDR, FRAME_ADDR + FL, 0) == SFB_CFI_E_NO_TABLE,
	      "no .eh_frame_hdr");
	CHECK(sfb_cfi_load(&S, (const uint8_t[]){ 1, 0x1b, 0x03 }, 3, HDR_ADDR, FRAME_ADDR, 0) ==
	      SFB_CFI_E_HDR, "3-byte header");
	CHECK(load() == 0 && sfb_cfi_load(&S, hbuf, 12 + 16, HDR_ADDR, FRAME_ADDR, 0) ==
	      SFB_CFI_E_HDR, ".eh_frame past its segment's end");
	ents[1].pc = PC0 - 0x100; /* entry 1 now sorts before entry 0 */
	{
		/* Write the unsorted table by hand: load() would sort it. */
		CHECK(load() == 0, "reload");
		int32_t a = (int32_t)(PC0 + 0x100 - HDR_ADDR);
		memcpy(hbuf + 12, &a, 4);
		CHECK(sfb_cfi_load(&S, hbuf, 12 + 16, HDR_ADDR, FRAME_ADDR + FL,
				   (uintptr_t)fbuf - FRAME_ADDR) == SFB_CFI_E_NO_TABLE,
		      "unsorted table: not searchable");
	}
	reset();
	c = std_cie();
	fde(c, PC0, 0x20, NONE);
	ents[0].off = FL + 4; /* an FDE pointer past .eh_frame */
	CHECK(load() == SFB_CFI_E_HDR, "table FDE pointer outside .eh_frame");
	reset();
	std_cie();
	CHECK(load() == 0 && S.fde_count == 0 && row_at(PC0, &t) == SFB_CFI_E_NOT_FOUND,
	      "empty table: loads, finds nothing");

	/* Entries: a CIE and one FDE, at c and f, with one word patched. */
	reset();
	c = std_cie();
	f = fde(c, PC0, 0x20, NONE);
	const struct {
		size_t at;
		uint32_t v;
		int err;
		const char *what;
	} bad_entry[] = {
		{ f, 0x100, SFB_CFI_E_TRUNCATED, "FDE length past the end" },
		{ f, 0xfffffff0, SFB_CFI_E_TRUNCATED, "huge FDE length" },
		{ f, 0, SFB_CFI_E_FDE, "zero terminator where the FDE should be" },
		{ f + 4, (uint32_t)(f + 4 + 1), SFB_CFI_E_FDE, "CIE pointer before .eh_frame" },
		{ f + 4, 0, SFB_CFI_E_FDE, "table entry points at a CIE" },
		{ c, 0x1000, SFB_CFI_E_TRUNCATED, "CIE length past the end" },
		{ c, 0, SFB_CFI_E_FDE, "CIE pointer at a terminator" },
		/* pc_begin no longer the table's */
		{ f + 8, (uint32_t)-0x7ffffff0, SFB_CFI_E_NOT_FOUND, "FDE not covering the table's PC" },
	};
	for (size_t i = 0; i < sizeof bad_entry / sizeof bad_entry[0]; i++) {
		reset();
		fde(std_cie(), PC0, 0x20, NONE); /* at c and f again */
		memcpy(F + bad_entry[i].at, &bad_entry[i].v, 4);
		CHECK(row_at(PC0, &t) == bad_entry[i].err, "%s", bad_entry[i].what);
	}
	reset();
	c = std_cie();
	size_t f1 = fde(c, PC0, 0x20, NONE);
	f = fde(c, PC0 + 0x40, 0x20, NONE);
	memcpy(F + f + 4, &(uint32_t){ (uint32_t)(f + 4 - f1) }, 4);
	CHECK(row_at(PC0 + 0x40, &t) == SFB_CFI_E_FDE, "CIE pointer at another FDE");
	reset();
	c = cie(1, "zR", 1, -8, 16, INS(0x00), INS(0x0c, 7, 8));
	fde_aug(c, 0xfffffffffffffff0ull, 0x20, 0x00, NULL, 0, NONE);
	CHECK(row_at(0xfffffffffffffff8ull, &t) == SFB_CFI_E_FDE,
	      "FDE range wrapping the address space");
	reset();
	c = std_cie();
	f = fde(c, PC0, 0x20, INS(0x41, 0x0e, 16));
	F[f + 16] = 40; /* the augmentation length */
	CHECK(row_at(PC0, &t) == SFB_CFI_E_FDE, "FDE augmentation longer than the FDE");

	/* Instructions: an FDE of these, its row at PC0 + at. */
	const struct {
		const uint8_t *ins;
		size_t n;
		uint64_t at;
		int err;
		const char *what;
	} bad_ins[] = {
		{ INS(0x3f), 0, SFB_CFI_E_OPCODE, "unknown opcode 0x3f" },
		{ INS(0x2c), 0, SFB_CFI_E_OPCODE, "unsupported opcode 0x2c" },
		{ INS(0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), 0,
		  SFB_CFI_E_LEB, "11-byte ULEB128" },
		{ INS(0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02), 0,
		  SFB_CFI_E_LEB, "ULEB128 past 64 bits" },
		{ INS(0x13, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f), 0,
		  SFB_CFI_E_REGISTER, "10-byte SLEB128 -2^63: offset overflow" },
		{ INS(0x0e, 0x80), 0, SFB_CFI_E_TRUNCATED, "ULEB128 cut by the FDE's end" },
		{ INS(0x04, 1, 2), 0x10, SFB_CFI_E_TRUNCATED, "advance_loc4 cut by the FDE's end" },
		{ INS(0x1d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 0x10, SFB_CFI_E_FDE,
		  "advance wrapping the address space" },
	};
	for (size_t i = 0; i < sizeof bad_ins / sizeof bad_ins[0]; i++) {
		reset();
		fde(std_cie(), PC0, 0x20, bad_ins[i].ins, bad_ins[i].n);
		CHECK(row_at(PC0 + bad_ins[i].at, &t) == bad_ins[i].err, "%s", bad_ins[i].what);
	}
	static uint8_t nops[SFB_CFI_MAX_OPS + 8];
	reset();
	c = std_cie();
	fde(c, PC0, 0x20, nops, SFB_CFI_MAX_OPS - 2);
	CHECK(row_at(PC0, &t) == 0, "%d instructions (CIE's 2 + nops): within budget",
	      SFB_CFI_MAX_OPS);
	reset();
	c = std_cie();
	fde(c, PC0, 0x20, nops, SFB_CFI_MAX_OPS - 1);
	CHECK(row_at(PC0, &t) == SFB_CFI_E_BUDGET, "%d instructions: over budget",
	      SFB_CFI_MAX_OPS + 1);
	/* Rows past the PC are not interpreted, and not held against it. */
	reset();
	c = std_cie();
	fde(c, PC0, 0x20, INS(0x48, 0x3f));
	CHECK(row_at(PC0, &t) == 0 && row_at(PC0 + 8, &t) == SFB_CFI_E_OPCODE,
	      "a bad opcode after the PC's row is not read");
}

/* ---- A real signal frame ---------------------------------------------- */

/* The C library's signal trampoline (the handler's return address), its
 * CFI evaluated on the frame the kernel built: the CFA and every register
 * rule must give the interrupted context's registers, as the ucontext
 * has them.  At the trampoline the stack pointer is the ucontext's
 * address (x86-64: the kernel's frame is the return address, then the
 * ucontext). */
struct sig_result {
	int find, row, lookup, signal_frame, ncompared, nbad, cfa_ok, nregs;
	char bad[256];
};
static struct sig_result SR;
static struct sfb_cfi_section libc_cfi;
static uint64_t tramp_sp, tramp_pc;

static bool sig_reg(void *arg, unsigned n, uint64_t *out)
{
	(void)arg;
	if (n == 7)
		*out = tramp_sp;
	else if (n == 16)
		*out = tramp_pc;
	else
		return false;
	return true;
}

static bool sig_mem(void *arg, uint64_t addr, uint64_t *out)
{
	(void)arg;
	memcpy(out, (const void *)(uintptr_t)addr, 8);
	return true;
}

static int find_cfi(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uint64_t pc = *(uint64_t *)arg, limit = 0;
	const ElfW(Phdr) *hdr = NULL;
	bool holds = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && pc >= info->dlpi_addr + p->p_vaddr &&
		    pc < info->dlpi_addr + p->p_vaddr + p->p_memsz)
			holds = true;
		if (p->p_type == PT_GNU_EH_FRAME)
			hdr = p;
	}
	if (!holds || !hdr)
		return 0;
	uint64_t h = info->dlpi_addr + hdr->p_vaddr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && hdr->p_vaddr >= p->p_vaddr &&
		    hdr->p_vaddr < p->p_vaddr + p->p_memsz)
			limit = info->dlpi_addr + p->p_vaddr + p->p_memsz;
	}
	return sfb_cfi_load(&libc_cfi, (const void *)(uintptr_t)h, hdr->p_memsz, h, limit, 0) == 0;
}

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	static const int greg[17] = { REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
				      REG_RBP, REG_RSP, REG_R8, REG_R9, REG_R10, REG_R11,
				      REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP };
	const ucontext_t *uc = ctx;
	static const struct sfb_cfi_eval_ctx cx = { sig_reg, sig_mem, NULL };
	struct sfb_cfi_fde f;
	struct sfb_cfi_table_row t;
	struct sfb_row r;
	uint64_t cfa, v;
	tramp_pc = (uint64_t)(uintptr_t)__builtin_return_address(0);
	tramp_sp = (uint64_t)(uintptr_t)uc;
	if (!dl_iterate_phdr(find_cfi, &tramp_pc))
		return;
	SR.find = sfb_cfi_find(&libc_cfi, tramp_pc, &f);
	if (SR.find || (SR.row = sfb_cfi_table_row(&libc_cfi, &f, tramp_pc, &t)))
		return;
	SR.signal_frame = t.signal_frame;
	SR.lookup = sfb_cfi_lookup(&libc_cfi, tramp_pc, 6, &r);
	if (t.cfa.kind != SFB_LOC_DWARF ||
	    sfb_cfi_eval(libc_cfi.frame.p, libc_cfi.frame.len, (uint32_t)t.cfa.off, t.cfa.reg, &cx,
			 false, 0, &cfa))
		return;
	SR.cfa_ok = cfa == (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	for (unsigned n = 0; n <= 16; n++) {
		const struct sfb_loc *l = &t.reg[n];
		if (l->kind == SFB_LOC_SAME)
			continue;
		SR.nregs++;
		bool ok = l->kind == SFB_LOC_DWARF && l->deref &&
			  sfb_cfi_eval(libc_cfi.frame.p, libc_cfi.frame.len, (uint32_t)l->off, l->reg,
				       &cx, true, cfa, &v) == 0 &&
			  sig_mem(NULL, v, &v) && v == (uint64_t)uc->uc_mcontext.gregs[greg[n]];
		SR.ncompared++;
		if (!ok) {
			SR.nbad++;
			size_t k = strlen(SR.bad);
			snprintf(SR.bad + k, sizeof SR.bad - k, " %u", n);
		}
	}
}

static void test_sigframe(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, &old);
	raise(SIGUSR1);
	sigaction(SIGUSR1, &old, NULL);
	CHECK(SR.find == 0 && SR.row == 0 && SR.signal_frame == 1,
	      "signal trampoline: an 'S' FDE covers it (%s, %s)", sfb_cfi_err_name(SR.find),
	      sfb_cfi_err_name(SR.row));
	CHECK(SR.cfa_ok, "signal trampoline: its CFA expression gives the interrupted rsp");
	CHECK(SR.ncompared == 17 && SR.nbad == 0,
	      "signal trampoline: %d register rules give the interrupted registers (wrong:%s)",
	      SR.ncompared, SR.bad);
	/* rax..r15 but rbp, and rip: more than a walker's row holds. */
	CHECK(SR.lookup == (SR.nregs - 2 > SFB_ROW_REGS ? SFB_CFI_E_REGISTER : SFB_CFI_OK),
	      "signal trampoline: lookup -> %s (%d rules besides FP and RA, a row holds %d)",
	      sfb_cfi_err_name(SR.lookup), SR.nregs - 2, SFB_ROW_REGS);
}

int main(void)
{
	test_eval();
	test_basic();
	test_advance();
	test_rules();
	test_cfa();
	test_state();
	test_aarch64();
	test_encodings();
	test_augmentations();
	test_lengths();
	test_hdr_encodings();
	test_malformed();
	test_sigframe();
	free(hbuf);
	free(fbuf);
	CHECK_DONE();
}
