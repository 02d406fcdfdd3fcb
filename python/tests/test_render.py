"""`chatparse.render` against transformers' `apply_chat_template`, byte for byte: every rendering
stored in tests/render/expected.json (scripts/reference/render_generate.py, transformers 5.10.4,
strftime_now fixed to 2026-01-01), as tests/render.rs checks the Rust library."""

import json
import pathlib

import pytest

import chatparse

EXPECTED = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "tests" / "render" / "expected.json").read_text()
)
CASES = [
    pytest.param(t, r, id=f"{t['name']}/{r['conversation']}/{r['add_generation_prompt']}")
    for t in EXPECTED["templates"]
    for r in t["renders"]
]


@pytest.mark.parametrize("template, case", CASES)
def test_renders_as_transformers(template, case):
    messages = list(EXPECTED["messages"][template["messages"]][case["conversation"]])
    if case["add_generation_prompt"]:
        messages = messages[:-1]  # the prompt: the conversation before its final assistant turn
    render = lambda: chatparse.render(
        template["source"],
        messages,
        EXPECTED["tools"],
        case["add_generation_prompt"],
        date=(2026, 1, 1),
        **template["extra"],
    )
    if "output" in case:
        assert render() == case["output"]
    else:
        with pytest.raises(chatparse.TemplateError if case["error"] == "TemplateError" else Exception) as info:
            render()
        if case["error"] == "TemplateError":
            assert str(info.value) == case["message"]


def test_bad_templates_and_arguments():
    with pytest.raises(chatparse.TemplateError):
        chatparse.render("{% for m in messages %}", [])
    with pytest.raises(chatparse.TemplateError) as info:
        chatparse.render("{{ raise_exception('no system role') }}", [])
    assert str(info.value) == "no system role"
    with pytest.raises(TypeError):
        chatparse.render("x", {"role": "user"})
    with pytest.raises(ValueError):
        chatparse.render("x", [], date=(2026, 2, 30))
    assert chatparse.render("{{ bos_token }}{{ messages[0].content }}", [{"role": "user", "content": "hi"}], bos_token="<s>") == "<s>hi"
