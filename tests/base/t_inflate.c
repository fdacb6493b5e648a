/* The DEFLATE decoder and encoder (src/base/inflate.c, deflate.c).
 *
 * Without arguments: streams whose bytes zlib wrote (embedded), one
 * hand-built stream per error, the ELF Chdr reader, the checksums against
 * their published check values, round trips of generated data through
 * sfb_deflate and sfb_inflate in chunks of every kind, every single-byte
 * change and every truncation of small streams (an error or, where a
 * checksum guards the data, the right output; never a crash), output
 * skipped through NULL, and the output limit.
 *
 * With a directory (tests/base/t_inflate.sh makes it): its file "cases"
 * lists streams written by zlib, gzip and objcopy with their expected
 * output, one per line, "FORMAT NAME COMPRESSED EXPECTED" (FORMAT raw,
 * zlib, gzip, or elf: a compressed ELF section, Chdr first); each is
 * decoded whole, in chunks, skipping, and when small in chunks of every
 * size and after every change of one byte.  "data NAME FILE" lines are
 * compressed by sfb_deflate into NAME.l0.gz and NAME.l1.gz beside it, for
 * the script to check with gzip and python's zlib.  "speed NAME" times
 * that elf case's decoding through 4 KiB buffers. */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#include "base/deflate.h"
#include "base/inflate.h"
#include "check.h"

static uint8_t window[SFB_INFLATE_WINDOW];
static struct sfb_inflate z;

/* ---- decoding in chunks --------------------------------------------------- */

struct run {
	size_t in_chunk, out_chunk; /* 0: all at once */
	size_t skip;                /* first bytes of output discarded (next_out NULL) */
	uint64_t limit;
};

/* Decode IN into OUT (CAP bytes); the result, *N the output length
 * (skipped bytes counted, left zero in OUT), *USED the stream's size. */
static int decode(int format, const uint8_t *in, size_t len, const struct run *r, uint8_t *out,
		  size_t cap, size_t *n, size_t *used)
{
	sfb_inflate_init(&z, format, window);
	if (r->limit)
		sfb_inflate_set_limit(&z, r->limit);
	size_t pos = 0, got = 0;
	int rc;
	for (long calls = 0;; calls++) {
		if (calls > 4 * (long)(len + cap) + 16) {
			rc = 99; /* no progress: reported by the caller */
			break;
		}
		if (z.avail_in == 0 && pos < len) {
			size_t k = r->in_chunk && r->in_chunk < len - pos ? r->in_chunk : len - pos;
			z.next_in = in + pos;
			z.avail_in = k;
			pos += k;
		}
		size_t room = r->out_chunk && r->out_chunk < cap - got ? r->out_chunk : cap - got;
		bool skipping = got < r->skip;
		if (skipping && room > r->skip - got)
			room = r->skip - got;
		z.next_out = skipping ? NULL : out + got;
		z.avail_out = room;
		rc = sfb_inflate(&z, pos == len);
		size_t made = room - z.avail_out;
		if (skipping)
			memset(out + got, 0, made);
		got += made;
		if (rc <= 0 || (rc == SFB_INFLATE_NEED_OUTPUT && got == cap))
			break;
	}
	*n = got;
	*used = (size_t)z.total_in;
	return rc;
}

static bool same(const uint8_t *a, const uint8_t *b, size_t n, size_t from)
{
	return memcmp(a + from, b + from, n - from) == 0;
}

/* ---- embedded streams: bytes written by zlib 1.2.13 ------------------------ */

static const uint8_t zlib_hello[] = { 0x78, 0xda, 0xcb, 0x48, 0xcd, 0xc9, 0xc9,
				      0x07, 0x00, 0x06, 0x2c, 0x02, 0x15 };
static const uint8_t zlib_hello4[] = { 0x78, 0xda, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8,
				       0x40, 0x27, 0xb9, 0x00, 0x70, 0xbe, 0x08, 0xbb };
static const uint8_t gzip_hello[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
				      0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x86,
				      0xa6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00 };
static const uint8_t raw_hello[] = { 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00 };
static const char hello4[] = "hello hello hello hello\n";

