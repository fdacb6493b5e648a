/* pprof.c: the profile.proto writer (see pprof.h).
 *
 * The message, as pprof's proto/profile.proto defines it (field numbers):
 *   Profile    1 sample_type*  2 sample*  3 mapping*  4 location*
 *              5 function*  6 string_table*  9 time_nanos
 *              10 duration_nanos  11 period_type  12 period
 *   ValueType  1 type  2 unit (string table indices)
 *   Sample     1 location_id* (leaf first)  2 value*  3 label*
 *   Label      1 key  2 str  3 num
 *   Mapping    1 id  2 memory_start  3 memory_limit  4 file_offset
 *              5 filename  6 build_id  7 has_functions  8 has_filenames
 *              9 has_line_numbers  10 has_inline_frames
 *   Location   1 id  2 mapping_id  3 address  4 line* (the functions
 *              inlined at address, innermost first, then the caller)
 *   Line       1 function_id  2 line  3 column
 *   Function   1 id  2 name  3 system_name  4 filename  5 start_line
 * Ids start at 1 (0 means "none"); string 0 is "".  A mapping says it has
 * file names, lines or inline frames when one of its locations has them
 * and the line tables were asked about all of them: else a server that
 * symbolizes profiles may add them from debug files. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/deflate.h"
#include "pprof.h"

/* ---- Protobuf encoding ------------------------------------------------ */

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void put_raw(struct buf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put_raw(b, t, n);
}

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* A varint field; proto3 leaves zero values out. */
static void put_uint(struct buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_varint(b, field << 3 | WIRE_VARINT);
	put_varint(b, v);
}

static void put_bytes(struct buf *b, unsigned field, const void *p, size_t n)
{
	put_varint(b, field << 3 | WIRE_LEN);
	put_varint(b, n);
	put_raw(b, p, n);
}

/* A nested message, encoded in m (emptied for the next one). */
static void put_msg(struct buf *b, unsigned field, struct buf *m)
{
	put_bytes(b, field, m->p, m->len);
	b->oom |= m->oom;
	m->len = 0;
}

/* ---- The string table ------------------------------------------------- */

struct strtab {
	char **str;      /* by index */
	size_t n, cap;
	uint32_t *slot;  /* hash -> index + 1, open addressing */
	size_t slots;
	bool oom;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The index of s, added if new. */
static uint64_t str_id(struct strtab *t, const char *s)
{
	if (2 * (t->n + 1) > t->slots) {
		size_t slots = t->slots ? 2 * t->slots : 1024;
		uint32_t *q = calloc(slots, sizeof *q);
		if (!q) {
			t->oom = true;
			return 0;
		}
		for (size_t i = 0; i < t->n; i++) {
			size_t j = str_hash(t->str[i]) & (slots - 1);
			while (q[j])
				j = (j + 1) & (slots - 1);
			q[j] = (uint32_t)i + 1;
		}
		free(t->slot);
		t->slot = q;
		t->slots = slots;
	}
	size_t j = str_hash(s) & (t->slots - 1);
	for (; t->slot[j]; j = (j + 1) & (t->slots - 1))
		if (strcmp(t->str[t->slot[j] - 1], s) == 0)
			return t->slot[j] - 1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		char **q = realloc(t->str, cap * sizeof *q);
		if (!q) {
			t->oom = true;
			return 0;
		}
		t->str = q;
		t->cap = cap;
	}
	char *copy = strdup(s);
	if (!copy) {
		t->oom = true;
		return 0;
	}
	t->str[t->n] = copy;
	t->slot[j] = (uint32_t)++t->n;
	return t->n - 1;
}

/* ---- Mappings: the executable segments of the loaded objects ---------- */

struct mapping {
	uintptr_t start, limit, offset;
	char path[256];
	char build_id[41]; /* hex; "" when the object has none */
	/* Whether the mapping's locations have files, lines, inline
	 * frames, and whether the line tables were asked about each. */
	bool has_files, has_lines, has_inline, all_read;
};

struct mappings {
	struct mapping *m;
	size_t n, cap;
};

/* The GNU build-id note of a loaded object, from its PT_NOTE segments
 * (mapped with the object, so no file is read). */
static void build_id_of(const struct dl_phdr_info *info, char *out, size_t size)
{
	out[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const uint8_t *name = p + sizeof *nh;
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
			p = desc + ((nh->n_descsz + 3) & ~3u);
			if (p > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				size_t k = 0;
				for (uint32_t j = 0; j < nh->n_descsz && k + 3 <= size; j++)
					k += (size_t)snprintf(out + k, size - k, "%02x", desc[j]);
				return;
			}
		}
	}
}

