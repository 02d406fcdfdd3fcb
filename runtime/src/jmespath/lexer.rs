//! Tokenizer mirroring python jmespath's `lexer.Lexer`, including its quirks
//! (backslashes kept verbatim in raw strings, invalid JSON literals falling
//! back to strings, positions counted in code points).

use super::pyjson_lite::{loads, Loads};
use super::JmesError;
use crate::py::text::py_lstrip;
use crate::value::Value;

/// A token kind; names follow python's token `type` strings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Eof,
    UnquotedIdentifier(String),
    QuotedIdentifier(String),
    Literal(Value),
    /// Saturated to `i64`; the canonical decimal text is kept for messages.
    Number(i64, String),
    Dot,
    Star,
    RBracket,
    Comma,
    Colon,
    Current,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Flatten,
    Filter,
    LBracket,
    Pipe,
    Or,
    And,
    Expref,
    Not,
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
}

impl Tok {
    /// Python's token type name.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Tok::Eof => "eof",
            Tok::UnquotedIdentifier(_) => "unquoted_identifier",
            Tok::QuotedIdentifier(_) => "quoted_identifier",
            Tok::Literal(_) => "literal",
            Tok::Number(..) => "number",
            Tok::Dot => "dot",
            Tok::Star => "star",
            Tok::RBracket => "rbracket",
            Tok::Comma => "comma",
            Tok::Colon => "colon",
            Tok::Current => "current",
            Tok::LParen => "lparen",
            Tok::RParen => "rparen",
            Tok::LBrace => "lbrace",
            Tok::RBrace => "rbrace",
            Tok::Flatten => "flatten",
            Tok::Filter => "filter",
            Tok::LBracket => "lbracket",
            Tok::Pipe => "pipe",
            Tok::Or => "or",
            Tok::And => "and",
            Tok::Expref => "expref",
            Tok::Not => "not",
            Tok::Eq => "eq",
            Tok::Ne => "ne",
            Tok::Lt => "lt",
            Tok::Lte => "lte",
            Tok::Gt => "gt",
            Tok::Gte => "gte",
        }
    }

    /// Python's `Parser.BINDING_POWER`.
    pub(crate) fn binding_power(&self) -> u8 {
        match self {
            Tok::Pipe => 1,
            Tok::Or => 2,
            Tok::And => 3,
            Tok::Eq | Tok::Ne | Tok::Lt | Tok::Lte | Tok::Gt | Tok::Gte => 5,
            Tok::Flatten => 9,
            Tok::Star => 20,
            Tok::Filter => 21,
            Tok::Dot => 40,
            Tok::Not => 45,
            Tok::LBrace => 50,
            Tok::LBracket => 55,
            Tok::LParen => 60,
            _ => 0,
        }
    }

    /// Python's `str(token['value'])`, for error messages.
    pub(crate) fn value_text(&self) -> String {
        match self {
            Tok::Eof => String::new(),
            Tok::UnquotedIdentifier(s) | Tok::QuotedIdentifier(s) => s.clone(),
            Tok::Literal(v) => crate::py::text::py_str_value(v),
            Tok::Number(_, s) => s.clone(),
            Tok::Dot => ".".into(),
            Tok::Star => "*".into(),
            Tok::RBracket => "]".into(),
            Tok::Comma => ",".into(),
            Tok::Colon => ":".into(),
            Tok::Current => "@".into(),
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::LBrace => "{".into(),
            Tok::RBrace => "}".into(),
            Tok::Flatten => "[]".into(),
            Tok::Filter => "[?".into(),
            Tok::LBracket => "[".into(),
            Tok::Pipe => "|".into(),
            Tok::Or => "||".into(),
            Tok::And => "&&".into(),
            Tok::Expref => "&".into(),
            Tok::Not => "!".into(),
            Tok::Eq => "==".into(),
            Tok::Ne => "!=".into(),
            Tok::Lt => "<".into(),
            Tok::Lte => "<=".into(),
            Tok::Gt => ">".into(),
            Tok::Gte => ">=".into(),
        }
    }
}

/// A token and its start position in code points.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) start: usize,
}

struct Lexer<'e> {
    expr: &'e str,
    chars: Vec<char>,
    pos: usize,
}

fn lexer_error(expr: &str, position: usize, message: &str) -> JmesError {
    JmesError {
        message: format!(
            "Bad jmespath expression: {message}:\n{expr}\n{}^",
            " ".repeat(position)
        ),
        offset: Some(position),
    }
}

