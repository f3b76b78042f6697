/* NVTX payload schemas and the numbers read through them.
 *
 * A schema (nvtxPayloadSchemaRegister) describes a C struct: its entries'
 * types, names and offsets, an entry's type being a predefined one or
 * another schema (the Python nvtx package registers a structured NumPy
 * dtype as a schema whose fields are schemas of one scalar each). What the
 * report sums are the numbers, so a schema is flattened once, when it is
 * registered, into its numeric fields (leaves) with their offsets from the
 * payload's start, nested schemas included ("outer.inner", or the outer
 * name alone for a nested schema of one number). Reading a payload is then
 * a load per leaf, bounds-checked against the payload's size. Pointers,
 * arrays, strings, handles and dynamic or union layouts hold no number to
 * sum: they are skipped, and past one whose size is unknown only entries
 * with an explicit offset are read.
 *
 * The table is a fixed array claimed with an atomic counter and never
 * freed, as the domain table is: no lock, fork-safe, and a schema stays
 * valid while payloads refer to it. */
#include "clock.h"
#include "event.h"
#include "log.h"
#include "process.h"
#include "record.h"
#include "strtab.h"
#include "nvtx_internal.h"

#include <nvtx3/nvToolsExtSemanticsCounters.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 4u /* schemas nested inside schemas */
#define LABEL_MAX 256u

typedef struct schema_slot {
    _Atomic uint32_t ready; /* store-release once s is filled; load-acquire before reading */
    gt_nvtx_schema s;
} schema_slot;

static schema_slot schemas[GT_NVTX_SCHEMAS];
static _Atomic uint32_t nschemas; /* claimed slots; relaxed: `ready` orders each */
static _Atomic int warned_full;

/* Size, alignment and number kind of the predefined entry types. */
typedef struct type_info {
    uint8_t size, align, kind;
} type_info;

static const type_info types[NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE + 1] = {
    [NVTX_PAYLOAD_ENTRY_TYPE_CHAR] = {1, 1, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_UCHAR] = {1, 1, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_SHORT] = {2, 2, GT_NUM_I32},
    [NVTX_PAYLOAD_ENTRY_TYPE_USHORT] = {2, 2, GT_NUM_U32},
    [NVTX_PAYLOAD_ENTRY_TYPE_INT] = {4, 4, GT_NUM_I32},
    [NVTX_PAYLOAD_ENTRY_TYPE_UINT] = {4, 4, GT_NUM_U32},
    [NVTX_PAYLOAD_ENTRY_TYPE_LONG] = {8, 8, GT_NUM_I64},
    [NVTX_PAYLOAD_ENTRY_TYPE_ULONG] = {8, 8, GT_NUM_U64},
    [NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG] = {8, 8, GT_NUM_I64},
    [NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG] = {8, 8, GT_NUM_U64},
    [NVTX_PAYLOAD_ENTRY_TYPE_INT8] = {1, 1, GT_NUM_I32},
    [NVTX_PAYLOAD_ENTRY_TYPE_UINT8] = {1, 1, GT_NUM_U32},
    [NVTX_PAYLOAD_ENTRY_TYPE_INT16] = {2, 2, GT_NUM_I32},
    [NVTX_PAYLOAD_ENTRY_TYPE_UINT16] = {2, 2, GT_NUM_U32},
    [NVTX_PAYLOAD_ENTRY_TYPE_INT32] = {4, 4, GT_NUM_I32},
    [NVTX_PAYLOAD_ENTRY_TYPE_UINT32] = {4, 4, GT_NUM_U32},
    [NVTX_PAYLOAD_ENTRY_TYPE_INT64] = {8, 8, GT_NUM_I64},
    [NVTX_PAYLOAD_ENTRY_TYPE_UINT64] = {8, 8, GT_NUM_U64},
    [NVTX_PAYLOAD_ENTRY_TYPE_FLOAT] = {4, 4, GT_NUM_F32},
    [NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE] = {8, 8, GT_NUM_F64},
    [NVTX_PAYLOAD_ENTRY_TYPE_LONGDOUBLE] = {16, 16, GT_NUM_F64},
    [NVTX_PAYLOAD_ENTRY_TYPE_SIZE] = {8, 8, GT_NUM_U64},
    [NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS] = {8, 8, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_WCHAR] = {4, 4, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_CHAR8] = {1, 1, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_CHAR16] = {2, 2, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_CHAR32] = {4, 4, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_BYTE] = {1, 1, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_INT128] = {16, 16, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_UINT128] = {16, 16, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_FLOAT16] = {2, 2, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32] = {4, 4, GT_NUM_F32},
    [NVTX_PAYLOAD_ENTRY_TYPE_FLOAT64] = {8, 8, GT_NUM_F64},
    [NVTX_PAYLOAD_ENTRY_TYPE_FLOAT128] = {16, 16, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_BF16] = {2, 2, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_TF32] = {4, 4, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_CATEGORY] = {4, 4, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_COLOR_ARGB] = {4, 4, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_SCOPE_ID] = {8, 8, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT32] = {4, 4, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT64] = {8, 8, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT32] = {4, 4, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT64] = {8, 8, GT_NUM_NONE},
    [NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE] = {8, 8, GT_NUM_NONE},
};

