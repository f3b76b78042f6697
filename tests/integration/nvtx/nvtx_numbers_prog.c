/* The numbers NVTX carries beside its ranges, on the emulated driver: each
 * range below encloses one launch of `numbers_kernel`, whose duration the
 * test configures, so that payload rates per GPU second are known exactly
 * (check_numbers.py holds the same values).
 *
 *   - a plain payload of each type, on push ranges "p_<type>" (3 pushes
 *     each), on a start/end range, on a domain push and on a mark;
 *   - an extended payload of a registered schema {flops, bytes_read,
 *     bytes_written} on a domain push "solve" (2 pushes), and the same
 *     numbers given at the pop (nvtxRangePopPayload) of "solve_at_pop";
 *   - counters: an int64 one, a double one with a unit, a group of two;
 *   - a heap of 1 MiB from cuMemAlloc with regions added, resized and
 *     removed, and a second heap reset with regions in it;
 *   - memory per range: "alloc_phase" allocates 256 KiB and 128 KiB and
 *     frees the 128 KiB; "outer_phase" encloses it.
 *
 *   nvtx_numbers */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtMem.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "app_util.h"
#include "test_support.h"

#define PUSHES 3

static CUfunction kernel;

static void launch(void)
{
    app_check(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
}

static nvtxEventAttributes_t attrs(const char *message)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    return a;
}

/* Plain payloads: every numeric type NVTX's event attributes have. */
static void plain_payloads(nvtxDomainHandle_t lib)
{
    for (int i = 1; i <= PUSHES; i++) {
        nvtxEventAttributes_t a = attrs("p_u64");
        a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
        a.payload.ullValue = 1000000000000ull * (uint64_t)i;
        nvtxRangePushEx(&a);
        launch();
        nvtxRangePop();

        a = attrs("p_i64");
        a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
        a.payload.llValue = -5 * i;
        nvtxRangePushEx(&a);
        launch();
        nvtxRangePop();

        a = attrs("p_f64");
        a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
        a.payload.dValue = 0.25 * i;
        nvtxRangePushEx(&a);
        launch();
        nvtxRangePop();

        a = attrs("p_u32");
        a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
        a.payload.uiValue = 4000000000u;
        nvtxRangePushEx(&a);
        launch();
        nvtxRangePop();

        a = attrs("p_i32");
        a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
        a.payload.iValue = -7;
        nvtxRangePushEx(&a);
        launch();
        nvtxRangePop();

        a = attrs("p_f32");
        a.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
        a.payload.fValue = 1.5f;
        nvtxRangePushEx(&a);
        launch();
        nvtxRangePop();
    }
    nvtxEventAttributes_t a = attrs("p_start");
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = 42;
    nvtxRangeId_t id = nvtxRangeStartEx(&a);
    launch();
    nvtxRangeEnd(id);

    a = attrs("p_domain");
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = 9;
    nvtxDomainRangePushEx(lib, &a);
    launch();
    nvtxDomainRangePop(lib);

    a = attrs("p_mark");
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = 2.5;
    nvtxMarkEx(&a);
    nvtxMarkEx(&a);
}

typedef struct work_numbers {
    uint64_t flops;
    uint64_t bytes_read;
    uint32_t bytes_written;
} work_numbers;

static uint64_t work_schema(nvtxDomainHandle_t d)
{
    static const nvtxPayloadSchemaEntry_t entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "flops", NULL, 0, offsetof(work_numbers, flops), NULL,
         NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "bytes_read", NULL, 0,
         offsetof(work_numbers, bytes_read), NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "bytes_written", NULL, 0,
         offsetof(work_numbers, bytes_written), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t attr = {0};
    attr.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE;
    attr.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    attr.entries = entries;
    attr.numEntries = sizeof entries / sizeof entries[0];
    attr.payloadStaticSize = sizeof(work_numbers);
    uint64_t id = nvtxPayloadSchemaRegister(d, &attr);
    if (id == 0) app_wrong("nvtxPayloadSchemaRegister returned 0");
    return id;
}

static void extended_payloads(nvtxDomainHandle_t solver)
{
    uint64_t schema = work_schema(solver);
    for (int i = 0; i < 2; i++) {
        work_numbers w = {4556334, 1024000, 234544};
        nvtxPayloadData_t data = {schema, sizeof w, &w};
        nvtxEventAttributes_t a = attrs("solve");
        a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
        a.payload.ullValue = (uint64_t)(uintptr_t)&data;
        a.reserved0 = 1;
        nvtxDomainRangePushEx(solver, &a);
        launch();
        nvtxDomainRangePop(solver);
    }
    nvtxEventAttributes_t a = attrs("solve_at_pop");
    nvtxDomainRangePushEx(solver, &a);
    launch();
    work_numbers w = {1000, 2000, 3000};
    nvtxPayloadData_t data = {schema, sizeof w, &w};
    nvtxRangePopPayload(solver, &data, 1);
}

