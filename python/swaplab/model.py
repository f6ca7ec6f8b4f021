"""Runs a workload on the C model and returns a result (results.SCHEMA)."""
from __future__ import annotations

import signal

from . import _core
from .params import WorkloadParams
from .results import build_result, iteration_entry
from .params import size_to_order


def signal_name(signo: int) -> str:
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


def run_model(wp: WorkloadParams, policy: str = "linux-6.18", check: int = 0, *,
              on_iteration=None, catch_signals: bool = False,
              stopped_by: str | None = None, metrics: bool = False) -> tuple[dict, bytes]:
    """Returns (result, layout dump bytes). check: 0 none, 1 per iteration, 2 per operation;
    metrics: fragmentation metrics per iteration (docs/metrics.md).

    on_iteration(entry) is called with each iteration (a result iteration
    dict) as it finishes; a true return stops the run there. With
    catch_signals (main thread only), SIGINT and SIGTERM stop the run
    between operations instead of killing it. A stopped run's result holds
    the finished iterations, complete: false and stopped_by: the signal's
    name, or `stopped_by` (what the caller names) when on_iteration stopped it."""
    hook = None
    if on_iteration is not None:
        orders = [size_to_order(kb) for kb in wp.mthp_kb]

        def hook(i, raw_it):
            return on_iteration(iteration_entry(i, raw_it, orders))
    raw = _core.run(policy=policy, check=check, on_iter=hook, catch_signals=catch_signals,
                    metrics=metrics, **wp.core_kwargs())
    layout = raw["layout"]
    why = None
    if raw["stopped"]:
        why = signal_name(raw["stop_signal"]) if raw["stop_signal"] else (stopped_by or "caller")
    res = build_result("model", policy, wp, raw["iterations"], npages=raw["npages"],
                       final_hash=_core.layout_hash(layout), seconds=raw["seconds"],
                       extra={"device": dict(raw["device"], max_slots=raw["max_slots"]),
                              "invariant_checks": raw["checks"]},
                       stopped_by=why)
    if len(raw["devices"]) > 1:
        kinds = [(wp.swap_bytes, wp.device)] + [(x["bytes"], x["kind"]) for x in wp.extra_swap]
        res["swap_devices"] = [dict(d, bytes=b, kind=k) for d, (b, k) in zip(raw["devices"], kinds)]
    return res, layout
