/* The trace's events, one record at a time (see chrome.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "aggregate.h"
#include "chrome_internal.h"
#include "event.h"
#include "memory_table.h"
#include "nvtx_table.h"
#include "outbuf.h"
#include "report.h"
#include "strtab.h"
#include "timeline.h"

/* The fixed parts of an event fit this; names come on top. */
#define EVENT_ROOM 384u

typedef struct head {
    const char *text;
    size_t len;
} head;

/* `{"ph":PH,"cat":CAT,"name":` */
#define HEAD(ph, cat) "{\"ph\":\"" ph "\",\"cat\":\"" cat "\",\"name\":"
#define H(ph, cat)                                                                                 \
    {                                                                                              \
        HEAD(ph, cat), sizeof(HEAD(ph, cat)) - 1                                                   \
    }

static const head slice_heads[GT_CAT_COUNT] = {
    [GT_CAT_KERNEL] = H("X", "kernel"),   [GT_CAT_MEMCPY] = H("X", "memcpy"),
    [GT_CAT_MEMSET] = H("X", "memset"),   [GT_CAT_MEMORY] = H("X", "memory"),
    [GT_CAT_COMPILE] = H("X", "compile"), [GT_CAT_MODULE] = H("X", "module"),
    [GT_CAT_SYNC] = H("X", "sync"),       [GT_CAT_NVTX] = H("X", "nvtx"),
    [GT_CAT_API] = H("X", "api"),
};
static const head counter_head = H("C", "memory");
static const head nvtx_counter_head = H("C", "nvtx");
static const head mark_head = H("i", "nvtx");
static const head metadata_head = H("M", "__metadata");

