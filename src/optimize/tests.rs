//! Unit tests of the linear passes on small graphs built with the [`Builder`]: each rule fires where
//! it is exact and stays away where it is not. Numerics of whole models are checked against
//! ONNX Runtime by `tests/optimizer.rs`.

use super::*;
use crate::onnx::builder::Builder;
use crate::onnx::ir::{AttrValue, DType, Dim, Graph, Model, TensorData, Value};

fn p(s: &str) -> Dim {
    Dim::Param(s.into())
}

fn f(n: i64) -> Dim {
    Dim::Fixed(n)
}

fn input(b: &mut Builder, name: &str, dtype: DType, shape: Vec<Dim>) -> Value {
    let v = b.add_input(Some(dtype), Some(shape));
    b.info_mut(v).name = name.into();
    v
}

fn set_shape(b: &mut Builder, v: Value, shape: Vec<Dim>) {
    b.info_mut(v).shape = Some(shape);
}

fn finish(mut b: Builder, outputs: &[(Value, &str)]) -> Model {
    for &(v, name) in outputs {
        b.info_mut(v).name = name.into();
    }
    b.graph_mut().outputs = outputs.iter().map(|o| o.0).collect();
    b.finish()
}

fn ops(m: &Model) -> Vec<&str> {
    m.graph.nodes.iter().map(|n| n.op_type.as_str()).collect()
}

fn output_names(m: &Model) -> Vec<&str> {
    m.graph.outputs.iter().map(|&o| m.value(o).name.as_str()).collect()
}

fn const_of(m: &Model, v: Value) -> Option<Vec<i64>> {
    m.value(v).constant.as_ref()?.to_i64s()
}

fn f32s(t: &TensorData) -> Vec<f32> {
    t.raw.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn f32_tensor(dims: Vec<i64>, vals: &[f32]) -> TensorData {
    let raw: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    TensorData { dtype: DType::Float, dims, raw: raw.into() }
}

// ------------------------------------------------------------------------------------------ no-ops

#[test]
fn identity_is_removed_and_the_output_keeps_its_name() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), f(4)]);
    let r = b.Relu(x).out();
    let y = b.Identity(r).out();
    let mut m = finish(b, &[(y, "y")]);
    let stats = optimize(&mut m);
    assert_eq!(ops(&m), ["Relu"]);
    assert_eq!(output_names(&m), ["y"]);
    assert_eq!(m.graph.nodes[0].outputs, m.graph.outputs);
    assert_eq!(stats.rules_fired.get("noop: Identity"), Some(&1));
}

