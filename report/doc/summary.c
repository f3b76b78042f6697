/* The terminal summary (SPEC §5): a header line, a warning when events
 * were dropped, one section per enabled category, the advice, and at
 * debug verbosity what the report itself had to work around. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "aggregate.h"
#include "checksum_doc.h"
#include "callsite_text.h"
#include "event.h"
#include "format.h"
#include "gpu_busy.h"
#include "loaded.h"
#include "memory_table.h"
#include "nvtx_marks.h"
#include "nvtx_table.h"
#include "report.h"
#include "settings.h"
#include "stats.h"
#include "table.h"
#include "summary.h"
#include "text_table.h"
#include "utf8.h"

static uint64_t wall_ns(const gt_process_info *p)
{
    return p && p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
}

/* Launches of kernels whose median GPU time is under the small-kernel
 * bound (GT_ADVICE_SMALL_KERNEL_NS): what an event pair reads worst. */
static uint64_t short_kernel_launches(const gt_report *r)
{
    const gt_table *t = &r->tables[GT_CAT_KERNEL];
    uint64_t launches = 0;
    for (uint32_t i = 0; i < t->nrows; i++) {
        const gt_row *row = &t->rows[i];
        if (row->key.f[1] || !row->time.count) continue;
        gt_stats_summary sum;
        gt_stats_summarize(&row->time, &sum);
        if (sum.med < GT_ADVICE_SMALL_KERNEL_NS) launches += row->calls;
    }
    return launches;
}

static void write_wrapped(const gt_summary *s, const char *first, const char *text);

/* Where the GPU times came from, when it is not what a user would take
 * for granted (CUPTI), and what event pairs get wrong where it applies. */
static void write_gpu_source(const gt_summary *s)
{
    const gt_report *r = s->r;
    enum gt_gpu_source src = gt_report_gpu_source(r);
    char *detail = gt_text_safe(gt_report_gpu_source_detail(r));
    const char *d = detail && detail[0] ? detail : NULL;
    char line[GT_GPU_DETAIL_MAX + 160] = "";
    if (src == GT_GPU_SOURCE_CUPTI && s->v >= GT_VERB_VERBOSE)
        snprintf(line, sizeof line, "GPU times from CUPTI activity records%s%s", d ? ": " : "",
                 d ? d : "");
    else if (src == GT_GPU_SOURCE_MIXED)
        snprintf(line, sizeof line, "GPU times from CUPTI, then from CUDA event pairs%s%s",
                 d ? ": " : "", d ? d : "");
    else if (src == GT_GPU_SOURCE_EVENTS &&
             (r->opt.gpu_timing != GT_GPU_TIMING_EVENTS || s->v >= GT_VERB_VERBOSE))
        snprintf(line, sizeof line, "GPU times from CUDA event pairs%s%s%s",
                 r->opt.gpu_timing == GT_GPU_TIMING_EVENTS ? " (asked for)" : ", not CUPTI",
                 d ? ": " : "", d ? d : "");
    free(detail);
    if (line[0]) write_wrapped(s, "gputrace: ", line);
    if (src != GT_GPU_SOURCE_EVENTS && src != GT_GPU_SOURCE_MIXED) return;
    if (r->shared_streams) {
        snprintf(line, sizeof line,
                 "%" PRIu64 " stream%s got GPU work from several threads: an event pair there "
                 "also times the other threads' work between its two records, so those times "
                 "read long; CUPTI reads each piece of work alone",
                 r->shared_streams, r->shared_streams == 1 ? "" : "s");
        write_wrapped(s, "gputrace: note: ", line);
    }
    uint64_t short_launches = short_kernel_launches(r);
    if (short_launches) {
        snprintf(line, sizeof line,
                 "event pairs read the %" PRIu64 " launches of kernels under 25 us (median) "
                 "long: a pair adds the GPU's launch latency (5-7 us around a 0.9 us kernel on "
                 "an H100); CUPTI reads them exactly",
                 short_launches);
        write_wrapped(s, "gputrace: note: ", line);
    }
}

/* The header's fields after the command, so that the command can be cut
 * to make the line fit. */
