/* The demangler (demangle.h).  A name is parsed into a tree of nodes held
 * in a fixed array and addressed by index (0 is "none"), then the tree is
 * printed: substitutions and template arguments are shared subtrees, and a
 * declarator such as "int (*)(char)" needs the whole type before its first
 * character can be written, so printing cannot follow the parse.
 *
 * The grammar is the Itanium C++ ABI's with GNU's extensions, and the
 * printed form is GNU's (libiberty's cp-demangle, which c++filt uses):
 * "std::vector<int, std::allocator<int> >", "char const*",
 * "(anonymous namespace)", "{lambda(int)#1}", "[abi:cxx11]",
 * "[clone .cold]".  Where the GNU printer has a quirk, this one has it too;
 * the tests compare with c++filt over tens of thousands of real names. */
#include "demangle.h"

#include <stdint.h>

#include "demangle_int.h"

/* ---- Tables ---- */

/* Fixed texts a node can print (K_SNAME, K_SUBSTD). */
enum {
	S_STD,
	S_ANON_NS,
	S_AUTO,
	S_DECLTYPE_AUTO,
	S_STRING_LITERAL,
	S_STD_ALLOCATOR,
	S_ALLOCATOR,
	S_STD_BASIC_STRING,
	S_BASIC_STRING,
	S_STD_STRING,
	S_STD_STRING_FULL,
	S_STD_ISTREAM,
	S_STD_ISTREAM_FULL,
	S_BASIC_ISTREAM,
	S_STD_OSTREAM,
	S_STD_OSTREAM_FULL,
	S_BASIC_OSTREAM,
	S_STD_IOSTREAM,
	S_STD_IOSTREAM_FULL,
	S_BASIC_IOSTREAM,
};

static const char *const fixed_text[] = {
	[S_STD] = "std",
	[S_ANON_NS] = "(anonymous namespace)",
	[S_AUTO] = "auto",
	[S_DECLTYPE_AUTO] = "decltype(auto)",
	[S_STRING_LITERAL] = "string literal",
	[S_STD_ALLOCATOR] = "std::allocator",
	[S_ALLOCATOR] = "allocator",
	[S_STD_BASIC_STRING] = "std::basic_string",
	[S_BASIC_STRING] = "basic_string",
	[S_STD_STRING] = "std::string",
	[S_STD_STRING_FULL] = "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
	[S_STD_ISTREAM] = "std::istream",
	[S_STD_ISTREAM_FULL] = "std::basic_istream<char, std::char_traits<char> >",
	[S_BASIC_ISTREAM] = "basic_istream",
	[S_STD_OSTREAM] = "std::ostream",
	[S_STD_OSTREAM_FULL] = "std::basic_ostream<char, std::char_traits<char> >",
	[S_BASIC_OSTREAM] = "basic_ostream",
	[S_STD_IOSTREAM] = "std::iostream",
	[S_STD_IOSTREAM_FULL] = "std::basic_iostream<char, std::char_traits<char> >",
	[S_BASIC_IOSTREAM] = "basic_iostream",
};

/* The standard abbreviations "S<code>": the short text, the text used
 * before a constructor or destructor name (the class spelled out), and
 * the class's own name (what such a constructor is called). */
static const struct {
	char code;
	uint8_t simple, full, last;
} std_subs[] = {
	{'t', S_STD, S_STD, 0},
	{'a', S_STD_ALLOCATOR, S_STD_ALLOCATOR, S_ALLOCATOR},
	{'b', S_STD_BASIC_STRING, S_STD_BASIC_STRING, S_BASIC_STRING},
	{'s', S_STD_STRING, S_STD_STRING_FULL, S_BASIC_STRING},
	{'i', S_STD_ISTREAM, S_STD_ISTREAM_FULL, S_BASIC_ISTREAM},
	{'o', S_STD_OSTREAM, S_STD_OSTREAM_FULL, S_BASIC_OSTREAM},
	{'d', S_STD_IOSTREAM, S_STD_IOSTREAM_FULL, S_BASIC_IOSTREAM},
};

/* How a builtin type's literals print: 42u, true, (float)[...]. */
enum { PR_DEFAULT, PR_INT, PR_UNSIGNED, PR_LONG, PR_ULONG, PR_LLONG, PR_ULLONG, PR_BOOL, PR_FLOAT, PR_VOID };

/* Builtin types: 'a'..'z' by letter, then the D-prefixed ones. */
enum { B_DEC32 = 26, B_DEC64, B_DEC128, B_HALF, B_CHAR8, B_CHAR16, B_CHAR32, B_NULLPTR, B_BFLOAT16, B_COUNT };
static const struct {
	const char *name;
	uint8_t print;
} builtins[B_COUNT] = {
	['a' - 'a'] = {"signed char", PR_DEFAULT},
	['b' - 'a'] = {"bool", PR_BOOL},
	['c' - 'a'] = {"char", PR_DEFAULT},
	['d' - 'a'] = {"double", PR_FLOAT},
	['e' - 'a'] = {"long double", PR_FLOAT},
	['f' - 'a'] = {"float", PR_FLOAT},
	['g' - 'a'] = {"__float128", PR_FLOAT},
	['h' - 'a'] = {"unsigned char", PR_DEFAULT},
	['i' - 'a'] = {"int", PR_INT},
	['j' - 'a'] = {"unsigned int", PR_UNSIGNED},
	['l' - 'a'] = {"long", PR_LONG},
	['m' - 'a'] = {"unsigned long", PR_ULONG},
	['n' - 'a'] = {"__int128", PR_DEFAULT},
	['o' - 'a'] = {"unsigned __int128", PR_DEFAULT},
	['s' - 'a'] = {"short", PR_DEFAULT},
	['t' - 'a'] = {"unsigned short", PR_DEFAULT},
	['v' - 'a'] = {"void", PR_VOID},
	['w' - 'a'] = {"wchar_t", PR_DEFAULT},
	['x' - 'a'] = {"long long", PR_LLONG},
	['y' - 'a'] = {"unsigned long long", PR_ULLONG},
	['z' - 'a'] = {"...", PR_DEFAULT},
	[B_DEC32] = {"decimal32", PR_DEFAULT},
	[B_DEC64] = {"decimal64", PR_DEFAULT},
	[B_DEC128] = {"decimal128", PR_DEFAULT},
	[B_HALF] = {"half", PR_FLOAT},
	[B_CHAR8] = {"char8_t", PR_DEFAULT},
	[B_CHAR16] = {"char16_t", PR_DEFAULT},
	[B_CHAR32] = {"char32_t", PR_DEFAULT},
	[B_NULLPTR] = {"decltype(nullptr)", PR_DEFAULT},
	[B_BFLOAT16] = {"std::bfloat16_t", PR_FLOAT},
};

/* Operators, sorted by code for a binary search; ARGS is the operand
 * count in an expression.  A trailing space in NAME separates a keyword
 * operator from its operand ("sizeof x"); "operator" names drop it. */
static const struct {
	char code[3];
	uint8_t args;
	const char *name;
} ops[] = {
	{"aN", 2, "&="},        {"aS", 2, "="},           {"aa", 2, "&&"},
	{"ad", 1, "&"},         {"an", 2, "&"},           {"at", 1, "alignof "},
	{"aw", 1, "co_await "}, {"az", 1, "alignof "},    {"cc", 2, "const_cast"},
	{"cl", 2, "()"},        {"cm", 2, ","},           {"co", 1, "~"},
	{"dV", 2, "/="},        {"dX", 3, "[...]="},      {"da", 1, "delete[] "},
	{"dc", 2, "dynamic_cast"}, {"de", 1, "*"},        {"di", 2, "="},
	{"dl", 1, "delete "},   {"ds", 2, ".*"},          {"dt", 2, "."},
	{"dv", 2, "/"},         {"dx", 2, "]="},          {"eO", 2, "^="},
	{"eo", 2, "^"},         {"eq", 2, "=="},          {"fL", 3, "..."},
	{"fR", 3, "..."},       {"fl", 2, "..."},         {"fr", 2, "..."},
	{"ge", 2, ">="},        {"gs", 1, "::"},          {"gt", 2, ">"},
	{"ix", 2, "[]"},        {"lS", 2, "<<="},         {"le", 2, "<="},
	{"li", 1, "operator\"\" "}, {"ls", 2, "<<"},      {"lt", 2, "<"},
	{"mI", 2, "-="},        {"mL", 2, "*="},          {"mi", 2, "-"},
	{"ml", 2, "*"},         {"mm", 1, "--"},          {"na", 3, "new[]"},
	{"ne", 2, "!="},        {"ng", 1, "-"},           {"nt", 1, "!"},
	{"nw", 3, "new"},       {"nx", 1, "noexcept"},    {"oR", 2, "|="},
	{"oo", 2, "||"},        {"or", 2, "|"},           {"pL", 2, "+="},
	{"pl", 2, "+"},         {"pm", 2, "->*"},         {"pp", 1, "++"},
	{"ps", 1, "+"},         {"pt", 2, "->"},          {"qu", 3, "?"},
	{"rM", 2, "%="},        {"rS", 2, ">>="},         {"rc", 2, "reinterpret_cast"},
	{"rm", 2, "%"},         {"rs", 2, ">>"},          {"sP", 1, "sizeof..."},
	{"sZ", 1, "sizeof..."}, {"sc", 2, "static_cast"}, {"ss", 2, "<=>"},
	{"st", 1, "sizeof "},   {"sz", 1, "sizeof "},     {"tr", 0, "throw"},
	{"tw", 1, "throw "},
};
#define N_OPS (sizeof ops / sizeof ops[0])

static int op_is(unsigned op, const char *code)
{
	return ops[op].code[0] == code[0] && ops[op].code[1] == code[1];
}

/* Texts printed before the entity of a special name (_ZTV, _ZGV, ...). */
enum {
	SP_VTABLE, SP_VTT, SP_TYPEINFO, SP_TYPEINFO_NAME, SP_TYPEINFO_FN,
	SP_THUNK, SP_VIRTUAL_THUNK, SP_COVARIANT_THUNK, SP_JAVA_CLASS,
	SP_GUARD, SP_TLS_INIT, SP_TLS_WRAPPER, SP_HIDDEN_ALIAS,
	SP_TX_CLONE, SP_NONTX_CLONE, SP_TPARM_OBJ, SP_GLOBAL_CTORS,
	SP_GLOBAL_DTORS,
};
static const char *const special_text[] = {
	[SP_VTABLE] = "vtable for ",
	[SP_VTT] = "VTT for ",
	[SP_TYPEINFO] = "typeinfo for ",
	[SP_TYPEINFO_NAME] = "typeinfo name for ",
	[SP_TYPEINFO_FN] = "typeinfo fn for ",
	[SP_THUNK] = "non-virtual thunk to ",
	[SP_VIRTUAL_THUNK] = "virtual thunk to ",
	[SP_COVARIANT_THUNK] = "covariant return thunk to ",
	[SP_JAVA_CLASS] = "java Class for ",
	[SP_GUARD] = "guard variable for ",
	[SP_TLS_INIT] = "TLS init function for ",
	[SP_TLS_WRAPPER] = "TLS wrapper function for ",
	[SP_HIDDEN_ALIAS] = "hidden alias for ",
	[SP_TX_CLONE] = "transaction clone for ",
	[SP_NONTX_CLONE] = "non-transaction clone for ",
	[SP_TPARM_OBJ] = "template parameter object for ",
	[SP_GLOBAL_CTORS] = "global constructors keyed to ",
	[SP_GLOBAL_DTORS] = "global destructors keyed to ",
};

/* Which children a node of each kind must have to be made: a failed
 * sub-parse returns 0, and this is where that failure propagates. */