#[test]
fn identity_from_an_input_to_an_output_stays() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(2)]);
    let y = b.Identity(x).out();
    let mut m = finish(b, &[(y, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Identity"]);
    assert_eq!(output_names(&m), ["y"]);
}

#[test]
fn cast_to_the_same_type_goes_other_casts_stay() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(2)]);
    let same = b.Cast(x).to(DType::Float as i64).out();
    let other = b.Cast(same).to(DType::Double as i64).out();
    let mut m = finish(b, &[(other, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Cast"]);
    assert_eq!(m.graph.nodes[0].inputs[0], Some(x));
}

#[test]
fn reshape_and_expand_to_the_same_symbolic_shape_go() {
    let mut b = Builder::new(20);
    let shape = vec![p("s0"), f(4)];
    let x = input(&mut b, "x", DType::Float, shape.clone());
    let s = b.Shape(x).out();
    let r = b.Reshape(x, s).out();
    set_shape(&mut b, r, shape.clone());
    let e = b.Expand(r, s).out();
    set_shape(&mut b, e, shape.clone());
    let y = b.Relu(e).out();
    // A Reshape that changes the shape stays.
    let t = b.const_i64s(&[4, -1]);
    let z = b.Reshape(y, t).out();
    set_shape(&mut b, z, vec![f(4), p("s0")]);
    let mut m = finish(b, &[(z, "z")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Relu", "Reshape"]);
    assert_eq!(m.graph.nodes[0].inputs[0], Some(x));
}

#[test]
fn reshape_between_different_symbolic_dims_stays() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), p("s1")]);
    let s = b.const_i64s(&[-1, 1]);
    let r = b.Reshape(x, s).out();
    set_shape(&mut b, r, vec![p("s0*s1"), f(1)]);
    let mut m = finish(b, &[(r, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Reshape"]);
}

#[test]
fn identity_transpose_goes_other_transposes_stay() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(2), f(3)]);
    let t = b.Transpose(x).perm(&[0, 1]).out();
    let u = b.Transpose(t).perm(&[1, 0]).out();
    let mut m = finish(b, &[(u, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Transpose"]);
    assert_eq!(m.graph.nodes[0].inputs[0], Some(x));
}

#[test]
fn full_range_slice_goes_partial_slice_stays() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), f(8)]);
    let (st, en, ax) = (b.const_i64s(&[0]), b.const_i64s(&[i64::MAX]), b.const_i64s(&[1]));
    let full = b.Slice(x, st, en, Some(ax), None).out();
    let en2 = b.const_i64s(&[8]);
    let full2 = b.Slice(full, st, en2, Some(ax), None).out();
    let en3 = b.const_i64s(&[7]);
    let part = b.Slice(full2, st, en3, Some(ax), None).out();
    let mut m = finish(b, &[(part, "y")]);
    let stats = optimize(&mut m);
    assert_eq!(ops(&m), ["Slice"]);
    assert_eq!(m.graph.nodes[0].inputs[0], Some(x));
    assert_eq!(stats.rules_fired.get("noop: full-range Slice"), Some(&2));
}

#[test]
fn inference_dropout_goes_training_dropout_stays() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(4)]);
    let d = b.Dropout(x, None, None).out();
    let yes = b.constant_tensor(TensorData { dtype: DType::Bool, dims: vec![], raw: vec![1u8].into() });
    let t = b.Dropout(d, None, Some(yes)).out();
    let mut m = finish(b, &[(t, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Dropout"]);
    assert_eq!(m.graph.nodes[0].inputs[0], Some(x));
}

#[test]
fn and_with_true_goes_unless_it_broadcasts() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Bool, vec![p("s0"), f(3)]);
    let t = b.constant_tensor(TensorData { dtype: DType::Bool, dims: vec![], raw: vec![1u8].into() });
    let a = b.And(t, x).out();
    set_shape(&mut b, a, vec![p("s0"), f(3)]);
    let y = b.Not(a).out();
    // [1] AND true[2] broadcasts to [2]: stays.
    let x1 = input(&mut b, "x1", DType::Bool, vec![f(1)]);
    let t2 = b.constant_tensor(TensorData { dtype: DType::Bool, dims: vec![2], raw: vec![1u8, 1].into() });
    let wide = b.And(x1, t2).out();
    set_shape(&mut b, wide, vec![f(2)]);
    let mut m = finish(b, &[(y, "y"), (wide, "w")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Not", "And"]);
    assert_eq!(m.graph.nodes[0].inputs[0], Some(x));
}

// ------------------------------------------------------------------------------------------ CSE

#[test]
fn equal_nodes_merge_random_ones_do_not() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(4)]);
    let a = b.Relu(x).out();
    let c = b.Relu(x).out();
    let s = b.Add(a, c).out();
    let r1 = b.RandomUniformLike(x).out();
    let r2 = b.RandomUniformLike(x).out();
    let r = b.Sub(r1, r2).out();
    let mut m = finish(b, &[(s, "s"), (r, "r")]);
    let stats = optimize(&mut m);
    assert_eq!(ops(&m), ["Relu", "Add", "RandomUniformLike", "RandomUniformLike", "Sub"]);
    assert_eq!(m.graph.nodes[1].inputs, vec![Some(a), Some(a)]);
    assert_eq!(stats.rules_fired.get("cse: Relu"), Some(&1));
}

