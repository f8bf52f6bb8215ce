/* Output files written through a temporary file and renamed into place. */
#include "ofile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist.h"
#include "err.h"

#define OFILE_SPAN ((off_t)64 << 20)

struct ofile {
    char *path; /* the target as given */
    char *tmp;  /* what is written: the temporary file, or path when direct */
    int fd;
    FILE *f;
    int direct; /* an existing device or FIFO: written in place */
    int force;  /* replace an existing target */
    /* ofile_write: bytes written, and how far their write-back was started */
    off_t done, started;
};

/* Is st one of the session log's files (by device and inode)? */
static int is_log_file(const struct stat *st, const char *log_path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    if (!log_path || !*log_path)
        return 0;
    size_t n = strlen(log_path);
    char *p = xmalloc(n + 16);
    int hit = 0;
    for (size_t k = 0; k < sizeof suffix / sizeof suffix[0] && !hit; k++) {
        struct stat ls;
        memcpy(p, log_path, n);
        strcpy(p + n, suffix[k]);
        hit = stat(p, &ls) == 0 && ls.st_dev == st->st_dev && ls.st_ino == st->st_ino;
    }
    free(p);
    return hit;
}

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: names of what the
 * process already has open, written in place (appended to when a shell
 * redirected them to a file). Any other name under /dev or /proc
 * (/dev/shm/x, /proc/self/cwd/x) is judged by what it names, as every
 * other path is: a regular file or a link is refused without force. */
static int is_fd_name(const char *path)
{
    return strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0 ||
           strncmp(path, "/dev/fd/", 8) == 0 || strncmp(path, "/proc/self/fd/", 14) == 0;
}

/* A temporary file next to path (so rename stays in one file system), with
 * the permissions a new file would get, named NAME.tcjoin-partial-XXXXXX:
 * not hidden, so what a kill -9 in the middle of a write leaves (hundreds
 * of MB of pairs) is seen by ls beside the file it was to become and can
 * be removed by the user; tcjoin cannot tell a dead writer's file from a
 * live one in another process, so it removes none itself. */
static int make_tmp(ofile *o)
{
    const char *slash = strrchr(o->path, '/');
    size_t dirlen = slash ? (size_t)(slash - o->path) + 1 : 0;
    const char *base = slash ? slash + 1 : o->path;
    size_t blen = strlen(base);
    if (blen > 200) /* leave room for the suffix within NAME_MAX */
        blen = 200;
    o->tmp = xmalloc(dirlen + blen + 32);
    memcpy(o->tmp, o->path, dirlen);
    memcpy(o->tmp + dirlen, base, blen);
    strcpy(o->tmp + dirlen + blen, ".tcjoin-partial-XXXXXX");
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0)
        return err_set(TCJ_EIO, "%s: cannot create: %s", o->path, strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    fchmod(o->fd, 0666 & ~mask);
    return 0;
}

int ofile_open(const char *path, int force, const char *log_path, ofile **out)
{
    *out = NULL;
    if (!path || !*path)
        return err_set(TCJ_EINVAL, "empty output file name");
    /* tcjoin-mpi: rank 0 writes what the command writes; another rank
     * only its own pair file (src/dist.h). */
    if (!dist_own_file(path))
        path = "/dev/null";
    struct stat ls, st;
    int exists = lstat(path, &ls) == 0;
    int resolves = stat(path, &st) == 0;
    if (resolves && is_log_file(&st, log_path))
        return err_set(TCJ_EINVAL,
                       "%s: is the open session log (or one of its files); choose another name",
                       path);
    if (resolves && S_ISDIR(st.st_mode))
        return err_set(TCJ_EINVAL, "%s: is a directory, expected a file name", path);
    ofile *o = xcalloc(1, sizeof *o);
    o->path = xstrdup(path);
    o->fd = -1;
    o->force = force;
    int rc = 0;
    if (exists && S_ISLNK(ls.st_mode) && !force && !(resolves && is_fd_name(path))) {
        rc = err_set(TCJ_EINVAL,
                     "%s: is a symbolic link; add force to replace the link (the file it "
                     "points to is left as it is)",
                     path);
    } else if ((exists && !S_ISLNK(ls.st_mode) && !S_ISREG(ls.st_mode)) ||
               (resolves && is_fd_name(path))) {
        /* A device, a FIFO, or /dev/stdout and the like: nothing to
         * replace, and renaming over it would remove the system's name. */
        o->direct = 1;
        o->tmp = xstrdup(path);
        o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISREG(st.st_mode) ? O_APPEND : 0));
        if (o->fd < 0)
            rc = err_set(TCJ_EIO, "%s: cannot write: %s", path, strerror(errno));
    } else if (exists && !S_ISLNK(ls.st_mode) && !force) {
        rc = err_set(TCJ_EINVAL, "%s: exists; add force to overwrite it", path);
    } else {
        rc = make_tmp(o);
    }
    if (rc) {
        if (o->fd >= 0)
            close(o->fd);
        free(o->tmp);
        free(o->path);
        free(o);
        return rc;
    }
    *out = o;
    return 0;
}

