//! One small graph per rule: the rule fires where it should, and for rules that could change
//! results, does not fire when a condition fails.

use std::rc::Rc;

use super::*;
use crate::onnx::builder::Builder;
use crate::onnx::ir::{AttrValue, DType, Dim, Model, TensorData, Value};

fn d(s: &str) -> Dim {
    match s.parse::<i64>() {
        Ok(n) => Dim::Fixed(n),
        Err(_) => Dim::Param(s.into()),
    }
}

fn dims(s: &str) -> Vec<Dim> {
    s.split_whitespace().map(d).collect()
}

struct T {
    b: Builder,
    opset: i64,
}

impl T {
    fn new(opset: i64) -> Self {
        T { b: Builder::new(opset), opset }
    }
    fn input(&mut self, dtype: DType, shape: &str) -> Value {
        self.b.add_input(Some(dtype), Some(dims(shape)))
    }
    fn x(&mut self, shape: &str) -> Value {
        self.input(DType::Float, shape)
    }
    fn f32s(&mut self, shape: &[i64], v: &[f64]) -> Value {
        let t = TensorData::from_f64_as(DType::Float, shape.to_vec(), v).expect("float");
        self.b.add_initializer(t)
    }
    fn scalar(&mut self, v: f64) -> Value {
        self.f32s(&[], &[v])
    }
    fn i64s(&mut self, v: &[i64]) -> Value {
        self.b.add_initializer(TensorData::from_i64s(vec![v.len() as i64], v))
    }
    /// A node with output shape `shape` ("" for unknown).
    fn op(&mut self, op: &'static str, ins: &[Value], attrs: Vec<(&str, AttrValue)>, shape: &str) -> Value {
        let mut call = self.b.call(op, 1, ins.iter().map(|&v| Some(v)).collect());
        for (n, a) in attrs {
            call = call.attr(n, a);
        }
        let v = call.out();
        if !shape.is_empty() {
            self.b.info_mut(v).shape = Some(dims(shape));
        }
        v
    }
    fn run(self, outs: &[Value]) -> (Model, OptimizeStats) {
        let mut b = self.b;
        b.graphs[0].outputs = outs.to_vec();
        let mut m = b.finish();
        let mut st = OptimizeStats::default();
        rewrite(&mut m, self.opset, &mut st);
        crate::onnx::dce::eliminate_dead_code(&mut m.graph);
        (m, st)
    }
}

fn ops(m: &Model) -> Vec<&str> {
    m.graph.nodes.iter().map(|n| n.op_type.as_str()).collect()
}

fn fired(st: &OptimizeStats, rule: &str) -> usize {
    st.rules_fired.get(rule).copied().unwrap_or(0)
}

fn ints(v: &[i64]) -> AttrValue {
    AttrValue::Ints(v.to_vec())
}

#[test]
fn every_rule_pattern_compiles_and_commutes() {
    let v = rules::variants();
    for x in v {
        // Compiles the egg pattern (panics on a bad pattern).
        let _ = x.rewrite();
    }
    for (i, r) in ruleset::RULES.iter().enumerate() {
        assert!(v.iter().any(|x| x.rule == i), "{} has no variant", r.name);
    }
    // Two commutative nodes give four variants.
    let p = rules::Pat::parse("(Mul (Add ?x #c) ?y)").expect("parse");
    assert_eq!(p.commuted().len(), 4);
    assert_eq!(p.to_egg(), "(Mul (Add ?x ?c ?_attrs1) ?y ?_attrs2)");
}

#[test]
fn identity_removed_and_graph_output_keeps_its_name() {
    let mut t = T::new(20);
    let x = t.x("2 3");
    let y = t.op("Identity", &[x], vec![], "2 3");
    let z = t.op("Relu", &[y], vec![], "2 3");
    let (m, st) = t.run(&[z]);
    assert_eq!(fired(&st, "identity"), 1);
    assert_eq!(ops(&m), ["Relu"]);
    assert_eq!(m.graph.nodes[0].inputs[0], Some(x));
    assert_eq!(m.graph.outputs, [z]);
    assert_eq!(m.graph.nodes[0].outputs, [z]);
}

#[test]
fn noop_at_graph_output_becomes_identity_under_the_output_name() {
    let mut t = T::new(20);
    let x = t.x("2 3");
    let one = t.f32s(&[1], &[1.0]);
    let y = t.op("Mul", &[x, one], vec![], "2 3");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "mul-one"), 1);
    assert_eq!(ops(&m), ["Identity"]);
    assert_eq!(m.graph.nodes[0].outputs, [y]);
}

