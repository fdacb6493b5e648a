/* Frame-pointer code without unwind tables (no .sframe, no .eh_frame):
 * tests/cross/t_cross.c walks through it with the frame-pointer rule
 * (SFRAME_BT_FP_FALLBACK_ANY).  fp_a -> fp_b -> cb; fp_a has locals, so
 * on AArch64 its frame record lies below them (CFA = x29 + frame size,
 * not x29 + 16). */
typedef int (*cross_cb)(int);

__attribute__((noinline)) int fp_b(cross_cb cb, int x)
{
	int r = cb(x + 1);
	return r * 2;
}

__attribute__((noinline)) int fp_a(cross_cb cb, int x)
{
	volatile int v[10];
	v[0] = x;
	v[9] = x * 3;
	int r = fp_b(cb, v[0]);
	return r + v[9];
}
