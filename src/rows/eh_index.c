/* An index over a bare .eh_frame (eh_index.h). */
#include "rows/eh_index.h"

#include <string.h>
#include "base/dwarf.h"

/* CIEs whose FDE encoding was read, by offset: a section has a handful
 * (one per compiler setting), each shared by runs of FDEs. */
#define CIE_CACHE 8

struct cie_enc {
	uint64_t off;
	int enc; /* the FDE pointer encoding, or -1: FDEs of this CIE are left out */
};

/* An entry's bounds at off: *at past its length field, *end at its end,
 * *idw the width of its CIE id / CIE pointer.  0 at the terminator (a
 * zero length), -1 if it runs past the section, 1 otherwise. */
static int entry_at(const struct sfb_bytes *b, uint64_t off, uint64_t *at, uint64_t *end,
		    unsigned *idw)
{
	uint64_t len;
	*at = off;
	if (!sfb_dw_get(b, at, b->len, 4, &len))
		return -1;
	*idw = 4;
	if (len == SFB_DW_LENGTH_64) {
		if (!sfb_dw_get(b, at, b->len, 8, &len))
			return -1;
		*idw = 8;
	}
	if (len == 0)
		return 0;
	if (len > b->len - *at || len < *idw)
		return -1;
	*end = *at + len;
	return 1;
}

/* The FDE pointer encoding of the CIE at off ('R' of a "z" augmentation;
 * absptr without one), or -1 if the CIE cannot be read or its FDEs'
 * initial locations have no base here (indirect, textrel, funcrel,
 * datarel).  Only what precedes 'R' is read: the rest is the
 * interpreter's, at lookup. */
static int cie_fde_encoding(const struct sfb_bytes *b, uint64_t off)
{
	uint64_t at, end, id, version, v, alen;
	int64_t sv;
	unsigned idw;
	if (entry_at(b, off, &at, &end, &idw) != 1 || !sfb_dw_get(b, &at, end, idw, &id) ||
	    id != 0 || !sfb_dw_get(b, &at, end, 1, &version) ||
	    (version != 1 && version != 3 && version != 4))
		return -1;
	char aug[8];
	unsigned naug = 0;
	for (;;) {
		if (!sfb_dw_get(b, &at, end, 1, &v))
			return -1;
		if (v == 0)
			break;
		if (naug == sizeof aug)
			return -1;
		aug[naug++] = (char)v;
	}
	/* Version 4: address and segment selector sizes. */
	if (version == 4 && (!sfb_dw_get(b, &at, end, 1, &v) || v != 8 ||
			     !sfb_dw_get(b, &at, end, 1, &v) || v != 0))
		return -1;
	if (sfb_dw_uleb(b, &at, end, &v) || sfb_dw_sleb(b, &at, end, &sv) ||
	    (version == 1 ? !sfb_dw_get(b, &at, end, 1, &v) : sfb_dw_uleb(b, &at, end, &v)))
		return -1;
	if (naug == 0)
		return DW_EH_PE_absptr;
	if (aug[0] != 'z' || sfb_dw_uleb(b, &at, end, &alen) || alen > end - at)
		return -1;
	uint64_t aend = at + alen;
	for (unsigned i = 1; i < naug; i++) {
		uint64_t e, skip;
		switch (aug[i]) {
		case 'R':
			if (!sfb_dw_get(b, &at, aend, 1, &e) || (e & DW_EH_PE_indirect) ||
			    !sfb_dw_enc_ok((uint8_t)e) ||
			    (e & DW_EH_PE_APPL_MASK) == DW_EH_PE_datarel)
				return -1;
			return (int)e;
		case 'P': /* the personality routine's encoding and pointer */
			if (!sfb_dw_get(b, &at, aend, 1, &e) ||
			    sfb_dw_ptr(b, &at, aend, (uint8_t)(e & ~DW_EH_PE_indirect), 0, 0, &skip,
				       -1))
				return -1;
			break;
		case 'L': /* the LSDA pointer's encoding */
			if (!sfb_dw_get(b, &at, aend, 1, &e))
				return -1;
			break;
		case 'S': case 'B': case 'G': /* no data */
			break;
		default: /* unknown: where 'R' would lie is unknown too */
			return -1;
		}
	}
	return DW_EH_PE_absptr;
}