#[test]
fn transpose_rules() {
    let mut t = T::new(20);
    let x = t.x("2 3 4");
    let a = t.op("Transpose", &[x], vec![("perm", ints(&[0, 1, 2]))], "2 3 4");
    let b = t.op("Transpose", &[a], vec![("perm", ints(&[1, 0, 2]))], "3 2 4");
    let c = t.op("Transpose", &[b], vec![("perm", ints(&[0, 2, 1]))], "3 4 2");
    let e = t.op("Relu", &[c], vec![], "3 4 2");
    let (m, st) = t.run(&[e]);
    assert!(fired(&st, "transpose-noop") >= 1);
    assert!(fired(&st, "transpose-transpose") >= 1);
    assert_eq!(ops(&m), ["Transpose", "Relu"]);
    // out[i] = x[p1[p2[i]]]: p1 = [1, 0, 2], p2 = [0, 2, 1] → [1, 2, 0].
    assert!(matches!(m.graph.nodes[0].attr("perm"), Some(AttrValue::Ints(p)) if p == &[1, 2, 0]));

    // Inverse permutations cancel.
    let mut t = T::new(20);
    let x = t.x("2 3");
    let a = t.op("Transpose", &[x], vec![("perm", ints(&[1, 0]))], "3 2");
    let b = t.op("Transpose", &[a], vec![("perm", ints(&[1, 0]))], "2 3");
    let e = t.op("Relu", &[b], vec![], "2 3");
    let (m, _) = t.run(&[e]);
    assert_eq!(ops(&m), ["Relu"]);
}

#[test]
fn cast_rules() {
    let mut t = T::new(20);
    let x = t.x("4");
    let a = t.op("Cast", &[x], vec![("to", AttrValue::Int(1))], "4");
    let b = t.op("Cast", &[a], vec![("to", AttrValue::Int(11))], "4");
    let c = t.op("Cast", &[b], vec![("to", AttrValue::Int(7))], "4");
    let (m, st) = t.run(&[c]);
    assert_eq!(fired(&st, "cast-noop"), 1);
    // float → double is exact, so float → double → int64 is float → int64.
    assert!(fired(&st, "cast-cast") >= 1);
    assert_eq!(ops(&m), ["Cast"]);

    // float → int32 → float rounds: kept.
    let mut t = T::new(20);
    let x = t.x("4");
    let a = t.op("Cast", &[x], vec![("to", AttrValue::Int(6))], "4");
    let b = t.op("Cast", &[a], vec![("to", AttrValue::Int(1))], "4");
    let (m, st) = t.run(&[b]);
    assert_eq!(fired(&st, "cast-cast"), 0);
    assert_eq!(ops(&m), ["Cast", "Cast"]);
}

#[test]
fn reshape_rules() {
    let mut t = T::new(20);
    let x = t.x("N 6");
    let s0 = t.i64s(&[0, 6]);
    let a = t.op("Reshape", &[x, s0], vec![], "N 6");
    let s1 = t.i64s(&[-1, 2, 3]);
    let b = t.op("Reshape", &[a, s1], vec![], "N 2 3");
    let s2 = t.i64s(&[-1, 3, 2]);
    let c = t.op("Reshape", &[b, s2], vec![], "N 3 2");
    let (m, st) = t.run(&[c]);
    assert!(fired(&st, "reshape-noop") >= 1);
    assert!(fired(&st, "reshape-reshape") >= 1);
    assert_eq!(ops(&m), ["Reshape"]);
    assert_eq!(m.graph.nodes[0].inputs, [Some(x), Some(s2)]);

    // A 0 in the outer shape copies an intermediate dimension: kept.
    let mut t = T::new(20);
    let x = t.x("4 6");
    let s1 = t.i64s(&[2, 12]);
    let b = t.op("Reshape", &[x, s1], vec![], "2 12");
    let s2 = t.i64s(&[0, 3, 4]);
    let c = t.op("Reshape", &[b, s2], vec![], "2 3 4");
    let (m, st) = t.run(&[c]);
    assert_eq!(fired(&st, "reshape-reshape"), 0);
    assert_eq!(ops(&m).len(), 2);
}

#[test]
fn unsqueeze_chain_merges() {
    let mut t = T::new(20);
    let x = t.x("N");
    let a0 = t.i64s(&[0]);
    let a1 = t.i64s(&[1]);
    let a3 = t.i64s(&[3]);
    let u1 = t.op("Unsqueeze", &[x, a0], vec![], "1 N");
    let u2 = t.op("Unsqueeze", &[u1, a1], vec![], "1 1 N");
    let u3 = t.op("Unsqueeze", &[u2, a3], vec![], "1 1 N 1");
    let (m, st) = t.run(&[u3]);
    assert!(fired(&st, "unsqueeze-unsqueeze") >= 1);
    assert_eq!(ops(&m), ["Unsqueeze"]);
    let axes = m.graph.nodes[0].inputs[1].and_then(|v| m.value(v).constant.as_deref()).and_then(|t| t.to_i64s());
    assert_eq!(axes, Some(vec![0, 1, 3]));

    // Inner axes land between the outer ones: x[N] →(axis 0)→ [1, N] →(axis 0)→ [1, 1, N].
    let mut t = T::new(20);
    let x = t.x("N");
    let a0 = t.i64s(&[0]);
    let u1 = t.op("Unsqueeze", &[x, a0], vec![], "1 N");
    let u2 = t.op("Unsqueeze", &[u1, a0], vec![], "1 1 N");
    let (m, _) = t.run(&[u2]);
    let axes = m.graph.nodes[0].inputs[1].and_then(|v| m.value(v).constant.as_deref()).and_then(|t| t.to_i64s());
    assert_eq!(axes, Some(vec![0, 1]));
}

