/* libFuzzer target for the Zstandard decoder (src/base/zstd.c), checked
 * against libzstd.
 *
 * An input is a 2-byte head and a body, a stream of zstd frames.  Head
 * byte 0 picks the output chunk sizes (0: all at once) and whether the
 * output is discarded (counted only); head byte 1 the history buffer:
 * its low bits one of a few sizes from 1 KiB to the largest window
 * tried, so that frames are refused for their window as well as decoded.
 * Every call must give at most the output asked for, and end in END or a
 * named error within a bounded number of calls; the first frame's window
 * as sfb_zstd_frame_window() reads it must be libzstd's.
 *
 * When sfb_zstd decodes the body, libzstd must decode it to the same
 * bytes; when libzstd decodes it within the output cap, with no
 * dictionary and a window the history holds, so must sfb_zstd, unless
 * its sequences' bit stream is read past its start (bitstream-overread:
 * RFC 8878 calls that corrupt, libzstd reads zeros there and checks only
 * that the stream is not left with bits unread).
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -Isrc -Itests/fuzz
 *   tests/fuzz/fuzz_zstd.c src/base/zstd.c -lzstd
 * With -DSFB_FUZZ_MAIN it replays files instead (tests/fuzz/corpus-zstd). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader */
#include <zstd.h>

#include "base/zstd.h"

#define FUZZ_NAME "fuzz_zstd"
#include "fuzz_target.h"

#define HEAD 2
#define OUT_CAP (1u << 16)
#define HIST_MAX (1u << 18)

static struct sfb_zstd z;
static uint8_t hist[HIST_MAX];
static uint8_t ours[OUT_CAP + 1], theirs[OUT_CAP + 1];

struct mem {
	const uint8_t *p;
	size_t len;
};

static int mem_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct mem *m = ctx;
	if (off > m->len || n > m->len - off)
		FAIL("read of %zu bytes at %llu past the input's %zu", n, (unsigned long long)off,
		     m->len);
	memcpy(buf, m->p + off, n);
	return 0;
}

static size_t next_chunk(uint32_t *state, uint8_t seed)
{
	if ((seed & 7) == 0)
		return SIZE_MAX;
	*state = *state * 1103515245u + 12345u;
	uint32_t r = *state >> 16;
	switch (seed & 3) {
	case 0: return 1 + r % 3;
	case 1: return 1 + r % 64;
	case 2: return 1 + r % 4096;
	default: return 1 + r % 70000;
	}
}

/* The history libzstd's frames need, or 0 when some frame is not a plain
 * Zstandard frame this decoder reads (a dictionary, an unknown window). */
static uint64_t needed_window(const uint8_t *in, size_t len, bool *dict)
{
	uint64_t most = 0;
	*dict = false;
	while (len) {
		ZSTD_frameHeader h;
		if (ZSTD_getFrameHeader(&h, in, len) != 0)
			return 0;
		size_t fsize = ZSTD_findFrameCompressedSize(in, len);
		if (ZSTD_isError(fsize) || fsize > len)
			return 0;
		if (h.frameType == ZSTD_frame) {
			if (h.dictID)
				*dict = true;
			uint64_t w = h.windowSize;
			if (h.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN && h.frameContentSize < w)
				w = h.frameContentSize;
			if (w > most)
				most = w;
		}
		in += fsize;
		len -= fsize;
	}
	return most;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEAD)
		return 0;
	const uint8_t *in = data + HEAD;
	size_t len = size - HEAD;
	static const size_t hsizes[8] = { 1024, 4096, 20000, 65536, 100000, 131072, 200000, HIST_MAX };
	size_t hsize = hsizes[data[1] & 7];
	bool discard = data[0] & 0x80;

	/* The window sfb_zstd_frame_window() reads from a header is
	 * libzstd's, bounded by the content size as the decoder bounds it. */
	ZSTD_frameHeader fh;
	if (ZSTD_getFrameHeader(&fh, in, len) == 0 && fh.frameType == ZSTD_frame) {
		uint64_t want = fh.windowSize;
		if (fh.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN && fh.frameContentSize < want)
			want = fh.frameContentSize;
		uint64_t w = sfb_zstd_frame_window(in, len);
		if (w != want)
			FAIL("sfb_zstd_frame_window %llu, libzstd's %llu", (unsigned long long)w,
			     (unsigned long long)want);
	}

	struct mem m = { in, len };
	sfb_zstd_init(&z, hist, hsize, len, mem_read, &m);
	sfb_zstd_set_limit(&z, OUT_CAP);
	uint32_t state = data[0];
	size_t got_total = 0;
	int rc;
	for (size_t calls = 0;; calls++) {
		if (calls > 2 * (len + OUT_CAP) + 16)
			FAIL("no progress after %zu calls", calls);
		size_t room = next_chunk(&state, data[0]);
		if (room > OUT_CAP - got_total)
			room = OUT_CAP - got_total;
		size_t got;
		rc = sfb_zstd_decode(&z, discard ? NULL : ours + got_total, room, &got);
		if (got > room)
			FAIL("gave %zu bytes for %zu asked", got, room);
		if (discard)
			memset(ours + got_total, 0, got);
		got_total += got;
		if (rc < 0) {
			if (!strcmp(sfb_zstd_result_name(rc), "unknown"))
				FAIL("result %d has no name", rc);
			break;
		}
		if (rc == SFB_ZSTD_END)
			break;
		if (rc != SFB_ZSTD_NEED_OUTPUT)
			FAIL("result %d", rc);
		if (got_total == OUT_CAP) {
			/* The limit: the next byte must end it or be refused. */
			uint8_t extra;
			rc = sfb_zstd_decode(&z, &extra, 1, &got);
			if (got)
				FAIL("a byte past the limit");
			break;
		}
	}
	if (z.total_out != got_total)
		FAIL("total_out %llu, given %zu", (unsigned long long)z.total_out, got_total);

	size_t theirs_len = ZSTD_decompress(theirs, OUT_CAP, in, len);
	bool they_ok = !ZSTD_isError(theirs_len);
	if (rc == SFB_ZSTD_END) {
		if (!they_ok)
			FAIL("sfb_zstd decodes %zu bytes, libzstd fails: %s", got_total,
			     ZSTD_getErrorName(theirs_len));
		if (theirs_len != got_total || (!discard && memcmp(ours, theirs, got_total)))
			FAIL("sfb_zstd gives %zu bytes, libzstd %zu, or other bytes", got_total,
			     theirs_len);
	} else if (they_ok && rc != SFB_ZSTD_E_OUTPUT_LIMIT && rc != SFB_ZSTD_E_OVERREAD) {
		bool dict;
		uint64_t w = needed_window(in, len, &dict);
		if (!dict && w && w <= hsize && rc != SFB_ZSTD_E_WINDOW)
			FAIL("libzstd decodes %zu bytes, sfb_zstd fails: %s after %zu", theirs_len,
			     sfb_zstd_result_name(rc), got_total);
		if (rc == SFB_ZSTD_E_WINDOW && w && w <= hsize)
			FAIL("window-too-large for a window of %llu in %zu", (unsigned long long)w,
			     hsize);
	}
	return 0;
}
