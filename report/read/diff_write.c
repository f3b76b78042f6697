/* Writing a comparison (diff.h) as text, JSON and CSV. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "diff.h"
#include "format.h"
#include "json_writer.h"
#include "text_table.h"

/* "+12.3%", "-0.4%", or "-" when there is no base to compare with. */
static char *percent(double pct, char *buf, size_t cap)
{
    if (isnan(pct))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%+.1f%%", pct);
    return buf;
}

static double change(uint64_t before, uint64_t after)
{
    return before ? ((double)after - (double)before) * 100.0 / (double)before : NAN;
}

/* "wall: 200 ms -> 210 ms (+5.0%)" */
static void header_line(FILE *out, const char *what, uint64_t before, uint64_t after)
{
    char b[GT_FORMAT_CAP], a[GT_FORMAT_CAP], pct[32];
    fprintf(out, "%s%s: %s -> %s (%s)\n", GT_TEXT_INDENT, what, gt_format_ns(before, b, sizeof b),
            gt_format_ns(after, a, sizeof a), percent(change(before, after), pct, sizeof pct));
}

/* "kernel, memcpy, memset": the categories compared. */
static void write_categories(FILE *out, unsigned categories)
{
    const char *sep = "";
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        if (c == GT_CAT_MEMORY || !(categories & GT_CAT_BIT(c))) continue;
        fprintf(out, "%s%s", sep, gt_category_name(c));
        sep = ", ";
    }
}

static void write_header(const gt_diff *d, FILE *out)
{
    char *base = gt_text_safe(d->base.file), *next = gt_text_safe(d->next.file);
    char min[GT_FORMAT_CAP];
    fprintf(out, "gputrace diff: %s -> %s | threshold %.1f%% | rows under %s never fail | ",
            base ? base : "", next ? next : "", d->opt.threshold_pct,
            gt_format_ns(d->opt.min_ns, min, sizeof min));
    write_categories(out, d->opt.categories);
    fputc('\n', out);
    free(base);
    free(next);
    header_line(out, "GPU busy", d->base.gpu_busy_ns, d->next.gpu_busy_ns);
    header_line(out, "wall", d->base.wall_ns, d->next.wall_ns);
    if (d->base.nvtx_open_ns || d->next.nvtx_open_ns)
        header_line(out, "NVTX open", d->base.nvtx_open_ns, d->next.nvtx_open_ns);
    fprintf(out, "%sevents: %" PRIu64 " -> %" PRIu64, GT_TEXT_INDENT, d->base.events,
            d->next.events);
    /* Work the tables do not hold, worth a word only when there is some. */
    if (d->base.late_events || d->next.late_events)
        fprintf(out, " | late: %" PRIu64 " -> %" PRIu64, d->base.late_events, d->next.late_events);
    if (d->base.gpu_pending || d->next.gpu_pending)
        fprintf(out, " | GPU pending at exit: %" PRIu64 " -> %" PRIu64, d->base.gpu_pending,
                d->next.gpu_pending);
    fputc('\n', out);
    fputs("verdict:", out);
    for (int v = 0; v < GT_DIFF_VERDICTS; v++)
        fprintf(out, "%s %zu %s", v ? "," : "", d->count[v], gt_diff_verdict_name(v));
    if (!gt_diff_fails(d))
        fputs(": pass, nothing slower", out);
    else if (d->failing)
        fprintf(out, ": FAIL, %zu %s slower or new%s", d->failing,
                d->failing == 1 ? "row is" : "rows are",
                d->gpu_busy_fails ? ", and the GPU busy time grew" : "");
    else
        fputs(": FAIL, the GPU busy time grew", out);
    char pct[32];
    if (d->gpu_compared)
        fprintf(out, "; GPU busy %s",
                percent(change(d->base.gpu_busy_ns, d->next.gpu_busy_ns), pct, sizeof pct));
    fputc('\n', out);
    gt_diff_checksums_write_text(&d->checksums, d->names, out);
}

static const gt_text_column columns[] = {
    {"Verdict", false, false, 0}, {"Change", true, false, 0}, {"Before", true, false, 0},
    {"After", true, false, 0},    {"Calls", true, false, 2},  {"Calls'", true, false, 2},
    {"Avg", true, false, 1},      {"Avg'", true, false, 1},   {"Name", false, true, 0},
};
enum { NCOLS = sizeof columns / sizeof columns[0] };

