"""Runs a workload on the C model and returns a result (results.SCHEMA)."""
from __future__ import annotations

from . import _core
from .params import WorkloadParams
from .results import build_result


def run_model(wp: WorkloadParams, policy: str = "linux-6.18", check: int = 0,
              metrics: bool = False) -> tuple[dict, bytes]:
    """Returns (result, layout dump bytes). check: 0 none, 1 per iteration, 2 per operation;
    metrics: fragmentation metrics per iteration (docs/metrics.md)."""
    raw = _core.run(policy=policy, check=check, metrics=metrics, **wp.core_kwargs())
    layout = raw["layout"]
    res = build_result("model", policy, wp, raw["iterations"], npages=raw["npages"],
                       final_hash=_core.layout_hash(layout), seconds=raw["seconds"],
                       extra={"device": dict(raw["device"], max_slots=raw["max_slots"]),
                              "invariant_checks": raw["checks"]})
    if len(raw["devices"]) > 1:
        kinds = [(wp.swap_bytes, wp.device)] + [(x["bytes"], x["kind"]) for x in wp.extra_swap]
        res["swap_devices"] = [dict(d, bytes=b, kind=k) for d, (b, k) in zip(raw["devices"], kinds)]
    return res, layout