#[test]
fn attributes_keep_nodes_apart() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(2), f(3)]);
    let a = b.Softmax(x).axis(0).out();
    let c = b.Softmax(x).axis(1).out();
    let s = b.Add(a, c).out();
    let mut m = finish(b, &[(s, "s")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Softmax", "Softmax", "Add"]);
}

#[test]
fn a_merged_output_keeps_its_name() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(4)]);
    let a = b.Relu(x).out();
    let c = b.Relu(x).out();
    let s = b.Neg(a).out();
    let mut m = finish(b, &[(s, "s"), (c, "c")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Relu", "Neg"]);
    assert_eq!(output_names(&m), ["s", "c"]);
    assert_eq!(m.graph.nodes[0].outputs[0], m.graph.outputs[1]);
}

#[test]
fn two_outputs_merged_into_one_value_get_an_identity() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(4)]);
    let a = b.Relu(x).out();
    let c = b.Relu(x).out();
    let mut m = finish(b, &[(a, "a"), (c, "c")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Relu", "Relu"]);
    assert_eq!(output_names(&m), ["a", "c"]);
}

// ------------------------------------------------------------------------------------------ dedup

#[test]
fn equal_initializers_become_one() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(3)]);
    let w1 = b.add_initializer(f32_tensor(vec![3], &[1.0, 2.0, 3.0]));
    let w2 = b.add_initializer(f32_tensor(vec![3], &[1.0, 2.0, 3.0]));
    let w3 = b.add_initializer(f32_tensor(vec![3], &[1.0, 2.0, 4.0]));
    let a = b.Mul(x, w1).out();
    let c = b.Mul(x, w2).out();
    let d = b.Mul(x, w3).out();
    let s = b.Sum(&[a, c, d]).out();
    let mut m = finish(b, &[(s, "s")]);
    optimize(&mut m);
    // The two equal weights merge, and then so do the two equal Muls.
    assert_eq!(m.graph.initializers, vec![w1, w3]);
    assert_eq!(ops(&m), ["Mul", "Mul", "Sum"]);
}

// ------------------------------------------------------------------------------------------ folding

