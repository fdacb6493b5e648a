/* Stack memory reads that cannot fault (see docs/DESIGN.md, Stack reads).
 *
 * The probe is rt_sigprocmask(~0, addr, NULL, 8): the kernel copies 8
 * bytes from addr before it rejects the invalid 'how', so EFAULT means
 * unreadable and nothing else happens (Abseil's AddressIsReadable uses the
 * same trick).  A system call, so it is paid once per page per walk. */
#include "base/memread.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ld.so's record of the stack pointer at process start: argv, envp and
 * auxv lie above it, all in the main thread's stack mapping.  glibc's;
 * weak: musl has none (its main thread's stack is then probed per walk). */
extern void *__libc_stack_end __attribute__((weak));

#define PAGE 4096u

bool sfb_probe_readable(uintptr_t addr)
{
	/* A NULL set is a valid query the kernel answers without reading, so
	 * page 0 would pass; no mapping is ever allowed there anyway. */
	if (addr < PAGE)
		return false;
	long r = syscall(SYS_rt_sigprocmask, ~0L, (void *)(addr & ~(uintptr_t)7),
			 (void *)0, 8);
	return !(r == -1 && errno == EFAULT);
}

void sfb_mem_add_window(struct sfb_mem *m, uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo || hi - lo < sizeof(uintptr_t))
		return;
	/* Grow a window this one touches, so a walk up one stack keeps one. */
	for (unsigned i = 0; i < m->nwin; i++) {
		struct sfb_window *w = &m->win[i];
		if (lo <= w->hi && hi >= w->lo) {
			if (lo < w->lo)
				w->lo = lo;
			if (hi > w->hi)
				w->hi = hi;
			return;
		}
	}
	if (m->nwin < SFB_MEM_WINDOWS) {
		m->win[m->nwin++] = (struct sfb_window){ lo, hi };
		return;
	}
	m->win[m->next] = (struct sfb_window){ lo, hi };
	m->next = (m->next + 1) % SFB_MEM_WINDOWS;
}

/* The per-thread stack cache: [lo, hi) of this thread's own stack, every
 * page of it probed readable once.  A thread's stack stays mapped for the
 * thread's whole life and this memory dies with the thread, so the range
 * can never go stale.  It lives in initial-exec TLS, which the thread got
 * when it was created: reading it allocates nothing and takes no lock,
 * unlike the default TLS model of a shared library, whose first access
 * may call malloc.  Writes are single words, lo before hi, so a signal
 * handler interrupting an update sees either no range or a valid one. */
__thread uintptr_t sfb_tstack_lo __attribute__((tls_model("initial-exec")));
__thread uintptr_t sfb_tstack_hi __attribute__((tls_model("initial-exec")));

#define MAX_ANCHOR_DISTANCE (8u << 20)  /* probe at most 2048 pages */
#define MAX_ANCHOR_TRIES 4

static __thread unsigned tstack_tries __attribute__((tls_model("initial-exec")));

static uintptr_t page_down(uintptr_t a) { return a & ~(uintptr_t)(PAGE - 1); }

/* Are all pages of [lo, hi) readable?  One probe per page. */
static bool probe_range(uintptr_t lo, uintptr_t hi)
{
	for (uintptr_t p = page_down(lo); p < hi; p += PAGE)
		if (!sfb_probe_readable(p))
			return false;
	return true;
}

/* Find the top of the stack the walker itself runs on, without asking the
 * kernel for mappings: a glibc thread's descriptor (the thread pointer)
 * sits at the top of its stack block, above every frame; the main thread's
 * frames lie below __libc_stack_end.  Then prove [sp, top) readable, page
 * by page.  Only the walker's own stack pointer is trusted as a start:
 * memory between a foreign stack pointer (a ucontext, a coroutine) and the
 * top may belong to other mappings that can go away. */
static bool below_within(uintptr_t own_sp, uintptr_t top)
{
	return own_sp < top && top - own_sp <= MAX_ANCHOR_DISTANCE;
}

