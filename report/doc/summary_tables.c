/* The statistics tables of the summary: one per row category, rows by
 * time. Default verbosity: the top GT_SUMMARY_TOP_ROWS rows, without the
 * First and RestAvg columns; lines fit the summary's width, with StdDev,
 * Min and Max left out before names are cut in the middle (kernels by
 * their readable names, display_name.h).
 * Verbose: every row with the full statistics columns, names whole, NVTX
 * ranges as a tree. A merged report adds the spread of each row's total
 * across its inputs before the name. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "display_name.h"
#include "event.h"
#include "format.h"
#include "loaded.h"
#include "report.h"
#include "settings.h"
#include "stats.h"
#include "strtab.h"
#include "summary.h"
#include "table.h"
#include "text_table.h"

/* What a category's table says in its title and which columns it adds. */
typedef struct table_kind {
    const char *row, *rows;   /* what a row is */
    const char *call, *calls; /* what a call is */
    bool gpu_time;            /* time is GPU time (host time with GPU timing off) */
    bool transfer;            /* Bytes and GB/s columns */
    bool bytes;               /* bytes in the title */
} table_kind;

static const table_kind kinds[GT_CAT_COUNT] = {
    [GT_CAT_KERNEL] = {"kernel", "kernels", "launch", "launches", true, false, false},
    [GT_CAT_MEMCPY] = {"kind", "kinds", "copy", "copies", true, true, true},
    [GT_CAT_MEMSET] = {"kind", "kinds", "memset", "memsets", true, true, true},
    /* write_compile_counts; no byte total: a program's input counts in each
     * of its verify and compile rows */
    [GT_CAT_COMPILE] = {NULL, NULL, NULL, NULL, false, false, false},
    [GT_CAT_MODULE] = {"kind", "kinds", "load", "loads", false, false, true},
    [GT_CAT_SYNC] = {"entry point", "entry points", "call", "calls", false, false, false},
    [GT_CAT_NVTX] = {"range", "ranges", "call", "calls", false, false, false},
    [GT_CAT_API] = {"entry point", "entry points", "call", "calls", false, false, false},
};

enum {
    COL_SHARE,
    COL_TOTAL,
    COL_CALLS,
    COL_AVG,
    COL_MED,
    COL_MIN,
    COL_MAX,
    COL_STDDEV,
    COL_FIRST, /* verbose only, from here */
    COL_REST,
    COL_STATS /* the columns every table has */
};

/* Where a line would not fit with the whole name, StdDev goes first, then
 * Min and Max; in a merged report then its spread but its median, GB/s
 * and Med (table_columns). */
static const gt_text_column stats_columns[COL_STATS] = {
    {"Time%", true, false, 0},   {"Total", true, false, 0},  {"Calls", true, false, 0},
    {"Avg", true, false, 0},     {"Med", true, false, 0},    {"Min", true, false, 2},
    {"Max", true, false, 2},     {"StdDev", true, false, 1}, {"First", true, false, 0},
    {"RestAvg", true, false, 0},
};

enum { SPREAD_COLS = 4 };

static const gt_text_column spread_columns[SPREAD_COLS] = {
    {"InMin", true, false, 3},
    {"InMed", true, false, 0},
    {"InMax", true, false, 3},
    {"MaxIn", true, false, 4},
};

#define MAX_COLS (COL_STATS + SPREAD_COLS + 5u)

/* A table row's cells, in buffers of their own. */
typedef struct row_cells {
    char num[COL_STATS + SPREAD_COLS + 3][GT_FORMAT_CAP];
    const char *cell[MAX_COLS];
} row_cells;

char *gt_summary_percent(uint64_t part, uint64_t whole, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.1f%%", whole ? 100.0 * (double)part / (double)whole : 0.0);
    return buf;
}

static unsigned stats_shown(bool verbose)
{
    return verbose ? COL_STATS : COL_FIRST;
}

static bool merged(const gt_report *r)
{
    return r->loaded && r->loaded->ninputs;
}

