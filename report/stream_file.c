#include "stream_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void reason(char *err, size_t errcap, const char *path, const char *what, int errnum)
{
    if (err && errcap) snprintf(err, errcap, "%s: %s: %s", path, what, strerror(errnum));
}

/* The directory part of path ("." when it has none) into dir. */
static int directory_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return snprintf(dir, cap, ".") < (int)cap ? 0 : -1;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= cap) return -1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

int gt_stream_file_open(gt_stream_file *f, const char *path, char *err, size_t errcap)
{
    int saved = errno;
    f->fd = -1;
    f->anonymous = false;
    int n = snprintf(f->tmp, sizeof f->tmp, "%s.%d.tmp", path, (int)getpid());
    char dir[PATH_MAX];
    if (n < 0 || (size_t)n >= sizeof f->tmp || directory_of(path, dir, sizeof dir) != 0) {
        reason(err, errcap, path, "path too long", ENAMETOOLONG);
        errno = saved;
        return -1;
    }
#ifdef O_TMPFILE
    /* Naming it at the end goes through /proc: without /proc, use a name now. */
    if (access("/proc/self/fd", F_OK) == 0) {
        f->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        f->anonymous = f->fd >= 0;
    }
#endif
    if (f->fd < 0) f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    if (f->fd < 0) reason(err, errcap, path, "cannot create the temporary file", errno);
    errno = saved;
    return f->fd < 0 ? -1 : 0;
}

/* Gives an anonymous file the temporary name. */
static int link_anonymous(gt_stream_file *f)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp, AT_SYMLINK_FOLLOW) == 0) return 0;
        if (errno != EEXIST) return -1;
        unlink(f->tmp); /* left by an earlier process with this pid */
    }
    return -1;
}

int gt_stream_file_commit(gt_stream_file *f, const char *path, char *err, size_t errcap)
{
    int saved = errno;
    const char *what = NULL;
    if (f->anonymous && link_anonymous(f) != 0) {
        what = "cannot name the temporary file";
    } else {
        f->anonymous = false;
        if (close(f->fd) != 0) what = "write failed";
        f->fd = -1;
        if (!what && rename(f->tmp, path) != 0) what = "cannot replace the file";
    }
    if (what) {
        reason(err, errcap, path, what, errno);
        gt_stream_file_discard(f);
    }
    errno = saved;
    return what ? -1 : 0;
}

void gt_stream_file_discard(gt_stream_file *f)
{
    int saved = errno;
    if (f->fd >= 0) close(f->fd);
    if (!f->anonymous) unlink(f->tmp);
    f->fd = -1;
    errno = saved;
}