static int add_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	struct mappings *ms = ctx;
	char path[256], bid[41];
	if (info->dlpi_name[0]) {
		snprintf(path, sizeof path, "%s", info->dlpi_name);
	} else { /* the main program */
		ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
		path[n > 0 ? n : 0] = '\0';
	}
	/* pprof knows the vDSO by the kernel's name for its mapping. */
	if (strncmp(path, "linux-vdso", 10) == 0 || strncmp(path, "linux-gate", 10) == 0)
		snprintf(path, sizeof path, "[vdso]");
	build_id_of(info, bid, sizeof bid);
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t mask = ~(uintptr_t)(page - 1);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (ms->n == ms->cap) {
			size_t cap = ms->cap ? 2 * ms->cap : 64;
			struct mapping *q = realloc(ms->m, cap * sizeof *q);
			if (!q)
				return 1;
			ms->m = q;
			ms->cap = cap;
		}
		/* As the kernel maps it: whole pages, the file offset of the
		 * first one. */
		struct mapping *m = &ms->m[ms->n++];
		m->start = (info->dlpi_addr + ph->p_vaddr) & mask;
		m->limit = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & mask;
		m->offset = ph->p_offset & mask;
		memcpy(m->path, path, sizeof path);
		memcpy(m->build_id, bid, sizeof bid);
		m->has_files = m->has_lines = m->has_inline = false;
		m->all_read = true;
	}
	return 0;
}

static struct mapping *find_mapping(const struct mappings *ms, uintptr_t pc, size_t *id)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->m[i].start <= pc && pc < ms->m[i].limit) {
			*id = i + 1;
			return &ms->m[i];
		}
	*id = 0;
	return NULL;
}

/* ---- Locations and functions: each address and name once -------------- */

/* A table from a key (an address, or a function's string index pair) to
 * an id, open addressing; ids are 1.. in insertion order. */
struct idmap {
	uint64_t *key;
	uint32_t *id;
	size_t cap, n;
};

/* The id of key; *added says whether it is new.  0 when out of memory. */
static uint32_t id_of(struct idmap *t, uint64_t key, bool *added)
{
	*added = false;
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		uint64_t *k = calloc(cap, sizeof *k);
		uint32_t *v = calloc(cap, sizeof *v);
		if (!k || !v) {
			free(k);
			free(v);
			return 0;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->id[i])
				continue;
			size_t j = (t->key[i] * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
			while (v[j])
				j = (j + 1) & (cap - 1);
			k[j] = t->key[i];
			v[j] = t->id[i];
		}
		free(t->key);
		free(t->id);
		t->key = k;
		t->id = v;
		t->cap = cap;
	}
	size_t j = (key * 0x9e3779b97f4a7c15ull >> 17) & (t->cap - 1);
	for (; t->id[j]; j = (j + 1) & (t->cap - 1))
		if (t->key[j] == key)
			return t->id[j];
	t->key[j] = key;
	t->id[j] = (uint32_t)++t->n;
	*added = true;
	return t->id[j];
}

/* ---- The profile ------------------------------------------------------ */

/* The profile being written, and a buffer for each kind of nested
 * message (a Function is written while its Location is being built). */
struct tables {
	struct buf *out, fn, loc, line;
	struct strtab *st;
	struct idmap *funcs;
};

/* The id of the function named name (its symbol mangled, NULL: name) in
 * file (NULL: unknown), written to the profile the first time.  The
 * symbol determines the name, so symbol and file are the key. */
static uint32_t function_id(struct tables *t, const char *name, const char *mangled,
			    const char *file)
{
	uint64_t fname = str_id(t->st, name);
	uint64_t sys = mangled ? str_id(t->st, mangled) : fname;
	uint64_t path = str_id(t->st, file ? file : "");
	bool added;
	uint32_t fn = id_of(t->funcs, sys << 32 | path, &added);
	if (!fn)
		t->out->oom = true;
	if (added) {
		put_uint(&t->fn, 1, fn);
		put_uint(&t->fn, 2, fname);
		put_uint(&t->fn, 3, sys);
		put_uint(&t->fn, 4, path);
		put_msg(t->out, 5, &t->fn);
	}
	return fn;
}

/* Location id's message: the address in its mapping and its lines. */
static void put_location(struct tables *t, struct mappings *ms, uint32_t loc,
			 const struct pprof_frame *f)
{
	size_t map_id;
	struct mapping *mp = find_mapping(ms, f->pc, &map_id);
	put_uint(&t->loc, 1, loc);
	put_uint(&t->loc, 2, map_id);
	put_uint(&t->loc, 3, f->pc);
	if (mp)
		mp->all_read &= f->lines_read;
	if (f->nlines == 0) {
		put_uint(&t->line, 1, function_id(t, f->name, f->mangled, NULL));
		put_msg(&t->loc, 4, &t->line);
	}
	for (uint32_t i = 0; i < f->nlines; i++) {
		const struct pprof_line *l = &f->lines[i];
		put_uint(&t->line, 1, function_id(t, l->name, l->mangled, l->file));
		put_uint(&t->line, 2, l->line);
		put_uint(&t->line, 3, l->column);
		put_msg(&t->loc, 4, &t->line);
		if (mp) {
			mp->has_files |= l->file && l->file[0];
			mp->has_lines |= l->line != 0;
			mp->has_inline |= f->nlines > 1;
		}
	}
	put_msg(t->out, 4, &t->loc);
}