static unsigned table_columns(const gt_report *r, enum gt_category c, bool verbose,
                              gt_text_column *cols)
{
    unsigned n = stats_shown(verbose);
    memcpy(cols, stats_columns, n * sizeof(*cols));
    if (kinds[c].transfer) {
        cols[n++] = (gt_text_column){"Bytes", true, false, 0};
        cols[n++] = (gt_text_column){"GB/s", true, false, 0};
    } else if (c == GT_CAT_COMPILE || c == GT_CAT_MODULE) {
        cols[n++] = (gt_text_column){"Bytes", true, false, 0};
    } else if (c == GT_CAT_NVTX) {
        cols[n++] = (gt_text_column){"GPU", true, false, 0};
        if (gt_summary_has_rates(r))
            cols[n++] = (gt_text_column){"Rates per GPU s", false, false, 0};
    }
    if (merged(r)) {
        /* The spread takes room: GB/s and then Med may go too. */
        if (kinds[c].transfer) cols[n - 1].drop = 5;
        cols[COL_MED].drop = 6;
        memcpy(&cols[n], spread_columns, sizeof spread_columns);
        n += SPREAD_COLS;
    }
    cols[n++] = (gt_text_column){"Name", false, true, 0};
    if (c == GT_CAT_API) cols[n++] = (gt_text_column){"Errors", false, false, 0};
    return n;
}

/* "CUDA_ERROR_X x3, error 7 x1" into a new string. */
static char *errors_text(const gt_report *r, const gt_row *row)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    for (uint32_t i = 0; i < row->nerrors; i++) {
        const gt_api_error *e = &row->errors[i];
        if (i) fputs(", ", f);
        if (e->name)
            fputs(gt_strtab_get(r->names, e->name), f);
        else
            fprintf(f, "error %d", (int)e->result);
        fprintf(f, " x%" PRIu64, e->count);
    }
    return fclose(f) == 0 ? text : (free(text), NULL);
}

/* The spread cells of a merged row from n on; returns the next cell. */
static unsigned fill_spread(row_cells *rc, unsigned n, const gt_row_spread *sp)
{
    const uint64_t values[3] = {sp->min, sp->med, sp->max};
    for (unsigned i = 0; i < 3; i++, n++)
        rc->cell[n] = gt_format_ns(values[i], rc->num[n], GT_FORMAT_CAP);
    snprintf(rc->num[n], GT_FORMAT_CAP, "#%" PRIu32, sp->max_input);
    rc->cell[n] = rc->num[n];
    return n + 1;
}

/* Fills the cells of one row; the label and errors strings stay the caller's. */
static void fill_row(row_cells *rc, const gt_report *r, enum gt_category c, bool verbose,
                     const gt_row *row, uint64_t table_total, const char *label, const char *errors,
                     const char *rates)
{
    gt_stats_summary st;
    gt_stats_summarize(&row->time, &st);
    const uint64_t values[COL_STATS] = {0,      st.total, 0,         st.avg,   st.med,
                                        st.min, st.max,   st.stddev, st.first, st.rest_avg};
    unsigned n = 0;
    for (; n < stats_shown(verbose); n++) {
        char *buf = rc->num[n];
        if (n == COL_SHARE && st.count == 0)
            snprintf(buf, GT_FORMAT_CAP, "-"); /* no time was measured */
        else if (n == COL_SHARE)
            /* NVTX: the share of the time ranges were open (nvtx.h). */
            gt_summary_percent(c == GT_CAT_NVTX ? row->open_ns : st.total, table_total, buf,
                               GT_FORMAT_CAP);
        else if (n == COL_CALLS)
            snprintf(buf, GT_FORMAT_CAP, "%" PRIu64, row->calls);
        else if (st.count == 0)
            snprintf(buf, GT_FORMAT_CAP, "-"); /* no time was measured */
        else
            gt_format_ns(values[n], buf, GT_FORMAT_CAP);
        rc->cell[n] = buf;
    }
    if (kinds[c].transfer || c == GT_CAT_COMPILE || c == GT_CAT_MODULE) {
        rc->cell[n] = gt_format_bytes(row->bytes, rc->num[n], GT_FORMAT_CAP);
        n++;
    }
    if (kinds[c].transfer) {
        if (st.count)
            snprintf(rc->num[n], GT_FORMAT_CAP, "%.2f", gt_row_gbps(row));
        else
            snprintf(rc->num[n], GT_FORMAT_CAP, "-");
        rc->cell[n] = rc->num[n];
        n++;
    } else if (c == GT_CAT_NVTX) {
        rc->cell[n] = gt_format_ns(row->gpu_ns_total, rc->num[n], GT_FORMAT_CAP);
        n++;
        if (gt_summary_has_rates(r)) rc->cell[n++] = rates ? rates : "";
    }
    if (merged(r)) {
        const gt_row_spread *sp = gt_report_row_spread(r, c, row);
        static const gt_row_spread none = {0};
        n = fill_spread(rc, n, sp ? sp : &none);
    }
    rc->cell[n++] = label;
    if (c == GT_CAT_API) rc->cell[n] = errors ? errors : "";
}

