/* Workloads for tests/tools/t_sframe_prof.sh.
 *
 *   threads wall MS   two threads for MS milliseconds: "spinner" burns CPU
 *                     in spin_loop(), "sleeper" waits in nanosleep() in
 *                     sleep_loop() (off-CPU: only a wall-clock profile
 *                     sees it);
 *   threads fork MS   spins MS milliseconds of CPU time in parent_work(),
 *                     forks a child that spins MS milliseconds of CPU
 *                     time in child_work() (CPU time: each gets its
 *                     samples however loaded the machine). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

/* Spin until clock has advanced by seconds. */
__attribute__((noinline)) static void spin_for(double seconds, clockid_t clock)
{
	double end = now(clock) + seconds;
	while (now(clock) < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

static double run_seconds;

__attribute__((noinline)) static void *spin_loop(void *unused)
{
	(void)unused;
	pthread_setname_np(pthread_self(), "spinner");
	/* As long as the sleeper, in wall-clock time. */
	spin_for(run_seconds, CLOCK_MONOTONIC);
	return NULL;
}

/* A profiler's signal interrupts nanosleep() (EINTR, SA_RESTART or not):
 * sleep on to the deadline. */
__attribute__((noinline)) static void *sleep_loop(void *unused)
{
	(void)unused;
	pthread_setname_np(pthread_self(), "sleeper");
	struct timespec ts = { (time_t)run_seconds,
			       (long)((run_seconds - (double)(time_t)run_seconds) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return NULL;
}

__attribute__((noinline)) static void parent_work(double s) { spin_for(s, CLOCK_THREAD_CPUTIME_ID); }
__attribute__((noinline)) static void child_work(double s) { spin_for(s, CLOCK_THREAD_CPUTIME_ID); }

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	run_seconds = atoi(argv[2]) / 1000.0;
	if (strcmp(argv[1], "wall") == 0) {
		pthread_t a, b;
		pthread_create(&a, NULL, spin_loop, NULL);
		pthread_create(&b, NULL, sleep_loop, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		return 0;
	}
	if (strcmp(argv[1], "fork") == 0) {
		parent_work(run_seconds);
		pid_t pid = fork();
		if (pid == 0) {
			child_work(run_seconds);
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	return 2;
}
