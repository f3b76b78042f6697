/* The GPU work of a thread that waits for the end of its start/end ranges
 * (nvtx_table.h).
 *
 * A start/end range encloses the work its thread issued between its start
 * and its end. The starting thread's records come in its own order, the
 * start first; the end may be made on another thread, whose records come
 * when they come: before or after the starting thread's work issued past
 * the end. So while a thread has a range whose end is unknown, each piece
 * of its work waits here, numbered in the order it came. A range notes
 * the number the next piece had at its start; when its end becomes known
 * it takes the pieces from that number on that were issued before the
 * end. A thread's ranges start in the order its records come, so the
 * pieces some range still waits for are always the newest: the others
 * leave from the oldest end.
 *
 * The log is bounded (GT_NVTX_LOG_THREAD_MAX pieces per thread,
 * GT_NVTX_LOG_MAX in all). Past that, the oldest piece goes at once to the
 * ranges without an end that started before it, as if their ends came
 * later: right unless an end reaches the report that many pieces of its
 * starting thread's work late. */
#include "nvtx_table.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAPACITY 16u /* a power of two, as every capacity */

static gt_nvtx_item *item_at(const gt_nvtx_thread *t, uint32_t i)
{
    return &t->items[(t->head + i) & (t->items_capacity - 1)];
}

/* The number of the oldest piece in the log. */
static uint64_t first_number(const gt_nvtx_thread *t)
{
    return t->next_item - t->nitems;
}

/* Piece `number` of t's work to every range of t without an end that
 * started before it. */
static void give(gt_nvtx *n, const gt_nvtx_thread *t, uint64_t number, const gt_nvtx_item *it)
{
    for (uint32_t i = 0; i < t->nranges; i++) {
        gt_nvtx_range *r = &n->ranges[t->ranges[i]];
        if (!r->ended && r->first_item <= number) gt_nvtx_work_item(&r->work, it);
    }
}

static void drop_oldest(gt_nvtx *n, gt_nvtx_thread *t, uint32_t count)
{
    t->head = (t->head + count) & (t->items_capacity - 1);
    t->nitems -= count;
    n->logged -= count;
}

/* Doubles the ring, keeping its pieces in order from head; -1 past the
 * thread's bound or out of memory. */
static int grow(gt_nvtx_thread *t)
{
    uint32_t old = t->items_capacity;
    uint32_t cap = old ? 2 * old : FIRST_CAPACITY;
    if (cap > GT_NVTX_LOG_THREAD_MAX) return -1;
    gt_nvtx_item *grown = realloc(t->items, cap * sizeof(*grown));
    if (!grown) return -1;
    t->items = grown;
    t->items_capacity = cap;
    /* The pieces that had wrapped round to the front follow the rest. */
    if (t->head + t->nitems > old)
        memcpy(&grown[old], &grown[0], (t->head + t->nitems - old) * sizeof(*grown));
    return 0;
}

static bool room(gt_nvtx *n, gt_nvtx_thread *t)
{
    if (n->logged >= GT_NVTX_LOG_MAX) return false;
    return t->nitems < t->items_capacity || grow(t) == 0;
}

void gt_nvtx_log_work(gt_nvtx *n, gt_nvtx_thread *t, const gt_nvtx_item *item)
{
    while (t->nitems && !room(n, t)) {
        give(n, t, first_number(t), item_at(t, 0));
        drop_oldest(n, t, 1);
    }
    uint64_t number = t->next_item++;
    if (!room(n, t)) {
        t->next_item--; /* not logged: the numbers stay those of the log */
        give(n, t, number, item);
        return;
    }
    *item_at(t, t->nitems) = *item;
    t->nitems++;
    n->logged++;
}

void gt_nvtx_log_end(gt_nvtx *n, gt_nvtx_thread *t, gt_nvtx_range *r)
{
    uint64_t first = first_number(t);
    uint32_t from = r->first_item > first ? (uint32_t)(r->first_item - first) : 0;
    for (uint32_t i = from; i < t->nitems; i++) {
        const gt_nvtx_item *it = item_at(t, i);
        if (it->host_start < r->end) gt_nvtx_work_item(&r->work, it);
    }
    /* What the ranges still without an end wait for: from the oldest of
     * their starts on. */
    uint64_t keep_from = t->next_item;
    for (uint32_t i = 0; i < t->nranges; i++) {
        const gt_nvtx_range *other = &n->ranges[t->ranges[i]];
        if (!other->ended && other->first_item < keep_from) keep_from = other->first_item;
    }
    if (keep_from > first) {
        uint64_t drop = keep_from - first;
        drop_oldest(n, t, drop < t->nitems ? (uint32_t)drop : t->nitems);
    }
}

void gt_nvtx_log_free(gt_nvtx *n, gt_nvtx_thread *t)
{
    n->logged -= t->nitems;
    free(t->items);
    t->items = NULL;
    t->items_capacity = t->nitems = t->head = 0;
}
