/* The NVTX injection against a stand-in for one copy of the NVTX library:
 * the export-table protocol (tables of every size, missing tables), the
 * values the API returns, and the records each call makes, read back from
 * the shim's pipeline. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include <cmocka.h>

#include "active_copy.h"
#include "clock.h"
#include "config.h"
#include "event.h"
#include "log.h"
#include "pipeline.h"
#include "process.h"
#include "record.h"
#include "settings.h"
#include "strtab.h"
#include "nvtx_internal.h"

#include <nvtx3/nvToolsExtMem.h>

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
int NVTX_API InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info);

/* The shim's constructor is not part of this test: the configuration is
 * set by each test. The injection runs as the process's one active copy
 * of the library. */
void gt_init_once(void) {}
int gt_copy_active(void)
{
    return 1;
}
void *gt_copy_active_symbol(const char *name)
{
    (void)name;
    return NULL;
}

/* ------------------------------------------------ one copy of the API */

static NvtxFunctionPointer core_fn[NVTX_CBID_CORE_SIZE], core2_fn[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *core_table[NVTX_CBID_CORE_SIZE + 1];
static NvtxFunctionPointer *core2_table[NVTX_CBID_CORE2_SIZE + 1];
static unsigned core_size, core2_size; /* slots this copy offers: an older copy has fewer */
static int offer_callbacks;
static uint32_t injection_version;

static int NVTX_API get_module(NvtxCallbackModule module, NvtxFunctionTable *out,
                               unsigned int *size)
{
    if (module == NVTX_CB_MODULE_CORE) {
        *out = core_table;
        *size = core_size;
        return 1;
    }
    if (module == NVTX_CB_MODULE_CORE2 && core2_size) {
        *out = core2_table;
        *size = core2_size;
        return 1;
    }
    return 0;
}

static void NVTX_API set_version(uint32_t v)
{
    injection_version = v;
}

static const NvtxExportTableCallbacks callbacks = {sizeof(callbacks), get_module};
static const NvtxExportTableVersionInfo version_info = {sizeof(version_info), NVTX_VERSION, 0,
                                                        set_version};

static const void *NVTX_API get_table(uint32_t id)
{
    if (id == NVTX_ETID_CALLBACKS) return offer_callbacks ? &callbacks : NULL;
    if (id == NVTX_ETID_VERSIONINFO) return &version_info;
    return NULL;
}

static int attach_copy(unsigned core_slots, unsigned core2_slots)
{
    memset(core_fn, 0, sizeof core_fn);
    memset(core2_fn, 0, sizeof core2_fn);
    for (unsigned i = 1; i < NVTX_CBID_CORE_SIZE; i++)
        core_table[i] = &core_fn[i];
    for (unsigned i = 1; i < NVTX_CBID_CORE2_SIZE; i++)
        core2_table[i] = &core2_fn[i];
    core_size = core_slots;
    core2_size = core2_slots;
    return InitializeInjectionNvtx2(get_table);
}

#define CORE(name, type) ((type)core_fn[NVTX_CBID_CORE_##name])
#define CORE2(name, type) ((type)core2_fn[NVTX_CBID_CORE2_##name])
#define PushA CORE(RangePushA, int (*)(const char *))
#define PushW CORE(RangePushW, int (*)(const wchar_t *))
#define PushEx CORE(RangePushEx, int (*)(const nvtxEventAttributes_t *))
#define Pop CORE(RangePop, int (*)(void))
#define StartA CORE(RangeStartA, nvtxRangeId_t (*)(const char *))
#define End CORE(RangeEnd, void (*)(nvtxRangeId_t))
#define MarkA CORE(MarkA, void (*)(const char *))
#define NameCategoryA CORE(NameCategoryA, void (*)(uint32_t, const char *))
#define NameOsThreadA CORE(NameOsThreadA, void (*)(uint32_t, const char *))
#define DomainCreateA CORE2(DomainCreateA, nvtxDomainHandle_t (*)(const char *))
#define DomainCreateW CORE2(DomainCreateW, nvtxDomainHandle_t (*)(const wchar_t *))
#define DomainPushEx                                                                               \
    CORE2(DomainRangePushEx, int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t *))
