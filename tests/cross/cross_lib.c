/* The dlopen()ed half of tests/cross/t_cross.c's call chains: lb_a ->
 * lb_b -> lb_c -> cb.  Built -O2 without frame pointers or sibling calls
 * (SFrame rows alone unwind these frames), -fno-semantic-interposition so
 * that the calls go straight to the functions, not through the PLT. */
typedef int (*cross_cb)(int);

__attribute__((noinline)) int lb_c(cross_cb cb, int x)
{
	volatile int v[6];
	v[0] = x;
	v[5] = x * 5;
	int r = cb(v[0] + 1);
	return r + v[0] + v[5];
}

__attribute__((noinline)) int lb_b(cross_cb cb, int x)
{
	int r = lb_c(cb, x * 3);
	return r ^ x;
}

__attribute__((noinline)) int lb_a(cross_cb cb, int x)
{
	int r = lb_b(cb, x + 7);
	return r - x;
}
