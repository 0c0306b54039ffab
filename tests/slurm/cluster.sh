#!/usr/bin/env bash
# A throw-away single-node Slurm cluster (with accounting) for testing the
# Slurm profile (profiles/slurm) against real daemons, not a mock.
#
#   tests/slurm/cluster.sh start DIR    # install (Debian packages) and start it
#   tests/slurm/cluster.sh stop DIR     # stop every daemon that `start` started
#   tests/slurm/cluster.sh env DIR      # print the export line for the clients
#
# Everything lives in DIR: configs, keys, pid files, spool/state, logs,
# sockets, the database and an `srun` wrapper (DIR/bin, see write_configs).
# Clients need SLURM_CONF=DIR/etc/slurm.conf and DIR/bin first on PATH (start
# prints the export line). No systemd; the daemons run as root, MariaDB
# listens on 127.0.0.1 only (and on a unix socket in DIR). `stop` kills the
# daemons by the pids in DIR's pid files (and the slurmstepd processes of this
# cluster's slurmd, found by their SLURM_CONF), never anything else.
#
# The node has this machine's CPUs (nproc) and 90 % of its memory (free), one
# fake GPU (gres.conf: Name=gpu File=/dev/null) so that `sbatch --gpus=1` jobs
# are accepted, and one default partition "debug".
#
# Exit status of start: 0 up, 1 failed (with the daemons' log tails), 3 it
# cannot run here: not root, or the packages are missing and cannot be
# installed (no apt-get, apt-get failed).
#
# Environment: SLURM_TEST_PORT_BASE (default 16817; the first free ports from
# there are used), SLURM_TEST_TIMEOUT (seconds to wait for each daemon, 90),
# SLURM_TEST_KEEP_ON_FAILURE=1 (leave the daemons running when start fails).
# Tested with Debian 12 (Slurm 22.05, MariaDB 10.11, MUNGE 0.5.15).
set -euo pipefail

PACKAGES=(slurmctld slurmd slurm-client slurmdbd munge mariadb-server)
DAEMONS=(slurmd slurmctld slurmdbd munged mariadbd)   # stop order
CLUSTER=docnmt-test
ACCOUNT=docnmt
PARTITION=debug
TIMEOUT=${SLURM_TEST_TIMEOUT:-90}

die() { echo "cluster.sh: $*" >&2; exit 1; }
unavailable() { echo "cluster.sh: $*" >&2; exit 3; }   # exit 3: cannot run here
log() { echo "cluster.sh: $*" >&2; }

usage() { die "usage: $0 {start|stop|env} DIR"; }

[[ $# -eq 2 ]] || usage
ACTION=$1
mkdir -p "$2"
DIR=$(cd "$2" && pwd -P)

CONF=$DIR/etc/slurm.conf
pidfile() {
    case $1 in
        mariadbd) echo "$DIR/mysql/mariadbd.pid" ;;
        munged) echo "$DIR/munge/munged.pid" ;;
        *) echo "$DIR/run/$1.pid" ;;
    esac
}
logfile() {
    case $1 in
        mariadbd) echo "$DIR/mysql/mariadbd.log" ;;
        munged) echo "$DIR/munge/munged.log" ;;
        *) echo "$DIR/log/$1.log" ;;
    esac
}

