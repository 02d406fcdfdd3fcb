//! Python number semantics: unbounded `int`, IEEE `float`, exact mixed comparisons,
//! correctly rounded conversions, and `float.__repr__`.
//!
//! The reference runs on CPython, where `10**20 == 1e20` compares exactly and
//! `sum`/`abs`/`math.ceil` never lose integer precision; `f64` and `i64` alone
//! cannot reproduce that, so this module carries a small arbitrary-precision
//! integer.

use crate::value::Number;
use std::cmp::Ordering;

/// CPython's default `sys.get_int_max_str_digits()`: longer decimal
/// conversions raise `ValueError`.
pub(crate) const INT_MAX_STR_DIGITS: usize = 4300;

/// A signed arbitrary-precision integer: little-endian base-2^32 magnitude
/// without trailing zero limbs (zero is the empty vector and never negative).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BigInt {
    neg: bool,
    mag: Vec<u32>,
}

fn trim(mag: &mut Vec<u32>) {
    while mag.last() == Some(&0) {
        mag.pop();
    }
}

fn cmp_mag(a: &[u32], b: &[u32]) -> Ordering {
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        match x.cmp(y) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    Ordering::Equal
}

fn add_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0u64;
    for (i, &x) in long.iter().enumerate() {
        let s = u64::from(x) + u64::from(short.get(i).copied().unwrap_or(0)) + carry;
        out.push(s as u32);
        carry = s >> 32;
    }
    if carry != 0 {
        out.push(carry as u32);
    }
    out
}

/// `a - b` for `|a| >= |b|`.
fn sub_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &x) in a.iter().enumerate() {
        let mut d = i64::from(x) - i64::from(b.get(i).copied().unwrap_or(0)) - borrow;
        if d < 0 {
            d += 1 << 32;
            borrow = 1;
        } else {
            borrow = 0;
        }
        out.push(d as u32);
    }
    trim(&mut out);
    out
}

/// Multiplies `x` by `2^k` without overflow concerns (exact unless the result
/// leaves the finite range, which callers treat as overflow).
pub(crate) fn ldexp(mut x: f64, mut k: i64) -> f64 {
    let p1000 = f64::from_bits((1023u64 + 1000) << 52);
    let m1000 = f64::from_bits((1023u64 - 1000) << 52);
    while k > 1000 {
        x *= p1000;
        k -= 1000;
        if !x.is_finite() {
            return x;
        }
    }
    while k < -1000 {
        x *= m1000;
        k += 1000;
    }
    // 2^k with |k| <= 1000 is a normal f64.
    x * f64::from_bits(((1023 + k) as u64) << 52)
}

impl BigInt {
    pub(crate) fn zero() -> Self {
        BigInt {
            neg: false,
            mag: Vec::new(),
        }
    }

    pub(crate) fn from_u64(v: u64) -> Self {
        let mut mag = vec![v as u32, (v >> 32) as u32];
        trim(&mut mag);
        BigInt { neg: false, mag }
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    /// Parses `[-]digits` (ASCII). Returns `None` on any other character.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (neg, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut mag: Vec<u32> = Vec::new();
        for chunk in digits.as_bytes().chunks(9) {
            let mut mul = 1u64;
            let mut add = 0u64;
            for &b in chunk {
                mul *= 10;
                add = add * 10 + u64::from(b - b'0');
            }
            let mut carry = add;
            for limb in mag.iter_mut() {
                let v = u64::from(*limb) * mul + carry;
                *limb = v as u32;
                carry = v >> 32;
            }
            if carry != 0 {
                mag.push(carry as u32);
            }
        }
        trim(&mut mag);
        let neg = neg && !mag.is_empty();
        Some(BigInt { neg, mag })
    }

    /// Canonical decimal text (Python `str(int)`).
    pub(crate) fn to_decimal(&self) -> String {
        if self.mag.is_empty() {
            return "0".to_string();
        }
        let mut chunks = Vec::new();
        let mut cur = self.mag.clone();
        while !cur.is_empty() {
            let rem = divmod_small(&mut cur, 1_000_000_000);
            chunks.push(rem as u32);
        }
        let mut s = String::new();
        if self.neg {
            s.push('-');
        }
        let mut iter = chunks.iter().rev();
        if let Some(first) = iter.next() {
            s.push_str(&first.to_string());
        }
        for c in iter {
            s.push_str(&format!("{c:09}"));
        }
        s
    }

    pub(crate) fn abs(&self) -> Self {
        BigInt {
            neg: false,
            mag: self.mag.clone(),
        }
    }

    pub(crate) fn add(&self, other: &BigInt) -> BigInt {
        if self.neg == other.neg {
            return BigInt {
                neg: self.neg,
                mag: add_mag(&self.mag, &other.mag),
            };
        }
        match cmp_mag(&self.mag, &other.mag) {
            Ordering::Equal => BigInt::zero(),
            Ordering::Greater => BigInt {
                neg: self.neg,
                mag: sub_mag(&self.mag, &other.mag),
            },
            Ordering::Less => BigInt {
                neg: other.neg,
                mag: sub_mag(&other.mag, &self.mag),
            },
        }
    }

