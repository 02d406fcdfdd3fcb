"""What the two grammar checkers share (scripts/check_grammars.py, llguidance, and
scripts/check_grammars_xgrammar.py, xgrammar): reading the fixture `cargo test --test grammar`
writes (target/tmp/grammar-check/fixture.json), the text a lazy grammar sees, and how a verdict
that differs from the expectation is reported.
"""

import json
import sys


def families(path, only=None):
    """The fixture's families, in its order; with `only` (`--family NAME`), that one alone."""
    with open(path, encoding="utf-8") as f:
        fixture = json.load(f)
    return [fam for fam in fixture["families"] if not only or fam["family"] == only]


def lazy_text(lazy, text):
    """The part of `text` a lazy grammar (llama.cpp's) judges: from the first of its triggers on
    (the text before it is free); None when no trigger occurs."""
    at = [text.find(t) for t in lazy["triggers"] if t in text]
    return text[min(at):] if at else None


def mismatch(where, case, want, detail, text=None):
    """A failure line: `case`'s text (or the part of it given as `text`) was to be accepted or not
    as `want` says, and the engine said `detail`; `where` names the family, format and options."""
    text = case["text"] if text is None else text
    verdict = "accept" if want else "reject"
    return f"{where} {case['what']}: want {verdict}, got {detail}; text {text!r}"


def finish(failures):
    """Lists the failures and exits 1, or says all verdicts were as expected."""
    if failures:
        print(f"\n{len(failures)} FAILURES:")
        print("\n".join(failures))
        sys.exit(1)
    print("all verdicts as expected")
