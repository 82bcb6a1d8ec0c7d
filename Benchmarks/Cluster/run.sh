#!/usr/bin/env bash
# The cluster on PostgreSQL in one run, beside the embedded journal and etcd for scale:
#
#   strict Send on the PostgreSQL journal and on SQLite: ping-pong (p50, p99) and 16 in flight
#   a standby's lag under 16 in flight: a subscriber on the standby against the leader's reply
#   failover over ROUNDS rounds: the leader killed (kill -9) → the first Send the next one
#     acknowledges, with the default lease (journal.leaseDuration)
#   etcd 3.4 put, one node: ping-pong and 16 in flight (16 connections, as Benchmarks/Peers)
#
# PostgreSQL 15 and etcd are installed when missing; PostgreSQL runs from initdb in a temporary
# folder, fsync on, as nobody when run as root. Unpinned; the machine's other work shows.
#
#   Benchmarks/Cluster/run.sh            N=5000 round trips a measurement, ROUNDS=20 failovers
#   DAEMON=.build/debug/switchyardd N=300 ETCD_N=300 ROUNDS=3 Benchmarks/Cluster/run.sh   a quick check of the harness
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-5000}
ETCD_N=${ETCD_N:-2000}
ROUNDS=${ROUNDS:-20}
POSTGRES=/usr/lib/postgresql/15/bin
if [ ! -x "$POSTGRES/initdb" ]; then
  echo "installing postgresql-15"
  apt-get update -qq && apt-get install -y -qq postgresql-15 >/dev/null
fi
NEEDED="etcd:etcd-server"
source Benchmarks/Peers/common.sh

# PostgreSQL as nobody (it refuses root), on a socket in its own folder.
as_nobody=()
[ "$(id -u)" = 0 ] && as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
chmod 711 "$dir"
mkdir -m 700 "$dir/pg"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$dir/pg"
"${as_nobody[@]}" env LANG=C.UTF-8 "$POSTGRES/initdb" -D "$dir/pg/data" -U switchyard -A trust -E UTF8 >/dev/null
"${as_nobody[@]}" env LANG=C.UTF-8 "$POSTGRES/postgres" -D "$dir/pg/data" -c listen_addresses= \
  -c unix_socket_directories="$dir/pg" -c max_connections=200 >"$dir/pg.log" 2>&1 & pids+=($!)
for _ in $(seq 1 200); do "$POSTGRES/pg_isready" -q -h "$dir/pg" -U switchyard -d postgres && break; sleep 0.05; done
"$POSTGRES/createdb" -h "$dir/pg" -U switchyard cluster

etcd --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:23790 \
  --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
  --log-level error >"$dir/etcd.log" 2>&1 & pids+=($!)

echo "# Benchmarks/Cluster/run.sh, $(date -u +%Y-%m-%d), $(nproc) CPUs, N=$N ETCD_N=$ETCD_N ROUNDS=$ROUNDS"
python3 Benchmarks/Cluster/cluster.py --daemon "$daemon" --loadgen "$out/loadgen" --folder "$dir" \
  --database "host=$dir/pg user=switchyard dbname=cluster" --etcd tcp:127.0.0.1:23790 \
  --n "$N" --etcd-n "$ETCD_N" --rounds "$ROUNDS"
