//! String helpers of the differential analysis: common prefixes and suffixes that never split a
//! marker (`<…>`, `[…]`), trimming, and Python-regex literals.

/// Byte length of the common prefix of `a` and `b` (on character boundaries).
pub fn common_prefix_len(a: &str, b: &str) -> usize {
    let mut n = 0;
    for ((i, x), y) in a.char_indices().zip(b.chars()) {
        if x != y {
            return i;
        }
        n = i + x.len_utf8();
    }
    n
}

/// Byte length of the common suffix of `a` and `b` (on character boundaries).
pub fn common_suffix_len(a: &str, b: &str) -> usize {
    let mut n = 0;
    for (x, y) in a.chars().rev().zip(b.chars().rev()) {
        if x != y {
            break;
        }
        n += x.len_utf8();
    }
    n
}

/// The longest start of `s` that is at most `max` bytes long and ends on a character boundary
/// (for quoting a piece of rendered text in a message: byte slicing may cut inside a character).
pub fn head(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn opens(c: char) -> bool {
    c == '<' || c == '['
}

fn closes(c: char) -> bool {
    c == '>' || c == ']'
}

/// The common prefix of `a` and `b`, cut back so that it does not end inside a marker (an opened
/// `<` or `[` that it does not close).
pub fn marker_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let n = common_prefix_len(a, b);
    let p = &a[..n];
    // An unclosed opener in the prefix: cut before it, unless the next characters of both
    // strings would close it identically (they do not, or the prefix would be longer).
    let last_open = p.rfind(opens);
    let last_close = p.rfind(closes);
    match (last_open, last_close) {
        (Some(o), Some(c)) if o > c => &p[..o],
        (Some(o), None) => &p[..o],
        _ => p,
    }
}

/// The common suffix of `a` and `b`, cut so that it does not begin inside a marker.
pub fn marker_suffix<'a>(a: &'a str, b: &str) -> &'a str {
    let n = common_suffix_len(a, b);
    let s = &a[a.len() - n..];
    let first_open = s.find(opens);
    let first_close = s.find(closes);
    match (first_open, first_close) {
        (Some(o), Some(c)) if c < o => &s[c + 1..],
        (None, Some(c)) => &s[c + 1..],
        _ => s,
    }
}

/// The first marker of `s` (after leading whitespace) with what precedes it, or the whole of
/// `s` when it has none: `"\n</think>\n\nHi"` → `"\n</think>"`.
pub fn first_marker(s: &str) -> &str {
    let t = s.trim_start();
    let lead = s.len() - t.len();
    if let Some(c) = t.chars().next() {
        if opens(c) {
            let close = if c == '<' { '>' } else { ']' };
            if let Some(end) = t.find(close) {
                return &s[..lead + end + 1];
            }
        }
    }
    s
}

/// Whitespace-trimmed.
pub fn trim(s: &str) -> &str {
    s.trim()
}

/// `s` as a Python regex literal; whitespace runs become `\s*` (templates and models vary in
/// the whitespace between markers).
pub fn lit(s: &str) -> String {
    let mut out = String::new();
    let mut in_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push_str("\\s*");
            }
            in_space = true;
            continue;
        }
        in_space = false;
        push_escaped(&mut out, c);
    }
    out
}

/// `s` as an exact Python regex literal (whitespace kept, escaped).
pub fn exact(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            _ => push_escaped(&mut out, c),
        }
    }
    out
}

/// `s` where its leading and trailing whitespace is optional (exact otherwise): for delimiters
/// next to argument values, whose own whitespace must survive.
pub fn exact_soft(s: &str) -> String {
    let core = s.trim();
    let lead = &s[..s.len() - s.trim_start().len()];
    let tail = &s[s.trim_end().len()..];
    let mut out = String::new();
    if !lead.is_empty() {
        out.push_str(&format!("(?:{})?", exact(lead)));
    }
    out.push_str(&exact(core));
    if !tail.is_empty() && !core.is_empty() {
        out.push_str(&format!("(?:{})?", exact(tail)));
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    if ".^$*+?{}[]\\|()".contains(c) {
        out.push('\\');
    }
    out.push(c);
}

/// A regex alternation of `alts` (each already a regex), `(?:a|b)`; the empty string when none.
pub fn alt(alts: &[String]) -> String {
    let mut v: Vec<&String> = alts.iter().filter(|a| !a.is_empty()).collect();
    v.sort_by_key(|a| std::cmp::Reverse(a.len()));
    v.dedup();
    if v.is_empty() {
        return String::new();
    }
    format!(
        "(?:{})",
        v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("|")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_end_on_character_boundaries() {
        // '｜' is bytes 2..5: a cut at 3 or 4 falls back to 2.
        assert_eq!(head("ab｜c", 3), "ab");
        assert_eq!(head("ab｜c", 4), "ab");
        assert_eq!(head("ab｜c", 5), "ab｜");
        assert_eq!(head("ab｜c", 80), "ab｜c");
        assert_eq!(head("", 80), "");
    }

    #[test]
    fn markers_are_not_split() {
        assert_eq!(
            marker_prefix(
                "<|END_THINKING|><|START_ACTION|>",
                "<|END_THINKING|><|START_RESPONSE|>"
            ),
            "<|END_THINKING|>"
        );
        assert_eq!(
            marker_suffix(">\n<parameter=", "</parameter>\n<parameter="),
            "\n<parameter="
        );
        assert_eq!(first_marker("\n</think>\n\nHi"), "\n</think>");
        assert_eq!(lit("<|a|>\n x"), "<\\|a\\|>\\s*x");
        assert_eq!(exact_soft("\n</p>"), "(?:\\n)?</p>");
    }
}
