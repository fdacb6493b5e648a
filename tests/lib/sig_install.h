/* Test helper: install a three-argument signal handler. */
#ifndef SFB_SIG_INSTALL_H
#define SFB_SIG_INSTALL_H

#include <signal.h>
#include <string.h>

/* fn handles sig from now on, with SA_SIGINFO and flags (SA_RESTART, ...),
 * no other signal blocked while it runs. */
static inline void sig_install(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

#endif
