/* What the Python call sites decide from memory alone (shim/callsite):
 * whose code a file holds (python_paths.c: the standard library, frozen
 * code, the CUDA stack's installed packages, the user's own directories
 * whatever their names, packages added by GPUTRACE_CALLSITES_SKIP), and the
 * line of an instruction offset in each of CPython's three line table
 * formats (python_lines.c), on tables made by hand to the formats' rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "python_lines.h"
#include "python_paths.h"

static int skipped(const char *path, const char *extra, char *package)
{
    return gt_python_path_skipped(path, strlen(path), extra, package, 64);
}

static void assert_skipped(const char *path, const char *extra, const char *package)
{
    char got[64] = "unset";
    assert_true(skipped(path, extra, got));
    assert_string_equal(got, package);
}

static void assert_users(const char *path, const char *extra)
{
    char got[64];
    assert_false(skipped(path, extra, got));
}

static void test_paths(void **state)
{
    (void)state;
    assert_skipped("/usr/lib/python3.11/json/__init__.py", NULL, "");
    assert_skipped("/opt/py/lib64/python3.13t/threading.py", NULL, "");
    assert_skipped("<frozen importlib._bootstrap>", NULL, "");
    assert_skipped("/v/lib/python3.11/site-packages/numba_cuda/numba/cuda/dispatcher.py", NULL,
                   "numba_cuda");
    assert_skipped("/v/lib/python3.12/site-packages/cupy/_creation/basic.py", NULL, "cupy");
    assert_skipped("/usr/lib/python3/dist-packages/numpy/core/numeric.py", NULL, "numpy");
    assert_skipped("/wheels/site-packages/torch/nn/modules/module.py", NULL, "torch");
    /* Installed packages outside the CUDA stack, and the user's own
     * directories named as the stack's packages, are the user's. */
    assert_users("/v/lib/python3.11/site-packages/mysolver/step.py", NULL);
    assert_users("/usr/lib/python3/dist-packages/scipy/linalg.py", NULL);
    assert_users("/home/u/proj/cuda/kernels.py", NULL);
    assert_users("/home/u/torch/train.py", NULL);
    assert_users("sim.py", NULL);
    /* GPUTRACE_CALLSITES_SKIP: dotted names as directories or a module file,
     * anywhere in the path. */
    assert_skipped("/home/u/proj/helpers.py", "other,helpers", "helpers");
    assert_skipped("/home/u/mylib/kernels.py", "mylib.kernels", "mylib.kernels");
    assert_skipped("/home/u/mylib/kernels/launch.py", "mylib.kernels", "mylib.kernels");
    assert_users("/home/u/mylib/kernelsx.py", "mylib.kernels");
    assert_users("/home/u/mylib/other.py", "mylib.kernels");
    assert_users("/home/u/kernels.py", "mylib.kernels");
}

/* 3.9 co_lnotab: (address increment, signed line increment) pairs. */
static void test_lnotab(void **state)
{
    (void)state;
    static const uint8_t t[] = {0, 1, 6, 2, 4, 0xff};
    assert_int_equal(gt_python_line(GT_PY_LNOTAB, t, sizeof t, 1, 0), 2);
    assert_int_equal(gt_python_line(GT_PY_LNOTAB, t, sizeof t, 1, 5), 2);
    assert_int_equal(gt_python_line(GT_PY_LNOTAB, t, sizeof t, 1, 6), 4);
    assert_int_equal(gt_python_line(GT_PY_LNOTAB, t, sizeof t, 1, 12), 3);
    assert_int_equal(gt_python_line(GT_PY_LNOTAB, t, sizeof t, 1, -1), 1);
}

/* 3.10 co_linetable: (bytes, signed line delta or -128: no line) pairs; an
 * empty range only moves the line. */
static void test_linetable(void **state)
{
    (void)state;
    static const uint8_t t[] = {4, 1, 0, 2, 6, 0x80, 2, 0xfd};
    assert_int_equal(gt_python_line(GT_PY_LINETABLE, t, sizeof t, 5, 0), 6);
    assert_int_equal(gt_python_line(GT_PY_LINETABLE, t, sizeof t, 5, 3), 6);
    assert_int_equal(gt_python_line(GT_PY_LINETABLE, t, sizeof t, 5, 4), -1);
    assert_int_equal(gt_python_line(GT_PY_LINETABLE, t, sizeof t, 5, 10), 5);
    assert_int_equal(gt_python_line(GT_PY_LINETABLE, t, sizeof t, 5, 12), -1);
}

/* 3.11 on, PEP 657's location table: an entry's first byte has the top bit,
 * its code in bits 3-6 and its length in code units (2 bytes) less one in
 * bits 0-2; code 13 is "no columns" with a signed varint line delta, 10-12
 * "one line" (delta code - 10, two column bytes), 15 "no location". */
static void test_locations(void **state)
{
    (void)state;
    static const uint8_t t[] = {
        0x80 | 13 << 3 | 0, 0x04,    /* offsets 0-1: line + 2 */
        0x80 | 10 << 3 | 1, 4,    9, /* 2-5: the same line */
        0x80 | 11 << 3 | 0, 0,    3, /* 6-7: one more */
        0x80 | 15 << 3 | 0,          /* 8-9: none */
        0x80 | 13 << 3 | 0, 0x07,    /* 10-11: line - 3 */
    };
    assert_int_equal(gt_python_line(GT_PY_LOCATIONS, t, sizeof t, 10, 0), 12);
    assert_int_equal(gt_python_line(GT_PY_LOCATIONS, t, sizeof t, 10, 4), 12);
    assert_int_equal(gt_python_line(GT_PY_LOCATIONS, t, sizeof t, 10, 6), 13);
    assert_int_equal(gt_python_line(GT_PY_LOCATIONS, t, sizeof t, 10, 8), -1);
    assert_int_equal(gt_python_line(GT_PY_LOCATIONS, t, sizeof t, 10, 10), 10);
    assert_int_equal(gt_python_line(GT_PY_LOCATIONS, t, sizeof t, 10, 12), -1);
    assert_int_equal(gt_python_line(GT_PY_LOCATIONS, t, sizeof t, 10, -1), 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_lnotab),
        cmocka_unit_test(test_linetable),
        cmocka_unit_test(test_locations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
