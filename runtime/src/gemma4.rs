//! Gemma 4's tool-call argument dialect, turned into JSON text exactly as transformers does it.
//!
//! Gemma 4 writes arguments like `{location:<|"|>Paris<|"|>,days:3}`: bare keys, and strings
//! delimited by `<|"|>` instead of quotes. transformers' `_gemma4_json_to_json` rewrites that with
//! two regex substitutions and a placeholder round-trip, then hands the result to `json.loads`.
//! This is a literal port, odd cases included (unterminated delimiters, input that already
//! contains NUL bytes or placeholder-like text), so the JSON parser sees the very same text.

use crate::py::unicode::is_word;

/// The string delimiter Gemma 4 uses in place of `"`.
const QUOTE: &str = "<|\"|>";

/// transformers' `_gemma4_json_to_json`: Gemma 4's tool-call dialect to JSON text.
///
/// Steps, as in Python: (1) each `<|"|>…<|"|>` (shortest, across newlines, left to right) becomes
/// the placeholder `\x00{i}\x00`; (2) `re.sub(r"(?<=[{,])(\w+):", r'"\1":', text)` quotes bare keys;
/// (3) each placeholder `i`, in order, is replaced everywhere by `json.dumps` of its string.
///
/// ```
/// use chatparse_runtime::gemma4::gemma4_to_json;
/// assert_eq!(
///     gemma4_to_json(r#"{location:<|"|>Paris, France<|"|>,days:3,nested:{a:[1,2]}}"#),
///     r#"{"location":"Paris, France","days":3,"nested":{"a":[1,2]}}"#
/// );
/// assert_eq!(gemma4_to_json(r#"{q:<|"|>café "x"<|"|>}"#), r#"{"q":"caf\u00e9 \"x\""}"#);
/// ```
pub fn gemma4_to_json(text: &str) -> String {
    let (masked, strings) = capture_strings(text);
    let quoted = quote_bare_keys(&masked);
    if strings.is_empty() {
        return quoted;
    }
    if !text.contains('\0') {
        if let Some(out) = substitute_single_pass(&quoted, &strings) {
            return out;
        }
    }
    // The text holds NULs of its own, or digits glue two placeholders into a third
    // (`\x00{i}\x00` `7` `\x00{i+1}\x00` contains `\x007\x00`): only Python's sequence of
    // `str.replace` calls gives the right answer then.
    let mut out = quoted;
    for (i, s) in strings.iter().enumerate() {
        out = out.replace(&format!("\0{i}\0"), &json_dumps(s));
    }
    out
}

/// Step 3 in one left-to-right pass, when that provably equals the `str.replace` loop: the input
/// had no NUL (so every NUL belongs to one of our placeholders, each present once, in order) and
/// no placeholder is followed by digits and another placeholder (which would spell an extra,
/// overlapping placeholder). `None` when the second condition fails.
fn substitute_single_pass(quoted: &str, strings: &[&str]) -> Option<String> {
    let extra: usize = strings.iter().map(|s| s.len() + 2).sum();
    let mut out = String::with_capacity(quoted.len() + extra);
    let mut rest = quoted;
    while let Some(start) = rest.find('\0') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let s = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|i| strings.get(i))
            .filter(|_| after[digits..].starts_with('\0'))?;
        crate::py::json::write_ascii_string(s, &mut out);
        rest = &after[digits + 1..];
        let glue = rest.bytes().take_while(u8::is_ascii_digit).count();
        if glue > 0 && rest[glue..].starts_with('\0') {
            return None;
        }
    }
    out.push_str(rest);
    Some(out)
}

/// `re.sub(r'<\|"\|>(.*?)<\|"\|>', _capture, text, flags=re.DOTALL)`.
fn capture_strings(text: &str) -> (String, Vec<&str>) {
    let mut strings = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = find_quote(rest) {
        let inner_start = open + QUOTE.len();
        // The delimiter cannot overlap itself, so if this opener has no closer, no later one does.
        let Some(len) = find_quote(&rest[inner_start..]) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push('\0');
        push_decimal(&mut out, strings.len());
        out.push('\0');
        strings.push(&rest[inner_start..inner_start + len]);
        rest = &rest[inner_start + len + QUOTE.len()..];
    }
    out.push_str(rest);
    (out, strings)
}