#[test]
fn weight_transpose_folds() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), f(3)]);
    let w = b.add_initializer(f32_tensor(vec![2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    let wt = b.Transpose(w).perm(&[1, 0]).out();
    let y = b.MatMul(x, wt).out();
    let mut m = finish(b, &[(y, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["MatMul"]);
    let folded = m.value(m.graph.nodes[0].inputs[1].unwrap_or(wt)).constant.clone().expect("folded");
    assert_eq!(folded.dims, vec![3, 2]);
    assert_eq!(f32s(&folded), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
}

/// `Gemm(a, Transpose(w))` reads `w` as stored with `transB` set (before constant folding could
/// fold the transpose into a new weight), and a transposed `a` under `transA=1` cancels out.
#[test]
fn transposes_read_by_gemm_become_its_trans_flags() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(3), p("s0")]);
    let w = b.add_initializer(f32_tensor(vec![2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    let xt = b.Transpose(x).out();
    let wt = b.Transpose(w).perm(&[1, 0]).out();
    let y = b.Gemm(xt, wt, None).transA(1).out();
    let mut m = finish(b, &[(y, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Gemm"]);
    let gemm = &m.graph.nodes[0];
    assert_eq!(gemm.inputs[..2], [Some(x), Some(w)]);
    let flag = |name: &str| gemm.attributes.iter().find(|a| a.name == name).map(|a| a.value.clone());
    assert!(matches!(flag("transA"), Some(AttrValue::Int(0))), "{:?}", flag("transA"));
    assert!(matches!(flag("transB"), Some(AttrValue::Int(1))), "{:?}", flag("transB"));
    // The weight is the stored one, not a folded copy.
    assert_eq!(f32s(m.value(w).constant.as_ref().expect("weight")), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn shared_large_transpose_does_not_fold() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(100), f(100)]);
    let w = b.add_initializer(f32_tensor(vec![100, 100], &vec![0.5; 10_000]));
    let wt = b.Transpose(w).perm(&[1, 0]).out();
    let y = b.MatMul(x, wt).out();
    let z = b.Add(y, w).out();
    let mut m = finish(b, &[(z, "z")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Transpose", "MatMul", "Add"]);
}

/// A large weight transposed and scaled: both fold, recorded as one derived tensor (nothing is
/// computed in the optimizer) whose bytes are those of the eager evaluation, step by step. The
/// weight is larger than the old 1 Mi-element limit on folded transposes.
#[test]
fn large_weight_transpose_and_scale_fold_lazily() {
    use crate::onnx::ir::{Attribute, Node};
    let (rows, cols) = (1100i64, 1000i64);
    let vals: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 100.0).collect();
    let w0 = f32_tensor(vec![rows, cols], &vals);
    let scale = f32_tensor(vec![rows], &(0..rows).map(|i| 1.0 + i as f32 / 3.0).collect::<Vec<_>>());
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), f(cols)]);
    let w = b.add_initializer(w0.clone());
    let s = b.add_initializer(scale.clone());
    let wt = b.Transpose(w).perm(&[1, 0]).out();
    let ws = b.Div(wt, s).out();
    let y = b.MatMul(x, ws).out();
    let mut m = finish(b, &[(y, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["MatMul"]);
    let folded = m.value(m.graph.nodes[0].inputs[1].unwrap_or(ws)).constant.clone().expect("folded");
    assert_eq!(folded.dims, vec![cols, rows]);
    assert!(folded.raw.derived().is_some() && folded.raw.existing().is_none(), "computed in the optimizer");
    let node = |op: &str, perm: Option<Vec<i64>>| Node {
        op_type: op.into(),
        domain: String::new(),
        name: String::new(),
        inputs: vec![],
        outputs: vec![],
        attributes: perm.map(|p| Attribute { name: "perm".into(), value: AttrValue::Ints(p) }).into_iter().collect(),
        metadata: Default::default(),
    };
    let t = fold::eval(&node("Transpose", Some(vec![1, 0])), &[Some(&w0)]).expect("transpose");
    let want = fold::eval(&node("Div", None), &[Some(&t), Some(&scale)]).expect("div");
    // Written by the encoder, chunk by chunk: the bytes in the model are the eager ones.
    let bytes = |m: &Model| prost::Message::encode_to_vec(&crate::onnx::encode::to_proto(m));
    let mut eager = m.clone();
    let v = eager.graph.nodes[0].inputs[1].expect("weight");
    eager.values[v.index()].constant = Some(Box::new(want.clone()));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("m.onnx");
    crate::onnx::encode::save_model(&m, &path, &crate::onnx::encode::DataPlacement::Inline).expect("save");
    assert!(folded.raw.existing().is_none(), "the save computed it whole");
    assert!(std::fs::read(&path).expect("read") == bytes(&eager));
    assert!(folded.raw == want.raw);
}

#[test]
fn integer_shape_arithmetic_folds() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(24)]);
    let a = b.const_i64s(&[2, 3]);
    let c = b.const_i64s(&[4]);
    let cat = b.Concat(&[a, c]).axis(0).out();
    let idx = b.const_i64s(&[2, 0]);
    let g = b.Gather(cat, idx).out();
    let one = b.scalar_i64(1);
    let sum = b.Add(g, one).out();
    let two = b.scalar_i64(2);
    let q = b.Div(sum, two).out(); // [5, 3] / 2 = [2, 1]
    let last = b.const_i64s(&[-1]);
    let shape = b.Concat(&[q, last]).axis(0).out();
    let r = b.Reshape(x, shape).out();
    let mut m = finish(b, &[(r, "r")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Reshape"]);
    assert_eq!(const_of(&m, m.graph.nodes[0].inputs[1].unwrap_or(shape)), Some(vec![2, 1, -1]));
}

#[test]
fn fold_evaluator_ops() {
    use crate::onnx::ir::{Attribute, Node};
    let node = |op: &str, attrs: Vec<(&str, AttrValue)>| Node {
        op_type: op.into(),
        domain: String::new(),
        name: String::new(),
        inputs: vec![],
        outputs: vec![],
        attributes: attrs.into_iter().map(|(n, value)| Attribute { name: n.into(), value }).collect(),
        metadata: Default::default(),
    };
    let i64t = |dims: Vec<i64>, v: &[i64]| TensorData::from_i64s(dims, v);
    let ints = |t: Option<TensorData>| t.and_then(|t| t.to_i64s());
    let x = i64t(vec![2, 3], &[0, 1, 2, 3, 4, 5]);
    // Slice with a negative step.
    let (s, e, a, st) = (i64t(vec![1], &[-1]), i64t(vec![1], &[i64::MIN]), i64t(vec![1], &[1]), i64t(vec![1], &[-2]));
    let out = fold::eval(&node("Slice", vec![]), &[Some(&x), Some(&s), Some(&e), Some(&a), Some(&st)]);
    assert_eq!(ints(out), Some(vec![2, 0, 5, 3]));
    // Transpose of a 3-D tensor.
    let y = i64t(vec![2, 1, 3], &[0, 1, 2, 3, 4, 5]);
    let out = fold::eval(&node("Transpose", vec![("perm", AttrValue::Ints(vec![2, 0, 1]))]), &[Some(&y)]);
    assert_eq!(out.as_ref().map(|t| t.dims.clone()), Some(vec![3, 2, 1]));
    assert_eq!(ints(out), Some(vec![0, 3, 1, 4, 2, 5]));
    // Range, Where, Expand, ConstantOfShape, Equal.
    let r = fold::eval(
        &node("Range", vec![]),
        &[Some(&i64t(vec![], &[5])), Some(&i64t(vec![], &[-1])), Some(&i64t(vec![], &[-2]))],
    );
    assert_eq!(ints(r), Some(vec![5, 3, 1]));
    let cond = TensorData { dtype: DType::Bool, dims: vec![3], raw: vec![1u8, 0, 1].into() };
    let w = fold::eval(&node("Where", vec![]), &[Some(&cond), Some(&x), Some(&i64t(vec![], &[9]))]);
    assert_eq!(ints(w), Some(vec![0, 9, 2, 3, 9, 5]));
    let ex = fold::eval(&node("Expand", vec![]), &[Some(&i64t(vec![2, 1], &[7, 8])), Some(&i64t(vec![2], &[2, 2]))]);
    assert_eq!(ints(ex), Some(vec![7, 7, 8, 8]));
    let cos = fold::eval(
        &node("ConstantOfShape", vec![("value", AttrValue::Tensor(Box::new(i64t(vec![1], &[4]))))]),
        &[Some(&i64t(vec![1], &[3]))],
    );
    assert_eq!(ints(cos), Some(vec![4, 4, 4]));
    let eq = fold::eval(&node("Equal", vec![]), &[Some(&x), Some(&i64t(vec![3], &[0, 4, 2]))]);
    assert_eq!(ints(eq), Some(vec![1, 0, 1, 0, 1, 0]));
    // Not folded: integer division by zero, float Max (NaN semantics differ), out-of-range float casts.
    assert!(fold::eval(&node("Div", vec![]), &[Some(&x), Some(&i64t(vec![], &[0]))]).is_none());
    let fx = f32_tensor(vec![1], &[f32::NAN]);
    assert!(fold::eval(&node("Max", vec![]), &[Some(&fx), Some(&fx)]).is_none());
    let big = f32_tensor(vec![1], &[3e9]);
    assert!(fold::eval(&node("Cast", vec![("to", AttrValue::Int(DType::Int32 as i64))]), &[Some(&big)]).is_none());
    let ok = fold::eval(
        &node("Cast", vec![("to", AttrValue::Int(DType::Int32 as i64))]),
        &[Some(&f32_tensor(vec![2], &[-2.7, 3.9]))],
    );
    assert_eq!(ints(ok), Some(vec![-2, 3]));
    // Float arithmetic is one IEEE operation per element.
    let sum = fold::eval(
        &node("Add", vec![]),
        &[Some(&f32_tensor(vec![2], &[0.1, 1e30])), Some(&f32_tensor(vec![], &[0.2]))],
    );
    assert_eq!(sum.map(|t| f32s(&t)), Some(vec![0.1f32 + 0.2f32, 1e30f32 + 0.2f32]));
}

// ------------------------------------------------------------------------------------------ shapes

#[test]
fn shape_of_static_dims_becomes_a_constant() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), f(3), f(4)]);
    let s = b.Shape(x).start(1).out();
    let r = b.Reshape(x, s).out(); // not a valid model, but the shape input is what matters
    set_shape(&mut b, r, vec![f(3), f(4)]);
    let mut m = finish(b, &[(r, "r")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Reshape"]);
    assert_eq!(const_of(&m, m.graph.nodes[0].inputs[1].unwrap_or(s)), Some(vec![3, 4]));
}

#[test]
fn equal_symbolic_shape_computations_merge() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), p("s1")]);
    let m1 = input(&mut b, "mask", DType::Int64, vec![p("s0"), p("s1")]);
    let a = b.Shape(x).end(1).out();
    let c = b.Shape(m1).end(1).out();
    let zero = b.scalar_i64(0);
    let one = b.scalar_i64(1);
    let ra = b.Range(zero, a, one).out();
    let rc = b.Range(zero, c, one).out();
    let s = b.Add(ra, rc).out();
    let mut m = finish(b, &[(s, "s")]);
    optimize(&mut m);
    // Both Shapes are [s0]: one Shape, one Range.
    assert_eq!(ops(&m), ["Shape", "Range", "Add"]);
}

