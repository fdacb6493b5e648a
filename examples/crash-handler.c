/* crash-handler: print a symbolized stack trace when the program crashes.
 *
 *   crash-handler [segv|abort|fpe|ill|bus|stack-smash|overflow|strlen]
 *
 * crashes on purpose inside nested functions of this program and of
 * libcrashdemo.so (examples/demo/), or inside libc (abort, strlen), and
 * prints, on stderr:
 *
 *   *** SIGSEGV (SEGV_MAPERR) fault address 0x10, pid 4242, tid 4242 ***
 *   #0 0x7f3a1c2b1256 in crash_leaf+0xa6 (/path/libcrashdemo.so+0x1256)
 *   #1 0x7f3a1c2b12ae in static_helper+0xe (/path/libcrashdemo.so+0x12ae)
 *   ...
 *   #4 0x55d0c3a1f2cd in main+0x6d (/path/crash-handler+0x22cd)
 *   #5 0x7f3a1c04624a in __libc_start_call_main+0x7a (/lib/.../libc.so.6+0x2724a)
 *   #6 0x7f3a1c046305 in __libc_start_main+0x85 (/lib/.../libc.so.6+0x27305)
 *   #7 0x55d0c3a1f4a1 in _start+0x21 (/path/crash-handler+0x24a1)
 *   # stopped: outermost at 0x55d0c3a1f4a1
 *
 * then dies from the same signal, exactly as it would have without the
 * handler: same exit status, same core dump.  "# stopped" says why the
 * walk ended: "outermost" is the natural end, _start (or clone3 on other
 * threads).  Frames without .sframe (libc, on most systems) are unwound
 * with their .eh_frame.  A stripped library's static functions (libc's
 * __libc_start_call_main) are named from its detached debug file when one
 * is installed (Debian: libc6-dbg), else "??".
 *
 * All of it is sframe_install_crash_handler(STDERR_FILENO), called first
 * thing in main() (and sframe_crash_handler_thread_init() at the start of
 * other threads, for stack overflows there).  The program is built with
 * -Wa,--gsframe (GCC/binutils 2.40 or later), so that SFrame covers its
 * frames; libraries without it are walked by their .eh_frame.  The report
 * is written by the library: no code of this file runs in the handler. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backtrace.h"
#include "demo/crashdemo.h"

/* The demo.  noinline, and work after each call, keep -O2 from inlining
 * the functions or turning the calls into jumps, so the report shows each
 * one; see examples/demo/libcrashdemo.c. */
volatile int demo_sink;

/* strlen: a fault inside libc, whose code has no .sframe: the walk starts
 * in libc's strlen and leaves it through its .eh_frame. */
enum { CRASH_IN_LIBC = 1000 };
static const char *volatile bad_string = (const char *)16;

static __attribute__((noinline)) void measure_string(void)
{
	demo_sink += (int)strlen(bad_string); /* SIGSEGV, in libc */
	demo_sink++;
}

static __attribute__((noinline)) void run_scenario(int how)
{
	if (how == CRASH_IN_LIBC)
		measure_string();
	else
		crashdemo_run(how); /* into libcrashdemo.so */
	demo_sink++;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		[CRASH_SEGV] = "segv",   [CRASH_ABORT] = "abort",
		[CRASH_FPE] = "fpe",     [CRASH_ILL] = "ill",
		[CRASH_BUS] = "bus",     [CRASH_STACK_SMASH] = "stack-smash",
		[CRASH_OVERFLOW] = "overflow",
	};
	const char *want = argc > 1 ? argv[1] : "segv";
	int how = strcmp(want, "strlen") == 0 ? CRASH_IN_LIBC : -1;
	for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
		if (strcmp(want, names[i]) == 0)
			how = i;
	if (how < 0 || argc > 2) {
		fprintf(stderr, "usage: %s [segv|abort|fpe|ill|bus|stack-smash|overflow|strlen]\n",
			argv[0]);
		return 2;
	}
	/* The one call a program needs: from now on a crash is reported on
	 * stderr, then kills the process as it would have without it. */
	if (sframe_install_crash_handler(STDERR_FILENO) != 0) {
		fprintf(stderr, "%s: sframe_install_crash_handler failed\n", argv[0]);
		return 1;
	}
	run_scenario(how);
	demo_sink++;
	fprintf(stderr, "%s: did not crash?\n", argv[0]);
	return 1;
}