enum { NEED_L = 1, NEED_R = 2 };
static const uint8_t need[K_COUNT] = {
	[K_QUAL] = 3, [K_LOCAL] = 3, [K_TYPED] = 3, [K_TAGGED] = 3,
	[K_TEMPLATE] = 3, [K_CTORVT] = 3, [K_VENDOR_QUAL] = 3, [K_PTRMEM] = 3,
	[K_UNARY] = 3, [K_BINARY] = 3, [K_BINARY_ARGS] = 3, [K_TRINARY] = 3,
	[K_TRINARY_ARG1] = 3, [K_LITERAL] = 3, [K_LITERAL_NEG] = 3,
	[K_VECTOR] = 3, [K_CLONE] = 3,
	[K_SPECIAL] = 1, [K_REFTEMP] = 1, [K_POINTER] = 1, [K_REF] = 1,
	[K_RREF] = 1, [K_COMPLEX] = 1, [K_IMAGINARY] = 1, [K_VENDOR_TYPE] = 1,
	[K_CAST] = 1, [K_CONVERSION] = 1, [K_DECLTYPE] = 1, [K_PACK] = 1,
	[K_NULLARY] = 1, [K_TRINARY_ARG2] = 1,
	[K_ARRAY] = 2, [K_INITLIST] = 2,
};

static int is_fnqual(unsigned k)
{
	return k >= K_RESTRICT_THIS && k <= K_THROW;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }

/* ---- Parser state ---- */

struct parser {
	const char *s;
	unsigned pos, len;
	struct dm_tree *t;
	uint16_t subs[SFB_DEMANGLE_MAX_SUBS];
	unsigned nsubs;
	unsigned last_name;	/* the name a constructor or destructor takes */
	uint8_t in_expr, in_conv;
	/* 1: try "sr <qualifiers> E" first; -1: that was tried; 0: the
	 * old form "sr <type>" only. */
	int8_t unresolved;
	unsigned depth, max_depth, steps;
};

static char peek(const struct parser *p)
{
	return p->pos < p->len ? p->s[p->pos] : 0;
}

static char peek2(const struct parser *p)
{
	return p->pos + 1 < p->len ? p->s[p->pos + 1] : 0;
}

static char next(struct parser *p)
{
	return p->pos < p->len ? p->s[p->pos++] : 0;
}

static void skip(struct parser *p, unsigned n)
{
	p->pos = p->pos + n < p->len ? p->pos + n : p->len;
}

static int eat(struct parser *p, char c)
{
	if (peek(p) != c)
		return 0;
	p->pos++;
	return 1;
}

static struct dm_node *N(const struct parser *p, unsigned i)
{
	return &p->t->n[i];
}

/* A node; 0 when the array is full. */
static unsigned mk(struct parser *p, unsigned kind, unsigned l, unsigned r)
{
	struct dm_tree *t = p->t;
	if (t->used >= SFB_DEMANGLE_MAX_NODES)
		return 0;
	unsigned i = t->used++;
	t->n[i] = (struct dm_node){.kind = (uint8_t)kind, .l = (uint16_t)l, .r = (uint16_t)r};
	return i;
}

/* A node with children: 0 if one it needs is missing. */
static unsigned comp(struct parser *p, unsigned kind, unsigned l, unsigned r)
{
	if (((need[kind] & NEED_L) && !l) || ((need[kind] & NEED_R) && !r))
		return 0;
	return mk(p, kind, l, r);
}

/* A name from the input: never empty (an empty literal value, "LiE", is
 * no name). */
static unsigned mk_name(struct parser *p, unsigned at, unsigned len)
{
	return len ? mk(p, K_NAME, at, len) : 0;
}

static unsigned mk_aux(struct parser *p, unsigned kind, unsigned aux, unsigned l, unsigned r)
{
	unsigned i = mk(p, kind, l, r);
	if (i)
		N(p, i)->aux = (uint8_t)aux;
	return i;
}

/* A node holding a number (template parameter index, ...). */
static unsigned mk_num(struct parser *p, unsigned kind, int32_t v)
{
	uint32_t u = (uint32_t)v;
	return mk(p, kind, u & 0xffff, u >> 16);
}

static int32_t num_of(const struct dm_node *n)
{
	return (int32_t)((uint32_t)n->l | (uint32_t)n->r << 16);
}

static unsigned kind_of(const struct parser *p, unsigned i)
{
	return p->t->n[i].kind;
}

static int add_sub(struct parser *p, unsigned dc)
{
	if (!dc || p->nsubs >= SFB_DEMANGLE_MAX_SUBS)
		return 0;
	p->subs[p->nsubs++] = (uint16_t)dc;
	return 1;
}

/* Entering a recursive rule: 0 when the depth budget is spent. */
static int enter(struct parser *p)
{
	if (p->depth >= SFB_DEMANGLE_MAX_PARSE_DEPTH)
		return 0;
	if (p->steps >= SFB_DEMANGLE_MAX_PARSE_STEPS) {
		p->steps = SFB_DEMANGLE_MAX_PARSE_STEPS + 1; /* spent */
		return 0;
	}
	p->steps++;
	if (++p->depth > p->max_depth)
		p->max_depth = p->depth;
	return 1;
}

static unsigned leave(struct parser *p, unsigned ret)
{
	p->depth--;
	return ret;
}

/* Appending to a list built through right links: *HEAD is the first
 * node, *TAIL the last (0 while empty). */
static int append(struct parser *p, unsigned kind, unsigned item, unsigned *head, unsigned *tail)
{
	unsigned n = mk(p, kind, item, 0);
	if (!n)
		return 0;
	if (*tail)
		N(p, *tail)->r = (uint16_t)n;
	else
		*head = n;
	*tail = n;
	return 1;
}

static unsigned encoding(struct parser *p, int top);
static unsigned name(struct parser *p);
static unsigned type(struct parser *p);
static unsigned expression(struct parser *p);
static unsigned expression_1(struct parser *p);
static unsigned template_args(struct parser *p);
static unsigned template_args_1(struct parser *p);
static unsigned template_arg(struct parser *p);
static unsigned unqualified_name(struct parser *p, unsigned scope);
static unsigned substitution(struct parser *p, int prefix);
static unsigned function_type(struct parser *p);
static unsigned bare_function_type(struct parser *p, int has_ret);
static unsigned parmlist(struct parser *p);

/* ---- Numbers and names ---- */

