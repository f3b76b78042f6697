/* The drain: takes published chunks, resolves GPU times, hands records to
 * the consumer in each thread's order, recycles chunks; and the drain's
 * side of the pipeline's end steps (end.c says when each is made).
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
 * they count against the cap.
 *
 * At an end step every thread's records so far are taken: live chunks are
 * stolen from their threads. A stolen chunk stays its thread's to write:
 * the thread fills it, then moves on to a new chunk without publishing it.
 * The drain keeps it held (consuming what was committed since at every
 * pass) until its thread has moved on; then it is consumed to its end and
 * recycled. It never holds up its thread's later chunks: a thread can only
 * publish one after leaving it, and the drain sees that it left before it
 * takes the later chunk.
 *
 * Records are reported (consumed before the cut), dropped before it, or
 * late (consumed or dropped after it): each exactly one of them. */
#include "buffer.h"
#include "clock.h"
#include "compiler.h"
#include "drain_steps.h"
#include "event.h"
#include "log.h"
#include "pipeline.h"
#include "record.h"
#include "thread.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BLOCKED_MAX 64 /* threads with held chunks tracked one by one */

static gt_pipeline_params params;
static _Atomic int drain_state;   /* acquire/release: the thread exists once RUNNING is seen */
static _Atomic uint32_t wake_seq; /* futex word: bumped (release) to wake the drain */
static const gt_gpu_resolver *_Atomic resolver;

/* Draining-thread state. */
static gt_chunk *held_head, **held_tail = &held_head;
static uint32_t blocked[BLOCKED_MAX];
static unsigned n_blocked;
static int all_blocked;          /* more threads held than tracked: hold every chunk */
static int waiting_gpu;          /* the last consume_all held a chunk for a GPU time */
static uint64_t consumed;        /* records handed to the consumer */
static int cut_done;             /* every record consumed from now on is late (gt_drain_cut) */
static uint64_t reported;        /* records consumed up to the cut */
static uint64_t dropped_cut;     /* records dropped up to the cut */
static uint64_t gpu_given_up;    /* reported records whose pending GPU time was given up */
static uint64_t gpu_deadline_ns; /* 0: pending GPU times are awaited without bound */
static int gpu_past_deadline;

long gt_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

