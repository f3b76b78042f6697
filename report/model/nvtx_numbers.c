#define _GNU_SOURCE /* strcasestr */
#include "event.h"
#include "nvtx_numbers.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

void gt_number_add(gt_number_total *t, uint8_t kind, uint64_t bits)
{
    if (kind == GT_NUM_NONE || kind >= GT_NUM_COUNT) return;
    t->kind = t->count == 0 || t->kind == kind ? kind : GT_NUM_MIXED;
    t->count++;
    t->total += gt_number_value(kind, bits);
}

void gt_number_merge(gt_number_total *into, const gt_number_total *from)
{
    if (from->count == 0) return;
    into->kind = into->count == 0 || into->kind == from->kind ? from->kind : GT_NUM_MIXED;
    into->count += from->count;
    into->total += from->total;
}

gt_nvtx_field *gt_nvtx_numbers_field(gt_nvtx_numbers *n, uint32_t name, uint32_t unit)
{
    for (uint32_t i = 0; i < n->nfields; i++)
        if (n->fields[i].name == name) {
            if (!n->fields[i].unit) n->fields[i].unit = unit;
            return &n->fields[i];
        }
    if (n->nfields >= GT_NVTX_FIELDS_MAX) {
        n->fields_dropped++;
        return NULL;
    }
    if (n->nfields == n->fields_capacity) {
        uint32_t cap = n->fields_capacity ? 2 * n->fields_capacity : 4;
        gt_nvtx_field *grown = realloc(n->fields, cap * sizeof(*grown));
        if (!grown) return NULL;
        n->fields = grown;
        n->fields_capacity = cap;
    }
    gt_nvtx_field *f = &n->fields[n->nfields++];
    memset(f, 0, sizeof(*f));
    f->name = name;
    f->unit = unit;
    return f;
}

const char *gt_number_total_kind_name(const gt_number_total *t)
{
    return t->kind == GT_NUM_MIXED ? "mixed" : gt_number_kind_name((enum gt_number_kind)t->kind);
}

uint8_t gt_number_kind_from_name(const char *name)
{
    if (name && strcmp(name, "mixed") == 0) return GT_NUM_MIXED;
    for (uint8_t k = GT_NUM_U64; name && k < GT_NUM_COUNT; k++)
        if (strcmp(name, gt_number_kind_name((enum gt_number_kind)k)) == 0) return k;
    return GT_NUM_NONE;
}

const char *gt_nvtx_field_unit(const char *name, const char *unit)
{
    if (unit && *unit) return unit;
    if (!name) return "";
    if (strcasestr(name, "flop")) return "FLOP";
    if (strcasestr(name, "byte")) return "B";
    return "";
}

double gt_number_rate(double total, uint64_t ns)
{
    return ns ? total * 1e9 / (double)ns : 0.0;
}

gt_nvtx_numbers *gt_row_numbers(gt_row *row)
{
    if (!row->numbers) row->numbers = calloc(1, sizeof(*row->numbers));
    return row->numbers;
}

void gt_nvtx_numbers_free(gt_nvtx_numbers *n)
{
    free(n->fields);
    n->fields = NULL;
    n->nfields = n->fields_capacity = 0;
}

int gt_nvtx_numbers_merge(gt_row *dst, const gt_row *src)
{
    const gt_nvtx_numbers *from = src->numbers;
    if (!from) return 0;
    gt_nvtx_numbers *into = gt_row_numbers(dst);
    if (!into) return -1;
    gt_number_merge(&into->payload, &from->payload);
    for (uint32_t i = 0; i < from->nfields; i++) {
        gt_nvtx_field *f = gt_nvtx_numbers_field(into, from->fields[i].name, from->fields[i].unit);
        if (!f) return -1;
        gt_number_merge(&f->sum, &from->fields[i].sum);
    }
    into->fields_dropped += from->fields_dropped;
    into->memory |= from->memory;
    into->allocated_bytes += from->allocated_bytes;
    into->freed_bytes += from->freed_bytes;
    into->peak_bytes += from->peak_bytes;
    return 0;
}
