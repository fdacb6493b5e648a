/* Loaded by LuaJIT through its FFI in t_jit_luajit.sh, with
 * libsframebt-preload.so preloaded: C functions that hot Lua loops call,
 * so that LuaJIT compiles the loops into traces that call them.
 *
 * plain() is called from a loop; call_back() calls back into Lua through
 * an FFI callback, whose Lua function calls take_backtrace().  Each walks
 * with sframebt (the preload's: this library does not link it) and
 * records how the walk ended and whether its caller (for plain() and
 * take_backtrace(): the code that called it, a trace once the loop is
 * hot, in no object) is among the frames.  sample_start() starts SIGPROF
 * at 5 kHz (a CLOCK_MONOTONIC timer), whose handler walks each sample
 * from its context.  report()
 * prints the checks.  libgcc_probe() forks a child that calls
 * _Unwind_Backtrace() from plain_gcc(), called from a trace, and returns
 * how the child ended. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unwind.h>

#include "backtrace.h"

#define API __attribute__((visibility("default"), noinline))

static timer_t timer;
static int (*bt_ex)(void *, struct sframe_bt_frame *, int, unsigned, struct sframe_bt_status *);
static const char *(*stop_name)(int);

static int in_object(uintptr_t pc)
{
	Dl_info d;
	return dladdr((void *)pc, &d) != 0;
}

/* Per kind of walk: walks, those from a trace (caller in no object),
 * those of which kept the caller as a frame, stop reasons. */
enum { PLAIN, CALLBACK, SAMPLE, KINDS };
static const char *const kind_name[KINDS] = { "plain() called from Lua",
					      "take_backtrace() from an FFI callback",
					      "SIGPROF samples" };
static volatile long walks[KINDS], from_trace[KINDS], kept[KINDS], reasons[KINDS][64];

static void judge(int kind, const struct sframe_bt_frame *f, int n, int stop, uintptr_t caller)
{
	walks[kind]++;
	reasons[kind][stop & 63]++;
	if (caller && !in_object(caller)) {
		from_trace[kind]++;
		for (int i = 0; i < n; i++)
			if (f[i].pc == caller) {
				kept[kind]++;
				break;
			}
	}
}

static void walk(int kind, uintptr_t caller)
{
	struct sframe_bt_frame f[64];
	struct sframe_bt_status st;
	int n = bt_ex(NULL, f, 64, 0, &st);
	judge(kind, f, n, st.stop, caller);
}

API int plain(int x)
{
	walk(PLAIN, (uintptr_t)__builtin_return_address(0));
	return x + 1;
}

API int call_back(int (*cb)(int), int x)
{
	return cb(x) + 1;
}

API void take_backtrace(void)
{
	walk(CALLBACK, (uintptr_t)__builtin_return_address(0));
}

/* In the handler: the interrupted PC and the stop are kept, judged in
 * report() (dladdr() is no function for a signal handler). */
#define SAMPLES 65536
static struct {
	uintptr_t pc0;
	int stop;
} samples[SAMPLES];
static volatile int nsamples;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	struct sframe_bt_frame f[64];
	struct sframe_bt_status st;
	int n = bt_ex(uc, f, 64, 0, &st);
	int i = nsamples;
	if (i < SAMPLES) {
		samples[i].pc0 = n > 0 ? f[0].pc : 0;
		samples[i].stop = st.stop;
		nsamples = i + 1;
	}
}

API void sample_start(void)
{
	bt_ex = (int (*)(void *, struct sframe_bt_frame *, int, unsigned,
			 struct sframe_bt_status *))dlsym(RTLD_DEFAULT, "sframe_backtrace_ex");
	stop_name = (const char *(*)(int))dlsym(RTLD_DEFAULT, "sframe_bt_stop_name");
	if (!bt_ex || !stop_name) {
		printf("not ok - sframebt's functions come from the preload\n");
		_exit(1);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGPROF;
	struct itimerspec its = { { 0, 200000 }, { 0, 200000 } };
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0)
		timer_settime(timer, 0, &its, NULL);
}

static int gcc_frames;
static _Unwind_Reason_Code one(struct _Unwind_Context *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	gcc_frames++;
	return _URC_NO_REASON;
}

static volatile int gcc_child_status = -1;

/* Called from the hot loop: once the caller is a trace, fork a child
 * that runs libgcc's walk from here. */
API int plain_gcc(int x)
{
	uintptr_t caller = (uintptr_t)__builtin_return_address(0);
	if (gcc_child_status == -1 && !in_object(caller)) {
		pid_t p = fork();
		if (p == 0) { /* a child inherits no timer */
			_Unwind_Backtrace(one, NULL);
			_exit(gcc_frames > 0 ? 0 : 2);
		}
		int st = 0;
		waitpid(p, &st, 0);
		gcc_child_status = st;
	}
	return x + 1;
}

API void report(void)
{
	timer_delete(timer);
	signal(SIGPROF, SIG_IGN);
	for (int i = 0; i < nsamples; i++) {
		struct sframe_bt_frame f = { .pc = samples[i].pc0 };
		judge(SAMPLE, &f, samples[i].pc0 != 0, samples[i].stop, samples[i].pc0);
	}
	for (int k = 0; k < KINDS; k++) {
		printf("# %s: %ld walks, %ld from a trace (%ld with the trace's frame); ended:",
		       kind_name[k], walks[k], from_trace[k], kept[k]);
		for (int r = 0; r < 64; r++)
			if (reasons[k][r])
				printf(" %s %ld", stop_name(r), reasons[k][r]);
		printf("\n");
	}
	/* The traces are registered (the preload saw LuaJIT's
	 * __register_frame()): their frames are kept; their rows give no CFA
	 * (a CIE without initial instructions, an FDE of nops): the walk
	 * stops there, with that reason. */
	for (int k = PLAIN; k <= CALLBACK; k++) {
		printf("%s - %s: called from a trace (%ld of %ld)\n",
		       from_trace[k] > 0 ? "ok" : "not ok", kind_name[k], from_trace[k], walks[k]);
		printf("%s - %s: every walk from a trace kept the trace's frame (%ld of %ld)\n",
		       kept[k] == from_trace[k] ? "ok" : "not ok", kind_name[k], kept[k],
		       from_trace[k]);
		long other = walks[k] - reasons[k][SFRAME_BT_STOP_OUTERMOST] -
			     reasons[k][SFRAME_BT_STOP_BAD_EH_FRAME];
		printf("%s - %s: %ld walks stopped at the trace with bad-eh-frame, the others "
		       "reached the outermost frame (%ld otherwise)\n",
		       other == 0 && reasons[k][SFRAME_BT_STOP_BAD_EH_FRAME] >= from_trace[k]
			       ? "ok"
			       : "not ok",
		       kind_name[k], reasons[k][SFRAME_BT_STOP_BAD_EH_FRAME], other);
	}
	printf("%s - %ld SIGPROF samples walked, %ld of them taken in trace code\n",
	       walks[SAMPLE] > 0 && from_trace[SAMPLE] > 0 ? "ok" : "not ok", walks[SAMPLE],
	       from_trace[SAMPLE]);
	int st = gcc_child_status;
	printf("%s - libgcc's _Unwind_Backtrace() from a C function a trace calls aborts "
	       "(status %#x)\n",
	       st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT ? "ok" : "not ok", st);
	fflush(stdout);
}
