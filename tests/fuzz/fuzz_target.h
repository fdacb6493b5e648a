/* What the fuzz targets share.  Each defines FUZZ_NAME (its name) before
 * including this.  Built with -DSFB_FUZZ_MAIN instead of libFuzzer, a
 * target has its own main, which runs each file named on the command
 * line once through LLVMFuzzerTestOneInput(), so the corpus is a plain
 * regression test (tests/fuzz/t_fuzz_smoke.sh). */
#ifndef SFB_FUZZ_TARGET_H
#define SFB_FUZZ_TARGET_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A broken invariant: say which, and abort (libFuzzer and the replay
 * both report an abort). */
#define FAIL(...)                                                    \
	do {                                                         \
		fprintf(stderr, FUZZ_NAME ": " __VA_ARGS__);         \
		fprintf(stderr, "\n");                               \
		abort();                                             \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef SFB_FUZZ_MAIN
/* Run argv[first..argc) through the target; 2 if a file cannot be read. */
static int fuzz_replay(int argc, char **argv, int first)
{
	int n = 0;
	for (int i = first; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, FUZZ_NAME ": cannot open %s\n", argv[i]);
			return 2;
		}
		static uint8_t buf[1 << 20];
		size_t len = fread(buf, 1, sizeof buf, f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		n++;
	}
	printf("%d inputs\n", n);
	return 0;
}

/* A target with more to do than replay defines FUZZ_OWN_MAIN. */
#ifndef FUZZ_OWN_MAIN
int main(int argc, char **argv)
{
	return fuzz_replay(argc, argv, 1);
}
#endif
#endif

#endif
