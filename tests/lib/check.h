/* Minimal test helpers: every check prints one "ok"/"not ok" line, which
 * tests/run.sh counts.  A test program's exit status is 1 if any check
 * failed. */
#ifndef SFB_CHECK_H
#define SFB_CHECK_H
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (cond) {                                               \
			printf("ok - ");                                  \
		} else {                                                  \
			printf("not ok - %s:%d: (%s) ", __FILE__, __LINE__, #cond); \
			check_failures++;                                 \
		}                                                         \
		printf(__VA_ARGS__);                                      \
		printf("\n");                                             \
		fflush(stdout);                                           \
	} while (0)
#define CHECK_DONE() return check_failures ? 1 : 0

/* Under valgrind (make test-valgrind sets SFB_VALGRIND; a plain valgrind
 * run preloads vgpreload): time limits there measure valgrind, whose
 * translations of new code and one-thread-at-a-time scheduling can take
 * a single call hundreds of milliseconds. */
static inline bool under_valgrind(void)
{
	const char *v = getenv("SFB_VALGRIND"), *p = getenv("LD_PRELOAD");
	return (v && *v && strcmp(v, "0") != 0) || (p && strstr(p, "vgpreload"));
}
#endif
