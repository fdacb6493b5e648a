/* What the walker needs from an architecture.  One file per architecture
 * implements it: x86_64.c (aarch64.c and s390x.c follow the
 * same shape).  Everything here is async-signal-safe. */
#ifndef SFB_ARCH_H
#define SFB_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "base/memread.h"
#include "rows/sframe_decode.h"

/* Register state of one frame. */
struct sfb_regs {
	uintptr_t pc, sp, fp;
	uintptr_t ra;        /* link register (AArch64 x30, s390x r14); x86-64: unused */
	/* Every register, known only in the topmost frame of a ucontext walk
	 * and in the frame right after a signal frame; NULL elsewhere (the
	 * walker then tracks the callee-saved ones itself).  Points at the
	 * registers as the kernel saved them: in the caller's ucontext, or in
	 * the walker's checked copy of a signal frame's (struct
	 * sfb_saved_regs).  Not copied up front: only a rule based on a
	 * register other than SP and FP reads one (sfb_arch_reg()). */
	const void *all;
	bool have_ra;        /* ra holds the live link register */
};

/* The SFrame ABI this build walks, and its stack rules. */
extern const uint8_t sfb_arch_abi;
#define SFB_CFA_ALIGN 8u

/* DWARF numbers of the stack and frame pointers, and how the caller's
 * stack pointer follows from the CFA: constants the walker's inner loop
 * uses without a call.  SFB_SAVED_WORDS: the words of a signal frame's
 * registers the walker keeps (struct sfb_saved_regs).  SFB_FP_*: the
 * frame-pointer rule (a frame record of the caller's FP and RA at FP),
 * where the ABI has one: CFA = FP + SFB_FP_CFA_OFFSET, RA and FP saved
 * at CFA + SFB_FP_RA_OFFSET and CFA + SFB_FP_FP_OFFSET; SFB_FP_CFA_EXACT
 * if that CFA gives the caller's SP exactly.  SFB_ARCH_PAC,
 * SFB_ARCH_FIXES_TOPMOST: whether the architecture needs
 * sfb_arch_strip_pac() and sfb_arch_fix_topmost_row() (below); one that
 * does not gets the inline no-op written here, which the walker's calls
 * compile away to. */
#if defined(__x86_64__)
#define SFB_DWARF_SP 7
#define SFB_DWARF_FP 6
#define SFB_SP_FROM_CFA(cfa) (cfa)
/* A call pushes the return address just below the caller's CFA, always:
 * the memoised rows need not say where it is (rowmemo.h). */
#define SFB_RA_SLOT (-1)
#define SFB_SAVED_WORDS 23 /* NGREG: the ucontext's gregs[] */
#define SFB_FP_RULE 1      /* push %rbp; mov %rsp, %rbp */
/* Callee-saved registers other than SP and FP, by DWARF number (rbx,
 * r12-r15): a caller's value of one is known after a CFI step that says
 * where it was saved or leaves it alone (walk.c). */
#define SFB_CALLEE_SAVED ((1ull << 3) | (0xfull << 12))
#define SFB_SIGRETURN_LEN 9 /* mov $15, %rax; syscall */
#define SFB_DWARF_RA 16    /* the return-address column */
#define SFB_ENTRY_CFA 8    /* CFA = SP + this at a function's entry */
#define SFB_INSN_ALIGN 1
#define SFB_ARCH_PAC 0
#define SFB_ARCH_FIXES_TOPMOST 1 /* .plt.got stubs (x86_64.c) */
#define SFB_FP_CFA_EXACT 1 /* the rule's CFA is the caller's SP */
#define SFB_FP_CFA_OFFSET 16
#define SFB_FP_RA_OFFSET (-8)
#define SFB_FP_FP_OFFSET (-16)
#elif defined(__aarch64__)
#define SFB_DWARF_SP 31
#define SFB_DWARF_FP 29
#define SFB_SP_FROM_CFA(cfa) (cfa)
#define SFB_SAVED_WORDS 34 /* regs[31], sp, pc, pstate */
#define SFB_CALLEE_SAVED (0x3ffull << 19) /* x19-x28 */
#define SFB_SIGRETURN_LEN 8 /* mov x8, #139; svc #0 */
#define SFB_DWARF_RA 30 /* x30, the link register */
#define SFB_ENTRY_CFA 0
#define SFB_INSN_ALIGN 4
/* Return addresses may carry a pointer-authentication signature. */
#define SFB_ARCH_PAC 1
#define SFB_ARCH_FIXES_TOPMOST 0
/* The frame record x29 points at: {x29, x30}.  The record need not sit at
 * the top of the frame, so the CFA this gives may lie below the real one:
 * only a lower bound of the caller's SP, after which a row based on SP
 * would read the wrong slots. */
#define SFB_FP_RULE 1
#define SFB_FP_CFA_EXACT 0
#define SFB_FP_CFA_OFFSET 16
#define SFB_FP_RA_OFFSET (-8)
#define SFB_FP_FP_OFFSET (-16)
#elif defined(__s390x__)
#define SFB_DWARF_SP 15
#define SFB_DWARF_FP 11
/* The CFA is the caller's SP plus its 160-byte register save area. */
#define SFB_SP_FROM_CFA(cfa) ((cfa) - 160)
/* _sigregs: psw (2 words), gprs[16], acrs[16] (8 words), fpc and pad (1),
 * fprs[16]: the ucontext's mcontext_t, as the kernel saved it. */
