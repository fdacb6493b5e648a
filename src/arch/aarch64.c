/* AArch64: registers from ucontext, the rt_sigreturn trampoline, return
 * addresses signed with pointer authentication, PLT stubs.  Constants and
 * DWARF numbers: aarch64.h. */
#if defined(__aarch64__)
#define _GNU_SOURCE
#include "arch/arch.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include "rows/sframe_format.h"

const uint8_t sfb_arch_abi = SFB_ABI_AARCH64_LE;

/* The saved words mirror mcontext_t from regs[] on: x0-x30 (word n is
 * xn, whose DWARF number is n too), sp, pc, pstate. */
#define W_X(n) (n)
#define W_NX 31
#define W_SP 31
#define W_PC 32
#define W_PSTATE 33
_Static_assert(offsetof(mcontext_t, sp) == offsetof(mcontext_t, regs) + 8 * W_SP &&
		       offsetof(mcontext_t, pc) == offsetof(mcontext_t, regs) + 8 * W_PC &&
		       offsetof(mcontext_t, pstate) == offsetof(mcontext_t, regs) + 8 * W_PSTATE &&
		       W_PSTATE + 1 == SFB_SAVED_WORDS,
	       "struct sfb_saved_regs mirrors mcontext_t from regs[]");

/* In the interrupted frame the link register is live: a leaf, or a
 * function before it saved x30, still has its return address there. */
void sfb_arch_from_saved(const void *w, struct sfb_regs *r)
{
	*r = (struct sfb_regs){ .pc = sfb_arch_saved_word(w, W_PC),
				.sp = sfb_arch_saved_word(w, W_SP),
				.fp = sfb_arch_saved_word(w, W_X(SFB_DWARF_FP)),
				.ra = sfb_arch_saved_word(w, W_X(SFB_DWARF_RA)),
				.all = w,
				.have_ra = true };
}

void sfb_arch_from_ucontext(const void *uc, struct sfb_regs *r)
{
	sfb_arch_from_saved(((const ucontext_t *)uc)->uc_mcontext.regs, r);
}

bool sfb_arch_reg(const struct sfb_regs *r, unsigned n, uintptr_t *out)
{
	if (n == SFB_DWARF_RA && r->have_ra) {
		*out = r->ra;
		return true;
	}
	if (r->all && n < W_NX) {
		*out = sfb_arch_saved_word(r->all, W_X(n));
		return true;
	}
	return false;
}

/* The vDSO's __kernel_rt_sigreturn (and qemu-user's copy of it): mov x8,
 * #139 (__NR_rt_sigreturn); svc #0. */
const uint8_t sfb_arch_sigreturn_code[SFB_SIGRETURN_LEN] = {
	0x68, 0x11, 0x80, 0xd2, /* mov x8, #139 */
	0x01, 0x00, 0x00, 0xd4, /* svc #0 */
};

/* At the trampoline sp points at the kernel's struct rt_sigframe: a
 * siginfo, then the ucontext (glibc's ucontext_t has the kernel's layout
 * up to and including uc_mcontext). */
uintptr_t sfb_arch_sigframe_saved_at(uintptr_t sp)
{
	return sp + sizeof(siginfo_t) + offsetof(ucontext_t, uc_mcontext.regs);
}

/* xpaclri (hint #7, a NOP on cores without pointer authentication)
 * strips x30 of the signature of either instruction key.  Written as the
 * hint so that any assembler takes it. */
#define XPACLRI "hint 7"
uintptr_t sfb_arch_strip_pac(uintptr_t ra)
{
	register uintptr_t x30 __asm__("x30") = ra;
	__asm__(XPACLRI : "+r"(x30));
	return x30;
}

#define INSN_LEN 4

/* Instruction encodings; a _MASK keeps the bits that do not vary with the
 * operands (INSN_IS: does instruction i match op under mask m). */
#define INSN_IS(i, m, op) (((i) & (m)) == (op))
#define A64_BTI_C 0xd503245fu
#define A64_ADRP_X16 0x90000010u        /* adrp x16, page */
#define A64_ADRP_MASK 0x9f00001fu
#define A64_LDR_X17_X16 0xf9400211u     /* ldr x17, [x16, #off] */
#define A64_ADD_X16_X16 0x91000210u     /* add x16, x16, #off */
#define A64_IMM12_MASK 0xffc003ffu      /* both: the 12-bit offset varies */
#define A64_AUTIA1716 0xd503219fu
#define A64_AUTIB1716 0xd50321dfu
#define A64_BR_X17 0xd61f0220u
#define A64_BL 0x94000000u              /* bl imm26 */
#define A64_BL_MASK 0xfc000000u
#define A64_BLR 0xd63f0000u             /* blr xn */
#define A64_BLR_MASK 0xfffffc1fu
#define A64_BLRA_Z 0xd63f081fu          /* blraaz, blrabz xn */
#define A64_BLRA_Z_MASK 0xfffff81fu
#define A64_BLRA 0xd73f0800u           /* blraa, blrab xn, xm */
#define A64_BLRA_MASK 0xfffff800u

/* ld's PLTn stubs: [bti c;] adrp x16, page; ldr x17, [x16, #off];
 * add x16, x16, #off; [autia1716 | autib1716;] br x17. */
