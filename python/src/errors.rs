//! Rust errors as the Python exceptions the reference raises in the same place.
//!
//! The reference raises built-in exceptions (`ValueError`, `TypeError`, `KeyError`, …) and, for
//! JMESPath transforms, `jmespath`'s own. We raise the same classes (the built-ins themselves),
//! with the JSON pointer of the spec node that failed as the exception's `pointer` attribute.
//! Where the reference returns a value that JSON cannot carry (NaN, infinities, lone surrogates),
//! we raise `chatparse.UnrepresentableError` (a `ValueError`). Classes of our own live in
//! `chatparse/_errors.py`.

use chatparse_runtime::py::json::JsonError;
use chatparse_runtime::{Format, ParseError, ParseErrorKind, SchemaError, StreamSetupError};
use pyo3::exceptions::{
    PyAttributeError, PyKeyError, PyOverflowError, PyRecursionError, PyRuntimeError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The Python exception class of a parse error, by name (see [`class_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    OverflowError,
    RecursionError,
    RuntimeError,
    JmesPathTypeError,
    Unrepresentable,
    NotUnderstood,
}

/// Which exception the reference raises for `kind`, in a spec of `format`.
pub fn class_of(kind: &ParseErrorKind, format: Format) -> Class {
    use ParseErrorKind as K;
    match kind {
        K::RegexInputNotString { .. } | K::ParserInputNotString { .. } => Class::TypeError,
        K::UnexpectedType { .. } => Class::TypeError,
        K::KeyValueGroupMissing
        | K::ObjectWithoutProperties
        | K::InvalidInteger(_)
        | K::InvalidNumber(_)
        | K::InvalidBoolean(_)
        | K::MissingRequired(_)
        | K::PrefixItemsLength { .. } => Class::ValueError,
        K::Json(e) => match e {
            JsonError::Decode { .. } | JsonError::IntegerTooLong { .. } => Class::ValueError,
            JsonError::TooDeep { .. } => Class::RecursionError,
            JsonError::NonFinite { .. } | JsonError::LoneSurrogate { .. } => Class::Unrepresentable,
        },
        K::NumberOutOfRange(message) => {
            if message.contains("too large to convert to a float") {
                Class::OverflowError // float(int) of a huge int
            } else if message.contains("4300-digit limit") {
                Class::ValueError // int(str) past sys.get_int_max_str_digits()
            } else {
                Class::Unrepresentable // float("inf"), float("nan"), "1e400"
            }
        }
        K::Transform(message) => match format {
            Format::Schema => jmespath_class(message),
            // The template's transform placeholders: `KeyError` for an undefined name, else
            // `ValueError` (content_parsers.py).
            Format::Template if message.contains("is not defined") => Class::KeyError,
            Format::Template => Class::ValueError,
        },
        K::StreamField(message) => {
            if message.starts_with("TypeError:") {
                Class::TypeError
            } else if message.starts_with("AttributeError:") {
                Class::AttributeError
            } else {
                Class::ValueError
            }
        }
        // The reference has no such state (its state after an error is undefined), or loops
        // forever (no progress), or a regex engine gave up where Python's would go on.
        K::StreamPoisoned | K::StreamNoProgress | K::Regex(_) => Class::RuntimeError,
        // A shipped family's completeness check (the reference returns a message without it).
        K::NotUnderstood { .. } => Class::NotUnderstood,
        _ => Class::ValueError,
    }
}

/// What python `jmespath` 1.1.0 raises at search time, from our message (worded like its
/// `str(exception)`, see `chatparse_runtime::jmespath`).
fn jmespath_class(message: &str) -> Class {
    const TYPE_ERRORS: &[&str] = &[
        "not supported between instances of",
        "requires string as left operand",
        "unhashable type",
        "object is not iterable",
        "cannot convert dictionary update sequence",
        "int() argument must be",
        "keys must be str",
    ];
    if message.starts_with("In function ") && message.contains("invalid type for value") {
        Class::JmesPathTypeError
    } else if TYPE_ERRORS.iter().any(|m| message.contains(m)) {
        Class::TypeError
    } else if message.contains("too large to convert to float")
        || message.contains("too large for a float")
    {
        Class::OverflowError
    } else if message.contains("maximum recursion depth") {
        Class::RecursionError
    } else if message.contains("python would return inf or nan")
        || message.contains("cannot be represented")
        || message.contains("not a finite number")
    {
        Class::Unrepresentable
    } else {
        Class::ValueError
    }
}

fn own_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("chatparse._errors")?.getattr(name)
}

/// The exception for a parse error of a spec of `format`.
pub fn parse_error(py: Python<'_>, e: &ParseError, format: Format) -> PyErr {
    let message = e.to_string();
    let err = match class_of(&e.kind, format) {
        Class::ValueError => PyValueError::new_err(message),
        Class::TypeError => PyTypeError::new_err(message),
        Class::KeyError => PyKeyError::new_err(message),
        Class::AttributeError => PyAttributeError::new_err(message),
        Class::OverflowError => PyOverflowError::new_err(message),
        Class::RecursionError => PyRecursionError::new_err(message),
        Class::RuntimeError => PyRuntimeError::new_err(message),
        Class::JmesPathTypeError => custom(py, "JMESPathTypeError", message),
        Class::Unrepresentable => custom(py, "UnrepresentableError", message),
        Class::NotUnderstood => custom(py, "NotUnderstoodError", message),
    };
    let value = err.value(py);
    let _ = value.setattr("pointer", &e.pointer);
    // Where in the whole output: (byte offset, line, column), or None.
    let _ = value.setattr("position", e.position.map(|p| (p.offset, p.line, p.column)));
    if let ParseErrorKind::NotUnderstood { span, .. } = &e.kind {
        let _ = value.setattr("span", *span);
    }
    err
}

pub fn custom(py: Python<'_>, class: &str, message: String) -> PyErr {
    match own_class(py, class).and_then(|c| c.call1((message,))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// `chatparse.SchemaError` (a `ValueError`, as the reference's template loader raises): every
/// problem, each also as `{"pointer", "message", "fix"}` in its `problems` attribute.
pub fn schema_error(py: Python<'_>, e: &SchemaError) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let problems = PyList::empty(py);
        for p in &e.problems {
            let d = PyDict::new(py);
            d.set_item("pointer", &p.pointer)?;
            d.set_item("message", &p.message)?;
            d.set_item("fix", &p.fix)?;
            problems.append(d)?;
        }
        let instance = own_class(py, "SchemaError")?.call1((e.to_string(),))?;
        instance.setattr("problems", problems)?;
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|err| err)
}

/// A stream that cannot start.
pub fn setup_error(py: Python<'_>, e: &StreamSetupError, format: Format) -> PyErr {
    match e {
        StreamSetupError::Prefix(parse) => parse_error(py, parse, format),
        StreamSetupError::NotStreamable(why) => {
            let err = custom(py, "NotStreamableError", e.to_string());
            let _ = err.value(py).setattr("pointer", &why.pointer);
            err
        }
        StreamSetupError::NotApplicable { .. } | StreamSetupError::Lenient { .. } => {
            PyValueError::new_err(e.to_string())
        }
    }
}
