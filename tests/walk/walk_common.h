/* Shared ground-truth helpers for the walker tests (t_walk_signals,
 * t_first_call, t_churn, t_interpose, t_garbage).
 *
 * Ground truth is "which function holds this PC", from function address
 * ranges taken with dladdr1(RTLD_DL_SYMENT) in normal context (the tests
 * are linked with -rdynamic, helper objects export their functions).  The
 * lookups used from signal handlers (wfn_lookup, verify_chain, in_obj) are
 * plain loads and compares: async-signal-safe, and they never call the
 * library under test. */
#ifndef SFB_WALK_COMMON_H
#define SFB_WALK_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"

/* Test functions: never inlined, never cloned (a clone would be a second,
 * unlisted range). */
#if defined(__clang__)
#define NOINL __attribute__((noinline, used))
#else
#define NOINL __attribute__((noinline, noclone, used))
#endif
#define UNUSED_FN __attribute__((unused))

static volatile unsigned long w_sink;

/* Busy work that stays in the current function. */
#define SPIN(n)                                                   \
	do {                                                      \
		for (unsigned long i_ = 0; i_ < (unsigned long)(n); i_++) \
			w_sink += i_;                             \
	} while (0)

/* Chain building blocks: each level calls the next three times, so a
 * frame stays live across each call, and spins between calls, so samples
 * land in every level. */
#define LEAF(name, n)                                \
	NOINL int name(int x)                        \
	{                                            \
		SPIN(n);                             \
		return x + (int)(w_sink & 7);        \
	}
#define LEVEL(name, callee, n)                       \
	NOINL int name(int x)                        \
	{                                            \
		int r = x;                           \
		for (int j = 0; j < 3; j++) {        \
			r += callee(r + j);          \
			SPIN(n);                     \
		}                                    \
		return r ^ 5;                        \
	}
/* A variable-length array: the compiler keeps a frame pointer, so the
 * SFrame rows of this function are RBP-based. */
#define VLA_LEVEL(name, callee, n)                                  \
	NOINL int name(int x)                                       \
	{                                                           \
		volatile char buf[(x & 15) + 16];                   \
		buf[0] = (char)x;                                   \
		int r = x;                                          \
		for (int j = 0; j < 3; j++) {                       \
			r += callee(r + j) + buf[0];                \
			SPIN(n);                                    \
		}                                                   \
		return r ^ 3;                                       \
	}
/* A large fixed frame. */
#define BIG_LEVEL(name, callee, n)                                  \
	NOINL int name(int x)                                       \
	{                                                           \
		volatile char big[6000];                            \
		big[x & 4095] = (char)x;                            \
		int r = x;                                          \
		for (int j = 0; j < 2; j++) {                       \
			r += callee(r + j) + big[x & 4095];         \
			SPIN(n);                                    \
		}                                                   \
		return r ^ 9;                                       \
	}

/* ---- Function ranges --------------------------------------------------- */

struct wfn {
	const char *name;
	uintptr_t lo, hi;
};

#define WFN_MAX 256
#define WFN_DYN_BASE 10000 /* ids of per-context ("dynamic") ranges */
static struct wfn wfns[WFN_MAX];
static int nwfn;

/* Range of the function at fn, from its dynamic symbol.  Normal context. */
static UNUSED_FN int wfn_range(const void *fn, uintptr_t *lo, uintptr_t *hi)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    info.dli_saddr != fn || sym->st_size == 0)
		return -1;
	*lo = (uintptr_t)fn;
	*hi = (uintptr_t)fn + sym->st_size;
	return 0;
}

/* Register a function of the program; returns its id.  Exits on failure:
 * without ground truth no check means anything. */
static UNUSED_FN int wfn_add(const char *name, const void *fn)
{
	uintptr_t lo, hi;
	for (int i = 0; i < nwfn; i++)
		if (wfns[i].lo == (uintptr_t)fn)
			return i;
	if (nwfn >= WFN_MAX || wfn_range(fn, &lo, &hi)) {
		printf("not ok - ground truth: no symbol size for %s (%p); link with -rdynamic\n",
		       name, fn);
		exit(1);
	}
	wfns[nwfn] = (struct wfn){ name, lo, hi };
	return nwfn++;
}
#define WFN(f) wfn_add(#f, (const void *)(f))

/* A lookup context: the program's table plus optional per-context ranges
 * (functions of a dlopen()ed object, valid while it is loaded). */
struct wctx {
	const struct wfn *dyn;
	int ndyn;
};

/* Async-signal-safe. */
static UNUSED_FN int wfn_lookup(const struct wctx *c, uintptr_t pc)
{
	for (int i = 0; i < nwfn; i++)
		if (pc >= wfns[i].lo && pc < wfns[i].hi)
			return i;
	if (c)
		for (int i = 0; i < c->ndyn; i++)
			if (pc >= c->dyn[i].lo && pc < c->dyn[i].hi)
				return WFN_DYN_BASE + i;
	return -1;
}

