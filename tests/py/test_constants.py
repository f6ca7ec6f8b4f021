"""The core's constants as the binding exports them (python/swaplab/_core.c,
from the C headers): pinned to the kernel's numbers, tied to what the core
accepts, and the only declaration the Python modules use."""
import pytest

from swaplab import _core, bench, params


def test_exported_values_are_the_kernels():
    assert _core.PAGE_SIZE == 4096                   # x86-64 base page, one swap slot
    assert _core.CLUSTER_SLOTS == 512                # SWAPFILE_CLUSTER = HPAGE_PMD_NR
    assert _core.CLUSTER_BYTES == 2 << 20
    assert _core.NR_ORDERS == 10                     # SWAP_NR_ORDERS: orders 0..9
    assert _core.PMD_ORDER == 9
    assert _core.MTHP_MIN_ORDER == 2                 # 16 KiB, the smallest anonymous mTHP
    assert _core.MAX_SWAPFILES == 8
    assert _core.PRIO_MAX == 32767                   # swapon -p: SHRT_MAX
    assert _core.MAX_CPUS == 256
    assert _core.TYPE_SHIFT == 48
    assert _core.BT_RECENT == 4096
    assert _core.DEVICE_KINDS == ("zram", "ssd", "ssd-discard", "hdd", "file")


def test_python_modules_take_the_cores_values():
    assert params.PAGE == _core.PAGE_SIZE
    assert params.CLUSTER_BYTES == _core.CLUSTER_BYTES
    assert params.MTHP_MIN == 16 << 10
    assert params.DEVICE_KINDS == list(_core.DEVICE_KINDS)
    assert params.MAX_SWAPFILES == _core.MAX_SWAPFILES
    assert params.MAX_PRIO == _core.PRIO_MAX
    assert bench.PAGE == _core.PAGE_SIZE


def kw(**over):
    return dict(params.WorkloadParams(workload="thp-swap-v1").core_kwargs(), **over)


@pytest.mark.parametrize("kind", _core.DEVICE_KINDS)
def test_every_exported_kind_is_one_the_core_accepts(kind):
    _core.validate(policy="linux-6.18", **kw(device=kind))


def test_limits_are_the_cores_limits():
    _core.validate(policy="linux-6.18", **kw(swap_prio=_core.PRIO_MAX))
    with pytest.raises(ValueError, match=f"swap priority {_core.PRIO_MAX + 1} is outside 0..{_core.PRIO_MAX}"):
        _core.validate(policy="linux-6.18", **kw(swap_prio=_core.PRIO_MAX + 1))
    dev = (64 << 20, "zram", -1)
    _core.validate(policy="linux-6.18", **kw(extra_swap=[dev] * (_core.MAX_SWAPFILES - 1)))
    with pytest.raises(ValueError, match=f"at most {_core.MAX_SWAPFILES} swap devices"):
        _core.validate(policy="linux-6.18", **kw(extra_swap=[dev] * _core.MAX_SWAPFILES))
    _core.validate(policy="linux-6.18", **kw(cpu=_core.MAX_CPUS - 1))
    with pytest.raises(ValueError, match=f"cpu must be in 0..{_core.MAX_CPUS - 1}"):
        _core.validate(policy="linux-6.18", **kw(cpu=_core.MAX_CPUS))
    _core.validate(policy="linux-6.18", **kw(swap_bytes=_core.CLUSTER_BYTES))
    with pytest.raises(ValueError, match="smaller than one cluster"):
        _core.validate(policy="linux-6.18", **kw(swap_bytes=_core.CLUSTER_BYTES - _core.PAGE_SIZE))
    top = 1 << _core.PMD_ORDER
    _core.validate(policy="linux-6.18", **kw(mthp_mask=top | (1 << _core.MTHP_MIN_ORDER)))
    for bad in (1 << (_core.MTHP_MIN_ORDER - 1), top << 1):
        with pytest.raises(ValueError, match="mTHP sizes must be"):
            _core.validate(policy="linux-6.18", **kw(mthp_mask=bad))
