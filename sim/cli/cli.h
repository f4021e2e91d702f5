/*
 * sim/cli/cli.h - what the command-line files share (this folder: one file per command or
 * group of commands, main.c the table of them). Not part of the library: these print and
 * know about exit codes.
 */
#ifndef PFISIM_CLI_H
#define PFISIM_CLI_H

#include "internal.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INPUT = 3, EXIT_IO = 4 };

/* Prints diag compiler-style (file:line:column: error: ..., the line, a caret) and returns
 * the exit code for rc. */
int pfs_cli_report(const struct pfs_diag *d, int rc);

/* Prints "pfisim CMD: message" and a pointer to the help; returns EXIT_USAGE. */
int pfs_cli_usage(const char *cmd, const char *fmt, ...) PFS__PRINTF(2, 3);

/* argv with "OPT VALUE" joined into "OPT=VALUE" for an option whose value is optional
 * (getopt takes it only joined), unless VALUE starts with '-' or ends in not_suffix; *n_out
 * is the new count. The array lives as long as the process. NULL without memory. */
char **pfs_cli_join_optional(int argc, char **argv, const char *opt, const char *not_suffix,
                             int *n_out);

/* "; did you mean 'X'?" for the candidate nearest name (pfs__nearest; candidate(i) until
 * NULL), or "". The policy names' version. */
const char *pfs_cli_suggest(const char *name, const char *(*candidate)(size_t i));
const char *pfs_cli_suggest_policy(const char *name);

/* A shipped file or folder (traces/h200-h100, ...) found from the current folder or the
 * shipped files (pfs_share_dir); rel itself when nowhere. At most four at a time. */
const char *pfs_cli_shipped(const char *rel);

/* The jobs.csv beside a curves file (in its folder) into buf, or NULL when there is none to
 * read (alloc and scale take it as the curves' telemetry when not given one). */
const char *pfs_cli_jobs_beside(const char *curves_path, char *buf, size_t size);

/* Writes obj with write() to output whole or not at all (sim/outfile.c: a temporary file
 * renamed into place; devices and FIFOs in place), or to stdout when output is NULL or "-".
 * Returns 0 or PFS_EIO. */
int pfs_cli_write_output(const char *output,
                         int (*write)(const void *obj, FILE *fp, struct pfs_diag *d),
                         const void *obj, struct pfs_diag *d);

/* "N DR events of the scenario start at or after its end (D days) and are not simulated"
 * (jobs false), or the same of its workload's jobs submitted after it, into buf; what run
 * and check say where the scenario's own duration left some out. */
void pfs_cli_left_out(char *buf, size_t size, size_t n, bool jobs, double days);

/* Whether paths a and b name one file: the same file where both exist, else the same name
 * in the same folder (symbolic links in the folders followed). */
bool pfs_cli_same_file(const char *a, const char *b);

/* EXIT_OK where output (an option's file, opt naming the option) is none of inputs[0..n)
 * (NULL entries skipped); else a usage error saying so: an output is written over its file
 * whole, so `report DB -o DB` had put a PDF where the database was. */
int pfs_cli_not_over(const char *cmd, const char *opt, const char *output,
                     const char *const *inputs, size_t n);

/* Distinct non-negative integers written A..B[:STEP] or A,B,C into v (at most max; more is
 * refused, not cut). A range without STEP steps by default_step, or, when that is 0, in about
 * eight steps ending at B. Returns the count, 0 when malformed or a value repeats. */
size_t pfs_cli_parse_list(const char *s, long *v, size_t max, long default_step);

/* Prints t as a JSON string to stdout: quotes, backslashes and control bytes escaped. */
void pfs_cli_json_string(const char *t);
/* Prints v as a JSON number to stdout (%.17g), or null where it is NAN or infinite, which
 * JSON has no number for. */
void pfs_cli_json_number(double v);
/* Prints s as one quoted CSV field, its quotes doubled (always quoted: free text). */
void pfs_cli_csv_quoted(const char *s);

/* Parses a non-negative integer (a seed, a count). */
bool pfs_cli_parse_count(const char *s, unsigned long *out);

/* Parses a fraction written 0.3 or 30%. */
bool pfs_cli_parse_frac(const char *s, double *out);

