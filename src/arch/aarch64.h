/* AArch64's constants for the walker (arch.h says what each means; this
 * header is included by arch.h only).
 *
 * DWARF numbers: 0-30 x0-x30 (29 the frame pointer, 30 the link register,
 * the return address column), 31 sp. */
#ifndef SFB_ARCH_AARCH64_H
#define SFB_ARCH_AARCH64_H

#define SFB_DWARF_X19 19
#define SFB_DWARF_SP 31
#define SFB_DWARF_FP 29 /* x29 */
#define SFB_DWARF_RA 30 /* x30, the link register */

/* A call leaves SP alone: the callee's CFA is the caller's SP, which is
 * SP itself at the callee's entry. */
#define SFB_SP_FROM_CFA(cfa) (cfa)
#define SFB_ENTRY_CFA 0

/* x19-x28. */
#define SFB_CALLEE_SAVED (0x3ffull << SFB_DWARF_X19)

#define SFB_SAVED_WORDS 34  /* mcontext_t's regs[31], sp, pc, pstate */
#define SFB_SIGRETURN_LEN 8 /* mov x8, #139; svc #0 */
#define SFB_INSN_ALIGN 4

/* No red zone: a signal frame may be written right below SP. */
#define SFB_RED_ZONE 0u

/* Return addresses may carry a pointer-authentication signature. */
#define SFB_ARCH_PAC 1
#define SFB_ARCH_FIXES_TOPMOST 0
#define SFB_ARCH_FIXES_ROWS 1

/* The frame record x29 points at: {x29, x30}.  The record need not sit at
 * the top of the frame, so the CFA this gives may lie below the real one:
 * only a lower bound of the caller's SP, after which a row based on SP
 * would read the wrong slots. */
#define SFB_FP_RULE 1
#define SFB_FP_CFA_EXACT 0
#define SFB_FP_CFA_OFFSET 16
#define SFB_FP_RA_OFFSET (-8)
#define SFB_FP_FP_OFFSET (-16)

#endif
