//! Pythonic call lists (`lfm2`): `<|tool_call_start|>[f(a=1), g(b="x")]<|tool_call_end|>`, a
//! block after another joined into one list by the field's substitution. The field's `x-regex`
//! takes the list's text `L` (after `[`, up to the first `]<|tool_call_end|>` the substitution
//! left, or the end), and its iterator takes each call from a name and `(` to the first `)`
//! followed by `, NAME(` or by the end of `L`. [`PythonicScan`] finds where each call ends as the
//! text arrives, so a call can be sent once it is decided instead of with the final message.
//!
//! Why a call sent is the final message's call: the profile is checked (when it loads) to hold
//! for a field whose substitution, `x-regex` and iterator are exactly these patterns, so the scan
//! follows what they do:
//!
//! * The substitution `\]\s*<\|tool_call_end\|>\s*<\|tool_call_start\|>\s*\[` → `, ` is run on the
//!   text that has arrived (the calls' text is known up to the first end token: the root regex
//!   ends the calls' group there). A match holds one `]`, at its start, so a match found is final
//!   and the text it gives is final up to the last `]` that more text may complete into a match.
//! * `L` ends at the first place from which only white space, an optional `]`, white space and
//!   `<|tool_call_end|>` follow (or the end of the calls' text). While neither has arrived, `L`
//!   runs past everything known.
//! * A call (from `NAME(`, `re.finditer` going left to right) ends at its first `)` after which
//!   the look-ahead `\s*(?:,\s*NAME\(|$)` holds in `L`. A `)` whose look-ahead is decided false
//!   by the known text does not end it; the first one whose look-ahead is decided true does, and
//!   the next call starts at that `NAME`. A `)` followed by white space and the end of `L` ends
//!   the last call. Anything else the scan does not decide (a call that `L`'s end cuts before a
//!   `)`, text where a call's name belongs) stops it, and the rest arrives with the final message.
//! * Once an end token has arrived, the calls' text is whole and the field's own schema reads it,
//!   as the one-shot parse does; the calls not sent yet are sent from that.
//!
//! Each call's text is read by the field's own `items` schema, as the one-shot parse reads it;
//! a call that does not parse stops the scan (a strict one-shot parse fails on it too).
//!
//! While a call is open its raw text is sent up to its `(` once `NAME(` is written: the call at
//! the scan's position is the iterator's next match, which starts there whatever follows, so
//! adapters can send its start (a call that then does not parse fails the strict parse). Its
//! text goes on out up to its last non-space character before the first `)` that may yet end
//! it (or before the end of what is known): all of that is the call's whichever `)` ends it,
//! so adapters can read its parameters as they arrive.

use super::decided::{CallStep, CallsText, DecidedCalls, RestOfCalls};
use crate::py::unicode::{is_space, is_word};
use crate::schema::interp::{parse_node, Walk};
use crate::schema::{Items, Node, NodeType, Substitution};
use crate::stream::spaces::{LastNonSpace, SpaceRuns};
use crate::support::Content;
use crate::value::Value;

/// The substitution that joins blocks into one list.
const JOIN_PATTERN: &str = r"\]\s*<\|tool_call_end\|>\s*<\|tool_call_start\|>\s*\[";
/// The field's `x-regex`: the list's text.
const LIST_PATTERN: &str =
    r"^<\|tool_call_start\|>\s*\[?\s*(.*?)\s*\]?\s*(?:<\|tool_call_end\|>.*)?$";
/// The iterator: one call each.
const CALL_PATTERN: &str =
    r"([A-Za-z_][\w.-]*\(.*?(?:\)(?=\s*(?:,\s*[A-Za-z_][\w.-]*\(|$))|$)|[^\s,].*|^$)";
const OPEN: &str = "<|tool_call_start|>";
const CLOSE: &str = "<|tool_call_end|>";

/// The incremental scan of a pythonic call list (see the module documentation).
#[derive(Debug)]
pub(crate) struct PythonicScan<'p> {
    /// The calls field.
    pub(crate) field: &'p str,
    node: &'p Node,
    items: &'p Node,
    join: &'p Substitution,
    /// Where the calls' text starts (its opener).
    open_at: usize,
    /// Where the next call's raw text starts, once the list's start is known; calls sent.
    next: Option<usize>,
    sent: usize,
    /// Where the last call sent ended (the opener before the first): each call's raw text runs
    /// from there.
    sent_to: usize,
    done: bool,
    /// The open call's text joined so far, kept from one chunk to the next.
    open: OpenCall,
    /// Once the calls' text is whole: the calls its schema read, not sent yet.
    whole_calls: RestOfCalls,
    /// The white space read before the list's first call (see [`list_start`]).
    list_spaces: SpaceRuns,
}

