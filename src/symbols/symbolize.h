/* The symbolizer's entry for the layers above it (src/report/): one PC to
 * object and name, into the caller's scratch (backtrace.h,
 * sframe_symbolize(), states the sources and their order).
 *
 * Scratch layout, SFRAME_SYMBOLIZE_SCRATCH bytes:
 *   [path | mangled | name | work]
 * path: the object's file; mangled: the symbol as its table spells it;
 * name: the demangled name (a demangled name is longer than its mangled
 * form, hence twice the room); work: file reads, and, once the lookup is
 * over, the caller's formatted line (SFB_SYM_LINE_CAP bytes fit). */
#ifndef SFB_SYMBOLIZE_H
#define SFB_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "backtrace.h"

#define SFB_SYM_PATH_CAP 1024
#define SFB_SYM_MANGLED_CAP 1024
#define SFB_SYM_NAME_CAP 2048
#define SFB_SYM_MANGLED_OFF SFB_SYM_PATH_CAP
#define SFB_SYM_NAME_OFF (SFB_SYM_MANGLED_OFF + SFB_SYM_MANGLED_CAP)
#define SFB_SYM_WORK_OFF (SFB_SYM_NAME_OFF + SFB_SYM_NAME_CAP)
#define SFB_SYM_LINE_CAP (SFB_SYM_PATH_CAP + SFB_SYM_NAME_CAP + 128)
_Static_assert(SFB_SYM_WORK_OFF + SFB_SYM_LINE_CAP <= SFRAME_SYMBOLIZE_SCRATCH, "scratch");
/* SFRAME_SYMBOLIZE_LINES_SCRATCH: the above, then symbols/srcpos.h's area
 * (the lines reader's result, its scratch, the inlined names). */

/* Strings "", numbers 0. */
__attribute__((visibility("hidden"))) void sfb_symbol_clear(struct sframe_symbol *out);

/* The name of pc, or, for a return address (return_address != 0), of the
 * call before it (pc - 1, else pc); offsets are pc's either way.  *out is
 * filled (strings "" when unknown); returns 1 if a name was found. */
__attribute__((visibility("hidden"))) int sfb_symbolize(uintptr_t pc, int return_address,
							struct sframe_symbol *out,
							char *scratch, size_t size);

#endif
