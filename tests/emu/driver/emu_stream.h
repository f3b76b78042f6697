/* Streams, events, stream capture and graphs of the emulated driver.
 *
 * Time model: every stream has a virtual clock in CLOCK_MONOTONIC ns. Work
 * is scheduled when it is submitted: start = max(submit time, stream clock,
 * dependencies), end = start + simulated duration, and the stream clock
 * becomes end. Work is complete once end is reached (within GT_SLACK_NS)
 * and the stream's worker thread has carried out every data operation
 * (copy, memset, host function, cross-stream wait) queued before it. Host
 * synchronisation sleeps until then, so it takes as long as the simulated
 * work. Kernels execute no code: they only occupy their simulated time. */
#ifndef GTEMU_EMU_STREAM_H
#define GTEMU_EMU_STREAM_H

#include "emu.h"
#include "gtemu_trace.h"

enum gt_stream_type {
    GT_STREAM_BLOCKING,    /* cuStreamCreate without CU_STREAM_NON_BLOCKING */
    GT_STREAM_NONBLOCKING, /* exempt from legacy default stream ordering */
    GT_STREAM_LEGACY,      /* the NULL stream / CU_STREAM_LEGACY */
    GT_STREAM_PER_THREAD   /* CU_STREAM_PER_THREAD: blocking, one per thread */
};

/* A 3D copy: `depth` slices of `height` rows of `width` bytes; 1D and 2D
 * copies have depth 1 (and height 1). */
struct gt_copy {
    void *dst;
    const void *src;
    size_t width, height, depth;
    size_t dpitch, spitch; /* bytes between rows */
    size_t dslice, sslice; /* bytes between slices */
};

/* A 2D memset of `elem`-byte elements; width counts elements. */
struct gt_memset {
    void *dst;
    uint32_t value;
    unsigned elem;
    size_t width, height, pitch;
};

struct gt_wait_target {
    struct gt_stream *stream;
    unsigned long long stream_id; /* the stream is gone (done) once its id changed */
    uint64_t seq;
};

enum gt_op_kind {
    GT_OP_COPY = 1,
    GT_OP_MEMSET,
    GT_OP_HOST_FN,
    GT_OP_STREAM_CALLBACK,
    GT_OP_WAIT,
    GT_OP_FREE_DEVICE,
    GT_OP_FREE_HOST_BUFFER
};

/* One unit of work for a stream's worker thread. */
struct gt_op {
    uint8_t kind;
    uint64_t start; /* virtual start: host functions do not run earlier */
    union {
        struct gt_copy copy;
        struct gt_memset memset;
        struct {
            CUhostFn fn;
            void *arg;
        } host;
        struct {
            CUstreamCallback cb;
            CUstream handle;
            void *arg;
        } callback;
        struct gt_wait_target wait;
        CUdeviceptr free_ptr;
        void *host_buffer;
    } u;
};

struct gt_capture;
struct gt_node;
struct gt_event;

struct gt_anchor {
    struct gt_event *event;
    uint64_t gen;
    bool closes; /* recorded right after work: may keep that work's end */
    uint64_t submitted;      /* when the record was submitted */
    uint64_t work_returned;  /* when the call submitting the work it may close returned */
};

struct gt_stream {
    struct gt_object obj;
    /* Kept when the object is reused (see gt_object_new): a wait op or an
     * event may still refer to (stream, id) and to the queue counters. */
    pthread_mutex_t lock;
    pthread_cond_t work_cond; /* the worker waits for work */
    pthread_cond_t done_cond; /* hosts wait for the worker or for queue space */
    _Atomic unsigned long long id;
    struct gt_op *ring; /* worker queue: a growable ring (lock) */
    size_t ring_cap;
    uint64_t work_head, work_tail;
    _Atomic uint64_t work_done; /* release: effects of ops below it are visible */

    /* Reset on reuse. */
    struct gt_context *ctx;
    unsigned flags;
    int priority;
    enum gt_stream_type type;
    bool ordered; /* takes part in legacy default stream ordering */
    int done_waiters;
    bool worker_running, worker_idle, retiring, no_worker, inline_pending;

    /* Virtual schedule (lock; also ctx->order_lock when ordered). */
    uint64_t clock;
    uint64_t ops;
    uint64_t ends[GT_QUEUE_DEPTH]; /* end time of op n at [n % depth] */
    uint64_t submit_now;           /* the submit time gt_stream_begin used */
    uint64_t submit_after;         /* clock and dependencies gt_stream_begin found */
    bool last_was_record;          /* nothing but event records since the last work */
    bool run_closes;               /* those records came right after work (event.c) */
    bool host_waited;              /* for one of those records (event.c) */
    uint64_t works;                /* work (not steps) submitted so far */
    uint64_t last_work_returned;   /* when the call submitting the last work returned */
    bool work_submitted;           /* the call in progress submitted work */
    uint64_t legacy_waited;        /* legacy stream seq already waited for (order_lock) */
    uint64_t waited_by_legacy;     /* our seq the legacy stream already waits for (order_lock) */