#define DomainPop CORE2(DomainRangePop, int (*)(nvtxDomainHandle_t))
#define DomainEnd CORE2(DomainRangeEnd, void (*)(nvtxDomainHandle_t, nvtxRangeId_t))
#define RegisterA                                                                                  \
    CORE2(DomainRegisterStringA, nvtxStringHandle_t (*)(nvtxDomainHandle_t, const char *))
#define DomainNameCategoryA                                                                        \
    CORE2(DomainNameCategoryA, void (*)(nvtxDomainHandle_t, uint32_t, const char *))

/* ------------------------------------------------ the records made */

#define MAX_RECORDS 512

static gt_event records[MAX_RECORDS];
static size_t nrecords;

static void consume(gt_event *ev, uint32_t n, void *ctx)
{
    (void)ctx;
    for (uint32_t i = 0; i < n && nrecords < MAX_RECORDS; i++)
        records[nrecords++] = ev[i];
}

static void finished(const gt_pipeline_totals *t, void *ctx)
{
    (void)t;
    (void)ctx;
}

static int setup(void **state)
{
    (void)state;
    gt_cfg.categories = GT_CAT_ALL;
    gt_cfg.verbosity = GT_VERB_NONE;
    gt_log_init(GT_LOG_STDERR, NULL, GT_VERB_NONE);
    nrecords = 0;
    gt_pipeline_params p = {
        .chunk_bytes = GT_CHUNK_MIN_BYTES,
        .cap_bytes = 64u * GT_CHUNK_MIN_BYTES,
        .drain_thread = 0,
        .consume = consume,
        .finished = finished,
    };
    offer_callbacks = 1;
    if (gt_pipeline_start(&p) != 0) return -1;
    return attach_copy(NVTX_CBID_CORE_SIZE, NVTX_CBID_CORE2_SIZE) == 1 ? 0 : -1;
}

/* Every record made so far, in order. */
static void collect(void)
{
    assert_int_equal(gt_pipeline_finish(10000), 0);
}

/* Closes what a test left open (recording has ended: nothing is
 * recorded), so that the next test starts at level 0. */
static void unwind(nvtxDomainHandle_t domain)
{
    while (Pop() >= 0)
        ;
    while (domain && DomainPop(domain) >= 0)
        ;
}

static uint32_t id_of(const char *s)
{
    return gt_strtab_intern(gt_names(), s, strlen(s));
}

static const char *text_of(uint32_t id)
{
    return gt_strtab_get(gt_names(), id);
}

/* ------------------------------------------------ tests */

static void test_protocol(void **state)
{
    (void)state;
    for (unsigned i = 1; i < NVTX_CBID_CORE_SIZE; i++)
        assert_non_null(core_fn[i]);
    unsigned core2_filled = 0;
    for (unsigned i = 1; i < NVTX_CBID_CORE2_SIZE; i++)
        core2_filled += core2_fn[i] != NULL;
    /* all but the resource calls and nvtxInitialize */
    assert_int_equal(core2_filled, NVTX_CBID_CORE2_SIZE - 1 - 3);
    assert_null(core2_fn[NVTX_CBID_CORE2_DomainResourceCreate]);
    assert_int_equal(injection_version, NVTX_VERSION);

    /* An older copy with fewer slots: only those are written. */
    assert_int_equal(attach_copy(NVTX_CBID_CORE_RangePop + 1, 0), 1);
    assert_non_null(core_fn[NVTX_CBID_CORE_RangePop]);
    assert_null(core_fn[NVTX_CBID_CORE_NameCategoryA]);
    assert_null(core2_fn[NVTX_CBID_CORE2_DomainRangePushEx]);
    /* A slot the copy does not point at is left alone. */
    core_fn[NVTX_CBID_CORE_MarkW] = NULL;
    core_table[NVTX_CBID_CORE_MarkW] = NULL;
    core_size = NVTX_CBID_CORE_SIZE;
    assert_int_equal(InitializeInjectionNvtx2(get_table), 1);
    assert_null(core_fn[NVTX_CBID_CORE_MarkW]);
    assert_non_null(core_fn[NVTX_CBID_CORE_NameCategoryA]);
    /* No callback table: the injection declines. */
    offer_callbacks = 0;
    assert_int_equal(attach_copy(NVTX_CBID_CORE_SIZE, NVTX_CBID_CORE2_SIZE), 0);
    assert_int_equal(InitializeInjectionNvtx2(NULL), 0);
    offer_callbacks = 1;
    collect();
}

