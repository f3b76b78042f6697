/* The drain: takes published chunks, resolves GPU times, hands records to
 * the consumer in each thread's order, recycles chunks; and the
 * pipeline's end, done exactly once.
 *
 * Sleeping and waking use futexes rather than a pipe or a condition
 * variable: waking is async-signal-safe (the SIGINT/SIGTERM handler wakes
 * the drain), and the shim holds no file descriptor that a program closing
 * all of its descriptors could close or have reused under it.
 *
 * Held chunks: a chunk whose next record waits for its GPU time is held,
 * with its consumed prefix remembered, and so is every later chunk of the
 * same thread (consumers rely on each thread's order: NVTX ranges enclose
 * the GPU work recorded inside them). Held chunks keep their memory, so
 * they count against the cap. */
#include "capture.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum drain_state {
    DRAIN_NONE,     /* not started: starts at first use */
    DRAIN_STARTING, /* pthread_create in progress */
    DRAIN_RUNNING,
    DRAIN_FAILED, /* could not start: records wait until the end */
    DRAIN_BARRED  /* finished without one: never starts */
};

enum finish_state { FINISH_OPEN, FINISH_BUSY, FINISH_DONE };
#define FINISH_REQUEST_EXIT 1024 /* finish_request value of a normal exit (else a signal) */
#define BLOCKED_MAX 64           /* threads with held chunks tracked one by one */

static gt_pipeline_params params;
static _Atomic int drain_state;   /* acquire/release: the thread exists once RUNNING is seen */
static _Atomic uint32_t wake_seq; /* futex word: bumped (release) to wake the drain */
/* futex word, enum finish_state: CAS acq_rel to claim the end, store
 * release when the report is made (waiters load acquire). */
static _Atomic uint32_t finish_state;
static _Atomic int finish_request; /* release by the requester, acquire by the drain */
static const gt_gpu_resolver *_Atomic resolver;

/* Draining-thread state. */
static gt_chunk *held_head, **held_tail = &held_head;
static uint32_t blocked[BLOCKED_MAX];
static unsigned n_blocked;
static int all_blocked; /* more threads held than tracked: hold every chunk */
static uint64_t consumed;

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

