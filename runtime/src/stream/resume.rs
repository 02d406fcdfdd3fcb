//! Delimiter questions about a buffer that only grows, answered again after each append from
//! what the previous answer read (issue 21: a long held tail must not be read again per feed).
//!
//! Two questions, each with a forward lazy DFA whose state is kept between calls:
//! - [`Prefixes`]: where the leftmost *partial* match starts, i.e. the leftmost `s` with
//!   `hay[s..]` in a partial-match language `Q` (`template::delim::reads_at_end`). Searching
//!   backwards from the end re-reads the whole partial match on every append (a run of white
//!   space under `\s*<|im_end|>` is one); here the leftmost start found last time is carried
//!   forward instead, and the backwards search runs only when that start stops being one.
//! - [`Unmatched`]: whether any *complete* match starts at or after a position: an unanchored
//!   forward DFA over the text read so far, stepped over the new bytes only.
//!
//! Both rest on `Q` having no look-around (`Prefixes::new` and `Unmatched::new` refuse it).
//! Then `Q` is prefix-closed at character boundaries: it is the set of texts after which the
//! backtracking matcher tries to read one more character, and a path that reads `uc` tried to
//! read `c` after `u`. So if `hay[s..n]` is not in `Q`, neither is `hay[s..m]` for any `m ≥ n`:
//! a start that failed once never comes back, the leftmost start only moves right, and a
//! candidate whose forward state dies is gone for good. With look-around, an assertion at the
//! end of `u` sees the end of the text and `Q` need not be prefix-closed (`a\Bbc`: `ab` is a
//! partial match, `a` is not), so those delimiters keep the full searches.
//!
//! Lazy DFA state ids are only valid until the cache is cleared: a kept state remembers the
//! cache's clear count and is dropped (the question answered afresh) when it changed.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::hir::Hir;

/// Size limits of these DFAs' NFAs and caches (small for real delimiters; a pathological one
/// just goes without resumption).
const LIMIT: usize = 1 << 20;

/// The search gave up (a DFA quit or failed): the caller runs its full search instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GaveUp;

/// A forward lazy DFA of `h` (`MatchKind::All`: a state is dead only when no extension can
/// match), or `None` when `h` has look-around or the DFA cannot be built.
fn forward_dfa(h: &Hir) -> Option<DFA> {
    if !h.properties().look_set().is_empty() {
        return None;
    }
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .which_captures(thompson::WhichCaptures::None)
                .nfa_size_limit(Some(LIMIT)),
        )
        .build_from_hir(h)
        .ok()?;
    DFA::builder()
        .configure(
            DFA::config()
                .match_kind(MatchKind::All)
                .cache_capacity(LIMIT),
        )
        .build_from_nfa(nfa)
        .ok()
}

/// A DFA state kept between calls: valid while the cache has not been cleared since.
#[derive(Debug, Clone, Copy)]
struct Kept {
    state: LazyStateID,
    /// The buffer length the state has read to.
    at: usize,
    clears: usize,
}

impl Kept {
    fn valid(&self, cache: &Cache, len: usize) -> bool {
        self.clears == cache.clear_count() && self.at <= len
    }
}

/// Steps `sid` over `bytes`; `Ok(None)` when the state dies.
fn step(
    dfa: &DFA,
    cache: &mut Cache,
    mut sid: LazyStateID,
    bytes: &[u8],
) -> Result<Option<LazyStateID>, GaveUp> {
    for &b in bytes {
        sid = dfa.next_state(cache, sid, b).map_err(|_| GaveUp)?;
        if sid.is_dead() {
            return Ok(None);
        }
        if sid.is_quit() {
            return Err(GaveUp);
        }
    }
    Ok(Some(sid))
}

/// The forward DFA of a prefix-closed partial-match language `Q` (see the module docs).
#[derive(Debug)]
pub(crate) struct Prefixes {
    dfa: DFA,
}

/// The leftmost partial match found in `hay[from..len]`: it starts at `start` (`len`: none),
/// and `kept` is the forward DFA's state after `hay[start..len]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leftmost {
    /// The `from` it was found for: starts before it were not looked at.
    from: usize,
    pub start: usize,
    kept: Option<Kept>,
}

impl Leftmost {
    /// A start found without the forward DFA: carried nowhere.
    pub(crate) fn untracked(from: usize, start: usize) -> Leftmost {
        Leftmost {
            from,
            start,
            kept: None,
        }
    }
}

impl Prefixes {
    /// `None` when `q` has look-around (it need not be prefix-closed) or is too large.
    pub(crate) fn new(q: &Hir) -> Option<Self> {
        Some(Prefixes {
            dfa: forward_dfa(q)?,
        })
    }

    pub(crate) fn create_cache(&self) -> Cache {
        self.dfa.create_cache()
    }

