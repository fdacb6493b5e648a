/* A tiny SFrame section builder for tests, plus a slow reference lookup.
 *
 * The builder emits SFrame V1, V2 or V3 sections, in either byte order, for
 * any ABI number, with exactly the FDEs, FREs and data words the test names,
 * written from the specifications (not from the decoder):
 *
 *   V1  FDE: start i32, size u32, fre_off u32, nfres u32, info u8      (17)
 *   V2  FDE: V1 + rep_size u8 + padding u16                            (20)
 *   V3  FDE index: start i64, size u32, fre_off u32                    (16)
 *       attribute at fre_off: nfres u16, info u8, info2 u8, rep u8     (5)
 *   FRE: start (u8/u16/u32 by FRE type), info u8, data words.
 *
 * Usage:
 *   static struct sb b;
 *   sb_init(&b, 2, SFB_ABI_AMD64_LE, SFB_F_FDE_SORTED, sec_addr);
 *   sb_fde(&b, 0x1000, 0x40, SB_INFO(SFB_FRE_TYPE_ADDR1, 0, 0), 0, 0);
 *   SB_FRE(&b, 0, SB_CFA_SP, 1, 8);          // start 0, CFA = SP + 8
 *   SB_FRE(&b, 1, SB_CFA_SP, 1, 16, -16);
 *   size_t len = sb_finish(&b, buf, sizeof buf);
 *
 * FDE starts are given as absolute addresses; sb_finish() encodes them
 * relative to the section start or, with SFB_F_FDE_FUNC_START_PCREL, to the
 * field itself.  Everything the test may want to corrupt is reachable: the
 * stored FDE parameters (b.fde[i]) may be edited before sb_finish(), and
 * sb_finish() records where each part landed (fde_sub_at, fre_sub_at,
 * fde[i].rec_at, fde[i].attr_at, and sb_fre() returns an FRE's offset in
 * the FRE sub-section) so that bytes can be patched afterwards with
 * sb_put().  Header fields live at fixed offsets (SB_H_*). */
#ifndef SFB_TEST_SFRAME_BUILDER_H
#define SFB_TEST_SFRAME_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rows/sframe_decode.h"
#include "rows/sframe_format.h"

#define SB_MAX_FDES 512
#define SB_MAX_FRE_BYTES (64 * 1024)

/* Header field offsets. */
#define SB_H_MAGIC 0
#define SB_H_VERSION 2
#define SB_H_FLAGS 3
#define SB_H_ABI 4
#define SB_H_FIXED_FP 5
#define SB_H_FIXED_RA 6
#define SB_H_AUXLEN 7
#define SB_H_NUM_FDES 8
#define SB_H_NUM_FRES 12
#define SB_H_FRE_LEN 16
#define SB_H_FDEOFF 20
#define SB_H_FREOFF 24

/* FDE info byte: FRE type, PCMASK, AArch64 pauth key B; V3 signal is 0x80. */
#define SB_INFO(fre_type, pcmask, pauth_b) \
	((unsigned)(fre_type) | ((pcmask) ? 0x10u : 0u) | ((pauth_b) ? 0x20u : 0u))
#define SB_SIGNAL 0x80u

/* FRE info flags for SB_FRE (count and size are filled in). */
#define SB_CFA_SP 0x01u
#define SB_CFA_FP 0x00u
#define SB_MANGLED 0x80u

/* V3 flexible FDE control word. */
#define SB_CTL(regnum, deref, reg_p) \
	((int64_t)(((uint64_t)(regnum) << 3) | ((deref) ? 2u : 0u) | ((reg_p) ? 1u : 0u)))

struct sb_fde {
	uint64_t start;        /* absolute function start */
	bool raw_start_set;    /* write raw_start verbatim instead */
	int64_t raw_start;
	uint32_t size;
	uint8_t info, info2, rep;
	uint32_t nfres;        /* counted by sb_fre(); may be edited */
	uint32_t fre_off;      /* in the FRE sub-section (V3: of the attribute) */
	/* Filled in by sb_finish(): absolute offsets in the output. */
	uint32_t rec_at;       /* the FDE (index) record */
	uint32_t attr_at;      /* V3 attribute */
	uint32_t fres_at;      /* first FRE */
};

