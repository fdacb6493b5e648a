/* A streaming DEFLATE decoder (RFC 1951) with the zlib (RFC 1950) and gzip
 * (RFC 1952) wrappers, safe in a signal handler: it allocates nothing,
 * takes no lock, makes no system call and keeps all its state in a struct
 * and a 32 KiB window that the caller provides.
 *
 * Input is given in chunks of any size and output taken in chunks of any
 * size, so a reader can decompress a large section through a small buffer,
 * stop as soon as it has what it needs, or skip to an offset by asking for
 * output into NULL (decoded, then discarded).  Work is bounded per byte of
 * input and of output; every malformed stream ends in a named error, after
 * which the decoder stays in that error.
 *
 * Use:
 *
 *     struct sfb_inflate z;
 *     sfb_inflate_init(&z, SFB_INFLATE_ZLIB, window);   // window: 32 KiB
 *     z.next_in = buf; z.avail_in = n;                   // refill when 0
 *     z.next_out = out; z.avail_out = m;                 // or next_out NULL: skip m bytes
 *     int rc = sfb_inflate(&z, no_more_input);
 *     // rc: SFB_INFLATE_END, _NEED_INPUT, _NEED_OUTPUT, or < 0: an error
 */
#ifndef SFB_INFLATE_H
#define SFB_INFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The window the caller provides: the most distant DEFLATE reference. */
#define SFB_INFLATE_WINDOW 32768u

enum sfb_inflate_format {
	SFB_INFLATE_RAW,  /* bare DEFLATE blocks */
	SFB_INFLATE_ZLIB, /* RFC 1950: 2-byte header, adler-32 trailer */
	SFB_INFLATE_GZIP, /* RFC 1952: one member; CRC-32 and size trailer */
};

/* Results of sfb_inflate(): >= 0 a state, < 0 an error. */
enum sfb_inflate_result {
	SFB_INFLATE_END = 0,         /* stream complete, trailer checked, all output given */
	SFB_INFLATE_NEED_INPUT = 1,  /* every input byte taken; give more */
	SFB_INFLATE_NEED_OUTPUT = 2, /* output space full; give more */

	SFB_INFLATE_E_TRUNCATED = -1,        /* input ended (no_more_input) inside the stream */
	SFB_INFLATE_E_HEADER_CHECK = -2,     /* zlib header's FCHECK wrong */
	SFB_INFLATE_E_METHOD = -3,           /* compression method not 8 (deflate) */
	SFB_INFLATE_E_WINDOW_SIZE = -4,      /* zlib CINFO above 7 (32 KiB) */
	SFB_INFLATE_E_DICTIONARY = -5,       /* zlib preset dictionary: not supported */
	SFB_INFLATE_E_GZIP_MAGIC = -6,       /* not 1f 8b */
	SFB_INFLATE_E_GZIP_FLAGS = -7,       /* reserved gzip flag bits set */
	SFB_INFLATE_E_GZIP_HEADER_CRC = -8,  /* FHCRC does not match the header */
	SFB_INFLATE_E_BLOCK_TYPE = -9,       /* block type 3 */
	SFB_INFLATE_E_STORED_LENGTH = -10,   /* stored block's LEN != ~NLEN */
	SFB_INFLATE_E_TOO_MANY_CODES = -11,  /* HLIT > 286 or HDIST > 30 */
	SFB_INFLATE_E_OVERSUBSCRIBED = -12,  /* code lengths describe too many codes */
	SFB_INFLATE_E_INCOMPLETE = -13,      /* code lengths leave codes unused (not one 1-bit code) */
	SFB_INFLATE_E_REPEAT_NO_FIRST = -14, /* code length 16 with no length before it */
	SFB_INFLATE_E_REPEAT_OVERRUN = -15,  /* a repeat runs past HLIT + HDIST lengths */
	SFB_INFLATE_E_NO_END_CODE = -16,     /* literal/length code without end-of-block */
	SFB_INFLATE_E_BAD_CODE = -17,        /* bits that are no code of an incomplete code */
	SFB_INFLATE_E_BAD_LITLEN = -18,      /* literal/length symbol 286 or 287 */
	SFB_INFLATE_E_BAD_DISTANCE = -19,    /* distance symbol 30 or 31, or none defined */
	SFB_INFLATE_E_DISTANCE_TOO_FAR = -20,/* distance before the start of the output */
	SFB_INFLATE_E_CHECKSUM = -21,        /* adler-32 or CRC-32 differs from the data */
	SFB_INFLATE_E_GZIP_SIZE = -22,       /* gzip ISIZE differs from the length mod 2^32 */
	SFB_INFLATE_E_OUTPUT_LIMIT = -23,    /* more output than sfb_inflate_set_limit() allows */
	SFB_INFLATE_E_ARGUMENT = -24,        /* a NULL pointer with a nonzero count, or no window */
};
#define SFB_INFLATE_E_LAST SFB_INFLATE_E_ARGUMENT

/* One Huffman code: canonical tables for the slow path and a first-level
 * lookup table of 2^root entries, each (length << 9 | symbol), 0 for a
 * code longer than root bits or none. */