static char *put_mem(char *p, const void *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* Reserves room for an event with `names` bytes of names, and writes the
 * separator and its head; NULL (the event counted as lost) when the
 * buffer cannot hold it. */
static char *open_event(gt_timeline *tl, const head *h, size_t names)
{
    char *p = gt_outbuf_reserve(&tl->common.file, EVENT_ROOM + names);
    if (!p) {
        tl->common.lost.no_memory++;
        return NULL;
    }
    if (tl->any) *p++ = ',';
    tl->any = true;
    *p++ = '\n';
    return put_mem(p, h->text, h->len);
}

static void close_event(gt_timeline *tl, char *p)
{
    gt_outbuf_commit(&tl->common.file, p);
}

/* `,"pid":P,"tid":T,"ts":..` */
static char *put_where(const gt_timeline *tl, char *p, uint32_t tid, uint64_t ts)
{
    p = put_mem(p, tl->pid_text, tl->pid_len);
    p = gt_put_u64(p, tid);
    p = GT_PUT(p, ",\"ts\":");
    return gt_put_us(p, (int64_t)(ts - tl->origin));
}

static char *put_dur(char *p, uint64_t start, uint64_t end)
{
    p = GT_PUT(p, ",\"dur\":");
    return gt_put_us(p, end > start ? (int64_t)(end - start) : 0);
}

/* `"key":"name"` after *sep, on its own reservation (names may be long). */
static void put_named_arg(gt_timeline *tl, const char **sep, const char *key, uint32_t id)
{
    size_t len;
    const char *name = gt_tl_name(tl, id, &len);
    char *p = gt_outbuf_reserve(&tl->common.file, 32 + len);
    if (!p) return;
    p += sprintf(p, "%s\"%s\":", *sep, key);
    close_event(tl, put_mem(p, name, len));
    *sep = ",";
}

/* A host call on its thread. Its args say what no GPU slice says (the
 * trace's size is mostly names and numbers): the bytes it moved or
 * allocated and the kernel it launched, unless its GPU slice has them;
 * the program compiled; the error of a failed call; the call site
 * (callsite_table.h) of a launch, copy, memset or allocation. */
/* `,"bind_id":N,"flow_out":true` (or flow_in): the flow (Trace Event
 * Format flow v2, bound to the X event that carries it) from a launching
 * call to its GPU slice. */
static char *put_flow(char *p, uint64_t flow, bool out)
{
    p = gt_put_u64(GT_PUT(p, ",\"bind_id\":"), flow);
    return out ? GT_PUT(p, ",\"flow_out\":true") : GT_PUT(p, ",\"flow_in\":true");
}

static void host_slice(gt_timeline *tl, const gt_event *ev, bool gpu_slice_follows, uint64_t flow)
{
    if (!ev->api) return;
    size_t len;
    const char *name = gt_tl_name(tl, ev->api, &len);
    char *p = open_event(tl, &slice_heads[gt_timeline_category(ev->kind)], len);
    if (!p) return;
    p = put_mem(p, name, len);
    p = put_where(tl, p, ev->tid, ev->host_start);
    p = put_dur(p, ev->host_start, ev->host_end);
    if (flow) p = put_flow(p, flow, true);
    bool kernel =
        (ev->kind == GT_EV_KERNEL || ev->kind == GT_EV_GRAPH) && ev->name && !gpu_slice_follows;
    bool program = ev->kind == GT_EV_COMPILE && ev->name;
    bool bytes = gt_timeline_has_bytes(ev->kind) && !gpu_slice_follows, failed = ev->result != 0;
    bool site = ev->site && ev->site != GT_SITE_SKIPPED;
    if (!kernel && !program && !bytes && !failed && !site) {
        close_event(tl, GT_PUT(p, "}"));
        return;
    }
    p = GT_PUT(p, ",\"args\":{");
    const char *sep = "";
    if (bytes) {
        p = GT_PUT(p, "\"bytes\":");
        p = gt_put_u64(p, ev->bytes);
        sep = ",";
    }
    if (failed && !ev->error) {
        p = put_mem(p, sep, strlen(sep));
        p = GT_PUT(p, "\"error\":");
        p += sprintf(p, "\"%d\"", (int)ev->result);
        sep = ",";
    }
    close_event(tl, p);
    if (kernel || program) put_named_arg(tl, &sep, kernel ? "kernel" : "program", ev->name);
    if (failed && ev->error) put_named_arg(tl, &sep, "error", ev->error);
    if (site) put_named_arg(tl, &sep, "site", GT_SITE_ID(ev->site));
    gt_outbuf_write(&tl->common.file, "}}", 2);
}

/* The quoted memcpy label, made once per kind of copy. */
static const char *copy_name(gt_timeline *tl, const gt_event *ev, size_t *len)
{
    unsigned dir = ev->u.copy.dir < GT_DIR_COUNT ? ev->u.copy.dir : GT_DIR_COUNT;
    unsigned host = ev->u.copy.host_mem < GT_HOST_COUNT ? ev->u.copy.host_mem : GT_HOST_COUNT;
    char *label = tl->copy_names[dir][host][(ev->flags & GT_EVF_ASYNC) != 0];
    if (!label[0]) {
        /* direction and memory names: plain ASCII, nothing to escape */
        label[0] = '"';
        gt_copy_label_format(label + 1, GT_COPY_LABEL_MAX, ev->u.copy.dir, ev->u.copy.host_mem,
                             (ev->flags & GT_EVF_ASYNC) != 0);
        strcat(label, "\"");
    }
    *len = strlen(label);
    return label;
}

/* "x,y,z]" */
static char *put_triple(char *p, const uint32_t v[3])
{
    p = gt_put_u64(p, v[0]);
    *p++ = ',';
    p = gt_put_u64(p, v[1]);
    *p++ = ',';
    p = gt_put_u64(p, v[2]);
    *p++ = ']';
    return p;
}

/* GPU work on its (device, stream) track tid, named by the kernel or the
 * copy, at the end of the flow from its launch. */
static void gpu_slice(gt_timeline *tl, const gt_event *ev, uint32_t tid, uint64_t flow)
{
    const char *name;
    size_t len;
    if (ev->kind == GT_EV_MEMCPY) {
        name = copy_name(tl, ev, &len);
    } else if (ev->kind == GT_EV_MEMSET) {
        name = "\"memset\"", len = 8;
    } else if (ev->kind == GT_EV_GRAPH) {
        name = "\"" GT_GRAPH_LAUNCH_NAME "\"", len = sizeof(GT_GRAPH_LAUNCH_NAME) + 1;
    } else if (ev->name) {
        name = gt_tl_name(tl, ev->name, &len);
    } else {
        name = "\"(unnamed kernel)\"", len = 18;
    }
    char *p = open_event(tl, &slice_heads[gt_timeline_category(ev->kind)], len);
    if (!p) return;
    p = put_mem(p, name, len);
    p = put_where(tl, p, tid, ev->gpu_start);
    p = put_dur(p, ev->gpu_start, ev->gpu_end);
    p = put_flow(p, flow, false);
    if (ev->kind == GT_EV_KERNEL) {
        p = put_triple(GT_PUT(p, ",\"args\":{\"grid\":["), ev->u.kernel.grid);
        p = put_triple(GT_PUT(p, ",\"block\":["), ev->u.kernel.block);
        if (ev->u.kernel.shmem) {
            p = GT_PUT(p, ",\"shared\":");
            p = gt_put_u64(p, ev->u.kernel.shmem);
        }
        p = GT_PUT(p, "}");
    } else if (ev->kind != GT_EV_GRAPH) {
        p = GT_PUT(p, ",\"args\":{\"bytes\":");
        p = gt_put_u64(p, ev->bytes);
        p = GT_PUT(p, "}");
    }
    close_event(tl, GT_PUT(p, "}"));
}

/* Memory in use on a device row after a change (gt_mem_sink_fn). The
 * counter belongs to the process: its tid is the pid. */
static void memory_changed(void *ctx, int32_t device, uint64_t time, uint64_t bytes)
{
    gt_timeline *tl = ctx;
    char *p = open_event(tl, &counter_head, 0);
    if (!p) return;
    if (device == GT_MEM_HOST_DEVICE)
        p = GT_PUT(p, "\"host pinned memory\"");
    else
        p += sprintf(p, "\"GPU %d memory\"", (int)device);
    p = put_where(tl, p, (uint32_t)tl->pid, time);
    p = GT_PUT(p, ",\"args\":{\"bytes\":");
    p = gt_put_u64(p, bytes);
    close_event(tl, GT_PUT(p, "}}"));
}

void gt_timeline_follow_memory(gt_timeline *tl, gt_memory *m)
{
    tl->memory = m;
    gt_memory_set_sink(m, memory_changed, tl);
}

/* `,"args":{...}}` with what the range says beside its name, or `}`. */
static void close_nvtx(gt_timeline *tl, const tl_attrs *a)
{
    const char *sep = ",\"args\":{";
    if (a->domain) put_named_arg(tl, &sep, "domain", a->domain);
    if (a->category) put_named_arg(tl, &sep, "category", a->category);
    if (a->color) {
        char color[48];
        int n = snprintf(color, sizeof color, "%s\"color\":\"#%06x\"", sep,
                         (unsigned)(a->color & 0xffffffu));
        gt_outbuf_write(&tl->common.file, color, (size_t)n);
        sep = ",";
    }
    if (sep[1] == '\0') gt_outbuf_write(&tl->common.file, "}", 1);
    gt_outbuf_write(&tl->common.file, "}", 1);
}

void gt_tl_nvtx_slice(gt_timeline *tl, uint32_t tid, uint32_t name, uint64_t start, uint64_t end,
                      const tl_attrs *attrs)
{
    size_t len;
    const char *text = gt_tl_name(tl, name, &len);
    char *p = open_event(tl, &slice_heads[GT_CAT_NVTX], len);
    if (!p) return;
    p = put_mem(p, text, len);
    p = put_where(tl, p, tid, start);
    close_event(tl, put_dur(p, start, end));
    close_nvtx(tl, attrs);
}

void gt_tl_nvtx_async(gt_timeline *tl, char ph, const tl_range *r, uint64_t time)
{
    const head h = ph == 'b' ? (head)H("b", "nvtx") : (head)H("e", "nvtx");
    size_t len;
    const char *text = gt_tl_name(tl, r->name, &len);
    char *p = open_event(tl, &h, len);
    if (!p) return;
    p = put_mem(p, text, len);
    p = put_where(tl, p, r->tid, time);
    p += sprintf(p, ",\"id\":\"0x%llx\"", (unsigned long long)r->id);
    close_event(tl, p);
    close_nvtx(tl, &r->attrs);
}

static tl_attrs attrs_of(const gt_event *ev)
{
    return (tl_attrs){ev->u.nvtx.domain, ev->u.nvtx.category, ev->u.nvtx.color};
}

static void nvtx_push(void *w, const gt_event *ev)
{
    gt_timeline *tl = w;
    tl_stack *s = gt_tl_stack(tl, ev->tid, ev->u.nvtx.domain);
    if (!s) {
        tl->common.lost.ranges++;
        return;
    }
    if (!s->frames) s->frames = malloc(GT_NVTX_MAX_DEPTH * sizeof(*s->frames));
    if (s->depth >= GT_NVTX_MAX_DEPTH || !s->frames) {
        /* Left out; its pop is dropped too, so the others stay paired. */
        if (s->frames)
            tl->common.lost.too_deep++;
        else
            tl->common.lost.no_memory++;
        s->overflow++;
        return;
    }
    s->frames[s->depth++] =
        (tl_frame){ev->host_start, ev->name, ev->u.nvtx.category, ev->u.nvtx.color};
}

static void nvtx_pop(void *w, const gt_event *ev)
{
    gt_timeline *tl = w;
    tl_stack *s = gt_tl_stack(tl, ev->tid, ev->u.nvtx.domain);
    if (!s) return;
    if (s->overflow) {
        s->overflow--;
        return;
    }
    if (!s->depth) return; /* a pop with no push: nothing to draw */
    tl_frame *f = &s->frames[--s->depth];
    tl_attrs a = {s->domain, f->category, f->color};
    gt_tl_nvtx_slice(tl, ev->tid, f->name, f->start, ev->host_start, &a);
}

/* Start/end ranges: "b" when the start comes, "e" when the end comes;
 * an end that comes first waits for its start to learn the name. */
static void nvtx_start_end(void *w, const gt_event *ev)
{
    gt_timeline *tl = w;
    bool start = ev->kind == GT_EV_NVTX_START;
    tl_range *r = gt_tl_range_find(tl, ev->u.nvtx.range_id);
    if (r && r->ended == start) {
        tl_range other = *r;
        gt_tl_range_forget(tl, r);
        if (start) {
            other.name = ev->name, other.attrs = attrs_of(ev), other.tid = ev->tid;
            gt_tl_nvtx_async(tl, 'b', &other, ev->host_start);
        }
        gt_tl_nvtx_async(tl, 'e', &other, start ? other.time : ev->host_start);
        return;
    }
    tl_range wait = {.id = ev->u.nvtx.range_id,
                     .time = ev->host_start,
                     .name = ev->name,
                     .tid = ev->tid,
                     .attrs = attrs_of(ev),
                     .ended = !start};
    if (!gt_tl_range_wait(tl, &wait)) {
        tl->common.lost.ranges++;
        return;
    }
    if (start) gt_tl_nvtx_async(tl, 'b', &wait, ev->host_start);
}

static void nvtx_mark(void *w, const gt_event *ev)
{
    gt_timeline *tl = w;
    size_t len;
    const char *text = gt_tl_name(tl, ev->name, &len);
    char *p = open_event(tl, &mark_head, len);
    if (!p) return;
    p = put_mem(p, text, len);
    p = put_where(tl, p, ev->tid, ev->host_start);
    close_event(tl, GT_PUT(p, ",\"s\":\"t\"}"));
}

/* An NVTX counter's sample: a counter of the process, as the memory in
 * use is, named by the counter. A value JSON cannot hold (NaN, infinite)
 * is left out. */
static void nvtx_counter(void *w, const gt_event *ev)
{
    gt_timeline *tl = w;
    double v = gt_number_value(ev->u.counter.kind, ev->u.counter.value);
    if (!isfinite(v)) return;
    size_t len;
    const char *text = gt_tl_name(tl, ev->name, &len);
    char *p = open_event(tl, &nvtx_counter_head, len);
    if (!p) return;
    p = put_mem(p, text, len);
    p = put_where(tl, p, (uint32_t)tl->pid, ev->host_start);
    p += sprintf(p, ",\"args\":{\"value\":%.17g}}", v);
    close_event(tl, p);
}

/* Kernels, copies, memsets: the host call, and the GPU work on its track
 * at the end of a flow from the call. */
static void gpu_work(void *w, const gt_event *ev)
{
    gt_timeline *tl = w;
    bool gpu = gt_timeline_gpu_work(ev, tl->categories);
    uint32_t tid = gpu ? gt_tl_track(tl, ev->device, gt_timeline_stream_track(ev)) : 0;
    if (gpu && !tid) tl->common.lost.tracks++;
    uint64_t flow = tid ? ++tl->flows : 0;
    host_slice(tl, ev, gpu, flow);
    if (tid) gpu_slice(tl, ev, tid, flow);
}

static void host_call(void *w, const gt_event *ev)
{
    host_slice(w, ev, false, 0);
}

static void thread_name(void *w, const gt_event *ev)
{
    gt_tl_thread_name(w, ev->tid, ev->name);
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

void gt_timeline_add(gt_timeline *tl, const gt_event *ev)
{
    gt_timeline_route(&draw, tl, tl->categories, ev);
}

void gt_tl_metadata(gt_timeline *tl, const char *what, uint32_t tid, const char *key,
                    const char *text, size_t len, uint64_t number)
{
    char *p = open_event(tl, &metadata_head, strlen(what) + strlen(key) + len);
    if (!p) return;
    p += sprintf(p, "\"%s\"", what);
    p = put_where(tl, p, tid, tl->origin);
    p += sprintf(p, ",\"args\":{\"%s\":", key);
    p = text ? put_mem(p, text, len) : gt_put_u64(p, number);
    close_event(tl, GT_PUT(p, "}}"));
}

gt_timeline *gt_timeline_create(int fd, const gt_strtab *names, int pid, uint64_t origin_ns,
                                unsigned categories)
{
    gt_timeline *tl = calloc(1, sizeof(*tl));
    if (!tl) return NULL;
    if (gt_outbuf_init(&tl->common.file, fd, GT_TIMELINE_BUFFER_BYTES) != 0) {
        free(tl);
        return NULL;
    }
    tl->names = names;
    tl->pid = pid;
    tl->origin = origin_ns;
    tl->categories = categories;
    tl->pid_len = (size_t)snprintf(tl->pid_text, sizeof tl->pid_text, ",\"pid\":%d,\"tid\":", pid);
    gt_outbuf_write(&tl->common.file, "{\"traceEvents\":[", 16);
    return tl;
}

void gt_timeline_destroy(gt_timeline *tl)
{
    if (!tl) return;
    gt_tl_state_free(tl);
    gt_outbuf_free(&tl->common.file);
    free(tl);
}

int gt_timeline_finish(gt_timeline *tl, const gt_process_info *p)
{
    uint64_t end = p && p->end_ns ? p->end_ns : tl->origin;
    /* Ranges still open at the end close there, as in the report. */
    for (uint32_t i = 0; i < tl->nstacks; i++) {
        tl_stack *s = &tl->stacks[i];
        while (s->depth) {
            tl_frame *f = &s->frames[--s->depth];
            tl_attrs a = {s->domain, f->category, f->color};
            gt_tl_nvtx_slice(tl, s->tid, f->name, f->start, end, &a);
        }
    }
    for (uint32_t i = 0; i < tl->nranges; i++)
        if (!tl->ranges[i].ended) gt_tl_nvtx_async(tl, 'e', &tl->ranges[i], end);
    tl->nranges = 0;
    if (tl->memory) gt_memory_set_sink(tl->memory, NULL, tl);
    tl->memory = NULL;
    gt_tl_write_metadata(tl, p);
    static const char end_text[] = "\n],\"displayTimeUnit\":\"ns\"}\n";
    gt_outbuf_write(&tl->common.file, end_text, sizeof end_text - 1);
    if (gt_outbuf_flush(&tl->common.file) != 0) {
        errno = tl->common.file.error;
        return -1;
    }
    return 0;
}
