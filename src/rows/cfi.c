/* DWARF CFI decoder for .eh_frame, found through .eh_frame_hdr.  See
 * cfi.h for the contract.
 *
 * Shape: sfb_cfi_load() checks the .eh_frame_hdr header and its search
 * table once (sorted, every FDE pointer inside .eh_frame).  A lookup
 * binary-searches the table, parses the one FDE and its CIE, and runs the
 * CIE's initial instructions then the FDE's up to the PC.  Every read goes
 * through the readers of dwarf.h, which read with sfb_get() (bytes.h),
 * bounded by the entry being parsed. */
#include "rows/cfi.h"
#include "base/dwarf.h"
#include "base/names.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The only .eh_frame_hdr table encoding binary search can use in place. */
#define TABLE_ENC (DW_EH_PE_datarel | DW_EH_PE_sdata4)

/* .eh_frame offsets are kept in int32_t (SFB_LOC_DWARF rules) and
 * uint32_t (struct sfb_cfi_fde): what lies past this is never read. */
#define FRAME_MAX 0x7fffffffu

/* A lookup stops here: the next row starts after the PC. */
#define ROW_DONE 1

const char *sfb_cfi_err_name(int err)
{
	static const char *const names[] = {
		[SFB_CFI_OK] = "ok",
		[SFB_CFI_E_NO_TABLE] = "no-table",
		[SFB_CFI_E_HDR] = "bad-eh-frame-hdr",
		[SFB_CFI_E_NOT_FOUND] = "not-found",
		[SFB_CFI_E_TRUNCATED] = "truncated",
		[SFB_CFI_E_CIE] = "bad-cie",
		[SFB_CFI_E_FDE] = "bad-fde",
		[SFB_CFI_E_OPCODE] = "bad-opcode",
		[SFB_CFI_E_STATE] = "bad-state-stack",
		[SFB_CFI_E_BUDGET] = "over-budget",
		[SFB_CFI_E_REGISTER] = "bad-register",
		[SFB_CFI_E_EXPR] = "bad-expression",
		[SFB_CFI_E_LEB] = "bad-leb128",
	};
	return SFB_NAME_OF(names, err);
}

/* ---- .eh_frame_hdr ------------------------------------------------------ */

/* Table entry i: initial location and FDE address. */
static void table_entry(const struct sfb_cfi_section *s, uint32_t i, uint64_t *pc,
			uint64_t *fde)
{
	uint64_t at = (uint64_t)s->table_off + (uint64_t)i * 8, a = 0, f = 0;
	/* In bounds: sfb_cfi_load() checked the table's size. */
	(void)sfb_get(&s->hdr, at, 4, &a);
	(void)sfb_get(&s->hdr, at + 4, 4, &f);
	*pc = s->hdr_addr + (uint64_t)sfb_sext(a, 4);
	*fde = s->hdr_addr + (uint64_t)sfb_sext(f, 4);
}

int sfb_cfi_load(struct sfb_cfi_section *s, const void *hdr, size_t hdr_len,
		 uint64_t hdr_addr, uint64_t frame_limit, uintptr_t addr_base)
{
	memset(s, 0, sizeof *s);
	if (!hdr)
		return SFB_CFI_E_NO_TABLE;
	s->hdr = (struct sfb_bytes){ .p = hdr, .len = hdr_len };
	s->hdr_addr = hdr_addr;
	const struct sfb_bytes *h = &s->hdr;
	uint64_t version, eptr_enc, count_enc, table_enc, eptr, count, at = 0;
	if (!sfb_dw_get(h, &at, hdr_len, 1, &version) ||
	    !sfb_dw_get(h, &at, hdr_len, 1, &eptr_enc) ||
	    !sfb_dw_get(h, &at, hdr_len, 1, &count_enc) ||
	    !sfb_dw_get(h, &at, hdr_len, 1, &table_enc))
		return SFB_CFI_E_HDR;
	if (version != 1 || eptr_enc == DW_EH_PE_omit || (eptr_enc & DW_EH_PE_indirect))
		return SFB_CFI_E_HDR;
	if (sfb_dw_ptr(h, &at, hdr_len, (uint8_t)eptr_enc, hdr_addr, hdr_addr, &eptr,
		       SFB_CFI_E_HDR))
		return SFB_CFI_E_HDR;
	/* The linker writes no table (omit encodings) when it could not sort
	 * the FDEs; a table of another encoding cannot be binary-searched
	 * in place. */
	if (count_enc == DW_EH_PE_omit || table_enc != TABLE_ENC)
		return SFB_CFI_E_NO_TABLE;
	if ((count_enc & (DW_EH_PE_APPL_MASK | DW_EH_PE_indirect)) ||
	    sfb_dw_ptr(h, &at, hdr_len, (uint8_t)count_enc, 0, 0, &count, SFB_CFI_E_HDR))
		return SFB_CFI_E_HDR;
	if (count > UINT32_MAX || count > (hdr_len - at) / 8)
		return SFB_CFI_E_HDR;
	if (frame_limit <= eptr)
		return SFB_CFI_E_HDR;
	uint64_t flen = frame_limit - eptr;
	s->frame = (struct sfb_bytes){
		.p = (const uint8_t *)(uintptr_t)(eptr + addr_base),
		.len = flen > FRAME_MAX ? FRAME_MAX : (size_t)flen,
	};
	s->frame_addr = eptr;
	s->fde_count = (uint32_t)count;
	s->table_off = (uint32_t)at;

	/* Sorted by initial location (the binary search needs it), every FDE
	 * inside .eh_frame (sfb_cfi_find() relies on it). */
	uint64_t prev = 0;
	for (uint32_t i = 0; i < s->fde_count; i++) {
		uint64_t pc, fde;
		table_entry(s, i, &pc, &fde);
		if (i && pc < prev)
			goto unsearchable;
		prev = pc;
		if (fde < eptr || fde - eptr >= s->frame.len)
			goto bad;
	}
	return SFB_CFI_OK;
unsearchable:
	memset(s, 0, sizeof *s);
	return SFB_CFI_E_NO_TABLE;
bad:
	memset(s, 0, sizeof *s);
	return SFB_CFI_E_HDR;
}

/* ---- CIE and FDE -------------------------------------------------------- */

/* An entry's length field at off: *at is left at the CIE id / CIE
 * pointer, *end at the entry's end, *idw is that field's width. */
static int entry_bounds(const struct sfb_bytes *b, uint64_t off, uint64_t *at,
			uint64_t *end, unsigned *idw, int zero_err)
{
	uint64_t len;
	*at = off;
	if (!sfb_dw_get(b, at, b->len, 4, &len))
		return SFB_CFI_E_TRUNCATED;
	*idw = 4;
	if (len == SFB_DW_LENGTH_64) {
		if (!sfb_dw_get(b, at, b->len, 8, &len))
			return SFB_CFI_E_TRUNCATED;
		*idw = 8;
	}
	if (len == 0)
		return zero_err; /* the terminator, where an entry was expected */
	if (len > b->len - *at || len < *idw)
		return SFB_CFI_E_TRUNCATED;
	*end = *at + len;
	return SFB_CFI_OK;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_column;
	uint32_t insns, insns_end;
	uint8_t enc;             /* FDE pointer encoding ('R') */
	uint8_t aug_z, signal, pauth_b;
};

