/* Frame lines: "#N 0xPC in NAME+0xOFF (OBJECT+0xOFF)", NAME demangled.
 * A demangled C++ name holds spaces and parentheses; the line stays
 * parseable from its ends: the object part is the last " (" to the
 * closing ")", and the name is what lies between " in " and the last
 * "+0x" before it.  Async-signal-safe, as the symbolizer is. */
#include <stdint.h>

#include "backtrace.h"
#include "base/entry.h"
#include "base/textbuf.h"
#include "report/report.h"
#include "symbols/symbolize.h"

size_t sfb_format_frame(int index, uintptr_t pc, int return_address, char *line,
			size_t cap, char *scratch)
{
	struct sframe_symbol s;
	struct sfb_text b = { line, 0, cap };
	sfb_symbolize(pc, return_address, &s, scratch, SFRAME_SYMBOLIZE_SCRATCH);
	sfb_put(&b, "#");
	sfb_put_dec(&b, index);
	sfb_put(&b, " ");
	sfb_put_hex(&b, pc);
	sfb_put(&b, " in ");
	if (s.name[0]) {
		sfb_put(&b, s.name);
		sfb_put(&b, "+");
		sfb_put_hex(&b, s.name_offset);
	} else {
		sfb_put(&b, "??");
	}
	sfb_put(&b, " (");
	if (s.object[0]) {
		sfb_put(&b, s.object);
		sfb_put(&b, "+");
		sfb_put_hex(&b, s.object_offset);
	} else {
		sfb_put(&b, "??");
	}
	sfb_put(&b, ")");
	if (cap)
		line[b.len] = '\0';
	return b.len;
}

void sfb_write_frame(int fd, int index, uintptr_t pc, int return_address, char *scratch)
{
	char *line = scratch + SFB_SYM_WORK_OFF;
	size_t n = sfb_format_frame(index, pc, return_address, line, SFB_SYM_LINE_CAP - 1,
				    scratch);
	line[n++] = '\n';
	sfb_write_all(fd, line, n);
}

SFRAMEBT_API int sframe_format_frame(int index, uintptr_t pc, int return_address,
				     char *line, size_t line_size)
{
	SFB_ENTRY;
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	return line ? (int)sfb_format_frame(index, pc, return_address, line, line_size,
					    scratch) : 0;
}

SFRAMEBT_API void sframe_backtrace_symbols_fd(void *const *buf, int n, int fd)
{
	SFB_ENTRY;
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	for (int i = 0; buf && i < n; i++)
		sfb_write_frame(fd, i, (uintptr_t)buf[i], i > 0, scratch);
}
