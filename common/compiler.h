/* Compiler hints: branch weights for the hot path, what a library built
 * with -fvisibility=hidden exports, and the hot path's stack protection. */
#ifndef GT_COMPILER_H
#define GT_COMPILER_H

#define GT_LIKELY(x) __builtin_expect(!!(x), 1)
#define GT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* An entry point of libgputrace.so: everything else stays hidden. */
#define GT_EXPORT __attribute__((visibility("default")))

/* The functions every intercepted call runs (the wrappers, what they call
 * after the real function, the clock, a GPU time's pair) are built without
 * the canary -fstack-protector-strong gives every function with a local
 * whose address is taken (cmake/hardening.cmake): a few nanoseconds on
 * each call, measured on the launch path (docs/performance.md). They hold
 * no array and nothing filled by a copy, only fixed structures and handles
 * written field by field, so there the canary guards nothing; every other
 * function keeps it. */
#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define GT_NO_STACK_PROTECTOR __attribute__((no_stack_protector))
#endif
#endif
#ifndef GT_NO_STACK_PROTECTOR
#define GT_NO_STACK_PROTECTOR
#endif

#endif