static struct timespec ms_timespec(uint64_t ms)
{
    return (struct timespec){(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
}

void gt_drain_wake(void)
{
    int saved = errno;
    atomic_fetch_add_explicit(&wake_seq, 1, memory_order_release);
    futex(&wake_seq, FUTEX_WAKE, 1, NULL);
    errno = saved;
}

void gt_set_gpu_resolver(const gt_gpu_resolver *r)
{
    atomic_store_explicit(&resolver, r, memory_order_release);
}

const char *gt_gpu_timing_off_reason(void)
{
    const gt_gpu_resolver *r = atomic_load_explicit(&resolver, memory_order_acquire);
    return r && r->off_reason ? r->off_reason() : NULL;
}

/* ------------------------------------------------------ consuming */

static int is_blocked(uint32_t owner)
{
    if (all_blocked) return 1;
    for (unsigned i = 0; i < n_blocked; i++)
        if (blocked[i] == owner) return 1;
    return 0;
}

static void hold(gt_chunk *c)
{
    if (!is_blocked(c->h.owner)) {
        if (n_blocked < BLOCKED_MAX)
            blocked[n_blocked++] = c->h.owner;
        else
            all_blocked = 1;
    }
    c->h.next = NULL;
    *held_tail = c;
    held_tail = &c->h.next;
}

/* Hands records [from, to) of c to the consumer. */
static void consume_run(gt_chunk *c, uint32_t from, uint32_t to)
{
    if (to <= from) return;
    if (params.consume_run) {
        params.consume_run(&c->ev[from], to - from, params.ctx);
    } else {
        for (uint32_t i = from; i < to; i++)
            params.consume(&c->ev[i], params.ctx);
    }
    consumed += to - from;
}

/* Consumes records from c->h.done on; 0 when one still waits for its GPU
 * time (c->h.done then points at it).
 *
 * Records go to the consumer in runs of at most RUN_MAX between pending
 * ones. Runs stay short: looking for pending records far ahead of the
 * consumer (a whole chunk first, then its records) made the drain a fifth
 * slower, as a pass over memory with nothing to overlap, and loads 4 KiB
 * ahead of the consumer's stores wait on them (the CPU matches addresses
 * by their low 12 bits first). Records are not prefetched: that gained the
 * drain 3% on a backlog in memory, and cost a program thread launching
 * kernels alongside it about 10 ns per launch (gt_bench_launch). */
#define RUN_MAX 4u
static int consume_chunk(gt_chunk *c, int give_up)
{
    const gt_gpu_resolver *r = atomic_load_explicit(&resolver, memory_order_acquire);
    uint32_t run = c->h.done;
    for (uint32_t i = run; i < c->h.limit; i++) {
        gt_event *ev = &c->ev[i];
        if (!(ev->flags & GT_EVF_GPU_PENDING)) {
            if (i - run < RUN_MAX) continue;
            consume_run(c, run, i);
            run = i;
            continue;
        }
        consume_run(c, run, i);
        run = i;
        if (r && !r->resolve(ev, give_up) && !give_up) {
            c->h.done = i;
            return 0;
        }
        ev->flags &= (uint8_t)~GT_EVF_GPU_PENDING;
    }
    consume_run(c, run, c->h.limit);
    c->h.done = c->h.limit;
    return 1;
}

static void consume_list(gt_chunk *c, int give_up)
{
    while (c) {
        gt_chunk *next = c->h.next;
        if (is_blocked(c->h.owner) || !consume_chunk(c, give_up))
            hold(c);
        else if (atomic_load_explicit(&c->h.state, memory_order_relaxed) != GT_CHUNK_STOLEN)
            gt_pool_recycle(c); /* a stolen chunk may still be written by its owner */
        c = next;
    }
}

/* Retries the held chunks (oldest first), then consumes `fresh`. */
static void consume_all(gt_chunk *fresh, int give_up)
{
    gt_chunk *held = held_head;
    held_head = NULL;
    held_tail = &held_head;
    n_blocked = 0;
    all_blocked = 0;
    consume_list(held, give_up);
    consume_list(fresh, give_up);
}

static int drain_pass(void)
{
    uint32_t n;
    gt_chunk *fresh = gt_publish_take(&n);
    if (!fresh && !held_head) return 0;
    gt_clock_refine(); /* after the take: every tick to convert is older */
    consume_all(fresh, 0);
    return n != 0;
}

void gt_pipeline_drain_now(void)
{
    drain_pass();
}

/* ------------------------------------------------------ the end */

static void finish_work(int request)
{
    struct gt_tls *t = &gt_tls;
    t->finishing = 1;
    gt_buffer_close();
    gt_chunk *live = gt_buffer_collect_live();
    uint32_t n;
    gt_chunk *fresh = gt_publish_take(&n), **tail = &fresh;
    while (*tail)
        tail = &(*tail)->h.next;
    *tail = live; /* each thread's live chunk is its last */
    gt_clock_refine();
    consume_all(fresh, 0);
    uint64_t deadline = gt_clock_mono_ns() + (uint64_t)params.final_wait_ms * 1000000u;
    while (held_head && gt_clock_mono_ns() < deadline) {
        struct timespec ms = ms_timespec(1);
        nanosleep(&ms, NULL);
        gt_clock_refine();
        consume_all(NULL, 0);
    }
    if (held_head) consume_all(NULL, 1);
    gt_pipeline_totals totals = {
        .records = consumed,
        .dropped = gt_threads_dropped(),
        .signal = request == FINISH_REQUEST_EXIT ? 0 : request,
    };
    if (params.finished) params.finished(&totals, params.ctx);
    atomic_store_explicit(&finish_state, FINISH_DONE, memory_order_release);
    futex(&finish_state, FUTEX_WAKE, INT_MAX, NULL);
    t->finishing = 0;
}

/* ------------------------------------------------------ the thread */

static void *drain_main(void *arg)
{
    (void)arg;
    gt_tls.state = GT_TLS_NEVER; /* the shim's own CUDA calls here are never recorded */
    gt_tls.guard = 1;
    unsigned sleep_ms = 1;
    for (;;) {
        uint32_t seen = atomic_load_explicit(&wake_seq, memory_order_acquire);
        int request = atomic_load_explicit(&finish_request, memory_order_acquire);
        if (request) {
            finish_work(request);
            return NULL;
        }
        /* Idle: back off to idle_sleep_ms; held chunks wait on the GPU:
         * look again soon. */
        if (drain_pass() || held_head)
            sleep_ms = 1;
        else if (sleep_ms < params.idle_sleep_ms)
            sleep_ms = sleep_ms * 2 < params.idle_sleep_ms ? sleep_ms * 2 : params.idle_sleep_ms;
        /* Never past the next edge of a capture window (capture.h). */
        uint64_t wait_ns = (uint64_t)sleep_ms * 1000000u;
        uint64_t edge_ns = gt_capture_poll(gt_clock_mono_ns());
        if (edge_ns < wait_ns) wait_ns = edge_ns;
        struct timespec timeout = {(time_t)(wait_ns / 1000000000u), (long)(wait_ns % 1000000000u)};
        futex(&wake_seq, FUTEX_WAIT, seen, &timeout);
    }
}

void gt_drain_ensure_started(void)
{
    if (GT_LIKELY(atomic_load_explicit(&drain_state, memory_order_acquire) != DRAIN_NONE)) return;
    if (!params.drain_thread) return;
    int expected = DRAIN_NONE;
    if (!atomic_compare_exchange_strong_explicit(&drain_state, &expected, DRAIN_STARTING,
                                                 memory_order_acq_rel, memory_order_acquire))
        return;
    int saved = errno;
    /* The drain takes no signal: SIGINT/SIGTERM must reach a program thread,
     * whose handler then waits for the drain. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_t thread;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&thread, &attr, drain_main, NULL);
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) pthread_setname_np(thread, "gputrace-drain");
    atomic_store_explicit(&drain_state, rc == 0 ? DRAIN_RUNNING : DRAIN_FAILED,
                          memory_order_release);
    if (rc != 0)
        gt_warn("cannot start the drain thread (%s): records wait until exit, past the buffer "
                "they are dropped",
                strerror(rc));
    errno = saved;
}

/* ------------------------------------------------------ life */

int gt_pipeline_start(const gt_pipeline_params *p)
{
    params = *p;
    if (!params.chunk_bytes) params.chunk_bytes = GT_CHUNK_DEFAULT_BYTES;
    if (!params.idle_sleep_ms) params.idle_sleep_ms = 50;
    int rc = gt_pool_init(params.chunk_bytes, params.cap_bytes);
    gt_threads_init();
    gt_threads_reset();
    gt_tls_reset();
    held_head = NULL;
    held_tail = &held_head;
    n_blocked = 0;
    all_blocked = 0;
    consumed = 0;
    atomic_store_explicit(&wake_seq, 0, memory_order_relaxed);
    atomic_store_explicit(&finish_request, 0, memory_order_relaxed);
    atomic_store_explicit(&finish_state, FINISH_OPEN, memory_order_relaxed);
    atomic_store_explicit(&drain_state, DRAIN_NONE, memory_order_release);
    gt_buffer_open();
    return rc;
}

/* Bars a later start; returns the drain's state once it is settled. */
static int claim_drain(void)
{
    int state = atomic_load_explicit(&drain_state, memory_order_acquire);
    for (;;) {
        if (state == DRAIN_NONE) {
            if (atomic_compare_exchange_weak_explicit(&drain_state, &state, DRAIN_BARRED,
                                                      memory_order_acq_rel, memory_order_acquire))
                return DRAIN_BARRED;
        } else if (state == DRAIN_STARTING) {
            sched_yield();
            state = atomic_load_explicit(&drain_state, memory_order_acquire);
        } else {
            return state;
        }
    }
}

/* Async-signal-safe. */
static int wait_finished(unsigned wait_ms)
{
    uint64_t deadline = gt_clock_mono_ns() + (uint64_t)wait_ms * 1000000u;
    for (;;) {
        uint32_t s = atomic_load_explicit(&finish_state, memory_order_acquire);
        if (s == FINISH_DONE) return 0;
        uint64_t now = gt_clock_mono_ns();
        if (now >= deadline) return -1;
        uint64_t left = deadline - now;
        struct timespec timeout = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        futex(&finish_state, FUTEX_WAIT, s, &timeout);
    }
}

static int claim_finish(void)
{
    uint32_t open = FINISH_OPEN;
    return atomic_compare_exchange_strong_explicit(&finish_state, &open, FINISH_BUSY,
                                                   memory_order_acq_rel, memory_order_acquire);
}

int gt_pipeline_finish(unsigned wait_ms)
{
    int saved = errno, rc = -1;
    if (claim_finish()) {
        if (claim_drain() == DRAIN_RUNNING) {
            atomic_store_explicit(&finish_request, FINISH_REQUEST_EXIT, memory_order_release);
            gt_drain_wake();
            rc = wait_finished(wait_ms);
        } else {
            finish_work(FINISH_REQUEST_EXIT);
            rc = 0;
        }
    } else if (!gt_tls.finishing) {
        rc = wait_finished(wait_ms);
    }
    errno = saved;
    return rc;
}

int gt_pipeline_finish_from_signal(int sig, unsigned wait_ms)
{
    int saved = errno, rc = -1;
    if (claim_finish()) {
        if (atomic_load_explicit(&drain_state, memory_order_acquire) == DRAIN_RUNNING) {
            atomic_store_explicit(&finish_request, sig, memory_order_release);
            gt_drain_wake();
            rc = wait_finished(wait_ms);
        } else {
            /* No drain, so nothing recorded: nothing to report. */
            atomic_store_explicit(&finish_state, FINISH_OPEN, memory_order_release);
        }
    } else if (!gt_tls.finishing) {
        rc = wait_finished(wait_ms);
    }
    errno = saved;
    return rc;
}

int gt_pipeline_finished(void)
{
    return atomic_load_explicit(&finish_state, memory_order_acquire) == FINISH_DONE;
}