struct sb {
	uint8_t version, flags, abi, aux_len;
	int8_t fixed_fp, fixed_ra;
	bool big;              /* byte order of the output */
	uint64_t sec_addr;     /* where byte 0 will be */
	uint32_t fde_gap;      /* bytes between aux header end and first sub-section */
	uint32_t fre_gap;      /* bytes between the two sub-sections */
	uint32_t tail;         /* bytes after the last sub-section */
	bool fre_first;        /* FRE sub-section before the FDE sub-section */
	uint8_t fill;          /* value of gap/aux/tail bytes */

	uint32_t nfdes;
	struct sb_fde fde[SB_MAX_FDES];
	uint8_t fres[SB_MAX_FRE_BYTES];
	uint32_t fres_len;
	uint32_t nfres_total;
	bool overflow;

	/* Filled in by sb_finish(). */
	uint32_t fde_sub_at, fre_sub_at, len;
};

static inline unsigned sb_fde_size(unsigned version)
{
	return version == 1 ? 17 : version == 2 ? 20 : 16;
}

static inline void sb_put(bool big, uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++) {
		unsigned shift = big ? 8 * (width - 1 - i) : 8 * i;
		p[i] = (uint8_t)(v >> shift);
	}
}

static inline uint64_t sb_getv(bool big, const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++) {
		unsigned shift = big ? 8 * (width - 1 - i) : 8 * i;
		v |= (uint64_t)p[i] << shift;
	}
	return v;
}

/* Defaults per ABI: the ABI's byte order; AMD64 RA at CFA-8, FP tracked. */
static inline void sb_init(struct sb *b, unsigned version, unsigned abi,
			   unsigned flags, uint64_t sec_addr)
{
	memset(b, 0, offsetof(struct sb, fde));
	b->nfdes = 0;
	b->fres_len = 0;
	b->nfres_total = 0;
	b->overflow = false;
	b->version = (uint8_t)version;
	b->abi = (uint8_t)abi;
	b->flags = (uint8_t)flags;
	b->sec_addr = sec_addr;
	b->big = abi == SFB_ABI_AARCH64_BE || abi == SFB_ABI_S390X_BE;
	b->fixed_ra = abi == SFB_ABI_AMD64_LE ? -8 : 0;
	b->fixed_fp = 0;
	b->fill = 0xa5;
}

static inline unsigned sb_fre_addr_size(unsigned fre_type)
{
	return fre_type == 0 ? 1 : fre_type == 1 ? 2 : 4;
}

static inline void sb_fre_bytes(struct sb *b, const void *p, uint32_t n)
{
	if (b->fres_len + (uint64_t)n > SB_MAX_FRE_BYTES) {
		b->overflow = true;
		return;
	}
	memcpy(b->fres + b->fres_len, p, n);
	b->fres_len += n;
}

/* Start a new FDE; FREs added next belong to it.  Returns its number. */
static inline uint32_t sb_fde(struct sb *b, uint64_t start, uint32_t size,
			      unsigned info, unsigned info2, unsigned rep)
{
	if (b->nfdes >= SB_MAX_FDES) {
		b->overflow = true;
		return SB_MAX_FDES - 1;
	}
	struct sb_fde *f = &b->fde[b->nfdes];
	memset(f, 0, sizeof *f);
	f->start = start;
	f->size = size;
	f->info = (uint8_t)info;
	f->info2 = (uint8_t)info2;
	f->rep = (uint8_t)rep;
	f->fre_off = b->fres_len;
	if (b->version == 3) {
		uint8_t attr[5] = { 0 }; /* written in sb_finish() */
		sb_fre_bytes(b, attr, 5);
	}
	return b->nfdes++;
}

/* Append an FRE with an explicit info byte and n data words of wbytes each
 * (wbytes 1, 2, 4; any other value writes 4-byte words).  Returns the
 * FRE's offset in the FRE sub-section. */
static inline uint32_t sb_fre_raw(struct sb *b, uint32_t start, unsigned info,
				  unsigned wbytes, const int64_t *w, unsigned n)
{
	uint32_t at = b->fres_len;
	uint8_t tmp[4 + 1 + 15 * 4];
	struct sb_fde *f = b->nfdes ? &b->fde[b->nfdes - 1] : NULL;
	unsigned asz = sb_fre_addr_size(f ? f->info & 0xf : 0), k = 0;
	if (wbytes != 1 && wbytes != 2 && wbytes != 4)
		wbytes = 4;
	if (n > 15)
		n = 15;
	sb_put(b->big, tmp, asz, start);
	k = asz;
	tmp[k++] = (uint8_t)info;
	for (unsigned i = 0; i < n; i++, k += wbytes)
		sb_put(b->big, tmp + k, wbytes, (uint64_t)w[i]);
	sb_fre_bytes(b, tmp, k);
	if (f)
		f->nfres++;
	b->nfres_total++;
	return at;
}

