#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, after scripts/gpu-pack.sh filled .gpu/:
#   bash packages/cuda/scripts/device-run.sh build smoke checks deepseek conformance
#   bash packages/cuda/scripts/device-run.sh clib       (= build exports abi-fuzz python pack: the shared library,
#                                                          its exports, the Python package)
#   bash packages/cuda/scripts/device-run.sh issue5     (= build smoke contig2 contig4 baseline bench
#                                                          conformance-contig conformance-contig-2gpu pack)
#   bash packages/cuda/scripts/device-run.sh exact      (= build contig4 contig4-bounded conformance-exact
#                                                          conformance-exact-bounded conformance-exact-2gpu pack)
#   bash packages/cuda/scripts/device-run.sh issue6     (= build abi-fuzz faults cycles soak
#                                                          conformance-stats fuzz soak-contig pack)
#   bash packages/cuda/scripts/device-run.sh v3         (= build checks4 bench contig4 conformance abi-fuzz
#                                                          cycles missing-rank-deep pack)
#   bash packages/cuda/scripts/device-run.sh bounded    (= build checks4 contig4 contig4-bounded contig2-bounded
#                                                          conformance-bounded soak-contig pack)
# Every step logs to $OUT/<step>.log (what the device tool brings back) and is bounded by `timeout`;
# all steps together stay within SWITCHYARD_DEADLINE seconds (default 570, the device tool allows 600):
# a step that would not fit is skipped and says so.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/switchyard-out}
mkdir -p "$OUT"
source .gpu/env.sh >"$OUT/env.log" 2>&1
cat "$OUT/env.log"
tar xf .gpu/app.tar
gpus=$(nvidia-smi -L | wc -l)
{ nvidia-smi -L; nvidia-smi topo -m; git rev-parse HEAD 2>/dev/null || true; } >"$OUT/machine.log" 2>&1
cli=packages/cuda/dist/cli.js
conf=packages/conformance/dist/cli/main.js
deadline=${SWITCHYARD_DEADLINE:-570}
[ -f .gpu/commit ] && export SWITCHYARD_COMMIT="$(cat .gpu/commit)"
status=0
step() { # name timeout command...
  local name=$1 t=$2
  shift 2
  local left=$((deadline - SECONDS - 15))
  if [ "$left" -lt 30 ]; then
    echo "=== $name: skipped, $((deadline - SECONDS)) s left of the ${deadline} s deadline" | tee -a "$OUT/summary.txt"
    status=1
    return 1
  fi
  [ "$t" -gt "$left" ] && t=$left
  echo "=== $name: $* (timeout $t s)"
  local t0=$SECONDS
  timeout --kill-after=10 "$t" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$OUT/$name.log"
  echo "=== $name: rc=$rc in $((SECONDS - t0)) s"
  echo "$name: rc=$rc in $((SECONDS - t0)) s" >>"$OUT/summary.txt"
  # The checks' verdict lines (PASS / FAIL ...) into the summary too, at most 12 per step.
  grep -E '^(PASS|FAIL)' "$OUT/$name.log" 2>/dev/null | cut -c1-400 | tail -n 12 | sed 's/^/  /' >>"$OUT/summary.txt"
  [ $rc = 0 ] || status=1
  return $rc
}
steps=()
for s in "$@"; do
  if [ "$s" = clib ]; then
    steps+=(build exports abi-fuzz python pack)
  elif [ "$s" = issue5 ]; then
    steps+=(build smoke contig2 contig4 baseline bench conformance-contig conformance-contig-2gpu pack)
  elif [ "$s" = v3 ]; then
    # Kernel version 3 (NOTES.md): correctness of both layouts first, then the bench, then the deep
    # missing-rank property with whatever time is left (it prints progress and reports if cut).
    steps+=(build checks4 bench contig4 conformance abi-fuzz cycles missing-rank-deep pack)
  elif [ "$s" = bounded ]; then
    # Bounded staging (2026-11-22): the masked checks (quantize.cu merged), contiguous whole and
    # bounded, the quick suite bounded, then the 100,000-step soak with the layout changing every step.
    steps+=(build checks4 contig4 contig4-bounded contig2-bounded conformance-bounded soak-contig pack)
  elif [ "$s" = exact ]; then
    # Exact-size output (2026-11-22, second session): the contiguous checks (worst-case mode
    # unchanged), then the suite with every contiguous session exact, whole and bounded, 4 and 2 GPUs.
    steps+=(build contig4 contig4-bounded conformance-exact conformance-exact-bounded conformance-exact-2gpu pack)
  elif [ "$s" = issue6 ]; then
    # Most telling first: a step that would not fit in the deadline is skipped, not cut.
    steps+=(build abi-fuzz faults cycles soak conformance-stats fuzz soak-contig pack)
  else
    steps+=("$s")
  fi