static void check_embedded(void)
{
	uint8_t out[64];
	size_t n, used;
	struct run all = { 0 };
	int rc = decode(SFB_INFLATE_ZLIB, zlib_hello, sizeof zlib_hello, &all, out, sizeof out, &n, &used);
	CHECK(rc == SFB_INFLATE_END && n == 5 && !memcmp(out, "hello", 5) && used == sizeof zlib_hello,
	      "zlib stream of 'hello' decodes (%s, %zu bytes)", sfb_inflate_result_name(rc), n);
	rc = decode(SFB_INFLATE_ZLIB, zlib_hello4, sizeof zlib_hello4, &all, out, sizeof out, &n, &used);
	CHECK(rc == SFB_INFLATE_END && n == 24 && !memcmp(out, hello4, 24),
	      "zlib stream with matches decodes (%s)", sfb_inflate_result_name(rc));
	rc = decode(SFB_INFLATE_GZIP, gzip_hello, sizeof gzip_hello, &all, out, sizeof out, &n, &used);
	CHECK(rc == SFB_INFLATE_END && n == 5 && !memcmp(out, "hello", 5) && used == sizeof gzip_hello,
	      "gzip stream decodes, CRC-32 and size checked (%s)", sfb_inflate_result_name(rc));

	/* A raw stream followed by other bytes: it ends where DEFLATE says. */
	uint8_t trail[sizeof raw_hello + 5];
	memcpy(trail, raw_hello, sizeof raw_hello);
	memcpy(trail + sizeof raw_hello, "MORE!", 5);
	sfb_inflate_init(&z, SFB_INFLATE_RAW, window);
	z.next_in = trail;
	z.avail_in = sizeof trail;
	z.next_out = out;
	z.avail_out = sizeof out;
	rc = sfb_inflate(&z, true);
	CHECK(rc == SFB_INFLATE_END && z.total_in == sizeof raw_hello && z.avail_in == 5 &&
		      z.next_in == trail + sizeof raw_hello,
	      "raw stream with bytes after it: %llu bytes taken, next_in at the rest",
	      (unsigned long long)z.total_in);
	CHECK(sfb_inflate(&z, true) == SFB_INFLATE_END, "a call after the end is END again");
}

/* ---- hand-built malformed streams ---------------------------------------- */

struct bw {
	uint8_t b[64];
	size_t n;
	unsigned bit;
};

static void put(struct bw *w, uint32_t v, unsigned nbits)
{
	for (unsigned i = 0; i < nbits; i++) {
		if (w->bit == 0)
			w->b[w->n++] = 0;
		w->b[w->n - 1] |= (uint8_t)(((v >> i) & 1) << w->bit);
		w->bit = (w->bit + 1) & 7;
	}
}

/* A Huffman code: its first bit is the code's most significant. */
static void put_code(struct bw *w, uint32_t code, unsigned len)
{
	while (len--)
		put(w, (code >> len) & 1, 1);
}

#define FINAL 1
#define FIXED 1
#define DYNAMIC 2

static void dyn_header(struct bw *w, unsigned hlit, unsigned hdist, unsigned hclen)
{
	put(w, FINAL, 1);
	put(w, DYNAMIC, 2);
	put(w, hlit, 5);
	put(w, hdist, 5);
	put(w, hclen, 4);
}

/* Code-length code of symbols 16, 17, 18, 0 (HCLEN 0), 2 bits each:
 * canonical codes 0 -> 00, 16 -> 01, 17 -> 10, 18 -> 11. */
static void clen_2bit(struct bw *w)
{
	for (int i = 0; i < 4; i++)
		put(w, 2, 3);
}

static int decode_bw(int format, const struct bw *w, size_t *n)
{
	static uint8_t out[1024];
	size_t used;
	struct run all = { 0 };
	return decode(format, w->b, w->n, &all, out, sizeof out, n, &used);
}

static void expect(const char *what, const struct bw *w, int want)
{
	size_t n;
	int rc = decode_bw(SFB_INFLATE_RAW, w, &n);
	CHECK(rc == want, "%s: %s (got %s)", what, sfb_inflate_result_name(want),
	      sfb_inflate_result_name(rc));
}

