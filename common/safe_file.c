#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Names taken by others before a create gives up: each try is a fresh
 * random name, so only someone filling the directory gets this far. */
#define CREATE_TRIES 64

static _Atomic uint64_t name_counter; /* relaxed: only makes names differ */

/* splitmix64's finalizer: spreads a counter over all bits. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Unpredictable where the kernel gives randomness at once; else (a kernel
 * too old for getrandom, or its pool not yet ready at boot) different
 * from every earlier name of this process at least. O_EXCL is what keeps
 * the file safe either way: a name guessed ahead only makes a try fail. */
static uint64_t random_bits(void)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t n = atomic_fetch_add_explicit(&name_counter, 1, memory_order_relaxed);
    return mix((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
           mix((uint64_t)getpid() << 32 | n);
}

int gt_file_temp_name(const char *path, char *tmp, size_t cap)
{
    size_t limit = cap < PATH_MAX ? cap : PATH_MAX;
    int n = snprintf(tmp, limit, "%s.%016llx.tmp", path, (unsigned long long)random_bits());
    if (n >= 0 && (size_t)n < limit) return 0;
    if (cap) tmp[0] = '\0';
    return -1;
}

int gt_file_create_temp(int dirfd, const char *path, int access, mode_t mode, char *tmp, size_t cap)
{
    for (int i = 0; i < CREATE_TRIES; i++) {
        if (gt_file_temp_name(path, tmp, cap) != 0) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd =
            openat(dirfd, tmp, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1; /* errno: EEXIST */
}

/* Whether the opened log may be written: the user's own regular file
 * with no other name (a hard link to someone's file is not the log), a
 * FIFO of the user's, or a character device (made by root only). */
static const char *log_refusal(const struct stat *st)
{
    uid_t me = geteuid();
    if (S_ISREG(st->st_mode)) {
        if (st->st_uid != me) return "a file of another user";
        if (st->st_nlink != 1) return "a file with another hard link";
        return NULL;
    }
    if (S_ISFIFO(st->st_mode)) return st->st_uid == me ? NULL : "a FIFO of another user";
    if (S_ISCHR(st->st_mode)) return NULL;
    return "not a regular file, FIFO or terminal";
}

int gt_file_open_append(const char *path, const char **why)
{
    int fd =
        open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
             GT_FILE_MODE);
    if (fd < 0) {
        int failure = errno;
        /* O_NOFOLLOW's answer to a link is ELOOP, or EACCES where O_CREAT
         * meets one in a sticky directory; ENXIO: a FIFO with no reader */
        struct stat st;
        *why = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? "a symbolic link, not followed"
               : failure == ENXIO                           ? "a FIFO with no reader"
                                                            : strerror(failure);
        errno = failure;
        return -1;
    }
    struct stat st;
    *why = fstat(fd, &st) == 0 ? log_refusal(&st) : strerror(errno);
    if (!*why) return fd;
    close(fd);
    errno = EPERM;
    return -1;
}

int gt_file_open_private_dir(const char *path, const char **why)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int failure = errno;
        *why = failure == ELOOP || failure == ENOTDIR ? "not a directory (a link is not followed)"
                                                      : strerror(failure);
        errno = failure;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        *why = strerror(errno);
    else if (st.st_uid != geteuid())
        *why = "a directory of another user";
    else if (st.st_mode & 077)
        *why = "a directory open to other users";
    else
        return fd;
    close(fd);
    errno = EPERM;
    return -1;
}
