//! The scan's delimiter searches, resumed across feeds (issue 21).
//!
//! While a delimiter may still match at the end of the buffer (a partial match), the parser
//! holds the text from its start and searches again from the same position on every feed. A
//! partial match that grows without bound (`<function=get_wea` + a run of spaces, under
//! `<function=(?P<name>[^>\n]+)>`; `</function>` + white space under `</function>\s*</tool_call>`)
//! was read whole by every feed's search, forwards for a complete match and backwards for the
//! partial one: quadratic in the run. Here each search keeps what it read ([`SearchMemo`], one
//! per delimiter in the parser) and reads only the new bytes:
//! - literals: no occurrence in what was read, so one must end in the new bytes;
//! - patterns without look-around: an unanchored forward DFA says whether any complete match
//!   exists (`Unmatched`; when one does, the full search runs and finds it, as before), and the
//!   leftmost partial match is carried forward (`Prefixes`, see `stream::resume`). The first
//!   search from a position is the regex crate's (its prefilters are faster than stepping a DFA
//!   byte by byte, and a one-shot parse searches from each position once); the DFA starts on
//!   the second.
//!
//! The answers are the full searches' ([`Delim::search_resumed`]'s property test compares them).

use super::delim::{Literals, Pattern, Search};
use super::Delim;
use crate::stream::resume::{Leftmost, NoMatch};
use regex_automata::hybrid::dfa::Cache;

/// What the last searches of one delimiter read (see the module docs). The buffer only grows,
/// so what they found stays true.
#[derive(Debug, Default)]
pub(crate) struct SearchMemo {
    /// Literals: none occurs in `buffer[from..read]`, as `(from, read)`.
    clear: Option<(usize, usize)>,
    /// Patterns: the position whose full search found no complete match last time. The DFA
    /// starts only on a second search from the same position: a one-shot parse, which searches
    /// from each position once, pays for the regex search alone, as before.
    searched: Option<usize>,
    /// Patterns: no complete match from a position, and the DFA's state.
    unmatched: Option<NoMatch>,
    /// Patterns: the leftmost partial match found last, carried forward.
    leftmost: Option<Leftmost>,
    full_cache: Option<Cache>,
    prefix_cache: Option<Cache>,
}

impl Delim {
    /// `pattern.search(hay, pos, partial)` ([`Delim::search`]'s answer), reading only what
    /// `memo` had not.
    pub(crate) fn search_resumed(
        &self,
        hay: &str,
        pos: usize,
        partial: bool,
        memo: &mut SearchMemo,
    ) -> Search {
        match self {
            Delim::Literals(l) => literals(l, hay, pos, partial, memo),
            Delim::Pattern(p) => pattern(p, hay, pos, partial, memo),
        }
    }

    /// The search read whole.
    #[cfg(test)]
    pub(crate) fn search(&self, hay: &str, pos: usize, partial: bool) -> Search {
        match self {
            Delim::Literals(l) => l.search(hay, pos, partial),
            Delim::Pattern(p) => p.search(hay, pos, partial),
        }
    }
}

fn literals(l: &Literals, hay: &str, pos: usize, partial: bool, memo: &mut SearchMemo) -> Search {
    let len = hay.len();
    let result = match memo.clear {
        Some((from, read)) if from <= pos && read <= len => {
            l.search_after(hay, pos, read.max(pos), partial)
        }
        _ => l.search(hay, pos, partial),
    };
    memo.clear = match result {
        Search::Full(_) => None,
        _ => Some((pos, len)),
    };
    result
}