static int parse_cie(const struct sfb_cfi_section *s, uint64_t off, struct cie *c)
{
	const struct sfb_bytes *b = &s->frame;
	uint64_t at, end, id, version, v;
	unsigned idw;
	int err = entry_bounds(b, off, &at, &end, &idw, SFB_CFI_E_FDE);
	if (err)
		return err;
	if (!sfb_dw_get(b, &at, end, idw, &id))
		return SFB_CFI_E_TRUNCATED;
	if (id != 0)
		return SFB_CFI_E_FDE; /* the FDE's CIE pointer leads to another FDE */
	if (!sfb_dw_get(b, &at, end, 1, &version))
		return SFB_CFI_E_TRUNCATED;
	if (version != 1 && version != 3 && version != 4)
		return SFB_CFI_E_CIE;
	/* The augmentation string: letters kept in a small array, which is
	 * all a CIE the decoder understands needs ("zPLRSBG" at most). */
	char aug[8];
	unsigned naug = 0;
	for (;;) {
		if (!sfb_dw_get(b, &at, end, 1, &v))
			return SFB_CFI_E_TRUNCATED;
		if (v == 0)
			break;
		if (naug == sizeof aug)
			return SFB_CFI_E_CIE;
		aug[naug++] = (char)v;
	}
	/* "eh": a pointer-sized field of old gcc, not read. */
	if (naug >= 2 && aug[0] == 'e' && aug[1] == 'h')
		return SFB_CFI_E_CIE;
	if (version == 4) {
		uint64_t asize, ssize;
		if (!sfb_dw_get(b, &at, end, 1, &asize) || !sfb_dw_get(b, &at, end, 1, &ssize))
			return SFB_CFI_E_TRUNCATED;
		if (asize != 8 || ssize != 0)
			return SFB_CFI_E_CIE;
	}
	if ((err = sfb_dw_uleb(b, &at, end, &c->code_align)) ||
	    (err = sfb_dw_sleb(b, &at, end, &c->data_align)))
		return err;
	if (c->code_align == 0)
		return SFB_CFI_E_CIE;
	if (version == 1) {
		if (!sfb_dw_get(b, &at, end, 1, &v))
			return SFB_CFI_E_TRUNCATED;
	} else if ((err = sfb_dw_uleb(b, &at, end, &v))) {
		return err;
	}
	if (v >= SFB_CFI_REGS)
		return SFB_CFI_E_REGISTER;
	c->ra_column = (uint32_t)v;
	c->enc = DW_EH_PE_absptr;
	c->aug_z = c->signal = c->pauth_b = 0;
	if (naug && aug[0] == 'z') {
		uint64_t alen, aend;
		if ((err = sfb_dw_uleb(b, &at, end, &alen)))
			return err;
		if (alen > end - at)
			return SFB_CFI_E_CIE;
		aend = at + alen;
		c->aug_z = 1;
		for (unsigned i = 1; i < naug; i++) {
			uint64_t e, skip;
			switch (aug[i]) {
			case 'R':
				if (!sfb_dw_get(b, &at, aend, 1, &e))
					return SFB_CFI_E_CIE;
				if ((e & DW_EH_PE_indirect) || !sfb_dw_enc_ok((uint8_t)e))
					return SFB_CFI_E_CIE;
				c->enc = (uint8_t)e;
				break;
			case 'P': /* the personality routine: skipped */
				if (!sfb_dw_get(b, &at, aend, 1, &e) ||
				    sfb_dw_ptr(b, &at, aend, (uint8_t)(e & ~DW_EH_PE_indirect), 0, 0,
					       &skip, SFB_CFI_E_CIE))
					return SFB_CFI_E_CIE;
				break;
			case 'L': /* the LSDA's encoding: its pointer is in the FDE */
				if (!sfb_dw_get(b, &at, aend, 1, &e))
					return SFB_CFI_E_CIE;
				break;
			case 'S': c->signal = 1; break;
			case 'B': c->pauth_b = 1; break;
			case 'G': break; /* AArch64 MTE tagged frames: no effect here */
			default:
				/* Unknown: its data, and any after it, are
				 * covered by the augmentation length. */
				i = naug;
				break;
			}
		}
		at = aend;
	} else if (naug) {
		return SFB_CFI_E_CIE;
	}
	c->insns = (uint32_t)at;
	c->insns_end = (uint32_t)end;
	return SFB_CFI_OK;
}

/* The FDE at offset off of .eh_frame, with its CIE. */
static int parse_fde(const struct sfb_cfi_section *s, uint64_t off, struct sfb_cfi_fde *f)
{
	const struct sfb_bytes *b = &s->frame;
	uint64_t at, end, cptr, begin, range;
	unsigned idw;
	struct cie c;
	int err = entry_bounds(b, off, &at, &end, &idw, SFB_CFI_E_FDE);
	if (err)
		return err;
	uint64_t field = at;
	if (!sfb_dw_get(b, &at, end, idw, &cptr))
		return SFB_CFI_E_TRUNCATED;
	/* Relative to the field, backwards; 0 marks a CIE. */
	if (cptr == 0 || cptr > field)
		return SFB_CFI_E_FDE;
	if ((err = parse_cie(s, field - cptr, &c)))
		return err;
	if ((err = sfb_dw_ptr(b, &at, end, c.enc, s->frame_addr, s->hdr_addr, &begin,
			      SFB_CFI_E_CIE)) ||
	    (err = sfb_dw_ptr(b, &at, end, c.enc & DW_EH_PE_FORMAT_MASK, 0, 0, &range,
			      SFB_CFI_E_CIE)))
		return err;
	if (begin + range < begin)
		return SFB_CFI_E_FDE;
	if (c.aug_z) {
		uint64_t alen;
		if ((err = sfb_dw_uleb(b, &at, end, &alen)))
			return err;
		if (alen > end - at)
			return SFB_CFI_E_FDE;
		at += alen;
	}
	f->pc_begin = begin;
	f->pc_end = begin + range;
	f->code_align = c.code_align;
	f->data_align = c.data_align;
	f->ra_column = c.ra_column;
	f->cie_insns = c.insns;
	f->cie_insns_end = c.insns_end;
	f->fde_insns = (uint32_t)at;
	f->fde_insns_end = (uint32_t)end;
	f->ptr_enc = c.enc;
	f->signal_frame = c.signal;
	f->pauth_b = c.pauth_b;
	return SFB_CFI_OK;
}

/* sfb_cfi_find(), and the PCs that find the same table entry:
 * [*from, *to), from its start to the next entry's. */
