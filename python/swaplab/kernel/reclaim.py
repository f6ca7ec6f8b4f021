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
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field

from .. import __version__, _core
from ..params import (ParamError, check_swap_size, format_size, parse_count, parse_mthp, parse_size,
                      size_to_order, shown)
from ..results import fallback_pct, format_hash, machine_info
from . import machine as M
from .harness import Signalled, _SIGNALS, _block, _handler, _unblock

SCHEMA = "swaplab.reclaim-result/1"
WORKLOADS = ("usemem",)
PAGE = 4096
MiB = 1 << 20
RDRIVER = "swaplab-rdriver"
# the options of `kernel run` that belong to the MADV_PAGEOUT workloads: a
# reclaim workload refuses them when set (name, default)
_PAGEOUT_ONLY = (("small_folios", False, "-s"), ("aligned_swapin", False, "-a"),
                 ("iterations", "100", "--iterations"), ("rng", "default", "--rng"),
                 ("region_a_size", None, "--region-a-size"),
                 ("region_b_size", None, "--region-b-size"),
                 ("region_offset", "0", "--region-offset"), ("migrate_every", "0", "--migrate-every"),
                 ("device", "zram", "--device"), ("swap_prio", None, "--swap-prio"),
                 ("add_swap", [], "--add-swap"),
                 ("allow_other_swap", False, "--allow-other-swap"))
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
    workload: str = "usemem"
    processes: int = 2
    size_bytes: int = 32 * MiB          # per process
    limit_bytes: int = 32 * MiB         # the memory cgroup's limit
    reread: int = 0                     # read passes after the write
    chunk_pages: int = 64               # round-robin interleaving of the stream
    mthp_kb: list = field(default_factory=lambda: [64])
    swap_bytes: int = 128 * MiB
    seed: int = 1
    cpu: int = 0                        # the first CPU
    cpus: int = 1                       # processes pinned round robin to cpu .. cpu+cpus-1
    phase_layouts: bool = False

    def as_json(self) -> dict:
        d = asdict(self)
        d["mthp_sizes"] = [M.size_label(kb) for kb in self.mthp_kb]
        return d

    def driver_args(self) -> list:
        return ["--procs", str(self.processes), "--proc-pages", str(self.size_bytes // PAGE),
                "--reread", str(self.reread), "--chunk-pages", str(self.chunk_pages),
                "--nr-cpus", str(self.cpus), "--first-cpu", str(self.cpu)]


def add_options(r) -> None:
    """The reclaim workloads' options of `kernel run` (the others are shared)."""
    g = r.add_argument_group("reclaim workloads (usemem)")
    g.add_argument("--processes", default=None, help="usemem: processes (default 2)")
    g.add_argument("--size", default=None, help="usemem: memory each process writes (default 32M)")
    g.add_argument("--limit", default=None,
                   help="the memory cgroup's limit (memory.limit_in_bytes; default 32M)")
    g.add_argument("--reread", default=None, help="usemem: read passes after the write (default 0)")
    g.add_argument("--chunk-pages", default=None,
                   help="pages each process touches per turn of the stream (default 64)")
    g.add_argument("--phase-layouts", action="store_true",
                   help="also record every process's slot layout at each phase marker")


def _parse_bytes(text: str, opt: str, lo: int) -> int:
    b = parse_size(text, opt)
    if b % PAGE:
        raise ParamError(f"{opt} {shown(text)} is not a multiple of 4K")
    if b < lo:
        raise ParamError(f"{opt} {shown(text)} is smaller than {format_size(lo)}")
    return b


def params_from_args(workload: str, a) -> ReclaimParams:
    """ReclaimParams from `kernel run` arguments; ParamError names the problem."""
    if workload not in WORKLOADS:
        raise ParamError(f"unknown reclaim workload '{shown(workload)}' (known: {', '.join(WORKLOADS)})")
    for name, default, opt in _PAGEOUT_ONLY:
        if getattr(a, name, default) != default:
            raise ParamError(f"{opt} is not an option of the reclaim workload {workload}")
    p = ReclaimParams(workload=workload)
    if a.swap_size != "64M":
        p.swap_bytes = check_swap_size(parse_size(a.swap_size, "--swap-size"), a.swap_size)
    if a.mthp in ("4K", "none"):
        p.mthp_kb = []
    elif a.mthp == "all":
        p.mthp_kb = [kb for kb in M.offered_sizes() if kb <= 2048]
    else:
        p.mthp_kb = parse_mthp(a.mthp)
    p.seed = parse_count(a.seed, "--seed", 0, 2**63 - 1)
    p.cpu = parse_count(a.cpu, "--cpu", 0, 4095)
    p.cpus = parse_count(a.cpus, "--cpus", 1, 4096)
    if a.processes is not None:
        p.processes = parse_count(a.processes, "--processes", 1, 4096)
    if a.size is not None:
        p.size_bytes = _parse_bytes(a.size, "--size", PAGE)
    if p.size_bytes // PAGE > 2**32 - 1:
        raise ParamError(f"--size {shown(a.size)} is larger than 16T")
    if a.limit is not None:
        p.limit_bytes = _parse_bytes(a.limit, "--limit", 4 * MiB)
    if a.reread is not None:
        p.reread = parse_count(a.reread, "--reread", 0, 1000)
    if a.chunk_pages is not None:
        p.chunk_pages = parse_count(a.chunk_pages, "--chunk-pages", 1, 2**31)
    p.phase_layouts = bool(a.phase_layouts)
    return p


def check_sizes(p: ReclaimParams) -> None:
    """What the machine must hold: the limit within half of the available
    memory, the swap device large enough for what the limit pushes out."""
    avail = _meminfo().get("MemAvailable", 0) * 1024
    if avail and p.limit_bytes > avail // 2:
        raise ParamError(f"--limit {format_size(p.limit_bytes)} is more than half of the available "
                         f"memory ({format_size(avail)})")
    out = p.processes * p.size_bytes - p.limit_bytes
    if out > 0 and out > p.swap_bytes - 2 * MiB:
        raise ParamError(f"--swap-size {format_size(p.swap_bytes)} cannot hold what the limit pushes out "
                         f"({p.processes} x {format_size(p.size_bytes)} - {format_size(p.limit_bytes)}); "
                         "the workload would be OOM-killed")


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
    drv = M.driver_path(RDRIVER)
    if not os.access(drv, os.X_OK):
        raise M.HarnessRefused(f"the reclaim driver {drv} is missing; reinstall swaplab (pip install .)")
    tools["rdriver"] = drv
    M.check_memcg()
    allowed = sorted(os.sched_getaffinity(0))
    want = list(range(p.cpu, p.cpu + p.cpus))
    bad = [c for c in want if c not in allowed]
    if bad:
        raise M.HarnessRefused(f"--cpu {p.cpu} --cpus {p.cpus} needs CPU {bad[0]}, which is not available "
                               f"to this process (allowed: {','.join(map(str, allowed))})")
    M.check_no_state()
    M.check_no_other_swap()
    return tools


def _memcg_read(path: str) -> dict:
    out = {}
    for name in ("memory.max_usage_in_bytes", "memory.failcnt", "memory.memsw.max_usage_in_bytes",
                 "memory.limit_in_bytes", "memory.swappiness"):
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
    tmp = tempfile.mkdtemp(prefix="swaplab-reclaim-")
    out_json = os.path.join(tmp, "raw.json")
    out_layout = os.path.join(tmp, "layout.bin")
    old_handlers = {s: signal.signal(s, _handler) for s in _SIGNALS}
    proc = None
    failure = signalled = None
    raw = layout = memcg_stats = None
    t0 = time.monotonic()
    _block()
    try:
        state.save()
        sess.create_zram(p.swap_bytes, _core.PRIO_MAX)
        zram = sess.zram_info()
        before, during = sess.set_knobs(p.mthp_kb)
        cg = sess.create_memcg(p.limit_bytes)
        argv = [tools["rdriver"], "--cgroup", cg, "--json", out_json, "--layout", out_layout,
                "--sysfs-root", M.sysfs_root(), "--parent-pid", str(os.getpid())] + p.driver_args()
        if p.phase_layouts:
            argv.append("--phase-layouts")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        state.data["driver_pid"] = proc.pid
        state.save()
        _unblock()
        _, err = proc.communicate()
        _block()
        if proc.returncode in (-signal.SIGINT, -signal.SIGTERM):
            raise Signalled(-proc.returncode)
        memcg_stats = _memcg_read(cg)
        if proc.returncode:
            lines = (err or "").strip().splitlines()
            raise M.HarnessError(f"the reclaim driver failed (exit {proc.returncode})"
                                 + (f": {lines[-1]}" if lines else ""))
        with open(out_json) as f:
            raw = json.load(f)
        with open(out_layout, "rb") as f:
            layout = f.read()
    except Signalled as e:
        signalled = e
    except M.HarnessError as e:
        failure = e
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        failure = M.HarnessError(f"{where}{e.strerror or e}")
    finally:
        _block()
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        problems = M.restore(state, tools)
        for s, h in old_handlers.items():
            signal.signal(s, h)
        _unblock()
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        raise M.HarnessError("could not restore everything (" + "; ".join(problems) +
                             f"); the state file {state.path} is kept: run 'swaplab kernel cleanup'")
    if signalled is not None:
        raise signalled
    if failure is not None:
        raise failure
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


def build_result(p: ReclaimParams, raw: dict, layout: bytes, extra: dict | None = None) -> dict:
    snaps = raw["snapshots"]
    total = counter_delta(snaps[0], snaps[-1], p.mthp_kb)
    phases = []
    for prev, cur in zip(snaps, snaps[1:]):
        phases.append({"until": cur["label"] if cur["phase"] < 0 else f"phase {cur['phase']}",
                       "seconds": round(cur["t"] - prev["t"], 6),
                       **counter_delta(prev, cur, p.mthp_kb)})
    recs = raw["layouts"]
    st = slot_stats(layout, recs)
    layouts = []
    for r, s in zip(recs, st):
        if s["swapped"] != r["swapped"]:
            raise M.HarnessError("the driver's layout file does not match its layout records")
        layouts.append({k: r[k] for k in ("label", "phase", "proc", "region", "npages", "first",
                                          "swapped", "present")} | {"distinct_slots": s["distinct"]})
    at_exit = [x for x in layouts if x["label"] == "exit"]
    res = {
        "schema": SCHEMA,
        "swaplab_version": __version__,
        "source": "kernel",
        "policy": f"kernel-{platform.uname().release}",
        "workload": p.workload,
        "params": p.as_json(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "sizes_kb": list(p.mthp_kb),
        "counters": total,
        "phases": phases,
        "time": {"user_seconds": raw["user_seconds"], "sys_seconds": raw["sys_seconds"],
                 "wall_seconds": raw["wall_seconds"], "per_process": raw["procs"]},
        "layouts": layouts,
        "layout": {"npages": len(layout) // 8, "hash": format_hash(_core.layout_hash(layout)),
                   "swapped_at_exit": sum(x["swapped"] for x in at_exit),
                   "present_at_exit": sum(x["present"] for x in at_exit)},
    }
    if extra:
        res.update(extra)
    return res


def print_run(res: dict, out=None) -> None:
    import sys
    out = out or sys.stdout
    p = res["params"]
    c = res["counters"]
    print(f"# kernel {res['policy'][7:]}: {res['workload']} {p['processes']} x {format_size(p['size_bytes'])}"
          f" in a {format_size(p['limit_bytes'])} memcg, {format_size(p['swap_bytes'])} zram, mTHP "
          f"{','.join(p['mthp_sizes']) or 'none'}, reread {p['reread']}", file=out)
    print(f"{'size':>6} {'swpout':>9} {'fallback':>9} {'fb%':>7} {'swpin':>9} {'faults':>9}", file=out)
    for kb, d in c["sizes"].items():
        print(f"{M.size_label(int(kb)):>6} {d.get('swpout', 0):>9} {d.get('swpout_fallback', 0):>9} "
              f"{d['fallback_pct']:>7.2f} {d.get('swpin', 0):>9} {d.get('anon_fault_alloc', 0):>9}", file=out)
    print(f"{'4K':>6} {c['order0']['swpout']:>9} {'':>9} {'':>7} {c['order0']['swpin']:>9}", file=out)
    t = res["time"]
    print(f"pswpout {c['vmstat'].get('pswpout', 0)}  pswpin {c['vmstat'].get('pswpin', 0)}  "
          f"swapped at exit {res['layout']['swapped_at_exit']}  user {t['user_seconds']:.3f}s  "
          f"sys {t['sys_seconds']:.3f}s  wall {t['wall_seconds']:.3f}s", file=out)