fn pattern(p: &Pattern, hay: &str, pos: usize, partial: bool, memo: &mut SearchMemo) -> Search {
    let Some((unmatched, prefixes)) = &p.resumable else {
        return p.search(hay, pos, partial);
    };
    let (bytes, len) = (hay.as_bytes(), hay.len());
    if pos > len {
        return Search::None;
    }
    if memo.searched != Some(pos) {
        let result = p.search(hay, pos, partial);
        memo.searched = (!matches!(result, Search::Full(_))).then_some(pos);
        return result;
    }
    let cache = memo
        .full_cache
        .get_or_insert_with(|| unmatched.create_cache());
    memo.unmatched = match unmatched.check(cache, bytes, pos, memo.unmatched) {
        Ok(Some(none)) => Some(none),
        // A complete match (or the DFA gave up): the full search finds it, once, since the
        // parser then commits it or holds it for at most the match's own growth.
        Ok(None) | Err(_) => {
            memo.searched = None;
            return p.search(hay, pos, partial);
        }
    };
    if !partial {
        return Search::None;
    }
    let cache = memo
        .prefix_cache
        .get_or_insert_with(|| prefixes.create_cache());
    // The backwards search (`Q\z` on the regex crate) from the first char boundary at or
    // after `lower`: a partial match is text, so it starts on one.
    let search = |lower: usize| {
        let at = (lower..=len)
            .find(|&i| hay.is_char_boundary(i))
            .unwrap_or(len);
        Ok(p.partial_start(hay, at))
    };
    match prefixes.leftmost(cache, bytes, pos, memo.leftmost, search) {
        Ok(found) => {
            memo.leftmost = Some(found);
            if found.start < len {
                Search::Partial(found.start)
            } else {
                Search::None
            }
        }
        Err(_) => {
            memo.leftmost = None;
            p.partial_start(hay, pos)
                .map_or(Search::None, Search::Partial)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyre::PyRegex;
    use proptest::prelude::*;

    /// qwen3_5's call delimiters and content close (the runs of issue 21), patterns whose
    /// candidates die while later ones live, one with look-around (not resumed), literals.
    fn delims() -> Vec<Delim> {
        let pattern =
            |p: &str| Delim::Pattern(Box::new(Pattern::new(PyRegex::new(p).unwrap()).unwrap()));
        let literals = |l: &[&str]| {
            Delim::Literals(Literals::new(l.iter().map(|s| (*s).to_owned()).collect()))
        };
        vec![
            pattern(r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>"),
            pattern(r"</function>\s*</tool_call>"),
            pattern(r"\s*(?:<\|im_end\|>|<\|endoftext\|>)"),
            pattern(r"[ab]*c|a+\s*b"),
            pattern(r"(?:ab)*c|x{0,3}y"),
            pattern(r"(?m)x$|^ab|\s*z"),
            literals(&["<|im_end|>"]),
            literals(&["</think>", "</think>>", "ab", "abc"]),
        ]
    }

    const PIECES: &[&str] = &[
        " ",
        "  ",
        "\n",
        "\u{2028}",
        "<",
        "<tool_call>",
        "<function=get_wea",
        "ther>",
        "</function>",
        "</tool_call>",
        "<|im_e",
        "nd|>",
        "nd|",
        "</think",
        ">",
        "a",
        "b",
        "ab",
        "c",
        "x",
        "y",
        "z",
        "é",
    ];

    /// Appends pieces; `pos` moves as the scan moves it (to a partial start, past a match, or
    /// anywhere ahead); each resumed search equals the search read whole.
    fn walk(delim: &Delim, steps: &[(usize, u8, usize)]) {
        let mut memo = SearchMemo::default();
        let mut hay = String::new();
        let mut pos = 0;
        for (piece, how, to) in steps {
            hay.push_str(PIECES[*piece]);
            if *how == 0 {
                let bounds: Vec<usize> = (pos..=hay.len())
                    .filter(|&i| hay.is_char_boundary(i))
                    .collect();
                pos = bounds[to % bounds.len()];
            }
            let partial = *how != 1;
            let resumed = delim.search_resumed(&hay, pos, partial, &mut memo);
            let whole = delim.search(&hay, pos, partial);
            assert_eq!(resumed, whole, "{hay:?} from {pos}, partial {partial}");
            match resumed {
                Search::Partial(at) if *how == 2 => pos = at,
                Search::Full(m) if *how == 3 => pos = m.end,
                _ => {}
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn resumed_search_is_whole_search(
            which in 0..delims().len(),
            steps in prop::collection::vec((0..PIECES.len(), 0u8..8, any::<usize>()), 0..40),
        ) {
            walk(&delims()[which], &steps);
        }
    }

    /// The chunkings where a resumed search's shortcut could miss a match: a literal whose last
    /// byte comes alone, a name that grows by single spaces and then closes.
    #[test]
    fn matches_completed_by_one_byte_are_found() {
        let [.., im_end, _] = &delims()[..] else {
            unreachable!()
        };
        let steps = |pieces: &[usize]| -> Vec<(usize, u8, usize)> {
            pieces.iter().map(|&p| (p, 7, 0)).collect()
        };
        let at = |piece: &str| PIECES.iter().position(|p| *p == piece).unwrap();
        walk(im_end, &steps(&[at("a"), at("<|im_e"), at("nd|"), at(">")]));
        let call = &delims()[0];
        let mut name = vec![at("<tool_call>"), at("\n"), at("<function=get_wea")];
        name.extend([at(" "); 50]);
        name.push(at("ther>"));
        walk(call, &steps(&name));
    }
}
