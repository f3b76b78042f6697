/* The reader's typed access to members (load_internal.h): each says what
 * was wrong and where, "<file>: kernels[3].gpu_ns.total: <what>". */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "load_internal.h"
#include "strtab.h"

static void where(const gt_loader *ld, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    if (ld->table) {
        int k = ld->index >= 0 ? snprintf(buf, cap, "%s[%ld].", ld->table, ld->index)
                               : snprintf(buf, cap, "%s.", ld->table);
        n = k > 0 && (size_t)k < cap ? (size_t)k : cap - 1;
    }
    if (ld->object && n < cap) snprintf(buf + n, cap - n, "%s.", ld->object);
}

bool gt_load_fail(gt_loader *ld, const char *key, const char *what)
{
    if (ld->failed) return false;
    ld->failed = true;
    char at[160];
    where(ld, at, sizeof at);
    if (key)
        snprintf(ld->err, ld->errcap, "%s: %s%s: %s", ld->file, at, key, what);
    else
        snprintf(ld->err, ld->errcap, "%s: %s", ld->file, what);
    return false;
}

const cJSON *gt_load_member(const cJSON *obj, const char *key, const cJSON **hint)
{
    const cJSON *start = hint && *hint && (*hint)->next ? (*hint)->next : obj->child;
    for (int pass = 0; pass < 2; pass++) {
        const cJSON *stop = pass ? start : NULL;
        for (const cJSON *m = pass ? obj->child : start; m != stop; m = m->next) {
            /* The first byte first: most members are told apart there. */
            if (m->string && m->string[0] == key[0] && strcmp(m->string, key) == 0) {
                if (hint) *hint = m;
                return m;
            }
        }
        if (start == obj->child) break;
    }
    return NULL;
}

bool gt_load_number_u64(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v)) return false;
    double d = v->valuedouble;
    /* 2^64 as a double: every double below it converts. */
    if (!(d >= 0 && d < 18446744073709551616.0) || floor(d) != d) return false;
    *out = (uint64_t)d;
    return true;
}

bool gt_load_value_u64(gt_loader *ld, const cJSON *v, const char *key, uint64_t *out)
{
    if (!gt_load_number_u64(v, out))
        return gt_load_fail(ld, key, "expected an integer from 0 to 2^64-1");
    return true;
}

bool gt_load_u64_or(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                    uint64_t dflt, uint64_t *out)
{
    const cJSON *v = gt_load_member(obj, key, hint);
    if (!v) {
        *out = dflt;
        return true;
    }
    return gt_load_value_u64(ld, v, key, out);
}

bool gt_load_u64(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                 uint64_t *out)
{
    const cJSON *v = gt_load_member(obj, key, hint);
    if (!v) return gt_load_fail(ld, key, "missing");
    return gt_load_value_u64(ld, v, key, out);
}

bool gt_load_i64_or(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                    int64_t min, int64_t max, int64_t dflt, int64_t *out)
{
    const cJSON *v = gt_load_member(obj, key, hint);
    if (!v) {
        *out = dflt;
        return true;
    }
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d >= (double)min && d <= (double)max) || floor(d) != d) {
        char what[96];
        snprintf(what, sizeof what, "expected an integer from %" PRId64 " to %" PRId64, min, max);
        return gt_load_fail(ld, key, what);
    }
    *out = (int64_t)d;
    return true;
}

bool gt_load_bool_or(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint, int dflt,
                     bool *out)
{
    const cJSON *v = gt_load_member(obj, key, hint);
    if (!v && dflt >= 0) {
        *out = dflt != 0;
        return true;
    }
    if (!v) return gt_load_fail(ld, key, "missing");
    if (!cJSON_IsBool(v)) return gt_load_fail(ld, key, "expected true or false");
    *out = cJSON_IsTrue(v);
    return true;
}

/* v when it is there and of the type `is` checks; else NULL after the error. */
static const cJSON *typed(gt_loader *ld, const cJSON *v, const char *key,
                          cJSON_bool (*is)(const cJSON *), const char *expected)
{
    if (!v)
        gt_load_fail(ld, key, "missing");
    else if (!is(v))
        gt_load_fail(ld, key, expected);
    return v && is(v) ? v : NULL;
}

const char *gt_load_string(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                           const char *dflt)
{
    const cJSON *v = gt_load_member(obj, key, hint);
    if (!v && dflt) return dflt;
    v = typed(ld, v, key, cJSON_IsString, "expected a string");
    return v ? v->valuestring : NULL;
}

bool gt_load_name(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                  uint32_t *id)
{
    const char *s = gt_load_string(ld, obj, key, hint, NULL);
    if (!s) return false;
    size_t len = strlen(s);
    *id = gt_strtab_intern(ld->names, s, len);
    if (len && !*id) return gt_load_fail(ld, key, "out of memory");
    return true;
}

const cJSON *gt_load_array(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint)
{
    return typed(ld, gt_load_member(obj, key, hint), key, cJSON_IsArray, "expected an array");
}

const cJSON *gt_load_object(gt_loader *ld, const cJSON *obj, const char *key, const cJSON **hint,
                            bool optional)
{
    const cJSON *v = gt_load_member(obj, key, hint);
    if (!v && optional) return NULL;
    return typed(ld, v, key, cJSON_IsObject, "expected an object");
}
