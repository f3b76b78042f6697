/* The fuzz corpus as a regression test: every file in the directories
 * given goes through gt_fuzz_one (the reader, every writer, merge, diff);
 * a crash or a sanitizer report fails the test. Prints how many were read
 * as reports and how many refused; fails when a directory is empty or
 * when none is read (the corpus would then test only the refusals). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_one.h"

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = realloc(buf, cap);
            if (!grown) break;
            buf = grown;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *size = n;
    return buf;
}

int main(int argc, char **argv)
{
    unsigned read = 0, refused = 0;
    for (int i = 1; i < argc; i++) {
        DIR *dir = opendir(argv[i]);
        if (!dir) {
            perror(argv[i]);
            return 1;
        }
        unsigned here = 0;
        for (struct dirent *e; (e = readdir(dir));) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            size_t size = 0;
            char *data = read_file(path, &size);
            if (!data) {
                perror(path);
                return 1;
            }
            if (gt_fuzz_one((const uint8_t *)data, size))
                read++;
            else
                refused++;
            here++;
            free(data);
        }
        closedir(dir);
        if (!here) {
            fprintf(stderr, "%s: empty corpus\n", argv[i]);
            return 1;
        }
    }
    printf("%u inputs read as reports, %u refused\n", read, refused);
    return read ? 0 : 1;
}
