#!/bin/bash
# Put latency vs client write rate on this machine: db_bench fillrandom, 1000 B values,
# 45 s each, two repeats, rates 5/15/30/60 MB/s and full speed.
set -e
out=${1:-put-rate-out}; mkdir -p $out
for rep in 1 2; do
for rate in 5000000 15000000 30000000 60000000 0; do
  rm -rf ${TMPDIR:-/tmp}/put-rate-db
  db_bench --db=${TMPDIR:-/tmp}/put-rate-db --benchmarks=fillrandom --num=5000000 --key_size=16 --value_size=1000 \
    --compression_type=none --benchmark_write_rate_limit=$rate --duration=45 --statistics=1 \
    --seed=$rep > $out/r${rate}_rep${rep}.txt 2>&1
  grep -h "fillrandom  \|rocksdb.db.write.micros\|rocksdb.db.write.stall " $out/r${rate}_rep${rep}.txt | sed "s/^/$rate $rep /"
done; done
