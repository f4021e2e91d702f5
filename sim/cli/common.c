/*
 * sim/cli/common.c - what every command shares: error reports and exit codes, usage errors, option
 * helpers, shipped files, writing outputs.
 *
 * The command line is the only part outside libpfisim: it parses argv, calls the library,
 * prints, and turns the library's PFS_E* codes into exit codes (0 ok, 1 run-time failure,
 * 2 usage, 3 invalid input, 4 I/O). Errors are printed the way compilers print them, with
 * the offending input line and a caret under the column (STYLE.md). Output that a command
 * writes is built completely before any of it is printed, so a failing command prints no
 * half table.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int
exit_code(int rc)
{
    switch (rc) {
    case 0:
        return EXIT_OK;
    case PFS_EINVAL:
    case PFS_ENOTFOUND:
    case PFS_ERANGE:
        return EXIT_INPUT;
    case PFS_EIO:
        return EXIT_IO;
    case PFS_EUSAGE:
        return EXIT_USAGE;
    default:
        return EXIT_FAIL;
    }
}

int
pfs_cli_report(const struct pfs_diag *d, int rc)
{
    if (d->file[0] && d->line > 0 && d->column > 0)
        fprintf(stderr, "%s:%ld:%ld: error: %s\n", d->file, d->line, d->column, d->message);
    else if (d->file[0] && d->line > 0)
        fprintf(stderr, "%s:%ld: error: %s\n", d->file, d->line, d->message);
    else if (d->file[0])
        fprintf(stderr, "%s: error: %s\n", d->file, d->message);
    else
        fprintf(stderr, "pfisim: error: %s\n", d->message[0] ? d->message : pfs_strerror(rc));
    if (d->text[0]) {
        fprintf(stderr, "    %s\n", d->text);
        if (d->column > 0)
            fprintf(stderr, "    %*s^\n", (int)(d->column - 1), "");
    }
    return exit_code(rc);
}

int
pfs_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "pfisim %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'pfisim help %s'.\n", cmd);
    return EXIT_USAGE;
}

bool
pfs_cli_parse_frac(const char *s, double *out)
{
    char buf[64];
    size_t n = strlen(s);

    if (n > 0 && n < sizeof buf && s[n - 1] == '%') {
        memcpy(buf, s, n - 1);
        buf[n - 1] = '\0';
        if (!pfs__parse_double(buf, out))
            return false;
        *out /= 100.0;
        return true;
    }
    return pfs__parse_double(s, out);
}

char **
pfs_cli_join_optional(int argc, char **argv, const char *opt, const char *not_suffix, int *n_out)
{
    static char **volatile kept; /* lives as long as the process, like argv (volatile: the
                                  * store is kept, and LeakSanitizer sees it reachable) */
    size_t n_opt = strlen(opt), n_suf = strlen(not_suffix);
    char **out = calloc((size_t)argc + 1, sizeof *out);
    int n = 0;

    if (!out)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        size_t len = next ? strlen(next) : 0;

        if (strcmp(argv[i], "--") == 0) { /* the rest are operands */
            while (i < argc)
                out[n++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], opt) == 0 && next && next[0] != '-' &&
            !(len >= n_suf && strcmp(next + len - n_suf, not_suffix) == 0)) {
            char *joined = malloc(n_opt + 1 + len + 1);

            if (!joined) {
                free(out);
                return NULL;
            }
            snprintf(joined, n_opt + 1 + len + 1, "%s=%s", opt, next);
            out[n++] = joined;
            i++;
            continue;
        }
        out[n++] = argv[i];
    }
    out[n] = NULL;
    kept = out;
    *n_out = n;
    return kept;
}

const char *
pfs_cli_suggest(const char *name, const char *(*candidate)(size_t i))
{
    static char buf[96];
    const char *names[64];
    size_t n = 0;

    while (n < 64 && candidate(n)) {
        names[n] = candidate(n);
        n++;
    }
    return pfs__did_you_mean(pfs__nearest(name, names, n), buf, sizeof buf);
}

