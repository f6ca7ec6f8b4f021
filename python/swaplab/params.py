"""Workload parameters: parsing, validation and the options every command
that runs a workload shares (swaplab run, swaplab kernel run, ...)."""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, asdict, field

from . import _core

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
TiB = 1024 * GiB
# The core's constants (python/swaplab/_core.c exports them from its headers).
PAGE = _core.PAGE_SIZE
CLUSTER_BYTES = _core.CLUSTER_BYTES
MTHP_MIN = PAGE << _core.MTHP_MIN_ORDER

_UNITS = {"": 1, "B": 1, "K": KiB, "KB": KiB, "KIB": KiB, "M": MiB, "MB": MiB, "MIB": MiB,
          "G": GiB, "GB": GiB, "GIB": GiB, "T": TiB, "TB": TiB, "TIB": TiB}


class ParamError(ValueError):
    """Bad user input: the message names the problem in one line."""


MAX_SWAP = 16 * TiB        # the largest device the CLI accepts (4 GiB of slot map)
MAX_REGION = 64 * GiB      # the largest region (16M pages of process model)
MAX_ITERATIONS = 100000
MAX_COUNT = 2 ** 63 - 1


MAX_NUMBER_TEXT = 40       # longer size or count texts are refused before conversion
SHOWN_TEXT = 32            # user text echoed in a message: at most this much


def shown(text, limit: int = SHOWN_TEXT) -> str:
    """User text as an error message echoes it: one line (control
    characters escaped) and at most `limit` characters."""
    t = str(text)
    cut = len(t) > limit
    t = t[:limit]
    if not t.isprintable():
        t = t.encode("unicode_escape").decode("ascii")
    return t + ("..." if cut else "")


SHOWN_PATH = 240           # a file name echoed: at most this much


def shown_path(path) -> str:
    """A file name as an error message echoes it: one line, at most SHOWN_PATH characters."""
    return shown(path, SHOWN_PATH)


def _check_number_text(text, what: str) -> None:
    if text is not None and len(text) > MAX_NUMBER_TEXT:
        raise ParamError(f"{what} '{shown(text)}' is too long ({len(text)} characters; "
                         f"at most {MAX_NUMBER_TEXT})")


def parse_size(text: str, what: str) -> int:
    """'64M', '2MiB', '16K', '4096' -> bytes."""
    _check_number_text(text, what)
    m = re.fullmatch(r"[ \t]*([0-9]+)[ \t]*([A-Za-z]*)[ \t]*", text or "")
    if not m or m.group(2).upper() not in _UNITS:
        raise ParamError(f"{what} '{shown(text)}' is not a size (examples: 64M, 16K, 2G)")
    n = int(m.group(1)) * _UNITS[m.group(2).upper()]
    if n > MAX_COUNT:
        raise ParamError(f"{what} {shown(text.strip())} is too large")
    return n


def format_size(n: int) -> str:
    for unit, v in (("T", TiB), ("G", GiB), ("M", MiB), ("K", KiB)):
        if n >= v and n % v == 0:
            return f"{n // v}{unit}"
    return str(n)


