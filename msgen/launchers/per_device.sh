#!/bin/sh
# msgen per-device launcher: starts one copy of the container's command per device.
#
# Usage: sh per-device.sh COMMAND [ARG]...
# Reads: MS_LOCAL_WORKER (copies to start), MS_NODE_RANK (this pod's index),
#   MSGEN_SET_DEVICE_ID=1 (Ascend: DEVICE_ID=i for copy i),
#   RANK_TABLE_FILE with MSGEN_RANK_TABLE_TIMEOUT (seconds to wait for a completed rank table),
#   MSGEN_STOP_GRACE (seconds copies get to stop before SIGKILL, default 20).
# Copy i runs with MS_NODE_ID = RANK_ID = MS_NODE_RANK * MS_LOCAL_WORKER + i, and its output
# lines are prefixed "[rank R] ". When a copy fails the others are stopped and the launcher
# exits with the failed copy's status; SIGTERM, SIGHUP, SIGINT and SIGQUIT reach every copy.
set -u
me="msgen-launcher"
say() { printf '%s: %s\n' "$me" "$*" >&2; }
number() { case "$2" in ''|*[!0-9]*) say "$1 must be a whole number, got '$2'"; exit 2;; esac; }

if [ "$#" -eq 0 ]; then say "no command to run"; exit 2; fi
local_workers=${MS_LOCAL_WORKER:-}
node_rank=${MS_NODE_RANK:-}
grace=${MSGEN_STOP_GRACE:-20}
number MS_LOCAL_WORKER "$local_workers"
number MS_NODE_RANK "$node_rank"
number MSGEN_STOP_GRACE "$grace"
if [ "$local_workers" -lt 1 ]; then say "MS_LOCAL_WORKER must be at least 1"; exit 2; fi

if [ -n "${RANK_TABLE_FILE:-}" ] && [ -n "${MSGEN_RANK_TABLE_TIMEOUT:-}" ]; then
  number MSGEN_RANK_TABLE_TIMEOUT "$MSGEN_RANK_TABLE_TIMEOUT"
  waited=0
  say "waiting for a completed rank table in $RANK_TABLE_FILE"
  until grep -Eq '"status"[[:space:]]*:[[:space:]]*"completed"' "$RANK_TABLE_FILE" 2>/dev/null; do
    if [ "$waited" -ge "$MSGEN_RANK_TABLE_TIMEOUT" ]; then
      say "the rank table $RANK_TABLE_FILE was not completed within ${MSGEN_RANK_TABLE_TIMEOUT}s;" \
        "the cluster's Ascend components (hccl-controller or ascend-operator) fill it"
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
fi

state=$(mktemp -d "${TMPDIR:-/tmp}/msgen-launcher.XXXXXX") || exit 2
stop_signal=""
signalled=""
readers=""

# Copy $1: its own environment, output through a prefixing reader, status into $state.
start_copy() {
  i=$1
  shift
  rank=$((node_rank * local_workers + i))
  mkfifo "$state/out.$i" || exit 2
  (
    while IFS= read -r line || [ -n "$line" ]; do printf '[rank %s] %s\n' "$rank" "$line"; done
    : >"$state/read.$i"
  ) <"$state/out.$i" &
  readers="$readers $!"
  (
    # Stay alive through signals meant for the copy, to record its real exit status.
    # (The copy itself gets the default actions: a shell resets trapped signals on exec.)
    trap ':' TERM HUP INT QUIT
    export MS_NODE_ID="$rank" RANK_ID="$rank"
    if [ "${MSGEN_SET_DEVICE_ID:-}" = 1 ]; then export DEVICE_ID="$i"; fi
    "$@" >"$state/out.$i" 2>&1 &
    pid=$!
    echo "$pid" >"$state/pid.$i.new" && mv "$state/pid.$i.new" "$state/pid.$i"
    while :; do
      wait "$pid"
      status=$?
      kill -0 "$pid" 2>/dev/null || break
    done
    echo "$status" >"$state/status.$i.new" && mv "$state/status.$i.new" "$state/status.$i"
  ) &
}

# Send $stop_signal to every copy that has started and not been sent it yet.
signal_copies() {
  # (Its own counter: traps run it in the middle of the main loop.)
  k=0
  while [ "$k" -lt "$local_workers" ]; do
    case " $signalled " in
      *" $k "*) ;;
      *) if [ -f "$state/pid.$k" ] && [ ! -f "$state/status.$k" ]; then
           kill "-$stop_signal" "$(cat "$state/pid.$k")" 2>/dev/null
           signalled="$signalled $k"
         fi ;;
    esac
    k=$((k + 1))
  done
}

stop() {
  if [ -z "$stop_signal" ]; then stop_signal=$1; stop_since=$(date +%s); fi
  signal_copies
}
trap 'stop TERM' TERM
trap 'stop HUP' HUP
# POSIX shells start background commands with SIGINT and SIGQUIT ignored: send TERM instead.
trap 'stop TERM' INT QUIT

i=0
while [ "$i" -lt "$local_workers" ]; do
  start_copy "$i" "$@"
  i=$((i + 1))
done

failed=""
result=0
while :; do
  running=0
  i=0
  while [ "$i" -lt "$local_workers" ]; do
    if [ -f "$state/status.$i" ]; then
      status=$(cat "$state/status.$i")
      if [ "$status" -ne 0 ] && [ -z "$failed" ]; then
        failed=$i
        result=$status
        if [ -z "$stop_signal" ]; then
          say "rank $((node_rank * local_workers + i)) exited with status $status; stopping the others"
          stop TERM
        fi
      fi
    else
      running=$((running + 1))
    fi
    i=$((i + 1))
  done
  [ "$running" -eq 0 ] && break
  if [ -n "$stop_signal" ]; then
    signal_copies
    if [ "$(($(date +%s) - stop_since))" -ge "$grace" ] && [ "$stop_signal" != KILL ]; then
      say "copies still running ${grace}s after SIGTERM; sending SIGKILL"
      stop_signal=KILL
      signalled=""
      signal_copies
    fi
  fi
  # (A fractional sleep where the system has one; POSIX only promises whole seconds.)
  { sleep 0.2 2>/dev/null || sleep 1; } &
  wait $! 2>/dev/null
done
# Let the readers print what the copies wrote last; a process a copy left behind may hold its
# output open, so the wait is bounded.
waited=0
while [ "$waited" -lt 20 ] && [ "$(ls "$state" | grep -c '^read\.')" -lt "$local_workers" ]; do
  sleep 0.1 2>/dev/null || sleep 1
  waited=$((waited + 1))
done
kill $readers 2>/dev/null
rm -rf "$state"
exit "$result"
