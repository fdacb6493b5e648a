/* Unwind tables for code written at run time, as LLVM's lazy JIT hands
 * them to __register_frame(): per function a CIE (augmentation "zR",
 * pc-relative sdata4 pointers; CFA = rsp + 8, RA at CFA - 8: the row of an
 * x86-64 function's entry) and one FDE for [fn, fn + size), with no
 * terminator: JIT_FDE_REC bytes. */
#ifndef SFB_TEST_JIT_FDE_H
#define SFB_TEST_JIT_FDE_H

#include <stdint.h>
#include <string.h>

#define JIT_FDE_REC 48 /* CIE 24 + FDE 24 */

static inline void jit_fde_put4(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void jit_fde_write(uint8_t *p, uintptr_t fn, uint32_t size)
{
	static const uint8_t cie[24] = { 20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16,
					 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0 };
	memcpy(p, cie, 24);
	uint8_t *f = p + 24;
	jit_fde_put4(f, 20);
	jit_fde_put4(f + 4, 28); /* back to the CIE */
	jit_fde_put4(f + 8, (uint32_t)(int32_t)(fn - (uintptr_t)(f + 8)));
	jit_fde_put4(f + 12, size);
	memset(f + 16, 0, 8); /* augmentation length 0, then nops */
}

#endif
