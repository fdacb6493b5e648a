/* Streaming DEFLATE decoder: see inflate.h.
 *
 * Decoded bytes go into the circular window first and are then copied to
 * the caller's output, so matches always read from one place and output
 * may be taken in chunks of any size (or discarded).  Each call decodes
 * at most as many bytes as the caller has room for, so nothing decoded
 * is held back between calls.
 *
 * Bits are read LSB first through a 64-bit buffer.  A step that needs
 * several fields (a code-length symbol and its extra bits; a length,
 * distance and their extra bits: at most 48 bits) peeks at all of them
 * before consuming any, so running out of input leaves the step to be
 * retried whole when more arrives.
 *
 * Huffman codes are decoded with a first-level table indexed by the next
 * root bits; codes longer than that (rare by construction: long codes are
 * the infrequent symbols) are decoded canonically one bit at a time, at
 * most 15 steps. */
#include "base/inflate.h"

#include <stdatomic.h>

#include <string.h>

#define WMASK (SFB_INFLATE_WINDOW - 1u)
#define MAX_CODE_BITS 15
#define FAST_LEN_SHIFT 9
#define FAST_SYM_MASK 0x1ffu

/* Symbol counts of RFC 1951 section 3.2.5-3.2.7. */
#define NUM_LIT_FIXED 288
#define NUM_DIST_FIXED 32
#define MAX_NLEN 286
#define MAX_NDIST 30
#define NUM_CLEN 19
#define END_OF_BLOCK 256
#define FIRST_LENGTH_SYM 257
#define LAST_LENGTH_SYM 285
#define LAST_DIST_SYM 29

/* Results of the internal decoders beside the public codes. */
#define DECODE_MORE (-100) /* the code needs more bits than there are */

enum mode {
	M_ZLIB_HEADER,
	M_GZ_FIXED,     /* the 10 fixed bytes of a gzip header */
	M_GZ_EXTRA_LEN, /* FEXTRA: XLEN, 2 bytes */
	M_GZ_EXTRA,     /* FEXTRA: XLEN bytes skipped */
	M_GZ_NAME,      /* FNAME: up to a zero byte */
	M_GZ_COMMENT,   /* FCOMMENT: up to a zero byte */
	M_GZ_HCRC,      /* FHCRC: 2 bytes */
	M_BLOCK,        /* 3-bit block header */
	M_STORED_LEN,
	M_STORED,
	M_TABLE_COUNTS, /* HLIT, HDIST, HCLEN */
	M_CLENS,        /* 3-bit code-length code lengths */
	M_LENS,         /* literal/length and distance code lengths */
	M_CODES,        /* compressed data */
	M_TRAILER,      /* adler-32, or gzip CRC-32 */
	M_GZ_ISIZE,
	M_DONE,
};

enum gz_flag {
	GZ_FHCRC = 0x02,
	GZ_FEXTRA = 0x04,
	GZ_FNAME = 0x08,
	GZ_FCOMMENT = 0x10,
	GZ_RESERVED = 0xe0,
};
#define GZ_FIXED_BYTES 10
#define DEFLATE_METHOD 8
#define ZLIB_MAX_CINFO 7
#define ZLIB_FDICT 0x20

static const uint16_t length_base[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
};
static const uint8_t length_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
};
static const uint16_t dist_base[30] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
	193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
	6145, 8193, 12289, 16385, 24577,
};
static const uint8_t dist_extra[30] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
	6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
};
/* The order in which a dynamic block lists the code-length code's lengths. */
static const uint8_t clen_order[NUM_CLEN] = {
	16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
};

/* ---- checksums ---------------------------------------------------------- */

#define ADLER_MOD 65521u
#define ADLER_NMAX 5552 /* most bytes before the sums may overflow 32 bits */

uint32_t sfb_adler32(uint32_t adler, const uint8_t *p, size_t n)
{
	uint32_t a = adler & 0xffff, b = adler >> 16;
	while (n) {
		size_t k = n < ADLER_NMAX ? n : ADLER_NMAX;
		n -= k;
		while (k--) {
			a += *p++;
			b += a;
		}
		a %= ADLER_MOD;
		b %= ADLER_MOD;
	}
	return b << 16 | a;
}

/* The reflected CRC-32 of RFC 1952, polynomial 0xedb88320: the table is
 * computed by the compiler, one byte's eight shift-and-xor steps each. */
#define CRC_POLY 0xedb88320u
#define CRC_STEP(c) (((c) >> 1) ^ (CRC_POLY & (0u - ((c) & 1u))))
#define CRC_BYTE(c) \
	CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(c))))))))
#define CRC_4(n) CRC_BYTE((n) + 0u), CRC_BYTE((n) + 1u), CRC_BYTE((n) + 2u), CRC_BYTE((n) + 3u)
#define CRC_16(n) CRC_4((n) + 0u), CRC_4((n) + 4u), CRC_4((n) + 8u), CRC_4((n) + 12u)
#define CRC_64(n) CRC_16((n) + 0u), CRC_16((n) + 16u), CRC_16((n) + 32u), CRC_16((n) + 48u)
static const uint32_t crc_table[256] = {
	CRC_64(0u), CRC_64(64u), CRC_64(128u), CRC_64(192u),
};

