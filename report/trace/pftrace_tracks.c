/* The Perfetto trace's tracks, each written by a sequence of its own:
 * threads, GPU streams and their lanes, devices and their memory
 * counters, NVTX stacks and start/end lanes (see pftrace.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "keyed.h"
#include "memory_table.h"
#include "pftrace.h"
#include "pftrace_internal.h"
#include "strtab.h"
#include "timeline.h"

void gt_pf_state_init(gt_pftrace *t)
{
    gt_keyed_init(&t->seqs, sizeof(pf_seq), PF_MAX_SEQUENCES);
    gt_keyed_init(&t->threads, sizeof(pf_thread), GT_TIMELINE_MAX_THREADS);
    gt_keyed_init(&t->streams, sizeof(pf_stream), GT_TIMELINE_MAX_TRACKS);
    gt_keyed_init(&t->devices, sizeof(pf_device), GT_TIMELINE_MAX_TRACKS);
    gt_keyed_init(&t->stacks, sizeof(pf_stack), GT_TIMELINE_MAX_STACKS);
    gt_keyed_init(&t->ranges, sizeof(pf_range), GT_TIMELINE_MAX_RANGES);
    gt_keyed_init(&t->dims, sizeof(pf_dims), PF_MAX_DIMS);
    gt_keyed_init(&t->readable, sizeof(char *), PF_MAX_READABLE);
    gt_keyed_init(&t->counters, sizeof(pf_thread), GT_TIMELINE_MAX_TRACKS);
}

uint32_t gt_pf_new_sequence(gt_pftrace *t)
{
    uint32_t i = t->seqs.n;
    pf_seq *s = gt_keyed_add(&t->seqs, i);
    if (!s) return UINT32_MAX;
    s->uuid = t->uuid_base + 2 + i; /* uuid_base + 1 is the process's track */
    return i;
}

/* A new sequence started at t0 writing the track *k (its uuid filled in
 * here), whose descriptor goes first. */
static uint32_t new_track(gt_pftrace *t, pf_track *k, uint64_t t0)
{
    uint32_t seq = gt_pf_new_sequence(t);
    if (seq == UINT32_MAX) return seq;
    k->uuid = gt_pf_seq(t, seq)->uuid;
    gt_pf_descriptor(t, k);
    gt_pf_sequence_start(t, seq, t0);
    return seq;
}

/* --- threads --------------------------------------------------------- */

static pf_thread *thread(gt_pftrace *t, uint32_t tid, uint64_t t0)
{
    pf_thread *th = gt_keyed_find(&t->threads, tid);
    if (th || t->threads.n >= t->threads.max) return th;
    pf_track k = {.parent = t->process, .tid = tid, .thread = true};
    uint32_t seq = new_track(t, &k, t0);
    th = seq == UINT32_MAX ? NULL : gt_keyed_add(&t->threads, tid);
    if (th) th->seq = seq;
    return th;
}

uint32_t gt_pf_thread(gt_pftrace *t, uint32_t tid, uint64_t t0)
{
    if (t->last_thread_seq && t->last_tid == tid) return t->last_thread_seq - 1;
    pf_thread *th = thread(t, tid, t0);
    if (!th) {
        t->common.lost.threads++;
        return UINT32_MAX;
    }
    t->last_tid = tid;
    t->last_thread_seq = th->seq + 1;
    return th->seq;
}

void gt_pf_thread_name(gt_pftrace *t, uint32_t tid, uint32_t name, uint64_t at)
{
    pf_thread *th = thread(t, tid, at);
    if (!th) {
        t->common.lost.threads++;
        return;
    }
    /* The thread's descriptor again, now with its name. */
    pf_track k = {.uuid = gt_pf_seq(t, th->seq)->uuid,
                  .parent = t->process,
                  .name = gt_strtab_get(t->names, name),
                  .tid = tid,
                  .thread = true};
    gt_pf_descriptor(t, &k);
}

/* --- devices, streams and lanes ------------------------------------------ */

static pf_device *device(gt_pftrace *t, int32_t d)
{
    pf_device *dev = gt_keyed_find(&t->devices, (uint32_t)d);
    if (dev) return dev;
    dev = gt_keyed_add(&t->devices, (uint32_t)d);
    if (dev) dev->device = d;
    return dev;
}

