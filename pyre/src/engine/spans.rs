//! Capture spans without a heap allocation for the common case (a handful of groups).
//!
//! Inline spans are `u32` offsets: a match result is moved through several layers on every
//! search, and at 8 bytes per group those moves stay register copies rather than `memcpy` calls
//! (with `Option<(usize, usize)>`, 24 bytes per group, they were a third of a short search).
//! An offset that does not fit moves the spans to the heap.

/// Groups (including group 0) stored inline; patterns with more use the heap.
const INLINE: usize = 8;
/// Marks a group that did not take part (no inline offset reaches it).
const UNSET: u32 = u32::MAX;

/// One optional `(start, end)` byte span per group.
#[derive(Debug, Clone)]
pub(crate) enum Spans {
    Inline { len: u8, spans: [[u32; 2]; INLINE] },
    Heap(Vec<Option<(usize, usize)>>),
}

impl Spans {
    /// `len` groups, none set.
    pub(crate) fn new(len: usize) -> Self {
        match u8::try_from(len) {
            Ok(len) if usize::from(len) <= INLINE => Spans::Inline {
                len,
                spans: [[UNSET; 2]; INLINE],
            },
            _ => Spans::Heap(vec![None; len]),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Spans::Inline { len, .. } => usize::from(*len),
            Spans::Heap(v) => v.len(),
        }
    }

    /// Group `i`'s span; `None` when it did not take part or does not exist.
    pub(crate) fn get(&self, i: usize) -> Option<(usize, usize)> {
        match self {
            Spans::Inline { len, spans } => {
                if i >= usize::from(*len) {
                    return None;
                }
                let [s, e] = spans[i];
                (s != UNSET).then_some((s as usize, e as usize))
            }
            Spans::Heap(v) => v.get(i).copied().flatten(),
        }
    }

    /// Sets group `i`'s span (ignored for a group that does not exist).
    pub(crate) fn set(&mut self, i: usize, span: Option<(usize, usize)>) {
        if i >= self.len() {
            return;
        }
        if let Spans::Inline { spans, .. } = self {
            let inline = match span {
                None => Some([UNSET; 2]),
                Some((s, e)) => match (u32::try_from(s), u32::try_from(e)) {
                    (Ok(s), Ok(e)) if s != UNSET && e != UNSET => Some([s, e]),
                    _ => None,
                },
            };
            if let Some(inline) = inline {
                spans[i] = inline;
                return;
            }
            let all = (0..self.len()).map(|g| self.get(g)).collect();
            *self = Spans::Heap(all);
        }
        if let Spans::Heap(v) = self {
            v[i] = span;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_past_u32_move_to_the_heap() {
        let mut spans = Spans::new(3);
        spans.set(0, Some((1, 5)));
        spans.set(2, Some((2, 3)));
        assert!(matches!(spans, Spans::Inline { .. }));
        let far = u32::MAX as usize + 7;
        spans.set(1, Some((4, far)));
        assert!(matches!(spans, Spans::Heap(_)));
        assert_eq!(spans.get(0), Some((1, 5)));
        assert_eq!(spans.get(1), Some((4, far)));
        assert_eq!(spans.get(2), Some((2, 3)));
        spans.set(2, None);
        assert_eq!(spans.get(2), None);
        assert_eq!(spans.get(3), None);
        spans.set(3, Some((0, 0)));
        assert_eq!(spans.len(), 3);
    }

    #[test]
    fn many_groups_live_on_the_heap() {
        let mut spans = Spans::new(INLINE + 1);
        spans.set(INLINE, Some((7, 9)));
        assert_eq!(spans.get(INLINE), Some((7, 9)));
        assert_eq!(spans.get(0), None);
    }
}