static void write_header(const gt_summary *s)
{
    char wall[GT_FORMAT_CAP], busy[GT_FORMAT_CAP], share[GT_FORMAT_CAP], rest[256];
    uint64_t wall_time = wall_ns(s->p), busy_ns = gt_gpu_busy_ns(&s->r->busy);
    bool timing_off = s->r->gpu_timing_off[0] != '\0';
    int n = timing_off ? snprintf(rest, sizeof rest, " | wall %s | GPU timing off",
                                  gt_format_ns(wall_time, wall, sizeof wall))
                       : snprintf(rest, sizeof rest, " | wall %s | GPU busy %s",
                                  gt_format_ns(wall_time, wall, sizeof wall),
                                  gt_format_ns(busy_ns, busy, sizeof busy));
    /* With capture windows the share is of the time they held. */
    int captured = 0;
    uint64_t seen = gt_report_observed_ns(s->r, wall_time, &captured);
    /* With -c leaving GPU work out, the busy time is of the work recorded. */
    char work[64];
    gt_report_work_recorded(s->r, work, sizeof work);
    char of[80] = "";
    if (!strcmp(work, "none"))
        snprintf(of, sizeof of, ", no GPU work recorded");
    else if (work[0])
        snprintf(of, sizeof of, ", %s only", work);
    if (seen && !timing_off && n > 0 && (size_t)n < sizeof rest)
        n += snprintf(rest + n, sizeof rest - (size_t)n, " (%s%s%s)",
                      gt_summary_percent(busy_ns, seen, share, sizeof share),
                      captured ? " of captured" : "", of);
    if (n > 0 && (size_t)n < sizeof rest)
        n += snprintf(rest + n, sizeof rest - (size_t)n,
                      " | %" PRIu64 " events | %" PRIu64 " dropped", s->r->events, s->r->dropped);
    /* The runtime's own teardown makes late events in most runs: the header
     * counts them only when GPU work is among them (the note below says why). */
    if (s->r->late_gpu_work && n > 0 && (size_t)n < sizeof rest)
        snprintf(rest + n, sizeof rest - (size_t)n, " | %" PRIu64 " late", s->r->late);
    const char *prefix = "gputrace: ";
    const char *cmd = s->p && s->p->command && s->p->command[0] ? s->p->command : "(unknown)";
    /* The program by its base name first, then its arguments, cut at the
     * end to fit; verbose gives the whole command line. */
    const char *shown = cmd;
    for (size_t i = 0, len = strcspn(cmd, " "); s->v < GT_VERB_VERBOSE && i + 1 < len; i++)
        if (cmd[i] == '/') shown = cmd + i + 1;
    char *command = gt_text_safe(shown);
    size_t used = strlen(prefix) + gt_text_width(rest);
    size_t room = used < s->width ? s->width - used : 0;
    fputs(prefix, s->out);
    if (s->v >= GT_VERB_VERBOSE)
        fputs(command ? command : "", s->out);
    else
        gt_text_put_head(s->out, command ? command : "", room > 20 ? room : 20);
    fprintf(s->out, "%s\n", rest);
    free(command);
    gt_capture_info capture;
    gt_report_capture(s->r, wall_time, &capture);
    if (gt_capture_limited(&capture)) {
        char text[GT_CAPTURE_TEXT_MAX];
        gt_capture_describe(&capture, wall_time, text, sizeof text);
        char *safe = gt_text_safe(text);
        fprintf(s->out, "gputrace: capture: %s\n", safe ? safe : "");
        free(safe);
    }
    gt_snapshot_info snapshot;
    gt_report_snapshot(s->r, s->p, &snapshot);
    if (!snapshot.final) {
        char line[256];
        uint64_t start = s->p ? s->p->start_ns : 0;
        gt_snapshot_line(line, sizeof line, s->p ? s->p->pid : 0,
                         snapshot.at_ns > start ? snapshot.at_ns - start : 0, 0);
        fputs(line, s->out);
    } else if (snapshot.signal) {
        fprintf(s->out, "gputrace: pid %d ended on signal %d (%s): this report was made then\n",
                s->p ? s->p->pid : 0, snapshot.signal, gt_signal_name(snapshot.signal));
    }
    if (timing_off) {
        char *why = gt_text_safe(s->r->gpu_timing_off);
        fprintf(s->out, "gputrace: GPU timing off: %s\n", why ? why : "");
        free(why);
    } else {
        write_gpu_source(s);
    }
    if (s->r->dropped)
        fprintf(s->out,
                "gputrace: warning: %" PRIu64 " events were dropped%s%s: every table undercounts\n",
                s->r->dropped, s->r->dropped_why[0] ? " " : "", s->r->dropped_why);
    /* Late events are usual (the CUDA runtime's own teardown makes some):
     * worth a line only when GPU work is among them. */
    if (s->r->late_gpu_work)
        fprintf(s->out,
                "gputrace: note: %" PRIu64 " kernel launches, copies and memsets came after the "
                "report was cut (threads still at work as the process ended): they count as late, "
                "not in the tables\n",
                s->r->late_gpu_work);
    if (s->r->gpu_pending)
        fprintf(s->out,
                "gputrace: note: %" PRIu64 " GPU operations were still pending when the report was "
                "cut (running, or their times not read in the time an exit allows): they are "
                "counted without GPU time\n",
                s->r->gpu_pending);
}

