#!/usr/bin/env python3
"""Compare chatparse's AgentScope-style parsers with the `agentscope` package's own (0.1.6).

    python3 scripts/check_agentscope.py CORPUS.json
    python3 scripts/check_agentscope.py --version   # exit 0 when agentscope.parsers loads

CORPUS.json is written by `cargo test --test agentscope` (target/tmp/agentscope-check/
corpus.json): {"parsers": [{"id", "spec", "ours": {"instruction"}, "cases": [{"text", "ours":
RESULT, "routing": {"content"|"memory"|"metadata": {"strict"|"allow_missing": RESULT}}}]}]}.
For each parser the script builds the same parser with `agentscope.parsers`, parses each text
(`parser.parse(ModelResponse(text=…)).parsed`) and routes the parsed dict
(`to_content`/`to_memory`/`to_metadata`, with `allow_missing` False and True), and compares
with chatparse's result. A RESULT is {"ok": value} or {"error": kind, "items": [...]}; kinds:
TagNotFound (TagNotFoundError: the missing tags), Json (JsonParsingError), NotAnObject
(JsonTypeError), MissingKeys (RequiredFieldNotFoundError: the missing keys), KeyNotFound
(KeyError / ValueError of the routing: the key). A case with "known": WHY is a judged
difference: it must differ, and is listed with its reason. Exit 1 on any other difference.

agentscope 0.1.6's package `__init__` imports the whole framework (agents, RPC, web studio,
a SQL monitor: numpy, scipy, sqlalchemy, socketio, …); its parsers need none of it. When
`import agentscope.parsers` fails for a missing module, the parsers are loaded without the
`__init__` of `agentscope`, `agentscope.models` and `agentscope.utils` (the modules the
parsers import — `agentscope.parsers.*`, `agentscope.exception`, `agentscope.models.response`,
`agentscope.utils.common`, `agentscope.message` — run unchanged, and `agentscope.models.
ModelResponse` is set as `agentscope/models/__init__.py` sets it). Then the package needs only
loguru, pydantic, psutil and requests: `pip install loguru pydantic psutil requests` and
`pip install --no-deps agentscope==0.1.6`.
"""

import importlib.util
import json
import math
import sys
import types
import warnings


def load_agentscope():
    """(parsers module, ModelResponse, exception module, how)."""
    warnings.filterwarnings("ignore")
    try:
        from loguru import logger

        logger.remove()
    except ImportError:
        pass
    try:
        import agentscope.parsers as parsers
        from agentscope import exception
        from agentscope.models import ModelResponse

        return parsers, ModelResponse, exception, "import agentscope.parsers"
    except ModuleNotFoundError:
        for name in list(sys.modules):
            if name == "agentscope" or name.startswith("agentscope."):
                del sys.modules[name]
    spec = importlib.util.find_spec("agentscope")
    if spec is None:
        raise ImportError("agentscope is not installed")

    def stub(name, path):
        m = types.ModuleType(name)
        m.__path__ = [path]
        m.__package__ = name
        sys.modules[name] = m
        return m

    root = spec.submodule_search_locations[0]
    stub("agentscope", root)
    models = stub("agentscope.models", root + "/models")
    stub("agentscope.utils", root + "/utils")
    from agentscope.models.response import ModelResponse

    models.ModelResponse = ModelResponse
    import agentscope.parsers as parsers
    from agentscope import exception

    return parsers, ModelResponse, exception, "agentscope.parsers without the package __init__"


def version():
    from importlib.metadata import version as v

    return v("agentscope")


def build(P, spec):
    kind = spec["kind"]
    routing = spec.get("routing") or {}
    r = {f"keys_to_{k}": v for k, v in routing.items()}
    if kind == "code_block":
        return P.MarkdownCodeBlockParser(spec["language"], spec.get("content_hint"))
    if kind == "json_object":
        return P.MarkdownJsonObjectParser(spec.get("content_hint"))
    if kind == "json_dict":
        return P.MarkdownJsonDictParser(
            content_hint=spec.get("content_hint"), required_keys=spec.get("required_keys"), **r
        )
    if kind == "multi_tagged":
        tags = [
            P.TaggedContent(t["name"], t["tag_begin"], t["content_hint"], t["tag_end"],
                            parse_json=t["parse_json"])
            for t in spec["tags"]
        ]
        return P.MultiTaggedContentParser(
            *tags, keys_allow_missing=spec.get("keys_allow_missing"), **r
        )
    if kind == "regex_tagged":
        kw = {}
        if spec.get("pattern") is not None:
            kw["tagged_content_pattern"] = spec["pattern"]
        return P.RegexTaggedContentParser(
            format_instruction=spec.get("format_instruction"),
            try_parse_json=spec.get("try_parse_json", True),
            required_keys=spec.get("required_keys"),
            **kw,
            **r,
        )
    raise ValueError(kind)


def instruction(parser):
    try:
        return parser.format_instruction
    except ValueError:
        return None  # RegexTaggedContentParser without one raises


