/* Garbage contexts: sframe_backtrace_ex() on a ucontext_t (from
 * getcontext(), then overwritten) whose registers are garbage, with a
 * fixed-seed PRNG.  Every walk must return without crashing, store at most
 * size frames (a guard after the buffer must stay intact), report a stop
 * reason in the enum's range (buffer-full only when full), start with the
 * context's PC as an exact frame 0, store no zero PC, keep errno, and take
 * less than SFB_GARBAGE_MAX_MS (default 10) milliseconds.
 *
 * Categories: random 64-bit RIP/RSP/RBP; random user-range values; RSP and
 * RBP in unmapped pages, in PROT_NONE pages, at the edge of a readable page
 * followed by a PROT_NONE one, misaligned; RIP in data pages; RIP at any
 * byte of the executable segments of the program, libc, ld.so and the
 * vDSO with RSP in random bytes, or in bytes seeded with plausible values
 * (real return addresses, code addresses, the signal restorer, pointers
 * into the buffer itself), with and without SFRAME_BT_FP_FALLBACK_ANY;
 * every combination of special values (0, 1, -1, canonical-hole edges,
 * ...); RIP 0.
 *
 * Last, a real stack: a thread with a known stack makes a deep call and
 * captures its context; the live stack region is copied to a buffer.  The
 * walk of the unmodified copy must equal the walk of the real stack; then
 * random words of the copy are corrupted, and besides the checks above the
 * walk must agree with the clean one for every frame whose stack slots lie
 * below the lowest corrupted word (a walk depends only on what it reads).
 *
 * SFB_GARBAGE_ITERS scales the iteration counts (default 1000 = 100%). */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "walk/walk_common.h"
#include "uc_regs.h"
#include "arch/arch.h"
#include "objects/objcache.h"
#include "walk/rowmemo.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define MAKE_DEFINED(p, n) VALGRIND_MAKE_MEM_DEFINED(p, n)
#endif
#endif
#ifndef MAKE_DEFINED
#define MAKE_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#define MAXF 64
#define GUARD 4

int main(void);

static double max_ms;
static long scale;
static uint64_t rs = 0x243f6a8885a308d3ull;
static ucontext_t base_uc;
static long page;

struct stats {
	const char *name;
	long walks, bad, slow, frames, crashes, over_1ms;
	double max_us, total_us;
	int stops[16];
	int printed;
};

static int iters(int n)
{
	long v = (long)n * scale / 1000;
	return v < 1 ? 1 : (int)v;
}

/* A walk that faults is a failure; it is reported, and the test goes on
 * with the next walk (the library holds no lock to leak). */
static sigjmp_buf crash_env;
static volatile int in_walk;
static volatile uintptr_t crash_pc, crash_addr;

static void on_crash(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;
	if (!in_walk) {
		signal(sig, SIG_DFL);
		return; /* re-executes and dies: a crash outside the library */
	}
	crash_pc = (uintptr_t)UC_PC(uc);
	crash_addr = (uintptr_t)si->si_addr;
	in_walk = 0;
	siglongjmp(crash_env, sig);
}

/* One walk with every generic check.  Returns the frame count; the frames
 * are left in out[] if given. */
static int walk_checked(struct stats *s, const ucontext_t *uc, unsigned flags, int size,
			struct sframe_bt_frame *out, struct sframe_bt_status *st_out)
{
	struct sframe_bt_frame f[MAXF + GUARD];
	struct sframe_bt_status st;
	memset(f, 0xa5, sizeof f);
	memset(&st, 0xa5, sizeof st);
	struct timespec a, b;
	uintptr_t rip = (uintptr_t)UC_PC(uc);
	int sig = sigsetjmp(crash_env, 1);
	if (sig) {
		s->walks++;
		s->bad++;
		s->crashes++;
		if (s->printed++ < 3)
			printf("# %s: CRASH signal %d at pc %#lx (%s), fault address %#lx; context "
			       "rip=%#lx rsp=%#lx rbp=%#lx flags=%u size=%d\n",
			       s->name, sig, (unsigned long)crash_pc,
			       wfn_lookup(NULL, crash_pc) >= 0 ? wfn_name(NULL, wfn_lookup(NULL, crash_pc))
							       : "library",
			       (unsigned long)crash_addr, (unsigned long)rip,
			       (unsigned long)UC_SP(uc),
			       (unsigned long)UC_FP(uc), flags, size);
		if (st_out)
			memset(st_out, 0, sizeof *st_out);
		return 0;
	}
	/* Time in CPU time of this thread, so that preemption does not count. */
	errno = 1234;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	in_walk = 1;
	int n = sframe_backtrace_ex(uc, f, size, flags, &st);
	in_walk = 0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	int err = errno;
	double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
	if (us > 1000)
		s->over_1ms++;

	const char *why = NULL;
	unsigned char guard[sizeof(struct sframe_bt_frame) * GUARD];
	memset(guard, 0xa5, sizeof guard);
	if (n < 0 || n > size)
		why = "frame count out of range";
	else if (memcmp(&f[size], guard, sizeof guard) != 0)
		why = "wrote past the buffer";
	else if (st.stop < SFRAME_BT_STOP_OUTERMOST || st.stop > SFRAME_BT_STOP_EH_FRAME_UNINDEXED)
		why = "stop reason out of range";
	else if (st.stop == SFRAME_BT_STOP_BUFFER_FULL && n != size)
		why = "buffer-full with room left";
	else if (rip == 0 && n != 0)
		why = "frames from a zero PC";
	else if (rip != 0 && (n < 1 || f[0].pc != rip || !f[0].exact ||
			      f[0].source != SFRAME_BT_FROM_CONTEXT))
		why = "frame 0 is not the context's PC";
	else if (err != 1234)
		why = "errno changed";
	for (int i = 0; !why && i < n; i++)
		if (f[i].pc == 0)
			why = "a zero PC";
	if (!why && st.frames_sframe + st.frames_fp + st.frames_signal > n)
		why = "status counts exceed the frames";
	if (us > max_ms * 1e3) {
		s->slow++;
		if (!why)
			why = "too slow";
	}
	s->walks++;
	s->frames += n;
	s->total_us += us;
	if (us > s->max_us)
		s->max_us = us;
	if (st.stop >= 0 && st.stop < 16)
		s->stops[st.stop]++;
	if (why) {
		s->bad++;
		if (s->printed++ < 3) {
			printf("# %s: %s (n=%d size=%d stop=%d %.0f us) rip=%#lx rsp=%#lx rbp=%#lx\n",
			       s->name, why, n, size, st.stop, us, (unsigned long)rip,
			       (unsigned long)UC_SP(uc),
			       (unsigned long)UC_FP(uc));
			if (n >= 0 && n <= size)
				print_walk("walk", NULL, f, n, st.stop);
		}
	}
	if (out && n > 0 && n <= size)
		memcpy(out, f, sizeof f[0] * (size_t)n);
	if (st_out)
		*st_out = st;
	return n;
}

static void report(struct stats *s)
{
	printf("# %-22s %6ld walks, %5.2f frames/walk, CPU time max %7.1f us, mean %5.2f us, "
	       "%ld over 1 ms; stops:",
	       s->name, s->walks, s->walks ? (double)s->frames / (double)s->walks : 0.0,
	       s->max_us, s->walks ? s->total_us / (double)s->walks : 0.0, s->over_1ms);
	for (int i = 0; i < 16; i++)
		if (s->stops[i])
			printf(" %s %d", sframe_bt_stop_name(i), s->stops[i]);
	printf("\n");
	CHECK(s->walks > 0 && s->bad == 0,
	      "%s: %ld walks, %ld failed a check (%ld crashed, %ld slower than %g ms)", s->name,
	      s->walks, s->bad, s->crashes, s->slow, max_ms);
}

