/* libgputrace.so as an NVTX injection library (DESIGN §2).
 *
 * NVTX v3 is header-only: each module that uses it carries its own copy of
 * the API, whose first call loads the library named by
 * NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2 with the
 * copy's export table. Through that table the injection fills the copy's
 * function slots (CORE: the global-domain calls; CORE2: domains,
 * registered strings). A process may hold many copies (the program, each
 * library using NVTX), so this runs once per copy; everything the handlers
 * share is process-wide.
 *
 * Records: push, pop, start, end and mark become GT_EV_NVTX_* records
 * (category `nvtx`), thread naming a GT_EV_THREAD_NAME record (always: it
 * names the thread in the Chrome trace whatever is recorded). NVTX calls
 * are not `api` rows: they are the program's annotations, not CUDA calls,
 * have no status to report, and the nvtx table already counts them.
 * Timestamps leave the tool's own work outside the ranges: a range opens
 * once its name is resolved and closes as the closing call starts.
 *
 * Capture windows (capture.h): a range is recorded when it opens inside
 * a window, and then so is its end, wherever that falls, so that the
 * report pairs every range it has; one opened outside is not recorded at
 * all. Marks are recorded inside windows. With nvtx:NAME a range of that
 * name opens a window before it is recorded, and its end closes it after.
 * Which pushes were recorded is kept per thread, domain and level (the
 * first 64 levels; deeper, the window at the pop decides); a start's
 * range id carries it in its top bits.
 *
 * Return values are NVTX's whether or not `nvtx` is recorded: a push
 * returns the 0-based level of the range it opens in its domain, a pop the
 * level of the range it closes (-1 when none is open), a start a range id
 * unique in the process. Push depths are kept per thread and domain.
 *
 * The first call may come before the shim's constructor ran (a static
 * initialiser of the program or of a library loaded before it): the entry
 * point starts the shim itself. */
#include "capture_window.h"
#include "active_copy.h"
#include "clock.h"
#include "compiler.h"
#include "config.h"
#include "event.h"
#include "log.h"
#include "pipeline.h"
#include "process.h"
#include "record.h"
#include "settings.h"
#include "nvtx_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RECORDED_LEVELS 64u /* levels whose push is remembered as recorded or not */
#define CAPTURE_NEST 16u    /* ranges of the capture's name open at once on a thread */

/* Range ids: a start made outside a window (not recorded), one of the
 * capture's name. Ids count from 1 and never reach these bits. */
#define ID_UNRECORDED (1ull << 62)
#define ID_CAPTURE (1ull << 63)

/* What one thread keeps: push depths per domain, which pushes were
 * recorded, the capture ranges it has open, the message cache. */
typedef struct nvtx_thread {
    int32_t depth[GT_NVTX_DEPTH_SLOTS];
    uint64_t recorded[GT_NVTX_DEPTH_SLOTS]; /* bit L: the push at level L was recorded */
    uint32_t n_capture;
    struct {
        uint32_t slot;
        int32_t level;
    } capture[CAPTURE_NEST];
    gt_nvtx_name_cache names;
} nvtx_thread;

/* The state lives on the heap, freed at thread exit by the key's
 * destructor; only its pointer is static TLS, which a library loaded by
 * dlopen (NVTX's own loading, without LD_PRELOAD) has little of. */
static __thread nvtx_thread *thread_state __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_key;
static int thread_key_made; /* written once under key_once, before any handler runs */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Ids need only be unique: relaxed. 0 is never handed out. */
static _Atomic uint64_t next_range_id = 1;

static void thread_state_free(void *state)
{
    free(state);
    thread_state = NULL;
}

static void make_key(void)
{
    thread_key_made = pthread_key_create(&thread_key, thread_state_free) == 0;
}

