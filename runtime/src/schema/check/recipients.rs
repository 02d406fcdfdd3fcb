//! `functionary_v3_2`'s check ([`Check::FunctionaryV3_2`](super::Check)): the output outside
//! what the root pattern reads.
//!
//! MeetKai's chat template writes an assistant turn as `>>>all\n` and the text, then
//! `>>>NAME\n` and the JSON arguments of each call, then `<|eot_id|>` (the prompt ends with the
//! first `>>>`, which the root substitution puts back). The schema's root pattern is anchored at
//! the start only and every part of it is optional: it reads the `content` group and the
//! `tool_calls` group and ends at a terminator — `>>>all\n` and everything after it, a `>>>` and
//! a name cut at the end of the output, `<|eot_id|>`, or the end — or matches nothing at all. So
//! the schema drops, with success, text written without a recipient (`Hello`, `all Hello`: no
//! `>>>` header with its newline), text after a `>>>all\n` that follows the calls, and a
//! recipient cut at the end (`>>>get_wea`); its calls' iterator drops text among the calls as
//! [`Check::CallGaps`](super::Check) says; and it reads a second `>>>all\n` block after the
//! text (`all\nA>>>all\n{}`) as a call named `all`, which the check names too (the template
//! writes `all` for the text only).
//!
//! The check reads what the schema's own substitution, root pattern and calls' iterator read
//! (running them itself, or, behind a generated parser, from the record of the parse:
//! [`Check::verify_parse`](super::Check)), and names every part of the
//! output, up to the first `<|eot_id|>` after what the groups read (text after an end token is
//! dropped in every family, as the reference drops it), that is outside both groups and more
//! than the format's markup: white space, `>>>`, the `all` recipient with its newline, and `all`
//! (or a beginning of it) cut where the turn ends, which carries nothing yet.
//! A cut recipient other than `all` is a call's name the message does not carry: refused
//! (strict) or set aside (lenient), as every part a check names.

use crate::py::unicode::is_space;

use super::{call_gaps_iterator, region_gaps, root_rewritten, ReadAs, Schema, Unread, AMONG_CALLS};

/// The recipient marker, which the root substitution writes at the start of the output.
const MARK: &str = ">>>";
/// The end token.
const EOT: &str = "<|eot_id|>";

const CUT_RECIPIENT: &str = "a recipient cut at the end of the output (`>>>NAME` without the \
                             newline and the message after it; at the start of the output, where \
                             the prompt wrote the `>>>`, maybe text without a recipient): the \
                             schema would drop it";
const AFTER_CALLS: &str = "text after the message's text and calls (after a `>>>all` that \
                           follows the calls, or without a recipient): functionary v3.2's chat \
                           template writes the text (`>>>all\\n…`) before the calls, and the \
                           schema would drop this";
const ALL_AS_CALL: &str = "a second `>>>all` block after the message's text, which the schema \
                           reads as a call named `all`: functionary v3.2's chat template writes \
                           the text once, before the calls";
const NO_RECIPIENT: &str = "text without a recipient: functionary v3.2's chat template writes \
                            `>>>all\\n` before the message's text and `>>>NAME\\n` before each \
                            call's arguments, and the schema would drop this";

/// Every part of `text` the message of `schema` (functionary v3.2's) does not carry, in output
/// order: the parts of the calls' region outside every call, and the parts of the output
/// outside the root pattern's groups. Empty for a schema of another shape (no root
/// substitution that writes `>>>` before the output, no `content` or `tool_calls` group).
///
/// This is the searching check (the interpreter's, and the reference the recorded one is tested
/// against): it runs the root substitution, the root pattern and the calls' iterator itself,
/// then decides from what they read ([`decide`]), as the recorded check decides from what the
/// generated parse read.
pub(super) fn unread(schema: &Schema, text: &str) -> Vec<Unread> {
    let Some((content, calls)) = groups(schema) else {
        return Vec::new();
    };
    let Some(pattern) = &schema.root().regex else {
        return Vec::new();
    };
    let Some(rewritten) = root_rewritten(schema, text) else {
        return Vec::new();
    };
    let r = rewritten.as_ref();
    let Ok(Some(found)) = pattern.regex.search(r) else {
        return Vec::new();
    };
    let root = RootRead {
        rewritten: r,
        content: found.span(content),
        calls: found.span(calls),
    };
    // The calls' region: its calls, as the calls' iterator finds them.
    let mut read = Vec::new();
    let mut complete = true;
    if let (Some((start, end)), Some(iterator)) = (root.calls, call_gaps_iterator(schema)) {
        for call in iterator.regex.find_iter(&r[start..end]) {
            let Ok(call) = call else {
                complete = false;
                break;
            };
            read.push(CallRead::of(&call));
        }
    }
    decide(schema, text, &root, &read, complete)
}

/// The indices of the root pattern's `content` and `tool_calls` groups; `None` for a schema of
/// another shape, where the check has nothing to say.
pub(crate) fn groups(schema: &Schema) -> Option<(usize, usize)> {
    let pattern = schema.root().regex.as_deref()?;
    Some((
        pattern.regex.group_index("content")?,
        pattern.regex.group_index("tool_calls")?,
    ))
}

/// What the root pattern read: the text it searched (the output after the root substitution)
/// and the spans in it of its `content` and `tool_calls` groups, when it matched.
pub(crate) struct RootRead<'r> {
    /// The output after the root substitution.
    pub(crate) rewritten: &'r str,
    /// The `content` group's span in `rewritten`.
    pub(crate) content: Option<(usize, usize)>,
    /// The `tool_calls` group's span in `rewritten`: the calls' region.
    pub(crate) calls: Option<(usize, usize)>,
}

