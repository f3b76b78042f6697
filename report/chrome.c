/* The trace's events, one record at a time (see chrome.h). */
#include <errno.h>
#include <stdlib.h>

#include "chrome_internal.h"

/* The fixed parts of an event fit this; names are written apart. */
#define EVENT_ROOM 512u

static bool enabled(const gt_timeline *tl, enum gt_category c)
{
    return (tl->categories & GT_CAT_BIT(c)) != 0;
}

static void put_name(gt_timeline *tl, uint32_t id)
{
    size_t len;
    const char *s = gt_tl_name(tl, id, &len);
    gt_outbuf_write(&tl->out, s, len);
}

/* `{"ph":"X","cat":"kernel","name":` after the separator. */
static void put_head(gt_timeline *tl, const char *ph, const char *cat)
{
    char *p = gt_outbuf_reserve(&tl->out, EVENT_ROOM);
    p = tl->any ? GT_PUT(p, ",\n{\"ph\":\"") : GT_PUT(p, "\n{\"ph\":\"");
    tl->any = true;
    p = gt_put_lit(p, ph, strlen(ph));
    p = GT_PUT(p, "\",\"cat\":\"");
    p = gt_put_lit(p, cat, strlen(cat));
    p = GT_PUT(p, "\",\"name\":");
    gt_outbuf_commit(&tl->out, p);
}

static int64_t rel(const gt_timeline *tl, uint64_t t)
{
    return (int64_t)(t - tl->origin);
}

/* `,"pid":P,"tid":T,"ts":..` and, when dur is not NULL, `,"dur":..`. */
static void put_where(gt_timeline *tl, uint32_t tid, uint64_t ts, const uint64_t *dur)
{
    char *p = gt_outbuf_reserve(&tl->out, EVENT_ROOM);
    p = GT_PUT(p, ",\"pid\":");
    p = gt_put_u64(p, (uint64_t)tl->pid);
    p = GT_PUT(p, ",\"tid\":");
    p = gt_put_u64(p, tid);
    p = GT_PUT(p, ",\"ts\":");
    p = gt_put_us(p, rel(tl, ts));
    if (dur) {
        p = GT_PUT(p, ",\"dur\":");
        p = gt_put_us(p, (int64_t)*dur);
    }
    gt_outbuf_commit(&tl->out, p);
}

static void put_lit(gt_timeline *tl, const char *s)
{
    gt_outbuf_write(&tl->out, s, strlen(s));
}

static void put_u64(gt_timeline *tl, uint64_t v)
{
    char *p = gt_outbuf_reserve(&tl->out, GT_U64_DIGITS);
    gt_outbuf_commit(&tl->out, gt_put_u64(p, v));
}

static void put_triple(gt_timeline *tl, const char *key, const uint32_t v[3])
{
    put_lit(tl, key);
    for (int i = 0; i < 3; i++) {
        put_lit(tl, i ? "," : "[");
        put_u64(tl, v[i]);
    }
    put_lit(tl, "]");
}

static const char *category_of(uint8_t kind)
{
    switch (kind) {
    case GT_EV_KERNEL:
    case GT_EV_GRAPH:
        return "kernel";
    case GT_EV_MEMCPY:
        return "memcpy";
    case GT_EV_MEMSET:
        return "memset";
    case GT_EV_ALLOC:
    case GT_EV_FREE:
        return "memory";
    case GT_EV_COMPILE:
        return "compile";
    case GT_EV_MODULE:
        return "module";
    case GT_EV_SYNC:
        return "sync";
    default:
        return "api";
    }
}

