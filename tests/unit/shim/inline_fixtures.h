/* Test helper: the shared objects built from inline_fixture.c (one per
 * DWARF variant, GT_INLINE_VARIANTS), opened as call sites open objects,
 * and the lines its MARK comments mark. */
#ifndef GT_TEST_INLINE_FIXTURES_H
#define GT_TEST_INLINE_FIXTURES_H

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "elf_file.h"
#include "modules.h"
#include "read_file.h"

typedef struct fixture {
    void *handle;
    gt_module m;
    gt_elf e;
    char path[4096];
} fixture;

/* Opens variant's object: loaded (so that it can be called) and read. 0,
 * or -1. */
static inline int fixture_open(fixture *f, const char *variant)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s/libgt_inline_fixture_%s.so", GT_INLINE_FIXTURE_DIR,
             variant);
    f->handle = dlopen(f->path, RTLD_NOW | RTLD_LOCAL);
    struct link_map *lm = NULL;
    if (!f->handle || dlinfo(f->handle, RTLD_DI_LINKMAP, &lm) != 0) return -1;
    f->m = (gt_module){.bias = lm->l_addr, .path = f->path, .cls = GT_MODULE_USER};
    return gt_elf_open(&f->e, &f->m);
}

/* What gt_elf_open keeps (the lookups' caches are their own to free). */
static inline void fixture_close(fixture *f)
{
    if (f->e.map) munmap((void *)f->e.map, f->e.size);
    free(f->e.syms);
    free(f->e.cus);
    if (f->handle) dlclose(f->handle);
}

/* The line of inline_fixture.c whose comment is "MARK name", 0 if none. */
static inline int fixture_line(const char *name)
{
    static char text[8192];
    if (!text[0] && read_file(GT_INLINE_FIXTURE_SOURCE, text, sizeof text) != 0) return 0;
    char mark[128];
    snprintf(mark, sizeof mark, "/* MARK %s */", name);
    const char *at = strstr(text, mark);
    if (!at) return 0;
    int line = 1;
    for (const char *p = text; p < at; p++)
        line += *p == '\n';
    return line;
}

/* Runs `test` once per fixture variant (GT_INLINE_VARIANTS), each a test
 * of group `group` named by its variant, which it gets as its state. The
 * including file has included cmocka.h. */
static inline int run_per_variant(const char *group, CMUnitTestFunction test)
{
    static char variants[] = GT_INLINE_VARIANTS;
    struct CMUnitTest tests[8];
    size_t n = 0;
    for (char *save = NULL, *v = strtok_r(variants, " ", &save); v && n < 8;
         v = strtok_r(NULL, " ", &save))
        tests[n++] = (struct CMUnitTest){.name = v, .test_func = test, .initial_state = v};
    return _cmocka_run_group_tests(group, tests, n, NULL, NULL);
}

#endif
