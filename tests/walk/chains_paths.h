/* Where t_walk_chains and t_every_insn find their helper objects and the
 * fixture libraries. */
#ifndef SFB_CHAINS_PATHS_H
#define SFB_CHAINS_PATHS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The directory of this executable (BUILD/tests), set by find_exe_dir(). */
static char exe_dir[PATH_MAX];

static void find_exe_dir(void)
{
	ssize_t k = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
	exe_dir[k > 0 ? k : 0] = 0;
	char *slash = strrchr(exe_dir, '/');
	if (slash)
		*slash = 0;
}

/* tests/fixtures/bin: $SFB_FIXTURES, else relative to the repository root
 * (the working directory of tests/run.sh), else the source tree this was
 * built from, else relative to the executable (BUILD/tests/PROGRAM with
 * BUILD inside the repository). */
static const char *fixtures_dir(void)
{
	static char dir[PATH_MAX + 64];
	const char *env = getenv("SFB_FIXTURES");
	if (env && *env)
		return env;
	if (access("tests/fixtures/bin/x86_64-v1/libchain.so", R_OK) == 0)
		return "tests/fixtures/bin";
#ifdef SFB_CHAINS_SRCDIR
	if (access(SFB_CHAINS_SRCDIR "/tests/fixtures/bin/x86_64-v1/libchain.so", R_OK) == 0)
		return SFB_CHAINS_SRCDIR "/tests/fixtures/bin";
#endif
	snprintf(dir, sizeof dir, "%s/../../tests/fixtures/bin", exe_dir);
	return dir;
}

#endif
