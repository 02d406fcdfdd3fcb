//! What every scan of decided calls reports (a JSON list's items, JSON objects one after another,
//! a pythonic call list, calls to recipients), so that the profiled stream drives all of them
//! with one loop: each scan knows its own format, and only says, step by step, which call the
//! text that has arrived decides, or how far the call being written is known.

use crate::value::Value;

/// What a scan found next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallStep {
    /// A call decided: its raw text `start..end` in the output, and its value as the final
    /// message has it.
    Call {
        start: usize,
        end: usize,
        value: Value,
    },
    /// A call is being written from `start`; the text up to `known` is its own whatever comes
    /// next (strict streams send it as it arrives).
    Open { start: usize, known: usize },
    /// No call is decided; more text is needed.
    Wait,
    /// The scan stopped: the final message brings the rest.
    Done,
}

/// How much of the calls' text a scan may read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallsText<'t> {
    /// The output so far.
    pub(crate) text: &'t str,
    /// The calls' text is known up to here (the first marker that may end it, or the end of
    /// the output less a marker's possible start).
    pub(crate) limit: usize,
    /// The length of the end token at `limit`, when one has arrived there: the calls' text ends
    /// at `limit` for sure.
    pub(crate) end_token: Option<usize>,
}

impl CallsText<'_> {
    /// Whether the calls' text is whole (an end token has arrived at `limit`).
    pub(crate) fn ended(&self) -> bool {
        self.end_token.is_some()
    }
}

/// A scan that reads calls as they are decided (see [`CallStep`]).
pub(crate) trait DecidedCalls {
    /// Reads the calls' text on from where the last call stopped.
    fn next(&mut self, calls: CallsText<'_>) -> CallStep;
}

/// The calls of an output whose calls' text is whole, not sent yet: once the end token has
/// arrived, a scan parses the output once (as the one-shot parse does) and hands the calls it
/// had not sent out one by one, one per step. Parsing once per call instead cost time quadratic
/// in the number of calls (5,000 lfm2 calls took 53 s).
#[derive(Debug, Default)]
pub(crate) struct RestOfCalls(Option<std::vec::IntoIter<Value>>);

impl RestOfCalls {
    /// The next call not sent, the first `sent` of the calls having been sent while the text
    /// arrived; `parse` gives the calls, and is called the first time only. `None` when no call
    /// is left, or the parse fails.
    pub(crate) fn next(
        &mut self,
        sent: usize,
        parse: impl FnOnce() -> Option<Vec<Value>>,
    ) -> Option<Value> {
        if self.0.is_none() {
            let mut calls = parse()?.into_iter();
            if sent > 0 {
                calls.nth(sent - 1);
            }
            self.0 = Some(calls);
        }
        self.0.as_mut()?.next()
    }
}
