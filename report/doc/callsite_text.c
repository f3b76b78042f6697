/* The summary's `call sites` section (SPEC §12): for each of the kernels,
 * copies and memsets that took the most GPU time, the sites that launched
 * them with their share of its calls and GPU time; then the sites that
 * allocated the most memory, with what they held at their peak and still
 * held at the end ("cp.zeros at sim.py:42: 2.00 GiB, still held"). At
 * default verbosity the top GT_SITE_TOP_NAMES names of each kind and their
 * top GT_SITE_TOP_SITES sites, and the top GT_SUMMARY_TOP_ROWS allocating
 * sites; every one at verbose. Figures estimated from sampled calls start
 * with ~; calls of a name with no site (made where no site could be
 * taken) are one row "(no site)". */
#include "callsite_text.h"

#include "aggregate.h"
#include "callsite_table.h"
#include "display_name.h"
#include "event.h"
#include "format.h"
#include "summary.h"
#include "table.h"
#include "text_table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define GT_SITE_TOP_NAMES 5u
#define GT_SITE_TOP_SITES 5u

static const char *const calls_word[] = {
    [GT_EV_KERNEL] = "launches", [GT_EV_MEMCPY] = "copies", [GT_EV_MEMSET] = "memsets"};
static const char *const call_word[] = {
    [GT_EV_KERNEL] = "launch", [GT_EV_MEMCPY] = "copy", [GT_EV_MEMSET] = "memset"};

/* The table row a site row's name is (NULL when the table has none). */
static const gt_row *table_row(const gt_report *r, const gt_site_row *row)
{
    gt_row_key key = {{row->a, row->b, 0, 0}};
    enum gt_category c = GT_CAT_KERNEL;
    if (row->kind == GT_EV_MEMCPY) {
        key = (gt_row_key){{row->a, row->b & 0xffu, row->b >> 8, 0}};
        c = GT_CAT_MEMCPY;
    } else if (row->kind == GT_EV_MEMSET) {
        key = (gt_row_key){{row->a, 0, 0, 0}};
        c = GT_CAT_MEMSET;
    }
    return gt_table_find(&r->tables[c], &key);
}

static bool same_name(const gt_site_row *x, const gt_site_row *y)
{
    return x->kind == y->kind && x->a == y->a && x->b == y->b;
}

static void cell_number(char *buf, bool estimate, uint64_t v)
{
    snprintf(buf, GT_FORMAT_CAP, "%s%" PRIu64, estimate ? "~" : "", v);
}

static void cell_with(char *buf, bool estimate, const char *text)
{
    snprintf(buf, GT_FORMAT_CAP + 1, "%s%s", estimate ? "~" : "", text);
}

/* One name's heading and its sites' table; returns the next row. */
static size_t write_name(gt_summary *s, const gt_site_row **rows, size_t at, size_t n)
{
    const gt_report *r = s->r;
    const gt_site_row *first = rows[at];
    const gt_row *t = table_row(r, first);
    uint64_t calls = t ? t->calls : 0, gpu = t ? t->time.total : 0;
    char name[GT_SITE_LABEL_MAX], total[GT_FORMAT_CAP];
    gt_site_row_name(r->names, first, name, sizeof name);
    char *shown = first->kind == GT_EV_KERNEL && !first->b && s->v < GT_VERB_VERBOSE
                      ? gt_display_name(name)
                      : NULL;
    char *safe = gt_text_safe(shown ? shown : name);
    fprintf(s->out, "%s%s %s: %" PRIu64 " %s, GPU time %s\n", GT_TEXT_INDENT,
            first->kind == GT_EV_MEMCPY ? "memcpy" : gt_site_kind_name(first->kind),
            safe ? safe : "", calls, (calls == 1 ? call_word : calls_word)[first->kind],
            gt_format_ns(gpu, total, sizeof total));
    free(safe);
    free(shown);
    static const gt_text_column cols[] = {
        {"Calls", true, false, 0}, {"Calls%", true, false, 0}, {"GPU time", true, false, 0},
        {"GPU%", true, false, 0},  {"Site", false, true, 0},
    };
    gt_text_table tt;
    gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    size_t end = at, shown_sites = 0;
    uint64_t sited = 0;
    while (end < n && same_name(rows[end], first))
        sited += rows[end++]->calls;
    for (size_t i = at; i < end; i++) {
        const gt_site_row *row = rows[i];
        if (s->v < GT_VERB_VERBOSE && shown_sites == GT_SITE_TOP_SITES) break;
        bool est = row->samples != 0;
        char c[GT_FORMAT_CAP], cp[GT_FORMAT_CAP + 1], g[GT_FORMAT_CAP + 1], gp[GT_FORMAT_CAP + 1];
        char tmp[GT_FORMAT_CAP], site[GT_SITE_LABEL_MAX];
        cell_number(c, est, row->calls);
        cell_with(cp, est, gt_summary_percent(row->calls, calls, tmp, sizeof tmp));
        cell_with(g, est, gt_format_ns(row->gpu_ns, tmp, sizeof tmp));
        cell_with(gp, est, gt_summary_percent(row->gpu_ns, gpu, tmp, sizeof tmp));
        gt_site_short(r->names, &r->callsites.sites[row->site], site, sizeof site);
        const char *cells[] = {c, cp, g, gp, site};
        gt_text_table_add(&tt, cells);
        shown_sites++;
    }
    if (calls > sited) {
        char c[GT_FORMAT_CAP], cp[GT_FORMAT_CAP];
        cell_number(c, false, calls - sited);
        gt_summary_percent(calls - sited, calls, cp, sizeof cp);
        const char *cells[] = {c, cp, "", "", "(no site)"};
        gt_text_table_add(&tt, cells);
    }
    if (gt_text_table_print(&tt, s->out, s->v >= GT_VERB_VERBOSE ? 0 : GT_TEXT_WIDTH) != 0)
        s->rc = -1;
    gt_text_table_free(&tt);
    if (end - at > shown_sites)
        fprintf(s->out, "%s  ... %zu more sites (-v verbose lists them)\n", GT_TEXT_INDENT,
                end - at - shown_sites);
    return end;
}

