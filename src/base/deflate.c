/* gzip compressor: see deflate.h.
 *
 * Input is gathered in a buffer of two windows.  Positions are encoded
 * greedily: the longest match among the most recent CHAIN_LIMIT earlier
 * positions with the same 3-byte hash, else a literal.  Symbols are kept
 * until a block's worth (SFB_DEFLATE_BLOCK bytes or symbols) is gathered,
 * then written in the fixed Huffman code, or stored when that is smaller
 * (data that does not compress).  When the buffer is full, its older half
 * is dropped; hash chains hold stream positions, so they need no
 * rewriting, and a candidate is used only if it lies in the buffer and
 * within the window, and every match is compared byte by byte. */
#include "base/deflate.h"

#include <string.h>

#include "base/inflate.h" /* sfb_crc32, sfb_reverse_bits */

#define MIN_MATCH 3
#define MAX_MATCH 258
#define MIN_LOOKAHEAD (MAX_MATCH + MIN_MATCH) /* keep for a whole match */
#define CHAIN_LIMIT 32
#define NICE_MATCH 128 /* long enough: stop searching */
#define WMASK (SFB_DEFLATE_WINDOW - 1u)
#define BUF_SIZE (2 * SFB_DEFLATE_WINDOW)

#define BLOCK_STORED 0
#define BLOCK_FIXED 1
#define STORED_MAX 65535u
_Static_assert(SFB_DEFLATE_BLOCK + MAX_MATCH <= STORED_MAX, "a block fits one stored block");
#define END_OF_BLOCK 256
#define FIRST_LENGTH_SYM 257
#define LENGTH_SYMS 29
#define DIST_SYMS 30
#define DIST_BITS 5

static const uint16_t length_base[LENGTH_SYMS] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
};
static const uint8_t length_extra[LENGTH_SYMS] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
};
static const uint16_t dist_base[DIST_SYMS] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
	193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
	6145, 8193, 12289, 16385, 24577,
};
static const uint8_t dist_extra[DIST_SYMS] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
	6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
};

/* gzip header: magic, method 8, no flags, no time, no extra flags, Unix. */
static const uint8_t gzip_header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };

/* ---- output ------------------------------------------------------------- */

static void flush_out(struct sfb_deflate *d)
{
	if (d->outn && !d->error) {
		int rc = d->sink(d->ctx, d->out, d->outn);
		if (rc)
			d->error = rc;
	}
	d->outn = 0;
}

static void put_byte(struct sfb_deflate *d, uint8_t b)
{
	if (d->outn == SFB_DEFLATE_OUT_BUF)
		flush_out(d);
	d->out[d->outn++] = b;
}

/* N (at most 32) bits of V, LSB first. */
static void put_bits(struct sfb_deflate *d, uint32_t v, unsigned n)
{
	d->bits |= (uint64_t)v << d->nbits;
	d->nbits += n;
	while (d->nbits >= 8) {
		put_byte(d, (uint8_t)d->bits);
		d->bits >>= 8;
		d->nbits -= 8;
	}
}

static void align_bits(struct sfb_deflate *d)
{
	if (d->nbits)
		put_bits(d, 0, 8 - d->nbits);
}

static void put_le32(struct sfb_deflate *d, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		put_byte(d, (uint8_t)(v >> (8 * i)));
}

/* ---- the fixed code ----------------------------------------------------- */

/* RFC 1951 3.2.6: literal/length codes of 8, 9, 7 and 8 bits. */
static void fixed_code_init(struct sfb_deflate *d)
{
	for (unsigned s = 0; s < 288; s++) {
		unsigned code, len;
		if (s < 144) {
			code = 0x30 + s;
			len = 8;
		} else if (s < 256) {
			code = 0x190 + (s - 144);
			len = 9;
		} else if (s < 280) {
			code = s - 256;
			len = 7;
		} else {
			code = 0xc0 + (s - 280);
			len = 8;
		}
		d->lit_code[s] = (uint16_t)sfb_reverse_bits(code, len);
		d->lit_bits[s] = (uint8_t)len;
	}
	for (unsigned s = 0; s < DIST_SYMS; s++)
		d->dist_code[s] = (uint8_t)sfb_reverse_bits(s, DIST_BITS);
	for (unsigned s = 0, len = 3; len <= MAX_MATCH; len++) {
		while (s + 1 < LENGTH_SYMS && length_base[s + 1] <= len)
			s++;
		d->len_sym[len - 3] = (uint8_t)s;
	}
}

