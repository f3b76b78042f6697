#include "gpu_busy.h"

#include <stdlib.h>
#include <string.h>

#define RING_SLOTS (2u * GT_GPU_BUSY_WINDOW)

static gt_interval *at(const gt_gpu_busy *b, uint32_t i)
{
    return &b->ring[(b->head + i) & (RING_SLOTS - 1)];
}

/* Whether a window opened in (from, to]. */
static bool fenced(const gt_gpu_busy *b, uint64_t from, uint64_t to)
{
    uint32_t lo = 0, hi = b->nfences;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->fences[mid] <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->nfences && b->fences[lo] <= to;
}

/* How much of [from, to) compiles and module loads covered. */
static uint64_t code_overlap(const gt_gpu_busy *b, uint64_t from, uint64_t to)
{
    uint32_t lo = 0, hi = b->ncode;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->code[mid].end <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t covered = 0;
    for (uint32_t i = lo; i < b->ncode && b->code[i].start < to; i++) {
        uint64_t s = b->code[i].start > from ? b->code[i].start : from;
        uint64_t e = b->code[i].end < to ? b->code[i].end : to;
        covered += e - s;
    }
    return covered;
}

static enum gt_gap_cause cause_of(const gt_gpu_busy *b, uint64_t from, uint64_t to)
{
    if (2 * code_overlap(b, from, to) >= to - from) return GT_GAP_CODE;
    if (b->first_kernel && to <= b->first_kernel) return GT_GAP_STARTUP;
    return GT_GAP_IDLE;
}

static void note_gap(const gt_gpu_busy *b, gt_gpu_gaps *gaps, uint64_t from, uint64_t to)
{
    uint64_t len = to - from;
    if (len <= GT_GPU_IDLE_GAP_NS || fenced(b, from, to)) return;
    gt_gpu_gaps *g = &gaps[cause_of(b, from, to)];
    g->count++;
    g->total_ns += len;
    if (len > g->largest_ns) {
        g->largest_ns = len;
        g->largest_start = from;
    }
}

static void retire_first(gt_gpu_busy *b)
{
    gt_interval *first = at(b, 0);
    if (b->retired_any) note_gap(b, b->retired_gaps, b->horizon, first->start);
    b->retired_ns += first->end - first->start;
    b->horizon = first->end;
    uint32_t old = 0;
    while (old < b->nfences && b->fences[old] <= b->horizon)
        old++;
    if (old) {
        b->nfences -= old;
        memmove(b->fences, b->fences + old, b->nfences * sizeof(*b->fences));
    }
    b->retired_any = true;
    b->head = (b->head + 1) & (RING_SLOTS - 1);
    b->n--;
}

/* Intervals are disjoint and sorted, so both starts and ends increase; the
 * search runs from the end because most records are close to in order. */
void gt_gpu_busy_add(gt_gpu_busy *b, uint64_t start, uint64_t end)
{
    if (b->retired_any && start < b->horizon) {
        uint64_t cut = (end < b->horizon ? end : b->horizon) - start;
        b->clipped_ns += cut;
        start += cut;
    }
    if (end <= start) return;
    if (!b->ring) {
        b->ring = malloc(RING_SLOTS * sizeof(*b->ring));
        if (!b->ring) return;
    }
    b->intervals++;
    uint32_t i = b->n;
    while (i > 0 && at(b, i - 1)->end >= start)
        i--;
    uint32_t j = i;
    while (j < b->n && at(b, j)->start <= end)
        j++;
    if (j == i) {
        for (uint32_t k = b->n; k > i; k--)
            *at(b, k) = *at(b, k - 1);
        *at(b, i) = (gt_interval){start, end};
        b->n++;
    } else {
        /* [i, j) overlap or touch the new interval: merge them into slot i */
        gt_interval *first = at(b, i);
        if (start < first->start) first->start = start;
        uint64_t last_end = at(b, j - 1)->end;
        first->end = end > last_end ? end : last_end;
        uint32_t removed = j - i - 1;
        for (uint32_t k = i + 1; k + removed < b->n; k++)
            *at(b, k) = *at(b, k + removed);
        b->n -= removed;
    }
    while (b->n > GT_GPU_BUSY_WINDOW)
        retire_first(b);
}

void gt_gpu_busy_fence(gt_gpu_busy *b, uint64_t time)
{
    if (b->retired_any && time <= b->horizon) return;
    if (!b->fences) {
        b->fences = malloc(GT_GPU_BUSY_FENCES * sizeof(*b->fences));
        if (!b->fences) return;
    }
    if (b->nfences == GT_GPU_BUSY_FENCES) {
        b->nfences--;
        memmove(b->fences, b->fences + 1, b->nfences * sizeof(*b->fences));
    }
    uint32_t i = b->nfences;
    while (i > 0 && b->fences[i - 1] > time) {
        b->fences[i] = b->fences[i - 1];
        i--;
    }
    b->fences[i] = time;
    b->nfences++;
}

void gt_gpu_busy_code(gt_gpu_busy *b, uint64_t start, uint64_t end)
{
    if (end <= start || (b->retired_any && end <= b->horizon)) return;
    if (!b->code) {
        b->code = malloc(GT_GPU_BUSY_CODE_SPANS * sizeof(*b->code));
        if (!b->code) return;
    }
    /* Most come in time order: the search runs from the end. */
    uint32_t i = b->ncode;
    while (i > 0 && b->code[i - 1].end >= start)
        i--;
    uint32_t j = i;
    while (j < b->ncode && b->code[j].start <= end)
        j++;
    if (j > i) { /* [i, j) overlap or touch it: merged into slot i */
        if (b->code[i].start < start) start = b->code[i].start;
        if (b->code[j - 1].end > end) end = b->code[j - 1].end;
        memmove(&b->code[i + 1], &b->code[j], (b->ncode - j) * sizeof(*b->code));
        b->ncode -= j - i - 1;
    } else if (b->ncode < GT_GPU_BUSY_CODE_SPANS) {
        memmove(&b->code[i + 1], &b->code[i], (b->ncode - i) * sizeof(*b->code));
        b->ncode++;
    } else {
        return;
    }
    b->code[i] = (gt_interval){start, end};
}

void gt_gpu_busy_kernel(gt_gpu_busy *b, uint64_t start)
{
    if (!b->first_kernel || start < b->first_kernel) b->first_kernel = start;
}

void gt_gpu_busy_free(gt_gpu_busy *b)
{
    free(b->ring);
    free(b->fences);
    free(b->code);
    memset(b, 0, sizeof(*b));
}

uint64_t gt_gpu_busy_ns(const gt_gpu_busy *b)
{
    uint64_t total = b->retired_ns;
    for (uint32_t i = 0; i < b->n; i++)
        total += at(b, i)->end - at(b, i)->start;
    return total;
}

void gt_gpu_busy_gaps(const gt_gpu_busy *b, gt_gpu_gaps out[GT_GAP_CAUSES])
{
    memcpy(out, b->retired_gaps, sizeof b->retired_gaps);
    for (uint32_t i = 0; i < b->n; i++) {
        if (i > 0)
            note_gap(b, out, at(b, i - 1)->end, at(b, i)->start);
        else if (b->retired_any)
            note_gap(b, out, b->horizon, at(b, 0)->start);
    }
}
