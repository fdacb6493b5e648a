/* A small gzip (RFC 1952) compressor for files the library writes, such
 * as profiles: DEFLATE (RFC 1951) stored or fixed-Huffman blocks, whichever
 * is smaller for each block, over a greedy LZ77 with hash chains.  Normal
 * context only (it calls the caller's sink), but it allocates nothing: all
 * its state is the caller's struct (about 400 KiB).
 *
 *     static struct sfb_deflate d;
 *     sfb_deflate_init(&d, SFB_DEFLATE_FAST, write_to_fd, &fd);
 *     sfb_deflate_write(&d, buf, n);    // any number of times
 *     sfb_deflate_finish(&d);           // final block and gzip trailer
 *
 * Output reaches the sink in pieces of up to SFB_DEFLATE_OUT_BUF bytes;
 * a sink's nonzero result stops the stream and is returned from then on. */
#ifndef SFB_DEFLATE_H
#define SFB_DEFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SFB_DEFLATE_WINDOW 32768u  /* farthest match */
#define SFB_DEFLATE_HASH_BITS 15
#define SFB_DEFLATE_BLOCK 16384u   /* most input bytes per block */
#define SFB_DEFLATE_OUT_BUF 4096u

enum sfb_deflate_level {
	SFB_DEFLATE_STORE = 0, /* stored blocks only */
	SFB_DEFLATE_FAST = 1,  /* LZ77 and the fixed Huffman code */
};

/* Take N bytes of output; nonzero stops the stream. */
typedef int (*sfb_deflate_sink)(void *ctx, const uint8_t *p, size_t n);

/* Errors besides a sink's own nonzero result. */
#define SFB_DEFLATE_E_FINISHED (-1000) /* write or finish after finish */
#define SFB_DEFLATE_E_ARGUMENT (-1001) /* bad level, no sink, NULL data */

struct sfb_deflate {
	sfb_deflate_sink sink;
	void *ctx;
	int level;
	int error; /* sticky once nonzero */
	bool finished;
	uint32_t crc, isize; /* of the input so far (isize mod 2^32) */

	uint64_t bits; /* output bit buffer, LSB first */
	unsigned nbits;
	uint32_t outn;
	uint8_t out[SFB_DEFLATE_OUT_BUF];

	/* Input: buf[0, fill) holds stream positions base.., encoded up to
	 * pos; the block being gathered began at block_start. */
	uint32_t base, fill, pos, block_start;
	uint32_t nsyms;
	uint64_t block_bits; /* the block's size in the fixed code */
	uint16_t sym_len[SFB_DEFLATE_BLOCK];  /* literal byte, or match length */
	uint16_t sym_dist[SFB_DEFLATE_BLOCK]; /* 0 for a literal */
	uint32_t head[1u << SFB_DEFLATE_HASH_BITS]; /* newest position per hash */
	uint32_t prev[SFB_DEFLATE_WINDOW];          /* older position, same hash */
	uint8_t buf[2 * SFB_DEFLATE_WINDOW];

	/* The fixed code, bit-reversed for LSB-first output. */
	uint16_t lit_code[288];
	uint8_t lit_bits[288];
	uint8_t dist_code[30];
	uint8_t len_sym[256]; /* length - 3 -> length symbol - 257 */
};

/* Start a gzip stream (its header goes out with the first output). */
int sfb_deflate_init(struct sfb_deflate *d, enum sfb_deflate_level level,
		     sfb_deflate_sink sink, void *ctx);
/* Compress N bytes of P.  0 or an error. */
int sfb_deflate_write(struct sfb_deflate *d, const void *p, size_t n);
/* The last block, the CRC-32 and size trailer, and all output to the sink. */
int sfb_deflate_finish(struct sfb_deflate *d);

#endif