#[test]
fn expand_noop_only_when_shape_kept() {
    let mut t = T::new(20);
    let x = t.x("N 3");
    let s = t.i64s(&[1, 3]);
    let e = t.op("Expand", &[x, s], vec![], "N 3");
    let y = t.op("Relu", &[e], vec![], "N 3");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "expand-noop"), 1);
    assert_eq!(ops(&m), ["Relu"]);

    // Expanding a symbolic dimension by a fixed size is not a no-op.
    let mut t = T::new(20);
    let x = t.x("N 3");
    let s = t.i64s(&[4, 3]);
    let e = t.op("Expand", &[x, s], vec![], "N 3");
    let (m, st) = t.run(&[e]);
    assert_eq!(fired(&st, "expand-noop"), 0);
    assert_eq!(ops(&m), ["Expand"]);
}

#[test]
fn slice_noop_only_for_whole_range() {
    let mut t = T::new(20);
    let x = t.x("N 8");
    let st0 = t.i64s(&[0]);
    let en = t.i64s(&[i64::MAX]);
    let ax = t.i64s(&[0]);
    let s = t.op("Slice", &[x, st0, en, ax], vec![], "N 8");
    let y = t.op("Relu", &[s], vec![], "N 8");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "slice-noop"), 1);
    assert_eq!(ops(&m), ["Relu"]);

    let mut t = T::new(20);
    let x = t.x("N 8");
    let st0 = t.i64s(&[0]);
    let en = t.i64s(&[7]);
    let ax = t.i64s(&[1]);
    let s = t.op("Slice", &[x, st0, en, ax], vec![], "N 7");
    let (_, st) = t.run(&[s]);
    assert_eq!(fired(&st, "slice-noop"), 0);
}

#[test]
fn dropout_in_inference_is_removed() {
    let mut t = T::new(20);
    let x = t.x("2 3");
    let r = t.scalar(0.1);
    let dr = t.op("Dropout", &[x, r], vec![], "2 3");
    let y = t.op("Relu", &[dr], vec![], "2 3");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "dropout-noop"), 1);
    assert_eq!(ops(&m), ["Relu"]);

    let mut t = T::new(20);
    let x = t.x("2 3");
    let r = t.scalar(0.1);
    let train = t.b.add_initializer(TensorData { dtype: DType::Bool, dims: vec![], raw: vec![1u8].into() });
    let dr = t.op("Dropout", &[x, r, train], vec![], "2 3");
    let (_, st) = t.run(&[dr]);
    assert_eq!(fired(&st, "dropout-noop"), 0);
}

#[test]
fn neutral_elements() {
    for (op, v, rule) in
        [("Mul", 1.0, "mul-one"), ("Div", 1.0, "div-one"), ("Add", 0.0, "add-zero"), ("Sub", 0.0, "sub-zero")]
    {
        let mut t = T::new(20);
        let x = t.x("N 3");
        let c = t.f32s(&[1, 3], &[v, v, v]);
        let y = t.op(op, &[x, c], vec![], "N 3");
        let z = t.op("Relu", &[y], vec![], "N 3");
        let (m, st) = t.run(&[z]);
        assert_eq!(fired(&st, rule), 1, "{rule} {:?} {:?}", st.rules_rejected, st.egraph_windows);
        assert_eq!(ops(&m), ["Relu"], "{rule}");
    }
    // A neutral operand that broadcasts the input to a higher rank changes the shape: kept.
    let mut t = T::new(20);
    let x = t.x("3");
    let c = t.f32s(&[2, 3], &[1.0; 6]);
    let y = t.op("Mul", &[x, c], vec![], "2 3");
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "mul-one"), 0);
    // Commuted: 1 * x.
    let mut t = T::new(20);
    let x = t.x("3");
    let c = t.f32s(&[], &[1.0]);
    let y = t.op("Mul", &[c, x], vec![], "3");
    let z = t.op("Relu", &[y], vec![], "3");
    let (m, st) = t.run(&[z]);
    assert_eq!(fired(&st, "mul-one"), 1);
    assert_eq!(ops(&m), ["Relu"]);
}

#[test]
fn min_max_becomes_clip() {
    let mut t = T::new(20);
    let x = t.x("N 3");
    let lo = t.scalar(0.0);
    let hi = t.scalar(6.0);
    let a = t.op("Max", &[x, lo], vec![], "N 3");
    let b = t.op("Min", &[a, hi], vec![], "N 3");
    let (m, st) = t.run(&[b]);
    assert_eq!(fired(&st, "min-max-clip"), 1);
    assert_eq!(ops(&m), ["Clip"]);

    // Max(Min(x, hi), lo) with lo > hi is lo everywhere; Clip would give hi.
    let mut t = T::new(20);
    let x = t.x("N 3");
    let lo = t.scalar(6.0);
    let hi = t.scalar(0.0);
    let a = t.op("Min", &[x, hi], vec![], "N 3");
    let b = t.op("Max", &[a, lo], vec![], "N 3");
    let (_, st) = t.run(&[b]);
    assert_eq!(fired(&st, "min-max-clip"), 0);
}

