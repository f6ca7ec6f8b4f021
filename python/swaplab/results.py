"""Result files: one JSON schema for every run, model or kernel.

A result holds the metadata to reproduce the run (swaplab version, source,
policy, workload and every parameter, seed, machine), per iteration and per
enabled mTHP size the swpout / swpout_fallback / swpin increases, the
order-0 figures, and the slot-layout hash (docs/layout-hash.md); model runs
also carry, per size, the runs of consecutive slots the folios took
("extents": one per folio except under noncontig).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import signal
import socket
import stat
import sys
import tempfile
import threading

from . import __version__
from .params import ParamError, WorkloadParams, order_to_kb, shown, shown_path, size_to_order

SCHEMA = "swaplab.result/1"


def machine_info() -> dict:
    u = platform.uname()
    return {"hostname": socket.gethostname(), "system": u.system, "kernel_release": u.release,
            "machine": u.machine, "cpus": os.cpu_count(), "python": platform.python_version()}


def fallback_pct(swpout: int, fallback: int) -> float:
    total = swpout + fallback
    return 100.0 * fallback / total if total else 0.0


def iteration_entry(i: int, r: dict, orders: list) -> dict:
    """Iteration i of a result from the core's or the driver's raw
    iteration r (per-order lists swpout, swpout_fallback, swpin, and
    alloc_fail0, layout_hash, inuse_pages, swapped_pages, dev_inuse)."""
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
          # <= 6.14 models, slots the slot caches hold (build_result names
          # it cache_held_pages there)
          "other_pages": (r["inuse_pages"] - r["swapped_pages"]
                          if r.get("inuse_pages") is not None and r.get("swapped_pages") is not None
                          else None)}
    if r.get("dev_inuse") is not None:
        it["inuse_pages_by_device"] = r["dev_inuse"]
    if r.get("frag") is not None:
        it["frag"] = r["frag"]   # fragmentation metrics (docs/metrics.md)
    return it


def build_result(source: str, policy: str, wp: WorkloadParams, raw_iters: list, *,
                 npages: int, final_hash: int, seconds: float, extra: dict | None = None,
                 stopped_by: str | None = None) -> dict:
    """raw_iters: per iteration dicts (iteration_entry). stopped_by: what
    ended the run before its last iteration ("SIGINT", "SIGTERM", ...): the
    result then holds the finished iterations and says complete: false."""
    orders = [size_to_order(kb) for kb in wp.mthp_kb]
    iters = [iteration_entry(i, r, orders) for i, r in enumerate(raw_iters, 1)]
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
        # a run stopped after its last iteration is complete all the same
        "complete": len(iters) == wp.iterations,
        "stopped_by": stopped_by if len(iters) != wp.iterations else None,
        "layout": {"npages": npages, "hash": format_hash(final_hash)},
        "seconds": round(seconds, 6),
    }
    res["summary"] = summarize(res)
    if raw_iters and raw_iters[0].get("swpout_extents") is not None:
        res["extents"] = extents(raw_iters, orders)
    other = [it["iteration"] for it in iters if it["other_pages"]]
    if source == "kernel":
        res["first_other_pages_iteration"] = other[0] if other else None
    else:
        # in a model no other process swaps: the slots in use beyond the
        # regions' pages are the ones the (<= 6.14) slot caches hold
        for it in iters:
            it["cache_held_pages"] = it.pop("other_pages")
        res["first_cache_held_iteration"] = other[0] if other else None
    if extra:
        res.update(extra)
    return res


def extents(raw_iters: list, orders: list) -> dict:
    """Per enabled size over the run: folios swapped out whole, the runs of
    consecutive slots they took (one each, more only under noncontig) and
    the mean per folio."""
    out = {}
    for o in orders:
        folios = sum(r["swpout"][o] for r in raw_iters)
        runs = sum(r["swpout_extents"][o] for r in raw_iters)
        out[str(order_to_kb(o))] = {"folios": folios, "extents": runs,
                                    "mean_per_folio": round(runs / folios, 4) if folios else 0.0}
    return out


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


# ------------------------------------------------------------------ outputs
#
# Every file swaplab writes (--json, --layout-dump, --plot, golden files,
# bench results) goes through check_outputs() before anything runs and
# write_output() at the end: only a regular file or a new path is
# accepted, never a symbolic link, device, FIFO, socket or directory; the
# data goes to a unique temporary file in the same directory, is synced
# and renamed over the path, so that an interrupted write leaves the old
# file whole and nothing else (not an existing PATH.tmp) is touched.

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _refuse(opt: str, path: str, why: str) -> ParamError:
    return ParamError(f"cannot write {opt} '{shown_path(path)}': {why}")


def check_writable(path: str, opt: str, stdout_ok: bool = True) -> None:
    """Refuses an output path before anything runs: '' and anything that is
    not a regular file or a new path in an existing directory. A probe
    creates (and removes) a uniquely named file in the directory, since
    os.access() says yes to root everywhere."""
    if path == "-":
        if stdout_ok:
            return
        raise _refuse(opt, path, "this output does not go to standard output (name a file)")
    if path == "" or path is None:
        raise ParamError(f"{opt} '' names no file")
    _check_kind(path, opt)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise _refuse(opt, path, f"directory {shown_path(parent)} does not exist")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".swaplab-probe-")
    except OSError as e:
        raise _refuse(opt, path, e.strerror or str(e)) from None
    os.close(fd)
    os.unlink(probe)


def _check_kind(path: str, opt: str) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise _refuse(opt, path, e.strerror or str(e)) from None
    for test, what in _KINDS:
        if test(st.st_mode):
            raise _refuse(opt, path, f"it is {what}, not a regular file")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs, inputs=(), stdout_ok=("--json",)) -> None:
    """outputs: (option, path or None) pairs; inputs: (what, path) pairs the
    command reads. Each output must be writable (check_writable), no two
    outputs the same file, and no output one of the inputs. Options named
    in stdout_ok take '-' for standard output (once)."""
    given = [(opt, p) for opt, p in outputs if p is not None]
    for opt, p in given:
        check_writable(p, opt, stdout_ok=opt in stdout_ok)
    for i, (opt, p) in enumerate(given):
        for opt2, p2 in given[:i]:
            if (p == "-" and p2 == "-") or (p != "-" and p2 != "-" and _same_file(p, p2)):
                raise ParamError(f"{opt2} and {opt} both name '{shown_path(p)}': one file each")
        if p == "-":
            continue
        for what, q in inputs:
            if q and q != "-" and _same_file(p, q):
                raise ParamError(f"{opt} '{shown_path(p)}' is {what}: refusing to overwrite an input")


def check_output_paths(json_path: str | None, layout_path: str | None) -> None:
    """Refuses --json / --layout-dump paths that cannot be written."""
    check_outputs([("--json", json_path), ("--layout-dump", layout_path)])


def save_outputs(res: dict, layout: bytes, json_path: str | None, layout_path: str | None) -> None:
    """Writes a run's --json and --layout-dump files, where asked."""
    if json_path:
        write_json(json_path, res)
    if layout_path:
        write_layout(layout_path, layout)


