//! The interpreter's value type.
//!
//! Python's interpreter passes arbitrary Python objects around, including
//! expression references (`&foo`) that can end up inside arrays and objects
//! (`[&a]`, `{k: &a}`) and that compare by identity. `Val` can hold those,
//! borrows the input data and literals instead of copying them, and shares
//! built containers through `Rc` so projections do not deep-copy.

use super::ast::Ast;
use super::JmesError;
use crate::py::num::PyNum;
use crate::py::text::{json_quote_ascii, py_repr_value};
use crate::py::unicode::repr;
use crate::value::{Map, Number, Value};
use std::cmp::Ordering;
use std::rc::Rc;

/// Deepest data nesting that equality, `to_string` and error messages walk
/// (python raises `RecursionError` somewhere below a thousand levels).
pub(crate) const MAX_DATA_DEPTH: usize = 900;

/// An insertion-ordered object built during evaluation.
pub(crate) type Obj<'a> = Vec<(Key<'a>, Val<'a>)>;

/// An object key. Python dicts built by `merge` (`dict.update` accepts
/// key/value pairs) can have non-string keys; they live on until the result
/// is converted to JSON.
#[derive(Clone, Debug)]
pub(crate) enum Key<'a> {
    Str(String),
    /// A hashable non-string: null, boolean, number or expression reference.
    Py(Val<'a>),
}

/// A borrowed [`Key`] (JSON objects only have string keys).
#[derive(Clone, Copy)]
pub(crate) enum KeyRef<'v, 'a> {
    Str(&'v str),
    Py(&'v Val<'a>),
}

impl<'v, 'a> KeyRef<'v, 'a> {
    /// The key as a value (`keys()`).
    pub(crate) fn to_val(self) -> Val<'a> {
        match self {
            KeyRef::Str(s) => Val::str(s),
            KeyRef::Py(v) => v.clone(),
        }
    }

    pub(crate) fn to_key(self) -> Key<'a> {
        match self {
            KeyRef::Str(s) => Key::Str(s.to_string()),
            KeyRef::Py(v) => Key::Py(v.clone()),
        }
    }

    /// Python dict key equality (`1`, `1.0` and `True` are the same key).
    pub(crate) fn same_key(self, other: KeyRef<'_, '_>) -> bool {
        match (self, other) {
            (KeyRef::Str(a), KeyRef::Str(b)) => a == b,
            // Keys are scalars (hashable), so this cannot recurse or fail.
            (KeyRef::Py(a), KeyRef::Py(b)) => py_eq(a, b).unwrap_or(false),
            _ => false,
        }
    }

    fn py_repr(self) -> String {
        match self {
            KeyRef::Str(s) => repr(s),
            KeyRef::Py(v) => v.py_repr(),
        }
    }

    /// `json.dumps` key conversion (non-string scalars become strings).
    fn dumps(self, out: &mut String) -> Result<(), JmesError> {
        let text = match self {
            KeyRef::Str(s) => {
                json_quote_ascii(s, out);
                return Ok(());
            }
            KeyRef::Py(v) => match v.view() {
                View::Null => "null".to_string(),
                View::Bool(b) => b.to_string(),
                View::Num(n) => match PyNum::from_number(n) {
                    PyNum::Int(b) => b.to_decimal(),
                    PyNum::Float(f) => crate::py::num::float_repr(f),
                },
                _ => {
                    return Err(JmesError::runtime(&format!(
                        "keys must be str, int, float, bool or None, not {}",
                        v.py_type()
                    )))
                }
            },
        };
        json_quote_ascii(&text, out);
        Ok(())
    }
}