static int find_fde(const struct sfb_cfi_section *s, uint64_t pc, struct sfb_cfi_fde *fde,
		    uint64_t *from, uint64_t *to)
{
	uint32_t lo = 0, hi = s->fde_count;
	uint64_t start, addr;
	/* The last entry starting at or before pc. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		table_entry(s, mid, &start, &addr);
		if (start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return SFB_CFI_E_NOT_FOUND;
	*to = UINT64_MAX;
	if (lo < s->fde_count)
		table_entry(s, lo, to, &addr);
	table_entry(s, lo - 1, &start, &addr);
	*from = start;
	int err = parse_fde(s, addr - s->frame_addr, fde);
	if (err)
		return err;
	if (pc < fde->pc_begin || pc >= fde->pc_end)
		return SFB_CFI_E_NOT_FOUND;
	return SFB_CFI_OK;
}

int sfb_cfi_find(const struct sfb_cfi_section *s, uint64_t pc, struct sfb_cfi_fde *fde)
{
	uint64_t from, to;
	return find_fde(s, pc, fde, &from, &to);
}

/* ---- The CFA instruction interpreter ------------------------------------ */

/* A register's rule in 32 bits, so that the interpreter's states (the
 * current one, the CIE's, SFB_CFI_STATE_DEPTH remembered) take about 1 KiB
 * of a signal stack: kind in bits 0-2, bit 3 set when an instruction gave
 * the rule (readelf's "u" columns have it clear), and a signed 28-bit
 * argument in bits 4-31: the CFA offset, the register, or the offset in
 * .eh_frame of the expression block (its ULEB128 length, read again when
 * the row is built). */
typedef uint32_t rule_t;
enum { R_SAME, R_UNDEFINED, R_OFFSET, R_VAL_OFFSET, R_REGISTER, R_EXPR, R_VAL_EXPR };
#define RULE_SET 8u
#define RULE_ARG_MAX ((1 << 27) - 1)

static rule_t mkrule(unsigned kind, int32_t arg)
{
	return kind | RULE_SET | (uint32_t)arg << 4;
}

static unsigned rule_kind(rule_t r) { return r & 7; }
static int32_t rule_arg(rule_t r) { return (int32_t)r >> 4; }

/* What DW_CFA_remember_state saves: every rule, the CFA's included (as
 * gcc's unwinder and readelf do).  The CFA's register and offset are kept
 * while an expression defines it: DW_CFA_def_cfa_register after
 * DW_CFA_def_cfa_expression goes back to them (hand-written assembly in
 * libgcrypt does so), and DW_CFA_def_cfa_offset changes the offset
 * without ending the expression, as in gcc's unwinder and readelf. */
struct rules {
	struct sfb_loc cfa;             /* register + offset */
	struct sfb_loc cfa_expr;        /* kind SFB_LOC_DWARF while in force */
	rule_t reg[SFB_CFI_REGS];
	uint8_t ra_signed;
};

struct interp {
	const struct sfb_cfi_section *s;
	const struct sfb_cfi_fde *f;
	struct sfb_cfi_table_row *row;  /* pc_lo, pc_hi, args_size */
	uint64_t pc, loc;
	unsigned ops, depth;
	struct rules cur;
	struct rules init;              /* after the CIE's instructions */
	struct rules stack[SFB_CFI_STATE_DEPTH];
};

/* Register n's rule; rules for registers past the tracked ones are
 * dropped (the RA column never is: parse_cie() checked it). */
static void set_rule(struct interp *in, uint64_t n, rule_t r)
{
	if (n < SFB_CFI_REGS)
		in->cur.reg[n] = r;
}

/* A CFA-relative rule: the offset must fit the rule's argument. */
static int offset_rule(unsigned kind, int32_t off, rule_t *r)
{
	if (off < -RULE_ARG_MAX - 1 || off > RULE_ARG_MAX)
		return SFB_CFI_E_REGISTER;
	*r = mkrule(kind, off);
	return SFB_CFI_OK;
}

/* v * data_align as a row offset. */
static int factored(const struct interp *in, int64_t v, int32_t *out)
{
	int64_t r;
	if (__builtin_mul_overflow(v, in->f->data_align, &r) || r < INT32_MIN || r > INT32_MAX)
		return SFB_CFI_E_REGISTER;
	*out = (int32_t)r;
	return SFB_CFI_OK;
}

static int ufactored(const struct interp *in, uint64_t v, int32_t *out)
{
	if (v > INT32_MAX)
		return SFB_CFI_E_REGISTER;
	return factored(in, (int64_t)v, out);
}

/* Move to location 'to'; ROW_DONE once past the PC. */
static int move_to(struct interp *in, uint64_t to, bool cie)
{
	if (cie)
		return SFB_CFI_E_OPCODE; /* a CIE's rules hold from the FDE's start */
	if (to < in->loc)
		return SFB_CFI_E_FDE;
	if (to > in->pc) {
		if (to < in->row->pc_hi)
			in->row->pc_hi = to;
		return ROW_DONE;
	}
	in->loc = in->row->pc_lo = to;
	return SFB_CFI_OK;
}

static int advance(struct interp *in, uint64_t delta, bool cie)
{
	uint64_t d;
	if (__builtin_mul_overflow(delta, in->f->code_align, &d) || in->loc + d < in->loc)
		return cie ? SFB_CFI_E_OPCODE : SFB_CFI_E_FDE;
	return move_to(in, in->loc + d, cie);
}

/* An expression block (ULEB128 length, bytes) at *at: its location
 * (SFB_LOC_DWARF: offset of the bytes, length).  *at is left past it. */
static int block(const struct sfb_bytes *b, uint64_t *at, uint64_t end, uint8_t deref,
		 struct sfb_loc *loc)
{
	uint64_t len;
	int err = sfb_dw_uleb(b, at, end, &len);
	if (err)
		return err;
	if (len > end - *at)
		return SFB_CFI_E_TRUNCATED;
	if (len > UINT16_MAX)
		return SFB_CFI_E_EXPR;
	*loc = (struct sfb_loc){ .kind = SFB_LOC_DWARF, .deref = deref, .reg = (uint16_t)len,
				 .off = (int32_t)*at };
	*at += len;
	return SFB_CFI_OK;
}

#define TRY(x) do { if ((err = (x))) return err; } while (0)

/* Whether an instruction's offset operand is signed: its shape ends in
 * an SLEB128 number (the _sf forms). */
static bool signed_offset(unsigned opnd)
{
	return opnd == SFB_DW_SLEB || opnd == SFB_DW_ULEB_SLEB;
}

/* An offset operand v of DW_CFA_offset and its kin, as a row offset:
 * factored by data_align, signed or not (shape opnd). */
static int factored_operand(const struct interp *in, unsigned opnd, uint64_t v, int32_t *out)
{
	if (signed_offset(opnd))
		return factored(in, (int64_t)v, out);
	return ufactored(in, v, out);
}

/* A CFA offset operand v: unsigned and not factored (DW_CFA_def_cfa,
 * def_cfa_offset), or signed and factored (their _sf forms; shape opnd). */
static int cfa_offset(const struct interp *in, unsigned opnd, uint64_t v, int32_t *out)
{
	if (signed_offset(opnd))
		return factored(in, (int64_t)v, out);
	if (v > INT32_MAX)
		return SFB_CFI_E_REGISTER;
	*out = (int32_t)v;
	return SFB_CFI_OK;
}

/* What a call-frame instruction does (DWARF 5, 6.4.2), on operands 1 and
 * 2 (the first of a primary opcode is its low six bits). */
enum cfa_class {
	CFA_REFUSED,          /* unknown, or no meaning for these targets */
	CFA_NOP,
	CFA_SET_LOC,          /* the next row starts at address 1 */
	CFA_ADVANCE,          /* ... 1 code-alignment units further */
	CFA_OFFSET,           /* register 1's rule: (kind) CFA + 2 × data_align */
	CFA_NEG_OFFSET,       /* ... CFA - 2 × data_align */
	CFA_RESTORE,          /* register 1's rule as the CIE left it */
	CFA_RULE,             /* register 1's rule: (kind), no argument */
	CFA_REGISTER,         /* register 1 in register 2 */
	CFA_REMEMBER_STATE,
	CFA_RESTORE_STATE,
	CFA_DEF_CFA,          /* CFA = register 1 + 2 */
	CFA_DEF_CFA_REGISTER, /* ... register 1 + the offset it had */
	CFA_DEF_CFA_OFFSET,   /* ... the register it had + 1 */
	CFA_DEF_CFA_EXPR,     /* ... the value of expression block 1 */
	CFA_EXPRESSION,       /* register 1's rule: (kind) expression block 2 */
	CFA_NEGATE_RA_STATE,  /* AArch64: the return address is signed, or no more */
	CFA_ARGS_SIZE,        /* bytes of arguments pushed: 1 */
};

/* Operand shapes only the interpreter can read: a primary opcode's low
 * six bits (and a ULEB128 number), a pointer in the CIE's encoding, an
 * expression block (as its offset in .eh_frame, where its ULEB128 length
 * is), and a ULEB128 number then a block. */
enum { OPND_LOW6 = SFB_DW_SHAPES, OPND_LOW6_ULEB, OPND_PTR, OPND_BLOCK, OPND_ULEB_BLOCK };

/* The (class, operand shape) pairs of nearly every instruction compilers
 * emit: DW_CFA_advance_loc, offset, def_cfa_offset, nop, advance_loc1,
 * def_cfa, remember_state and restore_state.  run() has a copy of the
 * interpreter's code for each, its class and shape fixed, so that such an
 * instruction costs one dispatch; any other takes the general path
 * (operands by shape, then the class). */
enum cfa_form {
	FORM_GENERAL,
	FORM_ADVANCE_LOW6,
	FORM_OFFSET_LOW6_ULEB,
	FORM_DEF_CFA_OFFSET_ULEB,
	FORM_NOP,
	FORM_ADVANCE_U8,
	FORM_DEF_CFA_ULEB_ULEB,
	FORM_REMEMBER_STATE,
	FORM_RESTORE_STATE,
};

#define FORM_IS(cls, opnd, c, o) ((unsigned)(cls) == (c) && (unsigned)(opnd) == (unsigned)(o))
#define FORM_OF(cls, opnd)                                                                 \
	(FORM_IS(cls, opnd, CFA_ADVANCE, OPND_LOW6)                ? FORM_ADVANCE_LOW6        \
	 : FORM_IS(cls, opnd, CFA_OFFSET, OPND_LOW6_ULEB)          ? FORM_OFFSET_LOW6_ULEB    \
	 : FORM_IS(cls, opnd, CFA_DEF_CFA_OFFSET, SFB_DW_ULEB)     ? FORM_DEF_CFA_OFFSET_ULEB \
	 : FORM_IS(cls, opnd, CFA_NOP, SFB_DW_NONE)                ? FORM_NOP                 \
	 : FORM_IS(cls, opnd, CFA_ADVANCE, SFB_DW_U8)              ? FORM_ADVANCE_U8          \
	 : FORM_IS(cls, opnd, CFA_DEF_CFA, SFB_DW_ULEB_ULEB)       ? FORM_DEF_CFA_ULEB_ULEB   \
	 : FORM_IS(cls, opnd, CFA_REMEMBER_STATE, SFB_DW_NONE)     ? FORM_REMEMBER_STATE      \
	 : FORM_IS(cls, opnd, CFA_RESTORE_STATE, SFB_DW_NONE)      ? FORM_RESTORE_STATE       \
	 : FORM_GENERAL)

/* An instruction's operand shape (sfb_dw_shape or the above), class, the
 * rule kind it gives, and its form (FORM_OF() the class and shape); four
 * bytes, for a cheap index. */
struct cfa_shape {
	uint8_t opnd;
	uint8_t cls;
	uint8_t kind;
	uint8_t form;
};

#define SHAPE(cls, kind, opnd) { opnd, cls, kind, FORM_OF(cls, opnd) }

/* Indexed by the opcode byte; every opcode without an entry is
 * CFA_REFUSED. */
static const struct cfa_shape cfa_shapes[256] = {
	/*                                  class                 rule kind     operand shape */
	[DW_CFA_nop]                = SHAPE(CFA_NOP,              0,            SFB_DW_NONE),
	[DW_CFA_set_loc]            = SHAPE(CFA_SET_LOC,          0,            OPND_PTR),
	[DW_CFA_advance_loc1]       = SHAPE(CFA_ADVANCE,          0,            SFB_DW_U8),
	[DW_CFA_advance_loc2]       = SHAPE(CFA_ADVANCE,          0,            SFB_DW_U16),
	[DW_CFA_advance_loc4]       = SHAPE(CFA_ADVANCE,          0,            SFB_DW_U32),
	[DW_CFA_offset_extended]    = SHAPE(CFA_OFFSET,           R_OFFSET,     SFB_DW_ULEB_ULEB),
	[DW_CFA_restore_extended]   = SHAPE(CFA_RESTORE,          0,            SFB_DW_ULEB),
	[DW_CFA_undefined]          = SHAPE(CFA_RULE,             R_UNDEFINED,  SFB_DW_ULEB),
	[DW_CFA_same_value]         = SHAPE(CFA_RULE,             R_SAME,       SFB_DW_ULEB),
	[DW_CFA_register]           = SHAPE(CFA_REGISTER,         R_REGISTER,   SFB_DW_ULEB_ULEB),
	[DW_CFA_remember_state]     = SHAPE(CFA_REMEMBER_STATE,   0,            SFB_DW_NONE),
	[DW_CFA_restore_state]      = SHAPE(CFA_RESTORE_STATE,    0,            SFB_DW_NONE),
	[DW_CFA_def_cfa]            = SHAPE(CFA_DEF_CFA,          0,            SFB_DW_ULEB_ULEB),
	[DW_CFA_def_cfa_register]   = SHAPE(CFA_DEF_CFA_REGISTER, 0,            SFB_DW_ULEB),
	[DW_CFA_def_cfa_offset]     = SHAPE(CFA_DEF_CFA_OFFSET,   0,            SFB_DW_ULEB),
	[DW_CFA_def_cfa_expression] = SHAPE(CFA_DEF_CFA_EXPR,     0,            OPND_BLOCK),
	[DW_CFA_expression]         = SHAPE(CFA_EXPRESSION,       R_EXPR,       OPND_ULEB_BLOCK),
	[DW_CFA_offset_extended_sf] = SHAPE(CFA_OFFSET,           R_OFFSET,     SFB_DW_ULEB_SLEB),
	[DW_CFA_def_cfa_sf]         = SHAPE(CFA_DEF_CFA,          0,            SFB_DW_ULEB_SLEB),
	[DW_CFA_def_cfa_offset_sf]  = SHAPE(CFA_DEF_CFA_OFFSET,   0,            SFB_DW_SLEB),
	[DW_CFA_val_offset]         = SHAPE(CFA_OFFSET,           R_VAL_OFFSET, SFB_DW_ULEB_ULEB),
	[DW_CFA_val_offset_sf]      = SHAPE(CFA_OFFSET,           R_VAL_OFFSET, SFB_DW_ULEB_SLEB),
	[DW_CFA_val_expression]     = SHAPE(CFA_EXPRESSION,       R_VAL_EXPR,   OPND_ULEB_BLOCK),
	[DW_CFA_MIPS_advance_loc8]  = SHAPE(CFA_ADVANCE,          0,            SFB_DW_U64),
	[DW_CFA_AARCH64_negate_ra_state] =
		SHAPE(CFA_NEGATE_RA_STATE,  0,            SFB_DW_NONE),
	[DW_CFA_GNU_args_size]      = SHAPE(CFA_ARGS_SIZE,        0,            SFB_DW_ULEB),
	[DW_CFA_GNU_negative_offset_extended] =
		SHAPE(CFA_NEG_OFFSET,       R_OFFSET,     SFB_DW_ULEB_ULEB),
	[DW_CFA_advance_loc ... DW_CFA_advance_loc + SFB_DW_CFA_LOW_MAX] =
		SHAPE(CFA_ADVANCE,          0,            OPND_LOW6),
	[DW_CFA_offset ... DW_CFA_offset + SFB_DW_CFA_LOW_MAX] =
		SHAPE(CFA_OFFSET,           R_OFFSET,     OPND_LOW6_ULEB),
	[DW_CFA_restore ... DW_CFA_restore + SFB_DW_CFA_LOW_MAX] =
		SHAPE(CFA_RESTORE,          0,            OPND_LOW6),
};

#undef SHAPE

/* An expression block at *at, below end: its offset in *out. */
static int skip_block(const struct sfb_bytes *b, uint64_t *at, uint64_t end, uint64_t *out)
{
	struct sfb_loc loc;
	*out = *at;
	return block(b, at, end, 0, &loc);
}

/* The operands of instruction op, of shape opnd, at *at (below end), in
 * a[0] and a[1]. */
static inline __attribute__((always_inline)) int
cfa_operands(const struct interp *in, uint64_t *at, uint64_t end, unsigned op, unsigned opnd,
	     uint64_t *a)
{
	const struct sfb_bytes *b = &in->s->frame;
	int err;
	switch (opnd) {
	case SFB_DW_NONE:
		return SFB_CFI_OK;
	case SFB_DW_ULEB:
		return sfb_dw_uleb(b, at, end, &a[0]);
	case OPND_LOW6:
		a[0] = SFB_DW_CFA_LOW(op);
		return SFB_CFI_OK;
	case OPND_LOW6_ULEB:
		a[0] = SFB_DW_CFA_LOW(op);
		return sfb_dw_uleb(b, at, end, &a[1]);
	case OPND_PTR:
		return sfb_dw_ptr(b, at, end, in->f->ptr_enc, in->s->frame_addr, in->s->hdr_addr,
				  &a[0], SFB_CFI_E_CIE);
	case OPND_BLOCK:
		return skip_block(b, at, end, &a[0]);
	case OPND_ULEB_BLOCK:
		TRY(sfb_dw_uleb(b, at, end, &a[0]));
		return skip_block(b, at, end, &a[1]);
	default:
		return sfb_dw_operands(b, at, end, opnd, a);
	}
}

/* One instruction of class cls (giving rules of kind kind, its operands
 * of shape opnd) on its operands a. */
static inline __attribute__((always_inline)) int
step(struct interp *in, unsigned cls, unsigned kind, unsigned opnd, const uint64_t *a, bool cie)
{
	struct rules *cur = &in->cur;
	int32_t off;
	rule_t rule;
	int err;
	switch (cls) {
	case CFA_NOP:
		return SFB_CFI_OK;
	case CFA_SET_LOC:
		return move_to(in, a[0], cie);
	case CFA_ADVANCE:
		return advance(in, a[0], cie);
	case CFA_OFFSET:
	case CFA_NEG_OFFSET:
		TRY(factored_operand(in, opnd, a[1], &off));
		if (cls == CFA_NEG_OFFSET) {
			if (off == INT32_MIN)
				return SFB_CFI_E_REGISTER;
			off = -off;
		}
		TRY(offset_rule(kind, off, &rule));
		set_rule(in, a[0], rule);
		return SFB_CFI_OK;
	case CFA_RESTORE:
		if (a[0] < SFB_CFI_REGS)
			cur->reg[a[0]] = cie ? R_SAME : in->init.reg[a[0]];
		return SFB_CFI_OK;
	case CFA_RULE:
		set_rule(in, a[0], mkrule(kind, 0));
		return SFB_CFI_OK;
	case CFA_REGISTER:
		if (a[0] < SFB_CFI_REGS && a[1] >= SFB_CFI_REGS)
			return SFB_CFI_E_REGISTER;
		set_rule(in, a[0], mkrule(kind, (uint16_t)a[1]));
		return SFB_CFI_OK;
	case CFA_REMEMBER_STATE:
		if (in->depth == SFB_CFI_STATE_DEPTH)
			return SFB_CFI_E_STATE;
		in->stack[in->depth++] = *cur;
		return SFB_CFI_OK;
	case CFA_RESTORE_STATE:
		if (in->depth == 0)
			return SFB_CFI_E_STATE;
		*cur = in->stack[--in->depth];
		return SFB_CFI_OK;
	case CFA_DEF_CFA:
		TRY(cfa_offset(in, opnd, a[1], &off));
		if (a[0] >= SFB_CFI_REGS)
			return SFB_CFI_E_REGISTER;
		cur->cfa = (struct sfb_loc){ SFB_LOC_EXPR, 0, (uint16_t)a[0], off };
		cur->cfa_expr.kind = SFB_LOC_SAME;
		return SFB_CFI_OK;
	case CFA_DEF_CFA_REGISTER:
		if (a[0] >= SFB_CFI_REGS)
			return SFB_CFI_E_REGISTER;
		cur->cfa.kind = SFB_LOC_EXPR;
		cur->cfa.reg = (uint16_t)a[0];
		cur->cfa_expr.kind = SFB_LOC_SAME;
		return SFB_CFI_OK;
	case CFA_DEF_CFA_OFFSET:
		TRY(cfa_offset(in, opnd, a[0], &off));
		cur->cfa.kind = SFB_LOC_EXPR;
		cur->cfa.off = off;
		return SFB_CFI_OK;
	case CFA_DEF_CFA_EXPR: {
		uint64_t at = a[0]; /* checked when read */
		return block(&in->s->frame, &at, in->s->frame.len, 0, &cur->cfa_expr);
	}
	case CFA_EXPRESSION:
		if (a[1] > RULE_ARG_MAX)
			return SFB_CFI_E_EXPR;
		set_rule(in, a[0], mkrule(kind, (int32_t)a[1]));
		return SFB_CFI_OK;
	case CFA_NEGATE_RA_STATE:
		cur->ra_signed ^= 1;
		return SFB_CFI_OK;
	case CFA_ARGS_SIZE:
		in->row->args_size = (int64_t)a[0];
		return SFB_CFI_OK;
	default:
		return SFB_CFI_E_OPCODE;
	}
}

/* Instruction op at *at (below end, its opcode read): operands of shape
 * opnd, class cls, rule kind kind. */
static inline __attribute__((always_inline)) int
insn(struct interp *in, uint64_t *at, uint64_t end, unsigned op, unsigned opnd, unsigned cls,
     unsigned kind, bool cie)
{
	/* Zeroed: gcc for AArch64 cannot see that each shape's reader sets
	 * the operands its step() uses (-Wmaybe-uninitialized). */
	uint64_t a[2] = { 0, 0 };
	int err;
	TRY(cfa_operands(in, at, end, op, opnd, a));
	return step(in, cls, kind, opnd, a, cie);
}

/* Run the instructions in [at, end) of .eh_frame.  SFB_CFI_OK at their
 * end, ROW_DONE when the next row starts after the PC, else an error.
 * The frequent forms (FORM_OF) are insn() with their shape and class
 * fixed; the rest insn() on the table's. */
static int run(struct interp *in, uint64_t at, uint64_t end, bool cie)
{
	const struct sfb_bytes *b = &in->s->frame;
	int err;
	while (at < end) {
		uint64_t op;
		if (++in->ops > SFB_CFI_MAX_OPS)
			return SFB_CFI_E_BUDGET;
		if (!sfb_dw_get(b, &at, end, 1, &op))
			return SFB_CFI_E_TRUNCATED;
		const struct cfa_shape *d = &cfa_shapes[op];
		unsigned o = (unsigned)op;
		switch (d->form) {
		case FORM_ADVANCE_LOW6:
			err = insn(in, &at, end, o, OPND_LOW6, CFA_ADVANCE, d->kind, cie);
			break;
		case FORM_OFFSET_LOW6_ULEB:
			err = insn(in, &at, end, o, OPND_LOW6_ULEB, CFA_OFFSET, d->kind, cie);
			break;
		case FORM_DEF_CFA_OFFSET_ULEB:
			err = insn(in, &at, end, o, SFB_DW_ULEB, CFA_DEF_CFA_OFFSET, d->kind, cie);
			break;
		case FORM_NOP:
			err = insn(in, &at, end, o, SFB_DW_NONE, CFA_NOP, d->kind, cie);
			break;
		case FORM_ADVANCE_U8:
			err = insn(in, &at, end, o, SFB_DW_U8, CFA_ADVANCE, d->kind, cie);
			break;
		case FORM_DEF_CFA_ULEB_ULEB:
			err = insn(in, &at, end, o, SFB_DW_ULEB_ULEB, CFA_DEF_CFA, d->kind, cie);
			break;
		case FORM_REMEMBER_STATE:
			err = insn(in, &at, end, o, SFB_DW_NONE, CFA_REMEMBER_STATE, d->kind, cie);
			break;
		case FORM_RESTORE_STATE:
			err = insn(in, &at, end, o, SFB_DW_NONE, CFA_RESTORE_STATE, d->kind, cie);
			break;
		default:
			err = insn(in, &at, end, o, d->opnd, d->cls, d->kind, cie);
		}
		if (err)
			return err;
	}
	return SFB_CFI_OK;
}

int sfb_cfi_table_row(const struct sfb_cfi_section *s, const struct sfb_cfi_fde *fde,
		      uint64_t pc, struct sfb_cfi_table_row *out)
{
	if (pc < fde->pc_begin || pc >= fde->pc_end)
		return SFB_CFI_E_NOT_FOUND;
	memset(out, 0, sizeof *out); /* every register SAME */
	out->cfa.kind = SFB_LOC_UNDEFINED;
	out->pc_lo = fde->pc_begin;
	out->pc_hi = fde->pc_end;
	out->ra_column = fde->ra_column;
	out->signal_frame = fde->signal_frame;
	out->pauth_b = fde->pauth_b;
	/* Set field by field: the state stack needs no clearing. */
	struct interp in;
	in.s = s;
	in.f = fde;
	in.row = out;
	in.pc = pc;
	in.loc = fde->pc_begin;
	in.ops = in.depth = 0;
	memset(&in.cur, 0, sizeof in.cur); /* every register R_SAME, not given */
	in.cur.cfa.kind = SFB_LOC_UNDEFINED;
	int err = run(&in, fde->cie_insns, fde->cie_insns_end, true);
	if (err)
		return err;
	in.init = in.cur;
	err = run(&in, fde->fde_insns, fde->fde_insns_end, false);
	if (err != SFB_CFI_OK && err != ROW_DONE)
		return err;

	/* The row, from the compact rules. */
	out->cfa = in.cur.cfa_expr.kind == SFB_LOC_DWARF ? in.cur.cfa_expr : in.cur.cfa;
	out->ra_signed = in.cur.ra_signed;
	for (unsigned n = 0; n < SFB_CFI_REGS; n++) {
		rule_t r = in.cur.reg[n];
		if (r == 0)
			continue; /* no rule given: SAME, as out was cleared */
		int32_t arg = rule_arg(r);
		struct sfb_loc *l = &out->reg[n];
		out->explicit_regs |= (uint64_t)1 << n;
		switch (rule_kind(r)) {
		case R_SAME: break;
		case R_UNDEFINED: l->kind = SFB_LOC_UNDEFINED; break;
		case R_OFFSET:
		case R_VAL_OFFSET:
			*l = (struct sfb_loc){ SFB_LOC_EXPR, rule_kind(r) == R_OFFSET, SFB_REG_CFA, arg };
			break;
		case R_REGISTER:
			*l = (struct sfb_loc){ .kind = SFB_LOC_REGISTER, .reg = (uint16_t)arg };
			break;
		default: {
			/* R_EXPR, R_VAL_EXPR: the block was checked when read. */
			uint64_t at = (uint64_t)arg;
			if (block(&s->frame, &at, s->frame.len, rule_kind(r) == R_EXPR, l))
				return SFB_CFI_E_EXPR;
		}
		}
	}
	return SFB_CFI_OK;
}

int sfb_cfi_lookup(const struct sfb_cfi_section *s, uint64_t pc, unsigned fp_reg,
		   struct sfb_row *row)
{
	struct sfb_cfi_fde f;
	struct sfb_cfi_table_row t;
	uint64_t from, to;
	int err = find_fde(s, pc, &f, &from, &to);
	if (err)
		return err;
	if ((err = sfb_cfi_table_row(s, &f, pc, &t)))
		return err;
	if (f.pc_end - f.pc_begin > UINT32_MAX)
		return SFB_CFI_E_FDE;
	/* A row without a CFA rule cannot be applied. */
	if (t.cfa.kind != SFB_LOC_EXPR && t.cfa.kind != SFB_LOC_DWARF)
		return SFB_CFI_E_FDE;
	memset(row, 0, sizeof *row);
	row->func_start = f.pc_begin;
	row->func_size = (uint32_t)(f.pc_end - f.pc_begin);
	/* Where this same row is found: the table row's range, within the
	 * PCs whose search ends at this FDE's entry (they differ only where
	 * a table's entries overlap the FDEs' ranges or disagree with them). */
	row->pc_lo = t.pc_lo > from ? t.pc_lo : from;
	row->pc_hi = t.pc_hi < to ? t.pc_hi : to;
	row->cfa = t.cfa;
	row->ra = t.reg[t.ra_column];
	if (fp_reg < SFB_CFI_REGS)
		row->fp = t.reg[fp_reg];
	row->flags = SFB_ROW_CFI;
	if (t.signal_frame)
		row->flags |= SFB_ROW_SIGNAL;
	if (row->ra.kind == SFB_LOC_UNDEFINED)
		row->flags |= SFB_ROW_OUTERMOST;
	if (t.ra_signed)
		row->flags |= SFB_ROW_MANGLED_RA | (t.pauth_b ? SFB_ROW_PAUTH_B : 0);
	row->expr = s->frame.p;
	row->expr_len = s->frame.len;
	/* Only an instruction gives a rule other than SAME. */
	for (uint64_t m = t.explicit_regs; m; m &= m - 1) {
		unsigned n = (unsigned)__builtin_ctzll(m);
		if (n == t.ra_column || n == fp_reg || t.reg[n].kind == SFB_LOC_SAME)
			continue;
		if (row->nregs == SFB_ROW_REGS)
			return SFB_CFI_E_REGISTER;
		row->regs[row->nregs++] = (struct sfb_reg_rule){ .reg = (uint16_t)n,
								 .loc = t.reg[n] };
	}
	return SFB_CFI_OK;
}

/* ---- DWARF expressions -------------------------------------------------- */

/* What an operation does.  Each class takes the operation's pops entries
 * from the top of the stack and leaves its pushes entries in their
 * place: s[0] is the deepest of them. */
enum op_class {
	OP_REFUSED,       /* register locations (DW_OP_reg*), pieces, calls, TLS
			     and typed operations have no place in CFI */
	OP_NOP,
	OP_CONST,         /* push the operand */
	OP_LIT,           /* push the opcode's place in the lit family */
	OP_BREG,          /* push a register (the opcode's place in the breg
			     family) plus the operand */
	OP_BREGX,         /* push register (operand 1) plus operand 2 */
	OP_DUP, OP_DROP, OP_OVER, OP_PICK, OP_SWAP,
	OP_ROT,           /* the top to third, the second and third up */
	OP_DEREF,         /* replace an address by the word there */
	OP_DEREF_SIZE,    /* ... by its first (operand) bytes */
	OP_UNARY,         /* replace the top by a function of it */
	OP_PLUS_UCONST,   /* add the operand to the top */
	OP_BINARY,        /* replace the top two by a function of them */
	OP_SKIP,          /* jump by the operand */
	OP_BRA,           /* pop; jump by the operand if it was not 0 */
};

/* An operation's operand shape (enum sfb_dw_shape), what it takes from
 * the stack and leaves there, and its class. */
struct op_shape {
	uint8_t opnd;
	uint8_t pops, pushes;
	uint8_t cls;
};

#define SHAPE(cls, pops, pushes, opnd) { opnd, pops, pushes, cls }

/* DWARF 5, 2.5.1, for the operations compilers and glibc emit for CFI;
 * every other opcode is OP_REFUSED. */
static const struct op_shape op_shapes[256] = {
	/*                                   class           pops pushes operand shape */
	[DW_OP_addr]                   = SHAPE(OP_CONST,       0, 1, SFB_DW_ADDR),
	[DW_OP_deref]                  = SHAPE(OP_DEREF,       1, 1, SFB_DW_NONE),
	[DW_OP_const1u]                = SHAPE(OP_CONST,       0, 1, SFB_DW_U8),
	[DW_OP_const1s]                = SHAPE(OP_CONST,       0, 1, SFB_DW_S8),
	[DW_OP_const2u]                = SHAPE(OP_CONST,       0, 1, SFB_DW_U16),
	[DW_OP_const2s]                = SHAPE(OP_CONST,       0, 1, SFB_DW_S16),
	[DW_OP_const4u]                = SHAPE(OP_CONST,       0, 1, SFB_DW_U32),
	[DW_OP_const4s]                = SHAPE(OP_CONST,       0, 1, SFB_DW_S32),
	[DW_OP_const8u]                = SHAPE(OP_CONST,       0, 1, SFB_DW_U64),
	[DW_OP_const8s]                = SHAPE(OP_CONST,       0, 1, SFB_DW_S64),
	[DW_OP_constu]                 = SHAPE(OP_CONST,       0, 1, SFB_DW_ULEB),
	[DW_OP_consts]                 = SHAPE(OP_CONST,       0, 1, SFB_DW_SLEB),
	[DW_OP_dup]                    = SHAPE(OP_DUP,         1, 2, SFB_DW_NONE),
	[DW_OP_drop]                   = SHAPE(OP_DROP,        1, 0, SFB_DW_NONE),
	[DW_OP_over]                   = SHAPE(OP_OVER,        2, 3, SFB_DW_NONE),
	[DW_OP_pick]                   = SHAPE(OP_PICK,        0, 1, SFB_DW_U8),
	[DW_OP_swap]                   = SHAPE(OP_SWAP,        2, 2, SFB_DW_NONE),
	[DW_OP_rot]                    = SHAPE(OP_ROT,         3, 3, SFB_DW_NONE),
	[DW_OP_abs]                    = SHAPE(OP_UNARY,       1, 1, SFB_DW_NONE),
	[DW_OP_and]                    = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_div]                    = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_minus]                  = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_mod]                    = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_mul]                    = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_neg]                    = SHAPE(OP_UNARY,       1, 1, SFB_DW_NONE),
	[DW_OP_not]                    = SHAPE(OP_UNARY,       1, 1, SFB_DW_NONE),
	[DW_OP_or]                     = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_plus]                   = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_plus_uconst]            = SHAPE(OP_PLUS_UCONST, 1, 1, SFB_DW_ULEB),
	[DW_OP_shl]                    = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_shr]                    = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_shra]                   = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_xor]                    = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_bra]                    = SHAPE(OP_BRA,         1, 0, SFB_DW_S16),
	[DW_OP_eq]                     = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_ge]                     = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_gt]                     = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_le]                     = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_lt]                     = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_ne]                     = SHAPE(OP_BINARY,      2, 1, SFB_DW_NONE),
	[DW_OP_skip]                   = SHAPE(OP_SKIP,        0, 0, SFB_DW_S16),
	[DW_OP_lit0 ... DW_OP_lit31]   = SHAPE(OP_LIT,         0, 1, SFB_DW_NONE),
	[DW_OP_breg0 ... DW_OP_breg31] = SHAPE(OP_BREG,        0, 1, SFB_DW_SLEB),
	[DW_OP_bregx]                  = SHAPE(OP_BREGX,       0, 1, SFB_DW_ULEB_SLEB),
	[DW_OP_deref_size]             = SHAPE(OP_DEREF_SIZE,  1, 1, SFB_DW_U8),
	[DW_OP_nop]                    = SHAPE(OP_NOP,         0, 0, SFB_DW_NONE),
};