/// The first `<|"|>` in `text`. Why not `str::find`: it sets up a two-way searcher per call
/// (about 270 instructions), several times per call's arguments; the delimiter starts with `<`,
/// which arguments rarely hold, so `memchr` and a comparison at each hit cost far less.
fn find_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'<', bytes).find(|&i| bytes[i..].starts_with(QUOTE.as_bytes()))
}

/// `n` in decimal, as `str(n)` writes it, without a temporary `String`.
fn push_decimal(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits[at..].iter().for_each(|&d| out.push(char::from(d)));
}

/// `re.sub(r"(?<=[{,])(\w+):", r'"\1":', text)` with Python's Unicode `\w`.
///
/// A match needs `{` or `,` right before it, then word characters, then `:`. Backtracking to a
/// shorter run cannot help (a shorter run is followed by a word character, not `:`), and a
/// failed position's successors start after a word character, so a single scan suffices.
fn quote_bare_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(pos) = memchr::memchr2(b'{', b',', rest.as_bytes()) {
        let (head, tail) = rest.split_at(pos + 1);
        out.push_str(head);
        let word_len: usize = tail
            .chars()
            .take_while(|&c| is_word(c))
            .map(char::len_utf8)
            .sum();
        if word_len > 0 && tail[word_len..].starts_with(':') {
            out.push('"');
            out.push_str(&tail[..word_len]);
            out.push_str("\":");
            rest = &tail[word_len + 1..];
        } else {
            out.push_str(&tail[..word_len]);
            rest = &tail[word_len..];
        }
    }
    out.push_str(rest);
    out
}

