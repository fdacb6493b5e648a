/* Debug sections through windows: see debug_section.h. */
#define _GNU_SOURCE
#include "symbols/debug_section.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/dwarf.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* Section names, by id. */
static const char *const sec_name[SFB_DSEC_COUNT] = {
	[SFB_DSEC_INFO] = ".debug_info",
	[SFB_DSEC_ABBREV] = ".debug_abbrev",
	[SFB_DSEC_LINE] = ".debug_line",
	[SFB_DSEC_LINE_STR] = ".debug_line_str",
	[SFB_DSEC_STR] = ".debug_str",
	[SFB_DSEC_STR_OFFSETS] = ".debug_str_offsets",
	[SFB_DSEC_ADDR] = ".debug_addr",
	[SFB_DSEC_RNGLISTS] = ".debug_rnglists",
	[SFB_DSEC_RANGES] = ".debug_ranges",
	[SFB_DSEC_ARANGES] = ".debug_aranges",
};

/* All of N bytes at file offset OFF, through short reads and EINTR. */
static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return SFB_DSEC_E_IO;
		p += r, n -= (size_t)r, off += (uint64_t)r;
	}
	return 0;
}

#define NAME_MAX_LEN 24 /* longer than every name of sec_name[] */

int sfb_dsec_find(int fd, struct sfb_elf_sections *out, void *scratch, size_t size)
{
	memset(out, 0, sizeof *out);
	if (!scratch || size < SFB_DSEC_FIND_SCRATCH)
		return SFB_DSEC_E_SCRATCH;
	Elf64_Ehdr eh;
	if (pread_all(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != HOST_DATA ||
	    eh.e_shentsize != sizeof(Elf64_Shdr))
		return SFB_DSEC_E_ELF;
	uint64_t shnum = eh.e_shnum, shstrndx = eh.e_shstrndx;
	Elf64_Shdr sh;
	if (shnum == 0 || shstrndx == SHN_XINDEX) {
		/* More sections than e_shnum holds: the counts are in section 0. */
		if (eh.e_shoff == 0 || pread_all(fd, &sh, sizeof sh, eh.e_shoff))
			return SFB_DSEC_E_ELF;
		if (shnum == 0)
			shnum = sh.sh_size;
		if (shstrndx == SHN_XINDEX)
			shstrndx = sh.sh_link;
	}
	if (shnum > SFB_DSEC_MAX_SECTIONS || shstrndx >= shnum)
		return SFB_DSEC_E_ELF;
	Elf64_Shdr strs;
	if (pread_all(fd, &strs, sizeof strs, eh.e_shoff + shstrndx * sizeof sh))
		return SFB_DSEC_E_ELF;
	Elf64_Shdr *tab = scratch;
	size_t per = size / sizeof sh;
	char name[NAME_MAX_LEN + 1];
	for (uint64_t i = 0; i < shnum; i += per) {
		size_t k = shnum - i < per ? (size_t)(shnum - i) : per;
		if (pread_all(fd, tab, k * sizeof sh, eh.e_shoff + i * sizeof sh))
			return SFB_DSEC_E_ELF;
		for (size_t j = 0; j < k; j++) {
			const Elf64_Shdr *s = &tab[j];
			if (s->sh_type == SHT_NOBITS || s->sh_size == 0 ||
			    s->sh_name >= strs.sh_size)
				continue;
			size_t n = strs.sh_size - s->sh_name < NAME_MAX_LEN
					   ? (size_t)(strs.sh_size - s->sh_name) : NAME_MAX_LEN;
			if (pread_all(fd, name, n, strs.sh_offset + s->sh_name))
				continue;
			name[n] = 0;
			for (int id = 0; id < SFB_DSEC_COUNT; id++) {
				if (strcmp(name, sec_name[id]) || out->sec[id].size)
					continue;
				out->sec[id].offset = s->sh_offset;
				out->sec[id].size = s->sh_size;
				out->sec[id].compressed = (s->sh_flags & SHF_COMPRESSED) != 0;
			}
		}
	}
	return 0;
}

/* Stream T on the N slots from slot S. */
static void slot_set(struct sfb_dstream *t, int s, int n)
{
	uint8_t *p = t->d->zbase + (size_t)s * SFB_DSEC_ZSTATE;
	t->slot = s;
	t->z = (struct sfb_inflate *)p;
	t->zwindow = p + sizeof(struct sfb_inflate);
	t->zin = t->zwindow + SFB_INFLATE_WINDOW;
	t->zd = (struct sfb_zstd *)p;
	t->zhist = p + SFB_DSEC_ZSTD_STRUCT;
	t->zhist_size = (size_t)n * SFB_DSEC_ZSTATE - SFB_DSEC_ZSTD_STRUCT;
	t->span = n;
}

/* The history the zstd frame at file offset OFF (LEN bytes there) needs
 * (zstd.h); 0 when it is not a Zstandard frame (the decoder then says
 * why). */
static uint64_t frame_window(int fd, uint64_t off, uint64_t len)
{
	uint8_t h[18] = { 0 };
	size_t n = len < sizeof h ? (size_t)len : sizeof h;
	return pread_all(fd, h, n, off) ? 0 : sfb_zstd_frame_window(h, n);
}

bool sfb_dsec_any_compressed(const struct sfb_elf_sections *secs)
{
	for (int id = 0; id < SFB_DSEC_COUNT; id++)
		if (secs->sec[id].size && secs->sec[id].compressed)
			return true;
	return false;
}

int sfb_dsec_open(struct sfb_dsecs *d, int fd, const struct sfb_elf_sections *secs, void *zstate,
		  struct sfb_dstream *streams, int nz)
{
	memset(d, 0, sizeof *d);
	d->fd = fd;
	if (!zstate || nz < 0)
		nz = 0;
	d->nz = nz < SFB_DSEC_MAX_STREAMS ? nz : SFB_DSEC_MAX_STREAMS;
	if (d->nz > SFB_DSEC_HELD_STREAMS && !streams)
		d->nz = SFB_DSEC_HELD_STREAMS;
	d->zbase = zstate;
	d->zs = d->nz > SFB_DSEC_HELD_STREAMS ? streams : d->held;
	for (int i = 0; i < d->nz; i++) {
		struct sfb_dstream *t = &d->zs[i];
		memset(t, 0, sizeof *t);
		t->d = d;
		t->owner = -1;
		slot_set(t, i, 1);
	}
	for (int id = 0; id < SFB_DSEC_COUNT; id++) {
		const struct sfb_elf_section *s = &secs->sec[id];
		d->sec[id] = *s;
		d->data[id] = s->offset;
		d->size[id] = s->size;
		if (!s->size || !s->compressed)
			continue;
		uint8_t h[sizeof(Elf64_Chdr)];
		struct sfb_chdr ch;
		if (!d->nz)
			return SFB_DSEC_E_SCRATCH;
		if (s->size < sizeof h)
			return SFB_DSEC_E_CHDR;
		if (pread_all(fd, h, sizeof h, s->offset))
			return SFB_DSEC_E_IO;
		if (sfb_chdr_read(h, sizeof h, true, &ch))
			return SFB_DSEC_E_CHDR;
		if (ch.type != SFB_ELFCOMPRESS_ZLIB && ch.type != SFB_ELFCOMPRESS_ZSTD)
			return SFB_DSEC_E_CHDR;
		d->zstd[id] = ch.type == SFB_ELFCOMPRESS_ZSTD;
		d->data[id] = s->offset + ch.header_size;
		d->size[id] = ch.size;
		if (d->zstd[id])
			d->zwin[id] = frame_window(fd, d->data[id], s->size - ch.header_size);
	}
	return 0;
}

void sfb_dview_init(struct sfb_dview *v, struct sfb_dsecs *d, int id, uint8_t *buf, size_t cap)
{
	v->d = d;
	v->id = id;
	v->buf = buf;
	v->cap = cap;
	v->base = 0;
	v->len = 0;
}

void sfb_dsec_checkpoint_room(struct sfb_dsecs *d, int i, void *room)
{
	if (i >= 0 && i < d->nz) {
		d->zs[i].cp = room;
		d->zs[i].cp_valid = false;
	}
}

/* The stream decoding section ID, or NULL. */
static struct sfb_dstream *z_of(struct sfb_dsecs *d, int id)
{
	for (int i = 0; i < d->nz; i++)
		if (d->zs[i].owner == id)
			return &d->zs[i];
	return NULL;
}

/* Bytes of section ID's compressed data. */
static uint64_t csize_of(const struct sfb_dsecs *d, int id)
{
	return d->sec[id].size - (d->data[id] - d->sec[id].offset);
}

/* The zstd decoder's input: N bytes at OFF of its section's frames. */
static int zstd_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	struct sfb_dstream *t = ctx;
	struct sfb_dsecs *d = t->d;
	if (t->owner < 0 || off > csize_of(d, t->owner) || n > csize_of(d, t->owner) - off)
		return -1;
	d->preads++;
	return pread_all(d->fd, buf, n, d->data[t->owner] + off);
}