static const type_info *type_of(uint64_t type)
{
    if (type >= sizeof types / sizeof types[0] || types[type].size == 0) return NULL;
    return &types[type];
}

size_t gt_nvtx_number_size(uint64_t type)
{
    const type_info *t = type_of(type);
    return t && t->kind != GT_NUM_NONE ? t->size : 0;
}

static uint64_t f64_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

uint8_t gt_nvtx_read_number(uint64_t type, const void *p, size_t avail, uint64_t *bits)
{
    const type_info *t = type_of(type);
    if (!t || t->kind == GT_NUM_NONE || !p || avail < t->size) return GT_NUM_NONE;
    switch (type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT:
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32: {
        float f;
        memcpy(&f, p, sizeof f);
        *bits = f64_bits(f);
        return GT_NUM_F32;
    }
    case NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE:
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT64:
        memcpy(bits, p, sizeof *bits);
        return GT_NUM_F64;
    case NVTX_PAYLOAD_ENTRY_TYPE_LONGDOUBLE: {
        long double ld;
        memcpy(&ld, p, sizeof ld);
        *bits = f64_bits((double)ld);
        return GT_NUM_F64;
    }
    default:
        break;
    }
    bool is_signed = t->kind == GT_NUM_I32 || t->kind == GT_NUM_I64;
    switch (t->size) {
    case 1: {
        uint8_t v;
        memcpy(&v, p, 1);
        *bits = is_signed ? (uint64_t)(int64_t)(int8_t)v : v;
        break;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        *bits = is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
        break;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        *bits = is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
        break;
    }
    default:
        memcpy(bits, p, 8);
        break;
    }
    return t->kind;
}

/* ------------------------------------------------------------ flattening */

static uint32_t intern_text(const char *s)
{
    if (!s || !*s) return 0;
    return gt_strtab_intern(gt_names(), s, strnlen(s, LABEL_MAX));
}

/* The unit that an entry's counter semantics give, 0 when none. */
static uint32_t unit_of(const nvtxSemanticsHeader_t *h)
{
    for (unsigned n = 0; h && n < 16; h = h->next, n++) {
        if (h->semanticId != NVTX_SEMANTIC_ID_COUNTERS_V1) continue;
        const nvtxSemanticsCounter_t *c = (const nvtxSemanticsCounter_t *)h;
        if (h->structSize >= offsetof(nvtxSemanticsCounter_t, unit) + sizeof c->unit && c->unit)
            return intern_text(c->unit);
    }
    return 0;
}

/* "outer.inner"; the outer name alone when inner is its schema's only
 * number; the inner alone without an outer name. */
