/* addr2line -i -f -a, through sfb_lines_lookup(): the driver t_lines.sh
 * compares with binutils' addr2line and llvm-symbolizer.
 *
 *   lines_driver [-s] [-v] [-k] [-S SCRATCH] FILE [ADDR...]
 *
 * Addresses in hexadecimal, from the arguments or, when there are none,
 * one a line from stdin.  For each: "0x%016x", then a function line and a
 * "file:line" line per frame, innermost first ("??" and "??:0" when
 * unknown), as addr2line prints them.  -s: each lookup runs in a SIGUSR1
 * handler on a 64 KiB alternate stack (the crash handler's), and the
 * deepest stack use is printed at the end; -v: the lookup's costs and
 * errors on stderr; -S: the scratch size (default SFB_LINES_SCRATCH); -k:
 * one sfb_lines_open() for all the addresses, a sfb_lines_find() each
 * (the state kept from one to the next, as the crash report keeps it). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/lines.h"

#define ALT_STACK (64 * 1024)
#define STACK_FILL 0xa5

static int fd;
static struct sfb_elf_sections secs;
static uint64_t scratch_store[(512 * 1024) / 8];
static size_t scratch_size = SFB_LINES_SCRATCH;
static struct sfb_line_result res;
static uint64_t cur_addr;
static int cur_rc;

static int keep_state, opened;

static void lookup(void)
{
	if (!keep_state) {
		cur_rc = sfb_lines_lookup(fd, &secs, cur_addr, &res, scratch_store, scratch_size);
		return;
	}
	if (!opened) {
		cur_rc = sfb_lines_open(fd, &secs, scratch_store, scratch_size);
		if (cur_rc)
			return;
		opened = 1;
	}
	cur_rc = sfb_lines_find(scratch_store, cur_addr, &res);
}

static void on_usr1(int sig)
{
	(void)sig;
	lookup();
}

int main(int argc, char **argv)
{
	int in_signal = 0, verbose = 0, i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-s"))
			in_signal = 1;
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "-k"))
			keep_state = 1;
		else if (!strcmp(argv[i], "-S") && i + 1 < argc)
			scratch_size = strtoul(argv[++i], NULL, 0);
		else
			break;
	}
	if (i >= argc || scratch_size > sizeof scratch_store) {
		fprintf(stderr, "usage: lines_driver [-s] [-v] [-k] [-S SCRATCH] FILE [ADDR...]\n");
		return 2;
	}
	fd = open(argv[i], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[i]);
		return 2;
	}
	int err = sfb_dsec_find(fd, &secs, scratch_store, sizeof scratch_store);
	if (err) {
		fprintf(stderr, "%s: %s\n", argv[i], sfb_dsec_err_name(err));
		return 2;
	}
	static uint8_t alt[ALT_STACK];
	if (in_signal) {
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
	}
	char line[256];
	int from_args = i + 1 < argc, a = i + 1;
	for (;;) {
		const char *arg;
		if (from_args) {
			if (a >= argc)
				break;
			arg = argv[a++];
		} else {
			if (!fgets(line, sizeof line, stdin))
				break;
			arg = line;
		}
		cur_addr = strtoull(arg, NULL, 16);
		if (in_signal)
			raise(SIGUSR1);
		else
			lookup();
		printf("0x%016" PRIx64 "\n", cur_addr);
		if (cur_rc || res.n == 0) {
			printf("??\n??:0\n");
		} else {
			for (int f = 0; f < res.n; f++)
				printf("%s\n%s:%u\n", res.frame[f].function[0] ? res.frame[f].function : "??",
				       res.frame[f].file[0] ? res.frame[f].file : "??", res.frame[f].line);
		}
		if (verbose)
			fprintf(stderr,
				"%#" PRIx64 ": %s inline=%s n=%d units=%u dies=%u abbrevs=%u program=%" PRIu64
				" inflated=%" PRIu64 " restarts=%u loads=%u aranges=%u depth=%u attrs=%u"
				" ranges=%u hops=%u files=%u\n",
				cur_addr, sfb_lines_err_name(cur_rc), sfb_lines_err_name(res.inline_err),
				res.n, res.units, res.dies, res.abbrevs, res.program_bytes, res.inflated,
				res.restarts, res.loads, res.aranges, res.depth, res.attrs, res.ranges,
				res.hops, res.files);
	}
	if (in_signal) {
		size_t used = 0;
		while (used < sizeof alt && alt[used] == STACK_FILL)
			used++;
		fprintf(stderr, "alternate stack used: %zu bytes\n", sizeof alt - used);
	}
	return 0;
}