FILE *ofile_stream(ofile *o)
{
    if (!o->f) {
        o->f = fdopen(o->fd, "w");
        if (!o->f)
            err_set(TCJ_EIO, "%s: cannot write: %s", o->path, strerror(errno));
        else
            o->fd = -1; /* the stream owns it now */
    }
    return o->f;
}

int ofile_write(ofile *o, const void *p, size_t n)
{
    if (o->f) {
        errno = 0;
        if (n && fwrite(p, 1, n, o->f) != n) {
            const int e = errno ? errno : EIO;
            err_set(TCJ_EIO, "%s: write failed: %s", o->path, strerror(e));
            errno = e;
            return TCJ_EIO;
        }
        return 0;
    }
    const char *c = p;
    size_t left = n;
    while (left > 0) {
        ssize_t w = write(o->fd, c, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            const int e = w < 0 ? errno : EIO;
            err_set(TCJ_EIO, "%s: write failed: %s", o->path, strerror(e));
            errno = e; /* for a caller that keeps the cause */
            return TCJ_EIO;
        }
        c += w;
        left -= (size_t)w;
    }
    /* Every OFILE_SPAN bytes, start the disk on them (asynchronous; where
     * the call is not supported nothing changes): the disk works while the
     * join goes on, and the dirty pages of a file of gigabytes are not all
     * left to the fsync at commit. OFILE_SPAN, not a small chunk: a start
     * per 4 MB chunk wrote and synced slower and less steadily. */
    o->done += (off_t)n;
    if (!o->direct && o->done - o->started >= OFILE_SPAN) {
        sync_file_range(o->fd, o->started, o->done - o->started, SYNC_FILE_RANGE_WRITE);
        o->started = o->done;
    }
    return 0;
}

const char *ofile_tmp_path(const ofile *o)
{
    return o->tmp;
}

static void ofile_free(ofile *o)
{
    free(o->tmp);
    free(o->path);
    free(o);
}

/* Move the finished temporary file to the target. Without force, link()
 * refuses a target created since the open, where rename would replace it. */
static int ofile_place(ofile *o)
{
    if (!o->force) {
        if (link(o->tmp, o->path) == 0) {
            unlink(o->tmp);
            return 0;
        }
        if (errno == EEXIST)
            return err_set(TCJ_EINVAL, "%s: exists; add force to overwrite it", o->path);
        if (errno != EPERM && errno != EOPNOTSUPP && errno != EXDEV)
            return err_set(TCJ_EIO, "%s: cannot create: %s", o->path, strerror(errno));
        /* No hard links on this file system: check, then rename. */
        struct stat ls;
        if (lstat(o->path, &ls) == 0)
            return err_set(TCJ_EINVAL, "%s: exists; add force to overwrite it", o->path);
    }
    if (rename(o->tmp, o->path) != 0)
        return err_set(TCJ_EIO, "%s: cannot create: %s", o->path, strerror(errno));
    return 0;
}

int ofile_commit(ofile *o)
{
    int err = 0;
    errno = 0;
    if (o->f) {
        if (fflush(o->f) != 0 || ferror(o->f))
            err = errno ? errno : EIO;
        if (!err && !o->direct && fsync(fileno(o->f)) != 0 && errno != EINVAL)
            err = errno;
        if (fclose(o->f) != 0 && !err)
            err = errno ? errno : EIO;
        o->f = NULL;
    } else if (o->fd >= 0) {
        if (!o->direct && fsync(o->fd) != 0 && errno != EINVAL)
            err = errno;
        if (close(o->fd) != 0 && !err)
            err = errno;
        o->fd = -1;
    }
    int rc = 0;
    if (err)
        rc = err_set(TCJ_EIO, "%s: write failed: %s", o->path, strerror(err));
    else if (!o->direct)
        rc = ofile_place(o);
    if (rc && !o->direct)
        unlink(o->tmp);
    ofile_free(o);
    return rc;
}

void ofile_abort(ofile *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    else if (o->fd >= 0)
        close(o->fd);
    if (!o->direct)
        unlink(o->tmp);
    ofile_free(o);
}