/* The uuid of a device's "GPU d" track, written when first needed; the
 * host row's counter belongs to the process. */
static uint64_t device_group(gt_pftrace *t, pf_device *d)
{
    if (d->group) return d->group;
    if (d->device == GT_MEM_HOST_DEVICE) return t->process;
    uint32_t seq = gt_pf_new_sequence(t); /* for a uuid: the group has no events */
    if (seq == UINT32_MAX) return t->process;
    char name[32];
    if (d->device == GT_NO_DEVICE)
        snprintf(name, sizeof name, "GPU ?");
    else
        snprintf(name, sizeof name, "GPU %d", (int)d->device);
    pf_track k = {.uuid = gt_pf_seq(t, seq)->uuid, .parent = t->process, .name = name};
    gt_pf_descriptor(t, &k);
    d->group = k.uuid;
    return d->group;
}

/* Stream handles are user-space pointers (below 2^47) or small constants:
 * the device in the top bits keeps keys distinct. */
static uint64_t stream_key(uint16_t dev, uint64_t s)
{
    return s ^ ((uint64_t)dev << 48);
}

static pf_stream *stream(gt_pftrace *t, uint16_t dev, uint64_t s)
{
    uint64_t key = stream_key(dev, s);
    if (t->last_stream && t->last_stream_key == key)
        return gt_keyed_at(&t->streams, t->last_stream - 1);
    pf_stream *l = gt_keyed_find(&t->streams, key);
    if (!l) {
        uint32_t index = t->streams.n;
        l = gt_keyed_add(&t->streams, key);
        if (!l) return NULL;
        *l = (pf_stream){.index = index, .device = dev, .stream = s};
    }
    t->last_stream_key = key;
    t->last_stream = l->index + 1; /* streams are never removed: indices stay */
    return l;
}

/* The first lane of l whose last slice ended by start, now ending at
 * end; UINT32_MAX when none did. */
static uint32_t free_lane(pf_stream *l, uint64_t start, uint64_t end)
{
    for (uint32_t i = 0; i < l->nlanes; i++)
        if (l->ends[i] <= start) {
            l->ends[i] = end;
            return l->lanes[i];
        }
    return UINT32_MAX;
}

/* A new lane of l (track k, its parent and name set by the caller). */
static uint32_t new_lane(gt_pftrace *t, pf_stream *l, pf_track *k, uint64_t start, uint64_t end)
{
    if (l->nlanes == GT_PFTRACE_MAX_LANES) return UINT32_MAX;
    uint32_t seq = new_track(t, k, start);
    if (seq == UINT32_MAX) return seq;
    l->ends[l->nlanes] = end;
    l->lanes[l->nlanes++] = seq;
    return seq;
}

uint32_t gt_pf_gpu_lane(gt_pftrace *t, uint16_t device_id, uint64_t s, uint64_t start, uint64_t end)
{
    pf_stream *l = stream(t, device_id, s);
    uint32_t seq = l ? free_lane(l, start, end) : UINT32_MAX;
    if (seq != UINT32_MAX) return seq;
    if (l && l->nlanes == GT_PFTRACE_MAX_LANES) {
        t->common.lost.lanes++;
        return UINT32_MAX;
    }
    pf_device *d = l ? device(t, device_id) : NULL;
    if (d) {
        char name[64];
        gt_timeline_track_name(device_id, s, name, sizeof name);
        pf_track k = {.parent = device_group(t, d), .name = name};
        seq = new_lane(t, l, &k, start, end);
    }
    if (seq == UINT32_MAX) t->common.lost.tracks++;
    return seq;
}

uint32_t gt_pf_range_lane(gt_pftrace *t, uint64_t start, uint64_t end)
{
    uint32_t seq = free_lane(&t->async, start, end);
    if (seq != UINT32_MAX) return seq;
    if (t->async.nlanes == GT_PFTRACE_MAX_LANES) {
        t->common.lost.range_lanes++;
        return UINT32_MAX;
    }
    pf_track k = {.parent = t->process, .name = "NVTX start/end ranges"};
    seq = new_lane(t, &t->async, &k, start, end);
    if (seq == UINT32_MAX) t->common.lost.ranges++;
    return seq;
}