/* NULL when no memory (or no key to free it with): levels are then -1. */
static nvtx_thread *thread_new(void)
{
    if (!thread_key_made) return NULL;
    int saved = errno;
    nvtx_thread *t = calloc(1, sizeof(*t));
    if (t && pthread_setspecific(thread_key, t) != 0) {
        free(t);
        t = NULL;
    }
    thread_state = t;
    errno = saved;
    return t;
}

static inline nvtx_thread *thread_get(void)
{
    nvtx_thread *t = thread_state;
    return GT_LIKELY(t) ? t : thread_new();
}

static inline int nvtx_recorded(void)
{
    return (gt_cfg.categories & GT_CAT_BIT(GT_CAT_NVTX)) != 0;
}

/* Recorded now: `nvtx` is on and a capture window is open. */
static inline int nvtx_recorded_now(void)
{
    return nvtx_recorded() && gt_capture_open();
}

#define FIELD_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* The payload types of nvtxEventAttributes_t as the report names them. */
static uint8_t payload_kind(int32_t type)
{
    switch (type) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        return GT_NUM_U64;
    case NVTX_PAYLOAD_TYPE_INT64:
        return GT_NUM_I64;
    case NVTX_PAYLOAD_TYPE_DOUBLE:
        return GT_NUM_F64;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        return GT_NUM_U32;
    case NVTX_PAYLOAD_TYPE_INT32:
        return GT_NUM_I32;
    case NVTX_PAYLOAD_TYPE_FLOAT:
        return GT_NUM_F32;
    default:
        return GT_NUM_NONE;
    }
}

/* The attributes' payload: a number of its own type (32-bit ones widened,
 * a float to a double), or extended payloads (NVTX_PAYLOAD_TYPE_EXT: an
 * array of nvtxPayloadData_t, as many as reserved0 says). */
static void payload_of(const nvtxEventAttributes_t *a, gt_nvtx_message *m)
{
    if (GT_LIKELY(a->payloadType == NVTX_PAYLOAD_UNKNOWN)) return; /* most ranges have none */
    if (a->payloadType == NVTX_PAYLOAD_TYPE_EXT) {
        m->ext = (const nvtxPayloadData_t *)(uintptr_t)a->payload.ullValue;
        m->next = m->ext ? (size_t)(uint32_t)a->reserved0 : 0;
        return;
    }
    m->payload_kind = payload_kind(a->payloadType);
    switch (m->payload_kind) {
    case GT_NUM_U64:
        m->payload = a->payload.ullValue;
        break;
    case GT_NUM_I64:
        m->payload = (uint64_t)a->payload.llValue;
        break;
    case GT_NUM_F64:
        memcpy(&m->payload, &a->payload.dValue, sizeof m->payload);
        break;
    case GT_NUM_U32:
        m->payload = a->payload.uiValue;
        break;
    case GT_NUM_I32:
        m->payload = (uint64_t)(int64_t)a->payload.iValue;
        break;
    case GT_NUM_F32: {
        double d = a->payload.fValue;
        memcpy(&m->payload, &d, sizeof m->payload);
        break;
    }
    default:
        break;
    }
}

/* The fields the structure's declared size covers (NVTX's rule for
 * attribute structures of other versions); none without one. */
static gt_nvtx_message message_of(const nvtxEventAttributes_t *a)
{
    gt_nvtx_message m = {0};
    if (!a) return m;
    size_t size = a->size;
    if (size >= FIELD_END(nvtxEventAttributes_t, category)) m.category = a->category;
    if (size >= FIELD_END(nvtxEventAttributes_t, color) && a->colorType == NVTX_COLOR_ARGB)
        m.color = a->color;
    if (size >= FIELD_END(nvtxEventAttributes_t, payload)) payload_of(a, &m);
    if (size >= FIELD_END(nvtxEventAttributes_t, message)) {
        m.type = a->messageType;
        m.value = a->message.ascii;
    }
    return m;
}

