/* DWARF primitives shared by the readers of DWARF-encoded sections
 * (.eh_frame's call-frame instructions and expressions, and the line
 * tables and DIEs of .debug_line and .debug_info): the standard's names
 * for opcodes, forms and encodings (DWARF 5 and the GNU extensions
 * compilers emit), and the readers of the numbers they are made of.
 *
 * Every reader takes a cursor *at and a bound end (at most b->len): it
 * reads through sfb_get() (bytes.h), so never past end nor past the
 * section, and advances *at past what it read only when the read
 * succeeds.  They are static functions (SFB_DW_FN), not inline ones, so
 * that the compiler weighs inlining them into a decoder as it would the
 * decoder's own: its hot loop compiles to the same code as if it had
 * written them itself. */
#ifndef SFB_DWARF_H
#define SFB_DWARF_H

#include <stdbool.h>
#include <stdint.h>
#include "base/bytes.h"

/* ---- Names -------------------------------------------------------------- */

/* Call-frame instructions (DWARF 5, 6.4.2; table 7.29).  advance_loc,
 * offset and restore are "primary" opcodes: their top two bits, with
 * their first operand (a delta or a register) in the low six. */
enum sfb_dw_cfa {
	DW_CFA_advance_loc = 0x40,
	DW_CFA_offset = 0x80,
	DW_CFA_restore = 0xc0,
	DW_CFA_nop = 0x00,
	DW_CFA_set_loc = 0x01,
	DW_CFA_advance_loc1 = 0x02,
	DW_CFA_advance_loc2 = 0x03,
	DW_CFA_advance_loc4 = 0x04,
	DW_CFA_offset_extended = 0x05,
	DW_CFA_restore_extended = 0x06,
	DW_CFA_undefined = 0x07,
	DW_CFA_same_value = 0x08,
	DW_CFA_register = 0x09,
	DW_CFA_remember_state = 0x0a,
	DW_CFA_restore_state = 0x0b,
	DW_CFA_def_cfa = 0x0c,
	DW_CFA_def_cfa_register = 0x0d,
	DW_CFA_def_cfa_offset = 0x0e,
	DW_CFA_def_cfa_expression = 0x0f,
	DW_CFA_expression = 0x10,
	DW_CFA_offset_extended_sf = 0x11,
	DW_CFA_def_cfa_sf = 0x12,
	DW_CFA_def_cfa_offset_sf = 0x13,
	DW_CFA_val_offset = 0x14,
	DW_CFA_val_offset_sf = 0x15,
	DW_CFA_val_expression = 0x16,
	DW_CFA_lo_user = 0x1c,
	DW_CFA_MIPS_advance_loc8 = 0x1d,
	DW_CFA_AARCH64_negate_ra_state_with_pc = 0x2c,
	DW_CFA_GNU_window_save = 0x2d,
	DW_CFA_AARCH64_negate_ra_state = 0x2d,  /* GNU_window_save's number, on AArch64 */
	DW_CFA_GNU_args_size = 0x2e,
	DW_CFA_GNU_negative_offset_extended = 0x2f,
	DW_CFA_hi_user = 0x3f,
};
#define SFB_DW_CFA_LOW_MAX 0x3f                   /* a primary opcode's first operand */
#define SFB_DW_CFA_LOW(op) ((op) & SFB_DW_CFA_LOW_MAX)

/* DWARF expression operations (DWARF 5, 2.5 and 2.6; table 7.9).  The
 * lit, reg and breg families are 32 consecutive opcodes each. */
