/* Handle objects: allocated once, recycled through per-kind free lists. */
#include "emu.h"

#include <stdlib.h>
#include <string.h>

#define GT_KIND_SLOTS (GT_KIND_COUNT_END - GT_KIND_CONTEXT)

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_object *free_lists[GT_KIND_SLOTS];

/* Takes the first object of the free list that may be reused now. */
static struct gt_object *take_reusable(size_t slot)
{
    uint64_t now = 0;
    for (struct gt_object **link = &free_lists[slot]; *link; link = &(*link)->pool_next) {
        struct gt_object *obj = *link;
        if (obj->reuse_after && !now) now = gt_now();
        if (obj->reuse_after <= now) {
            *link = obj->pool_next;
            return obj;
        }
    }
    return NULL;
}

void *gt_object_new(enum gt_kind kind, size_t size, size_t keep, bool *fresh)
{
    size_t slot = (size_t)(kind - GT_KIND_CONTEXT);
    pthread_mutex_lock(&pool_lock);
    struct gt_object *obj = take_reusable(slot);
    pthread_mutex_unlock(&pool_lock);

    bool is_new = obj == NULL;
    if (is_new) {
        obj = calloc(1, size);
        if (!obj) return NULL;
    } else if (size > keep) {
        memset((char *)obj + keep, 0, size - keep);
    }
    obj->pool_next = NULL;
    if (fresh) *fresh = is_new;
    /* Release: a thread that validates the handle sees the object set up
     * by the creator before it was handed out. */
    atomic_store_explicit(&obj->kind, (uint32_t)kind, memory_order_release);
    return obj;
}

bool gt_object_kill(void *p, enum gt_kind kind)
{
    struct gt_object *obj = p;
    uint32_t expected = (uint32_t)kind;
    /* acq_rel: exactly one of two racing destroys wins. */
    return atomic_compare_exchange_strong_explicit(&obj->kind, &expected, GT_KIND_DEAD,
                                                   memory_order_acq_rel, memory_order_relaxed);
}

void gt_object_recycle_after(void *p, enum gt_kind kind, uint64_t not_before)
{
    struct gt_object *obj = p;
    size_t slot = (size_t)(kind - GT_KIND_CONTEXT);
    pthread_mutex_lock(&pool_lock);
    obj->reuse_after = not_before;
    obj->pool_next = free_lists[slot];
    free_lists[slot] = obj;
    pthread_mutex_unlock(&pool_lock);
}

void gt_object_recycle(void *p, enum gt_kind kind)
{
    gt_object_recycle_after(p, kind, 0);
}

bool gt_object_free(void *p, enum gt_kind kind)
{
    if (!gt_object_kill(p, kind)) return false;
    gt_object_recycle(p, kind);
    return true;
}
