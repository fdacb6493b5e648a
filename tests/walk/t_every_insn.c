/* Every instruction: single-step call chains with the x86 trap flag and,
 * at each instruction boundary inside them, compare
 * sframe_backtrace_ex(ucontext) with the true chain.
 *
 * Ground truth comes from the ABI alone, not from any unwinder: while
 * stepping, a shadow stack records each function instance when it is
 * called, anywhere, libc included (the instruction just stepped lowered
 * sp by 8 and left there the address of the instruction after it: CFA =
 * sp + 8, return address = *sp), gives an instance its function when that
 * function's first instruction is reached (by the call, or by a tail jump,
 * which keeps the CFA and return address), and drops instances once sp
 * has risen to their CFA (they returned).  At pc the true chain is then
 * [pc with the top instance's CFA, its return address with its caller's
 * CFA, ...] down to the driver and main, whose CFAs and return addresses
 * come from __builtin_dwarf_cfa() / __builtin_return_address().  At the
 * first instruction of a PLT stub (jmp *GOT) the stub stands for the
 * function it is about to enter.  Every chain is also run once without
 * stepping first (binds the lazy PLT slots, records the executable's
 * return addresses as a cross-check of the shadow stack).
 *
 * Chains stepped: the executable (tests/walk/chains_exe.c, chains_asm.S) with
 * the linked and the dlopen()ed helper objects (host binutils: SFrame V1);
 * tests/fixtures/bin/x86_64-v{1,2,3}/libchain.so (chain_entry depth 2 and
 * chain_tail_entry, with a tiny callback) and libfixture.so (fx_lib_run_all:
 * frames of 1 KiB and 128 KiB, DRAP, alloca, PLT and .plt.got calls, the
 * hand-written CFI functions); and calls into libc (ei_libc_*): qsort
 * calling back into the program, memset/memcpy/strlen, malloc/free,
 * getpid, write, clock_gettime (the vDSO), a mutex, snprintf, stdio on a
 * memory stream, dlsym (ld.so), a first call through a lazily bound PLT
 * slot (ld.so's resolver), and dlopen/dlclose of a library not loaded
 * (mapping, relocation, IFUNC resolvers, _init, _fini).  The
 * instructions of libc, ld.so, the vDSO and any other code not listed
 * (a sanitizer's interceptors) are checked too, against the same shadow
 * stack, and counted by object.
 *
 * Each checked instruction is: matched (every frame, PC and CFA, right
 * through main); stopped early at a documented toolchain gap (a function
 * the toolchain cannot describe, tests/fixtures/README.md) with every
 * frame before it right, or a wrong CFA there and a PC read from it; or a
 * failure: a wrong frame (a PC that is not the true one), a wrong CFA
 * outside a gap, or an early stop anywhere else, libc included (libc,
 * ld.so and the vDSO carry CFI for every instruction run here), except
 * where the object itself gives no way on: code it has no FDE for (by
 * readelf: crti.o's _init and _fini, Debian's crtstuff functions), or an
 * object ld.so has not published yet (its IFUNC resolvers run during
 * relocation, before _dl_find_object() knows it, which the trap handler
 * asks).  A stop at ld.so's lazy-binding resolver below a memoised row is
 * counted apart (at_resolver()) and must not occur.
 *
 * Where the walk and the shadow stack part in unlisted code because that
 * code rewrites or leaves the frames the shadow stack holds (glibc's
 * __longjmp; libgcc installing a C++ exception's landing frame), libgcc's
 * _Unwind_Backtrace() on the same context decides (libgcc_agrees()).
 *
 * --world DIR steps code nobody here wrote instead of the chains: Lua,
 * zlib and bzip2 as Debian builds them (.eh_frame) and built with SFrame
 * V1, V2, V3 from Debian's sources (t_every_insn_world.sh), Debian's Lua
 * built as C++, whose errors are C++ exceptions, and Debian's OpenSSL
 * (digests and ciphers in perlasm assembly with hand-written CFI, DWARF
 * expressions among it); each object's .text is one code range, whose
 * every instruction must be walked right.
 *
 * Under valgrind (SFB_VALGRIND=1 or valgrind's LD_PRELOAD) the chains run
 * without stepping: valgrind does not deliver trap-flag traps. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "backtrace.h"
#include "check.h"
#include "chains_lib.h"
#include "chains_paths.h"
#include "sig_install.h"
#include "fixtures/src/chain.h"
#include "gcc_trace.h"

/* ---- Groups: which object (and SFrame version) an instruction is in --- */

enum {
	G_EXE, G_LK, G_DL, G_CH1, G_CH2, G_CH3, G_FX1, G_FX2, G_FX3,
	G_WORLD, /* --world: liblua, libz, libbz2: Debian's (.eh_frame), then V1, V2, V3; */
	G_WORLD_CXX = G_WORLD + 12, /* Debian's Lua built as C++ */
	G_WORLD_CRYPTO,              /* Debian's OpenSSL: its assembly, hand-written CFI */
	NGROUPS
};
#define G_WORLD_OF(v, lib) (G_WORLD + 3 * (v) + (lib))
static const char *const group_name[NGROUPS] = {
	"executable (host binutils)", "linked .so (host binutils)",
	"dlopen .so (host binutils)", "libchain.so V1", "libchain.so V2",
	"libchain.so V3", "libfixture.so V1", "libfixture.so V2", "libfixture.so V3",
	"Debian's liblua5.4.so.0", "Debian's libz.so.1", "Debian's libbz2.so.1.0",
	"liblua.so V1", "libz.so V1", "libbz2.so V1", "liblua.so V2", "libz.so V2",
	"libbz2.so V2", "liblua.so V3", "libz.so V3", "libbz2.so V3",
	"Debian's liblua5.4-c++.so.0", "Debian's libcrypto.so.3",
};
/* Host binutils 2.40 writes SFrame V1; 0: no SFrame, .eh_frame only. */
static const int group_version[NGROUPS] = { 1, 1, 1, 1, 2, 3, 1, 2, 3,
					    0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0 };

/* Documented toolchain gaps (tests/fixtures/README.md, chains_lib.h):
 * functions the group's SFrame cannot describe (no FDE, or a wrong one),
 * and ".plt.got" where ld writes no FDE for it (2.40). */
static const char *const gaps[NGROUPS][5] = {
	[G_EXE] = { "chains_ex_drap", "chains_realign", ".plt.got" },
	[G_LK] = { ".plt.got" },
	[G_DL] = { ".plt.got" },
	[G_CH1] = { "chain_drap", ".plt.got" },
	[G_CH2] = { "chain_drap" },
	[G_FX1] = { "fx_lib_drap", "fx_lib_fp_in_reg", "fx_lib_cfa_r10", ".plt.got" },
	[G_FX2] = { "fx_lib_drap", "fx_lib_fp_in_reg", "fx_lib_cfa_r10" },
};

/* ---- Code ranges: functions and PLT sections ------------------------- */

#define MAXCODE 256
struct code {
	uintptr_t lo, hi;
	const char *name; /* function, or ".plt" / ".plt.got" / ".plt.sec" */
	int group;
	bool plt;
	bool gap;
	uintptr_t gap_lo, gap_hi; /* a documented gap in part of the function */
	bool sigframe;     /* marked a signal frame (.cfi_signal_frame, V3 "S") */
	bool whole;        /* a whole section (--world), its functions not told apart */
	int ra_index;     /* CHAINS_RA_* for the executable's chain functions */
	/* per-instruction results */
	unsigned checked, matched, stop_gap, cfa_gap, wrong_frame, wrong_cfa, stop_bad;
	unsigned stop_sys; /* stopped with a reason in a frame of code not listed */
	unsigned gap_spoiled; /* of cfa_gap: then a wrong PC read from that CFA */
	int max_outside;   /* most frames of unlisted code below it */
	unsigned known;    /* stopped at the known limitation (at_resolver()) */
	unsigned unpublished; /* stopped (no-object) in an object being loaded */
	unsigned libgcc;   /* parting from the shadow stack as libgcc's unwinder does
			      (libgcc_agrees(): longjmp, a C++ exception's landing) */
};
static struct code code[MAXCODE];
static int ncode;

static bool is_gap(int group, const char *name)
{
	for (int i = 0; i < 5 && gaps[group][i]; i++)
		if (strcmp(gaps[group][i], name) == 0)
			return true;
	return false;
}

static void add_code(uintptr_t lo, uintptr_t hi, const char *name, int group, bool plt)
{
	if (ncode == MAXCODE || hi <= lo)
		return;
	code[ncode] = (struct code){ .lo = lo, .hi = hi, .name = name, .group = group,
				     .plt = plt, .gap = is_gap(group, name), .ra_index = -1 };
	ncode++;
}

/* gcc's CFI for a DRAP function keeps "rbp saved at (rbp+0)" after the
 * epilogue has restored rbp (leave or pop %rbp, then lea -8(%r10),%rsp):
 * from there to the end the FP rule of every unwind table made from it is
 * wrong (DWARF and SFrame V3 alike), so a walk may stop there.  Finds that
 * lea. */
static void find_drap_epilogue(struct code *c)
{
	static const uint8_t lea[] = { 0x49, 0x8d, 0x62, 0xf8 }; /* lea -8(%r10),%rsp */
	const uint8_t *p = (const uint8_t *)c->lo;
	for (uintptr_t off = 1; off + sizeof lea <= c->hi - c->lo; off++)
		if ((p[off - 1] == 0xc9 || p[off - 1] == 0x5d) && !memcmp(p + off, lea, sizeof lea)) {
			c->gap_lo = c->lo + off;
			c->gap_hi = c->hi;
			return;
		}
}

static bool in_gap(int where, uintptr_t pc)
{
	return where >= 0 && (code[where].gap || pc - code[where].gap_lo <
							 code[where].gap_hi - code[where].gap_lo);
}

