/* Unit tests of the SFrame decoder (src/rows/sframe_decode.c) against sections
 * built by hand with tests/rows/sframe_builder.h, and robustness tests on real
 * .sframe sections (this program's own, build/sframe-dump's, other test
 * programs' and the files under tests/fixtures/bin): truncation at every length, single
 * bit flips and random corruption, each loaded from a heap buffer of
 * exactly the section's length.
 *
 * Expected rows are written out from the specifications, not computed by
 * the decoder.  A second, slow reference (sb_ref_lookup: linear scan over
 * sfb_fde_get + sfb_fre_row) checks sfb_lookup's search logic everywhere.
 *
 * Environment: SFB_BUILD (build directory, default "build");
 * SFB_DECODE_WORK (scale of the robustness work, default 1, or 1/8 when
 * SFB_VALGRIND is set; 0 skips it);
 * SFB_WRITE_CORPUS=DIR writes every hand-made section to DIR (used to make
 * the fuzzing seed corpus). */
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "objects/elf_phdrs.h"
#include "sframe_builder.h"
#include "rows/sframe_decode.h"
#include "rows/sframe_format.h"

#define SEC 0x100000ull /* where hand-made sections are "loaded" */
#define CFA SFB_REG_CFA

static struct sb B;                 /* the builder (large: keep it static) */
static uint8_t out[1 << 17];        /* builder output */
static const char *corpus_dir;

/* ---- Small helpers ---------------------------------------------------- */

static struct sfb_loc L_UNDEF(void) { return (struct sfb_loc){ SFB_LOC_UNDEFINED, 0, 0, 0 }; }
static struct sfb_loc L_SAME(void) { return (struct sfb_loc){ SFB_LOC_SAME, 0, 0, 0 }; }
/* value = reg + off */
static struct sfb_loc X(unsigned reg, int32_t off) { return (struct sfb_loc){ SFB_LOC_EXPR, 0, (uint16_t)reg, off }; }
/* value = *(reg + off) */
static struct sfb_loc D(unsigned reg, int32_t off) { return (struct sfb_loc){ SFB_LOC_EXPR, 1, (uint16_t)reg, off }; }

static struct sfb_row ROW(uint64_t fs, uint32_t fz, uint64_t lo, uint64_t hi,
			  struct sfb_loc cfa, struct sfb_loc ra, struct sfb_loc fp,
			  unsigned flags)
{
	struct sfb_row r;
	memset(&r, 0, sizeof r);
	r.func_start = fs;
	r.func_size = fz;
	r.pc_lo = lo;
	r.pc_hi = hi;
	r.cfa = cfa;
	r.ra = ra;
	r.fp = fp;
	r.flags = (uint16_t)flags;
	return r;
}

/* Expected rows of the section under construction. */
static struct sfb_row exp_rows[4096];
static size_t nexp;
#define EXP(...) (exp_rows[nexp++] = ROW(__VA_ARGS__))

static void fmt_loc(char *b, size_t n, const struct sfb_loc *l)
{
	if (l->kind == SFB_LOC_EXPR) {
		char reg[16];
		if (l->reg == CFA)
			snprintf(reg, sizeof reg, "CFA");
		else
			snprintf(reg, sizeof reg, "r%u", l->reg);
		snprintf(b, n, "%s%s%+" PRId32 "%s", l->deref ? "*(" : "", reg, l->off,
			 l->deref ? ")" : "");
	} else {
		snprintf(b, n, "%s/%u/%u/%" PRId32,
			 l->kind == SFB_LOC_SAME ? "same" : l->kind == SFB_LOC_UNDEFINED ? "undef" : "?",
			 l->deref, l->reg, l->off);
	}
}

static const char *fmt_row(const struct sfb_row *r)
{
	static char bufs[2][256];
	static int k;
	char c[48], a[48], f[48];
	char *b = bufs[k++ & 1];
	fmt_loc(c, sizeof c, &r->cfa);
	fmt_loc(a, sizeof a, &r->ra);
	fmt_loc(f, sizeof f, &r->fp);
	snprintf(b, 256, "{func %#" PRIx64 "+%#x pc [%#" PRIx64 ",%#" PRIx64 ") cfa %s ra %s fp %s flags %#x}",
		 r->func_start, r->func_size, r->pc_lo, r->pc_hi, c, a, f, r->flags);
	return b;
}

/* Load a copy of p[0..len) from a heap buffer of exactly len bytes. */
struct loaded {
	struct sfb_section s;
	uint8_t *mem;
	uint32_t *order;
	int err;
};

static void ld_free(struct loaded *l)
{
	free(l->mem);
	free(l->order);
	l->mem = NULL;
	l->order = NULL;
}

static int ld(struct loaded *l, const uint8_t *p, size_t len, uint64_t addr,
	      size_t scratch)
{
	l->mem = malloc(len ? len : 1);
	if (len)
		memcpy(l->mem, p, len);
	else
		l->mem[0] = 0;
	l->order = scratch ? malloc(scratch * sizeof(uint32_t)) : NULL;
	l->err = sfb_section_load(&l->s, l->mem, len, addr, l->order, scratch);
	return l->err;
}

static void write_corpus(const char *name, const uint8_t *p, size_t len)
{
	if (!corpus_dir)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s/%s.sframe", corpus_dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(p, 1, len, f);
		fclose(f);
	}
}

/* Compare a lookup at pc with the expected row (or NOT_FOUND when e is
 * NULL); also checks sfb_find_fde and the slow reference agree. */
static void check_pc(const char *name, const struct sfb_section *s, uint64_t pc,
		     const struct sfb_row *e, const char *what)
{
	struct sfb_row got, ref;
	memset(&got, 0x5a, sizeof got);
	int err = sfb_lookup(s, pc, &got);
	int rerr = sb_ref_lookup(s, pc, &ref, 0);
	struct sfb_fde f;
	int ferr = sfb_find_fde(s, pc, &f);
	if (!e) {
		/* find_fde may still find an FDE (a PCMASK block before its
		 * first FRE), but then one that covers pc. */
		bool fok = ferr == SFB_E_NOT_FOUND ||
			   (ferr == SFB_OK && pc >= f.start && pc - f.start < f.size);
		CHECK(err == SFB_E_NOT_FOUND && rerr == SFB_E_NOT_FOUND && fok,
		      "%s: pc %#" PRIx64 " (%s) not found (lookup %d, ref %d, find %d)", name, pc,
		      what, err, rerr, ferr);
		return;
	}
	bool ok = err == SFB_OK && sb_row_eq(&got, e);
	bool rok = rerr == SFB_OK && sb_row_eq(&ref, e);
	bool fok = ferr == SFB_OK && f.start == e->func_start && f.size == e->func_size;
	if (ok && rok && fok) {
		CHECK(1, "%s: pc %#" PRIx64 " (%s)", name, pc, what);
	} else {
		CHECK(ok && rok && fok,
		      "%s: pc %#" PRIx64 " (%s): lookup %d %s, want %s; ref %d ok=%d; find_fde %d ok=%d",
		      name, pc, what, err, err ? "-" : fmt_row(&got), fmt_row(e), rerr, rok, ferr, fok);
	}
}

static const struct sfb_row *exp_at(uint64_t pc)
{
	for (size_t i = 0; i < nexp; i++)
		if (pc >= exp_rows[i].pc_lo && pc < exp_rows[i].pc_hi)
			return &exp_rows[i];
	return NULL;
}

/* Every expected row at its first byte, middle and last byte; every row
 * boundary from outside (one before the first byte, one past the last). */
static void check_rows(const char *name, const struct sfb_section *s)
{
	for (size_t i = 0; i < nexp; i++) {
		const struct sfb_row *e = &exp_rows[i];
		char what[64];
		snprintf(what, sizeof what, "row %zu first", i);
		check_pc(name, s, e->pc_lo, e, what);
		if (e->pc_hi - e->pc_lo > 2) {
			snprintf(what, sizeof what, "row %zu middle", i);
			check_pc(name, s, e->pc_lo + (e->pc_hi - e->pc_lo) / 2, e, what);
		}
		if (e->pc_hi - e->pc_lo > 1) {
			snprintf(what, sizeof what, "row %zu last", i);
			check_pc(name, s, e->pc_hi - 1, e, what);
		}
		snprintf(what, sizeof what, "row %zu one past", i);
		check_pc(name, s, e->pc_hi, exp_at(e->pc_hi), what);
		snprintf(what, sizeof what, "row %zu one before", i);
		check_pc(name, s, e->pc_lo - 1, exp_at(e->pc_lo - 1), what);
	}
}

/* Build B into out, load it from an exact-size buffer and check every
 * expected row.  Returns the length. */
static size_t build_and_check(const char *name, int want_err)
{
	size_t len = sb_finish(&B, out, sizeof out);
	CHECK(len > 0, "%s: built (%zu bytes)", name, len);
	write_corpus(name, out, len);
	struct loaded l;
	int err = ld(&l, out, len, B.sec_addr, B.nfdes + 1);
	CHECK(err == want_err, "%s: load -> %d (%s), want %d", name, err, sfb_err_name(err), want_err);
	if (err == SFB_OK) {
		CHECK(l.s.num_fdes == B.nfdes && l.s.num_fres == B.nfres_total &&
		      l.s.version == B.version && l.s.abi == B.abi,
		      "%s: header fields (fdes %u fres %u v%u abi %u)", name, l.s.num_fdes,
		      l.s.num_fres, l.s.version, l.s.abi);
		check_rows(name, &l.s);
	}
	ld_free(&l);
	return len;
}

/* ---- Valid sections: AMD64 -------------------------------------------- */

/* Default-type FDEs common to V1, V2 and V3 (AMD64: CFA on rsp 7 or rbp 6,
 * RA at the header's fixed CFA-8, FP tracked).  V2+ adds an FRE with no
 * data words (RA undefined). */
static void amd64_common(unsigned version)
{
	const unsigned RF = SFB_ROW_RA_FIXED;
	struct sfb_loc ra = D(CFA, -8);
	/* A: ADDR1, 1-byte words, including negatives; the last FRE at offset
	 * == size is an empty row that toolchains emit. */
	sb_fde(&B, 0x1000, 0x40, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0x00, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 0x01, SB_CFA_SP, 1, 16, -16);
	SB_FRE(&B, 0x04, SB_CFA_FP, 1, 16, -16);
	SB_FRE(&B, 0x3f, SB_CFA_SP, 1, -128);
	SB_FRE(&B, 0x40, SB_CFA_SP, 1, 8);
	EXP(0x1000, 0x40, 0x1000, 0x1001, X(7, 8), ra, L_SAME(), RF);
	EXP(0x1000, 0x40, 0x1001, 0x1004, X(7, 16), ra, D(CFA, -16), RF);
	EXP(0x1000, 0x40, 0x1004, 0x103f, X(6, 16), ra, D(CFA, -16), RF);
	EXP(0x1000, 0x40, 0x103f, 0x1040, X(7, -128), ra, L_SAME(), RF);
	/* B: ADDR2, 2-byte words, directly after A. */
	sb_fde(&B, 0x1040, 0x300, SB_INFO(SFB_FRE_TYPE_ADDR2, 0, 0), 0, 0);
	SB_FRE(&B, 0x000, SB_CFA_SP, 2, 8);
	SB_FRE(&B, 0x100, SB_CFA_FP, 2, 0x1234, -0x200);
	SB_FRE(&B, 0x2ff, SB_CFA_SP, 2, -32768);
	EXP(0x1040, 0x300, 0x1040, 0x1140, X(7, 8), ra, L_SAME(), RF);
	EXP(0x1040, 0x300, 0x1140, 0x133f, X(6, 0x1234), ra, D(CFA, -0x200), RF);
	EXP(0x1040, 0x300, 0x133f, 0x1340, X(7, -32768), ra, L_SAME(), RF);
	/* C: ADDR4, 4-byte words, after a gap. */
	sb_fde(&B, 0x2000, 0x20000, SB_INFO(SFB_FRE_TYPE_ADDR4, 0, 0), 0, 0);
	SB_FRE(&B, 0x00000, SB_CFA_SP, 4, 8);
	SB_FRE(&B, 0x10000, SB_CFA_FP, 4, 0x7fff0000, INT32_MIN);
	SB_FRE(&B, 0x1ffff, SB_CFA_SP, 4, -305419896);
	EXP(0x2000, 0x20000, 0x2000, 0x12000, X(7, 8), ra, L_SAME(), RF);
	EXP(0x2000, 0x20000, 0x12000, 0x21fff, X(6, 0x7fff0000), ra, D(CFA, INT32_MIN), RF);
	EXP(0x2000, 0x20000, 0x21fff, 0x22000, X(7, -305419896), ra, L_SAME(), RF);
	/* D: a PLT: PCMASK, 4 blocks of 16 bytes (V1 stores no rep size: 16
	 * applies to AMD64). */
	sb_fde(&B, 0x30000, 0x40, SB_INFO(SFB_FRE_TYPE_ADDR1, 1, 0), 0, 16);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 6, SB_CFA_SP, 1, 16);
	for (unsigned k = 0; k < 4; k++) {
		EXP(0x30000, 0x40, 0x30000 + 16 * k, 0x30006 + 16 * k, X(7, 8), ra, L_SAME(),
		    RF | SFB_ROW_PCMASK);
		EXP(0x30000, 0x40, 0x30006 + 16 * k, 0x30010 + 16 * k, X(7, 16), ra, L_SAME(),
		    RF | SFB_ROW_PCMASK);
	}
	/* E: PCMASK whose first FRE does not start at 0 and whose size is not
	 * a multiple of the block: PCs before the first FRE of a block have no
	 * row. */
	sb_fde(&B, 0x30040, 0x18, SB_INFO(SFB_FRE_TYPE_ADDR2, 1, 0), 0, 16);
	SB_FRE(&B, 2, SB_CFA_SP, 1, 24);
	EXP(0x30040, 0x18, 0x30042, 0x30050, X(7, 24), ra, L_SAME(), RF | SFB_ROW_PCMASK);
	EXP(0x30040, 0x18, 0x30052, 0x30058, X(7, 24), ra, L_SAME(), RF | SFB_ROW_PCMASK);
	if (version >= 2) {
		/* F: an FRE with no data words: RA undefined, outermost. */
		sb_fde(&B, 0x30100, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		SB_FRE0(&B, 4, SB_CFA_SP);
		EXP(0x30100, 0x10, 0x30100, 0x30104, X(7, 8), ra, L_SAME(), RF);
		EXP(0x30100, 0x10, 0x30104, 0x30110, L_UNDEF(), L_UNDEF(), L_UNDEF(),
		    SFB_ROW_OUTERMOST);
	}
}

