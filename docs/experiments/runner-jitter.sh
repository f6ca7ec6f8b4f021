#!/bin/sh
# Seeded timing noise in the at-once runner (kernel-findings F36). Copies the
# committed tree to a scratch directory and patches core/src/reclaim.c there
# so that the fixed cost of each operation the runner starts (CLK_OP, the
# pipe read and acknowledgement) is drawn at random: (1 - J) * CLK_OP plus
# J * CLK_OP times an exponential draw of mean 1, from an RNG seeded with
# JSEED * 1000003 + the run's seed (SL_JITTER=J, SL_JSEED=JSEED in the
# environment; J unset or 0: the committed runner). Installs that build into
# a scratch venv and rescores stored agreement repetitions with the model two
# processes at once (`agree --rescore ... --counts mean --model-window 0`)
# once per JSEED, then scores the model's mean over the JSEEDs (its expected
# counts under the noise) against the kernel's mean counts: sizes of 100
# kernel folios or more, swpout within 5 % and swap-ins within 10 %.
# Nothing here is built into swaplab.
# Usage, from the repository root:
#   sh docs/experiments/runner-jitter.sh J NSEEDS STORED[,STORED...]
#   sh docs/experiments/runner-jitter.sh 0.3 10 docs/data/reclaim-agreement-6.18-f36.json,...
# The scratch venv is kept in $JIT_VENV (default /tmp/swaplab-jit-venv) for
# later calls; delete it when done.
set -e
[ $# -eq 3 ] || { echo "usage: $0 J NSEEDS STORED[,STORED...]" >&2; exit 2; }
j=$1 n=$2 files=$3
venv=${JIT_VENV:-/tmp/swaplab-jit-venv}
if [ ! -x "$venv/bin/python" ]; then
    tmp=$(mktemp -d)
    git archive HEAD | tar -x -C "$tmp"
    python3 - "$tmp/core/src/reclaim.c" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
def sub(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
sub("#include <stdlib.h>\n", "#include <stdlib.h>\n#include <math.h>\n")
sub("\tdouble driver;", "\tdouble jit;\n\tsl_rng jr;\n\tdouble driver;")
sub("\t\t\tk->clock = bt + CLK_OP;",
    "\t\t\tdouble f = 1.0;\n"
    "\t\t\tif (w->jit > 0) {\n"
    "\t\t\t\tdouble u = ((double)(sl_rng_next(&w->jr) >> 11) + 0.5) / 9007199254740992.0;\n"
    "\t\t\t\tf = 1.0 - w->jit - w->jit * log(u);\n"
    "\t\t\t}\n"
    "\t\t\tk->clock = bt + CLK_OP * f;")
sub("\tw.ring = calloc(window, sizeof(*w.ring));",
    "\tw.jit = getenv(\"SL_JITTER\") ? atof(getenv(\"SL_JITTER\")) : 0;\n"
    "\tsl_rng_init(&w.jr, 0, (getenv(\"SL_JSEED\") ? strtoull(getenv(\"SL_JSEED\"), 0, 10) : 0) * 1000003u"
    " + c->prm->seed);\n"
    "\tw.ring = calloc(window, sizeof(*w.ring));")
open(p, "w").write(s)
EOF
    python3 -m venv --system-site-packages "$venv"
    (cd "$tmp" && "$venv/bin/pip" install -q --no-deps --no-build-isolation .)
    rm -rf "$tmp"
fi
out=$(mktemp -d)
s=1
while [ "$s" -le "$n" ]; do
    SL_JITTER=$j SL_JSEED=$s "$venv/bin/python" -m swaplab.kernel.agree --rescore "$files" --counts mean \
        --model-window 0 --json "$out/$s.json" 2>/dev/null
    s=$((s + 1))
done
"$venv/bin/python" - "$out"/*.json <<'EOF'
import json, statistics, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
met = {"swpout": 0, "swpin": 0}
for i, row in enumerate(runs[0]["rows"]):
    sizes = row["model_windows"]["0"]["summary"]["sizes"]
    miss = []
    for kb, v in sizes.items():
        for what, lim in (("swpout", 0.05), ("swpin", 0.10)):
            k = v[what]["kernel"]
            if k < 100:
                continue
            m = statistics.mean(r["rows"][i]["model_windows"]["0"]["summary"]["sizes"][kb][what]["model"]
                                for r in runs)
            if abs(m / k - 1) > lim:
                miss.append((what, f"{kb}K {what} {m:.0f}/{k:.0f} {100 * (m / k - 1):+.1f} %"))
    for what in met:
        met[what] += not any(w == what for w, _ in miss)
    if miss:
        print(row["workload"], row["size"], row["mthp"] + ":", "; ".join(t for _, t in miss))
print(f"model mean over {len(runs)} noise seeds: of {len(runs[0]['rows'])} settings, "
      f"swpout {met['swpout']}, swpin {met['swpin']} met")
EOF
rm -rf "$out"
