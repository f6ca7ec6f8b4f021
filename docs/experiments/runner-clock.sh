#!/bin/sh
# The at-once runner's clock against the stored kernel runs (kernel-findings
# F30). Copies the committed tree to a scratch directory, makes each CLK_*
# constant of core/src/reclaim.c readable from the environment there
# (CLK_OP=6720 etc.; unset: the committed value), installs that build into a
# scratch venv and rescores the ten stored agreement repetitions with the
# model two processes at once (`agree --rescore ... --counts mean
# --model-window 0`, about 3 s). Nothing here is built into swaplab.
# Usage, from the repository root:
#   sh docs/experiments/runner-clock.sh [a|b|all]     (default all)
#   CLK_OP=6720 sh docs/experiments/runner-clock.sh a
# a: f28-f28e, b: f29-f29e, all: both. Prints agree's tallies, then the
# mean |log(model / kernel)| of swpout and of swap-ins over the sizes with
# 100 kernel folios or more, and the sizes outside 5 % (swpout) / 10 %
# (swap-ins). The scratch venv is kept in $CLK_VENV (default
# /tmp/swaplab-clk-venv) for later calls; delete it when done.
set -e
set_=${1:-all}
venv=${CLK_VENV:-/tmp/swaplab-clk-venv}
root=$(pwd)
if [ ! -x "$venv/bin/python" ]; then
    tmp=$(mktemp -d)
    git archive HEAD | tar -x -C "$tmp"
    python3 - "$tmp/core/src/reclaim.c" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
names = re.findall(r"#define (CLK_[A-Z_]+) [0-9.]+", s)
for n in names:
    s = re.sub(r"#define " + n + r" ([0-9.]+)", r"static double " + n + r" = \1;", s)
last = s.index("static double " + names[-1])
cut = s.index("\n", last) + 1
ctor = "#include <stdlib.h>\n__attribute__((constructor)) static void clk_env(void)\n{\n"
ctor += "".join(f'\tif (getenv("{n}")) {n} = atof(getenv("{n}"));\n' for n in names) + "}\n"
open(p, "w").write(s[:cut] + ctor + s[cut:])
EOF
    python3 -m venv --system-site-packages "$venv"
    (cd "$tmp" && "$venv/bin/pip" install -q --no-deps --no-build-isolation .)
    rm -rf "$tmp"
fi
G=$root/docs/data/reclaim-agreement-6.18
A=$G-f28.json,$G-f28b.json,$G-f28c.json,$G-f28d.json,$G-f28e.json
B=$G-f29.json,$G-f29b.json,$G-f29c.json,$G-f29d.json,$G-f29e.json
case $set_ in a) F=$A ;; b) F=$B ;; all) F=$A,$B ;; *) echo "usage: $0 [a|b|all]" >&2; exit 2 ;; esac
out=$(mktemp)
# --measured sys: f28-f29e store no user time (kernel-findings F34)
"$venv/bin/python" -m swaplab.kernel.agree --rescore "$F" --counts mean --model-window 0 --measured sys \
    --json "$out.json" 2>&1 | grep -E 'of 18 settings|within 15 %'
"$venv/bin/python" - "$out.json" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
loss = {"swpout": [], "swpin": []}
miss = []
for r in d["rows"]:
    for kb, v in r["model_windows"]["0"]["summary"]["sizes"].items():
        for k, lim in (("swpout", 0.05), ("swpin", 0.10)):
            m, kk = v[k]["model"], v[k]["kernel"]
            if kk >= 100 and m > 0:
                loss[k].append(abs(math.log(m / kk)))
                if abs(m / kk - 1) > lim:
                    miss.append(f"{r['workload']} {r['size']} {r['mthp']} {kb}K {k} {100 * (m / kk - 1):+.1f} %")
print("mean |log(model/kernel)|: swpout %.4f, swap-ins %.4f" %
      tuple(sum(loss[k]) / len(loss[k]) for k in ("swpout", "swpin")))
print("outside:", "; ".join(miss) or "none")
EOF
rm -f "$out" "$out.json"
