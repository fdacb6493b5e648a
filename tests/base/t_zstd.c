/* The Zstandard decoder (src/base/zstd.c).
 *
 * Without arguments: hand-built frames, one per header error; every
 * truncation of a small frame written by the zstd CLI (embedded) gives a
 * named error; XXH64 of the empty input against its published value.
 *
 * With a directory (tests/base/t_zstd.sh makes it): its file "cases"
 * lists, one per line,
 *     ok NAME COMPRESSED EXPECTED HIST
 *         COMPRESSED, written by the zstd CLI or objcopy, decodes to the
 *         bytes of EXPECTED with a history buffer of HIST bytes: whole,
 *         in output chunks of 1, 7 and 4096 bytes, with its first half
 *         skipped (output NULL); with HIST - 1 bytes the frame's window
 *         does not fit (SFB_ZSTD_E_WINDOW) when HIST is the window; the
 *         output limit at the size passes, one below it fails;
 *     err NAME COMPRESSED HIST ERROR
 *         decoding fails with the error named ERROR;
 *     fuzz NAME COMPRESSED EXPECTED HIST
 *         as ok, and then every truncation and every change of one byte
 *         (each bit flipped, at a stride for large frames) gives a named
 *         error or, for the changes that keep it valid, output that the
 *         frame's checksum vouches for: never a crash or an endless loop. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/zstd.h"
#include "check.h"

static struct sfb_zstd z;

#define check(what, cond) CHECK(cond, "%s", what)
#define check_eq_int(what, got, want)                                                    \
	do {                                                                             \
		int got_ = (got), want_ = (want);                                        \
		CHECK(got_ == want_, "%s: %s (got %s)", what, sfb_zstd_result_name(want_), \
		      sfb_zstd_result_name(got_));                                      \
	} while (0)

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *p = malloc(cap);
	for (;;) {
		if (n == cap)
			p = realloc(p, cap *= 2);
		size_t k = fread(p + n, 1, cap - n, f);
		if (k == 0)
			break;
		n += k;
	}
	fclose(f);
	*len = n;
	return p;
}

struct mem {
	const uint8_t *p;
	size_t len;
	unsigned reads;
};

static int mem_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	struct mem *m = ctx;
	m->reads++;
	if (off > m->len || n > m->len - off)
		return -1;
	memcpy(buf, m->p + off, n);
	return 0;
}

#define NO_LIMIT UINT64_MAX

/* Decode IN through HIST (HSIZE bytes) into OUT (CAP bytes) in output
 * chunks of CHUNK (0: all at once), the first SKIP bytes discarded; the
 * result, *N the output length. */
static int decode(const uint8_t *in, size_t len, uint8_t *hist, size_t hsize, uint8_t *out,
		  size_t cap, size_t chunk, size_t skip, uint64_t limit, size_t *n)
{
	struct mem m = { in, len, 0 };
	sfb_zstd_init(&z, hist, hsize, len, mem_read, &m);
	if (limit != NO_LIMIT)
		sfb_zstd_set_limit(&z, limit);
	size_t pos = 0;
	int rc;
	for (long calls = 0;; calls++) {
		if (calls > 4 * (long)(len + cap) + 16) {
			rc = 99;
			break;
		}
		size_t room = chunk && chunk < cap - pos ? chunk : cap - pos;
		bool skipping = pos < skip;
		if (skipping && room > skip - pos)
			room = skip - pos;
		size_t got;
		rc = sfb_zstd_decode(&z, skipping ? NULL : out + pos, room, &got);
		if (got > room) {
			rc = 98;
			break;
		}
		if (skipping)
			memset(out + pos, 0, got);
		pos += got;
		if (rc <= 0)
			break;
		if (pos == cap) {
			/* The caller's buffer is full: the stream must end here. */
			uint8_t extra;
			rc = sfb_zstd_decode(&z, &extra, 1, &got);
			if (got)
				rc = 97;
			break;
		}
	}
	*n = pos;
	return rc;
}

static bool same(const uint8_t *a, const uint8_t *b, size_t n, size_t from)
{
	return memcmp(a + from, b + from, n - from) == 0;
}

/* ---- without a directory ------------------------------------------------- */

/* "hello, hello, hello\n" by zstd -19 (a compressed block with one
 * sequence), with its checksum. */
