/* libgcc's _Unwind_Backtrace(), the ground truth that reads .eh_frame
 * with code of its own: each frame's IP (a return address, or the exact
 * PC after a signal frame) and _Unwind_GetCFA(), which in libgcc's
 * context of a frame is the CFA of the frame it was unwound from (its
 * callee's, so that frame k's CFA is cfa[k + 1]); at most GCC_TRACE_MAX
 * frames, without the one libgcc reports past the outermost, with IP 0.
 * From a signal handler it crosses the handler and the signal frame. */
#ifndef SFB_GCC_TRACE_H
#define SFB_GCC_TRACE_H
#include <stdint.h>
#include <unwind.h>

#define GCC_TRACE_MAX 160

struct gcc_trace {
	int n;
	uintptr_t ip[GCC_TRACE_MAX], cfa[GCC_TRACE_MAX];
};

static inline _Unwind_Reason_Code gcc_trace_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct gcc_trace *t = (struct gcc_trace *)arg;
	int before = 0;
	uintptr_t ip = _Unwind_GetIPInfo(ctx, &before);
	if (t->n == GCC_TRACE_MAX)
		return _URC_END_OF_STACK;
	if (ip) {
		t->ip[t->n] = ip;
		t->cfa[t->n] = _Unwind_GetCFA(ctx);
		t->n++;
	}
	return _URC_NO_REASON;
}

/* The trace from here (its first frames are this function's and its
 * caller's). */
static __attribute__((noinline, unused)) void gcc_trace(struct gcc_trace *t)
{
	t->n = 0;
	_Unwind_Backtrace(gcc_trace_frame, t);
}

#endif
