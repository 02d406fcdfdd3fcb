//! Every expectation here was produced by python3 3.11 (`re` with `re.DOTALL`); offsets are
//! UTF-8 byte offsets (Python's code point offsets converted).

use super::*;

mod crosscheck;

/// One row of the generated cross-check table.
pub(super) struct Case {
    pub pattern: &'static str,
    pub hay: &'static str,
    pub search: Option<&'static [Option<(usize, usize)>]>,
    pub finditer: &'static [&'static [Option<(usize, usize)>]],
    pub template: &'static str,
    pub sub: &'static str,
}

type Spans = Vec<Option<(usize, usize)>>;

fn spans(c: &Captures<'_>) -> Spans {
    (0..c.len()).map(|i| c.span(i)).collect()
}

fn re(p: &str) -> PyRegex {
    match PyRegex::new(p) {
        Ok(r) => r,
        Err(e) => panic!("{p:?} failed to compile: {e}"),
    }
}

fn search(p: &str, h: &str) -> Option<Spans> {
    re(p).search(h).unwrap().map(|m| spans(&m))
}

fn search0(p: &str, h: &str) -> Option<(usize, usize)> {
    re(p).search(h).unwrap().and_then(|m| m.span(0))
}

fn finditer(p: &str, h: &str) -> Vec<(usize, usize)> {
    re(p)
        .find_iter(h)
        .map(|m| m.unwrap().span(0).unwrap())
        .collect()
}

fn sub(p: &str, t: &str, h: &str) -> String {
    let r = re(p);
    let rep = Replacement::parse(t, &r).unwrap();
    r.sub(&rep, h).unwrap()
}

fn err(p: &str) -> RegexError {
    match PyRegex::new(p) {
        Ok(_) => panic!("{p:?} compiled"),
        Err(e) => e,
    }
}

fn sub_err(p: &str, t: &str) -> RegexError {
    match Replacement::parse(t, &re(p)) {
        Ok(_) => panic!("{t:?} parsed"),
        Err(e) => e,
    }
}

