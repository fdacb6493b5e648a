/* libFuzzer target for the DEFLATE decoder and encoder
 * (src/base/inflate.c, src/base/deflate.c), checked against zlib.
 *
 * An input is a 3-byte head and a body.  Head byte 0 picks the job:
 * 0-2: the body is a raw / zlib / gzip stream, decoded by sfb_inflate in
 * chunks of input and output whose sizes come from head bytes 1 and 2
 * (output discarded, only counted, on some inputs).  When it decodes,
 * zlib must decode it to the same bytes, from the same number of input
 * bytes; when zlib decodes it within the output cap, so must sfb_inflate.
 * Every result must be END or a named error, never NEED_INPUT with the
 * input all given.
 * 3: the body seeds data (its bytes, with copies of earlier stretches for
 * matches), which sfb_deflate compresses in chunks; the gzip stream must
 * decode to the data with sfb_inflate (chunked) and with zlib.
 * With FUZZ_INFLATE_DECODE_ONLY=1 in the environment, job 3 is job 0: a
 * campaign on the decoder alone, many times the inputs a second
 * (the encoder's match search dominates a round trip).
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -Isrc -Itests/fuzz
 *   tests/fuzz/fuzz_inflate.c src/base/inflate.c src/base/deflate.c -lz
 * With -DSFB_FUZZ_MAIN it replays files instead (tests/fuzz/corpus-inflate). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/deflate.h"
#include "base/inflate.h"

#define FUZZ_NAME "fuzz_inflate"
#include "fuzz_target.h"

#define HEAD 3
#define OUT_CAP (1u << 17)
#define JOB_ROUND_TRIP 3
#define DECODE_CAP_SMALL 8192u
#define DECODE_CAP_LARGE 49152u

static uint8_t window[SFB_INFLATE_WINDOW];
static struct sfb_inflate z;
static uint8_t ours[OUT_CAP + 1], theirs[OUT_CAP + 1];

/* Chunk sizes: small ones mostly, from a seed's LCG; past the first
 * SMALL_CHUNKS_UNTIL bytes up to 4 KiB. */
#define SMALL_CHUNKS_UNTIL 4096
struct chunker {
	uint32_t state;
	uint8_t seed;
};

static size_t next_chunk(struct chunker *c, size_t done)
{
	if (c->seed == 0)
		return SIZE_MAX; /* all at once */
	c->state = c->state * 1103515245u + 12345u;
	uint32_t r = c->state >> 16;
	if (done > SMALL_CHUNKS_UNTIL)
		return 1 + r % 4096; /* keeps long streams fast to check */
	switch (c->seed & 3) {
	case 0: return 1 + r % 3;
	case 1: return 1 + r % 64;
	case 2: return 1 + r % 4096;
	default: return 1 + (r & 1 ? r % 7 : r % 40000);
	}
}

/* Decode IN with sfb_inflate through chunks into ours[], at most CAP
 * bytes; the result, *OUT_LEN the bytes given, *USED the input taken. */
static int our_inflate(int format, const uint8_t *in, size_t len, uint8_t iseed, uint8_t oseed,
		       bool discard, size_t cap, size_t *out_len, size_t *used)
{
	struct chunker ic = { iseed, iseed }, oc = { oseed, oseed };
	sfb_inflate_init(&z, format, window);
	sfb_inflate_set_limit(&z, cap);
	size_t pos = 0, out = 0;
	int rc;
	/* At most one call per input or output byte, and a few more. */
	for (size_t calls = 0;; calls++) {
		if (calls > 2 * (len + cap) + 16)
			FAIL("no progress after %zu calls", calls);
		if (z.avail_in == 0) {
			size_t k = next_chunk(&ic, pos);
			if (k > len - pos)
				k = len - pos;
			z.next_in = in + pos;
			z.avail_in = k;
			pos += k;
		}
		size_t room = next_chunk(&oc, out);
		if (room > cap + 1 - out)
			room = cap + 1 - out;
		z.next_out = discard ? NULL : ours + out;
		z.avail_out = room;
		size_t in_before = z.avail_in;
		rc = sfb_inflate(&z, pos == len);
		size_t made = room - z.avail_out;
		if (discard && made)
			memset(ours + out, 0, made);
		out += made;
		if (out != z.total_out)
			FAIL("output %zu bytes, total_out %llu", out, (unsigned long long)z.total_out);
		if (rc == SFB_INFLATE_NEED_INPUT && (z.avail_in || pos == len))
			FAIL("need-input with %zu bytes left, %zu to give", z.avail_in, len - pos);
		if (rc == SFB_INFLATE_NEED_OUTPUT && z.avail_out)
			FAIL("need-output with %zu bytes of room", z.avail_out);
		if (rc <= 0)
			break;
		if (rc == SFB_INFLATE_NEED_OUTPUT && room == 0 && in_before == z.avail_in)
			continue; /* no room was given: give some */
	}
	if (rc < 0 && !strcmp(sfb_inflate_result_name(rc), "unknown"))
		FAIL("error %d without a name", rc);
	if (sfb_inflate(&z, true) != rc)
		FAIL("result %d not sticky", rc);
	*out_len = out;
	*used = (size_t)z.total_in;
	return rc;
}

static const int zlib_window_bits[3] = { -15, 15, 16 + 15 };

