//! JSON bracket depth, read a byte at a time: where a JSON object or list that a model is still
//! writing closes, without decoding it. Brackets inside strings (escapes included) do not count.
//! JSON's structural bytes are ASCII and never part of a multi-byte UTF-8 character, so bytes
//! are enough.

/// The nesting of the JSON read so far (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Brackets {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Brackets {
    /// Reads one byte; whether it closed the outermost bracket (the depth is back to 0).
    pub(crate) fn byte(&mut self, b: u8) -> bool {
        if self.in_string {
            match b {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => self.in_string = false,
                _ => {}
            }
            return false;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                return self.depth == 0;
            }
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::Brackets;

    /// Where each text's outermost bracket closes, as byte offsets of the closing byte.
    fn closes(text: &str) -> Vec<usize> {
        let mut brackets = Brackets::default();
        (0..text.len())
            .filter(|&i| brackets.byte(text.as_bytes()[i]))
            .collect()
    }

    #[test]
    fn strings_and_escapes_hide_brackets() {
        assert_eq!(closes(r#"{"a": [1, {"b": "}]"}]}"#), [22]);
        assert_eq!(closes(r#"{"a": "\"}"}"#), [11]);
        assert_eq!(closes(r#"{"a": "\\"}"#), [10]);
        assert_eq!(closes(r#"{}, {"é": []}"#), [1, 13]);
        assert_eq!(closes(r#"{"a": 1"#), Vec::<usize>::new());
    }
}
