/* Preloaded into lli-14 with libsframebt-preload.so by t_jit_lli.sh: the
 * C functions JIT code calls (tests/objects/jit_chain.ll, jit_spin.ll).
 * sframebt's functions come from the preload object, which registered
 * the JIT code through its __register_frame() interposer.
 *
 * callback() walks with sframe_backtrace_ex() and with libgcc's
 * _Unwind_Backtrace() and compares them frame for frame from its caller
 * (the first JIT frame) on; sample_start() starts SIGPROF sampling (a
 * second call stops it), sample_report() says whether every sample
 * taken in JIT code was walked whole. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unwind.h>

#include "backtrace.h"

#define API __attribute__((visibility("default"), noinline))

static uintptr_t gcc_pcs[64];
static int gcc_n;

static _Unwind_Reason_Code one(struct _Unwind_Context *ctx, void *arg)
{
	(void)arg;
	if (gcc_n < 64)
		gcc_pcs[gcc_n++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

static int in_object(uintptr_t pc)
{
	Dl_info di;
	return dladdr((void *)pc, &di) != 0;
}

API void callback(void)
{
	struct sframe_bt_frame f[64];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(NULL, f, 64, 0, &st);
	gcc_n = 0;
	_Unwind_Backtrace(one, NULL);
	int jit = 0;
	for (int i = 0; i < n; i++) {
		jit += !in_object(f[i].pc);
		printf("# %2d %#lx from %d%s\n", i, (unsigned long)f[i].pc, f[i].source,
		       in_object(f[i].pc) ? "" : " (JIT code)");
	}
	/* libgcc's first frame is callback()'s own; from its caller on, the
	 * two must agree wherever both have frames. */
	int at = -1, same = 0, m = 1;
	for (int k = 0; k < gcc_n && n > 1; k++)
		if (gcc_pcs[k] == f[1].pc) {
			at = k;
			break;
		}
	if (at >= 0) {
		same = 1;
		for (; m < n && at + m - 1 < gcc_n; m++)
			if (gcc_pcs[at + m - 1] != f[m].pc)
				same = 0;
	}
	printf("%s - %d frames, %d in JIT code, to the end (%s)\n",
	       jit >= 3 && st.stop == SFRAME_BT_STOP_OUTERMOST ? "ok" : "not ok", n, jit,
	       sframe_bt_stop_name(st.stop));
	printf("%s - the same %d frames as libgcc's _Unwind_Backtrace (%d frames)\n",
	       same && m - 1 >= n - 1 ? "ok" : "not ok", m - 1, gcc_n);
	fflush(stdout);
}

#define SAMPLES 4096
static struct {
	uintptr_t pc0;
	int stop, n;
} samples[SAMPLES];
static volatile sig_atomic_t nsamples;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	struct sframe_bt_frame f[64];
	struct sframe_bt_status st;
	int n = sframe_backtrace_ex(uc, f, 64, 0, &st);
	int i = nsamples;
	if (i >= SAMPLES)
		return;
	samples[i].pc0 = n > 0 ? f[0].pc : 0;
	samples[i].stop = st.stop;
	samples[i].n = n;
	nsamples = i + 1;
}

API void sample_start(void)
{
	static int started;
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	if (!started++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_prof;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
		it.it_interval.tv_usec = it.it_value.tv_usec = 1000;
	}
	setitimer(ITIMER_PROF, &it, NULL);
}

API int sample_report(void)
{
	int jit = 0, whole = 0;
	for (int i = 0; i < nsamples; i++) {
		if (in_object(samples[i].pc0))
			continue;
		jit++;
		if (samples[i].stop == SFRAME_BT_STOP_OUTERMOST)
			whole++;
		else
			printf("# sample %d: %d frames, stop %s\n", i, samples[i].n,
			       sframe_bt_stop_name(samples[i].stop));
	}
	printf("%s - %d SIGPROF samples, %d in the JIT loop, %d of those whole to the end\n",
	       jit >= 10 && whole == jit ? "ok" : "not ok", (int)nsamples, jit, whole);
	fflush(stdout);
	return 0;
}