#[test]
fn relu_chains() {
    let mut t = T::new(20);
    let x = t.x("4");
    let a = t.op("Relu", &[x], vec![], "4");
    let b = t.op("Relu", &[a], vec![], "4");
    let (m, st) = t.run(&[b]);
    assert_eq!(fired(&st, "relu-relu"), 1);
    assert_eq!(ops(&m), ["Relu"]);

    let mut t = T::new(20);
    let x = t.x("4");
    let lo = t.scalar(-1.0);
    let hi = t.scalar(6.0);
    let a = t.op("Relu", &[x], vec![], "4");
    let b = t.op("Clip", &[a, lo, hi], vec![], "4");
    let (m, st) = t.run(&[b]);
    assert_eq!(fired(&st, "relu-clip"), 1);
    assert_eq!(ops(&m), ["Clip"]);
    let lo = m.graph.nodes[0].inputs[1].and_then(|v| m.value(v).constant.as_deref()).and_then(analysis::to_f64s);
    assert_eq!(lo, Some(vec![0.0]));

    // Relu(Clip(x, lo, hi)) with hi < 0 is all zeros: kept.
    let mut t = T::new(20);
    let x = t.x("4");
    let lo = t.scalar(-3.0);
    let hi = t.scalar(-1.0);
    let a = t.op("Clip", &[x, lo, hi], vec![], "4");
    let b = t.op("Relu", &[a], vec![], "4");
    let (_, st) = t.run(&[b]);
    assert_eq!(fired(&st, "relu-clip"), 0);
}

#[test]
fn sum_over_count_is_mean() {
    let mut t = T::new(20);
    let x = t.x("N 4 8");
    let ax = t.i64s(&[-1]);
    let s = t.op("ReduceSum", &[x, ax], vec![], "N 4 1");
    let n = t.scalar(8.0);
    let y = t.op("Div", &[s, n], vec![], "N 4 1");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "sum-div-mean"), 1);
    assert_eq!(ops(&m), ["ReduceMean"]);

    let mut t = T::new(20);
    let x = t.x("N 4 8");
    let ax = t.i64s(&[-1]);
    let s = t.op("ReduceSum", &[x, ax], vec![], "N 4 1");
    let n = t.scalar(4.0);
    let y = t.op("Div", &[s, n], vec![], "N 4 1");
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "sum-div-mean"), 0);
}

#[test]
fn matmul_average_is_global_average_pool() {
    let mut t = T::new(20);
    let x = t.x("N 8 7 5");
    let mh = t.f32s(&[7, 1], &[1.0 / 7.0; 7]);
    let mw = t.f32s(&[5, 1], &[1.0 / 5.0; 5]);
    let a = t.op("Transpose", &[x], vec![("perm", ints(&[0, 1, 3, 2]))], "N 8 5 7");
    let b = t.op("MatMul", &[a, mh], vec![], "N 8 5 1");
    let c = t.op("Transpose", &[b], vec![("perm", ints(&[0, 1, 3, 2]))], "N 8 1 5");
    let e = t.op("MatMul", &[c, mw], vec![], "N 8 1 1");
    let (m, st) = t.run(&[e]);
    assert_eq!(fired(&st, "global-average-pool"), 1);
    assert_eq!(ops(&m), ["GlobalAveragePool"]);

    // A weighted (not uniform) pooling matrix is not a mean.
    let mut t = T::new(20);
    let x = t.x("N 8 2 2");
    let mh = t.f32s(&[2, 1], &[0.25, 0.75]);
    let mw = t.f32s(&[2, 1], &[0.5, 0.5]);
    let a = t.op("Transpose", &[x], vec![("perm", ints(&[0, 1, 3, 2]))], "N 8 2 2");
    let b = t.op("MatMul", &[a, mh], vec![], "N 8 2 1");
    let c = t.op("Transpose", &[b], vec![("perm", ints(&[0, 1, 3, 2]))], "N 8 1 2");
    let e = t.op("MatMul", &[c, mw], vec![], "N 8 1 1");
    let (_, st) = t.run(&[e]);
    assert_eq!(fired(&st, "global-average-pool"), 0);
}

fn hard_sigmoid_graph(t: &mut T, x: Value, three: f64) -> Value {
    let c3 = t.scalar(three);
    let c0 = t.scalar(0.0);
    let c6 = t.scalar(6.0);
    let a = t.op("Add", &[x, c3], vec![], "N 4");
    let c = t.op("Clip", &[a, c0, c6], vec![], "N 4");
    t.op("Div", &[c, c6], vec![], "N 4")
}

