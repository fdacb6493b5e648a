/* The one accessor through which the decoder reads a .sframe section.
 *
 * Every read names an offset and a width; the read succeeds only when
 * [off, off + width) lies inside the section, and values are returned in
 * host order whatever the section's byte order.  No alignment is assumed:
 * FREs are packed.  Static inline so that the bounds check costs one
 * compare in the lookup path. */
#ifndef SFB_BYTES_H
#define SFB_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sfb_bytes {
	const uint8_t *p;
	size_t len;
	bool swap; /* section byte order differs from the host's */
};

static inline bool sfb_in_bounds(const struct sfb_bytes *b, uint64_t off,
				 unsigned width)
{
	return off <= b->len && width <= b->len - off;
}

static inline bool sfb_get(const struct sfb_bytes *b, uint64_t off,
			   unsigned width, uint64_t *out)
{
	if (!sfb_in_bounds(b, off, width))
		return false;
	const uint8_t *q = b->p + off;
	switch (width) {
	case 1:
		*out = q[0];
		return true;
	case 2: {
		uint16_t v;
		memcpy(&v, q, 2);
		*out = b->swap ? __builtin_bswap16(v) : v;
		return true;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, q, 4);
		*out = b->swap ? __builtin_bswap32(v) : v;
		return true;
	}
	case 8: {
		uint64_t v;
		memcpy(&v, q, 8);
		*out = b->swap ? __builtin_bswap64(v) : v;
		return true;
	}
	}
	return false;
}

/* Sign-extend the low width bytes of v. */
static inline int64_t sfb_sext(uint64_t v, unsigned width)
{
	unsigned shift = 64 - 8 * width;
	return (int64_t)(v << shift) >> shift;
}

#endif
