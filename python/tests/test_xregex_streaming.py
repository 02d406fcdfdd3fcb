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


def test_every_shipped_name_streams_and_a_schema_that_cannot_says_why():
    for name in chatparse.shipped_schemas():
        assert chatparse.Spec(name).streamable, name
        chatparse.ResponseParser(name)
    # A schema whose root regex cuts the whole output, without a stream profile.
    whole = {"type": "object", "x-regex": "^(?P<content>.*)$", "properties": {"content": {"type": "string"}}}
    spec = chatparse.Spec(whole)
    assert spec.not_streamable_reason
    with pytest.raises(chatparse.NotStreamableError) as info:
        chatparse.ResponseParser(spec)
    assert isinstance(info.value, ValueError) and isinstance(info.value.pointer, str)


def test_a_shipped_name_streams_to_its_one_shot_parse():
    # The stream's final message is `parse_response` of the same text, for any chunking.
    text = "<think>\nPlan.\n</think>\n\nSure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call><|im_end|>"
    want = chatparse.parse_response(text, "qwen3")
    for size in (1, 3, 64):
        parser = chatparse.ResponseParser("qwen3")
        for i in range(0, len(text), size):
            parser.feed(text[i : i + size])
        assert same_value(parser.finalize()[0], want)


def test_x_regex_schemas_take_no_prompt_without_a_stream_profile():
    gpt_oss = chatparse.schema("gpt_oss")  # the dict: no stream profile
    with pytest.raises(ValueError):
        chatparse.ResponseParser(gpt_oss, prefix="<|start|>assistant", tools=None)
    chatparse.ResponseParser(gpt_oss, prefix="")  # "" is no prompt


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
