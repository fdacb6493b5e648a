/* chains_lib.h - call chains for t_walk_chains and t_every_insn.
 *
 * A chain is a sequence of calls across the test executable
 * (tests/walk/chains_exe.c, tests/walk/chains_asm.S), a shared object linked to it
 * (tests/walk/chains_linked.c -> libsfb_chains_linked.so) and a dlopen()ed one
 * (tests/walk/chains_dl.c -> libsfb_chains_dl.so), all built with
 * -Wa,--gsframe by the host binutils (SFrame V1 here).  Every function is
 * exported, noinline/noipa, and keeps its frame live across its call (a
 * volatile read after the call), so none of them tail-calls.
 *
 * Functions that end a segment of a chain call the next "hop" through the
 * context: chains_next(ctx) calls ctx->hop[ctx->pos++](ctx).  The asm
 * function chains_realign does the same by hand, so the layout of struct
 * chains_ctx is fixed: hop[] at offset 0, pos at offset 64. */
#ifndef SFB_CHAINS_LIB_H
#define SFB_CHAINS_LIB_H

#if defined(__GNUC__) && !defined(__clang__)
#define CHAINS_FN __attribute__((noinline, noclone, noipa, visibility("default")))
#else
#define CHAINS_FN __attribute__((noinline, visibility("default")))
#endif

typedef int (*chains_fn)(void *ctx);

struct chains_ctx {
	chains_fn hop[8]; /* offset 0 */
	int pos;          /* offset 64 */
	int depth;        /* chains_ex_recurse */
	void *user;
};

static inline int chains_next(void *c)
{
	struct chains_ctx *x = c;
	return x->hop[x->pos++](c);
}

/* libsfb_chains_linked.so: chains_lk_outer -(PLT)-> chains_lk_mid -> next;
 * chains_lk_got -> next (the executable both calls it and takes its
 * address, so its call goes through the executable's .plt.got). */
int chains_lk_outer(void *ctx);
int chains_lk_mid(void *ctx);
int chains_lk_got(void *ctx);

/* libsfb_chains_dl.so (dlopen only): chains_dl_outer -(PLT)-> chains_dl_big
 * (a ~1.5 KiB frame: 2-byte CFA offsets) -(PLT)-> chains_dl_mid -> next. */
int chains_dl_outer(void *ctx);
int chains_dl_big(void *ctx);
int chains_dl_mid(void *ctx);

/* tests/walk/chains_exe.c (in the test executable).
 *   chains_ex_a -> chains_ex_alloca (alloca: CFA = fp+16) -> chains_ex_big
 *   (1 KiB frame) -(.plt)-> chains_lk_outer -> chains_lk_mid -> next.
 *   chains_ex_mid -(.plt.got)-> chains_lk_got -> next.
 *   chains_ex_to_dl -> (*chains_dl_entry)(ctx) (set by the test).
 *   chains_ex_drap: 64-byte aligned local + VLA (gcc realigns through DRAP;
 *   binutils 2.40 writes no FDE for it) -> next.
 *   chains_ex_recurse: ctx->depth levels, then next. */
int chains_ex_a(void *ctx);
int chains_ex_alloca(void *ctx, int n);
int chains_ex_big(void *ctx);
int chains_ex_mid(void *ctx);
int chains_ex_to_dl(void *ctx);
int chains_ex_drap(void *ctx);
int chains_ex_recurse(void *ctx);
extern chains_fn chains_dl_entry;
/* Return addresses the functions above saw on their last call
 * (__builtin_return_address(0)), by CHAINS_RA_* index. */
enum { CHAINS_RA_A, CHAINS_RA_ALLOCA, CHAINS_RA_BIG, CHAINS_RA_MID,
       CHAINS_RA_TO_DL, CHAINS_RA_DRAP, CHAINS_RA_COUNT };
extern void *chains_ra[CHAINS_RA_COUNT];

/* tests/walk/chains_asm.S.
 * chains_realign: realigns the stack with the CFA kept in %rbx
 * (.cfi_def_cfa rbx, 0), then calls next.  Correct DWARF CFI; binutils 2.40
 * silently writes a WRONG SFrame row for the body (CFA = sp+0).
 * chains_badrow: a deliberately wrong CFI (DWARF and SFrame): the slot it
 * names for the return address holds a data address; then calls next.
 * chains_tf_on / chains_tf_off: set / clear the x86 trap flag (EFLAGS.TF);
 * the first single-step trap comes after chains_tf_on's ret. */
int chains_realign(void *ctx);
/* tests/walk/chains_cfi.S (no SFrame, .eh_frame only).
 * chains_ra_popped: pops its return address and pushes it back (the CFI
 * then has it below SP, in the red zone), then calls next. */
int chains_ra_popped(void *ctx);
int chains_badrow(void *ctx);
void chains_tf_on(void);
void chains_tf_off(void);

#endif