/* V3-only AMD64 FDEs: signal frames, FDEs without FREs, flexible FDEs,
 * PCMASK with a stored rep size. */
static void amd64_v3_extra(void)
{
	const unsigned RF = SFB_ROW_RA_FIXED, FL = SFB_ROW_FLEX;
	struct sfb_loc ra = D(CFA, -8);
	/* Signal trampoline (bit 7 of info). */
	sb_fde(&B, 0x40000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0) | SB_SIGNAL, 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 8, SB_CFA_SP, 2, 0x200, -0x100);
	EXP(0x40000, 0x10, 0x40000, 0x40008, X(7, 8), ra, L_SAME(), RF | SFB_ROW_SIGNAL);
	EXP(0x40000, 0x10, 0x40008, 0x40010, X(7, 0x200), ra, D(CFA, -0x100),
	    RF | SFB_ROW_SIGNAL);
	/* Default FDE with no FREs: the whole function is outermost. */
	sb_fde(&B, 0x40010, 0x8, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	EXP(0x40010, 0x8, 0x40010, 0x40018, L_UNDEF(), L_UNDEF(), L_UNDEF(), SFB_ROW_OUTERMOST);
	/* ... and one that is also a signal frame, right after it. */
	sb_fde(&B, 0x40018, 0x8, SB_INFO(SFB_FRE_TYPE_ADDR4, 0, 0) | SB_SIGNAL, 0, 0);
	EXP(0x40018, 0x8, 0x40018, 0x40020, L_UNDEF(), L_UNDEF(), L_UNDEF(),
	    SFB_ROW_OUTERMOST | SFB_ROW_SIGNAL);
	/* Flexible FDE (info2 type 1). */
	sb_fde(&B, 0x40100, 0x80, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), SFB_FDE_TYPE_FLEX, 0);
	/* CFA pair only: CFA = rsp + 8; RA at the fixed offset; FP unchanged. */
	SB_FRE(&B, 0x00, 0, 1, SB_CTL(7, 0, 1), 8);
	EXP(0x40100, 0x80, 0x40100, 0x40104, X(7, 8), ra, L_SAME(), FL | RF);
	/* DRAP: CFA = *(r10 - 8); RA = *(CFA - 8) as an explicit pair. */
	SB_FRE(&B, 0x04, 0, 1, SB_CTL(10, 1, 1), -8, SB_CTL(0, 1, 0), -8);
	EXP(0x40100, 0x80, 0x40104, 0x40108, D(10, -8), D(CFA, -8), L_SAME(), FL);
	/* CFA = rbp + 16; RA padding word; FP = *(rbp + 0). */
	SB_FRE(&B, 0x08, 0, 1, SB_CTL(6, 0, 1), 16, 0, SB_CTL(6, 1, 1), 0);
	EXP(0x40100, 0x80, 0x40108, 0x40110, X(6, 16), ra, D(6, 0),
	    FL | RF | SFB_ROW_RA_PADDING);
	/* 2-byte words, all three pairs: RA = rbx - 4 (a register, no deref),
	 * FP = *(CFA - 16). */
	SB_FRE(&B, 0x10, 0, 2, SB_CTL(7, 0, 1), 0x1000, SB_CTL(3, 0, 1), -4, SB_CTL(0, 1, 0), -16);
	EXP(0x40100, 0x80, 0x40110, 0x40120, X(7, 0x1000), X(3, -4), D(CFA, -16), FL);
	/* No data words in a flexible FDE: outermost. */
	SB_FRE0(&B, 0x20, 0);
	EXP(0x40100, 0x80, 0x40120, 0x40130, L_UNDEF(), L_UNDEF(), L_UNDEF(),
	    FL | SFB_ROW_OUTERMOST);
	/* 4-byte words: large register numbers (0xfffe is the largest that is
	 * not SFB_REG_CFA), CFA-based RA with reg_p clear and regnum bits set
	 * (ignored), extreme offsets. */
	SB_FRE(&B, 0x30, 0, 4, SB_CTL(0x1234, 0, 1), -100000, SB_CTL(5, 1, 0), -8,
	       SB_CTL(0xfffe, 1, 1), INT32_MAX);
	EXP(0x40100, 0x80, 0x40130, 0x40180, X(0x1234, -100000), D(CFA, -8), D(0xfffe, INT32_MAX),
	    FL);
	/* V3 PCMASK with a stored rep size of 32, 3 blocks. */
	sb_fde(&B, 0x40200, 0x60, SB_INFO(SFB_FRE_TYPE_ADDR1, 1, 0), 0, 32);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 0x10, SB_CFA_SP, 1, 16);
	SB_FRE(&B, 0x20, SB_CFA_SP, 1, 99); /* at the block end: never applies */
	for (unsigned k = 0; k < 3; k++) {
		EXP(0x40200, 0x60, 0x40200 + 32 * k, 0x40210 + 32 * k, X(7, 8), ra, L_SAME(),
		    RF | SFB_ROW_PCMASK);
		EXP(0x40200, 0x60, 0x40210 + 32 * k, 0x40220 + 32 * k, X(7, 16), ra, L_SAME(),
		    RF | SFB_ROW_PCMASK);
	}
	/* A flexible PCMASK FDE with a signal bit. */
	sb_fde(&B, 0x40300, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 1, 0) | SB_SIGNAL,
	       SFB_FDE_TYPE_FLEX, 16);
	SB_FRE(&B, 0, 0, 1, SB_CTL(7, 0, 1), 8);
	for (unsigned k = 0; k < 2; k++)
		EXP(0x40300, 0x20, 0x40300 + 16 * k, 0x40310 + 16 * k, X(7, 8), ra, L_SAME(),
		    FL | RF | SFB_ROW_PCMASK | SFB_ROW_SIGNAL);
}

struct layout {
	const char *name;
	unsigned flags;
	uint8_t aux;
	uint32_t fde_gap, fre_gap, tail;
	bool fre_first;
};

