//! JSON values between Rust (chatparse's [`Value`]: keys in order, integers exact) and Python
//! objects, with the reference's types: object key order kept, integers as (unbounded) `int`,
//! everything else numeric as `float`.

use chatparse::value::{Iter as MapIter, Map, Number, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Deepest nesting converted from Python (a list that contains itself must not recurse forever).
/// [`from_py`] recurses, one frame chain per level: at about 200 bytes a level, 2048 levels stay
/// within 512 KB of stack.
const MAX_DEPTH: usize = 2048;

/// A JSON value as the Python object `json.loads` would give.
///
/// Iterative (an explicit stack of open lists and dicts), so deep values cost no thread stack.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    enum Open<'a, 'py> {
        List(Bound<'py, PyList>, std::slice::Iter<'a, Value>),
        Dict(Bound<'py, PyDict>, MapIter<'a>, Option<&'a String>),
    }
    let mut stack: Vec<Open<'_, 'py>> = Vec::new();
    let mut next = Some(value);
    loop {
        // Convert `next`: a scalar is done at once; a container opens and fills below.
        let mut done = match next.take() {
            None => None,
            Some(Value::Array(items)) => {
                stack.push(Open::List(PyList::empty(py), items.iter()));
                None
            }
            Some(Value::Object(map)) => {
                stack.push(Open::Dict(PyDict::new(py), map.iter(), None));
                None
            }
            Some(scalar) => Some(scalar_to_py(py, scalar)?),
        };
        // Hand finished objects to their parents until one has another child to convert.
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.unwrap_or_else(|| py.None().into_bound(py)));
            };
            match top {
                Open::List(list, items) => {
                    if let Some(obj) = done.take() {
                        list.append(obj)?;
                    }
                    if let Some(item) = items.next() {
                        next = Some(item);
                        break;
                    }
                }
                Open::Dict(dict, entries, key) => {
                    if let Some(obj) = done.take() {
                        let k = key.take().map(String::as_str).unwrap_or_default();
                        dict.set_item(PyString::new(py, k), obj)?;
                    }
                    if let Some((k, v)) = entries.next() {
                        *key = Some(k);
                        next = Some(v);
                        break;
                    }
                }
            }
            done = Some(match stack.pop() {
                Some(Open::List(list, _)) => list.into_any(),
                Some(Open::Dict(dict, _, _)) => dict.into_any(),
                None => unreachable!("the stack had a top"),
            });
        }
    }
}

/// A JSON scalar (not an array or object) as a Python object.
fn scalar_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => number_to_py(py, n)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        _ => py.None().into_bound(py),
    })
}

/// A number: `int` (any size, never through `f64`) or `float`.
fn number_to_py<'py>(py: Python<'py>, n: &Number) -> PyResult<Bound<'py, PyAny>> {
    if n.is_f64() {
        return match n.as_f64() {
            Some(f) => Ok(PyFloat::new(py, f).into_any()),
            None => Err(PyValueError::new_err(format!(
                "number {n} has no float value"
            ))),
        };
    }
    if let Some(small) = n.as_i64() {
        return Ok(small.into_pyobject(py)?.into_any());
    }
    // Unbounded: Python's own int(str) (the runtime keeps ints within its 4300-digit limit).
    py.get_type::<PyInt>().call1((n.to_string(),))
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
        let text = text.to_str()?;
        return Number::from_integer_str(text)
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err(format!("int {text} has no JSON form")));
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
