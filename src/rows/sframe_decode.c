/* SFrame decoder for versions 1, 2 and 3 and the AMD64, AArch64 and s390x
 * ABIs.  See sframe_decode.h for the contract.
 *
 * Shape: sfb_section_load() checks the header, then walks every FDE and
 * every FRE once with the same parsing code the lookups use, so a section
 * that loads can be looked up without further error paths.  All reads go
 * through sfb_get() (bytes.h), which bounds-checks against the section. */
#include "rows/sframe_decode.h"
#include "base/names.h"
#include "rows/sframe_format.h"

#include <stdbool.h>
#include <stdint.h>

#define HOST_BIG_ENDIAN (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/* Cap on FDEs: keeps every index computation inside uint32_t. */
#define SFB_MAX_FDES (1u << 28)

const char *sfb_err_name(int err)
{
	static const char *const names[] = {
		[SFB_OK] = "ok",
		[SFB_E_TRUNCATED] = "truncated",
		[SFB_E_MAGIC] = "bad-magic",
		[SFB_E_VERSION] = "bad-version",
		[SFB_E_FLAGS] = "bad-flags",
		[SFB_E_ABI] = "bad-abi",
		[SFB_E_HEADER] = "bad-header",
		[SFB_E_FDE_RANGE] = "bad-fde-range",
		[SFB_E_FDE_INFO] = "bad-fde-info",
		[SFB_E_FRE_RANGE] = "bad-fre-range",
		[SFB_E_FRE_ORDER] = "bad-fre-order",
		[SFB_E_FRE_INFO] = "bad-fre-info",
		[SFB_E_FLEX] = "bad-flex-rule",
		[SFB_E_UNSORTED] = "unsorted",
		[SFB_E_OVERLAP] = "overlapping-fdes",
		[SFB_E_COUNT] = "bad-count",
		[SFB_E_TOO_BIG] = "too-big",
		[SFB_E_NOT_FOUND] = "not-found",
	};
	return SFB_NAME_OF(names, err);
}

int sfb_abi_sp_reg(uint8_t abi)
{
	switch (abi) {
	case SFB_ABI_AMD64_LE: return 7;
	case SFB_ABI_AARCH64_LE: case SFB_ABI_AARCH64_BE: return 31;
	case SFB_ABI_S390X_BE: return 15;
	}
	return -1;
}

int sfb_abi_fp_reg(uint8_t abi)
{
	switch (abi) {
	case SFB_ABI_AMD64_LE: return 6;
	case SFB_ABI_AARCH64_LE: case SFB_ABI_AARCH64_BE: return 29;
	case SFB_ABI_S390X_BE: return 11;
	}
	return -1;
}

int sfb_abi_ra_reg(uint8_t abi)
{
	switch (abi) {
	case SFB_ABI_AARCH64_LE: case SFB_ABI_AARCH64_BE: return 30;
	case SFB_ABI_S390X_BE: return 14;
	}
	return -1; /* AMD64: the RA is on the stack at function entry */
}

/* ---- FDEs ------------------------------------------------------------- */

/* Read FDE i and, for V3, its attribute record.  Checks only what reading
 * needs; sfb_section_load() checks the rest once. */