static UNUSED_FN const char *wfn_name(const struct wctx *c, int id)
{
	if (id >= 0 && id < nwfn)
		return wfns[id].name;
	if (c && id >= WFN_DYN_BASE && id - WFN_DYN_BASE < c->ndyn)
		return c->dyn[id - WFN_DYN_BASE].name;
	return "?";
}

/* ---- Objects: libc and ld.so carry no .sframe (walked with .eh_frame) ---- */

struct wobj {
	uintptr_t lo, hi;
};
static struct wobj w_libc, w_ldso;
/* Before glibc 2.34 threads start in libpthread.so.0 (start_thread), an
 * object of its own: counted as libc. */
static struct wobj w_pthread;

static UNUSED_FN int obj_of(const void *addr, struct wobj *o)
{
	struct dl_find_object r;
	if (!addr || _dl_find_object((void *)addr, &r) != 0)
		return -1;
	o->lo = (uintptr_t)r.dlfo_map_start;
	o->hi = (uintptr_t)r.dlfo_map_end;
	return 0;
}

static UNUSED_FN void objs_init(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
	if (!h || obj_of(dlsym(h, "getpid"), &w_libc)) {
		printf("not ok - ground truth: cannot locate libc.so.6\n");
		exit(1);
	}
	/* ld.so: its load address is in the auxiliary vector. */
	if (obj_of((const void *)getauxval(AT_BASE), &w_ldso))
		w_ldso = (struct wobj){ 0, 0 };
#if __GLIBC__ == 2 && __GLIBC_MINOR__ < 34
	void *p = dlopen("libpthread.so.0", RTLD_NOLOAD | RTLD_LAZY);
	if (p && obj_of(dlsym(p, "pthread_create"), &w_pthread))
		w_pthread = (struct wobj){ 0, 0 };
#endif
}

static inline int in_obj(const struct wobj *o, uintptr_t pc)
{
	return pc >= o->lo && pc < o->hi;
}
static inline int in_libc(uintptr_t pc)
{
	return in_obj(&w_libc, pc) || in_obj(&w_pthread, pc);
}
static inline int in_sys(uintptr_t pc) /* libc or ld.so */
{
	return in_libc(pc) || in_obj(&w_ldso, pc);
}

/* The program's entry point (crt1.o: no .sframe, CFI that marks the RA
 * undefined), the outermost frame of the main thread. */
extern char _start[];
static inline int in_start(uintptr_t pc)
{
	return pc - (uintptr_t)_start < 64;
}

/* The frames below a chain's outermost function: its libc caller
 * (start_thread or __libc_start_call_main), then clone3, or
 * __libc_start_main and _start; there the walk ends as outermost. */
#define W_TAIL_MAX 3

/* ---- Verdicts -------------------------------------------------------------- */

enum verdict {
	V_EXACT = 0,   /* the whole expected chain, then the libc frames below it
			  to the outermost frame */
	V_TRUNC = 1,   /* a correct prefix, with a reported stop reason */
	V_WRONG = 2,   /* some frame is not the expected one (or an unreported
			  truncation, or frames past the end) */
	V_OTHER = 3,   /* frame 0 is not in the chain: nothing to compare */
	V_NVERDICT
};
static const char *const verdict_name[] = { "exact", "truncated", "WRONG", "other" };

/* The lookup PC of a frame: return addresses point after the call. */
static inline uintptr_t lookup_pc(const struct sframe_bt_frame *f)
{
	return f->exact ? f->pc : f->pc - 1;
}

/* Compare frames f[0..n) of a walk that starts at an exact PC (frame 0 of
 * a ucontext walk, or the frame right after a signal frame) with chain
 * (ids, innermost first) followed by its tail (W_TAIL_MAX: a libc frame
 * first, then libc frames or _start), where the walk must end as
 * outermost.  stop: the reported stop reason, or -1 when the API used
 * reports none.  size: the buffer size used.  *bad: index of the first
 * wrong frame.  Async-signal-safe. */
static UNUSED_FN int verify_chain(const struct wctx *c, const struct sframe_bt_frame *f,
				  int n, int stop, int size, const int *chain, int len,
				  int *bad)
{
	int dummy;
	if (!bad)
		bad = &dummy;
	*bad = -1;
	if (n <= 0) {
		*bad = 0;
		return V_WRONG; /* a valid context always yields frame 0 */
	}
	int id0 = wfn_lookup(c, f[0].pc);
	int pos = -1;
	for (int i = 0; i < len && pos < 0; i++)
		if (chain[i] == id0)
			pos = i;
	if (pos < 0)
		return V_OTHER;
	if (!f[0].exact) {
		*bad = 0;
		return V_WRONG;
	}
	int want = len - pos + 1; /* the chain and the first libc frame, at least */
	for (int k = 1; k < n; k++) {
		int ci = pos + k;
		uintptr_t pc = lookup_pc(&f[k]);
		int ok;
		if (f[k].exact)
			ok = 0; /* no signal frame in between: must be a return address */
		else if (ci < len)
			ok = wfn_lookup(c, pc) == chain[ci];
		else if (ci == len)
			ok = in_libc(pc);
		else
			ok = ci < len + W_TAIL_MAX && (in_libc(pc) || in_start(pc));
		if (!ok) {
			*bad = k;
			return V_WRONG;
		}
	}
	if (n >= want) {
		if (stop >= 0 && stop != SFRAME_BT_STOP_OUTERMOST &&
		    !(stop == SFRAME_BT_STOP_BUFFER_FULL && n == size)) {
			*bad = n;
			return V_WRONG;
		}
		return V_EXACT;
	}
	/* Short: acceptable only with a reported reason. */
	if (stop == SFRAME_BT_STOP_NONE || stop > SFRAME_BT_STOP_EH_FRAME_UNINDEXED ||
	    (stop == SFRAME_BT_STOP_BUFFER_FULL && n != size)) {
		*bad = n;
		return V_WRONG;
	}
	if (stop < 0 && n == size)
		return V_EXACT; /* the buffer ended it */
	if (stop == SFRAME_BT_STOP_BUFFER_FULL)
		return V_EXACT;
	return V_TRUNC;
}

