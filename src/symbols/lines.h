/* Source lines and inlined frames of a PC, from an ELF file's DWARF 4 and
 * 5 debugging information, inside a signal handler: pread from an open
 * file into the caller's scratch, no allocation, no lock, no stdio.
 *
 * For a PC (an address of the file: the runtime PC minus the object's
 * load bias) sfb_lines_lookup() gives the logical frames there, innermost
 * first, as `addr2line -i -f` prints them:
 *
 *   frame[0]      the function the PC's code belongs to (an inlined
 *                 function's name when the PC is in inlined code), and
 *                 the file, line and column of the line table's row for
 *                 the PC;
 *   frame[i + 1]  the function frame[i] was inlined into, at frame[i]'s
 *                 call site (DW_AT_call_file, DW_AT_call_line,
 *                 DW_AT_call_column);
 *   frame[n - 1]  the subprogram holding the PC.
 *
 * A function's name is its linkage name when it has one (a C++ or Rust
 * symbol, for the demangler), else its DW_AT_name, found through
 * DW_AT_abstract_origin and DW_AT_specification.  A file is the line
 * table's path joined to its directory and, when that is relative, to the
 * unit's DW_AT_comp_dir.
 *
 * How (the numbered steps of sfb_lines_lookup()):
 *  1. the unit: .debug_aranges's set holding the PC, or else a scan of the
 *     units' headers and first entries (their DW_AT_low_pc/high_pc or
 *     DW_AT_ranges), at most SFB_LINES_MAX_UNITS (sfb_lines_find(): the
 *     last lookup's unit first, when its own ranges hold the PC);
 *  2. the entries: one pass over the unit's DIEs, descending only into
 *     those whose ranges hold the PC, which gives the subprogram and its
 *     chain of DW_TAG_inlined_subroutine entries;
 *  3. the names: each frame's DIE, then its origin or specification, at
 *     most SFB_LINES_MAX_HOPS away, read in increasing offset order;
 *  4. the row: the unit's line program run until a row's range holds the
 *     PC, at most SFB_LINES_MAX_PROGRAM bytes;
 *  5. the files: the line table's header read once more for the row's
 *     file and the call sites' files, then the strings.
 *
 * Sections are read through windows of the scratch (debug_section.h), so
 * compressed sections (SHF_COMPRESSED, zlib) cost one 32 KiB inflate
 * window and their decompression from the start up to what is read; the
 * steps read each section forward so that a stream restarts seldom.
 *
 * Budgets: each bound below ends the lookup with its own error when
 * reached (SFB_LINES_MAX_HOPS: the names found so far are kept);
 * tests/symbols/t_lines_budgets.sh runs each at its bound, and
 * t_lines.sh SFB_LINES_MAX_FRAMES. */
#ifndef SFB_LINES_H
#define SFB_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbols/debug_section.h"

#define SFB_LINES_MAX_FRAMES 16       /* logical frames kept: the innermost */
#define SFB_LINES_NAME_CAP 384        /* a function name's bytes, NUL included */
#define SFB_LINES_FILE_CAP 256        /* a file path's bytes, NUL included */

/* The bounds can be set at build time (-D), which
 * tests/symbols/t_lines_budgets.sh does to run each at its bound. */
#ifndef SFB_LINES_MAX_UNITS
#define SFB_LINES_MAX_UNITS 65536u       /* unit headers scanned without .debug_aranges */
#endif
#ifndef SFB_LINES_MAX_ARANGES
#define SFB_LINES_MAX_ARANGES (1u << 22) /* address ranges read from .debug_aranges */
#endif
#ifndef SFB_LINES_MAX_DIES
#define SFB_LINES_MAX_DIES (1u << 22)    /* DIEs read in one lookup */
#endif
#ifndef SFB_LINES_MAX_DEPTH
#define SFB_LINES_MAX_DEPTH 256u         /* nesting of DIEs outside the PC's */
#endif
#ifndef SFB_LINES_MAX_ABBREVS
#define SFB_LINES_MAX_ABBREVS 65536u     /* abbreviations read in one lookup */
#endif
#ifndef SFB_LINES_MAX_ATTRS
#define SFB_LINES_MAX_ATTRS 256u         /* attributes of one abbreviation */
#endif
#ifndef SFB_LINES_MAX_RANGES
#define SFB_LINES_MAX_RANGES 65536u      /* entries of one range list */
#endif
#ifndef SFB_LINES_MAX_HOPS
#define SFB_LINES_MAX_HOPS 4u            /* rounds of origin/specification links followed:
					    past them a frame keeps the name found so far */
#endif
#ifndef SFB_LINES_MAX_PROGRAM
#define SFB_LINES_MAX_PROGRAM (64u << 20)/* line-program bytes run in one lookup */
#endif
#ifndef SFB_LINES_MAX_FILES
#define SFB_LINES_MAX_FILES 65536u       /* directory and file entries of one line table */
#endif

