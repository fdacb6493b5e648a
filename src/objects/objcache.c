/* The object cache.  The protocol is described in objcache.h. */
#define _GNU_SOURCE
#include "objects/objcache.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "backtrace.h"
#include "objects/discover.h"
#include "objects/jit_registry.h"
#include "arch/arch.h"
#include "objects/elf_phdrs.h"
#include "base/entry.h"
#include "base/memread.h"
#include "base/seqlock.h"
#include "objects/main_eh.h"
#include "rows/sframe_format.h"
#include "objects/startup.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

struct sfb_slot {
	sfb_seq seq;
	struct sfb_object obj;
};

static struct sfb_slot table[SFB_CACHE_SLOTS];

/* Slots are handed out densely, in the order objects are first seen, and
 * found through hash positions: position p, when a writer first uses it,
 * is bound for good to the next unused slot (slot_of[p] = slot + 1; 0
 * unbound, which ends a probe chain; SLOT_BINDING while being bound).
 * Why not hash into the table itself: each first-touched page of .bss
 * costs two page faults, and hashed slots would put each object on a page
 * of its own (docs/DESIGN.md, "Object cache").  There is one slot per
 * position and each position is bound at most once, so binding never
 * runs out of slots. */
_Atomic uint16_t sfb_objcache_slot_of[SFB_CACHE_SLOTS];
#define SLOT_BINDING 0xffffu
static _Atomic unsigned slots_bound;

/* Each slot's coarse index over its object's FDEs (sframe_decode.h),
 * written by the slot's writer while it owns the slot.  A reader's copy of
 * the object points here; if the slot is rewritten while a walk still uses
 * the copy, the index's checked ends send the lookup to the full search. */
static uint32_t coarse_index[SFB_CACHE_SLOTS][SFB_COARSE_BUCKETS];
static _Atomic unsigned stat_discoveries, stat_reclaimed;
/* Even, from 2: a walk that refuses .eh_frame memoises its rows under
 * epoch + 1 (walk.c), and no entry ever written has epoch 0. */
static _Atomic uint32_t next_epoch = 2;

uint32_t sfb_objcache_new_epoch(void)
{
	return atomic_fetch_add_explicit(&next_epoch, 2, memory_order_relaxed);
}

/* objcache.h: sfb_objcache_fetch_recalled(). */
__thread const struct sfb_object *sfb_objcache_recalled __attribute__((tls_model("initial-exec")));

/* The slot bound to position p; -1 if p is unbound (a probe chain ends
 * there), -2 while a writer binds it (skipped, like a busy slot). */
static int bound_slot(unsigned p)
{
	unsigned b = atomic_load_explicit(&sfb_objcache_slot_of[p], memory_order_acquire);
	return b == 0 ? -1 : b == SLOT_BINDING ? -2 : (int)b - 1;
}

/* A description copied 16 bytes at a time in straight-line code: every
 * walk through a dlopen()ed object copies one, and gcc's choice for a
 * copy of this size, rep movsq, costs a startup of tens of cycles
 * (docs/SPEED.md). */
typedef uint64_t sfb_chunk __attribute__((vector_size(16), aligned(8), may_alias));
_Static_assert(sizeof(struct sfb_object) % sizeof(sfb_chunk) == 0, "whole chunks");

/* What same_object() and fingerprint_matches() read of a description:
 * every member before its sections, and where its .eh_frame_hdr lies
 * (copied apart, by slot_read()). */
#define IDENTITY_CHUNKS ((offsetof(struct sfb_object, sec) + sizeof(sfb_chunk) - 1) / sizeof(sfb_chunk))
#define ALL_CHUNKS (sizeof(struct sfb_object) / sizeof(sfb_chunk))
_Static_assert(IDENTITY_CHUNKS <= ALL_CHUNKS, "in the object");

static inline void copy_chunks(struct sfb_object *to, const struct sfb_object *from, size_t n)
{
	sfb_chunk *d = (sfb_chunk *)(void *)to;
	const sfb_chunk *f = (const sfb_chunk *)(const void *)from;
#pragma GCC unroll 32
	for (size_t k = 0; k < n; k++)
		d[k] = f[k];
}

/* Seqlock read: a copy of slot i (the whole description, or with
 * identity_only its identity alone), or false if it was empty, being
 * written, or changed while we copied. */
