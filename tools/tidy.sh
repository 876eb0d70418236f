#!/usr/bin/env bash
# clang-tidy (.clang-tidy) on the .cpp files of the five libraries that changed since the
# last commit whose lint passed, and on every one that includes a changed header.
#   tools/tidy.sh BUILD_DIR          where code changed
#   tools/tidy.sh BUILD_DIR --all    every file (also whenever .clang-tidy itself changed)
# BUILD_DIR is a built standard configuration: its compile commands say how each file is
# compiled, and `ninja -t deps` which headers each one includes.
#
# The last commit whose lint passed is the nearer ancestor of HEAD of two records:
#   .ci/lint-base                  in the repository, written by `tools/tidy.sh --record`
#                                  (after the whole lint passed on a clean tree) and committed;
#   ~/.cache/myriad/lint-passed    on this machine, written after every lint that passed on a
#                                  clean tree (CI's runs and a developer's alike), beside ccache.
# With neither record usable the run covers every file.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
usage() { echo "usage: tools/tidy.sh BUILD_DIR [--all] | tools/tidy.sh --record" >&2; exit 2; }
state_dir=${XDG_CACHE_HOME:-$HOME/.cache}/myriad
machine_record="$state_dir/lint-passed"
repo_record=.ci/lint-base

clean_tree() { [[ -z $(git status --porcelain --untracked-files=no) ]]; }

# `tools/tidy.sh --record`: HEAD passed the whole lint; remember it in both records.
if [[ ${1:-} == --record ]]; then
  clean_tree || { echo "tidy: the tree has uncommitted changes: nothing recorded" >&2; exit 1; }
  git rev-parse HEAD >"$repo_record"
  mkdir -p "$state_dir" && git rev-parse HEAD >"$machine_record"
  echo "tidy: recorded $(git rev-parse --short HEAD) in $repo_record (commit it) and $machine_record"
  exit 0
fi
(($# >= 1)) || usage
build=$1
all=${2:-}
[[ -z $all || $all == --all ]] || usage
[[ -f $build/compile_commands.json ]] || { echo "tidy: no $build/compile_commands.json: build first" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)

# The recorded commit nearest HEAD among those that are its ancestors.
base=""
for record in "$repo_record" "$machine_record"; do
  [[ -f $record ]] || continue
  commit=$(tr -d '[:space:]' <"$record")
  git merge-base --is-ancestor "$commit" HEAD 2>/dev/null || continue
  if [[ -z $base ]] || git merge-base --is-ancestor "$base" "$commit"; then base=$commit; fi
done

mapfile -t libraries < <(git ls-files 'models/*.cpp' 'kernels/*.cpp' 'sim/*.cpp' 'calibration/*.cpp' 'tools/*.cpp')
if [[ -n $all ]]; then
  why="every file (--all)"
elif [[ -z $base ]]; then
  why="every file: no recorded commit whose lint passed is an ancestor of HEAD"
  all=--all
elif ! git diff --quiet "$base" -- .clang-tidy; then
  why="every file: .clang-tidy changed since $(git rev-parse --short "$base")"
  all=--all
fi
if [[ -n $all ]]; then
  units=("${libraries[@]}")
else
  why="changed since $(git rev-parse --short "$base"), the last commit whose lint passed"
  # Changed files (committed or not, and new ones), then the sources that include a
  # changed header according to the build's dependency log (paths through the include
  # views resolve to the source tree).
  mapfile -t units < <(
    { git diff --name-only "$base" --; git ls-files --others --exclude-standard; } | sort -u |
      python3 -c '
import os, subprocess, sys
root, build = sys.argv[1], sys.argv[2]
changed = {os.path.join(root, l.strip()) for l in sys.stdin if l.strip()}
libraries = set(sys.argv[3:])
units = {os.path.relpath(c, root) for c in changed} & libraries
headers = {c for c in changed if c.endswith((".hpp", ".h", ".cuh"))}
if headers:
    deps = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True,
                          check=True).stdout
    source = None
    for line in deps.splitlines():
        if not line.startswith(" "):
            source = None
            continue
        path = os.path.realpath(line.strip() if os.path.isabs(line.strip())
                                else os.path.join(build, line.strip()))
        if source is None:
            source = os.path.relpath(path, root)  # the first dependency is the source
        elif path in headers and source in libraries:
            units.add(source)
for unit in sorted(units):
    print(unit)
' "$root" "$build" "${libraries[@]}")
fi
echo "tidy: clang-tidy on ${#units[@]} of ${#libraries[@]} files, $why"

if ((${#units[@]} > 0)); then
  # The compile commands without precompiled headers: clang-tidy cannot read GCC's.
  db=$(mktemp -d)
  trap 'rm -rf "$db"' EXIT
  python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'EOF'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    e["command"] = re.sub(r"\s-(Winvalid-pch|include \S*cmake_pch\.hxx)\b", "", e["command"])
json.dump(entries, open(sys.argv[2], "w"))
EOF
  # clang-tidy counts the warnings it suppressed in system headers on stderr: drop that line.
  printf '%s\n' "${units[@]}" | xargs -P "$jobs" -n 4 clang-tidy -p "$db" --quiet \
    2> >(grep -v ' warnings generated\.$' >&2)
fi
if clean_tree; then
  mkdir -p "$state_dir" && git rev-parse HEAD >"$machine_record"
fi
echo "tidy: clean"