static int write_fd(void *ctx, const uint8_t *p, size_t n)
{
	int fd = *(int *)ctx;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void value_type(struct buf *b, unsigned field, struct buf *m, struct strtab *st,
		       const char *type, const char *unit)
{
	put_uint(m, 1, str_id(st, type));
	put_uint(m, 2, str_id(st, unit));
	put_msg(b, field, m);
}

int pprof_write(const char *path, const struct pprof_profile *p)
{
	struct buf out = { 0 }, m = { 0 }, sub = { 0 }, ids = { 0 };
	struct strtab st = { 0 };
	struct mappings ms = { 0 };
	struct idmap locs = { 0 }, funcs = { 0 };
	struct tables t = { .out = &out, .st = &st, .funcs = &funcs };
	str_id(&st, "");
	dl_iterate_phdr(add_object, &ms);

	value_type(&out, 1, &m, &st, "samples", "count");
	value_type(&out, 1, &m, &st, p->sample_type, "nanoseconds");
	uint64_t k_thread = str_id(&st, "thread"), k_tid = str_id(&st, "thread_id");
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pprof_sample *s = &p->samples[i];
		for (uint32_t d = 0; d < s->depth; d++) {
			const struct pprof_frame *f = s->frames[d];
			/* Pseudo-frames have no address: keyed by name. */
			uint64_t key = f->pc ? f->pc : (1ull << 63) | str_id(&st, f->name);
			bool added;
			uint32_t loc = id_of(&locs, key, &added);
			if (!loc)
				out.oom = true;
			if (added)
				put_location(&t, &ms, loc, f);
			put_varint(&ids, loc);
		}
		put_msg(&m, 1, &ids); /* packed location ids */
		put_varint(&ids, s->count);
		put_varint(&ids, s->count * (uint64_t)p->period_ns);
		put_msg(&m, 2, &ids); /* packed values */
		put_uint(&sub, 1, k_thread);
		put_uint(&sub, 2, str_id(&st, s->thread ? s->thread : "?"));
		put_msg(&m, 3, &sub);
		put_uint(&sub, 1, k_tid);
		put_uint(&sub, 3, (uint64_t)s->tid);
		put_msg(&m, 3, &sub);
		put_msg(&out, 2, &m);
	}
	for (size_t i = 0; i < ms.n; i++) {
		const struct mapping *mp = &ms.m[i];
		put_uint(&m, 1, i + 1);
		put_uint(&m, 2, mp->start);
		put_uint(&m, 3, mp->limit);
		put_uint(&m, 4, mp->offset);
		put_uint(&m, 5, str_id(&st, mp->path));
		put_uint(&m, 6, str_id(&st, mp->build_id));
		put_uint(&m, 7, 1); /* has_functions: every location is named */
		/* Lines for some locations only (their lookups ran out of
		 * time): claim none, so that a server symbolizes them all. */
		put_uint(&m, 8, mp->all_read && mp->has_files);
		put_uint(&m, 9, mp->all_read && mp->has_lines);
		put_uint(&m, 10, mp->all_read && mp->has_inline);
		put_msg(&out, 3, &m);
	}
	put_uint(&out, 9, (uint64_t)p->time_ns);
	put_uint(&out, 10, (uint64_t)p->duration_ns);
	value_type(&out, 11, &m, &st, p->sample_type, "nanoseconds");
	put_uint(&out, 12, (uint64_t)p->period_ns);
	/* Last, once every string is in it. */
	for (size_t i = 0; i < st.n; i++)
		put_bytes(&out, 6, st.str[i], strlen(st.str[i]));

	int rc = -1;
	int fd = -1;
	struct sfb_deflate *z = malloc(sizeof *z);
	if (!out.oom && !m.oom && !sub.oom && !ids.oom && !st.oom && z &&
	    (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0 &&
	    sfb_deflate_init(z, SFB_DEFLATE_FAST, write_fd, &fd) == 0 &&
	    sfb_deflate_write(z, out.p, out.len) == 0 && sfb_deflate_finish(z) == 0)
		rc = 0;
	if (fd >= 0 && close(fd) != 0)
		rc = -1;
	free(z);
	free(out.p);
	free(m.p);
	free(sub.p);
	free(ids.p);
	free(t.fn.p);
	free(t.loc.p);
	free(t.line.p);
	for (size_t i = 0; i < st.n; i++)
		free(st.str[i]);
	free(st.str);
	free(st.slot);
	free(ms.m);
	free(locs.key);
	free(locs.id);
	free(funcs.key);
	free(funcs.id);
	return rc;
}
