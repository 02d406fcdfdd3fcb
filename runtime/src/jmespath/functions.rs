//! Built-in functions with python jmespath's signatures, type checks, error
//! messages and Python-level semantics (`sum` keeps ints exact, `max` keeps the
//! first of equal elements, `merge` is `dict.update`, ...).

use super::eval::{py_order, type_error_compare, EResult, Interp};
use super::value::{jmespath_type_name, py_eq, py_type_name, ArrRef, Key, KeyRef, Obj, Val, View};
use super::JmesError;
use crate::py::num::{int_number, BigInt, PyNum};
use crate::py::text::{parse_py_number, ParsedNumber};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;

/// The built-in functions, as named in expressions.
pub const FUNCTION_NAMES: &[&str] = &[
    "abs",
    "avg",
    "ceil",
    "contains",
    "ends_with",
    "floor",
    "join",
    "keys",
    "length",
    "map",
    "max",
    "max_by",
    "merge",
    "min",
    "min_by",
    "not_null",
    "reverse",
    "sort",
    "sort_by",
    "starts_with",
    "sum",
    "to_array",
    "to_number",
    "to_string",
    "type",
    "values",
];

/// A parameter's accepted jmespath types (empty: anything) and whether it is
/// the variadic last parameter.
struct Param {
    types: &'static [&'static str],
    variadic: bool,
}

macro_rules! p {
    ($types:expr) => {
        Param {
            types: $types,
            variadic: false,
        }
    };
}

fn signature(name: &str) -> Option<&'static [Param]> {
    const ANY: &[&str] = &[];
    const NUMBER: &[&str] = &["number"];
    const STRING: &[&str] = &["string"];
    const OBJECT: &[&str] = &["object"];
    const ARRAY: &[&str] = &["array"];
    const EXPREF: &[&str] = &["expref"];
    const ARRAY_NUMBER: &[&str] = &["array-number"];
    Some(match name {
        "abs" | "ceil" | "floor" => &[p!(NUMBER)],
        "avg" | "sum" => &[p!(ARRAY_NUMBER)],
        "not_null" => &[Param {
            types: ANY,
            variadic: true,
        }],
        "to_array" | "to_string" | "to_number" | "type" => &[p!(ANY)],
        "contains" => &[p!(&["array", "string"]), p!(ANY)],
        "length" => &[p!(&["string", "array", "object"])],
        "ends_with" | "starts_with" => &[p!(STRING), p!(STRING)],
        "reverse" => &[p!(&["array", "string"])],
        "join" => &[p!(STRING), p!(&["array-string"])],
        "map" => &[p!(EXPREF), p!(ARRAY)],
        "max" | "min" => &[p!(&["array-number", "array-string"])],
        "merge" => &[Param {
            types: OBJECT,
            variadic: true,
        }],
        "sort" => &[p!(&["array-string", "array-number"])],
        "keys" | "values" => &[p!(OBJECT)],
        "sort_by" | "min_by" | "max_by" => &[p!(ARRAY), p!(EXPREF)],
        _ => return None,
    })
}

/// `REVERSE_TYPES_MAP`: jmespath type to the python type names it admits.
fn py_types(jmes: &str) -> &'static [&'static str] {
    match jmes {
        "boolean" => &["bool"],
        "array" => &["list", "_Projection"],
        "object" => &["dict", "OrderedDict"],
        "null" => &["NoneType"],
        "string" => &["unicode", "str"],
        "number" => &["float", "int", "long"],
        "expref" => &["_Expression"],
        _ => &[],
    }
}

fn py_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|t| format!("'{t}'")).collect();
    format!("[{}]", quoted.join(", "))
}

fn type_error(function: &str, value: &Val<'_>, actual: &str, expected: &[&str]) -> JmesError {
    JmesError::runtime(&format!(
        "In function {function}(), invalid type for value: {}, expected one of: {}, received: \"{actual}\"",
        value.py_str(),
        py_list(expected)
    ))
}

