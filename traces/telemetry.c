/*
 * traces/telemetry.c - an operator's own job from nvidia-smi or DCGM logs.
 *
 * Two log formats, exactly as the tools print them:
 * - nvidia-smi --query-gpu=timestamp,index,power.draw,power.limit,clocks.sm,
 *   utilization.gpu,utilization.memory --format=csv[,nounits]: a CSV with ", " separators,
 *   a header whose names may carry units ("power.draw [W]"), values that may too ("245.3 W",
 *   "1980 MHz", "98 %"), "[N/A]" where a GPU has no reading;
 * - dcgmi dmon -e 155,150,1002,1003,1004,1005,1011,1012: whitespace-separated columns under a
 *   "#Entity POWER TMPTR SMACT SMOCC TENSO DRAMA NVLTX NVLRX" header that repeats, a units
 *   line ("ID W C"), rows "GPU 0 254.2 45 0.873 ...", "N/A" where a field has no value.
 *
 * The summary is the job's steady state (docs/formats.md): per GPU, a sample is active when
 * its draw exceeds idle + 10% of the profile's range (idle to default limit) and the GPU is
 * busy (utilization.gpu >= 10% or SM active >= 0.05); the first 10% of each GPU's active
 * span (by time for nvidia-smi, by sample for dmon, which prints no timestamps) is warm-up
 * and dropped; the means of what remains, over all GPUs, are the telemetry. nvidia-smi's
 * utilization.gpu and utilization.memory are time-busy fractions, not DCGM's SM and DRAM
 * activity, so they are not passed off as those: the fields a log cannot give stay empty.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_GPU_INDEX     1024
#define WARMUP_FRAC       0.10
#define ACTIVE_POWER_FRAC 0.10
#define MIN_SAMPLES       3

struct sample {
    int gpu;
    double t; /* seconds (nvidia-smi) or the sample's ordinal on its GPU (dmon) */
    double power_w, limit_w, clock_mhz, util, sm_active, tensor, dram, nvlink_bps;
};

struct samples {
    struct sample *v;
    size_t n, cap;
};

static int
push(struct samples *s, const struct sample *x)
{
    void *grown = pfs__grow(s->v, &s->cap, s->n, sizeof *s->v, 256);

    if (!grown)
        return PFS_ENOMEM;
    s->v = grown;
    s->v[s->n++] = *x;
    return 0;
}

static double
mean_or_nan(double sum, size_t n)
{
    return n ? sum / (double)n : (double)NAN;
}

/* A sample of a working GPU: drawing more than the idle threshold and busy. */
static bool
active(const struct sample *x, double threshold_w)
{
    return x->power_w >= threshold_w && !(x->util < 10) && !(x->sm_active < 0.05);
}

/* Means over the steady-state samples into out; see the file comment. */
static int
summarise(const char *path, const struct pfs_gpu *g, const struct samples *s,
          struct pfs_corpus_job *out, struct pfs_diag *diag)
{
    enum { M_POWER, M_FRAC, M_CLOCK, M_SMACT, M_TENSOR, M_DRAM, M_NVLINK, N_M };
    double threshold = g->idle_w + ACTIVE_POWER_FRAC * (g->default_limit_w - g->idle_w);
    double sum[N_M] = {0};
    size_t cnt[N_M] = {0}, used = 0;
    int n_gpus = 0;

    for (int gpu = 0; gpu < MAX_GPU_INDEX; gpu++) {
        double t0 = HUGE_VAL, t1 = -HUGE_VAL, cut;
        bool any = false;

        for (size_t i = 0; i < s->n; i++) {
            if (s->v[i].gpu == gpu && active(&s->v[i], threshold)) {
                t0 = fmin(t0, s->v[i].t);
                t1 = fmax(t1, s->v[i].t);
            }
        }
        if (t0 > t1)
            continue;
        cut = t0 + WARMUP_FRAC * (t1 - t0); /* the warm-up ends here */
        for (size_t i = 0; i < s->n; i++) {
            const struct sample *x = &s->v[i];
            double limit = isnan(x->limit_w) ? g->default_limit_w : x->limit_w;
            const double v[N_M] = {x->power_w,         x->power_w / limit, x->clock_mhz,
                                   x->sm_active,       x->tensor,          x->dram,
                                   x->nvlink_bps / 1e9};

            if (x->gpu != gpu || !active(x, threshold) || x->t < cut)
                continue;
            for (int k = 0; k < N_M; k++) {
                if (!isnan(v[k])) {
                    sum[k] += v[k];
                    cnt[k]++;
                }
            }
            used++;
            any = true;
        }
        n_gpus += any;
    }
    if (used < MIN_SAMPLES)
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                             "%zu steady-state samples (idle and warm-up excluded); need at "
                             "least %d",
                             used, MIN_SAMPLES);
    out->n_gpus = n_gpus;
    out->power_w = sum[M_POWER] / (double)cnt[M_POWER];
    out->power_frac = sum[M_FRAC] / (double)cnt[M_FRAC];
    out->sm_clock_mhz = mean_or_nan(sum[M_CLOCK], cnt[M_CLOCK]);
    out->sm_active = mean_or_nan(sum[M_SMACT], cnt[M_SMACT]);
    out->tensor_active = mean_or_nan(sum[M_TENSOR], cnt[M_TENSOR]);
    out->dram_active = mean_or_nan(sum[M_DRAM], cnt[M_DRAM]);
    out->nvlink_gbps = mean_or_nan(sum[M_NVLINK], cnt[M_NVLINK]);
    out->net_gbps = NAN;
    out->tokens_per_s = NAN;
    out->params_b = out->active_params_b = NAN;
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        out->pfi[k] = NAN;
    return 0;
}

