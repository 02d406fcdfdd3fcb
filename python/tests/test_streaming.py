"""The response-template corpus (transformers 5.23.0 `ResponseParser`): for every recorded
chunking, the initial events, the events of each `feed`, the finalize events and the message
equal the reference's, and an error is raised (of the reference's class) exactly where it raised.
`parse_response` gives the one-shot message. Invalid templates are refused."""

import pytest

import chatparse
from conftest import STREAMING, error_class, read_json, same_value, short, streaming_docs

DOCS = streaming_docs()
CASES = [
    pytest.param(doc["template"], case, id=f"{name.removesuffix('.json')}/{case['name']}")
    for name, doc in DOCS
    for case in doc["cases"]
]
# (doc, case) per parameter, for the chunkings below.
CHUNKED = [
    pytest.param(name, doc["template"], case, id=f"{name.removesuffix('.json')}/{case['name']}")
    for name, doc in DOCS
    for case in doc["cases"]
]

# Recorded chunkings whose per-feed events differ from the reference's because chatparse holds
# back text that an earlier partial match of a delimiter may still claim (the reference routes it
# at once). Each must end with the reference's one-shot message. The list and why:
# tests/streaming/held_back.json (tests/streaming.rs reads it too).
HELD_BACK = set(read_json(STREAMING.parent / "held_back.json")["chunkings"])


def test_the_corpus_is_all_there():
    # As tests/streaming.rs.
    assert len(CASES) >= 400
    assert len(DOCS) >= 10


def raises_as_recorded(outcome, call):
    """`call()` must fail as the reference did: its exception class, or UnrepresentableError."""
    if "unrepresentable" in outcome:
        with pytest.raises(chatparse.UnrepresentableError):
            call()
        return
    with pytest.raises(Exception) as info:
        call()
    assert type(info.value).__name__ == error_class(outcome["error"]), (
        f"reference raised {outcome['error'][:300]!r}, we raised {info.value!r}"
    )


def check_chunking(template, case, chunking):
    tools = case.get("tools")
    init = case["init"]
    if "events" not in init:
        raises_as_recorded(init, lambda: chatparse.ResponseParser(template, case["prefix"], tools=tools))
        return
    parser = chatparse.ResponseParser(template, prefix=case["prefix"], tools=tools)
    assert same_value(parser.initial_events, init["events"]), short(parser.initial_events)
    outcome = chunking["outcome"]
    error_at = outcome.get("error_at")
    for i, (chunk, want) in enumerate(zip(chunking["chunks"], chunking["feeds"] + [None])):
        if error_at == i:
            raises_as_recorded(outcome, lambda: parser.feed(chunk))
            return
        got = parser.feed(chunk)
        assert same_value(got, want), f"feed {i} ({chunk!r})\n want {short(want)}\n got  {short(got)}"
    if error_at == len(chunking["chunks"]):
        raises_as_recorded(outcome, parser.finalize)
        return
    message, events = parser.finalize()
    assert same_value(events, outcome["finalize_events"]), short(events)
    assert same_value(message, outcome["message"]), f"want {short(outcome['message'])}\n got {short(message)}"
    # Finalized: both calls refuse, as the reference's.
    with pytest.raises(RuntimeError):
        parser.feed("x")
    with pytest.raises(RuntimeError):
        parser.finalize()


def check_held_back(template, case, chunking):
    """A held-back chunking ends with the reference's one-shot message."""
    one_shot = next(c for c in case["chunkings"] if c["name"] == "one_shot")
    parser = chatparse.ResponseParser(template, prefix=case["prefix"], tools=case.get("tools"))
    for chunk in chunking["chunks"]:
        parser.feed(chunk)
    message, _ = parser.finalize()
    want = one_shot["outcome"]["message"]
    assert same_value(message, want), f"want {short(want)}\n got {short(message)}"


@pytest.mark.parametrize("doc_name, template, case", CHUNKED)
def test_every_recorded_chunking(doc_name, template, case):
    chunkings = case["chunkings"] or [None]  # none recorded: the constructor raised
    for chunking in chunkings:
        if chunking is not None and f"{doc_name}/{case['name']}/{chunking['name']}" in HELD_BACK:
            check_held_back(template, case, chunking)
            continue
        check_chunking(template, case, chunking)


@pytest.mark.parametrize("template, case", CASES)
def test_parse_response_gives_the_one_shot_message(template, case):
    tools = case.get("tools")

    def parse():
        return chatparse.parse_response(case["input"], template, prefix=case["prefix"], tools=tools)

    if "events" not in case["init"]:
        raises_as_recorded(case["init"], parse)
        return
    one_shot = next(c for c in case["chunkings"] if c["name"] == "one_shot")
    outcome = one_shot["outcome"]
    if "error_at" in outcome:
        raises_as_recorded(outcome, parse)
    else:
        got = parse()
        assert same_value(got, outcome["message"]), f"want {short(outcome['message'])}\n got {short(got)}"


def test_a_template_needs_a_prefix_as_in_the_reference():
    template = DOCS[0][1]["template"]
    with pytest.raises(ValueError):
        chatparse.parse_response("Hello", template)
    with pytest.raises(ValueError):
        chatparse.ResponseParser(template)


def test_shipped_templates_by_name():
    for name, doc in DOCS:
        if "template_file" not in doc:
            continue
        stem = doc["template_name"]
        assert chatparse.template(stem) == doc["template"]
        for case in doc["cases"][:20]:
            if "events" not in case["init"]:
                continue
            outcome = next(c for c in case["chunkings"] if c["name"] == "one_shot")["outcome"]
            if "message" not in outcome:
                continue
            for spec in (f"response_templates/{stem}", chatparse.Spec(doc["template"])):
                got = chatparse.parse_response(case["input"], spec, prefix=case["prefix"], tools=case.get("tools"))
                assert same_value(got, outcome["message"]), f"{stem}/{case['name']}"
            # `NAME.transformers` streams the template, as `chatparse stream --schema NAME.transformers`.
            parser = chatparse.ResponseParser(f"{stem}.transformers", case["prefix"], tools=case.get("tools"))
            parser.feed(case["input"])
            assert same_value(parser.finalize()[0], outcome["message"])


def test_invalid_templates_are_refused_where_the_reference_refuses():
    doc = read_json(STREAMING / "invalid_templates.json")
    assert len(doc["templates"]) >= 25
    for t in doc["templates"]:
        assert error_class(t["error"]) == "ValueError"
        with pytest.raises(ValueError) as info:
            chatparse.ResponseParser(t["template"], prefix="")
        if isinstance(info.value, chatparse.SchemaError):
            pointers = [p["pointer"] for p in info.value.problems]
            assert t["pointer"] in pointers, f"{t['name']}: {pointers}"
        else:  # not a template at all: loaded as (and refused as) an x-regex schema
            pytest.fail(f"{t['name']}: {info.value!r}")