static void counters(nvtxDomainHandle_t d)
{
    nvtxCounterAttr_t c = {0};
    c.structSize = sizeof c;
    c.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_INT64;
    c.name = "queue_depth";
    uint64_t depth = nvtxCounterRegister(d, &c);
    static const int64_t depths[] = {3, 9, -2, 5};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++)
        nvtxCounterSampleInt64(d, depth, depths[i]);

    nvtxSemanticsCounter_t unit = {
        {sizeof unit, NVTX_SEMANTIC_ID_COUNTERS_V1, NVTX_COUNTER_SEMANTIC_VERSION, NULL},
        0,
        "ms",
        1,
        1,
        0,
        {0},
        {0}};
    c.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE;
    c.name = "step_time";
    c.semantics = &unit.header;
    uint64_t step = nvtxCounterRegister(d, &c);
    nvtxCounterSampleFloat64(d, step, 1.5);
    nvtxCounterSampleFloat64(d, step, 0.5);
    double last = 2.25;
    nvtxCounterSample(d, step, &last, sizeof last);

    typedef struct pair {
        int32_t hits;
        int32_t misses;
    } pair;
    static const nvtxPayloadSchemaEntry_t entries[] = {
        {NVTX_PAYLOAD_ENTRY_FLAG_COUNTER, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "hits", NULL, 0,
         offsetof(pair, hits), NULL, NULL},
        {NVTX_PAYLOAD_ENTRY_FLAG_COUNTER, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "misses", NULL, 0,
         offsetof(pair, misses), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t attr = {0};
    attr.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS;
    attr.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    attr.flags = NVTX_PAYLOAD_SCHEMA_FLAG_COUNTER_GROUP;
    attr.entries = entries;
    attr.numEntries = 2;
    attr.payloadStaticSize = sizeof(pair);
    nvtxCounterAttr_t g = {0};
    g.structSize = sizeof g;
    g.schemaId = nvtxPayloadSchemaRegister(d, &attr);
    g.name = "cache";
    uint64_t cache = nvtxCounterRegister(d, &g);
    pair p = {10, 1};
    nvtxCounterSample(d, cache, &p, sizeof p);
    p = (pair){30, 4};
    nvtxCounterSample(d, cache, &p, sizeof p);
}

static nvtxMemHeapHandle_t heap_of(nvtxDomainHandle_t d, CUdeviceptr base, size_t size,
                                   const char *name)
{
    nvtxMemVirtualRangeDesc_t range = {size, (const void *)(uintptr_t)base};
    nvtxMemHeapDesc_t desc = {0};
    desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    desc.structSize = sizeof desc;
    desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof range;
    desc.typeSpecificDesc = &range;
    desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
    desc.message.ascii = name;
    return nvtxMemHeapRegister(d, &desc);
}

static void regions_add(nvtxDomainHandle_t d, nvtxMemHeapHandle_t heap,
                        const nvtxMemVirtualRangeDesc_t *r, size_t n)
{
    nvtxMemRegionsRegisterBatch_t b = {0};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.heap = heap;
    b.regionCount = n;
    b.regionDescElementSize = sizeof *r;
    b.regionDescElements = r;
    nvtxMemRegionsRegister(d, &b);
}

static void heaps(nvtxDomainHandle_t d)
{
    CUdeviceptr base, base2;
    app_check(cuMemAlloc(&base, 1 << 20), "cuMemAlloc");
    nvtxMemHeapHandle_t heap = heap_of(d, base, 1 << 20, "pool");
    const nvtxMemVirtualRangeDesc_t r[3] = {{65536, (const void *)(uintptr_t)base},
                                            {65536, (const void *)(uintptr_t)(base + 65536)},
                                            {65536, (const void *)(uintptr_t)(base + 131072)}};
    regions_add(d, heap, r, 3);
    nvtxMemRegionRef_t ref = {.pointer = r[1].ptr};
    nvtxMemRegionsUnregisterBatch_t u = {0};
    u.extCompatID = NVTX_EXT_COMPATID_MEM;
    u.structSize = sizeof u;
    u.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    u.refCount = 1;
    u.refElementSize = sizeof ref;
    u.refElements = &ref;
    nvtxMemRegionsUnregister(d, &u);
    const nvtxMemVirtualRangeDesc_t bigger = {200000, r[2].ptr};
    nvtxMemRegionsResizeBatch_t rs = {0};
    rs.extCompatID = NVTX_EXT_COMPATID_MEM;
    rs.structSize = sizeof rs;
    rs.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    rs.regionDescCount = 1;
    rs.regionDescElementSize = sizeof bigger;
    rs.regionDescElements = &bigger;
    nvtxMemRegionsResize(d, &rs);

    app_check(cuMemAlloc(&base2, 4096), "cuMemAlloc");
    nvtxMemHeapHandle_t scratch = heap_of(d, base2, 4096, "scratch");
    const nvtxMemVirtualRangeDesc_t s[2] = {{1024, (const void *)(uintptr_t)base2},
                                            {2048, (const void *)(uintptr_t)(base2 + 1024)}};
    regions_add(d, scratch, s, 2);
    nvtxMemHeapReset(d, scratch);
    nvtxMemHeapUnregister(d, scratch);
}

static void memory_per_range(void)
{
    CUdeviceptr a, b;
    nvtxRangePushA("outer_phase");
    nvtxRangePushA("alloc_phase");
    app_check(cuMemAlloc(&a, 256 * 1024), "cuMemAlloc");
    app_check(cuMemAlloc(&b, 128 * 1024), "cuMemAlloc");
    app_check(cuMemFree(b), "cuMemFree");
    launch();
    nvtxRangePop();
    app_check(cuMemFree(a), "cuMemFree");
    nvtxRangePop();
}

int main(void)
{
    app_program = "nvtx_numbers";
    context_on_device0();
    kernel = empty_kernel("numbers_kernel", NULL);
    nvtxDomainHandle_t lib = nvtxDomainCreateA("lib");
    nvtxDomainHandle_t solver = nvtxDomainCreateA("solver");
    /* The heaps first: the memory per range then starts from the 1 MiB
     * and 4 KiB they hold. */
    heaps(lib);
    memory_per_range();
    plain_payloads(lib);
    extended_payloads(solver);
    counters(lib);
    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    printf("done\n");
    return 0;
}
