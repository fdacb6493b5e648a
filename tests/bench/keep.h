/* keep.h - BENCH_KEEP: a function the compiler must not inline, clone or
 * analyse across calls, so that every frame of a benchmark chain is a real
 * call with its own return address.  gcc has noclone and noipa for this;
 * clang has neither and does not clone or propagate through a noinline
 * function that the chain calls through a volatile guard or a function
 * pointer.  The benchmark checks every frame against the return addresses
 * the chain records, so a compiler that broke a chain would show there. */
#ifndef BENCH_KEEP_H
#define BENCH_KEEP_H
#ifdef __clang__
#define BENCH_KEEP __attribute__((noinline))
#else
#define BENCH_KEEP __attribute__((noinline, noclone, noipa))
#endif
#endif
