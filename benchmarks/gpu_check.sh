#!/usr/bin/env bash
# GPU session check for gpuboost: run from the repository root on a machine with an
# NVIDIA GPU.  Installs nothing.
#
#   bash benchmarks/gpu_check.sh [--quick] [--out DIR] [--parity-rows N]
#                                [--parity-devices cpu,cuda] [--bench-args "ARGS"] [--no-model]
#
# Steps (a failing step never stops the later ones):
#   0. gpuboost doctor: the device's name and compute capability, every kernel compiled
#      for its architecture, the parity checks (exp/log objectives with eval sets too) and
#      the verdict "supported"
#   1. nvidia-smi: GPU name, driver, memory
#   2. python -c "import cupy" (+ device count, CUDA runtime; gpuboost.cuda_available();
#      xgboost version and whether it was built with CUDA -- informational)
#   3. python -m pytest -q -m gpu            (tests marked gpu; none collected = NONE):
#      CPU == GPU models for every objective, device memory, out-of-memory errors, a
#      second GPU (cuda:1), device-resident input (CuPy, __cuda_array_interface__,
#      DLPack, cuDF: no host copy, device predictions) and the thread-block clusters'
#      placement (cuOccupancyMaxActiveClusters) -- issue 29's checks, before the
#      benchmarks
#   3b. python benchmarks/dask_scaling.py --cuda   (dask-cuda LocalCUDACluster, one worker
#      per GPU, device='cuda': the distributed model against single-GPU training, byte
#      for byte, and xgboost.dask on the same cluster; SKIP without dask-cuda)
#   4. python benchmarks/gpu_parity.py --rows N   (default 1000000: CPU vs CUDA models,
#      squared error, logistic and squared error with categorical columns byte-identical:
#      docs/DESIGN.md "Platform-independent arithmetic", "Categorical features")
#   5. python benchmarks/device_ops.py --rows 200000 --configs "binary depth 8"
#      (the emulation's traffic model of the benchmark's round, on the CPU; skipped with
#      --no-model)
#   6. python benchmarks/gpu_bench.py [--quick] --profile --phases --model DIR/device_ops.json
#      (1M x 28, 10M x 28, 1M x 200 against XGBoost device='cuda'; --quick: 1M x 28 only;
#      per phase the modeled and the measured time side by side, and XGBoost's: the
#      figures that calibrate the model, docs/DESIGN.md "GPU performance model"; the
#      host functions with the most own time per round)
#   7. the table: step, result (PASS / FAIL / figures), seconds -- printed LAST.
# Logs and JSON go to DIR (default benchmarks/out/gpu_check, git-ignored).
# Exit status: 0 when every step passed, 1 otherwise.
# STEP_TIMEOUT (seconds, default 1800) bounds every step.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1

QUICK=0
OUT_DIR="benchmarks/out/gpu_check"
PARITY_ROWS=1000000
PARITY_DEVICES="cpu,cuda"
BENCH_EXTRA=""
MODEL=1
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --out) OUT_DIR="$2"; shift ;;
        --parity-rows) PARITY_ROWS="$2"; shift ;;
        --parity-devices) PARITY_DEVICES="$2"; shift ;;   # e.g. cpu,cpu to try the script
        --bench-args) BENCH_EXTRA="$2"; shift ;;          # e.g. "--dry-run", "--phases"
        --no-model) MODEL=0 ;;
        -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
    shift
done
STEP_TIMEOUT="${STEP_TIMEOUT:-1800}"
PYTHON="${PYTHON:-python}"
mkdir -p "$OUT_DIR"

STEPS=()
RESULTS=()
SECONDS_TAKEN=()
ANY_FAILED=0

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# run_step NAME LOGFILE COMMAND...: runs COMMAND with a timeout, output to the terminal
# and to LOGFILE; sets STEP_RC.
run_step() {
    local name="$1" log="$2"
    shift 2
    echo
    echo "=== $name: $* ==="
    if command -v timeout >/dev/null 2>&1; then
        timeout "$STEP_TIMEOUT" "$@" 2>&1 | tee "$log"
    else
        "$@" 2>&1 | tee "$log"
    fi
    STEP_RC=${PIPESTATUS[0]}
    if [ "$STEP_RC" -eq 124 ]; then
        echo "($name timed out after ${STEP_TIMEOUT} s)"
    fi
}

record() {  # record NAME RESULT SECONDS FAILED(0/1)
    STEPS+=("$1")
    RESULTS+=("$2")
    SECONDS_TAKEN+=("$3")
    if [ "$4" -ne 0 ]; then ANY_FAILED=1; fi
}

