#!/bin/sh
# bench threads on a 16-core machine: the proposals against 6.15 and 6.18
# (issue 11's scaling target), run from the repository root as root on a
# lent machine with no network. Writes the JSON files and lscpu to $OUT.
# Usage: OUT=dir sh docs/experiments/bench-threads-16cpu.sh [RUNS]
set -e
runs=${1:-2}
python3 -m pip install -q --no-build-isolation --no-deps --no-index --target /tmp/site . 2>&1 | tail -3
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
(lscpu; uname -r; python3 --version; gcc --version | head -1; git rev-parse HEAD 2>/dev/null) > "$OUT/machine.txt"
pols=linux-6.15,linux-6.18,proposal-holes-first,proposal-compact
i=1
while [ "$i" -le "$runs" ]; do
    start=$(date +%s)
    python3 -m swaplab.cli bench threads --policy $pols --threads 1,2,4,8,16 \
        --ops 1000000 --json "$OUT/bench-threads-16cpu-proposals-r$i.json" > /dev/null
    echo "run $i: $(( $(date +%s) - start )) s"
    i=$((i + 1))
done
