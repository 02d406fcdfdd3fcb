//! A minijinja environment that renders chat templates as transformers' `apply_chat_template`
//! does (`_compile_jinja_template` in transformers 5.10.4): an `ImmutableSandboxedEnvironment` with
//! `trim_blocks`, `lstrip_blocks`, the loop-controls extension, the `{% generation %}` tag,
//! `tojson` = `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`,
//! `raise_exception` and `strftime_now` — plus what Jinja2 gives for free on Python values: string
//! and dict methods (minijinja-contrib's pycompat) and Python's `str()` when printing.

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State, Value};

use super::python;

/// A moment as `strftime_now` prints it (no time zone: Python's `datetime.now()` is naive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DateTime {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
}

impl DateTime {
    /// The current time in UTC, from the system clock (no time-zone database in the library).
    pub(crate) fn now_utc() -> DateTime {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        DateTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
        }
    }

    fn days(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Howard Hinnant's `days_from_civil`: the inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What `strftime_now` reads: the clock, or a fixed moment (reproducible renderings).
pub(crate) type Clock = Option<DateTime>;

/// The most template instructions one rendering may run. Why a bound: a template is input too
/// (`chatparse render`, `derive`, the macro's `chat_template`), and nested loops over
/// `range(100000)` would otherwise run for hours. The 34 real templates render a conversation in
/// well under 1% of it; running out is a render error (`fuel exhausted`).
pub(crate) const RENDER_FUEL: u64 = 20_000_000;

pub(crate) fn environment(clock: Clock) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_fuel(Some(RENDER_FUEL));
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .expect("valid syntax config"),
    );
    env.set_unknown_method_callback(unknown_method);
    // Jinja2 prints Python values with `str()`: None, True, ['a', 1], {'k': 'v'}, 1e-07.
    env.set_formatter(|out, _state, value| {
        out.write_str(&python::str(value))
            .map_err(|e| Error::new(ErrorKind::WriteFailure, e.to_string()))
    });
    env.add_filter("string", |v: Value| Value::from(python::str(&v)));
    env.add_filter("tojson", tojson);
    env.add_filter(MARKUP_FILTER, markup_escape);
    // Jinja2's Undefined has length 0 (`message.content|length` on a message without content).
    env.add_filter("length", length);
    env.add_filter("count", length);
    env.add_filter("trim", trim);
    // Jinja2's tests on Python values: None is not iterable, strings and dicts are sequences,
    // booleans are numbers (bool is an int subclass) but not integers.
    env.add_test("iterable", |v: Value| match v.kind() {
        ValueKind::None | ValueKind::Bool | ValueKind::Number => false,
        ValueKind::Undefined
        | ValueKind::String
        | ValueKind::Bytes
        | ValueKind::Seq
        | ValueKind::Map
        | ValueKind::Iterable => true,
        _ => v.try_iter().is_ok(),
    });
    env.add_test("sequence", |v: Value| {
        matches!(
            v.kind(),
            ValueKind::Undefined
                | ValueKind::String
                | ValueKind::Bytes
                | ValueKind::Seq
                | ValueKind::Map
        )
    });
    env.add_test("number", |v: Value| {
        matches!(v.kind(), ValueKind::Number | ValueKind::Bool)
    });
    env.add_test("integer", |v: Value| v.is_integer());
    env.add_test("float", |v: Value| v.is_number() && !v.is_integer());
    env.add_function(
        "raise_exception",
        |message: String| -> Result<Value, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message.clone())
                .with_source(Raised(message)))
        },
    );
    set_clock(&mut env, clock);
    env
}

/// The message of a `raise_exception` call, kept as the error's source so that the caller gets the
/// template's words unchanged.
#[derive(Debug)]
pub(crate) struct Raised(pub(crate) String);

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

