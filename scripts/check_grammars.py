#!/usr/bin/env python3
"""Check chatparse's grammars with a real engine: llguidance.

    python3 scripts/check_grammars.py FIXTURE.json [--family NAME] [--format gbnf|lark]

FIXTURE.json is written by `cargo test --test grammar` (target/tmp/grammar-check/fixture.json):
{"families": [{"family", "grammars": {OPTIONS: {"gbnf": …, "lark": …}}, "cases": [{"what",
"text", "accept": {OPTIONS: bool}}]}]}. Every case is fed, byte by byte, to an llguidance
matcher with a byte-level tokenizer (256 byte tokens and an end token), so the matcher is a
plain acceptor of the grammar: a text is accepted when every byte is allowed and the matcher
accepts at the end. GBNF is read through llguidance's own GBNF front end
(`llguidance.grammar_from("gbnf", …)`), Lark directly. Exit 1 on any verdict that differs from
the expectation, listing each; the summary gives per family and format the cases checked.
"""

import argparse
import json

import llguidance as llg

from grammar_fixture import families, finish, lazy_text, mismatch


class ByteTokenizer:
    def __init__(self):
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.eos_token_id = 256
        self.bos_token_id = None
        self.special_token_ids = [256]

    def __call__(self, s):
        if isinstance(s, str):
            s = s.encode("utf-8")
        return list(s)


TOKENIZER = llg.LLTokenizer(llg.TokenizerWrapper(ByteTokenizer()))


def compile_grammar(fmt, text):
    if fmt == "gbnf":
        return llg.grammar_from("gbnf", text)
    return llg.grammar_from("lark", text)


def structural_tag_to_llguidance(tag):
    """xgrammar's structural tag as an llguidance grammar, for checking it with llguidance.

    `{"type": "grammar"}`: the GBNF. `{"type": "triggered_tags"}`: free text in which every
    occurrence of a trigger starts one of the tags (`begin`, the content — a JSON schema, or
    GBNF —, `end`); `at_least_one`: the output starts with a tag; `stop_after_first`: the
    output ends with the first tag's end. Those two readings are xgrammar's own (0.2.8, as
    scripts/check_grammars_xgrammar.py measures them: `at_least_one` allows no text before the
    first tag, `stop_after_first` not even whitespace after it); chatparse's structural tags set
    neither, and the translation keeps them for the record.
    """
    fmt = tag["format"]
    if fmt["type"] == "grammar":
        return compile_grammar("gbnf", fmt["grammar"])
    assert fmt["type"] == "triggered_tags", fmt["type"]
    triggers = fmt["triggers"]
    trig_re = "|".join(re_escape(t) for t in triggers)
    lines = ["%llguidance {}", ""]
    subs = []
    tag_rules = []
    for i, t in enumerate(fmt["tags"]):
        trig = next((x for x in triggers if t["begin"].startswith(x)), None)
        assert trig is not None, t["begin"]
        rest = t["begin"][len(trig):]
        c = t["content"]
        if c["type"] == "json_schema":
            content = "%json " + json.dumps(c["json_schema"])
        else:
            sub = f"content{i}"
            subs.append({"name": sub, "lark_grammar": gbnf_to_lark(c["grammar"])})
            content = "@" + sub
        pre = f"pre_{triggers.index(trig)}"
        body = " ".join(x for x in [pre, json.dumps(rest) if rest else "", content,
                                      json.dumps(t["end"]) if t["end"] else ""] if x)
        lines.append(f"tag_{i}: {body}")
        first = " ".join(x for x in [json.dumps(t["begin"]), content,
                                       json.dumps(t["end"]) if t["end"] else ""] if x)
        lines.append(f"first_{i}: {first}")
        tag_rules.append(f"tag_{i}")
    for j, trig in enumerate(triggers):
        lines.append(f"pre_{j}[lazy]: ANY {json.dumps(trig)}")
    tags = " | ".join(tag_rules)
    firsts = " | ".join(r.replace("tag_", "first_") for r in tag_rules)
    if fmt.get("stop_after_first"):
        start = f"({firsts})" if fmt.get("at_least_one") else f"({tags}) | TEXT"
    elif fmt.get("at_least_one"):
        start = f"({firsts}) ({tags})* TEXT"
    else:
        start = f"({tags})* TEXT"
    lines.insert(2, f"start: {start}")
    lines.append("ANY: /(?s:.*)/")
    lines.append(f"TEXT: /(?s:.*)/ & ~/(?s:.*(?:{trig_re}).*)/")
    main = "\n".join(lines) + "\n"
    if not subs:
        return llg.grammar_from("lark", main)
    return json.dumps({"grammars": [{"lark_grammar": main}] + subs})


def re_escape(s):
    out = []
    for ch in s:
        if ch in "\\.+*?()|[]{}^$#&-~/":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
    return "".join(out)


def gbnf_to_lark(text):
    from llguidance.gbnf_to_lark import any_to_lark

    return any_to_lark(text)


class SpecialTokenizer(ByteTokenizer):
    def __init__(self, special):
        super().__init__()
        self.special = list(special)
        self.tokens = self.tokens + [t.encode("utf-8") for t in self.special]
        self.special_token_ids = [256] + list(range(257, 257 + len(self.special)))