static void check_bad_blocks(void)
{
	struct bw w = { 0 };
	put(&w, FINAL, 1);
	put(&w, 3, 2);
	expect("block type 3", &w, SFB_INFLATE_E_BLOCK_TYPE);

	w = (struct bw){ 0 };
	put(&w, FINAL, 1);
	put(&w, 0, 2);
	put(&w, 0, 5);
	put(&w, 1, 16);
	put(&w, 0, 16);
	expect("stored LEN 1, NLEN 0", &w, SFB_INFLATE_E_STORED_LENGTH);

	w = (struct bw){ 0 };
	dyn_header(&w, 30, 0, 0);
	expect("HLIT 287", &w, SFB_INFLATE_E_TOO_MANY_CODES);
	w = (struct bw){ 0 };
	dyn_header(&w, 0, 30, 0);
	expect("HDIST 31", &w, SFB_INFLATE_E_TOO_MANY_CODES);

	w = (struct bw){ 0 };
	dyn_header(&w, 0, 0, 15);
	for (int i = 0; i < 19; i++)
		put(&w, 1, 3);
	expect("19 one-bit code-length codes", &w, SFB_INFLATE_E_OVERSUBSCRIBED);

	w = (struct bw){ 0 };
	dyn_header(&w, 0, 0, 0);
	put(&w, 1, 3);
	put(&w, 0, 9);
	expect("code-length code of one 1-bit code", &w, SFB_INFLATE_E_INCOMPLETE);

	w = (struct bw){ 0 };
	dyn_header(&w, 0, 0, 0);
	clen_2bit(&w);
	put_code(&w, 1, 2); /* 16 first */
	put(&w, 0, 2);
	expect("repeat with no length before it", &w, SFB_INFLATE_E_REPEAT_NO_FIRST);

	w = (struct bw){ 0 };
	dyn_header(&w, 0, 0, 0);
	clen_2bit(&w);
	put_code(&w, 3, 2);
	put(&w, 127, 7); /* 138 zeros of 258 */
	put_code(&w, 3, 2);
	put(&w, 127, 7); /* 138 more */
	expect("repeat past HLIT + HDIST", &w, SFB_INFLATE_E_REPEAT_OVERRUN);

	w = (struct bw){ 0 };
	dyn_header(&w, 0, 0, 0);
	clen_2bit(&w);
	put_code(&w, 3, 2);
	put(&w, 127, 7);
	put_code(&w, 3, 2);
	put(&w, 109, 7); /* 120: all 258 lengths zero */
	expect("no end-of-block code", &w, SFB_INFLATE_E_NO_END_CODE);

	/* Literal/length code: only end-of-block, one bit "0"; no distance
	 * code.  Code lengths: 18 -> 0 (1 bit), 0 -> 10, 1 -> 11. */
	for (int bad = 0; bad < 2; bad++) {
		w = (struct bw){ 0 };
		dyn_header(&w, 0, 0, 14); /* 18 lengths, up to symbol 1 */
		static const uint8_t order_len[18] = { 0, 0, 1, 2, 0, 0, 0, 0, 0,
						       0, 0, 0, 0, 0, 0, 0, 0, 2 };
		for (int i = 0; i < 18; i++)
			put(&w, order_len[i], 3);
		put_code(&w, 0, 1);
		put(&w, 127, 7); /* 138 zeros */
		put_code(&w, 0, 1);
		put(&w, 107, 7); /* 118: symbols 0-255 */
		put_code(&w, 3, 2); /* 256: length 1 */
		put_code(&w, 2, 2); /* distance 0: unused */
		if (bad) {
			put(&w, 0xffff, 16);
			expect("bits that are no code", &w, SFB_INFLATE_E_BAD_CODE);
		} else {
			put(&w, 0, 1);
			expect("one 1-bit literal/length code (end of block)", &w, SFB_INFLATE_END);
		}
	}

	w = (struct bw){ 0 };
	put(&w, FINAL, 1);
	put(&w, FIXED, 2);
	put_code(&w, 0xc6, 8); /* 286 */
	expect("fixed code's literal/length 286", &w, SFB_INFLATE_E_BAD_LITLEN);

	w = (struct bw){ 0 };
	put(&w, FINAL, 1);
	put(&w, FIXED, 2);
	put_code(&w, 0x30 + 'a', 8);
	put_code(&w, 1, 7);  /* 257: length 3 */
	put_code(&w, 30, 5); /* distance 30 */
	expect("fixed code's distance 30", &w, SFB_INFLATE_E_BAD_DISTANCE);

	w = (struct bw){ 0 };
	put(&w, FINAL, 1);
	put(&w, FIXED, 2);
	put_code(&w, 0x30 + 'a', 8);
	put_code(&w, 1, 7);
	put_code(&w, 1, 5); /* distance 2, one byte written */
	put_code(&w, 0, 7);
	expect("distance before the output's start", &w, SFB_INFLATE_E_DISTANCE_TOO_FAR);

	w = (struct bw){ 0 };
	put(&w, FINAL, 1);
	put(&w, FIXED, 2);
	put_code(&w, 0x30 + 'a', 8);
	put_code(&w, 1, 7);
	put_code(&w, 0, 5); /* distance 1: "aaaa" */
	put_code(&w, 0, 7);
	size_t n;
	CHECK(decode_bw(SFB_INFLATE_RAW, &w, &n) == SFB_INFLATE_END && n == 4,
	      "a run: distance 1, length 3 (%zu bytes)", n);
	struct bw cut = w;
	cut.n--;
	expect("the same without its last byte", &cut, SFB_INFLATE_E_TRUNCATED);
}

static void expect_bytes(const char *what, int format, const uint8_t *p, size_t len, int want)
{
	uint8_t out[64];
	size_t n, used;
	struct run all = { 0 };
	int rc = decode(format, p, len, &all, out, sizeof out, &n, &used);
	CHECK(rc == want, "%s: %s (got %s)", what, sfb_inflate_result_name(want),
	      sfb_inflate_result_name(rc));
}

