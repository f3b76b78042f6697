#include "event.h"
#include "idmap.h"
#include "nvtx_numbers.h"
#include "nvtx_table.h"
#include "stats.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

/* Idle thread states are kept for reuse up to this many threads, so a
 * thread pushing and popping in a loop does not allocate each time. */
#define IDLE_THREADS_KEPT 64u

static int grow(void **array, uint32_t *capacity, size_t elem, uint32_t need)
{
    if (need <= *capacity) return 0;
    uint32_t cap = *capacity ? *capacity : 4;
    while (cap < need)
        cap *= 2;
    void *grown = realloc(*array, cap * elem);
    if (!grown) return -1;
    *array = grown;
    *capacity = cap;
    return 0;
}

static void work_merge(gt_nvtx_work *into, const gt_nvtx_work *from)
{
    into->allocated += from->allocated;
    into->freed += from->freed;
    if (!from->any) return;
    into->gpu_ns += from->gpu_ns;
    if (!into->any || from->first_start < into->first_start) into->first_start = from->first_start;
    if (!into->any || from->last_end > into->last_end) into->last_end = from->last_end;
    into->any = true;
}

/* One closed range into its row; peak: the device memory in use at most
 * while it was open. */
static void settle(const gt_nvtx *n, gt_table *table, int32_t row_index, uint64_t start,
                   uint64_t end, const gt_nvtx_work *work, uint64_t peak)
{
    gt_row *row = &table->rows[row_index];
    row->calls++;
    gt_stats_add(&row->time, end > start ? end - start : 0);
    row->gpu_ns_total += work->gpu_ns;
    if (work->any) row->gpu_span_total += work->last_end - work->first_start;
    gt_nvtx_numbers *num = n->memory ? gt_row_numbers(row) : NULL;
    if (!num) return;
    num->memory = true;
    num->allocated_bytes += work->allocated;
    num->freed_bytes += work->freed;
    if (peak > num->peak_bytes) num->peak_bytes = peak;
}

static int32_t range_row(gt_table *table, const gt_event *ev, uint32_t level, int32_t parent)
{
    gt_row_key key = {{ev->u.nvtx.domain, ev->name, 0, 0}};
    uint32_t before = table->nrows;
    int32_t i = gt_table_row_index(table, &key);
    if (i >= 0 && table->nrows != before) {
        table->rows[i].level = (int32_t)level;
        table->rows[i].parent = parent;
    }
    return i;
}

static gt_nvtx_thread *thread_of(gt_nvtx *n, uint32_t tid, bool create)
{
    uint32_t i;
    if (gt_idmap_get(&n->thread_index, tid, &i)) return &n->threads[i];
    if (!create) return NULL;
    if (grow((void **)&n->threads, &n->threads_capacity, sizeof(*n->threads), n->nthreads + 1))
        return NULL;
    i = n->nthreads;
    if (gt_idmap_set(&n->thread_index, tid, i) != 0) return NULL;
    n->nthreads++;
    memset(&n->threads[i], 0, sizeof(n->threads[i]));
    n->threads[i].tid = tid;
    return &n->threads[i];
}

static void release_thread(gt_nvtx *n, gt_nvtx_thread *t)
{
    for (uint32_t s = 0; s < t->nstacks; s++)
        free(t->stacks[s].frames);
    free(t->stacks);
    free(t->ranges);
    gt_nvtx_log_free(n, t);
}

static bool thread_idle(const gt_nvtx_thread *t)
{
    if (t->nranges) return false;
    for (uint32_t s = 0; s < t->nstacks; s++)
        if (t->stacks[s].depth || t->stacks[s].overflow) return false;
    return true;
}

static void forget_if_idle(gt_nvtx *n, gt_nvtx_thread *t)
{
    if (n->nthreads <= IDLE_THREADS_KEPT || !thread_idle(t)) return;
    uint32_t i = (uint32_t)(t - n->threads);
    uint32_t last = n->nthreads - 1;
    gt_idmap_remove(&n->thread_index, t->tid);
    release_thread(n, t);
    if (i != last) {
        n->threads[i] = n->threads[last];
        gt_idmap_set(&n->thread_index, n->threads[i].tid, i);
    }
    n->nthreads--;
}