/* Slicing by 8 (eight bytes a step: several times the byte loop's speed
 * on a debug file's CRC), on little-endian hosts, once a constructor
 * (normal context) has built the seven more tables and published them by
 * a release store; before that, and on big-endian hosts, a byte a step
 * with crc_table. */
#define LITTLE_ENDIAN_HOST (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
static uint32_t crc_slice[8][256];
static _Atomic int crc_slice_ready;

__attribute__((constructor)) static void build_crc_slices(void)
{
	memcpy(crc_slice[0], crc_table, sizeof crc_table);
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++)
			crc_slice[t][i] = (crc_slice[t - 1][i] >> 8) ^
					  crc_table[crc_slice[t - 1][i] & 0xff];
	atomic_store_explicit(&crc_slice_ready, 1, memory_order_release);
}

uint32_t sfb_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	if (LITTLE_ENDIAN_HOST && atomic_load_explicit(&crc_slice_ready, memory_order_acquire)) {
		for (; n >= 8; p += 8, n -= 8) {
			uint32_t lo, hi;
			memcpy(&lo, p, 4);
			memcpy(&hi, p + 4, 4);
			lo ^= crc;
			crc = crc_slice[7][lo & 0xff] ^ crc_slice[6][(lo >> 8) & 0xff] ^
			      crc_slice[5][(lo >> 16) & 0xff] ^ crc_slice[4][lo >> 24] ^
			      crc_slice[3][hi & 0xff] ^ crc_slice[2][(hi >> 8) & 0xff] ^
			      crc_slice[1][(hi >> 16) & 0xff] ^ crc_slice[0][hi >> 24];
		}
	}
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- bit input ---------------------------------------------------------- */

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static void take_input(struct sfb_inflate *z, size_t n)
{
	z->next_in += n;
	z->avail_in -= n;
	z->total_in += n;
}

/* Fill the bit buffer to at least 56 bits, or with all the input there is.
 * Bits above nbits are always zero. */
static inline void refill(struct sfb_inflate *z)
{
	if (z->nbits > 56)
		return;
	if (z->avail_in >= 8) {
		unsigned take = (63 - z->nbits) >> 3;
		z->bits |= load_le64(z->next_in) << z->nbits;
		z->nbits += take * 8;
		z->bits &= (~0ull) >> (64 - z->nbits);
		take_input(z, take);
		return;
	}
	while (z->nbits <= 56 && z->avail_in) {
		z->bits |= (uint64_t)*z->next_in << z->nbits;
		z->nbits += 8;
		take_input(z, 1);
	}
}

/* Whether N bits are there (after a refill). */
static bool have_bits(struct sfb_inflate *z, unsigned n)
{
	if (z->nbits < n)
		refill(z);
	return z->nbits >= n;
}

static void drop_bits(struct sfb_inflate *z, unsigned n)
{
	z->bits >>= n;
	z->nbits -= n;
}

static void align_to_byte(struct sfb_inflate *z)
{
	drop_bits(z, z->nbits & 7);
}

/* One byte of a byte-aligned stream, or -1 if none is left yet. */
static int next_byte(struct sfb_inflate *z)
{
	if (!have_bits(z, 8))
		return -1;
	int b = (int)(z->bits & 0xff);
	drop_bits(z, 8);
	return b;
}

/* ---- Huffman codes ------------------------------------------------------ */

/* A code's tables, whichever struct holds them. */
struct code_ref {
	uint16_t *count, *sym, *fast;
	unsigned root;
};

static struct code_ref lit_ref(struct sfb_inflate *z)
{
	return (struct code_ref){ z->lit.count, z->lit.sym, z->lit.fast, SFB_INFLATE_LIT_ROOT };
}

static struct code_ref dist_ref(struct sfb_inflate *z)
{
	return (struct code_ref){ z->dist.count, z->dist.sym, z->dist.fast, SFB_INFLATE_DIST_ROOT };
}

/* Which codes may be incomplete: RFC 1951 allows a distance code of one
 * 1-bit code, or of none (a block of literals only); zlib accepts one
 * 1-bit literal/length code too.  The code-length code must be complete. */
enum code_kind { CODE_CLEN, CODE_LIT, CODE_DIST };

/* Build the tables of the canonical code with the N lengths LENS (each at
 * most 15). */
