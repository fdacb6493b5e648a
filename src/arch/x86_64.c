/* x86-64: registers from ucontext, the rt_sigreturn trampoline, PLT stubs,
 * return addresses.  Constants and DWARF numbers: x86_64.h. */
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
static const unsigned char greg_of_dwarf[SFB_DWARF_RA + 1] = {
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
const uint8_t sfb_arch_sigreturn_code[SFB_SIGRETURN_LEN] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, /* mov $15, %rax */
	0x0f, 0x05,                               /* syscall */
};

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

/* Opcode bytes.  ff is the group of call r/m64 (ff /2) and jmp r/m64
 * (ff /4), the ModRM byte's reg field saying which. */
#define OP_CALL_REL32 0xe8
#define OP_GROUP5 0xff
#define MODRM_JMP_RIP 0x25 /* ff /4 with a rip-relative disp32 */
#define PREFIX_BND 0xf2
#define JMP_RIP_MAX_LEN 3  /* bnd, ff, ModRM */

/* ld describes a .plt.got stub (a lone `jmp *sym@GOT(%rip)`) with a PCMASK
 * row saying CFA = sp+16, but the stub runs with only the return address
 * pushed.  Any PLT stub about to execute its indirect jump has pushed
 * nothing, so at the topmost frame CFA = sp+8 there, whatever the row says. */
void sfb_arch_fix_topmost_row(uintptr_t pc, uintptr_t lo, uintptr_t hi,
			      struct sfb_row *row)
{
	if (!(row->flags & SFB_ROW_PCMASK) || pc < lo || pc >= hi || hi - pc < JMP_RIP_MAX_LEN)
		return;
	const uint8_t *c = (const uint8_t *)pc;
	bool jmp = (c[0] == OP_GROUP5 && c[1] == MODRM_JMP_RIP) || /* jmp *disp(%rip) */
		   (c[0] == PREFIX_BND && c[1] == OP_GROUP5 && c[2] == MODRM_JMP_RIP); /* bnd jmp */
	if (jmp) {
		row->cfa = sfb_arch_entry_cfa(); /* CFA = SP + 8: the return address only */
	}
}

/* Does a call instruction end exactly at ra?  A return address that is
 * not preceded by a call is not a return address: this catches stale or
 * garbage stack words, and unwind rows that toolchains got wrong (binutils
 * 2.40 describes DRAP functions as CFA = sp+8 throughout).  Forms: call
 * rel32 (e8), and call r/m64 (ff /2) in every ModRM/SIB/displacement
 * length (a REX prefix, if any, precedes the ff and changes nothing). */
#define CALL_REL32_LEN 5  /* e8, rel32 */
#define CALL_RM_MAX_LEN 7 /* ff, ModRM, SIB, disp32 */

/* ModRM: mod (2 bits), reg (3), rm (3).  mod 0: no displacement, 1: a
 * disp8, 2: a disp32, 3: a register operand.  rm 4 with mod 0-2: a SIB
 * byte follows; rm 5 with mod 0: rip-relative disp32, as is a SIB base
 * of 5 with mod 0 (no base, a disp32). */
#define MODRM_MOD(m) ((m) >> 6)
#define MODRM_REG(m) (((m) >> 3) & 7)
#define MODRM_RM(m) ((m) & 7)
#define SIB_BASE(s) ((s) & 7)
#define MODRM_REG_CALL 2
#define MOD_DISP0 0
#define MOD_DISP8 1
#define MOD_DISP32 2
#define MOD_REGISTER 3
#define RM_SIB 4
#define RM_DISP32 5

/* Whether the len bytes at op are a call r/m64 (ff /2) of exactly that
 * length.  Reads op[0, len) only: the bytes before a return address that
 * lie in its code range, however close to the range's start. */
static bool is_call_rm(const uint8_t *op, unsigned len)
{
	if (op[0] != OP_GROUP5)
		return false;
	uint8_t modrm = op[1], mod = MODRM_MOD(modrm), rm = MODRM_RM(modrm);
	if (MODRM_REG(modrm) != MODRM_REG_CALL)
		return false;
	unsigned n = 2; /* ff + modrm */
	if (mod == MOD_REGISTER)
		return len == n;
	if (rm == RM_SIB) {
		if (len < 3)
			return false;
		n++; /* SIB */
		if (mod == MOD_DISP0 && SIB_BASE(op[2]) == RM_DISP32)
			n += 4;
	}
	if (mod == MOD_DISP0 && rm == RM_DISP32)
		n += 4; /* rip-relative */
	else if (mod == MOD_DISP8)
		n += 1;
	else if (mod == MOD_DISP32)
		n += 4;
	return len == n;
}

bool sfb_arch_is_return_address(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	/* The call lies in [lo, ra): a range may start with one (code a JIT
	 * registered whose first instruction calls), so each form is tried
	 * only where it fits. */
	if (ra <= lo || ra > hi)
		return false;
	const uintptr_t room = ra - lo;
	const uint8_t *c = (const uint8_t *)ra;
	if (room >= CALL_REL32_LEN && c[-CALL_REL32_LEN] == OP_CALL_REL32)
		return true;
	const unsigned most = room < CALL_RM_MAX_LEN ? (unsigned)room : CALL_RM_MAX_LEN;
	for (unsigned len = 2; len <= most; len++)
		if (is_call_rm(c - len, len))
			return true;
	return false;
}

/* boost.context's x86-64 SysV trampoline ends in
 *     push %rbp; jmp *%rbx        (55 ff e3; %rbp holds "finish")
 * finish:
 *     [endbr64]; xor %rdi,%rdi; call _exit
 * and ra is finish. */
bool sfb_arch_is_fiber_exit(uintptr_t ra, uintptr_t lo, uintptr_t hi)
{
	static const uint8_t jump[3] = { 0x55, 0xff, 0xe3 }, exit_[3] = { 0x48, 0x31, 0xff },
			     endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	if (ra < lo || ra > hi || ra - lo < sizeof jump || hi - ra < sizeof endbr64 + sizeof exit_)
		return false;
	const uint8_t *c = (const uint8_t *)ra;
	if (!sfb_arch_code_is(c - sizeof jump, jump, sizeof jump))
		return false;
	if (sfb_arch_code_is(c, endbr64, sizeof endbr64))
		c += sizeof endbr64;
	return sfb_arch_code_is(c, exit_, sizeof exit_);
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
