/* Rust names (demangle.h), as c++filt -i prints them.
 *
 * Legacy names are Itanium nested names whose last part is the hash
 * "17h<16 hex digits>E": the hash is dropped and the "$..$" escapes
 * decoded ("$LT$" is '<', "..", "::").  v0 names (_R...) are printed while
 * they are parsed, the way the Rust compiler's own demangler does it:
 * paths, generic arguments, types and constants, with back references
 * read again where they point, and Punycode identifiers decoded to
 * UTF-8.  Back references make a short name print a long text, so the
 * work is counted against the step budget as well as the output size. */
#include "demangle_int.h"

/* Code points of one Punycode identifier, at most. */
#define MAX_PUNYCODE 128

struct rd {
	const char *s;
	size_t len, next;
	int err;	/* malformed: not a Rust name */
	int over;	/* a budget or the output size was exceeded */
	int skipping;	/* parsing without printing */
	int legacy;
	uint64_t bound_lifetimes;
	char *out;
	size_t size, olen;
	unsigned depth, max_depth, steps;
};

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }

static int failed(const struct rd *d)
{
	return d->err || d->over;
}

static char peek(const struct rd *d)
{
	return d->next < d->len ? d->s[d->next] : 0;
}

static int eat(struct rd *d, char c)
{
	if (peek(d) != c)
		return 0;
	d->next++;
	return 1;
}

static char next(struct rd *d)
{
	char c = peek(d);
	if (!c)
		d->err = 1;
	else
		d->next++;
	return c;
}

