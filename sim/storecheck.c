/*
 * sim/storecheck.c - a results database read as input is checked as a CSV is
 * (docs/reliability.md, "What pfisim trusts"; issue 54).
 *
 * A results database travels: shards come back from a cluster, a colleague sends theirs.
 * pfisim wrote every value in it finite, in range and of its column's type, and every row's
 * parent row present; a database changed since (by hand, by a tool, by someone) may hold an
 * infinity, text in a REAL column, a negative count or an orphan row, which merged without a
 * word and reached `price` as "-inf" and "-nan%". So a database opened for reading is
 * checked whole before anything reads it: one scan a table for a row that breaks any rule,
 * then, for the first such row, which rule it breaks, so that the refusal names the table,
 * the row and the column, as a CSV reader names the line and the field.
 *
 * It also holds no view or trigger: pfisim writes none, and a view standing in for a table
 * would change what a reader sees. SQLite itself runs no code from a file (pfisim never
 * enables extension loading, and the connection is opened defensive and with an untrusted
 * schema: sim/store.c, db_connect).
 *
 * The per-minute table is the largest by far (a year of five runs: 2.1 M rows, 0.9 s to
 * scan) and only the figures and merge read it, so opening checks every other table and
 * those readers check it themselves (pfs__store_check_table): price, which reads the per-job
 * rows alone, pays 0.4 s on that year (docs/benchmarks.md, "Reading a large database").
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "internal.h"

/* A column's rule, as an SQL condition on c that holds for a value pfisim writes. */
enum rule {
    FIN,   /* a finite number or NULL */
    FIN0,  /* a finite number >= 0 or NULL */
    INT0,  /* an integer >= 0 or NULL */
    INT1,  /* an integer >= 1 */
    FLAG,  /* 0, 1 or NULL */
    TEXT,  /* text */
    TEXTN, /* text or NULL */
    TIER,  /* one of the tiers' names */
};

/* (Comparisons rather than typeof() where they say the same, half the time of a scan: in
 * SQLite's order NULL < numbers < text < blobs, so a number BETWEEN two finite bounds is a
 * finite number, and a value >= '' and < X'' is text. An infinity lies outside the bounds.) */
static const char *const rule_sql[] = {
    [FIN] = "(@ IS NULL OR @ BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)",
    [FIN0] = "(@ IS NULL OR @ BETWEEN 0 AND 1.7976931348623157e308)",
    [INT0] = "(@ IS NULL OR (@ BETWEEN 0 AND 9223372036854775807 AND typeof(@) = 'integer'))",
    [INT1] = "(@ BETWEEN 1 AND 9223372036854775807 AND typeof(@) = 'integer')",
    [FLAG] = "(@ IS NULL OR @ IN (0, 1))",
    [TEXT] = "(@ >= '' AND @ < X'')",
    [TEXTN] = "(@ IS NULL OR (@ >= '' AND @ < X''))",
    [TIER] = "(@ IN ('firm', 'flex1', 'flex2', 'flex3'))",
};

static const char *const rule_words[] = {
    [FIN] = "a finite number",
    [FIN0] = "a finite number, 0 or more",
    [INT0] = "an integer, 0 or more",
    [INT1] = "an integer, 1 or more",
    [FLAG] = "0 or 1",
    [TEXT] = "text",
    [TEXTN] = "text",
    [TIER] = "firm, flex1, flex2 or flex3",
};

struct column {
    const char *name;
    enum rule rule;
};

