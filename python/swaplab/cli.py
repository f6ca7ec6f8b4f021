"""The swaplab command line.

Every command that runs a workload takes the same workload options
(params.add_workload_options). Bad input ends with one line naming the
problem and exit code 2, before anything runs or is written.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading

from . import __version__, _core
from .params import ParamError, add_workload_options, params_from_args, shown, shown_path
from .results import check_output_paths, save_outputs, write_json
from . import report

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2."""

    def error(self, message):  # noqa: D401 - argparse API
        # a long or multi-line value argparse quotes: a short prefix, one line
        message = re.sub(r"'([^']{%d,})'" % 33, lambda m: f"'{shown(m.group(1))}'", message)
        sys.stderr.write(f"{self.prog}: error: {shown_line(message)}\n")
        sys.exit(EXIT_BAD_INPUT)


def shown_line(message: str) -> str:
    """A message on one line: control characters escaped."""
    return message if message.isprintable() else message.encode("unicode_escape").decode("ascii")


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
    from . import reclaim
    about.update(reclaim.ABOUT)
    cat = reclaim.catalogue()
    names = list(_core.workloads()) + cat["workloads"]
    if a.json:
        write_json("-", {"workloads": [{"name": n, "summary": about.get(n, "")} for n in names],
                         "presets": cat["presets"]})
        return 0
    for n in names:
        print(f"{n:<12}  {about.get(n, '')}")
    print("\npresets (reclaim workloads, scaled down; docs/workloads-reclaim.md):")
    w = max(len(p["name"]) for p in cat["presets"])
    for p in cat["presets"]:
        print(f"{p['name']:<{w}}  {p['workload']:<8} {p['source']}")
    return 0


class LiveOutput:
    """`swaplab run`'s printing as the run goes: the table's header, then
    each iteration as it finishes (or the published tool's lines), then the
    summary. A closed standard output ends the printing quietly; the run
    then stops unless it still has files to write (keep_going)."""

    def __init__(self, fmt: str, quiet: bool, sizes: list, keep_going: bool):
        self.fmt, self.quiet, self.sizes, self.keep_going = fmt, quiet, sizes, keep_going
        self.closed = False

    def _emit(self, fn) -> bool:
        """Runs a printing step; False once standard output is closed."""
        if self.quiet or self.closed:
            return not self.closed
        try:
            fn()
            sys.stdout.flush()
        except BrokenPipeError:
            self.closed = True
            quiet_stdout()
        return not self.closed

    def header(self, res_like: dict) -> None:
        if self.fmt == "table":
            self._emit(lambda: report.print_run_header(res_like))

    def iteration(self, it: dict) -> bool:
        """The core's per-iteration hook: True stops the run."""
        ok = self._emit(lambda: print(report.iteration_text(it, self.sizes, self.fmt)))
        return not ok and not self.keep_going

    def summary(self, res: dict) -> None:
        if self.fmt == "table":
            self._emit(lambda: report.print_summary(res))


def quiet_stdout() -> None:
    """Standard output was closed by its reader: what is still buffered and
    every later print go to /dev/null, so that nothing complains at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _cmd_run(a) -> int:
    from .model import run_model

    wp = params_from_args(a.workload, a)
    check_output_paths(a.json, a.layout_dump)
    live = LiveOutput(a.format, a.quiet or a.json == "-", wp.mthp_kb,
                      keep_going=bool(a.layout_dump or (a.json and a.json != "-")))
    live.header({"source": "model", "policy": a.policy, "workload": wp.workload,
                 "params": wp.as_json(), "sizes_kb": wp.mthp_kb})
    res, layout = run_model(wp, a.policy, check=a.check, metrics=a.metrics, on_iteration=live.iteration,
                            catch_signals=threading.current_thread() is threading.main_thread(),
                            stopped_by="stdout closed")
    live.summary(res)
    if res["stopped_by"] == "stdout closed" and not live.keep_going:
        return 0
    save_outputs(res, layout, a.json, a.layout_dump)
    if res["stopped_by"] in ("SIGINT", "SIGTERM"):
        n = len(res["iterations"])
        sys.stderr.write(f"swaplab run: stopped by {res['stopped_by']} after {n} of {wp.iterations} "
                         "iterations" + ("; the result file holds them (complete: false)"
                                         if a.json and a.json != "-" else "") + "\n")
        return 128 + getattr(signal, res["stopped_by"])
    return 0


def _cmd_bench(a) -> int:
    from . import bench

    return bench.main(a)


def _check_level(text: str) -> int:
    if text not in ("0", "1", "2"):
        raise argparse.ArgumentTypeError(f"'{shown(text)}' is not 0, 1 or 2")
    return int(text)


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
    r.add_argument("--check", type=_check_level, default=0, metavar="{0,1,2}",
                   help="invariant checks: 1 after every iteration, 2 after every operation")
    r.add_argument("--format", choices=["table", "published"], default="table",
                   help="table: a row per iteration and a summary (default); published: the "
                        "published test program's 'Iteration N: swpout inc: ...' lines")
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
    from . import placement as _placement
    _placement.add_parsers(sub)

    from . import history as _history
    _history.add_parsers(sub)

    from . import sweeps as _sweep, plot as _plot
    _sweep.add_parsers(sub)
    _plot.add_parsers(sub)

    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = sys.argv[1:] if argv is None else list(argv)
    from . import reclaim
    if len(args) > 1 and args[0] == "run" and reclaim.is_reclaim_name(args[1]):
        # a reclaim workload or preset: its own options (swaplab run usemem --help)
        a = argparse.Namespace(command="run", func=lambda _a: reclaim.main_run(args[1:]))
    elif len(args) > 2 and args[:2] == ["kernel", "run"] and reclaim.is_reclaim_name(args[2]):
        # the same on the live kernel (docs/kernel-harness.md, "Reclaim workloads")
        from .kernel import main_run_reclaim
        a = argparse.Namespace(command="kernel run", func=lambda _a: main_run_reclaim(args[2:]))
    else:
        a = parser.parse_args(argv)
    if a.command is None:
        # bare `swaplab`: the commands
        parser.print_help()
        return 0
    try:
        rc = a.func(a) or 0
        sys.stdout.flush()           # a full or closed stdout is reported here
        return rc
    except ParamError as e:
        sys.stderr.write(f"swaplab {a.command}: error: {shown_line(str(e))}\n")
        return EXIT_BAD_INPUT
    except (RuntimeError, MemoryError) as e:
        # the core refused what it was given (a device or run too large for
        # the model or this machine): one line, like any bad input
        sys.stderr.write(f"swaplab {a.command}: error: {shown_line(str(e) or 'out of memory')}\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # the reader of standard output went away (| head): end quietly
        quiet_stdout()
        return 0
    except OSError as e:
        where = shown_path(e.filename) if e.filename is not None else "stdout"
        sys.stderr.write(f"swaplab {a.command}: error: cannot write {where}: "
                         f"{e.strerror or e}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("swaplab: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
