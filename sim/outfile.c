/*
 * sim/outfile.c - how pfisim writes an output file (docs/reliability.md).
 *
 * A regular file is written whole or not at all: into a new temporary file beside it,
 * flushed to disk, then renamed over it, so that a reader (or a crash, or a full disk)
 * sees the old file or the new one, never half of one. Anything else is written in place,
 * because renaming over it would replace it: "-" is standard output; a device (/dev/null),
 * a FIFO or a socket is opened and written as it is. A symbolic link is followed: the file
 * it points to is replaced, the link stays; a link to nothing is refused rather than
 * replaced by a file, and so is another user's link in a sticky, world-writable folder such
 * as /tmp (pfs__link_check: the kernel's protected_symlinks rule, which resolving the link
 * here would sidestep). A directory is refused.
 *
 * The temporary file is created with O_EXCL under a name no other writer uses (the
 * process and a counter), with the target's permissions when it exists (else 0666 less the
 * umask), and is removed on every failure. Every error names the output's path.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static atomic_uint tmp_counter;
static atomic_bool interrupted;

void
pfs_interrupt(void)
{
    atomic_store(&interrupted, true);
}

bool
pfs_interrupted(void)
{
    return atomic_load(&interrupted);
}

/*
 * The temporary files alive now, so that a signal that ends the process can remove them
 * (pfs_tmp_remove_all): without it, Ctrl-C, SIGTERM or SIGHUP mid-run left hidden
 * .r.db.PID-0.tmp files of hundreds of MB beside the outputs. A slot is claimed (0 -> 2),
 * its path written, then published (1); the remover reads only published slots and takes no
 * lock, so it may run from a signal handler or from a thread while others write.
 */
#define MAX_LIVE 64
static struct {
    atomic_int state; /* 0 free, 2 being written, 1 a live temporary at path */
    char path[1100];
} live[MAX_LIVE];

static void
tmp_note(const char *tmp)
{
    for (size_t k = 0; k < MAX_LIVE; k++) {
        int expect = 0;

        if (atomic_compare_exchange_strong(&live[k].state, &expect, 2)) {
            pfs__strlcpy(live[k].path, tmp, sizeof live[k].path);
            atomic_store(&live[k].state, 1);
            return;
        }
    }
    /* (more than 64 at once: that one is not removed by a signal, only by its writer) */
}

void
pfs__tmp_gone(const char *tmp)
{
    for (size_t k = 0; k < MAX_LIVE; k++) {
        int expect = 1;

        if (atomic_load(&live[k].state) == 1 && strcmp(live[k].path, tmp) == 0 &&
            atomic_compare_exchange_strong(&live[k].state, &expect, 2)) {
            live[k].path[0] = '\0';
            atomic_store(&live[k].state, 0);
            return;
        }
    }
}

/* unlink(a b), async-signal-safe: no snprintf. */
static void
unlink_suffixed(const char *a, const char *b)
{
    char p[1200];
    size_t n = 0;

    for (; *a && n + 1 < sizeof p; a++)
        p[n++] = *a;
    for (; *b && n + 1 < sizeof p; b++)
        p[n++] = *b;
    p[n] = '\0';
    unlink(p);
}

void
pfs_tmp_remove_all(void)
{
    static const char *const sidecars[] = {"", "-journal", "-wal", "-shm"};

    for (size_t k = 0; k < MAX_LIVE; k++)
        if (atomic_load(&live[k].state) == 1)
            for (size_t i = 0; i < 4; i++) /* (a new database's SQLite files beside it) */
                unlink_suffixed(live[k].path, sidecars[i]);
}

/* The directory part of path into dir ("." when it has none). */
static void
dir_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        pfs__strlcpy(dir, ".", size);
    else if (slash == path)
        pfs__strlcpy(dir, "/", size);
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

int
pfs__tmp_beside(const char *target, char *tmp, size_t size)
{
    char dir[1100];
    const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;

    dir_of(target, dir, sizeof dir);
    for (int tries = 0; tries < 100; tries++) {
        unsigned n = atomic_fetch_add(&tmp_counter, 1);
        int fd;

        if (snprintf(tmp, size, "%s/.%s.%ld-%u.tmp", dir, base, (long)getpid(), n) >= (int)size) {
            errno = ENAMETOOLONG;
            break;
        }
        if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) >= 0) {
            tmp_note(tmp);
            return fd;
        }
        if (errno != EEXIST)
            return fd;
    }
    return -1;
}

int
pfs__link_check(const char *path, struct pfs_diag *diag)
{
    struct stat lst, dst;
    char dir[1100];

    if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode))
        return 0;
    dir_of(path, dir, sizeof dir);
    if (stat(dir, &dst) != 0)
        return 0; /* (the open that follows says why) */
    /* The kernel's fs.protected_symlinks rule, which a path resolved in user space
     * (realpath, then a rename over the target) would sidestep: in a sticky, world-writable
     * folder, a link is followed only by its owner or where it shares the folder's owner. */
    if ((dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH) && lst.st_uid != geteuid() &&
        lst.st_uid != dst.st_uid)
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL,
                             "cannot write: a symbolic link owned by another user (uid %ld) in "
                             "a shared sticky folder; pfisim does not follow it (remove it, or "
                             "name the file it points to)",
                             (long)lst.st_uid);
    return 0;
}