#define SFB_SAVED_WORDS 43
/* r6-r10, r12, r13 and f8-f15 (DWARF 24-31) */
#define SFB_CALLEE_SAVED ((0x1full << 6) | (3ull << 12) | (0xffull << 24))
#define SFB_SIGRETURN_LEN 2 /* svc 173 */
#define SFB_DWARF_RA 14 /* r14, the link register */
#define SFB_ENTRY_CFA 160
#define SFB_INSN_ALIGN 2
#define SFB_ARCH_PAC 0
#define SFB_ARCH_FIXES_TOPMOST 0
/* r11 is a frame pointer only by convention, with no record of the
 * caller's FP and RA at a fixed place: no frame-pointer rule. */
#define SFB_FP_RULE 0
#define SFB_FP_CFA_EXACT 0
#define SFB_FP_CFA_OFFSET 0
#define SFB_FP_RA_OFFSET 0
#define SFB_FP_FP_OFFSET 0
#else
#error "sframebt: unsupported architecture (x86-64, AArch64 and s390x are)"
#endif

/* A signal frame's registers, as the kernel saved them. */
struct sfb_saved_regs {
	uintptr_t w[SFB_SAVED_WORDS];
};

/* Word i of registers as the kernel saved them: a ucontext's, or the
 * walker's copy in struct sfb_saved_regs (whose words are uintptr_t, the
 * ucontext's not always: read as bytes, not through either type). */
static inline uintptr_t sfb_arch_saved_word(const void *w, unsigned i)
{
	uintptr_t v;
	memcpy(&v, (const char *)w + sizeof v * i, sizeof v);
	return v;
}

/* Fill regs from an SA_SIGINFO ucontext (not NULL), which must outlive
 * the walk. */
void sfb_arch_from_ucontext(const void *uc, struct sfb_regs *regs);

/* Fill regs from the SFB_SAVED_WORDS words the kernel saved (a
 * ucontext's, or a signal frame's copy in struct sfb_saved_regs), which
 * regs->all then points at. */
void sfb_arch_from_saved(const void *w, struct sfb_regs *regs);

/* The value of DWARF register n, other than SP and FP (the walker holds
 * those: walk.c, reg_value()), in regs, if known. */
bool sfb_arch_reg(const struct sfb_regs *regs, unsigned n, uintptr_t *out);

/* The code of the kernel's signal-return trampoline (SFB_SIGRETURN_LEN
 * bytes, at an address aligned to SFB_INSN_ALIGN), which a signal
 * handler returns to without a call: the walker recognises it by these
 * bytes (walk.c, is_sigreturn()). */
extern const uint8_t sfb_arch_sigreturn_code[SFB_SIGRETURN_LEN];

/* Where the interrupted registers (SFB_SAVED_WORDS words) lie in the
 * signal frame found at sp, the stack pointer when the trampoline runs:
 * the walker copies them from there, every word a checked read (walk.c,
 * sigframe_regs()). */
uintptr_t sfb_arch_sigframe_saved_at(uintptr_t sp);

/* Is ra just after a call instruction in [code_lo, code_hi)? */
bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t code_lo, uintptr_t code_hi);

/* Remove pointer-authentication bits from a return address (AArch64). */
#if SFB_ARCH_PAC
uintptr_t sfb_arch_strip_pac(uintptr_t ra);
#else
static inline uintptr_t sfb_arch_strip_pac(uintptr_t ra)
{
	return ra;
}
#endif

/* The registers of the caller of a public entry point, from the entry's
 * own frame: its __builtin_frame_address(0) (the library is built with
 * frame pointers), __builtin_dwarf_cfa() and __builtin_return_address(0),
 * evaluated in the entry itself so that "caller" is the user. */
void sfb_arch_caller_regs(const void *frame, const void *cfa, const void *ra,
			  struct sfb_regs *regs);

/* Is pc inside a PLT stub that no unwind table describes (ld writes no
 * CFI for .plt on AArch64 and s390x)?  Such a stub touches neither SP nor
 * the link register, so at the topmost frame the CFA is the function
 * entry's (SFB_ENTRY_CFA) and the RA still in its register (walk.c). */
bool sfb_arch_in_plt_stub(uintptr_t pc, uintptr_t code_lo, uintptr_t code_hi);

/* Correct a row that toolchains are known to get wrong at the topmost
 * frame (x86-64: PLT stubs that have not pushed anything yet). */
#if SFB_ARCH_FIXES_TOPMOST
void sfb_arch_fix_topmost_row(uintptr_t pc, uintptr_t code_lo, uintptr_t code_hi,
			      struct sfb_row *row);
#else
static inline void sfb_arch_fix_topmost_row(uintptr_t pc, uintptr_t code_lo, uintptr_t code_hi,
					    struct sfb_row *row)
{
	(void)pc, (void)code_lo, (void)code_hi, (void)row;
}
#endif

#endif
