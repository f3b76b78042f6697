#include "advice.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "callsite_table.h"
#include "display_name.h"
#include "format.h"
#include "loaded.h"
#include "event.h"
#include "gpu_busy.h"
#include "language.h"
#include "memory_table.h"
#include "report.h"
#include "settings.h"
#include "stats.h"
#include "strtab.h"
#include "table.h"

static uint64_t host_ns(const gt_event *ev)
{
    return ev->host_end > ev->host_start ? ev->host_end - ev->host_start : 0;
}

/* How long the copy itself took: its GPU time, or without one (timing
 * off, no pair to be had) the host time of its call. */
static uint64_t copy_ns(const gt_event *ev)
{
    if (!(ev->flags & GT_EVF_GPU_TIMED)) return host_ns(ev);
    return ev->gpu_end > ev->gpu_start ? ev->gpu_end - ev->gpu_start : 0;
}

/* What makes an example its rule's worst. */
enum worst_by {
    WORST_BYTES,
    WORST_HOST_TIME, /* kept in the example */
    WORST_COPY_TIME  /* copy_ns, kept in the example */
};

/* Counts ev (its host time into the total); it becomes the worst example
 * when it is the largest or the longest, as `by` says. */
static void tally(gt_advice_tally *t, const gt_event *ev, uint8_t dir, enum worst_by by)
{
    uint64_t host = host_ns(ev);
    uint64_t ns = by == WORST_COPY_TIME ? copy_ns(ev) : host;
    t->count++;
    t->bytes += ev->bytes;
    t->ns += host;
    bool worse =
        t->count == 1 || (by == WORST_BYTES ? ev->bytes > t->worst.bytes : ns > t->worst.ns);
    uint32_t site = ev->site && ev->site != GT_SITE_SKIPPED ? GT_SITE_ID(ev->site) : 0;
    if (worse) t->worst = (gt_advice_example){ev->api, dir, ev->bytes, ns, site};
}

/* How long a copy's call waited for GPU work queued before it: from the
 * call until the copy began on the GPU, while the call still blocked. A
 * synchronous copy, or one from pageable memory, waits for its stream. */
static uint64_t queue_wait_ns(const gt_event *ev)
{
    if (!(ev->flags & GT_EVF_GPU_TIMED) || ev->gpu_start <= ev->host_start) return 0;
    uint64_t until = ev->gpu_start < ev->host_end ? ev->gpu_start : ev->host_end;
    return until > ev->host_start ? until - ev->host_start : 0;
}

static void add_copy(gt_advice_acc *a, const gt_event *ev)
{
    uint8_t dir = ev->u.copy.dir;
    bool async = (ev->flags & GT_EVF_ASYNC) != 0;
    if (async && ev->u.copy.host_mem == GT_HOST_PAGEABLE)
        tally(&a->pageable_async, ev, dir, WORST_BYTES);
    /* The worst synchronous copy is the one whose transfer takes longest:
     * what the fix (async, pinned, overlapped) takes off the host's path.
     * Its host time also holds what the fix does not touch and the copy
     * did not cause (a preempted or page-faulting host, waiting for work
     * queued before it), and ranked by it a 256 KiB copy on a loaded
     * machine was named before a 16 MiB one. Bytes would ignore the
     * bandwidth: pageable memory, the direction. */
    if (!async && (dir == GT_DIR_HTOD || dir == GT_DIR_DTOH) &&
        ev->bytes > GT_ADVICE_SYNC_MEMCPY_BYTES)
        tally(&a->sync_copy, ev, dir, WORST_COPY_TIME);
    if (ev->bytes < GT_ADVICE_SMALL_MEMCPY_BYTES && dir < GT_DIR_COUNT) {
        /* The wait is the earlier work's time, not the copy's own. */
        uint64_t wait = queue_wait_ns(ev);
        tally(&a->small_copy, ev, dir, WORST_HOST_TIME);
        a->small_copy.ns -= wait;
        a->small_copy.wait_ns += wait;
        a->small_by_dir[dir]++;
    }
}

static void add_ptx_load(gt_advice_acc *a, const gt_event *ev)
{
    tally(&a->ptx_load, ev, 0, WORST_HOST_TIME);
    unsigned source = ev->u.module.ptx_source < GT_PTX_SOURCE_COUNT ? ev->u.module.ptx_source
                                                                      : GT_PTX_FROM_MEMORY;
    a->ptx_by_source[source]++;
    a->ptx_ns_by_source[source] += host_ns(ev);
    if (ev->u.module.device_sm) a->device_sm = ev->u.module.device_sm;
}