/* A function by its address: its extent from the symbol table. */
static bool add_fn(void *addr, const char *name, int group)
{
	Dl_info di;
	const ElfW(Sym) *sym = NULL;
	if (!addr || !dladdr1(addr, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !sym->st_size || di.dli_saddr != addr)
		return false;
	add_code((uintptr_t)addr, (uintptr_t)addr + sym->st_size, name, group, false);
	if (strstr(name, "drap"))
		find_drap_epilogue(&code[ncode - 1]);
	code[ncode - 1].sigframe = strstr(name, "sigframe") != NULL;
	return true;
}

/* Sections of an object, from its section headers on disk: each one named
 * in want[] becomes a code range (a stub section when plt).  Returns how
 * many. */
static int add_sections(const char *path, uintptr_t bias, int group,
			const char *const *want, unsigned nwant, bool plt)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	ElfW(Ehdr) eh;
	ElfW(Shdr) sh[128];
	char names[4096];
	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || eh.e_shnum > 128 ||
	    eh.e_shentsize != sizeof sh[0] || eh.e_shstrndx >= eh.e_shnum ||
	    pread(fd, sh, eh.e_shnum * sizeof sh[0], (off_t)eh.e_shoff) !=
		    (ssize_t)(eh.e_shnum * sizeof sh[0])) {
		close(fd);
		return 0;
	}
	const ElfW(Shdr) *str = &sh[eh.e_shstrndx];
	size_t len = str->sh_size < sizeof names - 1 ? str->sh_size : sizeof names - 1;
	if (pread(fd, names, len, (off_t)str->sh_offset) != (ssize_t)len) {
		close(fd);
		return 0;
	}
	names[len] = 0;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name >= len)
			continue;
		const char *n = names + sh[i].sh_name;
		for (unsigned k = 0; k < nwant; k++)
			if (strcmp(n, want[k]) == 0) {
				int before = ncode;
				add_code(bias + sh[i].sh_addr, bias + sh[i].sh_addr + sh[i].sh_size,
					 want[k], group, plt);
				if (ncode > before) {
					code[ncode - 1].whole = !plt;
					found++;
				}
			}
	}
	close(fd);
	return found;
}

/* The PLT sections of an object. */
static int add_plts(const char *path, uintptr_t bias, int group)
{
	static const char *const plts[] = { ".plt", ".plt.got", ".plt.sec" };
	return add_sections(path, bias, group, plts, 3, true);
}

static int find_code(uintptr_t pc)
{
	for (int i = 0; i < ncode; i++)
		if (pc - code[i].lo < code[i].hi - code[i].lo)
			return i;
	return -1;
}

/* Code outside the listed functions (libc, ld.so, the vDSO, a sanitizer's
 * runtime in the executable), by object; its instructions are checked
 * against the same shadow stack. */
enum { O_LIBC, O_LDSO, O_VDSO, O_EXE, O_OTHER, NOUTSIDE };
static const char *const outside_name[NOUTSIDE] = {
	"libc", "ld.so", "vDSO", "executable, unlisted code", "other objects",
};
static struct code outside[NOUTSIDE];
static uintptr_t outside_lo[O_OTHER], outside_hi[O_OTHER];

static int outside_of(uintptr_t pc)
{
	for (int o = 0; o < O_OTHER; o++)
		if (pc - outside_lo[o] < outside_hi[o] - outside_lo[o])
			return o;
	return O_OTHER;
}

static struct code *code_of(int where, uintptr_t pc)
{
	return where >= 0 ? &code[where] : &outside[outside_of(pc)];
}

/* ---- The shadow stack (ground truth) --------------------------------- */

struct inst {
	uintptr_t cfa, ra; /* the instance's CFA and return address */
	int code;          /* its function (or PLT stub), -1 for main, CODE_OUTSIDE */
	bool valid;        /* every instance below it was seen being entered */
};
#define CODE_OUTSIDE (-2) /* a function not listed (libc, ...) */
#define MAXS 64
static struct inst shadow[MAXS];
static int nshadow;
static bool shadow_overflow;

/* ---- The trap handler ------------------------------------------------ */

#define MAX_STEPS 6000000u
static volatile sig_atomic_t stepping_done;
static unsigned long steps, unchecked, unverifiable, confused;
static unsigned long calls_seen, jmp_entries, rep_steps, outside_steps;
static uintptr_t prev_pc, prev_sp;
static uintptr_t seen_ra[CHAINS_RA_COUNT];

enum kind { K_MATCH, K_STOP_GAP, K_CFA_GAP, K_GAP_SPOILED, K_KNOWN, K_UNPUBLISHED, K_STOP_SYS,
	    K_LIBGCC, K_WRONG_FRAME, K_WRONG_CFA, K_STOP_BAD };
static const char *const kind_name[] = { "match", "stopped at gap", "CFA wrong in gap",
					 "CFA wrong in gap, the next PC read from it",
					 "stopped at the known limitation",
					 "stopped in an object ld.so has not published",
					 "stopped in unlisted code", "as libgcc's unwinder has it",
					 "WRONG FRAME", "WRONG CFA", "STOPPED EARLY" };

/* The first failures, for the report. */
#define MAXLOG 40
static struct failure {
	int kind, frame, n, stop, code;
	uintptr_t pc, got_pc, want_pc, got_cfa, want_cfa;
} failures[MAXLOG];
static int nfailures;
/* Walks that stopped, with a reason, in a frame of unlisted code: by the
 * PC where they stopped and the reason, with the object (its file, the
 * PC's offset in it) for the report: the object may be gone by then. */
#define MAXSTOPS 256
static struct sys_stop {
	uintptr_t stop_pc, insn_pc, off;
	int stop;
	unsigned count;
	char path[160];
} sys_stops[MAXSTOPS];
static int nsys_stops;
static unsigned sys_stops_lost;

static void note_sys_stop(uintptr_t stop_pc, int stop, uintptr_t insn_pc)
{
	for (int i = 0; i < nsys_stops; i++)
		if (sys_stops[i].stop_pc == stop_pc && sys_stops[i].stop == stop) {
			sys_stops[i].count++;
			return;
		}
	if (nsys_stops == MAXSTOPS) {
		sys_stops_lost++;
		return;
	}
	struct sys_stop *t = &sys_stops[nsys_stops++];
	*t = (struct sys_stop){ .stop_pc = stop_pc, .insn_pc = insn_pc, .stop = stop, .count = 1 };
	struct dl_find_object r;
	if (_dl_find_object((void *)stop_pc, &r) == 0 && r.dlfo_link_map) {
		const char *n = r.dlfo_link_map->l_name;
		t->off = stop_pc - r.dlfo_link_map->l_addr;
		for (size_t k = 0; n && n[k] && k + 1 < sizeof t->path; k++)
			t->path[k] = n[k];
	}
}

/* Whether an FDE of the file at path covers address off (its link-time
 * address), by readelf's reading of its .eh_frame: 1 yes, 0 no, -1 could
 * not tell. */
static int fde_covers(const char *path, uintptr_t off)
{
	static char last[PATH_MAX]; /* the file whose FDE ranges are below */
	static unsigned long (*range)[2];
	static size_t nrange, cap;
	if (strcmp(path, last) != 0) {
		char cmd[PATH_MAX + 64], line[512];
		nrange = 0;
		last[0] = 0;
		if (strchr(path, '\'') || strlen(path) >= sizeof last)
			return -1;
		snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames '%s' 2>/dev/null", path);
		FILE *p = popen(cmd, "r");
		if (!p)
			return -1;
		while (fgets(line, sizeof line, p)) {
			const char *at = strstr(line, " FDE ");
			unsigned long lo, hi;
			if (!at || !(at = strstr(at, "pc=")) || sscanf(at, "pc=%lx..%lx", &lo, &hi) != 2)
				continue;
			if (nrange == cap) {
				void *n = realloc(range, (cap = cap ? 2 * cap : 1024) * sizeof range[0]);
				if (!n)
					break;
				range = n;
			}
			range[nrange][0] = lo;
			range[nrange++][1] = hi;
		}
		pclose(p); /* (readelf's status: 1 for a mere warning) */
		strcpy(last, path);
	}
	if (!nrange)
		return -1;
	for (size_t i = 0; i < nrange; i++)
		if (off >= range[i][0] && off < range[i][1])
			return 1;
	return 0;
}

/* The name of the section of the file at path that holds address off
 * (its link-time address), or NULL. */
static const char *section_at(const char *path, uintptr_t off, char *name, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ElfW(Ehdr) eh;
	ElfW(Shdr) sh[128];
	char names[4096];
	const char *found = NULL;
	if (fd < 0)
		return NULL;
	if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && eh.e_shnum <= 128 &&
	    eh.e_shentsize == sizeof sh[0] && eh.e_shstrndx < eh.e_shnum &&
	    pread(fd, sh, eh.e_shnum * sizeof sh[0], (off_t)eh.e_shoff) ==
		    (ssize_t)(eh.e_shnum * sizeof sh[0])) {
		const ElfW(Shdr) *str = &sh[eh.e_shstrndx];
		size_t len = str->sh_size < sizeof names - 1 ? str->sh_size : sizeof names - 1;
		if (pread(fd, names, len, (off_t)str->sh_offset) == (ssize_t)len) {
			names[len] = 0;
			for (unsigned i = 0; i < eh.e_shnum && !found; i++)
				if ((sh[i].sh_flags & SHF_ALLOC) && sh[i].sh_name < len &&
				    off - sh[i].sh_addr < sh[i].sh_size) {
					snprintf(name, size, "%s", names + sh[i].sh_name);
					found = name;
				}
		}
	}
	close(fd);
	return found;
}
/* Why the walks that stopped at a documented gap stopped, by version. */
static unsigned gap_stops[4][16];

/* The word at sp.  Unchecked by AddressSanitizer: a slot just pushed lies
 * below every frame it knows of, where a returned frame's redzones may
 * still be marked. */
__attribute__((no_sanitize_address, noinline)) static uintptr_t stack_word(uintptr_t sp)
{
	return *(const uintptr_t *)sp;
}

static bool jmp_via_got(uintptr_t pc)
{
	const uint8_t *c = (const uint8_t *)pc;
	return (c[0] == 0xff && c[1] == 0x25) || (c[0] == 0xf2 && c[1] == 0xff && c[2] == 0x25);
}

static unsigned long again_same, again_differ; /* second walk at the same instruction */

/* A memoised row (the memo's rows, frame 0's exact-PC row included) says
 * nothing of the callee-saved registers, so below one the walker no longer
 * knows rbx, and ld.so's lazy-binding resolver, whose CFA is rbx + 32 (it
 * realigns the stack for xsave), needs it: the walker then walks again on
 * the general path, which tracks rbx through CFI rows.  A walk that stops
 * there with unsafe-rule is counted apart, and fails the test. */
static uintptr_t resolver; /* _dl_runtime_resolve*, from the executable's GOT[2] */
static unsigned long known_memo_stops, known_memo_again, c_unpublished;
static bool table_discovery;
static bool in_fresh_lib(const struct dl_find_object *r);

static bool at_resolver(const struct sframe_bt_status *st)
{
	return resolver && st->stop == SFRAME_BT_STOP_UNSAFE_RULE && st->stop_pc - resolver < 0x100;
}