class _SignalsHeld:
    """SIGINT and SIGTERM wait while a file is renamed into place (main
    thread only): the write is all or nothing, and no temporary is left."""

    def __enter__(self):
        self.held = threading.current_thread() is threading.main_thread()
        if self.held:
            self.old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        return self

    def __exit__(self, *exc):
        if self.held:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.old)
        return False


def write_stdout(data) -> None:
    """Text or bytes to standard output; OSError names the stream."""
    try:
        if isinstance(data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data)
        sys.stdout.flush()
    except OSError as e:
        if e.filename is None:
            e.filename = "stdout"
        raise


def write_output(path: str, data, opt: str = "output") -> None:
    """The one writer of every output file: '-' is standard output;
    otherwise a regular file or a new path only (checked again now), through
    a unique temporary file in the same directory, fsync'ed and renamed.
    An existing file keeps its permissions; a new one gets 0666 & ~umask."""
    if path == "-":
        write_stdout(data)
        return
    _check_kind(path, opt)
    raw = data.encode() if isinstance(data, str) else bytes(data)
    parent = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    with _SignalsHeld():
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(e, OSError) and e.filename in (None, tmp):
                e.filename = path
            raise


def write_json(path: str, obj: dict, opt: str = "--json") -> None:
    write_output(path, json.dumps(obj, indent=1, sort_keys=False) + "\n", opt)


def write_layout(path: str, layout: bytes) -> None:
    write_output(path, layout, "--layout-dump")


# ------------------------------------------------------------------ schema
#
# The result file's schema (docs/result-schema.md), written as data in a
# JSON-Schema-like form: "type" (a name or a list of names), "properties"
# with "required", "items", "values" (every value of an object), "minimum",
# "enum", "pattern". check_result() holds a file to it, and to the rules
# that tie fields together, before compare, history or plot use it.

