/* srclines.h: the source positions of many PCs, within a CPU-time budget,
 * for examples/profiler.c's pprof output.
 *
 * The lookups go through one symbolizer (sframe_symbolizer_lookup()),
 * which keeps the last objects' debug files open with what it has read
 * of them: microseconds a PC for a program's own uncompressed DWARF, up
 * to tens of milliseconds for a PC of a library whose detached debug
 * file is compressed (libc6-dbg), which must be inflated up to the unit
 * that holds it.  A profile may hold thousands of PCs, so the lookups
 * run in a child process (fork()) that writes what it finds to a pipe,
 * and the child is killed once it has used the CPU time allowed: a bound
 * that one slow lookup cannot exceed.  The child only calls the
 * symbolizer and write(), both async-signal-safe, as a child forked from
 * a threaded process must.
 *
 * Normal context only: it forks, allocates and waits. */
#ifndef SFRAME_SRCLINES_H
#define SFRAME_SRCLINES_H

#include <stddef.h>
#include <stdint.h>

#include "backtrace.h"

/* Called, in the caller's process, with each PC's index in pcs and what
 * the symbolizer found for it (the strings valid during the call). */
typedef void (*srclines_fn)(void *ctx, size_t index, const struct sframe_symbol *sym);

struct srclines_cost {
	size_t answered;  /* PCs looked up before the budget ran out */
	int64_t cpu_ns;   /* the child's CPU time (wall time if unknown) */
};

/* Look up pcs[0..n) in that order (put the most wanted first), calling fn
 * for each one answered before the child has used budget_ns nanoseconds
 * of CPU time (< 0: no limit; 0: none is looked up).  objs[i] names the
 * object of pcs[i] (any key, equal for PCs of the same object; 0:
 * unknown): once
 * SRCLINES_GIVE_UP lookups in an object have found nothing and none has
 * found anything, its other PCs are left out, unanswered (an object
 * without line tables, such as a stripped program without a debug file,
 * costs that many lookups, not one per PC). */
#define SRCLINES_GIVE_UP 8
struct srclines_cost srclines_read(const uintptr_t *pcs, const uintptr_t *objs, size_t n,
				   int64_t budget_ns, srclines_fn fn, void *ctx);

#endif
