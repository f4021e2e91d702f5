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
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <libconfig.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The parameters in the order of param_names (pfs_gpu_param's k). */
enum {
    P_MIN_W,
    P_DEFAULT_W,
    P_MAX_W,
    P_IDLE_W,
    P_DYN_W,
    P_F_MIN,
    P_F_MAX,
    P_F_KNEE,
    P_V_MIN,
    P_MEM_BW,
    P_MEM_GB,
    P_TFLOPS,
    P_KNEE_FRAC
};
_Static_assert(P_KNEE_FRAC == PFS_GPU_KNEE_FRAC && P_KNEE_FRAC + 1 == PFS_GPU_N_PARAMS,
               "the parameters' order");

static const char *const param_names[PFS_GPU_N_PARAMS] = {
    "limits_w.min",   "limits_w.default", "limits_w.max",       "idle_w", "dyn_w",
    "clock_mhz.min",  "clock_mhz.max",    "clock_mhz.knee",     "v_min",  "memory.bandwidth_tbs",
    "memory.size_gb", "tflops_bf16",      "clock_mhz.knee_frac"};

static const char *const kind_names[] = {"", "measured", "published", "assumed"};

const char *
pfs_gpu_param_name(size_t k)
{
    return k < PFS_GPU_N_PARAMS ? param_names[k] : NULL;
}

const char *
pfs_gpu_kind_name(int kind)
{
    return kind >= 0 && kind <= PFS_GPU_ASSUMED ? kind_names[kind] : "";
}

/* The field of parameter k (NULL for the knee fraction, which has none). */
static double *
field(struct pfs_gpu *g, size_t k)
{
    double *f[PFS_GPU_N_PARAMS] = {&g->min_limit_w,
                                   &g->default_limit_w,
                                   &g->max_limit_w,
                                   &g->idle_w,
                                   &g->dyn_w,
                                   &g->f_min_mhz,
                                   &g->f_max_mhz,
                                   &g->f_knee_mhz,
                                   &g->v_min,
                                   &g->mem_bw_tbs,
                                   &g->mem_gb,
                                   &g->tflops_bf16,
                                   NULL};

    return f[k];
}

double
pfs_gpu_param(const struct pfs_gpu *g, size_t k)
{
    struct pfs_gpu *m = (struct pfs_gpu *)(uintptr_t)g; /* field() only reads through it */

    if (k == P_KNEE_FRAC)
        return g->f_knee_mhz / g->f_max_mhz;
    return k < PFS_GPU_N_PARAMS ? *field(m, k) : (double)NAN;
}

bool
pfs_gpu_uncertain(const struct pfs_gpu *g)
{
    for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++)
        if (g->hi[k] > g->lo[k])
            return true;
    return false;
}

/* Reads parameter k, a number or a range [lo, hi] (written as an array of two numbers),
 * into g->lo[k], g->hi[k]. Returns 0, 1 when the setting is absent (absent_ok), or
 * PFS_EINVAL naming it. */
static int
get_param(config_setting_t *root, size_t k, const char *file, bool absent_ok, struct pfs_gpu *g,
          struct pfs_diag *diag)
{
    const config_setting_t *s = config_setting_lookup(root, param_names[k]);
    double v[2] = {NAN, NAN};
    char full[96];

    snprintf(full, sizeof full, "gpu.%s", param_names[k]);
    if (!s) {
        if (absent_ok)
            return 1;
        return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(root), 0, full,
                             "%s: missing setting", full);
    }
    if (config_setting_is_array(s) || config_setting_is_list(s)) {
        for (int i = 0; i < 2 && config_setting_length(s) == 2; i++) {
            const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
            int t = config_setting_type(e);

            if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
                v[i] = (double)config_setting_get_int64(e);
            else if (t == CONFIG_TYPE_FLOAT)
                v[i] = config_setting_get_float(e);
        }
        if (!(isfinite(v[0]) && isfinite(v[1]) && v[0] < v[1]))
            return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(s), 0, full,
                                 "%s: expected a number or a range [lo, hi] with lo < hi", full);
    } else {
        switch (config_setting_type(s)) {
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
            v[0] = (double)config_setting_get_int64(s);
            break;
        case CONFIG_TYPE_FLOAT:
            v[0] = config_setting_get_float(s);
            break;
        default:
            return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(s), 0, full,
                                 "%s: expected a number", full);
        }
        if (!isfinite(v[0]))
            return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(s), 0, full,
                                 "%s: expected a finite number", full);
        v[1] = v[0];
    }
    g->lo[k] = v[0];
    g->hi[k] = v[1];
    return 0;
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

