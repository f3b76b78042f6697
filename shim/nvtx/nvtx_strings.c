/* NVTX messages into string ids.
 *
 * A plain message is interned by content: the same text from any pointer
 * is one name, and a buffer reused for another text is another name. A
 * loop pushing the same literal should not hash it every time, so each
 * thread remembers the pointers it passed last with the interned copy of
 * their text: a hit costs one strcmp against that copy. Wide messages are
 * converted to UTF-8 (wchar_t is UTF-32 on Linux). A registered string is
 * interned once, at registration; its handle carries the id itself, so a
 * registered message costs nothing to look up and the handles need no
 * table. Functions that may allocate keep errno. */
#include "process.h"
#include "compiler.h"
#include "strtab.h"
#include "nvtx_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(wchar_t) == 4, "wide NVTX messages are read as UTF-32");

/* The length kept of s: at most GT_NVTX_NAME_MAX bytes, cut before a
 * UTF-8 sequence that would not fit whole. */
static size_t kept_length(const char *s)
{
    size_t n = strnlen(s, GT_NVTX_NAME_MAX + 1);
    if (n <= GT_NVTX_NAME_MAX) return n;
    n = GT_NVTX_NAME_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0u) == 0x80u)
        n--;
    return n;
}

static uint32_t intern(const char *s, size_t len)
{
    int saved = errno;
    uint32_t id = gt_strtab_intern(gt_names(), s, len);
    errno = saved;
    return id;
}

static uint32_t cache_slot(const char *key)
{
    return (uint32_t)(((uintptr_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (GT_NVTX_NAME_CACHE - 1);
}

uint32_t gt_nvtx_name_a(gt_nvtx_name_cache *cache, const char *s)
{
    if (!s) return 0;
    if (GT_LIKELY(cache)) {
        uint32_t i = cache_slot(s);
        if (cache->slot[i].key == s && strcmp(s, cache->slot[i].text) == 0)
            return cache->slot[i].id;
    }
    uint32_t id = intern(s, kept_length(s));
    /* A cut message never compares equal to its copy: it is not cached. */
    if (cache && id) {
        uint32_t i = cache_slot(s);
        cache->slot[i].key = s;
        cache->slot[i].text = gt_strtab_get(gt_names(), id);
        cache->slot[i].id = id;
    }
    return id;
}

/* One code point as UTF-8 into out (room for 4 bytes); its length. */
static size_t utf8_encode(uint32_t c, char *out)
{
    if (c > 0x10FFFFu || (c >= 0xD800u && c <= 0xDFFFu)) c = 0xFFFDu; /* not a character */
    if (c < 0x80u) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800u) {
        out[0] = (char)(0xC0u | c >> 6);
        out[1] = (char)(0x80u | (c & 0x3Fu));
        return 2;
    }
    if (c < 0x10000u) {
        out[0] = (char)(0xE0u | c >> 12);
        out[1] = (char)(0x80u | (c >> 6 & 0x3Fu));
        out[2] = (char)(0x80u | (c & 0x3Fu));
        return 3;
    }
    out[0] = (char)(0xF0u | c >> 18);
    out[1] = (char)(0x80u | (c >> 12 & 0x3Fu));
    out[2] = (char)(0x80u | (c >> 6 & 0x3Fu));
    out[3] = (char)(0x80u | (c & 0x3Fu));
    return 4;
}

uint32_t gt_nvtx_name_w(const wchar_t *s)
{
    if (!s) return 0;
    char buf[GT_NVTX_NAME_MAX + 4];
    size_t len = 0;
    for (; *s; s++) {
        char enc[4];
        size_t n = utf8_encode((uint32_t)*s, enc);
        if (len + n > GT_NVTX_NAME_MAX) break;
        memcpy(buf + len, enc, n);
        len += n;
    }
    return intern(buf, len);
}

/* Odd values: no pointer the program could mistake for one of its own
 * objects, and never NULL (which NVTX callers may take for failure). */
nvtxStringHandle_t gt_nvtx_string_handle(uint32_t id)
{
    return (nvtxStringHandle_t)(((uintptr_t)id << 1) | 1u);
}

uint32_t gt_nvtx_string_id(nvtxStringHandle_t h)
{
    uintptr_t v = (uintptr_t)h;
    if (!(v & 1u) || (v >> 1) > UINT32_MAX) return 0;
    return (uint32_t)(v >> 1);
}

uint32_t gt_nvtx_name_number(uint32_t n)
{
    char text[16];
    int len = snprintf(text, sizeof text, "%" PRIu32, n);
    return intern(text, (size_t)len);
}