    fn bit_len(&self) -> u64 {
        match self.mag.last() {
            None => 0,
            Some(&top) => (self.mag.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }

    /// The integer part of a finite float (Python `int(f)`, `math.floor` of
    /// a non-negative value).
    pub(crate) fn from_f64_trunc(f: f64) -> BigInt {
        if !f.is_finite() || f.abs() < 1.0 {
            return BigInt::zero();
        }
        let bits = f.to_bits();
        let neg = bits >> 63 == 1;
        let exp = ((bits >> 52) & 0x7ff) as i64;
        let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        // value = mant * 2^(exp - 1075)
        let shift = exp - 1075;
        let mag = if shift >= 0 {
            shl_mag(&BigInt::from_u64(mant).mag, shift as u64)
        } else {
            BigInt::from_u64(mant >> (-shift) as u32).mag
        };
        BigInt { neg, mag }
    }

    /// Correctly rounded conversion (Python `float(int)`); `None` where Python
    /// raises `OverflowError`.
    pub(crate) fn to_f64(&self) -> Option<f64> {
        let bl = self.bit_len();
        let v = if bl <= 64 {
            let mut u = 0u64;
            for (i, &l) in self.mag.iter().enumerate() {
                u |= u64::from(l) << (32 * i);
            }
            u as f64
        } else {
            let shift = bl - 64;
            let (top, sticky) = shr_mag_sticky(&self.mag, shift);
            let mut u = 0u64;
            for (i, &l) in top.iter().enumerate().take(2) {
                u |= u64::from(l) << (32 * i);
            }
            ldexp((u | u64::from(sticky)) as f64, shift as i64)
        };
        if !v.is_finite() {
            return None;
        }
        Some(if self.neg { -v } else { v })
    }

    /// Correctly rounded `self / n` (Python int true division); `None` on
    /// overflow. `n` must be non-zero.
    pub(crate) fn div_to_f64(&self, n: u64) -> Option<f64> {
        if self.is_zero() {
            return Some(0.0);
        }
        let bl = self.bit_len();
        if bl <= 53 && n <= (1u64 << 53) {
            let a = self.to_f64()?;
            return Some(a / n as f64);
        }
        let bn = 64 - u64::from(n.leading_zeros());
        // Scale so the quotient lands in [2^61, 2^63): plenty of guard bits.
        let s: i64 = 62 - (bl as i64 - bn as i64);
        let (mut num, mut sticky) = if s >= 0 {
            (shl_mag(&self.mag, s as u64), false)
        } else {
            shr_mag_sticky(&self.mag, (-s) as u64)
        };
        let rem = divmod_small(&mut num, n);
        sticky |= rem != 0;
        let mut q = 0u64;
        for (i, &l) in num.iter().enumerate().take(2) {
            q |= u64::from(l) << (32 * i);
        }
        let v = ldexp((q | u64::from(sticky)) as f64, -s);
        if !v.is_finite() {
            return None;
        }
        Some(if self.neg { -v } else { v })
    }

    pub(crate) fn cmp(&self, other: &BigInt) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => cmp_mag(&self.mag, &other.mag),
            (true, true) => cmp_mag(&other.mag, &self.mag),
        }
    }
}

fn shl_mag(mag: &[u32], shift: u64) -> Vec<u32> {
    let limbs = (shift / 32) as usize;
    let bits = (shift % 32) as u32;
    let mut out = vec![0u32; limbs];
    let mut carry = 0u32;
    for &l in mag {
        if bits == 0 {
            out.push(l);
        } else {
            out.push((l << bits) | carry);
            carry = l >> (32 - bits);
        }
    }
    if carry != 0 {
        out.push(carry);
    }
    trim(&mut out);
    out
}

/// `mag >> shift` and whether any shifted-out bit was set.
fn shr_mag_sticky(mag: &[u32], shift: u64) -> (Vec<u32>, bool) {
    let limbs = (shift / 32) as usize;
    let bits = (shift % 32) as u32;
    if limbs >= mag.len() {
        return (Vec::new(), mag.iter().any(|&l| l != 0));
    }
    let mut sticky = mag[..limbs].iter().any(|&l| l != 0);
    if bits != 0 {
        sticky |= mag[limbs] & ((1u32 << bits) - 1) != 0;
    }
    let rest = &mag[limbs..];
    let mut out = Vec::with_capacity(rest.len());
    for i in 0..rest.len() {
        let lo = rest[i];
        let hi = rest.get(i + 1).copied().unwrap_or(0);
        if bits == 0 {
            out.push(lo);
        } else {
            out.push((lo >> bits) | (hi << (32 - bits)));
        }
    }
    trim(&mut out);
    (out, sticky)
}

/// In-place `mag /= d`, returning the remainder.
fn divmod_small(mag: &mut Vec<u32>, d: u64) -> u64 {
    let mut rem: u128 = 0;
    for limb in mag.iter_mut().rev() {
        let cur = (rem << 32) | u128::from(*limb);
        *limb = (cur / u128::from(d)) as u32;
        rem = cur % u128::from(d);
    }
    trim(mag);
    rem as u64
}

