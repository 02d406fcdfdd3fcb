//! Run-time helpers for JMESPath expressions compiled to Rust.
//!
//! `chatparse-codegen` turns a transform's syntax tree into straight-line Rust over
//! [`Value`] (see `codegen/src/jmespath.rs`); the steps that are more than a few
//! lines (slices, flattening, comparisons, function calls) call these helpers, which reuse the
//! interpreter's own code so that both give identical results, key order and errors included.
//! Nothing here is meant to be called by hand.

use super::ast::Slice;
use super::eval::{compare as eval_compare, py_index, py_slice, Interp};
use super::functions::call_function;
use super::value::Val;
use super::JmesError;
use crate::value::{Map, Value};
use std::borrow::Cow;

pub use super::ast::Comparator;

/// A compiled expression: `jmespath.search(expr, value)` as a plain function.
pub type CompiledFn = fn(&Value) -> Result<Value, JmesError>;

static NULL: Value = Value::Null;

/// `foo`: the member of an object, `null` for anything else or a missing key.
#[inline]
pub fn field<'a>(v: &'a Value, name: &str) -> &'a Value {
    match v {
        Value::Object(m) => m.get(name).unwrap_or(&NULL),
        _ => &NULL,
    }
}

/// `[i]` with Python indexing; `null` when out of range or not an array.
#[inline]
pub fn index(v: &Value, i: i64) -> &Value {
    match v {
        Value::Array(a) => py_index(a.len(), i).and_then(|i| a.get(i)).unwrap_or(&NULL),
        _ => &NULL,
    }
}

/// `[start:stop:step]` with Python slice semantics; `null` when not an array.
pub fn slice(
    v: &Value,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Result<Value, JmesError> {
    match v {
        Value::Array(a) => {
            let idx = py_slice(a.len(), &Slice { start, stop, step })?;
            Ok(Value::Array(
                idx.into_iter().filter_map(|i| a.get(i)).cloned().collect(),
            ))
        }
        _ => Ok(Value::Null),
    }
}

/// JMESPath falsiness: `null`, `false`, `""`, `[]`, `{}`.
#[inline]
pub fn is_false(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

/// `!x`: Python `not`, except that any number gives `false`.
#[inline]
pub fn not(v: &Value) -> Value {
    Value::Bool(!matches!(v, Value::Number(_)) && is_false(v))
}

/// `x[]`'s first step: one level of flattening; `null` when not an array.
pub fn flatten(v: &Value) -> Value {
    let Value::Array(a) = v else {
        return Value::Null;
    };
    let mut out = Vec::with_capacity(a.len());
    for elem in a {
        match elem {
            Value::Array(inner) => out.extend(inner.iter().cloned()),
            other => out.push(other.clone()),
        }
    }
    Value::Array(out)
}

/// [`flatten`] without copying: the elements of `v`'s elements (or the elements themselves
/// when not arrays), borrowed; `None` when `v` is not an array.
pub fn flatten_refs(v: &Value) -> Option<Vec<&Value>> {
    match v {
        Value::Array(a) => Some(flatten_list(a.iter().collect())),
        _ => None,
    }
}

/// One level of flattening over borrowed elements.
pub fn flatten_list(items: Vec<&Value>) -> Vec<&Value> {
    let mut out = Vec::with_capacity(items.len());
    for elem in items {
        match elem {
            Value::Array(inner) => out.extend(inner.iter()),
            other => out.push(other),
        }
    }
    out
}

/// `l <op> r`, exactly as the interpreter compares.
pub fn compare(op: Comparator, l: &Value, r: &Value) -> Result<Value, JmesError> {
    eval_compare(op, &Val::Ref(l), &Val::Ref(r))?.to_value()
}

/// `name(args...)` through the interpreter's built-in functions (type checks, arity and error
/// messages included). The code generator only emits calls whose result is plain JSON.
pub fn call(name: &str, args: &[&Value]) -> Result<Value, JmesError> {
    let interp = Interp::new();
    let args = args.iter().map(|v| Val::Ref(v)).collect();
    call_function(&interp, name, args)?.to_value()
}

/// `merge(args...)`: `dict.update` over objects, in order (a repeated key keeps its first
/// position and takes the last value). Owned arguments are moved, not copied. Anything but
/// objects goes through [`call`] for the interpreter's errors.
pub fn merge(args: Vec<Cow<'_, Value>>) -> Result<Value, JmesError> {
    if args.is_empty() || !args.iter().all(|v| v.is_object()) {
        let refs: Vec<&Value> = args.iter().map(|v| &**v).collect();
        return call("merge", &refs);
    }
    let mut out = Map::new();
    for arg in args {
        match arg {
            Cow::Owned(Value::Object(m)) if out.is_empty() => out = m,
            Cow::Owned(Value::Object(m)) => {
                for (k, v) in m {
                    out.insert(k, v);
                }
            }
            Cow::Borrowed(Value::Object(m)) => {
                if out.is_empty() {
                    out = Map::with_capacity(m.len());
                }
                for (k, v) in m {
                    out.insert(k.clone(), v.clone());
                }
            }
            _ => {}
        }
    }
    Ok(Value::Object(out))
}

/// A backtick literal, from the JSON text the code generator wrote (printed from a value the same
/// parser read, so this cannot fail; `null` if it somehow did).
pub fn literal(json: &str) -> Value {
    crate::value::from_str(json).unwrap_or(Value::Null)
}