/* Section ID's next N bytes from zstd stream T into OUT (NULL: discard
 * them). */
static int zstd_take(struct sfb_dsecs *d, struct sfb_dstream *t, uint8_t *out, uint64_t n)
{
	while (n) {
		if (d->inflated + n > SFB_DSEC_MAX_INFLATE)
			return SFB_DSEC_E_BUDGET_INFLATE;
		size_t step = n > (1u << 30) ? (1u << 30) : (size_t)n, got;
		int rc = sfb_zstd_decode(t->zd, out, step, &got);
		t->out += got;
		d->inflated += got;
		n -= got;
		if (out)
			out += got;
		if (rc == SFB_ZSTD_E_WINDOW)
			return SFB_DSEC_E_ZSTD_WINDOW;
		if (rc == SFB_ZSTD_E_READ)
			return SFB_DSEC_E_IO;
		if (rc < 0)
			return SFB_DSEC_E_ZSTD;
		if (rc == SFB_ZSTD_END && n)
			return SFB_DSEC_E_TRUNCATED; /* the frames are shorter than ch_size */
	}
	return 0;
}

/* Whether a section is zlib-compressed: then every stream keeps to its
 * own slot, and no slots are pooled. */
static bool any_zlib(const struct sfb_dsecs *d)
{
	for (int id = 0; id < SFB_DSEC_COUNT; id++)
		if (d->sec[id].size && d->sec[id].compressed && !d->zstd[id])
			return true;
	return false;
}

