/* The object cache: which loaded object holds a PC, and its rows through
 * one function, sfb_object_row() (SFrame, else .eh_frame CFI; the walker
 * does not care which).  The protocol and why each rule is there:
 * docs/DESIGN.md, "Object cache".  Rules:
 * - Only what was derived from the object discovery (discover.h) reports
 *   is remembered, and every hit is confirmed against discovery and the
 *   object's fingerprint, so a PC in an object dlclose() removed is never
 *   matched once dlclose() has returned.
 * - Slots are seqlocks (seqlock.h); writers never wait, readers never
 *   write.
 * - Kept objects (cannot be unloaded) are copied once into the kept
 *   tables below, which walks search first, without confirmation.
 * Nothing here allocates: the tables are static. */
#ifndef SFB_OBJCACHE_H
#define SFB_OBJCACHE_H

#include <elf.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rows/cfi.h"
#include "rows/sframe_decode.h"
#include "objects/startup.h"

#define SFB_CACHE_SLOTS 1024
/* Coarse index buckets per cached object (sframe_decode.h): 1 KiB a slot. */
#define SFB_COARSE_BUCKETS 256
#define SFB_NO_PH 0xffffu
/* Build-ids are 20 bytes (SHA-1) unless chosen otherwise; longer ones
 * are compared by their first 20. */
#define SFB_BUILD_ID_MAX 20

enum sfb_source {
	SFB_SRC_NONE = 0,
	SFB_SRC_SFRAME = 1,
	SFB_SRC_MEMORY = 2,
	/* Code registered at run time (jit_registry.h): its rows are read
	 * only through sfb_jit_row(), which finds the registration again. */
	SFB_SRC_JIT = 3,
};

struct sfb_object {
	/* identity, from _dl_find_object */
	uintptr_t map_start, map_end;
	const void *link_map;
	uintptr_t bias;          /* l_addr */
	uintptr_t exec_lo, exec_hi; /* the executable PT_LOAD, for code reads */
	uint8_t live;            /* 0: tombstone */
	uint8_t source;          /* enum sfb_source */
	int8_t status;           /* SFB_OK, or why its section was rejected */
	uint8_t frame_pointer;   /* V1/V2 SFRAME_F_FRAME_POINTER */
	uint8_t kept_entry_plus_one; /* never unloaded: 1 + the index of its kept
					 entry; 0 (a zeroed description): may be */
	uint32_t epoch;          /* unique per description: keys the row memo */
	/* Fingerprint: glibc reuses the mapping address and even the
	 * link_map of an unloaded object for the next one, so a cache hit
	 * also compares the program headers it relied on (their number, the
	 * executable PT_LOAD and PT_GNU_SFRAME, by index), how the section
	 * begins and the GNU build-id.  Without the build-id, a rebuilt
	 * object whose layout and section head did not change (one
	 * function's frame grew) passed for the old one, and the memo kept
	 * applying the old rows (t_churn, phase 0, p/q). */
	uint16_t phnum, exec_ph, sframe_ph, eh_frame_ph; /* SFB_NO_PH: none */
	uint16_t phoff;          /* e_phoff: in the first page */
	uintptr_t sframe_at;
	uint64_t sframe_len;
	uint8_t sframe_head[32];
	uint16_t build_id_off;   /* in the first page; 0: no build-id there */
	uint8_t build_id_len;    /* bytes compared: at most SFB_BUILD_ID_MAX */
	uint8_t build_id[SFB_BUILD_ID_MAX];
	struct sfb_section sec;  /* when source is SFRAME or MEMORY and status OK */
	int8_t cfi_status;       /* SFB_CFI_OK: cfi is usable; else why not (cfi.h) */
	/* The main program without a search table: its CFI is the index
	 * main_eh.h builds, once published (then cfi_status stays
	 * SFB_CFI_E_NO_TABLE). */
	uint8_t main_eh_index;
	struct sfb_cfi_section cfi;
	/* The cache slot's own description, of which this is a copy; NULL
	 * if the description was not cached.  Only ever prefetched. */
	const struct sfb_object *home;
};

/* Does o carry a validated section of SFrame rows (sec is usable)? */
static inline bool sfb_object_has_sframe(const struct sfb_object *o)
{
	return o->status == SFB_OK &&
	       (o->source == SFB_SRC_SFRAME || o->source == SFB_SRC_MEMORY);
}

/* Can a row come from o at all (SFrame or CFI)? */
static inline bool sfb_object_has_rows(const struct sfb_object *o)
{
	return sfb_object_has_sframe(o) || o->cfi_status == SFB_CFI_OK || o->main_eh_index ||
	       o->source == SFB_SRC_JIT;
}

