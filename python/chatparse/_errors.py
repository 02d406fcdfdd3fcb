"""Exception classes of chatparse's own.

Parse errors are the built-in exceptions the reference raises in the same place (``ValueError``,
``TypeError``, ``KeyError``, ...), with the JSON pointer of the spec node that failed in their
``pointer`` attribute. These classes cover the rest.
"""

__all__ = [
    "SchemaError",
    "NotStreamableError",
    "UnrepresentableError",
    "NotUnderstoodError",
    "JMESPathTypeError",
    "TemplateError",
]


class SchemaError(ValueError):
    """A spec that cannot be used. ``problems`` lists every problem as
    ``{"pointer", "message", "fix"}``. (transformers' template loader raises ``ValueError``;
    for an x-regex schema the reference only fails once a message reaches the broken node.)"""

    problems: list


class NotStreamableError(ValueError):
    """An x-regex response schema whose fields are not literal-delimited regions cannot stream
    (``pointer`` names the node); use ``parse_response`` on the whole output instead."""


class NotUnderstoodError(ValueError):
    """A shipped name's completeness check found a part of the output that the family's schema
    would leave out of the message without a word (a second call block, a call with keys the
    format does not write, text outside the format's blocks). ``span`` is its byte range in the
    output. The reference (the schema alone) returns a message without it; ``parse_response`` with
    the schema as a dict does too."""


class UnrepresentableError(ValueError):
    """The reference would return a value that JSON cannot carry here (NaN, an infinity, a lone
    surrogate); chatparse's values are JSON, so it raises instead."""


try:  # jinja2's class, what transformers' apply_chat_template raises, when jinja2 is installed
    from jinja2.exceptions import TemplateError as _TemplateError
except ImportError:  # pragma: no cover - depends on the environment
    _TemplateError = Exception


class TemplateError(_TemplateError):
    """A chat template that does not compile, or that raised while rendering (its
    ``raise_exception`` message, word for word); a subclass of jinja2's ``TemplateError`` when
    jinja2 is installed."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.message = message

    def __str__(self):
        return self.message


try:  # the class the reference raises, when jmespath is installed
    from jmespath.exceptions import JMESPathTypeError as _JMESPathTypeError
except ImportError:  # pragma: no cover - depends on the environment
    _JMESPathTypeError = ValueError  # jmespath's exceptions are ValueErrors too


class JMESPathTypeError(_JMESPathTypeError):
    """A JMESPath ``transform`` function got an argument of the wrong type (jmespath's
    ``JMESPathTypeError``, a subclass of it when jmespath is installed)."""

    def __init__(self, message):
        ValueError.__init__(self, message)
        self.message = message

    def __str__(self):
        return self.message


for _cls in (SchemaError, NotStreamableError, UnrepresentableError, JMESPathTypeError, TemplateError):
    _cls.__module__ = "chatparse"