fn check_type(function: &str, v: &Val<'_>, types: &[&str]) -> Result<(), JmesError> {
    let mut allowed: Vec<&str> = Vec::new();
    let mut subtypes: Vec<&[&str]> = Vec::new();
    for t in types {
        match t.split_once('-') {
            Some((outer, inner)) => {
                subtypes.push(py_types(inner));
                allowed.extend(py_types(outer));
            }
            None => allowed.extend(py_types(t)),
        }
    }
    let actual = v.py_type();
    if !allowed.contains(&actual) {
        return Err(type_error(function, v, jmespath_type_name(actual), types));
    }
    if subtypes.is_empty() {
        return Ok(());
    }
    let Some(arr) = v.as_array() else {
        return Ok(());
    };
    let group: &[&str] = if subtypes.len() == 1 {
        subtypes[0]
    } else {
        let Some(first) = arr.get(0) else {
            return Ok(());
        };
        let first_type = first.py_type();
        match subtypes.iter().find(|g| g.contains(&first_type)) {
            Some(g) => g,
            None => return Err(type_error(function, &first, first_type, types)),
        }
    };
    for elem in arr.iter() {
        let t = elem.py_type();
        if !group.contains(&t) {
            return Err(type_error(function, &elem, t, types));
        }
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        "argument"
    } else {
        "arguments"
    }
}

/// `Functions.call_function`: lookup, arity, type checks, then the call.
pub(crate) fn call_function<'a>(interp: &Interp, name: &str, args: Vec<Val<'a>>) -> EResult<'a> {
    let Some(sig) = signature(name) else {
        return Err(JmesError::runtime(&format!("Unknown function: {name}()")));
    };
    let variadic = sig.last().is_some_and(|p| p.variadic);
    if variadic && args.len() < sig.len() {
        return Err(JmesError::runtime(&format!(
            "Expected at least {} {} for function {name}(), received {}",
            sig.len(),
            plural(sig.len()),
            args.len()
        )));
    }
    if !variadic && args.len() != sig.len() {
        return Err(JmesError::runtime(&format!(
            "Expected {} {} for function {name}(), received {}",
            sig.len(),
            plural(sig.len()),
            args.len()
        )));
    }
    for (param, arg) in sig.iter().zip(args.iter()) {
        if !param.types.is_empty() {
            check_type(name, arg, param.types)?;
        }
    }
    dispatch(interp, name, args)
}

fn num_val<'a>(n: PyNum) -> EResult<'a> {
    match n.to_number() {
        Some(num) => Ok(Val::Num(num)),
        None => Err(JmesError::runtime(
            "result is not a finite number (python would return inf or nan)",
        )),
    }
}

fn int_val<'a>(b: &BigInt) -> EResult<'a> {
    int_number(b)
        .map(Val::Num)
        .ok_or_else(|| JmesError::runtime("integer result cannot be represented"))
}

fn len_val<'a>(n: usize) -> EResult<'a> {
    int_val(&BigInt::from_u64(n as u64))
}

/// Python `a + b` on numbers (`int + float` converts the int, which raises
/// `OverflowError` when it is too large).
fn py_add(a: PyNum, b: PyNum) -> Result<PyNum, JmesError> {
    let to_f = |x: &BigInt| {
        x.to_f64()
            .ok_or_else(|| JmesError::runtime("int too large to convert to float"))
    };
    Ok(match (a, b) {
        (PyNum::Int(x), PyNum::Int(y)) => PyNum::Int(x.add(&y)),
        (PyNum::Int(x), PyNum::Float(y)) => PyNum::Float(to_f(&x)? + y),
        (PyNum::Float(x), PyNum::Int(y)) => PyNum::Float(x + to_f(&y)?),
        (PyNum::Float(x), PyNum::Float(y)) => PyNum::Float(x + y),
    })
}

/// Python `sum(arr)` (start value int `0`, left to right).
fn py_sum(arr: ArrRef<'_, '_>) -> Result<PyNum, JmesError> {
    let mut acc = PyNum::Int(BigInt::zero());
    for v in arr.iter() {
        let n = v
            .as_num()
            .ok_or_else(|| JmesError::runtime("sum of a non-number"))?;
        acc = py_add(acc, n)?;
    }
    Ok(acc)
}

