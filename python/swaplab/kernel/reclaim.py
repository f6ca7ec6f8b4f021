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
from dataclasses import dataclass, field

from .. import __version__, _core
from ..params import (ParamError, check_swap_size, format_size, parse_count, parse_mthp, parse_size,
                      size_to_order, shown)
from ..results import fallback_pct, format_hash, machine_info
from . import machine as M
from .harness import Signalled, _SIGNALS, _block, _handler, _unblock

SCHEMA = "swaplab.reclaim-result/1"
WORKLOADS = ("usemem", "pmbench", "build")
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
    """A reclaim workload's parameters: `stream` is sl_rwl_params as the
    driver resolved it (the kind's defaults, the preset, the options; the
    generator's own validation), the rest is the harness's."""
    workload: str = "usemem"
    preset: str | None = None
    stream: dict = field(default_factory=dict)
    cpu: int = 0                        # the first CPU: process slot k runs on cpu + k % nr_cpus
    phase_layouts: bool = False

    @property
    def limit_bytes(self) -> int:
        return self.stream["limit_pages"] * PAGE

    @property
    def swap_bytes(self) -> int:
        return self.stream["swap_bytes"]

    @property
    def mthp_kb(self) -> list:
        return [4 << o for o in range(1, 32) if self.stream["mthp_mask"] >> o & 1]

    def as_json(self) -> dict:
        d = {"workload": self.workload, "preset": self.preset, "cpu": self.cpu,
             "phase_layouts": self.phase_layouts}
        d.update(self.stream)
        d["mthp_sizes"] = [M.size_label(kb) for kb in self.mthp_kb]
        return d

    def driver_args(self) -> list:
        s = self.stream
        out = ["--workload", s["workload"]]
        for k, opt in _STREAM_OPTS:
            out += [opt, str(s[k])]
        return out + ["--first-cpu", str(self.cpu)]


# sl_rwl_params fields the driver takes as options (rstream.h); the others
# come from the kind's defaults or the preset
_STREAM_OPTS = (("seed", "--seed"), ("limit_pages", "--limit-pages"), ("swap_bytes", "--swap-bytes"),
                ("mthp_mask", "--mthp-mask"), ("chunk_pages", "--chunk-pages"), ("nr_cpus", "--nr-cpus"),
                ("nr_procs", "--procs"), ("proc_pages", "--proc-pages"), ("reread_passes", "--reread"),
                ("wss_pages", "--wss-pages"), ("accesses", "--accesses"), ("read_pct", "--read-pct"),
                ("jobs", "--jobs"), ("generations", "--generations"))


def add_options(r) -> None:
    """The reclaim workloads' options of `kernel run` (the others are shared)."""
    g = r.add_argument_group("reclaim workloads (usemem, pmbench, build)")
    g.add_argument("--preset", default=None,
                   help="a published run scaled down (docs/workloads-reclaim.md), e.g. usemem-2024")
    g.add_argument("--processes", default=None, help="usemem, pmbench: processes")
    g.add_argument("--size", default=None, help="usemem: memory each process writes; pmbench: working set")
    g.add_argument("--limit", default=None, help="the memory cgroup's limit (memory.limit_in_bytes)")
    g.add_argument("--reread", default=None, help="usemem: read passes after the write")
    g.add_argument("--accesses", default=None, help="pmbench: accesses per process")
    g.add_argument("--read-pct", default=None, help="pmbench: percentage of reads")
    g.add_argument("--jobs", default=None, help="build: make -j")
    g.add_argument("--generations", default=None, help="build: processes per job slot")
    g.add_argument("--chunk-pages", default=None,
                   help="pages each process touches per turn of the stream (default 64)")
    g.add_argument("--phase-layouts", action="store_true",
                   help="also record every process's slot layout at each phase marker")
    # the shared options' defaults: None here, so that a reclaim workload
    # takes its own (or its preset's) unless one is given
    r.set_defaults(swap_size=None, mthp=None, cpus=None)


RECLAIM_OPTS = ("preset", "processes", "size", "limit", "reread", "accesses", "read_pct", "jobs",
                "generations", "chunk_pages")
SHARED_DEFAULTS = {"swap_size": "64M", "mthp": "64K", "cpus": "1"}


def _parse_bytes(text: str, opt: str, lo: int) -> int:
    b = parse_size(text, opt)
    if b % PAGE:
        raise ParamError(f"{opt} {shown(text)} is not a multiple of 4K")
    if b < lo:
        raise ParamError(f"{opt} {shown(text)} is smaller than {format_size(lo)}")
    return b


