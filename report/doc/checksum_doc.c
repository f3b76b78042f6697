/* The checksum list in the JSON report and the summary (checksum_doc.h). */
#include "checksum_doc.h"

#include <inttypes.h>
#include <stdlib.h>

#include "aggregate.h"
#include "checksum_list.h"
#include "checksum_mode.h"
#include "format.h"
#include "json_writer.h"
#include "loaded.h"
#include "strtab.h"
#include "xxh3.h"

void gt_checksum_hex(uint64_t hash, char buf[GT_CHECKSUM_HEX_MAX])
{
    snprintf(buf, GT_CHECKSUM_HEX_MAX, "%016" PRIx64, hash);
}

static void write_copy(gt_json *w, const gt_report *r, const gt_checksum_entry *e, bool merged)
{
    char hex[GT_CHECKSUM_HEX_MAX];
    gt_json_object_begin(w, true);
    if (merged) gt_json_kv_uint(w, "rank", e->rank);
    gt_json_kv_uint(w, "thread", e->thread);
    gt_json_kv_uint(w, "index", e->index);
    gt_json_kv_uint(w, "bytes", e->bytes);
    gt_json_key(w, "hash");
    if (e->status == GT_CK_HASHED) {
        gt_checksum_hex(e->hash, hex);
        gt_json_string(w, hex);
    } else {
        gt_json_raw(w, "null");
    }
    gt_json_kv_string(w, "status", gt_checksum_status_name(e->status));
    /* A call site is kept as the JSON it was read as. */
    gt_json_key(w, "site");
    gt_json_raw(w, e->site ? gt_strtab_get(r->names, e->site) : "null");
    gt_json_object_end(w);
}

static void write_threads(gt_json *w, const gt_checksum_thread *threads, size_t n, bool merged)
{
    gt_json_key(w, "threads");
    gt_json_array_begin(w, false);
    for (size_t i = 0; i < n; i++) {
        const gt_checksum_thread *t = &threads[i];
        char hex[GT_CHECKSUM_HEX_MAX];
        gt_checksum_hex(t->digest, hex);
        gt_json_object_begin(w, true);
        if (merged) gt_json_kv_uint(w, "rank", t->rank);
        gt_json_kv_uint(w, "thread", t->thread);
        gt_json_kv_uint(w, "copies", t->copies);
        gt_json_kv_uint(w, "bytes", t->bytes);
        gt_json_kv_string(w, "digest", hex);
        gt_json_object_end(w);
    }
    gt_json_array_end(w);
}

int gt_checksums_write_json(gt_json *w, const gt_report *r)
{
    const gt_checksums *c = &r->checksums;
    if (!c->on) return 0;
    bool merged = r->loaded && r->loaded->ninputs;
    char mode[GT_CHECKSUM_MODE_MAX];
    gt_checksum_mode_name(c->mode, mode);
    gt_json_key(w, "checksums");
    gt_json_object_begin(w, false);
    gt_json_kv_string(w, "mode", mode);
    gt_json_kv_string(w, "hash", GT_XXH3_NAME);
    gt_json_kv_uint(w, "hashed", c->hashed);
    gt_json_kv_uint(w, "hashed_bytes", c->hashed_bytes);
    gt_json_kv_uint(w, "unhashed", c->unhashed);
    gt_json_key(w, "unhashed_by");
    gt_json_object_begin(w, true);
    for (int s = GT_CK_HASHED + 1; s < GT_CK_STATUS_COUNT; s++)
        gt_json_kv_uint(w, gt_checksum_status_name(s), c->by_status[s]);
    gt_json_object_end(w);
    gt_json_kv_uint(w, "cost_ns", c->cost_ns);
    gt_json_kv_uint(w, "listed_max", GT_CHECKSUMS_LISTED_MAX);
    gt_json_kv_uint(w, "unlisted", c->unlisted);
    gt_checksum_entry *sorted = gt_checksums_sorted(c);
    gt_json_key(w, "copies");
    gt_json_array_begin(w, false);
    for (size_t i = 0; sorted && i < c->n; i++)
        write_copy(w, r, &sorted[i], merged);
    gt_json_array_end(w);
    free(sorted);
    gt_checksum_thread *threads = gt_checksums_threads_sorted(c);
    write_threads(w, threads, threads ? c->nthreads : 0, merged);
    free(threads);
    gt_json_object_end(w);
    return (c->n && !sorted) || (c->nthreads && !threads) ? -1 : 0;
}

void gt_checksums_write_summary(const gt_report *r, FILE *out)
{
    const gt_checksums *c = &r->checksums;
    if (!c->on) return;
    char mode[GT_CHECKSUM_MODE_MAX], bytes[GT_FORMAT_CAP], cost[GT_FORMAT_CAP];
    gt_checksum_mode_name(c->mode, mode);
    fprintf(out, "checksums (%s, %s): %" PRIu64 " %s hashed, %s, in %s on the program's threads",
            mode, GT_XXH3_NAME, c->hashed, c->hashed == 1 ? "copy" : "copies",
            gt_format_bytes(c->hashed_bytes, bytes, sizeof bytes),
            gt_format_ns(c->cost_ns, cost, sizeof cost));
    if (c->unhashed) {
        fprintf(out, "; %" PRIu64 " unhashed:", c->unhashed);
        const char *sep = " ";
        for (int s = GT_CK_HASHED + 1; s < GT_CK_STATUS_COUNT; s++) {
            if (!c->by_status[s]) continue;
            fprintf(out, "%s%" PRIu64 " %s", sep, c->by_status[s], gt_checksum_status_reason(s));
            sep = ", ";
        }
    }
    if (c->unlisted)
        fprintf(out, "; %" PRIu64 " past the first %u not listed", c->unlisted,
                GT_CHECKSUMS_LISTED_MAX);
    fputc('\n', out);
}
