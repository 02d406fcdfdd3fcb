//! Text that contains none of a set of strings, as a finite automaton over characters (the
//! Aho–Corasick construction), for the emitters that have no "text until" of their own (GBNF).

/// One state of the automaton: the longest suffix of the text read so far that is a proper
/// prefix of a stop string.
#[derive(Debug, Clone)]
pub struct State {
    /// The prefix this state stands for.
    pub prefix: String,
    /// For each character of the stop strings' alphabet: the next state, or `None` when the
    /// character completes a stop string.
    pub next: Vec<(char, Option<usize>)>,
}

/// The automaton of texts containing none of `stop`: state 0 is the empty prefix; every state
/// accepts; a character outside [`alphabet`] goes to state 0.
pub fn automaton(stop: &[String]) -> (Vec<char>, Vec<State>) {
    let mut alphabet: Vec<char> = stop.iter().flat_map(|s| s.chars()).collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    // Every proper prefix of a stop string that contains no stop string.
    let mut prefixes: Vec<String> = vec![String::new()];
    for s in stop {
        let chars: Vec<char> = s.chars().collect();
        for n in 1..chars.len() {
            let p: String = chars[..n].iter().collect();
            if !prefixes.contains(&p) && !stop.iter().any(|x| p.contains(x.as_str())) {
                prefixes.push(p);
            }
        }
    }
    let states = prefixes
        .iter()
        .map(|p| {
            let next = alphabet
                .iter()
                .map(|&c| {
                    let mut t = p.clone();
                    t.push(c);
                    if stop.iter().any(|x| t.ends_with(x.as_str())) {
                        return (c, None);
                    }
                    // The longest suffix of t that is a prefix (state).
                    let mut best = 0;
                    for (i, q) in prefixes.iter().enumerate() {
                        if t.ends_with(q.as_str()) && q.len() > prefixes[best].len() {
                            best = i;
                        }
                    }
                    (c, Some(best))
                })
                .collect();
            State {
                prefix: p.clone(),
                next,
            }
        })
        .collect();
    (alphabet, states)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(stop: &[&str], text: &str) -> bool {
        let stop: Vec<String> = stop.iter().map(|s| s.to_string()).collect();
        let (alphabet, states) = automaton(&stop);
        let mut at = 0;
        for c in text.chars() {
            if !alphabet.contains(&c) {
                at = 0;
                continue;
            }
            match states[at].next.iter().find(|(x, _)| *x == c).unwrap().1 {
                Some(n) => at = n,
                None => return false,
            }
        }
        true
    }

    #[test]
    fn excludes_exactly_the_stop_strings() {
        for (text, want) in [
            ("hello", true),
            ("a <tool_call> b", false),
            ("<<tool_call>", false),
            ("<tool_cal", true),
            ("<tool_call", true),
            ("</think> x", false),
            ("<</think", true),
        ] {
            assert_eq!(accepts(&["<tool_call>", "</think>"], text), want, "{text}");
        }
    }
}
