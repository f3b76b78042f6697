/* Records of GPU work, in the struct versions CUPTI 13.0 writes, built
 * from the emulated driver's reports. */
#include "cupti_emu.h"

#include <stdlib.h>
#include <string.h>

size_t gt_cupti_record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        return sizeof(CUpti_ActivityGraphTrace2);
    default:
        return 0;
    }
}

/* ---- kernel names ---- */

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char **names; /* open addressing; capacity 0 or a power of two */
static size_t n_names, names_capacity;

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static char **name_slot(char **table, size_t capacity, const char *name)
{
    size_t i = name_hash(name) & (capacity - 1);
    while (table[i] && strcmp(table[i], name) != 0)
        i = (i + 1) & (capacity - 1);
    return &table[i];
}

static bool grow_names(void)
{
    size_t capacity = names_capacity ? 2 * names_capacity : 256;
    char **table = calloc(capacity, sizeof *table);
    if (!table) return false;
    for (size_t i = 0; i < names_capacity; i++)
        if (names[i]) *name_slot(table, capacity, names[i]) = names[i];
    free(names);
    names = table;
    names_capacity = capacity;
    return true;
}

const char *gt_cupti_intern(const char *name)
{
    if (!name) return NULL;
    pthread_mutex_lock(&names_lock);
    const char *kept = NULL;
    if (2 * (n_names + 1) <= names_capacity || grow_names()) {
        char **slot = name_slot(names, names_capacity, name);
        if (!*slot && (*slot = strdup(name)) != NULL) n_names++;
        kept = *slot;
    }
    pthread_mutex_unlock(&names_lock);
    return kept;
}

void gt_cupti_names_prefork(void)
{
    pthread_mutex_lock(&names_lock);
}

void gt_cupti_names_postfork(void)
{
    pthread_mutex_unlock(&names_lock);
}

/* ---- records ---- */

/* Relaxed: grid ids need only be unique. */
static _Atomic int64_t last_grid_id;

static uint8_t memory_kind(enum gtemu_memory m)
{
    switch (m) {
    case GTEMU_MEMORY_PAGEABLE:
        return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    case GTEMU_MEMORY_PINNED:
        return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    case GTEMU_MEMORY_DEVICE:
        return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    case GTEMU_MEMORY_MANAGED:
        return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    default:
        return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
    }
}

static bool on_device(const struct gtemu_work_side *side)
{
    return side->memory == GTEMU_MEMORY_DEVICE || side->memory == GTEMU_MEMORY_MANAGED;
}

/* CUPTI names a copy by where its sides lie; managed memory is device
 * memory to it, and a copy between devices is peer to peer. */
