#!/usr/bin/env python3
"""Check chatparse's grammars with a second real engine: xgrammar.

    python3 scripts/check_grammars_xgrammar.py FIXTURE.json [--family NAME] [--format gbnf|structural-tag]
    python3 scripts/check_grammars_xgrammar.py --version   # exit 0 when xgrammar loads

FIXTURE.json is the one `cargo test --test grammar` writes for scripts/check_grammars.py
(target/tmp/grammar-check/fixture.json): per family the grammars under each tool-choice setting,
the outputs, and whether each must be accepted. Here xgrammar judges them:

- the GBNF (llama.cpp's dialect), read by xgrammar's own EBNF reader (`Grammar.from_ebnf`);
- the structural tag, compiled by xgrammar itself (`Grammar.from_structural_tag`: the JSON that
  vLLM and SGLang hand to xgrammar) — no translation;
- llama.cpp's lazy grammar, from the first trigger on.

A text is accepted as xgrammar's own test helper (`xgrammar.testing._is_grammar_accept_string`)
decides it: a matcher over an empty vocabulary that ends without a stop token
(`terminate_without_stop_token=True`) takes the whole string (`accept_string`) and is then
terminated (`is_terminated`). Exit 1 on any verdict that differs from the expectation.

xgrammar's Python package imports torch (its token-bitmask helpers) and transformers (its
tokenizer adapters) at the top of `xgrammar/__init__.py`; none of that is needed to compile a
grammar and match a string. So the package is loaded without running its `__init__`: its
torch-free modules (`load_binding`, `base`, `grammar`, `structural_tag`) are imported as usual,
and the compiler, matcher and tokenizer info are the compiled core's own objects
(`xgrammar.base._core`: the ones `GrammarCompiler`, `GrammarMatcher` and `TokenizerInfo` wrap),
called with the arguments those wrappers pass. No stand-in module replaces torch or
transformers, and no code path of xgrammar that uses them runs. Install with
`pip install --no-deps xgrammar apache-tvm-ffi pydantic pydantic-core annotated-types
typing-inspection typing-extensions numpy`.
"""

import argparse
import importlib.util
import sys
import time
import types

from grammar_fixture import families, finish, lazy_text, mismatch


def load_xgrammar():
    """(Grammar, core): xgrammar's Grammar class and its compiled core, without torch."""
    spec = importlib.util.find_spec("xgrammar")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("xgrammar is not installed")
    if "xgrammar" not in sys.modules:
        pkg = types.ModuleType("xgrammar")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__package__ = "xgrammar"
        pkg.__spec__ = spec
        sys.modules["xgrammar"] = pkg
    import xgrammar.load_binding  # noqa: F401  (loads libxgrammar_bindings)
    from xgrammar.base import _core
    from xgrammar.grammar import Grammar

    return Grammar, _core


try:
    Grammar, core = load_xgrammar()
except ImportError as e:
    print(f"xgrammar cannot be loaded: {e}", file=sys.stderr)
    sys.exit(3)


def version():
    from importlib.metadata import version as v

    return v("xgrammar")


class Engine:
    def __init__(self):
        # TokenizerInfo([]) (encoded_vocab, VocabType.RAW, vocab_size, stop_token_ids,
        # add_prefix_space) and GrammarCompiler(info, cache_enabled=False) (max_threads 8 is the
        # wrapper's default; 1 here: the machine is shared), as testing._get_matcher_from_grammar.
        self.info = core.TokenizerInfo([], 0, None, None, False)
        self.compiler = core.GrammarCompiler(self.info, 1, False, -1)

    def compile_ebnf(self, text):
        return self.compiler.compile_grammar_ebnf(Grammar.from_ebnf(text)._handle)

    def compile_structural_tag(self, tag):
        return self.compiler.compile_grammar_ebnf(Grammar.from_structural_tag(tag)._handle)

    @staticmethod
    def verdict(compiled, text):
        """(accepted, detail), as testing._is_grammar_accept_string with require_termination."""
        # GrammarMatcher(compiled, override_stop_tokens=None, terminate_without_stop_token=True,
        # max_rollback_tokens=-1, default_temperature=None)
        m = core.GrammarMatcher(compiled, None, True, -1, None)
        if not m.accept_string(text, False):
            # Find where: the longest prefix the matcher takes (by character).
            lo, hi = 0, len(text)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                p = core.GrammarMatcher(compiled, None, True, -1, None)
                if p.accept_string(text[:mid], False):
                    lo = mid
                else:
                    hi = mid - 1
            return False, f"refused at char {lo} after {text[max(0, lo - 40):lo]!r}"
        if not m.is_terminated():
            return False, "not terminated at the end"
        return True, "accepted"