/* A free stream record, else the least recently used. */
static struct sfb_dstream *free_or_lru(struct sfb_dsecs *d)
{
	for (int i = 0; i < d->nz; i++)
		if (d->zs[i].owner < 0)
			return &d->zs[i];
	struct sfb_dstream *t = d->nz ? &d->zs[0] : NULL;
	for (int i = 1; i < d->nz; i++)
		if (d->zs[i].used < t->used)
			t = &d->zs[i];
	return t;
}

/* Whether stream U holds any of the N slots from slot S. */
static bool holds_slots(const struct sfb_dstream *u, int s, int n)
{
	return u->owner >= 0 && u->slot < s + n && s < u->slot + u->span;
}

/* The slots zstd streams share: the streams' own, and the rooms of
 * their copies when these follow them and no section is zlib's. */
static int zstd_slots(struct sfb_dsecs *d)
{
	if (d->nslots)
		return d->nslots;
	bool pool = d->nz > 0 && !any_zlib(d);
	for (int i = 0; pool && i < d->nz; i++)
		pool = d->zs[i].cp == d->zbase + (size_t)(d->nz + i) * SFB_DSEC_ZSTATE;
	d->nslots = pool ? 2 * d->nz : d->nz;
	if (pool)
		for (int i = 0; i < d->nz; i++) {
			d->zs[i].cp = NULL; /* the rooms are slots now */
			d->zs[i].cp_valid = false;
		}
	return d->nslots;
}

