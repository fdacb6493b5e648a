/* Units, abbreviations, DIEs, range lists and names: steps 1 to 3 of
 * sfb_lines_lookup() (lines.h). */
#include "symbols/lines_int.h"

#include <string.h>

#include "base/dwarf.h"

/* Range-list entry kinds (DWARF 5, 7.25; table 7.30). */
enum {
	DW_RLE_end_of_list = 0x00,
	DW_RLE_base_addressx = 0x01,
	DW_RLE_startx_endx = 0x02,
	DW_RLE_startx_length = 0x03,
	DW_RLE_offset_pair = 0x04,
	DW_RLE_base_address = 0x05,
	DW_RLE_start_end = 0x06,
	DW_RLE_start_length = 0x07,
};

#define MAX_INDIRECT 4 /* DW_FORM_indirect links followed for one attribute */

static int get(struct sfb_dview *v, uint64_t *off, unsigned w, uint64_t *x)
{
	return sfb_dview_u(v, off, w, x);
}

int lk_form(struct lk *k, struct sfb_dview *v, const struct form_ctx *fc, uint64_t *off,
	    uint64_t form, int64_t implicit, struct val *out)
{
	uint64_t x = 0, n;
	int err = 0;
	(void)k;
	out->cls = VAL_NONE;
	out->sec = 0;
	for (unsigned hop = 0; form == DW_FORM_indirect; hop++) {
		if (hop == MAX_INDIRECT)
			return SFB_LINES_E_FORM;
		if ((err = sfb_dview_uleb(v, off, &form)))
			return err;
		implicit = 0;
	}
	switch (form) {
	case DW_FORM_addr:
		err = get(v, off, fc->addr_size, &x);
		out->cls = VAL_ADDR;
		break;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		err = get(v, off, 1, &x);
		break;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		err = get(v, off, 2, &x);
		break;
	case DW_FORM_strx3: case DW_FORM_addrx3: {
		uint64_t lo, hi;
		if (!(err = get(v, off, 2, &lo)) && !(err = get(v, off, 1, &hi)))
			x = lo | hi << 16; /* little-endian: the only byte order read */
		break;
	}
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		err = get(v, off, 4, &x);
		break;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		err = get(v, off, 8, &x);
		break;
	case DW_FORM_data16:
		err = sfb_dview_skip(v, off, 16);
		break;
	case DW_FORM_sdata: {
		int64_t s;
		err = sfb_dview_sleb(v, off, &s);
		x = (uint64_t)s;
		break;
	}
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		err = sfb_dview_uleb(v, off, &x);
		break;
	case DW_FORM_string:
		out->cls = VAL_STR;
		out->sec = (uint8_t)v->id;
		out->v = *off;
		return sfb_dview_str(v, off, NULL, 0);
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
	case DW_FORM_strp_sup: case DW_FORM_GNU_strp_alt: case DW_FORM_GNU_ref_alt:
		err = get(v, off, fc->offset_size, &x);
		break;
	case DW_FORM_ref_addr:
		err = get(v, off, fc->version <= 2 ? fc->addr_size : fc->offset_size, &x);
		break;
	case DW_FORM_exprloc: case DW_FORM_block:
		if (!(err = sfb_dview_uleb(v, off, &n)))
			err = sfb_dview_skip(v, off, n);
		break;
	case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4: {
		unsigned w = form == DW_FORM_block1 ? 1 : form == DW_FORM_block2 ? 2 : 4;
		if (!(err = get(v, off, w, &n)))
			err = sfb_dview_skip(v, off, n);
		break;
	}
	case DW_FORM_flag_present:
		x = 1;
		break;
	case DW_FORM_implicit_const:
		x = (uint64_t)implicit;
		break;
	default:
		return SFB_LINES_E_FORM;
	}
	if (err)
		return err;
	out->v = x;
	switch (form) {
	case DW_FORM_addr:
		break;
	case DW_FORM_ref1: case DW_FORM_ref2: case DW_FORM_ref4: case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		out->cls = VAL_REF;
		out->v = fc->unit_off + x;
		break;
	case DW_FORM_ref_addr:
		out->cls = VAL_REF;
		break;
	case DW_FORM_strp:
		out->cls = VAL_STR;
		out->sec = SFB_DSEC_STR;
		break;
	case DW_FORM_line_strp:
		out->cls = VAL_STR;
		out->sec = SFB_DSEC_LINE_STR;
		break;
	case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2: case DW_FORM_strx3:
	case DW_FORM_strx4: case DW_FORM_GNU_str_index:
		out->cls = VAL_STRX;
		break;
	case DW_FORM_addrx: case DW_FORM_addrx1: case DW_FORM_addrx2: case DW_FORM_addrx3:
	case DW_FORM_addrx4: case DW_FORM_GNU_addr_index:
		out->cls = VAL_ADDRX;
		break;
	case DW_FORM_sec_offset:
		out->cls = VAL_SECOFF;
		break;
	case DW_FORM_rnglistx:
		out->cls = VAL_RNGLISTX;
		break;
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
	case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_flag: case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		out->cls = VAL_CONST;
		break;
	default: /* supplementary and type-signature references, blocks: not followed */
		out->cls = VAL_NONE;
	}
	return 0;
}

