/*
 * sim/store.c - the results database: one SQLite file per study (docs/results.md has the
 * schema, table by table).
 *
 * Every run is written in one transaction: either all its rows are there or none, so a run
 * interrupted midway leaves the rows of earlier runs as they were. A run is keyed by its
 * scenario (the hash of the scenario's canonical text, pfs_scenario_write, and of the bytes
 * of every file it reads, sim/inputs.c), its policy and its seed: writing the same key again
 * replaces the run's rows (foreign keys cascade). The file is in WAL mode with foreign keys on. It
 * carries its own identity in table pfisim_meta, so that pfisim refuses a database that is not its
 * own or of another schema version instead of writing into it. No wall-clock time is stored: the
 * same runs give the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* 2: job_result.duration_s; 3: curve, curve_point; 4: study; 5: the planner's summary,
 * gap_note, deadlines_given_up, job_result.pool and given_up, pool_result; 6: scenario.inputs
 * (the files read and their hashes, part of the key); 7: holding limits' columns; 8:
 * tree_result, every node of a power tree per run. */
#define SCHEMA_VERSION "8"

/* The summary's columns after run_id, in table order: the schema, the insert and the merge
 * name them from here. */
#define SUMMARY_COLS                                                                               \
    "tokens, mean_tps, energy_j, tokens_per_j, dr_minutes_over, dr_worst_excess_w,"                \
    " dr_energy_over_j, deadline_misses, tier_violations, jobs_submitted, jobs_started,"           \
    " jobs_finished, events, gap_recovered, gap_note, cap_w, peak_facility_w, p99_facility_w,"     \
    " cap_binding_h, dr_events, dr_events_met, dr_events_missed, dr_events_uncappable,"            \
    " dr_floor_excess_w, dr_energy_shed_j, nodr_tokens, dr_cost_tokens, dr_cost_frac,"             \
    " dr_cost_per_event, dr_cost_per_mwh, job_loss_mean, job_loss_p50, job_loss_p95,"              \
    " job_loss_max, deadlines_given_up, nodr_deadline_misses, jobs_refused, cap_minutes_over,"     \
    " cap_worst_excess_w, cap_mean_excess_w, cap_energy_over_j, jobs_held_back,"                   \
    " held_back_wait_h, jobs_paused_hold, hold_pauses"
#define N_SUMMARY_COLS 45

