/*
 * models/gpu.c - GPU profiles: parsing and checking the libconfig files of configs/gpus/.
 *
 * The files are embedded into the library at build time (the Makefile generates
 * build/gen/gpus_embed.c), so pfs_gpu_find() needs no path; pfs_gpu_load() reads a file of
 * the same form, for profiles a user adds. A profile is checked as a whole: the DVFS model
 * needs min <= default <= max limit, idle below the minimum limit, f_min < f_knee < f_max
 * and 0 < v_min <= 1, or its clock solve is meaningless.
 */
#include <errno.h>
#include <libconfig.h>
#include <string.h>

#include "internal.h"

/* Reads a number setting that may be written as an integer or a float. */
static int
get_number(config_setting_t *root, const char *path, const char *file, double *out,
           struct pfs_diag *diag)
{
    const config_setting_t *s = config_setting_lookup(root, path);
    char full[96];

    snprintf(full, sizeof full, "gpu.%s", path);
    if (!s)
        return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(root), 0, full,
                             "%s: missing setting", full);
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        *out = (double)config_setting_get_int64(s);
        return 0;
    case CONFIG_TYPE_FLOAT:
        *out = config_setting_get_float(s);
        return 0;
    default:
        return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(s), 0, full,
                             "%s: expected a number", full);
    }
}

static int
get_string(config_setting_t *root, const char *path, const char *file, char *dst, size_t dst_size,
           struct pfs_diag *diag)
{
    const char *v = NULL;
    char full[96];

    snprintf(full, sizeof full, "gpu.%s", path);
    if (!config_setting_lookup_string(root, path, &v))
        return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(root), 0, full,
                             "%s: missing string setting", full);
    if (!pfs__strlcpy(dst, v, dst_size))
        return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(root), 0, full,
                             "%s: longer than %zu bytes", full, dst_size - 1);
    return 0;
}

/* Fills g from a parsed config; file names the source in messages. */
static int
gpu_from_config(const config_t *cfg, const char *file, struct pfs_gpu *g, struct pfs_diag *diag)
{
    config_setting_t *root = config_lookup(cfg, "gpu");
    int extrapolated = 0, rc;
    long line;

    memset(g, 0, sizeof *g);
    if (!root || !config_setting_is_group(root))
        return pfs__diag_set(diag, PFS_EINVAL, file, 0, 0, "gpu", "gpu: missing group");
    line = config_setting_source_line(root);
    if ((rc = get_string(root, "name", file, g->name, sizeof g->name, diag)) ||
        (rc = get_string(root, "model", file, g->model, sizeof g->model, diag)) ||
        (rc = get_number(root, "limits_w.min", file, &g->min_limit_w, diag)) ||
        (rc = get_number(root, "limits_w.default", file, &g->default_limit_w, diag)) ||
        (rc = get_number(root, "limits_w.max", file, &g->max_limit_w, diag)) ||
        (rc = get_number(root, "idle_w", file, &g->idle_w, diag)) ||
        (rc = get_number(root, "dyn_w", file, &g->dyn_w, diag)) ||
        (rc = get_number(root, "clock_mhz.min", file, &g->f_min_mhz, diag)) ||
        (rc = get_number(root, "clock_mhz.max", file, &g->f_max_mhz, diag)) ||
        (rc = get_number(root, "clock_mhz.knee", file, &g->f_knee_mhz, diag)) ||
        (rc = get_number(root, "v_min", file, &g->v_min, diag)) ||
        (rc = get_number(root, "memory.bandwidth_tbs", file, &g->mem_bw_tbs, diag)) ||
        (rc = get_number(root, "memory.size_gb", file, &g->mem_gb, diag)) ||
        (rc = get_number(root, "tflops_bf16", file, &g->tflops_bf16, diag)))
        return rc;
    if (config_setting_lookup_bool(root, "extrapolated", &extrapolated) == CONFIG_FALSE)
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.extrapolated",
                             "gpu.extrapolated: missing boolean setting");
    g->extrapolated = extrapolated != 0;

    if (!(g->min_limit_w > 0 && g->min_limit_w <= g->default_limit_w &&
          g->default_limit_w <= g->max_limit_w))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.limits_w",
                             "gpu.limits_w: need 0 < min <= default <= max");
    if (!(g->idle_w >= 0 && g->idle_w < g->min_limit_w))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.idle_w",
                             "gpu.idle_w: need 0 <= idle_w < limits_w.min");
    if (!(g->dyn_w > 0))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.dyn_w",
                             "gpu.dyn_w: must be positive");
    if (!(g->f_min_mhz > 0 && g->f_min_mhz < g->f_knee_mhz && g->f_knee_mhz < g->f_max_mhz))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.clock_mhz",
                             "gpu.clock_mhz: need 0 < min < knee < max");
    if (!(g->v_min > 0 && g->v_min <= 1))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.v_min",
                             "gpu.v_min: need 0 < v_min <= 1");
    return 0;
}

static int
parse_error(const config_t *cfg, const char *file, struct pfs_diag *diag)
{
    int code = config_error_type(cfg) == CONFIG_ERR_FILE_IO ? PFS_EIO : PFS_EINVAL;

    if (code == PFS_EIO)
        return pfs__diag_set(diag, code, file, 0, 0, NULL, "cannot read: %s", strerror(errno));
    return pfs__diag_set(diag, code, file, config_error_line(cfg), 0, NULL, "%s",
                         config_error_text(cfg));
}

int
pfs_gpu_load(const char *path, struct pfs_gpu *out, struct pfs_diag *diag)
{
    config_t cfg;
    int rc;

    if ((rc = pfs__config_read(&cfg, path, diag)) == 0)
        rc = gpu_from_config(&cfg, path, out, diag);
    config_destroy(&cfg);
    return rc;
}

const char *
pfs__gpu_nearest(const char *name)
{
    const char *names[32];
    size_t n = 0;

    while (n < 32 && pfs_gpu_name(n)) {
        names[n] = pfs_gpu_name(n);
        n++;
    }
    return pfs__nearest(name, names, n);
}

const char *
pfs_gpu_name(size_t i)
{
    for (size_t k = 0; pfs__gpu_embedded[k].name; k++)
        if (k == i)
            return pfs__gpu_embedded[k].name;
    return NULL;
}

int
pfs_gpu_find(const char *name, struct pfs_gpu *out, struct pfs_diag *diag)
{
    char known[256] = "";
    size_t used = 0;

    for (size_t k = 0; pfs__gpu_embedded[k].name; k++) {
        const struct pfs__embedded_file *e = &pfs__gpu_embedded[k];
        char file[64];
        config_t cfg;
        int rc;

        if (strcmp(e->name, name) != 0) {
            int n = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", e->name);
            if (n > 0 && (size_t)n < sizeof known - used)
                used += (size_t)n;
            continue;
        }
        snprintf(file, sizeof file, "configs/gpus/%s.cfg", e->name);
        config_init(&cfg);
        if (config_read_string(&cfg, e->text) == CONFIG_FALSE)
            rc = parse_error(&cfg, file, diag);
        else
            rc = gpu_from_config(&cfg, file, out, diag);
        config_destroy(&cfg);
        return rc;
    }
    {
        char hint[80];

        return pfs__diag_set(diag, PFS_ENOTFOUND, NULL, 0, 0, "gpu",
                             "unknown GPU profile '%s'%s (known: %s)", name,
                             pfs__did_you_mean(pfs__gpu_nearest(name), hint, sizeof hint), known);
    }
}
