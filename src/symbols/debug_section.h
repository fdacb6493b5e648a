/* Reading an ELF file's debug sections through small windows, with pread,
 * in a signal handler: no allocation, no lock, no stdio.
 *
 * A section is a range of the file, compressed (SHF_COMPRESSED, an
 * Elf64_Chdr then a zlib stream or Zstandard frames) or not.  A view is
 * a window of the section's uncompressed bytes in a buffer the caller
 * gives (part of its scratch); a read names an offset in the section,
 * and the view loads the bytes there when its window does not hold them.
 * An uncompressed section loads with one pread.  A compressed one is
 * decompressed sequentially by one decoder (a stream) of its struct
 * sfb_dsecs: a load at or past the stream's position continues it
 * (discarding what lies before the offset); a load behind it, or of a
 * section that is not the stream's, starts that section's stream again
 * from its first byte.  Readers therefore read forward wherever they can; the counters
 * in struct sfb_dsecs say what a lookup cost.
 *
 * A zstd section's stream is base/zstd.h's decoder and a history ring
 * that must hold the frame's window.  objcopy writes one single-segment
 * frame for a section of up to its level's window (2 MiB), whose window
 * is the section's size.  The streams' SFB_DSEC_ZSTATE-byte slots, and
 * the rooms for their copies when they follow the slots in memory (as
 * the lines reader lays them out) and no section is zlib-compressed,
 * form a pool: a zstd stream takes as many adjacent slots as its window
 * needs (the decoder's struct, then the ring), evicting the least
 * recently used streams there, and copies are not taken.  One slot
 * holds a window of SFB_DSEC_ZSTD_HISTORY bytes, the whole pool
 * SFB_DSEC_ZSTATE times its slots less the struct; a frame whose window
 * is larger ends the lookup in SFB_DSEC_E_ZSTD_WINDOW.  The ring holds
 * the last bytes decoded, so a read behind the stream but within them is
 * served from it without a restart: a section that fits is decoded once
 * while its stream lasts, whatever order it is read in.
 *
 * Every read is checked against the section's size, and every number is
 * read from the window through sfb_get() (base/bytes.h), so corrupt
 * offsets give SFB_DSEC_E_TRUNCATED, never a read outside the buffers.
 * The work of a lookup is capped by SFB_DSEC_MAX_INFLATE bytes
 * decompressed and SFB_DSEC_MAX_LOADS window loads. */
#ifndef SFB_DEBUG_SECTION_H
#define SFB_DEBUG_SECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/inflate.h"
#include "base/zstd.h"

/* The sections the line and inline readers use. */
enum sfb_dsec_id {
	SFB_DSEC_INFO,
	SFB_DSEC_ABBREV,
	SFB_DSEC_LINE,
	SFB_DSEC_LINE_STR,
	SFB_DSEC_STR,
	SFB_DSEC_STR_OFFSETS,
	SFB_DSEC_ADDR,
	SFB_DSEC_RNGLISTS,
	SFB_DSEC_RANGES,
	SFB_DSEC_ARANGES,
	SFB_DSEC_COUNT
};

/* Where a section lies in its file.  size 0: the file has no such
 * section. */
struct sfb_elf_section {
	uint64_t offset;  /* sh_offset */
	uint64_t size;    /* sh_size: bytes in the file */
	bool compressed;  /* SHF_COMPRESSED */
};

struct sfb_elf_sections {
	struct sfb_elf_section sec[SFB_DSEC_COUNT];
};

/* Errors of the readers; 0 is success.  Negative, so that a lookup's
 * result is one int; sfb_dsec_err_name() names each. */
