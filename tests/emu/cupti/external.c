/* External correlation: a stack of ids per thread and per kind. An API
 * record made inside a region is preceded by one external correlation
 * record for each kind with a region open, as cupti_activity.h says. */
#include "cupti_emu.h"

#include <stdlib.h>

struct id_stack {
    uint64_t *ids;
    size_t depth, capacity;
};

static __thread struct id_stack stacks[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Frees a thread's stacks when it exits. */
static void free_stacks(void *unused)
{
    (void)unused;
    for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
        free(stacks[k].ids);
        stacks[k] = (struct id_stack){0};
    }
}

static void make_key(void)
{
    pthread_key_create(&exit_key, free_stacks);
}

static bool valid_kind(CUpti_ExternalCorrelationKind kind)
{
    return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
           kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!valid_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    struct id_stack *s = &stacks[kind];
    if (s->depth == s->capacity) {
        size_t capacity = s->capacity ? 2 * s->capacity : 16;
        uint64_t *ids = realloc(s->ids, capacity * sizeof *ids);
        if (!ids) return CUPTI_ERROR_OUT_OF_MEMORY;
        if (!s->ids) {
            pthread_once(&key_once, make_key);
            pthread_setspecific(exit_key, stacks);
        }
        s->ids = ids;
        s->capacity = capacity;
    }
    s->ids[s->depth++] = id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t *lastId)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!valid_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    struct id_stack *s = &stacks[kind];
    if (s->depth == 0) return CUPTI_ERROR_QUEUE_EMPTY;
    s->depth--;
    if (lastId) *lastId = s->ids[s->depth];
    return CUPTI_SUCCESS;
}

void gt_cupti_emit_external(uint32_t correlation_id)
{
    if (!gt_cupti_kind_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) return;
    for (int k = CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
         k++) {
        const struct id_stack *s = &stacks[k];
        if (s->depth == 0) continue;
        gt_cupti_record rec = {.external = {.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                            .externalKind = (CUpti_ExternalCorrelationKind)k,
                                            .externalId = s->ids[s->depth - 1],
                                            .correlationId = correlation_id}};
        gt_cupti_emit(&rec, gt_cupti_monotonic(), false);
    }
}
