#include "event.h"
#include "report.h"
#include "timeline.h"

#include <stdio.h>
#include <string.h>

void gt_timeline_route(const gt_timeline_draw *d, void *w, unsigned categories, const gt_event *ev)
{
    /* A graph's node is drawn by its launch's slice. */
    if (ev->flags & GT_EVF_GRAPH_NODE) return;
    bool nvtx = (categories & GT_CAT_BIT(GT_CAT_NVTX)) != 0;
    switch ((enum gt_event_kind)ev->kind) {
    case GT_EV_KERNEL:
    case GT_EV_GRAPH:
    case GT_EV_MEMCPY:
    case GT_EV_MEMSET:
        d->gpu_work(w, ev);
        break;
    case GT_EV_ALLOC: /* the memory counter comes from the report (gt_memory's sinks) */
    case GT_EV_FREE:
    case GT_EV_CTX_END:
    case GT_EV_API:
    case GT_EV_COMPILE:
    case GT_EV_MODULE:
    case GT_EV_SYNC:
        d->host(w, ev);
        break;
    case GT_EV_NVTX_PUSH:
        if (nvtx) d->nvtx_push(w, ev);
        break;
    case GT_EV_NVTX_POP:
        if (nvtx) d->nvtx_pop(w, ev);
        break;
    case GT_EV_NVTX_START:
    case GT_EV_NVTX_END:
        if (nvtx) d->nvtx_start_end(w, ev);
        break;
    case GT_EV_NVTX_MARK:
        if (nvtx) d->nvtx_mark(w, ev);
        break;
    case GT_EV_NVTX_COUNTER:
        if (nvtx) d->nvtx_counter(w, ev);
        break;
    case GT_EV_THREAD_NAME:
        d->thread_name(w, ev);
        break;
    /* A payload's numbers are the report's; heaps draw no timeline. */
    case GT_EV_NVTX_FIELDS:
    case GT_EV_NVTX_HEAP:
    case GT_EV_NONE:
    case GT_EV_CHECKSUM: /* the report's checksum list only */
    case GT_EV_KIND_COUNT:
        break;
    }
}

void gt_timeline_track_name(uint16_t device, uint64_t track, char *buf, size_t cap)
{
    char dev[16];
    if (device == GT_NO_DEVICE)
        snprintf(dev, sizeof dev, "?");
    else
        snprintf(dev, sizeof dev, "%u", (unsigned)device);
    if (track == 0)
        snprintf(buf, cap, "GPU %s default stream", dev);
    else if (track == GT_PER_THREAD_STREAM)
        snprintf(buf, cap, "GPU %s per-thread default stream", dev);
    else if ((track & 7) == GT_PER_THREAD_STREAM)
        snprintf(buf, cap, "GPU %s per-thread default stream, thread %llu", dev,
                 (unsigned long long)(track >> 3));
    else if (gt_stream_number(track))
        snprintf(buf, cap, "GPU %s stream %llu", dev, (unsigned long long)gt_stream_number(track));
    else
        snprintf(buf, cap, "GPU %s stream 0x%llx", dev, (unsigned long long)track);
}

void gt_timeline_process_name(const gt_process_info *p, int pid, char *buf, size_t cap)
{
    const char *cmd = p && p->command ? p->command : "";
    size_t len = strcspn(cmd, " ");
    const char *base = cmd;
    for (size_t i = 0; i < len; i++)
        if (cmd[i] == '/') base = cmd + i + 1;
    size_t n = (size_t)(cmd + len - base);
    if (n == 0)
        snprintf(buf, cap, "pid %d", pid);
    else
        snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), base);
}
