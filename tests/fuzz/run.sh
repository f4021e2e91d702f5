#!/bin/sh
# tests/fuzz/run.sh SECONDS NAME... - runs each libFuzzer harness (build/fuzz/fuzz-NAME) for
# SECONDS on its corpus, and prints one line per harness: executions, corpus size, result.
# FUZZ_JOBS=N runs N harnesses at a time (default 1); FUZZ_OUT=DIR takes the binaries from
# DIR and keeps corpora and logs there (default build/fuzz).
#
# Seeds come from the project's own files (the shipped corpus, configs, test data) and, when
# the data directory ($PFISIM_DATA, default ../shared/data) is there, the head of its real
# files; they are copied into build/fuzz/seeds/NAME, an ignored build output, never into the
# repository. What a run finds grows build/fuzz/corpus/NAME, kept between runs. A crash
# leaves build/fuzz/crash-NAME-* and makes this script exit 1.
set -u
if [ "$1" = --one ]; then
    one=1
    shift
else
    one=0
fi
secs=$1
shift
data=${PFISIM_DATA:-../shared/data}
out=${FUZZ_OUT:-build/fuzz}
status=0

# seed NAME FILE [LINES]: the first LINES (default 40) lines of FILE, when it exists.
seed() {
    [ -f "$2" ] || return 0
    mkdir -p "$out/seeds/$1"
    head -n "${3:-40}" "$2" >"$out/seeds/$1/$(echo "$2" | tr '/' '_')"
}

# seed_text NAME FILENAME TEXT: a small seed written here (formats with no file in the tree).
seed_text() {
    mkdir -p "$out/seeds/$1"
    printf '%b' "$3" >"$out/seeds/$1/$2"
}

make_seeds() {
    # What fuzzing once found (tests/fuzz/regress/NAME/), kept as seeds so that it stays fixed.
    for d in tests/fuzz/regress/*/; do
        n=$(basename "$d")
        mkdir -p "$out/seeds/$n"
        cp "$d"* "$out/seeds/$n/"
    done
    for f in traces/h200-h100/curves.csv traces/h200-h100/jobs.csv configs/phoenix-workload.csv \
        tests/data/h200-mlp-nvidia-smi.csv; do
        seed csv "$f" 20
    done
    seed curves traces/h200-h100/curves.csv 60
    seed jobs traces/h200-h100/jobs.csv 20
    seed workload configs/phoenix-workload.csv 30
    seed_text trace kalos.csv 'submit_offset_s,duration_s,gpu_num\n0,3600,8\n60,120,1\n61,0,4\n'
    seed trace "$data/jobs/acmetrace-kalos/kalos_completed_llm_jobs.csv" 50
    seed nvidia_smi tests/data/h200-mlp-nvidia-smi.csv 60
    seed_text dcgm dmon.txt '#Entity   POWER    TMPTR  SMACT  SMOCC  TENSO  DRAMA  NVLTX  NVLRX\nID        W        C\nGPU 0     76.000   33     0.000  0.000  0.000  0.000  0  0\nGPU 0     400.000  60     0.900  0.400  0.500  0.300  100  50\nGPU 1     500.000  61     0.700  0.300  N/A    0.500  0  0\nGPU 0     410.000  60     0.900  0.400  0.500  0.300  100  50\n'
    for f in "$data"/power/perseus-sosp24/*.csv; do seed perseus "$f" 30; done
    for f in "$data"/power/zeus-nsdi23/*.csv; do seed zeus "$f" 30; done
    seed emerald "$data/emerald-phoenix/dvfs_sweep.csv" 40
    seed_text grid srp.csv 'date,hour,SRP Actual\n2025-05-03,14,4.5\n2025-05-03,15,4.7\n2025-05-03,16,4.8\n2025-05-03,17,4.2\n'
    seed grid "$data/emerald-phoenix/SRP_0503.csv" 30
    for f in configs/gpus/*.cfg; do seed gpu "$f" 200; done
    for f in configs/default.cfg configs/phoenix-srp.cfg configs/power-tree.cfg configs/sweeps/*-base.cfg; do
        seed scenario "$f" 400
    done
    for f in configs/sweeps/*.cfg; do seed sweep "$f" 400; done
    seed predictor traces/h200-h100/predictor.cfg 400
    seed_text json answer.json '{"decision":1,"cap_w":[700,0.10000000000000001,-2.5e-3],"pause_frac":[0,1,0.5]}'
    seed_text exec_answer answer.json '{"decision":1,"cap_w":[400,100,1000],"pause_frac":[0,0.5,0]}'
    seed_text exec_answer tight.json '{"decision":1,"cap_w":[200,400,200]}'
    seed_text exec_answer infeasible.json '{"decision":1,"infeasible":"below the minimum caps"}'
    seed_text exec_answer hello.json '{"protocol":1,"name":"equal-py","summary":"s","may_pause":true,"memoryless":false}'
    # results_db: a first byte and records (tests/fuzz/fuzz.c): none, an infinity into the
    # summary, a text tier, a deleted run, a few bytes corrupted
    seed_text results_db none.bin '\006'
    seed_text results_db inf.bin '\000\000\001\001\002\000\000\000\000\000\000\000\000'
    seed_text results_db tier.bin '\000\001\000\003\003goldtier'
    seed_text results_db orphan.bin '\000\003\000\001\007\000\000\000\000\000\000\000\000'
    seed_text results_db bytes.bin '\007\000\001\377\200\000\125\377\377\001'
    seed_text json hello.json '{"protocol":1,"name":"equal-py","summary":"a \\u00e9 \\"q\\" \\ud83d\\ude00","may_pause":false,"memoryless":true,"x":null,"y":[[],{}]}'
}

LSAN_OPTIONS=suppressions=$(pwd)/tests/lsan.supp:print_suppressions=0
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS UBSAN_OPTIONS

if [ "$one" = 0 ]; then
    make_seeds
    printf '%s\n' "$@" | xargs -P "${FUZZ_JOBS:-1}" -I{} sh "$0" --one "$secs" {} || exit 1
    exit 0
fi
name=$1
bin=$out/fuzz-$name
corpus=$out/corpus/$name
log=$out/fuzz-$name.log
mkdir -p "$corpus" "$out/seeds/$name"
"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$out/crash-$name-" "$corpus" \
    "$out/seeds/$name" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
files=$(ls "$corpus" | wc -l)
if [ "$rc" -eq 0 ]; then
    printf 'fuzz %-11s %10s executions in %ss, corpus %s files: nothing found\n' \
        "$name" "${runs:-?}" "$secs" "$files"
    exit 0
fi
printf 'fuzz %-11s FAILED (exit %s) after %s executions; see %s\n' "$name" "$rc" \
    "${runs:-?}" "$log"
grep -m 5 -E 'ERROR|property violated|SUMMARY' "$log" | sed 's/^/    /'
exit 1