static void add_row(gt_text_table *tt, const gt_diff_row *r)
{
    char cells[NCOLS - 1][GT_FORMAT_RATE_CAP];
    const char *c[NCOLS];
    snprintf(cells[0], sizeof cells[0], "%s%s", gt_diff_verdict_name(r->verdict),
             (r->verdict == GT_DIFF_SLOWER || r->verdict == GT_DIFF_NEW) && !r->fails && !r->mark
                 ? "*"
                 : "");
    percent(r->change_pct, cells[1], sizeof cells[1]);
    const gt_diff_side *sides[2] = {&r->before, &r->after};
    for (int s = 0; s < 2; s++) {
        const gt_diff_side *side = sides[s];
        if (!side->present) {
            snprintf(cells[2 + s], sizeof cells[2 + s], "-");
            snprintf(cells[4 + s], sizeof cells[4 + s], "-");
            snprintf(cells[6 + s], sizeof cells[6 + s], "-");
            continue;
        }
        /* A mark has a count and no time; a rate is per second. */
        if (r->mark)
            snprintf(cells[2 + s], sizeof cells[2 + s], "-");
        else if (r->rate)
            gt_format_rate(s ? r->rate_after : r->rate_before, r->unit, cells[2 + s],
                           sizeof cells[2 + s]);
        else
            gt_format_ns(side->total, cells[2 + s], sizeof cells[2 + s]);
        snprintf(cells[4 + s], sizeof cells[4 + s], "%" PRIu64, side->calls);
        if (side->timed)
            gt_format_ns(side->avg, cells[6 + s], sizeof cells[6 + s]);
        else
            snprintf(cells[6 + s], sizeof cells[6 + s], "-");
    }
    for (int i = 0; i < NCOLS - 1; i++)
        c[i] = cells[i];
    c[NCOLS - 1] = r->name;
    gt_text_table_add(tt, c);
}

/* One category's rows [from, to); nothing when none changed, unless all. */
static int write_category(const gt_diff *d, size_t from, size_t to, bool all, unsigned width,
                          FILE *out)
{
    size_t count[GT_DIFF_VERDICTS] = {0};
    for (size_t i = from; i < to; i++)
        count[d->rows[i].verdict]++;
    if (!all && count[GT_DIFF_SAME] == to - from) return 0;
    fprintf(out, "\n%s:", gt_diff_row_category(&d->rows[from]));
    bool first = true;
    for (int v = 0; v < GT_DIFF_VERDICTS; v++) {
        if (!count[v]) continue;
        fprintf(out, "%s %zu %s", first ? "" : ",", count[v], gt_diff_verdict_name(v));
        first = false;
    }
    fputc('\n', out);
    gt_text_table tt;
    gt_text_table_init(&tt, columns, NCOLS);
    for (size_t i = from; i < to; i++)
        if (all || d->rows[i].verdict != GT_DIFF_SAME) add_row(&tt, &d->rows[i]);
    int rc = tt.nrows ? gt_text_table_print(&tt, out, all ? 0 : width) : 0;
    gt_text_table_free(&tt);
    return rc;
}

int gt_diff_write_text(const gt_diff *d, bool all, unsigned width, FILE *out)
{
    if (!width) width = GT_TEXT_WIDTH;
    if (width < GT_TEXT_MIN_WIDTH) width = GT_TEXT_MIN_WIDTH;
    write_header(d, out);
    int rc = 0;
    for (size_t from = 0, to; from < d->nrows; from = to) {
        for (to = from;
             to < d->nrows && d->rows[to].cat == d->rows[from].cat &&
             d->rows[to].mark == d->rows[from].mark && d->rows[to].rate == d->rows[from].rate;
             to++)
            ;
        if (write_category(d, from, to, all, width, out) != 0) rc = -1;
    }
    if (d->count[GT_DIFF_SAME] && !all)
        fprintf(out, "\n%zu rows the same within %.1f%% are not listed (--all lists them)\n",
                d->count[GT_DIFF_SAME], d->opt.threshold_pct);
    if (d->nrows > d->count[GT_DIFF_SAME])
        fputs("\nCalls, Avg: before; Calls', Avg': after; * under --min-ns: does not fail\n", out);
    if (d->count[GT_DIFF_MOVED])
        fputs("moved: grew or appeared while other rows of its table shrank and the table's total "
              "did not grow: work that moved, not time added\n",
              out);
    return ferror(out) ? -1 : rc;
}

static void json_pct(gt_json *w, const char *key, double pct)
{
    gt_json_key(w, key);
    if (isnan(pct))
        gt_json_raw(w, "null");
    else
        gt_json_fixed(w, pct, 3);
}

static void json_run(gt_json *w, const char *key, const gt_diff_run *r)
{
    gt_json_key(w, key);
    gt_json_object_begin(w, true);
    gt_json_kv_string(w, "file", r->file);
    gt_json_kv_string(w, "command", r->command);
    gt_json_kv_uint(w, "wall_ns", r->wall_ns);
    gt_json_kv_uint(w, "gpu_busy_ns", r->gpu_busy_ns);
    gt_json_kv_uint(w, "events", r->events);
    gt_json_kv_uint(w, "late_events", r->late_events);
    gt_json_kv_uint(w, "gpu_pending_at_exit", r->gpu_pending);
    gt_json_kv_uint(w, "nvtx_open_ns", r->nvtx_open_ns);
    gt_json_object_end(w);
}

