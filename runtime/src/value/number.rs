//! [`Number`]: a JSON number as Python sees it — an int of any size, or a float.

use std::fmt;

/// A JSON number: an integer of any size (Python's `int`) or a finite float (Python's `float`).
///
/// Integers that fit in `i64`/`u64` are stored as machine integers; larger ones keep their exact
/// decimal digits, so a 40-digit integer in tool arguments round-trips unchanged. Floats print as
/// `serde_json` prints an `f64` (shortest round-trip form, always with a `.` or an exponent).
///
/// Equality is on the printed form: `1` (int) and `1.0` (float) differ, as they do in the
/// reference's output.
///
/// ```
/// use chatparse_runtime::value::Number;
/// let big = Number::from_integer_str("123456789012345678901234567890").unwrap();
/// assert_eq!(big.to_string(), "123456789012345678901234567890");
/// assert!(big.is_integer() && big.as_i64().is_none());
/// assert_eq!(Number::from_f64(1.0).unwrap().to_string(), "1.0");
/// assert_ne!(Number::from(1), Number::from_f64(1.0).unwrap());
/// ```
#[derive(Clone)]
pub struct Number(N);

#[derive(Clone)]
enum N {
    /// Always ≥ 0.
    PosInt(u64),
    /// Always < 0.
    NegInt(i64),
    /// Always finite.
    Float(f64),
    /// Canonical decimal digits (`-?[1-9][0-9]*`) of an integer outside `i64`/`u64`.
    Big(Box<str>),
}

impl Number {
    /// A float, or `None` when `f` is infinite or NaN (JSON cannot carry them).
    pub fn from_f64(f: f64) -> Option<Number> {
        f.is_finite().then_some(Number(N::Float(f)))
    }

    /// An integer from decimal text (`-?[0-9]+`, any length; leading zeros and `-0` allowed and
    /// normalised). `None` for anything else.
    ///
    /// ```
    /// use chatparse_runtime::value::Number;
    /// assert_eq!(Number::from_integer_str("-007").unwrap().as_i64(), Some(-7));
    /// assert_eq!(Number::from_integer_str("1.0"), None);
    /// ```
    pub fn from_integer_str(text: &str) -> Option<Number> {
        let (neg, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() {
            return Some(Number(N::PosInt(0)));
        }
        if digits.len() <= 20 {
            if let Ok(n) = digits.parse::<u64>() {
                if !neg {
                    return Some(Number(N::PosInt(n)));
                }
                if n <= i64::MAX as u64 + 1 {
                    return Some(Number(N::NegInt((n as i64).wrapping_neg())));
                }
            }
        }
        let mut s = String::with_capacity(digits.len() + 1);
        if neg {
            s.push('-');
        }
        s.push_str(digits);
        Some(Number(N::Big(s.into_boxed_str())))
    }

    /// An integer from `i128`.
    pub fn from_i128(n: i128) -> Number {
        if let Ok(u) = u64::try_from(n) {
            Number(N::PosInt(u))
        } else if let Ok(i) = i64::try_from(n) {
            Number(N::NegInt(i))
        } else {
            Number(N::Big(n.to_string().into_boxed_str()))
        }
    }

    /// An integer from `u128`.
    pub fn from_u128(n: u128) -> Number {
        match u64::try_from(n) {
            Ok(u) => Number(N::PosInt(u)),
            Err(_) => Number(N::Big(n.to_string().into_boxed_str())),
        }
    }

    /// Whether this is an integer (Python `int`), of any size.
    pub fn is_integer(&self) -> bool {
        !matches!(self.0, N::Float(_))
    }

    /// Whether this is a float (Python `float`).
    pub fn is_f64(&self) -> bool {
        matches!(self.0, N::Float(_))
    }

    /// Whether this is an integer that fits in `i64`.
    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }

    /// Whether this is an integer that fits in `u64`.
    pub fn is_u64(&self) -> bool {
        matches!(self.0, N::PosInt(_))
    }