/* NVTX's return values, per thread and domain. */
static void test_levels(void **state)
{
    (void)state;
    nvtxDomainHandle_t lib = DomainCreateA("lib");
    nvtxEventAttributes_t a = {.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE};
    assert_int_equal(PushA("a"), 0);
    assert_int_equal(PushA("b"), 1);
    assert_int_equal(DomainPushEx(lib, &a), 0);
    assert_int_equal(DomainPushEx(NULL, &a), 2); /* NULL: the global domain */
    assert_int_equal(DomainPop(NULL), 2);
    assert_int_equal(Pop(), 1);
    assert_int_equal(DomainPop(lib), 0);
    assert_int_equal(DomainPop(lib), -1);
    assert_int_equal(Pop(), 0);
    assert_int_equal(Pop(), -1);
    nvtxRangeId_t r1 = StartA("s"), r2 = StartA("s");
    assert_true(r1 != 0 && r2 != 0 && r1 != r2);
    End(r2);
    End(r1);
    collect();
}

static void *other_thread(void *arg)
{
    int *level = arg;
    *level = PushA("elsewhere");
    return NULL;
}

static void test_levels_are_per_thread(void **state)
{
    (void)state;
    assert_int_equal(PushA("here"), 0);
    int level = -5;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, &level), 0);
    pthread_join(t, NULL);
    assert_int_equal(level, 0);
    assert_int_equal(Pop(), 0);
    collect();
}

static void test_records(void **state)
{
    (void)state;
    nvtxDomainHandle_t lib = DomainCreateA("lib");
    assert_ptr_equal(DomainCreateA("lib"), lib); /* one name, one domain */
    PushA("outer");
    nvtxRangeId_t id = StartA("async");
    MarkA("here");
    DomainEnd(lib, id);
    Pop();
    NameOsThreadA(4242, "worker");
    collect();
    assert_int_equal(nrecords, 6);
    const gt_event *push = &records[0], *start = &records[1], *mark = &records[2];
    const gt_event *end = &records[3], *pop = &records[4], *thread = &records[5];
    assert_int_equal(push->kind, GT_EV_NVTX_PUSH);
    assert_string_equal(text_of(push->name), "outer");
    assert_int_equal(push->u.nvtx.domain, 0);
    assert_int_equal(push->api, 0); /* no api row */
    assert_int_equal(start->kind, GT_EV_NVTX_START);
    assert_int_equal(start->u.nvtx.range_id, id);
    assert_int_equal(mark->kind, GT_EV_NVTX_MARK);
    assert_string_equal(text_of(mark->name), "here");
    assert_int_equal(end->kind, GT_EV_NVTX_END);
    assert_int_equal(end->u.nvtx.range_id, id);
    assert_string_equal(text_of(end->u.nvtx.domain), "lib");
    assert_int_equal(pop->kind, GT_EV_NVTX_POP);
    assert_int_equal(thread->kind, GT_EV_THREAD_NAME);
    assert_int_equal(thread->tid, 4242);
    assert_string_equal(text_of(thread->name), "worker");
    for (size_t i = 1; i < nrecords; i++)
        assert_true(records[i].host_start >= records[i - 1].host_start);
    assert_int_equal(push->tid, (uint32_t)gettid());
}

/* Plain messages are names by content: the cache by pointer never gives
 * a reused buffer its old name. */
static void test_names_by_content(void **state)
{
    (void)state;
    char buf[32];
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof buf, "step %d", i);
        PushA(buf);
        PushA(buf);
        Pop();
        Pop();
    }
    char other[] = "step 2";
    PushA(other);
    Pop();
    PushA(NULL);
    Pop();
    collect();
    assert_int_equal(nrecords, 16);
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof buf, "step %d", i);
        assert_int_equal(records[4 * i].name, id_of(buf));
        assert_int_equal(records[4 * i + 1].name, id_of(buf));
    }
    assert_int_equal(records[12].name, records[8].name);
    assert_int_equal(records[14].kind, GT_EV_NVTX_PUSH);
    assert_int_equal(records[14].name, 0);
}

