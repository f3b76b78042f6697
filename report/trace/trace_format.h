/* The streamed timelines behind one interface, as uftrace's dump formats:
 * whoever streams records into timelines (the shim's sink, the writers'
 * benchmark) drives every format through gt_trace_formats[]. Adding a
 * format touches report/trace/ and that table (trace_format.c), nothing
 * else: its file name comes from its enum gt_output_format
 * (output_path.h). */
#ifndef GT_TRACE_FORMAT_H
#define GT_TRACE_FORMAT_H

#include <stdint.h>

#include "event.h"
#include "memory_table.h"
#include "output_path.h"
#include "outbuf.h"
#include "report.h"
#include "strtab.h"
#include "timeline.h"

/* What every format's writer struct starts with: the buffer of its file
 * and the events it left out, by cause. */
typedef struct gt_trace_common {
    gt_outbuf file;
    gt_timeline_losses lost;
} gt_trace_common;

typedef struct gt_trace_format {
    enum gt_output_format format;
    const char *what;        /* how warnings name it: "the trace" */
    const char *threads_cap; /* what its thread cap leaves out */
    /* A writer streaming to fd (records' GPU and host times are
     * CLOCK_MONOTONIC ns; a format that counts from an origin counts from
     * origin_ns); NULL without memory. */
    void *(*create)(int fd, const gt_strtab *names, int pid, uint64_t origin_ns,
                    unsigned categories);
    /* Draws the memory in use as a counter, following m's changes. */
    void (*follow_memory)(void *w, gt_memory *m);
    void (*add)(void *w, const gt_event *ev);
    /* Completes the file; 0, or -1 with errno after a write error. */
    int (*finish)(void *w, const gt_process_info *p);
    void (*destroy)(void *w);
} gt_trace_format;

enum { GT_TRACE_CHROME, GT_TRACE_PERFETTO, GT_TRACE_FORMAT_COUNT };
extern const gt_trace_format gt_trace_formats[GT_TRACE_FORMAT_COUNT];

/* Of any format's writer (its gt_trace_common): bytes written or buffered
 * so far, and what it left out. */
static inline uint64_t gt_trace_bytes(const void *w)
{
    const gt_trace_common *c = w;
    return c->file.written + c->file.len;
}

static inline const gt_timeline_losses *gt_trace_losses(const void *w)
{
    return &((const gt_trace_common *)w)->lost;
}

#endif
