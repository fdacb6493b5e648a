/* The row: how to find a frame's caller from a PC, whatever its source.
 *
 * Every row source (sframe_decode.c for .sframe, cfi.c for .eh_frame)
 * produces this one type, and the walker applies it without knowing where
 * it came from.  Register numbers are DWARF numbers of the object's ABI
 * (AMD64: sp 7, fp 6, ra column 16; AArch64: sp 31, fp 29, lr 30; s390x:
 * sp 15, fp 11, ra 14). */
#ifndef SFB_ROW_H
#define SFB_ROW_H

#include <stddef.h>
#include <stdint.h>

/* Where a value (the CFA, or a register of the caller) is found. */
enum sfb_loc_kind {
	SFB_LOC_SAME = 0,        /* unchanged: the register still holds it */
	SFB_LOC_UNDEFINED = 1,   /* no value: outermost frame (RA), or unknown */
	SFB_LOC_EXPR = 2,        /* base + off, dereferenced if deref */
	SFB_LOC_REGISTER = 3,    /* the value of register reg (DW_CFA_register) */
	SFB_LOC_DWARF = 4,       /* a DWARF expression's result, dereferenced if
				    deref (DW_CFA_expression; deref 0:
				    DW_CFA_val_expression, def_cfa_expression).
				    off: the expression's offset in the row's
				    expression bytes (struct sfb_row.expr),
				    reg: its length */
};
#define SFB_REG_CFA 0xffffu      /* base = the CFA just computed */

struct sfb_loc {
	uint8_t kind;            /* enum sfb_loc_kind */
	uint8_t deref;           /* value = *(base + off) */
	uint16_t reg;            /* DWARF register number, or SFB_REG_CFA */
	int32_t off;
};

/* Row flags. */
#define SFB_ROW_SIGNAL 0x01      /* the function is a signal trampoline (V3 'S', CIE 'S') */
#define SFB_ROW_OUTERMOST 0x02   /* RA undefined, or an FDE with no FREs */
#define SFB_ROW_MANGLED_RA 0x04  /* AArch64: RA carries a PAC signature */
#define SFB_ROW_PAUTH_B 0x08     /* AArch64: ... signed with key B */
#define SFB_ROW_FLEX 0x10        /* from a V3 flexible FDE */
#define SFB_ROW_PCMASK 0x20      /* from a PCMASK FDE */
#define SFB_ROW_RA_FIXED 0x40    /* RA rule is the header's fixed offset */
#define SFB_ROW_RA_PADDING 0x80  /* RA explicitly marked "not saved" (padding word) */
#define SFB_ROW_CFI 0x100        /* from .eh_frame (DWARF CFI), not .sframe */
#define SFB_ROW_MEMO 0x200       /* a memoised row (rowmemo.h): rules for the CFA,
				    RA and FP only, nothing of other registers */

/* Rules for registers other than SP, FP and the RA (CFI rows only): the
 * callee-saved registers a CFI row says were saved, so that a later
 * frame whose rule is based on one of them can be unwound.  A register
 * not listed keeps its value (SAME); SFrame rows list none, and the
 * walker then treats every register but SP and FP as unknown. */
/* s390x saves up to 15 besides the RA and FP (r6-r13, f8-f15). */
#define SFB_ROW_REGS 20

struct sfb_reg_rule {
	uint16_t reg;            /* DWARF number */
	struct sfb_loc loc;      /* kind EXPR/REGISTER/DWARF/UNDEFINED */
};

/* One row: valid for PCs in [pc_lo, pc_hi). */
struct sfb_row {
	uint64_t func_start;
	uint32_t func_size;
	uint64_t pc_lo, pc_hi;   /* absolute range this row covers */
	struct sfb_loc cfa;      /* EXPR or DWARF on a non-outermost row */
	struct sfb_loc ra;
	struct sfb_loc fp;
	uint16_t flags;
	uint8_t nregs;           /* regs[0..nregs) in use (CFI rows) */
	/* DWARF expressions (SFB_LOC_DWARF) are read from here, through the
	 * checked accessor: the .eh_frame section the row came from. */
	const uint8_t *expr;
	uint64_t expr_len;
	struct sfb_reg_rule regs[SFB_ROW_REGS];
};

/* The rule a CFI row gives DWARF register n, or NULL where it gives none
 * (the register keeps its value; other rows list no register). */
static inline const struct sfb_loc *sfb_row_reg_rule(const struct sfb_row *row, unsigned n)
{
	for (unsigned k = 0; (row->flags & SFB_ROW_CFI) && k < row->nregs; k++)
		if (row->regs[k].reg == n)
			return &row->regs[k].loc;
	return NULL;
}

#endif
