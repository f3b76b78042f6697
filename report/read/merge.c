/* Merging reports (merge.h): rows summed by key with their statistics
 * combined, each row's spread across the inputs, memory, advice, the
 * header. */
#include "merge.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "loaded.h"
#include "advice.h"
#include "callsite_table.h"
#include "event.h"
#include "gpu_busy.h"
#include "memory_table.h"
#include "counter_table.h"
#include "heap_table.h"
#include "nvtx_marks.h"
#include "nvtx_numbers.h"
#include "nvtx_table.h"
#include "report.h"
#include "settings.h"
#include "stats.h"
#include "strtab.h"
#include "table.h"

/* One input's share of a merged row. */
typedef struct part {
    uint32_t row;
    uint32_t input;
    uint64_t total;
    uint64_t med;
    uint64_t count;
} part;

/* A merged row's samples so far, as moments (Chan et al.'s pairwise
 * update of the mean and the sum of squared deviations). */
typedef struct moments {
    long double mean;
    long double m2;
    uint64_t count;
    uint64_t total;
    uint64_t min;
    uint64_t max;
    uint64_t first;
} moments;

typedef struct category_acc {
    moments *rows; /* by merged row number */
    uint32_t cap;
    part *parts;
    size_t nparts;
    size_t parts_cap;
} category_acc;

typedef struct merge_ctx {
    gt_report *out;
    gt_loaded *l;
    size_t n;
    category_acc acc[GT_CAT_COUNT];
    char *err;
    size_t errcap;
    bool failed;
} merge_ctx;

static bool fail(merge_ctx *m, const char *what)
{
    if (!m->failed) snprintf(m->err, m->errcap, "merge: %s", what);
    m->failed = true;
    return false;
}

static bool grow(void **array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return true;
    size_t cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *grown = realloc(*array, cap2 * size);
    if (!grown) return false;
    *array = grown;
    *cap = cap2;
    return true;
}

static void add_moments(moments *a, const gt_stats_summary *s)
{
    if (s->count == 0) return;
    long double n_b = (long double)s->count;
    long double mean_b = (long double)s->total / n_b;
    long double m2_b = (n_b - 1) * (long double)s->stddev * (long double)s->stddev;
    if (a->count == 0) {
        *a = (moments){mean_b, m2_b, s->count, s->total, s->min, s->max, s->first};
        return;
    }
    long double n_a = (long double)a->count, n = n_a + n_b, delta = mean_b - a->mean;
    a->mean += delta * n_b / n;
    a->m2 += m2_b + delta * delta * n_a * n_b / n;
    a->count += s->count;
    a->total += s->total;
    if (s->min < a->min) a->min = s->min;
    if (s->max > a->max) a->max = s->max;
}

static bool add_errors(gt_row *dst, const gt_row *src)
{
    for (uint32_t i = 0; i < src->nerrors; i++) {
        const gt_api_error *e = &src->errors[i];
        uint32_t j = 0;
        while (j < dst->nerrors &&
               (dst->errors[j].name != e->name || (!e->name && dst->errors[j].result != e->result)))
            j++;
        if (j == dst->nerrors) {
            gt_api_error *grown = realloc(dst->errors, (dst->nerrors + 1) * sizeof(*grown));
            if (!grown) return false;
            dst->errors = grown;
            dst->errors[dst->nerrors++] = (gt_api_error){e->name, e->result, 0};
        }
        dst->errors[j].count += e->count;
    }
    return true;
}

/* The merged row number of input row src of category c (created when new). */
static int32_t merged_row(merge_ctx *m, enum gt_category c, const gt_row *src)
{
    gt_table *t = &m->out->tables[c];
    int32_t idx = gt_table_row_index(t, &src->key);
    category_acc *a = &m->acc[c];
    size_t cap = a->cap;
    if (idx >= 0 && !grow((void **)&a->rows, &cap, (size_t)t->nrows, sizeof(*a->rows))) idx = -1;
    if (idx >= 0 && cap != a->cap) {
        memset(&a->rows[a->cap], 0, (cap - a->cap) * sizeof(*a->rows));
        a->cap = (uint32_t)cap;
    }
    return idx;
}

