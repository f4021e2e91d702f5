/*
 * sim/internal.h - symbols shared between the library's files, not part of the public API.
 *
 * Everything here is named pfs__<module>_<verb>. The CSV reader keeps the line it is on and
 * the byte column of every field so that every error can point at the input the way a
 * compiler does (STYLE.md, "Errors").
 */
#ifndef PFISIM_INTERNAL_H
#define PFISIM_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "pfisim.h"

#if defined(__GNUC__)
#define PFS__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PFS__PRINTF(a, b)
#endif

/* sim/diag.c: records the first error into diag (which may be NULL) and returns code, so
 * that `return pfs__diag_set(...)` reports and fails in one statement. file may be NULL;
 * line/column 0 mean none; field may be NULL. */
int pfs__diag_set(struct pfs_diag *diag, int code, const char *file, long line, long column,
                  const char *field, const char *fmt, ...) PFS__PRINTF(7, 8);

/* An out-of-memory error that names no file yet (code PFS_ENOMEM, diag's file empty) made to
 * name file, line and what was being done ("out of memory " what); any other code or diag
 * left as it is. Returns code. */
int pfs__diag_oom(struct pfs_diag *diag, int code, const char *file, long line, const char *what);

/* models/dvfs.c: the normalised clock x = f / f_max under cap_w (as pfs_dvfs_clock_mhz), and
 * the per-GPU draw at x in [0, 1] (as pfs_dvfs_power_w, without the clamp to [f_min, f_max]). */
double pfs__dvfs_x(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w);
double pfs__dvfs_p(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double x);
/* pfs__dvfs_x by Newton's method from guess (a neighbouring chip's clock) where the draw is
 * the cubic: the same root to 1e-15, without the cubic's closed form. */
double pfs__dvfs_x_near(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w,
                        double guess);

/* models/fit.c: the shared fit's trust-region step by its arrow solver, for a test against the
 * dense normal equations: x = -(J'J + mu D^2)^-1 J'f for a Jacobian J (n x p, p = base + 2 x
 * n_jobs, base 0 or 4) whose job k's two columns are zero outside its rows row[k] ..
 * row[k + 1] - 1. Returns 0 or a GSL error. */
int pfs__fit_arrow_step(const double *J, const double *f, const double *diag, double mu,
                        size_t base, size_t n_jobs, const size_t *row, double *x);

/* Copies the offending input line into diag->text, if diag holds no text yet. */
void pfs__diag_text(struct pfs_diag *diag, const char *text);

/* Bounded copy that always terminates dst (dst_size > 0). Returns false when truncated. */
bool pfs__strlcpy(char *dst, const char *src, size_t dst_size);

/* FNV-1a, 64 bits: h (PFS__FNV_OFFSET to begin) continued over the n bytes at s, or over
 * the string s (_str). The hash of the results' keys, of input files, of the readers' and
 * the sweep's points, of a job's and a profile's random streams: one function, where there
 * were six loops. */