static uint8_t copy_kind(const struct gtemu_work *w)
{
    bool src = on_device(&w->src), dst = on_device(&w->dst);
    if (src && dst)
        return w->src.device != w->dst.device ? CUPTI_ACTIVITY_MEMCPY_KIND_PTOP
                                              : CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    if (dst) return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    if (src) return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

static void kernel_record(gt_cupti_record *rec, const struct gtemu_work *w, uint32_t correlation)
{
    CUpti_ActivityKind kind = gt_cupti_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                                  ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                                  : CUPTI_ACTIVITY_KIND_KERNEL;
    uint64_t threads =
        (uint64_t)w->grid[0] * w->grid[1] * w->grid[2] * w->block[0] * w->block[1] * w->block[2];
    uint64_t local_total = threads * w->local_bytes_per_thread;
    rec->kernel = (CUpti_ActivityKernel10){
        .kind = kind,
        .registersPerThread = (uint16_t)w->registers_per_thread,
        .start = w->start,
        .end = w->end,
        .completed = w->end,
        .deviceId = w->device,
        .contextId = w->context_id,
        .streamId = w->stream_id,
        .gridX = (int32_t)w->grid[0],
        .gridY = (int32_t)w->grid[1],
        .gridZ = (int32_t)w->grid[2],
        .blockX = (int32_t)w->block[0],
        .blockY = (int32_t)w->block[1],
        .blockZ = (int32_t)w->block[2],
        .staticSharedMemory = (int32_t)w->static_shared_bytes,
        .dynamicSharedMemory = (int32_t)w->dynamic_shared_bytes,
        .localMemoryPerThread = w->local_bytes_per_thread,
        .localMemoryTotal = local_total > UINT32_MAX ? UINT32_MAX : (uint32_t)local_total,
        .correlationId = correlation,
        .gridId = atomic_fetch_add_explicit(&last_grid_id, 1, memory_order_relaxed) + 1,
        .name = gt_cupti_intern(w->name),
        .queued = CUPTI_TIMESTAMP_UNKNOWN,
        .submitted = CUPTI_TIMESTAMP_UNKNOWN,
        .launchType = w->cooperative ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE
                                     : CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR,
        .sharedMemoryExecuted = w->static_shared_bytes + w->dynamic_shared_bytes,
        .graphNodeId = w->graph_node_id,
        .shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT,
        .graphId = w->graph_id,
        .channelType = CUPTI_CHANNEL_TYPE_COMPUTE,
        .localMemoryTotal_v2 = local_total,
    };
}

static void copy_record(gt_cupti_record *rec, const struct gtemu_work *w, uint32_t correlation,
                        uint8_t kind)
{
    uint8_t flags = w->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    if (kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) {
        rec->peer = (CUpti_ActivityMemcpyPtoP4){
            .kind = CUPTI_ACTIVITY_KIND_MEMCPY2,
            .copyKind = kind,
            .srcKind = memory_kind(w->src.memory),
            .dstKind = memory_kind(w->dst.memory),
            .flags = flags,
            .bytes = w->bytes,
            .start = w->start,
            .end = w->end,
            .deviceId = w->device,
            .contextId = w->context_id,
            .streamId = w->stream_id,
            .srcDeviceId = (uint32_t)w->src.device,
            .srcContextId = w->src.context_id,
            .dstDeviceId = (uint32_t)w->dst.device,
            .dstContextId = w->dst.context_id,
            .correlationId = correlation,
            .graphNodeId = w->graph_node_id,
            .graphId = w->graph_id,
            .channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY,
        };
        return;
    }
    rec->memcpy = (CUpti_ActivityMemcpy6){
        .kind = CUPTI_ACTIVITY_KIND_MEMCPY,
        .copyKind = kind,
        .srcKind = memory_kind(w->src.memory),
        .dstKind = memory_kind(w->dst.memory),
        .flags = flags,
        .bytes = w->bytes,
        .start = w->start,
        .end = w->end,
        .deviceId = w->device,
        .contextId = w->context_id,
        .streamId = w->stream_id,
        .correlationId = correlation,
        .graphNodeId = w->graph_node_id,
        .graphId = w->graph_id,
        .channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY,
        .copyCount = 1,
    };
}

static void memset_record(gt_cupti_record *rec, const struct gtemu_work *w, uint32_t correlation)
{
    rec->memset = (CUpti_ActivityMemset4){
        .kind = CUPTI_ACTIVITY_KIND_MEMSET,
        .value = w->value,
        .bytes = w->bytes,
        .start = w->start,
        .end = w->end,
        .deviceId = w->device,
        .contextId = w->context_id,
        .streamId = w->stream_id,
        .correlationId = correlation,
        .flags = w->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0,
        .memoryKind = memory_kind(w->target),
        .graphNodeId = w->graph_node_id,
        .graphId = w->graph_id,
        .channelType = CUPTI_CHANNEL_TYPE_COMPUTE,
    };
}

static void graph_record(gt_cupti_record *rec, const struct gtemu_work *w, uint32_t correlation)
{
    rec->graph = (CUpti_ActivityGraphTrace2){
        .kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
        .correlationId = correlation,
        .start = w->start,
        .end = w->end,
        .deviceId = w->device,
        .graphId = w->graph_id,
        .contextId = w->context_id,
        .streamId = w->stream_id,
        .endDeviceId = w->device,
        .endContextId = w->context_id,
    };
}

/* The kind of record the work makes with what is enabled; INVALID: none.
 * With GRAPH_TRACE, work a graph runs makes no record of its own. */
static CUpti_ActivityKind record_kind(const struct gtemu_work *w, uint8_t *copy)
{
    if (w->kind == GTEMU_WORK_GRAPH)
        return gt_cupti_kind_on(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) ? CUPTI_ACTIVITY_KIND_GRAPH_TRACE
                                                                 : CUPTI_ACTIVITY_KIND_INVALID;
    if (w->graph_id && gt_cupti_kind_on(CUPTI_ACTIVITY_KIND_GRAPH_TRACE))
        return CUPTI_ACTIVITY_KIND_INVALID;
    CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_INVALID;
    switch (w->kind) {
    case GTEMU_WORK_KERNEL:
        if (gt_cupti_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ||
            gt_cupti_kind_on(CUPTI_ACTIVITY_KIND_KERNEL))
            kind = CUPTI_ACTIVITY_KIND_KERNEL;
        break;
    case GTEMU_WORK_MEMCPY:
        *copy = copy_kind(w);
        kind = *copy == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP ? CUPTI_ACTIVITY_KIND_MEMCPY2
                                                        : CUPTI_ACTIVITY_KIND_MEMCPY;
        if (!gt_cupti_kind_on(kind)) kind = CUPTI_ACTIVITY_KIND_INVALID;
        break;
    case GTEMU_WORK_MEMSET:
        if (gt_cupti_kind_on(CUPTI_ACTIVITY_KIND_MEMSET)) kind = CUPTI_ACTIVITY_KIND_MEMSET;
        break;
    default:
        break;
    }
    return kind;
}

void gt_cupti_record_work(const struct gtemu_work *w, uint32_t correlation_id)
{
    uint8_t copy = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
    CUpti_ActivityKind kind = record_kind(w, &copy);
    if (kind == CUPTI_ACTIVITY_KIND_INVALID) return;
    gt_cupti_record rec;
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
        kernel_record(&rec, w, correlation_id);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        copy_record(&rec, w, correlation_id, copy);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        memset_record(&rec, w, correlation_id);
        break;
    default:
        graph_record(&rec, w, correlation_id);
        break;
    }
    gt_cupti_emit(&rec, w->end, true);
}
