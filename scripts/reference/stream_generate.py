#!/usr/bin/env python3
"""Produce the streaming conformance corpus from the reference `response_template` parser.

The reference is `transformers.utils.chat_parsing` (`ResponseParser`, `load_response_template`) of
**transformers 5.23.0**, which matches delimiters with the third-party `regex` module (partial
matching). It needs its own virtual environment, because the x-regex corpus
(`scripts/reference/generate.py`) needs transformers 5.10.4:

    python3 -m venv /work/venv523
    /work/venv523/bin/pip install transformers==5.23.0 jmespath regex   # the corpus was made with regex 2026.11.15
    /work/venv523/bin/python scripts/reference/stream_generate.py           # regenerate everything
    /work/venv523/bin/python scripts/reference/stream_generate.py --check   # fail if anything is stale

It writes:
- `response_templates/<name>.json`: the templates transformers ships
  (`transformers.cli.serving.utils._RESPONSE_TEMPLATE_FALLBACKS`: Qwen 2/3, Qwen 3.5, Gemma 4);
- `tests/streaming/expected/<template>.json`, one file per template (shipped, and small edge
  templates defined below that exercise every content parser and option), plus
  `tests/streaming/expected/invalid_templates.json` (templates the reference refuses to load).

A template file is:
    {"generator", "transformers", "regex", "python", "template_name", "template", "template_file"?,
     "reference_invariant_checked": [...],
     "cases": [
       {"name", "input", "prefix", "tools"?,
        "reference_invariant": bool,   # one-shot == every split point / chunking, in the reference
        "init": {"events": [...]} | {"error": "Type: msg"} | {"unrepresentable": "why"},
        "chunkings": [
          {"name": "one_shot" | "chars" | "size_N" | "random_N" | "empty_feeds",
           "chunks": ["explicit", "chunk", "strings"],
           "feeds": [[event, ...], ...],     # the events of each feed() call, in order
           "outcome": {"finalize_events": [...], "message": {...}}
                    | {"error_at": k, "error": "Type: msg"}      # k = index of the failing feed;
                    | {"error_at": k, "unrepresentable": "why"}  # k == len(chunks) is finalize()
          }]}]}

Events are the reference's dicts: `{"type": "region_open", "field"}`, `{"type": "region_chunk",
"field", "text", "dirty"}`, `{"type": "region_close", "field", "value"}`. "unrepresentable" marks a
value JSON cannot carry (NaN/inf floats, lone surrogates): the Rust port must fail where the
reference first produces it. Chunks split at code points (the reference indexes str by code point),
which are char boundaries for the Rust `&str` API.
"""
import copy
import json
import math
import pathlib
import random
import signal
import sys

REQUIRED_TRANSFORMERS = "5.23.0"
ROOT = pathlib.Path(__file__).resolve().parents[2]
EXPECTED = ROOT / "tests" / "streaming" / "expected"
TEMPLATES_DIR = ROOT / "response_templates"

# Inputs shorter than this get every split point checked for reference invariance (and in Rust).
SHORT = 300
CASE_TIMEOUT_S = 20


def load_reference():
    import regex
    import transformers

    if transformers.__version__ != REQUIRED_TRANSFORMERS:
        sys.exit(
            f"need transformers=={REQUIRED_TRANSFORMERS} (found {transformers.__version__}); "
            f"see this script's docstring"
        )
    from transformers.cli.serving.utils import _RESPONSE_TEMPLATE_FALLBACKS
    from transformers.utils.chat_parsing import ResponseParser
    from transformers.utils.chat_parsing.response_templates import load_response_template

    return {
        "version": transformers.__version__,
        "regex": regex.__version__,
        "ResponseParser": ResponseParser,
        "load": load_response_template,
        "shipped": _RESPONSE_TEMPLATE_FALLBACKS,
    }


# ---------------------------------------------------------------------------------------------
# Templates


def shipped_templates(ref):
    """name -> template, from the reference's fallback table (keyed by the first model_type)."""
    names = {"qwen2": "qwen3", "qwen3_5": "qwen3_5", "gemma4": "gemma4"}
    out = {}
    for model_types, template in ref["shipped"].items():
        name = names.get(model_types[0])
        if name is None:
            sys.exit(f"unexpected shipped template for {model_types}; extend stream_generate.py")
        out[name] = template
    return out


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather forecast",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "temp": {"type": "number"},
                    "metric": {"type": "boolean"},
                    "note": {"type": "string", "nullable": True},
                    "opts": {"type": "object"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                    "either": {"type": ["boolean", "number"]},
                    "choice": {"oneOf": [{"type": "array"}, {"type": "integer"}]},
                    "nothing": {"type": "null"},
                    "untyped": {"description": "no type"},
                },
            },
        },
    },
    # Bare function dict (no "function" wrapper), and one without parameters.
    {"name": "ping", "parameters": {"properties": {"n": {"type": "integer"}, "x": {"type": "number"}}}},
    {"type": "function", "function": {"name": "noop"}},
    "not a tool",
    {"function": "not a dict"},
]