/* Policies from outside pfisim (docs/policies.md, "Your own policy"): the options
 * --policy-lib PATH (repeatable), --policy-exec CMD (repeatable) and --policy-timeout SEC,
 * gathered while parsing, then loaded or started before the scenario is read (so that it
 * may name them). added[] are the names of the policies they added, in order. */
#define PFS_CLI_PLUGIN_OPTIONS                                                                     \
    {"policy-lib", required_argument, 0, 0x1001}, {"policy-exec", required_argument, 0, 0x1002},   \
        {"policy-timeout", required_argument, 0, 0x1003}, PFS_CLI_ALLOW_OPTION
/* --allow-plugins: a scenario's policy_libs may be loaded (their code runs). Every command
 * that reads a scenario file takes it (docs/reliability.md, "What pfisim trusts"); the
 * option's value 0x1004 is handled by pfs_cli_plugins_option or, where a command has no
 * other plugin options, by pfs_policy_allow_scenario_libs(true) itself. */
#define PFS_CLI_ALLOW_OPTION                                                                       \
    {                                                                                              \
        "allow-plugins", no_argument, 0, 0x1004                                                    \
    }
#define PFS_CLI_ALLOW_HELP                                                                         \
    "  --allow-plugins       load the libraries a scenario's policy_libs names (their\n"           \
    "                        code runs); without it such a scenario is refused\n"
#define PFS_CLI_PLUGIN_HELP                                                                        \
    "  --policy-lib FILE     load the policies of a shared library (repeatable;\n"                 \
    "                        docs/policies.md, \"Your own policy\")\n"                             \
    "  --policy-exec CMD     an external program as a policy, over JSON lines on its\n"            \
    "                        standard input and output (repeatable)\n"                             \
    "  --policy-timeout SEC  the most an external program may take per decision "                  \
    "(10)\n" PFS_CLI_ALLOW_HELP
struct pfs_cli_plugins {
    const char *libs[16], *execs[8];
    size_t n_libs, n_execs;
    double timeout_s; /* 0: the default, 10 s */
    const char *added[64];
    size_t n_added;
};
/* Takes option c (its argument arg) if it is one of PFS_CLI_PLUGIN_OPTIONS: returns 1, or 2
 * after a usage error printed for command cmd, or 0 when c is another option. */
int pfs_cli_plugins_option(struct pfs_cli_plugins *pl, const char *cmd, int c, const char *arg);
/* Loads the libraries and starts the programs. Returns EXIT_OK, or the exit code of the
 * error it printed. */
int pfs_cli_plugins_load(struct pfs_cli_plugins *pl);

/* Under --uncertainty N (draws.c): a metric's values, n_draws x n_pol (NAN: none). */
struct pfs_cli_draw_metric {
    const char *name;
    const double *v;
};
/* Per policy and metric the median, min and max over the draws; then (not with csv) how
 * often each ranking of the policies by metric rank_by holds, and each pair's order. */
void pfs_cli_draws_report(const char *const *pol, size_t n_pol, size_t n_draws,
                          const struct pfs_cli_draw_metric *m, size_t n_m, size_t rank_by,
                          bool csv);
/* "uncertainty: N draws ... of b200 (EXTRAPOLATED): limits_w.min [200, 400] ..." */
void pfs_cli_draws_header(const struct pfs_gpu *unc, size_t n_unc, size_t n_draws,
                          unsigned long seed);

/* One allocation problem (problem.c): all the jobs of a curves file, or of a synthetic
 * corpus, at once; what the policies may know of them; the truth they are scored on. */
struct pfs_cli_problem {
    struct pfs_curveset *cs;
    struct pfs_jobset *js;
    struct pfs_predictor *predictor;
    size_t n;
    struct pfs_alloc_job *jobs;
    struct pfs_telemetry *tel;
    struct pfs_curve **curves;
    struct pfs_truth *truth;
    double ref_total_w, min_total_w;
    double full_total_w; /* what the jobs draw uncapped, at their reference limits */
    long n_gpus;
    const char *unit;
    const struct pfs_alloc_tree *tree; /* alloc --tree: limits under a power tree; NULL: none */
};

/* One policy's answer to a problem, scored on the true curves. */
struct pfs_cli_outcome {
    const struct pfs_policy_ops *ops;
    int rc;
    struct pfs_diag diag;
    double total, min_rel, power_w;
    struct pfs_alloc_decision *d;
};

