#!/usr/bin/env python3
"""Writes the performance tables in BENCHMARKS.md from the last benchmark run.

Reads criterion's estimates (target/criterion/<group>/<engine>/new/estimates.json, the median)
and, when present, target/bench-inputs/reference.json (scripts/reference/bench.py), and replaces
the text between `<!-- bench:begin -->` and `<!-- bench:end -->` in BENCHMARKS.md.
Run through scripts/bench.sh.

`--stream`: instead, the streaming table of every shipped name (`cargo bench --bench stream --
shipped/`, which also writes target/bench-inputs/stream-shipped.json), between
`<!-- stream-bench:begin -->` and `<!-- stream-bench:end -->`.

`--peer`: instead, chatparse against SGLang's gateway parsers (`cargo bench --manifest-path
peer/Cargo.toml`, results in peer/target/criterion), between `<!-- peer-bench:begin -->` and
`<!-- peer-bench:end -->`.
"""
import json
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
CRITERION = ROOT / "target" / "criterion"
INPUTS = ROOT / "target" / "bench-inputs"
SIZES = ["200B", "4KB", "64KB", "1MB"]
ENGINES = ["floor", "generated", "interpreter", "naive"]


def median_ns(group, function, criterion=None):
    path = (criterion or CRITERION) / group / function / "new" / "estimates.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"]


def fmt_time(ns):
    if ns is None:
        return "–"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.2f} ms"


def fmt_ratio(r):
    return "–" if r is None else (f"{r:.1f}×" if r < 100 else f"{r:.0f}×")


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def replace_block(begin, end, block):
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f"BENCHMARKS.md lacks the markers {begin} … {end}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(head + begin + "\n" + block + "\n" + end + tail)
    print(block)


def stream_main():
    meta_path = INPUTS / "stream-shipped.json"
    if not meta_path.exists():
        raise SystemExit(f"{meta_path} not found: run cargo bench --bench stream -- shipped/ first")
    meta = {(m["name"], m["input"]): m for m in json.loads(meta_path.read_text())}
    names = sorted({name for name, _ in meta})
    tables = []
    for input_name, title in [("example", "representative example"), ("64KB", "padded to 64 KB")]:
        long = input_name == "64KB"
        head = (
            f"| name ({title}) | streams via | bytes | 4-byte feeds | token feeds | one-shot | 4-byte "
            "| token-like | 4-byte / one-shot | token-like / one-shot |"
        )
        rule = "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"
        if long:
            head += " ns per 4-byte feed | 4-byte per byte, 64 KB / 16 KB |"
            rule += "--:|--:|"
        lines = [head, rule]
        for name in names:
            m = meta.get((name, input_name))
            if m is None:
                continue
            group = f"shipped_{name}_{input_name}"
            t = {f: median_ns(group, f) for f in ("one_shot", "chunks_4", "tokens")}
            label = name if long or not m.get("example") else f"{name} (`{m['example']}`)"
            row = (
                f"| {label} | {m['via']} | {m['bytes']} | {m['chunks_4']} | {m['tokens']} "
                f"| {fmt_time(t['one_shot'])} | {fmt_time(t['chunks_4'])} | {fmt_time(t['tokens'])} "
                f"| {fmt_ratio(ratio(t['chunks_4'], t['one_shot']))} "
                f"| {fmt_ratio(ratio(t['tokens'], t['one_shot']))} |"
            )
            if long:
                per_feed = ratio(t["chunks_4"], m["chunks_4"])
                small = median_ns(f"shipped_{name}_16KB", "chunks_4")
                m16 = meta.get((name, "16KB"))
                growth = None
                if small and m16 and t["chunks_4"]:
                    growth = (t["chunks_4"] / m["bytes"]) / (small / m16["bytes"])
                row += f" {per_feed:.0f} |" if per_feed is not None else " – |"
                row += f" {fmt_ratio(growth)} |" if growth is not None else " – |"
            lines.append(row)
        tables.append("\n".join(lines))
    replace_block("<!-- stream-bench:begin -->", "<!-- stream-bench:end -->", "\n\n".join(tables))


