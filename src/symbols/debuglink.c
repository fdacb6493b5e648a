/* Detached debug files named by the object's .gnu_debuglink section: a
 * file name and the CRC-32 of the debug file's whole contents.  The
 * candidates are GDB's, in GDB's order, for an object whose file is
 * /path/to/obj (its canonical name, from /proc/self/fd):
 *   /path/to/NAME, /path/to/.debug/NAME, DIR/path/to/NAME
 * (DIR: the debug directory of the build-id lookup, elf_file.c).  The
 * first regular file whose CRC matches is the debug file; the CRC is the
 * only proof, so a candidate is read whole: at most
 * SFB_DEBUGLINK_MAX_BYTES, a larger one is refused unread.  Files proved
 * once are remembered by a fingerprint (device, inode, size, times, CRC),
 * so a process reads each at most once while it stays unchanged.
 * Async-signal-safe: open/pread/fstat/readlink/close, the path in one
 * PATH_MAX buffer on the stack, the reads in the caller's work area. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/inflate.h" /* sfb_crc32 */
#include "base/textbuf.h"
#include "symbols/symtab.h"

/* The section: NAME (1 to SFB_DEBUGLINK_NAME_MAX bytes, no '/'), a NUL,
 * zero to three bytes of padding to a multiple of 4, the CRC (4 bytes,
 * the object's byte order: the host's, sfb_read_ehdr() takes no other). */
#define LINK_READ (((SFB_DEBUGLINK_NAME_MAX + 1 + 3) & ~3u) + 4)

/* ---- Files already proved ------------------------------------------------ */

#define PROVED_SLOTS 16
static _Atomic uint64_t proved[PROVED_SLOTS];
static _Atomic unsigned proved_next;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* A file's identity and its expected CRC in 64 bits (never 0: a free
 * slot).  Rewriting a file changes its ctime, which no caller can set
 * back. */
static uint64_t fingerprint(const struct stat *st, uint32_t crc)
{
	uint64_t h = mix(0, (uint64_t)st->st_dev);
	h = mix(h, (uint64_t)st->st_ino);
	h = mix(h, (uint64_t)st->st_size);
	h = mix(h, (uint64_t)st->st_mtim.tv_sec);
	h = mix(h, (uint64_t)st->st_mtim.tv_nsec);
	h = mix(h, (uint64_t)st->st_ctim.tv_sec);
	h = mix(h, (uint64_t)st->st_ctim.tv_nsec);
	h = mix(h, crc);
	return h ? h : 1;
}

/* Is FD a regular file of at most SFB_DEBUGLINK_MAX_BYTES whose CRC-32 is
 * WANT?  Read in pieces of WORK. */
static int crc_matches(int fd, uint32_t want, char *work, size_t wsize)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size > SFB_DEBUGLINK_MAX_BYTES || wsize == 0)
		return 0;
	uint64_t key = fingerprint(&st, want);
	for (int i = 0; i < PROVED_SLOTS; i++)
		if (atomic_load_explicit(&proved[i], memory_order_relaxed) == key)
			return 1;
	uint64_t size = (uint64_t)st.st_size, off = 0;
	uint32_t crc = 0;
	while (off < size) {
		size_t k = size - off < wsize ? (size_t)(size - off) : wsize;
		ssize_t got = pread(fd, work, k, (off_t)off);
		if (got <= 0)
			return 0; /* shorter than fstat said: changed meanwhile */
		crc = sfb_crc32(crc, (const uint8_t *)work, (size_t)got);
		off += (uint64_t)got;
	}
	if (crc != want)
		return 0;
	unsigned slot = atomic_fetch_add_explicit(&proved_next, 1, memory_order_relaxed);
	atomic_store_explicit(&proved[slot % PROVED_SLOTS], key, memory_order_relaxed);
	return 1;
}

/* ---- The section --------------------------------------------------------- */

/* The index of the section called NAME (of type PROGBITS), or 0. */
static uint64_t find_named(int fd, const Elf64_Ehdr *eh, uint64_t shnum, const char *name,
			   char *work, size_t wsize)
{
	Elf64_Shdr strs, sh;
	uint64_t stri = eh->e_shstrndx;
	size_t n = strlen(name) + 1;
	char got[32];
	if (n > sizeof got)
		return 0;
	if (stri == SHN_XINDEX) {
		if (pread(fd, &sh, sizeof sh, (off_t)eh->e_shoff) != (ssize_t)sizeof sh)
			return 0;
		stri = sh.sh_link;
	}
	if (stri == 0 || stri >= shnum ||
	    pread(fd, &strs, sizeof strs, (off_t)(eh->e_shoff + stri * sizeof strs)) !=
		    (ssize_t)sizeof strs ||
	    strs.sh_type != SHT_STRTAB || strs.sh_offset > INT64_MAX - strs.sh_size)
		return 0;
	for (uint64_t i = 1; (i = sfb_find_section(fd, eh, shnum, i, SHT_PROGBITS, &sh, work,
						   wsize)) != 0; i++) {
		if (sh.sh_name >= strs.sh_size || strs.sh_size - sh.sh_name < n)
			continue;
		if (pread(fd, got, n, (off_t)(strs.sh_offset + sh.sh_name)) == (ssize_t)n &&
		    memcmp(got, name, n) == 0)
			return i;
	}
	return 0;
}

/* The link's NAME into name[] (NUL-terminated) and its CRC: 1, or 0 when
 * the object has none or it is malformed (truncated, NAME empty, too
 * long, or holding a '/'). */