#define PFS__FNV_OFFSET 1469598103934665603ULL
static inline uint64_t
pfs__fnv1a(uint64_t h, const void *s, size_t n)
{
    const unsigned char *p = s;

    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static inline uint64_t
pfs__fnv1a_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* pfs__grow's growing: for it alone. */
void *pfs__grow_to(void *v, size_t *cap, size_t n, size_t elem, size_t first);

/* Makes room for element n of the array v of *cap elements of elem bytes, doubling the
 * capacity (first when empty) until n fits. Returns the array, moved or not, or NULL when out of
 * memory (v is then still valid and unchanged). Inline where there is room: the engine asks at
 * every entry of a decision (the call was 2.7% of equal's 28-day run with 20 events). */
static inline void *
pfs__grow(void *v, size_t *cap, size_t n, size_t elem, size_t first)
{
    return n < *cap ? v : pfs__grow_to(v, cap, n, elem, first);
}

/* Asks for transparent huge pages on an allocation of at least 4 MB, before it is first
 * written: the per-job arrays of a year on 10,000 GPUs and more, the 4-byte ones included
 * (11 MB at 2.8 M jobs; docs/benchmarks.md). In a virtual machine every 4 kB page's first
 * touch is a costly fault, and the arrays are read at random (a TLB miss each). Advice
 * only; pfs__grow gives it to what it grows. */
void pfs__huge(void *p, size_t bytes);
/* malloc's and calloc's memory for an array written whole (the workload's jobs, the queue's
 * index, the inputs' maps per job, the corpus's curves): from 1.5 MB on a 2 MB boundary and
 * advised huge, so that all of it can be huge pages, where advice after malloc reaches only
 * the 2 MB-aligned middle (the year's set-up: 10,671 faults, 2,192 with it); from 64 kB
 * below that, its pages faulted in at once (pfs__populate). Freed (and grown) as malloc's.
 * NULL when out of memory or n * elem overflows. */
void *pfs__huge_malloc(size_t bytes);
void *pfs__huge_calloc(size_t n, size_t elem);

/* n zeroed elements of elem bytes (calloc's contract) whose pages are touched only where
 * they are written: from a mapping of their own where the array is 16 kB or more, since
 * calloc clears by hand what it takes from memory it reused, touching every page (the
 * engine's arrays per running slot are sized by the GPUs and mostly never reached: 77% of
 * a 13-day cap-4k run's page faults, at some 11 us each on this machine; docs/benchmarks.md).
 * A mapping freed is kept for the next array of the same size and handed out again with
 * only its pages in memory cleared: a run's arrays are the sizes of the run's before it,
 * whose pages are already there. From 4 MB, on huge pages. NULL when out of memory or n *
 * elem overflows. Freed with pfs__lazy_free only (NULL is nothing). */
void *pfs__lazy_calloc(size_t n, size_t elem);
void pfs__lazy_free(void *p);
/* Whether pfs__lazy_calloc puts an array of `bytes` on pages advised huge (a read of one
 * never touched maps the kernel's huge zero page: one fault more in 2 MB, not one a page). */
bool pfs__lazy_huge(size_t bytes);

/* Faults in [p, p + bytes) on a thread of its own while the caller goes on writing it (the
 * kernel zeroes a page at its first touch: 44% of making a year of 2.8 M Poisson jobs, on
 * one core while the other idled). Contents are not touched. pfs__prefault_stop waits for
 * it, and must come before p is freed or moved. Where the kernel cannot (no
 * MADV_POPULATE_WRITE, no thread) nothing happens and the caller's writes fault as
 * before. */
struct pfs__prefault {
    pthread_t th;
    bool on;
    char *p;
    size_t bytes;
    int stop; /* (atomic) */
};
void pfs__prefault_start(struct pfs__prefault *pf, void *p, size_t bytes);
/* Faults in the whole pages of [p, p + bytes) at once (MADV_POPULATE_WRITE, contents
 * untouched), for an array about to be written whole; nothing where the kernel cannot. */
void pfs__populate(void *p, size_t bytes);
void pfs__prefault_stop(struct pfs__prefault *pf);

/* Makes the directories above the file path (mkdir -p of its dirname). Returns 0 or -1
 * (errno set). */
int pfs__mkdir_parents(const char *path);

/* sim/strindex.c: record numbers by string key (the records keep the keys; key_of(base, i)
 * is record i's). find: the record with key, SIZE_MAX if none; add: record rec (its key not
 * yet in the index), 0 or PFS_ENOMEM. */
struct pfs__strindex {
    size_t *slot; /* record + 1, 0: empty */
    size_t cap, n;
};
typedef const char *(*pfs__key_fn)(const void *base, size_t i);
size_t pfs__strindex_find(const struct pfs__strindex *x, const char *key, pfs__key_fn key_of,
                          const void *base);
int pfs__strindex_add(struct pfs__strindex *x, size_t rec, pfs__key_fn key_of, const void *base);
void pfs__strindex_fini(struct pfs__strindex *x);

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm); give it
 * only dates pfs__civil_date accepts. */
