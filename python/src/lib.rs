//! `chatparse._chatparse`: the Python module (see `chatparse/__init__.py` for the public names).
//!
//! `parse_response` follows the reference of each spec format: transformers 5.10's
//! `recursive_parse` for x-regex response schemas, transformers 5.23's `parse_response` for
//! response templates; `ResponseParser` is 5.23's streaming parser. Results are Python values as
//! the reference returns them, errors the exceptions it raises (`errors.rs`). The GIL is released
//! while loading specs and parsing.

mod convert;
mod errors;
mod ids;
mod spec;
mod stream;

use std::sync::Arc;

use chatparse::Value;
use chatparse_runtime::openai::{self, OpenAiError, Options, ReasoningKey};
use chatparse_runtime::{Format, ParseError};
use pyo3::exceptions::{PyImportError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::convert::{from_py, to_py, Strictness};
use crate::spec::{resolve, Loaded, PySpec};

/// The `prefix` argument: `None` or a `str`.
pub(crate) fn prefix_arg(prefix: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    match prefix {
        None => Ok(None),
        Some(p) if p.is_none() => Ok(None),
        Some(p) => match p.cast::<PyString>() {
            Ok(s) => Ok(Some(s.to_str()?.to_owned())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "prefix must be a str (the prompt before the output), not {}",
                p.get_type().name()?
            ))),
        },
    }
}