/* Nesting depth of an NVTX row through its parents. A parent row is
 * always created before its child, so a parent index at or past the
 * row's own would be a loop: it ends the walk. */
static unsigned nvtx_depth(const gt_table *t, const gt_row *row)
{
    unsigned depth = 0;
    for (int32_t i = (int32_t)(row - t->rows), p = row->parent; p >= 0 && p < i && depth < 64;
         i = p, p = t->rows[p].parent)
        depth++;
    return depth;
}

/* Verbose NVTX: each range followed by the ranges first seen inside it,
 * siblings by time, depth first. A parent row is always created before
 * its child, so a parent at or past the row's own number would be a
 * loop: such a row is a root. Children are chained by their position in
 * `rows` (first child, next sibling), so the walk is linear in the rows.
 * Out of memory, order keeps the rows by time. */
#define NONE SIZE_MAX
static size_t tree_order(const gt_table *t, const gt_sorted_row *rows, size_t n, size_t *order)
{
    size_t *first = malloc(n * sizeof(*first)), *next = malloc(n * sizeof(*next));
    size_t *up = malloc(n * sizeof(*up)), *pos = malloc(t->nrows * sizeof(*pos));
    bool ok = first && next && up && pos;
    size_t len = ok ? 0 : n;
    for (size_t i = 0; ok && i < n; i++) {
        pos[rows[i].row - t->rows] = i;
        first[i] = next[i] = up[i] = NONE;
    }
    /* Backwards, so that each chain of siblings comes out in time order. */
    for (size_t i = ok ? n : 0; i-- > 0;) {
        int32_t parent = rows[i].row->parent;
        if (parent < 0 || parent >= (int32_t)(rows[i].row - t->rows)) continue;
        up[i] = pos[parent];
        next[i] = first[up[i]];
        first[up[i]] = i;
    }
    for (size_t root = 0; ok && root < n; root++) {
        if (up[root] != NONE) continue;
        for (size_t x = root;;) {
            order[len++] = x;
            if (first[x] != NONE) {
                x = first[x];
                continue;
            }
            while (x != root && next[x] == NONE)
                x = up[x];
            if (x == root) break;
            x = next[x];
        }
    }
    free(first);
    free(next);
    free(up);
    free(pos);
    return len;
}
#undef NONE

static char *nvtx_tree_label(const gt_table *t, const gt_row *row, const char *label)
{
    unsigned depth = nvtx_depth(t, row);
    size_t n = strlen(label);
    char *s = malloc(2 * depth + n + 1);
    if (!s) return NULL;
    memset(s, ' ', 2 * depth);
    memcpy(s + 2 * depth, label, n + 1);
    return s;
}

/* A PTX image is compiled by the driver as it loads: that share of the
 * module table's time is JIT. */
static void write_jit(gt_summary *s, const gt_sorted_row *rows, size_t n)
{
    uint64_t loads = 0, ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].row->key.f[1] != GT_IMAGE_PTX) continue;
        loads += rows[i].row->calls;
        ns += rows[i].row->time.total;
    }
    char time[GT_FORMAT_CAP];
    if (loads)
        fprintf(s->out, ", JIT from PTX %s in %" PRIu64 " %s", gt_format_ns(ns, time, sizeof time),
                loads, loads == 1 ? "load" : "loads");
}

/* What the compile table's calls were, each counted as it is: "4
 * programs, 4 compiles, 4 verifies, 2 links" (a verify is no compile; a
 * program verified and compiled is one program). */
static void write_compile_counts(gt_summary *s, const gt_sorted_row *rows, size_t n)
{
    enum { PROGRAMS, COMPILES, VERIFIES, LINKS, KINDS };
    static const char *const words[KINDS][2] = {
        {"program", "programs"}, {"compile", "compiles"}, {"verify", "verifies"}, {"link", "links"}};
    uint64_t count[KINDS] = {0};
    for (size_t i = 0; i < n; i++) {
        const gt_row *row = rows[i].row;
        const char *api = gt_strtab_get(s->r->names, row->key.f[0]);
        int kind = strstr(api, "Verify") ? VERIFIES : strstr(api, "Link") ? LINKS : COMPILES;
        count[kind] += row->calls;
        if (kind != LINKS) count[PROGRAMS] += row->firsts;
    }
    const char *sep = "";
    for (int k = 0; k < KINDS; k++) {
        if (!count[k]) continue;
        fprintf(s->out, "%s%" PRIu64 " %s", sep, count[k], words[k][count[k] != 1]);
        sep = ", ";
    }
}

