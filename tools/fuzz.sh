#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) in the sanitizer build (build-sanitize/,
# tools/sanitize_build.sh: clang, ASan, UBSan) and runs each for a bounded time over
# a seed corpus (see fuzz/README.md).
#   tools/fuzz.sh [SECONDS] [HARNESS...]
# SECONDS per harness: default $MYRIAD_FUZZ_SECONDS, else 60 (CI fuzzes 15 s each:
# tools/test.sh --fuzz). HARNESS: fuzz_scenario, fuzz_units, fuzz_profile, fuzz_rows,
# fuzz_import, fuzz_chakra
# (default: all).
# Exits 1 when a harness finds anything: a crash, a sanitizer report, a violated
# property, an input that runs over 10 s or takes over 4 GiB, a leak; or when a
# seed or a regression input (fuzz/corpus/<harness>/) fails when replayed.
# Corpora grow across runs in build-sanitize/fuzz/corpus/<harness>/; the findings of
# the latest run are in build-sanitize/fuzz/findings/<harness>/, logs in
# build-sanitize/fuzz/logs/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-sanitize/fuzz"
seconds=${1:-${MYRIAD_FUZZ_SECONDS:-60}}
shift || true
harnesses=("$@")
((${#harnesses[@]} > 0)) || harnesses=(fuzz_scenario fuzz_units fuzz_profile fuzz_rows fuzz_import fuzz_chakra)
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: tools/fuzz.sh [SECONDS] [HARNESS...]" >&2; exit 2; }
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

start=$SECONDS
"$root/tools/sanitize_build.sh" -- "${harnesses[@]}"
echo "fuzz: built in $((SECONDS - start)) s"

# Seeds (globs relative to the root), longest input and dictionary of each harness.
seeds_of() {
  case "$1" in
    fuzz_scenario) echo "scenarios/*/*.yaml tests/scenarios/malformed/* tests/scenarios/presets/*/*.yaml" ;;
    fuzz_profile) echo "calibration/profiles/*.json" ;;
    fuzz_rows) echo "calibration/measurements/*/rows.json" ;;
    fuzz_units) echo "" ;;  # the shipped scenarios' quantities: unit_seeds
    fuzz_import) echo "" ;;  # fuzz/corpus/fuzz_import/: a format byte, then the file
    fuzz_chakra) echo "tests/data/chakra/*.et" ;;
  esac
}
max_len_of() {
  case "$1" in
    fuzz_scenario | fuzz_profile) echo 65536 ;;
    fuzz_rows | fuzz_import | fuzz_chakra) echo 131072 ;;
    fuzz_units) echo 256 ;;
  esac
}
dict_of() {
  case "$1" in
    fuzz_scenario) echo "$root/fuzz/yaml.dict" ;;
    fuzz_units) echo "$root/fuzz/units.dict" ;;
    fuzz_chakra) echo "$root/fuzz/chakra.dict" ;;
    *) echo "$root/fuzz/json.dict" ;;
  esac
}

# Every value in the shipped scenarios that starts with a digit ("400Gbps", "1:7",
# "90%"), one file each, into folder $1.
unit_seeds() {
  grep -ohE ':[[:space:]]+[0-9][^#]*' "$root"/scenarios/*/*.yaml |
    sed -E 's/^:[[:space:]]+//; s/[[:space:]]+$//' | sort -u |
    while IFS= read -r value; do printf '%s' "$value" >"$1/unit-$(printf '%s' "$value" | sha1sum | cut -c1-16)"; done
}

# A harness given input files runs each once; a non-zero status is a finding.
replay() { local bin=$1; shift; "$bin" -rss_limit_mb=4096 -timeout=10 "$@"; }

# One line naming what went wrong on input $2: the sanitizer's or the property's
# report and the first frame in Myriad's code; inputs breaking the same thing share it.
signature() {
  replay "$1" "$2" 2>&1 | awk '
    /ERROR: property violated:/ { sub(/.*ERROR: /, ""); print; found = 1; exit }
    /runtime error:/ {
      line = $0; sub(/^.*\.\.\//, "", line); i = index(line, "runtime error: ")
      kind = substr(line, i + 15); j = index(kind, ":"); if (j > 0) kind = substr(kind, 1, j - 1)
      print "UBSan: " substr(line, 1, i - 1) kind; found = 1; exit
    }
    /ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer):/ && what == "" {
      what = $0; sub(/.*ERROR: /, "", what); sub(/ on address.*| \(.*| after [0-9]+ seconds.*/, "", what)
    }
    what != "" && top == "" && /^ *#[0-9]+ .* in / { top = $0; sub(/.* in /, "", top) }
    what != "" && ours == "" && / in .*(myriad::|LLVMFuzzerTestOneInput)/ { ours = $0; sub(/.* in /, "", ours) }
    END {
      if (found) exit
      if (what == "") { print "no failure on replay"; exit }
      frame = ours != "" ? ours : top
      # "f(args...) /path/file.cpp:12:3" -> "f file.cpp:12:3"
      n = split(frame, parts, " "); where = parts[n]; sub(/.*\//, "", where); sub(/\(.*/, "", frame)
      print what (frame == "" ? "" : " in " frame " " where)
    }'
}

