/* Stack memory reads that cannot fault.  See memread.h for the design.
 *
 * Probing techniques considered:
 * - mincore(): reports mapped pages, not readable ones, so a PROT_NONE
 *   guard page passes; rejected.
 * - process_vm_readv() on ourselves: reads without faulting, but one
 *   system call per word, and seccomp profiles sometimes forbid it.
 * - write() of the bytes to a pipe: needs a file descriptor kept open.
 * - rt_sigprocmask(~0, addr, NULL, 8): the kernel copies 8 bytes from addr
 *   before it rejects the invalid 'how'.  EFAULT means unreadable; nothing
 *   else happens.  Abseil's AddressIsReadable uses the same trick.  Chosen;
 *   about 150 ns here, paid once per page per walk. */
#include "memread.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096u
#define PROBE_BUDGET 64 /* per walk: bounds the cost of a garbage stack */

bool sfb_probe_readable(uintptr_t addr)
{
	int saved = errno;
	long r = syscall(SYS_rt_sigprocmask, ~0L, (void *)(addr & ~(uintptr_t)7),
			 (void *)0, 8);
	bool ok = !(r == -1 && errno == EFAULT);
	errno = saved;
	return ok;
}

void sfb_mem_add_window(struct sfb_mem *m, uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo)
		return;
	/* Grow a window this one touches, so a walk up one stack keeps one. */
	for (unsigned i = 0; i < SFB_MEM_WINDOWS; i++) {
		struct sfb_window *w = &m->win[i];
		if (w->hi > w->lo && lo <= w->hi && hi >= w->lo) {
			if (lo < w->lo)
				w->lo = lo;
			if (hi > w->hi)
				w->hi = hi;
			return;
		}
	}
	m->win[m->next] = (struct sfb_window){ lo, hi };
	m->next = (m->next + 1) % SFB_MEM_WINDOWS;
}

void sfb_mem_init(struct sfb_mem *m, uintptr_t sp, uintptr_t alt_lo,
		  uintptr_t alt_hi)
{
	memset(m, 0, sizeof *m);
	m->probe_budget = PROBE_BUDGET;
	(void)sp;
	/* A registered sigaltstack is the caller's memory, mapped for as long
	 * as it is registered. */
	if (alt_lo && alt_hi > alt_lo)
		sfb_mem_add_window(m, alt_lo, alt_hi);
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

bool sfb_mem_copy(struct sfb_mem *m, uintptr_t addr, void *dst, unsigned size)
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
