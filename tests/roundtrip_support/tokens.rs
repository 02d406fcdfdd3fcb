//! Token-like chunks of a model output, as a tokenizer hands them to a streaming parser: each
//! special token of the family one chunk, words with their leading space, whitespace runs, and
//! other characters one at a time. Shared by the streamed template round trips
//! (`tests/roundtrip_support/streamed.rs`) and the streaming bench (`benches/stream.rs`, which
//! includes this file by path), so both chunk the same way.

use chatparse::runtime::Spec;

/// The literals a family's stream looks for, as a tokenizer's special tokens: the stream
/// profile's reasoning openers, header and closers, content openers and markers (empty for the
/// families without a profile; [`special_token_at`] finds their tokens by shape).
pub fn profile_tokens(spec: &Spec) -> Vec<String> {
    let Some(profile) = spec.stream_profile() else {
        return Vec::new();
    };
    let mut tokens: Vec<String> = Vec::new();
    if let Some(r) = &profile.reasoning {
        tokens.extend(r.open.iter().cloned());
        tokens.extend(r.header.iter().cloned());
        tokens.extend(r.close.iter().cloned());
    }
    if let Some(c) = &profile.content {
        tokens.extend(c.open.iter().cloned());
    }
    tokens.extend(profile.markers.iter().cloned());
    tokens.retain(|t| !t.is_empty());
    tokens.sort();
    tokens.dedup();
    tokens
}

/// The length of the special token starting at `text[at..]`, if one does: the longest of the
/// family's literals ([`profile_tokens`]) and of the special-token shapes of the templates,
/// `<name>`, `</name>`, `<|name|>`, `<|name>`, `<name|>` (`name`: 1 to 80 bytes of anything but
/// whitespace, `<`, `>`, `|` and `=`: `<tool_call>`, `</think>`, `<seed:think>`, `<|im_end|>`,
/// `<|"|>`, `<turn|>`, `<｜tool▁sep｜>`; not `<function=f>`) and `[NAME]` in capitals
/// (`[TOOL_CALLS]`, `[ARGS]`).
pub fn special_token_at(text: &str, at: usize, literals: &[String]) -> Option<usize> {
    let rest = &text[at..];
    let literal = literals
        .iter()
        .filter(|t| rest.starts_with(t.as_str()))
        .map(String::len)
        .max();
    let tag = rest.strip_prefix('<').and_then(|body| {
        let name = body
            .strip_prefix('|')
            .or_else(|| body.strip_prefix('/'))
            .unwrap_or(body);
        let len: usize = name
            .chars()
            .take_while(|&c| !c.is_whitespace() && !matches!(c, '<' | '>' | '|' | '='))
            .map(char::len_utf8)
            .sum();
        let after = &name[len..];
        let close = if after.starts_with("|>") {
            2
        } else if after.starts_with('>') {
            1
        } else {
            return None;
        };
        (len > 0 && len <= 80).then_some(1 + (body.len() - name.len()) + len + close)
    });
    let bracket = rest.strip_prefix('[').and_then(|body| {
        let len = body
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
            .count();
        (len > 0 && body[len..].starts_with(']')).then_some(len + 2)
    });
    [literal, tag, bracket].into_iter().flatten().max()
}

/// Token-like chunks, as a tokenizer would hand them out: each special token one chunk
/// ([`special_token_at`]), and between them words with their leading space (` Paris`), runs of
/// other whitespace, and each other character on its own (`{`, `"`, `:`, an emoji). Returns the
/// chunks' ends and how many special tokens were found.
pub fn token_cuts(text: &str, literals: &[String]) -> (Vec<usize>, usize) {
    let mut cuts = Vec::new();
    let mut specials = 0;
    let mut at = 0;
    let special = |i: usize| -> Option<usize> {
        text.is_char_boundary(i)
            .then(|| special_token_at(text, i, literals))
            .flatten()
    };
    let char_at = |i: usize| text[i..].chars().next();
    while at < text.len() {
        if let Some(len) = special(at) {
            specials += 1;
            at += len;
            cuts.push(at);
            continue;
        }
        let Some(c) = char_at(at) else { break };
        let mut end = at + c.len_utf8();
        let word = |ch: char| ch.is_alphanumeric() || ch == '_';
        let extend_word = |mut end: usize| {
            while let Some(ch) = char_at(end) {
                if !word(ch) || special(end).is_some() {
                    break;
                }
                end += ch.len_utf8();
            }
            end
        };
        // A word, or a space and the word it starts.
        let space_word = c == ' ' && char_at(end).is_some_and(word) && special(end).is_none();
        if word(c) || space_word {
            end = extend_word(end);
        } else if c.is_whitespace() {
            while let Some(ch) = char_at(end) {
                if !ch.is_whitespace() || special(end).is_some() {
                    break;
                }
                // A single space before a word goes with the word.
                if ch == ' ' && char_at(end + 1).is_some_and(word) && special(end + 1).is_none() {
                    break;
                }
                end += ch.len_utf8();
            }
        }
        at = end;
        cuts.push(at);
    }
    (cuts, specials)
}