def resolve(args: list) -> dict:
    """The driver's --print-params: sl_rwl_params after defaults, preset and
    options, validated by the generator. Changes nothing."""
    drv = M.driver_path(RDRIVER)
    if not os.access(drv, os.X_OK):
        raise M.HarnessRefused(f"the reclaim driver {drv} is missing; reinstall swaplab (pip install .)")
    r = subprocess.run([drv, "--print-params", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode:
        msg = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
        raise ParamError(msg.removeprefix("swaplab-rdriver: "))
    return json.loads(r.stdout)


def params_from_args(workload: str, a) -> ReclaimParams:
    """ReclaimParams from `kernel run` arguments; ParamError names the problem."""
    if workload not in WORKLOADS:
        raise ParamError(f"unknown reclaim workload '{shown(workload)}' (known: {', '.join(WORKLOADS)})")
    for name, default, opt in _PAGEOUT_ONLY:
        if getattr(a, name, default) != default:
            raise ParamError(f"{opt} is not an option of the reclaim workload {workload}")
    args = ["--workload", workload]
    if a.preset is not None:
        args = ["--preset", a.preset]
    def num(opt, v, lo, hi):
        return str(parse_count(v, opt, lo, hi))
    if a.seed != "1":
        args += ["--seed", num("--seed", a.seed, 0, 2**63 - 1)]
    if a.swap_size is not None:
        args += ["--swap-bytes", str(check_swap_size(parse_size(a.swap_size, "--swap-size"), a.swap_size))]
    if a.mthp is not None:
        if a.mthp in ("4K", "none"):
            kbs = []
        elif a.mthp == "all":
            kbs = [kb for kb in M.offered_sizes() if 16 <= kb <= 2048]
        else:
            kbs = parse_mthp(a.mthp)
        args += ["--mthp-mask", str(sum(1 << size_to_order(kb) for kb in kbs))]
    if a.cpus is not None:
        args += ["--nr-cpus", num("--cpus", a.cpus, 1, 4096)]
    if a.limit is not None:
        args += ["--limit-pages", str(_parse_bytes(a.limit, "--limit", 4 * MiB) // PAGE)]
    only = {"usemem": ("processes", "size", "reread"), "pmbench": ("processes", "size", "accesses", "read_pct"),
            "build": ("jobs", "generations")}
    for name in ("processes", "size", "reread", "accesses", "read_pct", "jobs", "generations"):
        if getattr(a, name) is not None and name not in only[workload]:
            raise ParamError(f"--{name.replace('_', '-')} is not an option of the reclaim workload {workload}")
    if a.processes is not None:
        args += ["--procs", num("--processes", a.processes, 1, 100000)]
    if a.size is not None:
        pages = _parse_bytes(a.size, "--size", PAGE) // PAGE
        args += ["--proc-pages" if workload == "usemem" else "--wss-pages", str(pages)]
    if a.reread is not None:
        args += ["--reread", num("--reread", a.reread, 0, 1000)]
    if a.accesses is not None:
        args += ["--accesses", num("--accesses", a.accesses, 0, 2**40)]
    if a.read_pct is not None:
        args += ["--read-pct", num("--read-pct", a.read_pct, 0, 100)]
    if a.jobs is not None:
        args += ["--jobs", num("--jobs", a.jobs, 1, 4096)]
    if a.generations is not None:
        args += ["--generations", num("--generations", a.generations, 1, 100000)]
    if a.chunk_pages is not None:
        args += ["--chunk-pages", num("--chunk-pages", a.chunk_pages, 1, 1 << 20)]
    stream = resolve(args)
    if stream["workload"] != workload:
        raise ParamError(f"--preset {shown(a.preset)} is a {stream['workload']} preset, not {workload}")
    p = ReclaimParams(workload=workload, preset=a.preset, stream=stream)
    p.cpu = parse_count(a.cpu, "--cpu", 0, 4095)
    p.phase_layouts = bool(a.phase_layouts)
    return p


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
    what = {"usemem": lambda: f"{p['nr_procs']} x {format_size(p['proc_pages'] * PAGE)}, reread {p['reread_passes']}",
            "pmbench": lambda: f"{p['nr_procs']} x {format_size(p['wss_pages'] * PAGE)}, {p['accesses']} accesses",
            "build": lambda: f"-j{p['jobs']}, {p['generations']} generations"}[res["workload"]]()
    print(f"# kernel {res['policy'][7:]}: {res['workload']}{' (' + p['preset'] + ')' if p['preset'] else ''}"
          f" {what} in a {format_size(p['limit_pages'] * PAGE)} memcg, {format_size(p['swap_bytes'])} zram, "
          f"mTHP {','.join(p['mthp_sizes']) or '4K only'}, seed {p['seed']}", file=out)
    print(f"{'size':>6} {'swpout':>9} {'fallback':>9} {'fb%':>7} {'swpin':>9} {'faults':>9}", file=out)
    for kb, d in c["sizes"].items():
        print(f"{M.size_label(int(kb)):>6} {d.get('swpout', 0):>9} {d.get('swpout_fallback', 0):>9} "
              f"{d['fallback_pct']:>7.2f} {d.get('swpin', 0):>9} {d.get('anon_fault_alloc', 0):>9}", file=out)
    print(f"{'4K':>6} {c['order0']['swpout']:>9} {'':>9} {'':>7} {c['order0']['swpin']:>9}", file=out)
    t = res["time"]
    print(f"pswpout {c['vmstat'].get('pswpout', 0)}  pswpin {c['vmstat'].get('pswpin', 0)}  "
          f"swapped at exit {res['layout']['swapped_at_exit']}  user {t['user_seconds']:.3f}s  "
          f"sys {t['sys_seconds']:.3f}s  wall {t['wall_seconds']:.3f}s", file=out)
