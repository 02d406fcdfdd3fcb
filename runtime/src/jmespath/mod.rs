//! JMESPath with python `jmespath` 1.1.0 semantics.
//!
//! Response schemas carry `transform` expressions that the reference applies
//! with `jmespath.search(expr, value)`. Reproducing its output exactly rules
//! out the `jmespath` crate (it reorders object keys and loses big integers),
//! so this is a transcription of the python package: its lexer, its Pratt
//! parser with the same binding powers and quirks, its tree interpreter and
//! its built-in functions, over chatparse's [`Value`](crate::value::Value) (keys in order,
//! integers exact).
//!
//! Numbers follow Python: JSON text without `.`/`e`/`E` is an unbounded `int`,
//! anything else a `float`; `1 == 1.0`; `sum` of ints stays exact. Floats this
//! module creates come from [`Number::from_f64`](crate::value::Number::from_f64); where Python
//! would produce `inf`/`nan` (which JSON cannot carry) the search fails.

mod ast;
#[doc(hidden)]
pub mod compiled;
mod eval;
mod functions;
mod lexer;
mod parser;
mod pyjson_lite;
mod value;

pub(crate) use value::MAX_DATA_DEPTH;

use crate::value::Value;
pub use ast::{Ast, Comparator, KeyValuePair, Slice};
pub use functions::FUNCTION_NAMES;

/// Why an expression failed to compile or to evaluate.
///
/// Compile errors correspond to python's `LexerError`/`ParseError` family and
/// carry the position; evaluation errors (unknown function, arity, type
/// errors, Python `TypeError`/`ValueError`, results JSON cannot carry) do not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JmesError {
    /// Human-readable message, worded like python jmespath's `str(exception)`.
    pub message: String,
    /// Character offset in the expression, for compile errors.
    pub offset: Option<usize>,
}

impl JmesError {
    pub(crate) fn runtime(message: &str) -> JmesError {
        JmesError {
            message: message.to_string(),
            offset: None,
        }
    }
}

impl std::fmt::Display for JmesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for JmesError {}

/// A compiled JMESPath expression with python `jmespath` 1.1.0 semantics.
///
/// Compile once (schemas are loaded once, searched many times); searching
/// never mutates the expression, so it can be shared across threads.
///
/// ```
/// use chatparse_runtime::jmespath::Expression;
/// use chatparse_runtime::json;
///
/// let expr = Expression::compile("[*].{name: function.name, arguments: function.arguments}").unwrap();
/// let data = json!([{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]);
/// assert_eq!(
///     expr.search(&data).unwrap(),
///     json!([{"name": "f", "arguments": {"x": 1}}])
/// );
/// assert!(Expression::compile("foo[").is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Expression {
    source: String,
    ast: Ast,
}

impl Expression {
    /// Parses `expr`; lexer and parser errors are reported here, while unknown
    /// functions and arity errors surface from [`Expression::search`], as in
    /// python. Absurdly nested expressions are rejected here too.
    pub fn compile(expr: &str) -> Result<Self, JmesError> {
        let ast = parser::parse(expr)?;
        Ok(Expression {
            source: expr.to_string(),
            ast,
        })
    }

    /// The expression text this was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The syntax tree, shaped exactly as python jmespath's parser builds it.
    pub fn ast(&self) -> &Ast {
        &self.ast
    }

    /// `jmespath.search(expr, data)`.
    pub fn search(&self, data: &Value) -> Result<Value, JmesError> {
        let interp = eval::Interp::new();
        let out = interp.eval(&self.ast, &value::Val::Ref(data))?;
        out.to_value()
    }
}

impl Expression {
    /// [`Expression::search`] on data the caller gives up: the same result, with `data` moved
    /// into it where the expression returns it whole instead of copied. The transforms response
    /// schemas use to wrap a tool call (`{type: 'function', function: @}`, `[@][].{…}`,
    /// `[].{…}`) build their object around the moved value; other expressions search as usual.
    ///
    /// ```
    /// use chatparse_runtime::jmespath::Expression;
    /// use chatparse_runtime::json;
    /// let expr = Expression::compile("{type: 'function', function: @}").unwrap();
    /// let call = json!({"name": "f", "arguments": {"x": 1}});
    /// assert_eq!(expr.search_owned(call.clone()).unwrap(), expr.search(&call).unwrap());
    /// ```
    pub fn search_owned(&self, data: Value) -> Result<Value, JmesError> {
        // (`moves_data` lists the shapes `owned` handles.)
        match owned(&self.ast, data) {
            Ok(value) => Ok(value),
            Err(data) => self.search(&data),
        }
    }
}

