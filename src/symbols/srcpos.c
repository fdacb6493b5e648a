/* Source positions of runtime PCs: see srcpos.h. */
#define _GNU_SOURCE
#include "symbols/srcpos.h"

#include <string.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/symtab.h"

static int has_dwarf(int fd, struct sfb_elf_sections *secs, char *work, size_t wsize)
{
	return sfb_dsec_find(fd, secs, work, wsize) == 0 && secs->sec[SFB_DSEC_INFO].size &&
	       secs->sec[SFB_DSEC_LINE].size;
}

/* The file holding object O's DWARF: its own file when that has
 * .debug_info and .debug_line (and is still the loaded one: same ELF
 * header), else its debug file, by build-id or through the own file's
 * .gnu_debuglink (DESIGN.md, "Symbols").  Returns the open fd and *secs,
 * or -1.  WORK: at least SFB_DSEC_FIND_SCRATCH bytes. */
static int debug_fd(struct sfb_obj *o, struct sfb_elf_sections *secs, char *work, size_t wsize)
{
	Elf64_Ehdr eh, deh;
	uint64_t shnum = 0, dshnum;
	sfb_load_segments(o);
	int fd = sfb_open_object(o);
	if (fd >= 0 && !(sfb_read_ehdr(fd, &eh, &shnum) &&
			 (!o->ehdr || memcmp(o->ehdr, &eh, sizeof eh) == 0))) {
		close(fd); /* not the loaded file: neither its DWARF nor its link */
		fd = -1;
	}
	if (fd >= 0 && has_dwarf(fd, secs, work, wsize))
		return fd;
	int dfd = sfb_open_debug(o, fd, &eh, shnum, &deh, &dshnum, work, wsize);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0 && has_dwarf(dfd, secs, work, wsize))
		return dfd;
	if (dfd >= 0)
		close(dfd);
	return -1;
}

static void clear_lines(struct sframe_symbol *out)
{
	out->file = "";
	out->line = 0;
	out->column = 0;
	out->inlined_count = 0;
	for (int i = 0; i < SFRAME_MAX_INLINED; i++)
		out->inlined[i] = (struct sframe_inlined){ "", "", 0, 0 };
}

void sfb_srcpos_fill(struct sframe_symbol *out, const struct sfb_line_result *r, char *names,
		     size_t cap)
{
	clear_lines(out);
	if (r->n < 1)
		return;
	const struct sfb_line_frame *top = &r->frame[r->n - 1];
	out->file = top->file;
	out->line = top->line;
	out->column = top->column;
	int n = r->n - 1 < SFRAME_MAX_INLINED ? r->n - 1 : SFRAME_MAX_INLINED;
	size_t used = 0;
	for (int i = 0; i < n; i++) {
		const struct sfb_line_frame *f = &r->frame[i];
		struct sframe_inlined *in = &out->inlined[i];
		in->name = f->function;
		in->file = f->file;
		in->line = f->line;
		in->column = f->column;
		if (f->function[0] && cap - used > 1) {
			int k = sfb_demangle(f->function, names + used, cap - used);
			if (k > 0) {
				in->name = names + used;
				used += (size_t)k + 1;
			}
		}
	}
	out->inlined_count = n;
}

void sfb_srcpos_symbolize(uintptr_t pc, struct sframe_symbol *out, char *area, size_t size)
{
	clear_lines(out);
	char *p = (char *)(((uintptr_t)area + 15) & ~(uintptr_t)15);
	if (size < SFB_SRCPOS_AREA)
		return;
	size -= (size_t)(p - area);
	/* The reader takes all the room but the names': with more than its
	 * minimum it reads through larger windows and more inflaters. */
	struct sfb_line_result *r = (struct sfb_line_result *)p;
	char *scratch = p + ((sizeof *r + 15) & ~(size_t)15);
	size_t ssize = (size - (size_t)(scratch - p) - SFB_SRCPOS_NAMES) & ~(size_t)15;
	char *names = scratch + ssize;
	size_t ncap = SFB_SRCPOS_NAMES;
	struct sfb_obj o;
	struct sfb_elf_sections secs;
	if (!sfb_find_object(pc, &o))
		return;
	int fd = debug_fd(&o, &secs, scratch, ssize);
	if (fd < 0)
		return;
	int err = sfb_lines_lookup(fd, &secs, pc - o.bias, r, scratch, ssize);
	close(fd);
	if (!err)
		sfb_srcpos_fill(out, r, names, ncap);
}

