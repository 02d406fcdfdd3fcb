//! Python's `str()`, `repr()` and `json.dumps()` of template values, so that the rendering matches
//! transformers' (Jinja2 on Python values) byte for byte.

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, Value};

/// `repr(float)`: the shortest text that reads back to the same float, in fixed notation for
/// decimal exponents -4..16 and scientific (`1e-07`, `1.5e+16`) otherwise.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` is the shortest round-trip representation, as Python's repr.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else {
            let point = point as usize;
            if digits.len() <= point {
                format!("{sign}{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{sign}{}.{}", &digits[..point], &digits[point..])
            }
        }
    } else {
        let frac = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{}{frac}e{esign}{:02}", &digits[..1], exp.abs())
    }
}

fn number_text(v: &Value) -> String {
    if v.is_integer() {
        if let Ok(i) = i128::try_from(v.clone()) {
            return i.to_string();
        }
        if let Ok(u) = u128::try_from(v.clone()) {
            return u.to_string();
        }
    }
    match f64::try_from(v.clone()) {
        Ok(f) => float_repr(f),
        Err(_) => v.to_string(),
    }
}

/// Python's `str.isspace()` for one character.
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()` without arguments.
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `str()` of a template value (what `{{ value }}` and `|string` print in Jinja2).
pub(crate) fn str(v: &Value) -> String {
    match v.kind() {
        ValueKind::Undefined => String::new(),
        ValueKind::String => v.as_str().unwrap_or_default().to_owned(),
        _ => repr(v),
    }
}

/// Python's `repr()` of a template value.
pub(crate) fn repr(v: &Value) -> String {
    match v.kind() {
        ValueKind::Undefined => "Undefined".into(),
        ValueKind::None => "None".into(),
        ValueKind::Bool => if v.is_true() { "True" } else { "False" }.into(),
        ValueKind::Number => number_text(v),
        ValueKind::String => chatparse_runtime::py::unicode::repr(v.as_str().unwrap_or_default()),
        ValueKind::Seq => {
            let items: Vec<String> = v
                .try_iter()
                .map(|it| it.map(|x| repr(&x)).collect())
                .unwrap_or_default();
            if v.is_tuple() {
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            } else {
                format!("[{}]", items.join(", "))
            }
        }
        ValueKind::Map => {
            let items: Vec<String> = v
                .try_iter()
                .map(|it| {
                    it.map(|k| {
                        let val = v.get_item(&k).unwrap_or_default();
                        format!("{}: {}", repr(&k), repr(&val))
                    })
                    .collect()
                })
                .unwrap_or_default();
            format!("{{{}}}", items.join(", "))
        }
        _ => v.to_string(),
    }
}

/// Options of Python's `json.dumps` that transformers' `tojson` filter exposes.
pub(crate) struct Dumps {
    pub(crate) ensure_ascii: bool,
    pub(crate) indent: Option<String>,
    pub(crate) item_separator: String,
    pub(crate) key_separator: String,
    pub(crate) sort_keys: bool,
}

impl Default for Dumps {
    /// transformers' defaults: `ensure_ascii=False`, no indent, `(", ", ": ")`.
    fn default() -> Self {
        Dumps {
            ensure_ascii: false,
            indent: None,
            item_separator: ", ".into(),
            key_separator: ": ".into(),
            sort_keys: false,
        }
    }
}

impl Dumps {
    pub(crate) fn dumps(&self, v: &Value) -> Result<String, Error> {
        let mut out = String::new();
        self.write(&mut out, v, 0)?;
        Ok(out)
    }

    fn newline(&self, out: &mut String, level: usize) {
        if let Some(indent) = &self.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(indent);
            }
        }
    }

    fn write(&self, out: &mut String, v: &Value, level: usize) -> Result<(), Error> {
        match v.kind() {
            ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
            ValueKind::Number => {
                let text = number_text(v);
                out.push_str(match text.as_str() {
                    "nan" => "NaN",
                    "inf" => "Infinity",
                    "-inf" => "-Infinity",
                    t => t,
                });
            }
            ValueKind::String => self.string(out, v.as_str().unwrap_or_default()),
            ValueKind::Seq | ValueKind::Iterable => {
                let items: Vec<Value> = v.try_iter()?.collect();
                if items.is_empty() {
                    out.push_str("[]");
                    return Ok(());
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_separator);
                    }
                    self.newline(out, level + 1);
                    self.write(out, item, level + 1)?;
                }
                self.newline(out, level);
                out.push(']');
            }
            ValueKind::Map => {
                let mut pairs: Vec<(String, Value)> = Vec::new();
                for k in v.try_iter()? {
                    let val = v.get_item(&k)?;
                    pairs.push((self.key(&k)?, val));
                }
                if self.sort_keys {
                    pairs.sort_by(|a, b| a.0.cmp(&b.0));
                }
                if pairs.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                out.push('{');
                for (i, (k, val)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_separator);
                    }
                    self.newline(out, level + 1);
                    self.string(out, k);
                    out.push_str(&self.key_separator);
                    self.write(out, val, level + 1)?;
                }
                self.newline(out, level);
                out.push('}');
            }
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("Object of kind {} is not JSON serializable", v.kind()),
                ))
            }
        }
        Ok(())
    }

    fn key(&self, k: &Value) -> Result<String, Error> {
        Ok(match k.kind() {
            ValueKind::String => k.as_str().unwrap_or_default().to_owned(),
            ValueKind::None => "null".into(),
            ValueKind::Bool => if k.is_true() { "true" } else { "false" }.into(),
            ValueKind::Number => number_text(k),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "keys must be str, int, float, bool or None",
                ))
            }
        })
    }

    fn string(&self, out: &mut String, s: &str) {
        chatparse_runtime::py::json::write_string(s, self.ensure_ascii, out);
    }
}

/// A JSON value (as the conversations and family files hold it) as a template value: objects keep
/// their key order, integers stay integers.
pub(crate) fn from_json(v: &chatparse_runtime::Value) -> Value {
    use chatparse_runtime::Value as J;
    match v {
        J::Null => Value::from(()),
        J::Bool(b) => Value::from(*b),
        J::Number(n) => {
            if n.is_f64() {
                Value::from(n.as_f64().unwrap_or(f64::NAN))
            } else if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(i) = n.as_i128() {
                Value::from(i)
            } else {
                Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        J::String(s) => Value::from(s.as_str()),
        J::Array(items) => items.iter().map(from_json).collect(),
        J::Object(map) => Value::from_pairs(map.iter().map(|(k, v)| (k.as_str(), from_json(v)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python() {
        for (f, want) in [
            (4.5, "4.5"),
            (1.0, "1.0"),
            (1e-7, "1e-07"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.0, "123456789012345.0"),
            (-47.3769, "-47.3769"),
            (1e300, "1e+300"),
        ] {
            assert_eq!(float_repr(f), want);
        }
    }
}