/* Where the walk and the shadow stack part in code not listed, that code
 * may be rewriting or leaving the frames the shadow stack still holds:
 * glibc's __longjmp, whose CFI describes the jump as a return to
 * setjmp()'s caller (CFA at the jmp_buf, SP in %r8); libgcc installing a
 * C++ exception's landing frame, which writes that frame's registers and
 * return address over its own frame's saved ones before its epilogue
 * jumps.  Then libgcc's own unwinder on the same context is the CFI's
 * account of the stack.  True when the walk is that account, frame for
 * frame (PC and CFA; the CFA of a last frame the walk could not unwind
 * is 0), as long as it, or stopped with bad-return-address at the PC
 * libgcc goes on to (a landing pad, which no call precedes). */
static bool libgcc_agrees(uintptr_t pc, const struct sframe_bt_frame *fr, int n,
			  const struct sframe_bt_status *st)
{
	static struct gcc_trace t;
	gcc_trace(&t);
	int i = 0;
	while (i < t.n && t.ip[i] != pc)
		i++;
	int m = t.n - i;
	if (m <= 0 || n > m)
		return false;
	for (int j = 0; j < n; j++)
		if (fr[j].pc != t.ip[i + j] ||
		    (i + j + 1 < t.n && fr[j].cfa != t.cfa[i + j + 1] &&
		     !(j == n - 1 && fr[j].cfa == 0)))
			return false;
	if (n == m || st->stop == SFRAME_BT_STOP_BUFFER_FULL)
		return true;
	return st->stop == SFRAME_BT_STOP_BAD_RA && st->stop_pc == t.ip[i + n];
}

static void check_here(const ucontext_t *uc, uintptr_t pc, uintptr_t sp, int where)
{
	struct inst chain[MAXS + 1];
	int L = nshadow;
	memcpy(chain, shadow, sizeof chain[0] * (size_t)L);
	if (where < 0) {
		/* unlisted code: every call into it was seen (the frames are
		 * known), the function is not */
	} else if (code[where].plt && chain[L - 1].code != where) {
		/* A stub reached by a tail jump: at its jmp *GOT it stands
		 * for the function it enters.  (Called, it runs in the
		 * instance the call made: its jmp *GOT and, on a first call,
		 * the lazy path too: push, jmp to PLT0, push, jmp to ld.so.) */
		if (!jmp_via_got(pc)) {
			unchecked++;
			return;
		}
		struct inst stub = { sp + 8, stack_word(sp), where, chain[L - 1].valid };
		if (chain[L - 1].cfa == sp + 8) {
			chain[L - 1] = stub;
		} else if (L < MAXS) {
			/* reached other than by a call or a tail jump */
			stub.valid = false;
			chain[L++] = stub;
		}
	} else if (code[where].plt) {
		/* called: the top instance is the stub's */
	} else if (chain[L - 1].code != where) {
		/* pc in a tracked function that is not the current instance:
		 * the shadow stack lost track (should not happen). */
		confused++;
		return;
	}
	if (!chain[L - 1].valid) {
		unverifiable++;
		return;
	}

	struct sframe_bt_frame fr[MAXS + 8];
	struct sframe_bt_status st;
	memset(fr, 0, sizeof fr);
	int n = sframe_backtrace_ex(uc, fr, L + 4, 0, &st);
	/* Again: where the first walk memoised this exact PC's row, the second
	 * takes it from the memo (walk.c: row_from_object), and must not differ. */
	{
		struct sframe_bt_frame fr2[MAXS + 8];
		struct sframe_bt_status st2;
		memset(fr2, 0, sizeof fr2);
		int n2 = sframe_backtrace_ex(uc, fr2, L + 4, 0, &st2);
		if (n2 == n && !memcmp(fr, fr2, sizeof fr[0] * (size_t)n) && st2.stop == st.stop &&
		    st2.stop_pc == st.stop_pc && st2.frames_sframe == st.frames_sframe &&
		    st2.frames_fp == st.frames_fp && st2.frames_signal == st.frames_signal)
			again_same++;
		else if (at_resolver(&st2) || at_resolver(&st))
			known_memo_again++;
		else
			again_differ++;
	}

	/* Expected frame j: pc = chain[L-j].ra (pc itself for j = 0), in the
	 * function of chain[L-1-j], with that instance's CFA. */
	int bad_pc = -1, bad_cfa = -1;
	bool cfa_in_gap = true, gap_seen = false, last_cfa_bad = false;
	for (int j = 0; j < n && j < L; j++) {
		uintptr_t want_pc = j == 0 ? pc : chain[L - j].ra;
		uintptr_t want_cfa = chain[L - 1 - j].cfa;
		/* After a frame marked "signal frame" (fx_lib_sigframe: an
		 * ordinary function with .cfi_signal_frame), the next PC may
		 * be taken as exact, as DWARF's 'S' would have it. */
		bool any_exact = j > 0 && chain[L - j].code >= 0 && code[chain[L - j].code].sigframe;
		if (fr[j].pc != want_pc || (fr[j].exact != (j == 0) && !any_exact)) {
			bad_pc = j;
			break;
		}
		last_cfa_bad = false;
		uintptr_t look = j == 0 ? pc : want_pc - 1;
		bool gap_here = in_gap(find_code(look), look);
		gap_seen = gap_seen || gap_here;
		/* The last frame's CFA is 0 when the walk could not unwind it. */
		if (fr[j].cfa != want_cfa && !(j == n - 1 && fr[j].cfa == 0)) {
			if (bad_cfa < 0)
				bad_cfa = j;
			/* a wrong row in a gap can spoil the FP, and so the
			 * CFA, of the frames after it */
			cfa_in_gap = cfa_in_gap && gap_seen;
			last_cfa_bad = true;
		}
	}
	int kind;
	int at = bad_pc >= 0 ? bad_pc : bad_cfa;
	if (bad_pc >= 0) {
		/* A return address is read at the previous frame's CFA: when
		 * that CFA was wrong, and excused by a gap (gcc's stale FP rule
		 * in a DRAP epilogue restores a wrong FP, which the caller's
		 * FP-based CFA then uses), the PC read there is the gap's
		 * doing too.  A plausible stack beneath (frame records of a
		 * frame-pointer build) can make it look like a frame. */
		kind = last_cfa_bad && cfa_in_gap ? K_GAP_SPOILED : K_WRONG_FRAME;
	} else if (n < L) {
		/* Stopped: fine only at or after a frame in a gap (a wrong row
		 * there can also spoil the FP a later frame needs), and with a
		 * real reason.  A stop with a reason in a frame of unlisted code
		 * (the last frame reported) is counted apart, and listed by
		 * where it stopped. */
		bool reason = st.stop != SFRAME_BT_STOP_NONE && st.stop != SFRAME_BT_STOP_BUFFER_FULL;
		bool gap = gap_seen && reason;
		bool sys = !gap && reason && n > 0 &&
			   find_code(n == 1 ? pc : chain[L - n + 1].ra - 1) < 0;
		kind = sys ? (bad_cfa >= 0 ? K_WRONG_CFA : K_STOP_SYS)
		       : !gap ? K_STOP_BAD : bad_cfa >= 0 && !cfa_in_gap ? K_WRONG_CFA : K_STOP_GAP;
		if (kind == K_STOP_BAD || kind == K_STOP_GAP || kind == K_STOP_SYS)
			at = n;
		struct dl_find_object dfo;
		if (kind == K_STOP_SYS && st.stop == SFRAME_BT_STOP_NO_OBJECT &&
		    (_dl_find_object((void *)st.stop_pc, &dfo) != 0 ||
		     (table_discovery && in_fresh_lib(&dfo)))) {
			/* an object ld.so has not published yet (or no longer):
			 * _dl_find_object() knows it no more than the walk; or,
			 * where the library finds objects in a table of its own
			 * (glibc < 2.35), the object being dlopen()ed, loaded
			 * since the table's last refresh */
			kind = K_UNPUBLISHED;
			c_unpublished++;
		} else if (kind == K_STOP_SYS && at_resolver(&st)) {
			kind = K_KNOWN;
			known_memo_stops++;
		} else if (kind == K_STOP_SYS && st.stop == SFRAME_BT_STOP_BAD_RA &&
			   libgcc_agrees(pc, fr, n, &st)) {
			kind = K_LIBGCC;
		} else if (kind == K_STOP_SYS) {
			note_sys_stop(st.stop_pc, st.stop, pc);
		}
	} else if (bad_cfa >= 0) {
		kind = cfa_in_gap ? K_CFA_GAP : K_WRONG_CFA;
	} else {
		kind = K_MATCH;
	}

	if (where < 0 && (kind == K_WRONG_FRAME || kind == K_WRONG_CFA || kind == K_STOP_BAD) &&
	    libgcc_agrees(pc, fr, n, &st))
		kind = K_LIBGCC;

	struct code *c = code_of(where, pc);
	c->checked++;
	int nout = 0;
	for (int i = 0; i < L; i++)
		nout += chain[i].code == CODE_OUTSIDE;
	if (nout > c->max_outside)
		c->max_outside = nout;
	switch (kind) {
	case K_MATCH: c->matched++; break;
	case K_STOP_GAP:
		c->stop_gap++;
		gap_stops[group_version[c->group]][st.stop & 15]++;
		break;
	case K_CFA_GAP: c->cfa_gap++; break;
	case K_GAP_SPOILED:
		c->cfa_gap++;
		c->gap_spoiled++;
		break;
	case K_STOP_SYS: c->stop_sys++; break;
	case K_KNOWN: c->known++; break;
	case K_UNPUBLISHED: c->unpublished++; break;
	case K_LIBGCC: c->libgcc++; break;
	case K_WRONG_FRAME: c->wrong_frame++; break;
	case K_WRONG_CFA: c->wrong_cfa++; break;
	default: c->stop_bad++; break;
	}
	if ((kind >= K_WRONG_FRAME || kind == K_GAP_SPOILED) && nfailures < MAXLOG) {
		struct failure *f = &failures[nfailures++];
		f->kind = kind;
		f->frame = at;
		f->n = n;
		f->stop = st.stop;
		f->code = where >= 0 ? where : -1 - outside_of(pc);
		f->pc = pc;
		if (at >= 0 && at < L) {
			f->want_pc = at == 0 ? pc : chain[L - at].ra;
			f->want_cfa = chain[L - 1 - at].cfa;
		}
		if (at >= 0 && at < n) {
			f->got_pc = fr[at].pc;
			f->got_cfa = fr[at].cfa;
		}
	}
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t pc = (uintptr_t)g[REG_RIP], sp = (uintptr_t)g[REG_RSP];
	if (pc == (uintptr_t)chains_tf_off || ++steps > MAX_STEPS) {
		g[REG_EFL] &= ~(greg_t)0x100;
		stepping_done = 1;
		return;
	}
	/* Instances that returned: SP has risen to their CFA (a ret) or past
	 * it (longjmp, an exception's landing).  Not a listed function that
	 * popped its own return address and runs on (chains_ra_popped). */
	int where = find_code(pc);
	while (nshadow > 2 && shadow[nshadow - 1].cfa <= sp &&
	       !(shadow[nshadow - 1].cfa == sp && where >= 0 && shadow[nshadow - 1].code == where &&
		 !code[where].whole && pc != shadow[nshadow - 1].ra))
		nshadow--;
	/* A call, anywhere (libc included): the instruction just stepped
	 * pushed the address of the one after it.  (A push of that very
	 * value is not something compiled code does.)  A rep-prefixed
	 * instruction traps once per iteration: checked once. */
	uintptr_t top = stack_word(sp);
	bool call = prev_pc && sp == prev_sp - 8 && top - prev_pc - 1 < 15;
	bool repeat = pc == prev_pc && sp == prev_sp;
	prev_pc = pc;
	prev_sp = sp;
	bool tracked = where >= 0;
	if (call) {
		calls_seen++;
		struct inst e = { sp + 8, top, tracked ? where : CODE_OUTSIDE,
				  shadow[nshadow - 1].valid };
		if (nshadow < MAXS)
			shadow[nshadow++] = e;
		else
			shadow_overflow = true;
	}
	if (tracked && !code[where].plt &&
	    (code[where].whole ? shadow[nshadow - 1].code != where && shadow[nshadow - 1].cfa == sp + 8
			       : pc == code[where].lo)) {
		/* Entry: by the call just seen, or by a tail jump (the
		 * instance's CFA and return address stay, its function
		 * changes).  A whole section is entered at any function's
		 * first instruction, where SP is still the CFA less 8 (from
		 * a PLT stub, say); its own first instruction may be any
		 * code (a cold part, jumped to). */
		if (shadow[nshadow - 1].cfa == sp + 8 && nshadow > 2) {
			shadow[nshadow - 1].code = where;
		} else if (nshadow < MAXS) {
			/* entered neither by a call nor by a tail jump */
			jmp_entries++;
			shadow[nshadow++] = (struct inst){ sp + 8, top, where, false };
		} else {
			shadow_overflow = true;
		}
		if (code[where].ra_index >= 0)
			seen_ra[code[where].ra_index] = top;
	}
	if (repeat) {
		rep_steps++;
		return;
	}
	if (!tracked)
		outside_steps++;
	check_here(uc, pc, sp, where);
}