static void test_long_names_are_cut(void **state)
{
    (void)state;
    /* 1023 ASCII bytes, then a 3-byte character across the 1024 limit */
    static char s[GT_NVTX_NAME_MAX + 16];
    memset(s, 'x', GT_NVTX_NAME_MAX - 1);
    strcpy(s + GT_NVTX_NAME_MAX - 1, "\xe4\xb8\xadtail");
    PushA(s);
    PushA(s);
    collect();
    unwind(NULL);
    const char *kept = text_of(records[0].name);
    assert_int_equal(strlen(kept), GT_NVTX_NAME_MAX - 1);
    assert_int_equal(records[1].name, records[0].name);
}

static void test_wide_strings(void **state)
{
    (void)state;
    PushW(L"caf\u00e9 \u4e2d \U0001F600");
    const wchar_t bad[] = {L'a', (wchar_t)0xD800, (wchar_t)0x110000, L'b', 0};
    PushW(bad);
    nvtxDomainHandle_t d = DomainCreateW(L"wide\u00e9");
    nvtxEventAttributes_t a = {.version = NVTX_VERSION,
                               .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                               .messageType = NVTX_MESSAGE_TYPE_UNICODE,
                               .message.unicode = L"in domain"};
    DomainPushEx(d, &a);
    collect();
    unwind(d);
    assert_string_equal(text_of(records[0].name), "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80");
    assert_string_equal(text_of(records[1].name), "a\xef\xbf\xbd\xef\xbf\xbd"
                                                  "b");
    assert_string_equal(text_of(records[2].name), "in domain");
    assert_string_equal(text_of(records[2].u.nvtx.domain), "wide\xc3\xa9");
}

static void test_attributes(void **state)
{
    (void)state;
    nvtxDomainHandle_t lib = DomainCreateA("lib");
    nvtxStringHandle_t reg = RegisterA(lib, "registered");
    assert_non_null(reg);
    NameCategoryA(3, "io");
    DomainNameCategoryA(lib, 3, "lib io");
    nvtxEventAttributes_t a = {.version = NVTX_VERSION,
                               .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                               .category = 3,
                               .colorType = NVTX_COLOR_ARGB,
                               .color = 0xff00ff00u,
                               .messageType = NVTX_MESSAGE_TYPE_REGISTERED,
                               .message.registered = reg};
    PushEx(&a);
    DomainPushEx(lib, &a);
    a.category = 7;
    a.colorType = NVTX_COLOR_UNKNOWN;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "plain";
    PushEx(&a);
    NameCategoryA(7, "named later");
    PushEx(&a);
    /* A structure whose size does not reach the message has none. */
    a.size = (uint16_t)offsetof(nvtxEventAttributes_t, messageType);
    PushEx(&a);
    PushEx(NULL);
    collect();
    unwind(lib);
    assert_int_equal(nrecords, 6);
    assert_string_equal(text_of(records[0].name), "registered");
    assert_string_equal(text_of(records[0].u.nvtx.category), "io");
    assert_int_equal(records[0].u.nvtx.color, 0xff00ff00u);
    assert_string_equal(text_of(records[1].u.nvtx.category), "lib io");
    assert_string_equal(text_of(records[1].u.nvtx.domain), "lib");
    assert_string_equal(text_of(records[2].name), "plain");
    assert_string_equal(text_of(records[2].u.nvtx.category), "7");
    assert_int_equal(records[2].u.nvtx.color, 0);
    assert_string_equal(text_of(records[3].u.nvtx.category), "named later");
    assert_int_equal(records[4].name, 0);
    assert_string_equal(text_of(records[4].u.nvtx.category), "named later");
    assert_int_equal(records[5].name, 0);
    assert_int_equal(records[5].u.nvtx.category, 0);
}

/* A handle the injection never made is the global domain, not a crash. */
static void test_foreign_domain_handle(void **state)
{
    (void)state;
    int junk[8] = {0};
    nvtxEventAttributes_t a = {.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE};
    assert_int_equal(DomainPushEx((nvtxDomainHandle_t)junk, &a), 0);
    assert_int_equal(Pop(), 0);
    collect();
    assert_int_equal(records[0].u.nvtx.domain, 0);
}

/* Threads creating the same domains and naming the same categories at
 * once: every handle names its domain, every name sticks. */