void gt_advice_add(gt_advice_acc *a, const gt_event *ev)
{
    if (ev->result != 0) return; /* a failed call did no work to advise on */
    switch (ev->kind) {
    case GT_EV_MEMCPY:
        add_copy(a, ev);
        break;
    case GT_EV_SYNC:
        tally(&a->sync_call, ev, 0, WORST_HOST_TIME);
        break;
    case GT_EV_MODULE:
        if (ev->u.module.image_kind == GT_IMAGE_PTX) add_ptx_load(a, ev);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------ the rules */

typedef struct advice_ctx {
    const gt_report *r;
    const gt_process_info *p;
    gt_advice *out;
    size_t n;
    enum gt_language lang; /* whose terms the fixes are in */
} advice_ctx;

static const char *fix(const advice_ctx *c, enum gt_fix f)
{
    return gt_advice_fix(f, c->lang);
}

static void say(advice_ctx *c, const char *rule, uint64_t count, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void say(advice_ctx *c, const char *rule, uint64_t count, const char *fmt, ...)
{
    gt_advice *a = &c->out[c->n++];
    a->rule = rule;
    a->count = count;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof(a->message), fmt, ap);
    va_end(ap);
}

static const char *noun(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static const char *api_name(const advice_ctx *c, uint32_t id)
{
    const char *s = gt_strtab_get(c->r->names, id);
    return s[0] ? s : "(unknown call)";
}

/* Room for a site in a message: the message holds 511 bytes in all. */
#define GT_ADVICE_SITE_MAX 160u

/* " from FILE:LINE in FUNCTION" of a call site's label, "" without one. */
static const char *from_site(const advice_ctx *c, uint32_t label, char *buf, size_t cap)
{
    int32_t s = label ? gt_callsites_site_of(&c->r->callsites, label) : -1;
    int n = s < 0 ? 0 : snprintf(buf, cap, " from ");
    buf[n] = '\0';
    if (s >= 0) gt_site_short(c->r->names, &c->r->callsites.sites[s], buf + n, cap - (size_t)n);
    return buf;
}

/* Readable units, each in its own buffer so that one message can hold several. */
typedef struct units {
    char a[GT_FORMAT_CAP], b[GT_FORMAT_CAP], c[GT_FORMAT_CAP];
} units;

static void pageable_async_memcpy(advice_ctx *c, const gt_advice_tally *t)
{
    if (!t->count) return;
    units u;
    char site[GT_ADVICE_SITE_MAX];
    say(c, "pageable-async-memcpy", t->count,
        "%" PRIu64 " async %s (%s) used pageable host memory, so the driver ran %s synchronously: "
        "%s. Largest: %s %s of %s%s.",
        t->count, noun(t->count, "copy", "copies"), gt_format_bytes(t->bytes, u.a, sizeof u.a),
        noun(t->count, "it", "them"), fix(c, GT_FIX_PINNED), api_name(c, t->worst.api),
        gt_copy_dir_name(t->worst.dir), gt_format_bytes(t->worst.bytes, u.b, sizeof u.b),
        from_site(c, t->worst.site, site, sizeof site));
}

static void sync_memcpy(advice_ctx *c, const gt_advice_tally *t)
{
    if (!t->count) return;
    units u;
    char site[GT_ADVICE_SITE_MAX];
    say(c, "sync-memcpy", t->count,
        "%" PRIu64 " synchronous %s over 64 KiB blocked the host for %s: %s. Longest: %s %s of "
        "%s, %s%s.",
        t->count, noun(t->count, "copy", "copies"), gt_format_ns(t->ns, u.a, sizeof u.a),
        fix(c, GT_FIX_ASYNC_COPY), api_name(c, t->worst.api), gt_copy_dir_name(t->worst.dir),
        gt_format_bytes(t->worst.bytes, u.b, sizeof u.b),
        gt_format_ns(t->worst.ns, u.c, sizeof u.c), from_site(c, t->worst.site, site, sizeof site));
}

static void small_memcpy(advice_ctx *c, const gt_advice_acc *a)
{
    const gt_advice_tally *t = &a->small_copy;
    if (t->count < GT_ADVICE_SMALL_MEMCPY_MIN_COUNT) return;
    unsigned most = 0;
    for (unsigned d = 1; d < GT_DIR_COUNT; d++)
        if (a->small_by_dir[d] > a->small_by_dir[most]) most = d;
    units u;
    char waited[192] = "";
    if (t->wait_ns)
        snprintf(waited, sizeof waited,
                 " Their calls also waited %s for GPU work queued before them (a synchronous or "
                 "pageable copy waits for its stream): that time is that work's, not theirs.",
                 gt_format_ns(t->wait_ns, u.c, sizeof u.c));
    say(c, "small-memcpy", t->count,
        "%" PRIu64 " copies under 4 KiB (%s in all, %s of host time in the copies themselves) "
        "each paid the fixed cost of a copy: gather them into fewer, larger copies. Most were %s: "
        "%" PRIu64 " copies.%s",
        t->count, gt_format_bytes(t->bytes, u.a, sizeof u.a), gt_format_ns(t->ns, u.b, sizeof u.b),
        gt_copy_dir_name(most), a->small_by_dir[most], waited);
}

/* Kernels whose median GPU time is under GT_ADVICE_SMALL_KERNEL_NS, from
 * the kernel table (graph launches aside: a graph is the fix). */
static void small_kernels(advice_ctx *c)
{
    const gt_table *t = &c->r->tables[GT_CAT_KERNEL];
    uint64_t launches = 0, gpu_ns = 0, host_ns_total = 0, most_med = 0;
    const gt_row *most = NULL;
    for (uint32_t i = 0; i < t->nrows; i++) {
        const gt_row *row = &t->rows[i];
        if (row->key.f[1] || !row->time.count) continue;
        /* The median: an event pair also times waits behind other streams'
         * work, which a few long waits make dominate an average. */
        gt_stats_summary sum;
        gt_stats_summarize(&row->time, &sum);
        if (sum.med >= GT_ADVICE_SMALL_KERNEL_NS) continue;
        launches += row->calls;
        gpu_ns += row->time.total;
        host_ns_total += row->api_ns_total;
        if (!most || row->calls > most->calls) {
            most = row;
            most_med = sum.med;
        }
    }
    if (launches < GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES || !most) return;
    char *label = gt_row_label(c->r, GT_CAT_KERNEL, most);
    char *name = label ? gt_display_name(label) : NULL;
    const char *shown = name ? name : label ? label : "(unnamed kernel)";
    units u;
    /* Whether the GPU waited: launch calls that took longer than the
     * kernels kept it waiting for the next one. */
    const char *waited = host_ns_total >= gpu_ns ? " (longer than the kernels: the GPU waited "
                                                   "for the host)"
                                                 : "";
    say(c, "small-kernels", launches,
        "%" PRIu64 " launches of kernels that took under 25 us on the GPU (medians; %s of GPU "
        "time in "
        "all, %s of host time in their launch calls%s): at that size a kernel's fixed costs, its "
        "launch on the host and its start on the GPU, are a large share of its work: %s. Most "
        "launched: %s, %" PRIu64 " launches, %s each (median).",
        launches, gt_format_ns(gpu_ns, u.a, sizeof u.a),
        gt_format_ns(host_ns_total, u.b, sizeof u.b), waited, fix(c, GT_FIX_GRAPH), shown,
        most->calls, gt_format_ns(most_med, u.c, sizeof u.c));
    free(name);
    free(label);
}

static uint64_t wall_ns(const gt_process_info *p)
{
    return p && p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
}

static void sync_api(advice_ctx *c, const gt_advice_tally *t)
{
    /* With capture windows, the time they held: nothing else was seen. */
    int captured = 0;
    uint64_t wall = gt_report_observed_ns(c->r, wall_ns(c->p), &captured);
    if (t->count < GT_ADVICE_SYNC_API_MIN_CALLS) return;
    if (wall && t->ns * 100.0 < (double)wall * GT_ADVICE_SYNC_API_MIN_SHARE_PCT) return;
    units u;
    char share[48] = "";
    if (wall)
        snprintf(share, sizeof share, " (%.1f%% of the %s time)", 100.0 * t->ns / wall,
                 captured ? "captured" : "wall");
    say(c, "sync-api", t->count,
        "%" PRIu64 " synchronize calls blocked the host for %s%s: %s. Longest: %s, %s.", t->count,
        gt_format_ns(t->ns, u.a, sizeof u.a), share, fix(c, GT_FIX_SYNC), api_name(c, t->worst.api),
        gt_format_ns(t->worst.ns, u.b, sizeof u.b));
}

/* " Only memcpy was recorded (-c): ...": which GPU work the gaps are
 * between, when some was not recorded; "" when all was. */
static void recorded_work(const gt_report *r, char *buf, size_t cap)
{
    char work[64];
    gt_report_work_recorded(r, work, sizeof work);
    buf[0] = '\0';
    if (work[0])
        snprintf(buf, cap,
                 " Only %s %s recorded (-c): the GPU may have run other work in these "
                 "gaps.",
                 work, strchr(work, ' ') ? "were" : "was");
}

static void gpu_idle(advice_ctx *c)
{
    gt_gpu_gaps g[GT_GAP_CAUSES];
    gt_gpu_busy_gaps(&c->r->busy, g);
    int captured = 0;
    uint64_t seen = gt_report_observed_ns(c->r, wall_ns(c->p), &captured);
    /* A share of the time observed, stable where a few gaps near 1 ms come
     * and go between runs (with no wall time known: any gap). */
    uint64_t floor_ns = seen * GT_ADVICE_GPU_IDLE_MIN_SHARE_PCT / 100;
    bool idle = g[GT_GAP_IDLE].count && g[GT_GAP_IDLE].total_ns >= floor_ns;
    uint64_t made_ns = g[GT_GAP_CODE].total_ns + g[GT_GAP_STARTUP].total_ns;
    bool made = made_ns && made_ns >= floor_ns;
    if (!idle && !made) return;
    units u;
    uint64_t start = c->p ? c->p->start_ns : 0;
    char first[384] = "", others[384] = "", note[160];
    const gt_gpu_gaps *lead = idle ? &g[GT_GAP_IDLE] : &g[GT_GAP_CODE];
    if (!idle && !g[GT_GAP_CODE].count) lead = &g[GT_GAP_STARTUP];
    uint64_t at = lead->largest_start > start ? lead->largest_start - start : 0;
    if (idle) {
        char share[48] = "";
        if (seen)
            snprintf(share, sizeof share, ", %.1f%% of the %s time",
                     100.0 * (double)g[GT_GAP_IDLE].total_ns / (double)seen,
                     captured ? "captured" : "wall");
        snprintf(first, sizeof first,
                 "%" PRIu64 " %s over 1 ms left the GPU idle between its work (%s in all%s): %s. "
                 "Largest: %s at +%s.",
                 g[GT_GAP_IDLE].count, noun(g[GT_GAP_IDLE].count, "gap", "gaps"),
                 gt_format_ns(g[GT_GAP_IDLE].total_ns, u.a, sizeof u.a), share,
                 fix(c, GT_FIX_OVERLAP), gt_format_ns(lead->largest_ns, u.b, sizeof u.b),
                 gt_format_ns(at, u.c, sizeof u.c));
    }
    /* Idle while code was made, or before the first kernel, is start-up
     * cost: named as such, not as a queue to keep full. */
    size_t len = 0;
    if (g[GT_GAP_CODE].count)
        len += (size_t)snprintf(others + len, sizeof others - len,
                                "%s while code was compiled or loaded (%" PRIu64 " %s)",
                                gt_format_ns(g[GT_GAP_CODE].total_ns, u.a, sizeof u.a),
                                g[GT_GAP_CODE].count, noun(g[GT_GAP_CODE].count, "gap", "gaps"));
    if (g[GT_GAP_STARTUP].count && len < sizeof others)
        snprintf(others + len, sizeof others - len, "%s%s at start-up, before the first kernel",
                 len ? " and " : "", gt_format_ns(g[GT_GAP_STARTUP].total_ns, u.b, sizeof u.b));
    char largest[96] = "";
    if (!idle)
        snprintf(largest, sizeof largest, " Largest: %s at +%s.",
                 gt_format_ns(lead->largest_ns, u.a, sizeof u.a),
                 gt_format_ns(at, u.c, sizeof u.c));
    recorded_work(c->r, note, sizeof note);
    uint64_t count =
        (idle ? g[GT_GAP_IDLE].count : 0) + g[GT_GAP_CODE].count + g[GT_GAP_STARTUP].count;
    if (idle && others[0])
        say(c, "gpu-idle", count,
            "%s Besides, the GPU waited %s: start-up cost, not a queue "
            "to keep full.%s",
            first, others, note);
    else if (idle)
        say(c, "gpu-idle", count, "%s%s", first, note);
    else
        say(c, "gpu-idle", count,
            "The GPU waited %s: start-up cost, not a queue to keep full; the compile and "
            "module tables (and ptx-jit, if it fired) say what took the time.%s%s",
            others, largest, note);
}

/* Where PTX came from, in words, and the fix that fits (%1$s: the
 * device's architecture, "90"; "XX" when unknown). */
static const struct {
    const char *from;
    const char *fix;
} ptx_sources[GT_PTX_SOURCE_COUNT] = {
    [GT_PTX_FROM_MEMORY] = {"from memory",
                            "load machine code for the GPU instead: a cubin (nvcc -cubin "
                            "-arch=sm_%1$s, or NVRTC with --gpu-architecture=sm_%1$s)"},
    [GT_PTX_FROM_NVRTC] = {"from NVRTC",
                           "the PTX came from NVRTC in this process: compile to a cubin instead "
                           "(--gpu-architecture=sm_%1$s, then nvrtcGetCUBIN)"},
    [GT_PTX_FROM_NVVM] = {"from NVVM",
                          "the PTX came from NVVM in this process, as Numba compiles: let Numba "
                          "cache its kernels (@cuda.jit(cache=True)) or link them to a cubin with "
                          "nvJitLink (LTO)"},
    [GT_PTX_FROM_LINK] = {"linked with cuLink*",
                          "the PTX was linked by the driver (cuLinkAddData of PTX, as Numba "
                          "does): let Numba cache its kernels (@cuda.jit(cache=True)), or link to "
                          "a cubin with nvJitLink before loading"},
    [GT_PTX_FROM_FILE] = {"from files",
                          "the PTX was a file: ship a cubin instead (nvcc -cubin -arch=sm_%1$s) "
                          "or a fat binary with machine code (-gencode "
                          "arch=compute_%1$s,code=sm_%1$s)"},
    [GT_PTX_FROM_FATBIN] = {"from fat binaries",
                            "the fat binary has no machine code for this GPU, only PTX: build "
                            "with nvcc -gencode arch=compute_%1$s,code=sm_%1$s"},
};

static void ptx_jit(advice_ctx *c, const gt_advice_acc *a)
{
    const gt_advice_tally *t = &a->ptx_load;
    if (!t->count) return;
    unsigned main_source = 0, sources = 0;
    for (unsigned s = 0; s < GT_PTX_SOURCE_COUNT; s++) {
        sources += a->ptx_by_source[s] != 0;
        if (a->ptx_by_source[s] && (!a->ptx_by_source[main_source] ||
                                    a->ptx_ns_by_source[s] > a->ptx_ns_by_source[main_source]))
            main_source = s;
    }
    char sm[8], fix[256], split[160] = "";
    if (a->device_sm)
        snprintf(sm, sizeof sm, "%u", a->device_sm);
    else
        snprintf(sm, sizeof sm, "XX");
    /* The format is one of the table's: its only conversions are %1$s. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(fix, sizeof fix, ptx_sources[main_source].fix, sm);
#pragma GCC diagnostic pop
    /* Where each came from, when not all from one place: "2 from NVRTC, 1 from files". */
    for (unsigned s = 0, len = 0; sources > 1 && s < GT_PTX_SOURCE_COUNT; s++) {
        if (!a->ptx_by_source[s] || len >= sizeof split) continue;
        len += (unsigned)snprintf(split + len, sizeof split - len, "%s%" PRIu64 " %s",
                                  len ? ", " : " (", a->ptx_by_source[s], ptx_sources[s].from);
    }
    if (sources > 1) strncat(split, ")", sizeof split - strlen(split) - 1);
    units u;
    say(c, "ptx-jit", t->count,
        "%" PRIu64 " %s loaded as PTX%s, compiled by the driver at load (%s): %s, so that nothing "
        "is compiled at run time. Slowest: %s, %s of image, %s.",
        t->count, noun(t->count, "module was", "modules were"), split,
        gt_format_ns(t->ns, u.a, sizeof u.a), fix, api_name(c, t->worst.api),
        gt_format_bytes(t->worst.bytes, u.b, sizeof u.b),
        gt_format_ns(t->worst.ns, u.c, sizeof u.c));
}

static void leak(advice_ctx *c)
{
    const gt_memory *m = &c->r->memory;
    uint64_t allocs = 0, bytes = 0;
    gt_mem_leak largest = {0};
    int32_t largest_device = 0;
    for (uint32_t i = 0; i < m->ndevices; i++) {
        const gt_mem_device *d = &m->devices[i];
        if (d->device == GT_MEM_HOST_DEVICE || !d->live_allocs) continue;
        allocs += d->live_allocs;
        bytes += d->current_bytes;
        gt_mem_leak l;
        if (gt_memory_largest_leaks(m, d->device, &l, 1) == 1 && l.bytes >= largest.bytes) {
            largest = l;
            largest_device = d->device;
        }
    }
    if (!allocs) return;
    units u;
    char site[GT_ADVICE_SITE_MAX];
    say(c, "leak", allocs,
        "%" PRIu64 " device %s (%s) %s still held when the process ended: neither the program "
        "nor the end of %s CUDA context freed %s. Free device memory once done with it "
        "(cudaFree, cuMemFree; in Python, drop the last reference to a device array, e.g. "
        "del d_arr), or a long-running process runs out. Largest: %s on device %d%s.",
        allocs, noun(allocs, "allocation", "allocations"), gt_format_bytes(bytes, u.a, sizeof u.a),
        noun(allocs, "was", "were"), noun(allocs, "its", "their"), noun(allocs, "it", "them"),
        gt_format_bytes(largest.bytes, u.b, sizeof u.b), (int)largest_device,
        from_site(c, largest.site, site, sizeof site));
}

static bool any_gpu_work(const gt_report *r)
{
    return gt_report_enabled(r, GT_CAT_KERNEL) || gt_report_enabled(r, GT_CAT_MEMCPY) ||
           gt_report_enabled(r, GT_CAT_MEMSET);
}

/* The rules in the order they are printed, with the categories that
 * must be enabled for each to speak. */
static const struct {
    const char *rule;
    unsigned categories;
} rules[GT_ADVICE_RULES] = {
    {"pageable-async-memcpy", GT_CAT_BIT(GT_CAT_MEMCPY)},
    {"sync-memcpy", GT_CAT_BIT(GT_CAT_MEMCPY)},
    {"small-memcpy", GT_CAT_BIT(GT_CAT_MEMCPY)},
    {"small-kernels", GT_CAT_BIT(GT_CAT_KERNEL)},
    {"sync-api", GT_CAT_BIT(GT_CAT_SYNC)},
    {"gpu-idle", GT_CAT_BIT(GT_CAT_KERNEL) | GT_CAT_BIT(GT_CAT_MEMCPY) | GT_CAT_BIT(GT_CAT_MEMSET)},
    {"ptx-jit", GT_CAT_BIT(GT_CAT_MODULE)},
    {"leak", GT_CAT_BIT(GT_CAT_MEMORY)},
};

unsigned gt_advice_rule_rank(const char *rule)
{
    unsigned i = 0;
    while (i < GT_ADVICE_RULES && strcmp(rule, rules[i].rule) != 0)
        i++;
    return i;
}

/* A finding read back is shown while its rule's category is (a rule this
 * gputrace does not know always is). */
static bool rule_shown(const gt_report *r, const char *rule)
{
    unsigned i = gt_advice_rule_rank(rule);
    return i == GT_ADVICE_RULES || (r->opt.categories & rules[i].categories) != 0;
}

size_t gt_report_advice(const gt_report *r, const gt_process_info *p,
                        gt_advice out[GT_ADVICE_RULES])
{
    if (r->loaded) {
        /* Read back: the rules ran on the records, which the file does not hold. */
        size_t n = 0;
        for (uint32_t i = 0; i < r->loaded->nadvice; i++)
            if (rule_shown(r, r->loaded->advice[i].rule)) out[n++] = r->loaded->advice[i];
        return n;
    }
    advice_ctx c = {r, p, out, 0, gt_report_language(r, p)};
    const gt_advice_acc *a = &r->advice;
    if (gt_report_enabled(r, GT_CAT_MEMCPY)) {
        pageable_async_memcpy(&c, &a->pageable_async);
        sync_memcpy(&c, &a->sync_copy);
        small_memcpy(&c, a);
    }
    /* GPU-timed runs only: host times would make every launch small. */
    if (gt_report_enabled(r, GT_CAT_KERNEL) && gt_report_gpu_source(r) != GT_GPU_SOURCE_OFF &&
        !r->gpu_timing_off[0])
        small_kernels(&c);
    if (gt_report_enabled(r, GT_CAT_SYNC)) sync_api(&c, &a->sync_call);
    if (any_gpu_work(r)) gpu_idle(&c);
    if (gt_report_enabled(r, GT_CAT_MODULE)) ptx_jit(&c, a);
    /* Memory held at a snapshot is not held at the end, and a process
     * ended by a signal had no chance to free it. */
    gt_snapshot_info snapshot;
    gt_report_snapshot(r, p, &snapshot);
    if (gt_report_enabled(r, GT_CAT_MEMORY) && snapshot.final && !snapshot.signal) leak(&c);
    return c.n;
}
