/* SFrame decoder: validate a .sframe section once, then answer lookups.
 *
 * The decoder makes no OS calls.  It is given a byte range and the address
 * at which byte 0 of that range is (or would be) loaded; every read of those
 * bytes goes through the checked accessor in bytes.h.  sfb_section_load()
 * validates everything a lookup will later rely on, so lookups never fail on
 * a loaded section except by "no FDE covers this PC". */
#ifndef SFB_SFRAME_DECODE_H
#define SFB_SFRAME_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include "base/bytes.h"
#include "rows/row.h"

/* Why a section was rejected.  Stable numbers: printed by tools, listed in
 * docs/DESIGN.md, Validation and reason codes. */
enum sfb_err {
	SFB_OK = 0,
	SFB_E_TRUNCATED = 1,    /* shorter than the header, or a sub-section runs past the end */
	SFB_E_MAGIC = 2,        /* not 0xdee2 in either byte order */
	SFB_E_VERSION = 3,      /* version other than 1, 2, 3 */
	SFB_E_FLAGS = 4,        /* undefined flag bit set for this version */
	SFB_E_ABI = 5,          /* unknown ABI, or ABI of the wrong byte order */
	SFB_E_HEADER = 6,       /* fixed offsets or sub-section layout inconsistent */
	SFB_E_FDE_RANGE = 7,    /* function start below address 0, or start + size wraps */
	SFB_E_FDE_INFO = 8,     /* reserved FDE info bits, bad FRE type, bad FDE type, bad rep size */
	SFB_E_FRE_RANGE = 9,    /* an FDE's FREs (or V3 attribute) lie outside the FRE sub-section */
	SFB_E_FRE_ORDER = 10,   /* FRE start offsets not strictly increasing, or past the function end */
	SFB_E_FRE_INFO = 11,    /* bad data-word size or count for the ABI and FDE type */
	SFB_E_FLEX = 12,        /* malformed flexible FDE control word */
	SFB_E_UNSORTED = 13,    /* FDEs not sorted and no room was given to sort them */
	SFB_E_OVERLAP = 14,     /* two FDEs cover the same PC */
	SFB_E_COUNT = 15,       /* header FDE/FRE counts do not match the sub-sections */
	SFB_E_TOO_BIG = 16,     /* more FDEs or bytes than this implementation indexes */
	SFB_E_NOT_FOUND = 17,   /* lookup only: no FDE covers the PC */
};
const char *sfb_err_name(int err);

/* A validated section.  Fixed size, no pointers into memory the decoder
 * allocated: the caller owns the bytes and the optional order array. */
struct sfb_section {
	struct sfb_bytes b;      /* the whole section */
	uint64_t sec_addr;       /* address of byte 0 of the section */
	uint8_t version, abi, flags;
	int8_t fixed_fp, fixed_ra;
	uint8_t fde_size;        /* 17, 20 or 16 */
	uint32_t num_fdes;
	uint32_t num_fres;
	uint32_t fde_off;        /* absolute offset of the FDE sub-section */
	uint32_t fre_off;        /* absolute offset of the FRE sub-section */
	uint32_t fre_len;
	/* When FDEs are not stored in address order, order[i] is the number of
	 * the i-th FDE by address.  NULL when they are. */
	const uint32_t *order;
	uint64_t pc_lo, pc_hi;   /* [lo, hi) spanned by all FDEs (0,0 if none) */
	/* Optional coarse index (sfb_coarse_build()): coarse[k] is the rank of
	 * the last FDE starting at or before pc_lo + (k << coarse_shift).  It
	 * only narrows the FDE search, and both ends it gives are checked
	 * against the table: an index that is stale, or rewritten while read,
	 * costs the full search, never a wrong FDE.  NULL: none. */
	const uint32_t *coarse;
	uint32_t coarse_n;
	uint8_t coarse_shift;
};

/* One function descriptor, version-independent. */
struct sfb_fde {
	uint64_t start;          /* absolute start PC */
	uint32_t size;
	uint32_t fres_at;        /* absolute offset of the first FRE (after the V3 attribute) */
	uint32_t num_fres;
	uint8_t fre_type;        /* SFB_FRE_TYPE_ADDR1/2/4 */
	uint8_t pcmask;          /* 1: PCMASK (repeating block, e.g. PLT) */
	uint8_t fde_type;        /* SFB_FDE_TYPE_DEFAULT / FLEX (always DEFAULT before V3) */
	uint8_t rep_size;        /* block size for PCMASK (16 for V1 AMD64) */
	uint8_t pauth_b;         /* AArch64: RA signed with key B */
	uint8_t signal;          /* V3: signal frame */
};

/* Validate a section of len bytes at p whose byte 0 is at sec_addr.
 * If the FDEs are not in address order, they are sorted into order_scratch
 * when it has room for num_fdes entries, and rejected with SFB_E_UNSORTED
 * otherwise.  Returns SFB_OK or an enum sfb_err. */
int sfb_section_load(struct sfb_section *s, const void *p, size_t len,
		     uint64_t sec_addr, uint32_t *order_scratch,
		     size_t scratch_entries);

/* Sections with fewer FDEs are searched without a coarse index: their
 * binary search is already this short. */
#define SFB_COARSE_MIN_FDES 64

/* Build a coarse index of s over index[0..nbuckets) and attach it to s
 * (the caller owns index, which must outlive every copy of s).  Buckets are
 * equal power-of-two slices of [pc_lo, pc_hi).  Entries are written with
 * relaxed atomic stores, so that a reader racing with a rebuild reads
 * whole values.  Returns the number of buckets used; 0 (and no index) when
 * the section has fewer than SFB_COARSE_MIN_FDES FDEs. */
unsigned sfb_coarse_build(struct sfb_section *s, uint32_t *index, unsigned nbuckets);

/* Read FDE number i (in section order, 0 <= i < num_fdes).  On a loaded
 * section this cannot fail; it returns SFB_OK or SFB_E_TRUNCATED. */
int sfb_fde_get(const struct sfb_section *s, uint32_t i, struct sfb_fde *fde);

/* Decode FRE number j of fde into row.  Used by dump tools. */
int sfb_fre_row(const struct sfb_section *s, const struct sfb_fde *fde,
		uint32_t j, struct sfb_row *row);

/* The FDE covering pc, by binary search.  SFB_E_NOT_FOUND if none. */
int sfb_find_fde(const struct sfb_section *s, uint64_t pc,
		 struct sfb_fde *fde);

/* The row for pc: FDE search, then FRE search (PCINC or PCMASK). */
int sfb_lookup(const struct sfb_section *s, uint64_t pc, struct sfb_row *row);

/* DWARF numbers of the stack pointer, frame pointer and return-address
 * register (-1 when the ABI keeps the RA on the stack) for an SFrame ABI. */
int sfb_abi_sp_reg(uint8_t abi);
int sfb_abi_fp_reg(uint8_t abi);
int sfb_abi_ra_reg(uint8_t abi);

#endif
