/* A program that knows nothing of sframebt: glibc's backtrace() from a
 * SIGSEGV handler while another thread holds the main malloc arena's lock
 * (malloc_stats() writes to stderr under it, and stderr is a full pipe
 * nobody reads).  With glibc's own backtrace() the handler's first call
 * dlopen()s libgcc_s, whose malloc waits for that lock forever; through
 * libsframebt-preload.so it prints the frames and exits 0.
 * Output (stdout): "frames N", then backtrace_symbols_fd()'s lines; exit
 * status 4 if the other thread never blocked there. */
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
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")

static _Atomic int holder_tid;
static int *volatile null_ptr;

static void *hold_malloc_lock(void *arg)
{
	(void)arg;
	atomic_store(&holder_tid, (int)syscall(SYS_gettid));
	malloc_stats(); /* blocks in write(2) with main_arena's lock held */
	return NULL;
}

/* Whether thread tid is blocked in write(2, ...): /proc's syscall file
 * gives the number and arguments of the call a blocked thread is in.
 * malloc_stats() writes to stderr only with main_arena's lock held. */
static int blocked_writing_stderr(int tid)
{
	char path[64], text[128] = { 0 };
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	long nr;
	unsigned long arg0;
	return n > 0 && sscanf(text, "%ld %lx", &nr, &arg0) == 2 && nr == SYS_write &&
	       arg0 == 2;
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
	/* Not a fixed sleep: on a loaded machine the holder may take longer
	 * to reach the lock, and glibc's backtrace() would then not hang. */
	int tid;
	while (!(tid = atomic_load(&holder_tid)))
		usleep(1000);
	for (int ms = 0; !blocked_writing_stderr(tid); ms++) {
		if (ms == 20000)
			return 4; /* never blocked: the test's premise fails */
		usleep(1000);
	}
	return victim_a(1);
}
