/* sframe-prof: run an unmodified program under the sampling profiler.
 *
 *   sframe-prof [-F HZ] [-o FILE] [--wall] [--frame-pointers] [--] COMMAND [ARGS...]
 *
 * It sets LD_PRELOAD to libsframe-profiler.so and the profiler's
 * SFRAME_PROF_* variables (examples/profiler.h), then execs COMMAND: the
 * program keeps sframe-prof's pid, which tells the profiler which
 * process is the main one (SFRAME_PROF_PID) and which are its children.
 * The profiler is found relative to this program's own path: ../lib/
 * (installed: PREFIX/bin/sframe-prof, PREFIX/lib/libsframe-profiler.so),
 * then its own directory (the build directory). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: sframe-prof [-F HZ] [-o FILE] [--wall] [--frame-pointers] [--] COMMAND [ARGS...]\n"
	"\n"
	"Run COMMAND under the sframebt sampling profiler (LD_PRELOAD of\n"
	"libsframe-profiler.so) and write its profile when it exits; a summary\n"
	"(samples, truncated stacks, threads that took no sample or blocked\n"
	"SIGPROF) goes to stderr and to PREFIX.summary.txt.\n"
	"\n"
	"  -F HZ      samples per second of each thread (default 99); CPU time,\n"
	"             or wall-clock time with --wall\n"
	"  -o FILE    the profile; its name gives the format:\n"
	"               *.pb.gz   pprof (profile.proto, gzipped): each address\n"
	"                         with its file:line and the functions inlined\n"
	"                         there, where the object or its debug file has\n"
	"                         DWARF line tables (-g); `pprof -lines` shows them\n"
	"                         (read at exit, in at most 1% of the CPU time\n"
	"                         profiled: SFRAME_PROF_LINES_MS=-1, no limit)\n"
	"               *.folded  folded stacks (flamegraph.pl, inferno, speedscope)\n"
	"               *.svg     a flame graph\n"
	"             (folded stacks and SVG name functions, not lines)\n"
	"             default PROG.PID.pb.gz; \"%p\" in FILE is the process id\n"
	"  --wall     sample every thread on the wall clock, running or not, so\n"
	"             that sleeping, waiting on locks and I/O show (system calls\n"
	"             may then return EINTR more often)\n"
	"  --frame-pointers\n"
	"             walk code that has no unwind tables (a JIT's that nothing\n"
	"             registers, such as V8's; assembly) by its frame pointers,\n"
	"             where the frame record checks out\n"
	"  -h, --help this text\n"
	"\n"
	"Child processes are profiled too (exec'd or forked), each into a file\n"
	"of its own: FILE with .PID inserted before its suffix.\n";

/* The profiler beside this program: ../lib/ (installed) or the same
 * directory (the build tree).  0 when found. */
static int find_profiler(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	static const char *const where[] = { "/../lib/libsframe-profiler.so",
					     "/libsframe-profiler.so" };
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		char path[PATH_MAX + 64], real[PATH_MAX];
		snprintf(path, sizeof path, "%s%s", self, where[i]);
		if (access(path, R_OK) == 0 && realpath(path, real) && strlen(real) < size) {
			snprintf(out, size, "%s", real);
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *hz = NULL, *file = NULL;
	int wall = 0, fp = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (strcmp(a, "--wall") == 0) {
			wall = 1;
		} else if (strcmp(a, "--frame-pointers") == 0) {
			fp = 1;
		} else if ((strcmp(a, "-F") == 0 || strcmp(a, "-o") == 0) && i + 1 < argc) {
			*(a[1] == 'F' ? &hz : &file) = argv[++i];
		} else if (strncmp(a, "-F", 2) == 0 && a[2]) {
			hz = a + 2;
		} else if (strncmp(a, "-o", 2) == 0 && a[2]) {
			file = a + 2;
		} else {
			fprintf(stderr, "sframe-prof: unknown option %s\n%s", a, usage);
			return 2;
		}
	}
	if (i >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (hz && (atoi(hz) <= 0 || atoi(hz) > 100000)) {
		fprintf(stderr, "sframe-prof: -F wants 1 to 100000 samples per second\n");
		return 2;
	}
	char lib[PATH_MAX];
	if (find_profiler(lib, sizeof lib) != 0) {
		fprintf(stderr, "sframe-prof: libsframe-profiler.so not found in ../lib/ "
				"or beside this program\n");
		return 127;
	}

	/* The profiler goes first in LD_PRELOAD, before what the user had. */
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *preload = malloc(len);
	if (!preload)
		return 127;
	snprintf(preload, len, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	char out[PATH_MAX], pid[32];
	if (!file) {
		const char *prog = strrchr(argv[i], '/');
		snprintf(out, sizeof out, "%s.%%p.pb.gz", prog ? prog + 1 : argv[i]);
		file = out;
	}
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	if (setenv("LD_PRELOAD", preload, 1) != 0 || setenv("SFRAME_PROF_FILE", file, 1) != 0 ||
	    setenv("SFRAME_PROF_PID", pid, 1) != 0 || setenv("SFRAME_PROF_FORK", "1", 1) != 0 ||
	    (hz && setenv("SFRAME_PROF_HZ", hz, 1) != 0) ||
	    (wall && setenv("SFRAME_PROF_WALL", "1", 1) != 0) ||
	    (!wall && unsetenv("SFRAME_PROF_WALL") != 0) ||
	    (fp && setenv("SFRAME_PROF_FRAME_POINTERS", "1", 1) != 0) ||
	    (!fp && unsetenv("SFRAME_PROF_FRAME_POINTERS") != 0)) {
		perror("sframe-prof: setenv");
		return 127;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "sframe-prof: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
