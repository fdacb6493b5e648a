/* bench_distinct.h - a call chain of distinct functions (bench_distinct.c),
 * linked into the driver with frame pointers and -Wa,--gsframe (host
 * binutils: SFrame V1): the "distinct" build of the SIGPROF samples.
 *
 * The recursive chain (bench_chain.h) has one return address for all its
 * frames, so sframebt's per-return-address memo serves a whole sample from
 * a few entries.  A real stack has a return address of its own in every
 * frame, each a separate memo entry (a separate cold line in a sample);
 * this chain has that, and the frame-pointer walk runs on the same machine
 * code. */
#ifndef SFB_BENCH_DISTINCT_H
#define SFB_BENCH_DISTINCT_H

#include "bench_chain.h"

/* Read by tests/bench/build.mk, which generates that many functions. */
#define DISTINCT_MAX_DEPTH 40

/* Calls distinct_chain_entry -> distinct_<depth> -> ... -> distinct_1 ->
 * cb(arg), depth clamped to [1, DISTINCT_MAX_DEPTH].  Each distinct_<k> is
 * a function of its own, with a frame-pointer frame of its own size, and
 * stores its own return address in distinct_chain_ra[k]: the convention of
 * bench_chain_ra, so that seen from inside cb frame i (i >= 2) is
 * distinct_chain_ra[i - 1]. */
int distinct_chain_entry(int depth, bench_cb cb, void *arg);
extern void *distinct_chain_ra[DISTINCT_MAX_DEPTH + 1];

#endif