static int build_code(struct code_ref c, const uint8_t *lens, unsigned n, enum code_kind kind)
{
	uint16_t offs[MAX_CODE_BITS + 2];
	memset(c.count, 0, (MAX_CODE_BITS + 1) * sizeof *c.count);
	for (unsigned i = 0; i < n; i++)
		c.count[lens[i]]++;
	c.count[0] = 0;

	int left = 1;
	unsigned ncodes = 0;
	for (unsigned l = 1; l <= MAX_CODE_BITS; l++) {
		left = 2 * left - c.count[l];
		if (left < 0)
			return SFB_INFLATE_E_OVERSUBSCRIBED;
		ncodes += c.count[l];
	}
	if (left > 0) {
		bool one_bit = ncodes == 1 && c.count[1] == 1;
		bool ok = (kind != CODE_CLEN && one_bit) || (kind == CODE_DIST && ncodes == 0);
		if (!ok)
			return SFB_INFLATE_E_INCOMPLETE;
	}

	offs[1] = 0;
	for (unsigned l = 1; l <= MAX_CODE_BITS; l++)
		offs[l + 1] = (uint16_t)(offs[l] + c.count[l]);
	for (unsigned i = 0; i < n; i++)
		if (lens[i])
			c.sym[offs[lens[i]]++] = (uint16_t)i;

	/* Each code of at most root bits fills every entry whose low bits are
	 * the code, reversed (the stream gives a code's first bit first). */
	unsigned size = 1u << c.root;
	memset(c.fast, 0, size * sizeof *c.fast);
	unsigned code = 0, k = 0;
	for (unsigned l = 1; l <= c.root; l++) {
		for (unsigned j = 0; j < c.count[l]; j++, code++, k++) {
			uint16_t e = (uint16_t)(l << FAST_LEN_SHIFT | c.sym[k]);
			for (unsigned i = sfb_reverse_bits(code, l); i < size; i += 1u << l)
				c.fast[i] = e;
		}
		code <<= 1;
	}
	return 0;
}

/* A code longer than root bits, or no code: the canonical walk, one bit
 * per length. */
static int decode_slow(struct code_ref c, uint64_t bits, unsigned nbits, unsigned *len)
{
	int code = 0, first = 0, index = 0;
	for (unsigned l = 1; l <= MAX_CODE_BITS; l++) {
		if (l > nbits)
			return DECODE_MORE;
		code |= (int)((bits >> (l - 1)) & 1);
		int n = c.count[l];
		if (code - first < n) {
			*len = l;
			return c.sym[index + code - first];
		}
		index += n;
		first = (first + n) << 1;
		code <<= 1;
	}
	return SFB_INFLATE_E_BAD_CODE;
}

/* The symbol at the start of BITS (NBITS valid), its length in *LEN;
 * DECODE_MORE, or SFB_INFLATE_E_BAD_CODE. */
static inline int decode(struct code_ref c, uint64_t bits, unsigned nbits, unsigned *len)
{
	uint16_t e = c.fast[bits & ((1u << c.root) - 1)];
	if (e) {
		unsigned l = e >> FAST_LEN_SHIFT;
		if (l > nbits)
			return DECODE_MORE;
		*len = l;
		return e & FAST_SYM_MASK;
	}
	return decode_slow(c, bits, nbits, len);
}

static int build_fixed(struct sfb_inflate *z)
{
	uint8_t *l = z->lens;
	memset(l, 8, 144);
	memset(l + 144, 9, 256 - 144);
	memset(l + 256, 7, 280 - 256);
	memset(l + 280, 8, NUM_LIT_FIXED - 280);
	int rc = build_code(lit_ref(z), l, NUM_LIT_FIXED, CODE_LIT);
	if (rc)
		return rc;
	memset(l, 5, NUM_DIST_FIXED);
	return build_code(dist_ref(z), l, NUM_DIST_FIXED, CODE_DIST);
}

/* ---- output through the window ------------------------------------------ */

static void put_byte(struct sfb_inflate *z, uint8_t b)
{
	z->window[z->wpos] = b;
	z->wpos = (z->wpos + 1) & WMASK;
	z->pending++;
	z->produced++;
}

/* Copy N bytes from DIST back to DST in the window W. */
static inline void copy_back(uint8_t *w, uint32_t dst, uint32_t dist, uint32_t n)
{
	uint32_t src = (dst - dist) & WMASK;
	if (dst + n <= SFB_INFLATE_WINDOW && src + n <= SFB_INFLATE_WINDOW) {
		/* A source ahead of the destination is the window's oldest
		 * bytes, each read before it is overwritten: memmove's order.
		 * One behind it by less than N repeats the bytes just written. */
		if (src > dst) {
			memmove(w + dst, w + src, n);
		} else if (dist >= n && n > 16) {
			memcpy(w + dst, w + src, n);
		} else {
			while (n--)
				w[dst++] = w[src++];
		}
		return;
	}
	while (n--) {
		w[dst] = w[src];
		dst = (dst + 1) & WMASK;
		src = (src + 1) & WMASK;
	}
}

/* N bytes of the match at match_dist back (N at most match_len). */
static void copy_match(struct sfb_inflate *z, uint32_t n)
{
	copy_back(z->window, z->wpos, z->match_dist, n);
	z->match_len -= n;
	z->pending += n;
	z->produced += n;
	z->wpos = (z->wpos + n) & WMASK;
}

/* Give the pending bytes to the caller (each call decodes no more than
 * avail_out, so they always fit), after the checksum and the limit. */
