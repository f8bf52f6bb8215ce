/* Output files written through a temporary file and renamed into place. */
#include "ofile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist.h"
#include "err.h"
#include "out.h"

#define OFILE_SPAN ((off_t)64 << 20)
/* How often a wait for a FIFO's reader looks at the cancel flag. */
#define OFILE_POLL_MS 50

/* What ended the writes to a file, when errno alone would not say it. */
enum { OFILE_WRITING, OFILE_CANCELLED, OFILE_READER_GONE };

struct ofile {
    char *path; /* the target as given */
    char *tmp;  /* what is written: the temporary file, or path when direct */
    int fd;
    FILE *f;
    int direct;   /* an existing device or FIFO: written in place */
    int nonblock; /* direct and not a regular file: fd is O_NONBLOCK (ofile_put) */
    int late;     /* the temporary file is made on the first write */
    int force;    /* replace an existing target */
    int ended;    /* OFILE_CANCELLED or OFILE_READER_GONE: no more writes */
    int err;      /* errno of the first failed write, 0 if none */
    int aborted;  /* ofile_abort: what the stream still holds is dropped */
    /* ofile_write: bytes written, and how far their write-back was started */
    off_t done, started;
};

static const volatile int *ofile_cancel;

void ofile_set_cancel(const volatile int *flag)
{
    ofile_cancel = flag;
}

static int ofile_cancelled(void)
{
    return ofile_cancel && *ofile_cancel;
}

/* The message of what ended the writes (a cancel is named by the
 * command, as an engine's is); 0 when nothing did. */
static int ofile_say_end(const ofile *o)
{
    if (o->ended == OFILE_CANCELLED)
        return err_set(TCJ_ECANCEL, ERR_CANCELLED);
    if (o->ended == OFILE_READER_GONE)
        return err_set(TCJ_EIO, "%s: the reader closed the pipe", o->path);
    return 0;
}

static int ofile_end(ofile *o, int why)
{
    o->ended = why;
    return ofile_say_end(o);
}

/* Every byte of p to o->fd. A FIFO, socket or device is written without
 * blocking: while its reader is slow the wait is a poll that looks at the
 * cancel flag, so Ctrl-C ends it whichever thread the signal reached; its
 * reader gone is EPIPE (SIGPIPE is ignored, src/cli/app.c), said so. */
static int ofile_put(ofile *o, const char *p, size_t n)
{
    if (o->ended)
        return ofile_say_end(o);
    while (n > 0) {
        ssize_t w = write(o->fd, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        const int e = w < 0 ? errno : EIO;
        if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK) {
            if (ofile_cancelled())
                return ofile_end(o, OFILE_CANCELLED);
            if (e != EINTR) {
                struct pollfd pf = {.fd = o->fd, .events = POLLOUT};
                poll(&pf, 1, OFILE_POLL_MS);
            }
            continue;
        }
        if (!o->err)
            o->err = e;
        if (e == EPIPE)
            return ofile_end(o, OFILE_READER_GONE);
        err_set(TCJ_EIO, "%s: write failed: %s", o->path, strerror(e));
        errno = e; /* for a caller that keeps the cause */
        return TCJ_EIO;
    }
    return 0;
}

/* The stream of a FIFO or device writes through ofile_put, so a stdio
 * writer (CSV, export) waits as ofile_write does; after ofile_abort what
 * it still buffers is dropped, not waited for. */
static ssize_t ofile_cookie_write(void *c, const char *p, size_t n)
{
    ofile *o = c;
    if (o->aborted)
        return (ssize_t)n;
    if (ofile_put(o, p, n) == 0)
        return (ssize_t)n;
    errno = o->err ? o->err : o->ended == OFILE_CANCELLED ? ECANCELED : EIO;
    return -1;
}

static int ofile_cookie_close(void *c)
{
    ofile *o = c;
    int rc = close(o->fd);
    o->fd = -1;
    return rc;
}

/* A FIFO's open waits until a reader opens it. Opened without blocking
 * and tried again every OFILE_POLL_MS, so Ctrl-C ends the wait (a blocking
 * open is not interrupted when the signal goes to another thread, nor at
 * all under SA_RESTART); after a second one line says what it waits for. */
static int open_direct(ofile *o, const struct stat *st)
{
    const int fifo = S_ISFIFO(st->st_mode);
    o->nonblock = !S_ISREG(st->st_mode);
    const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (o->nonblock ? O_NONBLOCK : O_APPEND);
    for (int waited = 0;; waited += OFILE_POLL_MS) {
        o->fd = open(o->path, flags);
        if (o->fd >= 0)
            return 0;
        if (errno != EINTR && !(fifo && errno == ENXIO))
            return err_set(TCJ_EIO, "%s: cannot write: %s", o->path, strerror(errno));
        if (ofile_cancelled())
            return ofile_end(o, OFILE_CANCELLED);
        if (waited == 1000)
            out_printf("note: %s is a FIFO; waiting for a reader to open it (Ctrl-C cancels)\n",
                       o->path);
        poll(NULL, 0, OFILE_POLL_MS);
    }
}