static uint32_t message_name(nvtx_thread *t, const gt_nvtx_message *m)
{
    switch (m->type) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return gt_nvtx_name_a(t ? &t->names : NULL, m->value);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return gt_nvtx_name_w(m->value);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return gt_nvtx_string_id((nvtxStringHandle_t)m->value);
    default:
        return 0;
    }
}

/* The string ids of GPUTRACE_CAPTURE=nvtx:NAME[@DOMAIN], interned as
 * messages and domain names are, so that ids compare. */
static struct {
    uint32_t name, domain;
    int any_domain;
} capture_ids;
static pthread_once_t capture_once = PTHREAD_ONCE_INIT;

static void capture_intern(void)
{
    capture_ids.name = gt_nvtx_name_a(NULL, gt_cfg.capture_name);
    capture_ids.any_domain = strcmp(gt_cfg.capture_domain, "*") == 0;
    if (gt_cfg.capture_domain[0] && !capture_ids.any_domain)
        capture_ids.domain = gt_nvtx_name_a(NULL, gt_cfg.capture_domain);
}

/* Whether a range with this message in this domain is one the nvtx
 * capture mode waits for. */
static int capture_match(nvtx_thread *t, const gt_nvtx_domain *d, const gt_nvtx_message *m)
{
    if (GT_LIKELY(gt_cfg.capture != GT_CAPTURE_NVTX)) return 0;
    pthread_once(&capture_once, capture_intern);
    if (!capture_ids.name) return 0; /* no memory to intern it: nothing matches */
    if (!capture_ids.any_domain && d->name != capture_ids.domain) return 0;
    return message_name(t, m) == capture_ids.name;
}

/* A push at (slot, level) of the capture's name opens a window; its pop
 * closes it. Past CAPTURE_NEST open at once, a push changes nothing. */
static void capture_push(nvtx_thread *t, uint32_t slot, int32_t level)
{
    if (!t || t->n_capture >= CAPTURE_NEST) return;
    t->capture[t->n_capture].slot = slot;
    t->capture[t->n_capture].level = level;
    t->n_capture++;
    gt_capture_nvtx(1);
}

static void capture_pop(nvtx_thread *t, uint32_t slot, int32_t level)
{
    if (!t) return;
    for (uint32_t i = t->n_capture; i-- > 0;) {
        if (t->capture[i].slot != slot || t->capture[i].level != level) continue;
        memmove(&t->capture[i], &t->capture[i + 1], (t->n_capture - i - 1) * sizeof t->capture[0]);
        t->n_capture--;
        gt_capture_nvtx(-1);
        return;
    }
}

/* One record of a plain payload (or none), `fields` 1 when fields records
 * follow it; ticks 0: stamped now, after the message is resolved. Returns
 * its timestamp; 0 when it was dropped. */
static uint64_t record_plain(uint8_t kind, nvtx_thread *t, const gt_nvtx_domain *d,
                             const gt_nvtx_message *m, uint64_t range_id, uint64_t ticks,
                             uint8_t payload_kind, uint64_t payload, uint8_t fields)
{
    uint32_t name = m ? message_name(t, m) : 0;
    uint32_t category = m ? gt_nvtx_category(d, m->category) : 0;
    gt_event *ev = gt_ev_begin();
    if (!ev) return 0;
    ev->kind = kind;
    ev->device = GT_NO_DEVICE;
    ev->name = name;
    ev->u.nvtx.range_id = range_id;
    ev->u.nvtx.domain = d->name;
    ev->u.nvtx.category = category;
    ev->u.nvtx.color = m ? m->color : 0;
    ev->u.nvtx.payload_kind = payload_kind;
    ev->u.nvtx.fields = fields;
    ev->u.nvtx.payload = payload;
    ev->host_start = ticks ? ticks : gt_clock_ticks();
    uint64_t stamp = ev->host_start;
    gt_ev_commit(ev);
    return stamp;
}