/* ---- Abbreviations ------------------------------------------------------ */

/* Skip the attribute specifications of the abbreviation at *off. */
static int skip_specs(struct lk *k, uint64_t *off)
{
	for (unsigned i = 0;; i++) {
		uint64_t at, form;
		int64_t ic;
		int err;
		if (i > SFB_LINES_MAX_ATTRS)
			return SFB_LINES_E_BUDGET_ABBREVS;
		if ((err = sfb_dview_uleb(&k->abbrev, off, &at)) ||
		    (err = sfb_dview_uleb(&k->abbrev, off, &form)))
			return err;
		if (at == 0 && form == 0) {
			SFB_NOTE_MAX(k->n_attrs, i);
			return 0;
		}
		if (form == DW_FORM_implicit_const && (err = sfb_dview_sleb(&k->abbrev, off, &ic)))
			return err;
	}
}

/* The offset of abbreviation CODE's tag in the table at TABLE: from the
 * index when the code is small and already seen, else by reading the
 * table on from where the last search stopped (codes the index cannot
 * hold: from the table's start). */
static int abbrev_find(struct lk *k, uint64_t table, uint64_t code, uint64_t *at)
{
	if (k->abbrev_table != table) {
		memset(k->abbrev_index, 0, ABBREV_INDEX * sizeof *k->abbrev_index);
		k->abbrev_table = table;
		k->abbrev_end = table;
	}
	if (code < ABBREV_INDEX && k->abbrev_index[code]) {
		*at = table + k->abbrev_index[code] - 1;
		return 0;
	}
	uint64_t off = code < ABBREV_INDEX ? k->abbrev_end : table;
	for (;;) {
		uint64_t c, tag;
		int err;
		if (++k->abbrevs > SFB_LINES_MAX_ABBREVS)
			return SFB_LINES_E_BUDGET_ABBREVS;
		if ((err = sfb_dview_uleb(&k->abbrev, &off, &c)))
			return err == SFB_DSEC_E_TRUNCATED ? SFB_LINES_E_ABBREV : err;
		if (c == 0)
			return SFB_LINES_E_ABBREV; /* the table's end */
		uint64_t here = off;
		if (c < ABBREV_INDEX && !k->abbrev_index[c] && here - table < UINT32_MAX)
			k->abbrev_index[c] = (uint32_t)(here - table + 1);
		if ((err = sfb_dview_uleb(&k->abbrev, &off, &tag)) ||
		    (err = sfb_dview_skip(&k->abbrev, &off, 1)) || (err = skip_specs(k, &off)))
			return err;
		if (code < ABBREV_INDEX)
			k->abbrev_end = off;
		if (c == code) {
			*at = here;
			return 0;
		}
	}
}

/* ---- DIEs ----------------------------------------------------------------- */

static struct form_ctx unit_forms(const struct unit *u)
{
	struct form_ctx fc = { u->version, u->addr_size, u->offset_size, u->off };
	return fc;
}

