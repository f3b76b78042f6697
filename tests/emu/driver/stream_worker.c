/* The worker thread of a stream: carries out data operations in order. */
#include "emu_stream.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

void gt_sleep_until(uint64_t until)
{
    struct timespec ts = {.tv_sec = (time_t)(until / 1000000000ULL),
                          .tv_nsec = (long)(until % 1000000000ULL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void run_copy(const struct gt_copy *c)
{
    if (c->height <= 1 && c->depth <= 1) {
        memmove(c->dst, c->src, c->width);
        return;
    }
    for (size_t z = 0; z < (c->depth ? c->depth : 1); z++) {
        char *dst = (char *)c->dst + z * c->dslice;
        const char *src = (const char *)c->src + z * c->sslice;
        for (size_t row = 0; row < c->height; row++)
            memmove(dst + row * c->dpitch, src + row * c->spitch, c->width);
    }
}

static void fill_row(void *dst, uint32_t value, unsigned elem, size_t count)
{
    if (elem == 1) {
        memset(dst, (int)(value & 0xff), count);
    } else if (elem == 2) {
        uint16_t v = (uint16_t)value;
        for (size_t i = 0; i < count; i++)
            memcpy((char *)dst + 2 * i, &v, 2);
    } else {
        for (size_t i = 0; i < count; i++)
            memcpy((char *)dst + 4 * i, &value, 4);
    }
}

static void run_memset(const struct gt_memset *m)
{
    size_t rows = m->height ? m->height : 1;
    for (size_t row = 0; row < rows; row++)
        fill_row((char *)m->dst + row * m->pitch, m->value, m->elem, m->width);
}

/* Host work runs when the GPU would reach it: after the simulated end of
 * everything before it in the stream. */
static void wait_for_start(uint64_t start)
{
    if (start > gt_now() + GT_SLACK_NS) gt_sleep_until(start);
}

void gt_run_op(const struct gt_op *op)
{
    switch (op->kind) {
    case GT_OP_COPY:
        run_copy(&op->u.copy);
        break;
    case GT_OP_MEMSET:
        run_memset(&op->u.memset);
        break;
    case GT_OP_HOST_FN:
        wait_for_start(op->start);
        op->u.host.fn(op->u.host.arg);
        break;
    case GT_OP_STREAM_CALLBACK:
        wait_for_start(op->start);
        op->u.callback.cb(op->u.callback.handle, CUDA_SUCCESS, op->u.callback.arg);
        break;
    case GT_OP_WAIT:
        gt_stream_wait_work(op->u.wait.stream, op->u.wait.stream_id, op->u.wait.seq);
        break;
    case GT_OP_FREE_DEVICE:
        gt_device_free(op->u.free_ptr);
        break;
    case GT_OP_FREE_HOST_BUFFER:
        free(op->u.host_buffer);
        break;
    default:
        break;
    }
}

static void *worker_main(void *arg)
{
    struct gt_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (s->work_head == s->work_tail && !s->retiring) {
            s->worker_idle = true;
            pthread_cond_wait(&s->work_cond, &s->lock);
            s->worker_idle = false;
        }
        if (s->work_head == s->work_tail) break;
        struct gt_op op = s->ring[s->work_head & (s->ring_cap - 1)];
        pthread_mutex_unlock(&s->lock);
        gt_run_op(&op);
        pthread_mutex_lock(&s->lock);
        s->work_head++;
        atomic_store_explicit(&s->work_done, s->work_head, memory_order_release);
        if (s->done_waiters > 0) pthread_cond_broadcast(&s->done_cond);
    }
    s->worker_running = false;
    s->retiring = false;
    pthread_mutex_unlock(&s->lock);
    gt_stream_recycle(s);
    return NULL;
}

void gt_worker_start(struct gt_stream *s)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Workers never take the program's signals (SIGINT must reach it). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t tid;
    int rc = pthread_create(&tid, &attr, worker_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0)
        s->worker_running = true;
    else
        s->no_worker = true; /* the submitting threads carry the work out */
}
