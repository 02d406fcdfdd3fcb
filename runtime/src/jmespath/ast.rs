//! The parsed form of an expression.
//!
//! Node kinds correspond one-to-one to python jmespath's `ast.py` node types
//! (except that python's `identity` and `current` collapse into
//! [`Ast::Current`], which behave identically), and the tree has exactly the
//! shape python's parser builds. That matters: python's parser has quirks the
//! spec does not (for instance `[0][1:2]` appends the slice to the index
//! expression instead of projecting), and a code generator working from this
//! tree reproduces them by evaluating each node as documented below.
//!
//! Evaluation notation: `v` is the current value; "array"/"object" mean JSON
//! arrays/objects; a *projection* evaluates its right side on each element and
//! drops `null` results.

use crate::value::Value;

/// One node of a compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Ast {
    /// `@`, and the implicit operand of projections and slices: yields `v`.
    Current,
    /// `foo` or `"foo"`: the member of an object, `null` for anything else or
    /// a missing key.
    Field(String),
    /// `a.b.c`: evaluates each child on the previous child's result.
    Subexpression(Vec<Ast>),
    /// `[n]` on an array (negative counts from the end); `null` when out of
    /// range or `v` is not an array.
    Index(i64),
    /// `[start:stop:step]` with Python slice semantics on arrays only; a zero
    /// step is an evaluation error.
    Slice(Slice),
    /// `expr[n]`, `expr[a:b]`: evaluates each child on the previous result
    /// (the same fold as [`Ast::Subexpression`]).
    IndexExpression(Vec<Ast>),
    /// A backtick JSON literal or a `'raw string'`.
    Literal(Value),
    /// `[a, b]`: `null` when `v` is null, else the array of each child's value.
    MultiSelectList(Vec<Ast>),
    /// `{k: a, ...}`: `null` when `v` is null, else an object in key order (a
    /// repeated key keeps its first position and last value).
    MultiSelectHash(Vec<KeyValuePair>),
    /// List projection (`a[*]`, `a[]`, `a[1:]`): `left` must yield an array,
    /// else `null`; `right` is projected over its elements.
    Projection {
        /// Produces the array to project over.
        left: Box<Ast>,
        /// Evaluated on each element; `null` results are dropped.
        right: Box<Ast>,
    },
    /// `a.*` / `*`: like [`Ast::Projection`] over an object's values (in key
    /// order); `null` when `left` is not an object.
    ValueProjection {
        /// Produces the object to project over.
        left: Box<Ast>,
        /// Evaluated on each value; `null` results are dropped.
        right: Box<Ast>,
    },
    /// `a[?cond]`: projection over the elements of `left` whose `condition`
    /// is truthy.
    FilterProjection {
        /// Produces the array to filter.
        left: Box<Ast>,
        /// Evaluated on each kept element; `null` results are dropped.
        right: Box<Ast>,
        /// Evaluated on each element; JMESPath truthiness.
        condition: Box<Ast>,
    },
    /// `a[]`'s first step: one level of array flattening; `null` when the
    /// child does not yield an array.
    Flatten(Box<Ast>),
    /// `a || b`: `a` unless it is falsy (`null`, `false`, `""`, `[]`, `{}`),
    /// then `b`.
    Or(Box<Ast>, Box<Ast>),
    /// `a && b`: `a` if it is falsy, else `b`.
    And(Box<Ast>, Box<Ast>),
    /// `!a`: Python `not` of the value, except that any number gives `false`.
    Not(Box<Ast>),
    /// `a == b`, `a < b`, ...
    Comparison {
        /// The operator.
        op: Comparator,
        /// Left operand.
        left: Box<Ast>,
        /// Right operand.
        right: Box<Ast>,
    },
    /// `a | b`: evaluates `b` on the result of `a` (stops projections).
    Pipe(Box<Ast>, Box<Ast>),
    /// `name(args...)`. Unknown names and wrong arity are evaluation errors,
    /// raised after the arguments are evaluated (as python does).
    FunctionCall {
        /// The function name as written.
        name: String,
        /// Argument expressions, evaluated left to right.
        args: Vec<Ast>,
    },
    /// `&expr`: an expression reference, a value only functions such as
    /// `sort_by` or `map` can use.
    ExpRef(Box<Ast>),
}

/// One `key: value` entry of a multi-select hash.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValuePair {
    /// The output key (quoted identifiers are already unescaped).
    pub key: String,
    /// The expression producing the value.
    pub value: Ast,
}

/// Bounds of a slice; `None` is an omitted part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// First index (Python default depends on the step's sign).
    pub start: Option<i64>,
    /// End index, exclusive.
    pub stop: Option<i64>,
    /// Stride; `Some(0)` fails at evaluation time.
    pub step: Option<i64>,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparator {
    /// `==`: deep Python equality (`1 == 1.0`), except that `0`/`1` never
    /// equal a boolean at the top level.
    Eq,
    /// `!=`: negation of [`Comparator::Eq`].
    Ne,
    /// `<`: numbers or strings only, else `null`; string vs number is an error.
    Lt,
    /// `<=`: as [`Comparator::Lt`].
    Lte,
    /// `>`: as [`Comparator::Lt`].
    Gt,
    /// `>=`: as [`Comparator::Lt`].
    Gte,
}

impl Comparator {
    /// The operator as written in an expression.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparator::Eq => "==",
            Comparator::Ne => "!=",
            Comparator::Lt => "<",
            Comparator::Lte => "<=",
            Comparator::Gt => ">",
            Comparator::Gte => ">=",
        }
    }
}