def peer_main():
    criterion = ROOT / "peer" / "target" / "criterion"
    pairs = []
    for d in sorted(criterion.glob("parse_*_tiny")):
        pairs.append(d.name[len("parse_"):-len("_tiny")])
    if not pairs:
        raise SystemExit(f"no results in {criterion}: run cargo bench --manifest-path peer/Cargo.toml")
    sizes = ["tiny", "one_call", "4KB", "64KB"]
    agree_path = ROOT / "peer" / "target" / "peer-agreement.json"
    agreement = json.loads(agree_path.read_text()) if agree_path.exists() else {}
    head = "| format | " + " | ".join(
        f"{s}: chatparse / interpreter / peer / ratio" for s in sizes) + " |"
    lines = [head, "|---|" + "--:|" * len(sizes)]
    ratios = {s: [] for s in sizes}
    for name in pairs:
        cells = []
        for size in sizes:
            group = f"parse_{name}_{size}"
            ours = median_ns(group, "chatparse", criterion)
            interp = median_ns(group, "interpreter", criterion)
            peer = median_ns(group, "peer", criterion)
            r = ratio(ours, peer)
            if r is not None:
                ratios[size].append(r)
            mark = "" if agreement.get(f"{name}/{size}", True) else " †"
            cells.append(f"{fmt_time(ours)} / {fmt_time(interp)} / {fmt_time(peer)} / **{fmt_ratio(r)}**{mark}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    summary = ", ".join(
        f"{s}: median {fmt_ratio(statistics.median(v))}, worst {fmt_ratio(max(v))}"
        for s, v in ratios.items() if v)
    stream = ["| format | one_call: chatparse / peer / ratio | 4KB: chatparse / peer / ratio |",
              "|---|--:|--:|"]
    sratios = []
    for name in pairs:
        cells = []
        for size in ["one_call", "4KB"]:
            group = f"stream_{name}_{size}"
            ours, peer = median_ns(group, "chatparse", criterion), median_ns(group, "peer", criterion)
            r = ratio(ours, peer)
            if r is not None:
                sratios.append(r)
            cells.append(f"{fmt_time(ours)} / {fmt_time(peer)} / **{fmt_ratio(r)}**")
        stream.append(f"| {name} | " + " | ".join(cells) + " |")
    block = ("Parse, whole message (ratio = chatparse generated / peer; below 1 is faster). "
             f"{summary}. † = the two read the input differently (see the differential test), so the times "
             "compare different work.\n\n" + "\n".join(lines) + "\n\nStreaming, 4-byte chunks, per message "
             "(ratio = chatparse / peer"
             + (f"; median {fmt_ratio(statistics.median(sratios))}, worst {fmt_ratio(max(sratios))}" if sratios else "")
             + ").\n\n" + "\n".join(stream))
    replace_block("<!-- peer-bench:begin -->", "<!-- peer-bench:end -->", block)


