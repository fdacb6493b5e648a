/* A stack overflow, walked from the fault's context on a sigaltstack.
 *
 * A thread runs a recursion on a stack of its own, whose lowest page is a
 * PROT_NONE guard, and places the recursion so that the fault lands at a
 * chosen instruction: the first store into a new frame (the frame is
 * already allocated, SP points into the guard page) or the call that
 * pushes a return address into the guard page (SP still at the lowest
 * mapped word).  The recursion is written in assembly, laid out as gcc -O2
 * lays out examples/demo's recurse_forever, so the stack's whole content
 * is known: the walk must give the faulting PC, then the return address
 * of each frame with its exact CFA, up to the buffer's end.
 *
 * Under valgrind the call's context is not the hardware's: valgrind's
 * x86-64 front end lowers SP before it stores the return address, so when
 * the store faults the context's SP already points at the guard page, 8
 * below the frame, and the row at the call (CFA = SP + 0x110) then finds
 * the frame's return address 8 bytes off, in a word never written.  The
 * test says so and walks the context the hardware delivers instead. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "uc_regs.h"

#define FRAME 0x110u /* the recursion's frame: 0x108 of locals and its return address */
#define DEPTH 64     /* frames the recursion makes before it faults */
#define NF 32        /* frames walked: fewer than DEPTH, so the walk ends buffer-full */
#define PAGE 4096u
#define STACK_SIZE (256u << 10)

/* ovf_recurse(depth): a frame of FRAME bytes, its first store at its SP,
 * then a call to itself.  ovf_enter(top): runs ovf_recurse with its first
 * frame's CFA at top (no unwind info: walks stop before reaching it). */
__asm__(".text\n"
	".p2align 4\n"
	".type ovf_recurse, @function\n"
	"ovf_recurse:\n"
	"	.cfi_startproc\n"
	"	sub $0x108, %rsp\n"
	"	.cfi_def_cfa_offset 0x110\n"
	"ovf_store:\n"
	"	mov %dil, (%rsp)\n"
	"	add $1, %edi\n"
	"ovf_call:\n"
	"	call ovf_recurse\n"
	"ovf_ret:\n"
	"	add $0x108, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size ovf_recurse, .-ovf_recurse\n"
	".p2align 4\n"
	".type ovf_enter, @function\n"
	"ovf_enter:\n"
	"	mov %rdi, %rsp\n"
	"	xor %edi, %edi\n"
	"	call ovf_recurse\n"
	"	ud2\n"
	".size ovf_enter, .-ovf_enter\n");
extern const char ovf_store[], ovf_call[], ovf_ret[];
void ovf_enter(uintptr_t top);

/* What the handler saw. */
struct fault {
	uintptr_t pc, sp, addr;
	bool sp_fixed; /* valgrind's SP at a faulting push: walked with the hardware's */
	int n;
	struct sframe_bt_status st;
	struct sframe_bt_frame f[NF];
};

static struct fault got;
static sigjmp_buf back;
static bool valgrind;

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	const ucontext_t *uc = ucv;
	static ucontext_t hw;
	got.pc = (uintptr_t)UC_PC(uc);
	got.sp = (uintptr_t)UC_SP(uc);
	got.addr = (uintptr_t)si->si_addr;
	if (valgrind && got.pc == (uintptr_t)ovf_call && got.sp == got.addr) {
		/* The push's SP committed, its store faulted: the hardware
		 * would have left SP 8 higher. */
		hw = *uc;
		UC_SP(&hw) += 8;
		uc = &hw;
		got.sp_fixed = true;
	}
	got.n = sframe_backtrace_ex(uc, got.f, NF, 0, &got.st);
	siglongjmp(back, 1);
}

/* The guard page ends at guard_end: the lowest mapped byte of the stack. */
static uintptr_t guard_end;

