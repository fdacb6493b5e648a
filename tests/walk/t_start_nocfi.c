/* A program whose entry function has no CFI (Debian's arm64 bc and dc are
 * linked so): the walk from main() goes through libc's frames to the
 * return address in the entry function, which no row covers, and ends
 * there as at _start's undefined return address, "outermost", with the
 * frames libgcc's _Unwind_Backtrace() gives, which ends there too.
 *
 * The program is linked with -e nocfi_start: the entry below does what
 * glibc's x86-64 crt1 _start does (musl's __libc_start_main takes the same
 * arguments), written without CFI.  x86-64 only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unwind.h>

#include "backtrace.h"
#include "check.h"

void nocfi_start(void);
extern const char nocfi_start_end[];
__asm__(".text\n"
	".globl nocfi_start\n"
	".type nocfi_start, @function\n"
	"nocfi_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rdx, %r9\n"      /* rtld_fini */
	"	pop %rsi\n"           /* argc */
	"	mov %rsp, %rdx\n"     /* argv */
	"	and $-16, %rsp\n"
	"	push %rax\n"
	"	push %rsp\n"
	"	xor %r8d, %r8d\n"
	"	xor %ecx, %ecx\n"
	"	mov main@GOTPCREL(%rip), %rdi\n"
	"	call *__libc_start_main@GOTPCREL(%rip)\n"
	"	hlt\n"
	".globl nocfi_start_end\n"
	"nocfi_start_end:\n"
	".size nocfi_start, . - nocfi_start\n");

#define MAXF 64

struct gcc_trace {
	uintptr_t pc[MAXF];
	int n;
};

static _Unwind_Reason_Code gcc_cb(struct _Unwind_Context *ctx, void *arg)
{
	struct gcc_trace *g = arg;
	if (g->n < MAXF && _Unwind_GetIP(ctx))
		g->pc[g->n++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

int main(void)
{
	struct sframe_bt_frame fr[MAXF];
	struct sframe_bt_status st;
	struct gcc_trace g = { .n = 0 };
	int n = sframe_backtrace_ex(NULL, fr, MAXF, 0, &st);
	_Unwind_Backtrace(gcc_cb, &g);
	CHECK(getauxval(AT_ENTRY) == (uintptr_t)nocfi_start,
	      "the program's entry is nocfi_start (AT_ENTRY %#lx)", getauxval(AT_ENTRY));
	uintptr_t last = n > 0 ? fr[n - 1].pc : 0;
	bool in_start = last > (uintptr_t)nocfi_start && last <= (uintptr_t)nocfi_start_end;
	CHECK(n >= 2 && in_start && st.stop == SFRAME_BT_STOP_OUTERMOST && st.frames_eh_frame > 0,
	      "main, libc's frames by CFI, then the entry function with no row: the last frame, "
	      "outermost (%d frames, last %#lx, stop %s)", n, (unsigned long)last,
	      sframe_bt_stop_name(st.stop));
	/* libgcc's frames from the caller of main on: sframebt's frame 1 on. */
	int j = 0;
	while (j < g.n && n >= 2 && g.pc[j] != fr[1].pc)
		j++;
	bool same = j < g.n && g.n - j == n - 1;
	for (int i = 1; same && i < n; i++)
		same = fr[i].pc == g.pc[j + i - 1];
	for (int i = 0; !same && i < n; i++)
		printf("#   sframebt %2d %#lx\n", i, (unsigned long)fr[i].pc);
	for (int i = 0; !same && i < g.n; i++)
		printf("#   libgcc   %2d %#lx\n", i, (unsigned long)g.pc[i]);
	CHECK(same, "the same return addresses as libgcc's _Unwind_Backtrace (%d frames)", g.n);
	CHECK_DONE();
}