fn arg_array<'v, 'a>(v: &'v Val<'a>) -> ArrRef<'v, 'a> {
    // Type checks ran before dispatch; an empty JSON slice is a safe fallback.
    v.as_array().unwrap_or(ArrRef::Json(&[]))
}

fn arg_str<'v>(v: &'v Val<'_>) -> &'v str {
    match v.view() {
        View::Str(s) => s,
        _ => "",
    }
}

fn arg_expref<'a>(v: &Val<'a>) -> Option<&'a super::ast::Ast> {
    match v {
        Val::ExpRef(ast, _) => Some(ast),
        _ => None,
    }
}

fn dispatch<'a>(interp: &Interp, name: &str, args: Vec<Val<'a>>) -> EResult<'a> {
    let a0 = args.first().cloned().unwrap_or(Val::Null);
    let a1 = args.get(1).cloned().unwrap_or(Val::Null);
    match name {
        "abs" => match a0.as_num() {
            Some(PyNum::Int(b)) => int_val(&b.abs()),
            Some(PyNum::Float(f)) => num_val(PyNum::Float(f.abs())),
            None => Ok(Val::Null),
        },
        "avg" => {
            let arr = arg_array(&a0);
            if arr.len() == 0 {
                return Ok(Val::Null);
            }
            match py_sum(arr)? {
                PyNum::Int(s) => match s.div_to_f64(arr.len() as u64) {
                    Some(f) => num_val(PyNum::Float(f)),
                    None => Err(JmesError::runtime("integer division result too large for a float")),
                },
                PyNum::Float(f) => num_val(PyNum::Float(f / arr.len() as f64)),
            }
        }
        "ceil" | "floor" => match a0.as_num() {
            Some(PyNum::Int(_)) => Ok(a0.clone()),
            Some(PyNum::Float(f)) => {
                let r = if name == "ceil" { f.ceil() } else { f.floor() };
                int_val(&BigInt::from_f64_trunc(r))
            }
            None => Ok(Val::Null),
        },
        "contains" => match a0.view() {
            View::Str(subject) => match a1.view() {
                View::Str(search) => Ok(Val::Bool(subject.contains(search))),
                _ => Err(JmesError::runtime(&format!(
                    "'in <string>' requires string as left operand, not {}",
                    a1.py_type()
                ))),
            },
            _ => {
                for elem in arg_array(&a0).iter() {
                    if py_eq(&elem, &a1)? {
                        return Ok(Val::Bool(true));
                    }
                }
                Ok(Val::Bool(false))
            }
        },
        "ends_with" => Ok(Val::Bool(arg_str(&a0).ends_with(arg_str(&a1)))),
        "starts_with" => Ok(Val::Bool(arg_str(&a0).starts_with(arg_str(&a1)))),
        "join" => {
            let parts: Vec<Val<'a>> = arg_array(&a1).iter().collect();
            let strs: Vec<&str> = parts.iter().map(arg_str).collect();
            Ok(Val::str(&strs.join(arg_str(&a0))))
        }
        "keys" => {
            let o = a0.as_object().map(|o| o.entries()).unwrap_or_default();
            Ok(Val::arr(o.into_iter().map(|(k, _)| k.to_val()).collect()))
        }
        "values" => {
            let o = a0.as_object().map(|o| o.entries()).unwrap_or_default();
            Ok(Val::arr(o.into_iter().map(|(_, v)| v).collect()))
        }
        "length" => match a0.view() {
            View::Str(s) => len_val(s.chars().count()),
            View::Arr(a) => len_val(a.len()),
            View::Obj(o) => len_val(o.len()),
            _ => Ok(Val::Null),
        },
        "map" => {
            let Some(e) = arg_expref(&a0) else {
                return Ok(Val::Null);
            };
            let out = arg_array(&a1)
                .iter()
                .map(|elem| interp.eval(e, &elem))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Val::arr(out))
        }
        "max" | "min" => {
            let want = if name == "max" { Ordering::Greater } else { Ordering::Less };
            let mut best: Option<Val<'a>> = None;
            for elem in arg_array(&a0).iter() {
                best = Some(match best {
                    None => elem,
                    Some(b) => match py_order(&elem, &b) {
                        Some(o) if o == want => elem,
                        Some(_) => b,
                        None => return Err(type_error_compare(if name == "max" { ">" } else { "<" }, &elem, &b)),
                    },
                });
            }
            Ok(best.unwrap_or(Val::Null))
        }
        "merge" => merge(&args),
        "not_null" => Ok(args.into_iter().find(|v| !v.is_null()).unwrap_or(Val::Null)),
        "reverse" => match a0.view() {
            View::Str(s) => Ok(Val::str(&s.chars().rev().collect::<String>())),
            _ => {
                let mut items: Vec<Val<'a>> = arg_array(&a0).iter().collect();
                items.reverse();
                Ok(Val::arr(items))
            }
        },
        "sort" => {
            let mut items: Vec<Val<'a>> = arg_array(&a0).iter().collect();
            items.sort_by(|x, y| py_order(x, y).unwrap_or(Ordering::Equal));
            Ok(Val::arr(items))
        }
        "sum" => num_val(py_sum(arg_array(&a0))?),
        "to_array" => match a0.view() {
            View::Arr(_) => Ok(a0.clone()),
            _ => Ok(Val::arr(vec![a0.clone()])),
        },
        "to_string" => match a0.view() {
            View::Str(_) => Ok(a0.clone()),
            _ => {
                let mut out = String::new();
                a0.dumps(&mut out)?;
                Ok(Val::str(&out))
            }
        },
        "to_number" => match a0.view() {
            View::Num(_) => Ok(a0.clone()),
            View::Str(s) => match parse_py_number(s) {
                ParsedNumber::Num(n) => num_val(n),
                ParsedNumber::NonFinite => Err(JmesError::runtime(
                    "to_number() result is not finite (python would return inf or nan)",
                )),
                ParsedNumber::Invalid => Ok(Val::Null),
            },
            View::ExpRef(..) => Err(JmesError::runtime(
                "int() argument must be a string, a bytes-like object or a real number, not '_Expression'",
            )),
            _ => Ok(Val::Null),
        },
        "type" => Ok(match a0.view() {
            View::ExpRef(..) => Val::Null,
            v => Val::str(jmespath_type_name(py_type_name(&v))),
        }),
        "sort_by" => sort_by(interp, &a0, &a1),
        "min_by" | "max_by" => min_max_by(interp, name, &a0, &a1),
        _ => Err(JmesError::runtime(&format!("Unknown function: {name}()"))),
    }
}