/* A zstd stream for section ID: as many adjacent slots as its window
 * needs (all there are when it needs more: its decoder then refuses
 * the frame), where the streams they hold were least recently used. */
static struct sfb_dstream *zstd_place(struct sfb_dsecs *d, int id)
{
	int n = zstd_slots(d), need = 1;
	if (d->zwin[id] > SFB_DSEC_ZSTD_HISTORY) {
		uint64_t slots = (d->zwin[id] + SFB_DSEC_ZSTD_STRUCT + SFB_DSEC_ZSTATE - 1) /
				 SFB_DSEC_ZSTATE;
		need = slots < (uint64_t)n ? (int)slots : n;
	}
	struct sfb_dstream *t = z_of(d, id);
	if (t && t->span >= need)
		return t;
	if (t) {
		t->owner = -1; /* too small: placed anew */
		t->cp_valid = false;
	}
	int best = 0;
	uint64_t best_cost = UINT64_MAX;
	for (int s = 0; s + need <= n; s++) {
		uint64_t cost = 0; /* the most recent use among the streams there, + 1 */
		for (int j = 0; j < d->nz; j++)
			if (holds_slots(&d->zs[j], s, need) && d->zs[j].used + 1u > cost)
				cost = d->zs[j].used + 1u;
		if (cost < best_cost) {
			best_cost = cost;
			best = s;
		}
	}
	for (int j = 0; j < d->nz; j++)
		if (holds_slots(&d->zs[j], best, need)) {
			d->zs[j].owner = -1;
			d->zs[j].cp_valid = false;
		}
	/* Its record: a free one, else the least recently used (its slots
	 * lie elsewhere: they become free). */
	t = free_or_lru(d);
	t->owner = -1;
	slot_set(t, best, need);
	t->cp_valid = false;
	return t;
}

/* Restart a stream on section ID's data: the one that decodes it, else
 * a free one, else the least recently used. */
static struct sfb_dstream *z_restart(struct sfb_dsecs *d, int id)
{
	struct sfb_dstream *t = d->zstd[id] && !any_zlib(d) ? zstd_place(d, id) : z_of(d, id);
	if (!t)
		t = free_or_lru(d);
	t->cp_valid = t->cp_valid && t->owner == id;
	if (d->zstd[id]) {
		sfb_zstd_init(t->zd, t->zhist, t->zhist_size, csize_of(d, id), zstd_read, t);
		sfb_zstd_set_limit(t->zd, d->size[id]);
	} else {
		sfb_inflate_init(t->z, SFB_INFLATE_ZLIB, t->zwindow);
		sfb_inflate_set_limit(t->z, d->size[id]);
	}
	t->owner = id;
	t->in_off = 0;
	t->out = 0;
	d->restarts++;
	return t;
}

/* Decompress section ID's next N bytes from stream T into OUT (NULL:
 * discard them). */
