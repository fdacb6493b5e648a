/* addr2line -i -f -a through sframe_symbolize() with
 * SFRAME_SYMBOLIZE_LINES_SCRATCH: the driver t_symbolize_lines.sh
 * compares with binutils' addr2line and llvm-symbolizer.
 *
 *   symlines_driver [-n] OBJECT < ADDRS
 *
 * OBJECT is dlopen()ed (libc: already loaded; "-": the driver itself,
 * when linked with the code to look up); each address, in
 * hexadecimal one a line, is an address of OBJECT's file, symbolized at
 * its load bias plus it, in a SIGUSR1 handler on a 64 KiB alternate
 * stack filled with a pattern.  Output per address: "0x%016x", then a
 * function line and a "file:line" line per frame, innermost first: the
 * inlined[] entries, then sym.name at sym.file:sym.line ("??" and "??:0"
 * when unknown), as addr2line prints them.  At the end, on stderr, the
 * deepest use of the alternate stack and the number of addresses with a
 * line.  -n: a scratch of SFRAME_SYMBOLIZE_SCRATCH bytes only (names, no
 * source positions). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backtrace.h"

#define ALT_STACK (64 * 1024)
#define STACK_FILL 0xa5

static char scratch[SFRAME_SYMBOLIZE_LINES_SCRATCH] __attribute__((aligned(16)));
static struct sframe_symbol sym;
static uintptr_t cur_pc;
static size_t scratch_size = sizeof scratch;

static void on_usr1(int sig)
{
	(void)sig;
	sframe_symbolize(cur_pc, &sym, scratch, scratch_size);
}

int main(int argc, char **argv)
{
	int a0 = 1;
	if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		scratch_size = SFRAME_SYMBOLIZE_SCRATCH;
		a0 = 2;
	}
	if (argc != a0 + 1) {
		fprintf(stderr, "usage: symlines_driver [-n] OBJECT < ADDRS\n");
		return 2;
	}
	void *h = dlopen(strcmp(argv[a0], "-") == 0 ? NULL : argv[a0], RTLD_NOW);
	struct link_map *lm = NULL;
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm) {
		fprintf(stderr, "%s: %s\n", argv[a0], dlerror());
		return 2;
	}
	static unsigned char alt[ALT_STACK];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	memset(alt, STACK_FILL, sizeof alt);
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL)) {
		perror("sigaltstack");
		return 2;
	}
	char line[256];
	long located = 0;
	while (fgets(line, sizeof line, stdin)) {
		uintptr_t a = strtoull(line, NULL, 16);
		cur_pc = lm->l_addr + a;
		raise(SIGUSR1);
		printf("0x%016lx\n", (unsigned long)a);
		for (int i = 0; i < sym.inlined_count; i++)
			printf("%s\n%s:%u\n", sym.inlined[i].name[0] ? sym.inlined[i].name : "??",
			       sym.inlined[i].file[0] ? sym.inlined[i].file : "??", sym.inlined[i].line);
		printf("%s\n%s:%u\n", sym.name[0] ? sym.name : "??", sym.file[0] ? sym.file : "??",
		       sym.line);
		located += sym.file[0] != 0;
	}
	size_t used = 0;
	while (used < sizeof alt && alt[used] == STACK_FILL)
		used++;
	fprintf(stderr, "alternate stack used: %zu bytes; %ld addresses with a line\n",
		sizeof alt - used, located);
	return 0;
}
