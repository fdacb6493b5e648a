/* bench_varied.c - see bench_varied.h. */
#include "bench_varied.h"
#include "keep.h"

#define EXPORT __attribute__((visibility("default")))
#define KEEP BENCH_KEEP

#define SHAPES(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define DECLARE(s) static int vs_##s(const struct varied_path *p, int k);
SHAPES(DECLARE)
#undef DECLARE
_Static_assert(VARIED_SHAPES == 6, "SHAPES lists VARIED_SHAPES functions");

/* The call to level k: one direct call site per callee shape, so that a
 * return address says which shape called which; level 0 is the
 * callback.  Inlined into every shape. */
static inline __attribute__((always_inline)) int call_level(const struct varied_path *p, int k)
{
	if (k == 0)
		return p->cb(p->arg);
	switch (p->shape[k] % VARIED_SHAPES) {
#define CASE(s)   \
	case s:   \
		return vs_##s(p, k);
		SHAPES(CASE)
#undef CASE
	}
	return 0;
}

/* Shapes 0-3: recurse()'s frame (bench_chain.c) with 2, 6, 13 and 27
 * words of locals: a callee-saved value used after the call, volatile
 * locals, work after the call so that the call is not a tail call. */
#define FIXED(s, words)                                                         \
	static KEEP int vs_##s(const struct varied_path *p, int k)              \
	{                                                                       \
		volatile uint64_t pad[words];                                   \
		uintptr_t salt = (uintptr_t)p->arg >> 4;                        \
		pad[k % (words)] = salt + (uintptr_t)k;                         \
		p->ra[k] = __builtin_return_address(0);                         \
		int r = call_level(p, k - 1);                                   \
		return r + (int)pad[k % (words)] + (int)salt;                   \
	}
FIXED(0, 2)
FIXED(1, 6)
FIXED(2, 13)
FIXED(3, 27)
#undef FIXED

/* Shape 4: a variable-length array, so that even without
 * -fno-omit-frame-pointer the frame is addressed from the frame pointer
 * (a CFA rule on the FP register), its size changing with the level. */
static KEEP int vs_4(const struct varied_path *p, int k)
{
	volatile uint64_t vla[2 + k % 5];
	vla[k % (2 + k % 5)] = (uintptr_t)k;
	p->ra[k] = __builtin_return_address(0);
	int r = call_level(p, k - 1);
	return r + (int)vla[k % (2 + k % 5)];
}

/* Shape 5: a large frame and several callee-saved registers live across
 * the call (more pushes in the prologue, more unwind rows). */
static KEEP int vs_5(const struct varied_path *p, int k)
{
	volatile uint64_t pad[40];
	uintptr_t a = (uintptr_t)p->arg, b = a >> 3, c = a * 7 + (uintptr_t)k, d = a ^ (uintptr_t)p;
	pad[k % 40] = a + b;
	p->ra[k] = __builtin_return_address(0);
	int r = call_level(p, k - 1);
	return r + (int)(pad[k % 40] + a + b + c + d);
}

EXPORT KEEP int varied_chain_entry(const struct varied_path *p)
{
	int depth = p->depth < 1 ? 1 : p->depth > VARIED_MAX_DEPTH ? VARIED_MAX_DEPTH : p->depth;
	volatile int zero = 0;
	int r = call_level(p, depth);
	return r + zero;
}
