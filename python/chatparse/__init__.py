"""chatparse: parse chat-model output into structured messages, from Hugging Face response
schemas (x-regex, transformers 5.10) and response templates (transformers 5.23).

A faster drop-in for transformers' response parsing, with the same results and exceptions::

    import chatparse
    message = chatparse.parse_response(output, tokenizer.response_schema)
    message = chatparse.parse_response(output, "gpt_oss")            # a shipped schema
    parser = chatparse.ResponseParser("qwen3", prefix=prompt)         # streaming (a template)
    for chunk in stream:
        for event in parser.feed(chunk):
            ...
    message, events = parser.finalize()
"""

from ._chatparse import (
    OpenAIStream,
    ResponseParser,
    Spec,
    __version__,
    clear_cache,
    parse_openai,
    parse_response,
    render,
    schema,
    shipped_schemas,
    shipped_templates,
    template,
    to_openai,
)
from ._errors import (
    JMESPathTypeError,
    NotStreamableError,
    NotUnderstoodError,
    SchemaError,
    TemplateError,
    UnrepresentableError,
)

__all__ = [
    "JMESPathTypeError",
    "NotStreamableError",
    "NotUnderstoodError",
    "OpenAIStream",
    "ResponseParser",
    "SchemaError",
    "Spec",
    "TemplateError",
    "UnrepresentableError",
    "__version__",
    "clear_cache",
    "parse_openai",
    "parse_response",
    "render",
    "schema",
    "shipped_schemas",
    "shipped_templates",
    "template",
    "to_openai",
]