/// (Re)defines `strftime_now` to read `clock`: a later definition replaces an earlier one.
pub(crate) fn set_clock(env: &mut Environment<'static>, clock: Clock) {
    env.add_function("strftime_now", move |format: String| {
        strftime(&format, clock.unwrap_or_else(DateTime::now_utc))
    });
}

/// Whether `at` is a real calendar date and time of day.
pub(crate) fn is_valid_date(at: &DateTime) -> bool {
    (1..=12).contains(&at.month)
        && at.day >= 1
        && civil_from_days(days_from_civil(at.year, at.month, at.day))
            == (at.year, at.month, at.day)
        && at.hour < 24
        && at.minute < 60
        && at.second < 60
}

/// Template source adjusted where minijinja's syntax differs from Jinja2's, without changing what
/// renders:
/// - Jinja2's extension tag `{% generation %}…{% endgeneration %}` (transformers' assistant
///   tracker) renders its body unchanged; minijinja has no custom tags, so it becomes an `if true`
///   block with the same whitespace control, which trims exactly as the original tag does.
/// - String literals are unescaped by Python's `unicode-escape` in Jinja2: a backslash-newline is
///   a line continuation (nothing), `\a`/`\v` are control characters and `\/` stays two
///   characters; they are rewritten to what minijinja reads the same way.
pub(crate) fn preprocess(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < source.len() {
        let rest = &source[i..];
        if rest.starts_with("{#") {
            let len = rest.find("#}").map_or(rest.len(), |e| e + 2);
            out.push_str(&rest[..len]);
            i += len;
        } else if rest.starts_with("{%") {
            if let Some((len, left, right)) = keyword_tag(rest, "generation") {
                out.push_str(&format!("{{%{left} if true {right}%}}"));
                i += len;
            } else if let Some((len, left, right)) = keyword_tag(rest, "endgeneration") {
                out.push_str(&format!("{{%{left} endif {right}%}}"));
                i += len;
            } else if keyword_tag(rest, "raw").is_some() {
                // Verbatim up to the end of the `{% endraw %}` tag.
                let mut len = rest.len();
                let mut at = 2;
                while let Some(p) = rest[at..].find("{%") {
                    if let Some((l, _, _)) = keyword_tag(&rest[at + p..], "endraw") {
                        len = at + p + l;
                        break;
                    }
                    at += p + 2;
                }
                out.push_str(&rest[..len]);
                i += len;
            } else {
                i += copy_tag(rest, "%}", &mut out);
            }
        } else if rest.starts_with("{{") {
            let start = out.len();
            i += copy_tag(rest, "}}", &mut out);
            if let Some(rewritten) = markup_chain(&out[start..]) {
                out.truncate(start);
                out.push_str(&rewritten);
            }
        } else {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The filter that gives `+` Jinja2's `Markup` semantics (see [`markup_chain`]).
const MARKUP_FILTER: &str = "__chatparse_markup";

/// markupsafe's `escape` on an operand of a `+` chain that involves a `Markup` (`…|safe`): a safe
/// string is already markup and stays as it is; any other string is escaped as markupsafe
/// escapes (`&#34;` and `&#39;`, not minijinja's HTML entities) and becomes markup; other values
/// are left for `+` to accept or refuse as it does.
fn markup_escape(v: Value) -> Value {
    if v.is_safe() {
        return v;
    }
    match v.as_str() {
        Some(s) => {
            let mut out = String::with_capacity(s.len());
            for c in s.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '\'' => out.push_str("&#39;"),
                    '"' => out.push_str("&#34;"),
                    c => out.push(c),
                }
            }
            Value::from_safe_string(out)
        }
        None => v,
    }
}

/// Jinja2's `Markup` arithmetic for one `{{ … }}` tag, which minijinja has no operator hook for:
/// in Python, `Markup + str` and `str + Markup` both escape the `str` (markupsafe's `__add__` and
/// `__radd__`), so in a `+` chain with a `…|safe` operand every operand ends up escaped. When the
/// tag is such a chain — operands joined by `+` at the top level, one of them ending in `|safe`,
/// and no other top-level operator, keyword or comma that could change how it groups — each
/// operand is wrapped as `(operand)|__chatparse_markup`. Anything else is left alone (`None`).
/// functionary v3.1 builds its tool list this way.
fn markup_chain(tag: &str) -> Option<String> {
    // A tag is `{{ … }}`; anything else (a template the fuzzer cut inside a character) is left
    // alone rather than sliced off a character boundary.
    if !(tag.starts_with("{{") && tag.ends_with("}}")) {
        return None;
    }
    let open_len = 2 + usize::from(tag.get(2..)?.starts_with(['-', '+']));
    let body_end = tag.len().checked_sub(2)?;
    let close_start = if body_end > open_len && tag.get(..body_end)?.ends_with(['-', '+']) {
        body_end - 1
    } else {
        body_end
    };
    if close_start <= open_len || !tag.contains("safe") {
        return None;
    }
    let inner = tag.get(open_len..close_start)?;
    let mut operands = Vec::new();
    let mut depth = 0usize;
    let mut from = 0;
    let mut chars = inner.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                while let Some((_, d)) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == c {
                        break;
                    }
                }
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.checked_sub(1)?,
            '+' if depth == 0 => {
                operands.push(&inner[from..i]);
                from = i + 1;
            }
            ',' | '~' | '-' | '*' | '/' | '%' | '=' | '<' | '>' | '!' if depth == 0 => return None,
            _ => {}
        }
    }
    operands.push(&inner[from..]);
    if operands.len() < 2 || depth != 0 {
        return None;
    }
    let keyword = |op: &str| {
        op.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| matches!(w, "if" | "else" | "and" | "or" | "not" | "in" | "is"))
    };
    let is_safe = |op: &str| {
        op.trim_end()
            .strip_suffix("safe")
            .is_some_and(|rest| rest.trim_end().ends_with('|'))
    };
    if operands
        .iter()
        .any(|op| op.trim().is_empty() || keyword(op))
        || !operands.iter().any(|op| is_safe(op))
    {
        return None;
    }
    let chain = operands
        .iter()
        .map(|op| format!("({})|{MARKUP_FILTER}", op.trim()))
        .collect::<Vec<_>>()
        .join(" + ");
    Some(format!(
        "{} {chain} {}",
        &tag[..open_len],
        &tag[close_start..]
    ))
}

