/* Reports: frames walked, then symbolized and written (backtrace.h,
 * sframe_format_frame() and sframe_write_crash_report()).  The report
 * layer is the one that calls both the walker and the symbolizer; the
 * symbolizer never calls back up. */
#ifndef SFB_REPORT_H
#define SFB_REPORT_H

#include <stddef.h>
#include <stdint.h>

#define SFB_HIDDEN_R __attribute__((visibility("hidden")))

/* One frame line, "#N 0xPC in NAME+0xOFF (OBJECT+0xOFF)", into line (cap
 * bytes, NUL-terminated when cap > 0); returns its length.  scratch is
 * SFRAME_SYMBOLIZE_SCRATCH bytes; line may be its work area
 * (symbols/symbolize.h: the lookup is over before the line is built). */
SFB_HIDDEN_R size_t sfb_format_frame(int index, uintptr_t pc, int return_address,
				     char *line, size_t cap, char *scratch);

/* The same line and a newline, written to fd in one write (lines stay
 * whole when several threads report), built in scratch's work area. */
SFB_HIDDEN_R void sfb_write_frame(int fd, int index, uintptr_t pc, int return_address,
				  char *scratch);

/* Source lines under a frame line: "    inlined: NAME at FILE:LINE" for
 * each function inlined at the frame's PC (the call's, pc - 1, for a
 * return address), innermost first, then "    at FILE:LINE" for the
 * function the frame line names; nothing when the object has no DWARF
 * (its own or its debug file's, by build-id) for that PC.  A report takes
 * the one static buffer the lookups use with sfb_lines_begin() (NULL
 * when another report holds it: then no lines) and gives it back, its
 * files closed, with sfb_lines_end(). */
struct sfb_srcpos_cache;
SFB_HIDDEN_R struct sfb_srcpos_cache *sfb_lines_begin(void);
SFB_HIDDEN_R void sfb_lines_end(struct sfb_srcpos_cache *c);
SFB_HIDDEN_R void sfb_write_lines(int fd, struct sfb_srcpos_cache *c, uintptr_t pc,
				  int return_address);

#endif