static int settle(struct sfb_inflate *z)
{
	uint32_t n = z->pending;
	if (!n)
		return 0;
	if (z->produced > z->limit)
		return SFB_INFLATE_E_OUTPUT_LIMIT;
	uint32_t start = (z->wpos - n) & WMASK;
	uint32_t first = SFB_INFLATE_WINDOW - start < n ? SFB_INFLATE_WINDOW - start : n;
	const uint8_t *parts[2] = { z->window + start, z->window };
	uint32_t sizes[2] = { first, n - first };
	for (int i = 0; i < 2; i++) {
		if (!sizes[i])
			continue;
		if (z->format == SFB_INFLATE_ZLIB)
			z->check = sfb_adler32(z->check, parts[i], sizes[i]);
		else if (z->format == SFB_INFLATE_GZIP)
			z->check = sfb_crc32(z->check, parts[i], sizes[i]);
		if (z->next_out) {
			memcpy(z->next_out, parts[i], sizes[i]);
			z->next_out += sizes[i];
		}
	}
	z->avail_out -= n;
	z->total_out += n;
	z->pending = 0;
	return 0;
}

/* ---- the modes ---------------------------------------------------------- */

/* What a mode's step returns besides errors (< 0). */
enum step {
	STEP_NEXT = 1,   /* mode done or changed: go on */
	STEP_INPUT = 2,  /* more input needed */
	STEP_OUTPUT = 3, /* the budget of output is spent */
};

static int zlib_header(struct sfb_inflate *z)
{
	if (!have_bits(z, 16))
		return STEP_INPUT;
	unsigned cmf = z->bits & 0xff, flg = (z->bits >> 8) & 0xff;
	if ((cmf << 8 | flg) % 31)
		return SFB_INFLATE_E_HEADER_CHECK;
	if ((cmf & 0x0f) != DEFLATE_METHOD)
		return SFB_INFLATE_E_METHOD;
	if ((cmf >> 4) > ZLIB_MAX_CINFO)
		return SFB_INFLATE_E_WINDOW_SIZE;
	if (flg & ZLIB_FDICT)
		return SFB_INFLATE_E_DICTIONARY;
	drop_bits(z, 16);
	z->check = 1;
	z->mode = M_BLOCK;
	return STEP_NEXT;
}

/* The mode after the gzip header's fixed part or one of its fields. */
static int gz_next_field(struct sfb_inflate *z)
{
	if (z->gz_flags & GZ_FEXTRA)
		z->mode = M_GZ_EXTRA_LEN;
	else if (z->gz_flags & GZ_FNAME)
		z->mode = M_GZ_NAME;
	else if (z->gz_flags & GZ_FCOMMENT)
		z->mode = M_GZ_COMMENT;
	else if (z->gz_flags & GZ_FHCRC)
		z->mode = M_GZ_HCRC;
	else {
		z->check = 0;
		z->mode = M_BLOCK;
	}
	z->count = 0;
	return STEP_NEXT;
}

static void gz_header_crc(struct sfb_inflate *z, int b)
{
	uint8_t c = (uint8_t)b;
	z->gz_hcrc = sfb_crc32(z->gz_hcrc, &c, 1);
}

static int gz_fixed(struct sfb_inflate *z)
{
	while (z->count < GZ_FIXED_BYTES) {
		int b = next_byte(z);
		if (b < 0)
			return STEP_INPUT;
		gz_header_crc(z, b);
		if ((z->count == 0 && b != 0x1f) || (z->count == 1 && b != 0x8b))
			return SFB_INFLATE_E_GZIP_MAGIC;
		if (z->count == 2 && b != DEFLATE_METHOD)
			return SFB_INFLATE_E_METHOD;
		if (z->count == 3) {
			if (b & GZ_RESERVED)
				return SFB_INFLATE_E_GZIP_FLAGS;
			z->gz_flags = (uint8_t)b;
		}
		z->count++;
	}
	return gz_next_field(z);
}

static int gz_field(struct sfb_inflate *z)
{
	for (;;) {
		int b = next_byte(z);
		if (b < 0)
			return STEP_INPUT;
		gz_header_crc(z, b);
		switch (z->mode) {
		case M_GZ_EXTRA_LEN:
			if (z->count++ == 0) {
				z->gz_xlen_low = (uint8_t)b;
				break;
			}
			z->count = z->gz_xlen_low | (uint32_t)b << 8;
			z->mode = M_GZ_EXTRA;
			if (z->count == 0) {
				z->gz_flags &= (uint8_t)~GZ_FEXTRA;
				return gz_next_field(z);
			}
			break;
		case M_GZ_EXTRA:
			if (--z->count == 0) {
				z->gz_flags &= (uint8_t)~GZ_FEXTRA;
				return gz_next_field(z);
			}
			break;
		default: /* name or comment */
			if (b == 0) {
				z->gz_flags &= (uint8_t)~(z->mode == M_GZ_NAME ? GZ_FNAME : GZ_FCOMMENT);
				return gz_next_field(z);
			}
			break;
		}
	}
}

static int gz_hcrc(struct sfb_inflate *z)
{
	if (!have_bits(z, 16))
		return STEP_INPUT;
	if ((z->bits & 0xffff) != (z->gz_hcrc & 0xffff))
		return SFB_INFLATE_E_GZIP_HEADER_CRC;
	drop_bits(z, 16);
	z->gz_flags = 0;
	return gz_next_field(z);
}

