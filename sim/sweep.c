/*
 * sim/sweep.c - sweeps: a base scenario, axes that override its settings, the runs of their
 * cross product into one results database (docs/sweeps.md).
 *
 * An axis names any scenario setting by its path below `scenario` ("facility.gpus",
 * "dr_generator.per_year", "workload.tiers", "seed") or is the axis "policy". A point of the
 * sweep (an item) is one value of every non-policy axis, the first axis varying slowest; it
 * runs every policy on one workload. The override is made in the base scenario's libconfig
 * tree, which the scenario reader then checks like a file: any setting the reader knows can be
 * swept, and a wrong one is refused with the reader's own message before anything runs.
 *
 * Runs. Workers (threads, -j) take items in order and simulate them; the calling thread
 * alone writes the database, item after item in sweep order, whatever order the workers
 * finish in, so the file's rows come out the same for any number of workers. Each run is one
 * transaction keyed by its scenario's hash, policy and seed, so --resume skips what is there
 * and an interrupted sweep loses at most the runs in flight.
 */
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_AXES 16

struct axis {
    char setting[128];
    long line;
    int n;                        /* values */
    const config_setting_t *vals; /* in the sweep file's tree */
};

struct pfs_sweep {
    char path[256];
    char name[64];
    char *base; /* the base scenario's text */
    char base_name[256];
    config_t cfg; /* the sweep file */
    size_t n_axes;
    struct axis axes[MAX_AXES];          /* without the policy axis */
    const config_setting_t *policy_vals; /* the policy axis's values, in cfg */
    size_t n_policies;
    char policies[PFS_MAX_POLICIES][32];
    bool policy_axis;
    bool timeseries, jobs;
};

/* ----- building an item's scenario ----- */

static int
copy_setting(config_setting_t *parent, const char *name, const config_setting_t *src)
{
    int type = config_setting_type(src);
    config_setting_t *d = config_setting_add(parent, name, type);

    if (!d)
        return -1;
    switch (type) {
    case CONFIG_TYPE_INT:
        return config_setting_set_int(d, config_setting_get_int(src)) ? 0 : -1;
    case CONFIG_TYPE_INT64:
        return config_setting_set_int64(d, config_setting_get_int64(src)) ? 0 : -1;
    case CONFIG_TYPE_FLOAT:
        return config_setting_set_float(d, config_setting_get_float(src)) ? 0 : -1;
    case CONFIG_TYPE_BOOL:
        return config_setting_set_bool(d, config_setting_get_bool(src)) ? 0 : -1;
    case CONFIG_TYPE_STRING:
        return config_setting_set_string(d, config_setting_get_string(src)) ? 0 : -1;
    default: /* a group, an array or a list */
        for (int i = 0; i < config_setting_length(src); i++) {
            const config_setting_t *e = config_setting_get_elem(src, (unsigned)i);

            if (copy_setting(d, config_setting_name(e), e))
                return -1;
        }
        return 0;
    }
}

/* Sets scenario.<path> in cfg to a copy of value, making the groups on the way. Returns 0,
 * or -1 with why in msg. */
static int
override(config_t *cfg, const char *path, const config_setting_t *value, char *msg, size_t size)
{
    config_setting_t *g = config_lookup(cfg, "scenario");
    char buf[128], *part, *next;

    if (!g && !(g = config_setting_add(config_root_setting(cfg), "scenario", CONFIG_TYPE_GROUP)))
        return snprintf(msg, size, "cannot make the scenario group"), -1;
    pfs__strlcpy(buf, path, sizeof buf);
    for (part = buf; (next = strchr(part, '.')) != NULL; part = next + 1) {
        config_setting_t *m;

        *next = '\0';
        m = config_setting_get_member(g, part);
        if (m && !config_setting_is_group(m))
            return snprintf(msg, size, "scenario.%s is a value, not a group", buf), -1;
        if (!m && !(m = config_setting_add(g, part, CONFIG_TYPE_GROUP)))
            return snprintf(msg, size, "'%s' is not a setting name", part), -1;
        *next = '.';
        g = m;
    }
    if (config_setting_get_member(g, part))
        config_setting_remove(g, part);
    if (!*part || copy_setting(g, part, value))
        return snprintf(msg, size, "'%s' is not a setting name", path), -1;
    return 0;
}