static inline bool slot_read_some(unsigned i, struct sfb_object *out, uint32_t *seq_out,
				  bool identity_only)
{
	struct sfb_slot *s = &table[i];
	uint32_t seq = sfb_seq_begin(&s->seq);
	*seq_out = seq;
	if (!sfb_seq_stable(seq))
		return false;
	if (identity_only) {
		copy_chunks(out, &s->obj, IDENTITY_CHUNKS);
		out->cfi.hdr_addr = s->obj.cfi.hdr_addr;
		out->cfi.hdr.len = s->obj.cfi.hdr.len;
	} else {
		copy_chunks(out, &s->obj, ALL_CHUNKS);
	}
	return !sfb_seq_changed(&s->seq, seq);
}

static bool slot_read(unsigned i, struct sfb_object *out, uint32_t *seq_out)
{
	return slot_read_some(i, out, seq_out, false);
}

/* objcache.h: sfb_objcache_kept().  n starts past the fixed
 * entries, which are claimed once each. */
struct sfb_kept_table sfb_kept = { .n = SFB_KEPT_FIXED };
struct sfb_startup_table sfb_startup;
struct sfb_object sfb_kept_object[SFB_KEPT_MAX + SFB_STARTUP_MAX];

static void publish_kept(unsigned i, const struct sfb_object *o)
{
	sfb_kept_object[i] = *o;
	sfb_kept_object[i].kept_entry_plus_one = (uint8_t)(i + 1);
	sfb_kept.range[i].end = o->map_end;
	atomic_store_explicit(&sfb_kept.range[i].start, o->map_start, memory_order_release);
}

/* A fixed or start-up entry is written once, by the first to describe its
 * object; the others' descriptions are the same object's.  (Pins are
 * written by sfb_objcache_keep_loaded(), which claims them through n.) */
static void keep_if_kept(const struct sfb_object *o)
{
	static _Atomic uint8_t claimed[SFB_KEPT_MAX + SFB_STARTUP_MAX];
	unsigned i = o->kept_entry_plus_one - 1u;
	bool fixed = i < SFB_KEPT_FIXED;
	uint8_t none = 0;
	if (!sfb_object_is_kept(o) || o->status != SFB_OK || (!fixed && i < SFB_KEPT_MAX) ||
	    i >= SFB_KEPT_MAX + SFB_STARTUP_MAX ||
	    !atomic_compare_exchange_strong_explicit(&claimed[i], &none, 1, memory_order_acquire,
						     memory_order_relaxed))
		return;
	if (fixed) {
		publish_kept(i, o);
		return;
	}
	unsigned j = i - SFB_KEPT_MAX;
	sfb_kept_object[i] = *o;
	atomic_fetch_or_explicit(&sfb_startup.ready[j / 64], (uint64_t)1 << (j % 64),
				 memory_order_release);
}

/* The start-up entry of the object mapped at [start, end), or -1. */
static int startup_entry_of(uintptr_t start, uintptr_t end)
{
	int j = sfb_objcache_startup_entry(start);
	return j >= 0 && sfb_startup.range[j].start == start && sfb_startup.range[j].end == end
		       ? j
		       : -1;
}

/* Find the objects loaded at start-up (startup.h) and publish their
 * ranges.  A constructor: it must run in normal context, before walks
 * need it; a walk before it (a signal during start-up) confirms those
 * objects like any other (its cost: docs/SPEED.md). */
__attribute__((constructor)) static void find_startup_objects(void)
{
	SFB_ENTRY;
	struct sfb_range r[SFB_STARTUP_MAX];
	unsigned n = sfb_startup_objects(r, SFB_STARTUP_MAX);
	for (unsigned i = 1; i < n; i++) /* by start: a handful, nearly sorted */
		for (unsigned k = i; k > 0 && r[k - 1].start > r[k].start; k--) {
			struct sfb_range t = r[k];
			r[k] = r[k - 1];
			r[k - 1] = t;
		}
	memcpy(sfb_startup.range, r, n * sizeof r[0]);
	if (n) { /* mappings do not overlap: the last ends last */
		sfb_startup.lo = r[0].start;
		sfb_startup.hi = r[n - 1].end;
	}
	atomic_store_explicit(&sfb_startup.n, n, memory_order_release);
}

/* Which fixed kept entry an object takes (objcache.h), plus one; 0 if it
 * may be unloaded. */
