/* s390x's constants for the walker (arch.h says what each means; this
 * header is included by arch.h only).
 *
 * DWARF numbers: 0-15 r0-r15 (r11 the frame pointer, r14 the return
 * address, r15 sp), 16-31 the floating-point registers in the order f0 f2
 * f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13 f15. */
#ifndef SFB_ARCH_S390X_H
#define SFB_ARCH_S390X_H

#define SFB_DWARF_R6 6
#define SFB_DWARF_R12 12
#define SFB_DWARF_F8 24 /* f8-f15 are DWARF 24-31 */
#define SFB_DWARF_SP 15 /* r15 */
#define SFB_DWARF_FP 11 /* r11 */
#define SFB_DWARF_RA 14 /* r14, the link register */

/* Every frame starts with a register save area for its callees: a
 * frame's CFA is its caller's SP plus that area, and SP + that area at a
 * function's entry. */
#define SFB_S390X_SAVE_AREA 160
#define SFB_SP_FROM_CFA(cfa) ((cfa) - SFB_S390X_SAVE_AREA)
#define SFB_ENTRY_CFA SFB_S390X_SAVE_AREA

/* r6-r10, r12, r13 and f8-f15. */
#define SFB_CALLEE_SAVED \
	((0x1full << SFB_DWARF_R6) | (3ull << SFB_DWARF_R12) | (0xffull << SFB_DWARF_F8))

/* mcontext_t (the kernel's _sigregs): psw (2 words), gprs[16], acrs[16]
 * (8 words), fpc and pad (1), fprs[16]. */
#define SFB_SAVED_WORDS 43
#define SFB_SIGRETURN_LEN 2 /* svc 173 */
#define SFB_INSN_ALIGN 2

/* No red zone: a signal frame may be written right below SP. */
#define SFB_RED_ZONE 0u

#define SFB_ARCH_PAC 0
#define SFB_ARCH_FIXES_TOPMOST 0
#define SFB_ARCH_FIXES_ROWS 0

/* r11 is a frame pointer only by convention, with no record of the
 * caller's FP and RA at a fixed place: no frame-pointer rule. */
#define SFB_FP_RULE 0
#define SFB_FP_CFA_EXACT 0
#define SFB_FP_CFA_OFFSET 0
#define SFB_FP_RA_OFFSET 0
#define SFB_FP_FP_OFFSET 0

#endif
