//! Tree interpreter mirroring python jmespath's `visitor.TreeInterpreter`.

use super::ast::{Ast, Comparator, KeyValuePair, Slice};
use super::functions::call_function;
use super::value::{py_eq, KeyRef, Obj, Val, View};
use super::JmesError;
use crate::py::num::PyNum;
use std::cell::Cell;
use std::cmp::Ordering;
use std::rc::Rc;

pub(crate) type EResult<'a> = Result<Val<'a>, JmesError>;

/// Per-search state: python creates a fresh `_Expression` object each time an
/// `&expr` node is visited, and those objects compare by identity.
pub(crate) struct Interp {
    next_expref: Cell<u64>,
}

impl Interp {
    pub(crate) fn new() -> Self {
        Interp {
            next_expref: Cell::new(0),
        }
    }

    /// Evaluates `node` against `v`. Each node kind has its own small
    /// function so that unoptimised builds keep the recursion's stack frames
    /// small.
    pub(crate) fn eval<'a>(&self, node: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        match node {
            Ast::Current => Ok(v.clone()),
            Ast::Field(name) => Ok(v.as_object().and_then(|o| o.get(name)).unwrap_or(Val::Null)),
            Ast::Subexpression(children) | Ast::IndexExpression(children) => {
                self.chain(children, v)
            }
            Ast::Index(i) => Ok(index(v, *i)),
            Ast::Slice(s) => slice(v, s),
            Ast::Literal(value) => Ok(Val::Ref(value)),
            Ast::MultiSelectList(items) => self.multi_select_list(items, v),
            Ast::MultiSelectHash(pairs) => self.multi_select_hash(pairs, v),
            Ast::Projection { left, right } => self.projection(left, right, v),
            Ast::ValueProjection { left, right } => self.value_projection(left, right, v),
            Ast::FilterProjection {
                left,
                right,
                condition,
            } => self.filter_projection(left, right, condition, v),
            Ast::Flatten(child) => self.flatten(child, v),
            Ast::Or(l, r) => self.or(l, r, v),
            Ast::And(l, r) => self.and(l, r, v),
            Ast::Not(e) => self.not(e, v),
            Ast::Comparison { op, left, right } => self.comparison(*op, left, right, v),
            Ast::Pipe(l, r) => self.pipe(l, r, v),
            Ast::FunctionCall { name, args } => self.function(name, args, v),
            Ast::ExpRef(e) => {
                let id = self.next_expref.get();
                self.next_expref.set(id + 1);
                Ok(Val::ExpRef(e, id))
            }
        }
    }

    fn chain<'a>(&self, children: &'a [Ast], v: &Val<'a>) -> EResult<'a> {
        let mut cur = v.clone();
        for child in children {
            cur = self.eval(child, &cur)?;
        }
        Ok(cur)
    }

    fn multi_select_list<'a>(&self, items: &'a [Ast], v: &Val<'a>) -> EResult<'a> {
        if v.is_null() {
            return Ok(Val::Null);
        }
        let out = items
            .iter()
            .map(|e| self.eval(e, v))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Val::arr(out))
    }

    fn multi_select_hash<'a>(&self, pairs: &'a [KeyValuePair], v: &Val<'a>) -> EResult<'a> {
        if v.is_null() {
            return Ok(Val::Null);
        }
        let mut out: Obj<'a> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            let value = self.eval(&pair.value, v)?;
            obj_insert(&mut out, KeyRef::Str(&pair.key), value);
        }
        Ok(Val::Obj(Rc::new(out)))
    }

    fn projection<'a>(&self, left: &'a Ast, right: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        let base = self.eval(left, v)?;
        match base.as_array() {
            Some(a) => self.project(a.iter(), right),
            None => Ok(Val::Null),
        }
    }

    fn value_projection<'a>(&self, left: &'a Ast, right: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        let base = self.eval(left, v)?;
        match base.as_object() {
            Some(o) => self.project(o.entries().into_iter().map(|(_, v)| v), right),
            None => Ok(Val::Null),
        }
    }

    fn filter_projection<'a>(
        &self,
        left: &'a Ast,
        right: &'a Ast,
        condition: &'a Ast,
        v: &Val<'a>,
    ) -> EResult<'a> {
        let base = self.eval(left, v)?;
        let Some(a) = base.as_array() else {
            return Ok(Val::Null);
        };
        let mut out = Vec::new();
        for elem in a.iter() {
            if !self.eval(condition, &elem)?.is_false() {
                let r = self.eval(right, &elem)?;
                if !r.is_null() {
                    out.push(r);
                }
            }
        }
        Ok(Val::arr(out))
    }

    fn flatten<'a>(&self, child: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        let base = self.eval(child, v)?;
        let Some(a) = base.as_array() else {
            return Ok(Val::Null);
        };
        let mut out = Vec::with_capacity(a.len());
        for elem in a.iter() {
            match elem.as_array() {
                Some(inner) => out.extend(inner.iter()),
                None => out.push(elem.clone()),
            }
        }
        Ok(Val::arr(out))
    }

    fn or<'a>(&self, l: &'a Ast, r: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        let left = self.eval(l, v)?;
        if left.is_false() {
            self.eval(r, v)
        } else {
            Ok(left)
        }
    }

    fn and<'a>(&self, l: &'a Ast, r: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        let left = self.eval(l, v)?;
        if left.is_false() {
            Ok(left)
        } else {
            self.eval(r, v)
        }
    }

    fn not<'a>(&self, e: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        let r = self.eval(e, v)?;
        // Python `not x`, except that numbers (even 0) are truthy.
        Ok(Val::Bool(match r.view() {
            View::Num(_) => false,
            _ => r.is_false(),
        }))
    }

    fn comparison<'a>(
        &self,
        op: Comparator,
        left: &'a Ast,
        right: &'a Ast,
        v: &Val<'a>,
    ) -> EResult<'a> {
        let l = self.eval(left, v)?;
        let r = self.eval(right, v)?;
        compare(op, &l, &r)
    }

    fn pipe<'a>(&self, l: &'a Ast, r: &'a Ast, v: &Val<'a>) -> EResult<'a> {
        let left = self.eval(l, v)?;
        self.eval(r, &left)
    }

    fn function<'a>(&self, name: &str, args: &'a [Ast], v: &Val<'a>) -> EResult<'a> {
        let resolved = args
            .iter()
            .map(|a| self.eval(a, v))
            .collect::<Result<Vec<_>, _>>()?;
        call_function(self, name, resolved)
    }

    fn project<'a>(&self, elems: impl Iterator<Item = Val<'a>>, right: &'a Ast) -> EResult<'a> {
        let mut out = Vec::new();
        for elem in elems {
            let r = self.eval(right, &elem)?;
            if !r.is_null() {
                out.push(r);
            }
        }
        Ok(Val::arr(out))
    }
}

