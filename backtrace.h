/* sframebt: fast, async-signal-safe stack traces from SFrame (.sframe),
 * and from DWARF CFI (.eh_frame) wherever no SFrame row covers a PC.
 *
 * Installed as <sframebt/backtrace.h> (GCC's libbacktrace installs a
 * <backtrace.h> of its own; the two coexist).  Link with -lsframebt, or use
 * `pkg-config --cflags --libs sframebt`.
 *
 * Quick use:
 *
 *     #include <sframebt/backtrace.h>
 *
 *     void *pcs[64];
 *     int n = sframe_backtrace(pcs, 64);      // like glibc backtrace()
 *
 *     static void on_prof(int sig, siginfo_t *si, void *uc) {
 *         void *pcs[64];
 *         int n = sframe_backtrace_ucontext(uc, pcs, 64);   // signal-safe
 *         ...
 *     }
 *
 *     int main(void) {
 *         sframe_install_crash_handler(2);     // crashes reported on stderr
 *         ...
 *     }
 *
 * Async-signal-safety: every function in this header is async-signal-safe
 * (takes no lock, calls no malloc, no stdio, touches no lazily allocated
 * TLS, preserves errno) EXCEPT sframe_backtrace_warmup(),
 * sframe_backtrace_keep_loaded(), sframe_install_crash_handler() and
 * sframe_crash_handler_thread_init(), which must be called from normal
 * context.  No walk calls dl_iterate_phdr(), in any context (see
 * docs/DESIGN.md, Discovery).
 */
#ifndef SFRAMEBT_BACKTRACE_H
#define SFRAMEBT_BACKTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SFRAMEBT_API __attribute__((visibility("default")))
#else
#define SFRAMEBT_API
#endif

/* ---- Backtraces ------------------------------------------------------- */

/* Like glibc backtrace(): stores up to size return addresses, starting with
 * the return address into the function that called sframe_backtrace(), and
 * returns how many were stored.  Never blocks, never allocates. */
SFRAMEBT_API int sframe_backtrace(void **buf, int size);

/* From an SA_SIGINFO handler's third argument (a ucontext_t *): buf[0] is
 * the interrupted PC, followed by return addresses.  Returns the number
 * stored (0 if ucontext is NULL or its PC is 0). */
SFRAMEBT_API int sframe_backtrace_ucontext(const void *ucontext, void **buf,
					   int size);

/* This header compiles as C89, C++98 and every later standard
 * (tests/tools/t_header.sh): no comma after an enum's last value. */

/* Why a walk stopped. */
enum sframe_bt_stop {
	SFRAME_BT_STOP_NONE = 0,          /* (not stopped: internal) */
	SFRAME_BT_STOP_OUTERMOST = 1,     /* reached the outermost frame (RA undefined, a return address of 0,
					     or where a fiber library makes a fiber's function return to,
					     no call before it: makecontext()'s __start_context,
					     boost.context's exit; the last frame) */
	SFRAME_BT_STOP_BUFFER_FULL = 2,   /* size frames were stored */
	SFRAME_BT_STOP_NO_OBJECT = 3,     /* PC is in no loaded object */
	SFRAME_BT_STOP_NO_UNWIND_INFO = 4,/* no SFrame row or CFI covers PC, and no fallback applies */
	SFRAME_BT_STOP_BAD_CFA = 5,       /* computed CFA below SP, misaligned or implausibly far */
	SFRAME_BT_STOP_UNREADABLE = 6,    /* a stack slot could not be read */
	SFRAME_BT_STOP_BAD_RA = 7,        /* return address not just after a call instruction */
	SFRAME_BT_STOP_UNSAFE_RULE = 8,   /* rule needs a register known only in the topmost frame */
	SFRAME_BT_STOP_BAD_CONTEXT = 9,   /* NULL or unusable ucontext */
	SFRAME_BT_STOP_BAD_SECTION = 10,  /* the object's .sframe failed validation */
	SFRAME_BT_STOP_CACHE_FULL = 11,   /* object could not be cached (table full) */
	SFRAME_BT_STOP_BAD_EH_FRAME = 12, /* the object's .eh_frame for PC is malformed, or uses CFI sframebt refuses */
	SFRAME_BT_STOP_EH_FRAME_UNINDEXED = 13 /* PC may lie in .eh_frame without a search table, which sframebt could not index (yet, or whole) */
};

