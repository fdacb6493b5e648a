/* libFuzzer target for the demangler (src/symbols/demangle.c,
 * demangle_rust.c).
 *
 * The input, up to its first NUL, is the name.  It is demangled into a
 * 64 KiB buffer, then again into a heap buffer of exactly SIZE bytes (so
 * ASan catches a byte written past the size), SIZE one of 0, 1, 16, the
 * text's length and one more, picked by a hash of the name: the result
 * must be -1 with an empty string, or its length with the text
 * NUL-terminated there; the same when the size fits, and -1 when it does
 * not.
 *
 * Then libstdc++'s __cxa_demangle (test code only: it allocates) on the
 * same _Z name, if this demangler printed it.  Both print with libiberty's rules, but libstdc++'s copy
 * of them is not binutils' (c++filt, which t_demangle.sh holds this
 * demangler to), legacy Rust names are Itanium names to it, and it takes
 * no budgets: a name both demangle to different texts is reported on
 * stderr (the first few), and is a failure only with
 * FUZZ_DEMANGLE_STRICT=1 in the environment.
 *
 * Build and run: see tests/fuzz/build.mk.  With -DSFB_FUZZ_MAIN the file
 * has its own main() that runs each file named on the command line once
 * (the seed corpus tests/fuzz/corpus-demangle/ as a regression test). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

#define FUZZ_NAME "fuzz_demangle"
#include "fuzz_target.h"

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static char full[1 << 16];

static void check_size(const char *name, size_t size, int want)
{
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return;
	memset(buf, 'x', size);
	int n = sfb_demangle(name, buf, size);
	int fits = want >= 0 && (size_t)want < size;
	if (fits) {
		if (n != want || memcmp(buf, full, (size_t)want + 1) != 0)
			FAIL("size %zu: %d, not %d as with a large buffer", size, n, want);
	} else {
		if (n != -1)
			FAIL("size %zu: %d, but the text needs %d bytes", size, n, want + 1);
		if (size > 0 && buf[0] != 0)
			FAIL("size %zu: -1 without an empty string", size);
	}
	free(buf);
}

/* Legacy Rust names are Itanium names to __cxa_demangle. */
static int rust_legacy_like(const char *name, size_t len)
{
	const char *e = strrchr(name, 'E');
	return len > 22 && strncmp(name, "_ZN", 3) == 0 && e && e - name > 19 &&
	       strncmp(e - 19, "17h", 3) == 0;
}

static void compare_cxa(const char *name, size_t len, int n)
{
	static int reported;
	static int strict = -1;
	if (strict < 0) {
		const char *s = getenv("FUZZ_DEMANGLE_STRICT");
		strict = s && strcmp(s, "1") == 0;
	}
	/* Only names this demangler printed: libiberty's printer takes no
	 * step budget, and names that break ours can keep it busy for
	 * minutes. */
	if (n < 0 || len < 2 || name[0] != '_' || name[1] != 'Z' || rust_legacy_like(name, len))
		return;
	int status = 0;
	char *theirs = __cxa_demangle(name, NULL, NULL, &status);
	if (theirs && strcmp(theirs, full) != 0) {
		if (reported++ < 10)
			fprintf(stderr, FUZZ_NAME ": differs from __cxa_demangle: %s\n  ours:   %s\n  theirs: %s\n",
				name, full, theirs);
		if (strict)
			FAIL("differs from __cxa_demangle");
	}
	free(theirs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = 0;
	while (len < size && data[len])
		len++;
	char *name = malloc(len + 1);
	if (!name)
		return 0;
	memcpy(name, data, len);
	name[len] = 0;

	int n = sfb_demangle(name, full, sizeof full);
	if (n < -1 || (n >= 0 && (full[n] != 0 || strlen(full) != (size_t)n)))
		FAIL("result %d but a text of %zu bytes", n, strlen(full));
	if (n == -1 && full[0] != 0)
		FAIL("-1 without an empty string");
	/* One smaller buffer an input, picked by a hash of its bytes, so that
	 * a run costs two demangles, not six: over millions of runs every
	 * size is checked often, and a failing input replays the same size. */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	size_t sizes[] = {0, 1, 16, n >= 0 ? (size_t)n : 2, n >= 0 ? (size_t)n + 1 : 3};
	check_size(name, sizes[h % (sizeof sizes / sizeof sizes[0])], n);
	compare_cxa(name, len, n);
	free(name);
	return 0;
}
