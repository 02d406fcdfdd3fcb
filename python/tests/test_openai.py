"""The OpenAI chat-completion shape. Expectations come from the reference corpora: the message's
content, reasoning and tool calls (names, arguments) are the reference message's; the deltas of
any chunking rebuild the message."""

import json
import random

import pytest

import chatparse
from conftest import CHECK_REFUSES, conformance_suites, same_value, short, streaming_docs

SHIPPED = [
    (source.removeprefix("schemas/").removesuffix(".json"), case)
    for _, source, _, cases in conformance_suites()
    if isinstance(source, str) and source.startswith("schemas/")
    for case in cases
    if case["expect"] == "value"
    and (source.removeprefix("schemas/").removesuffix(".json"), case["name"]) not in CHECK_REFUSES
]


def reference_parts(message):
    """(content, reasoning, [(name, arguments)]) of a reference message, by the families' keys."""
    reasoning = next((message[k] for k in ("reasoning_content", "thinking", "reasoning") if k in message), None)
    calls = message.get("tool_calls")
    if isinstance(calls, dict):
        calls = [calls]
    out = []
    for call in calls or []:
        function = call["function"]
        arguments = function.get("arguments", function.get("parameters"))
        if arguments is None:
            arguments = {}
        elif isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        out.append((function["name"], arguments))
    return message.get("content"), reasoning, out


def check(message, reference):
    content, reasoning, calls = reference_parts(reference)
    assert list(message)[:2] == ["role", "content"]
    assert message["role"] == "assistant"
    if content is None or isinstance(content, str):
        assert message["content"] == content
    assert message.get("reasoning_content") == reasoning
    got = message.get("tool_calls", [])
    assert len(got) == len(calls), short(message)
    for call, (name, arguments) in zip(got, calls):
        assert call["type"] == "function" and isinstance(call["id"], str) and call["id"]
        assert call["function"]["name"] == name
        assert same_value(json.loads(call["function"]["arguments"]), arguments), call


def test_the_corpus_is_there():
    assert len({name for name, _ in SHIPPED}) >= 25 and len(SHIPPED) >= 300


@pytest.mark.parametrize("name, case", [pytest.param(n, c, id=f"{n}/{c['name']}") for n, c in SHIPPED])
def test_parse_openai_gives_the_reference_message(name, case):
    message = chatparse.parse_openai(case["input"], name, ids="counter")
    check(message, case["value"])
    # The same from the parsed message and the raw text.
    assert same_value(chatparse.to_openai(case["value"], case["input"], ids="counter"), message) or chatparse.Spec(name).streamable
    # Options: both reasoning keys, normalized (compact) arguments.
    both = chatparse.to_openai(case["value"], reasoning="both", normalize_arguments=True, ids=lambda n, i: f"id-{n}-{i}")
    assert both.get("reasoning") == both.get("reasoning_content")
    calls = reference_parts(case["value"])[2]
    for i, (call, (_, arguments)) in enumerate(zip(both.get("tool_calls", []), calls)):
        args = call["function"]["arguments"]
        assert same_value(json.loads(args), arguments)
        if call["id"].startswith("id-"):
            assert call["id"] == f"id-{call['function']['name']}-{i}"


