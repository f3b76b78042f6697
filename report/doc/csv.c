/* The CSV report (SPEC §7, §12): a header, then one record per table row
 * of every enabled category, in report order. RFC 4180: records end with
 * CRLF, the name is always quoted (quotes doubled), ill-formed UTF-8 is
 * replaced by U+FFFD, a control character by '?', and a name a spreadsheet
 * would take for a formula starts with a '. A field that does not apply to a row is empty:
 * time fields, gbps, clock and time_pct of a row with no measured time,
 * bytes outside transfers, compile and module rows, gbps outside transfers. The memory category
 * has two records per device: "GPU N" (calls = allocations, bytes =
 * peak) and "GPU N leaked" (calls and bytes still allocated at exit);
 * pinned host memory is "host pinned". NVTX marks follow the NVTX rows as
 * category "nvtx_mark" (see write_marks). Call sites come last, as category
 * "callsite" (callsite_csv.c).
 *
 * After the §7 columns (§12): display_name (a kernel's readable name, the
 * name of any other row), clock (what total_ns measures: gpu, host or
 * wall), time_pct (the row's share of its table's time, as the summary's
 * Time%), pid and host, on every row, so that the CSVs of many processes
 * concatenate into one table. A merged report has no one pid (empty) and a
 * host only when its inputs share it; its rows end with their spread
 * across the inputs (in_min_ns, in_med_ns, in_max_ns, max_input). Every
 * column but gbps and time_pct holds integers. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "callsite_csv.h"
#include "csv.h"
#include "display_name.h"
#include "loaded.h"
#include "event.h"
#include "nvtx_marks.h"
#include "report.h"
#include "utf8.h"

#define CSV_HEADER                                                                                 \
    "category,name,calls,total_ns,avg_ns,med_ns,min_ns,max_ns,stddev_ns,first_ns,rest_avg_ns,"     \
    "bytes,gbps,display_name,clock,time_pct,pid,host"
#define CSV_SPREAD_HEADER ",in_min_ns,in_med_ns,in_max_ns,max_input"

/* What every record ends with: the process, and whether rows have spread. */
typedef struct csv_tail {
    const gt_report *r;
    char pid[16];
    const char *host;
    bool merged;
} csv_tail;

static void write_tail(FILE *out, const csv_tail *t, const gt_row_spread *sp)
{
    fprintf(out, ",%s,", t->pid);
    gt_csv_write_name(out, t->host);
    if (t->merged && sp)
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32, sp->min, sp->med, sp->max,
                sp->max_input);
    else if (t->merged)
        fputs(",,,,", out);
    fputs("\r\n", out);
}

void gt_csv_write_name(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), plain = 0; /* p[i - plain, i): not yet written, needs no change */
    fputc('"', out);
    /* A spreadsheet runs a field that starts with = + - or @ as a formula
     * (names are the program's, or a report's): a leading ' makes it text,
     * as OWASP advises. A tab or CR, the other two such starts, is a
     * control character, made '?' below. */
    if (len && strchr("=+-@", p[0])) fputc('\'', out);
    for (size_t i = 0; i < len;) {
        bool valid = true;
        size_t n = p[i] < 0x80 ? 1 : gt_utf8_sequence(p + i, len - i, &valid);
        bool control = valid && gt_text_is_control(p + i, n);
        if (valid && !control && p[i] != '"') {
            plain += n;
            i += n;
            continue;
        }
        fwrite(p + i - plain, 1, plain, out);
        plain = 0;
        fputs(!valid ? GT_UTF8_REPLACEMENT : control ? "?" : "\"\"", out);
        i += n;
    }
    fwrite(p + len - plain, 1, plain, out);
    fputc('"', out);
}

static bool has_bytes(enum gt_category c)
{
    return c == GT_CAT_MEMCPY || c == GT_CAT_MEMSET || c == GT_CAT_COMPILE || c == GT_CAT_MODULE;
}

/* What a row's total measures (SPEC §12 clock), as the summary's titles say. */
static const char *clock_of(const gt_report *r, enum gt_category c)
{
    switch (c) {
    case GT_CAT_KERNEL:
    case GT_CAT_MEMCPY:
    case GT_CAT_MEMSET:
        return r->opt.gpu_timing == GT_GPU_TIMING_OFF ? "host" : "gpu";
    case GT_CAT_COMPILE:
    case GT_CAT_MODULE:
    case GT_CAT_NVTX:
        return "wall";
    default:
        return "host";
    }
}