static bool merge_row(merge_ctx *m, const gt_report *in, uint32_t input, enum gt_category c,
                      const gt_row *src)
{
    const gt_table *it = &in->tables[c];
    int32_t src_parent = src->parent;
    int32_t parent = -1;
    /* The parent row came first in its input, so it is merged already. */
    if (c == GT_CAT_NVTX && src_parent >= 0 && src_parent < (int32_t)(src - it->rows))
        parent = merged_row(m, c, &it->rows[src_parent]);
    uint32_t before = m->out->tables[c].nrows;
    int32_t idx = merged_row(m, c, src);
    if (idx < 0) return fail(m, "out of memory");
    gt_row *dst = &m->out->tables[c].rows[idx];
    if (m->out->tables[c].nrows != before) {
        dst->level = src->level;
        dst->parent = parent;
    }
    dst->calls += src->calls;
    dst->graph_calls += src->graph_calls;
    dst->bytes += src->bytes;
    dst->timed_bytes += src->timed_bytes;
    dst->api_ns_total += src->api_ns_total;
    dst->gpu_ns_total += src->gpu_ns_total;
    dst->gpu_span_total += src->gpu_span_total;
    dst->open_ns += src->open_ns;
    dst->firsts += src->firsts;
    if (!add_errors(dst, src) || gt_nvtx_numbers_merge(dst, src) != 0)
        return fail(m, "out of memory");
    gt_stats_summary s;
    gt_stats_summarize(&src->time, &s);
    category_acc *a = &m->acc[c];
    add_moments(&a->rows[idx], &s);
    if (!grow((void **)&a->parts, &a->parts_cap, a->nparts + 1, sizeof(*a->parts)))
        return fail(m, "out of memory");
    a->parts[a->nparts++] = (part){(uint32_t)idx, input, s.total, s.med, s.count};
    return true;
}

static int by_med(const void *x, const void *y)
{
    const part *a = x, *b = y;
    return (a->med > b->med) - (a->med < b->med);
}

static int by_total(const void *x, const void *y)
{
    const part *a = x, *b = y;
    if (a->total != b->total) return a->total < b->total ? -1 : 1;
    return (a->input > b->input) - (a->input < b->input);
}

/* Rounds half up, without overflow, given a <= b (as stats.c does). */
static uint64_t midpoint(uint64_t a, uint64_t b)
{
    return a + (b - a) / 2 + ((b - a) & 1);
}

/* The count-weighted median of the parts' medians (sorts them). */
static uint64_t weighted_median(part *p, size_t k, uint64_t count)
{
    qsort(p, k, sizeof(*p), by_med);
    uint64_t seen = 0;
    for (size_t i = 0; i < k; i++) {
        seen += p[i].count;
        if (2 * seen >= count) return p[i].med;
    }
    return k ? p[k - 1].med : 0;
}

/* Min, median and max of the n inputs' totals, k of which have the row
 * (the others count as 0); sorts the parts. */
static gt_row_spread spread_of(part *p, size_t k, size_t n)
{
    qsort(p, k, sizeof(*p), by_total);
    gt_row_spread s = {.inputs = (uint32_t)k};
    size_t zeros = n - k;
    s.min = zeros ? 0 : p[0].total;
    s.max = p[k - 1].total;
    s.max_input = p[k - 1].input;
    /* The first input with the largest total, not the last. */
    for (size_t i = k - 1; i-- > 0 && p[i].total == s.max;)
        s.max_input = p[i].input;
    uint64_t lo_at = (n - 1) / 2, hi_at = n / 2;
    uint64_t lo = lo_at < zeros ? 0 : p[lo_at - zeros].total;
    uint64_t hi = hi_at < zeros ? 0 : p[hi_at - zeros].total;
    s.med = midpoint(lo, hi);
    return s;
}

