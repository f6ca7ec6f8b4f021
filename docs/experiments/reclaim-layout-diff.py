"""Slot for slot: a kernel reclaim run's layouts against the model's
(kernel-findings F26).

    swaplab kernel run usemem ... --phase-layouts --json K.json --layout-dump K.bin
    swaplab run usemem ...                        --json M.json --layout-dump M.bin
    python docs/experiments/reclaim-layout-diff.py K.json K.bin M.json M.bin

Both dumps hold the same records (every live process's layout at each phase
marker, each process's at its exit; docs/reclaim.md "Results"). Prints, per
record, the pages swapped out on each side, how many pages sit on another
slot (or are out on one side only) and the first of them, then one JSON
line with the same per record.
"""
import array
import json
import sys

NOT_OUT = 2 ** 64 - 1


def records(res: dict, raw: bytes) -> list:
    out = []
    for r in res["layouts"]:
        a = array.array("Q")
        a.frombytes(raw[8 * r["first"]:8 * (r["first"] + r["npages"])])
        if sys.byteorder != "little":
            a.byteswap()
        out.append(((r["label"], r["phase"], r["proc"]), a))
    return out


def diff(kres: dict, kraw: bytes, mres: dict, mraw: bytes) -> list:
    k, m = records(kres, kraw), records(mres, mraw)
    if [key for key, _ in k] != [key for key, _ in m]:
        raise SystemExit("the two runs recorded different layouts: "
                         f"{[key for key, _ in k]} against {[key for key, _ in m]}")
    rows = []
    for (key, a), (_, b) in zip(k, m):
        d = [i for i in range(len(a)) if a[i] != b[i]]
        rows.append({"record": list(key), "pages": len(a), "out_kernel": sum(v != NOT_OUT for v in a),
                     "out_model": sum(v != NOT_OUT for v in b), "differ": len(d),
                     "first": None if not d else {"page": d[0], "kernel": a[d[0]], "model": b[d[0]]}})
    return rows


def main(argv: list) -> int:
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: reclaim-layout-diff.py K.json K.bin M.json M.bin", file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        kres = json.load(f)
    with open(argv[2]) as f:
        mres = json.load(f)
    with open(argv[1], "rb") as f:
        kraw = f.read()
    with open(argv[3], "rb") as f:
        mraw = f.read()
    rows = diff(kres, kraw, mres, mraw)
    for r in rows:
        first = "" if not r["first"] else \
            f", first page {r['first']['page']}: kernel {r['first']['kernel']:#x} model {r['first']['model']:#x}"
        print(f"{' '.join(str(x) for x in r['record']):>14}: out {r['out_kernel']} / {r['out_model']}, "
              f"{r['differ']} of {r['pages']} pages differ{first}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