/* ---- The chains ------------------------------------------------------ */

static int (*chain_entry_p[4])(int, chain_cb, void *);
static int (*chain_tail_p[4])(chain_cb, void *);
static int (*fx_run_all_p[4])(int);

CHAINS_FN int ei_leaf(void *ctx)
{
	return ((struct chains_ctx *)ctx)->pos;
}

CHAINS_FN int ei_cb(void *arg)
{
	return arg == NULL;
}

CHAINS_FN int ei_chain_adapter(void *ctx)
{
	volatile int zero = 0;
	int r = chain_entry_p[((struct chains_ctx *)ctx)->depth](2, ei_cb, NULL);
	return r + zero;
}

CHAINS_FN int ei_tail_adapter(void *ctx)
{
	volatile int zero = 0;
	int r = chain_tail_p[((struct chains_ctx *)ctx)->depth](ei_cb, NULL);
	return r + zero;
}

CHAINS_FN int ei_fixture_adapter(void *ctx)
{
	volatile int zero = 0;
	int r = fx_run_all_p[((struct chains_ctx *)ctx)->depth](1);
	return r + zero;
}

/* Through libc: qsort calling back into the program, the string
 * functions (through the executable's PLT, to libc's IFUNC-selected
 * versions), malloc/free, system call wrappers, clock_gettime (the vDSO),
 * a mutex, snprintf.  Sizes are read from volatiles: real calls, not
 * inlined copies. */
static volatile size_t ei_small = 40, ei_large = 3000;
static int ei_devnull = -1;
static pthread_mutex_t ei_mutex = PTHREAD_MUTEX_INITIALIZER;

CHAINS_FN int ei_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

CHAINS_FN int ei_libc_qsort(void *ctx)
{
	volatile int zero = 0;
	int a[13];
	unsigned seed = 7u + (unsigned)((struct chains_ctx *)ctx)->pos;
	for (int i = 0; i < 13; i++) {
		seed = seed * 1103515245u + 12345u;
		a[i] = (int)(seed >> 16);
	}
	qsort(a, 13, sizeof a[0], ei_cmp);
	return a[0] + a[12] + zero;
}

CHAINS_FN int ei_libc_mem(void *ctx)
{
	static char src[4096], dst[4096];
	volatile int zero = 0;
	size_t n = ei_small, m = ei_large;
	(void)ctx;
	memset(src, 'x', m);
	src[m - 1] = 0;
	memcpy(dst, src, n);
	memcpy(dst, src, m);
	return (int)strlen(dst) + zero;
}

static void *volatile ei_escape; /* keeps malloc/free from being elided */

CHAINS_FN int ei_libc_malloc(void *ctx)
{
	volatile int zero = 0;
	char *p = malloc(ei_small), *q = malloc(ei_large * 10);
	int r = p && q;
	(void)ctx;
	ei_escape = p;
	ei_escape = q;
	free(q);
	free(p);
	return r + zero;
}

CHAINS_FN int ei_libc_sys(void *ctx)
{
	volatile int zero = 0;
	struct timespec ts;
	(void)ctx;
	int r = getpid() > 0;
	r += write(ei_devnull, "x", 1) == 1;
	r += clock_gettime(CLOCK_MONOTONIC, &ts) == 0;
	r += pthread_mutex_lock(&ei_mutex) == 0;
	r += pthread_mutex_unlock(&ei_mutex) == 0;
	return r + zero;
}

CHAINS_FN int ei_libc_printf(void *ctx)
{
	volatile int zero = 0;
	char buf[128];
	(void)ctx;
	int r = snprintf(buf, sizeof buf, "%s %d %#lx %.3f|%8.2e", "every", 42, 0xabcUL, 2.5,
			 1e-7);
	return r + zero;
}

CHAINS_FN int ei_libc_stdio(void *ctx)
{
	volatile int zero = 0;
	char buf[256];
	(void)ctx;
	FILE *f = fmemopen(buf, sizeof buf, "w");
	if (!f)
		return -1;
	int r = fprintf(f, "%s %d %lx\n", "stdio", 7, 0xfeedUL);
	r += fputs("more\n", f) >= 0;
	r += fclose(f) == 0;
	return r + zero;
}

CHAINS_FN int ei_ldso_dlsym(void *ctx)
{
	volatile int zero = 0;
	(void)ctx;
	return (dlsym(RTLD_DEFAULT, "getppid") != NULL) + zero;
}

/* longjmp() out of a called function: libc's __longjmp restores the
 * registers of setjmp()'s caller, SP among them, and jumps; its CFI
 * describes it as returning there (libgcc_agrees()). */
CHAINS_FN void ei_jumper(jmp_buf *jb)
{
	longjmp(*jb, 1);
}

CHAINS_FN int ei_libc_longjmp(void *ctx)
{
	volatile int zero = 0;
	jmp_buf jb;
	(void)ctx;
	if (setjmp(jb) == 0)
		ei_jumper(&jb);
	return 1 + zero;
}

/* dlopen() and dlclose() of a library nothing has loaded: ld.so maps and
 * relocates it, running its IFUNC resolvers before it publishes it to
 * _dl_find_object() (and its destructors as it goes). */
static const char *ei_fresh_lib;
/* table_discovery: the library finds objects in a table it refreshes in
 * normal context (no _dl_find_object: glibc < 2.35), not through ld.so's
 * own.  in_fresh_lib(): r is the object a flow dlopen()s. */
static bool in_fresh_lib(const struct dl_find_object *r)
{
	const char *slash = ei_fresh_lib ? strrchr(ei_fresh_lib, '/') : NULL;
	const char *base = slash ? slash + 1 : ei_fresh_lib;
	return base && r->dlfo_link_map && r->dlfo_link_map->l_name &&
	       strstr(r->dlfo_link_map->l_name, base);
}

CHAINS_FN int ei_ldso_dlopen(void *ctx)
{
	volatile int zero = 0;
	(void)ctx;
	void *h = dlopen(ei_fresh_lib, RTLD_NOW | RTLD_LOCAL);
	int r = h != NULL;
	if (h)
		r += dlclose(h) == 0;
	return r + zero;
}

/* The first call of a function through the executable's lazily bound
 * PLT: the stub's push and jmp to PLT0, ld.so's _dl_runtime_resolve
 * (which realigns the stack for xsave), _dl_fixup and its symbol lookup.
 * getppid is called nowhere else: this flow is stepped once, without a
 * first run. */
CHAINS_FN int ei_libc_lazy(void *ctx)
{
	volatile int zero = 0;
	(void)ctx;
	return (getppid() > 0) + zero;
}

/* --world DIR: code nobody here wrote: Lua's interpreter, zlib and bzip2,
 * as Debian builds them (world[0]: .eh_frame only) and from the sources
 * Debian ships, built with SFrame by binutils 2.40, 2.44 and 2.47
 * (tests/walk/world_libs.sh: DIR/v1 .. DIR/v3), entered through their
 * public functions (found by dlsym(), no headers needed). */
struct world_api {
	void *L; /* a Lua state with the standard libraries, made unstepped */
	void (*lua_settop)(void *, int);
	int (*lua_loadstring)(void *, const char *);
	int (*lua_pcallk)(void *, int, int, int, intptr_t, void *);
	long long (*lua_tointegerx)(void *, int, int *);
	int (*z_compress2)(uint8_t *, unsigned long *, const uint8_t *, unsigned long, int);
	int (*z_uncompress)(uint8_t *, unsigned long *, const uint8_t *, unsigned long);
	int (*bz_compress)(char *, unsigned *, char *, unsigned, int, int, int);
	int (*bz_decompress)(char *, unsigned *, char *, unsigned, int, int);
};
static struct world_api world[5]; /* [4]: Lua built as C++, Lua's part only */

/* Under ASan every memset and memcpy also runs its interceptor, and the
 * flows take about three times the traps: only Debian's builds and V3's
 * are stepped there. */
