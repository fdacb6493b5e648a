/* Minimal test helpers: every check prints one "ok"/"not ok" line, which
 * tests/run.sh counts.  A test program's exit status is 1 if any check
 * failed. */
#ifndef SFB_CHECK_H
#define SFB_CHECK_H
#include <stdio.h>
#include <stdlib.h>

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
#endif
