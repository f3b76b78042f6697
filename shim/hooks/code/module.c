/* Module images described for the `module` category (module.h). A file is
 * mapped read-only to be looked at: the driver reads it next, so its pages
 * are the ones the load needs anyway. */
#include "module.h"

#include "image.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEVICES 64

/* Compute capability per device ordinal, 0 until known. Relaxed: every
 * asker stores the same value. A failed query (no cuInit yet) is asked
 * again next time. */
static _Atomic unsigned device_sm[MAX_DEVICES];
static gt_real_cache device_attribute;

static unsigned ask_sm(CUdevice dev)
{
    typedef CUresult (*attribute_fn)(int *, CUdevice_attribute, CUdevice);
    attribute_fn get = (attribute_fn)gt_cuda_real_once(&device_attribute, "cuDeviceGetAttribute");
    int major = 0, minor = 0;
    if (!get || get(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
        get(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS ||
        major <= 0 || minor < 0)
        return 0;
    return (unsigned)(major * 10 + minor);
}

unsigned gt_module_device_sm(void)
{
    unsigned sm = 0;
    GT_SHIM_WORK({
        /* No current context (a library is loaded before any): device 0. */
        uint16_t dev = gt_current_device();
        if (dev == GT_NO_DEVICE) dev = 0;
        if (dev < MAX_DEVICES) sm = atomic_load_explicit(&device_sm[dev], memory_order_relaxed);
        if (!sm) sm = ask_sm((CUdevice)dev);
        if (sm && dev < MAX_DEVICES)
            atomic_store_explicit(&device_sm[dev], sm, memory_order_relaxed);
    });
    return sm;
}

static void describe(gt_call *c, enum gt_image_kind kind, uint64_t bytes, unsigned sm,
                     enum gt_ptx_source source)
{
    c->u.module.image_kind = (uint8_t)kind;
    c->u.module.ptx_source = (uint8_t)source;
    c->u.module.device_sm = (uint8_t)(sm < 256 ? sm : 0);
    c->bytes = bytes;
}

/* A `ptx` image is PTX text or a fat binary holding PTX only. */
static int is_fatbin(const void *image)
{
    uint32_t magic;
    memcpy(&magic, image, sizeof magic);
    return magic == GT_FATBIN_MAGIC || magic == GT_FATBIN_WRAPPER_MAGIC;
}

void gt_module_describe(gt_call *c, const void *image)
{
    int saved = errno;
    uint64_t bytes;
    unsigned sm = gt_module_device_sm();
    enum gt_image_kind kind = gt_image_classify(image, SIZE_MAX, sm, &bytes);
    enum gt_ptx_source source = GT_PTX_FROM_MEMORY;
    if (kind == GT_IMAGE_PTX)
        source = is_fatbin(image) ? GT_PTX_FROM_FATBIN : gt_ptx_source_of(image, bytes);
    describe(c, kind, bytes, sm, source);
    errno = saved;
}

/* The kind of the image in a file, and in *fatbin whether it is a fat
 * binary. */
static enum gt_image_kind file_kind(const char *path, uint64_t *bytes, int *fatbin)
{
    int saved = errno;
    enum gt_image_kind kind = GT_IMAGE_UNKNOWN;
    *bytes = 0;
    *fatbin = 0;
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t size = (size_t)st.st_size;
        void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            kind = gt_image_classify(map, size, gt_module_device_sm(), bytes);
            *fatbin = size >= 4 && is_fatbin(map);
            munmap(map, size);
        }
    }
    if (fd >= 0) close(fd);
    errno = saved;
    return kind;
}

enum gt_image_kind gt_module_file_kind(const char *path, uint64_t *bytes)
{
    int fatbin;
    return file_kind(path, bytes, &fatbin);
}

void gt_module_describe_file(gt_call *c, const char *path)
{
    uint64_t bytes;
    int fatbin;
    enum gt_image_kind kind = file_kind(path, &bytes, &fatbin);
    describe(c, kind, bytes, gt_module_device_sm(), fatbin ? GT_PTX_FROM_FATBIN : GT_PTX_FROM_FILE);
}