#if defined(__SANITIZE_ADDRESS__)
#define WORLD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WORLD_SANITIZED 1
#endif
#endif
#ifndef WORLD_SANITIZED
#define WORLD_SANITIZED 0
#endif

/* Sorting with a Lua comparator, string formatting and patterns, an error
 * caught by pcall (longjmp), a coroutine, recursion, the clock (the vDSO). */
static const char world_script[] =
	"local t = {} for i = 1, 8 do t[i] = (i * 7919) % 1000 end "
	"table.sort(t, function(a, b) return a > b end) "
	"local s = {} for i = 1, 4 do s[#s + 1] = string.format('%d:%g', i, i / 7) end "
	"local str = table.concat(s, ',') local n = 0 "
	"for w in str:gmatch('%d+') do n = n + #w end "
	"local ok = pcall(error, 'boom') "
	"local co = coroutine.wrap(function(a) a = a + coroutine.yield(a) return a end) "
	"local x = co(1) x = co(2) "
	"local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end "
	"return n + fib(5) + #str + (ok and 0 or 1) + x + t[1] + os.time() * 0 + "
	"math.floor(os.clock() * 0)";

CHAINS_FN int ei_world_lua(void *ctx)
{
	volatile int zero = 0;
	const struct world_api *w = &world[((struct chains_ctx *)ctx)->depth];
	int r = -2;
	if (w->lua_loadstring(w->L, world_script) == 0 &&
	    w->lua_pcallk(w->L, 0, 1, 0, 0, NULL) == 0)
		r = (int)w->lua_tointegerx(w->L, -1, NULL);
	w->lua_settop(w->L, 0);
	return r + zero;
}

/* Text that compresses: numbered lines of words. */
static size_t world_text(uint8_t *buf, size_t size)
{
	size_t n = 0;
	unsigned seed = 1;
	for (int line = 0; n + 64 < size; line++) {
		n += (size_t)snprintf((char *)buf + n, size - n, "%d", line);
		for (int w = 0; w < 6; w++) {
			seed = seed * 1103515245u + 12345u;
			static const char *const words[] = { " the", " stack", " frame", " walk",
							     " return", " address", " row", " cfa" };
			n += (size_t)snprintf((char *)buf + n, size - n, "%s", words[(seed >> 16) & 7]);
		}
		buf[n++] = '\n';
	}
	return n;
}

static uint8_t world_in[256], world_z[4096], world_out[4096];

CHAINS_FN int ei_world_z(void *ctx)
{
	volatile int zero = 0;
	const struct world_api *w = &world[((struct chains_ctx *)ctx)->depth];
	size_t n = world_text(world_in, sizeof world_in);
	unsigned long zn = sizeof world_z, on = sizeof world_out;
	if (w->z_compress2(world_z, &zn, world_in, n, 6) != 0 ||
	    w->z_uncompress(world_out, &on, world_z, zn) != 0 || on != n ||
	    memcmp(world_out, world_in, n) != 0)
		return -1;
	return (int)zn + zero;
}

CHAINS_FN int ei_world_bz2(void *ctx)
{
	volatile int zero = 0;
	const struct world_api *w = &world[((struct chains_ctx *)ctx)->depth];
	size_t n = world_text(world_in, sizeof world_in);
	unsigned zn = sizeof world_z, on = sizeof world_out;
	if (w->bz_compress((char *)world_z, &zn, (char *)world_in, (unsigned)n, 1, 0, 30) != 0 ||
	    w->bz_decompress((char *)world_out, &on, (char *)world_z, zn, 0, 0) != 0 ||
	    on != n || memcmp(world_out, world_in, n) != 0)
		return -1;
	return (int)zn + zero;
}

/* OpenSSL's libcrypto: the digests and ciphers are perlasm assembly,
 * chosen by the CPU's features, with hand-written CFI (DWARF expressions
 * where a function realigns its stack). */
static struct {
	unsigned char *(*sha1)(const unsigned char *, size_t, unsigned char *);
	unsigned char *(*sha256)(const unsigned char *, size_t, unsigned char *);
	unsigned char *(*sha512)(const unsigned char *, size_t, unsigned char *);
	int (*digest)(const void *, size_t, unsigned char *, unsigned *, const void *, void *);
	const void *(*sha3_256)(void);
	void *(*ctx_new)(void);
	void (*ctx_free)(void *);
	int (*enc_init)(void *, const void *, void *, const unsigned char *, const unsigned char *);
	int (*enc_update)(void *, unsigned char *, int *, const unsigned char *, int);
	int (*enc_final)(void *, unsigned char *, int *);
	const void *(*aes_256_gcm)(void);
	const void *(*chacha20_poly1305)(void);
} crypto;

CHAINS_FN int ei_world_digests(void *ctx)
{
	volatile int zero = 0;
	unsigned char md[64];
	unsigned len = 0;
	size_t n = world_text(world_in, sizeof world_in);
	(void)ctx;
	int r = crypto.sha1(world_in, n, md)[0];
	r += crypto.sha256(world_in, n, md)[0];
	r += crypto.sha512(world_in, n, md)[0];
	if (crypto.digest(world_in, n, md, &len, crypto.sha3_256(), NULL) != 1 || len != 32)
		return -1;
	return r + md[0] + zero;
}

CHAINS_FN int ei_world_ciphers(void *ctx)
{
	volatile int zero = 0;
	static const unsigned char key[32] = { 1, 2, 3 }, iv[12] = { 4, 5, 6 };
	size_t n = world_text(world_in, sizeof world_in);
	const void *ciphers[2] = { crypto.aes_256_gcm(), crypto.chacha20_poly1305() };
	int r = 0;
	(void)ctx;
	for (int i = 0; i < 2; i++) {
		void *c = crypto.ctx_new();
		int l = 0, l2 = 0;
		if (!c || crypto.enc_init(c, ciphers[i], NULL, key, iv) != 1 ||
		    crypto.enc_update(c, world_z, &l, world_in, (int)n) != 1 ||
		    crypto.enc_final(c, world_z + l, &l2) != 1)
			r = -1000;
		crypto.ctx_free(c);
		r += l + l2 + world_z[0];
	}
	return r + zero;
}

/* Runs entry(ctx), single-stepping it when step.  Called from main only,
 * so that shadow[0] (main) and shadow[1] (this) are the bottom of every
 * chain. */
CHAINS_FN int ei_drive(chains_fn entry, void *ctx, int step)
{
	volatile int zero = 0;
	shadow[1] = (struct inst){ (uintptr_t)__builtin_dwarf_cfa(),
				   (uintptr_t)__builtin_return_address(0), find_code((uintptr_t)ei_drive),
				   true };
	nshadow = 2;
	prev_pc = prev_sp = 0;
	stepping_done = 0;
	if (step)
		chains_tf_on();
	int r = entry(ctx);
	if (step)
		chains_tf_off();
	return r + zero;
}

struct flow {
	const char *name;
	chains_fn entry;
	struct chains_ctx ctx;
	bool varies; /* result depends on uninitialised stack (libfixture) */
	bool cold;   /* stepped on its first run */
};

/* ---- Set-up ---------------------------------------------------------- */

static void *open_lib(const char *path, int group, uintptr_t *bias_out)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct link_map *lm = NULL;
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
		CHECK(0, "dlopen %s: %s", path, dlerror());
		return NULL;
	}
	add_plts(lm->l_name && lm->l_name[0] ? lm->l_name : path, lm->l_addr, group);
	if (bias_out)
		*bias_out = lm->l_addr;
	return h;
}

static const char *const chain_fns[] = {
	"chain_entry", "chain_recurse", "chain_alloca", "chain_drap", "chain_leafcall",
	"chain_tail_entry", "chain_tail", "chain_leafcall2",
};
static const char *const fixture_fns[] = {
	"fx_lib_run_all", "fx_lib_use", "fx_lib_frame_small", "fx_lib_frame_1k",
	"fx_lib_frame_128k", "fx_lib_drap", "fx_lib_alloca", "fx_lib_plt_calls",
	"fx_lib_plt_got", "fx_lib_sigframe", "fx_lib_ra_undef_mid", "fx_lib_fp_in_reg",
	"fx_lib_cfa_r10",
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *sym_of(uintptr_t pc, char *buf, size_t size)
{
	Dl_info di;
	if (pc && dladdr((void *)pc, &di) && di.dli_sname) {
		snprintf(buf, size, "%s+%#lx", di.dli_sname,
			 (unsigned long)(pc - (uintptr_t)di.dli_saddr));
	} else if (pc && dladdr((void *)pc, &di) && di.dli_fname) {
		const char *slash = strrchr(di.dli_fname, '/');
		snprintf(buf, size, "%s+%#lx", slash ? slash + 1 : di.dli_fname,
			 (unsigned long)(pc - (uintptr_t)di.dli_fbase));
	} else {
		snprintf(buf, size, "%#lx", (unsigned long)pc);
	}
	return buf;
}

/* The function (or, unnamed, the object) holding pc. */
static const char *fn_of(uintptr_t pc)
{
	Dl_info di;
	if (pc && dladdr((void *)pc, &di))
		return di.dli_sname ? di.dli_sname : di.dli_fname ? di.dli_fname : "?";
	return "?";
}

/* Lua's entry points in h, and a state with its standard libraries. */
static bool open_world_lua(void *h, struct world_api *w)
{
	void *(*newstate)(void);
	void (*openlibs)(void *);
	*(void **)&newstate = dlsym(h, "luaL_newstate");
	*(void **)&openlibs = dlsym(h, "luaL_openlibs");
	*(void **)&w->lua_settop = dlsym(h, "lua_settop");
	*(void **)&w->lua_loadstring = dlsym(h, "luaL_loadstring");
	*(void **)&w->lua_pcallk = dlsym(h, "lua_pcallk");
	*(void **)&w->lua_tointegerx = dlsym(h, "lua_tointegerx");
	if (newstate && openlibs && (w->L = newstate()) != NULL)
		openlibs(w->L);
	return w->L && w->lua_settop && w->lua_loadstring && w->lua_pcallk && w->lua_tointegerx;
}

/* open_lib(), and the object's .text as one code range: a whole section,
 * whose functions are not told apart.  NULL if either fails. */
static void *open_whole(const char *path, int group)
{
	static const char *const text[] = { ".text" };
	void *h = open_lib(path, group, NULL);
	struct link_map *lm = NULL;
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 ||
	    !add_sections(lm->l_name, lm->l_addr, group, text, 1, false))
		return NULL;
	return h;
}

/* The world libraries (see world[]): Debian's by their sonames, then
 * those of DIR; their .text and PLT sections as code ranges, their entry
 * points.  False if one is missing. */