#[test]
fn reshape_and_expand_targets_become_constants() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), p("s1"), f(8)]);
    let dims = b.Shape(x).out();
    let i0 = b.const_i64s(&[0]);
    let i1 = b.const_i64s(&[1]);
    let d0 = b.Gather(dims, i0).out();
    let d1 = b.Gather(dims, i1).out();
    let four = b.const_i64s(&[4]);
    let two = b.const_i64s(&[2]);
    // [s0, s1, 4, 2]: two symbolic dims, both where the input has them → copied with 0.
    let t = b.Concat(&[d0, d1, four, two]).axis(0).out();
    let r = b.Reshape(x, t).out();
    set_shape(&mut b, r, vec![p("s0"), p("s1"), f(4), f(2)]);
    // [s0*s1, 8]: one symbolic dim → -1.
    let minus = b.const_i64s(&[-1]);
    let eight = b.const_i64s(&[8]);
    let t2 = b.Concat(&[minus, eight]).axis(0).out();
    let flat = b.Reshape(r, t2).out();
    set_shape(&mut b, flat, vec![p("s0*s1"), f(8)]);
    // Expand [s0, 1, 8] to [s0, 5, 8]: [1, 5, 8].
    let y = input(&mut b, "y", DType::Float, vec![p("s0"), f(1), f(8)]);
    let five = b.const_i64s(&[5]);
    let t3 = b.Concat(&[d0, five, eight]).axis(0).out();
    let e = b.Expand(y, t3).out();
    set_shape(&mut b, e, vec![p("s0"), f(5), f(8)]);
    let mut m = finish(b, &[(r, "r"), (flat, "flat"), (e, "e")]);
    super::linear_passes(&mut m, &mut Default::default());
    assert_eq!(ops(&m), ["Reshape", "Reshape", "Expand"]);
    let target = |i: usize| const_of(&m, m.graph.nodes[i].inputs[1].unwrap_or(t));
    assert_eq!(target(0), Some(vec![0, 0, 4, 2]));
    assert_eq!(target(1), Some(vec![-1, 8]));
    assert_eq!(target(2), Some(vec![1, 5, 8]));
    // The second Reshape reads x itself (same elements), not the first one's output.
    assert_eq!(m.graph.nodes[1].inputs[0], Some(x));
}

