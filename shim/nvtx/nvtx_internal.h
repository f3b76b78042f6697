/* What the NVTX injection's files share (nvtx.c: the entry point and the
 * handlers; nvtx_strings.c: messages into string ids; nvtx_registry.c:
 * domains and category names). */
#ifndef GT_SHIM_NVTX_INTERNAL_H
#define GT_SHIM_NVTX_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Types only: the injection implements the API, it does not call it. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#define GT_NVTX_NAME_MAX 1024u   /* UTF-8 bytes of a message kept; longer ones are cut */
#define GT_NVTX_DOMAINS 4096u    /* distinct domain names, the default domain included */
#define GT_NVTX_DEPTH_SLOTS 256u /* domains whose push depth is kept apart per thread */
#define GT_NVTX_CATEGORIES 1024u /* (domain, category) pairs with a name; a power of two */
#define GT_NVTX_NAME_CACHE 32u   /* per-thread cache of message pointers; a power of two */

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

#endif