static gt_nvtx_stack *stack_of(gt_nvtx_thread *t, uint32_t domain, bool create)
{
    for (uint32_t s = 0; s < t->nstacks; s++)
        if (t->stacks[s].domain == domain) return &t->stacks[s];
    if (!create) return NULL;
    gt_nvtx_stack *grown = realloc(t->stacks, (t->nstacks + 1) * sizeof(*grown));
    if (!grown) return NULL;
    t->stacks = grown;
    gt_nvtx_stack *s = &t->stacks[t->nstacks++];
    memset(s, 0, sizeof(*s));
    s->domain = domain;
    return s;
}

static int32_t push(gt_nvtx *n, gt_table *table, const gt_event *ev)
{
    gt_nvtx_thread *t = thread_of(n, ev->tid, true);
    gt_nvtx_stack *s = t ? stack_of(t, ev->u.nvtx.domain, true) : NULL;
    if (!s) {
        n->counts.untracked++;
        return -1;
    }
    /* Once a push could not be tracked, deeper ones cannot be either: the
     * overflow count keeps later pops paired with their pushes. */
    if (s->overflow || s->depth >= GT_NVTX_MAX_DEPTH) {
        s->overflow++;
        n->counts.too_deep++;
        return -1;
    }
    int32_t parent = s->depth ? s->frames[s->depth - 1].row : -1;
    int32_t row = range_row(table, ev, s->depth, parent);
    if (row < 0 || grow((void **)&s->frames, &s->capacity, sizeof(*s->frames), s->depth + 1)) {
        s->overflow++;
        n->counts.untracked++;
        return -1;
    }
    s->frames[s->depth++] = (gt_nvtx_frame){
        .row = row, .start = ev->host_start, .opened = gt_nvtx_levels_now(&n->levels)};
    gt_nvtx_cover_open(n, t->tid, row, ev->host_start);
    return row;
}

static int32_t close_frame(gt_nvtx *n, gt_nvtx_thread *t, gt_nvtx_stack *s, gt_table *table,
                           uint64_t end)
{
    gt_nvtx_frame *f = &s->frames[--s->depth];
    settle(n, table, f->row, f->start, end, &f->work, gt_nvtx_levels_peak(&n->levels, f->opened));
    gt_nvtx_cover_close(n, table, t->tid, f->row, end);
    if (s->depth) work_merge(&s->frames[s->depth - 1].work, &f->work);
    return f->row;
}

static int32_t pop(gt_nvtx *n, gt_table *table, const gt_event *ev)
{
    gt_nvtx_thread *t = thread_of(n, ev->tid, false);
    gt_nvtx_stack *s = t ? stack_of(t, ev->u.nvtx.domain, false) : NULL;
    if (s && s->overflow) {
        s->overflow--;
        return -1;
    }
    if (!s || s->depth == 0) {
        n->counts.unbalanced_pops++;
        return -1;
    }
    int32_t row = close_frame(n, t, s, table, ev->host_start);
    forget_if_idle(n, t);
    return row;
}

/* Settles the i-th start/end range of thread t, which has ended. */
static void settle_range(gt_nvtx *n, gt_table *table, gt_nvtx_thread *t, uint32_t i)
{
    uint32_t slot = t->ranges[i];
    gt_nvtx_range *r = &n->ranges[slot];
    settle(n, table, r->row, r->start, r->end, &r->work, r->peak);
    gt_nvtx_cover_close(n, table, t->tid, r->row, r->end);
    gt_idmap_remove(&n->range_index, r->id);
    r->next_free = n->free_slot;
    n->free_slot = slot + 1;
    n->open_ranges--;
    t->ranges[i] = t->ranges[--t->nranges];
    t->ended--;
}

static void take_pending_end(gt_nvtx *n, uint32_t p)
{
    gt_idmap_remove(&n->pending_index, n->pending[p].id);
    uint32_t last = --n->npending;
    if (p != last) {
        n->pending[p] = n->pending[last];
        gt_idmap_set(&n->pending_index, n->pending[p].id, p);
    }
}

static int32_t new_range_slot(gt_nvtx *n)
{
    if (n->free_slot) {
        uint32_t slot = n->free_slot - 1;
        n->free_slot = n->ranges[slot].next_free;
        return (int32_t)slot;
    }
    if (grow((void **)&n->ranges, &n->slots_capacity, sizeof(*n->ranges), n->nslots + 1)) return -1;
    return (int32_t)n->nslots++;
}

