//! Calls a stream has parsed already, handed to the final parse of the same output so that it
//! does not parse them again (issue 17: parsing a call again was about a tenth of a short
//! streamed message).
//!
//! Why the message stays the one-shot parse's: parsing a call is a pure function of the items'
//! schema node and the call's text (no state but the output bound, below), so where the final
//! parse gives that same node that same text, the value the stream got is the value it would
//! get. A call is taken only then: same node, and a text equal byte for byte (the final parse's
//! text may be a copy the root's substitutions made, so it is compared, not located); whatever
//! else the final parse meets, it parses. A call is taken once.
//!
//! The output bound (see [`crate::budget`]) is the one state a parse reads and changes: a call's
//! parse spends one match per iterator match inside it. The stream records what its parse of the
//! call spent; the final parse takes the call only if its bound has that left, and spends it
//! (see [`budget::spend`] for why that is exactly when parsing again would get through), and
//! otherwise parses the call again, to fail where the one-shot parse fails.

use crate::budget::{self, Spent};
use crate::value::Value;

use super::Node;

/// The calls a stream parsed, in the order they closed.
#[derive(Debug)]
pub(crate) struct ParsedCalls<'a> {
    /// The schema node the calls were parsed with (the calls field's `items`).
    items: &'a Node,
    /// The text the spans are in (the stream's buffer).
    text: &'a str,
    calls: &'a mut [ParsedCall],
    /// The first call not taken yet, where the search starts: the final parse meets the calls
    /// in the order they closed, so a search usually looks at one.
    next: usize,
}

/// One parsed call: its text's span and its value with what its parse spent of the bound.
#[derive(Debug)]
pub(crate) struct ParsedCall {
    pub(crate) span: (usize, usize),
    pub(crate) value: Option<Value>,
    pub(crate) spent: Spent,
}

impl<'a> ParsedCalls<'a> {
    /// The calls in `calls`, parsed with `items` from their spans in `text`.
    pub(crate) fn new(items: &'a Node, text: &'a str, calls: &'a mut [ParsedCall]) -> Self {
        ParsedCalls {
            items,
            text,
            calls,
            next: 0,
        }
    }

    /// The value of `node` parsed from `text`, if a call of that text was parsed with that node
    /// and not taken yet, and the bound has what that parse spent (which is then spent).
    pub(crate) fn take(&mut self, node: &Node, text: &str) -> Option<Value> {
        if !std::ptr::eq(node, self.items) {
            return None;
        }
        let source = self.text;
        let at = self.calls.iter().skip(self.next).position(|call| {
            call.value.is_some() && source.get(call.span.0..call.span.1) == Some(text)
        })? + self.next;
        let call = &mut self.calls[at];
        if !budget::spend(call.spent) {
            return None;
        }
        if at == self.next {
            self.next += 1;
        }
        call.value.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Limits, OutputBudget};
    use crate::Schema;

    fn schema() -> Schema {
        Schema::from_json_str(
            r#"{"type": "object", "properties": {"calls": {"type": "array",
                "x-regex-iterator": "<c>(.*?)</c>",
                "items": {"type": "array", "x-regex-iterator": "(\\w)", "items": {}}}}}"#,
        )
        .unwrap()
    }

    fn items(schema: &Schema) -> &Node {
        match &schema.root().property("calls").unwrap().items {
            super::super::Items::Each(node) => node,
            _ => unreachable!(),
        }
    }

    fn call(span: (usize, usize), value: Value, matches: usize, bytes: usize) -> ParsedCall {
        ParsedCall {
            span,
            value: Some(value),
            spent: Spent { matches, bytes },
        }
    }

    #[test]
    fn a_call_is_taken_for_the_same_node_and_text_only_and_once() {
        let schema = schema();
        let node = items(&schema);
        let text = "<c>ab</c><c>cd</c>";
        // A marked value, not what parsing gives, to see where it is taken.
        let mut calls = [call((3, 5), crate::json!("first"), 2, 2)];
        let mut parsed = ParsedCalls::new(node, text, &mut calls);
        assert_eq!(parsed.take(schema.root(), "ab"), None, "another node");
        assert_eq!(parsed.take(node, "cd"), None, "another text");
        assert_eq!(parsed.take(node, "a"), None, "a part of the text");
        assert_eq!(parsed.take(node, "ab"), Some(crate::json!("first")));
        assert_eq!(parsed.take(node, "ab"), None, "taken once");
    }

    #[test]
    fn a_call_is_taken_only_where_the_bound_has_what_its_parse_spent() {
        let schema = schema();
        let node = items(&schema);
        let text = "<c>ab</c>";
        let tight = Limits {
            span_factor: 0,
            span_constant: 1,
            items_factor: 0,
            items_constant: 5,
        };
        let mut calls = [call((3, 5), crate::json!(["a", "b"]), 2, 2)];
        {
            // One byte left: parsing `ab` again would fail at its second match.
            let _bound = OutputBudget::with_limits(0, tight);
            let mut parsed = ParsedCalls::new(node, text, &mut calls);
            assert_eq!(parsed.take(node, "ab"), None);
            assert_eq!(
                budget::remaining(),
                Some(Spent {
                    matches: 5,
                    bytes: 1
                })
            );
        }
        let _bound = OutputBudget::with_limits(
            0,
            Limits {
                span_constant: 2,
                ..tight
            },
        );
        let mut parsed = ParsedCalls::new(node, text, &mut calls);
        assert_eq!(parsed.take(node, "ab"), Some(crate::json!(["a", "b"])));
        assert_eq!(
            budget::remaining(),
            Some(Spent {
                matches: 3,
                bytes: 0
            })
        );
    }

    #[test]
    fn what_a_parse_spends_is_what_parsing_again_needs() {
        let schema = schema();
        let node = items(&schema);
        let _bound = OutputBudget::enter(100);
        let (value, spent) = budget::spent_by(|| {
            super::super::interp::parse_node(
                node,
                crate::support::Content::borrowed("a b c"),
                &mut super::super::interp::Walk::strict(),
            )
        });
        assert_eq!(value.unwrap(), crate::json!(["a", "b", "c"]));
        assert_eq!(
            spent,
            Some(Spent {
                matches: 3,
                bytes: 3
            })
        );
    }
}
