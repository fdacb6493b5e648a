/* bench_obj.c - template of the small objects for the first-call benchmark.
 * Built 100 times with -DOBJ_ID=n -Wa,--gsframe into objs/libbobjNNN.so.
 * bobj_hop(i, ctx) calls the next object's hop (ctx->hops[i + 1]) or, in
 * the last object, ctx->leaf: so one walk from the leaf crosses every
 * object once.  A few other functions give each .sframe several FDEs with
 * different frames, like a small real library. */
#include <stdint.h>

#include "keep.h"

#ifndef OBJ_ID
#define OBJ_ID 0
#endif
#define EXPORT __attribute__((visibility("default")))
#define KEEP BENCH_KEEP

struct bobj_ctx {
	int count;
	int (**hops)(int i, struct bobj_ctx *ctx);
	int (*leaf)(struct bobj_ctx *ctx);
};

#define FILLER(n)                                                 \
	EXPORT KEEP int bobj_filler##n(int x)                     \
	{                                                         \
		volatile uint64_t b[(n) * 3 + 1];                 \
		b[x % ((n) * 3 + 1)] = (uint64_t)x * OBJ_ID;      \
		return (int)b[0] + (n);                           \
	}
FILLER(1) FILLER(2) FILLER(3) FILLER(4) FILLER(5) FILLER(6) FILLER(7) FILLER(8)

EXPORT KEEP int bobj_hop(int i, struct bobj_ctx *ctx)
{
	volatile uint64_t pad[3];
	pad[i % 3] = OBJ_ID;
	int r = i + 1 < ctx->count ? ctx->hops[i + 1](i + 1, ctx) : ctx->leaf(ctx);
	return r + (int)pad[i % 3] + i;
}
