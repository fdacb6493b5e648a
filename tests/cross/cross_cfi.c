/* Code with .eh_frame but no .sframe, like the distributions' libc:
 * tests/cross/t_cross.c walks through it with its DWARF CFI, on every
 * instruction.  cf_a -> cf_b -> cf_c -> cb.  Built -O2 with the variant's
 * flags (pac-ret: signed return addresses, DW_CFA_AARCH64_negate_ra_state
 * in the CFI); cf_b's alloca makes its CFA frame-pointer based; cf_c keeps
 * values in callee-saved registers across the call (s390x saves r6-r15 in
 * one prologue). */
#include <alloca.h>

typedef int (*cross_cb)(int);

__attribute__((noinline)) int cf_c(cross_cb cb, int x)
{
	int a = x * 3, b = x ^ 0x5a, c = x + 17, d = x * x;
	int r = cb(x + 1);
	return r + a * b + c * d;
}

__attribute__((noinline)) int cf_b(cross_cb cb, int x)
{
	volatile char *p = alloca((unsigned)x % 64 + 16);
	p[0] = (char)x;
	int r = cf_c(cb, x + p[0]);
	return r - p[0];
}

__attribute__((noinline)) int cf_a(cross_cb cb, int x)
{
	volatile int v[8];
	v[0] = x;
	v[7] = x * 5;
	int r = cf_b(cb, v[0] & 31);
	return r + v[7];
}

/* A call through this library's PLT to a function of the program:
 * dlopen()ed with RTLD_LAZY, its first call goes through the dynamic
 * linker's lazy-binding resolver, and the program's function is an IFUNC,
 * whose resolver the dynamic linker runs from there (t_cross walks from
 * it, through the resolver's frame). */
int cross_lazy_target(int x);

__attribute__((noinline)) int cf_lazy(int x)
{
	return cross_lazy_target(x) + 1;
}
