#!/usr/bin/env bash
# What comes back from a device call is at most 8 files, so device-run.sh's `pack` step folds its
# output folder into one archive: logs, JSON and the step folders (put/, one-gpu-ranks<n>/,
# rounds/, Nsight reports) into logs.tgz; the bench's JSON and SVG and the summary stay beside it;
# every other file goes. What a call did not make is skipped (a call of only compare1 has no JSON at
# the top, most have no rounds/). A second pack of the same folder (after steps ran past the first)
# unpacks the first archive and packs it again with the new files.
#   bash packages/cuda/scripts/pack-out.sh <output folder>
set -euo pipefail
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: pack-out.sh <device-run.sh output folder>" >&2; exit 2; }
cd "$1"
shopt -s nullglob
[ ! -f logs.tgz ] || tar xzf logs.tgz
files=(./*.log ./*.json ./put*/ ./one-gpu-ranks*/ ./rounds*/ ./*.ncu-rep.gz)
if [ "${#files[@]}" -gt 0 ]; then
  tar czf logs.tgz.new "${files[@]}"
  mv logs.tgz.new logs.tgz
fi
find . -maxdepth 1 -type f ! -name logs.tgz ! -name '*summary*' ! -name 'bench[124].json' ! -name 'bench[124].svg' \
  ! -name 'bench-2gpu.json' ! -name 'bench-2gpu.svg' ! -name 'bench-2gpu-fp8.json' ! -name 'bench-2gpu-fp8.svg' -delete
rm -rf put one-gpu-ranks* rounds
