#!/bin/sh
# Runs the parse benchmarks, times the Python reference on the same inputs, and rewrites the
# performance tables in BENCHMARKS.md. Takes about 12 minutes on 2 cores. PYTHON names the interpreter
# that has transformers 5.10.4 and jmespath (default python3).
set -eu
cd "$(dirname "$0")/.."
cargo bench --bench parse
"${PYTHON:-python3}" scripts/reference/bench.py
python3 scripts/bench_report.py