struct pfs_store {
    sqlite3 *db;
    char path[256]; /* the database's path, as errors name it */
    /* A database made new by pfs_store_create: the file written until pfs_store_finish
     * puts it at path ("" for any other) */
    char tmp[300];
    /* the inserts of ROWS_AT_ONCE job_result and timeseries rows, prepared at their first
     * use and kept (each took 2.4 M instructions to prepare, at every run) */
    sqlite3_stmt *job_rows, *minute_rows;
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS pfisim_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS study (\n"
    "  id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS scenario (\n"
    "  id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL,\n"
    "  config TEXT NOT NULL, inputs TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS run (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  scenario_id INTEGER NOT NULL REFERENCES scenario(id) ON DELETE CASCADE,\n"
    "  policy TEXT NOT NULL, seed INTEGER NOT NULL, version TEXT NOT NULL,\n"
    "  UNIQUE (scenario_id, policy, seed));\n"
    "CREATE TABLE IF NOT EXISTS summary (\n"
    "  run_id INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,\n"
    "  tokens REAL, mean_tps REAL, energy_j REAL, tokens_per_j REAL,\n"
    "  dr_minutes_over REAL, dr_worst_excess_w REAL, dr_energy_over_j REAL,\n"
    "  deadline_misses INTEGER, tier_violations INTEGER, jobs_submitted INTEGER,\n"
    "  jobs_started INTEGER, jobs_finished INTEGER, events INTEGER, gap_recovered REAL,\n"
    "  gap_note TEXT, cap_w REAL, peak_facility_w REAL, p99_facility_w REAL,\n"
    "  cap_binding_h REAL, dr_events INTEGER, dr_events_met INTEGER,\n"
    "  dr_events_missed INTEGER, dr_events_uncappable INTEGER, dr_floor_excess_w REAL,\n"
    "  dr_energy_shed_j REAL, nodr_tokens REAL, dr_cost_tokens REAL, dr_cost_frac REAL,\n"
    "  dr_cost_per_event REAL, dr_cost_per_mwh REAL, job_loss_mean REAL,\n"
    "  job_loss_p50 REAL, job_loss_p95 REAL, job_loss_max REAL, deadlines_given_up INTEGER,\n"
    "  nodr_deadline_misses REAL, jobs_refused INTEGER, cap_minutes_over REAL,\n"
    "  cap_worst_excess_w REAL, cap_mean_excess_w REAL, cap_energy_over_j REAL,\n"
    "  jobs_held_back INTEGER, held_back_wait_h REAL, jobs_paused_hold INTEGER,\n"
    "  hold_pauses INTEGER);\n"
    "CREATE TABLE IF NOT EXISTS job_result (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  job_id TEXT NOT NULL, curve_id TEXT NOT NULL, n_gpus INTEGER NOT NULL,\n"
    "  tier TEXT NOT NULL, submit_s REAL, deadline_s REAL, tokens REAL,\n"
    "  start_s REAL, finish_s REAL, tokens_done REAL, duration_s REAL, pool TEXT,\n"
    "  given_up INTEGER, refused INTEGER,\n"
    "  PRIMARY KEY (run_id, job_id));\n"
    "CREATE TABLE IF NOT EXISTS pool_result (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  pool TEXT NOT NULL, gpu TEXT NOT NULL, tokens REAL, energy_j REAL, busy_gpu_h REAL,\n"
    "  jobs_started INTEGER, jobs_finished INTEGER, PRIMARY KEY (run_id, pool));\n"
    "CREATE TABLE IF NOT EXISTS tree_result (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  node TEXT NOT NULL, level INTEGER, limit_w REAL, nameplate_w REAL, peak_w REAL,\n"
    "  p99_w REAL, minutes_at REAL, minutes_over REAL, worst_excess_w REAL, energy_j REAL,\n"
    "  PRIMARY KEY (run_id, node));\n"
    "CREATE TABLE IF NOT EXISTS curve (\n"
    "  scenario_id INTEGER NOT NULL REFERENCES scenario(id) ON DELETE CASCADE,\n"
    "  curve_id TEXT NOT NULL, gpu TEXT NOT NULL, n_gpus INTEGER NOT NULL, unit TEXT,\n"
    "  family TEXT, phase TEXT, pfi_30 REAL, pfi_30_given REAL,\n"
    "  PRIMARY KEY (scenario_id, curve_id));\n"
    "CREATE TABLE IF NOT EXISTS curve_point (\n"
    "  scenario_id INTEGER NOT NULL, curve_id TEXT NOT NULL, cap_w REAL NOT NULL,\n"
    "  throughput REAL, power_w REAL, PRIMARY KEY (scenario_id, curve_id, cap_w),\n"
    "  FOREIGN KEY (scenario_id, curve_id) REFERENCES curve(scenario_id, curve_id)\n"
    "    ON DELETE CASCADE);\n"
    "CREATE TABLE IF NOT EXISTS timeseries (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  t_s REAL NOT NULL, facility_w REAL, gpu_w REAL, budget_w REAL, throughput REAL,\n"
    "  running_jobs INTEGER, paused_jobs INTEGER, PRIMARY KEY (run_id, t_s));\n";

static int
fail(struct pfs_store *st, struct pfs_diag *diag, int code, const char *what)
{
    return pfs__diag_set(diag, code, st->path, 0, 0, NULL, "%s: %s", what,
                         st->db ? sqlite3_errmsg(st->db) : "cannot open");
}

static int
exec(struct pfs_store *st, const char *sql, struct pfs_diag *diag)
{
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return fail(st, diag, PFS_EIO, "database");
    return 0;
}

/* The value of key in pfisim_meta into buf ("" when absent). */
static int
meta(struct pfs_store *st, const char *key, char *buf, size_t size)
{
    sqlite3_stmt *q = NULL;
    int rc =
        sqlite3_prepare_v2(st->db, "SELECT value FROM pfisim_meta WHERE key = ?", -1, &q, NULL);

    buf[0] = '\0';
    if (rc != SQLITE_OK)
        return rc;
    sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        pfs__strlcpy(buf, (const char *)sqlite3_column_text(q, 0), size);
    sqlite3_finalize(q);
    return SQLITE_OK;
}

/* Checks the identity of an existing database (pfisim's, this schema version). */
static int
check_identity(struct pfs_store *st, struct pfs_diag *diag)
{
    char app[32], version[32];

    if (meta(st, "app", app, sizeof app) != SQLITE_OK || strcmp(app, "pfisim") != 0)
        return pfs__diag_set(diag, PFS_EINVAL, st->path, 0, 0, NULL,
                             "not a pfisim results database (no pfisim_meta identity)");
    meta(st, "schema_version", version, sizeof version);
    if (strcmp(version, SCHEMA_VERSION) != 0)
        return pfs__diag_set(diag, PFS_EINVAL, st->path, 0, 0, NULL,
                             "results database of schema version '%s'; this pfisim knows "
                             "version " SCHEMA_VERSION,
                             version);
    return 0;
}

/* The number of tables, or -1 when the file cannot be read as SQLite (*err: SQLite's code). */
static int
count_tables(struct pfs_store *st, int *err)
{
    sqlite3_stmt *q = NULL;
    int n = -1;

    *err = sqlite3_prepare_v2(st->db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", -1,
                              &q, NULL);
    if (*err == SQLITE_OK && (*err = sqlite3_step(q)) == SQLITE_ROW) {
        n = sqlite3_column_int(q, 0);
        *err = SQLITE_OK;
    }
    sqlite3_finalize(q);
    return n;
}

/* The statements kept on st->db, finalized (before it is closed). */
static void
forget_statements(struct pfs_store *st)
{
    sqlite3_finalize(st->job_rows);
    sqlite3_finalize(st->minute_rows);
    st->job_rows = st->minute_rows = NULL;
}

/* SQLite without its count of memory in use, which takes a mutex around every allocation
 * (once, before the library's first use in the process; where something else used it first,
 * the count stays). */
static void
sqlite_setup(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* Opens st->db on path with flags (a file: URI when uri). A connection is used by one
 * thread at a time (a sweep's thread at its turn to write, a command's own), so it takes no
 * mutex of its own: a
 * lock and an unlock at every call, 6.5 M of them, were 6% of a 64-run sweep with its jobs
 * stored. */
static int
db_connect(struct pfs_store *st, const char *path, int flags)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, sqlite_setup);
    forget_statements(st);
    if (st->db)
        sqlite3_close(st->db);
    st->db = NULL;
    /* A database is data: no extension loaded (SQLite's default, said again), no function
     * with side effects run from its schema (views, triggers, defaults), no way to write
     * its schema by hand (docs/reliability.md, "What pfisim trusts"). */
    if (sqlite3_open_v2(path, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        sqlite3_db_config(st->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL) !=
            SQLITE_OK ||
        sqlite3_db_config(st->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL) != SQLITE_OK ||
        sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL) != SQLITE_OK ||
        sqlite3_busy_timeout(st->db, 30000) != SQLITE_OK || /* another writer: wait, not fail */
        sqlite3_exec(st->db, "PRAGMA foreign_keys = ON;", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    return 0;
}

/* A database on read-only media: SQLite cannot make the -shm file that reading WAL mode
 * needs, unless told that nothing can change the file (immutable). That is only true when
 * no -wal file holds transactions the main file lacks, so it is tried only then. */
static int
connect_immutable(struct pfs_store *st, const char *path)
{
    char wal[600], uri[1600];
    size_t n = 0;
    FILE *fp;

    snprintf(wal, sizeof wal, "%s-wal", path);
    if ((fp = fopen(wal, "rb")) != NULL) {
        bool empty = fgetc(fp) == EOF;

        fclose(fp);
        if (!empty)
            return -1;
    }
    n += (size_t)snprintf(uri, sizeof uri, "file:");
    for (const char *c = path; *c && n + 4 < sizeof uri; c++)
        n += (size_t)(strchr("?#%", *c)
                          ? snprintf(uri + n, sizeof uri - n, "%%%02X", (unsigned char)*c)
                          : snprintf(uri + n, sizeof uri - n, "%c", *c));
    snprintf(uri + n, sizeof uri - n, "?immutable=1");
    return db_connect(st, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

static void
remove_created(const char *path)
{
    static const char *const sidecars[] = {"", "-journal", "-wal", "-shm"};
    char p[600];

    for (size_t k = 0; k < 4; k++) {
        snprintf(p, sizeof p, "%s%s", path, sidecars[k]);
        unlink(p);
    }
    pfs__tmp_gone(path); /* (a new database's temporary file: no signal need remove it now) */
}

/*
 * Opening for writing is race-free: the identity is checked, and for a new file the schema
 * and identity written, inside one write transaction (BEGIN IMMEDIATE, which waits on the
 * busy timeout), so a second writer creating the same new database at the same moment
 * waits and then finds a complete pfisim database (issue 17: 3 of 6 tries failed with "not
 * a pfisim results database"). A database this call created and could not finish (a full
 * disk) is removed again, not left as a 0-byte file.
 */
/* Why the database at path cannot be opened: the system's reason where a plain open for
 * writing (or reading) fails, which names a read-only file system or a permission (SQLite's
 * own says "unable to open database file" either way), else SQLite's. */
static const char *
why_not(struct pfs_store *st, const char *path, bool write)
{
    int fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);

    if (fd >= 0) {
        close(fd);
        return sqlite3_errmsg(st->db);
    }
    return strerror(errno);
}

static int
store_open(const char *path, const char *tmp, bool write, struct pfs_store **out,
           struct pfs_diag *diag)
{
    struct pfs_store *st = calloc(1, sizeof *st);
    sqlite3_stmt *q = NULL;
    int n_tables, err, rc;
    bool created = false;
    char study[64];

    *out = NULL;
    if (!st)
        return pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
    if (write && !tmp && (rc = pfs__link_check(path, diag)) != 0) {
        free(st);
        return rc;
    }
    pfs__strlcpy(st->path, path, sizeof st->path);
    if (tmp)
        pfs__strlcpy(st->tmp, tmp, sizeof st->tmp);
    if (write && !tmp) {
        pfs__mkdir_parents(path); /* a failure shows as the open's */
        created = access(path, F_OK) != 0;
    }
    if (db_connect(st, tmp ? tmp : path,
                   write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) !=
        0) {
        rc = fail(st, diag, PFS_EIO, "cannot open the results database");
        goto fail;
    }
    n_tables = count_tables(st, &err);
    if (n_tables < 0 && !write && (err == SQLITE_CANTOPEN || err == SQLITE_READONLY) &&
        connect_immutable(st, path) == 0)
        n_tables = count_tables(st, &err);
    if (n_tables < 0) { /* a file that is not SQLite fails here too */
        rc = err == SQLITE_CANTOPEN || err == SQLITE_READONLY || err == SQLITE_IOERR
                 ? pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot %s: %s",
                                 write ? "write" : "read", why_not(st, path, write))
                 : pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "not a results database: %s",
                                 sqlite3_errmsg(st->db));
        goto fail;
    }
    if (!write) {
        if (n_tables == 0) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                               "not a pfisim results database (empty; pfisim run --db writes "
                               "one)");
            goto fail;
        }
        if ((rc = check_identity(st, diag)) || (rc = pfs__store_check(st->db, path, diag)))
            goto fail;
        *out = st;
        return 0;
    }
    /* One database is one study, named after its file until someone renames it. */
    {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        const char *dot = strrchr(base, '.');

        snprintf(study, sizeof study, "%.*s", (int)(dot && dot > base ? dot - base : 63), base);
    }
    /* A new file no one else can see yet (pfs_store_create) is written with its journal in
     * memory and without waiting for the disk: half the system time, a quarter off the wall
     * time of a large run's store (docs/benchmarks.md, "A new database written whole");
     * pfs_store_finish puts it in WAL mode, flushed, where it belongs. */
    if (tmp)
        err = sqlite3_exec(st->db, "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;", NULL,
                           NULL, NULL);
    /* The switch to WAL takes a lock that SQLite does not wait for with the busy handler
     * when another connection is creating the same file: wait here, as long as the busy
     * timeout would. */
    for (int tries = 0; !tmp; tries++) {
        err = sqlite3_exec(st->db, "PRAGMA journal_mode = WAL;", NULL, NULL, NULL);
        if ((err != SQLITE_BUSY && err != SQLITE_LOCKED) || tries == 3000)
            break;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (err != SQLITE_OK) {
        rc = fail(st, diag, PFS_EIO, "database");
        goto fail;
    }
    if ((rc = exec(st, "BEGIN IMMEDIATE;", diag)))
        goto fail;
    if ((n_tables = count_tables(st, &err)) < 0) {
        rc = fail(st, diag, PFS_EIO, "database");
        goto rollback;
    }
    if (n_tables > 0 && (rc = check_identity(st, diag)))
        goto rollback;
    if ((rc = exec(st, schema, diag)) ||
        (rc = exec(st,
                   "INSERT OR IGNORE INTO pfisim_meta VALUES ('app', 'pfisim');"
                   "INSERT OR IGNORE INTO pfisim_meta VALUES ('schema_version', '" SCHEMA_VERSION
                   "');",
                   diag)))
        goto rollback;
    if (sqlite3_prepare_v2(st->db, "INSERT OR IGNORE INTO study VALUES (1, ?)", -1, &q, NULL) !=
            SQLITE_OK ||
        sqlite3_bind_text(q, 1, study, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_DONE) {
        sqlite3_finalize(q);
        rc = fail(st, diag, PFS_EIO, "database");
        goto rollback;
    }
    sqlite3_finalize(q);
    if ((rc = exec(st, "COMMIT;", diag)))
        goto rollback;
    *out = st;
    return 0;
rollback:
    sqlite3_exec(st->db, "ROLLBACK;", NULL, NULL, NULL);
fail:
    /* Removed only when this call made the file and no other writer holds it (a lock
     * error: removing it would pull the file from under that writer). */
    err = st->db ? sqlite3_errcode(st->db) : SQLITE_OK;
    pfs_store_close(st); /* (a new database's file goes with it) */
    if (created && err != SQLITE_BUSY && err != SQLITE_LOCKED)
        remove_created(path);
    return rc;
}

int
pfs_store_open(const char *path, struct pfs_store **out, struct pfs_diag *diag)
{
    return store_open(path, NULL, true, out, diag);
}

int
pfs_store_open_read(const char *path, struct pfs_store **out, struct pfs_diag *diag)
{
    return store_open(path, NULL, false, out, diag);
}

int
pfs_store_create(const char *path, struct pfs_store **out, struct pfs_diag *diag)
{
    struct stat sb;
    char tmp[300];
    int e, fd;

    *out = NULL;
    if (pfs__link_check(path, diag) != 0)
        return PFS_EIO;
    if (lstat(path, &sb) == 0 || errno != ENOENT) /* a file, a link, or none to be seen */
        return pfs_store_open(path, out, diag);
    pfs__mkdir_parents(path); /* a failure shows as pfs__tmp_beside's */
    if ((fd = pfs__tmp_beside(path, tmp, sizeof tmp)) < 0) { /* (empty: SQLite's new database) */
        e = errno;
        *out = NULL;
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL,
                             "cannot open the results database: %s", strerror(e));
    }
    close(fd);
    return store_open(path, tmp, true, out, diag);
}

/* path's file to disk (SQLite did not wait for it), so that no crash can leave a database
 * at its final path whose pages never reached the disk. Returns 0 or errno. */
static int
flush_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;