/// The `tools` argument as the reference reads it: JSON tool dicts, and functions or methods
/// turned into their JSON schema by transformers' `get_json_schema` (as `apply_chat_template`
/// does; that needs transformers installed). Other entries are kept as JSON where they have a
/// form (the reference ignores what is not a tool dict).
pub(crate) fn tools_arg(
    py: Python<'_>,
    tools: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Vec<Value>>> {
    let Some(tools) = tools.filter(|t| !t.is_none()) else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for tool in tools.try_iter()? {
        let tool = tool?;
        if !tool.is_instance_of::<PyDict>() && tool.is_callable() {
            let inspect = py.import("inspect")?;
            let is_function = inspect.call_method1("isfunction", (&tool,))?.is_truthy()?
                || inspect.call_method1("ismethod", (&tool,))?.is_truthy()?;
            if is_function {
                let get_json_schema = py
                    .import("transformers.utils")
                    .and_then(|m| m.getattr("get_json_schema"))
                    .map_err(|e| {
                        PyImportError::new_err(format!(
                            "functions as tools are turned into JSON schemas by transformers' \
                             get_json_schema, which could not be imported ({e}); pass the \
                             tool's JSON schema dict instead"
                        ))
                    })?;
                let schema = get_json_schema.call1((&tool,))?;
                out.push(from_py(&schema, Strictness::Lenient)?);
                continue;
            }
        }
        out.push(from_py(&tool, Strictness::Lenient)?);
    }
    Ok(Some(out))
}

/// The reference's refusal of a template parse without a prefix.
pub(crate) fn prefix_required() -> PyErr {
    PyValueError::new_err(
        "a response template needs `prefix`: the prompt the model continued (chat templates often \
         write part of the assistant message, e.g. an opening `<think>`, which the parser must \
         see). Pass prefix=\"\" if the output holds the whole message.",
    )
}

pub(crate) fn openai_options(reasoning: &str, normalize_arguments: bool) -> PyResult<Options> {
    let reasoning = match reasoning {
        "reasoning_content" => ReasoningKey::ReasoningContent,
        "reasoning" => ReasoningKey::Reasoning,
        "both" => ReasoningKey::Both,
        other => {
            return Err(PyValueError::new_err(format!(
                "reasoning must be \"reasoning_content\", \"reasoning\" or \"both\", not {other:?}"
            )))
        }
    };
    Ok(Options {
        reasoning,
        normalize_arguments,
        ..Options::default()
    })
}

pub(crate) fn openai_error(py: Python<'_>, e: &OpenAiError, format: Format) -> PyErr {
    match e {
        OpenAiError::Setup(e) => errors::setup_error(py, e, format),
        OpenAiError::Parse(e) => errors::parse_error(py, e, format),
    }
}

/// Parses complete outputs with a loaded spec, the GIL released.
fn parse_with(
    py: Python<'_>,
    spec: &Arc<Loaded>,
    texts: &[&str],
    prefix: Option<String>,
    tools: Option<Vec<Value>>,
) -> PyResult<Vec<Value>> {
    let format = spec.spec.format();
    let result: Result<Vec<Value>, ParseError> = match format {
        // A shipped name (with its stream profile) reads the prompt's reasoning block; tools do
        // not change an x-regex schema's parse.
        Format::Schema
            if spec.spec.reads_prefix() && prefix.as_deref().is_some_and(|p| !p.is_empty()) =>
        {
            let prefix = prefix.unwrap_or_default();
            py.detach(|| {
                texts
                    .iter()
                    .map(|t| spec.spec.parse_with_prefix(t, &prefix))
                    .collect()
            })
        }
        Format::Schema => {
            if !spec.spec.reads_prefix()
                && (prefix.as_deref().is_some_and(|p| !p.is_empty())
                    || tools.as_ref().is_some_and(|t| !t.is_empty()))
            {
                return Err(PyValueError::new_err(format!(
                    "prefix and tools apply to response templates and shipped names; the x-regex \
                     response schema {} parses the model output alone (as transformers' \
                     recursive_parse)",
                    spec.spec.source_name()
                )));
            }
            py.detach(|| texts.iter().map(|t| spec.parse(t)).collect())
        }
        Format::Template => {
            let Some(prefix) = prefix else {
                return Err(prefix_required());
            };
            let Some(template) = spec.spec.template() else {
                return Err(PyValueError::new_err("not a response template"));
            };
            let tools = tools.unwrap_or_default();
            py.detach(|| {
                texts
                    .iter()
                    .map(|t| template.parse_with_tools(t, &prefix, &tools))
                    .collect()
            })
        }
    };
    result.map_err(|e| errors::parse_error(py, &e, format))
}

fn parse_any<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    spec: &Arc<Loaded>,
    prefix: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let prefix = prefix_arg(prefix)?;
    let tools = tools_arg(py, tools)?;
    if let Ok(s) = text.cast::<PyString>() {
        let values = parse_with(py, spec, &[s.to_str()?], prefix, tools)?;
        return match values.first() {
            Some(v) => to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        };
    }
    if text.is_instance_of::<PyList>() || text.is_instance_of::<PyTuple>() {
        // A batch, as a tokenizer's parse_response takes one: a list of results.
        let strings: Vec<Bound<'py, PyString>> = text
            .try_iter()?
            .map(|item| {
                item.and_then(|i| {
                    i.cast_into::<PyString>().map_err(|e| {
                        PyTypeError::new_err(format!("a batch of outputs must hold str only ({e})"))
                    })
                })
            })
            .collect::<PyResult<_>>()?;
        let texts: Vec<&str> = strings
            .iter()
            .map(|s| s.to_str())
            .collect::<PyResult<_>>()?;
        let values = parse_with(py, spec, &texts, prefix, tools)?;
        let list = PyList::empty(py);
        for v in &values {
            list.append(to_py(py, v)?)?;
        }
        return Ok(list.into_any());
    }
    Err(PyTypeError::new_err(format!(
        "text must be a str (the decoded model output) or a list of them, not {}",
        text.get_type().name()?
    )))
}

/// Parses a complete model output into a message.
///
/// `spec` is a response schema (x-regex; transformers 5.10's `recursive_parse` semantics) or a
/// response template (transformers 5.23's `parse_response`, which needs `prefix`, the prompt the
/// output continues; `""` opts out), as a dict, its JSON text, a shipped name or a
/// `chatparse.Spec`. `text` may also be a list of outputs (a list of messages comes back).
#[pyfunction]
#[pyo3(signature = (text, spec, prefix=None, tools=None))]
fn parse_response<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyAny>,
    prefix: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let spec = resolve(py, spec)?;
    parse_any(py, text, &spec, prefix, tools)
}

