/* A program built with a sanitizer's shared runtime (gcc's default for
 * -fsanitize=address, thread, leak, undefined and hwaddress; clang's with
 * -shared-libsan) needs that runtime first in the initial library list:
 * AddressSanitizer checks, and refuses to run ("ASan runtime does not come
 * first in initial library list") when a preloaded library is ahead of it.
 * So gputrace reads the program's own dependencies (its DT_NEEDED
 * entries) and puts the sanitizer runtime it names in front of LD_PRELOAD.
 * Only the program gputrace starts is read: a sanitized program started
 * by a script gets no such help.
 *
 * Which file: the one the program's own loader would load. The compiler's
 * answer (gcc -print-file-name) needs a compiler on the machine that runs
 * the program and knows nothing of the program's RUNPATH; reading
 * ld.so.cache misses RUNPATH and LD_LIBRARY_PATH. The program's own
 * interpreter (its PT_INTERP, the loader the kernel would start) lists
 * what it would load, with `--list`, as ldd does, without running the
 * program; gputrace takes the runtime's path from that list. When that
 * fails, the name as the program gives it goes in front: the loader looks
 * a preloaded name up the way it looks up the program's own dependencies,
 * so the program still gets the same file. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define MAX_PHDRS 256
#define MAX_DYNAMIC 1024  /* dynamic entries read; programs have a few dozen */
#define NAME_BYTES 256    /* a DT_NEEDED name, NUL included */
#define LIST_BYTES 65536u /* the loader's list read at most */

#if __SIZEOF_POINTER__ == 8
#define NATIVE_CLASS ELFCLASS64
#else
#define NATIVE_CLASS ELFCLASS32
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

/* The runtimes' file names start so (gcc's, then clang's). */
static const char *const runtimes[] = {
    "libasan.so",       "libhwasan.so",      "liblsan.so",         "libtsan.so",
    "libubsan.so",      "libclang_rt.asan",  "libclang_rt.hwasan", "libclang_rt.lsan",
    "libclang_rt.tsan", "libclang_rt.ubsan",
};

static int is_runtime(const char *name)
{
    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++)
        if (strncmp(name, runtimes[i], strlen(runtimes[i])) == 0) return 1;
    return 0;
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
    char *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n, len -= (size_t)n, off += n;
    }
    return 0;
}

/* The file offset of virtual address v, from the loadable segments; -1. */
static off_t file_offset(const ElfW(Phdr) * ph, size_t n, ElfW(Addr) v)
{
    for (size_t i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr && v - ph[i].p_vaddr < ph[i].p_filesz)
            return (off_t)(v - ph[i].p_vaddr + ph[i].p_offset);
    return -1;
}

/* What the program says about itself: its interpreter ("" when none) and
 * the first sanitizer runtime among its DT_NEEDED names ("" when none). */
typedef struct program_deps {
    char interp[PATH_MAX];
    char runtime[NAME_BYTES];
} program_deps;

static void read_deps(int fd, program_deps *d)
{
    ElfW(Ehdr) eh;
    static ElfW(Phdr) ph[MAX_PHDRS];
    static ElfW(Dyn) dyn[MAX_DYNAMIC];
    if (read_at(fd, &eh, sizeof eh, 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != NATIVE_CLASS || eh.e_ident[EI_DATA] != NATIVE_DATA ||
        eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0 || eh.e_phnum > MAX_PHDRS ||
        read_at(fd, ph, eh.e_phnum * sizeof ph[0], (off_t)eh.e_phoff) != 0)
        return;
    size_t n_dyn = 0;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type == PT_INTERP && ph[i].p_filesz > 1 && ph[i].p_filesz <= PATH_MAX &&
            read_at(fd, d->interp, ph[i].p_filesz, (off_t)ph[i].p_offset) == 0)
            d->interp[ph[i].p_filesz - 1] = '\0';
        if (ph[i].p_type == PT_DYNAMIC) {
            n_dyn = ph[i].p_filesz / sizeof dyn[0];
            if (n_dyn > MAX_DYNAMIC) n_dyn = MAX_DYNAMIC;
            if (read_at(fd, dyn, n_dyn * sizeof dyn[0], (off_t)ph[i].p_offset) != 0) n_dyn = 0;
        }
    }
    off_t strtab = -1;
    for (size_t i = 0; i < n_dyn && dyn[i].d_tag != DT_NULL; i++)
        if (dyn[i].d_tag == DT_STRTAB) strtab = file_offset(ph, eh.e_phnum, dyn[i].d_un.d_ptr);
    for (size_t i = 0; strtab >= 0 && i < n_dyn && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag != DT_NEEDED) continue;
        char name[NAME_BYTES];
        off_t at = strtab + (off_t)dyn[i].d_un.d_val;
        ssize_t got = pread(fd, name, sizeof name - 1, at);
        if (got <= 0) continue;
        name[got] = '\0';
        if (strlen(name) < (size_t)got && is_runtime(name)) {
            strcpy(d->runtime, name);
            return;
        }
    }
}

/* The path the loader's list gives for `name` ("\tNAME => PATH (0x...)"),
 * NULL when it gives none. Cuts `list`. */
static char *listed_path(char *list, const char *name)
{
    size_t len = strlen(name);
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        line += strspn(line, " \t");
        if (strncmp(line, name, len) != 0 || strncmp(line + len, " => /", 5) != 0) continue;
        char *path = line + len + 4;
        char *end = strstr(path, " (0x");
        if (end) *end = '\0';
        return strdup(path);
    }
    return NULL;
}

/* Runs `interp --list program` (stderr to /dev/null, LD_PRELOAD unset so
 * that only the program's own libraries are listed) and returns the path
 * it lists for `name`. */
static char *loader_path(const char *interp, const char *program, const char *name)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (dup2(fds[1], STDOUT_FILENO) < 0 || (null >= 0 && dup2(null, STDERR_FILENO) < 0))
            _exit(127);
        unsetenv("LD_PRELOAD");
        execl(interp, interp, "--list", program, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char *list = malloc(LIST_BYTES + 1);
    size_t len = 0;
    while (pid > 0 && list && len < LIST_BYTES) {
        ssize_t n = read(fds[0], list + len, LIST_BYTES - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    char *path = NULL;
    if (pid > 0 && list && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        list[len] = '\0';
        path = listed_path(list, name);
    }
    free(list);
    return path;
}

char *gt_cli_sanitizer_runtime(const char *path)
{
    static program_deps d;
    memset(&d, 0, sizeof d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    read_deps(fd, &d);
    close(fd);
    if (!d.runtime[0]) return NULL;
    char *found = d.interp[0] ? loader_path(d.interp, path, d.runtime) : NULL;
    /* LD_PRELOAD separates its entries with colons and spaces. */
    if (found && strpbrk(found, ": ")) {
        free(found);
        found = NULL;
    }
    return found ? found : strdup(d.runtime);
}