static void check_bad_wrappers(void)
{
	uint8_t s[64];
	memcpy(s, zlib_hello, sizeof zlib_hello);
	s[1] ^= 1;
	expect_bytes("zlib FCHECK off by one", SFB_INFLATE_ZLIB, s, sizeof zlib_hello,
		     SFB_INFLATE_E_HEADER_CHECK);
	s[0] = 0x77, s[1] = (31 - 0x7700 % 31) % 31; /* method 7, FCHECK right */
	expect_bytes("zlib method 7", SFB_INFLATE_ZLIB, s, sizeof zlib_hello, SFB_INFLATE_E_METHOD);
	s[0] = 0x88, s[1] = (31 - 0x8800 % 31) % 31;
	expect_bytes("zlib CINFO 8", SFB_INFLATE_ZLIB, s, sizeof zlib_hello, SFB_INFLATE_E_WINDOW_SIZE);
	s[0] = 0x78, s[1] = 0x20 + (31 - 0x7820 % 31) % 31;
	expect_bytes("zlib FDICT", SFB_INFLATE_ZLIB, s, sizeof zlib_hello, SFB_INFLATE_E_DICTIONARY);
	memcpy(s, zlib_hello, sizeof zlib_hello);
	s[sizeof zlib_hello - 1] ^= 0x40;
	expect_bytes("zlib adler-32 changed", SFB_INFLATE_ZLIB, s, sizeof zlib_hello,
		     SFB_INFLATE_E_CHECKSUM);

	memcpy(s, gzip_hello, sizeof gzip_hello);
	s[1] = 0x8c;
	expect_bytes("gzip magic", SFB_INFLATE_GZIP, s, sizeof gzip_hello, SFB_INFLATE_E_GZIP_MAGIC);
	memcpy(s, gzip_hello, sizeof gzip_hello);
	s[3] = 0x20;
	expect_bytes("gzip reserved flag", SFB_INFLATE_GZIP, s, sizeof gzip_hello,
		     SFB_INFLATE_E_GZIP_FLAGS);
	memcpy(s, gzip_hello, sizeof gzip_hello);
	s[sizeof gzip_hello - 8] ^= 1;
	expect_bytes("gzip CRC-32 changed", SFB_INFLATE_GZIP, s, sizeof gzip_hello,
		     SFB_INFLATE_E_CHECKSUM);
	memcpy(s, gzip_hello, sizeof gzip_hello);
	s[sizeof gzip_hello - 4] = 6;
	expect_bytes("gzip ISIZE changed", SFB_INFLATE_GZIP, s, sizeof gzip_hello,
		     SFB_INFLATE_E_GZIP_SIZE);

	/* Every optional header field, and a header CRC right then wrong. */
	static const uint8_t fields[] = { 0x1f, 0x8b, 8, 0x1e, 0, 0, 0, 0, 0, 3, 2, 0, 'x', 'y',
					  'n', 0, 'c', 0 };
	for (int bad = 0; bad < 2; bad++) {
		size_t k = 0;
		memcpy(s, fields, sizeof fields);
		k = sizeof fields;
		uint32_t hcrc = sfb_crc32(0, s, k) ^ (uint32_t)bad;
		s[k++] = (uint8_t)hcrc;
		s[k++] = (uint8_t)(hcrc >> 8);
		memcpy(s + k, gzip_hello + 10, sizeof gzip_hello - 10);
		k += sizeof gzip_hello - 10;
		expect_bytes(bad ? "gzip FHCRC wrong" : "gzip FEXTRA, FNAME, FCOMMENT, FHCRC",
			     SFB_INFLATE_GZIP, s, k,
			     bad ? SFB_INFLATE_E_GZIP_HEADER_CRC : SFB_INFLATE_END);
	}

	uint8_t out[8];
	size_t n, used;
	struct run lim = { .limit = 4 };
	int rc = decode(SFB_INFLATE_ZLIB, zlib_hello, sizeof zlib_hello, &lim, out, sizeof out, &n, &used);
	CHECK(rc == SFB_INFLATE_E_OUTPUT_LIMIT && n <= 4, "5 bytes with a limit of 4: %s, %zu given",
	      sfb_inflate_result_name(rc), n);
	lim.limit = 5;
	rc = decode(SFB_INFLATE_ZLIB, zlib_hello, sizeof zlib_hello, &lim, out, sizeof out, &n, &used);
	CHECK(rc == SFB_INFLATE_END && n == 5, "5 bytes with a limit of 5: %s",
	      sfb_inflate_result_name(rc));

	sfb_inflate_init(&z, SFB_INFLATE_ZLIB, NULL);
	CHECK(sfb_inflate(&z, true) == SFB_INFLATE_E_ARGUMENT, "no window: argument error");
	sfb_inflate_init(&z, SFB_INFLATE_ZLIB, window);
	z.next_in = zlib_hello;
	z.avail_in = 2;
	z.next_out = out;
	z.avail_out = sizeof out;
	CHECK(sfb_inflate(&z, false) == SFB_INFLATE_NEED_INPUT, "2 bytes given: need-input");
	CHECK(sfb_inflate(&z, true) == SFB_INFLATE_E_TRUNCATED, "then no more: truncated");
	CHECK(sfb_inflate(&z, false) == SFB_INFLATE_E_TRUNCATED, "the error stays");

	bool named = true;
	for (int e = SFB_INFLATE_E_TRUNCATED; e >= SFB_INFLATE_E_LAST; e--)
		named = named && strcmp(sfb_inflate_result_name(e), "unknown") != 0;
	CHECK(named && !strcmp(sfb_inflate_result_name(SFB_INFLATE_E_LAST - 1), "unknown") &&
		      !strcmp(sfb_inflate_result_name(3), "unknown"),
	      "every result has a name, others are unknown");
}

