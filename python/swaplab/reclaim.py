"""Reclaim-driven workloads on the model (docs/workloads-reclaim.md, docs/reclaim.md).

`swaplab run usemem|pmbench|build|PRESET [options]` runs one under its
memory limit; `swaplab workloads` lists them and the presets. The result is
JSON (schema swaplab.reclaim-result/1) through results.write_json: per-size
swpout / swpout_fallback / swpin, the reclaim counters and the cost model's
predicted system time.
"""
from __future__ import annotations

import argparse
import json

from . import _core
from .params import (ParamError, KiB, MiB, DEVICE_KINDS, parse_count, parse_mthp, parse_size, shown,
                     size_to_order, order_to_kb, check_policy_name)
from .results import check_output_paths, fallback_pct, load_json_file, machine_info, write_json, write_layout

SCHEMA = "swaplab.reclaim-result/1"

ABOUT = {
    "usemem": "reclaim: N processes each write SIZE sequentially (optionally re-read) under a memory limit",
    "pmbench": "reclaim: random loads and stores (uniform or Zipf) over working sets larger than the limit",
    "build": "reclaim: make -jN, short-lived compiler-sized processes in generations under a limit",
}
PAGE = 4096


def catalogue() -> dict:
    """{'workloads': [names], 'presets': [{name, source, workload}]}."""
    return _core.rwl_workloads()


def is_reclaim_name(name: str) -> bool:
    c = catalogue()
    return name in c["workloads"] or any(p["name"] == name for p in c["presets"])


def base_params(name: str) -> tuple[dict, str | None]:
    """(params, preset name or None) for a workload or preset name."""
    c = catalogue()
    if name in c["workloads"]:
        return _core.rwl_params(workload=name), None
    if any(p["name"] == name for p in c["presets"]):
        return _core.rwl_params(preset=name), name
    raise ParamError(f"unknown workload '{shown(name)}' (swaplab workloads)")


def _pages(text: str, what: str) -> int:
    b = parse_size(text, what)
    if b < PAGE or b % PAGE:
        raise ParamError(f"{what} {shown(text.strip())} is not a non-zero multiple of 4K")
    return b // PAGE


def _float(text: str, what: str, lo: float, hi: float) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ParamError(f"{what} '{shown(text)}' is not a number") from None
    if not lo <= v <= hi:
        raise ParamError(f"{what} {shown(text)} is outside {lo:g}..{hi:g}")
    return v


def build_parser() -> argparse.ArgumentParser:
    from .cli import _Parser
    p = _Parser(prog="swaplab run", description="Run a reclaim-driven workload (usemem, pmbench, "
                "build) or one of their presets under a memory limit on the model.")
    p.add_argument("workload", help="usemem, pmbench, build or a preset (swaplab workloads)")
    p.add_argument("--policy", default="linux-6.18", help="allocator policy (swaplab policies)")
    p.add_argument("--seed", help="seed of the workload's random picks")
    p.add_argument("--limit", help="the memory cgroup's limit, e.g. 40M")
    p.add_argument("--swap-size", help="swap device size")
    p.add_argument("--device", choices=DEVICE_KINDS, help="swap device kind")
    p.add_argument("--mthp", help="enabled mTHP sizes, e.g. 64K or 16K,64K; 'none' for 4K pages only")
    p.add_argument("--cpus", help="CPUs the processes are pinned to, round robin")
    p.add_argument("--chunk", help="pages a process touches per turn (default 64)")
    p.add_argument("--window", help="operations in flight at once, as the kernel harness's --window: "
                   "1 runs the stream one operation at a time (the default), N > 1 lets the CPUs run "
                   "at once (docs/reclaim.md \"Two processes at once\"); 0: 2 per CPU")
    g = p.add_argument_group("usemem and pmbench")
    g.add_argument("--procs", help="processes")
    g.add_argument("--size", help="usemem: memory each process writes")
    g.add_argument("--reread", help="usemem: read passes after the write")
    g.add_argument("--wss", help="pmbench: working set per process")
    g.add_argument("--accesses", help="pmbench: random accesses per process")
    g.add_argument("--read-pct", help="pmbench: percentage of loads")
    g.add_argument("--dist", choices=["uniform", "zipf"], help="pmbench: access distribution")
    g.add_argument("--zipf-s", help="pmbench: Zipf exponent")
    b = p.add_argument_group("build")
    b.add_argument("--jobs", help="make -j")
    b.add_argument("--generations", help="processes per job slot, one after another")
    b.add_argument("--size-median", help="median process size")
    b.add_argument("--size-sigma", help="sigma of the size's logarithm")
    b.add_argument("--size-min", help="smallest process size")
    b.add_argument("--size-max", help="largest process size")
    b.add_argument("--passes", metavar="MIN,MAX", help="walks over its memory after growing")
    p.add_argument("--cost", metavar="FILE", help="cost model coefficients (JSON object, ns per event)")
    p.add_argument("--page-content", default="byte", choices=PAGE_CONTENTS,
                   help="what a write stores: byte (one byte a page, the rest zero: compresses about "
                        "100:1, the calibrated runs' pages) or mixed (whole pages, about 2:1 with "
                        "lzo-rle, as ordinary anonymous memory): the kernel harness writes it, and the "
                        "cost model adds F32's extra compression and decompression to each page "
                        "swapped out and in (kernel-findings F32, F33); default byte")
    p.add_argument("--json", metavar="PATH", help="write the result as JSON ('-' for stdout)")
    p.add_argument("--layout-dump", metavar="PATH",
                   help="write the slot layouts the kernel harness records with --phase-layouts: every "
                        "live process's at each phase marker and each one's as it exits, one "
                        "little-endian uint64 per page (docs/layout-hash.md); the result's 'layouts' "
                        "describes them")
    p.add_argument("--check", choices=["0", "1", "2"], default="0",
                   help="invariant checks: 1 at every phase and exit, 2 after every operation")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    return p


