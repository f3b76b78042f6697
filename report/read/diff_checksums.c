/* Comparing two runs' checksums (diff.h): did the copies bring back the
 * same data?
 *
 * Copies are matched by thread and order (rank first, in merged reports).
 * Threads are numbered in the order of their first copy, which threads
 * that start together may race for: a thread whose copies are all the
 * same as a thread of the other run (copies, bytes and digest) is paired
 * with it whatever their numbers, the others by number, then in the order
 * of their numbers. When every listed copy of both threads names its call
 * site, copies are matched by site and their order there instead, so that
 * copies made elsewhere in between do not shift the comparison. A pair whose copy counts or sizes
 * differ is not comparable; a copy unhashed in either run is passed over. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aggregate.h"
#include "checksum_doc.h"
#include "checksum_list.h"
#include "checksum_mode.h"
#include "diff.h"
#include "format.h"
#include "json_writer.h"
#include "strtab.h"
#include "text_table.h"
#include "utf8.h"

static const char *const verdict_words[] = {"none", "one-sided", "same", "diverged",
                                            "not comparable"};

const char *gt_diff_checksum_verdict_name(enum gt_diff_ck_verdict v)
{
    return (unsigned)v <= GT_DIFF_CK_INCOMPARABLE ? verdict_words[v] : "unknown";
}

/* One run's side: its copies sorted by rank, thread and index, and its
 * threads sorted likewise. */
typedef struct side {
    const gt_checksums *c;
    gt_checksum_entry *copies;
    gt_checksum_thread *threads;
    bool *paired; /* by thread */
} side;

typedef struct walk {
    gt_diff_checksums *out;
    bool diverged, incomparable;
} walk;

/* The first thing found that makes the runs incomparable, in words. */
static void not_comparable(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void not_comparable(walk *w, const char *fmt, ...)
{
    if (w->incomparable) return;
    w->incomparable = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->out->detail, sizeof w->out->detail, fmt, ap);
    va_end(ap);
}

/* A divergence at base entry a / new entry b; the earliest is kept. */
static void diverged(walk *w, const gt_checksum_entry *a, const gt_checksum_entry *b,
                     uint32_t next_thread, bool listed)
{
    gt_diff_checksums *o = w->out;
    if (w->diverged && (o->rank < a->rank ||
                        (o->rank == a->rank && (o->thread < a->thread ||
                                                (o->thread == a->thread && o->index <= a->index)))))
        return;
    w->diverged = true;
    o->rank = a->rank;
    o->thread = a->thread;
    o->next_thread = next_thread;
    o->index = a->index;
    o->bytes = a->bytes;
    o->base_hash = a->hash;
    o->next_hash = b ? b->hash : 0;
    o->site = a->site;
    o->first_listed = listed;
}

/* The listed copies of (rank, thread) in s: [*from, *to). */
static void range_of(const side *s, uint32_t rank, uint32_t thread, size_t *from, size_t *to)
{
    size_t lo = 0, hi = s->c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const gt_checksum_entry *e = &s->copies[mid];
        if (e->rank < rank || (e->rank == rank && e->thread < thread))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < s->c->n && s->copies[end].rank == rank && s->copies[end].thread == thread)
        end++;
    *from = lo;
    *to = end;
}

static bool all_sited(const gt_checksum_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!e[i].site) return false;
    return n > 0;
}