static void put_n(struct rd *d, const char *s, size_t n)
{
	if (failed(d) || d->skipping)
		return;
	if (n >= d->size - d->olen) {
		d->over = 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		d->out[d->olen++] = s[i];
}

static void put(struct rd *d, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	put_n(d, s, n);
}

static void put_u64(struct rd *d, uint64_t v, unsigned base)
{
	char b[24];
	int i = sizeof b;
	do
		b[--i] = "0123456789abcdef"[v % base];
	while ((v /= base) != 0);
	put_n(d, b + i, sizeof b - (size_t)i);
}

/* Entering a recursive rule: the depth and step budgets. */
static int enter(struct rd *d)
{
	if (failed(d))
		return 0;
	if (d->depth >= SFB_DEMANGLE_MAX_PARSE_DEPTH || ++d->steps > SFB_DEMANGLE_MAX_STEPS) {
		d->over = 1;
		return 0;
	}
	if (++d->depth > d->max_depth)
		d->max_depth = d->depth;
	return 1;
}

/* ---- Identifiers ---- */

struct ident {
	const char *ascii;
	size_t ascii_len;
	const char *puny;	/* the Punycode deltas, if any */
	size_t puny_len;
};

/* <ident> ::= [u] <decimal> [_] <bytes>; "u": Punycode after the last
 * '_' (v0 only). */
static struct ident parse_ident(struct rd *d)
{
	struct ident id = {0};
	int puny = !d->legacy && eat(d, 'u');
	char c = next(d);
	if (!is_digit(c)) {
		d->err = 1;
		return id;
	}
	size_t len = (size_t)(c - '0');
	if (c != '0')
		while (is_digit(peek(d))) {
			if (len > 100000)
				break;
			len = len * 10 + (size_t)(next(d) - '0');
		}
	if (!d->legacy)
		eat(d, '_');
	if (len > d->len - d->next) {
		d->err = 1;
		return id;
	}
	id.ascii = d->s + d->next;
	id.ascii_len = len;
	d->next += len;
	if (puny) {
		while (id.ascii_len > 0) {
			id.ascii_len--;
			if (id.ascii[id.ascii_len] == '_')
				break;
			id.puny_len++;
		}
		if (!id.puny_len) {
			d->err = 1;
			return id;
		}
		id.puny = id.ascii + (len - id.puny_len);
	}
	if (id.ascii_len == 0)
		id.ascii = NULL;
	return id;
}

static int hex_nibble(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A legacy "$..$" escape at E (LEN bytes left): the character, its
 * length in *N; 0 if it is none. */
static char legacy_escape(const char *e, size_t len, size_t *n)
{
	static const struct {
		char code[3], c;
	} esc[] = {
		{"SP", '@'}, {"BP", '*'}, {"RF", '&'}, {"LT", '<'},
		{"GT", '>'}, {"LP", '('}, {"RP", ')'},
	};
	char c = 0;
	size_t el = 0;
	if (len < 3 || e[0] != '$')
		return 0;
	e++;
	len--;
	if (e[0] == 'C') {
		el = 1;
		c = ',';
	} else if (len > 2) {
		el = 2;
		for (unsigned i = 0; i < sizeof esc / sizeof esc[0]; i++)
			if (e[0] == esc[i].code[0] && e[1] == esc[i].code[1])
				c = esc[i].c;
		if (e[0] == 'u' && len > 3) {
			/* $uXY$: a printable ASCII character. */
			int hi = hex_nibble(e[1]), lo = hex_nibble(e[2]);
			el = 3;
			if (hi < 0 || lo < 0 || hi > 7 || (hi << 4 | lo) < 0x20)
				return 0;
			c = (char)(hi << 4 | lo);
		}
	}
	if (!c || len <= el || e[el] != '$')
		return 0;
	*n = 2 + el;
	return c;
}

static void print_legacy_ident(struct rd *d, const char *s, size_t len)
{
	/* An '_' the compiler put before an escape. */
	if (len >= 2 && s[0] == '_' && s[1] == '$') {
		s++;
		len--;
	}
	while (len > 0 && !failed(d)) {
		size_t n;
		if (s[0] == '$') {
			char c = legacy_escape(s, len, &n);
			if (!c) { /* not an escape: the rest as it is */
				put_n(d, s, len);
				return;
			}
			put_n(d, &c, 1);
		} else if (s[0] == '.') {
			n = len >= 2 && s[1] == '.' ? 2 : 1;
			put(d, n == 2 ? "::" : ".");
		} else {
			for (n = 0; n < len && s[n] != '$' && s[n] != '.'; n++)
				;
			put_n(d, s, n);
		}
		s += n;
		len -= n;
	}
}

static size_t utf8(uint32_t c, char *b)
{
	if (c < 0x80) {
		b[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | ((c >> 18) & 0x07));
	b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	b[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* One Punycode delta (RFC 3492) from *POS; -1 when it is cut short
 * (the rest of the identifier is dropped, as c++filt drops it), -2 when
 * it is malformed. */
static int64_t puny_delta(const struct ident *id, size_t *pos, size_t bias)
{
	uint64_t delta = 0, w = 1;
	size_t k = 0, t;
	unsigned digit;
	do {
		k += 36;
		t = k < bias ? 0 : k - bias;
		t = t < 1 ? 1 : t > 26 ? 26 : t;
		if (*pos >= id->puny_len)
			return -1;
		char c = id->puny[(*pos)++];
		if (is_lower(c))
			digit = (unsigned)(c - 'a');
		else if (is_digit(c))
			digit = 26 + (unsigned)(c - '0');
		else
			return -2;
		if (w > (UINT32_MAX / 36) || delta > UINT32_MAX)
			return -2;
		delta += digit * w;
		w *= 36 - t;
	} while (digit >= t);
	return (int64_t)delta;
}

static void print_punycode(struct rd *d, const struct ident *id)
{
	uint32_t cp[MAX_PUNYCODE];
	size_t n = 0, pos = 0, bias = 72, damp = 700, i = 0;
	uint32_t c = 0x80;
	if (id->ascii_len > MAX_PUNYCODE) {
		d->over = 1;
		return;
	}
	for (; n < id->ascii_len; n++)
		cp[n] = (unsigned char)id->ascii[n];
	while (pos < id->puny_len) {
		int64_t delta = puny_delta(id, &pos, bias);
		if (delta == -2) {
			d->err = 1;
			return;
		}
		if (delta < 0)
			return; /* cut short: nothing printed */
		if (n >= MAX_PUNYCODE) {
			d->over = 1;
			return;
		}
		n++;
		i += (size_t)delta;
		if (c + i / n > 0x10ffff) {
			d->err = 1;
			return;
		}
		c += (uint32_t)(i / n);
		i %= n;
		for (size_t j = n - 1; j > i; j--)
			cp[j] = cp[j - 1];
		cp[i] = c;
		if (pos == id->puny_len)
			break;
		i++;
		/* Bias adaptation. */
		uint64_t dl = (uint64_t)delta / damp;
		size_t k = 0;
		damp = 2;
		dl += dl / n;
		while (dl > ((36 - 1) * 26) / 2) {
			dl /= 36 - 1;
			k += 36;
		}
		bias = k + (size_t)(((36 - 1 + 1) * dl) / (dl + 38));
	}
	char b[4];
	for (size_t j = 0; j < n; j++)
		put_n(d, b, utf8(cp[j], b));
}

static void print_ident(struct rd *d, struct ident id)
{
	if (failed(d) || d->skipping)
		return;
	if (d->legacy) {
		print_legacy_ident(d, id.ascii, id.ascii_len);
		return;
	}
	if (!id.puny) {
		put_n(d, id.ascii, id.ascii_len);
		return;
	}
	print_punycode(d, &id);
}

/* ---- v0 ---- */

/* <base-62-number> ::= {<0-9a-zA-Z>} _ , "_" being 0. */
static uint64_t integer_62(struct rd *d)
{
	uint64_t x = 0;
	if (eat(d, '_'))
		return 0;
	while (!eat(d, '_') && !failed(d)) {
		char c = next(d);
		unsigned v;
		if (is_digit(c))
			v = (unsigned)(c - '0');
		else if (is_lower(c))
			v = 10 + (unsigned)(c - 'a');
		else if (is_upper(c))
			v = 36 + (unsigned)(c - 'A');
		else {
			d->err = 1;
			return 0;
		}
		if (x > (UINT64_MAX - v) / 62) {
			d->err = 1;
			return 0;
		}
		x = x * 62 + v;
	}
	return x + 1;
}

static uint64_t opt_integer_62(struct rd *d, char tag)
{
	return eat(d, tag) ? 1 + integer_62(d) : 0;
}

/* Hex digits up to '_': the count, the value in *V (if it fits). */
static size_t hex_nibbles(struct rd *d, uint64_t *v)
{
	size_t n = 0;
	*v = 0;
	while (!eat(d, '_') && !failed(d)) {
		int h = hex_nibble(next(d));
		if (h < 0) {
			d->err = 1;
			return 0;
		}
		*v = *v << 4 | (uint64_t)h;
		n++;
	}
	return n;
}

static void print_lifetime(struct rd *d, uint64_t lt)
{
	put(d, "'");
	if (lt == 0) {
		put(d, "_");
		return;
	}
	uint64_t depth = d->bound_lifetimes - lt;
	if (depth < 26) {
		char c = (char)('a' + depth);
		put_n(d, &c, 1);
	} else {
		put(d, "_");
		put_u64(d, depth, 10);
	}
}

/* for<'a, 'b> before a function or trait object type. */
static void binder(struct rd *d)
{
	uint64_t n = opt_integer_62(d, 'G');
	if (failed(d) || n == 0)
		return;
	if (n > SFB_DEMANGLE_MAX_STEPS) {
		d->over = 1;
		return;
	}
	put(d, "for<");
	for (uint64_t i = 0; i < n && !failed(d); i++) {
		if (i > 0)
			put(d, ", ");
		d->bound_lifetimes++;
		print_lifetime(d, 1);
	}
	put(d, "> ");
}

static void path(struct rd *d, int in_value);
static void type(struct rd *d);
static void constant(struct rd *d);

/* Parse again at a back reference's target (printing only: while
 * skipping, the target was parsed already). */
static void backref(struct rd *d, void (*fn)(struct rd *, int), int arg)
{
	uint64_t to = integer_62(d);
	if (failed(d) || d->skipping)
		return;
	/* A back reference points before itself. */
	if (to >= d->next - 1) {
		d->err = 1;
		return;
	}
	size_t old = d->next;
	d->next = (size_t)to;
	fn(d, arg);
	d->next = old;
}

static void generic_arg(struct rd *d)
{
	if (eat(d, 'L'))
		print_lifetime(d, integer_62(d));
	else if (eat(d, 'K'))
		constant(d);
	else
		type(d);
}

static void generic_args(struct rd *d)
{
	for (unsigned i = 0; !failed(d) && !eat(d, 'E'); i++) {
		if (i > 0)
			put(d, ", ");
		generic_arg(d);
	}
}

static void path_1(struct rd *d, int in_value)
{
	char tag = next(d), ns;
	struct ident nm;
	uint64_t dis;
	switch (tag) {
	case 'C': /* crate root */
		opt_integer_62(d, 's');
		print_ident(d, parse_ident(d));
		return;
	case 'N': /* a path in a namespace */
		ns = next(d);
		if (!is_lower(ns) && !is_upper(ns)) {
			d->err = 1;
			return;
		}
		path(d, in_value);
		dis = opt_integer_62(d, 's');
		nm = parse_ident(d);
		if (is_upper(ns)) {
			/* closures, shims: ::{closure#0} */
			put(d, "::{");
			if (ns == 'C')
				put(d, "closure");
			else if (ns == 'S')
				put(d, "shim");
			else
				put_n(d, &ns, 1);
			if (nm.ascii || nm.puny) {
				put(d, ":");
				print_ident(d, nm);
			}
			put(d, "#");
			put_u64(d, dis, 10);
			put(d, "}");
		} else if (nm.ascii || nm.puny) {
			put(d, "::");
			print_ident(d, nm);
		}
		return;
	case 'M': /* <T> */
	case 'X': /* <T as Trait> */
	case 'Y': { /* <T as Trait>, no impl path */
		if (tag != 'Y') {
			/* The impl's own path is not printed. */
			int was = d->skipping;
			opt_integer_62(d, 's');
			d->skipping = 1;
			path(d, in_value);
			d->skipping = was;
		}
		put(d, "<");
		type(d);
		if (tag != 'M') {
			put(d, " as ");
			path(d, 0);
		}
		put(d, ">");
		return;
	}
	case 'I': /* generic arguments */
		path(d, in_value);
		if (in_value)
			put(d, "::");
		put(d, "<");
		generic_args(d);
		put(d, ">");
		return;
	case 'B':
		backref(d, path, in_value);
		return;
	default:
		d->err = 1;
	}
}

static void path(struct rd *d, int in_value)
{
	if (!enter(d))
		return;
	path_1(d, in_value);
	d->depth--;
}

static const char *basic_type(char tag)
{
	static const char tags[] = "bceuaslxnihtmyojfdzpv";
	static const char *const names[] = {
		"bool", "char", "str", "()", "i8", "i16", "i32", "i64", "i128", "isize", "u8",
		"u16", "u32", "u64", "u128", "usize", "f32", "f64", "!", "_", "...",
	};
	for (unsigned i = 0; tags[i]; i++)
		if (tags[i] == tag)
			return names[i];
	return NULL;
}

/* extern "C" or extern "<abi>", '_' in the ABI name printed as '-'. */
static void fn_abi(struct rd *d)
{
	struct ident abi = {.ascii = "C", .ascii_len = 1};
	if (!eat(d, 'C')) {
		abi = parse_ident(d);
		if (!abi.ascii || abi.puny) {
			d->err = 1;
			return;
		}
	}
	put(d, "extern \"");
	for (size_t i = 0; i < abi.ascii_len; i++)
		put_n(d, abi.ascii[i] == '_' ? "-" : abi.ascii + i, 1);
	put(d, "\" ");
}

static void fn_type(struct rd *d)
{
	uint64_t outer = d->bound_lifetimes;
	binder(d);
	if (eat(d, 'U'))
		put(d, "unsafe ");
	if (eat(d, 'K'))
		fn_abi(d);
	put(d, "fn(");
	for (unsigned i = 0; !failed(d) && !eat(d, 'E'); i++) {
		if (i > 0)
			put(d, ", ");
		type(d);
	}
	put(d, ")");
	if (!eat(d, 'u')) { /* a () return type is not printed */
		put(d, " -> ");
		type(d);
	}
	d->bound_lifetimes = outer;
}

/* A trait path in a trait object: its <...> kept open for the
 * associated type bindings after it; 1 if it was left open. */
static int path_open_generics(struct rd *d);

static void open_generics_at(struct rd *d, int *open)
{
	uint64_t to = integer_62(d);
	if (failed(d) || d->skipping)
		return;
	if (to >= d->next - 1) {
		d->err = 1;
		return;
	}
	size_t old = d->next;
	d->next = (size_t)to;
	*open = path_open_generics(d);
	d->next = old;
}

static int path_open_generics(struct rd *d)
{
	int open = 0;
	if (!enter(d))
		return 0;
	if (eat(d, 'B')) {
		open_generics_at(d, &open);
	} else if (eat(d, 'I')) {
		path(d, 0);
		put(d, "<");
		open = 1;
		for (unsigned i = 0; !failed(d) && !eat(d, 'E'); i++) {
			if (i > 0)
				put(d, ", ");
			generic_arg(d);
		}
	} else {
		path(d, 0);
	}
	d->depth--;
	return open;
}

static void dyn_trait(struct rd *d)
{
	int open = path_open_generics(d);
	while (!failed(d) && eat(d, 'p')) {
		put(d, open ? ", " : "<");
		open = 1;
		print_ident(d, parse_ident(d));
		put(d, " = ");
		type(d);
	}
	if (open)
		put(d, ">");
}

static void dyn_type(struct rd *d)
{
	uint64_t outer = d->bound_lifetimes;
	put(d, "dyn ");
	binder(d);
	for (unsigned i = 0; !failed(d) && !eat(d, 'E'); i++) {
		if (i > 0)
			put(d, " + ");
		dyn_trait(d);
	}
	d->bound_lifetimes = outer;
	if (!eat(d, 'L')) {
		d->err = 1;
		return;
	}
	uint64_t lt = integer_62(d);
	if (lt) {
		put(d, " + ");
		print_lifetime(d, lt);
	}
}

static void type_at(struct rd *d, int unused)
{
	(void)unused;
	type(d);
}

static void type_1(struct rd *d, char tag)
{
	switch (tag) {
	case 'R': /* &T, &'a T */
	case 'Q': /* &mut T */
		put(d, "&");
		if (eat(d, 'L')) {
			uint64_t lt = integer_62(d);
			if (lt) {
				print_lifetime(d, lt);
				put(d, " ");
			}
		}
		if (tag == 'Q')
			put(d, "mut ");
		type(d);
		return;
	case 'P':
	case 'O':
		put(d, tag == 'P' ? "*const " : "*mut ");
		type(d);
		return;
	case 'A': /* [T; N] */
	case 'S': /* [T] */
		put(d, "[");
		type(d);
		if (tag == 'A') {
			put(d, "; ");
			constant(d);
		}
		put(d, "]");
		return;
	case 'T': { /* tuples: (T,) for one element */
		unsigned i = 0;
		put(d, "(");
		for (; !failed(d) && !eat(d, 'E'); i++) {
			if (i > 0)
				put(d, ", ");
			type(d);
		}
		if (i == 1)
			put(d, ",");
		put(d, ")");
		return;
	}
	case 'F': fn_type(d); return;
	case 'D': dyn_type(d); return;
	case 'B': backref(d, type_at, 0); return;
	default:
		d->next--; /* a path: it reads the tag again */
		path(d, 0);
	}
}

static void type(struct rd *d)
{
	if (failed(d))
		return;
	char tag = next(d);
	const char *basic = basic_type(tag);
	if (basic) {
		put(d, basic);
		return;
	}
	if (!enter(d))
		return;
	type_1(d, tag);
	d->depth--;
}

static void const_uint(struct rd *d)
{
	uint64_t v;
	size_t n = hex_nibbles(d, &v);
	if (n > 16) { /* wider than 64 bits: the hex digits as they are */
		put(d, "0x");
		put_n(d, d->s + d->next - 1 - n, n);
	} else if (n > 0) {
		put_u64(d, v, 10);
	} else {
		d->err = 1;
	}
}

static void const_char(struct rd *d)
{
	uint64_t v;
	size_t n = hex_nibbles(d, &v);
	if (n == 0 || n > 8) {
		d->err = 1;
		return;
	}
	put(d, "'");
	if (v == '\t')
		put(d, "\\t");
	else if (v == '\r')
		put(d, "\\r");
	else if (v == '\n')
		put(d, "\\n");
	else if (v > ' ' && v < '~') {
		char c = (char)v;
		put_n(d, &c, 1);
	} else {
		put(d, "\\u{");
		put_u64(d, v, 16);
		put(d, "}");
	}
	put(d, "'");
}

static void const_at(struct rd *d, int unused)
{
	(void)unused;
	constant(d);
}

static void constant_1(struct rd *d)
{
	if (eat(d, 'B')) {
		backref(d, const_at, 0);
		return;
	}
	char tag = next(d);
	uint64_t v;
	switch (tag) {
	case 'p': put(d, "_"); return;
	case 'h': case 't': case 'm': case 'y': case 'o': case 'j':
		const_uint(d);
		return;
	case 'a': case 's': case 'l': case 'x': case 'n': case 'i':
		if (eat(d, 'n'))
			put(d, "-");
		const_uint(d);
		return;
	case 'b':
		if (hex_nibbles(d, &v) != 1 || v > 1) {
			d->err = 1;
			return;
		}
		put(d, v ? "true" : "false");
		return;
	case 'c': const_char(d); return;
	default: d->err = 1; return;
	}
}

static void constant(struct rd *d)
{
	if (!enter(d))
		return;
	constant_1(d);
	d->depth--;
}

/* ---- Entry ---- */

/* _ZN <ident>+ 17h<hash> E [.suffix]: 1 if printed, 0 if not one. */
static int legacy(struct rd *d)
{
	size_t len = d->len;
	/* A '.' suffix after the E (".llvm.123") is ignored. */
	int dot = 1;
	while (len > 0 && !(dot && d->s[len - 1] == 'E')) {
		dot = d->s[len - 1] == '.';
		len--;
	}
	if (len == 0 || d->s[len - 1] != 'E')
		return 0;
	len--;
	if (!(len > 19 && d->s[len - 19] == '1' && d->s[len - 18] == '7' && d->s[len - 17] == 'h'))
		return 0;
	d->len = len;
	struct ident id;
	do {
		id = parse_ident(d);
		if (d->err || !id.ascii)
			return 0;
	} while (d->next < d->len);
	/* The last part is the hash: 'h' and 16 hex digits, at least 5 of
	 * them distinct. */
	unsigned seen = 0, distinct = 0;
	if (id.ascii_len != 17 || id.ascii[0] != 'h')
		return 0;
	for (unsigned i = 1; i < 17; i++) {
		int h = hex_nibble(id.ascii[i]);
		if (h < 0)
			return 0;
		seen |= 1u << h;
	}
	for (; seen; seen >>= 1)
		distinct += seen & 1;
	if (distinct < 5)
		return 0;
	d->next = 0;
	d->len -= 19;
	do {
		if (d->next > 0)
			put(d, "::");
		id = parse_ident(d);
		print_ident(d, id);
	} while (d->next < d->len && !failed(d));
	return 1;
}

int sfb_dm_rust(const char *s, unsigned len, char *out, size_t size, struct sfb_demangle_usage *u)
{
	struct rd d = {.out = out, .size = size};
	if (len >= 3 && s[0] == '_' && s[1] == 'Z' && s[2] == 'N') {
		d.legacy = 1;
		d.s = s + 3;
	} else if (len >= 2 && s[0] == '_' && s[1] == 'R') {
		d.s = s + 2;
		if (!is_upper(d.s[0]))
			return -2;
	} else {
		return -2;
	}
	/* v0 uses [_0-9a-zA-Z] up to an ignored '.' suffix; legacy also
	 * '$', '.', ':' and '@'. */
	for (const char *p = d.s; p < s + len; p++) {
		if (!d.legacy && *p == '.')
			break;
		d.len++;
		char c = *p;
		if (c == '_' || is_digit(c) || is_lower(c) || is_upper(c))
			continue;
		if (d.legacy && (c == '$' || c == '.' || c == ':' || c == '@'))
			continue;
		return -2;
	}
	if (d.legacy) {
		if (!legacy(&d))
			return -2;
	} else {
		path(&d, 1);
		/* The instantiating crate, if any, is not printed. */
		if (!failed(&d) && d.next < d.len) {
			d.skipping = 1;
			path(&d, 0);
		}
		if (d.next != d.len)
			d.err = 1;
	}
	if (u) {
		u->parse_depth = d.max_depth;
		u->steps = d.steps;
	}
	if (d.err)
		return -2;
	if (d.over)
		return -1;
	out[d.olen] = 0;
	return (int)d.olen;
}