int
pfs__out_open(struct pfs__out *o, const char *path, struct pfs_diag *diag)
{
    struct stat st, lst;
    bool exists, is_link;
    mode_t mode = 0666;
    const char *target = path;
    char resolved[PATH_MAX];
    int fd = -1;

    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->fp = stdout;
        o->is_stdout = true;
        pfs__strlcpy(o->path, "standard output", sizeof o->path);
        return 0;
    }
    if (!pfs__strlcpy(o->path, path, sizeof o->path))
        return pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL, "output path too long: %.200s", path);
    if (pfs__link_check(path, diag) != 0)
        return PFS_EIO;
    exists = stat(path, &st) == 0;
    is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (!exists && errno != ENOENT)
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(errno));
    if (!exists && is_link)
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL,
                             "cannot write: a symbolic link to a file that does not exist "
                             "(pfisim replaces the file a link points to, never the link)");
    if (exists && S_ISDIR(st.st_mode))
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot write: is a directory");
    if (exists && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or socket: written in place, never replaced. */
        if (!(o->fp = fopen(path, "w")))
            return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot write: %s",
                                 strerror(errno));
        return 0;
    }
    if (exists) {
        mode = st.st_mode & 07777;
        if (is_link) {
            if (!realpath(path, resolved))
                return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL,
                                     "cannot follow the symbolic link: %s", strerror(errno));
            target = resolved;
        }
    }
    if (!pfs__strlcpy(o->target, target, sizeof o->target))
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "output path too long");
    if ((fd = pfs__tmp_beside(target, o->tmp, sizeof o->tmp)) < 0 && errno == ENAMETOOLONG) {
        o->tmp[0] = '\0';
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "output path too long");
    }
    if (fd < 0) {
        int e = errno;

        o->tmp[0] = '\0';
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(e));
    }
    if (exists)
        (void)fchmod(fd, mode); /* keep the file's permissions; best effort */
    if (!(o->fp = fdopen(fd, "w"))) {
        close(fd);
        unlink(o->tmp);
        pfs__tmp_gone(o->tmp);
        o->tmp[0] = '\0';
        return pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    return 0;
}

/* Names the output in an error that has no file yet (a writer's "write error"). */
static int
blame(struct pfs__out *o, int rc, struct pfs_diag *diag)
{
    if (rc && diag && !diag->file[0] && !o->is_stdout)
        pfs__strlcpy(diag->file, o->path, sizeof diag->file);
    return rc;
}

int
pfs__out_close(struct pfs__out *o, int rc, struct pfs_diag *diag)
{
    int e = 0;

    if (!o->fp)
        return blame(o, rc, diag);
    if (fflush(o->fp) != 0 || ferror(o->fp))
        e = errno ? errno : EIO;
    if (o->is_stdout) {
        o->fp = NULL;
        if (rc == 0 && e)
            rc = pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL,
                               "cannot write to standard "
                               "output: %s",
                               strerror(e));
        return rc;
    }
    /* A regular file reaches the disk before it replaces the old one. */
    if (rc == 0 && !e && o->tmp[0] && fsync(fileno(o->fp)) != 0 && errno != EINVAL)
        e = errno;
    if (fclose(o->fp) != 0 && !e)
        e = errno ? errno : EIO;
    o->fp = NULL;
    if (rc == 0 && e)
        rc = pfs__diag_set(diag, PFS_EIO, o->path, 0, 0, NULL, "cannot write: %s", strerror(e));
    if (rc && o->tmp[0]) {
        unlink(o->tmp);
        pfs__tmp_gone(o->tmp);
        o->tmp[0] = '\0';
    }
    return blame(o, rc, diag);
}

int
pfs__out_commit(struct pfs__out *o, struct pfs_diag *diag)
{
    if (!o->tmp[0])
        return 0;
    if (rename(o->tmp, o->target) != 0) {
        int e = errno;

        unlink(o->tmp);
        pfs__tmp_gone(o->tmp);
        o->tmp[0] = '\0';
        return pfs__diag_set(diag, PFS_EIO, o->path, 0, 0, NULL, "cannot rename into place: %s",
                             strerror(e));
    }
    pfs__tmp_gone(o->tmp);
    o->tmp[0] = '\0';
    return 0;
}

void
pfs__out_abort(struct pfs__out *o)
{
    if (o->fp && !o->is_stdout)
        fclose(o->fp);
    o->fp = NULL;
    if (o->tmp[0]) {
        unlink(o->tmp);
        pfs__tmp_gone(o->tmp);
    }
    o->tmp[0] = '\0';
}

int
pfs__out_end(struct pfs__out *o, int rc, struct pfs_diag *diag)
{
    rc = pfs__out_close(o, rc, diag);
    return rc ? rc : pfs__out_commit(o, diag);
}

int
pfs__out_write(const char *path, int (*write)(const void *obj, FILE *fp, struct pfs_diag *d),
               const void *obj, struct pfs_diag *diag)
{
    struct pfs__out o;
    int rc = pfs__out_open(&o, path, diag);

    if (rc)
        return rc;
    return pfs__out_end(&o, write(obj, o.fp, diag), diag);
}
