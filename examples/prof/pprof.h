/* pprof.h: write a profile in pprof's format (profile.proto, gzipped), for
 * examples/profiler.c.  The protobuf encoding is written here (varints,
 * length-delimited fields, a string table whose entry 0 is ""), the gzip
 * by src/base/deflate.c: no protobuf or compression library.
 *
 * Normal context only: it allocates, opens files and reads the loaded
 * objects' program headers (dl_iterate_phdr) for the mappings. */
#ifndef SFRAME_PPROF_H
#define SFRAME_PPROF_H

#include <stddef.h>
#include <stdint.h>

/* A function at a frame's PC and the PC's source position in it. */
struct pprof_line {
	const char *name;    /* demangled */
	const char *mangled; /* the symbol; NULL: as name */
	const char *file;    /* "" or NULL: unknown */
	unsigned line, column; /* 0: unknown */
};

/* One frame's names: the demangled name pprof shows, and the symbol as
 * the object has it (equal for C, or when demangling fails); and where
 * the source position is known, the functions inlined at pc, innermost
 * first, then the function itself (the one name names). */
struct pprof_frame {
	uintptr_t pc;        /* 0: a pseudo-frame with no address */
	const char *name;
	const char *mangled;
	const struct pprof_line *lines; /* nlines 0: name alone, no line */
	uint32_t nlines;
	uint8_t lines_read; /* the line tables were asked about pc (nlines 0
			       then: they know nothing of it) */
};

/* One distinct stack of one thread and its sample count. */
struct pprof_sample {
	const struct pprof_frame *const *frames; /* leaf first */
	uint32_t depth;
	uint64_t count;
	int tid;
	const char *thread; /* the thread's comm name */
};

struct pprof_profile {
	const char *sample_type; /* "cpu" or "wall" (in nanoseconds) */
	int64_t period_ns;       /* one sample stands for this much */
	int64_t time_ns;         /* start, since the epoch */
	int64_t duration_ns;
	const struct pprof_sample *samples;
	size_t nsamples;
};

/* Write the profile to path as a gzipped profile.proto.  0 or -1. */
int pprof_write(const char *path, const struct pprof_profile *p);

#endif