enum sfb_dsec_err {
	SFB_DSEC_OK = 0,
	SFB_DSEC_E_IO = -1,            /* pread failed or the file is shorter than its headers say */
	SFB_DSEC_E_TRUNCATED = -2,     /* a read past the end of a section */
	SFB_DSEC_E_LEB = -3,           /* a LEB128 number longer than 10 bytes */
	SFB_DSEC_E_STRING = -4,        /* a string longer than SFB_DSEC_MAX_STRING */
	SFB_DSEC_E_CHDR = -5,          /* a compression header that is short or of an unknown type */
	SFB_DSEC_E_INFLATE = -6,       /* a compressed section's stream is corrupt */
	SFB_DSEC_E_BUDGET_INFLATE = -7,/* more than SFB_DSEC_MAX_INFLATE bytes decompressed */
	SFB_DSEC_E_BUDGET_LOADS = -8,  /* more than SFB_DSEC_MAX_LOADS window loads */
	SFB_DSEC_E_ELF = -9,           /* not a readable ELFCLASS64 file of this byte order */
	SFB_DSEC_E_NO_SECTION = -10,   /* a section the lookup needs is absent */
	SFB_DSEC_E_SCRATCH = -11,      /* scratch smaller than the readers need */
	SFB_DSEC_E_ZSTD = -12,         /* a zstd-compressed section's frames are corrupt */
	SFB_DSEC_E_ZSTD_WINDOW = -13,  /* a zstd frame's window exceeds SFB_DSEC_ZSTD_HISTORY */
	SFB_DSEC_E_LAST_ = -13
};

#define SFB_DSEC_MAX_STRING 4096u            /* bytes of one string, its NUL included */
#ifndef SFB_DSEC_MAX_INFLATE
#define SFB_DSEC_MAX_INFLATE (1ull << 30)    /* bytes decompressed in one lookup */
#endif
#define SFB_DSEC_MAX_LOADS (1u << 20)        /* window loads in one lookup */
#define SFB_DSEC_MAX_SECTIONS 65536u         /* section headers scanned by sfb_dsec_find() */
#define SFB_DSEC_INPUT 1024u                 /* compressed bytes read at a time */
#define SFB_DSEC_MIN_WINDOW 16u              /* the least a view may hold: a LEB128, an address */

/* A decompression stream: the inflater, its window and input, or the
 * zstd decoder and its history, on the section it decodes. */
struct sfb_dstream {
	struct sfb_dsecs *d;
	struct sfb_inflate *z;
	uint8_t *zwindow;               /* SFB_INFLATE_WINDOW bytes */
	uint8_t *zin;                   /* SFB_DSEC_INPUT bytes */
	struct sfb_zstd *zd;            /* the same bytes, for a zstd section */
	uint8_t *zhist;                 /* its ring: zhist_size bytes */
	size_t zhist_size;
	int slot, span;                 /* the slots it takes, from slot */
	int owner;                      /* section whose stream z holds, -1 none */
	uint64_t in_off;                /* compressed bytes read of that stream */
	uint64_t out;                   /* uncompressed bytes produced by that stream */
	uint32_t used;                  /* when last used: the least recent is reused */
	/* A copy of the stream (SFB_DSEC_ZSTATE bytes, or NULL: none) taken
	 * where a read last skipped far forward, the start of what a reader
	 * reads next (a unit, an abbreviation table, a line table): a read
	 * behind the stream but not behind the copy resumes from it rather
	 * than from the section's start. */
	uint8_t *cp;
	bool cp_valid;
	uint64_t cp_in_off, cp_out;
};

#define SFB_DSEC_CHECKPOINT_SKIP 4096u /* a skip at least this long takes a copy */

/* Streams a lookup may have: one for each compressed section it reads
 * (units, abbreviations, lines, strings, line strings, ranges, addresses,
 * string offsets), so that a reader that keeps its state from one lookup
 * to the next (srcpos.h's cache) restarts none when it goes on forward
 * (docs/SPEED.md, "A symbolizer"). */
#define SFB_DSEC_MAX_STREAMS 8
#define SFB_DSEC_HELD_STREAMS 4 /* records struct sfb_dsecs holds: the rest, its caller's */

/* The shared state of one lookup: the file, its sections, the
 * inflaters (none when no section is compressed; with fewer than the
 * sections read, the least recently used one is restarted on the
 * section a read needs) and what the lookup cost. */
