//! The format-neutral grammar IR: named rules over a few node kinds, which every emitter
//! (GBNF, Lark, structural tag) writes in its own syntax.

use std::fmt::Write as _;

/// One node of a rule's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// This exact text.
    Lit(String),
    /// Each in turn.
    Seq(Vec<Node>),
    /// One of them.
    Alt(Vec<Node>),
    /// Zero or one.
    Opt(Box<Node>),
    /// Zero or more.
    Star(Box<Node>),
    /// A named rule.
    Ref(String),
    /// One character in the ranges (or, `negated`, not in them).
    Class {
        /// Inclusive character ranges.
        ranges: Vec<(char, char)>,
        /// Whether the class is every character *outside* the ranges.
        negated: bool,
    },
    /// Optional whitespace (spaces, tabs, newlines), then this literal: one lexeme where the
    /// output format has lexemes (an opener after leading whitespace must not be read as text).
    WsLit(String),
    /// Any text (possibly empty) that contains none of the strings in `stop`.
    Text {
        /// The strings the text must not contain.
        stop: Vec<String>,
    },
    /// Any text that contains none of `stop` and does not contain `end` before it ends, then
    /// `end` (the first occurrence of `end` closes the text): `end` is one of `stop`.
    TextThen {
        /// The strings the text must not contain (`end` among them).
        stop: Vec<String>,
        /// The literal that ends the text.
        end: String,
    },
}

impl Node {
    /// A literal.
    pub fn lit(s: impl Into<String>) -> Node {
        Node::Lit(s.into())
    }

    /// A reference to a rule.
    pub fn rule(s: impl Into<String>) -> Node {
        Node::Ref(s.into())
    }

    /// A sequence, flattened; a single element stands alone.
    pub fn seq(items: impl IntoIterator<Item = Node>) -> Node {
        let mut out = Vec::new();
        for n in items {
            match n {
                Node::Seq(inner) => out.extend(inner),
                Node::Lit(s) if s.is_empty() => {}
                // Whitespace twice in a row is whitespace once.
                Node::Ref(r) if r == "ws" && out.last() == Some(&Node::rule("ws")) => {}
                n => out.push(n),
            }
        }
        // Merge adjacent literals.
        let mut merged: Vec<Node> = Vec::new();
        for n in out {
            if let (Some(Node::Lit(prev)), Node::Lit(s)) = (merged.last_mut(), &n) {
                prev.push_str(s);
                continue;
            }
            merged.push(n);
        }
        if merged.len() == 1 {
            merged.pop().unwrap_or_else(|| Node::lit(""))
        } else {
            Node::Seq(merged)
        }
    }

    /// Alternatives; a single one stands alone.
    pub fn alt(items: impl IntoIterator<Item = Node>) -> Node {
        let mut v: Vec<Node> = Vec::new();
        for n in items {
            if !v.contains(&n) {
                v.push(n);
            }
        }
        if v.len() == 1 {
            v.pop().unwrap_or_else(|| Node::lit(""))
        } else {
            Node::Alt(v)
        }
    }

    /// Zero or one.
    pub fn opt(n: Node) -> Node {
        Node::Opt(Box::new(n))
    }

    /// Zero or more.
    pub fn star(n: Node) -> Node {
        Node::Star(Box::new(n))
    }

    /// One character of the ranges.
    pub fn class(ranges: &[(char, char)]) -> Node {
        Node::Class {
            ranges: ranges.to_vec(),
            negated: false,
        }
    }

    /// One character outside the ranges.
    pub fn not_class(ranges: &[(char, char)]) -> Node {
        Node::Class {
            ranges: ranges.to_vec(),
            negated: true,
        }
    }

    /// Whether the node matches only the empty string.
    pub fn is_empty(&self) -> bool {
        matches!(self, Node::Lit(s) if s.is_empty())
    }
}

/// A grammar: named rules, the first is the start rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    rules: Vec<(String, Node)>,
}

impl Rules {
    /// Adds (or replaces) a rule.
    pub fn define(&mut self, name: impl Into<String>, body: Node) {
        let name = name.into();
        if let Some(slot) = self.rules.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = body;
        } else {
            self.rules.push((name, body));
        }
    }

    /// Whether a rule of that name exists.
    pub fn has(&self, name: &str) -> bool {
        self.rules.iter().any(|(n, _)| n == name)
    }

    /// The rules in definition order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.rules.iter().map(|(n, b)| (n.as_str(), b))
    }

    /// A rule's body.
    pub fn get(&self, name: &str) -> Option<&Node> {
        self.rules.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    /// A readable dump (for debugging and tests).
    pub fn dump(&self) -> String {
        let mut s = String::new();
        for (n, b) in &self.rules {
            let _ = writeln!(s, "{n} ::= {b:?}");
        }
        s
    }
}
