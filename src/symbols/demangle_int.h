/* What the demangler's parts share (demangle.c, demangle_rust.c). */
#ifndef SFB_DEMANGLE_INT_H
#define SFB_DEMANGLE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "demangle.h"

/* Node kinds of the C++ parse tree.  The function qualifiers
 * K_RESTRICT_THIS..K_THROW are contiguous, and the plain qualifiers
 * K_RESTRICT..K_CONST are in the same order as their "this" forms. */
enum {
	K_NONE,
	K_NAME,		/* l: offset in the input, r: length */
	K_SNAME,	/* aux: a fixed text */
	K_SUBSTD,	/* aux: a fixed text, from a standard abbreviation */
	K_QUAL,		/* l::r */
	K_LOCAL,	/* l (a function)::r */
	K_TYPED,	/* l: a function's name, r: its type */
	K_TEMPLATE,	/* l<r> */
	K_TPARAM,	/* a number: the template parameter's index */
	K_FPARAM,	/* a number: the function parameter's index + 1 */
	K_CTOR,		/* l: the class name; aux: the kind */
	K_DTOR,
	K_SPECIAL,	/* a text (aux), then l */
	K_CTORVT,	/* construction vtable for l-in-r */
	K_REFTEMP,	/* reference temporary #r for l */
	K_RESTRICT,
	K_VOLATILE,
	K_CONST,
	K_RESTRICT_THIS,
	K_VOLATILE_THIS,
	K_CONST_THIS,
	K_REF_THIS,
	K_RREF_THIS,
	K_TXSAFE,
	K_NOEXCEPT,	/* r: the condition, if any */
	K_THROW,	/* r: the types */
	K_VENDOR_QUAL,	/* l: the type, r: the qualifier */
	K_POINTER,
	K_REF,
	K_RREF,
	K_COMPLEX,
	K_IMAGINARY,
	K_BUILTIN,	/* aux: the builtin type */
	K_VENDOR_TYPE,
	K_FUNCTION_TYPE, /* l: the return type, r: the parameters */
	K_ARRAY,	/* l: the dimension, r: the element type */
	K_PTRMEM,	/* l: the class, r: the member's type */
	K_FLOATN,	/* _Float<number>, aux: 1 for the x suffix */
	K_VECTOR,	/* l: the dimension, r: the element type */
	K_ARGLIST,	/* l: an element, r: the rest */
	K_TARGLIST,
	K_INITLIST,	/* l: the type, r: the elements */
	K_OPERATOR,	/* aux: the operator */
	K_EXTOP,	/* aux: operand count, l: the name */
	K_CAST,
	K_CONVERSION,
	K_NULLARY,
	K_UNARY,
	K_BINARY,
	K_BINARY_ARGS,
	K_TRINARY,
	K_TRINARY_ARG1,
	K_TRINARY_ARG2,
	K_LITERAL,	/* l: the type, r: the value's text */
	K_LITERAL_NEG,
	K_NUMBER,
	K_DECLTYPE,
	K_PACK,		/* a pack expansion of l */
	K_LAMBDA,	/* l: the parameters, r: the number */
	K_DEFAULT_ARG,	/* l: the name, r: the number */
	K_UNNAMED,	/* a number */
	K_TAGGED,	/* l[abi:r] */
	K_CLONE,	/* l [clone r] */
	K_COUNT
};

/* 8 bytes a node.  BUSY counts how many times the printer is inside the
 * node: a substitution may not contain itself. */
struct dm_node {
	uint8_t kind, aux, busy, pad;
	uint16_t l, r;
};

struct dm_tree {
	const char *s;
	unsigned used;
	struct dm_node n[SFB_DEMANGLE_MAX_NODES];
};

/* Parse an Itanium name of LEN bytes (S[LEN] is its NUL): the root node,
 * or 0 if it is not one. */
int sfb_dm_parse_cxx(const char *s, unsigned len, struct dm_tree *t, struct sfb_demangle_usage *u);
/* Print the tree from ROOT: the length, or -1. */
int sfb_dm_print_cxx(struct dm_tree *t, unsigned root, char *out, size_t size,
		     struct sfb_demangle_usage *u);
/* A Rust name (legacy or v0) into OUT: the length, -1 if it does not fit
 * or breaks a budget, -2 if it is not a Rust name. */
int sfb_dm_rust(const char *s, unsigned len, char *out, size_t size, struct sfb_demangle_usage *u);

#endif