static int read_fde(const struct sfb_section *s, uint32_t i, struct sfb_fde *f)
{
	uint64_t at = (uint64_t)s->fde_off + (uint64_t)i * s->fde_size;
	uint64_t start, size, fre_off, nfres, info, info2 = 0, rep = 0;
	const struct sfb_bytes *b = &s->b;

	if (s->version == SFB_VERSION_3) {
		if (!sfb_get(b, at, 8, &start) || !sfb_get(b, at + 8, 4, &size) ||
		    !sfb_get(b, at + 12, 4, &fre_off))
			return SFB_E_TRUNCATED;
		uint64_t attr = (uint64_t)s->fre_off + fre_off;
		if (fre_off > s->fre_len || s->fre_len - fre_off < SFB_V3_ATTR_SIZE)
			return SFB_E_FRE_RANGE;
		if (!sfb_get(b, attr, 2, &nfres) || !sfb_get(b, attr + 2, 1, &info) ||
		    !sfb_get(b, attr + 3, 1, &info2) || !sfb_get(b, attr + 4, 1, &rep))
			return SFB_E_TRUNCATED;
		f->fres_at = (uint32_t)(attr + SFB_V3_ATTR_SIZE);
	} else {
		uint64_t s32;
		if (!sfb_get(b, at, 4, &s32) || !sfb_get(b, at + 4, 4, &size) ||
		    !sfb_get(b, at + 8, 4, &fre_off) || !sfb_get(b, at + 12, 4, &nfres) ||
		    !sfb_get(b, at + 16, 1, &info))
			return SFB_E_TRUNCATED;
		start = (uint64_t)sfb_sext(s32, 4);
		if (s->version == SFB_VERSION_2 && !sfb_get(b, at + 17, 1, &rep))
			return SFB_E_TRUNCATED;
		if (fre_off > s->fre_len)
			return SFB_E_FRE_RANGE;
		f->fres_at = (uint32_t)(s->fre_off + fre_off);
	}
	/* Start is relative to the field itself (PCREL, always so in V3 output
	 * of current toolchains) or to the start of the section. */
	uint64_t base = s->sec_addr;
	if (s->flags & SFB_F_FDE_FUNC_START_PCREL)
		base += at;
	/* start is signed: the function must not lie below address 0 or
	 * wrap past the top. */
	if ((int64_t)start < 0 ? base < -(uint64_t)start : base + start < base)
		return SFB_E_FDE_RANGE;
	f->start = base + start;
	f->size = (uint32_t)size;
	f->num_fres = (uint32_t)nfres;
	f->fre_type = SFB_FDE_INFO_FRE_TYPE(info);
	f->pcmask = SFB_FDE_INFO_PCMASK(info);
	f->pauth_b = SFB_FDE_INFO_PAUTH_B(info);
	f->signal = s->version == SFB_VERSION_3 ? SFB_FDE_INFO_V3_SIGNAL(info) : 0;
	f->fde_type = SFB_FDE_INFO2_TYPE(info2);
	f->rep_size = (uint8_t)rep;
	if (f->pcmask && s->version == SFB_VERSION_1 && s->abi == SFB_ABI_AMD64_LE)
		f->rep_size = SFB_AMD64_V1_PLT_SIZE;

	uint64_t reserved = s->version == SFB_VERSION_3 ? SFB_FDE_INFO_V3_RESERVED
							: SFB_FDE_INFO_V12_RESERVED;
	if ((info & reserved) || f->fre_type > SFB_FRE_TYPE_ADDR4 ||
	    (info2 & SFB_FDE_INFO2_RESERVED) || f->fde_type > SFB_FDE_TYPE_FLEX ||
	    (f->pcmask && f->rep_size == 0))
		return SFB_E_FDE_INFO;
	return SFB_OK;
}

int sfb_fde_get(const struct sfb_section *s, uint32_t i, struct sfb_fde *fde)
{
	if (i >= s->num_fdes)
		return SFB_E_NOT_FOUND;
	return read_fde(s, i, fde);
}

/* ---- FREs ------------------------------------------------------------- */

struct fre {
	uint32_t start;   /* offset from function start (or within a PCMASK block) */
	uint8_t info;
	uint8_t count;    /* data words */
	uint8_t wsize;    /* bytes per data word: 1, 2, 4 */
	uint64_t words_at;
	uint64_t next;    /* offset just past this FRE */
};

static const uint8_t fre_addr_size[3] = { 1, 2, 4 };

/* Parse the FRE header at 'at', bounded by the FRE sub-section end.
 * Always inlined: sfb_lookup()'s scan calls it for every FRE it passes,
 * with fre_type a constant, so that the accessor's reads are of constant
 * width and the fields it does not use are never stored. */
static inline __attribute__((always_inline)) int
parse_fre(const struct sfb_section *s, uint8_t fre_type, uint64_t at, uint64_t end,
	  struct fre *r)
{
	unsigned asz = fre_addr_size[fre_type];
	uint64_t start, info;
	if (at > end || end - at < asz + 1u || !sfb_get(&s->b, at, asz, &start) ||
	    !sfb_get(&s->b, at + asz, 1, &info))
		return SFB_E_FRE_RANGE;
	r->start = (uint32_t)start;
	r->info = (uint8_t)info;
	r->count = SFB_FRE_INFO_COUNT(info);
	unsigned code = SFB_FRE_INFO_SIZE(info);
	if (code > 2)
		return SFB_E_FRE_INFO;
	r->wsize = (uint8_t)(1u << code);
	r->words_at = at + asz + 1;
	uint64_t n = (uint64_t)r->count * r->wsize;
	if (end - r->words_at < n)
		return SFB_E_FRE_RANGE;
	r->next = r->words_at + n;
	return SFB_OK;
}

