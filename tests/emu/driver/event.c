/* Events: timestamps on the stream's virtual clock.
 *
 * A GPU timestamps an event when it reaches it: at the end of the work
 * before it, or when the record is submitted if the stream was idle. That
 * puts into elapsed times however long the host took between its calls
 * (unbounded on a loaded machine), while tests need exactly the simulated
 * durations. So a record is provisional until someone looks at it (query,
 * synchronize, elapsed time, wait), and what comes next fixes it. The
 * records between two pieces of work form a run:
 *  - a record right after work (less than GT_FOLLOW_NS after its end)
 *    takes the end of that work: it may close the work (a "stop" event).
 *    So do the records after it in the run, until the host waits for one
 *    of them (cuEventSynchronize: what is recorded after that opens the
 *    next work). Any other record takes max(submit time, stream clock);
 *  - when work follows, the run is split: records before the split keep
 *    the end of the work before them (they closed it), records after it
 *    are re-timed to the start of the work that follows (they opened it).
 *    A record that did not close work is after the split. A run of one
 *    record that closed work goes to whichever of the two was submitted
 *    nearer to it in host time (a profiler's stop followed later by work
 *    it did not time keeps that work's end). In a longer run the first
 *    record is a stop and the last a start (the pair a profiler puts
 *    around each kernel); the records between go by nearness. So a tool's
 *    pair inside the program's own leaves the program's times as they
 *    are without it: the stops after the work, the starts before it.
 *    Steps that only order the stream (waits, host functions, frees) are
 *    not work: they leave provisional records to the work after them.
 * A GPU writes a stop's timestamp once its front end saw the work end, so a
 * pair reads more than the work it brackets: a record that kept the end of
 * the work before it reads GPUTRACE_EMU_EVENT_LATENCY_NS later in elapsed
 * times. Completion and the re-timing above use the work's own time. */
#include "emu_stream.h"

#include <stdlib.h>

#define GT_FOLLOW_NS 100000000ULL

CUresult gt_event_check(CUevent h, struct gt_event **out)
{
    CUresult r = gt_ready();
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_is(h, GT_KIND_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
    *out = (struct gt_event *)h;
    return CUDA_SUCCESS;
}

/* Work submitted at next_submit follows the record: does the record stay
 * with the work before it? */
static bool closes_previous(const struct gt_anchor *a, uint64_t next_submit)
{
    if (!a->closes) return false;
    uint64_t after_work = a->submitted > a->work_returned ? a->submitted - a->work_returned : 0;
    return after_work < next_submit - a->submitted;
}

/* Whether the run's record i of n keeps the end of the work before it,
 * when work submitted at next_submit follows. */
static bool stays_before(const struct gt_anchor *a, int i, int n, uint64_t next_submit)
{
    if (!a->closes) return false;
    if (n > 1 && i == 0) return true;
    if (n > 1 && i == n - 1) return false;
    return closes_previous(a, next_submit);
}

void gt_anchor_resolve(struct gt_stream *s, uint64_t start)
{
    bool opened = false; /* the split is passed: the rest open the work too */
    for (int i = 0; i < s->n_anchors; i++) {
        struct gt_event *ev = s->anchors[i].event;
        pthread_mutex_lock(&ev->lock);
        if (ev->gen == s->anchors[i].gen && !ev->sealed) {
            if (opened || !stays_before(&s->anchors[i], i, s->n_anchors, s->submit_now)) {
                ev->ts = start;
                ev->closed = false;
                opened = true;
            }
            ev->sealed = true;
        }
        pthread_mutex_unlock(&ev->lock);
    }
    s->n_anchors = 0;
}

static void add_anchor(struct gt_stream *s, struct gt_event *ev, uint64_t gen, bool closes)
{
    int n = (int)(sizeof s->anchors / sizeof s->anchors[0]);
    if (s->n_anchors == n) {
        /* The oldest keeps its provisional timestamp. */
        for (int i = 1; i < n; i++)
            s->anchors[i - 1] = s->anchors[i];
        s->n_anchors--;
    }
    s->anchors[s->n_anchors].event = ev;
    s->anchors[s->n_anchors].gen = gen;
    s->anchors[s->n_anchors].closes = closes;
    s->anchors[s->n_anchors].submitted = s->submit_now;
    s->anchors[s->n_anchors].work_returned = s->last_work_returned;
    s->n_anchors++;
}

void gt_event_record_on(struct gt_event *ev, struct gt_stream *s)
{
    uint64_t ready = gt_stream_begin(s, 0);
    bool near = s->submit_now < s->submit_after + GT_FOLLOW_NS;
    if (!s->last_was_record) s->run_closes = near; /* the run's first record */
    bool closes = s->run_closes && near && !s->host_waited;
    uint64_t ts = closes ? s->submit_after : ready;
    s->last_was_record = true;
    pthread_mutex_lock(&ev->lock);
    ev->gen++;
    ev->recorded = true;
    ev->sealed = false;
    ev->ts = ts;
    ev->closed = closes;
    ev->stream = s;
    ev->stream_id = atomic_load_explicit(&s->id, memory_order_relaxed);
    ev->work_seq = gt_stream_seq(s);
    ev->works = s->works;
    ev->capture = NULL;
    ev->n_cap_deps = 0;
    uint64_t gen = ev->gen;
    pthread_mutex_unlock(&ev->lock);
    add_anchor(s, ev, gen, closes);
    gt_stream_end(s);
    gt_count(&gt_counters.event_records);
}

void gt_event_observe(struct gt_event *ev, struct gt_event_view *v)
{
    pthread_mutex_lock(&ev->lock);
    ev->sealed = true;
    v->recorded = ev->recorded;
    v->captured = ev->capture != NULL;
    v->ts = ev->ts;
    v->closed = ev->closed;
    v->at.stream = ev->stream;
    v->at.stream_id = ev->stream_id;
    v->at.seq = ev->work_seq;
    v->works = ev->works;
    pthread_mutex_unlock(&ev->lock);
}

static bool view_complete(const struct gt_event_view *v)
{
    if (!v->recorded) return true;
    return gt_stream_work_done(v->at.stream, v->at.stream_id, v->at.seq) &&
           v->ts <= gt_now() + GT_SLACK_NS;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    struct gt_context *ctx;
    CUresult r = gt_ctx_require(&ctx);
    if (r != CUDA_SUCCESS) return r;
    unsigned valid = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~valid) ||
        ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        return CUDA_ERROR_INVALID_VALUE;
    bool fresh;
    struct gt_event *ev = gt_object_new(GT_KIND_EVENT, sizeof *ev, GT_EVENT_KEEP, &fresh);
    if (!ev) return CUDA_ERROR_OUT_OF_MEMORY;
    if (fresh) pthread_mutex_init(&ev->lock, NULL);
    pthread_mutex_lock(&ev->lock);
    ev->ctx = ctx;
    ev->flags = Flags;
    pthread_mutex_unlock(&ev->lock);
    gt_count(&gt_counters.events_created);
    *phEvent = (CUevent)ev;
    return CUDA_SUCCESS;
}

