/* A function with .eh_frame CFI and no .sframe (tests/rows/build.mk builds
 * it twice, with frames of FRAME_BYTES 256 and 512: the same code but for
 * an immediate, so a PC of one lies at the same offset in the other, with
 * another CFA rule).  It takes its context twice, at two PCs of its body
 * (one CFI row), and hands each to cb with its CFA (gcc's
 * __builtin_dwarf_cfa()) while its frame is live. */
#include <ucontext.h>

__attribute__((noinline, visibility("default"))) int
cfi_cache_lib_fn(int (*cb)(ucontext_t *uc, void *cfa))
{
	volatile char buf[FRAME_BYTES];
	ucontext_t uc;
	buf[0] = 1;
	getcontext(&uc);
	int r = cb(&uc, __builtin_dwarf_cfa());
	getcontext(&uc);
	r += cb(&uc, __builtin_dwarf_cfa());
	return r + buf[0];
}
