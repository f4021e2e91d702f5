/*
 * sim/cfgio.c - arrays of numbers in the libconfig files pfisim writes and reads back (the
 * predictor's model file, the fitted arrival models).
 *
 * Written with 17 significant digits in exponent form, so that a value always reads back as a
 * float (libconfig will not mix "1" and "1.5" in one array) and to within one unit in the
 * last place: libconfig's own scanner does not promise strtod's exact rounding.
 */
#include <libconfig.h>
#include <math.h>
#include <stdio.h>

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