static int32_t start_range(gt_nvtx *n, gt_table *table, const gt_event *ev)
{
    uint64_t id = ev->u.nvtx.range_id;
    uint32_t existing;
    if (gt_idmap_get(&n->range_index, id, &existing) || n->open_ranges >= GT_NVTX_MAX_OPEN_RANGES) {
        n->counts.untracked++;
        return -1;
    }
    gt_nvtx_thread *t = thread_of(n, ev->tid, true);
    int32_t row = range_row(table, ev, 0, -1);
    if (!t || row < 0 ||
        grow((void **)&t->ranges, &t->ranges_capacity, sizeof(*t->ranges), t->nranges + 1)) {
        n->counts.untracked++;
        return -1;
    }
    int32_t slot = new_range_slot(n);
    if (slot < 0 || gt_idmap_set(&n->range_index, id, (uint32_t)slot) != 0) {
        if (slot >= 0) {
            n->ranges[slot].next_free = n->free_slot;
            n->free_slot = (uint32_t)slot + 1;
        }
        n->counts.untracked++;
        return -1;
    }
    gt_nvtx_mem_mark opened = gt_nvtx_levels_now(&n->levels);
    n->ranges[slot] = (gt_nvtx_range){.id = id,
                                      .tid = ev->tid,
                                      .row = row,
                                      .start = ev->host_start,
                                      .first_item = t->next_item,
                                      .opened = opened,
                                      .peak = opened.level};
    gt_nvtx_cover_open(n, t->tid, row, ev->host_start);
    n->open_ranges++;
    t->ranges[t->nranges++] = (uint32_t)slot;
    uint32_t p;
    if (gt_idmap_get(&n->pending_index, id, &p)) {
        n->ranges[slot].ended = true;
        n->ranges[slot].end = n->pending[p].time;
        t->ended++;
        take_pending_end(n, p);
    }
    return row;
}

static int32_t end_range(gt_nvtx *n, gt_table *table, const gt_event *ev)
{
    uint64_t id = ev->u.nvtx.range_id;
    uint32_t slot;
    if (gt_idmap_get(&n->range_index, id, &slot)) {
        gt_nvtx_range *r = &n->ranges[slot];
        if (r->ended) {
            n->counts.unmatched_ends++;
            return -1;
        }
        int32_t row = r->row;
        r->ended = true;
        r->end = ev->host_start;
        r->peak = gt_nvtx_levels_peak(&n->levels, r->opened);
        gt_nvtx_thread *t = thread_of(n, r->tid, false);
        t->ended++;
        gt_nvtx_log_end(n, t, r);
        /* Ended on its own thread: every record it encloses has arrived. */
        if (ev->tid == r->tid) {
            uint32_t i = 0;
            while (t->ranges[i] != slot)
                i++;
            settle_range(n, table, t, i);
            forget_if_idle(n, t);
        }
        return row;
    }
    if (n->npending >= GT_NVTX_PENDING_ENDS ||
        grow((void **)&n->pending, &n->pending_capacity, sizeof(*n->pending), n->npending + 1) ||
        gt_idmap_set(&n->pending_index, id, n->npending) != 0) {
        n->counts.unmatched_ends++;
        return -1;
    }
    n->pending[n->npending++] = (gt_nvtx_pending_end){.id = id, .time = ev->host_start};
    return -1;
}

int32_t gt_nvtx_add(gt_nvtx *n, gt_table *table, const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_NVTX_PUSH:
        return push(n, table, ev);
    case GT_EV_NVTX_POP:
        return pop(n, table, ev);
    case GT_EV_NVTX_START:
        return start_range(n, table, ev);
    case GT_EV_NVTX_END:
        return end_range(n, table, ev);
    case GT_EV_NVTX_MARK:
        n->counts.marks++;
        return -1;
    default:
        return -1;
    }
}

