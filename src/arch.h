/* What the walker needs from an architecture.  One file per architecture
 * implements it: arch_x86_64.c (arch_aarch64.c and arch_s390x.c follow the
 * same shape).  Everything here is async-signal-safe. */
#ifndef SFB_ARCH_H
#define SFB_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include "memread.h"
#include "sframe_decode.h"

/* Register state of one frame. */
struct sfb_regs {
	uintptr_t pc, sp, fp;
	uintptr_t ra;        /* link register (AArch64 x30, s390x r14); x86-64: unused */
	/* Every general register, known only in the topmost frame of a
	 * ucontext walk and in the frame right after a signal frame; NULL
	 * elsewhere (callee-clobbered).  Points at the registers as the kernel
	 * saved them: in the caller's ucontext, or in the walker's checked
	 * copy of a signal frame's (struct sfb_saved_regs).  Not copied up
	 * front: only a rule based on a register other than SP and FP reads
	 * one (sfb_arch_reg()), and a sample copying all of them cost about
	 * 40 instructions for nothing. */
	const void *all;
	bool have_ra;        /* ra holds the live link register */
};

/* The SFrame ABI this build walks, and its stack rules. */
extern const uint8_t sfb_arch_abi;
#define SFB_CFA_ALIGN 8u

/* DWARF numbers of the stack and frame pointers, and how the caller's
 * stack pointer follows from the CFA: constants the walker's inner loop
 * uses without a call. */
#if defined(__x86_64__)
#define SFB_DWARF_SP 7
#define SFB_DWARF_FP 6
#define SFB_SP_FROM_CFA(cfa) (cfa)
/* A call pushes the return address just below the caller's CFA, always:
 * the memoised rows need not say where it is (rowmemo.h). */
#define SFB_RA_SLOT (-1)
#define SFB_SAVED_WORDS 23 /* NGREG: the ucontext's gregs[] */
#elif defined(__aarch64__)
#define SFB_DWARF_SP 31
#define SFB_DWARF_FP 29
#define SFB_SP_FROM_CFA(cfa) (cfa)
#define SFB_SAVED_WORDS 34 /* regs[31], sp, pc, pstate */
#elif defined(__s390x__)
#define SFB_DWARF_SP 15
#define SFB_DWARF_FP 11
#define SFB_SP_FROM_CFA(cfa) ((cfa) - 160)
#define SFB_SAVED_WORDS 18 /* psw (2 words), gprs[16] */
#endif

/* A signal frame's registers, as the kernel saved them. */
struct sfb_saved_regs {
	uintptr_t w[SFB_SAVED_WORDS];
};

/* Fill regs from an SA_SIGINFO ucontext, which must outlive the walk.
 * False if it is unusable. */
bool sfb_arch_from_ucontext(const void *uc, struct sfb_regs *regs);

/* The value of DWARF register n in regs, if known. */
bool sfb_arch_reg(const struct sfb_regs *regs, unsigned n, uintptr_t *out);

/* Is code at pc the kernel signal-return trampoline?  code_lo/hi bound
 * where code may be read (the object's executable segment). */
bool sfb_arch_is_sigreturn(uintptr_t pc, uintptr_t code_lo, uintptr_t code_hi);

/* The interrupted registers from the signal frame found at sp (the stack
 * pointer when the trampoline runs), read through m into *saved, which
 * out->all then points at.  False if unreadable. */
bool sfb_arch_sigframe_regs(struct sfb_mem *m, uintptr_t sp, struct sfb_saved_regs *saved,
			    struct sfb_regs *out);

/* Is ra just after a call instruction in [code_lo, code_hi)? */
bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t code_lo, uintptr_t code_hi);

/* Remove pointer-authentication bits from a return address (AArch64). */
uintptr_t sfb_arch_strip_pac(uintptr_t ra);

/* Correct a row that toolchains are known to get wrong at the topmost
 * frame (x86-64: PLT stubs that have not pushed anything yet). */
void sfb_arch_fix_topmost_row(uintptr_t pc, uintptr_t code_lo, uintptr_t code_hi,
			      struct sfb_row *row);

/* The frame-pointer rule: caller's CFA, RA and FP slots relative to FP. */
#define SFB_FP_CFA_OFFSET 16
#define SFB_FP_RA_OFFSET (-8)  /* relative to the CFA */
#define SFB_FP_FP_OFFSET (-16) /* relative to the CFA */

#endif
