/* Which symbol names a target (docs/DESIGN.md, "Symbols"): the rules every
 * symbol table obeys, whether it is read from memory (.dynsym) or from a
 * file (.symtab).  A symbol's size bounds it; one without a size ends
 * where the next symbol starts; among aliases the public spelling wins. */
#include <elf.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symtab.h"

int sfb_in_text(const struct sfb_obj *o, uint64_t v)
{
	for (int i = 0; i < o->nseg; i++)
		if ((o->seg[i].flags & PF_X) && v >= o->seg[i].lo &&
		    v < o->seg[i].hi)
			return 1;
	return 0;
}

/* Reads up to n bytes of name `name`; returns how many. */
size_t sfb_name_bytes(const struct sfb_strtab *t, uint32_t name, char *buf, size_t n)
{
	if (name >= t->size)
		return 0;
	if (n > t->size - name)
		n = t->size - name;
	if (t->mem) {
		memcpy(buf, t->mem + name, n);
		return n;
	}
	ssize_t r = pread(t->fd, buf, n, (off_t)(t->off + name));
	return r > 0 ? (size_t)r : 0;
}

/* Among aliases at one address prefer the public spelling: global over
 * local, then fewer leading underscores (getpid over __getpid). */
static int rank(const struct sfb_strtab *t, uint32_t name, int bind)
{
	char p[3];
	size_t n = sfb_name_bytes(t, name, p, sizeof p), u = 0;
	while (u < n && p[u] == '_')
		u++;
	return (bind != STB_LOCAL) * 4 + 3 - (int)u;
}

static int is_code(const struct sfb_obj *o, const Elf64_Sym *s)
{
	int type = ELF64_ST_TYPE(s->st_info);
	if (s->st_shndx == SHN_UNDEF || s->st_name == 0)
		return 0;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return 1;
	/* Untyped symbols are mostly data, labels and (on AArch64) local
	 * "$x" mapping symbols: keep only global ones in code. */
	return type == STT_NOTYPE && ELF64_ST_BIND(s->st_info) != STB_LOCAL &&
	       s->st_shndx != SHN_ABS && sfb_in_text(o, s->st_value);
}

/* Best: one whose [value, value+size) holds the target, else one
 * without a size starting at the floor; aliases are ordered by rank().  A
 * symbol's size bounds it, and one without a size ends where the next
 * symbol starts: an address past a function's end (after a call to a
 * noreturn function, or in the padding) that no symbol covers gets no
 * name, as "??" plus the object offset serves better than a wrong one. */
static void consider(struct sfb_best *b, const struct sfb_obj *o, const Elf64_Sym *s,
		     const struct sfb_strtab *t, uint64_t target)
{
	if (s->st_value > target || !is_code(o, s))
		return;
	if (s->st_value > b->floor)
		b->floor = s->st_value;
	int contains = target - s->st_value < s->st_size;
	if (!contains && s->st_size)
		return;
	int bind = ELF64_ST_BIND(s->st_info), r = -1;
	if (b->found) {
		if (contains != b->contains) {
			if (!contains)
				return;
		} else if (s->st_value != b->value) {
			if (s->st_value < b->value)
				return;
		} else {
			if (b->rank < 0)
				b->rank = rank(&b->tab, b->name, b->bind);
			r = rank(t, s->st_name, bind);
			if (r <= b->rank)
				return;
		}
	}
	*b = (struct sfb_best){ 1, contains, bind, r, s->st_value, b->floor, s->st_name, *t };
}

/* Does b name its target: a sized symbol holding it, or one without a
 * size that no other symbol follows below the target? */
int sfb_names_target(const struct sfb_best *b)
{
	return b->found && (b->contains || b->value == b->floor);
}

void sfb_consider_all(struct sfb_targets *ts, const struct sfb_obj *o, const Elf64_Sym *s,
		      const struct sfb_strtab *t)
{
	for (int i = 0; i < ts->n; i++)
		consider(&ts->best[i], o, s, t, ts->at[i]);
}
