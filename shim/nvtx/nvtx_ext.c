/* libgputrace.so as the injection of NVTX's extension modules: payloads
 * (nvToolsExtPayload.h), counters (nvToolsExtCounters.h) and memory heaps
 * (nvToolsExtMem.h).
 *
 * Each extension a copy of NVTX uses calls the library's
 * InitializeInjectionNvtxExtension once, after the core injection
 * (InitializeInjectionNvtx2), with a description of the module: its id and
 * its function slots, which the injection fills. Slots left alone become
 * NVTX's no-ops. A module this library does not know is declined (NVTX
 * then makes its calls no-ops).
 *
 * The payload module's ranges and marks are the core calls' ranges and
 * marks with numbers attached, recorded by the same handlers. */
#include "active_copy.h"
#include "log.h"
#include "process.h"
#include "nvtx_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtMem.h>

/* -------------------------------------------------- the payload module */

static uint64_t NVTX_API schema_register(nvtxDomainHandle_t h, const nvtxPayloadSchemaAttr_t *a)
{
    int saved = errno;
    uint64_t id = gt_nvtx_schema_register(gt_nvtx_domain_of(h), a);
    errno = saved;
    return id;
}

/* Enums name values the report does not show: a number is all the caller
 * needs back, unique among those handed out. */
static uint64_t NVTX_API enum_register(nvtxDomainHandle_t h, const nvtxPayloadEnumAttr_t *a)
{
    (void)h;
    static _Atomic uint64_t next = NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START + (1ull << 31);
    if (a && (a->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID) && a->schemaId)
        return a->schemaId;
    return atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

static gt_nvtx_message payload_message(const nvtxPayloadData_t *data, size_t count)
{
    return (gt_nvtx_message){.ext = data, .next = data ? count : 0};
}

static void NVTX_API mark_payload(nvtxDomainHandle_t h, const nvtxPayloadData_t *data, size_t count)
{
    gt_nvtx_message m = payload_message(data, count);
    gt_nvtx_mark(gt_nvtx_domain_of(h), &m);
}

static int NVTX_API push_payload(nvtxDomainHandle_t h, const nvtxPayloadData_t *data, size_t count)
{
    gt_nvtx_message m = payload_message(data, count);
    return gt_nvtx_range_push(gt_nvtx_domain_of(h), &m);
}

static int NVTX_API pop_payload(nvtxDomainHandle_t h, const nvtxPayloadData_t *data, size_t count)
{
    gt_nvtx_message m = payload_message(data, count);
    return gt_nvtx_range_pop(gt_nvtx_domain_of(h), &m);
}

static nvtxRangeId_t NVTX_API start_payload(nvtxDomainHandle_t h, const nvtxPayloadData_t *data,
                                            size_t count)
{
    gt_nvtx_message m = payload_message(data, count);
    return gt_nvtx_range_start(gt_nvtx_domain_of(h), &m);
}

static void NVTX_API end_payload(nvtxDomainHandle_t h, nvtxRangeId_t id,
                                 const nvtxPayloadData_t *data, size_t count)
{
    gt_nvtx_message m = payload_message(data, count);
    gt_nvtx_range_end(gt_nvtx_domain_of(h), id, &m);
}

/* Callers (the Python nvtx package) skip building payloads for a domain
 * that is not enabled: with `nvtx` off nothing would read them. */
static uint8_t NVTX_API domain_is_enabled(nvtxDomainHandle_t h)
{
    (void)h;
    return (uint8_t)gt_nvtx_enabled();
}

#define SLOT(name, fn)                                                                             \
    {                                                                                              \
        NVTX3EXT_CBID_##name, (void (*)(void))(fn)                                                 \
    }

const gt_nvtx_slot gt_nvtx_payload_slots[] = {
    SLOT(nvtxPayloadSchemaRegister, schema_register),
    SLOT(nvtxPayloadEnumRegister, enum_register),
    SLOT(nvtxMarkPayload, mark_payload),
    SLOT(nvtxRangePushPayload, push_payload),
    SLOT(nvtxRangePopPayload, pop_payload),
    SLOT(nvtxRangeStartPayload, start_payload),
    SLOT(nvtxRangeEndPayload, end_payload),
    SLOT(nvtxDomainIsEnabled, domain_is_enabled),
};
const unsigned gt_nvtx_payload_nslots =
    sizeof gt_nvtx_payload_slots / sizeof gt_nvtx_payload_slots[0];

/* -------------------------------------------------------- the injection */

/* Fills the slots the module has room for; the number filled. */
static int attach(const nvtxExtModuleInfo_t *info, const gt_nvtx_slot *slots, unsigned n)
{
    if (info->segmentsCount < 1 || !info->segments) return 0;
    const nvtxExtModuleSegment_t *seg = &info->segments[0];
    if (!seg->functionSlots) return 0;
    int filled = 0;
    for (unsigned i = 0; i < n; i++) {
        if (slots[i].id >= seg->slotCount) continue;
        seg->functionSlots[slots[i].id] = (intptr_t)slots[i].fn;
        filled++;
    }
    return filled;
}

__attribute__((visibility("default"))) int NVTX_API
InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info);

int NVTX_API InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
    int saved = errno;
    gt_init_once();
    if (!gt_copy_active()) {
        typedef int(NVTX_API * init_fn)(nvtxExtModuleInfo_t *);
        init_fn active = (init_fn)gt_copy_active_symbol("InitializeInjectionNvtxExtension");
        int r = active ? active(info) : 0;
        errno = saved;
        return r;
    }
    int filled = 0;
    const char *what = "an unknown";
    if (info && info->structSize >= offsetof(nvtxExtModuleInfo_t, getExportFunction)) {
        switch (info->moduleId) {
        case NVTX_EXT_PAYLOAD_MODULEID:
            what = "the payload";
            filled = attach(info, gt_nvtx_payload_slots, gt_nvtx_payload_nslots);
            break;
        case NVTX_EXT_COUNTERS_MODULEID:
            what = "the counters";
            filled = attach(info, gt_nvtx_counter_slots, gt_nvtx_counter_nslots);
            break;
        case NVTX_EXT_MODULEID_MEM:
            what = "the memory";
            filled = attach(info, gt_nvtx_heap_slots, gt_nvtx_heap_nslots);
            break;
        default:
            break;
        }
    }
    gt_debug("NVTX: %s extension module (id %u): %d callbacks attached", what,
             info ? (unsigned)info->moduleId : 0u, filled);
    errno = saved;
    return filled > 0;
}