impl<'a> Key<'a> {
    pub(crate) fn as_ref(&self) -> KeyRef<'_, 'a> {
        match self {
            Key::Str(s) => KeyRef::Str(s),
            Key::Py(v) => KeyRef::Py(v),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Val<'a> {
    /// Borrowed from the input data or from a literal in the tree.
    Ref(&'a Value),
    Null,
    Bool(bool),
    Num(Number),
    Str(Rc<str>),
    Arr(Rc<Vec<Val<'a>>>),
    Obj(Rc<Obj<'a>>),
    /// An expression reference; `id` gives Python's object identity.
    ExpRef(&'a Ast, u64),
}

/// A borrowed look at a value's kind and contents.
pub(crate) enum View<'v, 'a> {
    Null,
    Bool(bool),
    Num(&'v Number),
    Str(&'v str),
    Arr(ArrRef<'v, 'a>),
    Obj(ObjRef<'v, 'a>),
    ExpRef(u64),
}

#[derive(Clone, Copy)]
pub(crate) enum ArrRef<'v, 'a> {
    Json(&'a [Value]),
    Own(&'v [Val<'a>]),
}

#[derive(Clone, Copy)]
pub(crate) enum ObjRef<'v, 'a> {
    Json(&'a Map),
    Own(&'v Obj<'a>),
}

impl<'v, 'a> ArrRef<'v, 'a> {
    pub(crate) fn len(self) -> usize {
        match self {
            ArrRef::Json(a) => a.len(),
            ArrRef::Own(a) => a.len(),
        }
    }

    pub(crate) fn get(self, i: usize) -> Option<Val<'a>> {
        match self {
            ArrRef::Json(a) => a.get(i).map(Val::Ref),
            ArrRef::Own(a) => a.get(i).cloned(),
        }
    }

    pub(crate) fn iter(self) -> impl Iterator<Item = Val<'a>> + 'v {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}

impl<'v, 'a> ObjRef<'v, 'a> {
    pub(crate) fn len(self) -> usize {
        match self {
            ObjRef::Json(m) => m.len(),
            ObjRef::Own(m) => m.len(),
        }
    }

    pub(crate) fn get(self, key: &str) -> Option<Val<'a>> {
        match self {
            ObjRef::Json(m) => m.get(key).map(Val::Ref),
            ObjRef::Own(m) => m
                .iter()
                .find(|(k, _)| matches!(k, Key::Str(k) if k == key))
                .map(|(_, v)| v.clone()),
        }
    }

    /// Lookup with Python key equality (for dict comparison).
    pub(crate) fn get_key(self, key: KeyRef<'_, '_>) -> Option<Val<'a>> {
        match (self, key) {
            (_, KeyRef::Str(s)) => self.get(s),
            (ObjRef::Json(_), KeyRef::Py(_)) => None,
            (ObjRef::Own(m), k) => m
                .iter()
                .find(|(mk, _)| mk.as_ref().same_key(k))
                .map(|(_, v)| v.clone()),
        }
    }

    pub(crate) fn entries(self) -> Vec<(KeyRef<'v, 'a>, Val<'a>)> {
        match self {
            ObjRef::Json(m) => m
                .iter()
                .map(|(k, v)| (KeyRef::Str(k), Val::Ref(v)))
                .collect(),
            ObjRef::Own(m) => m.iter().map(|(k, v)| (k.as_ref(), v.clone())).collect(),
        }
    }
}

/// Python's `type(x).__name__` for the values jmespath can see.
pub(crate) fn py_type_name(v: &View<'_, '_>) -> &'static str {
    match v {
        View::Null => "NoneType",
        View::Bool(_) => "bool",
        View::Num(n) => match PyNum::from_number(n) {
            PyNum::Int(_) => "int",
            PyNum::Float(_) => "float",
        },
        View::Str(_) => "str",
        View::Arr(_) => "list",
        View::Obj(_) => "dict",
        View::ExpRef(..) => "_Expression",
    }
}

/// Python type name to jmespath type name (`functions.TYPES_MAP`).
pub(crate) fn jmespath_type_name(py: &str) -> &'static str {
    match py {
        "bool" => "boolean",
        "list" => "array",
        "dict" => "object",
        "NoneType" => "null",
        "str" => "string",
        "float" | "int" => "number",
        "_Expression" => "expref",
        _ => "unknown",
    }
}

impl<'a> Val<'a> {
    pub(crate) fn view(&self) -> View<'_, 'a> {
        match self {
            Val::Ref(v) => match v {
                Value::Null => View::Null,
                Value::Bool(b) => View::Bool(*b),
                Value::Number(n) => View::Num(n),
                Value::String(s) => View::Str(s),
                Value::Array(a) => View::Arr(ArrRef::Json(a)),
                Value::Object(m) => View::Obj(ObjRef::Json(m)),
            },
            Val::Null => View::Null,
            Val::Bool(b) => View::Bool(*b),
            Val::Num(n) => View::Num(n),
            Val::Str(s) => View::Str(s),
            Val::Arr(a) => View::Arr(ArrRef::Own(a)),
            Val::Obj(m) => View::Obj(ObjRef::Own(m)),
            Val::ExpRef(_, id) => View::ExpRef(*id),
        }
    }

    pub(crate) fn str(s: &str) -> Val<'a> {
        Val::Str(Rc::from(s))
    }

    pub(crate) fn arr(items: Vec<Val<'a>>) -> Val<'a> {
        Val::Arr(Rc::new(items))
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self.view(), View::Null)
    }

    pub(crate) fn as_array(&self) -> Option<ArrRef<'_, 'a>> {
        match self.view() {
            View::Arr(a) => Some(a),
            _ => None,
        }
    }

    pub(crate) fn as_object(&self) -> Option<ObjRef<'_, 'a>> {
        match self.view() {
            View::Obj(o) => Some(o),
            _ => None,
        }
    }

    /// A number that is not a boolean (python's `_is_actual_number`).
    pub(crate) fn as_num(&self) -> Option<PyNum> {
        match self.view() {
            View::Num(n) => Some(PyNum::from_number(n)),
            _ => None,
        }
    }

    pub(crate) fn py_type(&self) -> &'static str {
        py_type_name(&self.view())
    }

    /// JMESPath falsiness (`visitor._is_false`): null, false, "", [], {}.
    pub(crate) fn is_false(&self) -> bool {
        match self.view() {
            View::Null => true,
            View::Bool(b) => !b,
            View::Str(s) => s.is_empty(),
            View::Arr(a) => a.len() == 0,
            View::Obj(o) => o.len() == 0,
            View::Num(_) | View::ExpRef(_) => false,
        }
    }

    /// Converts to JSON; an expression reference anywhere inside is an error
    /// (python would return a non-JSON object).
    pub(crate) fn to_value(&self) -> Result<Value, JmesError> {
        Ok(match self {
            Val::Ref(v) => (*v).clone(),
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Num(n) => Value::Number(n.clone()),
            Val::Str(s) => Value::String(s.to_string()),
            Val::Arr(a) => Value::Array(a.iter().map(Val::to_value).collect::<Result<_, _>>()?),
            Val::Obj(m) => {
                let mut out = Map::new();
                for (k, v) in m.iter() {
                    let Key::Str(k) = k else {
                        return Err(JmesError::runtime(
                            "object with a non-string key (from merge()) cannot be represented as JSON",
                        ));
                    };
                    out.insert(k.clone(), v.to_value()?);
                }
                Value::Object(out)
            }
            Val::ExpRef(..) => {
                return Err(JmesError::runtime(
                    "expression reference (&expr) in the result cannot be represented as JSON",
                ))
            }
        })
    }

    /// Python `str()` of the value, for error messages.
    pub(crate) fn py_str(&self) -> String {
        match self.view() {
            View::Str(s) => s.to_string(),
            _ => self.py_repr(),
        }
    }

    /// Python `repr()` of the value, for error messages (elided below
    /// [`MAX_DATA_DEPTH`]).
    pub(crate) fn py_repr(&self) -> String {
        self.py_repr_at(0)
    }

    fn py_repr_at(&self, depth: usize) -> String {
        if depth > MAX_DATA_DEPTH {
            return "...".into();
        }
        match self {
            Val::Ref(v) => py_repr_value(v, depth),
            Val::Null => "None".into(),
            Val::Bool(b) => (if *b { "True" } else { "False" }).into(),
            Val::Num(n) => py_repr_value(&Value::Number(n.clone()), depth),
            Val::Str(s) => repr(s),
            Val::Arr(a) => {
                let items: Vec<String> = a.iter().map(|v| v.py_repr_at(depth + 1)).collect();
                format!("[{}]", items.join(", "))
            }
            Val::Obj(m) => {
                let items: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.as_ref().py_repr(), v.py_repr_at(depth + 1)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            Val::ExpRef(_, id) => expref_repr(*id),
        }
    }

    /// `json.dumps(v, separators=(',', ':'))` with `ensure_ascii`.
    pub(crate) fn dumps(&self, out: &mut String) -> Result<(), JmesError> {
        self.dumps_at(out, 0)
    }

    fn dumps_at(&self, out: &mut String, depth: usize) -> Result<(), JmesError> {
        if depth > MAX_DATA_DEPTH {
            return Err(JmesError::runtime(
                "maximum recursion depth exceeded while encoding a JSON object",
            ));
        }
        match self.view() {
            View::Null => out.push_str("null"),
            View::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            View::Num(n) => match PyNum::from_number(n) {
                PyNum::Int(b) => {
                    let s = b.to_decimal();
                    if s.trim_start_matches('-').len() > crate::py::num::INT_MAX_STR_DIGITS {
                        return Err(JmesError::runtime(
                            "Exceeds the limit (4300 digits) for integer string conversion",
                        ));
                    }
                    out.push_str(&s);
                }
                PyNum::Float(f) => out.push_str(&crate::py::num::float_repr(f)),
            },
            View::Str(s) => json_quote_ascii(s, out),
            View::Arr(a) => {
                out.push('[');
                for (i, item) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.dumps_at(out, depth + 1)?;
                }
                out.push(']');
            }
            View::Obj(o) => {
                out.push('{');
                for (i, (k, v)) in o.entries().into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    k.dumps(out)?;
                    out.push(':');
                    v.dumps_at(out, depth + 1)?;
                }
                out.push('}');
            }
            // Python's `default=str` gives the object's repr, which embeds a
            // memory address; an invented but well-formed one keeps the
            // string's shape (length, prefix) identical.
            View::ExpRef(id) => json_quote_ascii(&expref_repr(id), out),
        }
        Ok(())
    }
}

/// `repr()` of python's `_Expression` object; the address is invented
/// (CPython on 64-bit Linux prints 12 hex digits, typically `0x7f...`).
pub(crate) fn expref_repr(id: u64) -> String {
    let addr = 0x7f3a_1c00_0000u64.wrapping_add(id.wrapping_mul(0x50)) & 0xffff_ffff_ffff;
    format!("<jmespath.visitor._Expression object at 0x{addr:012x}>")
}

/// Python numeric view of a value where `bool` is an `int` (for `==` inside
/// containers and `in`).
fn py_numeric(v: &View<'_, '_>) -> Option<PyNum> {
    match v {
        View::Bool(b) => Some(PyNum::Int(crate::py::num::BigInt::from_u64(u64::from(*b)))),
        View::Num(n) => Some(PyNum::from_number(n)),
        _ => None,
    }
}

/// Python `a == b` on the values (`True == 1 == 1.0`, dicts ignore order,
/// expression references compare by identity). Nesting beyond
/// [`MAX_DATA_DEPTH`] fails, as python's `RecursionError` would.
pub(crate) fn py_eq(a: &Val<'_>, b: &Val<'_>) -> Result<bool, JmesError> {
    py_eq_at(a, b, 0)
}

fn py_eq_at(a: &Val<'_>, b: &Val<'_>, depth: usize) -> Result<bool, JmesError> {
    if depth > MAX_DATA_DEPTH {
        return Err(JmesError::runtime(
            "maximum recursion depth exceeded in comparison",
        ));
    }
    let (va, vb) = (a.view(), b.view());
    if let (Some(x), Some(y)) = (py_numeric(&va), py_numeric(&vb)) {
        return Ok(x.cmp(&y) == Ordering::Equal);
    }
    Ok(match (va, vb) {
        (View::Null, View::Null) => true,
        (View::Str(x), View::Str(y)) => x == y,
        (View::Arr(x), View::Arr(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (p, q) in x.iter().zip(y.iter()) {
                if !py_eq_at(&p, &q, depth + 1)? {
                    return Ok(false);
                }
            }
            true
        }
        (View::Obj(x), View::Obj(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (k, v) in x.entries() {
                match y.get_key(k) {
                    Some(w) if py_eq_at(&v, &w, depth + 1)? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        (View::ExpRef(i), View::ExpRef(j)) => i == j,
        _ => false,
    })
}
