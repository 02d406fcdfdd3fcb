"""x-regex response schemas that stream (literal-delimited fields): `ResponseParser` over any
chunking ends with the reference's value for the whole output (the conformance corpus,
transformers 5.10.4), or fails where the reference raised. The reference itself has no
streaming for x-regex schemas; the others are refused with the node that prevents it."""

import random

import pytest

import chatparse
from conftest import conformance_suites, error_class, same_value, short

STREAMING_SUITES = [
    (suite, schema, cases)
    for suite, _, schema, cases in conformance_suites()
    if chatparse.Spec(schema).streamable
]


def chunkings(text, rng):
    yield [text]
    yield [text[i : i + 7] for i in range(0, len(text), 7)] or [""]
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12)))) if len(text) > 1 else []
        bounds = [0, *cuts, len(text)]
        yield [text[a:b] for a, b in zip(bounds, bounds[1:])]


def stream(schema, chunks):
    parser = chatparse.ResponseParser(schema)
    texts = {}
    for chunk in chunks:
        for event in parser.feed(chunk):
            if event["type"] == "region_chunk":
                texts[event["field"]] = texts.get(event["field"], "") + event["text"]
    message, _ = parser.finalize()
    return message


def test_some_shipped_schemas_stream_and_the_rest_say_why():
    streamable = [n for n in chatparse.shipped_schemas() if chatparse.Spec(n).streamable]
    assert "gpt_oss" in streamable
    for name in set(chatparse.shipped_schemas()) - set(streamable):
        spec = chatparse.Spec(name)
        assert spec.not_streamable_reason
        with pytest.raises(chatparse.NotStreamableError) as info:
            chatparse.ResponseParser(spec)
        assert isinstance(info.value, ValueError) and isinstance(info.value.pointer, str)


def test_x_regex_schemas_take_no_prompt():
    with pytest.raises(ValueError):
        chatparse.ResponseParser("gpt_oss", prefix="<|start|>assistant", tools=None)
    chatparse.ResponseParser("gpt_oss", prefix="")  # "" is no prompt


@pytest.mark.parametrize(
    "schema, case",
    [pytest.param(s, c, id=f"{n}/{c['name']}") for n, s, cases in STREAMING_SUITES for c in cases],
)
def test_streamed_message_is_the_reference_value(schema, case):
    rng = random.Random(case["name"])
    for chunks in chunkings(case["input"], rng):
        if case["expect"] == "value":
            got = stream(schema, chunks)
            assert same_value(got, case["value"]), f"chunks {[len(c) for c in chunks]}\n want {short(case['value'])}\n got {short(got)}"
        elif case["expect"] == "error":
            with pytest.raises(Exception) as info:
                stream(schema, chunks)
            assert type(info.value).__name__ == error_class(case["error"])
        else:
            with pytest.raises(chatparse.UnrepresentableError):
                stream(schema, chunks)