#[test]
fn hard_sigmoid_and_hard_swish() {
    let mut t = T::new(20);
    let x = t.x("N 4");
    let y = hard_sigmoid_graph(&mut t, x, 3.0);
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "hard-sigmoid"), 1);
    assert_eq!(ops(&m), ["HardSigmoid"]);

    let mut t = T::new(20);
    let x = t.x("N 4");
    let y = hard_sigmoid_graph(&mut t, x, 2.0);
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "hard-sigmoid"), 0);

    let mut t = T::new(20);
    let x = t.x("N 4");
    let c3 = t.scalar(3.0);
    let c0 = t.scalar(0.0);
    let c6 = t.scalar(6.0);
    let a = t.op("Add", &[x, c3], vec![], "N 4");
    let c = t.op("Clip", &[a, c0, c6], vec![], "N 4");
    let mu = t.op("Mul", &[x, c], vec![], "N 4");
    let y = t.op("Div", &[mu, c6], vec![], "N 4");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "hard-swish"), 1);
    assert_eq!(ops(&m), ["HardSwish"]);
}

/// Conv(1x1 kernel) + BatchNormalization with known numbers.
fn conv_bn(t: &mut T, w_const: bool, extra_reader: bool) -> (Value, Vec<Value>) {
    let x = t.x("N 2 1 1");
    let w = if w_const { t.f32s(&[3, 2, 1, 1], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) } else { t.x("3 2 1 1") };
    let cb = t.f32s(&[3], &[0.5, -0.5, 1.0]);
    let conv = t.op("Conv", &[x, w, cb], vec![("kernel_shape", ints(&[1, 1]))], "N 3 1 1");
    let s = t.f32s(&[3], &[2.0, 1.0, 0.5]);
    let b = t.f32s(&[3], &[0.1, 0.2, 0.3]);
    let mean = t.f32s(&[3], &[1.0, 0.0, -1.0]);
    let var = t.f32s(&[3], &[4.0, 1.0, 0.25]);
    let y = t.op("BatchNormalization", &[conv, s, b, mean, var], vec![("epsilon", AttrValue::Float(0.0))], "N 3 1 1");
    let mut outs = vec![y];
    if extra_reader {
        outs.push(t.op("Relu", &[conv], vec![], "N 3 1 1"));
    }
    (y, outs)
}

#[test]
fn batchnorm_folds_into_conv() {
    let mut t = T::new(20);
    let (_, outs) = conv_bn(&mut t, true, false);
    let (m, st) = t.run(&outs);
    assert_eq!(fired(&st, "batchnorm-conv"), 1);
    assert_eq!(ops(&m), ["Conv"]);
    let n = &m.graph.nodes[0];
    assert!(n.attr("kernel_shape").is_some(), "conv attributes kept");
    let get =
        |i: usize| n.inputs[i].and_then(|v| m.value(v).constant.as_deref()).and_then(analysis::to_f64s).expect("const");
    // f = s / sqrt(var) = [1, 1, 1]; W' = W * f; b' = (cb - mean) * f + beta.
    assert_eq!(get(1), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = get(2);
    let want = [(0.5 - 1.0) + 0.1, -0.5 + 0.2, (1.0 + 1.0) + 0.3];
    for (g, w) in b.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{b:?}");
    }

    // Conv output read elsewhere: folding would duplicate the conv.
    let mut t = T::new(20);
    let (_, outs) = conv_bn(&mut t, true, true);
    let (_, st) = t.run(&outs);
    assert_eq!(fired(&st, "batchnorm-conv"), 0);
    // Weights that are not constants cannot be folded.
    let mut t = T::new(20);
    let (_, outs) = conv_bn(&mut t, false, false);
    let (_, st) = t.run(&outs);
    assert_eq!(fired(&st, "batchnorm-conv"), 0);
}

#[test]
fn batchnorm_folds_into_conv_transpose_per_output_channel() {
    let mut t = T::new(20);
    let x = t.x("N 2 1 1");
    // [C_in = 2, M = 3, 1, 1]: element (ci, j) scales by f[j].
    let w = t.f32s(&[2, 3, 1, 1], &[1.0; 6]);
    let conv = t.op("ConvTranspose", &[x, w], vec![], "N 3 1 1");
    let s = t.f32s(&[3], &[1.0, 2.0, 3.0]);
    let b = t.f32s(&[3], &[0.0; 3]);
    let mean = t.f32s(&[3], &[0.0; 3]);
    let var = t.f32s(&[3], &[1.0; 3]);
    let y = t.op("BatchNormalization", &[conv, s, b, mean, var], vec![("epsilon", AttrValue::Float(0.0))], "N 3 1 1");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "batchnorm-convtranspose"), 1);
    let n = &m.graph.nodes[0];
    let w = n.inputs[1].and_then(|v| m.value(v).constant.as_deref()).and_then(analysis::to_f64s).expect("const");
    assert_eq!(w, [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
}

#[test]
fn batchnorm_folds_into_gemm() {
    let mut t = T::new(20);
    let x = t.x("N 2");
    let w = t.f32s(&[3, 2], &[1.0; 6]);
    let g = t.op("Gemm", &[x, w], vec![("transB", AttrValue::Int(1))], "N 3");
    let s = t.f32s(&[3], &[1.0, 2.0, 3.0]);
    let b = t.f32s(&[3], &[1.0; 3]);
    let mean = t.f32s(&[3], &[0.0; 3]);
    let var = t.f32s(&[3], &[1.0; 3]);
    let y = t.op("BatchNormalization", &[g, s, b, mean, var], vec![("epsilon", AttrValue::Float(0.0))], "N 3");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "batchnorm-gemm"), 1);
    assert_eq!(ops(&m), ["Gemm"]);
    let w = m.graph.nodes[0].inputs[1].and_then(|v| m.value(v).constant.as_deref()).and_then(analysis::to_f64s);
    assert_eq!(w, Some(vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0]));
}

