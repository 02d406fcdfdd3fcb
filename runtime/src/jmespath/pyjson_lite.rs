//! Python's `json.loads` as the JMESPath lexer needs it: backtick literals and quoted identifiers
//! are decoded by `json.loads` in python jmespath, and *which* failure occurs matters (an invalid
//! literal silently becomes a string; a value JSON cannot carry must not).

use crate::value::Value;

use crate::py::json::{self, JsonError};

/// Why `loads` produced no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Loads {
    /// Python raises `ValueError` (JSONDecodeError, or the int digit limit); the bare message.
    ValueError(String),
    /// Python succeeds, but the value holds `nan`/`inf` or a lone surrogate.
    Unrepresentable(String),
    /// Python raises `RecursionError`.
    TooDeep,
}

pub(crate) fn loads(text: &str) -> Result<Value, Loads> {
    json::loads(text).map_err(|e| match e {
        JsonError::Decode { message, .. } => Loads::ValueError(message),
        JsonError::IntegerTooLong { .. } => Loads::ValueError(
            "Exceeds the limit (4300 digits) for integer string conversion".to_owned(),
        ),
        JsonError::NonFinite { .. } | JsonError::LoneSurrogate { .. } => {
            Loads::Unrepresentable(e.to_string())
        }
        JsonError::TooDeep { .. } => Loads::TooDeep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_kinds_match_python() {
        assert_eq!(loads("-0").unwrap().to_string(), "0");
        assert_eq!(loads("1E2").unwrap().to_string(), "100.0");
        assert!(matches!(loads("[1,]"), Err(Loads::ValueError(_))));
        assert!(matches!(loads("NaN"), Err(Loads::Unrepresentable(_))));
        assert!(matches!(loads("NaN x"), Err(Loads::ValueError(_))));
        assert!(matches!(
            loads(r#""\ud800""#),
            Err(Loads::Unrepresentable(_))
        ));
        assert!(matches!(
            loads(&"1".repeat(4301)),
            Err(Loads::ValueError(_))
        ));
        assert!(matches!(loads(&"[".repeat(2000)), Err(Loads::TooDeep)));
    }
}