fn index<'a>(v: &Val<'a>, i: i64) -> Val<'a> {
    v.as_array()
        .and_then(|a| py_index(a.len(), i).and_then(|i| a.get(i)))
        .unwrap_or(Val::Null)
}

fn slice<'a>(v: &Val<'a>, s: &Slice) -> EResult<'a> {
    match v.as_array() {
        None => Ok(Val::Null),
        Some(a) => {
            let idx = py_slice(a.len(), s)?;
            Ok(Val::arr(idx.into_iter().filter_map(|i| a.get(i)).collect()))
        }
    }
}

/// Python `d[key] = value` on an insertion-ordered object.
pub(crate) fn obj_insert<'a>(obj: &mut Obj<'a>, key: KeyRef<'_, 'a>, value: Val<'a>) {
    match obj.iter_mut().find(|(k, _)| k.as_ref().same_key(key)) {
        Some(slot) => slot.1 = value,
        None => obj.push((key.to_key(), value)),
    }
}

/// Python list indexing (`IndexError` becomes `None`).
pub(crate) fn py_index(len: usize, i: i64) -> Option<usize> {
    let len = len as i128;
    let i = i128::from(i);
    let i = if i < 0 { i + len } else { i };
    (0..len).contains(&i).then_some(i as usize)
}