static int block_header(struct sfb_inflate *z)
{
	if (z->last) {
		align_to_byte(z);
		z->mode = z->format == SFB_INFLATE_RAW ? M_DONE : M_TRAILER;
		return STEP_NEXT;
	}
	if (!have_bits(z, 3))
		return STEP_INPUT;
	unsigned h = z->bits & 7;
	drop_bits(z, 3);
	z->last = h & 1;
	switch (h >> 1) {
	case 0:
		align_to_byte(z);
		z->mode = M_STORED_LEN;
		return STEP_NEXT;
	case 1:
		if (!z->fixed) {
			int rc = build_fixed(z);
			if (rc)
				return rc;
			z->fixed = true;
		}
		z->mode = M_CODES;
		return STEP_NEXT;
	case 2:
		z->mode = M_TABLE_COUNTS;
		return STEP_NEXT;
	default:
		return SFB_INFLATE_E_BLOCK_TYPE;
	}
}

static int stored_len(struct sfb_inflate *z)
{
	if (!have_bits(z, 32))
		return STEP_INPUT;
	uint32_t len = z->bits & 0xffff, nlen = (z->bits >> 16) & 0xffff;
	if (len != (~nlen & 0xffff))
		return SFB_INFLATE_E_STORED_LENGTH;
	drop_bits(z, 32);
	z->count = len;
	z->mode = M_STORED;
	return STEP_NEXT;
}

/* Stored bytes: those already in the bit buffer, then straight from the
 * input, in runs that stop at the window's end. */
static int stored(struct sfb_inflate *z, uint32_t budget)
{
	while (z->count) {
		if (z->pending >= budget)
			return STEP_OUTPUT;
		if (z->nbits >= 8) {
			put_byte(z, (uint8_t)z->bits);
			drop_bits(z, 8);
			z->count--;
			continue;
		}
		if (!z->avail_in)
			return STEP_INPUT;
		size_t n = z->count;
		if (n > budget - z->pending)
			n = budget - z->pending;
		if (n > z->avail_in)
			n = z->avail_in;
		if (n > SFB_INFLATE_WINDOW - z->wpos)
			n = SFB_INFLATE_WINDOW - z->wpos;
		memcpy(z->window + z->wpos, z->next_in, n);
		take_input(z, n);
		z->wpos = (z->wpos + (uint32_t)n) & WMASK;
		z->pending += (uint32_t)n;
		z->produced += n;
		z->count -= (uint32_t)n;
	}
	z->mode = M_BLOCK;
	return STEP_NEXT;
}

static int table_counts(struct sfb_inflate *z)
{
	if (!have_bits(z, 14))
		return STEP_INPUT;
	unsigned h = z->bits & 0x3fff;
	drop_bits(z, 14);
	z->nlen = (uint16_t)(257 + (h & 31));
	z->ndist = (uint16_t)(1 + ((h >> 5) & 31));
	z->ncode = (uint16_t)(4 + (h >> 10));
	if (z->nlen > MAX_NLEN || z->ndist > MAX_NDIST)
		return SFB_INFLATE_E_TOO_MANY_CODES;
	memset(z->lens, 0, NUM_CLEN);
	z->count = 0;
	z->mode = M_CLENS;
	return STEP_NEXT;
}

/* The code-length code's lengths, built into the distance tables, which
 * are free until the block's own codes are built. */
static int clens(struct sfb_inflate *z)
{
	while (z->count < z->ncode) {
		if (!have_bits(z, 3))
			return STEP_INPUT;
		z->lens[clen_order[z->count++]] = z->bits & 7;
		drop_bits(z, 3);
	}
	z->fixed = false;
	int rc = build_code(dist_ref(z), z->lens, NUM_CLEN, CODE_CLEN);
	if (rc)
		return rc;
	z->count = 0;
	z->mode = M_LENS;
	return STEP_NEXT;
}

/* Code lengths 16-18: repeat the previous length 3-6 times, or zero
 * 3-10 or 11-138 times. */
static const uint8_t repeat_extra[3] = { 2, 3, 7 };
static const uint8_t repeat_base[3] = { 3, 3, 11 };

static int build_block_codes(struct sfb_inflate *z)
{
	if (z->lens[END_OF_BLOCK] == 0)
		return SFB_INFLATE_E_NO_END_CODE;
	int rc = build_code(lit_ref(z), z->lens, z->nlen, CODE_LIT);
	if (rc)
		return rc;
	rc = build_code(dist_ref(z), z->lens + z->nlen, z->ndist, CODE_DIST);
	if (rc)
		return rc;
	z->mode = M_CODES;
	return STEP_NEXT;
}

