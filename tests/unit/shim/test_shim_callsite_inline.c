/* Inlined calls from the debug information (shim/callsite/dwarf_inline.c),
 * read from inline_fixture.c built at -O2 -g in each DWARF variant the
 * build has (GT_INLINE_VARIANTS: GCC's DWARF 5 and 4, 64-bit DWARF,
 * Clang's DWARF 5 where clang is installed). The fixture is called, and
 * its calls' return addresses looked up: inside code inlined two deep, one
 * deep, and not inlined. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dwarf_inline.h"
#include "dwarf_line.h"
#include "inline_fixtures.h"

/* The fixture's calls back, in order: from fixture_inner (inlined into
 * fixture_outer, inlined into fixture_entry), from fixture_outer, from
 * fixture_entry itself. */
static uintptr_t returns[3];
static unsigned ncalls;

static __attribute__((noinline)) void record(void)
{
    if (ncalls < 3) returns[ncalls] = (uintptr_t)__builtin_return_address(0);
    ncalls++;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The call's file and line are inline_fixture.c's marked line. */
static void assert_called_at(const fixture *f, const gt_inlined *call, const char *mark)
{
    char file[4096];
    assert_int_equal(gt_dwarf_line_file(&f->e, call->lines, call->call_file, file, sizeof file), 0);
    assert_string_equal(base_name(file), "inline_fixture.c");
    assert_int_not_equal(fixture_line(mark), 0);
    assert_int_equal(call->call_line, fixture_line(mark));
}

static void test_variant(void **state)
{
    const char *variant = *state;
    fixture f;
    assert_int_equal(fixture_open(&f, variant), 0);
    void (*entry)(void (*)(void)) = (void (*)(void (*)(void)))dlsym(f.handle, "fixture_entry");
    assert_non_null(entry);
    ncalls = 0;
    entry(record);
    assert_int_equal(ncalls, 3);
    uint64_t at[3];
    for (unsigned i = 0; i < 3; i++)
        at[i] = returns[i] - 1 - f.m.bias;
    gt_inlined got[GT_DWARF_INLINE_MAX_DEPTH];

    /* Two deep: the line table has fixture_inner's own line, the debug
     * information where it and fixture_outer were inlined. */
    char file[4096];
    int line = 0;
    assert_int_equal(gt_dwarf_line(&f.e, at[0], file, sizeof file, &line), 0);
    assert_int_equal(line, fixture_line("inner_call"));
    assert_int_equal(gt_dwarf_inlined(&f.e, at[0], got, GT_DWARF_INLINE_MAX_DEPTH), 2);
    assert_string_equal(got[0].name, "fixture_inner");
    assert_string_equal(got[0].linkage, "");
    assert_called_at(&f, &got[0], "outer_calls_inner");
    assert_string_equal(got[1].name, "fixture_outer");
    assert_called_at(&f, &got[1], "entry_calls_outer");
    /* At most as many as asked for, innermost first. */
    memset(got, 0, sizeof got);
    assert_int_equal(gt_dwarf_inlined(&f.e, at[0], got, 1), 1);
    assert_string_equal(got[0].name, "fixture_inner");
    assert_null(got[1].name);

    /* One deep. */
    assert_int_equal(gt_dwarf_inlined(&f.e, at[1], got, GT_DWARF_INLINE_MAX_DEPTH), 1);
    assert_string_equal(got[0].name, "fixture_outer");
    assert_called_at(&f, &got[0], "entry_calls_outer");

    /* fixture_entry's own call, and an address in no function of the
     * debug information (the object's first byte). */
    assert_int_equal(gt_dwarf_inlined(&f.e, at[2], got, GT_DWARF_INLINE_MAX_DEPTH), 0);
    assert_int_equal(gt_dwarf_inlined(&f.e, 0, got, GT_DWARF_INLINE_MAX_DEPTH), 0);

    /* A file the line table does not have. */
    assert_int_equal(gt_dwarf_line_file(&f.e, got[0].lines, 100000, file, sizeof file), -1);

    /* Freed, then read again. */
    gt_dwarf_inline_free(&f.e);
    assert_null(f.e.inlines);
    assert_int_equal(gt_dwarf_inlined(&f.e, at[0], got, GT_DWARF_INLINE_MAX_DEPTH), 2);
    gt_dwarf_inline_free(&f.e);
    fixture_close(&f);
}

int main(void)
{
    return run_per_variant("inline", test_variant);
}