static void set_regs(ucontext_t *uc, uintptr_t rip, uintptr_t rsp, uintptr_t rbp)
{
	*uc = base_uc;
	UC_PC(uc) = (greg_t)rip;
	UC_SP(uc) = (greg_t)rsp;
	UC_FP(uc) = (greg_t)rbp;
}

/* Random other registers too: a topmost rule may use any. */
static void scramble_gregs(ucontext_t *uc)
{
	for (int i = 0; i < UC_NGREGS; i++)
		if (!UC_GREG_IS_PC_SP_FP(i))
			UC_GREG(uc, i) = (greg_t)rnd_next(&rs);
}

static int rnd_size(void)
{
	uint64_t r = rnd_next(&rs) % 8;
	return r == 0 ? 1 : r == 1 ? 2 : (int)(rnd_next(&rs) % MAXF) + 1;
}

/* ---- Address material ----------------------------------------------------------- */

struct seg {
	uintptr_t lo, hi;
};
static struct seg exec_segs[8];
static int nexec;

static int collect_exec(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum && nexec < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			exec_segs[nexec].lo = info->dlpi_addr + ph->p_vaddr;
			exec_segs[nexec].hi = exec_segs[nexec].lo + ph->p_memsz;
			nexec++;
		}
	}
	return 0;
}

NOINL void fn_a(void)
{
	SPIN(1);
}

static uintptr_t restorer; /* the signal-return trampoline */
static uintptr_t real_ras[MAXF];
static int nreal_ras;

static void grab_restorer(int sig)
{
	(void)sig;
	restorer = (uintptr_t)__builtin_return_address(0);
}

/* A random PC inside a registered function of this program. */
static uintptr_t rnd_fn_pc(void)
{
	const struct wfn *w = &wfns[rnd_next(&rs) % (uint64_t)nwfn];
	return w->lo + rnd_next(&rs) % (w->hi - w->lo);
}

static uintptr_t rnd_exec_pc(void)
{
	const struct seg *s = &exec_segs[rnd_next(&rs) % (uint64_t)nexec];
	return s->lo + rnd_next(&rs) % (s->hi - s->lo);
}

/* A word that looks like something a stack holds. */
static uintptr_t plausible(uintptr_t buf_lo, size_t buf_len)
{
	switch (rnd_next(&rs) % 9) {
	case 0:
		return rnd_next(&rs);
	case 1:
		return nreal_ras ? real_ras[rnd_next(&rs) % (uint64_t)nreal_ras] : 0;
	case 2:
		return rnd_fn_pc();
	case 3:
		return rnd_exec_pc();
	case 4:
		return restorer;
	case 5: /* an aligned pointer into the buffer: frame-pointer chains */
		return buf_lo + (rnd_next(&rs) % (buf_len / 8)) * 8;
	case 6:
		return buf_lo + rnd_next(&rs) % buf_len; /* misaligned too */
	case 7:
		return rnd_next(&rs) % 4096;
	default:
		return 0;
	}
}

#define BUF_WORDS 8192
static uintptr_t *gbuf; /* 64 KB, between two PROT_NONE pages */

static void fill_random(void)
{
	for (int i = 0; i < BUF_WORDS; i++)
		gbuf[i] = rnd_next(&rs);
}
static void fill_plausible(void)
{
	for (int i = 0; i < BUF_WORDS; i++)
		gbuf[i] = plausible((uintptr_t)gbuf, BUF_WORDS * 8);
}
static uintptr_t rnd_in_buf(void)
{
	return (uintptr_t)gbuf + (rnd_next(&rs) % BUF_WORDS) * 8;
}

/* ---- The real stack, copied ------------------------------------------------------- */

#define DEPTH 14
#define TSTACK (256 * 1024)
static char *tstack;
static ucontext_t cap_uc;
static struct sframe_bt_frame real_f[MAXF];
static int real_n, real_stop;
static uintptr_t cap_lo, cap_hi; /* the copied region of the real stack */
static unsigned char *copy_clean;

/* The live stack holds other frames' sanitizer redzones: copy it with
 * loads AddressSanitizer does not check. */
__attribute__((no_sanitize_address)) static void copy_stack(void *dst, uintptr_t src,
							     size_t n)
{
	for (size_t i = 0; i < n; i++)
		((unsigned char *)dst)[i] = ((const volatile unsigned char *)src)[i];
}

/* capture() and deep() are exempt from AddressSanitizer, whose redzones
 * would give them frame-pointer-based frames: the copied stack (below)
 * walks like the real one only if no CFA depends on a saved FP, which
 * still points into the real stack. */
__attribute__((no_sanitize_address)) NOINL int capture(int x)
{
	struct sframe_bt_status st;
	getcontext(&cap_uc);
	real_n = sframe_backtrace_ex(&cap_uc, real_f, MAXF, 0, &st);
	real_stop = st.stop;
	uintptr_t sp = (uintptr_t)UC_SP(&cap_uc);
	cap_lo = sp & ~(uintptr_t)15; /* nothing below: the walk never reads there */
	cap_hi = (uintptr_t)tstack + TSTACK;
	copy_clean = malloc(cap_hi - cap_lo);
	copy_stack(copy_clean, cap_lo, cap_hi - cap_lo);
	/* Stack padding is uninitialised for memcheck; the copy is data. */
	MAKE_DEFINED(copy_clean, cap_hi - cap_lo);
	return x + real_n;
}

__attribute__((no_sanitize_address)) NOINL int deep(int d)
{
	volatile char pad[24];
	pad[d % 24] = (char)d;
	int r = d == 0 ? capture(d) : deep(d - 1);
	return r + pad[d % 24];
}

NOINL void *deep_thread(void *arg)
{
	(void)arg;
	int r = deep(DEPTH);
	return (void *)(long)r;
}