/* Where a frame's PC came from. */
enum sframe_bt_source {
	SFRAME_BT_FROM_CONTEXT = 0,       /* frame 0: the start PC (ucontext or caller) */
	SFRAME_BT_FROM_SFRAME = 1,        /* unwound with an SFrame row */
	SFRAME_BT_FROM_FRAME_POINTER = 2, /* unwound with the frame-pointer rule */
	SFRAME_BT_FROM_SIGNAL_FRAME = 3,  /* read from a kernel signal frame (sigreturn) */
	SFRAME_BT_FROM_LINK_REGISTER = 4, /* topmost leaf: RA still in a register */
	SFRAME_BT_FROM_EH_FRAME = 5       /* unwound with a DWARF CFI row from .eh_frame */
};

struct sframe_bt_frame {
	uintptr_t pc;       /* return address (or exact PC, see below) */
	uintptr_t cfa;      /* the frame's CFA, 0 when unknown */
	uint8_t source;     /* enum sframe_bt_source: how this PC was found */
	uint8_t exact;      /* 1: pc is the exact PC (frame 0, or right after a
			       signal frame); 0: a return address, look up pc-1 */
	uint8_t reserved[6];
};

struct sframe_bt_status {
	int stop;           /* enum sframe_bt_stop */
	uintptr_t stop_pc;  /* PC at which the walk stopped (0 if none) */
	int frames_sframe;  /* frames unwound through SFrame rows */
	int frames_fp;      /* frames unwound through the frame-pointer rule */
	int frames_signal;  /* signal frames crossed */
	int frames_eh_frame;/* frames unwound through .eh_frame CFI rows */
};

/* Flags for sframe_backtrace_ex(). */
#define SFRAME_BT_SKIP_SELF  0x1 /* ucontext == NULL: start at the caller of
				    sframe_backtrace_ex (default: yes, always) */
#define SFRAME_BT_FP_FALLBACK_ANY 0x2 /* allow a validated frame-pointer step
				    in objects that carry no .sframe at all,
				    and in code in no object and not
				    registered (a JIT that keeps frame
				    pointers: V8) (default: off; see docs/DESIGN.md,
				    Fallback to frame pointers) */
#define SFRAME_BT_NO_EH_FRAME 0x4 /* SFrame only: never unwind with .eh_frame
				    CFI where no SFrame row covers a PC
				    (default: .eh_frame is used) */

/* The full walk.  ucontext: an SA_SIGINFO ucontext, or NULL to start at the
 * caller.  Fills up to size frames and *status (may be NULL); returns the
 * number of frames stored.  Async-signal-safe. */
SFRAMEBT_API int sframe_backtrace_ex(const void *ucontext,
				     struct sframe_bt_frame *frames, int size,
				     unsigned flags,
				     struct sframe_bt_status *status);

/* Human-readable name of a stop reason ("outermost", "buffer-full", ...). */
SFRAMEBT_API const char *sframe_bt_stop_name(int stop);

/* Optional: discover and validate every loaded object now, from normal
 * context, so that the first backtrace pays nothing.  Never needed for
 * correctness; where glibc has no _dl_find_object() (before 2.35, musl),
 * it also lets walks see objects dlopen()ed since the last call.  Returns
 * the number of objects with SFrame data.  NOT async-signal-safe (calls
 * dl_iterate_phdr). */
SFRAMEBT_API int sframe_backtrace_warmup(void);

