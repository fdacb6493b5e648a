/* Discovery (discover.h): PC -> loaded object, one of three ways chosen
 * at load time; see docs/DESIGN.md, Discovery.
 * - glibc >= 2.35: _dl_find_object() itself (an IFUNC resolves to it).
 * - A static program: its own headers, __ehdr_start.
 * - glibc's answer for the main program is replaced by the whole program
 *   (sfb_discover_main()).
 * - glibc < 2.35 and musl: a double-buffered table that only normal
 *   context writes (dl_iterate_phdr) and walks only read, never waiting;
 *   an entry that dlclose() may have removed is checked against the
 *   kernel's copy of its headers before use.
 * No allocation: the table is static. */
#define _GNU_SOURCE
#include "objects/discover.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>


#define TABLE_MAX 512
#define PAGE_MASK ((uintptr_t)4095)

struct entry {
	uintptr_t start, end, ehdr, bias;
	const ElfW(Phdr) *phdr;
	const ElfW(Dyn) *dyn;
	const char *name;
	struct link_map *lm;
	void *eh_frame;
	uint16_t phnum;
	uint8_t flags; /* SFB_FOUND_* */
};

struct table {
	_Atomic unsigned seq; /* odd while written */
	unsigned n;
	struct entry e[TABLE_MAX];
};

static struct table tables[2];
static _Atomic unsigned published; /* index of the copy walks read */
static bool table_built;
static unsigned long long seen_adds, seen_subs;
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static bool use_table;

extern const ElfW(Ehdr) __ehdr_start __attribute__((weak, visibility("hidden")));

/* The answer of the way chosen for this process, as it gives it. */
static int sfb_discover_any(void *pc, struct sfb_found *out);

/* The extent of an object's PT_LOAD segments, its ELF header (the
 * segment that maps file offset 0), dynamic section and unwind table. */
static bool entry_from(const ElfW(Phdr) *ph, unsigned n, uintptr_t bias, struct entry *e)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	memset(e, 0, sizeof *e);
	for (unsigned i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD) {
			if (ph[i].p_vaddr < lo)
				lo = ph[i].p_vaddr;
			if (ph[i].p_vaddr + ph[i].p_memsz > hi)
				hi = ph[i].p_vaddr + ph[i].p_memsz;
			if (ph[i].p_offset == 0)
				e->ehdr = bias + ph[i].p_vaddr;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			e->dyn = (const ElfW(Dyn) *)(bias + ph[i].p_vaddr);
		} else if (ph[i].p_type == PT_GNU_EH_FRAME) {
			e->eh_frame = (void *)(bias + ph[i].p_vaddr);
		}
	}
	if (lo >= hi)
		return false;
	e->start = bias + (lo & ~PAGE_MASK);
	e->end = bias + hi;
	e->bias = bias;
	e->phdr = ph;
	e->phnum = (uint16_t)n;
	return true;
}

static void found_from(const struct entry *e, struct sfb_found *f)
{
	memset(f, 0, sizeof *f);
	f->dlfo_flags = SFB_FOUND_OWN | e->flags;
	f->dlfo_map_start = (void *)e->start;
	f->dlfo_map_end = (void *)e->end;
	f->dlfo_link_map = e->lm;
	f->dlfo_eh_frame = e->eh_frame;
	f->ehdr = e->ehdr;
	f->bias = e->bias;
	f->dyn = e->dyn;
	f->name = e->flags & SFB_FOUND_MAIN ? "" : e->name;
	f->phdr = e->phdr;
	f->phnum = e->phnum;
}

/* Does a PT_LOAD segment hold pc?  The kernel maps the program and the
 * dynamic linker segment by segment, and may put other mappings in the
 * holes between their segments. */
static bool in_segment(const ElfW(Phdr) *ph, unsigned n, uintptr_t bias, uintptr_t pc)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && pc - bias - (ph[i].p_vaddr & ~PAGE_MASK) <
							  ph[i].p_memsz + (ph[i].p_vaddr & PAGE_MASK))
			return true;
	return false;
}

/* ---- Static executables ------------------------------------------------ */

