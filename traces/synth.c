/*
 * traces/synth.c - the synthetic H100/H200 LLM-training corpus (docs/corpus.md).
 *
 * SYNTHETIC. No public data set gives H100/H200 training throughput under power caps with
 * per-job telemetry (shared/data/README.md), so pfisim generates one from its DVFS model,
 * shaped like the source study's population: 131 H200 jobs (train), 24 more (validation)
 * and 34 H100 runs of 34 of those configurations (transfer).
 *
 * The pipeline, per configuration:
 *   1. draw a configuration: model (published dense and MoE architectures), phase, GPU
 *      count (at least what the model's training state needs in memory), TP/PP/DP/EP,
 *      sequence length, micro-batch;
 *   2. rules turn it into the hidden physics: the step-time split at f_max on an H100 into
 *      compute (scales with the clock), memory and communication (do not), the dynamic
 *      activity, the clock-independent draw (HBM and links), the limiter's cap_fill, and the
 *      absolute tokens/s through an MFU model; seeded variation that telemetry does not see
 *      is added to the intensity, communication, activity, HBM power and cap_fill;
 *   3. per GPU type: the H200 moves the same bytes at 4.8 instead of 3.35 TB/s, so its memory
 *      time shrinks (it is never slower uncapped) while its HBM3e draws more of the budget
 *      (so under a cap it can be slower);
 *   4. "measure" it: telemetry at the default 700 W limit with DCGM-like noise, and a cap
 *      sweep 200-700 W in 50 W steps with about 1% throughput noise, projected onto a
 *      non-decreasing sequence (pool adjacent violators) as one would clean a real sweep;
 *   5. label it with the true PFI at 10-50% from the noise-free model.
 *
 * Every random draw comes from one GSL MT19937 stream seeded by the user, in a fixed order,
 * so the same seed gives the same corpus bit for bit. All constants are here, named, and
 * documented with their sources in docs/corpus.md.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Published architectures (parameter counts from the model cards / papers). */
struct arch {
    const char *name;
    bool moe;
    double params_b, active_b;
};

static const struct arch dense_models[] = {
    {"gpt-1.3b", false, 1.3, 1.3},     {"gpt-2.7b", false, 2.7, 2.7},
    {"llama2-7b", false, 6.7, 6.7},    {"llama3-8b", false, 8.0, 8.0},
    {"llama2-13b", false, 13.0, 13.0}, {"codellama-34b", false, 34.0, 34.0},
    {"llama3-70b", false, 70.6, 70.6},
};

static const struct arch moe_models[] = {
    {"olmoe-1b-7b", true, 6.9, 1.3},       {"qwen1.5-moe-a2.7b", true, 14.3, 2.7},
    {"deepseek-moe-16b", true, 16.4, 2.8}, {"mixtral-8x7b", true, 46.7, 12.9},
    {"qwen2-57b-a14b", true, 57.4, 14.2},
};

#define N_DENSE (sizeof dense_models / sizeof dense_models[0])
#define N_MOE   (sizeof moe_models / sizeof moe_models[0])

enum phase { PRETRAIN, FINETUNE, LORA };
static const char *const phase_names[] = {"pretrain", "finetune", "lora"};

/* Generator constants (docs/corpus.md gives each one's reason and source). */
#define P_MOE      0.30 /* share of MoE configurations */
#define P_PRETRAIN 0.45 /* phase mix: pretrain / finetune / lora */
#define P_FINETUNE 0.30
#define BYTES_FULL 16.0 /* bf16 weights + grads, fp32 master + Adam moments */
#define BYTES_LORA 2.4  /* frozen bf16 weights + adapters and their optimizer */
#define MEM_USABLE 0.75 /* of an H100's 80 GB, for training state */
#define TENSOR_EFF                                                                                 \
    0.50                    /* tensor throughput while in compute phases, of peak: puts dense      \
                             * H100 pre-training MFU near Llama 3's 38-43% */
#define HBM_W_H100    55.0  /* HBM3 draw at full DRAM activity, W (assumption) */
#define HBM_W_H200    80.0  /* HBM3e, more stacks at 4.8 TB/s (assumption) */
#define H100_TFLOPS   989.0 /* the reference GPU of the step split: dense BF16, TFLOP/s */
#define H100_BW_TBS   3.35  /* and its memory bandwidth, TB/s */
#define Z_BASE        2.2  /* intensity logit of a reference job (calibrated, docs/validation.md) */
#define ACT_COMPUTE   1.05 /* activity while in compute phases (calibrated) */
#define N_CAPS        11
#define NOISE_TPUT    0.01  /* relative noise of a measured throughput point */
#define NOISE_POWER   0.005 /* relative noise of a measured mean draw */
#define NOISE_COUNTER 0.02  /* sd of an activity counter's reading (telemetry_noise 1) */
#define NOISE_LINK    0.05  /* relative sd of an NVLink throughput reading */
#define BETA_MAX      0.30  /* memory phases scaling with the SM clock: U(0, this) */
#define UNIT_V_SD     0.04  /* unit-to-unit sd of v_min */
#define UNIT_KNEE_SD  0.04  /* unit-to-unit sd of the knee, as a fraction of f_max */