#undef SHAPE

/* An expression being evaluated: its stack, and where it is read. */
struct vm {
	uint64_t st[SFB_CFI_EXPR_STACK];
	unsigned n;                     /* entries on st */
	struct sfb_bytes b;             /* ends where the expression does */
	uint64_t at, start;             /* the next operation, the first */
	const struct sfb_cfi_eval_ctx *cx;
};

/* Register reg's value plus off. */
static bool reg_plus(const struct sfb_cfi_eval_ctx *cx, uint64_t reg, uint64_t off,
		     uint64_t *out)
{
	if (reg > UINT32_MAX || !cx || !cx->reg || !cx->reg(cx->arg, (unsigned)reg, out))
		return false;
	*out += off;
	return true;
}

/* The first size bytes (1 to 8) of the word at *addr, in its place. */
static bool deref(const struct sfb_cfi_eval_ctx *cx, uint64_t size, uint64_t *addr)
{
	uint64_t v;
	if (size == 0 || size > sizeof v || !cx || !cx->mem || !cx->mem(cx->arg, *addr, &v))
		return false;
	/* Its first size bytes, on this little- or big-endian host. */
	if (size < sizeof v) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v >>= 64 - 8 * size;
#else
		v &= ((uint64_t)1 << (8 * size)) - 1;
#endif
	}
	*addr = v;
	return true;
}