/// A Python number as the reference sees it: JSON text without `.`, `e`, `E`
/// is an `int`, anything else a `float`.
#[derive(Clone, Debug)]
pub(crate) enum PyNum {
    Int(BigInt),
    Float(f64),
}

impl PyNum {
    /// Reads a JSON number (ints exact, floats as they are).
    pub(crate) fn from_number(n: &Number) -> PyNum {
        if n.is_f64() {
            return PyNum::Float(n.as_f64().unwrap_or(f64::NAN));
        }
        let text = n.to_string();
        match BigInt::parse(&text) {
            Some(b) => PyNum::Int(b),
            None => PyNum::Float(text.parse::<f64>().unwrap_or(f64::NAN)),
        }
    }

    /// Builds the JSON number; `None` for a non-finite float (Python would
    /// hold `inf`/`nan`, which JSON cannot carry).
    pub(crate) fn to_number(&self) -> Option<Number> {
        match self {
            PyNum::Float(f) => Number::from_f64(*f),
            PyNum::Int(b) => int_number(b),
        }
    }

    /// Python's `0 <= x <= 1 and x == int(x)` in the jmespath `x in (0, 1)` sense.
    pub(crate) fn is_zero_or_one(&self) -> bool {
        match self {
            PyNum::Int(b) => b.is_zero() || (b.cmp(&BigInt::from_u64(1)) == Ordering::Equal),
            PyNum::Float(f) => *f == 0.0 || *f == 1.0,
        }
    }

    /// Exact comparison as CPython does it (ints and floats never lose precision).
    pub(crate) fn cmp(&self, other: &PyNum) -> Ordering {
        match (self, other) {
            (PyNum::Int(a), PyNum::Int(b)) => a.cmp(b),
            (PyNum::Float(a), PyNum::Float(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (PyNum::Int(a), PyNum::Float(b)) => cmp_int_float(a, *b),
            (PyNum::Float(a), PyNum::Int(b)) => cmp_int_float(b, *a).reverse(),
        }
    }
}

/// A canonical decimal JSON integer.
pub(crate) fn int_number(b: &BigInt) -> Option<Number> {
    Number::from_integer_str(&b.to_decimal())
}

fn cmp_int_float(a: &BigInt, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Equal;
    }
    if f == f64::INFINITY {
        return Ordering::Less;
    }
    if f == f64::NEG_INFINITY {
        return Ordering::Greater;
    }
    let fl = f.floor();
    match a.cmp(&BigInt::from_f64_trunc(fl)) {
        Ordering::Equal => {
            if f > fl {
                Ordering::Less
            } else {
                Ordering::Equal
            }
        }
        o => o,
    }
}

/// Python's `float.__repr__` (shortest round-trip digits; exponent form when
/// the decimal point falls outside `-4 < decpt <= 16`).
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let decpt = exp + 1;
    let n = digits.len() as i64;
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", e.abs()));
    } else if decpt <= 0 {
        out.push_str("0.");
        for _ in 0..(-decpt) {
            out.push('0');
        }
        out.push_str(&digits);
    } else if decpt >= n {
        out.push_str(&digits);
        for _ in 0..(decpt - n) {
            out.push('0');
        }
        out.push_str(".0");
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bigint_roundtrip() {
        for s in [
            "0",
            "1",
            "-1",
            "4294967296",
            "-123456789012345678901234567890",
            "1000000000",
        ] {
            assert_eq!(BigInt::parse(s).unwrap().to_decimal(), s);
        }
        assert_eq!(BigInt::parse("-0").unwrap().to_decimal(), "0");
        assert_eq!(BigInt::parse("007").unwrap().to_decimal(), "7");
    }

    #[test]
    fn bigint_add() {
        let a = BigInt::parse("99999999999999999999").unwrap();
        let b = BigInt::parse("-100000000000000000000").unwrap();
        assert_eq!(a.add(&b).to_decimal(), "-1");
        assert_eq!(a.add(&a).to_decimal(), "199999999999999999998");
    }

    #[test]
    fn float_conversions() {
        // Python: math.ceil(1e300)
        assert_eq!(
            BigInt::from_f64_trunc(1e23).to_decimal(),
            "99999999999999991611392"
        );
        assert_eq!(
            BigInt::parse("9007199254740993").unwrap().to_f64(),
            Some(9007199254740992.0)
        );
        assert_eq!(
            BigInt::parse("9007199254740993").unwrap().div_to_f64(2),
            Some(4503599627370496.0)
        );
        assert_eq!(BigInt::parse(&"9".repeat(400)).unwrap().to_f64(), None);
    }

    #[test]
    fn repr() {
        for (f, s) in [
            (1.0, "1.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-1.5e300, "-1.5e+300"),
            (123.456, "123.456"),
            (0.1, "0.1"),
        ] {
            assert_eq!(float_repr(f), s);
        }
    }
}