static bool open_world(const char *dir)
{
	static const char *const libs[4][3] = {
		{ "liblua5.4.so.0", "libz.so.1", "libbz2.so.1.0" },
		{ "liblua.so", "libz.so", "libbz2.so" },
		{ "liblua.so", "libz.so", "libbz2.so" },
		{ "liblua.so", "libz.so", "libbz2.so" },
	};
	char path[PATH_MAX + 64];
	bool all = true;
	for (int v = 0; v <= 3; v++) {
		void *h[3];
		for (int l = 0; l < 3; l++) {
			if (v == 0)
				snprintf(path, sizeof path, "%s", libs[v][l]);
			else
				snprintf(path, sizeof path, "%s/v%d/%s", dir, v, libs[v][l]);
			h[l] = open_whole(path, G_WORLD_OF(v, l));
			all = all && h[l];
		}
		if (!h[0] || !h[1] || !h[2])
			continue;
		struct world_api *w = &world[v];
		all = open_world_lua(h[0], w) && all;
		*(void **)&w->z_compress2 = dlsym(h[1], "compress2");
		*(void **)&w->z_uncompress = dlsym(h[1], "uncompress");
		*(void **)&w->bz_compress = dlsym(h[2], "BZ2_bzBuffToBuffCompress");
		*(void **)&w->bz_decompress = dlsym(h[2], "BZ2_bzBuffToBuffDecompress");
		all = all && w->z_compress2 && w->z_uncompress && w->bz_compress && w->bz_decompress;
	}
	/* Debian's OpenSSL. */
	void *c = open_whole("libcrypto.so.3", G_WORLD_CRYPTO);
	all = all && c;
	if (c) {
		*(void **)&crypto.sha1 = dlsym(c, "SHA1");
		*(void **)&crypto.sha256 = dlsym(c, "SHA256");
		*(void **)&crypto.sha512 = dlsym(c, "SHA512");
		*(void **)&crypto.digest = dlsym(c, "EVP_Digest");
		*(void **)&crypto.sha3_256 = dlsym(c, "EVP_sha3_256");
		*(void **)&crypto.ctx_new = dlsym(c, "EVP_CIPHER_CTX_new");
		*(void **)&crypto.ctx_free = dlsym(c, "EVP_CIPHER_CTX_free");
		*(void **)&crypto.enc_init = dlsym(c, "EVP_EncryptInit_ex");
		*(void **)&crypto.enc_update = dlsym(c, "EVP_EncryptUpdate");
		*(void **)&crypto.enc_final = dlsym(c, "EVP_EncryptFinal_ex");
		*(void **)&crypto.aes_256_gcm = dlsym(c, "EVP_aes_256_gcm");
		*(void **)&crypto.chacha20_poly1305 = dlsym(c, "EVP_chacha20_poly1305");
	}
	all = all && crypto.sha1 && crypto.sha256 && crypto.sha512 && crypto.digest &&
	      crypto.sha3_256 && crypto.ctx_new && crypto.ctx_free && crypto.enc_init &&
	      crypto.enc_update && crypto.enc_final && crypto.aes_256_gcm &&
	      crypto.chacha20_poly1305;
	/* Debian's Lua built as C++: its errors are C++ exceptions, thrown
	 * through libstdc++ and libgcc_s's unwinder to pcall's catch. */
	void *h = open_whole("liblua5.4-c++.so.0", G_WORLD_CXX);
	all = all && h && open_world_lua(h, &world[4]);
	return all;
}

