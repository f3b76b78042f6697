/* The terminal summary: a header line, then one line per enabled category
 * (the full tables build on this). */
#include <inttypes.h>

#include "aggregate.h"
#include "format.h"

static uint64_t table_time(const gt_table *t)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < t->nrows; i++)
        total += t->rows[i].time.total;
    return total;
}

static void write_header(const gt_report *r, const gt_process_info *p, FILE *out)
{
    char wall[GT_FORMAT_CAP], busy[GT_FORMAT_CAP];
    uint64_t wall_ns = p && p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
    const char *command = p && p->command && p->command[0] ? p->command : "(unknown)";
    fprintf(out,
            "gputrace: %s | wall %s | GPU busy %s | %" PRIu64 " events | %" PRIu64 " dropped\n",
            command, gt_format_ns(wall_ns, wall, sizeof(wall)),
            gt_format_ns(gt_gpu_busy_ns(&r->busy), busy, sizeof(busy)), r->events, r->dropped);
}

static void write_memory_line(const gt_memory *m, FILE *out)
{
    uint64_t allocs = 0, frees = 0, peak = 0, leaked = 0, leaked_bytes = 0;
    for (uint32_t i = 0; i < m->ndevices; i++) {
        allocs += m->devices[i].allocs;
        frees += m->devices[i].frees;
        if (m->devices[i].peak_bytes > peak) peak = m->devices[i].peak_bytes;
        leaked += m->devices[i].live_allocs;
        leaked_bytes += m->devices[i].current_bytes;
    }
    char peak_text[GT_FORMAT_CAP], leaked_text[GT_FORMAT_CAP];
    fprintf(out,
            "  %-8s %" PRIu32 " devices, %" PRIu64 " allocs, %" PRIu64 " frees, peak %s, "
            "leaked %" PRIu64 " (%s)\n",
            "memory", m->ndevices, allocs, frees,
            gt_format_bytes(peak, peak_text, sizeof(peak_text)), leaked,
            gt_format_bytes(leaked_bytes, leaked_text, sizeof(leaked_text)));
}

static void write_nvtx_anomalies(const gt_nvtx_counts *n, FILE *out)
{
    if (n->unbalanced_pops) fprintf(out, ", %" PRIu64 " unbalanced pops", n->unbalanced_pops);
    if (n->open_at_exit) fprintf(out, ", %" PRIu64 " open at exit", n->open_at_exit);
    if (n->unmatched_ends) fprintf(out, ", %" PRIu64 " unmatched ends", n->unmatched_ends);
    if (n->too_deep) fprintf(out, ", %" PRIu64 " nested too deep", n->too_deep);
}

static void write_category_line(const gt_report *r, enum gt_category c, FILE *out)
{
    if (c == GT_CAT_MEMORY) {
        write_memory_line(&r->memory, out);
        return;
    }
    const gt_table *t = &r->tables[c];
    char total[GT_FORMAT_CAP];
    fprintf(out, "  %-8s %" PRIu32 " rows, %" PRIu64 " calls, %s", gt_category_name(c), t->nrows,
            gt_table_calls(t), gt_format_ns(table_time(t), total, sizeof(total)));
    if (c == GT_CAT_NVTX) write_nvtx_anomalies(&r->nvtx.counts, out);
    fputc('\n', out);
}

int gt_report_write_summary(const gt_report *r, const gt_process_info *p, FILE *out)
{
    if (r->opt.verbosity == GT_VERB_NONE) return 0;
    write_header(r, p, out);
    for (unsigned c = 0; c < GT_CAT_COUNT; c++)
        if (gt_report_enabled(r, c)) write_category_line(r, c, out);
    return ferror(out) ? -1 : 0;
}
