/* srclines.c: see srclines.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "srclines.h"

/* One PC's answer on the pipe: this head, then `size` bytes of strings,
 * each NUL-terminated: the file of (line, column), then the name and the
 * file of each inlined function. */
struct head {
	uint32_t index, size;
	uint32_t line, column;
	uint32_t ninlined;
	uint32_t in_line[SFRAME_MAX_INLINED], in_column[SFRAME_MAX_INLINED];
};

#define STR_MAX 4096 /* longer strings are cut */
#define REC_MAX (sizeof(struct head) + (1 + 2 * SFRAME_MAX_INLINED) * STR_MAX)

static size_t put_str(char *out, const char *s)
{
	size_t n = strnlen(s, STR_MAX - 1);
	memcpy(out, s, n);
	out[n] = '\0';
	return n + 1;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Objects in which every lookup found nothing so far: fixed-size, as the
 * child may not allocate (past it, objects are not given up). */
struct misses {
	uintptr_t obj;
	unsigned misses;
	bool found;
};
#define MISS_SLOTS 256

static struct misses *miss_slot(struct misses *t, uintptr_t obj)
{
	for (size_t i = 0; obj && i < MISS_SLOTS; i++) {
		if (t[i].obj == obj)
			return &t[i];
		if (!t[i].obj) {
			t[i].obj = obj;
			return &t[i];
		}
	}
	return NULL;
}

/* The child: async-signal-safe calls only (its parent may have had other
 * threads, holding locks the child inherits held). */
static _Noreturn void child(int fd, const uintptr_t *pcs, const uintptr_t *objs, size_t n,
			    void *mem, char *rec, struct misses *tab)
{
	struct sframe_symbolizer *symbolizer = sframe_symbolizer_init(mem, SFRAME_SYMBOLIZER_SIZE);
	for (size_t i = 0; i < n; i++) {
		struct misses *m = miss_slot(tab, objs[i]);
		if (m && !m->found && m->misses >= SRCLINES_GIVE_UP)
			continue;
		struct sframe_symbol sym;
		sframe_symbolizer_lookup(symbolizer, pcs[i], &sym);
		if (m) {
			if (sym.line || sym.file[0] || sym.inlined_count > 0)
				m->found = true;
			else
				m->misses++;
		}
		struct head h = { .index = (uint32_t)i, .line = sym.line, .column = sym.column };
		int nin = sym.inlined_count;
		h.ninlined = (uint32_t)(nin < 0 ? 0 : nin > SFRAME_MAX_INLINED ? SFRAME_MAX_INLINED : nin);
		size_t len = sizeof h;
		len += put_str(rec + len, sym.file);
		for (uint32_t k = 0; k < h.ninlined; k++) {
			h.in_line[k] = sym.inlined[k].line;
			h.in_column[k] = sym.inlined[k].column;
			len += put_str(rec + len, sym.inlined[k].name);
			len += put_str(rec + len, sym.inlined[k].file);
		}
		h.size = (uint32_t)(len - sizeof h);
		memcpy(rec, &h, sizeof h);
		if (write_all(fd, rec, len) != 0)
			break;
	}
	sframe_symbolizer_close(symbolizer);
	_exit(0);
}

/* The next string of [*p, end), or NULL when none is left whole. */
static const char *take_str(const char **p, const char *end)
{
	const char *s = *p;
	const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

/* Decode whole records at the start of buf[0..len); returns the bytes
 * used.  A malformed record stops the decoding (*bad). */
static size_t decode(const char *buf, size_t len, size_t n, srclines_fn fn, void *ctx,
		     size_t *answered, bool *bad)
{
	size_t used = 0;
	while (len - used >= sizeof(struct head)) {
		struct head h;
		memcpy(&h, buf + used, sizeof h);
		if (h.index >= n || h.ninlined > SFRAME_MAX_INLINED || h.size > REC_MAX) {
			*bad = true;
			return used;
		}
		if (len - used - sizeof h < h.size)
			break;
		const char *p = buf + used + sizeof h, *end = p + h.size;
		struct sframe_symbol sym = { .object = "", .name = "", .mangled = "" };
		sym.file = take_str(&p, end);
		sym.line = h.line;
		sym.column = h.column;
		sym.inlined_count = (int)h.ninlined;
		for (uint32_t k = 0; k < h.ninlined && sym.file; k++) {
			sym.inlined[k].name = take_str(&p, end);
			sym.inlined[k].file = take_str(&p, end);
			sym.inlined[k].line = h.in_line[k];
			sym.inlined[k].column = h.in_column[k];
			if (!sym.inlined[k].name || !sym.inlined[k].file)
				sym.file = NULL;
		}
		if (!sym.file) {
			*bad = true;
			return used;
		}
		fn(ctx, h.index, &sym);
		++*answered;
		used += sizeof h + h.size;
	}
	return used;
}

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

struct srclines_cost srclines_read(const uintptr_t *pcs, const uintptr_t *objs, size_t n,
				   int64_t budget_ns, srclines_fn fn, void *ctx)
{
	struct srclines_cost cost = { 0, 0 };
	if (n == 0 || budget_ns == 0)
		return cost;
	int p[2];
	void *mem = malloc(SFRAME_SYMBOLIZER_SIZE);
	char *rec = malloc(REC_MAX);
	size_t cap = 4 * REC_MAX, len = 0;
	char *buf = malloc(cap);
	struct misses *tab = calloc(MISS_SLOTS, sizeof *tab);
	if (!mem || !rec || !buf || !tab || pipe2(p, O_CLOEXEC) != 0)
		goto out;
	struct timespec w0, now;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(p[1], pcs, objs, n, mem, rec, tab);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		goto out;
	}
	clockid_t clk;
	bool have_clk = clock_getcpuclockid(pid, &clk) == 0, killed = false, bad = false;
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		if (poll(&pf, 1, 2) > 0) {
			ssize_t k = read(p[0], buf + len, cap - len);
			if (k == 0 || (k < 0 && errno != EINTR))
				break;
			if (k > 0) {
				len += (size_t)k;
				size_t used = decode(buf, len, n, fn, ctx, &cost.answered, &bad);
				memmove(buf, buf + used, len - used);
				len -= used;
			}
		}
		/* The child's CPU time while it runs (once it has exited,
		 * the last reading stands: a zombie has no clock); the wall
		 * time since the fork where its clock cannot be had. */
		struct timespec t;
		if (have_clk && clock_gettime(clk, &t) == 0) {
			cost.cpu_ns = ns_of(&t);
		} else {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (!have_clk)
				cost.cpu_ns = ns_of(&now) - ns_of(&w0);
		}
		if (!killed && (bad || (budget_ns > 0 && cost.cpu_ns > budget_ns))) {
			kill(pid, SIGKILL);
			killed = true;
		}
	}
	close(p[0]);
	/* The child's own account of its CPU time, once it is gone (unless
	 * the program reaped it first: SIGCHLD ignored, or a wait(-1)). */
	struct rusage ru;
	pid_t w;
	while ((w = wait4(pid, NULL, 0, &ru)) < 0 && errno == EINTR)
		;
	if (w == pid)
		cost.cpu_ns = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
			      ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
out:
	free(mem);
	free(rec);
	free(buf);
	free(tab);
	return cost;
}
