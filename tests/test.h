/*
 * tests/test.h - the test harness: checks, skips, and the list of tests.
 *
 * A test is a function void test_x(struct test *t). CHECK* macros record a failure with
 * file:line and go on, so one run reports every broken check; SKIP returns early and
 * counts the test as skipped (used only when the real data directory is absent). Tests
 * that need files write them under t->tmpdir, which the runner makes and removes.
 */
#ifndef PFISIM_TEST_H
#define PFISIM_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct test {
    const char *name;
    int failures;
    bool skipped;
    char tmpdir[256];
};

void test_fail(struct test *t, const char *file, int line, const char *fmt, ...) PFS__PRINTF(4, 5);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_fail(t, __FILE__, __LINE__, "CHECK(%s)", #cond);                                  \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b), tol_ = (tol);                                                   \
        if (!(fabs(a_ - b_) <= tol_))                                                              \
            test_fail(t, __FILE__, __LINE__, "%s = %.10g, expected %.10g (tol %g)", #a, a_, b_,    \
                      tol_);                                                                       \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (strcmp(a_, b_) != 0)                                                                   \
            test_fail(t, __FILE__, __LINE__, "%s:\n      got      '%s'\n      expected '%s'", #a,  \
                      a_, b_);                                                                     \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long a_ = (long)(a), b_ = (long)(b);                                                       \
        if (a_ != b_)                                                                              \
            test_fail(t, __FILE__, __LINE__, "%s = %ld, expected %ld", #a, a_, b_);                \
    } while (0)

#define SKIP(why)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "  skip %s: %s\n", t->name, why);                                          \
        t->skipped = true;                                                                         \
        return;                                                                                    \
    } while (0)

/* Writes text to t->tmpdir/name and returns the path (static buffer, one at a time per
 * slot: slot 0..3). */
const char *test_write(struct test *t, int slot, const char *name, const char *text);

/* The file at path, whole (malloc'd; "" when it cannot be read). */
char *test_slurp(const char *path);

/* The number of lines in the file at path; -1 when it cannot be read. */
long test_count_lines(const char *path);

/* The real-data file rel under the data directory, or NULL when it does not exist. */
const char *test_data(const char *rel, char *buf, size_t size);

/* Runs the pfisim binary ($PFISIM_BIN) with args (a shell fragment); captures stdout and
 * stderr into *out / *err (malloc'd, caller frees). Returns the exit status, -1 on error. */
int test_run(struct test *t, const char *args, char **out, char **err);

/* test_run with every file the process writes limited to max_bytes (a full disk). */
int test_run_fsize(struct test *t, long max_bytes, const char *args, char **out, char **err);
/* test_run with one resource limit set (resource < 0: none; RLIMIT_FSIZE also ignores
 * SIGXFSZ, so that writes past it fail as on a full disk) and as user uid (uid < 0: this
 * one; its output files are made writable to it). */
int test_run_as(struct test *t, int resource, long limit, int uid, const char *args, char **out,
                char **err);
/* BIN_DIR/plugins/name into buf (BIN_DIR: $PFISIM_BIN's folder); NULL when it is not there. */
const char *test_plugin(const char *name, char *buf, size_t size);
/* Whether dir holds a file whose name ends in .tmp (an output's temporary file, left). */
bool test_leftover_tmp(const char *dir);

/* pfs_sim_run with its job results copied into jobs (the workload's jobs; NULL: none), for
 * tests that read them as an array. */
int test_sim_run(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
                 struct pfs_run_result *r, struct pfs_timeseries *ts, struct pfs_job_result *jobs,
                 struct pfs_diag *d);
/* Makes sc's inputs and runs policy on them (test_sim_run, no time series), failing the test
 * with the message where either fails. Returns what they returned. */
int test_sim_scenario(struct test *t, const struct pfs_scenario *sc, const char *policy,
                      struct pfs_run_result *r, struct pfs_job_result *jobs);

/* Decodes the PNG at path and checks that it is w x h pixels (a failure of t otherwise). */
void test_check_png(struct test *t, const char *path, int w, int h);
/* Whether two files have the same bytes (false when either cannot be read). */
bool test_same_file(const char *a, const char *b);
/* The first of n jobs whose results in a and b differ in a field's bits (n where none
 * does): memcmp over the records would also compare their padding, which runs leave as it
 * falls. */