static int discover_static(void *pc, struct sfb_found *out)
{
	const ElfW(Ehdr) *eh = &__ehdr_start;
	if (!eh || eh->e_phentsize != sizeof(ElfW(Phdr)))
		return -1;
	const ElfW(Phdr) *ph = (const void *)((uintptr_t)eh + eh->e_phoff);
	/* The bias from the segment holding the header (static PIE). */
	uintptr_t bias = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
			bias = (uintptr_t)eh - ph[i].p_vaddr;
	struct entry e;
	if (!entry_from(ph, eh->e_phnum, bias, &e) || (uintptr_t)pc - e.start >= e.end - e.start ||
	    !in_segment(ph, eh->e_phnum, bias, (uintptr_t)pc))
		return -1;
	e.flags = SFB_FOUND_MAIN | SFB_FOUND_STAYS;
	found_from(&e, out);
	return 0;
}

/* ---- The table ----------------------------------------------------------- */

/* Copy len bytes at addr, or fail if any of them is not mapped readable
 * now: the kernel copies, so an object unmapped meanwhile cannot fault
 * the walk here. */
static bool copy_mapped(void *to, uintptr_t addr, size_t len)
{
	struct iovec local = { to, len }, remote = { (void *)addr, len };
	return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) ==
	       (long)len;
}

/* Is the object recorded in e still the one mapped there, and does one of
 * its segments hold pc?  After a dlclose() its pages may be gone, or
 * another object's: its ELF and program headers are copied (never read
 * in place) and compared with what the refresh recorded.  Objects that
 * stay are read in place. */
static bool still_there(const struct entry *e, uintptr_t pc)
{
	if (e->flags & (SFB_FOUND_STAYS | SFB_FOUND_MAIN))
		return in_segment(e->phdr, e->phnum, e->bias, pc);
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph[32];
	if (!e->ehdr || e->ehdr != e->start || e->phnum > 32 ||
	    !copy_mapped(&eh, e->ehdr, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum != e->phnum ||
	    e->ehdr + eh.e_phoff != (uintptr_t)e->phdr ||
	    !copy_mapped(ph, (uintptr_t)e->phdr, e->phnum * sizeof ph[0]))
		return false;
	struct entry now;
	return entry_from(ph, e->phnum, e->bias, &now) && now.start == e->start &&
	       now.end == e->end && now.dyn == e->dyn && now.ehdr == e->ehdr &&
	       in_segment(ph, e->phnum, e->bias, pc);
}

static int discover_table(void *pc, struct sfb_found *out)
{
	uintptr_t a = (uintptr_t)pc;
	for (int tries = 0; tries < 4; tries++) {
		const struct table *t =
			&tables[atomic_load_explicit(&published, memory_order_acquire) & 1];
		unsigned seq = atomic_load_explicit(&t->seq, memory_order_acquire);
		if (seq == 0 || (seq & 1))
			continue;
		unsigned lo = 0, hi = t->n < TABLE_MAX ? t->n : TABLE_MAX;
		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;
			if (t->e[mid].start <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		struct entry e;
		bool hit = lo > 0;
		memcpy(&e, &t->e[hit ? lo - 1 : 0], sizeof e);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&t->seq, memory_order_relaxed) != seq)
			continue;
		if (!hit || a - e.start >= e.end - e.start)
			return -1;
		if (!still_there(&e, a))
			return -1;
		found_from(&e, out);
		return 0;
	}
	return -1;
}

struct collect {
	struct table *t;
	unsigned long long adds, subs;
	bool counted;
	const struct link_map *cursor; /* glibc: the base namespace's list */
};

#ifdef __GLIBC__
/* The base namespace's link_map of the object dl_iterate_phdr() reports:
 * it reports l_name and l_addr, in list order, under the lock that keeps
 * the list still. */
static struct link_map *link_map_of(struct collect *c, const struct dl_phdr_info *info)
{
	const struct link_map *lm = c->cursor;
	for (unsigned pass = 0; pass < 2; pass++, lm = _r_debug.r_map) {
		for (unsigned k = 0; lm && k < 4 * TABLE_MAX; lm = lm->l_next, k++) {
			if (lm->l_name == info->dlpi_name && lm->l_addr == info->dlpi_addr) {
				c->cursor = lm->l_next;
				return (struct link_map *)lm;
			}
		}
	}
	return NULL;
}
#define OBJECTS_STAY 0
#else
/* musl never unloads an object: dlclose() leaves it mapped. */
static struct link_map *link_map_of(struct collect *c, const struct dl_phdr_info *info)
{
	(void)c, (void)info;
	return NULL;
}
#define OBJECTS_STAY SFB_FOUND_STAYS
#endif

