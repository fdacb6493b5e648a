/* crash-cxx: the crash report of an uncaught C++ exception.
 *
 *   crash-cxx
 *
 * throws from parse_config(), called through load_config() from main(),
 * and nothing catches it: std::terminate() prints the exception and calls
 * abort(), whose SIGABRT the handler below reports, on stderr, from libc's
 * raise through abort, libstdc++'s terminate and __cxa_throw, the throwing
 * function and its callers, to main and _start.  Then the process dies
 * from SIGABRT as it would have without the handler.  libc and libstdc++
 * are walked through with their .eh_frame; this program through its .sframe
 * (built with -Wa,--gsframe).  Names are demangled, as c++filt prints
 * them: "parse_config(char const*)+0x2a".
 *
 * Built by examples/build.mk; examples/crash-handler.c has the complete
 * crash handler (all fatal signals, an alternate stack, several threads
 * crashing at once). */
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <unistd.h>

#include "backtrace.h"

static void on_abort(int sig, siginfo_t *, void *uc)
{
	static const char head[] = "*** SIGABRT: the report of sframebt ***\n";
	if (write(STDERR_FILENO, head, sizeof head - 1) < 0)
		_exit(128 + sig);
	sframe_write_crash_report(uc, STDERR_FILENO);
	/* Die from SIGABRT with the default action (it is blocked while
	 * this handler runs: unblock it). */
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
	raise(sig);
	_exit(128 + sig);
}

/* noinline, and work after each call, so that each function keeps its
 * frame in the report; noipa (gcc) keeps gcc from cloning them for their
 * constant argument (parse_config.constprop.0). */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif
volatile int config_sink;

NOINLINE static void parse_config(const char *text)
{
	if (std::strchr(text, '=') == nullptr)
		throw std::runtime_error(std::string("no '=' in: ") + text);
	config_sink++;
}

NOINLINE static void load_config(const char *text)
{
	parse_config(text);
	config_sink++;
}

int main()
{
	struct sigaction sa;
	std::memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_abort;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGABRT, &sa, nullptr);

	load_config("verbose");
	config_sink++;
	return 0;
}