#[test]
fn a_reshape_of_a_reshape_reads_its_source_unless_its_target_copies_dims() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![p("s0"), f(8)]);
    let t1 = b.const_i64s(&[-1, 2, 4]);
    let r1 = b.Reshape(x, t1).out();
    set_shape(&mut b, r1, vec![p("s0"), f(2), f(4)]);
    let t2 = b.const_i64s(&[-1, 4]);
    let r2 = b.Reshape(r1, t2).out();
    set_shape(&mut b, r2, vec![p("2*s0"), f(4)]);
    // A 0 copies a dim of r1 (its 2), which x does not have there: this one must keep reading r1.
    let t3 = b.const_i64s(&[0, 0, 2, 2]);
    let r3 = b.Reshape(r1, t3).out();
    set_shape(&mut b, r3, vec![p("s0"), f(2), f(2), f(2)]);
    let mut m = finish(b, &[(r2, "r2"), (r3, "r3")]);
    super::linear_passes(&mut m, &mut Default::default());
    assert_eq!(ops(&m), ["Reshape", "Reshape", "Reshape"]);
    assert_eq!(m.graph.nodes[1].inputs[0], Some(x));
    assert_eq!(m.graph.nodes[2].inputs[0], Some(m.graph.nodes[0].outputs[0]));
}

