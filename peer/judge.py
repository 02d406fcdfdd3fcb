#!/usr/bin/env python3
"""Assigns each difference the differential test found (peer/differences.json, written with
CHATPARSE_PEER_WRITE=1) its judgment, by the rules below; the judgments' texts are in JUDGMENTS.
A difference no rule covers is left unjudged, and the test fails until one does."""
import json
import pathlib

PATH = pathlib.Path(__file__).resolve().parent / "differences.json"

JUDGMENTS = {
    "strict-truncated": "The output stops inside a tool call (truncated.txt). transformers raises on it, and chatparse's strict parse fails it as the reference does; `--lenient` keeps the text and reports the broken call. The peer returns the raw text as content or drops it without a word. By design.",
    "template-whitespace": "Only whitespace around reasoning or content differs: the real templates render `<think>\\n…\\n</think>\\n\\n` (and similar separators) around the text, which belong to the format, not to the message. transformers strips them, and chatparse does the same. The peer keeps them. chatparse is right.",
    "peer-split-markers": "Text cut into 4-byte chunks. The peer's streamed result differs from its own one-shot result: a `<think>`, `</think>` or call marker split across chunks goes unseen, so calls are lost or reasoning runs on. chatparse gives the same result for every chunking (asserted). A server whose tokenizer keeps every marker as one token avoids this, but text-level chunking (detokenizer buffering, multi-token markers) does not. chatparse is right.",
    "peer-stream-vs-one-shot": "Token-like chunks (every marker whole). The peer's stream still differs from its own one-shot parse: calls lost (Cohere), a call dropped (DeepSeek R1) or whitespace moved (GLM). chatparse's stream equals its one-shot. chatparse is right.",
    "no-reasoning-parser": "The gateway pairs this model with no reasoning parser, so `<think>…</think>` stays in the peer's content. chatparse's schema, transformers' own for the family, reads it as reasoning. The template does not write `<think>` for past turns, but the model emits it. chatparse follows the reference.",
    "prompt-opened-think": "Qwen3-2507 Thinking: the generation prompt opens `<think>` and the output starts inside it (no opening tag). The peer's `qwen3` reasoning parser waits for `<think>` and puts everything in content. chatparse's qwen3 schema reads text before a first `</think>` as reasoning. chatparse is right for this template. The peer needs its `qwen3_thinking` configuration.",
    "thinking-mode-per-request": "DeepSeek V3.1 thinking is chosen per request: the prompt ends with `<think>` (thinking) or `</think>` (non-thinking). The peer was told the prompt opened thinking (mark_reasoning_started), so a non-thinking answer or tool call becomes reasoning and its calls are lost. chatparse decides from the output (text before a `</think>` is reasoning) or from the prompt given with `--prefix`. Neither is wrong without the prompt. With the prompt, chatparse is exact.",
    "peer-mistral-format": "Mistral: the peer only finds `[TOOL_CALLS] [` (with a space, as SentencePiece may decode it). Mistral Nemo's template writes `[TOOL_CALLS][{…}]`, and Small 3.2's writes `[TOOL_CALLS]name[ARGS]{…}`, which the peer's mistral parser does not read at all. The peer returns the calls as content text. chatparse reads both as the templates render them.",
    "peer-types": "Gemma 4's template writes numbers bare and strings in `<|\"|>` quotes, so `duration_minutes:45` is the number 45. The peer returns the string \"45\". chatparse is right.",
    "types-from-template": "MiniMax M2's template writes non-string parameter values with `tojson`. chatparse decodes them back (objects, arrays). The peer keeps them as strings when the request's tool schema does not type the parameter (this test gives untyped schemas). chatparse follows what the template wrote.",
    "peer-strips-value": "Qwen3-Coder's template writes `<parameter=NAME>\\n{value}\\n</parameter>`. chatparse removes exactly the template's newline on each side, so a file's final newline is kept. The peer strips all surrounding whitespace and loses it. chatparse is right.",
}


def judge(case: str, diff: str) -> str | None:
    name, rest = case.split("/", 1)
    file, mode = rest.split(" ", 1)
    if diff.startswith("chatparse fails") and file == "truncated.txt":
        return "strict-truncated"
    if mode == "4-byte" and "peer's stream differs" in diff:
        return "peer-split-markers"
    if mode == "tokens" and "peer's stream differs" in diff:
        return "peer-stream-vs-one-shot"
    parts = set(p.strip() for p in diff.split(";")[0].split(","))
    if name.startswith("mistral"):
        return "peer-mistral-format"
    if name == "gemma4" and parts == {"calls: argument values"}:
        return "peer-types"
    if name == "minimax_m2" and "calls: argument values" in parts:
        return "types-from-template"
    if name == "qwen3_coder" and "calls: argument values" in parts:
        return "peer-strips-value"
    if name in ("hermes", "qwen3_coder") and "reasoning: text" in parts:
        return "no-reasoning-parser"
    if name == "qwen3" and file == "thinking_2507_no_opening_tag.txt":
        return "prompt-opened-think"
    if name == "deepseek_v3_1" and "reasoning: text" in parts:
        return "thinking-mode-per-request"
    if parts <= {"reasoning: whitespace", "content: whitespace"}:
        return "template-whitespace"
    return None


def main():
    doc = json.loads(PATH.read_text())
    doc["judgments"] = JUDGMENTS
    missing = []
    for case, entry in doc["cases"].items():
        entry["judgment"] = judge(case, entry["difference"])
        if entry["judgment"] is None:
            missing.append(f"{case}: {entry['difference']}")
    PATH.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"{len(doc['cases'])} differences, {len(missing)} not judged")
    for m in missing:
        print("  ", m)


if __name__ == "__main__":
    main()
