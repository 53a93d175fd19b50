# msgen: resolve the scheduler's DNS name, then run the container's command.
#
# Run as: /bin/sh -c "<this text>" msgen-resolve COMMAND [ARG]...
# MindSpore reads MS_SCHED_HOST as an IP address literal only (SocketOperation::GetSockAddr),
# so with --scheduler-address dns this replaces the name in MS_SCHED_HOST by its address and
# execs COMMAND. The name resolves only once the Scheduler pod has an address, so it retries
# for at most MSGEN_RESOLVE_TIMEOUT seconds (default 600), then exits 1 saying so.
# Lookup: getent, else Python's resolver (MindSpore images have Python).
# (Kubernetes expands command text: keep this free of dollar-parenthesis and double dollars.)
set -u
me="msgen-resolve"
say() { printf '%s: %s\n' "$me" "$*" >&2; }
if [ "$#" -eq 0 ]; then say "no command to run"; exit 2; fi
name=${MS_SCHED_HOST:-}
if [ -z "$name" ]; then say "MS_SCHED_HOST is empty"; exit 2; fi
limit=${MSGEN_RESOLVE_TIMEOUT:-600}
case "$limit" in ''|*[!0-9]*) say "MSGEN_RESOLVE_TIMEOUT must be a whole number, got '$limit'"; exit 2;; esac

if command -v getent >/dev/null 2>&1; then
  tool=getent
else
  tool=""
  for python in python3 python; do
    if command -v "$python" >/dev/null 2>&1; then tool=$python; break; fi
  done
fi
if [ -z "$tool" ]; then say "the image has neither getent nor python to resolve $name"; exit 2; fi

lookup() {
  if [ "$tool" = getent ]; then
    getent hosts "$1" 2>/dev/null | { read -r address rest && printf '%s\n' "$address"; }
  else
    "$tool" -c 'import socket, sys; print(socket.getaddrinfo(sys.argv[1], None)[0][4][0])' \
      "$1" 2>/dev/null
  fi
}

started=`date +%s`
while :; do
  address=`lookup "$name"`
  if [ -n "$address" ]; then break; fi
  now=`date +%s`
  elapsed=`expr "$now" - "$started"`
  if [ "$elapsed" -ge "$limit" ]; then
    say "the scheduler's name $name did not resolve within ${limit}s: is the Scheduler pod" \
      "running, and its headless Service there?"
    exit 1
  fi
  sleep 1
done
say "MS_SCHED_HOST $name is $address"
MS_SCHED_HOST=$address
export MS_SCHED_HOST
exec "$@"