static uint8_t kept_entry_of(const struct sfb_found *r)
{
	uintptr_t lo = (uintptr_t)r->dlfo_map_start, size = (uintptr_t)r->dlfo_map_end - lo;
	if (sfb_found_is_main(r))
		return SFB_KEPT_MAIN + 1;
	if ((uintptr_t)&dl_iterate_phdr - lo < size)
		return SFB_KEPT_LIBC + 1;
	if (sfb_discover_ldso_anchor() - lo < size)
		return SFB_KEPT_LDSO + 1;
	int j = startup_entry_of(lo, lo + size);
	return j >= 0 ? (uint8_t)(SFB_KEPT_MAX + j + 1) : 0;
}

static bool slot_claim(unsigned i, uint32_t seen)
{
	return sfb_seq_claim(&table[i].seq, seen);
}

static void slot_publish(unsigned i, const struct sfb_object *obj)
{
	memcpy(&table[i].obj, obj, sizeof *obj);
	sfb_seq_publish(&table[i].seq);
}

static bool same_object(const struct sfb_object *o, const struct sfb_found *r)
{
	return o->map_start == (uintptr_t)r->dlfo_map_start &&
	       o->map_end == (uintptr_t)r->dlfo_map_end &&
	       o->link_map == r->dlfo_link_map;
}

/* Is the object a slot describes still loaded? */
static bool still_loaded(const struct sfb_object *o)
{
	struct sfb_found r;
	return sfb_discover((void *)o->map_start, &r) == 0 && same_object(o, &r);
}

static const ElfW(Phdr) *find_phdr(const ElfW(Phdr) *ph, unsigned n, uint32_t type)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == type)
			return &ph[i];
	return NULL;
}

static void take_fingerprint(struct sfb_object *o, uintptr_t at, uint64_t len)
{
	o->sframe_at = at;
	o->sframe_len = len;
	memset(o->sframe_head, 0, sizeof o->sframe_head);
	if (at)
		memcpy(o->sframe_head, (const void *)at,
		       len < sizeof o->sframe_head ? len : sizeof o->sframe_head);
}

/* Does the section still begin as it did?  Inline for the usual full
 * 32 bytes: this runs for every object of every walk. */
static bool head_matches(const struct sfb_object *o)
{
	if (o->sframe_len < sizeof o->sframe_head)
		return !memcmp((const void *)o->sframe_at, o->sframe_head, o->sframe_len);
	uint64_t now[4], then[4];
	memcpy(now, (const void *)o->sframe_at, sizeof now);
	memcpy(then, o->sframe_head, sizeof then);
	return ((now[0] ^ then[0]) | (now[1] ^ then[1]) | (now[2] ^ then[2]) |
		(now[3] ^ then[3])) == 0;
}

/* Is the build-id still the one taken at discovery?  Inline for the
 * usual 20 bytes, like head_matches(). */
static bool build_id_matches(const struct sfb_object *o)
{
	const uint8_t *now = (const uint8_t *)(o->map_start + o->build_id_off);
	if (o->build_id_len != SFB_BUILD_ID_MAX)
		return !memcmp(now, o->build_id, o->build_id_len);
	uint64_t a[2], b[2];
	uint32_t c, d;
	memcpy(a, now, sizeof a);
	memcpy(b, o->build_id, sizeof b);
	memcpy(&c, now + 16, sizeof c);
	memcpy(&d, o->build_id + 16, sizeof d);
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (c ^ d)) == 0;
}

/* Is the object loaded now at o's place the one o describes, as far as
 * o is used: the same executable segment (code is read there) and the same
 * .sframe (rows are read there)?  Each is one program header, compared by
 * index.  A new object that adds a .sframe where the old one had none
 * passes, and is treated as having no rows: walks stop, never go wrong. */