EDGE_TEMPLATES = {
    # Every text/int/float/bool option: strip, join, repeats, optional, defaults.
    "edge_scalars": {
        "version": 1,
        "defaults": {"role": "assistant", "kind": "default-kind"},
        "start_anchor": "<start>",
        "fields": {
            "title": {"open": "<title>", "close": "</title>", "content": "text", "optional": False},
            "raw": {"open": "<raw>", "close": "</raw>", "content": "text", "content_args": {"strip": False}},
            "count": {"open": "<n>", "close": "</n>", "content": "int"},
            "ratio": {"open": "<f>", "close": "</f>", "content": "float"},
            "flag": {"open": "<b>", "close": "</b>", "content": "bool"},
            "notes": {"open": "<note>", "close": "</note>", "repeats": True},
            "joined": {"open": "<j>", "close": "</j>", "repeats": True, "join": " | "},
            "kind": {"open": "<kind>", "close": "</kind>"},
            "body": {"close": ["<end>", "<stop>"], "content_args": {"strip": False}},
        },
    },
    # JSON with every dialect option.
    "edge_json": {
        "start_anchor": ["<|assistant|>", "<|turn|>"],
        "fields": {
            "plain": {"open": "<json>", "close": "</json>", "content": "json"},
            "lax": {
                "open": "<lax>",
                "close": "</lax>",
                "content": "json",
                "content_args": {"unquoted_keys": True, "string_delims": [["<|\"|>", "<|\"|>"], ["«", "»"]]},
            },
            "maybe": {
                "open": "<maybe>",
                "close": "</maybe>",
                "content": "json",
                "content_args": {"allow_non_json": True},
            },
            "maybe_raw": {
                "open": "<mr>",
                "close": "</mr>",
                "content": "json",
                "content_args": {"allow_non_json": True, "strip": False},
            },
            "calls": {
                "open": "<call>",
                "close": "</call>",
                "content": "json",
                "repeats": True,
                "transform": {"type": "function", "function": "{content}"},
            },
            "content": {"close": "<eos>"},
        },
    },
    # xml-inline with value parsers and duplicate merging; kv-lines with separators.
    "edge_structured": {
        "start_anchor_pattern": r"<\|im_start\|>assistant\s*",
        "fields": {
            "params": {
                "open": "<params>",
                "close": "</params>",
                "content": "xml-inline",
                "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"},
            },
            "typed": {
                "open": "<typed>",
                "close": "</typed>",
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r"<p name=\"(?P<key>[^\"]*)\">(?P<value>.*?)</p>",
                    "value_parser": {"name": "json", "args": {"allow_non_json": True}},
                    "merge_duplicates": True,
                },
            },
            "keys_only": {
                "open": "<ko>",
                "close": "</ko>",
                "content": "xml-inline",
                "content_args": {"tag_pattern": r"\[(?P<key>\w+)\]", "value_parser": {"name": "text"}},
            },
            "ints": {
                "open": "<ints>",
                "close": "</ints>",
                "content": "xml-inline",
                "content_args": {"tag_pattern": r"<i (?P<key>\w+)=(?P<value>[^/]*)/>", "value_parser": {"name": "int"}},
            },
            "meta": {"open": "<meta>", "close": "</meta>", "content": "kv-lines"},
            "conf": {
                "open": "<conf>",
                "close": "</conf>",
                "content": "kv-lines",
                "content_args": {"line_sep": ";", "kv_sep": "=", "value_parser": {"name": "float"}},
            },
            "loose": {
                "open": "<loose>",
                "close": "</loose>",
                "content": "kv-lines",
                "content_args": {"strip": False, "kv_sep": "=>"},
            },
            "nested": {
                "open": "<nested>",
                "close": "</nested>",
                "content": "kv-lines",
                "content_args": {
                    "value_parser": {"name": "json", "args": {"unquoted_keys": True}},
                },
            },
            "text": {"close_pattern": r"\s*<\|im_end\|>"},
        },
    },
    # transform / transform_each with captures, dotted placeholders and literals.
    "edge_transform": {
        "start_anchor_pattern": "(?:^|\n)ASSISTANT:",
        "defaults": {"calls": ["preexisting"]},
        "fields": {
            "calls": {
                "open_pattern": r"<call name=(?P<name>\w+)(?: id=(?P<id>\d+))?>",
                "close": "</call>",
                "content": "json",
                "repeats": True,
                "transform": {
                    "type": "function",
                    "id": "{id}",
                    "function": {"name": "{name}", "arguments": "{content}"},
                    "static": [1, 2.5, None, True, "lit", "{not a placeholder}", "{}"],
                },
            },
            "batch": {
                "open": "<batch>",
                "close": "</batch>",
                "content": "json",
                "transform": [{"first": "{content.items}"}, "{content}"],
            },
            "each": {
                "open_pattern": r"<each tag=(?P<tag>\w+)>",
                "close": "</each>",
                "content": "json",
                "transform_each": True,
                "transform": {"tag": "{tag}", "name": "{name}", "deep": "{args.inner.value}"},
            },
            "xml_call": {
                "open_pattern": r"<fn=(?P<name>[^>]+)>",
                "close_pattern": r"</fn>",
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r"<arg=(?P<key>[^>]+)>(?P<value>.*?)</arg>",
                    "merge_duplicates": True,
                },
                "repeats": True,
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "alias": {
                "open_pattern": r"<alias=(?P<name>\w+)>",
                "close": "</alias>",
                "content": "json",
                "transform": {
                    "function": {"name": "{name}", "arguments": "{content}"},
                    "copy": "{content}",
                    "inner": "{content.opts}",
                },
            },
            "answer": {},
        },
    },
    # Delimiter corner cases: literal lists where one literal extends another, regex delimiters
    # with $, \Z and quantifiers at the buffer edge, and no implicit field (a null sink).
    "edge_delims": {
        "start_anchor": "@@",
        "fields": {
            "a": {"open": ["<a>", "<a-long>"], "close": ["</a>", "</a>>"]},
            "b": {"open_pattern": r"\[b+\]", "close_pattern": r"\[/b\]|$"},
            "c": {"open_pattern": r"<c\s*>", "close_pattern": r"\n\n+"},
            "d": {"open": "{{", "close": "}}", "content": "json", "content_args": {"allow_non_json": True}},
            "e": {"open_pattern": "(?i)<E>", "close_pattern": r"(?i)</e>|\Z"},
        },
    },
    # Required fields, and a defaults key also written by a repeated field.
    "edge_required": {
        "start_anchor": "<|start|>",
        "defaults": {"status": "ok", "items": []},
        "fields": {
            "answer": {"open": "<answer>", "close": "</answer>", "optional": False},
            "items": {"open": "<item>", "close": "</item>", "repeats": True, "content": "int"},
            "status": {"open": "<status>", "close": "</status>"},
            "rest": {"close": "<|end|>"},
        },
    },
    # Defaults that `repeats`/`join` cannot extend (the reference raises when the field closes).
    "edge_bad_defaults": {
        "start_anchor": ">>",
        "defaults": {"tags": "not-a-list", "log": 5},
        "fields": {
            "tags": {"open": "<t>", "close": "</t>", "repeats": True},
            "log": {"open": "<l>", "close": "</l>", "repeats": True, "join": ","},
            "other": {"open": "<o>", "close": "</o>", "content": "json", "repeats": True, "join": "+"},
        },
    },
}