static void test_amd64(void)
{
	static const struct layout lay[] = {
		{ "plain", SFB_F_FDE_SORTED, 0, 0, 0, 0, false },
		{ "pcrel", SFB_F_FDE_SORTED | SFB_F_FDE_FUNC_START_PCREL, 0, 0, 0, 0, false },
		{ "aux-gaps", SFB_F_FDE_SORTED | SFB_F_FDE_FUNC_START_PCREL, 7, 5, 3, 9, false },
		{ "fre-first", SFB_F_FDE_FUNC_START_PCREL, 255, 1, 17, 0, true },
		{ "nosort-flag", 0, 3, 0, 0, 0, false },
	};
	char name[96];
	for (unsigned v = 1; v <= 3; v++) {
		for (size_t i = 0; i < sizeof lay / sizeof lay[0]; i++) {
			unsigned flags = lay[i].flags;
			if (v == 1) {
				if (flags & SFB_F_FDE_FUNC_START_PCREL)
					flags = (flags & ~SFB_F_FDE_FUNC_START_PCREL) | SFB_F_FRAME_POINTER;
			}
			sb_init(&B, v, SFB_ABI_AMD64_LE, flags, SEC);
			B.aux_len = lay[i].aux;
			B.fde_gap = lay[i].fde_gap;
			B.fre_gap = lay[i].fre_gap;
			B.tail = lay[i].tail;
			B.fre_first = lay[i].fre_first;
			nexp = 0;
			amd64_common(v);
			if (v == 3)
				amd64_v3_extra();
			snprintf(name, sizeof name, "amd64-v%u-%s", v, lay[i].name);
			build_and_check(name, SFB_OK);
		}
	}

	/* A header with a fixed FP offset: FP is not tracked per FRE. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	B.fixed_fp = -16;
	nexp = 0;
	sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 1, SB_CFA_FP, 1, 16);
	EXP(0x1000, 0x10, 0x1000, 0x1001, X(7, 8), D(CFA, -8), D(CFA, -16), SFB_ROW_RA_FIXED);
	EXP(0x1000, 0x10, 0x1001, 0x1010, X(6, 16), D(CFA, -8), D(CFA, -16), SFB_ROW_RA_FIXED);
	build_and_check("amd64-v2-fixed-fp", SFB_OK);

	/* The same section loaded at another address: everything moves. */
	sb_init(&B, 3, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED | SFB_F_FDE_FUNC_START_PCREL,
		0x7f0000001000ull);
	nexp = 0;
	sb_fde(&B, 0x7f0000000000ull, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	EXP(0x7f0000000000ull, 0x10, 0x7f0000000000ull, 0x7f0000000010ull, X(7, 8), D(CFA, -8),
	    L_SAME(), SFB_ROW_RA_FIXED);
	sb_fde(&B, 0x7f0000002000ull, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	EXP(0x7f0000002000ull, 0x10, 0x7f0000002000ull, 0x7f0000002010ull, X(7, 8), D(CFA, -8),
	    L_SAME(), SFB_ROW_RA_FIXED);
	build_and_check("amd64-v3-high", SFB_OK);

	/* V3 with a 64-bit start offset far beyond 32 bits, not PC-relative. */
	sb_init(&B, 3, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, 0x1000);
	nexp = 0;
	sb_fde(&B, 0x123456789000ull, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	EXP(0x123456789000ull, 0x20, 0x123456789000ull, 0x123456789020ull, X(7, 8), D(CFA, -8),
	    L_SAME(), SFB_ROW_RA_FIXED);
	build_and_check("amd64-v3-far", SFB_OK);

	/* V1/V2 with a start offset that is negative relative to the section. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, 0x80000000ull);
	nexp = 0;
	sb_fde(&B, 0x1000, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	EXP(0x1000, 0x20, 0x1000, 0x1020, X(7, 8), D(CFA, -8), L_SAME(), SFB_ROW_RA_FIXED);
	build_and_check("amd64-v2-negative-start", SFB_OK);
}

/* ---- Valid sections: AArch64 ------------------------------------------ */

/* SP 31, FP 29; RA tracked: words are CFA, RA, FP. */
static void aarch64_common(unsigned version)
{
	const unsigned MR = SFB_ROW_MANGLED_RA, PB = SFB_ROW_PAUTH_B;
	sb_fde(&B, 0x4000, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0x00, SB_CFA_SP, 1, 0);
	SB_FRE(&B, 0x04, SB_CFA_SP | SB_MANGLED, 1, 16, -8, -16);
	SB_FRE(&B, 0x08, SB_CFA_FP | SB_MANGLED, 1, 16, -8, -16);
	SB_FRE(&B, 0x10, SB_CFA_SP | SB_MANGLED, 1, 32, -24);
	SB_FRE(&B, 0x1c, SB_CFA_SP, 1, 0);
	EXP(0x4000, 0x20, 0x4000, 0x4004, X(31, 0), L_SAME(), L_SAME(), 0);
	EXP(0x4000, 0x20, 0x4004, 0x4008, X(31, 16), D(CFA, -8), D(CFA, -16), MR);
	EXP(0x4000, 0x20, 0x4008, 0x4010, X(29, 16), D(CFA, -8), D(CFA, -16), MR);
	EXP(0x4000, 0x20, 0x4010, 0x401c, X(31, 32), D(CFA, -24), L_SAME(), MR);
	EXP(0x4000, 0x20, 0x401c, 0x4020, X(31, 0), L_SAME(), L_SAME(), 0);
	/* Key B (bit 5 of the FDE info byte), 2-byte words, ADDR2. */
	sb_fde(&B, 0x4020, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR2, 0, 1), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 2, 0);
	SB_FRE(&B, 4, SB_CFA_SP | SB_MANGLED, 2, 0x200, -0x1f8, -0x200);
	EXP(0x4020, 0x10, 0x4020, 0x4024, X(31, 0), L_SAME(), L_SAME(), PB);
	EXP(0x4020, 0x10, 0x4024, 0x4030, X(31, 0x200), D(CFA, -0x1f8), D(CFA, -0x200), PB | MR);
	/* 4-byte words, ADDR4. */
	sb_fde(&B, 0x5000, 0x100, SB_INFO(SFB_FRE_TYPE_ADDR4, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 4, 0);
	SB_FRE(&B, 0x80, SB_CFA_FP, 4, 0x10000, -0x10000, -0x10008);
	EXP(0x5000, 0x100, 0x5000, 0x5080, X(31, 0), L_SAME(), L_SAME(), 0);
	EXP(0x5000, 0x100, 0x5080, 0x5100, X(29, 0x10000), D(CFA, -0x10000), D(CFA, -0x10008), 0);
	if (version >= 2) {
		sb_fde(&B, 0x5100, 0x8, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE0(&B, 0, SB_CFA_SP);
		EXP(0x5100, 0x8, 0x5100, 0x5108, L_UNDEF(), L_UNDEF(), L_UNDEF(), SFB_ROW_OUTERMOST);
	}
	if (version >= 3) {
		const unsigned FL = SFB_ROW_FLEX;
		sb_fde(&B, 0x5200, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 1), SFB_FDE_TYPE_FLEX, 0);
		SB_FRE(&B, 0x00, 0, 1, SB_CTL(31, 0, 1), 0);
		SB_FRE(&B, 0x08, SB_MANGLED, 2, SB_CTL(29, 0, 1), 32, SB_CTL(0, 1, 0), -8,
		       SB_CTL(0, 1, 0), -16);
		SB_FRE(&B, 0x10, 0, 1, SB_CTL(31, 0, 1), 16, 0, SB_CTL(19, 0, 1), 0);
		EXP(0x5200, 0x20, 0x5200, 0x5208, X(31, 0), L_SAME(), L_SAME(), FL | PB);
		EXP(0x5200, 0x20, 0x5208, 0x5210, X(29, 32), D(CFA, -8), D(CFA, -16), FL | PB | MR);
		EXP(0x5200, 0x20, 0x5210, 0x5220, X(31, 16), L_SAME(), X(19, 0),
		    FL | PB | SFB_ROW_RA_PADDING);
		/* Zero-FRE FDE on AArch64. */
		sb_fde(&B, 0x5220, 0x4, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		EXP(0x5220, 0x4, 0x5220, 0x5224, L_UNDEF(), L_UNDEF(), L_UNDEF(), SFB_ROW_OUTERMOST);
	}
}

static void test_aarch64(void)
{
	char name[64];
	for (unsigned v = 1; v <= 3; v++) {
		for (unsigned be = 0; be <= 1; be++) {
			unsigned flags = SFB_F_FDE_SORTED;
			if (v >= 2)
				flags |= SFB_F_FDE_FUNC_START_PCREL;
			sb_init(&B, v, be ? SFB_ABI_AARCH64_BE : SFB_ABI_AARCH64_LE, flags, SEC);
			CHECK(B.big == (be != 0), "aarch64 builder byte order");
			B.aux_len = be ? 4 : 0;
			nexp = 0;
			aarch64_common(v);
			snprintf(name, sizeof name, "aarch64-%s-v%u", be ? "be" : "le", v);
			build_and_check(name, SFB_OK);
		}
	}
}

/* ---- Valid sections: s390x -------------------------------------------- */

/* SP 15, FP 11.  CFA offsets are stored as (off - 160) / 8.  RA word 0 is
 * padding ("RA not saved").  V2: odd RA/FP words are (regnum << 1) | 1. */
static void test_s390x(void)
{
	char name[64];
	for (unsigned v = 2; v <= 3; v++) {
		sb_init(&B, v, SFB_ABI_S390X_BE, SFB_F_FDE_SORTED | SFB_F_FDE_FUNC_START_PCREL, SEC);
		nexp = 0;
		const unsigned PAD = SFB_ROW_RA_PADDING;
		sb_fde(&B, 0x6000, 0x40, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0x00, SB_CFA_SP, 1, 0);
		SB_FRE(&B, 0x06, SB_CFA_SP, 1, 1, -48, -72);
		SB_FRE(&B, 0x0a, SB_CFA_SP, 1, -1, 0, -72);
		SB_FRE(&B, 0x0e, SB_CFA_FP, 1, -20, -48);
		SB_FRE(&B, 0x12, SB_CFA_SP, 2, 0x1000, -48);
		SB_FRE(&B, 0x20, SB_CFA_SP, 1, 0, 65, 67);
		SB_FRE(&B, 0x30, SB_CFA_SP, 4, 2, 0, 23);
		EXP(0x6000, 0x40, 0x6000, 0x6006, X(15, 160), L_SAME(), L_SAME(), 0);
		EXP(0x6000, 0x40, 0x6006, 0x600a, X(15, 168), D(CFA, -48), D(CFA, -72), 0);
		EXP(0x6000, 0x40, 0x600a, 0x600e, X(15, 152), L_SAME(), D(CFA, -72), PAD);
		EXP(0x6000, 0x40, 0x600e, 0x6012, X(11, 0), D(CFA, -48), L_SAME(), 0);
		EXP(0x6000, 0x40, 0x6012, 0x6020, X(15, 0x8000 + 160), D(CFA, -48), L_SAME(), 0);
		if (v == 2) {
			/* RA in register 32, FP in register 33. */
			EXP(0x6000, 0x40, 0x6020, 0x6030, X(15, 160), X(32, 0), X(33, 0), 0);
			EXP(0x6000, 0x40, 0x6030, 0x6040, X(15, 176), L_SAME(), X(11, 0), PAD);
		} else {
			/* V3 default FDEs have no register encoding: odd offsets
			 * are plain stack slots. */
			EXP(0x6000, 0x40, 0x6020, 0x6030, X(15, 160), D(CFA, 65), D(CFA, 67), 0);
			EXP(0x6000, 0x40, 0x6030, 0x6040, X(15, 176), L_SAME(), D(CFA, 23), PAD);
		}
		sb_fde(&B, 0x6040, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE0(&B, 0, SB_CFA_SP);
		SB_FRE(&B, 8, SB_CFA_SP, 1, 0);
		EXP(0x6040, 0x10, 0x6040, 0x6048, L_UNDEF(), L_UNDEF(), L_UNDEF(), SFB_ROW_OUTERMOST);
		EXP(0x6040, 0x10, 0x6048, 0x6050, X(15, 160), L_SAME(), L_SAME(), 0);
		if (v == 3) {
			const unsigned FL = SFB_ROW_FLEX;
			/* Flexible FDE: the CFA offset is still stored adjusted;
			 * RA and FP in floating-point registers (DWARF 16, 17). */
			sb_fde(&B, 0x6100, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), SFB_FDE_TYPE_FLEX, 0);
			SB_FRE(&B, 0, 0, 2, SB_CTL(15, 0, 1), 2, SB_CTL(16, 0, 1), 0, SB_CTL(17, 0, 1), 0);
			SB_FRE(&B, 8, 0, 1, SB_CTL(11, 0, 1), -20, 0, SB_CTL(0, 1, 0), -72);
			EXP(0x6100, 0x10, 0x6100, 0x6108, X(15, 176), X(16, 0), X(17, 0), FL);
			EXP(0x6100, 0x10, 0x6108, 0x6110, X(11, 0), L_SAME(), D(CFA, -72), FL | PAD);
		}
		snprintf(name, sizeof name, "s390x-v%u", v);
		build_and_check(name, SFB_OK);
	}
}

/* ---- Empty sections ---------------------------------------------------- */

static void test_empty(void)
{
	static const unsigned abis[] = { SFB_ABI_AMD64_LE, SFB_ABI_AARCH64_BE, SFB_ABI_S390X_BE };
	for (unsigned v = 1; v <= 3; v++) {
		for (size_t a = 0; a < 3; a++) {
			if (v == 1 && abis[a] == SFB_ABI_S390X_BE)
				continue;
			sb_init(&B, v, abis[a], SFB_F_FDE_SORTED, SEC);
			size_t len = sb_finish(&B, out, sizeof out);
			char name[64];
			snprintf(name, sizeof name, "empty-v%u-abi%u", v, abis[a]);
			write_corpus(name, out, len);
			struct loaded l;
			int err = ld(&l, out, len, SEC, 0);
			CHECK(len == 28 && err == SFB_OK && l.s.num_fdes == 0 && l.s.pc_lo == 0 &&
			      l.s.pc_hi == 0,
			      "%s: loads, covers nothing (err %d)", name, err);
			if (err == SFB_OK) {
				static const uint64_t pcs[] = { 0, 1, SEC, 0x1000, UINT64_MAX };
				bool nf = true;
				struct sfb_row row;
				struct sfb_fde f;
				for (size_t i = 0; i < 5; i++)
					nf = nf && sfb_lookup(&l.s, pcs[i], &row) == SFB_E_NOT_FOUND &&
					     sfb_find_fde(&l.s, pcs[i], &f) == SFB_E_NOT_FOUND;
				CHECK(nf, "%s: every lookup is NOT_FOUND", name);
				CHECK(sfb_fde_get(&l.s, 0, &f) == SFB_E_NOT_FOUND,
				      "%s: fde_get(0) is NOT_FOUND", name);
			}
			ld_free(&l);
		}
	}
	/* No FDEs, but FRE bytes and an aux header: still empty. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	B.aux_len = 3;
	B.tail = 5;
	size_t len = sb_finish(&B, out, sizeof out);
	struct loaded l;
	CHECK(ld(&l, out, len, SEC, 0) == SFB_OK && l.s.pc_hi == 0, "empty section with aux header and tail loads");
	ld_free(&l);
}

/* ---- Unsorted FDEs ------------------------------------------------------ */

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static void test_unsorted(void)
{
	static const unsigned perm[] = { 3, 0, 6, 1, 5, 2, 4 };
	for (unsigned v = 1; v <= 3; v++) {
		for (unsigned sorted_flag = 0; sorted_flag <= 1; sorted_flag++) {
			sb_init(&B, v, SFB_ABI_AMD64_LE, sorted_flag ? SFB_F_FDE_SORTED : 0, SEC);
			nexp = 0;
			for (unsigned i = 0; i < 7; i++) {
				uint64_t st = 0x1000 + 0x100 * perm[i];
				sb_fde(&B, st, 0x80 + perm[i], SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
				SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
				SB_FRE(&B, 1 + perm[i], SB_CFA_SP, 1, 16 + 8 * (int)perm[i]);
				EXP(st, 0x80 + perm[i], st, st + 1 + perm[i], X(7, 8), D(CFA, -8), L_SAME(),
				    SFB_ROW_RA_FIXED);
				EXP(st, 0x80 + perm[i], st + 1 + perm[i], st + 0x80 + perm[i],
				    X(7, 16 + 8 * (int)perm[i]), D(CFA, -8), L_SAME(), SFB_ROW_RA_FIXED);
			}
			size_t len = sb_finish(&B, out, sizeof out);
			char name[64];
			snprintf(name, sizeof name, "unsorted-v%u%s", v, sorted_flag ? "-flagged" : "");
			write_corpus(name, out, len);
			struct loaded l;
			int err = ld(&l, out, len, SEC, 0);
			CHECK(err == SFB_E_UNSORTED, "%s: no scratch -> %d", name, err);
			ld_free(&l);
			err = ld(&l, out, len, SEC, 6);
			CHECK(err == SFB_E_UNSORTED, "%s: scratch of 6 for 7 -> %d", name, err);
			ld_free(&l);
			err = ld(&l, out, len, SEC, 7);
			CHECK(err == SFB_OK && l.s.order == l.order, "%s: scratch of 7 -> %d", name, err);
			if (err == SFB_OK) {
				bool ok = true;
				for (unsigned k = 0; k < 7; k++)
					ok = ok && perm[l.order[k]] == k;
				CHECK(ok, "%s: order array sorts the FDEs", name);
				CHECK(l.s.pc_lo == 0x1000 && l.s.pc_hi == 0x1600 + 0x86,
				      "%s: pc range [%#" PRIx64 ",%#" PRIx64 ")", name, l.s.pc_lo,
				      l.s.pc_hi);
				check_rows(name, &l.s);
			}
			ld_free(&l);
		}
	}
	/* Sorted FDEs without the SORTED flag need no scratch. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, 0, SEC);
	for (unsigned i = 0; i < 3; i++) {
		sb_fde(&B, 0x1000 + 0x10 * i, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	}
	size_t len = sb_finish(&B, out, sizeof out);
	struct loaded l;
	int err = ld(&l, out, len, SEC, 0);
	CHECK(err == SFB_OK && l.s.order == NULL, "sorted without flag: loads, no order (%d)", err);
	ld_free(&l);

	/* Many FDEs in random order with random sizes and gaps; every PC. */
	for (unsigned v = 2; v <= 3; v++) {
		static uint32_t idx[300];
		const unsigned n = 300;
		sb_init(&B, v, SFB_ABI_AARCH64_LE, SFB_F_FDE_SORTED | SFB_F_FDE_FUNC_START_PCREL, SEC);
		nexp = 0;
		for (unsigned i = 0; i < n; i++)
			idx[i] = i;
		for (unsigned i = n - 1; i > 0; i--) {
			unsigned j = rnd() % (i + 1), t = idx[i];
			idx[i] = idx[j];
			idx[j] = t;
		}
		for (unsigned i = 0; i < n; i++) {
			uint64_t st = 0x10000 + 0x40ull * idx[i];
			uint32_t sz = 1 + idx[i] % 0x30, cut = idx[i] % sz;
			sb_fde(&B, st, sz, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
			SB_FRE(&B, 0, SB_CFA_SP, 1, 0);
			if (cut) {
				SB_FRE(&B, cut, SB_CFA_FP, 1, (int)(idx[i] % 120), -8, -16);
			}
		}
		size_t ln = sb_finish(&B, out, sizeof out);
		char name[64];
		snprintf(name, sizeof name, "shuffled-300-v%u", v);
		write_corpus(name, out, ln);
		err = ld(&l, out, ln, SEC, n);
		CHECK(err == SFB_OK, "%s: loads (%d)", name, err);
		if (err == SFB_OK) {
			unsigned bad = 0;
			uint64_t badpc = 0;
			for (uint64_t pc = 0x10000 - 4; pc < 0x10000 + 0x40ull * n + 4; pc++) {
				uint64_t k = (pc - 0x10000) / 0x40, o = (pc - 0x10000) % 0x40;
				struct sfb_row want, got;
				bool in = pc >= 0x10000 && k < n && o < 1 + k % 0x30;
				int e = sfb_lookup(&l.s, pc, &got);
				if (!in) {
					if (e != SFB_E_NOT_FOUND && !bad++)
						badpc = pc;
					continue;
				}
				uint64_t st = 0x10000 + 0x40 * k;
				uint32_t sz = 1 + k % 0x30, cut = k % sz;
				if (cut && o >= cut)
					want = ROW(st, sz, st + cut, st + sz, X(29, (int)(k % 120)), D(CFA, -8),
						   D(CFA, -16), 0);
				else
					want = ROW(st, sz, st, st + (cut ? cut : sz), X(31, 0), L_SAME(),
						   L_SAME(), 0);
				if ((e != SFB_OK || !sb_row_eq(&got, &want)) && !bad++)
					badpc = pc;
			}
			CHECK(bad == 0, "%s: every PC right (%u wrong, first %#" PRIx64 ")", name, bad,
			      badpc);
		}
		ld_free(&l);
	}
}

/* ---- Rejections --------------------------------------------------------- */

static void expect_err_buf(const char *name, const uint8_t *p, size_t len, uint64_t addr,
			   int want)
{
	struct loaded l;
	int err = ld(&l, p, len, addr, len / 16 + 1);
	CHECK(err == want, "reject %s: got %d (%s), want %d (%s)", name, err, sfb_err_name(err),
	      want, sfb_err_name(want));
	ld_free(&l);
	write_corpus(name, p, len);
}

/* Finish B and expect a rejection. */
static void expect_err(const char *name, int want)
{
	size_t len = sb_finish(&B, out, sizeof out);
	if (!len) {
		CHECK(0, "reject %s: builder failed", name);
		return;
	}
	expect_err_buf(name, out, len, B.sec_addr, want);
}

/* A small valid V2 AMD64 section: two FDEs, three FREs.  Checked valid. */
static size_t good_v2(unsigned version, unsigned abi)
{
	unsigned flags = SFB_F_FDE_SORTED | (version >= 2 ? SFB_F_FDE_FUNC_START_PCREL : 0);
	sb_init(&B, version, abi, flags, SEC);
	sb_fde(&B, 0x1000, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 4, SB_CFA_SP, 1, 16);
	sb_fde(&B, 0x1020, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	return sb_finish(&B, out, sizeof out);
}

static void test_reject_header(void)
{
	char name[96];
	/* Truncated header at every length < 28 with a valid start. */
	size_t len = good_v2(2, SFB_ABI_AMD64_LE);
	struct loaded l;
	CHECK(ld(&l, out, len, SEC, 4) == SFB_OK, "good_v2 is valid");
	ld_free(&l);
	bool all = true;
	for (size_t n = 0; n < 28; n++) {
		int err = ld(&l, out, n, SEC, 4);
		all = all && err == SFB_E_TRUNCATED;
		ld_free(&l);
	}
	CHECK(all, "reject header truncated at 0..27 bytes: TRUNCATED");
	/* Truncated anywhere inside the sub-sections. */
	all = true;
	for (size_t n = 28; n < len; n++) {
		int err = ld(&l, out, n, SEC, 4);
		all = all && err == SFB_E_TRUNCATED;
		ld_free(&l);
	}
	CHECK(all, "reject section truncated at 28..len-1: TRUNCATED");

	/* Magic. */
	static const uint16_t bad_magic[] = { 0xdee3, 0, 0xe2df, 0xffff, 0xdede };
	for (size_t i = 0; i < 5; i++) {
		len = good_v2(2, SFB_ABI_AMD64_LE);
		sb_patch(&B, out, SB_H_MAGIC, 2, bad_magic[i]);
		snprintf(name, sizeof name, "magic-%04x", bad_magic[i]);
		expect_err_buf(name, out, len, SEC, SFB_E_MAGIC);
	}
	/* Versions 0, 4, 255. */
	static const uint8_t bad_ver[] = { 0, 4, 255 };
	for (size_t i = 0; i < 3; i++) {
		len = good_v2(2, SFB_ABI_AMD64_LE);
		out[SB_H_VERSION] = bad_ver[i];
		snprintf(name, sizeof name, "version-%u", bad_ver[i]);
		expect_err_buf(name, out, len, SEC, SFB_E_VERSION);
	}
	/* Undefined flag bits per version. */
	static const struct { unsigned v, flag; } bad_flags[] = {
		{ 1, SFB_F_FDE_FUNC_START_PCREL }, { 1, 0x08 }, { 1, 0x80 },
		{ 2, 0x08 }, { 2, 0x10 }, { 2, 0x80 },
		{ 3, SFB_F_FRAME_POINTER }, { 3, 0x08 }, { 3, 0x40 },
	};
	for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
		len = good_v2(bad_flags[i].v, SFB_ABI_AMD64_LE);
		out[SB_H_FLAGS] |= (uint8_t)bad_flags[i].flag;
		snprintf(name, sizeof name, "flags-v%u-%#x", bad_flags[i].v, bad_flags[i].flag);
		expect_err_buf(name, out, len, SEC, SFB_E_FLAGS);
	}
	/* FRAME_POINTER is fine in V1 and V2. */
	for (unsigned v = 1; v <= 2; v++) {
		len = good_v2(v, SFB_ABI_AMD64_LE);
		out[SB_H_FLAGS] |= SFB_F_FRAME_POINTER;
		CHECK(ld(&l, out, len, SEC, 4) == SFB_OK, "V%u FRAME_POINTER flag accepted", v);
		ld_free(&l);
	}
	/* Unknown ABIs; ABIs of the wrong byte order. */
	static const uint8_t bad_abi[] = { 0, 5, 6, 0xff };
	for (size_t i = 0; i < 4; i++) {
		len = good_v2(2, SFB_ABI_AMD64_LE);
		out[SB_H_ABI] = bad_abi[i];
		snprintf(name, sizeof name, "abi-%u", bad_abi[i]);
		expect_err_buf(name, out, len, SEC, SFB_E_ABI);
	}
	static const struct { unsigned v, abi; bool big; const char *n; } wrong_order[] = {
		{ 2, SFB_ABI_AMD64_LE, true, "amd64-big" },
		{ 2, SFB_ABI_AARCH64_LE, true, "aarch64le-big" },
		{ 2, SFB_ABI_AARCH64_BE, false, "aarch64be-little" },
		{ 3, SFB_ABI_S390X_BE, false, "s390x-little" },
		{ 1, SFB_ABI_S390X_BE, true, "s390x-v1" },
	};
	for (size_t i = 0; i < 5; i++) {
		sb_init(&B, wrong_order[i].v, wrong_order[i].abi, SFB_F_FDE_SORTED, SEC);
		B.big = wrong_order[i].big;
		B.fixed_ra = -8;
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		snprintf(name, sizeof name, "abi-%s", wrong_order[i].n);
		expect_err(name, SFB_E_ABI);
	}
	/* AMD64 without a fixed RA offset. */
	len = good_v2(2, SFB_ABI_AMD64_LE);
	out[SB_H_FIXED_RA] = 0;
	expect_err_buf("amd64-fixed-ra-0", out, len, SEC, SFB_E_HEADER);

	/* Sub-sections past the end. */
	len = good_v2(2, SFB_ABI_AMD64_LE);
	uint32_t frelen = (uint32_t)sb_getv(false, out + SB_H_FRE_LEN, 4);
	sb_patch(&B, out, SB_H_FRE_LEN, 4, frelen + 1);
	expect_err_buf("fre-len-past-end", out, len, SEC, SFB_E_TRUNCATED);
	len = good_v2(2, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_FREOFF, 4, 0xffffffffu);
	expect_err_buf("freoff-huge", out, len, SEC, SFB_E_TRUNCATED);
	len = good_v2(2, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_FDEOFF, 4, len);
	expect_err_buf("fdeoff-past-end", out, len, SEC, SFB_E_TRUNCATED);
	/* The FDE offset is checked even when there are no FDEs to read. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	len = sb_finish(&B, out, sizeof out);
	sb_patch(&B, out, SB_H_FDEOFF, 4, len);
	expect_err_buf("fdeoff-past-end-no-fdes", out, len, SEC, SFB_E_TRUNCATED);
	len = good_v2(2, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_NUM_FDES, 4, 1000);
	expect_err_buf("num-fdes-past-end", out, len, SEC, SFB_E_TRUNCATED);
	len = good_v2(2, SFB_ABI_AMD64_LE);
	out[SB_H_AUXLEN] = (uint8_t)(len - 27);
	expect_err_buf("auxlen-past-end", out, len, SEC, SFB_E_TRUNCATED);
	/* Sub-sections overlapping each other. */
	len = good_v2(2, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_FREOFF, 4, 0);
	sb_patch(&B, out, SB_H_FRE_LEN, 4, 20);
	expect_err_buf("fre-over-fdes", out, len, SEC, SFB_E_HEADER);
	len = good_v2(2, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_FREOFF, 4, 39);
	expect_err_buf("fre-over-last-fde-byte", out, len, SEC, SFB_E_HEADER);
	sb_init(&B, 3, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	B.fre_first = true;
	sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	len = sb_finish(&B, out, sizeof out);
	CHECK(ld(&l, out, len, SEC, 1) == SFB_OK, "fre-first V3 is valid");
	ld_free(&l);
	sb_patch(&B, out, SB_H_FDEOFF, 4, B.fre_sub_at - 28 + B.fres_len - 1);
	expect_err_buf("fdes-over-fre-last-byte", out, len, SEC, SFB_E_HEADER);
	/* Too big. */
	len = good_v2(2, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_NUM_FDES, 4, (1u << 28) + 1);
	expect_err_buf("num-fdes-2^28+1", out, len, SEC, SFB_E_TOO_BIG);
	sb_patch(&B, out, SB_H_NUM_FDES, 4, 0xffffffffu);
	expect_err_buf("num-fdes-2^32-1", out, len, SEC, SFB_E_TOO_BIG);
	{
		/* A length above 4 GiB is refused before any byte is read. */
		struct sfb_section s;
		int err = sfb_section_load(&s, out, (size_t)1 << 33, SEC, NULL, 0);
		CHECK(err == SFB_E_TOO_BIG, "reject len 8 GiB: %d", err);
	}
	{
		/* Exactly 4 GiB is one byte too many for 32-bit offsets. */
		struct sfb_section s;
		good_v2(2, SFB_ABI_AMD64_LE);
		int err = sfb_section_load(&s, out, (size_t)1 << 32, SEC, NULL, 0);
		CHECK(err == SFB_E_TOO_BIG, "reject len 4 GiB: %d", err);
	}
	/* Header FRE count mismatch; FDE count too small. */
	len = good_v2(2, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_NUM_FRES, 4, 4);
	expect_err_buf("num-fres-plus-1", out, len, SEC, SFB_E_COUNT);
	sb_patch(&B, out, SB_H_NUM_FRES, 4, 2);
	expect_err_buf("num-fres-minus-1", out, len, SEC, SFB_E_COUNT);
	len = good_v2(3, SFB_ABI_AMD64_LE);
	sb_patch(&B, out, SB_H_NUM_FDES, 4, 1);
	expect_err_buf("v3-num-fdes-minus-1", out, len, SEC, SFB_E_COUNT);
}

/* B: a section at sec of one FDE of size bytes whose start offset is
 * raw_start as written (not computed from its address), one FRE. */
static void raw_start_fde(unsigned version, uint64_t sec, uint32_t size, int64_t raw_start)
{
	sb_init(&B, version, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, sec);
	sb_fde(&B, 0, size, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	B.fde[0].raw_start_set = true;
	B.fde[0].raw_start = raw_start;
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
}

static void test_reject_fde(void)
{
	char name[96];
	size_t len;
	struct loaded l;
	/* start + size wraps. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, 0xffffffffffff0000ull);
	sb_fde(&B, 0xffffffffffff8000ull, 0x10000, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	expect_err("v2-fde-wraps", SFB_E_FDE_RANGE);
	/* ... but ending exactly at 2^64 - 1 is fine. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, 0xffffffffffff0000ull);
	sb_fde(&B, 0xffffffffffff8000ull, 0x7fff, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	len = sb_finish(&B, out, sizeof out);
	CHECK(ld(&l, out, len, B.sec_addr, 1) == SFB_OK, "fde ending at 2^64-1 loads");
	if (l.err == SFB_OK) {
		struct sfb_row r;
		CHECK(sfb_lookup(&l.s, 0xfffffffffffffffeull, &r) == SFB_OK &&
		      r.pc_hi == 0xffffffffffffffffull,
		      "lookup at 2^64-2 finds it");
		CHECK(sfb_lookup(&l.s, UINT64_MAX, &r) == SFB_E_NOT_FOUND, "lookup at 2^64-1 not found");
	}
	ld_free(&l);
	for (unsigned pcrel = 0; pcrel <= 1; pcrel++) {
		sb_init(&B, 3, SFB_ABI_AMD64_LE,
			SFB_F_FDE_SORTED | (pcrel ? SFB_F_FDE_FUNC_START_PCREL : 0), SEC);
		sb_fde(&B, 0xfffffffffffffff0ull, 0x20, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		snprintf(name, sizeof name, "v3-fde-wraps%s", pcrel ? "-pcrel" : "");
		expect_err(name, SFB_E_FDE_RANGE);
	}
	raw_start_fde(3, SEC, 0xffffffff, INT64_MAX);
	len = sb_finish(&B, out, sizeof out);
	CHECK(ld(&l, out, len, SEC, 1) == SFB_OK, "v3 start INT64_MAX + 4G does not wrap: loads");
	ld_free(&l);
	raw_start_fde(3, SEC, 0x10, -(int64_t)SEC - 8); /* start = 2^64 - 8 */
	expect_err("v3-fde-wraps-negative", SFB_E_FDE_RANGE);
	/* A negative start offset may not reach below address 0 (a section
	 * at 0x1000 describing a function at -0x1000)... */
	raw_start_fde(2, 0x1000, 0x10, -0x2000);
	expect_err("v2-fde-start-below-0", SFB_E_FDE_RANGE);
	/* ... even for an empty function, where the start alone wraps. */
	raw_start_fde(2, 0x1000, 0, -0x1001);
	expect_err("v2-fde-start-below-0-size-0", SFB_E_FDE_RANGE);
	/* A positive V3 start may not wrap past 2^64 to a low address. */
	raw_start_fde(3, 0xffffffff00000000ull, 0x10, 0x100001000ll); /* start = 2^64 + 0x1000 */
	expect_err("v3-fde-wraps-positive", SFB_E_FDE_RANGE);
	/* ... but a function before the section is ordinary. */
	raw_start_fde(2, 0x10000, 0x10, -0x1000);
	len = sb_finish(&B, out, sizeof out);
	CHECK(ld(&l, out, len, 0x10000, 1) == SFB_OK, "v2 function 0x1000 before the section loads");
	if (l.err == SFB_OK) {
		struct sfb_row r;
		CHECK(sfb_lookup(&l.s, 0xf008, &r) == SFB_OK && r.func_start == 0xf000,
		      "and is found at 0xf008");
	}
	ld_free(&l);

	/* Reserved FDE info bits. */
	static const struct { unsigned v, bits; } resv[] = {
		{ 1, 0x40 }, { 1, 0x80 }, { 2, 0x40 }, { 2, 0x80 }, { 3, 0x40 },
	};
	for (size_t i = 0; i < 5; i++) {
		good_v2(resv[i].v, SFB_ABI_AMD64_LE);
		B.fde[1].info |= (uint8_t)resv[i].bits;
		snprintf(name, sizeof name, "fde-info-v%u-%#x", resv[i].v, resv[i].bits);
		expect_err(name, SFB_E_FDE_INFO);
	}
	/* The signal bit is V3 only (reserved before: covered above). */
	good_v2(3, SFB_ABI_AMD64_LE);
	B.fde[1].info |= 0x80;
	len = sb_finish(&B, out, sizeof out);
	CHECK(ld(&l, out, len, SEC, 4) == SFB_OK, "V3 signal bit accepted");
	ld_free(&l);
	/* FRE type 3 and 15. */
	for (unsigned v = 1; v <= 3; v++) {
		for (unsigned t = 3; t <= 15; t += 12) {
			good_v2(v, SFB_ABI_AMD64_LE);
			B.fde[0].info = (uint8_t)((B.fde[0].info & ~0xfu) | t);
			snprintf(name, sizeof name, "fre-type-%u-v%u", t, v);
			expect_err(name, SFB_E_FDE_INFO);
		}
	}
	/* FDE type 2 and 31, and the reserved info2 bits (V3). */
	static const uint8_t bad_info2[] = { 2, 31, 0x20, 0x80 };
	for (size_t i = 0; i < 4; i++) {
		good_v2(3, SFB_ABI_AMD64_LE);
		B.fde[1].info2 = bad_info2[i];
		snprintf(name, sizeof name, "fde-info2-%#x", bad_info2[i]);
		expect_err(name, SFB_E_FDE_INFO);
	}
	/* PCMASK with rep size 0 (V2, V3); V1 AArch64 PCMASK has no rep size
	 * at all, so it cannot be interpreted. */
	for (unsigned v = 2; v <= 3; v++) {
		good_v2(v, SFB_ABI_AMD64_LE);
		B.fde[0].info |= 0x10;
		B.fde[0].rep = 0;
		snprintf(name, sizeof name, "pcmask-rep0-v%u", v);
		expect_err(name, SFB_E_FDE_INFO);
	}
	good_v2(1, SFB_ABI_AARCH64_LE);
	B.fde[0].info |= 0x10;
	expect_err("pcmask-v1-aarch64", SFB_E_FDE_INFO);
	/* V1/V2 FDEs with zero FREs; V3 flex FDE with zero FREs. */
	for (unsigned v = 1; v <= 3; v++) {
		sb_init(&B, v, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0),
		       v == 3 ? SFB_FDE_TYPE_FLEX : 0, 0);
		sb_fde(&B, 0x1010, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		snprintf(name, sizeof name, "zero-fres-v%u%s", v, v == 3 ? "-flex" : "");
		expect_err(name, SFB_E_FDE_INFO);
	}
	/* Overlapping FDEs: by one byte, same start, nested, and when only
	 * sorting reveals it. */
	static const struct { uint64_t s1; uint32_t z1; uint64_t s2; uint32_t z2; const char *n; } ov[] = {
		{ 0x1000, 0x11, 0x1010, 0x10, "one-byte" },
		{ 0x1000, 0x10, 0x1000, 0x10, "same-start" },
		{ 0x1000, 0x100, 0x1010, 0x10, "nested" },
		{ 0x1010, 0x10, 0x1000, 0x11, "unsorted-one-byte" },
		{ 0x1000, 0x10, 0x1000, 0x00, "empty-after-same-start" },
	};
	for (size_t i = 0; i < 5; i++) {
		sb_init(&B, 2, SFB_ABI_AMD64_LE, 0, SEC);
		sb_fde(&B, ov[i].s1, ov[i].z1, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		sb_fde(&B, ov[i].s2, ov[i].z2, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		snprintf(name, sizeof name, "overlap-%s", ov[i].n);
		expect_err(name, SFB_E_OVERLAP);
	}
	/* Adjacent FDEs do not overlap. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, 0, SEC);
	sb_fde(&B, 0x1010, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	len = sb_finish(&B, out, sizeof out);
	CHECK(ld(&l, out, len, SEC, 2) == SFB_OK, "adjacent unsorted FDEs load");
	ld_free(&l);
	CHECK(ld(&l, out, len, SEC, 0) == SFB_E_UNSORTED, "... and need scratch");
	ld_free(&l);
}

static void test_reject_fre(void)
{
	char name[96];
	size_t len;
	struct loaded l;
	/* FREs past the FRE sub-section: FRE count too large for the bytes. */
	for (unsigned v = 1; v <= 3; v++) {
		good_v2(v, SFB_ABI_AMD64_LE);
		B.fde[1].nfres = 2;
		B.nfres_total = 4;
		snprintf(name, sizeof name, "fres-past-end-v%u", v);
		expect_err(name, SFB_E_FRE_RANGE);
	}
	/* The header's FRE length one short; bytes do exist after it. */
	for (unsigned v = 1; v <= 3; v++) {
		good_v2(v, SFB_ABI_AMD64_LE);
		B.tail = 8;
		len = sb_finish(&B, out, sizeof out);
		sb_patch(&B, out, SB_H_FRE_LEN, 4, B.fres_len - 1);
		snprintf(name, sizeof name, "fre-len-short-v%u", v);
		expect_err_buf(name, out, len, SEC, SFB_E_FRE_RANGE);
	}
	/* The same with a last FRE of no data words (V2, V3): its info byte
	 * lies past the sub-section and must not be read. */
	for (unsigned v = 2; v <= 3; v++) {
		sb_init(&B, v, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		SB_FRE0(&B, 4, SB_CFA_SP);
		B.tail = 8;
		len = sb_finish(&B, out, sizeof out);
		sb_patch(&B, out, SB_H_FRE_LEN, 4, B.fres_len - 1);
		snprintf(name, sizeof name, "fre-len-short-no-words-v%u", v);
		expect_err_buf(name, out, len, SEC, SFB_E_FRE_RANGE);
	}
	/* FRE sub-section first: FREs may not run into the FDEs. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	B.fre_first = true;
	sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	len = sb_finish(&B, out, sizeof out);
	sb_patch(&B, out, SB_H_FRE_LEN, 4, B.fres_len - 1);
	expect_err_buf("fre-past-fre-len-before-fdes", out, len, SEC, SFB_E_FRE_RANGE);
	/* fre_off beyond the FRE sub-section (V1/V2); V3 attribute cut. */
	for (unsigned v = 1; v <= 3; v++) {
		good_v2(v, SFB_ABI_AMD64_LE);
		B.fde[1].fre_off = B.fres_len + 1;
		snprintf(name, sizeof name, "fre-off-past-end-v%u", v);
		expect_err(name, SFB_E_FRE_RANGE);
		good_v2(v, SFB_ABI_AMD64_LE);
		B.fde[1].fre_off = 0xffffffff;
		snprintf(name, sizeof name, "fre-off-2^32-1-v%u", v);
		expect_err(name, SFB_E_FRE_RANGE);
	}
	/* fre_off past the sub-section is a range error even for an FDE
	 * without FREs (itself invalid in V1/V2): the offset is checked first. */
	for (unsigned v = 1; v <= 2; v++) {
		good_v2(v, SFB_ABI_AMD64_LE);
		B.fde[1].fre_off = B.fres_len + 1;
		B.fde[1].nfres = 0;
		B.nfres_total = 2;
		snprintf(name, sizeof name, "fre-off-past-end-no-fres-v%u", v);
		expect_err(name, SFB_E_FRE_RANGE);
	}
	good_v2(3, SFB_ABI_AMD64_LE);
	B.fde[1].fre_off = B.fres_len - 4; /* attribute needs 5 bytes */
	expect_err("v3-attr-cut", SFB_E_FRE_RANGE);
	/* Data words cut by the sub-section end. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR2, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 4, 8, -16);
	B.fres_len -= 1;
	expect_err("fre-words-cut", SFB_E_FRE_RANGE);

	/* FRE start offsets: decreasing, equal, beyond the function. */
	static const struct { uint32_t a, b, size; const char *n; } ord[] = {
		{ 4, 2, 0x10, "decreasing" },
		{ 4, 4, 0x10, "equal" },
		{ 0, 0x11, 0x10, "past-size" },
		{ 0x11, 0x12, 0x10, "first-past-size" },
	};
	for (unsigned v = 1; v <= 3; v++) {
		for (size_t i = 0; i < 4; i++) {
			sb_init(&B, v, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
			sb_fde(&B, 0x1000, ord[i].size, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
			SB_FRE(&B, ord[i].a, SB_CFA_SP, 1, 8);
			SB_FRE(&B, ord[i].b, SB_CFA_SP, 1, 16);
			snprintf(name, sizeof name, "fre-order-%s-v%u", ord[i].n, v);
			expect_err(name, SFB_E_FRE_ORDER);
		}
	}
	/* FRE start at exactly the function size: allowed. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 0x10, SB_CFA_SP, 1, 16);
	len = sb_finish(&B, out, sizeof out);
	CHECK(ld(&l, out, len, SEC, 1) == SFB_OK, "FRE at offset == size loads");
	ld_free(&l);
	/* ADDR4 start above 2^31, past a 4 GiB - 1 function size: order. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	sb_fde(&B, 0x1000, 0x80000000u, SB_INFO(SFB_FRE_TYPE_ADDR4, 0, 0), 0, 0);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 0x80000001u, SB_CFA_SP, 1, 8);
	expect_err("fre-order-addr4-big", SFB_E_FRE_ORDER);
	/* PCMASK: an FRE start beyond the block size. */
	sb_init(&B, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	sb_fde(&B, 0x1000, 0x40, SB_INFO(SFB_FRE_TYPE_ADDR1, 1, 0), 0, 16);
	SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
	SB_FRE(&B, 17, SB_CFA_SP, 1, 16);
	expect_err("fre-order-pcmask-past-block", SFB_E_FRE_ORDER);

	/* Data-word size code 3. */
	for (unsigned v = 1; v <= 3; v++) {
		sb_init(&B, v, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		const int64_t w[1] = { 8 };
		sb_fre_raw(&B, 0, SB_CFA_SP | (1u << 1) | (3u << 5), 4, w, 1);
		snprintf(name, sizeof name, "fre-word-size-3-v%u", v);
		expect_err(name, SFB_E_FRE_INFO);
	}
	/* Too many data words for the ABI. */
	static const struct { unsigned v, abi; int fixed_fp; unsigned n; const char *nm; } many[] = {
		{ 2, SFB_ABI_AMD64_LE, 0, 3, "amd64-3" },
		{ 3, SFB_ABI_AMD64_LE, 0, 15, "amd64-15" },
		{ 2, SFB_ABI_AMD64_LE, -16, 2, "amd64-fixed-fp-2" },
		{ 1, SFB_ABI_AMD64_LE, 0, 3, "amd64-v1-3" },
		{ 2, SFB_ABI_AARCH64_LE, 0, 4, "aarch64-4" },
		{ 3, SFB_ABI_AARCH64_BE, 0, 4, "aarch64be-4" },
		{ 2, SFB_ABI_S390X_BE, 0, 4, "s390x-4" },
	};
	for (size_t i = 0; i < sizeof many / sizeof many[0]; i++) {
		sb_init(&B, many[i].v, many[i].abi, SFB_F_FDE_SORTED, SEC);
		B.fixed_fp = (int8_t)many[i].fixed_fp;
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		const int64_t w[15] = { 16, -8, -16, -24, -32 };
		sb_fre(&B, 0, SB_CFA_SP, 1, w, many[i].n);
		snprintf(name, sizeof name, "too-many-words-%s", many[i].nm);
		expect_err(name, SFB_E_FRE_INFO);
	}
	/* V1: an FRE with no data words. */
	sb_init(&B, 1, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
	sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
	SB_FRE0(&B, 0, SB_CFA_SP);
	expect_err("v1-fre-no-words", SFB_E_FRE_INFO);
	/* Mangled-RA bit on AMD64 and s390x. */
	static const struct { unsigned v, abi; } mang[] = {
		{ 1, SFB_ABI_AMD64_LE }, { 2, SFB_ABI_AMD64_LE }, { 3, SFB_ABI_AMD64_LE },
		{ 2, SFB_ABI_S390X_BE }, { 3, SFB_ABI_S390X_BE },
	};
	for (size_t i = 0; i < 5; i++) {
		sb_init(&B, mang[i].v, mang[i].abi, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
		SB_FRE(&B, 4, SB_CFA_SP | SB_MANGLED, 1, 8);
		snprintf(name, sizeof name, "mangled-ra-v%u-abi%u", mang[i].v, mang[i].abi);
		expect_err(name, SFB_E_FRE_INFO);
	}

	/* s390x V2: an odd RA/FP word is (regnum << 1) | 1 with a DWARF
	 * register number >= 0; negative or >= 0xffff register numbers cannot
	 * be represented in a row (0xffff would read as SFB_REG_CFA). */
	static const struct { int64_t ra, fp; unsigned wb; const char *n; } s390_reg[] = {
		{ -1, -72, 1, "ra-minus-1" },
		{ -48, -3, 1, "fp-minus-3" },
		{ (0x10000 << 1) | 1, -72, 4, "ra-reg-0x10000" },
		{ (0xffff << 1) | 1, -72, 4, "ra-reg-0xffff" },
	};
	for (size_t i = 0; i < 4; i++) {
		sb_init(&B, 2, SFB_ABI_S390X_BE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		const int64_t w[3] = { 0, s390_reg[i].ra, s390_reg[i].fp };
		sb_fre(&B, 0, SB_CFA_SP, s390_reg[i].wb, w, 3);
		snprintf(name, sizeof name, "s390x-v2-regnum-%s", s390_reg[i].n);
		expect_err(name, SFB_E_FRE_INFO);
	}
	/* s390x: a 4-byte CFA word whose decoded offset (w * 8 + 160) does not
	 * fit the row's int32_t offset. */
	for (unsigned v = 2; v <= 3; v++) {
		sb_init(&B, v, SFB_ABI_S390X_BE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
		SB_FRE(&B, 0, SB_CFA_SP, 4, 0x10000000);
		snprintf(name, sizeof name, "s390x-v%u-cfa-offset-overflow", v);
		expect_err(name, SFB_E_FRE_INFO);
	}

	/* Flexible FDEs: bad counts (FRE_INFO) and bad control words (FLEX). */
	static const struct { unsigned n; int64_t w[8]; int want; const char *nm; } flex[] = {
		{ 1, { SB_CTL(7, 0, 1) }, SFB_E_FRE_INFO, "count-1" },
		{ 1, { 0 }, SFB_E_FRE_INFO, "count-1-ctl-0" },
		{ 3, { SB_CTL(7, 0, 1), 8, 4 }, SFB_E_FRE_INFO, "count-3-reserved-bit" },
		{ 3, { SB_CTL(7, 0, 1), 8, SB_CTL(0, 1, 0) }, SFB_E_FRE_INFO, "count-3" },
		{ 3, { SB_CTL(7, 0, 1), 8, 0 }, SFB_E_FRE_INFO, "padding-alone" },
		{ 4, { SB_CTL(7, 0, 1), 8, 0, SB_CTL(6, 1, 1) }, SFB_E_FRE_INFO, "padding-then-1" },
		{ 5, { SB_CTL(7, 0, 1), 8, SB_CTL(0, 1, 0), -8, SB_CTL(6, 1, 1) }, SFB_E_FRE_INFO, "count-5-no-padding" },
		{ 6, { SB_CTL(7, 0, 1), 8, 0, SB_CTL(6, 1, 1), 0, 0 }, SFB_E_FRE_INFO, "padding-then-3" },
		{ 7, { SB_CTL(7, 0, 1), 8, SB_CTL(0, 1, 0), -8, SB_CTL(0, 1, 0), -16, 0 }, SFB_E_FRE_INFO, "count-7" },
		{ 2, { SB_CTL(7, 1, 0), 8 }, SFB_E_FLEX, "cfa-no-reg-p" },
		{ 2, { 0, 8 }, SFB_E_FLEX, "cfa-ctl-0" },
		{ 2, { SB_CTL(7, 0, 1) | 4, 8 }, SFB_E_FLEX, "cfa-reserved-bit" },
		{ 4, { SB_CTL(7, 0, 1), 8, SB_CTL(0, 1, 0) | 4, -8 }, SFB_E_FLEX, "ra-reserved-bit" },
		{ 4, { SB_CTL(7, 0, 1), 8, 4, -8 }, SFB_E_FLEX, "ra-reserved-bit-only" },
		{ 5, { SB_CTL(7, 0, 1), 8, 0, SB_CTL(6, 1, 1) | 4, 0 }, SFB_E_FLEX, "fp-reserved-bit" },
		{ 6, { SB_CTL(7, 0, 1), 8, SB_CTL(0, 1, 0), -8, 0, -16 }, SFB_E_FLEX, "fp-ctl-0" },
		{ 5, { SB_CTL(7, 0, 1), 8, 0, 0, -16 }, SFB_E_FLEX, "padding-then-fp-ctl-0" },
		{ 2, { SB_CTL(0xffff, 0, 1), 8 }, SFB_E_FLEX, "cfa-regnum-0xffff" },
		{ 4, { SB_CTL(7, 0, 1), 8, SB_CTL(0x1fffffff, 1, 1), -8 }, SFB_E_FLEX, "ra-regnum-huge" },
	};
	for (size_t i = 0; i < sizeof flex / sizeof flex[0]; i++) {
		sb_init(&B, 3, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), SFB_FDE_TYPE_FLEX, 0);
		SB_FRE(&B, 0, 0, 1, SB_CTL(7, 0, 1), 8);
		sb_fre(&B, 4, 0, 4, flex[i].w, flex[i].n);
		snprintf(name, sizeof name, "flex-%s", flex[i].nm);
		expect_err(name, flex[i].want);
	}
	/* s390x flexible FDE: the CFA pair's offset is scaled like the
	 * default FDE's CFA word, and must fit after scaling too. */
	{
		static const int64_t w[] = { SB_CTL(15, 0, 1), 0x10000000 };
		sb_init(&B, 3, SFB_ABI_S390X_BE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x1000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), SFB_FDE_TYPE_FLEX, 0);
		sb_fre(&B, 0, 0, 4, w, 2);
		expect_err("s390x-v3-flex-cfa-offset-overflow", SFB_E_FRE_INFO);
	}
}

/* ---- Robustness: mutate sections, load from exact-size buffers --------- */

struct robust {
	unsigned long runs, loaded, lookups, refchecked;
	unsigned long bad;      /* any failure */
	char first[320];
};

static void robust_fail(struct robust *st, const char *fmt, ...)
{
	if (!st->bad++) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(st->first, sizeof st->first, fmt, ap);
		va_end(ap);
	}
}

static bool err_valid(int err)
{
	return err >= SFB_E_TRUNCATED && err <= SFB_E_TOO_BIG && strcmp(sfb_err_name(err), "unknown");
}

/* Check one lookup on a loaded section against the slow reference and the
 * row invariants. */
static void robust_pc(struct robust *st, const struct sfb_section *s, uint64_t pc,
		      const char *what)
{
	struct sfb_row got, ref;
	int err = sfb_lookup(s, pc, &got);
	st->lookups++;
	if (err != SFB_OK && err != SFB_E_NOT_FOUND) {
		robust_fail(st, "%s: lookup %#" PRIx64 " -> %d", what, pc, err);
		return;
	}
	if (err == SFB_OK &&
	    (pc < got.pc_lo || pc >= got.pc_hi || pc < got.func_start ||
	     pc - got.func_start >= got.func_size || got.pc_hi - got.func_start > got.func_size ||
	     got.cfa.kind > SFB_LOC_EXPR || got.ra.kind > SFB_LOC_EXPR ||
	     got.fp.kind > SFB_LOC_EXPR ||
	     (!(got.flags & SFB_ROW_OUTERMOST) && got.cfa.kind != SFB_LOC_EXPR))) {
		robust_fail(st, "%s: lookup %#" PRIx64 " row invariant %s", what, pc, fmt_row(&got));
		return;
	}
	int rerr = sb_ref_lookup(s, pc, &ref, 48);
	if (rerr == -2)
		return;
	st->refchecked++;
	if (rerr != err || (err == SFB_OK && !sb_row_eq(&got, &ref)))
		robust_fail(st, "%s: lookup %#" PRIx64 " -> %d %s, reference %d %s", what, pc, err,
			    err ? "" : fmt_row(&got), rerr, rerr ? "" : fmt_row(&ref));
}

static unsigned work_scale = 1, work_div = 1;
#define VALGRIND_MAX_FIXTURE (64 * 1024) /* bytes of .sframe */

/* Load p[0..len) from an exact-size heap copy; on success look up PCs
 * across and around the covered range and at FDE boundaries. */
static void robust_one(struct robust *st, const uint8_t *p, size_t len, uint64_t addr,
		       const char *what, unsigned npcs)
{
	struct loaded l, l0;
	st->runs++;
	int err = ld(&l, p, len, addr, len / 16 + 1);
	int err0 = ld(&l0, p, len, addr, 0);
	ld_free(&l0);
	if (err != SFB_OK && !err_valid(err))
		robust_fail(st, "%s: load -> %d", what, err);
	/* Without scratch: the same answer, or UNSORTED instead. */
	if (err0 != err && err0 != SFB_E_UNSORTED)
		robust_fail(st, "%s: load -> %d with scratch but %d without", what, err, err0);
	if (err == SFB_OK) {
		const struct sfb_section *s = &l.s;
		st->loaded++;
		uint64_t lo = s->pc_lo, hi = s->pc_hi;
		robust_pc(st, s, lo - 1, what);
		robust_pc(st, s, lo, what);
		robust_pc(st, s, hi - 1, what);
		robust_pc(st, s, hi, what);
		for (unsigned k = 0; k < npcs && hi > lo; k++)
			robust_pc(st, s, lo + (hi - lo) / npcs * k + k, what);
		uint32_t nf = s->num_fdes < 8 ? s->num_fdes : 8;
		for (uint32_t i = 0; i < nf; i++) {
			struct sfb_fde f;
			uint32_t fi = i < 4 ? i : s->num_fdes - 1 - (i - 4);
			if (sfb_fde_get(s, fi, &f) != SFB_OK) {
				robust_fail(st, "%s: fde_get(%u) failed on a loaded section", what, fi);
				break;
			}
			robust_pc(st, s, f.start - 1, what);
			robust_pc(st, s, f.start, what);
			robust_pc(st, s, f.start + f.size - 1, what);
			robust_pc(st, s, f.start + f.size, what);
			if (f.pcmask && f.rep_size)
				robust_pc(st, s, f.start + f.rep_size + f.rep_size / 2, what);
		}
	}
	ld_free(&l);
}

/* Truncations, single bit flips and random corruption of one section. */
static void robust_section(const char *name, const uint8_t *sec, size_t len, uint64_t addr,
			   unsigned budget)
{
	struct robust st;
	char what[128];
	uint8_t *m = malloc(len ? len : 1);
	if (!work_scale || !budget) {
		free(m);
		return;
	}
	/* (a) every length, or an even spread plus the first 256. */
	memset(&st, 0, sizeof st);
	size_t step = len <= budget ? 1 : len / budget + 1;
	for (size_t n = 0; n <= len; n += (n < 256 ? 1 : step)) {
		snprintf(what, sizeof what, "%s truncated to %zu", name, n);
		robust_one(&st, sec, n, addr, what, 4);
	}
	robust_one(&st, sec, len, addr, name, 32);
	CHECK(st.bad == 0 && st.loaded >= 1,
	      "%s: truncation: %lu loads, %lu loaded, %lu lookups; %lu bad %s", name, st.runs,
	      st.loaded, st.lookups, st.bad, st.first);
	/* (b) every bit of the first 64 bytes, then an even spread. */
	memset(&st, 0, sizeof st);
	size_t bits = len * 8, bstep = bits <= budget ? 1 : bits / budget + 1;
	for (size_t bit = 0; bit < bits; bit += (bit < 512 ? 1 : bstep)) {
		memcpy(m, sec, len);
		m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		snprintf(what, sizeof what, "%s bit %zu flipped", name, bit);
		robust_one(&st, m, len, addr, what, 8);
	}
	CHECK(st.bad == 0, "%s: bit flips: %lu loads, %lu loaded, %lu lookups (%lu vs reference); %lu bad %s",
	      name, st.runs, st.loaded, st.lookups, st.refchecked, st.bad, st.first);
	/* (c) random multi-byte corruption, fixed seed. */
	memset(&st, 0, sizeof st);
	rng_state = 0x9e3779b9u ^ (uint32_t)len;
	for (unsigned it = 0; it < budget / 4 + 16 && len; it++) {
		memcpy(m, sec, len);
		unsigned nb = 1 + rnd() % 8;
		for (unsigned k = 0; k < nb; k++) {
			size_t at = rnd() % len;
			switch (rnd() % 4) {
			case 0: m[at] = (uint8_t)rnd(); break;
			case 1: m[at] = 0; break;
			case 2: m[at] = 0xff; break;
			default: m[at] = (uint8_t)(m[at] + 1); break;
			}
		}
		snprintf(what, sizeof what, "%s random corruption %u", name, it);
		robust_one(&st, m, len, addr, what, 8);
	}
	CHECK(st.bad == 0, "%s: random corruption: %lu loads, %lu loaded, %lu lookups; %lu bad %s",
	      name, st.runs, st.loaded, st.lookups, st.bad, st.first);
	free(m);
}

/* Every PC of a valid section against the reference, FDE by FDE (an FDE's
 * rows are decoded once through sfb_fre_row), plus the gaps. */
static void property_all_pcs(const char *name, const uint8_t *sec, size_t len, uint64_t addr,
			     uint64_t max_pcs)
{
	struct loaded l;
	int err = ld(&l, sec, len, addr, len / 16 + 1);
	CHECK(err == SFB_OK, "%s: loads (%d %s)", name, err, sfb_err_name(err));
	if (err != SFB_OK) {
		ld_free(&l);
		return;
	}
	const struct sfb_section *s = &l.s;
	unsigned long bad = 0, done = 0;
	char first[320] = "";
	struct sfb_row *rows = NULL;
	uint64_t *raw = NULL;
	/* FDEs in address order by selection (the order array is the thing
	 * under test, so do not use it). */
	uint64_t prev_end = s->pc_lo;
	uint64_t budget_per_fde = s->num_fdes ? max_pcs / s->num_fdes + 64 : 0;
	uint64_t cur = 0;
	bool have_cur = false;
	for (uint32_t n = 0; n < s->num_fdes; n++) {
		/* Next FDE by start after cur. */
		struct sfb_fde f, best;
		bool found = false;
		memset(&best, 0, sizeof best);
		for (uint32_t i = 0; i < s->num_fdes; i++) {
			sfb_fde_get(s, i, &f);
			if (have_cur && f.start <= cur)
				continue;
			if (!found || f.start < best.start || (f.start == best.start && f.size > best.size)) {
				best = f;
				found = true;
			}
		}
		if (!found)
			break; /* zero-size FDEs sharing a start */
		f = best;
		cur = f.start;
		have_cur = true;
		/* The gap before it: nothing found. */
		for (uint64_t pc = prev_end; pc < f.start && pc - prev_end < 64; pc++) {
			struct sfb_row r;
			done++;
			if (sfb_lookup(s, pc, &r) != SFB_E_NOT_FOUND && !bad++)
				snprintf(first, sizeof first, "gap pc %#" PRIx64 " found", pc);
		}
		prev_end = f.start + f.size;
		rows = realloc(rows, (f.num_fres + 1) * sizeof *rows);
		raw = realloc(raw, (f.num_fres + 1) * sizeof *raw);
		for (uint32_t j = 0; j < f.num_fres; j++) {
			if (sfb_fre_row(s, &f, j, &rows[j]) != SFB_OK && !bad++)
				snprintf(first, sizeof first, "fre_row %u of fde at %#" PRIx64, j, f.start);
			raw[j] = f.pcmask ? rows[j].pc_lo : rows[j].pc_lo - f.start;
		}
		uint64_t step = f.size <= budget_per_fde ? 1 : f.size / budget_per_fde + 1;
		for (uint64_t o = 0; o < f.size; o += step) {
			uint64_t pc = f.start + o, key = o, block = 0;
			struct sfb_row want, got;
			int wanterr = SFB_OK;
			memset(&want, 0, sizeof want);
			if (f.num_fres == 0) {
				want = ROW(f.start, f.size, f.start, f.start + f.size, L_UNDEF(), L_UNDEF(),
					   L_UNDEF(), SFB_ROW_OUTERMOST | (f.signal ? SFB_ROW_SIGNAL : 0));
			} else {
				if (f.pcmask) {
					block = o / f.rep_size * f.rep_size;
					key = o % f.rep_size;
				}
				int bj = -1;
				uint64_t next = f.pcmask ? f.rep_size : f.size;
				for (uint32_t j = 0; j < f.num_fres; j++) {
					if (raw[j] <= key)
						bj = (int)j;
					else {
						next = raw[j];
						break;
					}
				}
				if (bj < 0) {
					wanterr = SFB_E_NOT_FOUND;
				} else {
					want = rows[bj];
					want.pc_lo = f.start + block + raw[bj];
					want.pc_hi = f.start + block + next;
					if (want.pc_hi > f.start + f.size)
						want.pc_hi = f.start + f.size;
				}
			}
			int e = sfb_lookup(s, pc, &got);
			done++;
			if ((e != wanterr || (e == SFB_OK && !sb_row_eq(&got, &want))) && !bad++)
				snprintf(first, sizeof first, "pc %#" PRIx64 ": %d %s want %d %s", pc, e,
					 e ? "" : fmt_row(&got), wanterr, wanterr ? "" : fmt_row(&want));
		}
	}
	for (uint64_t pc = prev_end; pc < prev_end + 64; pc++) {
		struct sfb_row r;
		done++;
		if (sfb_lookup(s, pc, &r) != SFB_E_NOT_FOUND && !bad++)
			snprintf(first, sizeof first, "pc %#" PRIx64 " after the end found", pc);
	}
	CHECK(bad == 0, "%s: every PC (%lu lookups, %u FDEs, %u FREs) agrees with the reference; %lu bad %s",
	      name, done, s->num_fdes, s->num_fres, bad, first);
	free(rows);
	free(raw);
	ld_free(&l);
}

/* ---- Real sections from ELF files -------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

/* The .sframe section of an ELF64 image of either byte order. */
static bool elf_sframe(const uint8_t *img, size_t len, size_t *off, size_t *size, uint64_t *addr)
{
	if (len < 64 || memcmp(img, "\177ELF", 4) || img[4] != 2)
		return false;
	bool big = img[5] == 2;
	uint64_t shoff = sb_getv(big, img + 0x28, 8);
	unsigned shentsize = (unsigned)sb_getv(big, img + 0x3a, 2);
	unsigned shnum = (unsigned)sb_getv(big, img + 0x3c, 2);
	unsigned shstrndx = (unsigned)sb_getv(big, img + 0x3e, 2);
	if (shentsize < 64 || shoff > len || (uint64_t)shnum * shentsize > len - shoff ||
	    shstrndx >= shnum)
		return false;
	const uint8_t *strsh = img + shoff + (uint64_t)shstrndx * shentsize;
	uint64_t stroff = sb_getv(big, strsh + 0x18, 8), strsize = sb_getv(big, strsh + 0x20, 8);
	if (stroff > len || strsize > len - stroff)
		return false;
	for (unsigned i = 0; i < shnum; i++) {
		const uint8_t *sh = img + shoff + (uint64_t)i * shentsize;
		uint32_t nm = (uint32_t)sb_getv(big, sh, 4);
		uint32_t type = (uint32_t)sb_getv(big, sh + 4, 4);
		if (nm >= strsize || strsize - nm < 8 ||
		    memcmp(img + stroff + nm, ".sframe", 8) || type == 8 /* NOBITS */)
			continue;
		uint64_t o = sb_getv(big, sh + 0x18, 8), z = sb_getv(big, sh + 0x20, 8);
		if (o > len || z > len - o)
			return false;
		*off = o;
		*size = z;
		*addr = sb_getv(big, sh + 0x10, 8);
		return true;
	}
	return false;
}

struct fixture {
	char name[160];
	uint8_t *sec;
	size_t len;
	uint64_t addr;
	uint64_t hash;
};
static struct fixture fixtures[256];
static unsigned nfixtures;

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void add_fixture(const char *path, const char *label)
{
	size_t len, off, size;
	uint64_t addr;
	if (nfixtures >= sizeof fixtures / sizeof fixtures[0])
		return;
	uint8_t *img = slurp(path, &len);
	if (!img)
		return;
	/* Under valgrind a section of many thousand FDEs (t_static_full's)
	 * alone would take longer than the test's time limit: the every-PC
	 * check orders FDEs by selection, quadratic in their number. */
	if (work_div > 1 && elf_sframe(img, len, &off, &size, &addr) &&
	    size > VALGRIND_MAX_FIXTURE) {
		printf("# %s: .sframe of %zu bytes left out under valgrind\n", label, size);
		free(img);
		return;
	}
	if (elf_sframe(img, len, &off, &size, &addr) && size > 0) {
		uint64_t h = fnv(img + off, size);
		for (unsigned i = 0; i < nfixtures; i++)
			if (fixtures[i].hash == h && fixtures[i].len == size) {
				free(img);
				return;
			}
		struct fixture *fx = &fixtures[nfixtures++];
		snprintf(fx->name, sizeof fx->name, "%s", label);
		fx->sec = malloc(size);
		memcpy(fx->sec, img + off, size);
		fx->len = size;
		fx->addr = addr;
		fx->hash = h;
	}
	free(img);
}

static void add_fixture_dir(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	/* Sorted names for a stable order. */
	char *names[1024];
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 1024)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (unsigned i = 0; i < n; i++) {
		char path[1024];
		struct stat stt;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (stat(path, &stt) == 0) {
			if (S_ISDIR(stt.st_mode) && depth > 0)
				add_fixture_dir(path, depth - 1);
			else if (S_ISREG(stt.st_mode) && stt.st_size < (64 << 20))
				add_fixture(path, path);
		}
		free(names[i]);
	}
}

/* ---- Coarse index ------------------------------------------------------ */

/* The index against its definition: entry k is the rank of the last FDE
 * starting at or before pc_lo + (k << shift), found here by brute force. */
static bool coarse_is_exact(const struct sfb_section *s)
{
	for (uint32_t k = 0; k < s->coarse_n; k++) {
		uint64_t at = s->pc_lo + ((uint64_t)k << s->coarse_shift);
		uint32_t want = 0;
		struct sfb_fde f;
		for (uint32_t r = 0; r < s->num_fdes; r++) {
			sfb_fde_get(s, s->order ? s->order[r] : r, &f);
			if (f.start <= at)
				want = r;
		}
		if (s->coarse[k] != want)
			return false;
	}
	return true;
}

/* Does pc get a different answer (error or row) from the two sections? */
static bool lookups_differ(const struct sfb_section *x, const struct sfb_section *y,
			   uint64_t pc)
{
	struct sfb_row a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	int ea = sfb_lookup(x, pc, &a), eb = sfb_lookup(y, pc, &b);
	return ea != eb || (ea == SFB_OK && !sb_row_eq(&a, &b));
}

/* Lookups through the index (or a damaged one) against the same section
 * searched without it: every FDE's edges and up to about 20000 PCs spread
 * over the range.  Returns the number of PCs whose answer differed. */
static unsigned coarse_differences(const struct sfb_section *with, uint64_t *first_bad)
{
	struct sfb_section plain = *with;
	plain.coarse = NULL;
	uint64_t span = with->pc_hi - with->pc_lo + 64;
	uint64_t step = span / (20000 / work_div) + 1;
	unsigned bad = 0;
	for (uint64_t pc = with->pc_lo - 32; pc < with->pc_hi + 32; pc += step)
		if (lookups_differ(with, &plain, pc) && !bad++)
			*first_bad = pc;
	for (uint32_t r = 0; r < with->num_fdes; r++) {
		struct sfb_fde f;
		sfb_fde_get(with, r, &f);
		uint64_t edge[4] = { f.start - 1, f.start, f.start + f.size - 1, f.start + f.size };
		for (unsigned i = 0; i < 4; i++)
			if (lookups_differ(with, &plain, edge[i]) && !bad++)
				*first_bad = edge[i];
	}
	return bad;
}

/* One loaded section: the index is built as defined for several bucket
 * counts, lookups through it agree with the full search, and so do lookups
 * through indexes damaged in ways a racing rewrite or a bug could leave
 * them (the search checks both ends it is given against the table). */
static void coarse_section(const char *name, struct sfb_section *s)
{
	static uint32_t index[4096];
	static const unsigned buckets[] = { 1, 2, 7, 256, 4096 };
	unsigned used = sfb_coarse_build(s, index, 256);
	if (s->num_fdes < SFB_COARSE_MIN_FDES) {
		CHECK(used == 0 && s->coarse == NULL, "%s: %u FDEs: no coarse index (%u buckets)",
		      name, s->num_fdes, used);
		return;
	}
	for (unsigned b = 0; b < sizeof buckets / sizeof buckets[0]; b++) {
		used = sfb_coarse_build(s, index, buckets[b]);
		uint64_t first = 0;
		CHECK(used >= 1 && used <= buckets[b] && s->coarse == index &&
			      ((s->pc_hi - s->pc_lo - 1) >> s->coarse_shift) + 1 == used &&
			      (used == buckets[b] || s->coarse_shift == 0 ||
			       ((s->pc_hi - s->pc_lo - 1) >> (s->coarse_shift - 1)) >= buckets[b]),
		      "%s: %u buckets asked, %u used, shift %u: the smallest shift that fits",
		      name, buckets[b], used, s->coarse_shift);
		CHECK(coarse_is_exact(s), "%s: %u-bucket index as defined", name, used);
		unsigned bad = coarse_differences(s, &first);
		CHECK(bad == 0, "%s: %u buckets: lookups agree with the full search (%u differ, first %#" PRIx64 ")",
		      name, used, bad, first);
	}
	/* Damaged: zeros, all ones, reversed, off by one, random, and every
	 * other bucket past the table's end (its neighbours' searches would
	 * end there). */
	for (unsigned kind = 0; kind < 6; kind++) {
		uint32_t n = sfb_coarse_build(s, index, 256);
		for (uint32_t k = 0; k < n; k++) {
			switch (kind) {
			case 0: index[k] = 0; break;
			case 1: index[k] = UINT32_MAX; break;
			case 2: index[k] = s->num_fdes - 1 - index[k]; break;
			case 3: index[k] = index[k] + 1; break;
			case 4: index[k] = rnd() % (s->num_fdes + 2); break;
			default: index[k] = k % 2 ? s->num_fdes + k : index[k]; break;
			}
		}
		uint64_t first = 0;
		unsigned bad = coarse_differences(s, &first);
		CHECK(bad == 0, "%s: damaged index (kind %u): lookups still agree (%u differ, first %#" PRIx64 ")",
		      name, kind, bad, first);
	}
	s->coarse = NULL;
}

static void test_coarse(void)
{
	/* Synthetic: 500 FDEs with random sizes and gaps, sorted and
	 * shuffled (ranks through the order array), V2 and V3. */
	for (unsigned v = 2; v <= 3; v++) {
		for (unsigned shuffled = 0; shuffled <= 1; shuffled++) {
			static uint32_t idx[500];
			const unsigned n = 500;
			sb_init(&B, v, SFB_ABI_AMD64_LE, shuffled ? 0 : SFB_F_FDE_SORTED, SEC);
			for (unsigned i = 0; i < n; i++)
				idx[i] = i;
			for (unsigned i = n - 1; shuffled && i > 0; i--) {
				unsigned j = rnd() % (i + 1), t = idx[i];
				idx[i] = idx[j];
				idx[j] = t;
			}
			/* Function k starts at a random offset in its 256-byte slot:
			 * buckets hold from none to several FDEs. */
			for (unsigned i = 0; i < n; i++) {
				uint64_t st = 0x100000 + 0x100ull * idx[i] + (idx[i] * 37u) % 0x80;
				uint32_t sz = 1 + (idx[i] * 53u) % 0x80;
				sb_fde(&B, st, sz, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
				SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
				if (sz > 4)
					SB_FRE(&B, 4, SB_CFA_SP, 1, 16 + 8 * (int)(idx[i] % 8));
			}
			size_t len = sb_finish(&B, out, sizeof out);
			char name[64];
			snprintf(name, sizeof name, "coarse-500-v%u%s", v, shuffled ? "-shuffled" : "");
			struct loaded l;
			int err = ld(&l, out, len, SEC, n);
			CHECK(err == SFB_OK && (l.s.order != NULL) == (shuffled != 0), "%s: loads (%d)",
			      name, err);
			if (err == SFB_OK)
				coarse_section(name, &l.s);
			ld_free(&l);
		}
	}
	/* Below the threshold: no index. */
	size_t len = good_v2(2, SFB_ABI_AMD64_LE);
	struct loaded l;
	if (ld(&l, out, len, SEC, 0) == SFB_OK)
		coarse_section("two FDEs", &l.s);
	ld_free(&l);
}

static void test_fixtures(void)
{
	const char *bdir = getenv("SFB_BUILD");
	char path[1024];
	if (!bdir || !*bdir)
		bdir = "build";
	add_fixture("/proc/self/exe", "t_decode itself");
	snprintf(path, sizeof path, "%s/sframe-dump", bdir);
	add_fixture(path, path);
	snprintf(path, sizeof path, "%s/tests", bdir);
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		char names[64][256];
		unsigned n = 0;
		while ((e = readdir(d)) && n < 64)
			if (!strncmp(e->d_name, "t_", 2) && !strchr(e->d_name, '.'))
				snprintf(names[n++], 256, "%s", e->d_name);
		closedir(d);
		for (unsigned i = 0; i < n; i++) {
			char p2[1400];
			snprintf(p2, sizeof p2, "%.1000s/tests/%.255s", bdir, names[i]);
			add_fixture(p2, p2);
		}
	}
	add_fixture_dir("tests/fixtures/bin", 3);
	CHECK(nfixtures >= 1, "found %u real .sframe sections", nfixtures);

	/* Property: every PC, for every fixture. */
	for (unsigned i = 0; i < nfixtures; i++) {
		char name[200];
		snprintf(name, sizeof name, "fixture %.150s (%zu bytes)", fixtures[i].name, fixtures[i].len);
		property_all_pcs(name, fixtures[i].sec, fixtures[i].len, fixtures[i].addr, 1u << 20);
	}
	/* The coarse index on every real section large enough to get one. */
	unsigned indexed = 0;
	for (unsigned i = 0; i < nfixtures; i++) {
		struct loaded l;
		if (ld(&l, fixtures[i].sec, fixtures[i].len, fixtures[i].addr,
		       fixtures[i].len / 16 + 1) == SFB_OK && l.s.num_fdes >= SFB_COARSE_MIN_FDES) {
			char name[200];
			snprintf(name, sizeof name, "fixture %.150s", fixtures[i].name);
			coarse_section(name, &l.s);
			indexed++;
		}
		ld_free(&l);
	}
	CHECK(indexed >= 1, "%u real sections have %u+ FDEs and were checked with a coarse index",
	      indexed, SFB_COARSE_MIN_FDES);
	/* Mutations: up to 8192 truncations and bit flips per fixture (every
	 * bit of a section up to 1 KiB), a quarter as many random ones; less
	 * when there are many fixtures (128 Ki in all, at least 2048 each). */
	unsigned per = nfixtures ? 131072 / nfixtures : 0;
	per = per > 8192 ? 8192 : per < 2048 ? 2048 : per;
	for (unsigned i = 0; i < nfixtures; i++) {
		char name[200];
		snprintf(name, sizeof name, "fixture %.150s", fixtures[i].name);
		unsigned budget = per * work_scale / work_div;
		robust_section(name, fixtures[i].sec, fixtures[i].len, fixtures[i].addr, budget);
	}
	for (unsigned i = 0; i < nfixtures; i++)
		free(fixtures[i].sec);
}

/* The hand-made valid sections through the same mutations (they cover
 * V2, V3, flexible FDEs, AArch64 and s390x, which the host toolchain's
 * own output does not). */
static void test_robust_handmade(void)
{
	static const struct { unsigned v, abi; bool v3x; const char *n; } set[] = {
		{ 1, SFB_ABI_AMD64_LE, false, "amd64-v1" },
		{ 2, SFB_ABI_AMD64_LE, false, "amd64-v2" },
		{ 3, SFB_ABI_AMD64_LE, true, "amd64-v3" },
		{ 2, SFB_ABI_AARCH64_BE, false, "aarch64be-v2" },
		{ 3, SFB_ABI_AARCH64_LE, false, "aarch64le-v3" },
		{ 2, SFB_ABI_S390X_BE, false, "s390x-v2" },
	};
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
		unsigned flags = SFB_F_FDE_SORTED | (set[i].v >= 2 ? SFB_F_FDE_FUNC_START_PCREL : 0);
		sb_init(&B, set[i].v, set[i].abi, flags, SEC);
		nexp = 0;
		if (set[i].abi == SFB_ABI_AMD64_LE) {
			amd64_common(set[i].v);
			if (set[i].v3x)
				amd64_v3_extra();
		} else if (set[i].abi == SFB_ABI_S390X_BE) {
			sb_fde(&B, 0x6000, 0x40, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
			SB_FRE(&B, 0x00, SB_CFA_SP, 1, 0);
			SB_FRE(&B, 0x06, SB_CFA_SP, 1, 1, -48, -72);
			SB_FRE(&B, 0x0a, SB_CFA_SP, 1, -1, 0, -72);
			SB_FRE(&B, 0x20, SB_CFA_SP, 1, 0, 65, 67);
			sb_fde(&B, 0x6040, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR1, 1, 0), 0, 8);
			SB_FRE0(&B, 0, SB_CFA_SP);
			SB_FRE(&B, 4, SB_CFA_SP, 1, 0);
		} else {
			aarch64_common(set[i].v);
		}
		size_t len = sb_finish(&B, out, sizeof out);
		uint8_t *copy = malloc(len);
		memcpy(copy, out, len);
		char name[64];
		snprintf(name, sizeof name, "hand-made %s", set[i].n);
		property_all_pcs(name, copy, len, SEC, 1u << 20);
		robust_section(name, copy, len, SEC, 8192 * work_scale / work_div);
		free(copy);
	}
	/* Unsorted: the mutations then also exercise the sort. */
	sb_init(&B, 3, SFB_ABI_AMD64_LE, SFB_F_FDE_FUNC_START_PCREL, SEC);
	for (unsigned i = 0; i < 12; i++) {
		unsigned k = (i * 7) % 12;
		sb_fde(&B, 0x1000 + 0x20 * k, 0x10 + k, SB_INFO(SFB_FRE_TYPE_ADDR1, k == 3, 0),
		       k == 5 ? SFB_FDE_TYPE_FLEX : 0, 8);
		if (k == 5) {
			SB_FRE(&B, 0, 0, 1, SB_CTL(7, 0, 1), 8);
		} else if (k != 9) {
			SB_FRE(&B, 0, SB_CFA_SP, 1, 8);
			SB_FRE(&B, 2, SB_CFA_FP, 1, 16, -16);
		}
	}
	size_t len = sb_finish(&B, out, sizeof out);
	uint8_t *copy = malloc(len);
	memcpy(copy, out, len);
	write_corpus("unsorted-mixed-v3", copy, len);
	property_all_pcs("hand-made unsorted-v3", copy, len, SEC, 1u << 20);
	robust_section("hand-made unsorted-v3", copy, len, SEC, 8192 * work_scale / work_div);
	free(copy);
}

/* Every seed of the fuzzing corpus (and any crash reproducer added there)
 * through the same load-and-cross-check as the mutations. */
static void test_corpus(void)
{
	DIR *d = opendir("tests/fuzz/corpus-decode");
	if (!d) {
		CHECK(0, "tests/fuzz/corpus-decode is readable (run from the source tree)");
		return;
	}
	struct robust st;
	memset(&st, 0, sizeof st);
	struct dirent *e;
	unsigned n = 0;
	while ((e = readdir(d))) {
		char path[600];
		size_t len;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "tests/fuzz/corpus-decode/%.500s", e->d_name);
		uint8_t *p = slurp(path, &len);
		if (!p)
			continue;
		robust_one(&st, p, len, SEC, path, 32);
		robust_one(&st, p, len, 0xfffffffffff00000ull, path, 8);
		free(p);
		n++;
	}
	closedir(d);
	CHECK(n >= 1 && st.bad == 0, "fuzz corpus: %u files, %lu loaded, %lu lookups; %lu bad %s", n,
	      st.loaded, st.lookups, st.bad, st.first);
}

/* ---- Misc API ----------------------------------------------------------- */

static void test_api(void)
{
	bool names = true;
	for (int e = SFB_OK; e <= SFB_E_NOT_FOUND; e++)
		names = names && strcmp(sfb_err_name(e), "unknown") != 0;
	CHECK(names, "every enum sfb_err value has a name");
	CHECK(!strcmp(sfb_err_name(-1), "unknown") && !strcmp(sfb_err_name(18), "unknown") &&
	      !strcmp(sfb_err_name(1000), "unknown"),
	      "out-of-range error numbers are unknown");
	CHECK(sfb_abi_sp_reg(SFB_ABI_AMD64_LE) == 7 && sfb_abi_fp_reg(SFB_ABI_AMD64_LE) == 6 &&
	      sfb_abi_ra_reg(SFB_ABI_AMD64_LE) == -1, "amd64 registers");
	CHECK(sfb_abi_sp_reg(SFB_ABI_AARCH64_LE) == 31 && sfb_abi_fp_reg(SFB_ABI_AARCH64_BE) == 29 &&
	      sfb_abi_ra_reg(SFB_ABI_AARCH64_LE) == 30, "aarch64 registers");
	CHECK(sfb_abi_sp_reg(SFB_ABI_S390X_BE) == 15 && sfb_abi_fp_reg(SFB_ABI_S390X_BE) == 11 &&
	      sfb_abi_ra_reg(SFB_ABI_S390X_BE) == 14, "s390x registers");
	CHECK(sfb_abi_sp_reg(0) == -1 && sfb_abi_fp_reg(9) == -1 && sfb_abi_ra_reg(0) == -1,
	      "unknown ABI registers");

	/* sfb_fde_get / sfb_fre_row on a hand-made V3 section: raw fields. */
	sb_init(&B, 3, SFB_ABI_AARCH64_LE, SFB_F_FDE_SORTED | SFB_F_FDE_FUNC_START_PCREL, SEC);
	sb_fde(&B, 0x2000, 0x40, SB_INFO(SFB_FRE_TYPE_ADDR2, 1, 1) | SB_SIGNAL, SFB_FDE_TYPE_FLEX, 16);
	SB_FRE(&B, 0, 0, 1, SB_CTL(31, 0, 1), 0);
	SB_FRE(&B, 8, SB_MANGLED, 1, SB_CTL(29, 0, 1), 16, SB_CTL(0, 1, 0), -8);
	size_t len = sb_finish(&B, out, sizeof out);
	struct loaded l;
	CHECK(ld(&l, out, len, SEC, 1) == SFB_OK, "api section loads");
	if (l.err == SFB_OK) {
		struct sfb_fde f;
		CHECK(sfb_fde_get(&l.s, 0, &f) == SFB_OK && f.start == 0x2000 && f.size == 0x40 &&
		      f.num_fres == 2 && f.fre_type == SFB_FRE_TYPE_ADDR2 && f.pcmask == 1 &&
		      f.fde_type == SFB_FDE_TYPE_FLEX && f.rep_size == 16 && f.pauth_b == 1 &&
		      f.signal == 1 && f.fres_at == B.fde[0].fres_at,
		      "fde_get: every field");
		CHECK(sfb_fde_get(&l.s, 1, &f) == SFB_E_NOT_FOUND, "fde_get past the end");
		sfb_fde_get(&l.s, 0, &f);
		struct sfb_row r;
		CHECK(sfb_fre_row(&l.s, &f, 1, &r) == SFB_OK && r.pc_lo == 8 &&
		      sb_loc_eq(&r.cfa, &(struct sfb_loc){ SFB_LOC_EXPR, 0, 29, 16 }) &&
		      r.flags == (SFB_ROW_FLEX | SFB_ROW_MANGLED_RA | SFB_ROW_PAUTH_B | SFB_ROW_PCMASK |
				  SFB_ROW_SIGNAL),
		      "fre_row 1 of a PCMASK FDE: block offset, flags %#x", r.flags);
		CHECK(sfb_fre_row(&l.s, &f, 2, &r) == SFB_E_NOT_FOUND, "fre_row past the end");
		CHECK(l.s.fde_size == 16 && l.s.fde_off == B.fde_sub_at && l.s.fre_off == B.fre_sub_at &&
		      l.s.fre_len == B.fres_len && l.s.sec_addr == SEC && l.s.pc_lo == 0x2000 &&
		      l.s.pc_hi == 0x2040 && !l.s.b.swap,
		      "section fields");
	}
	ld_free(&l);
	/* Byte order: the same section in both orders decodes the same. */
	for (unsigned be = 0; be <= 1; be++) {
		sb_init(&B, 2, be ? SFB_ABI_AARCH64_BE : SFB_ABI_AARCH64_LE, SFB_F_FDE_SORTED, SEC);
		sb_fde(&B, 0x2000, 0x10, SB_INFO(SFB_FRE_TYPE_ADDR2, 0, 0), 0, 0);
		SB_FRE(&B, 0x102, SB_CFA_SP, 2, 0x1234, -0x1230, -0x1238);
		B.fde[0].size = 0x200;
		len = sb_finish(&B, out, sizeof out);
		CHECK(ld(&l, out, len, SEC, 1) == SFB_OK && l.s.b.swap == (be == 1),
		      "aarch64 %s: swap flag %d", be ? "BE" : "LE", l.s.b.swap);
		struct sfb_row r;
		CHECK(l.err == SFB_OK && sfb_lookup(&l.s, 0x2102, &r) == SFB_OK &&
		      sb_row_eq(&r, &(struct sfb_row){ .func_start = 0x2000, .func_size = 0x200,
						      .pc_lo = 0x2102, .pc_hi = 0x2200,
						      .cfa = X(31, 0x1234), .ra = D(CFA, -0x1230),
						      .fp = D(CFA, -0x1238) }),
		      "aarch64 %s: 2-byte start and words", be ? "BE" : "LE");
		ld_free(&l);
	}
}

/* ---- The build-id note of a loaded object (elf_phdrs.h) -------------------- */

/* A fake first page: an ELF header, one PT_NOTE header at note_at, and
 * the notes, laid out by the caller.  The page is a malloc()ed 4096
 * bytes, so that a read past it is an ASan/valgrind error. */
struct fake_page {
	unsigned char *p;
	Elf64_Phdr *note;
};

static struct fake_page fake_page_new(uint64_t note_at, uint64_t note_len, uint64_t align)
{
	struct fake_page f = { calloc(1, SFB_FIRST_PAGE), NULL };
	Elf64_Ehdr *eh = (Elf64_Ehdr *)f.p;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_phoff = sizeof *eh;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	Elf64_Phdr *ph = (Elf64_Phdr *)(f.p + eh->e_phoff);
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R, .p_memsz = SFB_FIRST_PAGE };
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_vaddr = note_at, .p_memsz = note_len,
			      .p_align = align };
	f.note = &ph[1];
	return f;
}

/* A note at off: its header, name (padded to align) and desc bytes. */
static uint64_t put_note(unsigned char *p, uint64_t off, uint32_t namesz, const char *name,
			 uint32_t descsz, uint32_t type, uint64_t align)
{
	memcpy(p + off, &namesz, 4);
	memcpy(p + off + 4, &descsz, 4);
	memcpy(p + off + 8, &type, 4);
	memcpy(p + off + 12, name, strlen(name) + 1);
	uint64_t desc = off + 12 + ((namesz + align - 1) & ~(align - 1));
	for (uint32_t i = 0; i < descsz && desc + i < SFB_FIRST_PAGE; i++)
		p[desc + i] = (unsigned char)(0xa0 + i);
	return desc;
}

static void test_build_id(void)
{
	uint16_t off = 0;
	uint32_t len = 0;
	unsigned n = 0;
	/* Found after a GNU property note (8-byte aligned, as linkers emit
	 * both); the bias places the page where it is mapped. */
	struct fake_page f = fake_page_new(0x300, 0x60, 8);
	uint64_t id = put_note(f.p, 0x300, 4, "GNU", 16, NT_GNU_PROPERTY_TYPE_0, 8);
	uint64_t id_note = id + 16;
	id = put_note(f.p, id_note, 4, "GNU", 20, NT_GNU_BUILD_ID, 8);
	const Elf64_Phdr *ph = sfb_loaded_phdrs((uintptr_t)f.p, (uintptr_t)f.p + 8192, &n);
	CHECK(ph && n == 2, "build-id: the fake page has 2 program headers (%u)", ph ? n : 0);
	bool found = ph && sfb_loaded_build_id((uintptr_t)f.p, (uintptr_t)f.p, ph, n, &off, &len);
	CHECK(found && off == id && len == 20 && f.p[off] == 0xa0,
	      "build-id: found after a property note at %#x, 20 bytes (got %d, %#x, %u)",
	      (unsigned)id, found, found ? off : 0, found ? len : 0);
	/* A note in another vendor's name is not the build-id. */
	memcpy(f.p + id_note + 12, "GNV", 4);
	CHECK(ph && !sfb_loaded_build_id((uintptr_t)f.p, (uintptr_t)f.p, ph, n, &off, &len),
	      "build-id: a note named GNV is not one");
	free(f.p);

	/* Malformed notes and segments: each is refused, and no read leaves
	 * the page (the sizes below point far past it). */
	static const struct {
		const char *what;
		uint64_t note_at, note_len;
		uint32_t namesz, descsz;
	} bad[] = {
		{ "desc past the segment", 0x300, 0x30, 4, 0x40 },
		{ "desc size near 2^32", 0x300, 0x30, 4, 0xfffffff0u },
		{ "name size near 2^32", 0x300, 0x30, 0xfffffff0u, 20 },
		{ "segment past the page", 0xff0, 0x40, 4, 20 },
		{ "segment below the page", (uint64_t)-0x100, 0x200, 4, 20 },
		{ "segment too short for a header", 0x300, 8, 4, 20 },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = fake_page_new(bad[i].note_at, bad[i].note_len, 4);
		if (bad[i].note_at + 12 <= SFB_FIRST_PAGE - 8)
			put_note(f.p, bad[i].note_at, bad[i].namesz, "GNU", bad[i].descsz,
				 NT_GNU_BUILD_ID, 4);
		ph = sfb_loaded_phdrs((uintptr_t)f.p, (uintptr_t)f.p + 8192, &n);
		CHECK(ph && n == 2 &&
			      !sfb_loaded_build_id((uintptr_t)f.p, (uintptr_t)f.p, ph, n, &off, &len),
		      "build-id: refused: %s", bad[i].what);
		free(f.p);
	}
}

int main(void)
{
	const char *w = getenv("SFB_DECODE_WORK");
	if (w && *w)
		work_scale = (unsigned)strtoul(w, NULL, 10);
	else if (getenv("SFB_VALGRIND"))
		work_div = 8; /* make test-valgrind: ~50 times slower */
	corpus_dir = getenv("SFB_WRITE_CORPUS");
	if (corpus_dir && !*corpus_dir)
		corpus_dir = NULL;

	test_api();
	test_amd64();
	test_aarch64();
	test_s390x();
	test_empty();
	test_unsorted();
	test_coarse();
	test_reject_header();
	test_reject_fde();
	test_reject_fre();
	test_robust_handmade();
	test_build_id();
	test_fixtures();
	test_corpus();
	CHECK_DONE();
}
