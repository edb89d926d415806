//! Shapes over symbolic dims: the pieces several operators' shape rules share.

use super::{input, Facts, Inferred};
use crate::onnx::ir::{Dim, Node};

/// The number of a dim, when it is one.
pub(crate) fn fixed(d: &Dim) -> Option<i64> {
    match d {
        Dim::Fixed(n) => Some(*n),
        Dim::Param(_) => None,
    }
}

/// The product of `dims` when all are numbers.
pub(super) fn product(dims: &[Dim]) -> Option<i64> {
    dims.iter().try_fold(1i64, |n, d| n.checked_mul(fixed(d)?))
}

/// `[2, s77]`, as messages print shapes.
pub(crate) fn shape_text(s: &[Dim]) -> String {
    let dims: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

/// Two shapes that cannot describe the same value: ranks or numbers differ (a symbolic dim
/// agrees with anything, as in ONNX's merging).
pub(crate) fn clash(a: &[Dim], b: &[Dim]) -> bool {
    a.len() != b.len() || a.iter().zip(b).any(|(x, y)| matches!((x, y), (Dim::Fixed(p), Dim::Fixed(q)) if p != q))
}

/// The shape of input `k`, when known.
pub(super) fn shape_of<'f>(facts: &'f dyn Facts, node: &Node, k: usize) -> Option<&'f [Dim]> {
    input(node, k).and_then(|v| facts.shape(v))
}

/// `unknown`, or the rule's "not known" when the facts have no unknown dim.
pub(super) fn or_unknown(facts: &dyn Facts) -> Result<Dim, Inferred> {
    facts.unknown().ok_or(Ok(None))
}

/// Broadcasting that fails where ONNX's does: two different numbers, neither 1. With `unknown`
/// (the check's partial facts) it also follows ONNX where a symbol meets a number: the number
/// (other than 1) wins, and two different symbols give the unknown dim.
pub(super) fn broadcast_checked(a: &[Dim], b: &[Dim], unknown: Option<&Dim>) -> Inferred {
    let r = a.len().max(b.len());
    let mut out = Vec::with_capacity(r);
    for i in 0..r {
        let da = (i + a.len()).checked_sub(r).map(|j| &a[j]);
        let db = (i + b.len()).checked_sub(r).map(|j| &b[j]);
        if let (Some(&Dim::Fixed(x)), Some(&Dim::Fixed(y))) = (da, db) {
            if x != y && x != 1 && y != 1 {
                return Err(format!("shapes {} and {} do not broadcast", shape_text(a), shape_text(b)));
            }
        }
        out.push(match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(Dim::Fixed(1)), Some(y)) | (Some(y), Some(Dim::Fixed(1))) => y.clone(),
            (Some(n @ Dim::Fixed(_)), Some(_)) | (Some(_), Some(n @ Dim::Fixed(_))) if unknown.is_some() => n.clone(),
            _ => match unknown {
                Some(u) => u.clone(),
                None => return Ok(None),
            },
        });
    }
    Ok(Some(out))
}

/// Every input of `node` broadcast together (the first one's shape must be known).
pub(super) fn broadcast_all(facts: &dyn Facts, node: &Node) -> Inferred {
    if shape_of(facts, node, 0).is_none() {
        return Ok(None);
    }
    let unknown = facts.unknown();
    let mut acc: Option<Vec<Dim>> = Some(Vec::new());
    for v in node.inputs.iter() {
        let Some(s) = v.and_then(|v| facts.shape(v)) else {
            acc = None;
            continue;
        };
        if let Some(a) = &acc {
            acc = broadcast_checked(a, s, unknown.as_ref())?;
        }
    }
    Ok(acc)
}