long pfs__days_from_civil(long y, long m, long d);
/* Whether y-m-d is a real date of the years 1-9999 (no 2025-02-31, no year 10^18). */
bool pfs__civil_date(long y, long m, long d);

/* Parses a whole string as a finite double / an integer, nothing else allowed. */
bool pfs__parse_double(const char *s, double *out);
/* strtod(s, NULL) of a string that is a number whole, to the bit, faster for the usual
 * decimals (at most 19 significant digits, 10^+-27). */
double pfs__strtod(const char *s);
bool pfs__parse_long(const char *s, long *out);

/* qsort's comparison of two doubles, ascending (NaN compares equal to everything: sort
 * only finite values). */
int pfs__cmp_double(const void *a, const void *b);

/* Sorts v ascending, to the same bytes as qsort with pfs__cmp_double, in linear time where
 * every value is a non-negative number other than -0 (their bits then order as they do:
 * a radix sort); otherwise, or for short arrays, or out of memory, by qsort. A run's
 * minutes and its jobs' losses are a million values each. */
void pfs__sort_doubles(double *v, size_t n);

/* traces/csv.c: a strict, line-oriented CSV reader (RFC 4180 quoting, no newlines inside
 * quotes, CRLF accepted). Fields point into the reader's buffer and live until the next
 * call of pfs__csv_next. */
struct pfs__csv {
    FILE *fp;
    char path[256];
    char *buf; /* the current line, unquoted in place */
    size_t buf_cap;
    char *raw; /* a copy of the current line as read, for error display */
    size_t raw_cap;
    long line; /* 1-based number of the current line */
    size_t n_fields;
    char **fields;
    long *columns; /* 1-based byte column where each field starts */
    size_t fields_cap;
    struct pfs_diag *diag; /* where errors go; set by pfs__csv_open */
};

/* The most GPUs one job may ask for, in every reader (curves, jobs, traces, workloads). */
#define PFS__MAX_JOB_GPUS 1000000

/* A curve point's power may exceed its cap by at most this factor (traces/curves.c). */
#define PFS__POWER_OVER_CAP 1.5

/* A quantity written with its unit ("5 MW", "4 h", "30 min", "25%") for the setting named
 * setting (its last path component), whose name says its unit (_w watts, _h hours, _min,
 * _s, _days; cut, load, margin and tier shares fractions), into *out in that unit. False
 * with the reason in why when the unit does not suit the setting or the text is no
 * quantity. */
bool pfs__parse_quantity(const char *text, const char *setting, double *out, char *why,
                         size_t size);

/* The name in names[0..n) nearest name (a prefix of it, or one edit away, two for names of
 * six bytes or more), for a "did you mean" after an unknown name; NULL when none is near. */
const char *pfs__nearest(const char *name, const char *const *names, size_t n);

/* The GPU profile name or the policy name nearest name (pfs__nearest over the profiles or
 * the registry), or NULL. */
const char *pfs__gpu_nearest(const char *name);
const char *pfs__policy_nearest(const char *name);
/* The first of names[0..n) that an earlier one repeats, or NULL: a policy named twice would
 * run twice on the same workload, and its second run's rows would replace the first's in a
 * results database (the run's key is its scenario, policy and seed). */
const char *pfs__policy_repeated(const char *const *names, size_t n);

/* Whether the library at path (any path that names it) was loaded by pfs_policy_load. */
bool pfs__policy_lib_loaded(const char *path);

/* models/curve.c: a curve set's job ids for its index (pfs__strindex), and job job_id's number,
 * SIZE_MAX if none (through the index while it covers every job). */
const char *pfs__curveset_key(const void *base, size_t i);
size_t pfs__curveset_find_at(const struct pfs_curveset *cs, const char *job_id);

