"""Fragmentation metrics (docs/metrics.md) of a layout: the slots a run's
pages occupy, on a device of a known size.

The model computes them per iteration from its own slot map (core/src/
metrics.c, `run(metrics=True)`); a kernel run has the pages' slots only
(pagemap), which on the harness's own device are all the used slots, and
this module turns them into a slot map for the same C function.
"""
from __future__ import annotations

import struct

from . import _core

NOT_SWAPPED = 0xFFFFFFFFFFFFFFFF
TYPE_SHIFT = 48


def layout_slot_map(layout: bytes, max_slots: int) -> bytearray:
    """One byte per slot of device 0: 1 used (the header slot 0 and every
    slot a page of the layout holds), 0 free."""
    used = bytearray(max_slots)
    if max_slots:
        used[0] = 1
    n = len(layout) // 8
    for e in struct.unpack(f"<{n}Q", layout):
        if e == NOT_SWAPPED or e >> TYPE_SHIFT:
            continue
        if e < max_slots:
            used[e] = 1
    return used


def layout_frag(layout: bytes, max_slots: int) -> dict:
    """The metrics of a layout's device 0 (no cluster states: the kernel's
    lists are not visible from user space)."""
    return _core.frag_metrics(bytes(layout_slot_map(layout, max_slots)))
