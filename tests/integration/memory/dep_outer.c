/* A library opened with RTLD_LOCAL (as Python opens extension modules)
 * whose work is done by its dependency, dep_inner. */
#include <stddef.h>

int dep_inner_work(size_t bytes);

int dep_outer_work(size_t bytes)
{
    return dep_inner_work(bytes);
}
