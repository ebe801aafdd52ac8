#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine (root; Debian/Ubuntu), so that hydra/launcher=fastkernels_slurm
# sweeps run through real sbatch/squeue instead of tests/test_slurm_launcher.py's fakes:
#
#   sudo scripts/slurm-local.sh            # installs slurmctld, slurmd and munge if missing, then starts them
#   python -m fastkernels -m hydra/launcher=fastkernels_slurm hardware=cpu tasks=smoke agent=noop,reference
#   sudo scripts/slurm-local.sh stop
#
# One partition `cpu` over this host's cores and 85% of its memory; no accounting database, so `sacct` answers
# "accounting storage is disabled" and submitit falls back on the jobs' own result files (it logs a warning per
# poll). For trying the launcher, not for sharing a machine.
set -euo pipefail
if [[ "${1:-start}" == stop ]]; then
  pkill -x slurmd || true; pkill -x slurmctld || true; pkill -x munged || true
  exit 0
fi
[[ $(id -u) == 0 ]] || { echo "slurm-local.sh: run as root (it writes /etc/slurm and starts daemons)" >&2; exit 1; }
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null
fi
[[ -s /etc/munge/munge.key ]] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
state=/var/spool/fastkernels-slurm  # its own state and spool, apart from any other cluster's on this host
mkdir -p /run/munge /etc/slurm "$state/ctld" "$state/d" /var/log/slurm && chown munge:munge /run/munge
host=$(hostname -s)
cpus=$(nproc)
memory_mb=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.85}' /proc/meminfo)
cat > /etc/slurm/slurm.conf <<CONF
# written by fastkernels scripts/slurm-local.sh: a one-node cluster for trying the Slurm launcher
ClusterName=fastkernels-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
for _ in $(seq 30); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 1; done
sinfo -h -o %T 2>/dev/null | grep -q idle \
  || { echo "slurm-local.sh: the node did not come up idle; see /var/log/slurm/slurmctld.log and slurmd.log" >&2; exit 1; }
sinfo
