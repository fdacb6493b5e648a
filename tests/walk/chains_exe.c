/* The executable's part of the test call chains (t_walk_chains,
 * t_every_insn); see chains_lib.h.  Built -O2 -Wa,--gsframe and linked
 * -rdynamic, so dladdr() names these functions. */
#include <alloca.h>
#include "chains_lib.h"

void *chains_ra[CHAINS_RA_COUNT];
chains_fn chains_dl_entry;
/* Address taken: the executable's call to chains_lk_got goes through a
 * .plt.got stub (a lone jmp *GOT) rather than .plt. */
chains_fn volatile chains_lk_got_ptr = chains_lk_got;

CHAINS_FN int chains_ex_big(void *ctx)
{
	volatile char buf[1024];
	chains_ra[CHAINS_RA_BIG] = __builtin_return_address(0);
	buf[0] = 1;
	buf[1023] = 2;
	int r = chains_lk_outer(ctx);
	return r + buf[0] + buf[1023] - 3;
}

CHAINS_FN int chains_ex_alloca(void *ctx, int n)
{
	volatile char *p = alloca((unsigned)(n < 1 ? 1 : n) + 16u);
	chains_ra[CHAINS_RA_ALLOCA] = __builtin_return_address(0);
	p[0] = 0;
	int r = chains_ex_big(ctx);
	return r + p[0];
}

CHAINS_FN int chains_ex_a(void *ctx)
{
	volatile int zero = 0;
	chains_ra[CHAINS_RA_A] = __builtin_return_address(0);
	int r = chains_ex_alloca(ctx, ((struct chains_ctx *)ctx)->pos + 40);
	return r + zero;
}

CHAINS_FN int chains_ex_mid(void *ctx)
{
	volatile int zero = 0;
	chains_ra[CHAINS_RA_MID] = __builtin_return_address(0);
	int r = chains_lk_got(ctx);
	return r + zero;
}

CHAINS_FN int chains_ex_to_dl(void *ctx)
{
	volatile int zero = 0;
	chains_ra[CHAINS_RA_TO_DL] = __builtin_return_address(0);
	int r = chains_dl_entry(ctx);
	return r + zero;
}

CHAINS_FN int chains_ex_drap(void *ctx)
{
	volatile char aligned[64] __attribute__((aligned(64)));
	volatile char vla[((struct chains_ctx *)ctx)->pos + 7];
	chains_ra[CHAINS_RA_DRAP] = __builtin_return_address(0);
	aligned[0] = 0;
	vla[0] = 0;
	int r = chains_next(ctx);
	return r + aligned[0] + vla[0];
}

CHAINS_FN int chains_ex_recurse(void *ctx)
{
	volatile int zero = 0;
	struct chains_ctx *c = ctx;
	int r;
	if (c->depth-- > 1)
		r = chains_ex_recurse(ctx);
	else
		r = chains_next(ctx);
	return r + zero;
}