/* The point profile from the ranges: each field at its parameter's midpoint, the derived
 * ones from theirs. */
static void
point_of(struct pfs_gpu *g)
{
    for (size_t k = 0; k < P_KNEE_FRAC; k++)
        if (!(k == P_DYN_W && g->dyn_derived) && !(k == P_F_KNEE && g->knee_derived))
            *field(g, k) = g->lo[k] < g->hi[k] ? 0.5 * (g->lo[k] + g->hi[k]) : g->lo[k];
    if (g->knee_derived)
        g->f_knee_mhz = 0.5 * (g->lo[P_KNEE_FRAC] + g->hi[P_KNEE_FRAC]) * g->f_max_mhz;
    if (g->dyn_derived)
        g->dyn_w = g->max_limit_w - g->idle_w;
}

/* The model's constraints on one profile (a point or a draw): 0 or PFS_EINVAL naming the
 * first broken, at file:line. */
static int
check_point(const struct pfs_gpu *g, const char *file, long line, const char *what,
            struct pfs_diag *diag)
{
    if (!(g->min_limit_w > 0 && g->min_limit_w <= g->default_limit_w &&
          g->default_limit_w <= g->max_limit_w))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.limits_w",
                             "gpu.limits_w%s: need 0 < min <= default <= max", what);
    if (!(g->idle_w >= 0 && g->idle_w < g->min_limit_w))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.idle_w",
                             "gpu.idle_w%s: need 0 <= idle_w < limits_w.min", what);
    if (!(g->dyn_w > 0))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.dyn_w",
                             "gpu.dyn_w%s: must be positive", what);
    if (!(g->f_min_mhz > 0 && g->f_min_mhz < g->f_knee_mhz && g->f_knee_mhz < g->f_max_mhz))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.clock_mhz",
                             "gpu.clock_mhz%s: need 0 < min < knee < max", what);
    if (!(g->v_min > 0 && g->v_min <= 1))
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.v_min",
                             "gpu.v_min%s: need 0 < v_min <= 1", what);
    return 0;
}