/* policies/registry.c: policies added at run time, after the built-in ones. */
#define PFS__MAX_ADDED 64
/* 0 when name is a valid policy name ([a-z0-9-], 1 to 31) not taken by any policy; else
 * PFS_EINVAL, diag naming from (the library or program adding it) and who has the name. */
int pfs__policy_name_check(const char *name, const char *from, struct pfs_diag *diag);
/* Adds the n descriptors (which must outlive the process's use of them), all or none: each
 * named validly and uniquely, with an allocate function and a summary. Returns 0 or
 * PFS_EINVAL. */
int pfs__policy_add(const struct pfs_policy_ops *const *ops, size_t n, const char *from,
                    struct pfs_diag *diag);
/* pfs_policy_allocate without its check of the answer: the policy's own decisions, right or
 * wrong (for pfs_policy_conformance, which reports what is wrong). */
int pfs__policy_run(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag);
/* The dispatcher's check of one answer d for job j (a bug of the policy if it fails): a cap
 * within j's limits, a pause in [0, 1], no pause or resize from a policy that may not.
 * Returns 0 or PFS_ENUMERIC, naming the policy and the job. */
int pfs__policy_answer_ok(const struct pfs_policy_ops *ops, const struct pfs_alloc_job *j,
                          const struct pfs_alloc_decision *d, struct pfs_diag *diag);
/* pfs_policy_allocate that also gives the power its answer commits (pfs_alloc_power_w summed
 * in job order), which its check adds up anyway: the simulator's decisions read it. */
int pfs__policy_decide(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
                       struct pfs_alloc_decision *out, double *committed, struct pfs_diag *diag);
/* "; did you mean 'NEAR'?" written into buf, or "" when near is NULL: the hint after an
 * unknown name. */
const char *pfs__did_you_mean(const char *near, char *buf, size_t size);

/* A relative input path as a scenario, sweep or option names it, found (docs/scenarios.md):
 * beside the file that names it (base_dir, NULL for none), else in the current folder, else
 * among the shipped files (pfs_share_dir). An absolute path, "", or import:... is kept.
 * When it is nowhere, out is the first place looked. Returns 0, or -1 when out is too small. */
int pfs__resolve_path(const char *base_dir, const char *path, char *out, size_t size);

/* sim/inputs.c: the files the scenario's simulation reads, one per line as "HASH PATH"
 * (FNV-1a of the bytes; "missing PATH" for one not there), malloc'd; NULL without memory. */
char *pfs__scenario_inputs(const struct pfs_scenario *sc);

/* The data-directory file behind a trace source (kalos, itp:clusterNN, ...) into path;
 * false for an unknown source. pfs__trace_read_file reads source's kind of file from any
 * path (pfs_trace_read: from its data-directory file). */
bool pfs__trace_path(const char *source, char *path, size_t size);
int pfs__trace_read_file(const char *source, const char *path, struct pfs_trace **out,
                         struct pfs_diag *diag);

/* Writers' halves of the reader: a text field quoted where the reader needs it (a comma,
 * a quote, a leading '#'; no line ends: the reader is line-based, so callers refuse them),
 * and a number in the fewest digits that read back to exactly it. */
void pfs__csv_put_text(FILE *fp, const char *s);
void pfs__csv_put_num(FILE *fp, double v);

/* Opens path. Returns 0 or PFS_EIO. */
int pfs__csv_open(struct pfs__csv *csv, const char *path, struct pfs_diag *diag);
/* Reads the next non-blank line. Returns 1 with a row, 0 at the end, or PFS_EINVAL
 * (unterminated quote), PFS_EIO, PFS_ENOMEM. */
int pfs__csv_next(struct pfs__csv *csv);
void pfs__csv_close(struct pfs__csv *csv);

/* Reads the header row and finds each of the n names in it: idx[i] is its field index.
 * Fails on an empty file, a missing column or a duplicated one. Returns 0 or PFS_EINVAL. */