/* The uncertain inputs' defaults (the shipped corpus) and the ranges a draw spans
 * (docs/corpus.md gives each range's reason). */
static const struct mix_param {
    const char *name;
    double def, lo, hi;
} mix_params[PFS_MIX_N] = {
    [PFS_MIX_P_MOE] = {"p_moe", P_MOE, 0.15, 0.45},
    [PFS_MIX_P_PRETRAIN] = {"p_pretrain", P_PRETRAIN, 0.25, 0.65},
    [PFS_MIX_SIZE_TILT] = {"size_tilt", 0.0, -2.0, 1.0},
    [PFS_MIX_P_WIDE] = {"p_wide", 0.5, 0.2, 0.8},
    [PFS_MIX_Z_BASE] = {"z_base", Z_BASE, 1.8, 3.0},
    [PFS_MIX_Z_SD] = {"z_sd", 0.40, 0.25, 0.55},
};

/* What is drawn once per configuration and shared by its H200 and H100 runs. */
struct config {
    const struct arch *arch;
    enum phase phase;
    int n_gpus, seq_len, micro_batch, tp, pp, dp, ep;
    /* hidden variation, unseen by telemetry */
    double z_noise, comm_noise, act_noise, hbm_noise, fill_noise, eff_noise;
    double beta;   /* share of the memory phases that still scales with the SM clock */
    double z_base; /* the mix's intensity base */
};

/* The hidden physics of one configuration on one GPU type. */
struct physics {
    double c, m, k;          /* step-time shares at f_max (c + m + k = 1): compute, memory, comm */
    double tokens_per_s_max; /* throughput at f_max */
    struct pfs_dvfs_job job; /* the DVFS model's job parameters */
    double dram_util;        /* DRAM activity at f_max, 0..1 */
};

static double
sigmoid(double z)
{
    return 1.0 / (1.0 + exp(-z));
}