/* The DIE at OFF of unit U, its attributes decoded into *D. */
static int read_die(struct lk *k, const struct unit *u, uint64_t off, struct die *d)
{
	uint64_t code, ab, flag;
	int err;
	memset(d, 0, sizeof *d);
	d->off = off;
	if (++k->dies > SFB_LINES_MAX_DIES)
		return SFB_LINES_E_BUDGET_DIES;
	if ((err = sfb_dview_uleb(&k->info, &off, &code)))
		return err;
	if (code == 0) {
		d->next = off;
		return 0;
	}
	if ((err = abbrev_find(k, u->abbrev_off, code, &ab)) ||
	    (err = sfb_dview_uleb(&k->abbrev, &ab, &d->tag)) ||
	    (err = get(&k->abbrev, &ab, 1, &flag)))
		return err;
	d->children = flag == DW_CHILDREN_yes;
	struct form_ctx fc = unit_forms(u);
	for (unsigned i = 0;; i++) {
		uint64_t at, form;
		int64_t ic = 0;
		struct val x, *dst;
		if (i > SFB_LINES_MAX_ATTRS)
			return SFB_LINES_E_BUDGET_ABBREVS;
		if ((err = sfb_dview_uleb(&k->abbrev, &ab, &at)) ||
		    (err = sfb_dview_uleb(&k->abbrev, &ab, &form)))
			return err;
		if (at == 0 && form == 0) {
			SFB_NOTE_MAX(k->n_attrs, i);
			break;
		}
		if (form == DW_FORM_implicit_const && (err = sfb_dview_sleb(&k->abbrev, &ab, &ic)))
			return err;
		if ((err = lk_form(k, &k->info, &fc, &off, form, ic, &x)))
			return err;
		switch (at) {
		case DW_AT_low_pc: dst = &d->low; break;
		case DW_AT_high_pc: dst = &d->high; break;
		case DW_AT_ranges: dst = &d->ranges; break;
		case DW_AT_name: dst = &d->name; break;
		case DW_AT_linkage_name: case DW_AT_MIPS_linkage_name: dst = &d->linkage; break;
		case DW_AT_abstract_origin: dst = &d->origin; break;
		case DW_AT_specification: dst = &d->spec; break;
		case DW_AT_sibling: dst = &d->sibling; break;
		case DW_AT_call_file: dst = &d->call_file; break;
		case DW_AT_call_line: dst = &d->call_line; break;
		case DW_AT_call_column: dst = &d->call_column; break;
		case DW_AT_stmt_list: dst = &d->stmt_list; break;
		case DW_AT_comp_dir: dst = &d->comp_dir; break;
		case DW_AT_str_offsets_base: dst = &d->str_offsets_base; break;
		case DW_AT_addr_base: case DW_AT_GNU_addr_base: dst = &d->addr_base; break;
		case DW_AT_rnglists_base: case DW_AT_GNU_ranges_base: dst = &d->rnglists_base; break;
		default: dst = NULL;
		}
		if (dst)
			*dst = x;
	}
	d->next = off;
	return 0;
}