static bool fingerprint_matches(const struct sfb_object *o)
{
	/* No program headers were found (or the first page was unreadable):
	 * the description relies on nothing in the object, and the page must
	 * not be read. */
	if (o->phnum == 0)
		return true;
	/* The main program is never unloaded: what is there is what was
	 * described (its headers need not follow an ELF header at its
	 * start). */
	if (sfb_object_is_main(o))
		return true;
	/* The program headers where they were, not where the ELF header now
	 * says: the header, the two headers used and the section's head are
	 * then read at once, not the header first (on a sample, each is a
	 * cache miss).  The address lies in the first page, which stays
	 * readable (objcache.h); the header must still say the same. */
	const ElfW(Ehdr) *eh = (const void *)o->map_start;
	const ElfW(Phdr) *ph = (const void *)(o->map_start + o->phoff);
	if (eh->e_phoff != o->phoff || eh->e_phnum != o->phnum ||
	    eh->e_phentsize != sizeof *ph || (o->build_id_off && !build_id_matches(o)))
		return false;
	if (o->exec_ph != SFB_NO_PH) {
		const ElfW(Phdr) *e = &ph[o->exec_ph];
		if (e->p_type != PT_LOAD || !(e->p_flags & PF_X) ||
		    o->bias + e->p_vaddr != o->exec_lo || o->exec_lo + e->p_memsz != o->exec_hi)
			return false;
	}
	if (o->sframe_ph != SFB_NO_PH) {
		const ElfW(Phdr) *f = &ph[o->sframe_ph];
		if (f->p_type != PT_GNU_SFRAME || o->bias + f->p_vaddr != o->sframe_at ||
		    f->p_memsz != o->sframe_len || !head_matches(o))
			return false;
	}
	if (o->eh_frame_ph != SFB_NO_PH) { /* set only where the CFI was usable */
		const ElfW(Phdr) *h = &ph[o->eh_frame_ph];
		if (h->p_type != PT_GNU_EH_FRAME || o->bias + h->p_vaddr != o->cfi.hdr_addr ||
		    h->p_memsz != o->cfi.hdr.len)
			return false;
	}
	return true;
}

/* The readable loaded segment that holds all of seg's bytes, or NULL. */
static const ElfW(Phdr) *loaded_segment_of(const ElfW(Phdr) *ph, unsigned n,
					   const ElfW(Phdr) *seg)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_R) &&
		    seg->p_vaddr >= ph[i].p_vaddr && seg->p_memsz <= ph[i].p_filesz &&
		    seg->p_vaddr - ph[i].p_vaddr <= ph[i].p_filesz - seg->p_memsz)
			return &ph[i];
	return NULL;
}

/* The object's CFI: its .eh_frame_hdr (PT_GNU_EH_FRAME) and the .eh_frame
 * it points to, each inside a readable loaded segment.  Linkers put them
 * side by side, so the segment holding the former is tried first; some
 * objects (libunwind's) have .eh_frame in their writable segment. */
static void describe_cfi(struct sfb_object *o, const ElfW(Phdr) *ph, unsigned n)
{
	const ElfW(Phdr) *hdr = find_phdr(ph, n, PT_GNU_EH_FRAME);
	const ElfW(Phdr) *first = hdr ? loaded_segment_of(ph, n, hdr) : NULL;
	if (!first)
		return; /* SFB_CFI_E_NO_TABLE */
	uintptr_t at = o->bias + hdr->p_vaddr;
	for (unsigned i = 0; i <= n; i++) {
		const ElfW(Phdr) *seg = i == 0 ? first : &ph[i - 1];
		if (i > 0 && (seg == first || seg->p_type != PT_LOAD || !(seg->p_flags & PF_R)))
			continue;
		uintptr_t lo = o->bias + seg->p_vaddr, hi = lo + seg->p_filesz;
		o->cfi_status = (int8_t)sfb_cfi_load(&o->cfi, (const void *)at, hdr->p_memsz, at,
						     hi, 0);
		if (o->cfi_status == SFB_CFI_OK &&
		    (o->cfi.frame_addr < lo || o->cfi.frame_addr >= hi))
			o->cfi_status = SFB_CFI_E_HDR;
		if (o->cfi_status != SFB_CFI_E_HDR)
			break;
	}
	if (o->cfi_status == SFB_CFI_OK)
		o->eh_frame_ph = (uint16_t)(hdr - ph);
}

/* Describe an object from its program headers: its executable segment, its
 * validated PT_GNU_SFRAME section and its CFI, if any.  Everything read after the
 * headers is checked to lie inside the object's readable PT_LOAD segments. */
