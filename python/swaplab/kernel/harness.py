"""swaplab kernel run: a workload on the live kernel (docs/kernel-harness.md).

The harness checks that it can work, creates its own zram swap device, sets
the mTHP knobs, runs swaplab-kdriver (which replays the model's operation
stream) and restores the machine on success, on error, on SIGINT and on
SIGTERM. Every change is recorded in a state file first, so that
`swaplab kernel cleanup` can undo a run that was killed with SIGKILL.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from .. import _core
from ..params import WorkloadParams
from ..results import build_result
from . import machine as M

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Signalled(BaseException):
    """A SIGINT or SIGTERM arrived; the machine has been restored when this
    leaves run_kernel(). The command exits 128 + signo."""

    def __init__(self, signo: int):
        super().__init__(signo)
        self.signo = signo


def _handler(signo, frame):
    raise Signalled(signo)


def _block():
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)


def _unblock():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)


def preflight(wp: WorkloadParams, allow_other_swap: bool = False) -> dict:
    """Every check, nothing changed. Returns the tools found."""
    for x in wp.extra_swap:
        if x["kind"] != "zram":
            raise M.HarnessRefused(f"the kernel harness swaps to zram devices of its own; --add-swap "
                                   f"...:{x['kind']} is for the model only")
    if wp.extra_swap and allow_other_swap:
        raise M.HarnessRefused("several swap devices need the machine's swap to themselves "
                               "(their swap types must be 0, 1, ...); --allow-other-swap does not apply")
    tools = M.check_can_run(wp.mthp_kb, wp.cpu)
    M.check_no_state()
    if not allow_other_swap:
        M.check_no_other_swap()
    return tools


def swap_devices(wp: WorkloadParams) -> list:
    """(bytes, swapon -p value or None) per zram device, in swapon order.
    One device: the highest priority unless one is given, so that it comes
    before any other swap; several: the model's priorities exactly (no -p
    where none is given: the kernel's -2, -3, ...)."""
    if not wp.extra_swap:
        return [(wp.swap_bytes, wp.swap_prio if wp.swap_prio >= 0 else _core.PRIO_MAX)]
    return [(wp.swap_bytes, wp.swap_prio if wp.swap_prio >= 0 else None)] + \
        [(x["bytes"], x["prio"] if x["prio"] >= 0 else None) for x in wp.extra_swap]


def check_swap_types(st: dict) -> None:
    """With nothing else active, swapon gives the devices swap types 0, 1,
    ... in order, and /proc/swaps lists them in type order: the layout's
    type numbers are then the model's device indices."""
    want = [st["zram_dev"]] + [x["zram_dev"] for x in st["extra_zrams"]]
    got = [s["name"] for s in M.active_swaps()]
    if got != want:
        raise M.HarnessError(f"the swap devices are listed as {got}, not {want} in swapon order")


def _driver_argv(wp: WorkloadParams, out_json: str, out_layout: str, devs: list) -> list:
    kw = wp.core_kwargs()
    argv = [M.driver_path(), "--workload", wp.workload, "--swap-bytes", str(wp.swap_bytes),
            "--mthp-mask", str(kw["mthp_mask"]), "--iterations", str(wp.iterations),
            "--seed", str(wp.seed), "--rng", wp.rng, "--cpu", str(wp.cpu),
            "--json", out_json, "--layout", out_layout,
            "--sysfs-root", M.sysfs_root(), "--parent-pid", str(os.getpid())]
    for dev in devs:
        argv += ["--swap-dev", dev]
    if wp.small_folios:
        argv.append("--small-folios")
    if wp.aligned_swapin:
        argv.append("--aligned-swapin")
    if wp.region_a_bytes:
        argv += ["--region-a-bytes", str(wp.region_a_bytes)]
    if wp.region_b_bytes:
        argv += ["--region-b-bytes", str(wp.region_b_bytes)]
    if any(wp.region_offset):
        argv += ["--region-a-offset", str(wp.region_offset[0]),
                 "--region-b-offset", str(wp.region_offset[1])]
    return argv