#[pymethods]
impl PySpec {
    /// Loads and validates a spec (a dict, JSON text or shipped name; a shipped name is the
    /// x-regex schema when both kinds have it: `"response_templates/qwen3"` names the template).
    #[new]
    fn new(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PySpec {
            spec: resolve(py, spec)?,
        })
    }

    /// `"schema"` (x-regex response schema) or `"template"` (response template).
    #[getter]
    fn format(&self) -> &'static str {
        match self.spec.spec.format() {
            Format::Schema => "schema",
            Format::Template => "template",
        }
    }

    /// Whether `ResponseParser` can stream this spec (templates always; x-regex schemas whose
    /// fields are literal-delimited regions).
    #[getter]
    fn streamable(&self) -> bool {
        self.spec.spec.streamable().is_ok()
    }

    /// Why this spec cannot stream (`None` when it can).
    #[getter]
    fn not_streamable_reason(&self) -> Option<String> {
        self.spec.spec.streamable().err().map(|e| e.to_string())
    }

    /// The spec's source: a shipped file's path, or `<dict>` / `<string>`.
    #[getter]
    fn source_name(&self) -> String {
        self.spec.spec.source_name().to_owned()
    }

    /// The spec as a dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match (self.spec.spec.schema(), self.spec.spec.template()) {
            (Some(schema), _) => to_py(py, schema.as_value()),
            (_, Some(template)) => to_py(py, template.as_value()),
            _ => Ok(py.None().into_bound(py)),
        }
    }

    /// `parse_response(text, self, prefix, tools)`.
    #[pyo3(signature = (text, prefix=None, tools=None))]
    fn parse<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        prefix: Option<&Bound<'py, PyAny>>,
        tools: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        parse_any(py, text, &self.spec, prefix, tools)
    }

    fn __repr__(&self) -> String {
        format!(
            "chatparse.Spec({} {:?})",
            self.format(),
            self.spec.spec.source_name()
        )
    }
}

/// A parsed message (either format, any family) as an OpenAI assistant message: `role`,
/// `content`, `reasoning_content` (see `reasoning`), `tool_calls` with ids and JSON-text
/// `arguments`. `raw` is the model output it came from (its own JSON argument text is kept).
#[pyfunction]
#[pyo3(signature = (message, raw=None, *, reasoning="reasoning_content", normalize_arguments=false, ids=None))]
fn to_openai<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
    raw: Option<&str>,
    reasoning: &str,
    normalize_arguments: bool,
    ids: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let message = from_py(message, Strictness::Strict)?;
    let options = openai_options(reasoning, normalize_arguments)?;
    let ids_error = ids::IdsError::default();
    let mut policy = ids::policy(ids, &ids_error)?;
    let out = openai::to_message(&message, raw, &options, &mut policy);
    ids_error.raise()?;
    to_py(py, &out)
}

/// Parses a complete output with `spec` into an OpenAI assistant message (exactly the message
/// `OpenAIStream`'s deltas rebuild, for any chunking).
#[pyfunction]
#[pyo3(signature = (text, spec, prefix=None, tools=None, *, reasoning="reasoning_content", normalize_arguments=false, ids=None))]
#[allow(clippy::too_many_arguments)]
fn parse_openai<'py>(
    py: Python<'py>,
    text: &str,
    spec: &Bound<'py, PyAny>,
    prefix: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
    reasoning: &str,
    normalize_arguments: bool,
    ids: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let spec = resolve(py, spec)?;
    let format = spec.spec.format();
    let prefix = prefix_arg(prefix)?;
    let tools = tools_arg(py, tools)?;
    let options = openai_options(reasoning, normalize_arguments)?;
    let ids_error = ids::IdsError::default();
    let policy = ids::policy(ids, &ids_error)?;
    let result = py.detach(|| {
        openai::parse(
            &spec.spec,
            text,
            prefix.as_deref(),
            tools.as_deref(),
            options,
            Box::new(policy),
        )
    });
    ids_error.raise()?;
    let message = result.map_err(|e| openai_error(py, &e, format))?;
    to_py(py, &message)
}

