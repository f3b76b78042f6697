/* The Perfetto trace's events, one record at a time (see pftrace.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "deflate.h"
#include "event.h"
#include "keyed.h"
#include "memory_table.h"
#include "nvtx_table.h"
#include "outbuf.h"
#include "pb.h"
#include "pftrace_internal.h"
#include "report.h"
#include "strtab.h"
#include "timeline.h"

static void add_uint(pf_event *e, enum pf_arg_name name, uint64_t v)
{
    e->args[e->nargs++] = (pf_arg){.name = (uint8_t)name, .kind = PF_UINT, .value = v};
}

static void add_interned(pf_event *e, enum pf_arg_name name, uint64_t iid)
{
    e->args[e->nargs++] = (pf_arg){.name = (uint8_t)name, .kind = PF_INTERNED, .value = iid};
}

/* A string id's annotation: interned like the names. */
static void add_string(pf_event *e, enum pf_arg_name name, uint32_t id)
{
    add_interned(e, name, PF_IID(PF_STR_STRING, id));
}

static void add_text(pf_event *e, enum pf_arg_name name, const char *text, size_t len)
{
    e->args[e->nargs++] =
        (pf_arg){.name = (uint8_t)name, .kind = PF_TEXT, .text = text, .len = len};
}

/* A slice's BEGIN into *e; its annotations (not cleared: there are none
 * yet) are added after. */
static void slice(pf_event *e, uint64_t ts, uint64_t name, enum gt_category c)
{
    e->type = PF_SLICE_BEGIN;
    e->category = (uint8_t)(c + 1);
    e->nargs = 0;
    e->ts = ts;
    e->name = name;
    e->flow_out = e->flow_in = e->counter = 0;
}

/* A host call on its thread. Its annotations say what no GPU slice says:
 * the bytes it moved or took and the kernel it launched, unless its GPU
 * slice has them; the program compiled; the error of a failed call; the
 * call site of a launch, copy, memset or allocation. A launch whose GPU
 * slice follows starts the flow to it. */
static void host_slice(gt_pftrace *t, const gt_event *ev, bool gpu_slice_follows, uint64_t flow)
{
    if (!ev->api) return;
    uint32_t seq = gt_pf_thread(t, ev->tid, ev->host_start);
    if (seq == UINT32_MAX) return;
    pf_event e;
    slice(&e, ev->host_start, PF_IID(PF_NAME_STRING, ev->api), gt_timeline_category(ev->kind));
    e.flow_out = flow;
    if (gt_timeline_has_bytes(ev->kind) && !gpu_slice_follows)
        add_uint(&e, PF_ARG_BYTES, ev->bytes);
    if ((ev->kind == GT_EV_KERNEL || ev->kind == GT_EV_GRAPH) && ev->name && !gpu_slice_follows)
        add_string(&e, PF_ARG_KERNEL, ev->name);
    if (ev->kind == GT_EV_COMPILE && ev->name) add_string(&e, PF_ARG_PROGRAM, ev->name);
    char number[16];
    if (ev->result && ev->error)
        add_string(&e, PF_ARG_ERROR, ev->error);
    else if (ev->result)
        add_text(&e, PF_ARG_ERROR, number,
                 (size_t)snprintf(number, sizeof number, "%d", (int)ev->result));
    if (ev->site && ev->site != GT_SITE_SKIPPED) add_string(&e, PF_ARG_SITE, GT_SITE_ID(ev->site));
    gt_pf_event(t, seq, &e);
    gt_pf_end(t, seq, ev->host_end > ev->host_start ? ev->host_end : ev->host_start);
}

/* The event name of GPU work: the kernel, the kind of copy, memset. */
static uint64_t gpu_name(const gt_event *ev)
{
    if (ev->kind == GT_EV_MEMCPY) {
        unsigned dir = ev->u.copy.dir < GT_DIR_COUNT ? ev->u.copy.dir : GT_DIR_COUNT;
        unsigned host = ev->u.copy.host_mem < GT_HOST_COUNT ? ev->u.copy.host_mem : GT_HOST_COUNT;
        unsigned async = (ev->flags & GT_EVF_ASYNC) != 0;
        return PF_IID(PF_NAME_FIXED, (dir * (GT_HOST_COUNT + 1) + host) * 2 + async);
    }
    if (ev->kind == GT_EV_MEMSET) return PF_IID(PF_NAME_FIXED, PF_FIXED_MEMSET);
    if (ev->kind == GT_EV_GRAPH) return PF_IID(PF_NAME_FIXED, PF_FIXED_GRAPH);
    if (ev->name) return PF_IID(PF_NAME_STRING, ev->name);
    return PF_IID(PF_NAME_FIXED, PF_FIXED_UNNAMED);
}