static uint64_t unary(unsigned op, uint64_t x)
{
	switch (op) {
	case DW_OP_abs: return (int64_t)x < 0 ? -x : x;
	case DW_OP_neg: return -x;
	default: return ~x; /* DW_OP_not */
	}
}

/* a op b, a the second entry, b the top; false for a division by 0. */
static bool binary(unsigned op, uint64_t a, uint64_t b, uint64_t *out)
{
	int64_t sa = (int64_t)a, sb = (int64_t)b;
	switch (op) {
	case DW_OP_and: *out = a & b; break;
	case DW_OP_div: /* signed */
		if (sb == 0)
			return false;
		*out = sb == -1 ? -a : (uint64_t)(sa / sb);
		break;
	case DW_OP_minus: *out = a - b; break;
	case DW_OP_mod:
		if (b == 0)
			return false;
		*out = a % b;
		break;
	case DW_OP_mul: *out = a * b; break;
	case DW_OP_or: *out = a | b; break;
	case DW_OP_plus: *out = a + b; break;
	case DW_OP_shl: *out = b >= 64 ? 0 : a << b; break;
	case DW_OP_shr: *out = b >= 64 ? 0 : a >> b; break;
	case DW_OP_shra: *out = (uint64_t)(sa >> (b >= 64 ? 63 : b)); break;
	case DW_OP_xor: *out = a ^ b; break;
	case DW_OP_eq: *out = sa == sb; break;
	case DW_OP_ge: *out = sa >= sb; break;
	case DW_OP_gt: *out = sa > sb; break;
	case DW_OP_le: *out = sa <= sb; break;
	case DW_OP_lt: *out = sa < sb; break;
	default: *out = sa != sb; break; /* DW_OP_ne */
	}
	return true;
}