#[test]
fn expand_of_a_different_symbolic_dim_keeps_its_shape_input() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(1), f(8)]);
    let n = input(&mut b, "n", DType::Int64, vec![f(2)]);
    let e = b.Expand(x, n).out();
    set_shape(&mut b, e, vec![p("s3"), f(8)]);
    let mut m = finish(b, &[(e, "e")]);
    optimize(&mut m);
    assert_eq!(m.graph.nodes[0].inputs[1], Some(n));
}

// ------------------------------------------------------------------------------------------ scopes

#[test]
fn subgraph_reads_follow_replacements() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(4)]);
    let c = input(&mut b, "c", DType::Bool, vec![]);
    let a = b.Relu(x).out();
    let dup = b.Relu(x).out();
    let id = b.Identity(dup).out();
    b.begin_subgraph("then_branch");
    let t = b.Neg(id).out();
    let then_g = b.end_subgraph(vec![t]);
    b.begin_subgraph("else_branch");
    let e = b.Abs(a).out();
    let else_g: Graph = b.end_subgraph(vec![e]);
    let y = b
        .If(c)
        .attr("then_branch", AttrValue::Graph(Box::new(then_g)))
        .attr("else_branch", AttrValue::Graph(Box::new(else_g)))
        .out();
    let mut m = finish(b, &[(y, "y")]);
    optimize(&mut m);
    assert_eq!(ops(&m), ["Relu", "If"]);
    let Some(AttrValue::Graph(g)) = m.graph.nodes[1].attr("then_branch") else { panic!("then_branch") };
    assert_eq!(g.nodes[0].inputs[0], Some(a), "the branch reads the surviving Relu");
}

#[test]
fn optimizing_is_deterministic_and_idempotent() {
    let build = || {
        let mut b = Builder::new(20);
        let x = input(&mut b, "x", DType::Float, vec![p("s0"), f(4)]);
        let s = b.Shape(x).out();
        let r1 = b.Reshape(x, s).out();
        set_shape(&mut b, r1, vec![p("s0"), f(4)]);
        let a = b.Relu(r1).out();
        let c = b.Relu(x).out();
        let y = b.Add(a, c).out();
        finish(b, &[(y, "y")])
    };
    let (mut m1, mut m2) = (build(), build());
    optimize(&mut m1);
    optimize(&mut m2);
    let bytes = |m: &Model| prost::Message::encode_to_vec(&crate::onnx::encode::to_proto(m));
    assert_eq!(bytes(&m1), bytes(&m2));
    let again = optimize(&mut m1);
    assert_eq!(again.nodes_before, again.nodes_after);
    assert_eq!(ops(&m1), ["Relu", "Add"]);
}
