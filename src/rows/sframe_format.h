/* On-disk constants of the SFrame format, versions 1 to 3.
 *
 * Written from the specifications (sframe-v1-spec.txt, sframe-v2-spec.texi
 * with errata 1 and 2, sframe-v3-spec.info).  Names carry an SFB_ prefix so
 * that nothing here can clash with binutils' <sframe.h> in a program that
 * links both. */
#ifndef SFB_SFRAME_FORMAT_H
#define SFB_SFRAME_FORMAT_H

#define SFB_MAGIC 0xdee2u
#define SFB_MAGIC_SWAPPED 0xe2deu

#define SFB_VERSION_1 1
#define SFB_VERSION_2 2
#define SFB_VERSION_3 3

/* Section-wide flags (sfp_flags). */
#define SFB_F_FDE_SORTED 0x1
#define SFB_F_FRAME_POINTER 0x2 /* V1, V2 only; retired in V3 */
#define SFB_F_FDE_FUNC_START_PCREL 0x4 /* V2 erratum 1, and V3 */

/* sfh_abi_arch */
#define SFB_ABI_AARCH64_BE 1
#define SFB_ABI_AARCH64_LE 2
#define SFB_ABI_AMD64_LE 3
#define SFB_ABI_S390X_BE 4

/* Header: preamble (4) + abi, fixed fp, fixed ra, auxhdr_len (4)
 * + num_fdes, num_fres, fre_len, fdeoff, freoff (5 * 4). */
#define SFB_HEADER_SIZE 28

/* FDE sizes on disk. */
#define SFB_V1_FDE_SIZE 17 /* start i32, size u32, fre_off u32, nfres u32, info u8 */
#define SFB_V2_FDE_SIZE 20 /* V1 + rep_size u8 + padding u16 */
#define SFB_V3_FDE_SIZE 16 /* start i64, size u32, fre_off u32 */
#define SFB_V3_ATTR_SIZE 5 /* nfres u16, info u8, info2 u8, rep_size u8 */

/* FDE info byte (all versions; signal bit only in V3). */
#define SFB_FDE_INFO_FRE_TYPE(i) ((i) & 0xf)
#define SFB_FDE_INFO_PCMASK(i) (((i) >> 4) & 1)
#define SFB_FDE_INFO_PAUTH_B(i) (((i) >> 5) & 1)
#define SFB_FDE_INFO_V3_SIGNAL(i) (((i) >> 7) & 1)
/* Bits that must be zero: V1/V2 use bits 0-5; V3 also bit 7. */
#define SFB_FDE_INFO_V12_RESERVED 0xc0
#define SFB_FDE_INFO_V3_RESERVED 0x40
/* V3 info2: FDE type in bits 0-4, bits 5-7 reserved. */
#define SFB_FDE_INFO2_TYPE(i) ((i) & 0x1f)
#define SFB_FDE_INFO2_RESERVED 0xe0

#define SFB_FRE_TYPE_ADDR1 0
#define SFB_FRE_TYPE_ADDR2 1
#define SFB_FRE_TYPE_ADDR4 2

#define SFB_FDE_TYPE_DEFAULT 0
#define SFB_FDE_TYPE_FLEX 1

/* FRE info byte. */
#define SFB_FRE_INFO_CFA_SP(i) ((i) & 1) /* 1: CFA base is SP, 0: FP */
#define SFB_FRE_INFO_COUNT(i) (((i) >> 1) & 0xf)
#define SFB_FRE_INFO_SIZE(i) (((i) >> 5) & 0x3) /* 0:1B 1:2B 2:4B 3:invalid */
#define SFB_FRE_INFO_MANGLED_RA(i) (((i) >> 7) & 1)

/* V3 flexible FDE control word. */
#define SFB_FLEX_REG_P(w) ((w) & 1)
#define SFB_FLEX_DEREF_P(w) (((w) >> 1) & 1)
#define SFB_FLEX_RESERVED(w) (((w) >> 2) & 1)
#define SFB_FLEX_REGNUM(w) ((w) >> 3)

/* s390x: CFA offsets are stored as (offset - 160) / 8; SP = CFA - 160. */
#define SFB_S390X_SP_VAL_OFFSET (-160)
#define SFB_S390X_CFA_OFFSET_DECODE(o) ((o) * 8 + 160)
/* s390x V2: an odd FP/RA offset encodes a DWARF register number. */
#define SFB_S390X_V2_IS_REGNUM(o) ((o) & 1)
#define SFB_S390X_V2_REGNUM(o) ((o) >> 1)
/* s390x: RA offset 0 is padding ("FP saved, RA not saved"). */
#define SFB_RA_OFFSET_INVALID 0

/* AMD64 PLT entries described by V1 PCMASK FDEs, which have no rep size. */
#define SFB_AMD64_V1_PLT_SIZE 16

#endif
