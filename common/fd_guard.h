/* Descriptors kept in someone else's process. The program may close any
 * descriptor it did not open (daemons close 3..1023, shells' children
 * close what they do not know) and then get that number back for a file
 * of its own: a writer that kept the number would write into that file.
 * So a kept descriptor remembers which file it is (device and inode) and
 * every writer checks that it still is before a batch of writes, a close,
 * a link or a rename; and it is kept high, out of the numbers a program's
 * own open() gets, so that the number is practically never handed back
 * between the check and the write that follows it. */
#ifndef GT_FD_GUARD_H
#define GT_FD_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

typedef struct gt_fd_identity {
    uint64_t dev, ino;
    bool known; /* false: the descriptor was not open when taken */
} gt_fd_identity;

/* The file st describes. */
gt_fd_identity gt_fd_identity_of_stat(const struct stat *st);

/* The file fd refers to now (unknown when fd is not open). errno is kept. */
gt_fd_identity gt_fd_identity_of(int fd);

/* Whether fd still refers to the file id was taken from: false when id is
 * unknown, fd is closed, or another file has its number. errno is kept. */
bool gt_fd_is(int fd, const gt_fd_identity *id);

/* Moves fd (close-on-exec) to a number near the top of the descriptors a
 * program normally has (below min(RLIMIT_NOFILE, 1024)), where open() and
 * dup() reach only once every lower number is taken; returns the new
 * number, or fd itself when there is no free number there. errno is kept. */
int gt_fd_move_high(int fd);

/* Grows the process's descriptor table to hold that band, where it is
 * cheap: in a process with one thread. The kernel never shrinks the table;
 * growing it once the process has threads waits for an RCU grace period
 * (10 ms measured here) in the thread that moves a descriptor up. */
void gt_fd_grow_table(void);

#endif
