/* The reader's part for the checksum list (checksum_list.h, JSON
 * `checksums`): optional, as reports made without GPUTRACE_CHECKSUM have
 * none. Hashes are 16 hex digits; a call site is any JSON object, kept
 * as its compact text. */
#include <stdio.h>
#include <string.h>

#include "aggregate.h"
#include "checksum_list.h"
#include "checksum_mode.h"
#include "load_internal.h"
#include "strtab.h"

/* 16 hex digits into *out. */
static bool parse_hex(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16 || n == 16) return false;
        v = v << 4 | d;
    }
    *out = v;
    return n == 16;
}

static bool load_hex(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **h,
                     uint64_t *out)
{
    const char *s = gt_load_string(ld, obj, key, h, NULL);
    if (!s) return false;
    if (!parse_hex(s, out)) return gt_load_fail(ld, key, "expected 16 hex digits");
    return true;
}

static bool load_rank(gt_loader *ld, const cJSON *obj, const cJSON **h, uint32_t *rank)
{
    int64_t v;
    if (!gt_load_i64_or(ld, obj, "rank", h, 0, UINT32_MAX, 0, &v)) return false;
    *rank = (uint32_t)v;
    return true;
}

static bool load_u32(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **h,
                     uint32_t *out)
{
    int64_t v;
    if (!gt_load_i64_or(ld, obj, key, h, 0, UINT32_MAX, -1, &v)) return false;
    if (v < 0) return gt_load_fail(ld, key, "missing");
    *out = (uint32_t)v;
    return true;
}

/* A copy's site: null, or an object kept as its compact JSON. */
static bool load_site(gt_loader *ld, const cJSON *obj, const cJSON **h, uint32_t *id)
{
    const cJSON *v = gt_load_member(obj, "site", h);
    *id = 0;
    if (!v || cJSON_IsNull(v)) return true;
    if (!cJSON_IsObject(v)) return gt_load_fail(ld, "site", "expected an object or null");
    char *text = cJSON_PrintUnformatted(v);
    if (!text) return gt_load_fail(ld, "site", "out of memory");
    *id = gt_strtab_intern(ld->names, text, strlen(text));
    cJSON_free(text);
    return *id ? true : gt_load_fail(ld, "site", "out of memory");
}

static bool load_copy(gt_loader *ld, const cJSON *o, gt_checksums *c)
{
    if (!cJSON_IsObject(o)) return gt_load_fail(ld, NULL, "expected an object");
    gt_checksum_entry e = {0};
    const cJSON *h = NULL;
    if (!load_rank(ld, o, &h, &e.rank) || !load_u32(ld, o, "thread", &h, &e.thread) ||
        !gt_load_u64(ld, o, "index", &h, &e.index) || !gt_load_u64(ld, o, "bytes", &h, &e.bytes))
        return false;
    const cJSON *hash_h = h;
    const char *status = gt_load_string(ld, o, "status", &h, NULL);
    if (!status) return false;
    int s = gt_checksum_status_parse(status);
    if (s < 0) return gt_load_fail(ld, "status", "not a checksum status");
    e.status = (uint8_t)s;
    if (e.status == GT_CK_HASHED && !load_hex(ld, o, "hash", &hash_h, &e.hash)) return false;
    if (!load_site(ld, o, &h, &e.site)) return false;
    if (gt_checksums_list(c, &e) != 0) return gt_load_fail(ld, NULL, "out of memory");
    return true;
}

static bool load_thread(gt_loader *ld, const cJSON *o, gt_checksums *c)
{
    if (!cJSON_IsObject(o)) return gt_load_fail(ld, NULL, "expected an object");
    gt_checksum_thread t = {0};
    const cJSON *h = NULL;
    if (!load_rank(ld, o, &h, &t.rank) || !load_u32(ld, o, "thread", &h, &t.thread) ||
        !gt_load_u64(ld, o, "copies", &h, &t.copies) ||
        !gt_load_u64(ld, o, "bytes", &h, &t.bytes) || !load_hex(ld, o, "digest", &h, &t.digest))
        return false;
    gt_checksums_set_thread(c, &t);
    return c->incomplete ? gt_load_fail(ld, NULL, "out of memory") : true;
}

/* Each element of array `key` of obj through `one`. */
static bool load_each(gt_loader *ld, const cJSON *obj, const char *key, const char *table,
                      bool (*one)(gt_loader *, const cJSON *, gt_checksums *), gt_checksums *c)
{
    const cJSON *a = gt_load_array(ld, obj, key, NULL);
    if (!a) return false;
    ld->table = table;
    long i = 0;
    for (const cJSON *o = a->child; o; o = o->next, i++) {
        ld->index = i;
        if (!one(ld, o, c)) return false;
    }
    ld->index = -1;
    ld->table = "checksums";
    return true;
}

bool gt_load_checksums(gt_loader *ld, const cJSON *doc)
{
    const cJSON *o = gt_load_object(ld, doc, "checksums", NULL, true);
    if (!o) return !ld->failed;
    ld->table = "checksums";
    gt_checksums *c = &ld->r->checksums;
    gt_checksum_mode mode;
    const cJSON *h = NULL;
    const char *word = gt_load_string(ld, o, "mode", &h, NULL);
    if (!word) return false;
    if (gt_checksum_mode_parse(word, strlen(word), &mode) != 0 || mode.kind == GT_CHECKSUM_OFF)
        return gt_load_fail(ld, "mode", "not a checksum mode");
    gt_checksums_set_mode(c, mode);
    if (!gt_load_u64(ld, o, "hashed", &h, &c->hashed) ||
        !gt_load_u64(ld, o, "hashed_bytes", &h, &c->hashed_bytes) ||
        !gt_load_u64(ld, o, "unhashed", &h, &c->unhashed))
        return false;
    const cJSON *by = gt_load_object(ld, o, "unhashed_by", &h, true);
    if (ld->failed) return false;
    ld->object = "unhashed_by";
    for (int s = GT_CK_HASHED + 1; by && s < GT_CK_STATUS_COUNT; s++)
        if (!gt_load_u64_or(ld, by, gt_checksum_status_name(s), NULL, 0, &c->by_status[s]))
            return false;
    ld->object = NULL;
    c->by_status[GT_CK_HASHED] = c->hashed;
    if (!gt_load_u64_or(ld, o, "cost_ns", &h, 0, &c->cost_ns) ||
        !gt_load_u64_or(ld, o, "unlisted", &h, 0, &c->unlisted))
        return false;
    return load_each(ld, o, "copies", "checksums.copies", load_copy, c) &&
           load_each(ld, o, "threads", "checksums.threads", load_thread, c);
}
