/*
 * tests/test_plots.c - figures: axis ranges by brute force, charts drawn from a results
 * database decode with the expected size, bad databases and paths get their exit codes.
 */
#include <cairo.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "test.h"

/* Whether step is m x 10^k with m in {1, 2, 2.5, 5}. */
static bool
nice_step(double step)
{
    double m = step / pow(10, floor(log10(step) + 1e-12));

    return fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 2.5) < 1e-9 || fabs(m - 5) < 1e-9 ||
           fabs(m - 10) < 1e-9;
}

/* The ticks a step needs to cover [lo, hi] at its multiples. */
static double
ticks_for(double lo, double hi, double step)
{
    return ceil(hi / step - 1e-9) - floor(lo / step + 1e-9) + 1;
}

void
test_plot_axis(struct test *t)
{
    struct pfs_axis a;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

    /* Hand cases. */
    CHECK_INT(pfs_axis_nice(0, 1, 7, &a), 0);
    CHECK_NEAR(a.step, 0.2, 1e-12);
    CHECK_NEAR(a.lo, 0, 1e-12);
    CHECK_NEAR(a.hi, 1, 1e-12);
    CHECK_INT(a.n_ticks, 6);
    CHECK_INT(pfs_axis_nice(0, 94.8, 7, &a), 0); /* the Phoenix power axis, kW */
    CHECK_NEAR(a.step, 20, 1e-12);
    CHECK_NEAR(a.hi, 100, 1e-12);
    CHECK_INT(a.n_ticks, 6);
    CHECK_INT(pfs_axis_nice(-7, 13, 5, &a), 0); /* 1, 2, 2.5 and 5 need 21, 12, 10, 6 */
    CHECK_NEAR(a.step, 10, 1e-12);
    CHECK_NEAR(a.lo, -10, 1e-12);
    CHECK_NEAR(a.hi, 20, 1e-12);
    CHECK_INT(a.n_ticks, 4);
    CHECK_INT(pfs_axis_nice(3.2, 3.2, 5, &a), 0); /* one value: a range around it */
    CHECK(a.lo < 3.2 && a.hi > 3.2);
    CHECK_INT(pfs_axis_nice(NAN, 1, 5, &a), PFS_EINVAL);
    CHECK_INT(pfs_axis_nice(2, 1, 5, &a), PFS_EINVAL);
    CHECK_INT(pfs_axis_nice(-1, 1, 2, &a), PFS_EINVAL);

    /* Brute force: over random ranges, the axis covers the data, has at most max ticks, a
     * nice step, and no smaller nice step (1, 2, 2.5, 5 x 10^k, k over a wide span) would
     * have done. */
    for (int i = 0; i < 2000 && r; i++) {
        double scale = pow(10, gsl_rng_uniform(r) * 12 - 6);
        double lo = (gsl_rng_uniform(r) - 0.5) * scale, hi = lo + gsl_rng_uniform(r) * scale;
        int max = 3 + (int)gsl_rng_uniform_int(r, 10);
        static const double mult[] = {1, 2, 2.5, 5};

        if (!(hi > lo) || pfs_axis_nice(lo, hi, max, &a) != 0) {
            CHECK(!(hi > lo));
            continue;
        }
        if (!(a.lo <= lo + 1e-9 * scale && a.hi >= hi - 1e-9 * scale && a.n_ticks <= max &&
              nice_step(a.step) && fabs(a.lo + (a.n_ticks - 1) * a.step - a.hi) < 1e-6 * a.step)) {
            test_fail(t, __FILE__, __LINE__, "[%g, %g] max %d: axis %g..%g step %g, %d ticks", lo,
                      hi, max, a.lo, a.hi, a.step, a.n_ticks);
            break;
        }
        for (int k = -9; k <= 9; k++)
            for (size_t m = 0; m < 4; m++) {
                double step = mult[m] * pow(10, floor(log10(a.step)) + k);

                if (step < a.step * (1 - 1e-9) && ticks_for(lo, hi, step) <= max) {
                    test_fail(t, __FILE__, __LINE__, "[%g, %g] max %d: step %g would do, chose %g",
                              lo, hi, max, step, a.step);
                    k = 10;
                    break;
                }
            }
    }
    gsl_rng_free(r);
}