# Invalid templates: (name, template, JSON pointer our validator must report).
INVALID_TEMPLATES = [
    ("not_a_dict", ["fields"], ""),
    ("version_2", {"version": 2, "start_anchor": "x", "fields": {"a": {}}}, "/version"),
    ("unknown_top_key", {"start_anchor": "x", "feilds": {}, "fields": {"a": {}}}, "/feilds"),
    ("defaults_not_dict", {"start_anchor": "x", "defaults": [], "fields": {"a": {}}}, "/defaults"),
    ("fields_empty", {"start_anchor": "x", "fields": {}}, "/fields"),
    ("fields_missing", {"start_anchor": "x"}, ""),
    ("fields_not_dict", {"start_anchor": "x", "fields": [{"open": "a"}]}, "/fields"),
    ("field_not_dict", {"start_anchor": "x", "fields": {"a": "text"}}, "/fields/a"),
    ("unknown_field_key", {"start_anchor": "x", "fields": {"a": {"opne": "<a>"}}}, "/fields/a/opne"),
    ("unknown_content", {"start_anchor": "x", "fields": {"a": {"content": "yaml"}}}, "/fields/a/content"),
    ("open_and_open_pattern", {"start_anchor": "x", "fields": {"a": {"open": "<a>", "open_pattern": "<a>"}}}, "/fields/a/open_pattern"),
    ("close_and_close_pattern", {"start_anchor": "x", "fields": {"a": {"close": "<a>", "close_pattern": "<a>"}}}, "/fields/a/close_pattern"),
    ("open_not_string", {"start_anchor": "x", "fields": {"a": {"open": 5}}}, "/fields/a/open"),
    ("open_empty_list", {"start_anchor": "x", "fields": {"a": {"open": []}}}, "/fields/a/open"),
    ("open_list_non_string", {"start_anchor": "x", "fields": {"a": {"open": ["<a>", 1]}}}, "/fields/a/open/1"),
    ("close_empty_literal", {"start_anchor": "x", "fields": {"a": {"close": ""}}}, "/fields/a/close"),
    ("close_list_empty_literal", {"start_anchor": "x", "fields": {"a": {"close": ["</a>", ""]}}}, "/fields/a/close/1"),
    ("bad_open_pattern", {"start_anchor": "x", "fields": {"a": {"open_pattern": "(unclosed"}}}, "/fields/a/open_pattern"),
    ("bad_close_pattern", {"start_anchor": "x", "fields": {"a": {"close_pattern": "a{2,1}"}}}, "/fields/a/close_pattern"),
    ("join_not_string", {"start_anchor": "x", "fields": {"a": {"open": "<a>", "repeats": True, "join": 1}}}, "/fields/a/join"),
    ("join_without_repeats", {"start_anchor": "x", "fields": {"a": {"open": "<a>", "join": ","}}}, "/fields/a/join"),
    ("transform_each_not_bool", {"start_anchor": "x", "fields": {"a": {"transform": "{content}", "transform_each": 1}}}, "/fields/a/transform_each"),
    ("transform_each_without_transform", {"start_anchor": "x", "fields": {"a": {"transform_each": True}}}, "/fields/a/transform_each"),
    ("transform_mixed_placeholder", {"start_anchor": "x", "fields": {"a": {"transform": {"x": ["ok", "id-{content}"]}}}}, "/fields/a/transform/x/1"),
    ("named_groups_without_transform", {"start_anchor": "x", "fields": {"a": {"open_pattern": "<(?P<tag>\\w+)>"}}}, "/fields/a/open_pattern"),
    ("two_implicit_fields", {"start_anchor": "x", "fields": {"a": {}, "b": {"close": "</b>"}}}, "/fields/b"),
    ("no_start_anchor", {"fields": {"a": {}}}, ""),
    ("start_anchor_both", {"start_anchor": "x", "start_anchor_pattern": "x", "fields": {"a": {}}}, "/start_anchor_pattern"),
    ("start_anchor_empty", {"start_anchor": "", "fields": {"a": {}}}, "/start_anchor"),
    ("start_anchor_bad_pattern", {"start_anchor_pattern": "[", "fields": {"a": {}}}, "/start_anchor_pattern"),
    ("start_anchor_list_bad", {"start_anchor": ["ok", None], "fields": {"a": {}}}, "/start_anchor/1"),
    ("close_list_not_list", {"start_anchor": "x", "fields": {"a": {"close": {"x": 1}}}}, "/fields/a/close"),
]


