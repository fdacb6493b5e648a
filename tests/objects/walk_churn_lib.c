/* Helper objects for t_churn and t_first_call: one source, built as
 * build/tests/walk_churn_{a,b,c,d,x,y,p,q}.so with -DCHURN_VARIANT_<v>
 * (tests/tests.mk, CHAIN_SOFLAGS), -Wa,--gsframe and without frame pointers.
 *
 * Every variant exports the same chain:
 *     churn_entry -> churn_mid [-> churn_mid2] -> churn_leaf [-> cb]
 * with its own depth, frame sizes and section layout, so that a cached
 * description of one variant applied to another gives wrong rows.
 * Variants x and y are a layout pair: the same mapped span (each ends with
 * a page-aligned .bss array of the same size, the only .bss of the object,
 * so the last segment ends at the same offset whatever the code size) but
 * different code, so different .sframe sections at different offsets;
 * t_churn reports whether the loader really put them at the same address
 * with the same span.  Variants p and q are one object rebuilt: the same
 * code but for one frame size (an 8-bit immediate either way), so the same
 * layout and the same .sframe but for one FRE's CFA offset; only their
 * build-ids tell them apart. */
#include <stdint.h>

#if defined(__clang__)
#define NOINL __attribute__((noinline, used))
#else
#define NOINL __attribute__((noinline, noclone, used))
#endif

#if defined(CHURN_VARIANT_a)
#define DEPTH 2
#define LEAF_FRAME 16
#define RO_PAD 64
#define BSS_PAD 64
#elif defined(CHURN_VARIANT_b)
#define DEPTH 3
#define LEAF_FRAME 200
#define RO_PAD 3000
#define BSS_PAD 8192
#elif defined(CHURN_VARIANT_c)
#define DEPTH 3
#define LEAF_FRAME 40
#define RO_PAD 128
#define BSS_PAD 100000
#elif defined(CHURN_VARIANT_d)
#define DEPTH 2
#define LEAF_FRAME 5000
#define RO_PAD 9000
#define BSS_PAD 256
#elif defined(CHURN_VARIANT_x)
#define DEPTH 3
#define LEAF_FRAME 24
#define RO_PAD 64
#define BSS_ALIGNED_PAD 8192
#elif defined(CHURN_VARIANT_y)
#define DEPTH 2
#define LEAF_FRAME 72
#define RO_PAD 64
#define BSS_ALIGNED_PAD 8192
#elif defined(CHURN_VARIANT_p)
#define DEPTH 3
#define LEAF_FRAME 32
#define RO_PAD 64
#define BSS_ALIGNED_PAD 8192
#elif defined(CHURN_VARIANT_q)
#define DEPTH 3
#define LEAF_FRAME 64
#define RO_PAD 64
#define BSS_ALIGNED_PAD 8192
#else
#error "define CHURN_VARIANT_<v>"
#endif

typedef int (*churn_cb)(int);

/* Static: several variants are loaded at once (t_keep_loaded links one in),
 * and exported data would bind to the first variant's. */
static volatile unsigned long churn_sink = 1; /* .data, not .bss */
/* Layout padding: read at run time so that neither is dropped. */
static const volatile unsigned char churn_ro_pad[RO_PAD] = { 1 };
#ifdef BSS_ALIGNED_PAD
static volatile unsigned char churn_bss_pad[BSS_ALIGNED_PAD] __attribute__((aligned(4096)));
#else
static volatile unsigned char churn_bss_pad[BSS_PAD];
#endif

#define SPIN(n)                                                    \
	do {                                                       \
		for (unsigned long i_ = 0; i_ < (unsigned long)(n); i_++) \
			churn_sink += i_;                          \
	} while (0)

int churn_depth(void)
{
	return DEPTH;
}

NOINL int churn_leaf(int x, int spin, churn_cb cb)
{
	volatile unsigned char frame[LEAF_FRAME];
	frame[(unsigned)x % LEAF_FRAME] = (unsigned char)x;
	SPIN(spin);
	int r = x + frame[(unsigned)x % LEAF_FRAME] + churn_ro_pad[0] + churn_bss_pad[0];
	if (cb)
		r += cb(r);
	return r + 1;
}

#if DEPTH >= 3
NOINL int churn_mid2(int x, int spin, churn_cb cb)
{
	int r = churn_leaf(x + 1, spin, cb);
	SPIN(spin / 8);
	return r ^ 3;
}
#define NEXT churn_mid2
#else
#define NEXT churn_leaf
#endif

NOINL int churn_mid(int x, int spin, churn_cb cb)
{
	int r = NEXT(x + 2, spin, cb);
	SPIN(spin / 8);
	return r * 3;
}

NOINL int churn_entry(int x, int reps, int spin, churn_cb cb)
{
	int r = x;
	for (int i = 0; i < reps; i++) {
		r += churn_mid(r + i, spin, cb);
		SPIN(spin / 8);
	}
	return r + 5;
}
