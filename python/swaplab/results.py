"""Result files: one JSON schema for every run, model or kernel.

A result holds the metadata to reproduce the run (swaplab version, source,
policy, workload and every parameter, seed, machine), per iteration and per
enabled mTHP size the swpout / swpout_fallback / swpin increases, the
order-0 figures, and the slot-layout hash (docs/layout-hash.md).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket

from . import __version__
from .params import ParamError, WorkloadParams, order_to_kb, size_to_order

SCHEMA = "swaplab.result/1"


def machine_info() -> dict:
    u = platform.uname()
    return {"hostname": socket.gethostname(), "system": u.system, "kernel_release": u.release,
            "machine": u.machine, "cpus": os.cpu_count(), "python": platform.python_version()}


def fallback_pct(swpout: int, fallback: int) -> float:
    total = swpout + fallback
    return 100.0 * fallback / total if total else 0.0


def build_result(source: str, policy: str, wp: WorkloadParams, raw_iters: list, *,
                 npages: int, final_hash: int, seconds: float, extra: dict | None = None) -> dict:
    """raw_iters: per iteration dicts with per-order lists swpout, swpout_fallback,
    swpin (index = order), and alloc_fail0, layout_hash, inuse_pages."""
    orders = [size_to_order(kb) for kb in wp.mthp_kb]
    iters = []
    for i, r in enumerate(raw_iters, 1):
        sizes = {}
        for o in orders:
            so, fb = r["swpout"][o], r["swpout_fallback"][o]
            sizes[str(order_to_kb(o))] = {"swpout": so, "swpout_fallback": fb,
                                         "fallback_pct": round(fallback_pct(so, fb), 4),
                                         "swpin": r["swpin"][o]}
        it = {"iteration": i, "sizes": sizes,
              "order0": {"swpout": r["swpout"][0], "swpin": r["swpin"][0],
                         "alloc_fail": r.get("alloc_fail0")},
              "layout_hash": format_hash(r["layout_hash"]) if r.get("layout_hash") is not None else None,
              "inuse_pages": r.get("inuse_pages"),
              "swapped_pages": r.get("swapped_pages"),
              # slots in use that hold none of the workload's pages: on the
              # kernel, pages other processes put on the device (F5); in the
              # <= 6.14 models, slots the slot caches hold
              "other_pages": (r["inuse_pages"] - r["swapped_pages"]
                              if r.get("inuse_pages") is not None and r.get("swapped_pages") is not None
                              else None)}
        if r.get("dev_inuse") is not None:
            it["inuse_pages_by_device"] = r["dev_inuse"]
        if r.get("frag") is not None:
            it["frag"] = r["frag"]   # fragmentation metrics (docs/metrics.md)
        iters.append(it)
    res = {
        "schema": SCHEMA,
        "swaplab_version": __version__,
        "source": source,
        "policy": policy,
        "workload": wp.workload,
        "params": wp.as_json(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "sizes_kb": list(wp.mthp_kb),
        "iterations": iters,
        "layout": {"npages": npages, "hash": format_hash(final_hash)},
        "seconds": round(seconds, 6),
    }
    res["summary"] = summarize(res)
    other = [it["iteration"] for it in iters if it["other_pages"]]
    res["first_other_pages_iteration"] = other[0] if other else None
    if extra:
        res.update(extra)
    return res


def format_hash(h: int) -> str:
    return f"{h:016x}"


def summarize(res: dict) -> dict:
    out = {}
    its = res["iterations"]
    for kb in res["sizes_kb"]:
        pcts = [it["sizes"][str(kb)]["fallback_pct"] for it in its]
        last = pcts[-10:]
        out[str(kb)] = {
            "mean_fallback_pct": round(sum(pcts) / len(pcts), 4) if pcts else 0.0,
            "max_fallback_pct": round(max(pcts), 4) if pcts else 0.0,
            "last10_mean_fallback_pct": round(sum(last) / len(last), 4) if last else 0.0,
            "swpout": sum(it["sizes"][str(kb)]["swpout"] for it in its),
            "swpout_fallback": sum(it["sizes"][str(kb)]["swpout_fallback"] for it in its),
        }
    return out


def check_writable(path: str, opt: str) -> None:
    """Refuses a path that cannot be written, before anything runs. A probe
    opens the file (or a sibling for a new one), since os.access() says yes
    to root everywhere; nothing is left behind."""
    if path == "-":
        return
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ParamError(f"cannot write {opt} '{path}': it is a directory")
    if not os.path.isdir(parent):
        raise ParamError(f"cannot write {opt} '{path}': directory {parent} does not exist")
    probe = path if os.path.exists(path) else path + ".tmp"
    existed = os.path.exists(probe)
    try:
        with open(probe, "a"):
            pass
    except OSError as e:
        raise ParamError(f"cannot write {opt} '{path}': {e.strerror}") from None
    finally:
        if not existed and os.path.exists(probe):
            os.unlink(probe)


def check_output_paths(json_path: str | None, layout_path: str | None) -> None:
    """Refuses --json / --layout-dump paths that cannot be written."""
    for opt, path in (("--json", json_path), ("--layout-dump", layout_path)):
        if path:
            check_writable(path, opt)


def save_outputs(res: dict, layout: bytes, json_path: str | None, layout_path: str | None) -> None:
    """Writes a run's --json and --layout-dump files, where asked."""
    if json_path:
        write_json(json_path, res)
    if layout_path:
        write_layout(layout_path, layout)


def write_json(path: str, obj: dict) -> None:
    text = json.dumps(obj, indent=1, sort_keys=False) + "\n"
    if path == "-":
        print(text, end="")
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_layout(path: str, layout: bytes) -> None:
    with open(path, "wb") as f:
        f.write(layout)


def load_result(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            res = json.load(f)
    except OSError as e:
        raise ParamError(f"cannot read result '{path}': {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ParamError(f"result '{path}' is not JSON: {e.msg} at line {e.lineno}") from None
    except UnicodeDecodeError:
        raise ParamError(f"result '{path}' is not UTF-8 text") from None
    if not isinstance(res, dict) or res.get("schema") != SCHEMA:
        raise ParamError(f"result '{path}' is not a swaplab result ({SCHEMA})")
    missing = [k for k in ("workload", "params", "sizes_kb", "iterations", "summary", "layout")
               if k not in res]
    if missing:
        raise ParamError(f"result '{path}' lacks {', '.join(missing)}")
    return res
