//! GBNF (llama.cpp's grammar format) from the IR.

use std::fmt::Write as _;

use super::ir::{Node, Rules};
use super::text::automaton;

/// A rule name GBNF accepts (`[a-zA-Z0-9-]+`).
fn name(n: &str) -> String {
    n.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn lit(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn class_char(c: char) -> String {
    match c {
        ']' | '[' | '\\' => format!("\\{c}"),
        '^' | '-' => format!("\\x{:02X}", c as u32),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("\\x{:02X}", c as u32),
        c => c.to_string(),
    }
}

fn class(ranges: &[(char, char)], negated: bool) -> String {
    let mut out = String::from("[");
    if negated {
        out.push('^');
    }
    for &(a, b) in ranges {
        out.push_str(&class_char(a));
        if b != a {
            out.push('-');
            out.push_str(&class_char(b));
        }
    }
    out.push(']');
    out
}

struct Emitter<'r> {
    out: String,
    extra: Vec<(String, String)>,
    texts: Vec<(Vec<String>, String)>,
    _rules: &'r Rules,
}

impl Emitter<'_> {
    /// The rule of text avoiding `stop` (shared between uses).
    fn text_rule(&mut self, stop: &[String]) -> String {
        let mut key = stop.to_vec();
        key.sort();
        key.dedup();
        if let Some((_, n)) = self.texts.iter().find(|(k, _)| *k == key) {
            return n.clone();
        }
        let base = format!("text{}", self.texts.len());
        self.texts.push((key.clone(), base.clone()));
        if key.is_empty() {
            // Any text: every character.
            self.extra
                .push((base.clone(), "( [^\\x00] | [\\x00] )*".into()));
            return base;
        }
        let (alphabet, states) = automaton(&key);
        let state_name = |i: usize| {
            if i == 0 {
                base.clone()
            } else {
                format!("{base}-{i}")
            }
        };
        for (i, st) in states.iter().enumerate() {
            // Group the alphabet by target.
            let mut alts: Vec<String> = Vec::new();
            let mut to_root: Vec<char> = Vec::new();
            let mut others: Vec<(usize, Vec<char>)> = Vec::new();
            for &(c, next) in &st.next {
                match next {
                    None => {}
                    Some(0) => to_root.push(c),
                    Some(n) => match others.iter_mut().find(|(t, _)| *t == n) {
                        Some((_, cs)) => cs.push(c),
                        None => others.push((n, vec![c])),
                    },
                }
            }
            // Characters outside the alphabet, and alphabet characters that lead back to the
            // start, stay in the start state.
            let outside = class(
                &alphabet
                    .iter()
                    .filter(|c| !to_root.contains(c))
                    .map(|&c| (c, c))
                    .collect::<Vec<_>>(),
                true,
            );
            for (n, cs) in &others {
                let cls = class(&cs.iter().map(|&c| (c, c)).collect::<Vec<_>>(), false);
                alts.push(format!("{cls} {}", state_name(*n)));
            }
            let body = if i == 0 {
                // [^…]* then optionally a step into a prefix state.
                if alts.is_empty() {
                    format!("{outside}*")
                } else {
                    format!("{outside}* ( {} )?", alts.join(" | "))
                }
            } else {
                alts.push(format!("{outside} {}", state_name(0)));
                format!("( {} )?", alts.join(" | "))
            };
            let _ = &st.prefix;
            self.extra.push((state_name(i), body));
        }
        base
    }

    fn node(&mut self, n: &Node) -> String {
        match n {
            Node::Lit(s) if s.is_empty() => "\"\"".into(),
            Node::Lit(s) => lit(s),
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
            Node::Text { stop } => self.text_rule(stop),
            Node::WsLit(l) => {
                let n = format!("ws-lit{}", self.extra.len());
                // Recursive, so that a GBNF reader with a lexer (llguidance) keeps the
                // whitespace characters apart from the literal.
                self.extra
                    .push((n.clone(), format!("[ \\t\\n] {n} | {}", lit(l))));
                n
            }
            Node::TextThen { stop, end } => {
                let t = self.text_rule(stop);
                format!("{t} {}", lit(end))
            }
        }
    }

    fn atom(&mut self, n: &Node) -> String {
        match n {
            Node::Seq(_) | Node::Alt(_) | Node::TextThen { .. } => format!("( {} )", self.node(n)),
            _ => self.node(n),
        }
    }
}

/// The GBNF text of `rules`, `root` first (as `root ::= …`).
pub fn emit(rules: &Rules, root: &str) -> String {
    let mut e = Emitter {
        out: String::new(),
        extra: Vec::new(),
        texts: Vec::new(),
        _rules: rules,
    };
    if root != "root" {
        let _ = writeln!(e.out, "root ::= {}", name(root));
    }
    let mut ordered: Vec<(&str, &Node)> = rules.iter().filter(|(n, _)| *n == "root").collect();
    ordered.extend(rules.iter().filter(|(n, _)| *n != "root"));
    for (n, body) in ordered {
        if n == "root" && root != "root" {
            continue;
        }
        // Whitespace as a recursive rule: a GBNF reader that turns rules of terminals into
        // single lexemes (llguidance) keeps the rules around it as rules.
        let b = if n == "ws" {
            "( [ \\t\\n] ws )?".to_owned()
        } else {
            e.node(body)
        };
        let _ = writeln!(e.out, "{} ::= {b}", name(n));
    }
    let extra = std::mem::take(&mut e.extra);
    for (n, b) in extra {
        let _ = writeln!(e.out, "{n} ::= {b}");
    }
    e.out
}