struct sfb_dsecs {
	int fd;
	struct sfb_elf_section sec[SFB_DSEC_COUNT];
	uint64_t size[SFB_DSEC_COUNT];  /* uncompressed sizes (ch_size) */
	uint64_t data[SFB_DSEC_COUNT];  /* file offset of the (compressed) data */
	bool zstd[SFB_DSEC_COUNT];      /* ELFCOMPRESS_ZSTD rather than zlib */
	uint64_t zwin[SFB_DSEC_COUNT];  /* a zstd section's first frame's window, 0 unknown */
	struct sfb_dstream *zs;         /* nz streams: held, or the caller's */
	struct sfb_dstream held[SFB_DSEC_HELD_STREAMS];
	int nz;
	uint8_t *zbase;                 /* the streams' slots */
	int nslots;                     /* slots zstd streams share, 0 until the first */
	uint32_t ztick;
	/* Costs: counted, and capped by the SFB_DSEC_MAX_* budgets. */
	uint64_t inflated;
	uint32_t loads, restarts, preads;
};

/* A window on one section. */
struct sfb_dview {
	struct sfb_dsecs *d;
	int id;           /* enum sfb_dsec_id */
	uint8_t *buf;
	size_t cap;
	uint64_t base;    /* section offset of buf[0] */
	size_t len;       /* bytes of buf that hold the section */
};

/* The debug sections of the ELF file open on FD, found by name through
 * its section headers (read with pread into SCRATCH, at least
 * SFB_DSEC_FIND_SCRATCH bytes).  0, or an error. */
#define SFB_DSEC_FIND_SCRATCH 4096u
int sfb_dsec_find(int fd, struct sfb_elf_sections *out, void *scratch, size_t size);

/* Start a lookup on FD's sections SECS: reads each compressed section's
 * header.  ZSTATE is NZ inflaters' state, window and input, one after
 * the other (each SFB_DSEC_ZSTATE bytes, suitably aligned for struct
 * sfb_inflate; NZ at most SFB_DSEC_MAX_STREAMS), or NULL when no section
 * is compressed (sfb_dsec_any_compressed()).  STREAMS: room for the NZ
 * streams' records where NZ > SFB_DSEC_HELD_STREAMS (D holds fewer),
 * else NULL. */
#define SFB_DSEC_ZSTATE ((sizeof(struct sfb_inflate) + SFB_INFLATE_WINDOW + SFB_DSEC_INPUT + 15) & ~(size_t)15)
#define SFB_DSEC_ZSTD_STRUCT ((sizeof(struct sfb_zstd) + 15) & ~(size_t)15)
#define SFB_DSEC_ZSTD_HISTORY (SFB_DSEC_ZSTATE - SFB_DSEC_ZSTD_STRUCT) /* one slot: 26288 bytes on x86-64 */
bool sfb_dsec_any_compressed(const struct sfb_elf_sections *secs);
int sfb_dsec_open(struct sfb_dsecs *d, int fd, const struct sfb_elf_sections *secs, void *zstate,
		  struct sfb_dstream *streams, int nz);
/* Give stream I the room for its copy (SFB_DSEC_ZSTATE bytes, aligned as
 * ZSTATE is), after sfb_dsec_open(). */
void sfb_dsec_checkpoint_room(struct sfb_dsecs *d, int i, void *room);

/* A view of section ID in BUF (CAP bytes, at least SFB_DSEC_MIN_WINDOW). */
void sfb_dview_init(struct sfb_dview *v, struct sfb_dsecs *d, int id, uint8_t *buf, size_t cap);

static inline uint64_t sfb_dview_size(const struct sfb_dview *v)
{
	return v->d->size[v->id];
}

/* Make [off, off + n) (n at most the view's cap; cut at the section's
 * end) readable in the window.  0, or an error. */
int sfb_dview_need(struct sfb_dview *v, uint64_t off, size_t n);

/* Readers: each reads at *off and advances it past what it read. */
int sfb_dview_u(struct sfb_dview *v, uint64_t *off, unsigned width, uint64_t *out);
int sfb_dview_uleb(struct sfb_dview *v, uint64_t *off, uint64_t *out);
int sfb_dview_sleb(struct sfb_dview *v, uint64_t *off, int64_t *out);
/* A NUL-terminated string: its first cap - 1 bytes copied to DST (NUL
 * terminated; DST NULL: skipped), *off past its NUL. */
int sfb_dview_str(struct sfb_dview *v, uint64_t *off, char *dst, size_t cap);
/* Skip n bytes (checked against the section's size only). */
int sfb_dview_skip(struct sfb_dview *v, uint64_t *off, uint64_t n);

/* "ok", "io", "truncated", ... */
const char *sfb_dsec_err_name(int err);

#endif
