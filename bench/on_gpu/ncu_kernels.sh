#!/usr/bin/env bash
# Each kernel of one execution of kit artifacts under Nsight Compute, with
# the counters that say why a memory-bound kernel misses its bandwidth:
# duration, DRAM bytes read and written (against what the kernel must
# move), achieved DRAM throughput and occupancy. Prints one CSV block per
# module; run on a lent GPU whose runtime lets ncu read the counters.
#
#   bench/on_gpu/ncu_kernels.sh KIT_ROOT RAW_DIR MODULE...
#
# RAW_DIR keeps ncu's CSV per module (MODULE.ncu.csv) for a later look.
set -uo pipefail
kit=$1; raw=$2; shift 2
mkdir -p "$raw"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "ncu not found" >&2; exit 1; }
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__grid_size,launch__block_size,launch__registers_per_thread
for m in "$@"; do
  echo "== $m"
  leaves=$(python3 -c "import json; print(next(e['leaves'] for e in json.load(open('$kit/manifest.json')) if e['name']=='$m'))")
  skip=(); for ((i = 0; i < leaves; ++i)); do skip+=(--output=); done
  timeout 120 "$ncu" --clock-control none --csv --metrics "$metrics" \
    "$kit/bin/bef-run" "$kit/bef/$m.bef" --device=cuda "${skip[@]}" 2>&1 | tee "$raw/$m.ncu.csv" |
    python3 -c '
import csv, sys
rows = [l for l in sys.stdin if l.startswith("\"")]
table = {}
for r in csv.DictReader(rows):
    key = (r["ID"], r["Kernel Name"])
    table.setdefault(key, {})[r["Metric Name"]] = (r["Metric Value"], r["Metric Unit"])
for (i, name), m in table.items():
    get = lambda k: m.get(k, ("-", ""))[0]
    print("%-34s %9s %s  read %s %s  write %s %s  dram %s%%  warps %s%%  grid %s block %s regs %s" % (
        name[:34], get("gpu__time_duration.sum"), m.get("gpu__time_duration.sum", ("", ""))[1],
        get("dram__bytes_read.sum"), m.get("dram__bytes_read.sum", ("", ""))[1],
        get("dram__bytes_write.sum"), m.get("dram__bytes_write.sum", ("", ""))[1],
        get("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
        get("sm__warps_active.avg.pct_of_peak_sustained_active"), get("launch__grid_size"),
        get("launch__block_size"), get("launch__registers_per_thread")))
'
done
