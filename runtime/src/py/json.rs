//! Python's `json.loads`, reproduced decision for decision.
//!
//! The reference parser hands tool-call arguments to CPython 3.11's `json.loads` and falls back to
//! the raw string only when that raises `json.JSONDecodeError`. Any other JSON parser disagrees
//! with it somewhere (accepted literals, error positions, recursion limit, duplicate keys, lone
//! surrogates, number handling), so this module follows the C scanner in `Modules/_json.c` step by
//! step instead of wrapping `serde_json`'s parser.
//!
//! The parser is iterative (an explicit stack of open containers), so neither deep input nor
//! [`MAX_DEPTH`] can overflow the thread stack. It works on bytes and converts positions to
//! Python's code-point offsets only when it reports an error.

use crate::value::{Map, Number, Value};

/// Why Python's `json.loads` would not give us a representable value.
///
/// Only [`JsonError::Decode`] is a `json.JSONDecodeError`; the other kinds are either different
/// Python exceptions ([`JsonError::TooDeep`], [`JsonError::IntegerTooLong`]) or values Python
/// returns but JSON/UTF-8 cannot carry ([`JsonError::NonFinite`], [`JsonError::LoneSurrogate`]).
/// All positions are Python string indices (code points, not bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonError {
    /// `json.JSONDecodeError` (the only kind `allow_non_json` catches).
    ///
    /// `message` is Python's bare `e.msg` (e.g. `Expecting value`); `line`/`column` are 1-based
    /// like `e.lineno`/`e.colno`, and `pos` is `e.pos`. `Display` gives `str(e)`.
    Decode {
        message: String,
        line: usize,
        column: usize,
        pos: usize,
    },
    /// Nesting deeper than [`MAX_DEPTH`] (Python raises `RecursionError`).
    TooDeep { pos: usize },
    /// An integer literal longer than Python's 4300-digit conversion limit (`ValueError`).
    IntegerTooLong { digits: usize },
    /// `NaN`, `Infinity`, `-Infinity` or an overflowing float: Python accepts them, JSON cannot carry them.
    NonFinite { pos: usize },
    /// A `\uD800`-style escape without its pair: Python keeps it, a Rust `String` cannot.
    LoneSurrogate { pos: usize },
}

/// The deepest nesting of arrays/objects [`loads`] accepts; one more level is [`JsonError::TooDeep`].
///
/// CPython 3.11 has no fixed JSON limit: each `[`/`{` takes one slot of the interpreter's
/// recursion budget (`sys.getrecursionlimit()` = 1000), shared with the Python frames already on
/// the stack. Measured with CPython 3.11.7: `json.loads` called from a module's top level accepts
/// 995 levels, `recursive_parse` called from a module's top level (its shallowest possible use)
/// accepts 994, the reference generator (`scripts/reference/generate.py`) 991, and deeper call
/// stacks a few less. 994 therefore never rejects what `recursive_parse` can accept, and rejects
/// every depth (≥ 995) it always rejects. Our parser is iterative, so the limit is about agreeing
/// with Python, not about our own stack.
pub const MAX_DEPTH: usize = 994;

/// Python's `int()` refuses decimal strings with more digits than this (`sys.int_info`).
const INT_MAX_STR_DIGITS: usize = 4300;

impl JsonError {
    /// Whether Python raised `json.JSONDecodeError`: the one failure after which the reference
    /// falls back to the raw string (`allow_non_json`); every other kind must propagate.
    pub fn is_decode_error(&self) -> bool {
        matches!(self, JsonError::Decode { .. })
    }

    /// `f"{type(e).__name__}: {e}"` for the exception Python raises, given the parsed text;
    /// `None` for [`JsonError::NonFinite`] and [`JsonError::LoneSurrogate`], where Python raises
    /// nothing.
    ///
    /// The recursion message names the kind of container that hit the limit, which the error
    /// itself does not record, hence the `text` argument.
    ///
    /// ```
    /// use chatparse_runtime::py::json::loads;
    /// let deep = "[".repeat(5000);
    /// let err = loads(&deep).unwrap_err();
    /// assert_eq!(
    ///     err.python_exception(&deep).unwrap(),
    ///     "RecursionError: maximum recursion depth exceeded while decoding a JSON array from a unicode string"
    /// );
    /// ```
    pub fn python_exception(&self, text: &str) -> Option<String> {
        match self {
            JsonError::Decode { .. } => Some(format!("JSONDecodeError: {self}")),
            JsonError::IntegerTooLong { .. } => Some(format!("ValueError: {self}")),
            JsonError::TooDeep { pos } => {
                let kind = match text.chars().nth(*pos) {
                    Some('{') => "object",
                    _ => "array",
                };
                Some(format!(
                    "RecursionError: maximum recursion depth exceeded while decoding a JSON {kind} from a unicode string"
                ))
            }
            JsonError::NonFinite { .. } | JsonError::LoneSurrogate { .. } => None,
        }
    }
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsonError::Decode {
                message,
                line,
                column,
                pos,
            } => write!(f, "{message}: line {line} column {column} (char {pos})"),
            JsonError::TooDeep { pos } => write!(
                f,
                "maximum recursion depth exceeded while decoding JSON (char {pos})"
            ),
            JsonError::IntegerTooLong { digits } => write!(
                f,
                "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
                 value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
            ),
            JsonError::NonFinite { pos } => write!(
                f,
                "NaN or infinity at char {pos}: Python accepts it, JSON cannot carry it"
            ),
            JsonError::LoneSurrogate { pos } => write!(
                f,
                "lone surrogate escape at char {pos}: Python keeps it, UTF-8 cannot carry it"
            ),
        }
    }
}

impl std::error::Error for JsonError {}

/// Python's `json.JSONDecoder().raw_decode(text)`: the value that starts at the beginning of
/// `text` (no leading whitespace) and the byte offset where it ends; `None` where Python raises.
pub(crate) fn raw_decode(text: &str) -> Option<(Value, usize)> {
    let mut parser = Parser::new(text, MAX_DEPTH);
    let value = parser.parse_value().ok()?;
    match parser.deferred {
        Some(_) => None,
        None => Some((value, parser.pos)),
    }
}

/// The deepest nesting [`object_span`] vouches for (deeper objects are left to [`loads`]). Why
/// 128: the open containers fit one `u128` of flags, and real tool arguments nest a few levels.
const VOUCHED_DEPTH: u32 = 128;