/* A record with extended payloads: the numbers they hold follow it, and
 * the first unnamed one is its plain payload when it has none. Apart from
 * record() so that a range without them does not pay for their frame. */
static __attribute__((noinline)) void record_ext(uint8_t kind, nvtx_thread *t,
                                                 const gt_nvtx_domain *d, const gt_nvtx_message *m,
                                                 uint64_t range_id, uint64_t ticks)
{
    uint8_t plain_kind = m->payload_kind;
    uint64_t plain = m->payload;
    gt_nvtx_numbers numbers;
    numbers.n = 0;
    gt_nvtx_payload_numbers(d, m->ext, m->next, &numbers);
    uint32_t i = 0;
    while (i < numbers.n && numbers.name[i])
        i++;
    if (plain_kind == GT_NUM_NONE && i < numbers.n) {
        /* The first unnamed number is taken; the others keep their order. */
        plain_kind = numbers.kind[i];
        plain = numbers.value[i];
        for (numbers.n--; i < numbers.n; i++) {
            numbers.name[i] = numbers.name[i + 1], numbers.unit[i] = numbers.unit[i + 1];
            numbers.kind[i] = numbers.kind[i + 1], numbers.value[i] = numbers.value[i + 1];
        }
    }
    uint64_t stamp =
        record_plain(kind, t, d, m, range_id, ticks, plain_kind, plain, numbers.n != 0);
    if (stamp && numbers.n) gt_nvtx_fields_record(&numbers, stamp);
}

/* One record; ticks 0: stamped now, after the message is resolved. */
static void record(uint8_t kind, nvtx_thread *t, const gt_nvtx_domain *d, const gt_nvtx_message *m,
                   uint64_t range_id, uint64_t ticks)
{
    if (GT_UNLIKELY(m && m->ext)) {
        record_ext(kind, t, d, m, range_id, ticks);
        return;
    }
    record_plain(kind, t, d, m, range_id, ticks, m ? m->payload_kind : GT_NUM_NONE,
                 m ? m->payload : 0, 0);
}

int gt_nvtx_range_push(const gt_nvtx_domain *d, const gt_nvtx_message *m)
{
    nvtx_thread *t = thread_get();
    uint32_t slot = gt_nvtx_depth_slot(d);
    int level = -1;
    if (GT_LIKELY(t)) {
        int32_t *depth = &t->depth[slot];
        level = *depth;
        if (*depth < INT32_MAX) ++*depth;
    }
    if (GT_UNLIKELY(capture_match(t, d, m)) && level >= 0) capture_push(t, slot, level);
    int recorded = nvtx_recorded_now();
    if (t && level >= 0 && (uint32_t)level < RECORDED_LEVELS) {
        uint64_t bit = 1ull << level;
        t->recorded[slot] = recorded ? t->recorded[slot] | bit : t->recorded[slot] & ~bit;
    }
    if (recorded) record(GT_EV_NVTX_PUSH, t, d, m, 0, 0);
    return level;
}

int gt_nvtx_range_pop(const gt_nvtx_domain *d, const gt_nvtx_message *m)
{
    uint64_t now = nvtx_recorded() ? gt_clock_ticks() : 0;
    nvtx_thread *t = thread_get();
    uint32_t slot = gt_nvtx_depth_slot(d);
    int level = -1;
    if (GT_LIKELY(t)) {
        int32_t *depth = &t->depth[slot];
        if (*depth > 0) level = --*depth;
    }
    /* The pop of a recorded push is recorded, in a window or not; an
     * unbalanced pop is recorded in a window: the report counts it. */
    int recorded = level >= 0 && (uint32_t)level < RECORDED_LEVELS
                       ? nvtx_recorded() && (t->recorded[slot] >> level & 1u)
                       : nvtx_recorded_now();
    if (recorded) record(GT_EV_NVTX_POP, t, d, m, 0, now);
    if (GT_UNLIKELY(t && t->n_capture) && level >= 0) capture_pop(t, slot, level);
    return level;
}