/* Optional, for profilers: keep the object holding addr loaded for the
 * rest of the process, so that walks through it skip the check that it
 * was not unloaded.  Each walk confirms every object it enters, other than
 * the main program, with glibc's _dl_find_object(), because dlclose() may
 * have removed it since sframebt described it; in a SIGPROF sample, with
 * glibc's tables gone cold, that check is a good part of the sample's
 * cost (docs/SPEED.md).  This asks glibc
 * never to unload the object (dlopen() with RTLD_NOLOAD | RTLD_NODELETE:
 * a later dlclose() leaves it mapped, its destructors do not run until
 * exit, and its static data is not reset by a later dlopen()), so its
 * description is trusted for good.  For objects a program never unloads
 * anyway: its own libraries, a plugin loaded for good.
 *
 *     void *h = dlopen("libplugin.so", RTLD_NOW);
 *     sframe_backtrace_keep_loaded(dlsym(h, "plugin_main"));
 *
 * Returns 0 (also for the main program, libc and the dynamic linker,
 * which stay anyway and are kept without asking), or -1: addr is in no
 * object, the object is not in the caller's link-map namespace, or 15
 * objects are already kept.  NOT async-signal-safe (calls dlopen());
 * the object must not be being unloaded during the call. */
SFRAMEBT_API int sframe_backtrace_keep_loaded(const void *addr);

/* Process-wide default flags OR-ed into every walk (e.g.
 * SFRAME_BT_FP_FALLBACK_ANY).  Async-signal-safe (an atomic store). */
SFRAMEBT_API void sframe_backtrace_set_default_flags(unsigned flags);

/* Optional, for fiber and coroutine libraries: the calling thread runs on
 * the stack [lo, lo + size) from now on (a fiber's), or, with size 0, on
 * its own stack again.  A walk on a stack other than the thread's own
 * checks each page of it it reads with a system call (about 90 ns), once
 * a walk, since the stack may have been unmapped since the last; on the
 * stack named here it reads without checking, as on the thread's own.
 * Call it at every switch, before or after the switch itself; the range
 * must stay mapped and readable until the next call on this thread:
 * never unmap a stack that is still named.  A signal handler or a walk
 * between the call and the switch is safe either way.  Async-signal-safe
 * (two stores to initial-exec TLS). */
SFRAMEBT_API void sframe_backtrace_set_stack(const void *lo, size_t size);

/* ---- Symbolization (async-signal-safe) -------------------------------- */

/* A function inlined at a PC (struct sframe_symbol's inlined[]), with the
 * PC's source position in it. */
#define SFRAME_MAX_INLINED 8
struct sframe_inlined {
	const char *name;  /* the inlined function, demangled ("" if unknown) */
	const char *file;  /* source file of the position in it ("" if unknown) */
	unsigned line;     /* 0 if unknown */
	unsigned column;   /* 0 if unknown */
};

/* What is known about one PC.  Strings point into the caller's buffer given
 * to sframe_symbolize(), or are "" when unknown. */
struct sframe_symbol {
	const char *object;      /* path of the object file ("" if none) */
	uintptr_t object_base;   /* load bias of the object */
	uintptr_t object_offset; /* pc - load bias */
	const char *name;        /* function, demangled ("" if none found) */
	uintptr_t name_offset;   /* pc - symbol start */
	const char *mangled;     /* the symbol as its table spells it: the
				    same string as name when it is not
				    mangled or cannot be demangled */
	/* Source position, from DWARF (scratch of at least
	 * SFRAME_SYMBOLIZE_LINES_SCRATCH bytes; else ""/0): */
	const char *file;      /* source file of pc's position in `name` ("" if unknown) */
	unsigned line;         /* 0 if unknown */
	unsigned column;       /* 0 if unknown */
	int inlined_count;     /* entries of inlined[] used */
	struct sframe_inlined inlined[SFRAME_MAX_INLINED]; /* functions inlined at pc,
				    innermost first, each with pc's position in
				    it; `name`/file/line is the function they
				    were inlined into */
};

