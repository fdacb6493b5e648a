/* The main program's .eh_frame where the linker wrote no search table
 * for it: gcc -static does not ask for .eh_frame_hdr, so libc's code in a
 * static program (glibc or musl) has CFI that nothing could find.  Its
 * .eh_frame is located once through the section headers of the program's
 * file (/proc/self/exe, checked to be the program mapped: the same
 * program headers) and indexed into a fixed table (rows/eh_index.h), in
 * normal context only: by the library's constructor, by
 * sframe_backtrace_warmup() and so by sframe_install_crash_handler().
 * Walks only read what was published.  See docs/DESIGN.md, Row sources. */
#ifndef SFB_MAIN_EH_H
#define SFB_MAIN_EH_H

#include "rows/eh_index.h"

/* FDEs the table holds: 8 bytes each, 128 KiB of .bss, touched only by
 * programs whose main program has no search table.  A static C program
 * has about 1000 FDEs (glibc's), a static C++ one about 4700 with
 * libstdc++: room for three times that.  FDEs past it are left out, and
 * a PC that may lie in one stops the walk with eh-frame-unindexed. */
#define SFB_MAIN_EH_FDES 16384

enum sfb_main_eh_state {
	SFB_MAIN_EH_PENDING,  /* not looked at yet, or being indexed */
	SFB_MAIN_EH_NONE,     /* nothing to index: a search table, or no .eh_frame */
	SFB_MAIN_EH_READY,    /* sfb_main_eh_index() is usable */
	SFB_MAIN_EH_FAILED,   /* an .eh_frame that could not be located or indexed */
};

/* Index the main program's .eh_frame if it needs it, once.  Normal
 * context only (reads the program's file). */
void sfb_main_eh_prepare(void);

/* Where indexing stands (acquire: READY publishes the index). */
enum sfb_main_eh_state sfb_main_eh_state(void);

/* The published index; only after sfb_main_eh_state() said READY. */
const struct sfb_eh_index *sfb_main_eh_index(void);

#endif
