/* The fuzz targets' own main, built with -DSFB_FUZZ_MAIN instead of
 * libFuzzer: each file named on the command line is run once through
 * LLVMFuzzerTestOneInput(), so the corpus is a plain regression test
 * (tests/t_fuzz_smoke.sh). */
#ifndef SFB_FUZZ_REPLAY_H
#define SFB_FUZZ_REPLAY_H

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run argv[first..argc) through the target; 2 if a file cannot be read. */
static int fuzz_replay(const char *name, int argc, char **argv, int first)
{
	int n = 0;
	for (int i = first; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, "%s: cannot open %s\n", name, argv[i]);
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

#endif