/* Resolve pc (looked up as given: pass pc-1 for return addresses) using the
 * object's in-memory .dynsym and, when readable, the .symtab of its file,
 * or, when the file has none (a stripped library such as a distribution's
 * libc), that of its detached debug file: DIR/.build-id/xx/yyyy.debug for
 * build-id xxyyyy, DIR being $SFRAME_BT_DEBUG_DIR (read once, when the
 * library loads) or /usr/lib/debug, used only if its build-id note
 * matches; else the file the object's .gnu_debuglink names, looked for
 * as GDB does (the object's directory, its .debug/, DIR followed by the
 * object's directory), used only if its CRC-32 is the link's (a file
 * over 256 MiB is not read).  A symbol's size bounds it, and one without a size ends where
 * the next symbol starts: a PC that no symbol covers (past a function's
 * end) gets no name.  A PC in no loaded object (JIT code) is named by
 * its registration (sframe_jit_register(): object "[jit]"), else from
 * /tmp/perf-PID.map, the file JIT compilers write for perf, if it is a
 * regular file of this user; the object is then that path.  A C++ or
 * Rust name is demangled as sframe_demangle() does (name), its symbol
 * kept in mangled.  Files are read with open/pread into scratch.  No malloc, no
 * lock, no prior initialisation.  scratch must be at least SFRAME_SYMBOLIZE_SCRATCH bytes.
 *
 * With at least SFRAME_SYMBOLIZE_LINES_SCRATCH bytes of scratch it also
 * gives pc's source position, as `addr2line -i -f` does, from the
 * .debug_line and .debug_info (DWARF 4 and 5, zlib-compressed or not) of
 * the object's file or of its debug file: the functions inlined
 * at pc in inlined[], innermost first, each with pc's file:line in it,
 * and in file/line/column the position in the function they were all
 * inlined into (the one `name` names), i.e. of the call to inlined[last]
 * (or of pc itself when nothing is inlined there).  Beyond
 * SFRAME_MAX_INLINED inlined levels the innermost are kept (file/line is
 * still the position in `name`, at the call to the outermost level).  An object
 * without DWARF leaves them ""/0.  This reads the debug sections with
 * pread (decompressing a compressed one up to what it reads), so it costs
 * from microseconds to tens of milliseconds a PC (the scratch serves as
 * read windows and decompressors: a larger one reads the same, faster);
 * it uses about 10 KiB of
 * stack, and the demangler's (under 16 KiB) for a C++ or Rust name.
 *
 * Returns 1 if a name was found, 0 if only the object (or nothing) is
 * known; *out is filled either way. */
#define SFRAME_SYMBOLIZE_SCRATCH 8192
#define SFRAME_SYMBOLIZE_LINES_SCRATCH (192 * 1024)
SFRAMEBT_API int sframe_symbolize(uintptr_t pc, struct sframe_symbol *out,
				  char *scratch, size_t scratch_size);

/* Many PCs: sframe_symbolize() with source positions, for profilers and
 * tools that symbolize thousands of PCs.  sframe_symbolize() opens and
 * reads an object's debug file anew for each PC (up to tens of
 * milliseconds for a PC of a compressed libc debug file); a symbolizer
 * keeps the files of the last 3 objects it served open, with what it
 * has read and decompressed of their DWARF and more room to keep it
 * in, so that the next PCs of the same objects cost less: in libc's
 * compressed debug file, ascending PCs about a seventh of what
 * sframe_symbolize() costs them (docs/SPEED.md).  A PC's object is served from a kept file only while
 * the object loaded at that place has the ELF header and build-id it
 * had when the file was opened: a library unloaded and another loaded
 * in its place gets its own file.
 *
 * sframe_symbolizer_init() makes one in mem (size bytes, at least
 * SFRAME_SYMBOLIZER_SIZE; any alignment) and returns it, or NULL if size
 * is too small.  sframe_symbolizer_lookup() fills *out as
 * sframe_symbolize() with SFRAME_SYMBOLIZE_LINES_SCRATCH bytes of scratch
 * does, and returns the same; out's strings live in the symbolizer, valid
 * until its next lookup or its close.  sframe_symbolizer_close() closes
 * its files (mem may then be freed or reused).  Async-signal-safe, like
 * sframe_symbolize() (open/pread/close, no allocation, no lock); a
 * symbolizer is one caller's: two threads must not use one at the same
 * time. */
struct sframe_symbolizer;
#define SFRAME_SYMBOLIZER_SIZE (2400 * 1024)
SFRAMEBT_API struct sframe_symbolizer *sframe_symbolizer_init(void *mem, size_t size);
SFRAMEBT_API int sframe_symbolizer_lookup(struct sframe_symbolizer *s, uintptr_t pc,
					  struct sframe_symbol *out);
SFRAMEBT_API void sframe_symbolizer_close(struct sframe_symbolizer *s);