_COUNT = {"type": "integer", "minimum": 0}
_COUNT_OR_NULL = {"type": ["integer", "null"], "minimum": 0}
_PCT = {"type": "number", "minimum": 0, "maximum": 100}
_HASH = {"type": "string", "pattern": r"[0-9a-f]{16}"}
_SIZE_COUNTS = {"type": "object", "required": ["swpout", "swpout_fallback", "fallback_pct", "swpin"],
                "properties": {"swpout": _COUNT, "swpout_fallback": _COUNT, "fallback_pct": _PCT,
                               "swpin": _COUNT}}
_SIZE_SUMMARY = {"type": "object",
                 "required": ["mean_fallback_pct", "max_fallback_pct", "last10_mean_fallback_pct",
                              "swpout", "swpout_fallback"],
                 "properties": {"mean_fallback_pct": _PCT, "max_fallback_pct": _PCT,
                                "last10_mean_fallback_pct": _PCT, "swpout": _COUNT,
                                "swpout_fallback": _COUNT}}
_EXTRA_SWAP = {"type": "object", "required": ["bytes", "kind", "prio"],
               "properties": {"bytes": _COUNT, "kind": {"type": "string"},
                              "prio": {"type": "integer", "minimum": -1}}}

RESULT_SCHEMA = {
    "type": "object",
    "required": ["schema", "source", "policy", "workload", "params", "sizes_kb", "iterations",
                 "summary", "layout"],
    "properties": {
        "schema": {"enum": [SCHEMA]},
        "swaplab_version": {"type": "string"},
        "source": {"enum": ["model", "kernel"]},
        "policy": {"type": "string"},
        "workload": {"type": "string"},
        "params": {
            "type": "object",
            "required": ["workload", "swap_bytes", "mthp_kb", "small_folios", "aligned_swapin",
                         "iterations", "seed", "rng"],
            "properties": {
                "workload": {"type": "string"}, "swap_bytes": _COUNT,
                "mthp_kb": {"type": "array", "items": {"type": "integer", "minimum": 4}},
                "small_folios": {"type": "boolean"}, "aligned_swapin": {"type": "boolean"},
                "iterations": {"type": "integer", "minimum": 1}, "seed": _COUNT,
                "rng": {"enum": ["default", "glibc"]}, "cpu": _COUNT,
                "region_a_bytes": _COUNT, "region_b_bytes": _COUNT, "device": {"type": "string"},
                "cpus": {"type": "integer", "minimum": 1}, "migrate_every": _COUNT,
                "swap_prio": {"type": "integer", "minimum": -1},
                "extra_swap": {"type": "array", "items": _EXTRA_SWAP},
                "region_offset": {"type": "array", "items": _COUNT},
                "region_offset_aslr": {"type": "boolean"},
            }},
        "sizes_kb": {"type": "array", "items": {"type": "integer", "minimum": 4}},
        "iterations": {"type": "array", "items": {
            "type": "object", "required": ["iteration", "sizes"],
            "properties": {
                "iteration": {"type": "integer", "minimum": 1},
                "sizes": {"type": "object", "values": _SIZE_COUNTS},
                "order0": {"type": "object", "properties": {
                    "swpout": _COUNT_OR_NULL, "swpin": _COUNT_OR_NULL, "alloc_fail": _COUNT_OR_NULL}},
                "layout_hash": {"type": ["string", "null"], "pattern": r"[0-9a-f]{16}"},
                "inuse_pages": _COUNT_OR_NULL, "swapped_pages": _COUNT_OR_NULL,
                "other_pages": {"type": ["integer", "null"]},
                "cache_held_pages": {"type": ["integer", "null"]},
                "inuse_pages_by_device": {"type": "array", "items": _COUNT},
            }}},
        "complete": {"type": "boolean"},
        "stopped_by": {"type": ["string", "null"]},
        "summary": {"type": "object", "values": _SIZE_SUMMARY},
        "layout": {"type": "object", "required": ["npages", "hash"],
                   "properties": {"npages": _COUNT, "hash": _HASH}},
        "seconds": {"type": "number", "minimum": 0},
        "first_other_pages_iteration": {"type": ["integer", "null"], "minimum": 1},
        "first_cache_held_iteration": {"type": ["integer", "null"], "minimum": 1},
    },
}

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(v, name: str) -> bool:
    if name == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if name == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v
    return isinstance(v, _TYPES[name])