/* ---- The cache ------------------------------------------------------------ */

void sfb_srcpos_cache_init(struct sfb_srcpos_cache *c, uint64_t *mem, size_t per_slot)
{
	for (int i = 0; i < SFB_SRCPOS_SLOTS; i++) {
		c->slot[i].start = c->slot[i].end = 0;
		c->slot[i].fd = -1;
		c->slot[i].used = 0;
		c->slot[i].scratch = mem + (size_t)i * (per_slot / sizeof *mem);
		c->slot[i].scratch_size = per_slot;
	}
	c->tick = 0;
}

void sfb_srcpos_cache_close(struct sfb_srcpos_cache *c)
{
	for (int i = 0; i < SFB_SRCPOS_SLOTS; i++) {
		if (c->slot[i].fd >= 0)
			close(c->slot[i].fd);
		c->slot[i].fd = -1;
		c->slot[i].start = c->slot[i].end = 0;
	}
}

/* Whether slot t was opened for the object o is now: the same place,
 * ELF header and build-id (id, len: o's, sfb_loaded_build_id_copy()). */
static bool same_object(const struct sfb_srcpos_slot *t, const struct sfb_obj *o,
			const uint8_t *id, uint32_t len)
{
	return t->start != t->end && t->start == o->start && t->end == o->end &&
	       t->bias == o->bias &&
	       (o->ehdr ? t->have_ehdr && memcmp(t->ehdr, o->ehdr, sizeof t->ehdr) == 0
			: !t->have_ehdr) &&
	       t->build_id_len == len && memcmp(t->build_id, id, len) == 0;
}

int sfb_srcpos_cache_lookup(struct sfb_srcpos_cache *c, uintptr_t pc)
{
	struct sfb_obj o;
	c->res.n = 0;
	if (!sfb_find_object(pc, &o))
		return -1;
	struct sfb_srcpos_slot *s = NULL, *lru = NULL;
	uint8_t id[SFB_MAX_BUILD_ID];
	sfb_load_segments(&o); /* o.ehdr */
	uint32_t idlen = sfb_loaded_build_id_copy(&o, id);
	for (int i = 0; i < SFB_SRCPOS_SLOTS && !s; i++)
		if (same_object(&c->slot[i], &o, id, idlen))
			s = &c->slot[i];
	for (int i = 0; i < SFB_SRCPOS_SLOTS && !s; i++) {
		struct sfb_srcpos_slot *t = &c->slot[i];
		if (t->start == t->end) {
			lru = t; /* a free one */
			break;
		}
		if (!lru || t->used < lru->used)
			lru = t;
	}
	if (!s) {
		s = lru;
		if (s->fd >= 0)
			close(s->fd);
		s->start = o.start;
		s->end = o.end;
		s->bias = o.bias;
		s->have_ehdr = o.ehdr != NULL;
		if (o.ehdr)
			memcpy(s->ehdr, o.ehdr, sizeof s->ehdr);
		s->build_id_len = idlen;
		memcpy(s->build_id, id, idlen);
		s->fd = debug_fd(&o, &s->secs, (char *)s->scratch, s->scratch_size);
		if (s->fd >= 0 && sfb_lines_open(s->fd, &s->secs, s->scratch, s->scratch_size)) {
			close(s->fd);
			s->fd = -1;
		}
	}
	s->used = ++c->tick;
	if (s->fd < 0)
		return -1;
	return sfb_lines_find(s->scratch, pc - o.bias, &c->res);
}

_Static_assert(SFRAME_SYMBOLIZE_SCRATCH + SFB_SRCPOS_AREA <= SFRAME_SYMBOLIZE_LINES_SCRATCH,
	       "SFRAME_SYMBOLIZE_LINES_SCRATCH holds the symbol's and the lines' scratch");
_Static_assert(SFRAME_SYMBOLIZE_SCRATCH + SFB_SRCPOS_AREA - SFB_LINES_SCRATCH + SFB_SRCPOS_FAST <=
		       SFRAME_SYMBOLIZE_LINES_SCRATCH,
	       "SFRAME_SYMBOLIZE_LINES_SCRATCH gives the reader two inflaters and their copies");
