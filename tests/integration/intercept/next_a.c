/* Two libraries that define the same function, linked in this order (a,
 * then b): dlsym(RTLD_NEXT) from a must find b's, as without the shim. */
#include <dlfcn.h>

char next_probe(void)
{
    return 'a';
}

char next_probe_from_a(void)
{
    char (*next)(void) = (char (*)(void))dlsym(RTLD_NEXT, "next_probe");
    return next ? next() : '?';
}