/// Where the JSON object in `text` starts and ends (the whitespace around it excluded), when
/// [`loads`] certainly parses `text` into a dict: checked without building anything. Why: most
/// tool arguments are read only to be written out again (OpenAI's `arguments` is their text), and
/// building the map, one allocation per key and string, is most of what a small call costs.
///
/// Conservative, never wrong: `Some` only for text that is Python's whitespace, then an object
/// in plain JSON, then whitespace — the grammar [`Parser`] follows, less everything it would
/// need to look closer at: `NaN`/`Infinity`, `\u` escapes of surrogates (paired or not), floats
/// that overflow, integers past Python's digit limit, nesting past [`VOUCHED_DEPTH`]. For those,
/// and for every error, `None`: the caller parses the text the full way, which then reports
/// exactly what Python would. `tests::vouched_objects_parse_to_dicts` holds it to [`loads`].
pub(crate) fn object_span(text: &str) -> Option<(usize, usize)> {
    object_entries(text, |_, _| true)
}

/// [`object_span`], telling `on_entry` each entry of the object as it is read: the key's string
/// (its quotes included) and the value's text, as byte ranges of `text`. `on_entry` returns
/// `false` to give up (then `None`).
pub(crate) fn object_entries(
    text: &str,
    mut on_entry: impl FnMut((usize, usize), (usize, usize)) -> bool,
) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let start = skip_space(bytes, 0);
    if bytes.get(start) != Some(&b'{') {
        return None;
    }
    // The open containers, innermost in the lowest bit (1: an object).
    let mut open: u128 = 0;
    let mut depth = 0u32;
    let mut i = start;
    // The outer object's entry being read: its key, and where its value starts.
    let mut key = (0, 0);
    let mut value_start = 0;
    loop {
        // A value starts at `i` (whitespace skipped).
        match *bytes.get(i)? {
            b @ (b'{' | b'[') => {
                if depth == VOUCHED_DEPTH {
                    return None;
                }
                let object = b == b'{';
                open = open << 1 | u128::from(object);
                depth += 1;
                i = skip_space(bytes, i + 1);
                let close = if object { b'}' } else { b']' };
                if bytes.get(i) != Some(&close) {
                    if object {
                        i = read_key(bytes, i, depth == 1, &mut key, &mut value_start)?;
                    }
                    continue;
                }
                // Empty: closed at once, a finished value.
                i += 1;
                depth -= 1;
                open >>= 1;
            }
            b'"' => i = string_end(bytes, i)?,
            b't' if bytes[i..].starts_with(b"true") => i += 4,
            b'f' if bytes[i..].starts_with(b"false") => i += 5,
            b'n' if bytes[i..].starts_with(b"null") => i += 4,
            b'-' | b'0'..=b'9' => i = number_end(text, i)?,
            _ => return None,
        }
        // A value ended at `i`: close containers, or go on to the next value.
        loop {
            match depth {
                0 => return (skip_space(bytes, i) == bytes.len()).then_some((start, i)),
                1 if !on_entry(key, (value_start, i)) => return None,
                _ => {}
            }
            i = skip_space(bytes, i);
            let in_object = open & 1 == 1;
            match *bytes.get(i)? {
                b',' => {
                    i = skip_space(bytes, i + 1);
                    if in_object {
                        i = read_key(bytes, i, depth == 1, &mut key, &mut value_start)?;
                    }
                    break;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            i += 1;
            depth -= 1;
            open >>= 1;
        }
    }
}

/// [`key_end`] for [`object_entries`]: where the value starts; an entry of the outer object
/// (`outer`) also notes its key's string and its value's start.
fn read_key(
    bytes: &[u8],
    i: usize,
    outer: bool,
    key: &mut (usize, usize),
    value_start: &mut usize,
) -> Option<usize> {
    let (key_stop, value) = key_end(bytes, i)?;
    if outer {
        (*key, *value_start) = ((i, key_stop), value);
    }
    Some(value)
}

/// Python's JSON whitespace from `i` on: the first byte past it.
fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

/// `"key"`, whitespace, `:`, whitespace from `i`: where the key's string ends, and where the
/// value starts.
fn key_end(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let stop = string_end(bytes, i)?;
    let i = skip_space(bytes, stop);
    (bytes.get(i) == Some(&b':')).then(|| (stop, skip_space(bytes, i + 1)))
}

/// The end of the string whose quote is at `i`, for the strings [`object_span`] vouches for.
fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        i = plain_run_end(bytes, i);
        match *bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *bytes.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let code = hex4(bytes, i + 2)?;
                    if (0xD800..0xE000).contains(&code) {
                        return None;
                    }
                    i += 6;
                }
                _ => return None,
            },
            // A control character: Python's strict mode refuses it.
            _ => return None,
        }
    }
}

/// The end of the number at `i`, for the numbers [`object_span`] vouches for: the grammar of
/// [`Parser::parse_number`], a float only if it is finite, an integer only within Python's
/// digit limit.
fn number_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let digits_from = |mut i: usize| {
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = start + usize::from(bytes.get(start) == Some(&b'-'));
    let int_start = i;
    match bytes.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits_from(i + 1),
        _ => return None,
    }
    let int_digits = i - int_start;
    let mut float = false;
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        float = true;
        i = digits_from(i + 2);
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        let mut j = i + 1;
        if let Some(b'+' | b'-') = bytes.get(j) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            float = true;
            i = digits_from(j + 1);
        }
    }
    if float {
        let value = text.get(start..i)?.parse::<f64>().ok()?;
        return value.is_finite().then_some(i);
    }
    (int_digits <= INT_MAX_STR_DIGITS).then_some(i)
}

/// The byte offset in `text` of the character a [`loads`] error of `text` names (its start for
/// [`JsonError::IntegerTooLong`], which names none).
pub(crate) fn error_byte(text: &str, e: &JsonError) -> usize {
    let chars = match e {
        JsonError::Decode { pos, .. }
        | JsonError::TooDeep { pos }
        | JsonError::NonFinite { pos }
        | JsonError::LoneSurrogate { pos } => *pos,
        JsonError::IntegerTooLong { .. } => 0,
    };
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(byte, _)| byte)
}

