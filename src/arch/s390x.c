/* s390x: registers from ucontext, the rt_sigreturn trampoline.
 *
 * DWARF numbers: 0-15 r0-r15 (r11 the frame pointer, r14 the return
 * address, r15 sp), 16-31 the floating-point registers in the order f0 f2
 * f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13 f15.  Leaf functions may keep
 * r11 and r14 in floating-point registers (a V3 flexible FDE, or V2's
 * register-number words says which), so those are read too.  A frame's CFA
 * is its caller's SP plus the 160-byte register save area. */
#if defined(__s390x__)
#define _GNU_SOURCE
#include "arch/arch.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include "rows/sframe_format.h"

const uint8_t sfb_arch_abi = SFB_ABI_S390X_BE;

/* The saved words mirror mcontext_t (the kernel's _sigregs): psw mask and
 * address, gprs[16], acrs[16] (4 bytes each), fpc and a pad, fprs[16]. */
#define W_PSW_ADDR 1
#define W_GPR 2
#define W_FPR 27
_Static_assert(offsetof(mcontext_t, psw.addr) == 8 * W_PSW_ADDR &&
		       offsetof(mcontext_t, gregs) == 8 * W_GPR &&
		       offsetof(mcontext_t, fpregs.fprs) == 8 * W_FPR &&
		       sizeof(mcontext_t) == 8 * SFB_SAVED_WORDS,
	       "struct sfb_saved_regs mirrors mcontext_t");

/* In the interrupted frame r14 is live: a leaf, or a function before it
 * saved r14, still has its return address there. */
void sfb_arch_from_saved(const void *w, struct sfb_regs *r)
{
	*r = (struct sfb_regs){ .pc = sfb_arch_saved_word(w, W_PSW_ADDR),
				.sp = sfb_arch_saved_word(w, W_GPR + 15),
				.fp = sfb_arch_saved_word(w, W_GPR + 11),
				.ra = sfb_arch_saved_word(w, W_GPR + 14),
				.all = w,
				.have_ra = true };
}

/* A PSW the kernel saved for user space is in 64-bit addressing mode
 * (extended and basic addressing bits both set). */
#define PSW_MASK_64BIT 0x0000000180000000ul

void sfb_arch_from_ucontext(const void *ucv, struct sfb_regs *r)
{
	const ucontext_t *uc = ucv;
	sfb_arch_from_saved(&uc->uc_mcontext, r);
	/* glibc's getcontext() saves no PSW (setcontext() resumes through
	 * r14): without a 64-bit PSW mask, the context is getcontext()'s,
	 * which resumes at r14 with r15 unchanged (it makes no frame), as
	 * an x86-64 getcontext() context resumes at its return address. */
	if ((uc->uc_mcontext.psw.mask & PSW_MASK_64BIT) != PSW_MASK_64BIT) {
		r->pc = r->ra;
		r->have_ra = false;
	}
}

/* DWARF 16-31 -> fprs[] index. */
static const unsigned char fpr_of_dwarf[16] = { 0, 2, 4, 6, 1, 3, 5, 7,
						8, 10, 12, 14, 9, 11, 13, 15 };

bool sfb_arch_reg(const struct sfb_regs *r, unsigned n, uintptr_t *out)
{
	if (n == 14 && r->have_ra) {
		*out = r->ra;
		return true;
	}
	if (!r->all || n >= 32)
		return false;
	*out = n < 16 ? sfb_arch_saved_word(r->all, W_GPR + n)
		      : sfb_arch_saved_word(r->all, W_FPR + fpr_of_dwarf[n - 16]);
	return true;
}

/* svc 173 (__NR_rt_sigreturn): the vDSO's __kernel_rt_sigreturn, or the
 * kernel's (and qemu-user's) copy on the stack or a page of its own.  r14
 * points at the svc itself. */
const uint8_t sfb_arch_sigreturn_code[SFB_SIGRETURN_LEN] = { 0x0a, 0xad };

/* The kernel's struct rt_sigframe, at sp when the trampoline runs: the
 * 160-byte save area of the handler's caller, the 2-byte svc, the
 * siginfo (8-aligned), then the ucontext, whose uc_mcontext is _sigregs
 * (glibc's ucontext_t has the kernel's layout up to it). */
#define SIGFRAME_SIGINFO 168
uintptr_t sfb_arch_sigframe_saved_at(uintptr_t sp)
{
	return sp + SIGFRAME_SIGINFO + sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext);
}

/* ld's PLTn entries: larl %r1, got; lg %r1, 0(%r1); br %r1; basr %r1, %r0;
 * lgf %r1, 12(%r1); jg plt0 (26 bytes of code, then a word). */
bool sfb_arch_in_plt_stub(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	static const uint8_t lg_br[8] = { 0xe3, 0x10, 0x10, 0x00, 0x00, 0x04, 0x07, 0xf1 };
	for (uintptr_t back = 0; back < 26 && back <= pc; back += 2) {
		uintptr_t s = pc - back;
		const uint8_t *c = (const uint8_t *)s;
		if (s < lo || s + 26 > hi || c[0] != 0xc0 || c[1] != 0x10 ||
		    memcmp(c + 6, lg_br, sizeof lg_br) != 0 || c[14] != 0x0d || c[15] != 0x10)
			continue;
		return true;
	}
	return false;
}

/* A return address follows a call: brasl (6 bytes, c0 x5), bras (4, a7
 * x5), bas (4, 4d) or basr (2, 0d). */
bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	if (ra % 2 || ra - lo < 6 || ra > hi)
		return false;
	const uint8_t *c = (const uint8_t *)ra;
	return (c[-6] == 0xc0 && (c[-5] & 0x0f) == 0x05) ||
	       (c[-4] == 0xa7 && (c[-3] & 0x0f) == 0x05) || c[-4] == 0x4d || c[-2] == 0x0d;
}

/* The entry saved the caller's r6-r15 in the caller's register save area
 * (r11 at offset 88 of it), which starts at the caller's SP = CFA - 160.
 * The library is built with frame pointers, so the entry uses r11 and has
 * saved it there. */
void sfb_arch_caller_regs(const void *frame, const void *cfa, const void *ra,
			  struct sfb_regs *r)
{
	(void)frame;
	uintptr_t sp = SFB_SP_FROM_CFA((uintptr_t)cfa);
	*r = (struct sfb_regs){ .pc = (uintptr_t)ra, .sp = sp, .fp = *(const uintptr_t *)(sp + 88) };
}
#endif
