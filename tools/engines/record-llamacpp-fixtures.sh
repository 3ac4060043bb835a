#!/usr/bin/env bash
# Records what Debian's real llama-server answers to the bridge (GET /props, /v1/models, /slots,
# /metrics) in the states the bridge must read, as the fixtures of the llama.cpp adapter's tests:
# test/fixtures/engines/llamacpp/<version>/. Needs the engine root of `npm run engines:setup`.
#
#   tools/engines/record-llamacpp-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=${SLUICE_ENGINES_DIR:-$PWD/.engines}
root="$dir/forky"
[ -f "$root/.sluice-ready" ] || { echo "no engine root at $root: run npm run engines:setup" >&2; exit 1; }
mountpoint -q "$root/proc" || mount --bind /proc "$root/proc"
version=$(chroot "$root" dpkg-query -W -f '${Version}' llama.cpp-tools | sed 's/^[0-9]*://; s/+.*//')
out="test/fixtures/engines/llamacpp/$version"
mkdir -p "$out"
port=18731
pids=()

cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

serve() { # serve PORT ARGS...: starts llama-server with the tiny model, waits for /health
  local p=$1
  shift
  chroot "$root" llama-server -m /models/tiny.gguf --host 127.0.0.1 --port "$p" -a tiny -t 1 "$@" \
    >"$dir/record-$p.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$p/health" >/dev/null && return; sleep 0.5; done
  echo "llama-server on $p did not start: $dir/record-$p.log" >&2
  exit 1
}

get() { curl -s "http://127.0.0.1:$1$2"; } # the answer's body, whatever its status

complete() { # complete PORT PROMPT_WORDS MAX_TOKENS: one streamed request in the background
  local words=''
  for _ in $(seq 1 $(($2 / 16))); do words+='the of and to in is that for it as with was on be by at this '; done
  curl -s -o /dev/null "http://127.0.0.1:$1/v1/completions" -H 'content-type: application/json' \
    -d "{\"model\":\"tiny\",\"prompt\":\"$words\",\"max_tokens\":$3,\"ignore_eos\":true,\"stream\":true}" &
}

until_metric() { # until_metric PORT NAME VALUE: waits until /metrics shows NAME VALUE
  for _ in $(seq 1 2400); do get "$1" /metrics | grep -qx "llamacpp:$2 $3" && return; sleep 0.05; done
  echo "llamacpp:$2 never reached $3 on $1" >&2
  exit 1
}

# Slots with a context window each (-np given, the cache split per slot).
serve $port -c 8192 -np 4 --metrics
get $port /props >"$out/props.json"
get $port /v1/models >"$out/models.json"
get $port /slots >"$out/slots-idle.json"
for _ in 1 2 3 4 5 6; do complete $port 64 200; done
until_metric $port requests_deferred 2
get $port /slots >"$out/slots-busy.json"
get $port /metrics >"$out/metrics-busy.txt"
wait_idle() { until_metric "$1" requests_processing 0; }
wait_idle $port
get $port /slots >"$out/slots-after.json"

# One cache shared by the slots (--kv-unified; also 0.7.0's default when -np is not given).
serve $((port + 1)) -c 4096 -np 4 --kv-unified --metrics
get $((port + 1)) /props >"$out/props-unified.json"
complete $((port + 1)) 1200 600
complete $((port + 1)) 600 600
until_metric $((port + 1)) requests_processing 2
sleep 0.5
get $((port + 1)) /slots >"$out/slots-unified-busy.json"
get $((port + 1)) /metrics >"$out/metrics-unified-busy.txt"

# Neither endpoint enabled: what the bridge is answered.
serve $((port + 2)) -c 8192 -np 4 --no-slots
curl -s -w '\n%{http_code}\n' "http://127.0.0.1:$((port + 2))/slots" >"$out/slots-disabled.txt"
curl -s -w '\n%{http_code}\n' "http://127.0.0.1:$((port + 2))/metrics" >"$out/metrics-disabled.txt"
grep -ah kv_unified "$dir"/record-$port.log "$dir"/record-$((port + 1)).log >"$out/kv-unified.txt"
echo "recorded llama-server $version into $out"
