/*
 * sim/cfgio.c - reading the libconfig files pfisim takes (scenarios, sweeps, GPU profiles,
 * predictor and fit files), and the arrays of numbers in those it writes and reads back (the
 * predictor's model file, the fitted arrival models).
 *
 * It lies in the lowest layer, with the diagnostics and the other I/O helpers, so that the
 * models (models/gpu.c, models/predict.c, models/fitfile.c) read their files without calling
 * up into the scenario reader (docs/simulator.md, "Layers").
 *
 * Written with 17 significant digits in exponent form, so that a value always reads back as a
 * float (libconfig will not mix "1" and "1.5" in one array) and to within one unit in the
 * last place: libconfig's own scanner does not promise strtod's exact rounding.
 */
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void
pfs__cfg_write_floats(FILE *fp, const char *indent, const char *name, const double *v, size_t n)
{
    fprintf(fp, "%s%s = [", indent, name);
    for (size_t i = 0; i < n; i++)
        fprintf(fp, "%s%.17e", i ? ", " : "", v[i]);
    fprintf(fp, "];\n");
}

int
pfs__cfg_read_floats(struct config_setting_t *parent, const char *name, const char *where,
                     double *dst, size_t min_n, size_t max_n, const char *per, size_t *got,
                     const char *file, struct pfs_diag *diag)
{
    config_setting_t *a = config_setting_get_member(parent, name);
    size_t len;

    if (!a || !config_setting_is_array(a))
        return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(parent), 0, name,
                             "%s.%s: missing array", where, name);
    len = (size_t)config_setting_length(a);
    if (len < min_n || len > max_n) {
        if (min_n == max_n)
            return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(a), 0, name,
                                 "%s.%s: %zu values, expected %zu%s%s%s", where, name, len, min_n,
                                 per ? " (one " : "", per ? per : "", per ? ")" : "");
        return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(a), 0, name,
                             "%s.%s: %zu values, expected %zu to %zu", where, name, len, min_n,
                             max_n);
    }
    for (size_t i = 0; i < len; i++) {
        config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
        int type = config_setting_type(e);

        if (type != CONFIG_TYPE_FLOAT && type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
            return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(a), 0, name,
                                 "%s.%s: element %zu is not a number", where, name, i + 1);
        dst[i] = type == CONFIG_TYPE_FLOAT ? config_setting_get_float(e)
                                           : (double)config_setting_get_int64(e);
        if (!isfinite(dst[i])) /* libconfig reads 1e999 as infinity */
            return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(a), 0, name,
                                 "%s.%s: element %zu is not a finite number", where, name, i + 1);
    }
    if (got)
        *got = len;
    return 0;
}

/* Whether line (1-based) of text holds "= NUMBER UNIT" unquoted (25%, 5 MW, 4 h): libconfig
 * calls it a syntax error; the message then says how to write it. */
static bool
unquoted_unit(const char *text, int line)
{
    const char *p = text, *end;

    for (int l = 1; l < line && p; l++)
        p = (p = strchr(p, '\n')) ? p + 1 : NULL;
    if (!p)
        return false;
    end = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
    for (const char *eq = p; (eq = memchr(eq, '=', (size_t)(end - eq))) != NULL;) {
        for (eq++; *eq == ' ' || *eq == '\t'; eq++)
            ;
        if (!(*eq >= '0' && *eq <= '9'))
            continue;
        while ((*eq >= '0' && *eq <= '9') || *eq == '.' || *eq == 'e' || *eq == '-')
            eq++;
        while (*eq == ' ')
            eq++;
        if (*eq == '%' || strncmp(eq, "W", 1) == 0 || strncmp(eq, "kW", 2) == 0 ||
            strncmp(eq, "MW", 2) == 0 || strncmp(eq, "GW", 2) == 0 || strncmp(eq, "h", 1) == 0 ||
            strncmp(eq, "min", 3) == 0 || strncmp(eq, "s", 1) == 0 || strncmp(eq, "d", 1) == 0)
            return true;
    }
    return false;
}