    if (fd < 0)
        return errno;
    if (fsync(fd) != 0)
        e = errno;
    close(fd);
    return e;
}

int
pfs_store_finish(struct pfs_store *st, struct pfs_diag *diag)
{
    struct pfs_store *into = NULL;
    int rc, e;

    if (!st || !st->tmp[0])
        return 0;
    forget_statements(st);
    if ((rc = exec(st, "PRAGMA journal_mode = WAL;", diag)))
        return rc;
    sqlite3_close(st->db); /* (the -wal file goes with the last connection) */
    st->db = NULL;
    if ((e = flush_file(st->tmp)) != 0)
        return pfs__diag_set(diag, PFS_EIO, st->path, 0, 0, NULL, "cannot write: %s", strerror(e));
    /* At its path only where nothing is there: a link fails on a file another writer made
     * meanwhile, which a rename would replace. */
    if (link(st->tmp, st->path) != 0) {
        struct stat sb;

        if (lstat(st->path, &sb) == 0) {
            /* Another writer made the database meanwhile: the runs go into it, as they would
             * have had it been there when this one began (pfs_store_close removes the file). */
            if ((rc = pfs_store_open(st->path, &into, diag)) == 0)
                rc = pfs_store_merge(into, st->tmp, diag);
            pfs_store_close(into);
            return rc;
        }
        if (rename(st->tmp, st->path) != 0) /* (a file system without links) */
            return pfs__diag_set(diag, PFS_EIO, st->path, 0, 0, NULL, "cannot write: %s",
                                 strerror(errno));
    }
    remove_created(st->tmp);
    st->tmp[0] = '\0';
    return 0;
}

