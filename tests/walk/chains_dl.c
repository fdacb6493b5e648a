/* libsfb_chains_dl.so: dlopen()ed by t_walk_chains and t_every_insn.  See
 * chains_lib.h. */
#include "chains_lib.h"

CHAINS_FN int chains_dl_mid(void *ctx)
{
	volatile int zero = 0;
	int r = chains_next(ctx);
	return r + zero;
}

/* A frame of about 1.5 KiB: CFA offsets need 2-byte SFrame data words. */
CHAINS_FN int chains_dl_big(void *ctx)
{
	volatile char buf[1500];
	buf[0] = 1;
	buf[1499] = 2;
	int r = chains_dl_mid(ctx);
	return r + buf[0] + buf[1499] - 3;
}

CHAINS_FN int chains_dl_outer(void *ctx)
{
	volatile int zero = 0;
	int r = chains_dl_big(ctx);
	return r + zero;
}