/* Each merged row's statistics and spread, from its parts grouped by row. */
static bool finish_category(merge_ctx *m, enum gt_category c)
{
    gt_table *t = &m->out->tables[c];
    category_acc *a = &m->acc[c];
    if (!t->nrows) return true;
    gt_stats_summary *sums = calloc(t->nrows, sizeof(*sums));
    gt_row_spread *spread = calloc(t->nrows, sizeof(*spread));
    size_t *start = calloc((size_t)t->nrows + 1, sizeof(*start));
    part *grouped = malloc(a->nparts * sizeof(*grouped));
    m->l->summaries[c] = sums;
    m->l->spread[c] = spread;
    if (!sums || !spread || !start || !grouped) {
        free(start);
        free(grouped);
        return fail(m, "out of memory");
    }
    /* Counting sort by row; within a row, parts stay in input order. */
    for (size_t i = 0; i < a->nparts; i++)
        start[a->parts[i].row + 1]++;
    for (uint32_t r = 0; r < t->nrows; r++)
        start[r + 1] += start[r];
    for (size_t i = 0; i < a->nparts; i++)
        grouped[start[a->parts[i].row]++] = a->parts[i];
    /* Scattering moved each start to its group's end: row r's parts are
     * [start[r - 1], start[r]). */
    for (uint32_t r = 0; r < t->nrows; r++) {
        size_t from = r ? start[r - 1] : 0, k = start[r] - from;
        const moments *mo = &a->rows[r];
        uint64_t med = weighted_median(&grouped[from], k, mo->count);
        gt_stats_summary_from_moments(mo->count, mo->total, mo->min, mo->max, mo->first, mo->m2,
                                      med, &sums[r]);
        spread[r] = spread_of(&grouped[from], k, m->n);
        gt_stats *s = &t->rows[r].time;
        s->count = sums[r].count;
        s->total = sums[r].total;
        s->min = sums[r].min;
        s->max = sums[r].max;
        s->first = sums[r].first;
        s->preset = &sums[r];
    }
    free(start);
    free(grouped);
    return true;
}

/* ------------------------------------------------------------- memory */

/* Largest first; equal sizes in input order (their addresses number them). */
static int by_bytes(const void *x, const void *y)
{
    const gt_mem_leak *a = x, *b = y;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    return (a->addr > b->addr) - (a->addr < b->addr);
}

static bool merge_memory(merge_ctx *m, gt_report *const *in)
{
    gt_memory *out = &m->out->memory;
    for (size_t i = 0; i < m->n; i++) {
        const gt_memory *mem = &in[i]->memory;
        for (uint32_t k = 0; k < mem->ndevices; k++) {
            const gt_mem_device *d = &mem->devices[k];
            gt_mem_device *o = gt_memory_device_row(out, d->device);
            if (!o) return fail(m, "out of memory");
            o->allocs += d->allocs;
            o->frees += d->frees;
            o->current_bytes += d->current_bytes;
            o->peak_bytes += d->peak_bytes;
            o->live_allocs += d->live_allocs;
            o->unknown_frees += gt_memory_unknown_frees(d);
            o->ctx_released_allocs += d->ctx_released_allocs;
            o->ctx_released_bytes += d->ctx_released_bytes;
        }
    }
    /* The largest leaks of every input, their times from their own start. */
    uint64_t origin = m->l->process.start_ns;
    for (uint32_t k = 0; k < out->ndevices; k++) {
        int32_t device = out->devices[k].device;
        gt_mem_leak *all = malloc(m->n * GT_MEM_LEAKS_LISTED * sizeof(*all));
        if (!all) return fail(m, "out of memory");
        size_t nall = 0;
        for (size_t i = 0; i < m->n; i++) {
            uint64_t start = gt_report_process(in[i])->start_ns;
            size_t got =
                gt_memory_largest_leaks(&in[i]->memory, device, &all[nall], GT_MEM_LEAKS_LISTED);
            for (size_t j = nall; j < nall + got; j++) {
                uint64_t at = all[j].time > start ? all[j].time - start : 0;
                all[j].time = origin + at;
                all[j].addr = j + 1;
            }
            nall += got;
        }
        qsort(all, nall, sizeof(*all), by_bytes);
        bool ok = true;
        for (size_t j = 0; ok && j < nall && j < GT_MEM_LEAKS_LISTED; j++)
            ok = gt_memory_keep_leak(out, device, &all[j]) == 0;
        free(all);
        if (!ok) return fail(m, "out of memory");
    }
    return true;
}