/* Fills g from a parsed config; file names the source in messages. */
static int
gpu_from_config(const config_t *cfg, const char *file, struct pfs_gpu *g, struct pfs_diag *diag)
{
    config_setting_t *root = config_lookup(cfg, "gpu"), *prov;
    int extrapolated = 0, rc;
    long line;

    memset(g, 0, sizeof *g);
    for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++)
        g->lo[k] = g->hi[k] = NAN;
    if (!root || !config_setting_is_group(root))
        return pfs__diag_set(diag, PFS_EINVAL, file, 0, 0, "gpu", "gpu: missing group");
    line = config_setting_source_line(root);
    if ((rc = get_string(root, "name", file, g->name, sizeof g->name, diag)) ||
        (rc = get_string(root, "model", file, g->model, sizeof g->model, diag)))
        return rc;
    for (size_t k = 0; k < P_KNEE_FRAC; k++) {
        /* dyn_w may be left out (derived: max - idle), the knee given as a fraction */
        rc = get_param(root, k, file, k == P_DYN_W || k == P_F_KNEE, g, diag);
        if (rc == 1 && k == P_DYN_W)
            g->dyn_derived = true;
        else if (rc == 1 && k == P_F_KNEE)
            g->knee_derived = true;
        else if (rc)
            return rc;
    }
    if (g->knee_derived) {
        if ((rc = get_param(root, P_KNEE_FRAC, file, false, g, diag)))
            return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.clock_mhz.knee",
                                 "gpu.clock_mhz: give knee (MHz) or knee_frac (of max)");
    } else if (config_setting_lookup(root, "clock_mhz.knee_frac")) {
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.clock_mhz.knee_frac",
                             "gpu.clock_mhz: give knee or knee_frac, not both");
    }
    if (config_setting_lookup_bool(root, "extrapolated", &extrapolated) == CONFIG_FALSE)
        return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.extrapolated",
                             "gpu.extrapolated: missing boolean setting");
    g->extrapolated = extrapolated != 0;
    /* provenance = ( { setting = "limits_w.max"; kind = "published"; source = "..."; }, ... ) */
    if ((prov = config_setting_lookup(root, "provenance")) != NULL) {
        if (!config_setting_is_list(prov))
            return pfs__diag_set(diag, PFS_EINVAL, file, config_setting_source_line(prov), 0,
                                 "gpu.provenance",
                                 "gpu.provenance: expected a list of { setting; kind; source; }");
        for (int i = 0; i < config_setting_length(prov); i++) {
            config_setting_t *e = config_setting_get_elem(prov, (unsigned)i);
            const char *set = NULL, *kind = NULL, *src = NULL;
            long el = config_setting_source_line(e);
            size_t k = 0;
            int kd = 1;

            if (!config_setting_is_group(e) || !config_setting_lookup_string(e, "setting", &set) ||
                !config_setting_lookup_string(e, "kind", &kind) ||
                !config_setting_lookup_string(e, "source", &src) || !src[0])
                return pfs__diag_set(diag, PFS_EINVAL, file, el, 0, "gpu.provenance",
                                     "gpu.provenance: each entry is { setting; kind; source; }, "
                                     "the source not empty");
            while (k < PFS_GPU_N_PARAMS && strcmp(param_names[k], set) != 0)
                k++;
            while (kd <= PFS_GPU_ASSUMED && strcmp(kind_names[kd], kind) != 0)
                kd++;
            if (k == PFS_GPU_N_PARAMS || !isfinite(g->lo[k]))
                return pfs__diag_set(diag, PFS_EINVAL, file, el, 0, "gpu.provenance",
                                     "gpu.provenance: '%s' is not a setting of this profile", set);
            if (kd > PFS_GPU_ASSUMED)
                return pfs__diag_set(diag, PFS_EINVAL, file, el, 0, "gpu.provenance",
                                     "gpu.provenance: kind '%s' is not measured, published or "
                                     "assumed",
                                     kind);
            if (g->kind[k])
                return pfs__diag_set(diag, PFS_EINVAL, file, el, 0, "gpu.provenance",
                                     "gpu.provenance: '%s' given twice", set);
            g->kind[k] = (unsigned char)kd;
        }
    }
    point_of(g);
    if ((rc = check_point(g, file, line, "", diag)))
        return rc;
    /* A range needs its reason; an extrapolated profile, a source for every number. */
    for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++) {
        if (!isfinite(g->lo[k]) || g->kind[k])
            continue;
        if (g->hi[k] > g->lo[k] || g->extrapolated)
            return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu.provenance",
                                 "gpu.%s: %s needs a provenance entry (setting, kind, source)",
                                 param_names[k],
                                 g->hi[k] > g->lo[k] ? "a range" : "in an extrapolated profile it");
    }
    /* Every draw must be a profile the model can use: the constraints at the ranges' ends
     * that bind them (derived values at their extremes). */
    {
        double knee_lo = g->knee_derived ? g->lo[P_KNEE_FRAC] * g->lo[P_F_MAX] : g->lo[P_F_KNEE];
        double knee_hi = g->knee_derived ? g->hi[P_KNEE_FRAC] * g->hi[P_F_MAX] : g->hi[P_F_KNEE];

        if (!(g->hi[P_MIN_W] <= g->lo[P_DEFAULT_W] && g->hi[P_DEFAULT_W] <= g->lo[P_MAX_W] &&
              g->hi[P_IDLE_W] < g->lo[P_MIN_W] && g->hi[P_F_MIN] < knee_lo &&
              knee_hi < g->lo[P_F_MAX] && g->lo[P_V_MIN] > 0 && g->hi[P_V_MIN] <= 1 &&
              (g->dyn_derived ? g->lo[P_MAX_W] - g->hi[P_IDLE_W] > 0 : g->lo[P_DYN_W] > 0)))
            return pfs__diag_set(diag, PFS_EINVAL, file, line, 0, "gpu",
                                 "gpu: the ranges allow a profile the model cannot use (need "
                                 "min <= default <= max limits, idle below the minimum limit, "
                                 "f_min < knee < f_max, 0 < v_min <= 1 across every range)");
    }
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

/* The embedded profiles parsed, each at its first find (a scenario's curves of a GPU no pool
 * has asked for theirs once per curve: 5 M instructions of a short run's 30 M in libconfig). */
