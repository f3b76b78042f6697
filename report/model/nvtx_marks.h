/* NVTX marks (nvtxMark*, nvtx.mark()): instants, reported per (domain,
 * message) with how many there were and when the first and the last came.
 * Grows with the number of distinct messages, as the tables do. */
#ifndef GT_NVTX_MARKS_H
#define GT_NVTX_MARKS_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "idmap.h"
#include "nvtx_numbers.h"

typedef struct gt_nvtx_mark {
    uint32_t domain; /* string id, 0 = the default domain */
    uint32_t name;   /* string id of the message */
    uint64_t count;
    uint64_t first, last; /* host times (CLOCK_MONOTONIC ns) of the earliest and latest */
    gt_number_total payload; /* the marks' payloads, summed */
} gt_nvtx_mark;

typedef struct gt_nvtx_marks {
    gt_nvtx_mark *marks;
    uint32_t n;
    uint32_t capacity;
    gt_idmap index;     /* domain << 32 | name -> marks[] */
    uint64_t untracked; /* marks that found no memory for their row */
} gt_nvtx_marks;

/* One GT_EV_NVTX_MARK record, its payload included; the index of its row
 * (-1 when it has none). */
int32_t gt_nvtx_marks_add(gt_nvtx_marks *m, const gt_event *ev);

/* A row of marks already counted (a report read back, or merged): added
 * to the row of its (domain, name), made when new. 0, or -1 for want of
 * memory. */
int gt_nvtx_marks_fold(gt_nvtx_marks *m, const gt_nvtx_mark *in);

/* The row of (domain, name), NULL when there is none. */
const gt_nvtx_mark *gt_nvtx_marks_find(const gt_nvtx_marks *m, uint32_t domain, uint32_t name);

/* The marks by count, most first; ties by first time. The caller frees
 * the array; NULL with *n = 0 when there are none or no memory. */
const gt_nvtx_mark **gt_nvtx_marks_sorted(const gt_nvtx_marks *m, size_t *n);

void gt_nvtx_marks_free(gt_nvtx_marks *m);

#endif
