/* s390x: registers from ucontext, the rt_sigreturn trampoline, PLT stubs,
 * return addresses.  Constants and DWARF numbers: s390x.h.  Leaf
 * functions may keep r11 and r14 in floating-point registers (a V3
 * flexible FDE, or V2's register-number words says which), so those are
 * read too.  A frame's CFA is its caller's SP plus the 160-byte register
 * save area. */
#if defined(__s390x__)
#define _GNU_SOURCE
#include "arch/arch.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "rows/sframe_format.h"

const uint8_t sfb_arch_abi = SFB_ABI_S390X_BE;

/* The saved words mirror mcontext_t (the kernel's _sigregs): psw mask and
 * address, gprs[16], acrs[16] (4 bytes each), fpc and a pad, fprs[16]. */
#define W_PSW_ADDR 1
#define W_GPR 2  /* rn is word W_GPR + n; its DWARF number is n */
#define W_FPR 27 /* fn is word W_FPR + n */
#define DWARF_GPRS 16 /* DWARF 0-15: r0-r15 */
#define DWARF_FPRS 16 /* DWARF 16-31: the floating-point registers */
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
				.sp = sfb_arch_saved_word(w, W_GPR + SFB_DWARF_SP),
				.fp = sfb_arch_saved_word(w, W_GPR + SFB_DWARF_FP),
				.ra = sfb_arch_saved_word(w, W_GPR + SFB_DWARF_RA),
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
static const unsigned char fpr_of_dwarf[DWARF_FPRS] = { 0, 2, 4, 6, 1, 3, 5, 7,
							8, 10, 12, 14, 9, 11, 13, 15 };

bool sfb_arch_reg(const struct sfb_regs *r, unsigned n, uintptr_t *out)
{
	if (n == SFB_DWARF_RA && r->have_ra) {
		*out = r->ra;
		return true;
	}
	if (!r->all || n >= DWARF_GPRS + DWARF_FPRS)
		return false;
	*out = n < DWARF_GPRS ? sfb_arch_saved_word(r->all, W_GPR + n)
			      : sfb_arch_saved_word(r->all, W_FPR + fpr_of_dwarf[n - DWARF_GPRS]);
	return true;
}

/* svc 173 (__NR_rt_sigreturn): the vDSO's __kernel_rt_sigreturn, or the
 * kernel's (and qemu-user's) copy on the stack or a page of its own.  r14
 * points at the svc itself. */
#define OP_SVC 0x0a
const uint8_t sfb_arch_sigreturn_code[SFB_SIGRETURN_LEN] = { OP_SVC, __NR_rt_sigreturn };

/* The kernel's struct rt_sigframe, at sp when the trampoline runs: the
 * 160-byte save area of the handler's caller, the 2-byte svc, the
 * siginfo (8-aligned), then the ucontext, whose uc_mcontext is _sigregs
 * (glibc's ucontext_t has the kernel's layout up to it). */
#define SIGFRAME_SIGINFO (SFB_S390X_SAVE_AREA + 8)
uintptr_t sfb_arch_sigframe_saved_at(uintptr_t sp)
{
	return sp + SIGFRAME_SIGINFO + sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext);
}

/* ld's PLTn entries: larl %r1, got; lg %r1, 0(%r1); br %r1; basr %r1, %r0;
 * lgf %r1, 12(%r1); jg plt0 (26 bytes of code, then a word).  Every
 * entry has the same larl opcode and register, lg, br and basr; the
 * offsets of larl and lgf and the target of jg vary. */
