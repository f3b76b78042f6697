/* Hand-built event records for the report's unit tests. */
#ifndef TEST_REPORT_EVENTS_H
#define TEST_REPORT_EVENTS_H

#include <string.h>

#include "aggregate.h"
#include "event.h"
#include "report.h"
#include "strtab.h"
#include "table.h"

static inline uint32_t intern(gt_strtab *t, const char *s)
{
    return gt_strtab_intern(t, s, strlen(s));
}

/* A record of `kind` on thread tid, host time [start, end). */
static inline gt_event host_event(uint8_t kind, uint32_t tid, uint64_t start, uint64_t end)
{
    gt_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.tid = tid;
    ev.host_start = start;
    ev.host_end = end;
    ev.device = 0;
    return ev;
}

static inline void set_gpu(gt_event *ev, uint64_t start, uint64_t end)
{
    ev->flags |= GT_EVF_GPU_TIMED;
    ev->gpu_start = start;
    ev->gpu_end = end;
}

static inline gt_event kernel_event(uint32_t name, uint32_t tid, uint64_t host_start,
                                    uint64_t gpu_start, uint64_t gpu_end)
{
    gt_event ev = host_event(GT_EV_KERNEL, tid, host_start, host_start + 100);
    ev.name = name;
    set_gpu(&ev, gpu_start, gpu_end);
    return ev;
}

static inline gt_event nvtx_event(uint8_t kind, uint32_t tid, uint64_t t, uint32_t domain,
                                  uint32_t name, uint64_t range_id)
{
    gt_event ev = host_event(kind, tid, t, t);
    ev.name = name;
    ev.u.nvtx.domain = domain;
    ev.u.nvtx.range_id = range_id;
    return ev;
}

static inline gt_event mem_event(uint8_t kind, uint32_t tid, uint64_t t, uint64_t addr,
                                 uint64_t bytes, uint8_t mem_kind, uint16_t device)
{
    gt_event ev = host_event(kind, tid, t, t + 10);
    ev.u.mem.addr = addr;
    ev.u.mem.mem_kind = mem_kind;
    ev.bytes = bytes;
    ev.device = device;
    return ev;
}

/* The row of a category with the given key, or NULL. */
static inline const gt_row *find_row(const gt_report *r, enum gt_category c, uint32_t f0,
                                     uint32_t f1, uint32_t f2)
{
    gt_row_key key = {{f0, f1, f2, 0}};
    return gt_table_find(&r->tables[c], &key);
}

#endif