/* The args of a host slice: what the call was about, and its failure. */
static void host_args(gt_timeline *tl, const gt_event *ev)
{
    bool kernel_name = (ev->kind == GT_EV_KERNEL || ev->kind == GT_EV_GRAPH) && ev->name;
    bool bytes = ev->kind == GT_EV_MEMCPY || ev->kind == GT_EV_MEMSET || ev->kind == GT_EV_ALLOC ||
                 ev->kind == GT_EV_MODULE;
    bool program = ev->kind == GT_EV_COMPILE && ev->name;
    bool failed = ev->result != 0;
    if (!kernel_name && !bytes && !program && !failed) return;
    const char *sep = ",\"args\":{";
    if (kernel_name || program) {
        put_lit(tl, sep);
        put_lit(tl, kernel_name ? "\"kernel\":" : "\"program\":");
        put_name(tl, ev->name);
        sep = ",";
    }
    if (bytes) {
        put_lit(tl, sep);
        put_lit(tl, "\"bytes\":");
        put_u64(tl, ev->bytes);
        sep = ",";
    }
    if (failed) {
        put_lit(tl, sep);
        put_lit(tl, "\"error\":");
        if (ev->error) {
            put_name(tl, ev->error);
        } else {
            char code[32];
            snprintf(code, sizeof code, "\"%d\"", (int)ev->result);
            put_lit(tl, code);
        }
    }
    put_lit(tl, "}");
}

static void host_slice(gt_timeline *tl, const gt_event *ev)
{
    if (!ev->api) return;
    uint64_t dur = ev->host_end > ev->host_start ? ev->host_end - ev->host_start : 0;
    put_head(tl, "X", category_of(ev->kind));
    put_name(tl, ev->api);
    put_where(tl, ev->tid, ev->host_start, &dur);
    host_args(tl, ev);
    put_lit(tl, "}");
}

static void gpu_name(gt_timeline *tl, const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_MEMCPY: {
        /* direction and memory names: plain ASCII, nothing to escape */
        char label[GT_COPY_LABEL_MAX + 2];
        gt_copy_label_format(label + 1, sizeof label - 2, ev->u.copy.dir, ev->u.copy.host_mem,
                             (ev->flags & GT_EVF_ASYNC) != 0);
        label[0] = '"';
        put_lit(tl, label);
        put_lit(tl, "\"");
        break;
    }
    case GT_EV_MEMSET:
        put_lit(tl, "\"memset\"");
        break;
    default:
        if (ev->name)
            put_name(tl, ev->name);
        else
            put_lit(tl, ev->kind == GT_EV_GRAPH ? "\"graph\"" : "\"(unnamed kernel)\"");
    }
}

static void gpu_slice(gt_timeline *tl, const gt_event *ev)
{
    uint32_t tid = gt_tl_track(tl, ev->device, ev->stream);
    if (!tid) {
        tl->lost++;
        return;
    }
    uint64_t dur = ev->gpu_end > ev->gpu_start ? ev->gpu_end - ev->gpu_start : 0;
    put_head(tl, "X", category_of(ev->kind));
    gpu_name(tl, ev);
    put_where(tl, tid, ev->gpu_start, &dur);
    if (ev->kind == GT_EV_KERNEL) {
        put_triple(tl, ",\"args\":{\"grid\":", ev->u.kernel.grid);
        put_triple(tl, ",\"block\":", ev->u.kernel.block);
        put_lit(tl, ",\"shared\":");
        put_u64(tl, ev->u.kernel.shmem);
        put_lit(tl, "}");
    } else if (ev->kind == GT_EV_MEMCPY || ev->kind == GT_EV_MEMSET) {
        put_lit(tl, ",\"args\":{\"bytes\":");
        put_u64(tl, ev->bytes);
        put_lit(tl, "}");
    }
    put_lit(tl, "}");
}

static void memory_counter(gt_timeline *tl, const gt_report *r, const gt_event *ev)
{
    int32_t device = gt_memory_device_of(ev);
    const gt_mem_device *d = NULL;
    for (uint32_t i = 0; i < r->memory.ndevices && !d; i++)
        if (r->memory.devices[i].device == device) d = &r->memory.devices[i];
    if (!d) return;
    char name[48];
    if (device == GT_MEM_HOST_DEVICE)
        snprintf(name, sizeof name, "\"host pinned memory\"");
    else
        snprintf(name, sizeof name, "\"GPU %d memory\"", (int)device);
    put_head(tl, "C", "memory");
    put_lit(tl, name);
    put_where(tl, ev->tid, ev->host_end, NULL);
    put_lit(tl, ",\"args\":{\"bytes\":");
    put_u64(tl, d->current_bytes);
    put_lit(tl, "}}");
}

