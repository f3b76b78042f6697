/* NVTX domains and category names: process-wide tables written rarely
 * (when a program creates a domain or names a category) and read on every
 * call that uses them. Both are fixed arrays claimed with compare-exchange
 * and never freed: no lock, so a fork in the middle of an update leaves
 * the child a usable table, and a handle stays valid however the program
 * creates and destroys domains.
 *
 * The report keys ranges by domain name, so one name is one domain: a
 * program that creates the same domain again (a library initialised
 * twice) gets the same handle back. Two threads creating a new name at
 * once may both add it; the duplicate only keeps its own push depths. */
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>

#include "compiler.h"
#include "log.h"
#include "nvtx_internal.h"

static gt_nvtx_domain domains[GT_NVTX_DOMAINS] = {[0] = {.ready = 1}};
/* Entries claimed so far, the default domain included. Relaxed: an
 * entry's own `ready` flag orders its contents. */
static _Atomic uint32_t ndomains = 1;

typedef struct category_entry {
    _Atomic uint64_t key;  /* (domain index + 1) << 32 | category, 0 = free; CAS from 0
                              (acq_rel), load-acquire */
    _Atomic uint32_t name; /* relaxed: a plain value, replaced when renamed */
} category_entry;
static category_entry categories[GT_NVTX_CATEGORIES];

static _Atomic int warned_domains, warned_categories; /* relaxed exchange: one warning each */

static int first_time(_Atomic int *flag)
{
    return !atomic_exchange_explicit(flag, 1, memory_order_relaxed);
}

const gt_nvtx_domain *gt_nvtx_domain_of(nvtxDomainHandle_t h)
{
    uintptr_t p = (uintptr_t)h, base = (uintptr_t)domains;
    if (p > base && p < base + sizeof domains && (p - base) % sizeof(domains[0]) == 0) {
        const gt_nvtx_domain *d = (const gt_nvtx_domain *)h;
        if (atomic_load_explicit(&d->ready, memory_order_acquire)) return d;
    }
    return &domains[0];
}

nvtxDomainHandle_t gt_nvtx_domain_create(uint32_t name)
{
    if (name == 0) return (nvtxDomainHandle_t)&domains[0];
    uint32_t n = atomic_load_explicit(&ndomains, memory_order_relaxed);
    for (uint32_t i = 1; i < n && i < GT_NVTX_DOMAINS; i++)
        if (atomic_load_explicit(&domains[i].ready, memory_order_acquire) &&
            domains[i].name == name)
            return (nvtxDomainHandle_t)&domains[i];
    while (n < GT_NVTX_DOMAINS) {
        if (atomic_compare_exchange_weak_explicit(&ndomains, &n, n + 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            domains[n].name = name;
            domains[n].index = n;
            atomic_store_explicit(&domains[n].ready, 1, memory_order_release);
            return (nvtxDomainHandle_t)&domains[n];
        }
    }
    if (first_time(&warned_domains))
        gt_warn("more than %u NVTX domain names: later ones are recorded in the default domain",
                GT_NVTX_DOMAINS - 1);
    return (nvtxDomainHandle_t)&domains[0];
}

/* The entry of key, claimed when absent and `claim` is set; NULL when
 * absent (or the table is full). */
static category_entry *find_category(uint64_t key, int claim)
{
    uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (GT_NVTX_CATEGORIES - 1);
    for (uint32_t probes = 0; probes < GT_NVTX_CATEGORIES; probes++) {
        uint64_t k = atomic_load_explicit(&categories[h].key, memory_order_acquire);
        if (k == 0 && claim &&
            atomic_compare_exchange_strong_explicit(&categories[h].key, &k, key,
                                                    memory_order_acq_rel, memory_order_acquire))
            return &categories[h];
        if (k == key) return &categories[h];
        if (k == 0) return NULL;
        h = (h + 1) & (GT_NVTX_CATEGORIES - 1);
    }
    return NULL;
}

static uint64_t category_key(const gt_nvtx_domain *d, uint32_t category)
{
    return (uint64_t)(d->index + 1) << 32 | category;
}

void gt_nvtx_category_name(const gt_nvtx_domain *d, uint32_t category, uint32_t name)
{
    category_entry *e = find_category(category_key(d, category), 1);
    if (e)
        atomic_store_explicit(&e->name, name, memory_order_relaxed);
    else if (first_time(&warned_categories))
        gt_warn("more than %u NVTX category names: later ones are shown by number",
                GT_NVTX_CATEGORIES);
}

uint32_t gt_nvtx_category(const gt_nvtx_domain *d, uint32_t category)
{
    if (category == 0) return 0;
    uint64_t key = category_key(d, category);
    category_entry *e = find_category(key, 0);
    uint32_t name = e ? atomic_load_explicit(&e->name, memory_order_relaxed) : 0;
    if (GT_LIKELY(name)) return name;
    /* Unnamed: its number, remembered unless a name came meanwhile. */
    name = gt_nvtx_name_number(category);
    e = find_category(key, 1);
    if (!e) return name;
    uint32_t none = 0;
    if (atomic_compare_exchange_strong_explicit(&e->name, &none, name, memory_order_relaxed,
                                                memory_order_relaxed))
        return name;
    return none;
}
