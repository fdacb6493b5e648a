/* Preloaded into node by t_node_jit.sh, after libsframebt-preload.so (whose
 * sframebt it calls, found with dlsym(): this object does not link the
 * library).  With NODE_JIT_OUT=FILE in the environment it sets the
 * process's default walk flags to SFRAME_BT_FP_FALLBACK_ANY (V8 keeps
 * frame pointers in the code it compiles and registers none of it), arms
 * a timer on the main thread's CPU clock (a SIGPROF every 1 ms of its CPU
 * time, aimed at it), where the script's JavaScript runs, and walks every
 * sample from its context into a buffer mapped beforehand (no allocation,
 * no lock in the handler).  CPU time, not wall time: where the thread
 * waits (for V8's compiler threads, for a CPU on a loaded machine) is not
 * where its time goes, and wall-clock samples there made the share in JIT
 * code depend on the machine's load.
 *
 * At exit it judges the samples against ground truth and writes FILE:
 * JIT code is code in no object (dladdr() finds none); node writes
 * /tmp/perf-PID.map with --perf-basic-prof, and this file reads it itself
 * to name each JIT frame independently of sframe_symbolize(), whose name
 * must be the same.  One line each:
 *   samples N
 *   jit_samples J          samples with at least one JIT frame
 *   jit_whole W            of those, walked to the outermost frame
 *   jit_top T              samples taken in JIT code (frame 0)
 *   jit_frames F           JIT frames in all samples
 *   in_map P               of those, in a range of the perf map
 *   named M                of those, named by sframe_symbolize()
 *   named_right R          of those, with the perf map's name
 *   named_fib B            JIT frames named after the script's fib
 *   stop REASON COUNT      how the samples with a JIT frame ended
 *   cut OBJECT SYMBOL COUNT   where those not whole stopped (stop_pc)
 *   unnamed PC frame K of N, in the map: NAME   the first JIT frames unnamed
 *   node_frames N          frames in node's executable (but the last of a walk)
 *   node_frames_fp F       of those, stepped with the frame-pointer rule
 *   fp_symbol NAME COUNT   which functions those were (the first 16) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backtrace.h"

#define DEPTH 128
#define MAXSAMPLES 8192

struct sample {
	int n, stop;
	uintptr_t stop_pc;
	uintptr_t pc[DEPTH];
	uint8_t source[DEPTH];
};

static struct sample *samples;
static atomic_int nsamples;
static timer_t timer;
static int armed;
static int (*bt_ex)(const void *, struct sframe_bt_frame *, int, unsigned,
		    struct sframe_bt_status *);

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	int i = atomic_fetch_add(&nsamples, 1);
	if (i >= MAXSAMPLES)
		return;
	struct sframe_bt_frame f[DEPTH];
	struct sframe_bt_status st;
	int n = bt_ex(uc, f, DEPTH, 0, &st);
	struct sample *s = &samples[i];
	s->n = n;
	s->stop = st.stop;
	s->stop_pc = st.stop_pc;
	for (int k = 0; k < n; k++) {
		s->pc[k] = f[k].pc;
		s->source[k] = f[k].source;
	}
}

__attribute__((constructor)) static void start(void)
{
	if (!getenv("NODE_JIT_OUT"))
		return;
	bt_ex = (int (*)(const void *, struct sframe_bt_frame *, int, unsigned,
			 struct sframe_bt_status *))dlsym(RTLD_DEFAULT, "sframe_backtrace_ex");
	void (*set_flags)(unsigned) =
		(void (*)(unsigned))dlsym(RTLD_DEFAULT, "sframe_backtrace_set_default_flags");
	if (!bt_ex || !set_flags)
		return;
	set_flags(SFRAME_BT_FP_FALLBACK_ANY);
	samples = mmap(NULL, sizeof(struct sample) * MAXSAMPLES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (samples == MAP_FAILED)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (int)syscall(SYS_gettid);
	struct itimerspec its = { { 0, 1000000 }, { 0, 1000000 } };
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) == 0 &&
	    timer_settime(timer, 0, &its, NULL) == 0)
		armed = 1;
}

/* /tmp/perf-PID.map: "START SIZE NAME" in hex, one range a line. */
struct range {
	uintptr_t start, size;
	char *name;
};
static struct range *map;
static size_t nmap;

static void read_map(void)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[4096];
	size_t cap = 0;
	while (fgets(line, sizeof line, f)) {
		char *end;
		uintptr_t start = strtoull(line, &end, 16);
		uintptr_t size = strtoull(end, &end, 16);
		while (*end == ' ')
			end++;
		end[strcspn(end, "\n")] = 0;
		if (nmap == cap) {
			cap = cap ? 2 * cap : 1024;
			map = realloc(map, cap * sizeof *map);
			if (!map)
				exit(1);
		}
		map[nmap++] = (struct range){ start, size, strdup(end) };
	}
	fclose(f);
}

/* The last range holding pc (V8 may reuse addresses: the latest wins). */
static const char *map_name(uintptr_t pc)
{
	for (size_t i = nmap; i-- > 0;)
		if (pc - map[i].start < map[i].size)
			return map[i].name;
	return NULL;
}

static int in_object(uintptr_t pc)
{
	Dl_info d;
	return dladdr((void *)pc, &d) != 0;
}

#define MAXCUT 16
static struct {
	char what[256];
	long count;
} cuts[MAXCUT];

static void count_cut(uintptr_t pc)
{
	Dl_info d;
	char what[256];
	if (pc && dladdr((void *)pc, &d))
		snprintf(what, sizeof what, "%s %s", d.dli_fname,
			 d.dli_sname ? d.dli_sname : "?");
	else
		snprintf(what, sizeof what, "%s ?", pc ? "(jit)" : "(none)");
	for (int i = 0; i < MAXCUT; i++) {
		if (!cuts[i].count) {
			snprintf(cuts[i].what, sizeof cuts[i].what, "%s", what);
			cuts[i].count = 1;
			return;
		}
		if (!strcmp(cuts[i].what, what)) {
			cuts[i].count++;
			return;
		}
	}
}

