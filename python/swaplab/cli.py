"""The swaplab command line.

Every command that runs a workload takes the same workload options
(params.add_workload_options). Bad input ends with one line naming the
problem and exit code 2, before anything runs or is written.
"""
from __future__ import annotations

import argparse
import sys

from . import __version__, _core
from .params import ParamError, add_workload_options, check_policy_name, params_from_args
from .results import check_output_paths, save_outputs, write_json
from . import report

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2."""

    def error(self, message):  # noqa: D401 - argparse API
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(EXIT_BAD_INPUT)


def _cmd_policies(a) -> int:
    pols = _core.policies()
    if a.json:
        write_json("-", {"policies": pols})
        return 0
    w = max(len(p["name"]) for p in pols)
    for p in pols:
        print(f"{p['name']:<{w}}  {p['summary']}")
    return 0


def _cmd_workloads(a) -> int:
    about = {
        "thp-swap-v1": "June 2024 fragmentation test: 256 random 64K chunks dropped and rewritten, "
                       "pageout, per iteration (-s: 64 pages of a 1M small-folio region)",
        "thp-swap": "tools/mm/thp_swap_allocator_test: warm-up, random swap-in of 16M "
                    "(-a: 64K-aligned chunks), 256 chunks rewritten, pageout (-s: 4M small region)",
    }
    if a.json:
        write_json("-", {"workloads": [{"name": n, "summary": about.get(n, "")} for n in _core.workloads()]})
        return 0
    for n in _core.workloads():
        print(f"{n:<12}  {about.get(n, '')}")
    return 0


def _cmd_run(a) -> int:
    from .model import run_model

    wp = params_from_args(a.workload, a)
    check_output_paths(a.json, a.layout_dump)
    res, layout = run_model(wp, a.policy, check=a.check, metrics=a.metrics)
    if not a.quiet and a.json != "-":
        report.print_run(res)
    save_outputs(res, layout, a.json, a.layout_dump)
    return 0


def _cmd_bench(a) -> int:
    from . import bench

    return bench.main(a)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="swaplab", description="A laboratory for the Linux swap-slot allocator.")
    p.add_argument("--version", action="version", version=f"swaplab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("run", help="run a workload on the model",
                       description="Run a workload on the allocator model; prints the per-iteration "
                                   "table and a summary.")
    r.add_argument("workload", help="workload name (swaplab workloads)")
    add_workload_options(r)
    r.add_argument("--json", metavar="PATH", help="write the result as JSON ('-' for stdout)")
    r.add_argument("--layout-dump", metavar="PATH",
                   help="write the final layout: one little-endian uint64 per page (docs/layout-hash.md)")
    r.add_argument("--check", type=int, choices=[0, 1, 2], default=0,
                   help="invariant checks: 1 after every iteration, 2 after every operation")
    r.add_argument("--metrics", action="store_true",
                   help="fragmentation metrics per iteration in the result (docs/metrics.md)")
    r.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    r.set_defaults(func=_cmd_run)

    pp = sub.add_parser("policies", help="list the allocator policies")
    pp.add_argument("--json", action="store_true", help="as JSON")
    pp.set_defaults(func=_cmd_policies)

    w = sub.add_parser("workloads", help="list the workloads")
    w.add_argument("--json", action="store_true", help="as JSON")
    w.set_defaults(func=_cmd_workloads)

    b = sub.add_parser("bench", help="benchmarks (JSON output)")
    bsub = b.add_subparsers(dest="bench", metavar="BENCH", parser_class=_Parser)
    bsub.required = True
    from . import bench as _bench
    _bench.add_parsers(bsub)
    b.set_defaults(func=_cmd_bench)

    from . import golden
    golden.add_parsers(sub)

    from . import kernel as _kernel, compare as _compare, validate as _validate
    _kernel.add_parsers(sub)
    _compare.add_parsers(sub)
    _validate.add_parsers(sub)

    from . import history as _history
    _history.add_parsers(sub)

    from . import sweeps as _sweep, plot as _plot
    _sweep.add_parsers(sub)
    _plot.add_parsers(sub)

    return p


def main(argv=None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    if a.command is None:
        # bare `swaplab`: the commands
        parser.print_help()
        return 0
    try:
        return a.func(a) or 0
    except ParamError as e:
        sys.stderr.write(f"swaplab {a.command}: error: {e}\n")
        return EXIT_BAD_INPUT
    except (RuntimeError, MemoryError) as e:
        # the core refused what it was given (a device or run too large for
        # the model or this machine): one line, like any bad input
        sys.stderr.write(f"swaplab {a.command}: error: {e or 'out of memory'}\n")
        return EXIT_BAD_INPUT
    except OSError as e:
        sys.stderr.write(f"swaplab {a.command}: error: cannot write {e.filename}: {e.strerror}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("swaplab: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