static void *create_domains(void *arg)
{
    (void)arg;
    for (int i = 0; i < 64; i++) {
        char name[16];
        snprintf(name, sizeof name, "race %d", i % 16);
        nvtxDomainHandle_t d = DomainCreateA(name);
        DomainNameCategoryA(d, (uint32_t)(i % 4) + 1, "shared");
        if (gt_nvtx_domain_of(d)->name != id_of(name)) return (void *)1;
        if (gt_nvtx_category(gt_nvtx_domain_of(d), (uint32_t)(i % 4) + 1) != id_of("shared"))
            return (void *)1;
    }
    return NULL;
}

static void test_concurrent_registry(void **state)
{
    (void)state;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, create_domains, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        assert_null(bad);
    }
    collect();
}

/* With `nvtx` off nothing is recorded but thread names, and the levels
 * stay right. */
static void test_disabled(void **state)
{
    (void)state;
    gt_cfg.categories = GT_CAT_ALL & ~GT_CAT_BIT(GT_CAT_NVTX);
    assert_int_equal(PushA("a"), 0);
    assert_int_equal(PushA("b"), 1);
    assert_int_equal(Pop(), 1);
    assert_int_equal(Pop(), 0);
    assert_int_equal(Pop(), -1);
    assert_true(StartA("s") != 0);
    NameOsThreadA(7, "named");
    collect();
    gt_cfg.categories = GT_CAT_ALL;
    assert_int_equal(nrecords, 1);
    assert_int_equal(records[0].kind, GT_EV_THREAD_NAME);
}

static void test_errno_kept(void **state)
{
    (void)state;
    char fresh[] = "fresh name";
    errno = 1234;
    PushA(fresh);
    PushW(L"fresh wide");
    DomainCreateA("fresh domain");
    NameCategoryA(99, "fresh category");
    Pop();
    Pop();
    assert_int_equal(errno, 1234);
    collect();
}

/* An extension module as a copy of NVTX offers it: its id and one segment
 * of function slots, which the injection fills. */
static int init_module(uint16_t id, intptr_t *slots, size_t n)
{
    nvtxExtModuleSegment_t segment = {0, n, slots};
    nvtxExtModuleInfo_t info = {NVTX_VERSION, sizeof info, id, 0, 1, &segment, NULL, NULL};
    return InitializeInjectionNvtxExtension(&info);
}

/* The payload module: a schema registered through its slot, then a push
 * whose attributes carry a payload of it: the push, then its fields. The
 * plain payload rides in the record; an unknown module is declined. */
static void test_extensions(void **state)
{
    (void)state;
    intptr_t slots[64] = {0};
    assert_int_equal(init_module(NVTX_EXT_PAYLOAD_MODULEID, slots, 64), 1);
    assert_true(slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister] != 0);
    assert_true(slots[NVTX3EXT_CBID_nvtxRangePopPayload] != 0);
    intptr_t other[8] = {0};
    assert_int_equal(init_module(77, other, 8), 0);
    assert_int_equal(other[0], 0);

    typedef uint64_t(NVTX_API * schema_fn)(nvtxDomainHandle_t, const nvtxPayloadSchemaAttr_t *);
    typedef uint8_t(NVTX_API * enabled_fn)(nvtxDomainHandle_t);
    static const nvtxPayloadSchemaEntry_t entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "flops", NULL, 0, 0, NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "seconds", NULL, 0, 8, NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, "label", NULL, 8, 16, NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t attr = {0};
    attr.fieldMask =
        NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES;
    attr.entries = entries;
    attr.numEntries = 3;
    uint64_t schema = ((schema_fn)slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister])(NULL, &attr);
    assert_true(schema != 0);
    assert_int_equal(((enabled_fn)slots[NVTX3EXT_CBID_nvtxDomainIsEnabled])(NULL), 1);

    struct {
        uint64_t flops;
        double seconds;
        char label[8];
    } numbers = {12345, 0.25, "x"};
    nvtxPayloadData_t data[2] = {{schema, sizeof numbers, &numbers},
                                 {NVTX_PAYLOAD_ENTRY_TYPE_INT32, 4, &(int32_t){-9}}};
    nvtxEventAttributes_t a = {.version = NVTX_VERSION,
                               .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                               .payloadType = NVTX_PAYLOAD_TYPE_EXT,
                               .reserved0 = 2,
                               .messageType = NVTX_MESSAGE_TYPE_ASCII,
                               .message.ascii = "with numbers"};
    a.payload.ullValue = (uint64_t)(uintptr_t)data;
    PushEx(&a);
    nvtxEventAttributes_t b = a;
    b.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
    b.payload.fValue = 1.5f;
    PushEx(&b);
    collect();
    unwind(NULL);
    assert_int_equal(nrecords, 3);
    assert_int_equal(records[0].kind, GT_EV_NVTX_PUSH);
    /* The unnamed INT32 number is the push's own payload. */
    assert_int_equal(records[0].u.nvtx.payload_kind, GT_NUM_I32);
    assert_int_equal((int64_t)records[0].u.nvtx.payload, -9);
    assert_int_equal(records[0].u.nvtx.fields, 1);
    assert_int_equal(records[1].kind, GT_EV_NVTX_FIELDS);
    assert_string_equal(text_of(records[1].u.fields.name[0]), "flops");
    assert_int_equal(records[1].u.fields.value[0], 12345);
    assert_string_equal(text_of(records[1].u.fields.name[1]), "seconds");
    assert_true(gt_number_value(records[1].u.fields.kind[1], records[1].u.fields.value[1]) == 0.25);
    assert_int_equal(records[2].u.nvtx.payload_kind, GT_NUM_F32);
    assert_int_equal(records[2].u.nvtx.fields, 0);
    assert_true(gt_number_value(GT_NUM_F32, records[2].u.nvtx.payload) == 1.5);
}

