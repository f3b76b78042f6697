/* Comparing two reports (diff.h): matching rows by key, verdicts. */
#include "diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "event.h"
#include "gpu_busy.h"
#include "nvtx_marks.h"
#include "report.h"
#include "stats.h"
#include "table.h"

static const char *const verdict_names[GT_DIFF_VERDICTS] = {"slower", "new",  "moved",
                                                            "faster", "gone", "same"};

const char *gt_diff_verdict_name(enum gt_diff_verdict v)
{
    return (unsigned)v < GT_DIFF_VERDICTS ? verdict_names[v] : "unknown";
}

const char *gt_diff_row_category(const gt_diff_row *r)
{
    return r->mark ? "nvtx_mark" : r->rate ? "nvtx_rate" : gt_category_name(r->cat);
}

static bool worse(enum gt_diff_verdict v)
{
    return v == GT_DIFF_SLOWER || v == GT_DIFF_NEW;
}

static gt_diff_side side_of(const gt_row *row)
{
    gt_diff_side s = {0};
    if (!row) return s;
    gt_stats_summary sum;
    gt_stats_summarize(&row->time, &sum);
    s.present = true;
    s.calls = row->calls;
    s.timed = sum.count;
    s.total = sum.total;
    s.avg = sum.avg;
    return s;
}

static void judge(gt_diff_row *row, const gt_diff_options *opt)
{
    uint64_t b = row->before.total, a = row->after.total;
    row->change_pct = b ? ((double)a - (double)b) * 100.0 / (double)b : NAN;
    if (!row->before.present)
        row->verdict = GT_DIFF_NEW;
    else if (!row->after.present)
        row->verdict = GT_DIFF_GONE;
    else if (a > b && (b == 0 || row->change_pct > opt->threshold_pct))
        row->verdict = GT_DIFF_SLOWER;
    else if (a < b && -row->change_pct > opt->threshold_pct)
        row->verdict = GT_DIFF_FASTER;
    else
        row->verdict = GT_DIFF_SAME;
    row->fails = worse(row->verdict) && a >= opt->min_ns;
}

/* Rows [from, to) of one category: when some of them shrank or went and
 * the category's total did not grow past the threshold, the rows that
 * grew or appeared took over their work: moved, not slower. */
static void judge_moves(gt_diff *d, size_t from, size_t to)
{
    uint64_t before = 0, after = 0;
    bool shrank = false;
    for (size_t i = from; i < to; i++) {
        before += d->rows[i].before.total;
        after += d->rows[i].after.total;
        shrank |= d->rows[i].verdict == GT_DIFF_FASTER || d->rows[i].verdict == GT_DIFF_GONE;
    }
    if (!shrank || (double)after > (double)before * (1.0 + d->opt.threshold_pct / 100.0)) return;
    for (size_t i = from; i < to; i++) {
        gt_diff_row *row = &d->rows[i];
        if (row->mark || !worse(row->verdict)) continue;
        d->count[row->verdict]--;
        d->failing -= row->fails;
        row->verdict = GT_DIFF_MOVED;
        row->fails = false;
        d->count[GT_DIFF_MOVED]++;
    }
}

static uint64_t moved(const gt_diff_row *r)
{
    uint64_t b = r->before.total, a = r->after.total;
    return a > b ? a - b : b - a;
}

/* By category, then the largest move first, then by name. */
static int by_move(const void *x, const void *y)
{
    const gt_diff_row *a = x, *b = y;
    if (a->cat != b->cat) return a->cat < b->cat ? -1 : 1;
    if (a->mark != b->mark) return a->mark ? 1 : -1;
    if (a->rate != b->rate) return a->rate ? 1 : -1;
    uint64_t ma = moved(a), mb = moved(b);
    if (ma != mb) return ma > mb ? -1 : 1;
    return strcmp(a->name, b->name);
}

gt_diff_row *gt_diff_add_row(gt_diff *d, size_t *cap)
{
    if (d->nrows == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 256;
        gt_diff_row *grown = realloc(d->rows, grown_cap * sizeof(*grown));
        if (!grown) return NULL;
        d->rows = grown;
        *cap = grown_cap;
    }
    return &d->rows[d->nrows++];
}

/* The rows of category c: from the base (from_is_base), each with its
 * match in the other report; or from the new report, those the base
 * lacks. */
static int compare_table(gt_diff *d, size_t *cap, const gt_report *from, const gt_report *other,
                         enum gt_category c, bool from_is_base)
{
    const gt_table *t = &from->tables[c];
    for (uint32_t i = 0; i < t->nrows; i++) {
        const gt_row *row = &t->rows[i];
        const gt_row *match = gt_table_find(&other->tables[c], &row->key);
        if (!from_is_base && match) continue; /* done from the base's side */
        gt_diff_row *out = gt_diff_add_row(d, cap);
        if (!out) return -1;
        *out = (gt_diff_row){.cat = c, .name = gt_row_label(from, c, row)};
        if (!out->name) {
            d->nrows--;
            return -1;
        }
        out->before = side_of(from_is_base ? row : match);
        out->after = side_of(from_is_base ? match : row);
        judge(out, &d->opt);
        d->count[out->verdict]++;
        d->failing += out->fails;
    }
    return 0;
}

