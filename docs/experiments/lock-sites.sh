#!/bin/sh
# Where the device lock is taken in a bench-threads churn (docs/concurrency.md,
# "Mixed orders: where the device-lock rounds come from"). Copies the
# committed tree to a scratch directory, adds two counters there (a
# histogram of the lines that take si->lock, and of move_cluster()'s
# from-flag -> to-list), builds the core library and runs the churn of
# bench_threads.c through a small driver. Nothing here is built into swaplab.
# Usage, from the repository root:
#   sh docs/experiments/lock-sites.sh POLICY THREADS FILL ORDERS PAIRS
#   e.g. sh docs/experiments/lock-sites.sh proposal-holes-first 1 0.5 024 300000
# ORDERS: one digit per entry of the mix, each equally likely. The device is
# 4 GiB (1 M slots), the seed 1. Prints per free+alloc pair: the device-lock
# acquisitions of the run (sl_lockstat), the hand-offs, and each counter.
# The move histogram's flags: 0 isolated, 1 free, 2 nonfull, 3 frag, 4 full;
# lists: 0 free, 1+o nonfull[o], 11+o frag[o], 21 full. The line histogram
# counts fill and run together; lockrework_body.h's move_cluster() and
# isolate_lock_cluster() take the lock at the lines it prints most.
set -e
[ $# -eq 5 ] || { echo "usage: $0 POLICY THREADS FILL ORDERS PAIRS" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive HEAD | tar -x -C "$tmp"
python3 - "$tmp" <<'EOF'
import sys
root = sys.argv[1] + "/core/include/swaplab/"
edits = [
    ("locks.h", "#define sl_dev_lock_m(conc, d) SL_LOCK_M(conc, d, dev, SL_LK_DEVICE)",
     "extern _Atomic unsigned long ls_line[4096];\n"
     "#define sl_dev_lock_m(conc, d) do { atomic_fetch_add_explicit(&ls_line[__LINE__ & 4095], 1, "
     "memory_order_relaxed); SL_LOCK_M(conc, d, dev, SL_LK_DEVICE); } while (0)"),
    ("lockrework_body.h",
     "\tsl_assert_ci_locked(d, c);\n\tsl_dev_lock_m(conc, d);\n\tsli_move_cluster(d, c, list, flag);",
     "\tsl_assert_ci_locked(d, c);\n\textern _Atomic unsigned long ls_move[16][64];\n"
     "\tatomic_fetch_add_explicit(&ls_move[d->ci[c].flags & 15][list & 63], 1, memory_order_relaxed);\n"
     "\tsl_dev_lock_m(conc, d);\n\tsli_move_cluster(d, c, list, flag);"),
]
for name, old, new in edits:
    s = open(root + name).read()
    assert old in s, name
    open(root + name, "w").write(s.replace(old, new))
EOF
cat > "$tmp/ls.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include "swaplab/swaplab.h"
_Atomic unsigned long ls_line[4096];
_Atomic unsigned long ls_move[16][64];
int main(int argc, char **argv)
{
	sl_bench_threads_params p = { 0 };
	sl_bench_threads_result r;
	char msg[256];

	p.pol = sl_policy_find(argv[1]);
	if (!p.pol)
		return fprintf(stderr, "unknown policy %s\n", argv[1]), 2;
	p.slots = 1048576;
	p.threads = atoi(argv[2]);
	p.fill = atof(argv[3]);
	for (const char *q = argv[4]; *q && p.norders < SL_NR_ORDERS; q++)
		p.orders[p.norders++] = *q - '0';
	p.ops = strtoull(argv[5], 0, 0);
	p.seed = 1;
	p.concurrent = 1;
	if (sl_bench_threads(&p, &r, msg, sizeof msg))
		return fprintf(stderr, "%s\n", msg), 1;
	double n = (double)p.ops * p.threads;
	printf("%s threads %d fill %s mix %s: device lock %.4f a pair, hand-offs %.4f\n", argv[1],
	       p.threads, argv[3], argv[4], r.locks[SL_LK_DEVICE].acquisitions / n, r.handoffs / n);
	for (int i = 0; i < 4096; i++)
		if (ls_line[i])
			printf("  lock at line %d: %.4f\n", i, ls_line[i] / n);
	for (int f = 0; f < 16; f++)
		for (int l = 0; l < 64; l++)
			if (ls_move[f][l])
				printf("  move flag %d -> list %d: %.4f\n", f, l, ls_move[f][l] / n);
	return 0;
}
EOF
cmake -S "$tmp" -B "$tmp/b" -DSWAPLAB_PYTHON=OFF -DSWAPLAB_TESTS=OFF -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$tmp/b" -j2 > /dev/null
cc -O2 -std=c11 -D_GNU_SOURCE -I"$tmp/core/include" "$tmp/ls.c" "$tmp/b/libswaplab_core.a" -lpthread -lm \
    -o "$tmp/ls"
"$tmp/ls" "$@"
