/* real_driver.h: the symbol is read from the dynamic symbol table of the
 * file the loader mapped as libcuda.so.1, and relocated by its load base. */
#define _GNU_SOURCE
#include "real_driver.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void *find(const unsigned char *file, size_t size, const char *name)
{
    const Elf64_Ehdr *eh = (const void *)file;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        return NULL;
    const Elf64_Shdr *sh = (const void *)(file + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Sym *sym = (const void *)(file + sh[i].sh_offset);
        const char *names = (const char *)file + sh[sh[i].sh_link].sh_offset;
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
            if (sym[k].st_shndx != SHN_UNDEF && !strcmp(names + sym[k].st_name, name))
                return (void *)(uintptr_t)sym[k].st_value;
    }
    return NULL;
}

void *real_driver_symbol(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    struct link_map *map = NULL;
    if (!h || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || !map) return NULL;
    int fd = open(map->l_name, O_RDONLY | O_CLOEXEC);
    struct stat st;
    void *found = NULL;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        void *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (file != MAP_FAILED) {
            found = find(file, (size_t)st.st_size, name);
            munmap(file, (size_t)st.st_size);
        }
    }
    if (fd >= 0) close(fd);
    return found ? (char *)map->l_addr + (uintptr_t)found : NULL;
}
