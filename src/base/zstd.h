/* A Zstandard decoder (RFC 8878), safe in a signal handler: it allocates
 * nothing, takes no lock and keeps all its state in a struct and a
 * history buffer that the caller provides.  It makes no system call of
 * its own: input is pulled through the caller's read function, a few
 * hundred bytes at a time, at the offsets the format needs (a compressed
 * block's bit streams are read backwards, so the decoder asks for the
 * bytes it needs rather than being fed them in order).
 *
 * Output is taken in chunks of any size, or counted and discarded (out
 * NULL), so a reader can decompress a large section through a small
 * buffer and stop as soon as it has what it needs.  Back-references are
 * resolved in the history buffer, a ring that must hold the frame's
 * window: Window_Size, or the frame's content size when that is smaller
 * (a single-segment frame's window is its content size); a frame that
 * needs more ends in SFB_ZSTD_E_WINDOW before any of its output.
 *
 * Supported: Zstandard frames, one or several in a row, and skippable
 * frames (skipped); raw, RLE and compressed blocks; raw, RLE, Huffman
 * (1 or 4 streams) and treeless literals, decoded as the sequences take
 * them; predefined, RLE, FSE and repeat tables for the three sequence
 * codes; repeat offsets; the content checksum, verified (XXH64).  A frame
 * that names a dictionary ends in SFB_ZSTD_E_DICTIONARY.
 *
 * Work is bounded by the input read and the output produced: every step
 * of the decoder reads input or writes output, and every table is built
 * from a description of bounded size.  Every malformed stream ends in a
 * named error, after which the decoder stays in that error.
 *
 * Use:
 *
 *     struct sfb_zstd z;
 *     sfb_zstd_init(&z, hist, hist_size, in_size, read, ctx);
 *     size_t got;
 *     int rc = sfb_zstd_decode(&z, out, n, &got);   // out NULL: skip n bytes
 *     // rc: SFB_ZSTD_END, SFB_ZSTD_NEED_OUTPUT, or < 0: an error
 */
#ifndef SFB_ZSTD_H
#define SFB_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SFB_ZSTD_HIDDEN __attribute__((visibility("hidden")))

/* Results of sfb_zstd_decode(): >= 0 a state, < 0 an error. */
enum sfb_zstd_result {
	SFB_ZSTD_END = 0,          /* every frame decoded and checked, all output given */
	SFB_ZSTD_NEED_OUTPUT = 2,  /* the output asked for is given; there is more */

	SFB_ZSTD_E_TRUNCATED = -1,   /* the input ends inside a frame */
	SFB_ZSTD_E_READ = -2,        /* the read function failed */
	SFB_ZSTD_E_MAGIC = -3,       /* neither a Zstandard nor a skippable frame */
	SFB_ZSTD_E_RESERVED = -4,    /* a reserved bit or field set */
	SFB_ZSTD_E_DICTIONARY = -5,  /* the frame needs a dictionary */
	SFB_ZSTD_E_WINDOW = -6,      /* the frame's window exceeds the history buffer */
	SFB_ZSTD_E_BLOCK_TYPE = -7,  /* block type 3 */
	SFB_ZSTD_E_BLOCK_SIZE = -8,  /* a block larger than 128 KiB */
	SFB_ZSTD_E_LITERALS = -9,    /* a literals section inconsistent with its block */
	SFB_ZSTD_E_HUFFMAN = -10,    /* bad Huffman weights, or treeless with no tree */
	SFB_ZSTD_E_FSE = -11,        /* a bad FSE table description */
	SFB_ZSTD_E_ACCURACY = -12,   /* an FSE accuracy log above the format's maximum */
	SFB_ZSTD_E_SEQUENCES = -13,  /* a bad sequences header, or repeat with no table */
	SFB_ZSTD_E_BITSTREAM = -14,  /* a bit stream not used up exactly, or unmarked */
	SFB_ZSTD_E_OFFSET = -15,     /* an offset of 0, beyond the window or the frame's start */
	SFB_ZSTD_E_LITERAL_RUN = -16,/* sequences take more literals than the block has */
	SFB_ZSTD_E_CONTENT_SIZE = -17,/* output differs from Frame_Content_Size */
	SFB_ZSTD_E_CHECKSUM = -18,   /* Content_Checksum differs from the output's XXH64 */
	SFB_ZSTD_E_OUTPUT_LIMIT = -19,/* more output than sfb_zstd_set_limit() allows */
	SFB_ZSTD_E_ARGUMENT = -20,   /* no history buffer, or no read function */
	SFB_ZSTD_E_OVERREAD = -21,   /* the sequences' bit stream read past its start (libzstd
					does not check this: its bits read as 0 there) */
};
#define SFB_ZSTD_E_LAST SFB_ZSTD_E_OVERREAD

/* Reads N bytes at offset OFF of the compressed data into BUF: 0, or
 * nonzero on failure.  Called only for ranges inside the input size. */
typedef int (*sfb_zstd_read_fn)(void *ctx, uint64_t off, void *buf, size_t n);

/* The history (bytes) the Zstandard frame whose first n bytes are at h
 * needs, as the decoder requires it (above); 0 if they are not a
 * Zstandard frame header.  For a caller sizing the history before it
 * starts a decoder. */
