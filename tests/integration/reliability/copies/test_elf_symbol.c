/* The shim's own symbol lookup in a loaded object (shim/intercept/elf_symbol.c),
 * which stands in for dlsym/dlvsym where the loader must not be entered:
 * its answers are glibc's, for versioned and plain names, and nothing for
 * a name or version the object does not define. */
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "intercept.h"

static void *libc;
static struct link_map *libc_map;

static int open_libc(void **state)
{
    (void)state;
    libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
    return libc && dlinfo(libc, RTLD_DI_LINKMAP, &libc_map) == 0 ? 0 : -1;
}

static int close_libc(void **state)
{
    (void)state;
    return dlclose(libc);
}

static void test_versioned_names_are_glibcs(void **state)
{
    (void)state;
    const char *versions[] = {"GLIBC_2.34", GT_GLIBC_BASE_VERSION};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        assert_ptr_equal(gt_elf_symbol(libc_map, "dlsym", versions[i]),
                         dlvsym(libc, "dlsym", versions[i]));
        assert_ptr_equal(gt_elf_symbol(libc_map, "dlopen", versions[i]),
                         dlvsym(libc, "dlopen", versions[i]));
    }
    assert_non_null(gt_elf_symbol(libc_map, "dlsym", GT_GLIBC_BASE_VERSION));
}

static void test_plain_names_are_glibcs(void **state)
{
    (void)state;
    const char *names[] = {"getpid", "write", "environ", "pthread_create"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *mine = gt_elf_symbol(libc_map, names[i], NULL);
        assert_non_null(mine);
        assert_ptr_equal(mine, dlsym(libc, names[i]));
    }
}

static void test_what_is_not_there(void **state)
{
    (void)state;
    assert_null(gt_elf_symbol(libc_map, "gt_no_such_function", NULL));
    assert_null(gt_elf_symbol(libc_map, "dlsym", "GLIBC_0.0"));
    assert_null(gt_elf_symbol(libc_map, "", NULL));
    assert_null(gt_elf_symbol(NULL, "dlsym", NULL));
}

static void test_same_string(void **state)
{
    (void)state;
    assert_true(gt_same_string("", ""));
    assert_true(gt_same_string("dlsym", "dlsym"));
    assert_false(gt_same_string("dlsym", "dlsy"));
    assert_false(gt_same_string("dlsy", "dlsym"));
    assert_false(gt_same_string("dlsym", "dlsyn"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versioned_names_are_glibcs),
        cmocka_unit_test(test_plain_names_are_glibcs),
        cmocka_unit_test(test_what_is_not_there),
        cmocka_unit_test(test_same_string),
    };
    return cmocka_run_group_tests(tests, open_libc, close_libc);
}
