/* Registers and memory for the DWARF expressions the tests evaluate
 * (cfi.h, struct sfb_cfi_eval_ctx): register n is fake_regs[n], except
 * FAKE_NO_REG and any beyond the array, which are unknown, as some of a
 * walker's may be; memory below 0x1000 is unreadable, and the word at any
 * other address is the address plus FAKE_MEM_BIAS. */
#ifndef SFB_CFI_FAKE_H
#define SFB_CFI_FAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "rows/cfi.h"

#define FAKE_NO_REG 39
#define FAKE_MEM_BIAS 0x1111111100000000ull

static uint64_t fake_regs[40];

static bool fake_reg(void *arg, unsigned n, uint64_t *out)
{
	(void)arg;
	if (n >= sizeof fake_regs / sizeof fake_regs[0] || n == FAKE_NO_REG)
		return false;
	*out = fake_regs[n];
	return true;
}

static bool fake_mem(void *arg, uint64_t addr, uint64_t *out)
{
	(void)arg;
	if (addr < 0x1000)
		return false;
	*out = addr + FAKE_MEM_BIAS;
	return true;
}

static const struct sfb_cfi_eval_ctx fake_ctx = { fake_reg, fake_mem, NULL };

#endif