static void write_row(FILE *out, const csv_tail *t, enum gt_category c, const gt_row *row,
                      const char *label, uint64_t table_total)
{
    fprintf(out, "%s,", gt_category_name(c));
    gt_csv_write_name(out, label);
    fprintf(out, ",%" PRIu64, row->calls);
    gt_stats_summary st;
    gt_stats_summarize(&row->time, &st);
    if (st.count)
        fprintf(out,
                ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64,
                st.total, st.avg, st.med, st.min, st.max, st.stddev, st.first, st.rest_avg);
    else
        fputs(",,,,,,,,", out);
    if (has_bytes(c))
        fprintf(out, ",%" PRIu64, row->bytes);
    else
        fputc(',', out);
    if ((c == GT_CAT_MEMCPY || c == GT_CAT_MEMSET) && st.count)
        fprintf(out, ",%.3f,", gt_row_gbps(row));
    else
        fputs(",,", out);
    char *display = c == GT_CAT_KERNEL ? gt_display_name(label) : NULL;
    gt_csv_write_name(out, display ? display : label);
    free(display);
    /* NVTX: the share of the time ranges were open, as the summary's. */
    uint64_t part = c == GT_CAT_NVTX ? row->open_ns : st.total;
    if (st.count)
        fprintf(out, ",%s,%.3f", clock_of(t->r, c),
                table_total ? 100.0 * (double)part / (double)table_total : 0.0);
    else
        fputs(",,", out);
    write_tail(out, t, gt_report_row_spread(t->r, c, row));
}

static int write_table(FILE *out, const csv_tail *t, enum gt_category c)
{
    const gt_report *r = t->r;
    size_t n = 0;
    gt_sorted_row *rows = gt_report_sorted_rows(r, c, &n);
    int rc = !rows && r->tables[c].nrows ? -1 : 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += rows[i].row->time.total;
    if (c == GT_CAT_NVTX) total = r->nvtx.open_ns;
    for (size_t i = 0; i < n; i++) {
        char *label = gt_row_label(r, c, rows[i].row);
        if (!label) {
            rc = -1;
            continue;
        }
        write_row(out, t, c, rows[i].row, label, total);
        free(label);
    }
    free(rows);
    return rc;
}

static void write_memory(FILE *out, const csv_tail *t, const gt_memory *m)
{
    for (uint32_t i = 0; i < m->ndevices; i++) {
        const gt_mem_device *d = &m->devices[i];
        char name[32];
        if (d->device == GT_MEM_HOST_DEVICE)
            snprintf(name, sizeof name, "host pinned");
        else
            snprintf(name, sizeof name, "GPU %d", (int)d->device);
        fprintf(out, "memory,\"%s\",%" PRIu64 ",,,,,,,,,%" PRIu64 ",,\"%s\",,", name, d->allocs,
                d->peak_bytes, name);
        write_tail(out, t, NULL);
        fprintf(out, "memory,\"%s leaked\",%" PRIu64 ",,,,,,,,,%" PRIu64 ",,\"%s leaked\",,", name,
                d->live_allocs, d->current_bytes, name);
        write_tail(out, t, NULL);
    }
}

/* A mark is an instant: its row has the count, and the first and the
 * last mark's times since the process start as min_ns and max_ns. */
static int write_marks(FILE *out, const csv_tail *t, const gt_process_info *p)
{
    const gt_report *r = t->r;
    uint64_t start = p ? p->start_ns : 0;
    size_t n = 0;
    const gt_nvtx_mark **marks = gt_nvtx_marks_sorted(&r->marks, &n);
    int rc = !marks && r->marks.n ? -1 : 0;
    for (size_t i = 0; i < n; i++) {
        char *label = gt_nvtx_label(r, marks[i]->domain, marks[i]->name);
        if (!label) {
            rc = -1;
            continue;
        }
        fputs("nvtx_mark,", out);
        gt_csv_write_name(out, label);
        fprintf(out, ",%" PRIu64 ",,,,%" PRIu64 ",%" PRIu64 ",,,,,,", marks[i]->count,
                marks[i]->first > start ? marks[i]->first - start : 0,
                marks[i]->last > start ? marks[i]->last - start : 0);
        gt_csv_write_name(out, label);
        fputs(",,", out);
        write_tail(out, t, NULL);
        free(label);
    }
    free(marks);
    return rc;
}

int gt_report_write_csv(const gt_report *r, const gt_process_info *p, FILE *out)
{
    int rc = 0;
    csv_tail t = {.r = r, .host = p && p->hostname ? p->hostname : "", .merged = false};
    const gt_loaded *l = r->loaded;
    t.merged = l && l->ninputs;
    if (p && !t.merged) snprintf(t.pid, sizeof t.pid, "%d", p->pid);
    fputs(CSV_HEADER, out);
    fputs(t.merged ? CSV_SPREAD_HEADER "\r\n" : "\r\n", out);
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        if (!gt_report_enabled(r, c)) continue;
        if (c == GT_CAT_MEMORY)
            write_memory(out, &t, &r->memory);
        else if (write_table(out, &t, c) != 0)
            rc = -1;
        if (c == GT_CAT_NVTX && write_marks(out, &t, p) != 0) rc = -1;
    }
    if (gt_callsites_write_csv(out, r) != 0) rc = -1;
    return ferror(out) ? -1 : rc;
}