/* A merged report: the reports it was made of, and what the spread
 * columns of its tables mean. */
static void write_inputs(gt_summary *s)
{
    const gt_loaded *l = s->r->loaded;
    if (!l || !l->ninputs) return;
    fprintf(s->out,
            "\ninputs: %" PRIu32 " reports; InMin/InMed/InMax: least/median/most of one input's "
            "total, MaxIn: the input with the most\n",
            l->ninputs);
    static const gt_text_column cols[] = {
        {"Input", true, false, 0},  {"Wall", true, false, 0},    {"GPU busy", true, false, 0},
        {"Events", true, false, 1}, {"Pid", true, false, 2},     {"Host", false, false, 2},
        {"File", false, false, 0},  {"Command", false, true, 0},
    };
    gt_text_table tt;
    gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    for (uint32_t i = 0; i < l->ninputs; i++) {
        const gt_report_input *in = &l->inputs[i];
        char num[24], wall[GT_FORMAT_CAP], busy[GT_FORMAT_CAP], events[24], pid[24];
        snprintf(num, sizeof num, "#%" PRIu32, i);
        snprintf(events, sizeof events, "%" PRIu64, in->events);
        snprintf(pid, sizeof pid, "%d", in->pid);
        const char *cells[] = {num,
                               gt_format_ns(in->wall_ns, wall, sizeof wall),
                               gt_format_ns(in->gpu_busy_ns, busy, sizeof busy),
                               events,
                               pid,
                               in->hostname,
                               in->file,
                               in->command};
        gt_text_table_add(&tt, cells);
    }
    if (gt_text_table_print(&tt, s->out, s->v >= GT_VERB_VERBOSE ? 0 : s->width) != 0) s->rc = -1;
    gt_text_table_free(&tt);
}

static const char *device_name(int32_t device, char *buf, size_t cap)
{
    if (device == GT_MEM_HOST_DEVICE) return "host pinned";
    snprintf(buf, cap, "GPU %d", (int)device);
    return buf;
}

static void write_leaks(gt_summary *s, const gt_mem_device *d)
{
    gt_mem_leak leaks[GT_MEM_LEAKS_LISTED];
    size_t n = gt_memory_largest_leaks(&s->r->memory, d->device, leaks, GT_MEM_LEAKS_LISTED);
    if (!n) return;
    char dev[32];
    fprintf(s->out, "%slargest leaks on %s:", GT_TEXT_INDENT,
            device_name(d->device, dev, sizeof dev));
    uint64_t start = s->p ? s->p->start_ns : 0;
    for (size_t i = 0; i < n; i++) {
        char bytes[GT_FORMAT_CAP], at[GT_FORMAT_CAP];
        uint64_t t = leaks[i].time > start ? leaks[i].time - start : 0;
        fprintf(s->out, "%s %s %s at +%s", i ? "," : "",
                gt_format_bytes(leaks[i].bytes, bytes, sizeof bytes),
                gt_mem_kind_name(leaks[i].kind), gt_format_ns(t, at, sizeof at));
        gt_summary_leak_site(s, leaks[i].site);
    }
    fputc('\n', s->out);
}