/* Each table: its columns' rules and the condition its parent row is present under. */
static const struct table {
    const char *name;
    const char *parent; /* SQL true when the row's parent exists; NULL: none */
    const char *parent_words;
    struct column cols[48];
    const char *index;      /* its key's index (SQLite's name for it), NULL: none */
    struct column icols[3]; /* the columns of it that are not the parent's key */
} tables[] = {
    {"scenario",
     NULL,
     NULL,
     {{"hash", TEXT}, {"name", TEXT}, {"config", TEXT}, {"inputs", TEXT}},
     "sqlite_autoindex_scenario_1",
     {{"hash", TEXT}}},
    {"run",
     "scenario_id IN (SELECT id FROM scenario)",
     "scenario_id names no scenario",
     {{"policy", TEXT}, {"seed", INT0}, {"version", TEXT}},
     "sqlite_autoindex_run_1",
     {{"policy", TEXT}, {"seed", INT0}}},
    {"summary",
     "run_id IN (SELECT id FROM run)",
     "run_id names no run",
     {{"tokens", FIN0},
      {"mean_tps", FIN0},
      {"energy_j", FIN0},
      {"tokens_per_j", FIN0},
      {"dr_minutes_over", FIN0},
      {"dr_worst_excess_w", FIN},
      {"dr_energy_over_j", FIN0},
      {"deadline_misses", INT0},
      {"tier_violations", INT0},
      {"jobs_submitted", INT0},
      {"jobs_started", INT0},
      {"jobs_finished", INT0},
      {"events", INT0},
      {"gap_recovered", FIN},
      {"gap_note", TEXTN},
      {"cap_w", FIN0},
      {"peak_facility_w", FIN0},
      {"p99_facility_w", FIN0},
      {"cap_binding_h", FIN0},
      {"dr_events", INT0},
      {"dr_events_met", INT0},
      {"dr_events_missed", INT0},
      {"dr_events_uncappable", INT0},
      {"dr_floor_excess_w", FIN},
      {"dr_energy_shed_j", FIN},
      {"nodr_tokens", FIN0},
      {"dr_cost_tokens", FIN},
      {"dr_cost_frac", FIN},
      {"dr_cost_per_event", FIN},
      {"dr_cost_per_mwh", FIN},
      {"job_loss_mean", FIN},
      {"job_loss_p50", FIN},
      {"job_loss_p95", FIN},
      {"job_loss_max", FIN},
      {"deadlines_given_up", INT0},
      {"nodr_deadline_misses", FIN0},
      {"jobs_refused", INT0},
      {"cap_minutes_over", FIN0},
      {"cap_worst_excess_w", FIN0},
      {"cap_mean_excess_w", FIN0},
      {"cap_energy_over_j", FIN0},
      {"jobs_held_back", INT0},
      {"held_back_wait_h", FIN0},
      {"jobs_paused_hold", INT0},
      {"hold_pauses", INT0}},
     NULL,
     {{NULL, FIN}}},
    {"job_result",
     "run_id IN (SELECT id FROM run)",
     "run_id names no run",
     {{"job_id", TEXT},
      {"curve_id", TEXT},
      {"n_gpus", INT1},
      {"tier", TIER},
      {"submit_s", FIN0},
      {"deadline_s", FIN},
      {"tokens", FIN0},
      {"start_s", FIN0},
      {"finish_s", FIN0},
      {"tokens_done", FIN0},
      {"duration_s", FIN0},
      {"pool", TEXTN},
      {"given_up", FLAG},
      {"refused", FLAG}},
     "sqlite_autoindex_job_result_1",
     {{"job_id", TEXT}}},
    {"pool_result",
     "run_id IN (SELECT id FROM run)",
     "run_id names no run",
     {{"pool", TEXT},
      {"gpu", TEXT},
      {"tokens", FIN0},
      {"energy_j", FIN0},
      {"busy_gpu_h", FIN0},
      {"jobs_started", INT0},
      {"jobs_finished", INT0}},
     "sqlite_autoindex_pool_result_1",
     {{"pool", TEXT}}},
    {"tree_result",
     "run_id IN (SELECT id FROM run)",
     "run_id names no run",
     {{"node", TEXT},
      {"level", INT0},
      {"limit_w", FIN0},
      {"nameplate_w", FIN0},
      {"peak_w", FIN0},
      {"p99_w", FIN0},
      {"minutes_at", FIN0},
      {"minutes_over", FIN0},
      {"worst_excess_w", FIN0},
      {"energy_j", FIN0}},
     "sqlite_autoindex_tree_result_1",
     {{"node", TEXT}}},
    {"curve",
     "scenario_id IN (SELECT id FROM scenario)",
     "scenario_id names no scenario",
     {{"curve_id", TEXT},
      {"gpu", TEXT},
      {"n_gpus", INT1},
      {"unit", TEXTN},
      {"family", TEXTN},
      {"phase", TEXTN},
      {"pfi_30", FIN},
      {"pfi_30_given", FIN}},
     "sqlite_autoindex_curve_1",
     {{"curve_id", TEXT}}},
    {"curve_point",
     "EXISTS (SELECT 1 FROM curve c WHERE c.scenario_id = curve_point.scenario_id AND "
     "c.curve_id = curve_point.curve_id)",
     "(scenario_id, curve_id) names no curve",
     {{"cap_w", FIN0}, {"throughput", FIN0}, {"power_w", FIN0}},
     "sqlite_autoindex_curve_point_1",
     {{"cap_w", FIN0}}},
    {"timeseries",
     "run_id IN (SELECT id FROM run)",
     "run_id names no run",
     {{"t_s", FIN0},
      {"facility_w", FIN0},
      {"gpu_w", FIN0},
      {"budget_w", FIN0},
      {"throughput", FIN0},
      {"running_jobs", INT0},
      {"paused_jobs", INT0}},
     "sqlite_autoindex_timeseries_1",
     {{"t_s", FIN0}}},
};