sqlite3 *
pfs__store_db(struct pfs_store *st)
{
    return st->db;
}

const char *
pfs__store_path(const struct pfs_store *st)
{
    return st->path;
}

void
pfs_store_close(struct pfs_store *st)
{
    if (!st)
        return;
    forget_statements(st);
    if (st->db)
        sqlite3_close(st->db);
    if (st->tmp[0]) /* a new database not finished: none at all */
        remove_created(st->tmp);
    free(st);
}

/* The scenario's canonical text (malloc'd) and its key: 16 hex digits of the FNV-1a hash of
 * the text and of the content hashes of the files it reads (sim/inputs.c; their paths are
 * not part of the key, so the same files found elsewhere give the same key). inputs, when
 * not NULL, receives the list of files and hashes (malloc'd), stored with the scenario. */
static char *
canonical(const struct pfs_scenario *sc, char hash[17], char **inputs)
{
    char *text = NULL, *files;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    uint64_t h = PFS__FNV_OFFSET;

    if (inputs)
        *inputs = NULL;
    if (!fp)
        return NULL;
    pfs_scenario_write(sc, fp);
    fclose(fp);
    if (!text || !(files = pfs__scenario_inputs(sc))) {
        free(text);
        return NULL;
    }
    h = pfs__fnv1a(h, text, strlen(text));
    for (const char *line = files; *line;) {
        const char *end = strchr(line, '\n'), *sp = strchr(line, ' ');

        if (!end)
            end = line + strlen(line);
        h = pfs__fnv1a(h, "\n", 1);
        h = pfs__fnv1a(h, line, (size_t)((sp && sp < end ? sp : end) - line));
        line = *end ? end + 1 : end;
    }
    snprintf(hash, 17, "%016llx", (unsigned long long)h);
    if (inputs)
        *inputs = files;
    else
        free(files);
    return text;
}

int
pfs_store_get_summary(struct pfs_store *st, const struct pfs_scenario *sc, const char *policy,
                      struct pfs_run_result *out, bool *found, struct pfs_diag *diag)
{
    char hash[17], *text = canonical(sc, hash, NULL);
    sqlite3_stmt *q = NULL;
    int rc = 0;

    *found = false;
    memset(out, 0, sizeof *out);
    if (!text)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (sqlite3_prepare_v2(st->db,
                           "SELECT tokens, mean_tps, energy_j, tokens_per_j, dr_minutes_over, "
                           "dr_worst_excess_w, dr_energy_over_j, deadline_misses, "
                           "tier_violations, jobs_submitted, jobs_started, jobs_finished, "
                           "events, gap_recovered, dr_events, dr_events_met, dr_events_missed, "
                           "dr_events_uncappable, cap_w, peak_facility_w, p99_facility_w, "
                           "cap_binding_h, cap_minutes_over, cap_worst_excess_w, "
                           "jobs_held_back, held_back_wait_h, jobs_paused_hold FROM summary "
                           "JOIN run ON run.id = run_id "
                           "JOIN scenario ON scenario.id = run.scenario_id "
                           "WHERE hash = ? AND policy = ? AND seed = ?",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = fail(st, diag, PFS_EIO, "query");
    } else {
        sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, policy, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 3, (sqlite3_int64)sc->seed);
        if (sqlite3_step(q) == SQLITE_ROW) {
            double v[27];

            for (int i = 0; i < 27; i++)
                v[i] = sqlite3_column_type(q, i) == SQLITE_NULL ? (double)NAN
                                                                : sqlite3_column_double(q, i);
            pfs__strlcpy(out->policy, policy, sizeof out->policy);
            out->tokens = v[0];
            out->mean_tps = v[1];
            out->energy_j = v[2];
            out->tokens_per_j = v[3];
            out->dr_minutes_over = v[4];
            out->dr_worst_excess_w = v[5];
            out->dr_energy_over_j = v[6];
            out->deadline_misses = (size_t)v[7];
            out->tier_violations = (size_t)v[8];
            out->jobs_submitted = (size_t)v[9];
            out->jobs_started = (size_t)v[10];
            out->jobs_finished = (size_t)v[11];
            out->events = (size_t)v[12];
            out->gap_recovered = v[13];
            out->dr_events = (size_t)v[14];
            out->dr_events_met = (size_t)v[15];
            out->dr_events_missed = (size_t)v[16];
            out->dr_events_uncappable = (size_t)v[17];
            out->cap_w = v[18];
            out->peak_facility_w = v[19];
            out->p99_facility_w = v[20];
            out->cap_binding_h = v[21];
            out->cap_minutes_over = v[22];
            out->cap_worst_excess_w = v[23];
            out->jobs_held_back = isnan(v[24]) ? 0 : (size_t)v[24];
            out->held_back_wait_h = v[25];
            out->jobs_paused_hold = isnan(v[26]) ? 0 : (size_t)v[26];
            *found = true;
        }
    }
    sqlite3_finalize(q);
    free(text);
    return rc;
}

int
pfs_store_has_run(struct pfs_store *st, const struct pfs_scenario *sc, const char *policy,
                  bool *yes, struct pfs_diag *diag)
{
    struct pfs_run_result r; /* a run and its summary are written together */

    return pfs_store_get_summary(st, sc, policy, &r, yes, diag);
}