const char *
pfs_cli_suggest_policy(const char *name)
{
    static char buf[96];

    return pfs__did_you_mean(pfs__policy_nearest(name), buf, sizeof buf);
}

const char *
pfs_cli_jobs_beside(const char *curves_path, char *buf, size_t size)
{
    const char *slash = strrchr(curves_path, '/');

    snprintf(buf, size, "%.*sjobs.csv", slash ? (int)(slash - curves_path + 1) : 0, curves_path);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

const char *
pfs_cli_shipped(const char *rel)
{
    static char paths[4][PATH_MAX];
    static int next;
    char *p = paths[next++ % 4];

    if (pfs__resolve_path(NULL, rel, p, PATH_MAX) != 0)
        return rel;
    return p;
}

int
pfs_cli_write_output(const char *output,
                     int (*write)(const void *obj, FILE *fp, struct pfs_diag *d), const void *obj,
                     struct pfs_diag *d)
{
    return pfs__out_write(output, write, obj, d);
}

/* path's folder made absolute (realpath) and its name, into out; false where the folder
 * cannot be resolved. */
static bool
absolute(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX];

    if (!slash)
        pfs__strlcpy(dir, ".", sizeof dir);
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (!realpath(dir, real))
        return false;
    return (size_t)snprintf(out, size, "%s/%s", real, slash ? slash + 1 : path) < size;
}

bool
pfs_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    char pa[2 * PATH_MAX], pb[2 * PATH_MAX];

    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (absolute(a, pa, sizeof pa) && absolute(b, pb, sizeof pb))
        return strcmp(pa, pb) == 0;
    return strcmp(a, b) == 0;
}

void
pfs_cli_left_out(char *buf, size_t size, size_t n, bool jobs, double days)
{
    bool one = n == 1;

    if (jobs)
        snprintf(buf, size,
                 "%zu job%s of the workload %s submitted after the scenario's end (%g days) and "
                 "%s not simulated",
                 n, one ? "" : "s", one ? "is" : "are", days, one ? "is" : "are");
    else
        snprintf(buf, size,
                 "%zu DR event%s of the scenario start%s at or after its end (%g days) and %s not "
                 "simulated",
                 n, one ? "" : "s", one ? "s" : "", days, one ? "is" : "are");
}

int
pfs_cli_not_over(const char *cmd, const char *opt, const char *output, const char *const *inputs,
                 size_t n)
{
    for (size_t k = 0; output && k < n; k++)
        if (inputs[k] && pfs_cli_same_file(output, inputs[k]))
            return pfs_cli_usage(cmd, "%s '%s' would write over the input '%s'", opt, output,
                                 inputs[k]);
    return EXIT_OK;
}

bool
pfs_cli_parse_count(const char *s, unsigned long *out)
{
    long v;

    if (!pfs__parse_long(s, &v) || v < 0)
        return false;
    *out = (unsigned long)v;
    return true;
}

size_t
pfs_cli_parse_list(const char *s, long *v, size_t max, long default_step)
{
    char buf[1024], *dots;
    long a, b, step = default_step;
    size_t n = 0;

    if (!pfs__strlcpy(buf, s, sizeof buf))
        return 0;
    if ((dots = strstr(buf, "..")) != NULL) {
        char *colon = strchr(dots + 2, ':');

        *dots = '\0';
        if (colon)
            *colon = '\0';
        if (!pfs__parse_long(buf, &a) || !pfs__parse_long(dots + 2, &b) || a < 0 || b < a ||
            (colon && (!pfs__parse_long(colon + 1, &step) || step < 1)))
            return 0;
        if (step < 1)
            step = b > a ? (b - a + 7) / 8 : 1; /* about nine values */
        for (long x = a; x <= b; x += step) {
            if (n == max) /* too many: refused, not cut short */
                return 0;
            v[n++] = x;
        }
        if (v[n - 1] != b) {
            if (n == max)
                return 0;
            v[n++] = b;
        }
        return n;
    }
    for (char *p = buf, *comma; p; p = comma ? comma + 1 : NULL) {
        if ((comma = strchr(p, ',')) != NULL)
            *comma = '\0';
        if (n == max || !pfs__parse_long(p, &a) || a < 0)
            return 0;
        for (size_t q = 0; q < n; q++)
            if (v[q] == a) /* (a seed twice would weigh twice in its spread) */
                return 0;
        v[n++] = a;
    }
    return n;
}