# ---------------------------------------------------------------------------------------------
# Inputs


def shipped_cases(name):
    """(case name, input, prefix, tools) for a shipped template."""
    big_reasoning = "".join(f"Step {i}: consider the weather in city number {i}, é→✓. " for i in range(1100))
    cases = []
    if name in ("qwen3", "qwen3_5"):
        qa = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
        if name == "qwen3":
            call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3", "temp": "21.5", "metric": "true"}}\n</tool_call>'
            call2 = '<tool_call>\n{"name": "ping", "arguments": {"n": "7", "x": "1e3"}}\n</tool_call>'
            bad_call = "<tool_call>\n{not json}\n</tool_call>"
        else:
            call = (
                "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                "<parameter=days>\n3\n</parameter>\n<parameter=temp>\n21.5\n</parameter>\n"
                "<parameter=metric>\ntrue\n</parameter>\n<parameter=tags>\n[\"a\", \"b\"]\n</parameter>\n"
                "<parameter=opts>\n{\"x\": 1}\n</parameter>\n</function>\n</tool_call>"
            )
            call2 = "<tool_call>\n<function=ping>\n<parameter=n>\n7\n</parameter>\n<parameter=n>\n8\n</parameter>\n</function>\n</tool_call>"
            bad_call = "<tool_call>\n<function=noop>\nno parameters here\n</function>\n</tool_call>"
        cases += [
            ("plain", "Hello there!", "", None),
            ("plain_im_end", "Hello there!<|im_end|>", qa, None),
            ("think_then_answer", "<think>\nLet me think.\n</think>\n\nThe answer is 4.<|im_end|>", qa, None),
            ("prefilled_think", "I should check.\n</think>\n\nSunny.<|im_end|>", qa + "<think>\n", None),
            ("prefilled_empty_think", "Sunny today.<|im_end|>\n<|endoftext|>", qa + "<think>\n\n</think>\n\n", None),
            ("tool_call", "<think>\nUse the tool.\n</think>\n\n" + call + "<|im_end|>", qa, TOOLS),
            ("tool_call_no_tools", "<think>\nUse the tool.\n</think>\n\n" + call + "<|im_end|>", qa, None),
            ("two_tool_calls", "Checking.\n\n" + call + "\n" + call2 + "<|im_end|>", qa, TOOLS),
            ("content_then_call", "Let me look that up.\n\n" + call, qa, TOOLS),
            ("bad_call", bad_call + "<|im_end|>", qa, None),
            ("unclosed_think", "<think>\nStill thinking about", qa, None),
            ("unclosed_tool_call", "Sure.\n<tool_call>\n{\"name\": \"ping\"", qa, None),
            ("partial_delims_in_text", "Use <tool or </think or <|im_ in prose; <think is not </thin>.", qa, None),
            ("delims_at_end", "text ends with <|im_end", qa, None),
            ("only_prefix", "", qa + "<think>\nprefilled reasoning", None),
            ("only_prefix_closed", "", qa + "<think>\nprefilled\n</think>\n\n", None),
            ("empty", "", "", None),
            ("empty_with_anchor", "", qa, None),
            ("no_anchor_in_prefix", "Answer.<|im_end|>", "<|im_start|>user\nhi<|im_end|>\n<think>\nold\n", None),
            ("two_anchors_in_prefix", "<think>x</think>Answer", qa + "<think>a</think>b<|im_end|>\n" + qa, None),
            ("unicode", "<think>\nπ ≈ 3.14159 — 東京 🌧️\n</think>\n\nÇa va? 😀<|im_end|>", qa, None),
            ("whitespace_only", "\n\n  \n", qa, None),
            ("endoftext_tail", "Done.<|im_end|>\n<|endoftext|>", qa, None),
            ("eot_id", "Done.<|eot_id|>", qa, None),
            ("text_after_end", "Done.<|im_end|>\nextra words", qa, None),
            ("think_twice", "<think>a</think>mid<think>b</think>end", qa, None),
            ("call_then_text", call + "\ntrailing text<|im_end|>", qa, TOOLS),
            ("long_reasoning_call", "<think>\n" + big_reasoning + "\n</think>\n\n" + call + "<|im_end|>", qa, TOOLS),
        ]
    else:  # gemma4
        qa = "<bos><|turn>user\nWeather?<turn|>\n<|turn>model\n"
        call = (
            '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3,temp:<|"|>21.5<|"|>,'
            'metric:true,tags:[<|"|>a<|"|>,<|"|>b<|"|>]}<tool_call|>'
        )
        call2 = "<|tool_call>call:ping{n:<|\"|>7<|\"|>,x:<|\"|>2.5<|\"|>}<tool_call|>"
        cases += [
            ("plain", "Hello there!", "", None),
            ("plain_turn_end", "Hello there!<turn|>", qa, None),
            ("thought", "<|channel>thought\nThinking hard.<channel|>The answer.<turn|>", qa, None),
            ("tool_call", "<|channel>thought\nUse the tool.<channel|>" + call + "<|tool_response>", qa, TOOLS),
            ("tool_call_no_tools", call + "<|tool_response>", qa, None),
            ("two_calls", call + call2 + "<|tool_response>", qa, TOOLS),
            ("call_after_text", "Let me check." + call, qa, TOOLS),
            ("after_tool_response", "It is sunny.<turn|>", qa + call + "<|tool_response>response:get_weather{t:20}<tool_response|>", None),
            ("bad_call", "<|tool_call>call:noop{a:}<tool_call|>", qa, None),
            ("unclosed_thought", "<|channel>thought\nhmm", qa, None),
            ("partial_delims_in_text", "a <|tool_call or <turn| or <|channel>though", qa, None),
            ("eos_end", "Done.<eos>", qa, None),
            ("empty", "", "", None),
            ("only_prefix", "", qa + "<|channel>thought\nprefilled", None),
            ("unicode", "Ça va? 😀 東京<turn|>", qa, None),
            ("call_unicode_name", "<|tool_call>call:wetter_é{ort:<|\"|>Zürich<|\"|>}<tool_call|>", qa, None),
            ("sentinel_in_call", "<|tool_call>call:ping{n:<|\"|>a\x01b<|\"|>}<tool_call|>", qa, None),
            ("long_thought", "<|channel>thought\n" + big_reasoning + "<channel|>" + call + "<|tool_response>", qa, TOOLS),
        ]
    return cases