/* Launch dimensions: interned, or as text past the cap. */
static void add_dims(gt_pftrace *t, pf_event *e, enum pf_arg_name name, const uint32_t v[3],
                     char *buf, size_t cap)
{
    uint64_t iid = gt_pf_dims_iid(t, name == PF_ARG_BLOCK, v);
    if (iid)
        add_interned(e, name, iid);
    else
        add_text(e, name, buf, (size_t)snprintf(buf, cap, "%u,%u,%u", v[0], v[1], v[2]));
}

/* GPU work on a lane of its stream, ending the flow from its launch. Its
 * annotations are those the Chrome trace gives it: what neither its name
 * nor its track says. The stream is the track's name, a copy's direction
 * and host memory are in its name, and the launch is the flow's other end
 * (an annotation of each would cost a GPU slice 6 to 8 bytes more). */
static void gpu_slice(gt_pftrace *t, const gt_event *ev, uint32_t seq, uint64_t flow)
{
    pf_event e;
    slice(&e, ev->gpu_start, gpu_name(ev), gt_timeline_category(ev->kind));
    e.flow_in = flow;
    char grid[40], block[40];
    if (ev->kind == GT_EV_KERNEL) {
        add_dims(t, &e, PF_ARG_GRID, ev->u.kernel.grid, grid, sizeof grid);
        add_dims(t, &e, PF_ARG_BLOCK, ev->u.kernel.block, block, sizeof block);
        if (ev->u.kernel.shmem) add_uint(&e, PF_ARG_SHARED, ev->u.kernel.shmem);
    } else if (ev->kind != GT_EV_GRAPH) {
        add_uint(&e, PF_ARG_BYTES, ev->bytes);
    }
    gt_pf_event(t, seq, &e);
    gt_pf_end(t, seq, ev->gpu_end > ev->gpu_start ? ev->gpu_end : ev->gpu_start);
}

static void gpu_work(void *w, const gt_event *ev)
{
    gt_pftrace *t = w;
    bool gpu = gt_timeline_gpu_work(ev, t->categories);
    uint32_t lane = gpu ? gt_pf_gpu_lane(t, ev->device, gt_timeline_stream_track(ev), ev->gpu_start,
                                         ev->gpu_end)
                        : UINT32_MAX;
    /* Flow ids are global to a trace that may be opened with others: the
     * process's pid in the high half keeps them apart. */
    uint64_t flow = lane != UINT32_MAX ? t->uuid_base | ++t->flows : 0;
    host_slice(t, ev, gpu, flow);
    if (lane != UINT32_MAX) gpu_slice(t, ev, lane, flow);
}

/* Memory in use on a device row after a change (gt_mem_sink_fn). */
static void memory_changed(void *ctx, int32_t device, uint64_t time, uint64_t bytes)
{
    gt_pftrace *t = ctx;
    uint32_t seq = gt_pf_counter(t, device, time);
    if (seq == UINT32_MAX) return;
    pf_event e = {.type = PF_COUNTER, .ts = time, .counter = bytes};
    gt_pf_event(t, seq, &e);
}

/* An NVTX counter's sample on its own counter track of the process. */
static void nvtx_counter(void *w, const gt_event *ev)
{
    gt_pftrace *t = w;
    uint32_t seq = gt_pf_nvtx_counter(t, ev->u.counter.domain, ev->name, ev->host_start);
    if (seq == UINT32_MAX) {
        t->common.lost.tracks++;
        return;
    }
    pf_event e = {.type = PF_COUNTER,
                  .ts = ev->host_start,
                  .is_double = true,
                  .counter_double = gt_number_value(ev->u.counter.kind, ev->u.counter.value)};
    gt_pf_event(t, seq, &e);
}

void gt_pftrace_follow_memory(gt_pftrace *t, gt_memory *m)
{
    if (gt_memory_set_sink(m, memory_changed, t) == 0) t->memory = m;
}

/* --- NVTX ------------------------------------------------------------ */

/* What a range says beside its name. */
static void nvtx_args(pf_event *e, uint32_t domain, uint32_t category, uint32_t color, char *buf,
                      size_t cap)
{
    if (domain) add_string(e, PF_ARG_DOMAIN, domain);
    if (category) add_string(e, PF_ARG_CATEGORY, category);
    if (color)
        add_text(e, PF_ARG_COLOR, buf,
                 (size_t)snprintf(buf, cap, "#%06x", (unsigned)(color & 0xffffffu)));
}