def plain(v):
    """The parsed value as JSON would carry it (NaN and infinities marked)."""
    if isinstance(v, float) and not math.isfinite(v):
        return {"__python_float__": repr(v)}
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def missing_keys_message(keys):
    if len(keys) == 1:
        joined = keys[0]
    elif len(keys) == 2:
        joined = " and ".join(keys)
    else:
        joined = ", ".join(keys[:-1]) + f", and {keys[-1]}"
    return f"Missing required field{'' if len(keys) == 1 else 's'} {joined} in the JSON dictionary object."


def same(E, kind, theirs_exc, theirs_ok, ours, spec):
    """Whether the package's outcome (a value or an exception) is our RESULT."""
    if theirs_exc is None:
        return "ok" in ours and plain(theirs_ok) == ours["ok"] and _same_types(
            plain(theirs_ok), ours["ok"])
    e = theirs_exc
    err = ours.get("error")
    items = ours.get("items", [])
    if isinstance(e, E.TagNotFoundError):
        if err != "TagNotFound":
            return False
        if kind == "regex_tagged":
            return e.message == f"Failed to find tags: {', '.join(items)}"
        # Which of the pair is missing: the exception's flags; the pair is the tags in ours.
        return bool(e.missing_begin_tag) + bool(e.missing_end_tag) == len(items) and all(
            t in e.message for t in items)
    if isinstance(e, E.JsonTypeError):
        return err == "NotAnObject"
    if isinstance(e, E.RequiredFieldNotFoundError):
        return err == "MissingKeys" and e.message == missing_keys_message(items)
    if isinstance(e, E.JsonParsingError):
        return err == "Json"
    if isinstance(e, KeyError):
        return err == "KeyNotFound" and e.args[0] == items[0]
    if isinstance(e, ValueError) and str(e).startswith("Name "):
        return err == "KeyNotFound" and str(e) == f"Name {items[0]} not found in the response."
    return False


def _same_types(a, b):
    """True/1/1.0 are equal in Python; JSON tells them apart."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(
            _same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _same_types(x, y) for x, y in zip(a, b))
    return type(a) is type(b) or (isinstance(a, float) and isinstance(b, float))


def outcome(f):
    try:
        return None, f()
    except Exception as e:  # noqa: BLE001
        return e, None


def describe(exc, ok):
    text = f"ok {json.dumps(plain(ok), ensure_ascii=False)}" if exc is None else \
        f"{type(exc).__name__}: {exc}"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates


def main():
    if sys.argv[1:] == ["--version"]:
        *_, how = load_agentscope()
        print(f"agentscope {version()} ({how})")
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    P, ModelResponse, E, how = load_agentscope()
    with open(sys.argv[1], encoding="utf-8") as f:
        corpus = json.load(f)
    differences, judged = [], []
    n_parsers = n_parses = n_routes = n_instr = 0
    for p in corpus["parsers"]:
        spec = p["spec"]
        kind = spec["kind"]
        parser = build(P, spec)
        n_parsers += 1
        n_instr += 1
        theirs = instruction(parser)
        if theirs != p["ours"]["instruction"]:
            differences.append(f"{p['id']} instruction: agentscope {theirs!r}, chatparse "
                               f"{p['ours']['instruction']!r}")
        for case in p["cases"]:
            text = case["text"]
            shown = text if len(text) <= 160 else text[:100] + f"…({len(text)} chars)"
            where = f"{p['id']} {shown!r}"
            exc, ok = outcome(lambda: parser.parse(ModelResponse(text=text)).parsed)
            n_parses += 1
            agree = same(E, kind, exc, ok, case["ours"], spec)
            rows = []
            if not agree:
                rows.append(f"{where}: agentscope {describe(exc, ok)}; chatparse "
                            f"{json.dumps(case['ours'], ensure_ascii=False)}")
            if exc is None and isinstance(ok, dict):
                for target, results in case.get("routing", {}).items():
                    f = getattr(parser, f"to_{target}")
                    for mode, ours in results.items():
                        rexc, rok = outcome(lambda: f(ok, allow_missing=mode == "allow_missing"))
                        n_routes += 1
                        if rexc is None and rok is None:
                            rok_result = {"ok": None}
                            good = ours == rok_result
                        else:
                            good = same(E, kind, rexc, rok, ours, spec)
                        if not good:
                            agree = False
                            rows.append(f"{where} to_{target}({mode}): agentscope "
                                        f"{describe(rexc, rok)}; chatparse {json.dumps(ours)}")
            if case.get("known"):
                if agree:
                    differences.append(f"{where}: listed as a known difference but agrees "
                                       f"({case['known']})")
                else:
                    judged.append(f"{where}: {case['known']}\n    " + "\n    ".join(rows))
            else:
                differences.extend(rows)
    sys.stdout.reconfigure(errors="backslashreplace")
    print(f"agentscope {version()} ({how}): {n_parsers} parsers, {n_instr} instructions, "
          f"{n_parses} parses, {n_routes} routings compared")
    if judged:
        print(f"\n{len(judged)} known differences (judged in tests/agentscope.rs):")
        print("\n".join(judged))
    if differences:
        print(f"\n{len(differences)} DIFFERENCES:")
        print("\n".join(differences))
        sys.exit(1)
    print("no other difference")


if __name__ == "__main__":
    main()
