/* The rules of every file the library and the command write (safe_file.h):
 * new temporary names never open what is there, the log is never written
 * through a link nor into someone else's file, a private directory is used
 * only while it is private. Cases that need another user (a file or a
 * directory of "nobody") run as root only. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "read_file.h"
#include "safe_file.h"

#define NOBODY 65534

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gt-safe-file-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[64 + sizeof dir];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *in_dir(char *buf, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", dir, name);
    return buf;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *contents(const char *path)
{
    static char buf[256];
    read_file(path, buf, sizeof buf);
    return buf;
}

static void test_temp_names(void **state)
{
    (void)state;
    char path[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
    in_dir(path, "run.json");
    mode_t old = umask(0);
    int fa = gt_file_create_temp(AT_FDCWD, path, O_WRONLY, GT_FILE_MODE, a, sizeof a);
    int fb = gt_file_create_temp(AT_FDCWD, path, O_RDWR, GT_FILE_PRIVATE_MODE, b, sizeof b);
    umask(old);
    assert_true(fa >= 0 && fb >= 0);
    assert_string_not_equal(a, b);
    /* "<path>.<16 hex digits>.tmp" */
    assert_int_equal(strlen(a), strlen(path) + 1 + 16 + 4);
    assert_memory_equal(a, path, strlen(path));
    assert_string_equal(a + strlen(a) - 4, ".tmp");
    struct stat st;
    assert_int_equal(fstat(fa, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_true((fcntl(fa, F_GETFD) & FD_CLOEXEC) != 0);
    assert_int_equal(fstat(fb, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    close(fa);
    close(fb);
    char tiny[8];
    assert_int_equal(gt_file_create_temp(AT_FDCWD, path, O_WRONLY, GT_FILE_MODE, tiny, sizeof tiny),
                     -1);
    assert_int_equal(errno, ENAMETOOLONG);
}

/* The log: created 0644 less the umask; never through a link (the target
 * stays as it was); not a file with another hard link; not someone else's
 * file or FIFO; a character device (/dev/null) is fine. */
static void test_log_rules(void **state)
{
    (void)state;
    char log[PATH_MAX], victim[PATH_MAX], other[PATH_MAX];
    const char *why = NULL;
    mode_t old = umask(0);
    int fd = gt_file_open_append(in_dir(log, "log"), &why);
    umask(old);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(write(fd, "a\n", 2), 2);
    close(fd);
    fd = gt_file_open_append(log, &why);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "b\n", 2), 2);
    close(fd);
    assert_string_equal(contents(log), "a\nb\n");

    write_file(in_dir(victim, "victim"), "precious\n");
    assert_int_equal(symlink(victim, in_dir(other, "planted")), 0);
    assert_int_equal(gt_file_open_append(other, &why), -1);
    assert_non_null(strstr(why, "symbolic link"));
    char missing[PATH_MAX];
    assert_int_equal(symlink(in_dir(missing, "missing"), in_dir(other, "dangling")), 0);
    assert_int_equal(gt_file_open_append(other, &why), -1); /* nor created through a link */
    assert_int_equal(access(missing, F_OK), -1);
    assert_int_equal(link(victim, in_dir(other, "hard")), 0);
    assert_int_equal(gt_file_open_append(other, &why), -1);
    assert_non_null(strstr(why, "hard link"));
    assert_string_equal(contents(victim), "precious\n");

    fd = gt_file_open_append("/dev/null", &why);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mkfifo(in_dir(other, "fifo"), 0600), 0);
    assert_int_equal(gt_file_open_append(other, &why), -1); /* no reader: no wait */
    assert_non_null(strstr(why, "no reader"));

    if (geteuid() != 0) return; /* another user's files need root to make */
    write_file(in_dir(other, "theirs"), "");
    assert_int_equal(chown(other, NOBODY, NOBODY), 0);
    assert_int_equal(gt_file_open_append(other, &why), -1);
    assert_non_null(strstr(why, "another user"));
    assert_string_equal(contents(other), "");
}

static void test_private_dir(void **state)
{
    (void)state;
    char path[PATH_MAX], other[PATH_MAX];
    const char *why = NULL;
    assert_int_equal(mkdir(in_dir(path, "private"), 0700), 0);
    int fd = gt_file_open_private_dir(path, &why);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(symlink(path, in_dir(other, "to-private")), 0);
    assert_int_equal(gt_file_open_private_dir(other, &why), -1);
    assert_non_null(strstr(why, "link"));
    assert_int_equal(chmod(path, 0755), 0);
    assert_int_equal(gt_file_open_private_dir(path, &why), -1);
    assert_non_null(strstr(why, "open to other users"));
    assert_int_equal(gt_file_open_private_dir(in_dir(path, "missing"), &why), -1);
    if (geteuid() != 0) return;
    assert_int_equal(mkdir(in_dir(path, "theirs"), 0700), 0);
    assert_int_equal(chown(path, NOBODY, NOBODY), 0);
    assert_int_equal(gt_file_open_private_dir(path, &why), -1);
    assert_non_null(strstr(why, "another user"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_temp_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_private_dir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
