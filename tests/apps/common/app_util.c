/* Helpers shared by the test programs (see app_util.h). */
#include "app_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *app_program = "app";

long app_arg(int argc, char **argv, int index, const char *what, long fallback, long min)
{
    if (index >= argc) return fallback;
    char *end = NULL;
    errno = 0;
    long value = strtol(argv[index], &end, 10);
    if (errno != 0 || end == argv[index] || *end != '\0' || value < min) {
        fprintf(stderr, "%s: argument %d (%s) must be a number >= %ld, got '%s'\n", app_program,
                index, what, min, argv[index]);
        exit(APP_EXIT_USAGE);
    }
    return value;
}

void app_fail(const char *what, const char *error, int code)
{
    fprintf(stderr, "%s: %s failed: %s (%d)\n", app_program, what, error, code);
    exit(APP_EXIT_CUDA_FAILED);
}

void app_wrong(const char *what)
{
    fprintf(stderr, "%s: wrong result: %s\n", app_program, what);
    exit(APP_EXIT_WRONG_RESULT);
}

void app_expect_bytes(const void *p, size_t n, unsigned char byte, const char *what)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != byte) app_wrong(what);
}

void app_expect_same(const void *a, const void *b, size_t n, const char *what)
{
    if (memcmp(a, b, n) != 0) app_wrong(what);
}

void app_fill_pattern(void *p, size_t n, unsigned seed)
{
    unsigned char *b = p;
    unsigned x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 16);
    }
}
