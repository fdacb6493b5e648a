/* What lines.c (line programs, the lookup) and inlines.c (units, DIEs,
 * ranges, names) share: the lookup's context and the decoded values of
 * attributes.  Not for other layers: lines.h is the interface. */
#ifndef SFB_LINES_INT_H
#define SFB_LINES_INT_H

#include "symbols/lines.h"

/* The class of an attribute's value, as the readers need it: a string is
 * kept as where it is (resolved once the lookup knows which strings it
 * wants), an index into .debug_addr or the range lists as the index. */
enum val_class {
	VAL_NONE,
	VAL_CONST,     /* v: a constant (data*, udata, sdata as two's complement, flag) */
	VAL_ADDR,      /* v: an address */
	VAL_ADDRX,     /* v: an index into .debug_addr */
	VAL_REF,       /* v: an offset in .debug_info */
	VAL_SECOFF,    /* v: an offset in another section */
	VAL_RNGLISTX,  /* v: an index into the unit's range-list offsets */
	VAL_STR,       /* v: offset of an inline string; sec: its section */
	VAL_STRX,      /* v: an index into .debug_str_offsets */
};

struct val {
	uint8_t cls;
	uint8_t sec;   /* VAL_STR: enum sfb_dsec_id */
	uint64_t v;
};

/* A unit: its header, and the attributes of its first entry that the
 * others are read with. */
struct unit {
	uint64_t off, end;   /* .debug_info offsets of the header and past the unit */
	uint64_t die_off;    /* the first entry */
	uint64_t abbrev_off;
	uint16_t version;
	uint8_t addr_size;
	uint8_t offset_size; /* 4, or 8 for 64-bit DWARF */
	bool base_known;
	uint64_t base;       /* DW_AT_low_pc: base of range lists */
	uint64_t str_offsets_base, addr_base, rnglists_base;
	struct val stmt_list, comp_dir, name;
	struct val low, high, ranges; /* the unit's own */
};

/* One DIE, decoded: the attributes the lookup reads. */
struct die {
	uint64_t off, next;  /* its offset, and that of the entry after its attributes */
	uint64_t tag;
	bool children;
	struct val low, high, ranges, name, linkage, origin, spec, sibling;
	struct val call_file, call_line, call_column;
	struct val stmt_list, comp_dir, str_offsets_base, addr_base, rnglists_base;
};

/* A frame of the inline chain, outermost (the subprogram) first. */
struct link {
	uint64_t die;        /* its DIE */
	uint32_t level;      /* its depth in the unit's tree */
	struct val name;     /* linkage name or name, once found */
	bool linkage;        /* name is a linkage name */
	uint64_t next;       /* origin/specification still to read; 0 none */
	uint64_t call_file, call_line, call_column;
};

#define ABBREV_INDEX 256 /* abbreviation codes found without a scan */

struct lk {
	struct sfb_dsecs d;
	struct sfb_dview info, abbrev, addr, ranges, stroff, line, str;
	uint32_t *abbrev_index;  /* ABBREV_INDEX entries: offset + 1 of code's entry, 0 none */
	uint64_t abbrev_table;   /* the offset abbrev_index was built for; ~0 none */
	uint64_t abbrev_end;     /* where that table's scan stopped */
	struct sfb_line_result *out;
	uint32_t dies, abbrevs, units;
	uint64_t program_bytes;
	uint32_t n_aranges, n_depth, n_attrs, n_ranges, n_hops, n_files; /* lines.h: the result's aranges ... files */
	/* The unit the last lookup found (sfb_lines_find()): tried first. */
	struct unit last_unit;
	bool have_last_unit;
	/* Step 2's result. */
	struct link chain[SFB_LINES_MAX_FRAMES];
	int nchain;
	bool truncated;
};

/* What reading a form needs to know of where it is. */
struct form_ctx {
	uint16_t version;
	uint8_t addr_size, offset_size;
	uint64_t unit_off;   /* DW_FORM_ref*: offsets from here */
};

#define SFB_NOTE_MAX(field, v) ((field) = (field) > (v) ? (field) : (v))

/* inlines.c */
int lk_form(struct lk *k, struct sfb_dview *v, const struct form_ctx *fc, uint64_t *off,
	    uint64_t form, int64_t implicit, struct val *out);
int lk_find_unit(struct lk *k, uint64_t pc, struct unit *u);
int lk_unit_at(struct lk *k, uint64_t off, struct unit *u);
int lk_find_chain(struct lk *k, const struct unit *u, uint64_t pc);
int lk_find_names(struct lk *k, const struct unit *u);
int lk_string(struct lk *k, const struct unit *u, const struct val *s, char *dst, size_t cap);

#endif
