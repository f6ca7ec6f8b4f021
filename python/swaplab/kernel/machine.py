"""What the kernel harness reads and changes on the machine: the mTHP knobs,
zram devices, active swap, and the state file that records every change so
that it can be undone (also after a kill -9, by `swaplab kernel cleanup`).

Environment overrides (docs/kernel-harness.md):
  SWAPLAB_SYSFS_ROOT    use this directory instead of /sys (tests: a fake
                        sysfs that lacks an mTHP size)
  SWAPLAB_FAKE_NONROOT  when set to a non-empty value other than 0, behave
                        as if not running as root
  SWAPLAB_STATE_DIR     directory of the state file (default /run/swaplab)
  SWAPLAB_MEMCG_ROOT    the cgroup v1 memory hierarchy's mount (default
                        /sys/fs/cgroup/memory; tests: one that lacks it)
"""
from __future__ import annotations

import errno
import glob
import json
import mmap
import os
import re
import shutil
import subprocess
import time

from ..params import ParamError

STATE_NAME = "state.json"
DEFAULT_STATE_DIR = "/run/swaplab"
DEFAULT_MEMCG_ROOT = "/sys/fs/cgroup/memory"
MEMCG_PREFIX = "swaplab-"
THP_REL = "kernel/mm/transparent_hugepage"


class HarnessRefused(ParamError):
    """The harness cannot or must not run here; nothing was changed (exit 2)."""


class HarnessError(Exception):
    """A failure while the harness ran (exit 1); the machine was restored."""


def sysfs_root() -> str:
    return os.environ.get("SWAPLAB_SYSFS_ROOT") or "/sys"


def state_dir() -> str:
    return os.environ.get("SWAPLAB_STATE_DIR") or DEFAULT_STATE_DIR


def state_path() -> str:
    return os.path.join(state_dir(), STATE_NAME)


def memcg_root() -> str:
    return os.environ.get("SWAPLAB_MEMCG_ROOT") or DEFAULT_MEMCG_ROOT


def check_memcg() -> str:
    """The cgroup v1 memory controller's mount, or HarnessRefused naming why
    the harness cannot make a memory cgroup there. (This kernel mounts the
    memory controller on v1; a cgroup2-only machine is not supported yet.)"""
    root = memcg_root()
    need = ("cgroup.procs", "memory.limit_in_bytes", "memory.stat")
    missing = [f for f in need if not os.path.exists(os.path.join(root, f))]
    if missing:
        raise HarnessRefused(f"no cgroup v1 memory controller at {root} ({missing[0]} is missing); "
                             "the reclaim workloads need one")
    return root


def fake_nonroot() -> bool:
    v = os.environ.get("SWAPLAB_FAKE_NONROOT", "")
    return v not in ("", "0")


def thp_dir(root: str | None = None) -> str:
    return os.path.join(root or sysfs_root(), THP_REL)


def knob_path(kb: int, root: str | None = None) -> str:
    return os.path.join(thp_dir(root), f"hugepages-{kb}kB", "enabled")


def size_label(kb: int) -> str:
    return f"{kb}K" if kb < 1024 else f"{kb // 1024}M"