double
pfs__sql_real(sqlite3_stmt *q, int i)
{
    return sqlite3_column_type(q, i) == SQLITE_NULL ? (double)NAN : sqlite3_column_double(q, i);
}

static void
bind_real(sqlite3_stmt *q, int i, double v)
{
    if (isnan(v)) /* NAN is NULL */
        sqlite3_bind_null(q, i);
    else
        sqlite3_bind_double(q, i, v);
}

/* Runs a prepared insert, resetting it for the next row. */
static int
step(sqlite3_stmt *q)
{
    int rc = sqlite3_step(q);

    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rc == SQLITE_DONE ? 0 : rc;
}

/* Rows of a run's tables (a job's, a time series' minute) go in ROWS_AT_ONCE to an insert:
 * a statement's start and end (its cursors, its halt) were a third of storing a row, and a
 * sweep with its jobs stored spent more on storing than on simulating. */
enum { ROWS_AT_ONCE = 64 };

/* *q, "INSERT INTO table VALUES (?, ...), ..." of ROWS_AT_ONCE rows of cols columns each:
 * prepared where it is not yet. Every parameter is bound for every use. */
static int
prepare_rows(sqlite3 *db, const char *table, int cols, sqlite3_stmt **q)
{
    char row[64 * 3], sql[ROWS_AT_ONCE * sizeof row + 64];
    size_t n = 0;

    if (*q)
        return SQLITE_OK;
    for (int c = 0; c < cols && n + 8 < sizeof row; c++) /* "(?, ?, ..., ?)" */
        n += (size_t)snprintf(row + n, sizeof row - n, "%s?", c ? ", " : "(");
    snprintf(row + n, sizeof row - n, ")");
    n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES %s", table, row);
    for (int r = 1; r < ROWS_AT_ONCE && n < sizeof sql; r++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, ", %s", row);
    if (n >= sizeof sql)
        return SQLITE_TOOBIG;
    return sqlite3_prepare_v2(db, sql, -1, q, NULL);
}

/* Runs one of them, resetting it (its parameters are all bound again before the next). */
static int
step_rows(sqlite3_stmt *q)
{
    int rc = sqlite3_step(q);

    sqlite3_reset(q);
    return rc == SQLITE_DONE ? 0 : rc;
}