/* The unit whose header is at OFF, and its first entry's attributes. */
int lk_unit_at(struct lk *k, uint64_t off, struct unit *u)
{
	uint64_t len, version;
	int err;
	memset(u, 0, sizeof *u);
	u->off = off;
	u->offset_size = 4;
	if ((err = get(&k->info, &off, 4, &len)))
		return err;
	if (len == SFB_DW_LENGTH_64) {
		u->offset_size = 8;
		if ((err = get(&k->info, &off, 8, &len)))
			return err;
	} else if (len >= 0xfffffff0u) {
		return SFB_LINES_E_FORMAT;
	}
	if (len > sfb_dview_size(&k->info) - off)
		return SFB_DSEC_E_TRUNCATED;
	u->end = off + len;
	if ((err = get(&k->info, &off, 2, &version)))
		return err;
	if (version < 2 || version > 5)
		return SFB_LINES_E_VERSION;
	u->version = (uint16_t)version;
	uint64_t type = DW_UT_compile, asz;
	if (version >= 5) {
		if ((err = get(&k->info, &off, 1, &type)) || (err = get(&k->info, &off, 1, &asz)) ||
		    (err = get(&k->info, &off, u->offset_size, &u->abbrev_off)))
			return err;
		switch (type) {
		case DW_UT_compile: case DW_UT_partial:
			break;
		case DW_UT_skeleton: case DW_UT_split_compile:
			err = sfb_dview_skip(&k->info, &off, 8);
			break;
		case DW_UT_type: case DW_UT_split_type:
			err = sfb_dview_skip(&k->info, &off, 8 + u->offset_size);
			break;
		default:
			return SFB_LINES_E_FORMAT;
		}
		if (err)
			return err;
	} else if ((err = get(&k->info, &off, u->offset_size, &u->abbrev_off)) ||
		   (err = get(&k->info, &off, 1, &asz))) {
		return err;
	}
	if (asz != 4 && asz != 8)
		return SFB_LINES_E_FORMAT;
	u->addr_size = (uint8_t)asz;
	u->die_off = off;
	if (u->die_off > u->end)
		return SFB_LINES_E_FORMAT;
	struct die d;
	if ((err = read_die(k, u, u->die_off, &d)))
		return err;
	if (d.next > u->end)
		return SFB_LINES_E_FORMAT;
	u->stmt_list = d.stmt_list;
	u->comp_dir = d.comp_dir;
	u->name = d.name;
	u->low = d.low;
	u->high = d.high;
	u->ranges = d.ranges;
	/* The bases, which the unit's other attributes are read with. */
	if (d.str_offsets_base.cls != VAL_NONE)
		u->str_offsets_base = d.str_offsets_base.v;
	else if (u->version >= 5)
		u->str_offsets_base = 2 * u->offset_size; /* past the contribution's header */
	if (d.addr_base.cls != VAL_NONE)
		u->addr_base = d.addr_base.v;
	if (d.rnglists_base.cls != VAL_NONE)
		u->rnglists_base = d.rnglists_base.v;
	return 0;
}

/* ---- Addresses and ranges ------------------------------------------------- */

static int addrx(struct lk *k, const struct unit *u, uint64_t index, uint64_t *a)
{
	if (index > (UINT64_MAX - u->addr_base) / u->addr_size)
		return SFB_DSEC_E_TRUNCATED;
	uint64_t off = u->addr_base + index * u->addr_size;
	return get(&k->addr, &off, u->addr_size, a);
}

static int address(struct lk *k, const struct unit *u, const struct val *x, uint64_t *a)
{
	if (x->cls == VAL_ADDRX)
		return addrx(k, u, x->v, a);
	*a = x->v;
	return 0;
}

/* Whether a DWARF 5 range list at OFF in .debug_rnglists holds PC. */
static int rnglist_holds(struct lk *k, const struct unit *u, uint64_t off, uint64_t pc,
			 bool *in)
{
	struct sfb_dview *v = &k->ranges;
	uint64_t base = u->base, a, b;
	int err;
	if (v->id != SFB_DSEC_RNGLISTS)
		sfb_dview_init(v, &k->d, SFB_DSEC_RNGLISTS, v->buf, v->cap);
	for (unsigned i = 0; i < SFB_LINES_MAX_RANGES; i++) {
		uint64_t kind;
		if ((err = get(v, &off, 1, &kind)))
			return err;
		switch (kind) {
		case DW_RLE_end_of_list:
			SFB_NOTE_MAX(k->n_ranges, i + 1);
			return 0;
		case DW_RLE_base_addressx:
			if ((err = sfb_dview_uleb(v, &off, &a)) || (err = addrx(k, u, a, &base)))
				return err;
			continue;
		case DW_RLE_startx_endx:
			if ((err = sfb_dview_uleb(v, &off, &a)) || (err = sfb_dview_uleb(v, &off, &b)) ||
			    (err = addrx(k, u, a, &a)) || (err = addrx(k, u, b, &b)))
				return err;
			break;
		case DW_RLE_startx_length:
			if ((err = sfb_dview_uleb(v, &off, &a)) || (err = sfb_dview_uleb(v, &off, &b)) ||
			    (err = addrx(k, u, a, &a)))
				return err;
			b += a;
			break;
		case DW_RLE_offset_pair:
			if ((err = sfb_dview_uleb(v, &off, &a)) || (err = sfb_dview_uleb(v, &off, &b)))
				return err;
			a += base;
			b += base;
			break;
		case DW_RLE_base_address:
			if ((err = get(v, &off, u->addr_size, &base)))
				return err;
			continue;
		case DW_RLE_start_end:
			if ((err = get(v, &off, u->addr_size, &a)) || (err = get(v, &off, u->addr_size, &b)))
				return err;
			break;
		case DW_RLE_start_length:
			if ((err = get(v, &off, u->addr_size, &a)) || (err = sfb_dview_uleb(v, &off, &b)))
				return err;
			b += a;
			break;
		default:
			return SFB_LINES_E_FORMAT;
		}
		if (a <= pc && pc < b) {
			SFB_NOTE_MAX(k->n_ranges, i + 1);
			*in = true;
			return 0;
		}
	}
	return SFB_LINES_E_BUDGET_RANGES;
}