impl Expression {
    /// Whether [`Expression::search_owned`] moves the data into the result rather than
    /// searching a copy (the expression is `{k: @ | literal, …}`, `[@][].{…}` or `[].{…}` of
    /// that form).
    pub fn moves_data(&self) -> bool {
        use ast::Ast::{Current, Flatten, MultiSelectHash, MultiSelectList, Projection};
        match &self.ast {
            MultiSelectHash(pairs) => hash_moves(pairs),
            Projection { left, right } => {
                let MultiSelectHash(pairs) = &**right else {
                    return false;
                };
                let Flatten(inner) = &**left else {
                    return false;
                };
                hash_moves(pairs)
                    && match &**inner {
                        MultiSelectList(items) => matches!(items.as_slice(), [Current]),
                        Current => true,
                        _ => false,
                    }
            }
            _ => false,
        }
    }
}

/// The owned evaluation of the shapes [`Expression::search_owned`] moves data through; `Err`
/// gives the data back for any other expression.
fn owned(ast: &Ast, data: Value) -> Result<Value, Value> {
    use ast::Ast::{Current, Flatten, MultiSelectHash, MultiSelectList, Projection};
    match ast {
        MultiSelectHash(pairs) if hash_moves(pairs) => Ok(hash_owned(pairs, data)),
        Projection { left, right } => {
            let MultiSelectHash(pairs) = &**right else {
                return Err(data);
            };
            if !hash_moves(pairs) {
                return Err(data);
            }
            // `[@][]`: the data in a list (null stays null), flattened one level; `[]`: the
            // data flattened one level (null unless it is a list).
            let base = match &**left {
                Flatten(inner) => match &**inner {
                    MultiSelectList(items) if matches!(items.as_slice(), [Current]) => {
                        if data.is_null() {
                            return Ok(Value::Null);
                        }
                        vec![data]
                    }
                    Current => match data {
                        Value::Array(items) => items,
                        _ => return Ok(Value::Null),
                    },
                    _ => return Err(data),
                },
                _ => return Err(data),
            };
            let mut flat = Vec::with_capacity(base.len());
            for item in base {
                match item {
                    Value::Array(items) => flat.extend(items),
                    other => flat.push(other),
                }
            }
            // A projection drops null results, and `{…}` on null is null.
            Ok(Value::Array(
                flat.into_iter()
                    .filter(|v| !v.is_null())
                    .map(|v| hash_owned(pairs, v))
                    .collect(),
            ))
        }
        _ => Err(data),
    }
}

/// `{k: @ | literal, …}` with distinct keys.
fn hash_moves(pairs: &[ast::KeyValuePair]) -> bool {
    pairs
        .iter()
        .all(|p| matches!(p.value, Ast::Current | Ast::Literal(_)))
        && pairs
            .iter()
            .enumerate()
            .all(|(i, p)| pairs[..i].iter().all(|q| q.key != p.key))
}

/// A [`hash_moves`] multi-select hash on `data` (null on null).
fn hash_owned(pairs: &[ast::KeyValuePair], data: Value) -> Value {
    if data.is_null() {
        return Value::Null;
    }
    let last_current = pairs.iter().rposition(|p| matches!(p.value, Ast::Current));
    let mut data = Some(data);
    let mut out = crate::value::Map::with_capacity(pairs.len());
    for (i, pair) in pairs.iter().enumerate() {
        let value = match &pair.value {
            Ast::Literal(literal) => literal.clone(),
            _ if Some(i) == last_current => data.take().unwrap_or_default(),
            _ => data.clone().unwrap_or_default(),
        };
        out.insert(pair.key.clone(), value);
    }
    Value::Object(out)
}

/// Compiles and searches in one step (`jmespath.search(expr, data)`).
pub fn search(expr: &str, data: &Value) -> Result<Value, JmesError> {
    Expression::compile(expr)?.search(data)
}

#[cfg(test)]
mod tests;