/* ------------------------------------------------------------ the marks */

/* Marks summed by (domain, name), their times from each input's start
 * moved to the merged report's start (as the leaks' are): the earliest
 * first and the latest last across the inputs. */
/* Every input's call sites (before the memory: its leaks name them). */
static bool merge_callsites(merge_ctx *m, gt_report *const *in)
{
    for (size_t i = 0; i < m->n; i++)
        if (gt_callsites_merge(&m->out->callsites, &in[i]->callsites) != 0)
            return fail(m, "out of memory");
    return true;
}

static bool merge_marks(merge_ctx *m, gt_report *const *in)
{
    uint64_t origin = m->l->process.start_ns;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t start = gt_report_process(in[i])->start_ns;
        const gt_nvtx_marks *marks = &in[i]->marks;
        for (uint32_t k = 0; k < marks->n; k++) {
            gt_nvtx_mark mark = marks->marks[k];
            mark.first = origin + (mark.first > start ? mark.first - start : 0);
            mark.last = origin + (mark.last > start ? mark.last - start : 0);
            if (gt_nvtx_marks_fold(&m->out->marks, &mark) != 0) return fail(m, "out of memory");
        }
        m->out->marks.untracked += marks->untracked;
    }
    return true;
}

/* NVTX counters by (domain, name), times moved as the marks' are; heaps
 * by (domain, name). */
static bool merge_counters_heaps(merge_ctx *m, gt_report *const *in)
{
    uint64_t origin = m->l->process.start_ns;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t start = gt_report_process(in[i])->start_ns;
        for (uint32_t k = 0; k < in[i]->counters.n; k++) {
            gt_counter_row c = in[i]->counters.rows[k];
            c.first_ns = origin + (c.first_ns > start ? c.first_ns - start : 0);
            c.last_ns = origin + (c.last_ns > start ? c.last_ns - start : 0);
            if (gt_counter_table_fold(&m->out->counters, &c) != 0) return fail(m, "out of memory");
        }
        for (uint32_t k = 0; k < in[i]->heaps.n; k++)
            if (gt_heap_table_fold(&m->out->heaps, &in[i]->heaps.rows[k]) != 0)
                return fail(m, "out of memory");
    }
    return true;
}

/* The inputs' source when they share one; mixed when they differ (the
 * detail then says which input had which), off only when every one was. */
static void merge_gpu_source(merge_ctx *m, gt_report *const *in)
{
    enum gt_gpu_source src = gt_report_gpu_source(in[0]);
    bool same = true;
    for (size_t i = 1; i < m->n; i++) same = same && gt_report_gpu_source(in[i]) == src;
    if (same) {
        gt_report_set_gpu_source(m->out, src, m->n == 1 ? gt_report_gpu_source_detail(in[0]) : "");
        return;
    }
    char detail[GT_GPU_DETAIL_MAX];
    size_t len = (size_t)snprintf(detail, sizeof detail, "the inputs differ:");
    for (size_t i = 0; i < m->n && len < sizeof detail; i++)
        len += (size_t)snprintf(detail + len, sizeof detail - len, "%s input %zu %s",
                                i ? "," : "", i + 1, gt_gpu_source_name(gt_report_gpu_source(in[i])));
    gt_report_set_gpu_source(m->out, GT_GPU_SOURCE_MIXED, detail);
}

/* GPU timing was off for a reason only when it was so in every input:
 * the first input's reason says it. */
static void merge_timing_off(merge_ctx *m, gt_report *const *in)
{
    for (size_t i = 0; i < m->n; i++)
        if (!in[i]->gpu_timing_off[0]) return;
    gt_report_set_gpu_timing_off(m->out, in[0]->gpu_timing_off);
}

/* ------------------------------------------------------------- advice */

/* Per rule: the counts summed, the message of the input with the most. */
typedef struct rule_acc {
    const char *rule;
    size_t seen; /* order of first appearance, for rules of equal rank */
    uint64_t count;
    uint32_t inputs;
    uint32_t worst; /* the input with the largest count */
    uint64_t worst_count;
    char message[GT_ADVICE_MESSAGE_MAX];
} rule_acc;