size_t test_first_job_differing(const struct pfs_job_result *a, const struct pfs_job_result *b,
                                size_t n);
/* One integer (the first column of the first row) from sql on db; -1 on error. */
struct sqlite3;
long test_query_long(struct sqlite3 *db, const char *sql);

/* The list of tests, X(name). */
#define TEST_LIST(X)                                                                               \
    X(test_diag_strerror)                                                                          \
    X(test_csv_tokenizer)                                                                          \
    X(test_parse_double)                                                                           \
    X(test_curves_roundtrip)                                                                       \
    X(test_perseus_published_format)                                                               \
    X(test_scenario_strings_roundtrip)                                                             \
    X(test_curves_bad_input)                                                                       \
    X(test_gpu_profiles)                                                                           \
    X(test_gpu_bad_config)                                                                         \
    X(test_dvfs_clock_bruteforce)                                                                  \
    X(test_sync_identical_is_dvfs)                                                                 \
    X(test_sync_two_classes)                                                                       \
    X(test_sync_uniform_draw_chip_by_chip)                                                         \
    X(test_sync_shift_equalises)                                                                   \
    X(test_sync_shift_harmonic)                                                                    \
    X(test_sync_shift_bruteforce)                                                                  \
    X(test_sync_eta_draw)                                                                          \
    X(test_sync_oracle_bruteforce)                                                                 \
    X(test_cli_scale_curves)                                                                       \
    X(test_cli_scale_pfi)                                                                          \
    X(test_cli_scale_groups)                                                                       \
    X(test_sync_perseus_local_bracket)                                                             \
    X(test_sync_scenario_setting)                                                                  \
    X(test_sync_swing)                                                                             \
    X(test_dvfs_properties)                                                                        \
    X(test_dvfs_derivatives)                                                                       \
    X(test_curve_sampled)                                                                          \
    X(test_curve_no_extrapolation)                                                                 \
    X(test_pfi_closed_form)                                                                        \
    X(test_fit_recovers_model)                                                                     \
    X(test_fit_holdout)                                                                            \
    X(test_fit_save_and_model)                                                                     \
    X(test_fit_shared_recovers)                                                                    \
    X(test_fit_shared_arrow)                                                                       \
    X(test_fit_shared_coverage)                                                                    \
    X(test_fit_alpha_prior)                                                                        \
    X(test_fit_shared_loo)                                                                         \
    X(test_fit_too_few_points)                                                                     \
    X(test_real_emerald_pfi)                                                                       \
    X(test_real_import_errors)                                                                     \
    X(test_real_fit_quality)                                                                       \
    X(test_real_loo)                                                                               \
    X(test_real_shared_se)                                                                         \
    X(test_cli_frame)                                                                              \
    X(test_cli_bad_input)                                                                          \
    X(test_synth_deterministic)                                                                    \
    X(test_synth_population)                                                                       \
    X(test_synth_h200_slower_under_cap)                                                            \
    X(test_jobs_bad_input)                                                                         \
    X(test_synth_cli)                                                                              \
    X(test_telemetry_nvidia_smi)                                                                   \
    X(test_telemetry_dcgm)                                                                         \
    X(test_telemetry_bad_logs)                                                                     \
    X(test_roundtrip_ids_and_numbers)                                                              \
    X(test_import_ids)                                                                             \
    X(test_readers_refuse_wrong)                                                                   \
    X(test_outputs_safe)                                                                           \
    X(test_alloc_budget_binds_nothing)                                                             \
    X(test_install_destdir)                                                                        \
    X(test_paths_beside_scenario)                                                                  \
    X(test_option_forms)                                                                           \
    X(test_units_in_scenarios)                                                                     \
    X(test_check_command)                                                                          \
    X(test_help_man_consistent)                                                                    \
    X(test_progress_tty_only)                                                                      \
    X(test_json_outputs)                                                                           \
    X(test_capacity_command)                                                                       \
    X(test_results_python)                                                                         \
    X(test_event_panels)                                                                           \
    X(test_telemetry_real_h200)                                                                    \
    X(test_workload_real_sources)                                                                  \
    X(test_workload_synthetic_sources)                                                             \
    X(test_workload_fitted)                                                                        \
    X(test_workload_bad_input)                                                                     \
    X(test_workload_load_cli)                                                                      \
    X(test_workload_gpu_scale)                                                                     \
    X(test_arrival_models_reproducible)                                                            \
    X(test_ridge_closed_forms)                                                                     \
    X(test_rank_statistics)                                                                        \
    X(test_predict_features_are_telemetry)                                                         \
    X(test_predict_default_corpus)                                                                 \
    X(test_predict_deterministic)                                                                  \
    X(test_predict_bad_input)                                                                      \
    X(test_policies_properties)                                                                    \
    X(test_waterfill_breakpoints)                                                                  \
    X(test_pwl_eval_near)                                                                          \
    X(test_waterfill_classes)                                                                      \
    X(test_waterfill_counted)                                                                      \
    X(test_waterfill_from)                                                                         \
    X(test_level_early)                                                                            \
    X(test_policies_sla_pausing)                                                                   \
    X(test_policies_sla_kept)                                                                      \
    X(test_level_classes)                                                                          \
    X(test_waterfill_cached)                                                                       \
    X(test_policies_infeasible)                                                                    \
    X(test_policies_conformance)                                                                   \
    X(test_policies_views)                                                                         \
    X(test_alloc_cli)                                                                              \
    X(test_trust_nonbinding_cap)                                                                   \
    X(test_sim_tracking_event)                                                                     \
    X(test_trust_nodr_shared)                                                                      \
    X(test_trust_nodr_own)                                                                         \
    X(test_trust_nodr_beside)                                                                      \
    X(test_trust_event_counts)                                                                     \
    X(test_trust_two_pools)                                                                        \
    X(test_trust_gpu_types)                                                                        \
    X(test_trust_gap_defined)                                                                      \
    X(test_trust_seeds)                                                                            \
    X(test_sim_dr_summary)                                                                         \
    X(test_sim_hold_admission)                                                                     \
    X(test_sim_hold_pause)                                                                         \
    X(test_sim_hold_pause_rank)                                                                    \
    X(test_trust_alloc_edges)                                                                      \
    X(test_trust_unread_settings)                                                                  \
    X(test_trust_options_ignored)                                                                  \
    X(test_trust_sweep_axes_meet)                                                                  \
    X(test_trust_pool_settings)                                                                    \
    X(test_trust_named_twice)                                                                      \
    X(test_trust_events_overlap)                                                                   \
    X(test_trust_after_end)                                                                        \
    X(test_trust_not_over)                                                                         \
    X(test_trust_price_no_event)                                                                   \
    X(test_deadline_two_jobs)                                                                      \
    X(test_deadline_study_figure)                                                                  \
    X(test_sim_admission)                                                                          \
    X(test_sim_stepped_event)                                                                      \
    X(test_sim_average_baseline)                                                                   \
    X(test_dr_event_settings)                                                                      \
    X(test_dr_grid_steps)                                                                          \
    X(test_sim_discrete_pause)                                                                     \
    X(test_sim_discrete_turns)                                                                     \
    X(test_sim_discrete_standing)                                                                  \
    X(test_plugin_equal_bytes)                                                                     \
    X(test_plugin_library_errors)                                                                  \
    X(test_plugin_program_errors)                                                                  \
    X(test_plugin_policy_check)                                                                    \
    X(test_plugin_scenario_libs)                                                                   \
    X(test_harden_price_unknown_tier)                                                              \
    X(test_harden_db_loads_no_code)                                                                \
    X(test_harden_scenario_runs_no_code)                                                           \
    X(test_harden_exec_group)                                                                      \
    X(test_harden_signals)                                                                         \
    X(test_harden_sticky_link)                                                                     \
    X(test_harden_curves_memory)                                                                   \
    X(test_harden_db_values)                                                                       \
    X(test_harden_caps_quoted)                                                                     \
    X(test_harden_small)                                                                           \
    X(test_limits_check_says)                                                                      \
    X(test_pfi_rank_closed)                                                                        \
    X(test_pfi_share_closed)                                                                       \
    X(test_pfi_at)                                                                                 \
    X(test_noise_spearman)                                                                         \
    X(test_noise_window)                                                                           \
    X(test_corpus_draws)                                                                           \
    X(test_crossfit)                                                                               \
    X(test_study_source_cli)                                                                       \
    X(test_alloc_corpus_draws)                                                                     \
    X(test_tree_closed)                                                                            \
    X(test_tree_one_node)                                                                          \
    X(test_tree_brute_force)                                                                       \
    X(test_tree_scenario)                                                                          \
    X(test_tree_alloc)                                                                             \
    X(test_tree_whole_racks)                                                                       \
    X(test_tree_plugins)                                                                           \
    X(test_tree_exec)                                                                              \
    X(test_tree_run_closed)                                                                        \
    X(test_tree_run_row)                                                                           \
    X(test_tree_run_one_node)                                                                      \
    X(test_tree_run_hall)                                                                          \
    X(test_tree_study)                                                                             \
    X(test_limits_held)                                                                            \
    X(test_limits_reported)                                                                        \
    X(test_limits_capacity_feed)                                                                   \
    X(test_json_reader)                                                                            \
    X(test_gpu_profile_ranges)                                                                     \
    X(test_gpu_draws)                                                                              \
    X(test_synth_on_gpu)                                                                           \
    X(test_uncertainty_cli)                                                                        \
    X(test_sim_resize)                                                                             \
    X(test_sim_corpus_failures)                                                                    \
    X(test_sim_one_job)                                                                            \
    X(test_sim_variability)                                                                        \
    X(test_sim_variability_bad_curve)                                                              \
    X(test_sim_cap_change)                                                                         \
    X(test_sim_cap_nudge)                                                                          \
    X(test_sim_event_length_moves)                                                                 \
    X(test_sim_second_event)                                                                       \
    X(test_sim_engines_quiet)                                                                      \
    X(test_sim_notice)                                                                             \
    X(test_sim_actuation_overlap)                                                                  \
    X(test_price_closed_form)                                                                      \
    X(test_sim_safe_start)                                                                         \
    X(test_sim_timeseries_spill)                                                                   \
    X(test_sim_job_results_spill)                                                                  \
    X(test_sim_ramp_baseline)                                                                      \
    X(test_sim_backfill)                                                                           \
    X(test_sim_checkpoint)                                                                         \
    X(test_sim_indexed_queue)                                                                      \
    X(test_sim_sla_kept)                                                                           \
    X(test_sim_class_entries_many)                                                                 \
    X(test_grow_jump)                                                                              \
    X(test_lazy_calloc)                                                                            \
    X(test_huge_malloc)                                                                            \
    X(test_sort_doubles)                                                                           \
    X(test_fheap)                                                                                  \
    X(test_fheap_held)                                                                             \
    X(test_order)                                                                                  \
    X(test_queue_index)                                                                            \
    X(test_sim_deterministic)                                                                      \
    X(test_sim_bad_scenarios)                                                                      \
    X(test_sim_default_file)                                                                       \
    X(test_sim_phoenix_replay)                                                                     \
    X(test_store_matches_csv)                                                                      \
    X(test_store_deterministic)                                                                    \
    X(test_store_rows_match_csv)                                                                   \
    X(test_store_csv_threads)                                                                      \
    X(test_store_timeseries_memory)                                                                \
    X(test_store_jobs_memory)                                                                      \
    X(test_store_jobs_disk_full)                                                                   \
    X(test_sweep_jobs_same_db)                                                                     \
    X(test_sweep_shards_merge)                                                                     \
    X(test_sweep_slurm_script)                                                                     \
    X(test_sweep_real_slurm)                                                                       \
    X(test_sweep_resume)                                                                           \
    X(test_price_matches_summary)                                                                  \
    X(test_grid_events)                                                                            \
    X(test_dr_generator)                                                                           \
    X(test_sweep_sites)                                                                            \
    X(test_sweep_progress_and_list)                                                                \
    X(test_sweep_figures)                                                                          \
    X(test_sweep_bad_input)                                                                        \
    X(test_sweep_hash_collision)                                                                   \
    X(test_sweep_point_fails)                                                                      \
    X(test_sweep_timeseries)                                                                       \
    X(test_store_bad_databases)                                                                    \
    X(test_store_concurrent_create)                                                                \
    X(test_store_new_whole)                                                                        \
    X(test_store_read_only_media)                                                                  \
    X(test_store_key_covers_inputs)                                                                \
    X(test_plot_axis)                                                                              \
    X(test_plot_ranges)                                                                            \
    X(test_plot_cli)

#define TEST_DECLARE(name) void name(struct test *t);
TEST_LIST(TEST_DECLARE)
#undef TEST_DECLARE

#endif