/* Appends to buf (of size, holding *n bytes) the rule of column c: a condition on it, its
 * template's every @ the column's name. */
static void
append_rule(char *buf, size_t size, size_t *n, const struct column *c)
{
    for (const char *s = rule_sql[c->rule]; *s && *n + 1 < size; s++) {
        if (*s != '@') {
            buf[(*n)++] = *s;
            continue;
        }
        for (const char *m = c->name; *m && *n + 1 < size; m++)
            buf[(*n)++] = *m;
    }
    if (*n < size)
        buf[*n] = '\0';
}

/* The first rowid of from (a table, or a table INDEXED BY its index) whose columns cols (up
 * to one without a name) or parent condition break a rule: 0 when none; -1 when it cannot be
 * read as pfisim's (why: SQLite's reason). */
static sqlite3_int64
first_bad_row(sqlite3 *db, const char *from, const struct column *cols, size_t n_cols,
              const char *parent, char *why, size_t why_size)
{
    char sql[8192];
    size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT rowid FROM %s WHERE NOT (1", from);
    sqlite3_stmt *q = NULL;
    sqlite3_int64 row = 0;
    int rc;

    for (size_t k = 0; k < n_cols && cols[k].name; k++) {
        if (n < sizeof sql)
            n += (size_t)snprintf(sql + n, sizeof sql - n, " AND ");
        append_rule(sql, sizeof sql, &n, &cols[k]);
    }
    if (parent && n < sizeof sql)
        n += (size_t)snprintf(sql + n, sizeof sql - n, " AND %s", parent);
    if (n < sizeof sql)
        n += (size_t)snprintf(sql + n, sizeof sql - n, ") LIMIT 1");
    if (n >= sizeof sql || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        snprintf(why, why_size, "%s", sqlite3_errmsg(db));
        sqlite3_finalize(q);
        return -1;
    }
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        row = sqlite3_column_int64(q, 0);
    else if (rc != SQLITE_DONE) {
        snprintf(why, why_size, "%s", sqlite3_errmsg(db));
        row = -1;
    }
    sqlite3_finalize(q);
    return row;
}

/* Whether condition cond holds for row of from (1), not (0), or cannot be asked (-1). */
static int
holds(sqlite3 *db, const char *from, sqlite3_int64 row, const char *cond)
{
    char sql[1024];
    sqlite3_stmt *q = NULL;
    int r = -1;

    snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE rowid = ?", cond, from);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(q, 1, row) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        r = sqlite3_column_int(q, 0) != 0;
    sqlite3_finalize(q);
    return r;
}

/* The value of column c of row of from, quoted for a message (at most 40 bytes of text). */
static void
value_of(sqlite3 *db, const char *from, sqlite3_int64 row, const char *c, char *buf, size_t size)
{
    char sql[256];
    sqlite3_stmt *q = NULL;

    snprintf(buf, size, "?");
    snprintf(sql, sizeof sql, "SELECT typeof(%s), quote(%s) FROM %s WHERE rowid = ?", c, c, from);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(q, 1, row) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(q, 0);
        const char *v = (const char *)sqlite3_column_text(q, 1);

        /* (quote() writes an infinity as Inf or 9.0e+999) */
        if (type && strcmp(type, "real") == 0 && v && (strstr(v, "e+999") || strstr(v, "Inf")))
            snprintf(buf, size, "%s", v[0] == '-' ? "-infinity" : "infinity");
        else
            snprintf(buf, size, "%s %.40s", type ? type : "?", v ? v : "NULL");
    }
    sqlite3_finalize(q);
}

