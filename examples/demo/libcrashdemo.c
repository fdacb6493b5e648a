/* libcrashdemo.so: the shared-object half of the crash-handler demo.
 *
 * examples/crash-handler.c calls crashdemo_run(), which goes through a
 * static (file-local) function to the one that faults.  So a report shows
 * frames from two objects, and static functions, whose names only the
 * file's .symtab has (the symbolizer reads it; .dynsym lacks them).
 *
 * Every function is noinline and does some work after its call, so that
 * -O2 neither inlines it nor turns the call into a jump (a tail call leaves
 * no frame).  Real code needs nothing like this: the demo just wants a
 * predictable chain of frames to show and test. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crashdemo.h"

#define NOINLINE __attribute__((noinline))

volatile int crashdemo_sink;

/* A fault address the compiler cannot see is NULL: gcc turns a known NULL
 * dereference into a trap instruction (SIGILL), which is not the demo. */
static int *volatile bad_pointer = (int *)16;
static volatile int zero, thousand = 1000;

/* Overwrite the stack from here up, over this frame's return address and
 * the callers' frames, with garbage, then fault.  This is what a buffer
 * overflow on the stack looks like to the crash handler: the unwinder
 * reads garbage return addresses and must stop with a reason, not crash or
 * loop.  Done in assembly so the compiler cannot reorder or drop it. */
static NOINLINE void smash_stack_and_fault(void)
{
#if defined(__x86_64__)
	__asm__ volatile("mov %%rsp, %%rdi\n\t"
			 "mov $64, %%ecx\n\t"            /* 64 words = 512 bytes */
			 "movabs $0x4141414141414141, %%rax\n\t"
			 "rep stosq\n\t"
			 "movl $1, 16\n\t"               /* fault: write to 0x10 */
			 ::: "rdi", "rcx", "rax", "memory");
#else
	/* From this frame's record up (other architectures). */
	volatile unsigned long *p = __builtin_frame_address(0);
	for (int i = 0; i < 64; i++)
		p[i] = 0x4141414141414141ul;
	*bad_pointer = 1;
#endif
}

/* The faulting functions.  Each returns normally only if the fault did
 * not happen (it always does). */
NOINLINE void crash_leaf(int how)
{
	switch (how) {
	case CRASH_SEGV:
		*bad_pointer = 42;                      /* SIGSEGV, SEGV_MAPERR */
		break;
	case CRASH_ABORT:
		abort();                                /* SIGABRT, inside libc */
	case CRASH_FPE:
		crashdemo_sink = thousand / zero;       /* SIGFPE, FPE_INTDIV */
		break;
	case CRASH_ILL:
		__builtin_trap();                       /* ud2: SIGILL, ILL_ILLOPN */
	case CRASH_BUS: {
		/* A file mapping past the end of the file: SIGBUS, BUS_ADRERR. */
		int fd = memfd_create("crashdemo", 0);
		char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED)
			p[0] = 1; /* the file is empty: no page behind p */
		break;
	}
	case CRASH_STACK_SMASH:
		smash_stack_and_fault();
		break;
	}
	crashdemo_sink++;
}

/* Unbounded recursion: a stack overflow.  The handler can only run because
 * it is on an alternate signal stack (sigaltstack). */
static volatile int forever = 1; /* hides the recursion's endlessness */

static NOINLINE int recurse_forever(int depth)
{
	volatile char pad[256];
	pad[0] = (char)depth;
	if (!forever)
		return 0;
	return recurse_forever(depth + 1) + pad[0];
}

static NOINLINE void static_helper(int how)
{
	if (how == CRASH_OVERFLOW)
		crashdemo_sink = recurse_forever(0);
	else
		crash_leaf(how);
	crashdemo_sink++;
}

NOINLINE void crashdemo_run(int how)
{
	static_helper(how);
	crashdemo_sink++;
}