/* Run the recursion with its first CFA at top, until it faults. */
static bool overflow_from(uintptr_t top)
{
	memset(&got, 0, sizeof got);
	if (sigsetjmp(back, 1) == 0) {
		ovf_enter(top);
		return false; /* not reached: the recursion never returns */
	}
	return true;
}

static void check_walk(const char *what, const char *fault_pc, uintptr_t fault_sp)
{
	uintptr_t cfa = fault_sp + FRAME;
	CHECK(got.n == NF && got.st.stop == SFRAME_BT_STOP_BUFFER_FULL,
	      "%s: %d frames, stopped %s (want %d, buffer-full)", what, got.n,
	      sframe_bt_stop_name(got.st.stop), NF);
	CHECK(got.n > 0 && got.f[0].pc == (uintptr_t)fault_pc && got.f[0].exact &&
		      got.f[0].cfa == cfa,
	      "%s: frame 0 is the faulting instruction, CFA 0x%lx above the fault's SP",
	      what, (unsigned long)FRAME);
	int bad = -1;
	for (int i = 1; i < got.n && bad < 0; i++)
		if (got.f[i].pc != (uintptr_t)ovf_ret || got.f[i].exact ||
		    got.f[i].cfa != cfa + (uintptr_t)i * FRAME)
			bad = i;
	CHECK(got.n > 1 && bad < 0,
	      "%s: every further frame is the recursion's return address with its CFA%s", what,
	      bad < 0 ? "" : " (not so at frame shown below)");
	if (bad >= 0)
		printf("# frame %d: pc %#lx cfa %#lx, want pc %#lx cfa %#lx\n", bad,
		       (unsigned long)got.f[bad].pc, (unsigned long)got.f[bad].cfa,
		       (unsigned long)(uintptr_t)ovf_ret,
		       (unsigned long)(cfa + (uintptr_t)bad * FRAME));
}

static void *overflow_thread(void *arg)
{
	(void)arg;
	static char alt[64 << 10];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0 }, old;
	if (sigaltstack(&ss, &old) != 0) {
		CHECK(0, "sigaltstack");
		return NULL;
	}
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t top_call = guard_end + DEPTH * FRAME;
	CHECK(top_call + PAGE < here, "the recursion fits below the thread's frame");

	/* The last frame's SP is 16 bytes into the guard page: its first
	 * store faults. */
	uintptr_t top = top_call - 16;
	bool faulted = overflow_from(top);
	CHECK(faulted && got.pc == (uintptr_t)ovf_store && got.addr == guard_end - 16,
	      "store: the fault is the frame's first store, 16 bytes into the guard page");
	CHECK(got.sp == guard_end - 16, "store: the context's SP is the new frame's");
	check_walk("store", ovf_store, guard_end - 16);

	/* The last frame's SP is the lowest mapped word: its call pushes
	 * into the guard page.  The push faults, leaving SP unchanged. */
	faulted = overflow_from(top_call);
	CHECK(faulted && got.pc == (uintptr_t)ovf_call && got.addr == guard_end - 8,
	      "call: the fault is the call's push of its return address");
	CHECK(got.sp == guard_end || (got.sp_fixed && got.sp == guard_end - 8),
	      "call: the context's SP is the frame's, unchanged by the push%s",
	      got.sp_fixed ? " (valgrind's is 8 lower, at the push's target; walked with the "
			     "hardware's)"
			   : "");
	check_walk("call", ovf_call, guard_end);

	sigaltstack(&old, NULL);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}
	sframe_backtrace_warmup();
	valgrind = under_valgrind();

	char *stack = mmap(NULL, PAGE + STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED || mprotect(stack, PAGE, PROT_NONE) != 0) {
		perror("mmap");
		return 1;
	}
	guard_end = (uintptr_t)stack + PAGE;
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	if (pthread_attr_setstack(&attr, stack + PAGE, STACK_SIZE) != 0 ||
	    pthread_create(&t, &attr, overflow_thread, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	pthread_join(t, NULL);
	CHECK_DONE();
}
