/* The crash report (backtrace.h: sframe_write_crash_report): walk from the
 * crashing context, then symbolize and write each frame with its source
 * lines and inlined frames (format.c), recursions collapsed; why the walk stopped; the thread's name; the registers of
 * the context; the loaded objects with their build-ids.
 *
 * Runs in signal handlers, on a 64 KiB alternate stack (a stack
 * overflow's report): only async-signal-safe calls, every line built on
 * the stack and written with write(2); memory that may be corrupted
 * (the loader's list of objects) read through the checked accessor. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "api/api.h"
#include "arch/arch.h"
#include "backtrace.h"
#include "base/entry.h"
#include "base/memread.h"
#include "base/textbuf.h"
#include "objects/discover.h"
#include "objects/elf_phdrs.h"
#include "report/report.h"
#include "symbols/symbolize.h"
#include "walk/walk.h"

/* Frames walked at a time: the walk resumes from where a piece ends, so
 * that a stack overflow's tens of thousands of frames are reported down
 * to main in a fixed amount of stack.  MAX_FRAMES bounds the whole walk. */
#define PIECE 64
#define MAX_FRAMES (1 << 20)
/* Longest cycle of frames a recursion is recognised by (a calls b calls
 * a: 2), and the repeats shown one by one before they are collapsed. */
#define MAX_PERIOD 8
#define MIN_REPEATS 2
#define MAX_MODULES 512

/* ---- Frames, recursions collapsed ----------------------------------------
 * Frames stream in from the walk.  hist holds the last MAX_PERIOD PCs
 * printed or collapsed.  A frame equal to the one p frames before it
 * starts a run of period p; the run's frames wait in `held` until either
 * MIN_REPEATS whole cycles are seen (the run is then collapsed into one
 * line, counted as it goes on) or the run breaks (the held frames are
 * printed one by one). */
struct frame {
	uintptr_t pc;
	int exact;
};

struct printer {
	int fd;
	char *scratch;
	struct sfb_srcpos_cache *lines; /* NULL: no source lines */
	long index;               /* number of the next frame */
	struct frame hist[MAX_PERIOD];
	long nhist;               /* frames entered into hist, ever */
	int period;               /* of the run being held or collapsed; 0: none */
	struct frame held[MIN_REPEATS * MAX_PERIOD];
	int nheld;
	long run_first, run_len;  /* the collapsed run: first index, frames */
	int collapsing;
};

static struct frame hist_at(const struct printer *p, int back) /* back >= 1 */
{
	return p->hist[(p->nhist - back) % MAX_PERIOD];
}

static void hist_push(struct printer *p, struct frame f)
{
	p->hist[p->nhist % MAX_PERIOD] = f;
	p->nhist++;
}

static void print_one(struct printer *p, struct frame f)
{
	sfb_write_frame(p->fd, (int)p->index, f.pc, !f.exact, p->scratch);
	sfb_write_lines(p->fd, p->lines, f.pc, !f.exact);
	p->index++;
	hist_push(p, f);
}

/* "#5..#1021 repeat 1017 times: 0x... in f+0x2a (obj+0x1234)" for a
 * period of one frame; "#5..#1020 repeat 508 times: frames #3..#4" for a
 * longer one. */