static void check_chdr_and_sums(void)
{
	uint8_t h[24] = { 0 };
	uint32_t type = SFB_ELFCOMPRESS_ZLIB;
	uint64_t size = 123456789, align = 8;
	memcpy(h, &type, 4);
	memcpy(h + 8, &size, 8);
	memcpy(h + 16, &align, 8);
	struct sfb_chdr c;
	CHECK(sfb_chdr_read(h, 24, true, &c) == 0 && c.type == 1 && c.size == size &&
		      c.addralign == 8 && c.header_size == 24,
	      "Elf64_Chdr: type, size, alignment, 24 bytes");
	CHECK(sfb_chdr_read(h, 23, true, &c) == SFB_INFLATE_E_TRUNCATED, "Elf64_Chdr of 23 bytes");
	uint32_t s32 = 4242, a32 = 4;
	memcpy(h + 4, &s32, 4);
	memcpy(h + 8, &a32, 4);
	CHECK(sfb_chdr_read(h, 12, false, &c) == 0 && c.type == 1 && c.size == 4242 &&
		      c.addralign == 4 && c.header_size == 12,
	      "Elf32_Chdr: type, size, alignment, 12 bytes");
	CHECK(sfb_chdr_read(h, 11, false, &c) == SFB_INFLATE_E_TRUNCATED, "Elf32_Chdr of 11 bytes");

	const uint8_t *digits = (const uint8_t *)"123456789";
	CHECK(sfb_crc32(0, digits, 9) == 0xcbf43926u, "CRC-32 check value of '123456789'");
	CHECK(sfb_crc32(sfb_crc32(0, digits, 4), digits + 4, 5) == 0xcbf43926u, "CRC-32 in parts");
	CHECK(sfb_adler32(1, (const uint8_t *)"Wikipedia", 9) == 0x11e60398u,
	      "adler-32 of 'Wikipedia'");
	static uint8_t ff[100000];
	memset(ff, 0xff, sizeof ff);
	uint32_t a = 1, b = 0;
	for (size_t i = 0; i < sizeof ff; i++) {
		a = (a + 0xff) % 65521;
		b = (b + a) % 65521;
	}
	CHECK(sfb_adler32(1, ff, sizeof ff) == (b << 16 | a), "adler-32 of 100000 0xff bytes (sums reduced in time)");
}

/* ---- round trips ----------------------------------------------------------- */

static uint8_t *packed;
static size_t packed_len, packed_cap;

static int to_packed(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	if (n > packed_cap - packed_len)
		return -1;
	memcpy(packed + packed_len, p, n);
	packed_len += n;
	return 0;
}

static struct sfb_deflate defl;

/* Compress DATA with our deflate, written in CHUNK-byte pieces. */
static int compress(const uint8_t *data, size_t n, int level, size_t chunk)
{
	packed_len = 0;
	if (sfb_deflate_init(&defl, level, to_packed, NULL))
		return -1;
	for (size_t i = 0; i < n; i += chunk)
		if (sfb_deflate_write(&defl, data + i, n - i < chunk ? n - i : chunk))
			return -1;
	return sfb_deflate_finish(&defl);
}

/* Data of several kinds: text with repeats, a long run, bytes from an
 * LCG (incompressible), and long-range repeats past the window. */
static size_t make_data(uint8_t *d, size_t n, int kind)
{
	uint32_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		switch (kind) {
		case 0: d[i] = "the quick brown fox jumps over the lazy dog "[(i * 7 + i / 50) % 44]; break;
		case 1: d[i] = i < n / 2 ? 'z' : (uint8_t)(i / 1000); break;
		case 2: d[i] = (uint8_t)(x >> 24); break;
		default: d[i] = i >= 40000 && i % 3 ? d[i - 40000 + (i / 7) % 3] : (uint8_t)(x >> 24); break;
		}
	}
	return n;
}