/// Copies one `{{ … }}` or `{% … %}` tag from the start of `s`, rewriting the escapes of its string
/// literals; returns the length consumed.
fn copy_tag(s: &str, close: &str, out: &mut String) -> usize {
    let mut depth = 0usize;
    let mut chars = s.char_indices().skip(2).peekable();
    out.push_str(&s[..2]);
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                while let Some((_, d)) = chars.next() {
                    if d == c {
                        out.push(d);
                        break;
                    }
                    if d != '\\' {
                        out.push(d);
                        continue;
                    }
                    match chars.next() {
                        Some((_, '\n')) => {}
                        Some((_, '\r')) => {
                            if chars.peek().is_some_and(|(_, e)| *e == '\n') {
                                chars.next();
                            }
                        }
                        Some((_, '/')) => out.push_str("\\\\/"),
                        Some((_, 'a')) => out.push_str("\\x07"),
                        Some((_, 'v')) => out.push_str("\\x0b"),
                        Some((_, e)) => {
                            out.push('\\');
                            out.push(e);
                        }
                        None => out.push('\\'),
                    }
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                out.push(c);
            }
            ')' | ']' | '}' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            _ if depth == 0 && s[i..].starts_with(close) => {
                out.push_str(close);
                return i + close.len();
            }
            _ => out.push(c),
        }
    }
    s.len()
}

