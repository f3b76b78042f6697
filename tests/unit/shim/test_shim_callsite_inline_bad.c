/* Malformed debug information (shim/callsite/dwarf_inline.c,
 * dwarf_tailcall.c): lookups of inlined calls and of tail calls in
 * inline_fixture.c's objects whose debug sections are cut short at every
 * length, and corrupted a few bytes at a time (a seeded random sequence),
 * never read outside the sections, loop or crash: each section is a heap
 * copy of its exact size, so that AddressSanitizer (scripts/sanitize.sh)
 * sees any read past it; a loop would run past the test's timeout. Every
 * name found lies in a section or is empty, no more calls are given than
 * asked for, and the untouched sections read as before afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dwarf_inline.h"
#include "dwarf_tailcall.h"
#include "inline_fixtures.h"

#define ROUNDS 1500u
#define CUTS 200u /* lengths tried per section */
#define MAX 4u    /* calls asked for: fewer than the fixture has at most, and more */

typedef struct section {
    const uint8_t **bytes;
    size_t *len;
    uint8_t *copy; /* the untouched bytes, on the heap */
    size_t size;
} section;

enum { INFO, ABBREV, RANGES, RNGLISTS, ADDR, STR_OFFSETS, STR, LINE_STR, NSECTIONS };

typedef struct bench {
    fixture f;
    section s[NSECTIONS];
    uint64_t lo, hi;           /* fixture_entry's addresses, and some either side */
    uint64_t tail_lo, tail_hi; /* fixture_tail_entry's, likewise */
    uint64_t inner;            /* fixture_glue's call back, which fixture_tail jumps to */
    unsigned found;            /* calls found in the untouched sections, over all addresses */
} bench;

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t random_next(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

static int in_sections(const bench *b, const char *p)
{
    for (unsigned i = 0; i < NSECTIONS; i++) {
        const uint8_t *sec = *b->s[i].bytes;
        size_t len = *b->s[i].len;
        if (sec && (const uint8_t *)p >= sec && (const uint8_t *)p < sec + len)
            return memchr(p, 0, (size_t)(sec + len - (const uint8_t *)p)) != NULL;
    }
    return 0;
}

/* A tail call's callee: its names lie in the sections or are empty; the
 * fixture's glue is the one accepted. */
static int glue_callee(const gt_inlined *callee, void *ctx)
{
    const bench *b = ctx;
    if (!in_sections(b, callee->name)) assert_int_equal(callee->name[0], 0);
    if (!in_sections(b, callee->linkage)) assert_int_equal(callee->linkage[0], 0);
    return strcmp(callee->name, "fixture_glue") == 0;
}

/* Tail calls looked up from each address about fixture_tail_entry, with
 * the frame inside and without: how many were found. */
static unsigned tail_lookups(bench *b)
{
    unsigned total = 0;
    for (uint64_t ret = b->tail_lo; ret < b->tail_hi; ret++) {
        uint64_t at;
        total += (unsigned)gt_dwarf_tail_call(&b->f.e, ret, b->inner, glue_callee, b, &at);
        total += (unsigned)gt_dwarf_tail_call(&b->f.e, ret, UINT64_MAX, glue_callee, b, &at);
    }
    return total;
}

/* Every address looked up; the calls found, counted. */
static unsigned lookups(bench *b)
{
    unsigned total = tail_lookups(b);
    gt_inlined got[MAX];
    for (uint64_t addr = b->lo; addr < b->hi; addr++) {
        unsigned n = gt_dwarf_inlined(&b->f.e, addr, got, MAX);
        assert_true(n <= MAX);
        for (unsigned k = 0; k < n; k++) {
            if (!in_sections(b, got[k].name)) assert_int_equal(got[k].name[0], 0);
            if (!in_sections(b, got[k].linkage)) assert_int_equal(got[k].linkage[0], 0);
        }
        total += n;
    }
    gt_dwarf_inline_free(&b->f.e);
    return total;
}

/* Section i as `bytes` (len of them, copied to the heap) for one round of
 * lookups, then as before. */
static void with_section(bench *b, unsigned i, const uint8_t *bytes, size_t len)
{
    section *s = &b->s[i];
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len) memcpy(copy, bytes, len);
    *s->bytes = copy;
    *s->len = len;
    lookups(b);
    *s->bytes = s->copy;
    *s->len = s->size;
    free(copy);
}

