#!/usr/bin/env bash
# Times kit artifacts under several runtime settings on one GPU, in one
# table: bef-run's median latency per execution (inputs already on the
# device), after warm-up runs. For A/B checks of runtime changes on a lent
# GPU, where device time is short.
#
#   bench/on_gpu/variants.sh KIT_ROOT 'label|ENV=V ...|bef-run flags' ... -- MODULE...
#
# KIT_ROOT is an unpacked kit (bench/on_gpu/on_gpu.py run leaves one under
# its --work folder); each variant is a label, environment assignments and
# extra bef-run flags separated by '|'; MODULE names kit/bef/MODULE.bef
# (a module whose input_output_alias must alias gets --donate). The
# loader path must already find the kit's libraries and the CUDA libraries.
set -uo pipefail
kit=$1; shift
variants=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do variants+=("$1"); shift; done
shift || true
iterations=${KILN_VARIANTS_ITERATIONS:-200}
printf '%-40s' module
for v in "${variants[@]}"; do printf ' %16s' "${v%%|*}"; done
printf '\n'
for m in "$@"; do
  printf '%-40s' "${m:0:40}"
  donate=$(python3 -c "import json,sys; print(next((e.get('must_alias') for e in json.load(open('$kit/manifest.json')) if e['name']=='$m'), False))")
  for v in "${variants[@]}"; do
    IFS='|' read -r label envs flags <<<"$v"
    extra=()
    [ "$donate" = True ] && extra+=(--donate)
    out=$(env $envs timeout 120 "$kit/bin/bef-run" "$kit/bef/$m.bef" --device=cuda --iterations="$iterations" \
          --warmup=10 "${extra[@]}" $flags 2>&1)
    median=$(sed -n 's/.*median \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
    if [ -z "$median" ]; then median="error"; echo "$m [$label]: $(grep -m1 -i error <<<"$out")" >&2; fi
    printf ' %16s' "$median"
  done
  printf '\n'
done