/* Demangle an Itanium C++ (_Z...) or Rust (legacy _ZN...E, v0 _R...) symbol
 * name into out (size bytes, NUL-terminated), as `c++filt` prints it.
 * Returns the length written (without the NUL), or -1 when it cannot: not
 * a mangled name it knows, longer than 1024 bytes, over the demangler's
 * budgets, or the result does not fit in size bytes; out is then "" (if
 * size > 0) and the caller prints the mangled name as it is.
 * Async-signal-safe: no allocation, no lock, no system call; it uses
 * under 16 KiB of stack.  errno is kept. */
SFRAMEBT_API int sframe_demangle(const char *mangled, char *out, size_t size);

/* Format one frame as "#3 0x55d0c3a1f2b4 in parse_request+0x24
 * (/usr/bin/server+0x12b4)" into line (always NUL-terminated); returns the
 * length.  The name is demangled, so it may hold spaces and parentheses
 * ("parse_config(char const*) [clone .cold]+0x8a"): the object part is
 * the line's last " (" to its closing ")", the offset the last "+0x"
 * before it.  return_address != 0 names the call before pc: the name at
 * pc-1, or at pc if no symbol covers pc-1 (a signal handler's return to
 * the sigreturn trampoline); offsets are pc's. */
SFRAMEBT_API int sframe_format_frame(int index, uintptr_t pc,
				     int return_address, char *line,
				     size_t line_size);

/* Write n frames of buf to fd, one formatted line each: the
 * async-signal-safe counterpart of backtrace_symbols_fd().  buf[0] is
 * treated as an exact PC, later entries as return addresses. */
SFRAMEBT_API void sframe_backtrace_symbols_fd(void *const *buf, int n, int fd);

/* Walk from ucontext (NULL: from the caller) and write a symbolized report
 * to fd, for crash handlers: one line per frame, each run of frames that
 * repeats with a period of up to 8 frames (a recursion) after two
 * repeats collapsed into one line "#5..#1021 repeat 1017 times: ..."; with
 * a ucontext the walk goes on past any depth (up to 2^20 frames, in pieces
 * of 64) down to the outermost frame, without one it stops after 63.
 * Then "# stopped: REASON", "# thread: NAME (tid N)", with a ucontext
 * "# registers:" (x86-64, AArch64, s390x: the general registers as the
 * context has them), and "# modules:", one "#   START-END PATH build-id
 * HEX" line per loaded object (glibc's loader list, read through checked
 * reads; empty on a C library without _r_debug).  Async-signal-safe; it
 * uses about 21 KiB of stack (tests/report/t_report_parts.c), within the
 * crash handler's alternate stack.  Returns the number of frames walked. */
SFRAMEBT_API int sframe_write_crash_report(const void *ucontext, int fd);

/* ---- Crash handler ------------------------------------------------------ */

/* Install a handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT that
 * writes to fd a header line (the signal, its code, the fault address or
 * the sender, pid and tid) and sframe_write_crash_report()'s report, then
 * passes the signal on to what was installed before: the default action
 * (the process dies from that signal: same exit status, same core dump),
 * or a handler installed earlier, which then gets the genuine fault.
 * Call it from main() before starting threads, in normal context (NOT
 * async-signal-safe; it also calls sframe_backtrace_warmup()).  Calling
 * it again only changes fd.  Returns 0, or -1 (fd < 0, or a system call
 * failed; errno is kept as it was).
 *
 *     int main(void) {
 *         sframe_install_crash_handler(STDERR_FILENO);
 *         ...
 *     }
 *
 * It also gives the calling thread an alternate signal stack, so that a
 * stack overflow can be reported; other threads need
 * sframe_crash_handler_thread_init() for that (without it, their other
 * crashes are still reported).  If several threads crash at once, one
 * reports and the others wait up to 10 s for it. */
SFRAMEBT_API int sframe_install_crash_handler(int fd);

/* Give the calling thread an alternate signal stack of at least
 * SFRAME_CRASH_STACK_SIZE bytes, unless it has one that large: mapped
 * once and never freed (the thread may crash until it exits).  Call at
 * the start of each thread.  Returns 0 or -1. */
