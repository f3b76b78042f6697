/* What the NVTX injection's files share (nvtx_injection.c: the entry point
 * and the range handlers; nvtx_strings.c: messages into string ids;
 * nvtx_registry.c: domains and category names; nvtx_ext.c: the extension
 * modules' entry point; nvtx_schema.c: payload schemas and the numbers
 * read through them; nvtx_counters.c and nvtx_heaps.c: counters, memory
 * heaps and regions). */
#ifndef GT_SHIM_NVTX_INTERNAL_H
#define GT_SHIM_NVTX_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Types only: the injection implements the API, it does not call it. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#define GT_NVTX_NAME_MAX 1024u   /* UTF-8 bytes of a message kept; longer ones are cut */
#define GT_NVTX_DOMAINS 4096u    /* distinct domain names, the default domain included */
#define GT_NVTX_DEPTH_SLOTS 256u /* domains whose push depth is kept apart per thread */
#define GT_NVTX_CATEGORIES 1024u /* (domain, category) pairs with a name; a power of two */
#define GT_NVTX_NAME_CACHE 32u   /* per-thread cache of message pointers; a power of two */
#define GT_NVTX_SCHEMAS 1024u    /* payload schemas registered, all domains */
#define GT_NVTX_LEAVES 64u       /* numeric fields read from one schema, nested ones included */
#define GT_NVTX_NUMBERS 32u      /* numbers read from one event's payloads */

/* ---------------------------------------------------------- nvtx_strings.c
 * A thread's cache of the plain messages it passed last, by pointer. A
 * hit is confirmed by comparing the text, so a buffer reused for another
 * message is interned again: plain messages are always interned by
 * content. */
typedef struct gt_nvtx_name_cache {
    struct {
        const char *key;  /* the caller's pointer */
        const char *text; /* the interned copy, valid for the process's life */
        uint32_t id;
    } slot[GT_NVTX_NAME_CACHE];
} gt_nvtx_name_cache;

/* String id of a message: a NUL-terminated UTF-8 (or any byte) string, a
 * wide string (converted to UTF-8), or a registered string handle. NULL
 * gives 0, the empty name. cache may be NULL. */
uint32_t gt_nvtx_name_a(gt_nvtx_name_cache *cache, const char *s);
uint32_t gt_nvtx_name_w(const wchar_t *s);
nvtxStringHandle_t gt_nvtx_string_handle(uint32_t id);
uint32_t gt_nvtx_string_id(nvtxStringHandle_t h);

/* "<n>": the name of a category nobody named. */
uint32_t gt_nvtx_name_number(uint32_t n);

/* ---------------------------------------------------------- nvtx_registry.c
 * Domains: one per distinct name, created lock-free and never freed, so
 * that a handle stays valid and a fork at any moment leaves a usable
 * table. Handles are pointers to the entries. */
typedef struct gt_nvtx_domain {
    _Atomic uint32_t ready; /* store-release once name is set; load-acquire before reading it */
    uint32_t name;          /* string id; 0 for the default domain */
    uint32_t index;         /* 0 for the default domain */
} gt_nvtx_domain;

/* The entry of a handle: NULL and anything the injection did not hand
 * out give the default domain. */
const gt_nvtx_domain *gt_nvtx_domain_of(nvtxDomainHandle_t h);

/* The handle of the domain named `name` (a string id), created when new.
 * The default domain past GT_NVTX_DOMAINS names, with a warning. */
nvtxDomainHandle_t gt_nvtx_domain_create(uint32_t name);

static inline uint32_t gt_nvtx_depth_slot(const gt_nvtx_domain *d)
{
    return d->index < GT_NVTX_DEPTH_SLOTS ? d->index : GT_NVTX_DEPTH_SLOTS - 1;
}

/* Category names per domain: the string id that records carry for
 * `category` (0: none), its name when given, else its number. */
void gt_nvtx_category_name(const gt_nvtx_domain *d, uint32_t category, uint32_t name);
uint32_t gt_nvtx_category(const gt_nvtx_domain *d, uint32_t category);

/* ---------------------------------------------------------- nvtx_injection.c
 * A message as the caller gave it, resolved only when recorded, with the
 * numbers it carries: a plain numeric payload, and extended payloads
 * (nvtxPayloadData_t, read through their schemas) when `ext` is set. */
typedef struct gt_nvtx_message {
    int32_t type; /* nvtxMessageType_t; 0: no message */
    const void *value;
    uint32_t category;
    uint32_t color;       /* ARGB; 0 when none was given */
    uint8_t payload_kind; /* enum gt_number_kind; GT_NUM_NONE: no plain payload */
    uint64_t payload;
    const nvtxPayloadData_t *ext;
    size_t next;
} gt_nvtx_message;