static void test_copy(void)
{
	static struct stats s = { .name = "corrupted stack copy" };
	pthread_attr_t a;
	pthread_t th;
	tstack = mmap(NULL, TSTACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, tstack, TSTACK);
	pthread_create(&th, &a, deep_thread, NULL);
	pthread_join(th, NULL);

	/* Expected: capture, deep x (DEPTH+1), deep_thread, libc. */
	int chain[DEPTH + 4], len = 0;
	chain[len++] = WFN(capture);
	int id_deep = WFN(deep);
	for (int i = 0; i <= DEPTH; i++)
		chain[len++] = id_deep;
	chain[len++] = WFN(deep_thread);
	int bad;
	int v = verify_chain(NULL, real_f, real_n, real_stop, MAXF, chain, len, &bad);
	CHECK(v == V_EXACT, "real deep stack: capture, deep x%d, deep_thread, libc (%s)",
	      DEPTH + 1, verdict_name[v]);
	if (v != V_EXACT)
		print_walk("real stack", NULL, real_f, real_n, real_stop);
	for (int i = 0; i < real_n && nreal_ras < MAXF; i++)
		real_ras[nreal_ras++] = real_f[i].pc;

	size_t len_b = cap_hi - cap_lo;
	/* mmap, not malloc: corrupted rows send reads past the copy, which
	 * must land in mapped, allocated memory or in nothing, never in the
	 * heap's free space (memcheck would rightly complain there). */
	size_t map_len = (len_b + 2 * (size_t)page + (size_t)page - 1) & ~((size_t)page - 1);
	unsigned char *copy = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t delta = (uintptr_t)copy - cap_lo;
	ucontext_t uc = cap_uc;
	uintptr_t rsp = (uintptr_t)UC_SP(&cap_uc);
	uintptr_t rbp = (uintptr_t)UC_FP(&cap_uc);
	UC_SP(&uc) = (greg_t)(rsp + delta);
	if (rbp >= cap_lo && rbp < cap_hi)
		UC_FP(&uc) = (greg_t)(rbp + delta);

	/* The clean copy walks like the real stack. */
	memcpy(copy, copy_clean, len_b);
	struct sframe_bt_frame clean[MAXF];
	struct sframe_bt_status cst;
	int cn = walk_checked(&s, &uc, 0, MAXF, clean, &cst);
	int same = cn == real_n && cst.stop == real_stop;
	for (int i = 0; same && i < cn; i++)
		same = clean[i].pc == real_f[i].pc &&
		       (real_f[i].cfa == 0 || clean[i].cfa == real_f[i].cfa + delta);
	CHECK(same, "the copied stack walks like the real one (%d vs %d frames)", cn, real_n);
	if (!same)
		print_walk("copy", NULL, clean, cn, cst.stop);

	/* The span holding the frames' slots: corrupt only there. */
	uintptr_t span_hi = rsp + delta;
	for (int i = 0; i < cn; i++)
		if (clean[i].cfa > span_hi)
			span_hi = clean[i].cfa;
	size_t words = (span_hi - (rsp + delta)) / 8 + 2;
	int trials = iters(3000), prefix_bad = 0, printed = 0;
	for (int t = 0; t < trials; t++) {
		memcpy(copy, copy_clean, len_b);
		int k = 1 + (int)(rnd_next(&rs) % 4);
		uintptr_t lowest = UINTPTR_MAX;
		for (int j = 0; j < k; j++) {
			uintptr_t *w = (uintptr_t *)(rsp + delta) + rnd_next(&rs) % words;
			*w = plausible((uintptr_t)copy, len_b);
			if ((uintptr_t)w < lowest)
				lowest = (uintptr_t)w;
		}
		unsigned flags = (t & 1) ? SFRAME_BT_FP_FALLBACK_ANY : 0;
		struct sframe_bt_frame f[MAXF];
		struct sframe_bt_status st;
		long crashes = s.crashes;
		int n = walk_checked(&s, &uc, flags, MAXF, f, &st);
		if (s.crashes != crashes)
			continue; /* already a failure */
		/* Frames 0..m+1 depend only on slots below clean[m].cfa. */
		int m = 0;
		while (m < cn - 1 && clean[m].cfa && clean[m].cfa <= lowest)
			m++;
		int ok = n >= m + 1 || n == cn;
		for (int i = 0; ok && i <= m && i < cn; i++)
			ok = f[i].pc == clean[i].pc && f[i].exact == clean[i].exact;
		if (!ok) {
			prefix_bad++;
			if (printed++ < 3) {
				printf("# corrupted copy: lowest corrupted word at +%#lx, frames 0..%d "
				       "should be unchanged\n",
				       (unsigned long)(lowest - (rsp + delta)), m);
				print_walk("clean", NULL, clean, cn, cst.stop);
				print_walk("corrupted", NULL, f, n, st.stop);
			}
		}
	}
	report(&s);
	CHECK(prefix_bad == 0,
	      "corrupted copy: frames below the first corrupted word are unchanged (%d of %d "
	      "trials differ)",
	      prefix_bad, trials);
	munmap(copy, map_len);
}

/* ---- A thread's first walk from a context on another stack ------------------------
 * A thread runs on a stack given with pthread_attr_setstack(); right below
 * it (no guard page) lies a 64 KB buffer, e.g. a coroutine stack that will
 * be freed.  The thread's first walk is from a context whose SP is in the
 * buffer; then the buffer is unmapped, and the same context is walked
 * again: the walk must stop (unreadable), not fault.  A walker that
 * remembered the buffer as part of the thread's own stack ("mapped for the
 * thread's whole life") would read the unmapped page. */

#define ANCHOR_BUF (64 * 1024)
#define ANCHOR_STACK (256 * 1024)
static char *anchor_region;
static struct stats anchor_stats = { .name = "stack-switch then unmap" };
static int anchor_n1, anchor_n2;

NOINL void *anchor_thread(void *arg)
{
	(void)arg;
	ucontext_t uc;
	uintptr_t *buf = (uintptr_t *)anchor_region;
	for (size_t i = 0; i < ANCHOR_BUF / 8; i++)
		buf[i] = plausible((uintptr_t)buf, ANCHOR_BUF);
	uintptr_t sp = (uintptr_t)anchor_region + ANCHOR_BUF / 2;
	set_regs(&uc, (uintptr_t)fn_a, sp, sp + 64);
	anchor_n1 = walk_checked(&anchor_stats, &uc, 0, MAXF, NULL, NULL);
	munmap(anchor_region, ANCHOR_BUF);
	anchor_n2 = walk_checked(&anchor_stats, &uc, 0, MAXF, NULL, NULL);
	set_regs(&uc, (uintptr_t)fn_a, sp + 4096, sp + 64);
	walk_checked(&anchor_stats, &uc, SFRAME_BT_FP_FALLBACK_ANY, MAXF, NULL, NULL);
	return NULL;
}

static void test_anchor(void)
{
	anchor_region = mmap(NULL, ANCHOR_BUF + ANCHOR_STACK, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_t a;
	pthread_t th;
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, anchor_region + ANCHOR_BUF, ANCHOR_STACK);
	pthread_create(&th, &a, anchor_thread, NULL);
	pthread_join(th, NULL);
	report(&anchor_stats);
	munmap(anchor_region + ANCHOR_BUF, ANCHOR_STACK);
}

/* dlopen() a helper object of the build and find sym in it (and the
 * object, in *r); NULL, after a failed check, if that fails. */
static void *load_helper(const char *name, const char *sym, void **h, struct dl_find_object *r)
{
	char path[PATH_MAX];
	build_path(name, path, sizeof path);
	*h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *fn = *h ? dlsym(*h, sym) : NULL;
	if (fn && _dl_find_object(fn, r) == 0)
		return fn;
	CHECK(0, "dlopen %s and find %s in it: %s", path, sym, *h ? "not found" : dlerror());
	if (*h)
		dlclose(*h);
	return NULL;
}

/* ---- An object whose first page cannot be read ------------------------------------
 * Nor can its program headers: the walker probes the page once, describes
 * the object as having no rows, and must not read the page when it meets
 * the object again in its cache (the check that a cache hit is still the
 * object described must not read its ELF header then).  An object no
 * earlier test loaded: where a readable object was cached, the
 * first page is trusted to stay readable (objcache.h). */

