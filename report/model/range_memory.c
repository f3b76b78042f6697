/* The peak of the device memory in use while a range was open
 * (nvtx_table.h, gt_nvtx_levels).
 *
 * Ranges open and close in the order records reach the report, and so do
 * the changes of memory in use: a range notes the change count and the
 * level when it opens, and asks at its close for the highest level since.
 * The stack keeps the changes that no later change has exceeded (each new
 * level removes the entries at or below it), so the levels fall from the
 * oldest entry to the newest, and the highest level since change s is
 * that of the oldest entry numbered s or later: a binary search. Memory
 * moved by other threads counts as their records reach the report (within
 * a buffer of records of when it happened).
 *
 * The stack grows only while the level keeps falling. Past
 * GT_NVTX_LEVELS_MAX entries its older half is folded into one entry with
 * the newest number of the half and the highest level: a range opened
 * within that half then gets that level, the highest it can have been. */
#include "nvtx_table.h"

#include <stdlib.h>
#include <string.h>

gt_nvtx_mem_mark gt_nvtx_levels_now(const gt_nvtx_levels *l)
{
    return (gt_nvtx_mem_mark){l->seq, l->level};
}

uint64_t gt_nvtx_levels_peak(const gt_nvtx_levels *l, gt_nvtx_mem_mark from)
{
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->stack[mid].seq <= from.seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t peak = from.level;
    if (lo < l->n && l->stack[lo].level > peak) peak = l->stack[lo].level;
    return peak;
}

static void fold_older_half(gt_nvtx_levels *l)
{
    uint32_t half = l->n / 2;
    l->stack[0].seq = l->stack[half - 1].seq; /* stack[0] has the half's highest level */
    memmove(&l->stack[1], &l->stack[half], (l->n - half) * sizeof(*l->stack));
    l->n -= half - 1;
}

void gt_nvtx_levels_change(gt_nvtx_levels *l, uint64_t level)
{
    l->seq++;
    l->level = level;
    while (l->n && l->stack[l->n - 1].level <= level)
        l->n--;
    if (l->n == GT_NVTX_LEVELS_MAX) fold_older_half(l);
    if (l->n == l->capacity) {
        uint32_t cap = l->capacity ? 2 * l->capacity : 64;
        gt_nvtx_mem_mark *grown = realloc(l->stack, cap * sizeof(*grown));
        if (!grown) {
            /* No room for the newest: peaks since now read from the level at open. */
            return;
        }
        l->stack = grown;
        l->capacity = cap;
    }
    l->stack[l->n++] = (gt_nvtx_mem_mark){l->seq, level};
}

void gt_nvtx_levels_free(gt_nvtx_levels *l)
{
    free(l->stack);
    memset(l, 0, sizeof(*l));
}
