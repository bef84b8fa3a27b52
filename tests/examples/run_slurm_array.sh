#!/bin/bash
# examples/slurm/ on a real Slurm cluster of one node: starts munged, slurmctld and slurmd (Debian's
# slurm-wlm and munge) on localhost with a generated configuration, key, sockets, ports, state,
# spool, pid and log files all in one temporary folder; submits examples/slurm/submit.sh (a 4-task
# array of `ropecheck sweep --shard auto`, then `report merge` as a dependent job); and checks that
# the merged report is byte for byte the report of the same sweep run unsharded here. Then an array
# whose indices are not evenly spaced (--array=1,3,7): every task must refuse it (exit 2, one line
# naming SLURM_ARRAY_TASK_COUNT) and write no report. And examples/slurm/certify_submit.sh: a 4-task
# array of `certify --shard auto` whose merged certificate is the unsharded one byte for byte.
# Usage: run_slurm_array.sh ROPECHECK SOURCE_DIR. Exit 0 pass, 1 fail, 77 skip (ctest
# SKIP_RETURN_CODE): not root, the packages missing, or a daemon that does not start here. The
# daemons are stopped and the folder removed on every exit (trap).
set -uo pipefail
ropecheck=$1
source_dir=$2
# What the cluster sweeps: a passing kernel close to its bound (so the report has a diagnosis), 64
# calls (runner/sweep.h), 4 shards of 16 calls.
sweep_args="--impl scalar --spec layout=half,head_dim=64,base=500000,dtype=bf16 --samples 4096"
start=$(date +%s)

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root: this test runs munged, slurmctld and slurmd of a private cluster as root"
for tool in munged munge unmunge slurmctld slurmd sbatch scontrol sinfo scancel; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (Debian: apt-get install slurm-wlm munge; scripts/setup installs them when run as root)"
done
python=/usr/bin/python3
[ -x "$python" ] || skip "$python not found (it picks free ports)"
[ -x "$ropecheck" ] || { echo "FAIL: $ropecheck is not built"; exit 1; }

# A Slurm job's variables of an enclosing allocation must not reach the clients used here.
while IFS= read -r name; do unset "$name"; done < <(env | sed -n 's/^\(SLURM_[A-Z_]*\|SBATCH_[A-Z_]*\|SALLOC_[A-Z_]*\)=.*/\1/p')

work=$(mktemp -d "${TMPDIR:-/tmp}/ropecheck-slurm-XXXXXX") || { echo "FAIL: no temporary folder"; exit 1; }
chmod 711 "$work"  # munged checks that its socket's folder is not writable by others
daemons=()         # pids, in start order
jobs_submitted=()

cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  # Jobs still queued or running (a failure): cancelled, and awaited so that no job step outlives slurmd.
  if [ ${#jobs_submitted[@]} -gt 0 ] && [ -n "${SLURM_CONF:-}" ]; then
    timeout 10 scancel --quiet "${jobs_submitted[@]}" >/dev/null 2>&1
    local job
    for job in "${jobs_submitted[@]}"; do
      wait_for 15 not_active "$job"
    done
  fi
  local i pid
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    pid=${daemons[i]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$work"
  echo "slurm test: $(( $(date +%s) - start )) s"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

logs() {
  local f
  for f in "$work"/*.log "$work"/run/*.out; do
    [ -f "$f" ] && { echo "---- ${f#"$work"/} (last lines)"; tail -n 15 "$f"; }
  done
}
fail() { echo "FAIL: $*"; logs; exit 1; }
daemon_skip() { echo "SKIP: $*"; logs; exit 77; }
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# wait_for SECONDS COMMAND...: until COMMAND succeeds, at most SECONDS.
wait_for() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# ---- munge: its own key and socket -------------------------------------------------------------
mkdir -m 700 "$work/munge" "$work/state" "$work/spool" "$work/tmp"
mkdir -m 755 "$work/run" "$work/reports" "$work/refused"
if command -v mungekey >/dev/null 2>&1; then
  mungekey --create --keyfile="$work/munge/munge.key" || fail "mungekey could not create a key"
else
  head -c 1024 /dev/urandom > "$work/munge/munge.key"
fi
chmod 400 "$work/munge/munge.key"
socket=$work/munge/munge.socket
munged --foreground --force --socket="$socket" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" > "$work/munged.log" 2>&1 &
daemons+=($!)
munge_works() { munge --socket="$socket" --no-input | unmunge --socket="$socket"; }
wait_for 15 munge_works || daemon_skip "munged did not start here"

# ---- Slurm: one node, 4 CPUs (config_overrides: as configured, whatever the machine has) --------
export SLURM_CONF=$work/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=ropecheck-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
TmpFS=$work/tmp
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -f "$SLURM_CONF" > "$work/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" > "$work/slurmd.out" 2>&1 &
daemons+=($!)
node_idle() { [ "$(sinfo --noheader --nodes=localhost --format=%t 2>/dev/null)" = "idle" ]; }
wait_for 30 node_idle || daemon_skip "slurmctld and slurmd did not bring node localhost up here"
echo "cluster up after $(( $(date +%s) - start )) s"

# job_state ID: the state of a job, or of every task of an array ("COMPLETED COMPLETED ...").
job_state() { scontrol --oneliner show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | tr '\n' ' '; }
# ended ID N: N task states, none pending or running; not_active ID: none pending or running, or
# slurmctld no longer answers.
active_states='PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|SIGNALING|STAGE_OUT'
ended() {
  local states; states=$(job_state "$1")
  [ "$(wc -w <<< "$states")" -eq "$2" ] && ! grep -qE "$active_states" <<< "$states"
}
not_active() { ! job_state "$1" | grep -qE "$active_states"; }

# ---- the sweep, unsharded, here ----------------------------------------------------------------
# shellcheck disable=SC2086  # a list of arguments
"$ropecheck" sweep $sweep_args --threads 1 --json "$work/whole.json" > "$work/whole.out" || fail "the unsharded sweep did not pass"

# ---- the example: a 4-task array and the dependent merge ---------------------------------------
cd "$work/run" || fail "no run folder"
submitted=$(ROPECHECK=$ropecheck SWEEP_DIR=$work/reports SWEEP_ARGS=$sweep_args bash "$source_dir/examples/slurm/submit.sh") ||
  fail "submit.sh failed: $submitted"
array=$(sed -n 's/^sweep array: \([0-9]*\) .*/\1/p' <<< "$submitted")
merge=$(sed -n 's/.* merge: \([0-9]*\)$/\1/p' <<< "$submitted")
[ -n "$array" ] && [ -n "$merge" ] || fail "submit.sh printed no job ids: $submitted"
jobs_submitted+=("$array" "$merge")
wait_for 90 ended "$merge" 1 || fail "the merge job $merge did not end within 90 s (array: $(job_state "$array"), merge: $(job_state "$merge"))"
[ "$(job_state "$array")" = "COMPLETED COMPLETED COMPLETED COMPLETED " ] || fail "array tasks: $(job_state "$array")"
[ "$(job_state "$merge")" = "COMPLETED " ] || fail "merge job: $(job_state "$merge")"
for k in 0 1 2 3; do
  "$python" - "$work/reports/shard-$k.json" "$k" <<'EOF' || fail "shard-$k.json is not shard $k/4"
import json, sys
shard = json.load(open(sys.argv[1]))["sweep"]["shard"]
sys.exit(0 if shard == {"index": int(sys.argv[2]), "count": 4} else 1)
EOF
done
grep -q "^result: pass$" "$work"/run/ropecheck-merge-"$merge".out || fail "the merge job printed no 'result: pass'"
cmp "$work/reports/sweep.json" "$work/whole.json" || fail "the merged report differs from the unsharded one"
echo "merged report of the 4 array tasks = unsharded report ($(wc -c < "$work/whole.json") bytes)"

# ---- a certification: a 4-task array of certify.sbatch and its merge = the unsharded certificate --
certify_args="--impl scalar --spec layout=half,head_dim=64,base=500000,dtype=f32 --positions 0:16384 --model exact --chunk 1024"
# shellcheck disable=SC2086  # a list of arguments
"$ropecheck" certify $certify_args --threads 1 --json "$work/certificate.json" > "$work/certify.out" ||
  fail "the unsharded certify did not pass: $(cat "$work/certify.out")"
submitted=$(ROPECHECK=$ropecheck CERTIFY_DIR=$work/certify CERTIFY_ARGS=$certify_args CERTIFY_ARRAY=0-3 \
  bash "$source_dir/examples/slurm/certify_submit.sh" --cpus-per-task=1) || fail "certify_submit.sh failed: $submitted"
array=$(sed -n 's/^certify array: \([0-9]*\) .*/\1/p' <<< "$submitted")
merge=$(sed -n 's/.* merge: \([0-9]*\)$/\1/p' <<< "$submitted")
[ -n "$array" ] && [ -n "$merge" ] || fail "certify_submit.sh printed no job ids: $submitted"
jobs_submitted+=("$array" "$merge")
wait_for 120 ended "$merge" 1 || fail "the certify merge job $merge did not end within 120 s (array: $(job_state "$array"))"
[ "$(job_state "$array")" = "COMPLETED COMPLETED COMPLETED COMPLETED " ] || fail "certify array tasks: $(job_state "$array")"
[ "$(job_state "$merge")" = "COMPLETED " ] || fail "certify merge job: $(job_state "$merge")"
cmp "$work/certify/certificate.json" "$work/certificate.json" || fail "the merged certificate differs from the unsharded one"
echo "certificate of the 4 array tasks = unsharded certificate ($(wc -c < "$work/certificate.json") bytes)"

# ---- an array whose indices are not evenly spaced: refused by every task -----------------------
refused=$(ROPECHECK=$ropecheck SWEEP_DIR=$work/refused SWEEP_ARGS=$sweep_args sbatch --parsable --array=1,3,7 \
  "$source_dir/examples/slurm/sweep.sbatch") || fail "sbatch --array=1,3,7 failed"
refused=${refused%%;*}
jobs_submitted+=("$refused")
wait_for 60 ended "$refused" 3 || fail "the array $refused did not end within 60 s: $(job_state "$refused")"
[ "$(job_state "$refused")" = "FAILED FAILED FAILED " ] || fail "tasks of --array=1,3,7: $(job_state "$refused"), expected FAILED"
for id in 1 3 7; do
  out=$work/run/ropecheck-sweep-${refused}_$id.out
  grep -q "^ropecheck: --shard auto: SLURM_ARRAY_TASK_COUNT: expected 7, the tasks of 1-7, got 3" "$out" ||
    fail "task $id printed no refusal naming SLURM_ARRAY_TASK_COUNT: $(cat "$out")"
done
[ -z "$(ls -A "$work/refused")" ] || fail "a refused task wrote a report: $(ls "$work/refused")"
echo "PASS"