/// `{%[-+]? keyword [-+]?%}` at the start of `s`: (length, left marker, right marker).
fn keyword_tag<'a>(s: &'a str, keyword: &str) -> Option<(usize, &'a str, &'a str)> {
    let marker = |i: usize| -> &'a str {
        if s[i..].starts_with(['-', '+']) {
            &s[i..i + 1]
        } else {
            ""
        }
    };
    let mut i = 2;
    let left = marker(i);
    i += left.len();
    i += s[i..].len() - s[i..].trim_start().len();
    if !s[i..].starts_with(keyword) {
        return None;
    }
    i += keyword.len();
    let after = &s[i..];
    let trimmed = after.trim_start();
    if trimmed.len() == after.len() && !after.starts_with(['-', '+', '%']) {
        return None; // a longer name, e.g. `generations`
    }
    i += after.len() - trimmed.len();
    let right = marker(i);
    i += right.len();
    s[i..].starts_with("%}").then_some((i + 2, left, right))
}

fn unknown_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// transformers' `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
fn tojson(
    value: Value,
    ensure_ascii: Option<Value>,
    indent: Option<Value>,
    separators: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let mut opts = [
        ensure_ascii.unwrap_or_default(),
        indent.unwrap_or_default(),
        separators.unwrap_or_default(),
        Value::UNDEFINED,
    ];
    for (i, name) in ["ensure_ascii", "indent", "separators", "sort_keys"]
        .iter()
        .enumerate()
    {
        if kwargs.has(name) {
            opts[i] = kwargs.get::<Value>(name)?;
        }
    }
    kwargs.assert_all_used()?;
    let [ensure_ascii, indent, separators, sort_keys] = opts;
    let mut dumps = python::Dumps {
        ensure_ascii: ensure_ascii.is_true(),
        sort_keys: sort_keys.is_true(),
        ..Default::default()
    };
    match indent.kind() {
        ValueKind::Undefined | ValueKind::None => {}
        ValueKind::String => dumps.indent = Some(indent.as_str().unwrap_or_default().to_owned()),
        ValueKind::Number => {
            let n = i64::try_from(indent.clone()).unwrap_or(0).max(0) as usize;
            dumps.indent = Some(" ".repeat(n));
        }
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "tojson: indent must be an int or a string",
            ))
        }
    }
    if dumps.indent.is_some() {
        dumps.item_separator = ",".into();
    }
    match separators.kind() {
        ValueKind::Undefined | ValueKind::None => {}
        _ => {
            let parts: Vec<Value> = separators.try_iter()?.collect();
            match parts.as_slice() {
                [item, key] => {
                    dumps.item_separator = item.as_str().unwrap_or_default().to_owned();
                    dumps.key_separator = key.as_str().unwrap_or_default().to_owned();
                }
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: separators must be a pair",
                    ))
                }
            }
        }
    }
    dumps.dumps(&value).map(Value::from)
}

/// Jinja2's `trim`: `str(value).strip(chars)`, so `None|trim` is `"None"`.
fn trim(v: Value, chars: Option<String>) -> Value {
    let text = python::str(&v);
    Value::from(match chars {
        Some(chars) => text.trim_matches(|c| chars.contains(c)).to_owned(),
        None => python::strip(&text).to_owned(),
    })
}

fn length(v: Value) -> Result<Value, Error> {
    if v.is_undefined() {
        return Ok(Value::from(0));
    }
    v.len().map(Value::from).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("object of type {} has no len()", v.kind()),
        )
    })
}