void gt_drain_wake(void)
{
    int saved = errno;
    atomic_fetch_add_explicit(&wake_seq, 1, memory_order_release);
    gt_futex(&wake_seq, FUTEX_WAKE, 1, NULL);
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

enum gt_gpu_source gt_gpu_timing_source(char *detail, size_t cap)
{
    const gt_gpu_resolver *r = atomic_load_explicit(&resolver, memory_order_acquire);
    if (r && r->source) return r->source(detail, cap);
    if (cap) detail[0] = '\0';
    return GT_GPU_SOURCE_OFF;
}

/* ------------------------------------------------------ consuming */

static int is_blocked(uint32_t owner)
{
    if (all_blocked) return 1;
    for (unsigned i = 0; i < n_blocked; i++)
        if (blocked[i] == owner) return 1;
    return 0;
}

static void append_held(gt_chunk *c)
{
    c->h.next = NULL;
    *held_tail = c;
    held_tail = &c->h.next;
}

/* Held, and its thread's later chunks with it. */
static void hold(gt_chunk *c)
{
    if (!is_blocked(c->h.owner)) {
        if (n_blocked < BLOCKED_MAX)
            blocked[n_blocked++] = c->h.owner;
        else
            all_blocked = 1;
    }
    append_held(c);
}

/* Hands records [from, to) of c to the consumer. */
static void consume_run(gt_chunk *c, uint32_t from, uint32_t to)
{
    if (to <= from) return;
    params.consume(&c->ev[from], to - from, params.ctx);
    consumed += to - from;
}

/* Records the source made for ev = c->ev[i] (resolved), handed over right
 * after it: the run up to ev first. Returns where the next run starts. */
#define EXTRAS_MAX 64u
static uint32_t consume_extras(const gt_gpu_resolver *r, gt_chunk *c, uint32_t run, uint32_t i)
{
    gt_event extra[EXTRAS_MAX];
    uint32_t n = r->extras(&c->ev[i], extra, EXTRAS_MAX);
    if (!n) return run;
    consume_run(c, run, i + 1);
    do
        params.consume(extra, n, params.ctx);
    while ((n = r->extras(&c->ev[i], extra, EXTRAS_MAX)) != 0);
    return i + 1;
}

/* Whether an end step's time for GPU times is up. Until then a pending
 * GPU time is read if it can be: a backlog of records to resolve (the
 * drain behind threads that launch without pause) would otherwise hold
 * the exit for as long as reading them all takes. */
static int past_gpu_deadline(void)
{
    if (!gpu_past_deadline && gpu_deadline_ns && gt_clock_mono_ns() >= gpu_deadline_ns)
        gpu_past_deadline = 1;
    return gpu_past_deadline;
}

/* Resolves ev's GPU time; 0 when it must wait. After the cut (the record
 * is late) and past an end step's deadline it is given up at once: timed
 * only if the source has the time at hand. From the cut on, nothing reads
 * or reuses an event pair any more (the process is ending), so the source
 * is told not to give anything back (GT_GPU_GIVE_UP_CUT): with the drain
 * far behind threads launching without pause, giving back hundreds of
 * thousands of pairs would cost the exit more than its bound. Before an
 * exec (the exec may fail and the program go on), pairs are given back. */
static int settle_gpu(const gt_gpu_resolver *r, gt_event *ev)
{
    if (!r) return 1;
    int late = cut_done;
    if (!late && !past_gpu_deadline()) return r->resolve(ev, 0);
    r->resolve(ev, gt_pipeline_cutting() ? GT_GPU_GIVE_UP_CUT : GT_GPU_GIVE_UP);
    gpu_given_up += !late && !(ev->flags & GT_EVF_GPU_TIMED);
    return 1;
}

/* An end step was asked for while a pass works through a backlog: the
 * rest waits (held, in order) for the step, which takes over at once. */
static int end_step_asked(int in_end_step)
{
    return !in_end_step && gt_end_asked();
}

enum chunk_result {
    CHUNK_DONE,     /* consumed to its end: it may be recycled */
    CHUNK_WAIT_GPU, /* a record waits for its GPU time (h.done points at it) */
    CHUNK_OPEN      /* stolen, consumed so far; its thread still writes it */
};

/* Consumes records from c->h.done on.
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
static int consume_chunk(gt_chunk *c, int in_end_step)
{
    int open = 0;
    if (atomic_load_explicit(&c->h.state, memory_order_relaxed) == GT_CHUNK_STOLEN) {
        /* Acquire: once its thread has moved on (its last commit came
         * before), the count read next is the chunk's last. */
        open = atomic_load_explicit(&c->h.thr->current, memory_order_acquire) == c;
        c->h.limit = atomic_load_explicit(&c->h.committed, memory_order_acquire);
    }
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
        /* Reading a GPU time takes the driver's locks, which threads
         * launching meanwhile contend for: an end step asked for does not
         * wait for the rest of the chunk. */
        if (end_step_asked(in_end_step) || !settle_gpu(r, ev)) {
            c->h.done = i;
            return CHUNK_WAIT_GPU;
        }
        ev->flags &= (uint8_t)~GT_EVF_GPU_PENDING;
        if (r && r->extras) run = consume_extras(r, c, run, i);
    }
    consume_run(c, run, c->h.limit);
    c->h.done = c->h.limit;
    return open ? CHUNK_OPEN : CHUNK_DONE;
}

static void consume_list(gt_chunk *c, int in_end_step)
{
    while (c) {
        if (end_step_asked(in_end_step)) {
            *held_tail = c;
            while (c->h.next)
                c = c->h.next;
            held_tail = &c->h.next;
            return;
        }
        gt_chunk *next = c->h.next;
        int res = is_blocked(c->h.owner) ? CHUNK_WAIT_GPU : consume_chunk(c, in_end_step);
        if (res == CHUNK_DONE) {
            gt_pool_recycle(c);
        } else if (res == CHUNK_OPEN) {
            append_held(c);
        } else {
            hold(c);
            waiting_gpu = 1;
        }
        c = next;
    }
}

static int never(void)
{
    return 0;
}

/* Retries the held chunks (oldest first), then consumes `fresh`. */
static void consume_all(gt_chunk *fresh)
{
    int in_end_step = gt_tls.finishing;
    const gt_gpu_resolver *r = atomic_load_explicit(&resolver, memory_order_acquire);
    if (r && r->poll && !cut_done) {
        uint64_t now = gpu_deadline_ns ? gt_clock_mono_ns() : 0;
        r->poll(gpu_deadline_ns > now ? gpu_deadline_ns - now : gpu_deadline_ns ? 1 : 0,
                in_end_step ? never : gt_end_asked);
    }
    gt_chunk *held = held_head;
    held_head = NULL;
    held_tail = &held_head;
    n_blocked = 0;
    all_blocked = 0;
    waiting_gpu = 0;
    consume_list(held, in_end_step);
    consume_list(fresh, in_end_step);
}