/* number ::= [n] <decimal>; -1 on overflow. */
static int number(struct parser *p)
{
	int neg = eat(p, 'n');
	int v = 0;
	while (is_digit(peek(p))) {
		int d = next(p) - '0';
		if (v > (INT32_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	return neg ? -v : v;
}

/* <non-negative number> _ , "_" being 0 and "N_" N + 1; -1 if bad. */
static int compact_number(struct parser *p)
{
	int v;
	if (peek(p) == '_')
		v = 0;
	else if (peek(p) == 'n')
		return -1;
	else
		v = number(p) + 1;
	if (v < 0 || !eat(p, '_'))
		return -1;
	return v;
}

static unsigned sname(struct parser *p, unsigned text)
{
	return mk_aux(p, K_SNAME, text, 0, 0);
}

/* <identifier> of LEN bytes; GCC's "_GLOBAL_.N" for an anonymous
 * namespace prints as "(anonymous namespace)". */
static unsigned identifier(struct parser *p, int len)
{
	if ((unsigned)len > p->len - p->pos)
		return 0;
	const char *s = p->s + p->pos;
	unsigned at = p->pos;
	skip(p, (unsigned)len);
	if (len >= 10 && s[0] == '_' && s[1] == 'G' && s[2] == 'L' && s[3] == 'O' && s[4] == 'B' &&
	    s[5] == 'A' && s[6] == 'L' && s[7] == '_' && (s[8] == '.' || s[8] == '_' || s[8] == '$') &&
	    s[9] == 'N')
		return sname(p, S_ANON_NS);
	return mk_name(p, at, (unsigned)len);
}

/* <source-name> ::= <length> <identifier> */
static unsigned source_name(struct parser *p)
{
	int len = number(p);
	if (len <= 0)
		return 0;
	unsigned r = identifier(p, len);
	p->last_name = r;
	return r;
}

static unsigned number_node(struct parser *p)
{
	return mk_num(p, K_NUMBER, number(p));
}

/* <operator-name>: two letters, "cv <type>" or "v <digit> <source-name>". */
static unsigned operator_name(struct parser *p)
{
	char c1 = next(p), c2 = next(p);
	if (c1 == 'v' && is_digit(c2)) {
		unsigned nm = source_name(p);
		return nm ? mk_aux(p, K_EXTOP, (unsigned)(c2 - '0'), nm, 0) : 0;
	}
	if (c1 == 'c' && c2 == 'v') {
		uint8_t was = p->in_conv;
		p->in_conv = !p->in_expr;
		unsigned t = type(p);
		unsigned r = comp(p, p->in_conv ? K_CONVERSION : K_CAST, t, 0);
		p->in_conv = was;
		return r;
	}
	unsigned lo = 0, hi = N_OPS;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const char *c = ops[mid].code;
		if (c1 == c[0] && c2 == c[1])
			return mk_aux(p, K_OPERATOR, mid, 0, 0);
		if (c1 < c[0] || (c1 == c[0] && c2 < c[1]))
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/* <abi-tag>*: B <source-name> each, around DC. */
static unsigned abi_tags(struct parser *p, unsigned dc)
{
	unsigned hold = p->last_name;
	while (eat(p, 'B'))
		dc = comp(p, K_TAGGED, dc, source_name(p));
	p->last_name = hold;
	return dc;
}

/* <discriminator> ::= _ <digit> | __ <number> _ ; read and not printed. */
static int discriminator(struct parser *p)
{
	if (!eat(p, '_'))
		return 1;
	int two = eat(p, '_');
	int d = number(p);
	if (d < 0)
		return 0;
	if (two && d >= 10 && !eat(p, '_'))
		return 0;
	return 1;
}

/* <ctor-dtor-name> ::= C[I]<1-5> [<type>] | D<0-2,4,5> */
static unsigned ctor_dtor_name(struct parser *p)
{
	if (peek(p) == 'C') {
		int inheriting = peek2(p) == 'I';
		if (inheriting)
			skip(p, 1);
		char k = peek2(p);
		if (k < '1' || k > '5')
			return 0;
		skip(p, 2);
		if (inheriting)
			type(p);
		return p->last_name ? mk_aux(p, K_CTOR, (unsigned)(k - '0'), p->last_name, 0) : 0;
	}
	if (peek(p) == 'D') {
		char k = peek2(p);
		if (k < '0' || k > '5' || k == '3')
			return 0;
		skip(p, 2);
		return p->last_name ? mk_aux(p, K_DTOR, (unsigned)(k - '0'), p->last_name, 0) : 0;
	}
	return 0;
}

/* <closure-type-name> ::= Ul <lambda-sig> E [<number>] _ */
static unsigned lambda(struct parser *p)
{
	skip(p, 2);
	unsigned tl = parmlist(p);
	if (!tl || !eat(p, 'E'))
		return 0;
	int num = compact_number(p);
	if (num < 0 || num > 0xffff)
		return 0;
	return mk(p, K_LAMBDA, tl, (unsigned)num);
}

/* <unnamed-type-name> ::= Ut [<number>] _ */
static unsigned unnamed_type(struct parser *p)
{
	skip(p, 2);
	int num = compact_number(p);
	if (num < 0)
		return 0;
	unsigned r = mk_num(p, K_UNNAMED, num);
	return add_sub(p, r) ? r : 0;
}

/* <unqualified-name> [<abi-tags>], qualified by SCOPE if not 0. */
static unsigned unqualified_name(struct parser *p, unsigned scope)
{
	char c = peek(p);
	unsigned r;
	if (is_digit(c)) {
		r = source_name(p);
	} else if (is_lower(c)) {
		uint8_t was = p->in_expr;
		if (c == 'o' && peek2(p) == 'n') {
			skip(p, 2);
			p->in_expr = 0; /* "oncv" names a conversion */
		}
		r = operator_name(p);
		p->in_expr = was;
		if (r && kind_of(p, r) == K_OPERATOR && op_is(N(p, r)->aux, "li"))
			r = comp(p, K_UNARY, r, source_name(p));
	} else if (c == 'C' || c == 'D') {
		r = ctor_dtor_name(p);
	} else if (c == 'L') {
		skip(p, 1);
		r = source_name(p);
		if (!r || !discriminator(p))
			return 0;
	} else if (c == 'U' && peek2(p) == 'l') {
		r = lambda(p);
	} else if (c == 'U' && peek2(p) == 't') {
		r = unnamed_type(p);
	} else {
		return 0;
	}
	if (peek(p) == 'B')
		r = abi_tags(p, r);
	return scope ? comp(p, K_QUAL, scope, r) : r;
}

/* <substitution> ::= S <seq-id> _ | S_ | St | Sa | Sb | Ss | Si | So | Sd.
 * PREFIX: the name qualifies something, and a constructor or destructor
 * after it wants the class spelled out. */
static unsigned substitution(struct parser *p, int prefix)
{
	if (!eat(p, 'S'))
		return 0;
	char c = next(p);
	if (c == '_' || is_digit(c) || is_upper(c)) {
		unsigned id = 0;
		if (c != '_') {
			do {
				unsigned d;
				if (is_digit(c))
					d = (unsigned)(c - '0');
				else if (is_upper(c))
					d = (unsigned)(c - 'A' + 10);
				else
					return 0;
				if (id > (UINT32_MAX - d) / 36)
					return 0;
				id = id * 36 + d;
				c = next(p);
			} while (c != '_');
			id++;
		}
		return id < p->nsubs ? p->subs[id] : 0;
	}
	int full = prefix && (peek(p) == 'C' || peek(p) == 'D');
	for (unsigned i = 0; i < sizeof std_subs / sizeof std_subs[0]; i++) {
		if (std_subs[i].code != c)
			continue;
		if (std_subs[i].last)
			p->last_name = mk_aux(p, K_SUBSTD, std_subs[i].last, 0, 0);
		unsigned dc = mk_aux(p, K_SUBSTD, full ? std_subs[i].full : std_subs[i].simple, 0, 0);
		if (peek(p) == 'B') {
			dc = abi_tags(p, dc);
			if (!add_sub(p, dc))
				return 0;
		}
		return dc;
	}
	return 0;
}

/* <template-param> ::= T_ | T <number> _ */
static unsigned template_param(struct parser *p)
{
	if (!eat(p, 'T'))
		return 0;
	int n = compact_number(p);
	return n < 0 ? 0 : mk_num(p, K_TPARAM, n);
}

/* <prefix>: the qualifiers of a nested name, left to right, each a
 * substitution candidate (if SUBSTABLE) except the last and those that
 * are substitutions already. */
static unsigned prefix(struct parser *p, int substable)
{
	unsigned ret = 0;
	for (;;) {
		char c = peek(p), c2 = peek2(p);
		if (c == 'D' && (c2 == 'T' || c2 == 't')) {
			if (ret)
				return 0;
			ret = type(p);
		} else if (c == 'I') {
			if (!ret)
				return 0;
			unsigned args = template_args(p);
			if (!args)
				return 0;
			ret = mk(p, K_TEMPLATE, ret, args);
		} else if (c == 'T') {
			if (ret)
				return 0;
			ret = template_param(p);
		} else if (c == 'M') {
			/* A lambda's initializer scope: printed as the
			 * variable's own scope. */
			skip(p, 1);
			continue;
		} else if (c == 'S') {
			unsigned sub = substitution(p, 1);
			if (!sub || ret)
				return 0;
			ret = sub;
			continue;
		} else {
			ret = unqualified_name(p, ret);
		}
		if (!ret || peek(p) == 'E')
			break;
		if (substable && !add_sub(p, ret))
			return 0;
	}
	return ret;
}

/* Set the slot a qualifier chain leaves open: *HEAD if the chain is
 * empty (HOLE 0), else the left child of its last node HOLE. */
static void fill(struct parser *p, unsigned *head, unsigned hole, unsigned v)
{
	if (hole)
		N(p, hole)->l = (uint16_t)v;
	else
		*head = v;
}

/* <CV-qualifiers> ::= [r] [V] [K] and the function qualifiers Dx, Do,
 * DO <expr> E, Dw <types> E; chained through left links from *HEAD, the
 * last node in *HOLE.  0 on a malformed qualifier. */
static int cv_qualifiers(struct parser *p, unsigned *head, unsigned *hole, int member_fn)
{
	*head = 0;
	*hole = 0;
	for (;;) {
		char c = peek(p), c2 = peek2(p);
		unsigned kind, right = 0;
		if (c == 'r')
			kind = member_fn ? K_RESTRICT_THIS : K_RESTRICT;
		else if (c == 'V')
			kind = member_fn ? K_VOLATILE_THIS : K_VOLATILE;
		else if (c == 'K')
			kind = member_fn ? K_CONST_THIS : K_CONST;
		else if (c == 'D' && c2 == 'x')
			kind = K_TXSAFE;
		else if (c == 'D' && (c2 == 'o' || c2 == 'O'))
			kind = K_NOEXCEPT;
		else if (c == 'D' && c2 == 'w')
			kind = K_THROW;
		else
			break;
		skip(p, c == 'D' ? 2 : 1);
		if (c2 == 'O' && c == 'D') {
			right = expression(p);
			if (!right || !eat(p, 'E'))
				return 0;
		} else if (c2 == 'w' && c == 'D') {
			right = parmlist(p);
			if (!right || !eat(p, 'E'))
				return 0;
		}
		unsigned q = mk(p, kind, 0, right);
		if (!q)
			return 0;
		fill(p, head, *hole, q);
		*hole = q;
	}
	/* Qualifiers before a function type qualify its "this". */
	if (!member_fn && peek(p) == 'F') {
		for (unsigned q = *head; q; q = q == *hole ? 0 : N(p, q)->l) {
			struct dm_node *n = N(p, q);
			if (n->kind == K_RESTRICT || n->kind == K_VOLATILE || n->kind == K_CONST)
				n->kind = (uint8_t)(n->kind - K_RESTRICT + K_RESTRICT_THIS);
		}
	}
	return 1;
}

/* <ref-qualifier> ::= R | O, around SUB. */
static unsigned ref_qualifier(struct parser *p, unsigned sub)
{
	char c = peek(p);
	if (c != 'R' && c != 'O')
		return sub;
	skip(p, 1);
	return mk(p, c == 'R' ? K_REF_THIS : K_RREF_THIS, sub, 0);
}

/* ---- Types ---- */

/* <type>+ of a function: its parameters (a lone void printed as none). */
static unsigned parmlist(struct parser *p)
{
	unsigned head = 0, tail = 0;
	for (;;) {
		char c = peek(p);
		if (c == 0 || c == 'E' || c == '.')
			break;
		if ((c == 'R' || c == 'O') && peek2(p) == 'E')
			break; /* a ref-qualifier of the function */
		unsigned t = type(p);
		if (!t || !append(p, K_ARGLIST, t, &head, &tail))
			return 0;
	}
	if (!head)
		return 0;
	struct dm_node *h = N(p, head);
	if (!h->r && kind_of(p, h->l) == K_BUILTIN && builtins[N(p, h->l)->aux].print == PR_VOID)
		h->l = 0;
	return head;
}

/* <bare-function-type> ::= [J] <type>+ */
static unsigned bare_function_type(struct parser *p, int has_ret)
{
	unsigned ret = 0;
	if (eat(p, 'J'))
		has_ret = 1;
	if (has_ret && !(ret = type(p)))
		return 0;
	unsigned tl = parmlist(p);
	return tl ? mk(p, K_FUNCTION_TYPE, ret, tl) : 0;
}

/* <function-type> ::= F [Y] <bare-function-type> [<ref-qualifier>] E */
static unsigned function_type(struct parser *p)
{
	if (!eat(p, 'F'))
		return 0;
	eat(p, 'Y');
	unsigned r = bare_function_type(p, 1);
	r = ref_qualifier(p, r);
	return eat(p, 'E') ? r : 0;
}

/* <array-type> ::= A [<number> | <expression>] _ <type> */
static unsigned array_type(struct parser *p)
{
	unsigned dim = 0;
	skip(p, 1);
	if (is_digit(peek(p))) {
		unsigned at = p->pos;
		while (is_digit(peek(p)))
			skip(p, 1);
		dim = mk_name(p, at, p->pos - at);
		if (!dim)
			return 0;
	} else if (peek(p) != '_') {
		if (!(dim = expression(p)))
			return 0;
	}
	if (!eat(p, '_'))
		return 0;
	return comp(p, K_ARRAY, dim, type(p));
}

/* <vector-type> ::= Dv <number> _ <type> | Dv _ <expression> _ <type> */
static unsigned vector_type(struct parser *p)
{
	unsigned dim = eat(p, '_') ? expression(p) : number_node(p);
	if (!dim || !eat(p, '_'))
		return 0;
	return comp(p, K_VECTOR, dim, type(p));
}

/* <pointer-to-member-type> ::= M <class type> <member type> */
static unsigned ptrmem_type(struct parser *p)
{
	skip(p, 1);
	unsigned cl = type(p);
	if (!cl)
		return 0;
	unsigned mem = type(p);
	return mem ? mk(p, K_PTRMEM, cl, mem) : 0;
}

static unsigned builtin(struct parser *p, unsigned b)
{
	return mk_aux(p, K_BUILTIN, b, 0, 0);
}

/* DF <bits> _ is _Float<bits>, DF <bits> x _Float<bits>x, DF16b
 * std::bfloat16_t. */
static unsigned float_type(struct parser *p)
{
	int bits = number(p);
	if (eat(p, 'b'))
		return bits == 16 ? builtin(p, B_BFLOAT16) : 0;
	char suffix = peek(p);
	if (suffix != 'x' && suffix != '_')
		return 0;
	skip(p, 1);
	unsigned r = mk_num(p, K_FLOATN, bits);
	if (r)
		N(p, r)->aux = suffix == 'x';
	return r;
}

/* The D-prefixed types; *CAN_SUBST says whether it is a candidate. */
static unsigned d_type(struct parser *p, int *can_subst)
{
	unsigned r;
	skip(p, 1);
	*can_subst = 0;
	switch (next(p)) {
	case 'T':
	case 't':
		r = comp(p, K_DECLTYPE, expression(p), 0);
		if (r && next(p) != 'E')
			r = 0;
		*can_subst = 1;
		return r;
	case 'p':
		*can_subst = 1;
		return comp(p, K_PACK, type(p), 0);
	case 'a': return sname(p, S_AUTO);
	case 'c': return sname(p, S_DECLTYPE_AUTO);
	case 'f': return builtin(p, B_DEC32);
	case 'd': return builtin(p, B_DEC64);
	case 'e': return builtin(p, B_DEC128);
	case 'h': return builtin(p, B_HALF);
	case 'u': return builtin(p, B_CHAR8);
	case 's': return builtin(p, B_CHAR16);
	case 'i': return builtin(p, B_CHAR32);
	case 'n': return builtin(p, B_NULLPTR);
	case 'F': return float_type(p);
	case 'v':
		*can_subst = 1;
		return vector_type(p);
	default: return 0;
	}
}

/* T_ as a type: a template template parameter may take arguments. */
static unsigned tparam_type(struct parser *p)
{
	unsigned r = template_param(p);
	if (peek(p) != 'I')
		return r;
	if (!p->in_conv) {
		if (!add_sub(p, r))
			return 0;
		return comp(p, K_TEMPLATE, r, template_args(p));
	}
	/* In a conversion operator's type the arguments may be the
	 * operator's own: they are the parameter's only if more follow. */
	unsigned pos = p->pos, used = p->t->used, nsubs = p->nsubs;
	unsigned args = template_args(p);
	if (peek(p) == 'I') {
		if (!add_sub(p, r))
			return 0;
		return comp(p, K_TEMPLATE, r, args);
	}
	p->pos = pos;
	p->t->used = used;
	p->nsubs = nsubs;
	return r;
}

/* A type after <CV-qualifiers>: the qualified type is a candidate, the
 * unqualified one too, but no partly qualified one. */
static unsigned qualified_type(struct parser *p)
{
	unsigned head, hole;
	if (!cv_qualifiers(p, &head, &hole, 0))
		return 0;
	/* Qualifiers of a function type apply to "this": the unqualified
	 * function type is no candidate. */
	unsigned inner = peek(p) == 'F' ? function_type(p) : type(p);
	if (!inner)
		return 0;
	fill(p, &head, hole, inner);
	unsigned k = kind_of(p, inner);
	if (k == K_RREF_THIS || k == K_REF_THIS) {
		/* The ref-qualifier goes outside the cv-qualifiers. */
		unsigned fn = N(p, inner)->l;
		N(p, inner)->l = (uint16_t)head;
		head = inner;
		fill(p, &head, hole, fn);
	}
	return add_sub(p, head) ? head : 0;
}

static int next_is_qual(const struct parser *p)
{
	char c = peek(p), c2 = peek2(p);
	return c == 'r' || c == 'V' || c == 'K' ||
	       (c == 'D' && (c2 == 'x' || c2 == 'o' || c2 == 'O' || c2 == 'w'));
}

static unsigned type_1(struct parser *p)
{
	if (next_is_qual(p))
		return qualified_type(p);
	char c = peek(p);
	unsigned r;
	int can_subst = 1;
	if (is_lower(c) && c != 'k' && c != 'p' && c != 'q' && c != 'r' && c != 'u') {
		skip(p, 1);
		return builtin(p, (unsigned)(c - 'a'));
	}
	switch (c) {
	case 'u':
		skip(p, 1);
		r = comp(p, K_VENDOR_TYPE, source_name(p), 0);
		break;
	case 'F': r = function_type(p); break;
	case 'N':
	case 'Z': r = name(p); break;
	case 'A': r = array_type(p); break;
	case 'M': r = ptrmem_type(p); break;
	case 'T': r = tparam_type(p); break;
	case 'S': {
		char c2 = peek2(p);
		if (is_digit(c2) || c2 == '_' || is_upper(c2)) {
			r = substitution(p, 0);
			if (peek(p) == 'I')
				r = comp(p, K_TEMPLATE, r, template_args(p));
			else
				can_subst = 0;
		} else {
			r = name(p);
			if (r && kind_of(p, r) == K_SUBSTD)
				can_subst = 0;
		}
		break;
	}
	case 'O':
	case 'P':
	case 'R':
	case 'C':
	case 'G': {
		static const char codes[] = "OPRCG";
		static const uint8_t kinds[] = {K_RREF, K_POINTER, K_REF, K_COMPLEX, K_IMAGINARY};
		unsigned k = 0;
		while (codes[k] != c)
			k++;
		skip(p, 1);
		r = comp(p, kinds[k], type(p), 0);
		break;
	}
	case 'U': {
		skip(p, 1);
		unsigned q = source_name(p);
		if (peek(p) == 'I')
			q = comp(p, K_TEMPLATE, q, template_args(p));
		unsigned t = type(p);
		r = comp(p, K_VENDOR_QUAL, t, q);
		break;
	}
	case 'D':
		r = d_type(p, &can_subst);
		break;
	default:
		if (!is_digit(c))
			return 0;
		r = name(p);
		break;
	}
	if (can_subst && !add_sub(p, r))
		return 0;
	return r;
}

static unsigned type(struct parser *p)
{
	if (!enter(p))
		return 0;
	return leave(p, type_1(p));
}

/* ---- Template arguments and expressions ---- */

/* <template-args> ::= I <template-arg>* E (J for a pack). */
static unsigned template_args(struct parser *p)
{
	if (peek(p) != 'I' && peek(p) != 'J')
		return 0;
	skip(p, 1);
	return template_args_1(p);
}

static unsigned template_args_2(struct parser *p)
{
	/* The arguments do not change which name a constructor takes. */
	unsigned hold = p->last_name;
	if (eat(p, 'E'))
		return mk(p, K_TARGLIST, 0, 0);
	unsigned head = 0, tail = 0;
	do {
		unsigned a = template_arg(p);
		if (!a || !append(p, K_TARGLIST, a, &head, &tail))
			return 0;
	} while (!eat(p, 'E'));
	p->last_name = hold;
	return head;
}

static unsigned template_args_1(struct parser *p)
{
	if (!enter(p))
		return 0;
	return leave(p, template_args_2(p));
}

static unsigned expr_primary(struct parser *p);

/* <template-arg> ::= <type> | X <expression> E | <expr-primary> | J ... E */
static unsigned template_arg(struct parser *p)
{
	switch (peek(p)) {
	case 'X': {
		skip(p, 1);
		unsigned r = expression(p);
		return eat(p, 'E') ? r : 0;
	}
	case 'L': return expr_primary(p);
	case 'I':
	case 'J': return template_args(p);
	default: return type(p);
	}
}

/* Expressions up to TERM, as an argument list. */
static unsigned exprlist(struct parser *p, char term)
{
	if (eat(p, term))
		return mk(p, K_ARGLIST, 0, 0);
	unsigned head = 0, tail = 0;
	do {
		unsigned e = expression(p);
		if (!e || !append(p, K_ARGLIST, e, &head, &tail))
			return 0;
	} while (!eat(p, term));
	return head;
}

static unsigned mangled_name(struct parser *p, int top);

/* <expr-primary> ::= L <type> <value> E | L <mangled-name> E */
static unsigned expr_primary(struct parser *p)
{
	unsigned r;
	if (!eat(p, 'L'))
		return 0;
	if (peek(p) == '_' || peek(p) == 'Z') {
		r = mangled_name(p, 0);
	} else {
		unsigned t = type(p);
		if (!t)
			return 0;
		if (kind_of(p, t) == K_BUILTIN && N(p, t)->aux == B_NULLPTR && eat(p, 'E'))
			return t;
		unsigned kind = eat(p, 'n') ? K_LITERAL_NEG : K_LITERAL;
		unsigned at = p->pos;
		while (peek(p) != 'E') {
			if (!peek(p))
				return 0;
			skip(p, 1);
		}
		r = comp(p, kind, t, mk_name(p, at, p->pos - at));
	}
	return eat(p, 'E') ? r : 0;
}

static int is_new_cast(unsigned op)
{
	const char *c = ops[op].code;
	return c[1] == 'c' && (c[0] == 's' || c[0] == 'd' || c[0] == 'c' || c[0] == 'r');
}

/* A name used as an expression, with its template arguments. */
static unsigned name_expr(struct parser *p)
{
	unsigned nm = unqualified_name(p, 0);
	if (nm && peek(p) == 'I')
		return comp(p, K_TEMPLATE, nm, template_args(p));
	return nm;
}

static unsigned unary_expr(struct parser *p, unsigned op, int is_op)
{
	unsigned operand;
	int suffix = 0;
	const char *code = is_op ? ops[N(p, op)->aux].code : "";
	if (is_op && (code[0] == 'p' || code[0] == 'm') && code[1] == code[0])
		suffix = !eat(p, '_'); /* pp_ and mm_ are the prefix forms */
	if (kind_of(p, op) == K_CAST && eat(p, '_'))
		operand = exprlist(p, 'E');
	else if (is_op && code[0] == 's' && code[1] == 'P')
		operand = template_args_1(p);
	else
		operand = expression_1(p);
	if (suffix)
		operand = comp(p, K_BINARY_ARGS, operand, operand);
	return comp(p, K_UNARY, op, operand);
}

static unsigned binary_expr(struct parser *p, unsigned op)
{
	unsigned o = N(p, op)->aux, left, right;
	const char *code = ops[o].code;
	if (is_new_cast(o))
		left = type(p);
	else if (code[0] == 'f')
		left = operator_name(p); /* a fold */
	else if (op_is(o, "di"))
		left = unqualified_name(p, 0);
	else
		left = expression_1(p);
	if (op_is(o, "cl"))
		right = exprlist(p, 'E');
	else if (op_is(o, "dt") || op_is(o, "pt"))
		right = ((peek(p) == 'g' || peek(p) == 's') && peek2(p) == (peek(p) == 'g' ? 's' : 'r'))
				? expression_1(p)
				: name_expr(p);
	else
		right = expression_1(p);
	return comp(p, K_BINARY, op, comp(p, K_BINARY_ARGS, left, right));
}

static unsigned trinary_expr(struct parser *p, unsigned op)
{
	unsigned o = N(p, op)->aux, first, second, third;
	const char *code = ops[o].code;
	if (op_is(o, "qu") || op_is(o, "dX")) {
		first = expression_1(p);
		second = expression_1(p);
		third = expression_1(p);
		if (!third)
			return 0;
	} else if (code[0] == 'f') {
		first = operator_name(p);
		second = expression_1(p);
		third = expression_1(p);
		if (!third)
			return 0;
	} else if (code[0] == 'n') {
		/* new ::= nw <expression>* _ <type> [pi <expression>* | il ...] E */
		first = exprlist(p, '_');
		second = type(p);
		if (eat(p, 'E'))
			third = 0;
		else if (peek(p) == 'p' && peek2(p) == 'i') {
			skip(p, 2);
			third = exprlist(p, 'E');
		} else if (peek(p) == 'i' && peek2(p) == 'l')
			third = expression_1(p);
		else
			return 0;
	} else {
		return 0;
	}
	unsigned a2 = comp(p, K_TRINARY_ARG2, second, third);
	return comp(p, K_TRINARY, op, comp(p, K_TRINARY_ARG1, first, a2));
}

static unsigned operator_expr(struct parser *p)
{
	unsigned op = operator_name(p);
	if (!op)
		return 0;
	unsigned k = kind_of(p, op), args;
	if (k == K_OPERATOR) {
		if (op_is(N(p, op)->aux, "st"))
			return comp(p, K_UNARY, op, type(p));
		args = ops[N(p, op)->aux].args;
	} else if (k == K_EXTOP) {
		args = N(p, op)->aux;
	} else if (k == K_CAST) {
		args = 1;
	} else {
		return 0;
	}
	switch (args) {
	case 0: return comp(p, K_NULLARY, op, 0);
	case 1: return unary_expr(p, op, k == K_OPERATOR);
	case 2: return k == K_OPERATOR ? binary_expr(p, op) : 0;
	case 3: return k == K_OPERATOR ? trinary_expr(p, op) : 0;
	default: return 0;
	}
}

/* <unresolved-name> ::= sr <qualifier>+ E <name> | sr <type> <name>:
 * the old form and the new overlap, and the new is tried first (the
 * whole name is parsed again with the old one if that fails). */
static unsigned unresolved_name(struct parser *p)
{
	unsigned scope;
	skip(p, 2);
	char c = peek(p);
	if (p->unresolved && (is_digit(c) || is_lower(c) || c == 'C' || c == 'U' || c == 'L')) {
		p->unresolved = -1;
		scope = prefix(p, 0);
		eat(p, 'E');
	} else {
		scope = type(p);
	}
	unsigned nm = unqualified_name(p, scope);
	if (peek(p) == 'I')
		nm = comp(p, K_TEMPLATE, nm, template_args(p));
	return nm;
}

static unsigned expression_2(struct parser *p)
{
	char c = peek(p), c2 = peek2(p);
	if (c == 'L')
		return expr_primary(p);
	if (c == 'T')
		return template_param(p);
	if (c == 's' && c2 == 'r')
		return unresolved_name(p);
	if (c == 's' && c2 == 'p') {
		skip(p, 2);
		return comp(p, K_PACK, expression_1(p), 0);
	}
	if (c == 'f' && c2 == 'p') {
		/* A function parameter: fpT is "this", fp<n>_ the n-th. */
		int index = 0;
		skip(p, 2);
		if (!eat(p, 'T')) {
			index = compact_number(p);
			if (index < 0 || index == INT32_MAX)
				return 0;
			index++;
		}
		return mk_num(p, K_FPARAM, index);
	}
	if (is_digit(c) || (c == 'o' && c2 == 'n')) {
		if (c == 'o')
			skip(p, 2);
		return name_expr(p);
	}
	if ((c == 'i' || c == 't') && c2 == 'l') {
		/* A braced initializer list, typed or not. */
		unsigned t = 0;
		skip(p, 2);
		if (c == 't')
			t = type(p);
		if (!peek(p) || !peek2(p))
			return 0;
		return comp(p, K_INITLIST, t, exprlist(p, 'E'));
	}
	return operator_expr(p);
}

static unsigned expression_1(struct parser *p)
{
	if (!enter(p))
		return 0;
	return leave(p, expression_2(p));
}

static unsigned expression(struct parser *p)
{
	uint8_t was = p->in_expr;
	p->in_expr = 1;
	unsigned r = expression_1(p);
	p->in_expr = was;
	return r;
}

/* ---- Names and encodings ---- */

/* <nested-name> ::= N [<CV-qualifiers>] [<ref-qualifier>] <prefix> E */
static unsigned nested_name(struct parser *p)
{
	unsigned head, hole;
	skip(p, 1);
	if (!cv_qualifiers(p, &head, &hole, 1))
		return 0;
	unsigned rq = ref_qualifier(p, 0);
	unsigned pre = prefix(p, 1);
	if (!pre)
		return 0;
	fill(p, &head, hole, pre);
	if (rq) {
		N(p, rq)->l = (uint16_t)head;
		head = rq;
	}
	return eat(p, 'E') ? head : 0;
}

/* <local-name> ::= Z <encoding> E <name> [<discriminator>]
 *              ::= Z <encoding> E s [<discriminator>]
 *              ::= Z <encoding> E d [<number>] _ <name> */
static unsigned local_name(struct parser *p)
{
	skip(p, 1);
	unsigned fn = encoding(p, 0), nm;
	if (!fn || !eat(p, 'E'))
		return 0;
	if (eat(p, 's')) {
		if (!discriminator(p))
			return 0;
		nm = sname(p, S_STRING_LITERAL);
	} else {
		int num = -1;
		if (eat(p, 'd') && (num = compact_number(p)) < 0)
			return 0;
		nm = name(p);
		if (nm && kind_of(p, nm) != K_LAMBDA && kind_of(p, nm) != K_UNNAMED &&
		    !discriminator(p))
			return 0;
		if (num >= 0 && num <= 0xffff)
			nm = mk(p, K_DEFAULT_ARG, nm, (unsigned)num);
		else if (num >= 0)
			return 0;
	}
	/* The enclosing function's return type is not printed. */
	if (kind_of(p, fn) == K_TYPED && kind_of(p, N(p, fn)->r) == K_FUNCTION_TYPE)
		N(p, N(p, fn)->r)->l = 0;
	return comp(p, K_LOCAL, fn, nm);
}

/* <name> ::= <nested-name> | <local-name> | <unscoped-name>
 *        | <unscoped-template-name> <template-args> */
static unsigned name(struct parser *p)
{
	unsigned dc;
	switch (peek(p)) {
	case 'N': return nested_name(p);
	case 'Z': return local_name(p);
	case 'U': return unqualified_name(p, 0);
	case 'S': {
		int subst = peek2(p) != 't';
		if (subst) {
			dc = substitution(p, 0);
		} else {
			skip(p, 2);
			unsigned std = sname(p, S_STD);
			dc = comp(p, K_QUAL, std, unqualified_name(p, 0));
		}
		if (peek(p) == 'I') {
			if (!subst && !add_sub(p, dc))
				return 0;
			dc = comp(p, K_TEMPLATE, dc, template_args(p));
		}
		return dc;
	}
	default:
		dc = unqualified_name(p, 0);
		if (peek(p) == 'I') {
			if (!add_sub(p, dc))
				return 0;
			dc = comp(p, K_TEMPLATE, dc, template_args(p));
		}
		return dc;
	}
}

/* <call-offset> ::= h <number> _ | v <number> _ <number> _ */
static int call_offset(struct parser *p, char c)
{
	if (!c)
		c = next(p);
	if (c == 'h') {
		number(p);
	} else if (c == 'v') {
		number(p);
		if (!eat(p, '_'))
			return 0;
		number(p);
	} else {
		return 0;
	}
	return eat(p, '_');
}

static unsigned special(struct parser *p, unsigned what, unsigned child)
{
	return child ? mk_aux(p, K_SPECIAL, what, child, 0) : 0;
}

/* <special-name> ::= T[VTISF] <type> | T[HW] <name> | Th/Tv/Tc thunks
 * | TC construction vtable | TA <template-arg> | GV <name> | GR <name>
 * | GA <encoding> | GT[nt] <encoding> */
static unsigned special_name(struct parser *p)
{
	if (eat(p, 'T')) {
		char c = next(p);
		switch (c) {
		case 'V': return special(p, SP_VTABLE, type(p));
		case 'T': return special(p, SP_VTT, type(p));
		case 'I': return special(p, SP_TYPEINFO, type(p));
		case 'S': return special(p, SP_TYPEINFO_NAME, type(p));
		case 'F': return special(p, SP_TYPEINFO_FN, type(p));
		case 'J': return special(p, SP_JAVA_CLASS, type(p));
		case 'H': return special(p, SP_TLS_INIT, name(p));
		case 'W': return special(p, SP_TLS_WRAPPER, name(p));
		case 'A': return special(p, SP_TPARM_OBJ, template_arg(p));
		case 'h':
		case 'v':
			if (!call_offset(p, c))
				return 0;
			return special(p, c == 'h' ? SP_THUNK : SP_VIRTUAL_THUNK, encoding(p, 0));
		case 'c':
			if (!call_offset(p, 0) || !call_offset(p, 0))
				return 0;
			return special(p, SP_COVARIANT_THUNK, encoding(p, 0));
		case 'C': {
			unsigned derived = type(p);
			if (number(p) < 0 || !eat(p, '_'))
				return 0;
			unsigned base = type(p);
			return comp(p, K_CTORVT, base, derived);
		}
		default: return 0;
		}
	}
	if (eat(p, 'G')) {
		switch (next(p)) {
		case 'V': return special(p, SP_GUARD, name(p));
		case 'R': {
			unsigned nm = name(p);
			return comp(p, K_REFTEMP, nm, number_node(p));
		}
		case 'A': return special(p, SP_HIDDEN_ALIAS, encoding(p, 0));
		case 'T':
			if (next(p) == 'n')
				return special(p, SP_NONTX_CLONE, encoding(p, 0));
			return special(p, SP_TX_CLONE, encoding(p, 0));
		default: return 0;
		}
	}
	return 0;
}

/* Whether a function's name says its type has a return type: a template
 * function's does, unless it is a constructor, destructor or
 * conversion. */
static int has_return_type(const struct parser *p, unsigned dc)
{
	for (;;) {
		unsigned k = kind_of(p, dc);
		if (k == K_LOCAL)
			dc = p->t->n[dc].r;
		else if (is_fnqual(k))
			dc = p->t->n[dc].l;
		else
			break;
	}
	if (kind_of(p, dc) != K_TEMPLATE)
		return 0;
	for (dc = p->t->n[dc].l;;) {
		unsigned k = kind_of(p, dc);
		if (k == K_QUAL || k == K_LOCAL)
			dc = p->t->n[dc].r;
		else
			return !(k == K_CTOR || k == K_DTOR || k == K_CONVERSION);
	}
}

/* <encoding> ::= <function name> <bare-function-type> | <data name>
 *            | <special-name> */
static unsigned encoding_1(struct parser *p, int top)
{
	char c = peek(p);
	if (c == 'G' || c == 'T')
		return special_name(p);
	unsigned dc = name(p);
	c = peek(p);
	if (!dc || c == 0 || c == 'E')
		return dc;
	unsigned ft = bare_function_type(p, has_return_type(p, dc));
	if (!ft)
		return 0;
	/* A local entity's function: its return type is not printed. */
	if (!top && kind_of(p, dc) == K_LOCAL && kind_of(p, ft) == K_FUNCTION_TYPE)
		N(p, ft)->l = 0;
	return comp(p, K_TYPED, dc, ft);
}

static unsigned encoding(struct parser *p, int top)
{
	if (!enter(p))
		return 0;
	return leave(p, encoding_1(p, top));
}

/* <clone-suffix> ::= [. <lowercase, digit or _>+] [. <digit>+]* */
static unsigned clone_suffix(struct parser *p, unsigned enc)
{
	const char *s = p->s;
	unsigned at = p->pos, e = at;
	if (s[e] == '.' && (is_lower(s[e + 1]) || is_digit(s[e + 1]) || s[e + 1] == '_')) {
		e += 2;
		while (is_lower(s[e]) || is_digit(s[e]) || s[e] == '_')
			e++;
	}
	while (s[e] == '.' && is_digit(s[e + 1])) {
		e += 2;
		while (is_digit(s[e]))
			e++;
	}
	p->pos = e;
	return comp(p, K_CLONE, enc, mk_name(p, at, e - at));
}

/* <mangled-name> ::= _Z <encoding> [<clone-suffix>]*; inside an
 * expression the _ may be missing (an old g++ bug). */
static unsigned mangled_name(struct parser *p, int top)
{
	if (!eat(p, '_') && top)
		return 0;
	if (!eat(p, 'Z'))
		return 0;
	unsigned r = encoding(p, top);
	while (top && r && peek(p) == '.' &&
	       (is_lower(peek2(p)) || peek2(p) == '_' || is_digit(peek2(p))))
		r = clone_suffix(p, r);
	return r;
}

/* _GLOBAL_[._$][ID]_<name>: a translation unit's static constructors or
 * destructors, named after a symbol that may be mangled. */
static unsigned global_cdtors(struct parser *p)
{
	unsigned what = p->s[9] == 'I' ? SP_GLOBAL_CTORS : SP_GLOBAL_DTORS, r;
	p->pos = 11;
	if (peek(p) == '_' && peek2(p) == 'Z') {
		skip(p, 2);
		r = encoding(p, 0);
	} else {
		r = mk_name(p, p->pos, p->len - p->pos);
	}
	p->pos = p->len;
	return special(p, what, r);
}

static int is_global_cdtors(const char *s, unsigned len)
{
	static const char g[] = "_GLOBAL_";
	if (len < 11)
		return 0;
	for (unsigned i = 0; i < 8; i++)
		if (s[i] != g[i])
			return 0;
	return (s[8] == '.' || s[8] == '_' || s[8] == '$') && (s[9] == 'D' || s[9] == 'I') &&
	       s[10] == '_';
}

static unsigned parse(struct parser *p)
{
	const char *s = p->s;
	unsigned len = p->len;
	p->t->used = 1; /* node 0 is "none" */
	if (len >= 2 && s[0] == '_' && s[1] == 'Z')
		return mangled_name(p, 1);
	if (is_global_cdtors(s, len))
		return global_cdtors(p);
	return 0;
}

int sfb_dm_parse_cxx(const char *s, unsigned len, struct dm_tree *t, struct sfb_demangle_usage *u)
{
	struct parser p = {.s = s, .len = len, .t = t, .unresolved = 1};
	t->s = s;
	unsigned root = parse(&p);
	if ((!root || p.pos != len) && p.unresolved < 0) {
		/* The second parse spends what is left of the budgets. */
		p = (struct parser){.s = s, .len = len, .t = t, .max_depth = p.max_depth, .steps = p.steps};
		root = parse(&p);
	}
	if (u) {
		u->nodes = t->used;
		u->subs = p.nsubs;
		u->parse_depth = p.max_depth;
		u->parse_steps = p.steps;
	}
	return p.pos == len ? (int)root : 0;
}

/* ---- Printer ---- */

/* The printer recurses once per level of the tree: each case in its own
 * function keeps the frames on that path small, so that the depth budget
 * bounds the stack. */
#define NOINLINE __attribute__((noinline))

/* The templates whose arguments template parameters refer to, innermost
 * first. */
struct tpl {
	const struct tpl *next;
	unsigned decl;
};

/* Modifiers (pointer, reference, qualifiers, function and array types)
 * waiting to be printed around a declarator, innermost first. */
struct mod {
	struct mod *next;
	unsigned node;
	int printed;
	const struct tpl *tpl;
};

struct printer {
	const struct dm_tree *t;
	struct dm_node *n; /* t->n, writable: the loop guard counts */
	char *out;
	size_t size, len; /* LEN may pass SIZE: see put() */
	char last; /* the last character appended (kept over a trimmed ", ") */
	int err;
	const struct tpl *tpl;
	struct mod *mods;
	int pack_index, lambda_arg;
	unsigned cur_template;
	unsigned depth, max_depth, steps;
};

/* Append C.  Past the buffer's end the length still counts (and nothing
 * is stored): a trimmed ", " may bring the text back into the buffer,
 * and whether it fits is known only at the end. */
static void put(struct printer *r, char c)
{
	if (r->err)
		return;
	if (r->len + 1 < r->size)
		r->out[r->len] = c;
	r->len++;
	r->last = c;
}

static void puts_n(struct printer *r, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(r, s[i]);
}

static void puts_z(struct printer *r, const char *s)
{
	while (*s)
		put(r, *s++);
}

static void put_num(struct printer *r, long v)
{
	char b[24];
	int i = 0;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
	if (v < 0)
		put(r, '-');
	do
		b[i++] = (char)('0' + u % 10);
	while ((u /= 10) && i < (int)sizeof b);
	while (i > 0)
		put(r, b[--i]);
}

static void print(struct printer *r, unsigned dc);

static struct mod *push_mod(struct printer *r, struct mod *m, unsigned node)
{
	m->next = r->mods;
	m->node = node;
	m->printed = 0;
	m->tpl = r->tpl;
	r->mods = m;
	return m;
}

static unsigned L(const struct printer *r, unsigned i) { return r->n[i].l; }
static unsigned R(const struct printer *r, unsigned i) { return r->n[i].r; }
static unsigned K(const struct printer *r, unsigned i) { return r->n[i].kind; }

/* The I-th element of a template argument list, or the list if I < 0. */
static unsigned tpl_arg_index(const struct printer *r, unsigned args, int i)
{
	if (i < 0)
		return args;
	unsigned a = args;
	for (; a; a = R(r, a)) {
		if (K(r, a) != K_TARGLIST)
			return 0;
		if (i <= 0)
			break;
		--i;
	}
	return i != 0 || !a ? 0 : L(r, a);
}

static unsigned tpl_arg(struct printer *r, unsigned tparam)
{
	if (!r->tpl) {
		r->err = 1;
		return 0;
	}
	return tpl_arg_index(r, R(r, r->tpl->decl), num_of(&r->n[tparam]));
}

/* A template argument pack used in DC, if any. */
static unsigned find_pack(struct printer *r, unsigned dc)
{
	while (dc && !r->err) {
		if (++r->steps > SFB_DEMANGLE_MAX_STEPS || r->depth >= SFB_DEMANGLE_MAX_PRINT_DEPTH) {
			r->err = 1;
			return 0;
		}
		switch (K(r, dc)) {
		case K_TPARAM: {
			unsigned a = tpl_arg(r, dc);
			return a && K(r, a) == K_TARGLIST ? a : 0;
		}
		case K_PACK:
		case K_LAMBDA:
		case K_NAME:
		case K_SNAME:
		case K_TAGGED:
		case K_OPERATOR:
		case K_BUILTIN:
		case K_SUBSTD:
		case K_FPARAM:
		case K_UNNAMED:
		case K_FLOATN:
		case K_DEFAULT_ARG:
		case K_NUMBER:
			return 0;
		case K_EXTOP:
		case K_CTOR:
		case K_DTOR:
			dc = L(r, dc);
			continue;
		default: {
			r->depth++;
			unsigned a = find_pack(r, L(r, dc));
			r->depth--;
			if (a)
				return a;
			dc = R(r, dc);
		}
		}
	}
	return 0;
}

static int pack_length(const struct printer *r, unsigned dc)
{
	int n = 0;
	for (; dc && K(r, dc) == K_TARGLIST && L(r, dc); dc = R(r, dc))
		n++;
	return n;
}

/* The number of template arguments, packs expanded. */
static int args_length(struct printer *r, unsigned dc)
{
	int n = 0;
	for (; dc && K(r, dc) == K_TARGLIST && L(r, dc); dc = R(r, dc)) {
		unsigned e = L(r, dc);
		if (K(r, e) == K_PACK)
			n += pack_length(r, find_pack(r, L(r, e)));
		else
			n++;
	}
	return n;
}

/* An operand: in parentheses unless it is a name or the like. */
static NOINLINE void print_subexpr(struct printer *r, unsigned dc)
{
	unsigned k = K(r, dc);
	int simple = k == K_NAME || k == K_QUAL || k == K_INITLIST || k == K_FPARAM;
	if (!simple)
		put(r, '(');
	print(r, dc);
	if (!simple)
		put(r, ')');
}

static void print_expr_op(struct printer *r, unsigned dc)
{
	if (K(r, dc) == K_OPERATOR)
		puts_z(r, ops[r->n[dc].aux].name);
	else
		print(r, dc);
}

static NOINLINE void print_mod(struct printer *r, unsigned m);
static void print_mod_list(struct printer *r, struct mod *mods, int suffix);
static NOINLINE void print_mod_list_1(struct printer *r, struct mod *mods, int suffix);

/* A function type but its return type: the declarator the modifiers
 * make, in parentheses if any is a pointer or the like, then the
 * parameters, then the qualifiers of "this". */
static NOINLINE void print_function_type(struct printer *r, unsigned dc, struct mod *mods)
{
	int paren = 0, space = 0;
	for (struct mod *m = mods; m && !m->printed; m = m->next) {
		unsigned k = K(r, m->node);
		if (k == K_POINTER || k == K_REF || k == K_RREF) {
			paren = 1;
		} else if (k == K_RESTRICT || k == K_VOLATILE || k == K_CONST || k == K_VENDOR_QUAL ||
			   k == K_COMPLEX || k == K_IMAGINARY || k == K_PTRMEM) {
			space = 1;
			paren = 1;
		}
		if (paren)
			break;
	}
	if (paren) {
		if (!space && r->last != '(' && r->last != '*')
			space = 1;
		if (space && r->last != ' ')
			put(r, ' ');
		put(r, '(');
	}
	struct mod *hold = r->mods;
	r->mods = NULL;
	print_mod_list(r, mods, 0);
	if (paren)
		put(r, ')');
	put(r, '(');
	if (R(r, dc))
		print(r, R(r, dc));
	put(r, ')');
	print_mod_list(r, mods, 1);
	r->mods = hold;
}

/* Function and array modifiers print the rest of the list inside their
 * declarators: a level of depth each, like a node. */
static void print_mod_list(struct printer *r, struct mod *mods, int suffix)
{
	if (r->err)
		return;
	if (r->depth >= SFB_DEMANGLE_MAX_PRINT_DEPTH) {
		r->err = 1;
		return;
	}
	if (++r->depth > r->max_depth)
		r->max_depth = r->depth;
	print_mod_list_1(r, mods, suffix);
	r->depth--;
}

/* An array type but its element type. */
static NOINLINE void print_array_type(struct printer *r, unsigned dc, struct mod *mods)
{
	int space = 1;
	if (mods) {
		int paren = 0;
		for (struct mod *m = mods; m; m = m->next) {
			if (m->printed)
				continue;
			if (K(r, m->node) == K_ARRAY)
				space = 0;
			else
				paren = 1;
			break;
		}
		if (paren)
			puts_z(r, " (");
		print_mod_list(r, mods, 0);
		if (paren)
			put(r, ')');
	}
	if (space)
		put(r, ' ');
	put(r, '[');
	if (L(r, dc))
		print(r, L(r, dc));
	put(r, ']');
}

static NOINLINE void print_local_mod(struct printer *r, unsigned m)
{
	struct mod *hold = r->mods;
	r->mods = NULL;
	print(r, L(r, m));
	r->mods = hold;
	puts_z(r, "::");
	unsigned dc = R(r, m);
	if (K(r, dc) == K_DEFAULT_ARG) {
		puts_z(r, "{default arg#");
		put_num(r, (long)R(r, dc) + 1);
		puts_z(r, "}::");
		dc = L(r, dc);
	}
	while (is_fnqual(K(r, dc)))
		dc = L(r, dc);
	print(r, dc);
}

/* Print the modifiers not yet printed; SUFFIX: those after a function's
 * parameters (its "this" qualifiers) too. */
static NOINLINE void print_mod_list_1(struct printer *r, struct mod *mods, int suffix)
{
	for (; mods && !r->err; mods = mods->next) {
		if (mods->printed || (!suffix && is_fnqual(K(r, mods->node))))
			continue;
		mods->printed = 1;
		const struct tpl *hold = r->tpl;
		r->tpl = mods->tpl;
		unsigned k = K(r, mods->node);
		if (k == K_FUNCTION_TYPE || k == K_ARRAY || k == K_LOCAL) {
			if (k == K_FUNCTION_TYPE)
				print_function_type(r, mods->node, mods->next);
			else if (k == K_ARRAY)
				print_array_type(r, mods->node, mods->next);
			else
				print_local_mod(r, mods->node);
			r->tpl = hold;
			return;
		}
		print_mod(r, mods->node);
		r->tpl = hold;
	}
}

static NOINLINE void print_mod(struct printer *r, unsigned m)
{
	switch (K(r, m)) {
	case K_RESTRICT:
	case K_RESTRICT_THIS: puts_z(r, " restrict"); return;
	case K_VOLATILE:
	case K_VOLATILE_THIS: puts_z(r, " volatile"); return;
	case K_CONST:
	case K_CONST_THIS: puts_z(r, " const"); return;
	case K_TXSAFE: puts_z(r, " transaction_safe"); return;
	case K_NOEXCEPT:
	case K_THROW:
		puts_z(r, K(r, m) == K_NOEXCEPT ? " noexcept" : " throw");
		if (R(r, m)) {
			put(r, '(');
			print(r, R(r, m));
			put(r, ')');
		}
		return;
	case K_VENDOR_QUAL:
		put(r, ' ');
		print(r, R(r, m));
		return;
	case K_POINTER: put(r, '*'); return;
	case K_REF_THIS: put(r, ' '); /* fall through */
	case K_REF: put(r, '&'); return;
	case K_RREF_THIS: put(r, ' '); /* fall through */
	case K_RREF: puts_z(r, "&&"); return;
	case K_COMPLEX: puts_z(r, " _Complex"); return;
	case K_IMAGINARY: puts_z(r, " _Imaginary"); return;
	case K_PTRMEM:
		if (r->last != '(')
			put(r, ' ');
		print(r, L(r, m));
		puts_z(r, "::*");
		return;
	case K_TYPED: print(r, L(r, m)); return;
	case K_VECTOR:
		puts_z(r, " __vector(");
		print(r, L(r, m));
		put(r, ')');
		return;
	default: print(r, m); return;
	}
}

/* A function's name and type: the name goes where the type's declarator
 * is, and qualifiers of "this" after the parameters. */
static NOINLINE void print_typed(struct printer *r, unsigned dc)
{
	struct mod adpm[4];
	struct tpl dpt;
	unsigned i = 0, tn = L(r, dc);
	struct mod *hold = r->mods;
	r->mods = NULL;
	while (tn) {
		if (i >= 4) {
			r->err = 1;
			return;
		}
		push_mod(r, &adpm[i++], tn);
		if (!is_fnqual(K(r, tn)))
			break;
		tn = L(r, tn);
	}
	if (!tn) {
		r->err = 1;
		return;
	}
	/* A class local to a function: the qualifiers on its right apply
	 * here. */
	if (K(r, tn) == K_LOCAL) {
		tn = R(r, tn);
		if (K(r, tn) == K_DEFAULT_ARG)
			tn = L(r, tn);
		while (tn && is_fnqual(K(r, tn))) {
			if (i >= 4) {
				r->err = 1;
				return;
			}
			adpm[i] = adpm[i - 1];
			adpm[i].next = &adpm[i - 1];
			r->mods = &adpm[i];
			adpm[i - 1].node = tn;
			adpm[i - 1].printed = 0;
			adpm[i - 1].tpl = r->tpl;
			i++;
			tn = L(r, tn);
		}
		if (!tn) {
			r->err = 1;
			return;
		}
	}
	int is_tpl = K(r, tn) == K_TEMPLATE;
	if (is_tpl) {
		dpt.next = r->tpl;
		dpt.decl = tn;
		r->tpl = &dpt;
	}
	print(r, R(r, dc));
	if (is_tpl)
		r->tpl = dpt.next;
	while (i > 0) {
		--i;
		if (!adpm[i].printed) {
			put(r, ' ');
			print_mod(r, adpm[i].node);
		}
	}
	r->mods = hold;
}

static NOINLINE void print_template(struct printer *r, unsigned dc)
{
	unsigned hold_cur = r->cur_template;
	struct mod *hold = r->mods;
	r->cur_template = dc;
	r->mods = NULL;
	print(r, L(r, dc));
	if (r->last == '<')
		put(r, ' ');
	put(r, '<');
	print(r, R(r, dc));
	if (r->last == '>')
		put(r, ' ');
	put(r, '>');
	r->mods = hold;
	r->cur_template = hold_cur;
}

static NOINLINE void print_tparam(struct printer *r, unsigned dc)
{
	if (r->lambda_arg) {
		puts_z(r, "auto:");
		put_num(r, (long)num_of(&r->n[dc]) + 1);
		return;
	}
	unsigned a = tpl_arg(r, dc);
	if (a && K(r, a) == K_TARGLIST)
		a = tpl_arg_index(r, a, r->pack_index);
	if (!a) {
		r->err = 1;
		return;
	}
	/* The argument may refer to an outer template's parameters. */
	const struct tpl *hold = r->tpl;
	r->tpl = hold->next;
	print(r, a);
	r->tpl = hold;
}

/* A modifier around a type (pointer, reference, qualifier, ...): pushed,
 * so that a function or array type inside prints it in its declarator. */
static NOINLINE void print_modifier(struct printer *r, unsigned dc, unsigned inner)
{
	struct mod m;
	push_mod(r, &m, dc);
	print(r, inner ? inner : L(r, dc));
	if (!m.printed)
		print_mod(r, dc);
	r->mods = m.next;
}

/* Whether a qualifier of DC's kind waits among the qualifiers just
 * pushed: arrays push the same one twice, and it prints once. */
static int cv_pending(const struct printer *r, unsigned dc)
{
	for (const struct mod *m = r->mods; m; m = m->next) {
		if (m->printed)
			continue;
		unsigned k = K(r, m->node);
		if (k != K_RESTRICT && k != K_VOLATILE && k != K_CONST)
			return 0;
		if (k == K(r, dc))
			return 1;
	}
	return 0;
}

/* A qualifier: skipped while the same one is pending (a run of them,
 * "VVVV", takes no depth), else a modifier. */
static NOINLINE void print_cv(struct printer *r, unsigned dc)
{
	unsigned k = K(r, dc);
	if (!cv_pending(r, dc)) {
		print_modifier(r, dc, 0);
		return;
	}
	do {
		dc = L(r, dc);
		k = K(r, dc);
		if (++r->steps > SFB_DEMANGLE_MAX_STEPS) {
			r->err = 1;
			return;
		}
	} while ((k == K_RESTRICT || k == K_VOLATILE || k == K_CONST) && cv_pending(r, dc));
	print(r, dc);
}

/* References collapse: & to && is &, && to & is &. */
static NOINLINE void print_ref(struct printer *r, unsigned dc)
{
	unsigned sub = L(r, dc), inner = 0;
	if (!r->lambda_arg && K(r, sub) == K_TPARAM) {
		unsigned a = tpl_arg(r, sub);
		if (a && K(r, a) == K_TARGLIST)
			a = tpl_arg_index(r, a, r->pack_index);
		if (!a) {
			r->err = 1;
			return;
		}
		sub = a;
	}
	if (K(r, sub) == K_REF || K(r, sub) == K(r, dc))
		dc = sub;
	else if (K(r, sub) == K_RREF)
		inner = L(r, sub);
	print_modifier(r, dc, inner);
}

static NOINLINE void print_function(struct printer *r, unsigned dc)
{
	if (L(r, dc)) {
		struct mod m;
		push_mod(r, &m, dc);
		print(r, L(r, dc));
		r->mods = m.next;
		if (m.printed)
			return;
		put(r, ' ');
	}
	print_function_type(r, dc, r->mods);
}

static NOINLINE void print_array(struct printer *r, unsigned dc)
{
	struct mod adpm[4];
	struct mod *hold = r->mods;
	unsigned i = 1;
	push_mod(r, &adpm[0], dc);
	/* Qualifiers of the array are the element type's. */
	for (struct mod *m = hold; m; m = m->next) {
		unsigned k = K(r, m->node);
		if (k != K_RESTRICT && k != K_VOLATILE && k != K_CONST)
			break;
		if (m->printed)
			continue;
		if (i >= 4) {
			r->err = 1;
			return;
		}
		adpm[i] = *m;
		adpm[i].next = r->mods;
		r->mods = &adpm[i];
		m->printed = 1;
		i++;
	}
	print(r, R(r, dc));
	r->mods = hold;
	if (adpm[0].printed)
		return;
	while (i > 1)
		print_mod(r, adpm[--i].node);
	print_array_type(r, dc, r->mods);
}

/* A pointer to member or a vector type: the member's or element's type,
 * with this as a modifier. */
static NOINLINE void print_member_or_vector(struct printer *r, unsigned dc)
{
	struct mod m;
	push_mod(r, &m, dc);
	print(r, R(r, dc));
	if (!m.printed)
		print_mod(r, dc);
	r->mods = m.next;
}

/* A list, element by element (not through the right links, which would
 * take a level of depth per element): ", " between elements, except
 * before a tail of elements that print nothing (empty packs). */
static NOINLINE void print_list(struct printer *r, unsigned dc)
{
	size_t cut = SIZE_MAX; /* where the separators before such a tail start */
	unsigned kind = K(r, dc);
	for (unsigned n = dc; n && !r->err; n = R(r, n)) {
		size_t before = r->len;
		if (L(r, n))
			print(r, L(r, n));
		if (r->len != before)
			cut = SIZE_MAX;
		if (!R(r, n))
			break;
		if (K(r, R(r, n)) != kind || ++r->steps > SFB_DEMANGLE_MAX_STEPS) {
			r->err = 1;
			return;
		}
		if (cut == SIZE_MAX)
			cut = r->len;
		puts_z(r, ", ");
	}
	if (cut != SIZE_MAX && !r->err)
		r->len = cut;
}

static NOINLINE void print_operator(struct printer *r, unsigned dc)
{
	const char *nm = ops[r->n[dc].aux].name;
	size_t n = 0;
	while (nm[n])
		n++;
	puts_z(r, "operator");
	if (is_lower(nm[0]))
		put(r, ' ');
	if (nm[n - 1] == ' ')
		n--;
	puts_n(r, nm, n);
}

/* A conversion operator's type sees the enclosing template's
 * parameters, but its own template arguments do not. */
static NOINLINE void print_conversion(struct printer *r, unsigned dc)
{
	struct tpl dpt;
	int pushed = r->cur_template != 0;
	if (pushed) {
		dpt.next = r->tpl;
		dpt.decl = r->cur_template;
		r->tpl = &dpt;
	}
	unsigned t = L(r, dc);
	if (K(r, t) != K_TEMPLATE) {
		print(r, t);
		if (pushed)
			r->tpl = dpt.next;
		return;
	}
	print(r, L(r, t));
	if (pushed)
		r->tpl = dpt.next;
	if (r->last == '<')
		put(r, ' ');
	put(r, '<');
	print(r, R(r, t));
	if (r->last == '>')
		put(r, ' ');
	put(r, '>');
}

static NOINLINE void print_unary(struct printer *r, unsigned dc)
{
	unsigned op = L(r, dc), operand = R(r, dc);
	const char *code = "";
	if (K(r, op) == K_OPERATOR) {
		code = ops[r->n[op].aux].code;
		/* The address of a function: no parameter list. */
		if (code[0] == 'a' && code[1] == 'd' && K(r, operand) == K_TYPED &&
		    K(r, L(r, operand)) == K_QUAL && K(r, R(r, operand)) == K_FUNCTION_TYPE)
			operand = L(r, operand);
		if (K(r, operand) == K_BINARY_ARGS) { /* a suffix operator */
			print_subexpr(r, L(r, operand));
			print_expr_op(r, op);
			return;
		}
	}
	if (code[0] == 's' && code[1] == 'Z') {
		put_num(r, pack_length(r, find_pack(r, operand)));
		return;
	}
	if (code[0] == 's' && code[1] == 'P') {
		put_num(r, args_length(r, operand));
		return;
	}
	if (K(r, op) != K_CAST) {
		print_expr_op(r, op);
	} else {
		put(r, '(');
		print(r, L(r, op));
		put(r, ')');
	}
	if (code[0] == 'g' && code[1] == 's') {
		print(r, operand);
	} else if (code[0] == 's' && code[1] == 't') {
		put(r, '(');
		print(r, operand);
		put(r, ')');
	} else {
		print_subexpr(r, operand);
	}
}

/* C++17 folds: (... op x), (x op ...), (a op ... op x). */
static NOINLINE int print_fold(struct printer *r, unsigned dc)
{
	const char *code = ops[r->n[L(r, dc)].aux].code;
	if (code[0] != 'f')
		return 0;
	unsigned opsn = R(r, dc), op = L(r, opsn), a = R(r, opsn), b = 0;
	if (K(r, a) == K_TRINARY_ARG2) {
		b = R(r, a);
		a = L(r, a);
	}
	int save = r->pack_index;
	r->pack_index = -1;
	switch (code[1]) {
	case 'l':
		puts_z(r, "(...");
		print_expr_op(r, op);
		print_subexpr(r, a);
		put(r, ')');
		break;
	case 'r':
		put(r, '(');
		print_subexpr(r, a);
		print_expr_op(r, op);
		puts_z(r, "...)");
		break;
	case 'L':
	case 'R':
		put(r, '(');
		print_subexpr(r, a);
		print_expr_op(r, op);
		puts_z(r, "...");
		print_expr_op(r, op);
		print_subexpr(r, b);
		put(r, ')');
		break;
	}
	r->pack_index = save;
	return 1;
}

static int is_designator(const struct printer *r, unsigned dc)
{
	if (K(r, dc) != K_BINARY && K(r, dc) != K_TRINARY)
		return 0;
	const char *code = ops[r->n[L(r, dc)].aux].code;
	return code[0] == 'd' && (code[1] == 'i' || code[1] == 'x' || code[1] == 'X');
}

/* Designated initializers: .a=x, [i]=x, [i ... j]=x. */
static NOINLINE int print_designator(struct printer *r, unsigned dc)
{
	if (!is_designator(r, dc))
		return 0;
	char c = ops[r->n[L(r, dc)].aux].code[1];
	unsigned a = L(r, R(r, dc)), b = R(r, R(r, dc));
	put(r, c == 'i' ? '.' : '[');
	print(r, a);
	if (c == 'X') {
		puts_z(r, " ... ");
		print(r, L(r, b));
		b = R(r, b);
	}
	if (c != 'i')
		put(r, ']');
	if (is_designator(r, b)) {
		print(r, b);
	} else {
		put(r, '=');
		print_subexpr(r, b);
	}
	return 1;
}

static NOINLINE void print_binary(struct printer *r, unsigned dc)
{
	unsigned op = L(r, dc), args = R(r, dc);
	if (K(r, args) != K_BINARY_ARGS || K(r, op) != K_OPERATOR) {
		r->err = 1;
		return;
	}
	unsigned o = r->n[op].aux;
	if (is_new_cast(o)) {
		print_expr_op(r, op);
		put(r, '<');
		print(r, L(r, args));
		puts_z(r, ">(");
		print(r, R(r, args));
		put(r, ')');
		return;
	}
	if (print_fold(r, dc) || print_designator(r, dc))
		return;
	/* ">" in parentheses, not to end a template argument list. */
	int gt = ops[o].name[0] == '>' && ops[o].name[1] == 0;
	if (gt)
		put(r, '(');
	unsigned left = L(r, args);
	if (op_is(o, "cl") && K(r, left) == K_TYPED) {
		/* A call: the callee's name without its parameter types. */
		if (K(r, R(r, left)) != K_FUNCTION_TYPE)
			r->err = 1;
		print_subexpr(r, L(r, left));
	} else {
		print_subexpr(r, left);
	}
	if (op_is(o, "ix")) {
		put(r, '[');
		print(r, R(r, args));
		put(r, ']');
	} else {
		if (!op_is(o, "cl"))
			print_expr_op(r, op);
		print_subexpr(r, R(r, args));
	}
	if (gt)
		put(r, ')');
}

static NOINLINE void print_trinary(struct printer *r, unsigned dc)
{
	unsigned op = L(r, dc), a1 = R(r, dc);
	if (K(r, a1) != K_TRINARY_ARG1 || K(r, R(r, a1)) != K_TRINARY_ARG2 || K(r, op) != K_OPERATOR) {
		r->err = 1;
		return;
	}
	if (print_fold(r, dc) || print_designator(r, dc))
		return;
	unsigned first = L(r, a1), second = L(r, R(r, a1)), third = R(r, R(r, a1));
	if (op_is(r->n[op].aux, "qu")) {
		print_subexpr(r, first);
		print_expr_op(r, op);
		print_subexpr(r, second);
		puts_z(r, " : ");
		print_subexpr(r, third);
		return;
	}
	puts_z(r, "new ");
	if (L(r, first)) {
		print_subexpr(r, first);
		put(r, ' ');
	}
	print(r, second);
	if (third)
		print_subexpr(r, third);
}

static NOINLINE void print_literal(struct printer *r, unsigned dc)
{
	unsigned t = L(r, dc), v = R(r, dc);
	int neg = K(r, dc) == K_LITERAL_NEG;
	unsigned pr = K(r, t) == K_BUILTIN ? builtins[r->n[t].aux].print : PR_DEFAULT;
	static const char *const int_suffix[] = {
		[PR_INT] = "", [PR_UNSIGNED] = "u", [PR_LONG] = "l",
		[PR_ULONG] = "ul", [PR_LLONG] = "ll", [PR_ULLONG] = "ull",
	};
	if (pr >= PR_INT && pr <= PR_ULLONG && K(r, v) == K_NAME) {
		if (neg)
			put(r, '-');
		print(r, v);
		puts_z(r, int_suffix[pr]);
		return;
	}
	if (pr == PR_BOOL && K(r, v) == K_NAME && R(r, v) == 1 && !neg) {
		char c = r->t->s[L(r, v)];
		if (c == '0' || c == '1') {
			puts_z(r, c == '1' ? "true" : "false");
			return;
		}
	}
	put(r, '(');
	print(r, t);
	put(r, ')');
	if (neg)
		put(r, '-');
	if (pr == PR_FLOAT)
		put(r, '[');
	print(r, v);
	if (pr == PR_FLOAT)
		put(r, ']');
}

static NOINLINE void print_pack(struct printer *r, unsigned dc)
{
	unsigned a = find_pack(r, L(r, dc));
	if (!a) {
		/* Only function parameter packs: the pattern and "...". */
		print_subexpr(r, L(r, dc));
		puts_z(r, "...");
		return;
	}
	int len = pack_length(r, a);
	for (int i = 0; i < len && !r->err; i++) {
		r->pack_index = i;
		print(r, L(r, dc));
		if (i < len - 1)
			puts_z(r, ", ");
	}
}

static NOINLINE void print_qual(struct printer *r, unsigned dc)
{
	print(r, L(r, dc));
	puts_z(r, "::");
	unsigned nm = R(r, dc);
	if (K(r, nm) == K_DEFAULT_ARG) {
		puts_z(r, "{default arg#");
		put_num(r, (long)R(r, nm) + 1);
		puts_z(r, "}::");
		nm = L(r, nm);
	}
	print(r, nm);
}

static void print_inner(struct printer *r, unsigned dc)
{
	const struct dm_node *n = &r->n[dc];
	switch (n->kind) {
	case K_NAME: puts_n(r, r->t->s + n->l, n->r); return;
	case K_SNAME:
	case K_SUBSTD: puts_z(r, fixed_text[n->aux]); return;
	case K_TAGGED:
		print(r, n->l);
		puts_z(r, "[abi:");
		print(r, n->r);
		put(r, ']');
		return;
	case K_QUAL:
	case K_LOCAL: print_qual(r, dc); return;
	case K_TYPED: print_typed(r, dc); return;
	case K_TEMPLATE: print_template(r, dc); return;
	case K_TPARAM: print_tparam(r, dc); return;
	case K_CTOR: print(r, n->l); return;
	case K_DTOR:
		put(r, '~');
		print(r, n->l);
		return;
	case K_SPECIAL:
		puts_z(r, special_text[n->aux]);
		print(r, n->l);
		return;
	case K_CTORVT:
		puts_z(r, "construction vtable for ");
		print(r, n->l);
		puts_z(r, "-in-");
		print(r, n->r);
		return;
	case K_REFTEMP:
		puts_z(r, "reference temporary #");
		print(r, n->r);
		puts_z(r, " for ");
		print(r, n->l);
		return;
	case K_RESTRICT:
	case K_VOLATILE:
	case K_CONST: print_cv(r, dc); return;
	case K_REF:
	case K_RREF: print_ref(r, dc); return;
	case K_VENDOR_QUAL:
	case K_POINTER:
	case K_COMPLEX:
	case K_IMAGINARY:
	case K_RESTRICT_THIS:
	case K_VOLATILE_THIS:
	case K_CONST_THIS:
	case K_REF_THIS:
	case K_RREF_THIS:
	case K_TXSAFE:
	case K_NOEXCEPT:
	case K_THROW: print_modifier(r, dc, 0); return;
	case K_BUILTIN: puts_z(r, builtins[n->aux].name); return;
	case K_VENDOR_TYPE: print(r, n->l); return;
	case K_FUNCTION_TYPE: print_function(r, dc); return;
	case K_ARRAY: print_array(r, dc); return;
	case K_PTRMEM:
	case K_VECTOR: print_member_or_vector(r, dc); return;
	case K_FLOATN:
		puts_z(r, "_Float");
		put_num(r, num_of(n));
		if (n->aux)
			put(r, 'x');
		return;
	case K_ARGLIST:
	case K_TARGLIST: print_list(r, dc); return;
	case K_INITLIST:
		if (n->l)
			print(r, n->l);
		put(r, '{');
		print(r, n->r);
		put(r, '}');
		return;
	case K_OPERATOR: print_operator(r, dc); return;
	case K_EXTOP:
		puts_z(r, "operator ");
		print(r, n->l);
		return;
	case K_CONVERSION:
		puts_z(r, "operator ");
		print_conversion(r, dc);
		return;
	case K_NULLARY: print_expr_op(r, n->l); return;
	case K_UNARY: print_unary(r, dc); return;
	case K_BINARY: print_binary(r, dc); return;
	case K_TRINARY: print_trinary(r, dc); return;
	case K_LITERAL:
	case K_LITERAL_NEG: print_literal(r, dc); return;
	case K_NUMBER: put_num(r, num_of(n)); return;
	case K_DECLTYPE:
		puts_z(r, "decltype (");
		print(r, n->l);
		put(r, ')');
		return;
	case K_PACK: print_pack(r, dc); return;
	case K_FPARAM:
		if (num_of(n) == 0) {
			puts_z(r, "this");
		} else {
			puts_z(r, "{parm#");
			put_num(r, num_of(n));
			put(r, '}');
		}
		return;
	case K_LAMBDA:
		puts_z(r, "{lambda(");
		r->lambda_arg++;
		print(r, n->l);
		r->lambda_arg--;
		puts_z(r, ")#");
		put_num(r, (long)n->r + 1);
		put(r, '}');
		return;
	case K_UNNAMED:
		puts_z(r, "{unnamed type#");
		put_num(r, (long)num_of(n) + 1);
		put(r, '}');
		return;
	case K_CLONE:
		print(r, n->l);
		puts_z(r, " [clone ");
		print(r, n->r);
		put(r, ']');
		return;
	default: r->err = 1; return;
	}
}

/* Every node printed comes through here: the depth and step budgets, and
 * the guard against a substitution that contains itself. */
static void print(struct printer *r, unsigned dc)
{
	if (r->err)
		return;
	if (!dc || r->n[dc].busy > 1 || r->depth >= SFB_DEMANGLE_MAX_PRINT_DEPTH ||
	    ++r->steps > SFB_DEMANGLE_MAX_STEPS) {
		r->err = 1;
		return;
	}
	r->n[dc].busy++;
	if (++r->depth > r->max_depth)
		r->max_depth = r->depth;
	print_inner(r, dc);
	r->depth--;
	r->n[dc].busy--;
}

int sfb_dm_print_cxx(struct dm_tree *t, unsigned root, char *out, size_t size,
		     struct sfb_demangle_usage *u)
{
	struct printer r = {.t = t, .n = t->n, .out = out, .size = size};
	print(&r, root);
	if (u) {
		u->print_depth = r.max_depth;
		u->steps = r.steps;
	}
	if (r.err || r.len >= size)
		return -1;
	out[r.len] = 0;
	return (int)r.len;
}

/* ---- Entry ---- */

/* NAME's first LEN bytes into OUT: the length, or -1. */
static int demangle_n(const char *name, unsigned len, char *out, size_t size,
		      struct sfb_demangle_usage *u)
{
	/* Rust first, as c++filt: a legacy Rust name is an Itanium one too. */
	int n = sfb_dm_rust(name, len, out, size, u);
	if (n == -2) {
		struct dm_tree t;
		int root = sfb_dm_parse_cxx(name, len, &t, u);
		n = root > 0 ? sfb_dm_print_cxx(&t, (unsigned)root, out, size, u) : -1;
	}
	return n;
}

int sfb_demangle_usage(const char *mangled, char *out, size_t size, struct sfb_demangle_usage *u)
{
	if (u)
		*u = (struct sfb_demangle_usage){0};
	if (!out || size == 0)
		return -1;
	out[0] = 0;
	if (!mangled)
		return -1;
	unsigned len = 0, at = 0;
	while (len <= SFB_DEMANGLE_MAX_INPUT && mangled[len]) {
		if (mangled[len] == '@' && !at)
			at = len;
		len++;
	}
	if (len > SFB_DEMANGLE_MAX_INPUT)
		return -1;
	/* A symbol version (name@VERSION, name@@VERSION) follows the
	 * demangled name as it is, as c++filt prints it. */
	int n = demangle_n(mangled, at ? at : len, out, size, u);
	if (n >= 0 && at) {
		size_t rest = len - at;
		if (rest >= size - (size_t)n) {
			n = -1;
		} else {
			for (size_t i = 0; i < rest; i++)
				out[n + i] = mangled[at + i];
			n += (int)rest;
			out[n] = 0;
		}
	}
	if (n < 0)
		out[0] = 0;
	return n;
}

int sfb_demangle(const char *mangled, char *out, size_t size)
{
	return sfb_demangle_usage(mangled, out, size, NULL);
}
