#!/usr/bin/env bash
# The hostile-input probe of issue 43 as a test: every case of tests/probe/corpus.txt
# runs under an address-space limit (1.5 GiB) and a time box (10 s); a signal, a
# timeout or an exit status other than the expected one fails it. Then one
# interruption: SIGTERM to a campaign writing --json, --events and --report over
# earlier files must end it by that signal, keep the earlier files, and leave no
# temporary file and no child process behind.
#   run_probe.sh MYRIAD SOURCE_DIR WORK_DIR [CASE... | interruption]
# Prints a table: case, expected, exit status, seconds, peak resident MiB.
set -uo pipefail
myriad=$1
src=$2
work=$3
shift 3
only=("$@")
limit_kb=${MYRIAD_PROBE_LIMIT_KB:-1572864}  # 1.5 GiB
box_s=${MYRIAD_PROBE_SECONDS:-10}

rm -rf "$work"
mkdir -p "$work/out"
W=$work
S=$src
SMALL=$src/scenarios/examples/llama3-8b-h100-64-pp4.yaml
CAMPAIGN=$src/scenarios/examples/llama3-405b-h100-16384-campaign.yaml
MIXTRAL=$src/scenarios/examples/mixtral-8x7b-h100-64.yaml
LONG_NAME=$(printf 'a%.0s' {1..250}).json
ESC=$'\033'
BEL=$'\007'
export W S SMALL CAMPAIGN MIXTRAL LONG_NAME ESC BEL

# The inputs the corpus names, made here so that none is committed.
make_inputs() {
  python3 - "$W" <<'EOF'
import sys, os
w = sys.argv[1]
zeros = "[" + "0," * 2_100_000 + "0]"
open(os.path.join(w, "zeros.json"), "w").write(zeros)
open(os.path.join(w, "gbench-zeros.json"), "w").write('{"benchmarks": ' + zeros + "}")
with open(os.path.join(w, "nccl-lines.txt"), "w") as f:
    f.write("#       size         count      type   redop    root     time   algbw   busbw #wrong\n")
    for i in range(30_000):
        f.write(f"  {1024 * (i + 1)}  {256 * (i + 1)}  float  sum  -1  40.0  26.2  45.9  0  39.5  26.5  46.4  0\n")
open(os.path.join(w, "kineto-dim.json"), "w").write(
    '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1,'
    ' "args": {"External id": 1, "Input Dims": [[4611686018427387904, 2], [2, 2]],'
    ' "Input type": ["float", "float"]}},'
    ' {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 5, "args": {"External id": 1}}]}')
open(os.path.join(w, "gbench-m0.json"), "w").write(
    '{"benchmarks": [{"name": "BM_Gemm/0", "run_type": "iteration", "iterations": 10,'
    ' "real_time": 2.0, "time_unit": "ms", "m": 0, "n": 1024, "k": 1024}]}')
# A scenario holding a 300,000-value flow-style list, and 100,000 nested ones.
base = open(os.environ["SMALL"]).read()
open(os.path.join(w, "flow-list.yaml"), "w").write(base + "\ndescription: [" + "0," * 300_000 + "0]\n")
open(os.path.join(w, "deep-flow.yaml"), "w").write(base + "\ndescription: " + "[" * 100_000 + "]" * 100_000 + "\n")
open(os.path.join(w, "failures.csv"), "w").write("time,component,id,duration\n2h,gpu,3,1h\n")
EOF
  mkfifo "$W/fifo.yaml"
  mkdir -p "$W/presets/hardware"
  cp "$S/scenarios/hardware/H100.yaml" "$W/presets/hardware/H100.yaml"
  { cat "$SMALL"; printf '\nfaults: {replay: failures.csv}\n'; } >"$W/replay.yaml"
}
make_inputs

