/* DWARF call-frame information from .eh_frame, for PCs no SFrame row
 * covers (libc, ld.so, libstdc++, the vDSO: no distribution builds them
 * with SFrame), decoded without allocation, lock or system call.
 *
 * An object's CFI is found through its PT_GNU_EH_FRAME segment
 * (.eh_frame_hdr), whose sorted table maps a PC to its FDE by binary
 * search.  An object without that table, or with a table that is not
 * searchable (unsorted, or an encoding other than datarel|sdata4), has no
 * usable CFI: it is never scanned.  Every byte of .eh_frame_hdr and
 * .eh_frame is read through the checked accessor (bytes.h), so hostile
 * input yields an error code, never a fault, an out-of-bounds read or a
 * loop: the interpreter's work is bounded per FDE (SFB_CFI_MAX_OPS), its
 * state stack (DW_CFA_remember_state) by SFB_CFI_STATE_DEPTH, and a DWARF
 * expression's by SFB_CFI_EXPR_STACK and SFB_CFI_EXPR_OPS.
 *
 * Like sframe_decode.h, this is pure decoding: the caller says where the
 * bytes are and how far they may be read.  For 64-bit objects (absptr
 * pointers are 8 bytes) in the host's byte order.  .eh_frame is read up to
 * 2 GiB from its start; DW_CFA_expression and val_expression blocks must
 * lie in its first 128 MiB (the interpreter keeps each register's rule in
 * 32 bits, so that its states, SFB_CFI_STATE_DEPTH remembered ones
 * included, take about 1 KiB of a signal stack). */
#ifndef SFB_CFI_H
#define SFB_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/bytes.h"
#include "base/dwarf.h"
#include "rows/row.h"

#define SFB_CFI_MAX_OPS 16384    /* CFA instructions interpreted per lookup (one FDE
				    of libclang 14 has 5283) */
#define SFB_CFI_STATE_DEPTH 4    /* DW_CFA_remember_state nesting */
#define SFB_CFI_EXPR_STACK 16    /* DWARF expression stack entries */
#define SFB_CFI_EXPR_OPS 256     /* DWARF expression operations per evaluation */
#define SFB_CFI_REGS 36          /* DWARF registers 0..35 tracked by the interpreter
				    (x86-64 0-16, AArch64 0-31 and 34 RA_SIGN_STATE,
				    s390x 0-31); rules for others are ignored,
				    a CIE whose RA column is past them is
				    rejected (SFB_CFI_E_REGISTER) */

/* Why CFI could not be used.  Stable numbers, named by sfb_cfi_err_name();
 * the readers of dwarf.h fail with the two they share. */
enum sfb_cfi_err {
	SFB_CFI_OK = 0,
	SFB_CFI_E_NO_TABLE = 1,     /* no .eh_frame_hdr, or its table is absent/unsearchable */
	SFB_CFI_E_HDR = 2,          /* malformed .eh_frame_hdr (version, encodings, bounds) */
	SFB_CFI_E_NOT_FOUND = 3,    /* no FDE covers the PC */
	SFB_CFI_E_TRUNCATED = SFB_DW_E_TRUNCATED, /* 4: a CIE/FDE/instruction runs past
						     its bounds */
	SFB_CFI_E_CIE = 5,          /* malformed CIE (version, augmentation, pointer encoding) */
	SFB_CFI_E_FDE = 6,          /* malformed FDE (bad CIE pointer, range, augmentation) */
	SFB_CFI_E_OPCODE = 7,       /* unknown or unsupported DW_CFA opcode */
	SFB_CFI_E_STATE = 8,        /* remember_state too deep, or restore_state with none */
	SFB_CFI_E_BUDGET = 9,       /* more than SFB_CFI_MAX_OPS instructions */
	SFB_CFI_E_REGISTER = 10,    /* a rule the row cannot hold: register number past
				       SFB_CFI_REGS, offset out of range (CFA: 32 bits,
				       other registers: 28), more rules than SFB_ROW_REGS */
	SFB_CFI_E_EXPR = 11,        /* malformed, unsupported or over-budget DWARF expression */
	SFB_CFI_E_LEB = SFB_DW_E_LEB, /* 12: a LEB128 number longer than 10 bytes or past
					 64 bits */
};
const char *sfb_cfi_err_name(int err);

/* An object's CFI, validated once by sfb_cfi_load().  Fixed size, no
 * pointers into memory the decoder allocated. */
struct sfb_cfi_section {
	struct sfb_bytes hdr;    /* .eh_frame_hdr */
	uint64_t hdr_addr;       /* its address (base of datarel encodings) */
	struct sfb_bytes frame;  /* .eh_frame, from its start to the end of what may be read */
	uint64_t frame_addr;
	uint32_t fde_count;      /* entries of the search table */
	uint32_t table_off;      /* offset of the table in hdr */
};

/* Validate an .eh_frame_hdr of hdr_len bytes at hdr (loaded at hdr_addr).
 * The .eh_frame it points to is read at most up to frame_limit (an
 * address: the end of the readable segment holding it).  addr_base: what
 * must be added to an address in the section to find its bytes in memory
 * (0 for a loaded object; for a file read into a buffer, buffer - vaddr).
 * SFB_CFI_OK or an enum sfb_cfi_err. */