done
for s in "${steps[@]}"; do
  case $s in
    build) step build 300 env SWITCHYARD_PTXAS_VERBOSE=1 bash packages/cuda/scripts/build-native.sh || exit 1
      grep -E "Compiling entry|registers" "$OUT/build.log" | sed 's/^ptxas info *: //' >"$OUT/registers.log" || true ;;
    checks4) step checks4 300 node "$cli" checks --ranks 4 --json "$OUT/checks4.json" ;;
    missing-rank-deep) # all the time left (the property kills a world per case: ~2 s each, 150 cases)
      if [ ! -f "$conf" ]; then echo "=== $s: $conf not built; skipped"; continue; fi
      step missing-rank-deep $((deadline - SECONDS - 20)) node "$conf" conformance --backend cuda --deep \
        --only session/missing-rank --json "$OUT/missing-rank-deep.json" ;;
    smoke) step smoke 120 node "$cli" checks --ranks 2 --only 0 ;;
    checks) step checks2 300 node "$cli" checks --ranks 2 --json "$OUT/checks2.json"
      [ "$gpus" -ge 4 ] && step checks4 300 node "$cli" checks --ranks 4 --json "$OUT/checks4.json" ;;
    deepseek) step deepseek 300 node "$cli" deepseek --ranks 4 --replays 200 --json "$OUT/deepseek.json" ;;
    contig2) # the contiguous layout against core's reference: eager step + graph replays, timeouts
      step contig2 150 node "$cli" checks --ranks 2 --layout contiguous --json "$OUT/contig2.json" ;;
    contig4) [ "$gpus" -ge 4 ] && step contig4 150 node "$cli" checks --ranks 4 --layout contiguous --json "$OUT/contig4.json" ;;
    contig2-bounded | contig4-bounded) # the same with bounded staging: 8 tokens per round (up to 88 rounds a step)
      n=${s:6:1}
      [ "$gpus" -ge "$n" ] && step "$s" 150 env SWITCHYARD_CUDA_STAGING_TOKENS=8 node "$cli" checks --ranks "$n" \
        --layout contiguous --json "$OUT/$s.json" ;;
    conformance-bounded) # the quick suite, contiguous worlds with bounded staging of 3 tokens per round
      if [ ! -f "$conf" ]; then echo "=== $s: $conf not built; skipped"; continue; fi
      step "$s" "${CONFORMANCE_TIMEOUT:-200}" env SWITCHYARD_CUDA_STAGING_TOKENS=3 node "$conf" conformance \
        --backend cuda --json "$OUT/$s.json" ;;
    conformance-exact | conformance-exact-bounded | conformance-exact-2gpu)
      # the quick suite with exact-size output for every contiguous session (SWITCHYARD_CUDA_OUTPUT):
      # at 4 GPUs, at 4 with bounded staging of 3 tokens a round, and at 2
      if [ ! -f "$conf" ]; then echo "=== $s: $conf not built; skipped"; continue; fi
      extra=()
      [ "$s" = conformance-exact-bounded ] && extra=(SWITCHYARD_CUDA_STAGING_TOKENS=3)
      [ "$s" = conformance-exact-2gpu ] && extra=(CUDA_VISIBLE_DEVICES=0,1)
      step "$s" "${CONFORMANCE_TIMEOUT:-200}" env SWITCHYARD_CUDA_OUTPUT=exact "${extra[@]}" node "$conf" conformance \
        --backend cuda --json "$OUT/$s.json" ;;
    baseline) # the NCCL baseline against core's reference (before its times mean anything)
      step baseline 120 node "$cli" baseline --ranks "$([ "$gpus" -ge 4 ] && echo 4 || echo 2)" --json "$OUT/baseline.json" ;;
    bench) # switchyard bench through the CLI users run (the conformance package's), else the cuda CLI
      bench_cli=("$cli" bench)
      [ -f "$conf" ] && bench_cli=("$conf" bench)
      step bench "${BENCH_TIMEOUT:-240}" node "${bench_cli[@]}" --json "$OUT/bench.json" --svg "$OUT/bench.svg" ${BENCH_ARGS:-} ;;
    conformance-contig | conformance-contig-2gpu)
      if [ ! -f "$conf" ]; then echo "=== $s: $conf not built; skipped"; continue; fi
      vis=()
      [ "$s" = conformance-contig-2gpu ] && vis=(CUDA_VISIBLE_DEVICES=0,1)
      step "$s" "${CONFORMANCE_TIMEOUT:-150}" env "${vis[@]}" node "$conf" conformance --backend cuda --json "$OUT/$s.json" ;;
    conformance | conformance-deep | conformance-2gpu | conformance-deep-2gpu)
      # The suite picks world sizes up to the backend's maxRanks (= visible GPUs): 1..4 here,
      # and 1..2 with CUDA_VISIBLE_DEVICES=0,1.
      conf=packages/conformance/dist/cli/main.js
      if [ ! -f "$conf" ]; then echo "=== $s: $conf not built; skipped"; continue; fi
      case $s in
        conformance) step conformance "${CONFORMANCE_TIMEOUT:-300}" node "$conf" conformance --backend cuda --json "$OUT/conformance.json" ;;
        conformance-deep) step conformance-deep "${CONFORMANCE_DEEP_TIMEOUT:-540}" node "$conf" conformance --backend cuda --deep --json "$OUT/conformance-deep.json" ;;
        conformance-2gpu) step conformance-2gpu "${CONFORMANCE_TIMEOUT:-300}" env CUDA_VISIBLE_DEVICES=0,1 node "$conf" conformance --backend cuda --json "$OUT/conformance-2gpu.json" ;;
        conformance-deep-2gpu) step conformance-deep-2gpu "${CONFORMANCE_DEEP_TIMEOUT:-540}" env CUDA_VISIBLE_DEVICES=0,1 node "$conf" conformance --backend cuda --deep --json "$OUT/conformance-deep-2gpu.json" ;;
      esac ;;
    exports) # libswitchyard_cuda.so exports exactly the SY_API functions, soname carries SY_ABI_VERSION
      step exports 30 bash packages/cuda/scripts/check-exports.sh packages/cuda/build/libswitchyard_cuda.so ;;
    python) # the Python package: pytest on one GPU, then the MoE layer example under torchrun on every GPU
      step python 300 bash packages/cuda/python/scripts/gpu-test.sh "$OUT" ;;
    abi-fuzz) # the C ABI fuzzer (build/abi_fuzz) on GPU 0 (GPU 1 for the other-device pointers)
      step abi-fuzz 120 node "$cli" abi-fuzz --iterations 400 --json "$OUT/abi-fuzz.json" ;;
    faults) # one rank killed / stalled in each phase; the others must fail naming it and the stage; recovery
      step faults 240 node "$cli" faults --timeout-ms 1000 --json "$OUT/faults.json" ;;
    cycles) # 1,000 session create / destroy cycles, memory before / after
      step cycles 150 node "$cli" cycles --count "${CYCLES:-1000}" --json "$OUT/cycles.json" ;;
    soak) # masked, every step checked against the reference; cut (and said so) at --max-seconds
      step soak 180 node "$cli" soak --steps "${SOAK_STEPS:-100000}" --max-seconds "${SOAK_SECONDS:-130}" --json "$OUT/soak.json" ;;
    soak-contig) # masked and contiguous alternating, layouts changing every step (SOAK_CONTIG_STEPS, default 100,000);
      # contiguous with bounded staging of SOAK_CONTIG_STAGING tokens per round (default 12: 3 rounds of M = 32)
      secs=${SOAK_CONTIG_SECONDS:-150}
      step soak-contig $((secs + 30)) env SWITCHYARD_CUDA_STAGING_TOKENS="${SOAK_CONTIG_STAGING:-12}" node "$cli" soak --steps "${SOAK_CONTIG_STEPS:-100000}" --max-seconds "$secs" \
        --json "$OUT/soak-contig.json" ;;
    conformance-stats) # the quick suite with the per-peer stats declared (session/stats runs)
      if [ ! -f "$conf" ]; then echo "=== $s: $conf not built; skipped"; continue; fi
      step conformance-stats 150 node "$conf" conformance --backend cuda --json "$OUT/conformance-stats.json" ;;
    fuzz) # conformance's fuzzBackend against cudaBackend (the public TypeScript API)
      step fuzz 150 node "$cli" fuzz --runs "${FUZZ_RUNS:-20}" --max-hidden 512 --json "$OUT/fuzz.json" ;;
    pack) # at most 8 files come back from the device tool: logs and JSON into one archive; the
      # bench's JSON and SVG and the summary stay beside it
      (cd "$OUT" && tar czf logs.tgz --exclude=logs.tgz ./*.log ./*.json 2>/dev/null &&
        find . -maxdepth 1 -type f ! -name logs.tgz ! -name '*summary*' ! -name bench.json ! -name bench.svg -delete) ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