/* ----- nvidia-smi ----- */

static char *
trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        *--e = '\0';
    return s;
}

/* "2026/11/29 23:15:27.123" -> seconds. */
static bool
parse_timestamp(const char *s, double *out)
{
    int y, mo, d, h, mi, n = 0;
    double sec;

    if (sscanf(s, "%d/%d/%d %d:%d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || s[n] != '\0')
        return false;
    if (!pfs__civil_date(y, mo, d) || h < 0 || h > 23 || mi < 0 || mi > 59 ||
        !(sec >= 0 && sec < 61))
        return false;
    *out = (double)pfs__days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
    return true;
}

/* A value with an optional unit ("245.3 W", "98 %"); "[N/A]"-style values give NAN. */
static int
smi_value(struct pfs__csv *csv, size_t idx, const char *name, const char *unit, double *out)
{
    char *v, *sp;

    if (idx >= csv->n_fields)
        return pfs__csv_error(csv, idx, name, PFS_EINVAL,
                              "missing (the row has %zu fields): a truncated log?", csv->n_fields);
    v = trim(csv->fields[idx]);
    if (v[0] == '[') {
        *out = NAN;
        return 0;
    }
    sp = strchr(v, ' ');
    if (sp && strcmp(sp + 1, unit) == 0)
        *sp = '\0';
    if (!pfs__parse_double(v, out))
        return pfs__csv_error(csv, idx, name, PFS_EINVAL, "expected a number in %s, got '%s'", unit,
                              v);
    if (*out < 0)
        return pfs__csv_error(csv, idx, name, PFS_EINVAL, "must not be negative, got '%s'", v);
    return 0;
}

static int
nvidia_smi_read(const char *path, const struct pfs_gpu *g, struct pfs_corpus_job *out,
                struct pfs_diag *diag)
{
    static const char *const want[] = {"timestamp",         "index",     "power.draw",
                                       "power.limit",       "clocks.sm", "utilization.gpu",
                                       "utilization.memory"};
    /* The name nvidia-smi prints for a queried field when it differs: asked for clocks.sm,
     * it answers clocks.current.sm (a real H200 log, docs/formats.md). */
    static const char *const printed_as[] = {NULL, NULL, NULL, NULL, "clocks.current.sm",
                                             NULL, NULL};
    static const char *const units[] = {"", "", "W", "W", "MHz", "%", "%"};
    struct pfs__csv csv;
    struct samples s = {0};
    double last_t[MAX_GPU_INDEX];
    size_t idx[7];
    int rc;

    for (int i = 0; i < MAX_GPU_INDEX; i++)
        last_t[i] = -HUGE_VAL;
    if ((rc = pfs__csv_open(&csv, path, diag)) != 0)
        return rc;
    if ((rc = pfs__csv_next(&csv)) <= 0) {
        if (rc == 0)
            rc = pfs__diag_set(diag, PFS_EINVAL, path, 1, 0, NULL,
                               "empty file: expected the nvidia-smi CSV header");
        goto out;
    }
    /* Header names, with any " [unit]" removed. */
    for (size_t k = 0; k < 7; k++) {
        idx[k] = (size_t)-1;
        for (size_t f = 0; f < csv.n_fields; f++) {
            char *name = trim(csv.fields[f]), *br = strstr(name, " [");

            if (br)
                *br = '\0';
            if (strcmp(name, want[k]) == 0 || (printed_as[k] && strcmp(name, printed_as[k]) == 0))
                idx[k] = f;
        }
        if (idx[k] == (size_t)-1) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, csv.line, 1, want[k],
                               "missing column '%s' in the nvidia-smi header (query it with "
                               "--query-gpu=timestamp,index,power.draw,power.limit,clocks.sm,"
                               "utilization.gpu,utilization.memory)",
                               want[k]);
            pfs__diag_text(diag, csv.raw);
            goto out;
        }
    }
    while ((rc = pfs__csv_next(&csv)) == 1) {
        struct sample x = {.sm_active = NAN, .tensor = NAN, .dram = NAN, .nvlink_bps = NAN};
        const char *ts = idx[0] < csv.n_fields ? trim(csv.fields[idx[0]]) : "";
        double index;

        if (!parse_timestamp(ts, &x.t)) {
            rc = pfs__csv_error(&csv, idx[0], "timestamp", PFS_EINVAL,
                                "expected YYYY/MM/DD HH:MM:SS.mmm, got '%s'", ts);
            goto out;
        }
        if ((rc = smi_value(&csv, idx[1], "index", "", &index)) ||
            (rc = smi_value(&csv, idx[2], "power.draw", units[2], &x.power_w)) ||
            (rc = smi_value(&csv, idx[3], "power.limit", units[3], &x.limit_w)) ||
            (rc = smi_value(&csv, idx[4], "clocks.sm", units[4], &x.clock_mhz)) ||
            (rc = smi_value(&csv, idx[5], "utilization.gpu", units[5], &x.util)) ||
            (rc = smi_value(&csv, idx[6], "utilization.memory", units[6], &x.dram)))
            goto out;
        x.dram = NAN; /* utilization.memory is not DRAM activity (file comment) */
        if (isnan(index) || fabs(index - floor(index)) > 0 || index >= MAX_GPU_INDEX) {
            rc = pfs__csv_error(&csv, idx[1], "index", PFS_EINVAL,
                                "expected a GPU index from 0 to %d", MAX_GPU_INDEX - 1);
            goto out;
        }
        if (!isnan(x.limit_w) && !(x.limit_w > 0)) { /* issue 17: power_frac became inf */
            rc = pfs__csv_error(&csv, idx[3], "power.limit", PFS_EINVAL,
                                "%g W: a power limit must be positive ([N/A] when unknown)",
                                x.limit_w);
            goto out;
        }
        x.gpu = (int)index;
        if (x.t < last_t[x.gpu]) {
            rc = pfs__csv_error(&csv, idx[0], "timestamp", PFS_EINVAL,
                                "goes backwards for GPU %d (%.3f s before its previous sample)",
                                x.gpu, last_t[x.gpu] - x.t);
            goto out;
        }
        last_t[x.gpu] = x.t;
        if (isnan(x.power_w))
            continue;
        if ((rc = push(&s, &x)) != 0) {
            pfs__diag_set(diag, rc, path, 0, 0, NULL, "out of memory");
            goto out;
        }
    }
    if (rc == 0)
        rc = summarise(path, g, &s, out, diag);
out:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    free(s.v);
    return rc < 0 ? rc : 0;
}