void gt_nvtx_observe(gt_nvtx *n, gt_table *table, const gt_event *ev)
{
    /* A thread name carries the named thread's tid, not the tid of the
     * thread that made it: it says nothing of how far the named one got. */
    if (n->nthreads == 0 || ev->kind == GT_EV_THREAD_NAME) return;
    gt_nvtx_thread *t = thread_of(n, ev->tid, false);
    if (!t || t->ended == 0) return;
    for (uint32_t i = 0; i < t->nranges;) {
        const gt_nvtx_range *r = &n->ranges[t->ranges[i]];
        if (r->ended && r->end <= ev->host_start)
            settle_range(n, table, t, i);
        else
            i++;
    }
    forget_if_idle(n, t);
}

/* A piece of the thread's work (GPU time or memory moved) to its open
 * ranges: the innermost push range of each domain, the start/end ranges
 * whose end is known and came after it; for the others it waits until
 * their end is known. */
static void thread_work(gt_nvtx *n, uint32_t tid, const gt_nvtx_item *it)
{
    if (n->nthreads == 0) return;
    gt_nvtx_thread *t = thread_of(n, tid, false);
    if (!t) return;
    for (uint32_t s = 0; s < t->nstacks; s++)
        if (t->stacks[s].depth)
            gt_nvtx_work_item(&t->stacks[s].frames[t->stacks[s].depth - 1].work, it);
    for (uint32_t i = 0; i < t->nranges; i++) {
        gt_nvtx_range *r = &n->ranges[t->ranges[i]];
        if (r->ended && it->host_start < r->end) gt_nvtx_work_item(&r->work, it);
    }
    if (t->nranges > t->ended) gt_nvtx_log_work(n, t, it);
}

void gt_nvtx_gpu_work(gt_nvtx *n, uint32_t tid, uint64_t host_start, uint64_t start, uint64_t end)
{
    gt_nvtx_item it = {host_start, start, end, 0};
    thread_work(n, tid, &it);
}

void gt_nvtx_memory(gt_nvtx *n, uint32_t tid, uint64_t host_start, int64_t moved, uint64_t level)
{
    if (!n->memory) return;
    gt_nvtx_item it = {host_start, 0, 0, moved};
    if (moved) thread_work(n, tid, &it);
    if (moved || level != n->levels.level) gt_nvtx_levels_change(&n->levels, level);
}

void gt_nvtx_finish(gt_nvtx *n, gt_table *table, uint64_t end_ns)
{
    for (uint32_t ti = 0; ti < n->nthreads; ti++) {
        gt_nvtx_thread *t = &n->threads[ti];
        for (uint32_t si = 0; si < t->nstacks; si++) {
            gt_nvtx_stack *s = &t->stacks[si];
            n->counts.open_at_exit += s->overflow;
            s->overflow = 0;
            while (s->depth) {
                close_frame(n, t, s, table, end_ns);
                n->counts.open_at_exit++;
            }
        }
        while (t->nranges) {
            gt_nvtx_range *r = &n->ranges[t->ranges[0]];
            if (!r->ended) {
                r->ended = true;
                r->end = end_ns;
                r->peak = gt_nvtx_levels_peak(&n->levels, r->opened);
                t->ended++;
                n->counts.open_at_exit++;
                gt_nvtx_log_end(n, t, r);
            }
            settle_range(n, table, t, 0);
        }
    }
    n->counts.unmatched_ends += n->npending;
    gt_nvtx_counts counts = n->counts;
    uint64_t open_ns = n->open_ns;
    bool memory = n->memory;
    gt_nvtx_levels levels = n->levels;
    n->levels = (gt_nvtx_levels){0};
    gt_nvtx_free(n);
    n->counts = counts;
    n->open_ns = open_ns;
    n->memory = memory;
    n->levels = levels; /* memory in use goes on: ranges opened later start from it */
}

void gt_nvtx_free(gt_nvtx *n)
{
    for (uint32_t i = 0; i < n->nthreads; i++)
        release_thread(n, &n->threads[i]);
    free(n->threads);
    free(n->ranges);
    free(n->pending);
    gt_idmap_free(&n->thread_index);
    gt_idmap_free(&n->range_index);
    gt_idmap_free(&n->pending_index);
    gt_nvtx_cover_free(n);
    gt_nvtx_levels_free(&n->levels);
    bool memory = n->memory;
    memset(n, 0, sizeof(*n));
    n->memory = memory;
}