/// What the scan keeps of the call open at `from` between chunks, so that each chunk costs its
/// own text rather than the call's (a long call would otherwise cost time quadratic in its
/// length): the joined text, final as far as it goes, and where the searches resume.
#[derive(Debug, Default)]
struct OpenCall {
    /// Where the call's raw text starts (`None`: nothing kept).
    from: Option<usize>,
    /// The raw text after the substitution, as far as it is final (up to a `]` that more text
    /// may complete into a match), and how much of the raw text that is.
    joined: String,
    consumed: usize,
    /// (position in `joined`, position in the raw text) where each unchanged stretch starts.
    stretches: Vec<(usize, usize)>,
    /// Where the first replacement starts in `joined`.
    first_replacement: Option<usize>,
    /// Where the searches in `joined` resume.
    scan: EndScan,
    /// Where `joined`'s prefixes end less trailing white space, read once.
    own: LastNonSpace,
    /// How far the raw text was read when what is held back (a `]` and the start of a join
    /// after it) ended in white space: more white space changes nothing, and is not read
    /// again (a flood of it after a `]` was searched on every chunk).
    held_blank_to: Option<usize>,
}

/// Where the searches for the open call's end resume in its joined text.
#[derive(Debug, Default)]
struct EndScan {
    /// Where the search for the list's closer resumes, and the closer once found.
    close_from: usize,
    close: Option<usize>,
    /// Where the scan for the `)` that ends the call resumes: every `)` before it was decided
    /// not to end the call, for good.
    paren_from: usize,
    /// The `)`s before `paren_from` whose decision may still change, in order.
    unsure: Vec<usize>,
    /// The white space read after a `)` whose decision waits (read once, see [`SpaceRuns`]).
    spaces: SpaceRuns,
}

impl OpenCall {
    /// A position in `joined` (outside a replacement) as one in the raw text.
    fn map(&self, x: usize) -> usize {
        let &(o, r) = self
            .stretches
            .iter()
            .rev()
            .find(|&&(o, _)| o <= x)
            .unwrap_or(&(0, 0));
        r + (x - o)
    }
}

impl<'p> PythonicScan<'p> {
    /// A scan of `node`'s calls (checked by [`PythonicScan::check`]).
    pub(crate) fn new(field: &'p str, node: &'p Node) -> Result<Self, String> {
        Self::check(node)?;
        let Items::Each(items) = &node.items else {
            return Err("it has no `items` schema".into());
        };
        Ok(PythonicScan {
            field,
            node,
            items,
            join: &node.substitutions[0],
            open_at: 0,
            next: None,
            sent: 0,
            sent_to: 0,
            done: true,
            open: OpenCall::default(),
            whole_calls: RestOfCalls::default(),
            list_spaces: SpaceRuns::default(),
        })
    }

    /// Whether `node`'s calls are written as this scan reads them, or why not: an array whose
    /// substitution, `x-regex` and iterator are exactly the patterns of the module documentation.
    pub(crate) fn check(node: &Node) -> Result<(), String> {
        let fits = node.node_type == NodeType::Array
            && node.parser.is_none()
            && node.key_value.is_none()
            && matches!(node.items, Items::Each(_))
            && matches!(node.substitutions.as_slice(),
                [s] if s.pattern.regex.python_pattern() == JOIN_PATTERN
                    && s.replacement_source == ", ")
            && node
                .regex
                .as_ref()
                .is_some_and(|r| r.regex.python_pattern() == LIST_PATTERN)
            && node
                .iterator
                .as_ref()
                .is_some_and(|i| i.regex.python_pattern() == CALL_PATTERN);
        if fits {
            Ok(())
        } else {
            Err(format!(
                "only an array with the substitution `{JOIN_PATTERN}` → `, `, the x-regex \
                 `{LIST_PATTERN}` and the iterator `{CALL_PATTERN}` streams as pythonic calls"
            ))
        }
    }