def run_kernel(wp: WorkloadParams, allow_other_swap: bool = False, tools: dict | None = None) -> tuple[dict, bytes]:
    """Runs wp on the live kernel. Returns (result, layout dump bytes).
    Raises HarnessRefused (nothing changed), HarnessError (restored) or
    Signalled (restored)."""
    if tools is None:
        tools = preflight(wp, allow_other_swap)
    swaps_before = [s["name"] for s in M.active_swaps()]
    state = M.State()
    sess = M.Session(state, tools)
    tmp = state.data["tmpdir"] = tempfile.mkdtemp(prefix="swaplab-kernel-")
    out_json = os.path.join(tmp, "raw.json")
    out_layout = os.path.join(tmp, "layout.bin")
    t0 = time.monotonic()
    info = {}

    def prepare():
        devices = swap_devices(wp)
        for size, prio in devices:
            sess.create_zram(size, prio)
        zram = info["zram"] = sess.zram_info()
        if len(devices) > 1:
            zram["extra"] = [{"device": x["zram_dev"], "id": x["zram_id"]}
                             for x in state.data["extra_zrams"]]
            check_swap_types(state.data)
        info["before"], info["during"] = sess.set_knobs(wp.mthp_kb)
        return _driver_argv(wp, out_json, out_layout,
                            [zram["device"]] + [x["device"] for x in zram.get("extra", [])])

    def collect():
        with open(out_json) as f:
            raw = json.load(f)
        with open(out_layout, "rb") as f:
            return raw, f.read()

    try:
        raw, layout = drive(state, tools, prepare, collect, "kernel driver")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _result(wp, raw, layout, info["zram"], info["before"], info["during"], swaps_before,
                   time.monotonic() - t0), layout


def drive(state: M.State, tools: dict, prepare, collect, what: str):
    """The machine changed by prepare() (which returns the driver's argv),
    the driver run with SIGINT and SIGTERM delivered only while it runs (the
    driver unblocks them itself and dies with us: PDEATHSIG), its outputs
    read by collect(), and the machine restored on every exit path. Returns
    what collect() returns; raises HarnessError (restored) or Signalled
    (restored)."""
    old_handlers = {s: signal.signal(s, _handler) for s in _SIGNALS}
    proc = None
    failure = signalled = out = None
    _block()
    try:
        state.save()
        argv = prepare()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        state.data["driver_pid"] = proc.pid
        state.save()
        _unblock()
        _, err = proc.communicate()
        _block()
        if proc.returncode in (-signal.SIGINT, -signal.SIGTERM):
            # a Ctrl-C or a kill of the whole process group reached the driver first
            raise Signalled(-proc.returncode)
        if proc.returncode:
            lines = (err or "").strip().splitlines()
            raise M.HarnessError(f"the {what} failed (exit {proc.returncode})"
                                 + (f": {lines[-1]}" if lines else ""))
        out = collect()
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
    if problems:
        raise M.HarnessError("could not restore everything (" + "; ".join(problems) +
                             f"); the state file {state.path} is kept: run 'swaplab kernel cleanup'")
    if signalled is not None:
        raise signalled
    if failure is not None:
        raise failure
    return out


def _frag(f: dict) -> dict:
    """The driver's metrics of one iteration as the result files' "frag"
    object, the indices scaled exactly as the binding scales the model's."""
    out = dict(f)
    out["unusable_index"] = [v * 1e-3 for v in out.pop("unusable_index_milli")]
    out["fragmentation_index"] = [v * 1e-3 for v in out.pop("fragmentation_index_milli")]
    order = ["free_slots", "free_aligned", "free_blocks", "unusable_index", "fragmentation_index",
             "free_extents", "largest_free_extent", "bluestore_score"]
    return {k: out[k] for k in order}


