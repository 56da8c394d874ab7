#!/usr/bin/env bash
# Starts P local processes of an SPMD run on 127.0.0.1 for a quick try (and
# for the multi-process tests): process i runs
#   BEF_RUN MODULE.bef ARGS... --process_id=i --num_processes=P
#           --coordinator=127.0.0.1:PORT
# with PORT a free port (or --coordinator=file:DIR with --file_store, DIR a
# fresh temporary directory). Each process's output goes to stdout/stderr
# with a "[i] " prefix. When a process fails the others are killed; the
# exit status is the first failure's (128 + signal for a killed process),
# else 0. KILN_LAUNCH_TIMEOUT (seconds) bounds the whole run.
#
#   scripts/launch_local.sh [--file_store] P build/tools/bef-run/bef-run MODULE.bef [bef-run flags...]
set -uo pipefail

file_store=0
if [ "${1:-}" = "--file_store" ]; then file_store=1; shift; fi
if [ $# -lt 3 ]; then
  echo "usage: $0 [--file_store] P BEF_RUN MODULE.bef [bef-run flags...]" >&2
  exit 2
fi
P=$1 BEF_RUN=$2
shift 2
case $P in '' | *[!0-9]* | 0) echo "$0: P must be a positive number, not '$P'" >&2; exit 2 ;; esac

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 20000))
}

store_dir=""
if [ $file_store = 1 ]; then
  store_dir=$(mktemp -d "${TMPDIR:-/tmp}/kiln_store.XXXXXX")
  coordinator="file:$store_dir"
else
  coordinator="127.0.0.1:$(free_port)"
fi

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
  [ -n "$store_dir" ] && rm -rf "$store_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((i = 0; i < P; i++)); do
  # Each process's lines carry its number; the pipe's reader ends with it.
  "$BEF_RUN" "$@" --process_id=$i --num_processes="$P" --coordinator="$coordinator" \
    > >(sed -u "s/^/[$i] /") 2> >(sed -u "s/^/[$i] /" >&2) &
  pids+=($!)
done

deadline=$((SECONDS + ${KILN_LAUNCH_TIMEOUT:-3600}))
status=0
remaining=$P
declare -A done_pid
while [ $remaining -gt 0 ]; do
  for i in "${!pids[@]}"; do
    pid=${pids[$i]}
    [ -n "${done_pid[$pid]:-}" ] && continue
    kill -0 "$pid" 2>/dev/null && continue
    wait "$pid"
    rc=$?
    done_pid[$pid]=1
    remaining=$((remaining - 1))
    if [ $rc -ne 0 ] && [ $status -eq 0 ]; then
      status=$rc
      echo "launch_local: process $i exited with status $rc; stopping the others" >&2
      for other in "${pids[@]}"; do [ -z "${done_pid[$other]:-}" ] && kill -TERM "$other" 2>/dev/null; done
    fi
  done
  if [ $SECONDS -ge $deadline ]; then
    echo "launch_local: the run took longer than ${KILN_LAUNCH_TIMEOUT:-3600} s; killing it" >&2
    exit 124
  fi
  [ $remaining -gt 0 ] && sleep 0.05
done
exit $status