EDGE_CASES = {
    "edge_scalars": [
        ("all", "<title> Hi </title><raw>  keep  </raw><n> 42 </n><f>2.5</f><b>TRUE</b><note>a</note><note>b</note><j>x</j><j>y</j><kind>k</kind>tail<end>", "pre<start>"),
        ("required_missing", "just text<end>", "<start>"),
        ("int_bad", "<title>t</title><n>4.2</n>", ""),
        ("int_unicode", "<title>t</title><n>١٢</n><n>1_000</n>", ""),
        ("float_inf", "<title>t</title><f>inf</f>", ""),
        ("float_exp", "<title>t</title><f> 1e3 </f><f>-0</f>", ""),
        ("bool_values", "<title>t</title><b>1</b><b>yes</b><b>False</b>", ""),
        ("empty_regions", "<title></title><raw></raw><note></note><j></j><j>q</j><kind></kind>", ""),
        ("defaults_overwritten", "<title>t</title><kind>new</kind>", ""),
        ("body_twice", "<title>t</title>one<end>two<stop>three", ""),
        ("unclosed_title", "<title>never closed", ""),
        ("only_prefix", "", "x<start><title>from prefix</title>body"),
        ("prefix_anchor_twice", "<end>", "<start>a<start>b"),
        ("split_stress", "<ti<title>tle>x</title></ti><<raw>raw></raw>", ""),
        ("unicode", "<title>ünï</title>😀 body<stop>", ""),
    ],
    "edge_json": [
        ("plain", '<json>{"a": [1, 2.0, "x"], "b": null}</json>rest<eos>', "<|assistant|>"),
        ("plain_bad", "<json>{a: 1}</json>", ""),
        ("lax", '<lax>{name:<|"|>x, "y"<|"|>,n:1,list:[«q»,«r\\s»],nested:{k:2}}</lax>', ""),
        ("lax_sentinel", "<lax>{a:<|\"|>\x02<|\"|>}</lax>", ""),
        ("lax_bad", "<lax>{a:[}</lax>", ""),
        ("maybe_json", '<maybe> {"ok": true} </maybe>', ""),
        ("maybe_text", "<maybe>  not json  </maybe><mr>  raw text  </mr>", ""),
        ("maybe_nan", "<maybe>NaN</maybe>", ""),
        ("maybe_big_int", "<maybe>123456789012345678901234567890</maybe>", ""),
        ("calls", '<call>{"name": "get_weather", "arguments": {"days": "2", "city": "Oslo", "metric": "0", "maybe": "null", "choice": "[1]", "either": "yes", "note": "None", "opts": "{\\"a\\": 1}", "tags": ["1", 2], "nothing": "null", "untyped": "5", "temp": "3"}}</call>', "<|turn|>"),
        ("calls_numbers", '<call>{"name": "get_weather", "arguments": {"days": "3.0", "temp": "1e2", "maybe": "2.5", "either": "1", "choice": "4"}}</call><call>{"name": "get_weather", "arguments": {"days": "2.5", "temp": "nan", "maybe": "x"}}</call>', ""),
        ("calls_other_tools", '<call>{"name": "ping", "arguments": {"n": " 12 ", "x": "7"}}</call><call>{"name": "noop", "arguments": {"a": "1"}}</call><call>{"name": "unknown", "arguments": {"n": "1"}}</call><call>{"name": 5}</call><call>[1, 2]</call>', ""),
        ("calls_int_like", '<call>{"name": "get_weather", "arguments": {"days": "1e400", "temp": "1e400", "tags": "[\\"x\\"]", "opts": "[1]"}}</call>', ""),
        ("calls_big", '<call>{"name": "get_weather", "arguments": {"days": "1e22", "temp": "12345678901234567890"}}</call>', ""),
        ("deep_json", "<json>" + "[" * 1200 + "]" * 1200 + "</json>", ""),
        ("empty_json", "<json></json>", ""),
        ("anchor_in_content", "a<|assistant|>b<eos>", "<|turn|>"),
    ],
    "edge_structured": [
        ("params", "<params><city>Paris</city><days>3</days><city>Rome</city></params>", "<|im_start|>assistant\n"),
        ("typed", '<typed><p name="a">{"x": 1}</p><p name="a">2</p><p name="b">not json</p><p name="a">[3]</p></typed>', ""),
        ("keys_only", "<ko>[one] [two] [one]</ko>", ""),
        ("ints", "<ints><i a=1/><i b= 2 /></ints>", ""),
        ("ints_bad", "<ints><i a=x/></ints>", ""),
        ("meta", "<meta>\nname: Alice\n  age :  30 \nnot a pair\n: empty key\nurl: http://x:y\n\n</meta>", ""),
        ("conf", "<conf>a=1.5; b = 2 ;c=x</conf>", ""),
        ("conf_ok", "<conf>a=1.5; b = 2 ;;c=3e2</conf>", ""),
        ("loose", "<loose> k => v \nx=>y=>z\n</loose>", ""),
        ("nested", "<nested>\nobj: {a:1,b:[2]}\nnum: 5\n</nested>", ""),
        ("nested_bad", "<nested>\nobj: {a:\n</nested>", ""),
        ("text_end", "Answer text  \n<|im_end|>", "sys<|im_start|>assistant  \n"),
        ("empty_structured", "<params></params><meta></meta>", ""),
        ("unicode_keys", "<params><città>Roma</città><日付>today</日付></params>", ""),
    ],
    "edge_transform": [
        ("call", '<call name=get_weather id=7>{"city": "Oslo", "days": "2"}</call>', "ASSISTANT:"),
        ("call_no_id", '<call name=ping>{"n": "1"}</call>', "\nASSISTANT:"),
        ("batch", '<batch>{"items": [1, 2]}</batch>', ""),
        ("batch_missing_key", '<batch>{"other": 1}</batch>', ""),
        ("batch_not_dict", "<batch>[1]</batch>", ""),
        ("each", '<each tag=t1>[{"name": "a", "args": {"inner": {"value": 1}}}, {"name": "b", "args": {"inner": {"value": [2]}}}]</each>', ""),
        ("each_not_list", '<each tag=t>{"name": "a"}</each>', ""),
        ("each_item_not_dict", "<each tag=t>[1]</each>", ""),
        ("each_missing", '<each tag=t>[{"name": "a"}]</each>', ""),
        ("xml_call", "<fn=get_weather><arg=days>2</arg><arg=tags>[\"a\"]</arg><arg=days>5</arg><arg=metric>false</arg></fn>", ""),
        ("xml_call_merged_ints", "<fn=ping><arg=n>1</arg><arg=n>x</arg><arg=n>3</arg></fn>", ""),
        ("alias", '<alias=get_weather>{"days": "4", "opts": {"k": "v"}}</alias>', ""),
        ("alias_opts_missing", '<alias=get_weather>{"days": "4"}</alias>', ""),
        ("answer", "Plain answer", "x\nASSISTANT:"),
        ("anchor_inside", "ASSISTANT:not an anchor in output", "ASSISTANT:"),
    ],
    "edge_delims": [
        ("literal_extension", "@@<a>x</a>><a-long>y</a>", ""),
        ("regex_b", "[b]one[/b] [bbb]two", ""),
        ("regex_b_dollar", "[b]line\n", ""),
        ("c_blank_lines", "<c >para one\n\n\npara two<c>z", ""),
        ("json_d", "{{ {\"k\": 1} }} {{ nope }}", ""),
        ("case_insensitive", "<e>upper</E><E>lower</e><E>to the end", ""),
        ("null_sink", "ignored text <a>kept</a> ignored", ""),
        ("anchor", "x", "pre@@<a>in prefix"),
        ("anchor_overlap", "y", "@@@<a>q"),
        ("unclosed_c", "<c>never", ""),
        ("empty_b", "[b][/b]", ""),
    ],
    "edge_required": [
        ("ok", "<answer>42</answer><item>1</item><item>2</item>rest<|end|>", "<|start|>"),
        ("missing_answer", "<item>1</item>", ""),
        ("empty_answer", "<answer></answer>", ""),
        ("status", "<answer>a</answer><status></status>", ""),
        ("status_set", "<answer>a</answer><status>bad</status>", ""),
        ("item_bad", "<answer>a</answer><item>x</item>", ""),
    ],
    "edge_bad_defaults": [
        ("tags", "<t>x</t>", ""),
        ("log", "<l>x</l>", ""),
        ("other_json", "<o>\"s\"</o><o>\"t\"</o>", ""),
        ("other_not_string", "<o>1</o>", ""),
        ("nothing", "plain", ""),
    ],
}