static int collect_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct collect *c = arg;
	bool first = !c->counted;
	if (first && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	c->counted = true;
	struct entry *e = &c->t->e[c->t->n];
	if (c->t->n >= TABLE_MAX || !entry_from(info->dlpi_phdr, info->dlpi_phnum,
						 info->dlpi_addr, e))
		return 0;
	e->name = info->dlpi_name;
	e->lm = link_map_of(c, info);
	/* The first object reported is the main program. */
	e->flags = (uint8_t)(OBJECTS_STAY | (first ? SFB_FOUND_MAIN | SFB_FOUND_STAYS : 0));
	c->t->n++;
	return 0;
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1;
}

static void rebuild(void)
{
	unsigned next = (atomic_load_explicit(&published, memory_order_relaxed) + 1) & 1;
	struct table *t = &tables[next];
	unsigned seq = atomic_load_explicit(&t->seq, memory_order_relaxed);
	atomic_store_explicit(&t->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	t->n = 0;
	struct collect c = { .t = t };
#ifdef __GLIBC__
	c.cursor = _r_debug.r_map;
#endif
	dl_iterate_phdr(collect_one, &c);
	/* By start (insertion: nearly sorted already). */
	for (unsigned i = 1; i < t->n; i++)
		for (unsigned k = i; k > 0 && t->e[k - 1].start > t->e[k].start; k--) {
			struct entry x = t->e[k];
			t->e[k] = t->e[k - 1];
			t->e[k - 1] = x;
		}
	atomic_store_explicit(&t->seq, seq + 2, memory_order_release);
	atomic_store_explicit(&published, next, memory_order_release);
	seen_adds = c.adds;
	seen_subs = c.subs;
	table_built = true;
}

void sfb_discover_counters(unsigned long long c[2])
{
	c[0] = c[1] = 0;
	dl_iterate_phdr(read_counters, c);
}

void sfb_discover_refresh(void)
{
	if (!use_table)
		return;
	int saved = errno;
	pthread_mutex_lock(&refresh_lock);
	unsigned long long c[2] = { 0, 0 };
	if (table_built)
		sfb_discover_counters(c);
	if (!table_built || c[0] != seen_adds || c[1] != seen_subs)
		rebuild();
	pthread_mutex_unlock(&refresh_lock);
	errno = saved;
}

/* ---- The main program, whole (glibc >= 2.35) ----------------------------- */

#ifdef __GLIBC__
/* glibc's _dl_find_object() gives the main program segment by segment
 * when its segments leave gaps (-z max-page-size larger than the page, a
 * text segment placed apart): the segment holding the PC, whose start is
 * no ELF header.  The whole program comes from the loader's own records
 * instead: the headers the kernel passed in the auxiliary vector (ld.so
 * rewrites them when it loaded the program itself), at the link_map's
 * l_addr.  Described once, by whoever first needs it: the constructor,
 * or a walk before it (getauxval() is async-signal-safe); a description
 * is claimed by compare-and-swap and published by a release store, and a
 * caller that finds it being written keeps glibc's answer. */
enum { MAIN_NEW, MAIN_WRITING, MAIN_READY, MAIN_UNUSABLE };
static struct {
	_Atomic int state;
	struct entry e;
} main_whole;

static int describe_main(struct link_map *lm)
{
	const ElfW(Phdr) *ph = (const void *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	if (!ph || n == 0 || n >= 0xffff || getauxval(AT_PHENT) != sizeof *ph ||
	    !entry_from(ph, (unsigned)n, lm->l_addr, &main_whole.e))
		return MAIN_UNUSABLE;
	/* The headers are the program's if they say where they are
	 * (PT_PHDR) and it is where they were found. */
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR && lm->l_addr + ph[i].p_vaddr != (uintptr_t)ph)
			return MAIN_UNUSABLE;
	main_whole.e.lm = lm;
	main_whole.e.dyn = lm->l_ld;
	main_whole.e.flags = SFB_FOUND_MAIN | SFB_FOUND_STAYS;
	return MAIN_READY;
}

/* Replace glibc's answer for the main program by the whole program, or
 * leave it as it is if the auxiliary vector's headers do not hold it.
 * Async-signal-safe. */
static void sfb_discover_main(struct sfb_found *f)
{
	int state = atomic_load_explicit(&main_whole.state, memory_order_acquire);
	if (state == MAIN_NEW) {
		if (!atomic_compare_exchange_strong_explicit(&main_whole.state, &state,
							     MAIN_WRITING, memory_order_acquire,
							     memory_order_relaxed))
			return;
		state = describe_main(f->dlfo_link_map);
		atomic_store_explicit(&main_whole.state, state, memory_order_release);
	}
	const struct entry *e = &main_whole.e;
	/* glibc's answer lies inside the program's span, or the headers
	 * were another object's. */
	if (state != MAIN_READY || (uintptr_t)f->dlfo_map_start < e->start ||
	    (uintptr_t)f->dlfo_map_end > e->end || f->dlfo_link_map != e->lm)
		return;
	void *eh_frame = f->dlfo_eh_frame;
	found_from(e, f);
	f->dlfo_eh_frame = eh_frame;
}
#endif

int sfb_discover(void *pc, struct sfb_found *out)
{
	if (sfb_discover_any(pc, out) != 0)
		return -1;
#ifdef __GLIBC__
	if (!(out->dlfo_flags & SFB_FOUND_OWN) && out->dlfo_link_map &&
	    out->dlfo_link_map == _r_debug.r_map)
		sfb_discover_main(out);
#endif
	return 0;
}

/* ---- Choosing ------------------------------------------------------------ */

#ifdef __GLIBC__
/* Weak: absent before glibc 2.35 (and then the table is used). */
#pragma weak _dl_find_object
struct dl_find_object;
extern int _dl_find_object(void *, struct dl_find_object *);
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak));