int pfs__csv_header(struct pfs__csv *csv, const char *const *names, size_t n, size_t *idx);

/* Field idx of the current row, checked: present (else error naming the field), a finite
 * number / an integer. name is the column's name for messages. Return 0 or PFS_EINVAL. */
int pfs__csv_str(struct pfs__csv *csv, size_t idx, const char *name, const char **out);
int pfs__csv_double(struct pfs__csv *csv, size_t idx, const char *name, double *out);
int pfs__csv_long(struct pfs__csv *csv, size_t idx, const char *name, long *out);

/* Records an error at field idx of the current row: file:line:column, field name, the
 * line's text. Returns code. */
int pfs__csv_error(struct pfs__csv *csv, size_t idx, const char *name, int code, const char *fmt,
                   ...) PFS__PRINTF(5, 6);

/* The profiles of configs/gpus/ and arrival models of configs/arrivals/, embedded at build
 * time (build/gen/gpus_embed.c). */
struct pfs__embedded_file {
    const char *name; /* file name without .cfg */
    const char *text; /* its contents */
};
extern const struct pfs__embedded_file pfs__gpu_embedded[];
extern const struct pfs__embedded_file pfs__arrivals_embedded[];

/* sim/cfgio.c: number arrays in pfisim's own libconfig files. The writer uses %.17e (exact
 * round trip); the reader wants between min_n and max_n numbers, names the setting as
 * where.name in its message, says "(one PER)" when a fixed count is wrong, and writes the
 * count to *got (may be NULL). Returns 0 or PFS_EINVAL. */
struct config_setting_t;
void pfs__cfg_write_floats(FILE *fp, const char *indent, const char *name, const double *v,
                           size_t n);
int pfs__cfg_read_floats(struct config_setting_t *parent, const char *name, const char *where,
                         double *dst, size_t min_n, size_t max_n, const char *per, size_t *got,
                         const char *file, struct pfs_diag *diag);

/* sim/scenario.c: reads the scenario group root (NULL: missing) of a libconfig tree read
 * from file; pfs_scenario_load is this on a file. Used by sweeps, which override settings in
 * the tree before reading it. */
struct config_t;
int pfs__scenario_read(const struct config_setting_t *root, const char *file,
                       struct pfs_scenario *sc, struct pfs_diag *diag);
/* Reads a libconfig file into cfg (initialised either way; the caller destroys it). Returns
 * 0, PFS_EIO or PFS_EINVAL (file:line: libconfig's message). */
int pfs__config_read(struct config_t *cfg, const char *path, struct pfs_diag *diag);

/* Rejects a member of the libconfig group g not in names (NULL-terminated): PFS_EINVAL,
 * "prefix.name: unknown setting" at its line of file. Returns 0 or PFS_EINVAL. */
struct config_setting_t;
int pfs__config_only(const struct config_setting_t *g, const char *prefix, const char *const *names,
                     const char *file, struct pfs_diag *diag);

/* The value of the present number setting s (int or float) at path into *out, when within
 * [lo, hi]; else PFS_EINVAL "path: expected a number" or "path: V is outside [lo, hi]" at
 * its line of file. */
int pfs__config_number(const struct config_setting_t *s, const char *path, double lo, double hi,
                       double *out, const char *file, struct pfs_diag *diag);

/* traces/synth.c: pfs_synth that also returns each job's hidden DVFS parameters and its
 * GPUs' own profile (unit variation) in truth[] and truth_gpu[] (caller-allocated, n_jobs
 * each; either may be NULL), for tests and validation. */
int pfs__synth_truth(const struct pfs_synth_options *o, struct pfs_jobset **jobs_out,
                     struct pfs_curveset **curves_out, struct pfs_dvfs_job *truth,
                     struct pfs_gpu *truth_gpu, struct pfs_diag *diag);

