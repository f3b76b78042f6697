/* Device memory: one range of lazily committed host memory per device,
 * carved up first-fit. Device pointers are real addresses in this process,
 * so copies move real data; they are distinct from every host allocation. */
#include "emu.h"

#include <stdlib.h>
#include <sys/mman.h>

#define GT_ARENA_ALIGN 512u
#define GT_RELEASE_MIN (256u << 10)

struct extent {
    uintptr_t base;
    size_t size;
    struct extent *next;
};

struct arena {
    pthread_mutex_t lock;
    uintptr_t base;
    size_t size;
    size_t used;
    struct extent *free_list; /* sorted by address */
};

static struct arena arenas[GT_MAX_DEVICES];

bool gt_arena_init(struct gt_device *dev)
{
    struct arena *a = &arenas[dev->ordinal];
    void *p = mmap(NULL, dev->total_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    struct extent *all = malloc(sizeof *all);
    if (!all) {
        munmap(p, dev->total_bytes);
        return false;
    }
    pthread_mutex_init(&a->lock, NULL);
    a->base = (uintptr_t)p;
    a->size = dev->total_bytes;
    all->base = a->base;
    all->size = a->size;
    all->next = NULL;
    a->free_list = all;
    return true;
}

static size_t round_size(size_t size)
{
    return (size + GT_ARENA_ALIGN - 1) & ~(size_t)(GT_ARENA_ALIGN - 1);
}

size_t gt_arena_used(const struct gt_device *dev)
{
    struct arena *a = &arenas[dev->ordinal];
    pthread_mutex_lock(&a->lock);
    size_t used = a->used;
    pthread_mutex_unlock(&a->lock);
    return used;
}

bool gt_arena_contains(const struct gt_device *dev, uintptr_t p)
{
    const struct arena *a = &arenas[dev->ordinal];
    return p >= a->base && p < a->base + a->size;
}

void *gt_arena_alloc(struct gt_device *dev, size_t size)
{
    struct arena *a = &arenas[dev->ordinal];
    size_t need = round_size(size);
    if (need < size) return NULL;
    void *result = NULL;
    pthread_mutex_lock(&a->lock);
    for (struct extent **pp = &a->free_list; *pp; pp = &(*pp)->next) {
        struct extent *e = *pp;
        if (e->size < need) continue;
        result = (void *)e->base;
        e->base += need;
        e->size -= need;
        if (e->size == 0) {
            *pp = e->next;
            free(e);
        }
        a->used += need;
        break;
    }
    pthread_mutex_unlock(&a->lock);
    return result;
}

/* Gives whole pages back to the system; the range reads as zeros after. */
static void release_pages(uintptr_t base, size_t size)
{
    if (size < GT_RELEASE_MIN) return;
    uintptr_t page = 4096;
    uintptr_t start = (base + page - 1) & ~(page - 1);
    uintptr_t end = (base + size) & ~(page - 1);
    if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
}

void gt_arena_free(struct gt_device *dev, void *p, size_t size)
{
    struct arena *a = &arenas[dev->ordinal];
    uintptr_t base = (uintptr_t)p;
    size_t len = round_size(size);
    release_pages(base, len);
    pthread_mutex_lock(&a->lock);
    a->used -= len;
    struct extent **pp = &a->free_list;
    while (*pp && (*pp)->base < base)
        pp = &(*pp)->next;
    struct extent *next = *pp;
    struct extent *prev =
        pp == &a->free_list ? NULL : (struct extent *)((char *)pp - offsetof(struct extent, next));
    if (prev && prev->base + prev->size == base) {
        prev->size += len;
        if (next && prev->base + prev->size == next->base) {
            prev->size += next->size;
            prev->next = next->next;
            free(next);
        }
    } else if (next && base + len == next->base) {
        next->base = base;
        next->size += len;
    } else {
        struct extent *e = malloc(sizeof *e);
        if (e) {
            e->base = base;
            e->size = len;
            e->next = next;
            *pp = e;
        }
    }
    pthread_mutex_unlock(&a->lock);
}