static CUresult event_destroy(CUevent h)
{
    struct gt_event *ev;
    CUresult r = gt_event_check(h, &ev);
    if (r != CUDA_SUCCESS) return r;
    if (!gt_object_kill(ev, GT_KIND_EVENT)) return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&ev->lock);
    ev->gen++; /* stale anchors no longer match */
    free(ev->cap_deps);
    ev->cap_deps = NULL;
    ev->n_cap_deps = 0;
    pthread_mutex_unlock(&ev->lock);
    gt_object_recycle(ev, GT_KIND_EVENT);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    return event_destroy(hEvent);
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
    return event_destroy(hEvent);
}

static CUresult event_record(CUevent hEvent, CUstream hStream, unsigned flags, bool per_thread)
{
    struct gt_event *ev;
    CUresult r = gt_event_check(hEvent, &ev);
    if (r != CUDA_SUCCESS) return r;
    struct gt_stream *s;
    r = gt_stream_resolve(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS) return r;
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    if (s->ctx != ev->ctx) return CUDA_ERROR_INVALID_HANDLE;
    r = gt_capture_check_legacy(s);
    if (r != CUDA_SUCCESS) return r;
    if (gt_stream_capture(s)) {
        gt_count(&gt_counters.capture_event_records);
        return gt_capture_event_record(s, ev, flags & CU_EVENT_RECORD_EXTERNAL);
    }
    if (flags & CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE; /* only meaningful during capture */
    gt_event_record_on(ev, s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    return event_record(hEvent, hStream, 0, false);
}

CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    return event_record(hEvent, hStream, 0, true);
}

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    return event_record(hEvent, hStream, flags, false);
}

CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    return event_record(hEvent, hStream, flags, true);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    struct gt_event *ev;
    CUresult r = gt_event_check(hEvent, &ev);
    if (r != CUDA_SUCCESS) return r;
    struct gt_event_view v;
    gt_event_observe(ev, &v);
    if (v.captured) return CUDA_ERROR_CAPTURED_EVENT;
    return view_complete(&v) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    struct gt_event *ev;
    CUresult r = gt_event_check(hEvent, &ev);
    if (r != CUDA_SUCCESS) return r;
    struct gt_event_view v;
    gt_event_observe(ev, &v);
    if (v.captured) return CUDA_ERROR_CAPTURED_EVENT;
    if (v.recorded) {
        gt_wait_complete(v.at.stream, v.at.stream_id, v.at.seq, v.ts);
        gt_stream_event_waited(v.at.stream, v.at.stream_id, v.works);
    }
    return CUDA_SUCCESS;
}

/* The timestamp as a GPU would have written it; completion and ordering
 * use the work's own time (view.ts). */
static uint64_t read_timestamp(const struct gt_event_view *v)
{
    return v->ts + (v->closed ? gt_config_get()->event_latency_ns : 0);
}

static CUresult elapsed_time(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    struct gt_event *a, *b;
    CUresult r = gt_event_check(hStart, &a);
    if (r == CUDA_SUCCESS) r = gt_event_check(hEnd, &b);
    if (r != CUDA_SUCCESS) return r;
    if (!pMilliseconds) return CUDA_ERROR_INVALID_VALUE;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    struct gt_event_view va, vb;
    gt_event_observe(a, &va);
    gt_event_observe(b, &vb);
    if (!va.recorded || !vb.recorded) return CUDA_ERROR_INVALID_HANDLE;
    if (va.captured || vb.captured) return CUDA_ERROR_CAPTURED_EVENT;
    if (!view_complete(&va) || !view_complete(&vb)) return CUDA_ERROR_NOT_READY;
    double ns = (double)read_timestamp(&vb) - (double)read_timestamp(&va);
    *pMilliseconds = (float)(ns / 1e6);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return elapsed_time(pMilliseconds, hStart, hEnd);
}

CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return elapsed_time(pMilliseconds, hStart, hEnd);
}