/* plots/chart.c: a PDF surface writing to fp (an open output, sim/outfile.c) through a
 * checked stream, dated SOURCE_DATE_EPOCH or the epoch (reproducible bytes). A failed write
 * (a full disk at the last flush included: issue 17) shows in the surface's status after
 * cairo_surface_finish, and in the output's close. pfs__cairo_write is the stream callback,
 * for the other vector and image formats. */
struct _cairo_surface;
struct _cairo_surface *pfs__pdf_surface(FILE *fp, double w, double h);
int pfs__cairo_write(void *closure, const unsigned char *data, unsigned int length);

/* sim/outfile.c: an output file, written whole or not at all (docs/reliability.md). */
struct pfs__out {
    FILE *fp;          /* write here */
    bool is_stdout;    /* "-" */
    char path[1024];   /* as given, for messages */
    char target[1024]; /* the regular file replaced (a symbolic link's target) */
    char tmp[1100];    /* the temporary file beside target, "" when written in place */
};

/* An empty file beside target for writing it whole, named .BASE.PID-N.tmp (the process and a
 * counter: no other writer's), made with O_EXCL into tmp: its descriptor, or -1 with errno
 * (ENAMETOOLONG where the name does not fit in size). */
int pfs__tmp_beside(const char *target, char *tmp, size_t size);
/* sim/storecheck.c: every value of the results database db (read from path) as pfisim
 * writes it, the per-minute table's aside: finite, in range, of its column's type, its parent
 * row present; no view or trigger. Returns 0, or PFS_EINVAL naming the table, row and column
 * in diag. */
struct sqlite3;
int pfs__store_check(struct sqlite3 *db, const char *path, struct pfs_diag *diag);
/* The same for one table ("timeseries", which pfs__store_check leaves to its readers). */
int pfs__store_check_table(struct sqlite3 *db, const char *path, const char *table,
                           struct pfs_diag *diag);

/* The temporary file tmp (made by pfs__tmp_beside) was renamed or removed by its writer:
 * pfs_tmp_remove_all no longer removes it. */
void pfs__tmp_gone(const char *tmp);
/* 0 unless path is a symbolic link that another user owns in a sticky, world-writable folder
 * (/tmp), whose owner it does not share: PFS_EIO, diag saying so. An output never follows
 * such a link (fs.protected_symlinks' rule), since its owner chose what it replaces. */
int pfs__link_check(const char *path, struct pfs_diag *diag);

/* Opens path for writing: "-" is stdout; a device, FIFO or socket is written in place; a
 * regular or new file (a link's target) goes to a temporary file beside it. Refuses a
 * directory and a dangling link. Returns 0 or PFS_EIO with the path. */
int pfs__out_open(struct pfs__out *o, const char *path, struct pfs_diag *diag);
/* Flushes, syncs and closes; with rc != 0 (the writer's error) or a failed write, removes
 * the temporary file. Returns rc, or the close's error, naming the path. */
int pfs__out_close(struct pfs__out *o, int rc, struct pfs_diag *diag);
/* Renames the closed temporary file over the target (nothing for in-place outputs). */
int pfs__out_commit(struct pfs__out *o, struct pfs_diag *diag);
/* Closes and removes without replacing anything. */
void pfs__out_abort(struct pfs__out *o);
/* pfs__out_close, then pfs__out_commit when that succeeded. */
int pfs__out_end(struct pfs__out *o, int rc, struct pfs_diag *diag);
/* All of it: write(obj, fp, diag) into path. */
int pfs__out_write(const char *path, int (*write)(const void *obj, FILE *fp, struct pfs_diag *d),
                   const void *obj, struct pfs_diag *diag);

/* plots/chart.c: draws c on a w x h area of cr (PFS_EINVAL: nothing finite to draw). */
struct _cairo;
int pfs__chart_draw(struct _cairo *cr, const struct pfs_chart *c, double w, double h);
/* Draws n charts as panels (one, two or three across) under one title on a w x h area of cr;
 * the same into a file 900 points wide and 330 a row of panels. Returns 0, PFS_EINVAL (a
 * panel with nothing finite), PFS_EIO. */