_KIND_OPTS = {
    "usemem": {"procs", "size", "reread"},
    "pmbench": {"procs", "wss", "accesses", "read_pct", "dist", "zipf_s"},
    "build": {"jobs", "generations", "size_median", "size_sigma", "size_min", "size_max", "passes"},
}


def params_from_args(a: argparse.Namespace) -> tuple[dict, str | None]:
    prm, preset = base_params(a.workload)
    kind = prm["workload"]
    for other, opts in _KIND_OPTS.items():
        for o in opts - _KIND_OPTS[kind]:
            if getattr(a, o) is not None:
                raise ParamError(f"--{o.replace('_', '-')} applies to {other}, not {kind}")
    if a.seed is not None:
        prm["seed"] = parse_count(a.seed, "--seed")
    if a.limit is not None:
        prm["limit_pages"] = _pages(a.limit, "--limit")
    if a.swap_size is not None:
        prm["swap_bytes"] = parse_size(a.swap_size, "--swap-size")
    if a.device is not None:
        prm["device"] = a.device
    if a.mthp is not None:
        kbs = [] if a.mthp.strip().lower() in ("none", "4k") else parse_mthp(a.mthp)
        prm["mthp_mask"] = sum(1 << size_to_order(kb) for kb in kbs)
    if a.cpus is not None:
        prm["nr_cpus"] = parse_count(a.cpus, "--cpus", 1, _core.MAX_CPUS)
    if a.chunk is not None:
        prm["chunk_pages"] = parse_count(a.chunk, "--chunk", 1, 1 << 20)
    if a.procs is not None:
        prm["nr_procs"] = parse_count(a.procs, "--procs", 1, 100000)
    if a.size is not None:
        prm["proc_pages"] = _pages(a.size, "--size")
    if a.reread is not None:
        prm["reread_passes"] = parse_count(a.reread, "--reread", 0, 1000)
    if a.wss is not None:
        prm["wss_pages"] = _pages(a.wss, "--wss")
    if a.accesses is not None:
        prm["accesses"] = parse_count(a.accesses, "--accesses")
    if a.read_pct is not None:
        prm["read_pct"] = parse_count(a.read_pct, "--read-pct", 0, 100)
    if a.dist is not None:
        prm["dist"] = 1 if a.dist == "zipf" else 0
    if a.zipf_s is not None:
        prm["zipf_s"] = _float(a.zipf_s, "--zipf-s", 0.01, 10)
    if a.jobs is not None:
        prm["jobs"] = parse_count(a.jobs, "--jobs", 1, 4096)
    if a.generations is not None:
        prm["generations"] = parse_count(a.generations, "--generations", 1, 100000)
    for opt, key in (("size_median", "size_median_pages"), ("size_min", "size_min_pages"),
                     ("size_max", "size_max_pages")):
        if getattr(a, opt) is not None:
            prm[key] = _pages(getattr(a, opt), "--" + opt.replace("_", "-"))
    if a.size_sigma is not None:
        prm["size_sigma"] = _float(a.size_sigma, "--size-sigma", 0, 4)
    if a.passes is not None:
        parts = a.passes.split(",")
        if len(parts) != 2:
            raise ParamError(f"--passes '{shown(a.passes)}' is not MIN,MAX")
        prm["life_min_passes"] = parse_count(parts[0], "--passes minimum", 0, 1000)
        prm["life_max_passes"] = parse_count(parts[1], "--passes maximum", 0, 1000)
    return prm, preset