nvtxRangeId_t gt_nvtx_range_start(const gt_nvtx_domain *d, const gt_nvtx_message *m)
{
    nvtxRangeId_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
    nvtx_thread *t = thread_get();
    if (GT_UNLIKELY(capture_match(t, d, m))) {
        id |= ID_CAPTURE;
        gt_capture_nvtx(1);
    }
    if (nvtx_recorded_now())
        record(GT_EV_NVTX_START, t, d, m, id, 0);
    else if (nvtx_recorded())
        id |= ID_UNRECORDED;
    return id;
}

void gt_nvtx_range_end(const gt_nvtx_domain *d, nvtxRangeId_t id, const gt_nvtx_message *m)
{
    if (nvtx_recorded() && !(id & ID_UNRECORDED))
        record(GT_EV_NVTX_END, NULL, d, m, id, gt_clock_ticks());
    if (GT_UNLIKELY(id & ID_CAPTURE)) gt_capture_nvtx(-1);
}

void gt_nvtx_mark(const gt_nvtx_domain *d, const gt_nvtx_message *m)
{
    if (nvtx_recorded_now()) record(GT_EV_NVTX_MARK, thread_get(), d, m, 0, 0);
}

static const gt_nvtx_domain *global_domain(void)
{
    return gt_nvtx_domain_of(NULL);
}

int gt_nvtx_enabled(void)
{
    return nvtx_recorded();
}

static gt_nvtx_message ascii(const char *s)
{
    return (gt_nvtx_message){.type = NVTX_MESSAGE_TYPE_ASCII, .value = s};
}

static gt_nvtx_message unicode(const wchar_t *s)
{
    return (gt_nvtx_message){.type = NVTX_MESSAGE_TYPE_UNICODE, .value = s};
}

/* ----------------------------------------------------------- CORE module */

/* Mark, start and push in the global domain, for each way of giving the
 * message: attributes (Ex), a char string (A), a wide string (W). */
#define GLOBAL_CALLS(suffix, type, to_message)                                                     \
    static void NVTX_API mark_##suffix(type x)                                                     \
    {                                                                                              \
        gt_nvtx_message m = to_message(x);                                                         \
        gt_nvtx_mark(global_domain(), &m);                                                         \
    }                                                                                              \
    static nvtxRangeId_t NVTX_API start_##suffix(type x)                                           \
    {                                                                                              \
        gt_nvtx_message m = to_message(x);                                                         \
        return gt_nvtx_range_start(global_domain(), &m);                                           \
    }                                                                                              \
    static int NVTX_API push_##suffix(type x)                                                      \
    {                                                                                              \
        gt_nvtx_message m = to_message(x);                                                         \
        return gt_nvtx_range_push(global_domain(), &m);                                            \
    }

GLOBAL_CALLS(ex, const nvtxEventAttributes_t *, message_of)
GLOBAL_CALLS(a, const char *, ascii)
GLOBAL_CALLS(w, const wchar_t *, unicode)

static void NVTX_API end_global(nvtxRangeId_t id)
{
    gt_nvtx_range_end(global_domain(), id, NULL);
}

static int NVTX_API pop_global(void)
{
    return gt_nvtx_range_pop(global_domain(), NULL);
}

static void NVTX_API name_category_a(uint32_t category, const char *name)
{
    gt_nvtx_category_name(global_domain(), category, gt_nvtx_name_a(NULL, name));
}

static void NVTX_API name_category_w(uint32_t category, const wchar_t *name)
{
    gt_nvtx_category_name(global_domain(), category, gt_nvtx_name_w(name));
}

/* threadId is the OS thread id (gettid), the tid records carry. */
static void name_thread(uint32_t tid, uint32_t name)
{
    gt_event *ev = gt_ev_begin();
    if (!ev) return;
    ev->kind = GT_EV_THREAD_NAME;
    ev->device = GT_NO_DEVICE;
    ev->name = name;
    ev->tid = tid;
    ev->host_start = gt_clock_ticks();
    gt_ev_commit(ev);
}