#define GPU_PARSED_MAX 64
static struct {
    pthread_mutex_t lock;
    bool done[GPU_PARSED_MAX];
    struct pfs_gpu gpu[GPU_PARSED_MAX];
} parsed = {.lock = PTHREAD_MUTEX_INITIALIZER};

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
        pthread_mutex_lock(&parsed.lock);
        if (k < GPU_PARSED_MAX && parsed.done[k]) {
            *out = parsed.gpu[k];
            pthread_mutex_unlock(&parsed.lock);
            return 0;
        }
        snprintf(file, sizeof file, "configs/gpus/%s.cfg", e->name);
        config_init(&cfg);
        if (config_read_string(&cfg, e->text) == CONFIG_FALSE)
            rc = parse_error(&cfg, file, diag);
        else
            rc = gpu_from_config(&cfg, file, out, diag);
        config_destroy(&cfg);
        if (rc == 0 && k < GPU_PARSED_MAX) { /* (a failure, which a test may build, again) */
            parsed.gpu[k] = *out;
            parsed.done[k] = true;
        }
        pthread_mutex_unlock(&parsed.lock);
        return rc;
    }
    {
        char hint[80];

        return pfs__diag_set(diag, PFS_ENOTFOUND, NULL, 0, 0, "gpu",
                             "unknown GPU profile '%s'%s (known: %s)", name,
                             pfs__did_you_mean(pfs__gpu_nearest(name), hint, sizeof hint), known);
    }
}

int
pfs_gpu_source(const char *name, size_t k, char *buf, size_t size, struct pfs_diag *diag)
{
    buf[0] = '\0';
    if (k >= PFS_GPU_N_PARAMS)
        return 0;
    for (size_t e = 0; pfs__gpu_embedded[e].name; e++) {
        config_t cfg;
        const config_setting_t *prov;

        if (strcmp(pfs__gpu_embedded[e].name, name) != 0)
            continue;
        config_init(&cfg);
        if (config_read_string(&cfg, pfs__gpu_embedded[e].text) != CONFIG_FALSE &&
            (prov = config_lookup(&cfg, "gpu.provenance")) != NULL)
            for (int i = 0; i < config_setting_length(prov); i++) {
                const config_setting_t *en = config_setting_get_elem(prov, (unsigned)i);
                const char *set = NULL, *src = NULL;

                if (config_setting_lookup_string(en, "setting", &set) &&
                    strcmp(set, param_names[k]) == 0 &&
                    config_setting_lookup_string(en, "source", &src))
                    pfs__strlcpy(buf, src, size);
            }
        config_destroy(&cfg);
        return 0;
    }
    {
        struct pfs_gpu g;

        return pfs_gpu_find(name, &g, diag); /* its error: unknown */
    }
}

double
pfs__lhs_next(gsl_rng *r, size_t *perm, size_t n, size_t d)
{
    /* Each parameter's strata in their own order: the stratum of draw d. */
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    gsl_ran_shuffle(r, perm, n, sizeof *perm);
    return ((double)perm[d] + 0.5) / (double)n;
}

int
pfs_gpu_draw(const struct pfs_gpu *g, size_t n, size_t d, unsigned long seed, struct pfs_gpu *out,
             struct pfs_diag *diag)
{
    gsl_rng *r;
    size_t *perm;
    unsigned long h;
    char what[64];

    if (n == 0 || d >= n)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "uncertainty",
                             "draw %zu of %zu: no such draw", d, n);
    /* The name into the seed (FNV-1a), so that two profiles of one run draw apart. */
    h = (unsigned long)pfs__fnv1a_str(seed, g->name);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    perm = malloc(n * sizeof *perm);
    if (!r || !perm) {
        gsl_rng_free(r);
        free(perm);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    gsl_rng_set(r, h);
    *out = *g;
    for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++) {
        double v;

        if (!(out->hi[k] > out->lo[k]))
            continue;
        v = out->lo[k] + pfs__lhs_next(r, perm, n, d) * (out->hi[k] - out->lo[k]);
        if (n == 1) /* the point profile, to the bit */
            v = 0.5 * (out->lo[k] + out->hi[k]);
        out->lo[k] = out->hi[k] = v;
    }
    gsl_rng_free(r);
    free(perm);
    point_of(out);
    if (out->knee_derived)
        out->lo[P_F_KNEE] = out->hi[P_F_KNEE] = out->f_knee_mhz;
    if (out->dyn_derived)
        out->lo[P_DYN_W] = out->hi[P_DYN_W] = out->dyn_w;
    snprintf(what, sizeof what, " (draw %zu of %zu)", d + 1, n);
    return check_point(out, g->name, 0, what, diag);
}