void gt_tl_nvtx_slice(gt_timeline *tl, uint32_t tid, uint32_t name, uint64_t start, uint64_t end)
{
    uint64_t dur = end > start ? end - start : 0;
    put_head(tl, "X", "nvtx");
    put_name(tl, name);
    put_where(tl, tid, start, &dur);
    put_lit(tl, "}");
}

void gt_tl_nvtx_async(gt_timeline *tl, char ph, const tl_range *r, uint64_t time)
{
    char phase[2] = {ph, '\0'};
    put_head(tl, phase, "nvtx");
    put_name(tl, r->name);
    put_where(tl, r->tid, time, NULL);
    put_lit(tl, ",\"id\":\"0x");
    char hex[24];
    snprintf(hex, sizeof hex, "%llx\"", (unsigned long long)r->id);
    put_lit(tl, hex);
    if (r->domain) {
        put_lit(tl, ",\"args\":{\"domain\":");
        put_name(tl, r->domain);
        put_lit(tl, "}");
    }
    put_lit(tl, "}");
}

static void nvtx_push(gt_timeline *tl, const gt_event *ev)
{
    tl_stack *s = gt_tl_stack(tl, ev->tid, ev->u.nvtx.domain);
    if (!s) {
        tl->lost++;
        return;
    }
    if (!s->frames) s->frames = malloc(GT_NVTX_MAX_DEPTH * sizeof(*s->frames));
    if (s->depth >= GT_NVTX_MAX_DEPTH || !s->frames) {
        s->overflow++; /* its pop is dropped too, so the others stay paired */
        return;
    }
    s->frames[s->depth++] = (tl_frame){ev->host_start, ev->name};
}

static void nvtx_pop(gt_timeline *tl, const gt_event *ev)
{
    tl_stack *s = gt_tl_stack(tl, ev->tid, ev->u.nvtx.domain);
    if (!s) return;
    if (s->overflow) {
        s->overflow--;
        tl->lost++;
        return;
    }
    if (!s->depth) return; /* a pop with no push: nothing to draw */
    tl_frame *f = &s->frames[--s->depth];
    gt_tl_nvtx_slice(tl, ev->tid, f->name, f->start, ev->host_start);
}

/* Start/end ranges: "b" when the start comes, "e" when the end comes;
 * an end that comes first waits for its start to learn the name. */
static void nvtx_start_end(gt_timeline *tl, const gt_event *ev)
{
    bool start = ev->kind == GT_EV_NVTX_START;
    tl_range *r = gt_tl_range_find(tl, ev->u.nvtx.range_id);
    if (r && r->ended == start) {
        tl_range other = *r;
        gt_tl_range_forget(tl, r);
        if (start) {
            other.name = ev->name, other.domain = ev->u.nvtx.domain, other.tid = ev->tid;
            gt_tl_nvtx_async(tl, 'b', &other, ev->host_start);
        }
        gt_tl_nvtx_async(tl, 'e', &other, start ? other.time : ev->host_start);
        return;
    }
    tl_range wait = {.id = ev->u.nvtx.range_id,
                     .time = ev->host_start,
                     .name = ev->name,
                     .domain = ev->u.nvtx.domain,
                     .tid = ev->tid,
                     .ended = !start};
    if (!gt_tl_range_wait(tl, &wait)) {
        tl->lost++;
        return;
    }
    if (start) gt_tl_nvtx_async(tl, 'b', &wait, ev->host_start);
}

static void nvtx_mark(gt_timeline *tl, const gt_event *ev)
{
    put_head(tl, "i", "nvtx");
    put_name(tl, ev->name);
    put_where(tl, ev->tid, ev->host_start, NULL);
    put_lit(tl, ",\"s\":\"t\"}");
}

static void nvtx(gt_timeline *tl, const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_NVTX_PUSH:
        nvtx_push(tl, ev);
        break;
    case GT_EV_NVTX_POP:
        nvtx_pop(tl, ev);
        break;
    case GT_EV_NVTX_START:
    case GT_EV_NVTX_END:
        nvtx_start_end(tl, ev);
        break;
    default:
        nvtx_mark(tl, ev);
    }
}

