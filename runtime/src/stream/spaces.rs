//! Runs of white space in a text that only grows (a stream's output), remembered where a
//! pending decision reads them: a check that waits for more text reads its input again from the
//! start on every chunk, and a flood of white space inside it would otherwise be read again each
//! time (time quadratic in the run's length).

use crate::py::unicode::is_space;

/// Long runs of white space found, `(start, end)`. A run that ended where the text did is
/// extended next time; text already read is not read again.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpaceRuns(Vec<(usize, usize)>);

impl SpaceRuns {
    /// Runs shorter than this are read again: the checks that use this read a few places where
    /// white space may stand, so the runs kept are few.
    const LONG: usize = 32;
    const KEPT: usize = 16;

    /// Where the run of characters `is` holds for, from byte `i` of `text` (a character
    /// boundary), ends. Each `text` must be a prefix of one text that only grows (a shorter
    /// prefix than before is fine: a run read before is cut where it ends).
    pub(crate) fn skip(&mut self, text: &str, i: usize, is: impl Fn(char) -> bool) -> usize {
        let known = self.0.iter().position(|&(start, _)| start == i);
        let from = known.map_or(i, |k| self.0[k].1.min(text.len()));
        let Some(rest) = text.get(from..) else {
            return i;
        };
        let end = from + (rest.len() - rest.trim_start_matches(&is).len());
        match known {
            Some(k) => self.0[k].1 = end.max(self.0[k].1),
            None if end - i >= Self::LONG && self.0.len() < Self::KEPT => self.0.push((i, end)),
            None => {}
        }
        end
    }
}

/// Where a growing text's prefixes end less their trailing white space (Python's), each
/// character read once: an open call's known text ends at its last non-space character, and a
/// flood of white space at its end was trimmed again on every chunk.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LastNonSpace {
    /// How far the text has been read, and where its last non-space character ends.
    read_to: usize,
    end: usize,
    /// The last answer for a prefix shorter than the text read (`(to, end)`): a `)` that waits
    /// is asked about on every chunk.
    before: Option<(usize, usize)>,
}

impl LastNonSpace {
    /// `text[..to].trim_end_matches(is_space).len()`, for `text` that only grows between calls
    /// (`to` a character boundary).
    pub(crate) fn of(&mut self, text: &str, to: usize) -> usize {
        if to >= self.read_to {
            let Some(new) = text.get(self.read_to..to) else {
                return text[..to].trim_end_matches(is_space).len();
            };
            let kept = new.trim_end_matches(is_space).len();
            if kept > 0 {
                self.end = self.read_to + kept;
            }
            self.read_to = to;
            return self.end;
        }
        if self.end <= to {
            // The last non-space character read is before `to`: it is `to`'s too.
            return self.end;
        }
        match self.before {
            Some((at, end)) if at == to => end,
            _ => {
                let end = text[..to].trim_end_matches(is_space).len();
                self.before = Some((to, end));
                end
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Asked about any prefixes of a growing text, in any order the text allows, it answers
        /// as `trim_end_matches` does.
        #[test]
        fn last_non_space_trims_as_python_does(
            text in "[ \n\tax)\u{3000}]{0,200}",
            asks in prop::collection::vec((0usize..200, 0usize..200), 1..12),
        ) {
            let mut last = LastNonSpace::default();
            let mut grown = 0;
            for (grow, to) in asks {
                grown = (grown + grow).min(text.len());
                while !text.is_char_boundary(grown) {
                    grown -= 1;
                }
                let seen = &text[..grown];
                let to = to.min(grown);
                if !seen.is_char_boundary(to) {
                    continue;
                }
                let expected = seen[..to].trim_end_matches(is_space).len();
                prop_assert_eq!(last.of(seen, to), expected);
            }
        }
    }

    proptest! {
        /// Read as a text grows, in any chunks and from any positions, a skip ends where
        /// `trim_start_matches` of the whole text ends it.
        #[test]
        fn skips_as_a_trim_does(
            text in "[ \n\tax\u{3000}]{0,200}",
            cuts in prop::collection::vec(0usize..200, 0..8),
            starts in prop::collection::vec(0usize..200, 1..6),
        ) {
            let is = |c: char| c.is_whitespace();
            let mut runs = SpaceRuns::default();
            let mut limits: Vec<usize> = cuts.into_iter().map(|c| c.min(text.len())).collect();
            limits.push(text.len());
            limits.sort_unstable();
            // Growing, then a shorter prefix again (a text cut at a place found later).
            let last = limits.last().copied().unwrap_or(0);
            limits.push(last / 2);
            for limit in limits {
                let Some(grown) = text.get(..limit) else { continue };
                for &start in &starts {
                    let Some(rest) = grown.get(start..) else { continue };
                    let expected = start + rest.len() - rest.trim_start_matches(is).len();
                    prop_assert_eq!(runs.skip(grown, start, is), expected);
                }
            }
        }
    }
}