static uint32_t nested_name(const char *outer, uint32_t inner, bool only)
{
    if (!outer || !*outer) return inner;
    if (only || !inner) return intern_text(outer);
    char buf[LABEL_MAX];
    snprintf(buf, sizeof buf, "%s.%s", outer, gt_strtab_get(gt_names(), inner));
    return intern_text(buf);
}

static void add_leaf(gt_nvtx_schema *s, uint64_t offset, uint32_t name, uint32_t unit,
                     uint16_t type)
{
    if (s->nleaves < GT_NVTX_LEAVES)
        s->leaves[s->nleaves++] = (gt_nvtx_leaf){offset, name, unit, type};
}

#define SKIPPED_FLAGS                                                                              \
    (NVTX_PAYLOAD_ENTRY_FLAG_POINTER | NVTX_PAYLOAD_ENTRY_FLAG_IS_ARRAY |                          \
     NVTX_PAYLOAD_ENTRY_FLAG_HIDE | NVTX_PAYLOAD_ENTRY_FLAG_OFFSET_FROM_HERE |                     \
     NVTX_PAYLOAD_ENTRY_FLAG_OFFSET_FROM_BASE)

/* The entries' numbers into s; the end of the last entry whose place is
 * known (0 when one was not). */
static uint64_t flatten(gt_nvtx_schema *s, const gt_nvtx_domain *d,
                        const nvtxPayloadSchemaEntry_t *e, size_t n)
{
    uint64_t end = 0;
    bool known = true; /* the end so far is known: implicit offsets can follow */
    for (size_t i = 0; i < n && i < 4096; i++) {
        const type_info *t = type_of(e[i].type);
        const gt_nvtx_schema *nested = t ? NULL : gt_nvtx_schema_find(d, e[i].type);
        uint64_t size = t ? t->size : nested ? nested->size : 0;
        uint64_t align = t ? t->align : 8;
        uint64_t offset = e[i].offset;
        if (offset == 0 && i > 0) {
            if (!known) continue;
            offset = (end + align - 1) / align * align;
        }
        bool skipped = (e[i].flags & SKIPPED_FLAGS) != 0;
        if (!skipped && t && t->kind != GT_NUM_NONE)
            add_leaf(s, offset, intern_text(e[i].name), unit_of(e[i].semantics),
                     (uint16_t)e[i].type);
        if (!skipped && nested) {
            uint32_t unit = unit_of(e[i].semantics);
            for (uint32_t k = 0; k < nested->nleaves; k++) {
                const gt_nvtx_leaf *l = &nested->leaves[k];
                add_leaf(s, offset + l->offset,
                         nested_name(e[i].name, l->name, nested->nleaves == 1),
                         l->unit ? l->unit : unit, l->type);
            }
        }
        known = size != 0 && !(e[i].flags & NVTX_PAYLOAD_ENTRY_FLAG_IS_ARRAY) &&
                !(e[i].flags & NVTX_PAYLOAD_ENTRY_FLAG_POINTER);
        if (e[i].flags & NVTX_PAYLOAD_ENTRY_FLAG_POINTER) {
            known = true;
            size = sizeof(void *);
        }
        if (known && offset + size > end) end = offset + size;
    }
    return end;
}

/* ------------------------------------------------------------ the table */

const gt_nvtx_schema *gt_nvtx_schema_find(const gt_nvtx_domain *d, uint64_t id)
{
    uint32_t n = atomic_load_explicit(&nschemas, memory_order_relaxed);
    if (n > GT_NVTX_SCHEMAS) n = GT_NVTX_SCHEMAS;
    const gt_nvtx_schema *any = NULL;
    /* Newest first: a static id registered again replaces the old one. */
    for (uint32_t i = n; i-- > 0;) {
        if (!atomic_load_explicit(&schemas[i].ready, memory_order_acquire)) continue;
        const gt_nvtx_schema *s = &schemas[i].s;
        if (s->id != id) continue;
        if (s->domain == d->index) return s;
        if (!any) any = s;
    }
    return id >= NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START ? any : NULL;
}