/* The scenario of the base with the given value index of each axis (n of them, NULL: none). */
static int
build(const struct pfs_sweep *sw, const int *value, size_t n, struct pfs_scenario *sc,
      struct pfs_diag *diag)
{
    config_t cfg;
    int rc = 0;

    config_init(&cfg);
    if (config_read_string(&cfg, sw->base) == CONFIG_FALSE) {
        rc = pfs__diag_set(diag, PFS_EINVAL, sw->base_name, config_error_line(&cfg), 0, NULL, "%s",
                           config_error_text(&cfg));
        goto out;
    }
    for (size_t a = 0; a < n && rc == 0; a++) {
        const struct axis *ax = &sw->axes[a];
        char msg[200];

        const config_setting_t *v;

        if (value[a] < 0)
            continue;
        v = config_setting_get_elem(ax->vals, (unsigned)value[a]);
        if (strcmp(ax->setting, "site") == 0) {
            /* A site: a group of scenario settings (facility, workload, DR events, name...),
             * each replacing the base's (docs/sweeps.md, "Several sites"). */
            if (!config_setting_is_group(v))
                rc = pfs__diag_set(diag, PFS_EINVAL, sw->path, ax->line, 0, "sweep.axes",
                                   "sweep.axes: site: each value is a group of scenario "
                                   "settings, { name = \"...\"; facility = { ... }; ... }");
            for (int m = 0; rc == 0 && m < config_setting_length(v); m++) {
                const config_setting_t *e = config_setting_get_elem(v, (unsigned)m);

                if (override(&cfg, config_setting_name(e), e, msg, sizeof msg))
                    rc = pfs__diag_set(diag, PFS_EINVAL, sw->path, ax->line, 0, "sweep.axes",
                                       "sweep.axes: site: %s", msg);
            }
        } else if (override(&cfg, ax->setting, v, msg, sizeof msg))
            rc = pfs__diag_set(diag, PFS_EINVAL, sw->path, ax->line, 0, "sweep.axes",
                               "sweep.axes: %s", msg);
    }
    if (rc == 0)
        rc = pfs__scenario_read(config_lookup(&cfg, "scenario"), sw->base_name, sc, diag);
    if (rc == 0 && sw->policy_axis) {
        sc->n_policies = sw->n_policies;
        memcpy(sc->policies, sw->policies, sizeof sw->policies);
    }
out:
    config_destroy(&cfg);
    return rc;
}

size_t
pfs_sweep_n_items(const struct pfs_sweep *sw)
{
    size_t n = 1;

    for (size_t a = 0; a < sw->n_axes; a++)
        n *= (size_t)sw->axes[a].n;
    return n;
}

/* The index of axis a's value at point item. */
static int
value_index(const struct pfs_sweep *sw, size_t item, size_t a)
{
    for (size_t b = sw->n_axes; b-- > a + 1;) /* the last axis varies fastest */
        item /= (size_t)sw->axes[b].n;
    return (int)(item % (size_t)sw->axes[a].n);
}

int
pfs_sweep_scenario(const struct pfs_sweep *sw, size_t item, struct pfs_scenario *sc,
                   struct pfs_diag *diag)
{
    int value[MAX_AXES];

    for (size_t a = 0; a < sw->n_axes; a++)
        value[a] = value_index(sw, item, a);
    return build(sw, value, sw->n_axes, sc, diag);
}

/* A value as the sweep file gives it, short: scalars as written, aggregates elided. */
static void
value_text(const config_setting_t *v, char *buf, size_t size)
{
    switch (config_setting_type(v)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        snprintf(buf, size, "%lld", (long long)config_setting_get_int64(v));
        break;
    case CONFIG_TYPE_FLOAT:
        snprintf(buf, size, "%g", config_setting_get_float(v));
        break;
    case CONFIG_TYPE_BOOL:
        snprintf(buf, size, "%s", config_setting_get_bool(v) ? "true" : "false");
        break;
    case CONFIG_TYPE_STRING:
        snprintf(buf, size, "\"%s\"", config_setting_get_string(v));
        break;
    default: /* a group, array or list: which one of the axis's values it is (a site: its name) */
        if (config_setting_is_group(v) && config_setting_get_member(v, "name") &&
            config_setting_get_string(config_setting_get_member(v, "name")))
            snprintf(buf, size, "\"%s\"",
                     config_setting_get_string(config_setting_get_member(v, "name")));
        else
            snprintf(buf, size, "%s#%d", config_setting_is_group(v) ? "{...}" : "[...]",
                     config_setting_index(v) + 1);
    }
}