status=0
summary=()
for h in "${harnesses[@]}"; do
  bin="$build/$h"
  corpus="$build/corpus/$h"
  findings="$build/findings/$h"
  seeds="$build/seeds/$h"
  log="$build/logs/$h.log"
  rm -rf "$findings" "$seeds"
  mkdir -p "$corpus" "$findings" "$seeds" "$build/logs"
  (cd "$root" && for f in $(seeds_of "$h"); do [[ -f $f ]] && cp "$f" "$seeds/$(echo "$f" | tr / _)"; done)
  [[ $h == fuzz_units ]] && unit_seeds "$seeds"
  if [[ -d "$root/fuzz/corpus/$h" ]]; then cp "$root/fuzz/corpus/$h"/* "$seeds/" 2>/dev/null || true; fi

  # Seeds and regression inputs are replayed first, one by one when one fails:
  # the fuzzing below skips an initial input that crashes.
  inputs=("$seeds"/*)
  if ! replay "$bin" "${inputs[@]}" >"$build/logs/$h-replay.log" 2>&1; then
    for f in "${inputs[@]}"; do
      replay "$bin" "$f" >/dev/null 2>&1 || cp "$f" "$findings/replay-$(basename "$f")"
    done
  fi
  echo "fuzz: $h: replayed ${#inputs[@]} seeds; fuzzing for $seconds s"

  # One fuzzing process at a time (-fork=1), restarted after each finding so
  # that one bug does not end the run; every finding is written to $findings.
  "$bin" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=10 -max_len="$(max_len_of "$h")" \
    -dict="$(dict_of "$h")" -artifact_prefix="$findings/" "$corpus" "$seeds" >"$log" 2>&1 || true
  execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  grep -q '^ParseDictionaryFile: error' "$log" && { echo "fuzz: $h: bad dictionary" >&2; cat "$log" >&2; exit 2; }
  mapfile -t found < <(find "$findings" -type f | sort)
  ((${#found[@]} == 0)) || status=1
  # The distinct failures, each with its count and one reproducer.
  kinds=0
  if ((${#found[@]} > 0)); then
    for f in "${found[@]}"; do printf '%s\t%s\n' "$(signature "$bin" "$f")" "$f"; done |
      sort -t $'\t' -k1,1 -s >"$build/logs/$h-findings.tsv"
    kinds=$(cut -f1 "$build/logs/$h-findings.tsv" | sort -u | wc -l)
    cut -f1 "$build/logs/$h-findings.tsv" | uniq -c | while read -r count what; do
      echo "fuzz: $h: $count x $what"
      echo "        reproduce: $bin $(grep -F -m1 "$what"$'\t' "$build/logs/$h-findings.tsv" | cut -f2)"
    done
  fi
  summary+=("$(printf '%-14s %10s executions  %3s findings (%s distinct)' "$h" "${execs:-0}" \
    "${#found[@]}" "$kinds")")
done

echo "fuzz: ${seconds} s per harness, built and run in $((SECONDS - start)) s"
printf '  %s\n' "${summary[@]}"
exit "$status"