/// Python's `json.loads(text)`.
///
/// Numbers come back as Python would type them: integers exactly (any length up to Python's
/// 4300-digit limit, `-0` as `0`), floats as the nearest `f64` made with `Number::from_f64`.
/// Duplicate keys keep their first position and their last value, like a Python dict.
///
/// ```
/// use chatparse_runtime::py::json::loads;
/// let v = loads(r#"{"a": 1, "b": [2.5, "x\u00e9"], "a": 3}"#).unwrap();
/// assert_eq!(v.to_string(), r#"{"a":3,"b":[2.5,"xé"]}"#);
///
/// let err = loads("[1, 2,]").unwrap_err();
/// assert!(err.is_decode_error());
/// assert_eq!(err.to_string(), "Expecting value: line 1 column 7 (char 6)");
///
/// assert!(!loads("NaN").unwrap_err().is_decode_error());
/// ```
pub fn loads(text: &str) -> Result<Value, JsonError> {
    loads_nested(text, MAX_DEPTH)
}

/// [`loads`] with another nesting limit: `usize::MAX` for text this crate printed itself (a value
/// the parser may have built deeper than Python reads, e.g. a message around deep arguments).
/// The parser is iterative, so any limit is safe for the stack.
pub(crate) fn loads_nested(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    if text.starts_with('\u{feff}') {
        return Err(Fail::Decode(DecodeMsg::Bom, 0).into_error(text));
    }
    let mut parser = Parser::new(text, max_depth);
    parser
        .parse_document()
        .map_err(|fail| fail.into_error(text))
}

/// The messages of `json.JSONDecodeError`, exactly as Python spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DecodeMsg {
    Bom,
    ExpectingValue,
    ExtraData,
    ExpectingComma,
    ExpectingColon,
    ExpectingPropertyName,
    Unterminated,
    ControlCharacter,
    InvalidEscape,
    InvalidUnicodeEscape,
}

impl DecodeMsg {
    fn text(self) -> &'static str {
        match self {
            DecodeMsg::Bom => "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            DecodeMsg::ExpectingValue => "Expecting value",
            DecodeMsg::ExtraData => "Extra data",
            DecodeMsg::ExpectingComma => "Expecting ',' delimiter",
            DecodeMsg::ExpectingColon => "Expecting ':' delimiter",
            DecodeMsg::ExpectingPropertyName => "Expecting property name enclosed in double quotes",
            DecodeMsg::Unterminated => "Unterminated string starting at",
            DecodeMsg::ControlCharacter => "Invalid control character at",
            DecodeMsg::InvalidEscape => "Invalid \\escape",
            DecodeMsg::InvalidUnicodeEscape => "Invalid \\uXXXX escape",
        }
    }
}

/// A failure with a byte offset; turned into a [`JsonError`] (code-point offsets) once, at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    Decode(DecodeMsg, usize),
    TooDeep(usize),
    IntegerTooLong(usize),
    NonFinite(usize),
    LoneSurrogate(usize),
}

impl Fail {
    fn into_error(self, text: &str) -> JsonError {
        let chars = |byte: usize| char_offset(text, byte);
        match self {
            Fail::Decode(msg, byte) => {
                let before = text.as_bytes().get(..byte).unwrap_or(text.as_bytes());
                let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
                let line_start = before
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let column = count_chars(before.get(line_start..).unwrap_or_default()) + 1;
                JsonError::Decode {
                    message: msg.text().to_owned(),
                    line,
                    column,
                    pos: chars(byte),
                }
            }
            Fail::TooDeep(byte) => JsonError::TooDeep { pos: chars(byte) },
            Fail::IntegerTooLong(digits) => JsonError::IntegerTooLong { digits },
            Fail::NonFinite(byte) => JsonError::NonFinite { pos: chars(byte) },
            Fail::LoneSurrogate(byte) => JsonError::LoneSurrogate { pos: chars(byte) },
        }
    }
}

fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// The Python (code-point) index of a byte offset.
fn char_offset(text: &str, byte: usize) -> usize {
    count_chars(text.as_bytes().get(..byte).unwrap_or(text.as_bytes()))
}

/// The stacks of [`Parser::parse_value`], kept between calls on a thread (each call leaves them
/// empty): most calls parse one small object, and allocating and growing the stacks each time
/// cost more than the exact-size containers saved. A nested call (none today) would find them
/// taken and start its own.
#[derive(Default)]
struct Scratch {
    frames: Vec<Frame>,
    entries: Vec<(String, Value)>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = const {
        std::cell::Cell::new(Scratch { frames: Vec::new(), entries: Vec::new() })
    };
}

/// Stacks that grew beyond this many items (80 bytes an entry) are freed rather than kept.
const KEPT_ENTRIES: usize = 256;

/// An open container on the explicit stack: where its finished entries start on the parser's
/// shared entry stack (`parse_value`'s `entries`).
enum Frame {
    Array(usize),
    /// And the key whose value is being parsed.
    Object(usize, String),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// Byte offset of the next unread byte.
    pos: usize,
    /// The first value Python would return but we cannot represent. Python keeps parsing after
    /// it (a later `JSONDecodeError` still wins), so we do too and report it only on success.
    deferred: Option<Fail>,
    /// The deepest nesting accepted ([`MAX_DEPTH`] but where the text is our own).
    max_depth: usize,
}

/// The bytes that end a string's plain run: `"`, `\\` and the control characters. Why a table:
/// one load per byte where three comparisons were, on the strings that make most of a tool
/// call's arguments.
static STRING_STOP: [bool; 256] = {
    let mut stop = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        stop[b] = true;
        b += 1;
    }
    stop[b'"' as usize] = true;
    stop[b'\\' as usize] = true;
    stop
};