/* The FRE that applies at key (an offset into the function or PCMASK
 * block): the last of n FREs from 'at' that starts at or before key, and
 * the start of the next one if there is one.  Each FRE passed is parsed
 * (and checked) by parse_fre() inlined, for its start and length only;
 * the one that applies is kept by its offset and parsed again, not
 * copied on every step: code built without frame pointers has a FRE at
 * every push and pop, and a lookup passes several.  Inlined, with
 * fre_type a constant in each of sfb_lookup()'s three calls, so that a
 * FRE header's rules live in parse_fre() alone.  Why not search without
 * scanning: the format has no index of FRE positions, and keeping one
 * would cost memory per FRE for lookups the row memo mostly spares
 * (docs/SPEED.md, Optimisations kept and dropped). */
static inline __attribute__((always_inline)) int
scan_fres(const struct sfb_section *s, uint8_t fre_type, uint64_t at, uint64_t end,
	  uint32_t n, uint64_t key, struct fre *best, uint64_t *next_start)
{
	uint64_t best_at = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		struct fre r;
		int err = parse_fre(s, fre_type, at, end, &r);
		if (err)
			return err;
		if (r.start > key) {
			*next_start = r.start;
			break;
		}
		best_at = at;
		at = r.next;
	}
	if (best_at == UINT64_MAX)
		return SFB_E_NOT_FOUND;
	return parse_fre(s, fre_type, best_at, end, best);
}

static int32_t fre_word(const struct sfb_section *s, const struct fre *r,
			unsigned k, bool is_signed)
{
	uint64_t v = 0;
	sfb_get(&s->b, r->words_at + (uint64_t)k * r->wsize, r->wsize, &v);
	return is_signed ? (int32_t)sfb_sext(v, r->wsize) : (int32_t)v;
}

static uint64_t fre_sub_end(const struct sfb_section *s)
{
	return (uint64_t)s->fre_off + s->fre_len;
}

/* Does the RA (FP) have a data word of its own in default FDEs?  The
 * header's fixed offsets say when they do not (AMD64: RA at CFA-8). */
static bool ra_tracked(const struct sfb_section *s) { return s->fixed_ra == 0; }
static bool fp_tracked(const struct sfb_section *s) { return s->fixed_fp == 0; }

static struct sfb_loc loc_cfa_deref(int32_t off)
{
	return (struct sfb_loc){ SFB_LOC_EXPR, 1, SFB_REG_CFA, off };
}

static struct sfb_loc loc_same(void)
{
	return (struct sfb_loc){ SFB_LOC_SAME, 0, 0, 0 };
}

/* Register numbers must fit struct sfb_loc's 16-bit field, below the
 * SFB_REG_CFA marker.  Numbers the walker has no value for stop a walk
 * there, with a reason; they do not make a section invalid. */
#define SFB_MAX_REGNUM SFB_REG_CFA

/* A default-FDE RA or FP data word: a CFA-relative stack slot, except that
 * s390x V2 encodes a register number in an odd value. */
static int default_slot(const struct sfb_section *s, int32_t w, struct sfb_loc *out)
{
	if (s->abi == SFB_ABI_S390X_BE && s->version == SFB_VERSION_2 &&
	    SFB_S390X_V2_IS_REGNUM(w)) {
		if (w < 0 || (uint32_t)SFB_S390X_V2_REGNUM(w) >= SFB_MAX_REGNUM)
			return SFB_E_FRE_INFO;
		*out = (struct sfb_loc){ SFB_LOC_EXPR, 0, (uint16_t)SFB_S390X_V2_REGNUM(w), 0 };
		return SFB_OK;
	}
	*out = loc_cfa_deref(w);
	return SFB_OK;
}

/* The CFA offset word; s390x stores (offset - 160) / 8.  False if the
 * decoded offset does not fit. */
