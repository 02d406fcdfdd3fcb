//! The compiled Rust engines behind a [`super::PyRegex`].

use regex_automata::util::primitives::NonMaxUsize;
use regex_automata::{meta, Anchored, Input};

use super::spans::Spans;
use crate::{Engine, MatchError, RegexError};

/// Backtracking budget for fancy-regex: far above anything a sane schema needs on a 64 KB
/// input, while still turning catastrophic patterns into a [`MatchError`] instead of a hang.
pub const FANCY_BACKTRACK_LIMIT: usize = 50_000_000;

/// Compiled-program size limit for both engines (the large Unicode classes need room).
const SIZE_LIMIT: usize = 256 << 20;

/// Capture slots kept on the stack (two per group); more groups use the heap.
const STACK_SLOTS: usize = 16;

/// A compiled pattern on either engine.
#[derive(Debug)]
pub(crate) enum Compiled {
    Regex(meta::Regex),
    Fancy(fancy_regex::Regex),
}

impl Compiled {
    pub(crate) fn new(
        pattern: &str,
        engine: Engine,
        backtrack_limit: usize,
    ) -> Result<Self, RegexError> {
        match engine {
            Engine::Regex => meta::Builder::new()
                .configure(
                    meta::Config::new()
                        .nfa_size_limit(Some(SIZE_LIMIT))
                        .dfa_size_limit(Some(SIZE_LIMIT))
                        .hybrid_cache_capacity(8 << 20),
                )
                .syntax(regex_automata::util::syntax::Config::new().nest_limit(1000))
                .build(pattern)
                .map(Compiled::Regex)
                .map_err(|e| compile_error(&e.to_string())),
            Engine::Fancy => fancy_regex::RegexBuilder::new(pattern)
                .backtrack_limit(backtrack_limit)
                .delegate_size_limit(SIZE_LIMIT)
                .delegate_dfa_size_limit(SIZE_LIMIT)
                .build()
                .map(Compiled::Fancy)
                .map_err(|e| compile_error(&e.to_string())),
        }
    }

    /// The highest-priority match starting exactly at byte `at` (`regex` engine only; `None`
    /// from the backtracking engine, which has no anchored search).
    pub(crate) fn captures_anchored_at(&self, hay: &str, at: usize) -> Option<Option<Spans>> {
        match self {
            Compiled::Regex(re) => Some(Self::regex_slots(
                re,
                &Input::new(hay).range(at..).anchored(Anchored::Yes),
            )),
            Compiled::Fancy(_) => None,
        }
    }

    fn regex_slots(re: &meta::Regex, input: &Input<'_>) -> Option<Spans> {
        let groups = re.group_info().group_len(regex_automata::PatternID::ZERO);
        let mut stack = [None::<NonMaxUsize>; STACK_SLOTS];
        let mut heap;
        let slots: &mut [Option<NonMaxUsize>] = if groups * 2 <= STACK_SLOTS {
            &mut stack[..groups * 2]
        } else {
            heap = vec![None; groups * 2];
            &mut heap
        };
        re.search_slots(input, slots)?;
        let mut spans = Spans::new(groups);
        for (i, pair) in slots.chunks_exact(2).enumerate() {
            if let (Some(s), Some(e)) = (pair[0], pair[1]) {
                spans.set(i, Some((s.get(), e.get())));
            }
        }
        Some(spans)
    }

    /// The leftmost-first match starting at or after byte `start` (the text before `start`
    /// still counts for look-behind, `\b` and `^`), as spans in Rust group numbering.
    pub(crate) fn captures_at(&self, hay: &str, start: usize) -> Result<Option<Spans>, MatchError> {
        if start > hay.len() {
            return Ok(None);
        }
        match self {
            Compiled::Regex(re) => Ok(Self::regex_slots(re, &Input::new(hay).range(start..))),
            Compiled::Fancy(re) => match re.captures_from_pos(hay, start) {
                Ok(Some(caps)) => {
                    let mut spans = Spans::new(caps.len());
                    for (i, m) in caps.iter().enumerate() {
                        spans.set(i, m.map(|m| (m.start(), m.end())));
                    }
                    Ok(Some(spans))
                }
                Ok(None) => Ok(None),
                Err(e) => Err(MatchError {
                    message: format!("regex matching failed: {e}"),
                }),
            },
        }
    }
}

fn compile_error(detail: &str) -> RegexError {
    RegexError::new(
        format!("the translated pattern does not compile in Rust: {detail}"),
        "simplify the pattern (e.g. smaller repetition counts, fixed-width look-behinds \
         without backreferences)",
        None,
    )
}