def stitched_inputs(template, seed, count):
    """Random inputs stitched from the template's literal delimiters, pattern-like snippets and
    text, to exercise split delimiters and unusual orders."""
    rng = random.Random(seed)
    pieces = []

    def add(v):
        if isinstance(v, str):
            pieces.append(v)
        elif isinstance(v, list):
            pieces.extend(x for x in v if isinstance(x, str))

    for field in template["fields"].values():
        add(field.get("open"))
        add(field.get("close"))
    add(template.get("start_anchor"))
    extras = [
        "<tool_call>", "</tool_call>", "<function=ping>", "</function>", "<parameter=n>", "</parameter>",
        "<|tool_call>call:ping", '<|"|>', "{", "}", '"n": 1', "n:1", "\n", "\n\n", "  ", "<", "</", "<|",
        "|>", "é", "😀", "text", "more words", '{"name": "ping", "arguments": {"n": "4"}}', "[b]", "[/b]",
        "<c>", "{{", "}}", "<E>", "</e>", "<|im_end|>", "<|endoftext|>",
    ]
    pieces.extend(extras)
    out = []
    for _ in range(count):
        n = rng.randint(1, 9)
        parts = []
        for _ in range(n):
            p = rng.choice(pieces)
            if rng.random() < 0.25 and len(p) > 1:  # a truncated delimiter
                p = p[: rng.randint(1, len(p) - 1)]
            parts.append(p)
        out.append("".join(parts))
    return out