/* Whether a DWARF 2-4 range list at OFF in .debug_ranges holds PC. */
static int ranges_holds(struct lk *k, const struct unit *u, uint64_t off, uint64_t pc, bool *in)
{
	struct sfb_dview *v = &k->ranges;
	uint64_t base = u->base, a, b;
	uint64_t sel = u->addr_size == 8 ? UINT64_MAX : UINT32_MAX; /* base address selection */
	int err;
	if (v->id != SFB_DSEC_RANGES)
		sfb_dview_init(v, &k->d, SFB_DSEC_RANGES, v->buf, v->cap);
	for (unsigned i = 0; i < SFB_LINES_MAX_RANGES; i++) {
		if ((err = get(v, &off, u->addr_size, &a)) || (err = get(v, &off, u->addr_size, &b)))
			return err;
		if (a == 0 && b == 0) {
			SFB_NOTE_MAX(k->n_ranges, i + 1);
			return 0;
		}
		if (a == sel) {
			base = b;
			continue;
		}
		if (a + base <= pc && pc < b + base) {
			SFB_NOTE_MAX(k->n_ranges, i + 1);
			*in = true;
			return 0;
		}
	}
	return SFB_LINES_E_BUDGET_RANGES;
}

/* Whether the entry with these attributes holds PC. */
static int holds(struct lk *k, const struct unit *u, const struct val *low,
		 const struct val *high, const struct val *ranges, uint64_t pc, bool *in)
{
	int err;
	*in = false;
	if (low->cls != VAL_NONE && high->cls != VAL_NONE) {
		uint64_t a, b;
		if ((err = address(k, u, low, &a)))
			return err;
		if (high->cls == VAL_CONST)
			b = a + high->v;
		else if ((err = address(k, u, high, &b)))
			return err;
		*in = a <= pc && pc < b;
		return 0;
	}
	if (ranges->cls == VAL_NONE)
		return 0;
	uint64_t off = ranges->v;
	if (u->version < 5)
		return ranges_holds(k, u, off, pc, in);
	if (ranges->cls == VAL_RNGLISTX) {
		/* An index into the offsets that follow the unit's
		 * contribution header, relative to that base. */
		uint64_t at = u->rnglists_base + off * u->offset_size, rel;
		if (off > UINT32_MAX)
			return SFB_DSEC_E_TRUNCATED;
		if (k->ranges.id != SFB_DSEC_RNGLISTS)
			sfb_dview_init(&k->ranges, &k->d, SFB_DSEC_RNGLISTS, k->ranges.buf, k->ranges.cap);
		if ((err = get(&k->ranges, &at, u->offset_size, &rel)))
			return err;
		off = u->rnglists_base + rel;
	}
	return rnglist_holds(k, u, off, pc, in);
}

