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