# ---------------------------------------------------------------------------------------------
# Running the reference


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def unrepresentable(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return "NaN or infinity has no JSON form"
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return "lone surrogate has no UTF-8 form"
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return None


def frozen(value):
    """Deep copy through JSON semantics, so later mutation by the parser cannot change a recorded event."""
    return copy.deepcopy(value)


def exc_text(e):
    return f"{type(e).__name__}: {e}"


def run_chunking(ref, template, prefix, tools, chunks):
    """Feed `chunks`; returns (init, feeds, outcome)."""
    try:
        parser = ref["ResponseParser"](template, prefix=prefix, tools=tools)
    except RecursionError as e:
        return {"error": exc_text(e)}, None, None
    except Exception as e:  # noqa: BLE001 - every exception is an expected error
        return {"error": exc_text(e)}, None, None
    init_events = frozen(parser.initial_events)
    why = unrepresentable(init_events)
    if why:
        return {"unrepresentable": why}, None, None
    init = {"events": init_events}
    feeds = []
    for i, chunk in enumerate(chunks):
        try:
            events = frozen(parser.feed(chunk))
        except Exception as e:  # noqa: BLE001
            return init, feeds, {"error_at": i, "error": exc_text(e)}
        why = unrepresentable(events)
        if why:
            return init, feeds, {"error_at": i, "unrepresentable": why}
        feeds.append(events)
    try:
        message, events = parser.finalize()
    except Exception as e:  # noqa: BLE001
        return init, feeds, {"error_at": len(chunks), "error": exc_text(e)}
    message, events = frozen(message), frozen(events)
    why = unrepresentable([message, events])
    if why:
        return init, feeds, {"error_at": len(chunks), "unrepresentable": why}
    return init, feeds, {"finalize_events": events, "message": message}


def summary(init, feeds, outcome):
    """What chunking invariance compares: the final message (or that it failed), the concatenated
    text of each field's chunks, and the sequence of opens and closes with their values."""
    if init is None or "events" not in init or outcome is None:
        return ("init-failed",)
    if "message" not in outcome:
        return ("failed",)
    events = list(init["events"]) + [e for f in feeds for e in f] + list(outcome["finalize_events"])
    texts = {}
    marks = []
    for e in events:
        if e["type"] == "region_chunk":
            texts[e["field"]] = texts.get(e["field"], "") + e["text"]
        elif e["type"] == "region_open":
            marks.append(("open", e["field"]))
        else:
            marks.append(("close", e["field"], json.dumps(e["value"], sort_keys=False)))
    return (json.dumps(outcome["message"]), tuple(sorted(texts.items())), tuple(marks))


def chunkings_for(text, seed):
    rng = random.Random(seed)
    out = [("one_shot", [text])]
    n = len(text)
    if n == 0:
        out.append(("empty_feeds", ["", "", ""]))
        return out
    if n <= 400:
        out.append(("chars", list(text)))
    for size in (3, 16) if n <= 2000 else ():
        if size < n:
            out.append((f"size_{size}", [text[i : i + size] for i in range(0, n, size)]))
    for r in range(3 if n <= 2000 else 1):
        k = rng.randint(1, min(n, 12 if n <= 2000 else 40))
        cuts = sorted(rng.sample(range(1, n), k - 1)) if n > 1 and k > 1 else []
        bounds = [0] + cuts + [n]
        chunks = [text[a:b] for a, b in zip(bounds, bounds[1:])]
        if rng.random() < 0.5:  # empty feeds are legal and must change nothing
            chunks.insert(rng.randint(0, len(chunks)), "")
        out.append((f"random_{r}", chunks))
    return out


def reference_invariant(ref, template, prefix, tools, text, recorded):
    base = None
    families = [c for _, c in recorded]
    if len(text) < SHORT:
        families += [[text[:k], text[k:]] for k in range(1, len(text))]
    for chunks in families:
        s = summary(*run_chunking(ref, template, prefix, tools, chunks))
        if base is None:
            base = s
        elif s != base:
            return False
    return True


def run_case(ref, template, name, text, prefix, tools, seed):
    case = {"name": name, "input": text, "prefix": prefix}
    if tools is not None:
        case["tools"] = tools
    recorded = chunkings_for(text, seed)
    chunkings = []
    init0 = None
    for cname, chunks in recorded:
        init, feeds, outcome = run_chunking(ref, template, prefix, tools, chunks)
        if init0 is None:
            init0 = init
        elif init != init0:
            sys.exit(f"{name}: initial events differ between chunkings")
        if feeds is None:
            break
        chunkings.append({"name": cname, "chunks": chunks, "feeds": feeds, "outcome": outcome})
    case["init"] = init0
    case["chunkings"] = chunkings
    case["reference_invariant"] = reference_invariant(ref, template, prefix, tools, text, recorded)
    return case


def run_template(ref, tname, template, cases, template_file=None):
    seed = sum(map(ord, tname))
    out_cases = []
    names = set()
    for i, (name, text, prefix, tools) in enumerate(cases):
        if name in names:
            sys.exit(f"{tname}: duplicate case {name}")
        names.add(name)
        signal.alarm(CASE_TIMEOUT_S)
        try:
            out_cases.append(run_case(ref, template, name, text, prefix, tools, seed + i))
        except Timeout:
            print(f"warning: {tname}/{name} timed out in the reference; skipped", file=sys.stderr)
        finally:
            signal.alarm(0)
    doc = {
        "generator": "scripts/reference/stream_generate.py",
        "transformers": ref["version"],
        "regex": ref["regex"],
        "python": sys.version.split()[0],
        "template_name": tname,
    }
    if template_file:
        doc["template_file"] = template_file
    doc["template"] = template
    doc["cases"] = out_cases
    return doc


def run_invalid(ref):
    out = []
    for name, template, pointer in INVALID_TEMPLATES:
        try:
            ref["load"](template)
        except Exception as e:  # noqa: BLE001
            out.append({"name": name, "template": template, "pointer": pointer, "error": exc_text(e)})
            continue
        sys.exit(f"invalid template {name} loads in the reference")
    return {
        "generator": "scripts/reference/stream_generate.py",
        "transformers": ref["version"],
        "regex": ref["regex"],
        "python": sys.version.split()[0],
        "templates": out,
    }


def all_documents(ref):
    docs = {}
    shipped = shipped_templates(ref)
    for tname, template in shipped.items():
        cases = [(n, t, p, tools) for n, t, p, tools in shipped_cases(tname)]
        for j, text in enumerate(stitched_inputs(template, 1000 + len(tname), 40)):
            prefix = "" if j % 3 else template["start_anchor"] if isinstance(template["start_anchor"], str) else template["start_anchor"][0]
            cases.append((f"stitched_{j}", text, prefix, TOOLS if j % 2 else None))
        docs[f"{tname}.json"] = run_template(ref, tname, template, cases, f"response_templates/{tname}.json")
    for tname, template in EDGE_TEMPLATES.items():
        cases = [(n, t, p, TOOLS if tname in ("edge_json", "edge_transform") else None) for n, t, p in EDGE_CASES[tname]]
        # Most stitched inputs start with the required fields, so that they get past finalize().
        required = "".join(
            f["open"] + "r" + f["close"]
            for f in template["fields"].values()
            if f.get("optional") is False and isinstance(f.get("open"), str) and isinstance(f.get("close"), str)
        )
        for j, text in enumerate(stitched_inputs(template, 2000 + len(tname), 25)):
            text = required + text if j % 4 else text
            cases.append((f"stitched_{j}", text, "", TOOLS if j % 2 else None))
        docs[f"{tname}.json"] = run_template(ref, tname, template, cases)
    docs["invalid_templates.json"] = run_invalid(ref)
    return docs, shipped


def dumps(doc):
    # One line per case keeps diffs readable without tripling the file size.
    if "cases" in doc:
        head = {k: v for k, v in doc.items() if k != "cases"}
        lines = [json.dumps(c, ensure_ascii=False) for c in doc["cases"]]
        text = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
        return text + ',\n "cases": [\n' + ",\n".join(lines) + "\n ]\n}\n"
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def main(argv):
    check = "--check" in argv
    sys.setrecursionlimit(1000)
    signal.signal(signal.SIGALRM, _alarm)
    ref = load_reference()
    docs, shipped = all_documents(ref)
    files = {EXPECTED / name: dumps(doc) for name, doc in docs.items()}
    for tname, template in shipped.items():
        files[TEMPLATES_DIR / f"{tname}.json"] = json.dumps(template, ensure_ascii=False, indent=2) + "\n"
    stale = []
    total = 0
    for path, text in sorted(files.items()):
        total += len(docs.get(path.name, {}).get("cases", [])) if path.parent == EXPECTED else 0
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if check:
        expected_names = {p.name for p in files if p.parent == EXPECTED}
        extra = [p.name for p in EXPECTED.glob("*.json") if p.name not in expected_names]
        stale += [f"tests/streaming/expected/{n} (not generated)" for n in extra]
        if stale:
            sys.exit(f"stale streaming corpus: {', '.join(stale)} (rerun scripts/reference/stream_generate.py)")
    print(f"{total} cases in {len(docs) - 1} templates {'checked' if check else 'written'}")


if __name__ == "__main__":
    main(sys.argv[1:])