static void describe_object(const struct sfb_found *r, struct sfb_object *o)
{
	memset(o, 0, sizeof *o);
	o->map_start = (uintptr_t)r->dlfo_map_start;
	o->map_end = (uintptr_t)r->dlfo_map_end;
	o->link_map = r->dlfo_link_map;
	o->live = 1;
	o->source = SFB_SRC_NONE;
	o->status = SFB_OK;
	o->bias = sfb_found_bias(r);
	o->kept_entry_plus_one = kept_entry_of(r);
	o->epoch = sfb_objcache_new_epoch();
	o->exec_ph = o->sframe_ph = o->eh_frame_ph = SFB_NO_PH;
	o->cfi_status = SFB_CFI_E_NO_TABLE;
	atomic_fetch_add_explicit(&stat_discoveries, 1, memory_order_relaxed);

	unsigned n = 0;
	/* Probed once per discovery: an execute-only first segment, or one
	 * that does not start with the ELF header, must not fault us. */
	if (!sfb_probe_readable(o->map_start))
		return;
	const ElfW(Phdr) *ph = sfb_loaded_phdrs(o->map_start, o->map_end, &n);
	unsigned rec_n = 0;
	const ElfW(Phdr) *recorded = sfb_found_phdrs(r, &rec_n);
	/* Headers the loader recorded are used where the ELF header at the
	 * mapping's start says they are (a hit is confirmed by reading them
	 * there), or anywhere for the main program, which is never unloaded
	 * and so never confirmed (fingerprint_matches()). */
	if (recorded && ((recorded == ph && rec_n == n) || sfb_object_is_main(o))) {
		ph = recorded;
		n = rec_n;
	}
	if (!ph || n >= SFB_NO_PH)
		return;
	o->phnum = (uint16_t)n;
	o->phoff = (uintptr_t)ph - o->map_start < SFB_FIRST_PAGE
			   ? (uint16_t)((uintptr_t)ph - o->map_start)
			   : 0;
	uint32_t id_len;
	if (sfb_loaded_build_id(o->map_start, o->bias, ph, n, &o->build_id_off, &id_len)) {
		o->build_id_len = (uint8_t)(id_len < SFB_BUILD_ID_MAX ? id_len : SFB_BUILD_ID_MAX);
		memcpy(o->build_id, (const void *)(o->map_start + o->build_id_off),
		       o->build_id_len);
	}
	/* The largest executable segment: the one holding .text where a
	 * layout has two (-Ttext= leaves .init and .plt apart, below it). */
	for (unsigned i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    ph[i].p_memsz > o->exec_hi - o->exec_lo) {
			o->exec_lo = o->bias + ph[i].p_vaddr;
			o->exec_hi = o->exec_lo + ph[i].p_memsz;
			o->exec_ph = (uint16_t)i;
		}
	}
	describe_cfi(o, ph, n);
	/* The main program without a search table (a static one): the
	 * index built for it, which may be published later. */
	if (o->cfi_status == SFB_CFI_E_NO_TABLE && sfb_object_is_main(o) &&
	    sfb_main_eh_state() != SFB_MAIN_EH_NONE)
		o->main_eh_index = 1;
	const ElfW(Phdr) *sframe = find_phdr(ph, n, PT_GNU_SFRAME);
	if (!sframe)
		return;
	o->source = SFB_SRC_SFRAME;
	if (!loaded_segment_of(ph, n, sframe)) {
		o->status = SFB_E_HEADER;
		return;
	}
	uintptr_t at = o->bias + sframe->p_vaddr;
	o->sframe_ph = (uint16_t)(sframe - ph);
	take_fingerprint(o, at, sframe->p_memsz);
	/* No scratch: linked objects are sorted; an unsorted one is refused. */
	o->status = (int8_t)sfb_section_load(&o->sec, (const void *)at, sframe->p_memsz,
					     at, NULL, 0);
	/* Rows for another architecture's registers are no rows here. */
	if (o->status == SFB_OK && o->sec.abi != sfb_arch_abi)
		o->status = SFB_E_ABI;
	if (o->status == SFB_OK && o->sec.version < SFB_VERSION_3)
		o->frame_pointer = !!(o->sec.flags & SFB_F_FRAME_POINTER);
}

/* Publish a new description in slot i, which the caller has claimed: its
 * coarse index first, into the slot's own index array. */
static void publish_described(unsigned i, struct sfb_object *o)
{
	o->home = &table[i].obj;
	if (sfb_object_has_rows(o))
		sfb_coarse_build(&o->sec, coarse_index[i], SFB_COARSE_BUCKETS);
	slot_publish(i, o);
	keep_if_kept(o);
}

/* Bind the unbound position p to the next unused slot and publish o
 * there.  False if another writer bound p first. */