static bool cfa_offset(const struct sfb_section *s, int32_t w, int32_t *out)
{
	int64_t v = w;
	if (s->abi == SFB_ABI_S390X_BE)
		v = SFB_S390X_CFA_OFFSET_DECODE(v);
	if (v < INT32_MIN || v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

/* Defaults when an FRE says nothing about RA or FP. */
static void default_ra(const struct sfb_section *s, struct sfb_row *row)
{
	if (s->fixed_ra) {
		row->ra = loc_cfa_deref(s->fixed_ra);
		row->flags |= SFB_ROW_RA_FIXED;
	} else {
		row->ra = loc_same();
	}
}

static void default_fp(const struct sfb_section *s, struct sfb_row *row)
{
	row->fp = s->fixed_fp ? loc_cfa_deref(s->fixed_fp) : loc_same();
}

static int decode_default(const struct sfb_section *s, const struct fre *r,
			  struct sfb_row *row)
{
	unsigned max = 1u + ra_tracked(s) + fp_tracked(s);
	if (r->count == 0)
		return s->version >= SFB_VERSION_2 ? SFB_OK : SFB_E_FRE_INFO;
	if (r->count > max)
		return SFB_E_FRE_INFO;
	int sp = sfb_abi_sp_reg(s->abi), fp = sfb_abi_fp_reg(s->abi), err;
	int32_t off;
	if (!cfa_offset(s, fre_word(s, r, 0, true), &off))
		return SFB_E_FRE_INFO;
	row->cfa = (struct sfb_loc){ SFB_LOC_EXPR, 0,
				     (uint16_t)(SFB_FRE_INFO_CFA_SP(r->info) ? sp : fp), off };
	unsigned k = 1;
	if (!ra_tracked(s)) {
		default_ra(s, row);
	} else if (k < r->count) {
		int32_t w = fre_word(s, r, k++, true);
		if (w == SFB_RA_OFFSET_INVALID) {
			row->ra = loc_same();
			row->flags |= SFB_ROW_RA_PADDING;
		} else if ((err = default_slot(s, w, &row->ra))) {
			return err;
		}
	} else {
		row->ra = loc_same();
	}
	if (!fp_tracked(s))
		default_fp(s, row);
	else if (k < r->count)
		return default_slot(s, fre_word(s, r, k, true), &row->fp);
	else
		row->fp = loc_same();
	return SFB_OK;
}

/* One control/offset pair of a flexible FDE. */
static int flex_pair(const struct sfb_section *s, const struct fre *r,
		     unsigned k, bool is_cfa, struct sfb_loc *out)
{
	uint32_t ctl = (uint32_t)fre_word(s, r, k, false);
	int32_t off = fre_word(s, r, k + 1, true);
	if (SFB_FLEX_RESERVED(ctl) || SFB_FLEX_REGNUM(ctl) >= SFB_MAX_REGNUM)
		return SFB_E_FLEX;
	if (is_cfa && !SFB_FLEX_REG_P(ctl))
		return SFB_E_FLEX; /* the CFA needs a base register */
	if (!is_cfa && ctl == 0)
		return SFB_E_FLEX; /* 0 is the padding word, not a rule */
	out->kind = SFB_LOC_EXPR;
	out->deref = SFB_FLEX_DEREF_P(ctl);
	out->reg = SFB_FLEX_REG_P(ctl) ? (uint16_t)SFB_FLEX_REGNUM(ctl) : SFB_REG_CFA;
	if (is_cfa && !cfa_offset(s, off, &off))
		return SFB_E_FRE_INFO;
	out->off = off;
	return SFB_OK;
}

/* Flexible FDE data words: CFA pair; then an RA pair, or one padding word
 * when only FP follows; then an optional FP pair. */
static int decode_flex(const struct sfb_section *s, const struct fre *r,
		       struct sfb_row *row)
{
	unsigned n = r->count;
	row->flags |= SFB_ROW_FLEX;
	if (n == 0)
		return SFB_OK;
	if (n < 2)
		return SFB_E_FRE_INFO;
	int err = flex_pair(s, r, 0, true, &row->cfa);
	if (err)
		return err;
	unsigned k = 2;
	if (k < n && fre_word(s, r, k, false) == 0) {
		row->flags |= SFB_ROW_RA_PADDING;
		default_ra(s, row);
		k += 1;
		if (n - k != 2)
			return SFB_E_FRE_INFO; /* padding only precedes an FP pair */
	} else if (k < n) {
		if (n - k < 2)
			return SFB_E_FRE_INFO;
		if ((err = flex_pair(s, r, k, false, &row->ra)))
			return err;
		k += 2;
	} else {
		default_ra(s, row);
	}
	if (k == n) {
		default_fp(s, row);
		return SFB_OK;
	}
	if (n - k != 2)
		return SFB_E_FRE_INFO;
	return flex_pair(s, r, k, false, &row->fp);
}

static int decode_row(const struct sfb_section *s, const struct sfb_fde *f,
		      const struct fre *r, struct sfb_row *row)
{
	row->func_start = f->start;
	row->func_size = f->size;
	row->flags = 0;
	row->nregs = 0; /* SFrame gives no rule for other registers */
	if (f->signal)
		row->flags |= SFB_ROW_SIGNAL;
	if (f->pcmask)
		row->flags |= SFB_ROW_PCMASK;
	if (f->pauth_b)
		row->flags |= SFB_ROW_PAUTH_B;
	if (SFB_FRE_INFO_MANGLED_RA(r->info)) {
		if (s->abi != SFB_ABI_AARCH64_LE && s->abi != SFB_ABI_AARCH64_BE)
			return SFB_E_FRE_INFO;
		row->flags |= SFB_ROW_MANGLED_RA;
	}
	/* Errata 2 / V3: no data words means RA undefined: outermost frame. */
	row->cfa = row->ra = row->fp = (struct sfb_loc){ SFB_LOC_UNDEFINED, 0, 0, 0 };
	if (r->count == 0)
		row->flags |= SFB_ROW_OUTERMOST;
	if (f->fde_type == SFB_FDE_TYPE_FLEX)
		return decode_flex(s, r, row);
	return decode_default(s, r, row);
}

/* The outermost row of a V3 FDE that has no FREs. */
static void outermost_row(const struct sfb_fde *f, struct sfb_row *row)
{
	*row = (struct sfb_row){ 0 };
	row->func_start = f->start;
	row->func_size = f->size;
	row->pc_lo = f->start;
	row->pc_hi = f->start + f->size;
	row->cfa = row->ra = row->fp = (struct sfb_loc){ SFB_LOC_UNDEFINED, 0, 0, 0 };
	row->flags = SFB_ROW_OUTERMOST | (f->signal ? SFB_ROW_SIGNAL : 0) |
		     (f->pcmask ? SFB_ROW_PCMASK : 0) | (f->pauth_b ? SFB_ROW_PAUTH_B : 0);
}

int sfb_fre_row(const struct sfb_section *s, const struct sfb_fde *f,
		uint32_t j, struct sfb_row *row)
{
	struct fre r;
	uint64_t at = f->fres_at, end = fre_sub_end(s);
	if (j >= f->num_fres)
		return SFB_E_NOT_FOUND;
	for (uint32_t i = 0;; i++) {
		int err = parse_fre(s, f->fre_type, at, end, &r);
		if (err)
			return err;
		if (i == j)
			break;
		at = r.next;
	}
	int err = decode_row(s, f, &r, row);
	row->pc_lo = f->pcmask ? r.start : f->start + r.start;
	row->pc_hi = 0;
	return err;
}

/* Check every FRE of one FDE: in bounds, start offsets strictly increasing
 * and within the function (or PCMASK block), data words decodable. */
static int check_fres(const struct sfb_section *s, const struct sfb_fde *f)
{
	uint64_t at = f->fres_at, end = fre_sub_end(s);
	uint64_t limit = f->pcmask ? f->rep_size : (uint64_t)f->size;
	struct fre r = { 0 };
	struct sfb_row row;
	if (f->num_fres == 0 && (s->version != SFB_VERSION_3 ||
				 f->fde_type != SFB_FDE_TYPE_DEFAULT))
		return SFB_E_FDE_INFO; /* only V3 default FDEs mark outermost so */
	/* Whether a default-FDE row decodes depends only on its info byte,
	 * except on s390x (register numbers and scaled CFA offsets live in
	 * the data words): rows whose info byte was just seen valid need not
	 * be decoded again. */
	bool info_decides = f->fde_type == SFB_FDE_TYPE_DEFAULT && s->abi != SFB_ABI_S390X_BE;
	int last_ok_info = -1;
	for (uint32_t i = 0; i < f->num_fres; i++) {
		uint32_t prev = r.start;
		int err = parse_fre(s, f->fre_type, at, end, &r);
		if (err)
			return err;
		/* Toolchains write a last FRE at offset == size (an empty row
		 * after the last instruction); never beyond it. */
		if (r.start > limit || (i > 0 && r.start <= prev))
			return SFB_E_FRE_ORDER;
		if (!info_decides || r.info != last_ok_info) {
			if ((err = decode_row(s, f, &r, &row)))
				return err;
			last_ok_info = info_decides ? r.info : -1;
		}
		at = r.next;
	}
	return SFB_OK;
}

/* ---- FDE order -------------------------------------------------------- */

/* Start address of FDE i: the one field the binary search needs. */
static uint64_t fde_start(const struct sfb_section *s, uint32_t i)
{
	uint64_t at = (uint64_t)s->fde_off + (uint64_t)i * s->fde_size, v = 0;
	int64_t start;
	if (s->version == SFB_VERSION_3) {
		sfb_get(&s->b, at, 8, &v);
		start = (int64_t)v;
	} else {
		sfb_get(&s->b, at, 4, &v);
		start = sfb_sext(v, 4);
	}
	uint64_t base = s->sec_addr;
	if (s->flags & SFB_F_FDE_FUNC_START_PCREL)
		base += at;
	return base + (uint64_t)start;
}

/* Heapsort of FDE numbers by start address: no recursion, no allocation,
 * O(n log n) whatever the input. */
static void sift_down(const struct sfb_section *s, uint32_t *a, uint32_t root,
		      uint32_t n)
{
	for (;;) {
		uint32_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && fde_start(s, a[child + 1]) > fde_start(s, a[child]))
			child++;
		if (fde_start(s, a[root]) >= fde_start(s, a[child]))
			return;
		uint32_t t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static void sort_fdes(const struct sfb_section *s, uint32_t *a, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		a[i] = i;
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(s, a, i, n);
	for (uint32_t end = n; end-- > 1;) {
		uint32_t t = a[0];
		a[0] = a[end];
		a[end] = t;
		sift_down(s, a, 0, end);
	}
}

static uint32_t fde_at_rank(const struct sfb_section *s, uint32_t k)
{
	return s->order ? s->order[k] : k;
}

/* ---- Load ------------------------------------------------------------- */

static int load_header(struct sfb_section *s, const void *p, size_t len,
		       uint64_t sec_addr)
{
	uint64_t v, magic, nfdes, nfres, frelen, fdeoff, freoff, aux;
	*s = (struct sfb_section){ 0 };
	s->b = (struct sfb_bytes){ p, len, false };
	s->sec_addr = sec_addr;
	if (!sfb_get(&s->b, 0, 2, &magic))
		return SFB_E_TRUNCATED;
	if (magic == SFB_MAGIC_SWAPPED)
		s->b.swap = true;
	else if (magic != SFB_MAGIC)
		return SFB_E_MAGIC;
	if (!sfb_get(&s->b, 2, 1, &v))
		return SFB_E_TRUNCATED;
	s->version = (uint8_t)v;
	if (s->version < SFB_VERSION_1 || s->version > SFB_VERSION_3)
		return SFB_E_VERSION;
	if (len < SFB_HEADER_SIZE)
		return SFB_E_TRUNCATED;
	sfb_get(&s->b, 3, 1, &v);
	s->flags = (uint8_t)v;
	static const uint8_t allowed[4] = {
		0,
		SFB_F_FDE_SORTED | SFB_F_FRAME_POINTER,
		SFB_F_FDE_SORTED | SFB_F_FRAME_POINTER | SFB_F_FDE_FUNC_START_PCREL,
		SFB_F_FDE_SORTED | SFB_F_FDE_FUNC_START_PCREL,
	};
	if (s->flags & ~allowed[s->version])
		return SFB_E_FLAGS;

	sfb_get(&s->b, 4, 1, &v);
	s->abi = (uint8_t)v;
	bool big = HOST_BIG_ENDIAN ^ s->b.swap;
	switch (s->abi) {
	case SFB_ABI_AMD64_LE: case SFB_ABI_AARCH64_LE:
		if (big)
			return SFB_E_ABI;
		break;
	case SFB_ABI_AARCH64_BE:
		if (!big)
			return SFB_E_ABI;
		break;
	case SFB_ABI_S390X_BE:
		if (!big || s->version == SFB_VERSION_1)
			return SFB_E_ABI; /* s390x arrived with V2 erratum 1 */
		break;
	default:
		return SFB_E_ABI;
	}
	sfb_get(&s->b, 5, 1, &v);
	s->fixed_fp = (int8_t)v;
	sfb_get(&s->b, 6, 1, &v);
	s->fixed_ra = (int8_t)v;
	/* AMD64 keeps the RA at a fixed CFA offset: a header without one
	 * cannot be unwound. */
	if (s->abi == SFB_ABI_AMD64_LE && s->fixed_ra == 0)
		return SFB_E_HEADER;
	sfb_get(&s->b, 7, 1, &aux);
	sfb_get(&s->b, 8, 4, &nfdes);
	sfb_get(&s->b, 12, 4, &nfres);
	sfb_get(&s->b, 16, 4, &frelen);
	sfb_get(&s->b, 20, 4, &fdeoff);
	sfb_get(&s->b, 24, 4, &freoff);

	s->fde_size = s->version == SFB_VERSION_1 ? SFB_V1_FDE_SIZE
		      : s->version == SFB_VERSION_2 ? SFB_V2_FDE_SIZE
						    : SFB_V3_FDE_SIZE;
	if (nfdes > SFB_MAX_FDES)
		return SFB_E_TOO_BIG;
	uint64_t hdr_end = SFB_HEADER_SIZE + aux;
	uint64_t fde_at = hdr_end + fdeoff, fde_len = nfdes * s->fde_size;
	uint64_t fre_at = hdr_end + freoff;
	if (hdr_end > len || fde_at > len || len - fde_at < fde_len ||
	    fre_at > len || len - fre_at < frelen)
		return SFB_E_TRUNCATED;
	/* The two sub-sections must not overlap each other or the header. */
	if ((fde_len && frelen && fde_at < fre_at + frelen && fre_at < fde_at + fde_len))
		return SFB_E_HEADER;
	s->num_fdes = (uint32_t)nfdes;
	s->num_fres = (uint32_t)nfres;
	s->fde_off = (uint32_t)fde_at;
	s->fre_off = (uint32_t)fre_at;
	s->fre_len = (uint32_t)frelen;
	return SFB_OK;
}

int sfb_section_load(struct sfb_section *s, const void *p, size_t len,
		     uint64_t sec_addr, uint32_t *order_scratch,
		     size_t scratch_entries)
{
	if (len > UINT32_MAX) {
		*s = (struct sfb_section){ 0 };
		return SFB_E_TOO_BIG;
	}
	int err = load_header(s, p, len, sec_addr);
	if (err)
		return err;

	uint64_t total_fres = 0;
	bool sorted = true;
	uint64_t prev_start = 0;
	for (uint32_t i = 0; i < s->num_fdes; i++) {
		struct sfb_fde f;
		if ((err = read_fde(s, i, &f)))
			return err;
		if (f.start + f.size < f.start)
			return SFB_E_FDE_RANGE;
		if ((err = check_fres(s, &f)))
			return err;
		total_fres += f.num_fres;
		if (i > 0 && f.start < prev_start)
			sorted = false;
		prev_start = f.start;
	}
	if (total_fres != s->num_fres)
		return SFB_E_COUNT;

	if (!sorted) {
		if (!order_scratch || scratch_entries < s->num_fdes)
			return SFB_E_UNSORTED;
		sort_fdes(s, order_scratch, s->num_fdes);
		s->order = order_scratch;
	}
	/* In address order, no FDE may overlap the next: a PC must have one
	 * answer. */
	for (uint32_t k = 0; k < s->num_fdes; k++) {
		struct sfb_fde f;
		read_fde(s, fde_at_rank(s, k), &f);
		if (k == 0)
			s->pc_lo = f.start;
		if (k > 0 && f.start < s->pc_hi)
			return SFB_E_OVERLAP;
		s->pc_hi = f.start + f.size;
	}
	return SFB_OK;
}

/* ---- Lookup ----------------------------------------------------------- */

unsigned sfb_coarse_build(struct sfb_section *s, uint32_t *index, unsigned nbuckets)
{
	s->coarse = NULL;
	s->coarse_n = 0;
	s->coarse_shift = 0;
	if (s->num_fdes < SFB_COARSE_MIN_FDES || nbuckets == 0 || s->pc_hi <= s->pc_lo)
		return 0;
	uint64_t last = s->pc_hi - s->pc_lo - 1;
	unsigned shift = 0;
	while ((last >> shift) >= nbuckets)
		shift++;
	unsigned n = (unsigned)(last >> shift) + 1;
	uint32_t r = 0;
	for (unsigned k = 0; k < n; k++) {
		uint64_t at = s->pc_lo + ((uint64_t)k << shift);
		while (r + 1 < s->num_fdes && fde_start(s, fde_at_rank(s, r + 1)) <= at)
			r++;
		__atomic_store_n(&index[k], r, __ATOMIC_RELAXED);
	}
	s->coarse = index;
	s->coarse_n = n;
	s->coarse_shift = (uint8_t)shift;
	return n;
}

/* Narrow the search range [*lo, *hi) to pc's bucket, keeping the search's
 * invariant: start(lo) <= pc, and start(hi) > pc unless hi is the end.
 * Both ends are checked against the FDE table itself. */
static void coarse_narrow(const struct sfb_section *s, uint64_t pc, uint32_t *lo,
			  uint32_t *hi)
{
	uint64_t k = (pc - s->pc_lo) >> s->coarse_shift;
	if (k >= s->coarse_n)
		return;
	uint32_t a = __atomic_load_n(&s->coarse[k], __ATOMIC_RELAXED);
	uint32_t b = k + 1 < s->coarse_n
			     ? __atomic_load_n(&s->coarse[k + 1], __ATOMIC_RELAXED) + 1
			     : s->num_fdes;
	if (a >= b || b > s->num_fdes || fde_start(s, fde_at_rank(s, a)) > pc ||
	    (b < s->num_fdes && fde_start(s, fde_at_rank(s, b)) <= pc))
		return;
	*lo = a;
	*hi = b;
}

int sfb_find_fde(const struct sfb_section *s, uint64_t pc, struct sfb_fde *fde)
{
	if (pc < s->pc_lo || pc >= s->pc_hi)
		return SFB_E_NOT_FOUND;
	/* Last FDE whose start <= pc. */
	uint32_t lo = 0, hi = s->num_fdes;
	if (s->coarse)
		coarse_narrow(s, pc, &lo, &hi);
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (fde_start(s, fde_at_rank(s, mid)) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	int err = read_fde(s, fde_at_rank(s, lo), fde);
	if (err)
		return err;
	if (pc < fde->start || pc - fde->start >= fde->size)
		return SFB_E_NOT_FOUND;
	return SFB_OK;
}

int sfb_lookup(const struct sfb_section *s, uint64_t pc, struct sfb_row *row)
{
	struct sfb_fde f;
	int err = sfb_find_fde(s, pc, &f);
	if (err)
		return err;
	if (f.num_fres == 0) {
		outermost_row(&f, row);
		return SFB_OK;
	}
	uint64_t key = pc - f.start, block = 0;
	/* read_fde() rejects a zero block size; checked again here so that
	 * even bytes changed since validation cannot divide by zero. */
	if (f.pcmask && f.rep_size == 0)
		return SFB_E_FDE_INFO;
	if (f.pcmask) {
		block = key - key % f.rep_size;
		key %= f.rep_size;
	}
	/* FREs are variable-length, so they are scanned in order; the last one
	 * starting at or before key applies. */
	uint64_t end = fre_sub_end(s);
	uint64_t next_start = f.pcmask ? f.rep_size : f.size;
	struct fre best;
	switch (f.fre_type) {
	case 0:
		err = scan_fres(s, 0, f.fres_at, end, f.num_fres, key, &best, &next_start);
		break;
	case 1:
		err = scan_fres(s, 1, f.fres_at, end, f.num_fres, key, &best, &next_start);
		break;
	default:
		err = scan_fres(s, 2, f.fres_at, end, f.num_fres, key, &best, &next_start);
		break;
	}
	if (err || (err = decode_row(s, &f, &best, row)))
		return err;
	/* The row's end, clipped to the function's, as offsets from its
	 * start: a PC-mask block's end may lie past the top of the address
	 * space where the function's does not (read_fde() refused FDEs that
	 * wrap), and would wrap round to a small address. */
	uint64_t hi = block + next_start;
	row->pc_lo = f.start + block + best.start;
	row->pc_hi = f.start + (hi < f.size ? hi : f.size);
	return SFB_OK;
}
