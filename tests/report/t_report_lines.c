/* Source lines in crash reports: sframe_write_crash_report() called from
 * code inlined two levels deep (this file is built -O2 -g) prints, under
 * its caller's frame line, the inlined frames innermost first, then the
 * function's own "at FILE:LINE".  With the argument "report" it only
 * writes that report to stdout, for t_crash_lines.sh, which compares
 * every frame's lines with addr2line's.  Run alone, it also checks that
 * two threads reporting at once both finish their reports (the one
 * static line buffer is taken by one of them, the other prints none). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"

static int out_fd = 1;
static volatile int sink;

static inline __attribute__((always_inline)) void inner_report(int v)
{
	sink = v;
	sframe_write_crash_report(NULL, out_fd);
	sink = v + 1;
}

static inline __attribute__((always_inline)) void middle_report(int v)
{
	inner_report(v * 3);
	sink = v;
}

__attribute__((noinline)) static void outer_report(int v)
{
	middle_report(v + 1);
	sink = v;
}

/* The report into a file; its text, NUL-terminated, in buf. */
static size_t report_to(char *buf, size_t cap)
{
	char path[] = "/tmp/t_report_lines.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	unlink(path);
	out_fd = fd;
	outer_report(1);
	ssize_t n = pread(fd, buf, cap - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0 ? (size_t)n : 0;
}

static void *thread_report(void *arg)
{
	int fd = *(int *)arg;
	for (int i = 0; i < 20; i++)
		sframe_write_crash_report(NULL, fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "report") == 0) {
		outer_report(1);
		return 0;
	}
	static char buf[1 << 16];
	report_to(buf, sizeof buf);
	fputs(buf, stdout);
	const char *inl1 = strstr(buf, "\n    inlined: inner_report at ");
	const char *inl2 = strstr(buf, "\n    inlined: middle_report at ");
	CHECK(inl1 && strstr(inl1, "t_report_lines.c:"),
	      "the innermost inlined frame, with its file and line");
	CHECK(inl2 && inl1 && inl2 > inl1, "then the function it is inlined into");
	CHECK(inl2 && strstr(inl2, "\n    at ") && strstr(strstr(inl2, "\n    at "), "t_report_lines.c:"),
	      "then the frame's own location");
	CHECK(strstr(buf, "in outer_report"), "the frame line names the outer function");

	/* Two threads at once, into one pipe-less file each: no crash, no
	 * hang, every report ends with its module list. */
	char p1[] = "/tmp/t_report_lines.XXXXXX", p2[] = "/tmp/t_report_lines.XXXXXX";
	int fds[2] = { mkstemp(p1), mkstemp(p2) };
	unlink(p1);
	unlink(p2);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_report, &fds[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		ssize_t n = pread(fds[i], buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		int reports = 0;
		for (const char *q = buf; (q = strstr(q, "# modules:\n")); q++)
			reports++;
		CHECK(reports >= 1, "thread %d: its reports written (%d seen in the first 64 KiB)", i,
		      reports);
		close(fds[i]);
	}
	CHECK_DONE();
}
