/* NVTX counters (nvToolsExtCounters.h): a counter is registered with a
 * name and a layout (a predefined number type, or a schema: a group of
 * counters sampled together), then sampled. Each number of a sample
 * becomes one GT_EV_NVTX_COUNTER record named by its counter ("group.field"
 * for a group's fields), carrying the unit its semantics give. Samples are
 * recorded inside capture windows, as marks are.
 *
 * A batch (nvtxCounterBatchSubmit) is recorded sample by sample at the
 * time of the submit: the timestamps it carries are in a time domain of
 * the program's that is not mapped onto the report's clock.
 *
 * The table is fixed and never freed, as the schema table is. */
#include "capture_window.h"
#include "clock.h"
#include "event.h"
#include "log.h"
#include "process.h"
#include "record.h"
#include "strtab.h"
#include "nvtx_internal.h"

#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define COUNTERS 1024u
#define COUNTER_FIELDS 8u
#define BATCH_SAMPLES 65536u /* samples read from one batch */

typedef struct counter {
    _Atomic uint32_t ready; /* store-release once filled; load-acquire before reading */
    uint32_t domain;        /* the domain's index */
    uint64_t id;
    uint64_t size; /* bytes of one sample */
    uint32_t nfields;
    gt_nvtx_leaf fields[COUNTER_FIELDS]; /* name: the counter's, or "group.field" */
} counter;

static counter counters[COUNTERS];
static _Atomic uint32_t ncounters;
static _Atomic int warned_full;

static const counter *find(const gt_nvtx_domain *d, uint64_t id)
{
    uint32_t n = atomic_load_explicit(&ncounters, memory_order_relaxed);
    if (n > COUNTERS) n = COUNTERS;
    for (uint32_t i = n; i-- > 0;) {
        if (!atomic_load_explicit(&counters[i].ready, memory_order_acquire)) continue;
        if (counters[i].id == id && counters[i].domain == d->index) return &counters[i];
    }
    return NULL;
}

static uint32_t intern(const char *s)
{
    if (!s || !*s) return 0;
    return gt_strtab_intern(gt_names(), s, strnlen(s, 256));
}

static uint32_t semantics_unit(const nvtxSemanticsHeader_t *h)
{
    for (unsigned n = 0; h && n < 16; h = h->next, n++) {
        const nvtxSemanticsCounter_t *c = (const nvtxSemanticsCounter_t *)h;
        if (h->semanticId == NVTX_SEMANTIC_ID_COUNTERS_V1 &&
            h->structSize >= offsetof(nvtxSemanticsCounter_t, unit) + sizeof c->unit)
            return intern(c->unit);
    }
    return 0;
}

/* A group's field: "group.field" (the group's name alone when it has one
 * number, the field's alone when the group has no name). */
static uint32_t field_name(const char *group, uint32_t field, uint32_t nfields)
{
    if (nfields == 1 || !field) return intern(group);
    if (!group || !*group) return field;
    char buf[512];
    snprintf(buf, sizeof buf, "%s.%s", group, gt_strtab_get(gt_names(), field));
    return intern(buf);
}

static void fill(counter *c, const gt_nvtx_domain *d, const nvtxCounterAttr_t *a)
{
    uint32_t unit = semantics_unit(a->semantics);
    size_t size = gt_nvtx_number_size(a->schemaId);
    if (size) { /* a predefined type: one number, at offset 0 */
        c->fields[0] = (gt_nvtx_leaf){0, intern(a->name), unit, (uint16_t)a->schemaId};
        c->nfields = 1;
        c->size = size;
        return;
    }
    const gt_nvtx_schema *s = gt_nvtx_schema_find(d, a->schemaId);
    if (!s) return;
    c->size = s->size;
    for (uint32_t i = 0; i < s->nleaves && c->nfields < COUNTER_FIELDS; i++) {
        gt_nvtx_leaf l = s->leaves[i];
        l.name = field_name(a->name, l.name, s->nleaves);
        if (!l.unit) l.unit = unit;
        c->fields[c->nfields++] = l;
    }
}

