/* Reads names, one a line, and prints each demangled by sfb_demangle(),
 * or as it is when it is refused, as c++filt does.  With -u, each line
 * is followed by a tab and what the call used: nodes, substitutions,
 * parse depth, print depth, steps, parse steps. */
#include <stdio.h>
#include <string.h>

#include "symbols/demangle.h"

int main(int argc, char **argv)
{
	int usage = argc > 1 && strcmp(argv[1], "-u") == 0;
	static char line[1 << 16], out[1 << 16];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		struct sfb_demangle_usage u;
		int n = sfb_demangle_usage(line, out, sizeof out, &u);
		fputs(n >= 0 ? out : line, stdout);
		if (usage)
			printf("\t%u %u %u %u %u %u", u.nodes, u.subs, u.parse_depth, u.print_depth,
			       u.steps, u.parse_steps);
		putchar('\n');
	}
	return 0;
}