uint32_t gt_pf_counter(gt_pftrace *t, int32_t device_id, uint64_t t0)
{
    pf_device *d = device(t, device_id);
    if (!d) return UINT32_MAX;
    if (d->counter) return d->counter - 1;
    char name[32];
    if (device_id == GT_MEM_HOST_DEVICE)
        snprintf(name, sizeof name, "host pinned memory");
    else
        snprintf(name, sizeof name, "GPU %d memory", (int)device_id);
    pf_track k = {.parent = device_group(t, d), .name = name, .counter = true};
    uint32_t seq = new_track(t, &k, t0);
    if (seq != UINT32_MAX) d->counter = seq + 1;
    return seq;
}

uint32_t gt_pf_nvtx_counter(gt_pftrace *t, uint32_t domain, uint32_t name, uint64_t t0)
{
    uint64_t key = (uint64_t)domain << 32 | name;
    pf_thread *c = gt_keyed_find(&t->counters, key);
    if (c) return c->seq;
    if (t->counters.n >= t->counters.max) return UINT32_MAX;
    pf_track k = {.parent = t->process,
                  .name = gt_strtab_get(t->names, name),
                  .counter = true,
                  .unitless = true};
    uint32_t seq = new_track(t, &k, t0);
    c = seq == UINT32_MAX ? NULL : gt_keyed_add(&t->counters, key);
    if (!c) return UINT32_MAX;
    c->seq = seq;
    return seq;
}

/* --- NVTX stacks ----------------------------------------------------- */

pf_stack *gt_pf_stack(gt_pftrace *t, uint32_t tid, uint32_t domain, uint64_t t0)
{
    uint64_t key = tid | (uint64_t)domain << 32;
    pf_stack *st = gt_keyed_find(&t->stacks, key);
    if (st || t->stacks.n >= t->stacks.max) return st;
    uint32_t seq = gt_pf_thread(t, tid, t0);
    if (seq != UINT32_MAX && domain) {
        /* A track of the thread (the UI shows it beside the thread's) named
         * by the domain: ranges of other domains need not nest with these. */
        pf_track k = {.parent = gt_pf_seq(t, seq)->uuid, .name = gt_strtab_get(t->names, domain)};
        seq = new_track(t, &k, t0);
    }
    st = seq == UINT32_MAX ? NULL : gt_keyed_add(&t->stacks, key);
    if (st) st->seq = seq;
    return st;
}

/* --- launch dimensions --------------------------------------------------- */

static uint64_t dims_iid(gt_pftrace *t, const uint32_t v[3])
{
    uint64_t key = ((uint64_t)v[0] << 42 ^ (uint64_t)v[1] << 21 ^ v[2]) * 0x9E3779B97F4A7C15ull;
    pf_dims *d = gt_keyed_find(&t->dims, key);
    if (d) {
        /* position of d: dims are never removed */
        uint32_t i = (uint32_t)(((char *)d - t->dims.items) / (ptrdiff_t)sizeof *d);
        return memcmp(d->v, v, sizeof d->v) == 0 ? PF_IID(PF_STR_DIMS, i) : 0;
    }
    uint32_t i = t->dims.n;
    d = gt_keyed_add(&t->dims, key);
    if (!d) return 0;
    memcpy(d->v, v, sizeof d->v);
    return PF_IID(PF_STR_DIMS, i);
}

uint64_t gt_pf_dims_iid(gt_pftrace *t, unsigned which, const uint32_t v[3])
{
    if (t->last_dims_iid[which] && memcmp(t->last_dims[which], v, sizeof t->last_dims[which]) == 0)
        return t->last_dims_iid[which];
    uint64_t iid = dims_iid(t, v);
    memcpy(t->last_dims[which], v, sizeof t->last_dims[which]);
    t->last_dims_iid[which] = iid;
    return iid;
}

void gt_pf_state_free(gt_pftrace *t)
{
    gt_keyed_free(&t->seqs);
    gt_keyed_free(&t->threads);
    gt_keyed_free(&t->streams);
    gt_keyed_free(&t->devices);
    gt_keyed_free(&t->stacks);
    gt_keyed_free(&t->ranges);
    gt_keyed_free(&t->dims);
    for (uint32_t i = 0; i < t->readable.n; i++)
        free(*(char **)gt_keyed_at(&t->readable, i));
    gt_keyed_free(&t->readable);
    gt_keyed_free(&t->counters);
}