/// `_create_key_func`: evaluates the key and checks its jmespath type.
fn key_of<'a>(
    interp: &Interp,
    function: &str,
    e: &'a super::ast::Ast,
    elem: &Val<'a>,
    allowed: &[&str],
) -> EResult<'a> {
    let key = interp.eval(e, elem)?;
    let t = jmespath_type_name(key.py_type());
    if !allowed.contains(&t) {
        return Err(type_error(function, &key, t, allowed));
    }
    Ok(key)
}

fn sort_by<'a>(interp: &Interp, arr_v: &Val<'a>, e: &Val<'a>) -> EResult<'a> {
    let arr = arg_array(arr_v);
    let Some(e) = arg_expref(e) else {
        return Ok(Val::Null);
    };
    let Some(first) = arr.get(0) else {
        return Ok(arr_v.clone());
    };
    let required = jmespath_type_name(interp.eval(e, &first)?.py_type());
    if required != "number" && required != "string" {
        return Err(type_error(
            "sort_by",
            &first,
            required,
            &["string", "number"],
        ));
    }
    let mut keyed = Vec::with_capacity(arr.len());
    for elem in arr.iter() {
        let key = key_of(interp, "sort_by", e, &elem, &[required])?;
        keyed.push((key, elem));
    }
    keyed.sort_by(|(k1, _), (k2, _)| py_order(k1, k2).unwrap_or(Ordering::Equal));
    Ok(Val::arr(keyed.into_iter().map(|(_, v)| v).collect()))
}