    /// Starts reading the calls at their opener, `opener_at`.
    pub(crate) fn start(&mut self, opener_at: usize) {
        self.open_at = opener_at;
        self.next = None;
        self.sent = 0;
        self.sent_to = opener_at;
        self.done = false;
        self.open = OpenCall::default();
        self.whole_calls = RestOfCalls::default();
        self.list_spaces = SpaceRuns::default();
    }

    /// Reads `text[..limit]`; `ended`: the calls' text ends at `limit` (an end token is there).
    fn next_in(&mut self, text: &str, limit: usize, ended: bool) -> CallStep {
        if self.done {
            return CallStep::Done;
        }
        if ended {
            return self.whole(text, limit);
        }
        let from = match self.next {
            Some(at) => at,
            None => match list_start(&text[..limit], self.open_at, &mut self.list_spaces) {
                Some(Some(at)) => {
                    self.next = Some(at);
                    at
                }
                Some(None) => return self.stop(),
                None => return CallStep::Wait,
            },
        };
        let Some(raw) = text.get(from..limit) else {
            return CallStep::Wait;
        };
        if self.open.from != Some(from) {
            self.open = OpenCall {
                from: Some(from),
                stretches: vec![(0, 0)],
                ..OpenCall::default()
            };
        }
        if self.join(raw).is_none() {
            return self.stop();
        }
        let open = &mut self.open;
        let joined = open.joined.as_str();
        match call_end(joined, &mut open.scan) {
            // The call at `from` is the iterator's next match, so once its `NAME(` is written
            // that is its name whatever follows (a call that then does not parse fails the
            // strict parse): its raw text up to the `(` is sent, for its start, and on to its
            // last non-space character before a `)` that may end it (or before the end of what
            // is known), where no join rewrote it.
            Decided::Wait { known } => match call_name(joined) {
                Some(Some(len)) => {
                    let own = open.own.of(joined, known.max(len));
                    // The raw text and the joined one agree before the first replacement (which
                    // writes `, ` where the raw text has a `]`), and only there.
                    let unjoined = open.first_replacement.is_none_or(|r| r >= own);
                    CallStep::Open {
                        start: self.sent_to,
                        known: from
                            + if unjoined {
                                own.max(len)
                            } else {
                                open.map(len)
                            },
                    }
                }
                _ => CallStep::Wait,
            },
            Decided::Stop => self.stop(),
            Decided::End { end, next } => {
                let Ok(value) = parse_node(
                    self.items,
                    Content::borrowed(&joined[..end]),
                    &mut Walk::strict(),
                ) else {
                    return self.stop();
                };
                let (end, next) = (open.map(end), next.map(|n| open.map(n)));
                self.sent += 1;
                match next {
                    Some(next) => self.next = Some(from + next),
                    None => self.done = true,
                }
                self.call(from + end, value)
            }
        }
    }

    /// A call whose raw text ends at `end` (it starts where the last one ended).
    fn call(&mut self, end: usize, value: Value) -> CallStep {
        let start = std::mem::replace(&mut self.sent_to, end);
        CallStep::Call { start, end, value }
    }

    fn stop(&mut self) -> CallStep {
        self.done = true;
        CallStep::Done
    }

    /// The calls' text is whole (`text[open_at..limit]`, less trailing white space): the field's
    /// own schema reads it, and the next call not sent yet is sent.
    /// The calls' text is read once: the calls not sent yet are kept for the steps after.
    fn whole(&mut self, text: &str, limit: usize) -> CallStep {
        let calls_text = text[self.open_at..limit].trim_end_matches(is_space);
        let node = self.node;
        let next = self.whole_calls.next(self.sent, || {
            match parse_node(node, Content::borrowed(calls_text), &mut Walk::strict()) {
                Ok(Value::Array(calls)) => Some(calls),
                _ => None,
            }
        });
        match next {
            Some(value) => {
                self.sent += 1;
                self.call(self.open_at + calls_text.len(), value)
            }
            None => self.stop(),
        }
    }