/* Frames from a PC array (sframe_backtrace / _ucontext): frame 0 exact iff
 * first_exact. */
static UNUSED_FN void pcs_to_frames(void *const *pcs, int n, int first_exact,
				    struct sframe_bt_frame *f)
{
	for (int i = 0; i < n; i++) {
		memset(&f[i], 0, sizeof f[i]);
		f[i].pc = (uintptr_t)pcs[i];
		f[i].exact = (uint8_t)(i == 0 && first_exact);
	}
}

/* Print a walk with names (normal context only). */
static UNUSED_FN void print_walk(const char *title, const struct wctx *c,
				 const struct sframe_bt_frame *f, int n, int stop)
{
	printf("# %s: %d frames, stop %s\n", title, n,
	       stop >= 0 ? sframe_bt_stop_name(stop) : "(not reported)");
	for (int i = 0; i < n; i++) {
		uintptr_t pc = lookup_pc(&f[i]);
		int id = wfn_lookup(c, pc);
		Dl_info d;
		const char *nm = id >= 0 ? wfn_name(c, id)
			       : (dladdr((void *)pc, &d) && d.dli_sname ? d.dli_sname : "?");
		const char *obj = in_libc(pc) ? " [libc]" : in_obj(&w_ldso, pc) ? " [ld.so]" : "";
		printf("#   %2d %#14lx %s%s src=%d exact=%d cfa=%#lx\n", i,
		       (unsigned long)f[i].pc, nm, obj, f[i].source, f[i].exact,
		       (unsigned long)f[i].cfa);
	}
}

/* ---- Misc ------------------------------------------------------------------ */

static UNUSED_FN double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static UNUSED_FN long env_long(const char *name, long def)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	long v = strtol(s, &end, 10);
	return *end ? def : v;
}

/* Path of a build output: $SFB_BUILD/tests/NAME, else next to this
 * program. */
static UNUSED_FN void build_path(const char *name, char *out, size_t size)
{
	const char *b = getenv("SFB_BUILD");
	if (b && *b) {
		snprintf(out, size, "%s/tests/%s", b, name);
		if (access(out, R_OK) == 0)
			return;
	}
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (k < 0)
		k = 0;
	exe[k] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	size_t dl = strlen(slash ? exe : "."), nl = strlen(name);
	if (dl + 1 + nl + 1 > size) {
		out[0] = 0;
		return;
	}
	memcpy(out, slash ? exe : ".", dl);
	out[dl] = '/';
	memcpy(out + dl + 1, name, nl + 1);
}

/* Async-signal-safe formatting for handlers and forked children. */
static UNUSED_FN void sig_puts(int fd, const char *s)
{
	size_t len = strlen(s);
	while (len) {
		ssize_t w = write(fd, s, len);
		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

static UNUSED_FN void sig_putx(int fd, uintptr_t v)
{
	char b[19];
	int i = 18;
	b[i] = 0;
	do {
		b[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v && i > 2);
	b[--i] = 'x';
	b[--i] = '0';
	sig_puts(fd, b + i);
}

static UNUSED_FN void sig_putd(int fd, long v)
{
	char b[24];
	int i = 23;
	int neg = v < 0;
	unsigned long u = neg ? 0ul - (unsigned long)v : (unsigned long)v;
	b[i] = 0;
	do {
		b[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		b[--i] = '-';
	sig_puts(fd, b + i);
}

/* xorshift64*: fixed-seed randomness. */
static UNUSED_FN uint64_t rnd_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* A per-thread CPU-time timer sending SIGPROF to the calling thread every
 * period_ns of its CPU time; exits the test if the kernel refuses. */
static inline timer_t start_thread_cpu_timer(long period_ns)
{
	timer_t timer;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) {
		perror("timer_create");
		exit(1);
	}
	struct itimerspec its = { { 0, period_ns }, { 0, period_ns } };
	timer_settime(timer, 0, &its, NULL);
	return timer;
}

static inline void stop_thread_cpu_timer(timer_t timer)
{
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	timer_settime(timer, 0, &its, NULL);
	timer_delete(timer);
}

#endif
