"""The x-regex conformance corpus (transformers 5.10.4 `recursive_parse`): every case gives the
reference's value, or raises the exception class the reference raised (or
`chatparse.UnrepresentableError` where the reference returned a value JSON cannot carry)."""

import pytest

import chatparse
from conftest import CHECK_REFUSES, conformance_suites, error_class, same_value, short

SUITES = conformance_suites()
CASES = [
    pytest.param(schema, case, id=f"{suite}/{case['name']}")
    for suite, _, schema, cases in SUITES
    for case in cases
]


def test_the_corpus_is_all_there():
    # As tests/conformance.rs: the corpus must not shrink unnoticed.
    assert len(CASES) >= 400
    assert len({repr(schema) for _, _, schema, _ in SUITES}) >= 12


def check(parse, case):
    expect = case["expect"]
    if expect == "value":
        got = parse(case["input"])
        assert same_value(got, case["value"]), f"want {short(case['value'])}\n got {short(got)}"
    elif expect == "error":
        with pytest.raises(Exception) as info:
            parse(case["input"])
        assert type(info.value).__name__ == error_class(case["error"]), (
            f"reference raised {case['error'][:300]!r}, we raised {info.value!r}"
        )
    else:
        assert expect == "unrepresentable"
        with pytest.raises(chatparse.UnrepresentableError):
            parse(case["input"])


@pytest.mark.parametrize("schema, case", CASES)
def test_dict_schema(schema, case):
    """The schema as a dict, as transformers passes `tokenizer.response_schema`."""
    check(lambda text: chatparse.parse_response(text, schema), case)


def test_every_case_through_a_loaded_spec_and_a_batch():
    """The same answers through `chatparse.Spec`, JSON text and shipped names, and as batches."""
    import json

    for suite, source, schema, cases in SUITES:
        specs = [chatparse.Spec(schema), json.dumps(schema)]
        name = source.removeprefix("schemas/").removesuffix(".json") if isinstance(source, str) else None
        if name in chatparse.shipped_schemas():
            specs += [name, f"schemas/{name}", f"schemas/{name}.json"]
        for spec in specs:
            for case in cases:
                if isinstance(spec, str) and not spec.startswith("{") and (name, case["name"]) in CHECK_REFUSES:
                    # A shipped name: the family's completeness check refuses it.
                    with pytest.raises(chatparse.NotUnderstoodError) as info:
                        chatparse.parse_response(case["input"], spec)
                    start, end = info.value.span
                    assert 0 <= start < end <= len(case["input"].encode())
                    continue
                check(lambda text: chatparse.parse_response(text, spec), case)
        values = [c for c in cases if c["expect"] == "value"]
        got = chatparse.parse_response([c["input"] for c in values], schema)
        assert len(got) == len(values)
        for g, c in zip(got, values):
            assert same_value(g, c["value"]), f"{suite}/{c['name']}"