static enum gt_category work_category(uint8_t kind)
{
    return kind == GT_EV_MEMCPY   ? GT_CAT_MEMCPY
           : kind == GT_EV_MEMSET ? GT_CAT_MEMSET
                                  : GT_CAT_KERNEL;
}

void gt_timeline_add(gt_timeline *tl, const gt_report *r, const gt_event *ev)
{
    if (ev->flags & GT_EVF_NESTED) return;
    bool ok = ev->result == 0;
    switch ((enum gt_event_kind)ev->kind) {
    case GT_EV_KERNEL:
    case GT_EV_GRAPH:
    case GT_EV_MEMCPY:
    case GT_EV_MEMSET:
        host_slice(tl, ev);
        if (ok && (ev->flags & (GT_EVF_GPU_TIMED | GT_EVF_CAPTURED)) == GT_EVF_GPU_TIMED &&
            enabled(tl, work_category(ev->kind)))
            gpu_slice(tl, ev);
        break;
    case GT_EV_ALLOC:
    case GT_EV_FREE:
        host_slice(tl, ev);
        if (ok && enabled(tl, GT_CAT_MEMORY)) memory_counter(tl, r, ev);
        break;
    case GT_EV_NVTX_PUSH:
    case GT_EV_NVTX_POP:
    case GT_EV_NVTX_START:
    case GT_EV_NVTX_END:
    case GT_EV_NVTX_MARK:
        if (enabled(tl, GT_CAT_NVTX)) nvtx(tl, ev);
        break;
    case GT_EV_THREAD_NAME:
        gt_tl_thread_name(tl, ev->tid, ev->name);
        break;
    case GT_EV_API:
    case GT_EV_COMPILE:
    case GT_EV_MODULE:
    case GT_EV_SYNC:
        host_slice(tl, ev);
        break;
    case GT_EV_NONE:
    case GT_EV_KIND_COUNT:
        break;
    }
}

void gt_tl_metadata(gt_timeline *tl, const char *what, uint32_t tid, const char *key,
                    const char *text, size_t len, uint64_t number)
{
    put_head(tl, "M", "__metadata");
    put_lit(tl, "\"");
    put_lit(tl, what);
    put_lit(tl, "\"");
    put_where(tl, tid, tl->origin, NULL);
    put_lit(tl, ",\"args\":{\"");
    put_lit(tl, key);
    put_lit(tl, "\":");
    if (text)
        gt_outbuf_write(&tl->out, text, len);
    else
        put_u64(tl, number);
    put_lit(tl, "}}");
}

gt_timeline *gt_timeline_create(int fd, const gt_strtab *names, int pid, uint64_t origin_ns,
                                unsigned categories)
{
    gt_timeline *tl = calloc(1, sizeof(*tl));
    if (!tl) return NULL;
    if (gt_outbuf_init(&tl->out, fd, GT_TIMELINE_BUFFER_BYTES) != 0) {
        free(tl);
        return NULL;
    }
    tl->names = names;
    tl->pid = pid;
    tl->origin = origin_ns;
    tl->categories = categories;
    put_lit(tl, "{\"traceEvents\":[");
    return tl;
}

uint64_t gt_timeline_lost(const gt_timeline *tl)
{
    return tl->lost;
}

void gt_timeline_destroy(gt_timeline *tl)
{
    if (!tl) return;
    gt_tl_state_free(tl);
    gt_outbuf_free(&tl->out);
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
            gt_tl_nvtx_slice(tl, s->tid, f->name, f->start, end);
        }
    }
    for (uint32_t i = 0; i < tl->nranges; i++)
        if (!tl->ranges[i].ended) gt_tl_nvtx_async(tl, 'e', &tl->ranges[i], end);
    tl->nranges = 0;
    gt_tl_write_metadata(tl, p);
    put_lit(tl, "\n],\"displayTimeUnit\":\"ns\"}\n");
    if (gt_outbuf_flush(&tl->out) != 0) {
        errno = tl->out.error;
        return -1;
    }
    return 0;
}
