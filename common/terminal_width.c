#include "terminal_width.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>

unsigned gt_terminal_width(const char *columns, int fd)
{
    int saved = errno;
    unsigned width = 0;
    if (columns && columns[0] >= '0' && columns[0] <= '9') {
        char *end;
        unsigned long n = strtoul(columns, &end, 10);
        if (!*end && n >= 1 && n <= GT_TERMINAL_MAX_COLUMNS) width = (unsigned)n;
    }
    struct winsize ws;
    if (!width && fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0) width = ws.ws_col;
    errno = saved;
    return width;
}
