/* The public demangler, sframe_demangle(): names against binutils'
 * c++filt (the ground truth), a buffer one byte too small and one of
 * exactly the right size, names that are not mangled, NULL arguments,
 * and errno kept. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backtrace.h"
#include "check.h"

static const char *const names[] = {
	"_Z12parse_configPKc",
	"_ZN3foo3barEv",
	"_ZNSt6vectorIiSaIiEE9push_backERKi",
	"_ZNK3Map4findIiEEPKcRKT_",
	"_ZZ4mainENKUlvE_clEv",
	"_Z12parse_configPKc.cold",
	"_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
	"_ZN4core3fmt5write17h0123456789abcdefE",
};
#define NNAMES (sizeof names / sizeof names[0])

/* c++filt's spelling of name (-i: as sfb_demangle prints them). */
static int cxxfilt(const char *name, char *out, size_t size)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "c++filt -i '%s'", name);
	FILE *p = popen(cmd, "r");
	if (!p || !fgets(out, (int)size, p)) {
		if (p)
			pclose(p);
		return -1;
	}
	pclose(p);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

int main(void)
{
	char want[1024], got[1024];
	for (size_t i = 0; i < NNAMES; i++) {
		if (cxxfilt(names[i], want, sizeof want) != 0) {
			CHECK(0, "c++filt runs");
			CHECK_DONE();
		}
		int n = sframe_demangle(names[i], got, sizeof got);
		CHECK(n == (int)strlen(want) && strcmp(got, want) == 0,
		      "%s -> \"%s\" (c++filt: \"%s\")", names[i], got, want);
	}

	/* Exactly the size the name needs, then one byte less. */
	const char *name = "_ZNSt6vectorIiSaIiEE9push_backERKi";
	int need = sframe_demangle(name, got, sizeof got);
	char small[64];
	memset(small, 'x', sizeof small);
	CHECK(need > 0 && need < (int)sizeof small - 1 &&
	      sframe_demangle(name, small, (size_t)need + 1) == need && small[need] == '\0' &&
	      strcmp(small, got) == 0, "a buffer of length+1 bytes holds the name");
	memset(small, 'x', sizeof small);
	CHECK(sframe_demangle(name, small, (size_t)need) == -1 && small[0] == '\0' &&
	      small[need] == 'x', "one byte less: -1, \"\", nothing written past it");

	/* Names that are not mangled: the caller prints them as they are. */
	CHECK(sframe_demangle("main", got, sizeof got) == -1 && got[0] == '\0', "main: -1");
	CHECK(sframe_demangle("_Z", got, sizeof got) == -1, "_Z alone: -1");
	CHECK(sframe_demangle("_Zfoo bar", got, sizeof got) == -1, "bad grammar: -1");
	CHECK(sframe_demangle(NULL, got, sizeof got) == -1, "NULL name: -1");
	CHECK(sframe_demangle("_Z1fv", NULL, 16) == -1, "NULL buffer: -1");

	/* Too long: over 1024 bytes, as c++filt refuses. */
	static char lng[2100];
	strcpy(lng, "_Z2000");
	memset(lng + 6, 'a', 2000);
	strcpy(lng + 2006, "v");
	CHECK(sframe_demangle(lng, got, sizeof got) == -1, "a 2007-byte name: -1");

	errno = 1234;
	sframe_demangle("_Z1fv", got, sizeof got);
	int e1 = errno;
	errno = 4321;
	sframe_demangle("not mangled", got, sizeof got);
	CHECK(e1 == 1234 && errno == 4321, "errno kept");
	CHECK_DONE();
}