#define PLT_CODE_LEN 26
#define PLT_LARL_AT 0 /* larl %r1, got: c0 10, then a 4-byte offset */
#define PLT_LG_AT 6   /* lg %r1, 0(%r1); br %r1 */
#define PLT_BASR_AT 14 /* basr %r1, %r0: 0d 10 */
bool sfb_arch_in_plt_stub(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	static const uint8_t larl_r1[2] = { 0xc0, 0x10 };
	static const uint8_t lg_br[8] = { 0xe3, 0x10, 0x10, 0x00, 0x00, 0x04, /* lg %r1, 0(%r1) */
					  0x07, 0xf1 };                      /* br %r1 */
	static const uint8_t basr_r1[2] = { 0x0d, 0x10 };
	for (uintptr_t back = 0; back < PLT_CODE_LEN && back <= pc; back += SFB_INSN_ALIGN) {
		uintptr_t s = pc - back;
		const uint8_t *c = (const uint8_t *)s;
		if (s < lo || s + PLT_CODE_LEN > hi ||
		    c[PLT_LARL_AT] != larl_r1[0] || c[PLT_LARL_AT + 1] != larl_r1[1] ||
		    memcmp(c + PLT_LG_AT, lg_br, sizeof lg_br) != 0 ||
		    c[PLT_BASR_AT] != basr_r1[0] || c[PLT_BASR_AT + 1] != basr_r1[1])
			continue;
		return true;
	}
	return false;
}

/* A return address follows a call: brasl (6 bytes, c0 x5), bras (4, a7
 * x5), bas (4, 4d) or basr (2, 0d); for brasl and bras, x is the link
 * register and 5 the opcode's low half, in the second byte. */
#define OP_BRASL 0xc0
#define OP_BRAS 0xa7
#define OP2_BRAS 0x05 /* brasl's and bras's second byte, low half */
#define OP_BAS 0x4d
#define OP_BASR 0x0d
#define BRASL_LEN 6
#define BRAS_LEN 4
#define BAS_LEN 4
#define BASR_LEN 2
bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	/* The call lies in [lo, ra), each form tried only where it fits: a
	 * range may start with a call. */
	if (ra % SFB_INSN_ALIGN || ra <= lo || ra > hi)
		return false;
	const uintptr_t room = ra - lo;
	const uint8_t *c = (const uint8_t *)ra;
	return (room >= BRASL_LEN && c[-BRASL_LEN] == OP_BRASL &&
		(c[-BRASL_LEN + 1] & 0x0f) == OP2_BRAS) ||
	       (room >= BRAS_LEN && c[-BRAS_LEN] == OP_BRAS && (c[-BRAS_LEN + 1] & 0x0f) == OP2_BRAS) ||
	       (room >= BAS_LEN && c[-BAS_LEN] == OP_BAS) ||
	       (room >= BASR_LEN && c[-BASR_LEN] == OP_BASR);
}

/* boost.context's make_fcontext() stores "finish" as the fiber's r14,
 * and finish follows its own return:
 *     br %r14                      (07 fe)
 * finish:
 *     lghi %r2,0; brasl %r14,_exit (a7 29 00 00, c0 e5 ...)
 * and ra is finish. */
bool sfb_arch_is_fiber_exit(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	static const uint8_t br_r14[2] = { 0x07, 0xfe },
			     exit_[6] = { 0xa7, 0x29, 0x00, 0x00, 0xc0, 0xe5 };
	if (ra % SFB_INSN_ALIGN || ra < lo || ra > hi || ra - lo < sizeof br_r14 ||
	    hi - ra < sizeof exit_)
		return false;
	const uint8_t *c = (const uint8_t *)ra;
	return sfb_arch_code_is(c - sizeof br_r14, br_r14, sizeof br_r14) &&
	       sfb_arch_code_is(c, exit_, sizeof exit_);
}

/* The register save area keeps r2-r15 from offset 16 on. */
#define SAVE_AREA_GPR(n) (16 + 8 * ((n) - 2))

/* The entry saved the caller's r6-r15 in the caller's register save area,
 * which starts at the caller's SP = CFA - 160.  The library is built with
 * frame pointers, so the entry uses r11 and has saved it there. */
void sfb_arch_caller_regs(const void *frame, const void *cfa, const void *ra,
			  struct sfb_regs *r)
{
	(void)frame;
	uintptr_t sp = SFB_SP_FROM_CFA((uintptr_t)cfa);
	*r = (struct sfb_regs){ .pc = (uintptr_t)ra, .sp = sp,
				.fp = *(const uintptr_t *)(sp + SAVE_AREA_GPR(SFB_DWARF_FP)) };
}
#endif