# What a write stores (--page-content), and what a "mixed" page (about 2:1
# under lzo-rle) costs more than a one-byte page to write to zram and to
# read from it: kernel-findings F32 (swaplab kernel move-cost, 2026-11-28),
# checked against whole runs' system time in F33.
PAGE_CONTENTS = ("byte", "mixed")
MIXED_PAGE_EXTRA_NS = {"swpout_page": 5609.0, "swpin_page": 3215.0}


def content_cost(cost: dict | None, content: str) -> dict | None:
    """The coefficients for pages of this content: byte pages are what the
    calibration measured (cost unchanged); mixed pages add F32's extra to
    the per-page swap-out and swap-in terms of cost (or of the defaults)."""
    if content == "byte":
        return cost
    out = {k: v for k, v in _core.cost_default().items() if k != "name"}
    out.update(cost or {})
    for k, extra in MIXED_PAGE_EXTRA_NS.items():
        out[k] += extra
    return out


def load_cost(path: str | None) -> dict | None:
    if path is None:
        return None
    data = load_json_file(path, "--cost file")
    known = set(_core.cost_default()) - {"name"}
    if not isinstance(data, dict):
        raise ParamError(f"--cost file '{shown(path)}' is not a JSON object")
    for k, v in data.items():
        if k not in known:
            raise ParamError(f"--cost file: unknown coefficient '{shown(k)}' (known: {', '.join(sorted(known))})")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            raise ParamError(f"--cost file: coefficient {shown(k)} is not a non-negative number")
    return data


# The model's default window: the stream one operation at a time.
DEFAULT_WINDOW = 1


def parse_window(text: str, what: str = "--window") -> int:
    return parse_count(text, what, 0, 4096)


def run_reclaim(params: dict, policy: str = "linux-6.18", check: int = 0, cost: dict | None = None,
                preset: str | None = None, window: int = DEFAULT_WINDOW, page_content: str = "byte") -> dict:
    """Runs on the model; returns the result dict (SCHEMA). window: operations
    in flight at once (1 serial; 0: 2 per CPU, the kernel driver's default);
    page_content: what the workload's pages hold, for the cost model
    (content_cost())."""
    return run_reclaim_layout(params, policy, check, cost, preset, window, False, page_content)[0]