static void nvtx_begin(gt_pftrace *t, uint32_t seq, uint8_t type, uint64_t ts, uint32_t name,
                       uint32_t domain, uint32_t category, uint32_t color)
{
    pf_event e;
    slice(&e, ts, PF_IID(PF_NAME_STRING, name), GT_CAT_NVTX);
    e.type = type;
    char buf[16];
    nvtx_args(&e, domain, category, color, buf, sizeof buf);
    gt_pf_event(t, seq, &e);
}

static void nvtx_push(void *w, const gt_event *ev)
{
    gt_pftrace *t = w;
    pf_stack *s = gt_pf_stack(t, ev->tid, ev->u.nvtx.domain, ev->host_start);
    if (!s) {
        t->common.lost.ranges++;
        return;
    }
    if (s->depth >= GT_NVTX_MAX_DEPTH) {
        /* Left out; its pop is dropped too, so the others stay paired. */
        t->common.lost.too_deep++;
        s->overflow++;
        return;
    }
    s->depth++;
    nvtx_begin(t, s->seq, PF_SLICE_BEGIN, ev->host_start, ev->name, ev->u.nvtx.domain,
               ev->u.nvtx.category, ev->u.nvtx.color);
}

static void nvtx_pop(void *w, const gt_event *ev)
{
    gt_pftrace *t = w;
    uint64_t key = ev->tid | (uint64_t)ev->u.nvtx.domain << 32;
    pf_stack *s = gt_keyed_find(&t->stacks, key);
    if (!s) return;
    if (s->overflow) {
        s->overflow--;
        return;
    }
    if (!s->depth) return; /* a pop with no push: nothing to end */
    s->depth--;
    gt_pf_end(t, s->seq, ev->host_start);
}

/* A start/end range with both halves: drawn whole on a lane. */
static void range_slice(gt_pftrace *t, const pf_range *r, uint64_t start, uint64_t end)
{
    if (end < start) end = start;
    uint32_t seq = gt_pf_range_lane(t, start, end);
    if (seq == UINT32_MAX) return;
    nvtx_begin(t, seq, PF_SLICE_BEGIN, start, r->name, r->domain, r->category, r->color);
    gt_pf_end(t, seq, end);
}

/* Start/end ranges: drawn when both halves have come (they may cross
 * threads, and either may come first). */
static void nvtx_start_end(void *w, const gt_event *ev)
{
    gt_pftrace *t = w;
    bool start = ev->kind == GT_EV_NVTX_START;
    uint64_t id = ev->u.nvtx.range_id;
    pf_range *r = gt_keyed_find(&t->ranges, id);
    pf_range half = {.time = ev->host_start,
                     .name = ev->name,
                     .domain = ev->u.nvtx.domain,
                     .category = ev->u.nvtx.category,
                     .color = ev->u.nvtx.color,
                     .ended = !start};
    if (r && r->ended == start) {
        pf_range other = *r;
        gt_keyed_remove(&t->ranges, id);
        if (start)
            range_slice(t, &half, ev->host_start, other.time);
        else
            range_slice(t, &other, other.time, ev->host_start);
        return;
    }
    if (!r)
        r = gt_keyed_add(&t->ranges,
                         id); /* else an id reused before its range ended: the newer wins */
    if (!r) {
        t->common.lost.ranges++;
        return;
    }
    *r = half;
}

static void nvtx_mark(void *w, const gt_event *ev)
{
    gt_pftrace *t = w;
    uint32_t seq = gt_pf_thread(t, ev->tid, ev->host_start);
    if (seq == UINT32_MAX) return;
    nvtx_begin(t, seq, PF_INSTANT, ev->host_start, ev->name, ev->u.nvtx.domain, ev->u.nvtx.category,
               ev->u.nvtx.color);
}

static void host_call(void *w, const gt_event *ev)
{
    host_slice(w, ev, false, 0);
}

static void thread_name(void *w, const gt_event *ev)
{
    gt_pf_thread_name(w, ev->tid, ev->name, ev->host_start);
}

static const gt_timeline_draw draw = {
    .gpu_work = gpu_work,
    .host = host_call,
    .nvtx_push = nvtx_push,
    .nvtx_pop = nvtx_pop,
    .nvtx_start_end = nvtx_start_end,
    .nvtx_mark = nvtx_mark,
    .nvtx_counter = nvtx_counter,
    .thread_name = thread_name,
};

void gt_pftrace_add(gt_pftrace *t, const gt_event *ev)
{
    gt_timeline_route(&draw, t, t->categories, ev);
}

