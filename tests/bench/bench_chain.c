/* bench_chain.c - see bench_chain.h. */
#include "bench_chain.h"
#include "keep.h"

#define EXPORT __attribute__((visibility("default")))
#define KEEP BENCH_KEEP

EXPORT void *bench_chain_ra[BENCH_MAX_DEPTH + 2];

/* A frame like ordinary code has: a callee-saved register (depth is used
 * after the call), some locals, and work after the call so that the call
 * is not a tail call. */
static KEEP int recurse(int depth, bench_cb cb, void *arg)
{
	volatile uint64_t pad[5];
	pad[depth % 5] = (uint64_t)depth;
	bench_chain_ra[depth] = __builtin_return_address(0);
	int r = depth > 1 ? recurse(depth - 1, cb, arg) : cb(arg);
	return r + (int)pad[depth % 5] + depth;
}

EXPORT KEEP int bench_chain_entry(int depth, bench_cb cb, void *arg)
{
	if (depth < 1)
		depth = 1;
	if (depth > BENCH_MAX_DEPTH)
		depth = BENCH_MAX_DEPTH;
	volatile int zero = 0;
	int r = recurse(depth, cb, arg);
	return r + zero;
}

EXPORT KEEP int bench_chain_work(void *arg)
{
	struct bench_work *w = arg;
	*w->ra_out = __builtin_return_address(0);
	const uint64_t *p = w->words;
	uint64_t h = w->hash;
	while (!*w->stop) {
		for (size_t i = 0; i < w->nwords; i += 4096) {
			size_t end = i + 4096 < w->nwords ? i + 4096 : w->nwords;
			for (size_t j = i; j < end; j += 8)
				h = (h ^ p[j]) * 0x100000001b3ull + (h >> 29);
			if (*w->stop)
				break;
		}
	}
	w->hash = h;
	return (int)(h & 1);
}
