/* bench_varied.h - call chains that differ from call to call
 * (bench_varied.c), built like the recursive chain (bench_chain.h):
 *
 *   the main program  -fno-omit-frame-pointer, linked into the driver
 *                     (SFrame V1, host binutils): every method walks the
 *                     same code, and no per-walk confirmation of the object
 *   libbench-varied-fp.so  the same, dlopen()ed
 *   libbench-varied-v1.so  -fomit-frame-pointer, binutils 2.40 -> SFrame V1
 *   libbench-varied-v3.so  -fomit-frame-pointer, binutils 2.47 -> SFrame V3
 *
 * The recursive chain repeats one return address in every frame, so a
 * walk of it finds each frame's row in the memo entry the frame below
 * names as its successor.  Real stacks are not like that: a function is
 * called from several places, and which one differs from stack to stack.
 * Here VARIED_SHAPES functions of different frame sizes call each other
 * directly, the callee at each level chosen by a path the driver draws
 * from a seeded PRNG: each shape has VARIED_SHAPES call sites (one per
 * callee), so a chain's frames carry up to VARIED_SHAPES^2 return
 * addresses, and the frame above a given return address depends on the
 * path. */
#ifndef SFB_BENCH_VARIED_H
#define SFB_BENCH_VARIED_H

#include <stdint.h>

#include "bench_chain.h"

#define VARIED_SHAPES 6
#define VARIED_MAX_DEPTH 128

/* One chain: the entry calls the level-depth function, of shape
 * shape[depth], which calls the level-(depth - 1) function of shape
 * shape[depth - 1], ..., and the level-1 function calls cb(arg).  The
 * level-k function stores its own return address in ra[k], so that seen
 * from inside cb, frame i (2 <= i <= depth + 1) is ra[i - 1]: the
 * convention of bench_chain_ra.  depth is clamped to
 * [1, VARIED_MAX_DEPTH]; shape[k] is taken modulo VARIED_SHAPES. */
struct varied_path {
	const uint8_t *shape; /* [VARIED_MAX_DEPTH + 1], index 0 unused */
	int depth;
	void **ra;            /* [VARIED_MAX_DEPTH + 1], written by the chain */
	bench_cb cb;
	void *arg;
};

/* The library builds export varied_chain_entry; the main program's copy
 * (built with VARIED_IN_MAIN) is main_varied_entry. */
#ifdef VARIED_IN_MAIN
#define varied_chain_entry main_varied_entry
#endif
int varied_chain_entry(const struct varied_path *p);
int main_varied_entry(const struct varied_path *p);

#endif