/// The indices `list[start:stop:step]` selects (`PySlice_Unpack` +
/// `PySlice_AdjustIndices`).
pub(crate) fn py_slice(len: usize, s: &Slice) -> Result<Vec<usize>, JmesError> {
    let step = i128::from(s.step.unwrap_or(1));
    if step == 0 {
        return Err(JmesError::runtime("slice step cannot be zero"));
    }
    let len = len as i128;
    let adjust = |bound: Option<i64>, default_neg: i128, default_pos: i128| -> i128 {
        match bound {
            None => {
                if step < 0 {
                    default_neg
                } else {
                    default_pos
                }
            }
            Some(b) => {
                let mut b = i128::from(b);
                if b < 0 {
                    b += len;
                    if b < 0 {
                        b = if step < 0 { -1 } else { 0 };
                    }
                } else if b >= len {
                    b = if step < 0 { len - 1 } else { len };
                }
                b
            }
        }
    };
    let start = adjust(s.start, len - 1, 0);
    let stop = adjust(s.stop, -1, len);
    let mut out = Vec::new();
    let mut i = start;
    if step > 0 {
        while i < stop {
            out.push(i as usize);
            i += step;
        }
    } else {
        while i > stop {
            out.push(i as usize);
            i += step;
        }
    }
    Ok(out)
}

/// Python's comparison of two numbers or two strings; `None` when python
/// would raise `TypeError` (string against number).
pub(crate) fn py_order(a: &Val<'_>, b: &Val<'_>) -> Option<Ordering> {
    match (a.view(), b.view()) {
        (View::Num(x), View::Num(y)) => Some(PyNum::from_number(x).cmp(&PyNum::from_number(y))),
        (View::Str(x), View::Str(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

pub(crate) fn type_error_compare(op: &str, a: &Val<'_>, b: &Val<'_>) -> JmesError {
    JmesError::runtime(&format!(
        "'{op}' not supported between instances of '{}' and '{}'",
        a.py_type(),
        b.py_type()
    ))
}

pub(crate) fn compare<'a>(op: Comparator, l: &Val<'a>, r: &Val<'a>) -> EResult<'a> {
    match op {
        Comparator::Eq => Ok(Val::Bool(jmes_equals(l, r)?)),
        Comparator::Ne => Ok(Val::Bool(!jmes_equals(l, r)?)),
        _ => {
            let comparable = |x: &Val<'_>| matches!(x.view(), View::Num(_) | View::Str(_));
            if !(comparable(l) && comparable(r)) {
                return Ok(Val::Null);
            }
            let Some(ord) = py_order(l, r) else {
                return Err(type_error_compare(op.symbol(), l, r));
            };
            Ok(Val::Bool(match op {
                Comparator::Lt => ord == Ordering::Less,
                Comparator::Lte => ord != Ordering::Greater,
                Comparator::Gt => ord == Ordering::Greater,
                _ => ord != Ordering::Less,
            }))
        }
    }
}

/// `visitor._equals`: a top-level `0`/`1` never equals a boolean; otherwise
/// Python `==`.
fn jmes_equals(x: &Val<'_>, y: &Val<'_>) -> Result<bool, JmesError> {
    let special = |a: &Val<'_>, b: &Val<'_>| {
        a.as_num().is_some_and(|n| n.is_zero_or_one()) && matches!(b.view(), View::Bool(_))
    };
    if special(x, y) || special(y, x) {
        return Ok(false);
    }
    py_eq(x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_follow_python() {
        let s = |start, stop, step| Slice { start, stop, step };
        assert_eq!(
            py_slice(5, &s(None, None, Some(-1))).unwrap(),
            vec![4, 3, 2, 1, 0]
        );
        assert_eq!(py_slice(5, &s(Some(-2), None, None)).unwrap(), vec![3, 4]);
        assert_eq!(
            py_slice(5, &s(Some(10), Some(-10), Some(-2))).unwrap(),
            vec![4, 2, 0]
        );
        assert_eq!(
            py_slice(5, &s(Some(i64::MIN), Some(i64::MAX), Some(i64::MAX))).unwrap(),
            vec![0]
        );
        assert_eq!(
            py_slice(5, &s(None, None, Some(i64::MIN))).unwrap(),
            vec![4]
        );
        assert!(py_slice(5, &s(None, None, Some(0))).is_err());
        assert_eq!(
            py_slice(0, &s(None, None, Some(-1))).unwrap(),
            Vec::<usize>::new()
        );
    }
}
