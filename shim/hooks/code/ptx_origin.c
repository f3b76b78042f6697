/* Which PTX texts this process's compilers produced (module.h): the ones
 * nvrtcGetPTX and nvvmGetCompiledResult handed out, remembered by a hash
 * of their text, so that a module load of the same text (the program's
 * copy of it: a Python bytes object, a std::string) is known to come from
 * them. The last GT_PTX_REMEMBERED are kept; these calls are rare next to
 * the loads they precede, so one lock serves. */
#include "fork_lock.h"
#include "module.h"

#include <pthread.h>
#include <string.h>

#define GT_PTX_REMEMBERED 256u

typedef struct produced {
    uint64_t hash;
    uint64_t bytes;
    uint8_t source;
} produced;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static produced ring[GT_PTX_REMEMBERED]; /* lock */
static uint32_t next_slot;              /* lock */
GT_FORK_LOCK(lock)

/* FNV-1a: PTX is a few kilobytes to megabytes of text, read once at
 * each end; the JIT compilation it avoids reading twice costs far more. */
static uint64_t hash_of(const char *text, uint64_t bytes)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < bytes; i++)
        h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
    return h;
}

void gt_ptx_produced(const char *ptx, enum gt_ptx_source source)
{
    if (!ptx) return;
    int saved = errno;
    uint64_t bytes = strlen(ptx), h = hash_of(ptx, bytes);
    pthread_mutex_lock(&lock);
    ring[next_slot++ % GT_PTX_REMEMBERED] = (produced){h, bytes, (uint8_t)source};
    pthread_mutex_unlock(&lock);
    errno = saved;
}

enum gt_ptx_source gt_ptx_source_of(const char *ptx, uint64_t bytes)
{
    enum gt_ptx_source source = GT_PTX_FROM_MEMORY;
    if (!ptx || !bytes) return source;
    uint64_t h = hash_of(ptx, bytes);
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < GT_PTX_REMEMBERED; i++)
        if (ring[i].bytes == bytes && ring[i].hash == h) source = (enum gt_ptx_source)ring[i].source;
    pthread_mutex_unlock(&lock);
    return source;
}
