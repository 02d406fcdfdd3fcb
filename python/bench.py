#!/usr/bin/env python3
"""chatparse vs transformers, in one process, on the repository's benchmark inputs.

Inputs are those of `cargo bench --bench parse` (benches/support/mod.rs, ported here): each
shipped schema's richest example (tool calls and reasoning preferred, `examples/<schema>/`), its
reasoning (or content) padded with plain words to 4 KB and 64 KB; plus "tiny", a 32-byte
content-only message. Both sides get the same text and the same spec dict (as
`tokenizer.response_schema` is passed), and must return the same value before they are timed.

With transformers 5.10.x installed the x-regex schemas are timed against `recursive_parse`; with
5.23.x the shipped response templates against `parse_response` and the streaming `ResponseParser`
(16-character chunks). Run it once in each environment:

    python3 python/bench.py            # prints a Markdown table
    python3 python/bench.py --quick    # shorter timing rounds
"""

import argparse
import json
import math
import pathlib
import sys
import time
import warnings

import chatparse

warnings.simplefilter("ignore")

ROOT = pathlib.Path(__file__).resolve().parents[1]
SIZES = [("200B", 0), ("4KB", 4 << 10), ("64KB", 64 << 10)]
TINY = "Hello! How can I help you today?"
REASONING_FIELDS = ("thinking", "reasoning_content", "reasoning")
WORDS = "the model considers whether another step is needed and checks each assumption again before answering carefully".split()


def filler(length):
    """benches/support/mod.rs `filler`: words, spaces, full stops and newlines."""
    out, i = [], 0
    size = 0
    while size < length:
        word = WORDS[(i * 7 + i // 5) % len(WORDS)]
        i += 1
        sep = "\n" if i % 23 == 0 else "." if i % 23 == 11 else " "
        out.append(word + sep)
        size += len(word) + 1
    return "".join(out)[:length]


def score(message):
    calls = message.get("tool_calls")
    calls = len(calls) if isinstance(calls, list) else 0
    reasoning = any(isinstance(message.get(f), str) for f in REASONING_FIELDS)
    content = isinstance(message.get("content"), str)
    return (min(calls, 1), int(reasoning), int(content))


def padded_field(message):
    if not isinstance(message, dict):
        return None
    for field in (*REASONING_FIELDS, "content"):
        value = message.get(field)
        if isinstance(value, str) and " " in value:
            return value
    strings = [v for v in message.values() if isinstance(v, str) and " " in v]
    return max(strings, key=len) if strings else None


def base(name, schema):
    """benches/support/mod.rs `base`: the richest example and where padding goes."""
    best = None
    for path in sorted((ROOT / "examples" / name).glob("*.txt")):
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        try:
            message = chatparse.parse_response(text, schema)
        except Exception:  # noqa: BLE001 - examples that fail are not bench inputs
            continue
        field = padded_field(message)
        if field is None or field not in text:
            continue
        at = text.index(field) + field.index(" ") + 1
        key = score(message)
        if best is None or key > best[0] or (key == best[0] and len(text) < len(best[1])):
            best = (key, text, at)
    if best is None:
        raise SystemExit(f"no usable example for {name}")
    return best[1], best[2]


def grow(text, at, size):
    pad = max(0, size - len(text.encode()))
    padded = text[:at] + filler(pad)
    if pad > 0 and not padded.endswith(" "):
        padded += " "
    return padded + text[at:]


def per_call(fn, budget):
    """Median of 5 rounds, each running fn enough times to fill budget/5 seconds."""
    fn()
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start > budget / 10:
            break
        n *= 2
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - start) / n)
    return sorted(rounds)[2]


def outcome(fn):
    try:
        return ("value", fn())
    except Exception as e:  # noqa: BLE001 - both sides must fail alike
        return ("error", type(e).__name__)


def same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def fmt_time(seconds):
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e9:.0f} ns"


def cases_x_regex():
    for name in chatparse.shipped_schemas():
        schema = chatparse.schema(name)
        text, at = base(name, schema)
        yield name, "tiny", schema, TINY
        for size_name, size in SIZES:
            yield name, size_name, schema, grow(text, at, size)


def bench_x_regex(budget, only):
    from transformers.utils.chat_parsing_utils import recursive_parse

    rows = []
    for name, size, schema, text in cases_x_regex():
        if only and name not in only:
            continue
        ref = lambda: recursive_parse(text, schema)  # noqa: E731
        ours = lambda: chatparse.parse_response(text, schema)  # noqa: E731
        want, got = outcome(ref), outcome(ours)
        if not same(want, got):
            raise SystemExit(f"{name} {size}: results differ\n ref  {want!r:.300}\n ours {got!r:.300}")
        rows.append((name, size, len(text.encode()), per_call(ref, budget), per_call(ours, budget)))
        print(f"  {name:20} {size:5} {fmt_time(rows[-1][3]):>10} {fmt_time(rows[-1][4]):>10}", file=sys.stderr, flush=True)
    return rows