static int by_site(const void *x, const void *y)
{
    const gt_checksum_entry *a = x, *b = y;
    if (a->site != b->site) return a->site < b->site ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Two copies matched: sizes must agree, hashes are compared when both
 * runs hashed them. */
static void compare_copy(walk *w, const gt_checksum_entry *a, const gt_checksum_entry *b,
                         uint32_t next_thread)
{
    if (a->bytes != b->bytes) {
        not_comparable(w,
                       "thread %" PRIu32 " copy %" PRIu64 " is %" PRIu64 " bytes in BASE, %" PRIu64
                       " in NEW",
                       a->thread, a->index, a->bytes, b->bytes);
        return;
    }
    if (a->status != GT_CK_HASHED || b->status != GT_CK_HASHED) {
        w->out->uncompared++;
        return;
    }
    w->out->compared++;
    if (a->hash != b->hash) diverged(w, a, b, next_thread, true);
}

/* The listed copies of a pair of threads whose digests differ, matched by
 * index, or by site and order there when every copy has a site. Returns
 * whether they tell why the digests differ (a divergence, sizes or sites
 * that differ, a copy unhashed in one run). */
static bool compare_listed(walk *w, gt_checksum_entry *a, size_t na, gt_checksum_entry *b,
                           size_t nb, uint32_t next_thread)
{
    bool sites = all_sited(a, na) && all_sited(b, nb);
    if (sites) {
        qsort(a, na, sizeof(*a), by_site);
        qsort(b, nb, sizeof(*b), by_site);
    }
    uint64_t uncompared = w->out->uncompared;
    bool was = w->diverged, was_inc = w->incomparable;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (sites && a[i].site != b[j].site) {
            not_comparable(w,
                           "thread %" PRIu32 ": the copies made at one call site differ in number",
                           a[i].thread);
            return true;
        }
        if (!sites && a[i].index != b[j].index) {
            /* Listed in one run only (past the other's bound): passed over. */
            if (a[i].index < b[j].index)
                i++;
            else
                j++;
            continue;
        }
        compare_copy(w, &a[i++], &b[j++], next_thread);
    }
    if (sites && (i < na || j < nb))
        not_comparable(w, "thread %" PRIu32 ": the copies made at one call site differ in number",
                       na ? a[0].thread : b[0].thread);
    return w->diverged != was || w->incomparable != was_inc || w->out->uncompared != uncompared;
}

static void compare_pair(walk *w, side *sa, const gt_checksum_thread *ta, side *sb,
                         const gt_checksum_thread *tb)
{
    if (ta->copies != tb->copies) {
        not_comparable(w,
                       "thread %" PRIu32 " made %" PRIu64 " device-to-host copies in BASE, %" PRIu64
                       " in NEW",
                       ta->thread, ta->copies, tb->copies);
        return;
    }
    size_t fa, la, fb, lb;
    range_of(sa, ta->rank, ta->thread, &fa, &la);
    range_of(sb, tb->rank, tb->thread, &fb, &lb);
    if (ta->digest == tb->digest && ta->bytes == tb->bytes) {
        /* The same copies: every one compared, bar those unhashed in both. */
        uint64_t unhashed = 0;
        for (size_t i = fa; i < la; i++)
            unhashed += sa->copies[i].status != GT_CK_HASHED;
        w->out->compared += ta->copies - unhashed;
        w->out->uncompared += unhashed;
        return;
    }
    bool seen = compare_listed(w, &sa->copies[fa], la - fa, &sb->copies[fb], lb - fb, tb->thread);
    /* The digests differ, yet no listed copy told why: the difference is
     * among the copies past the list. */
    if (!seen && ta->copies > la - fa) {
        gt_checksum_entry past = {.rank = ta->rank, .thread = ta->thread, .index = la - fa};
        diverged(w, &past, NULL, tb->thread, false);
    }
}

static bool same_copies(const gt_checksum_thread *a, const gt_checksum_thread *b)
{
    return a->rank == b->rank && a->copies == b->copies && a->bytes == b->bytes &&
           a->digest == b->digest;
}

