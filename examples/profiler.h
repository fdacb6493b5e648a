/* A sampling CPU profiler built on sframebt: see examples/profiler.c.
 *
 * Two ways to use it:
 *   - LD_PRELOAD=build/libsframe-profiler.so ./program   (no code change;
 *     configured by the SFRAME_PROF_* environment variables below);
 *   - compile examples/profiler.c into the program and call
 *     sframe_prof_start() / sframe_prof_stop() around the part to profile.
 *
 * Environment (read by both, for every option left 0/NULL):
 *   SFRAME_PROF_HZ=N      samples per second of each thread's CPU time (99)
 *   SFRAME_PROF_OUT=P     write P.folded, P.summary.txt (and P.svg); "%p" in P is
 *                         replaced by the process id, which keeps the
 *                         processes of a script apart; default
 *                         "sframe-prof.%p" in the current directory
 *   SFRAME_PROF_SVG=1     also draw P.svg, a flame graph
 *   SFRAME_PROF_PPROF=1   also write P.pb.gz, a pprof profile (profile.proto)
 *   SFRAME_PROF_FILE=F    instead of P.*: write only F, in the format its name
 *                         ends with (.pb.gz, .folded, .svg), and the summary
 *                         to F-without-suffix.summary.txt; "%p" as above
 *   SFRAME_PROF_PID=N     with SFRAME_PROF_FILE: processes other than N (the
 *                         children of the program sframe-prof started)
 *                         insert ".PID" before F's suffix
 *   SFRAME_PROF_WALL=1    sample every thread on the wall clock, running or
 *                         not (off-CPU time: sleeping, locks, I/O)
 *   SFRAME_PROF_FORK=1    profile a child made by fork() too, into its own
 *                         files (its pid in the name); else the summary
 *                         counts the children not followed
 *   SFRAME_PROF_QUIET=1   no summary on stderr (P.summary.txt has it)
 *   SFRAME_PROF_LINES_MS=N  pprof: the CPU time, in ms, that reading the
 *                         source lines of the profile's addresses may take
 *                         at exit (-1: no limit, 0: no lines); default 1%
 *                         of the CPU time profiled
 */
#ifndef SFRAME_PROFILER_H
#define SFRAME_PROFILER_H

struct sframe_prof_opts {
	int hz;          /* 0: SFRAME_PROF_HZ, else 99 */
	const char *out; /* NULL: SFRAME_PROF_OUT, else "sframe-prof.%p" */
	int svg;         /* 0: SFRAME_PROF_SVG */
	int quiet;       /* 0: SFRAME_PROF_QUIET */
	int pprof;       /* 0: SFRAME_PROF_PPROF */
	int wall;        /* 0: SFRAME_PROF_WALL */
	int follow_fork; /* 0: SFRAME_PROF_FORK */
	int frame_pointers; /* 0: SFRAME_PROF_FRAME_POINTERS: code without unwind
			       tables walked by its frame pointers
			       (SFRAME_BT_FP_FALLBACK_ANY) */
};

/* Start sampling every thread of the process: the ones running now and
 * the ones created later with pthread_create().  opts may be NULL.
 * Returns 0, or -1 with errno set (EBUSY: already running).  Registers
 * sframe_prof_stop() with atexit(), so output is written even without an
 * explicit stop. */
int sframe_prof_start(const struct sframe_prof_opts *opts);

/* Stop sampling and write the output files and the summary.  Returns 0,
 * or -1 if not running or the output could not be written. */
int sframe_prof_stop(void);

#endif
