/* Merging the inputs' checksum lists (merge.h): each input's copies and
 * threads kept apart under a rank, so that `diff` compares two merged
 * runs process by process. An input that is itself merged keeps its
 * ranks, numbered on after the inputs before it. */
#include <stdio.h>

#include "aggregate.h"
#include "checksum_list.h"
#include "checksum_mode.h"
#include "merge.h"
#include "report.h"

/* Ranks an input's copies take: one, or as many as it merged. */
static uint32_t ranks_of(const gt_checksums *c)
{
    uint32_t top = 0;
    for (size_t i = 0; i < c->nthreads; i++)
        if (c->threads[i].rank > top) top = c->threads[i].rank;
    for (size_t i = 0; i < c->n; i++)
        if (c->entries[i].rank > top) top = c->entries[i].rank;
    return top + 1;
}

static bool add_input(gt_checksums *out, const gt_checksums *c, uint32_t base)
{
    out->hashed += c->hashed;
    out->hashed_bytes += c->hashed_bytes;
    out->unhashed += c->unhashed;
    for (int s = 0; s < GT_CK_STATUS_COUNT; s++)
        out->by_status[s] += c->by_status[s];
    out->cost_ns += c->cost_ns;
    out->unlisted += c->unlisted;
    for (size_t i = 0; i < c->n; i++) {
        gt_checksum_entry e = c->entries[i];
        e.rank += base;
        if (gt_checksums_list(out, &e) != 0) return false;
    }
    for (size_t i = 0; i < c->nthreads; i++) {
        gt_checksum_thread t = c->threads[i];
        t.rank += base;
        gt_checksums_set_thread(out, &t);
    }
    return !out->incomplete;
}

bool gt_merge_checksums(gt_report *out, gt_report *const *in, size_t n, char *err, size_t errcap)
{
    const gt_checksums *first = NULL;
    for (size_t i = 0; i < n && !first; i++)
        if (in[i]->checksums.on) first = &in[i]->checksums;
    if (!first) return true;
    for (size_t i = 0; i < n; i++) {
        const gt_checksums *c = &in[i]->checksums;
        if (!c->on || gt_checksum_mode_equal(c->mode, first->mode)) continue;
        char a[GT_CHECKSUM_MODE_MAX], b[GT_CHECKSUM_MODE_MAX];
        gt_checksum_mode_name(first->mode, a);
        gt_checksum_mode_name(c->mode, b);
        snprintf(err, errcap, "merge: the inputs hashed their copies in different modes (%s, %s)",
                 a, b);
        return false;
    }
    gt_checksums_set_mode(&out->checksums, first->mode);
    uint32_t base = 0;
    for (size_t i = 0; i < n; i++) {
        const gt_checksums *c = &in[i]->checksums;
        if (c->on && !add_input(&out->checksums, c, base)) {
            snprintf(err, errcap, "merge: out of memory");
            return false;
        }
        base += ranks_of(c);
    }
    return true;
}
