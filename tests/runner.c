/*
 * tests/runner.c - runs every test of TEST_LIST and ends with "N passed, N failed".
 *
 * Exit status 1 when any test failed. A test name given on the command line runs only
 * the tests whose names contain it. GSL's abort-on-error handler is turned off, as in
 * main(), so that a GSL failure is a return code the library must handle.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <errno.h>
#include <gsl/gsl_errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cairo.h>
#include <sqlite3.h>

#include "test.h"

void
test_fail(struct test *t, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "  FAIL %s (%s:%d): ", t->name, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    t->failures++;
}

const char *
test_write(struct test *t, int slot, const char *name, const char *text)
{
    static char paths[4][512];
    char *p = paths[slot & 3];
    FILE *fp;

    snprintf(p, sizeof paths[0], "%s/%s", t->tmpdir, name);
    fp = fopen(p, "w");
    if (!fp) {
        test_fail(t, __FILE__, __LINE__, "cannot write %s", p);
        return p;
    }
    fputs(text, fp);
    fclose(fp);
    return p;
}

const char *
test_data(const char *rel, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", pfs_data_dir(), rel);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

char *
test_slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int c;

    if (!fp)
        return strdup("");
    while ((c = fgetc(fp)) != EOF) {
        if (n + 2 > cap) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 256);
            if (!b)
                break;
            buf = b;
        }
        buf[n++] = (char)c;
    }
    fclose(fp);
    if (!buf)
        return strdup("");
    buf[n] = '\0';
    return buf;
}

long
test_count_lines(const char *path)
{
    FILE *fp = fopen(path, "r");
    long n = 0;
    int c;

    if (!fp)
        return -1;
    while ((c = fgetc(fp)) != EOF)
        n += c == '\n';
    fclose(fp);
    return n;
}

int
test_run(struct test *t, const char *args, char **out, char **err)
{
    const char *bin = getenv("PFISIM_BIN");
    char cmd[2048], o[512], e[512];
    int st;

    if (!bin || !*bin)
        bin = "build/pfisim";
    snprintf(o, sizeof o, "%s/stdout", t->tmpdir);
    snprintf(e, sizeof e, "%s/stderr", t->tmpdir);
    snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s </dev/null", bin, args, o, e);
    st = system(cmd);
    *out = test_slurp(o);
    *err = test_slurp(e);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

int
test_run_as(struct test *t, int resource, long limit, int uid, const char *args, char **out,
            char **err)
{
    const char *bin = getenv("PFISIM_BIN");
    char cmd[8192], o[512], e[512];
    pid_t pid;
    int st = -1;

    if (!bin || !*bin)
        bin = "build/pfisim";
    snprintf(o, sizeof o, "%s/stdout", t->tmpdir);
    snprintf(e, sizeof e, "%s/stderr", t->tmpdir);
    for (int k = 0; k < 2; k++) { /* (made here, writable by the user it runs as) */
        int fd = open(k ? e : o, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

        if (fd >= 0) {
            fchmod(fd, 0666);
            close(fd);
        }
    }
    snprintf(cmd, sizeof cmd, "exec %s %s >>%s 2>>%s </dev/null", bin, args, o, e);
    if ((pid = fork()) == 0) {
        if (resource >= 0) {
            struct rlimit lim = {(rlim_t)limit, (rlim_t)limit};

            /* A full disk, as a process sees one: writes past the limit fail with EFBIG
             * (the signal that would kill it instead is ignored, and stays so across exec). */
            if (resource == RLIMIT_FSIZE)
                signal(SIGXFSZ, SIG_IGN);
            setrlimit(resource, &lim);
        }
        if (uid >= 0 && (setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0))
            _exit(125);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        st = -1;
    *out = test_slurp(o);
    *err = test_slurp(e);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

int
test_run_fsize(struct test *t, long max_bytes, const char *args, char **out, char **err)
{
    return test_run_as(t, RLIMIT_FSIZE, max_bytes, -1, args, out, err);
}

const char *
test_plugin(const char *name, char *buf, size_t size)
{
    const char *bin = getenv("PFISIM_BIN");
    char copy[512];

    pfs__strlcpy(copy, bin && *bin ? bin : "build/pfisim", sizeof copy);
    snprintf(buf, size, "%s/plugins/%s", dirname(copy), name);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

bool
test_leftover_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    bool found = false;

    if (!d)
        return false;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);

        if (n > 4 && strcmp(de->d_name + n - 4, ".tmp") == 0)
            found = true;
    }
    closedir(d);
    return found;
}