void
test_plot_ranges(struct test *t)
{
    /* The plotted ranges come from the data: x exactly the data's span, y a nice range over
     * it (from zero when asked); non-finite values are gaps, not range. */
    static const double x[] = {10, 20, 30, 40}, y1[] = {3, NAN, 7, 5}, y2[] = {4, 6, INFINITY, 4};
    struct pfs_series s[2] = {{"a", x, y1, 4, PFS_SERIES_LINE, 0, false, NULL, NULL},
                              {"b", x, y2, 4, PFS_SERIES_LINE, 1, false, NULL, NULL}};
    struct pfs_chart c = {"t", "x (s)", "y (W)", s, 2, NULL, 0, NULL, true};
    struct pfs_axis ax, ay;

    CHECK_INT(pfs_chart_ranges(&c, &ax, &ay), 0);
    CHECK_NEAR(ax.lo, 10, 0);
    CHECK_NEAR(ax.hi, 40, 0);
    CHECK_NEAR(ay.lo, 0, 0); /* from zero; 0..7 in at most 7 ticks: step 2, 0..8 */
    CHECK_NEAR(ay.hi, 8, 1e-12);
    CHECK_NEAR(ay.step, 2, 1e-12);
    c.y_from_zero = false; /* 3..7: step 1 gives 5 ticks */
    CHECK_INT(pfs_chart_ranges(&c, &ax, &ay), 0);
    CHECK_NEAR(ay.lo, 3, 1e-12);
    CHECK_NEAR(ay.hi, 7, 1e-12);
    c.n_series = 0;
    CHECK_INT(pfs_chart_ranges(&c, &ax, &ay), PFS_EINVAL);
}

static bool
starts_with(const char *path, const char *magic)
{
    char buf[16] = {0};
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;

    if (fp)
        fclose(fp);
    return n >= strlen(magic) && memcmp(buf, magic, strlen(magic)) == 0;
}

/* Pages of a cairo PDF: its page objects (cairo writes their dictionaries uncompressed). */
static int
pdf_pages(const char *path)
{
    FILE *fp = fopen(path, "rb");
    static const char key[] = "/Type /Page";
    size_t k = 0;
    int c, n = 0;

    if (!fp)
        return -1;
    while ((c = fgetc(fp)) != EOF) {
        if (k == sizeof key - 1) { /* matched: a page unless it is "/Pages" */
            n += c != 's';
            k = 0;
        }
        k = c == key[k] ? k + 1 : c == key[0] ? 1 : 0;
    }
    fclose(fp);
    return n;
}

static bool
file_contains(const char *path, const char *needle)
{
    FILE *fp = fopen(path, "rb");
    size_t k = 0, n = strlen(needle);
    int c;

    while (fp && k < n && (c = fgetc(fp)) != EOF)
        k = c == needle[k] ? k + 1 : c == needle[0] ? 1 : 0;
    if (fp)
        fclose(fp);
    return k == n;
}

static bool
same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    int ca, cb;

    while (same && ((ca = fgetc(fa)) != EOF) | ((cb = fgetc(fb)) != EOF))
        same = ca == cb;
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