def main():
    if "--stream" in sys.argv[1:]:
        stream_main()
        return
    if "--peer" in sys.argv[1:]:
        peer_main()
        return
    reference = {}
    ref_path = INPUTS / "reference.json"
    if ref_path.exists():
        reference = json.loads(ref_path.read_text())
    names = sorted(p.stem for p in (ROOT / "schemas").glob("*.json"))
    lines = [
        "| schema | size | bytes | floor | generated | interpreter | naive | Python | generated / floor "
        "| interpreter / generated | naive / generated | Python / interpreter |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    interp_over_gen = []
    long_gen_over_floor = {}
    for name in names:
        for size in SIZES:
            group = f"{name}.{size}"
            t = {e: median_ns(group, e) for e in ENGINES}
            if t["generated"] is None:
                continue
            path = INPUTS / f"{group}.txt"
            nbytes = path.stat().st_size if path.exists() else 0
            py = reference.get(name, {}).get(size)
            py_ns = py * 1e9 if py is not None else None
            g_f = ratio(t["generated"], t["floor"])
            i_g = ratio(t["interpreter"], t["generated"])
            if i_g is not None:
                interp_over_gen.append(i_g)
            if size == "64KB":
                long_gen_over_floor[name] = g_f
            lines.append(
                f"| {name} | {size} | {nbytes} | {fmt_time(t['floor'])} | {fmt_time(t['generated'])} "
                f"| {fmt_time(t['interpreter'])} | {fmt_time(t['naive'])} | {fmt_time(py_ns)} "
                f"| {fmt_ratio(g_f)} | {fmt_ratio(i_g)} | {fmt_ratio(ratio(t['naive'], t['generated']))} "
                f"| {fmt_ratio(ratio(py_ns, t['interpreter']))} |"
            )

    met = sorted(n for n, r in long_gen_over_floor.items() if r is not None and r <= 2)
    missed = sorted(n for n, r in long_gen_over_floor.items() if r is None or r > 2)
    gpt_small = median_ns("gpt_oss.200B", "generated")
    gpt_long = long_gen_over_floor.get("gpt_oss")
    py_gpt = reference.get("gpt_oss", {}).get("64KB")
    interp_gpt = median_ns("gpt_oss.64KB", "interpreter")
    summary = [
        "",
        "Targets (issue 4), from this run:",
        "",
        f"- generated ≤ 2× floor on the 64 KB gpt_oss input: **{fmt_ratio(gpt_long)}**"
        f" ({'met' if gpt_long is not None and gpt_long <= 2 else 'not met'});"
        f" on every schema's 64 KB input: met by {len(met)} of {len(long_gen_over_floor)}"
        + (f" (not met: {', '.join(missed)})" if missed else "")
        + ".",
        f"- generated ≤ 1 µs on the small gpt_oss input: **{fmt_time(gpt_small)}**"
        f" ({'met' if gpt_small is not None and gpt_small <= 1000 else 'not met'}).",
        f"- generated ≥ 5× faster than the interpreter (median over schemas and sizes): "
        f"**{fmt_ratio(statistics.median(interp_over_gen) if interp_over_gen else None)}**"
        f" ({'met' if interp_over_gen and statistics.median(interp_over_gen) >= 5 else 'not met'}).",
        f"- interpreter ≥ 10× faster than Python on the 64 KB gpt_oss input: "
        f"**{fmt_ratio(ratio(py_gpt * 1e9 if py_gpt else None, interp_gpt))}**",
    ]

    scaling = ["", "| scaling (generated) | 4KB | 64KB | 1MB | 16MB | 100MB |", "|---|--:|--:|--:|--:|--:|"]
    for name in ["gpt_oss", "qwen3", "deepseek_r1"]:
        row = [f"| {name} (ns/byte) "]
        for label, size in [("4KB", 4 << 10), ("64KB", 64 << 10), ("1MB", 1 << 20), ("16MB", 16 << 20), ("100MB", 100 << 20)]:
            ns = median_ns(f"scaling.{name}", label)
            row.append(f" {ns / size:.2f} " if ns else " – ")
        scaling.append("|".join(row) + "|")

    patho = ["", "| pathological (generated) | 1 MB | 10 MB | ns/byte at 10 MB |", "|---|--:|--:|--:|"]
    for group in sorted(p.name for p in CRITERION.glob("pathological.*")):
        a = median_ns(group, "1MB")
        b = median_ns(group, "10MB")
        patho.append(
            f"| {group.removeprefix('pathological.')} | {fmt_time(a)} | {fmt_time(b)} | "
            f"{(b / (10 << 20)) if b else 0:.2f} |"
        )

    small = [
        "",
        "| gpt_oss example | bytes | floor | generated | interpreter | generated / floor |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for group in sorted(p.name for p in CRITERION.glob("small.gpt_oss.*")):
        example = group.removeprefix("small.gpt_oss.")
        path = ROOT / "examples" / "gpt_oss" / f"{example}.txt"
        nbytes = path.stat().st_size if path.exists() else 0
        t = {e: median_ns(group, e) for e in ("floor", "generated", "interpreter")}
        small.append(
            f"| {example} | {nbytes} | {fmt_time(t['floor'])} | {fmt_time(t['generated'])} "
            f"| {fmt_time(t['interpreter'])} | {fmt_ratio(ratio(t['generated'], t['floor']))} |"
        )

    block = "\n".join(lines + summary + small + scaling + patho)
    readme = ROOT / "BENCHMARKS.md"
    text = readme.read_text()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin not in text or end not in text:
        raise SystemExit("BENCHMARKS.md lacks the bench markers")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(head + begin + "\n" + block + "\n" + end + tail)
    print(block)


if __name__ == "__main__":
    main()
