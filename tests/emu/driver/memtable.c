/* The address table: every device, managed, pinned, registered and mapped
 * range the driver knows, found by any address inside it. */
#include "emu.h"

#include <search.h>
#include <stdlib.h>

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static void *table_root;

/* Ranges never overlap, so "overlaps" is equality for the tree. */
static int compare_ranges(const void *pa, const void *pb)
{
    const struct gt_alloc *a = pa, *b = pb;
    if (a->base + a->size <= b->base) return -1;
    if (b->base + b->size <= a->base) return 1;
    return 0;
}

bool gt_mem_find(uintptr_t addr, size_t len, struct gt_alloc *out)
{
    struct gt_alloc key = {.base = addr, .size = len ? len : 1};
    bool found = false;
    pthread_rwlock_rdlock(&table_lock);
    void *node = tfind(&key, &table_root, compare_ranges);
    if (node) {
        const struct gt_alloc *a = *(struct gt_alloc **)node;
        if (a->base <= addr && addr + key.size <= a->base + a->size) {
            if (out) *out = *a;
            found = true;
        }
    }
    pthread_rwlock_unlock(&table_lock);
    return found;
}

bool gt_mem_overlaps(uintptr_t base, size_t size)
{
    struct gt_alloc key = {.base = base, .size = size ? size : 1};
    pthread_rwlock_rdlock(&table_lock);
    bool found = tfind(&key, &table_root, compare_ranges) != NULL;
    pthread_rwlock_unlock(&table_lock);
    return found;
}

CUresult gt_mem_insert(const struct gt_alloc *a)
{
    struct gt_alloc *copy = malloc(sizeof *copy);
    if (!copy) return CUDA_ERROR_OUT_OF_MEMORY;
    *copy = *a;
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&table_lock);
    void *node = tsearch(copy, &table_root, compare_ranges);
    if (!node)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (*(struct gt_alloc **)node != copy)
        r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    pthread_rwlock_unlock(&table_lock);
    if (r != CUDA_SUCCESS) free(copy);
    return r;
}

static struct gt_alloc *take_locked(uintptr_t base, unsigned kind_mask)
{
    struct gt_alloc key = {.base = base, .size = 1};
    void *node = tfind(&key, &table_root, compare_ranges);
    if (!node) return NULL;
    struct gt_alloc *a = *(struct gt_alloc **)node;
    if (a->base != base || !(GT_MEM_MASK(a->kind) & kind_mask)) return NULL;
    tdelete(a, &table_root, compare_ranges);
    return a;
}

bool gt_mem_remove(uintptr_t base, unsigned kind_mask, struct gt_alloc *out)
{
    pthread_rwlock_wrlock(&table_lock);
    struct gt_alloc *a = take_locked(base, kind_mask);
    pthread_rwlock_unlock(&table_lock);
    if (!a) return false;
    if (out) *out = *a;
    free(a);
    return true;
}

bool gt_mem_mark_freeing(uintptr_t base, unsigned kind_mask)
{
    struct gt_alloc key = {.base = base, .size = 1};
    bool ok = false;
    pthread_rwlock_wrlock(&table_lock);
    void *node = tfind(&key, &table_root, compare_ranges);
    if (node) {
        struct gt_alloc *a = *(struct gt_alloc **)node;
        if (a->base == base && (GT_MEM_MASK(a->kind) & kind_mask) && !a->freeing) {
            a->freeing = true;
            ok = true;
        }
    }
    pthread_rwlock_unlock(&table_lock);
    return ok;
}

struct access_update {
    uintptr_t base;
    size_t size;
    bool accessible;
};

static void access_visit(const void *node, VISIT which, void *closure)
{
    if (which != postorder && which != leaf) return;
    const struct access_update *u = closure;
    struct gt_alloc *a = *(struct gt_alloc *const *)node;
    if (a->kind == GT_MEM_VMM && a->base >= u->base && a->base + a->size <= u->base + u->size)
        a->accessible = u->accessible;
}

void gt_mem_set_access(uintptr_t base, size_t size, bool accessible)
{
    struct access_update u = {.base = base, .size = size, .accessible = accessible};
    pthread_rwlock_wrlock(&table_lock);
    twalk_r(table_root, access_visit, &u);
    pthread_rwlock_unlock(&table_lock);
}

void gt_mem_set_pool(uintptr_t base, void *pool)
{
    struct gt_alloc key = {.base = base, .size = 1};
    pthread_rwlock_wrlock(&table_lock);
    void *node = tfind(&key, &table_root, compare_ranges);
    if (node) (*(struct gt_alloc **)node)->pool = pool;
    pthread_rwlock_unlock(&table_lock);
}

struct collect {
    struct gt_context *ctx;
    struct gt_alloc **items;
    size_t n, cap;
};

static void collect_visit(const void *node, VISIT which, void *closure)
{
    if (which != postorder && which != leaf) return;
    struct collect *c = closure;
    struct gt_alloc *a = *(struct gt_alloc *const *)node;
    if (a->ctx != c->ctx || a->kind == GT_MEM_VMM) return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct gt_alloc **items = realloc(c->items, cap * sizeof *items);
        if (!items) return;
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = a;
}

void gt_mem_remove_context(struct gt_context *ctx)
{
    struct collect c = {.ctx = ctx};
    pthread_rwlock_wrlock(&table_lock);
    twalk_r(table_root, collect_visit, &c);
    for (size_t i = 0; i < c.n; i++)
        tdelete(c.items[i], &table_root, compare_ranges);
    pthread_rwlock_unlock(&table_lock);
    for (size_t i = 0; i < c.n; i++) {
        gt_mem_release_backing(c.items[i]);
        free(c.items[i]);
    }
    free(c.items);
}