static void write_memory(gt_summary *s)
{
    const gt_memory *m = &s->r->memory;
    if (!m->ndevices) {
        fputs("memory: none recorded\n", s->out);
        return;
    }
    uint64_t allocs = 0, frees = 0;
    unsigned gpus = 0;
    for (uint32_t i = 0; i < m->ndevices; i++) {
        allocs += m->devices[i].allocs;
        frees += m->devices[i].frees;
        gpus += m->devices[i].device != GT_MEM_HOST_DEVICE;
    }
    fprintf(s->out, "memory: %u %s, %" PRIu64 " allocations, %" PRIu64 " frees\n", gpus,
            gpus == 1 ? "GPU" : "GPUs", allocs, frees);
    /* Released: only when some memory went with its context, so that the
     * common table stays as narrow as it was. */
    bool released = false;
    for (uint32_t i = 0; i < m->ndevices; i++)
        released |= m->devices[i].ctx_released_allocs != 0;
    static const gt_text_column cols[] = {
        {"Device", false, false, 0},  {"Allocs", true, false, 0}, {"Frees", true, false, 0},
        {"Current", true, false, 0},  {"Peak", true, false, 0},   {"Leaked", true, false, 0},
        {"Released", true, false, 0},
    };
    gt_text_table tt;
    gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0] - !released);
    for (uint32_t i = 0; i < m->ndevices; i++) {
        const gt_mem_device *d = &m->devices[i];
        char dev[32], n_allocs[24], n_frees[24], cur[GT_FORMAT_CAP], peak[GT_FORMAT_CAP],
            leaked[GT_FORMAT_CAP + 32], lb[GT_FORMAT_CAP], gone[GT_FORMAT_CAP + 32],
            gb[GT_FORMAT_CAP];
        snprintf(n_allocs, sizeof n_allocs, "%" PRIu64, d->allocs);
        snprintf(n_frees, sizeof n_frees, "%" PRIu64, d->frees);
        snprintf(leaked, sizeof leaked, "%" PRIu64 " (%s)", d->live_allocs,
                 gt_format_bytes(d->current_bytes, lb, sizeof lb));
        snprintf(gone, sizeof gone, "%" PRIu64 " (%s)", d->ctx_released_allocs,
                 gt_format_bytes(d->ctx_released_bytes, gb, sizeof gb));
        const char *cells[] = {device_name(d->device, dev, sizeof dev),
                               n_allocs,
                               n_frees,
                               gt_format_bytes(d->current_bytes, cur, sizeof cur),
                               gt_format_bytes(d->peak_bytes, peak, sizeof peak),
                               leaked,
                               gone};
        gt_text_table_add(&tt, cells);
    }
    if (gt_text_table_print(&tt, s->out, s->width) != 0) s->rc = -1;
    gt_text_table_free(&tt);
    if (released)
        write_wrapped(s, GT_TEXT_INDENT "note: ",
                      "Leaked is memory still held when the process ended; Released, memory "
                      "never freed but released with its context (destroyed or reset)");
    if (s->v >= GT_VERB_VERBOSE)
        for (uint32_t i = 0; i < m->ndevices; i++)
            write_leaks(s, &m->devices[i]);
    gt_summary_heaps(s);
}

/* Ranges the NVTX table could not take at face value. */
static void write_nvtx_notes(gt_summary *s)
{
    const gt_nvtx_counts *n = &s->r->nvtx.counts;
    const struct {
        uint64_t count;
        const char *what;
    } notes[] = {
        {n->unbalanced_pops, "pops with no open range"},
        {n->open_at_exit, "ranges still open at exit (closed there)"},
        {n->unmatched_ends, "range ends with no start"},
        {n->too_deep, "pushes nested too deep to time"},
    };
    if (s->r->nvtx.open_ns && s->r->tables[GT_CAT_NVTX].nrows)
        write_wrapped(s, GT_TEXT_INDENT "note: ",
                      "Time% is the share of the time a range was open (a row's overlapping "
                      "ranges count once)");
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        if (notes[i].count)
            fprintf(s->out, "%snote: %" PRIu64 " %s\n", GT_TEXT_INDENT, notes[i].count,
                    notes[i].what);
}

