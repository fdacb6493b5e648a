/* JIT code: a PC in no loaded object, named by the perf map.  A JIT
 * compiler that supports perf names its code in /tmp/perf-PID.map: lines
 * "START SIZE NAME", START and SIZE in hexadecimal, appended as code is
 * made, so a later line for an address wins.  Read only if it is a
 * regular file of this user and not a link (/tmp is shared), and only its
 * first PERF_MAP_MAX bytes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/textbuf.h"
#include "symbols/symtab.h"

#define PERF_MAP_MAX (64u << 20)

int sfb_open_perf_map(char *path, size_t cap)
{
	struct sfb_text b = { path, 0, cap };
	sfb_put(&b, "/tmp/perf-");
	sfb_put_dec(&b, (long)getpid());
	sfb_put(&b, ".map");
	path[b.len] = '\0';
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	const char *first = s;
	for (; s < end; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0'
		      : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
		      : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (x >> 60)
			return 0;
		x = x * 16 + (uint64_t)d;
	}
	*p = s;
	*v = x;
	return s > first;
}

/* One line [p, end), without its newline: if it names a range holding
 * pc, its name (truncated to name_cap - 1 bytes) goes to name and its
 * start to *start. */
static int perf_map_line(const char *p, const char *end, uint64_t pc, char *name,
			 size_t name_cap, uint64_t *start)
{
	uint64_t a, n;
	if (!parse_hex(&p, end, &a) || p == end || *p++ != ' ' ||
	    !parse_hex(&p, end, &n) || p == end || *p++ != ' ' || a + n < a ||
	    pc - a >= n || p == end)
		return 0;
	size_t len = (size_t)(end - p) < name_cap - 1 ? (size_t)(end - p) : name_cap - 1;
	memcpy(name, p, len);
	name[len] = '\0';
	*start = a;
	return 1;
}

/* The last line of the map whose range holds pc: 1 and its name and start,
 * or 0.  Read in pieces of the work area; a line longer than that is
 * skipped. */
int sfb_perf_map_lookup(int fd, uint64_t pc, char *name, size_t name_cap, uint64_t *start,
			char *work, size_t wsize)
{
	int found = 0, skipping = 0;
	for (uint64_t off = 0; off < PERF_MAP_MAX;) {
		ssize_t got = pread(fd, work, wsize, (off_t)off);
		if (got <= 0)
			break;
		const char *p = work, *end = work + got, *last = memrchr(work, '\n', (size_t)got);
		if (!last) {
			/* The unterminated last line, or a piece of a long one. */
			if ((size_t)got < wsize && !skipping)
				found |= perf_map_line(p, end, pc, name, name_cap, start);
			skipping = 1;
			off += (uint64_t)got;
			continue;
		}
		while (p <= last) {
			const char *nl = memchr(p, '\n', (size_t)(last - p) + 1);
			if (!skipping)
				found |= perf_map_line(p, nl, pc, name, name_cap, start);
			skipping = 0;
			p = nl + 1;
		}
		off += (uint64_t)(last + 1 - work);
	}
	return found;
}
