/* Reading activity records into the correlation table (cupti_internal.h),
 * on the draining thread.
 *
 * Only leading fields are read: kind, start, end, device and correlation
 * id. They lie alike in every record version CUPTI 12 and 13 write (the
 * asserts below hold the 13.0 headers to it), so a CUPTI 12 library's
 * records read as well as a CUPTI 13 one's. A record CUPTI could not give
 * timestamps (0, as when its device buffers run out) folds in untimed:
 * the call is reported without GPU time, never with an invented one.
 *
 * A kernel record with a graph id is a node a graph launch ran: besides
 * the launch's span it is kept as a node under its own (demangled) name.
 * Names are interned through a small cache on CUPTI's name pointer, which
 * stays the same for a kernel; the cache keeps the name's start and length
 * to tell a reused pointer. */
#include "cupti_internal.h"

#include <stddef.h>
#include <string.h>

#include "intercept.h"

#define SAME_OFFSET(a, b, field)                                                                   \
    _Static_assert(offsetof(a, field) == offsetof(b, field), #a " and " #b " differ at " #field)
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, start);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, end);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, deviceId);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, correlationId);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, name);
SAME_OFFSET(CUpti_ActivityKernel9, CUpti_ActivityKernel10, graphId);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, start);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, end);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, deviceId);
SAME_OFFSET(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, correlationId);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, start);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, end);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, deviceId);
SAME_OFFSET(CUpti_ActivityMemset3, CUpti_ActivityMemset4, correlationId);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4, start);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4, end);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4, srcDeviceId);
SAME_OFFSET(CUpti_ActivityMemcpyPtoP3, CUpti_ActivityMemcpyPtoP4, correlationId);

static uint64_t read_at; /* the drain pass's time */
static int read_forced;  /* the buffers come from a forced flush */
static uint64_t untimed;
static uint64_t dropped;

void gt_cupti_records_set_pass(uint64_t now_ns)
{
    read_at = now_ns;
}

void gt_cupti_records_set_forced(int forced)
{
    read_forced = forced;
}

#define NAME_CACHE 256u
#define NAME_HEAD 16u

static struct name_slot {
    const char *ptr;
    size_t len;
    char head[NAME_HEAD];
    uint32_t id;
} names[NAME_CACHE];

static uint32_t node_name(const char *mangled)
{
    if (!mangled) return 0;
    struct name_slot *s = &names[((uintptr_t)mangled >> 4) % NAME_CACHE];
    size_t len = strlen(mangled);
    if (s->ptr == mangled && s->len == len && strncmp(s->head, mangled, NAME_HEAD) == 0)
        return s->id;
    s->ptr = mangled;
    s->len = len;
    strncpy(s->head, mangled, NAME_HEAD);
    s->id = gt_kernel_name_of_mangled(mangled);
    return s->id;
}

static uint16_t device_id(uint32_t device)
{
    return device > UINT16_MAX ? UINT16_MAX : (uint16_t)device;
}

/* Folds a record into its entry; its times mapped (0, 0 untimed) into the
 * node, when one is given. */
static void add(uint32_t corr, uint64_t start, uint64_t end, uint32_t device, gt_cupti_node *node)
{
    uint64_t s = gt_cupti_clock_to_mono(start), e = gt_cupti_clock_to_mono(end);
    if (!start || !end || end < start) {
        untimed++;
        s = e = 0;
    }
    gt_cupti_table_add(corr, s, e, device_id(device), read_at, read_forced);
    if (node) {
        node->start = s;
        node->end = e;
        node->device = device_id(device);
        gt_cupti_table_add_node(corr, node);
    }
}

void gt_cupti_records_read(const uint8_t *records, size_t valid)
{
    CUpti_Activity *r = NULL;
    while (gt_cupti.next_record((uint8_t *)records, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel9 *k = (const void *)r;
            gt_cupti_node node = {.name = k->graphId ? node_name(k->name) : 0};
            add(k->correlationId, k->start, k->end, k->deviceId, k->graphId ? &node : NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy5 *m = (const void *)r;
            add(m->correlationId, m->start, m->end, m->deviceId, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            const CUpti_ActivityMemcpyPtoP4 *p = (const void *)r;
            add(p->correlationId, p->start, p->end, p->srcDeviceId, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset3 *m = (const void *)r;
            add(m->correlationId, m->start, m->end, m->deviceId, NULL);
            break;
        }
        default:
            break;
        }
    }
    size_t lost = 0;
    if (gt_cupti.dropped_records(NULL, 0, &lost) == CUPTI_SUCCESS) dropped += lost;
}

uint64_t gt_cupti_records_dropped(void)
{
    return dropped;
}

uint64_t gt_cupti_records_untimed(void)
{
    return untimed;
}
