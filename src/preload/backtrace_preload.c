/* libsframebt-preload.so: glibc's backtrace() and backtrace_symbols_fd()
 * for unmodified programs (LD_PRELOAD), through sframebt.
 *
 * glibc's backtrace() loads libgcc_s with dlopen() on its first call and
 * unwinds with .eh_frame through the loader's lock: neither is safe in a
 * signal handler, and a crash handler that calls it while another thread
 * holds the malloc lock hangs.  These take no lock and allocate nothing.
 * backtrace_symbols() stays glibc's: it returns malloc()ed memory.
 *
 * Output follows glibc's: "object(symbol+0xoff) [0xaddr]", offsets of the
 * address as given, "object(+0xoff)" where no symbol covers it; the symbol
 * demangled, unlike glibc's (a C++ name then holds spaces and
 * parentheses: the address is after the line's last " [", the offset
 * after the last "+0x" before it).  The name
 * is that of the call before the address (addr - 1), which a call to a
 * noreturn function that ends its function leaves past the end, else that
 * of the address itself (the sigreturn trampoline a signal handler returns
 * to, and exact PCs). */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "backtrace.h"

#define API __attribute__((visibility("default")))
#define CHUNK 256

/* Frame 0 is the caller of backtrace(), as in glibc: the walk starts in
 * this function, whose own frame is dropped. */
API __attribute__((noinline)) int backtrace(void **buf, int size)
{
	if (!buf || size <= 0)
		return 0;
	void *tmp[CHUNK + 1];
	if (size <= CHUNK) {
		int n = sframe_backtrace(tmp, size + 1);
		if (n <= 1)
			return 0;
		memcpy(buf, tmp + 1, (size_t)(n - 1) * sizeof *buf);
		return n - 1;
	}
	int n = sframe_backtrace(buf, size);
	if (n <= 1)
		return 0;
	memmove(buf, buf + 1, (size_t)(n - 1) * sizeof *buf);
	return n - 1;
}

static size_t put(char *line, size_t at, size_t cap, const char *s)
{
	while (*s && at < cap)
		line[at++] = *s++;
	return at;
}

static size_t put_hex(char *line, size_t at, size_t cap, uintptr_t v)
{
	char d[2 + 16];
	int k = sizeof d;
	do {
		d[--k] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	d[--k] = 'x';
	d[--k] = '0';
	while (k < (int)sizeof d && at < cap)
		line[at++] = d[k++];
	return at;
}

API void backtrace_symbols_fd(void *const *buf, int size, int fd)
{
	/* A path (at most 1 KiB from the symbolizer) and a demangled name
	 * (2 KiB), the rest fixed: the line is cut there, never overrun. */
	static const size_t cap = 3200;
	char scratch[SFRAME_SYMBOLIZE_SCRATCH], line[3200 + 1];
	for (int i = 0; buf && i < size; i++) {
		uintptr_t pc = (uintptr_t)buf[i];
		struct sframe_symbol s;
		int named = pc && sframe_symbolize(pc - 1, &s, scratch, sizeof scratch);
		if (named) {
			s.name_offset++;
			s.object_offset++;
		} else {
			named = sframe_symbolize(pc, &s, scratch, sizeof scratch);
		}
		size_t at = put(line, 0, cap, s.object);
		at = put(line, at, cap, "(");
		if (named) {
			at = put(line, at, cap, s.name);
			at = put(line, at, cap, "+");
			at = put_hex(line, at, cap, s.name_offset);
		} else if (s.object[0]) {
			at = put(line, at, cap, "+");
			at = put_hex(line, at, cap, s.object_offset);
		}
		at = put(line, at, cap, ") [");
		at = put_hex(line, at, cap, pc);
		at = put(line, at, cap, "]");
		line[at++] = '\n';
		for (size_t done = 0; done < at;) {
			ssize_t w = write(fd, line + done, at - done);
			if (w <= 0)
				return;
			done += (size_t)w;
		}
	}
}
