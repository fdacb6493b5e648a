/* A program that knows nothing of sframebt: glibc's backtrace() from a
 * SIGSEGV handler while another thread holds the main malloc arena's lock
 * (malloc_stats() writes to stderr under it, and stderr is a full pipe
 * nobody reads).  With glibc's own backtrace() the handler's first call
 * dlopen()s libgcc_s, whose malloc waits for that lock forever; through
 * libsframebt-preload.so it prints the frames and exits 0.
 * Output (stdout): "frames N", then backtrace_symbols_fd()'s lines. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")

static _Atomic int holder_started;
static int *volatile null_ptr;

static void *hold_malloc_lock(void *arg)
{
	(void)arg;
	atomic_store(&holder_started, 1);
	malloc_stats(); /* blocks in write(2) with main_arena's lock held */
	return NULL;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	void *buf[64];
	int n = backtrace(buf, 64);
	char line[32];
	int k = snprintf(line, sizeof line, "frames %d\n", n);
	if (write(1, line, (size_t)k) < 0)
		_exit(3);
	backtrace_symbols_fd(buf, n, 1);
	_exit(0);
}

NOINLINE int victim_c(int x) { *null_ptr = x; BARRIER(); return x; }
NOINLINE int victim_b(int x) { int r = victim_c(x + 1); BARRIER(); return r + 1; }
NOINLINE int victim_a(int x) { int r = victim_b(x + 1); BARRIER(); return r + 1; }

int main(void)
{
	/* stderr: a pipe filled to the brim, then blocking. */
	int p[2];
	if (pipe(p))
		return 2;
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	char junk[4096];
	memset(junk, 'x', sizeof junk);
	while (write(p[1], junk, sizeof junk) > 0)
		;
	while (write(p[1], junk, 1) > 0)
		;
	fcntl(p[1], F_SETFL, 0);
	dup2(p[1], 2);
	free(malloc(64)); /* the main thread's arena is main_arena */

	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	pthread_t t;
	pthread_create(&t, NULL, hold_malloc_lock, NULL);
	while (!atomic_load(&holder_started))
		usleep(1000);
	usleep(200000); /* into malloc_stats()'s first write */
	return victim_a(1);
}