static void anchor_thread_stack(uintptr_t own_sp)
{
	if (tstack_tries >= MAX_ANCHOR_TRIES)
		return; /* e.g. its pages not all readable: probe per walk */
	uintptr_t thread_top = page_down((uintptr_t)pthread_self());
	uintptr_t main_top = &__libc_stack_end ? page_down((uintptr_t)__libc_stack_end) + PAGE : 0;
	/* Running on no stack it could be (a fiber's, a sigaltstack
	 * elsewhere): no try spent, so that the first walk on the thread's
	 * own stack anchors it, however many ran on fibers before. */
	if (!below_within(own_sp, thread_top) && !below_within(own_sp, main_top))
		return;
	tstack_tries++;
	bool main_thread = syscall(SYS_gettid) == getpid();
	if (main_thread && !main_top)
		return;
	uintptr_t top = main_thread ? main_top : thread_top;
	if (!below_within(own_sp, top) || !probe_range(own_sp, top))
		return;
	sfb_tstack_lo = page_down(own_sp);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sfb_tstack_hi = top;
}

/* The walker runs deeper than before: extend the range downward over the
 * new, contiguous pages of its own stack. */
static void extend_thread_stack(uintptr_t own_sp)
{
	uintptr_t lo = sfb_tstack_lo;
	if (own_sp >= lo || lo - own_sp > MAX_ANCHOR_DISTANCE || !probe_range(own_sp, lo))
		return;
	sfb_tstack_lo = page_down(own_sp);
}

__thread uintptr_t sfb_fstack_lo __attribute__((tls_model("initial-exec")));
__thread uintptr_t sfb_fstack_hi __attribute__((tls_model("initial-exec")));

void sfb_mem_declare_stack(uintptr_t lo, uintptr_t hi)
{
	sfb_fstack_hi = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sfb_fstack_lo = lo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sfb_fstack_hi = lo < hi ? hi : 0;
}

void sfb_mem_init_slow(struct sfb_mem *m, uintptr_t own_sp)
{
	m->nwin = 0;
	if (!sfb_tstack_hi)
		anchor_thread_stack(own_sp);
	else if (own_sp < sfb_tstack_lo && own_sp >= sfb_tstack_hi - MAX_ANCHOR_DISTANCE)
		extend_thread_stack(own_sp);
	uintptr_t lo = sfb_tstack_lo, hi = sfb_tstack_hi;
	if (hi && lo < hi)
		m->win[m->nwin++] = (struct sfb_window){ lo, hi };
	/* The page of the caller's own frame is readable, without a probe:
	 * the caller is running on it.  Where that is not the thread's
	 * stack (a fiber's or a coroutine's stack, a sigaltstack), the
	 * walk's first frames lie there; where it is, the thread's window
	 * holds it already (sfb_mem_add_window() merges).  Nothing else is
	 * trusted without a probe: not even the sigaltstack a ucontext
	 * names, since a garbage ucontext can name anything. */
	sfb_mem_add_window(m, page_down(own_sp), page_down(own_sp) + PAGE);
	/* The stack the thread said it runs on: the caller's promise. */
	uintptr_t flo = sfb_fstack_lo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uintptr_t fhi = sfb_fstack_hi;
	if (flo < fhi)
		sfb_mem_add_window(m, flo, fhi);
}

static bool probe_page(struct sfb_mem *m, uintptr_t page)
{
	if (m->probes >= m->probe_budget)
		return false;
	m->probes++;
	if (!sfb_probe_readable(page))
		return false;
	sfb_mem_add_window(m, page, page + PAGE);
	return true;
}

bool sfb_mem_slow_ok(struct sfb_mem *m, uintptr_t addr, unsigned size)
{
	if (addr + size < addr)
		return false;
	uintptr_t first = addr & ~(uintptr_t)(PAGE - 1);
	uintptr_t last = (addr + size - 1) & ~(uintptr_t)(PAGE - 1);
	for (uintptr_t p = first;; p += PAGE) {
		if (!sfb_mem_in_window(m, p, 1) && !probe_page(m, p))
			return false;
		if (p == last)
			return true;
	}
}

SFB_NO_ASAN bool sfb_mem_copy(struct sfb_mem *m, uintptr_t addr, void *dst, unsigned size)
{
	if (size == 0)
		return true;
	if (!sfb_mem_in_window(m, addr, size) && !sfb_mem_slow_ok(m, addr, size))
		return false;
	const volatile uint8_t *src = (const volatile uint8_t *)addr;
	uint8_t *d = dst;
	for (unsigned i = 0; i < size; i++)
		d[i] = src[i];
	return true;
}
