/* O_PATH (a GNU interface: gt_common is built with _GNU_SOURCE): a
 * descriptor to copy that opens nothing for reading or writing. */
#include "fd_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

/* The band at the top: higher numbers than 1024 would make the kernel
 * grow the process's descriptor table for us (to a million entries where
 * the limit is that high); the band leaves the very top to programs that
 * count down from their limit. */
#define TOP_CEILING 1024
#define TOP_BAND 64

gt_fd_identity gt_fd_identity_of_stat(const struct stat *st)
{
    return (gt_fd_identity){(uint64_t)st->st_dev, (uint64_t)st->st_ino, true};
}

gt_fd_identity gt_fd_identity_of(int fd)
{
    int saved = errno;
    struct stat st;
    gt_fd_identity id = {0, 0, false};
    if (fd >= 0 && fstat(fd, &st) == 0) id = gt_fd_identity_of_stat(&st);
    errno = saved;
    return id;
}

bool gt_fd_is(int fd, const gt_fd_identity *id)
{
    if (!id->known) return false;
    gt_fd_identity now = gt_fd_identity_of(fd);
    return now.known && now.dev == id->dev && now.ino == id->ino;
}

/* The first number of the band, or -1 when the limit leaves no room. */
static int band_start(void)
{
    struct rlimit lim;
    rlim_t ceiling = TOP_CEILING;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < ceiling) ceiling = lim.rlim_cur;
    return ceiling > 2 * TOP_BAND ? (int)ceiling - 2 * TOP_BAND : -1;
}

int gt_fd_move_high(int fd)
{
    int saved = errno, start = band_start();
    if (fd < 0 || start < 0 || fd >= start) {
        errno = saved;
        return fd;
    }
    int high = fcntl(fd, F_DUPFD_CLOEXEC, start);
    if (high >= 0 && high < start + TOP_BAND) {
        close(fd);
        fd = high;
    } else if (high >= 0) {
        close(high);
    }
    errno = saved;
    return fd;
}

void gt_fd_grow_table(void)
{
    int saved = errno, start = band_start();
    int any = start < 0 ? -1 : open("/", O_PATH | O_CLOEXEC);
    if (any >= 0) {
        int high = fcntl(any, F_DUPFD_CLOEXEC, start);
        if (high >= 0) close(high);
        close(any);
    }
    errno = saved;
}