static const char *const log_suffix[] = {"", "-wal", "-shm", "-journal"};
#define LOG_NSUFFIX (sizeof log_suffix / sizeof log_suffix[0])

/* Is st one of the session log's files (by device and inode)? */
static int is_log_file(const struct stat *st, const char *log_path)
{
    if (!log_path || !*log_path)
        return 0;
    size_t n = strlen(log_path);
    char *p = xmalloc(n + 16);
    int hit = 0;
    for (size_t k = 0; k < LOG_NSUFFIX && !hit; k++) {
        struct stat ls;
        memcpy(p, log_path, n);
        strcpy(p + n, log_suffix[k]);
        hit = stat(p, &ls) == 0 && ls.st_dev == st->st_dev && ls.st_ino == st->st_ino;
    }
    free(p);
    return hit;
}

/* Split path into its directory's device and inode and its last name. */
static int dir_and_base(const char *path, struct stat *dir, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash)
        return stat(".", dir);
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    char *d = xmalloc(len + 1);
    memcpy(d, path, len);
    d[len] = 0;
    int rc = stat(d, dir);
    free(d);
    return rc;
}

/* The suffix ("", "-wal", ...) when path names a file of the log in the
 * log's directory, existing or not, else NULL. SQLite makes -journal (and
 * -wal, -shm) beside the log when it needs them and deletes or replays
 * one it finds when the log is next opened, so what is written under
 * such a name is lost or, worse, read as the log's. The log's name is
 * tried as given and with its links resolved (where SQLite puts them). */
static const char *log_name_suffix(const char *path, const char *log_path)
{
    struct stat pd, ld;
    const char *pb, *lb;
    if (!log_path || !*log_path || dir_and_base(path, &pd, &pb) != 0)
        return NULL;
    char *real = realpath(log_path, NULL);
    const char *names[2] = {log_path, real};
    const char *hit = NULL;
    for (int i = 0; i < 2 && !hit; i++) {
        if (!names[i] || dir_and_base(names[i], &ld, &lb) != 0 || ld.st_dev != pd.st_dev ||
            ld.st_ino != pd.st_ino)
            continue;
        size_t n = strlen(lb);
        for (size_t k = 0; k < LOG_NSUFFIX && !hit; k++)
            if (strncmp(pb, lb, n) == 0 && strcmp(pb + n, log_suffix[k]) == 0)
                hit = log_suffix[k];
    }
    free(real);
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

#define PARTIAL_TAG ".tcjoin-partial-"

/* The writer's process id in a temporary file's name,
 * NAME.tcjoin-partial-PID-XXXXXX (make_tmp); 0 for any other name. */
static pid_t partial_pid(const char *name)
{
    const char *t = strstr(name, PARTIAL_TAG);
    while (t && strstr(t + 1, PARTIAL_TAG))
        t = strstr(t + 1, PARTIAL_TAG);
    if (!t)
        return 0;
    const char *p = t + strlen(PARTIAL_TAG);
    long long pid = 0;
    for (; *p >= '0' && *p <= '9' && pid <= INT_MAX; p++)
        pid = pid * 10 + (*p - '0');
    if (*p != '-' || pid <= 0 || pid > INT_MAX || strlen(p + 1) != 6)
        return 0;
    return (pid_t)pid;
}

/* Remove dir/name when its writer is dead: no process has its id and no
 * one holds its lock (make_tmp takes one for the whole write, so a
 * writer in another PID namespace or on another host is seen alive). */
static int partial_remove_stale(int dfd, const char *name, pid_t pid)
{
    if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
        return 0;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int gone = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
               unlinkat(dfd, name, 0) == 0;
    close(fd);
    return gone;
}

/* Before a new temporary file is made in a directory: remove the ones a
 * killed tcjoin left there (a kill -9 in the middle of a pairs run can
 * leave hundreds of MB) and say so in one line, with how many others are
 * left (a running writer's, or a name without a process id). */
static void sweep_partials(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    char *dir = xmalloc(len + 1);
    memcpy(dir, slash ? path : ".", len);
    dir[len] = 0;
    DIR *d = opendir(dir);
    size_t removed = 0, left = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, PARTIAL_TAG))
            continue;
        pid_t pid = partial_pid(e->d_name);
        if (pid && partial_remove_stale(dirfd(d), e->d_name, pid))
            removed++;
        else
            left++;
    }
    if (d)
        closedir(d);
    if (removed)
        out_printf("note: removed %zu partial file%s (NAME" PARTIAL_TAG
                   "PID-*) that a killed tcjoin left in %s%s\n",
                   removed, removed == 1 ? "" : "s", dir,
                   left ? "; others are left: their writer runs or is unknown" : "");
    free(dir);
}

