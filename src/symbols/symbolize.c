/* Async-signal-safe symbolization: PC -> object, function, offsets
 * (docs/DESIGN.md, "Symbols": where names come from, in which order).
 *
 * One chain tries the sources in order: the object holding the PC and
 * its .dynsym in memory (loaded.c), the .symtab of its file, else of its
 * detached debug file (elf_file.c); a PC in no object goes to the names
 * of registered JIT code (objects/jit_registry.c), then to the perf map
 * (perf_map.c).  The name found is then demangled (demangle.c), the
 * mangled form kept beside it.  Given the room, sframe_symbolize() adds
 * the source position (srcpos.c, from DWARF: lines.h).
 *
 * This runs in signal handlers, often while the process is crashing, so it
 * uses no malloc, no stdio, no locks, and no static mutable state but the
 * debug directory a constructor publishes once; the only other memory is
 * the caller's scratch buffer and the stack. */
#define _GNU_SOURCE
#include <stdalign.h>
#include <string.h>
#include <unistd.h>

#include "backtrace.h"
#include "base/entry.h"
#include "objects/jit_registry.h"
#include "symbols/demangle.h"
#include "symbols/srcpos.h"
#include "symbols/symtab.h"

void sfb_symbol_clear(struct sframe_symbol *out)
{
	*out = (struct sframe_symbol){ .object = "", .name = "", .mangled = "", .file = "" };
	for (int i = 0; i < SFRAME_MAX_INLINED; i++)
		out->inlined[i] = (struct sframe_inlined){ "", "", 0, 0 };
}

/* out->name: the demangled form of out->mangled, or the same string when
 * it is not mangled or the demangler refuses it. */
static void demangle_name(struct sframe_symbol *out, char *scratch)
{
	char *name = scratch + SFB_SYM_NAME_OFF;
	out->name = sfb_demangle(out->mangled, name, SFB_SYM_NAME_CAP) > 0 ? name : out->mangled;
}

/* A PC in no loaded object: JIT code, named by its registration
 * (sframe_jit_register()) if it has a name, else by the perf map if any;
 * the object is "[jit]" or the perf map's path. */
static int symbolize_jit(uintptr_t pc, struct sframe_symbol *out, char *scratch, size_t size)
{
	char *path = scratch, *mangled = scratch + SFB_SYM_MANGLED_OFF;
	uint64_t start;
	uintptr_t reg_start;
	size_t reg_len;
	int found;
	if (sfb_jit_name(pc, mangled, SFB_SYM_MANGLED_CAP, &reg_start, &reg_len) && mangled[0]) {
		memcpy(path, "[jit]", sizeof "[jit]");
		start = reg_start;
		found = 1;
	} else {
		int fd = sfb_open_perf_map(path, SFB_SYM_PATH_CAP);
		if (fd < 0)
			return 0;
		found = sfb_perf_map_lookup(fd, pc, mangled, SFB_SYM_MANGLED_CAP, &start,
					    scratch + SFB_SYM_WORK_OFF, size - SFB_SYM_WORK_OFF);
		close(fd);
	}
	if (!found || !mangled[0])
		return 0;
	out->object = path;
	out->object_base = 0;
	out->object_offset = pc;
	out->mangled = mangled;
	out->name_offset = pc - start;
	demangle_name(out, scratch);
	return 1;
}

/* The object's path into path: its loader name, or the main program's
 * file. */
static void object_path(const struct sfb_obj *o, char *path)
{
	size_t n = 0;
	if (o->name[0]) {
		while (n < SFB_SYM_PATH_CAP - 1 && o->name[n])
			n++;
		memcpy(path, o->name, n);
	} else {
		ssize_t r = readlink("/proc/self/exe", path, SFB_SYM_PATH_CAP - 1);
		n = r > 0 ? (size_t)r : 0;
	}
	path[n] = '\0';
}

/* The return address rule (pc - 1 first, since a call to a noreturn
 * function may end its function and leave pc past the end; then pc
 * itself, which a signal handler's return address, the sigreturn
 * trampoline's first instruction, needs): one pass over each symbol
 * table serves both targets. */
