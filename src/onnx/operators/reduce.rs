//! Reductions and the operators that search or accumulate along an axis.

use super::dims::shape_of;
use super::{attr_int, attr_ints, const_ints, input, norm_axis, Facts, Form, FormCtx, Inferred, Older, Op, Rewrite};
use crate::onnx::ir::{DType, Dim, Node, TensorData};

use DType::*;

/// A reduction whose axes became an input at opset 18; older opsets take constant axes as an
/// attribute.
const fn reduce_18(name: &'static str, runtime_gaps: &'static [DType]) -> Op {
    Op {
        name,
        shape: super::Shape::Rule(reduce),
        runtime_gaps,
        introduced: Some(1),
        forms: &[Form { since: 18, form: "", used: always, older: Older::Rewrite(Rewrite::AxesAttribute) }],
        ..Op::NONE
    }
}

pub(super) const OPS: &[Op] = &[
    reduce_18("ReduceL1", &[Uint32]),
    reduce_18("ReduceL2", &[Uint32]),
    reduce_18("ReduceLogSum", &[]),
    reduce_18("ReduceLogSumExp", &[Uint32]),
    reduce_18("ReduceMax", &[Uint32]),
    reduce_18("ReduceMean", &[Uint32]),
    reduce_18("ReduceMin", &[Uint32]),
    Op { eval: Some(element_count), ..reduce_18("ReduceProd", &[Uint32]) },
    reduce_18("ReduceSumSquare", &[Uint32]),
    // ReduceSum's axes are an input from 13 on, the oldest opset fxonnx writes.
    Op {
        name: "ReduceSum",
        shape: super::Shape::Rule(reduce),
        eval: Some(element_count),
        runtime_gaps: &[Uint32],
        ..Op::NONE
    },
    Op { shape: super::Shape::Rule(arg_reduce), runtime_gaps: &[Int16, Uint16, Uint32], ..Op::NONE }.named("ArgMax"),
    Op { shape: super::Shape::Rule(arg_reduce), runtime_gaps: &[Int16, Uint16, Uint32], ..Op::NONE }.named("ArgMin"),
    Op { shape: super::Shape::Rule(top_k), rank: Some(rank_of_input), ..Op::NONE }.named("TopK"),
    Op { shape: super::Shape::Same, runtime_gaps: &[Uint32], ..Op::NONE }.named("CumSum"),
];

fn always(_: &FormCtx) -> bool {
    true
}

fn rank_of_input(facts: &dyn Facts, node: &Node, _: usize) -> Option<usize> {
    shape_of(facts, node, 0).map(<[Dim]>::len)
}

/// `Reduce*` with axes as input 1 (every reduction at opset 18 and above, ReduceSum from 13), or
/// as the `axes` attribute (the others below 18).
fn reduce(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let axes: Vec<usize> = match (input(node, 1), attr_ints(node, "axes")) {
        (None, None) => vec![],
        (None, Some(axes)) => match axes.iter().map(|&a| norm_axis(a, rank)).collect::<Option<_>>() {
            Some(a) => a,
            None => return Ok(None),
        },
        (Some(_), _) => {
            match const_ints(facts, node, 1).and_then(|a| a.iter().map(|&a| norm_axis(a, rank)).collect()) {
                Some(a) => a,
                None => return Ok(None),
            }
        }
    };
    if axes.is_empty() && attr_int(node, "noop_with_empty_axes", 0) != 0 {
        return Ok(Some(x.to_vec()));
    }
    let keep = attr_int(node, "keepdims", 1) != 0;
    let all = axes.is_empty();
    Ok(Some(
        x.iter()
            .enumerate()
            .filter_map(|(i, d)| match (all || axes.contains(&i), keep) {
                (false, _) => Some(d.clone()),
                (true, true) => Some(Dim::Fixed(1)),
                (true, false) => None,
            })
            .collect(),
    ))
}

/// The element count of a reduction over static dims: the product (or sum) of sizes, integers,
/// exact. Over every axis only: no axes input, and no `axes` attribute (below opset 18).
fn element_count(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = inputs.first().copied().flatten().filter(|x| x.dtype == Int64)?;
    if inputs.get(1).copied().flatten().is_some() || node.attr("axes").is_some() {
        return None;
    }
    let vals = x.to_i64s()?;
    let v = if node.op_type == "ReduceProd" {
        vals.iter().try_fold(1i64, |a, &b| a.checked_mul(b))?
    } else {
        vals.iter().try_fold(0i64, |a, &b| a.checked_add(b))?
    };
    let dims = if attr_int(node, "keepdims", 1) == 1 { vec![1; x.dims.len()] } else { vec![] };
    Some(TensorData::from_i64s(dims, &[v]))
}

fn arg_reduce(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let axis = attr_int(node, "axis", 0);
    let Some(axis) = norm_axis(axis, rank) else {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    };
    let mut out = x.to_vec();
    if attr_int(node, "keepdims", 1) != 0 {
        out[axis] = Dim::Fixed(1);
    } else {
        out.remove(axis);
    }
    Ok(Some(out))
}

/// Both outputs (values and indices) have the input's shape with `k` along the axis.
fn top_k(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let Some(x) = shape_of(facts, node, 0) else { return Ok(None) };
    let rank = x.len();
    let Some(k) = const_ints(facts, node, 1) else { return Ok(None) };
    let axis = attr_int(node, "axis", -1);
    let (Some(axis), [k]) = (norm_axis(axis, rank), k.as_slice()) else {
        return Err(format!("axis {axis} of rank {rank}, k {k:?}"));
    };
    let mut out = x.to_vec();
    out[axis] = Dim::Fixed(*k);
    Ok(Some(out))
}
