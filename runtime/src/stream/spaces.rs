//! Runs of white space in a text that only grows (a stream's output), remembered where a
//! pending decision reads them: a check that waits for more text reads its input again from the
//! start on every chunk, and a flood of white space inside it would otherwise be read again each
//! time (time quadratic in the run's length).

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
    /// boundary), ends. `text` must be the same text each time, grown.
    pub(crate) fn skip(&mut self, text: &str, i: usize, is: impl Fn(char) -> bool) -> usize {
        let known = self.0.iter().position(|&(start, _)| start == i);
        let from = known.map_or(i, |k| self.0[k].1);
        let Some(rest) = text.get(from..) else {
            return i;
        };
        let end = from + (rest.len() - rest.trim_start_matches(&is).len());
        match known {
            Some(k) => self.0[k].1 = end,
            None if end - i >= Self::LONG && self.0.len() < Self::KEPT => self.0.push((i, end)),
            None => {}
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
