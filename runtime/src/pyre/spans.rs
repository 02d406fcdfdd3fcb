//! Capture spans without a heap allocation for the common case (a handful of groups).

/// Groups (including group 0) stored inline; patterns with more use the heap.
const INLINE: usize = 8;

/// One optional `(start, end)` byte span per group.
#[derive(Debug, Clone)]
pub(crate) enum Spans {
    Inline {
        len: usize,
        spans: [Option<(usize, usize)>; INLINE],
    },
    Heap(Vec<Option<(usize, usize)>>),
}

impl Spans {
    /// `len` groups, none set.
    pub(crate) fn new(len: usize) -> Self {
        if len <= INLINE {
            Spans::Inline {
                len,
                spans: [None; INLINE],
            }
        } else {
            Spans::Heap(vec![None; len])
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Spans::Inline { len, .. } => *len,
            Spans::Heap(v) => v.len(),
        }
    }

    fn as_slice(&self) -> &[Option<(usize, usize)>] {
        match self {
            Spans::Inline { len, spans } => &spans[..*len],
            Spans::Heap(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [Option<(usize, usize)>] {
        match self {
            Spans::Inline { len, spans } => &mut spans[..*len],
            Spans::Heap(v) => v,
        }
    }

    /// Group `i`'s span; `None` when it did not take part or does not exist.
    pub(crate) fn get(&self, i: usize) -> Option<(usize, usize)> {
        self.as_slice().get(i).copied().flatten()
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut Option<(usize, usize)>> {
        self.as_mut_slice().get_mut(i)
    }

    pub(crate) fn set(&mut self, i: usize, span: Option<(usize, usize)>) {
        if let Some(slot) = self.get_mut(i) {
            *slot = span;
        }
    }
}