double pfs__charts_height(size_t n); /* the height of n panels 900 wide */
void pfs__charts_draw(struct _cairo *cr, const char *title, const struct pfs_chart *charts,
                      size_t n, double w, double h);
int pfs__charts_write(const char *title, const struct pfs_chart *charts, size_t n, const char *path,
                      enum pfs_plot_format format, struct pfs_diag *diag);
/* Draws n bar panels side by side under one title on a w x h area of cr. */
void pfs__bars_draw(struct _cairo *cr, const char *title, const struct pfs_bar_panel *panels,
                    size_t n, double w, double h);
/* Rows the panels are drawn in: two when they hold more than 24 bars in all (four panels
 * or more), else one. */
size_t pfs__bars_rows(const struct pfs_bar_panel *panels, size_t n);
double pfs__bars_height(const struct pfs_bar_panel *panels, size_t n); /* 520, or 820 in two */
/* The same into a file 900 wide, 520 high (820 in two rows). Returns 0 or PFS_EIO. */
int pfs__bars_write(const char *title, const struct pfs_bar_panel *panels, size_t n,
                    const char *path, enum pfs_plot_format format, struct pfs_diag *diag);

/* A power tree's figure (issue 58): per run, its nodes as an icicle, the root across the
 * top and each node its share (by nameplate) of its parent's width below it, coloured by
 * its peak minute over its limit. */
struct pfs__tree_panel {
    const char *label; /* the run's policy */
    size_t n;
    const int32_t *parent; /* -1: the root; a node's parent comes before it */
    const int *level;
    const double *width;     /* its nameplate */
    const double *ratio;     /* peak / limit; NAN without a limit */
    const char *const *name; /* its path: row-1/rack-2 */
};
double pfs__tree_height(const struct pfs__tree_panel *panels, size_t n);
void pfs__tree_draw(struct _cairo *cr, const char *title, const struct pfs__tree_panel *panels,
                    size_t n, double w, double h);
int pfs__tree_write(const char *title, const struct pfs__tree_panel *panels, size_t n,
                    const char *path, enum pfs_plot_format format, struct pfs_diag *diag);

/* Column i of the current row as a double, NAN where it is NULL (the results database
 * stores NAN as NULL). */
struct sqlite3_stmt;
double pfs__sql_real(struct sqlite3_stmt *q, int i);

/* The results database's SQLite handle and path, for the readers in plots/. */
struct sqlite3 *pfs__store_db(struct pfs_store *st);
const char *pfs__store_path(const struct pfs_store *st);

/* sim/json.c: strict JSON (one value, RFC 8259) into a tree of values in one arena. */
enum {
    PFS__JSON_NULL,
    PFS__JSON_BOOL,
    PFS__JSON_NUMBER,
    PFS__JSON_STRING,
    PFS__JSON_ARRAY,
    PFS__JSON_OBJECT
};
struct pfs__json {
    int type;       /* PFS__JSON_* */
    double num;     /* a number's value; a bool's, 1 or 0 */
    size_t n;       /* an array's or object's members */
    size_t first;   /* its first member, pool index + 1 (0: none) */
    size_t next;    /* the next member of the array or object it is in, pool index + 1 */
    size_t key_off; /* in an object: its name's offset in the strings, + 1 */
    size_t str_off; /* a string's offset in the strings (terminated; no NUL inside) */
};
struct pfs__json_doc {
    struct pfs__json *pool, *root;
    size_t n;
    char *strings;
};
/* Parses text[0..len) whole. Returns 0 (free doc with pfs__json_free), PFS_EINVAL with
 * *err_at the byte offset and *why the reason (static), or PFS_ENOMEM. */
int pfs__json_parse(const char *text, size_t len, struct pfs__json_doc *doc, size_t *err_at,
                    const char **why);
void pfs__json_free(struct pfs__json_doc *doc);