static void check_round_trips(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 100, 70000, 300000 };
	static const size_t chunks[] = { 1, 7, 65536, 1 << 20 };
	size_t maxn = 300000;
	uint8_t *data = malloc(maxn), *out = malloc(maxn + 1);
	packed_cap = maxn * 2 + 1024;
	packed = malloc(packed_cap);
	int fails = 0, runs = 0;
	for (int kind = 0; kind < 4; kind++)
		for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
			for (int level = 0; level < 2; level++)
				for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++) {
					size_t n = make_data(data, sizes[si], kind), got, used;
					if (chunks[ci] == 1 && n > 70000)
						continue;
					runs++;
					if (compress(data, n, level, chunks[ci])) {
						fails++;
						continue;
					}
					struct run r = { .in_chunk = chunks[ci] == 7 ? 13 : 4096,
							 .out_chunk = chunks[ci] == 7 ? 5 : 4096 };
					int rc = decode(SFB_INFLATE_GZIP, packed, packed_len, &r, out,
							maxn + 1, &got, &used);
					if (rc != SFB_INFLATE_END || got != n || memcmp(out, data, n) ||
					    used != packed_len) {
						if (fails++ < 5)
							printf("# kind %d size %zu level %d chunk %zu: %s, %zu bytes\n",
							       kind, n, level, chunks[ci],
							       sfb_inflate_result_name(rc), got);
					}
				}
	CHECK(fails == 0, "%d round trips through sfb_deflate and sfb_inflate (4 kinds of data, "
			  "0 to 300000 bytes, stored and fixed, written in 1 to 1 MiB pieces)", runs);

	make_data(data, 300000, 0);
	compress(data, 300000, SFB_DEFLATE_FAST, 4096);
	CHECK(packed_len < 300000 / 4, "repetitive text compresses: 300000 -> %zu bytes", packed_len);
	make_data(data, 300000, 2);
	compress(data, 300000, SFB_DEFLATE_FAST, 4096);
	CHECK(packed_len < 300000 + 300000 / 1000 + 64,
	      "random bytes grow by stored-block overhead only: 300000 -> %zu bytes", packed_len);

	CHECK(sfb_deflate_write(&defl, data, 1) == SFB_DEFLATE_E_FINISHED,
	      "a write after finish is refused");
	CHECK(sfb_deflate_init(&defl, 7, to_packed, NULL) == SFB_DEFLATE_E_ARGUMENT,
	      "an unknown level is refused");
	packed_cap = 100; /* a sink that fails */
	CHECK(compress(data, 300000, SFB_DEFLATE_FAST, 4096) == -1, "a failing sink stops the stream");
	packed_cap = maxn * 2 + 1024;
	free(data);
	free(out);
}

/* ---- small streams: every chunking, every change -------------------------- */

/* Every input chunk size 1..LEN, output chunks varied with it. */
static bool every_chunking(int format, const uint8_t *s, size_t len, const uint8_t *want, size_t wn)
{
	uint8_t *out = malloc(wn + 1);
	bool ok = true;
	for (size_t ic = 1; ic <= len && ok; ic++) {
		struct run r = { .in_chunk = ic, .out_chunk = 1 + (ic * 7) % 23, .skip = ic % 3 ? 0 : wn / 2 };
		size_t n, used;
		int rc = decode(format, s, len, &r, out, wn + 1, &n, &used);
		ok = rc == SFB_INFLATE_END && n == wn && same(out, want, wn, r.skip) && used == len;
		if (!ok)
			printf("# input chunk %zu: %s, %zu of %zu bytes\n", ic, sfb_inflate_result_name(rc), n, wn);
	}
	free(out);
	return ok;
}

/* Every single-byte change (three kinds) and every truncation: an error,
 * or END; with a checksum, END only with the right output. */
static bool every_change(int format, const uint8_t *s, size_t len, const uint8_t *want, size_t wn,
			 int *errors)
{
	uint8_t *c = malloc(len), *out = malloc(wn + 70000);
	bool ok = true;
	*errors = 0;
	static const uint8_t flips[] = { 0x01, 0x80, 0xff };
	struct run r = { .in_chunk = 5, .out_chunk = 301, .limit = wn + 65536 };
	for (size_t i = 0; i < len; i++)
		for (int f = 0; f < 3; f++) {
			memcpy(c, s, len);
			c[i] ^= flips[f];
			size_t n, used;
			int rc = decode(format, c, len, &r, out, wn + 70000, &n, &used);
			if (rc < 0) {
				(*errors)++;
				continue;
			}
			bool guarded = format != SFB_INFLATE_RAW;
			if (rc != SFB_INFLATE_END || (guarded && (n != wn || memcmp(out, want, wn)))) {
				printf("# byte %zu ^ %#x: %s, %zu bytes\n", i, flips[f],
				       sfb_inflate_result_name(rc), n);
				ok = false;
			}
		}
	for (size_t cut = 0; cut < len; cut++) {
		size_t n, used;
		int rc = decode(format, s, cut, &r, out, wn + 70000, &n, &used);
		if (rc != SFB_INFLATE_E_TRUNCATED) {
			printf("# cut at %zu: %s\n", cut, sfb_inflate_result_name(rc));
			ok = false;
		}
	}
	free(c);
	free(out);
	return ok;
}