static int bench_open(bench *b, const char *variant)
{
    memset(b, 0, sizeof *b);
    if (fixture_open(&b->f, variant) != 0) return -1;
    gt_elf *e = &b->f.e;
    const section all[NSECTIONS] = {
        [INFO] = {&e->info, &e->info_len, NULL, 0},
        [ABBREV] = {&e->abbrev, &e->abbrev_len, NULL, 0},
        [RANGES] = {&e->ranges, &e->ranges_len, NULL, 0},
        [RNGLISTS] = {&e->rnglists, &e->rnglists_len, NULL, 0},
        [ADDR] = {&e->addr, &e->addr_len, NULL, 0},
        [STR_OFFSETS] = {&e->str_offsets, &e->str_offsets_len, NULL, 0},
        [STR] = {&e->str, &e->str_len, NULL, 0},
        [LINE_STR] = {&e->line_str, &e->line_str_len, NULL, 0},
    };
    for (unsigned i = 0; i < NSECTIONS; i++) {
        b->s[i] = all[i];
        section *s = &b->s[i];
        if (!*s->bytes) continue;
        s->size = *s->len;
        s->copy = malloc(s->size ? s->size : 1);
        if (!s->copy) return -1;
        memcpy(s->copy, *s->bytes, s->size);
        *s->bytes = s->copy;
    }
    for (size_t i = 0; i < e->nsyms; i++) {
        const gt_elf_sym *sym = &e->syms[i];
        if (!strcmp(sym->name, "fixture_entry")) {
            b->lo = sym->addr - 16;
            b->hi = sym->addr + sym->size + 16;
        } else if (!strcmp(sym->name, "fixture_tail_entry")) {
            b->tail_lo = sym->addr - 16;
            b->tail_hi = sym->addr + sym->size + 16;
        } else if (!strcmp(sym->name, "fixture_glue")) {
            b->inner = sym->addr + 1;
        }
    }
    return b->hi && b->tail_hi && b->inner ? 0 : -1;
}

static void bench_close(bench *b)
{
    for (unsigned i = 0; i < NSECTIONS; i++)
        free(b->s[i].copy);
    fixture_close(&b->f);
}

static void test_cut(void **state)
{
    bench b;
    assert_int_equal(bench_open(&b, *state), 0);
    /* The one tail call, from its return address, with and without the
     * frame inside. */
    assert_int_equal(tail_lookups(&b), 2);
    b.found = lookups(&b);
    assert_true(b.found > 2);
    for (unsigned i = 0; i < NSECTIONS; i++) {
        const section *s = &b.s[i];
        if (!s->copy) continue;
        size_t step = s->size / CUTS + 1;
        for (size_t len = 0; len < s->size; len += step)
            with_section(&b, i, s->copy, len);
    }
    assert_int_equal(lookups(&b), b.found);
    bench_close(&b);
}

static void test_corrupt(void **state)
{
    static const uint8_t special[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    static const unsigned weights[] = {
        [INFO] = 6, [ABBREV] = 3, [RANGES] = 1, [RNGLISTS] = 1, [ADDR] = 1, [STR_OFFSETS] = 1};
    bench b;
    assert_int_equal(bench_open(&b, *state), 0);
    b.found = lookups(&b);
    unsigned corrupted = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        unsigned pick = (unsigned)(random_next() % 13), i = 0;
        while (pick >= weights[i])
            pick -= weights[i++];
        section *s = &b.s[i];
        if (!s->copy || !s->size) continue;
        uint8_t *bytes = malloc(s->size);
        assert_non_null(bytes);
        memcpy(bytes, s->copy, s->size);
        for (unsigned n = 1 + (unsigned)(random_next() % 4); n; n--) {
            uint64_t r = random_next();
            bytes[r % s->size] =
                (r >> 32) & 1 ? special[(r >> 40) % sizeof special] : (uint8_t)(r >> 48);
        }
        with_section(&b, i, bytes, s->size);
        free(bytes);
        corrupted++;
    }
    assert_true(corrupted > ROUNDS / 2);
    assert_int_equal(lookups(&b), b.found);
    bench_close(&b);
}

int main(void)
{
    static char variants[] = GT_INLINE_VARIANTS, names[16][64];
    struct CMUnitTest tests[16];
    size_t n = 0;
    for (char *save = NULL, *v = strtok_r(variants, " ", &save); v && n < 16;
         v = strtok_r(NULL, " ", &save)) {
        for (unsigned corrupt = 0; corrupt < 2; corrupt++, n++) {
            snprintf(names[n], sizeof names[n], "%s %s", corrupt ? "corrupt" : "cut", v);
            tests[n] = (struct CMUnitTest){.name = names[n],
                                           .test_func = corrupt ? test_corrupt : test_cut,
                                           .initial_state = v};
        }
    }
    return _cmocka_run_group_tests("inline_bad", tests, n, NULL, NULL);
}