def read_text(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def write_text(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def bracketed(text: str) -> str:
    """'always [inherit] madvise never' -> 'inherit'; a plain value as is."""
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text.strip()


def offered_sizes(root: str | None = None) -> list[int]:
    """mTHP sizes (KiB) that have an enabled knob, ascending."""
    out = []
    for p in glob.glob(os.path.join(thp_dir(root), "hugepages-*kB", "enabled")):
        m = re.search(r"hugepages-(\d+)kB", p)
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


def read_knobs(root: str | None = None) -> dict:
    """{kb: current value} of every hugepages-*kB/enabled."""
    return {kb: bracketed(read_text(knob_path(kb, root))) for kb in offered_sizes(root)}


def active_swaps() -> list[dict]:
    """The entries of /proc/swaps: name, type, size_kb, used_kb, priority."""
    out = []
    try:
        with open("/proc/swaps") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return out
    for line in lines:
        parts = line.split()
        if len(parts) >= 5:
            out.append({"name": parts[0], "type": parts[1], "size_kb": int(parts[2]),
                        "used_kb": int(parts[3]), "priority": int(parts[4])})
    return out


def madv_pageout_problem() -> str | None:
    """None when MADV_PAGEOUT works here, else why not."""
    adv = getattr(mmap, "MADV_PAGEOUT", 21)
    try:
        m = mmap.mmap(-1, 4 * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError as e:
        return f"cannot map memory to probe MADV_PAGEOUT: {e.strerror}"
    try:
        m[0:1] = b"\x11"
        m.madvise(adv)
    except (OSError, AttributeError) as e:
        why = getattr(e, "strerror", None) or str(e)
        return f"MADV_PAGEOUT is not supported here (madvise: {why}); it needs Linux 5.4 or later"
    finally:
        m.close()
    return None


def find_tool(name: str) -> str | None:
    for d in (os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]):
        p = os.path.join(d, name)
        if d and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def driver_path(name: str = "swaplab-kdriver") -> str:
    env = os.environ.get({"swaplab-kdriver": "SWAPLAB_KDRIVER", "swaplab-rdriver": "SWAPLAB_RDRIVER",
                          "swaplab-mdriver": "SWAPLAB_MDRIVER"}[name])
    if env:
        return env
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(here, "bin", name)


def check_can_run(sizes_kb: list, cpu: int | None = None) -> dict:
    """Everything the harness needs, checked before anything changes. Returns
    the tools found; raises HarnessRefused naming what is missing."""
    root = sysfs_root()
    if fake_nonroot() or os.geteuid() != 0:
        why = "SWAPLAB_FAKE_NONROOT is set" if fake_nonroot() else f"running as uid {os.geteuid()}"
        raise HarnessRefused(f"needs root to create a zram device, run swapon and set mTHP knobs ({why})")
    hot_add = os.path.join(root, "class", "zram-control", "hot_add")
    if not os.path.exists(hot_add):
        raise HarnessRefused(f"zram is not available: {hot_add} is missing (modprobe zram)")
    if not os.path.isdir(thp_dir(root)):
        raise HarnessRefused(f"the kernel has no transparent hugepages: {thp_dir(root)} is missing")
    missing = [kb for kb in sizes_kb if not os.path.exists(knob_path(kb, root))]
    if missing:
        labels = ",".join(size_label(kb) for kb in missing)
        offered = ",".join(size_label(kb) for kb in offered_sizes(root)) or "none"
        raise HarnessRefused(f"the kernel does not offer mTHP size {labels}: "
                             f"{knob_path(missing[0], root)} is missing (offered: {offered})")
    for kb in sizes_kb:
        stats = os.path.join(thp_dir(root), f"hugepages-{kb}kB", "stats")
        for st in ("swpout", "swpout_fallback", "swpin"):
            if not os.path.exists(os.path.join(stats, st)):
                raise HarnessRefused(f"the kernel lacks the mTHP statistic {os.path.join(stats, st)}")
    prob = madv_pageout_problem()
    if prob:
        raise HarnessRefused(prob)
    if not os.path.exists("/proc/self/pagemap"):
        raise HarnessRefused("/proc/self/pagemap is missing (CONFIG_PROC_PAGE_MONITOR)")
    tools = {}
    for t in ("mkswap", "swapon", "swapoff"):
        tools[t] = find_tool(t)
        if not tools[t]:
            raise HarnessRefused(f"{t} is not installed (util-linux)")
    drv = driver_path()
    if not os.access(drv, os.X_OK):
        raise HarnessRefused(f"the kernel driver {drv} is missing; reinstall swaplab (pip install .)")
    if cpu is not None:
        allowed = sorted(os.sched_getaffinity(0))
        if cpu not in allowed:
            raise HarnessRefused(f"--cpu {cpu} is not available to this process "
                                 f"(allowed: {','.join(map(str, allowed))})")
    return tools


def check_no_other_swap() -> None:
    sw = active_swaps()
    if sw:
        names = ", ".join(s["name"] for s in sw)
        raise HarnessRefused(f"other swap is active ({names}); swapoff it first or pass --allow-other-swap")


def pid_alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not alive for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pid_cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class State:
    """What one kernel run changed, kept in the state file while it runs.

    Fields: pid (the harness), driver_pid, sysfs_root, zram_id, zram_dev,
    node_created (we made the /dev node), disksize_set, swapon, knobs
    ({path: old value}, recorded before each write); extra_zrams: the same
    five zram fields for each further device of a several-device run;
    memcg: the memory cgroup the run made (recorded before mkdir), or None;
    tmpdir: the run's own temporary directory for the driver's outputs,
    removed with the rest (a kill -9 leaves it behind), or None."""

    def __init__(self, path: str | None = None):
        self.path = path or state_path()
        self.data = {"schema": "swaplab.kernel-state/1", "pid": os.getpid(), "driver_pid": None,
                     "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "sysfs_root": sysfs_root(),
                     "zram_id": None, "zram_dev": None, "node_created": False,
                     "disksize_set": False, "swapon": False, "knobs": {}, "extra_zrams": [],
                     "memcg": None, "tmpdir": None}
        self.made_dir = False

    def save(self) -> None:
        d = os.path.dirname(self.path)
        if not os.path.isdir(d):
            os.makedirs(d, exist_ok=True)
            self.made_dir = True
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def remove(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        d = os.path.dirname(self.path)
        if self.made_dir or (d == DEFAULT_STATE_DIR and not os.environ.get("SWAPLAB_STATE_DIR")):
            try:
                os.rmdir(d)
            except OSError:
                pass

    @classmethod
    def load(cls, path: str | None = None) -> "State | None":
        p = path or state_path()
        try:
            with open(p) as f:
                data = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as e:
            raise HarnessRefused(f"cannot read the state file {p}: {getattr(e, 'strerror', None) or e}")
        if not isinstance(data, dict) or data.get("schema") != "swaplab.kernel-state/1":
            raise HarnessRefused(f"{p} is not a swaplab kernel state file")
        s = cls(p)
        s.data.update(data)
        return s


def check_no_state() -> None:
    """Refuses to start while a state file exists (a run in progress, or one
    killed before it could restore)."""
    p = state_path()
    if not os.path.exists(p):
        return
    try:
        st = State.load(p)
    except HarnessRefused:
        st = None
    pid = st.data.get("pid") if st else None
    if st and pid_alive(pid) and "swaplab" in pid_cmdline(pid):
        raise HarnessRefused(f"another swaplab kernel run (pid {pid}) is in progress (state file {p})")
    raise HarnessRefused(f"an earlier kernel run did not restore the machine (state file {p}); "
                         f"run 'swaplab kernel cleanup' first")


# ---------------------------------------------------------------- changes

# the first fields of a zram device's mm_stat, in order
ZRAM_MM_STAT = ("orig_data_size", "compr_data_size", "mem_used_total", "mem_limit", "mem_used_max",
                "same_pages", "pages_compacted", "huge_pages", "huge_pages_since")


def _zram_block(root: str, zid: int) -> str:
    return os.path.join(root, "block", f"zram{zid}")


class Session:
    """Applies the changes of one run, recording each in the state before or
    right after it is made, and undoes them (restore())."""

    def __init__(self, state: State, tools: dict):
        self.state = state
        self.tools = tools
        self.root = state.data["sysfs_root"]

    def create_zram(self, swap_bytes: int, prio: int | None = None, swap: bool = True) -> None:
        """A zram device of swap_bytes, mkswap'ed and swapon'ed with -p prio
        (None: without -p, the kernel's -2, -3, ...); with swap=False, a
        bare block device (swaplab kernel move-cost). The first is the run's
        device (fields of the state itself); each further one goes to
        extra_zrams."""
        st = self.state.data
        if st["zram_id"] is None:
            rec = st
        else:
            rec = {"zram_id": None, "zram_dev": None, "node_created": False,
                   "disksize_set": False, "swapon": False}
            st.setdefault("extra_zrams", []).append(rec)
        hot_add = os.path.join(self.root, "class", "zram-control", "hot_add")
        try:
            zid = int(read_text(hot_add))
        except (OSError, ValueError) as e:
            raise HarnessError(f"cannot add a zram device ({hot_add}): {getattr(e, 'strerror', None) or e}")
        rec["zram_id"] = zid
        rec["zram_dev"] = f"/dev/zram{zid}"
        self.state.save()
        blk = _zram_block(self.root, zid)
        if read_text(os.path.join(blk, "disksize")) != "0":
            raise HarnessError(f"the new zram{zid} is not empty")
        dev = rec["zram_dev"]
        for _ in range(100):
            if os.path.exists(dev):
                break
            time.sleep(0.01)
        else:
            major, minor = (int(x) for x in read_text(os.path.join(blk, "dev")).split(":"))
            os.mknod(dev, 0o600 | 0o060000, os.makedev(major, minor))
            rec["node_created"] = True
            self.state.save()
        rec["disksize_set"] = True
        self.state.save()
        try:
            write_text(os.path.join(blk, "disksize"), str(swap_bytes))
        except OSError as e:
            raise HarnessError(f"cannot set the disksize of zram{zid}: {e.strerror}")
        if not swap:
            return
        self._run([self.tools["mkswap"], dev], "mkswap")
        rec["swapon"] = True
        self.state.save()
        # no discard
        self._run([self.tools["swapon"]] + (["-p", str(prio)] if prio is not None else []) + [dev],
                  "swapon")

    def create_memcg(self, limit_bytes: int) -> str:
        """A memory cgroup of our own (swaplab-<pid> under the v1 memory
        mount) with memory.limit_in_bytes = limit_bytes; memsw is left
        unlimited, so swap is not charged against a limit. Recorded in the
        state before it exists. Returns its path."""
        path = os.path.join(memcg_root(), f"{MEMCG_PREFIX}{os.getpid()}")
        self.state.data["memcg"] = path
        self.state.save()
        try:
            os.mkdir(path)
        except OSError as e:
            raise HarnessError(f"cannot create the memory cgroup {path}: {e.strerror}")
        try:
            write_text(os.path.join(path, "memory.limit_in_bytes"), str(limit_bytes))
        except OSError as e:
            raise HarnessError(f"cannot set memory.limit_in_bytes of {path}: {e.strerror}")
        got = int(read_text(os.path.join(path, "memory.limit_in_bytes")))
        if got != limit_bytes:
            raise HarnessError(f"the memory cgroup's limit reads {got}, not {limit_bytes} "
                               "(not a multiple of the page size?)")
        return path

    def zram_mm_stat(self) -> dict:
        """The run's zram device's mm_stat (its memory use; zram's
        documentation names the fields), or {} where it cannot be read."""
        blk = _zram_block(self.root, self.state.data["zram_id"])
        try:
            vals = [int(x) for x in read_text(os.path.join(blk, "mm_stat")).split()]
        except (OSError, ValueError):
            return {}
        return dict(zip(ZRAM_MM_STAT, vals))

    def zram_info(self) -> dict:
        st = self.state.data
        blk = _zram_block(self.root, st["zram_id"])
        info = {"device": st["zram_dev"], "id": st["zram_id"]}
        for k in ("comp_algorithm", "disksize"):
            try:
                v = read_text(os.path.join(blk, k))
                info[k] = bracketed(v) if k == "comp_algorithm" else int(v)
            except (OSError, ValueError):
                info[k] = None
        return info

    def set_knobs(self, sizes_kb: list) -> tuple[dict, dict]:
        """Requested sizes 'always', every other size 'never'. Returns
        (before, during) as {kb: value}."""
        before = read_knobs(self.root)
        for kb in sorted(before):
            want = "always" if kb in sizes_kb else "never"
            path = knob_path(kb, self.root)
            self.state.data["knobs"][path] = before[kb]
            self.state.save()
            if before[kb] != want:
                try:
                    write_text(path, want)
                except OSError as e:
                    raise HarnessError(f"cannot write {want} to {path}: {e.strerror}")
        return before, read_knobs(self.root)

    def _run(self, argv: list, what: str) -> None:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode:
            msg = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
            raise HarnessError(f"{what} failed: {msg}")


def _restore_zram(rec: dict, root: str, tools: dict, problems: list, done: list) -> None:
    """swapoff, reset and hot_remove one zram device the run created."""
    zid = rec.get("zram_id")
    dev = rec.get("zram_dev")
    if zid is not None:
        if rec.get("swapon") and any(s["name"] == dev for s in active_swaps()):
            swapoff = tools.get("swapoff") or find_tool("swapoff")
            r = subprocess.run([swapoff or "swapoff", dev], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            if r.returncode:
                problems.append(f"swapoff {dev}: {(r.stderr.strip() or 'failed').splitlines()[-1]}")
            else:
                done.append(f"swapoff {dev}")
        blk = _zram_block(root, zid)
        if os.path.isdir(blk) and not problems:
            err = _retry_busy(lambda: write_text(os.path.join(blk, "reset"), "1"), 50, 0.05)
            if err:
                problems.append(f"reset zram{zid}: {err}")
            if not problems:
                try:
                    write_text(os.path.join(root, "class", "zram-control", "hot_remove"), str(zid))
                    done.append(f"removed zram{zid}")
                except OSError as e:
                    problems.append(f"hot_remove zram{zid}: {e.strerror}")
        if rec.get("node_created") and dev and os.path.exists(dev) and not os.path.isdir(blk):
            try:
                os.unlink(dev)
            except OSError as e:
                problems.append(f"remove {dev}: {e.strerror}")


def _retry_busy(step, tries: int, pause: float) -> str | None:
    """Calls step() up to `tries` times, `pause` seconds apart, while it
    raises EBUSY or returns False (not yet). Returns None once it is done,
    else why it is not: the error's text, or that processes are still in
    the way."""
    for attempt in range(tries):
        try:
            if step() is not False:
                return None
            why = "processes are still in it"
        except OSError as e:
            if e.errno != errno.EBUSY:
                return e.strerror
            why = e.strerror
        if attempt < tries - 1:
            time.sleep(pause)
    return why


def memcg_pids(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def _remove_memcg(path: str, problems: list, done: list) -> None:
    """Kills every process in the run's memory cgroup (only the workload's
    children live there) and removes it. Only a directory named swaplab-*
    directly under a memory cgroup mount is touched."""
    if not os.path.basename(path).startswith(MEMCG_PREFIX) or \
            not os.path.exists(os.path.join(os.path.dirname(path), "memory.limit_in_bytes")):
        problems.append(f"{path} is not a swaplab memory cgroup; left alone")
        return
    if not os.path.isdir(path):
        return

    def kill_then_rmdir() -> bool:
        pids = memcg_pids(path)
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        if pids:
            return False
        try:
            os.rmdir(path)
            done.append(f"removed {path}")
        except FileNotFoundError:
            pass
        return True

    err = _retry_busy(kill_then_rmdir, 400, 0.01)
    if err:
        problems.append(f"rmdir {path}: {err}")


def restore(state: State, tools: dict | None = None, kill_driver: bool = True) -> list:
    """Undoes exactly what the state names, in reverse order; removes the
    state file when everything is undone. Returns the problems (strings)."""
    st = state.data
    root = st.get("sysfs_root") or "/sys"
    tools = tools or {}
    problems = []
    done = []

    dpid = st.get("driver_pid")
    if kill_driver and pid_alive(dpid) and any(n in pid_cmdline(dpid)
                                               for n in ("swaplab-kdriver", "swaplab-rdriver")):
        try:
            os.kill(dpid, 9)
        except OSError:
            pass
        for _ in range(500):
            if not pid_alive(dpid):
                break
            time.sleep(0.01)
        done.append(f"killed driver {dpid}")
    if st.get("memcg"):
        _remove_memcg(st["memcg"], problems, done)
    tmp = st.get("tmpdir")
    if tmp and os.path.basename(tmp).startswith("swaplab-") and os.path.isdir(tmp):
        shutil.rmtree(tmp, ignore_errors=True)
    for rec in reversed([st] + list(st.get("extra_zrams") or [])):
        _restore_zram(rec, root, tools, problems, done)
    for path, old in (st.get("knobs") or {}).items():
        try:
            if bracketed(read_text(path)) != old:
                write_text(path, old)
                done.append(f"{path} = {old}")
        except OSError as e:
            problems.append(f"restore {path} to {old}: {e.strerror}")
    if not problems:
        state.remove()
    return problems


def zram_ids(root: str | None = None) -> list[int]:
    out = []
    for p in glob.glob(os.path.join(root or sysfs_root(), "block", "zram*")):
        m = re.fullmatch(r"zram(\d+)", os.path.basename(p))
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


__all__ = ["HarnessRefused", "HarnessError", "State", "Session", "restore", "check_can_run",
           "check_no_other_swap", "check_no_state", "read_knobs", "active_swaps", "zram_ids",
           "driver_path", "sysfs_root", "state_path", "memcg_root", "check_memcg", "memcg_pids"]