/* The row for pc (a PC in o: exact, or a return address minus one) from
 * whichever source covers it: o's SFrame row, else (unless flags has
 * SFRAME_BT_NO_EH_FRAME) its CFI.  0, or the stop reason: no source
 * covers pc (SFRAME_BT_STOP_NO_UNWIND_INFO), o's .sframe was rejected and
 * nothing else covers it (..._BAD_SECTION), its CFI for pc could not be
 * used (..._BAD_EH_FRAME), or pc may lie in CFI that could not be
 * indexed (..._EH_FRAME_UNINDEXED: main_eh.h).  Async-signal-safe; the one place where
 * row sources are chosen: registered code's come from sfb_jit_row(). */
int sfb_object_row(const struct sfb_object *o, uintptr_t pc, unsigned flags,
		   struct sfb_row *row);

/* Find the object holding pc, discovering and caching it if needed; a PC
 * no loaded object holds is looked for among registered code
 * (jit_registry.h), whose descriptions are not cached.
 * Async-signal-safe.  Returns 0 and a consistent copy in *out, or a
 * sframe_bt_stop reason (SFRAME_BT_STOP_NO_OBJECT, ..._CACHE_FULL). */
int sfb_objcache_find(uintptr_t pc, struct sfb_object *out);

/* A new epoch (sfb_object.epoch), never given before: for each
 * description, registered code's included. */
uint32_t sfb_objcache_new_epoch(void) __attribute__((visibility("hidden")));

/* Objects that stay loaded, whose descriptions, made once and never
 * changed, are used without the per-walk confirmation.  The first entries
 * are kept without asking, each written when its object is first
 * described (from any context):
 *   SFB_KEPT_MAIN  the main program: glibc unloads only objects dlopen()
 *                  loaded;
 *   SFB_KEPT_LIBC  the object holding dl_iterate_phdr() as this library's
 *                  own reference resolved it (libc, or an interposer):
 *                  an object another still-loaded object is bound to is
 *                  not unloaded (glibc records the dependency), and every
 *                  thread's outermost frames lie in libc, so nearly every
 *                  walk that is not cut short ends there;
 *   SFB_KEPT_LDSO  the object holding _r_debug: the dynamic linker.
 * The others are objects sfb_objcache_keep_loaded() made RTLD_NODELETE,
 * claimed in order (n).  Each entry is published by a release store of its
 * start.  The ranges sit apart from the descriptions so that the search
 * reads one or two lines; hidden: the library's own, addressed directly. */
enum { SFB_KEPT_MAIN, SFB_KEPT_LIBC, SFB_KEPT_LDSO, SFB_KEPT_FIXED };

/* Whether o's object is never unloaded (a fixed, start-up or pinned kept
 * entry), and whether it is the main program. */
static inline bool sfb_object_is_kept(const struct sfb_object *o)
{
	return o->kept_entry_plus_one != 0;
}

static inline bool sfb_object_is_main(const struct sfb_object *o)
{
	return o->kept_entry_plus_one == SFB_KEPT_MAIN + 1;
}
#define SFB_KEPT_MAX (SFB_KEPT_FIXED + 15)

struct sfb_kept_table {
	_Atomic unsigned n; /* entries claimed, at most SFB_KEPT_MAX */
	/* Pins published: incremented (release) after each pinned entry's
	 * range is, so that a reader that saw a count before searching the
	 * table has found every pin it counts (sfb_objcache_note_recent()). */
	_Atomic unsigned pinned;
	struct {
		_Atomic uintptr_t start; /* 0 until published */
		uintptr_t end;
	} range[SFB_KEPT_MAX];
};
extern struct sfb_kept_table sfb_kept __attribute__((visibility("hidden")));

/* Objects loaded at start-up other than the main program (startup.h):
 * never unloaded either, and often many (a C++ server links dozens), so
 * they have a table of their own, searched by halves.  Their ranges are
 * found once, by a constructor (objcache.c), sorted by start and published
 * by a release store of n; [lo, hi) spans them all, so that most PCs
 * elsewhere (dlopen()ed objects are mapped below them) are turned away
 * by the line that holds n.  Entry j's description is written the first
 * time its object is described, like a fixed kept entry's, into
 * sfb_kept_object[SFB_KEPT_MAX + j], and published by a release store of
 * bit j of ready, on that same line: a sample in a start-up object reads
 * the header line and one or two lines of ranges, which a sample's start
 * fetches ahead (sfb_objcache_fetch_recalled()). */
#define SFB_STARTUP_MAX 128

