/* Text built in a caller's buffer and written to a file descriptor, for
 * the signal path: no stdio, no allocation.  Appends truncate, always
 * leaving room for the final NUL, which the caller writes at p[len] when
 * it needs one. */
#ifndef SFB_TEXTBUF_H
#define SFB_TEXTBUF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

struct sfb_text {
	char *p;
	size_t len, cap;
};

static inline void sfb_put(struct sfb_text *b, const char *s)
{
	while (*s && b->len + 1 < b->cap)
		b->p[b->len++] = *s++;
}

/* "0x" and v in lower-case hexadecimal. */
static inline void sfb_put_hex(struct sfb_text *b, uint64_t v)
{
	char t[19], *q = t + sizeof t - 1;
	*q = '\0';
	do
		*--q = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	*--q = 'x';
	*--q = '0';
	sfb_put(b, q);
}

static inline void sfb_put_dec(struct sfb_text *b, long v)
{
	char t[24], *q = t + sizeof t - 1;
	unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;
	*q = '\0';
	do
		*--q = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--q = '-';
	sfb_put(b, q);
}

/* Writes all n bytes, retrying after EINTR; gives up on any other
 * failure (EAGAIN included: never spin in a crash). */
static inline void sfb_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		p += r;
		n -= (size_t)r;
	}
}

#endif