    /// The leftmost `s` in `from..=len` with `hay[s..len]` in `Q` (`len` when there is none).
    ///
    /// `prev` is this call's answer for the same `from` (or an earlier one: see below) on a
    /// prefix of `hay`. No start before `prev.start` can be one now (prefix closure), so when
    /// `prev.start` still is, it is the answer, found by stepping its state over the new bytes.
    /// Otherwise `search(lower)` finds the leftmost start at or after `lower` (a search back
    /// from the end, whose cost is what that start's match reads), from just past the failed
    /// candidate. `prev` stays valid for a later `from` that is at or before `prev.start`.
    pub(crate) fn leftmost(
        &self,
        cache: &mut Cache,
        hay: &[u8],
        from: usize,
        prev: Option<Leftmost>,
        search: impl FnOnce(usize) -> Result<Option<usize>, GaveUp>,
    ) -> Result<Leftmost, GaveUp> {
        let len = hay.len();
        let mut lower = from;
        if let Some(Leftmost {
            from: was,
            start,
            kept: Some(kept),
        }) = prev
        {
            if was <= from && from <= start && kept.valid(cache, len) {
                let new = hay.get(kept.at..len).ok_or(GaveUp)?;
                if let Some(sid) = step(&self.dfa, cache, kept.state, new)? {
                    let clears = cache.clear_count();
                    let eoi = self.dfa.next_eoi_state(cache, sid).map_err(|_| GaveUp)?;
                    if eoi.is_match() {
                        return Ok(Leftmost {
                            from,
                            start,
                            kept: Some(Kept {
                                state: sid,
                                at: len,
                                clears,
                            }),
                        });
                    }
                }
                // `hay[start..len]` is not in `Q`, and by prefix closure never will be.
                lower = start + 1;
            }
        }
        let start = if lower > len {
            len
        } else {
            search(lower)?.unwrap_or(len)
        };
        Ok(Leftmost {
            from,
            start,
            kept: self.track(cache, hay, start)?,
        })
    }

    /// The state after `hay[start..]` from the anchored start (`None`: dead, so `hay[start..]`
    /// is no candidate; kept as none).
    fn track(&self, cache: &mut Cache, hay: &[u8], start: usize) -> Result<Option<Kept>, GaveUp> {
        let len = hay.len();
        let input = Input::new(hay).range(start..len).anchored(Anchored::Yes);
        let sid = self
            .dfa
            .start_state_forward(cache, &input)
            .map_err(|_| GaveUp)?;
        let sid = step(&self.dfa, cache, sid, hay.get(start..).unwrap_or_default())?;
        Ok(sid.map(|state| Kept {
            state,
            at: len,
            clears: cache.clear_count(),
        }))
    }
}

/// The unanchored forward DFA of a delimiter's complete matches (see the module docs).
#[derive(Debug)]
pub(crate) struct Unmatched {
    dfa: DFA,
}

/// No complete match starts at or after `from` and ends by `kept.at`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoMatch {
    from: usize,
    kept: Kept,
}

impl Unmatched {
    /// `None` when `h` has look-around or is too large.
    pub(crate) fn new(h: &Hir) -> Option<Self> {
        Some(Unmatched {
            dfa: forward_dfa(h)?,
        })
    }

    pub(crate) fn create_cache(&self) -> Cache {
        self.dfa.create_cache()
    }

    /// `Ok(Some)` when no complete match starts at or after `from` in `hay` (to pass back as
    /// `prev` next time), `Ok(None)` when one does. Reads only what `prev` (for the same
    /// `from`, on a prefix of `hay`) had not.
    pub(crate) fn check(
        &self,
        cache: &mut Cache,
        hay: &[u8],
        from: usize,
        prev: Option<NoMatch>,
    ) -> Result<Option<NoMatch>, GaveUp> {
        let len = hay.len();
        let kept = match prev {
            Some(p) if p.from == from && p.kept.valid(cache, len) => p.kept,
            _ => {
                let input = Input::new(hay).range(from..len);
                let state = self
                    .dfa
                    .start_state_forward(cache, &input)
                    .map_err(|_| GaveUp)?;
                Kept {
                    state,
                    at: from,
                    clears: cache.clear_count(),
                }
            }
        };
        let mut sid = kept.state;
        for &b in hay.get(kept.at..len).ok_or(GaveUp)? {
            sid = self.dfa.next_state(cache, sid, b).map_err(|_| GaveUp)?;
            // Match states come one byte late: this one ended before `b`.
            if sid.is_match() {
                return Ok(None);
            }
            if sid.is_quit() {
                return Err(GaveUp);
            }
            if sid.is_dead() {
                break;
            }
        }
        let clears = cache.clear_count();
        if self
            .dfa
            .next_eoi_state(cache, sid)
            .map_err(|_| GaveUp)?
            .is_match()
        {
            return Ok(None);
        }
        Ok(Some(NoMatch {
            from,
            kept: Kept {
                state: sid,
                at: len,
                clears,
            },
        }))
    }
}