def _result(wp, raw, layout, zram, before, during, swaps_before, wall) -> tuple:
    npages = raw["npages"]
    placed = [r.get("offset") for r in raw.get("regions", [])]
    if placed and placed != list(wp.region_offset[:len(placed)]):
        raise M.HarnessError(f"the driver placed the regions at offsets {placed}, not {wp.region_offset}")
    final_hash = _core.layout_hash(layout)
    if final_hash != raw["final_layout_hash"]:
        raise M.HarnessError("the driver's layout file does not match its final layout hash")
    iters = []
    types = set()
    for r in raw["iterations"]:
        iters.append({"swpout": r["swpout"], "swpout_fallback": r["swpout_fallback"],
                      "swpin": r["swpin"], "alloc_fail0": None, "layout_hash": r["layout_hash"],
                      "inuse_pages": r["inuse_pages"] if r["inuse_pages"] >= 0 else None,
                      "swapped_pages": r["swapped_pages"]})
        if "dev_inuse" in r:
            iters[-1]["dev_inuse"] = r["dev_inuse"]
        if "frag" in r:        # not above 64 GiB of swap (kdriver.c FRAG_MAX_SLOTS)
            iters[-1]["frag"] = _frag(r["frag"])
        if r["swap_type"] >= 0:
            types.add(r["swap_type"])
        elif r["swap_type"] == -2:
            types.add("several")
    if iters:
        # the driver took each iteration's metrics from that iteration's
        # slots; its last ones are those of the final layout it wrote
        from ..metrics import layout_frag
        if "frag" in iters[-1] and iters[-1]["frag"] != layout_frag(layout, wp.swap_bytes // 4096):
            raise M.HarnessError("the driver's last fragmentation metrics do not match its final layout")
    u = platform.uname()
    rel = u.release
    extra = {"kernel": {
        "release": rel, "version": u.version, "machine": u.machine,
        "knobs_before": {str(k): v for k, v in sorted(before.items())},
        "knobs_during": {str(k): v for k, v in sorted(during.items())},
        "zram": zram,
        "other_swap": swaps_before,
        "swap_types_seen": sorted(types, key=str),
        "driver": os.path.basename(M.driver_path()),
        "regions": raw.get("regions", []),
        "wall_seconds": round(wall, 3),
    }}
    res = build_result("kernel", f"kernel-{rel}", wp, iters, npages=npages, final_hash=final_hash,
                       seconds=raw["seconds"], extra=extra)
    for it, r in zip(res["iterations"], raw["iterations"]):
        it["swap_type"] = r["swap_type"]
        it["swapped_pages"] = r["swapped_pages"]
    return res


def cleanup(out=sys.stdout) -> int:
    """swaplab kernel cleanup: undoes what the state file names."""
    path = M.state_path()
    st = M.State.load(path)
    if st is None:
        print(f"nothing to clean up: no state file at {path}", file=out)
        return 0
    pid = st.data.get("pid")
    if pid != os.getpid() and M.pid_alive(pid) and "swaplab" in M.pid_cmdline(pid):
        raise M.HarnessRefused(f"the kernel run that owns {path} (pid {pid}) is still running; "
                               f"stop it first (it restores the machine itself)")
    if M.fake_nonroot() or os.geteuid() != 0:
        raise M.HarnessRefused("needs root to undo the changes named in " + path)
    _block()
    try:
        problems = M.restore(st)
    finally:
        _unblock()
    d = st.data
    what = []
    for z in [d] + list(d.get("extra_zrams") or []):
        if z.get("zram_id") is not None:
            what.append(f"zram{z['zram_id']}")
    if d.get("memcg"):
        what.append(f"memory cgroup {os.path.basename(d['memcg'])}")
    if d.get("knobs"):
        what.append(f"{len(d['knobs'])} mTHP knobs")
    if problems:
        raise M.HarnessError("could not restore everything: " + "; ".join(problems))
    print(f"restored the machine from {path}: " + (", ".join(what) if what else "nothing had changed"),
          file=out)
    return 0
