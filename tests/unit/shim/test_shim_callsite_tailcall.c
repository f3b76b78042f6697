/* Tail calls from the debug information's call sites
 * (shim/callsite/dwarf_tailcall.c), read from inline_fixture.c built at
 * -O2 -g in each DWARF variant the build has (GT_INLINE_VARIANTS: GCC's
 * DWARF 5 call sites, its DWARF 4 GNU call sites, 64-bit DWARF, Clang's
 * DWARF 5, which gives a tail call's own address). fixture_tail_entry
 * (inline_fixture_caller.c, whose unit names its callee by a declaration)
 * calls fixture_tail, whose last statement, a call of fixture_glue, is a
 * jump: fixture_glue returns into fixture_tail_entry, and the missing
 * frame is fixture_tail's call of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dwarf_line.h"
#include "dwarf_tailcall.h"
#include "inline_fixtures.h"

static uintptr_t called_from; /* the callback's return address: in fixture_glue */

static __attribute__((noinline)) void record(void)
{
    called_from = (uintptr_t)__builtin_return_address(0);
}

/* Accepts the callee named ctx. */
static int named(const gt_inlined *callee, void *ctx)
{
    return strcmp(callee->name, ctx) == 0;
}

static uint64_t symbol(const fixture *f, const char *name)
{
    for (size_t i = 0; i < f->e.nsyms; i++)
        if (!strcmp(f->e.syms[i].name, name)) return f->e.syms[i].addr;
    return 0;
}

static void test_variant(void **state)
{
    fixture f;
    assert_int_equal(fixture_open(&f, *state), 0);
    void (*entry)(void (*)(void)) = (void (*)(void (*)(void)))dlsym(f.handle, "fixture_tail_entry");
    void *volatile *ret_at = dlsym(f.handle, "fixture_return");
    assert_non_null(entry);
    assert_non_null(ret_at);
    entry(record);
    uint64_t ret = (uintptr_t)*ret_at - f.m.bias, inner = called_from - 1 - f.m.bias;
    /* The stack shows no frame of fixture_tail: fixture_glue's return
     * address is in fixture_tail_entry. */
    const gt_elf_sym *caller = gt_elf_function(&f.e, ret - 1);
    assert_non_null(caller);
    assert_string_equal(caller->name, "fixture_tail_entry");

    /* Found: fixture_tail's call of fixture_glue, at its line. */
    uint64_t at = 0;
    assert_int_equal(gt_dwarf_tail_call(&f.e, ret, inner, named, "fixture_glue", &at), 1);
    const gt_elf_sym *tail = gt_elf_function(&f.e, at);
    assert_non_null(tail);
    assert_string_equal(tail->name, "fixture_tail");
    char file[4096];
    int line = 0;
    assert_int_equal(gt_dwarf_line(&f.e, at, file, sizeof file, &line), 0);
    assert_int_not_equal(fixture_line("tail_call"), 0);
    assert_int_equal(line, fixture_line("tail_call"));
    /* With no frame inside (the first frame's), the same. */
    assert_int_equal(gt_dwarf_tail_call(&f.e, ret, UINT64_MAX, named, "fixture_glue", &at), 1);
    assert_int_equal(gt_dwarf_line(&f.e, at, file, sizeof file, &line), 0);
    assert_int_equal(line, fixture_line("tail_call"));

    /* Not found: a tail call to another callee; the call went straight
     * to where the stack went; the frame inside in fixture_tail itself (an
     * ordinary call); no call returning there. */
    assert_int_equal(gt_dwarf_tail_call(&f.e, ret, inner, named, "fixture_other", &at), 0);
    assert_int_equal(gt_dwarf_tail_call(&f.e, ret, inner, named, "fixture_tail", &at), 0);
    uint64_t in_tail = symbol(&f, "fixture_tail");
    assert_int_not_equal(in_tail, 0);
    assert_int_equal(gt_dwarf_tail_call(&f.e, ret, in_tail, named, "fixture_glue", &at), 0);
    assert_int_equal(gt_dwarf_tail_call(&f.e, ret + 1, inner, named, "fixture_glue", &at), 0);
    assert_int_equal(gt_dwarf_tail_call(&f.e, 0, inner, named, "fixture_glue", &at), 0);

    gt_dwarf_inline_free(&f.e);
    fixture_close(&f);
}

int main(void)
{
    return run_per_variant("tailcall", test_variant);
}