uint64_t gt_nvtx_schema_register(const gt_nvtx_domain *d, const nvtxPayloadSchemaAttr_t *a)
{
    const uint64_t need =
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES;
    if (!a || (a->fieldMask & need) != need || !a->entries) return 0;
    uint32_t i = atomic_fetch_add_explicit(&nschemas, 1, memory_order_relaxed);
    if (i >= GT_NVTX_SCHEMAS) {
        atomic_store_explicit(&nschemas, GT_NVTX_SCHEMAS, memory_order_relaxed);
        int expected = 0;
        if (atomic_compare_exchange_strong(&warned_full, &expected, 1))
            gt_warn("more than %u NVTX payload schemas: the payloads of later ones are not read",
                    GT_NVTX_SCHEMAS);
        return 0;
    }
    gt_nvtx_schema *s = &schemas[i].s;
    bool given = (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) && a->schemaId;
    s->id = given ? a->schemaId : NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START + i;
    s->domain = d->index;
    s->nleaves = 0;
    bool is_static = !(a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE) ||
                     a->type == NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    uint64_t end = is_static ? flatten(s, d, a->entries, a->numEntries) : 0;
    bool sized =
        (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) && a->payloadStaticSize;
    s->size = sized ? a->payloadStaticSize : end;
    atomic_store_explicit(&schemas[i].ready, 1, memory_order_release);
    return s->id;
}

/* ------------------------------------------------------------ payloads */

static void add_number(gt_nvtx_numbers *out, uint32_t name, uint32_t unit, uint8_t kind,
                       uint64_t bits)
{
    if (out->n >= GT_NVTX_NUMBERS) return;
    out->name[out->n] = name;
    out->unit[out->n] = unit;
    out->kind[out->n] = kind;
    out->value[out->n] = bits;
    out->n++;
}

void gt_nvtx_payload_numbers(const gt_nvtx_domain *d, const nvtxPayloadData_t *data, size_t count,
                             gt_nvtx_numbers *out)
{
    for (size_t i = 0; data && i < count && i < GT_NVTX_NUMBERS; i++) {
        const nvtxPayloadData_t *p = &data[i];
        if (!p->payload) continue;
        uint64_t bits;
        const type_info *t = type_of(p->schemaId);
        if (t) {
            size_t avail = p->size == SIZE_MAX ? t->size : p->size;
            uint8_t kind = gt_nvtx_read_number(p->schemaId, p->payload, avail, &bits);
            if (kind != GT_NUM_NONE) add_number(out, 0, 0, kind, bits);
            continue;
        }
        const gt_nvtx_schema *s = gt_nvtx_schema_find(d, p->schemaId);
        if (!s) continue;
        size_t size = p->size == SIZE_MAX ? s->size : p->size;
        for (uint32_t k = 0; k < s->nleaves; k++) {
            const gt_nvtx_leaf *l = &s->leaves[k];
            if (l->offset >= size) continue;
            uint8_t kind = gt_nvtx_read_number(l->type, (const char *)p->payload + l->offset,
                                               size - l->offset, &bits);
            if (kind != GT_NUM_NONE) add_number(out, l->name, l->unit, kind, bits);
        }
    }
}

void gt_nvtx_fields_record(const gt_nvtx_numbers *out, uint64_t ticks)
{
    for (uint32_t i = 0; i < out->n; i += 2) {
        gt_event *ev = gt_ev_begin();
        if (!ev) return;
        ev->kind = GT_EV_NVTX_FIELDS;
        ev->device = GT_NO_DEVICE;
        ev->host_start = ticks;
        for (uint32_t k = 0; k < 2 && i + k < out->n; k++) {
            ev->u.fields.name[k] = out->name[i + k];
            ev->u.fields.unit[k] = out->unit[i + k];
            ev->u.fields.kind[k] = out->kind[i + k];
            ev->u.fields.value[k] = out->value[i + k];
        }
        gt_ev_commit(ev);
    }
}