static int lens(struct sfb_inflate *z)
{
	struct code_ref c = dist_ref(z);
	unsigned total = z->nlen + z->ndist;
	while (z->count < total) {
		refill(z);
		unsigned len;
		int sym = decode(c, z->bits, z->nbits, &len);
		if (sym == DECODE_MORE)
			return STEP_INPUT;
		if (sym < 0)
			return sym;
		if (sym < 16) {
			drop_bits(z, len);
			z->lens[z->count++] = (uint8_t)sym;
			continue;
		}
		unsigned r = (unsigned)sym - 16, need = len + repeat_extra[r];
		if (z->nbits < need)
			return STEP_INPUT;
		unsigned n = repeat_base[r] + ((z->bits >> len) & ((1u << repeat_extra[r]) - 1));
		uint8_t v = 0;
		if (r == 0) {
			if (z->count == 0)
				return SFB_INFLATE_E_REPEAT_NO_FIRST;
			v = z->lens[z->count - 1];
		}
		if (z->count + n > total)
			return SFB_INFLATE_E_REPEAT_OVERRUN;
		drop_bits(z, need);
		memset(z->lens + z->count, v, n);
		z->count += n;
	}
	return build_block_codes(z);
}

/* One length/distance pair, peeked whole from the bit buffer: its total
 * bits, or DECODE_MORE, or an error. */
static int decode_match(struct sfb_inflate *z, unsigned sym, unsigned used)
{
	if (sym > LAST_LENGTH_SYM)
		return SFB_INFLATE_E_BAD_LITLEN;
	unsigned li = sym - FIRST_LENGTH_SYM, le = length_extra[li];
	if (z->nbits < used + le)
		return DECODE_MORE;
	uint32_t len = length_base[li] + (uint32_t)((z->bits >> used) & ((1u << le) - 1));
	used += le;

	unsigned dlen;
	int dsym = decode(dist_ref(z), z->bits >> used, z->nbits - used, &dlen);
	if (dsym < 0)
		return dsym;
	if (dsym > LAST_DIST_SYM)
		return SFB_INFLATE_E_BAD_DISTANCE;
	used += dlen;
	unsigned de = dist_extra[dsym];
	if (z->nbits < used + de)
		return DECODE_MORE;
	uint32_t dist = dist_base[dsym] + (uint32_t)((z->bits >> used) & ((1u << de) - 1));
	used += de;
	if (dist > z->produced)
		return SFB_INFLATE_E_DISTANCE_TOO_FAR;
	z->match_len = len;
	z->match_dist = dist;
	return (int)used;
}

/* The common case with the state in locals (stores to the window would
 * otherwise make the compiler reload it for every symbol): while there
 * are 8 bytes of input for a whole refill and room for a whole match,
 * literals and matches whose codes are in the first-level tables.  Any
 * other symbol, and every error, is left to codes(). */
#define FAST_MIN_IN 8
static void codes_fast(struct sfb_inflate *z, uint32_t budget)
{
	uint64_t bits = z->bits;
	unsigned nbits = z->nbits;
	const uint8_t *in = z->next_in, *in_start = in;
	size_t avail = z->avail_in;
	uint8_t *w = z->window;
	uint32_t wpos = z->wpos, made = z->pending;
	uint64_t produced = z->produced;
	const uint16_t *lfast = z->lit.fast, *dfast = z->dist.fast;
	const uint64_t lmask = (1u << SFB_INFLATE_LIT_ROOT) - 1, dmask = (1u << SFB_INFLATE_DIST_ROOT) - 1;

	while (avail >= FAST_MIN_IN && budget - made >= length_base[28]) {
		if (nbits <= 56) {
			unsigned take = (63 - nbits) >> 3;
			bits |= load_le64(in) << nbits;
			nbits += take * 8;
			bits &= (~0ull) >> (64 - nbits);
			in += take;
			avail -= take;
		}
		uint16_t e = lfast[bits & lmask];
		unsigned l = e >> FAST_LEN_SHIFT, sym = e & FAST_SYM_MASK;
		if (sym < END_OF_BLOCK && e) {
			bits >>= l;
			nbits -= l;
			w[wpos] = (uint8_t)sym;
			wpos = (wpos + 1) & WMASK;
			made++;
			produced++;
			continue;
		}
		if (!e || sym == END_OF_BLOCK || sym > LAST_LENGTH_SYM)
			break;
		/* At least 57 bits: a length and a distance take at most 48. */
		unsigned li = sym - FIRST_LENGTH_SYM, le = length_extra[li], used = l;
		uint32_t len = length_base[li] + (uint32_t)((bits >> used) & ((1u << le) - 1));
		used += le;
		uint16_t de = dfast[(bits >> used) & dmask];
		unsigned ds = de & FAST_SYM_MASK;
		if (!de || ds > LAST_DIST_SYM)
			break;
		used += de >> FAST_LEN_SHIFT;
		unsigned dx = dist_extra[ds];
		uint32_t dist = dist_base[ds] + (uint32_t)((bits >> used) & ((1u << dx) - 1));
		used += dx;
		if (dist > produced)
			break;
		bits >>= used;
		nbits -= used;
		copy_back(w, wpos, dist, len);
		wpos = (wpos + len) & WMASK;
		made += len;
		produced += len;
	}
	z->bits = bits;
	z->nbits = nbits;
	z->total_in += (uint64_t)(in - in_start);
	z->next_in = in;
	z->avail_in = avail;
	z->wpos = wpos;
	z->pending = made;
	z->produced = produced;
}

