"""swaplab validate: the model (linux-6.18) against the live kernel over a
matrix of workload variants, one row per variant (docs/kernel-harness.md).

Default matrix, 64M swap each: thp-swap-v1 with and without -s; thp-swap
with none, -a, -s, -a -s; all at 64K mTHP; plus 16K and 32K mTHP variants of
thp-swap-v1 and thp-swap -a.
"""
from __future__ import annotations

import sys
import time

from .params import ParamError, WorkloadParams, parse_count
from .results import check_writable, machine_info, write_json
from . import report

SCHEMA = "swaplab.validate/1"
POLICY = "linux-6.18"


def default_matrix() -> list:
    """(workload, mthp KiB, small_folios, aligned_swapin)."""
    m = [("thp-swap-v1", 64, False, False), ("thp-swap-v1", 64, True, False),
         ("thp-swap", 64, False, False), ("thp-swap", 64, False, True),
         ("thp-swap", 64, True, False), ("thp-swap", 64, True, True)]
    for kb in (16, 32):
        m += [("thp-swap-v1", kb, False, False), ("thp-swap", kb, False, True)]
    return m


def variant_name(wp: WorkloadParams) -> str:
    flags = (" -a" if wp.aligned_swapin else "") + (" -s" if wp.small_folios else "")
    return f"{wp.workload}{flags} {','.join(map(report.size_label, wp.mthp_kb))}"


def add_parsers(sub) -> None:
    v = sub.add_parser("validate", help="model vs live kernel over a matrix of workload variants",
                       description="Runs each variant of the default matrix on the model (policy "
                                   "linux-6.18) and on the live kernel (swaplab kernel run; root, "
                                   "zram) and prints one row per variant: mean fallback %% of both, "
                                   "slot agreement of the final layouts, iterations whose layout "
                                   "hash agrees, first divergence.")
    v.add_argument("--iterations", default="100", help="iterations per variant (default 100)")
    v.add_argument("--json", metavar="PATH", help="write every comparison as JSON ('-' for stdout)")
    v.add_argument("--allow-other-swap", action="store_true",
                   help="run even while other swap is active (see swaplab kernel run)")
    v.set_defaults(func=_cmd_validate)


def run_validate(iterations: int, allow_other_swap: bool = False, progress=None) -> dict:
    from .compare import compare
    from .kernel import harness
    from .model import run_model

    variants = []
    for wl, kb, small, aligned in default_matrix():
        variants.append(WorkloadParams(workload=wl, swap_bytes=64 << 20, mthp_kb=[kb],
                                       small_folios=small, aligned_swapin=aligned,
                                       iterations=iterations))
    all_sizes = sorted({kb for v in variants for kb in v.mthp_kb})
    probe = WorkloadParams(workload="thp-swap-v1", mthp_kb=all_sizes)
    tools = harness.preflight(probe, allow_other_swap)
    rows = []
    t0 = time.monotonic()
    for i, wp in enumerate(variants, 1):
        name = variant_name(wp)
        if progress:
            progress(f"[{i}/{len(variants)}] {name}: model")
        mres, mlay = run_model(wp, POLICY)
        if progress:
            progress(f"[{i}/{len(variants)}] {name}: kernel")
        harness.preflight(wp, allow_other_swap)
        kres, klay = harness.run_kernel(wp, allow_other_swap=allow_other_swap, tools=tools)
        c = compare(mres, kres, mlay, klay, name_a="model", name_b="kernel")
        kb = str(wp.mthp_kb[0])
        fd = c["first_divergence"]
        row = {"variant": name, "iterations": iterations,
               "model_fallback_pct": c["summary"][kb]["mean_fallback_pct_a"],
               "kernel_fallback_pct": c["summary"][kb]["mean_fallback_pct_b"],
               "slot_agreement_pct": round(100 * c["slot_agreement"], 2),
               "hash_agree": c["hash_agree_iterations"],
               "first_divergence": (f"it {fd['iteration']} ({'+'.join(fd['what'])})" if fd else "none"),
               "first_differing_pages": c["slots"]["first_differences"][:4],
               "comparison": c}
        rows.append(row)
        if progress:
            progress(f"[{i}/{len(variants)}] {name}: fallback model {row['model_fallback_pct']:.2f}% "
                     f"kernel {row['kernel_fallback_pct']:.2f}%, slots {row['slot_agreement_pct']:.2f}%, "
                     f"hashes {row['hash_agree']}/{iterations}, first divergence {row['first_divergence']}")
    return {"schema": SCHEMA, "policy": POLICY, "iterations": iterations, "machine": machine_info(),
            "kernel_release": machine_info()["kernel_release"],
            "seconds": round(time.monotonic() - t0, 3), "rows": rows}


COLUMNS = [("variant", "variant", "{}"), ("iterations", "iters", "{}"),
           ("model_fallback_pct", "model fb%", "{:.2f}"), ("kernel_fallback_pct", "kernel fb%", "{:.2f}"),
           ("slot_agreement_pct", "slots agree%", "{:.2f}"), ("hash_agree", "hash agree", "{}"),
           ("first_divergence", "first divergence", "{}")]


def print_validate(v: dict, out=sys.stdout) -> None:
    print(f"# validate: model {v['policy']} vs kernel {v['kernel_release']}, "
          f"{v['iterations']} iterations, 64M zram swap", file=out)
    report.print_table(v["rows"], [(k, h, f) for k, h, f in COLUMNS], out=out)


def _cmd_validate(a) -> int:
    from .kernel import harness, machine

    try:
        n = parse_count(a.iterations, "--iterations")
        if n == 0:
            raise ParamError("--iterations must be at least 1")
        if a.json:
            check_writable(a.json, "--json")
        v = run_validate(n, a.allow_other_swap,
                         progress=lambda s: print(f"validate: {s}", file=sys.stderr, flush=True))
    except ParamError as e:
        sys.stderr.write(f"swaplab validate: error: {e}\n")
        return 2
    except machine.HarnessError as e:
        sys.stderr.write(f"swaplab validate: error: {e}\n")
        return 1
    except harness.Signalled as e:
        sys.stderr.write(f"swaplab validate: interrupted by signal {e.signo}; machine restored\n")
        return 128 + e.signo
    if a.json != "-":
        print_validate(v)
    if a.json:
        write_json(a.json, v)
    return 0
