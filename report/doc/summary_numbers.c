/* The summary's numbers NVTX carried: the rates beside each range's GPU
 * time, the memory each range moved and saw in use, the counters, and the
 * heaps pool allocators described (nvtx_numbers.h, counter_table.h,
 * heap_table.h). */
#include "aggregate.h"
#include "counter_table.h"
#include "format.h"
#include "heap_table.h"
#include "nvtx_numbers.h"
#include "report.h"
#include "strtab.h"
#include "summary.h"
#include "table.h"
#include "text_table.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints and frees a table that shows `shown` of n rows. */
static void print_table(gt_summary *s, gt_text_table *tt, size_t shown, size_t n)
{
    bool verbose = s->v >= GT_VERB_VERBOSE;
    if (gt_text_table_print(tt, s->out, verbose ? 0 : GT_TEXT_WIDTH) != 0) s->rc = -1;
    if (shown < n)
        fprintf(s->out, "%s... %zu more (verbose shows every row)\n", GT_TEXT_INDENT, n - shown);
    gt_text_table_free(tt);
}

/* Rows a table shows at the summary's verbosity. */
static size_t rows_shown(const gt_summary *s, size_t n)
{
    return s->v >= GT_VERB_VERBOSE || n < GT_SUMMARY_TOP_ROWS ? n : GT_SUMMARY_TOP_ROWS;
}

/* One rate, "name 2.10 TFLOP/s", after sep. */
static void put_rate(FILE *f, const char **sep, const char *name, const char *unit, double total,
                     uint64_t ns)
{
    char rate[GT_FORMAT_RATE_CAP];
    gt_format_rate(gt_number_rate(total, ns), unit, rate, sizeof rate);
    fprintf(f, "%s%s %s", *sep, name, rate);
    *sep = ", ";
}

bool gt_summary_has_rates(const gt_report *r)
{
    const gt_table *t = &r->tables[GT_CAT_NVTX];
    for (uint32_t i = 0; i < t->nrows; i++) {
        const gt_nvtx_numbers *n = t->rows[i].numbers;
        if (n && (n->payload.count || n->nfields)) return true;
    }
    return false;
}

char *gt_summary_rates(const gt_report *r, const gt_row *row)
{
    const gt_nvtx_numbers *n = row->numbers;
    if (!n || (!n->payload.count && !n->nfields)) return NULL;
    /* Per second of GPU work inside the range; per second of its wall
     * time when it enclosed none. */
    bool gpu = row->gpu_ns_total != 0;
    uint64_t ns = gpu ? row->gpu_ns_total : row->time.total;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    const char *sep = "";
    if (n->payload.count) put_rate(f, &sep, "payload", "", n->payload.total, ns);
    for (uint32_t i = 0; i < n->nfields; i++) {
        const char *name = gt_strtab_get(r->names, n->fields[i].name);
        const char *unit = gt_nvtx_field_unit(name, gt_strtab_get(r->names, n->fields[i].unit));
        put_rate(f, &sep, name, unit, n->fields[i].sum.total, ns);
    }
    if (!gpu) fputs(" (per wall s)", f);
    return fclose(f) == 0 ? text : (free(text), NULL);
}

/* Memory per range: the ranges by the peak in use while they were open,
 * then by what they allocated, then by name (the same order in the
 * process and read back). */
typedef struct mem_row {
    const gt_nvtx_numbers *num;
    char *label;
} mem_row;

static int by_peak(const void *a, const void *b)
{
    const mem_row *x = a, *y = b;
    if (x->num->peak_bytes != y->num->peak_bytes)
        return x->num->peak_bytes > y->num->peak_bytes ? -1 : 1;
    if (x->num->allocated_bytes != y->num->allocated_bytes)
        return x->num->allocated_bytes > y->num->allocated_bytes ? -1 : 1;
    return strcmp(x->label, y->label);
}

