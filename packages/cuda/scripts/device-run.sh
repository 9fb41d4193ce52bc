#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, after scripts/gpu-pack.sh filled .gpu/:
#   bash packages/cuda/scripts/device-run.sh smoke    (= build checks1 contig1 checks2 contig2 mps-on checks4 contig4 mps-off pack)
#   bash packages/cuda/scripts/device-run.sh full     (= build conformance1 conformance2 mps-on conformance4 mps-off pack)
#   bash packages/cuda/scripts/device-run.sh bench    (= build bench1 bench2 mps-on bench4 mps-off pack)
#   bash packages/cuda/scripts/device-run.sh stress   (= build abi-fuzz faults soak-contig pack)
#   bash packages/cuda/scripts/device-run.sh nvlink   (= build checks-2gpu checks-2gpu-blocks1 contig-2gpu abi-fuzz faults-2gpu soak-2gpu pack:
#                                                       two GPUs, one rank each; steps named *-2gpu use GPUs 0 and 1)
#   bash packages/cuda/scripts/device-run.sh library  (= build exports c-example abi-fuzz python host-overhead pack:
#                                                       the shared library, its exports, a C program, the Python
#                                                       package, and what Python adds to a step over C)
#   bash packages/cuda/scripts/device-run.sh pip-install pack  (the Python package as pip builds and installs
#                                                       it, then the MoE example on GPUs 0 and 1: needs no build step)
#   bash packages/cuda/scripts/device-run.sh build deepep-test pack  (DeepEP's own low-latency test, unmodified,
#                                                       on switchyard_cuda.deep_ep: GPUs 0 and 1; needs .gpu/peers/)
# or any list of the steps below. A new kernel's first call: `build first-steps ...` (a hang costs a
# minute, not the call). One GPU is enough for every step: 2 ranks share it by time slices
# (SWITCHYARD_CUDA_RANKS_PER_GPU=2, no MPS), 4 ranks run under an MPS daemon (mps-on starts it,
# mps-off stops it; a step that fails leaves it running until mps-off or the end of the script).
# With N GPUs, steps named *1 / *2 / *4 still put that many ranks on GPU 0 (CUDA_VISIBLE_DEVICES=0).
# A step named <step>-put runs <step> with SWITCHYARD_TRANSPORT=put (every other rank through NVSHMEM
# puts: the path a peer on another host takes), its files in $OUT/put/ (e.g. checks-2gpu-put,
# conformance-deep-2gpu-put, faults-2gpu-put, soak-2gpu-put, bench-2gpu-put).
# Every step logs to $OUT/<step>.log (what comes back from the GPU machine) and is bounded by `timeout`;
# all steps together stay within SWITCHYARD_DEADLINE seconds (default 570, under a 600 s limit per command):
# a step that would not fit is skipped and says so.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/switchyard-out}
mkdir -p "$OUT"
OUT_MAIN=$OUT
summary=$OUT/summary.txt
source .gpu/env.sh >"$OUT/env.log" 2>&1
cat "$OUT/env.log"
tar xf .gpu/app.tar
{ nvidia-smi -L; nvidia-smi; git rev-parse HEAD 2>/dev/null || true; } >"$OUT/machine.log" 2>&1
cli=packages/cuda-rig/dist/cli.js
conf=packages/cli/dist/main.js
deadline=${SWITCHYARD_DEADLINE:-570}
[ -f .gpu/commit ] && export SWITCHYARD_COMMIT="$(cat .gpu/commit)"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
mps=0
status=0
step() { # name timeout command...
  local name=$1 t=$2
  shift 2
  local left=$((deadline - SECONDS - 15))
  if [ "$left" -lt 30 ]; then
    echo "=== $name: skipped, $((deadline - SECONDS)) s left of the ${deadline} s deadline" | tee -a "$summary"
    status=1
    return 1
  fi
  [ "$t" -gt "$left" ] && t=$left
  echo "=== $name: $* (timeout $t s)"
  local t0=$SECONDS
  timeout --kill-after=10 "$t" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 30 "$OUT/$name.log"
  echo "=== $name: rc=$rc in $((SECONDS - t0)) s"
  echo "$name${SWITCHYARD_TRANSPORT:+ (transport $SWITCHYARD_TRANSPORT)}: rc=$rc in $((SECONDS - t0)) s" >>"$summary"
  # The checks' verdict lines (PASS / FAIL ...) into the summary too, at most 16 per step.
  grep -E '^(PASS|FAIL|  (PASS|FAIL)|✓|✗|MET|MISS)' "$OUT/$name.log" 2>/dev/null | cut -c1-300 | tail -n 16 | sed 's/^/  /' >>"$summary"
  [ $rc = 0 ] || status=1
  return $rc
}
mps_on() {
  if [ $mps = 0 ]; then
    nvidia-cuda-mps-control -d && mps=1 && echo "mps: daemon started" | tee -a "$summary"
    sleep 1
  fi
}
mps_off() {
  if [ $mps = 1 ]; then
    echo quit | nvidia-cuda-mps-control && echo "mps: daemon stopped" | tee -a "$summary"
    mps=0
    sleep 1
  fi
}
trap mps_off EXIT
bench_peers() { # name json svg [bench flags...]: the bench on both GPUs, one rank each, with the peers'
  # packages (peers-build) and this build's Python package importable (the switchyard-py row)
  local name=$1 json=$2 svg=$3
  shift 3
  local bench_cli=("$cli" bench)
  [ -f "$conf" ] && bench_cli=("$conf" bench)
  step "$name" "${BENCH_TIMEOUT:-420}" env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 \
    SWITCHYARD_CUDA_LIB="$root/packages/cuda/build/libswitchyard_cuda.so.1" \
    PYTHONPATH="/tmp/peers/deepep:/tmp/peers/pplx/src:$root/packages/cuda/python:${PYTHONPATH:-}" LD_LIBRARY_PATH="/tmp/nvsh/lib:${LD_LIBRARY_PATH:-}" \
    node "${bench_cli[@]}" --ranks 2 "$@" --json "$json" --svg "$svg" ${BENCH_ARGS:-}
}
steps=()
for s in "$@"; do
  case $s in
    smoke) steps+=(build checks1 contig1 checks2 contig2 mps-on checks4 contig4 mps-off pack) ;;
    full) steps+=(build conformance1 conformance2 mps-on conformance4 mps-off pack) ;;
    bench) steps+=(build bench1 bench2 mps-on bench4 mps-off pack) ;;
    stress) steps+=(build abi-fuzz faults soak-contig pack) ;;
    library) steps+=(build exports c-example abi-fuzz python host-overhead pack) ;;
    nvlink) steps+=(build checks-2gpu checks-2gpu-blocks1 contig-2gpu abi-fuzz faults-2gpu soak-2gpu pack) ;;
    *) steps+=("$s") ;;
  esac