def run_reclaim_layout(params: dict, policy: str = "linux-6.18", check: int = 0, cost: dict | None = None,
                       preset: str | None = None, window: int = DEFAULT_WINDOW,
                       layout: bool = True, page_content: str = "byte") -> tuple[dict, bytes | None]:
    """run_reclaim() and, with layout, the slot layouts the run recorded as a
    layout dump's bytes (None without): every live process's at each phase
    marker and each process's as it exits, in the order of the run, as the
    kernel harness records them with --phase-layouts; the result's
    "layouts" describes them (label, phase, proc, first, npages)."""
    check_policy_name(policy)
    if not 0 <= window <= 4096:
        raise ParamError(f"--window {window} is outside 0..4096")
    if page_content not in PAGE_CONTENTS:
        raise ParamError(f"unknown page content '{shown(page_content)}' (known: {', '.join(PAGE_CONTENTS)})")
    try:
        raw = _core.rrun(params, policy=policy, check=check, cost=content_cost(cost, page_content),
                         window=window, layout=layout)
    except ValueError as e:
        raise ParamError(str(e)) from None
    res = build_result(raw, policy, preset)
    res["cost"]["page_content"] = page_content
    if layout:
        res["layouts"] = raw["layouts"]
        res["layout"] = {"npages": len(raw["layout_bytes"]) // 8, "hash": f"{_core.layout_hash(raw['layout_bytes']):016x}"}
    return res, raw["layout_bytes"]


def build_result(raw: dict, policy: str, preset: str | None) -> dict:
    mask = raw["params"]["mthp_mask"]
    sizes = {}
    for o in range(_core.NR_ORDERS):
        if o == 0 or mask & (1 << o) or raw["swpout"][o] or raw["swpin"][o]:
            kb = order_to_kb(o)
            sizes[str(kb)] = {
                "swpout": raw["swpout"][o], "swpout_fallback": raw["swpout_fallback"][o],
                "fallback_pct": fallback_pct(raw["swpout"][o], raw["swpout_fallback"][o]),
                # of the fallbacks, those made while the devices had 2^o free
                # slots, and while one had them aligned (docs/proposals/grid.md)
                "swpout_fallback_free": raw["fail_free"][o] if o else 0,
                "swpout_fallback_aligned": raw["fail_aligned"][o] if o else 0,
                "swpin": raw["swpin"][o], "faults": raw["faults_anon"][o],
                # large folios whose charge failed: new ones
                # (anon_fault_fallback_charge) and swap-ins (swpin_fallback_charge)
                "charge_fallback": raw["charge_fallback"][o],
                "swpin_fallback_charge": raw["swpin_fallback_charge"][o],
            }
    keys = ("direct_reclaim", "pgscan", "pgsteal", "pgactivate", "pgdeactivate", "pgrefill",
            "workingset_refault", "workingset_activate", "workingset_restore", "oom",
            "max_usage", "swap_peak")
    res = {
        "schema": SCHEMA,
        "source": "model",
        "policy": policy,
        "workload": raw["params"]["workload"],
        "preset": preset,
        "params": raw["params"],
        "sizes": sizes,
        "order0": {"alloc_fail": raw["alloc_fail0"], "alloc_fail_free": raw["fail_free"][0],
                   "zero_remapped": raw["zero_remapped"],
                   "zero_transient": raw["zero_transient"]},
        "reclaim": {k: raw[k] for k in keys},
        "clusters": {"free_min": raw["free_clusters_min"],
                     "free_empty_pct": round(100.0 * raw["ops_free_empty"] / raw["free_ops"], 3)}
        if raw["free_ops"] else None,
        # a device without SWP_SYNCHRONOUS_IO (docs/reclaim.md S1-S6): pages
        # read ahead (vmstat swap_ra), faults that found one (swap_ra_hit),
        # swap-cache folios reclaimed without a write; zeros on zram
        "swap_cache": {"readahead": raw["swap_ra"], "readahead_hits": raw["swap_ra_hit"],
                       "clean_reclaimed": raw["swapcache_clean"]},
        "processes": raw["procs"],
        "pages": {"faulted": raw["fault_pages"], "swapped_out": raw["swpout_pages"],
                  "swapped_in": raw["swpin_pages"]},
        "run_layout_hash": f"{raw['run_layout_hash']:016x}",
        "slots_in_use_at_end": raw["inuse_end"],
        "cost": {"model": raw["cost"], "lock_waits": raw["lock_waits"], "ops": raw["ops"],
                 "predicted_sys_seconds": round(raw["sys_seconds"], 6)},
        "invariant_checks": raw["checks"],
        # operations in flight at once; with more than one, reclaims begun
        # while another CPU's was under way and the run's length on the
        # runner's clock (docs/reclaim.md "Two processes at once")
        "runner": {"window": raw["window"], "reclaims_overlapped": raw["reclaims_overlapped"],
                   "clock_seconds": round(raw["clock_ns"] * 1e-9, 6)},
        "seconds": raw["seconds"],
        "machine": machine_info(),
    }
    # proposal-compact's step and proposal-kcompact's worker, where they ran
    # (searches, windows freed, entries moved: docs/proposals/proposal-compact.md)
    for k in ("compact", "kcompact"):
        if k in raw:
            res[k] = raw[k]
    return res


def summary_text(res: dict) -> str:
    p = res["params"]
    lines = [f"{res['workload']}{' (' + res['preset'] + ')' if res['preset'] else ''} on {res['policy']}: "
             f"limit {p['limit_pages'] * PAGE // MiB}M, swap {p['swap_bytes'] // MiB}M {p['device']}, "
             f"{res['processes']} processes",
             f"{'size':>6} {'swpout':>9} {'fallback':>9} {'fb%':>6} {'swpin':>9} {'faults':>9}"]
    for kb, s in res["sizes"].items():
        lines.append(f"{kb + 'K':>6} {s['swpout']:>9} {s['swpout_fallback']:>9} {s['fallback_pct']:>6.1f} "
                     f"{s['swpin']:>9} {s['faults']:>9}")
    r = res["reclaim"]
    lines.append(f"reclaim: {r['direct_reclaim']} direct, scanned {r['pgscan']}, stolen {r['pgsteal']}, "
                 f"activated {r['pgactivate']}, deactivated {r['pgdeactivate']}, oom {r['oom']}")
    sc = res["swap_cache"]
    if p["device"] != "zram":
        lines.append(f"swap cache: {sc['readahead']} pages read ahead, {sc['readahead_hits']} hits, "
                     f"{sc['clean_reclaimed']} clean folios reclaimed unwritten")
    lines.append(f"predicted system time {res['cost']['predicted_sys_seconds']:.3f} s "
                 f"({res['cost']['model']['name']}); model run {res['seconds']:.2f} s")
    return "\n".join(lines)


def main_run(argv: list) -> int:
    a = build_parser().parse_args(argv)
    prm, preset = params_from_args(a)
    check_output_paths(a.json, a.layout_dump)
    cost = load_cost(a.cost)
    window = DEFAULT_WINDOW if a.window is None else parse_window(a.window)
    res, layout = run_reclaim_layout(prm, a.policy, int(a.check), cost, preset, window, bool(a.layout_dump),
                                     a.page_content)
    if a.layout_dump:
        write_layout(a.layout_dump, layout or b"")
    if a.json:
        write_json(a.json, res)
    if not a.quiet and a.json != "-":
        print(summary_text(res))
    return 0


# ------------------------------------------------------------------ goldens

# (label, workload or preset, overrides): small enough for every policy in seconds.
GOLDEN_VARIANTS = [
    ("usemem-4K", "usemem", {"nr_procs": 4, "proc_pages": 2048, "limit_pages": 4096, "mthp_mask": 0}),
    ("usemem-64K", "usemem", {"nr_procs": 4, "proc_pages": 2048, "limit_pages": 4096}),
    ("usemem-all", "usemem", {"nr_procs": 4, "proc_pages": 2048, "limit_pages": 4096, "mthp_mask": 0x3fc}),
    ("pmbench-uniform-64K", "pmbench", {"nr_procs": 2, "nr_cpus": 2, "wss_pages": 4096,
                                        "limit_pages": 4096, "accesses": 8000}),
    ("pmbench-zipf-16K-64K", "pmbench", {"wss_pages": 4096, "limit_pages": 2048, "accesses": 8000,
                                         "dist": 1, "zipf_s": 0.9, "mthp_mask": 0x14}),
    ("build-64K", "build", {"jobs": 3, "generations": 3, "limit_pages": 4096, "size_median_pages": 1536,
                            "size_max_pages": 8192}),
    # a device without SWP_SYNCHRONOUS_IO: swap-in through the swap cache
    # with readahead (docs/reclaim.md S1-S6)
    ("usemem-64K-ssd", "usemem", {"nr_procs": 4, "proc_pages": 2048, "limit_pages": 4096,
                                  "device": "ssd"}),
    ("pmbench-uniform-ssd", "pmbench", {"nr_procs": 2, "nr_cpus": 2, "wss_pages": 4096,
                                        "limit_pages": 4096, "accesses": 8000, "device": "ssd"}),
    ("build-all-small-swap", "build", {"jobs": 3, "generations": 3, "limit_pages": 4096,
                                       "size_median_pages": 1536, "size_max_pages": 8192,
                                       "mthp_mask": 0x3fc, "swap_bytes": 24 << 20}),
]


def golden_pinned(res: dict) -> dict:
    return {"sizes": {kb: [s["swpout"], s["swpout_fallback"], s["swpin"], s["faults"]]
                      for kb, s in res["sizes"].items()},
            "reclaim": [res["reclaim"][k] for k in ("direct_reclaim", "pgscan", "pgsteal", "pgactivate",
                                                    "pgdeactivate", "oom")],
            "run_layout_hash": res["run_layout_hash"]}


def compute_golden(policy: str) -> dict:
    variants = {}
    for label, name, over in GOLDEN_VARIANTS:
        prm, preset = base_params(name)
        prm.update(over)
        res = run_reclaim(prm, policy, check=1, preset=preset)
        variants[label] = dict(golden_pinned(res), params=res["params"])
    return {"policy": policy, "format": "sizes kB -> [swpout, swpout_fallback, swpin, faults]; "
                                        "reclaim -> [direct, pgscan, pgsteal, pgactivate, pgdeactivate, oom]",
            "variants": variants}


def golden_text(data: dict) -> str:
    return json.dumps(data, indent=0, separators=(",", ":")) + "\n"