/// Tokenizes the whole expression (python materialises the token list before
/// parsing, so a lexer error anywhere wins over parse errors).
pub(crate) fn tokenize(expr: &str) -> Result<Vec<Token>, JmesError> {
    if expr.is_empty() {
        return Err(JmesError {
            message: "Invalid JMESPath expression: cannot be empty.".into(),
            offset: None,
        });
    }
    let mut lx = Lexer {
        expr,
        chars: expr.chars().collect(),
        pos: 0,
    };
    let mut out = Vec::new();
    while let Some(c) = lx.cur() {
        let start = lx.pos;
        let simple = match c {
            '.' => Some(Tok::Dot),
            '*' => Some(Tok::Star),
            ']' => Some(Tok::RBracket),
            ',' => Some(Tok::Comma),
            ':' => Some(Tok::Colon),
            '@' => Some(Tok::Current),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            _ => None,
        };
        if let Some(tok) = simple {
            lx.pos += 1;
            out.push(Token { tok, start });
            continue;
        }
        let tok = match c {
            'a'..='z' | 'A'..='Z' | '_' => {
                while lx
                    .cur()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    lx.pos += 1;
                }
                Tok::UnquotedIdentifier(lx.chars[start..lx.pos].iter().collect())
            }
            ' ' | '\t' | '\n' | '\r' => {
                lx.pos += 1;
                continue;
            }
            '[' => {
                lx.pos += 1;
                match lx.cur() {
                    Some(']') => {
                        lx.pos += 1;
                        Tok::Flatten
                    }
                    Some('?') => {
                        lx.pos += 1;
                        Tok::Filter
                    }
                    _ => Tok::LBracket,
                }
            }
            '\'' => {
                let lexeme = lx.consume_until('\'')?.replace("\\'", "'");
                Tok::Literal(Value::String(lexeme))
            }
            '|' => lx.match_or_else('|', Tok::Or, Tok::Pipe),
            '&' => lx.match_or_else('&', Tok::And, Tok::Expref),
            '`' => lx.consume_literal()?,
            '0'..='9' | '-' => {
                lx.pos += 1;
                while lx.cur().is_some_and(|c| c.is_ascii_digit()) {
                    lx.pos += 1;
                }
                let buff: String = lx.chars[start..lx.pos].iter().collect();
                if buff == "-" {
                    return Err(lexer_error(expr, start, "Unknown token '-'"));
                }
                number_token(&buff)
            }
            '"' => lx.consume_quoted_identifier()?,
            '<' => lx.match_or_else('=', Tok::Lte, Tok::Lt),
            '>' => lx.match_or_else('=', Tok::Gte, Tok::Gt),
            '!' => lx.match_or_else('=', Tok::Ne, Tok::Not),
            '=' => {
                lx.pos += 1;
                if lx.cur() == Some('=') {
                    lx.pos += 1;
                    Tok::Eq
                } else {
                    return Err(lexer_error(expr, start, "Unknown token '='"));
                }
            }
            other => {
                return Err(lexer_error(expr, start, &format!("Unknown token {other}")));
            }
        };
        out.push(Token { tok, start });
    }
    out.push(Token {
        tok: Tok::Eof,
        start: lx.chars.len(),
    });
    Ok(out)
}

/// Python `int(buff)`, saturated to `i64` (list indices beyond that are out of
/// range and slice bounds clamp, so saturation never changes a result).
fn number_token(buff: &str) -> Tok {
    let neg = buff.starts_with('-');
    let digits = buff.trim_start_matches('-').trim_start_matches('0');
    let text = if digits.is_empty() {
        "0".to_string()
    } else if neg {
        format!("-{digits}")
    } else {
        digits.to_string()
    };
    let value = text
        .parse::<i64>()
        .unwrap_or(if neg { i64::MIN } else { i64::MAX });
    Tok::Number(value, text)
}

impl Lexer<'_> {
    fn cur(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn match_or_else(&mut self, expected: char, matched: Tok, otherwise: Tok) -> Tok {
        self.pos += 1;
        if self.cur() == Some(expected) {
            self.pos += 1;
            matched
        } else {
            otherwise
        }
    }

    /// `_consume_until`: a backslash keeps itself and protects the next char.
    fn consume_until(&mut self, delim: char) -> Result<String, JmesError> {
        let start = self.pos;
        let mut buff = String::new();
        self.pos += 1;
        loop {
            let mut c = self.cur();
            if c == Some(delim) {
                break;
            }
            if c == Some('\\') {
                buff.push('\\');
                self.pos += 1;
                c = self.cur();
            }
            match c {
                None => {
                    return Err(lexer_error(
                        self.expr,
                        start,
                        &format!("Unclosed {delim} delimiter"),
                    ))
                }
                Some(c) => buff.push(c),
            }
            self.pos += 1;
        }
        self.pos += 1;
        Ok(buff)
    }

    fn consume_literal(&mut self) -> Result<Tok, JmesError> {
        let start = self.pos;
        let lexeme = self.consume_until('`')?.replace("\\`", "`");
        let too_deep = |expr: &str| JmesError {
            message: format!("Bad jmespath expression: literal nested too deeply:\n{expr}"),
            offset: Some(start),
        };
        let unrepresentable = |why: String, expr: &str| {
            JmesError {
            message: format!(
                "Unsupported jmespath literal ({why}: python would hold a value JSON cannot carry):\n{expr}"
            ),
            offset: Some(start),
        }
        };
        match loads(&lexeme) {
            Ok(v) => Ok(Tok::Literal(v)),
            Err(Loads::TooDeep) => Err(too_deep(self.expr)),
            Err(Loads::Unrepresentable(why)) => Err(unrepresentable(why, self.expr)),
            Err(Loads::ValueError(_)) => {
                // JEP-12 deprecation path: the text becomes a JSON string.
                let quoted = format!("\"{}\"", py_lstrip(&lexeme));
                match loads(&quoted) {
                    Ok(v) => Ok(Tok::Literal(v)),
                    Err(Loads::Unrepresentable(why)) => Err(unrepresentable(why, self.expr)),
                    Err(_) => Err(lexer_error(
                        self.expr,
                        start,
                        &format!("Bad token {lexeme}"),
                    )),
                }
            }
        }
    }

    fn consume_quoted_identifier(&mut self) -> Result<Tok, JmesError> {
        let start = self.pos;
        let lexeme = format!("\"{}\"", self.consume_until('"')?);
        match loads(&lexeme) {
            Ok(Value::String(s)) => Ok(Tok::QuotedIdentifier(s)),
            Ok(_) => Err(lexer_error(self.expr, start, "Invalid quoted identifier")),
            Err(Loads::ValueError(msg)) => Err(lexer_error(self.expr, start, &msg)),
            Err(Loads::Unrepresentable(why)) => Err(lexer_error(
                self.expr,
                start,
                &format!("Unsupported quoted identifier ({why})"),
            )),
            Err(Loads::TooDeep) => Err(lexer_error(self.expr, start, "Invalid quoted identifier")),
        }
    }
}