static gt_diff_side mark_side(const gt_nvtx_mark *m)
{
    return m ? (gt_diff_side){.present = true, .calls = m->count} : (gt_diff_side){0};
}

/* NVTX marks, as compare_table does rows: only in the base, in both, or
 * only in the new report. No time: never slower, never failing. */
static int compare_marks(gt_diff *d, size_t *cap, const gt_report *from, const gt_report *other,
                         bool from_is_base)
{
    for (uint32_t i = 0; i < from->marks.n; i++) {
        const gt_nvtx_mark *mark = &from->marks.marks[i];
        const gt_nvtx_mark *match = gt_nvtx_marks_find(&other->marks, mark->domain, mark->name);
        if (!from_is_base && match) continue;
        gt_diff_row *out = gt_diff_add_row(d, cap);
        if (!out) return -1;
        *out = (gt_diff_row){.cat = GT_CAT_NVTX,
                             .mark = true,
                             .name = gt_nvtx_label(from, mark->domain, mark->name)};
        if (!out->name) {
            d->nrows--;
            return -1;
        }
        out->before = mark_side(from_is_base ? mark : match);
        out->after = mark_side(from_is_base ? match : mark);
        judge(out, &d->opt);
        out->fails = false;
        d->count[out->verdict]++;
    }
    return 0;
}

static gt_diff_run run_of(const gt_report *r, const char *file)
{
    const gt_process_info *p = gt_report_process(r);
    gt_diff_run run = {.file = file, .events = gt_report_event_count(r)};
    run.gpu_busy_ns = gt_gpu_busy_ns(&r->busy);
    run.late_events = r->late;
    run.gpu_pending = r->gpu_pending;
    run.nvtx_open_ns = r->nvtx.open_ns;
    if (p) {
        run.command = p->command;
        run.wall_ns = p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
    }
    return run;
}

/* The GPU busy total, the headline: it fails the gate when it grew past
 * the threshold by min_ns or more. */
static void judge_gpu_busy(gt_diff *d)
{
    uint64_t b = d->base.gpu_busy_ns, a = d->next.gpu_busy_ns;
    d->gpu_compared = (d->opt.categories & GT_DIFF_DEFAULT_CATEGORIES) != 0;
    d->gpu_busy_fails = d->gpu_compared && a > b && a - b >= d->opt.min_ns &&
                        (b == 0 || (double)(a - b) * 100.0 > (double)b * d->opt.threshold_pct);
}

int gt_diff_reports(const gt_report *base, const gt_report *next, const char *base_file,
                    const char *next_file, const gt_diff_options *opt, gt_diff *out)
{
    memset(out, 0, sizeof(*out));
    out->opt = *opt;
    out->base = run_of(base, base_file);
    out->next = run_of(next, next_file);
    if (opt->min_ns == GT_DIFF_MIN_AUTO) {
        uint64_t share = out->base.gpu_busy_ns / 100 * GT_DIFF_MIN_SHARE_PCT;
        out->opt.min_ns = share > GT_DIFF_MIN_FLOOR_NS ? share : GT_DIFF_MIN_FLOOR_NS;
    }
    size_t cap = 0;
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        if (c == GT_CAT_MEMORY || !(opt->categories & GT_CAT_BIT(c))) continue;
        size_t from = out->nrows;
        if (compare_table(out, &cap, base, next, c, true) != 0 ||
            compare_table(out, &cap, next, base, c, false) != 0) {
            gt_diff_free(out);
            return -1;
        }
        judge_moves(out, from, out->nrows);
        if (c == GT_CAT_NVTX && (compare_marks(out, &cap, base, next, true) != 0 ||
                                 compare_marks(out, &cap, next, base, false) != 0)) {
            gt_diff_free(out);
            return -1;
        }
    }
    if ((opt->categories & (GT_CAT_BIT(GT_CAT_NVTX) | GT_CAT_BIT(GT_CAT_KERNEL))) &&
        gt_diff_rates(out, &cap, base, next) != 0) {
        gt_diff_free(out);
        return -1;
    }
    judge_gpu_busy(out);
    if (out->nrows) qsort(out->rows, out->nrows, sizeof(*out->rows), by_move);
    out->names = base->names;
    if (gt_diff_checksums_compare(base, next, &out->checksums) != 0) {
        gt_diff_free(out);
        return -1;
    }
    return 0;
}

void gt_diff_free(gt_diff *d)
{
    for (size_t i = 0; i < d->nrows; i++)
        free(d->rows[i].name);
    free(d->rows);
    d->rows = NULL;
    d->nrows = 0;
}