/// Python's `json.dumps(s)` for a str (`ensure_ascii=True`).
fn json_dumps(s: &str) -> String {
    let mut out = String::new();
    crate::py::json::write_ascii_string(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each pair: `(text, _gemma4_json_to_json(text))` from transformers 5.10.4 on CPython 3.11.
    const CASES: &[(&str, &str)] = &[
        ("{location:<|\"|>Paris, France<|\"|>,units:<|\"|>celsius<|\"|>,days:3,nested:{a:[1,2]}}", "{\"location\":\"Paris, France\",\"units\":\"celsius\",\"days\":3,\"nested\":{\"a\":[1,2]}}"),
        ("{}", "{}"),
        ("", ""),
        ("plain text", "plain text"),
        ("{a:1}", "{\"a\":1}"),
        ("{a:1,b:2}", "{\"a\":1,\"b\":2}"),
        ("{ a:1}", "{ a:1}"),
        ("{a :1}", "{a :1}"),
        ("{a:b:c}", "{\"a\":b:c}"),
        ("{,a:1}", "{,\"a\":1}"),
        ("{{a:1}}", "{{\"a\":1}}"),
        ("[{a:1},{b:2}]", "[{\"a\":1},{\"b\":2}]"),
        ("{a:<|\"|>x<|\"|>}", "{\"a\":\"x\"}"),
        ("{a:<|\"|><|\"|>}", "{\"a\":\"\"}"),
        ("{a:<|\"|>unterminated}", "{\"a\":<|\"|>unterminated}"),
        ("{a:<|\"|>one<|\"|>,b:<|\"|>two}", "{\"a\":\"one\",\"b\":<|\"|>two}"),
        ("{text:<|\"|>line1\nline2\t\"quoted\" \\ back<|\"|>}", "{\"text\":\"line1\\nline2\\t\\\"quoted\\\" \\\\ back\"}"),
        ("{q:<|\"|>café ☕ 😀 \u{7f}\u{1}<|\"|>}", "{\"q\":\"caf\\u00e9 \\u2615 \\ud83d\\ude00 \\u007f\\u0001\"}"),
        ("{key:<|\"|>a,b:c<|\"|>}", "{\"key\":\"a,b:c\"}"),
        ("{key:<|\"|>{x:1}<|\"|>}", "{\"key\":\"{x:1}\"}"),
        ("{é:1,ü_2:2,日本:3,a-b:4,1x:5,_:6}", "{\"é\":1,\"ü_2\":2,\"日本\":3,a-b:4,\"1x\":5,\"_\":6}"),
        ("{x²:1,á:2}", "{\"x²\":1,á:2}"),
        ("{a:\u{0}0\u{0}}", "{\"a\":\u{0}0\u{0}}"),
        ("{a:<|\"|>s<|\"|>,b:\u{0}0\u{0}}", "{\"a\":\"s\",\"b\":\"s\"}"),
        ("\u{0}1\u{0}<|\"|>a<|\"|><|\"|>b<|\"|>", "\"b\"\"a\"\"b\""),
        ("\u{0}\u{0}0\u{0}1\u{0}<|\"|>p<|\"|><|\"|>q<|\"|>", "\u{0}\"p\"1\u{0}\"p\"\"q\""),
        ("{a:<|\"|>\u{0}<|\"|>}", "{\"a\":\"\\u0000\"}"),
        ("<|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|><|\"|>a<|\"|>", "\"a\"\"a\"\"a\"\"a\"\"a\"\"a\"\"a\"\"a\"\"a\"\"a\"\"a\"\"a\""),
        ("{a:<|\"|>x<|\"|>:1}", "{\"a\":\"x\":1}"),
        ("{<|\"|>k<|\"|>:1}", "{\"k\":1}"),
        ("{name:<|\"|>get_weather<|\"|>,arguments:{city:<|\"|>Tokyo<|\"|>,dates:[<|\"|>2025-01-01<|\"|>,<|\"|>2025-01-02<|\"|>]}}", "{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Tokyo\",\"dates\":[\"2025-01-01\",\"2025-01-02\"]}}"),
        ("{a:1,\nb:2}", "{\"a\":1,\nb:2}"),
        ("{a:true,b:null,c:-1.5e3}", "{\"a\":true,\"b\":null,\"c\":-1.5e3}"),
        ("<|\"|><|\"|><|\"|>", "\"\"<|\"|>"),
        ("<|<|\"|>\"|>", "<|<|\"|>\"|>"),
        // Digits between two captured strings spell an extra placeholder.
        (
            "<|\"|><|\"|><|\"|><|\"|><|\"|><|\"|>0<|\"|><|\"|>",
            "\"\"\"\"\u{0}2\"\"3\u{0}",
        ),
        (
            "{a:<|\"|>x<|\"|>1<|\"|>y<|\"|>,b:<|\"|>z<|\"|>}",
            "{\"a\":\"x\"1\"y\",\"b\":\"z\"}",
        ),
        ("<|\"|>a<|\"|>12<|\"|>b<|\"|>", "\"a\"12\"b\""),
    ];

    #[test]
    fn matches_transformers() {
        for (input, expected) in CASES {
            assert_eq!(gemma4_to_json(input), *expected, "{input:?}");
        }
    }

    #[test]
    fn placeholders_count_past_nine() {
        // Python's str(i) for each placeholder index: 10 and up take two digits.
        for n in [0, 7, 9, 10, 11, 99, 100, 12345, usize::MAX] {
            let mut out = String::new();
            push_decimal(&mut out, n);
            assert_eq!(out, n.to_string());
        }
    }

    #[test]
    fn json_dumps_matches_python() {
        // json.dumps('a"\\\n\r\t\b\f\x00\x1f\x7fé€😀 ~')
        assert_eq!(
            json_dumps("a\"\\\n\r\t\u{8}\u{c}\0\u{1f}\u{7f}é€😀 ~"),
            r#""a\"\\\n\r\t\b\f\u0000\u001f\u007f\u00e9\u20ac\ud83d\ude00 ~""#
        );
    }

    /// The obvious (quadratic) reading of step 3, for comparison with the single pass.
    fn literal_port(text: &str) -> String {
        let (masked, strings) = capture_strings(text);
        let mut out = quote_bare_keys(&masked);
        for (i, s) in strings.iter().enumerate() {
            out = out.replace(&format!("\0{i}\0"), &json_dumps(s));
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn single_pass_equals_replace_loop(s in r#"(<\|"\|>|[{},:a-z0-9_ "\\é\n\x00]|[0-9]<\|"\|>){0,40}"#) {
            prop_assert_eq!(gemma4_to_json(&s), literal_port(&s));
        }

        #[test]
        fn never_panics(s in any::<String>()) {
            let _ = gemma4_to_json(&s);
        }
    }
}
