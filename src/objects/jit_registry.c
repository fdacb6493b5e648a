/* The registry of code registered at run time.  The protocol is described
 * in jit_registry.h. */
#define _GNU_SOURCE
#include "objects/jit_registry.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backtrace.h"
#include "arch/arch.h"
#include "base/bytes.h"
#include "base/entry.h"
#include "objects/objcache.h"
#include "rows/cfi.h"
#include "rows/eh_index.h"
#include "rows/sframe_decode.h"
#include "rows/sframe_format.h"

/* Skip-list levels: a node has level k + 1 with probability 4^-k, so 16
 * levels keep searches O(log n) up to 4^16 registrations. */
#define LEVELS 16
/* Bytes of the smallest FDE (length, CIE pointer, two 4-byte addresses)
 * and of the smallest SFrame FDE: the most FDEs a table of n bytes holds
 * is n / 16. */
#define MIN_FDE_BYTES 16

struct jit_name {
	uintptr_t start;
	size_t size;
	uint32_t off; /* in the registration's string pool */
};

/* A registration: what walks read once they have found its node.  One
 * allocation with its storage (the SFrame order or the .eh_frame index)
 * after it. */
struct reg {
	const void *key;      /* what unregisters it by key (__register_frame()'s begin), or NULL */
	uint32_t epoch;       /* unique: keys the row memo (sfb_object.epoch) */
	uint8_t kind;         /* enum sframe_jit_kind */
	uint8_t frame_pointer;
	union {
		struct sfb_section sec;     /* SFRAME_JIT_SFRAME */
		struct sfb_eh_index ix;     /* SFRAME_JIT_EH_FRAME */
		struct sfb_cfi_section cfi; /* SFRAME_JIT_EH_FRAME_HDR */
	};
	void *storage;             /* inside this allocation, or NULL */
	struct jit_name *names;    /* sorted by start */
	uint32_t n_names;
	int32_t range_name;        /* offset in pool, or -1 */
	char *pool;
};

/* A skip-list node: what a search reads (range, registration, links),
 * then, after its links, the node's predecessor at each of its levels,
 * which only writers read and keep (so that unregistering finds them
 * without a search).  Nodes of up to CELL_LEVELS levels (all but one in
 * 4096) are cells of 128 bytes, taken from chunks of contiguous memory
 * (huge pages where the kernel gives them); what a search reads of a
 * node of up to four levels (nearly all) is on the cell's first cache
 * line, and the nodes of a large registry share few pages, so that their
 * TLB entries stay.  Higher nodes are allocated on their own. */
struct node {
	uintptr_t start, end;
	struct reg *r;
	uint8_t level;
	_Atomic(struct node *) next[];
};
#define CELL 128
#define CELL_LEVELS ((CELL - sizeof(struct node)) / (2 * sizeof(struct node *)))

/* n's predecessors, level by level (NULL: the head).  Writers only. */
static struct node **prevs(struct node *n)
{
	return (struct node **)((char *)n + sizeof(struct node) +
				n->level * sizeof(struct node *));
}
/* Cells a chunk: 2 MiB, one huge page. */
#define CHUNK_BYTES ((size_t)2 << 20)

static _Atomic(struct node *) head[LEVELS];
static _Atomic size_t registered;
static pthread_mutex_t writers = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t level_seed;

/* ---- Node memory (writers only, under the mutex) ------------------------ */

/* Under AddressSanitizer, cells not in use are poisoned, as freed heap
 * memory is: a read of a node after its grace period is reported.  (Under
 * valgrind, the registration a node points to is heap memory freed at
 * the same time, and every reader that reaches a node reads it.) */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SFB_JIT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(SFB_JIT_ASAN)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Free cells, linked through their first word; cells never used yet,
 * [fresh, fresh_end) of the newest chunk.  Chunks are kept for the
 * process's life: a registry that held N nodes keeps N * 64 bytes. */
static void *free_cells;
static char *fresh, *fresh_end;

