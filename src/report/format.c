/* Frame lines: "#N 0xPC in NAME+0xOFF (OBJECT+0xOFF)", NAME demangled.
 * A demangled C++ name holds spaces and parentheses; the line stays
 * parseable from its ends: the object part is the last " (" to the
 * closing ")", and the name is what lies between " in " and the last
 * "+0x" before it.  Async-signal-safe, as the symbolizer is. */
#include <stdatomic.h>
#include <stdint.h>

#include "backtrace.h"
#include "base/entry.h"
#include "base/textbuf.h"
#include "report/report.h"
#include "symbols/demangle.h"
#include "symbols/srcpos.h"
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

/* ---- Source lines ------------------------------------------------------------
 * The lines reader's state (SFB_LINES_SCRATCH a file) and its result do
 * not fit on the crash handler's 64 KiB alternate stack beside the
 * report, so one static buffer serves: a report takes it for its whole
 * length (sfb_lines_begin()), which lets the files opened for one frame
 * serve the next ones (symbols/srcpos.h).  lines_busy marks its owner.
 * The crash handler has one reporter at a time, but
 * sframe_write_crash_report() may also run on another thread, or in a
 * handler that interrupted a report: whoever finds the buffer taken
 * prints no lines rather than wait.  Nothing here allocates or locks. */
static struct {
	struct sfb_srcpos_cache cache;
	uint64_t scratch[SFB_SRCPOS_SLOTS][SFB_SRCPOS_FAST / sizeof(uint64_t)];
	char name[SFB_SYM_NAME_CAP];
	char line[SFB_SYM_NAME_CAP + SFB_LINES_FILE_CAP + 64];
} lines_buf;
static atomic_flag lines_busy = ATOMIC_FLAG_INIT;

struct sfb_srcpos_cache *sfb_lines_begin(void)
{
	if (atomic_flag_test_and_set_explicit(&lines_busy, memory_order_acquire))
		return NULL;
	sfb_srcpos_cache_init(&lines_buf.cache, lines_buf.scratch[0], sizeof lines_buf.scratch[0]);
	return &lines_buf.cache;
}

void sfb_lines_end(struct sfb_srcpos_cache *c)
{
	if (!c)
		return;
	sfb_srcpos_cache_close(c);
	atomic_flag_clear_explicit(&lines_busy, memory_order_release);
}

static void put_location(struct sfb_text *b, const struct sfb_line_frame *f)
{
	sfb_put(b, f->file[0] ? f->file : "??");
	sfb_put(b, ":");
	sfb_put_dec(b, (long)f->line);
}

void sfb_write_lines(int fd, struct sfb_srcpos_cache *c, uintptr_t pc, int return_address)
{
	if (!c)
		return;
	uintptr_t at = return_address && pc ? pc - 1 : pc;
	if (sfb_srcpos_cache_lookup(c, at) != 0)
		return;
	const struct sfb_line_result *r = &c->res;
	for (int i = 0; i < r->n; i++) {
		const struct sfb_line_frame *f = &r->frame[i];
		struct sfb_text b = { lines_buf.line, 0, sizeof lines_buf.line - 1 };
		if (i + 1 < r->n) {
			const char *name = f->function[0] ? f->function : "??";
			if (sfb_demangle(name, lines_buf.name, sizeof lines_buf.name) > 0)
				name = lines_buf.name;
			sfb_put(&b, "    inlined: ");
			sfb_put(&b, name);
			sfb_put(&b, " at ");
		} else {
			sfb_put(&b, "    at ");
		}
		put_location(&b, f);
		b.p[b.len++] = '\n';
		sfb_write_all(fd, b.p, b.len);
	}
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