static void test_unreadable_first_page(void)
{
	static struct stats s = { .name = "object with an unreadable first page" };
	void *h;
	struct dl_find_object r;
	void *fn = load_helper("walk_fc_lib.so", "fclib_mid", &h, &r);
	if (!fn)
		return;
	char *first = r.dlfo_map_start;
	if (mprotect(first, (size_t)page, PROT_NONE)) {
		CHECK(0, "unreadable first page: mprotect");
		dlclose(h);
		return;
	}
	ucontext_t uc;
	set_regs(&uc, (uintptr_t)fn + 4, rnd_in_buf(), rnd_in_buf());
	int differ = 0;
	/* Without _dl_find_object (glibc < 2.35), the object table cannot
	 * tell the object is still there without its headers: no-object. */
	int want = dlsym(RTLD_DEFAULT, "_dl_find_object") ? SFRAME_BT_STOP_NO_UNWIND_INFO
							   : SFRAME_BT_STOP_NO_OBJECT;
	for (int i = 0; i < 3; i++) {
		struct sframe_bt_frame f[MAXF];
		struct sframe_bt_status st;
		int n = walk_checked(&s, &uc, 0, MAXF, f, &st);
		if (n != 1 || f[0].pc != (uintptr_t)fn + 4 || st.stop != want)
			differ++;
	}
	mprotect(first, (size_t)page, PROT_READ);
	dlclose(h);
	report(&s);
	CHECK(differ == 0,
	      "unreadable first page: each of 3 walks (the first discovers the object, the "
	      "others find it cached) is its PC alone, stopped for want of rows (%d differ)",
	      differ);
}

/* ---- The object a sample recalls ----------------------------------------------------
 * After a walk from a ucontext, the thread remembers the first object the
 * walk confirmed (objcache.h: sfb_objcache_recalled), and its next sample
 * prefetches that object's lines: the cache slot's own description of it,
 * never a copy (a copy lives on a walk's stack and dies with it), and
 * nothing for the main program, which needs no confirming.  A walk from
 * the caller's own registers is no sample and leaves it alone.  Buffers of
 * one frame: the walk confirms only frame 0's object. */

/* A one-frame sample at fn + 4 (a stack of random words: only frame 0's
 * object is confirmed); the object it recalls. */
static const struct sfb_object *sample_at(const void *fn)
{
	ucontext_t uc;
	void *pcs[1];
	set_regs(&uc, (uintptr_t)fn + 4, rnd_in_buf(), rnd_in_buf());
	sframe_backtrace_ucontext(&uc, pcs, 1);
	return sfb_objcache_recalled;
}

static void test_recalled_object(void)
{
	void *h;
	struct dl_find_object r;
	void *fn = load_helper("walk_churn_a.so", "churn_mid", &h, &r);
	if (!fn)
		return;
	const struct sfb_object *o = sample_at(fn);
	void *pcs[1];
	CHECK(o && o->map_start == (uintptr_t)r.dlfo_map_start && o->live && o->home == o,
	      "recalled object: a sample in a dlopen()ed object recalls the cache slot's "
	      "description of it");
	sframe_backtrace(pcs, 1);
	CHECK(sfb_objcache_recalled == o, "recalled object: a walk from the caller's registers "
	      "leaves it alone");
	CHECK(sample_at((const void *)fn_a) == NULL,
	      "recalled object: a sample in the main program recalls none");
	dlclose(h);
}

/* ---- Dense slots -------------------------------------------------------------------
 * The cache hands out its slots in the order objects are first seen
 * (objcache.c: a page of the table costs two page faults when first
 * touched, and hashed slots gave each object a page of its own).  Six
 * objects, each discovered by a sample in it: the slots their
 * descriptions live in (the recalled object is the slot's own) lie among
 * the slots handed out so far, next to each other, where hashing spread
 * them over the 240 KiB table; and no slot is handed out twice for the
 * same object, nor lost. */

static void test_dense_slots(void)
{
	static const char *const names[] = { "walk_churn_a.so", "walk_churn_b.so",
					     "walk_churn_c.so", "walk_churn_d.so",
					     "walk_churn_x.so", "walk_churn_y.so" };
	enum { N = sizeof names / sizeof names[0] };
	void *h[N];
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int found = 0;
	for (int i = 0; i < N; i++) {
		struct dl_find_object r;
		void *fn = load_helper(names[i], "churn_mid", &h[i], &r);
		if (!fn) {
			h[i] = NULL;
			continue;
		}
		const struct sfb_object *o = sample_at(fn);
		if (o && o->map_start == (uintptr_t)r.dlfo_map_start) {
			found++;
			lo = (uintptr_t)o < lo ? (uintptr_t)o : lo;
			hi = (uintptr_t)o > hi ? (uintptr_t)o : hi;
		}
	}
	struct sfb_cache_stats st;
	sfb_objcache_stats(&st);
	/* A slot is struct sfb_object and its sequence number: under 256 bytes. */
	CHECK(found == N && hi - lo < 256u * st.slots_handed && st.slots_handed < 64,
	      "dense slots: the %d objects' slots (%d found) lie within the %u slots handed out "
	      "(span %lu bytes)", N, found, st.slots_handed, (unsigned long)(hi - lo));
	CHECK(st.slots_used <= st.slots_handed && st.slots_handed <= st.discoveries,
	      "dense slots: %u in use <= %u handed out <= %u discoveries", st.slots_used,
	      st.slots_handed, st.discoveries);
	unsigned before = st.slots_handed;
	for (int i = 0; i < N; i++) {
		struct dl_find_object r;
		void *fn = h[i] ? dlsym(h[i], "churn_mid") : NULL;
		if (fn && _dl_find_object(fn, &r) == 0)
			sample_at(fn);
	}
	sfb_objcache_stats(&st);
	CHECK(st.slots_handed == before,
	      "dense slots: objects seen again are found in their slots (%u handed out, then %u)",
	      before, st.slots_handed);
	for (int i = 0; i < N; i++)
		if (h[i])
			dlclose(h[i]);
}

/* ---- An FP-based row whose saved FP lies below SP -----------------------------------
 * A memoised FP-based row reads the caller's FP at CFA-16.  When the CFA
 * is only 8 above SP, that word lies below SP: dead, and the general path
 * keeps FP instead (an epilogue past `leave` has restored it already), so
 * the fast path must refuse the row there (walk.c: CFA-16 >= SP).  A
 * crafted context: frame 0 at fp_vla()'s first instruction whose row is
 * CFA = FP+16 (after its prologue; the first walk memoises that row under
 * the exact PC and the second applies it on the fast path), FP = SP-8, so CFA =
 * SP+8; [SP] is a return address in fp_vla() (FP-based too), [SP-8] a
 * plausible FP.  Both walks must be frame 0, that return address, then a
 * stop (frame 1's CFA, FP+16 = SP+8, is not above its SP); trusting the
 * dead word would go on to a third frame. */

static uintptr_t fp_vla_ra;

NOINL int fp_vla_callee(int x)
{
	fp_vla_ra = (uintptr_t)__builtin_return_address(0);
	void *pcs[8];
	sframe_backtrace(pcs, 8); /* memoises fp_vla's return address */
	return x + 1;
}

NOINL int fp_vla(int n)
{
	volatile char buf[n]; /* a VLA: RBP is the frame pointer, CFA = FP+16 */
	buf[0] = (char)n;
	return fp_vla_callee(buf[0]) + buf[n - 1];
}

/* Walk from (pc, sp, fp) `times` times with flags, with walk_checked()'s
 * checks (a fault is caught and fails the walk); count the walks that give
 * want_n frames, frame 0 at pc, frame 1 (if wanted) at pc1, and stop
 * want_stop. */