/* The parameters of job j's row in job_result (its result res), from at + 1. */
static void
bind_job(sqlite3_stmt *q, int at, sqlite3_int64 run_id, const struct pfs_sim_inputs *in,
         const struct pfs_run_result *r, const struct pfs_job_result *res, size_t j)
{
    const struct pfs_workload_job *w = pfs_sim_inputs_job(in, j);

    sqlite3_bind_int64(q, at + 1, run_id);
    sqlite3_bind_text(q, at + 2, w->job_id, -1, SQLITE_STATIC);
    /* The curve it ran: on a pool of another GPU, its measured twin. */
    sqlite3_bind_text(q, at + 3, pfs_sim_inputs_curve(in, res->curve)->job_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, at + 4, w->n_gpus);
    sqlite3_bind_text(q, at + 5, pfs_tier_name(w->tier), -1, SQLITE_STATIC);
    bind_real(q, at + 6, w->submit_s);
    bind_real(q, at + 7, w->deadline_s);
    bind_real(q, at + 8, w->tokens);
    bind_real(q, at + 9, res->start_s);
    bind_real(q, at + 10, res->finish_s);
    bind_real(q, at + 11, res->tokens_done);
    bind_real(q, at + 12, res->duration_s);
    if (res->pool >= 0 && (size_t)res->pool < r->n_pools)
        sqlite3_bind_text(q, at + 13, r->pool[res->pool].name, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(q, at + 13);
    sqlite3_bind_int(q, at + 14, res->given_up);
    sqlite3_bind_int(q, at + 15, res->refused);
}

/* The parameters of a time series' row i, from at + 1. */
static void
bind_minute(sqlite3_stmt *q, int at, sqlite3_int64 run_id, const struct pfs_ts_row *row)
{
    sqlite3_bind_int64(q, at + 1, run_id);
    bind_real(q, at + 2, row->t_s);
    bind_real(q, at + 3, row->facility_w);
    bind_real(q, at + 4, row->gpu_w);
    bind_real(q, at + 5, row->budget_w);
    bind_real(q, at + 6, row->throughput);
    sqlite3_bind_int(q, at + 7, row->running_jobs);
    sqlite3_bind_int(q, at + 8, row->paused_jobs);
}

/* Each run's gap recovered from the stored equal and oracle runs of its scenario and seed,
 * with the rule of pfs_gap_recovered: defined where the oracle beats equal by more than
 * PFS_GAP_MIN_FRAC of equal's tokens, else NULL with the reason in gap_note (also without
 * both runs); callers add which runs. */
#define GAP_JOIN                                                                                   \
    "  FROM run r"                                                                                 \
    "  JOIN run re ON re.scenario_id = r.scenario_id AND re.seed = r.seed"                         \
    "    AND re.policy = 'equal'"                                                                  \
    "  JOIN run ro ON ro.scenario_id = r.scenario_id AND ro.seed = r.seed"                         \
    "    AND ro.policy = 'oracle'"                                                                 \
    "  JOIN summary e ON e.run_id = re.id JOIN summary o ON o.run_id = ro.id"                      \
    "  WHERE r.id = summary.run_id"
#define GAP_DEFINED "o.tokens - e.tokens > 1e-3 * e.tokens" /* PFS_GAP_MIN_FRAC */
#define GAP_UPDATE                                                                                 \
    "UPDATE summary SET gap_recovered = (SELECT"                                                   \
    "  CASE WHEN " GAP_DEFINED                                                                     \
    " THEN (summary.tokens - e.tokens) / (o.tokens - e.tokens) END" GAP_JOIN "),"                  \
    " gap_note = CASE WHEN EXISTS (SELECT 1" GAP_JOIN ") THEN (SELECT CASE WHEN " GAP_DEFINED      \
    " THEN NULL ELSE printf('oracle %+.3g%% against equal: no gap to recover',"                    \
    " 100.0 * (o.tokens - e.tokens) / e.tokens) END" GAP_JOIN ")"                                  \
    " ELSE 'needs an equal and an oracle run' END"

int
pfs_store_update_gaps(struct pfs_store *st, const struct pfs_scenario *sc, struct pfs_diag *diag)
{
    char hash[17], *text = canonical(sc, hash, NULL);
    sqlite3_stmt *q = NULL;
    int rc = 0;

    if (!text)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    /* Each run of this scenario and seed against the stored equal and oracle runs of the
     * same scenario and seed (NULL without both; x / 0 is NULL in SQLite). */
    if (sqlite3_prepare_v2(st->db,
                           GAP_UPDATE
                           " WHERE run_id IN (SELECT run.id FROM run JOIN scenario"
                           "  ON scenario.id = run.scenario_id WHERE hash = ? AND seed = ?)",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = fail(st, diag, PFS_EIO, "database");
    } else {
        sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, (sqlite3_int64)sc->seed);
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = fail(st, diag, PFS_EIO, "database");
    }
    sqlite3_finalize(q);
    free(text);
    return rc;
}

int
pfs_store_write_run(struct pfs_store *st, const struct pfs_scenario *sc,
                    const struct pfs_sim_inputs *in, const struct pfs_run_result *r,
                    const struct pfs_timeseries *ts, const struct pfs_job_results *jobs,
                    struct pfs_diag *diag)
{
    char hash[17], *inputs, *text = canonical(sc, hash, &inputs);
    sqlite3_stmt *q = NULL;
    sqlite3_int64 scenario_id, run_id;
    int rc;

    if (!text)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    /* Each multi-row insert keeps the pages it changes in a statement journal, so that a
     * failed row undoes its statement alone. SQLite keeps that journal in memory up to 64 kB
     * and then in a temporary file, for the rest of the transaction: storing the cap-4k
     * year's four policies wrote it a million times, of the 1.59 M writes the store made
     * (docs/benchmarks.md, "Storing a large run"). A statement's journal is a few pages, so
     * it stays in memory for the run's transaction (the setting is taken when the
     * transaction begins); other work, the merge's sorts, keeps SQLite's temporary files. */
    if ((rc = exec(st, "PRAGMA temp_store = MEMORY;", diag)))
        goto out_text;
    if ((rc = exec(st, "BEGIN IMMEDIATE;", diag)))
        goto out_store;
#define PREP(sql)                                                                                  \
    do {                                                                                           \
        sqlite3_finalize(q);                                                                       \
        q = NULL;                                                                                  \
        if (sqlite3_prepare_v2(st->db, (sql), -1, &q, NULL) != SQLITE_OK) {                        \
            rc = fail(st, diag, PFS_EIO, "database");                                              \
            goto rollback;                                                                         \
        }                                                                                          \
    } while (0)
#define STEP()                                                                                     \
    do {                                                                                           \
        if (step(q)) {                                                                             \
            rc = fail(st, diag, PFS_EIO, "database");                                              \
            goto rollback;                                                                         \
        }                                                                                          \
    } while (0)
    PREP("INSERT OR IGNORE INTO scenario (hash, name, config, inputs) VALUES (?, ?, ?, ?)");
    sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, sc->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, text, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 4, inputs, -1, SQLITE_STATIC);
    STEP();
    PREP("SELECT id FROM scenario WHERE hash = ?");
    sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = fail(st, diag, PFS_EIO, "database");
        goto rollback;
    }
    scenario_id = sqlite3_column_int64(q, 0);
    /* The scenario's curves and the PFI behind them, once per scenario. */
    PREP("SELECT count(*) FROM curve WHERE scenario_id = ?");
    sqlite3_bind_int64(q, 1, scenario_id);
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = fail(st, diag, PFS_EIO, "database");
        goto rollback;
    }
    if (sqlite3_column_int64(q, 0) == 0) {
        sqlite3_stmt *pt = NULL;

        PREP("INSERT INTO curve VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
        if (sqlite3_prepare_v2(st->db, "INSERT INTO curve_point VALUES (?, ?, ?, ?, ?)", -1, &pt,
                               NULL) != SQLITE_OK) {
            rc = fail(st, diag, PFS_EIO, "database");
            goto rollback;
        }
        for (size_t k = 0; k < pfs_sim_inputs_n_curves(in) && rc == 0; k++) {
            const struct pfs_job_curve *c = pfs_sim_inputs_curve(in, k);
            const struct pfs_corpus_job *cj = pfs_sim_inputs_curve_job(in, k);

            sqlite3_bind_int64(q, 1, scenario_id);
            sqlite3_bind_text(q, 2, c->job_id, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, 3, c->gpu, -1, SQLITE_STATIC);
            sqlite3_bind_int(q, 4, c->n_gpus);
            sqlite3_bind_text(q, 5, c->unit, -1, SQLITE_STATIC);
            if (cj && cj->family[0])
                sqlite3_bind_text(q, 6, cj->family, -1, SQLITE_STATIC);
            if (cj && cj->phase[0])
                sqlite3_bind_text(q, 7, cj->phase, -1, SQLITE_STATIC);
            bind_real(q, 8, cj ? cj->pfi[2] : (double)NAN); /* pfs_cut(2) = 30% */
            bind_real(q, 9, pfs_sim_inputs_curve_pfi(in, k, 2));
            if (step(q))
                rc = fail(st, diag, PFS_EIO, "database");
            for (size_t i = 0; i < c->n_points && rc == 0; i++) {
                sqlite3_bind_int64(pt, 1, scenario_id);
                sqlite3_bind_text(pt, 2, c->job_id, -1, SQLITE_STATIC);
                bind_real(pt, 3, c->cap_w[i]);
                bind_real(pt, 4, c->throughput[i]);
                bind_real(pt, 5, c->power_w[i]);
                if (step(pt))
                    rc = fail(st, diag, PFS_EIO, "database");
            }
        }
        sqlite3_finalize(pt);
        if (rc)
            goto rollback;
    }
    /* The same scenario, policy and seed again: its old rows go (cascading). */
    PREP("DELETE FROM run WHERE scenario_id = ? AND policy = ? AND seed = ?");
    sqlite3_bind_int64(q, 1, scenario_id);
    sqlite3_bind_text(q, 2, r->policy, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 3, (sqlite3_int64)sc->seed);
    STEP();
    PREP("INSERT INTO run (scenario_id, policy, seed, version) VALUES (?, ?, ?, ?)");
    sqlite3_bind_int64(q, 1, scenario_id);
    sqlite3_bind_text(q, 2, r->policy, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 3, (sqlite3_int64)sc->seed);
    sqlite3_bind_text(q, 4, PFS_VERSION, -1, SQLITE_STATIC);
    STEP();
    run_id = sqlite3_last_insert_rowid(st->db);
    PREP("INSERT INTO summary (run_id, " SUMMARY_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
         "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
         "?, ?, ?, ?, ?, ?, ?, ?)");
    {
        /* In SUMMARY_COLS order; counts as integers, gap_note as text (NULL when empty). */
        const double v[N_SUMMARY_COLS] = {r->tokens,
                                          r->mean_tps,
                                          r->energy_j,
                                          r->tokens_per_j,
                                          r->dr_minutes_over,
                                          r->dr_worst_excess_w,
                                          r->dr_energy_over_j,
                                          (double)r->deadline_misses,
                                          (double)r->tier_violations,
                                          (double)r->jobs_submitted,
                                          (double)r->jobs_started,
                                          (double)r->jobs_finished,
                                          (double)r->events,
                                          r->gap_recovered,
                                          NAN, /* gap_note */
                                          r->cap_w,
                                          r->peak_facility_w,
                                          r->p99_facility_w,
                                          r->cap_binding_h,
                                          (double)r->dr_events,
                                          (double)r->dr_events_met,
                                          (double)r->dr_events_missed,
                                          (double)r->dr_events_uncappable,
                                          r->dr_floor_excess_w,
                                          r->dr_energy_shed_j,
                                          r->nodr_tokens,
                                          r->dr_cost_tokens,
                                          r->dr_cost_frac,
                                          r->dr_cost_per_event,
                                          r->dr_cost_per_mwh,
                                          r->job_loss_mean,
                                          r->job_loss_p50,
                                          r->job_loss_p95,
                                          r->job_loss_max,
                                          (double)r->deadlines_given_up,
                                          r->nodr_deadline_misses,
                                          (double)r->jobs_refused,
                                          r->cap_minutes_over,
                                          r->cap_worst_excess_w,
                                          r->cap_mean_excess_w,
                                          r->cap_energy_over_j,
                                          (double)r->jobs_held_back,
                                          r->held_back_wait_h,
                                          (double)r->jobs_paused_hold,
                                          (double)r->hold_pauses};
        static const unsigned char integer[N_SUMMARY_COLS] = {
            [7] = 1,  [8] = 1,  [9] = 1,  [10] = 1, [11] = 1, [12] = 1, [19] = 1,
            [20] = 1, [21] = 1, [22] = 1, [41] = 1, [43] = 1, [44] = 1};

        sqlite3_bind_int64(q, 1, run_id);
        for (int i = 0; i < N_SUMMARY_COLS; i++) {
            if (i == 14) {
                if (r->gap_note[0])
                    sqlite3_bind_text(q, i + 2, r->gap_note, -1, SQLITE_STATIC);
            } else if (integer[i]) {
                sqlite3_bind_int64(q, i + 2, (sqlite3_int64)v[i]);
            } else {
                bind_real(q, i + 2, v[i]);
            }
        }
    }
    STEP();
    PREP("INSERT INTO pool_result VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (size_t p = 0; p < r->n_pools; p++) {
        const struct pfs_pool_result *pr = &r->pool[p];

        sqlite3_bind_int64(q, 1, run_id);
        sqlite3_bind_text(q, 2, pr->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, pr->gpu, -1, SQLITE_STATIC);
        bind_real(q, 4, pr->tokens);
        bind_real(q, 5, pr->energy_j);
        bind_real(q, 6, pr->busy_gpu_h);
        sqlite3_bind_int64(q, 7, (sqlite3_int64)pr->jobs_started);
        sqlite3_bind_int64(q, 8, (sqlite3_int64)pr->jobs_finished);
        STEP();
    }
    if (r->n_tree > 0) { /* the power tree's nodes, in its order (NULL: no limit) */
        PREP("INSERT INTO tree_result VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (size_t v = 0; v < r->n_tree; v++) {
            const struct pfs_node_result *nr = &r->tree[v];

            sqlite3_bind_int64(q, 1, run_id);
            sqlite3_bind_text(q, 2, nr->name, -1, SQLITE_STATIC);
            sqlite3_bind_int64(q, 3, nr->level);
            bind_real(q, 4, isfinite(nr->limit_w) ? nr->limit_w : (double)NAN);
            bind_real(q, 5, nr->nameplate_w);
            bind_real(q, 6, nr->peak_w);
            bind_real(q, 7, nr->p99_w);
            bind_real(q, 8, nr->minutes_at);
            bind_real(q, 9, nr->minutes_over);
            bind_real(q, 10, nr->worst_excess_w);
            bind_real(q, 11, nr->energy_j);
            STEP();
        }
    }
    if (jobs) { /* in job order, read ROWS_AT_ONCE at a time: that many to a statement */
        struct pfs_job_result rows[ROWS_AT_ONCE];
        size_t j = 0, got;
        int err = 0;

        if (jobs->n >= ROWS_AT_ONCE && prepare_rows(st->db, "job_result", 15, &st->job_rows)) {
            rc = fail(st, diag, PFS_EIO, "database");
            goto rollback;
        }
        PREP("INSERT INTO job_result VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (; (got = pfs_job_results_read(jobs, j, rows, ROWS_AT_ONCE, &err)) > 0; j += got) {
            if (pfs_interrupted()) { /* (a signal: this run's rows go, the earlier runs stay) */
                rc = pfs__diag_set(diag, PFS_EINTR, NULL, 0, 0, NULL, "interrupted");
                goto rollback;
            }
            if (got == ROWS_AT_ONCE) {
                for (int k = 0; k < ROWS_AT_ONCE; k++)
                    bind_job(st->job_rows, 15 * k, run_id, in, r, &rows[k], j + (size_t)k);
                if (step_rows(st->job_rows)) {
                    rc = fail(st, diag, PFS_EIO, "database");
                    goto rollback;
                }
                continue;
            }
            for (size_t k = 0; k < got; k++) {
                bind_job(q, 0, run_id, in, r, &rows[k], j + k);
                STEP();
            }
        }
        if (err) {
            rc = pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL,
                               "the job results' temporary file: %s", strerror(errno));
            goto rollback;
        }
    }
    if (ts) { /* the same, minute by minute, read ROWS_AT_ONCE at a time */
        struct pfs_ts_row rows[ROWS_AT_ONCE];
        size_t i = 0, got;
        int err = 0;

        if (ts->n >= ROWS_AT_ONCE && prepare_rows(st->db, "timeseries", 8, &st->minute_rows)) {
            rc = fail(st, diag, PFS_EIO, "database");
            goto rollback;
        }
        PREP("INSERT INTO timeseries VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (; (got = pfs_timeseries_read(ts, i, rows, ROWS_AT_ONCE, &err)) > 0; i += got) {
            if (pfs_interrupted()) {
                rc = pfs__diag_set(diag, PFS_EINTR, NULL, 0, 0, NULL, "interrupted");
                goto rollback;
            }
            if (got == ROWS_AT_ONCE) {
                for (int k = 0; k < ROWS_AT_ONCE; k++)
                    bind_minute(st->minute_rows, 8 * k, run_id, &rows[k]);
                if (step_rows(st->minute_rows)) {
                    rc = fail(st, diag, PFS_EIO, "database");
                    goto rollback;
                }
                continue;
            }
            for (size_t k = 0; k < got; k++) {
                bind_minute(q, 0, run_id, &rows[k]);
                STEP();
            }
        }
        if (err) {
            rc = pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL,
                               "the time series' temporary file: %s", strerror(errno));
            goto rollback;
        }
    }