static int codes(struct sfb_inflate *z, uint32_t budget)
{
	struct code_ref lit = lit_ref(z);
	for (;;) {
		if (z->match_len) {
			uint32_t room = budget - z->pending;
			uint32_t n = z->match_len < room ? z->match_len : room;
			copy_match(z, n);
			if (z->match_len)
				return STEP_OUTPUT;
		}
		codes_fast(z, budget);
		if (z->pending >= budget)
			return STEP_OUTPUT;
		refill(z);
		unsigned len;
		int sym = decode(lit, z->bits, z->nbits, &len);
		if (sym < 0)
			return sym == DECODE_MORE ? STEP_INPUT : sym;
		if (sym < END_OF_BLOCK) {
			drop_bits(z, len);
			put_byte(z, (uint8_t)sym);
			continue;
		}
		if (sym == END_OF_BLOCK) {
			drop_bits(z, len);
			z->mode = M_BLOCK;
			return STEP_NEXT;
		}
		int used = decode_match(z, (unsigned)sym, len);
		if (used < 0)
			return used == DECODE_MORE ? STEP_INPUT : used;
		drop_bits(z, (unsigned)used);
	}
}

static uint32_t read_be32(uint64_t bits)
{
	return (uint32_t)((bits & 0xff) << 24 | ((bits >> 8) & 0xff) << 16 |
			  ((bits >> 16) & 0xff) << 8 | ((bits >> 24) & 0xff));
}

static int trailer(struct sfb_inflate *z)
{
	int rc = settle(z); /* the checksum covers every byte decoded */
	if (rc)
		return rc;
	if (!have_bits(z, 32))
		return STEP_INPUT;
	uint32_t v = z->format == SFB_INFLATE_ZLIB ? read_be32(z->bits) : (uint32_t)z->bits;
	if (v != z->check)
		return SFB_INFLATE_E_CHECKSUM;
	drop_bits(z, 32);
	z->mode = z->format == SFB_INFLATE_GZIP ? M_GZ_ISIZE : M_DONE;
	return STEP_NEXT;
}

static int gz_isize(struct sfb_inflate *z)
{
	if (!have_bits(z, 32))
		return STEP_INPUT;
	if ((uint32_t)z->bits != (uint32_t)z->produced)
		return SFB_INFLATE_E_GZIP_SIZE;
	drop_bits(z, 32);
	z->mode = M_DONE;
	return STEP_NEXT;
}

/* Run the modes until the stream ends, input runs out, BUDGET bytes are
 * decoded, or an error. */
static int run(struct sfb_inflate *z, uint32_t budget)
{
	for (;;) {
		int rc;
		switch (z->mode) {
		case M_ZLIB_HEADER: rc = zlib_header(z); break;
		case M_GZ_FIXED: rc = gz_fixed(z); break;
		case M_GZ_EXTRA_LEN:
		case M_GZ_EXTRA:
		case M_GZ_NAME:
		case M_GZ_COMMENT: rc = gz_field(z); break;
		case M_GZ_HCRC: rc = gz_hcrc(z); break;
		case M_BLOCK: rc = block_header(z); break;
		case M_STORED_LEN: rc = stored_len(z); break;
		case M_STORED: rc = stored(z, budget); break;
		case M_TABLE_COUNTS: rc = table_counts(z); break;
		case M_CLENS: rc = clens(z); break;
		case M_LENS: rc = lens(z); break;
		case M_CODES: rc = codes(z, budget); break;
		case M_TRAILER: rc = trailer(z); break;
		case M_GZ_ISIZE: rc = gz_isize(z); break;
		default: return STEP_NEXT; /* M_DONE */
		}
		if (rc != STEP_NEXT)
			return rc;
	}
}

/* ---- the interface ------------------------------------------------------ */

void sfb_inflate_init(struct sfb_inflate *z, enum sfb_inflate_format format, uint8_t *window)
{
	memset(z, 0, offsetof(struct sfb_inflate, lens));
	z->window = window;
	z->format = format;
	z->limit = UINT64_MAX;
	switch (format) {
	case SFB_INFLATE_ZLIB: z->mode = M_ZLIB_HEADER; break;
	case SFB_INFLATE_GZIP: z->mode = M_GZ_FIXED; break;
	case SFB_INFLATE_RAW: z->mode = M_BLOCK; break;
	default: z->error = SFB_INFLATE_E_ARGUMENT; break;
	}
}

void sfb_inflate_set_limit(struct sfb_inflate *z, uint64_t limit)
{
	z->limit = limit;
}

/* At the end: bytes taken into the bit buffer past the stream are given
 * back, to the caller's pointer when they came from this call's input. */
static int finish(struct sfb_inflate *z, uint64_t taken_this_call)
{
	uint32_t extra = z->nbits / 8;
	z->total_in -= extra;
	if (extra <= taken_this_call) {
		z->next_in -= extra;
		z->avail_in += extra;
	}
	z->bits = 0;
	z->nbits = 0;
	return SFB_INFLATE_END;
}

static int fail(struct sfb_inflate *z, int error)
{
	z->error = error;
	z->pending = 0;
	return error;
}

