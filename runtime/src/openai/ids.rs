//! Tool-call ids for calls whose format carries none.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Makes the ids of tool calls the model gave no id of its own.
pub trait IdPolicy {
    /// The id of the call at `index` (0-based, in the message) to the function `name`.
    fn next_id(&mut self, name: &str, index: usize) -> String;
}

/// OpenAI's shape: `call_` and 24 random ASCII letters and digits (xorshift64*, seeded from the
/// clock, an address and a process-wide counter; not cryptographic).
///
/// ```
/// use chatparse_runtime::openai::{IdPolicy, RandomIds};
/// let id = RandomIds::new().next_id("f", 0);
/// assert!(id.starts_with("call_") && id.len() == 29);
/// assert!(id[5..].bytes().all(|b| b.is_ascii_alphanumeric()));
/// ```
#[derive(Debug, Clone)]
pub struct RandomIds {
    state: u64,
}

impl RandomIds {
    /// A new generator with a fresh seed.
    pub fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let local = 0u8;
        let address = &local as *const u8 as u64;
        let count = COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        Self::with_seed(nanos ^ address.rotate_left(32) ^ count)
    }

    /// A generator with a fixed seed (the same ids every run).
    pub fn with_seed(seed: u64) -> Self {
        RandomIds {
            state: seed | 1, // xorshift's state must not be 0
        }
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

impl Default for RandomIds {
    fn default() -> Self {
        Self::new()
    }
}

impl IdPolicy for RandomIds {
    fn next_id(&mut self, _name: &str, _index: usize) -> String {
        const ALPHABET: &[u8; 62] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut id = String::with_capacity(29);
        id.push_str("call_");
        for _ in 0..24 {
            // 62 does not divide 2^64; the bias (< 2^-58) does not matter for ids.
            id.push(ALPHABET[(self.next_u64() % 62) as usize] as char);
        }
        id
    }
}

/// Deterministic ids for tests: `call_0`, `call_1`, … (counting every id this policy made).
///
/// ```
/// use chatparse_runtime::openai::{CounterIds, IdPolicy};
/// let mut ids = CounterIds::default();
/// assert_eq!(ids.next_id("f", 0), "call_0");
/// assert_eq!(ids.next_id("g", 1), "call_1");
/// ```
#[derive(Debug, Clone, Default)]
pub struct CounterIds {
    next: u64,
}

impl IdPolicy for CounterIds {
    fn next_id(&mut self, _name: &str, _index: usize) -> String {
        let id = format!("call_{}", self.next);
        self.next += 1;
        id
    }
}

impl<F: FnMut(&str, usize) -> String> IdPolicy for F {
    fn next_id(&mut self, name: &str, index: usize) -> String {
        self(name, index)
    }
}
