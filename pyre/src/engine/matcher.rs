//! The compiled Rust engines behind a [`super::PyRegex`].

use regex_automata::util::primitives::NonMaxUsize;
use regex_automata::{meta, Anchored, Input};

use super::spans::Spans;
use crate::{Engine, MatchError, RegexError};

/// The fixed part of every backtracking budget (steps of our backtracker, backtracks of
/// fancy-regex) on patterns that only a backtracker can run: what a search may spend on any
/// input, however short. See [`STEPS_PER_BYTE`] for the part that grows with the input.
pub const FANCY_BACKTRACK_LIMIT: usize = 1_000_000;

/// The backtracking budget's growth per input byte (see [`FANCY_BACKTRACK_LIMIT`]): a search of
/// `n` bytes on a pattern only a backtracker can run stops after
/// `FANCY_BACKTRACK_LIMIT + STEPS_PER_BYTE * n` steps with a [`MatchError`] whose
/// [`MatchError::budget`] is set. Linear patterns need a few steps per byte.
pub const STEPS_PER_BYTE: usize = 1_000;

/// Inputs up to this many bytes share the smallest fancy-regex budget; each doubling of the
/// input above it gets a fancy-regex compiled with a doubled budget (built on first use).
pub(crate) const FANCY_RUNG_BYTES: usize = 1 << 10;

/// Fancy-regex variants: rung `k` covers inputs up to `FANCY_RUNG_BYTES << k` bytes.
pub(crate) const FANCY_RUNGS: usize = 48;

/// The rung whose budget covers an input of `len` bytes.
pub(crate) fn fancy_rung(len: usize) -> usize {
    let mut k = 0;
    while k + 1 < FANCY_RUNGS && (FANCY_RUNG_BYTES << k) < len {
        k += 1;
    }
    k
}

/// fancy-regex's backtrack limit on rung `k`, from the budget's fixed part `base`.
pub(crate) fn fancy_limit(base: usize, k: usize) -> usize {
    base.saturating_add(STEPS_PER_BYTE.saturating_mul(FANCY_RUNG_BYTES << k))
}

/// Compiled-program size limit for both engines (the large Unicode classes need room).
const SIZE_LIMIT: usize = 256 << 20;

/// Capture slots kept on the stack (two per group); more groups use the heap.
const STACK_SLOTS: usize = 16;

/// A compiled pattern on either engine.
#[derive(Debug, Clone)]
pub(crate) enum Compiled {
    Regex(meta::Regex),
    /// The backtracker and its backtrack limit.
    Fancy(fancy_regex::Regex, usize),
}

impl Compiled {
    pub(crate) fn new(
        pattern: &str,
        engine: Engine,
        backtrack_limit: usize,
    ) -> Result<Self, RegexError> {
        // Fuzz builds remember compiled engines (see `crate::fuzzing_memo` for why).
        #[cfg(fuzzing)]
        return crate::fuzzing_memo::remembered(
            format!("{engine:?} {backtrack_limit} {pattern}"),
            || Self::build(pattern, engine, backtrack_limit),
        );
        #[cfg(not(fuzzing))]
        Self::build(pattern, engine, backtrack_limit)
    }

    fn build(pattern: &str, engine: Engine, backtrack_limit: usize) -> Result<Self, RegexError> {
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
                .map(|re| Compiled::Fancy(re, backtrack_limit))
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
            Compiled::Fancy(..) => None,
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
            Compiled::Fancy(re, limit) => match re.captures_from_pos(hay, start) {
                Ok(Some(caps)) => {
                    let mut spans = Spans::new(caps.len());
                    for (i, m) in caps.iter().enumerate() {
                        spans.set(i, m.map(|m| (m.start(), m.end())));
                    }
                    Ok(Some(spans))
                }
                Ok(None) => Ok(None),
                Err(fancy_regex::Error::RuntimeError(
                    fancy_regex::RuntimeError::BacktrackLimitExceeded,
                )) => Err(MatchError::too_costly(*limit as u64, hay.len())),
                Err(e) => Err(MatchError {
                    message: format!("regex matching failed: {e}"),
                    budget: None,
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