# The pid in NAME's pid file if that process is alive and is NAME, else nothing.
live_pid() {
    local file pid exe
    file=$(pidfile "$1")
    [[ -s $file ]] || return 0
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid && -d /proc/$pid ]] || return 0
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
    exe=${exe% (deleted)}
    case $1 in
        mariadbd) [[ $exe == */mariadbd || $exe == */mysqld ]] || return 0 ;;
        *) [[ ${exe##*/} == "$1" || ${exe##*/} == "$1-wlm" ]] || return 0 ;;
    esac
    echo "$pid"
}

export_line() { echo "export SLURM_CONF=$CONF PATH=$DIR/bin:\$PATH"; }

# ---------------------------------------------------------------- stop

stop_pid() {   # NAME PID: TERM, wait, KILL
    local name=$1 pid=$2 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        [[ -d /proc/$pid ]] || { log "stopped $name ($pid)"; return 0; }
        # a zombie (our own child) counts as gone
        [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && { log "stopped $name ($pid)"; return 0; }
        sleep 0.2
    done
    log "$name ($pid) ignored SIGTERM for 20 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        [[ -d /proc/$pid ]] || return 0
        sleep 0.2
    done
    log "$name ($pid) is still there"
    return 1
}

# slurmstepd processes of this cluster: forked by our slurmd, so they carry
# its environment, SLURM_CONF=$CONF.
our_stepds() {
    local p exe
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null || true)
        [[ ${exe##*/} == slurmstepd* ]] || continue
        tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$CONF" && echo "${p#/proc/}"
    done
    return 0
}

stop_cluster() {
    local status=0 name pid i
    # Cancel what is still queued or running so that the jobs' processes end
    # with their slurmstepd, then stop the daemons.
    if [[ -n $(live_pid slurmctld) ]]; then
        SLURM_CONF=$CONF timeout 20 scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            [[ -z $(SLURM_CONF=$CONF timeout 10 squeue -h -o %i 2>/dev/null) ]] && break
            sleep 0.2
        done
    fi
    for name in "${DAEMONS[@]}"; do
        pid=$(live_pid "$name")
        if [[ -n $pid ]]; then
            stop_pid "$name" "$pid" || status=1
        fi
        if [[ $name == slurmd ]]; then
            for pid in $(our_stepds); do stop_pid slurmstepd "$pid" || status=1; done
        fi
    done
    return $status
}

# ---------------------------------------------------------------- start

install_packages() {
    local missing=() p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    command -v apt-get >/dev/null || unavailable "packages missing (${missing[*]}) and no apt-get to install them"
    [[ $(id -u) -eq 0 ]] || unavailable "packages missing (${missing[*]}); run as root to install them"
    log "installing ${missing[*]}"
    # policy-rc.d keeps the packages' own services (munge, mariadb, slurm*) from starting.
    local policy=/usr/sbin/policy-rc.d made_policy=0
    if [[ ! -e $policy ]]; then printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy && made_policy=1; fi
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"; } >"$DIR/apt.log" 2>&1 ||
        { ((made_policy)) && rm -f $policy; tail -20 "$DIR/apt.log" >&2; unavailable "apt-get install failed (log: $DIR/apt.log)"; }
    ((made_policy)) && rm -f $policy
    return 0
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
next_port=${SLURM_TEST_PORT_BASE:-16817}
pick_port() {   # the next free port from $next_port on, into the variable $1
    while ! port_free "$next_port"; do next_port=$((next_port + 1)); done
    printf -v "$1" %s "$next_port"
    next_port=$((next_port + 1))
}

fail() {
    local name file
    log "FAILED: $*"
    for name in mariadbd munged slurmdbd slurmctld slurmd; do
        file=$(logfile "$name")
        [[ -s $file ]] || continue
        echo "----- tail of $file" >&2
        tail -n 25 "$file" >&2
    done
    if [[ ${SLURM_TEST_KEEP_ON_FAILURE:-0} == 1 ]]; then
        log "leaving the daemons running (SLURM_TEST_KEEP_ON_FAILURE=1); stop them with: $0 stop $DIR"
    else
        stop_cluster || true
    fi
    exit 1
}

wait_for() {   # DESCRIPTION COMMAND...: retry COMMAND until it succeeds, for TIMEOUT s
    local what=$1 deadline=$((SECONDS + TIMEOUT))
    shift
    while ((SECONDS < deadline)); do
        timeout 15 "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    fail "timed out after $TIMEOUT s waiting for $what"
}

write_configs() {
    local host cpus
    host=$(hostname -s)
    cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc alone counts OMP_NUM_THREADS
    mem_mb=$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')
    pick_port CTLD_PORT
    pick_port SLURMD_PORT
    pick_port DBD_PORT
    pick_port DB_PORT
    DB_PASS=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
    NODE=$host

    cat >"$CONF" <<EOF
# Generated by tests/slurm/cluster.sh: a single-node test cluster in $DIR.
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/spool/slurmctld
SlurmdSpoolDir=$DIR/spool/slurmd
SlurmctldPidFile=$(pidfile slurmctld)
SlurmdPidFile=$(pidfile slurmd)
SlurmctldLogFile=$(logfile slurmctld)
SlurmdLogFile=$(logfile slurmd)
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups here: plain process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment
# The MUNGE socket for connections to slurmdbd (AuthInfo is not used for those).
AccountingStoragePass=socket=$DIR/munge/munge.socket
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
JobCompType=jobcomp/none
MinJobAge=300
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb Gres=gpu:1 State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

    # A fake GPU: the node accepts --gpus=1 / --gres=gpu:1 jobs without one.
    cat >"$DIR/etc/gres.conf" <<EOF
NodeName=$host Name=gpu File=/dev/null
EOF

    cat >"$DIR/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$(pidfile slurmdbd)
LogFile=$(logfile slurmdbd)
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$DIR/etc/slurmdbd.conf"

    # snakemake-executor-plugin-slurm-jobstep (0.6.1) starts each job's
    # command with `srun` after deleting all SLURM_* variables except the job
    # ids, SLURM_CONF included; a cluster whose slurm.conf is not in
    # /etc/slurm (or /run/slurm/conf, configless) then fails in every job with
    # "srun: fatal: Could not establish a configuration source". This srun,
    # first on PATH, puts SLURM_CONF back.
    local real_srun
    real_srun=$(PATH=$(tr ':' '\n' <<<"$PATH" | grep -vxF "$DIR/bin" | paste -sd:) command -v srun) ||
        fail "no srun on PATH"
    cat >"$DIR/bin/srun" <<EOF
#!/bin/sh
# srun of the test cluster in $DIR (see tests/slurm/cluster.sh).
SLURM_CONF=$CONF
export SLURM_CONF
exec $real_srun "\$@"
EOF
    chmod 755 "$DIR/bin/srun"
}

start_cluster() {
    local running=() name t0 i
    for name in "${DAEMONS[@]}"; do
        [[ -n $(live_pid "$name") ]] && running+=("$name")
    done
    [[ ${#running[@]} -eq 0 ]] || die "already running in $DIR: ${running[*]} (stop it first: $0 stop $DIR)"
    t0=$SECONDS
    [[ $(id -u) -eq 0 ]] || unavailable "start needs root (slurmd, and the daemons run as root)"
    install_packages

    mkdir -p "$DIR"/{bin,etc,run,log,mysql,munge,spool/slurmctld,spool/slurmd}
    # munged wants its socket directory searchable by all (the key stays 0400).
    chmod 755 "$DIR/munge"
    write_configs
    export SLURM_CONF=$CONF

    # --- MariaDB: own datadir, socket and port; loopback only.
    local sock=$DIR/mysql/mysqld.sock
    if [[ ! -d $DIR/mysql/data/mysql ]]; then
        mariadb-install-db --no-defaults --datadir="$DIR/mysql/data" --user=root \
            --auth-root-authentication-method=socket --skip-test-db >"$DIR/mysql/install.log" 2>&1 ||
            fail "mariadb-install-db (log: $DIR/mysql/install.log)"
    fi
    setsid mariadbd --no-defaults --user=root --datadir="$DIR/mysql/data" --socket="$sock" \
        --pid-file="$(pidfile mariadbd)" --log-error="$(logfile mariadbd)" --port="$DB_PORT" \
        --bind-address=127.0.0.1 --skip-name-resolve --innodb-buffer-pool-size=64M \
        --innodb-log-file-size=48M --innodb-lock-wait-timeout=900 --max-connections=50 \
        </dev/null >/dev/null 2>&1 &
    wait_for "MariaDB" mariadb-admin --no-defaults --socket="$sock" -u root ping
    mariadb --no-defaults --socket="$sock" -u root <<EOF || fail "creating the database user"
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE OR REPLACE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
FLUSH PRIVILEGES;
EOF

    # --- MUNGE: own key (readable by its user only), socket, pid, log, seed.
    local msock=$DIR/munge/munge.socket
    if [[ ! -s $DIR/munge/munge.key ]]; then
        mungekey --create --keyfile="$DIR/munge/munge.key" || fail "mungekey"
    fi
    chmod 400 "$DIR/munge/munge.key"
    # --force: accept a DIR below a private directory (pytest's tmp dirs are
    # 0700), which only makes the socket unusable for other users than root.
    munged --force --socket="$msock" --key-file="$DIR/munge/munge.key" --pid-file="$(pidfile munged)" \
        --log-file="$(logfile munged)" --seed-file="$DIR/munge/munged.seed" </dev/null ||
        fail "munged did not start"
    wait_for "munged" bash -c "munge -n -S '$msock' | unmunge -S '$msock'"

    # --- slurmdbd on that database; then the cluster, an account and this user.
    slurmdbd </dev/null || fail "slurmdbd did not start"
    wait_for "slurmdbd" sacctmgr -n list cluster
    local user
    user=$(id -un)
    # `add` answers non-zero when there is nothing new (a restart on the same
    # DIR): check the result instead of the exit status.
    sacctmgr -i add cluster "$CLUSTER" >/dev/null || true
    sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description="docnmt tests" organization=docnmt >/dev/null || true
    sacctmgr -i add user "$user" account="$ACCOUNT" defaultaccount="$ACCOUNT" cluster="$CLUSTER" >/dev/null || true
    sacctmgr -n -P list assoc cluster="$CLUSTER" account="$ACCOUNT" user="$user" format=user | grep -qx "$user" ||
        fail "no association for $user in account $ACCOUNT"

    # --- slurmctld and slurmd (both fork into the background).
    slurmctld </dev/null || fail "slurmctld did not start"
    wait_for "slurmctld" scontrol ping
    slurmd </dev/null || fail "slurmd did not start"
    wait_for "node $NODE idle" bash -c "sinfo -h -N -n '$NODE' -o %T | grep -qx idle"
    wait_for "sacct" sacct -n -a -X
    log "cluster $CLUSTER up in $((SECONDS - t0)) s: node $NODE ($(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) CPUs, ${mem_mb:-?} MB), partition $PARTITION, account $ACCOUNT"
    sinfo >&2
    export_line
}

case $ACTION in
    start) start_cluster ;;
    stop) stop_cluster ;;
    env) export_line ;;
    *) usage ;;
esac
