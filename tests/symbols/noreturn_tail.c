/* A function that ends in a call to a noreturn function, after a function
 * symbol without a size: the call's return address lies past the end of
 * its function, where only the symbol without a size lies below it.
 * tests/symbols/t_noreturn_tail.sh checks every frame's name against nm.
 *
 * Usage: noreturn_tail report|dropin|given
 *   report  sframebt's crash handler reports the SIGABRT of abort();
 *   dropin  a SIGABRT handler calls glibc's backtrace() and
 *           backtrace_symbols_fd() (run with libsframebt-preload.so);
 *   given   a SIGABRT handler prints each frame of the walk looked up as
 *           given, exact PC or not: "#N 0xPC in NAME+0xOFF (OBJ+0xOFF)".
 * Output on stdout, then the process dies from SIGABRT or exits 0. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backtrace.h"

/* The symbol without a size, then check_invariant, in one section of
 * their own so that nothing comes between them: module-level assembly is
 * emitted first (clang) or in source order (gcc with
 * -fno-toplevel-reorder, see tests/symbols/build.mk). */
__asm__(".pushsection .text.sfb_tail,\"ax\",%progbits\n"
	".p2align 4\n"
	".globl sfb_tail_nosize\n.type sfb_tail_nosize, %function\n"
	"sfb_tail_nosize:\n.skip 32\n"
	".popsection\n");

volatile int sfb_tail_sink;

/* Its last instruction is the call to abort(). */
/* Uninstrumented in sanitizer builds, where a check would add calls. */
__attribute__((noinline, section(".text.sfb_tail"), no_sanitize("address", "undefined")))
void check_invariant(int v)
{
	sfb_tail_sink = v;
	abort();
}

static void on_abrt_dropin(int sig)
{
	(void)sig;
	void *buf[64];
	int n = backtrace(buf, 64);
	backtrace_symbols_fd(buf, n, 1);
	_exit(0);
}

static void on_abrt_given(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	static char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct sframe_bt_frame f[64];
	int n = sframe_backtrace_ex(uc, f, 64, 0, NULL);
	for (int i = 0; i < n; i++) {
		struct sframe_symbol s;
		char line[3000];
		char name[1100] = "??";
		if (sframe_symbolize(f[i].pc, &s, scratch, sizeof scratch))
			snprintf(name, sizeof name, "%s+%#lx", s.name, (unsigned long)s.name_offset);
		int k = snprintf(line, sizeof line, "#%d %#lx in %s (%s+%#lx)\n", i,
				 (unsigned long)f[i].pc, name, s.object,
				 (unsigned long)s.object_offset);
		if (write(1, line, (size_t)k) != k)
			_exit(3);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	if (strcmp(mode, "report") == 0) {
		sframe_install_crash_handler(1);
	} else if (strcmp(mode, "dropin") == 0) {
		sa.sa_handler = on_abrt_dropin;
		sigaction(SIGABRT, &sa, NULL);
	} else if (strcmp(mode, "given") == 0) {
		sa.sa_sigaction = on_abrt_given;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGABRT, &sa, NULL);
	} else {
		fprintf(stderr, "usage: %s report|dropin|given\n", argv[0]);
		return 2;
	}
	check_invariant(argc);
	return 0;
}
