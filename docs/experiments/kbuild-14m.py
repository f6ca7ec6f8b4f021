"""F35: kbuild-v5 with 14 MiB compilers on this 2-CPU machine: the live
6.18 kernel falls back at 256K-2M, and the model of 6.18 agrees.

    python docs/experiments/kbuild-14m.py --repeats 2 --json docs/data/kbuild-v5-14m-6.18-f35.json

For seeds 1-5, --repeats times each (one round of the five seeds after
another): `swaplab kernel run kbuild-v5 --size-median 14M --seed S
--stat-flush 1` (root, zram, a cgroup v1 memory controller; every run
restores the machine), and the model (deterministic: once), `swaplab run
kbuild-v5 --size-median 14M --seed S`, for linux-6.18 with two CPUs at once
(`--window 0`, as the kernel runs) and serially, and for linux-6.12,
first-fit and the proposals (holes-first, compact, kcompact) at `--window
0`. Writes per run the per-size counts, and prints the seed means of each
size's fallback %. The machine should be quiet
(the interleaving of two CPUs is the kernel's).
"""
import argparse
import json
import statistics
import sys

from swaplab.kernel import reclaim as R
from swaplab.reclaim import build_parser, params_from_args, run_reclaim
from swaplab.results import machine_info

ARGS = ["kbuild-v5", "--size-median", "14M"]
SIZES = ("16", "32", "64", "128", "256", "512", "1024", "2048")
MODEL = (("linux-6.18", 0), ("linux-6.18", 1), ("linux-6.12", 0), ("first-fit", 0),
         ("proposal-holes-first", 0), ("proposal-compact", 0), ("proposal-kcompact", 0))


def kernel(seed: int) -> dict:
    argv = ARGS + ["--seed", str(seed), "--stat-flush", "1", "-q"]
    res, _ = R.run_kernel(R.params_from_args(R.build_parser().parse_args(argv), argv))
    time = {k: v for k, v in res["time"].items() if k != "per_process"}
    return {"sizes": res["sizes"], "reclaim": res["reclaim"], "pages": res["pages"], "time": time,
            "oom_kill": res["kernel"]["memcg"].get("oom_kill")}


def model(policy: str, window: int, seed: int) -> dict:
    prm, preset = params_from_args(build_parser().parse_args(ARGS + ["--seed", str(seed)]))
    res = run_reclaim(prm, policy, 0, None, preset, window)
    return {"sizes": res["sizes"], "reclaim": res["reclaim"], "pages": res["pages"]}


def means(runs: list) -> list:
    return [round(statistics.mean(r["sizes"][kb]["fallback_pct"] if kb in r["sizes"] else 0 for r in runs), 2)
            for kb in SIZES]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--repeats", type=int, default=1)
    a = ap.parse_args(argv)
    seeds = range(1, 6)
    out = {"what": "F35: kbuild-v5 --size-median 14M, kernel and model, fallback per size",
           "machine": machine_info(), "args": ARGS, "seeds": list(seeds), "repeats": a.repeats,
           "kernel": [dict(kernel(s), seed=s, repeat=r) for r in range(a.repeats) for s in seeds], "model": {}}
    for pol, win in MODEL:
        out["model"][f"{pol} window {win}"] = [dict(model(pol, win, s), seed=s) for s in seeds]
    out["fallback_pct_means"] = {"kernel 6.18": means(out["kernel"])}
    for r in range(a.repeats if a.repeats > 1 else 0):
        out["fallback_pct_means"][f"kernel 6.18, round {r + 1}"] = means([k for k in out["kernel"]
                                                                        if k["repeat"] == r])
    out["fallback_pct_means"].update({k: means(v) for k, v in out["model"].items()})
    print("| run | " + " | ".join(f"{kb}K" if int(kb) < 1024 else f"{int(kb) // 1024}M" for kb in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for k, v in out["fallback_pct_means"].items():
        print(f"| {k} | " + " | ".join(f"{x:.1f}" for x in v) + " |")
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