    /// Extends the open call's joined text with `raw` (the call's raw text so far) after the
    /// substitution, as far as it is final: up to a `]` that more text may complete into a match.
    /// `None` when the regex engine gives up (the one-shot parse would too).
    ///
    /// Why the search resumes where the last one stopped: a match starts at a `]` and holds no
    /// other, so a `]` before the last one that did not start a match never will, and the
    /// joined text before the resumption point is final.
    fn join(&mut self, raw: &str) -> Option<()> {
        let open = &mut self.open;
        let Some(new) = raw.get(open.consumed..) else {
            return Some(());
        };
        // Held back: a `]` and, after it, a proper prefix of the rest of a join that ends in
        // white space, where the pattern reads `\s*`. More white space leaves it so: no match
        // completes (one ends with `[`), the `]` is still the last, and still may begin one.
        if let Some(to) = open.held_blank_to {
            if raw.get(to..).is_some_and(|more| more.chars().all(is_space)) {
                open.held_blank_to = Some(raw.len());
                return Some(());
            }
            open.held_blank_to = None;
        }
        let mut at = 0;
        for m in self.join.pattern.regex.find_iter(new) {
            let m = m.ok()?;
            open.joined.push_str(&new[at..m.start()]);
            open.first_replacement.get_or_insert(open.joined.len());
            open.joined.push_str(&self.join.replacement.expand(&m));
            at = m.end();
            open.stretches.push((open.joined.len(), open.consumed + at));
        }
        // Text after the last match: final up to a `]` that may begin one.
        let rest = &new[at..];
        let cut = rest
            .rfind(']')
            .filter(|&i| may_join(&rest[i + 1..]))
            .unwrap_or(rest.len());
        open.joined.push_str(&rest[..cut]);
        open.consumed += at + cut;
        if cut < rest.len() && rest.ends_with(is_space) {
            open.held_blank_to = Some(raw.len());
        }
        Some(())
    }
}

/// Whether `after` (the text after a `]`) may still become the rest of a join match:
/// `\s*<|tool_call_end|>\s*<|tool_call_start|>\s*\[` cut at its end.
fn may_join(after: &str) -> bool {
    let mut rest = after.trim_start_matches(is_space);
    for literal in [CLOSE, OPEN] {
        if rest.len() < literal.len() {
            return literal.starts_with(rest);
        }
        let Some(r) = rest.strip_prefix(literal) else {
            return false;
        };
        rest = r.trim_start_matches(is_space);
    }
    rest.is_empty()
}

/// Where the list's text starts after the opener at `open_at`: past `\s*\[?\s*`. `Some(None)`
/// when nothing but those follow up to the end of the list (an empty list: the final message
/// says what it is), `None` while more text is needed.
fn list_start(text: &str, open_at: usize, spaces: &mut SpaceRuns) -> Option<Option<usize>> {
    let after = open_at + OPEN.len();
    text.get(after..)?;
    // The white space is read once (`spaces`): this is asked again on every chunk until the
    // list's first call starts.
    let mut at = spaces.skip(text, after, is_space);
    if text[at..].starts_with('[') {
        at = spaces.skip(text, at + 1, is_space);
    }
    let trimmed = &text[at..];
    match trimmed.chars().next() {
        None => None,
        // `]` or `<`: the list may end here (an empty list, or a closer).
        Some(']' | '<') => Some(None),
        Some(_) => Some(Some(at)),
    }
}

impl DecidedCalls for PythonicScan<'_> {
    fn next(&mut self, calls: CallsText<'_>) -> CallStep {
        self.next_in(calls.text, calls.limit, calls.ended())
    }
}

/// What the text tells of the call at the start of `joined`.
enum Decided {
    /// Not decided yet; the call's text runs at least to `known` (a `)` that may end it, or
    /// the end of what is known).
    Wait {
        known: usize,
    },
    Stop,
    /// The call ends at `end`; the next one starts at `next` (none: it was the list's last).
    End {
        end: usize,
        next: Option<usize>,
    },
}

/// `[A-Za-z_][\w.-]*\(` at the start of `s`: `Some(Some(len))`, `Some(None)` when it does not
/// match, `None` when `s` ends before it is decided.
fn call_name(s: &str) -> Option<Option<usize>> {
    let mut chars = s.char_indices();
    match chars.next() {
        None => return None,
        Some((_, c)) if c.is_ascii_alphabetic() || c == '_' => {}
        Some(_) => return Some(None),
    }
    for (i, c) in chars {
        if c == '(' {
            return Some(Some(i + 1));
        }
        if !(is_word(c) || c == '.' || c == '-') {
            return Some(None);
        }
    }
    None
}