static int walk_from(const char *what, int times, unsigned flags, uintptr_t pc, uintptr_t sp,
		     uintptr_t fp, int want_n, uintptr_t pc1, int want_stop)
{
	struct stats s = { .name = what };
	int good = 0;
	for (int i = 0; i < times; i++) {
		ucontext_t uc;
		set_regs(&uc, pc, sp, fp);
		struct sframe_bt_frame f[8];
		struct sframe_bt_status st;
		long bad = s.bad;
		int n = walk_checked(&s, &uc, flags, 8, f, &st);
		int ok = s.bad == bad && n == want_n && f[0].pc == pc &&
			 (want_n < 2 || f[1].pc == pc1) && st.stop == want_stop;
		good += ok;
		if (!ok)
			printf("# %s, walk %d: %d frames (want %d), stop %s (want %s)\n", what, i + 1, n,
			       want_n, sframe_bt_stop_name(st.stop), sframe_bt_stop_name(want_stop));
	}
	return good;
}

/* Words for a frame made up on this thread's stack: odd ones a real
 * return address (fp_vla()'s), even ones pointers three words up (round
 * inside frame[]), so that a walk that took a wrong CFA or FP would go
 * on, not stop. */
static void plausible_frame(uintptr_t frame[64])
{
	for (int i = 0; i < 64; i++)
		frame[i] = i % 2 ? fp_vla_ra : (uintptr_t)&frame[(i + 3) % 64];
}

/* The first instruction of fp_vla() whose row is CFA = FP+16 with the
 * caller's FP at CFA-16 (right after the prologue), by the decoder; 0,
 * and a failed check, if none.  fp_vla() is walked through first,
 * memoising its return address. */
static uintptr_t fp_record_pc(void)
{
	fp_vla(8);
	struct sfb_object o;
	uintptr_t pc = 0;
	if (fp_vla_ra && sfb_objcache_find((uintptr_t)fp_vla, &o) == 0 && sfb_object_has_rows(&o))
		for (uintptr_t a = (uintptr_t)fp_vla; a < (uintptr_t)fp_vla + 64 && !pc; a++) {
			struct sfb_row row;
			if (sfb_lookup(&o.sec, a, &row) == SFB_OK && row.cfa.reg == SFB_DWARF_FP &&
			    row.cfa.off == 16 && row.fp.kind == SFB_LOC_EXPR && row.fp.off == -16)
				pc = (uintptr_t)row.pc_lo;
		}
	if (!pc)
		CHECK(0, "fp_vla() has a row CFA = FP+16 after its prologue and was walked through");
	return pc;
}

static void test_fp_row_below_sp(void)
{
	uintptr_t pc = fp_record_pc();
	if (!pc)
		return;
	uintptr_t frame[64];
	memset(frame, 0, sizeof frame);
	uintptr_t sp = (uintptr_t)&frame[32];
	frame[31] = sp + 8;        /* below SP: a plausible FP, dead */
	frame[32] = fp_vla_ra;     /* frame 0's return address */
	frame[33] = sp + 32;       /* what the dead FP's frame would hold */
	frame[34] = fp_vla_ra;
	int good = walk_from("FP-based row, saved FP below SP", 2, 0, pc, sp, sp - 8, 2, fp_vla_ra,
			     SFRAME_BT_STOP_BAD_CFA);
	CHECK(good == 2, "an FP-based row with its saved FP below SP: the general path (first "
	      "walk) and the fast path (second) keep FP and stop at the next frame (%d of 2)",
	      good);
}

/* A frame record's row (CFA = FP+16) where FP is not aligned (inside the
 * stack window), or so far below SP that the CFA is too, or so near the
 * top of the address space that FP+16 wraps round: the CFA is refused
 * (bad-cfa) at frame 0, by the general path and by the fast path alike
 * (each walk twice: the second finds the row memoised).  Without the fast
 * path's own tests it would read the frame's slots at the wrong place and
 * walk on. */
static void test_fp_record_refused(void)
{
	uintptr_t pc = fp_record_pc();
	if (!pc)
		return;
	uintptr_t frame[64];
	uintptr_t sp = (uintptr_t)&frame[16];
	plausible_frame(frame);
	const uintptr_t fps[] = { sp + 4, sp + 8 * 9 + 1, sp + 8 * 20 + 7, sp - 24,
				  UINTPTR_MAX - 7, UINTPTR_MAX - 15 };
	int good = 0, total = 0;
	for (size_t k = 0; k < sizeof fps / sizeof fps[0]; k++, total += 2)
		good += walk_from("frame record, FP refused", 2, 0, pc, sp, fps[k], 1, 0,
				  SFRAME_BT_STOP_BAD_CFA);
	CHECK(good == total, "a frame record's row whose FP is misaligned, below SP or wraps "
	      "the CFA: bad-cfa at frame 0, general and fast path (%d of %d)", good, total);
}


/* ---- The fast path's conditions, frame by frame ---------------------------------------
 * The fast path applies a memoised row only where the general path would
 * apply it the same way (rowmemo.h: the safety condition), and applies it
 * as the row says.  Contexts on this thread's stack (the only window the
 * fast path uses), each walked twice where the first walk memoises frame
 * 0's row (under its exact PC) and the second applies it on the fast path;
 * or with a row planted in the memo under frame 0's exact PC, which only
 * the fast path then uses (the general path would look up the object's
 * own row). */

/* A PC in [fn, fn + 256) whose row the memo keeps, based on FP if on_fp
 * else on SP, compiled into *m; 0 if there is none. */
static uintptr_t memo_row_pc(const void *fn, bool on_fp, struct sfb_memo_row *m)
{
	struct sfb_object o;
	if (sfb_objcache_find((uintptr_t)fn, &o) != 0 || !sfb_object_has_rows(&o))
		return 0;
	for (uintptr_t a = (uintptr_t)fn; a < (uintptr_t)fn + 256; a++) {
		struct sfb_row row;
		if (sfb_object_row(&o, a, 0, &row) == 0 &&
		    sfb_memo_row_of(&row, SFB_DWARF_SP, SFB_DWARF_FP, m) &&
		    (m->cfa_word & 1) == on_fp)
			return a;
	}
	return 0;
}


/* An SP-based row where SP is not aligned: its CFA is not aligned either,
 * and is refused (bad-cfa) at frame 0 by both paths. */
static void test_sp_row_misaligned_sp(void)
{
	struct sfb_memo_row m;
	uintptr_t pc = memo_row_pc((const void *)fp_vla_callee, false, &m);
	if (!pc) {
		CHECK(0, "fp_vla_callee() has an SP-based row the memo keeps");
		return;
	}
	uintptr_t frame[64];
	plausible_frame(frame);
	uintptr_t sp = (uintptr_t)&frame[16] + 4;
	int good = walk_from("SP-based row, misaligned SP", 2, 0, pc, sp, (uintptr_t)&frame[20], 1,
			     0, SFRAME_BT_STOP_BAD_CFA);
	CHECK(good == 2, "an SP-based row with a misaligned SP: bad-cfa at frame 0, general and "
	      "fast path (%d of 2)", good);
}

NOINL int planted_fn(int x)
{
	return x * 3 + 1;
}

/* Plant row under the exact PC pc of the main program (kept: its rows are
 * memoised under SFB_MEMO_KEPT_EPOCH, for a walk that reads .eh_frame);
 * unplant() makes it unreachable again. */