static int drain_pass(void)
{
    uint32_t n;
    gt_chunk *fresh = gt_publish_take(&n);
    if (!fresh && !held_head) return 0;
    gt_clock_refine(); /* after the take: every tick to convert is older */
    consume_all(fresh);
    return n != 0;
}

void gt_pipeline_drain_now(void)
{
    drain_pass();
}

/* ------------------------------------------------------ end steps, the drain's side */

/* The stolen chunk of the same thread as c, if any. */
static gt_chunk *stolen_of(gt_chunk *stolen, const gt_chunk *c)
{
    for (; stolen; stolen = stolen->h.next)
        if (stolen->h.owner == c->h.owner) return stolen;
    return NULL;
}

/* Every thread's records so far, in each thread's order: live chunks are
 * stolen first, then the published ones taken. A thread may have moved on
 * from its stolen chunk and published a newer one meanwhile: that one
 * (begun at a later sequence number) goes after the stolen ones. */
static gt_chunk *take_all(void)
{
    gt_chunk *stolen = gt_buffer_steal_live();
    uint32_t n;
    gt_chunk *fresh = gt_publish_take(&n);
    gt_chunk *older = NULL, **older_tail = &older, *newer = NULL, **newer_tail = &newer;
    while (fresh) {
        gt_chunk *next = fresh->h.next;
        const gt_chunk *s = stolen_of(stolen, fresh);
        fresh->h.next = NULL;
        if (s && fresh->h.first_seq >= s->h.first_seq) {
            *newer_tail = fresh;
            newer_tail = &fresh->h.next;
        } else {
            *older_tail = fresh;
            older_tail = &fresh->h.next;
        }
        fresh = next;
    }
    gt_chunk **tail = &stolen;
    while (*tail)
        tail = &(*tail)->h.next;
    *tail = newer;
    *older_tail = stolen;
    return older;
}

void gt_drain_settle(void)
{
    gt_chunk *all = take_all();
    gt_clock_refine();
    gpu_deadline_ns = gt_clock_mono_ns() + (uint64_t)params.final_wait_ms * 1000000u;
    gpu_past_deadline = 0;
    consume_all(all);
    while (waiting_gpu) {
        uint64_t now = gt_clock_mono_ns();
        uint64_t nap = now < gpu_deadline_ns ? gpu_deadline_ns - now : 0;
        if (nap > 1000000u) nap = 1000000u;
        struct timespec ts = gt_ns_timespec(nap);
        nanosleep(&ts, NULL);
        gt_clock_refine();
        consume_all(NULL);
    }
    gpu_deadline_ns = 0;
    gpu_past_deadline = 0;
}

void gt_drain_cut(void)
{
    cut_done = 1;
    reported = consumed;
    dropped_cut = gt_threads_dropped();
    if (params.cut) params.cut(params.ctx);
}

void gt_drain_last(void)
{
    gt_buffer_close();
    gt_chunk *all = take_all();
    gt_clock_refine();
    consume_all(all); /* after the cut: nothing waits for the GPU */
}

static void report(int final, int sig, int snapshot)
{
    uint64_t dropped = gt_threads_dropped();
    gt_pipeline_totals totals = {
        .records = cut_done ? reported : consumed,
        .dropped = cut_done ? dropped_cut : dropped,
        .late = cut_done ? consumed - reported + (dropped - dropped_cut) : 0,
        .gpu_given_up = gpu_given_up,
        .signal = sig,
        .final = final,
        .snapshot = snapshot,
    };
    if (totals.dropped) gt_pool_drops_get(&totals.drops);
    if (params.finished) params.finished(&totals, params.ctx);
}

void gt_drain_report(int final, int sig)
{
    report(final, sig, 0);
}

/* A snapshot, on the drain thread between its passes: every thread's
 * records so far (live chunks stolen, as for an end step), consumed up to
 * the first that waits for its GPU time; nothing waits and no GPU time is
 * given up (the rest comes in later reports). An end step asked for
 * meanwhile takes over: the snapshot is then not written. Program threads
 * are never waited for: they go on recording into their chunks, and what
 * does not fit while the files are written is counted as dropped. */
