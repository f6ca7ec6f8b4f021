"""swaplab validate: the model (linux-6.18) against the live kernel over a
matrix of workload variants, one row per variant (docs/kernel-harness.md).

Default matrix, 64M swap each: thp-swap-v1 with and without -s; thp-swap
with none, -a, -s, -a -s; all at 64K mTHP; plus 16K and 32K mTHP variants of
thp-swap-v1 and thp-swap -a. --full adds full_matrix()'s variants, among them
placement_matrix()'s (--placement alone): mTHP mixes up to 2M at several
region offsets (docs/placement.md).
"""
from __future__ import annotations

import sys
import time

from .params import MAX_ITERATIONS, ParamError, WorkloadParams, parse_count
from .results import check_outputs, machine_info, write_json
from . import report

SCHEMA = "swaplab.validate/1"
POLICY = "linux-6.18"


def _v(workload: str, mthp=(64,), small=False, aligned=False, **kw) -> dict:
    d = {"workload": workload, "mthp_kb": list(mthp), "small_folios": small, "aligned_swapin": aligned}
    d.update(kw)
    return d


def default_matrix() -> list:
    """The variants of swaplab validate, as WorkloadParams overrides (64M swap)."""
    m = [_v("thp-swap-v1"), _v("thp-swap-v1", small=True),
         _v("thp-swap"), _v("thp-swap", aligned=True),
         _v("thp-swap", small=True), _v("thp-swap", small=True, aligned=True)]
    for kb in (16, 32):
        m += [_v("thp-swap-v1", (kb,)), _v("thp-swap", (kb,), aligned=True)]
    return m


# --full: mixes of mTHP sizes up to 2M, each on both workloads at several
# region offsets (docs/placement.md); 704K and 1028K are not multiples of 256K.
MIXES = ((64, 2048), (16, 64, 256), (32, 64, 128), (16, 64, 256, 1024),
         (16, 32, 64, 128, 256, 512, 1024, 2048))
MIX_OFFSETS = ((0, 0), (64 << 10, 0), (704 << 10, 0), (1472 << 10, 0), (1028 << 10, 12 << 10))


def placement_matrix() -> list:
    """Each mix of MIXES on thp-swap-v1 -s and thp-swap -a -s at each offset of MIX_OFFSETS,
    plus the published W1 shape (16K+64K+256K, glibc rand, CPU 1) at four offsets."""
    m = []
    for mix in MIXES:
        for off in MIX_OFFSETS:
            m += [_v("thp-swap-v1", mix, small=True, region_offset=list(off)),
                  _v("thp-swap", mix, small=True, aligned=True, region_offset=list(off))]
    for off in (0, 64 << 10, 128 << 10, 1472 << 10):
        m.append(_v("thp-swap-v1", (16, 64, 256), rng="glibc", cpu=1, region_offset=[off, 0]))
    return m


def full_matrix() -> list:
    """--full: the default matrix, then every mTHP size alone and 16K+64K, other
    swap sizes (one not a multiple of 2M), the glibc RNG, three more seeds,
    several zram devices and the placement matrix (mixes up to 2M at several
    region offsets)."""
    m = default_matrix()
    for sizes in ((128,), (256,), (16, 64)):
        m += [_v("thp-swap-v1", sizes), _v("thp-swap-v1", sizes, small=True),
              _v("thp-swap", sizes), _v("thp-swap", sizes, aligned=True)]
    for kb in (16, 32):
        m += [_v("thp-swap-v1", (kb,), small=True), _v("thp-swap", (kb,))]
    for mib in (32, 48, 128):
        m += [_v("thp-swap-v1", swap_bytes=mib << 20), _v("thp-swap", aligned=True, swap_bytes=mib << 20)]
    odd = (63 << 20) + (748 << 10)  # 63.73 MiB: the last cluster is partly padding
    m += [_v("thp-swap-v1", small=True, swap_bytes=odd), _v("thp-swap", aligned=True, swap_bytes=odd)]
    m += [_v("thp-swap-v1", rng="glibc"), _v("thp-swap-v1", small=True, rng="glibc"),
          _v("thp-swap", rng="glibc"), _v("thp-swap", aligned=True, rng="glibc"),
          _v("thp-swap", aligned=True, small=True, rng="glibc")]
    for seed in (2, 3, 4):
        m += [_v("thp-swap-v1", small=True, seed=seed), _v("thp-swap", small=True, aligned=True, seed=seed)]
    # several zram devices (F6): equal priorities, a small one above a big one, default priorities
    two = [{"bytes": 32 << 20, "kind": "zram", "prio": 5}]
    m += [_v("thp-swap-v1", small=True, swap_bytes=32 << 20, swap_prio=5, extra_swap=two),
          _v("thp-swap", aligned=True, swap_bytes=32 << 20, swap_prio=5, extra_swap=two),
          _v("thp-swap-v1", swap_bytes=16 << 20, swap_prio=10,
             extra_swap=[{"bytes": 64 << 20, "kind": "zram", "prio": 1}]),
          _v("thp-swap", aligned=True, swap_bytes=16 << 20,
             extra_swap=[{"bytes": 16 << 20, "kind": "zram", "prio": -1},
                         {"bytes": 32 << 20, "kind": "zram", "prio": -1}])]
    return m + placement_matrix()


