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
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>

#include "backtrace.h"
#include "check.h"
#include "gcc_compare.h"

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

int main(void)
{
	struct sframe_bt_frame fr[NF];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(NULL, fr, NF, 0, &st);
	CHECK(getauxval(AT_ENTRY) == (uintptr_t)nocfi_start,
	      "the program's entry is nocfi_start (AT_ENTRY %#lx)", getauxval(AT_ENTRY));
	uintptr_t last = n > 0 ? fr[n - 1].pc : 0;
	bool in_start = last > (uintptr_t)nocfi_start && last <= (uintptr_t)nocfi_start_end;
	CHECK(n >= 2 && in_start && st.stop == SFRAME_BT_STOP_OUTERMOST && st.frames_eh_frame > 0,
	      "main, libc's frames by CFI, then the entry function with no row: the last frame, "
	      "outermost (%d frames, last %#lx, stop %s)", n, (unsigned long)last,
	      sframe_bt_stop_name(st.stop));
	struct walk w;
	walk_now(NULL, &w);
	bool same = walk_same(&w);
	if (!same)
		walk_print(&w);
	CHECK(same, "the same return addresses as libgcc's _Unwind_Backtrace (%d frames)", w.n_gcc);
	CHECK_DONE();
}