/* Scratch: the inflate state and window, and the section windows.  More
 * scratch gives a compressed file's sections a copy of the inflater,
 * then more inflaters, each with its copy (up to SFB_DSEC_MAX_STREAMS:
 * two further SFB_DSEC_ZSTATE bytes each, and past
 * SFB_DSEC_HELD_STREAMS the streams' records). */
#define SFB_LINES_SCRATCH (48u * 1024)

/* Errors: those of debug_section.h, and these; sfb_lines_err_name()
 * names both. */
enum sfb_lines_err {
	SFB_LINES_OK = 0,
	SFB_LINES_E_NOT_FOUND = -20,      /* no unit, entry or row holds the PC */
	SFB_LINES_E_VERSION = -21,        /* a unit or line table of a DWARF version not read */
	SFB_LINES_E_FORMAT = -22,         /* a malformed header, entry or program */
	SFB_LINES_E_FORM = -23,           /* an attribute form not read */
	SFB_LINES_E_ABBREV = -24,         /* a DIE's abbreviation code not in its table */
	SFB_LINES_E_REF = -25,            /* a reference outside .debug_info or its unit */
	SFB_LINES_E_BUDGET_UNITS = -26,   /* SFB_LINES_MAX_UNITS reached */
	SFB_LINES_E_BUDGET_ARANGES = -27, /* SFB_LINES_MAX_ARANGES reached */
	SFB_LINES_E_BUDGET_DIES = -28,    /* SFB_LINES_MAX_DIES reached */
	SFB_LINES_E_BUDGET_DEPTH = -29,   /* SFB_LINES_MAX_DEPTH reached */
	SFB_LINES_E_BUDGET_ABBREVS = -30, /* SFB_LINES_MAX_ABBREVS or _MAX_ATTRS reached */
	SFB_LINES_E_BUDGET_RANGES = -31,  /* SFB_LINES_MAX_RANGES reached */
	SFB_LINES_E_BUDGET_PROGRAM = -32, /* SFB_LINES_MAX_PROGRAM reached */
	SFB_LINES_E_BUDGET_FILES = -33,   /* SFB_LINES_MAX_FILES reached */
	SFB_LINES_E_LAST_ = -33
};

struct sfb_line_frame {
	char function[SFB_LINES_NAME_CAP]; /* "" when unknown */
	char file[SFB_LINES_FILE_CAP];     /* "" when unknown */
	uint32_t line;                     /* 0 when unknown */
	uint32_t column;                   /* 0 when unknown */
};

struct sfb_line_result {
	int n;                 /* frames filled */
	bool truncated;        /* more inline levels than SFB_LINES_MAX_FRAMES: the outermost dropped */
	int inline_err;        /* why the inline chain is missing (0: it is not) */
	struct sfb_line_frame frame[SFB_LINES_MAX_FRAMES];
	/* What the lookup cost, in the units of the bounds above: units,
	 * aranges (tuples), dies, abbrevs, program_bytes; depth, attrs,
	 * ranges, hops and files are the most that one nesting,
	 * abbreviation, range list, name or line table needed. */
	uint32_t units, dies, abbrevs;
	uint64_t program_bytes, inflated;
	uint32_t restarts, loads;
	uint32_t aranges, depth, attrs, ranges, hops, files;
};

/* The frames at VADDR in the file open on FD, whose debug sections are
 * SECS (sfb_dsec_find()).  SCRATCH: at least SFB_LINES_SCRATCH bytes,
 * aligned for a uint64_t.  Strings are copied into OUT.
 *
 * Returns 0 with out->n >= 1 when the line table has a row for VADDR (the
 * inline chain is there too unless out->inline_err says why not), or an
 * error: SFB_LINES_E_NOT_FOUND when the file says nothing about VADDR,
 * others when it is corrupt or a budget ran out.  Reads nothing outside
 * SECS and writes nothing outside OUT and SCRATCH. */
int sfb_lines_lookup(int fd, const struct sfb_elf_sections *secs, uint64_t vaddr,
		     struct sfb_line_result *out, void *scratch, size_t size);

/* The same, as two steps, for several addresses of one file: open sets
 * the lookup's state up in SCRATCH (as above) for the file open on FD;
 * find looks VADDR up through it.  The state keeps its section windows
 * and the inflater's position between finds, so that addresses whose
 * units lie in increasing order read each compressed section once.
 * SCRATCH must not be touched between them, nor FD closed. */
int sfb_lines_open(int fd, const struct sfb_elf_sections *secs, void *scratch, size_t size);
int sfb_lines_find(void *scratch, uint64_t vaddr, struct sfb_line_result *out);

/* "ok", "not-found", ..., and debug_section.h's names. */
const char *sfb_lines_err_name(int err);

#endif