void
pfs_cli_csv_quoted(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

void
pfs_cli_json_string(const char *t)
{
    putchar('"');
    for (; *t; t++) {
        if (*t == '"' || *t == '\\')
            printf("\\%c", *t);
        else if ((unsigned char)*t < 0x20)
            printf("\\u%04x", (unsigned char)*t);
        else
            putchar(*t);
    }
    putchar('"');
}

void
pfs_cli_json_number(double v)
{
    if (isfinite(v))
        printf("%.17g", v);
    else
        fputs("null", stdout);
}

int
pfs_cli_plugins_option(struct pfs_cli_plugins *pl, const char *cmd, int c, const char *arg)
{
    switch (c) {
    case 0x1001:
        if (pl->n_libs == sizeof pl->libs / sizeof pl->libs[0])
            return pfs_cli_usage(cmd, "at most 16 --policy-lib"), 2;
        pl->libs[pl->n_libs++] = arg;
        return 1;
    case 0x1002:
        if (pl->n_execs == sizeof pl->execs / sizeof pl->execs[0])
            return pfs_cli_usage(cmd, "at most 8 --policy-exec"), 2;
        pl->execs[pl->n_execs++] = arg;
        return 1;
    case 0x1004:
        pfs_policy_allow_scenario_libs(true);
        return 1;
    case 0x1003:
        if (!pfs__parse_double(arg, &pl->timeout_s) ||
            !(pl->timeout_s > 0 && pl->timeout_s <= 86400))
            return pfs_cli_usage(cmd, "--policy-timeout takes seconds in (0, 86400], got '%s'",
                                 arg),
                   2;
        return 1;
    default:
        return 0;
    }
}

int
pfs_cli_plugins_load(struct pfs_cli_plugins *pl)
{
    struct pfs_diag d = {0};
    size_t before = 0;
    int rc = 0;

    while (pfs_policy_at(before))
        before++;
    for (size_t k = 0; rc == 0 && k < pl->n_libs; k++)
        rc = pfs_policy_load(pl->libs[k], NULL, &d);
    for (size_t k = 0; rc == 0 && k < pl->n_execs; k++) {
        const struct pfs_policy_ops *ops;

        rc = pfs_policy_exec_start(pl->execs[k], pl->timeout_s > 0 ? pl->timeout_s : 10, &ops, &d);
    }
    if (rc)
        return pfs_cli_report(&d, rc == PFS_EPOLICY ? PFS_EINVAL : rc);
    pl->n_added = 0;
    for (size_t k = before; pfs_policy_at(k) && pl->n_added < 64; k++)
        pl->added[pl->n_added++] = pfs_policy_name(pfs_policy_at(k));
    return EXIT_OK;
}

int
pfs_cli_plot_format(const char *path)
{
    const char *ext = strrchr(path, '.');

    return !ext                           ? -1
           : strcasecmp(ext, ".png") == 0 ? PFS_PLOT_PNG
           : strcasecmp(ext, ".svg") == 0 ? PFS_PLOT_SVG
           : strcasecmp(ext, ".pdf") == 0 ? PFS_PLOT_PDF
                                          : -1;
}

void
pfs_cli_put_wrapped(const char *s, size_t *col, size_t width, const char *indent)
{
    size_t n = strlen(s);

    if (*col > strlen(indent) && *col + n > width) {
        printf("\n%s", indent);
        *col = strlen(indent);
        while (*s == ' ') { /* (a separator does not start a line) */
            s++;
            n--;
        }
    }
    fputs(s, stdout);
    *col += n;
}