void gt_summary_range_memory(gt_summary *s)
{
    const gt_table *t = &s->r->tables[GT_CAT_NVTX];
    mem_row *rows = t->nrows ? calloc(t->nrows, sizeof(*rows)) : NULL;
    size_t n = 0;
    bool moved = false;
    for (uint32_t i = 0; rows && i < t->nrows; i++) {
        const gt_nvtx_numbers *num = t->rows[i].numbers;
        if (!num || !num->memory) continue;
        rows[n].num = num;
        rows[n].label = gt_row_label(s->r, GT_CAT_NVTX, &t->rows[i]);
        if (!rows[n].label) {
            s->rc = -1;
            continue;
        }
        moved |= num->allocated_bytes || num->freed_bytes;
        n++;
    }
    /* Only when some range allocated or freed: else every range shows
     * the same memory in use, said by the memory table already. */
    if (moved) {
        qsort(rows, n, sizeof(*rows), by_peak);
        fprintf(s->out, "\nmemory per range: device memory allocated and freed inside each "
                        "range, and the most in use while it was open\n");
        static const gt_text_column cols[] = {{"Peak", true, false, 0},
                                              {"Allocated", true, false, 0},
                                              {"Freed", true, false, 0},
                                              {"Name", false, true, 0}};
        gt_text_table tt;
        gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
        size_t shown = rows_shown(s, n);
        for (size_t i = 0; i < shown; i++) {
            char peak[GT_FORMAT_CAP], alloc[GT_FORMAT_CAP], freed[GT_FORMAT_CAP];
            const char *cells[] = {
                gt_format_bytes(rows[i].num->peak_bytes, peak, sizeof peak),
                gt_format_bytes(rows[i].num->allocated_bytes, alloc, sizeof alloc),
                gt_format_bytes(rows[i].num->freed_bytes, freed, sizeof freed), rows[i].label};
            gt_text_table_add(&tt, cells);
        }
        print_table(s, &tt, shown, n);
    }
    for (size_t i = 0; i < n; i++)
        free(rows[i].label);
    free(rows);
}

/* A number as a person reads it: integers whole, others to 4 digits. */
static char *number_text(double v, char *buf, size_t cap)
{
    if (v == (double)(int64_t)v && v > -1e15 && v < 1e15)
        snprintf(buf, cap, "%" PRId64, (int64_t)v);
    else
        snprintf(buf, cap, "%.4g", v);
    return buf;
}

void gt_summary_counters(gt_summary *s)
{
    size_t n = 0;
    const gt_counter_row **rows = gt_counter_table_sorted(&s->r->counters, s->r->names, &n);
    if (!n) {
        if (s->r->counters.n) s->rc = -1;
        return;
    }
    fprintf(s->out, "\nnvtx counters: %zu\n", n);
    static const gt_text_column cols[] = {{"Samples", true, false, 0}, {"Min", true, false, 0},
                                          {"Max", true, false, 0},     {"Last", true, false, 0},
                                          {"Unit", false, false, 0},   {"Name", false, true, 0}};
    gt_text_table tt;
    gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    size_t shown = rows_shown(s, n);
    for (size_t i = 0; i < shown; i++) {
        const gt_counter_row *c = rows[i];
        char count[24], min[32], max[32], last[32];
        snprintf(count, sizeof count, "%" PRIu64, c->count);
        char *label = gt_nvtx_label(s->r, c->domain, c->name);
        const char *cells[] = {count,
                               number_text(c->min, min, sizeof min),
                               number_text(c->max, max, sizeof max),
                               number_text(c->last, last, sizeof last),
                               gt_strtab_get(s->r->names, c->unit),
                               label};
        if (label)
            gt_text_table_add(&tt, cells);
        else
            s->rc = -1;
        free(label);
    }
    print_table(s, &tt, shown, n);
    free(rows);
}

void gt_summary_heaps(gt_summary *s)
{
    size_t n = 0;
    const gt_heap_row **rows = gt_heap_table_sorted(&s->r->heaps, &n);
    if (!n) {
        if (s->r->heaps.n) s->rc = -1;
        return;
    }
    fprintf(s->out, "%smemory heaps (NVTX): %zu, regions the pools handed out\n", GT_TEXT_INDENT,
            n);
    static const gt_text_column cols[] = {{"Heap", true, false, 0}, {"Regions", true, false, 0},
                                          {"Most", true, false, 0}, {"In regions", true, false, 0},
                                          {"Peak", true, false, 0}, {"Name", false, true, 0}};
    gt_text_table tt;
    gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    for (size_t i = 0; i < n; i++) {
        const gt_heap_row *h = rows[i];
        char size[GT_FORMAT_CAP], regions[24], peak[24], bytes[GT_FORMAT_CAP],
            peak_bytes[GT_FORMAT_CAP];
        snprintf(regions, sizeof regions, "%" PRIu64, h->regions);
        snprintf(peak, sizeof peak, "%" PRIu64, h->regions_peak);
        char *label = h->name ? gt_nvtx_label(s->r, h->domain, h->name) : NULL;
        char unnamed[48];
        snprintf(unnamed, sizeof unnamed, "heap 0x%" PRIx64, h->address);
        const char *cells[] = {gt_format_bytes(h->bytes, size, sizeof size),
                               regions,
                               peak,
                               gt_format_bytes(h->region_bytes, bytes, sizeof bytes),
                               gt_format_bytes(h->region_bytes_peak, peak_bytes, sizeof peak_bytes),
                               label ? label : unnamed};
        gt_text_table_add(&tt, cells);
        free(label);
    }
    if (gt_text_table_print(&tt, s->out, GT_TEXT_WIDTH) != 0) s->rc = -1;
    gt_text_table_free(&tt);
    free(rows);
}
