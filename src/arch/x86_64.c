/* x86-64: registers from ucontext, the rt_sigreturn trampoline, PLT stubs.
 *
 * DWARF numbers: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
 * 8-15 r8-r15, 16 rip (the return address column). */
#if defined(__x86_64__)
#define _GNU_SOURCE
#include "arch/arch.h"

#include <signal.h>
#include <stddef.h>
#include <ucontext.h>

#include "rows/sframe_format.h"

const uint8_t sfb_arch_abi = SFB_ABI_AMD64_LE;

_Static_assert(NGREG == SFB_SAVED_WORDS && sizeof(greg_t) == sizeof(uintptr_t),
	       "struct sfb_saved_regs holds a gregs[]");

/* The saved words are a ucontext's gregs[]. */
void sfb_arch_from_saved(const void *g, struct sfb_regs *r)
{
	*r = (struct sfb_regs){ .pc = sfb_arch_saved_word(g, REG_RIP),
				.sp = sfb_arch_saved_word(g, REG_RSP),
				.fp = sfb_arch_saved_word(g, REG_RBP),
				.all = g };
}

void sfb_arch_from_ucontext(const void *uc, struct sfb_regs *r)
{
	sfb_arch_from_saved(((const ucontext_t *)uc)->uc_mcontext.gregs, r);
}

/* DWARF numbers -> gregs[] indexes. */
static const unsigned char greg_of_dwarf[17] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
	REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
	REG_RIP,
};

bool sfb_arch_reg(const struct sfb_regs *r, unsigned n, uintptr_t *out)
{
	if (r->all && n < sizeof greg_of_dwarf) {
		*out = sfb_arch_saved_word(r->all, greg_of_dwarf[n]);
		return true;
	}
	return false;
}

/* glibc's __restore_rt: mov $15, %rax; syscall.  musl's is the same
 * instruction sequence. */
const uint8_t sfb_arch_sigreturn_code[SFB_SIGRETURN_LEN] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
								0x00, 0x00, 0x0f, 0x05 };

/* At the trampoline, sp points at the ucontext of the kernel's
 * struct rt_sigframe (its pretcode was popped by the handler's ret). */
uintptr_t sfb_arch_sigframe_saved_at(uintptr_t sp)
{
	return sp + offsetof(ucontext_t, uc_mcontext.gregs);
}

/* ld describes every x86-64 PLT (.eh_frame and .sframe). */
bool sfb_arch_in_plt_stub(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	(void)pc, (void)lo, (void)hi;
	return false;
}

/* ld describes a .plt.got stub (a lone `jmp *sym@GOT(%rip)`) with a PCMASK
 * row saying CFA = sp+16, but the stub runs with only the return address
 * pushed.  Any PLT stub about to execute its indirect jump has pushed
 * nothing, so at the topmost frame CFA = sp+8 there, whatever the row says. */
void sfb_arch_fix_topmost_row(uintptr_t pc, uintptr_t lo, uintptr_t hi,
			      struct sfb_row *row)
{
	if (!(row->flags & SFB_ROW_PCMASK) || pc < lo || pc >= hi || hi - pc < 3)
		return;
	const uint8_t *c = (const uint8_t *)pc;
	bool jmp = (c[0] == 0xff && c[1] == 0x25) ||              /* jmp *disp(%rip) */
		   (c[0] == 0xf2 && c[1] == 0xff && c[2] == 0x25); /* bnd jmp */
	if (jmp) {
		row->cfa = (struct sfb_loc){ SFB_LOC_EXPR, 0, 7, 8 };
	}
}
/* Does a call instruction end exactly at ra?  A return address that is
 * not preceded by a call is not a return address: this catches stale or
 * garbage stack words, and unwind rows that toolchains got wrong (binutils
 * 2.40 describes DRAP functions as CFA = sp+8 throughout).  Forms: call
 * rel32 (e8), and call r/m64 (ff /2) in every ModRM/SIB/displacement
 * length (a REX prefix, if any, precedes the ff and changes nothing). */
static unsigned modrm_call_len(const uint8_t *m)
{
	uint8_t modrm = m[0], mod = modrm >> 6, rm = modrm & 7;
	if (((modrm >> 3) & 7) != 2)
		return 0;
	unsigned len = 2; /* ff + modrm */
	if (mod == 3)
		return len;
	if (rm == 4) {
		len++; /* SIB */
		if (mod == 0 && (m[1] & 7) == 5)
			len += 4;
	}
	if (mod == 0 && rm == 5)
		len += 4; /* rip-relative */
	else if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	if (ra - lo < 8 || ra > hi)
		return false;
	const uint8_t *c = (const uint8_t *)ra;
	if (c[-5] == 0xe8)
		return true;
	for (unsigned len = 2; len <= 7; len++) {
		const uint8_t *op = c - len;
		if (op[0] == 0xff && modrm_call_len(op + 1) == len)
			return true;
	}
	return false;
}

/* The entry's frame record: saved %rbp at frame, the return address
 * above it; the caller's SP is the entry's CFA. */
void sfb_arch_caller_regs(const void *frame, const void *cfa, const void *ra,
			  struct sfb_regs *r)
{
	*r = (struct sfb_regs){ .pc = (uintptr_t)ra, .sp = (uintptr_t)cfa,
				.fp = *(const uintptr_t *)frame };
}
#endif
