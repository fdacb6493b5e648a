/* The symbolizer's parts (docs/DESIGN.md, "Symbols"), behind one chain in
 * symbolize.c:
 *   pick.c      which symbol names a target: the rules every table obeys;
 *   loaded.c    the objects in memory: segments, .dynsym, build-id;
 *   elf_file.c  ELF files on disk and detached debug files: section
 *               headers, .symtab, the build-id debug directory;
 *   debuglink.c debug files named by an object's .gnu_debuglink;
 *   perf_map.c  JIT code, named by /tmp/perf-PID.map.
 * All of it is async-signal-safe: no malloc, no stdio, no lock; files are
 * read with open/pread into the caller's scratch; every offset and size
 * read from a file or from memory is checked before use. */
#ifndef SFB_SYMTAB_H
#define SFB_SYMTAB_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symbolize.h"

#define SFB_HIDDEN __attribute__((visibility("hidden")))

#define SFB_MAX_SEGS 16
#define SFB_MAX_SYMS (1u << 22)  /* symbols scanned per table (~100 MB .symtab) */
#define SFB_MAX_BUILD_ID 64

struct sfb_seg {
	uint64_t lo, hi; /* link-time addresses */
	uint32_t flags;  /* PF_R, PF_X */
};

/* One loaded object, as discovery and its program headers describe it. */
struct sfb_obj {
	uintptr_t bias, start, end;
	const Elf64_Dyn *dyn;
	const char *name;             /* l_name: "" for the main program */
	const unsigned char *ehdr;    /* ELF header in memory, or NULL */
	struct sfb_seg seg[SFB_MAX_SEGS];
	int nseg;
};

/* Where a symbol table's names are: in memory or in the open file. */
struct sfb_strtab {
	const char *mem;
	int fd;
	uint64_t off, size;
};

/* The best symbol for one target offset.  floor is the highest start of
 * any code symbol at or below the target: a symbol without a size claims
 * addresses only up to the next symbol, so it names the target only if
 * it starts at floor. */
struct sfb_best {
	int found, contains, bind, rank; /* rank < 0: not computed yet */
	uint64_t value, floor;
	uint32_t name;
	struct sfb_strtab tab;
};

/* Every symbol goes to the lookup of each target: a return address has
 * two (the call, pc - 1, and pc itself). */
struct sfb_targets {
	uint64_t at[2];
	struct sfb_best best[2];
	int n;
};

/* pick.c */
SFB_HIDDEN int sfb_in_text(const struct sfb_obj *o, uint64_t v);
SFB_HIDDEN void sfb_consider_all(struct sfb_targets *ts, const struct sfb_obj *o,
				 const Elf64_Sym *s, const struct sfb_strtab *t);
SFB_HIDDEN int sfb_names_target(const struct sfb_best *b);
SFB_HIDDEN size_t sfb_name_bytes(const struct sfb_strtab *t, uint32_t name, char *buf,
				 size_t n);

/* loaded.c */
SFB_HIDDEN int sfb_find_object(uintptr_t pc, struct sfb_obj *o);
SFB_HIDDEN void sfb_load_segments(struct sfb_obj *o);
SFB_HIDDEN void sfb_scan_dynsym(const struct sfb_obj *o, struct sfb_targets *ts);
SFB_HIDDEN uint32_t sfb_loaded_build_id_copy(const struct sfb_obj *o,
					     uint8_t id[SFB_MAX_BUILD_ID]);

/* elf_file.c */
SFB_HIDDEN int sfb_read_ehdr(int fd, Elf64_Ehdr *eh, uint64_t *shnum);
SFB_HIDDEN uint64_t sfb_find_section(int fd, const Elf64_Ehdr *eh, uint64_t shnum,
				     uint64_t from, uint32_t type, Elf64_Shdr *sh,
				     char *work, size_t wsize);
SFB_HIDDEN int sfb_scan_symtab(const struct sfb_obj *o, int fd, const Elf64_Ehdr *eh,
			       uint64_t shnum, struct sfb_targets *ts, char *work,
			       size_t wsize);
SFB_HIDDEN int sfb_open_object(const struct sfb_obj *o);
SFB_HIDDEN int sfb_has_build_id(int fd, const Elf64_Ehdr *eh, uint64_t shnum,
				const uint8_t *id, uint32_t len, char *work, size_t wsize);
/* The debug directory: $SFRAME_BT_DEBUG_DIR, else /usr/lib/debug. */
SFB_HIDDEN const char *sfb_debug_dir(void);
/* DIR/.build-id/xx/yyyy.debug for build-id ID, open, or -1. */
SFB_HIDDEN int sfb_open_debug_file(const uint8_t *id, uint32_t len);

/* debuglink.c */
/* Object O's detached debug file, open, with its header in *eh and
 * *shnum: by build-id, else through the .gnu_debuglink of O's file OFD
 * (-1: none, or not the loaded one; OEH, OSHNUM: its header); -1 if none
 * is found. */
SFB_HIDDEN int sfb_open_debug(const struct sfb_obj *o, int ofd, const Elf64_Ehdr *oeh,
			      uint64_t oshnum, Elf64_Ehdr *eh, uint64_t *shnum, char *work,
			      size_t wsize);
#define SFB_DEBUGLINK_NAME_MAX 255           /* bytes of a link's file name */
#define SFB_DEBUGLINK_MAX_BYTES (256u << 20) /* a candidate larger is not read */
/* The debug file OFD's .gnu_debuglink names, open, its CRC checked; -1 if
 * none.  OFD: O's file, the loaded one; EH, SHNUM: its header. */
SFB_HIDDEN int sfb_open_debuglink(const struct sfb_obj *o, int ofd, const Elf64_Ehdr *eh,
				  uint64_t shnum, char *work, size_t wsize);

/* perf_map.c */
SFB_HIDDEN int sfb_open_perf_map(char *path, size_t cap);
SFB_HIDDEN int sfb_perf_map_lookup(int fd, uint64_t pc, char *name, size_t name_cap,
				   uint64_t *start, char *work, size_t wsize);

#endif
