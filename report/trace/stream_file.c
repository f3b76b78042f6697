/* O_TMPFILE and linkat's AT_SYMLINK_FOLLOW are GNU interfaces: the build's
 * -std=gnu11 alone does not declare them. */
#define _GNU_SOURCE
#include "fd_guard.h"
#include "safe_file.h"
#include "stream_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* Whether fd is the file just created: the named temporary file, or an
 * unnamed empty file in the directory's file system. Between open() and
 * the move to a high number, a program thread closing descriptors could
 * have closed the new one and opened a file of its own on its number:
 * that file is then never taken for ours. */
static bool just_created(const gt_stream_file *f, int fd, dev_t dir_dev)
{
    struct stat st, named;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0) return false;
    if (f->anonymous) return st.st_nlink == 0 && st.st_dev == dir_dev;
    return lstat(f->tmp, &named) == 0 && named.st_dev == st.st_dev && named.st_ino == st.st_ino;
}

int gt_stream_file_open(gt_stream_file *f, const char *path, char *err, size_t errcap)
{
    int saved = errno;
    f->fd = -1;
    f->anonymous = false;
    f->file = (gt_fd_identity){0, 0, false};
    f->pin = NULL;
    char dir[PATH_MAX];
    struct stat dir_st = {.st_dev = 0};
    /* A name tried now so that a path too long is refused before any work. */
    if (gt_file_temp_name(path, f->tmp, sizeof f->tmp) != 0 ||
        directory_of(path, dir, sizeof dir) != 0) {
        f->tmp[0] = '\0';
        reason(err, errcap, path, "path too long", ENAMETOOLONG);
        errno = saved;
        return -1;
    }
    /* Naming it at the end goes through /proc: without /proc, use a name
     * now. Read and write: the pin below maps it. */
    int fd = -1;
    if (access("/proc/self/fd", F_OK) == 0 && stat(dir, &dir_st) == 0) {
        fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, GT_FILE_MODE);
        f->anonymous = fd >= 0;
        if (f->anonymous) f->tmp[0] = '\0'; /* named at the commit */
    }
    if (fd < 0)
        fd = gt_file_create_temp(AT_FDCWD, path, O_RDWR, GT_FILE_MODE, f->tmp, sizeof f->tmp);
    if (fd < 0) {
        f->tmp[0] = '\0'; /* a name that exists is someone else's */
        reason(err, errcap, path, "cannot create the temporary file", errno);
        errno = saved;
        return -1;
    }
    int high = gt_fd_move_high(fd);
    if (!just_created(f, high, dir_st.st_dev)) {
        if (high != fd) close(high); /* our own copy; fd is the program's now */
        if (!f->anonymous) unlink(f->tmp);
        f->tmp[0] = '\0';
        reason(err, errcap, path, GT_STREAM_FILE_TAKEN, EBADF);
        errno = saved;
        return -1;
    }
    f->fd = high;
    f->file = gt_fd_identity_of(high);
    /* The identity is only as good as the inode number staying this file's:
     * once the program closed the descriptor of an unnamed file, the file
     * system would give the number to the next file created (ext4 does at
     * once). A mapping holds the file open whatever happens to the
     * descriptor; it is never touched, so it costs no memory. */
    void *pin = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, high, 0);
    f->pin = pin == MAP_FAILED ? NULL : pin;
    errno = saved;
    return 0;
}

static void unpin(gt_stream_file *f)
{
    if (f->pin) munmap(f->pin, (size_t)sysconf(_SC_PAGESIZE));
    f->pin = NULL;
}

/* Gives an anonymous file a new temporary name beside path: linkat never
 * replaces nor follows what is at a name, so a name taken (a link
 * planted there among them) makes another random name be tried. */
static int link_anonymous(gt_stream_file *f, const char *path)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
    for (int attempt = 0; attempt < 16; attempt++) {
        if (gt_file_temp_name(path, f->tmp, sizeof f->tmp) != 0) {
            errno = ENAMETOOLONG;
            break;
        }
        if (linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp, AT_SYMLINK_FOLLOW) == 0) return 0;
        if (errno != EEXIST) break;
    }
    f->tmp[0] = '\0';
    return -1;
}

int gt_stream_file_commit(gt_stream_file *f, const char *path, char *err, size_t errcap)
{
    int saved = errno;
    const char *what = NULL;
    /* Linking or closing a descriptor that is now the program's would
     * name or close its file. */
    if (!gt_fd_is(f->fd, &f->file)) {
        what = GT_STREAM_FILE_TAKEN;
        errno = EBADF;
    } else if (f->anonymous && link_anonymous(f, path) != 0) {
        what = "cannot name the temporary file";
    } else {
        f->anonymous = false;
        if (close(f->fd) != 0) what = "write failed";
        f->fd = -1;
        if (!what && rename(f->tmp, path) != 0) what = "cannot replace the file";
        if (!what) f->tmp[0] = '\0'; /* the name is the report's now */
        unpin(f);
    }
    if (what) {
        reason(err, errcap, path, what, errno);
        gt_stream_file_discard(f);
    }
    errno = saved;
    return what ? -1 : 0;
}

void gt_stream_file_forget(gt_stream_file *f)
{
    int saved = errno;
    if (f->fd >= 0 && gt_fd_is(f->fd, &f->file)) close(f->fd);
    f->fd = -1;
    unpin(f);
    errno = saved;
}

void gt_stream_file_discard(gt_stream_file *f)
{
    int saved = errno;
    gt_stream_file_forget(f);
    if (!f->anonymous && f->tmp[0]) unlink(f->tmp);
    errno = saved;
}