/// `datetime.now().strftime(format)` at `at`, for the directives chat templates use.
fn strftime(format: &str, at: DateTime) -> Result<Value, Error> {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const WEEKDAYS: [&str; 7] = [
        "Thursday", // 1970-01-01
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
    ];
    let DateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
    } = at;
    let month_name = MONTHS[(month as usize).clamp(1, 12) - 1];
    let weekday = WEEKDAYS[at.days().rem_euclid(7) as usize];
    let yday = at.days() - days_from_civil(year, 1, 1) + 1;
    let hour12 = if hour % 12 == 0 { 12 } else { hour % 12 };
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Y') => out.push_str(&year.to_string()),
            Some('y') => out.push_str(&format!("{:02}", year.rem_euclid(100))),
            Some('m') => out.push_str(&format!("{month:02}")),
            Some('d') => out.push_str(&format!("{day:02}")),
            Some('e') => out.push_str(&format!("{day:>2}")),
            // glibc's `-` flag: no padding.
            Some('-') => match chars.next() {
                Some('d') => out.push_str(&day.to_string()),
                Some('m') => out.push_str(&month.to_string()),
                Some('H') => out.push_str(&hour.to_string()),
                Some('I') => out.push_str(&hour12.to_string()),
                Some('M') => out.push_str(&minute.to_string()),
                other => return Err(unsupported(other)),
            },
            Some('B') => out.push_str(month_name),
            Some('b') | Some('h') => out.push_str(&month_name[..3]),
            Some('A') => out.push_str(weekday),
            Some('a') => out.push_str(&weekday[..3]),
            Some('j') => out.push_str(&format!("{yday:03}")),
            Some('H') => out.push_str(&format!("{hour:02}")),
            Some('M') => out.push_str(&format!("{minute:02}")),
            Some('S') => out.push_str(&format!("{second:02}")),
            Some('I') => out.push_str(&format!("{hour12:02}")),
            Some('p') => out.push_str(if hour < 12 { "AM" } else { "PM" }),
            Some('F') => out.push_str(&format!("{year}-{month:02}-{day:02}")),
            Some('%') => out.push('%'),
            other => return Err(unsupported(other)),
        }
    }
    Ok(Value::from(out))
}

fn unsupported(spec: Option<char>) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "strftime_now: %{} is not supported",
            spec.map(String::from).unwrap_or_default()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expectations from Jinja2 3.1 (`Environment().from_string(src).render(x=…)`).
    #[test]
    fn markup_chains_escape_as_markupsafe() {
        let env = environment(None);
        let x = "<q>&'\"";
        let render = |src: &str| {
            env.render_str(&preprocess(src), minijinja::context! { x => x })
                .unwrap()
        };
        assert_eq!(
            render(r#"{{ "a'"|safe + x + "b"|safe }}"#),
            "a'&lt;q&gt;&amp;&#39;&#34;b"
        );
        assert_eq!(render(r#"{{ x + "s"|safe }}"#), "&lt;q&gt;&amp;&#39;&#34;s");
        assert_eq!(render("{{ x + x }}"), "<q>&'\"<q>&'\"");
        // Shapes the rewrite does not take on are left as written.
        assert_eq!(markup_chain(r#"{{- "("|safe + x ~ ")" -}}"#), None);
        assert_eq!(markup_chain(r#"{{ "a"|safe + x if c else y }}"#), None);
        assert_eq!(markup_chain(r#"{{ f("a"|safe + x) }}"#), None);
        assert_eq!(markup_chain("{{ x + y }}"), None);
        // derive_template found it (tests/fuzz_regressions/derive_template-markup-tag-char-
        // boundary): a tag cut inside a character is left alone, not sliced.
        assert_eq!(markup_chain("{{ \"a\"|safe + b｜"), None);
        assert_eq!(markup_chain("{{｜"), None);
    }

    #[test]
    fn calendar_arithmetic_round_trips() {
        for days in [-719_468, -1, 0, 1, 11_016, 20_454, 20_819, 100_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    }

    #[test]
    fn strftime_prints_like_python() {
        let at = DateTime {
            year: 2026,
            month: 3,
            day: 5,
            hour: 14,
            minute: 7,
            second: 9,
        };
        let got = strftime("%A %a %d %-d %B %b %Y %y %j %H:%M:%S %I %p %F %%", at).unwrap();
        assert_eq!(
            got.as_str(),
            Some("Thursday Thu 05 5 March Mar 2026 26 064 14:07:09 02 PM 2026-03-05 %")
        );
    }
}
