// An uncaught C++ exception in a static program (t_static's C++ case):
// std::terminate() aborts inside libstdc++ and libc, whose .eh_frame has
// no search table unless linked --eh-frame-hdr.  The SIGABRT handler
// walks the context with sframebt and with libgcc's _Unwind_Backtrace()
// and compares them whole, through main to _start.
#include <signal.h>
#include <stdexcept>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "gcc_compare.h"
#include "sig_install.h"
#include "uc_regs.h"

extern "C" char _start[];
static uintptr_t main_ra;
static volatile unsigned sink;
static struct walk crash;

static void on_abort(int, siginfo_t *, void *uc)
{
	walk_now(uc, &crash);
	bool same = walk_same(&crash), has_main = false;
	for (int i = 0; i < crash.n; i++)
		has_main |= crash.pc[i] == main_ra;
	CHECK(same, "c++ uncaught exception: %d frames, the same as libgcc's _Unwind_Backtrace",
	      crash.n);
	CHECK(has_main && crash.stop == SFRAME_BT_STOP_OUTERMOST &&
		      crash.pc[crash.n - 1] - (uintptr_t)_start < 64,
	      "c++ uncaught exception: through main to the outermost frame, in _start (%s)",
	      sframe_bt_stop_name(crash.stop));
	if (!same || !has_main)
		walk_print(&crash);
	_exit(check_failures ? 1 : 0);
}

__attribute__((noinline)) static void thrower(int depth)
{
	if (depth)
		thrower(depth - 1);
	else
		throw std::runtime_error("uncaught");
	sink++;
}

// report-cxx: the library's crash handler reports the abort; on_report,
// installed over it, first writes libgcc's frames of the same context
// (t_static_report.sh compares them, as for t_static.c).
static struct sigaction lib_handler;

static void on_report(int sig, siginfo_t *si, void *uc)
{
	walk_now(uc, &crash);
	uintptr_t pc = (uintptr_t)UC_PC((ucontext_t *)uc);
	int from = 0;
	while (from < crash.n_gcc && crash.gcc[from] != pc)
		from++;
	char line[64];
	for (int i = from; i < crash.n_gcc; i++) {
		int k = snprintf(line, sizeof line, "# libgcc #%d %#lx\n", i - from,
				 (unsigned long)crash.gcc[i]);
		if (write(STDOUT_FILENO, line, (size_t)k) != k)
			break;
	}
	lib_handler.sa_sigaction(sig, si, uc);
}

int main(int argc, char **argv)
{
	main_ra = (uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
	if (argc > 1 && !strcmp(argv[1], "report-cxx")) {
		sframe_install_crash_handler(STDERR_FILENO);
		sigaction(SIGABRT, NULL, &lib_handler);
		sig_install(SIGABRT, on_report, SA_ONSTACK);
		thrower(4);
		return 1;
	}
	sig_install(SIGABRT, on_abort, SA_RESETHAND);
	thrower(4);
	CHECK(0, "c++ uncaught exception: terminate() did not abort");
	CHECK_DONE();
}