def variant_name(wp: WorkloadParams) -> str:
    flags = (" -a" if wp.aligned_swapin else "") + (" -s" if wp.small_folios else "")
    name = f"{wp.workload}{flags} {','.join(map(report.size_label, wp.mthp_kb))}"
    if wp.swap_bytes != 64 << 20:
        mib = wp.swap_bytes / (1 << 20)
        name += f" swap={mib:g}M" if mib == int(mib) else f" swap={wp.swap_bytes >> 10}K"
    if wp.rng != "default":
        name += f" rng={wp.rng}"
    if wp.seed != 1:
        name += f" seed={wp.seed}"
    if wp.swap_prio >= 0:
        name += f" prio={wp.swap_prio}"
    for x in wp.extra_swap:
        name += f" +{x['bytes'] >> 20}M" + (f" prio={x['prio']}" if x["prio"] >= 0 else "")
    if wp.cpu:
        name += f" cpu={wp.cpu}"
    if any(wp.region_offset):
        name += " at " + ",".join(f"{b >> 10}K" for b in wp.region_offset[:1 + bool(wp.small_folios)])
    return name


def add_parsers(sub) -> None:
    v = sub.add_parser("validate", help="model vs live kernel over a matrix of workload variants",
                       description="Runs each variant of the default matrix on the model (policy "
                                   "linux-6.18) and on the live kernel (swaplab kernel run; root, "
                                   "zram) and prints one row per variant: mean fallback %% of both, "
                                   "slot agreement of the final layouts, iterations whose layout "
                                   "hash agrees, first divergence.")
    v.add_argument("--iterations", default="100", help="iterations per variant (default 100)")
    v.add_argument("--full", action="store_true",
                   help="the full matrix: mTHP sizes 16K..256K and 16K+64K, swap sizes 32M..128M and one "
                        "not a multiple of 2M, the glibc RNG, more seeds, several zram devices, and the "
                        "placement rows (mTHP mixes up to 2M at several region offsets)")
    v.add_argument("--placement", action="store_true",
                   help="only the placement rows of --full: mTHP mixes up to 2M at several region offsets")
    v.add_argument("--json", metavar="PATH", help="write every comparison as JSON ('-' for stdout)")
    v.add_argument("--retries", default="2",
                   help="rerun a kernel run on which other processes swapped onto the device, up to N "
                        "times (default 2; docs/kernel-findings.md F5)")
    v.add_argument("--allow-other-swap", action="store_true",
                   help="run even while other swap is active (see swaplab kernel run)")
    v.set_defaults(func=_cmd_validate)


def run_validate(iterations: int, allow_other_swap: bool = False, progress=None,
                 full: bool = False, retries: int = 0, placement: bool = False) -> dict:
    from .compare import compare
    from .kernel import harness
    from .model import run_model

    variants = [WorkloadParams(iterations=iterations, **v)
                for v in (placement_matrix() if placement else full_matrix() if full else default_matrix())]
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
        for attempt in range(retries + 1):
            harness.preflight(wp, allow_other_swap)
            kres, klay = harness.run_kernel(wp, allow_other_swap=allow_other_swap, tools=tools)
            if not kres.get("first_other_pages_iteration"):
                break
            if progress and attempt < retries:
                progress(f"[{i}/{len(variants)}] {name}: other pages on the device from iteration "
                         f"{kres['first_other_pages_iteration']}: kernel run again")
        c = compare(mres, kres, mlay, klay, name_a="model", name_b="kernel")
        fd = c["first_divergence"]
        # several sizes: the mean over the sizes of each one's mean fallback %
        sizes = [str(kb) for kb in wp.mthp_kb]
        row_retries = attempt
        row = {"variant": name, "iterations": iterations,
               "model_fallback_pct": sum(c["summary"][kb]["mean_fallback_pct_a"] for kb in sizes) / len(sizes),
               "kernel_fallback_pct": sum(c["summary"][kb]["mean_fallback_pct_b"] for kb in sizes) / len(sizes),
               "slot_agreement_pct": round(100 * c["slot_agreement"], 2),
               "hash_agree": c["hash_agree_iterations"],
               "first_divergence": (f"it {fd['iteration']} ({'+'.join(fd['what'])})" if fd else "none")
               + (f", other pages on the device from it {c['interference']['b']}"
                  if c["interference"]["b"] else ""),
               "first_differing_pages": c["slots"]["first_differences"][:4],
               "kernel_retries": row_retries,
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
           ("kernel_retries", "reruns", "{}"), ("first_divergence", "first divergence", "{}")]


def print_validate(v: dict, out=sys.stdout) -> None:
    print(f"# validate: model {v['policy']} vs kernel {v['kernel_release']}, "
          f"{v['iterations']} iterations, zram swap (64M unless named)", file=out)
    report.print_table(v["rows"], [(k, h, f) for k, h, f in COLUMNS], out=out)


def _cmd_validate(a) -> int:
    from .kernel import harness, machine

    try:
        n = parse_count(a.iterations, "--iterations", 1, MAX_ITERATIONS)
        if n == 0:
            raise ParamError("--iterations must be at least 1")
        check_outputs([("--json", a.json)])
        retries = parse_count(a.retries, "--retries")
        v = run_validate(n, a.allow_other_swap, retries=retries,
                         progress=lambda s: print(f"validate: {s}", file=sys.stderr, flush=True),
                         full=a.full, placement=a.placement)
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