enum sfb_dw_op {
	DW_OP_addr = 0x03,
	DW_OP_deref = 0x06,
	DW_OP_const1u = 0x08,
	DW_OP_const1s = 0x09,
	DW_OP_const2u = 0x0a,
	DW_OP_const2s = 0x0b,
	DW_OP_const4u = 0x0c,
	DW_OP_const4s = 0x0d,
	DW_OP_const8u = 0x0e,
	DW_OP_const8s = 0x0f,
	DW_OP_constu = 0x10,
	DW_OP_consts = 0x11,
	DW_OP_dup = 0x12,
	DW_OP_drop = 0x13,
	DW_OP_over = 0x14,
	DW_OP_pick = 0x15,
	DW_OP_swap = 0x16,
	DW_OP_rot = 0x17,
	DW_OP_xderef = 0x18,
	DW_OP_abs = 0x19,
	DW_OP_and = 0x1a,
	DW_OP_div = 0x1b,
	DW_OP_minus = 0x1c,
	DW_OP_mod = 0x1d,
	DW_OP_mul = 0x1e,
	DW_OP_neg = 0x1f,
	DW_OP_not = 0x20,
	DW_OP_or = 0x21,
	DW_OP_plus = 0x22,
	DW_OP_plus_uconst = 0x23,
	DW_OP_shl = 0x24,
	DW_OP_shr = 0x25,
	DW_OP_shra = 0x26,
	DW_OP_xor = 0x27,
	DW_OP_bra = 0x28,
	DW_OP_eq = 0x29,
	DW_OP_ge = 0x2a,
	DW_OP_gt = 0x2b,
	DW_OP_le = 0x2c,
	DW_OP_lt = 0x2d,
	DW_OP_ne = 0x2e,
	DW_OP_skip = 0x2f,
	DW_OP_lit0 = 0x30,
	DW_OP_lit31 = 0x4f,
	DW_OP_reg0 = 0x50,
	DW_OP_reg31 = 0x6f,
	DW_OP_breg0 = 0x70,
	DW_OP_breg31 = 0x8f,
	DW_OP_regx = 0x90,
	DW_OP_fbreg = 0x91,
	DW_OP_bregx = 0x92,
	DW_OP_piece = 0x93,
	DW_OP_deref_size = 0x94,
	DW_OP_xderef_size = 0x95,
	DW_OP_nop = 0x96,
	DW_OP_push_object_address = 0x97,
	DW_OP_call2 = 0x98,
	DW_OP_call4 = 0x99,
	DW_OP_call_ref = 0x9a,
	DW_OP_form_tls_address = 0x9b,
	DW_OP_call_frame_cfa = 0x9c,
	DW_OP_bit_piece = 0x9d,
	DW_OP_implicit_value = 0x9e,
	DW_OP_stack_value = 0x9f,
	DW_OP_implicit_pointer = 0xa0,
	DW_OP_addrx = 0xa1,
	DW_OP_constx = 0xa2,
	DW_OP_entry_value = 0xa3,
	DW_OP_const_type = 0xa4,
	DW_OP_regval_type = 0xa5,
	DW_OP_deref_type = 0xa6,
	DW_OP_xderef_type = 0xa7,
	DW_OP_convert = 0xa8,
	DW_OP_reinterpret = 0xa9,
	DW_OP_lo_user = 0xe0,
	DW_OP_GNU_push_tls_address = 0xe0,
	DW_OP_GNU_uninit = 0xf0,
	DW_OP_GNU_encoded_addr = 0xf1,
	DW_OP_GNU_implicit_pointer = 0xf2,
	DW_OP_GNU_entry_value = 0xf3,
	DW_OP_GNU_const_type = 0xf4,
	DW_OP_GNU_regval_type = 0xf5,
	DW_OP_GNU_deref_type = 0xf6,
	DW_OP_GNU_convert = 0xf7,
	DW_OP_GNU_reinterpret = 0xf9,
	DW_OP_GNU_parameter_ref = 0xfa,
	DW_OP_GNU_addr_index = 0xfb,
	DW_OP_GNU_const_index = 0xfc,
	DW_OP_GNU_variable_value = 0xfd,
	DW_OP_hi_user = 0xff,
};

/* Pointer encodings of .eh_frame and .eh_frame_hdr (LSB, "DWARF
 * Extensions"): a format in the low nibble (bit 3: signed), an
 * application in bits 4-6, indirection in bit 7; omit alone. */
enum sfb_dw_eh_pe {
	DW_EH_PE_absptr = 0x00,
	DW_EH_PE_uleb128 = 0x01,
	DW_EH_PE_udata2 = 0x02,
	DW_EH_PE_udata4 = 0x03,
	DW_EH_PE_udata8 = 0x04,
	DW_EH_PE_signed = 0x08,
	DW_EH_PE_sleb128 = 0x09,
	DW_EH_PE_sdata2 = 0x0a,
	DW_EH_PE_sdata4 = 0x0b,
	DW_EH_PE_sdata8 = 0x0c,
	DW_EH_PE_pcrel = 0x10,
	DW_EH_PE_textrel = 0x20,
	DW_EH_PE_datarel = 0x30,
	DW_EH_PE_funcrel = 0x40,
	DW_EH_PE_aligned = 0x50,
	DW_EH_PE_indirect = 0x80,
	DW_EH_PE_omit = 0xff,
	DW_EH_PE_FORMAT_MASK = 0x0f,
	DW_EH_PE_APPL_MASK = 0x70,
};