static int z_take(struct sfb_dsecs *d, struct sfb_dstream *t, int id, uint8_t *out, uint64_t n)
{
	if (d->zstd[id])
		return zstd_take(d, t, out, n);
	struct sfb_inflate *z = t->z;
	uint64_t csize = csize_of(d, id);
	while (n) {
		if (d->inflated + n > SFB_DSEC_MAX_INFLATE)
			return SFB_DSEC_E_BUDGET_INFLATE;
		size_t step = n > (1u << 30) ? (1u << 30) : (size_t)n;
		if (z->avail_in == 0 && t->in_off < csize) {
			size_t k = csize - t->in_off < SFB_DSEC_INPUT ? (size_t)(csize - t->in_off)
								      : SFB_DSEC_INPUT;
			if (pread_all(d->fd, t->zin, k, d->data[id] + t->in_off))
				return SFB_DSEC_E_IO;
			d->preads++;
			t->in_off += k;
			z->next_in = t->zin;
			z->avail_in = k;
		}
		z->next_out = out;
		z->avail_out = step;
		int rc = sfb_inflate(z, t->in_off == csize);
		size_t got = step - z->avail_out;
		t->out += got;
		d->inflated += got;
		n -= got;
		if (out)
			out += got;
		if (rc < 0)
			return SFB_DSEC_E_INFLATE;
		if (rc == SFB_INFLATE_END && n)
			return SFB_DSEC_E_TRUNCATED; /* the stream is shorter than ch_size */
		if (rc == SFB_INFLATE_NEED_INPUT && t->in_off == csize && z->avail_in == 0)
			return SFB_DSEC_E_INFLATE;
	}
	return 0;
}

int sfb_dview_need(struct sfb_dview *v, uint64_t off, size_t n)
{
	struct sfb_dsecs *d = v->d;
	uint64_t size = d->size[v->id];
	if (off > size)
		return SFB_DSEC_E_TRUNCATED;
	if (n > size - off)
		n = (size_t)(size - off);
	if (off >= v->base && off - v->base <= v->len && n <= v->len - (off - v->base))
		return 0;
	if (n > v->cap)
		return SFB_DSEC_E_TRUNCATED;
	if (++d->loads > SFB_DSEC_MAX_LOADS)
		return SFB_DSEC_E_BUDGET_LOADS;
	size_t want = size - off < v->cap ? (size_t)(size - off) : v->cap;
	if (!d->sec[v->id].compressed) {
		v->len = 0;
		int err = pread_all(d->fd, v->buf, want, d->data[v->id] + off);
		if (err)
			return err;
		d->preads++;
		v->base = off;
		v->len = want;
		return 0;
	}
	/* Keep what the window already holds from off on when the stream
	 * continues right after it. */
	size_t keep = 0;
	uint64_t end = v->base + v->len;
	struct sfb_dstream *t = z_of(d, v->id);
	if (t && t->out == end && off >= v->base && off <= end) {
		keep = (size_t)(end - off);
		memmove(v->buf, v->buf + (off - v->base), keep);
	} else if (t && d->zstd[v->id] && t->out > off && t->out - off <= t->zhist_size &&
		   t->out - off <= t->zd->total_out) {
		/* Behind the stream, but still in its history ring. */
		keep = t->out - off < want ? (size_t)(t->out - off) : want;
		size_t at = (t->zd->wpos + t->zhist_size - (size_t)(t->out - off)) % t->zhist_size;
		for (size_t k = 0; k < keep; k++) {
			v->buf[k] = t->zhist[at];
			if (++at == t->zhist_size)
				at = 0;
		}
	} else if (!t || t->out > off) {
		t = z_restart(d, v->id);
		if (t->cp_valid && t->cp_out <= off) {
			/* Resume from the copy: the section's start is further. */
			memcpy(t->z, t->cp, SFB_DSEC_ZSTATE);
			t->in_off = t->cp_in_off;
			t->out = t->cp_out;
		}
	}
	t->used = ++d->ztick;
	v->base = off;
	v->len = 0;
	int err = 0;
	if (!keep && t->out < off) {
		bool far = off - t->out >= SFB_DSEC_CHECKPOINT_SKIP;
		err = z_take(d, t, v->id, NULL, off - t->out);
		if (!err && far && t->cp && t->span == 1) {
			memcpy(t->cp, t->z, SFB_DSEC_ZSTATE);
			t->cp_in_off = t->in_off;
			t->cp_out = t->out;
			t->cp_valid = true;
		}
	}
	if (!err)
		err = z_take(d, t, v->id, v->buf + keep, want - keep);
	if (err) {
		t->owner = -1;
		t->cp_valid = false;
		return err;
	}
	v->len = want;
	return 0;
}