static void check_small_streams(void)
{
	CHECK(every_chunking(SFB_INFLATE_ZLIB, zlib_hello4, sizeof zlib_hello4,
			     (const uint8_t *)hello4, 24),
	      "zlib 'hello' x4: every input chunk size from 1");
	int errors;
	CHECK(every_change(SFB_INFLATE_ZLIB, zlib_hello4, sizeof zlib_hello4, (const uint8_t *)hello4,
			   24, &errors),
	      "zlib 'hello' x4: every byte changed (%d errors of %zu), every truncation",
	      errors, 3 * sizeof zlib_hello4);
	uint8_t data[3000];
	for (int level = 0; level < 2; level++) {
		make_data(data, sizeof data, 0);
		memcpy(data + 1000, "a different stretch of bytes in the middle", 42);
		packed_cap = 8192;
		packed = realloc(packed, packed_cap);
		compress(data, sizeof data, level, 1000);
		CHECK(every_chunking(SFB_INFLATE_GZIP, packed, packed_len, data, sizeof data),
		      "our gzip of 3000 bytes (level %d, %zu bytes): every input chunk size", level,
		      packed_len);
		if (level == 1) {
			CHECK(every_change(SFB_INFLATE_GZIP, packed, packed_len, data, sizeof data, &errors),
			      "our gzip of 3000 bytes: every byte changed (%d errors of %zu), "
			      "every truncation", errors, 3 * packed_len);
			/* The same blocks without the wrapper: nothing guards them. */
			CHECK(every_change(SFB_INFLATE_RAW, packed + 10, packed_len - 18, data,
					   sizeof data, &errors),
			      "its raw blocks: every byte changed (%d errors of %zu), every truncation",
			      errors, 3 * (packed_len - 18));
		}
	}
}

/* ---- fixtures from the system's tools -------------------------------------- */

static uint8_t *read_file(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
	*len = fread(p, 1, (size_t)n, f);
	fclose(f);
	return p;
}

static int format_of(const char *s)
{
	if (!strcmp(s, "raw"))
		return SFB_INFLATE_RAW;
	if (!strcmp(s, "zlib") || !strcmp(s, "elf"))
		return SFB_INFLATE_ZLIB;
	if (!strcmp(s, "gzip"))
		return SFB_INFLATE_GZIP;
	return -1;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Decode through 4 KiB of input and of output, as a reader in a signal
 * handler would: MB of output per second of CPU time (the machine may be
 * shared), best of a few. */
static void time_case(const char *name, const uint8_t *s, size_t len, size_t wn)
{
	static uint8_t inbuf[4096], outbuf[4096];
	double best = 1e9;
	for (int rep = 0; rep < (under_valgrind() ? 1 : 5); rep++) {
		double t0 = now();
		sfb_inflate_init(&z, SFB_INFLATE_ZLIB, window);
		size_t pos = 0;
		int rc;
		do {
			if (z.avail_in == 0) {
				size_t k = len - pos < sizeof inbuf ? len - pos : sizeof inbuf;
				memcpy(inbuf, s + pos, k); /* as if pread into scratch */
				pos += k;
				z.next_in = inbuf;
				z.avail_in = k;
			}
			z.next_out = outbuf;
			z.avail_out = sizeof outbuf;
			rc = sfb_inflate(&z, pos == len);
		} while (rc > 0);
		double t = now() - t0;
		if (rc != SFB_INFLATE_END || z.total_out != wn)
			best = -1;
		else if (t < best)
			best = t;
	}
	CHECK(best > 0, "%s through 4 KiB buffers: %zu -> %zu bytes, %.0f MB/s of output", name, len,
	      wn, best > 0 ? wn / best / 1e6 : 0.0);
}

#define SMALL_OUTPUT 65536u

static void fixture_case(const char *dir, const char *fmt, const char *name, const char *cfile,
			 const char *efile, bool timed)
{
	size_t len, wn;
	uint8_t *s = read_file(dir, cfile, &len), *want = read_file(dir, efile, &wn);
	int format = format_of(fmt);
	if (!s || !want || (format < 0 && strcmp(fmt, "zstd"))) {
		CHECK(0, "%s: files %s and %s, format %s", name, cfile, efile, fmt);
		free(s);
		free(want);
		return;
	}
	const uint8_t *stream = s;
	size_t slen = len;
	if (!strcmp(fmt, "zstd")) {
		/* Not decoded: the Chdr must say what it is, for the reader
		 * to pass it over. */
		struct sfb_chdr c;
		int rc = sfb_chdr_read(s, len, true, &c);
		CHECK(rc == 0 && c.type == SFB_ELFCOMPRESS_ZSTD && c.size == wn,
		      "%s: Chdr says zstd, %llu bytes (objcopy's output has %zu)", name,
		      (unsigned long long)c.size, wn);
		free(s);
		free(want);
		return;
	}
	if (!strcmp(fmt, "elf")) {
		struct sfb_chdr c;
		int rc = sfb_chdr_read(s, len, true, &c);
		CHECK(rc == 0 && c.type == SFB_ELFCOMPRESS_ZLIB && c.size == wn,
		      "%s: Chdr says zlib, %llu bytes (objcopy's output has %zu)", name,
		      (unsigned long long)c.size, wn);
		stream += c.header_size;
		slen -= c.header_size;
	}
	uint8_t *out = malloc(wn + 1);
	static const struct run runs[] = {
		{ 0, 0, 0, 0 },      { 4096, 4096, 0, 0 }, { 1, 4096, 0, 0 },
		{ 4096, 1, 0, 0 },   { 7, 13, 0, 0 },      { 4096, 4096, 1, 0 },
		{ 512, 4096, 2, 0 }, /* skip: set below to half the output */
	};
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
		struct run r = runs[i];
		if ((r.in_chunk == 1 || r.out_chunk == 1) && wn > (1u << 20))
			continue; /* byte by byte: smaller cases only */
		if (under_valgrind() && wn > SMALL_OUTPUT) {
			/* Enough for memcheck: whole, and in pages when not huge. */
			bool whole = r.in_chunk == 0;
			bool pages = r.in_chunk == 4096 && r.out_chunk == 4096 && !r.skip;
			if (!whole && !(pages && wn <= (1u << 20)))
				continue;
		}
		if (r.skip == 2)
			r.skip = wn / 2;
		if (r.skip == 1)
			r.skip = wn - wn / 7;
		r.limit = wn; /* as a reader gives ch_size */
		size_t n, used;
		int rc = decode(format, stream, slen, &r, out, wn + 1, &n, &used);
		CHECK(rc == SFB_INFLATE_END && n == wn && same(out, want, wn, r.skip) &&
			      (format == SFB_INFLATE_RAW || used == slen),
		      "%s (%s, %zu -> %zu bytes): input in %zu, output in %zu, %zu skipped: %s", name,
		      fmt, slen, wn, r.in_chunk, r.out_chunk, r.skip, sfb_inflate_result_name(rc));
	}
	/* Each of these decodes the stream about 3 times per byte of it;
	 * under valgrind, for one case in four. */
	static unsigned small_cases;
	bool thorough = !under_valgrind() || small_cases++ % 4 == 0;
	if (slen <= 600 && wn <= SMALL_OUTPUT && thorough)
		CHECK(every_chunking(format, stream, slen, want, wn), "%s: every input chunk size",
		      name);
	if (slen <= 2500 && wn <= SMALL_OUTPUT && thorough) {
		int errors;
		CHECK(every_change(format, stream, slen, want, wn, &errors),
		      "%s: every byte changed (%d errors of %zu), every truncation", name, errors,
		      3 * slen);
	}
	if (timed)
		time_case(name, stream, slen, wn);
	free(out);
	free(s);
	free(want);
}