/// Where the list's text ends in `joined` if that has arrived: the start of white space, an
/// optional `]`, white space and a `<|tool_call_end|>`, at the first such closer. The closer is
/// searched for in the text added since the last search only.
fn list_end(joined: &str, open: &mut EndScan) -> Option<usize> {
    let close = match open.close {
        Some(close) => close,
        None => {
            let from = open.close_from.min(joined.len());
            let found = joined[from..].find(CLOSE).map(|i| from + i);
            open.close_from = joined.len().saturating_sub(CLOSE.len() - 1).max(from);
            while !joined.is_char_boundary(open.close_from) {
                open.close_from -= 1;
            }
            open.close = found;
            found?
        }
    };
    let before = joined[..close].trim_end_matches(is_space);
    let before = before.strip_suffix(']').unwrap_or(before);
    Some(before.trim_end_matches(is_space).len())
}

/// The end of the call that starts `joined` (see the module documentation).
///
/// The `)`s are scanned from where the last scan left off (`open.paren_from`): a `)` decided not
/// to end the call stays so, unless the character after it (and its white space) is `]` or
/// `<`, where the list's end may yet arrive and cut the text after the `)` away (those are kept,
/// `open.unsure`, and read again). After a `,`
/// the decision cannot change: cutting text away can neither complete a `NAME(` nor, once the
/// list's end is known, leave anything to wait for.
fn call_end(joined: &str, open: &mut EndScan) -> Decided {
    let list_end = list_end(joined, open);
    // The list's text, and whether its end is known.
    let (list, whole) = match list_end {
        Some(e) => (&joined[..e], true),
        None => (joined, false),
    };
    match call_name(list) {
        None if whole => return Decided::Stop,
        None => return Decided::Wait { known: 0 },
        Some(None) => return Decided::Stop,
        Some(Some(_)) => {}
    }
    // The `)`s whose decision may still change (each followed by `]` or `<`, where the list's
    // end may yet cut the text after it) are read again, in order, then the ones after `from`,
    // not read yet. Only those: rescanning from the first of them read everything after it
    // again on every chunk (a flood of white space after `)]<|tool_ca` took quadratic time).
    let from = open.paren_from.min(list.len());
    let mut earlier = std::mem::take(&mut open.unsure);
    earlier.retain(|&r| r < list.len());
    let fresh = list[from..].match_indices(')').map(|(r, _)| from + r);
    let mut unsure = Vec::new();
    for r in earlier.into_iter().chain(fresh) {
        match paren(list, whole, r, &mut open.spaces) {
            Paren::Ends(decided) => return decided,
            Paren::Waits => {
                // Read again from here next time, with the unsure ones before it.
                open.unsure = unsure;
                open.paren_from = r;
                return Decided::Wait { known: r };
            }
            Paren::Unsure => unsure.push(r),
            Paren::No => {}
        }
    }
    open.unsure = unsure;
    open.paren_from = list.len();
    // No `)` ends the call in the known text: it waits for more, or the list's end cuts it.
    if whole {
        Decided::Stop
    } else {
        Decided::Wait { known: list.len() }
    }
}

/// What the text tells of one `)` in the list's text (see [`call_end`]).
enum Paren {
    /// It ends the call.
    Ends(Decided),
    /// The text ends before that is decided.
    Waits,
    /// It does not end the call in the text known, but may once the list's end cuts the text
    /// after it (a `]` or `<` follows).
    Unsure,
    /// It does not end the call, for good.
    No,
}

/// The `)` at `r` in `list` (`whole`: the list's end is known), its white space read through
/// `spaces`.
fn paren(list: &str, whole: bool, r: usize, spaces: &mut SpaceRuns) -> Paren {
    let rest = &list[spaces.skip(list, r + 1, is_space)..];
    if rest.is_empty() {
        return match whole {
            // `)` then white space to the end of the list: its last call.
            true => Paren::Ends(Decided::End {
                end: r + 1,
                next: None,
            }),
            false => Paren::Waits,
        };
    }
    if !rest.starts_with(',') {
        return match rest.starts_with([']', '<']) {
            true => Paren::Unsure,
            false => Paren::No,
        };
    }
    let comma = list.len() - rest.len();
    let name = &list[spaces.skip(list, comma + 1, is_space)..];
    match call_name(name) {
        Some(Some(_)) => Paren::Ends(Decided::End {
            end: r + 1,
            next: Some(list.len() - name.len()),
        }),
        Some(None) => Paren::No,
        None if whole => Paren::No,
        None => Paren::Waits,
    }
}
