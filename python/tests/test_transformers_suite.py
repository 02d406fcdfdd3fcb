"""transformers' own response-parsing tests, with transformers' parser swapped for chatparse's.

Needs transformers installed (5.10.x for the x-regex schema tests, `recursive_parse`; 5.23.x for
the response-template tests, `parse_response`/`ResponseParser`) and its test files, which the
wheel does not ship: point CHATPARSE_TRANSFORMERS_TESTS at a directory holding
`test_chat_parsing_utils.py` and/or `test_chat_parsing.py` (a transformers checkout's
`tests/utils`, at the tag of the installed version). Skipped, and said so, otherwise.

Every test first runs against transformers itself, offline: a test that does not pass there (it
needs the network, e.g. a tokenizer from the Hub, or belongs to another transformers version)
is not applicable and reported as such. Every test that passes on the reference must pass with
chatparse in its place.
"""

import importlib.util
import os
import pathlib
import sys
import unittest
import warnings

import pytest

import chatparse

TESTS_DIR = os.environ.get("CHATPARSE_TRANSFORMERS_TESTS")
FILES = {
    # file: the transformers module it tests
    "test_chat_parsing_utils.py": "transformers.utils.chat_parsing_utils",
    "test_chat_parsing.py": "transformers.utils.chat_parsing",
}


def skip_loudly(reason):
    message = f"transformers' own parsing tests NOT RUN: {reason}"
    print(f"\n*** {message}", file=sys.stderr)
    warnings.warn(message, stacklevel=2)
    pytest.skip(message, allow_module_level=True)


try:
    import transformers
except ImportError:
    transformers = None


def applicable_files():
    if transformers is None:
        skip_loudly("transformers is not installed (pip install transformers==5.10.4 jmespath, or 5.23.0)")
    if not TESTS_DIR:
        skip_loudly("set CHATPARSE_TRANSFORMERS_TESTS to a transformers checkout's tests/utils directory")
    found = []
    for name, module in FILES.items():
        path = pathlib.Path(TESTS_DIR) / name
        if not path.exists():
            continue
        try:
            importlib.import_module(module)
        except ImportError:
            continue  # that module is not in the installed version
        found.append(path)
    if not found:
        skip_loudly(f"no test file in {TESTS_DIR} matches transformers {transformers.__version__}")
    return found


os.environ.setdefault("HF_HUB_OFFLINE", "1")


def load(path):
    spec = importlib.util.spec_from_file_location(f"transformers_tests_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CALLS = [0]


def counted(function):
    def wrapper(*args, **kwargs):
        CALLS[0] += 1
        return function(*args, **kwargs)

    return wrapper


def chatparse_recursive_parse(original):
    def recursive_parse(node_content, node_schema):
        if isinstance(node_content, str):
            CALLS[0] += 1
            return chatparse.parse_response(node_content, node_schema)
        return original(node_content, node_schema)  # a non-str node: not a model output

    return recursive_parse


CountedResponseParser = counted(chatparse.ResponseParser)


def swaps(module):
    """(owner, attribute, chatparse's version) for every place the tests reach the parser."""
    out = []
    targets = [module]
    for name in ("transformers.tokenization_utils_base", "transformers.processing_utils"):
        if name in sys.modules:
            targets.append(sys.modules[name])
    for name in ("transformers.utils.chat_parsing", "transformers.utils.chat_parsing.response_parser"):
        if name in sys.modules:
            targets.append(sys.modules[name])
    for owner in targets:
        if hasattr(owner, "recursive_parse"):
            out.append((owner, "recursive_parse", chatparse_recursive_parse(owner.recursive_parse)))
        if hasattr(owner, "parse_response") and not isinstance(owner, type):
            original = owner.parse_response
            if callable(original) and getattr(original, "__module__", "").startswith("transformers.utils.chat_parsing"):
                out.append((owner, "parse_response", counted(chatparse.parse_response)))
        if hasattr(owner, "ResponseParser"):
            out.append((owner, "ResponseParser", CountedResponseParser))
    return out


def run(test):
    result = unittest.TestResult()
    test.run(result)
    if result.skipped:
        return "skipped", result.skipped[0][1]
    problems = result.errors + result.failures
    if problems:
        return "failed", problems[0][1]
    return "passed", ""


def collect():
    tests = []
    for path in applicable_files():
        module = load(path)
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
        stack = [suite]
        while stack:
            item = stack.pop()
            if isinstance(item, unittest.TestSuite):
                stack.extend(item)
            else:
                tests.append((module, item))
    return sorted(tests, key=lambda t: t[1].id())


TESTS = collect()


def test_transformers_tests_were_found():
    assert TESTS


@pytest.mark.parametrize("module, test", [pytest.param(m, t, id=t.id().split(".", 1)[1]) for m, t in TESTS])
def test_with_chatparse_in_place_of_the_reference(module, test):
    status, detail = run(test)
    if status != "passed":
        pytest.skip(f"not applicable: {status} on transformers {transformers.__version__} itself ({detail.strip().splitlines()[-1][:200] if detail else ''})")
    swapped = swaps(module)
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in swapped]
    CALLS[0] = 0
    try:
        for owner, attr, replacement in swapped:
            setattr(owner, attr, replacement)
        status, detail = run(test)
    finally:
        for owner, attr, original in saved:
            setattr(owner, attr, original)
    assert status == "passed", detail
    if CALLS[0] == 0:
        pytest.skip("passes, but never reaches the parser (tests a helper of transformers' own)")
