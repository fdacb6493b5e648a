/* What a crash report with source lines costs (`make bench`, a row of
 * bench-results.md; `B/bench/report_cost` alone prints the same):
 * sframe_write_crash_report() to /dev/null from a context taken in a
 * qsort() comparator under a chain of 8 frames of this program (built
 * -O2 -g), so that libc's frames take their lines from its debug file
 * (libc6-dbg's, compressed) and the program's from its own DWARF.  The
 * first report, then the mean of REPEAT more (each report opens the
 * files again: nothing is kept between reports); then the same frames
 * symbolized one by one with sframe_symbolize() and
 * SFRAME_SYMBOLIZE_LINES_SCRATCH (a file opened and read per frame), and
 * through one symbolizer (sframe_symbolizer_lookup(): the files kept
 * open), twice, for comparison.  A measurement, not a test. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"

#define REPEAT 20
#define LIMIT_MS 50.0

static int devnull;
static int done;

/* CPU time: the machine may be loaded. */
static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The report's frame lines and source lines, counted from one report
 * written to a file. */
static void count_lines(const ucontext_t *uc, int *frames, int *located, int *inlined)
{
	char path[] = "/tmp/report_cost.XXXXXX";
	static char buf[1 << 16];
	int fd = mkstemp(path);
	*frames = *located = *inlined = 0;
	if (fd < 0)
		return;
	unlink(path);
	sframe_write_crash_report(uc, fd);
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		*frames += l[0] == '#' && l[1] >= '0' && l[1] <= '9';
		*located += strncmp(l, "    at ", 7) == 0;
		*inlined += strncmp(l, "    inlined: ", 13) == 0;
	}
}

static void measure(void)
{
	ucontext_t uc;
	getcontext(&uc);
	if (done++)
		return;
	double t0 = now_ms();
	sframe_write_crash_report(&uc, devnull);
	double t1 = now_ms();
	for (int i = 0; i < REPEAT; i++)
		sframe_write_crash_report(&uc, devnull);
	double t2 = now_ms();
	int frames, located, inlined;
	count_lines(&uc, &frames, &located, &inlined);

	/* The same PCs, one sframe_symbolize() each. */
	void *f[64];
	int n = sframe_backtrace(f, 64);
	static char scratch[SFRAME_SYMBOLIZE_LINES_SCRATCH];
	struct sframe_symbol s;
	double t3 = now_ms();
	for (int i = 0; i < n; i++)
		sframe_symbolize((uintptr_t)f[i] - (i > 0), &s, scratch, sizeof scratch);
	double t4 = now_ms();
	/* The same PCs through one symbolizer, twice: the second pass finds
	 * every file open, and read up to its units. */
	static char mem[SFRAME_SYMBOLIZER_SIZE];
	struct sframe_symbolizer *sz = sframe_symbolizer_init(mem, sizeof mem);
	double t5 = now_ms();
	for (int i = 0; i < n; i++)
		sframe_symbolizer_lookup(sz, (uintptr_t)f[i] - (i > 0), &s);
	double t6 = now_ms();
	for (int i = 0; i < n; i++)
		sframe_symbolizer_lookup(sz, (uintptr_t)f[i] - (i > 0), &s);
	double t7 = now_ms();
	sframe_symbolizer_close(sz);

	double each = (t2 - t1) / REPEAT;
	printf("| crash report, %d frames (%d with source lines, %d inlined frames; libc's from its "
	       "compressed debug file) | first %.1f ms, then %.1f ms each |\n",
	       frames, located, inlined, t1 - t0, each);
	printf("| the %d PCs of that stack (sframe_backtrace()) through sframe_symbolize() with lines, one by one | %.1f ms |\n", n,
	       t4 - t3);
	printf("| the same PCs through one symbolizer (sframe_symbolizer_lookup()), its files kept open | %.1f ms, then %.1f ms again |\n",
	       t6 - t5, t7 - t6);
	printf("\nTARGET: %s: crash report with source lines under %.0f ms: %.1f ms (first %.1f ms)\n",
	       each < LIMIT_MS && t1 - t0 < LIMIT_MS ? "PASS" : "FAIL", LIMIT_MS, each, t1 - t0);
}

static int cmp(const void *a, const void *b)
{
	measure();
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void chain(int n)
{
	if (n) {
		chain(n - 1);
		__asm__ volatile("");
		return;
	}
	int v[4] = { 3, 1, 2, 0 };
	qsort(v, 4, sizeof v[0], cmp);
}

int main(void)
{
	devnull = open("/dev/null", O_WRONLY);
	printf("### Crash report with source lines\n\n");
	printf("| What | CPU time |\n|---|---|\n");
	chain(8);
	return 0;
}