static void write_title(gt_summary *s, enum gt_category c, const gt_sorted_row *rows, size_t n,
                        uint64_t total)
{
    const gt_table *t = &s->r->tables[c];
    char time[GT_FORMAT_CAP], bytes[GT_FORMAT_CAP];
    uint64_t calls = gt_table_calls(t), nbytes = 0;
    for (size_t i = 0; i < n; i++)
        nbytes += rows[i].row->bytes;
    const table_kind *k = &kinds[c];
    if (c == GT_CAT_COMPILE) {
        fprintf(s->out, "%s: ", gt_category_name(c));
        write_compile_counts(s, rows, n);
    } else {
        fprintf(s->out, "%s: %zu %s, %" PRIu64 " %s", gt_category_name(c), n,
                n == 1 ? k->row : k->rows, calls, calls == 1 ? k->call : k->calls);
    }
    if (k->bytes) fprintf(s->out, ", %s", gt_format_bytes(nbytes, bytes, sizeof bytes));
    const char *what = !k->gpu_time                                ? "host time"
                       : s->r->opt.gpu_timing == GT_GPU_TIMING_OFF ? "host time (GPU timing off)"
                                                                   : "GPU time";
    if (c == GT_CAT_SYNC) what = "host blocked";
    if (c == GT_CAT_COMPILE || c == GT_CAT_MODULE || c == GT_CAT_NVTX) what = "wall time";
    if (k->gpu_time && s->r->gpu_timing_off[0])
        fputs(", not timed (GPU timing off)", s->out);
    else
        fprintf(s->out, ", %s %s", what, gt_format_ns(total, time, sizeof time));
    if (c == GT_CAT_NVTX) fputs(" with a range open", s->out);
    uint64_t graph_calls = 0;
    for (size_t i = 0; c == GT_CAT_KERNEL && i < n; i++)
        graph_calls += rows[i].row->graph_calls;
    if (graph_calls)
        fprintf(s->out, "; %" PRIu64 " run%s as graph nodes, in their kernels' rows and inside "
                        "the graph launches' times",
                graph_calls, graph_calls == 1 ? "" : "s");
    if (c == GT_CAT_MODULE) write_jit(s, rows, n);
    if (c == GT_CAT_API) {
        uint64_t errors = 0;
        for (size_t i = 0; i < n; i++)
            for (uint32_t e = 0; e < rows[i].row->nerrors; e++)
                errors += rows[i].row->errors[e].count;
        fprintf(s->out, ", %" PRIu64 " failed", errors);
    }
    fputc('\n', s->out);
}

/* The rows not shown: how many, and their share of the time. order
 * lists the rows shown (NULL: the first `shown`). */
static void write_rest(gt_summary *s, enum gt_category c, const gt_sorted_row *rows,
                       const size_t *order, size_t shown, size_t n, uint64_t total)
{
    if (shown >= n) return;
    if (c == GT_CAT_NVTX) {
        /* Ranges overlap: their shares add up to nothing meaningful. */
        fprintf(s->out, "%s... %zu more (verbose shows every row)\n", GT_TEXT_INDENT, n - shown);
        return;
    }
    uint64_t rest = 0;
    for (size_t i = 0; i < n; i++)
        rest += rows[i].row->time.total;
    for (size_t i = 0; i < shown; i++)
        rest -= rows[order ? order[i] : i].row->time.total;
    char share[GT_FORMAT_CAP];
    fprintf(s->out, "%s... %zu more, %s of the time (verbose shows every row)\n", GT_TEXT_INDENT,
            n - shown, gt_summary_percent(rest, total, share, sizeof share));
}

/* A row the default table shows however little time it took: a failure
 * is never hidden behind "... N more". */
/* A compile row's label with its program's readable name: a program named
 * after its kernel (Numba's) without the kernel's parameters and tags. */
static char *compile_readable_label(const gt_report *r, const gt_row *row)
{
    const char *program = gt_strtab_get(r->names, row->key.f[1]);
    char *readable = program[0] ? gt_display_name(program) : NULL;
    const char *api = gt_strtab_get(r->names, row->key.f[0]);
    const char *shown = readable ? readable : program;
    size_t cap = strlen(api) + strlen(shown) + sizeof " (failed)" + 1;
    char *label = malloc(cap);
    if (label) snprintf(label, cap, "%s %s%s", api, shown, row->key.f[2] ? "" : " (failed)");
    free(readable);
    return label;
}

/* Verbose compile rows: the label, then the other functions the
 * compilation defined ("; also f, g"); NULL when it had none. */