/* "+1.20 ms": a host time after the process start. */
static char *since_start(const gt_summary *s, uint64_t t, char *buf, size_t cap)
{
    uint64_t start = s->p ? s->p->start_ns : 0;
    char time[GT_FORMAT_CAP];
    snprintf(buf, cap, "+%s", gt_format_ns(t > start ? t - start : 0, time, sizeof time));
    return buf;
}

/* NVTX marks: how many of each and when the first and the last came. */
static void write_marks(gt_summary *s)
{
    size_t n = 0;
    const gt_nvtx_mark **marks = gt_nvtx_marks_sorted(&s->r->marks, &n);
    if (!n) {
        if (s->r->marks.n) s->rc = -1; /* marks exist: no memory to sort them */
        return;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += marks[i]->count;
    fprintf(s->out, "\nnvtx marks: %zu %s, %" PRIu64 " %s\n", n, n == 1 ? "name" : "names", total,
            total == 1 ? "mark" : "marks");
    static const gt_text_column cols[] = {{"Count", true, false, 0},
                                          {"First", true, false, 0},
                                          {"Last", true, false, 0},
                                          {"Name", false, true, 0}};
    gt_text_table tt;
    gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    bool verbose = s->v >= GT_VERB_VERBOSE;
    size_t shown = verbose || n < GT_SUMMARY_TOP_ROWS ? n : GT_SUMMARY_TOP_ROWS;
    for (size_t i = 0; i < shown; i++) {
        char count[24], first[GT_FORMAT_CAP + 1], last[GT_FORMAT_CAP + 1];
        char *label = gt_nvtx_label(s->r, marks[i]->domain, marks[i]->name);
        snprintf(count, sizeof count, "%" PRIu64, marks[i]->count);
        const char *cells[] = {count, since_start(s, marks[i]->first, first, sizeof first),
                               since_start(s, marks[i]->last, last, sizeof last), label};
        if (label)
            gt_text_table_add(&tt, cells);
        else
            s->rc = -1;
        free(label);
    }
    if (gt_text_table_print(&tt, s->out, verbose ? 0 : s->width) != 0) s->rc = -1;
    if (shown < n)
        fprintf(s->out, "%s... %zu more (verbose shows every row)\n", GT_TEXT_INDENT, n - shown);
    gt_text_table_free(&tt);
    free(marks);
}

/* Words of text wrapped at the summary's width, continuation lines indented. */
static void write_wrapped(const gt_summary *s, const char *first, const char *text)
{
    FILE *out = s->out;
    const char *cont = "      ";
    size_t col = gt_text_width(first);
    fputs(first, out);
    for (const char *p = text; *p;) {
        const char *space = strchr(p, ' ');
        size_t len = space ? (size_t)(space - p) : strlen(p);
        char *word = strndup(p, len);
        size_t w = word ? gt_text_width(word) : len;
        if (col > strlen(cont) && col + 1 + w > s->width) {
            fprintf(out, "\n%s", cont);
            col = strlen(cont);
        } else if (p != text) {
            fputc(' ', out);
            col++;
        }
        fputs(word ? word : "", out);
        free(word);
        col += w;
        p += len;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
}

static void write_advice(gt_summary *s)
{
    gt_advice found[GT_ADVICE_RULES];
    size_t n = gt_report_advice(s->r, s->p, found);
    if (!n) {
        fputs("advice: none\n", s->out);
        return;
    }
    fputs("advice:\n", s->out);
    for (size_t i = 0; i < n; i++) {
        /* A report read back names its rules itself: made safe as the
         * message is, and cut at a whole character. */
        char rule[48], first[64];
        gt_text_safe_copy(rule, sizeof rule, found[i].rule, strlen(found[i].rule));
        snprintf(first, sizeof first, "%s[%s] ", GT_TEXT_INDENT, rule);
        char *message = gt_text_safe(found[i].message);
        write_wrapped(s, first, message ? message : "");
        free(message);
    }
}

/* Debug: what the report had to work around or leave out. */
static void write_diagnostics(gt_summary *s)
{
    const gt_report *r = s->r;
    const gt_nvtx_counts *n = &r->nvtx.counts;
    uint64_t unknown_frees = 0;
    for (uint32_t i = 0; i < r->memory.ndevices; i++)
        unknown_frees += gt_memory_unknown_frees(&r->memory.devices[i]);
    fputs("diagnostics:\n", s->out);
    fprintf(s->out, "%srows:", GT_TEXT_INDENT);
    for (unsigned c = 0; c < GT_CAT_COUNT; c++)
        if (c != GT_CAT_MEMORY)
            fprintf(s->out, " %s %" PRIu32, gt_category_name(c), r->tables[c].nrows);
    fputc('\n', s->out);
    fprintf(s->out,
            "%snvtx: %" PRIu64 " marks, %" PRIu64 " unbalanced pops, %" PRIu64
            " open at exit, %" PRIu64 " unmatched ends, %" PRIu64 " nested too deep, %" PRIu64
            " untracked\n",
            GT_TEXT_INDENT, n->marks, n->unbalanced_pops, n->open_at_exit, n->unmatched_ends,
            n->too_deep, n->untracked);
    fprintf(s->out, "%smemory: %" PRIu64 " frees of unknown addresses\n", GT_TEXT_INDENT,
            unknown_frees);
    fprintf(s->out,
            "%sgpu busy: %" PRIu64 " intervals, %" PRIu64 " ns clipped (records later than the "
            "merge window)\n",
            GT_TEXT_INDENT, r->busy.intervals, r->busy.clipped_ns);
}

/* Whether category c recorded nothing: its section would say only so. */
static bool section_empty(const gt_report *r, enum gt_category c)
{
    if (c == GT_CAT_MEMORY) return r->memory.ndevices == 0;
    if (c == GT_CAT_NVTX && r->marks.n) return false;
    return r->tables[c].nrows == 0;
}

int gt_report_write_summary_fit(const gt_report *r, const gt_process_info *p, enum gt_verbosity v,
                                unsigned width, FILE *out)
{
    if (v == GT_VERB_NONE) return 0;
    if (!width) width = GT_TEXT_WIDTH;
    gt_summary s = {r, p, v, out, 0, width < GT_TEXT_MIN_WIDTH ? GT_TEXT_MIN_WIDTH : width};
    write_header(&s);
    write_inputs(&s);
    char empty[256] = "";
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        if (!gt_report_enabled(r, c)) continue;
        /* An empty section is one line at default: all of them together. */
        if (v < GT_VERB_VERBOSE && section_empty(r, c)) {
            size_t len = strlen(empty);
            snprintf(empty + len, sizeof empty - len, "%s%s", len ? ", " : "", gt_category_name(c));
            continue;
        }
        fputc('\n', out);
        if (c == GT_CAT_MEMORY)
            write_memory(&s);
        else
            gt_summary_table(&s, c);
        if (c == GT_CAT_NVTX) {
            write_nvtx_notes(&s);
            write_marks(&s);
            gt_summary_counters(&s);
            gt_summary_range_memory(&s);
        }
    }
    if (empty[0]) fprintf(out, "\nnone recorded: %s\n", empty);
    if (r->callsites.nsites) {
        fputc('\n', out);
        gt_summary_callsites(&s);
    }
    fputc('\n', out);
    if (r->checksums.on) {
        gt_checksums_write_summary(r, out);
        fputc('\n', out);
    }
    write_advice(&s);
    if (v >= GT_VERB_DEBUG) {
        fputc('\n', out);
        write_diagnostics(&s);
    }
    return ferror(out) || s.rc ? -1 : 0;
}

int gt_report_write_summary_at(const gt_report *r, const gt_process_info *p, enum gt_verbosity v,
                               FILE *out)
{
    return gt_report_write_summary_fit(r, p, v, 0, out);
}

int gt_report_write_summary(const gt_report *r, const gt_process_info *p, FILE *out)
{
    return gt_report_write_summary_at(r, p, r->opt.verbosity, out);
}
