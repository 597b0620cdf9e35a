/* The kernel's floor for the deny-read carving (docs/performance.md, "The
 * carving's cost per rule"): what Landlock rules cost a fresh process that
 * does nothing else, to compare with what safe-exec pays for them.
 *
 *   gcc -O2 -static benches/carve_floor.c -o /tmp/carve_floor
 *   carve_floor entries DIR N   grant each of the first N entries of DIR its
 *                               own rule (listed with getdents64, each opened
 *                               with openat(O_PATH|O_NOFOLLOW) relative to the
 *                               listing, landlock_add_rule, close), as the
 *                               carving does for HOME's entries
 *   carve_floor chain DIR N     list DIR/d1, DIR/d1/d2, ... N levels deep, each
 *                               opened relative to the one above and given a
 *                               read_dir rule with the listing's descriptor, as
 *                               the carving does on the way down to HOME
 * then read access to `/` as one rule, landlock_restrict_self, exec /bin/true.
 * N = 0 is the baseline; time the two alternately (CPU of the process and
 * the /bin/true it becomes), many rounds on a loaded machine. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

struct dirent64_head {
    unsigned long long ino;
    long long off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

static int add(int rs, int fd, unsigned long long access) {
    struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
    return (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: carve_floor entries|chain DIR N\n");
        return 2;
    }
    int n = atoi(argv[3]);
    struct landlock_ruleset_attr ra = {.handled_access_fs = (1ULL << 16) - 1};
    int rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
    if (rs < 0 || add(rs, open("/", O_PATH | O_CLOEXEC), READ)) {
        perror("landlock");
        return 1;
    }
    char buf[8192];
    if (!strcmp(argv[1], "entries")) {
        int dfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int got = 0;
        long k;
        while ((k = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < k;) {
                struct dirent64_head *d = (void *)(buf + off);
                off += d->reclen;
                if (!strcmp(d->name, ".") || !strcmp(d->name, "..") || got >= n)
                    continue;
                int fd = openat(dfd, d->name, O_PATH | O_CLOEXEC | O_NOFOLLOW);
                unsigned long long access = d->type == DT_DIR ? READ : READ & ~LANDLOCK_ACCESS_FS_READ_DIR;
                if (fd < 0 || add(rs, fd, access)) {
                    perror(d->name);
                    return 1;
                }
                close(fd);
                got++;
            }
        }
    } else {
        int cur = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char name[16];
        for (int i = 1; i <= n; i++) {
            snprintf(name, sizeof name, "d%d", i);
            int fd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
            if (fd < 0) {
                perror(name);
                return 1;
            }
            while (syscall(SYS_getdents64, fd, buf, sizeof buf) > 0) {
            }
            if (add(rs, fd, LANDLOCK_ACCESS_FS_READ_DIR)) {
                perror("add");
                return 1;
            }
            cur = fd;
        }
    }
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (syscall(SYS_landlock_restrict_self, rs, 0)) {
        perror("restrict");
        return 1;
    }
    char *av[] = {"/bin/true", NULL};
    execv("/bin/true", av);
    return 1;
}