static void print_run(struct printer *p)
{
	char *line = p->scratch + SFB_SYM_WORK_OFF, head[96];
	struct sfb_text h = { head, 0, sizeof head };
	long last = p->run_first + p->run_len - 1;
	struct frame f = hist_at(p, p->period); /* the cycle's first frame */
	sfb_put(&h, "#");
	sfb_put_dec(&h, p->run_first);
	sfb_put(&h, "..#");
	sfb_put_dec(&h, last);
	sfb_put(&h, " repeat ");
	sfb_put_dec(&h, p->run_len / p->period);
	sfb_put(&h, " times: ");
	head[h.len] = '\0';
	size_t n = 0;
	if (p->period == 1) {
		/* The frame line, its "#N " replaced by the head: the
		 * lookup uses the work area, so the line is built first. */
		n = sfb_format_frame(0, f.pc, !f.exact, line, SFB_SYM_LINE_CAP - sizeof head,
				     p->scratch);
		char *sp = memchr(line, ' ', n);
		size_t skip = sp ? (size_t)(sp + 1 - line) : 0;
		memmove(line + h.len, line + skip, n - skip);
		n = n - skip + h.len;
		memcpy(line, head, h.len);
	} else {
		struct sfb_text b = { line, 0, SFB_SYM_LINE_CAP - 1 };
		sfb_put(&b, head);
		sfb_put(&b, "frames #");
		sfb_put_dec(&b, p->run_first - p->period);
		sfb_put(&b, "..#");
		sfb_put_dec(&b, p->run_first - 1);
		n = b.len;
	}
	line[n++] = '\n';
	sfb_write_all(p->fd, line, n);
	p->index = last + 1;
}

/* Ends the run being held or collapsed: the collapsed part as one line,
 * a part cycle after it or a short run frame by frame. */
static void end_run(struct printer *p)
{
	if (p->collapsing) {
		long whole = p->run_len - p->run_len % p->period;
		long rest = p->run_len - whole;
		p->run_len = whole;
		print_run(p);
		/* The part cycle left over: the cycle's first frames. */
		struct frame part[MAX_PERIOD];
		for (long i = 0; i < rest; i++)
			part[i] = hist_at(p, (int)(p->period - i));
		for (long i = 0; i < rest; i++)
			print_one(p, part[i]);
	} else {
		int n = p->nheld;
		p->nheld = 0;
		for (int i = 0; i < n; i++)
			print_one(p, p->held[i]);
	}
	p->period = 0;
	p->collapsing = 0;
	p->nheld = 0;
}

/* The smallest period p such that f repeats the frame p back. */
static int period_of(const struct printer *p, struct frame f)
{
	for (int k = 1; k <= MAX_PERIOD && k <= p->nhist; k++)
		if (hist_at(p, k).pc == f.pc)
			return k;
	return 0;
}

static void add_frame(struct printer *p, struct frame f)
{
	if (p->period) {
		/* The frame the run predicts: p->period back, counting what
		 * is held or collapsed. */
		struct frame want = p->collapsing ?
			hist_at(p, p->period - (int)(p->run_len % p->period)) :
			(p->nheld < p->period ? hist_at(p, p->period - p->nheld)
					      : p->held[p->nheld - p->period]);
		if (want.pc == f.pc) {
			if (p->collapsing) {
				p->run_len++;
				return;
			}
			p->held[p->nheld++] = f;
			if (p->nheld == MIN_REPEATS * p->period) {
				/* Collapse: hist keeps the one cycle printed. */
				p->collapsing = 1;
				p->run_first = p->index;
				p->run_len = p->nheld;
				p->nheld = 0;
			}
			return;
		}
		end_run(p);
	}
	int k = period_of(p, f);
	if (k) {
		p->period = k;
		p->held[0] = f;
		p->nheld = 1;
		return;
	}
	print_one(p, f);
}

/* ---- What follows the frames --------------------------------------------- */

static void write_stop(int fd, const struct sframe_bt_status *st, char *line)
{
	const char *why = sframe_bt_stop_name(st->stop);
	struct sfb_text b = { line, 0, SFB_SYM_LINE_CAP - 1 };
	sfb_put(&b, "# stopped: ");
	sfb_put(&b, why ? why : "?");
	if (st->stop_pc) {
		sfb_put(&b, " at ");
		sfb_put_hex(&b, st->stop_pc);
	}
	b.p[b.len++] = '\n';
	sfb_write_all(fd, b.p, b.len);
}

