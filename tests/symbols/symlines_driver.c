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
 * source positions).  -s: through one symbolizer (sframe_symbolizer_init(),
 * in memory at an odd address), not sframe_symbolize().  -s -R OTHER: the
 * addresses once in OBJECT, then OBJECT dlclose()d and OTHER dlopen()ed
 * (at the same place, if the loader puts it there: "same place" or
 * "other place" on stderr), and the addresses again in OTHER, through the
 * same symbolizer. */
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

static struct sframe_symbolizer *symbolizer;
static char symbolizer_mem[SFRAME_SYMBOLIZER_SIZE + 1] __attribute__((aligned(16)));

static void on_usr1(int sig)
{
	(void)sig;
	if (symbolizer)
		sframe_symbolizer_lookup(symbolizer, cur_pc, &sym);
	else
		sframe_symbolize(cur_pc, &sym, scratch, scratch_size);
}

/* Each address of ADDRS (n of them) in the object loaded at bias. */
static long symbolize_all(uintptr_t bias, const uintptr_t *addrs, size_t n)
{
	long located = 0;
	for (size_t k = 0; k < n; k++) {
		uintptr_t a = addrs[k];
		cur_pc = bias + a;
		raise(SIGUSR1);
		printf("0x%016lx\n", (unsigned long)a);
		for (int i = 0; i < sym.inlined_count; i++)
			printf("%s\n%s:%u\n", sym.inlined[i].name[0] ? sym.inlined[i].name : "??",
			       sym.inlined[i].file[0] ? sym.inlined[i].file : "??", sym.inlined[i].line);
		printf("%s\n%s:%u\n", sym.name[0] ? sym.name : "??", sym.file[0] ? sym.file : "??",
		       sym.line);
		located += sym.file[0] != 0;
	}
	return located;
}

static struct link_map *load(const char *path, void **h)
{
	struct link_map *lm = NULL;
	*h = dlopen(strcmp(path, "-") == 0 ? NULL : path, RTLD_NOW);
	if (!*h || dlinfo(*h, RTLD_DI_LINKMAP, &lm) || !lm) {
		fprintf(stderr, "%s: %s\n", path, dlerror());
		exit(2);
	}
	return lm;
}

int main(int argc, char **argv)
{
	int a0 = 1;
	const char *other = NULL;
	for (; a0 < argc && argv[a0][0] == '-' && argv[a0][1]; a0++) {
		if (strcmp(argv[a0], "-n") == 0) {
			scratch_size = SFRAME_SYMBOLIZE_SCRATCH;
		} else if (strcmp(argv[a0], "-s") == 0) {
			symbolizer = sframe_symbolizer_init(symbolizer_mem + 1, SFRAME_SYMBOLIZER_SIZE);
			if (!symbolizer || sframe_symbolizer_init(symbolizer_mem + 1,
								  SFRAME_SYMBOLIZER_SIZE - 1)) {
				fprintf(stderr, "sframe_symbolizer_init: refused its size, or took less\n");
				return 2;
			}
		} else if (strcmp(argv[a0], "-R") == 0 && a0 + 1 < argc) {
			other = argv[++a0];
		} else {
			break;
		}
	}
	if (argc != a0 + 1 || (other && !symbolizer)) {
		fprintf(stderr, "usage: symlines_driver [-n | -s [-R OTHER]] OBJECT < ADDRS\n");
		return 2;
	}
	void *h;
	struct link_map *lm = load(argv[a0], &h);
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
	static uintptr_t addrs[1 << 16];
	size_t n = 0;
	char line[256];
	while (n < sizeof addrs / sizeof addrs[0] && fgets(line, sizeof line, stdin))
		addrs[n++] = strtoull(line, NULL, 16);
	long located = symbolize_all(lm->l_addr, addrs, n);
	if (other) {
		uintptr_t was = lm->l_addr;
		dlclose(h);
		lm = load(other, &h);
		fprintf(stderr, "%s\n", lm->l_addr == was ? "same place" : "other place");
		located += symbolize_all(lm->l_addr, addrs, n);
	}
	if (symbolizer)
		sframe_symbolizer_close(symbolizer);
	size_t used = 0;
	while (used < sizeof alt && alt[used] == STACK_FILL)
		used++;
	fprintf(stderr, "alternate stack used: %zu bytes; %ld addresses with a line\n",
		sizeof alt - used, located);
	return 0;
}
