#!/usr/bin/env python3
"""Times the Python reference (transformers 5.10.4 `recursive_parse`) on the benchmark inputs.

The inputs are the files `cargo bench --bench parse` writes to target/bench-inputs/
(<schema>.<size>.txt); run that first. Writes target/bench-inputs/reference.json:
{"<schema>": {"<size>": seconds_per_parse}}, which scripts/bench_report.py puts beside the Rust
numbers. Sizes timed: 200B, 4KB and 64KB (1 MB would take minutes per schema).

Run: python3 scripts/reference/bench.py   (needs: pip install transformers==5.10.4 jmespath)
"""
import json
import pathlib
import time
import warnings

warnings.simplefilter("ignore")
from transformers.utils.chat_parsing_utils import recursive_parse  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ROOT / "target" / "bench-inputs"
SIZES = ["200B", "4KB", "64KB"]


def per_call(fn, budget=0.5):
    """Median of 5 rounds, each running fn enough times to fill budget/5 seconds."""
    fn()
    n, t = 1, 0.0
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - start
        if t > budget / 10:
            break
        n *= 2
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - start) / n)
    return sorted(rounds)[2]


def main():
    results = {}
    for schema_path in sorted((ROOT / "schemas").glob("*.json")):
        name = schema_path.stem
        schema = json.loads(schema_path.read_text())
        for size in SIZES:
            path = INPUTS / f"{name}.{size}.txt"
            if not path.exists():
                raise SystemExit(f"{path} is missing: run `cargo bench --bench parse` first")
            text = path.read_text()

            def parse():
                try:
                    recursive_parse(text, schema)
                except Exception:
                    pass

            results.setdefault(name, {})[size] = per_call(parse)
            print(f"{name:20} {size:5} {results[name][size] * 1e6:10.1f} us", flush=True)
    (INPUTS / "reference.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
