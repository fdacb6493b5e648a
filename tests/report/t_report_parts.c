/* What the crash report adds after the frames, each part against ground
 * truth, in children that crash (SIGSEGV) into a handler of this test's
 * own on a 64 KiB alternate stack filled with a pattern:
 * - the module list against /proc/PID/maps (copied by the child before
 *   it crashes) and `readelf -n`'s build-ids;
 * - the registers against the ucontext the handler is given;
 * - the thread's name, set with pthread_setname_np();
 * - a real stack overflow: the recursion collapsed into one line whose
 *   count, with the recursion's frames shown one by one, is the depth the
 *   recursion counted, then the frames down to main, walked whole;
 * - the alternate stack bytes the report used (pattern bytes overwritten),
 *   under the 64 KiB the crash handler gives each thread. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"

#define ALT_SIZE (64 * 1024)
#define PATTERN 0xa5

static char dir[] = "/tmp/sfb_report_XXXXXX";
static char report_path[256], truth_path[256], maps_path[256];
static unsigned char *alt;
static volatile long depth;
static int *volatile bad_pointer = (int *)16;
static volatile int sink;

static void put_line(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		_exit(3);
}

/* Writes the report, then what the handler knows: the registers it is
 * given, the recursion depth, the alternate stack bytes used. */