/* Attribute forms (DWARF 5, 7.5.6; table 7.6). */
enum sfb_dw_form {
	DW_FORM_addr = 0x01,
	DW_FORM_block2 = 0x03,
	DW_FORM_block4 = 0x04,
	DW_FORM_data2 = 0x05,
	DW_FORM_data4 = 0x06,
	DW_FORM_data8 = 0x07,
	DW_FORM_string = 0x08,
	DW_FORM_block = 0x09,
	DW_FORM_block1 = 0x0a,
	DW_FORM_data1 = 0x0b,
	DW_FORM_flag = 0x0c,
	DW_FORM_sdata = 0x0d,
	DW_FORM_strp = 0x0e,
	DW_FORM_udata = 0x0f,
	DW_FORM_ref_addr = 0x10,
	DW_FORM_ref1 = 0x11,
	DW_FORM_ref2 = 0x12,
	DW_FORM_ref4 = 0x13,
	DW_FORM_ref8 = 0x14,
	DW_FORM_ref_udata = 0x15,
	DW_FORM_indirect = 0x16,
	DW_FORM_sec_offset = 0x17,
	DW_FORM_exprloc = 0x18,
	DW_FORM_flag_present = 0x19,
	DW_FORM_strx = 0x1a,
	DW_FORM_addrx = 0x1b,
	DW_FORM_ref_sup4 = 0x1c,
	DW_FORM_strp_sup = 0x1d,
	DW_FORM_data16 = 0x1e,
	DW_FORM_line_strp = 0x1f,
	DW_FORM_ref_sig8 = 0x20,
	DW_FORM_implicit_const = 0x21,
	DW_FORM_loclistx = 0x22,
	DW_FORM_rnglistx = 0x23,
	DW_FORM_ref_sup8 = 0x24,
	DW_FORM_strx1 = 0x25,
	DW_FORM_strx2 = 0x26,
	DW_FORM_strx3 = 0x27,
	DW_FORM_strx4 = 0x28,
	DW_FORM_addrx1 = 0x29,
	DW_FORM_addrx2 = 0x2a,
	DW_FORM_addrx3 = 0x2b,
	DW_FORM_addrx4 = 0x2c,
	DW_FORM_GNU_addr_index = 0x1f01,
	DW_FORM_GNU_str_index = 0x1f02,
	DW_FORM_GNU_ref_alt = 0x1f20,
	DW_FORM_GNU_strp_alt = 0x1f21,
};

/* Debugging-information entry tags (DWARF 5, table 7.3): the units, and
 * the entries that hold code or scope it. */
enum sfb_dw_tag {
	DW_TAG_class_type = 0x02,
	DW_TAG_entry_point = 0x03,
	DW_TAG_lexical_block = 0x0b,
	DW_TAG_compile_unit = 0x11,
	DW_TAG_structure_type = 0x13,
	DW_TAG_union_type = 0x17,
	DW_TAG_inlined_subroutine = 0x1d,
	DW_TAG_subprogram = 0x2e,
	DW_TAG_namespace = 0x39,
	DW_TAG_partial_unit = 0x3c,
	DW_TAG_imported_unit = 0x3d,
	DW_TAG_type_unit = 0x41,
	DW_TAG_skeleton_unit = 0x4a,
};

/* DW_CHILDREN_*: whether an abbreviation's entries own children. */
enum sfb_dw_children {
	DW_CHILDREN_no = 0x00,
	DW_CHILDREN_yes = 0x01,
};

/* Attributes (DWARF 5, table 7.5): those that name code, place it in the
 * address space and in the source, and find a unit's other sections. */