int main(int argc, char **argv)
{
	char path[2 * PATH_MAX + 128];
	double t0 = now();
	/* --world DIR: only the world libraries' flows (tests/walk/t_every_insn_world.sh) */
	const char *world_dir = argc == 3 && strcmp(argv[1], "--world") == 0 ? argv[2] : NULL;

	table_discovery = !dlsym(RTLD_DEFAULT, "_dl_find_object");
	shadow[0] = (struct inst){ (uintptr_t)__builtin_dwarf_cfa(),
				   (uintptr_t)__builtin_return_address(0), -1, true };

	find_exe_dir();

	/* The executable's functions and PLT. */
	static const struct {
		void *fn;
		const char *name;
		int ra_index;
	} exe_fns[] = {
		{ (void *)ei_drive, "ei_drive", -1 },
		{ (void *)chains_ex_a, "chains_ex_a", CHAINS_RA_A },
		{ (void *)chains_ex_alloca, "chains_ex_alloca", CHAINS_RA_ALLOCA },
		{ (void *)chains_ex_big, "chains_ex_big", CHAINS_RA_BIG },
		{ (void *)chains_ex_mid, "chains_ex_mid", CHAINS_RA_MID },
		{ (void *)chains_ex_to_dl, "chains_ex_to_dl", CHAINS_RA_TO_DL },
		{ (void *)chains_ex_drap, "chains_ex_drap", CHAINS_RA_DRAP },
		{ (void *)chains_ex_recurse, "chains_ex_recurse", -1 },
		{ (void *)chains_realign, "chains_realign", -1 },
		{ (void *)chains_ra_popped, "chains_ra_popped", -1 },
		{ (void *)ei_leaf, "ei_leaf", -1 },
		{ (void *)ei_cb, "ei_cb", -1 },
		{ (void *)ei_chain_adapter, "ei_chain_adapter", -1 },
		{ (void *)ei_tail_adapter, "ei_tail_adapter", -1 },
		{ (void *)ei_fixture_adapter, "ei_fixture_adapter", -1 },
		{ (void *)ei_cmp, "ei_cmp", -1 },
		{ (void *)ei_libc_qsort, "ei_libc_qsort", -1 },
		{ (void *)ei_libc_mem, "ei_libc_mem", -1 },
		{ (void *)ei_libc_malloc, "ei_libc_malloc", -1 },
		{ (void *)ei_libc_sys, "ei_libc_sys", -1 },
		{ (void *)ei_libc_printf, "ei_libc_printf", -1 },
		{ (void *)ei_libc_lazy, "ei_libc_lazy", -1 },
		{ (void *)ei_jumper, "ei_jumper", -1 },
		{ (void *)ei_libc_longjmp, "ei_libc_longjmp", -1 },
		{ (void *)ei_libc_stdio, "ei_libc_stdio", -1 },
		{ (void *)ei_ldso_dlsym, "ei_ldso_dlsym", -1 },
		{ (void *)ei_ldso_dlopen, "ei_ldso_dlopen", -1 },
		{ (void *)ei_world_lua, "ei_world_lua", -1 },
		{ (void *)ei_world_z, "ei_world_z", -1 },
		{ (void *)ei_world_bz2, "ei_world_bz2", -1 },
		{ (void *)ei_world_digests, "ei_world_digests", -1 },
		{ (void *)ei_world_ciphers, "ei_world_ciphers", -1 },
	};
	bool all = true;
	for (unsigned i = 0; i < sizeof exe_fns / sizeof exe_fns[0]; i++) {
		bool ok = add_fn(exe_fns[i].fn, exe_fns[i].name, G_EXE);
		if (ok)
			code[ncode - 1].ra_index = exe_fns[i].ra_index;
		all = all && ok;
	}
	Dl_info di;
	dladdr((void *)ei_drive, &di);
	int plts = add_plts("/proc/self/exe", (uintptr_t)di.dli_fbase, G_EXE);
	/* ld.so's lazy-binding resolver: PLT0 ends with jmp *GOT[2](%rip). */
	for (int i = 0; i < ncode; i++) {
		const uint8_t *p = (const uint8_t *)code[i].lo;
		if (code[i].group == G_EXE && strcmp(code[i].name, ".plt") == 0 && p[6] == 0xff &&
		    p[7] == 0x25) {
			int32_t disp;
			memcpy(&disp, p + 8, sizeof disp);
			resolver = *(const uintptr_t *)(code[i].lo + 12 + (uintptr_t)(intptr_t)disp);
		}
	}

	/* The linked helper. */
	/* (by name: taking chains_lk_outer's address here would route the
	 * executable's call through .plt.got instead of .plt) */
	void *lk = dlsym(RTLD_DEFAULT, "chains_lk_outer");
	all = add_fn(lk, "chains_lk_outer", G_LK) && all;
	all = add_fn(dlsym(RTLD_DEFAULT, "chains_lk_mid"), "chains_lk_mid", G_LK) && all;
	all = add_fn((void *)chains_lk_got, "chains_lk_got", G_LK) && all;
	if (lk && dladdr(lk, &di))
		plts += add_plts(di.dli_fname, (uintptr_t)di.dli_fbase, G_LK);

	/* The dlopen()ed helper. */
	snprintf(path, sizeof path, "%s/libsfb_chains_dl.so", exe_dir);
	void *dlh = open_lib(path, G_DL, NULL);
	if (dlh) {
		chains_dl_entry = (chains_fn)dlsym(dlh, "chains_dl_outer");
		all = add_fn(dlsym(dlh, "chains_dl_outer"), "chains_dl_outer", G_DL) && all;
		all = add_fn(dlsym(dlh, "chains_dl_big"), "chains_dl_big", G_DL) && all;
		all = add_fn(dlsym(dlh, "chains_dl_mid"), "chains_dl_mid", G_DL) && all;
	}

	/* The fixtures. */
	const char *fx = fixtures_dir();
	for (int v = 1; v <= 3; v++) {
		snprintf(path, sizeof path, "%s/x86_64-v%d/libchain.so", fx, v);
		void *h = open_lib(path, G_CH1 + v - 1, NULL);
		if (h) {
			chain_entry_p[v] = (int (*)(int, chain_cb, void *))dlsym(h, "chain_entry");
			chain_tail_p[v] = (int (*)(chain_cb, void *))dlsym(h, "chain_tail_entry");
			for (unsigned i = 0; i < sizeof chain_fns / sizeof chain_fns[0]; i++)
				all = add_fn(dlsym(h, chain_fns[i]), chain_fns[i], G_CH1 + v - 1) && all;
		}
		snprintf(path, sizeof path, "%s/x86_64-v%d/libfixture.so", fx, v);
		h = open_lib(path, G_FX1 + v - 1, NULL);
		if (h) {
			fx_run_all_p[v] = (int (*)(int))dlsym(h, "fx_lib_run_all");
			for (unsigned i = 0; i < sizeof fixture_fns / sizeof fixture_fns[0]; i++)
				all = add_fn(dlsym(h, fixture_fns[i]), fixture_fns[i], G_FX1 + v - 1) &&
				      all;
		}
	}
	if (world_dir) {
		bool w = open_world(world_dir);
		CHECK(w, "set-up: Lua, zlib and bzip2 as Debian builds them, and built by "
		      "binutils 2.40, 2.44, 2.47 in %s", world_dir);
		all = all && w;
	}
	CHECK(all && chains_dl_entry && plts >= 3,
	      "set-up: %d code ranges (functions with their sizes, %d PLT sections)", ncode,
	      plts);
	if (!all || !chains_dl_entry)
		CHECK_DONE();

	/* The objects of unlisted code. */
	void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
	const void *addr[O_OTHER] = { libc ? dlsym(libc, "getpid") : NULL,
				      (const void *)getauxval(AT_BASE),
				      (const void *)getauxval(AT_SYSINFO_EHDR), (const void *)ei_drive };
	for (int o = 0; o < O_OTHER; o++) {
		struct dl_find_object r;
		if (addr[o] && _dl_find_object((void *)addr[o], &r) == 0) {
			outside_lo[o] = (uintptr_t)r.dlfo_map_start;
			outside_hi[o] = (uintptr_t)r.dlfo_map_end;
		}
	}
	CHECK(outside_hi[O_LIBC] && outside_hi[O_LDSO] && outside_hi[O_VDSO],
	      "set-up: libc, ld.so and the vDSO located");
	ei_devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	struct flow flows[24];
	int nflows = 0;
	if (world_dir) {
		static const char *const names[4][3] = {
			{ "Debian's liblua5.4.so.0: a script", "Debian's libz.so.1: compress2, uncompress",
			  "Debian's libbz2.so.1.0: compress, decompress" },
			{ "liblua.so V1: a script", "libz.so V1: compress2, uncompress",
			  "libbz2.so V1: compress, decompress" },
			{ "liblua.so V2: a script", "libz.so V2: compress2, uncompress",
			  "libbz2.so V2: compress, decompress" },
			{ "liblua.so V3: a script", "libz.so V3: compress2, uncompress",
			  "libbz2.so V3: compress, decompress" },
		};
		static const chains_fn fns[3] = { ei_world_lua, ei_world_z, ei_world_bz2 };
		for (int v = 0; v <= 3; v++)
			for (int l = 0; l < 3 && !(WORLD_SANITIZED && (v == 1 || v == 2)); l++)
				flows[nflows++] = (struct flow){ .name = names[v][l], .entry = fns[l],
								 .ctx = { .depth = v } };
		flows[nflows++] = (struct flow){ .name = "Debian's liblua5.4-c++.so.0: a script",
						 .entry = ei_world_lua, .ctx = { .depth = 4 } };
		flows[nflows++] = (struct flow){
			.name = "Debian's libcrypto.so.3: SHA-1, SHA-256, SHA-512, SHA3-256",
			.entry = ei_world_digests };
		flows[nflows++] = (struct flow){
			.name = "Debian's libcrypto.so.3: AES-256-GCM, ChaCha20-Poly1305",
			.entry = ei_world_ciphers };
		goto run;
	}
	flows[nflows++] = (struct flow){ .name = "exe -> linked -> dlopen",
					 .entry = chains_ex_a,
					 .ctx = { .hop = { chains_ex_mid, chains_ex_to_dl, ei_leaf } } };
	flows[nflows++] = (struct flow){ .name = "exe recursion", .entry = chains_ex_recurse,
					 .ctx = { .hop = { ei_leaf }, .depth = 3 } };
	flows[nflows++] = (struct flow){ .name = "exe DRAP", .entry = chains_ex_drap,
					 .ctx = { .hop = { ei_leaf } } };
	flows[nflows++] = (struct flow){ .name = "exe realign (CFA in %rbx)",
					 .entry = chains_realign, .ctx = { .hop = { ei_leaf } } };
	flows[nflows++] = (struct flow){ .name = "exe return address popped (in the red zone)",
					 .entry = chains_ra_popped, .ctx = { .hop = { ei_leaf } } };
	static const struct {
		const char *name;
		chains_fn entry;
	} libc_flows[] = {
		{ "libc qsort -> ei_cmp", ei_libc_qsort },
		{ "libc memset, memcpy, strlen", ei_libc_mem },
		{ "libc malloc, free", ei_libc_malloc },
		{ "libc getpid, write, clock_gettime (vDSO), mutex", ei_libc_sys },
		{ "libc snprintf", ei_libc_printf },
		{ "libc fmemopen, fprintf, fputs, fclose", ei_libc_stdio },
		{ "ld.so dlsym", ei_ldso_dlsym },
		{ "libc setjmp, longjmp", ei_libc_longjmp },
	};
	for (unsigned i = 0; i < sizeof libc_flows / sizeof libc_flows[0]; i++)
		flows[nflows++] = (struct flow){ .name = libc_flows[i].name,
						 .entry = libc_flows[i].entry };
	flows[nflows++] = (struct flow){ .name = "lazy binding: getppid's first call",
					 .entry = ei_libc_lazy, .cold = true };
	/* (a sanitizer's runtime may have loaded libm) */
	static const char *const fresh[] = { "libm.so.6", "libresolv.so.2", "libutil.so.1" };
	for (unsigned i = 0; i < 3 && !ei_fresh_lib; i++) {
		void *h = dlopen(fresh[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			dlclose(h);
		else
			ei_fresh_lib = fresh[i];
	}
	if (ei_fresh_lib)
		flows[nflows++] = (struct flow){ .name = "dlopen, dlclose of a library not loaded",
						 .entry = ei_ldso_dlopen };
	for (int v = 1; v <= 3; v++) {
		static const char *const names[4][3] = {
			{ 0 },
			{ "libchain V1 chain_entry", "libchain V1 chain_tail_entry", "libfixture V1" },
			{ "libchain V2 chain_entry", "libchain V2 chain_tail_entry", "libfixture V2" },
			{ "libchain V3 chain_entry", "libchain V3 chain_tail_entry", "libfixture V3" },
		};
		if (chain_entry_p[v])
			flows[nflows++] =
				(struct flow){ .name = names[v][0], .entry = ei_chain_adapter,
						.ctx = { .depth = v } };
		if (chain_tail_p[v])
			flows[nflows++] =
				(struct flow){ .name = names[v][1], .entry = ei_tail_adapter,
						.ctx = { .depth = v } };
		if (fx_run_all_p[v])
			flows[nflows++] =
				(struct flow){ .name = names[v][2], .entry = ei_fixture_adapter,
						.ctx = { .depth = v }, .varies = true };
	}

run:;
	bool stepping = !under_valgrind();
	sig_install(SIGTRAP, on_trap, 0);

	for (int i = 0; i < nflows; i++) {
		struct chains_ctx c = flows[i].ctx;
		int r0 = 0;
		if (!flows[i].cold || !stepping)
			r0 = ei_drive(flows[i].entry, &c, 0); /* binds the PLT slots */
		if (!stepping)
			continue;
		c = flows[i].ctx;
		unsigned long before = steps;
		int r1 = ei_drive(flows[i].entry, &c, 1);
		bool done = stepping_done;
		if (flows[i].cold) {
			c = flows[i].ctx;
			r0 = ei_drive(flows[i].entry, &c, 0);
		}
		CHECK(done && (r0 == r1 || flows[i].varies) && steps - before > 10 &&
			      !shadow_overflow,
		      "stepped %s: %lu instructions", flows[i].name, steps - before);
		if (i == 0 && !world_dir) {
			bool same = true;
			for (int j = 0; j < CHAINS_RA_COUNT; j++)
				if (j != CHAINS_RA_DRAP)
					same = same && seen_ra[j] == (uintptr_t)chains_ra[j];
			CHECK(same, "shadow stack agrees with __builtin_return_address() of the "
				    "executable's chain functions");
		}
	}
	if (!stepping) {
		CHECK(1, "chains ran without stepping (valgrind: no trap-flag stepping)");
		CHECK_DONE();
	}

	/* Per function (non-matching ones only), then per group and version. */
	unsigned gsum[NGROUPS][9];
	memset(gsum, 0, sizeof gsum);
	for (int i = 0; i < ncode; i++) {
		struct code *c = &code[i];
		unsigned *s = gsum[c->group];
		s[0] += c->checked;
		s[1] += c->matched;
		s[2] += c->stop_gap;
		s[3] += c->cfa_gap;
		s[4] += c->wrong_frame;
		s[5] += c->wrong_cfa;
		s[6] += c->stop_bad;
		s[7] += c->stop_sys;
		s[8] += c->gap_spoiled;
		if (c->checked != c->matched)
			printf("#   %-18s %-22s %3u checked, %3u matched, %3u stopped at gap, "
			       "%u CFA-wrong in gap (%u then a PC read from it), %u stopped in unlisted "
			       "code, %u at the known limitation, %u WRONG FRAME, %u WRONG CFA, %u "
			       "STOPPED EARLY%s\n",
			       group_name[c->group], c->name, c->checked, c->matched, c->stop_gap,
			       c->cfa_gap, c->gap_spoiled, c->stop_sys, c->known, c->wrong_frame,
			       c->wrong_cfa, c->stop_bad,
			       c->gap ? " (documented gap)" : "");
	}
	for (int i = 0; i < nfailures; i++) {
		struct failure *f = &failures[i];
		char a[160], b[160], c2[160];
		printf("#   %s at %s [%s]: frame #%d got %s cfa %#lx, want %s cfa %#lx "
		       "(%d frames, stop %s)\n",
		       kind_name[f->kind], sym_of(f->pc, a, sizeof a),
		       f->code >= 0 ? group_name[code[f->code].group] : outside_name[-1 - f->code],
		       f->frame, sym_of(f->got_pc, b, sizeof b), (unsigned long)f->got_cfa,
		       sym_of(f->want_pc, c2, sizeof c2), (unsigned long)f->want_cfa, f->n,
		       sframe_bt_stop_name(f->stop));
	}

	unsigned vsum[4][9];
	memset(vsum, 0, sizeof vsum);
	for (int g = 0; g < NGROUPS; g++) {
		unsigned *s = gsum[g];
		for (int j = 0; j < 9; j++)
			vsum[group_version[g]][j] += s[j];
		printf("# %-28s %s%.0d: %4u checked, %4u matched, %3u stopped at a documented gap, "
		       "%u CFA wrong in a gap, %u stopped in unlisted code; %u wrong frames, %u wrong "
		       "CFAs, %u early stops\n",
		       group_name[g], group_version[g] ? "V" : "CFI", group_version[g], s[0], s[1],
		       s[2], s[3], s[7], s[4], s[5], s[6]);
	}
	if (world_dir)
		CHECK(vsum[0][0] > 0 && vsum[0][4] == 0 && vsum[0][5] == 0 && vsum[0][6] == 0 &&
			      vsum[0][7] == 0,
		      "every-insn .eh_frame, Debian's own builds: %u instructions checked, %u "
		      "matched; %u wrong frames, %u wrong CFAs, %u early stops (%u in libc or other "
		      "unlisted code)",
		      vsum[0][0], vsum[0][1], vsum[0][4], vsum[0][5], vsum[0][6] + vsum[0][7],
		      vsum[0][7]);
	for (int v = 1; v <= 3; v++) {
		unsigned *s = vsum[v];
		if (world_dir && WORLD_SANITIZED && v < 3)
			continue; /* (not stepped) */
		printf("# every-insn SFrame V%d: %u instructions checked, %u matched, %u stopped at "
		       "documented gaps (%u with a wrong CFA in the gap, %u of them then a wrong PC "
		       "read from that CFA), %u stopped in unlisted code, %u wrong frames, %u wrong "
		       "CFAs, %u early stops\n",
		       v, s[0], s[1], s[2] + s[3], s[3], s[8], s[7], s[4], s[5], s[6]);
		printf("#   V%d stops at documented gaps by reason:", v);
		for (int r = 0; r < 16; r++)
			if (gap_stops[v][r])
				printf(" %s %u", sframe_bt_stop_name(r), gap_stops[v][r]);
		printf("\n");
		/* (libc, below the program's frames, is described throughout:
		 * no stop there either) */
		CHECK(s[0] > 0 && s[4] == 0 && s[5] == 0 && s[6] == 0 && s[7] == 0,
		      "every-insn SFrame V%d: %u instructions checked, %u matched, %u stopped at a "
		      "documented gap; %u wrong frames, %u wrong CFAs, %u other early stops (%u in "
		      "libc or other unlisted code)",
		      v, s[0], s[1], s[2] + s[3], s[4], s[5], s[6] + s[7], s[7]);
	}

	/* Unlisted code: libc, ld.so, the vDSO, a sanitizer's runtime. */
	unsigned osum[10];
	memset(osum, 0, sizeof osum);
	for (int o = 0; o < NOUTSIDE; o++) {
		struct code *c = &outside[o];
		unsigned v[10] = { c->checked, c->matched + c->libgcc, c->stop_gap, c->cfa_gap, c->wrong_frame,
				   c->wrong_cfa, c->stop_bad, c->stop_sys, c->known, c->unpublished };
		for (int j = 0; j < 10; j++)
			osum[j] += v[j];
		printf("# unlisted code in %-26s %5u instructions checked, %5u right (%u of them "
		       "parting from the shadow stack as libgcc's unwinder does), %u stopped "
		       "in an object ld.so has not published, %u stopped otherwise with a reason, "
		       "%u stopped at a documented gap below, %u at ld.so's resolver; %u wrong "
		       "frames, %u wrong CFAs, %u stopped without a reason\n",
		       outside_name[o], c->checked, c->matched + c->libgcc, c->libgcc,
		       c->unpublished, c->stop_sys, c->stop_gap + c->cfa_gap, c->known,
		       c->wrong_frame, c->wrong_cfa, c->stop_bad);
	}
	/* Where they stopped, by function and reason.  Explained: no-unwind-info
	 * where the object's .eh_frame has no FDE, as readelf reads it: code
	 * dlopen and dlclose run that has no CFI (crti.o's _init and _fini,
	 * crtstuff's frame_dummy and __do_global_dtors_aux in Debian's libm). */
	unsigned explained = 0;
	for (int i = 0; i < nsys_stops; i++) {
		struct sys_stop *t = &sys_stops[i];
		char sec[64], sec2[64];
		if (!t->count || t->stop != SFRAME_BT_STOP_NO_UNWIND_INFO || !t->path[0] ||
		    fde_covers(t->path, t->off) != 0)
			continue;
		const char *in = section_at(t->path, t->off, sec, sizeof sec);
		unsigned count = 0, pcs = 0;
		for (int k = i; k < nsys_stops; k++) {
			struct sys_stop *u = &sys_stops[k];
			const char *in2;
			if (u->count && u->stop == t->stop && !strcmp(u->path, t->path) &&
			    fde_covers(u->path, u->off) == 0 &&
			    (in2 = section_at(u->path, u->off, sec2, sizeof sec2)) && in &&
			    !strcmp(in, in2)) {
				count += u->count;
				pcs++;
				if (u != t)
					u->count = 0;
			}
		}
		explained += count;
		printf("#   stopped (no-unwind-info) in %s of %s, where no FDE covers the PC "
		       "(readelf): at %u PCs (first +%#lx), %u instructions\n",
		       in ? in : "?", t->path, pcs, (unsigned long)t->off, count);
		t->count = 0;
	}
	for (int i = 0; i < nsys_stops; i++) {
		struct sys_stop *t = &sys_stops[i];
		if (!t->count)
			continue;
		const char *fn = fn_of(t->stop_pc);
		unsigned count = t->count, pcs = 1;
		for (int k = i + 1; k < nsys_stops; k++)
			if (sys_stops[k].count && sys_stops[k].stop == t->stop &&
			    strcmp(fn_of(sys_stops[k].stop_pc), fn) == 0) {
				count += sys_stops[k].count;
				sys_stops[k].count = 0;
				pcs++;
			}
		char a[160], b[160];
		printf("#   stopped (%s) in %s: at %u PCs (first %s, %s+%#lx), %u instructions "
		       "(first at %s)\n",
		       sframe_bt_stop_name(t->stop), fn, pcs, sym_of(t->stop_pc, a, sizeof a),
		       t->path[0] ? t->path : "?", (unsigned long)t->off, count,
		       sym_of(t->insn_pc, b, sizeof b));
	}
	unsigned ow = osum[4] + osum[5] + osum[6];
	CHECK(outside[O_LIBC].libgcc >= 9,
	      "longjmp stepped: at %u instructions of libc the walk goes where libgcc's unwinder "
	      "does, not where the shadow stack does (__longjmp's CFI: to setjmp()'s caller, "
	      "with the SP in %%r8)",
	      outside[O_LIBC].libgcc);
	if (world_dir)
		CHECK(outside[O_OTHER].libgcc > 0,
		      "C++ exceptions thrown (Debian's Lua built as C++): at %u instructions of "
		      "libgcc_s, installing the landing frame, the walk goes where libgcc's "
		      "unwinder does", outside[O_OTHER].libgcc);
	if (!world_dir)
		CHECK(outside[O_LDSO].checked > 200, "ld.so stepped (lazy binding, dlsym, dlopen): %u "
	      "instructions checked, %u right", outside[O_LDSO].checked, outside[O_LDSO].matched);
	CHECK(known_memo_stops == 0 && known_memo_again == 0,
	      "no walk stops with unsafe-rule at ld.so's resolver (CFA = rbx + 32) below a "
	      "memoised row: %lu did, %lu second walks differed from the first by it",
	      known_memo_stops, known_memo_again);
	/* No stop is expected there: libc, ld.so and the vDSO describe every
	 * instruction these flows run with .eh_frame CFI. */
	CHECK(outside[O_LIBC].checked > 2000 && outside[O_VDSO].checked > 0 && ow == 0 &&
		      osum[7] == explained && sys_stops_lost == 0,
	      "every-insn through libc, ld.so, the vDSO and other unlisted code: %u instructions "
	      "checked (libc %u, ld.so %u, vDSO %u, others %u), %u right, %u stopped in an "
	      "object ld.so has not published, %u stopped where it has no FDE, %u stopped "
	      "otherwise with a reason, %u stopped at a documented gap below, %u at ld.so's "
	      "resolver, %u wrong",
	      osum[0], outside[O_LIBC].checked, outside[O_LDSO].checked, outside[O_VDSO].checked,
	      outside[O_OTHER].checked, osum[1], osum[9], explained, osum[7] - explained,
	      osum[2] + osum[3], osum[8], ow);
	/* dlopen(): ld.so runs the new object's IFUNC resolvers while it
	 * relocates it, before _dl_find_object() knows it; the walk, which
	 * finds objects only through it (async-signal-safe), stops there
	 * with no-object, as checked against _dl_find_object() at the trap. */
	if (ei_fresh_lib)
		CHECK(outside[O_OTHER].checked > 0,
		      "dlopen of %s stepped: %u instructions in it, %lu walks stopped with "
		      "no-object in an object ld.so had not published", ei_fresh_lib,
		      outside[O_OTHER].checked, c_unpublished);
	printf("# %lu traps (%lu more iterations of rep-prefixed instructions), %lu calls seen, "
	       "%lu instructions in unlisted code, %lu PLT instructions not checked (not the stub's "
	       "jmp), %lu unverifiable, %lu confused, %lu entries neither by call nor tail jump; "
	       "%.2f s\n",
	       steps, rep_steps, calls_seen, outside_steps, unchecked, unverifiable, confused,
	       jmp_entries, now() - t0);
	if (!under_valgrind())
		CHECK(again_differ == 0 && again_same > 1000,
		      "a second walk at each checked instruction (the exact-PC memo's) equals "
		      "the first: %lu of %lu", again_same, again_same + again_differ);
	CHECK(confused == 0 && unverifiable == 0 && jmp_entries == 0,
	      "shadow stack consistent at every checked instruction (%lu confused, %lu unverifiable, "
	      "%lu functions entered neither by a call nor by a tail jump)", confused, unverifiable,
	      jmp_entries);

	/* What the chains were meant to exercise really was. */
	for (int i = 0; i < ncode; i++) {
		struct code *c = &code[i];
		if (world_dir)
			; /* (the chains ran in the other mode) */
		else if (c->group == G_CH3 && strcmp(c->name, "chain_drap") == 0)
			CHECK(c->checked >= 20 && c->matched == c->checked,
			      "V3 chain_drap (flexible FDE): %u of %u instructions right "
			      "(%u stopped in the epilogue, where gcc's CFI keeps a stale FP rule)",
			      c->matched, c->checked, c->stop_gap);
		else if (c->group == G_EXE && strcmp(c->name, "ei_cmp") == 0)
			CHECK(c->checked >= 20 && c->matched == c->checked && c->max_outside >= 2,
			      "qsort's callback ei_cmp: %u of %u instructions right, with up to %d "
			      "frames of unlisted code (qsort's, a sanitizer's interceptor's) between "
			      "it and ei_libc_qsort",
			      c->matched, c->checked, c->max_outside);
		if (c->plt && c->checked)
			printf("# PLT %s of %s: %u stub instructions checked, %u matched\n", c->name,
			       group_name[c->group], c->checked, c->matched);
	}
	CHECK_DONE();
}