static unsigned dist_sym(uint32_t dist)
{
	unsigned s = 0;
	while (s + 1 < DIST_SYMS && dist_base[s + 1] <= dist)
		s++;
	return s;
}

/* ---- blocks ------------------------------------------------------------- */

static void write_stored(struct sfb_deflate *d, bool last, const uint8_t *p, uint32_t n)
{
	put_bits(d, (uint32_t)last | BLOCK_STORED << 1, 3);
	align_bits(d);
	put_bits(d, n, 16);
	put_bits(d, ~n & 0xffff, 16);
	for (uint32_t i = 0; i < n; i++)
		put_byte(d, p[i]);
}

static void write_match(struct sfb_deflate *d, unsigned len, unsigned dist)
{
	unsigned ls = d->len_sym[len - MIN_MATCH], sym = FIRST_LENGTH_SYM + ls;
	put_bits(d, d->lit_code[sym], d->lit_bits[sym]);
	put_bits(d, len - length_base[ls], length_extra[ls]);
	unsigned ds = dist_sym(dist);
	put_bits(d, d->dist_code[ds], DIST_BITS);
	put_bits(d, dist - dist_base[ds], dist_extra[ds]);
}

static void write_fixed(struct sfb_deflate *d, bool last)
{
	put_bits(d, (uint32_t)last | BLOCK_FIXED << 1, 3);
	for (uint32_t i = 0; i < d->nsyms; i++) {
		unsigned len = d->sym_len[i], dist = d->sym_dist[i];
		if (dist == 0)
			put_bits(d, d->lit_code[len], d->lit_bits[len]);
		else
			write_match(d, len, dist);
	}
	put_bits(d, d->lit_code[END_OF_BLOCK], d->lit_bits[END_OF_BLOCK]);
}

/* The gathered block, in whichever form is smaller. */
static void emit_block(struct sfb_deflate *d, bool last)
{
	uint32_t n = d->pos - d->block_start;
	uint64_t fixed_bits = d->block_bits + d->lit_bits[END_OF_BLOCK];
	uint64_t stored_bits = 7 + 32 + 8 * (uint64_t)n; /* alignment at most 7 */
	if (d->level == SFB_DEFLATE_STORE || stored_bits < fixed_bits)
		write_stored(d, last, d->buf + d->block_start, n);
	else
		write_fixed(d, last);
	d->block_start = d->pos;
	d->nsyms = 0;
	d->block_bits = 0;
}

/* ---- LZ77 --------------------------------------------------------------- */

static uint32_t hash3(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
	return (v * 2654435761u) >> (32 - SFB_DEFLATE_HASH_BITS);
}

/* Enter buffer index I (which has MIN_MATCH bytes) in its hash chain. */
static void insert(struct sfb_deflate *d, uint32_t i)
{
	uint32_t h = hash3(d->buf + i), at = d->base + i;
	d->prev[at & WMASK] = d->head[h];
	d->head[h] = at;
}

/* The longest match for buffer index I of at most MAXLEN bytes: its
 * length (0 if under MIN_MATCH), the distance in *DIST. */
static uint32_t longest_match(struct sfb_deflate *d, uint32_t i, uint32_t maxlen, uint32_t *dist)
{
	const uint8_t *s = d->buf + i;
	uint32_t at = d->base + i, reach = i < SFB_DEFLATE_WINDOW ? i : SFB_DEFLATE_WINDOW;
	uint32_t best = MIN_MATCH - 1, last = 0;
	uint32_t cand = d->head[hash3(s)];
	for (int chain = 0; chain < CHAIN_LIMIT; chain++) {
		uint32_t dd = at - cand;
		if (dd <= last || dd > reach)
			break; /* stale, or out of the window */
		const uint8_t *m = s - dd;
		if (m[best] == s[best]) {
			uint32_t len = 0;
			while (len < maxlen && m[len] == s[len])
				len++;
			if (len > best) {
				best = len;
				*dist = dd;
				if (len >= maxlen || len >= NICE_MATCH)
					break;
			}
		}
		last = dd;
		cand = d->prev[cand & WMASK];
	}
	return best >= MIN_MATCH ? best : 0;
}

static void add_literal(struct sfb_deflate *d, uint8_t b)
{
	d->sym_len[d->nsyms] = b;
	d->sym_dist[d->nsyms++] = 0;
	d->block_bits += d->lit_bits[b];
}

