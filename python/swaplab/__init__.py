"""swaplab: a laboratory for the Linux swap-slot allocator.

The C core (swaplab._core) models the allocator and the process side; this
package is the front: parameters, result files, the CLI, the kernel harness
and the comparisons. For notebooks:

    >>> import swaplab
    >>> r = swaplab.run("thp-swap-v1", policy="linux-6.12", small_folios=True, seed=3)
    >>> r.summary["64"]["mean_fallback_pct"]
    >>> df = r.to_pandas()                       # one row per iteration and size
    >>> t = swaplab.sweep(policy=["linux-6.12", "linux-6.18"], seed=range(1, 11))

Bad parameters raise swaplab.ParamError (a ValueError) whose message is the
CLI's one line.
"""
from __future__ import annotations

from . import _core

__version__ = _core.VERSION

__all__ = ["__version__", "policies", "workloads", "run", "Result", "sweep", "compare_groups",
           "ParamError"]


def policies():
    """Every registered policy as dicts: name, summary, kernel."""
    return _core.policies()


def workloads():
    """Every workload name."""
    return _core.workloads()


from .params import ParamError  # noqa: E402  (needs _core above)


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("this needs pandas, which is not installed (pip install 'swaplab[pandas]')") from None
    return pandas


class Result:
    """One run's result: `data` is the result file's JSON object
    (swaplab.result/1), `layout` the final layout (one uint64 per page)."""

    def __init__(self, data: dict, layout: bytes):
        self.data = data
        self.layout = layout

    @property
    def policy(self) -> str:
        return self.data["policy"]

    @property
    def workload(self) -> str:
        return self.data["workload"]

    @property
    def summary(self) -> dict:
        """Per size (kB, as text): mean, max and last-10 fallback %, swpout totals."""
        return self.data["summary"]

    @property
    def iterations(self) -> list:
        return self.data["iterations"]

    def rows(self) -> list:
        """One dict per iteration and enabled size. fallback_pct is None when
        the size swapped nothing out in the iteration (0/0: no data)."""
        out = []
        for it in self.data["iterations"]:
            for kb, s in it["sizes"].items():
                n = s["swpout"] + s["swpout_fallback"]
                row = {"iteration": it["iteration"], "size_kb": int(kb), "swpout": s["swpout"],
                       "swpout_fallback": s["swpout_fallback"],
                       "fallback_pct": s["fallback_pct"] if n else None, "swpin": s["swpin"],
                       "order0_swpout": it["order0"]["swpout"], "order0_swpin": it["order0"]["swpin"],
                       "order0_alloc_fail": it["order0"]["alloc_fail"],
                       "inuse_pages": it.get("inuse_pages"), "swapped_pages": it.get("swapped_pages"),
                       "layout_hash": it.get("layout_hash")}
                f = it.get("frag")
                if f is not None:
                    from .params import size_to_order
                    o = size_to_order(int(kb))
                    row.update({"free_slots": f["free_slots"], "unusable_index": f["unusable_index"][o],
                                "fragmentation_index": f["fragmentation_index"][o],
                                "free_extents": f["free_extents"], "bluestore_score": f["bluestore_score"]})
                out.append(row)
        return out

    def to_pandas(self):
        """A pandas DataFrame of rows(): one row per iteration and size."""
        return _pandas().DataFrame(self.rows())

    def save(self, path: str, layout_path: str | None = None) -> None:
        """Writes the result file (and the layout dump), as `swaplab run --json`."""
        from .results import save_outputs
        save_outputs(self.data, self.layout, path, layout_path)

    def __repr__(self) -> str:
        s = ", ".join(f"{kb}K mean {v['mean_fallback_pct']:.2f}%" for kb, v in self.summary.items())
        return f"<swaplab.Result {self.data['source']}:{self.policy} {self.workload} ({s})>"


def run(workload: str = "thp-swap-v1", policy: str = "linux-6.18", *, swap_size="64M", mthp="64K",
        small_folios: bool = False, aligned_swapin: bool = False, iterations=100, seed=1,
        rng: str = "default", cpu=0, region_a_size=None, region_b_size=None, cpus=1,
        migrate_every=0, device: str = "zram", swap_prio=None, add_swap=(), check: int = 0,
        metrics: bool = False) -> Result:
    """Runs a workload on the model, like `swaplab run`, with the same
    parameters (the CLI's option names with '_') and the same checks.

    Sizes are text ('64M', '16K,64K' or a list of sizes for mthp) or bytes;
    add_swap is a list of 'SIZE[:KIND[:PRIO]]'. check: 0, or invariant
    checks after every iteration (1) or operation (2). metrics: the
    fragmentation metrics per iteration (docs/metrics.md).
    Raises ParamError naming the first bad parameter.
    """
    from .model import run_model
    from .params import params_from_options
    if check not in (0, 1, 2):
        raise ParamError(f"check {check!r} is not 0, 1 or 2")
    wp = params_from_options(workload, policy, swap_size=swap_size, mthp=mthp,
                             small_folios=small_folios, aligned_swapin=aligned_swapin,
                             iterations=iterations, seed=seed, rng=rng, cpu=cpu,
                             region_a_size=region_a_size, region_b_size=region_b_size, cpus=cpus,
                             migrate_every=migrate_every, device=device, swap_prio=swap_prio,
                             add_swap=add_swap)
    data, layout = run_model(wp, policy, check=check, metrics=bool(metrics))
    return Result(data, layout)


def sweep(spec=None, out: str | None = None, *, jobs: int | None = None, ray=None,
          quiet: bool = True, fresh: bool = False, **axes):
    """Runs a sweep (docs/sweep.md) and returns its table as a pandas
    DataFrame: one row per cell and size, in grid order.

    spec: a TOML file's path or a dict; axes (workload, policy, device,
    swap_size, mthp, seed, iterations, small_folios, ... and metrics) add to
    or replace its keys, each a value or a list (or range). out: the output
    directory (resumable); without one, a temporary directory. jobs: worker
    processes (default: every core); ray: True for a local Ray, or a
    cluster's address. The aggregate over seeds is in df.attrs["aggregate"],
    the metadata in df.attrs["sweep"].
    """
    import tempfile
    from . import sweeps as _sweep
    raw = dict(_sweep.load_toml(spec) if isinstance(spec, str) else (spec or {}))
    for k, v in axes.items():
        raw[k] = list(v) if isinstance(v, range) else v
    norm = _sweep.normalize_spec(raw)
    pd = _pandas()
    use_ray = ray is not None and ray is not False
    address = ray if isinstance(ray, str) else None
    if out is None:
        with tempfile.TemporaryDirectory() as d:
            meta = _sweep.run_sweep(norm, d, jobs=jobs, use_ray=use_ray, ray_address=address,
                                    quiet=quiet, resume=False)
    else:
        meta = _sweep.run_sweep(norm, out, jobs=jobs, use_ray=use_ray, ray_address=address,
                                quiet=quiet, resume=not fresh)
    df = pd.DataFrame(meta.pop("rows_data"), columns=_sweep.columns(norm["metrics"]))
    df.attrs["aggregate"] = meta.pop("agg_data")
    df.attrs["sweep"] = meta
    return df


def compare_groups(a, b, alpha: float = 0.05) -> dict:
    """mmtests-style statistics of two samples (e.g. mean fallback % over
    seeds): mean, sd, n of each, B - A, Welch's t-test p and whether
    p < alpha (swaplab.stats)."""
    from .stats import compare_groups as _cg
    return _cg(a, b, alpha)
