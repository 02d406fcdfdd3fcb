"""Shared helpers: the repository's reference corpora and Python-value comparison.

Every expectation comes from the corpora the reference produced (scripts/reference/), never from
chatparse's own output: tests/conformance/expected/ (transformers 5.10.4 `recursive_parse`) and
tests/streaming/expected/ (transformers 5.23.0 `ResponseParser`).
"""

import json
import math
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tests" / "conformance" / "expected"
STREAMING = ROOT / "tests" / "streaming" / "expected"


def read_json(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def read_text(path):
    # newline="": keep \r\n and \r exactly as the file has them (as the reference generator did).
    with open(ROOT / path, encoding="utf-8", newline="") as f:
        return f.read()


# The conformance cases where a shipped name's completeness check refuses what the reference (the
# schema alone) returns, because the schema's message would leave out a part of the output:
# {(shipped name, case name)}, from tests/conformance/check_refuses.json (tests/checks.rs reads it
# too).
CHECK_REFUSES = {
    (c["family"], c["case"])
    for c in read_json(CONFORMANCE.parent / "check_refuses.json")["cases"]
}


def conformance_suites():
    """[(suite name, schema dict, [case])], each case with its `input` read."""
    out = []
    for path in sorted(CONFORMANCE.glob("*.json")):
        doc = read_json(path)
        schema = doc["schema"]
        if isinstance(schema, str):
            schema = read_json(ROOT / schema)
        cases = []
        for case in doc["cases"]:
            case = dict(case)
            if "input_file" in case:
                case["input"] = read_text(case["input_file"])
            cases.append(case)
        out.append((doc["suite"], doc["schema"], schema, cases))
    return out


def streaming_docs():
    """[(file name, document)] of the streaming corpus, without the invalid templates."""
    return [
        (path.name, read_json(path))
        for path in sorted(STREAMING.glob("*.json"))
        if path.name != "invalid_templates.json"
    ]


def error_class(recorded):
    """'ValueError: message' -> 'ValueError'."""
    return recorded.split(":", 1)[0]


def same_value(a, b):
    """Equality as the reference's values: int, float and bool kept apart, floats by value (and
    the sign of zero), dict key order significant."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return False
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


def short(value, limit=400):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