#define PLT_STUB_MAX 6 /* instructions */
static unsigned plt_stub_len(uintptr_t s, uintptr_t lo, uintptr_t hi)
{
	uint32_t i[PLT_STUB_MAX];
	unsigned n = 0, k = 0;
	if (s < lo || s % INSN_LEN)
		return 0;
	for (; k < PLT_STUB_MAX && s + INSN_LEN * k + INSN_LEN <= hi; k++)
		memcpy(&i[k], (const void *)(s + INSN_LEN * k), INSN_LEN);
	if (k > 0 && i[0] == A64_BTI_C)
		n++;
	if (k < n + 4 /* adrp, ldr, add, br */ || !INSN_IS(i[n], A64_ADRP_MASK, A64_ADRP_X16) ||
	    !INSN_IS(i[n + 1], A64_IMM12_MASK, A64_LDR_X17_X16) ||
	    !INSN_IS(i[n + 2], A64_IMM12_MASK, A64_ADD_X16_X16))
		return 0;
	n += 3;
	if (n < k && (i[n] == A64_AUTIA1716 || i[n] == A64_AUTIB1716))
		n++;
	return n < k && i[n] == A64_BR_X17 ? INSN_LEN * (n + 1) : 0;
}

/* Is pc inside a stub: one that starts at most PLT_STUB_MAX - 1
 * instructions back and reaches past pc. */
bool sfb_arch_in_plt_stub(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	for (uintptr_t back = 0; back < INSN_LEN * PLT_STUB_MAX && back <= pc; back += INSN_LEN)
		if (plt_stub_len(pc - back, lo, hi) > back)
			return true;
	return false;
}

/* The n instructions from at into i, if [at, at + n instructions) lies
 * in the code [lo, hi): code is read only there. */
static bool insns_at(uintptr_t at, unsigned n, uintptr_t lo, uintptr_t hi, uint32_t *i)
{
	if (at % INSN_LEN || at < lo || at > hi || hi - at < (uintptr_t)INSN_LEN * n)
		return false;
	memcpy(i, (const void *)at, (size_t)INSN_LEN * n);
	return true;
}

/* A return address follows a BL, a BLR or one of the authenticating
 * BLRAA, BLRAAZ, BLRAB, BLRABZ. */
bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	uint32_t i;
	if (!insns_at(ra - INSN_LEN, 1, lo, hi, &i))
		return false;
	return INSN_IS(i, A64_BL_MASK, A64_BL) || INSN_IS(i, A64_BLR_MASK, A64_BLR) ||
	       INSN_IS(i, A64_BLRA_Z_MASK, A64_BLRA_Z) || INSN_IS(i, A64_BLRA_MASK, A64_BLRA);
}

/* boost.context's make_fcontext() stores "finish" as the fiber's x30,
 * and finish follows its own return:
 *     ret x30
 * finish:
 *     mov x0, #0; bl _exit
 * and ra is finish. */
#define A64_RET_X30 0xd65f03c0u
#define A64_MOV_X0_0 0xd2800000u /* movz x0, #0 */

bool sfb_arch_is_fiber_exit(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	uint32_t i[3];
	if (!insns_at(ra - INSN_LEN, 3, lo, hi, i))
		return false;
	return i[0] == A64_RET_X30 && i[1] == A64_MOV_X0_0 && INSN_IS(i[2], A64_BL_MASK, A64_BL);
}

/* glibc's lazy-binding resolver (_dl_runtime_resolve) is entered from
 * the PLT header, which pushed x16 and x30 (stp x16, x30, [sp, #-16]!),
 * and its CFI leaves those 16 bytes out: its CFA is SP at its entry, 16
 * below the caller's SP, with x30 saved above it, at CFA + 8.  Applied as
 * written, the caller's CFA comes out 16 low and its return address is
 * read from the PLT's push: the caller again, then garbage.  A return
 * address saved above the CFA is never right (that is the caller's
 * frame), and this is the one place it is known: the CFA is moved up
 * over the push, which puts x30 at CFA - 8, and every slot the row reads
 * from the CFA moves with it.  The resolver's first instruction, where
 * glibc puts a landing pad (bti c, or a nop in its place) before the CFI
 * saves x30, has the row of any function's entry (CFA = SP, x30 live):
 * it is told by its code, the landing pad and then the save of x8 and x9
 * that no compiled function opens with. */
#define PLT_PUSH 16
#define A64_NOP 0xd503201fu
#define A64_STP_X8_X9_PRE 0xa98027e8u /* stp x8, x9, [sp, #-imm]! */
#define A64_STP_PRE_IMM_MASK 0xffc07fffu

static void move_cfa_slot(struct sfb_loc *l)
{
	if (l->kind == SFB_LOC_EXPR && l->reg == SFB_REG_CFA)
		l->off -= PLT_PUSH;
}

static bool is_resolver_entry(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	uint32_t i[2];
	if (!insns_at(pc, 2, lo, hi, i))
		return false;
	return (i[0] == A64_BTI_C || i[0] == A64_NOP) &&
	       INSN_IS(i[1], A64_STP_PRE_IMM_MASK, A64_STP_X8_X9_PRE);
}

void sfb_arch_fix_row(uintptr_t pc, uintptr_t lo, uintptr_t hi, struct sfb_row *row)
{
	if (row->cfa.kind != SFB_LOC_EXPR || row->cfa.deref || row->cfa.off > INT32_MAX - PLT_PUSH)
		return;
	bool ra_above = row->ra.kind == SFB_LOC_EXPR && row->ra.deref &&
			row->ra.reg == SFB_REG_CFA && row->ra.off == 8;
	bool at_entry = row->ra.kind == SFB_LOC_SAME && row->cfa.reg == SFB_DWARF_SP &&
			row->cfa.off == 0 && pc == row->func_start && is_resolver_entry(pc, lo, hi);
	if (!ra_above && !at_entry)
		return;
	row->cfa.off += PLT_PUSH;
	move_cfa_slot(&row->ra);
	move_cfa_slot(&row->fp);
	for (unsigned k = 0; k < row->nregs && k < SFB_ROW_REGS; k++)
		move_cfa_slot(&row->regs[k].loc);
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
