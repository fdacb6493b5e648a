/* The public demangler, sframe_demangle(): names against binutils'
 * c++filt (the ground truth), a buffer one byte too small and one of
 * exactly the right size, names that are not mangled, NULL arguments,
 * and errno kept.  And sframe_symbolize()'s two spellings: a mangled
 * name (a JIT's, from the perf map this test writes) comes back
 * demangled as c++filt prints it, the symbol in .mangled; a C name is
 * both. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
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

	static char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct sframe_symbol sym;
	CHECK(sframe_symbolize((uintptr_t)main, &sym, scratch, sizeof scratch) == 1 &&
	      strcmp(sym.name, "main") == 0 && sym.mangled == sym.name,
	      "a C name: name and mangled the same string (\"%s\")", sym.name);

	char map[64], line[160];
	snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
	void *code = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* A map an earlier process of this PID left is stale: ours replaces it. */
	unlink(map);
	int fd = open(map, O_WRONLY | O_CREAT | O_EXCL, 0600);
	snprintf(line, sizeof line, "%lx 100 %s\n", (unsigned long)(uintptr_t)code, names[2]);
	int wrote = fd >= 0 && write(fd, line, strlen(line)) == (ssize_t)strlen(line);
	if (fd >= 0)
		close(fd);
	cxxfilt(names[2], want, sizeof want);
	int found = wrote && sframe_symbolize((uintptr_t)code + 0x10, &sym, scratch, sizeof scratch);
	unlink(map);
	CHECK(found && strcmp(sym.name, want) == 0 && strcmp(sym.mangled, names[2]) == 0 &&
	      sym.name_offset == 0x10,
	      "a JIT's mangled name: \"%s\" (c++filt: \"%s\"), mangled \"%s\"",
	      found ? sym.name : "", want, found ? sym.mangled : "");
	CHECK_DONE();
}