/* The memory module: a heap's handle is its address; its regions are
 * recorded one by one. */
static void test_heap_records(void **state)
{
    (void)state;
    intptr_t slots[64] = {0};
    assert_int_equal(init_module(NVTX_EXT_MODULEID_MEM, slots, 64), 1);
    typedef nvtxMemHeapHandle_t(NVTX_API * reg_fn)(nvtxDomainHandle_t, const nvtxMemHeapDesc_t *);
    typedef void(NVTX_API * regions_fn)(nvtxDomainHandle_t, const nvtxMemRegionsRegisterBatch_t *);
    static char pool[4096];
    nvtxMemVirtualRangeDesc_t range = {sizeof pool, pool};
    nvtxMemHeapDesc_t desc = {.extCompatID = NVTX_EXT_COMPATID_MEM,
                              .structSize = sizeof desc,
                              .usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR,
                              .type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
                              .typeSpecificDescSize = sizeof range,
                              .typeSpecificDesc = &range};
    nvtxMemHeapHandle_t heap = ((reg_fn)slots[NVTX3EXT_CBID_nvtxMemHeapRegister])(NULL, &desc);
    assert_ptr_equal(heap, pool);
    nvtxMemVirtualRangeDesc_t r[2] = {{100, pool}, {200, pool + 100}};
    nvtxMemRegionHandle_t handles[2] = {0};
    nvtxMemRegionsRegisterBatch_t batch = {NVTX_EXT_COMPATID_MEM,
                                           sizeof batch,
                                           NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
                                           heap,
                                           2,
                                           sizeof r[0],
                                           r,
                                           handles};
    ((regions_fn)slots[NVTX3EXT_CBID_nvtxMemRegionsRegister])(NULL, &batch);
    assert_ptr_equal(handles[1], pool + 100);
    collect();
    assert_int_equal(nrecords, 3);
    assert_int_equal(records[0].u.heap.op, GT_HEAP_REGISTER);
    assert_int_equal(records[0].bytes, sizeof pool);
    assert_int_equal(records[2].u.heap.op, GT_HEAP_REGION_ADD);
    assert_int_equal(records[2].u.heap.region, (uintptr_t)(pool + 100));
    assert_int_equal(records[2].bytes, 200);
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
    gt_clock_init(0);
    const struct CMUnitTest tests[] = {
        T(test_protocol),
        T(test_levels),
        T(test_levels_are_per_thread),
        T(test_records),
        T(test_names_by_content),
        T(test_long_names_are_cut),
        T(test_wide_strings),
        T(test_attributes),
        T(test_foreign_domain_handle),
        T(test_concurrent_registry),
        T(test_disabled),
        T(test_errno_kept),
        T(test_extensions),
        T(test_heap_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