/// The names of the shipped x-regex response schemas.
/// `render(template, messages, tools=None, add_generation_prompt=False, *, date=None, **extra)`:
/// the chat template's text for a conversation, as transformers'
/// `apply_chat_template(messages, tools=tools, add_generation_prompt=…, tokenize=False, **extra)`
/// (`chatparse::render`). `date=(year, month, day)` fixes what `strftime_now` sees. A template
/// that does not compile or raises gives `chatparse.TemplateError`.
#[pyfunction]
#[pyo3(signature = (template, messages, tools=None, add_generation_prompt=false, *, date=None, **extra))]
fn render(
    py: Python<'_>,
    template: &str,
    messages: &Bound<'_, PyAny>,
    tools: Option<&Bound<'_, PyAny>>,
    add_generation_prompt: bool,
    date: Option<(i32, u32, u32)>,
    extra: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    use chatparse::render::{ChatTemplate, RenderErrorKind};
    let messages = match convert::from_py(messages, convert::Strictness::Strict)? {
        Value::Array(items) => items,
        _ => return Err(PyTypeError::new_err("messages must be a list of dicts")),
    };
    let tools = match tools.filter(|t| !t.is_none()) {
        Some(t) => match convert::from_py(t, convert::Strictness::Strict)? {
            Value::Array(items) => Some(items),
            _ => return Err(PyTypeError::new_err("tools must be a list")),
        },
        None => None,
    };
    let extra = match extra {
        Some(d) => match convert::from_py(d.as_any(), convert::Strictness::Strict)? {
            Value::Object(map) => map,
            _ => chatparse::Map::new(),
        },
        None => chatparse::Map::new(),
    };
    let rendered = py.detach(|| {
        let template = ChatTemplate::new(template)?;
        let template = match date {
            Some((y, m, d)) => template.with_fixed_date(y, m, d)?,
            None => template,
        };
        template.apply(&messages, tools.as_deref(), add_generation_prompt, &extra)
    });
    rendered.map_err(|e| match e.kind() {
        RenderErrorKind::Argument => PyValueError::new_err(e.to_string()),
        RenderErrorKind::Raised => errors::custom(py, "TemplateError", e.message().to_owned()),
        _ => errors::custom(py, "TemplateError", e.to_string()),
    })
}

#[pyfunction]
fn shipped_schemas() -> Vec<&'static str> {
    chatparse::shipped::names().collect()
}

/// The names of the shipped response templates.
#[pyfunction]
fn shipped_templates() -> Vec<&'static str> {
    chatparse::templates::names().collect()
}

fn shipped_dict<'py>(
    py: Python<'py>,
    text: Option<&str>,
    what: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(text) = text else {
        return Err(PyValueError::new_err(format!(
            "no shipped {what} named {name:?}"
        )));
    };
    let value = chatparse_runtime::py::json::loads(text)
        .map_err(|e| PyValueError::new_err(format!("shipped {what} {name:?}: {e}")))?;
    to_py(py, &value)
}

/// A shipped x-regex response schema as a dict (what `tokenizer.response_schema` holds).
#[pyfunction]
fn schema<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    shipped_dict(py, chatparse::shipped::text(name), "schema", name)
}

/// A shipped response template as a dict (what `tokenizer.response_template` holds).
#[pyfunction]
fn template<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    shipped_dict(
        py,
        chatparse::templates::text(name),
        "response template",
        name,
    )
}

/// Forgets every loaded spec (dict specs are reloaded anyway when they change).
#[pyfunction]
fn clear_cache() {
    spec::clear();
}

#[pymodule(gil_used = false)]
fn _chatparse(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(parse_response, m)?)?;
    m.add_function(wrap_pyfunction!(to_openai, m)?)?;
    m.add_function(wrap_pyfunction!(parse_openai, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(shipped_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(shipped_templates, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(template, m)?)?;
    m.add_function(wrap_pyfunction!(clear_cache, m)?)?;
    m.add_class::<PySpec>()?;
    m.add_class::<stream::ResponseParser>()?;
    m.add_class::<stream::OpenAIStream>()?;
    Ok(())
}