def special_tokenizer(special):
    st = SpecialTokenizer(special)
    return (llg.LLTokenizer(llg.TokenizerWrapper(st)), st)


def token_ids(tok, special, text):
    """The text as byte tokens, each special token (longest first) one token."""
    _, st = tok
    ordered = sorted(special, key=len, reverse=True)
    out = []
    i = 0
    while i < len(text):
        for s in ordered:
            if text.startswith(s, i):
                out.append(257 + st.special.index(s))
                i += len(s)
                break
        else:
            out.extend(text[i].encode("utf-8"))
            i += 1
    return out


def verdict_tokens(tok, grammar, ids):
    m = llg.LLMatcher(tok[0], grammar, log_level=0)
    if m.is_error():
        return False, "grammar error: " + m.get_error()
    for i, t in enumerate(ids):
        if not m.consume_token(t):
            return False, f"token {i} ({t}) refused"
    if not m.is_accepting():
        return False, "not accepting at the end"
    return True, "accepted"


_MATCHERS = {}


def verdict(grammar, text):
    """(accepted, detail). The grammar is compiled once; each text runs on a fresh copy."""
    fresh = _MATCHERS.get(grammar)
    if fresh is None:
        fresh = llg.LLMatcher(TOKENIZER, grammar, log_level=0)
        if fresh.is_error():
            raise ValueError(fresh.get_error())
        _MATCHERS.clear()
        _MATCHERS[grammar] = fresh
    m = fresh.deep_copy()
    data = text.encode("utf-8")
    for i, b in enumerate(data):
        if not m.consume_token(b):
            return False, f"byte {i} refused after {data[max(0, i - 40):i]!r}"
    if not m.is_accepting():
        return False, "not accepting at the end"
    return True, "accepted"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture")
    ap.add_argument("--family")
    ap.add_argument("--format", choices=["gbnf", "lark", "structural-tag"])
    args = ap.parse_args()
    failures = []
    summary = []
    for fam in families(args.fixture, args.family):
        name = fam["family"]
        for fmt in ["gbnf", "lark"]:
            if args.format and fmt != args.format:
                continue
            n = 0
            for options, grammars in fam["grammars"].items():
                try:
                    grammar = compile_grammar(fmt, grammars[fmt])
                    llg.LLMatcher(TOKENIZER, grammar, log_level=0)
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name} {fmt} {options}: grammar does not compile: {e}")
                    continue
                for case in fam["cases"]:
                    want = case["accept"][options]
                    try:
                        got, detail = verdict(grammar, case["text"])
                    except ValueError as e:
                        failures.append(f"{name} {fmt} {options}: matcher error: {e}")
                        break
                    n += 1
                    if got != want:
                        failures.append(mismatch(f"{name} {fmt} {options}", case, want, detail))
            summary.append(f"{name} {fmt}: {n} cases")
        # xgrammar's structural tag, read as llguidance grammar: its triggered tags allow text
        # after the calls, so that violation is not checked here.
        if args.format in (None, "structural-tag"):
            n = 0
            for options, grammars in fam["grammars"].items():
                try:
                    grammar = structural_tag_to_llguidance(grammars["structural_tag"])
                    m = llg.LLMatcher(TOKENIZER, grammar, log_level=0)
                    if m.is_error():
                        raise ValueError(m.get_error())
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name} structural-tag {options}: does not compile: {e}")
                    continue
                triggered = grammars["structural_tag"]["format"]["type"] == "triggered_tags"
                for case in fam["cases"]:
                    if triggered and case["what"].endswith("+text_after_calls"):
                        continue
                    want = case["accept"][options]
                    got, detail = verdict(grammar, case["text"])
                    n += 1
                    if got != want:
                        failures.append(
                            mismatch(f"{name} structural-tag {options}", case, want, detail)
                        )
            summary.append(f"{name} structural-tag: {n} cases")
        # Lark with the format's special tokens as tokens (a tokenizer that has them).
        ls = fam["grammars"].get("auto", {}).get("lark_special")
        if ls and args.format in (None, "lark"):
            special = ls["special_tokens"]
            tok = special_tokenizer(special)
            grammar = llg.grammar_from("lark", ls["lark"])
            n = 0
            for case in fam["cases"]:
                want = case["accept"]["auto"]
                got, detail = verdict_tokens(tok, grammar, token_ids(tok, special, case["text"]))
                n += 1
                if got != want:
                    failures.append(mismatch(f"{name} lark-special auto", case, want, detail))
            summary.append(f"{name} lark-special-tokens: {n} cases")
        # llama.cpp's lazy grammar: from the first trigger on (the text before it is free).
        lazy = fam.get("lazy")
        if lazy and args.format in (None, "gbnf"):
            grammar = compile_grammar("gbnf", lazy["gbnf"])
            n = 0
            for case in fam["cases"]:
                text = lazy_text(lazy, case["text"])
                if text is None:
                    continue
                want = case["accept"]["auto"]
                got, detail = verdict(grammar, text)
                n += 1
                if got != want:
                    failures.append(mismatch(f"{name} gbnf-lazy", case, want, detail, text))
            summary.append(f"{name} gbnf-lazy: {n} cases")
    print("\n".join(summary))
    finish(failures)


if __name__ == "__main__":
    main()
