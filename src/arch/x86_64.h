/* x86-64's constants for the walker (arch.h says what each means; this
 * header is included by arch.h only).
 *
 * DWARF numbers: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
 * 8-15 r8-r15, 16 rip (the return address column). */
#ifndef SFB_ARCH_X86_64_H
#define SFB_ARCH_X86_64_H

#define SFB_DWARF_RBX 3
#define SFB_DWARF_R12 12
#define SFB_DWARF_SP 7  /* rsp */
#define SFB_DWARF_FP 6  /* rbp */
#define SFB_DWARF_RA 16 /* the return-address column */

/* A call pushes the return address just below the caller's SP, which is
 * the callee's CFA. */
#define SFB_SP_FROM_CFA(cfa) (cfa)
#define SFB_ENTRY_CFA 8 /* the return address only */
/* The return address is always just below the CFA: the memoised rows
 * need not say where it is (rowmemo.h). */
#define SFB_RA_SLOT (-1)

/* rbx and r12-r15. */
#define SFB_CALLEE_SAVED ((1ull << SFB_DWARF_RBX) | (0xfull << SFB_DWARF_R12))

#define SFB_SAVED_WORDS 23  /* NGREG: the ucontext's gregs[] */
#define SFB_SIGRETURN_LEN 9 /* mov $15, %rax; syscall */
#define SFB_INSN_ALIGN 1

/* The red zone: 128 bytes below SP that a signal leaves alone. */
#define SFB_RED_ZONE 128u

#define SFB_ARCH_PAC 0
#define SFB_ARCH_FIXES_TOPMOST 1 /* .plt.got stubs (x86_64.c) */
#define SFB_ARCH_FIXES_ROWS 0

/* push %rbp; mov %rsp, %rbp: the caller's rbp at rbp, the return
 * address above it, and the caller's SP above that. */
#define SFB_FP_RULE 1
#define SFB_FP_CFA_EXACT 1
#define SFB_FP_CFA_OFFSET 16
#define SFB_FP_RA_OFFSET (-8)
#define SFB_FP_FP_OFFSET (-16)

#endif