static void plant_exact(uintptr_t pc, struct sfb_memo_row row)
{
	sfb_memo_put_exact(SFB_MEMO_EXACT(pc), SFB_MEMO_KEPT_EPOCH, &row);
}

static void unplant_exact(uintptr_t pc)
{
	/* Under an epoch no walk uses (description epochs are even, from 2,
	 * and a walk adds at most 1: objcache.c, walk.c). */
	sfb_memo_put_exact(SFB_MEMO_EXACT(pc), 1, &(struct sfb_memo_row){ .cfa_word = 8, .ra_slot = -1 });
}

/* walk_from() once with row planted under the exact PC pc. */
static int walk_planted(const char *what, uintptr_t pc, struct sfb_memo_row row, uintptr_t sp,
			uintptr_t fp, int want_n, uintptr_t pc1, int want_stop)
{
	plant_exact(pc, row);
	int good = walk_from(what, 1, 0, pc, sp, fp, want_n, pc1, want_stop);
	unplant_exact(pc);
	return good;
}

/* A memoised FP-based row with the CFA at FP + SFB_FP_CFA_OFFSET that is
 * not a frame record's: FP unchanged (no FP slot).  The caller's FP is
 * then this frame's FP, not the word below the RA.  Frame 1 is fp_vla()'s
 * return address, whose row is a frame record's: with FP unchanged its
 * CFA is frame 0's again, not above its SP, and the walk stops there
 * (bad-cfa); taking the word at CFA-16 as the caller's FP would walk on
 * through the records planted above. */
static void test_fp_row_fp_unchanged(void)
{
	if (!SFB_FP_RULE || !fp_record_pc())
		return;
	uintptr_t pc = (uintptr_t)planted_fn + 1;
	struct sfb_memo_row row = { .cfa_word = SFB_FP_CFA_OFFSET | 1, .ra_slot = -1, .fp_slot = 0 };
	uintptr_t frame[64];
	plausible_frame(frame);
	uintptr_t sp = (uintptr_t)&frame[16], fp = (uintptr_t)&frame[20];
	frame[21] = fp_vla_ra; /* frame 0's RA, at CFA-8 */
	int good = walk_planted("FP-based row, FP unchanged", pc, row, sp, fp, 2, fp_vla_ra,
				SFRAME_BT_STOP_BAD_CFA);
	CHECK(good == 1, "a memoised row CFA = FP+16 that keeps FP is no frame record's: the "
	      "caller's FP is unchanged (%d of 1)", good);
}

/* A memoised FP-based row with the RA and FP saved in the two words below
 * the CFA, as a frame record's, but the CFA further above FP (FP + 32):
 * no frame record's, and the CFA, RA and caller's FP are taken where the
 * row says.  Frame 1 is fp_vla()'s return address (a frame record's row)
 * with a caller's FP that lies below its SP: the walk stops there
 * (bad-cfa).  Taking the row for a frame record's would read the RA at
 * FP + 8 instead, 0 here. */
static void test_fp_row_not_record(void)
{
	if (!SFB_FP_RULE || !fp_record_pc())
		return;
	uintptr_t pc = (uintptr_t)planted_fn + 2;
	struct sfb_memo_row row = { .cfa_word = (SFB_FP_CFA_OFFSET + 16) | 1, .ra_slot = -1,
				    .fp_slot = SFB_FP_FP_OFFSET / 8 };
	uintptr_t frame[64];
	plausible_frame(frame);
	uintptr_t sp = (uintptr_t)&frame[16], fp = (uintptr_t)&frame[20];
	frame[21] = 0;                       /* FP + 8 */
	frame[22] = (uintptr_t)&frame[22];   /* the caller's FP, at CFA-16 */
	frame[23] = fp_vla_ra;               /* the RA, at CFA-8 */
	int good = walk_planted("FP-based row, CFA = FP+32", pc, row, sp, fp, 2, fp_vla_ra,
				SFRAME_BT_STOP_BAD_CFA);
	CHECK(good == 1, "a memoised row CFA = FP+32 with a frame record's slots is applied as "
	      "it says, not as a frame record (%d of 1)", good);
}

/* A memoised FP-based row that is not a frame record's (CFA = FP+32, RA
 * and FP saved at CFA-8 and CFA-16), with an FP that the general path
 * refuses or treats apart, applied the same way by the fast path
 * (rowmemo.h, SFB_MEMO_FP_CFA_BAD):
 * - FP misaligned: so is the CFA (bad-cfa);
 * - the FP slot one word below SP: dead, the caller keeps FP (an epilogue
 *   after its pop), so frame 1, fp_vla()'s return address, finds its
 *   frame record below its SP (bad-cfa); reading the dead word would walk
 *   on through the records planted above;
 * - FP so low that the CFA (8) and its slots wrap round below 0: the CFA
 *   is below SP (bad-cfa), and the slots must not be read;
 * - FP far above the stack window: the CFA is too far from SP (bad-cfa)
 *   or its slots unreadable (unreadable), and must not be read directly. */
static void test_fp_row_refused(void)
{
	if (!SFB_FP_RULE || !fp_record_pc())
		return;
	uintptr_t pc = (uintptr_t)planted_fn + 3;
	struct sfb_memo_row row = { .cfa_word = 32 | 1, .ra_slot = -1, .fp_slot = -2 };
	uintptr_t frame[64];
	plausible_frame(frame);
	uintptr_t sp = (uintptr_t)&frame[16];
	frame[15] = (uintptr_t)&frame[24]; /* below SP: a plausible FP, dead */
	frame[16] = fp_vla_ra;
	const struct {
		const char *what;
		uintptr_t fp;
		int n;
	} cases[] = {
		{ "FP misaligned", (uintptr_t)&frame[20] + 4, 1 },
		{ "FP slot below SP", sp - 24, 2 },
		{ "CFA wraps below 0", (uintptr_t)-24, 1 },
		{ "CFA above the window", (uintptr_t)1 << 47, 1 },
	};
	plant_exact(pc, row);
	int good = 0, total = 0;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		/* Far above the window, the general path finds the CFA too far
		 * from SP (walk.c: 256 MiB), or, for a stack that close to it,
		 * its slots unreadable. */
		uintptr_t cfa = cases[k].fp + 32;
		int stop = k == 3 && cfa - sp <= (256u << 20) ? SFRAME_BT_STOP_UNREADABLE
							      : SFRAME_BT_STOP_BAD_CFA;
		good += walk_from(cases[k].what, 1, 0, pc, sp, cases[k].fp, cases[k].n, fp_vla_ra, stop);
		total++;
	}
	unplant_exact(pc);
	CHECK(good == total, "a memoised FP-based row (not a frame record's) whose FP is "
	      "misaligned, puts the FP slot below SP, wraps the CFA or lies above the window: "
	      "as the general path would apply it (%d of %d)", good, total);
}

/* A frame-pointer step out of code in no object (SFRAME_BT_FP_FALLBACK_ANY,
 * as for a JIT that registers nothing) to a frame record whose return
 * address lies on the stack: a realigned frame's word (libjpeg-turbo's
 * SIMD code stores its frame record so), which is no code.  The walk
 * stops there as at any return address in no object (no-object, not a
 * frame) instead of reporting it as a frame and stepping on from it as
 * code.  The same record with a return address
 * in code is walked through. */