#[test]
fn matmul_add_becomes_gemm_only_for_2d() {
    let mut t = T::new(20);
    let a = t.x("N 4");
    let w = t.f32s(&[4, 3], &[0.5; 12]);
    let c = t.f32s(&[3], &[1.0; 3]);
    let mm = t.op("MatMul", &[a, w], vec![], "N 3");
    let y = t.op("Add", &[mm, c], vec![], "N 3");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "matmul-add-gemm"), 1);
    assert_eq!(ops(&m), ["Gemm"]);

    let mut t = T::new(20);
    let a = t.x("B N 4");
    let w = t.f32s(&[4, 3], &[0.5; 12]);
    let c = t.f32s(&[3], &[1.0; 3]);
    let mm = t.op("MatMul", &[a, w], vec![], "B N 3");
    let y = t.op("Add", &[mm, c], vec![], "B N 3");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "matmul-add-gemm"), 0);
    assert_eq!(ops(&m), ["MatMul", "Add"]);
}

fn layer_norm_graph(t: &mut T, axes: &[i64]) -> Value {
    let x = t.x("N 5 8");
    let ax = t.i64s(axes);
    let mean = t.op("ReduceMean", &[x, ax], vec![], "N 5 1");
    let dd = t.op("Sub", &[x, mean], vec![], "N 5 8");
    let two = t.scalar(2.0);
    let sq = t.op("Pow", &[dd, two], vec![], "N 5 8");
    let var = t.op("ReduceMean", &[sq, ax], vec![], "N 5 1");
    let eps = t.scalar(1e-5);
    let ve = t.op("Add", &[var, eps], vec![], "N 5 1");
    let sd = t.op("Sqrt", &[ve], vec![], "N 5 1");
    let n = t.op("Div", &[dd, sd], vec![], "N 5 8");
    let w = t.f32s(&[8], &[1.5; 8]);
    let b = t.f32s(&[8], &[0.5; 8]);
    let s = t.op("Mul", &[n, w], vec![], "N 5 8");
    t.op("Add", &[b, s], vec![], "N 5 8")
}

#[test]
fn layer_norm_pattern() {
    let mut t = T::new(20);
    let y = layer_norm_graph(&mut t, &[-1]);
    let (m, st) = t.run(&[y]);
    assert!(fired(&st, "layer-norm") >= 1);
    assert_eq!(ops(&m), ["LayerNormalization"]);
    assert_eq!(m.graph.nodes[0].inputs.len(), 3);
    assert!(matches!(m.graph.nodes[0].attr("axis"), Some(AttrValue::Int(2))));

    // Normalizing over a leading axis is not LayerNormalization.
    let mut t = T::new(20);
    let y = layer_norm_graph(&mut t, &[1]);
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "layer-norm"), 0);
}

fn gelu_erf_graph(t: &mut T) -> Value {
    let x = t.x("N 4");
    let s = t.scalar(std::f64::consts::FRAC_1_SQRT_2);
    let h = t.scalar(0.5);
    let one = t.scalar(1.0);
    let a = t.op("Mul", &[x, s], vec![], "N 4");
    let e = t.op("Erf", &[a], vec![], "N 4");
    let p = t.op("Add", &[e, one], vec![], "N 4");
    let xh = t.op("Mul", &[x, h], vec![], "N 4");
    t.op("Mul", &[xh, p], vec![], "N 4")
}

#[test]
fn gelu_erf_needs_opset_20() {
    let mut t = T::new(20);
    let y = gelu_erf_graph(&mut t);
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "gelu-erf"), 1);
    assert_eq!(ops(&m), ["Gelu"]);

    let mut t = T::new(18);
    let y = gelu_erf_graph(&mut t);
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "gelu-erf"), 0);
    assert_eq!(ops(&m).len(), 5);
}