enum sfb_dw_at {
	DW_AT_sibling = 0x01,
	DW_AT_name = 0x03,
	DW_AT_stmt_list = 0x10,
	DW_AT_low_pc = 0x11,
	DW_AT_high_pc = 0x12,
	DW_AT_language = 0x13,
	DW_AT_comp_dir = 0x1b,
	DW_AT_inline = 0x20,
	DW_AT_producer = 0x25,
	DW_AT_abstract_origin = 0x31,
	DW_AT_decl_column = 0x39,
	DW_AT_decl_file = 0x3a,
	DW_AT_decl_line = 0x3b,
	DW_AT_declaration = 0x3c,
	DW_AT_external = 0x3f,
	DW_AT_specification = 0x47,
	DW_AT_entry_pc = 0x52,
	DW_AT_ranges = 0x55,
	DW_AT_call_column = 0x57,
	DW_AT_call_file = 0x58,
	DW_AT_call_line = 0x59,
	DW_AT_main_subprogram = 0x6a,
	DW_AT_linkage_name = 0x6e,
	DW_AT_str_offsets_base = 0x72,
	DW_AT_addr_base = 0x73,
	DW_AT_rnglists_base = 0x74,
	DW_AT_dwo_name = 0x76,
	DW_AT_loclists_base = 0x8c,
	DW_AT_MIPS_linkage_name = 0x2007,
	DW_AT_GNU_dwo_name = 0x2130,
	DW_AT_GNU_ranges_base = 0x2132,
	DW_AT_GNU_addr_base = 0x2133,
};

/* Line-number program: standard opcodes (DWARF 5, 6.2.5.2; table 7.25),
 * extended opcodes (6.2.5.3; table 7.26), and the content types of a
 * DWARF 5 line-table header's directory and file entries (6.2.4.1;
 * table 7.27). */
enum sfb_dw_lns {
	DW_LNS_copy = 0x01,
	DW_LNS_advance_pc = 0x02,
	DW_LNS_advance_line = 0x03,
	DW_LNS_set_file = 0x04,
	DW_LNS_set_column = 0x05,
	DW_LNS_negate_stmt = 0x06,
	DW_LNS_set_basic_block = 0x07,
	DW_LNS_const_add_pc = 0x08,
	DW_LNS_fixed_advance_pc = 0x09,
	DW_LNS_set_prologue_end = 0x0a,
	DW_LNS_set_epilogue_begin = 0x0b,
	DW_LNS_set_isa = 0x0c,
};

enum sfb_dw_lne {
	DW_LNE_end_sequence = 0x01,
	DW_LNE_set_address = 0x02,
	DW_LNE_define_file = 0x03,      /* DWARF 2-4 only */
	DW_LNE_set_discriminator = 0x04,
	DW_LNE_lo_user = 0x80,
	DW_LNE_hi_user = 0xff,
};

enum sfb_dw_lnct {
	DW_LNCT_path = 0x1,
	DW_LNCT_directory_index = 0x2,
	DW_LNCT_timestamp = 0x3,
	DW_LNCT_size = 0x4,
	DW_LNCT_MD5 = 0x5,
	DW_LNCT_lo_user = 0x2000,
	DW_LNCT_LLVM_source = 0x2001,
	DW_LNCT_hi_user = 0x3fff,
};

/* Unit header types (DWARF 5, 7.5.1; table 7.2). */
enum sfb_dw_ut {
	DW_UT_compile = 0x01,
	DW_UT_type = 0x02,
	DW_UT_partial = 0x03,
	DW_UT_skeleton = 0x04,
	DW_UT_split_compile = 0x05,
	DW_UT_split_type = 0x06,
	DW_UT_lo_user = 0x80,
	DW_UT_hi_user = 0xff,
};

/* ---- Readers ------------------------------------------------------------ */

#define SFB_DW_FN static __attribute__((unused))

/* Why a read failed.  Numbered apart from 0 and from each other so that a
 * decoder's own error codes can take these over (cfi.h's do). */
enum sfb_dw_err {
	SFB_DW_OK = 0,
	SFB_DW_E_TRUNCATED = 4,   /* the number runs past end */
	SFB_DW_E_LEB = 12,        /* a LEB128 number longer than 10 bytes or past 64 bits */
};

/* An initial length field (DWARF 5, 7.4) of this value says that a
 * 64-bit length follows. */
#define SFB_DW_LENGTH_64 0xffffffffu