def schema_errors(v, sch: dict, where: str = "") -> str | None:
    """The first way v breaks sch (a path and what is wrong), or None."""
    at = where or "the top level"
    if "enum" in sch and v not in sch["enum"]:
        return f"{at} is {shown(json.dumps(v))}, not one of {', '.join(map(json.dumps, sch['enum']))}"
    types = sch.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_is_type(v, t) for t in types):
            return f"{at} is not {' or '.join(types)}"
    if v is None:
        return None
    if "minimum" in sch and isinstance(v, (int, float)) and v < sch["minimum"]:
        return f"{at} is {v}, below {sch['minimum']}"
    if "maximum" in sch and isinstance(v, (int, float)) and v > sch["maximum"]:
        return f"{at} is {v}, above {sch['maximum']}"
    if "pattern" in sch and isinstance(v, str) and not re.fullmatch(sch["pattern"], v):
        return f"{at} '{shown(v)}' is not of the form {sch['pattern']}"
    if isinstance(v, dict):
        for k in sch.get("required", []):
            if k not in v:
                return f"{where + '.' if where else ''}{k} is missing"
        for k, sub in sch.get("properties", {}).items():
            if k in v:
                err = schema_errors(v[k], sub, f"{where + '.' if where else ''}{k}")
                if err:
                    return err
        if "values" in sch:
            for k, x in v.items():
                err = schema_errors(x, sch["values"], f"{where}.{shown(k)}")
                if err:
                    return err
    if isinstance(v, list) and "items" in sch:
        for i, x in enumerate(v):
            err = schema_errors(x, sch["items"], f"{where}[{i}]")
            if err:
                return err
    return None


def result_errors(res) -> str | None:
    """The first problem of a result (RESULT_SCHEMA and the rules that tie
    its fields together), or None."""
    err = schema_errors(res, RESULT_SCHEMA)
    if err:
        return err
    sizes = [str(kb) for kb in res["sizes_kb"]]
    if not sizes:
        return "sizes_kb is empty"
    if len(set(sizes)) != len(sizes):
        return "sizes_kb names a size twice"
    if res["params"]["mthp_kb"] != res["sizes_kb"]:
        return "params.mthp_kb differs from sizes_kb"
    if res["params"]["workload"] != res["workload"]:
        return "params.workload differs from workload"
    its = res["iterations"]
    for i, it in enumerate(its, 1):
        if it["iteration"] != i:
            return f"iterations[{i - 1}].iteration is {it['iteration']}, not {i}"
        missing = [kb for kb in sizes if kb not in it["sizes"]]
        if missing:
            return f"iterations[{i - 1}].sizes lacks size {missing[0]}"
    missing = [kb for kb in sizes if kb not in res["summary"]]
    if missing:
        return f"summary lacks size {missing[0]}"
    n = res["params"]["iterations"]
    if len(its) > n:
        return f"{len(its)} iterations, more than params.iterations ({n})"
    if len(its) < n and res.get("complete", True):
        return (f"{len(its)} of params.iterations {n} iterations, and not marked "
                "incomplete (complete: false)")
    return None


def check_input_file(path: str, what: str) -> None:
    """An input must be a regular file (after symbolic links): reading a
    FIFO or a device would hang or never end."""
    if path == "":
        raise ParamError(f"{what} '' names no file")
    try:
        st = os.stat(path)
    except OSError as e:
        raise ParamError(f"cannot read {what} '{shown_path(path)}': {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = next((w for t, w in _KINDS if t(st.st_mode)), "not a file")
        raise ParamError(f"cannot read {what} '{shown_path(path)}': it is {kind}, not a regular file")


def load_json_file(path: str, what: str):
    """A regular file of JSON text; ParamError names what is wrong with it."""
    check_input_file(path, what)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ParamError(f"cannot read {what} '{shown_path(path)}': {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ParamError(f"{what} '{shown_path(path)}' is not JSON: {e.msg} at line {e.lineno}") from None
    except UnicodeDecodeError:
        raise ParamError(f"{what} '{shown_path(path)}' is not UTF-8 text") from None
    except RecursionError:
        raise ParamError(f"{what} '{shown_path(path)}' nests too deeply") from None


def load_result(path: str) -> dict:
    """A result file, held to the schema: ParamError names the first problem."""
    res = load_json_file(path, "result")
    if not isinstance(res, dict) or res.get("schema") != SCHEMA:
        raise ParamError(f"result '{shown_path(path)}' is not a swaplab result ({SCHEMA})")
    err = result_errors(res)
    if err:
        raise ParamError(f"result '{shown_path(path)}' does not fit the result schema: {err}")
    return res