fn min_max_by<'a>(interp: &Interp, name: &str, arr_v: &Val<'a>, e: &Val<'a>) -> EResult<'a> {
    let Some(e) = arg_expref(e) else {
        return Ok(Val::Null);
    };
    let (want, op) = if name == "max_by" {
        (Ordering::Greater, ">")
    } else {
        (Ordering::Less, "<")
    };
    let mut best: Option<(Val<'a>, Val<'a>)> = None;
    for elem in arg_array(arr_v).iter() {
        let key = key_of(interp, name, e, &elem, &["number", "string"])?;
        best = Some(match best {
            None => (key, elem),
            Some((bk, bv)) => match py_order(&key, &bk) {
                Some(o) if o == want => (key, elem),
                Some(_) => (bk, bv),
                None => return Err(type_error_compare(op, &key, &bk)),
            },
        });
    }
    Ok(best.map(|(_, v)| v).unwrap_or(Val::Null))
}

/// The object `merge` builds, indexed by string key so merging large
/// objects stays linear.
struct Merged<'a> {
    out: Obj<'a>,
    str_index: HashMap<String, usize>,
}

impl<'a> Merged<'a> {
    /// Python `d[k] = v`: an existing equal key keeps its position (and its
    /// original key object).
    fn insert(&mut self, k: KeyRef<'_, 'a>, v: Val<'a>) {
        match k {
            KeyRef::Str(s) => match self.str_index.get(s) {
                Some(&i) => self.out[i].1 = v,
                None => {
                    self.str_index.insert(s.to_string(), self.out.len());
                    self.out.push((Key::Str(s.to_string()), v));
                }
            },
            KeyRef::Py(_) => match self.out.iter_mut().find(|(mk, _)| mk.as_ref().same_key(k)) {
                Some(slot) => slot.1 = v,
                None => self.out.push((k.to_key(), v)),
            },
        }
    }
}

/// `dict.update(arg)` for each argument, including python's acceptance of
/// iterables of key/value pairs (which can introduce non-string keys).
fn merge<'a>(args: &[Val<'a>]) -> EResult<'a> {
    let mut merged = Merged {
        out: Vec::new(),
        str_index: HashMap::new(),
    };
    for arg in args {
        match arg.view() {
            View::Obj(o) => {
                for (k, v) in o.entries() {
                    merged.insert(k, v);
                }
            }
            View::Str(s) => {
                if !s.is_empty() {
                    return Err(JmesError::runtime(
                        "dictionary update sequence element #0 has length 1; 2 is required",
                    ));
                }
            }
            View::Arr(a) => {
                for (i, elem) in a.iter().enumerate() {
                    let pair: Vec<Val<'a>> = match elem.view() {
                        View::Arr(p) => p.iter().collect(),
                        View::Str(s) => s
                            .chars()
                            .map(|c| Val::str(c.encode_utf8(&mut [0; 4])))
                            .collect(),
                        View::Obj(o) => o.entries().into_iter().map(|(k, _)| k.to_val()).collect(),
                        _ => {
                            let msg = format!(
                                "cannot convert dictionary update sequence element #{i} to a sequence"
                            );
                            return Err(JmesError::runtime(&msg));
                        }
                    };
                    if pair.len() != 2 {
                        return Err(JmesError::runtime(&format!(
                            "dictionary update sequence element #{i} has length {}; 2 is required",
                            pair.len()
                        )));
                    }
                    match pair[0].view() {
                        View::Str(k) => merged.insert(KeyRef::Str(k), pair[1].clone()),
                        View::Arr(_) | View::Obj(_) => {
                            return Err(JmesError::runtime(&format!(
                                "unhashable type: '{}'",
                                pair[0].py_type()
                            )))
                        }
                        _ => merged.insert(KeyRef::Py(&pair[0]), pair[1].clone()),
                    }
                }
            }
            _ => {
                return Err(JmesError::runtime(&format!(
                    "'{}' object is not iterable",
                    arg.py_type()
                )))
            }
        }
    }
    Ok(Val::Obj(Rc::new(merged.out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_function_has_a_signature() {
        for name in FUNCTION_NAMES {
            assert!(signature(name).is_some(), "{name}");
        }
        assert!(signature("nope").is_none());
        assert_eq!(FUNCTION_NAMES.len(), 26);
    }
}
