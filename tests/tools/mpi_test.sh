#!/usr/bin/env bash
# `mpirun -n 2 myriad plan|sweep` gives what one process gives: the same CSV,
# JSON Lines and tables (the line with rates and wall time aside). Skipped (77)
# without mpirun or in a build without MPI.
#   mpi_test.sh MYRIAD SCENARIO_DIR OUT_DIR
set -euo pipefail
myriad=$1 scenarios=$2 out=$3
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (tools/setup.sh installs OpenMPI)"; exit 77; }
ldd "$myriad" | grep -q 'libmpi\.' || { echo "SKIP: myriad was built without MPI"; exit 77; }
mkdir -p "$out"
# As root (CI) OpenMPI wants saying so; two ranks on a 2-core machine.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -n 2 --oversubscribe)

plan=(plan "$scenarios/examples/mixtral-8x7b-h100-64.yaml" --top 8 --global-batch 256,512)
"$myriad" "${plan[@]}" --csv "$out/plan-1.csv" >"$out/plan-1.txt"
"${mpi[@]}" "$myriad" "${plan[@]}" --csv "$out/plan-2.csv" >"$out/plan-2.txt"
cmp "$out/plan-1.csv" "$out/plan-2.csv"
diff <(grep -v "candidates in" "$out/plan-1.txt") <(grep -v "candidates in" "$out/plan-2.txt")

sweep=(sweep "$scenarios/examples/llama3-70b-h100-2048.yaml" --vary cluster.gpus=2048,4096,8192
  --vary parallelism.tp=2,4,8 --vary parallelism.pp=2,4,8 --vary parallelism.virtual_stages=1,5
  --pareto days,gpu-hours)
"$myriad" "${sweep[@]}" --csv "$out/sweep-1.csv" --jsonl "$out/sweep-1.jsonl" >"$out/sweep-1.txt"
"${mpi[@]}" "$myriad" "${sweep[@]}" --csv "$out/sweep-2.csv" --jsonl "$out/sweep-2.jsonl" \
  >"$out/sweep-2.txt"
cmp "$out/sweep-1.csv" "$out/sweep-2.csv"
cmp "$out/sweep-1.jsonl" "$out/sweep-2.jsonl"
cmp "$out/sweep-1.txt" "$out/sweep-2.txt"

# A bad scenario: every rank refuses it, rank 0 says why, the exit code is 2.
set +e
"${mpi[@]}" "$myriad" plan "$scenarios/examples/mixtral-8x7b-h100-64.yaml" --set parallelism.tp=x \
  >"$out/bad.txt" 2>"$out/bad.err"
code=$?
set -e
[[ $code -eq 2 ]] || { echo "expected exit 2 from a bad scenario under mpirun, got $code"; exit 1; }
[[ $(grep -c "parallelism.tp" "$out/bad.err") -eq 1 ]] ||
  { echo "expected the error once:"; cat "$out/bad.err"; exit 1; }
echo "mpi equals serial"