/* Set the unit's base address for its range lists. */
static int unit_base(struct lk *k, struct unit *u)
{
	if (u->base_known)
		return 0;
	u->base_known = true;
	if (u->low.cls == VAL_NONE)
		return 0;
	return address(k, u, &u->low, &u->base);
}

/* ---- Step 1: the unit ---------------------------------------------------- */

/* The unit .debug_aranges gives for PC: *info_off, or not *found. */
static int aranges_find(struct lk *k, uint64_t pc, uint64_t *info_off, bool *found)
{
	struct sfb_dview *v = &k->line; /* step 1 only: the line view is free */
	sfb_dview_init(v, &k->d, SFB_DSEC_ARANGES, v->buf, v->cap);
	uint64_t off = 0, size = sfb_dview_size(v);
	uint32_t n = 0;
	*found = false;
	while (off < size) {
		uint64_t len, ver, cu, asz, ssz, a, b, start = off;
		unsigned osz = 4;
		int err;
		if ((err = get(v, &off, 4, &len)))
			return err;
		if (len == SFB_DW_LENGTH_64) {
			osz = 8;
			if ((err = get(v, &off, 8, &len)))
				return err;
		}
		if (len > size - off)
			return SFB_DSEC_E_TRUNCATED;
		uint64_t end = off + len;
		if ((err = get(v, &off, 2, &ver)) || (err = get(v, &off, osz, &cu)) ||
		    (err = get(v, &off, 1, &asz)) || (err = get(v, &off, 1, &ssz)))
			return err;
		if (ver != 2 || (asz != 4 && asz != 8) || ssz != 0)
			return SFB_LINES_E_FORMAT;
		/* Tuples start at a multiple of their size from the set's start. */
		uint64_t t = 2 * asz;
		off = start + (off - start + t - 1) / t * t;
		while (off + t <= end) {
			if (++n > SFB_LINES_MAX_ARANGES)
				return SFB_LINES_E_BUDGET_ARANGES;
			k->n_aranges = n;
			if ((err = get(v, &off, (unsigned)asz, &a)) ||
			    (err = get(v, &off, (unsigned)asz, &b)))
				return err;
			if (a == 0 && b == 0)
				break;
			if (a <= pc && pc - a < b) {
				*info_off = cu;
				*found = true;
				return 0;
			}
		}
		off = end;
	}
	return 0;
}

static int find_unit(struct lk *k, uint64_t pc, struct unit *u);

/* The unit holding PC: the last lookup's when its own ranges hold PC (a
 * report's frames often lie in one unit), else found as find_unit()
 * says. */
int lk_find_unit(struct lk *k, uint64_t pc, struct unit *u)
{
	if (k->have_last_unit) {
		bool in;
		*u = k->last_unit;
		if (!holds(k, u, &u->low, &u->high, &u->ranges, pc, &in) && in)
			return 0;
	}
	k->have_last_unit = false;
	int err = find_unit(k, pc, u);
	if (!err) {
		k->last_unit = *u;
		k->have_last_unit = true;
	}
	return err;
}

static int find_unit(struct lk *k, uint64_t pc, struct unit *u)
{
	int err;
	if (k->d.size[SFB_DSEC_ARANGES]) {
		uint64_t cu;
		bool found;
		if ((err = aranges_find(k, pc, &cu, &found)))
			return err;
		sfb_dview_init(&k->line, &k->d, SFB_DSEC_LINE, k->line.buf, k->line.cap);
		if (!found)
			return SFB_LINES_E_NOT_FOUND;
		if ((err = lk_unit_at(k, cu, u)))
			return err;
		return unit_base(k, u);
	}
	/* No .debug_aranges: each unit's first entry says what it holds. */
	uint64_t off = 0, size = sfb_dview_size(&k->info);
	while (off < size) {
		bool in;
		if (++k->units > SFB_LINES_MAX_UNITS)
			return SFB_LINES_E_BUDGET_UNITS;
		if ((err = lk_unit_at(k, off, u)) || (err = unit_base(k, u)) ||
		    (err = holds(k, u, &u->low, &u->high, &u->ranges, pc, &in)))
			return err;
		if (in)
			return 0;
		off = u->end;
	}
	return SFB_LINES_E_NOT_FOUND;
}