#undef PREP
#undef STEP
    sqlite3_finalize(q);
    q = NULL;
    if ((rc = exec(st, "COMMIT;", diag)))
        goto rollback;
    /* (the run is stored: were this to fail, only the merge's sorts would stay in memory) */
    (void)sqlite3_exec(st->db, "PRAGMA temp_store = DEFAULT;", NULL, NULL, NULL);
    free(text);
    free(inputs);
    return 0;
rollback:
    sqlite3_finalize(q);
    sqlite3_exec(st->db, "ROLLBACK;", NULL, NULL, NULL);
out_store:
    sqlite3_exec(st->db, "PRAGMA temp_store = DEFAULT;", NULL, NULL, NULL);
out_text:
    free(text);
    free(inputs);
    return rc;
}

int
pfs_store_merge(struct pfs_store *st, const char *path, struct pfs_diag *diag)
{
    /* The shard's ids are its own: scenarios map by hash, runs by (scenario, policy, seed). */
    static const char copy[] =
        "INSERT OR IGNORE INTO main.scenario (hash, name, config, inputs)"
        "  SELECT hash, name, config, inputs FROM shard.scenario ORDER BY id;"
        "CREATE TEMP TABLE smap AS SELECT s.id AS old, m.id AS new"
        "  FROM shard.scenario s JOIN main.scenario m USING (hash);"
        "INSERT INTO main.curve SELECT smap.new, curve_id, gpu, n_gpus, unit, family, phase,"
        "  pfi_30, pfi_30_given FROM shard.curve JOIN smap ON smap.old = curve.scenario_id"
        "  WHERE NOT EXISTS (SELECT 1 FROM main.curve c WHERE c.scenario_id = smap.new)"
        "  ORDER BY smap.new, curve_id;"
        "INSERT OR IGNORE INTO main.curve_point SELECT smap.new, curve_id, cap_w, throughput,"
        "  power_w FROM shard.curve_point JOIN smap ON smap.old = curve_point.scenario_id"
        "  ORDER BY smap.new, curve_id, cap_w;"
        "DELETE FROM main.run WHERE EXISTS (SELECT 1 FROM shard.run r JOIN smap"
        "  ON smap.old = r.scenario_id WHERE smap.new = main.run.scenario_id"
        "  AND r.policy = main.run.policy AND r.seed = main.run.seed);"
        "INSERT INTO main.run (scenario_id, policy, seed, version)"
        "  SELECT smap.new, policy, seed, version FROM shard.run"
        "  JOIN smap ON smap.old = run.scenario_id ORDER BY run.id;"
        "CREATE TEMP TABLE rmap AS SELECT r.id AS old, m.id AS new FROM shard.run r"
        "  JOIN smap ON smap.old = r.scenario_id JOIN main.run m ON m.scenario_id = smap.new"
        "  AND m.policy = r.policy AND m.seed = r.seed;"
        "INSERT INTO main.summary SELECT rmap.new, " SUMMARY_COLS
        "  FROM shard.summary JOIN rmap ON rmap.old = summary.run_id ORDER BY rmap.new;"
        "INSERT INTO main.pool_result SELECT rmap.new, pool, gpu, tokens, energy_j, busy_gpu_h,"
        "  jobs_started, jobs_finished FROM shard.pool_result"
        "  JOIN rmap ON rmap.old = pool_result.run_id ORDER BY rmap.new, pool_result.rowid;"
        "INSERT INTO main.tree_result SELECT rmap.new, node, level, limit_w, nameplate_w,"
        "  peak_w, p99_w, minutes_at, minutes_over, worst_excess_w, energy_j"
        "  FROM shard.tree_result JOIN rmap ON rmap.old = tree_result.run_id"
        "  ORDER BY rmap.new, tree_result.rowid;"
        "INSERT INTO main.job_result SELECT rmap.new, job_id, curve_id, n_gpus, tier,"
        "  submit_s, deadline_s, tokens, start_s, finish_s, tokens_done, duration_s, pool,"
        "  given_up, refused"
        "  FROM shard.job_result JOIN rmap ON rmap.old = job_result.run_id"
        "  ORDER BY rmap.new, job_result.rowid;"
        "INSERT INTO main.timeseries SELECT rmap.new, t_s, facility_w, gpu_w, budget_w,"
        "  throughput, running_jobs, paused_jobs FROM shard.timeseries"
        "  JOIN rmap ON rmap.old = timeseries.run_id ORDER BY rmap.new, t_s;"
        "DROP TABLE temp.smap; DROP TABLE temp.rmap;";
    static const char gaps[] = GAP_UPDATE ";";
    struct pfs_store *shard = NULL;
    sqlite3_stmt *q = NULL;
    int rc;

    /* Its identity and schema version first, read-only: a wrong file is left untouched. */
    if ((rc = pfs_store_open_read(path, &shard, diag)) ||
        (rc = pfs__store_check_table(shard->db, path, "timeseries", diag))) {
        pfs_store_close(shard);
        return rc;
    }
    pfs_store_close(shard);
    if (sqlite3_prepare_v2(st->db, "ATTACH DATABASE ? AS shard", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_bind_text(q, 1, path, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_DONE) {
        sqlite3_finalize(q);
        return fail(st, diag, PFS_EIO, "cannot attach the shard database");
    }
    sqlite3_finalize(q);
    if ((rc = exec(st, "BEGIN IMMEDIATE;", diag)) == 0) {
        if (sqlite3_exec(st->db, copy, NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(st->db, gaps, NULL, NULL, NULL) != SQLITE_OK) {
            int e = sqlite3_errcode(st->db) & 0xff;

            /* A shard that SQLite finds malformed, or whose rows break the schema, is bad
             * input (exit 3); the rest is the disk's (exit 4). */
            rc =
                pfs__diag_set(diag,
                              e == SQLITE_CORRUPT || e == SQLITE_NOTADB || e == SQLITE_CONSTRAINT ||
                                      e == SQLITE_MISMATCH || e == SQLITE_ERROR
                                  ? PFS_EINVAL
                                  : PFS_EIO,
                              path, 0, 0, NULL, "merging: %s", sqlite3_errmsg(st->db));
            sqlite3_exec(st->db, "ROLLBACK;", NULL, NULL, NULL);
        } else {
            rc = exec(st, "COMMIT;", diag);
        }
    }
    sqlite3_exec(st->db, "DETACH DATABASE shard;", NULL, NULL, NULL);
    return rc;
}