static void test_fp_fallback_ra_on_stack(void)
{
	if (!SFB_FP_RULE || !fp_record_pc())
		return;
	char *none = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none == MAP_FAILED) {
		CHECK(0, "mmap");
		return;
	}
	uintptr_t pc = (uintptr_t)none + 16; /* in no object */
	uintptr_t frame[64];
	plausible_frame(frame);
	uintptr_t sp = (uintptr_t)&frame[8], fp = (uintptr_t)&frame[16];
	frame[16] = (uintptr_t)&frame[24];
	frame[17] = (uintptr_t)&frame[40];
	int good = walk_from("FP step to a return address on the stack", 2, SFRAME_BT_FP_FALLBACK_ANY,
			     pc, sp, fp, 1, 0, SFRAME_BT_STOP_NO_OBJECT);
	CHECK(good == 2, "a frame-pointer step out of code in no object to a return address on "
	      "the stack: no frame, no-object (%d of 2 walks)", good);
	frame[17] = fp_vla_ra;
	ucontext_t uc;
	set_regs(&uc, pc, sp, fp);
	struct stats st = { .name = "FP step to a return address in code" };
	struct sframe_bt_frame f[8];
	struct sframe_bt_status status;
	int n = walk_checked(&st, &uc, SFRAME_BT_FP_FALLBACK_ANY, 8, f, &status);
	CHECK(st.bad == 0 && n >= 2 && f[1].pc == fp_vla_ra &&
		      f[1].source == SFRAME_BT_FROM_FRAME_POINTER,
	      "the same record with a return address in code: its frame by the frame-pointer "
	      "rule (%d frames, stop %s)", n, sframe_bt_stop_name(status.stop));
	munmap(none, (size_t)page);
}

/* Frame 0 at an exact PC X whose return address is X again: frame 1's row
 * is that of the return address X (of the call before it), not the exact
 * PC's, which the fast path holds in registers.  They differ where a call
 * is a function's last instruction and X the next function's first (a
 * noreturn callee placed right after its caller).  Here the exact row is
 * planted (CFA = SP+24) and X follows no call: the walk stops after
 * frame 0, X being no return address (bad-ra); reusing the exact row
 * would walk on through the frames made up above. */
static void test_exact_row_not_reused(void)
{
	if (!fp_record_pc())
		return;
	uintptr_t pc = (uintptr_t)planted_fn + 4;
	struct sfb_memo_row row = { .cfa_word = 24, .ra_slot = -1 };
	uintptr_t frame[64];
	plausible_frame(frame);
	uintptr_t sp = (uintptr_t)&frame[16];
	frame[18] = pc; /* frame 0's RA, at CFA-8: X again */
	plant_exact(pc, row);
	int good = walk_from("exact PC, its own return address", 1, 0, pc, sp, (uintptr_t)&frame[40],
			     1, 0, SFRAME_BT_STOP_BAD_RA);
	/* The same through the PC-only walk of a sample (its own loop). */
	ucontext_t uc;
	set_regs(&uc, pc, sp, (uintptr_t)&frame[40]);
	void *pcs[8];
	int n = sframe_backtrace_ucontext(&uc, pcs, 8);
	good += n == 1 && pcs[0] == (void *)pc;
	if (n != 1)
		printf("# exact PC, its own return address, PCs only: %d frames (want 1)\n", n);
	unplant_exact(pc);
	CHECK(good == 2, "frame 0 at an exact PC whose return address is the same PC: frame 1 "
	      "gets the return address's row, not the exact PC's (%d of 2)", good);
}

/* A walk that refuses .eh_frame (SFRAME_BT_NO_EH_FRAME) keeps its memoised
 * rows apart (walk.c: the memo epoch plus one), so that the fast path
 * never applies a CFI row for it, also in a dlopen()ed object the thread
 * confirms through its recent objects (objcache.h).  A CFI row planted
 * under the exact PC of churn_mid()'s first instruction, under the epoch
 * a walk reading .eh_frame uses, must not be used by a walk refusing it,
 * which applies the object's own row instead: its RA at SP is 0, the
 * outermost frame; the planted row would take the RA at SP+16. */
static void test_no_eh_frame_epoch(void)
{
	void *h;
	struct dl_find_object r;
	void *fn = load_helper("walk_churn_a.so", "churn_mid", &h, &r);
	if (!fn)
		return;
	struct sfb_object o;
	uintptr_t pc = (uintptr_t)fn;
	if (sfb_objcache_find(pc, &o) != 0 || !sfb_object_has_rows(&o) || sfb_object_is_kept(&o)) {
		CHECK(0, "walk_churn_a.so is cached with rows and not kept");
		dlclose(h);
		return;
	}
	uintptr_t frame[64];
	plausible_frame(frame);
	uintptr_t sp = (uintptr_t)&frame[16];
	frame[16] = 0;
	sample_at(fn); /* the thread's recent object */
	struct sfb_memo_row row = { .cfa_word = 24, .ra_slot = -1, .flags = SFB_MEMO_CFI };
	sfb_memo_put_exact(SFB_MEMO_EXACT(pc), o.epoch, &row);
	int good = walk_from("no .eh_frame", 2, SFRAME_BT_NO_EH_FRAME, pc, sp,
			     (uintptr_t)&frame[20], 1, 0, SFRAME_BT_STOP_OUTERMOST);
	unplant_exact(pc);
	CHECK(good == 2, "a walk refusing .eh_frame uses no row memoised for walks that read "
	      "it, in a dlopen()ed object (%d of 2)", good);
	dlclose(h);
}

/* ---- Main ------------------------------------------------------------------------- */