/* The range and mark handlers behind both the core calls and the payload
 * extension's (nvtxRangePushPayload and its kin). */
int gt_nvtx_range_push(const gt_nvtx_domain *d, const gt_nvtx_message *m);
int gt_nvtx_range_pop(const gt_nvtx_domain *d, const gt_nvtx_message *m);
nvtxRangeId_t gt_nvtx_range_start(const gt_nvtx_domain *d, const gt_nvtx_message *m);
void gt_nvtx_range_end(const gt_nvtx_domain *d, nvtxRangeId_t id, const gt_nvtx_message *m);
void gt_nvtx_mark(const gt_nvtx_domain *d, const gt_nvtx_message *m);

/* Whether NVTX is recorded at all (the `nvtx` category). */
int gt_nvtx_enabled(void);

/* ---------------------------------------------------------- nvtx_schema.c
 * Payload schemas (nvtxPayloadSchemaRegister), flattened when registered
 * into the numeric fields they hold, nested schemas included: reading a
 * payload is then one load per field. */
typedef struct gt_nvtx_leaf {
    uint64_t offset;
    uint32_t name; /* string id: the field's name, "outer.inner" when nested; 0 none */
    uint32_t unit; /* string id of the unit its counter semantics give; 0 none */
    uint16_t type; /* NVTX_PAYLOAD_ENTRY_TYPE_* */
} gt_nvtx_leaf;

typedef struct gt_nvtx_schema {
    uint64_t id;
    uint32_t domain; /* the domain's index */
    uint32_t nleaves;
    uint64_t size; /* bytes a payload of it takes (static size, or the fields' end) */
    gt_nvtx_leaf leaves[GT_NVTX_LEAVES];
} gt_nvtx_schema;

/* Registers a schema of domain d; its id (the caller's static id, or a
 * new one), 0 when it cannot be read or the table is full (warned). */
uint64_t gt_nvtx_schema_register(const gt_nvtx_domain *d, const nvtxPayloadSchemaAttr_t *a);

/* The schema of id in domain d (or, for an id handed out here, in any
 * domain); NULL when unknown. */
const gt_nvtx_schema *gt_nvtx_schema_find(const gt_nvtx_domain *d, uint64_t id);

/* Numbers read from payloads, in order: the first unnamed one becomes the
 * record's plain payload when it has none. */
typedef struct gt_nvtx_numbers {
    uint32_t n;
    uint32_t name[GT_NVTX_NUMBERS];
    uint32_t unit[GT_NVTX_NUMBERS];
    uint8_t kind[GT_NVTX_NUMBERS];
    uint64_t value[GT_NVTX_NUMBERS];
} gt_nvtx_numbers;

/* The number of a predefined entry type at p (NVTX_PAYLOAD_ENTRY_TYPE_*):
 * its kind (GT_NUM_NONE for a type that is not a number, or when fewer
 * than its size bytes are there) and its 64 bits. */
uint8_t gt_nvtx_read_number(uint64_t type, const void *p, size_t avail, uint64_t *bits);

/* The size of a predefined entry type that holds a number; 0 otherwise. */
size_t gt_nvtx_number_size(uint64_t type);

/* Appends the numbers of count payloads (predefined numeric types and
 * registered schemas; the rest is skipped) to out. */
void gt_nvtx_payload_numbers(const gt_nvtx_domain *d, const nvtxPayloadData_t *data, size_t count,
                             gt_nvtx_numbers *out);

/* Writes out's numbers as GT_EV_NVTX_FIELDS records, two a record, right
 * after the NVTX record they belong to. */
void gt_nvtx_fields_record(const gt_nvtx_numbers *out, uint64_t ticks);

/* --------------------------------------------- nvtx_counters.c, nvtx_heaps.c
 * The handlers of the counters and memory extensions, by callback id;
 * NULL where the module leaves a slot to NVTX's no-op. */
typedef struct gt_nvtx_slot {
    unsigned id;
    void (*fn)(void);
} gt_nvtx_slot;

extern const gt_nvtx_slot gt_nvtx_counter_slots[];
extern const unsigned gt_nvtx_counter_nslots;
extern const gt_nvtx_slot gt_nvtx_heap_slots[];
extern const unsigned gt_nvtx_heap_nslots;
extern const gt_nvtx_slot gt_nvtx_payload_slots[];
extern const unsigned gt_nvtx_payload_nslots;

#endif
