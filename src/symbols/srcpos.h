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
#include "symbols/symtab.h"

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
 * has none.  The least recently used slot is reused.  The reader's state
 * lies in the scratch its owner gives each slot: at least
 * SFB_SRCPOS_FAST bytes (the crash report's); more gives it more
 * inflaters and larger windows (a symbolizer's: symbolize.c). */
#define SFB_SRCPOS_SLOTS 3
/* A symbolizer's scratch a slot (symbolize.c): a stream with its copy for
 * each compressed section a lookup reads (SFB_DSEC_MAX_STREAMS), none
 * restarted while the lookups go forward (docs/SPEED.md, "A
 * symbolizer"). */
#define SFB_SRCPOS_ROOMY (768 * 1024)
struct sfb_srcpos_slot {
	uintptr_t start, end, bias; /* the object (start == end: slot free) */
	/* Its ELF header as loaded (have_ehdr) and its GNU build-id
	 * (build_id_len bytes, 0: none), which a library loaded in the place
	 * of one unloaded has its own of: the slot is then the old one's and
	 * is opened again. */
	unsigned char ehdr[sizeof(Elf64_Ehdr)];
	bool have_ehdr;
	uint32_t build_id_len;
	uint8_t build_id[SFB_MAX_BUILD_ID];
	int fd;                     /* -1: the object has no DWARF */
	uint32_t used;              /* when last used, for reuse */
	struct sfb_elf_sections secs;
	uint64_t *scratch; /* scratch_size bytes */
	size_t scratch_size;
};
struct sfb_srcpos_cache {
	struct sfb_srcpos_slot slot[SFB_SRCPOS_SLOTS];
	uint32_t tick;
	struct sfb_line_result res;
};

/* Start c, its slots' scratch in mem: SFB_SRCPOS_SLOTS times per_slot
 * bytes (a multiple of 8, at least SFB_SRCPOS_FAST), 8-byte aligned. */
SFB_SRCPOS_HIDDEN void sfb_srcpos_cache_init(struct sfb_srcpos_cache *c, uint64_t *mem,
					     size_t per_slot);
/* The frames at PC (not adjusted: pass pc - 1 for a return address) in
 * c->res: 0, or an error (symbols/lines.h), -1 if PC's object has no
 * DWARF or is not found.  A slot serves the object loaded at its place
 * with the same ELF header and build-id as when the slot was opened. */
SFB_SRCPOS_HIDDEN int sfb_srcpos_cache_lookup(struct sfb_srcpos_cache *c, uintptr_t pc);
/* Close the files. */
SFB_SRCPOS_HIDDEN void sfb_srcpos_cache_close(struct sfb_srcpos_cache *c);

#endif
