#!/bin/bash
# F23 (docs/kernel-findings.md): the two runs of docs/experiments/pmd-fault-reuse.c
# whose outputs are in this folder. Run from the repository root, as root (for
# pagemap pfns and /proc/kpageflags); changes no knob.
set -eu
cc -O2 -std=c11 -Wall -Wextra -Werror -o /tmp/pmd-fault-reuse docs/experiments/pmd-fault-reuse.c
cd docs/data/f23
for cfg in "n32 -n 32 -r 5 -d 0,0.5,1,2,3,5,10,20" "n256 -n 256 -r 3 -d 0,1,2,3,5,10,20"; do
  set -- $cfg; name=$1; shift
  { date -u +%FT%TZ; uptime; cat /proc/buddyinfo; } > $name-before.txt
  rc=0; taskset -c 0 /tmp/pmd-fault-reuse "$@" -o $name.json 2> $name.txt || rc=$?
  echo "rc=$rc" >> $name.txt
  { date -u +%FT%TZ; uptime; cat /proc/buddyinfo; } > $name-after.txt
done
