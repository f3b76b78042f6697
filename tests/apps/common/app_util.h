/* Argument parsing and failure reporting shared by the test programs.
 * Exit codes: 0 success, 1 wrong results, 2 a CUDA call failed, 64 bad arguments. */
#ifndef APP_UTIL_H
#define APP_UTIL_H

#include <stddef.h>

#define APP_EXIT_WRONG_RESULT 1
#define APP_EXIT_CUDA_FAILED 2
#define APP_EXIT_USAGE 64

#ifdef __cplusplus
extern "C" {
#endif

/* Name used in messages; set by main before anything else. */
extern const char *app_program;

/* argv[index] as a number >= min, or `fallback` when absent; exits with a usage
 * message naming `what` when malformed. */
long app_arg(int argc, char **argv, int index, const char *what, long fallback, long min);
/* Reports "<program>: <what> failed: <error> (<code>)" and exits APP_EXIT_CUDA_FAILED. */
void app_fail(const char *what, const char *error, int code);
/* Reports "<program>: <what>" and exits APP_EXIT_WRONG_RESULT. */
void app_wrong(const char *what);
/* Exits APP_EXIT_WRONG_RESULT unless the `n` bytes at `p` all equal `byte`. */
void app_expect_bytes(const void *p, size_t n, unsigned char byte, const char *what);
/* Exits APP_EXIT_WRONG_RESULT unless the `n` bytes at `a` and `b` agree. */
void app_expect_same(const void *a, const void *b, size_t n, const char *what);
/* Fills `n` bytes with a pattern that depends on `seed`. */
void app_fill_pattern(void *p, size_t n, unsigned seed);

#ifdef __cplusplus
}
#endif

#endif