/* The calling thread's name (prctl: one system call, no file). */
static void write_thread(int fd, char *line)
{
	char name[17] = { 0 };
	struct sfb_text b = { line, 0, SFB_SYM_LINE_CAP - 1 };
	if (prctl(PR_GET_NAME, (unsigned long)name, 0, 0, 0) != 0)
		name[0] = '\0';
	sfb_put(&b, "# thread: ");
	sfb_put(&b, name[0] ? name : "?");
	sfb_put(&b, " (tid ");
	sfb_put_dec(&b, (long)syscall(SYS_gettid));
	sfb_put(&b, ")\n");
	sfb_write_all(fd, b.p, b.len);
}

static void put_hex16(struct sfb_text *b, uint64_t v)
{
	char d[19];
	d[0] = '0';
	d[1] = 'x';
	for (int i = 0; i < 16; i++)
		d[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
	d[18] = '\0';
	sfb_put(b, d);
}

struct reg {
	const char *name;
	uint64_t value;
};

/* The general registers of the interrupted context, four a line. */
static void write_registers(int fd, const void *ucontext, char *line)
{
	const ucontext_t *uc = ucontext;
#if defined(__x86_64__)
	const greg_t *g = uc->uc_mcontext.gregs;
	const struct reg regs[] = {
		{ "rax", g[REG_RAX] }, { "rbx", g[REG_RBX] }, { "rcx", g[REG_RCX] },
		{ "rdx", g[REG_RDX] }, { "rsi", g[REG_RSI] }, { "rdi", g[REG_RDI] },
		{ "rbp", g[REG_RBP] }, { "rsp", g[REG_RSP] }, { "r8", g[REG_R8] },
		{ "r9", g[REG_R9] }, { "r10", g[REG_R10] }, { "r11", g[REG_R11] },
		{ "r12", g[REG_R12] }, { "r13", g[REG_R13] }, { "r14", g[REG_R14] },
		{ "r15", g[REG_R15] }, { "rip", g[REG_RIP] }, { "eflags", g[REG_EFL] },
	};
#elif defined(__aarch64__)
	const mcontext_t *m = &uc->uc_mcontext;
	struct reg regs[34];
	static const char names[31][4] = {
		"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
		"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20",
		"x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30",
	};
	for (int i = 0; i < 31; i++)
		regs[i] = (struct reg){ names[i], m->regs[i] };
	regs[31] = (struct reg){ "sp", m->sp };
	regs[32] = (struct reg){ "pc", m->pc };
	regs[33] = (struct reg){ "pstate", m->pstate };
#elif defined(__s390x__)
	const mcontext_t *m = &uc->uc_mcontext;
	struct reg regs[18];
	static const char names[16][4] = { "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7",
					   "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	for (int i = 0; i < 16; i++)
		regs[i] = (struct reg){ names[i], m->gregs[i] };
	regs[16] = (struct reg){ "psw.mask", m->psw.mask };
	regs[17] = (struct reg){ "psw.addr", m->psw.addr };
#else
	const struct reg regs[1] = { { NULL, 0 } };
	(void)uc;
	return;
#endif
	struct sfb_text b = { line, 0, SFB_SYM_LINE_CAP - 1 };
	sfb_put(&b, "# registers:\n");
	for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
		sfb_put(&b, i % 4 ? " " : "#  ");
		sfb_put(&b, regs[i].name);
		sfb_put(&b, " ");
		put_hex16(&b, regs[i].value);
		if (i % 4 == 3 || i + 1 == sizeof regs / sizeof regs[0])
			sfb_put(&b, "\n");
	}
	sfb_write_all(fd, b.p, b.len);
}

/* The loader's list of objects: glibc's _r_debug (weak: absent from C
 * libraries without it, and then no module list).  Its links are read
 * through the checked accessor, and an object is listed only when
 * discovery confirms it holds its own dynamic section. */
extern struct r_debug _r_debug __attribute__((weak));

static void write_module(int fd, const struct sfb_found *r, char *line)
{
	struct sfb_text b = { line, 0, SFB_SYM_LINE_CAP - 1 };
	uintptr_t start = (uintptr_t)r->dlfo_map_start, end = (uintptr_t)r->dlfo_map_end;
	const char *name = sfb_found_name(r);
	char exe[SFB_SYM_PATH_CAP];
	if (!name[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = '\0';
		name = exe;
	}
	sfb_put(&b, "#   ");
	sfb_put_hex(&b, start);
	sfb_put(&b, "-");
	sfb_put_hex(&b, end);
	sfb_put(&b, " ");
	sfb_put(&b, name[0] ? name : "?");
	unsigned n;
	uint16_t off;
	uint32_t len;
	const Elf64_Phdr *ph = sfb_loaded_phdrs(start, end, &n);
	if (ph && sfb_loaded_build_id(start, sfb_found_bias(r), ph, n, &off, &len) && len <= 64) {
		sfb_put(&b, " build-id ");
		const uint8_t *id = (const uint8_t *)(start + off);
		for (uint32_t i = 0; i < len; i++) {
			char x[3] = { "0123456789abcdef"[id[i] >> 4], "0123456789abcdef"[id[i] & 15], 0 };
			sfb_put(&b, x);
		}
	}
	b.p[b.len++] = '\n';
	sfb_write_all(fd, b.p, b.len);
}

static void write_modules(int fd, char *line)
{
	struct sfb_mem mem;
	uintptr_t map = 0;
	sfb_mem_init(&mem, (uintptr_t)&mem);
	sfb_write_all(fd, "# modules:\n", sizeof "# modules:\n" - 1);
	if (!&_r_debug ||
	    !sfb_mem_read(&mem, (uintptr_t)&_r_debug + offsetof(struct r_debug, r_map), &map))
		return;
	for (int i = 0; map && i < MAX_MODULES; i++) {
		uintptr_t ld, next;
		struct sfb_found r;
		if (!sfb_mem_read(&mem, map + offsetof(struct link_map, l_ld), &ld) ||
		    !sfb_mem_read(&mem, map + offsetof(struct link_map, l_next), &next))
			return;
		if (ld && sfb_discover((void *)ld, &r) == 0)
			write_module(fd, &r, line);
		map = next;
	}
}

/* ---- The report ---------------------------------------------------------- */

SFRAMEBT_API __attribute__((noinline)) int sframe_write_crash_report(const void *ucontext,
								     int fd)
{
	SFB_ENTRY;
	struct sframe_bt_frame frames[PIECE];
	struct sframe_bt_status st = { 0 };
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	struct printer p = { .fd = fd, .scratch = scratch, .lines = sfb_lines_begin() };
	char *line = scratch + SFB_SYM_WORK_OFF;
	long total = 0;
	if (!ucontext) {
		/* The walk starts here, in this function: the report starts
		 * at our caller. */
		int n = sframe_backtrace_ex(NULL, frames, PIECE, 0, &st);
		for (int i = 1; i < n; i++)
			add_frame(&p, (struct frame){ frames[i].pc, frames[i].exact });
		total = n > 0 ? n - 1 : 0;
	} else {
		struct sfb_regs r;
		bool exact = true;
		sfb_arch_from_ucontext(ucontext, &r);
		for (;;) {
			int n = sfb_walk(&r, exact, frames, NULL, PIECE, sfb_default_flags(), &st);
			for (int i = 0; i < n; i++)
				add_frame(&p, (struct frame){ frames[i].pc, frames[i].exact });
			total += n;
			if (st.stop != SFRAME_BT_STOP_BUFFER_FULL || total >= MAX_FRAMES)
				break;
			/* Resume at the frame the piece had no room for.  Its
			 * registers beyond SP and FP are the walker's to track:
			 * a saved set may be a copy on the walk's own stack. */
			r.all = NULL;
			exact = false;
		}
	}
	if (p.period)
		end_run(&p);
	sfb_lines_end(p.lines);
	write_stop(fd, &st, line);
	write_thread(fd, line);
	if (ucontext)
		write_registers(fd, ucontext, line);
	write_modules(fd, line);
	return (int)total;
}