/* The window as bytes, and OFF's position in it, once [off, off + n) is in. */
static int view_at(struct sfb_dview *v, uint64_t off, size_t n, struct sfb_bytes *b, uint64_t *at)
{
	int err = sfb_dview_need(v, off, n);
	if (err)
		return err;
	b->p = v->buf;
	b->len = v->len;
	b->swap = false;
	*at = off - v->base;
	return 0;
}

int sfb_dview_u(struct sfb_dview *v, uint64_t *off, unsigned width, uint64_t *out)
{
	struct sfb_bytes b;
	uint64_t at;
	int err = view_at(v, *off, width, &b, &at);
	if (err)
		return err;
	if (!sfb_dw_get(&b, &at, b.len, width, out))
		return SFB_DSEC_E_TRUNCATED;
	*off += width;
	return 0;
}

static int leb(struct sfb_dview *v, uint64_t *off, bool sgn, uint64_t *out)
{
	struct sfb_bytes b;
	uint64_t at, start;
	int err = view_at(v, *off, SFB_LEB_MAX_BYTES, &b, &at);
	if (err)
		return err;
	start = at;
	switch (sfb_dw_leb(&b, &at, b.len, sgn, out)) {
	case SFB_DW_OK:
		*off += at - start;
		return 0;
	case SFB_DW_E_TRUNCATED:
		return SFB_DSEC_E_TRUNCATED;
	default:
		return SFB_DSEC_E_LEB;
	}
}

int sfb_dview_uleb(struct sfb_dview *v, uint64_t *off, uint64_t *out)
{
	return leb(v, off, false, out);
}

int sfb_dview_sleb(struct sfb_dview *v, uint64_t *off, int64_t *out)
{
	uint64_t u;
	int err = leb(v, off, true, &u);
	*out = (int64_t)u;
	return err;
}

int sfb_dview_str(struct sfb_dview *v, uint64_t *off, char *dst, size_t cap)
{
	size_t n = 0;
	uint64_t at = *off;
	for (;;) {
		struct sfb_bytes b;
		uint64_t i, c;
		size_t chunk = v->cap;
		if (at >= v->d->size[v->id])
			return SFB_DSEC_E_TRUNCATED; /* no NUL before the section's end */
		int err = view_at(v, at, 1, &b, &i);
		if (err)
			return err;
		if (chunk > b.len - i)
			chunk = (size_t)(b.len - i);
		for (size_t k = 0; k < chunk; k++, i++, at++, n++) {
			if (n >= SFB_DSEC_MAX_STRING)
				return SFB_DSEC_E_STRING;
			if (!sfb_get(&b, i, 1, &c))
				return SFB_DSEC_E_TRUNCATED;
			if (dst && n + 1 < cap)
				dst[n] = (char)c;
			if (c == 0) {
				if (dst && cap)
					dst[n < cap ? n : cap - 1] = 0;
				*off = at + 1;
				return 0;
			}
		}
	}
}

int sfb_dview_skip(struct sfb_dview *v, uint64_t *off, uint64_t n)
{
	uint64_t size = v->d->size[v->id];
	if (*off > size || n > size - *off)
		return SFB_DSEC_E_TRUNCATED;
	*off += n;
	return 0;
}

const char *sfb_dsec_err_name(int err)
{
	static const char *const names[] = {
		[0] = "ok", [1] = "io", [2] = "truncated", [3] = "leb128",
		[4] = "string-too-long", [5] = "compression-header", [6] = "inflate",
		[7] = "inflate-budget", [8] = "load-budget", [9] = "not-elf64",
		[10] = "no-section", [11] = "scratch-too-small", [12] = "zstd",
		[13] = "zstd-window-too-large",
	};
	if (err > 0 || err < SFB_DSEC_E_LAST_)
		return "unknown";
	return names[-err];
}
