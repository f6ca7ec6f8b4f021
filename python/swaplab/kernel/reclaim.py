"""swaplab kernel run usemem: a reclaim-driven workload on the live kernel
(docs/kernel-harness.md, "Reclaim workloads").

The harness checks that it can work, then (every change recorded in the state
file first) creates its own zram device, sets the mTHP knobs, creates a
memory cgroup of its own with the limit, and runs swaplab-rdriver, whose
children join the cgroup, pin themselves to CPUs and play the operation
stream. Every swap-out comes from reclaim under the limit. The machine is
restored on success, error, SIGINT, SIGTERM, and by `swaplab kernel cleanup`
after a kill -9.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from .. import __version__, _core
from ..params import ParamError, format_size, parse_count
from ..results import fallback_pct, format_hash, machine_info
from . import machine as M
from .harness import Signalled, drive  # noqa: F401 (Signalled: for callers)

SCHEMA = "swaplab.reclaim-result/1"
WORKLOADS = ("usemem", "pmbench", "build")
PAGE = 4096
MiB = 1 << 20
RDRIVER = "swaplab-rdriver"
# the vmstat counters a result keeps (their increases over the run)
VMSTAT_KEYS = ("pswpin", "pswpout", "pgfault", "pgmajfault", "pgscan_direct", "pgsteal_direct",
               "pgscan_kswapd", "pgsteal_kswapd", "pgscan_anon", "pgsteal_anon", "pgactivate",
               "pgdeactivate", "pgrefill", "pgrotated", "swap_ra", "swap_ra_hit", "thp_split_page",
               "thp_swpout", "thp_swpout_fallback", "workingset_refault_anon",
               "workingset_activate_anon", "workingset_restore_anon", "oom_kill", "allocstall_normal",
               "allocstall_movable", "pgalloc_normal", "pgfree")
MTHP_KEYS = ("swpout", "swpout_fallback", "swpin", "swpin_fallback", "swpin_fallback_charge",
             "anon_fault_alloc", "anon_fault_fallback", "anon_fault_fallback_charge", "split",
             "split_failed", "split_deferred")


@dataclass
class ReclaimParams:
    """A reclaim workload's parameters: `stream` is sl_rwl_params as the
    driver resolved it (the kind's defaults, the preset, the options; the
    generator's own validation), the rest is the harness's."""
    workload: str = "usemem"
    preset: str | None = None
    stream: dict = field(default_factory=dict)
    cpu: int = 0                        # the first CPU: process slot k runs on cpu + k % nr_cpus
    phase_layouts: bool = False
    window: int = 0                     # TOUCH / MUNMAP in flight at once (0: the driver's 2 per CPU)
    stat_flush: int = 0                 # the driver reads memory.stat every this many of them (0: never; F28)
    page_content: str = "byte"          # what a write stores: one byte a page, or whole "mixed" pages (F33)
    cost: dict = field(default_factory=dict)  # ns per event (sl_cost_model's fields)

    @property
    def limit_bytes(self) -> int:
        return self.stream["limit_pages"] * PAGE

    @property
    def swap_bytes(self) -> int:
        return self.stream["swap_bytes"]

    @property
    def mthp_kb(self) -> list:
        return [4 << o for o in range(1, 32) if self.stream["mthp_mask"] >> o & 1]

    def driver_args(self) -> list:
        s = self.stream
        out = ["--workload", s["workload"]]
        for k, opt in _STREAM_OPTS:
            out += [opt, repr(s[k]) if isinstance(s[k], float) else str(s[k])]
        out += ["--first-cpu", str(self.cpu)]
        out += ["--window", str(self.window)] if self.window else []
        out += ["--page-content", self.page_content] if self.page_content != "byte" else []
        return out + (["--stat-flush", str(self.stat_flush)] if self.stat_flush else [])


# sl_rwl_params fields and the driver's options for them (rstream.h): every
# field is passed, so that the driver's parameters are exactly the model's
_STREAM_OPTS = (("seed", "--seed"), ("limit_pages", "--limit-pages"), ("swap_bytes", "--swap-bytes"),
                ("mthp_mask", "--mthp-mask"), ("chunk_pages", "--chunk-pages"), ("nr_cpus", "--nr-cpus"),
                ("nr_procs", "--procs"), ("proc_pages", "--proc-pages"), ("reread_passes", "--reread"),
                ("wss_pages", "--wss-pages"), ("accesses", "--accesses"), ("read_pct", "--read-pct"),
                ("dist", "--dist"), ("zipf_s", "--zipf-s"), ("jobs", "--jobs"),
                ("generations", "--generations"), ("size_median_pages", "--size-median-pages"),
                ("size_sigma", "--size-sigma"), ("size_min_pages", "--size-min-pages"),
                ("size_max_pages", "--size-max-pages"), ("life_min_passes", "--life-min-passes"),
                ("life_max_passes", "--life-max-passes"))


def build_parser():
    """The model's `swaplab run usemem|pmbench|build|PRESET` options
    (swaplab/reclaim.py) and the harness's own."""
    from .. import reclaim as model
    p = model.build_parser()
    p.prog = "swaplab kernel run"
    p.description = ("Run a reclaim-driven workload (usemem, pmbench, build) or a preset on the live "
                     "kernel: its own zram device, memory cgroup and mTHP knobs, restored afterwards. "
                     "The options are the model's (swaplab run usemem --help); --policy, --check and "
                     "--device other than zram are the model's only.")
    p.add_argument("--cpu", default="0", help="the first CPU: process slot k runs on CPU + k %% cpus")
    p.add_argument("--phase-layouts", action="store_true",
                   help="also record every process's slot layout at each phase marker")
    p.add_argument("--stat-flush", default="0", metavar="N",
                   help="read the group's memory.stat (which flushes its statistics) before every Nth "
                        "TOUCH or MUNMAP, so that reclaim and the workingset see current list sizes "
                        "as the model does (kernel-findings F28; default 0: never, the kernel's "
                        "periodic flush every 2 s alone)")
    for act in p._actions:     # the model's --window, with the driver's default
        if act.dest == "layout_dump":
            act.help = ("write the recorded slot layouts (each process's at exit, and with "
                        "--phase-layouts at each phase marker): one little-endian uint64 per page")
        if act.dest == "window":
            act.help = ("operations (TOUCH, MUNMAP) in flight at once over all processes; 1 runs "
                        "them one after another as the model does by default (default 0: 2 per CPU)")
    return p


def params_from_args(a, argv: list) -> ReclaimParams:
    """ReclaimParams from the arguments, through the model's own parsing; the
    driver's resolution of the same parameters must agree. ParamError names
    the problem."""
    from .. import reclaim as model
    for opt in ("--policy", "--check"):
        if any(x == opt or x.startswith(opt + "=") for x in argv):
            raise ParamError(f"{opt} is for the model only; the kernel harness runs this kernel")
    if a.device not in (None, "zram"):
        raise ParamError(f"the kernel harness swaps to its own zram device; --device {a.device} "
                         "is for the model only")
    prm, preset = model.params_from_args(a)
    if a.mthp is not None and a.mthp.strip().lower() == "all":
        raise ParamError("--mthp all: name the sizes (16K,32K,...,2M)")
    args = ["--workload", prm["workload"]]
    for k, opt in _STREAM_OPTS:
        v = prm[k]
        args += [opt, repr(v) if isinstance(v, float) else str(v)]
    stream = resolve(args)
    want = {k: prm[k] for k, _ in _STREAM_OPTS}
    got = {k: stream[k] for k, _ in _STREAM_OPTS}
    if got != want:
        diff = [k for k in want if want[k] != got[k]]
        raise M.HarnessError(f"the driver resolved {diff[0]} as {got[diff[0]]}, the model as {want[diff[0]]}")
    p = ReclaimParams(workload=prm["workload"], preset=preset, stream=stream)
    p.cpu = parse_count(a.cpu, "--cpu", 0, 4095)
    p.phase_layouts = bool(a.phase_layouts)
    p.window = 0 if a.window is None else parse_count(a.window, "--window", 0, 4096)
    p.stat_flush = parse_count(a.stat_flush, "--stat-flush", 0, 1 << 20)
    p.page_content = a.page_content
    cost = model.content_cost(model.load_cost(a.cost), a.page_content)
    p.cost = dict(_core.cost_default(), **(cost or {}))
    return p


def resolve(args: list) -> dict:
    """The driver's --print-params: sl_rwl_params after the kind's defaults
    and the options, validated by the generator. Changes nothing."""
    drv = M.driver_path(RDRIVER)
    if not os.access(drv, os.X_OK):
        raise M.HarnessRefused(f"the reclaim driver {drv} is missing; reinstall swaplab (pip install .)")
    r = subprocess.run([drv, "--print-params", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode:
        msg = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
        raise ParamError(msg.removeprefix("swaplab-rdriver: "))
    return json.loads(r.stdout)


def check_sizes(p: ReclaimParams) -> None:
    """What the machine must hold: the limit within half of the available
    memory, the swap device large enough for what the limit pushes out."""
    avail = _meminfo().get("MemAvailable", 0) * 1024
    if avail and p.limit_bytes > avail // 2:
        raise ParamError(f"--limit {format_size(p.limit_bytes)} is more than half of the available "
                         f"memory ({format_size(avail)})")
    s = p.stream
    if p.workload == "usemem":
        out = s["nr_procs"] * s["proc_pages"] * PAGE - p.limit_bytes
        if out > 0 and out > p.swap_bytes - 2 * MiB:
            raise ParamError(f"--swap-size {format_size(p.swap_bytes)} cannot hold what the limit pushes "
                             f"out ({s['nr_procs']} x {format_size(s['proc_pages'] * PAGE)} - "
                             f"{format_size(p.limit_bytes)}); the workload would be OOM-killed")


def _meminfo() -> dict:
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k] = int(v.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def preflight(p: ReclaimParams) -> dict:
    """Every check, nothing changed. Returns the tools found."""
    check_sizes(p)
    tools = M.check_can_run(p.mthp_kb, None)
    tools["rdriver"] = M.driver_path(RDRIVER)
    M.check_memcg()
    allowed = sorted(os.sched_getaffinity(0))
    n = p.stream["nr_cpus"]
    bad = [c for c in range(p.cpu, p.cpu + n) if c not in allowed]
    if bad:
        raise M.HarnessRefused(f"--cpu {p.cpu} --cpus {n} needs CPU {bad[0]}, which is not available "
                               f"to this process (allowed: {','.join(map(str, allowed))})")
    M.check_no_state()
    M.check_no_other_swap()
    return tools


def _memcg_read(path: str) -> dict:
    out = {}
    for name in ("memory.max_usage_in_bytes", "memory.failcnt", "memory.memsw.max_usage_in_bytes",
                 "memory.kmem.max_usage_in_bytes", "memory.limit_in_bytes", "memory.swappiness"):
        try:
            out[name.split(".", 1)[1]] = int(M.read_text(os.path.join(path, name)))
        except (OSError, ValueError):
            pass
    try:
        stat = {}
        for line in M.read_text(os.path.join(path, "memory.stat")).splitlines():
            k, v = line.split()
            if k in ("pgfault", "pgmajfault", "pgpgin", "pgpgout"):
                stat[k] = int(v)
        out["stat"] = stat
    except (OSError, ValueError):
        pass
    try:
        for line in M.read_text(os.path.join(path, "memory.oom_control")).splitlines():
            k, v = line.split()
            if k == "oom_kill":
                out["oom_kill"] = int(v)
    except (OSError, ValueError):
        pass
    return out


def run_kernel(p: ReclaimParams, tools: dict | None = None) -> tuple[dict, bytes]:
    """Runs p on the live kernel. Returns (result, layout bytes). Raises
    HarnessRefused (nothing changed), HarnessError (restored) or Signalled
    (restored)."""
    if tools is None:
        tools = preflight(p)
    state = M.State()
    sess = M.Session(state, tools)
    tmp = state.data["tmpdir"] = tempfile.mkdtemp(prefix="swaplab-reclaim-")
    out_json = os.path.join(tmp, "raw.json")
    out_layout = os.path.join(tmp, "layout.bin")
    t0 = time.monotonic()
    info = {}

    def prepare():
        sess.create_zram(p.swap_bytes, _core.PRIO_MAX)
        info["zram"] = sess.zram_info()
        info["before"], info["during"] = sess.set_knobs(p.mthp_kb)
        info["cg"] = sess.create_memcg(p.limit_bytes)
        return [tools["rdriver"], "--cgroup", info["cg"], "--json", out_json, "--layout", out_layout,
                "--sysfs-root", M.sysfs_root(), "--parent-pid", str(os.getpid()),
                "--swap-dev", info["zram"]["device"]] + p.driver_args() + \
            (["--phase-layouts"] if p.phase_layouts else [])

    def collect():
        memcg = _memcg_read(info["cg"])       # before restore removes the cgroup
        info["zram"]["mm_stat"] = sess.zram_mm_stat()   # and resets the device
        with open(out_json) as f:
            raw = json.load(f)
        with open(out_layout, "rb") as f:
            return raw, f.read(), memcg

    try:
        raw, layout, memcg_stats = drive(state, tools, prepare, collect, "reclaim driver")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    before, during, zram = info["before"], info["during"], info["zram"]
    res = build_result(p, raw, layout, extra={"kernel": {
        "release": platform.uname().release, "version": platform.uname().version,
        "knobs_before": {str(k): v for k, v in sorted(before.items())},
        "knobs_during": {str(k): v for k, v in sorted(during.items())},
        "zram": zram, "memcg": memcg_stats, "wall_seconds": round(time.monotonic() - t0, 3)}})
    return res, layout


def counter_delta(a: dict, b: dict, sizes_kb: list) -> dict:
    """The counters' increases from snapshot a to snapshot b: per mTHP size
    (every size with a stats directory; enabled or not, a size that moved is
    shown), order 0 derived from pswpout/pswpin minus the pages the large
    sizes account for, and the kept vmstat counters. The counters are
    system-wide: the harness runs with no other swap active."""
    sizes = {}
    large_out = large_in = 0
    for kb in sorted(b["mthp"], key=int):
        d = {k: b["mthp"][kb].get(k, 0) - a["mthp"].get(kb, {}).get(k, 0) for k in MTHP_KEYS
             if k in b["mthp"][kb]}
        if int(kb) in sizes_kb or any(d.values()):
            d["fallback_pct"] = round(fallback_pct(d.get("swpout", 0), d.get("swpout_fallback", 0)), 4)
            sizes[kb] = d
        large_out += d.get("swpout", 0) * (int(kb) // 4)
        large_in += d.get("swpin", 0) * (int(kb) // 4)
    vm = {k: b["vmstat"].get(k, 0) - a["vmstat"].get(k, 0) for k in VMSTAT_KEYS if k in b["vmstat"]}
    order0 = {"swpout": vm.get("pswpout", 0) - large_out, "swpin": vm.get("pswpin", 0) - large_in}
    return {"sizes": sizes, "order0": order0, "vmstat": vm}


def slot_stats(layout: bytes, recs: list) -> dict:
    """Per recorded layout: swapped pages, distinct slots, swap types."""
    import array
    v = array.array("Q")
    v.frombytes(layout)
    if os.sys.byteorder != "little":
        v.byteswap()
    out = []
    for r in recs:
        part = v[r["first"]:r["first"] + r["npages"]]
        slots = [x for x in part if x != 0xFFFFFFFFFFFFFFFF]
        out.append({"swapped": len(slots), "distinct": len(set(slots)),
                    "types": sorted({x >> 48 for x in slots})})
    return out


def model_view(p: ReclaimParams, total: dict, raw: dict, memcg: dict | None) -> dict:
    """The fields the model's result has (swaplab/reclaim.py build_result),
    from the kernel's counters: per size (4 = order 0) swpout,
    swpout_fallback, fallback_pct, swpin, faults, charge_fallback,
    swpin_fallback_charge; reclaim;
    pages. Large-folio faults are anon_fault_alloc (system-wide, F8);
    order-0 faults the workload's minor faults (wait4) less those."""
    sizes = {}
    large_faults = sum(d.get("anon_fault_alloc", 0) for d in total["sizes"].values())
    minflt = sum(x["minflt"] for x in raw["procs"])
    o0 = total["order0"]
    sizes["4"] = {"swpout": o0["swpout"], "swpout_fallback": 0, "fallback_pct": 0.0, "swpin": o0["swpin"],
                  "faults": max(minflt - large_faults, 0), "charge_fallback": 0, "swpin_fallback_charge": 0}
    for kb, d in total["sizes"].items():
        sizes[kb] = {"swpout": d.get("swpout", 0), "swpout_fallback": d.get("swpout_fallback", 0),
                     "fallback_pct": fallback_pct(d.get("swpout", 0), d.get("swpout_fallback", 0)),
                     "swpin": d.get("swpin", 0), "faults": d.get("anon_fault_alloc", 0),
                     "charge_fallback": d.get("anon_fault_fallback_charge", 0),
                     "swpin_fallback_charge": d.get("swpin_fallback_charge", 0)}
    vm = total["vmstat"]
    memcg = memcg or {}
    reclaim = {"direct_reclaim": None, "pgscan": vm.get("pgscan_anon"), "pgsteal": vm.get("pgsteal_anon"),
               "pgactivate": vm.get("pgactivate"), "pgdeactivate": vm.get("pgdeactivate"),
               "pgrefill": vm.get("pgrefill"),
               "workingset_refault": vm.get("workingset_refault_anon"),
               "workingset_activate": vm.get("workingset_activate_anon"),
               "workingset_restore": vm.get("workingset_restore_anon"), "oom": memcg.get("oom_kill"),
               "max_usage": memcg["max_usage_in_bytes"] // PAGE if "max_usage_in_bytes" in memcg else None,
               "swap_peak": None}
    fault_pages = sizes["4"]["faults"] + sum(v["faults"] * int(kb) // 4 for kb, v in sizes.items() if kb != "4")
    pages = {"faulted": fault_pages, "swapped_out": vm.get("pswpout", 0), "swapped_in": vm.get("pswpin", 0)}
    return {"sizes": sizes, "reclaim": reclaim, "pages": pages}


def stream_counts(params: dict) -> dict:
    """What the model counts for the operation stream of `params`
    (sl_rwl_params, as a result's "params"), which the kernel driver replays
    too: its operations (`ops`), its processes (`procs`), and the share of
    its swap events (folios written out or swapped in) made while a process
    on another CPU is alive (`contended`: lock_waits / events). The kernel
    has no counter for these; the calibration (calibrate.py) fits the same
    three from the same numbers."""
    from .. import reclaim as model
    r = model.run_reclaim(dict(params, device="zram"), "linux-6.18")
    ev = sum(d["swpout"] + d["swpin"] for d in r["sizes"].values())
    return {"ops": r["cost"]["ops"], "procs": r["processes"],
            "contended": r["cost"]["lock_waits"] / ev if ev else 0.0}


def predict_sys(cost: dict, view: dict, stream: dict) -> float:
    """The cost model's system time for the kernel's own counts, with every
    term of the model's sl_cost_predict (docs/reclaim.md, "Cost model"):
    faults (2M ones by fault_pmd_folio), swap-outs and swap-ins per folio and
    page, splits, scanned pages, and from `stream` (stream_counts()) the
    operations, the processes and the contended swap events (the kernel's
    swap events times the stream's contended share: calibrate.py's `lock`
    feature)."""
    ns = 0.0
    pmd = view["sizes"].get("2048", {}).get("faults", 0)
    ns += cost["fault_pmd_folio"] * pmd   # in place of fault_folio + 512 fault_page
    for kb, d in view["sizes"].items():
        ns += cost["fault_folio"] * d["faults"] * (kb != "2048") + cost["swpout_folio"] * d["swpout"]
        ns += cost["swpin_folio"] * d["swpin"] + cost["split"] * d["swpout_fallback"]
    pg = view["pages"]
    ns += cost["fault_page"] * (pg["faulted"] - 512 * pmd) + cost["swpout_page"] * pg["swapped_out"]
    ns += cost["swpin_page"] * pg["swapped_in"]
    r = view["reclaim"]
    ns += cost["scan_page"] * ((r["pgscan"] or 0) + (r["pgrefill"] or 0))
    events = sum(d["swpout"] + d["swpin"] for d in view["sizes"].values())
    ns += cost["lock_wait"] * events * stream["contended"]
    ns += cost["op"] * stream["ops"] + cost["proc"] * stream["procs"]
    return ns * 1e-9


def swap_use(snap: dict, recs: list) -> dict:
    """The slots in use on our device at a snapshot (/proc/swaps; none from
    a driver run without --swap-dev), and at a phase whose layouts were
    recorded, how many of them hold no page of the workload's processes
    (`other_pages`): pages of another task that reclaim or MADV_PAGEOUT
    put on our device. A swap-in on zram frees its slot, and at the barrier
    no reclaim is under way, so the workload's pages are all there is
    (kernel-findings F36)."""
    if snap.get("swap_used_kb") is None or snap["swap_used_kb"] < 0:
        return {}
    used = snap["swap_used_kb"] // 4
    out = {"swap_used_pages": used}
    mine = [r for r in recs if r["label"] == "phase" and r["phase"] == snap["phase"] and snap["label"] == "phase"]
    if mine:
        out["other_pages"] = used - sum(r["swapped"] for r in mine)
    return out


def other_pages(res: dict) -> int:
    """The most slots of our device that held no page of the workload in a
    kernel result: at a phase with layouts (`other_pages`), or as a
    process's layout was read at its exit when it was the only process
    (kernel-findings F36)."""
    n = [ph.get("other_pages", 0) for ph in res["phases"]]
    if res["processes"] == 1:
        n += [x["swap_used_pages"] - x["swapped"] for x in res["layouts"]
              if x["label"] == "exit" and "swap_used_pages" in x]
    return max(n, default=0)


def build_result(p: ReclaimParams, raw: dict, layout: bytes, extra: dict | None = None) -> dict:
    snaps = raw["snapshots"]
    total = counter_delta(snaps[0], snaps[-1], p.mthp_kb)
    recs = raw["layouts"]
    phases = []
    for prev, cur in zip(snaps, snaps[1:]):
        phases.append({"until": cur["label"] if cur["phase"] < 0 else f"phase {cur['phase']}",
                       "seconds": round(cur["t"] - prev["t"], 6),
                       **counter_delta(prev, cur, p.mthp_kb), **swap_use(cur, recs)})
    st = slot_stats(layout, recs)
    layouts = []
    for r, s in zip(recs, st):
        if s["swapped"] != r["swapped"]:
            raise M.HarnessError("the driver's layout file does not match its layout records")
        layouts.append({k: r[k] for k in ("label", "phase", "proc", "region", "npages", "first",
                                          "swapped", "present")} | {"distinct_slots": s["distinct"]} |
                       # the slots in use on our device as the layout was read (kernel-findings F36)
                       ({"swap_used_pages": r["swap_used_kb"] // 4} if r.get("swap_used_kb", -1) >= 0 else {}))
    at_exit = [x for x in layouts if x["label"] == "exit"]
    memcg = (extra or {}).get("kernel", {}).get("memcg")
    # the model's run_layout_hash: every process's layout at the RUN
    # marker (phase 1), chained in process order; only with --phase-layouts
    run_hash = None
    at_run = sorted((x for x in layouts if x["label"] == "phase" and x["phase"] == 1), key=lambda x: x["proc"])
    if at_run:
        h = 0xcbf29ce484222325
        for x in at_run:
            h = ((h ^ _core.layout_hash(layout[8 * x["first"]:8 * (x["first"] + x["npages"])])) *
                 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
        run_hash = format_hash(h)
    view = model_view(p, total, raw, memcg)
    params = dict(p.stream)
    params["device"] = "zram"
    stream = stream_counts(params)
    res = {
        "schema": SCHEMA,
        "swaplab_version": __version__,
        "source": "kernel",
        "policy": f"kernel-{platform.uname().release}",
        "workload": p.workload,
        "preset": p.preset,
        "params": params,
        "harness": {"cpu": p.cpu, "phase_layouts": p.phase_layouts, "stat_flush": p.stat_flush,
                    "stat_reads": raw.get("stat_reads", 0),
                    "rcu_barrier": raw.get("rcu_barrier", False),
                    "driver_cpu": raw.get("driver_cpu"),
                    "window": p.window or 2 * max(1, p.stream["nr_cpus"]),
                    "mthp_sizes": [M.size_label(kb) for kb in p.mthp_kb]},
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        **view,
        "processes": raw["nprocs"],
        "cost": {"model": p.cost, "page_content": p.page_content,
                 "predicted_sys_seconds": round(predict_sys(p.cost, view, stream), 6),
                 "measured_sys_seconds": raw["sys_seconds"],
                 # user + system: what the calibration fits (kernel-findings F34)
                 "measured_cpu_seconds": round(raw["sys_seconds"] + raw["user_seconds"], 6),
                 "stream": stream},
        "counters": total,
        "phases": phases,
        "time": {"user_seconds": raw["user_seconds"], "sys_seconds": raw["sys_seconds"],
                 "wall_seconds": raw["wall_seconds"], "per_process": raw["procs"]},
        "layouts": layouts,
        "layout": {"npages": len(layout) // 8, "hash": format_hash(_core.layout_hash(layout)),
                   "swapped_at_exit": sum(x["swapped"] for x in at_exit),
                   "present_at_exit": sum(x["present"] for x in at_exit)},
        "run_layout_hash": run_hash,
        "seconds": raw["wall_seconds"],
    }
    if extra:
        res.update(extra)
    return res


def print_run(res: dict, out=None) -> None:
    import sys
    out = out or sys.stdout
    p = res["params"]
    c = res["counters"]
    what = {"usemem": lambda: f"{p['nr_procs']} x {format_size(p['proc_pages'] * PAGE)}, reread {p['reread_passes']}",
            "pmbench": lambda: f"{p['nr_procs']} x {format_size(p['wss_pages'] * PAGE)}, {p['accesses']} accesses",
            "build": lambda: f"-j{p['jobs']}, {p['generations']} generations"}[res["workload"]]()
    sizes = res["harness"]["mthp_sizes"]
    print(f"# kernel {res['policy'][7:]}: {res['workload']}{' (' + res['preset'] + ')' if res['preset'] else ''}"
          f" {what} in a {format_size(p['limit_pages'] * PAGE)} memcg, {format_size(p['swap_bytes'])} zram, "
          f"mTHP {','.join(sizes) or '4K only'}, seed {p['seed']}", file=out)
    print(f"{'size':>6} {'swpout':>9} {'fallback':>9} {'fb%':>7} {'swpin':>9} {'faults':>9}", file=out)
    for kb, d in c["sizes"].items():
        print(f"{M.size_label(int(kb)):>6} {d.get('swpout', 0):>9} {d.get('swpout_fallback', 0):>9} "
              f"{d['fallback_pct']:>7.2f} {d.get('swpin', 0):>9} {d.get('anon_fault_alloc', 0):>9}", file=out)
    print(f"{'4K':>6} {c['order0']['swpout']:>9} {'':>9} {'':>7} {c['order0']['swpin']:>9}", file=out)
    t = res["time"]
    print(f"pswpout {c['vmstat'].get('pswpout', 0)}  pswpin {c['vmstat'].get('pswpin', 0)}  "
          f"swapped at exit {res['layout']['swapped_at_exit']}  user {t['user_seconds']:.3f}s  "
          f"sys {t['sys_seconds']:.3f}s  wall {t['wall_seconds']:.3f}s", file=out)
    print(f"predicted system time {res['cost']['predicted_sys_seconds']:.3f} s ({res['cost']['model']['name']})",
          file=out)