static bool bind_and_publish(unsigned p, struct sfb_object *o)
{
	uint16_t unbound = 0;
	if (!atomic_compare_exchange_strong_explicit(&sfb_objcache_slot_of[p], &unbound,
						     (uint16_t)SLOT_BINDING,
						     memory_order_acquire, memory_order_relaxed))
		return false;
	unsigned s = atomic_fetch_add_explicit(&slots_bound, 1, memory_order_relaxed);
	/* Never false: one slot per position, a fresh slot is nobody's. */
	if (s >= SFB_CACHE_SLOTS || !slot_claim(s, 0))
		return false;
	publish_described(s, o);
	atomic_store_explicit(&sfb_objcache_slot_of[p], (uint16_t)(s + 1), memory_order_release);
	return true;
}

#define MAX_PROBE 64

int sfb_objcache_find(uintptr_t pc, struct sfb_object *out)
{
	struct sfb_found r;
	if (sfb_discover((void *)pc, &r) != 0)
		return sfb_jit_find(pc, out);

	unsigned h = sfb_objcache_position((uintptr_t)r.dlfo_map_start);
	int free_slot = -1, unbound = -1;
	uint32_t free_seq = 0;
	for (unsigned k = 0; k < MAX_PROBE; k++) {
		unsigned p = (h + k) % SFB_CACHE_SLOTS;
		int i = bound_slot(p);
		if (i == -1) {
			unbound = (int)p;
			break; /* the probe chain ends at an unbound position */
		}
		uint32_t seq;
		if (i < 0 || !slot_read((unsigned)i, out, &seq))
			continue;
		if (out->live && same_object(out, &r)) {
			if (fingerprint_matches(out))
				return 0;
			/* Another object where an unloaded one was. */
			describe_object(&r, out);
			if (slot_claim((unsigned)i, seq))
				publish_described((unsigned)i, out);
			return 0;
		}
		if (!out->live && free_slot < 0) {
			free_slot = i;
			free_seq = seq;
		}
	}

	/* Not cached: describe it, then publish it where there is room. */
	describe_object(&r, out);
	if (free_slot >= 0 && slot_claim((unsigned)free_slot, free_seq)) {
		publish_described((unsigned)free_slot, out);
		return 0;
	}
	if (free_slot < 0 && unbound >= 0 && bind_and_publish((unsigned)unbound, out))
		return 0;
	/* Lost a race or the chain is full: reclaim a slot whose object is
	 * gone, else use the description for this walk only. */
	for (unsigned k = 0; k < MAX_PROBE; k++) {
		unsigned p = (h + k) % SFB_CACHE_SLOTS;
		int i = bound_slot(p);
		if (i == -1) {
			if (bind_and_publish(p, out))
				return 0;
			continue;
		}
		struct sfb_object old;
		uint32_t seq;
		if (i >= 0 && slot_read((unsigned)i, &old, &seq) &&
		    (!old.live || !still_loaded(&old)) && slot_claim((unsigned)i, seq)) {
			if (old.live)
				atomic_fetch_add_explicit(&stat_reclaimed, 1, memory_order_relaxed);
			publish_described((unsigned)i, out);
			return 0;
		}
	}
	keep_if_kept(out);
	return 0; /* uncached but valid for this walk (no coarse index) */
}

/* The slot whose description home is. */
static unsigned slot_of_home(const struct sfb_object *home)
{
	return (unsigned)((const struct sfb_slot *)(const void *)((const char *)home -
								  offsetof(struct sfb_slot, obj)) -
			  table);
}

/* objcache.h: the thread's recent objects. */
__thread struct sfb_objcache_recent sfb_objcache_recent __attribute__((tls_model("initial-exec")));

bool sfb_objcache_note_recent(const struct sfb_object *o, unsigned pins,
			      struct sfb_confirmed *out)
{
	if (!o->home || sfb_object_is_kept(o))
		return false;
	struct sfb_objcache_recent *rec = &sfb_objcache_recent;
	/* To the front, the others moved back over the entry whose range
	 * holds o's start (o itself, confirmed the full way, or an object
	 * unloaded since), else over the last: never two entries for one
	 * range. */
	unsigned k = SFB_OBJCACHE_RECENT - 1;
	for (unsigned i = 0; i < SFB_OBJCACHE_RECENT; i++)
		if (sfb_objcache_recent_holds(&rec->obj[i], o->map_start)) {
			k = i;
			break;
		}
	for (; k > 0; k--)
		rec->obj[k] = rec->obj[k - 1];
	rec->obj[0] = (struct sfb_objcache_recent_obj){
		.lo = o->map_start,
		.hi = o->map_end,
		.slot = (uint16_t)slot_of_home(o->home),
		.pins = (uint16_t)pins,
	};
	*out = (struct sfb_confirmed){ o->map_start, o->map_end, o->epoch, o->home };
	return true;
}