# ---- 0. gpuboost doctor ---------------------------------------------------------------
t0=$(now)
run_step "gpuboost doctor" "$OUT_DIR/doctor.log" "$PYTHON" -m gpuboost.cli doctor
verdict=$(grep -E "^supported:" "$OUT_DIR/doctor.log" | tail -n 1)
if [ "$STEP_RC" -eq 0 ] && echo "$verdict" | grep -q "^supported: yes"; then
    record "0 gpuboost doctor" "PASS: $verdict" "$(elapsed "$t0")" 0
else
    record "0 gpuboost doctor" "FAIL (status $STEP_RC): $verdict" "$(elapsed "$t0")" 1
fi

# ---- 1. nvidia-smi ---------------------------------------------------------------
t0=$(now)
if command -v nvidia-smi >/dev/null 2>&1; then
    run_step "nvidia-smi" "$OUT_DIR/nvidia_smi.log" \
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    if [ "$STEP_RC" -eq 0 ]; then
        record "1 nvidia-smi" "PASS: $(head -n 1 "$OUT_DIR/nvidia_smi.log")" "$(elapsed "$t0")" 0
    else
        record "1 nvidia-smi" "FAIL (status $STEP_RC)" "$(elapsed "$t0")" 1
    fi
else
    echo "nvidia-smi not found"
    record "1 nvidia-smi" "FAIL (nvidia-smi not found)" "$(elapsed "$t0")" 1
fi

# ---- 2. cupy ---------------------------------------------------------------------
t0=$(now)
run_step "import cupy" "$OUT_DIR/cupy.log" "$PYTHON" -c '
import cupy
print("cupy", cupy.__version__, "devices", cupy.cuda.runtime.getDeviceCount(),
      "runtime", cupy.cuda.runtime.runtimeGetVersion())
import gpuboost
print("gpuboost", gpuboost.__version__, "cuda_available", gpuboost.cuda_available())
try:
    import xgboost
    print("xgboost", xgboost.__version__, "USE_CUDA", xgboost.build_info().get("USE_CUDA"))
except Exception as error:
    print("xgboost not usable:", error)
'
if [ "$STEP_RC" -eq 0 ]; then
    record "2 import cupy" "PASS: $(head -n 1 "$OUT_DIR/cupy.log")" "$(elapsed "$t0")" 0
else
    record "2 import cupy" "FAIL (status $STEP_RC)" "$(elapsed "$t0")" 1
fi

# ---- 3. pytest -m gpu ----------------------------------------------------------------
t0=$(now)
run_step "pytest -m gpu" "$OUT_DIR/pytest_gpu.log" "$PYTHON" -m pytest -q -m gpu
summary=$(grep -E "(passed|failed|error|skipped|no tests ran|deselected)" "$OUT_DIR/pytest_gpu.log" \
          | tail -n 1 | sed 's/=//g; s/^ *//; s/ *$//')
case "$STEP_RC" in
    0) if echo "$summary" | grep -q "passed"; then
           record "3 pytest -m gpu" "PASS: $summary" "$(elapsed "$t0")" 0
       else  # every gpu test skipped: the GPU is not usable from the tests
           record "3 pytest -m gpu" "FAIL (all skipped): $summary" "$(elapsed "$t0")" 1
       fi ;;
    5) record "3 pytest -m gpu" "NONE: no tests marked gpu ($summary)" "$(elapsed "$t0")" 0 ;;
    *) record "3 pytest -m gpu" "FAIL (status $STEP_RC): $summary" "$(elapsed "$t0")" 1 ;;
esac

# ---- 3b. multi-GPU training on dask-cuda ----------------------------------------------
t0=$(now)
run_step "dask-cuda" "$OUT_DIR/dask_cuda.log" "$PYTHON" benchmarks/dask_scaling.py --cuda \
    --rows "$( [ "$QUICK" -eq 1 ] && echo 200000 || echo 1000000 )" --rounds 10 \
    --json "$OUT_DIR/dask_cuda.json"
skip=$(grep -E "^SKIP:" "$OUT_DIR/dask_cuda.log" | head -n 1)
run_line=$(grep -E "^workers=" "$OUT_DIR/dask_cuda.log" | head -n 1)
if [ -n "$skip" ]; then
    record "3b dask-cuda" "$skip" "$(elapsed "$t0")" 0
elif [ "$STEP_RC" -eq 0 ]; then
    record "3b dask-cuda" "PASS: $run_line" "$(elapsed "$t0")" 0