def check_translation(engine):
    """scripts/check_grammars.py translates structural tags to Lark for llguidance; its reading
    of `at_least_one` and `stop_after_first` must be xgrammar's. Compared here on probe strings
    under the four flag settings (when llguidance is importable too); returns the differences."""
    try:
        import os

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import check_grammars as lg
    except ImportError:
        return None
    tags = [
        {"begin": "<t>", "content": {"type": "json_schema", "json_schema": {"type": "integer"}},
         "end": "</t>"},
        {"begin": "<tt>", "content": {"type": "json_schema", "json_schema": {"type": "boolean"}},
         "end": "</tt>"},
    ]
    probes = ["<t>1</t>", "hi <t>1</t>", "<t>1</t> ", "<t>1</t>\n", "<t>1</t><tt>true</tt>",
              "<t>1</t> tail", "hi", "", "<t>x</t>", "a <tt>true</tt> b <t>2</t>", "\n<t>1</t>"]
    diffs = []
    for alo in (False, True):
        for saf in (False, True):
            tag = {"type": "structural_tag", "format": {
                "type": "triggered_tags", "triggers": ["<t"], "tags": tags,
                "at_least_one": alo, "stop_after_first": saf}}
            ours, theirs = lg.structural_tag_to_llguidance(tag), engine.compile_structural_tag(tag)
            for s in probes:
                a, b = lg.verdict(ours, s)[0], engine.verdict(theirs, s)[0]
                if a != b:
                    diffs.append(f"translation at_least_one={alo} stop_after_first={saf} {s!r}: "
                                 f"llguidance {a}, xgrammar {b}")
    return diffs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture", nargs="?")
    ap.add_argument("--family")
    ap.add_argument("--format", choices=["gbnf", "structural-tag"])
    ap.add_argument("--version", action="store_true", help="print xgrammar's version and exit")
    args = ap.parse_args()
    if args.version:
        print(f"xgrammar {version()}")
        return
    if not args.fixture:
        ap.error("FIXTURE.json is required")
    selected = families(args.fixture, args.family)
    engine = Engine()
    failures = []
    summary = []
    totals = {}
    started = time.monotonic()

    def check(name, fmt, options, compiled, case, text=None, want=None):
        text = case["text"] if text is None else text
        want = case["accept"][options] if want is None else want
        got, detail = engine.verdict(compiled, text)
        totals[fmt] = totals.get(fmt, 0) + 1
        if got != want:
            failures.append(mismatch(f"{name} {fmt} {options}", case, want, detail, text))

    for fam in selected:
        name = fam["family"]
        if args.format in (None, "gbnf"):
            n = 0
            for options, grammars in fam["grammars"].items():
                try:
                    compiled = engine.compile_ebnf(grammars["gbnf"])
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name} gbnf {options}: does not compile: {e}")
                    continue
                for case in fam["cases"]:
                    check(name, "gbnf", options, compiled, case)
                    n += 1
            summary.append(f"{name} gbnf: {n} cases")
        if args.format in (None, "structural-tag"):
            n = 0
            for options, grammars in fam["grammars"].items():
                tag = grammars["structural_tag"]
                try:
                    compiled = engine.compile_structural_tag(tag)
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name} structural-tag {options}: does not compile: {e}")
                    continue
                # Triggered tags allow text after the calls (xgrammar's definition), so that
                # violation is not checked on them.
                triggered = tag["format"]["type"] == "triggered_tags"
                for case in fam["cases"]:
                    if triggered and case["what"].endswith("+text_after_calls"):
                        continue
                    check(name, "structural-tag", options, compiled, case)
                    n += 1
            summary.append(f"{name} structural-tag: {n} cases")
        lazy = fam.get("lazy")
        if lazy and args.format in (None, "gbnf"):
            try:
                compiled = engine.compile_ebnf(lazy["gbnf"])
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name} gbnf-lazy: does not compile: {e}")
                compiled = None
            n = 0
            for case in fam["cases"] if compiled is not None else []:
                text = lazy_text(lazy, case["text"])
                if text is None:
                    continue
                check(name, "gbnf-lazy", "auto", compiled, case, text=text,
                      want=case["accept"]["auto"])
                n += 1
            summary.append(f"{name} gbnf-lazy: {n} cases")
    translation = check_translation(engine)
    if translation is None:
        summary.append("structural-tag translation for llguidance: not compared (no llguidance)")
    else:
        summary.append("structural-tag translation for llguidance: 44 probes compared")
        failures.extend(translation)
    print("\n".join(summary))
    print(
        f"xgrammar {version()}: "
        + ", ".join(f"{k} {v}" for k, v in totals.items())
        + f" verdicts in {time.monotonic() - started:.1f} s"
    )
    finish(failures)


if __name__ == "__main__":
    main()
