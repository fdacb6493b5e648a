/* An index over a bare .eh_frame: the search table .eh_frame_hdr would
 * have held, built by us where the linker wrote none (gcc -static asks
 * for no .eh_frame_hdr; code registered at run time through
 * __register_frame() comes with its .eh_frame alone).
 *
 * Building reads the section once, FDE by FDE, through the checked
 * accessor, and sorts the entries in place (heapsort: no allocation, no
 * recursion); it runs in normal context, but takes no lock and makes no
 * system call.  The table lives in storage the caller gives, of the
 * capacity the caller chooses: an FDE that does not fit is left out and
 * counted, never silently.  Looking a PC up is a binary search, then
 * cfi.h's interpreter on the FDE found: O(log n), async-signal-safe.
 *
 * Entries have .eh_frame_hdr's layout (datarel sdata4: an FDE's initial
 * location and its address, each relative to the section's address), so
 * that the index is a struct sfb_cfi_section whose search table is ours
 * and cfi.h's lookup serves it unchanged.  Hence the bounds: an FDE whose
 * function lies more than 2 GiB from the section is left out, and so is
 * one whose initial location is data-relative (datarel has no base in a
 * bare .eh_frame; no compiler emits it for a 64-bit target). */
#ifndef SFB_EH_INDEX_H
#define SFB_EH_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "rows/cfi.h"
#include "rows/row.h"

struct sfb_eh_index_entry {
	int32_t pc;  /* initial location - section address */
	int32_t fde; /* FDE address - section address */
};

struct sfb_eh_index {
	struct sfb_cfi_section cfi; /* .eh_frame, searched through the table */
	uint32_t fdes;              /* FDEs met in the section */
	uint32_t left_out;          /* FDEs not in the table (full, out of reach,
				       their CIE unreadable), plus one if the
				       section's entries ran past its end */
};

/* Why a PC found no FDE in an index that leaves some out: it may lie in
 * one of them.  Numbered apart from enum sfb_cfi_err. */
#define SFB_EH_INDEX_E_LEFT_OUT 64

/* Index the .eh_frame of len bytes at frame, loaded at addr, into
 * table[0..cap): the entries of its FDEs sorted by initial location.
 * FDEs of zero length are not entries.  Returns SFB_CFI_OK (ix usable,
 * possibly with FDEs left out), or SFB_CFI_E_NO_TABLE if no FDE could be
 * indexed.  The section must stay mapped, and table unchanged, while ix
 * is used. */
int sfb_eh_index_build(struct sfb_eh_index *ix, const void *frame, size_t len, uint64_t addr,
		       struct sfb_eh_index_entry *table, uint32_t cap);

/* The row for pc (cfi.h, sfb_cfi_lookup()), or: SFB_CFI_E_NOT_FOUND if no
 * FDE covers it and none was left out, SFB_EH_INDEX_E_LEFT_OUT if none in
 * the table covers it but some were left out, another enum sfb_cfi_err if
 * its FDE is refused.  Async-signal-safe. */
int sfb_eh_index_lookup(const struct sfb_eh_index *ix, uint64_t pc, unsigned fp_reg,
			struct sfb_row *row);

#endif