static double
clampd(double v, double lo, double hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

static int
pick(gsl_rng *r, const double *p, int n)
{
    double u = gsl_rng_uniform(r), acc = 0;

    for (int i = 0; i < n - 1; i++) {
        acc += p[i];
        if (u < acc)
            return i;
    }
    return n - 1;
}

static void
draw_config(gsl_rng *r, const struct pfs_synth_options *o, struct config *cf)
{
    static const double grow_pre[] = {0.3, 0.4, 0.3}, grow_ft[] = {0.5, 0.35, 0.15},
                        grow_lora[] = {0.6, 0.3, 0.1};
    const double *mix = o->mix, unseen = o->unseen_scale;
    /* The phase mix: fine-tuning and LoRA keep their 6:5 ratio (exactly 0.30 at the default). */
    const double p_pre = mix[PFS_MIX_P_PRETRAIN],
                 p_ft = P_FINETUNE * ((1 - p_pre) / (1 - P_PRETRAIN));
    const double tilt = mix[PFS_MIX_SIZE_TILT], wide = mix[PFS_MIX_P_WIDE];
    static const int seq_pre[] = {2048, 4096, 8192}, seq_ft[] = {1024, 2048, 4096},
                     seq_lora[] = {512, 1024, 2048, 4096};
    double u, need_gb;
    int n_min = 1;

    memset(cf, 0, sizeof *cf);
    for (;;) {
        bool moe = gsl_rng_uniform(r) < mix[PFS_MIX_P_MOE];

        cf->arch = moe ? &moe_models[gsl_rng_uniform_int(r, N_MOE)]
                       : &dense_models[gsl_rng_uniform_int(r, N_DENSE)];
        u = gsl_rng_uniform(r);
        cf->phase = u < p_pre ? PRETRAIN : u < p_pre + p_ft ? FINETUNE : LORA;
        /* The fewest GPUs (a power of two) whose memory holds the training state; sized on
         * the H100's 80 GB so that every configuration also runs on an H100 (the twins). */
        need_gb = cf->arch->params_b * (cf->phase == LORA ? BYTES_LORA : BYTES_FULL);
        for (n_min = 1; n_min * 80.0 * MEM_USABLE < need_gb; n_min *= 2)
            ;
        if (n_min <= 32)
            break;
    }
    {
        const double *grow = cf->phase == PRETRAIN   ? grow_pre
                             : cf->phase == FINETUNE ? grow_ft
                                                     : grow_lora;
        double tilted[3], sum = 0;
        int k;

        /* Tilted towards fewer (t < 0) or more doublings; the weights as they are at t = 0. */
        for (int i = 0; fabs(tilt) > 0 && i < 3; i++)
            sum += tilted[i] = grow[i] * exp(tilt * i);
        for (int i = 0; fabs(tilt) > 0 && i < 3; i++)
            tilted[i] /= sum;
        k = pick(r, fabs(tilt) > 0 ? tilted : grow, 3);

        cf->n_gpus = n_min << k;
        if (cf->n_gpus > 32)
            cf->n_gpus = 32;
    }
    if (cf->phase == PRETRAIN)
        cf->seq_len = seq_pre[gsl_rng_uniform_int(r, 3)];
    else if (cf->phase == FINETUNE)
        cf->seq_len = seq_ft[gsl_rng_uniform_int(r, 3)];
    else
        cf->seq_len = seq_lora[gsl_rng_uniform_int(r, 4)];
    /* Smaller models afford bigger micro-batches. */
    cf->micro_batch = 1 << gsl_rng_uniform_int(r, cf->arch->active_b < 10 ? 4 : 2);
    /* Tensor parallelism inside a node for big models, pipeline across nodes for the
     * biggest, data parallelism for the rest; experts spread over up to 8 ranks. */
    cf->tp = 1;
    if (cf->n_gpus >= 2 && cf->arch->params_b >= 30)
        cf->tp = cf->n_gpus >= 8 ? 8 : cf->n_gpus;
    else if (cf->n_gpus >= 2 && cf->arch->params_b >= 10)
        cf->tp = gsl_rng_uniform(r) < 1 - wide ? 2 : (cf->n_gpus >= 4 ? 4 : 2);
    cf->pp = 1;
    if (cf->n_gpus >= 16 && cf->arch->params_b >= 30 && cf->phase != LORA) {
        int max_pp = cf->n_gpus / cf->tp; /* at least 2 here */

        cf->pp = gsl_rng_uniform(r) < 1 - wide || max_pp < 4 ? 2 : 4;
    }
    cf->dp = cf->n_gpus / (cf->tp * cf->pp);
    cf->ep = 1;
    if (cf->arch->moe && cf->n_gpus >= 2) {
        int max_ep = cf->n_gpus / cf->pp;

        cf->ep = max_ep >= 8 ? 8 : max_ep;
    }
    /* The hidden variation (docs/corpus.md, "what telemetry cannot see"). */
    /* Scaled by `unseen` (1 normally; 0 removes the variation, keeping its mean), so that
     * the predictor's ceiling can be measured (docs/predictor.md). */
    cf->z_base = mix[PFS_MIX_Z_BASE];
    cf->z_noise = unseen * gsl_ran_gaussian(r, mix[PFS_MIX_Z_SD]);
    cf->comm_noise = unseen * gsl_ran_gaussian(r, 0.30);
    cf->act_noise = unseen * gsl_ran_gaussian(r, 0.05);
    cf->hbm_noise = unseen * gsl_ran_gaussian(r, 0.10);
    cf->fill_noise = unseen * gsl_ran_gaussian(r, 0.010);
    cf->eff_noise = unseen * gsl_ran_gaussian(r, 0.05);
    /* The share that no counter sees grows with the telemetry's error too (clamped to the
     * physical [0, 1]; at telemetry_noise 1 the clamp never acts). */
    cf->beta = clampd(BETA_MAX / 2 + unseen * o->telemetry_noise *
                                         (gsl_ran_flat(r, 0, BETA_MAX) - BETA_MAX / 2),
                      0, 1);
}

/* The HBM's draw at full DRAM activity on g, W: the constants of Hopper, and for another GPU
 * (Blackwell, extrapolated) the H100's scaled by bandwidth, which puts the H200 at 78.8 W
 * against its 80 (an assumption: HBM power in proportion to bytes moved per second). */
static double
hbm_w_of(const struct pfs_gpu *g)
{
    if (strcmp(g->name, "h200-sxm") == 0)
        return HBM_W_H200;
    if (strcmp(g->name, "h100-sxm") == 0)
        return HBM_W_H100;
    return HBM_W_H100 * g->mem_bw_tbs / H100_BW_TBS;
}

/* The rules of docs/corpus.md: configuration -> hidden physics on GPU g. The step split is
 * drawn in an H100's time at f_max; on another GPU compute takes H100_TFLOPS / its tensor
 * throughput of that time and memory H100_BW_TBS / its bandwidth (on an H100 both ratios are
 * 1 exactly, on an H200 the first is: the shipped corpus is unchanged); communication is
 * taken as unchanged (NVLink 5 doubles the per-GPU links, the network does not: an
 * assumption, docs/corpus.md). */
static void
physics_of(const struct config *cf, const struct pfs_gpu *g, struct physics *ph)
{
    double z, s, k, c, m, total, flops_per_token, dram;
    double log_n = log2((double)cf->n_gpus);

    /* Arithmetic intensity sets how much of the non-communication time is compute: more
     * tokens per micro-batch and wider models raise it; MoE (expert dispatch, small expert
     * GEMMs) lowers it, and so does fine-tuning (short, padded samples, data loading,
     * evaluation), LoRA most (no weight-gradient GEMMs, the same weight reads). */
    z = cf->z_base + 0.55 * log2((double)cf->micro_batch * cf->seq_len / 4096.0) +
        0.40 * log2(cf->arch->active_b / 7.0) - 1.3 * (cf->arch->moe ? 1 : 0) -
        0.8 * (cf->phase == FINETUNE ? 1 : 0) - 1.2 * (cf->phase == LORA ? 1 : 0) + cf->z_noise;
    s = sigmoid(z);
    /* Communication grows with GPU count, leaving the node (> 8 GPUs), pipeline depth,
     * expert all-to-all and wide tensor parallelism. */
    k = 0.02 + 0.02 * log_n + 0.10 * (cf->n_gpus > 8 ? 1 : 0) + 0.035 * log2((double)cf->pp) +
        0.06 * (cf->arch->moe && cf->ep > 1 ? 1 : 0) + 0.02 * (cf->tp >= 4 ? 1 : 0);
    k = clampd(k * exp(cf->comm_noise), 0.01, 0.5);
    c = (1 - k) * s;
    m = (1 - k) * (1 - s);
    m *= H100_BW_TBS / g->mem_bw_tbs; /* H200: 3.35 / 4.8 */
    {
        double cg = c * (H100_TFLOPS / g->tflops_bf16); /* Hopper: c itself */

        total = cg + m + k; /* 1 on an H100, less on an H200 or a Blackwell */
        ph->c = cg / total;
    }
    ph->m = m / total;
    ph->k = k / total;

    /* Absolute throughput: tokens/s = n * peak * MFU / FLOPs per token, with MFU the tensor
     * efficiency during compute times the compute share (an H100 dense pre-training job
     * lands at 38-45% MFU, as Llama 3 reports on H100), and 6 N FLOPs per token for full
     * training, 4 N for LoRA (no weight gradients), N the active parameters (Kaplan et al.
     * 2020). The H200 runs the same step in `total` of the time. */
    flops_per_token = (cf->phase == LORA ? 4.0 : 6.0) * cf->arch->active_b * 1e9;
    ph->tokens_per_s_max = cf->n_gpus * H100_TFLOPS * 1e12 * TENSOR_EFF * exp(cf->eff_noise) * c /
                           flops_per_token / total;

    /* Dynamic activity: time-weighted switching of compute (tensor cores busy), memory
     * phases (load/store units, caches) and communication (mostly idle SMs). */
    ph->job.activity = clampd(ACT_COMPUTE * ph->c + 0.45 * ph->m + 0.15 * ph->k + cf->act_noise,
                              0.1, PFS_DVFS_ACTIVITY_MAX);
    /* DRAM activity: memory phases stream at near full bandwidth, compute phases read
     * weights and activations at a fraction of it. */
    dram = clampd(0.9 * ph->m + 0.2 * ph->c, 0, 1);
    ph->dram_util = dram;
    /* Clock-independent draw: HBM in proportion to its activity (HBM3e takes more of the
     * budget: Ujeniya et al., arXiv 2604.11391), plus NVLink and NIC when used. */
    ph->job.mem_w = hbm_w_of(g) * dram * exp(cf->hbm_noise) + 15.0 + 8.0 * (cf->tp > 1 ? 1 : 0) +
                    5.0 * (cf->n_gpus > 8 ? 1 : 0);
    /* The limiter holds bursty jobs further below the cap: pipelines and MoE swing most. */
    ph->job.cap_fill = clampd(0.975 - 0.015 * log2((double)cf->pp) -
                                  0.02 * (cf->arch->moe ? 1 : 0) - 0.004 * log_n + cf->fill_noise,
                              0.88, 0.995);
    /* The clock-scaling share: compute, plus the part of the memory phases (cache and
     * shared-memory bound kernels) that speeds up with the SM clock. */
    ph->job.alpha = ph->c + cf->beta * ph->m;
    ph->job.t_max = ph->tokens_per_s_max;
}

/* Pool adjacent violators: the least-squares non-decreasing fit of v[0..n). */
static void
make_monotone(double *v, size_t n)
{
    double val[N_CAPS], wt[N_CAPS];
    size_t len[N_CAPS], b = 0;

    for (size_t i = 0; i < n; i++) {
        val[b] = v[i];
        wt[b] = 1;
        len[b] = 1;
        b++;
        while (b > 1 && val[b - 2] > val[b - 1]) {
            double w = wt[b - 2] + wt[b - 1];

            val[b - 2] = (val[b - 2] * wt[b - 2] + val[b - 1] * wt[b - 1]) / w;
            wt[b - 2] = w;
            len[b - 2] += len[b - 1];
            b--;
        }
    }
    for (size_t i = 0, k = 0; i < b; i++)
        for (size_t l = 0; l < len[i]; l++)
            v[k++] = val[i];
}

/* Communication time in the first x steps, each step's communication being its last k. */
static double
comm_upto(double x, double k)
{
    double whole = floor(x);

    return whole * k + fmax(0, x - whole - (1 - k));
}

/* The step's time, s, at throughput tokens/s: a global batch of 4M tokens in pre-training
 * (Llama 2 and 3 train on 4M), 512k in fine-tuning, 256k with LoRA (an assumption: common
 * recipes), never less than one micro-batch on every data-parallel rank. */
static double
step_s(const struct config *cf, double throughput)
{
    double batch = cf->phase == PRETRAIN ? 4194304.0 : cf->phase == FINETUNE ? 524288.0 : 262144.0;

    batch = fmax(batch, (double)cf->micro_batch * cf->seq_len * cf->dp);
    return throughput > 0 ? batch / throughput : 1.0;
}

/* Activity of a step split into compute, memory and communication shares (rule 6). */
static double
activity_of(double comp, double mem, double comm)
{
    return ACT_COMPUTE * comp + 0.45 * mem + 0.15 * comm;
}

/* The telemetry of one run at the default limit (op): the step at clock x splits into compute
 * comp, memory mem and communication comm. A reading averages a window of the run: with a
 * window of a few steps it sees communication's share of its own window, not the run's
 * (o->telemetry_window_s, the start a draw of rw); every counter then carries per-reading
 * noise. Both errors are multiplied by o->telemetry_noise; r's draws are the same whatever
 * it is, so the curves after them are too. */
static void
telemetry(gsl_rng *r, gsl_rng *rw, const struct pfs_synth_options *o, const struct config *cf,
          const struct pfs_gpu *g, const struct pfs_dvfs_point *op, double comp, double mem,
          double comm, struct pfs_corpus_job *out)
{
    const double L = o->telemetry_noise;
    double draw = op->power_w;

    if (o->telemetry_window_s > 0) {
        double w = o->telemetry_window_s / step_s(cf, op->throughput), u = gsl_rng_uniform(rw);
        double seen = comm + L * ((comm_upto(u + w, comm) - comm_upto(u, comm)) / w - comm);
        double busy = comp + mem, a_run = activity_of(comp, mem, comm);

        seen = clampd(seen, 0, 1);
        if (busy > 0) {
            comp *= (1 - seen) / busy;
            mem *= (1 - seen) / busy;
        }
        comm = seen;
        /* What is above idle goes with activity. */
        draw = g->idle_w + (op->power_w - g->idle_w) * activity_of(comp, mem, comm) / a_run;
    }
    out->power_w = fmin(draw * (1 + gsl_ran_gaussian(r, NOISE_POWER * L)), g->default_limit_w);
    out->power_frac = out->power_w / g->default_limit_w;
    out->sm_clock_mhz = round(op->f_mhz + gsl_ran_gaussian(r, 5.0 * L));
    out->sm_clock_mhz = fmin(out->sm_clock_mhz, g->f_max_mhz);
    out->sm_active =
        clampd(comp + 0.85 * mem + 0.10 * comm + gsl_ran_gaussian(r, NOISE_COUNTER * L), 0, 1);
    out->tensor_active =
        clampd(0.75 * comp * (cf->arch->moe ? 0.8 : 1.0) * (cf->phase == LORA ? 0.9 : 1.0) +
                   gsl_ran_gaussian(r, NOISE_COUNTER * L),
               0, 1);
    out->dram_active =
        clampd((0.9 * mem + 0.2 * comp) + gsl_ran_gaussian(r, NOISE_COUNTER * L), 0, 1);
    out->nvlink_gbps = fmax(0, ((cf->tp > 1 ? 40.0 + 25.0 * cf->tp : 2.0) +
                                (cf->arch->moe && cf->ep > 1 ? 40.0 * log2((double)cf->ep) : 0)) *
                                   (comp + mem) * (1 + gsl_ran_gaussian(r, NOISE_LINK * L)));
    out->net_gbps = fmax(0, (cf->n_gpus > 8 ? 400.0 * comm * (0.6 + 0.4 * gsl_rng_uniform(r))
                                            : 0.5 + 0.5 * gsl_rng_uniform(r)));
}

/* Measures one configuration on one GPU: fills the job row and adds its curve. */
static int
measure(gsl_rng *r, gsl_rng *rw, const struct pfs_synth_options *o, const struct config *cf,
        const struct pfs_gpu *type, struct pfs_corpus_job *out, struct pfs_curveset *cs,
        struct pfs_dvfs_job *truth, struct pfs_gpu *truth_gpu, struct pfs_diag *diag)
{
    /* The units' own voltage curves: hidden, so scaled with the telemetry's error too. */
    const double unseen = o->unseen_scale * o->telemetry_noise;
    struct physics ph;
    struct pfs_dvfs_point op;
    struct pfs_curve *model = NULL;
    struct pfs_gpu unit = *type, *g = &unit;
    double caps[N_CAPS], tput[N_CAPS], pw[N_CAPS], x, step, comp, mem, comm;
    int rc;

    /* These GPUs' own voltage curve: silicon and firmware vary from unit to unit, and at
     * the uncapped operating point (full voltage) telemetry cannot tell. */
    unit.v_min = clampd(type->v_min + unseen * gsl_ran_gaussian(r, UNIT_V_SD), 0.5, 1.0);
    unit.f_knee_mhz =
        clampd(type->f_knee_mhz + unseen * gsl_ran_gaussian(r, UNIT_KNEE_SD) * type->f_max_mhz,
               type->f_min_mhz + 10, type->f_max_mhz - 10);
    physics_of(cf, g, &ph);
    if (truth)
        *truth = ph.job;
    if (truth_gpu)
        *truth_gpu = unit;
    out->n_gpus = cf->n_gpus;
    pfs__strlcpy(out->gpu, g->name, sizeof out->gpu);
    pfs__strlcpy(out->family, cf->arch->moe ? "moe" : "dense", sizeof out->family);
    pfs__strlcpy(out->phase, phase_names[cf->phase], sizeof out->phase);
    out->params_b = cf->arch->params_b;
    out->active_params_b = cf->arch->active_b;
    out->seq_len = cf->seq_len;
    out->micro_batch = cf->micro_batch;
    out->tp = cf->tp;
    out->pp = cf->pp;
    out->dp = cf->dp;
    out->ep = cf->ep;

    /* Telemetry at the default limit: the step at clock x splits into compute c / x, memory
     * m and communication k. */
    pfs_dvfs_eval(g, &ph.job, g->default_limit_w, &op);
    x = op.f_mhz / g->f_max_mhz;
    step = (ph.c + cf->beta * ph.m) / x + (1 - cf->beta) * ph.m + ph.k;
    comp = ph.c / x / step;
    mem = (cf->beta * ph.m / x + (1 - cf->beta) * ph.m) / step;
    comm = ph.k / step;
    telemetry(r, rw, o, cf, g, &op, comp, mem, comm, out);
    out->tokens_per_s = op.throughput * (1 + gsl_ran_gaussian(r, NOISE_TPUT));

    /* The cap sweep. */
    for (int i = 0; i < N_CAPS; i++) {
        struct pfs_dvfs_point pt;

        /* the GPU's settable range in ten steps: Hopper's 200-700 W in 50 W steps */
        caps[i] = g->min_limit_w + (g->max_limit_w - g->min_limit_w) / (N_CAPS - 1) * i;
        pfs_dvfs_eval(g, &ph.job, caps[i], &pt);
        tput[i] = pt.throughput * (1 + gsl_ran_gaussian(r, NOISE_TPUT));
        pw[i] = fmin(pt.power_w * (1 + gsl_ran_gaussian(r, NOISE_POWER)), caps[i]);
    }
    make_monotone(tput, N_CAPS);
    make_monotone(pw, N_CAPS);
    for (int i = 0; i < N_CAPS; i++) {
        rc = pfs_curveset_add(cs, out->job_id, g->name, cf->n_gpus, caps[i], tput[i], "tokens/s",
                              pw[i], 0, diag);
        if (rc)
            return rc;
    }

    /* Labels: the true PFI from the noise-free model. */
    if ((rc = pfs_curve_model_new(g, &ph.job, &model, diag)) != 0)
        return rc;
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        if (pfs_pfi(model, g->default_limit_w, pfs_cut(k), &out->pfi[k]) != 0)
            out->pfi[k] = NAN;
    pfs_curve_free(model);
    return 0;
}

bool
pfs_synth_spec(const char *src, char *gpu, size_t size, unsigned long *seed)
{
    const char *colon;
    size_t len;
    long v = 7;

    if (strncmp(src, "synth:", 6) != 0)
        return false;
    src += 6;
    colon = strchr(src, ':');
    len = colon ? (size_t)(colon - src) : strlen(src);
    if (len == 0 || len >= size || (colon && (!pfs__parse_long(colon + 1, &v) || v < 0)))
        return false;
    memcpy(gpu, src, len);
    gpu[len] = '\0';
    *seed = (unsigned long)v;
    return true;
}

void
pfs_synth_defaults(struct pfs_synth_options *o, unsigned long seed)
{
    o->seed = seed;
    o->n_train = 131;
    o->n_validation = 24;
    o->n_transfer = 34;
    o->unseen_scale = 1.0;
    o->telemetry_noise = 1.0;
    o->telemetry_window_s = 0;
    for (size_t i = 0; i < PFS_MIX_N; i++)
        o->mix[i] = mix_params[i].def;
    o->draw = o->n_draws = 0;
    o->draw_seed = 1;
    o->gpu = NULL;
}

const char *
pfs_synth_mix_param(size_t i, double *def, double *lo, double *hi)
{
    if (i >= PFS_MIX_N)
        return NULL;
    *def = mix_params[i].def;
    *lo = mix_params[i].lo;
    *hi = mix_params[i].hi;
    return mix_params[i].name;
}

int
pfs_synth_draw(struct pfs_synth_options *o, size_t n, size_t d, unsigned long seed,
               struct pfs_diag *diag)
{
    gsl_rng *r;
    size_t *perm;

    if (n == 0 || d >= n)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "draw",
                             "corpus draw %zu of %zu: no such draw", d + 1, n);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    perm = malloc(n * sizeof *perm);
    if (!r || !perm) {
        if (r)
            gsl_rng_free(r);
        free(perm);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    gsl_rng_set(r, pfs__fnv1a_str(seed, "corpus mix"));
    for (size_t i = 0; i < PFS_MIX_N; i++)
        o->mix[i] =
            mix_params[i].lo + pfs__lhs_next(r, perm, n, d) * (mix_params[i].hi - mix_params[i].lo);
    gsl_rng_free(r);
    free(perm);
    o->draw = d;
    o->n_draws = n;
    o->draw_seed = seed;
    return 0;
}

void
pfs_synth_flags(const struct pfs_synth_options *o, char *buf, size_t size)
{
    size_t at = 0;

    buf[0] = '\0';
    if (fabs(o->unseen_scale - 1) > 0)
        at += (size_t)snprintf(buf + at, size - at, " --unseen-scale %g", o->unseen_scale);
    if (at < size && fabs(o->telemetry_noise - 1) > 0)
        at += (size_t)snprintf(buf + at, size - at, " --telemetry-noise %g", o->telemetry_noise);
    if (at < size && o->telemetry_window_s > 0)
        at +=
            (size_t)snprintf(buf + at, size - at, " --telemetry-window %g", o->telemetry_window_s);
    if (at < size && o->n_draws > 0)
        snprintf(buf + at, size - at, " --draw %zu/%zu --draw-seed %lu", o->draw + 1, o->n_draws,
                 o->draw_seed);
}

int
pfs__synth_truth(const struct pfs_synth_options *o, struct pfs_jobset **jobs_out,
                 struct pfs_curveset **curves_out, struct pfs_dvfs_job *truth,
                 struct pfs_gpu *truth_gpu, struct pfs_diag *diag)
{
    /* With o->gpu every configuration runs on that GPU alone: no twins. */
    const size_t n_h200 = o->n_train + o->n_validation, n = n_h200 + (o->gpu ? 0 : o->n_transfer);
    struct config *cfg = NULL;
    size_t *order = NULL;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_gpu g_h100, g_h200;
    gsl_rng *r = NULL, *rw = NULL;
    int rc;

    *jobs_out = NULL;
    *curves_out = NULL;
    if (!(o->unseen_scale >= 0 && o->unseen_scale <= 10))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "unseen_scale",
                             "synth: the unseen-variation scale must be in [0, 10]");
    if (!(o->telemetry_noise >= 0 && o->telemetry_noise <= 100))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "telemetry_noise",
                             "synth: the telemetry noise must be in [0, 100]");
    if (!(o->telemetry_window_s >= 0 && o->telemetry_window_s <= 86400))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "telemetry_window",
                             "synth: the telemetry window must be 0 (the run) to 86400 s");
    for (size_t i = 0; i < PFS_MIX_N; i++)
        if (!(o->mix[i] >= mix_params[i].lo && o->mix[i] <= mix_params[i].hi))
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, mix_params[i].name,
                                 "synth: %s %g is outside its range [%g, %g]", mix_params[i].name,
                                 o->mix[i], mix_params[i].lo, mix_params[i].hi);
    if (n_h200 == 0 || (!o->gpu && o->n_transfer > n_h200) || n > 100000)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, NULL,
                             "synth: need 1 to 100000 H200 jobs and no more H100 twins than "
                             "H200 jobs");
    if ((rc = pfs_gpu_find("h100-sxm", &g_h100, diag)) ||
        (rc = pfs_gpu_find("h200-sxm", &g_h200, diag)))
        return rc;
    cfg = calloc(n_h200, sizeof *cfg);
    order = calloc(n_h200, sizeof *order);
    js = calloc(1, sizeof *js);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    rw = gsl_rng_alloc(gsl_rng_mt19937);
    if (!cfg || !order || !js || !r || !rw || (js->jobs = calloc(n, sizeof *js->jobs)) == NULL ||
        pfs_curveset_new(&cs) != 0) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    gsl_rng_set(r, o->seed);
    /* The readings' windows from a stream of their own: the corpus is the same but for them. */
    gsl_rng_set(rw, pfs__fnv1a_str(o->seed, "telemetry window"));
    js->n_jobs = n;
    for (size_t i = 0; i < n_h200; i++)
        draw_config(r, o, &cfg[i]);
    /* The twins: a seeded choice of distinct H200 configurations. */
    for (size_t i = 0; i < n_h200; i++)
        order[i] = i;
    gsl_ran_shuffle(r, order, n_h200, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        struct pfs_corpus_job *j = &js->jobs[i];
        bool h200 = i < n_h200;
        size_t ci = h200 ? i : order[i - n_h200];

        if (o->gpu) {
            char prefix[16];

            /* b200-001: the profile's name up to its first '-' */
            snprintf(prefix, sizeof prefix, "%.*s", (int)strcspn(o->gpu->name, "-"), o->gpu->name);
            snprintf(j->job_id, sizeof j->job_id, "%.15s-%03u", prefix, (unsigned)(i + 1));
            pfs__strlcpy(j->split, i < o->n_train ? "train" : "validation", sizeof j->split);
        } else if (h200) {
            snprintf(j->job_id, sizeof j->job_id, "h200-%03zu", i + 1);
            pfs__strlcpy(j->split, i < o->n_train ? "train" : "validation", sizeof j->split);
        } else {
            snprintf(j->job_id, sizeof j->job_id, "h100-%03zu", i - n_h200 + 1);
            pfs__strlcpy(j->split, "transfer", sizeof j->split);
            snprintf(j->twin_id, sizeof j->twin_id, "h200-%03zu", ci + 1);
        }
        rc = measure(r, rw, o, &cfg[ci],
                     o->gpu ? o->gpu
                     : h200 ? &g_h200
                            : &g_h100,
                     j, cs, truth ? &truth[i] : NULL, truth_gpu ? &truth_gpu[i] : NULL, diag);
        if (rc)
            goto out;
    }
    *jobs_out = js;
    *curves_out = cs;
    js = NULL;
    cs = NULL;
    rc = 0;
out:
    if (r)
        gsl_rng_free(r);
    if (rw)
        gsl_rng_free(rw);
    free(cfg);
    free(order);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rc;
}

int
pfs_synth(const struct pfs_synth_options *o, struct pfs_jobset **jobs, struct pfs_curveset **curves,
          struct pfs_diag *diag)
{
    return pfs__synth_truth(o, jobs, curves, NULL, NULL, diag);
}