#define SFRAME_CRASH_STACK_SIZE (64 * 1024)
SFRAMEBT_API int sframe_crash_handler_thread_init(void);

/* ---- JIT code ------------------------------------------------------- */

/* Code generated at run time lies in no loaded object: register each
 * range of it with the rules that unwind it, and walks go through it like
 * through any object (frames from it say SFRAME_BT_FROM_SFRAME,
 * _EH_FRAME or _FRAME_POINTER).  The range is consulted only for PCs no
 * loaded object holds.
 *
 * sframe_jit_register() and sframe_jit_unregister() are for normal
 * context (they allocate and serialise registrants with a mutex); walks
 * stay async-signal-safe and never wait for them.  The tables are read in
 * place (not copied) until sframe_jit_unregister() returns, after which
 * no walk reads them: they may then be freed with the code (walks read
 * code only where it is on the stack they walk, where it must not be
 * freed anyway).  The names are copied.
 *
 * Tables are validated whole at registration (refused: enum
 * sframe_jit_err), except that a row may lack a CFA rule: a walk keeps
 * such a frame and stops there with SFRAME_BT_STOP_BAD_EH_FRAME.  Under
 * LD_PRELOAD of libsframebt-preload.so, code a JIT registers with libgcc
 * (__register_frame(), __register_frame_info()) is registered here too,
 * keyed by its .eh_frame's address. */
enum sframe_jit_kind {
	SFRAME_JIT_SFRAME = 1,        /* tables: an SFrame section (V1, V2, V3) */
	SFRAME_JIT_EH_FRAME = 2,      /* tables: .eh_frame (without terminator or with) */
	SFRAME_JIT_EH_FRAME_HDR = 3,  /* tables: .eh_frame then .eh_frame_hdr (jitdump's
					 JIT_CODE_UNWINDING_INFO), hdr_size bytes of it */
	SFRAME_JIT_FRAME_POINTER = 4  /* no tables: every function keeps the frame-pointer
					 frame record (push fp; mov sp, fp) */
};

/* Why a registration or unregistration was refused; it changed nothing. */
enum sframe_jit_err {
	SFRAME_JIT_OK = 0,
	SFRAME_JIT_E_ARG = 1,            /* NULL, empty or wrapping range, unknown kind,
					    missing tables or sizes that do not fit */
	SFRAME_JIT_E_TABLES = 2,         /* malformed tables (or another architecture's) */
	SFRAME_JIT_E_OUTSIDE = 3,        /* the tables or names describe code outside the range */
	SFRAME_JIT_E_OVERLAP = 4,        /* the range overlaps a registered one */
	SFRAME_JIT_E_NOT_REGISTERED = 5, /* no range registered at that start */
	SFRAME_JIT_E_NOMEM = 6,          /* out of memory */
	SFRAME_JIT_E_BUSY = 7            /* unregistering from inside a walk on this thread */
};

struct sframe_jit_name {
	uintptr_t start;
	size_t size;
	const char *name;
};

struct sframe_jit_code {
	uintptr_t start, end;       /* the code: [start, end) */
	int kind;                   /* enum sframe_jit_kind */
	const void *tables;         /* NULL for SFRAME_JIT_FRAME_POINTER */
	size_t tables_size;
	size_t hdr_size;            /* SFRAME_JIT_EH_FRAME_HDR: .eh_frame_hdr's size, at the
				       end of tables; else 0 */
	const char *name;           /* optional: the whole range's name */
	const struct sframe_jit_name *names; /* optional: functions in the range */
	size_t n_names;
};

/* Register code->[start, end).  0, or an enum sframe_jit_err. */
SFRAMEBT_API int sframe_jit_register(const struct sframe_jit_code *code);

/* Forget the range registered at start; when it returns, no walk reads
 * the range's tables any longer.  0, or an enum sframe_jit_err.
 * It waits for walks that began before it (never on the calling thread:
 * a signal handler's walk on it has finished when it resumes). */
SFRAMEBT_API int sframe_jit_unregister(uintptr_t start);

/* "ok", "bad-argument", "bad-tables", ... ; "unknown" for others. */
SFRAMEBT_API const char *sframe_jit_err_name(int err);

#ifdef __cplusplus
}
#endif

#endif