    /* Events recorded while idle, re-timed to the start of the next work. */
    struct gt_anchor anchors[8];
    int n_anchors;

    /* Stream capture: written under the capture lock (capture.c); the
     * pointer is also read without it by every submission. */
    _Atomic(struct gt_capture *) capture;
    struct gt_node **cap_deps;
    size_t n_cap_deps, cap_deps_cap;

    struct gt_stream *next_in_ctx; /* ctx->order_lock */
};

#define GT_STREAM_KEEP offsetof(struct gt_stream, ctx)

/* ---- stream core (stream.c, stream_worker.c) ---- */

CUresult gt_stream_create(struct gt_context *ctx, enum gt_stream_type type, unsigned flags,
                          int priority, struct gt_stream **out);
/* Drops the stream: queued work still completes, then the object is reused. */
void gt_stream_retire(struct gt_stream *s);
/* Resolves a handle (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a
 * stream); `per_thread` is true for the _ptds/_ptsz entry points, where the
 * NULL stream means the per-thread default stream. */
CUresult gt_stream_resolve(CUstream h, bool per_thread, struct gt_stream **out);

/* Submission, in three steps so that a graph can submit many operations at
 * once. gt_stream_begin waits for queue space (n_ops data operations),
 * takes the locks, queues the waits that cross-stream ordering needs and
 * returns the earliest start: max(submit time, stream clock, dependencies)
 * (the last two also in s->submit_after). */
uint64_t gt_stream_begin(struct gt_stream *s, size_t n_ops);
/* Queues a data op; with `may_inline` it runs right here when the worker has
 * nothing queued (the stream's lock is still held, so order is kept). */
void gt_stream_push(struct gt_stream *s, const struct gt_op *op, bool may_inline);
/* Accounts one operation that starts at `start` and ends at `end`. Work
 * (a kernel, copy, memset, graph) fixes the provisional timestamps of the
 * events before it (event.c); a step that only orders the stream (a wait,
 * a host function, a stream-ordered free, a prefetch) leaves them to the
 * work that follows. */
void gt_stream_advance(struct gt_stream *s, uint64_t start, uint64_t end);
void gt_stream_advance_step(struct gt_stream *s, uint64_t start, uint64_t end);
/* Makes later work on s start no earlier than `ts`. */
void gt_stream_after(struct gt_stream *s, uint64_t ts);
void gt_stream_end(struct gt_stream *s);

/* Queues on s (between begin and end) a wait for the work `t` names,
 * unless that work is on s itself or already carried out. */
void gt_stream_push_wait(struct gt_stream *s, const struct gt_wait_target *t);

/* The next sequence number of the worker queue (lock held). */
static inline uint64_t gt_stream_seq(const struct gt_stream *s)
{
    return s->work_tail;
}

struct gt_done {
    uint64_t start, end, seq;
};

/* Submits one operation of `duration` ns; op may be NULL (kernels). */
void gt_stream_submit(struct gt_stream *s, uint64_t duration, const struct gt_op *op,
                      bool may_inline, struct gt_done *done);
/* Submits a step that takes no GPU time and is not work (see
 * gt_stream_advance_step); op may be NULL (an ordering point). */
void gt_stream_submit_step(struct gt_stream *s, const struct gt_op *op, bool may_inline);

/* The host waited for an event recorded on the stream identified by
 * (s, id) after its work number `works`: if no work came since, records
 * made from now on open the next work (event.c). */
void gt_stream_event_waited(struct gt_stream *s, unsigned long long id, uint64_t works);
/* Waits until the worker of the stream identified by (s, id) finished `seq`
 * ops or the stream is gone. */
void gt_stream_wait_work(struct gt_stream *s, unsigned long long id, uint64_t seq);
bool gt_stream_work_done(struct gt_stream *s, unsigned long long id, uint64_t seq);
/* Waits for everything submitted so far, then for its simulated end. */
void gt_stream_sync(struct gt_stream *s);
bool gt_stream_query(struct gt_stream *s);
/* Blocks until (seq done on s) and time >= end. */
void gt_wait_complete(struct gt_stream *s, unsigned long long id, uint64_t seq, uint64_t end);
void gt_run_op(const struct gt_op *op);
void gt_worker_start(struct gt_stream *s);
/* Frees the stream object after its worker has drained (lock held by caller
 * is released). */
void gt_stream_recycle(struct gt_stream *s);

/* ---- events (event.c) ---- */

struct gt_event {
    struct gt_object obj;
    /* Kept when the object is reused: anchors hold (event, gen). */
    pthread_mutex_t lock;
    uint64_t gen; /* incremented by each record and by destroy */

    /* Reset on reuse. */
    struct gt_context *ctx;
    unsigned flags;
    bool recorded;
    bool sealed; /* timestamp observed: no longer re-timed */
    /* Took the end of the work before it (a stop event): a GPU writes such
     * a timestamp only after its front end saw the work end, which elapsed
     * times read as GPUTRACE_EMU_EVENT_LATENCY_NS more. */
    bool closed;
    uint64_t ts;
    struct gt_stream *stream;
    unsigned long long stream_id;
    uint64_t work_seq;
    uint64_t works; /* the stream's work count at the record */
    /* Set when last recorded in a capture: the capture's dependency set. */
    struct gt_capture *capture;
    unsigned long long capture_id;
    struct gt_node **cap_deps;
    size_t n_cap_deps;
};