static void handler(int sig, siginfo_t *si, void *ucv)
{
	(void)sig, (void)si;
	int fd = open(report_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	sframe_write_crash_report(ucv, fd);
	close(fd);
	size_t untouched = 0;
	while (untouched < ALT_SIZE && alt[untouched] == PATTERN)
		untouched++;
	char buf[256];
	fd = open(truth_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
#ifdef __x86_64__
	const ucontext_t *uc = ucv;
	static const struct { const char *n; int i; } regs[] = {
		{ "rax", REG_RAX }, { "rbx", REG_RBX }, { "rsp", REG_RSP }, { "rip", REG_RIP },
		{ "r12", REG_R12 }, { "r15", REG_R15 }, { "eflags", REG_EFL },
	};
	for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
		snprintf(buf, sizeof buf, "reg %s 0x%016llx\n", regs[i].n,
			 (unsigned long long)uc->uc_mcontext.gregs[regs[i].i]);
		put_line(fd, buf);
	}
#endif
	snprintf(buf, sizeof buf, "depth %ld\nused %zu\n", depth, (size_t)ALT_SIZE - untouched);
	put_line(fd, buf);
	close(fd);
	_exit(0);
}

/* Recurses until the stack overflows, counting its frames. */
__attribute__((noinline)) static void recurse(void)
{
	volatile char pad[64];
	depth++; /* before the frame's first store, which may fault */
	pad[0] = 1;
	if (sink >= 0) /* always: sink only grows */
		recurse();
	sink += pad[0];
}

__attribute__((noinline)) static void fault(void)
{
	sink += *bad_pointer;
	sink++;
}

static void copy_maps(void)
{
	char buf[4096];
	int in = open("/proc/self/maps", O_RDONLY), out = open(maps_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			_exit(3);
	close(in);
	close(out);
}

static void *thread_main(void *what)
{
	pthread_setname_np(pthread_self(), "sfb-worker");
	stack_t ss = { .ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = 0 };
	sigaltstack(&ss, NULL);
	copy_maps();
	if (strcmp(what, "overflow") == 0)
		recurse();
	fault();
	return NULL;
}

/* Runs one child crashing as `what` on a thread of its own (the thread's
 * stack: 1 MiB, so that an overflow is quick); 0 if the handler ran. */
static int run_child(const char *what)
{
	pid_t pid = fork();
	if (pid == 0) {
		alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(alt, PATTERN, ALT_SIZE);
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = handler;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigaction(SIGSEGV, &sa, NULL);
		sframe_backtrace_warmup();
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 1 << 20);
		pthread_t t;
		pthread_create(&t, &at, thread_main, (void *)what);
		pthread_join(t, NULL);
		_exit(2);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static char *slurp(const char *path)
{
	static char bufs[3][1 << 20];
	static int k;
	char *b = bufs[k++ % 3];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(b, 1, sizeof bufs[0] - 1, f) : 0;
	if (f)
		fclose(f);
	b[n] = '\0';
	return b;
}

/* Every module line "#   START-END PATH build-id HEX": START is where
 * maps maps PATH from (the vDSO: [vdso]), and HEX is readelf's build-id. */
static void check_modules(const char *report, const char *maps)
{
	const char *m = strstr(report, "# modules:\n");
	CHECK(m != NULL, "the report has a module list");
	if (!m)
		return;
	int n = 0, bad = 0, with_id = 0;
	char line[2048];
	for (const char *p = strchr(m, '\n') + 1; sscanf(p, "%2047[^\n]", line) == 1;
	     p = strchr(p, '\n') + 1) {
		unsigned long start, end;
		char path[1024], id[200] = "";
		if (sscanf(line, "#   0x%lx-0x%lx %1023s build-id %199s", &start, &end, path, id) < 3)
			break;
		n++;
		char want[1100];
		/* maps names the file by its real path (ld.so's link resolved). */
		char real[PATH_MAX];
		const char *file = strcmp(path, "linux-vdso.so.1") == 0 ? "[vdso]"
				 : realpath(path, real) ? real : path;
		snprintf(want, sizeof want, "%lx-", start);
		const char *hit = NULL;
		for (const char *q = maps; (q = strstr(q, want)) != NULL; q++)
			if ((q == maps || q[-1] == '\n')) {
				const char *eol = strchr(q, '\n');
				if (eol && eol - q > (long)strlen(file) &&
				    memcmp(eol - strlen(file), file, strlen(file)) == 0)
					hit = q;
			}
		if (!hit) {
			printf("# %s: no mapping of %s at %#lx\n", line, file, start);
			bad++;
		}
		if (file[0] == '/') {
			char cmd[PATH_MAX + 100], got[200] = "";
			snprintf(cmd, sizeof cmd, "readelf -n '%s' | awk '/Build ID:/ { print $3 }'", file);
			FILE *f = popen(cmd, "r");
			if (f && fgets(got, sizeof got, f))
				got[strcspn(got, "\n")] = '\0';
			if (f)
				pclose(f);
			if (strcmp(got, id) != 0) {
				printf("# %s: readelf's build-id is \"%s\"\n", line, got);
				bad++;
			}
			with_id += id[0] != 0;
		}
	}
	CHECK(n >= 4 && bad == 0 && with_id >= 3,
	      "%d modules, each at its first mapping in /proc/PID/maps, build-ids as readelf's (%d)",
	      n, with_id);
	CHECK(strstr(m, "/libc.so") && strstr(m, "t_report_parts build-id"),
	      "the module list holds libc and the program");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(report_path, sizeof report_path, "%s/report", dir);
	snprintf(truth_path, sizeof truth_path, "%s/truth", dir);
	snprintf(maps_path, sizeof maps_path, "%s/maps", dir);

	/* A fault: modules, registers, the thread's name. */
	CHECK(run_child("fault") == 0, "fault: the handler ran and wrote its report");
	char *report = slurp(report_path), *truth = slurp(truth_path);
	printf("%s", report);
	check_modules(report, slurp(maps_path));
	CHECK(strstr(report, "\n# thread: sfb-worker (tid ") != NULL,
	      "the thread's name, as pthread_setname_np() set it");
#ifdef __x86_64__
	int regs = 0, regbad = 0;
	for (const char *p = truth; (p = strstr(p, "reg ")) != NULL; p += 4) {
		char name[16], value[32], want[64];
		if (sscanf(p, "reg %15s %31s", name, value) != 2)
			break;
		snprintf(want, sizeof want, " %s %s", name, value);
		regs++;
		if (!strstr(report, want)) {
			printf("# register %s: the handler's ucontext has %s\n", name, value);
			regbad++;
		}
	}
	CHECK(regs == 7 && regbad == 0, "registers as the handler's ucontext has them (%d)", regs);
#endif
	long used = 0;
	sscanf(strstr(truth, "used ") ? strstr(truth, "used ") : "used 0", "used %ld", &used);
	printf("# fault report: %ld bytes of the alternate stack\n", used);
	CHECK(used > 0 && used < ALT_SIZE - 4096, "fault: the report used %ld of 65536 alternate-stack bytes", used);

	/* A real stack overflow, its recursion collapsed. */
	CHECK(run_child("overflow") == 0, "overflow: the handler ran and wrote its report");
	report = slurp(report_path);
	truth = slurp(truth_path);
	long d = 0, first = -1, last = -1, times = 0, shown = 0;
	sscanf(strstr(truth, "depth ") ? strstr(truth, "depth ") : "depth 0", "depth %ld", &d);
	const char *rep = NULL;
	for (const char *p = report; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *in = strstr(p, " in ");
		if (p[0] != '#' || p[1] < '0' || p[1] > '9' || !in || (eol && in > eol))
			continue;
		const char *r = strstr(p, " repeat ");
		if (r && (!eol || r < eol)) {
			rep = p;
			sscanf(p, "#%ld..#%ld repeat %ld times", &first, &last, &times);
		} else if (strncmp(in, " in recurse+", 12) == 0) {
			shown++;
		}
	}
	CHECK(rep && strstr(rep, " in recurse+") && strstr(rep, " in recurse+") < strchr(rep, '\n'),
	      "overflow: one collapsed line, naming the recursing function");
	used = 0;
	sscanf(strstr(truth, "used ") ? strstr(truth, "used ") : "used 0", "used %ld", &used);
	printf("# overflow: depth %ld, collapsed #%ld..#%ld (%ld times), %ld shown one by one; %ld alt-stack bytes\n",
	       d, first, last, times, shown, used);
	/* Each frame counts itself before its first store of its own, so
	 * the faulting frame has counted itself when the fault is on that
	 * store or on the call's push in its caller; not when the fault is
	 * in a prologue that stores first (a sanitizer's frame set-up):
	 * then one frame more than the count. */
	CHECK(d > 1000 && times == last - first + 1 && (times + shown == d || times + shown == d + 1),
	      "overflow: the collapsed count (%ld) and the frames shown (%ld) make the recursion's depth (%ld)",
	      times, shown, d);
	CHECK(strstr(report, " in thread_main+") && strstr(report, "# stopped: outermost"),
	      "overflow: the frames below the recursion, to the thread's start, walked whole");
	CHECK(used > 0 && used < ALT_SIZE - 4096, "overflow: the report used %ld of 65536 alternate-stack bytes", used);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	CHECK_DONE();
}