void
test_plot_cli(struct test *t)
{
    char args[900], path[600], data[512], *out, *err;

    snprintf(args, sizeof args, "run --days 1 --policy equal --policy pfi --db=%s/r.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/r.db -o %s/png", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    CHECK(strstr(out, "/png/power.png\n") && strstr(out, "/png/throughput.png\n") &&
          strstr(out, "/png/outcomes.png\n") && strstr(out, "/png/comparison.png\n") &&
          strstr(out, "/png/curves.png\n") && strstr(out, "/png/pfi.png\n"));
    CHECK(strstr(out, "phoenix") == NULL); /* not a Phoenix run: no such figure */
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/png/power.png", t->tmpdir);
    test_check_png(t, path, 900, 520);
    snprintf(path, sizeof path, "%s/png/throughput.png", t->tmpdir);
    test_check_png(t, path, 900, 520);
    snprintf(path, sizeof path, "%s/png/outcomes.png", t->tmpdir);
    test_check_png(t, path, 900, 520);
    snprintf(path, sizeof path, "%s/png/comparison.png", t->tmpdir);
    test_check_png(t, path, 900, 520);
    snprintf(path, sizeof path, "%s/png/curves.png", t->tmpdir);
    test_check_png(t, path, 900, 520);
    snprintf(path, sizeof path, "%s/png/pfi.png", t->tmpdir);
    test_check_png(t, path, 900, 520);
    for (int f = 0; f < 2; f++) {
        snprintf(args, sizeof args, "plot %s/r.db -o %s/v --only power --format %s", t->tmpdir,
                 t->tmpdir, f ? "pdf" : "svg");
        CHECK_INT(test_run(t, args, &out, &err), 0);
        free(out);
        free(err);
        snprintf(path, sizeof path, "%s/v/power.%s", t->tmpdir, f ? "pdf" : "svg");
        CHECK(starts_with(path, f ? "%PDF" : "<?xml"));
    }
    /* The report: title, summary, curves, pfi, power, throughput, comparison, outcomes,
     * pricing (the default workload has Flex jobs, and the database their per-job rows). */
    snprintf(args, sizeof args, "report %s/r.db -o %s/report.pdf", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/report.pdf", t->tmpdir);
    CHECK(starts_with(path, "%PDF"));
    CHECK_INT(pdf_pages(path), 9);
    /* The same database, the same bytes (cairo would stamp the time otherwise). */
    snprintf(args, sizeof args, "report %s/r.db -o %s/again.pdf", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    {
        char again[600];

        snprintf(again, sizeof again, "%s/again.pdf", t->tmpdir);
        CHECK(same_bytes(path, again));
        /* ... because the creation date is fixed, not because both ran within a second. */
        if (!getenv("SOURCE_DATE_EPOCH"))
            CHECK(file_contains(path, "19700101000000"));
    }
    /* A disk that fills at the report's last flush (issue 17: exit 0 and a truncated PDF,
     * cairo not checking the close of its file): the file size limit set one byte below the
     * report's size, so that the last write fails; exit 4 and nothing left. */
    {
        const char *bin =
            getenv("PFISIM_BIN") && *getenv("PFISIM_BIN") ? getenv("PFISIM_BIN") : "build/pfisim";
        char db[600], full[600];
        struct stat sb;
        pid_t pid;
        int status = -1;

        CHECK(stat(path, &sb) == 0 && sb.st_size > 1000);
        snprintf(db, sizeof db, "%s/r.db", t->tmpdir);
        snprintf(full, sizeof full, "%s/full.pdf", t->tmpdir);
        if ((pid = fork()) == 0) {
            struct rlimit lim = {(rlim_t)sb.st_size - 1, (rlim_t)sb.st_size - 1};

            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &lim);
            if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                _exit(126);
            execl(bin, "pfisim", "report", db, "-o", full, (char *)NULL);
            _exit(127);
        }
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 4);
        CHECK(access(full, F_OK) != 0);
        CHECK(!test_leftover_tmp(t->tmpdir));
    }
    snprintf(args, sizeof args, "report %s/r.db -o %s/nodir/report.pdf", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 4);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/nodir", t->tmpdir);
    CHECK(access(path, F_OK) != 0); /* nothing half-written, no folder made */
    /* Bad input: an unknown figure, a database that is not pfisim's, an empty one, an
     * output directory that cannot be made. */
    snprintf(args, sizeof args, "plot %s/r.db -o %s/png --only pie", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    CHECK(strstr(err, "unknown figure 'pie'") != NULL);
    free(out);
    free(err);
    test_write(t, 0, "not.db", "policy,tokens\nequal,1\n");
    snprintf(args, sizeof args, "plot %s/not.db -o %s/x", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 3);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/r.db -o %s/no/such/dir", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 4);
    CHECK(strstr(err, "no/such/dir") != NULL);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/missing.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 4);
    free(out);
    free(err);

    /* The Phoenix figure, when the real data is there. */
    if (!test_data("emerald-phoenix/SRP_total_power.csv", data, sizeof data))
        SKIP("no Emerald Phoenix data for the Phoenix figure");
    snprintf(args, sizeof args, "run configs/phoenix-srp.cfg --db=%s/ph.db", t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "plot %s/ph.db -o %s/ph --only phoenix", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/ph/phoenix.png", t->tmpdir);
    test_check_png(t, path, 900, 520);
    snprintf(args, sizeof args, "report %s/ph.db -o %s/ph.pdf", t->tmpdir, t->tmpdir);
    CHECK_INT(test_run(t, args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/ph.pdf", t->tmpdir);
    CHECK_INT(pdf_pages(path), 9); /* no job finishes: no outcomes page; Phoenix and pricing */
}