#[test]
fn crosscheck_table_matches_python() {
    let mut failures = Vec::new();
    for c in crosscheck::CASES {
        let r = re(c.pattern);
        let got = r.search(c.hay).unwrap().map(|m| spans(&m));
        if got.as_deref() != c.search {
            failures.push(format!("search {:?} on {:?}: {got:?}", c.pattern, c.hay));
        }
        let all: Vec<Spans> = r.find_iter(c.hay).map(|m| spans(&m.unwrap())).collect();
        let want: Vec<Spans> = c.finditer.iter().map(|s| s.to_vec()).collect();
        if all != want {
            failures.push(format!("finditer {:?} on {:?}: {all:?}", c.pattern, c.hay));
        }
        let rep = Replacement::parse(c.template, &r).unwrap();
        let out = r.sub(&rep, c.hay).unwrap();
        if out != c.sub {
            failures.push(format!(
                "sub {:?} {:?} on {:?}: {out:?}",
                c.pattern, c.template, c.hay
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same table with every pattern the backtracking matcher supports forced onto it.
#[test]
fn crosscheck_table_on_backtracker() {
    let mut failures = Vec::new();
    let mut covered = 0;
    for c in crosscheck::CASES {
        let mut r = re(c.pattern);
        if !r.force_backtrack() {
            continue;
        }
        covered += 1;
        let got = r.search(c.hay).unwrap().map(|m| spans(&m));
        if got.as_deref() != c.search {
            failures.push(format!("search {:?} on {:?}: {got:?}", c.pattern, c.hay));
        }
        let all: Vec<Spans> = r.find_iter(c.hay).map(|m| spans(&m.unwrap())).collect();
        let want: Vec<Spans> = c.finditer.iter().map(|s| s.to_vec()).collect();
        if all != want {
            failures.push(format!("finditer {:?} on {:?}: {all:?}", c.pattern, c.hay));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 3,458 of the 3,572 cases when this was written: the rest use backreferences,
    // conditionals, possessive or atomic groups, or ignore case
    assert!(covered > 3300, "only {covered} cases reach the backtracker");
}

#[test]
fn crosscheck_errors_match_python() {
    for &(p, msg, pos) in crosscheck::ERRORS {
        let e = err(p);
        assert_eq!((e.message.as_str(), e.offset), (msg, pos), "{p:?}");
        assert!(!e.fix.is_empty(), "{p:?}");
    }
}

#[test]
fn dollar_before_final_newline() {
    // python3: re.search(r'(.*?)(?:<\|end\|>|$)', 'hi\n', re.S) -> span (0, 2), group 1 (0, 2)
    let p = r"(.*?)(?:<\|end\|>|$)";
    assert_eq!(search(p, "hi\n"), Some(vec![Some((0, 2)), Some((0, 2))]));
    assert_eq!(re(p).translation().engine, Engine::Regex);
    // python3: [m.span() for m in re.finditer(p, 'hi\n', re.S)]
    //   -> [(0, 2), (2, 2), (2, 3), (3, 3)]
    assert_eq!(finditer(p, "hi\n"), [(0, 2), (2, 2), (2, 3), (3, 3)]);
    // python3: re.sub('$', '-', 'a\n') -> 'a-\n-'
    assert_eq!(sub("$", "-", "a\n"), "a-\n-");
    // python3: re.sub('a$', 'X', 'a\n') -> 'X\n'; re.search('(a$)', 'a\n').span(1) -> (0, 1)
    assert_eq!(sub("a$", "X", "a\n"), "X\n");
    assert_eq!(
        search("(a$)", "a\n"),
        Some(vec![Some((0, 1)), Some((0, 1))])
    );
    // python3: [m.span() for m in re.finditer(r'\s*$', 'a \n')] -> [(1, 3), (3, 3)]
    assert_eq!(finditer(r"\s*$", "a \n"), [(1, 3), (3, 3)]);
    // python3: [m.span() for m in re.finditer(r'(?:x$)??', 'x\n')]
    //   -> [(0, 0), (0, 1), (1, 1), (2, 2)]
    assert_eq!(
        finditer(r"(?:x$)??", "x\n"),
        [(0, 0), (0, 1), (1, 1), (2, 2)]
    );
    // A `$` that is not in tail position needs the look-ahead (fancy-regex).
    assert_eq!(re(r"$\n").translation().engine, Engine::Fancy);
    // python3: re.search(r'a$\n', 'a\n').span() -> (0, 2)
    assert_eq!(search0(r"a$\n", "a\n"), Some((0, 2)));
}

#[test]
fn anchors() {
    // python3: re.search(r'a\Z', 'a\n') -> None; re.search(r'\Aa', 'ba') -> None
    assert_eq!(search0(r"a\Z", "a\n"), None);
    assert_eq!(search0(r"\Aa", "ba"), None);
    // python3: re.sub('(?m)^', '>', 'a\nb\n') -> '>a\n>b\n>'
    assert_eq!(sub("(?m)^", ">", "a\nb\n"), ">a\n>b\n>");
    // python3: re.sub('(?m)$', '<', 'a\nb\n') -> 'a<\nb<\n<'
    assert_eq!(sub("(?m)$", "<", "a\nb\n"), "a<\nb<\n<");
    // python3: re.search('^b', 'a\nb') -> None (no MULTILINE)
    assert_eq!(search0("^b", "a\nb"), None);
}

/// A pattern whose every match starts at the text's start answers "none" from any later
/// position without searching (`text_start_only`); `re.sub` and `re.finditer` search again there.
#[test]
fn matches_anchored_at_the_start_are_found_once() {
    // python3: re.sub('^a', 'b', 'aa') -> 'ba'
    assert_eq!(sub("^a", "b", "aa"), "ba");
    // python3: [m.span() for m in re.finditer(r'\Aa|^b', 'abab')] -> [(0, 1)]
    assert_eq!(finditer(r"\Aa|^b", "abab"), vec![(0, 1)]);
    // python3: [m.span() for m in re.finditer('^', 'xy')] -> [(0, 0)]
    assert_eq!(finditer("^", "xy"), vec![(0, 0)]);
    // python3: re.sub(r'^\s*', '>', '  x') -> '>x'
    assert_eq!(sub(r"^\s*", ">", "  x"), ">x");
    // Not anchored: python3: [m.span() for m in re.finditer('(?m)^a', 'a\na')] -> [(0, 1), (2, 3)]
    assert_eq!(finditer("(?m)^a", "a\na"), vec![(0, 1), (2, 3)]);
    assert!(re("^a|^b").text_start_only && !re("(?m)^a").text_start_only);
    assert!(!re("a|^b").text_start_only && !re("(?:^a)?b").text_start_only);
}

#[test]
fn empty_match_rules() {
    // python3: re.sub('x*', '-', 'abxd') -> '-a-b--d-'
    assert_eq!(sub("x*", "-", "abxd"), "-a-b--d-");
    // python3: [m.span() for m in re.finditer('a??', 'a')] -> [(0, 0), (0, 1), (1, 1)]
    assert_eq!(finditer("a??", "a"), [(0, 0), (0, 1), (1, 1)]);
    // python3: [m.span() for m in re.finditer('', 'ab')] -> [(0, 0), (1, 1), (2, 2)]
    assert_eq!(finditer("", "ab"), [(0, 0), (1, 1), (2, 2)]);
    // python3: [m.span() for m in re.finditer('|a', 'a')] -> [(0, 0), (0, 1), (1, 1)]
    assert_eq!(finditer("|a", "a"), [(0, 0), (0, 1), (1, 1)]);
    // python3: [m.span() for m in re.finditer('', 'é')] -> [(0, 0), (1, 1)] (bytes: 0, 2)
    assert_eq!(finditer("", "é"), [(0, 0), (2, 2)]);
}

#[test]
fn python_unicode_classes() {
    // python3: [m.span() for m in re.finditer(r'\w', 'a\u0301\u00b2_')] -> [(0,1), (2,3), (3,4)]
    // (U+0301 is a word char for Rust, not for Python; byte offsets below)
    assert_eq!(finditer(r"\w", "a\u{301}\u{b2}_"), [(0, 1), (3, 5), (5, 6)]);
    // python3: [m.span() for m in re.finditer(r'\s', '\x1c\x1f \u200b\u3000\x85')]
    //   -> [(0,1), (1,2), (2,3), (4,5), (5,6)]
    assert_eq!(
        finditer(r"\s", "\x1c\x1f \u{200b}\u{3000}\u{85}"),
        [(0, 1), (1, 2), (2, 3), (6, 9), (9, 11)]
    );
    // python3: [m.span() for m in re.finditer(r'\d', '1\u00b2\u0663\u00bd')] -> [(0,1), (2,3)]
    assert_eq!(finditer(r"\d", "1\u{b2}\u{663}\u{bd}"), [(0, 1), (3, 5)]);
    // python3: re.search(r'\bb', 'a\u0301b').span() -> (2, 3)
    assert_eq!(search0(r"\bb", "a\u{301}b"), Some((3, 4)));
    // python3: re.search(r'[^\W\d]+', '\u0663a\u0663é_1').span() -> (1, 2)
    assert_eq!(search0(r"[^\W\d]+", "\u{663}a\u{663}é_1"), Some((2, 3)));
    // python3: re.search(r'(?a)\w+', 'é_a1').span() -> (1, 4)
    assert_eq!(search0(r"(?a)\w+", "é_a1"), Some((2, 5)));
}

#[test]
fn literal_traps() {
    // python3: re.search(r'\<a\>', '<a>').span() -> (0, 3)
    assert_eq!(search0(r"\<a\>", "<a>"), Some((0, 3)));
    // python3: re.search('a{,2}', 'aaa').span() -> (0, 2); 'a{,}' -> (0, 3); 'a{' on 'a{' -> (0, 2)
    assert_eq!(search0("a{,2}", "aaa"), Some((0, 2)));
    assert_eq!(search0("a{,}", "aaa"), Some((0, 3)));
    assert_eq!(search0("a{", "a{"), Some((0, 2)));
    assert_eq!(search0("a{1,2", "a{1,2"), Some((0, 5)));
    assert!(re("a{,2}").translation().rust_pattern.contains("{0,2}"));
    // python3: re.search(r'[\b]', 'a\x08').span() -> (1, 2)
    assert_eq!(search0(r"[\b]", "a\x08"), Some((1, 2)));
    // python3: re.search(r'[]a]+', ']a').span() -> (0, 2); r'[^]a]' on ']ab' -> (2, 3)
    assert_eq!(search0(r"[]a]+", "]a"), Some((0, 2)));
    assert_eq!(search0(r"[^]a]", "]ab"), Some((2, 3)));
    // python3: re.search(r'[a&&b]+', 'x&ab').span() -> (1, 4); r'[[]' on 'a[' -> (1, 2)
    assert_eq!(search0(r"[a&&b]+", "x&ab"), Some((1, 4)));
    assert_eq!(search0(r"[[]", "a["), Some((1, 2)));
    // python3: re.search('(?x)a b # c\n c', 'abc').span() -> (0, 3)
    assert_eq!(search0("(?x)a b # c\n c", "abc"), Some((0, 3)));
    // python3: re.search(r'(?x)[ ]a', ' a').span() -> (0, 2)
    assert_eq!(search0(r"(?x)[ ]a", " a"), Some((0, 2)));
    // python3: re.search(r'\x41\u00e9\U0001F600\0\101', 'Aé😀\x00A').span() -> (0, 5)
    assert_eq!(
        search0(r"\x41\u00e9\U0001F600\0\101", "Aé😀\x00A"),
        Some((0, 9))
    );
    // python3: re.search('.', '\n').span() -> (0, 1) with DOTALL; '(?-s:.)' -> None
    assert_eq!(search0(".", "\n"), Some((0, 1)));
    assert_eq!(search0("(?-s:.)", "\n"), None);
}

#[test]
fn groups_and_engines() {
    assert_eq!(re(r"(.*?)</s>").translation().engine, Engine::Regex);
    assert_eq!(re(r"(?a)\bx\b").translation().engine, Engine::Regex);
    for p in [
        r"\bx",
        r"\Bx",
        r"(?=a)",
        r"(?<!a)b",
        r"(a)\1",
        r"(?>a)",
        "a*+",
        r"(a)?(?(1)b|c)",
    ] {
        assert_eq!(re(p).translation().engine, Engine::Fancy, "{p}");
    }
    let r = re(r"(?P<first>a)(b)(?P<third>c)?");
    assert_eq!(r.group_count(), 3);
    assert!(r.has_named_groups());
    assert_eq!(r.group_index("third"), Some(3));
    assert_eq!(
        r.group_names(),
        [Some("first".to_string()), None, Some("third".to_string())]
    );
    let m = r.search("xab").unwrap().unwrap();
    assert_eq!(
        (m.get(0), m.get(1), m.get(2), m.get(3)),
        (Some("ab"), Some("a"), Some("b"), None)
    );
    assert_eq!((m.start(), m.end(), m.as_str(), m.len()), (1, 3, "ab", 4));
    assert!(!re("a").translation().can_match_empty && re("a*").translation().can_match_empty);
    // python3: re.search(r'(?P<x>a)(?P=x)', 'aab').span() -> (0, 2)
    assert_eq!(search0(r"(?P<x>a)(?P=x)", "aab"), Some((0, 2)));
    // python3: re.search(r'(?<=ab|cd)e', 'cde').span() -> (2, 3)
    assert_eq!(search0(r"(?<=ab|cd)e", "cde"), Some((2, 3)));
    // python3: re.search(r'a++a', 'aaa') -> None; re.search(r'(?>a+)b', 'aab').span() -> (0, 3)
    assert_eq!(search0(r"a++a", "aaa"), None);
    assert_eq!(search0(r"(?>a+)b", "aab"), Some((0, 3)));
    // python3: [m.group() for m in re.finditer(r'(a)?(?(1)b|c)', 'abc ac')] -> ['ab', 'c', 'c']
    let got: Vec<String> = re(r"(a)?(?(1)b|c)")
        .find_iter("abc ac")
        .map(|m| m.unwrap().as_str().to_string())
        .collect();
    assert_eq!(got, ["ab", "c", "c"]);
}

#[test]
fn ignorecase() {
    // python3: re.search('(?i)k', '\u212a') matches; re.search('(?ai)k', '\u212a') -> None
    assert_eq!(search0("(?i)k", "\u{212a}"), Some((0, 3)));
    assert_eq!(search0("(?ai)k", "\u{212a}"), None);
    // python3: [m.span() for m in re.finditer('(?i)i', 'iI\u0130\u0131')] -> 4 matches
    assert_eq!(finditer("(?i)i", "iI\u{130}\u{131}").len(), 4);
    assert_eq!(finditer("(?i)[h-j]", "iI\u{130}\u{131}").len(), 4);
    // python3: re.search('(?i)(a)\\1', 'aA').span() -> (0, 2)
    assert_eq!(search0(r"(?i)(a)\1", "aA"), Some((0, 2)));
    // python3: re.search('(?i)[^a]', 'Ab').span() -> (1, 2)
    assert_eq!(search0("(?i)[^a]", "Ab"), Some((1, 2)));
}

#[test]
fn templates() {
    // python3: re.sub('a', r'\n\t\r\f\v\a\b\\', 'a') -> '\n\t\r\x0c\x0b\x07\x08\\'
    assert_eq!(
        sub("a", r"\n\t\r\f\v\a\b\\", "a"),
        "\n\t\r\x0c\x0b\x07\x08\\"
    );
    // python3: re.sub('a', r'\0\012\101\-', 'a') -> '\x00\nA\\-'
    assert_eq!(sub("a", r"\0\012\101\-", "a"), "\x00\nA\\-");
    // python3: re.sub(r'(a)|b', r'[\1]', 'ab') -> '[a][]' (non-participating group is '')
    assert_eq!(sub(r"(a)|b", r"[\1]", "ab"), "[a][]");
    // python3: re.sub(r'(?P<x>a)(b)', r'\g<x>\g<2>\g<0>\2', 'ab') -> 'ababb'
    assert_eq!(sub(r"(?P<x>a)(b)", r"\g<x>\g<2>\g<0>\2", "ab"), "ababb");
    // python3: re.sub('(a)', r'\g< 1>', 'a') -> 'a' (int() accepts spaces)
    assert_eq!(sub("(a)", r"\g< 1>", "a"), "a");
    let r = re(r"(a)\s*$");
    assert_eq!(
        Replacement::parse(r"<\1>", &r)
            .unwrap()
            .expand(&r.search("a \n").unwrap().unwrap()),
        "<a>"
    );
    // python3 errors (re.error msg / IndexError text):
    assert_eq!(sub_err("a", r"\q").message, r"bad escape \q");
    assert_eq!(sub_err("(a)", r"\2").message, "invalid group reference 2");
    assert_eq!(
        sub_err("(a)", r"\g<2>").message,
        "invalid group reference 2"
    );
    assert_eq!(sub_err("(a)", r"\g<y>").message, "unknown group name 'y'");
    assert_eq!(
        sub_err("(a)", r"\g<-1>").message,
        "bad character in group name '-1'"
    );
    assert_eq!(sub_err("(a)", r"\g1").message, "missing <");
    assert_eq!(
        sub_err("(a)", r"\g<1").message,
        "missing >, unterminated name"
    );
    assert_eq!(sub_err("(a)", "\\").message, "bad escape (end of pattern)");
    assert_eq!(
        sub_err("(a)", r"\400").message,
        r"octal escape value \400 outside of range 0-0o377"
    );
    assert_eq!(sub_err("(a)", r"\u0041").message, r"bad escape \u");
}

#[test]
fn malformed_patterns() {
    // (pattern, python3 re.error msg, pos)
    let cases = [
        ("(", "missing ), unterminated subpattern", Some(0)),
        (")", "unbalanced parenthesis", Some(0)),
        ("[a", "unterminated character set", Some(0)),
        ("a**", "multiple repeat", Some(2)),
        ("(?<=a+)b", "look-behind requires fixed-width pattern", None),
        (r"\q", r"bad escape \q", Some(0)),
        ("(?P<1>x)", "bad character in group name '1'", Some(4)),
        ("*", "nothing to repeat", Some(0)),
        (
            "a(?i)",
            "global flags not at the start of the expression",
            Some(1),
        ),
        ("[z-a]", "bad character range z-a", Some(1)),
        (
            "(?L)a",
            "bad inline flags: cannot use 'L' flag with a str pattern",
            Some(3),
        ),
    ];
    for (p, msg, pos) in cases {
        let e = err(p);
        assert_eq!((e.message.as_str(), e.offset), (msg, pos), "{p}");
    }
    assert!(err("a**").fix.contains("(?:"));
}

#[test]
fn rejected_features_explain_themselves() {
    let e = err(r"\N{EM DASH}");
    assert!(e.fix.contains("\\uXXXX"), "{e}");
    assert!(err("(?t)a").message.contains("TEMPLATE"));
    assert!(err(r"(?ai)(a)\1").message.contains("ASCII"));
    // python3: re.search('(a|)+', 'aa').span(1) -> (2, 2), but Rust engines report (1, 2)
    assert!(err("(a|)+").message.contains("capture group"));
    // python3: re.search('(?:b|a??)*', 'ba').span() -> (0, 1); the regex crate says (0, 2)
    assert!(err("(?:b|a??)*").message.contains("empty"));
    // Nesting is bounded, never a stack overflow.
    let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
    assert!(err(&deep).message.contains("nests"));
    let deep = format!("(a){}{}", "(?(1)".repeat(5000), ")".repeat(5000));
    assert!(err(&deep).message.contains("nests"));
}

#[test]
fn runtime_errors_are_errors() {
    let r = PyRegex::with_backtrack_limit(r"^(a|aa)*\1c", 100_000).unwrap();
    // The `c` keeps the required-literal shortcut (no `c`, no match) out of the way.
    let hay = format!("{}dc", "a".repeat(40));
    // python3 would take very long here; we must stop with a MatchError, not hang or panic.
    let res = r.search(&hay);
    assert!(res.is_err(), "{res:?}");
}

#[test]
fn no_panics_on_odd_input() {
    for p in [
        "",
        "\\",
        "(?",
        "(?P<",
        "[",
        "[^",
        "\u{0}",
        "(?x)#",
        "a{99999999999}",
        r"\ud800",
        r"[\ud800-\udfff]",
    ] {
        let _ = PyRegex::new(p);
    }
    // python3: re.search(r'[\ud800-\udfff]|x', 'x').span() -> (0, 1)
    assert_eq!(search0(r"[\ud800-\udfff]|x", "x"), Some((0, 1)));
    assert_eq!(search0(r"\ud800", "x"), None);
}

#[test]
fn send_sync_static() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<PyRegex>();
    static RE: once_cell::sync::Lazy<PyRegex> =
        once_cell::sync::Lazy::new(|| PyRegex::new(r"<tool_call>(.*?)</tool_call>").unwrap());
    assert_eq!(
        RE.search("<tool_call>x</tool_call>")
            .unwrap()
            .unwrap()
            .get(1),
        Some("x")
    );
}

/// The crosscheck table's fast-path block (`LITERAL_SHAPES` in gen_crosscheck.py) really runs on
/// substring searches, and shapes outside it keep the regex engine; the table then proves the
/// substring path equal to Python, and this compares it with the regex path on more inputs.
#[test]
fn substring_search_shapes() {
    let fast = [
        r"<a>(.*?)(?:</a>|<b>|$)",
        r"<a>(.*?)(?:</a>|<b>)",
        r"<a>(.*?)</a>",
        r"<a>(.*)",
        r"<a>(.*)</a>",
        r"<a>(.*)(?:</a>|<b>)",
        r"^<a>(.*?)(?:</a>.*)?$",
        r"^functools(.*)$",
        r"(<a>.*?(?:</a>|$))",
        r"((?:<a>|<b>).*?(?:</b>|</a>|$))",
        r"(<a>.*?)(?:</a>|$)",
        r"<a>(.*?)$",
        r"<a>(.*?)\Z",
        r"<a>.*?</a>",
        r"(<a>)(.*?)(</a>)",
        r"<a>(.*?)(?:</a>|</a>x|$)",
        r"(?:<a>|<aa>)(.*?)(?:x|$)",
        r"^<a>(.*?)</a>",
        r"<a>(.*?)(?:$|</a>)",
        r"<a>((.*?))(?:</a>|$)",
        r"é(.*?)(?:ü|$)",
    ];
    let slow = [
        r"<a>\s*(.*?)</a>",
        r"(?i)<a>(.*?)</a>",
        r"<a>(.*?)(</a>|$)x",
        r"(?:<a>|<b>)(.*?)</a>",
        r"<a>(.+?)</a>",
        r"<a>(?-s:.*?)</a>",
        r"<a>(.*?)(?:</a>)?$",
        r"(.*?)</a>",
        r"<a>(.*?)</a>(.*)",
    ];
    for p in fast {
        assert!(
            re(p).uses_substring_search(),
            "{p} should use substring search"
        );
    }
    for p in slow {
        assert!(
            !re(p).uses_substring_search(),
            "{p} should keep the regex engine"
        );
    }
    let hays = [
        "",
        "<a>",
        "<a>\n",
        "x<a>y</a>z",
        "<a>1</a><a>2</a>\n",
        "<a>1<b>2</a>",
        "</a><a>",
        "<b>x</b><a>y",
        "<aa>1x<a>2",
        "<a><a></a></a>\n\n",
        "é<a>é</a>ü\n",
        "<a>x</a>x</a>",
    ];
    for p in fast {
        let fast_re = re(p);
        let mut slow_re = re(p);
        slow_re.disable_fast_paths();
        for h in hays {
            let a: Vec<Spans> = fast_re.find_iter(h).map(|m| spans(&m.unwrap())).collect();
            let b: Vec<Spans> = slow_re.find_iter(h).map(|m| spans(&m.unwrap())).collect();
            assert_eq!(a, b, "{p} on {h:?}");
        }
    }
}

/// Which substitutions come back as a slice of the input (the table above holds every result to
/// Python's `re.sub`; this holds the copy-free path to the cases it is for).
#[test]
fn substitutions_that_rebuild_the_input_are_slices() {
    use super::Substituted;
    let slice = |p: &str, t: &str, h: &str| {
        let r = re(p);
        match r.sub_slice(&Replacement::parse(t, &r).unwrap(), h).unwrap() {
            Substituted::Slice(range) => Some(range),
            Substituted::Owned(_) => None,
        }
    };
    // a terminator and everything after it removed: the text before it
    assert_eq!(slice(r"<e>.*", "", "answer<e>junk"), Some(0..6));
    // nothing matched: all of it
    assert_eq!(slice(r"<e>.*", "", "answer"), Some(0..6));
    // the replacement writes back the opener the output already had
    assert_eq!(slice(r"^\s*(?:>>>)?", ">>>", " >>>all\nhi"), Some(1..10));
    assert_eq!(slice(r"^\s*(?:>>>)?", ">>>", "all\nhi"), None);
    assert_eq!(slice(r"(a)(b)", r"\1\2", "xabab"), Some(0..5));
    assert_eq!(slice(r"(a)(b)", r"\2\1", "xabab"), None);
    assert_eq!(slice(r"x", "", "xx"), Some(0..0));
}

#[test]
fn marker_shortcuts_of_shipped_shapes() {
    // qwen3's whole-message pattern: the stripped content when none of its markers occurs
    // (`</think>` only ever follows `<think>` there).
    let qwen3 = r"^\s*(?:<think>\s*(?:(?P<reasoning_content>\S(?:.*?\S)??)\s*)??(?:</think>|(?:<\|im_end\|>|<\|endoftext\|>).*|$)\s*)?(?:(?P<content>\S(?:.*?\S)??)\s*)??(?:(?P<tool_calls><tool_call>(?:.*?\S)??)\s*)?(?:<\|im_end\|>|<\|endoftext\|>|$)";
    let re = PyRegex::new(qwen3).unwrap();
    let (markers, strip) = re.marker_shortcut().unwrap();
    assert!(strip);
    assert_eq!(
        markers,
        ["<think>", "<tool_call>", "<|endoftext|>", "<|im_end|>"]
    );
    let caps = re.search(" \u{3000}Hello!\x1c\n").unwrap().unwrap();
    assert_eq!(caps.span(0), Some((0, 12)));
    assert_eq!(caps.get(2), Some("Hello!"));
    assert_eq!(caps.get(1), None);
    // A marker present: the engines answer.
    let caps = re.search("Hi<tool_call>x").unwrap().unwrap();
    assert_eq!(caps.get(3), Some("<tool_call>x"));
    // Shapes that must not get the strip answer.
    for p in [
        r"(?m)^\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>|$)",
        r"(?a)^\s*(?:(\S(?:.*?\S)??)\s*)??(?:<e>|$)",
        r"^\s*(?:(\S(?:.*?\S)?)\s*)??(?:<e>|$)",
        r"^\s*(?:(\S(?:.*?\S)??)\s*)??(?:(?=<e>)|$)",
    ] {
        let re = PyRegex::new(p).unwrap();
        assert!(re.marker_shortcut().is_none_or(|(_, strip)| !strip), "{p}");
    }
}

#[test]
fn marker_sets_avoid_letters_where_the_pattern_allows() {
    // Llama 3's substitution requires `{`, `"`, `name` or `type`, `"` and `:`: the check passes
    // over the first bytes, so `{` (not hit by prose) rather than `name`/`type` (hit at every
    // `n` and `t`).
    let re = PyRegex::new(r#"^\s*(\{\s*"(?:name|type)"\s*:)"#).unwrap();
    assert_eq!(re.marker_shortcut(), Some((&["{".to_string()][..], false)));
    assert!(re.search("Then name: {\"x\": 1}").unwrap().is_none());
    let caps = re.search(" {\"name\": 1}").unwrap().unwrap();
    assert_eq!(caps.get(1), Some("{\"name\":"));
    // A literal starting with a letter stays when nothing else is required.
    let re = PyRegex::new(r"functools\[(.*)").unwrap();
    assert_eq!(re.marker_analysis().unwrap().markers, ["functools["]);
    // The whole-message shape kills a part only with a literal of two bytes or more, as before:
    // `<|python_tag|>`, not the `{` after it.
    let llama3 = r"^\s*(?:(?P<content>\S(?:.*?\S)??)\s*)??(?:(?P<tool_calls><\|python_tag\|>\s*\{(?:.*?\S)??)\s*)?(?:<\|eom_id\|>|<\|eot_id\|>|<\|end_of_text\|>|$)";
    let found = PyRegex::new(llama3).unwrap().marker_analysis().unwrap();
    assert_eq!(found.stripped_group, Some(1));
    assert_eq!(
        found.markers,
        [
            "<|end_of_text|>",
            "<|eom_id|>",
            "<|eot_id|>",
            "<|python_tag|>"
        ]
    );
}

#[test]
fn nested_counted_repeats_are_rejected_as_too_costly() {
    // Issue 21: these passed `check` and then ran for seconds (or minutes) per kilobyte.
    for p in [r"((?:a{1,1000}){1,1000}b)", r"((?:a{1,100}){1,100}b)"] {
        let e = PyRegex::new(p).unwrap_err();
        assert!(e.message.contains("too costly"), "{e}");
        assert!(e.message.contains(&MAX_EXPANDED_SIZE.to_string()), "{e}");
        assert!(e.fix.contains("(?:a{1,100})+"), "{e}");
        assert!(translate(p).is_err());
    }
    let size = |p: &str| expanded_size(&parse::parse(p).unwrap().root);
    assert_eq!(size(r"(?:a{1,100}){1,100}"), 10_000);
    assert_eq!(size(r"(?:ab){2,5}"), 10);
    assert_eq!(size(r"(?:a{2,})+"), 6);
    assert_eq!(size(r"a{2,}b"), 2);
    // One repeat of one character is one step per character in every engine: a conformance
    // case (transformers accepts it) needs `^HR:(x{1000,70000})`.
    assert_eq!(size(r"^HR:(x{1000,70000})"), 5);
    assert!(PyRegex::new(r"^HR:(x{1000,70000})").is_ok());
    assert!(PyRegex::new(r"((?:a{1,30}){1,30}b)").is_ok());
}

#[test]
fn catastrophic_backtracking_is_a_typed_error_within_the_budget() {
    // Nested repeats that split a run of `a` every possible way, with a look-ahead inside, which
    // keeps the pattern on the backtrackers (issue 21). python3: re.search(P, 'a' * 22) takes
    // 0.3 s, each further `a` doubles it: the search must fail within the budget, not spin.
    let p = r"^(?:(?=a)a+)+b";
    let r = PyRegex::new(p).unwrap();
    let hay = "a".repeat(60);
    let err = r.search(&hay).unwrap_err();
    let budget = err.budget.expect("a budget error");
    assert_eq!(budget.input_len, hay.len());
    // Our backtracker's budget ran out, then fancy-regex's (its limit for inputs up to 1 KB).
    // (A fuzzer's nested lazy loops, `^(?:<think>\s*(?:(\S(?:.*?\S)??)\s?)*?</think>)?(?=x)`
    // on '<think>' + 'ab ' * 40 — 4.5 s in python3 at 'ab ' * 12 — exceed ours, and fancy-regex
    // then answers: no match, as Python would.)
    assert_eq!(
        budget.steps,
        (FANCY_BACKTRACK_LIMIT + STEPS_PER_BYTE * 1024) as u64
    );
    assert!(err.message.contains("too costly"), "{err}");
    // The same on fancy-regex alone (a backreference keeps our backtracker out): its limit
    // covers the input's length rounded up to 1 KB.
    let r = PyRegex::with_backtrack_limit(r"^(a|aa)*\1c", 1_000).unwrap();
    let err = r.search(&format!("{}dc", "a".repeat(40))).unwrap_err();
    let budget = err.budget.expect("a budget error");
    assert_eq!(budget.steps, (1_000 + STEPS_PER_BYTE * 1024) as u64);
    // finditer shares one budget among its searches.
    let r = PyRegex::new(r"(?:(?=a)b|a)").unwrap();
    let hay = "a".repeat(5000);
    assert_eq!(r.find_iter(&hay).count(), 5000);
}

#[test]
fn the_answer_after_a_literal_and_a_head_is_the_engines() {
    // functionary v3.2's root pattern (schemas/functionary_v3_2.json): its plain answer is
    // `>>>all\n` and the text (the root substitution writes the `>>>`).
    let p = r"^(?:(?:>>>all[ \t]*\r?\n\s*(?:(?P<content>\S(?:.*?\S)??)\s*)??)?(?:(?P<tool_calls>>>>[^\s>]+[ \t]*\r?\n(?:.*?\S)??)\s*)?(?:>>>all[ \t]*\r?\n.*|>>>[^\s>]*$|<\|eot_id\|>|$))?";
    let found = PyRegex::new(p).unwrap().after_literal_analysis().unwrap();
    assert_eq!(found.literal, ">>>all\n");
    assert_eq!(found.group, 1);
    assert_eq!(found.markers, ["<|eot_id|>", ">>>"]);
    let mut engine = PyRegex::new(p).unwrap();
    engine.disable_fast_paths();
    for rest in [
        "x",
        "Hello! How can I help you today?",
        "a\nb",
        "Line one.\n\nLine two.\n",
        "x \u{3000}\u{85}",
        "all\nagain",
        "get_weather\n{}",
        "a>b <|eot_id",
        "\u{200b} zero-width is not white space",
    ] {
        let hay = format!("{}{rest}", found.literal);
        let caps = engine.search(&hay).unwrap().unwrap();
        assert_eq!(caps.span(0), Some((0, hay.len())), "{hay:?}");
        let want =
            stripped_span(rest).map(|(a, b)| (a + found.literal.len(), b + found.literal.len()));
        assert_eq!(caps.span(1), want, "{hay:?}");
        assert_eq!(caps.span(2), None, "{hay:?}");
    }
    // Heads sre could match another way are refused: a class that takes the head's next
    // character, or an optional item with no exact character after it.
    for p in [
        r"^(?:<a>[ \n]*\n\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??)?(?:<e>|$)",
        r"^(?:<a>\n[ \t]*\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??)?(?:<e>|$)",
        r"^(?:<a>(\n)\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??)?(?:<e>|$)",
    ] {
        assert!(
            PyRegex::new(p).unwrap().after_literal_analysis().is_none(),
            "{p}"
        );
    }
    let found = PyRegex::new(r"^(?:<a>[ \t]*\n\s*(?:(?P<c>\S(?:.*?\S)??)\s*)??)?(?:<e>|$)")
        .unwrap()
        .after_literal_analysis()
        .unwrap();
    assert_eq!(found.literal, "<a>\n");
}