/* A fixed-size field of width 1, 2, 4 or 8 bytes at *at, below end. */
SFB_DW_FN bool sfb_dw_get(const struct sfb_bytes *b, uint64_t *at, uint64_t end,
			  unsigned width, uint64_t *out)
{
	if (*at > end || end - *at < width || !sfb_get(b, *at, width, out))
		return false;
	*at += width;
	return true;
}

/* LEB128: seven bits a byte, least significant first, the top bit set on
 * every byte but the last; a signed number's sign is bit 6 of its last
 * byte.  64 bits take at most 10 bytes, the last of which then holds only
 * bit 63 (and, signed, its sign extension). */
enum {
	SFB_LEB_BITS = 0x7f,
	SFB_LEB_MORE = 0x80,
	SFB_LEB_SIGN = 0x40,
	SFB_LEB_MAX_BYTES = 10,
	SFB_LEB_LAST_U_MAX = 0x01,    /* an unsigned tenth byte: bit 63 alone */
	SFB_LEB_LAST_S_NEG = 0x7f,    /* a signed tenth byte: 0 or all ones */
};

SFB_DW_FN int sfb_dw_leb(const struct sfb_bytes *b, uint64_t *at, uint64_t end, bool sgn,
			 uint64_t *out)
{
	uint64_t v = 0, byte;
	for (unsigned i = 0, shift = 0; i < SFB_LEB_MAX_BYTES; i++, shift += 7) {
		if (!sfb_dw_get(b, at, end, 1, &byte))
			return SFB_DW_E_TRUNCATED;
		v |= (byte & SFB_LEB_BITS) << shift;
		if (byte & SFB_LEB_MORE)
			continue;
		if (i == SFB_LEB_MAX_BYTES - 1) {
			if (sgn ? byte != 0 && byte != SFB_LEB_LAST_S_NEG : byte > SFB_LEB_LAST_U_MAX)
				return SFB_DW_E_LEB;
		} else if (sgn && (byte & SFB_LEB_SIGN)) {
			v |= ~(uint64_t)0 << (shift + 7);
		}
		*out = v;
		return SFB_DW_OK;
	}
	return SFB_DW_E_LEB;
}

SFB_DW_FN int sfb_dw_uleb(const struct sfb_bytes *b, uint64_t *at, uint64_t end,
			  uint64_t *out)
{
	return sfb_dw_leb(b, at, end, false, out);
}

SFB_DW_FN int sfb_dw_sleb(const struct sfb_bytes *b, uint64_t *at, uint64_t end,
			  int64_t *out)
{
	uint64_t v;
	int err = sfb_dw_leb(b, at, end, true, &v);
	*out = (int64_t)v;
	return err;
}

/* Whether enc is a pointer encoding sfb_dw_ptr() reads: a 64-bit target's
 * formats, applied absolutely, pc-relative or data-relative.  textrel and
 * funcrel have no base an unwinder knows, aligned no use in .eh_frame. */
SFB_DW_FN bool sfb_dw_enc_ok(uint8_t enc)
{
	switch (enc & DW_EH_PE_FORMAT_MASK) {
	case DW_EH_PE_absptr: case DW_EH_PE_uleb128: case DW_EH_PE_udata2:
	case DW_EH_PE_udata4: case DW_EH_PE_udata8: case DW_EH_PE_sleb128:
	case DW_EH_PE_sdata2: case DW_EH_PE_sdata4: case DW_EH_PE_sdata8:
		break;
	default:
		return false;
	}
	uint8_t appl = enc & DW_EH_PE_APPL_MASK;
	return appl == DW_EH_PE_absptr || appl == DW_EH_PE_pcrel || appl == DW_EH_PE_datarel;
}

/* A pointer encoded with enc at *at, below end, in b, whose byte 0 is at
 * address sec_addr; data_base is the datarel base.  bad_enc: what to
 * return for an encoding sfb_dw_enc_ok() refuses (the caller's own error
 * code).  Indirection is the caller's business (only a personality
 * pointer may have it). */
