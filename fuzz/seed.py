#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (corpus/TARGET/) and the formats' dictionary (formats.dict).

Seeds: every conformance case of a shipped schema (tests/conformance/expected), as
`[selector, seed, output]` with the selector of its name (the shipped names in sorted order, as
src/lib.rs decodes them) and a few chunking seeds; for spec_load_parse, every shipped schema and
response template followed by a NUL and outputs of that family; for derive_template, every stored
chat template; for grammar_tools, the render corpus' tools for every family; and every input
tests/fuzz_regressions keeps, for the target that found it. The dictionary holds every marker
of the stream profiles (schemas/streaming) plus JSON and tag punctuation, so that mutations splice
real delimiters. Run from anywhere; idempotent.
"""
import hashlib
import json
import pathlib

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
NAMES = sorted(p.stem for p in (ROOT / "schemas").glob("*.json"))
TARGETS = ["shipped_backends", "stream_chunking", "lenient", "openai_deltas"]


def write(target, data):
    folder = FUZZ / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def case_inputs(suite):
    for case in suite["cases"]:
        if "input" in case:
            yield case["input"]
        elif "input_file" in case:
            yield (ROOT / case["input_file"]).read_text()


def main():
    outputs = {}
    for path in sorted((ROOT / "tests/conformance/expected").glob("*.json")):
        suite = json.loads(path.read_text())
        schema = suite.get("schema")
        if not isinstance(schema, str) or not schema.startswith("schemas/"):
            continue
        name = schema[len("schemas/"):-len(".json")]
        if name not in NAMES:
            continue
        for text in case_inputs(suite):
            data = text.encode()
            if len(data) > 4096:
                continue
            outputs.setdefault(name, []).append(data)
            for seed in (0, 1, 7):
                for target in TARGETS:
                    write(target, bytes([NAMES.index(name), seed]) + data)
    specs = [(p.stem, p) for p in (ROOT / "schemas").glob("*.json")]
    specs += [(p.stem, p) for p in (ROOT / "response_templates").glob("*.json")]
    for name, path in specs:
        for data in outputs.get(name, [b""])[:8]:
            write("spec_load_parse", bytes([3]) + path.read_bytes() + b"\0" + data)

    # derive_template: every stored template source (tests/render/expected.json embeds them) and
    # the derivation tests' templates, each followed by a NUL and a rendered-looking output.
    render = json.loads((ROOT / "tests/render/expected.json").read_text())
    sources = [t["source"] for t in render["templates"]]
    sources += [p.read_text() for p in (ROOT / "tests/derive").glob("*.jinja")]
    for source in sources:
        for data in (b"", b"<think>hm</think>Hi.", b'<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'):
            write("derive_template", bytes([1]) + source.encode() + b"\0" + data)
    # grammar_tools: the render corpus' tool list, and small variants, for every family.
    tools = json.dumps(render["tools"]).encode()
    for selector in range(len(NAMES)):
        for choice in (0, 1, 2, 3, 4):
            write("grammar_tools", bytes([selector, choice]) + tools)
    write("grammar_tools", bytes([0, 0]) + b'[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}]')

    # Every input a target found and tests/fuzz_regressions keeps (named TARGET-…) seeds that
    # target again, so each smoke run replays them.
    all_targets = TARGETS + ["spec_load_parse", "derive_template", "grammar_tools"]
    for path in sorted((ROOT / "tests/fuzz_regressions").iterdir()):
        target = next((t for t in all_targets if path.name.startswith(t + "-")), None)
        if target is not None:
            write(target, path.read_bytes())

    tokens = set()
    for path in (ROOT / "schemas/streaming").glob("*.json"):
        def walk(v):
            if isinstance(v, str):
                if v and v not in ("content", "thinking", "reasoning_content", "tool_calls"):
                    tokens.add(v)
            elif isinstance(v, list):
                for x in v:
                    walk(x)
            elif isinstance(v, dict):
                for x in v.values():
                    walk(x)
        walk(json.loads(path.read_text()))
    tokens |= {'{"name": "', '"arguments": {', '"parameters": ', '": ', '", "', "}}", "[{", "}]",
               '}, {"name": "', ', "id": "', "}, {",
               "\\u00e9", "\\ud83d\\ude00", "true", "null", "1e400", "-0.0", "12345678901234567890123",
               "<parameter=", "</parameter>", "<function=", "</function>", "\n"}
    lines = []
    for token in sorted(tokens):
        escaped = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else
                          "".join(f"\\x{b:02x}" for b in c.encode()) for c in token)
        lines.append(f'"{escaped}"')
    (FUZZ / "formats.dict").write_text("\n".join(lines) + "\n")
    print(f"{len(NAMES)} names, {sum(len(v) for v in outputs.values())} outputs, {len(tokens)} tokens")


if __name__ == "__main__":
    main()