/* A libconfig file, or its error, as a diagnostic; cfg is initialised either way. The file
 * is read whole first: a NUL byte (a binary file, which libconfig misreads and leaks on) is
 * refused at its line, and a UTF-8 byte-order mark, which editors on Windows write and which
 * carries no setting, is skipped. */
int
pfs__config_read(config_t *cfg, const char *path, struct pfs_diag *diag)
{
    FILE *fp;
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;

    config_init(cfg);
    if (!(fp = fopen(path, "rb")))
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot read the file: %s",
                             strerror(errno));
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *grown = realloc(text, cap = 2 * cap + 8192);

            if (!grown) {
                rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
                break;
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, 4096, fp);

        len += got;
        if (got < 4096)
            break;
    }
    if (rc == 0 && ferror(fp))
        rc = pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot read the file: %s",
                           strerror(errno));
    fclose(fp);
    if (rc == 0) {
        const char *start = text;
        const char *nul;

        text[len] = '\0';
        if ((nul = memchr(text, '\0', len)) != NULL) {
            long line = 1;

            for (const char *c = text; c < nul; c++)
                line += *c == '\n';
            rc = pfs__diag_set(diag, PFS_EINVAL, path, line, 0, NULL,
                               "NUL byte in a text file (a binary file?)");
        } else {
            if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
                start += 3;
            if (config_read_string(cfg, start) != CONFIG_TRUE)
                rc = pfs__diag_set(diag, PFS_EINVAL, path, config_error_line(cfg), 0, NULL, "%s%s",
                                   config_error_text(cfg),
                                   unquoted_unit(start, config_error_line(cfg))
                                       ? " (a number with a unit goes in quotes: cut = \"25%\", "
                                         "cap_w = \"5 MW\")"
                                       : "");
        }
    }
    free(text);
    return rc;
}

int
pfs__config_number(const config_setting_t *s, const char *path, double lo, double hi, double *out,
                   const char *file, struct pfs_diag *diag)
{
    int line = config_setting_source_line(s);
    double v;

    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        v = (double)config_setting_get_int64(s);
        break;
    case CONFIG_TYPE_FLOAT:
        v = config_setting_get_float(s);
        break;
    case CONFIG_TYPE_STRING: {
        /* A quantity as a person writes it: "5 MW", "4 h", "30 min", "25%" (docs/scenarios.md,
         * Units); the unit must suit the setting. */
        const char *name = config_setting_name(s) ? config_setting_name(s) : "";
        char why[160];

        size_t lp = strlen(path), ln = strlen(name);
        bool named = lp >= ln && strcmp(path + lp - ln, name) == 0;

        if (!pfs__parse_quantity(config_setting_get_string(s), name, &v, why, sizeof why))
            return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, path, "%s%s%s: '%.40s': %s", path,
                                 named ? "" : ".", named ? "" : name, config_setting_get_string(s),
                                 why);
        break;
    }
    default:
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, path, "%s: expected a number", path);
    }
    if (!(v >= lo && v <= hi))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, path, "%s: %g is outside [%g, %g]",
                             path, v, lo, hi);
    *out = v;
    return 0;
}

int
pfs__config_only(const config_setting_t *g, const char *prefix, const char *const *names,
                 const char *file, struct pfs_diag *diag)
{
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
        const char *n = config_setting_name(m);
        bool known = false;
        char path[128];

        for (size_t k = 0; names[k] && n; k++)
            known = known || strcmp(n, names[k]) == 0;
        if (!known) {
            size_t count = 0;
            char hint[80];

            while (names[count])
                count++;
            snprintf(path, sizeof path, "%s.%s", prefix, n ? n : "?");
            return pfs__diag_set(
                diag, PFS_EINVAL, file, config_setting_source_line(m), 0, path,
                "%s: unknown setting%s", path,
                pfs__did_you_mean(n ? pfs__nearest(n, names, count) : NULL, hint, sizeof hint));
        }
    }
    return 0;
}