#define GT_EVENT_KEEP offsetof(struct gt_event, ctx)

CUresult gt_event_check(CUevent h, struct gt_event **out);

/* What a reader of an event needs: its timestamp and the stream work it
 * follows. Reading fixes the timestamp (see event.c). */
struct gt_event_view {
    bool recorded;
    bool captured;
    bool closed;
    uint64_t ts;
    struct gt_wait_target at;
    uint64_t works;
};

void gt_event_observe(struct gt_event *ev, struct gt_event_view *v);
/* Re-times events recorded on an idle stream to the start of the work that
 * followed them (stream lock held). */
void gt_anchor_resolve(struct gt_stream *s, uint64_t start);
/* A normal (not captured) record of ev on s. */
void gt_event_record_on(struct gt_event *ev, struct gt_stream *s);

/* ---- capture (capture.c) ---- */

struct gt_capture {
    unsigned long long id;
    struct gt_graph *graph;
    bool own_graph;    /* created by the capture (not cuStreamBeginCaptureToGraph) */
    size_t first_node; /* nodes from this index on were captured */
    CUstreamCaptureMode mode;
    struct gt_stream *origin;
    pthread_t thread;
    CUstreamCaptureStatus status;
    struct gt_capture *next; /* list of active captures */
};

/* The capture s takes part in, or NULL. */
static inline struct gt_capture *gt_stream_capture(struct gt_stream *s)
{
    /* Acquire: pairs with the release store when a capture begins. */
    return atomic_load_explicit(&s->capture, memory_order_acquire);
}
/* Checks the rules for using the legacy stream (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT). */
CUresult gt_capture_check_legacy(struct gt_stream *s);
/* Potentially unsafe calls (allocation, synchronisation) during capture:
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED per the thread's capture mode. */
CUresult gt_capture_check_unsafe(void);
/* Synchronising a capturing stream: invalidates the capture. */
CUresult gt_capture_check_sync(struct gt_stream *s);
void gt_capture_invalidate(struct gt_capture *cap);
void gt_capture_invalidate_context(struct gt_context *ctx);

enum gt_node_kind {
    GT_NODE_KERNEL = CU_GRAPH_NODE_TYPE_KERNEL,
    GT_NODE_MEMCPY = CU_GRAPH_NODE_TYPE_MEMCPY,
    GT_NODE_MEMSET = CU_GRAPH_NODE_TYPE_MEMSET,
    GT_NODE_HOST = CU_GRAPH_NODE_TYPE_HOST,
    GT_NODE_EMPTY = CU_GRAPH_NODE_TYPE_EMPTY,
    GT_NODE_WAIT_EVENT = CU_GRAPH_NODE_TYPE_WAIT_EVENT,
    GT_NODE_EVENT_RECORD = CU_GRAPH_NODE_TYPE_EVENT_RECORD,
    GT_NODE_MEM_FREE = CU_GRAPH_NODE_TYPE_MEM_FREE
};

struct gt_node_params {
    enum gt_node_kind kind;
    uint64_t ns; /* simulated duration */
    /* Kernels, copies, memsets: what a tracing tool is told when the node
     * runs (emu_trace.h). */
    struct gtemu_work work;
    union {
        struct {
            struct gt_function *fn;
        } kernel;
        struct gt_copy copy;
        struct gt_memset memset;
        struct {
            CUhostFn fn;
            void *arg;
        } host;
        struct gt_event *event;
        CUdeviceptr free_ptr;
    } u;
};

/* Adds a node for work submitted to a capturing stream (the node depends on
 * the stream's capture dependencies and becomes their new set). */
CUresult gt_capture_add(struct gt_stream *s, const struct gt_node_params *p);
CUresult gt_capture_event_record(struct gt_stream *s, struct gt_event *ev, bool external);
CUresult gt_capture_wait_event(struct gt_stream *s, struct gt_event *ev, bool external);

/* ---- graphs (graph.c) ---- */

struct gt_node {
    struct gt_object obj;
    struct gt_graph *graph;
    size_t index;
    struct gt_node_params p;
    struct gt_node **deps;
    size_t n_deps;
};

struct gt_graph {
    struct gt_object obj;
    uint32_t id; /* process-unique, for tracing tools */
    pthread_mutex_t lock;
    struct gt_node **nodes;
    size_t n_nodes, cap_nodes;
    struct gt_capture *capture; /* capture still writing into it */
};

CUresult gt_graph_new(struct gt_graph **out);
void gt_graph_free(struct gt_graph *g);
CUresult gt_graph_add_node(struct gt_graph *g, const struct gt_node_params *p,
                           struct gt_node *const *deps, size_t n_deps, struct gt_node **out);

#endif