bool sfb_objcache_copy_confirmed(const struct sfb_confirmed *c, struct sfb_object *out)
{
	uint32_t seq;
	return slot_read(slot_of_home(c->home), out, &seq) && out->live && out->epoch == c->epoch;
}

/* Only an object pinned since the kept tables were searched for the
 * recent one can hold its range now: the fixed and start-up objects were
 * loaded before any dlopen(), and never go, so none of them can take a
 * dlopen()ed object's addresses; a pin published after the count the
 * record holds changes sfb_kept.pinned, and one published before it was
 * found by that search (sfb_objcache_pins()). */
bool sfb_objcache_confirm_recent_slot(uintptr_t pc, struct sfb_confirmed *out)
{
	struct sfb_objcache_recent_obj *rec = &sfb_objcache_recent.obj[0];
	struct sfb_found r;
	struct sfb_object id;
	uint32_t seq;
	if ((uint16_t)atomic_load_explicit(&sfb_kept.pinned, memory_order_relaxed) == rec->pins &&
	    sfb_discover((void *)pc, &r) == 0 && slot_read_some(rec->slot, &id, &seq, true) &&
	    id.live && !sfb_object_is_kept(&id) && same_object(&id, &r) && fingerprint_matches(&id)) {
		*out = (struct sfb_confirmed){ id.map_start, id.map_end, id.epoch,
					       &table[rec->slot].obj };
		return true;
	}
	rec->lo = rec->hi = 0;
	return false;
}

bool sfb_objcache_confirm_recent_other(uintptr_t pc, struct sfb_confirmed *out)
{
	struct sfb_objcache_recent *rec = &sfb_objcache_recent;
	for (unsigned k = 1; k < SFB_OBJCACHE_RECENT; k++)
		if (sfb_objcache_recent_holds(&rec->obj[k], pc)) {
			struct sfb_objcache_recent_obj first = rec->obj[0];
			rec->obj[0] = rec->obj[k];
			rec->obj[k] = first;
			return sfb_objcache_confirm_recent_slot(pc, out);
		}
	return false;
}

int sfb_object_row(const struct sfb_object *o, uintptr_t pc, unsigned flags,
		   struct sfb_row *row)
{
	if (o->source == SFB_SRC_JIT)
		return sfb_jit_row(o, pc, flags, row);
	if (sfb_object_has_sframe(o) && sfb_lookup(&o->sec, pc, row) == SFB_OK)
		return 0;
	if (o->cfi_status == SFB_CFI_OK && !(flags & SFRAME_BT_NO_EH_FRAME)) {
		int err = sfb_cfi_lookup(&o->cfi, pc, SFB_DWARF_FP, row);
		if (err == SFB_CFI_OK)
			return 0;
		if (err != SFB_CFI_E_NOT_FOUND)
			return SFRAME_BT_STOP_BAD_EH_FRAME;
	}
	if (o->main_eh_index && !(flags & SFRAME_BT_NO_EH_FRAME)) {
		enum sfb_main_eh_state st = sfb_main_eh_state();
		if (st == SFB_MAIN_EH_PENDING || st == SFB_MAIN_EH_FAILED)
			return SFRAME_BT_STOP_EH_FRAME_UNINDEXED;
		int err = st == SFB_MAIN_EH_READY
				  ? sfb_eh_index_lookup(sfb_main_eh_index(), pc, SFB_DWARF_FP, row)
				  : SFB_CFI_E_NOT_FOUND;
		if (err == SFB_CFI_OK)
			return 0;
		if (err == SFB_EH_INDEX_E_LEFT_OUT)
			return SFRAME_BT_STOP_EH_FRAME_UNINDEXED;
		if (err != SFB_CFI_E_NOT_FOUND)
			return SFRAME_BT_STOP_BAD_EH_FRAME;
	}
	return o->source != SFB_SRC_NONE && o->status != SFB_OK ? SFRAME_BT_STOP_BAD_SECTION
								 : SFRAME_BT_STOP_NO_UNWIND_INFO;
}