static struct node *node_alloc(unsigned level)
{
	if (level > CELL_LEVELS)
		return aligned_alloc(CELL, (sizeof(struct node) + 2 * level * sizeof(struct node *) +
					    CELL - 1) & ~(size_t)(CELL - 1));
	if (free_cells) {
		void *c = free_cells;
		UNPOISON(c, CELL);
		free_cells = *(void **)c;
		return c;
	}
	if (fresh == fresh_end) {
		/* Twice the size, then the aligned huge page kept. */
		char *m = mmap(NULL, 2 * CHUNK_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		char *a = (char *)(((uintptr_t)m + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1));
		if (a > m)
			munmap(m, (size_t)(a - m));
		if (a + CHUNK_BYTES < m + 2 * CHUNK_BYTES)
			munmap(a + CHUNK_BYTES, (size_t)(m + 2 * CHUNK_BYTES - (a + CHUNK_BYTES)));
#ifdef MADV_HUGEPAGE
		madvise(a, CHUNK_BYTES, MADV_HUGEPAGE);
#endif
		POISON(a, CHUNK_BYTES);
		fresh = a;
		fresh_end = a + CHUNK_BYTES;
	}
	struct node *n = (struct node *)fresh;
	fresh += CELL;
	UNPOISON(n, CELL);
	return n;
}

/* Once no reader can reach n. */
static void node_free(struct node *n)
{
	if (n->level > CELL_LEVELS) {
		free(n);
		return;
	}
	*(void **)n = free_cells;
	free_cells = n;
	POISON(n, CELL);
}

/* ---- Read sections ---------------------------------------------------- */

static _Atomic unsigned long readers[2];
static _Atomic unsigned generation;
static __thread unsigned read_depth __attribute__((tls_model("initial-exec")));

static unsigned read_begin(void)
{
	unsigned i = atomic_load(&generation) & 1;
	atomic_fetch_add(&readers[i], 1);
	/* The count is visible before any read of the list (jit_registry.h). */
	atomic_thread_fence(memory_order_seq_cst);
	read_depth++;
	return i;
}

static void read_end(unsigned i)
{
	read_depth--;
	atomic_fetch_sub_explicit(&readers[i], 1, memory_order_release);
}

static void drain(unsigned i)
{
	for (unsigned spins = 0; atomic_load(&readers[i]) != 0; spins++) {
		if (spins < 64) {
			sched_yield();
			continue;
		}
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
}

/* Wait until no reader that may have seen what the caller unlinked is
 * still reading.  Writers only, under the mutex. */
static void grace_period(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	unsigned g = atomic_load(&generation);
	drain((g + 1) & 1);
	atomic_store(&generation, g + 1);
	drain(g & 1);
}

/* ---- The skip list ---------------------------------------------------- */

static _Atomic(struct node *) *link_at(struct node *x, unsigned l)
{
	return x ? &x->next[l] : &head[l];
}

/* The last node starting at or before pc, or NULL.  Inside a read section. */
static struct node *find_le(uintptr_t pc)
{
	struct node *x = NULL;
	for (unsigned l = LEVELS; l-- > 0;) {
		for (;;) {
			struct node *nx = atomic_load_explicit(link_at(x, l), memory_order_acquire);
			if (!nx || nx->start > pc)
				break;
			x = nx;
		}
	}
	return x;
}

static struct node *find_covering(uintptr_t pc)
{
	struct node *x = find_le(pc);
	return x && pc < x->end ? x : NULL;
}

/* Writers: the last node at each level starting before start. */
static void find_preds(uintptr_t start, struct node *pred[LEVELS])
{
	struct node *x = NULL;
	for (unsigned l = LEVELS; l-- > 0;) {
		for (;;) {
			struct node *nx = atomic_load_explicit(link_at(x, l), memory_order_relaxed);
			if (!nx || nx->start >= start)
				break;
			x = nx;
		}
		pred[l] = x;
	}
}

/* A level for a new node: 1 + the number of low zero bit pairs of a
 * well-mixed counter, taken without the mutex. */
static unsigned random_level(void)
{
	uint64_t r = atomic_fetch_add_explicit(&level_seed, 1, memory_order_relaxed);
	r *= 0x9e3779b97f4a7c15ull;
	r ^= r >> 29;
	r *= 0xbf58476d1ce4e5b9ull;
	r ^= r >> 32;
	unsigned lvl = 1;
	for (; lvl < LEVELS && (r & 3) == 0; r >>= 2)
		lvl++;
	return lvl;
}

/* ---- Registrations by key (writers only) -------------------------------- */

/* Open addressing over (key, node) pairs, so that a probe reads no node;
 * deleted slots are tombstones.  used counts live entries and
 * tombstones, so that a probe always meets an empty slot; a rebuild drops
 * the tombstones and sizes the table to four times the live entries.
 * Two tables: registrations by key (__register_frame()'s begin), and the
 * others by start.  Only registrants use them, under the mutex. */
struct kslot {
	const void *key;
	struct node *n; /* NULL: empty */
};
struct table {
	struct kslot *slots;
	size_t cap, used, live;
};
static struct table by_key, by_start;
#define TOMBSTONE ((struct node *)1)

static size_t key_hash(const void *key)
{
	return (size_t)(((uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull) >> 20);
}

static struct kslot *table_slot(struct table *t, const void *key, bool for_insert)
{
	if (!t->cap)
		return NULL;
	struct kslot *tomb = NULL;
	for (size_t i = key_hash(key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct kslot *k = &t->slots[i];
		if (!k->n)
			return for_insert && tomb ? tomb : for_insert ? k : NULL;
		if (k->n == TOMBSTONE) {
			if (!tomb)
				tomb = k;
		} else if (k->key == key) {
			return k;
		}
	}
}

/* Room for one more entry. */
static bool table_reserve(struct table *t)
{
	if ((t->used + 1) * 2 < t->cap)
		return true;
	size_t cap = 64;
	while (cap < 4 * (t->live + 1))
		cap *= 2;
	struct kslot *old = t->slots;
	size_t old_cap = t->cap;
	t->slots = calloc(cap, sizeof *t->slots);
	if (!t->slots) {
		t->slots = old;
		return false;
	}
	t->cap = cap;
	t->used = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].n && old[i].n != TOMBSTONE) {
			*table_slot(t, old[i].key, true) = old[i];
			t->used++;
		}
	free(old);
	return true;
}

/* ---- Parsing a registration ------------------------------------------- */

static void reg_free(struct reg *r)
{
	if (!r)
		return;
	free(r->names);
	free(r->pool);
	free(r);
}

static bool inside(uint64_t lo, uint64_t hi, uintptr_t start, uintptr_t end)
{
	return lo >= start && hi <= end && lo < hi;
}

static int parse_sframe(struct node *n, const void *t, size_t len)
{
	size_t cap = len / MIN_FDE_BYTES + 1;
	if (sfb_section_load(&n->r->sec, t, len, (uintptr_t)t, n->r->storage, cap) != SFB_OK ||
	    n->r->sec.abi != sfb_arch_abi || n->r->sec.num_fdes == 0)
		return SFRAME_JIT_E_TABLES;
	if (n->r->sec.version < SFB_VERSION_3)
		n->r->frame_pointer = !!(n->r->sec.flags & SFB_F_FRAME_POINTER);
	if (!n->start && !n->end) {
		n->start = (uintptr_t)n->r->sec.pc_lo;
		n->end = (uintptr_t)n->r->sec.pc_hi;
	}
	return inside(n->r->sec.pc_lo, n->r->sec.pc_hi, n->start, n->end) ? 0 : SFRAME_JIT_E_OUTSIDE;
}

/* Every FDE a search table lists (count entries from pc_at(i), sorted),
 * found, in order without overlap, inside the range, its first row
 * interpretable.  A row without a CFA rule is no reason to refuse: LuaJIT
 * registers its machine-code area so, for its exceptions' personality
 * routine, which needs no CFA; a walk that reaches such code takes the
 * frame and stops there (bad-eh-frame) rather than losing it (no-object). */
static int check_fdes(struct node *n, const struct sfb_cfi_section *cfi, uint32_t count,
		      uint64_t (*pc_at)(const struct node *, uint32_t))
{
	uint64_t lo = UINT64_MAX, hi = 0, prev_end = 0;
	for (uint32_t i = 0; i < count; i++) {
		struct sfb_cfi_fde fde;
		struct sfb_cfi_table_row row;
		uint64_t pc = pc_at(n, i);
		if (sfb_cfi_find(cfi, pc, &fde) != SFB_CFI_OK || fde.pc_begin != pc ||
		    fde.pc_end <= pc || fde.pc_end - pc > UINT32_MAX || pc < prev_end ||
		    sfb_cfi_table_row(cfi, &fde, pc, &row) != SFB_CFI_OK)
			return SFRAME_JIT_E_TABLES;
		prev_end = fde.pc_end;
		lo = lo < pc ? lo : pc;
		hi = hi > fde.pc_end ? hi : fde.pc_end;
	}
	if (!count || hi > UINTPTR_MAX)
		return SFRAME_JIT_E_TABLES;
	if (!n->start && !n->end) {
		n->start = (uintptr_t)lo;
		n->end = (uintptr_t)hi;
	}
	return inside(lo, hi, n->start, n->end) ? 0 : SFRAME_JIT_E_OUTSIDE;
}

static uint64_t index_pc(const struct node *n, uint32_t i)
{
	const struct sfb_eh_index_entry *e = n->r->storage;
	return n->r->ix.cfi.frame_addr + (int64_t)e[i].pc;
}

static int parse_eh_frame(struct node *n, const void *t, size_t len)
{
	size_t cap = len / MIN_FDE_BYTES + 1;
	if (cap > UINT32_MAX)
		return SFRAME_JIT_E_ARG;
	if (sfb_eh_index_build(&n->r->ix, t, len, (uintptr_t)t, n->r->storage, (uint32_t)cap) !=
		    SFB_CFI_OK ||
	    n->r->ix.left_out)
		return SFRAME_JIT_E_TABLES;
	return check_fdes(n, &n->r->ix.cfi, n->r->ix.cfi.fde_count, index_pc);
}

/* Entry i of an .eh_frame_hdr table (datarel sdata4, checked by
 * sfb_cfi_load()), through the checked accessor. */
static uint64_t hdr_pc(const struct node *n, uint32_t i)
{
	uint64_t v = 0;
	if (!sfb_get(&n->r->cfi.hdr, (uint64_t)n->r->cfi.table_off + 8ull * i, 4, &v))
		return 0;
	return n->r->cfi.hdr_addr + (uint64_t)sfb_sext(v, 4);
}

static int parse_eh_frame_hdr(struct node *n, const void *t, size_t len, size_t hdr_len)
{
	if (!hdr_len || hdr_len >= len)
		return SFRAME_JIT_E_ARG;
	uintptr_t hdr = (uintptr_t)t + (len - hdr_len);
	if (sfb_cfi_load(&n->r->cfi, (const void *)hdr, hdr_len, hdr, hdr, 0) != SFB_CFI_OK ||
	    n->r->cfi.frame_addr < (uintptr_t)t || n->r->cfi.frame_addr >= hdr)
		return SFRAME_JIT_E_TABLES;
	return check_fdes(n, &n->r->cfi, n->r->cfi.fde_count, hdr_pc);
}

static int cmp_names(const void *a, const void *b)
{
	const struct jit_name *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Copy the names, sorted; each inside the range, none overlapping. */
static int copy_names(struct node *n, const struct sframe_jit_code *c)
{
	size_t pool = c->name ? strlen(c->name) + 1 : 0;
	if (c->n_names && (!c->names || c->n_names > UINT32_MAX / 2))
		return SFRAME_JIT_E_ARG;
	for (size_t i = 0; i < c->n_names; i++) {
		if (!c->names[i].name)
			return SFRAME_JIT_E_ARG;
		pool += strlen(c->names[i].name) + 1;
	}
	n->r->range_name = -1;
	if (!pool)
		return 0;
	if (pool > UINT32_MAX || !(n->r->pool = malloc(pool)) ||
	    (c->n_names && !(n->r->names = malloc(c->n_names * sizeof *n->r->names))))
		return SFRAME_JIT_E_NOMEM;
	size_t at = 0;
	if (c->name) {
		n->r->range_name = 0;
		at = strlen(c->name) + 1;
		memcpy(n->r->pool, c->name, at);
	}
	for (size_t i = 0; i < c->n_names; i++) {
		const struct sframe_jit_name *s = &c->names[i];
		if (!s->size || s->start < n->start || s->start > n->end ||
		    s->size > n->end - s->start)
			return SFRAME_JIT_E_OUTSIDE;
		size_t l = strlen(s->name) + 1;
		n->r->names[i] = (struct jit_name){ s->start, s->size, (uint32_t)at };
		memcpy(n->r->pool + at, s->name, l);
		at += l;
	}
	n->r->n_names = (uint32_t)c->n_names;
	if (n->r->n_names)
		qsort(n->r->names, n->r->n_names, sizeof *n->r->names, cmp_names);
	for (uint32_t i = 1; i < n->r->n_names; i++)
		if (n->r->names[i].start < n->r->names[i - 1].start + n->r->names[i - 1].size)
			return SFRAME_JIT_E_ARG;
	return 0;
}

static int parse(struct node *n, const struct sframe_jit_code *c)
{
	n->start = c->start;
	n->end = c->end;
	bool derive = !c->start && !c->end; /* internal: the range the tables cover */
	if (!derive && c->start >= c->end)
		return SFRAME_JIT_E_ARG;
	if (c->kind != SFRAME_JIT_FRAME_POINTER && (!c->tables || !c->tables_size ||
						    c->tables_size > UINT32_MAX ||
						    (uintptr_t)c->tables + c->tables_size <
							    (uintptr_t)c->tables))
		return SFRAME_JIT_E_ARG;
	if (c->kind != SFRAME_JIT_EH_FRAME_HDR && c->hdr_size)
		return SFRAME_JIT_E_ARG;
	n->r->kind = (uint8_t)c->kind;
	int err;
	switch (c->kind) {
	case SFRAME_JIT_SFRAME:
		err = parse_sframe(n, c->tables, c->tables_size);
		break;
	case SFRAME_JIT_EH_FRAME:
		err = parse_eh_frame(n, c->tables, c->tables_size);
		break;
	case SFRAME_JIT_EH_FRAME_HDR:
		err = parse_eh_frame_hdr(n, c->tables, c->tables_size, c->hdr_size);
		break;
	case SFRAME_JIT_FRAME_POINTER:
		err = derive || c->tables || c->tables_size ? SFRAME_JIT_E_ARG : 0;
		n->r->frame_pointer = 1;
		break;
	default:
		return SFRAME_JIT_E_ARG;
	}
	return err ? err : copy_names(n, c);
}

/* ---- Registering ------------------------------------------------------- */

/* Link a node for the parsed registration p (start, end, r), unless it
 * overlaps one.  Under the mutex. */
static int insert(const struct node *p, unsigned level)
{
	struct node *pred[LEVELS];
	find_preds(p->start, pred);
	struct node *succ = atomic_load_explicit(link_at(pred[0], 0), memory_order_relaxed);
	if ((pred[0] && pred[0]->end > p->start) || (succ && succ->start < p->end))
		return SFRAME_JIT_E_OVERLAP;
	/* Keyed by its tables, or by its start (which no other has). */
	struct table *t = p->r->key ? &by_key : &by_start;
	const void *key = p->r->key ? p->r->key : (const void *)p->start;
	if (!table_reserve(t))
		return SFRAME_JIT_E_NOMEM;
	if (table_slot(t, key, false))
		return SFRAME_JIT_E_OVERLAP; /* the same tables registered twice */
	struct kslot *slot = table_slot(t, key, true);
	struct node *n = node_alloc(level);
	if (!n)
		return SFRAME_JIT_E_NOMEM;
	n->start = p->start;
	n->end = p->end;
	n->r = p->r;
	n->level = (uint8_t)level;
	if (!slot->n)
		t->used++;
	*slot = (struct kslot){ key, n };
	t->live++;
	n->r->epoch = sfb_objcache_new_epoch();
	for (unsigned l = 0; l < level; l++)
		atomic_store_explicit(&n->next[l],
				      atomic_load_explicit(link_at(pred[l], l), memory_order_relaxed),
				      memory_order_relaxed);
	/* Bottom up, each link published whole: a reader meets the node
	 * complete, at any level. */
	for (unsigned l = 0; l < level; l++)
		atomic_store_explicit(link_at(pred[l], l), n, memory_order_release);
	for (unsigned l = 0; l < level; l++) {
		prevs(n)[l] = pred[l];
		struct node *succ = atomic_load_explicit(&n->next[l], memory_order_relaxed);
		if (succ)
			prevs(succ)[l] = n;
	}
	atomic_fetch_add(&registered, 1);
	return 0;
}

/* Bytes of storage a registration's tables need (the SFrame order or the
 * .eh_frame index: at most one entry per MIN_FDE_BYTES). */
static size_t storage_size(const struct sframe_jit_code *c)
{
	size_t cap = c->tables_size / MIN_FDE_BYTES + 1;
	switch (c->kind) {
	case SFRAME_JIT_SFRAME: return cap * sizeof(uint32_t);
	case SFRAME_JIT_EH_FRAME: return cap * sizeof(struct sfb_eh_index_entry);
	default: return 0;
	}
}

static int register_code(const struct sframe_jit_code *c, const void *key, uintptr_t range[2])
{
	if (!c)
		return SFRAME_JIT_E_ARG;
	if (c->tables_size > UINT32_MAX)
		return SFRAME_JIT_E_ARG;
	size_t head_size = (sizeof(struct reg) + 15) & ~(size_t)15;
	size_t storage = storage_size(c);
	struct reg *r = malloc(head_size + storage);
	if (!r)
		return SFRAME_JIT_E_NOMEM;
	memset(r, 0, sizeof *r);
	r->key = key;
	r->storage = storage ? (char *)r + head_size : NULL;
	/* Parsed outside the mutex: the tables are the caller's, the
	 * registration nobody else's yet.  The node is made under the mutex. */
	struct node p = { .r = r };
	int err = parse(&p, c);
	if (!err && range) {
		range[0] = p.start;
		range[1] = p.end;
	}
	if (!err) {
		unsigned level = random_level();
		pthread_mutex_lock(&writers);
		err = insert(&p, level);
		pthread_mutex_unlock(&writers);
	}
	if (err)
		reg_free(r);
	return err;
}

/* Unlink n, found at slot of table t, top level first (jit_registry.h),
 * its predecessors those it keeps (no search), wait, free.  Under the
 * mutex. */
static void remove_node(struct node *n, struct table *t, struct kslot *slot)
{
	for (unsigned l = n->level; l-- > 0;) {
		struct node *pred = prevs(n)[l];
		struct node *succ = atomic_load_explicit(&n->next[l], memory_order_relaxed);
		atomic_store_explicit(link_at(pred, l), succ, memory_order_release);
		if (succ)
			prevs(succ)[l] = pred;
	}
	slot->n = TOMBSTONE;
	t->live--;
	atomic_fetch_sub(&registered, 1);
	grace_period();
	reg_free(n->r);
	node_free(n);
}

static int unregister_where(uintptr_t start, const void *key)
{
	/* A walk on this thread would be waited for by itself. */
	if (read_depth)
		return SFRAME_JIT_E_BUSY;
	pthread_mutex_lock(&writers);
	/* By key: what was registered by key; by start: what was not. */
	struct table *t = key ? &by_key : &by_start;
	struct kslot *slot = table_slot(t, key ? key : (const void *)start, false);
	struct node *n = slot ? slot->n : NULL;
	if (n)
		remove_node(n, t, slot);
	pthread_mutex_unlock(&writers);
	return n ? 0 : SFRAME_JIT_E_NOT_REGISTERED;
}

SFRAMEBT_API int sframe_jit_register(const struct sframe_jit_code *code)
{
	SFB_ENTRY;
	if (code && !code->start && !code->end)
		return SFRAME_JIT_E_ARG;
	return register_code(code, NULL, NULL);
}

SFRAMEBT_API int sframe_jit_unregister(uintptr_t start)
{
	SFB_ENTRY;
	return unregister_where(start, NULL);
}

SFRAMEBT_API const char *sframe_jit_err_name(int err)
{
	static const char *const names[] = {
		"ok", "bad-argument", "bad-tables", "outside-range",
		"overlap", "not-registered", "no-memory", "busy",
	};
	return err >= 0 && (size_t)err < sizeof names / sizeof names[0] ? names[err] : "unknown";
}

/* The length of the FDEs and CIEs before a zero terminator, at most max:
 * __register_frame() is given no length, and the section is read
 * through the checked accessor up to max. */
static size_t eh_frame_length(const uint8_t *p, size_t max)
{
	struct sfb_bytes b = { .p = p, .len = max };
	uint64_t at = 0, len;
	while (sfb_get(&b, at, 4, &len)) {
		if (len == 0)
			return (size_t)at;
		if (len == 0xffffffffu || len > max - at - 4)
			return 0; /* 64-bit DWARF or past max: refused */
		at += 4 + len;
	}
	return 0;
}

int sfb_jit_register_eh_frame(const void *begin, size_t max_len, uintptr_t range[2])
{
	SFB_ENTRY;
	size_t len = begin ? eh_frame_length(begin, max_len) : 0;
	if (!len)
		return SFRAME_JIT_E_TABLES;
	struct sframe_jit_code c = { .kind = SFRAME_JIT_EH_FRAME, .tables = begin,
				     .tables_size = len };
	return register_code(&c, begin, range);
}

int sfb_jit_unregister_eh_frame(const void *begin)
{
	SFB_ENTRY;
	return begin ? unregister_where(0, begin) : SFRAME_JIT_E_NOT_REGISTERED;
}

size_t sfb_jit_count(void)
{
	return atomic_load(&registered);
}

/* ---- Walks ------------------------------------------------------------- */

int sfb_jit_find(uintptr_t pc, struct sfb_object *o)
{
	if (!atomic_load_explicit(&registered, memory_order_relaxed))
		return SFRAME_BT_STOP_NO_OBJECT;
	unsigned rs = read_begin();
	const struct node *n = find_covering(pc);
	if (n) {
		memset(o, 0, sizeof *o);
		o->map_start = o->exec_lo = n->start;
		o->map_end = o->exec_hi = n->end;
		o->live = 1;
		o->source = SFB_SRC_JIT;
		o->status = SFB_OK;
		o->frame_pointer = n->r->frame_pointer;
		o->epoch = n->r->epoch;
		o->exec_ph = o->sframe_ph = o->eh_frame_ph = SFB_NO_PH;
		o->cfi_status = SFB_CFI_E_NO_TABLE;
	}
	read_end(rs);
	return n ? 0 : SFRAME_BT_STOP_NO_OBJECT;
}

int sfb_jit_row(const struct sfb_object *o, uintptr_t pc, unsigned flags, struct sfb_row *row)
{
	int stop = SFRAME_BT_STOP_NO_UNWIND_INFO, err;
	unsigned rs = read_begin();
	const struct node *n = find_covering(pc);
	/* Gone, or another registration since o was described: no rows. */
	if (!n || n->r->epoch != o->epoch)
		goto out;
	switch (n->r->kind) {
	case SFRAME_JIT_SFRAME:
		if (sfb_lookup(&n->r->sec, pc, row) == SFB_OK)
			stop = 0;
		break;
	case SFRAME_JIT_EH_FRAME:
	case SFRAME_JIT_EH_FRAME_HDR:
		if (flags & SFRAME_BT_NO_EH_FRAME)
			break;
		err = n->r->kind == SFRAME_JIT_EH_FRAME
			      ? sfb_eh_index_lookup(&n->r->ix, pc, SFB_DWARF_FP, row)
			      : sfb_cfi_lookup(&n->r->cfi, pc, SFB_DWARF_FP, row);
		stop = err == SFB_CFI_OK ? 0
		       : err == SFB_CFI_E_NOT_FOUND ? SFRAME_BT_STOP_NO_UNWIND_INFO
						    : SFRAME_BT_STOP_BAD_EH_FRAME;
		break;
	default: /* SFRAME_JIT_FRAME_POINTER: the walker's rule (o->frame_pointer) */
		break;
	}
out:
	read_end(rs);
	return stop;
}

int sfb_jit_name(uintptr_t pc, char *out, size_t size, uintptr_t *start, size_t *len)
{
	if (!size || !atomic_load_explicit(&registered, memory_order_relaxed))
		return 0;
	int found = 0;
	unsigned rs = read_begin();
	const struct node *n = find_covering(pc);
	const char *name = NULL;
	if (n && n->r->n_names) {
		uint32_t lo = 0, hi = n->r->n_names;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (n->r->names[mid].start <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		const struct jit_name *e = lo ? &n->r->names[lo - 1] : NULL;
		if (e && pc - e->start < e->size) {
			name = n->r->pool + e->off;
			*start = e->start;
			*len = e->size;
		}
	}
	if (n && !name && n->r->range_name >= 0) {
		name = n->r->pool + n->r->range_name;
		*start = n->start;
		*len = n->end - n->start;
	}
	if (name) {
		size_t l = strnlen(name, size - 1);
		memcpy(out, name, l);
		out[l] = 0;
		found = 1;
	}
	read_end(rs);
	return found;
}
