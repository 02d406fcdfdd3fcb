#!/bin/sh
# Runs the parse benchmarks, times the Python reference on the same inputs, and rewrites the
# README's performance tables. Takes about 20 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
cargo bench --bench parse
python3 scripts/reference/bench.py
python3 scripts/bench_report.py