static void snapshot(void)
{
    gt_chunk *all = take_all();
    gt_clock_refine();
    consume_all(all);
    if (!gt_end_asked()) report(0, 0, 1);
}

/* ------------------------------------------------------ the thread */

static void *drain_main(void *arg)
{
    (void)arg;
    gt_tls.state = GT_TLS_NEVER; /* the shim's own CUDA calls here are never recorded */
    gt_tls.guard = 1;
    unsigned sleep_ms = 1;
    uint64_t next_snapshot = params.snapshot_ns ? gt_clock_mono_ns() + params.snapshot_ns : 0;
    for (;;) {
        uint32_t seen = atomic_load_explicit(&wake_seq, memory_order_acquire);
        int sig = 0;
        uint32_t steps = gt_end_take(&sig);
        if (steps) {
            if (gt_end_work(steps, sig)) return NULL;
            continue;
        }
        if (next_snapshot && !cut_done && gt_clock_mono_ns() >= next_snapshot) {
            snapshot();
            /* One interval after the last due, none made up for. */
            uint64_t now = gt_clock_mono_ns();
            while (next_snapshot <= now)
                next_snapshot += params.snapshot_ns;
            continue;
        }
        /* Idle: back off to idle_sleep_ms; chunks waiting on the GPU: look
         * again soon. */
        if (drain_pass() || waiting_gpu)
            sleep_ms = 1;
        else if (sleep_ms < params.idle_sleep_ms)
            sleep_ms = sleep_ms * 2 < params.idle_sleep_ms ? sleep_ms * 2 : params.idle_sleep_ms;
        /* Never past the next edge the parameters name (a capture window's). */
        uint64_t wait_ns = (uint64_t)sleep_ms * 1000000u;
        uint64_t now = gt_clock_mono_ns();
        if (params.next_edge) {
            uint64_t edge_ns = params.next_edge(now, params.ctx);
            if (edge_ns < wait_ns) wait_ns = edge_ns;
        }
        if (next_snapshot && (next_snapshot <= now || next_snapshot - now < wait_ns))
            wait_ns = next_snapshot <= now ? 0 : next_snapshot - now;
        struct timespec timeout = gt_ns_timespec(wait_ns);
        gt_futex(&wake_seq, FUTEX_WAIT, seen, &timeout);
    }
}

void gt_drain_ensure_started(void)
{
    if (GT_LIKELY(atomic_load_explicit(&drain_state, memory_order_acquire) != GT_DRAIN_NONE))
        return;
    if (!params.drain_thread) return;
    int expected = GT_DRAIN_NONE;
    if (!atomic_compare_exchange_strong_explicit(&drain_state, &expected, GT_DRAIN_STARTING,
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
    atomic_store_explicit(&drain_state, rc == 0 ? GT_DRAIN_RUNNING : GT_DRAIN_FAILED,
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
    static const gt_pool_hooks hooks = {gt_drain_wake, gt_drain_ensure_started};
    int rc = gt_pool_init(params.chunk_bytes, params.cap_bytes, &hooks);
    gt_threads_init();
    gt_threads_reset();
    gt_tls_reset();
    held_head = NULL;
    held_tail = &held_head;
    n_blocked = 0;
    all_blocked = 0;
    waiting_gpu = 0;
    consumed = reported = dropped_cut = gpu_given_up = gpu_deadline_ns = 0;
    cut_done = gpu_past_deadline = 0;
    atomic_store_explicit(&wake_seq, 0, memory_order_relaxed);
    gt_end_reset();
    atomic_store_explicit(&drain_state, GT_DRAIN_NONE, memory_order_release);
    gt_buffer_open();
    return rc;
}

int gt_drain_settled(int bar)
{
    int state = atomic_load_explicit(&drain_state, memory_order_acquire);
    for (;;) {
        if (state == GT_DRAIN_NONE && bar) {
            if (atomic_compare_exchange_weak_explicit(&drain_state, &state, GT_DRAIN_BARRED,
                                                      memory_order_acq_rel, memory_order_acquire))
                return GT_DRAIN_BARRED;
        } else if (state == GT_DRAIN_STARTING) {
            sched_yield();
            state = atomic_load_explicit(&drain_state, memory_order_acquire);
        } else {
            return state;
        }
    }
}

int gt_drain_running(void)
{
    return atomic_load_explicit(&drain_state, memory_order_acquire) == GT_DRAIN_RUNNING;
}
