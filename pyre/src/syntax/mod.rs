//! The syntax layer: Python 3.11's pattern parser (`parse`), the flag-resolved tree it builds
//! (`ast`), its translation to Rust regex syntax (`emit`) and `re.sub` templates (`template`).
//! Nothing here searches text.
//!
//! The tree is public so that tools can recognise pattern shapes (chatparse's streaming layer
//! finds literal-delimited regions with it); it is an exact image of what Python compiles, with
//! every flag already applied to the nodes it affects.

pub mod ast;
pub(crate) mod emit;
pub use emit::{expanded_size, MAX_EXPANDED_SIZE};
pub(crate) mod parse;
pub(crate) mod replacement;

pub use ast::Ast;

/// Parses a Python pattern (as compiled with `re.DOTALL`) into its syntax tree, with Python's
/// error messages and positions.
///
/// ```
/// use chatparse_pyre::syntax::{self, ast::Node};
/// let ast = syntax::parse("<think>(.*?)</think>").unwrap();
/// assert_eq!(ast.group_count(), 1);
/// assert!(matches!(ast.root, Node::Concat(_)));
/// assert!(syntax::parse("(").is_err());
/// ```
pub fn parse(python_pattern: &str) -> Result<Ast, crate::RegexError> {
    parse::parse(python_pattern)
}
