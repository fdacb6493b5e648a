/* Zstandard decoder: see zstd.h.  The section names below are RFC 8878's. */
#include "base/zstd.h"

#include <string.h>

#include "base/bytes.h"

enum {
	M_FRAME,    /* at a frame's magic number, or the input's end */
	M_BLOCK,    /* at a block header */
	M_RAW,      /* copying a raw block */
	M_RLE,      /* repeating an RLE block's byte */
	M_SEQ,      /* executing a compressed block's sequences */
	M_END,
};

enum { LIT_RAW, LIT_RLE, LIT_HUF };
enum { T_LL, T_OF, T_ML };
enum { L_HDR, L_SEQ, L_LIT }; /* the input lines */

#define MAGIC 0xFD2FB528u
#define HUF_MAX_BITS 11

static const uint8_t max_log[3] = { 9, 8, 9 };
static const uint8_t max_sym[3] = { 35, 31, 52 };

static const int16_t ll_default[36] = { 4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
					2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1 };
static const int16_t ml_default[53] = { 1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1,
					1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
					1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1 };
static const int16_t of_default[29] = { 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1,
					1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1 };

static const uint32_t ll_base[36] = { 0,  1,  2,  3,  4,  5,  6,   7,   8,   9,    10,   11,
				      12, 13, 14, 15, 16, 18, 20,  22,  24,  28,   32,   40,
				      48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
static const uint8_t ll_bits[36] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,  1,
				     1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint32_t ml_base_hi[21] = { 35,  37,  39,  41,   43,   47,   51,   59,   67,    83,   99,
					 131, 259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539 };
static const uint8_t ml_bits_hi[21] = { 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static int fail(struct sfb_zstd *z, int err)
{
	if (z->error >= 0)
		z->error = err;
	return z->error;
}

static unsigned highbit(uint32_t v) /* v > 0 */
{
	return 31u - (unsigned)__builtin_clz(v);
}

/* ---- input -------------------------------------------------------------- */

/* The byte at OFF through line L (loaded forward from OFF, or backward
 * ending at OFF when BACK). */
static bool in_byte(struct sfb_zstd *z, int l, uint64_t off, bool back, uint8_t *out)
{
	struct sfb_zstd_line *c = &z->line[l];
	if (off >= z->in_size) {
		fail(z, SFB_ZSTD_E_TRUNCATED);
		return false;
	}
	if (off < c->base || off - c->base >= c->len) {
		uint64_t base = off;
		if (back)
			base = off + 1 >= SFB_ZSTD_LINE ? off + 1 - SFB_ZSTD_LINE : 0;
		uint64_t len = z->in_size - base < SFB_ZSTD_LINE ? z->in_size - base : SFB_ZSTD_LINE;
		c->len = 0;
		if (z->read(z->ctx, base, c->buf, (size_t)len)) {
			fail(z, SFB_ZSTD_E_READ);
			return false;
		}
		c->base = base;
		c->len = (uint32_t)len;
	}
	struct sfb_bytes b = { c->buf, c->len, false };
	uint64_t v;
	if (!sfb_get(&b, off - c->base, 1, &v)) {
		fail(z, SFB_ZSTD_E_TRUNCATED);
		return false;
	}
	*out = (uint8_t)v;
	return true;
}

/* N (<= 8) little-endian bytes at z->in_pos, which moves past them; the
 * read must end at or before END. */
static bool hdr_le(struct sfb_zstd *z, unsigned n, uint64_t end, uint64_t *out)
{
	uint64_t v = 0;
	if (end > z->in_size)
		end = z->in_size;
	if (z->in_pos > end || n > end - z->in_pos) {
		fail(z, SFB_ZSTD_E_TRUNCATED);
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		uint8_t b;
		if (!in_byte(z, L_HDR, z->in_pos + i, false, &b))
			return false;
		v |= (uint64_t)b << (8 * i);
	}
	z->in_pos += n;
	*out = v;
	return true;
}

/* A backward bit stream on [start, end): its last byte holds the marker. */
static bool bits_init(struct sfb_zstd *z, struct sfb_zstd_bits *r, int l, uint64_t start,
		      uint64_t end)
{
	uint8_t last;
	if (end <= start)
		return fail(z, SFB_ZSTD_E_BITSTREAM), false;
	if (!in_byte(z, l, end - 1, true, &last))
		return false;
	if (last == 0)
		return fail(z, SFB_ZSTD_E_BITSTREAM), false;
	r->start = start;
	r->pos = (int64_t)((end - start - 1) * 8 + highbit(last));
	return true;
}

/* The N (<= 32) bits below r->pos, as a number (bits before the stream's
 * start read as 0); r->pos moves down by N when TAKE. */
static bool bits_get(struct sfb_zstd *z, struct sfb_zstd_bits *r, int l, unsigned n, bool take,
		     uint32_t *out)
{
	int64_t hi = r->pos, lo = hi - (int64_t)n;
	uint64_t v = 0;
	if (n && hi > 0) {
		int64_t from = lo > 0 ? lo : 0;
		uint64_t first = (uint64_t)from >> 3, last = (uint64_t)(hi - 1) >> 3;
		for (uint64_t i = last + 1; i-- > first;) {
			uint8_t b;
			if (!in_byte(z, l, r->start + i, true, &b))
				return false;
			v = v << 8 | b;
		}
		v >>= (uint64_t)from - first * 8;
		v &= ((uint64_t)1 << (hi - from)) - 1;
		if (lo < 0)
			v <<= -lo;
	}
	if (take)
		r->pos = lo;
	*out = (uint32_t)v;
	return true;
}

/* ---- FSE tables ------------------------------------------------------------- */

/* Decoding table T (1 << LOG cells) from the normalized counts NORM of
 * NSYM symbols. */
static bool fse_build(struct sfb_zstd_fse *t, unsigned log, const int16_t *norm, unsigned nsym)
{
	uint32_t size = 1u << log;
	uint16_t next[64];
	int32_t high = (int32_t)size - 1;
	if (nsym > 64)
		return false;
	for (unsigned s = 0; s < nsym; s++) {
		if (norm[s] == -1) {
			if (high < 0)
				return false;
			t[high--].sym = (uint8_t)s;
			next[s] = 1;
		} else {
			next[s] = (uint16_t)norm[s];
		}
	}
	uint32_t pos = 0, step = (size >> 1) + (size >> 3) + 3, mask = size - 1, cells = 0;
	for (unsigned s = 0; s < nsym; s++)
		cells += norm[s] > 0 ? (uint32_t)norm[s] : 0;
	if (cells != (uint32_t)(high + 1))
		return false;
	for (unsigned s = 0; s < nsym; s++) {
		for (int i = 0; i < norm[s]; i++) {
			t[pos].sym = (uint8_t)s;
			/* step is odd and size a power of two: every cell comes round */
			do
				pos = (pos + step) & mask;
			while ((int32_t)pos > high);
		}
	}
	if (pos != 0)
		return false;
	for (uint32_t u = 0; u < size; u++) {
		uint32_t x = next[t[u].sym]++;
		if (x == 0)
			return false;
		unsigned nb = log - highbit(x);
		t[u].nbits = (uint8_t)nb;
		t[u].base = (uint16_t)((x << nb) - size);
	}
	return true;
}

/* An FSE table description at z->in_pos (before END): its accuracy log
 * (at most MAXLOG) into *LOG, its counts of up to MAXSYM + 1 symbols
 * into NORM, *NSYM how many; z->in_pos moves past it. */
static bool fse_read(struct sfb_zstd *z, uint64_t end, unsigned maxlog, unsigned maxsym,
		     int16_t *norm, unsigned *nsym, unsigned *log)
{
	uint64_t bitpos = 0; /* from z->in_pos */
	uint64_t avail = end > z->in_pos ? (end - z->in_pos) * 8 : 0;
#define PEEK(n, out)                                                                     \
	do {                                                                             \
		uint32_t v_ = 0;                                                         \
		for (unsigned i_ = 0; i_ < (n); i_++) {                                  \
			uint64_t at_ = bitpos + i_;                                      \
			uint8_t b_ = 0;                                                  \
			if (at_ < avail && !in_byte(z, L_HDR, z->in_pos + (at_ >> 3), false, &b_)) \
				return false;                                            \
			v_ |= (uint32_t)((b_ >> (at_ & 7)) & 1) << i_;                   \
		}                                                                        \
		(out) = v_;                                                              \
	} while (0)
	uint32_t v;
	PEEK(4, v);
	bitpos += 4;
	unsigned al = v + 5;
	if (al > maxlog)
		return fail(z, SFB_ZSTD_E_ACCURACY), false;
	int32_t remaining = (1 << al) + 1, threshold = 1 << al;
	unsigned nb = al + 1, s = 0;
	while (remaining > 1) {
		if (s > maxsym)
			return fail(z, SFB_ZSTD_E_FSE), false;
		int32_t max = 2 * threshold - 1 - remaining, count;
		PEEK(nb, v);
		if ((int32_t)(v & (uint32_t)(threshold - 1)) < max) {
			count = (int32_t)(v & (uint32_t)(threshold - 1));
			bitpos += nb - 1;
		} else {
			count = (int32_t)(v & (uint32_t)(2 * threshold - 1));
			if (count >= threshold)
				count -= max;
			bitpos += nb;
		}
		count--;
		remaining -= count < 0 ? -count : count;
		norm[s++] = (int16_t)count;
		if (count == 0) {
			for (;;) {
				PEEK(2, v);
				bitpos += 2;
				for (uint32_t k = 0; k < v; k++) {
					if (s > maxsym)
						return fail(z, SFB_ZSTD_E_FSE), false;
					norm[s++] = 0;
				}
				if (v != 3)
					break;
			}
		}
		while (remaining < threshold && threshold > 1) {
			nb--;
			threshold >>= 1;
		}
		if (bitpos > avail)
			return fail(z, SFB_ZSTD_E_TRUNCATED), false;
	}
#undef PEEK
	if (remaining != 1 || bitpos > avail)
		return fail(z, SFB_ZSTD_E_FSE), false;
	z->in_pos += (bitpos + 7) >> 3;
	*nsym = s;
	*log = al;
	return true;
}

/* ---- Huffman ---------------------------------------------------------------- */

/* The Huffman_Tree_Description at z->in_pos (before END) into z->huf. */
static bool huf_read(struct sfb_zstd *z, uint64_t end)
{
	uint8_t w[256];
	unsigned n = 0;
	uint64_t hb;
	if (!hdr_le(z, 1, end, &hb))
		return false;
	if (hb < 128) {
		uint64_t stop = z->in_pos + hb;
		if (hb == 0 || stop > end)
			return fail(z, SFB_ZSTD_E_HUFFMAN), false;
		int16_t norm[13];
		unsigned nsym, log;
		struct sfb_zstd_fse t[64];
		if (!fse_read(z, stop, 6, 12, norm, &nsym, &log))
			return false;
		if (!fse_build(t, log, norm, nsym))
			return fail(z, SFB_ZSTD_E_FSE), false;
		struct sfb_zstd_bits r;
		if (!bits_init(z, &r, L_HDR, z->in_pos, stop))
			return false;
		uint32_t s[2];
		if (!bits_get(z, &r, L_HDR, log, true, &s[0]) || !bits_get(z, &r, L_HDR, log, true, &s[1]))
			return false;
		if (r.pos < 0)
			return fail(z, SFB_ZSTD_E_BITSTREAM), false;
		for (int k = 0;; k ^= 1) {
			if (n >= 255)
				return fail(z, SFB_ZSTD_E_HUFFMAN), false;
			const struct sfb_zstd_fse *c = &t[s[k]];
			w[n++] = c->sym;
			uint32_t add;
			if (!bits_get(z, &r, L_HDR, c->nbits, true, &add))
				return false;
			s[k] = c->base + add;
			if (r.pos < 0) {
				if (n >= 255)
					return fail(z, SFB_ZSTD_E_HUFFMAN), false;
				w[n++] = t[s[k ^ 1]].sym;
				break;
			}
		}
		z->in_pos = stop;
	} else {
		n = (unsigned)hb - 127;
		for (unsigned i = 0; i < n; i += 2) {
			uint64_t b;
			if (!hdr_le(z, 1, end, &b))
				return false;
			w[i] = (uint8_t)(b >> 4);
			if (i + 1 < n)
				w[i + 1] = b & 15;
		}
	}
	uint32_t sum = 0, rank1 = 0;
	for (unsigned i = 0; i < n; i++) {
		if (w[i] > HUF_MAX_BITS)
			return fail(z, SFB_ZSTD_E_HUFFMAN), false;
		if (w[i])
			sum += 1u << (w[i] - 1);
	}
	if (sum == 0)
		return fail(z, SFB_ZSTD_E_HUFFMAN), false;
	unsigned maxbits = highbit(sum) + 1;
	uint32_t left = (1u << maxbits) - sum;
	if (maxbits > HUF_MAX_BITS || (left & (left - 1)))
		return fail(z, SFB_ZSTD_E_HUFFMAN), false;
	w[n++] = (uint8_t)(highbit(left) + 1); /* n <= 255 before */
	for (unsigned i = 0; i < n; i++)
		rank1 += w[i] == 1;
	if (rank1 < 2 || (rank1 & 1))
		return fail(z, SFB_ZSTD_E_HUFFMAN), false;
	uint32_t pos = 0;
	for (unsigned wt = 1; wt <= maxbits; wt++) {
		for (unsigned s = 0; s < n; s++) {
			if (w[s] != wt)
				continue;
			uint32_t len = 1u << (wt - 1);
			uint16_t e = (uint16_t)(s << 8 | (maxbits + 1 - wt));
			for (uint32_t i = 0; i < len; i++)
				z->huf[pos + i] = e; /* the lengths fill 1 << maxbits exactly */
			pos += len;
		}
	}
	z->huf_bits = (uint8_t)maxbits;
	return true;
}

/* ---- XXH64 ------------------------------------------------------------------- */

#define P1 11400714785074694791ull
#define P2 14029467366897019727ull
#define P3 1609587929392839161ull
#define P4 9650029242287828579ull
#define P5 2870177450012600261ull

static uint64_t rotl(uint64_t x, unsigned r)
{
	return x << r | x >> (64 - r);
}
static uint64_t xround(uint64_t acc, uint64_t in)
{
	return rotl(acc + in * P2, 31) * P1;
}
static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static void xxh_start(uint64_t *v, uint64_t seed)
{
	v[0] = seed + P1 + P2;
	v[1] = seed + P2;
	v[2] = seed;
	v[3] = seed - P1;
}
static void xxh_stripe(uint64_t *v, const uint8_t *p)
{
	for (int i = 0; i < 4; i++)
		v[i] = xround(v[i], le64(p + 8 * i));
}
static uint64_t xxh_end(const uint64_t *v, uint64_t len, const uint8_t *tail, size_t n, uint64_t seed)
{
	uint64_t h;
	if (len >= 32) {
		h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
		for (int i = 0; i < 4; i++)
			h = (h ^ xround(0, v[i])) * P1 + P4;
	} else {
		h = seed + P5;
	}
	h += len;
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		h = rotl(h ^ xround(0, le64(tail + i)), 27) * P1 + P4;
	if (i + 4 <= n) {
		uint64_t k = (uint64_t)tail[i] | (uint64_t)tail[i + 1] << 8 |
			     (uint64_t)tail[i + 2] << 16 | (uint64_t)tail[i + 3] << 24;
		h = rotl(h ^ k * P1, 23) * P2 + P3;
		i += 4;
	}
	for (; i < n; i++)
		h = rotl(h ^ tail[i] * P5, 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

uint64_t sfb_xxh64(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *q = p;
	uint64_t v[4];
	xxh_start(v, seed);
	size_t i = 0;
	for (; i + 32 <= n; i += 32)
		xxh_stripe(v, q + i);
	return xxh_end(v, n, q + i, n - i, seed);
}

/* ---- output ------------------------------------------------------------------ */

static void emit(struct sfb_zstd *z, uint8_t b, uint8_t **out)
{
	z->hist[z->wpos] = b;
	if (++z->wpos == z->hist_size)
		z->wpos = 0;
	if (*out)
		*(*out)++ = b;
	if (z->has_checksum) {
		z->xxh_buf[z->xxh_len++ & 31] = b;
		if ((z->xxh_len & 31) == 0)
			xxh_stripe(z->xxh_v, z->xxh_buf);
	}
	z->frame_out++;
	z->block_out++;
	z->total_out++;
}

/* Room for N more bytes of output in the frame, the block and the limit. */
static bool room(struct sfb_zstd *z, uint64_t n)
{
	if (z->has_fcs && n > z->fcs - z->frame_out)
		return fail(z, SFB_ZSTD_E_CONTENT_SIZE), false;
	if (n > z->block_max - z->block_out)
		return fail(z, SFB_ZSTD_E_BLOCK_SIZE), false;
	if (n > z->limit - z->total_out)
		return fail(z, SFB_ZSTD_E_OUTPUT_LIMIT), false;
	return true;
}

/* ---- frames and blocks --------------------------------------------------------- */

/* The history a frame needs: Window_Size from its descriptor byte wd
 * (none in a single-segment frame, whose window is its content size),
 * and never more than the content size when the frame gives one: no
 * match reaches before the frame's start. */
static uint64_t frame_window(bool single, uint64_t wd, bool has_fcs, uint64_t fcs)
{
	uint64_t window = 0;
	if (!single) {
		uint64_t base = (uint64_t)1 << (10 + (wd >> 3));
		window = base + (base / 8) * (wd & 7);
	}
	if (has_fcs && (single || fcs < window))
		window = fcs;
	return window;
}

static const unsigned did_size[4] = { 0, 1, 2, 4 }, fcs_size[4] = { 0, 2, 4, 8 };

/* The size of a Frame_Content_Size field, from the header descriptor. */
static unsigned fcs_bytes(uint64_t fhd)
{
	return (fhd >> 6) == 0 && (fhd & 0x20) ? 1 : fcs_size[fhd >> 6 & 3];
}

/* The content size a field of fs bytes holding raw gives: a 2-byte field
 * counts from 256. */
static uint64_t fcs_value(uint64_t raw, unsigned fs)
{
	return fs == 2 ? raw + 256 : raw;
}

uint64_t sfb_zstd_frame_window(const uint8_t *h, size_t n)
{
	struct sfb_bytes b = { h, n, false };
	uint64_t magic, fhd, wd = 0, fcs = 0;
	if (!sfb_get(&b, 0, 4, &magic) || magic != MAGIC || !sfb_get(&b, 4, 1, &fhd))
		return 0;
	bool single = fhd & 0x20;
	uint64_t at = 5;
	if (!single && !sfb_get(&b, at++, 1, &wd))
		return 0;
	at += did_size[fhd & 3];
	unsigned fs = fcs_bytes(fhd);
	if (fs && !sfb_get(&b, at, fs, &fcs))
		return 0;
	return frame_window(single, wd, fs != 0, fcs_value(fcs, fs));
}

static bool frame_header(struct sfb_zstd *z)
{
	uint64_t magic, v;
	if (!hdr_le(z, 4, z->in_size, &magic))
		return false;
	if ((magic & ~(uint64_t)15) == 0x184D2A50u) {
		/* A skippable frame: its size, then that many bytes. */
		if (!hdr_le(z, 4, z->in_size, &v))
			return false;
		if (v > z->in_size - z->in_pos)
			return fail(z, SFB_ZSTD_E_TRUNCATED), false;
		z->in_pos += v;
		return true;
	}
	if (magic != MAGIC)
		return fail(z, SFB_ZSTD_E_MAGIC), false;
	uint64_t fhd;
	if (!hdr_le(z, 1, z->in_size, &fhd))
		return false;
	unsigned did_flag = fhd & 3;
	bool single = fhd & 0x20;
	if (fhd & 0x08)
		return fail(z, SFB_ZSTD_E_RESERVED), false;
	uint64_t wd = 0;
	if (!single && !hdr_le(z, 1, z->in_size, &wd))
		return false;
	if (did_flag) {
		if (!hdr_le(z, did_size[did_flag], z->in_size, &v))
			return false;
		if (v)
			return fail(z, SFB_ZSTD_E_DICTIONARY), false;
	}
	unsigned fs = fcs_bytes(fhd);
	z->has_fcs = fs != 0;
	z->fcs = 0;
	if (fs) {
		if (!hdr_le(z, fs, z->in_size, &z->fcs))
			return false;
		z->fcs = fcs_value(z->fcs, fs);
	}
	uint64_t window = frame_window(single, wd, z->has_fcs, z->fcs);
	/* Block_Maximum_Size is the smaller of Window_Size and 128 KiB; only
	 * 128 KiB is enforced, as libzstd does when it decodes a whole frame:
	 * the window bounds how far matches reach, the ring's size. */
	z->block_max = SFB_ZSTD_BLOCK_MAX;
	if (window > z->hist_size)
		return fail(z, SFB_ZSTD_E_WINDOW), false;
	z->window = window;
	z->has_checksum = fhd & 0x04;
	z->frame_out = 0;
	z->last_block = false;
	z->rep[0] = 1, z->rep[1] = 4, z->rep[2] = 8;
	z->huf_bits = 0;
	z->have_fse[0] = z->have_fse[1] = z->have_fse[2] = false;
	xxh_start(z->xxh_v, 0);
	z->xxh_len = 0;
	z->frames++;
	z->mode = M_BLOCK;
	return true;
}

/* The frame's end: its size and checksum. */
static bool frame_end(struct sfb_zstd *z)
{
	if (z->has_fcs && z->frame_out != z->fcs)
		return fail(z, SFB_ZSTD_E_CONTENT_SIZE), false;
	if (z->has_checksum) {
		uint64_t want;
		if (!hdr_le(z, 4, z->in_size, &want))
			return false;
		uint64_t h = xxh_end(z->xxh_v, z->xxh_len, z->xxh_buf, (size_t)(z->xxh_len & 31), 0);
		if ((h & 0xFFFFFFFFu) != want)
			return fail(z, SFB_ZSTD_E_CHECKSUM), false;
	}
	z->mode = M_FRAME;
	return true;
}

/* The Literals_Section at z->in_pos of a compressed block. */
static bool literals(struct sfb_zstd *z)
{
	uint64_t end = z->block_end, b0, h;
	if (!hdr_le(z, 1, end, &b0))
		return false;
	unsigned type = b0 & 3, sf = (b0 >> 2) & 3;
	z->lit_used = 0;
	z->cur_stream = -1;
	z->stream_left = 0;
	if (type < 2) {
		uint32_t regen;
		if (sf == 0 || sf == 2) {
			regen = (uint32_t)(b0 >> 3);
		} else if (sf == 1) {
			if (!hdr_le(z, 1, end, &h))
				return false;
			regen = (uint32_t)(b0 >> 4) + (uint32_t)(h << 4);
		} else {
			if (!hdr_le(z, 2, end, &h))
				return false;
			regen = (uint32_t)(b0 >> 4) + (uint32_t)(h << 4);
		}
		if (regen > z->block_max)
			return fail(z, SFB_ZSTD_E_LITERALS), false;
		z->lit_total = regen;
		if (type == 0) {
			z->lit_type = LIT_RAW;
			z->lit_off = z->in_pos;
			if (regen > end - z->in_pos)
				return fail(z, SFB_ZSTD_E_LITERALS), false;
			z->in_pos += regen;
		} else {
			z->lit_type = LIT_RLE;
			if (!hdr_le(z, 1, end, &h))
				return false;
			z->rle = (uint8_t)h;
		}
		return true;
	}
	uint32_t regen, csize;
	int nstreams = sf == 0 ? 1 : 4;
	if (sf < 2) {
		if (!hdr_le(z, 2, end, &h))
			return false;
		h = b0 | h << 8;
		regen = (h >> 4) & 0x3FF;
		csize = (h >> 14) & 0x3FF;
	} else if (sf == 2) {
		if (!hdr_le(z, 3, end, &h))
			return false;
		h = b0 | h << 8;
		regen = (h >> 4) & 0x3FFF;
		csize = (uint32_t)(h >> 18) & 0x3FFF;
	} else {
		if (!hdr_le(z, 4, end, &h))
			return false;
		h = b0 | h << 8;
		regen = (h >> 4) & 0x3FFFF;
		csize = (uint32_t)(h >> 22) & 0x3FFFF;
	}
	if (regen > z->block_max || csize > end - z->in_pos)
		return fail(z, SFB_ZSTD_E_LITERALS), false;
	uint64_t lit_end = z->in_pos + csize;
	if (type == 2) {
		if (!huf_read(z, lit_end))
			return false;
	} else if (!z->huf_bits) {
		return fail(z, SFB_ZSTD_E_HUFFMAN), false;
	}
	z->lit_type = LIT_HUF;
	z->lit_total = regen;
	z->nstreams = nstreams;
	if (nstreams == 1) {
		z->stream_start[0] = z->in_pos;
		z->stream_end[0] = lit_end;
		z->stream_count[0] = regen;
	} else {
		uint64_t j[3];
		for (int i = 0; i < 3; i++)
			if (!hdr_le(z, 2, lit_end, &j[i]))
				return false;
		uint64_t at = z->in_pos;
		uint32_t each = (regen + 3) / 4;
		if (3 * each > regen)
			return fail(z, SFB_ZSTD_E_LITERALS), false;
		for (int i = 0; i < 4; i++) {
			uint64_t len = i < 3 ? j[i] : (at < lit_end ? lit_end - at : 0);
			if (len == 0 || len > lit_end - at)
				return fail(z, SFB_ZSTD_E_LITERALS), false;
			z->stream_start[i] = at;
			z->stream_end[i] = at + len;
			z->stream_count[i] = i < 3 ? each : regen - 3 * each;
			at += len;
		}
	}
	z->in_pos = lit_end;
	return true;
}

/* Table K of the sequences section: MODE as the header gives it. */
static bool seq_table(struct sfb_zstd *z, int k, unsigned mode)
{
	struct sfb_zstd_fse *t = k == T_LL ? z->ll : k == T_OF ? z->of : z->ml;
	int16_t norm[64];
	unsigned nsym, log;
	uint64_t v;
	switch (mode) {
	case 0:
		if (k == T_LL)
			fse_build(t, 6, ll_default, 36);
		else if (k == T_ML)
			fse_build(t, 6, ml_default, 53);
		else
			fse_build(t, 5, of_default, 29);
		z->fse_log[k] = k == T_OF ? 5 : 6;
		break;
	case 1:
		if (!hdr_le(z, 1, z->block_end, &v))
			return false;
		if (v > max_sym[k])
			return fail(z, SFB_ZSTD_E_SEQUENCES), false;
		t[0].sym = (uint8_t)v;
		t[0].nbits = 0;
		t[0].base = 0;
		z->fse_log[k] = 0;
		break;
	case 2:
		if (!fse_read(z, z->block_end, max_log[k], max_sym[k], norm, &nsym, &log))
			return false;
		if (!fse_build(t, log, norm, nsym))
			return fail(z, SFB_ZSTD_E_FSE), false;
		z->fse_log[k] = (uint8_t)log;
		break;
	default:
		if (!z->have_fse[k])
			return fail(z, SFB_ZSTD_E_SEQUENCES), false;
		break;
	}
	z->have_fse[k] = true;
	return true;
}

/* A compressed block: its literals section, sequences header and tables,
 * and the sequences' starting states. */
static bool compressed_block(struct sfb_zstd *z)
{
	if (!literals(z))
		return false;
	uint64_t b0, v, end = z->block_end;
	if (!hdr_le(z, 1, end, &b0))
		return false;
	uint32_t nseq = (uint32_t)b0;
	if (b0 >= 128 && b0 < 255) {
		if (!hdr_le(z, 1, end, &v))
			return false;
		nseq = (uint32_t)((b0 - 128) << 8) + (uint32_t)v;
	} else if (b0 == 255) {
		if (!hdr_le(z, 2, end, &v))
			return false;
		nseq = (uint32_t)v + 0x7F00;
	}
	z->nseq = nseq;
	z->run_lit = z->run_match = 0;
	z->tail = false;
	if (nseq == 0) {
		if (z->in_pos != end)
			return fail(z, SFB_ZSTD_E_SEQUENCES), false;
		return true;
	}
	uint64_t modes;
	/* Its low 2 bits are reserved, 0 as written; they are not checked,
	 * as libzstd does not check them. */
	if (!hdr_le(z, 1, end, &modes))
		return false;
	if (!seq_table(z, T_LL, (modes >> 6) & 3) || !seq_table(z, T_OF, (modes >> 4) & 3) ||
	    !seq_table(z, T_ML, (modes >> 2) & 3))
		return false;
	if (!bits_init(z, &z->sbits, L_SEQ, z->in_pos, end))
		return false;
	if (!bits_get(z, &z->sbits, L_SEQ, z->fse_log[T_LL], true, &z->ll_state) ||
	    !bits_get(z, &z->sbits, L_SEQ, z->fse_log[T_OF], true, &z->of_state) ||
	    !bits_get(z, &z->sbits, L_SEQ, z->fse_log[T_ML], true, &z->ml_state))
		return false;
	if (z->sbits.pos < 0)
		return fail(z, SFB_ZSTD_E_OVERREAD), false;
	return true;
}

static bool block_header(struct sfb_zstd *z)
{
	uint64_t h;
	if (!hdr_le(z, 3, z->in_size, &h))
		return false;
	z->last_block = h & 1;
	unsigned type = (h >> 1) & 3;
	uint32_t size = (uint32_t)(h >> 3);
	z->block_out = 0;
	if (type == 3)
		return fail(z, SFB_ZSTD_E_BLOCK_TYPE), false;
	if (size > z->block_max)
		return fail(z, SFB_ZSTD_E_BLOCK_SIZE), false;
	if (type == 0) {
		if (size > z->in_size - z->in_pos)
			return fail(z, SFB_ZSTD_E_TRUNCATED), false;
		if (!room(z, size))
			return false;
		z->left = size;
		z->mode = M_RAW;
	} else if (type == 1) {
		if (!hdr_le(z, 1, z->in_size, &h) || !room(z, size))
			return false;
		z->rle = (uint8_t)h;
		z->left = size;
		z->mode = M_RLE;
	} else {
		if (size > z->in_size - z->in_pos)
			return fail(z, SFB_ZSTD_E_TRUNCATED), false;
		z->block_end = z->in_pos + size;
		if (!compressed_block(z))
			return false;
		z->mode = M_SEQ;
	}
	return true;
}

/* ---- sequences ------------------------------------------------------------------- */

/* The next literal of the block. */
static bool next_literal(struct sfb_zstd *z, uint8_t *out)
{
	if (z->lit_type == LIT_RLE) {
		*out = z->rle;
	} else if (z->lit_type == LIT_RAW) {
		if (!in_byte(z, L_LIT, z->lit_off + z->lit_used, false, out))
			return false;
	} else {
		while (z->stream_left == 0) {
			if (z->cur_stream >= 0 && z->lbits.pos != 0)
				return fail(z, SFB_ZSTD_E_BITSTREAM), false;
			if (++z->cur_stream >= z->nstreams)
				return fail(z, SFB_ZSTD_E_LITERALS), false;
			int i = z->cur_stream;
			if (!bits_init(z, &z->lbits, L_LIT, z->stream_start[i], z->stream_end[i]))
				return false;
			z->stream_left = z->stream_count[i];
		}
		uint32_t idx;
		if (!bits_get(z, &z->lbits, L_LIT, z->huf_bits, false, &idx))
			return false;
		uint16_t e = z->huf[idx];
		unsigned nb = e & 0xFF;
		if ((int64_t)nb > z->lbits.pos)
			return fail(z, SFB_ZSTD_E_BITSTREAM), false;
		z->lbits.pos -= nb;
		*out = (uint8_t)(e >> 8);
		z->stream_left--;
	}
	z->lit_used++;
	return true;
}

/* After the block's last literal: every Huffman stream used up exactly. */
static bool literals_done(struct sfb_zstd *z)
{
	if (z->lit_type != LIT_HUF)
		return true;
	if (z->cur_stream >= 0 && (z->lbits.pos != 0 || z->stream_left))
		return fail(z, SFB_ZSTD_E_BITSTREAM), false;
	while (++z->cur_stream < z->nstreams) {
		int i = z->cur_stream;
		if (z->stream_count[i] ||
		    !bits_init(z, &z->lbits, L_LIT, z->stream_start[i], z->stream_end[i]))
			return fail(z, SFB_ZSTD_E_BITSTREAM), false;
		if (z->lbits.pos != 0)
			return fail(z, SFB_ZSTD_E_BITSTREAM), false;
	}
	return true;
}

/* Decode the next sequence into run_lit, run_match, run_off. */
static bool next_sequence(struct sfb_zstd *z)
{
	struct sfb_zstd_bits *r = &z->sbits;
	const struct sfb_zstd_fse *llc = &z->ll[z->ll_state], *mlc = &z->ml[z->ml_state],
				  *ofc = &z->of[z->of_state];
	unsigned ofcode = ofc->sym, mlcode = mlc->sym, llcode = llc->sym;
	if (ofcode > 31 || mlcode > 52 || llcode > 35)
		return fail(z, SFB_ZSTD_E_SEQUENCES), false;
	uint32_t ofbits, mlx, llx;
	if (!bits_get(z, r, L_SEQ, ofcode, true, &ofbits))
		return false;
	uint64_t ofv = ((uint64_t)1 << ofcode) + ofbits;
	unsigned mlb = mlcode < 32 ? 0 : ml_bits_hi[mlcode - 32];
	if (!bits_get(z, r, L_SEQ, mlb, true, &mlx) ||
	    !bits_get(z, r, L_SEQ, ll_bits[llcode], true, &llx))
		return false;
	uint32_t ml = (mlcode < 32 ? mlcode + 3 : ml_base_hi[mlcode - 32]) + mlx;
	uint32_t ll = ll_base[llcode] + llx;
	if (--z->nseq) {
		uint32_t a, b, c;
		if (!bits_get(z, r, L_SEQ, llc->nbits, true, &a) ||
		    !bits_get(z, r, L_SEQ, mlc->nbits, true, &b) ||
		    !bits_get(z, r, L_SEQ, ofc->nbits, true, &c))
			return false;
		z->ll_state = llc->base + a;
		z->ml_state = mlc->base + b;
		z->of_state = ofc->base + c;
	}
	if (r->pos < 0)
		return fail(z, SFB_ZSTD_E_OVERREAD), false;
	if (z->nseq == 0 && r->pos != 0)
		return fail(z, SFB_ZSTD_E_BITSTREAM), false;
	uint64_t off;
	if (ofv > 3) {
		off = ofv - 3;
		z->rep[2] = z->rep[1];
		z->rep[1] = z->rep[0];
	} else {
		unsigned i = (unsigned)ofv - 1 + (ll == 0);
		if (i == 0) {
			off = z->rep[0];
		} else {
			off = i == 3 ? (uint64_t)z->rep[0] - 1 : z->rep[i];
			if (i != 1)
				z->rep[2] = z->rep[1];
			z->rep[1] = z->rep[0];
		}
	}
	if (off == 0 || off > 0xFFFFFFFFu)
		return fail(z, SFB_ZSTD_E_OFFSET), false;
	z->rep[0] = (uint32_t)off;
	if (ll > z->lit_total - z->lit_used)
		return fail(z, SFB_ZSTD_E_LITERAL_RUN), false;
	if (!room(z, (uint64_t)ll + ml))
		return false;
	if (off > z->frame_out + ll || off > z->window)
		return fail(z, SFB_ZSTD_E_OFFSET), false;
	z->run_lit = ll;
	z->run_match = ml;
	z->run_off = (uint32_t)off;
	return true;
}

/* ---- the decoder ------------------------------------------------------------------ */

void sfb_zstd_init(struct sfb_zstd *z, uint8_t *hist, size_t hist_size, uint64_t in_size,
		   sfb_zstd_read_fn read, void *ctx)
{
	memset(z, 0, offsetof(struct sfb_zstd, ll));
	for (int i = 0; i < 3; i++) {
		z->line[i].base = 0;
		z->line[i].len = 0;
	}
	z->read = read;
	z->ctx = ctx;
	z->in_size = in_size;
	z->hist = hist;
	z->hist_size = hist_size;
	z->limit = UINT64_MAX;
	z->mode = M_FRAME;
	if (!hist || !hist_size || !read)
		z->error = SFB_ZSTD_E_ARGUMENT;
}

void sfb_zstd_set_limit(struct sfb_zstd *z, uint64_t limit)
{
	z->limit = limit;
}

int sfb_zstd_decode(struct sfb_zstd *z, uint8_t *out, size_t n, size_t *got)
{
	size_t want = n;
	uint8_t *o = out;
	*got = 0;
	if (z->error < 0)
		return z->error;
	for (;;) {
		switch (z->mode) {
		case M_FRAME:
			if (z->in_pos == z->in_size && z->frames) {
				z->mode = M_END;
				continue;
			}
			if (!frame_header(z))
				goto done;
			continue;
		case M_BLOCK:
			if (z->last_block) {
				if (!frame_end(z))
					goto done;
				continue;
			}
			if (!block_header(z))
				goto done;
			continue;
		case M_RAW:
		case M_RLE:
			while (z->left && n) {
				uint8_t b = z->rle;
				if (z->mode == M_RAW && !in_byte(z, L_HDR, z->in_pos, false, &b))
					goto done;
				if (z->mode == M_RAW)
					z->in_pos++;
				emit(z, b, &o);
				z->left--;
				n--;
			}
			if (z->left)
				break;
			z->mode = M_BLOCK;
			continue;
		case M_SEQ:
			while (n && (z->run_lit || z->run_match)) {
				if (z->run_lit) {
					uint8_t b;
					if (!next_literal(z, &b))
						goto done;
					emit(z, b, &o);
					z->run_lit--;
				} else {
					size_t from = z->wpos >= z->run_off ? z->wpos - z->run_off
									    : z->wpos + z->hist_size - z->run_off;
					emit(z, z->hist[from], &o);
					z->run_match--;
				}
				n--;
			}
			if (z->run_lit || z->run_match)
				break;
			if (z->nseq) {
				if (!next_sequence(z))
					goto done;
				continue;
			}
			if (!z->tail) {
				z->tail = true;
				z->run_lit = z->lit_total - z->lit_used;
				if (!room(z, z->run_lit))
					goto done;
				continue;
			}
			if (!literals_done(z))
				goto done;
			z->in_pos = z->block_end;
			z->mode = M_BLOCK;
			continue;
		case M_END:
			*got = want - n;
			return SFB_ZSTD_END;
		}
		break; /* the output is full */
	}
	*got = want - n;
	return SFB_ZSTD_NEED_OUTPUT;
done:
	*got = want - n;
	return z->error;
}

struct mem_in {
	const uint8_t *p;
	size_t len;
};

static int mem_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct mem_in *m = ctx;
	if (off > m->len || n > m->len - off)
		return -1;
	memcpy(buf, m->p + off, n);
	return 0;
}

int sfb_zstd_buffer(struct sfb_zstd *z, const uint8_t *in, size_t len, uint8_t *out, size_t cap,
		    size_t *out_len, uint8_t *hist, size_t hist_size)
{
	struct mem_in m = { in, len };
	sfb_zstd_init(z, hist, hist_size, len, in ? mem_read : NULL, &m);
	int rc = sfb_zstd_decode(z, out, cap, out_len);
	if (rc == SFB_ZSTD_NEED_OUTPUT) {
		/* Full: is there more? */
		uint8_t extra;
		size_t one;
		int more = sfb_zstd_decode(z, &extra, 1, &one);
		rc = more == SFB_ZSTD_END && one == 0 ? SFB_ZSTD_END : more < 0 ? more : SFB_ZSTD_NEED_OUTPUT;
	}
	z->read = NULL;
	z->ctx = NULL;
	return rc;
}

const char *sfb_zstd_result_name(int result)
{
	static const char *const names[] = {
		"truncated", "read", "magic", "reserved", "dictionary", "window-too-large",
		"block-type", "block-size", "literals", "huffman", "fse-table", "accuracy-log",
		"sequences", "bitstream", "offset", "literal-run", "content-size", "checksum",
		"output-limit", "argument", "bitstream-overread",
	};
	if (result == SFB_ZSTD_END)
		return "end";
	if (result == SFB_ZSTD_NEED_OUTPUT)
		return "need-output";
	if (result < 0 && result >= SFB_ZSTD_E_LAST)
		return names[-result - 1];
	return "unknown";
}
