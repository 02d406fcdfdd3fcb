#!/usr/bin/env python3
"""Reference renderings for tests/render.rs, made by transformers itself.

    /tmp/venv510/bin/python scripts/reference/render_generate.py \
        [TEMPLATES_DIR (default ../shared/chat_templates)] [OUT (default tests/render/expected.json)]

For every `*.jinja` in TEMPLATES_DIR and every standard conversation of
tests/roundtrip_support/conversations.json (the ones check_rendering.py sees), renders with
transformers' `render_jinja_template` (what `apply_chat_template(..., tokenize=False)` calls), with
`strftime_now` fixed to 2026-01-01 00:00 as the Rust side fixes it:
  - the whole conversation, add_generation_prompt=False;
  - the conversation up to its final assistant turn, add_generation_prompt=True.
Messages are in the Hugging Face format: system first, reasoning as `reasoning_content`, tool calls
`{"id", "type": "function", "function": {"name", "arguments": <object>}}`, tool results with
`tool_call_id` and `name`. `bos_token`/`eos_token`, template variables and the message style
(arguments as objects or JSON strings, how an assistant turn without content is given) come from
the round-trip family file naming the template (tests/roundtrip/*.json); else bos/eos are "",
arguments are objects and a missing content is omitted.

The output embeds the messages and each template's source, so the Rust test needs no templates directory. A
rendering transformers raises on is stored with its error class and message instead of a string.
"""

import datetime as _dt
import json
import sys
from pathlib import Path

import transformers
import transformers.utils.chat_template_utils as ctu

ROOT = Path(__file__).resolve().parents[2]


class _FixedDatetime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls(2026, 1, 1, 0, 0, 0)


ctu.datetime = _FixedDatetime


def hf_messages(system, conversation, arguments_as_string, empty_content):
    messages = [{"role": "system", "content": system}]
    call_ids = []
    answered = 0
    counter = 0
    for m in conversation:
        out = {"role": m["role"]}
        if m["role"] == "assistant":
            if "content" in m:
                out["content"] = m["content"]
            elif empty_content != "omit":
                out["content"] = "" if empty_content == "empty_string" else None
            if "reasoning" in m:
                out["reasoning_content"] = m["reasoning"]
            if "tool_calls" in m:
                call_ids, answered = [], 0
                calls = []
                def arguments(a):
                    # As a JSON string for the templates that print arguments as given.
                    return json.dumps(a, ensure_ascii=False) if arguments_as_string else a

                for call in m["tool_calls"]:
                    call_id = f"call{counter:05}"
                    counter += 1
                    call_ids.append(call_id)
                    calls.append(
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call["name"], "arguments": arguments(call["arguments"])},
                        }
                    )
                out["tool_calls"] = calls
        elif m["role"] == "tool":
            out["tool_call_id"] = call_ids[answered] if answered < len(call_ids) else ""
            answered += 1
            out["name"] = m["name"]
            out["content"] = m["content"]
        else:
            out["content"] = m["content"]
        messages.append(out)
    return messages


def family_extras():
    """template file name -> (the variables its round-trip family file gives (bos/eos, variables),
    the message style it wants: arguments as "object" or "string", empty_content)."""
    extras = {}
    for path in sorted((ROOT / "tests/roundtrip").glob("*.json")):
        family = json.loads(path.read_text(encoding="utf-8"))
        extra = {
            "bos_token": family.get("bos_token", ""),
            "eos_token": family.get("eos_token", ""),
        }
        extra.update(family.get("variables", {}))
        # The first family naming a template wins (several may test one template).
        style = f'{family.get("arguments", "object")}/{family.get("empty_content", "omit")}'
        extras.setdefault(family["template"], (extra, style))
    return extras


def render(template, messages, tools, add_generation_prompt, extra):
    try:
        rendered, _ = ctu.render_jinja_template(
            conversations=[messages],
            tools=tools,
            chat_template=template,
            add_generation_prompt=add_generation_prompt,
            **extra,
        )
        return {"output": rendered[0]}
    except Exception as e:  # noqa: BLE001 - any template error is a result to record
        return {"error": type(e).__name__, "message": str(e)}


def main() -> int:
    templates_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "../shared/chat_templates"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "tests/render/expected.json"
    std = json.loads((ROOT / "tests/roundtrip_support/conversations.json").read_text(encoding="utf-8"))
    extras = family_extras()
    # The messages are stored too, so that the Rust test renders exactly what Python rendered.
    styles = {}

    def conversations(style):
        if style not in styles:
            arguments, empty = style.split("/")
            styles[style] = {
                cid: hf_messages(std["system"], c, arguments == "string", empty)
                for cid, c in std["conversations"].items()
            }
        return styles[style]

    templates = []
    for path in sorted(templates_dir.glob("*.jinja")):
        source = path.read_text(encoding="utf-8")
        extra, style = extras.get(path.name, ({"bos_token": "", "eos_token": ""}, "object/omit"))
        renders = []
        for cid, messages in conversations(style).items():
            # The prompt: everything before the final assistant turn, with the generation prompt.
            prompt = messages[:-1]
            # Prompts of two conversations only: the rest of a prompt is rendered in the full
            # conversations already, and the file stays smaller.
            variants = [(False, messages)]
            if cid in ("content_only", "reasoning_tool_call"):
                variants.append((True, prompt))
            for add_generation_prompt, msgs in variants:
                r = {"conversation": cid, "add_generation_prompt": add_generation_prompt}
                r.update(render(source, msgs, std["tools"], add_generation_prompt, extra))
                renders.append(r)
        templates.append(
            {"name": path.name, "source": source, "extra": extra, "messages": style, "renders": renders}
        )
    doc = {
        "about": "Generated by scripts/reference/render_generate.py with transformers "
        f"{transformers.__version__}; strftime_now fixed to 2026-01-01. Do not edit.",
        "tools": std["tools"],
        "messages": styles,
        "templates": templates,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    n = sum(len(t["renders"]) for t in templates)
    errors = sum(1 for t in templates for r in t["renders"] if "error" in r)
    print(f"{len(templates)} templates, {n} renderings ({errors} raise) -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
