#include <stdio.h>
#include <stdlib.h>

#include "app_util.h"
#include "test_support.h"

char *read_whole_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) app_wrong("cannot open a file to read");
    long n = ftell(f);
    char *data = n > 0 ? aligned_alloc(8, ((size_t)n + 8) & ~(size_t)7) : NULL;
    rewind(f);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) app_wrong("short read");
    fclose(f);
    data[n] = '\0';
    *size = (size_t)n;
    return data;
}