done
for s in "${steps[@]}"; do
  OUT=$OUT_MAIN
  unset SWITCHYARD_TRANSPORT
  if [ "${s%-put}" != "$s" ]; then
    s=${s%-put}
    export SWITCHYARD_TRANSPORT=put
    OUT=$OUT_MAIN/put
    mkdir -p "$OUT"
  fi
  case $s in
    build) step build 300 env SWITCHYARD_PTXAS_VERBOSE=1 bash packages/cuda/scripts/build-native.sh || exit 1
      grep -E "Compiling entry|registers" "$OUT/build.log" | sed 's/^ptxas info *: //' >"$OUT/registers.log" || true ;;
    first-steps) # scripts/first-steps.sh at one rank on GPU 0: a hang or a failed step ends the call here
      step first-steps 75 env CUDA_VISIBLE_DEVICES=0 SWITCHYARD_CUDA_RANKS_PER_GPU=1 \
        bash packages/cuda/scripts/first-steps.sh 1 60 "$OUT/first-steps" || exit 1 ;;
    mps-on) mps_on ;;
    mps-off) mps_off ;;
    checks1 | checks2 | checks4 | contig1 | contig2 | contig4)
      # Each layout against core's reference (eager step + graph replays, bit for bit), missing-rank timeouts
      n=${s: -1}
      layout=masked
      [ "${s:0:6}" = contig ] && layout=contiguous
      step "$s" 200 env SWITCHYARD_CUDA_RANKS_PER_GPU="$n" node "$cli" checks --ranks "$n" --layout "$layout" \
        ${CHECKS_ARGS:-} --json "$OUT/$s.json" ;;
    conformance1 | conformance2 | conformance4 | conformance-deep4)
      # The suite draws world sizes up to the backend's maxRanks = GPUs x ranks per GPU.
      n=${s: -1}
      deep=()
      [ "$s" = conformance-deep4 ] && deep=(--deep)
      step "$s" "${CONFORMANCE_TIMEOUT:-240}" env SWITCHYARD_CUDA_RANKS_PER_GPU="$n" node "$conf" conformance \
        --backend cuda "${deep[@]}" --json "$OUT/$s.json" ;;
    bench1-topk*) # combine with few entries a record: the bench at 1 rank with top-k of the step's name
      k=${s#bench1-topk}
      step "$s" 120 env SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$cli" bench --ranks 1 --topk "$k" --no-baseline \
        --masked-tokens 128,512 --contiguous-tokens 4096 --steps 100 --json "$OUT/$s.json" --svg "$OUT/$s.svg" ;;
    bench2mps) # 2 ranks on one GPU under MPS (mps-on first): the sharing mode's cost apart from time slices
      step "$s" "${BENCH_TIMEOUT:-200}" env SWITCHYARD_CUDA_RANKS_PER_GPU=2 node "$cli" bench --ranks 2 --no-baseline \
        --json "$OUT/$s.json" --svg "$OUT/$s.svg" ${BENCH_ARGS:-} ;;
    bench1 | bench2 | bench4)
      # switchyard bench through the CLI users run (the conformance package's), NCCL baseline in the same run
      n=${s: -1}
      bench_cli=("$cli" bench)
      [ -f "$conf" ] && bench_cli=("$conf" bench)
      step "$s" "${BENCH_TIMEOUT:-200}" env SWITCHYARD_CUDA_RANKS_PER_GPU="$n" node "${bench_cli[@]}" --ranks "$n" \
        --json "$OUT/$s.json" --svg "$OUT/$s.svg" ${BENCH_ARGS:-} ;;
    bench1-sms*) # the SM budget sweep of the contiguous layout (1 rank): bench1-sms48, bench1-sms132, ...
      sms=${s#bench1-sms}
      step "$s" 120 env SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$cli" bench --ranks 1 --layouts contiguous \
        --contiguous-tokens 512,4096 --sms "$sms" --no-baseline --json "$OUT/$s.json" --svg "$OUT/$s.svg" ;;
    checks-2gpu | contig-2gpu | checks-2gpu-blocks1)
      # Both GPUs, one rank each (NVLink): each layout against core's reference, graph replays, timeouts;
      # -blocks1: masked under an SM budget of one block, the receive that builds its tables first, as
      # worlds over 8 ranks do (two GPUs otherwise take the lean one)
      layout=masked blocks=()
      [ "${s:0:6}" = contig ] && layout=contiguous
      [ "$s" = checks-2gpu-blocks1 ] && blocks=(--blocks 1)
      step "$s" 200 env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$cli" checks --ranks 2 \
        --layout "$layout" "${blocks[@]}" ${CHECKS_ARGS:-} --json "$OUT/$s.json" ;;
    conformance-2gpu | conformance-deep-2gpu)
      deep=()
      [ "$s" = conformance-deep-2gpu ] && deep=(--deep)
      step "$s" "${CONFORMANCE_TIMEOUT:-300}" env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$conf" \
        conformance --backend cuda "${deep[@]}" --json "$OUT/$s.json" ;;
    faults-2gpu) # a rank killed / stalled in each phase, both layouts, one rank per GPU
      step faults-2gpu "${FAULTS_TIMEOUT:-420}" env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$cli" \
        faults --ranks 2 --timeout-ms 1000 --layouts masked,contiguous --json "$OUT/faults-2gpu.json" ;;
    soak-2gpu) # layouts alternating every step, one rank per GPU
      secs=${SOAK_SECONDS:-120}
      step soak-2gpu $((secs + 40)) env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$cli" soak \
        --ranks 2 --steps "${SOAK_STEPS:-100000}" --max-seconds "$secs" --json "$OUT/soak-2gpu.json" ;;
    bench-2gpu-masked-sms*) # the masked layout's SM budget at 2 GPUs: bench-2gpu-masked-sms16, ... (masked 1 and 128)
      sms=${s#bench-2gpu-masked-sms}
      step "$s" 120 env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$cli" bench --ranks 2 \
        --layouts masked --masked-tokens 1,128 --masked-sms "$sms" --no-baseline --json "$OUT/$s.json" ;;
    bench-2gpu-sms*) # the SM budget of the contiguous kernels (and DeepEP's normal kernels, alone and with their caller's torch work) at 2 GPUs: bench-2gpu-sms48, ...
      sms=${s#bench-2gpu-sms}
      step "$s" 200 env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 \
        PYTHONPATH="/tmp/peers/deepep:/tmp/peers/pplx/src:${PYTHONPATH:-}" LD_LIBRARY_PATH="/tmp/nvsh/lib:${LD_LIBRARY_PATH:-}" \
        node "$cli" bench --ranks 2 --layouts contiguous --contiguous-tokens 4096 --sms "$sms" --no-baseline \
        --peers deepep --json "$OUT/$s.json" --svg "$OUT/$s.svg" ;;
    peers-build) # DeepEP and pplx-kernels from .gpu/peers (../shared/peers/pack.sh), for the bench's peer rows
      step peers-build 240 bash .gpu/peers/build.sh ;;
    bench-2gpu-rounds) # the bench BENCH_ROUNDS times (default 3) with BENCH_ARGS, the peers in each round, into
      # $OUT/rounds/compare-peers-<n>.json: how far the libraries' gaps move between runs of one call
      # (bench/compare/report.mjs $OUT/rounds --base peers@deepep-ll --head peers@switchyard)
      mkdir -p "$OUT/rounds"
      for n in $(seq 1 "${BENCH_ROUNDS:-3}"); do
        bench_peers "bench-2gpu-round-$n" "$OUT/rounds/compare-peers-$n.json" "$OUT/rounds/bench-$n.svg" || break
      done ;;
    bench-2gpu | bench-2gpu-fp8)
      # the bench on both GPUs: NCCL, and DeepEP / pplx-kernels where they import (peers-build first),
      # in the same run (deepep-ht-caller: DeepEP's normal kernels with their caller's torch work, like for
      # like; switchyard-py: this build's library through the Python package, timed as the peers are);
      # -fp8: fp8 input, contiguous, beside DeepEP's normal kernels (the input already cast for both)
      extra=()
      [ "$s" = bench-2gpu-fp8 ] && extra=(--layouts contiguous --input fp8-e4m3 --peers deepep --no-baseline)
      # with puts: Switchyard's rows only (run bench-2gpu in the same call for NCCL, the peers and the stores)
      [ "${SWITCHYARD_TRANSPORT:-}" = put ] && extra+=(--peers none --no-baseline)
      bench_peers "$s" "$OUT/$s.json" "$OUT/$s.svg" "${extra[@]}" ;;
    compare-2gpu) # the bench with the base commit's library (.gpu/base.tar) and this tree's, alternating (COMPARE_ROUNDS
      # rounds, default 2; COMPARE_VARIANTS: more libraries in the rotation, bench/compare/run.sh)
      step compare-2gpu "${COMPARE_TIMEOUT:-420}" env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 \
        bash packages/cuda/bench/compare/run.sh .gpu/base.tar "$OUT" "${COMPARE_ROUNDS:-2}" --ranks 2 ${COMPARE_ARGS:---masked-tokens 1,128,512 --contiguous-tokens 4096 --no-baseline} ;;
    compare1 | compare2) # compare-2gpu's rotation on GPU 0 alone, 1 or 2 ranks on it (time slices), in $OUT/one-gpu-ranks<n>/
      # (COMPARE_ROUNDS, COMPARE_VARIANTS as there, bench flags COMPARE_ONE_GPU_ARGS; the second of the two
      # reuses the first's libraries)
      n=${s: -1}
      step "$s" "${COMPARE_TIMEOUT:-300}" env CUDA_VISIBLE_DEVICES=0 SWITCHYARD_CUDA_RANKS_PER_GPU="$n" COMPARE_REUSE=1 \
        bash packages/cuda/bench/compare/run.sh .gpu/base.tar "$OUT/one-gpu-ranks$n" "${COMPARE_ROUNDS:-2}" --ranks "$n" \
        ${COMPARE_ONE_GPU_ARGS:---masked-tokens 1,128,512 --contiguous-tokens 4096 --no-baseline --peers none --steps 100} ;;
    stamps-2gpu) # a profiling build (phase stamps, kernels/phase_clock.cuh), then the bench at each of STAMPS_POINTS
      # (layout:tokens, default masked 1 and 128) on both GPUs and each phase's median (bench/kernel-times/phases.py);
      # replaces the build: run it last
      # (STAMPS_CLOCK=last: each kernel's last block prints instead of block 0; =ender: the block that
      # completes its grid counter, where it has one)
      step stamps-build 300 env SWITCHYARD_CUDA_PHASE_CLOCK="${STAMPS_CLOCK:-1}" bash packages/cuda/scripts/build-native.sh &&
        tag=$(case "${STAMPS_CLOCK:-1}" in last | ender) echo "-$STAMPS_CLOCK" ;; esac) &&
        for pt in ${STAMPS_POINTS:-masked:1 masked:128}; do
          layout=${pt%%:*} n=${pt#*:}
          step "stamps-2gpu-$layout-$n$tag" 200 env CUDA_VISIBLE_DEVICES=0,1 SWITCHYARD_CUDA_RANKS_PER_GPU=1 node "$cli" bench --ranks 2 \
            --layouts "$layout" "--$layout-tokens" "$n" --no-baseline --peers none &&
            python3 packages/cuda/bench/kernel-times/phases.py --steps 0 "$OUT/stamps-2gpu-$layout-$n$tag.log" >"$OUT/stamps-2gpu-$layout-$n$tag.md" &&
            cat "$OUT/stamps-2gpu-$layout-$n$tag.md" >>"$summary"
        done ;;
    baseline) step baseline 120 env SWITCHYARD_CUDA_RANKS_PER_GPU=2 node "$cli" baseline --ranks 2 --json "$OUT/baseline.json" ;;
    phase-floor) # the bench's timing method with kernels that do (almost) nothing: each phase's floor (one GPU)
      step phase-floor 120 bash -c "nvcc -O3 -std=c++17 -arch=sm_90 packages/cuda/bench/probes/phase-floor.cu -o /tmp/phase-floor && /tmp/phase-floor" ;;
    fan-out-rate) # the contiguous receive's fan-out bytes alone on 24 SMs and on all: bulk copies (one or two buffers
      # a warp, stores from one lane or spread over three) or the lanes' own copies (one GPU)
      step fan-out-rate 120 bash -c "nvcc -O3 -std=c++17 -arch=sm_90 -I packages/cuda/src/native/kernels \
        packages/cuda/bench/probes/fan-out-rate.cu -o /tmp/fan-out-rate && /tmp/fan-out-rate" ;;
    stream-floor) # the contiguous combine send's and recv's bytes alone on 24 SMs and on all (registers or cp.async in flight; one GPU)
      step stream-floor 120 bash -c "nvcc -O3 -std=c++17 -arch=sm_90 packages/cuda/bench/probes/stream-floor.cu -o /tmp/stream-floor && /tmp/stream-floor" ;;
    pack-check) # the combine's bf16 packing (hardware conversion, NaN fixed up) against floatToBf16 for all 2^32 fp32 values
      step pack-check 120 bash -c "nvcc -O3 -std=c++17 -arch=sm_90 packages/cuda/test/native/pack_check.cu -o /tmp/pack_check && /tmp/pack_check" ;;
    abi-fuzz) step abi-fuzz 120 node "$cli" abi-fuzz --iterations 400 --json "$OUT/abi-fuzz.json" ;;
    faults) step faults 240 env SWITCHYARD_CUDA_RANKS_PER_GPU=4 node "$cli" faults --ranks 2 --timeout-ms 1000 --json "$OUT/faults.json" ;;
    soak-contig) secs=${SOAK_CONTIG_SECONDS:-100}
      step soak-contig $((secs + 30)) env SWITCHYARD_CUDA_RANKS_PER_GPU=2 node "$cli" soak --ranks 2 \
        --steps "${SOAK_CONTIG_STEPS:-100000}" --max-seconds "$secs" --json "$OUT/soak-contig.json" ;;
    exports) # each library exports exactly its header's SY_API functions (the product no bench function),
      # sonames carry SY_ABI_VERSION
      step exports 30 bash -c 'for l in libswitchyard_cuda.so libswitchyard_cuda_bench.so; do
        bash packages/cuda/scripts/check-exports.sh "packages/cuda/build/$l" || exit 1; done' ;;
    python) # the Python package: pytest on one GPU, then the MoE layer example under torchrun
      step python 300 bash packages/cuda/python/scripts/gpu-test.sh "$OUT" ;;
    pip-install) # pip install / pip wheel of packages/cuda/python in a venv (no network, NVSHMEM from its wheel),
      # then, with no SWITCHYARD_CUDA_LIB / LD_LIBRARY_PATH, the import and the MoE example on GPUs 0 and 1
      step pip-install 540 bash packages/cuda/python/scripts/pip-check.sh ;;
    cluster-launch) # torchrun and the Node start with the rendezvous on this machine's non-loopback
      # address, as a multi-host job; puts to the other rank (scripts/cluster-launch.sh); GPUs 0 and 1
      step cluster-launch 300 env CUDA_VISIBLE_DEVICES=0,1 bash packages/cuda/scripts/cluster-launch.sh ;;
    env-start2 | env-start4) # the Node environment-driven start: N processes as a launcher starts them, one checked step each, both layouts
      n=${s: -1}
      step "$s" 120 bash -c "bash packages/cuda/examples/node/launch-local.sh $n masked && bash packages/cuda/examples/node/launch-local.sh $n contiguous" ;;
    deepep-test | deepep-test-e256) # DeepEP's own tests/test_low_latency.py, unmodified, from its sources in
      # .gpu/peers/deepep.tar (../shared/peers/pack.sh), with `import deep_ep` resolving to switchyard_cuda.deep_ep
      # through the shim and the build step's library; it spawns its 2 processes itself (GPUs 0 and 1), which
      # inherit this environment. -e256: --num-experts 256 (the default is 288)
      args="--num-processes 2"
      [ "$s" = deepep-test-e256 ] && args="$args --num-experts 256"
      step "$s" 240 env CUDA_VISIBLE_DEVICES=0,1 \
        SWITCHYARD_CUDA_LIB="$root/packages/cuda/build/libswitchyard_cuda.so" \
        PYTHONPATH="$root/packages/cuda/python/deep_ep_shim:$root/packages/cuda/python" \
        bash -c 'd=$(mktemp -d) && tar xf .gpu/peers/deepep.tar -C "$d" && cd "$d/deepep/tests" &&
          python3 -c "import deep_ep; print(\"deep_ep resolves to\", deep_ep.__name__, deep_ep.__file__)" &&
          python3 test_low_latency.py '"$args" ;;
    deepep-control) # the same test against DeepEP itself (peers-build first), in the same call: the control
      step deepep-control 240 env CUDA_VISIBLE_DEVICES=0,1 \
        PYTHONPATH="/tmp/peers/deepep:${PYTHONPATH:-}" LD_LIBRARY_PATH="/tmp/nvsh/lib:${LD_LIBRARY_PATH:-}" \
        bash -c 'd=$(mktemp -d) && tar xf .gpu/peers/deepep.tar -C "$d" && cd "$d/deepep/tests" &&
          python3 -c "import deep_ep; print(\"deep_ep resolves to\", deep_ep.__name__, deep_ep.__file__)" &&
          python3 test_low_latency.py --num-processes 2' ;;
    host-overhead) # the same step from C and from Python (eager and graph replay), alternating; the report in the log
      step host-overhead 240 bash packages/cuda/bench/host-overhead/run.sh "$OUT" ;;
    kernel-times) # each stage kernel's own duration (Nsight Compute), eager and graph; the report in the log
      step kernel-times 300 bash packages/cuda/bench/kernel-times/run.sh "$OUT" ;;
    sass) # the innermost loops (holding SASS_WITH, default FMUL) of the functions named SASS_FUNCTION (default
      # combine_send) in the built library's SASS, counted by opcode (cuobjdump, bench/kernel-times/sass_loops.py)
      step sass 60 env SASS_OUT="$OUT/sass-loops.json" bash -c 'set -o pipefail; cuobjdump -sass packages/cuda/build/libswitchyard_cuda.so |
        python3 packages/cuda/bench/kernel-times/sass_loops.py --function "${SASS_FUNCTION:-combine_send}" \
        --with "${SASS_WITH:-FMUL}" --json >"$SASS_OUT"' ;;
    profile) # Nsight Compute's sections and hottest SASS lines of the contiguous send kernels at one rank
      # (PROFILE_POINT, PROFILE_KERNEL: bench/kernel-times/profile.sh; build with SWITCHYARD_CUDA_LINEINFO=1)
      step profile 400 bash packages/cuda/bench/kernel-times/profile.sh "$OUT" ;;
    c-example) # a checked step from C through the exported library, both layouts
      step c-example 60 bash -c 'cd packages/cuda/examples/c && cc -std=c11 -O2 -Wall moe_step.c -I../../include \
        -L../../build -lswitchyard_cuda -Wl,-rpath,"$PWD/../../build" -o /tmp/moe_step && /tmp/moe_step masked && /tmp/moe_step contiguous' ;;
    pack) # at most 8 files come back: logs, JSON and step folders into logs.tgz (scripts/pack-out.sh)
      bash packages/cuda/scripts/pack-out.sh "$OUT" || { echo "pack: failed, the output is left unpacked" | tee -a "$summary"; status=1; } ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
