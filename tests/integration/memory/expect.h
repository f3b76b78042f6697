/* What a test program expects the report of its run to say, kept as it
 * works and written at its end as JSON (to the file GT_EXPECT names) for
 * check_expect.py to compare with the report. Every figure comes from what
 * the program did (sizes it asked for or was given, files it loaded, its
 * own clock around a call), never from the tracer. Thread-safe. */
#ifndef GT_TEST_EXPECT_H
#define GT_TEST_EXPECT_H

#include <stdbool.h>

/* The memory table's row of pinned host memory. */
#define EXPECT_HOST_ROW (-1)

/* An allocation of `bytes` on a device row, live from now; its free. The
 * program calls expect_alloc after the allocation and expect_free before
 * the free, so that rows' peaks follow the order the calls were made in. */
void expect_alloc(int row, unsigned long long bytes);
void expect_free(int row, unsigned long long bytes);
/* A free of memory the tracer cannot have seen allocated. */
void expect_unknown_free(int row);
/* Every allocation of the row still live goes with its context (the
 * runtime releases its primary context at exit): released, not leaked. */
void expect_context_end(int row);

/* A module load of an image of `kind` ("ptx", "cubin", "fatbin") and size. */
void expect_module(const char *api, const char *kind, unsigned long long bytes);

/* A compilation: `wall_ns` is the program's own measurement around the
 * call (0 when it did not measure). */
void expect_compile(const char *api, const char *name, bool ok, unsigned long long bytes,
                    unsigned long long wall_ns);

/* The compilation of (api, name, ok) just expected was the first record
 * of its program or link (a program verified, then compiled, is one
 * program). A program that calls this has the rows' "programs" and the
 * summary's compile title checked. */
void expect_compile_program(const char *api, const char *name, bool ok);

/* A launch of the kernel named `name` (its row's name, as given to the
 * driver: a C name, not mangled). */
void expect_kernel(const char *name);

/* The api table has `calls` calls of `name` (0: no row at all). */
void expect_api(const char *name, unsigned long long calls);
/* A call that failed with `error` (its status's name). */
void expect_api_error(const char *name, const char *error);

/* Writes the file when GT_EXPECT is set; 0 on success or when not asked. */
int expect_write(void);

#endif