    /// The integer as `i64`, if it is one and fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::PosInt(n) => i64::try_from(n).ok(),
            N::NegInt(n) => Some(n),
            _ => None,
        }
    }

    /// The integer as `u64`, if it is one and fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::PosInt(n) => Some(n),
            _ => None,
        }
    }

    /// The integer as `i128`, if it is one and fits.
    pub fn as_i128(&self) -> Option<i128> {
        match &self.0 {
            N::PosInt(n) => Some(i128::from(*n)),
            N::NegInt(n) => Some(i128::from(*n)),
            N::Big(s) => s.parse().ok(),
            N::Float(_) => None,
        }
    }

    /// The integer as `u128`, if it is one and fits.
    pub fn as_u128(&self) -> Option<u128> {
        match &self.0 {
            N::PosInt(n) => Some(u128::from(*n)),
            N::Big(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// The value as `f64` (integers rounded to the nearest float); `None` for an integer too
    /// large for a finite `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match &self.0 {
            N::PosInt(n) => Some(*n as f64),
            N::NegInt(n) => Some(*n as f64),
            N::Float(f) => Some(*f),
            N::Big(s) => s.parse::<f64>().ok().filter(|f| f.is_finite()),
        }
    }

    /// The exact decimal digits of an integer outside `i64`/`u64` (`None` for any other number).
    pub fn as_big_digits(&self) -> Option<&str> {
        match &self.0 {
            N::Big(s) => Some(s),
            _ => None,
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (N::PosInt(a), N::PosInt(b)) => a == b,
            (N::NegInt(a), N::NegInt(b)) => a == b,
            // On the printed form: `0.0` and `-0.0` differ.
            (N::Float(a), N::Float(b)) => a.to_bits() == b.to_bits(),
            (N::Big(a), N::Big(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Number {}

impl std::hash::Hash for Number {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match &self.0 {
            N::PosInt(n) => (0u8, *n).hash(state),
            N::NegInt(n) => (1u8, *n).hash(state),
            N::Float(f) => (2u8, f.to_bits()).hash(state),
            N::Big(s) => (3u8, s).hash(state),
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            N::PosInt(n) => fmt::Display::fmt(n, f),
            N::NegInt(n) => fmt::Display::fmt(n, f),
            N::Float(x) => f.write_str(zmij::Buffer::new().format_finite(*x)),
            N::Big(s) => f.write_str(s),
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

macro_rules! from_unsigned {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number {
                Number(N::PosInt(n as u64))
            }
        }
    )*};
}
macro_rules! from_signed {
    ($($t:ty)*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number {
                if n < 0 {
                    Number(N::NegInt(n as i64))
                } else {
                    Number(N::PosInt(n as u64))
                }
            }
        }
    )*};
}
from_unsigned!(u8 u16 u32 u64 usize);
from_signed!(i8 i16 i32 i64 isize);

impl From<i128> for Number {
    fn from(n: i128) -> Number {
        Number::from_i128(n)
    }
}

impl From<u128> for Number {
    fn from(n: u128) -> Number {
        Number::from_u128(n)
    }
}

impl serde::Serialize for Number {
    /// Integers beyond 128 bits go out through `serde_json`'s `RawValue` (exact digits with
    /// `serde_json`; other serializers see a one-field struct).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            N::PosInt(n) => serializer.serialize_u64(*n),
            N::NegInt(n) => serializer.serialize_i64(*n),
            N::Float(f) => serializer.serialize_f64(*f),
            N::Big(s) => {
                if let Ok(n) = s.parse::<i128>() {
                    serializer.serialize_i128(n)
                } else if let Ok(n) = s.parse::<u128>() {
                    serializer.serialize_u128(n)
                } else {
                    let raw = serde_json::value::RawValue::from_string(s.to_string())
                        .map_err(serde::ser::Error::custom)?;
                    raw.serialize(serializer)
                }
            }
        }
    }
}

impl From<Number> for serde_json::Number {
    /// Lossy only for integers beyond 128 bits, which become the nearest float (or 0 when even
    /// that overflows).
    fn from(n: Number) -> serde_json::Number {
        match n.0 {
            N::PosInt(u) => u.into(),
            N::NegInt(i) => i.into(),
            N::Float(f) => serde_json::Number::from_f64(f).unwrap_or_else(|| 0.into()),
            N::Big(s) => {
                if let Ok(i) = s.parse::<i128>() {
                    if let Some(n) = serde_json::Number::from_i128(i) {
                        return n;
                    }
                }
                if let Ok(u) = s.parse::<u128>() {
                    if let Some(n) = serde_json::Number::from_u128(u) {
                        return n;
                    }
                }
                s.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .unwrap_or_else(|| 0.into())
            }
        }
    }
}

impl From<&serde_json::Number> for Number {
    /// Exact for every integer `serde_json` holds (under its `arbitrary_precision`, any size).
    fn from(n: &serde_json::Number) -> Number {
        if let Some(u) = n.as_u64() {
            return Number::from(u);
        }
        if let Some(i) = n.as_i64() {
            return Number::from(i);
        }
        let text = n.to_string();
        Number::from_integer_str(&text)
            .or_else(|| text.parse::<f64>().ok().and_then(Number::from_f64))
            .unwrap_or(Number(N::PosInt(0)))
    }
}