static int cie_lookup(const struct sfb_bytes *b, uint64_t off, struct cie_enc *cache,
		      unsigned *next)
{
	for (unsigned i = 0; i < CIE_CACHE; i++)
		if (cache[i].off == off)
			return cache[i].enc;
	struct cie_enc *c = &cache[(*next)++ % CIE_CACHE];
	c->off = off;
	c->enc = cie_fde_encoding(b, off);
	return c->enc;
}

/* Heapsort by initial location: in place, no recursion, O(n log n). */
static void sift_down(struct sfb_eh_index_entry *t, uint32_t i, uint32_t n)
{
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && t[c + 1].pc > t[c].pc)
			c++;
		if (t[i].pc >= t[c].pc)
			return;
		struct sfb_eh_index_entry x = t[i];
		t[i] = t[c];
		t[c] = x;
		i = c;
	}
}

static void sort_entries(struct sfb_eh_index_entry *t, uint32_t n)
{
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(t, i, n);
	for (uint32_t end = n; end > 1; end--) {
		struct sfb_eh_index_entry x = t[0];
		t[0] = t[end - 1];
		t[end - 1] = x;
		sift_down(t, 0, end - 1);
	}
}

int sfb_eh_index_build(struct sfb_eh_index *ix, const void *frame, size_t len, uint64_t addr,
		       struct sfb_eh_index_entry *table, uint32_t cap)
{
	memset(ix, 0, sizeof *ix);
	/* Offsets of FDEs are entries of 32 bits. */
	if (len > INT32_MAX)
		len = INT32_MAX;
	const struct sfb_bytes b = { .p = frame, .len = len };
	struct cie_enc cache[CIE_CACHE];
	unsigned next = 0;
	for (unsigned i = 0; i < CIE_CACHE; i++)
		cache[i] = (struct cie_enc){ UINT64_MAX, -1 };
	uint32_t n = 0;
	uint64_t off = 0, at, end, id, begin, range;
	unsigned idw;
	int r;
	while (off < len && (r = entry_at(&b, off, &at, &end, &idw)) != 0) {
		if (r < 0) {
			ix->left_out++; /* what follows cannot be told apart */
			break;
		}
		uint64_t start = off, field = at;
		off = end;
		if (!sfb_dw_get(&b, &at, end, idw, &id) || id == 0)
			continue; /* a CIE */
		ix->fdes++;
		/* The CIE pointer counts back from its own field. */
		int enc = id <= field ? cie_lookup(&b, field - id, cache, &next) : -1;
		if (enc < 0 ||
		    sfb_dw_ptr(&b, &at, end, (uint8_t)enc, addr, 0, &begin, -1) ||
		    sfb_dw_ptr(&b, &at, end, (uint8_t)(enc & DW_EH_PE_FORMAT_MASK), 0, 0, &range,
			       -1)) {
			ix->left_out++;
			continue;
		}
		if (range == 0)
			continue; /* covers nothing */
		int64_t rel = (int64_t)(begin - addr);
		if (rel != (int32_t)rel || start > INT32_MAX || n == cap) {
			ix->left_out++;
			continue;
		}
		table[n++] = (struct sfb_eh_index_entry){ (int32_t)rel, (int32_t)start };
	}
	if (n == 0)
		return SFB_CFI_E_NO_TABLE;
	sort_entries(table, n);
	ix->cfi = (struct sfb_cfi_section){
		.hdr = { .p = (const uint8_t *)table, .len = (size_t)n * sizeof *table },
		.hdr_addr = addr,
		.frame = b,
		.frame_addr = addr,
		.fde_count = n,
		.table_off = 0,
	};
	return SFB_CFI_OK;
}

int sfb_eh_index_lookup(const struct sfb_eh_index *ix, uint64_t pc, unsigned fp_reg,
			struct sfb_row *row)
{
	if (ix->cfi.fde_count == 0)
		return ix->left_out ? SFB_EH_INDEX_E_LEFT_OUT : SFB_CFI_E_NOT_FOUND;
	int err = sfb_cfi_lookup(&ix->cfi, pc, fp_reg, row);
	return err == SFB_CFI_E_NOT_FOUND && ix->left_out ? SFB_EH_INDEX_E_LEFT_OUT : err;
}