/* policies/exec.c: the external-process protocol's two answers, read from their parsed JSON
 * (docs/policies.md, "The external-process protocol"). The handshake: its protocol, the
 * policy's name (1 to 31 bytes) and summary, and its two claims. A decision's answer to
 * decision number for view v: 0 with out[] filled (every cap within its job's limits, every
 * pause in [0, 1] and none where may_pause is false, the power committed within the budget),
 * 1 where the program says the budget is infeasible (why: its reason), -1 for an answer that
 * is none of these (why: what is wrong). */
struct pfs__exec_hello {
    char name[32], summary[200];
    bool may_pause, memoryless;
    bool tree; /* it decides under a power tree too (the decision's "tree") */
};
int pfs__exec_hello(const struct pfs__json_doc *doc, struct pfs__exec_hello *h, char *why,
                    size_t why_size);
int pfs__exec_answer(const struct pfs__json_doc *doc, unsigned long number, bool may_pause,
                     const struct pfs_alloc_view *v, struct pfs_alloc_decision *out, char *why,
                     size_t why_size);
/* Members in order (NULL after the last), a member's name, a string's bytes (NULL if v is
 * not a string), and an object's member called key (the first; NULL if none). */
const struct pfs__json *pfs__json_first(const struct pfs__json_doc *doc, const struct pfs__json *v);
const struct pfs__json *pfs__json_next(const struct pfs__json_doc *doc, const struct pfs__json *v);
const char *pfs__json_key(const struct pfs__json_doc *doc, const struct pfs__json *v);
const char *pfs__json_str(const struct pfs__json_doc *doc, const struct pfs__json *v);
const struct pfs__json *pfs__json_get(const struct pfs__json_doc *doc, const struct pfs__json *obj,
                                      const char *key);

/* policies/solver.c: the PFI at the cuts a policy goes by for job i of the view: its
 * predictor's (NAN where it cannot say), else the PFI given in its telemetry. Returns how
 * many cuts are known. */
size_t pfs__view_pfi(const struct pfs_alloc_view *view, size_t i, double pfi[PFS_N_CUTS]);

/* sim/conformance.c: one random job of a policy instance (the conformance rules', and
 * tests/test_policies.c's): an H200 or H100 (gpus[0], gpus[1]) job on the DVFS model's curve
 * with drawn parameters, 1 GPU or 1-8, its curve the model's or (sampled) eleven measured-like
 * caps with 1% noise made non-decreasing, idle idle_w (NAN: its GPU's), every tier, and the
 * telemetry a PFI-aware policy goes by (its PFI measured). *curve is the caller's to free.
 * Returns 0 or what making the curve returned. Declared where <gsl/gsl_rng.h> is included. */
/* policies/registry.c: ops's answer to v under the tree t (struct pfs_alloc_tree, the policy
 * ABI's), from its allocate_tree (ABI 3; pfisim's own: equal, pfi, oracle), each job's
 * answer and every node's total checked; PFS_EINVAL naming the policy where it has none. */
int pfs__policy_allocate_tree(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *v,
                              const struct pfs_alloc_tree *t, struct pfs_alloc_decision *out,
                              struct pfs_diag *diag);

#ifdef __GSL_RNG_H__
/* models/gpu.c: the centred Latin hypercube's coordinate of draw d of n for the next
 * parameter, in (0, 1): stratum perm[d] of n, perm a shuffle by r of 0..n-1 (perm has room
 * for n), so that over the n draws each stratum is used once. 0.5 when n is 1. */
double pfs__lhs_next(gsl_rng *r, size_t *perm, size_t n, size_t d);

int pfs__policy_instance_job(gsl_rng *r, const struct pfs_gpu *const *gpus, size_t i,
                             bool single_gpu, bool sampled, double idle_w, struct pfs_alloc_job *j,
                             struct pfs_telemetry *tl, struct pfs_curve **curve,
                             struct pfs_diag *diag);
#endif

#endif /* PFISIM_INTERNAL_H */