static void fixture_data(const char *dir, const char *name, const char *file)
{
	size_t n;
	uint8_t *d = read_file(dir, file, &n);
	if (!d) {
		CHECK(0, "data %s: %s", name, file);
		return;
	}
	packed_cap = n * 2 + 4096;
	packed = realloc(packed, packed_cap);
	for (int level = 0; level < 2; level++) {
		int rc = compress(d, n, level, 1000);
		char path[4096];
		snprintf(path, sizeof path, "%s/%s.l%d.gz", dir, name, level);
		FILE *f = fopen(path, "wb");
		bool ok = rc == 0 && f && fwrite(packed, 1, packed_len, f) == packed_len;
		if (f)
			fclose(f);
		CHECK(ok, "%s compressed at level %d: %zu -> %zu bytes", name, level, n, packed_len);
	}
	free(d);
}

static void run_fixtures(const char *dir)
{
	size_t len;
	char *m = (char *)read_file(dir, "cases", &len);
	if (!m) {
		CHECK(0, "%s/cases readable", dir);
		return;
	}
	m = realloc(m, len + 1);
	m[len] = 0;
	char speed[256] = "";
	for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n")) {
		char a[64], b[256], c[1024], d[1024];
		if (line[0] == '#')
			continue;
		int k = sscanf(line, "%63s %255s %1023s %1023s", a, b, c, d);
		if (k == 2 && !strcmp(a, "speed"))
			snprintf(speed, sizeof speed, "%s", b);
		else if (k == 3 && !strcmp(a, "data"))
			fixture_data(dir, b, c);
		else if (k == 4)
			fixture_case(dir, a, b, c, d, !strcmp(b, speed));
		else if (k > 0)
			CHECK(0, "cases line: %s", line);
	}
	free(m);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		packed_cap = 1 << 16;
		packed = malloc(packed_cap);
		run_fixtures(argv[1]);
	} else {
		check_embedded();
		check_bad_blocks();
		check_bad_wrappers();
		check_chdr_and_sums();
		check_round_trips();
		check_small_streams();
	}
	free(packed);
	CHECK_DONE();
}
