/* The one accessor through which the walker reads stack memory.
 *
 * A walk carries a few windows of memory known to be readable.  A read
 * inside a window is one compare.  A read outside every window probes its
 * page once with a system call that copies from the address in the kernel
 * (rt_sigprocmask with an invalid 'how': EFAULT if unreadable, EINVAL
 * otherwise, no side effect), and a readable page becomes a window.  So a
 * corrupted stack pointer can never fault the walker, and a walk over one
 * stack pays about one probe per distinct page it touches, which the
 * per-thread cache in memread.c avoids for the thread's own stack
 * (docs/DESIGN.md, Stack reads). */
#ifndef SFB_MEMREAD_H
#define SFB_MEMREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SFB_MEM_WINDOWS 4

struct sfb_window {
	uintptr_t lo, hi; /* [lo, hi) readable */
};

struct sfb_mem {
	struct sfb_window win[SFB_MEM_WINDOWS]; /* win[0..nwin) in use */
	unsigned nwin;
	unsigned next;    /* round-robin replacement */
	unsigned probes;  /* system calls made by this walk */
	unsigned probe_budget;
};

#define SFB_PROBE_BUDGET 64 /* per walk: bounds the cost of a garbage stack */

/* The calling thread's own stack, [lo, hi), every page of it probed
 * readable once (memread.c).  Initial-exec TLS: see there. */
extern __thread uintptr_t sfb_tstack_lo __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t sfb_tstack_hi __attribute__((tls_model("initial-exec")));

/* The stack the thread said it runs on besides its own (a fiber's:
 * sframe_backtrace_set_stack()), [lo, hi); none while hi is 0.  Trusted
 * as readable, as the caller promised, by walks that do not run on the
 * thread's own stack.  Initial-exec TLS, written by sfb_mem_declare_stack()
 * so that a handler interrupting it sees no range or a whole one. */
extern __thread uintptr_t sfb_fstack_lo __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t sfb_fstack_hi __attribute__((tls_model("initial-exec")));

void sfb_mem_declare_stack(uintptr_t lo, uintptr_t hi);

void sfb_mem_init_slow(struct sfb_mem *m, uintptr_t own_sp);

/* Start a walk's memory view, with the calling thread's own stack (cached
 * per thread) as its first window.  Inline for the usual case, a walker
 * running inside the range already proved; own_sp is the address of a
 * local variable of the caller (so its page is readable: a window too,
 * where the thread's stack does not hold it). */
static inline void sfb_mem_init(struct sfb_mem *m, uintptr_t own_sp)
{
	uintptr_t lo = sfb_tstack_lo, hi = sfb_tstack_hi;
	m->next = m->probes = 0;
	m->probe_budget = SFB_PROBE_BUDGET;
	/* Not one compare (own_sp - lo < hi - lo): a handler interrupting the
	 * first anchoring sees lo set and hi still 0. */
	if (__builtin_expect(own_sp >= lo && own_sp < hi, 1)) {
		m->win[0] = (struct sfb_window){ lo, hi };
		m->nwin = 1;
		return;
	}
	sfb_mem_init_slow(m, own_sp);
}

/* Declare [lo, hi) readable without probing (the caller knows). */
void sfb_mem_add_window(struct sfb_mem *m, uintptr_t lo, uintptr_t hi);

bool sfb_mem_slow_ok(struct sfb_mem *m, uintptr_t addr, unsigned size);

/* The window holding [addr, addr + size), or NULL: window 0 first, the
 * thread's own stack, where nearly every walk runs. */
static inline const struct sfb_window *sfb_mem_window_of(const struct sfb_mem *m, uintptr_t addr,
							 unsigned size)
{
	/* One subtraction and one compare per window: addr - lo wraps to a
	 * huge value below lo.  Windows in use are at least a word long. */
	for (unsigned i = 0; i < m->nwin; i++)
		if (addr - m->win[i].lo <= m->win[i].hi - m->win[i].lo - size)
			return &m->win[i];
	return NULL;
}

static inline bool sfb_mem_in_window(const struct sfb_mem *m, uintptr_t addr,
				     unsigned size)
{
	return sfb_mem_window_of(m, addr, size) != NULL;
}

/* Stack words belong to other frames, whose sanitizer redzones are not
 * ours to respect: the loads are exempt from AddressSanitizer. */
#if defined(__clang__) || defined(__GNUC__)
#define SFB_NO_ASAN __attribute__((no_sanitize_address))
#else
#define SFB_NO_ASAN
#endif

/* The one place a stack word is dereferenced.  Only for an aligned addr
 * already shown to lie inside a window: by sfb_mem_read(), or by the
 * walker's fast path, which proves its slots lie in the window holding
 * SP (walk.c). */
SFB_NO_ASAN static inline uintptr_t sfb_mem_load_proved(uintptr_t addr)
{
	return __atomic_load_n((const uintptr_t *)addr, __ATOMIC_RELAXED);
}

/* Read one machine word (8 bytes) at addr.  False if unreadable or
 * misaligned. */
SFB_NO_ASAN static inline bool sfb_mem_read(struct sfb_mem *m, uintptr_t addr, uintptr_t *out)
{
	if (addr & 7)
		return false;
	if (!sfb_mem_in_window(m, addr, 8) && !sfb_mem_slow_ok(m, addr, 8))
		return false;
	*out = sfb_mem_load_proved(addr);
	return true;
}

/* Copy size bytes at addr (code bytes, any alignment). */
bool sfb_mem_copy(struct sfb_mem *m, uintptr_t addr, void *dst, unsigned size);

/* Is the page holding addr readable?  One system call, which may set errno
 * (entry points restore it: entry.h). */
bool sfb_probe_readable(uintptr_t addr);

#endif
