/* The call stacks' table (shim/callsite/stack_table.c) from several
 * threads at once: every id a thread gets names the stack it gave (a stack
 * raced by two threads may get two ids, each naming it), once every stack
 * is in (a barrier after the first round) a stack given again gets the
 * same id, and ids stay in range. Run
 * under ThreadSanitizer by scripts/sanitize.sh (label pipeline). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stack_table.h"

#define THREADS 4
#define STACKS 500
#define ROUNDS 4

static gt_stack make(unsigned i)
{
    gt_stack s;
    memset(&s, 0, sizeof s); /* compared whole, padding included */
    if (i % 2) {
        s.lang = GT_STACK_PYTHON;
        s.file = 1 + i % 7;
        s.function = 100 + i;
        s.line = (int32_t)i;
    } else {
        s.lang = GT_STACK_NATIVE;
        s.depth = (uint8_t)(1 + i % GT_STACK_FRAMES);
        for (unsigned f = 0; f < s.depth; f++)
            s.pc[f] = 0x400000u + i * 64u + f;
    }
    return s;
}

static pthread_barrier_t first_round;

typedef struct worker {
    unsigned first;
    uint32_t ids[STACKS];
    int wrong;
} worker;

static void *run(void *arg)
{
    worker *w = arg;
    for (unsigned r = 0; r < ROUNDS; r++) {
        if (r == 1) pthread_barrier_wait(&first_round);
        for (unsigned k = 0; k < STACKS; k++) {
            unsigned i = (w->first + k * 7u) % STACKS;
            gt_stack s = make(i);
            uint32_t id = gt_stack_id(&s);
            const gt_stack *got = gt_stack_get(id);
            if (!id || id > GT_STACK_TABLE_SLOTS || !got || memcmp(got, &s, sizeof s) != 0 ||
                (r > 1 && id != w->ids[i]))
                w->wrong++;
            w->ids[i] = id;
        }
    }
    return NULL;
}

static void test_threads_share_the_table(void **state)
{
    (void)state;
    static worker w[THREADS];
    pthread_t t[THREADS];
    assert_int_equal(pthread_barrier_init(&first_round, NULL, THREADS), 0);
    for (unsigned i = 0; i < THREADS; i++) {
        w[i].first = i * (STACKS / THREADS);
        assert_int_equal(pthread_create(&t[i], NULL, run, &w[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&first_round);
    for (unsigned i = 0; i < THREADS; i++)
        assert_int_equal(w[i].wrong, 0);
    assert_null(gt_stack_get(0));
    assert_null(gt_stack_get(GT_STACK_OVERFLOW));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
