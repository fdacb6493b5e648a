/* AArch64: registers from ucontext, the rt_sigreturn trampoline, return
 * addresses signed with pointer authentication.
 *
 * DWARF numbers: 0-30 x0-x30 (29 the frame pointer, 30 the link register,
 * the return address column), 31 sp. */
#if defined(__aarch64__)
#define _GNU_SOURCE
#include "arch/arch.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include "rows/sframe_format.h"

const uint8_t sfb_arch_abi = SFB_ABI_AARCH64_LE;

/* The saved words mirror mcontext_t from regs[] on: x0-x30, sp, pc,
 * pstate. */
#define W_SP 31
#define W_PC 32
_Static_assert(offsetof(mcontext_t, sp) == offsetof(mcontext_t, regs) + 8 * W_SP &&
		       offsetof(mcontext_t, pc) == offsetof(mcontext_t, regs) + 8 * W_PC &&
		       offsetof(mcontext_t, pstate) == offsetof(mcontext_t, regs) + 8 * 33,
	       "struct sfb_saved_regs mirrors mcontext_t from regs[]");

/* In the interrupted frame the link register is live: a leaf, or a
 * function before it saved x30, still has its return address there. */
void sfb_arch_from_saved(const void *w, struct sfb_regs *r)
{
	*r = (struct sfb_regs){ .pc = sfb_arch_saved_word(w, W_PC),
				.sp = sfb_arch_saved_word(w, W_SP),
				.fp = sfb_arch_saved_word(w, 29),
				.ra = sfb_arch_saved_word(w, 30),
				.all = w,
				.have_ra = true };
}

void sfb_arch_from_ucontext(const void *uc, struct sfb_regs *r)
{
	sfb_arch_from_saved(((const ucontext_t *)uc)->uc_mcontext.regs, r);
}

bool sfb_arch_reg(const struct sfb_regs *r, unsigned n, uintptr_t *out)
{
	if (n == 30 && r->have_ra) {
		*out = r->ra;
		return true;
	}
	if (r->all && n < 31) {
		*out = sfb_arch_saved_word(r->all, n);
		return true;
	}
	return false;
}

/* The vDSO's __kernel_rt_sigreturn (and qemu-user's copy of it): mov x8,
 * #139 (__NR_rt_sigreturn); svc #0. */
const uint8_t sfb_arch_sigreturn_code[SFB_SIGRETURN_LEN] = { 0x68, 0x11, 0x80, 0xd2,
								0x01, 0x00, 0x00, 0xd4 };

/* At the trampoline sp points at the kernel's struct rt_sigframe: a
 * siginfo, then the ucontext (glibc's ucontext_t has the kernel's layout
 * up to and including uc_mcontext). */
uintptr_t sfb_arch_sigframe_saved_at(uintptr_t sp)
{
	return sp + sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext.regs);
}

/* xpaclri (hint #7, a NOP on cores without pointer authentication)
 * strips x30 of the signature of either instruction key. */
uintptr_t sfb_arch_strip_pac(uintptr_t ra)
{
	register uintptr_t x30 __asm__("x30") = ra;
	__asm__("hint 7" : "+r"(x30));
	return x30;
}

/* ld's PLTn stubs: [bti c;] adrp x16, page; ldr x17, [x16, #off];
 * add x16, x16, #off; [autia1716 | autib1716;] br x17. */
static unsigned plt_stub_len(uintptr_t s, uintptr_t lo, uintptr_t hi)
{
	uint32_t i[6];
	unsigned n = 0, k = 0;
	if (s < lo || s % 4)
		return 0;
	for (; k < 6 && s + 4 * k + 4 <= hi; k++)
		memcpy(&i[k], (const void *)(s + 4 * k), 4);
	if (k > 0 && i[0] == 0xd503245f) /* bti c */
		n++;
	if (k < n + 4 || (i[n] & 0x9f00001f) != 0x90000010 ||    /* adrp x16 */
	    (i[n + 1] & 0xffc003ff) != 0xf9400211 ||              /* ldr x17, [x16, #off] */
	    (i[n + 2] & 0xffc003ff) != 0x91000210)                /* add x16, x16, #off */
		return 0;
	n += 3;
	if (n < k && (i[n] == 0xd503219f || i[n] == 0xd50321df))  /* autia1716, autib1716 */
		n++;
	return n < k && i[n] == 0xd61f0220 ? 4 * (n + 1) : 0;     /* br x17 */
}

bool sfb_arch_in_plt_stub(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	for (uintptr_t back = 0; back < 24 && back <= pc; back += 4)
		if (plt_stub_len(pc - back, lo, hi) > back)
			return true;
	return false;
}

/* A return address follows a BL, a BLR or one of the authenticating
 * BLRAA, BLRAAZ, BLRAB, BLRABZ. */
bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	if (ra % 4 || ra - lo < 4 || ra > hi)
		return false;
	uint32_t i;
	memcpy(&i, (const void *)(ra - 4), sizeof i);
	return (i & 0xfc000000) == 0x94000000 ||  /* bl */
	       (i & 0xfffffc1f) == 0xd63f0000 ||  /* blr */
	       (i & 0xfffff81f) == 0xd63f081f ||  /* blraaz, blrabz */
	       (i & 0xfffff800) == 0xd73f0800;    /* blraa, blrab */
}

/* The entry's frame record at x29: the caller's x29, then the return
 * address (signed if the library is built with pac-ret: stripped); the
 * caller's SP is the entry's CFA. */
void sfb_arch_caller_regs(const void *frame, const void *cfa, const void *ra,
			  struct sfb_regs *r)
{
	*r = (struct sfb_regs){ .pc = sfb_arch_strip_pac((uintptr_t)ra), .sp = (uintptr_t)cfa,
				.fp = *(const uintptr_t *)frame };
}
#endif
