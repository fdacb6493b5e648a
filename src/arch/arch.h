/* What the walker and the memo need from an architecture: this header is
 * the interface, and the one place the architecture is chosen, by the
 * compiler's target.  Each architecture is a pair of files: NAME.h, its
 * constants (below, "Constants"), and NAME.c, its functions (x86_64,
 * aarch64, s390x; src/arch/build.mk compiles the one the Makefile's ARCH
 * names).  Everything here is async-signal-safe. */
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

/* The SFrame ABI this build walks. */
extern const uint8_t sfb_arch_abi;

/* A CFA is a caller's SP at a call, which each ABI keeps at least
 * 8-aligned. */
#define SFB_CFA_ALIGN 8u

/* Constants: what NAME.h defines, as constants so that the walker's inner
 * loop uses them without a call.
 *   SFB_DWARF_SP, SFB_DWARF_FP, SFB_DWARF_RA: DWARF numbers of the stack
 *     and frame pointers and of the return-address column.
 *   SFB_SP_FROM_CFA(cfa): the caller's SP, from a frame's CFA.
 *   SFB_ENTRY_CFA: CFA = SP + this at a function's first instruction.
 *   SFB_RA_SLOT: defined only where the return address is always at
 *     CFA + 8 * SFB_RA_SLOT (the memoised rows then need not say).
 *   SFB_CALLEE_SAVED: a bit per DWARF number of the callee-saved
 *     registers other than SP and FP; a caller's value of one is known
 *     after a CFI step that says where it was saved or leaves it alone
 *     (walk.c).
 *   SFB_SAVED_WORDS: the words of a signal frame's registers the walker
 *     keeps (struct sfb_saved_regs).
 *   SFB_RED_ZONE: the bytes below SP that the ABI keeps for the running
 *     function and a signal leaves alone (the interrupted frame may hold
 *     a value there).
 *   SFB_SIGRETURN_LEN, SFB_INSN_ALIGN: the length of the signal-return
 *     trampoline's code (sfb_arch_sigreturn_code) and the alignment of
 *     an instruction.
 *   SFB_ARCH_PAC, SFB_ARCH_FIXES_TOPMOST, SFB_ARCH_FIXES_ROWS: whether
 *     the architecture needs sfb_arch_strip_pac(), sfb_arch_fix_topmost_row()
 *     and sfb_arch_fix_row() (below); one that does not gets the inline
 *     no-op written here, which the walker's calls compile away to.
 *   SFB_FP_RULE: whether the ABI has a frame-pointer rule (a frame record
 *     of the caller's FP and RA at FP): CFA = FP + SFB_FP_CFA_OFFSET, RA
 *     and FP saved at CFA + SFB_FP_RA_OFFSET and CFA + SFB_FP_FP_OFFSET;
 *     SFB_FP_CFA_EXACT if that CFA gives the caller's SP exactly. */
#if defined(__x86_64__)
#include "arch/x86_64.h"
#elif defined(__aarch64__)
#include "arch/aarch64.h"
#elif defined(__s390x__)
#include "arch/s390x.h"
#else
#error "sframebt: unsupported architecture (x86-64, AArch64 and s390x are)"
#endif

/* Rules by name, for rows the architecture writes itself (row.h). */
/* CFA = SP + off. */
static inline struct sfb_loc sfb_arch_cfa_sp_plus(int32_t off)
{
	return (struct sfb_loc){ .kind = SFB_LOC_EXPR, .reg = SFB_DWARF_SP, .off = off };
}

/* The CFA at a function's first instruction, before it has pushed
 * anything or moved SP. */
static inline struct sfb_loc sfb_arch_entry_cfa(void)
{
	return sfb_arch_cfa_sp_plus(SFB_ENTRY_CFA);
}

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

/* Whether the n bytes of code at c are want's (a loop, not memcmp(): the
 * signal path calls nothing it need not). */
static inline bool sfb_arch_code_is(const uint8_t *c, const uint8_t *want, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i] != want[i])
			return false;
	return true;
}

/* Is ra, in [code_lo, code_hi), the exit of boost.context's fiber
 * trampoline (PHP's Fibers, Boost.Coroutine2, Boost.Asio's coroutines
 * use it), which its make_fcontext() gives a fiber's function as its
 * return address, no call before it and no CFI for it: the last frame
 * of a fiber's stack, recognised by its code as the signal trampoline is
 * (walk.c, is_fiber_end()).  Each architecture's file gives the code of
 * boost's make_fcontext() for it. */
bool sfb_arch_is_fiber_exit(uintptr_t ra, uintptr_t code_lo, uintptr_t code_hi);

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

/* Correct the row for pc, in code [code_lo, code_hi), where a known
 * toolchain or library gets it wrong at any frame (AArch64: glibc's
 * lazy-binding resolver, whose CFA leaves out what the PLT pushed), as
 * the object's own tables give it, before the walk applies or memoises
 * it. */
#if SFB_ARCH_FIXES_ROWS
void sfb_arch_fix_row(uintptr_t pc, uintptr_t code_lo, uintptr_t code_hi, struct sfb_row *row);
#else
static inline void sfb_arch_fix_row(uintptr_t pc, uintptr_t code_lo, uintptr_t code_hi,
				    struct sfb_row *row)
{
	(void)pc, (void)code_lo, (void)code_hi, (void)row;
}
#endif

#endif