def bench_templates(budget, only):
    from transformers.utils.chat_parsing import ResponseParser, parse_response

    rows = []
    for name in chatparse.shipped_templates():
        if only and name not in only:
            continue
        template = chatparse.template(name)
        schema = chatparse.schema(name)  # the same family's examples are the inputs
        text, at = base(name, schema)
        inputs = [("tiny", TINY)] + [(s, grow(text, at, n)) for s, n in SIZES]
        for size, body in inputs:
            ref = lambda: parse_response(body, template, prefix="")  # noqa: E731
            ours = lambda: chatparse.parse_response(body, template, prefix="")  # noqa: E731
            want, got = outcome(ref), outcome(ours)
            if not same(want, got):
                raise SystemExit(f"{name} {size}: results differ\n ref  {want!r:.300}\n ours {got!r:.300}")
            chunks = [body[i : i + 16] for i in range(0, len(body), 16)]

            def stream(parser_class):
                def run():
                    parser = parser_class(template, prefix="")
                    for chunk in chunks:
                        parser.feed(chunk)
                    return parser.finalize()

                return run

            want_s, got_s = outcome(stream(ResponseParser)), outcome(stream(chatparse.ResponseParser))
            if not same(want_s, got_s):
                raise SystemExit(f"{name} {size}: streamed results differ")
            rows.append(
                (
                    name,
                    size,
                    len(body.encode()),
                    per_call(ref, budget),
                    per_call(ours, budget),
                    per_call(stream(ResponseParser), budget),
                    per_call(stream(chatparse.ResponseParser), budget),
                )
            )
            r = rows[-1]
            print(f"  {name:10} {size:5} {fmt_time(r[3]):>10} {fmt_time(r[4]):>10} {fmt_time(r[5]):>10} {fmt_time(r[6]):>10}", file=sys.stderr, flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing rounds")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("only", nargs="*", help="only these schemas/templates")
    args = parser.parse_args()
    budget = 0.1 if args.quick else 0.5
    import transformers

    version = transformers.__version__
    out = {"transformers": version, "python": sys.version.split()[0], "chatparse": chatparse.__version__}
    try:
        import transformers.utils.chat_parsing_utils  # noqa: F401

        has_x_regex = True
    except ImportError:
        has_x_regex = False
    if has_x_regex:
        rows = bench_x_regex(budget, args.only)
        out["x_regex"] = rows
        print(f"\nx-regex response schemas: transformers {version} `recursive_parse(text, schema)` vs "
              f"`chatparse.parse_response(text, schema)` (the same dict each call)\n")
        print("| schema | size | bytes | transformers | chatparse | speed-up |")
        print("|---|---|--:|--:|--:|--:|")
        for name, size, n, ref, ours in rows:
            print(f"| {name} | {size} | {n} | {fmt_time(ref)} | {fmt_time(ours)} | {ref / ours:.0f}× |")
        summary(rows)
    else:
        rows = bench_templates(budget, args.only)
        out["templates"] = rows
        print(f"\nresponse templates: transformers {version} `parse_response(text, template, prefix=\"\")` "
              f"and `ResponseParser` fed 16-character chunks, vs chatparse's\n")
        print("| template | size | bytes | transformers | chatparse | speed-up | transformers stream | chatparse stream | speed-up |")
        print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
        for name, size, n, ref, ours, ref_s, ours_s in rows:
            print(f"| {name} | {size} | {n} | {fmt_time(ref)} | {fmt_time(ours)} | {ref / ours:.0f}× "
                  f"| {fmt_time(ref_s)} | {fmt_time(ours_s)} | {ref_s / ours_s:.0f}× |")
        summary([(r[0], r[1], r[2], r[3], r[4]) for r in rows])
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(out, indent=1))


def summary(rows):
    by_size = {}
    for _, size, _, ref, ours in rows:
        by_size.setdefault(size, []).append(ref / ours)
    print()
    for size, ratios in by_size.items():
        ratios.sort()
        print(f"- {size}: speed-up min {ratios[0]:.1f}×, median {ratios[len(ratios) // 2]:.1f}×, max {ratios[-1]:.1f}×")


if __name__ == "__main__":
    main()