/// Where the plain run of a JSON string from `i` ends: the first `"`, `\\` or control character
/// at or after `i` (`bytes.len()` when there is none). Why eight bytes at a time: keys and short
/// values are most of a tool call's bytes, and the table loop spent five instructions a byte.
///
/// Each test flags a byte with its high bit: `x - 0x01…` borrows into a byte's high bit where the
/// byte is zero (`v ^ '"'…`, `v ^ '\\'…`), `v - 0x20…` where it is below 0x20, and `& !v` drops the
/// bytes that had their high bit already (UTF-8). A borrow can flag a byte above a true match,
/// never one below it, so the lowest flag is the first stop.
fn plain_run_end(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let v = u64::from_le_bytes(chunk);
        let quote = v ^ (ONES * u64::from(b'"'));
        let backslash = v ^ (ONES * u64::from(b'\\'));
        let flags = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (v.wrapping_sub(ONES * 0x20) & !v);
        let flags = flags & HIGHS;
        if flags != 0 {
            return i + (flags.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while bytes.get(i).is_some_and(|&b| !STRING_STOP[usize::from(b)]) {
        i += 1;
    }
    i
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, max_depth: usize) -> Parser<'a> {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            deferred: None,
            max_depth,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Python's JSON whitespace: only these four, unlike `str.isspace` (see [`skip_space`]).
    fn skip_ws(&mut self) {
        self.pos = skip_space(self.bytes, self.pos);
    }

    fn defer(&mut self, fail: Fail) {
        if self.deferred.is_none() {
            self.deferred = Some(fail);
        }
    }

    /// `JSONDecoder.decode`: skip whitespace, one value, skip whitespace, nothing else.
    fn parse_document(&mut self) -> Result<Value, Fail> {
        self.skip_ws();
        let value = self.parse_value()?;
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return Err(Fail::Decode(DecodeMsg::ExtraData, self.pos));
        }
        match self.deferred {
            Some(fail) => Err(fail),
            None => Ok(value),
        }
    }

    /// `scan_once` with `_parse_array`/`_parse_object` unrolled onto an explicit stack.
    /// Called, like the C scanner, with whitespace already skipped.
    fn parse_value(&mut self) -> Result<Value, Fail> {
        let mut scratch = SCRATCH.take();
        let parsed = self.parse_value_with(&mut scratch.frames, &mut scratch.entries);
        scratch.frames.clear();
        scratch.entries.clear();
        if scratch.entries.capacity() <= KEPT_ENTRIES && scratch.frames.capacity() <= KEPT_ENTRIES {
            SCRATCH.set(scratch);
        }
        parsed
    }

    /// [`Self::parse_value`] with an empty `stack` of open containers and an empty `entries`:
    /// the finished entries of every open container, innermost last (an array's with an empty
    /// key). Why: a container is built when it closes, at its exact size — one allocation for
    /// an array's items, one for a map's entries and one for its table — where pushing into it
    /// as each entry ends grew it (an object of five keys allocated its table twice and its
    /// entries three times).
    fn parse_value_with(
        &mut self,
        stack: &mut Vec<Frame>,
        entries: &mut Vec<(String, Value)>,
    ) -> Result<Value, Fail> {
        'value: loop {
            let mut value = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    // Py_EnterRecursiveCall happens before the container's contents are looked at.
                    if stack.len() >= self.max_depth {
                        return Err(Fail::TooDeep(self.pos));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if open == b'[' {
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            Value::Array(Vec::new())
                        } else {
                            stack.push(Frame::Array(entries.len()));
                            continue 'value;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Object(Map::new())
                    } else {
                        let key = self.parse_key()?;
                        stack.push(Frame::Object(entries.len(), key));
                        continue 'value;
                    }
                }
                _ => self.parse_scalar()?,
            };
            // Hand the finished value to its container, closing containers as they end.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok(value);
                };
                let close = match frame {
                    Frame::Array(_) => {
                        entries.push((String::new(), value));
                        b']'
                    }
                    Frame::Object(_, key) => {
                        entries.push((std::mem::take(key), value));
                        b'}'
                    }
                };
                self.skip_ws();
                match self.peek() {
                    Some(b) if b == close => {
                        self.pos += 1;
                        value = match stack.pop() {
                            Some(Frame::Array(start)) => {
                                Value::Array(entries.drain(start..).map(|(_, v)| v).collect())
                            }
                            Some(Frame::Object(start, _)) => {
                                let mut map = Map::with_capacity(entries.len() - start);
                                // In order: a repeated key keeps its first place and takes the
                                // last value, as `dict` does.
                                for (key, v) in entries.drain(start..) {
                                    map.insert(key, v);
                                }
                                Value::Object(map)
                            }
                            None => Value::Null, // unreachable: the stack was non-empty
                        };
                    }
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                        if let Some(Frame::Object(_, key)) = stack.last_mut() {
                            *key = self.parse_key()?;
                        }
                        continue 'value;
                    }
                    _ => return Err(Fail::Decode(DecodeMsg::ExpectingComma, self.pos)),
                }
            }
        }
    }

    /// `"key"`, whitespace, `:`, whitespace — the part of `_parse_object` before each value.
    fn parse_key(&mut self) -> Result<String, Fail> {
        if self.peek() != Some(b'"') {
            return Err(Fail::Decode(DecodeMsg::ExpectingPropertyName, self.pos));
        }
        let key = self.parse_string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(Fail::Decode(DecodeMsg::ExpectingColon, self.pos));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(key)
    }

    fn starts_with(&self, literal: &[u8]) -> bool {
        self.bytes
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(literal))
    }

    /// Everything `scan_once` handles besides containers, in the C scanner's order.
    fn parse_scalar(&mut self) -> Result<Value, Fail> {
        let start = self.pos;
        let constant = match self.peek() {
            Some(b'"') => return self.parse_string().map(Value::String),
            Some(b'n') if self.starts_with(b"null") => Some((4, Value::Null)),
            Some(b't') if self.starts_with(b"true") => Some((4, Value::Bool(true))),
            Some(b'f') if self.starts_with(b"false") => Some((5, Value::Bool(false))),
            Some(b'N') if self.starts_with(b"NaN") => {
                self.defer(Fail::NonFinite(start));
                Some((3, Value::Null))
            }
            Some(b'I') if self.starts_with(b"Infinity") => {
                self.defer(Fail::NonFinite(start));
                Some((8, Value::Null))
            }
            Some(b'-') if self.starts_with(b"-Infinity") => {
                self.defer(Fail::NonFinite(start));
                Some((9, Value::Null))
            }
            _ => None,
        };
        if let Some((len, value)) = constant {
            self.pos += len;
            return Ok(value);
        }
        self.parse_number()
    }

    fn digits_from(&self, mut i: usize) -> usize {
        while self.bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    }

    /// `_match_number_unicode`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, where a
    /// fraction or exponent that does not complete is simply not part of the number.
    fn parse_number(&mut self) -> Result<Value, Fail> {
        let start = self.pos;
        let mut i = start;
        if self.bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        match self.bytes.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = self.digits_from(i + 1),
            _ => return Err(Fail::Decode(DecodeMsg::ExpectingValue, start)),
        }
        let int_end = i;
        let mut is_float = false;
        if self.bytes.get(i) == Some(&b'.') && self.bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            is_float = true;
            i = self.digits_from(i + 2);
        }
        if let Some(b'e' | b'E') = self.bytes.get(i) {
            let mut j = i + 1;
            if let Some(b'+' | b'-') = self.bytes.get(j) {
                j += 1;
            }
            if self.bytes.get(j).is_some_and(u8::is_ascii_digit) {
                is_float = true;
                i = self.digits_from(j + 1);
            }
        }
        self.pos = i;
        let literal = self.text.get(start..i).unwrap_or_default();
        if is_float {
            // The grammar above is a subset of Rust's, and both round correctly.
            let parsed = literal.parse::<f64>().ok().and_then(Number::from_f64);
            return Ok(match parsed {
                Some(n) => Value::Number(n),
                None => {
                    self.defer(Fail::NonFinite(start));
                    Value::Null
                }
            });
        }
        let digits = int_end - int_start;
        if digits > INT_MAX_STR_DIGITS {
            return Err(Fail::IntegerTooLong(digits));
        }
        Ok(Value::Number(int_number(literal)))
    }

    /// `scanstring_unicode` in strict mode, from the opening quote at `self.pos`.
    fn parse_string(&mut self) -> Result<String, Fail> {
        let begin = self.pos;
        let bytes = self.bytes;
        // Most strings have no escape: one allocation of their exact length, without the growth
        // path of pushing into an empty `String`.
        let body = begin + 1;
        let end = plain_run_end(bytes, body);
        if bytes.get(end) == Some(&b'"') {
            self.pos = end + 1;
            return Ok(self.text.get(body..end).unwrap_or_default().to_owned());
        }
        let mut out = String::new();
        let mut i = begin + 1;
        loop {
            let run_start = i;
            i = plain_run_end(bytes, i);
            // The run stops at a quote, a backslash or a control character.
            let stop = match bytes.get(i) {
                None => return Err(Fail::Decode(DecodeMsg::Unterminated, begin)),
                Some(&b) if b < 0x20 => return Err(Fail::Decode(DecodeMsg::ControlCharacter, i)),
                Some(&b) => b,
            };
            // The run ends at an ASCII byte, so it is whole characters.
            out.push_str(self.text.get(run_start..i).unwrap_or_default());
            if stop == b'"' {
                self.pos = i + 1;
                return Ok(out);
            }
            let backslash = i;
            let simple = match bytes.get(i + 1) {
                None => return Err(Fail::Decode(DecodeMsg::Unterminated, begin)),
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => '\0',
                Some(_) => return Err(Fail::Decode(DecodeMsg::InvalidEscape, backslash)),
            };
            if simple != '\0' {
                out.push(simple);
                i += 2;
                continue;
            }
            // `\uXXXX`: four hex digits and, as in C (`end >= len`), at least one more character.
            let u = i + 1;
            let Some(c) = hex4(bytes, u + 1).filter(|_| bytes.len() > u + 5) else {
                return Err(Fail::Decode(DecodeMsg::InvalidUnicodeEscape, u));
            };
            i = u + 5;
            if (0xD800..0xDC00).contains(&c)
                && bytes.get(i) == Some(&b'\\')
                && bytes.get(i + 1) == Some(&b'u')
                && bytes.len() > i + 6
            {
                let Some(c2) = hex4(bytes, i + 2) else {
                    return Err(Fail::Decode(DecodeMsg::InvalidUnicodeEscape, i + 1));
                };
                if (0xDC00..0xE000).contains(&c2) {
                    let joined = 0x10000 + ((c - 0xD800) << 10) + (c2 - 0xDC00);
                    out.push(char::from_u32(joined).unwrap_or('\u{fffd}'));
                    i += 6;
                    continue;
                }
                // Not a low surrogate: the second escape is read again on its own.
            }
            match char::from_u32(c) {
                Some(ch) => out.push(ch),
                None => {
                    self.defer(Fail::LoneSurrogate(backslash));
                    out.push('\u{fffd}');
                }
            }
        }
    }
}

