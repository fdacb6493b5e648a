/* Code registered at run time (backtrace.h, "JIT code"): ranges no loaded
 * object holds, each with its own row source (an SFrame section, an
 * .eh_frame indexed by eh_index.h, an .eh_frame with its .eh_frame_hdr,
 * or the frame-pointer rule) and optional names.
 *
 * The registry is a skip list ordered by start, written under a mutex by
 * registrants (normal context) and read without lock or wait by walks:
 * O(log n) expected for both.  A writer links a node by release stores,
 * bottom level first; it unlinks a node top level first and leaves the
 * node's own links as they were, so a reader standing on it goes on.
 *
 * Reclamation (SRCU-like): a reader brackets every read of the list and of
 * a registration's tables with sfb_jit_read_begin()/_end(), which count it
 * in one of two counters, chosen by the low bit of a generation.  An
 * unregistration unlinks its node, then waits for the counter the
 * generation does not select to drain (readers that read the generation
 * before the last flip), flips the generation, and waits for the other
 * to drain.  A reader counted after the writer read a counter as zero
 * reads the list after the unlink (all of these are sequentially
 * consistent), so it cannot reach the node; every reader counted before
 * is waited for.  The flip keeps new readers off the counter being
 * drained, so the wait ends while walks go on.  A thread in a read
 * section (a walk) is never waited for by itself: unregistering from one
 * is refused (SFRAME_JIT_E_BUSY), and a signal handler that walks on the
 * unregistering thread ends before the wait resumes.
 *
 * Between sections a reader keeps only a registration's epoch
 * (sfb_object.epoch): sfb_jit_row() looks the PC up again and uses the
 * tables only if the registration found has that epoch. */
#ifndef SFB_JIT_REGISTRY_H
#define SFB_JIT_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include "rows/row.h"

struct sfb_object;
struct sframe_jit_code;

/* Describe the registered range holding pc into *o (source SFB_SRC_JIT).
 * 0, or SFRAME_BT_STOP_NO_OBJECT.  Async-signal-safe; costs one load
 * while nothing is registered. */
int sfb_jit_find(uintptr_t pc, struct sfb_object *o) __attribute__((visibility("hidden")));

/* The row for pc from the registration o describes, if it is still
 * registered: 0, or a sframe_bt_stop reason as sfb_object_row() gives.
 * Async-signal-safe. */
int sfb_jit_row(const struct sfb_object *o, uintptr_t pc, unsigned flags, struct sfb_row *row)
	__attribute__((visibility("hidden")));

/* The name registered for pc (a function's from the names table, else the
 * range's), copied into out[0..size) and NUL-terminated, with the
 * function's (or range's) start and size.  1 if found, else 0.
 * Async-signal-safe: what sframe_symbolize() asks before perf maps. */
int sfb_jit_name(uintptr_t pc, char *out, size_t size, uintptr_t *start, size_t *len)
	__attribute__((visibility("hidden")));

/* Register a bare .eh_frame as __register_frame() receives it: FDEs up to
 * a zero terminator (at most max_len bytes), the range being what its
 * FDEs cover (into range[0..2) when not NULL).  The registration's key is
 * begin.  0 or an enum sframe_jit_err. */
int sfb_jit_register_eh_frame(const void *begin, size_t max_len, uintptr_t range[2])
	__attribute__((visibility("hidden")));
/* Unregister what sfb_jit_register_eh_frame(begin) registered. */
int sfb_jit_unregister_eh_frame(const void *begin) __attribute__((visibility("hidden")));

/* Registrations now (for tests). */
size_t sfb_jit_count(void) __attribute__((visibility("hidden")));

#endif