size_t
pfs_sweep_n_axes(const struct pfs_sweep *sw)
{
    return sw->n_axes;
}

const char *
pfs_sweep_axis(const struct pfs_sweep *sw, size_t a)
{
    return sw->axes[a].setting;
}

const char *
pfs_sweep_policy(const struct pfs_sweep *sw, size_t k)
{
    return sw->policies[k];
}

void
pfs_sweep_axis_value(const struct pfs_sweep *sw, size_t item, size_t a, char *buf, size_t size)
{
    value_text(config_setting_get_elem(sw->axes[a].vals, (unsigned)value_index(sw, item, a)), buf,
               size);
}

void
pfs_sweep_describe(const struct pfs_sweep *sw, size_t item, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t a = 0; a < sw->n_axes && used < size; a++) {
        char v[96];

        pfs_sweep_axis_value(sw, item, a, v, sizeof v);
        used += (size_t)snprintf(buf + used, size - used, "%s%s=%s", a ? " " : "",
                                 sw->axes[a].setting, v);
    }
}

/* ----- the sweep file ----- */

/* An error at setting s of the sweep file: "file:line: path: message". */
static int
bad(const struct pfs_sweep *sw, const config_setting_t *s, const char *path, const char *msg,
    struct pfs_diag *diag)
{
    return pfs__diag_set(diag, PFS_EINVAL, sw->path, s ? config_setting_source_line(s) : 0, 0, path,
                         "%s: %s", path, msg);
}

/* Reads a whole file into a string (malloc'd). */
static char *
slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;

    if (!fp)
        return NULL;
    do {
        char *nb;

        if (len + 4096 + 1 > cap) {
            cap = 2 * cap + 8192;
            if (!(nb = realloc(buf, cap))) {
                free(buf);
                fclose(fp);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, 4096, fp);
        len += got;
    } while (got > 0);
    if (ferror(fp)) {
        free(buf);
        buf = NULL;
    } else {
        buf[len] = '\0';
    }
    fclose(fp);
    return buf;
}

static int
read_policy_axis(struct pfs_sweep *sw, const config_setting_t *vals, struct pfs_diag *diag)
{
    if (sw->policy_axis)
        return bad(sw, vals, "sweep.axes", "two policy axes", diag);
    if (config_setting_length(vals) > PFS_MAX_POLICIES)
        return bad(sw, vals, "sweep.axes", "more than 16 policies", diag);
    for (int i = 0; i < config_setting_length(vals); i++) {
        const config_setting_t *v = config_setting_get_elem(vals, (unsigned)i);
        const char *name = config_setting_get_string(v);

        /* Known or not is asked once the base scenario is read: its policy_libs may add
         * the policy (check_policies). */
        if (!name || !pfs__strlcpy(sw->policies[i], name, sizeof sw->policies[i]))
            return bad(sw, v, "sweep.axes.values", "expected a policy name", diag);
    }
    {
        const char *names[PFS_MAX_POLICIES], *twice;
        char msg[96];

        for (int i = 0; i < config_setting_length(vals); i++)
            names[i] = sw->policies[i];
        if ((twice = pfs__policy_repeated(names, (size_t)config_setting_length(vals))) != NULL) {
            snprintf(msg, sizeof msg, "policy '%s' named twice", twice);
            return bad(sw, vals, "sweep.axes.values", msg, diag);
        }
    }
    sw->policy_vals = vals;
    sw->n_policies = (size_t)config_setting_length(vals);
    sw->policy_axis = true;
    return 0;
}

/* The scenario's canonical text with its seed (malloc'd; NULL without memory): two points
 * with the same are the same runs. */
