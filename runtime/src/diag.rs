//! Diagnostics for both spec loaders, collected the way serde_derive's `internals::Ctxt`
//! collects them: a loader reports every problem where it finds it (with the JSON pointer and a
//! fix) and keeps going, then [`Diagnostics::check`] turns the collection into one
//! [`SchemaError`] or lets the loaded value through. Nothing is reported twice and nothing is lost
//! by stopping at the first problem.

use crate::value::Value;

use crate::error::{SchemaError, SchemaProblem};

/// The problems found so far while loading one spec.
#[derive(Debug, Default)]
pub(crate) struct Diagnostics {
    problems: Vec<SchemaProblem>,
}

/// A point in a [`Diagnostics`] to ask later whether anything went wrong since.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark(usize);

impl Diagnostics {
    /// Reports a problem at `pointer`.
    pub(crate) fn error(
        &mut self,
        pointer: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.problems.push(SchemaProblem {
            pointer: pointer.into(),
            message: message.into(),
            fix: fix.into(),
        });
    }

    /// The current point, for [`Diagnostics::clean_since`].
    pub(crate) fn mark(&self) -> Mark {
        Mark(self.problems.len())
    }

    /// Whether no problem was reported after `mark`.
    pub(crate) fn clean_since(&self, mark: Mark) -> bool {
        self.problems.len() == mark.0
    }

    /// The loaded value if nothing went wrong, else every problem as one error.
    pub(crate) fn check<T>(self, loaded: Option<T>, source_name: &str) -> Result<T, SchemaError> {
        match loaded {
            Some(value) if self.problems.is_empty() => Ok(value),
            _ => Err(SchemaError {
                source_name: source_name.to_owned(),
                problems: self.problems,
            }),
        }
    }
}

/// The error for spec text that is not JSON (`what`: "a response schema", "a response_template").
pub(crate) fn invalid_json(
    source_name: &str,
    error: impl std::fmt::Display,
    what: &str,
) -> SchemaError {
    SchemaError {
        source_name: source_name.to_owned(),
        problems: vec![SchemaProblem {
            pointer: String::new(),
            message: format!("invalid JSON: {error}"),
            fix: format!("make the file valid JSON ({what} is one JSON object)"),
        }],
    }
}

/// The error for a spec file that cannot be read.
pub(crate) fn unreadable(source_name: &str, error: &std::io::Error, what: &str) -> SchemaError {
    SchemaError {
        source_name: source_name.to_owned(),
        problems: vec![SchemaProblem {
            pointer: String::new(),
            message: format!("cannot read the {what} file: {error}"),
            fix: if error.kind() == std::io::ErrorKind::InvalidData {
                // read_to_string's error for bytes that are not UTF-8: the path was fine.
                "save the file as UTF-8 (JSON text is UTF-8)".to_owned()
            } else {
                "check the path (relative paths start at the current directory)".to_owned()
            },
        }],
    }
}

/// A JSON value's type as Python calls it, with an article (`a list`): the schema loader's
/// wording, since schemas are Python data to the reference.
pub(crate) fn python_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A JSON value's type as JSON calls it (`array`): the template loader's wording.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The candidate closest to `word` by edit distance, when it is close enough to be a typo.
pub(crate) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| {
            // An abbreviation (`int`, `bool`, `str`) is as telling as a typo.
            let abbreviation = word.len() >= 3 && c.starts_with(word);
            (
                if abbreviation {
                    1
                } else {
                    edit_distance(word, c)
                },
                *c,
            )
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