/// One match of the calls' iterator in the calls' region: its span and its first group's (the
/// call's text), both in the region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallRead {
    pub(crate) span: (usize, usize),
    pub(crate) text: (usize, usize),
}

impl CallRead {
    pub(crate) fn of(call: &crate::pyre::Captures<'_>) -> CallRead {
        let span = (call.start(), call.end());
        CallRead {
            span,
            text: call.span(1).unwrap_or(span),
        }
    }
}

/// The check's verdict from what the root pattern read (`root`, which matched) and the calls'
/// iterator found in its `tool_calls` region (`calls`, in order; `complete` unless the iterator
/// failed after them, when only the calls read so far are looked at, as the searching check
/// always did). The same for the searching check and the recorded one.
pub(crate) fn decide(
    schema: &Schema,
    text: &str,
    root: &RootRead<'_>,
    calls: &[CallRead],
    complete: bool,
) -> Vec<Unread> {
    let mut out = Vec::new();
    let r = root.rewritten;
    // The substitution replaces leading white space and a `>>>` with `>>>`: the rewritten text
    // is `>>>` and a tail of the output, so a position in it past the `>>>` is one in the output.
    let Some(shift) = r
        .strip_prefix(MARK)
        .filter(|tail| text.ends_with(tail))
        .map(|tail| text.len() - tail.len())
    else {
        return out;
    };
    let to_output = |p: usize| (p + shift).saturating_sub(MARK.len());
    let read: Vec<(usize, usize)> = [root.content, root.calls].into_iter().flatten().collect();
    // The calls' region: its parts outside every call, placed in the output.
    if let (Some((start, end)), Some(_)) = (root.calls, call_gaps_iterator(schema)) {
        let region = &r[start..end];
        let mut spans = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            spans.push(call.span);
            // The call's text (the iterator's group) is a second `>>>all` block: text, which
            // the schema reads as a call named `all`.
            let (a, b) = call.text;
            let piece = &region[a..b];
            let header = piece.strip_prefix(MARK).unwrap_or(piece);
            if recipient_all(header, false) > 0 {
                let from = start + a + (piece.len() - header.len());
                let to = start + a + piece.trim_end_matches(is_space).len();
                out.push(Unread {
                    field: "tool_calls",
                    span: (to_output(from), to_output(to)),
                    what: ALL_AS_CALL.into(),
                    read_as: ReadAs::Item(index),
                });
            }
        }
        if !complete {
            return out;
        }
        for gap in region_gaps(None, region, &spans) {
            let (a, b) = gap.range;
            out.push(Unread {
                field: "tool_calls",
                span: (to_output(start + a), to_output(start + b)),
                what: AMONG_CALLS.into(),
                read_as: ReadAs::Nothing,
            });
        }
    }
    // The output outside the groups, up to the end token that ends the turn.
    let read_to = read.last().map_or(0, |&(_, end)| end);
    let limit = super::find_from(r, EOT, read_to).unwrap_or(r.len());
    let mut at = 0;
    for (start, end) in read.iter().copied().chain([(limit, limit)]) {
        let gap = (at, start.min(limit));
        at = end;
        if gap.0 >= gap.1 {
            continue;
        }
        let Some((a, b)) = beyond_markup(r, gap, limit) else {
            continue;
        };
        let cut = limit == r.len() && is_cut_recipient(r, a, b);
        let (field, what) = if cut {
            ("tool_calls", CUT_RECIPIENT)
        } else if gap.0 > 0 {
            ("content", AFTER_CALLS)
        } else {
            ("content", NO_RECIPIENT)
        };
        out.push(Unread {
            field,
            span: (to_output(a), to_output(b)),
            what: what.into(),
            read_as: ReadAs::Nothing,
        });
    }
    out
}

/// The range of `r[start..end]` from its first to its last character that is not the format's
/// markup (white space, `>>>`, the `all` recipient and its newline, `all` or a beginning of it
/// cut where the turn ends, at `turn_end`); `None` when it is all markup.
fn beyond_markup(r: &str, (start, end): (usize, usize), turn_end: usize) -> Option<(usize, usize)> {
    let mut text: Option<(usize, usize)> = None;
    let mut i = start;
    while i < end {
        let rest = &r[i..end];
        if let Some(after) = rest.strip_prefix(MARK) {
            i += MARK.len() + recipient_all(after, end == turn_end);
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if !is_space(c) {
            let first = text.map_or(i, |(first, _)| first);
            text = Some((first, i + c.len_utf8()));
        }
        i += c.len_utf8();
    }
    text
}

/// The length of the `all` recipient at the start of `after` (the text after a `>>>`): `all`,
/// spaces or tabs, and a newline (`\r\n` too); or, when `after` runs to the end of the turn (the
/// output's, or `<|eot_id|>`: `at_end`), `all` or a beginning of it and nothing but white space
/// after it. 0 otherwise.
fn recipient_all(after: &str, at_end: bool) -> usize {
    let name_len = after
        .find(|c: char| is_space(c) || c == '>')
        .unwrap_or(after.len());
    let name = &after[..name_len];
    if name == "all" {
        let rest = after[3..].trim_start_matches([' ', '\t']);
        let rest = rest.strip_prefix('\r').unwrap_or(rest);
        if let Some(rest) = rest.strip_prefix('\n') {
            return after.len() - rest.len();
        }
    }
    if at_end && "all".starts_with(name) && after[name_len..].chars().all(is_space) {
        return after.len();
    }
    0
}

/// Whether `r[a..b]`, the text the check names at the end of the output, is a recipient cut
/// there: right after a `>>>`, a name without white space or `>`.
fn is_cut_recipient(r: &str, a: usize, b: usize) -> bool {
    r[..a].ends_with(MARK)
        && !r[a..b].contains(|c: char| is_space(c) || c == '>')
        && r[b..].chars().all(is_space)
}