/* ---- Objects kept loaded (normal context) -------------------------------- */

int sfb_objcache_keep_loaded(uintptr_t addr)
{
	sfb_discover_refresh();
	struct sfb_found r;
	if (sfb_discover((void *)addr, &r) != 0 ||
	    (!r.dlfo_link_map && !(r.dlfo_flags & SFB_FOUND_STAYS)))
		return -1;
	struct sfb_object o;
	/* SFB_FOUND_STAYS: nothing unloads it (a static program, musl). */
	if (kept_entry_of(&r) || (r.dlfo_flags & SFB_FOUND_STAYS)) {
		/* It stays anyway (objcache.h); describing it keeps it. */
		sfb_objcache_find(addr, &o);
		return 0;
	}
	if (sfb_objcache_kept(addr))
		return 0;
	/* Full: refused before the object is made to stay. */
	if (atomic_load_explicit(&sfb_kept.n, memory_order_relaxed) >= SFB_KEPT_MAX)
		return -1;
	/* Opened again by name, as glibc documents for promoting an object's
	 * flags.  First without RTLD_NODELETE: the handle must be this very
	 * object, not one of the same name in the caller's namespace while
	 * this one is in another (dlmopen()).  The references taken are
	 * given back; RTLD_NODELETE stays. */
	const char *name = r.dlfo_link_map->l_name;
	void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return -1;
	struct link_map *lm = NULL;
	void *kept = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm == r.dlfo_link_map)
		kept = dlopen(name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	if (kept)
		dlclose(kept);
	dlclose(h);
	if (!kept || sfb_objcache_find(addr, &o) != 0 || o.link_map != r.dlfo_link_map)
		return -1;
	unsigned i = atomic_load_explicit(&sfb_kept.n, memory_order_relaxed);
	do {
		if (i >= SFB_KEPT_MAX)
			return -1; /* lost a race for the last entries: stays loaded, not kept */
	} while (!atomic_compare_exchange_weak_explicit(&sfb_kept.n, &i, i + 1,
							memory_order_relaxed, memory_order_relaxed));
	publish_kept(i, &o);
	atomic_fetch_add_explicit(&sfb_kept.pinned, 1, memory_order_release);
	return 0;
}

/* ---- Warm-up and dlclose sweeping (normal context) --------------------- */

static unsigned long long seen_adds, seen_subs;

static int warm_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *count = arg;
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_LOAD)
			continue;
		struct sfb_object o;
		uintptr_t addr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		if (sfb_objcache_find(addr, &o) == 0 && o.source != SFB_SRC_NONE &&
		    o.status == SFB_OK)
			++*count;
		break;
	}
	return 0;
}

/* Tombstone every slot whose object dlclose() removed. */
static void sweep(void)
{
	unsigned n = atomic_load_explicit(&slots_bound, memory_order_acquire);
	for (unsigned i = 0; i < n && i < SFB_CACHE_SLOTS; i++) {
		struct sfb_object o;
		uint32_t seq;
		if (slot_read(i, &o, &seq) && o.live && !still_loaded(&o) &&
		    slot_claim(i, seq)) {
			o.live = 0;
			slot_publish(i, &o);
			atomic_fetch_add_explicit(&stat_reclaimed, 1, memory_order_relaxed);
		}
	}
}

int sfb_objcache_warmup(void)
{
	sfb_discover_refresh();
	sfb_main_eh_prepare();
	unsigned long long c[2];
	sfb_discover_counters(c);
	if (c[1] != seen_subs)
		sweep();
	seen_adds = c[0];
	seen_subs = c[1];
	int count = 0;
	dl_iterate_phdr(warm_one, &count);
	return count;
}

void sfb_objcache_stats(struct sfb_cache_stats *st)
{
	unsigned used = 0;
	unsigned n = atomic_load_explicit(&slots_bound, memory_order_acquire);
	for (unsigned i = 0; i < n && i < SFB_CACHE_SLOTS; i++) {
		struct sfb_object o;
		uint32_t seq;
		if (slot_read(i, &o, &seq) && o.live)
			used++;
	}
	st->slots_used = used;
	st->slots_handed = n;
	st->discoveries = atomic_load(&stat_discoveries);
	st->reclaimed = atomic_load(&stat_reclaimed);
}