/* zlib's decoding of IN into theirs[]: Z_STREAM_END or not. */
static int zlib_inflate(int format, const uint8_t *in, size_t len, size_t *out_len, size_t *used)
{
	z_stream s;
	memset(&s, 0, sizeof s);
	if (inflateInit2(&s, zlib_window_bits[format]) != Z_OK)
		FAIL("inflateInit2");
	s.next_in = (Bytef *)(uintptr_t)in;
	s.avail_in = (uInt)len;
	s.next_out = theirs;
	s.avail_out = OUT_CAP + 1;
	int rc = inflate(&s, Z_FINISH);
	*out_len = s.total_out;
	*used = s.total_in;
	inflateEnd(&s);
	return rc;
}

static void check_decode(int format, const uint8_t *in, size_t len, uint8_t iseed, uint8_t oseed)
{
	bool discard = (oseed & 0xf0) == 0xf0;
	/* Output past the window (distances that wrap it) on one input in
	 * four; less on the others, as checking costs time per byte. */
	size_t cap = (oseed & 0x0c) == 0x0c ? DECODE_CAP_LARGE : DECODE_CAP_SMALL;
	size_t n, used, zn, zused;
	int rc = our_inflate(format, in, len, iseed, oseed, discard, cap, &n, &used);
	int zrc = zlib_inflate(format, in, len, &zn, &zused);
	if (rc == SFB_INFLATE_END) {
		if (zrc != Z_STREAM_END)
			FAIL("format %d: ours decodes %zu bytes, zlib says %d", format, n, zrc);
		if (zn != n || (!discard && memcmp(ours, theirs, n)))
			FAIL("format %d: %zu bytes, zlib %zu, or they differ", format, n, zn);
		if (zused != used)
			FAIL("format %d: stream of %zu bytes, zlib %zu", format, used, zused);
	} else if (zrc == Z_STREAM_END && zn <= cap) {
		FAIL("format %d: zlib decodes %zu bytes, ours fails: %s", format, zn,
		     sfb_inflate_result_name(rc));
	}
}

/* ---- round trip ---------------------------------------------------------- */

static struct sfb_deflate d;
#define SMALL_DATA 4096
static uint8_t data[1u << 17];
static uint8_t packed[(1u << 17) * 2 + 4096];
static size_t packed_len;

static int to_packed(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx;
	if (n > sizeof packed - packed_len)
		FAIL("compressed output larger than expected");
	memcpy(packed + packed_len, p, n);
	packed_len += n;
	return 0;
}

/* Data from the body: bytes 0x00-0xef copy literally; others start a
 * copy of an earlier stretch (length and distance from the next bytes),
 * so the data has long and overlapping matches. */
static size_t make_data(const uint8_t *b, size_t len, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n < cap; i++) {
		if (b[i] < 0xf0 || i + 2 >= len || n == 0) {
			data[n++] = b[i];
			continue;
		}
		size_t copy = (size_t)(b[i] & 0x0f) * 64 + b[i + 1] + 1;
		size_t dist = 1 + (b[i + 2] * 131u) % n;
		for (size_t k = 0; k < copy && n < cap; k++, n++)
			data[n] = data[n - dist];
		i += 2;
	}
	return n;
}

static void check_round_trip(const uint8_t *body, size_t len, uint8_t iseed, uint8_t oseed)
{
	/* Data past two windows (where the encoder drops its older half) on
	 * one input in 32; 4 KiB on the others, to keep runs fast. */
	size_t n = make_data(body, len, (iseed & 0xf8) == 0xf8 ? sizeof data : SMALL_DATA);
	int level = iseed & 1 ? SFB_DEFLATE_STORE : SFB_DEFLATE_FAST;
	packed_len = 0;
	if (sfb_deflate_init(&d, level, to_packed, NULL))
		FAIL("deflate init");
	struct chunker wc = { oseed, oseed };
	for (size_t pos = 0; pos < n;) {
		size_t k = next_chunk(&wc, pos);
		if (k > n - pos)
			k = n - pos;
		if (sfb_deflate_write(&d, data + pos, k))
			FAIL("deflate write");
		pos += k;
	}
	if (sfb_deflate_finish(&d))
		FAIL("deflate finish");
	size_t got, used;
	int rc = our_inflate(SFB_INFLATE_GZIP, packed, packed_len, iseed, oseed, false, OUT_CAP,
			     &got, &used);
	if (rc != SFB_INFLATE_END || got != n || memcmp(ours, data, n) || used != packed_len)
		FAIL("round trip of %zu bytes: %s, %zu bytes", n, sfb_inflate_result_name(rc), got);
	size_t zn, zused;
	int zrc = zlib_inflate(SFB_INFLATE_GZIP, packed, packed_len, &zn, &zused);
	if (zrc != Z_STREAM_END || zn != n || memcmp(theirs, data, n))
		FAIL("round trip of %zu bytes: zlib says %d, %zu bytes", n, zrc, zn);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	if (size < HEAD)
		return 0;
	static int decode_only = -1;
	if (decode_only < 0) {
		const char *e = getenv("FUZZ_INFLATE_DECODE_ONLY");
		decode_only = e && strcmp(e, "1") == 0;
	}
	int job = in[0] & 3;
	if (decode_only && job == JOB_ROUND_TRIP)
		job = 0;
	/* The body in a heap block of its exact size: ASan sees any over-read. */
	size_t len = size - HEAD;
	uint8_t *body = malloc(len ? len : 1);
	if (!body)
		return 0;
	memcpy(body, in + HEAD, len);
	if (job == JOB_ROUND_TRIP)
		check_round_trip(body, len, in[1], in[2]);
	else
		check_decode(job, body, len, in[1], in[2]);
	free(body);
	return 0;
}
