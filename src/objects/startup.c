/* Objects loaded at start-up (startup.h), told apart with public
 * interfaces only; docs/DESIGN.md, Discovery, says why this is sound.
 *
 * The base namespace's list (_r_debug.r_map, then l_next) is in load
 * order and only appended to, so an object listed before a start-up
 * object is one too.  Mark the main program; follow DT_NEEDED names
 * breadth-first, each marking the first listed object whose l_name is the
 * name N, or ends in "/N", or whose DT_SONAME is N (glibc's choice is that
 * object or a later one); a name that matches nothing ("$ORIGIN/libx.so",
 * which glibc matches unexpanded) marks nothing, so that object is
 * confirmed like any other, never trusted wrongly.  Then take every object
 * up to the last one marked (which brings in LD_PRELOAD objects and the
 * vdso).
 *
 * It runs once, from a constructor (objcache.c), inside dl_iterate_phdr():
 * glibc changes the list only under the lock that holds, so the list
 * and the dynamic sections and names it points to stay put while it is
 * read.  No allocation: the candidates live on the stack. */
#define _GNU_SOURCE
#include "objects/startup.h"
#include "objects/discover.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>

struct scan {
	struct sfb_range *out;
	unsigned max, n;
};

#ifdef __GLIBC__
/* Dynamic entries read per object: far more than any real one has. */
#define MAX_DYN 4096
/* Link maps looked at: the candidates (72 bytes each) live on the stack. */
#define MAX_SCAN 128

struct candidate {
	const struct link_map *lm;
	struct sfb_range map;     /* start 0: none (no dynamic section found) */
	const char *strtab;       /* NULL: the names below are unknown */
	size_t strsz;
	const char *base;         /* l_name after its last '/' */
	const char *soname;
	uint32_t base_hash, soname_hash;
	bool marked;
};

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* The string at off in c's string table, or NULL if it does not end
 * inside the table. */
static const char *string_at(const struct candidate *c, uint64_t off)
{
	if (!c->strtab || off >= c->strsz || !memchr(c->strtab + off, 0, c->strsz - off))
		return NULL;
	return c->strtab + off;
}

/* The dynamic section's entries, within the object's mapping. */
static size_t dyn_count(const struct candidate *c)
{
	uintptr_t at = (uintptr_t)c->lm->l_ld;
	if (!c->map.start || at < c->map.start || at >= c->map.end)
		return 0;
	size_t room = (c->map.end - at) / sizeof(ElfW(Dyn));
	return room < MAX_DYN ? room : MAX_DYN;
}

/* A table address as the dynamic section holds it: relocated in place
 * (glibc does so where the section is writable, as on x86-64) or not. */
static uintptr_t in_object(const struct candidate *c, uintptr_t v)
{
	if (v - c->map.start < c->map.end - c->map.start)
		return v;
	v += c->lm->l_addr;
	return v - c->map.start < c->map.end - c->map.start ? v : 0;
}

static void describe(struct candidate *c, const struct link_map *lm)
{
	memset(c, 0, sizeof *c);
	c->lm = lm;
	struct sfb_found r;
	if (lm->l_ld && sfb_discover((void *)lm->l_ld, &r) == 0 && r.dlfo_link_map == lm)
		c->map = (struct sfb_range){ (uintptr_t)r.dlfo_map_start,
					     (uintptr_t)r.dlfo_map_end };
	const ElfW(Dyn) *d = lm->l_ld;
	size_t n = dyn_count(c);
	uintptr_t strtab = 0;
	uint64_t strsz = 0, soname = UINT64_MAX;
	for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_STRTAB)
			strtab = in_object(c, d[i].d_un.d_ptr);
		else if (d[i].d_tag == DT_STRSZ)
			strsz = d[i].d_un.d_val;
		else if (d[i].d_tag == DT_SONAME)
			soname = d[i].d_un.d_val;
	}
	if (strtab && strsz <= c->map.end - strtab) {
		c->strtab = (const char *)strtab;
		c->strsz = strsz;
	}
	const char *name = lm->l_name ? lm->l_name : "";
	const char *slash = strrchr(name, '/');
	c->base = slash ? slash + 1 : name;
	c->base_hash = name_hash(c->base);
	c->soname = soname != UINT64_MAX ? string_at(c, soname) : NULL;
	c->soname_hash = c->soname ? name_hash(c->soname) : 0;
}

/* Matching more than glibc does is harmless (the first match in list
 * order is what counts); matching less is not. */
static bool matches(const struct candidate *c, const char *want, uint32_t want_hash,
		    bool has_slash)
{
	if (has_slash && c->lm->l_name && !strcmp(c->lm->l_name, want))
		return true;
	if (!has_slash && *c->base && c->base_hash == want_hash && !strcmp(c->base, want))
		return true;
	return c->soname && c->soname_hash == want_hash && !strcmp(c->soname, want);
}

/* Mark the first candidate matching the needed name want; its index, or
 * -1 if none or already marked. */
static int mark_needed(struct candidate *c, unsigned n, const char *want)
{
	bool has_slash = strchr(want, '/') != NULL;
	uint32_t h = name_hash(want);
	for (unsigned i = 0; i < n; i++) {
		if (!matches(&c[i], want, h, has_slash))
			continue;
		if (c[i].marked)
			return -1;
		c[i].marked = true;
		return (int)i;
	}
	return -1;
}

static void scan_list(struct scan *s)
{
	struct candidate c[MAX_SCAN];
	unsigned n = 0, limit = s->max < MAX_SCAN ? s->max : MAX_SCAN;
	for (const struct link_map *lm = _r_debug.r_map; lm && n < limit; lm = lm->l_next)
		describe(&c[n++], lm);
	if (n == 0)
		return;
	/* Breadth-first from the main program; queue[] holds marked indices
	 * in the order marked, each once. */
	unsigned queue[MAX_SCAN], head = 0, tail = 0, last = 0;
	c[0].marked = true;
	queue[tail++] = 0;
	while (head < tail) {
		const struct candidate *m = &c[queue[head++]];
		const ElfW(Dyn) *d = m->lm->l_ld;
		size_t nd = dyn_count(m);
		for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
			const char *want = d[i].d_tag == DT_NEEDED ? string_at(m, d[i].d_un.d_val)
								   : NULL;
			int k = want && *want ? mark_needed(c, n, want) : -1;
			if (k < 0)
				continue;
			queue[tail++] = (unsigned)k;
			if ((unsigned)k > last)
				last = (unsigned)k;
		}
	}
	/* From 1: the main program is kept anyway (objcache.h). */
	for (unsigned i = 1; i <= last; i++)
		if (c[i].map.start)
			s->out[s->n++] = c[i].map;
}

static int scan_once(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	scan_list(arg);
	return 1; /* done, under this one hold of the lock */
}

#else
/* musl never unloads an object (its dlclose() leaves it mapped): every
 * object loaded so far stays, whether start-up or dlopen() loaded it. */
static int scan_once(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct scan *s = arg;
	struct sfb_found r;
	for (int i = 0; i < info->dlpi_phnum && s->n < s->max; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		void *at = (void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		if (sfb_discover(at, &r) == 0 && !sfb_found_is_main(&r))
			s->out[s->n++] = (struct sfb_range){ (uintptr_t)r.dlfo_map_start,
							     (uintptr_t)r.dlfo_map_end };
		break;
	}
	return 0;
}
#endif

unsigned sfb_startup_objects(struct sfb_range *out, unsigned max)
{
	struct scan s = { out, max, 0 };
	if (max)
		dl_iterate_phdr(scan_once, &s);
	return s.n;
}