def parse_mthp(text: str) -> list[int]:
    """'64K' or '16K,64K' -> sorted sizes in KiB; each a power of two in 16K..2M."""
    sizes = []
    seen = set()
    for part in (text or "").split(","):
        if not part.strip():
            raise ParamError(f"--mthp '{shown(text)}' has an empty size")
        b = parse_size(part, "mTHP size")
        if b <= 0 or b & (b - 1):
            raise ParamError(f"mTHP size {shown(part.strip())} is not a power of two")
        if b > CLUSTER_BYTES:
            raise ParamError(f"mTHP size {shown(part.strip())} is larger than a cluster ({format_size(CLUSTER_BYTES)})")
        if b < MTHP_MIN:
            raise ParamError(f"mTHP size {shown(part.strip())} is smaller than {format_size(MTHP_MIN)}, "
                             "the smallest anonymous mTHP")
        if b in seen:
            raise ParamError(f"--mthp names {shown(part.strip())} twice")
        seen.add(b)
        sizes.append(b // KiB)
    return sorted(sizes)


def size_to_order(kb: int) -> int:
    return (kb * KiB // PAGE).bit_length() - 1


def order_to_kb(order: int) -> int:
    return (PAGE << order) // KiB


REGION_WINDOW = 2 * MiB     # --region-offset is the address modulo this
ASLR_STEP = 64 * KiB        # posix_memalign(64 KiB) under ASLR: offsets are multiples of this


def parse_region_offset(text: str) -> tuple[list, bool]:
    """--region-offset A[,B] -> ([A, B] in bytes, False); 'aslr' -> ([0, 0], True)
    (the offsets are drawn later from the seed: aslr_offsets). Each offset is
    the region's address modulo 2 MiB: a multiple of 4K below 2M."""
    t = (text or "").strip()
    if t.lower() == "aslr":
        return [0, 0], True
    parts = t.split(",")
    if len(parts) > 2:
        raise ParamError(f"--region-offset '{shown(text)}' names more than two regions (A[,B] or aslr)")
    out = []
    for part in parts:
        q = part.strip()
        if q.startswith("-") and re.fullmatch(r"-[ \t]*[0-9]+[ \t]*[A-Za-z]*", q):
            raise ParamError(f"--region-offset {shown(q)} is negative")
        if not re.fullmatch(r"[0-9]+[ \t]*[A-Za-z]*", q):
            raise ParamError(f"--region-offset '{shown(text)}' is not an offset "
                             "(examples: 0, 1472K, 1M,64K, aslr)")
        b = parse_size(q, "--region-offset")
        if b % PAGE:
            raise ParamError(f"--region-offset {shown(q)} is not a multiple of {format_size(PAGE)}")
        if b >= REGION_WINDOW:
            raise ParamError(f"--region-offset {shown(q)} is not below {format_size(REGION_WINDOW)} "
                             "(it is the address modulo 2M)")
        out.append(b)
    return (out + [0])[:2], False


def aslr_offsets(seed: int) -> list:
    """The offsets 'aslr' draws for regions A and B from the seed: each a
    64 KiB multiple below 2 MiB, as posix_memalign(64 KiB) places a region
    under ASLR. splitmix64 of the seed, apart from the workload's own RNG
    stream (docs/placement.md)."""
    mask = 2 ** 64 - 1
    x = (seed ^ 0x5157A1AB) & mask
    out = []
    for _ in range(2):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        out.append((z % (REGION_WINDOW // ASLR_STEP)) * ASLR_STEP)
    return out


def parse_count(text: str, what: str, lo: int = 0, hi: int = MAX_COUNT) -> int:
    """A decimal count in [lo, hi]; the message names the option and the range."""
    _check_number_text(text, what)
    if not re.fullmatch(r"[0-9]+", text or ""):
        if re.fullmatch(r"-[0-9]+", text or ""):
            raise ParamError(f"{what} {text} is negative")
        raise ParamError(f"{what} '{shown(text)}' is not a non-negative integer")
    n = int(text)
    if not lo <= n <= hi:
        raise ParamError(f"{what} {shown(text)} is outside {lo}..{hi}")
    return n


@dataclass
class WorkloadParams:
    workload: str
    swap_bytes: int = 64 * MiB
    mthp_kb: list = field(default_factory=lambda: [64])
    small_folios: bool = False
    aligned_swapin: bool = False
    iterations: int = 100
    seed: int = 1
    rng: str = "default"
    cpu: int = 0
    region_a_bytes: int = 0
    region_b_bytes: int = 0
    device: str = "zram"
    cpus: int = 1
    migrate_every: int = 0
    swap_prio: int = -1            # swapon -p; -1: none (-2, -3, ... in swapon order)
    extra_swap: list = field(default_factory=list)  # [{"bytes", "kind", "prio"}], swapon'ed after
    region_offset: list = field(default_factory=lambda: [0, 0])  # A, B: address modulo 2 MiB
    region_offset_aslr: bool = False  # region_offset was drawn from the seed (--region-offset aslr)

    def core_kwargs(self) -> dict:
        mask = 0
        for kb in self.mthp_kb:
            mask |= 1 << size_to_order(kb)
        return dict(workload=self.workload, swap_bytes=self.swap_bytes, mthp_mask=mask,
                    small_folios=self.small_folios, aligned_swapin=self.aligned_swapin,
                    iterations=self.iterations, seed=self.seed, rng=self.rng, cpu=self.cpu,
                    region_a_bytes=self.region_a_bytes, region_b_bytes=self.region_b_bytes,
                    device=self.device, cpus=self.cpus, migrate_every=self.migrate_every,
                    swap_prio=self.swap_prio,
                    extra_swap=[(x["bytes"], x["kind"], x["prio"]) for x in self.extra_swap],
                    region_a_offset=self.region_offset[0], region_b_offset=self.region_offset[1])

    def as_json(self) -> dict:
        d = asdict(self)
        if self.swap_prio < 0 and not self.extra_swap:
            # one device without a priority: the parameters of every run before
            del d["swap_prio"], d["extra_swap"]
        if not any(self.region_offset) and not self.region_offset_aslr:
            # aligned regions: the parameters of every run before
            del d["region_offset"], d["region_offset_aslr"]
        d["mthp_sizes"] = [f"{kb}K" if kb < 1024 else f"{kb // 1024}M" for kb in self.mthp_kb]
        return d


def check_workload_name(name: str) -> None:
    known = _core.workloads()
    if name not in known:
        raise ParamError(f"unknown workload '{shown(name)}' (known: {', '.join(known)})")


def check_policy_name(name: str) -> None:
    known = [p["name"] for p in _core.policies()]
    if name not in known:
        raise ParamError(f"unknown policy '{shown(name)}' (known: {', '.join(known)})")


DEVICE_KINDS = list(_core.DEVICE_KINDS)
MAX_SWAPFILES = _core.MAX_SWAPFILES
MAX_PRIO = _core.PRIO_MAX


def parse_swap_spec(text: str) -> dict:
    """--add-swap SIZE[:KIND[:PRIO]] -> {"bytes", "kind", "prio"} (prio -1: none)."""
    parts = (text or "").split(":")
    if len(parts) > 3:
        raise ParamError(f"--add-swap '{shown(text)}' is not SIZE[:KIND[:PRIO]] (example: 64M:ssd:5)")
    b = check_swap_size(parse_size(parts[0], "--add-swap size"), parts[0].strip(), "--add-swap size")
    kind = parts[1].strip() if len(parts) > 1 and parts[1].strip() else "zram"
    if kind not in DEVICE_KINDS:
        raise ParamError(f"--add-swap '{shown(text)}': unknown device kind '{shown(kind)}' (known: {', '.join(DEVICE_KINDS)})")
    prio = -1
    if len(parts) > 2:
        prio = parse_count(parts[2].strip(), "--add-swap priority", 0, MAX_PRIO)
    return {"bytes": b, "kind": kind, "prio": prio}


def check_swap_size(b: int, text: str, what: str = "swap size") -> int:
    if b > MAX_SWAP:
        raise ParamError(f"{what} {shown(text)} is larger than the model supports here (16T)")
    if b < CLUSTER_BYTES:
        raise ParamError(f"{what} {shown(text)} is smaller than one cluster ({format_size(CLUSTER_BYTES)})")
    if b % PAGE:
        raise ParamError(f"{what} {shown(text)} is not a multiple of {format_size(PAGE)}")
    return b


def add_workload_options(p: argparse.ArgumentParser, policy: bool = True) -> None:
    """The workload options, the same for every command that runs a workload."""
    if policy:
        p.add_argument("--policy", default="linux-6.18", help="allocator policy (swaplab policies)")
    p.add_argument("--swap-size", default="64M", help="swap device size (default 64M)")
    p.add_argument("--mthp", default="64K", help="enabled mTHP sizes, e.g. 64K or 16K,64K "
                   f"({format_size(MTHP_MIN)}..{format_size(CLUSTER_BYTES)})")
    p.add_argument("-s", "--small-folios", action="store_true", help="also exercise the small-folio region B")
    p.add_argument("-a", "--aligned-swapin", action="store_true", help="thp-swap: swap in 64K-aligned chunks")
    p.add_argument("--iterations", default="100", help="iterations (default 100)")
    p.add_argument("--seed", default="1", help="seed of the workload's random picks (default 1)")
    p.add_argument("--rng", default="default", choices=["default", "glibc"],
                   help="default: seeded xoshiro256**; glibc: glibc rand() from srand(seed)")
    p.add_argument("--cpu", default="0", help="CPU the task runs on (default 0)")
    p.add_argument("--region-a-size", default=None, help="size of region A (default 60M)")
    p.add_argument("--region-b-size", default=None, help="size of region B (default 1M v1, 4M thp-swap)")
    p.add_argument("--region-offset", default="0", metavar="A[,B]|aslr",
                   help="address of region A (and B) modulo 2M, a multiple of 4K, e.g. 1472K or 1M,64K "
                        "(default 0: 2M-aligned); aslr: each a 64K multiple drawn from the seed")
    p.add_argument("--cpus", default="1", help="CPUs the task may run on, from --cpu (default 1)")
    p.add_argument("--migrate-every", default="0",
                   help="model only: move the task to the next CPU every N swap allocations (default 0: pinned)")
    p.add_argument("--device", default="zram", choices=DEVICE_KINDS,
                   help="swap device kind the model uses (default zram; the kernel harness runs zram only)")
    p.add_argument("--swap-prio", default=None,
                   help=f"the device's swap priority, 0..{MAX_PRIO} (default: none, as swapon without -p)")
    p.add_argument("--add-swap", action="append", default=[], metavar="SIZE[:KIND[:PRIO]]",
                   help="one more swap device, swapon'ed after the first (repeatable, "
                        f"{MAX_SWAPFILES} devices in all; example: 64M:ssd:5; the kernel harness: zram only)")


def params_from_args(workload: str, a: argparse.Namespace) -> WorkloadParams:
    check_workload_name(workload)
    wp = WorkloadParams(workload=workload)
    wp.swap_bytes = check_swap_size(parse_size(a.swap_size, "--swap-size"), a.swap_size)
    if getattr(a, "swap_prio", None) is not None:
        wp.swap_prio = parse_count(a.swap_prio, "--swap-prio", 0, MAX_PRIO)
    extra = getattr(a, "add_swap", None) or []
    if len(extra) > MAX_SWAPFILES - 1:
        raise ParamError(f"--add-swap given {len(extra)} times: the model takes {MAX_SWAPFILES} swap devices in all")
    wp.extra_swap = [parse_swap_spec(x) for x in extra]
    wp.mthp_kb = parse_mthp(a.mthp)
    wp.small_folios = bool(a.small_folios)
    wp.aligned_swapin = bool(a.aligned_swapin)
    wp.iterations = parse_count(a.iterations, "--iterations", 1, MAX_ITERATIONS)
    wp.seed = parse_count(a.seed, "--seed")
    wp.rng = a.rng
    wp.region_offset, wp.region_offset_aslr = parse_region_offset(getattr(a, "region_offset", "0"))
    if wp.region_offset_aslr:
        wp.region_offset = aslr_offsets(wp.seed)
    wp.device = a.device
    wp.cpu = parse_count(a.cpu, "--cpu", 0, _core.MAX_CPUS - 1)
    wp.cpus = parse_count(a.cpus, "--cpus", 1, _core.MAX_CPUS - wp.cpu)
    wp.migrate_every = parse_count(a.migrate_every, "--migrate-every", 0, 2 ** 32 - 1)
    for opt, attr, val in (("--region-a-size", "region_a_bytes", a.region_a_size),
                           ("--region-b-size", "region_b_bytes", a.region_b_size)):
        if val is None:
            continue
        b = parse_size(val, opt)
        if b == 0:
            raise ParamError(f"{opt} {shown(val)}: a region must not be empty")
        if b > MAX_REGION:
            raise ParamError(f"{opt} {shown(val)} is larger than the model supports here (64G)")
        setattr(wp, attr, b)
    if wp.region_a_bytes and wp.region_a_bytes % (64 * KiB):
        raise ParamError(f"--region-a-size {shown(a.region_a_size)} is not a multiple of 64K")
    if wp.region_b_bytes and wp.region_b_bytes % PAGE:
        raise ParamError(f"--region-b-size {shown(a.region_b_size)} is not a multiple of {format_size(PAGE)}")
    policy = a.policy if hasattr(a, "policy") else "linux-6.18"
    check_policy_name(policy)
    try:
        _core.validate(policy=policy, **wp.core_kwargs())
    except ValueError as e:
        raise ParamError(str(e)) from None
    return wp


# The workload options as keywords (the Python API and sweep specs): the
# CLI's option names with '_' for '-', each with its CLI default.
OPTION_DEFAULTS = {
    "swap_size": "64M", "mthp": "64K", "small_folios": False, "aligned_swapin": False,
    "iterations": 100, "seed": 1, "rng": "default", "cpu": 0, "region_a_size": None,
    "region_b_size": None, "cpus": 1, "migrate_every": 0, "device": "zram", "swap_prio": None,
    "add_swap": (), "region_offset": "0",
}


def params_from_options(workload: str, policy: str = "linux-6.18", **opts) -> WorkloadParams:
    """WorkloadParams from keywords, through the CLI's own checks: the same
    values are accepted and the same one-line ParamError names a bad one.
    Sizes may be given as text ('64M') or bytes (int), counts as int or text."""
    unknown = sorted(set(opts) - set(OPTION_DEFAULTS))
    if unknown:
        raise ParamError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                         f"(known: {', '.join(OPTION_DEFAULTS)})")
    ns = argparse.Namespace(policy=policy)
    for k, default in OPTION_DEFAULTS.items():
        v = opts.get(k, default)
        if k == "mthp" and isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        if k in ("small_folios", "aligned_swapin"):
            if not isinstance(v, bool):
                raise ParamError(f"{k} must be true or false, not {v!r}")
        elif k == "add_swap":
            v = [str(x) for x in v]
        elif k in ("rng", "device"):
            v = str(v)
        elif v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, str)):
                raise ParamError(f"{k} {v!r} is neither a number nor text")
            v = str(v)
        setattr(ns, k, v)
    if ns.rng not in ("default", "glibc"):
        raise ParamError(f"rng '{ns.rng}' is not one of default, glibc")
    if ns.device not in DEVICE_KINDS:
        raise ParamError(f"device '{ns.device}' is not one of {', '.join(DEVICE_KINDS)}")
    return params_from_args(workload, ns)


def split_list(values, what: str, noun: str = "item") -> list:
    """The options' one list syntax: a repeatable option that also takes
    comma lists, 'a,b' or ['a,b', 'c'] -> ['a', 'b', 'c']. An empty text is
    refused ("WHAT '' is empty"), and so is an empty item ("has an empty
    NOUN")."""
    out = []
    for text in ([values] if values is None or isinstance(values, str) else values):
        items = [t.strip() for t in (text or "").split(",")]
        if not any(items):
            raise ParamError(f"{what} '{shown(text or '')}' is empty")
        if not all(items):
            raise ParamError(f"{what} '{shown(text)}' has an empty {noun}")
        out += items
    return out


def parse_policy_list(values, opt: str = "--policy") -> list:
    """A repeatable option that also takes comma lists: ['a,b', 'c'] ->
    ['a', 'b', 'c'], each a registered policy, none twice."""
    names = split_list(values, opt, "name")
    seen = set()
    for n in names:
        check_policy_name(n)
        if n in seen:
            raise ParamError(f"{opt} names {n} twice")
        seen.add(n)
    return names