/* ---- Step 2: the chain ----------------------------------------------------- */

static void push_link(struct lk *k, const struct die *d, uint32_t level)
{
	if (k->nchain == SFB_LINES_MAX_FRAMES) {
		memmove(&k->chain[0], &k->chain[1], (SFB_LINES_MAX_FRAMES - 1) * sizeof k->chain[0]);
		k->nchain--;
		k->truncated = true;
	}
	struct link *l = &k->chain[k->nchain++];
	memset(l, 0, sizeof *l);
	l->die = d->off;
	l->level = level;
	l->call_file = d->call_file.cls == VAL_CONST ? d->call_file.v : 0;
	l->call_line = d->call_line.cls == VAL_CONST ? d->call_line.v : 0;
	l->call_column = d->call_column.cls == VAL_CONST ? d->call_column.v : 0;
	if (d->linkage.cls != VAL_NONE) {
		l->name = d->linkage;
		l->linkage = true;
		return;
	}
	l->name = d->name;
	if (d->origin.cls == VAL_REF)
		l->next = d->origin.v;
	else if (d->spec.cls == VAL_REF)
		l->next = d->spec.v;
}

/* Entries whose children are searched whatever their addresses. */
static bool is_scope(uint64_t tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

static bool is_code(uint64_t tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_lexical_block || tag == DW_TAG_entry_point;
}

int lk_find_chain(struct lk *k, const struct unit *u, uint64_t pc)
{
	struct die d;
	int err;
	uint64_t off = u->die_off;
	/* level: the depth of the entry at off; inside: the depth of the
	 * deepest open entry whose ranges hold PC (the unit: 0). */
	uint32_t level = 0, inside = 0;
	k->nchain = 0;
	k->truncated = false;
	if ((err = read_die(k, u, off, &d)))
		return err;
	if (!d.children)
		return SFB_LINES_E_NOT_FOUND;
	off = d.next;
	level = 1;
	while (off < u->end) {
		if ((err = read_die(k, u, off, &d)))
			return err;
		if (d.tag == 0) {
			/* The end of the children of the entry at level - 1. */
			uint32_t closed = --level;
			if (closed == 0)
				break;
			if (closed == inside) {
				if (k->nchain && k->chain[k->nchain - 1].level == closed)
					break; /* the innermost frame's entry: nothing deeper follows */
				inside--;
			}
			off = d.next;
			continue;
		}
		bool descend = false;
		if (level == inside + 1) {
			bool in = false;
			if (is_scope(d.tag)) {
				descend = d.children;
			} else if (is_code(d.tag)) {
				if ((err = holds(k, u, &d.low, &d.high, &d.ranges, pc, &in)))
					return err;
				if (in && (d.tag == DW_TAG_subprogram || d.tag == DW_TAG_inlined_subroutine))
					push_link(k, &d, level);
				if (in && !d.children && k->nchain)
					return 0;
				descend = in && d.children;
			}
		}
		if (descend) {
			inside = level++;
			off = d.next;
			continue;
		}
		if (d.children) {
			if (d.sibling.cls == VAL_REF && d.sibling.v > off && d.sibling.v <= u->end) {
				off = d.sibling.v;
				continue;
			}
			if (level >= SFB_LINES_MAX_DEPTH)
				return SFB_LINES_E_BUDGET_DEPTH;
			level++;
			SFB_NOTE_MAX(k->n_depth, level);
		}
		off = d.next;
	}
	return k->nchain ? 0 : SFB_LINES_E_NOT_FOUND;
}

/* ---- Step 3: the names ----------------------------------------------------- */

/* The unit holding .debug_info offset OFF: U itself, or found by reading
 * the units' headers from the first. */
static int unit_of(struct lk *k, uint64_t off, const struct unit *u, struct unit *other,
		   const struct unit **out)
{
	if (off >= u->die_off && off < u->end) {
		*out = u;
		return 0;
	}
	if (off >= other->die_off && off < other->end) {
		*out = other;
		return 0;
	}
	uint64_t at = 0, size = sfb_dview_size(&k->info);
	for (uint32_t i = 0; at < size; i++) {
		int err;
		if (i >= SFB_LINES_MAX_UNITS)
			return SFB_LINES_E_BUDGET_UNITS;
		if ((err = lk_unit_at(k, at, other)))
			return err;
		if (off >= other->die_off && off < other->end) {
			*out = other;
			return 0;
		}
		at = other->end;
	}
	return SFB_LINES_E_REF;
}

/* A string value of unit U made a .debug_str one (VAL_STRX read through
 * .debug_str_offsets). */
static int strx_resolve(struct lk *k, const struct unit *u, struct val *s)
{
	if (s->cls != VAL_STRX)
		return 0;
	uint64_t off, x;
	if (s->v > (UINT64_MAX - u->str_offsets_base) / u->offset_size)
		return SFB_DSEC_E_TRUNCATED;
	off = u->str_offsets_base + s->v * u->offset_size;
	int err = get(&k->stroff, &off, u->offset_size, &x);
	if (err)
		return err;
	s->cls = VAL_STR;
	s->sec = SFB_DSEC_STR;
	s->v = x;
	return 0;
}

int lk_find_names(struct lk *k, const struct unit *u)
{
	struct unit other = { 0 };
	int err;
	for (int i = 0; i < k->nchain; i++)
		if ((err = strx_resolve(k, u, &k->chain[i].name)))
			return err;
	/* Each round reads the pending entries in increasing offset order, so
	 * that a compressed .debug_info is decompressed once a round. */
	for (unsigned hop = 0; hop < SFB_LINES_MAX_HOPS; hop++) {
		uint64_t last = 0;
		bool any = false;
		for (;;) {
			int best = -1;
			for (int i = 0; i < k->nchain; i++) {
				const struct link *l = &k->chain[i];
				if (l->next && l->next >= last && (best < 0 || l->next < k->chain[best].next))
					best = i;
			}
			if (best < 0)
				break;
			any = true;
			uint64_t target = k->chain[best].next;
			const struct unit *tu;
			struct die d;
			if ((err = unit_of(k, target, u, &other, &tu)) ||
			    (err = read_die(k, tu, target, &d)))
				return err;
			if ((err = strx_resolve(k, tu, &d.linkage)) || (err = strx_resolve(k, tu, &d.name)))
				return err;
			/* Every frame waiting for this entry takes it. */
			for (int i = 0; i < k->nchain; i++) {
				struct link *l = &k->chain[i];
				if (l->next != target)
					continue;
				l->next = 0;
				if (d.linkage.cls == VAL_STR) {
					l->name = d.linkage;
					l->linkage = true;
					continue;
				}
				if (l->name.cls == VAL_NONE)
					l->name = d.name;
				if (d.origin.cls == VAL_REF && d.origin.v != target)
					l->next = d.origin.v;
				else if (d.spec.cls == VAL_REF && d.spec.v != target)
					l->next = d.spec.v;
				/* A link to an entry before this one waits for the
				 * next round; one after it is read in this one. */
			}
			last = target + 1;
		}
		if (!any)
			break;
		k->n_hops = hop + 1;
	}
	return 0;
}

int lk_string(struct lk *k, const struct unit *u, const struct val *s, char *dst, size_t cap)
{
	struct val x = *s;
	int err;
	dst[0] = 0;
	if (x.cls == VAL_STRX && (err = strx_resolve(k, u, &x)))
		return err;
	if (x.cls != VAL_STR)
		return 0;
	struct sfb_dview *v;
	switch (x.sec) {
	case SFB_DSEC_INFO: v = &k->info; break;
	case SFB_DSEC_LINE: v = &k->line; break;
	default:
		v = &k->str;
		if (v->id != x.sec)
			sfb_dview_init(v, &k->d, x.sec, v->buf, v->cap);
	}
	uint64_t off = x.v;
	return sfb_dview_str(v, &off, dst, cap);
}