timer=()
[[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f "%e %M" -o "$W/time.txt")

trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  printf '%s' "${s%"${s##*[![:space:]]}"}"
}

failed=0
printf '%-24s %-4s %4s %7s %9s  %s\n' case want exit seconds "peak MiB" verdict
while IFS='|' read -r name want args said; do
  name=$(trim "$name")
  want=$(trim "$want")
  said=$(trim "${said:-}")
  [[ -z $name || $name == \#* ]] && continue
  if ((${#only[@]} > 0)) && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  eval "argv=($args)"
  rm -f "$W/time.txt"
  start=$(date +%s%N)
  (
    ulimit -v "$limit_kb"
    exec timeout -s KILL "$box_s" "${timer[@]}" "$myriad" "${argv[@]}"
  ) >"$W/out.txt" 2>"$W/err.txt" </dev/null
  rc=$?
  seconds=$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.2f", ns / 1e9 }')
  peak="-"
  if [[ -s $W/time.txt ]]; then
    peak=$(tail -1 "$W/time.txt" | awk '{printf "%.0f", $2 / 1024}')
  fi
  verdict=ok
  if ((rc == 137 || rc == 124)); then
    verdict="FAILED: killed after ${box_s} s"
  elif ((rc >= 128)); then
    verdict="FAILED: signal $((rc - 128))"
  elif [[ $want == bad && ($rc -ne 1 && $rc -ne 2) ]]; then
    verdict="FAILED: exit $rc where a refusal (1 or 2) was expected"
  elif [[ $want == ok && $rc -ne 0 ]]; then
    verdict="FAILED: exit $rc"
  fi
  if [[ $verdict == ok && -n $said ]] && ! grep -qF -- "$said" "$W/err.txt" "$W/out.txt"; then
    verdict="FAILED: the message does not say '$said'"
  fi
  # "terminate called", "Aborted", a sanitizer: never a clean refusal.
  if grep -qE 'terminate called|std::bad_alloc|Aborted|AddressSanitizer' "$W/err.txt"; then
    verdict="FAILED: $(grep -m1 -E 'terminate called|std::bad_alloc|Aborted|AddressSanitizer' "$W/err.txt")"
  fi
  printf '%-24s %-4s %4s %7s %9s  %s\n' "$name" "$want" "$rc" "$seconds" "$peak" "$verdict"
  if [[ $verdict != ok ]]; then
    failed=1
    sed 's/^/    /' "$W/err.txt" | tail -5
  fi
done <"$src/tests/probe/corpus.txt"

# Interruption: earlier outputs kept, nothing half written, no child left.
interrupt() {
  local dir=$W/interrupt
  mkdir -p "$dir"
  for f in c.json ev.jsonl c.html; do echo "earlier" >"$dir/$f"; done
  # The step engine plays the healthy step in a child process first: at 131,072
  # GPUs (the example's 16,384 now take it 0.06 s, too short for the polling below
  # to see the child every time) it takes about 2 s.
  "$myriad" campaign "$CAMPAIGN" --set cluster.gpus=131072 --set parallelism.global_batch=16384 \
    --days 30 --seeds 50 --step-engine simulate \
    --json "$dir/c.json" --events "$dir/ev.jsonl" --report "$dir/c.html" \
    >/dev/null 2>"$W/interrupt-err.txt" &
  local pid=$!
  # Interrupted while a child plays a step (the first within seconds).
  local children="" tries
  for tries in $(seq 50); do
    sleep 0.1
    children=$(pgrep -P "$pid" || true)
    [[ -n $children ]] && break
  done
  sleep 0.2
  kill -TERM "$pid"
  wait "$pid"
  local rc=$?
  sleep 0.5
  local problems=()
  ((rc == 143)) || problems+=("exit $rc, not 143 (SIGTERM)")
  for f in c.json ev.jsonl c.html; do
    [[ $(cat "$dir/$f") == earlier ]] || problems+=("$f was not kept")
  done
  local left
  left=$(find "$dir" -type f ! -name c.json ! -name ev.jsonl ! -name c.html | wc -l)
  ((left == 0)) || problems+=("$left other files left: $(ls -A "$dir" | xargs)")
  [[ -n $children ]] || problems+=("no child process was seen to check")
  # A child that ended but that no one reaped yet (a zombie, state Z) has ended.
  for c in $children; do
    local state
    state=$(awk '{print $3}' "/proc/$c/stat" 2>/dev/null || true)
    [[ -n $state && $state != Z ]] && problems+=("child $c still running (state $state)")
  done
  if ((${#problems[@]} == 0)); then
    echo "interruption: ok (exit 143, earlier files kept, nothing left behind)"
  else
    echo "interruption: FAILED: ${problems[*]}"
    cat "$W/interrupt-err.txt"
    failed=1
  fi
}
if ((${#only[@]} == 0)) || [[ " ${only[*]} " == *" interruption "* ]]; then interrupt; fi

[[ $failed -eq 0 ]] && echo "probe ok"
exit "$failed"
