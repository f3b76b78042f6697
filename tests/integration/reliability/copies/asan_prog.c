/* A program built with -fsanitize=address (the shared runtime, gcc's
 * default):
 *
 *     asan_prog preload    prints LD_PRELOAD as the program sees it
 *     asan_prog overflow   writes past a heap block: AddressSanitizer
 *                          reports it and ends the program (status 1) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "preload") == 0) {
        const char *preload = getenv("LD_PRELOAD");
        printf("%s\n", preload ? preload : "(unset)");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "overflow") == 0) {
        volatile char *block = malloc(8);
        printf("writing past the block\n");
        fflush(stdout);
        block[strlen(argv[1])] = 1; /* "overflow": 8, one past the end */
        free((void *)block);
        return 0;
    }
    fprintf(stderr, "usage: asan_prog preload|overflow\n");
    return 2;
}
