/* A tool that interposes dlsym as GPU-sharing layers do: a plain,
 * unversioned dlsym that counts every lookup by name and hands it on to
 * the next dlsym, found as such tools find it (dlvsym(RTLD_NEXT, "dlsym",
 * the architecture's first glibc version)). The hand-off is a tail call,
 * so glibc still sees the program as the caller of its RTLD_NEXT and
 * RTLD_DEFAULT lookups. At exit it appends one "name count" line per name
 * to the file GT_COUNTER_OUT names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NAMES 1024
#define NAME_BYTES 96

typedef void *(*dlsym_fn)(void *handle, const char *name);

static struct {
    char name[NAME_BYTES];
    unsigned long count;
} seen[MAX_NAMES];
static unsigned n_seen;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dlsym_fn next; /* __atomic, relaxed: every finder stores the same */

static void count(const char *name)
{
    if (!name) return;
    pthread_mutex_lock(&lock);
    unsigned i = 0;
    while (i < n_seen && strcmp(seen[i].name, name) != 0)
        i++;
    if (i == n_seen && n_seen < MAX_NAMES && strlen(name) < NAME_BYTES)
        strcpy(seen[n_seen++].name, name);
    if (i < n_seen) seen[i].count++;
    pthread_mutex_unlock(&lock);
}

__attribute__((visibility("default"), optimize("O2"))) void *dlsym(void *handle, const char *name)
{
    dlsym_fn fn = __atomic_load_n(&next, __ATOMIC_RELAXED);
    if (!fn) {
        fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", GT_GLIBC_BASE_VERSION);
        __atomic_store_n(&next, fn, __ATOMIC_RELAXED);
    }
    count(name);
    return fn(handle, name);
}

__attribute__((destructor)) static void write_counts(void)
{
    const char *path = getenv("GT_COUNTER_OUT");
    int fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd < 0) return;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < n_seen; i++)
        dprintf(fd, "%s %lu\n", seen[i].name, seen[i].count);
    pthread_mutex_unlock(&lock);
    close(fd);
}