/* A branch by delta from the next operation: it must land inside the
 * expression or just past its end, taken or not. */
static bool branch(struct vm *m, uint64_t delta, bool taken)
{
	uint64_t to = m->at + delta;
	if ((int64_t)to < (int64_t)m->start || to > m->b.len)
		return false;
	if (taken)
		m->at = to;
	return true;
}

/* Operation op, of class cls, with the operands its shape gives in a, on
 * s: the stack entries it takes and leaves (the caller checked there are
 * enough of both). */
static bool apply(struct vm *m, unsigned op, unsigned cls, const uint64_t *a, uint64_t *s)
{
	uint64_t t;
	switch (cls) {
	case OP_NOP: case OP_DROP: return true;
	case OP_CONST: s[0] = a[0]; return true;
	case OP_LIT: s[0] = op - DW_OP_lit0; return true;
	case OP_BREG: return reg_plus(m->cx, op - DW_OP_breg0, a[0], s);
	case OP_BREGX: return reg_plus(m->cx, a[0], a[1], s);
	case OP_DUP: s[1] = s[0]; return true;
	case OP_OVER: s[2] = s[0]; return true;
	case OP_PICK: /* s is the top's place plus one */
		if (a[0] >= m->n)
			return false;
		s[0] = s[-1 - (int64_t)a[0]];
		return true;
	case OP_SWAP: t = s[0]; s[0] = s[1]; s[1] = t; return true;
	case OP_ROT: t = s[2]; s[2] = s[1]; s[1] = s[0]; s[0] = t; return true;
	case OP_DEREF: return deref(m->cx, sizeof *s, s);
	case OP_DEREF_SIZE: return deref(m->cx, a[0], s);
	case OP_UNARY: s[0] = unary(op, s[0]); return true;
	case OP_PLUS_UCONST: s[0] += a[0]; return true;
	case OP_BINARY: return binary(op, s[0], s[1], s);
	case OP_SKIP: return branch(m, a[0], true);
	case OP_BRA: return branch(m, a[0], s[0] != 0);
	default: return false; /* OP_REFUSED */
	}
}