typedef int discover_fn(void *, struct sfb_found *);

#if defined(__has_attribute) && __has_attribute(no_stack_protector)
#define NO_STACK_PROTECTOR __attribute__((no_stack_protector))
#else
#define NO_STACK_PROTECTOR
#endif

/* A static program: this object has no dynamic section (static, not
 * PIE), or it is a PIE executable (DF_1_PIE) without a program
 * interpreter (static PIE).  Not whether _dl_relocate_static_pie is
 * defined: crt1.o, which every program linked -no-pie starts with,
 * dynamic ones too, defines it on Debian.  Runs before relocation is
 * complete (and, static, before TLS is set up): reads this object's own
 * dynamic section and program headers, nothing else. */
__attribute__((no_sanitize_address)) NO_STACK_PROTECTOR static bool is_static(void)
{
	if (!_DYNAMIC)
		return true;
	bool pie = false;
	for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_PIE))
			pie = true;
	const ElfW(Ehdr) *eh = &__ehdr_start;
	if (!pie || !eh)
		return false;
	const ElfW(Phdr) *ph = (const void *)((uintptr_t)eh + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_INTERP)
			return false;
	return true;
}

__attribute__((used, no_sanitize_address)) NO_STACK_PROTECTOR static discover_fn *
resolve_discover(void)
{
	if (is_static())
		return discover_static;
	if (_dl_find_object)
		return (discover_fn *)(void (*)(void))_dl_find_object;
	return discover_table;
}

/* struct sfb_found must read as glibc's struct dl_find_object. */
#ifdef DLFO_STRUCT_HAS_EH_DBASE
#include <stddef.h>
_Static_assert(offsetof(struct sfb_found, dlfo_map_start) ==
			       offsetof(struct dl_find_object, dlfo_map_start) &&
		       offsetof(struct sfb_found, dlfo_map_end) ==
			       offsetof(struct dl_find_object, dlfo_map_end) &&
		       offsetof(struct sfb_found, dlfo_link_map) ==
			       offsetof(struct dl_find_object, dlfo_link_map) &&
		       offsetof(struct sfb_found, ehdr) >= sizeof(struct dl_find_object),
	       "struct sfb_found");
#endif

/* An IFUNC: on glibc >= 2.35 the call goes straight to _dl_find_object. */
static int sfb_discover_any(void *pc, struct sfb_found *out)
	__attribute__((ifunc("resolve_discover")));

__attribute__((constructor(101))) static void discover_init(void)
{
	use_table = !is_static() && !_dl_find_object;
	sfb_discover_refresh();
	/* The main program, described before any walk needs it. */
	struct sfb_found f;
	if (_r_debug.r_map)
		sfb_discover(_r_debug.r_map->l_ld, &f);
}
#else
/* musl: a static program (no dynamic section) has its own headers; a
 * dynamic one, or a static PIE, the table. */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak));

static int sfb_discover_any(void *pc, struct sfb_found *out)
{
	return _DYNAMIC ? discover_table(pc, out) : discover_static(pc, out);
}

__attribute__((constructor(101))) static void discover_init(void)
{
	use_table = _DYNAMIC != NULL;
	sfb_discover_refresh();
}
#endif