static void add_match(struct sfb_deflate *d, uint32_t len, uint32_t dist)
{
	unsigned ls = d->len_sym[len - MIN_MATCH], ds = dist_sym(dist);
	d->sym_len[d->nsyms] = (uint16_t)len;
	d->sym_dist[d->nsyms++] = (uint16_t)dist;
	d->block_bits += d->lit_bits[FIRST_LENGTH_SYM + ls] + length_extra[ls] + DIST_BITS +
			 dist_extra[ds];
}

static bool block_full(const struct sfb_deflate *d)
{
	return d->nsyms == SFB_DEFLATE_BLOCK || d->pos - d->block_start >= SFB_DEFLATE_BLOCK;
}

/* Encode the buffer up to index END. */
static void encode(struct sfb_deflate *d, uint32_t end)
{
	while (d->pos < end) {
		uint32_t i = d->pos;
		if (d->level == SFB_DEFLATE_STORE) {
			uint32_t n = end - i, room = SFB_DEFLATE_BLOCK - (i - d->block_start);
			d->pos += n < room ? n : room;
		} else if (d->fill - i >= MIN_MATCH) {
			uint32_t maxlen = d->fill - i < MAX_MATCH ? d->fill - i : MAX_MATCH, dist = 0;
			uint32_t len = longest_match(d, i, maxlen, &dist);
			if (len) {
				add_match(d, len, dist);
			} else {
				add_literal(d, d->buf[i]);
				len = 1;
			}
			for (uint32_t k = i; k < i + len && k + MIN_MATCH <= d->fill; k++)
				insert(d, k);
			d->pos += len;
		} else {
			add_literal(d, d->buf[i]);
			d->pos++;
		}
		if (block_full(d))
			emit_block(d, false);
	}
}

/* Drop the buffer's older half (its blocks written), keeping a window. */
static void slide(struct sfb_deflate *d)
{
	if (d->pos > d->block_start)
		emit_block(d, false);
	memmove(d->buf, d->buf + SFB_DEFLATE_WINDOW, BUF_SIZE - SFB_DEFLATE_WINDOW);
	d->base += SFB_DEFLATE_WINDOW;
	d->fill -= SFB_DEFLATE_WINDOW;
	d->pos -= SFB_DEFLATE_WINDOW;
	d->block_start -= SFB_DEFLATE_WINDOW;
}

/* ---- the interface ------------------------------------------------------ */

int sfb_deflate_init(struct sfb_deflate *d, enum sfb_deflate_level level,
		     sfb_deflate_sink sink, void *ctx)
{
	memset(d, 0, sizeof *d);
	d->sink = sink;
	d->ctx = ctx;
	d->level = level;
	if (!sink || (level != SFB_DEFLATE_STORE && level != SFB_DEFLATE_FAST))
		return d->error = SFB_DEFLATE_E_ARGUMENT;
	fixed_code_init(d);
	memcpy(d->out, gzip_header, sizeof gzip_header);
	d->outn = sizeof gzip_header;
	return 0;
}

int sfb_deflate_write(struct sfb_deflate *d, const void *p, size_t n)
{
	if (d->error)
		return d->error;
	if (d->finished)
		return d->error = SFB_DEFLATE_E_FINISHED;
	if (!p && n)
		return d->error = SFB_DEFLATE_E_ARGUMENT;
	const uint8_t *in = p;
	d->crc = sfb_crc32(d->crc, in, n);
	d->isize += (uint32_t)n;
	while (n && !d->error) {
		if (d->fill == BUF_SIZE) {
			encode(d, BUF_SIZE - MIN_LOOKAHEAD);
			slide(d);
		}
		size_t k = BUF_SIZE - d->fill < n ? BUF_SIZE - d->fill : n;
		memcpy(d->buf + d->fill, in, k);
		d->fill += (uint32_t)k;
		in += k;
		n -= k;
	}
	return d->error;
}

int sfb_deflate_finish(struct sfb_deflate *d)
{
	if (d->error)
		return d->error;
	if (d->finished)
		return d->error = SFB_DEFLATE_E_FINISHED;
	d->finished = true;
	encode(d, d->fill);
	emit_block(d, true);
	align_bits(d);
	put_le32(d, d->crc);
	put_le32(d, d->isize);
	flush_out(d);
	return d->error;
}
