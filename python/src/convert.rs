//! JSON values between Rust (`serde_json::Value` with `preserve_order` and
//! `arbitrary_precision`) and Python objects, with the reference's types: object key order kept,
//! integers as (unbounded) `int`, everything else numeric as `float`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Deepest nesting converted from Python (a list that contains itself must not recurse forever).
const MAX_DEPTH: usize = 2048;

/// A JSON value as the Python object `json.loads` would give.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => number_to_py(py, n)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(PyString::new(py, k), to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// Whether a number's JSON text is a Python `int` (the runtime writes floats with `.` or `e`).
fn is_int_text(text: &str) -> bool {
    !text.contains(['.', 'e', 'E'])
}

/// A number from its text: `int` (any size) or `float`, never through `f64` for integers.
fn number_to_py<'py>(py: Python<'py>, n: &Number) -> PyResult<Bound<'py, PyAny>> {
    let text = n.as_str();
    if is_int_text(text) {
        if let Ok(small) = text.parse::<i64>() {
            return Ok(small.into_pyobject(py)?.into_any());
        }
        // Unbounded: Python's own int(str) (the runtime keeps ints within its 4300-digit limit).
        return py.get_type::<PyInt>().call1((text,));
    }
    match text.parse::<f64>() {
        Ok(f) => Ok(PyFloat::new(py, f).into_any()),
        Err(_) => Err(PyValueError::new_err(format!(
            "number {text:?} has no float value"
        ))),
    }
}

/// How [`from_py`] treats objects that have no JSON form.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// A `TypeError` (specs: what the reference would read must be JSON).
    Strict,
    /// `null` (tools: the reference only reads names and parameter types from them).
    Lenient,
}

/// A Python object as a JSON value: `dict` (string keys, order kept), `list`/`tuple`, `str`,
/// `int` (exactly, any size), `float` (finite), `bool`, `None`.
pub fn from_py(obj: &Bound<'_, PyAny>, strictness: Strictness) -> PyResult<Value> {
    from_py_at(obj, strictness, 0)
}

fn from_py_at(obj: &Bound<'_, PyAny>, strictness: Strictness, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(
            "value nested too deeply (or containing itself) to convert to JSON",
        ));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(small) = obj.extract::<i64>() {
            return Ok(Value::Number(small.into()));
        }
        let text = obj.str()?;
        return text
            .to_str()?
            .parse::<Number>()
            .map(Value::Number)
            .map_err(|e| PyValueError::new_err(format!("int has no JSON form: {e}")));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let f = f.value();
        return match Number::from_f64(f) {
            Some(n) => Ok(Value::Number(n)),
            None if strictness == Strictness::Lenient => Ok(Value::Null),
            None => Err(PyValueError::new_err(format!(
                "float {f} (NaN or infinity) has no JSON form"
            ))),
        };
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                if strictness == Strictness::Lenient {
                    continue;
                }
                return Err(PyTypeError::new_err(format!(
                    "dict keys must be str to convert to JSON, not {}",
                    k.get_type().name()?
                )));
            };
            map.insert(
                key.to_str()?.to_owned(),
                from_py_at(&v, strictness, depth + 1)?,
            );
        }
        return Ok(Value::Object(map));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return list
            .iter()
            .map(|item| from_py_at(&item, strictness, depth + 1))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return tuple
            .iter()
            .map(|item| from_py_at(&item, strictness, depth + 1))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    match strictness {
        Strictness::Lenient => Ok(Value::Null),
        Strictness::Strict => Err(PyTypeError::new_err(format!(
            "{} is not JSON (expected dict, list, str, int, float, bool or None)",
            obj.get_type().name()?
        ))),
    }
}
