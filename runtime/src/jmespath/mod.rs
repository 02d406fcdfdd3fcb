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

/// Compiles and searches in one step (`jmespath.search(expr, data)`).
pub fn search(expr: &str, data: &Value) -> Result<Value, JmesError> {
    Expression::compile(expr)?.search(data)
}

#[cfg(test)]
mod tests;