/* ----- dcgmi dmon ----- */

/* Splits line (in place) on blanks; returns the count, columns in col[]. */
static size_t
split_blanks(char *line, char **tok, long *col, size_t max)
{
    size_t n = 0;
    char *p = line;

    while (*p && n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        tok[n] = p;
        col[n] = (long)(p - line) + 1;
        n++;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

enum { D_POWER, D_SMACT, D_TENSO, D_DRAMA, D_NVLTX, D_NVLRX, N_D };
static const char *const dmon_names[N_D] = {"POWER", "SMACT", "TENSO", "DRAMA", "NVLTX", "NVLRX"};

static int
dcgm_read(const char *path, const struct pfs_gpu *g, struct pfs_corpus_job *out,
          struct pfs_diag *diag)
{
    FILE *fp = fopen(path, "r");
    char *buf = NULL, *raw = NULL, *tok[64];
    long col[64], line = 0;
    size_t cap = 0, n_head = 0;
    int pos[N_D], rc = 0;
    double ordinal[MAX_GPU_INDEX] = {0};
    struct samples s = {0};
    ssize_t len;

    if (!fp)
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot open: %s", strerror(errno));
    while ((len = getline(&buf, &cap, fp)) >= 0) {
        size_t n;

        line++;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            buf[--len] = '\0';
        free(raw);
        raw = strdup(buf);
        if (!raw) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, line, 0, NULL, "out of memory");
            break;
        }
        n = split_blanks(buf, tok, col, 64);
        if (n == 0)
            continue;
        if (strcmp(tok[0], "#Entity") == 0) {
            n_head = n - 1;
            for (int k = 0; k < N_D; k++) {
                pos[k] = -1;
                for (size_t f = 1; f < n; f++)
                    if (strcmp(tok[f], dmon_names[k]) == 0)
                        pos[k] = (int)f - 1;
                if (k <= D_DRAMA && pos[k] < 0) { /* the four the summary needs */
                    rc = pfs__diag_set(diag, PFS_EINVAL, path, line, 1, dmon_names[k],
                                       "missing field %s in the dmon header (run dcgmi dmon -e "
                                       "155,150,1002,1003,1004,1005,1011,1012)",
                                       dmon_names[k]);
                    break;
                }
            }
            if (rc)
                break;
            continue;
        }
        if (strcmp(tok[0], "ID") == 0)
            continue; /* the units line */
        if (strcmp(tok[0], "GPU") != 0) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, line, col[0], NULL,
                               "unexpected line: not a dmon header, units line or GPU row");
            break;
        }
        if (n_head == 0) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, line, 1, NULL,
                               "a GPU row before any #Entity header");
            break;
        }
        if (n != n_head + 2) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, line, (long)strlen(raw) + 1, NULL,
                               "expected %zu values after 'GPU N', got %zu: a truncated log?",
                               n_head, n < 2 ? 0 : n - 2);
            break;
        }
        {
            struct sample x = {.limit_w = NAN, .clock_mhz = NAN, .util = NAN};
            double *dst[N_D] = {&x.power_w, &x.sm_active, &x.tensor, &x.dram, NULL, NULL};
            double tx = NAN, rx = NAN;
            long index;

            if (!pfs__parse_long(tok[1], &index) || index < 0 || index >= MAX_GPU_INDEX) {
                rc = pfs__diag_set(diag, PFS_EINVAL, path, line, col[1], "GPU",
                                   "expected a GPU index from 0 to %d, got '%s'", MAX_GPU_INDEX - 1,
                                   tok[1]);
                break;
            }
            dst[D_NVLTX] = &tx;
            dst[D_NVLRX] = &rx;
            for (int k = 0; k < N_D && rc == 0; k++) {
                const char *v;

                if (pos[k] < 0)
                    continue;
                v = tok[pos[k] + 2];
                if (strcmp(v, "N/A") == 0) {
                    *dst[k] = NAN;
                    continue;
                }
                if (!pfs__parse_double(v, dst[k]) || *dst[k] < 0 ||
                    (k >= D_SMACT && k <= D_DRAMA && *dst[k] > 1))
                    rc = pfs__diag_set(diag, PFS_EINVAL, path, line, col[pos[k] + 2], dmon_names[k],
                                       "field %s: bad value '%s'", dmon_names[k], v);
            }
            if (rc)
                break;
            x.gpu = (int)index;
            x.t = ordinal[index]++;
            x.nvlink_bps = (isnan(tx) && isnan(rx)) ? (double)NAN
                                                    : (isnan(tx) ? 0 : tx) + (isnan(rx) ? 0 : rx);
            if (isnan(x.power_w))
                continue;
            if ((rc = push(&s, &x)) != 0) {
                pfs__diag_set(diag, rc, path, line, 0, NULL, "out of memory");
                break;
            }
        }
    }
    if (rc)
        pfs__diag_text(diag, raw);
    if (rc == 0 && ferror(fp))
        rc = pfs__diag_set(diag, PFS_EIO, path, line, 0, NULL, "read error");
    if (rc == 0)
        rc = summarise(path, g, &s, out, diag);
    fclose(fp);
    free(buf);
    free(raw);
    free(s.v);
    return rc;
}

static const struct pfs_telemetry_ops telemetry_nvidia_smi = {
    .name = "nvidia-smi",
    .summary = "nvidia-smi --query-gpu=timestamp,index,power.draw,power.limit,clocks.sm,"
               "utilization.gpu,utilization.memory --format=csv[,nounits]",
    .read = nvidia_smi_read,
};

static const struct pfs_telemetry_ops telemetry_dcgm = {
    .name = "dcgm",
    .summary = "dcgmi dmon -e 155,150,1002,1003,1004,1005,1011,1012",
    .read = dcgm_read,
};

const struct pfs_telemetry_ops *const pfs_telemetry_importers[] = {
    &telemetry_nvidia_smi,
    &telemetry_dcgm,
    NULL,
};

const struct pfs_telemetry_ops *
pfs_telemetry_find(const char *name)
{
    for (size_t i = 0; pfs_telemetry_importers[i]; i++)
        if (strcmp(pfs_telemetry_importers[i]->name, name) == 0)
            return pfs_telemetry_importers[i];
    return NULL;
}
