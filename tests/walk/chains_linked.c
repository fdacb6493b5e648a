/* libsfb_chains_linked.so: the shared object t_walk_chains and t_every_insn
 * link against (-Wl,-rpath).  See chains_lib.h. */
#include "chains_lib.h"

CHAINS_FN int chains_lk_mid(void *ctx)
{
	volatile int zero = 0;
	int r = chains_next(ctx);
	return r + zero;
}

/* Calls chains_lk_mid through this object's PLT (exported, interposable). */
CHAINS_FN int chains_lk_outer(void *ctx)
{
	volatile int zero = 0;
	int r = chains_lk_mid(ctx);
	return r + zero;
}

CHAINS_FN int chains_lk_got(void *ctx)
{
	volatile int zero = 0;
	int r = chains_next(ctx);
	return r + zero;
}