static uint64_t NVTX_API counter_register(nvtxDomainHandle_t h, const nvtxCounterAttr_t *a)
{
    if (!a || a->structSize < offsetof(nvtxCounterAttr_t, counterId) + sizeof a->counterId)
        return NVTX_COUNTER_ID_NONE;
    int saved = errno;
    const gt_nvtx_domain *d = gt_nvtx_domain_of(h);
    uint32_t i = atomic_fetch_add_explicit(&ncounters, 1, memory_order_relaxed);
    if (i >= COUNTERS) {
        atomic_store_explicit(&ncounters, COUNTERS, memory_order_relaxed);
        int expected = 0;
        if (atomic_compare_exchange_strong(&warned_full, &expected, 1))
            gt_warn("more than %u NVTX counters: later ones are not recorded", COUNTERS);
        errno = saved;
        return a->counterId ? a->counterId : NVTX_COUNTER_ID_NONE;
    }
    counter *c = &counters[i];
    c->domain = d->index;
    c->id = a->counterId ? a->counterId : NVTX_COUNTER_ID_DYNAMIC_START + i;
    fill(c, d, a);
    atomic_store_explicit(&c->ready, 1, memory_order_release);
    errno = saved;
    return c->id;
}

static void record(const gt_nvtx_domain *d, const gt_nvtx_leaf *f, uint8_t kind, uint64_t bits,
                   uint64_t ticks)
{
    gt_event *ev = gt_ev_begin();
    if (!ev) return;
    ev->kind = GT_EV_NVTX_COUNTER;
    ev->device = GT_NO_DEVICE;
    ev->name = f->name;
    ev->host_start = ticks;
    ev->u.counter.domain = d->name;
    ev->u.counter.unit = f->unit;
    ev->u.counter.kind = kind;
    ev->u.counter.value = bits;
    gt_ev_commit(ev);
}

/* The counter to record a sample of; NULL when not recorded now. */
static const counter *sampled(const gt_nvtx_domain *d, uint64_t id)
{
    if (!gt_nvtx_enabled() || !gt_capture_open()) return NULL;
    const counter *c = find(d, id);
    return c && c->nfields ? c : NULL;
}

static void NVTX_API sample_int64(nvtxDomainHandle_t h, uint64_t id, int64_t value)
{
    const gt_nvtx_domain *d = gt_nvtx_domain_of(h);
    const counter *c = sampled(d, id);
    if (c) record(d, &c->fields[0], GT_NUM_I64, (uint64_t)value, gt_clock_ticks());
}

static void NVTX_API sample_float64(nvtxDomainHandle_t h, uint64_t id, double value)
{
    const gt_nvtx_domain *d = gt_nvtx_domain_of(h);
    const counter *c = sampled(d, id);
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    if (c) record(d, &c->fields[0], GT_NUM_F64, bits, gt_clock_ticks());
}

static void sample_at(const gt_nvtx_domain *d, const counter *c, const char *p, size_t size,
                      uint64_t ticks)
{
    for (uint32_t i = 0; i < c->nfields; i++) {
        const gt_nvtx_leaf *f = &c->fields[i];
        uint64_t bits;
        uint8_t kind = f->offset < size
                           ? gt_nvtx_read_number(f->type, p + f->offset, size - f->offset, &bits)
                           : GT_NUM_NONE;
        if (kind != GT_NUM_NONE) record(d, f, kind, bits, ticks);
    }
}

static void NVTX_API sample(nvtxDomainHandle_t h, uint64_t id, const void *value, size_t size)
{
    const gt_nvtx_domain *d = gt_nvtx_domain_of(h);
    const counter *c = sampled(d, id);
    if (c && value) sample_at(d, c, value, size, gt_clock_ticks());
}

static void NVTX_API batch_submit(nvtxDomainHandle_t h, const nvtxCounterBatch_t *b)
{
    const gt_nvtx_domain *d = gt_nvtx_domain_of(h);
    const counter *c = b ? sampled(d, b->counterId) : NULL;
    if (!c || !b->counters || !c->size) return;
    uint64_t ticks = gt_clock_ticks();
    size_t n = b->countersSize / c->size;
    for (size_t i = 0; i < n && i < BATCH_SAMPLES; i++)
        sample_at(d, c, (const char *)b->counters + i * c->size, c->size, ticks);
}

#define SLOT(name, fn)                                                                             \
    {                                                                                              \
        NVTX3EXT_CBID_##name, (void (*)(void))(fn)                                                 \
    }

/* nvtxCounterSampleNoValue records nothing: a sample without a value has
 * no number to count. */
const gt_nvtx_slot gt_nvtx_counter_slots[] = {
    SLOT(nvtxCounterRegister, counter_register),    SLOT(nvtxCounterSampleInt64, sample_int64),
    SLOT(nvtxCounterSampleFloat64, sample_float64), SLOT(nvtxCounterSample, sample),
    SLOT(nvtxCounterBatchSubmit, batch_submit),
};
const unsigned gt_nvtx_counter_nslots =
    sizeof gt_nvtx_counter_slots / sizeof gt_nvtx_counter_slots[0];
