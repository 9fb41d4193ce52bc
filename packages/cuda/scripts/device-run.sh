#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, after scripts/gpu-pack.sh filled .gpu/:
#   bash packages/cuda/scripts/device-run.sh build smoke checks deepseek conformance
# Every step logs to $OUT/<step>.log (what the device tool brings back) and is bounded by `timeout`.
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
status=0
step() { # name timeout command...
  local name=$1 t=$2
  shift 2
  echo "=== $name: $*"
  local t0=$SECONDS
  timeout --kill-after=10 "$t" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$OUT/$name.log"
  echo "=== $name: rc=$rc in $((SECONDS - t0)) s"
  [ $rc = 0 ] || status=1
  return $rc
}
for s in "$@"; do
  case $s in
    build) step build 300 bash packages/cuda/scripts/build-native.sh || exit 1 ;;
    smoke) step smoke 120 node "$cli" checks --ranks 2 --only 0 ;;
    checks) step checks2 300 node "$cli" checks --ranks 2 --json "$OUT/checks2.json"
      [ "$gpus" -ge 4 ] && step checks4 300 node "$cli" checks --ranks 4 --json "$OUT/checks4.json" ;;
    deepseek) step deepseek 300 node "$cli" deepseek --ranks 4 --replays 200 --json "$OUT/deepseek.json" ;;
    conformance | conformance-deep | conformance-2gpu)
      # The suite picks world sizes up to the backend's maxRanks (= visible GPUs): 1..4 here,
      # and 1..2 with CUDA_VISIBLE_DEVICES=0,1.
      conf=packages/conformance/dist/cli/main.js
      if [ ! -f "$conf" ]; then echo "=== $s: $conf not built; skipped"; continue; fi
      case $s in
        conformance) step conformance "${CONFORMANCE_TIMEOUT:-300}" node "$conf" conformance --backend cuda --json "$OUT/conformance.json" ;;
        conformance-deep) step conformance-deep "${CONFORMANCE_DEEP_TIMEOUT:-540}" node "$conf" conformance --backend cuda --deep --json "$OUT/conformance-deep.json" ;;
        conformance-2gpu) step conformance-2gpu "${CONFORMANCE_TIMEOUT:-300}" env CUDA_VISIBLE_DEVICES=0,1 node "$conf" conformance --backend cuda --json "$OUT/conformance-2gpu.json" ;;
      esac ;;
    pack) # at most 8 files come back from the device tool: fold the logs into one archive
      (cd "$OUT" && tar czf logs.tgz --exclude=logs.tgz ./*.log ./*.json 2>/dev/null && find . -maxdepth 1 -type f ! -name logs.tgz ! -name '*summary*' -delete) ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