/* The rows of t as from (the table, or its index: a reader that reads a column of the key
 * gets it from the index, where a crafted file may hold another value than the table's)
 * against the rules of cols and the parent condition; via says which, in a message. */
static int
check_rows(sqlite3 *db, const char *path, const struct table *t, const char *from, const char *via,
           const struct column *cols, size_t n_cols, struct pfs_diag *diag)
{
    char why[512], cond[512], value[80];
    sqlite3_int64 row = first_bad_row(db, from, cols, n_cols, t->parent, why, sizeof why);

    if (row == 0)
        return 0;
    if (row < 0)
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, t->name,
                             "table %s%s is not as pfisim writes it: %s", t->name, via, why);
    for (size_t c = 0; c < n_cols && cols[c].name; c++) {
        size_t n = 0;

        append_rule(cond, sizeof cond, &n, &cols[c]);
        if (holds(db, from, row, cond) == 1)
            continue;
        value_of(db, from, row, cols[c].name, value, sizeof value);
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, cols[c].name,
                             "table %s, row %lld%s, column %s: expected %s, got %s", t->name,
                             (long long)row, via, cols[c].name, rule_words[cols[c].rule], value);
    }
    return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, t->name,
                         "table %s, row %lld%s: an orphan row (%s)", t->name, (long long)row, via,
                         t->parent_words ? t->parent_words : "no parent");
}

/* t's rows, and the columns of its key as its index holds them. */
static int
check_table(sqlite3 *db, const char *path, const struct table *t, struct pfs_diag *diag)
{
    char from[160], via[96];
    int rc =
        check_rows(db, path, t, t->name, "", t->cols, sizeof t->cols / sizeof t->cols[0], diag);

    if (rc || !t->index)
        return rc;
    snprintf(from, sizeof from, "%s INDEXED BY %s", t->name, t->index);
    snprintf(via, sizeof via, " (in its index %s)", t->index);
    return check_rows(db, path, t, from, via, t->icols, sizeof t->icols / sizeof t->icols[0], diag);
}

int
pfs__store_check_table(struct sqlite3 *db, const char *path, const char *table,
                       struct pfs_diag *diag)
{
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
        if (strcmp(tables[k].name, table) == 0)
            return check_table(db, path, &tables[k], diag);
    return 0;
}

int
pfs__store_check(struct sqlite3 *db, const char *path, struct pfs_diag *diag)
{
    sqlite3_stmt *q = NULL;

    /* pfisim writes tables and their indexes alone. */
    if (sqlite3_prepare_v2(db,
                           "SELECT type, name FROM sqlite_master WHERE type NOT IN "
                           "('table', 'index') LIMIT 1",
                           -1, &q, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "not a results database: %s",
                             sqlite3_errmsg(db));
    }
    if (sqlite3_step(q) == SQLITE_ROW) {
        int rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                               "holds a %.20s ('%.60s') that pfisim never writes: not read",
                               (const char *)sqlite3_column_text(q, 0),
                               (const char *)sqlite3_column_text(q, 1));

        sqlite3_finalize(q);
        return rc;
    }
    sqlite3_finalize(q);
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        int rc;

        if (strcmp(tables[k].name, "timeseries") != 0 &&
            (rc = check_table(db, path, &tables[k], diag)) != 0)
            return rc;
    }
    return 0;
}