/* In rule order (advice.h), rules this gputrace does not know last. */
static int by_rule(const void *x, const void *y)
{
    const rule_acc *a = x, *b = y;
    unsigned ra = gt_advice_rule_rank(a->rule), rb = gt_advice_rule_rank(b->rule);
    if (ra != rb) return ra < rb ? -1 : 1;
    return (a->seen > b->seen) - (a->seen < b->seen);
}

static void merge_advice(merge_ctx *m, gt_report *const *in)
{
    rule_acc rules[GT_ADVICE_RULES];
    size_t nrules = 0;
    for (size_t i = 0; i < m->n; i++) {
        gt_advice found[GT_ADVICE_RULES];
        size_t nf = gt_report_advice(in[i], gt_report_process(in[i]), found);
        for (size_t f = 0; f < nf; f++) {
            size_t k = 0;
            while (k < nrules && strcmp(rules[k].rule, found[f].rule) != 0)
                k++;
            if (k == nrules) {
                if (nrules == GT_ADVICE_RULES) continue;
                rules[nrules] = (rule_acc){.rule = found[f].rule, .seen = nrules};
                nrules++;
            }
            rule_acc *r = &rules[k];
            r->count += found[f].count;
            r->inputs++;
            if (r->inputs == 1 || found[f].count > r->worst_count) {
                r->worst = (uint32_t)i;
                r->worst_count = found[f].count;
                snprintf(r->message, sizeof r->message, "%s", found[f].message);
            }
        }
    }
    qsort(rules, nrules, sizeof(*rules), by_rule);
    for (size_t k = 0; k < nrules; k++) {
        gt_advice *a = &m->l->advice[m->l->nadvice++];
        a->rule = rules[k].rule;
        a->count = rules[k].count;
        if (m->n == 1)
            snprintf(a->message, sizeof a->message, "%s", rules[k].message);
        else
            snprintf(a->message, sizeof a->message, "In %u of %zu inputs; #%u has the most: %s",
                     rules[k].inputs, m->n, rules[k].worst, rules[k].message);
    }
}

/* ------------------------------------------------------------ the whole */

static char *dup(merge_ctx *m, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) fail(m, "out of memory");
    return d;
}

static uint64_t wall(const gt_process_info *p)
{
    return p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
}

/* The header: the longest input's times, the host and command when all
 * inputs share them; and the list of inputs. */
static bool merge_process(merge_ctx *m, gt_report *const *in, const char *const *files)
{
    gt_loaded *l = m->l;
    const gt_process_info *longest = gt_report_process(in[0]);
    bool same_host = true, same_command = true;
    for (size_t i = 1; i < m->n; i++) {
        const gt_process_info *p = gt_report_process(in[i]);
        if (wall(p) > wall(longest)) longest = p;
        same_host = same_host && strcmp(p->hostname, gt_report_process(in[0])->hostname) == 0;
        same_command = same_command && strcmp(p->command, gt_report_process(in[0])->command) == 0;
    }
    char commands[64];
    snprintf(commands, sizeof commands, "(%zu different commands)", m->n);
    l->hostname = dup(m, same_host ? gt_report_process(in[0])->hostname : "");
    l->command = dup(m, same_command ? gt_report_process(in[0])->command : commands);
    l->process = (gt_process_info){.hostname = l->hostname,
                                   .command = l->command,
                                   .start_ns = longest->start_ns,
                                   .end_ns = longest->end_ns};
    l->inputs = calloc(m->n, sizeof(*l->inputs));
    if (!l->inputs) return fail(m, "out of memory");
    for (size_t i = 0; i < m->n && !m->failed; i++) {
        const gt_process_info *p = gt_report_process(in[i]);
        gt_report_input *o = &l->inputs[l->ninputs++];
        o->file = dup(m, files[i]);
        o->hostname = dup(m, p->hostname);
        o->command = dup(m, p->command);
        o->pid = p->pid;
        o->wall_ns = wall(p);
        o->gpu_busy_ns = gt_gpu_busy_ns(&in[i]->busy);
        o->events = in[i]->events;
    }
    return !m->failed;
}