static void json_side(gt_json *w, const char *suffix, const gt_diff_side *s)
{
    char key[32];
    snprintf(key, sizeof key, "calls_%s", suffix);
    gt_json_kv_uint(w, key, s->calls);
    snprintf(key, sizeof key, "total_%s_ns", suffix);
    gt_json_kv_uint(w, key, s->total);
    snprintf(key, sizeof key, "avg_%s_ns", suffix);
    gt_json_kv_uint(w, key, s->avg);
}

int gt_diff_write_json(const gt_diff *d, FILE *out)
{
    gt_json w;
    gt_json_init(&w, out);
    gt_json_object_begin(&w, false);
    gt_json_kv_string(&w, "tool", "gputrace");
    gt_json_kv_string(&w, "kind", "diff");
    gt_json_kv_uint(&w, "schema", 1);
    json_run(&w, "base", &d->base);
    json_run(&w, "new", &d->next);
    json_pct(&w, "threshold_pct", d->opt.threshold_pct);
    gt_json_kv_uint(&w, "min_ns", d->opt.min_ns);
    json_pct(&w, "wall_change_pct", change(d->base.wall_ns, d->next.wall_ns));
    json_pct(&w, "gpu_busy_change_pct", change(d->base.gpu_busy_ns, d->next.gpu_busy_ns));
    gt_json_key(&w, "verdicts");
    gt_json_object_begin(&w, true);
    for (int v = 0; v < GT_DIFF_VERDICTS; v++)
        gt_json_kv_uint(&w, gt_diff_verdict_name(v), d->count[v]);
    gt_json_object_end(&w);
    gt_json_kv_uint(&w, "failing", d->failing);
    gt_json_kv_bool(&w, "gpu_busy_fails", d->gpu_busy_fails);
    gt_json_kv_bool(&w, "fails", gt_diff_fails(d));
    gt_json_key(&w, "categories");
    gt_json_array_begin(&w, true);
    for (unsigned c = 0; c < GT_CAT_COUNT; c++)
        if (c != GT_CAT_MEMORY && (d->opt.categories & GT_CAT_BIT(c)))
            gt_json_string(&w, gt_category_name(c));
    gt_json_array_end(&w);
    gt_diff_checksums_write_json(&d->checksums, d->names, &w);
    gt_json_key(&w, "rows");
    gt_json_array_begin(&w, false);
    for (size_t i = 0; i < d->nrows; i++) {
        const gt_diff_row *r = &d->rows[i];
        gt_json_object_begin(&w, true);
        gt_json_kv_string(&w, "category", gt_diff_row_category(r));
        gt_json_kv_string(&w, "name", r->name);
        gt_json_kv_string(&w, "verdict", gt_diff_verdict_name(r->verdict));
        gt_json_kv_bool(&w, "fails", r->fails);
        json_pct(&w, "change_pct", r->change_pct);
        json_side(&w, "before", &r->before);
        json_side(&w, "after", &r->after);
        if (r->rate) {
            gt_json_kv_number(&w, "rate_before", r->rate_before);
            gt_json_kv_number(&w, "rate_after", r->rate_after);
            gt_json_kv_string(&w, "unit", r->unit);
        }
        gt_json_object_end(&w);
    }
    gt_json_array_end(&w);
    gt_json_object_end(&w);
    return gt_json_finish(&w);
}

int gt_diff_write_csv(const gt_diff *d, FILE *out)
{
    fputs("category,name,verdict,fails,change_pct,calls_before,calls_after,total_before_ns,"
          "total_after_ns,avg_before_ns,avg_after_ns\r\n",
          out);
    for (size_t i = 0; i < d->nrows; i++) {
        const gt_diff_row *r = &d->rows[i];
        fprintf(out, "%s,", gt_diff_row_category(r));
        gt_csv_write_name(out, r->name);
        fprintf(out, ",%s,%s,", gt_diff_verdict_name(r->verdict), r->fails ? "true" : "false");
        if (!isnan(r->change_pct)) fprintf(out, "%.3f", r->change_pct);
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\r\n",
                r->before.calls, r->after.calls, r->before.total, r->after.total, r->before.avg,
                r->after.avg);
    }
    /* The checksums' verdict as one more row, its name the copy or why. */
    const gt_diff_checksums *ck = &d->checksums;
    if (ck->verdict != GT_DIFF_CK_NONE) {
        char name[400];
        if (ck->verdict == GT_DIFF_CK_DIVERGED)
            snprintf(name, sizeof name, "thread %" PRIu32 " copy %" PRIu64, ck->thread, ck->index);
        else
            snprintf(name, sizeof name, "%s", ck->detail);
        fputs("checksums,", out);
        gt_csv_write_name(out, name);
        fprintf(out, ",%s,%s,,,,,,,\r\n", gt_diff_checksum_verdict_name(ck->verdict),
                ck->verdict >= GT_DIFF_CK_DIVERGED ? "true" : "false");
    }
    return ferror(out) ? -1 : 0;
}