/* The executable's frames (node's): dladdr() names it by its path. */
static int main_exe(const char *path)
{
	static char self[4096];
	if (!self[0] && readlink("/proc/self/exe", self, sizeof self - 1) <= 0)
		return 0;
	return path && (!strcmp(path, self) || !strcmp(path, program_invocation_name));
}

static struct {
	char what[128];
	long count;
} fps[MAXCUT];

static void count_fp(const char *sym)
{
	if (!sym || !*sym)
		sym = "?";
	for (int i = 0; i < MAXCUT; i++) {
		if (!fps[i].count) {
			snprintf(fps[i].what, sizeof fps[i].what, "%s", sym);
			fps[i].count = 1;
			return;
		}
		if (!strcmp(fps[i].what, sym)) {
			fps[i].count++;
			return;
		}
	}
}

static uintptr_t unnamed[8][3];
static int unnamed_n;

__attribute__((destructor)) static void finish(void)
{
	const char *out = getenv("NODE_JIT_OUT");
	if (!armed || !out)
		return;
	timer_delete(timer);
	signal(SIGPROF, SIG_IGN);
	int (*symbolize)(uintptr_t, struct sframe_symbol *, char *, size_t) =
		(int (*)(uintptr_t, struct sframe_symbol *, char *, size_t))dlsym(
			RTLD_DEFAULT, "sframe_symbolize");
	const char *(*stop_name)(int) =
		(const char *(*)(int))dlsym(RTLD_DEFAULT, "sframe_bt_stop_name");
	read_map();
	int n = atomic_load(&nsamples);
	if (n > MAXSAMPLES)
		n = MAXSAMPLES;
	long jit_samples = 0, jit_whole = 0, jit_top = 0, frames = 0, named = 0, right = 0,
	     fib = 0, in_map = 0, node_frames = 0, node_fp = 0, stops[64] = { 0 };
	static char scratch[1 << 16];
	for (int i = 0; i < n; i++) {
		struct sample *s = &samples[i];
		int jit = 0;
		for (int k = 0; k < s->n; k++) {
			if (in_object(s->pc[k]))
				continue;
			jit++;
			/* A return address may end its range: pc or pc - 1. */
			struct sframe_symbol sym;
			const char *want = map_name(s->pc[k]), *want1 = map_name(s->pc[k] - 1);
			in_map += want || want1;
			if (symbolize && symbolize(s->pc[k], &sym, scratch, sizeof scratch) == 1 &&
			    sym.name && *sym.name) {
				named++;
				right += (want && !strcmp(want, sym.name)) ||
					 (want1 && !strcmp(want1, sym.name));
				fib += strstr(sym.name, "fib") != NULL;
			} else if (unnamed_n < 8) {
				unnamed[unnamed_n][0] = s->pc[k];
				unnamed[unnamed_n][1] = (uintptr_t)k;
				unnamed[unnamed_n++][2] = (uintptr_t)s->n;
			}
		}
		frames += jit;
		/* node's own frames, and those of them left by the
		 * frame-pointer rule (no unwind table covers them). */
		for (int k = 0; k + 1 < s->n; k++) {
			Dl_info d;
			if (!dladdr((void *)(s->pc[k] - (k > 0)), &d) || !main_exe(d.dli_fname))
				continue;
			node_frames++;
			if (s->source[k + 1] == SFRAME_BT_FROM_FRAME_POINTER) {
				struct sframe_symbol sym;
				node_fp++;
				count_fp(symbolize && symbolize(s->pc[k], &sym, scratch,
								sizeof scratch) == 1
						 ? sym.name
						 : NULL);
			}
		}
		if (!jit)
			continue;
		jit_samples++;
		jit_top += s->n > 0 && !in_object(s->pc[0]);
		stops[s->stop & 63]++;
		if (s->stop == SFRAME_BT_STOP_OUTERMOST)
			jit_whole++;
		else
			count_cut(s->stop_pc);
	}
	FILE *f = fopen(out, "w");
	if (!f)
		return;
	fprintf(f, "pid %d\n", (int)getpid());
	fprintf(f, "samples %d\njit_samples %ld\njit_whole %ld\njit_top %ld\njit_frames %ld\n"
		   "in_map %ld\nnamed %ld\nnamed_right %ld\nnamed_fib %ld\nperf_map_ranges %zu\n",
		n, jit_samples, jit_whole, jit_top, frames, in_map, named, right, fib, nmap);
	fprintf(f, "node_frames %ld\nnode_frames_fp %ld\n", node_frames, node_fp);
	for (int i = 0; i < MAXCUT && fps[i].count; i++)
		fprintf(f, "fp_symbol %s %ld\n", fps[i].what, fps[i].count);
	for (int r = 0; r < 64; r++)
		if (stops[r])
			fprintf(f, "stop %s %ld\n", stop_name ? stop_name(r) : "?", stops[r]);
	for (int i = 0; i < unnamed_n; i++)
		fprintf(f, "unnamed %#lx frame %lu of %lu, in the map: %s\n",
			(unsigned long)unnamed[i][0], (unsigned long)unnamed[i][1],
			(unsigned long)unnamed[i][2],
			map_name(unnamed[i][0]) ? map_name(unnamed[i][0]) : "nothing");
	for (int i = 0; i < MAXCUT && cuts[i].count; i++)
		fprintf(f, "cut %s %ld\n", cuts[i].what, cuts[i].count);
	fclose(f);
}
