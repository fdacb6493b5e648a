/* JIT code named by the perf map: a PC in no loaded object is looked up in
 * /tmp/perf-PID.map, the file JIT compilers write for perf ("START SIZE
 * NAME" lines in hexadecimal; a later line for an address wins).  The
 * ground truth is the map this test writes for an anonymous mapping of its
 * own, standing in for a JIT's code.  Also: lines longer than the
 * symbolizer's work area, malformed lines, an unterminated last line, a
 * map that is a link or another user's (ignored), and a crash report's
 * frame 0 in JIT code. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"

static char map_path[64];
static char scratch[SFRAME_SYMBOLIZE_SCRATCH];

static void write_map(const char *text)
{
	unlink(map_path);
	int fd = open(map_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror(map_path);
		exit(1);
	}
	close(fd);
}

/* The name sframe_symbolize() gives pc ("" for none) and its offset. */
static const char *name_of(uintptr_t pc, uintptr_t *off)
{
	struct sframe_symbol s;
	sframe_symbolize(pc, &s, scratch, sizeof scratch);
	*off = s.name_offset;
	return s.name;
}

static bool named(uintptr_t pc, const char *want, uintptr_t want_off)
{
	uintptr_t off;
	const char *got = name_of(pc, &off);
	if (strcmp(got, want) != 0 || (want[0] && off != want_off)) {
		printf("# %#lx: got \"%s\"+%#lx, want \"%s\"+%#lx\n", (unsigned long)pc, got,
		       (unsigned long)off, want, (unsigned long)want_off);
		return false;
	}
	return true;
}

int main(void)
{
	snprintf(map_path, sizeof map_path, "/tmp/perf-%d.map", (int)getpid());
	size_t size = 4 * 4096;
	char *jit = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit == MAP_FAILED)
		return 1;
	uintptr_t a = (uintptr_t)jit;

	unlink(map_path);
	CHECK(named(a + 0x10, "", 0), "no map: no name for JIT code");

	/* A name longer than the work area on a line of its own, then
	 * ordinary lines, a malformed one, a redefinition, and an
	 * unterminated last line. */
	size_t long_len = 9000;
	char *text = malloc(long_len + 4096);
	size_t n = (size_t)sprintf(text, "%lx 100 ", (unsigned long)(a + 0x3000));
	memset(text + n, 'L', long_len);
	n += long_len;
	n += (size_t)sprintf(text + n,
			     "\n%lx 100 jit_first\n"
			     "0x%lx 0x80 Interpreter::call(int, char const*)\n"
			     "%lx zz broken line\n"
			     "%lx 40 old_code\n"
			     "%lx 40 new_code\n"
			     "%lx 10 last_unterminated",
			     (unsigned long)a, (unsigned long)(a + 0x100), (unsigned long)(a + 0x180),
			     (unsigned long)(a + 0x200), (unsigned long)(a + 0x200),
			     (unsigned long)(a + 0x400));
	text[n] = '\0';
	write_map(text);
	CHECK(named(a, "jit_first", 0) && named(a + 0xff, "jit_first", 0xff),
	      "first and last byte of a range: named, with the offset from its start");
	CHECK(named(a + 0x100, "Interpreter::call(int, char const*)", 0),
	      "a 0x-prefixed line: named");
	CHECK(named(a + 0x17f, "Interpreter::call(int, char const*)", 0x7f),
	      "a name with spaces, to the end of its line");
	CHECK(named(a + 0x180, "", 0), "between ranges, after a malformed line: no name");
	CHECK(named(a + 0x210, "new_code", 0x10), "an address named twice: the later line wins");
	CHECK(named(a + 0x405, "last_unterminated", 5), "an unterminated last line is read");
	CHECK(named(a + 0x3001, "", 0),
	      "a line longer than the symbolizer's work area is skipped, and the next one read");

	char line[256];
	sframe_format_frame(0, a + 0x20, 0, line, sizeof line);
	char want[128];
	snprintf(want, sizeof want, "#0 %#lx in jit_first+0x20 (%s+%#lx)", (unsigned long)(a + 0x20),
		 map_path, (unsigned long)(a + 0x20));
	CHECK(strcmp(line, want) == 0, "a crash report's line for JIT code: %s", line);

	/* Many lines: the one needed is far into the file. */
	size_t big = 200000;
	char *many = malloc(big * 40 + 64);
	size_t m = 0;
	for (size_t i = 0; i < big; i++)
		m += (size_t)sprintf(many + m, "%lx 1 f%zu\n", (unsigned long)(0x1000 + i), i);
	sprintf(many + m, "%lx 8 deep_in_the_file\n", (unsigned long)(a + 0x800));
	write_map(many);
	CHECK(named(a + 0x803, "deep_in_the_file", 3), "the last of %zu lines (%zu bytes) is found",
	      big + 1, m);

	/* Not followed through a link, not read if another user's. */
	char real[80];
	snprintf(real, sizeof real, "%s.real", map_path);
	write_map(text);
	rename(map_path, real);
	CHECK(symlink(real, map_path) == 0, "the map replaced by a link to it");
	CHECK(named(a, "", 0), "a map that is a symbolic link is not read");
	unlink(map_path);
	rename(real, map_path);
	if (geteuid() == 0) {
		CHECK(chown(map_path, 65534, 65534) == 0, "the map given to another user");
		CHECK(named(a, "", 0), "a map owned by another user is not read");
	}
	unlink(map_path);
	free(text);
	free(many);
	CHECK_DONE();
}
