/* Source positions of runtime PCs: the object holding a PC, the file
 * holding its DWARF (its own file, else its debug file, by build-id or
 * through .gnu_debuglink), and
 * the lines reader (symbols/lines.h) on it.  For sframe_symbolize()
 * (one PC, in the caller's scratch) and for the crash report (many PCs,
 * through a cache of open files: struct sfb_srcpos_cache).
 * Async-signal-safe: open/pread/close, no allocation, no lock. */
#ifndef SFB_SRCPOS_H
#define SFB_SRCPOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backtrace.h"
#include "symbols/lines.h"

#define SFB_SRCPOS_HIDDEN __attribute__((visibility("hidden")))

/* out's file, line, column and inlined[] from the lines reader's frames R
 * (innermost first; the last is the subprogram): R's strings are used in
 * place, so R must outlive OUT; inlined functions' names are demangled
 * into NAMES (CAP bytes), or left as R spells them when that is full. */
SFB_SRCPOS_HIDDEN void sfb_srcpos_fill(struct sframe_symbol *out, const struct sfb_line_result *r,
				       char *names, size_t cap);

/* sframe_symbolize()'s part: PC's source position into OUT, all of it
 * in AREA (SIZE bytes, at least SFB_SRCPOS_AREA): the result, the
 * reader's scratch (all that is left), the names.  The reader is fastest
 * from SFB_SRCPOS_FAST bytes on (two inflaters, each with its copy:
 * lines.c's layout()), which SFRAME_SYMBOLIZE_LINES_SCRATCH gives it. */
#define SFB_SRCPOS_NAMES (12 * 1024) /* SFRAME_MAX_INLINED demangled names of 1.5 KiB */
#define SFB_SRCPOS_AREA (32 + sizeof(struct sfb_line_result) + SFB_LINES_SCRATCH + SFB_SRCPOS_NAMES)
#define SFB_SRCPOS_FAST (SFB_LINES_SCRATCH + 3 * SFB_DSEC_ZSTATE)
SFB_SRCPOS_HIDDEN void sfb_srcpos_symbolize(uintptr_t pc, struct sframe_symbol *out, char *area,
					    size_t size);

/* Open files for many lookups.  Each slot holds one object's DWARF file
 * open, the lines reader's state on it (its windows and inflater stay
 * between lookups: a compressed debug file is decompressed once up to
 * the furthest unit read, not once a frame), or the mark that the object
 * has none.  The least recently used slot is reused. */
#define SFB_SRCPOS_SLOTS 3
#define SFB_SRCPOS_SLOT_SCRATCH SFB_SRCPOS_FAST
struct sfb_srcpos_slot {
	uintptr_t start, end, bias; /* the object (start == end: slot free) */
	int fd;                     /* -1: the object has no DWARF */
	uint32_t used;              /* when last used, for reuse */
	struct sfb_elf_sections secs;
	uint64_t scratch[SFB_SRCPOS_SLOT_SCRATCH / sizeof(uint64_t)];
};
struct sfb_srcpos_cache {
	struct sfb_srcpos_slot slot[SFB_SRCPOS_SLOTS];
	uint32_t tick;
	struct sfb_line_result res;
};

SFB_SRCPOS_HIDDEN void sfb_srcpos_cache_init(struct sfb_srcpos_cache *c);
/* The frames at PC (not adjusted: pass pc - 1 for a return address) in
 * c->res: 0, or an error (symbols/lines.h), -1 if PC's object has no
 * DWARF or is not found. */
SFB_SRCPOS_HIDDEN int sfb_srcpos_cache_lookup(struct sfb_srcpos_cache *c, uintptr_t pc);
/* Close the files. */
SFB_SRCPOS_HIDDEN void sfb_srcpos_cache_close(struct sfb_srcpos_cache *c);

#endif