static void NVTX_API name_os_thread_a(uint32_t tid, const char *name)
{
    name_thread(tid, gt_nvtx_name_a(NULL, name));
}

static void NVTX_API name_os_thread_w(uint32_t tid, const wchar_t *name)
{
    name_thread(tid, gt_nvtx_name_w(name));
}

/* ---------------------------------------------------------- CORE2 module */

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t h, const nvtxEventAttributes_t *a)
{
    gt_nvtx_message m = message_of(a);
    gt_nvtx_mark(gt_nvtx_domain_of(h), &m);
}

static nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t h, const nvtxEventAttributes_t *a)
{
    gt_nvtx_message m = message_of(a);
    return gt_nvtx_range_start(gt_nvtx_domain_of(h), &m);
}

static void NVTX_API domain_end(nvtxDomainHandle_t h, nvtxRangeId_t id)
{
    gt_nvtx_range_end(gt_nvtx_domain_of(h), id, NULL);
}

static int NVTX_API domain_push_ex(nvtxDomainHandle_t h, const nvtxEventAttributes_t *a)
{
    gt_nvtx_message m = message_of(a);
    return gt_nvtx_range_push(gt_nvtx_domain_of(h), &m);
}

static int NVTX_API domain_pop(nvtxDomainHandle_t h)
{
    return gt_nvtx_range_pop(gt_nvtx_domain_of(h), NULL);
}

static void NVTX_API domain_name_category_a(nvtxDomainHandle_t h, uint32_t category,
                                            const char *name)
{
    gt_nvtx_category_name(gt_nvtx_domain_of(h), category, gt_nvtx_name_a(NULL, name));
}

static void NVTX_API domain_name_category_w(nvtxDomainHandle_t h, uint32_t category,
                                            const wchar_t *name)
{
    gt_nvtx_category_name(gt_nvtx_domain_of(h), category, gt_nvtx_name_w(name));
}

/* The domain argument is not needed: string ids are process-wide. */
static nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t h, const char *s)
{
    (void)h;
    return gt_nvtx_string_handle(gt_nvtx_name_a(NULL, s));
}

static nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t h, const wchar_t *s)
{
    (void)h;
    return gt_nvtx_string_handle(gt_nvtx_name_w(s));
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
    return gt_nvtx_domain_create(gt_nvtx_name_a(NULL, name));
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
    return gt_nvtx_domain_create(gt_nvtx_name_w(name));
}

/* Domains are kept for the process's life (a handle used after destroy,
 * or ranges still open in it, stay well defined): nothing to release. */
static void NVTX_API domain_destroy(nvtxDomainHandle_t h)
{
    (void)h;
}

/* -------------------------------------------------------- the injection */

typedef struct callback {
    unsigned id;
    NvtxFunctionPointer fn;
} callback;

#define CB(module, name, fn)                                                                       \
    {                                                                                              \
        NVTX_CBID_##module##_##name, (NvtxFunctionPointer)(fn)                                     \
    }

static const callback core[] = {
    CB(CORE, MarkEx, mark_ex),
    CB(CORE, MarkA, mark_a),
    CB(CORE, MarkW, mark_w),
    CB(CORE, RangeStartEx, start_ex),
    CB(CORE, RangeStartA, start_a),
    CB(CORE, RangeStartW, start_w),
    CB(CORE, RangeEnd, end_global),
    CB(CORE, RangePushEx, push_ex),
    CB(CORE, RangePushA, push_a),
    CB(CORE, RangePushW, push_w),
    CB(CORE, RangePop, pop_global),
    CB(CORE, NameCategoryA, name_category_a),
    CB(CORE, NameCategoryW, name_category_w),
    CB(CORE, NameOsThreadA, name_os_thread_a),
    CB(CORE, NameOsThreadW, name_os_thread_w),
};

