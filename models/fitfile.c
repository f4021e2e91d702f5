/*
 * models/fitfile.c - fitted models saved and read back (pfisim fit --save, pfisim model
 * --fit; docs/model.md).
 *
 * A fit file is libconfig: one group `fit` with the curves it came from, the held-out fraction
 * it was fitted with (0: every cap), and a list of jobs, each with its GPU profile's name and
 * voltage shape (v_min, f_knee_mhz: the profile's, or the shape fitted with --profile) and its
 * job parameters (docs/model.md section 1). Numbers are written with 17 significant digits,
 * so a model read back is the model that was fitted, bit for bit. Reading checks every
 * setting as the scenario reader does: unknown names, wrong types and values outside the
 * model's bounds are errors naming the line and the setting.
 */
#include <libconfig.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *
num(char *buf, size_t size, double v)
{
    snprintf(buf, size, "%.17g", v);
    if (!strpbrk(buf, ".eEn"))
        strncat(buf, ".0", size - strlen(buf) - 1);
    return buf;
}

int
pfs_fitset_write(const struct pfs_fitset *fs, FILE *fp, struct pfs_diag *diag)
{
    char b[10][40];

    fprintf(fp,
            "# fitted DVFS models (pfisim fit --save; read by pfisim model --fit, docs/model.md)\n"
            "fit = {\n    source = \"%s\";\n    holdout_below = %s;\n    jobs = (",
            fs->source, num(b[0], 40, fs->holdout_below));
    for (size_t i = 0; i < fs->n_jobs; i++) {
        const struct pfs_fitted_job *j = &fs->jobs[i];

        fprintf(fp,
                "%s\n        { job_id = \"%s\"; gpu = \"%s\"; n_gpus = %d; unit = \"%s\";\n"
                "          t_max = %s; alpha = %s; activity = %s; mem_w = %s; cap_fill = %s;\n"
                "          v_min = %s; f_knee_mhz = %s; rmse_throughput = %s; }",
                i ? "," : "", j->job_id, j->gpu, j->n_gpus, j->unit, num(b[0], 40, j->job.t_max),
                num(b[1], 40, j->job.alpha), num(b[2], 40, j->job.activity),
                num(b[3], 40, j->job.mem_w), num(b[4], 40, j->job.cap_fill),
                num(b[5], 40, j->v_min), num(b[6], 40, j->f_knee_mhz),
                num(b[7], 40, j->rmse_throughput));
    }
    fprintf(fp, "\n    );\n};\n");
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL, "write error");
    return 0;
}

struct reader {
    const char *file;
    struct pfs_diag *diag;
};

static int
bad(const struct reader *r, const config_setting_t *s, const char *path, const char *msg)
{
    return pfs__diag_set(r->diag, PFS_EINVAL, r->file, s ? config_setting_source_line(s) : 0, 0,
                         path, "%s: %s", path, msg);
}

/* A required number within [lo, hi]. */
static int
number(const struct reader *r, const config_setting_t *g, const char *name, const char *prefix,
       double lo, double hi, double *out)
{
    const config_setting_t *s = config_setting_get_member(g, name);
    char path[96];

    snprintf(path, sizeof path, "%s.%s", prefix, name);
    if (!s)
        return bad(r, g, path, "missing");
    return pfs__config_number(s, path, lo, hi, out, r->file, r->diag);
}

static int
string(const struct reader *r, const config_setting_t *g, const char *name, const char *prefix,
       char *dst, size_t size)
{
    const config_setting_t *s = config_setting_get_member(g, name);
    char path[96];

    snprintf(path, sizeof path, "%s.%s", prefix, name);
    if (!s)
        return bad(r, g, path, "missing");
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return bad(r, s, path, "expected a string");
    if (!pfs__strlcpy(dst, config_setting_get_string(s), size) || !dst[0])
        return bad(r, s, path, "empty or too long");
    return 0;
}

static int
known(const struct reader *r, const config_setting_t *g, const char *prefix,
      const char *const *names)
{
    return pfs__config_only(g, prefix, names, r->file, r->diag);
}

