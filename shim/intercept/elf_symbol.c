/* A name in one loaded object's own dynamic symbol table, read from the
 * object's memory, without entering the loader.
 *
 * The shim's dlsym can be called before the C library is initialised: a
 * sanitizer runtime preloaded first looks its functions up with dlsym (the
 * shim's) from its pre-initialiser. A dlopen at that point, even of an
 * object already loaded, runs the C library's initialiser early, with no
 * environment, and the program then has none. dlsym on a handle would
 * need that dlopen; this lookup needs only the link map (dladdr1). Nor
 * does it call the C library's string functions: the sanitizer intercepts
 * them, and its interceptors do not work yet at that point. */
#include "elf_dynamic.h"
#include "intercept.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

int gt_same_string(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* Whether symbol i is a definition of `name` under `version` (any version
 * when NULL). */
static int defines(const gt_elf_dynamic *t, uint32_t i, const char *name, const char *version)
{
    const ElfW(Sym) *s = &t->syms[i];
    int type = ELF32_ST_TYPE(s->st_info), bind = ELF32_ST_BIND(s->st_info); /* the same for 64 */
    if (s->st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_OBJECT) ||
        (bind != STB_GLOBAL && bind != STB_WEAK) || !gt_same_string(t->strs + s->st_name, name))
        return 0;
    if (!version || !t->versyms) return !version;
    unsigned ndx = t->versyms[i] & 0x7fffu;
    for (const ElfW(Verdef) *d = t->verdefs; d;
         d = d->vd_next ? (const void *)((const char *)d + d->vd_next) : NULL) {
        if (d->vd_ndx != ndx) continue;
        const ElfW(Verdaux) *a = (const void *)((const char *)d + d->vd_aux);
        return gt_same_string(t->strs + a->vda_name, version);
    }
    return 0;
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

static uint32_t find_gnu(const gt_elf_dynamic *t, const uint32_t *gh, const char *name,
                         const char *version)
{
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_words = gh[2];
    if (!nbuckets) return 0;
    const uint32_t *buckets = (const void *)((const ElfW(Addr) *)(gh + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t h = gnu_hash(name);
    for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
        uint32_t link = chain[i - symoffset];
        if ((link | 1u) == (h | 1u) && defines(t, i, name, version)) return i;
        if (link & 1u) break;
    }
    return 0;
}

static uint32_t find_sysv(const gt_elf_dynamic *t, const uint32_t *hh, const char *name,
                          const char *version)
{
    uint32_t nbucket = hh[0];
    if (!nbucket) return 0;
    const uint32_t *bucket = hh + 2, *chain = bucket + nbucket;
    for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i; i = chain[i])
        if (defines(t, i, name, version)) return i;
    return 0;
}

void *gt_elf_symbol(const struct link_map *map, const char *name, const char *version)
{
    if (!map || !map->l_ld || !name) return NULL;
    gt_elf_dynamic t;
    gt_elf_dynamic_read(map->l_ld, map->l_addr, &t);
    if (!t.syms || !t.strs) return NULL;
    uint32_t i = t.gnu_hash ? find_gnu(&t, t.gnu_hash, name, version) : 0;
    if (!i && t.sysv_hash) i = find_sysv(&t, t.sysv_hash, name, version);
    return i ? (void *)(map->l_addr + t.syms[i].st_value) : NULL;
}