/* Pairs the threads of the two sides and compares each pair. */
static void pair_threads(walk *w, side *a, side *b)
{
    size_t na = a->c->nthreads, nb = b->c->nthreads;
    /* Same number and same copies; then same copies under another number. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < na; i++) {
            if (a->paired[i]) continue;
            for (size_t j = 0; j < nb; j++) {
                if (b->paired[j] || !same_copies(&a->threads[i], &b->threads[j])) continue;
                if (pass == 0 && a->threads[i].thread != b->threads[j].thread) continue;
                if (pass == 1) w->out->renumbered = true;
                a->paired[i] = b->paired[j] = true;
                compare_pair(w, a, &a->threads[i], b, &b->threads[j]);
                break;
            }
        }
    }
    /* The rest by number, then in the order of their numbers. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < na; i++) {
            if (a->paired[i]) continue;
            size_t j = 0;
            while (j < nb && (b->paired[j] || b->threads[j].rank != a->threads[i].rank ||
                              (pass == 0 && b->threads[j].thread != a->threads[i].thread)))
                j++;
            if (j == nb) continue;
            if (pass == 1) w->out->renumbered = true;
            a->paired[i] = b->paired[j] = true;
            compare_pair(w, a, &a->threads[i], b, &b->threads[j]);
        }
    }
    for (size_t i = 0; i < na; i++)
        if (!a->paired[i])
            not_comparable(w, "thread %" PRIu32 " made device-to-host copies in BASE only",
                           a->threads[i].thread);
    for (size_t j = 0; j < nb; j++)
        if (!b->paired[j])
            not_comparable(w, "thread %" PRIu32 " made device-to-host copies in NEW only",
                           b->threads[j].thread);
}

static bool side_init(side *s, const gt_checksums *c)
{
    s->c = c;
    s->copies = gt_checksums_sorted(c);
    s->threads = gt_checksums_threads_sorted(c);
    s->paired = calloc(c->nthreads ? c->nthreads : 1, sizeof(*s->paired));
    return (s->copies || !c->n) && (s->threads || !c->nthreads) && s->paired;
}

static void side_free(side *s)
{
    free(s->copies);
    free(s->threads);
    free(s->paired);
}

int gt_diff_checksums_compare(const gt_report *base, const gt_report *next, gt_diff_checksums *out)
{
    memset(out, 0, sizeof *out);
    const gt_checksums *ca = &base->checksums, *cb = &next->checksums;
    if (!ca->on && !cb->on) return 0;
    char ma[GT_CHECKSUM_MODE_MAX], mb[GT_CHECKSUM_MODE_MAX];
    gt_checksum_mode_name(ca->mode, ma);
    gt_checksum_mode_name(cb->mode, mb);
    snprintf(out->mode, sizeof out->mode, "%s", ca->on ? ma : mb);
    if (!ca->on || !cb->on) {
        out->verdict = GT_DIFF_CK_ONE_SIDED;
        snprintf(out->detail, sizeof out->detail, "only %s has checksums (GPUTRACE_CHECKSUM)",
                 ca->on ? "BASE" : "NEW");
        return 0;
    }
    walk w = {.out = out};
    if (!gt_checksum_mode_equal(ca->mode, cb->mode)) {
        not_comparable(&w, "the runs hashed in different modes, %s and %s", ma, mb);
        out->verdict = GT_DIFF_CK_INCOMPARABLE;
        return 0;
    }
    side a = {0}, b = {0};
    int rc = 0;
    if (side_init(&a, ca) && side_init(&b, cb))
        pair_threads(&w, &a, &b);
    else
        rc = -1;
    side_free(&a);
    side_free(&b);
    out->verdict = w.diverged       ? GT_DIFF_CK_DIVERGED
                   : w.incomparable ? GT_DIFF_CK_INCOMPARABLE
                                    : GT_DIFF_CK_SAME;
    return rc;
}

/* ------------------------------------------------------------ writing */

/* A site kept as JSON, in words: "function (file:line)". */
static void site_words(const gt_strtab *names, uint32_t site, char *buf, size_t cap)
{
    snprintf(buf, cap, "-");
    if (!site) return;
    cJSON *s = cJSON_Parse(gt_strtab_get(names, site));
    const cJSON *fn = s ? cJSON_GetObjectItemCaseSensitive(s, "function") : NULL;
    const cJSON *file = s ? cJSON_GetObjectItemCaseSensitive(s, "file") : NULL;
    const cJSON *line = s ? cJSON_GetObjectItemCaseSensitive(s, "line") : NULL;
    if (s) {
        char text[512];
        int n =
            snprintf(text, sizeof text, "%s (%s:%d)", cJSON_IsString(fn) ? fn->valuestring : "?",
                     cJSON_IsString(file) ? file->valuestring : "?",
                     cJSON_IsNumber(line) ? line->valueint : 0);
        if (n > 0) gt_text_safe_copy(buf, cap, text, strlen(text));
    }
    cJSON_Delete(s);
}

void gt_diff_checksums_write_text(const gt_diff_checksums *d, const gt_strtab *names, FILE *out)
{
    char hex_a[GT_CHECKSUM_HEX_MAX], hex_b[GT_CHECKSUM_HEX_MAX], bytes[GT_FORMAT_CAP], where[256];
    switch (d->verdict) {
    case GT_DIFF_CK_NONE:
        return;
    case GT_DIFF_CK_ONE_SIDED:
        fprintf(out, "checksums: not compared: %s\n", d->detail);
        return;
    case GT_DIFF_CK_SAME:
        fprintf(out, "checksums (%s): same: %" PRIu64 " copies compared", d->mode, d->compared);
        if (d->uncompared)
            fprintf(out, ", %" PRIu64 " unhashed in a run passed over", d->uncompared);
        if (d->renumbered) fputs(" (threads paired by their copies: numbered otherwise)", out);
        fputc('\n', out);
        return;
    case GT_DIFF_CK_INCOMPARABLE:
        fprintf(out, "checksums (%s): NOT COMPARABLE: %s\n", d->mode, d->detail);
        return;
    case GT_DIFF_CK_DIVERGED:
        break;
    }
    if (!d->first_listed) {
        fprintf(out,
                "checksums (%s): DIVERGED: thread %" PRIu32
                " brought back other data in a copy past "
                "the listed ones (from copy %" PRIu64 " on)\n",
                d->mode, d->thread, d->index);
        return;
    }
    gt_checksum_hex(d->base_hash, hex_a);
    gt_checksum_hex(d->next_hash, hex_b);
    site_words(names, d->site, where, sizeof where);
    fprintf(
        out,
        "checksums (%s): DIVERGED: the first copy that brought back other data is thread %" PRIu32
        " copy %" PRIu64 " (%s, site %s): %s -> %s\n",
        d->mode, d->thread, d->index, gt_format_bytes(d->bytes, bytes, sizeof bytes), where, hex_a,
        hex_b);
    if (d->rank || d->next_thread != d->thread)
        fprintf(out, "%srank %" PRIu32 "; thread %" PRIu32 " in NEW\n", GT_TEXT_INDENT, d->rank,
                d->next_thread);
    if (d->detail[0]) fprintf(out, "%salso: %s\n", GT_TEXT_INDENT, d->detail);
}

/* A hash, or null when it is not known. */
static void json_hash(gt_json *w, const char *key, uint64_t hash, bool known)
{
    char hex[GT_CHECKSUM_HEX_MAX];
    gt_json_key(w, key);
    gt_checksum_hex(hash, hex);
    if (known)
        gt_json_string(w, hex);
    else
        gt_json_raw(w, "null");
}

void gt_diff_checksums_write_json(const gt_diff_checksums *d, const gt_strtab *names, gt_json *w)
{
    if (d->verdict == GT_DIFF_CK_NONE) return;
    gt_json_key(w, "checksums");
    gt_json_object_begin(w, false);
    gt_json_kv_string(w, "verdict", gt_diff_checksum_verdict_name(d->verdict));
    gt_json_kv_string(w, "mode", d->mode);
    gt_json_kv_string(w, "detail", d->detail);
    gt_json_kv_uint(w, "compared", d->compared);
    gt_json_kv_uint(w, "uncompared", d->uncompared);
    gt_json_kv_bool(w, "renumbered", d->renumbered);
    gt_json_key(w, "first");
    if (d->verdict != GT_DIFF_CK_DIVERGED) {
        gt_json_raw(w, "null");
    } else {
        gt_json_object_begin(w, true);
        gt_json_kv_uint(w, "rank", d->rank);
        gt_json_kv_uint(w, "thread", d->thread);
        gt_json_kv_uint(w, "new_thread", d->next_thread);
        gt_json_kv_uint(w, "index", d->index);
        gt_json_kv_bool(w, "listed", d->first_listed);
        gt_json_kv_uint(w, "bytes", d->bytes);
        json_hash(w, "base_hash", d->base_hash, d->first_listed);
        json_hash(w, "new_hash", d->next_hash, d->first_listed);
        gt_json_key(w, "site");
        gt_json_raw(w, d->site ? gt_strtab_get(names, d->site) : "null");
        gt_json_object_end(w);
    }
    gt_json_object_end(w);
}