static int
read_job(const struct reader *r, const config_setting_t *g, const char *p, struct pfs_fitted_job *j)
{
    static const char *const names[] = {
        "job_id", "gpu",      "n_gpus", "unit",       "t_max",           "alpha", "activity",
        "mem_w",  "cap_fill", "v_min",  "f_knee_mhz", "rmse_throughput", NULL};
    struct pfs_gpu gpu;
    double n = 0;
    int rc;

    if (!config_setting_is_group(g))
        return bad(r, g, p, "expected a group");
    if ((rc = known(r, g, p, names)) ||
        (rc = string(r, g, "job_id", p, j->job_id, sizeof j->job_id)) ||
        (rc = string(r, g, "gpu", p, j->gpu, sizeof j->gpu)) ||
        (rc = string(r, g, "unit", p, j->unit, sizeof j->unit)) ||
        (rc = number(r, g, "n_gpus", p, 1, 1e7, &n)) ||
        (rc = number(r, g, "t_max", p, 0, 1e30, &j->job.t_max)) ||
        (rc = number(r, g, "alpha", p, 0, 1, &j->job.alpha)) ||
        (rc = number(r, g, "activity", p, 0, PFS_DVFS_ACTIVITY_MAX, &j->job.activity)) ||
        (rc = number(r, g, "mem_w", p, 0, 1e4, &j->job.mem_w)) ||
        (rc = number(r, g, "cap_fill", p, PFS_DVFS_FILL_MIN, 1, &j->job.cap_fill)) ||
        (rc = number(r, g, "v_min", p, 0.01, 1, &j->v_min)) ||
        (rc = number(r, g, "f_knee_mhz", p, 0, 1e5, &j->f_knee_mhz)) ||
        (rc = number(r, g, "rmse_throughput", p, 0, 1e6, &j->rmse_throughput)))
        return rc;
    if (floor(n) < n)
        return bad(r, config_setting_get_member(g, "n_gpus"), p, "n_gpus must be whole");
    j->n_gpus = (int)n;
    if (pfs_gpu_find(j->gpu, &gpu, NULL) != 0)
        return bad(r, config_setting_get_member(g, "gpu"), p,
                   "unknown GPU profile (see pfisim gpus)");
    return 0;
}

int
pfs_fitset_load(const char *path, struct pfs_fitset **out, struct pfs_diag *diag)
{
    static const char *const names[] = {"source", "holdout_below", "jobs", NULL};
    struct reader r = {path, diag};
    struct pfs_fitset *fs = calloc(1, sizeof *fs);
    config_setting_t *root, *jobs;
    config_t cfg;
    int rc;

    *out = NULL;
    if (!fs)
        return pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
    if ((rc = pfs__config_read(&cfg, path, diag)) != 0)
        goto out;
    if (!(root = config_lookup(&cfg, "fit")) || !config_setting_is_group(root)) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, "fit",
                           "fit: missing group (pfisim fit --save writes one)");
        goto out;
    }
    if ((rc = known(&r, root, "fit", names)) ||
        (rc = string(&r, root, "source", "fit", fs->source, sizeof fs->source)) ||
        (rc = number(&r, root, "holdout_below", "fit", 0, 1, &fs->holdout_below)))
        goto out;
    if (!(jobs = config_setting_get_member(root, "jobs")) || !config_setting_is_list(jobs) ||
        config_setting_length(jobs) < 1) {
        rc = bad(&r, jobs ? jobs : root, "fit.jobs", "expected a list of fitted jobs");
        goto out;
    }
    fs->n_jobs = (size_t)config_setting_length(jobs);
    if (!(fs->jobs = calloc(fs->n_jobs, sizeof *fs->jobs))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < fs->n_jobs && rc == 0; i++) {
        char p[48];

        snprintf(p, sizeof p, "fit.jobs.[%zu]", i);
        rc = read_job(&r, config_setting_get_elem(jobs, (unsigned)i), p, &fs->jobs[i]);
    }
out:
    config_destroy(&cfg);
    if (rc) {
        pfs_fitset_free(fs);
        return rc;
    }
    *out = fs;
    return 0;
}

const struct pfs_fitted_job *
pfs_fitset_find(const struct pfs_fitset *fs, const char *job_id)
{
    for (size_t i = 0; i < fs->n_jobs; i++)
        if (strcmp(fs->jobs[i].job_id, job_id) == 0)
            return &fs->jobs[i];
    return NULL;
}

void
pfs_fitset_free(struct pfs_fitset *fs)
{
    if (!fs)
        return;
    free(fs->jobs);
    free(fs);
}
