/* Test helper: a small file's text. */
#ifndef GT_TEST_READ_FILE_H
#define GT_TEST_READ_FILE_H

#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

/* Up to cap - 1 bytes of the file into buf, NUL-terminated; -1 (buf "")
 * when it cannot be opened. */
static inline int read_file(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return 0;
}

#endif
