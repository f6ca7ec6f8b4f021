#!/bin/bash
# Usage: with-zram-swap.sh "SIZES_KB" CMD...
# Experiments only (the harness is `swaplab kernel run`): adds a 64 MiB zram
# swap, sets the given mTHP sizes to always and the others to never, runs CMD
# pinned to CPU 0, and restores everything on exit.
set -u
T=/sys/kernel/mm/transparent_hugepage
kb=$1; shift
declare -A old
for f in $T/hugepages-*kB/enabled; do old[$f]=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $f); done
id=$(cat /sys/class/zram-control/hot_add)
cleanup() {
  swapoff /dev/zram$id 2>/dev/null; echo 1 > /sys/block/zram$id/reset; echo $id > /sys/class/zram-control/hot_remove
  for f in "${!old[@]}"; do echo ${old[$f]} > $f; done
}
trap cleanup EXIT
echo 64M > /sys/block/zram$id/disksize; mkswap /dev/zram$id >/dev/null; swapon /dev/zram$id
for f in $T/hugepages-*kB/enabled; do echo never > $f; done
for k in $kb; do echo always > $T/hugepages-${k}kB/enabled; done
taskset -c 0 "$@"