static char *
point_text(const struct pfs_scenario *sc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    if (!fp)
        return NULL;
    pfs_scenario_write(sc, fp);
    fprintf(fp, "seed = %lu;\n", sc->seed);
    if (fclose(fp) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

struct point_key {
    uint64_t hash;
    size_t item;
};

static int
cmp_point_key(const void *a, const void *b)
{
    const struct point_key *x = a, *y = b;

    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

/* Whether points i and k are the same runs: their texts, made again, equal (1), not (0),
 * or -1 without memory. */
static int
same_point(const struct pfs_sweep *sw, size_t i, size_t k, struct pfs_scenario *sc)
{
    struct pfs_diag quiet = {0};
    char *a = NULL, *b = NULL;
    int same = -1;

    if (pfs_sweep_scenario(sw, i, sc, &quiet) == 0 && (a = point_text(sc)) != NULL &&
        pfs_sweep_scenario(sw, k, sc, &quiet) == 0 && (b = point_text(sc)) != NULL)
        same = strcmp(a, b) == 0;
    free(a);
    free(b);
    return same;
}

/* Points i < k that make the same scenario, said: as two values of the one axis they
 * differ in, or as the two points. */
static int
same_points(const struct pfs_sweep *sw, size_t i, size_t k, struct pfs_diag *diag)
{
    size_t differ = 0, in = 0;
    char a[512], b[512];

    for (size_t x = 0; x < sw->n_axes; x++)
        if (value_index(sw, i, x) != value_index(sw, k, x)) {
            differ++;
            in = x;
        }
    if (differ == 1) {
        char path[64];

        snprintf(path, sizeof path, "sweep.axes.[%zu].values.[%d]", in, value_index(sw, k, in));
        return pfs__diag_set(diag, PFS_EINVAL, sw->path, sw->axes[in].line, 0, path,
                             "%s (%s = ...): the same scenario as value [%d]", path,
                             sw->axes[in].setting, value_index(sw, i, in));
    }
    pfs_sweep_describe(sw, i, a, sizeof a);
    pfs_sweep_describe(sw, k, b, sizeof b);
    return pfs__diag_set(diag, PFS_EINVAL, sw->path, 0, 0, "sweep.axes",
                         "sweep.axes: points %zu (%s) and %zu (%s) are the same scenario", i, a, k,
                         b);
}

/* Every value of every axis, each alone on the base, must read as a scenario: a misspelt
 * setting or a value out of range fails here, naming the sweep file's line. And no two
 * points may make the same scenario (256 twice, 1 and 1.0, two equal sites, or values of
 * two axes that meet: dr_generator.per_year 0 and 5 in a run too short to draw an event),
 * whose runs would be the same, the second's rows replacing the first's. That is checked on
 * the points themselves, every combination, not on each axis on the base: there two DR
 * rates drew no event in the base's two days and were refused, where the sweep's own
 * duration axis gave them 30. A point that does not read is left to fail when it runs
 * (test_sweep_point_fails). */
static int
check_axes(struct pfs_sweep *sw, struct pfs_scenario *sc, struct pfs_diag *diag)
{
    size_t n = pfs_sweep_n_items(sw), m = 0;
    struct point_key *key;
    int value[MAX_AXES], rc = 0;

    for (size_t a = 0; a < sw->n_axes; a++)
        value[a] = -1;
    for (size_t a = 0; a < sw->n_axes; a++) {
        for (int i = 0; i < sw->axes[a].n; i++) {
            struct pfs_diag d = {0};
            char path[64];

            value[a] = i;
            if (build(sw, value, sw->n_axes, sc, &d) != 0) {
                snprintf(path, sizeof path, "sweep.axes.[%zu].values.[%d]", a, i);
                return pfs__diag_set(diag, d.code, sw->path, sw->axes[a].line, 0, path,
                                     "%s (%s = ...): %s", path, sw->axes[a].setting, d.message);
            }
        }
        value[a] = -1;
    }
    if (!(key = calloc(n + 1, sizeof *key)))
        return pfs__diag_set(diag, PFS_ENOMEM, sw->path, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct pfs_diag quiet = {0};
        char *text;

        if (pfs_sweep_scenario(sw, i, sc, &quiet) != 0)
            continue;
        if (!(text = point_text(sc)))
            rc = PFS_ENOMEM;
        else
            key[m++] = (struct point_key){pfs__fnv1a_str(PFS__FNV_OFFSET, text), i};
        free(text);
    }
    qsort(key, m, sizeof *key, cmp_point_key);
    /* each point against every earlier one of its hash (two texts of one hash need not be
     * the same, and a third may be either's) */
    for (size_t j = 1; j < m && rc == 0; j++)
        for (size_t k = j; k-- > 0 && key[k].hash == key[j].hash && rc == 0;) {
            int same = same_point(sw, key[k].item, key[j].item, sc);

            if (same < 0)
                rc = PFS_ENOMEM;
            else if (same)
                rc = same_points(sw, key[k].item, key[j].item, diag);
        }
    free(key);
    if (rc == PFS_ENOMEM)
        return pfs__diag_set(diag, PFS_ENOMEM, sw->path, 0, 0, NULL, "out of memory");
    if (rc)
        return rc;
    return build(sw, value, sw->n_axes, sc, diag); /* the base alone */
}

int
pfs_sweep_load(const char *path, struct pfs_sweep **out, struct pfs_diag *diag)
{
    static const char *const names[] = {"name", "scenario", "axes", "timeseries", "jobs", NULL};
    struct pfs_sweep *sw = calloc(1, sizeof *sw);
    struct pfs_scenario *sc = malloc(sizeof *sc);
    const config_setting_t *root, *axes, *s, *scen = NULL;
    const char *base = "";
    int rc = 0;

    *out = NULL;
    if (!sw || !sc) {
        free(sw);
        free(sc);
        return pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    pfs__strlcpy(sw->path, path, sizeof sw->path);
    sw->jobs = true;
    if ((rc = pfs__config_read(&sw->cfg, path, diag)))
        goto fail;
    if (!(root = config_lookup(&sw->cfg, "sweep")) || !config_setting_is_group(root)) {
        rc = bad(sw, NULL, "sweep", "missing group (see docs/sweeps.md)", diag);
        goto fail;
    }
    for (int i = 0; i < config_setting_length(root); i++) {
        const char *n = config_setting_name(config_setting_get_elem(root, (unsigned)i));
        bool known = false;

        for (size_t k = 0; names[k]; k++)
            known = known || strcmp(n, names[k]) == 0;
        if (!known) {
            char p[96];

            snprintf(p, sizeof p, "sweep.%s", n);
            rc = bad(sw, config_setting_get_elem(root, (unsigned)i), p, "unknown setting", diag);
            goto fail;
        }
    }
    pfs__strlcpy(sw->name, "sweep", sizeof sw->name);
    if ((s = config_setting_get_member(root, "name")) &&
        (!config_setting_get_string(s) ||
         !pfs__strlcpy(sw->name, config_setting_get_string(s), sizeof sw->name))) {
        rc = bad(sw, s, "sweep.name", "expected a string of at most 63 bytes", diag);
        goto fail;
    }
    if ((scen = config_setting_get_member(root, "scenario")) &&
        !(base = config_setting_get_string(scen))) {
        rc = bad(sw, scen, "sweep.scenario", "expected a file name (\"\": the default)", diag);
        goto fail;
    }
    for (int k = 0; k < 2; k++) {
        const char *flag = k ? "jobs" : "timeseries";

        if ((s = config_setting_get_member(root, flag))) {
            char p[32];

            snprintf(p, sizeof p, "sweep.%s", flag);
            if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
                rc = bad(sw, s, p, "expected true or false", diag);
                goto fail;
            }
            *(k ? &sw->jobs : &sw->timeseries) = config_setting_get_bool(s) != 0;
        }
    }
    /* The base scenario, kept as text: every item starts from a fresh tree of it. */
    if (base[0]) {
        char dir[PATH_MAX], found[PATH_MAX], *slash;

        /* Beside the sweep file first, as a scenario's own paths (docs/sweeps.md). */
        pfs__strlcpy(dir, path, sizeof dir);
        if ((slash = strrchr(dir, '/')) != NULL)
            *slash = '\0';
        else
            dir[0] = '\0';
        if (pfs__resolve_path(dir, base, found, sizeof found) == 0)
            base = found;
        pfs__strlcpy(sw->base_name, base, sizeof sw->base_name);
        if (!(sw->base = slurp(base))) {
            rc = pfs__diag_set(diag, PFS_EIO, path, config_setting_source_line(scen), 0,
                               "sweep.scenario", "sweep.scenario: cannot read '%s'", base);
            goto fail;
        }
    } else {
        char *text = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&text, &len);

        pfs__strlcpy(sw->base_name, "(the default scenario)", sizeof sw->base_name);
        pfs_scenario_default(sc);
        if (!fp || pfs_scenario_write(sc, fp) != 0) {
            if (fp)
                fclose(fp);
            free(text);
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto fail;
        }
        fclose(fp);
        sw->base = text;
    }
    if (!(axes = config_setting_get_member(root, "axes")) || !config_setting_is_list(axes)) {
        rc = bad(sw, axes ? axes : root, "sweep.axes",
                 "expected a list of axes ( { setting = \"...\"; values = [...]; }, ... )", diag);
        goto fail;
    }
    for (int i = 0; i < config_setting_length(axes); i++) {
        const config_setting_t *ax = config_setting_get_elem(axes, (unsigned)i);
        const config_setting_t *set = config_setting_get_member(ax, "setting");
        const config_setting_t *vals = config_setting_get_member(ax, "values");
        const char *name = set ? config_setting_get_string(set) : NULL;
        char p[48];

        snprintf(p, sizeof p, "sweep.axes.[%d]", i);
        if (!config_setting_is_group(ax) || config_setting_length(ax) != 2 || !name || !vals) {
            rc =
                bad(sw, ax, p, "expected { setting = \"path.of.setting\"; values = [...]; }", diag);
            goto fail;
        }
        if (!(config_setting_is_array(vals) || config_setting_is_list(vals))) {
            rc = bad(sw, vals, p, "values: expected [a, b, ...] or ( {...}, ... )", diag);
            goto fail;
        }
        if (config_setting_length(vals) == 0) {
            rc = bad(sw, vals, p, "empty axis: give at least one value", diag);
            goto fail;
        }
        for (size_t a = 0; a < sw->n_axes; a++)
            if (strcmp(sw->axes[a].setting, name) == 0) {
                rc = bad(sw, set, p, "this setting is already an axis", diag);
                goto fail;
            }
        if (strcmp(name, "policy") == 0 || strcmp(name, "policies") == 0) {
            if ((rc = read_policy_axis(sw, vals, diag)))
                goto fail;
            continue;
        }
        if (sw->n_axes == MAX_AXES) {
            rc = bad(sw, ax, p, "more than 16 axes", diag);
            goto fail;
        }
        if (!name[0] || !pfs__strlcpy(sw->axes[sw->n_axes].setting, name, 128) ||
            strncmp(name, "scenario.", 9) == 0) {
            rc = bad(sw, set, p, "setting: a path below scenario, as facility.gpus", diag);
            goto fail;
        }
        sw->axes[sw->n_axes].line = config_setting_source_line(ax);
        sw->axes[sw->n_axes].n = config_setting_length(vals);
        sw->axes[sw->n_axes].vals = vals;
        sw->n_axes++;
    }
    if ((rc = check_axes(sw, sc, diag)))
        goto fail;
    for (size_t k = 0; sw->policy_axis && k < sw->n_policies; k++)
        if (!pfs_sim_policy_find(sw->policies[k], NULL)) {
            char msg[128];

            snprintf(msg, sizeof msg, "unknown policy '%.64s' (pfisim --list-policies)",
                     sw->policies[k]);
            rc = bad(sw, config_setting_get_elem(sw->policy_vals, (unsigned)k), "sweep.axes.values",
                     msg, diag);
            goto fail;
        }
    if (!sw->policy_axis) {
        sw->n_policies = sc->n_policies;
        memcpy(sw->policies, sc->policies, sizeof sw->policies);
    }
    free(sc);
    *out = sw;
    return 0;
fail:
    free(sc);
    pfs_sweep_free(sw);
    return rc;
}

void
pfs_sweep_free(struct pfs_sweep *sw)
{
    if (!sw)
        return;
    config_destroy(&sw->cfg);
    free(sw->base);
    free(sw);
}

const char *
pfs_sweep_name(const struct pfs_sweep *sw)
{
    return sw->name;
}

size_t
pfs_sweep_n_policies(const struct pfs_sweep *sw)
{
    return sw->n_policies;
}

/* ----- running ----- */

struct slot {
    size_t item;
    bool skip[PFS_MAX_POLICIES]; /* already in the database (--resume) */
    bool done;
    int rc;
    struct pfs_diag diag;
    struct pfs_scenario *sc;
    struct pfs_sim_inputs *in;
    struct pfs_run_result res[PFS_MAX_POLICIES];
    struct pfs_timeseries ts[PFS_MAX_POLICIES];
    struct pfs_job_results jobs[PFS_MAX_POLICIES];
};

/* The sweep's threads (-j of them, the caller's among them) each simulate a point at a time
 * and, when the point next in sweep order is done and no other thread is writing, write it
 * and every done point after it: writing is a turn any of them takes, not a thread of its
 * own (a writer beside -j simulating threads made -j 1 two busy threads, and -j 2 three on
 * this 2-core machine, where the 64-run sweep took longer with -j 2 than with -j 1). */
struct runner {
    const struct pfs_sweep *sw;
    struct pfs_store *st;
    const struct pfs_sweep_options *o;
    struct pfs_sweep_stats *stats;
    struct slot *slots;
    size_t n_slots;
    size_t next_take;  /* the next slot to simulate */
    size_t next_write; /* the next slot to write, in sweep order */
    size_t window;     /* at most this many slots taken and not yet written */
    bool writing;      /* a thread is taking its turn at writing */
    bool stop;
    int rc; /* the first failure in sweep order, its message in diag */
    struct pfs_diag diag;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void
slot_clear(struct slot *s)
{
    for (size_t k = 0; k < PFS_MAX_POLICIES; k++) {
        pfs_timeseries_free(&s->ts[k]);
        pfs_job_results_free(&s->jobs[k]);
        pfs_run_result_free(&s->res[k]);
    }
    pfs_sim_inputs_free(s->in);
    s->in = NULL;
    free(s->sc);
    s->sc = NULL;
}

static int
simulate(const struct pfs_sweep *sw, struct slot *s)
{
    int rc;

    if (!(s->sc = malloc(sizeof *s->sc)))
        return pfs__diag_set(&s->diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs_sweep_scenario(sw, s->item, s->sc, &s->diag)) ||
        (rc = pfs_sim_inputs_new(s->sc, &s->in, &s->diag)))
        return rc;
    for (size_t k = 0; k < sw->n_policies && rc == 0; k++) {
        if (s->skip[k])
            continue;
        if (sw->timeseries) /* (into a temporary file as made; in memory where none) */
            (void)pfs_timeseries_spill(&s->ts[k]);
        if (sw->jobs) /* (the same) */
            (void)pfs_job_results_spill(&s->jobs[k]);
        rc =
            pfs_sim_run(s->sc, s->in, sw->policies[k], &s->res[k],
                        sw->timeseries ? &s->ts[k] : NULL, sw->jobs ? &s->jobs[k] : NULL, &s->diag);
    }
    return rc;
}

static int
write_slot(const struct pfs_sweep *sw, struct pfs_store *st, struct slot *s,
           struct pfs_sweep_stats *stats, struct pfs_diag *diag)
{
    int rc = 0;

    for (size_t k = 0; k < sw->n_policies && rc == 0; k++) {
        if (s->skip[k])
            continue;
        rc = pfs_store_write_run(st, s->sc, s->in, &s->res[k], sw->timeseries ? &s->ts[k] : NULL,
                                 sw->jobs ? &s->jobs[k] : NULL, diag);
        stats->runs_done += rc == 0;
    }
    if (rc == 0)
        rc = pfs_store_update_gaps(st, s->sc, diag);
    return rc;
}

/* A turn at writing (r->mu held, released while writing): every done slot from
 * next_write on, in order. */
static void
write_turn(struct runner *r)
{
    r->writing = true;
    while (!r->stop && r->next_write < r->n_slots && r->slots[r->next_write].done) {
        struct slot *s = &r->slots[r->next_write];
        struct pfs_diag d = {0};
        int rc;

        pthread_mutex_unlock(&r->mu);
        if (s->rc) {
            d = s->diag;
            rc = s->rc;
        } else {
            rc = write_slot(r->sw, r->st, s, r->stats, &d);
        }
        slot_clear(s);
        if (rc == 0 && r->o->progress)
            r->o->progress(r->o->arg, r->stats->runs_done,
                           r->stats->runs_total - r->stats->runs_skipped);
        pthread_mutex_lock(&r->mu);
        r->next_write++;
        if (rc) {
            r->rc = rc;
            r->diag = d;
            r->stop = true;
        }
        pthread_cond_broadcast(&r->cv); /* (the window moved) */
    }
    r->writing = false;
    pthread_cond_broadcast(&r->cv);
}

static void *
worker(void *arg)
{
    struct runner *r = arg;

    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        struct slot *s;

        if (!r->writing && r->next_write < r->n_slots && r->slots[r->next_write].done) {
            write_turn(r);
            continue;
        }
        if (r->next_take >= r->n_slots) /* what is left is another's: it writes it too */
            break;
        if (r->next_take >= r->next_write + r->window) {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        s = &r->slots[r->next_take++];
        pthread_mutex_unlock(&r->mu);
        s->rc = simulate(r->sw, s);
        pthread_mutex_lock(&r->mu);
        s->done = true;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int
pfs_sweep_run(const struct pfs_sweep *sw, struct pfs_store *st, const struct pfs_sweep_options *o,
              struct pfs_sweep_stats *stats, struct pfs_diag *diag)
{
    size_t n_items = pfs_sweep_n_items(sw), n_threads = o->jobs > 0 ? (size_t)o->jobs : 1;
    size_t shard_n = o->shard_n > 0 ? (size_t)o->shard_n : 1, shard_k = (size_t)o->shard_k;
    struct runner r = {.sw = sw, .st = st, .o = o, .stats = stats, .window = 4 * n_threads};
    struct pfs_scenario *sc = malloc(sizeof *sc);
    pthread_t *threads = calloc(n_threads, sizeof *threads);
    size_t started = 0;
    int rc = 0;

    memset(stats, 0, sizeof *stats);
    if (shard_k >= shard_n || !sc || !threads ||
        !(r.slots = calloc(n_items / shard_n + 1, sizeof *r.slots))) {
        free(sc);
        free(threads);
        return shard_k >= shard_n
                   ? pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "shard",
                                   "shard %zu of %zu: need K < N", shard_k, shard_n)
                   : pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    /* This shard's items, each checked and, with --resume, its finished runs marked. */
    for (size_t i = shard_k; i < n_items && rc == 0; i += shard_n) {
        struct slot *s = &r.slots[r.n_slots];
        size_t left = sw->n_policies;

        stats->items++;
        s->item = i;
        if ((rc = pfs_sweep_scenario(sw, i, sc, diag))) {
            if (diag) { /* say which point: its settings fail only together */
                char msg[sizeof diag->message];

                snprintf(msg, sizeof msg, "sweep point %zu (pfisim sweep --list): %.400s", i,
                         diag->message);
                pfs__strlcpy(diag->message, msg, sizeof diag->message);
            }
            break;
        }
        for (size_t k = 0; o->resume && k < sw->n_policies && rc == 0; k++)
            if ((rc = pfs_store_has_run(st, sc, sw->policies[k], &s->skip[k], diag)) == 0 &&
                s->skip[k])
                left--, stats->runs_skipped++;
        stats->runs_total += sw->n_policies;
        if (left > 0)
            r.n_slots++;
        else if (rc == 0) {
            /* Every run stored: a sweep killed after writing them but before the gap
             * update still gets it (the update is idempotent). */
            memset(s, 0, sizeof *s);
            rc = pfs_store_update_gaps(st, sc, diag);
        }
    }
    free(sc);
    if (rc == 0 && o->progress)
        o->progress(o->arg, 0, stats->runs_total - stats->runs_skipped);
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    /* -j threads in all: the caller's and n_threads - 1 more */
    for (; rc == 0 && started + 1 < n_threads && started + 1 < r.n_slots; started++)
        if (pthread_create(&threads[started], NULL, worker, &r) != 0)
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "cannot start a thread");
    if (rc) {
        pthread_mutex_lock(&r.mu);
        r.stop = true;
        pthread_mutex_unlock(&r.mu);
    }
    worker(&r); /* (returns when what is left is the others' to finish and write) */
    for (size_t t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    if (rc == 0 && r.rc) {
        *diag = r.diag;
        rc = r.rc;
    }
    for (size_t i = r.next_write; i < r.n_slots; i++)
        slot_clear(&r.slots[i]);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    free(r.slots);
    free(threads);
    return rc;
}
