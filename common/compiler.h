/* Compiler hints: branch weights for the hot path, and what a library
 * built with -fvisibility=hidden exports. */
#ifndef GT_COMPILER_H
#define GT_COMPILER_H

#define GT_LIKELY(x) __builtin_expect(!!(x), 1)
#define GT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* An entry point of libgputrace.so: everything else stays hidden. */
#define GT_EXPORT __attribute__((visibility("default")))

#endif