int main(void)
{
	/* A hang, not a slow walk, is what the limit is for: under valgrind
	 * one walk of thousands once took 236 ms of CPU time. */
	max_ms = (double)env_long("SFB_GARBAGE_MAX_MS", under_valgrind() ? 2000 : 10);
	scale = env_long("SFB_GARBAGE_ITERS", 1000);
	objs_init();
	page = sysconf(_SC_PAGESIZE);
	double t0 = now_s();
	getcontext(&base_uc);
	WFN(main);
	WFN(fn_a);
	WFN(deep);
	WFN(capture);
	WFN(deep_thread);
	dl_iterate_phdr(collect_exec, NULL);
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	if (vdso && nexec < 8) {
		exec_segs[nexec].lo = vdso;
		exec_segs[nexec].hi = vdso + (uintptr_t)page;
		nexec++;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	signal(SIGUSR2, grab_restorer);
	raise(SIGUSR2);
	CHECK(restorer && in_libc(restorer), "found the signal restorer in libc (%#lx)",
	      (unsigned long)restorer);

	/* [PROT_NONE][64 KB buffer][PROT_NONE][RW page][PROT_NONE][unmapped] */
	char *area = mmap(NULL, (size_t)(page * 5) + BUF_WORDS * 8, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	mprotect(area, (size_t)page, PROT_NONE);
	gbuf = (uintptr_t *)(area + page);
	char *after = area + page + BUF_WORDS * 8;
	mprotect(after, (size_t)page, PROT_NONE);
	char *rw = after + page;
	char *none = rw + page;
	mprotect(none, (size_t)page, PROT_NONE);
	char *gone = none + page;
	munmap(gone, (size_t)page);
	memset(rw, 0x5a, (size_t)page);

	/* The real stack first: its return addresses seed the plausible
	 * values. */
	test_copy();
	test_anchor();

	ucontext_t uc;
	{
		static struct stats s = { .name = "random 64-bit" };
		for (int i = 0; i < iters(4000); i++) {
			set_regs(&uc, rnd_next(&rs), rnd_next(&rs), rnd_next(&rs));
			if (i & 1)
				scramble_gregs(&uc);
			walk_checked(&s, &uc, (unsigned)(i & 2 ? SFRAME_BT_FP_FALLBACK_ANY : 0),
				     rnd_size(), NULL, NULL);
		}
		report(&s);
	}
	{
		static struct stats s = { .name = "random user-range" };
		for (int i = 0; i < iters(4000); i++) {
			uint64_t m = (1ull << 47) - 1;
			set_regs(&uc, rnd_next(&rs) & m, rnd_next(&rs) & m, rnd_next(&rs) & m);
			walk_checked(&s, &uc, 0, rnd_size(), NULL, NULL);
		}
		report(&s);
	}
	{
		static struct stats s = { .name = "unmapped/PROT_NONE sp" };
		uintptr_t bad_sps[] = {
			(uintptr_t)gone, (uintptr_t)gone + 8, (uintptr_t)none, (uintptr_t)none + 64,
			(uintptr_t)area, (uintptr_t)after,
			(uintptr_t)none - 8, (uintptr_t)none - 16, /* reads run into PROT_NONE */
			(uintptr_t)after - 8, (uintptr_t)gbuf - 8,
		};
		int nb = (int)(sizeof bad_sps / sizeof bad_sps[0]);
		for (int i = 0; i < iters(2000); i++) {
			uintptr_t sp = bad_sps[rnd_next(&rs) % (uint64_t)nb];
			uintptr_t bp = (i & 1) ? bad_sps[rnd_next(&rs) % (uint64_t)nb] : rnd_in_buf();
			set_regs(&uc, (i & 2) ? rnd_fn_pc() : rnd_exec_pc(), sp, bp);
			walk_checked(&s, &uc, (i & 4) ? SFRAME_BT_FP_FALLBACK_ANY : 0, rnd_size(),
				     NULL, NULL);
		}
		report(&s);
	}
	{
		static struct stats s = { .name = "misaligned sp/fp" };
		fill_plausible();
		for (int i = 0; i < iters(2000); i++) {
			uintptr_t sp = rnd_in_buf() + 1 + rnd_next(&rs) % 7;
			uintptr_t bp = rnd_in_buf() + ((i & 1) ? 1 + rnd_next(&rs) % 7 : 0);
			set_regs(&uc, rnd_fn_pc(), sp, bp);
			walk_checked(&s, &uc, (i & 2) ? SFRAME_BT_FP_FALLBACK_ANY : 0, rnd_size(),
				     NULL, NULL);
		}
		report(&s);
	}
	{
		static struct stats s = { .name = "rip in data" };
		static char data_page[4096];
		char *heap = malloc(4096);
		fill_random();
		uintptr_t data_pcs[] = { (uintptr_t)data_page, (uintptr_t)heap, (uintptr_t)rw,
					 (uintptr_t)gbuf, (uintptr_t)&base_uc, (uintptr_t)&uc };
		for (int i = 0; i < iters(2000); i++) {
			uintptr_t pc = data_pcs[rnd_next(&rs) % 6] + rnd_next(&rs) % 4096;
			set_regs(&uc, pc, rnd_in_buf(), rnd_in_buf());
			walk_checked(&s, &uc, (i & 1) ? SFRAME_BT_FP_FALLBACK_ANY : 0, rnd_size(),
				     NULL, NULL);
		}
		free(heap);
		report(&s);
	}
	{
		static struct stats s = { .name = "code rip, random stack" };
		for (int i = 0; i < iters(4000); i++) {
			if (i % 64 == 0)
				fill_random();
			set_regs(&uc, (i & 1) ? rnd_fn_pc() : rnd_exec_pc(), rnd_in_buf(),
				 rnd_in_buf());
			walk_checked(&s, &uc, (i & 2) ? SFRAME_BT_FP_FALLBACK_ANY : 0, rnd_size(),
				     NULL, NULL);
		}
		report(&s);
	}
	{
		static struct stats s = { .name = "code rip, plausible stack" };
		for (int i = 0; i < iters(6000); i++) {
			if (i % 64 == 0)
				fill_plausible();
			uintptr_t pc = (i % 3 == 0) ? rnd_exec_pc()
				     : (i % 3 == 1) ? rnd_fn_pc()
						    : real_ras[rnd_next(&rs) % (uint64_t)(nreal_ras ? nreal_ras : 1)];
			uintptr_t sp = rnd_in_buf();
			set_regs(&uc, pc ? pc : rnd_fn_pc(), sp,
				 (i & 4) ? sp + 8 * (rnd_next(&rs) % 64) : rnd_in_buf());
			if (i & 8)
				scramble_gregs(&uc);
			walk_checked(&s, &uc, (i & 2) ? SFRAME_BT_FP_FALLBACK_ANY : 0, rnd_size(),
				     NULL, NULL);
		}
		report(&s);
	}
	{
		static struct stats s = { .name = "special values" };
		uintptr_t sp_ok = rnd_in_buf();
		uintptr_t specials[] = {
			0, 1, 8, 4095, 4096, (uintptr_t)-1, (uintptr_t)-8, (uintptr_t)-4096,
			0x7fffffffffffull, 0x7ffffffff000ull, 0x800000000000ull,
			0xffff800000000000ull, 0x8000000000000000ull, 0x7fffffffffffffffull,
			sp_ok, (uintptr_t)none, (uintptr_t)main, restorer,
		};
		int ns = (int)(sizeof specials / sizeof specials[0]);
		fill_plausible();
		for (int a = 0; a < ns; a++)
			for (int b = 0; b < ns; b++)
				for (int c = 0; c < ns; c++) {
					set_regs(&uc, specials[a], specials[b], specials[c]);
					walk_checked(&s, &uc, (a + b + c) & 1 ? SFRAME_BT_FP_FALLBACK_ANY : 0,
						     MAXF, NULL, NULL);
				}
		report(&s);
	}
	{
		static struct stats s = { .name = "zero rip" };
		set_regs(&uc, 0, rnd_in_buf(), rnd_in_buf());
		int n = walk_checked(&s, &uc, 0, MAXF, NULL, NULL);
		report(&s);
		CHECK(n == 0, "RIP 0 gives no frame");
		void *pcs[4];
		CHECK(sframe_backtrace_ucontext(&uc, pcs, 4) == 0,
		      "sframe_backtrace_ucontext() with RIP 0 returns 0");
		CHECK(sframe_backtrace_ucontext(NULL, pcs, 4) == 0,
		      "sframe_backtrace_ucontext(NULL) returns 0");
		struct sframe_bt_status st;
		struct sframe_bt_frame f[2];
		CHECK(sframe_backtrace_ex(&uc, f, 0, 0, &st) == 0, "size 0 stores nothing");
	}
	test_recalled_object();
	test_dense_slots();
	test_fp_row_below_sp();
	test_fp_record_refused();
	test_sp_row_misaligned_sp();
	test_fp_row_fp_unchanged();
	test_fp_row_not_record();
	test_fp_row_refused();
	test_fp_fallback_ra_on_stack();
	test_no_eh_frame_epoch();
	test_exact_row_not_reused();
	test_unreadable_first_page();
	printf("# took %.2f s\n", now_s() - t0);
	CHECK_DONE();
}