static const uint8_t hello_zst[] = {
	0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x14, 0x75, 0x00, 0x00, 0x40, 0x68, 0x65, 0x6c, 0x6c,
	0x6f, 0x2c, 0x20, 0x0a, 0x01, 0x00, 0xe2, 0x8a, 0x11, 0x21, 0x69, 0x9d, 0x87,
};
static const char hello[] = "hello, hello, hello\n";
static const uint8_t hdr_bad_magic[] = { 0x28, 0xb5, 0x2f, 0xfe, 0x24, 0x14, 0x75, 0x00 };

static void builtin(void)
{
	uint8_t hist[4096], out[256];
	size_t n;
	check("XXH64 of no bytes is ef46db3751d8e999", sfb_xxh64("", 0, 0) == 0xef46db3751d8e999ull);

	int rc = decode(hello_zst, sizeof hello_zst, hist, sizeof hist, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check_eq_int("embedded frame decodes", rc, SFB_ZSTD_END);
	check("embedded frame's bytes", n == strlen(hello) && memcmp(out, hello, n) == 0);

	/* Every truncation: a named error, never output past the input. */
	int bad = 0;
	for (size_t k = 0; k < sizeof hello_zst; k++) {
		rc = decode(hello_zst, k, hist, sizeof hist, out, sizeof out, 0, 0, NO_LIMIT, &n);
		if (rc >= 0 || !strcmp(sfb_zstd_result_name(rc), "unknown"))
			bad++;
	}
	check("every truncation of the embedded frame: a named error", bad == 0);

	/* Header errors, each on a copy of the embedded frame. */
	uint8_t f[sizeof hello_zst];
	struct { const char *what; size_t at; uint8_t val; int err; } hdr[] = {
		{ "bad magic", 0, 0x29, SFB_ZSTD_E_MAGIC },
		{ "reserved bit", 4, 0x24 | 0x08, SFB_ZSTD_E_RESERVED },
		{ "block type 3", 6, 0x75 | 0x06, SFB_ZSTD_E_BLOCK_TYPE },
		{ "checksum changed", sizeof hello_zst - 1, 0x86, SFB_ZSTD_E_CHECKSUM },
		{ "content size 19", 5, 19, SFB_ZSTD_E_CONTENT_SIZE },
		{ "content size 21", 5, 21, SFB_ZSTD_E_CONTENT_SIZE },
	};
	for (size_t i = 0; i < sizeof hdr / sizeof hdr[0]; i++) {
		memcpy(f, hello_zst, sizeof f);
		f[hdr[i].at] = hdr[i].val;
		rc = decode(f, sizeof f, hist, sizeof hist, out, sizeof out, 0, 0, NO_LIMIT, &n);
		check_eq_int(hdr[i].what, rc, hdr[i].err);
	}
	/* A dictionary ID (flag 1, one byte, nonzero) before the content size. */
	const uint8_t dict[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x21, 0x07, 0x14, 0x01, 0x00, 0x00 };
	rc = decode(dict, sizeof dict, hist, sizeof hist, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check_eq_int("dictionary ID: dictionary", rc, SFB_ZSTD_E_DICTIONARY);
	/* Dictionary ID 0 means none. */
	const uint8_t nodict[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x21, 0x00, 0x01, 0x09, 0x00, 0x00, 'x' };
	rc = decode(nodict, sizeof nodict, hist, sizeof hist, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check("dictionary ID 0: decodes", rc == SFB_ZSTD_END && n == 1 && out[0] == 'x');
	/* A skippable frame, then the embedded one. */
	uint8_t sk[8 + 3 + sizeof hello_zst] = { 0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3 };
	memcpy(sk + 11, hello_zst, sizeof hello_zst);
	rc = decode(sk, sizeof sk, hist, sizeof hist, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check("skippable frame skipped", rc == SFB_ZSTD_END && n == strlen(hello));
	/* Window: 20 bytes of content need 20 bytes of history. */
	rc = decode(hello_zst, sizeof hello_zst, hist, 20, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check_eq_int("history of the content size (20) suffices", rc, SFB_ZSTD_END);
	rc = decode(hello_zst, sizeof hello_zst, hist, 19, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check_eq_int("history of 19: window-too-large", rc, SFB_ZSTD_E_WINDOW);
	check("... before any output", n == 0);
	check("sfb_zstd_frame_window: 20 for the embedded frame (single segment)",
	      sfb_zstd_frame_window(hello_zst, sizeof hello_zst) == 20);
	/* A frame with a window descriptor (2 MiB) and a content size (5)
	 * smaller than it: the content size bounds the history (no match
	 * reaches before the frame's start).  zstd(1) makes such frames
	 * single-segment, other encoders need not. */
	const uint8_t wide[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x58, 5, 0, 0, 0,
				 0x29, 0, 0, 'h', 'e', 'l', 'l', 'o' };
	rc = decode(wide, sizeof wide, hist, 5, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check("2 MiB window, 5 bytes of content: a history of 5 suffices",
	      rc == SFB_ZSTD_END && n == 5 && memcmp(out, "hello", 5) == 0);
	rc = decode(wide, sizeof wide, hist, 4, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check_eq_int("... a history of 4: window-too-large", rc, SFB_ZSTD_E_WINDOW);
	check("sfb_zstd_frame_window: 5 for it", sfb_zstd_frame_window(wide, sizeof wide) == 5);
	uint8_t nofcs[sizeof wide - 4];
	memcpy(nofcs, wide, 6);
	memcpy(nofcs + 6, wide + 10, sizeof wide - 10);
	nofcs[4] = 0x00;
	check("sfb_zstd_frame_window: 2 MiB without the content size",
	      sfb_zstd_frame_window(nofcs, sizeof nofcs) == 2u << 20);
	check("sfb_zstd_frame_window: 0 for a header cut short, or another magic",
	      sfb_zstd_frame_window(wide, 9) == 0 && sfb_zstd_frame_window(wide, 5) == 0 &&
		      sfb_zstd_frame_window(hdr_bad_magic, sizeof hdr_bad_magic) == 0);
	rc = decode(hello_zst, sizeof hello_zst, hist, sizeof hist, out, sizeof out, 0, 0, 20, &n);
	check_eq_int("output limit 20 of 20", rc, SFB_ZSTD_END);
	rc = decode(hello_zst, sizeof hello_zst, hist, sizeof hist, out, sizeof out, 0, 0, 19, &n);
	check_eq_int("output limit 19 of 20", rc, SFB_ZSTD_E_OUTPUT_LIMIT);
	rc = decode(hello_zst, sizeof hello_zst, NULL, 0, out, sizeof out, 0, 0, NO_LIMIT, &n);
	check_eq_int("no history: argument", rc, SFB_ZSTD_E_ARGUMENT);
	check("names: window-too-large", !strcmp(sfb_zstd_result_name(SFB_ZSTD_E_WINDOW), "window-too-large"));
	check("names: argument", !strcmp(sfb_zstd_result_name(SFB_ZSTD_E_ARGUMENT), "argument"));
	check("names: bitstream-overread (the last)",
	      !strcmp(sfb_zstd_result_name(SFB_ZSTD_E_LAST), "bitstream-overread"));
}

/* ---- the fixtures ---------------------------------------------------------- */

static void case_ok(const char *name, const uint8_t *in, size_t len, const uint8_t *exp, size_t elen,
		    size_t hsize, bool fuzz)
{
	uint8_t *hist = malloc(hsize + 1), *out = malloc(elen + 1);
	size_t n;
	char what[512];
	static const size_t chunks[] = { 0, 1, 7, 4096 };
	for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
		if (chunks[c] == 1 && elen > (1u << 20))
			continue;
		memset(out, 0, elen + 1);
		int rc = decode(in, len, hist, hsize, out, elen, chunks[c], 0, NO_LIMIT, &n);
		snprintf(what, sizeof what, "%s: chunks of %zu: %s, %zu of %zu bytes", name, chunks[c],
			 sfb_zstd_result_name(rc), n, elen);
		check(what, rc == SFB_ZSTD_END && n == elen && same(out, exp, elen, 0));
	}
	memset(out, 0, elen + 1);
	int rc = decode(in, len, hist, hsize, out, elen, 4096, elen / 2, NO_LIMIT, &n);
	snprintf(what, sizeof what, "%s: first half skipped: %s", name, sfb_zstd_result_name(rc));
	check(what, rc == SFB_ZSTD_END && n == elen && same(out, exp, elen, elen / 2));
	rc = decode(in, len, hist, hsize, out, elen, 0, 0, elen, &n);
	snprintf(what, sizeof what, "%s: output limit at the size: %s", name, sfb_zstd_result_name(rc));
	check(what, rc == SFB_ZSTD_END);
	if (elen) {
		rc = decode(in, len, hist, hsize, out, elen, 0, 0, elen - 1, &n);
		snprintf(what, sizeof what, "%s: output limit one below: %s", name, sfb_zstd_result_name(rc));
		check(what, rc == SFB_ZSTD_E_OUTPUT_LIMIT && n < elen);
	}
	/* hsize is what zstd -lv reports (t_zstd.sh); "two" gives the
	 * second frame's, an empty frame's is raised to 1. */
	if (strcmp(name, "two")) {
		uint64_t w = sfb_zstd_frame_window(in, len < 18 ? len : 18);
		snprintf(what, sizeof what, "%s: sfb_zstd_frame_window %llu, zstd -lv's %zu", name,
			 (unsigned long long)w, hsize);
		check(what, w == hsize || (hsize == 1 && w == 0));
	}
	if (hsize > 1) {
		rc = decode(in, len, hist, hsize - 1, out, elen, 0, 0, NO_LIMIT, &n);
		snprintf(what, sizeof what, "%s: history %zu: %s", name, hsize - 1, sfb_zstd_result_name(rc));
		check(what, rc == SFB_ZSTD_E_WINDOW && n < elen);
	}
	if (fuzz) {
		int bad = 0, wrong = 0;
		size_t stride = len > 4096 ? len / 1024 : 1;
		uint8_t *f = malloc(len + 1);
		for (size_t k = 0; k < len; k += stride) {
			rc = decode(in, k, hist, hsize, out, elen, 0, 0, NO_LIMIT, &n);
			if (rc >= 0 || !strcmp(sfb_zstd_result_name(rc), "unknown"))
				bad++;
		}
		snprintf(what, sizeof what, "%s: every truncation: a named error (%d not)", name, bad);
		check(what, bad == 0);
		bad = 0;
		for (size_t k = 0; k < len; k += stride) {
			for (int bit = 0; bit < 8; bit++) {
				memcpy(f, in, len);
				f[k] ^= (uint8_t)(1u << bit);
				rc = decode(f, len, hist, hsize, out, elen, 0, 0, NO_LIMIT, &n);
				if (rc == SFB_ZSTD_END) {
					if (n != elen || !same(out, exp, elen, 0))
						wrong++;
				} else if (rc >= 0 || !strcmp(sfb_zstd_result_name(rc), "unknown")) {
					bad++;
				}
			}
		}
		snprintf(what, sizeof what, "%s: every bit flipped: an error or the data (%d unnamed, %d wrong)",
			 name, bad, wrong);
		check(what, bad == 0 && wrong == 0);
		free(f);
	}
	free(hist);
	free(out);
}

static void fixtures(const char *dir)
{
	char path[4096], line[4096];
	snprintf(path, sizeof path, "%s/cases", dir);
	FILE *f = fopen(path, "r");
	if (!f) {
		check("the cases file opens", false);
		return;
	}
	while (fgets(line, sizeof line, f)) {
		char kind[16], name[64], comp[1024], exp[1024];
		size_t hsize;
		if (line[0] == '#')
			continue;
		char tail[64];
		if (sscanf(line, "%15s %63s %1023s %1023s %63s", kind, name, comp, exp, tail) != 5) {
			if (sscanf(line, "%15s", kind) == 1)
				check(line, false);
			continue;
		}
		hsize = strtoul(tail, NULL, 10);
		size_t clen, elen;
		char p1[2048], p2[2048];
		snprintf(p1, sizeof p1, "%s/%s", dir, comp);
		uint8_t *c = slurp(p1, &clen);
		if (!c) {
			check(p1, false);
			continue;
		}
		if (!strcmp(kind, "err")) {
			/* err NAME COMPRESSED HIST ERROR: the fields shift by one. */
			size_t hs = strtoul(exp, NULL, 10);
			char ename[64];
			if (sscanf(line, "%*s %*s %*s %*s %63s", ename) != 1)
				ename[0] = 0;
			uint8_t *hist = malloc(hs + 1), *out = malloc(1 << 20);
			size_t n;
			int rc = decode(c, clen, hist, hs, out, 1 << 20, 4096, 0, NO_LIMIT, &n);
			char what[512];
			snprintf(what, sizeof what, "%s: %s (want %s)", name, sfb_zstd_result_name(rc), ename);
			check(what, !strcmp(sfb_zstd_result_name(rc), ename));
			free(hist);
			free(out);
			free(c);
			continue;
		}
		snprintf(p2, sizeof p2, "%s/%s", dir, exp);
		uint8_t *e = slurp(p2, &elen);
		if (!e) {
			check(p2, false);
			free(c);
			continue;
		}
		case_ok(name, c, clen, e, elen, hsize, !strcmp(kind, "fuzz"));
		free(c);
		free(e);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	builtin();
	if (argc > 1)
		fixtures(argv[1]);
	CHECK_DONE();
}