int sfb_inflate(struct sfb_inflate *z, bool no_more_input)
{
	if (z->error)
		return z->error;
	if (!z->window || (!z->next_in && z->avail_in))
		return fail(z, SFB_INFLATE_E_ARGUMENT);
	if (z->mode == M_DONE)
		return SFB_INFLATE_END;
	uint64_t in_before = z->total_in;
	for (;;) {
		/* Decode no more than fits the output, the window, and one byte
		 * past the limit (to see that it is passed). */
		uint32_t budget = z->avail_out < SFB_INFLATE_WINDOW ? (uint32_t)z->avail_out
								    : SFB_INFLATE_WINDOW;
		uint64_t room = z->limit - z->produced;
		if (room < budget)
			budget = (uint32_t)room + 1;
		int rc = run(z, budget);
		if (rc < 0)
			return fail(z, rc);
		int err = settle(z);
		if (err)
			return fail(z, err);
		if (z->mode == M_DONE)
			return finish(z, z->total_in - in_before);
		if (rc == STEP_INPUT)
			return no_more_input ? fail(z, SFB_INFLATE_E_TRUNCATED) : SFB_INFLATE_NEED_INPUT;
		if (rc == STEP_OUTPUT && z->avail_out == 0)
			return SFB_INFLATE_NEED_OUTPUT;
	}
}

int sfb_inflate_buffer(enum sfb_inflate_format format, const uint8_t *in, size_t in_len,
		       uint8_t *out, size_t cap, size_t *out_len, uint8_t *window,
		       struct sfb_inflate *z)
{
	sfb_inflate_init(z, format, window);
	z->next_in = in;
	z->avail_in = in_len;
	z->next_out = out;
	z->avail_out = cap;
	int rc = sfb_inflate(z, true);
	*out_len = (size_t)z->total_out;
	return rc;
}

static const char *const result_names[] = {
	[SFB_INFLATE_END] = "end",
	[SFB_INFLATE_NEED_INPUT] = "need-input",
	[SFB_INFLATE_NEED_OUTPUT] = "need-output",
};
static const char *const error_names[] = {
	[-SFB_INFLATE_E_TRUNCATED] = "truncated",
	[-SFB_INFLATE_E_HEADER_CHECK] = "header-check",
	[-SFB_INFLATE_E_METHOD] = "method",
	[-SFB_INFLATE_E_WINDOW_SIZE] = "window-size",
	[-SFB_INFLATE_E_DICTIONARY] = "dictionary",
	[-SFB_INFLATE_E_GZIP_MAGIC] = "gzip-magic",
	[-SFB_INFLATE_E_GZIP_FLAGS] = "gzip-flags",
	[-SFB_INFLATE_E_GZIP_HEADER_CRC] = "gzip-header-crc",
	[-SFB_INFLATE_E_BLOCK_TYPE] = "block-type",
	[-SFB_INFLATE_E_STORED_LENGTH] = "stored-length",
	[-SFB_INFLATE_E_TOO_MANY_CODES] = "too-many-codes",
	[-SFB_INFLATE_E_OVERSUBSCRIBED] = "oversubscribed",
	[-SFB_INFLATE_E_INCOMPLETE] = "incomplete-code",
	[-SFB_INFLATE_E_REPEAT_NO_FIRST] = "repeat-no-first",
	[-SFB_INFLATE_E_REPEAT_OVERRUN] = "repeat-overrun",
	[-SFB_INFLATE_E_NO_END_CODE] = "no-end-code",
	[-SFB_INFLATE_E_BAD_CODE] = "bad-code",
	[-SFB_INFLATE_E_BAD_LITLEN] = "bad-litlen",
	[-SFB_INFLATE_E_BAD_DISTANCE] = "bad-distance",
	[-SFB_INFLATE_E_DISTANCE_TOO_FAR] = "distance-too-far",
	[-SFB_INFLATE_E_CHECKSUM] = "checksum",
	[-SFB_INFLATE_E_GZIP_SIZE] = "gzip-size",
	[-SFB_INFLATE_E_OUTPUT_LIMIT] = "output-limit",
	[-SFB_INFLATE_E_ARGUMENT] = "argument",
};

const char *sfb_inflate_result_name(int result)
{
	const char *name = NULL;
	if (result >= 0 && result < (int)(sizeof result_names / sizeof *result_names))
		name = result_names[result];
	else if (result < 0 && result >= SFB_INFLATE_E_LAST)
		name = error_names[-result];
	return name ? name : "unknown";
}

/* ---- ELF compressed-section header --------------------------------------- */

#define CHDR64_SIZE 24 /* ch_type, ch_reserved, ch_size, ch_addralign */
#define CHDR32_SIZE 12 /* ch_type, ch_size, ch_addralign */

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

int sfb_chdr_read(const uint8_t *p, size_t len, bool is64, struct sfb_chdr *out)
{
	size_t need = is64 ? CHDR64_SIZE : CHDR32_SIZE;
	if (!p || len < need)
		return SFB_INFLATE_E_TRUNCATED;
	out->type = load32(p);
	out->size = is64 ? load64(p + 8) : load32(p + 4);
	out->addralign = is64 ? load64(p + 16) : load32(p + 8);
	out->header_size = need;
	return 0;
}
