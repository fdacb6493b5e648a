/* The crash report (backtrace.h: sframe_write_crash_report): walk from the
 * crashing context, then symbolize and write each frame, then why the
 * walk stopped.  Runs in signal handlers, on a 64 KiB alternate stack:
 * only async-signal-safe calls, every line built on the stack and
 * written with write(2). */
#include <stdint.h>

#include "backtrace.h"
#include "base/entry.h"
#include "base/textbuf.h"
#include "report/report.h"
#include "symbols/symbolize.h"

#define MAX_FRAMES 128

static void write_stop(int fd, const struct sframe_bt_status *st, char *scratch)
{
	const char *why = sframe_bt_stop_name(st->stop);
	struct sfb_text b = { scratch + SFB_SYM_WORK_OFF, 0, SFB_SYM_LINE_CAP - 1 };
	sfb_put(&b, "# stopped: ");
	sfb_put(&b, why ? why : "?");
	if (st->stop_pc) {
		sfb_put(&b, " at ");
		sfb_put_hex(&b, st->stop_pc);
	}
	b.p[b.len++] = '\n';
	sfb_write_all(fd, b.p, b.len);
}

SFRAMEBT_API int sframe_write_crash_report(const void *ucontext, int fd)
{
	SFB_ENTRY;
	struct sframe_bt_frame frames[MAX_FRAMES];
	struct sframe_bt_status st = { 0 };
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	int n = sframe_backtrace_ex(ucontext, frames, MAX_FRAMES, 0, &st);
	if (n < 0)
		n = 0;
	/* Without a context the walk starts here, in this function: the
	 * report starts at our caller. */
	int first = !ucontext && n > 0;
	for (int i = first; i < n; i++)
		sfb_write_frame(fd, i - first, frames[i].pc, !frames[i].exact, scratch);
	write_stop(fd, &st, scratch);
	return n - first;
}