static void write_memory(gt_summary *s, const gt_site_row **rows, size_t at, size_t n)
{
    const gt_report *r = s->r;
    fprintf(s->out, "%smemory by site:\n", GT_TEXT_INDENT);
    static const gt_text_column cols[] = {
        {"Allocated", true, false, 0}, {"Allocs", true, false, 0}, {"Peak", true, false, 0},
        {"At end", true, false, 0},    {"Kind", false, false, 0},  {"Site", false, true, 0},
    };
    gt_text_table tt;
    gt_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    size_t shown = 0;
    for (size_t i = at; i < n; i++) {
        if (s->v < GT_VERB_VERBOSE && shown == GT_SUMMARY_TOP_ROWS) break;
        const gt_site_row *row = rows[i];
        char bytes[GT_FORMAT_CAP], allocs[GT_FORMAT_CAP], peak[GT_FORMAT_CAP];
        char held[GT_FORMAT_CAP + 16], hb[GT_FORMAT_CAP], site[GT_SITE_LABEL_MAX];
        snprintf(allocs, sizeof allocs, "%" PRIu64, row->calls);
        if (row->held_bytes)
            snprintf(held, sizeof held, "%s held", gt_format_bytes(row->held_bytes, hb, sizeof hb));
        else
            snprintf(held, sizeof held, "-");
        gt_site_short(r->names, &r->callsites.sites[row->site], site, sizeof site);
        const char *cells[] = {gt_format_bytes(row->bytes, bytes, sizeof bytes),
                               allocs,
                               gt_format_bytes(row->peak_bytes, peak, sizeof peak),
                               held,
                               gt_mem_kind_name(row->a),
                               site};
        gt_text_table_add(&tt, cells);
        shown++;
    }
    if (gt_text_table_print(&tt, s->out, s->v >= GT_VERB_VERBOSE ? 0 : GT_TEXT_WIDTH) != 0)
        s->rc = -1;
    gt_text_table_free(&tt);
    if (n - at > shown)
        fprintf(s->out, "%s  ... %zu more sites (-v verbose lists them)\n", GT_TEXT_INDENT,
                n - at - shown);
}

void gt_summary_leak_site(gt_summary *s, uint32_t label)
{
    const gt_site_table *cs = &s->r->callsites;
    int32_t site = label ? gt_callsites_site_of(cs, label) : -1;
    if (site < 0) return;
    char text[GT_SITE_LABEL_MAX];
    gt_site_short(s->r->names, &cs->sites[site], text, sizeof text);
    char *safe = gt_text_safe(text);
    if (safe) fprintf(s->out, " from %s", safe);
    free(safe);
}

void gt_summary_callsites(gt_summary *s)
{
    const gt_site_table *cs = &s->r->callsites;
    size_t n = 0;
    const gt_site_row **rows = gt_callsites_sorted(cs, s->r->names, &n);
    if (!rows) {
        if (cs->nsites) s->rc = -1;
        return;
    }
    bool estimates = false;
    for (size_t i = 0; i < n; i++)
        estimates |= rows[i]->samples != 0;
    fprintf(s->out, "call sites: %" PRIu32 " sites%s\n", cs->nsites,
            estimates ? " (~: estimated from a sample of the calls)" : "");
    size_t at = 0;
    unsigned names[GT_EV_KIND_COUNT] = {0};
    while (at < n && rows[at]->kind != GT_EV_ALLOC) {
        uint8_t kind = rows[at]->kind;
        if (s->v < GT_VERB_VERBOSE && names[kind] == GT_SITE_TOP_NAMES) {
            while (at < n && rows[at]->kind == kind)
                at++;
            continue;
        }
        names[kind]++;
        at = write_name(s, rows, at, n);
    }
    if (at < n) write_memory(s, rows, at, n);
    free(rows);
}
