/* What the timeline remembers between records: escaped names, GPU
 * tracks, thread names, open NVTX ranges; and the metadata at the end. */
#include <stdio.h>
#include <stdlib.h>

#include "chrome.h"
#include "chrome_internal.h"
#include "display_name.h"
#include "idmap.h"
#include "json_writer.h"
#include "report.h"
#include "strtab.h"
#include "timeline.h"

/* Grows an array of elem-sized items to hold need; 0, or -1. */
static int grow(void **array, uint32_t *capacity, size_t elem, uint32_t need)
{
    if (need <= *capacity) return 0;
    uint32_t cap = *capacity ? *capacity : 16;
    while (cap < need)
        cap *= 2;
    void *grown = realloc(*array, cap * elem);
    if (!grown) return -1;
    *array = grown;
    *capacity = cap;
    return 0;
}

/* s as a quoted JSON string, in a new buffer. */
static char *escape(const char *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    gt_json_write_string(f, s, strlen(s));
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Keeps an escaped name in the arena; false when it does not fit. */
static bool cache_name(gt_timeline *tl, uint32_t id, const char *s, size_t len)
{
    if (id >= tl->name_ids) {
        uint32_t n = tl->name_ids ? tl->name_ids : 256;
        while (n <= id)
            n *= 2;
        uint32_t *grown = realloc(tl->name_off, n * sizeof(*grown));
        if (!grown) return false;
        memset(grown + tl->name_ids, 0, (n - tl->name_ids) * sizeof(*grown));
        tl->name_off = grown;
        tl->name_ids = n;
    }
    size_t need = tl->arena_len + sizeof(uint32_t) + len;
    if (need > GT_TIMELINE_NAME_CACHE_BYTES) return false;
    if (need > tl->arena_cap) {
        size_t cap = tl->arena_cap ? tl->arena_cap : 65536;
        while (cap < need)
            cap *= 2;
        char *grown = realloc(tl->arena, cap);
        if (!grown) return false;
        tl->arena = grown;
        tl->arena_cap = cap;
    }
    uint32_t n32 = (uint32_t)len;
    memcpy(tl->arena + tl->arena_len, &n32, sizeof n32);
    memcpy(tl->arena + tl->arena_len + sizeof n32, s, len);
    tl->name_off[id] = (uint32_t)tl->arena_len + 1;
    tl->arena_len = need;
    return true;
}

const char *gt_tl_name(gt_timeline *tl, uint32_t id, size_t *len)
{
    if (id < tl->name_ids && tl->name_off[id]) {
        const char *at = tl->arena + tl->name_off[id] - 1;
        uint32_t n32;
        memcpy(&n32, at, sizeof n32);
        *len = n32;
        return at + sizeof n32;
    }
    size_t n = 0;
    /* A Numba kernel's name as the verbose summary shows it (display_name.h). */
    const char *text = gt_strtab_get(tl->names, id);
    char *readable = gt_name_is_numba(text) ? gt_verbose_name(text) : NULL;
    char *s = escape(readable ? readable : text, &n);
    free(readable);
    if (!s) {
        *len = 2;
        return "\"\"";
    }
    if (cache_name(tl, id, s, n)) {
        free(s);
        return gt_tl_name(tl, id, len);
    }
    free(tl->scratch);
    tl->scratch = s;
    *len = n;
    return s;
}

uint32_t gt_tl_track(gt_timeline *tl, uint16_t device, uint64_t stream)
{
    /* Stream handles are user-space pointers (below 2^47) or small
     * constants: the device in the top bits keeps keys distinct. */
    uint64_t key = stream ^ ((uint64_t)device << 48);
    uint32_t i;
    if (gt_idmap_get(&tl->track_index, key, &i)) return GT_TIMELINE_GPU_TID_BASE + i;
    if (tl->ntracks >= GT_TIMELINE_MAX_TRACKS ||
        grow((void **)&tl->tracks, &tl->tracks_cap, sizeof(*tl->tracks), tl->ntracks + 1) != 0 ||
        gt_idmap_set(&tl->track_index, key, tl->ntracks) != 0)
        return 0;
    tl->tracks[tl->ntracks] = (tl_track){device, stream};
    return GT_TIMELINE_GPU_TID_BASE + tl->ntracks++;
}

void gt_tl_thread_name(gt_timeline *tl, uint32_t tid, uint32_t name)
{
    uint32_t i;
    if (gt_idmap_get(&tl->thread_index, tid, &i)) {
        tl->threads[i].name = name;
        return;
    }
    if (tl->nthreads >= GT_TIMELINE_MAX_THREADS ||
        grow((void **)&tl->threads, &tl->threads_cap, sizeof(*tl->threads), tl->nthreads + 1) !=
            0 ||
        gt_idmap_set(&tl->thread_index, tid, tl->nthreads) != 0) {
        tl->common.lost.threads++;
        return;
    }
    tl->threads[tl->nthreads++] = (tl_thread){tid, name};
}

tl_stack *gt_tl_stack(gt_timeline *tl, uint32_t tid, uint32_t domain)
{
    uint64_t key = tid | (uint64_t)domain << 32;
    uint32_t i;
    if (gt_idmap_get(&tl->stack_index, key, &i)) return &tl->stacks[i];
    if (tl->nstacks >= GT_TIMELINE_MAX_STACKS ||
        grow((void **)&tl->stacks, &tl->stacks_cap, sizeof(*tl->stacks), tl->nstacks + 1) != 0 ||
        gt_idmap_set(&tl->stack_index, key, tl->nstacks) != 0)
        return NULL;
    tl->stacks[tl->nstacks] = (tl_stack){.tid = tid, .domain = domain};
    return &tl->stacks[tl->nstacks++];
}

tl_range *gt_tl_range_find(gt_timeline *tl, uint64_t id)
{
    uint32_t i;
    return gt_idmap_get(&tl->range_index, id, &i) ? &tl->ranges[i] : NULL;
}

bool gt_tl_range_wait(gt_timeline *tl, const tl_range *r)
{
    tl_range *old = gt_tl_range_find(tl, r->id);
    if (old) { /* an id reused before its range ended: the newer one wins */
        *old = *r;
        return true;
    }
    if (tl->nranges >= GT_TIMELINE_MAX_RANGES ||
        grow((void **)&tl->ranges, &tl->ranges_cap, sizeof(*tl->ranges), tl->nranges + 1) != 0 ||
        gt_idmap_set(&tl->range_index, r->id, tl->nranges) != 0)
        return false;
    tl->ranges[tl->nranges++] = *r;
    return true;
}

void gt_tl_range_forget(gt_timeline *tl, tl_range *r)
{
    uint32_t i = (uint32_t)(r - tl->ranges), last = tl->nranges - 1;
    gt_idmap_remove(&tl->range_index, r->id);
    if (i != last) {
        tl->ranges[i] = tl->ranges[last];
        gt_idmap_set(&tl->range_index, tl->ranges[i].id, i); /* replacing never fails */
    }
    tl->nranges--;
}

static void metadata_text(gt_timeline *tl, const char *what, uint32_t tid, const char *text)
{
    size_t len = 0;
    char *quoted = escape(text, &len);
    if (quoted) gt_tl_metadata(tl, what, tid, "name", quoted, len, 0);
    free(quoted);
}

void gt_tl_write_metadata(gt_timeline *tl, const gt_process_info *p)
{
    char name[256];
    gt_timeline_process_name(p, tl->pid, name, sizeof name);
    metadata_text(tl, "process_name", (uint32_t)tl->pid, name);
    for (uint32_t i = 0; i < tl->nthreads; i++) {
        size_t len;
        const char *quoted = gt_tl_name(tl, tl->threads[i].name, &len);
        gt_tl_metadata(tl, "thread_name", tl->threads[i].tid, "name", quoted, len, 0);
    }
    for (uint32_t i = 0; i < tl->ntracks; i++) {
        gt_timeline_track_name(tl->tracks[i].device, tl->tracks[i].stream, name, sizeof name);
        metadata_text(tl, "thread_name", GT_TIMELINE_GPU_TID_BASE + i, name);
        /* GPU tracks after the host threads, in the order they appeared */
        gt_tl_metadata(tl, "thread_sort_index", GT_TIMELINE_GPU_TID_BASE + i, "sort_index", NULL, 0,
                       1000000 + i);
    }
}

void gt_tl_state_free(gt_timeline *tl)
{
    free(tl->name_off);
    free(tl->arena);
    free(tl->scratch);
    gt_idmap_free(&tl->track_index);
    free(tl->tracks);
    gt_idmap_free(&tl->thread_index);
    free(tl->threads);
    gt_idmap_free(&tl->stack_index);
    for (uint32_t i = 0; i < tl->nstacks; i++)
        free(tl->stacks[i].frames);
    free(tl->stacks);
    gt_idmap_free(&tl->range_index);
    free(tl->ranges);
}