/* A temporary file next to path (so rename stays in one file system), with
 * the permissions a new file would get, named
 * NAME.tcjoin-partial-PID-XXXXXX: not hidden, so what a kill -9 in the
 * middle of a write leaves is seen by ls beside the file it was to
 * become; the process id and a lock held while it is written tell the
 * next output to that directory that its writer is dead (sweep_partials). */
static int make_tmp(ofile *o)
{
    const char *slash = strrchr(o->path, '/');
    size_t dirlen = slash ? (size_t)(slash - o->path) + 1 : 0;
    const char *base = slash ? slash + 1 : o->path;
    size_t blen = strlen(base);
    if (blen > 200) /* leave room for the suffix within NAME_MAX */
        blen = 200;
    o->tmp = xmalloc(dirlen + blen + 48);
    memcpy(o->tmp, o->path, dirlen);
    memcpy(o->tmp + dirlen, base, blen);
    sprintf(o->tmp + dirlen + blen, PARTIAL_TAG "%ld-XXXXXX", (long)getpid());
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
        return err_set(TCJ_EIO, "%s: cannot create: %s", o->path, strerror(errno));
    }
    flock(o->fd, LOCK_EX | LOCK_NB);
    mode_t mask = umask(0);
    umask(mask);
    fchmod(o->fd, 0666 & ~mask);
    return 0;
}

/* A late file's temporary file, made when the first byte is written. */
static int late_tmp(ofile *o)
{
    if (!o->late)
        return 0;
    o->late = 0;
    return make_tmp(o);
}

static int open_as(const char *path, int force, const char *log_path, int late, ofile **out)
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
    const char *suffix = log_name_suffix(path, log_path);
    if ((resolves && is_log_file(&st, log_path)) || (suffix && !*suffix))
        return err_set(TCJ_EINVAL,
                       "%s: is the open session log (or one of its files); choose another name",
                       path);
    if (suffix)
        return err_set(TCJ_EINVAL,
                       "%s: is the open session log's %s file (SQLite removes or replays it "
                       "when it opens the log); choose another name",
                       path, suffix);
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
        rc = open_direct(o, &st);
    } else if (exists && !S_ISLNK(ls.st_mode) && !force) {
        rc = err_set(TCJ_EINVAL, "%s: exists; add force to overwrite it", path);
    } else {
        /* A late file is proved creatable now, then made when written. */
        sweep_partials(path);
        rc = make_tmp(o);
        if (!rc && late) {
            close(o->fd);
            o->fd = -1;
            unlink(o->tmp);
            free(o->tmp);
            o->tmp = NULL;
            o->late = 1;
        }
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

int ofile_open(const char *path, int force, const char *log_path, ofile **out)
{
    return open_as(path, force, log_path, 0, out);
}

int ofile_open_late(const char *path, int force, const char *log_path, ofile **out)
{
    return open_as(path, force, log_path, 1, out);
}

FILE *ofile_stream(ofile *o)
{
    if (!o->f && late_tmp(o))
        return NULL;
    if (!o->f) {
        static const cookie_io_functions_t io = {.write = ofile_cookie_write,
                                                 .close = ofile_cookie_close};
        o->f = o->nonblock ? fopencookie(o, "w", io) : fdopen(o->fd, "w");
        if (!o->f)
            err_set(TCJ_EIO, "%s: cannot write: %s", o->path, strerror(errno));
        else if (!o->nonblock)
            o->fd = -1; /* the stream owns it now (a cookie one writes through it) */
    }
    return o->f;
}

int ofile_write(ofile *o, const void *p, size_t n)
{
    if (late_tmp(o))
        return TCJ_EIO;
    if (o->f) {
        errno = 0;
        if (n && fwrite(p, 1, n, o->f) != n) {
            const int e = errno ? errno : EIO;
            int rc =
                ofile_failure(o, err_set(TCJ_EIO, "%s: write failed: %s", o->path, strerror(e)));
            errno = e;
            return rc;
        }
        return 0;
    }
    int rc = ofile_put(o, p, n);
    if (rc)
        return rc;
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

int ofile_failure(const ofile *o, int rc)
{
    return o && o->ended ? ofile_say_end(o) : rc;
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
    if (late_tmp(o)) {
        ofile_free(o);
        return TCJ_EIO;
    }
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
    if (o->ended)
        rc = ofile_say_end(o);
    else if (err)
        rc = err_set(TCJ_EIO, "%s: write failed: %s", o->path, strerror(o->err ? o->err : err));
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
    o->aborted = 1;
    if (o->f)
        fclose(o->f);
    else if (o->fd >= 0)
        close(o->fd);
    if (!o->direct && o->tmp)
        unlink(o->tmp);
    ofile_free(o);
}
