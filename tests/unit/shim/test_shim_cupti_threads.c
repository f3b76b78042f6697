/* GPU times from CUPTI (shim/gpu/cupti_*.c) with threads: eight threads
 * launch as fast as they can, four on streams of their own and four on
 * one stream they share, while CUPTI's worker hands buffers over and the
 * drain thread reads them and resolves the records. Every launch gets
 * its configured GPU time exactly (a CUPTI record is the work's own
 * time, not a pair's), each stream's kernels follow each other, and the
 * correlation table is left empty. The source is chosen as at a process's
 * first CUDA call, finding the emulator's libcupti.so.13 beside its
 * libcuda. Also run under ThreadSanitizer (label pipeline). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "clock.h"
#include "config.h"
#include "cupti_internal.h"
#include "event.h"
#include "gpu_source.h"
#include "gpu_test.h"
#include "pipeline.h"
#include "record.h"

enum { THREADS = 8, OPS = 4000, SHARED_FROM = 4 };

static CUcontext context;
static CUstream shared;

struct worker {
    int index;
    uint64_t attached;
};

static void launch_recorded(struct worker *w, CUstream s, uint64_t tag)
{
    uint64_t t0 = gt_clock_mono_ns();
    uint32_t mark = gt_cupti_mark();
    gpu_test_launch(K_TINY, s, 0);
    gt_event *ev = gt_ev_begin();
    if (!ev) return;
    ev->kind = GT_EV_KERNEL;
    ev->u.kernel.func = tag;
    ev->stream = (uint64_t)(uintptr_t)s;
    ev->host_start = t0;
    ev->host_end = gt_clock_mono_ns();
    ev->device = GT_NO_DEVICE;
    gt_cupti_attach(ev, mark);
    w->attached += (ev->flags & GT_EVF_GPU_PENDING) != 0;
    gt_ev_commit(ev);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    if (cuCtxSetCurrent(context) != CUDA_SUCCESS) return NULL;
    CUstream s = shared;
    if (w->index < SHARED_FROM && cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        return NULL;
    for (uint64_t i = 0; i < OPS; i++)
        launch_recorded(w, s, (uint64_t)w->index << 32 | i);
    cuStreamSynchronize(s);
    if (s != shared) cuStreamDestroy(s);
    return NULL;
}

static int by_stream_then_start(const void *a, const void *b)
{
    const gt_event *x = *(const gt_event *const *)a, *y = *(const gt_event *const *)b;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    return x->gpu_start < y->gpu_start ? -1 : x->gpu_start > y->gpu_start;
}

static void test_threads_launch_while_the_drain_reads_cupti(void **state)
{
    (void)state;
    gpu_test_init();
    gt_cfg.gpu_timing = GT_GPU_TIMING_CUPTI;
    gt_cfg.buffer_bytes = (size_t)64 << 20;
    context = gpu_test_context();
    assert_int_equal(cuStreamCreate(&shared, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    gpu_test_keep((uint64_t)THREADS * OPS);
    gpu_test_pipeline(1);
    gt_gpu_source_choose();
    char detail[512];
    enum gt_gpu_source source = gt_gpu_source_report(detail, sizeof detail);
    if (source != GT_GPU_SOURCE_CUPTI) fail_msg("GPU timing: %s", detail);
    assert_int_equal(gt_gpu_src(), GT_SRC_CUPTI);

    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (struct worker){.index = t};
        assert_int_equal(pthread_create(&threads[t], NULL, work, &workers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    assert_int_equal(gt_pipeline_finish(60000), 0);

    for (int t = 0; t < THREADS; t++)
        assert_int_equal(workers[t].attached, OPS);
    const gpu_test_records *r = gpu_test_kept();
    assert_int_equal(r->n, (uint64_t)THREADS * OPS);
    assert_int_equal(r->timed, (uint64_t)THREADS * OPS);
    const gt_event **order = calloc(r->n, sizeof *order);
    assert_non_null(order);
    for (uint64_t i = 0; i < r->n; i++) {
        const gt_event *ev = &r->ev[i];
        assert_int_equal(ev->gpu_end - ev->gpu_start, K_TINY_NS);
        assert_int_equal(ev->device, 0);
        order[i] = ev;
    }
    qsort(order, r->n, sizeof *order, by_stream_then_start);
    for (uint64_t i = 1; i < r->n; i++)
        if (order[i]->stream == order[i - 1]->stream && order[i]->gpu_start < order[i - 1]->gpu_end)
            fail_msg("two kernels overlap on stream %#llx", (unsigned long long)order[i]->stream);
    free(order);
    assert_int_equal(gt_cupti_table_count(), 0);
    assert_int_equal(gt_cupti_table_evicted(), 0);
    assert_int_equal(gt_cupti_records_dropped(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_launch_while_the_drain_reads_cupti),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