fn gelu_tanh_graph(t: &mut T, k: f64) -> Value {
    let x = t.x("N 4");
    let h = t.scalar(0.5);
    let three = t.scalar(3.0);
    let kk = t.scalar(k);
    let c = t.scalar((2.0 / std::f64::consts::PI).sqrt());
    let one = t.scalar(1.0);
    let xh = t.op("Mul", &[x, h], vec![], "N 4");
    let p = t.op("Pow", &[x, three], vec![], "N 4");
    let pk = t.op("Mul", &[p, kk], vec![], "N 4");
    let s = t.op("Add", &[x, pk], vec![], "N 4");
    let sc = t.op("Mul", &[s, c], vec![], "N 4");
    let th = t.op("Tanh", &[sc], vec![], "N 4");
    let a = t.op("Add", &[th, one], vec![], "N 4");
    t.op("Mul", &[xh, a], vec![], "N 4")
}

#[test]
fn gelu_tanh_pattern() {
    let mut t = T::new(20);
    let y = gelu_tanh_graph(&mut t, 0.044715);
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "gelu-tanh"), 1);
    assert_eq!(ops(&m), ["Gelu"]);
    assert!(matches!(m.graph.nodes[0].attr("approximate"), Some(AttrValue::String(s)) if s == "tanh"));

    let mut t = T::new(20);
    let y = gelu_tanh_graph(&mut t, 0.05);
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "gelu-tanh"), 0);
}

fn rms_graph(t: &mut T) -> Value {
    let x = t.x("N 5 8");
    let two = t.scalar(2.0);
    let sq = t.op("Pow", &[x, two], vec![], "N 5 8");
    let ax = t.i64s(&[-1]);
    let ms = t.op("ReduceMean", &[sq, ax], vec![], "N 5 1");
    let eps = t.scalar(1e-6);
    let a = t.op("Add", &[ms, eps], vec![], "N 5 1");
    let r = t.op("Sqrt", &[a], vec![], "N 5 1");
    let inv = t.op("Reciprocal", &[r], vec![], "N 5 1");
    let n = t.op("Mul", &[x, inv], vec![], "N 5 8");
    let w = t.f32s(&[8], &[2.0; 8]);
    t.op("Mul", &[w, n], vec![], "N 5 8")
}

#[test]
fn rms_norm_needs_opset_23() {
    let mut t = T::new(23);
    let y = rms_graph(&mut t);
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "rms-norm"), 1);
    assert_eq!(ops(&m), ["RMSNormalization"]);

    let mut t = T::new(20);
    let y = rms_graph(&mut t);
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "rms-norm"), 0);
}

fn attention_graph(t: &mut T, perm: &[i64]) -> Value {
    let q = t.x("B 2 L 4");
    let k = t.x("B 2 L 4");
    let v = t.x("B 2 L 4");
    let mask = t.input(DType::Bool, "B 1 L L");
    let kt = t.op("Transpose", &[k], vec![("perm", ints(perm))], "B 2 4 L");
    let s = t.op("MatMul", &[q, kt], vec![], "B 2 L L");
    let sc = t.scalar(0.5);
    let ss = t.op("Mul", &[s, sc], vec![], "B 2 L L");
    let ninf = t.scalar(f64::NEG_INFINITY);
    let w = t.op("Where", &[mask, ss, ninf], vec![], "B 2 L L");
    let p = t.op("Softmax", &[w], vec![("axis", AttrValue::Int(-1))], "B 2 L L");
    t.op("MatMul", &[p, v], vec![], "B 2 L 4")
}

#[test]
fn attention_needs_opset_23() {
    let mut t = T::new(23);
    let y = attention_graph(&mut t, &[0, 1, 3, 2]);
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "attention"), 1);
    assert_eq!(ops(&m), ["Attention"]);
    assert_eq!(m.graph.nodes[0].inputs.len(), 4);

    let mut t = T::new(20);
    let y = attention_graph(&mut t, &[0, 1, 3, 2]);
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "attention"), 0);
}

#[test]
fn rewritten_nodes_keep_the_replaced_nodes_metadata() {
    let mut t = T::new(20);
    let (y, outs) = conv_bn(&mut t, true, false);
    let mut b = t.b;
    b.graphs[0].outputs = outs;
    let mut m = b.finish();
    for (i, n) in m.graph.nodes.iter_mut().enumerate() {
        n.metadata = Rc::new(vec![("pkg.torch.onnx.fx_node", format!("node{i}"))].into());
    }
    let bn_meta = m.graph.nodes.iter().find(|n| n.op_type == "BatchNormalization").map(|n| n.metadata.clone());
    let mut st = OptimizeStats::default();
    rewrite(&mut m, 20, &mut st);
    crate::onnx::dce::eliminate_dead_code(&mut m.graph);
    assert_eq!(ops(&m), ["Conv"]);
    assert_eq!(Some(m.graph.nodes[0].metadata.clone()), bn_meta);
    assert_eq!(m.graph.nodes[0].outputs, [y]);
}