else
    record "3b dask-cuda" "FAIL (status $STEP_RC): $run_line" "$(elapsed "$t0")" 1
fi

# ---- 4. CPU/GPU parity at scale --------------------------------------------------------
t0=$(now)
run_step "parity" "$OUT_DIR/parity.log" "$PYTHON" benchmarks/gpu_parity.py \
    --rows "$PARITY_ROWS" --devices "$PARITY_DEVICES" --json "$OUT_DIR/parity.json"
detail=$(grep -E "^(reg:|binary:)" "$OUT_DIR/parity.log" | awk '{ printf "%s%s %s", sep, $1, $2; sep="; " }')
if [ "$STEP_RC" -eq 0 ]; then
    record "4 parity ${PARITY_ROWS} rows" "PASS: $detail" "$(elapsed "$t0")" 0
else
    record "4 parity ${PARITY_ROWS} rows" "FAIL (status $STEP_RC): $detail" "$(elapsed "$t0")" 1
fi

# ---- 5. the traffic model of the benchmark's round (emulation, CPU) ------------------------
MODEL_JSON="$OUT_DIR/device_ops.json"
if [ "$MODEL" -eq 1 ]; then
    t0=$(now)
    run_step "traffic model" "$OUT_DIR/device_ops.log" "$PYTHON" benchmarks/device_ops.py \
        --rows 200000 --configs "binary depth 8" --json "$MODEL_JSON"
    modeled=$(grep -E "^\| binary depth 8 \|" "$OUT_DIR/device_ops.log" | head -n 1 \
              | awk -F'|' '{ gsub(/ /, "", $8); gsub(/ /, "", $10); gsub(/ /, "", $11);
                             printf "%s MB/round, %s x floor, %s ms/round modeled at 200k rows", $8, $10, $11 }')
    if [ "$STEP_RC" -eq 0 ]; then
        record "5 traffic model" "RAN: $modeled" "$(elapsed "$t0")" 0
    else
        record "5 traffic model" "FAIL (status $STEP_RC)" "$(elapsed "$t0")" 1
        MODEL=0
    fi
fi

# ---- 6. GPU benchmark ---------------------------------------------------------------------
t0=$(now)
BENCH_ARGS=(--json "$OUT_DIR/gpu_bench.json" --profile)
if [ "$MODEL" -eq 1 ]; then BENCH_ARGS+=(--phases --model "$MODEL_JSON"); fi
if [ "$QUICK" -eq 1 ]; then BENCH_ARGS+=(--quick); fi
if [ -n "$BENCH_EXTRA" ]; then read -r -a extra <<< "$BENCH_EXTRA"; BENCH_ARGS+=("${extra[@]}"); fi
run_step "gpu benchmark" "$OUT_DIR/gpu_bench.log" "$PYTHON" benchmarks/gpu_bench.py "${BENCH_ARGS[@]}"
targets=$(grep -E "^TARGETS:" "$OUT_DIR/gpu_bench.log" | tail -n 1 | sed 's/^TARGETS: //')
model_lines=$(grep -E "^MODEL:" "$OUT_DIR/gpu_bench.log" | sed 's/^MODEL: //' | paste -sd ';' -)
figures=$(grep -E "^\| [0-9]" "$OUT_DIR/gpu_bench.log" | awk -F'|' 'NF > 10 {
    gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $5); gsub(/ /, "", $10);
    printf "%s%s %s ms/round, %s vs xgboost, %s floor", sep, $2, $3, $5, $10; sep="; " }')
if [ -n "$model_lines" ]; then figures="${figures}] [model vs measured: ${model_lines}"; fi
if [ "$STEP_RC" -eq 0 ]; then
    record "6 gpu benchmark" "RAN: ${targets:-no TARGETS line} [${figures}]" "$(elapsed "$t0")" 0
else
    record "6 gpu benchmark" "FAIL (status $STEP_RC): ${targets:-no TARGETS line}" "$(elapsed "$t0")" 1
fi

# ---- 7. the table (LAST) ------------------------------------------------------------------
echo
echo "Logs and JSON: $OUT_DIR"
echo
echo "| step | result | seconds |"
echo "|---|---|---|"
for i in "${!STEPS[@]}"; do
    echo "| ${STEPS[$i]} | ${RESULTS[$i]} | ${SECONDS_TAKEN[$i]} |"
done
if [ "$ANY_FAILED" -ne 0 ]; then
    echo "gpu_check: some steps FAILED"
    exit 1
fi
echo "gpu_check: all steps passed"
exit 0