int sfb_symbolize(uintptr_t pc, int return_address, struct sframe_symbol *out,
		  char *scratch, size_t size)
{
	struct sfb_obj o;
	char *path = scratch, *mangled = scratch + SFB_SYM_MANGLED_OFF;
	char *work = scratch + SFB_SYM_WORK_OFF;
	size_t wsize = size - SFB_SYM_WORK_OFF;
	uintptr_t adj = return_address && pc ? 1 : 0;
	sfb_symbol_clear(out);
	if (!sfb_find_object(pc - adj, &o)) {
		if (!symbolize_jit(pc - adj, out, scratch, size))
			return 0;
		out->object_offset += adj;
		out->name_offset += adj;
		return 1;
	}

	object_path(&o, path);
	out->object = path;
	out->object_base = o.bias;
	out->object_offset = pc - o.bias;

	struct sfb_targets ts = { { pc - adj - o.bias, pc - o.bias }, { { 0 }, { 0 } }, adj ? 2 : 1 };
	uint64_t shnum;
	Elf64_Ehdr eh;
	sfb_load_segments(&o);
	sfb_scan_dynsym(&o, &ts);
	/* The path may now name another file (a package upgrade replaced
	 * it): use its symbols only if its header is the loaded one. */
	int fd = sfb_open_object(&o), dfd = -1, had_symtab = 0, loaded = 0;
	if (fd >= 0 && sfb_read_ehdr(fd, &eh, &shnum) &&
	    (!o.ehdr || memcmp(o.ehdr, &eh, sizeof eh) == 0)) {
		loaded = 1;
		had_symtab = sfb_scan_symtab(&o, fd, &eh, shnum, &ts, work, wsize);
	}
	Elf64_Ehdr deh;
	uint64_t dshnum;
	if (!had_symtab && (dfd = sfb_open_debug(&o, loaded ? fd : -1, &eh, shnum, &deh, &dshnum,
						 work, wsize)) >= 0)
		sfb_scan_symtab(&o, dfd, &deh, dshnum, &ts, work, wsize);
	const struct sfb_best *b = &ts.best[0];
	if (!sfb_names_target(b) && ts.n > 1)
		b = &ts.best[1];
	size_t n = sfb_names_target(b) ?
		   sfb_name_bytes(&b->tab, b->name, mangled, SFB_SYM_MANGLED_CAP - 1) : 0;
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	mangled[n] = '\0'; /* truncates; an embedded NUL ends it earlier */
	if (!mangled[0])
		return 0;
	out->mangled = mangled;
	out->name_offset = pc - o.bias - b->value;
	demangle_name(out, scratch);
	return 1;
}

SFRAMEBT_API int sframe_symbolize(uintptr_t pc, struct sframe_symbol *out,
				  char *scratch, size_t scratch_size)
{
	SFB_ENTRY;
	if (!out)
		return 0;
	sfb_symbol_clear(out);
	if (!scratch || scratch_size < SFRAME_SYMBOLIZE_SCRATCH)
		return 0;
	int found = sfb_symbolize(pc, 0, out, scratch, SFRAME_SYMBOLIZE_SCRATCH);
	if (scratch_size >= SFRAME_SYMBOLIZE_LINES_SCRATCH)
		sfb_srcpos_symbolize(pc, out, scratch + SFRAME_SYMBOLIZE_SCRATCH,
				     scratch_size - SFRAME_SYMBOLIZE_SCRATCH);
	return found;
}

/* A symbolizer (backtrace.h): the names as sframe_symbolize() finds them,
 * in its own scratch, and the source positions through a cache of open
 * files (srcpos.h), whose result and demangled names stay in it until
 * the next lookup.  Each file's reader gets SFB_SRCPOS_ROOMY bytes, where
 * the crash report's gets SFB_SRCPOS_FAST. */
struct sframe_symbolizer {
	struct sfb_srcpos_cache cache;
	char scratch[SFRAME_SYMBOLIZE_SCRATCH];
	char names[SFB_SRCPOS_NAMES];
	uint64_t slots[SFB_SRCPOS_SLOTS][SFB_SRCPOS_ROOMY / sizeof(uint64_t)];
};

#define SYMBOLIZER_ALIGN alignof(struct sframe_symbolizer)
_Static_assert(sizeof(struct sframe_symbolizer) + SYMBOLIZER_ALIGN - 1 <= SFRAME_SYMBOLIZER_SIZE,
	       "SFRAME_SYMBOLIZER_SIZE holds a symbolizer at any alignment");

SFRAMEBT_API struct sframe_symbolizer *sframe_symbolizer_init(void *mem, size_t size)
{
	SFB_ENTRY;
	if (!mem || size < SFRAME_SYMBOLIZER_SIZE)
		return NULL;
	uintptr_t at = ((uintptr_t)mem + SYMBOLIZER_ALIGN - 1) & ~(uintptr_t)(SYMBOLIZER_ALIGN - 1);
	struct sframe_symbolizer *s = (struct sframe_symbolizer *)at;
	sfb_srcpos_cache_init(&s->cache, s->slots[0], sizeof s->slots[0]);
	return s;
}

SFRAMEBT_API int sframe_symbolizer_lookup(struct sframe_symbolizer *s, uintptr_t pc,
					  struct sframe_symbol *out)
{
	SFB_ENTRY;
	if (!out)
		return 0;
	sfb_symbol_clear(out);
	if (!s)
		return 0;
	int found = sfb_symbolize(pc, 0, out, s->scratch, sizeof s->scratch);
	if (sfb_srcpos_cache_lookup(&s->cache, pc) == 0)
		sfb_srcpos_fill(out, &s->cache.res, s->names, sizeof s->names);
	return found;
}

SFRAMEBT_API void sframe_symbolizer_close(struct sframe_symbolizer *s)
{
	SFB_ENTRY;
	if (s)
		sfb_srcpos_cache_close(&s->cache);
}