int sfb_cfi_eval(const uint8_t *expr, uint64_t expr_len, uint32_t off, uint32_t len,
		 const struct sfb_cfi_eval_ctx *cx, bool push_cfa, uint64_t cfa,
		 uint64_t *out)
{
	if (!expr || off > expr_len || len > expr_len - off)
		return SFB_CFI_E_EXPR;
	struct vm m;
	/* Bounded by the expression's end: no operand is read past it. */
	m.b = (struct sfb_bytes){ .p = expr, .len = (size_t)off + len };
	m.at = m.start = off;
	m.cx = cx;
	m.n = 0;
	if (push_cfa)
		m.st[m.n++] = cfa;
	for (unsigned ops = 0; m.at < m.b.len;) {
		uint64_t op, a[2];
		if (++ops > SFB_CFI_EXPR_OPS || !sfb_dw_get(&m.b, &m.at, m.b.len, 1, &op))
			return SFB_CFI_E_EXPR;
		const struct op_shape *d = &op_shapes[op];
		if (d->opnd != SFB_DW_NONE && sfb_dw_operands(&m.b, &m.at, m.b.len, d->opnd, a))
			return SFB_CFI_E_EXPR;
		if (m.n < d->pops || m.n - d->pops + d->pushes > SFB_CFI_EXPR_STACK)
			return SFB_CFI_E_EXPR;
		if (!apply(&m, (unsigned)op, d->cls, a, &m.st[m.n - d->pops]))
			return SFB_CFI_E_EXPR;
		m.n = m.n - d->pops + d->pushes;
	}
	if (m.n == 0)
		return SFB_CFI_E_EXPR;
	*out = m.st[m.n - 1];
	return SFB_CFI_OK;
}