static int read_link(int fd, const Elf64_Ehdr *eh, uint64_t shnum,
		     char name[SFB_DEBUGLINK_NAME_MAX + 1], uint32_t *crc, char *work, size_t wsize)
{
	Elf64_Shdr sh;
	uint8_t buf[LINK_READ];
	uint64_t i = find_named(fd, eh, shnum, ".gnu_debuglink", work, wsize);
	if (!i || pread(fd, &sh, sizeof sh, (off_t)(eh->e_shoff + i * sizeof sh)) != (ssize_t)sizeof sh ||
	    sh.sh_offset > INT64_MAX)
		return 0;
	size_t want = sh.sh_size < sizeof buf ? (size_t)sh.sh_size : sizeof buf;
	ssize_t got = pread(fd, buf, want, (off_t)sh.sh_offset);
	if (got <= 0)
		return 0;
	/* Only the section's bytes that were read, and no further. */
	const struct sfb_bytes b = { buf, (size_t)got, false };
	uint64_t len = 0, c, v;
	while (sfb_get(&b, len, 1, &c) && c != 0) {
		if (c == '/' || len == SFB_DEBUGLINK_NAME_MAX)
			return 0;
		name[len++] = (char)c;
	}
	if (len == 0 || !sfb_in_bounds(&b, len, 1)) /* empty, or no NUL */
		return 0;
	name[len] = '\0';
	if (!sfb_get(&b, (len + 1 + 3) & ~(uint64_t)3, 4, &v))
		return 0;
	*crc = (uint32_t)v;
	return 1;
}

/* ---- The candidates ------------------------------------------------------ */

/* OFD's canonical path into path[] (PATH_MAX bytes), NUL-terminated: its
 * length, or 0.  Else FALLBACK when that is absolute. */
static size_t object_path(int ofd, const char *fallback, char *path)
{
	char proc[32];
	struct sfb_text t = { proc, 0, sizeof proc };
	sfb_put(&t, "/proc/self/fd/");
	sfb_put_dec(&t, ofd);
	proc[t.len] = '\0';
	ssize_t n = readlink(proc, path, PATH_MAX);
	if (n > 0 && n < PATH_MAX && path[0] == '/') {
		path[n] = '\0';
		return (size_t)n;
	}
	size_t f = fallback ? strlen(fallback) : 0;
	if (f == 0 || f >= PATH_MAX || fallback[0] != '/')
		return 0;
	memcpy(path, fallback, f + 1);
	return f;
}

/* path[at...] = S1 S2 NUL, if it fits in PATH_MAX. */
static int put_at(char *path, size_t at, const char *s1, const char *s2)
{
	size_t a = strlen(s1), b = strlen(s2);
	if (at >= PATH_MAX || a + b >= PATH_MAX - at)
		return 0;
	memcpy(path + at, s1, a);
	memcpy(path + at + a, s2, b + 1);
	return 1;
}

static int try_candidate(const char *path, uint32_t crc, char *work, size_t wsize)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (crc_matches(fd, crc, work, wsize))
		return fd;
	close(fd);
	return -1;
}

int sfb_open_debuglink(const struct sfb_obj *o, int ofd, const Elf64_Ehdr *eh, uint64_t shnum,
		       char *work, size_t wsize)
{
	char name[SFB_DEBUGLINK_NAME_MAX + 1];
	char path[PATH_MAX];
	uint32_t crc;
	if (ofd < 0 || !read_link(ofd, eh, shnum, name, &crc, work, wsize))
		return -1;
	size_t len = object_path(ofd, o->name, path);
	if (len == 0)
		return -1;
	size_t dir = len;
	while (dir > 0 && path[dir - 1] != '/')
		dir--;
	dir--; /* path[0, dir): the directory, "" for the root */
	int fd;
	if (put_at(path, dir, "/", name) && (fd = try_candidate(path, crc, work, wsize)) >= 0)
		return fd;
	if (put_at(path, dir, "/.debug/", name) &&
	    (fd = try_candidate(path, crc, work, wsize)) >= 0)
		return fd;
	/* DIR, then the object's directory, absolute: make room in front. */
	const char *top = sfb_debug_dir();
	size_t tl = strlen(top);
	if (tl >= PATH_MAX - dir)
		return -1;
	memmove(path + tl, path, dir);
	memcpy(path, top, tl);
	if (put_at(path, tl + dir, "/", name) && (fd = try_candidate(path, crc, work, wsize)) >= 0)
		return fd;
	return -1;
}

/* Build-id first: the file whose note proves it; else the link of the
 * object's own file, whose CRC proves it.  A link in a file found by
 * build-id is not followed. */
int sfb_open_debug(const struct sfb_obj *o, int ofd, const Elf64_Ehdr *oeh, uint64_t oshnum,
		   Elf64_Ehdr *eh, uint64_t *shnum, char *work, size_t wsize)
{
	uint8_t id[SFB_MAX_BUILD_ID];
	uint32_t idlen = sfb_loaded_build_id_copy(o, id);
	int fd;
	if (idlen && (fd = sfb_open_debug_file(id, idlen)) >= 0) {
		if (sfb_read_ehdr(fd, eh, shnum) &&
		    sfb_has_build_id(fd, eh, *shnum, id, idlen, work, wsize))
			return fd;
		close(fd);
	}
	if (ofd < 0 || (fd = sfb_open_debuglink(o, ofd, oeh, oshnum, work, wsize)) < 0)
		return -1;
	if (sfb_read_ehdr(fd, eh, shnum))
		return fd;
	close(fd);
	return -1;
}