#define SFB_INFLATE_LIT_ROOT 10
#define SFB_INFLATE_DIST_ROOT 8
struct sfb_inflate_lit_code {
	uint16_t count[16];
	uint16_t sym[288];
	uint16_t fast[1u << SFB_INFLATE_LIT_ROOT];
};
struct sfb_inflate_dist_code {
	uint16_t count[16];
	uint16_t sym[32];
	uint16_t fast[1u << SFB_INFLATE_DIST_ROOT];
};

struct sfb_inflate {
	/* The caller's buffers: advanced by sfb_inflate(). */
	const uint8_t *next_in;
	size_t avail_in;
	uint8_t *next_out; /* NULL: output is counted and discarded */
	size_t avail_out;
	/* Bytes taken and given over the whole stream.  At SFB_INFLATE_END
	 * total_in is the stream's exact size, and next_in points just past
	 * it when the stream ended in the input of that call. */
	uint64_t total_in, total_out;

	/* Everything below is the decoder's. */
	uint8_t *window;   /* SFB_INFLATE_WINDOW bytes, circular */
	uint32_t wpos;     /* next write position, mod window size */
	uint32_t pending;  /* decoded bytes not yet given out */
	uint64_t produced; /* bytes decoded so far */
	uint64_t limit;    /* most bytes the stream may produce */
	uint64_t bits;     /* bit buffer, LSB first */
	unsigned nbits;
	int format;
	int mode;
	int error;  /* sticky once < 0 */
	bool last;  /* the current block is the final one */
	bool fixed; /* the tables hold the fixed code */
	uint32_t check;    /* adler-32 or CRC-32 of the output so far */
	uint32_t count;    /* per mode: bytes left of a stored block, lengths read, ... */
	uint32_t match_len, match_dist; /* a copy not yet finished */
	uint16_t nlen, ndist, ncode;    /* dynamic block header counts */
	uint8_t gz_flags;
	uint8_t gz_xlen_low; /* FEXTRA's XLEN, first byte, until the second comes */
	uint32_t gz_hcrc; /* CRC-32 of the gzip header so far */
	uint8_t lens[320];              /* code lengths of a dynamic block */
	struct sfb_inflate_lit_code lit;
	struct sfb_inflate_dist_code dist;
};

/* Start a stream of FORMAT, decoding through WINDOW
 * (SFB_INFLATE_WINDOW bytes, owned by the decoder until the stream ends). */
void sfb_inflate_init(struct sfb_inflate *z, enum sfb_inflate_format format, uint8_t *window);

/* A stream whose output would exceed LIMIT bytes fails with
 * SFB_INFLATE_E_OUTPUT_LIMIT as soon as the first byte past it is
 * decoded (for a compressed ELF section: ch_size). */
void sfb_inflate_set_limit(struct sfb_inflate *z, uint64_t limit);

/* Decode from next_in/avail_in to next_out/avail_out until the stream
 * ends, all input is taken, or the output is full.  NO_MORE_INPUT says
 * that the input given is the last: running out inside the stream is
 * then SFB_INFLATE_E_TRUNCATED rather than SFB_INFLATE_NEED_INPUT. */
int sfb_inflate(struct sfb_inflate *z, bool no_more_input);

/* The whole stream IN at once into OUT (CAP bytes); *OUT_LEN gets the
 * length decoded.  SFB_INFLATE_END, SFB_INFLATE_NEED_OUTPUT if CAP is
 * too small, or an error. */
int sfb_inflate_buffer(enum sfb_inflate_format format, const uint8_t *in, size_t in_len,
		       uint8_t *out, size_t cap, size_t *out_len, uint8_t *window,
		       struct sfb_inflate *z);

/* "end", "need-input", ..., "checksum", ...; "unknown" for other values. */
const char *sfb_inflate_result_name(int result);

/* Checksums of the wrappers, for callers that write them too. */
uint32_t sfb_adler32(uint32_t adler, const uint8_t *p, size_t n); /* start: 1 */
uint32_t sfb_crc32(uint32_t crc, const uint8_t *p, size_t n);     /* start: 0 */

/* The LEN low bits of CODE in reverse order: DEFLATE packs a Huffman code
 * most significant bit first into a stream read least significant bit
 * first, so the inflater's tables and the deflater's codes are kept
 * reversed. */
static inline unsigned sfb_reverse_bits(unsigned code, unsigned len)
{
	unsigned r = 0;
	while (len--) {
		r = r << 1 | (code & 1);
		code >>= 1;
	}
	return r;
}

/* ELF compressed-section header (SHF_COMPRESSED): Elf64_Chdr or
 * Elf32_Chdr, in the byte order of the reading machine. */
#define SFB_ELFCOMPRESS_ZLIB 1
#define SFB_ELFCOMPRESS_ZSTD 2
struct sfb_chdr {
	uint32_t type; /* SFB_ELFCOMPRESS_* */
	uint64_t size; /* uncompressed size */
	uint64_t addralign;
	size_t header_size; /* compressed data starts this far into the section */
};
/* Read the header at the start of a section of LEN bytes, of an ELFCLASS64
 * object if IS64.  0, or SFB_INFLATE_E_TRUNCATED when LEN is too short. */
int sfb_chdr_read(const uint8_t *p, size_t len, bool is64, struct sfb_chdr *out);

#endif
