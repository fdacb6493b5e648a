/* bench_chain.h - the call chain the benchmark walks (bench_chain.c), built
 * once per unwind-info flavour from the same source:
 *
 *   libbench-fp.so  -fno-omit-frame-pointer, host binutils (also SFrame V1):
 *                   the frame-pointer baseline
 *   libbench-v1.so  -fomit-frame-pointer, host binutils 2.40  -> SFrame V1
 *   libbench-v2.so  -fomit-frame-pointer, binutils 2.44        -> SFrame V2
 *   libbench-v3.so  -fomit-frame-pointer, binutils 2.47        -> SFrame V3
 *
 * The driver (sfbench.c) dlopen()s them side by side (RTLD_LOCAL), and
 * also links a copy (-fomit-frame-pointer, host binutils -> SFrame V1) into
 * itself: the "main" build; and a second copy with frame pointers, whose
 * work function is the leaf of the "distinct" build (bench_distinct.h). */
#ifndef SFB_BENCH_CHAIN_H
#define SFB_BENCH_CHAIN_H

#include <stddef.h>
#include <stdint.h>

/* The same chain linked into the driver itself (built with
 * BENCH_CHAIN_IN_MAIN): the main program, which glibc never unloads, so
 * sframebt uses its description without the per-walk confirmation that a
 * dlopen()ed object gets.  Its own names, so that they cannot be confused
 * with the libraries' symbols. */
#ifdef BENCH_CHAIN_IN_MAIN
#define bench_chain_entry main_chain_entry
#define bench_chain_work main_chain_work
#define bench_chain_ra main_chain_ra
#elif defined(BENCH_CHAIN_IN_MAIN_FP)
/* The copy with frame pointers: only its work function is used, as the
 * leaf of the distinct chain, where the samples land and the frame-pointer
 * walk starts (main_chain_work keeps no frame record: the walk would miss
 * its return address).  Its recursive chain goes unused. */
#define bench_chain_entry fpmain_chain_entry
#define bench_chain_work fpmain_chain_work
#define bench_chain_ra fpmain_chain_ra
#elif defined(BENCH_CHAIN_LINKED)
/* The chain in a library the driver is linked with (libbench-linked.so,
 * DT_NEEDED): an object loaded at start-up, which glibc never unloads
 * either, and which sframebt finds when it is loaded. */
#define bench_chain_entry linked_chain_entry
#define bench_chain_work linked_chain_work
#define bench_chain_ra linked_chain_ra
#endif

typedef int (*bench_cb)(void *arg);

#define BENCH_MAX_DEPTH 160

/* Calls bench_chain_entry -> recurse(depth) -> ... -> recurse(1) -> cb(arg).
 * Each recurse(k) has a frame of its own (a callee-saved register and
 * locals: CFA = sp + 64 in its body, several unwind rows) and stores its
 * own return address in bench_chain_ra[k], so that the caller can check a
 * backtrace against ground truth: seen from inside cb, frame i (i >= 2) is
 * bench_chain_ra[i - 1] (frame 1 is cb's own return address, frame 0 the
 * return address inside cb).  depth is clamped to [1, BENCH_MAX_DEPTH]. */
int bench_chain_entry(int depth, bench_cb cb, void *arg);

/* What bench_chain_work() does: hash words[0..nwords) (stride 8 words: one
 * load per cache line) until *stop becomes non-zero. */
struct bench_work {
	const uint64_t *words;
	size_t nwords;
	volatile int *stop;
	uint64_t hash;  /* result, so the loop is not dead */
	void **ra_out;  /* the work function stores its return address here */
};

/* A bench_cb (arg: struct bench_work *): the leaf of the chain for the
 * signal-handler benchmark, so that samples land in code of the build
 * under test. */
int bench_chain_work(void *arg);

int main_chain_entry(int depth, bench_cb cb, void *arg);
int main_chain_work(void *arg);
extern void *main_chain_ra[BENCH_MAX_DEPTH + 2];
int fpmain_chain_work(void *arg);
int linked_chain_entry(int depth, bench_cb cb, void *arg);
int linked_chain_work(void *arg);
extern void *linked_chain_ra[BENCH_MAX_DEPTH + 2];

#endif