static inline unsigned sb_wcode(unsigned wbytes)
{
	return wbytes == 1 ? 0 : wbytes == 2 ? 1 : wbytes == 4 ? 2 : 3;
}

/* Append an FRE: flags is SB_CFA_SP/SB_CFA_FP | SB_MANGLED; the data-word
 * count and size fields are derived from n and wbytes. */
static inline uint32_t sb_fre(struct sb *b, uint32_t start, unsigned flags,
			      unsigned wbytes, const int64_t *w, unsigned n)
{
	unsigned info = (flags & 0x81u) | ((n & 0xfu) << 1) | (sb_wcode(wbytes) << 5);
	return sb_fre_raw(b, start, info, wbytes, w, n);
}

#define SB_NW(...) (sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
/* SB_FRE(b, start, flags, wbytes, w0, w1, ...): at least one word. */
#define SB_FRE(b, start, flags, wbytes, ...) \
	sb_fre((b), (start), (flags), (wbytes), (const int64_t[]){ __VA_ARGS__ }, \
	       (unsigned)SB_NW(__VA_ARGS__))
/* An FRE with no data words. */
#define SB_FRE0(b, start, flags) sb_fre((b), (start), (flags), 1, NULL, 0)

/* Lay the section out and write it to out (cap bytes).  Returns its length,
 * or 0 if it does not fit or the builder overflowed. */
static inline size_t sb_finish(struct sb *b, uint8_t *out, size_t cap)
{
	unsigned fsz = sb_fde_size(b->version);
	uint32_t hdr_end = 28u + b->aux_len;
	uint32_t fde_len = b->nfdes * fsz;
	uint32_t first = hdr_end + b->fde_gap;
	if (b->fre_first) {
		b->fre_sub_at = first;
		b->fde_sub_at = first + b->fres_len + b->fre_gap;
		b->len = b->fde_sub_at + fde_len + b->tail;
	} else {
		b->fde_sub_at = first;
		b->fre_sub_at = first + fde_len + b->fre_gap;
		b->len = b->fre_sub_at + b->fres_len + b->tail;
	}
	if (b->overflow || b->len > cap)
		return 0;
	memset(out, b->fill, b->len);
	bool big = b->big;
	sb_put(big, out + SB_H_MAGIC, 2, SFB_MAGIC);
	out[SB_H_VERSION] = b->version;
	out[SB_H_FLAGS] = b->flags;
	out[SB_H_ABI] = b->abi;
	out[SB_H_FIXED_FP] = (uint8_t)b->fixed_fp;
	out[SB_H_FIXED_RA] = (uint8_t)b->fixed_ra;
	out[SB_H_AUXLEN] = b->aux_len;
	sb_put(big, out + SB_H_NUM_FDES, 4, b->nfdes);
	sb_put(big, out + SB_H_NUM_FRES, 4, b->nfres_total);
	sb_put(big, out + SB_H_FRE_LEN, 4, b->fres_len);
	sb_put(big, out + SB_H_FDEOFF, 4, b->fde_sub_at - hdr_end);
	sb_put(big, out + SB_H_FREOFF, 4, b->fre_sub_at - hdr_end);

	memcpy(out + b->fre_sub_at, b->fres, b->fres_len);
	for (uint32_t i = 0; i < b->nfdes; i++) {
		struct sb_fde *f = &b->fde[i];
		uint8_t *p = out + b->fde_sub_at + i * fsz;
		f->rec_at = b->fde_sub_at + i * fsz;
		uint64_t base = b->sec_addr;
		if (b->flags & SFB_F_FDE_FUNC_START_PCREL)
			base += f->rec_at;
		uint64_t raw = f->raw_start_set ? (uint64_t)f->raw_start : f->start - base;
		if (b->version == 3) {
			sb_put(big, p, 8, raw);
			sb_put(big, p + 8, 4, f->size);
			sb_put(big, p + 12, 4, f->fre_off);
			uint64_t attr = (uint64_t)b->fre_sub_at + f->fre_off;
			f->attr_at = (uint32_t)attr;
			f->fres_at = (uint32_t)(attr + 5);
			if (attr + 5 <= b->len) {
				uint8_t *a = out + f->attr_at;
				sb_put(big, a, 2, f->nfres);
				a[2] = f->info;
				a[3] = f->info2;
				a[4] = f->rep;
			}
		} else {
			sb_put(big, p, 4, raw);
			sb_put(big, p + 4, 4, f->size);
			sb_put(big, p + 8, 4, f->fre_off);
			sb_put(big, p + 12, 4, f->nfres);
			p[16] = f->info;
			if (b->version == 2) {
				p[17] = f->rep;
				p[18] = p[19] = 0;
			}
			f->attr_at = 0;
			f->fres_at = b->fre_sub_at + f->fre_off;
		}
	}
	return b->len;
}