/// Four hex digits at `at`, if there are four.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |acc, &b| {
        let d = (b as char).to_digit(16)?;
        Some(acc << 4 | d)
    })
}

/// A JSON integer literal (`-?(0|[1-9][0-9]*)`) as an exact Number with canonical text.
fn int_number(literal: &str) -> Number {
    if literal.len() <= 18 {
        if let Ok(n) = literal.parse::<i64>() {
            return Number::from(n);
        }
    }
    Number::from_integer_str(literal).unwrap_or_else(|| Number::from(0u8))
}

/// Append Python's `json.dumps(s, ensure_ascii=…)` for a str: [`write_ascii_string`], or with
/// `ensure_ascii=False` only `"`, `\` and control characters escaped (the escaping `serde_json`
/// and [`Value`]'s `Display` also use).
///
/// ```
/// let mut out = String::new();
/// chatparse_runtime::py::json::write_string("é\"\u{1}", false, &mut out);
/// assert_eq!(out, r#""é\"\u0001""#);
/// ```
pub fn write_string(s: &str, ensure_ascii: bool, out: &mut String) {
    if ensure_ascii {
        write_ascii_string(s, out);
    } else {
        crate::value::write_json_str(s, out);
    }
}

/// Append Python's `json.dumps(s)` (default `ensure_ascii=True`) for a str: `"`, `\` and the
/// usual control characters escaped by name, every character outside `' '..='~'` as `\uXXXX`
/// (astral characters as surrogate pairs).
///
/// ```
/// let mut out = String::new();
/// chatparse_runtime::py::json::write_ascii_string("é\"😀", &mut out);
/// assert_eq!(out, r#""\u00e9\"\ud83d\ude00""#);
/// ```
pub fn write_ascii_string(s: &str, out: &mut String) {
    use std::fmt::Write;
    out.reserve(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Structural equality, keys in order, numbers exactly (ints by value, floats by bits).
    fn same(a: &Value, b: &Value) -> bool {
        same_within(a, b, 0)
    }

    /// [`same`], floats allowed `ulps` apart (serde_json's default float parsing is not always
    /// correctly rounded).
    fn same_within(a: &Value, b: &Value, ulps: i64) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
                let bits = |n: &Number| n.as_f64().unwrap().to_bits() as i64;
                (bits(x) - bits(y)).abs() <= ulps
            }
            (Value::Number(x), Value::Number(y)) => x == y,
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_within(a, b, ulps))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((ka, va), (kb, vb))| ka == kb && same_within(va, vb, ulps))
            }
            _ => a == b,
        }
    }

    /// `expected` is `json.dumps(json.loads(input))` from CPython 3.11.
    fn ok(input: &str, expected: &str) {
        let got = loads(input).unwrap_or_else(|e| panic!("{input:?}: {e:?}"));
        let want = loads(expected).unwrap();
        assert_eq!(got.to_string(), want.to_string(), "{input:?}");
        assert!(same(&got, &want), "{input:?}: got {got}, want {want}");
    }

    /// `expected` is `str(e)` of the `JSONDecodeError` CPython 3.11 raises.
    fn decode_err(input: &str, expected: &str) {
        let err = loads(input).unwrap_err();
        assert!(err.is_decode_error(), "{input:?}: {err:?}");
        assert_eq!(err.to_string(), expected, "{input:?}");
    }

    #[test]
    fn values_match_python() {
        ok("-0", "0"); // json.loads('-0') == 0 (an int)
        ok("-0.0", "-0.0");
        ok("1E5", "100000.0");
        ok("1.5e-3", "0.0015");
        ok("1e-400", "0.0");
        ok(" \t\n\r[1, 2.0 ,\"x\"]\r\n", r#"[1, 2.0, "x"]"#);
        ok(r#""\/\b\f\n\r\t\"\\""#, r#""/\b\f\n\r\t\"\\""#);
        ok(r#""\u00e9\u1234""#, r#""\u00e9\u1234""#);
        ok(r#""\ud83d\ude00""#, r#""😀""#);
        ok(r#""\uD83D\uDE00x""#, r#""😀x""#);
        ok("\"a\u{7f}é😀\"", "\"a\u{7f}é😀\"");
        ok("[[],{},[{}]]", "[[], {}, [{}]]");
        ok("{}", "{}");
        ok(
            "123456789012345678901234567890",
            "123456789012345678901234567890",
        );
        ok("-9223372036854775809", "-9223372036854775809");
        ok("18446744073709551616", "18446744073709551616");
        // json.loads('0.' + '1'*5000) == 0.1111111111111111
        ok(&format!("0.{}", "1".repeat(5000)), "0.1111111111111111");
        ok("1.7976931348623157e308", "1.7976931348623157e308");
        ok("[true,false,null]", "[true,false,null]");
    }

    #[test]
    fn duplicate_keys_keep_first_position_last_value() {
        // json.loads('{"a":1,"b":2,"a":3}') == {'a': 3, 'b': 2}
        let v = loads(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(v.to_string(), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn a_failed_parse_leaves_nothing_for_the_next() {
        // The entry stacks are kept between calls: an error halfway through nested containers
        // must not hand its entries to the next document. json.loads('{"b": [1]}') == {'b': [1]}
        assert!(loads(r#"[1, {"a": [2, {"c": 3"#).is_err());
        assert!(loads(r#"{"a": 1, "x": [true, "#).is_err());
        assert_eq!(loads(r#"{"b": [1]}"#).unwrap().to_string(), r#"{"b":[1]}"#);
        assert_eq!(loads("[[], {}, [[]]]").unwrap().to_string(), "[[],{},[[]]]");
    }

    #[test]
    fn integers_are_exact_and_canonical() {
        let big = format!("-{}", "9".repeat(4300));
        let v = loads(&big).unwrap();
        assert_eq!(v.as_number().unwrap().to_string(), big);
        assert_eq!(loads("-0").unwrap().to_string(), "0");
        assert_eq!(loads("[0,-5]").unwrap().to_string(), "[0,-5]");
        // json.loads('1'*4301) raises ValueError: ... value has 4301 digits ...
        let err = loads(&"1".repeat(4301)).unwrap_err();
        assert_eq!(err, JsonError::IntegerTooLong { digits: 4301 });
        assert!(!err.is_decode_error());
        assert_eq!(
            err.to_string(),
            "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; \
             use sys.set_int_max_str_digits() to increase the limit"
        );
        // ValueError is immediate: json.loads('[' + '1'*4301 + ',x') raises ValueError.
        let err = loads(&format!("[{},x", "1".repeat(4301))).unwrap_err();
        assert_eq!(err, JsonError::IntegerTooLong { digits: 4301 });
        assert_eq!(
            loads(&format!("-{}", "1".repeat(4301))).unwrap_err(),
            JsonError::IntegerTooLong { digits: 4301 }
        );
    }

    #[test]
    fn floats_are_from_f64() {
        let v = loads("[1e5, -0.0, 0.1]").unwrap();
        let texts: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_number().unwrap().to_string())
            .collect();
        let expected: Vec<String> = [1e5, -0.0, 0.1]
            .iter()
            .map(|&f| Number::from_f64(f).unwrap().to_string())
            .collect();
        assert_eq!(texts, expected);
    }

    #[test]
    fn decode_errors_match_python() {
        decode_err("", "Expecting value: line 1 column 1 (char 0)");
        decode_err(" ", "Expecting value: line 1 column 2 (char 1)");
        decode_err("[", "Expecting value: line 1 column 2 (char 1)");
        decode_err(
            "{",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        );
        decode_err(
            r#"{"a""#,
            "Expecting ':' delimiter: line 1 column 5 (char 4)",
        );
        decode_err(r#"{"a":"#, "Expecting value: line 1 column 6 (char 5)");
        decode_err(
            r#"{"a":1"#,
            "Expecting ',' delimiter: line 1 column 7 (char 6)",
        );
        decode_err(r#"{"a":}"#, "Expecting value: line 1 column 6 (char 5)");
        decode_err("[1,]", "Expecting value: line 1 column 4 (char 3)");
        decode_err(
            r#"{"a":1,}"#,
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
        );
        decode_err("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)");
        decode_err("01", "Extra data: line 1 column 2 (char 1)");
        decode_err("-01", "Extra data: line 1 column 3 (char 2)");
        decode_err("-", "Expecting value: line 1 column 1 (char 0)");
        decode_err("1.", "Extra data: line 1 column 2 (char 1)");
        decode_err("1e", "Extra data: line 1 column 2 (char 1)");
        decode_err("1e+", "Extra data: line 1 column 2 (char 1)");
        decode_err(
            r#""\u12""#,
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
        );
        decode_err(
            r#""\u12"#,
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
        );
        decode_err(
            r#""\u1234"#,
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
        );
        decode_err(
            r#""\ud83d\ude00"#,
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
        );
        decode_err(
            r#""\ud83d\u00zz""#,
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
        );
        decode_err(
            r#""\ud800\"#,
            "Unterminated string starting at: line 1 column 1 (char 0)",
        );
        decode_err(
            r#""\ud800\u"#,
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
        );
        decode_err(
            r#""\ud800\udc0"#,
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
        );
        decode_err(r#""\x""#, "Invalid \\escape: line 1 column 2 (char 1)");
        decode_err(r#""\U0041""#, "Invalid \\escape: line 1 column 2 (char 1)");
        decode_err(
            "\"\\",
            "Unterminated string starting at: line 1 column 1 (char 0)",
        );
        decode_err(
            "\"abc",
            "Unterminated string starting at: line 1 column 1 (char 0)",
        );
        decode_err(
            "\"a\u{1}b\"",
            "Invalid control character at: line 1 column 3 (char 2)",
        );
        decode_err(
            "\"é\u{1}\"",
            "Invalid control character at: line 1 column 3 (char 2)",
        );
        decode_err(
            "\u{feff}1",
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
        );
        decode_err("1 x", "Extra data: line 1 column 3 (char 2)");
        decode_err("-Inf", "Expecting value: line 1 column 1 (char 0)");
        decode_err("nul", "Expecting value: line 1 column 1 (char 0)");
        decode_err("tru", "Expecting value: line 1 column 1 (char 0)");
        decode_err("[NaN", "Expecting ',' delimiter: line 1 column 5 (char 4)");
        decode_err("NaN x", "Extra data: line 1 column 5 (char 4)");
        decode_err("é", "Expecting value: line 1 column 1 (char 0)");
        decode_err(" é", "Expecting value: line 1 column 2 (char 1)");
        decode_err("\n\n  x", "Expecting value: line 3 column 3 (char 4)");
        decode_err(
            "[1,\n  2,\n  x]",
            "Expecting value: line 3 column 3 (char 11)",
        );
        decode_err(
            r#"{"a" 1}"#,
            "Expecting ':' delimiter: line 1 column 6 (char 5)",
        );
        decode_err(
            "{1:2}",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        );
        decode_err(
            "{'a':1}",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        );
        decode_err("[1}", "Expecting ',' delimiter: line 1 column 3 (char 2)");
        decode_err(
            r#"{"a":1]"#,
            "Expecting ',' delimiter: line 1 column 7 (char 6)",
        );
        decode_err("[\u{c}1]", "Expecting value: line 1 column 2 (char 1)");
        decode_err("1\u{a0}", "Extra data: line 1 column 2 (char 1)");
        // A later decode error wins over an earlier unrepresentable value, as in Python.
        decode_err(
            r#"["\ud800", x]"#,
            "Expecting value: line 1 column 12 (char 11)",
        );
        decode_err(
            "[1e400 2]",
            "Expecting ',' delimiter: line 1 column 8 (char 7)",
        );
        // Positions count code points: json.loads('"😀é" x')
        decode_err("\"😀é\" x", "Extra data: line 1 column 6 (char 5)");
        decode_err(
            "[\"é\",\n\"😀\" x]",
            "Expecting ',' delimiter: line 2 column 5 (char 10)",
        );
    }

    #[test]
    fn unrepresentable_values() {
        for (input, pos) in [
            ("NaN", 0),
            ("Infinity", 0),
            ("-Infinity", 0),
            ("1e400", 0),
            ("[1, -1e400]", 4),
        ] {
            let err = loads(input).unwrap_err();
            assert_eq!(err, JsonError::NonFinite { pos }, "{input}");
            assert!(!err.is_decode_error());
            assert_eq!(err.python_exception(input), None);
        }
        // json.loads('"\\ud83d"') == '\ud83d'; json.loads('"\\ud83d\\u0041"') == '\ud83dA'
        for (input, pos) in [
            (r#""\ud83d""#, 1),
            (r#""\ude00""#, 1),
            (r#""é\ud83d\u0041""#, 2),
            (r#"{"k\udfff": 1}"#, 3),
        ] {
            let err = loads(input).unwrap_err();
            assert_eq!(err, JsonError::LoneSurrogate { pos }, "{input}");
            assert!(!err.is_decode_error());
        }
        // First one reported.
        assert_eq!(
            loads(r#"[NaN, "\ud800"]"#).unwrap_err(),
            JsonError::NonFinite { pos: 1 }
        );
    }

    #[test]
    fn depth_limit() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(loads(&nested(MAX_DEPTH)).is_ok());
        assert_eq!(
            loads(&nested(MAX_DEPTH + 1)).unwrap_err(),
            JsonError::TooDeep { pos: MAX_DEPTH }
        );
        let objects = format!(
            "{}1{}",
            r#"{"a":"#.repeat(MAX_DEPTH + 1),
            "}".repeat(MAX_DEPTH + 1)
        );
        let err = loads(&objects).unwrap_err();
        assert_eq!(err, JsonError::TooDeep { pos: MAX_DEPTH * 5 });
        assert_eq!(
            err.python_exception(&objects).unwrap(),
            "RecursionError: maximum recursion depth exceeded while decoding a JSON object from a unicode string"
        );
        // Deep and unterminated: RecursionError, not a decode error (as in Python).
        let deep = "[".repeat(100_000);
        let err = loads(&deep).unwrap_err();
        assert!(!err.is_decode_error());
        assert!(loads(&nested(100_000)).is_err());
        // A decode error before the limit is reached wins.
        assert!(loads(&format!("{}x", "[".repeat(10)))
            .unwrap_err()
            .is_decode_error());
    }

    #[test]
    fn python_exception_strings() {
        let err = loads("[1,]").unwrap_err();
        assert_eq!(
            err.python_exception("[1,]").unwrap(),
            "JSONDecodeError: Expecting value: line 1 column 4 (char 3)"
        );
        let big = "1".repeat(5000);
        assert!(loads(&big)
            .unwrap_err()
            .python_exception(&big)
            .unwrap()
            .starts_with("ValueError: Exceeds the limit (4300 digits)"));
    }

    proptest! {
        #[test]
        fn plain_runs_end_at_the_first_stop(s in r#"[a-z"\\\x00-\x1f\x7f é😀]{0,40}"#, from in 0usize..40) {
            let bytes = s.as_bytes();
            let from = from.min(bytes.len());
            let expected = bytes[from..]
                .iter()
                .position(|&b| STRING_STOP[usize::from(b)])
                .map_or(bytes.len(), |p| from + p);
            prop_assert_eq!(plain_run_end(bytes, from), expected);
        }
    }

    /// `object_span` vouches only for text `loads` parses into a dict, and its span is that
    /// object (the whitespace around it left out).
    fn assert_vouch_holds(text: &str) {
        if let Some((start, end)) = object_span(text) {
            let whole = loads(text);
            assert!(
                matches!(whole, Ok(Value::Object(_))),
                "vouched for {text:?}, but loads gives {whole:?}"
            );
            assert_eq!(loads(&text[start..end]), whole, "{text:?}");
            assert_eq!(
                text[..start].trim_start_matches([' ', '\t', '\n', '\r']),
                ""
            );
            assert_eq!(text[end..].trim_end_matches([' ', '\t', '\n', '\r']), "");
        }
    }

    #[test]
    fn vouched_objects_are_plain_json_objects() {
        for (text, span) in [
            ("{}", Some((0, 2))),
            (" \n{\"a\": 1}\t\r ", Some((2, 10))),
            (
                r#"{"a": [1, -0, 2.5e-3, 1E+2, true, false, null, {}, [], "x"]}"#,
                Some((0, 60)),
            ),
            (
                r#"{"k\"\\\/\b\f\n\r\t\u00e9\u0000": "Zürich 😀"}"#,
                Some((0, 49)),
            ),
            (r#"{"a": {"b": {"c": [[{"d": "e"}]]}}}"#, Some((0, 35))),
            (r#"{"a": 1, "a": 2}"#, Some((0, 16))),
            // Not an object, or not only one.
            ("[1]", None),
            ("\"{}\"", None),
            ("{} {}", None),
            ("{}x", None),
            ("\u{feff}{}", None),
            ("\u{a0}{}", None),
            // JSON errors: Python raises, the full parse reports them.
            ("{", None),
            (r#"{"a" 1}"#, None),
            (r#"{"a": 1,}"#, None),
            (r#"{"a": [1,]}"#, None),
            (r#"{"a": 01}"#, None),
            (r#"{"a": 1.}"#, None),
            (r#"{"a": .5}"#, None),
            (r#"{"a": 1e}"#, None),
            (r#"{"a": +1}"#, None),
            (r#"{a: 1}"#, None),
            (r#"{'a': 1}"#, None),
            (r#"{"a": tru}"#, None),
            ("{\"a\": \"x\ny\"}", None),
            (r#"{"a": "\x"}"#, None),
            (r#"{"a": "\u12"}"#, None),
            (r#"{"a": "unterminated}"#, None),
            (r#"{"a": [1}"#, None),
            (r#"{"a": {"b": 1]}"#, None),
            // Valid for Python, but not vouched for: the full parse reads them.
            (r#"{"a": NaN}"#, None),
            (r#"{"a": -Infinity}"#, None),
            (r#"{"a": 1e400}"#, None),
            (r#"{"a": "\ud83d\ude00"}"#, None),
            (r#"{"a": "\ud83d"}"#, None),
        ] {
            assert_eq!(object_span(text), span, "{text:?}");
            assert_vouch_holds(text);
        }
        let digits = |n: usize| format!(r#"{{"a": {}}}"#, "1".repeat(n));
        assert!(object_span(&digits(INT_MAX_STR_DIGITS)).is_some());
        assert_eq!(object_span(&digits(INT_MAX_STR_DIGITS + 1)), None);
        let nested = |n: usize| format!("{}1{}", r#"{"a": "#.repeat(n), "}".repeat(n));
        assert!(object_span(&nested(VOUCHED_DEPTH as usize)).is_some());
        assert_eq!(object_span(&nested(VOUCHED_DEPTH as usize + 1)), None);
        assert_vouch_holds(&nested(VOUCHED_DEPTH as usize));
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[0-9]{19,40}".prop_map(|d| {
                let d = d.trim_start_matches('0');
                Value::Number(Number::from_integer_str(if d.is_empty() { "0" } else { d }).unwrap())
            }),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..8)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn never_panics(s in any::<String>()) {
            let _ = loads(&s);
        }

        #[test]
        fn never_panics_on_json_like(s in r#"[\[\]{}",:0-9eE+\-.\\u tnrfalsNIy"é😀\x00-\x1f]{0,40}"#) {
            let _ = loads(&s);
        }

        #[test]
        fn agrees_with_serde_json(s in r#"[\[\]{}",:0-9eE+\-. \\utnrfalse"é]{0,30}"#) {
            // Where both accept, the values agree. serde_json accepts nothing Python rejects,
            // except lone surrogates and depth (neither occurs here). Without its
            // `arbitrary_precision` it reads integers beyond 64 bits as floats: skip those.
            if s.split(|c: char| !c.is_ascii_digit()).any(|run| run.len() > 18) {
                return Ok(());
            }
            if let Ok(theirs) = serde_json::from_str::<Value>(&s) {
                let ours = loads(&s);
                if let Err(JsonError::NonFinite { .. }) = ours {
                    return Ok(()); // e.g. 1e400, which serde_json keeps as text
                }
                prop_assert!(ours.is_ok(), "{:?}: {:?}", s, ours);
                prop_assert!(same_within(&ours.unwrap(), &theirs, 1));
            }
        }

        #[test]
        fn vouched_objects_parse_to_dicts(s in r#"[ {{}}\[\]",:0-9eE+\-.\\u tnrfalsNIyd8é😀\x00-\x1f]{0,40}"#) {
            assert_vouch_holds(&s);
            assert_vouch_holds(&format!("{{{s}"));
            assert_vouch_holds(&format!(r#"{{"k": {s}}}"#));
            assert_vouch_holds(&format!(r#"{{"k": "{s}"}}"#));
        }

        #[test]
        fn serialized_objects_are_vouched_for(v in json_value()) {
            let object = Value::Object([("k".to_owned(), v)].into_iter().collect());
            for text in [serde_json::to_string(&object).unwrap(), serde_json::to_string_pretty(&object).unwrap()] {
                prop_assert!(object_span(&text).is_some(), "{}", text);
                assert_vouch_holds(&text);
            }
        }

        #[test]
        fn round_trips_serialized_values(v in json_value()) {
            let compact = serde_json::to_string(&v).unwrap();
            prop_assert!(same(&loads(&compact).unwrap(), &v));
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            prop_assert!(same(&loads(&pretty).unwrap(), &v));
            prop_assert_eq!(&v.to_string(), &compact);
            prop_assert_eq!(&crate::value::to_string_pretty(&v), &pretty);
        }
    }
}
