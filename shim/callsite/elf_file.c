/* A loaded object's file, for its function names, line table and debug
 * information.
 *
 * The file is the one the object was loaded from (modules.h); it may have
 * been rebuilt since, so where the loaded object carries a GNU build id
 * the file's must be the same, or its names are not used. Functions come
 * from .symtab, else .dynsym (a stripped object keeps only its exported
 * names). Compressed debug sections are not read (docs/limitations.md). */
#include "elf_file.h"

#include "modules.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct id {
    const uint8_t *bytes;
    size_t len;
} id;

/* The NT_GNU_BUILD_ID note among `len` bytes of notes. */
static id build_id(const uint8_t *notes, size_t len)
{
    size_t at = 0;
    while (at + sizeof(ElfW(Nhdr)) <= len) {
        const ElfW(Nhdr) *n = (const void *)(notes + at);
        size_t name = (n->n_namesz + 3u) & ~3u, desc = (n->n_descsz + 3u) & ~3u;
        const uint8_t *data = notes + at + sizeof *n;
        if (at + sizeof *n + name + desc > len) break;
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(data, "GNU", 4) == 0)
            return (id){data + name, n->n_descsz};
        at += sizeof *n + name + desc;
    }
    return (id){NULL, 0};
}

typedef struct loaded_note {
    const gt_module *m;
    id found;
} loaded_note;

static int visit(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    loaded_note *ln = ctx;
    if (info->dlpi_addr != ln->m->bias) return 0;
    int ours = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr == ln->m->start) ours = 1;
    }
    if (!ours) return 0;
    for (unsigned i = 0; i < info->dlpi_phnum && !ln->found.bytes; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            ln->found = build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz);
    }
    return 1;
}

static const ElfW(Shdr) * section(const gt_elf *e, const ElfW(Ehdr) * h, unsigned i)
{
    if (i >= h->e_shnum) return NULL;
    const ElfW(Shdr) *s = (const void *)(e->map + h->e_shoff + (size_t)i * h->e_shentsize);
    if (s->sh_type != SHT_NOBITS && (s->sh_offset > e->size || s->sh_size > e->size - s->sh_offset))
        return NULL;
    return s;
}

static const uint8_t *bytes_of(const gt_elf *e, const ElfW(Shdr) * s, size_t *len)
{
    if (!s || s->sh_type == SHT_NOBITS || (s->sh_flags & SHF_COMPRESSED)) return NULL;
    *len = s->sh_size;
    return e->map + s->sh_offset;
}

/* The debug sections this reader knows, by name. */
static void debug_section(gt_elf *e, const char *name, const uint8_t *b, size_t len)
{
    const struct {
        const char *name;
        const uint8_t **bytes;
        size_t *len;
    } known[] = {
        {".debug_line", &e->line, &e->line_len},
        {".debug_line_str", &e->line_str, &e->line_str_len},
        {".debug_str", &e->str, &e->str_len},
        {".debug_info", &e->info, &e->info_len},
        {".debug_abbrev", &e->abbrev, &e->abbrev_len},
        {".debug_ranges", &e->ranges, &e->ranges_len},
        {".debug_rnglists", &e->rnglists, &e->rnglists_len},
        {".debug_addr", &e->addr, &e->addr_len},
        {".debug_str_offsets", &e->str_offsets, &e->str_offsets_len},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(name, known[i].name) != 0) continue;
        *known[i].bytes = b;
        *known[i].len = b ? len : 0;
    }
}

static int by_addr(const void *a, const void *b)
{
    const gt_elf_sym *x = a, *y = b;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

/* The functions of one symbol table; 0, or -1 when it has none. */
static int load_symbols(gt_elf *e, const ElfW(Ehdr) * h, const ElfW(Shdr) * tab)
{
    const ElfW(Shdr) *strs = section(e, h, tab->sh_link);
    size_t slen = 0, tlen = 0;
    const char *names = (const char *)bytes_of(e, strs, &slen);
    const ElfW(Sym) *syms = (const void *)bytes_of(e, tab, &tlen);
    if (!names || !syms || tab->sh_entsize != sizeof(ElfW(Sym))) return -1;
    size_t n = tlen / sizeof(ElfW(Sym)), kept = 0;
    gt_elf_sym *out = malloc((n ? n : 1) * sizeof *out);
    if (!out) return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned type = ELF64_ST_TYPE(syms[i].st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !syms[i].st_value ||
            syms[i].st_shndx == SHN_UNDEF || syms[i].st_name >= slen)
            continue;
        out[kept++] = (gt_elf_sym){syms[i].st_value, syms[i].st_size, names + syms[i].st_name};
    }
    if (!kept) {
        free(out);
        return -1;
    }
    qsort(out, kept, sizeof *out, by_addr);
    e->syms = out;
    e->nsyms = kept;
    return 0;
}

static int read_file(gt_elf *e, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > sizeof(ElfW(Ehdr)) &&
        (uint64_t)st.st_size <= GT_ELF_MAX_BYTES)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return -1;
    e->map = map;
    e->size = (size_t)st.st_size;
    return 0;
}

int gt_elf_open(gt_elf *e, const gt_module *m)
{
    if (e->state) return e->state > 0 ? 0 : -1;
    e->state = -1;
    if (!m->path || !m->path[0] || read_file(e, m->path) != 0) return -1;
    const ElfW(Ehdr) *h = (const void *)e->map;
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_shentsize != sizeof(ElfW(Shdr)) || h->e_shoff > e->size ||
        (uint64_t)h->e_shnum * h->e_shentsize > e->size - h->e_shoff)
        goto unusable;
    loaded_note ln = {m, {NULL, 0}};
    dl_iterate_phdr(visit, &ln);
    const ElfW(Shdr) *names = section(e, h, h->e_shstrndx);
    size_t nlen = 0;
    const char *shstr = (const char *)bytes_of(e, names, &nlen);
    const ElfW(Shdr) *symtab = NULL, *dynsym = NULL;
    id file_id = {NULL, 0};
    for (unsigned i = 0; shstr && i < h->e_shnum; i++) {
        const ElfW(Shdr) *s = section(e, h, i);
        if (!s || s->sh_name >= nlen) continue;
        const char *name = shstr + s->sh_name;
        size_t len = 0;
        const uint8_t *b = bytes_of(e, s, &len);
        if (s->sh_type == SHT_SYMTAB) symtab = s;
        if (s->sh_type == SHT_DYNSYM) dynsym = s;
        if (s->sh_type == SHT_NOTE && b && !file_id.bytes) file_id = build_id(b, len);
        debug_section(e, name, b, len);
    }
    if (ln.found.bytes &&
        (ln.found.len != file_id.len || memcmp(ln.found.bytes, file_id.bytes, file_id.len) != 0))
        goto unusable;
    if (!(symtab && load_symbols(e, h, symtab) == 0) && dynsym) load_symbols(e, h, dynsym);
    e->state = 1;
    return 0;
unusable:
    munmap((void *)e->map, e->size);
    e->map = NULL;
    return -1;
}

const gt_elf_sym *gt_elf_function(const gt_elf *e, uint64_t addr)
{
    size_t lo = 0, hi = e->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* The last symbol at or below addr; a zero size (assembly) holds up to
     * the next symbol. */
    if (!lo) return NULL;
    const gt_elf_sym *s = &e->syms[lo - 1];
    if (s->size && addr - s->addr >= s->size) return NULL;
    return s;
}
