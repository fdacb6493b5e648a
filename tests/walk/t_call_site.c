/* The call-site check (sfb_arch_is_return_address(), src/arch/): a return
 * address must follow a call that lies wholly in its code range.
 *
 * Ground truth is the assembler: the calls below, in every form the
 * architecture's check knows, are assembled into a data section (never
 * run), each between labels.  For each call, with the range starting
 * exactly at the call (code a JIT registered whose first instruction
 * calls) and ending exactly at its return address, the address after it
 * must be a return address; with the range starting one byte later it
 * must not, unless the bytes left are a call themselves (a REX prefix
 * dropped); a return address past the range's end, at its start, or
 * inside a call is not one. */
#include <stdint.h>

#include "arch/arch.h"
#include "check.h"

#if defined(__x86_64__)
#define CALLS                                                   \
	X(0, "call cs_begin", "call rel32")                     \
	X(1, "call *%rax", "call *reg")                         \
	X(2, "call *%r11", "REX call *reg")                     \
	X(3, "call *(%rax)", "call *(reg)")                     \
	X(4, "call *8(%rax)", "call *disp8(reg)")               \
	X(5, "call *0x1000(%rax)", "call *disp32(reg)")         \
	X(6, "call *(%rax,%rbx,8)", "call *(base,index)")       \
	X(7, "call *0x10(%rip)", "call *disp32(rip)")           \
	X(8, "call *0x1000(,%rbx,8)", "call *disp32(,index)")   \
	X(9, "call *8(%rsp)", "call *disp8(rsp) with SIB")
#define HAS_PREFIX(i) ((i) == 2)
#elif defined(__aarch64__)
#define CALLS                                   \
	X(0, "bl cs_begin", "bl")               \
	X(1, "blr x3", "blr")                   \
	X(2, "blr x30", "blr x30")
#define HAS_PREFIX(i) 0
#elif defined(__s390x__)
#define CALLS                                           \
	X(0, "brasl %r14, cs_begin", "brasl")           \
	X(1, "bras %r14, cs_begin", "bras")             \
	X(2, "basr %r14, %r1", "basr")                  \
	X(3, "bas %r14, 8(%r1)", "bas")
#define HAS_PREFIX(i) 0
#endif

/* Global (hidden) labels: AArch64's GOT relocations against local
 * symbols of one section would all resolve to the section's start. */
#define LABEL(l) ".globl " l "\n.hidden " l "\n" l ":\n"
#define X(i, insn, name) LABEL("cs" #i) insn "\n"
__asm__(".pushsection .rodata.t_call_site, \"a\"\n"
	".balign 16\n" LABEL("cs_begin") CALLS LABEL("cs_end") ".popsection\n");
#undef X

#define X(i, insn, name) extern const uint8_t cs##i[];
CALLS
#undef X
extern const uint8_t cs_begin[], cs_end[];

struct call {
	const uint8_t *at;
	const char *name;
};
#define X(i, insn, name) { cs##i, name },
static const struct call calls[] = { CALLS };
#undef X
#define NCALLS (sizeof calls / sizeof calls[0])

int main(void)
{
	for (unsigned i = 0; i < NCALLS; i++) {
		uintptr_t at = (uintptr_t)calls[i].at;
		uintptr_t ra = i + 1 < NCALLS ? (uintptr_t)calls[i + 1].at : (uintptr_t)cs_end;
		const char *n = calls[i].name;
		unsigned len = (unsigned)(ra - at);
		CHECK(sfb_arch_is_return_address(ra, at, ra),
		      "%s (%u bytes): a return address in a range that starts with the call", n,
		      len);
		CHECK(sfb_arch_is_return_address(ra, (uintptr_t)cs_begin, (uintptr_t)cs_end),
		      "%s: a return address in the range of all the calls", n);
		CHECK(!sfb_arch_is_return_address(ra, at + 1, ra) == !HAS_PREFIX(i),
		      "%s: with the range one byte into the call, %s", n,
		      HAS_PREFIX(i) ? "still one (the prefix's call without it)"
				    : "not a return address");
		CHECK(!sfb_arch_is_return_address(ra, at, ra - 1),
		      "%s: not a return address past the range's end", n);
		CHECK(!sfb_arch_is_return_address(at, at, ra),
		      "%s: the range's start is no return address", n);
		if (len > 2)
			CHECK(!sfb_arch_is_return_address(ra - 1, at, ra),
			      "%s: the address of its last byte is no return address", n);
	}
	CHECK(NCALLS > 0, "%u call forms assembled", (unsigned)NCALLS);
	CHECK_DONE();
}