/* Reads CURVES (a file, with JOBS or the jobs.csv beside it, or synth:GPU[:SEED] made with
 * so's options, NULL the defaults; a profile named as drawn is taken as drawn) into p: the
 * jobs' limits at tier, their telemetry, the predictor (model_path, else the shipped one
 * where there is telemetry; none with given_pfi, which gives each job its measured PFI), the
 * truth. Returns 0 or an error naming file, line and field; p is pfs_cli_problem_free's
 * either way. */
int pfs_cli_problem_build(struct pfs_cli_problem *p, const char *curves_path, const char *jobs_path,
                          const char *model_path, bool given_pfi, int tier,
                          const struct pfs_gpu *drawn, const struct pfs_synth_options *so,
                          struct pfs_diag *d);
/* pfs_cli_problem_build in two: the curves and jobs read (or made) into p->cs and p->js;
 * then the rest from them, curves_path naming them in errors. */
int pfs_cli_problem_read(struct pfs_cli_problem *p, const char *curves_path, const char *jobs_path,
                         const struct pfs_gpu *drawn, const struct pfs_synth_options *so,
                         struct pfs_diag *d);
int pfs_cli_problem_setup(struct pfs_cli_problem *p, const char *curves_path,
                          const char *model_path, bool given_pfi, int tier,
                          const struct pfs_gpu *drawn, struct pfs_diag *d);
void pfs_cli_problem_free(struct pfs_cli_problem *p);
/* o->ops's answer to v on p: total true throughput, the power it draws, the worst job's
 * share of its uncapped throughput; o->rc and o->diag when it gave none. o->d is the
 * caller's to free. A budget covering every job's uncapped draw asks no policy. */
void pfs_cli_outcome_run(const struct pfs_cli_problem *p, const struct pfs_alloc_view *v,
                         struct pfs_cli_outcome *o);

/* "uncertainty: N draws ... of the SYNTHETIC corpus's inputs: p_moe [0.15, 0.45] ..." */
void pfs_cli_corpus_draws_header(size_t n_draws, unsigned long seed);

/* Prints s after what the line holds (*col columns), or on a new line after indent where it
 * would pass width: lists a planner reads in a terminal, under 100 columns. */
void pfs_cli_put_wrapped(const char *s, size_t *col, size_t width, const char *indent);

/* A figure's format from its file name: .png, .svg or .pdf (any case); -1 for another
 * name, which the commands refuse (a .jpg or .txt got PNG bytes without a word). */
int pfs_cli_plot_format(const char *path);

/* The commands: each pfs_cli_NAME(argc, argv) with argv[0] the command's name, and its
 * help text pfs_cli_NAME_help, in the file of this folder named for it (or its group). */
#define PFS_CLI_COMMAND(name)                                                                      \
    int pfs_cli_##name(int argc, char **argv);                                                     \
    extern const char pfs_cli_##name##_help[]
PFS_CLI_COMMAND(run);   /* run.c */
PFS_CLI_COMMAND(alloc); /* alloc.c */
PFS_CLI_COMMAND(scale); /* scale.c */
PFS_CLI_COMMAND(sweep); /* sweep.c: sweep, merge, price, grid */
PFS_CLI_COMMAND(merge);
PFS_CLI_COMMAND(price);
PFS_CLI_COMMAND(grid);
PFS_CLI_COMMAND(capacity);     /* capacity.c */
PFS_CLI_COMMAND(check);        /* check.c */
PFS_CLI_COMMAND(policy_check); /* policy.c */
PFS_CLI_COMMAND(gpus);         /* model.c: gpus, model, fit */
PFS_CLI_COMMAND(model);
PFS_CLI_COMMAND(fit);
PFS_CLI_COMMAND(import);                     /* import.c */
PFS_CLI_COMMAND(synth);                      /* synth.c */
PFS_CLI_COMMAND(study);                      /* study.c */
extern const char pfs_cli_study_tree_help[]; /* studytree.c: pfisim study tree */
int pfs_cli_study_tree(int argc, char **argv);
PFS_CLI_COMMAND(workload);   /* workload.c */
PFS_CLI_COMMAND(predict);    /* predict.c */
PFS_CLI_COMMAND(plot);       /* plot.c: plot, report */
PFS_CLI_COMMAND(report_cmd); /* pfs_cli_report prints errors */
#undef PFS_CLI_COMMAND

#endif