struct entry {
    const char *name;
    void (*fn)(struct test *);
};

static const struct entry entries[] = {
#define TEST_ENTRY(name) {#name, name},
    TEST_LIST(TEST_ENTRY)
#undef TEST_ENTRY
};

int
main(int argc, char **argv)
{
    int passed = 0, failed = 0, skipped = 0;
    char base[] = "/tmp/pfisim-tests-XXXXXX";

    gsl_set_error_handler_off();
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        struct test t = {.name = entries[i].name};
        char cmd[600];

        if (argc > 1 && !strstr(entries[i].name, argv[1]))
            continue;
        snprintf(t.tmpdir, sizeof t.tmpdir, "%s/%s", base, entries[i].name);
        if (mkdir(t.tmpdir, 0700) != 0) {
            perror(t.tmpdir);
            return 1;
        }
        entries[i].fn(&t);
        if (t.failures) {
            failed++;
            printf("FAIL %s\n", t.name);
        } else if (t.skipped) {
            skipped++;
            printf("skip %s\n", t.name);
        } else {
            passed++;
            printf("ok   %s\n", t.name);
        }
        fflush(stdout);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", t.tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", t.tmpdir);
    }
    rmdir(base);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}

/* Whether two jobs' results are the same bits, field by field: a record's padding is not
 * part of it (the engine writes records whole, padding as it falls). */
static bool
same_job_result(const struct pfs_job_result *a, const struct pfs_job_result *b)
{
    return memcmp(&a->start_s, &b->start_s, sizeof a->start_s) == 0 &&
           memcmp(&a->finish_s, &b->finish_s, sizeof a->finish_s) == 0 &&
           memcmp(&a->tokens_done, &b->tokens_done, sizeof a->tokens_done) == 0 &&
           a->pool == b->pool && a->curve == b->curve &&
           memcmp(&a->duration_s, &b->duration_s, sizeof a->duration_s) == 0 &&
           a->given_up == b->given_up && a->refused == b->refused;
}

int
test_sim_run(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
             struct pfs_run_result *r, struct pfs_timeseries *ts, struct pfs_job_result *jobs,
             struct pfs_diag *d)
{
    struct pfs_job_results jr = {0};
    int rc = pfs_sim_run(sc, in, policy, r, ts, jobs ? &jr : NULL, d);

    if (rc == 0 && jobs)
        memcpy(jobs, jr.rows, jr.n * sizeof *jobs);
    pfs_job_results_free(&jr);
    return rc;
}

int
test_sim_scenario(struct test *t, const struct pfs_scenario *sc, const char *policy,
                  struct pfs_run_result *r, struct pfs_job_result *jobs)
{
    struct pfs_sim_inputs *in = NULL;
    struct pfs_diag d = {0};
    int rc = pfs_sim_inputs_new(sc, &in, &d);

    if (rc == 0)
        rc = test_sim_run(sc, in, policy, r, NULL, jobs, &d);
    if (rc)
        test_fail(t, __FILE__, __LINE__, "%s", d.message);
    pfs_sim_inputs_free(in);
    return rc;
}

size_t
test_first_job_differing(const struct pfs_job_result *a, const struct pfs_job_result *b, size_t n)
{
    size_t i = 0;

    while (i < n && same_job_result(&a[i], &b[i]))
        i++;
    return i;
}

/* Compares two files byte for byte. */
bool
test_same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    int ca, cb;

    while (same) {
        ca = fgetc(fa);
        cb = fgetc(fb);
        if (ca != cb)
            same = false;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* One integer (or the first column of the first row) from sql; -1 on error. */
long
test_query_long(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    long v = -1;

    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = (long)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

/* Decodes a PNG and checks its size. */
void
test_check_png(struct test *t, const char *path, int w, int h)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);

    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        test_fail(t, __FILE__, __LINE__, "%s: %s", path,
                  cairo_status_to_string(cairo_surface_status(s)));
    } else {
        CHECK_INT(cairo_image_surface_get_width(s), w);
        CHECK_INT(cairo_image_surface_get_height(s), h);
    }
    cairo_surface_destroy(s);
}