SFB_DW_FN int sfb_dw_ptr(const struct sfb_bytes *b, uint64_t *at, uint64_t end,
			 uint8_t enc, uint64_t sec_addr, uint64_t data_base, uint64_t *out,
			 int bad_enc)
{
	static const uint8_t width[DW_EH_PE_FORMAT_MASK + 1] = {
		[DW_EH_PE_absptr] = 8, [DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4,
		[DW_EH_PE_udata8] = 8, [DW_EH_PE_sdata2] = 2, [DW_EH_PE_sdata4] = 4,
		[DW_EH_PE_sdata8] = 8,
	};
	uint64_t field = sec_addr + *at, v;
	int64_t sv;
	int err;
	if (!sfb_dw_enc_ok(enc))
		return bad_enc;
	switch (enc & DW_EH_PE_FORMAT_MASK) {
	case DW_EH_PE_uleb128:
		if ((err = sfb_dw_uleb(b, at, end, &v)))
			return err;
		break;
	case DW_EH_PE_sleb128:
		if ((err = sfb_dw_sleb(b, at, end, &sv)))
			return err;
		v = (uint64_t)sv;
		break;
	default: {
		unsigned w = width[enc & DW_EH_PE_FORMAT_MASK];
		if (!sfb_dw_get(b, at, end, w, &v))
			return SFB_DW_E_TRUNCATED;
		if (enc & DW_EH_PE_signed)
			v = (uint64_t)sfb_sext(v, w);
	}
	}
	switch (enc & DW_EH_PE_APPL_MASK) {
	case DW_EH_PE_pcrel: v += field; break;
	case DW_EH_PE_datarel: v += data_base; break;
	}
	*out = v;
	return SFB_DW_OK;
}

/* The operands of an instruction, as the standard's tables of operations
 * give them: none, one fixed-size number (unsigned or sign-extended), a
 * target address (8 bytes: 64-bit objects only), one LEB128 number, or two.
 * A decoder's table of operand shapes lists these; its own shapes (those
 * that need its context) number from SFB_DW_SHAPES. */
enum sfb_dw_shape {
	SFB_DW_NONE,
	SFB_DW_U8, SFB_DW_S8, SFB_DW_U16, SFB_DW_S16,
	SFB_DW_U32, SFB_DW_S32, SFB_DW_U64, SFB_DW_S64,
	SFB_DW_ADDR,
	SFB_DW_ULEB, SFB_DW_SLEB,
	SFB_DW_ULEB_ULEB, SFB_DW_ULEB_SLEB,
	SFB_DW_SHAPES
};

/* The operands of shape at *at, below end, in a[0] and a[1]; a signed one
 * as its two's complement. */
SFB_DW_FN int sfb_dw_operands(const struct sfb_bytes *b, uint64_t *at, uint64_t end,
			      unsigned shape, uint64_t *a)
{
	static const uint8_t width[SFB_DW_SHAPES] = {
		[SFB_DW_U8] = 1, [SFB_DW_S8] = 1, [SFB_DW_U16] = 2, [SFB_DW_S16] = 2,
		[SFB_DW_U32] = 4, [SFB_DW_S32] = 4, [SFB_DW_U64] = 8, [SFB_DW_S64] = 8,
		[SFB_DW_ADDR] = 8,
	};
	int err;
	switch (shape) {
	case SFB_DW_NONE:
		return SFB_DW_OK;
	case SFB_DW_ULEB:
		return sfb_dw_leb(b, at, end, false, &a[0]);
	case SFB_DW_SLEB:
		return sfb_dw_leb(b, at, end, true, &a[0]);
	case SFB_DW_ULEB_ULEB:
	case SFB_DW_ULEB_SLEB:
		if ((err = sfb_dw_leb(b, at, end, false, &a[0])))
			return err;
		return sfb_dw_leb(b, at, end, shape == SFB_DW_ULEB_SLEB, &a[1]);
	case SFB_DW_S8: case SFB_DW_S16: case SFB_DW_S32: case SFB_DW_S64:
		if (!sfb_dw_get(b, at, end, width[shape], &a[0]))
			return SFB_DW_E_TRUNCATED;
		a[0] = (uint64_t)sfb_sext(a[0], width[shape]);
		return SFB_DW_OK;
	default:
		if (shape >= SFB_DW_SHAPES || !sfb_dw_get(b, at, end, width[shape], &a[0]))
			return SFB_DW_E_TRUNCATED;
		return SFB_DW_OK;
	}
}

#endif