SFB_ZSTD_HIDDEN uint64_t sfb_zstd_frame_window(const uint8_t *h, size_t n);

#define SFB_ZSTD_BLOCK_MAX (128u * 1024)
#define SFB_ZSTD_LINE 512u /* bytes of input each of the three readers caches */

/* One FSE decoding table cell. */
struct sfb_zstd_fse {
	uint8_t sym, nbits;
	uint16_t base;
};

/* A bit stream read backwards: its first byte's offset, and how many of
 * its bits are left (negative once a read ran past its start). */
struct sfb_zstd_bits {
	uint64_t start;
	int64_t pos;
};

/* Input cached for one reader. */
struct sfb_zstd_line {
	uint64_t base;
	uint32_t len;
	uint8_t buf[SFB_ZSTD_LINE];
};

struct sfb_zstd {
	uint64_t total_out; /* bytes given over all frames */
	uint64_t in_pos;    /* next input byte the frame parser reads */

	/* Everything below is the decoder's. */
	sfb_zstd_read_fn read;
	void *ctx;
	uint64_t in_size;
	uint8_t *hist;
	size_t hist_size;
	size_t wpos;        /* next write position in hist */
	uint64_t limit;
	int mode;
	int error;          /* sticky once < 0 */
	int frames;         /* Zstandard frames begun */
	/* The frame. */
	uint64_t window;    /* how far back a match may reach */
	uint64_t block_max;
	uint64_t fcs;       /* Frame_Content_Size, when has_fcs */
	uint64_t frame_out;
	bool has_fcs, has_checksum, last_block;
	/* The block. */
	uint64_t block_end, block_out;
	uint32_t left;      /* bytes left of a raw or RLE block */
	uint8_t rle;
	/* Literals: where they come from, how many, how many taken. */
	int lit_type;
	uint32_t lit_total, lit_used;
	uint64_t lit_off;   /* raw literals' input offset */
	int nstreams, cur_stream;
	uint32_t stream_left;
	uint64_t stream_start[4], stream_end[4];
	uint32_t stream_count[4];
	struct sfb_zstd_bits lbits;
	/* Sequences. */
	uint32_t nseq;      /* left to decode */
	struct sfb_zstd_bits sbits;
	uint32_t ll_state, ml_state, of_state;
	uint32_t rep[3];
	uint32_t run_lit, run_match, run_off; /* the sequence being executed */
	bool tail;          /* the literals after the last sequence are being copied */
	/* Tables: literal lengths, offsets, match lengths; the Huffman code. */
	uint8_t fse_log[3];
	bool have_fse[3];
	uint8_t huf_bits;   /* 0: no tree yet */
	struct sfb_zstd_fse ll[512], of[256], ml[512];
	uint16_t huf[1u << 11]; /* symbol << 8 | length, by the next huf_bits bits */
	/* XXH64 of the frame's output. */
	uint64_t xxh_v[4], xxh_len;
	uint8_t xxh_buf[32];
	/* Input: the frame parser, the sequences' stream, the literals. */
	struct sfb_zstd_line line[3];
};

/* Start decoding IN_SIZE bytes of compressed data, read through READ
 * (with CTX), into the ring HIST of HIST_SIZE bytes (owned by the decoder
 * until it is done). */
SFB_ZSTD_HIDDEN void sfb_zstd_init(struct sfb_zstd *z, uint8_t *hist, size_t hist_size,
				   uint64_t in_size, sfb_zstd_read_fn read, void *ctx);

/* Output past LIMIT bytes fails with SFB_ZSTD_E_OUTPUT_LIMIT before the
 * first byte past it is given (for a compressed ELF section: ch_size). */
SFB_ZSTD_HIDDEN void sfb_zstd_set_limit(struct sfb_zstd *z, uint64_t limit);

/* Decode up to N bytes into OUT (NULL: count and discard them); *GOT gets
 * how many.  SFB_ZSTD_END when the input is all decoded (*GOT may then be
 * less than N), SFB_ZSTD_NEED_OUTPUT when N bytes are given and more
 * follow, or an error. */
SFB_ZSTD_HIDDEN int sfb_zstd_decode(struct sfb_zstd *z, uint8_t *out, size_t n, size_t *got);

/* The whole of IN (LEN bytes) into OUT (CAP bytes) through HIST; *OUT_LEN
 * the length decoded.  SFB_ZSTD_END, SFB_ZSTD_NEED_OUTPUT when CAP is too
 * small, or an error. */
SFB_ZSTD_HIDDEN int sfb_zstd_buffer(struct sfb_zstd *z, const uint8_t *in, size_t len,
				    uint8_t *out, size_t cap, size_t *out_len, uint8_t *hist,
				    size_t hist_size);

/* "end", "need-output", "truncated", ..., "unknown" for other values. */
SFB_ZSTD_HIDDEN const char *sfb_zstd_result_name(int result);

/* XXH64 of P (N bytes) with SEED. */
SFB_ZSTD_HIDDEN uint64_t sfb_xxh64(const void *p, size_t n, uint64_t seed);

#endif