static char *compile_functions_label(const gt_report *r, const gt_row *row, const char *label)
{
    if (!row->key.f[3]) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    fprintf(f, "%s; also ", label);
    for (const char *p = gt_strtab_get(r->names, row->key.f[3]); *p; p++)
        if (*p == '\n')
            fputs(", ", f);
        else
            fputc(*p, f);
    return fclose(f) == 0 ? text : (free(text), NULL);
}

static bool always_shown(enum gt_category c, const gt_row *row)
{
    return (c == GT_CAT_API && row->nerrors) || (c == GT_CAT_COMPILE && !row->key.f[2]);
}

/* Adds rows[order[i]] for i < shown to the table; -1 when out of memory. */
static int add_rows(gt_summary *s, enum gt_category c, gt_text_table *tt, const gt_sorted_row *rows,
                    const size_t *order, size_t shown, uint64_t total)
{
    const gt_table *t = &s->r->tables[c];
    bool tree = c == GT_CAT_NVTX && s->v >= GT_VERB_VERBOSE;
    /* Kernels, and programs named after them, by their readable names;
     * verbose gives the full ones (a Numba name without its escapes and
     * ABI hash). */
    bool kernel = c == GT_CAT_KERNEL, verbose = s->v >= GT_VERB_VERBOSE;
    bool readable_program = c == GT_CAT_COMPILE && !verbose;
    for (size_t i = 0; i < shown; i++) {
        const gt_row *row = rows[order[i]].row;
        char *label =
            readable_program ? compile_readable_label(s->r, row) : gt_row_label(s->r, c, row);
        if (label && kernel) {
            char *readable = verbose ? gt_verbose_name(label) : gt_display_name(label);
            free(label);
            label = readable;
        }
        char *shown_label = label && tree ? nvtx_tree_label(t, row, label)
                            : label && c == GT_CAT_COMPILE && s->v >= GT_VERB_VERBOSE
                                ? compile_functions_label(s->r, row, label)
                                : NULL;
        char *errors = c == GT_CAT_API && row->nerrors ? errors_text(s->r, row) : NULL;
        char *rates = c == GT_CAT_NVTX ? gt_summary_rates(s->r, row) : NULL;
        row_cells rc;
        fill_row(&rc, s->r, c, s->v >= GT_VERB_VERBOSE, row, total,
                 shown_label ? shown_label : label, errors, rates);
        if (label) gt_text_table_add(tt, rc.cell);
        free(label);
        free(shown_label);
        free(errors);
        free(rates);
        if (!label) return -1;
    }
    return 0;
}

void gt_summary_table(gt_summary *s, enum gt_category c)
{
    size_t n = 0;
    gt_sorted_row *rows = gt_report_sorted_rows(s->r, c, &n);
    if (n == 0) {
        fprintf(s->out, "%s: none recorded\n", gt_category_name(c));
        if (s->r->tables[c].nrows) s->rc = -1; /* rows exist: no memory to sort them */
        return;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += rows[i].row->time.total;
    /* Nested ranges overlap their parents: their sum means nothing. */
    if (c == GT_CAT_NVTX) total = s->r->nvtx.open_ns;
    write_title(s, c, rows, n, total);

    bool verbose = s->v >= GT_VERB_VERBOSE;
    size_t shown = verbose || n < GT_SUMMARY_TOP_ROWS ? n : GT_SUMMARY_TOP_ROWS;
    size_t *order = malloc(n * sizeof(*order));
    gt_text_column cols[MAX_COLS];
    gt_text_table tt;
    gt_text_table_init(&tt, cols, table_columns(s->r, c, verbose, cols));
    if (c == GT_CAT_KERNEL && !verbose) tt.shorten = gt_display_name_fit;
    int rc = -1;
    if (order) {
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        if (c == GT_CAT_NVTX && verbose) shown = tree_order(&s->r->tables[c], rows, n, order);
        /* After the top rows, those that must not be hidden, in time order
         * (order[shown] is never past i: nothing still to be read is
         * overwritten). */
        for (size_t i = shown; i < n && !verbose; i++)
            if (always_shown(c, rows[i].row)) order[shown++] = i;
        rc = add_rows(s, c, &tt, rows, order, shown, total);
    }
    if (gt_text_table_print(&tt, s->out, verbose ? 0 : s->width) != 0) rc = -1;
    write_rest(s, c, rows, order, shown, n, total);
    if (rc != 0) s->rc = -1;
    gt_text_table_free(&tt);
    free(order);
    free(rows);
}