/* Patch a header/FDE field of a finished section in its byte order. */
static inline void sb_patch(const struct sb *b, uint8_t *out, uint32_t off,
			    unsigned width, uint64_t v)
{
	sb_put(b->big, out + off, width, v);
}

/* ---- Slow reference lookup ------------------------------------------- */

/* The row for pc by brute force: every FDE through sfb_fde_get(), every
 * FRE of the covering FDE through sfb_fre_row().  Independent of the
 * decoder's binary search, FRE scan and PCMASK arithmetic.  Returns SFB_OK,
 * SFB_E_NOT_FOUND, or -1 if two FDEs cover pc or an FDE/FRE cannot be read
 * (neither may happen on a loaded section).  If max_fres is non-zero and
 * the covering FDE has more FREs, returns -2 (too slow to check). */
static inline int sb_ref_lookup(const struct sfb_section *s, uint64_t pc,
				struct sfb_row *row, uint32_t max_fres)
{
	struct sfb_fde f, hit;
	int found = 0;
	memset(&hit, 0, sizeof hit);
	for (uint32_t i = 0; i < s->num_fdes; i++) {
		if (sfb_fde_get(s, i, &f) != SFB_OK)
			return -1;
		if (pc >= f.start && pc - f.start < f.size) {
			if (found++)
				return -1;
			hit = f;
		}
	}
	if (!found)
		return SFB_E_NOT_FOUND;
	f = hit;
	if (f.num_fres == 0) {
		memset(row, 0, sizeof *row);
		row->func_start = f.start;
		row->func_size = f.size;
		row->pc_lo = f.start;
		row->pc_hi = f.start + f.size;
		row->cfa = row->ra = row->fp =
			(struct sfb_loc){ SFB_LOC_UNDEFINED, 0, 0, 0 };
		row->flags = SFB_ROW_OUTERMOST | (f.signal ? SFB_ROW_SIGNAL : 0) |
			     (f.pcmask ? SFB_ROW_PCMASK : 0) | (f.pauth_b ? SFB_ROW_PAUTH_B : 0);
		return SFB_OK;
	}
	if (max_fres && f.num_fres > max_fres)
		return -2;
	uint64_t key = pc - f.start, block = 0, span = f.size;
	if (f.pcmask) {
		if (f.rep_size == 0)
			return -1;
		span = f.rep_size;
		block = key / f.rep_size * f.rep_size;
		key -= block;
	}
	uint64_t next = span, best_raw = 0;
	bool have = false;
	struct sfb_row r, best;
	memset(&best, 0, sizeof best);
	for (uint32_t j = 0; j < f.num_fres; j++) {
		if (sfb_fre_row(s, &f, j, &r) != SFB_OK)
			return -1;
		uint64_t raw = f.pcmask ? r.pc_lo : r.pc_lo - f.start;
		if (raw > key) {
			next = raw;
			break;
		}
		best = r;
		best_raw = raw;
		have = true;
	}
	if (!have)
		return SFB_E_NOT_FOUND;
	*row = best;
	row->pc_lo = f.start + block + best_raw;
	/* clipped to the function's end as offsets: block + next may reach
	 * past the top of the address space */
	row->pc_hi = f.start + (block + next < f.size ? block + next : f.size);
	return SFB_OK;
}

static inline bool sb_loc_eq(const struct sfb_loc *a, const struct sfb_loc *b)
{
	return a->kind == b->kind && a->deref == b->deref && a->reg == b->reg &&
	       a->off == b->off;
}

/* Field-by-field equality of two rows (struct padding is not compared). */
static inline bool sb_row_eq(const struct sfb_row *a, const struct sfb_row *b)
{
	return a->func_start == b->func_start && a->func_size == b->func_size &&
	       a->pc_lo == b->pc_lo && a->pc_hi == b->pc_hi &&
	       sb_loc_eq(&a->cfa, &b->cfa) && sb_loc_eq(&a->ra, &b->ra) &&
	       sb_loc_eq(&a->fp, &b->fp) && a->flags == b->flags;
}

#endif
