#!/usr/bin/env bash
# cluster.sh up|down|status [BASE]: a single-node Slurm for thv's tests,
# started from Debian's packages (slurmctld slurmd slurm-client munge)
# without systemd, and stopped by the PIDs it started. Everything lives
# under BASE (default /tmp/thv-slurm): slurm.conf, state, spool, logs,
# pidfiles, munge's key and socket, so nothing in /etc or /run is touched.
# Clients need SLURM_CONF=BASE/slurm.conf (`cluster.sh env` prints it).
#
# Settings (see docs/cluster.md):
#   node "localhost" on 127.0.0.1, whatever the host's name;
#   CPUS (default 8) offered with config_overrides, more than the cores,
#   so array elements run side by side on a 2-core runner;
#   scheduler passes right after a submission (batch_sched_delay=0);
#   cred_expire=10 (a requeued job waits 10 s, not 120);
#   SlurmdTimeout=30 and MinJobAge=3600 (finished jobs stay visible to
#   squeue, which is all a cluster without accounting remembers).
# Needs root (munged runs as user munge, slurmd as root). Ports 6817/6818
# (SLURMCTLD_PORT, SLURMD_PORT) must be free on 127.0.0.1.
set -euo pipefail

cmd=${1:-}
BASE=${2:-${THV_SLURM_BASE:-/tmp/thv-slurm}}
CONF=$BASE/slurm.conf
CPUS=${CPUS:-8}
SLURMCTLD_PORT=${SLURMCTLD_PORT:-6817}
SLURMD_PORT=${SLURMD_PORT:-6818}
export SLURM_CONF=$CONF

die() { echo "cluster.sh: $*" >&2; exit 1; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

need() {
  local missing=()
  for b in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/squeue /usr/bin/sinfo; do
    [ -x "$b" ] || missing+=("$b")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    die "Slurm is not installed (missing ${missing[*]}): apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge"
  fi
  [ "$(id -u)" = 0 ] || die "bringing up the test cluster needs root (munged runs as munge, slurmd as root)"
}

writeconf() {
  local mem
  mem=$(awk '/^MemTotal:/ {print int($2/1024)}' /proc/meminfo)
  cat >"$CONF" <<CONF
ClusterName=thvtest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=cred_expire=10,socket=$BASE/munge/munge.socket
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=30
SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd.pid
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,sched_interval=5
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=3600
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$CPUS RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

# stop TERMs the daemons whose pidfiles are under BASE, then KILLs what is
# left after 10 s. Only these PIDs: never a process found by name.
stop() {
  local pids=() f
  for f in "$BASE/run/slurmd.pid" "$BASE/run/slurmctld.pid" "$BASE/munge/munged.pid"; do
    if alive "$f"; then pids+=("$(cat "$f")"); fi
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 100); do
    local left=()
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
    [ ${#left[@]} -gt 0 ] || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

case "$cmd" in
up)
  need
  if alive "$BASE/run/slurmctld.pid"; then die "a cluster is already up in $BASE (cluster.sh down $BASE first)"; fi
  stop
  rm -rf "$BASE"
  mkdir -p "$BASE"/{state,spool,log,run}
  install -d -o munge -g munge -m 0755 "$BASE/munge"
  # A key of its own: nothing in /etc/munge is needed or touched.
  runuser -u munge -- /usr/sbin/mungekey --create --keyfile="$BASE/munge/munge.key"
  writeconf
  runuser -u munge -- /usr/sbin/munged -S "$BASE/munge/munge.socket" --key-file="$BASE/munge/munge.key" \
    --pid-file="$BASE/munge/munged.pid" --log-file="$BASE/munge/munged.log" \
    --seed-file="$BASE/munge/munged.seed"
  /usr/sbin/slurmctld -f "$CONF"
  /usr/sbin/slurmd -f "$CONF" -N localhost
  for _ in $(seq 300); do
    [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ] && { echo "cluster up in $BASE: export SLURM_CONF=$CONF"; exit 0; }
    sleep 0.1
  done
  echo "cluster.sh: node localhost did not become idle in 30 s; logs:" >&2
  tail -n 20 "$BASE"/log/*.log "$BASE"/munge/munged.log >&2 || true
  exit 1
  ;;
down)
  if alive "$BASE/run/slurmctld.pid"; then
    squeue -h -o %A 2>/dev/null | xargs -r scancel 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  stop
  ;;
slurmd-start)
  # Restart slurmd alone (the tests kill it mid-run).
  alive "$BASE/run/slurmd.pid" && die "slurmd is already running"
  /usr/sbin/slurmd -f "$CONF" -N localhost
  ;;
status)
  for d in slurmctld slurmd; do
    if alive "$BASE/run/$d.pid"; then echo "$d: running ($(cat "$BASE/run/$d.pid"))"; else echo "$d: stopped"; fi
  done
  if alive "$BASE/munge/munged.pid"; then echo "munged: running ($(cat "$BASE/munge/munged.pid"))"; else echo "munged: stopped"; fi
  alive "$BASE/run/slurmctld.pid" && sinfo -h -o '%N %T %c' || true
  ;;
env)
  echo "SLURM_CONF=$CONF"
  ;;
*)
  echo "usage: cluster.sh up|down|status|slurmd-start|env [BASE]" >&2
  exit 2
  ;;
esac
