//! Lark, as llguidance reads it, from the IR.
//!
//! Text that must avoid some strings is a terminal `/(?s:.*)/ & ~/(?s:.*(?:…).*)/`; text that
//! ends at a literal is a lazy rule (`t[lazy]: TEXT "end"`), which llguidance ends at the
//! literal's first occurrence.

use std::fmt::Write as _;

use super::ir::{Node, Rules};

fn name(n: &str) -> String {
    let mut s: String = n
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'r');
    }
    s
}

/// A Lark string literal (JSON escapes).
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A character for a regex class or literal.
fn re_char(c: char, in_class: bool) -> String {
    match c {
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '/' => "\\/".into(),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("\\x{:02x}", c as u32),
        c if in_class && matches!(c, ']' | '[' | '\\' | '^' | '-') => format!("\\{c}"),
        c if !in_class && "\\.+*?()|[]{}^$#&-~".contains(c) => format!("\\{c}"),
        c => c.to_string(),
    }
}

fn re_lit(s: &str) -> String {
    s.chars().map(|c| re_char(c, false)).collect()
}

fn class(ranges: &[(char, char)], negated: bool) -> String {
    let mut out = String::from("/[");
    if negated {
        out.push('^');
    }
    for &(a, b) in ranges {
        out.push_str(&re_char(a, true));
        if b != a {
            out.push('-');
            out.push_str(&re_char(b, true));
        }
    }
    out.push_str("]/");
    out
}

struct Emitter {
    /// Special tokens written as token references (`<|end|>`), not as text.
    special: Vec<String>,
    extra: Vec<String>,
    texts: Vec<(Vec<String>, String)>,
    thens: Vec<(Vec<String>, String, String)>,
}

impl Emitter {
    fn text_token(&mut self, stop: &[String]) -> String {
        let mut key = stop.to_vec();
        key.sort();
        key.dedup();
        if let Some((_, n)) = self.texts.iter().find(|(k, _)| *k == key) {
            return n.clone();
        }
        let n = format!("TEXT{}", self.texts.len());
        self.texts.push((key.clone(), n.clone()));
        let def = if key.is_empty() {
            format!("{n}: /(?s:.*)/")
        } else {
            let alts: Vec<String> = key.iter().map(|s| re_lit(s)).collect();
            format!("{n}: /(?s:.*)/ & ~/(?s:.*(?:{}).*)/", alts.join("|"))
        };
        self.extra.push(def);
        n
    }

    fn then_rule(&mut self, stop: &[String], end: &str) -> String {
        let mut key = stop.to_vec();
        key.sort();
        key.dedup();
        if let Some((_, _, n)) = self.thens.iter().find(|(k, e, _)| *k == key && e == end) {
            return n.clone();
        }
        // The text may not contain the other stop strings; `end` ends it (lazily).
        let others: Vec<String> = key.iter().filter(|s| *s != end).cloned().collect();
        let text = self.text_token(&others);
        let n = format!("text_then{}", self.thens.len());
        self.thens.push((key, end.to_owned(), n.clone()));
        self.extra.push(format!("{n}[lazy]: {text} {}", lit(end)));
        n
    }

    fn node(&mut self, n: &Node) -> String {
        match n {
            Node::Lit(s) if s.is_empty() => "\"\"".into(),
            Node::Lit(s) => self.lit_pieces(s),
            Node::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.atom(i)).collect();
                parts.join(" ")
            }
            Node::Alt(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.node(i)).collect();
                parts.join(" | ")
            }
            Node::Opt(i) => format!("{}?", self.atom(i)),
            Node::Star(i) => format!("{}*", self.atom(i)),
            Node::Ref(r) => name(r),
            Node::Class { ranges, negated } => class(ranges, *negated),
            Node::Text { stop } => self.text_token(stop),
            Node::WsLit(l) if self.has_special(l) => {
                let l = self.lit_pieces(l);
                format!("(/[ \\t\\n]+/? {l})")
            }
            Node::WsLit(l) => {
                let n = format!("WS_LIT{}", self.extra.len());
                self.extra.push(format!("{n}: /[ \\t\\n]*{}/", re_lit(l)));
                n
            }
            Node::TextThen { stop, end } if self.starts_special(end) => {
                // Text cannot run over a special token: the text, then the token.
                let others: Vec<String> = stop.iter().filter(|s| *s != end).cloned().collect();
                let text = self.text_token(&others);
                format!("({text} {})", self.lit_pieces(end))
            }
            Node::TextThen { stop, end } => self.then_rule(stop, end),
        }
    }

    fn has_special(&self, s: &str) -> bool {
        self.special.iter().any(|t| s.contains(t.as_str()))
    }

    fn starts_special(&self, s: &str) -> bool {
        self.special.iter().any(|t| s.starts_with(t.as_str()))
    }

    /// A literal: string pieces and special-token references.
    fn lit_pieces(&self, s: &str) -> String {
        if !self.has_special(s) {
            return lit(s);
        }
        let mut parts = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            let next = self
                .special
                .iter()
                .filter_map(|t| rest.find(t.as_str()).map(|i| (i, t)))
                .min_by_key(|&(i, t)| (i, usize::MAX - t.len()));
            match next {
                Some((i, t)) => {
                    if i > 0 {
                        parts.push(lit(&rest[..i]));
                    }
                    parts.push(t.clone());
                    rest = &rest[i + t.len()..];
                }
                None => {
                    parts.push(lit(rest));
                    rest = "";
                }
            }
        }
        format!("({})", parts.join(" "))
    }

    fn atom(&mut self, n: &Node) -> String {
        match n {
            Node::Seq(_) | Node::Alt(_) => format!("({})", self.node(n)),
            _ => self.node(n),
        }
    }
}

/// The Lark text of `rules` (`start: root`), for llguidance.
pub fn emit(rules: &Rules, root: &str) -> String {
    emit_with_special(rules, root, &[])
}

/// As [`emit`], with these special tokens (`<…>`) written as token references.
pub fn emit_with_special(rules: &Rules, root: &str, special: &[String]) -> String {
    let mut special: Vec<String> = special
        .iter()
        .filter(|t| t.starts_with('<') && t.ends_with('>') && t.len() > 2)
        .cloned()
        .collect();
    special.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let mut e = Emitter {
        special,
        extra: Vec::new(),
        texts: Vec::new(),
        thens: Vec::new(),
    };
    let mut out = String::from("%llguidance {}\n\n");
    if root == "root" {
        if let Some(body) = rules.get("root") {
            let b = e.node(body);
            let _ = writeln!(out, "start: {b}");
        }
    } else {
        let _ = writeln!(out, "start: {}", name(root));
    }
    for (n, body) in rules.iter() {
        if n == "root" {
            continue;
        }
        let b = e.node(body);
        let _ = writeln!(out, "{}: {b}", name(n));
    }
    for d in e.extra {
        let _ = writeln!(out, "{d}");
    }
    out
}