def rebuild(chunks):
    """The message an OpenAI client assembles from the chunk objects."""
    message = {"role": None, "content": None}
    calls = {}
    for chunk in chunks:
        delta = chunk["delta"]
        for key, value in delta.items():
            if key == "role":
                message["role"] = value
            elif key in ("content", "reasoning_content"):
                message[key] = (message.get(key) or "") + value
            elif key == "tool_calls":
                for part in value:
                    call = calls.setdefault(part["index"], {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                    call["id"] = part.get("id", call["id"])
                    fn = part.get("function", {})
                    call["function"]["name"] += fn.get("name", "")
                    call["function"]["arguments"] += fn.get("arguments", "")
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    assert chunks[-1]["finish_reason"] == ("tool_calls" if calls else "stop")
    return message


def stream_openai(spec, text, chunks, **kwargs):
    stream = chatparse.OpenAIStream(spec, ids="counter", **kwargs)
    out = []
    for chunk in chunks:
        out += stream.feed(chunk)
    message, last = stream.finalize()
    return message, out + last


TEMPLATE_CASES = [
    pytest.param(doc["template"], case, id=f"{name.removesuffix('.json')}/{case['name']}")
    for name, doc in streaming_docs()
    if "template_file" in doc
    for case in doc["cases"]
    if "events" in case["init"] and "message" in next(c for c in case["chunkings"] if c["name"] == "one_shot")["outcome"]
]


TEXT_FIELDS = ("content", "reasoning_content", "thinking", "reasoning")


def rewrites_a_text_field(template, case):
    """Whether the output writes a text field a second time (after its end-of-turn delimiter):
    the reference keeps the last region, so a stream whose deltas already sent the first fails
    at its end with "streamed text changed" rather than contradict them (as tests/openai.rs)."""
    parser = chatparse.ResponseParser(template, case["prefix"], tools=case.get("tools"))
    opens = []
    for e in parser.initial_events:
        if e["type"] == "region_open" and e["field"] in TEXT_FIELDS:
            opens.append(e["field"])
        elif e["type"] == "region_close" and e["field"] in opens:
            opens.remove(e["field"])
    events = parser.feed(case["input"]) + parser.finalize()[1]
    opens += [e["field"] for e in events if e["type"] == "region_open" and e["field"] in TEXT_FIELDS]
    return len(opens) != len(set(opens))


@pytest.mark.parametrize("template, case", TEMPLATE_CASES)
def test_deltas_rebuild_the_message_of_the_shipped_templates(template, case):
    kwargs = {"prefix": case["prefix"], "tools": case.get("tools")}
    whole = chatparse.parse_openai(case["input"], template, ids="counter", **kwargs)
    reference = next(c for c in case["chunkings"] if c["name"] == "one_shot")["outcome"]["message"]
    check(whole, reference)
    rng = random.Random(case["name"])
    text = case["input"]
    rewritten = rewrites_a_text_field(template, case)
    for chunks in ([text], list(text), [text[i : i + rng.randint(1, 9)] for i in range(0, len(text), 5)]):
        if "".join(chunks) != text:
            continue
        try:
            message, deltas = stream_openai(template, text, chunks, **kwargs)
        except ValueError as e:
            assert rewritten and "streamed text changed" in str(e), str(e)
            continue
        assert same_value(message, whole)
        rebuilt = rebuild(deltas)
        for key in ("content", "reasoning_content", "tool_calls"):
            assert rebuilt.get(key) == whole.get(key), f"{key}: {short(rebuilt)} vs {short(whole)}"


def test_ids_policies():
    out = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    random_ids = [chatparse.parse_openai(out, "qwen3")["tool_calls"][0]["id"] for _ in range(3)]
    assert all(i.startswith("call_") and len(i) == 29 for i in random_ids) and len(set(random_ids)) == 3
    seeded = [chatparse.parse_openai(out, "qwen3", ids=7)["tool_calls"][0]["id"] for _ in range(2)]
    assert seeded[0] == seeded[1]

    def failing(name, index):
        raise KeyError("no ids today")

    with pytest.raises(KeyError):
        chatparse.parse_openai(out, "qwen3", ids=failing)
    with pytest.raises(ValueError):
        chatparse.parse_openai(out, "qwen3", ids="sequential")


def test_arguments_at_close_takes_a_repeated_parameter_exactly():
    """A parameter written twice: transformers keeps the last value (the conformance case
    qwen3_coder/duplicate_parameter_last_wins, whose expectation is {"x": 2}). A stream that sent
    the first value cannot take it back and fails; with arguments_at_close the arguments go out
    when the call closes and equal the one-shot message."""
    text = "<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n<parameter=x>\n2\n</parameter>\n</function>\n</tool_call>"
    cut = text.index("<parameter=x>\n2")
    chunks = [text[:cut], text[cut:]]
    with pytest.raises(ValueError, match="changed after"):
        stream_openai("qwen3_coder", text, chunks)
    message, deltas = stream_openai("qwen3_coder", text, chunks, arguments_at_close=True)
    assert message["tool_calls"][0]["function"]["arguments"] == '{"x":2}'
    assert rebuild(deltas)["tool_calls"][0]["function"]["arguments"] == '{"x":2}'