/* Resources (nvtxDomainResourceCreate) name objects the report does not
 * show: left to NVTX's no-op. */
static const callback core2[] = {
    CB(CORE2, DomainMarkEx, domain_mark_ex),
    CB(CORE2, DomainRangeStartEx, domain_start_ex),
    CB(CORE2, DomainRangeEnd, domain_end),
    CB(CORE2, DomainRangePushEx, domain_push_ex),
    CB(CORE2, DomainRangePop, domain_pop),
    CB(CORE2, DomainNameCategoryA, domain_name_category_a),
    CB(CORE2, DomainNameCategoryW, domain_name_category_w),
    CB(CORE2, DomainRegisterStringA, register_string_a),
    CB(CORE2, DomainRegisterStringW, register_string_w),
    CB(CORE2, DomainCreateA, domain_create_a),
    CB(CORE2, DomainCreateW, domain_create_w),
    CB(CORE2, DomainDestroy, domain_destroy),
};

/* Fills the module's slots that this copy of NVTX has (an older copy has
 * fewer); the number filled, -1 when it has no such module. */
static int attach(const NvtxExportTableCallbacks *etbl, NvtxCallbackModule module,
                  const callback *cbs, size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!etbl->GetModuleFunctionTable(module, &table, &size) || !table) return -1;
    int filled = 0;
    for (size_t i = 0; i < n; i++) {
        if (cbs[i].id >= size || !table[cbs[i].id]) continue;
        *table[cbs[i].id] = cbs[i].fn;
        filled++;
    }
    return filled;
}

/* Exported: the NVTX loader looks it up by name. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

/* In a copy of the library that is not the process's active one
 * (copies.c), NVTX's call is the active copy's to answer: that copy
 * records the ranges, as it records the CUDA work inside them. The active
 * copy never hands the call on, so this cannot loop. */
static int hand_to_active_copy(NvtxGetExportTableFunc_t get)
{
    typedef int (*init_fn)(NvtxGetExportTableFunc_t);
    init_fn active = (init_fn)gt_copy_active_symbol("InitializeInjectionNvtx2");
    gt_debug("NVTX: the injection call goes to the active copy of libgputrace.so%s",
             active ? "" : ", which has none: not traced");
    return active ? active(get) : 0;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    int saved = errno;
    gt_init_once();
    if (!gt_copy_active()) {
        int r = hand_to_active_copy(get);
        errno = saved;
        return r;
    }
    pthread_once(&key_once, make_key);
    /* A program that uses NVTX and no CUDA still needs the drain thread to
     * open and close time-limited capture windows (capture.h). */
    if (gt_cfg.delay_ns || gt_cfg.duration_ns) {
        gt_capture_poll(gt_clock_mono_ns());
        gt_drain_ensure_started();
    }
    const NvtxExportTableCallbacks *etbl = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    int ok = etbl &&
             etbl->struct_size >= FIELD_END(NvtxExportTableCallbacks, GetModuleFunctionTable) &&
             etbl->GetModuleFunctionTable;
    int n_core = ok ? attach(etbl, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0]) : -1;
    int n_core2 =
        n_core > 0 ? attach(etbl, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]) : -1;
    const NvtxExportTableVersionInfo *version = n_core > 0 ? get(NVTX_ETID_VERSIONINFO) : NULL;
    if (version &&
        version->struct_size >= FIELD_END(NvtxExportTableVersionInfo, SetInjectionNvtxVersion) &&
        version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(NVTX_VERSION);
    if (n_core > 0)
        gt_debug("NVTX: %d core and %d domain callbacks attached", n_core,
                 n_core2 > 0 ? n_core2 : 0);
    else
        gt_warn("NVTX: this copy of the NVTX library offers no callback table: not traced");
    errno = saved;
    return n_core > 0;
}