int sfb_cfi_load(struct sfb_cfi_section *s, const void *hdr, size_t hdr_len,
		 uint64_t hdr_addr, uint64_t frame_limit, uintptr_t addr_base);

/* One FDE with its CIE, parsed. */
struct sfb_cfi_fde {
	uint64_t pc_begin, pc_end;     /* [begin, end) */
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_column;
	uint32_t cie_insns, cie_insns_end;   /* offsets in frame: initial instructions */
	uint32_t fde_insns, fde_insns_end;   /* offsets in frame: the FDE's instructions */
	uint8_t ptr_enc;               /* the CIE's pointer encoding ('R'), for DW_CFA_set_loc */
	uint8_t signal_frame;          /* augmentation 'S' */
	uint8_t pauth_b;               /* AArch64 augmentation 'B' */
};

/* The FDE covering pc (binary search of the hdr table, then its FDE and
 * CIE parsed and the range checked). */
int sfb_cfi_find(const struct sfb_cfi_section *s, uint64_t pc, struct sfb_cfi_fde *fde);

/* The full CFI table row at pc, one rule per register, as DWARF defines it
 * (and readelf --debug-dump=frames-interp prints it): for the oracle test
 * and tools.  The CFA rule is cfa (kind EXPR with deref 0: reg + off; or
 * DWARF: an expression); reg[n] is register n's rule (SAME where no rule
 * was given, UNDEFINED, EXPR with reg SFB_REG_CFA and deref 1: offset(N),
 * deref 0: val_offset(N); REGISTER; DWARF). */
struct sfb_cfi_table_row {
	uint64_t pc_lo, pc_hi;         /* the row holds for [pc_lo, pc_hi) */
	struct sfb_loc cfa;
	struct sfb_loc reg[SFB_CFI_REGS];
	uint64_t explicit_regs;        /* bit n: reg[n] was given by an instruction
					  (readelf prints the others as "u") */
	uint32_t ra_column;
	int64_t args_size;             /* DW_CFA_GNU_args_size */
	uint8_t signal_frame;
	uint8_t ra_signed;             /* AArch64: RA_SIGN_STATE (negate_ra_state) is 1 */
	uint8_t pauth_b;
};
int sfb_cfi_table_row(const struct sfb_cfi_section *s, const struct sfb_cfi_fde *fde,
		      uint64_t pc, struct sfb_cfi_table_row *out);

/* The walker's row for pc (row.h): the table row, with the RA column's
 * rule in ra, fp_reg's in fp, and every other register that has a rule
 * other than SAME in regs[] (SFB_CFI_E_REGISTER if more than
 * SFB_ROW_REGS).  SFB_CFI_E_FDE if the row has no CFA rule.
 * flags: SFB_ROW_CFI, plus SFB_ROW_SIGNAL for an 'S' CIE,
 * SFB_ROW_OUTERMOST when the RA is undefined, SFB_ROW_MANGLED_RA (and
 * SFB_ROW_PAUTH_B) when AArch64's RA_SIGN_STATE is set.  expr and
 * expr_len are set to the .eh_frame bytes, for SFB_LOC_DWARF rules.
 * [pc_lo, pc_hi) is where this same row is found: the table row's range,
 * narrowed to the PCs whose search ends at the same table entry (which
 * changes it only where entries overlap or disagree with their FDEs), so
 * that a row may be kept for its whole range (cfi_cache.h). */
int sfb_cfi_lookup(const struct sfb_cfi_section *s, uint64_t pc, unsigned fp_reg,
		   struct sfb_row *row);

/* Evaluate a DWARF expression (SFB_LOC_DWARF: row->expr + loc->off, of
 * loc->reg bytes).  reg() gives a register's value (false: unknown, the
 * evaluation fails), mem() reads a word (false: unreadable).  When
 * push_cfa, the CFA is pushed first (DW_CFA_expression and
 * DW_CFA_val_expression rules; not for DW_CFA_def_cfa_expression).  The
 * result is the value on top of the stack.  Supports the operations
 * compilers and glibc emit for CFI: DW_OP_lit*, const*, breg*, bregx,
 * dup, drop, over, pick, swap, rot, deref, abs, and, div, minus, mod,
 * mul, neg, not, or, plus, plus_uconst, shl, shr, shra, xor, the
 * comparisons, skip, bra, nop, addr, deref_size (mem() still reads a
 * whole word).  SFB_CFI_E_EXPR for anything else, and when reg() or
 * mem() fails. */
struct sfb_cfi_eval_ctx {
	bool (*reg)(void *arg, unsigned regno, uint64_t *out);
	bool (*mem)(void *arg, uint64_t addr, uint64_t *out);
	void *arg;
};
int sfb_cfi_eval(const uint8_t *expr, uint64_t expr_len, uint32_t off, uint32_t len,
		 const struct sfb_cfi_eval_ctx *cx, bool push_cfa, uint64_t cfa,
		 uint64_t *out);

#endif