#[test]
fn values_read_by_subgraphs_are_kept() {
    let mut t = T::new(20);
    let x = t.x("2");
    let one = t.f32s(&[1], &[1.0]);
    let y = t.op("Mul", &[x, one], vec![], "2");
    let cond = t.input(DType::Bool, "");
    // An If whose branches read `y` from the outer scope.
    t.b.begin_subgraph("then");
    let th = t.b.Relu(y).out();
    let then_g = t.b.end_subgraph(vec![th]);
    t.b.begin_subgraph("else");
    let el = t.b.Neg(y).out();
    let else_g = t.b.end_subgraph(vec![el]);
    let out = t.b.If(cond).then_branch(then_g).else_branch(else_g).out();
    let (m, st) = t.run(&[out]);
    // y = x * 1 is folded away, and the branches now read x.
    assert_eq!(fired(&st, "mul-one"), 1);
    assert_eq!(ops(&m), ["If"]);
    let Some(AttrValue::Graph(g)) = m.graph.nodes[0].attr("then_branch") else { panic!("no branch") };
    assert_eq!(g.nodes[0].inputs[0], Some(x));
}

#[test]
fn output_is_deterministic() {
    let build = || {
        let mut t = T::new(20);
        let y = gelu_tanh_graph(&mut t, 0.044715);
        let z = layer_norm_graph(&mut t, &[-1]);
        let (m, _) = t.run(&[y, z]);
        format!("{:?}", m.graph.nodes)
    };
    assert_eq!(build(), build());
}

#[test]
fn windows_respect_the_node_limit() {
    let mut t = T::new(20);
    let y = gelu_tanh_graph(&mut t, 0.044715);
    let mut b = t.b;
    b.graphs[0].outputs = vec![y];
    let mut m = b.finish();
    let mut st = OptimizeStats::default();
    let limits = Limits { max_window_nodes: 3, ..Default::default() };
    rewrite_with(&mut m, 20, &limits, &mut st);
    assert_eq!(fired(&st, "gelu-tanh"), 0);
    assert!(st.egraph_candidates_dropped > 0);
}

#[test]
fn extraction_counts_shared_nodes_once() {
    // y = Relu(a) and z = Relu(Relu(a)): the rewrite makes z's class equal y's; one Relu remains.
    let mut t = T::new(20);
    let x = t.x("4");
    let a = t.op("Relu", &[x], vec![], "4");
    let b = t.op("Relu", &[a], vec![], "4");
    let c = t.op("Neg", &[a], vec![], "4");
    let (m, _) = t.run(&[b, c]);
    assert_eq!(ops(&m).iter().filter(|o| **o == "Relu").count(), 1);
    assert_eq!(m.graph.outputs, [b, c]);
}

#[test]
fn reshape_shape_from_output_shape() {
    let mut t = T::new(20);
    let x = t.x("N 8 1 1");
    let sh = t.op("Shape", &[x], vec![("end", AttrValue::Int(1))], "1");
    let rest = t.i64s(&[8]);
    let cat = t.op("Concat", &[sh, rest], vec![("axis", AttrValue::Int(0))], "2");
    let y = t.op("Reshape", &[x, cat], vec![], "N 8");
    let (m, st) = t.run(&[y]);
    assert_eq!(fired(&st, "reshape-static-shape"), 1, "{:?} {} {:?}", st.rules_fired, st.egraph_windows, ops(&m));
    assert_eq!(ops(&m), ["Reshape"]);
    let s = m.graph.nodes[0].inputs[1].and_then(|v| m.value(v).constant.as_deref()).and_then(|t| t.to_i64s());
    assert_eq!(s, Some(vec![-1, 8]));

    // Two symbolic sizes: no single -1 can stand for both.
    let mut t = T::new(20);
    let x = t.x("N M 8");
    let sh = t.op("Shape", &[x], vec![("end", AttrValue::Int(2))], "2");
    let y = t.op("Reshape", &[x, sh], vec![], "N M");
    let (_, st) = t.run(&[y]);
    assert_eq!(fired(&st, "reshape-static-shape"), 0);
}

/// Rewrite time on chains of 3·n nodes (two rules fire per block). Run with `--ignored --nocapture`
/// to see that time grows linearly with the graph.
#[test]
#[ignore]
fn large_graph_time_is_linear() {
    for n in [20_000usize, 80_000, 320_000] {
        let mut t = T::new(20);
        let mut h = t.x("4 8");
        let one = t.f32s(&[], &[1.0]);
        for _ in 0..n {
            let a = t.op("Transpose", &[h], vec![("perm", ints(&[1, 0]))], "8 4");
            let b = t.op("Transpose", &[a], vec![("perm", ints(&[1, 0]))], "4 8");
            let c = t.op("Mul", &[b, one], vec![], "4 8");
            h = t.op("Neg", &[c], vec![], "4 8");
        }
        let mut b = t.b;
        b.graphs[0].outputs = vec![h];
        let mut m = b.finish();
        let mut st = OptimizeStats::default();
        let start = std::time::Instant::now();
        rewrite(&mut m, 20, &mut st);
        let el = start.elapsed();
        crate::onnx::dce::eliminate_dead_code(&mut m.graph);
        assert_eq!(m.graph.nodes.len(), n);
        println!("{} nodes: {:.1} ms, {} windows", 4 * n, el.as_secs_f64() * 1e3, st.egraph_windows);
    }
}