static bool add_total(merge_ctx *m, const gt_loaded_member *t)
{
    gt_loaded *l = m->l;
    for (uint32_t i = 0; i < l->ntotals; i++) {
        if (strcmp(l->totals[i].key, t->key) == 0) {
            l->totals[i].value += t->value;
            return true;
        }
    }
    gt_loaded_member *grown = realloc(l->totals, (l->ntotals + 1) * sizeof(*grown));
    if (!grown) return fail(m, "out of memory");
    l->totals = grown;
    l->totals[l->ntotals] = (gt_loaded_member){.key = dup(m, t->key), .value = t->value};
    l->ntotals++;
    return !m->failed;
}

/* Counts summed, the options that cover every input. */
static bool merge_totals(merge_ctx *m, const gt_report *in)
{
    gt_report *out = m->out;
    out->opt.categories |= in->opt.categories;
    if (in->opt.verbosity > out->opt.verbosity) out->opt.verbosity = in->opt.verbosity;
    if (in->opt.gpu_timing != GT_GPU_TIMING_OFF &&
        (out->opt.gpu_timing == GT_GPU_TIMING_OFF || out->opt.gpu_timing > in->opt.gpu_timing))
        out->opt.gpu_timing = in->opt.gpu_timing;
    out->events += in->events;
    out->dropped += in->dropped;
    out->busy.retired_ns += gt_gpu_busy_ns(&in->busy);
    out->busy.intervals += in->busy.intervals;
    out->busy.clipped_ns += in->busy.clipped_ns;
    out->late += in->late;
    out->late_gpu_work += in->late_gpu_work;
    out->gpu_pending += in->gpu_pending;
    out->nvtx.open_ns += in->nvtx.open_ns;
    gt_nvtx_counts *o = &out->nvtx.counts;
    const gt_nvtx_counts *c = &in->nvtx.counts;
    o->marks += c->marks;
    o->unbalanced_pops += c->unbalanced_pops;
    o->open_at_exit += c->open_at_exit;
    o->unmatched_ends += c->unmatched_ends;
    o->too_deep += c->too_deep;
    o->untracked += c->untracked;
    for (uint32_t i = 0; in->loaded && i < in->loaded->ntotals; i++)
        if (!add_total(m, &in->loaded->totals[i])) return false;
    return true;
}

gt_report *gt_report_merge(gt_report *const *in, const char *const *files, size_t n,
                           const gt_strtab *names, char *err, size_t errcap)
{
    gt_report_options opt = {0, GT_VERB_NONE, GT_GPU_TIMING_OFF};
    merge_ctx m = {.n = n, .err = err, .errcap = errcap};
    if (n == 0 || n > UINT32_MAX) {
        fail(&m, "no reports to merge");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!gt_report_process(in[i])) {
            fail(&m, "an input was not read from a file");
            return NULL;
        }
    }
    m.out = gt_loaded_report_create(&opt, names);
    if (!m.out) {
        fail(&m, "out of memory");
        return NULL;
    }
    m.l = m.out->loaded;
    bool ok = merge_process(&m, in, files);
    for (size_t i = 0; ok && i < n; i++) {
        ok = merge_totals(&m, in[i]);
        for (unsigned c = 0; ok && c < GT_CAT_COUNT; c++) {
            const gt_table *t = &in[i]->tables[c];
            for (uint32_t r = 0; ok && r < t->nrows; r++)
                ok = merge_row(&m, in[i], (uint32_t)i, c, &t->rows[r]);
        }
    }
    for (unsigned c = 0; ok && c < GT_CAT_COUNT; c++)
        ok = finish_category(&m, c);
    ok = ok && merge_callsites(&m, in) && merge_memory(&m, in) && merge_marks(&m, in) &&
         merge_counters_heaps(&m, in);
    if (ok) merge_timing_off(&m, in);
    if (ok) merge_gpu_source(&m, in);
    if (ok) merge_advice(&m, in);
    ok = ok && gt_merge_checksums(m.out, in, n, err, errcap);
    for (unsigned c = 0; c < GT_CAT_COUNT; c++) {
        free(m.acc[c].rows);
        free(m.acc[c].parts);
    }
    if (!ok) {
        gt_report_destroy(m.out);
        return NULL;
    }
    return m.out;
}