struct sfb_startup_table {
	_Atomic unsigned n;
	uintptr_t lo, hi;
	_Atomic uint64_t ready[SFB_STARTUP_MAX / 64];
	struct sfb_range range[SFB_STARTUP_MAX] __attribute__((aligned(64)));
};
extern struct sfb_startup_table sfb_startup __attribute__((visibility("hidden")));
extern struct sfb_object sfb_kept_object[SFB_KEPT_MAX + SFB_STARTUP_MAX]
	__attribute__((visibility("hidden")));

/* The start-up entry whose range holds pc, or -1. */
static inline int sfb_objcache_startup_entry(uintptr_t pc)
{
	unsigned n = atomic_load_explicit(&sfb_startup.n, memory_order_acquire);
	/* n == 0: lo == hi == 0, nothing passes. */
	if (pc - sfb_startup.lo >= sfb_startup.hi - sfb_startup.lo)
		return -1;
	unsigned lo = 0, hi = n < SFB_STARTUP_MAX ? n : SFB_STARTUP_MAX;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (sfb_startup.range[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && pc < sfb_startup.range[lo - 1].end ? (int)lo - 1 : -1;
}

static inline bool sfb_objcache_startup_ready(unsigned j)
{
	return atomic_load_explicit(&sfb_startup.ready[j / 64], memory_order_acquire) >> (j % 64) &
	       1;
}

/* The kept description of the object holding pc, or NULL.
 * Async-signal-safe. */
static inline const struct sfb_object *sfb_objcache_kept(uintptr_t pc)
{
	unsigned n = atomic_load_explicit(&sfb_kept.n, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++) {
		uintptr_t start = atomic_load_explicit(&sfb_kept.range[i].start,
						       memory_order_acquire);
		if (start && pc - start < sfb_kept.range[i].end - start)
			return &sfb_kept_object[i];
	}
	int j = sfb_objcache_startup_entry(pc);
	if (j < 0 || !sfb_objcache_startup_ready((unsigned)j))
		return NULL;
	return &sfb_kept_object[SFB_KEPT_MAX + j];
}

/* Make the object holding addr stay loaded (dlopen() with RTLD_NOLOAD |
 * RTLD_NODELETE) and keep its description.  Normal context only.  0, or
 * -1 (no object, another namespace's, or the table is full). */
int sfb_objcache_keep_loaded(uintptr_t addr);

/* Hash positions: sfb_objcache_slot_of[p] is 0 (unbound), the slot bound
 * to position p plus one, or 0xffff while a writer binds it.  Hidden:
 * the library's own, addressed directly. */
extern _Atomic uint16_t sfb_objcache_slot_of[SFB_CACHE_SLOTS] __attribute__((visibility("hidden")));

/* The first hash position an object's probe chain visits. */
static inline unsigned sfb_objcache_position(uintptr_t map_start)
{
	uint64_t h = (uint64_t)(map_start >> 12) * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 40) % SFB_CACHE_SLOTS;
}

/* What a walk needs of an object to use the rows memoised for it, once
 * confirmed for the walk: its range and its description's epoch. */
struct sfb_confirmed {
	uintptr_t lo, hi;
	uint32_t epoch;
	const struct sfb_object *home; /* its slot's description */
};

/* The objects the thread confirmed last through the cache (not kept
 * ones), SFB_OBJCACHE_RECENT of them, so that a walk through two
 * dlopen()ed objects (an extension module and a library it loaded)
 * confirms both this way: each one's range, its slot, and the count of
 * pins published before the kept tables were searched for it.  Their
 * next confirmation reads that slot directly
 * (sfb_objcache_confirm_recent()).  The entry used last comes first:
 * the one a walk through one dlopen()ed object needs is checked alone.
 * Initial-exec TLS: no allocation.  A record torn by a signal's walk
 * costs a failed confirmation, never a wrong object: each confirmation
 * checks the slot against glibc's answer. */
#define SFB_OBJCACHE_RECENT 2
struct sfb_objcache_recent {
	struct sfb_objcache_recent_obj {
		uintptr_t lo, hi;
		uint16_t slot;
		uint16_t pins;
	} obj[SFB_OBJCACHE_RECENT];
};
extern __thread struct sfb_objcache_recent sfb_objcache_recent
	__attribute__((tls_model("initial-exec")));

/* Whether a recent entry's range holds address a (none, once forgotten:
 * lo = hi = 0). */
static inline bool sfb_objcache_recent_holds(const struct sfb_objcache_recent_obj *e, uintptr_t a)
{
	return a - e->lo < e->hi - e->lo;
}

/* The count of pins published (sfb_kept.pinned), to be read before the
 * kept tables are searched for an object that sfb_objcache_note_recent()
 * may then note. */
static inline unsigned sfb_objcache_pins(void)
{
	return atomic_load_explicit(&sfb_kept.pinned, memory_order_acquire);
}

/* Note o, a copy sfb_objcache_find() gave, as a recent object of the
 * thread, if its description is cached in a slot and it is not kept: then true,
 * and *out is what the walk needs of it.  pins: sfb_objcache_pins() as
 * read before the kept tables were searched for o's PC. */
bool sfb_objcache_note_recent(const struct sfb_object *o, unsigned pins,
			      struct sfb_confirmed *out);

/* Confirm that the object holding pc is the thread's first recent entry, as
 * sfb_objcache_find() would: glibc's answer for pc, the slot's identity
 * (seqlock read of the fields the check uses, not the whole description)
 * and the fingerprint against the object's memory.  Then *out holds its
 * range and epoch.  False if pc is outside every entry's range (checked
 * inline: an entry that holds it is first moved to the front); false,
 * and that entry forgotten, if an object has been pinned
 * since the kept tables were searched for it (a kept object is used
 * without a lookup: the kept tables come first), the slot now describes
 * a kept object, or any check fails (_slot(), out of line): the caller
 * then takes the full way.  Async-signal-safe. */
bool sfb_objcache_confirm_recent_slot(uintptr_t pc, struct sfb_confirmed *out);

/* The same for the entries after the first: the one whose range holds pc
 * is moved to the front and confirmed.  Out of line: a walk through one
 * dlopen()ed object never comes here. */
bool sfb_objcache_confirm_recent_other(uintptr_t pc, struct sfb_confirmed *out);

/* A copy of the description c was confirmed from, in *out, if its slot
 * still holds it (the same epoch): what a walk that confirmed an object
 * by sfb_objcache_confirm_recent() copies when it needs more of it than
 * its epoch, with no second confirmation.  *out is written even when the
 * answer is false: it must be a copy nothing uses.  Async-signal-safe. */
bool sfb_objcache_copy_confirmed(const struct sfb_confirmed *c, struct sfb_object *out);

static inline bool sfb_objcache_confirm_recent(uintptr_t pc, struct sfb_confirmed *out)
{
	const struct sfb_objcache_recent *rec = &sfb_objcache_recent;
	if (sfb_objcache_recent_holds(&rec->obj[0], pc))
		return sfb_objcache_confirm_recent_slot(pc, out);
	return sfb_objcache_confirm_recent_other(pc, out);
}

/* The object a thread's last sample confirmed first (a copy's home),
 * fetched ahead in its next: confirming an object reads its slot, its
 * ELF and program headers, its build-id and the head of its section,
 * each a cache miss on a sample, one after another.  Like the memo's
 * recall (rowmemo.h), a hint only: the walk confirms the object as
 * always, and a slot rewritten meanwhile costs useless prefetches.
 * Initial-exec TLS: no allocation. */
extern __thread const struct sfb_object *sfb_objcache_recalled
	__attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline)) void sfb_objcache_fetch_recalled(void)
{
	/* Every walk's first object is looked for among the kept ones. */
	__builtin_prefetch(&sfb_kept);
	__builtin_prefetch(&sfb_startup);
	__builtin_prefetch(&sfb_startup.range);
	const struct sfb_object *o = sfb_objcache_recalled;
	if (!o)
		return;
	for (size_t k = 0; k < sizeof *o; k += 64)
		__builtin_prefetch((const char *)o + k);
	/* Racy reads of a slot that a writer may be changing: relaxed, and
	 * only prefetched (a prefetch never faults). */
	uintptr_t start = __atomic_load_n(&o->map_start, __ATOMIC_RELAXED);
	__builtin_prefetch(&sfb_objcache_slot_of[sfb_objcache_position(start)]);
	uintptr_t ph = start + __atomic_load_n(&o->phoff, __ATOMIC_RELAXED);
	__builtin_prefetch((const void *)start);
	__builtin_prefetch((const void *)(ph + sizeof(Elf64_Phdr) *
					    __atomic_load_n(&o->exec_ph, __ATOMIC_RELAXED)));
	__builtin_prefetch((const void *)(ph + sizeof(Elf64_Phdr) *
					    __atomic_load_n(&o->sframe_ph, __ATOMIC_RELAXED)));
	__builtin_prefetch((const void *)__atomic_load_n(&o->sframe_at, __ATOMIC_RELAXED));
	__builtin_prefetch((const void *)(start + __atomic_load_n(&o->build_id_off,
								 __ATOMIC_RELAXED)));
}

/* Discover every loaded object now (dl_iterate_phdr: normal context only).
 * Returns the number of objects with SFrame rows. */
int sfb_objcache_warmup(void);

/* Statistics for tests and the benchmark. */
struct sfb_cache_stats {
	unsigned slots_used, discoveries, reclaimed;
	unsigned slots_handed; /* slots bound to a position so far (dense) */
};
void sfb_objcache_stats(struct sfb_cache_stats *st);

#endif