/* --- the file: bundles of packets, deflated --------------------------- */

/* A bundle of whole packets as one packet of compressed_packets (a zlib
 * stream of them as Trace bytes), or as they are when that is no smaller
 * (gt_outbuf_sink). */
static void write_bundle(void *ctx, const char *p, size_t n)
{
    gt_pftrace *t = ctx;
    if (t->common.file.error) return; /* nothing more reaches the file: spare the work */
    if (n > GT_DEFLATE_MAX_INPUT) { /* only a packet of a gigabyte makes a bundle this big */
        gt_outbuf_write(&t->common.file, p, n);
        return;
    }
    size_t bound = gt_deflate_bound(n);
    if (bound > t->zcap) {
        uint8_t *grown = realloc(t->zbuf, bound);
        if (!grown) {
            gt_outbuf_write(&t->common.file, p, n);
            return;
        }
        t->zbuf = grown;
        t->zcap = bound;
    }
    size_t z = gt_deflate_zlib(t->deflate, (const uint8_t *)p, n, t->zbuf);
    size_t inner = 2 + gt_pb_varint_size(z) + z; /* field 50's tag takes two bytes */
    if (1 + gt_pb_varint_size(inner) + inner >= n) {
        gt_outbuf_write(&t->common.file, p, n);
        return;
    }
    uint8_t head[2 * GT_PB_FRAME_MAX], *h = head;
    h = gt_pb_varint(gt_pb_tag(h, PB_TRACE_PACKET, GT_PB_LEN), inner);
    h = gt_pb_varint(gt_pb_tag(h, PB_PACKET_COMPRESSED, GT_PB_LEN), z);
    gt_outbuf_write(&t->common.file, head, (size_t)(h - head));
    gt_outbuf_write(&t->common.file, t->zbuf, z);
}

static void free_buffers(gt_pftrace *t)
{
    gt_outbuf_free(&t->out);
    gt_outbuf_free(&t->common.file);
    free(t->deflate);
    free(t->zbuf);
    free(t->seen);
}

gt_pftrace *gt_pftrace_create(int fd, const gt_strtab *names, int pid, unsigned categories)
{
    gt_pftrace *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->seen = calloc((size_t)1 << PF_SEEN_BITS, sizeof(*t->seen));
    t->deflate = malloc(sizeof(*t->deflate));
    if (!t->seen || !t->deflate || gt_outbuf_init(&t->common.file, fd, PF_FILE_BUFFER_BYTES) != 0 ||
        gt_outbuf_init_sink(&t->out, PF_BUNDLE_BYTES, write_bundle, t) != 0) {
        free_buffers(t);
        free(t);
        return NULL;
    }
    gt_deflate_init(t->deflate);
    gt_pf_state_init(t);
    t->names = names;
    t->pid = pid;
    t->categories = categories;
    t->uuid_base = (uint64_t)(uint32_t)pid << 32;
    t->process = t->uuid_base + 1;
    pf_track k = {.uuid = t->process, .process = true};
    gt_pf_descriptor(t, &k);
    return t;
}

void gt_pftrace_destroy(gt_pftrace *t)
{
    if (!t) return;
    gt_pf_state_free(t);
    free_buffers(t);
    free(t);
}

int gt_pftrace_finish(gt_pftrace *t, const gt_process_info *p)
{
    uint64_t end = p ? p->end_ns : 0;
    /* Ranges still open at the end close there, as in the report (or at
     * their track's last event, when the end is not known). */
    for (uint32_t i = 0; i < t->stacks.n; i++) {
        pf_stack *s = gt_keyed_at(&t->stacks, i);
        uint64_t last = gt_pf_seq(t, s->seq)->last;
        for (; s->depth; s->depth--)
            gt_pf_end(t, s->seq, end > last ? end : last);
    }
    for (uint32_t i = 0; i < t->ranges.n; i++) {
        pf_range *r = gt_keyed_at(&t->ranges, i);
        if (!r->ended) range_slice(t, r, r->time, end > r->time ? end : r->time);
    }
    if (t->memory) gt_memory_set_sink(t->memory, NULL, t);
    t->memory = NULL;
    char name[256];
    gt_timeline_process_name(p, t->pid, name, sizeof name);
    pf_track k = {.uuid = t->process, .name = name, .process = true};
    gt_pf_descriptor(t, &k);
    gt_outbuf_flush(&t->out); /* the last bundle, to the file's buffer */
    if (gt_outbuf_flush(&t->common.file) != 0) {
        errno = t->common.file.error;
        return -1;
    }
    return 0;
}
