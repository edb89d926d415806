//! Unit tests of the linear passes on small graphs written as data (`optimize::testing`): each rule
//! fires where it is exact and stays away where it is not. Below them, built in code, what text
//! cannot show: large and lazily computed weights, the evaluator, subgraphs, bytes. Numerics of whole
//! models are checked against ONNX Runtime by `tests/optimizer.rs`.

use super::testing::{check_linear, check_optimized, check_optimized_at};
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
    check_optimized(
        r#"(float[s0,4] x) => (float[s0,4] y)
           { r = Relu (x)
             y = Identity (r) }"#,
        r#"(float[s0,4] x) => (float[s0,4] y)
           {
             y = Relu (x)
           }
           # fired: noop: Identity"#,
    );
}

#[test]
fn identity_from_an_input_to_an_output_stays() {
    check_optimized(
        r#"(float[2] x) => (float[2] y) { y = Identity (x) }"#,
        r#"(float[2] x) => (float[2] y)
           {
             y = Identity (x)
           }"#,
    );
}

/// A no-op at a graph output whose input cannot take the output's name becomes an Identity, and
/// its other readers read the input.
#[test]
fn noop_at_an_output_of_an_input_becomes_an_identity() {
    check_optimized(
        r#"(float[2,3] x) => (float[2,3] y, float[2,3] z)
           { y = Cast <to = 1> (x)  # float[2,3]
             z = Relu (y)           # float[2,3] }"#,
        r#"(float[2,3] x) => (float[2,3] y, float[2,3] z)
           {
             y = Identity (x)
             z = Relu (x)
           }
           # fired: noop: Cast to the same type"#,
    );
    // Only the no-ops the e-graph rules used to remove there: others stay as they are.
    check_optimized(
        r#"(float[2,3] x) => (float[2,3] y)
           <int64[2] ones = {1, 1}>
           { y = Tile (x, ones)  # float[2,3] }"#,
        r#"(float[2,3] x) => (float[2,3] y)
           <int64[2] ones = {1, 1}>
           {
             y = Tile (x, ones)
           }"#,
    );
}

#[test]
fn cast_to_the_same_type_goes_other_casts_stay() {
    check_optimized(
        r#"(float[2] x) => (double[2] y)
           { same = Cast <to = 1> (x)   # float[2]
             y = Cast <to = 11> (same)  # double[2] }"#,
        r#"(float[2] x) => (double[2] y)
           {
             y = Cast <to = 11> (x)
           }
           # fired: noop: Cast to the same type"#,
    );
}

#[test]
fn reshape_and_expand_to_the_same_symbolic_shape_go() {
    // A Reshape that changes the shape stays.
    check_optimized(
        r#"(float[s0,4] x) => (float[4,s0] z)
           <int64[2] t = {4, -1}>
           { s = Shape (x)
             r = Reshape (x, s)  # float[s0,4]
             e = Expand (r, s)   # float[s0,4]
             y = Relu (e)
             z = Reshape (y, t)  # float[4,s0] }"#,
        r#"(float[s0,4] x) => (float[4,s0] z)
           <int64[2] t = {4, -1}>
           {
             y = Relu (x)
             z = Reshape (y, t)
           }
           # fired: noop: Expand to the same shape, noop: Reshape to the same shape,
           # shapes: constant Expand target, shapes: constant Reshape target"#,
    );
}

#[test]
fn reshape_between_different_symbolic_dims_stays() {
    check_optimized(
        r#"(float[s0,s1] x) => (float[s0*s1,1] y)
           <int64[2] s = {-1, 1}>
           { y = Reshape (x, s)  # float[s0*s1,1] }"#,
        r#"(float[s0,s1] x) => (float[s0*s1,1] y)
           <int64[2] s = {-1, 1}>
           {
             y = Reshape (x, s)
           }"#,
    );
}

#[test]
fn expand_that_keeps_the_shape_goes_one_that_widens_stays() {
    check_optimized(
        r#"(float[N,3] x) => (float[N,3] y)
           <int64[2] s = {1, 3}>
           { e = Expand (x, s)  # float[N,3]
             y = Relu (e)       # float[N,3] }"#,
        r#"(float[N,3] x) => (float[N,3] y)
           {
             y = Relu (x)
           }
           # fired: noop: Expand to the same shape"#,
    );
    // Expanding a symbolic dimension to a fixed size is not a no-op.
    check_optimized(
        r#"(float[N,3] x) => (float[4,3] y)
           <int64[2] s = {4, 3}>
           { e = Expand (x, s)  # float[4,3]
             y = Relu (e)       # float[4,3] }"#,
        r#"(float[N,3] x) => (float[4,3] y)
           <int64[2] s = {4, 3}>
           {
             e = Expand (x, s)
             y = Relu (e)
           }"#,
    );
}

#[test]
fn identity_transpose_goes_other_transposes_stay() {
    check_optimized(
        r#"(float[2,3] x) => (float[3,2] y)
           { t = Transpose <perm = [0, 1]> (x)
             y = Transpose <perm = [1, 0]> (t) }"#,
        r#"(float[2,3] x) => (float[3,2] y)
           {
             y = Transpose <perm = [1, 0]> (x)
           }
           # fired: noop: identity Transpose"#,
    );
}

#[test]
fn full_range_slice_goes_partial_slice_stays() {
    check_optimized(
        r#"(float[s0,8] x) => (float[s0,7] y)
           <int64[1] st = {0}, int64[1] en = {9223372036854775807}, int64[1] ax = {1}, int64[1] en2 = {8},
            int64[1] en3 = {7}>
           { full = Slice (x, st, en, ax)
             full2 = Slice (full, st, en2, ax)
             y = Slice (full2, st, en3, ax) }"#,
        r#"(float[s0,8] x) => (float[s0,7] y)
           <int64[1] st = {0}, int64[1] ax = {1}, int64[1] en3 = {7}>
           {
             y = Slice (x, st, en3, ax)
           }
           # fired: noop: full-range Slice x2"#,
    );
    // A start before the first element is the start; a step other than 1 is not the whole range.
    check_optimized(
        r#"(float[s0,8] x) => (float[s0,4] y)
           <int64[1] st = {-8}, int64[1] en = {8}, int64[1] ax = {1}, int64[1] two = {2}>
           { full = Slice (x, st, en, ax)
             y = Slice (full, st, en, ax, two) }"#,
        r#"(float[s0,8] x) => (float[s0,4] y)
           <int64[1] st = {-8}, int64[1] en = {8}, int64[1] ax = {1}, int64[1] two = {2}>
           {
             y = Slice (x, st, en, ax, two)
           }
           # fired: noop: full-range Slice"#,
    );
}

#[test]
fn inference_dropout_goes_training_dropout_stays() {
    check_optimized(
        r#"(float[4] x) => (float[4] y)
           <float r = {0.1}, bool yes = {1}>
           { d = Dropout (x, r)
             y = Dropout (d, , yes) }"#,
        r#"(float[4] x) => (float[4] y)
           <bool yes = {1}>
           {
             y = Dropout (x, , yes)
           }
           # fired: noop: inference Dropout"#,
    );
}

#[test]
fn and_with_true_goes_unless_it_broadcasts() {
    // [1] AND true[2] broadcasts to [2]: stays.
    check_optimized(
        r#"(bool[s0,3] x, bool[1] x1) => (bool[s0,3] y, bool[2] w)
           <bool t = {1}, bool[2] t2 = {1, 1}>
           { a = And (t, x)      # bool[s0,3]
             y = Not (a)
             w = And (x1, t2)    # bool[2] }"#,
        r#"(bool[s0,3] x, bool[1] x1) => (bool[s0,3] y, bool[2] w)
           <bool[2] t2 = {1, 1}>
           {
             y = Not (x)
             w = And (x1, t2)
           }
           # fired: noop: And with true"#,
    );
}

// ------------------------------------------------------------------------------------------ CSE

#[test]
fn equal_nodes_merge_random_ones_do_not() {
    check_optimized(
        r#"(float[4] x) => (float[4] s, float[4] r)
           { a = Relu (x)
             c = Relu (x)
             s = Add (a, c)
             r1 = RandomUniformLike (x)
             r2 = RandomUniformLike (x)
             r = Sub (r1, r2) }"#,
        r#"(float[4] x) => (float[4] s, float[4] r)
           {
             a = Relu (x)
             s = Add (a, a)
             r1 = RandomUniformLike (x)
             r2 = RandomUniformLike (x)
             r = Sub (r1, r2)
           }
           # fired: cse: Relu"#,
    );
}

#[test]
fn attributes_keep_nodes_apart() {
    check_optimized(
        r#"(float[2,3] x) => (float[2,3] s)
           { a = Softmax <axis = 0> (x)
             c = Softmax <axis = 1> (x)
             s = Add (a, c) }"#,
        r#"(float[2,3] x) => (float[2,3] s)
           {
             a = Softmax <axis = 0> (x)
             c = Softmax <axis = 1> (x)
             s = Add (a, c)
           }"#,
    );
}

#[test]
fn a_merged_output_keeps_its_name() {
    check_optimized(
        r#"(float[4] x) => (float[4] s, float[4] c)
           { a = Relu (x)
             c = Relu (x)
             s = Neg (a) }"#,
        r#"(float[4] x) => (float[4] s, float[4] c)
           {
             c = Relu (x)
             s = Neg (c)
           }
           # fired: cse: Relu"#,
    );
}

#[test]
fn two_outputs_merged_into_one_value_get_an_identity() {
    check_optimized(
        r#"(float[4] x) => (float[4] a, float[4] c)
           { a = Relu (x)
             c = Relu (x) }"#,
        r#"(float[4] x) => (float[4] a, float[4] c)
           {
             a = Relu (x)
             c = Relu (x)
           }"#,
    );
}

// ------------------------------------------------------------------------------------------ dedup

#[test]
fn equal_initializers_become_one() {
    // The two equal weights merge, and then so do the two equal Muls.
    check_optimized(
        r#"(float[3] x) => (float[3] s)
           <float[3] w1 = {1, 2, 3}, float[3] w2 = {1, 2, 3}, float[3] w3 = {1, 2, 4}>
           { a = Mul (x, w1)
             c = Mul (x, w2)
             d = Mul (x, w3)
             s = Sum (a, c, d) }"#,
        r#"(float[3] x) => (float[3] s)
           <float[3] w1 = {1, 2, 3}, float[3] w3 = {1, 2, 4}>
           {
             a = Mul (x, w1)
             d = Mul (x, w3)
             s = Sum (a, a, d)
           }
           # fired: cse: Mul, dedup: initializer"#,
    );
}

// ------------------------------------------------------------------------------------------ folding

#[test]
fn weight_transpose_folds() {
    check_optimized(
        r#"(float[s0,3] x) => (float[s0,2] y)
           <float[2,3] w = {1, 2, 3, 4, 5, 6}>
           { wt = Transpose <perm = [1, 0]> (w)
             y = MatMul (x, wt) }"#,
        r#"(float[s0,3] x) => (float[s0,2] y)
           <float[3,2] wt = {1, 4, 2, 5, 3, 6}>
           {
             y = MatMul (x, wt)
           }
           # fired: fold: Transpose"#,
    );
}

/// `Gemm(a, Transpose(w))` reads `w` as stored with `transB` set (before constant folding could
/// fold the transpose into a new weight), and a transposed `a` under `transA=1` cancels out.
#[test]
fn transposes_read_by_gemm_become_its_trans_flags() {
    check_optimized(
        r#"(float[3,s0] x) => (float[s0,2] y)
           <float[2,3] w = {1, 2, 3, 4, 5, 6}>
           { xt = Transpose (x)
             wt = Transpose <perm = [1, 0]> (w)
             y = Gemm <transA = 1> (xt, wt) }"#,
        r#"(float[3,s0] x) => (float[s0,2] y)
           <float[2,3] w = {1, 2, 3, 4, 5, 6}>
           {
             y = Gemm <transA = 0, transB = 1> (x, w)
           }
           # fired: fold: Transpose, gemm: operand transpose into trans flag x2"#,
    );
}

#[test]
fn integer_shape_arithmetic_folds() {
    // Gather([2, 3, 4], [2, 0]) = [4, 2]; ([4, 2] + 1) / 2 = [2, 1].
    check_optimized(
        r#"(float[24] x) => (float[2,1,12] r)
           <int64[2] a = {2, 3}, int64[1] c = {4}, int64[2] idx = {2, 0}, int64 one = {1}, int64 two = {2},
            int64[1] last = {-1}>
           { cat = Concat <axis = 0> (a, c)
             g = Gather (cat, idx)
             sum = Add (g, one)
             q = Div (sum, two)
             shape = Concat <axis = 0> (q, last)
             r = Reshape (x, shape) }"#,
        r#"(float[24] x) => (float[2,1,12] r)
           <int64[3] shape = {2, 1, -1}>
           {
             r = Reshape (x, shape)
           }
           # fired: fold: Add, fold: Concat x2, fold: Div, fold: Gather"#,
    );
}

/// Tile of a constant folds: [[1, 2]] repeated (2, 2) times.
#[test]
fn tile_of_constants_folds() {
    check_optimized(
        r#"(float[2,4] x) => (float[2,4] y)
           <float[1,2] t = {1, 2}, int64[2] reps = {2, 2}>
           { g = Tile (t, reps)
             y = Add (x, g) }"#,
        r#"(float[2,4] x) => (float[2,4] y)
           <float[2,4] g = {1, 2, 1, 2, 1, 2, 1, 2}>
           {
             y = Add (x, g)
           }
           # fired: fold: Tile"#,
    );
}

/// GatherND of a constant table with constant indices folds: rows (0, 1) and (1, 0) of a 2×2×2
/// table, each a pair of values.
#[test]
fn gather_nd_of_constants_folds() {
    check_optimized(
        r#"(float[2,2] x) => (float[2,2] y)
           <float[2,2,2] t = {1, 2, 3, 4, 5, 6, 7, 8}, int64[2,2] idx = {0, 1, 1, 0}>
           { g = GatherND (t, idx)
             y = Add (x, g) }"#,
        r#"(float[2,2] x) => (float[2,2] y)
           <float[2,2] g = {3, 4, 5, 6}>
           {
             y = Add (x, g)
           }
           # fired: fold: GatherND"#,
    );
}

/// A mean's element count over static dims (ReduceProd of the gathered sizes, then Cast) folds to
/// a constant, which lets the e-graph see sum / count as a mean.
#[test]
fn element_count_of_static_dims_folds() {
    check_optimized(
        r#"(float[N,3,4,5] x) => (float[N,3,1,1] m)
           <int64[2] hw = {4, 5}, int64[2] axes = {2, 3}>
           { n = ReduceProd <keepdims = 0> (hw)
             f = Cast <to = 1> (n)
             s = ReduceSum <keepdims = 1> (x, axes)
             m = Div (s, f) }"#,
        r#"(float[N,3,4,5] x) => (float[N,3,1,1] m)
           <int64[2] axes = {2, 3}>
           {
             m = ReduceMean <keepdims = 1> (x, axes)
           }
           # fired: fold: Cast, fold: ReduceProd, sum-div-mean"#,
    );
}

/// ScatterElements on constants folds (the write-back of a mask built by `fill_` on slices); with a
/// repeated index ONNX leaves the result undefined, so it stays for the runtime.
#[test]
fn scatter_elements_on_constants_folds_unless_an_index_repeats() {
    check_optimized(
        r#"(int64[4] x) => (int64[4] y)
           <int64[4] z = {0, 0, 0, 0}, int64[2] i = {1, -1}, int64[2] u = {7, 9}>
           { s = ScatterElements <axis = 0> (z, i, u)
             y = Add (x, s) }"#,
        r#"(int64[4] x) => (int64[4] y)
           <int64[4] s = {0, 7, 0, 9}>
           {
             y = Add (x, s)
           }
           # fired: fold: ScatterElements"#,
    );
    check_optimized(
        r#"(int64[4] x) => (int64[4] y)
           <int64[4] z = {0, 0, 0, 0}, int64[2] i = {1, 1}, int64[2] u = {7, 9}>
           { s = ScatterElements <axis = 0> (z, i, u)
             y = Add (x, s) }"#,
        r#"(int64[4] x) => (int64[4] y)
           <int64[4] z = {0, 0, 0, 0}, int64[2] i = {1, 1}, int64[2] u = {7, 9}>
           {
             s = ScatterElements <axis = 0> (z, i, u)
             y = Add (x, s)
           }"#,
    );
}

// ------------------------------------------------------------------------------------------ shapes

#[test]
fn shape_of_static_dims_becomes_a_constant() {
    // Not a valid model, but the shape input is what matters.
    check_optimized(
        r#"(float[s0,3,4] x) => (float[3,4] r)
           { s = Shape <start = 1> (x)
             r = Reshape (x, s)  # float[3,4] }"#,
        r#"(float[s0,3,4] x) => (float[3,4] r)
           <int64[2] s = {3, 4}>
           {
             r = Reshape (x, s)
           }
           # fired: shapes: Shape folded"#,
    );
}

#[test]
fn equal_symbolic_shape_computations_merge() {
    // Both Shapes are [s0]: one Shape, one Range.
    check_optimized(
        r#"(float[s0,s1] x, int64[s0,s1] mask) => (int64[s0] s)
           <int64 zero = {0}, int64 one = {1}>
           { a = Shape <end = 1> (x)
             c = Shape <end = 1> (mask)
             ra = Range (zero, a, one)
             rc = Range (zero, c, one)
             s = Add (ra, rc) }"#,
        r#"(float[s0,s1] x, int64[s0,s1] mask) => (int64[s0] s)
           <int64 zero = {0}, int64 one = {1}>
           {
             a = Shape <end = 1> (x)
             ra = Range (zero, a, one)
             s = Add (ra, ra)
           }
           # fired: cse: Range, shapes: Shape merged"#,
    );
}

#[test]
fn reshape_and_expand_targets_become_constants() {
    // [s0, s1, 4, 2]: two symbolic dims, both where the input has them → copied with 0.
    // [s0*s1, 8]: one symbolic dim → -1. Expand [s0, 1, 8] to [s0, 5, 8]: [1, 5, 8].
    // The second Reshape reads x itself (same elements), not the first one's output.
    check_linear(
        r#"(float[s0,s1,8] x, float[s0,1,8] y) => (float[s0,s1,4,2] r, float[s0*s1,8] flat, float[s0,5,8] e)
           <int64[1] i0 = {0}, int64[1] i1 = {1}, int64[1] four = {4}, int64[1] two = {2}, int64[1] minus = {-1},
            int64[1] eight = {8}, int64[1] five = {5}>
           { dims = Shape (x)
             d0 = Gather (dims, i0)
             d1 = Gather (dims, i1)
             t = Concat <axis = 0> (d0, d1, four, two)
             r = Reshape (x, t)              # float[s0,s1,4,2]
             t2 = Concat <axis = 0> (minus, eight)
             flat = Reshape (r, t2)          # float[s0*s1,8]
             t3 = Concat <axis = 0> (d0, five, eight)
             e = Expand (y, t3)              # float[s0,5,8] }"#,
        r#"(float[s0,s1,8] x, float[s0,1,8] y) => (float[s0,s1,4,2] r, float[s0*s1,8] flat, float[s0,5,8] e)
           <int64[2] t2 = {-1, 8}, int64[4] _0 = {0, 0, 4, 2}, int64[3] _1 = {1, 5, 8}>
           {
             r = Reshape (x, _0)
             flat = Reshape (x, t2)
             e = Expand (y, _1)
           }
           # fired: fold: Concat, shapes: Reshape of a Reshape, shapes: constant Expand target,
           # shapes: constant Reshape target"#,
    );
}

#[test]
fn reshapes_merge_unless_the_outer_shape_copies_dims() {
    check_linear(
        r#"(float[N,6] x) => (float[N,3,2] c)
           <int64[3] s1 = {-1, 2, 3}, int64[3] s2 = {-1, 3, 2}>
           { b = Reshape (x, s1)  # float[N,2,3]
             c = Reshape (b, s2)  # float[N,3,2] }"#,
        r#"(float[N,6] x) => (float[N,3,2] c)
           <int64[3] s2 = {-1, 3, 2}>
           {
             c = Reshape (x, s2)
           }
           # fired: shapes: Reshape of a Reshape"#,
    );
    // A 0 in the outer shape copies an intermediate dimension: kept.
    check_linear(
        r#"(float[4,6] x) => (float[2,3,4] c)
           <int64[2] s1 = {2, 12}, int64[3] s2 = {0, 3, 4}>
           { b = Reshape (x, s1)  # float[2,12]
             c = Reshape (b, s2)  # float[2,3,4] }"#,
        r#"(float[4,6] x) => (float[2,3,4] c)
           <int64[2] s1 = {2, 12}, int64[3] s2 = {0, 3, 4}>
           {
             b = Reshape (x, s1)
             c = Reshape (b, s2)
           }"#,
    );
}

#[test]
fn a_reshape_of_a_reshape_reads_its_source_unless_its_target_copies_dims() {
    // A 0 copies a dim of r1 (its 2), which x does not have there: r3 must keep reading r1.
    check_linear(
        r#"(float[s0,8] x) => (float[2*s0,4] r2, float[s0,2,2,2] r3)
           <int64[3] t1 = {-1, 2, 4}, int64[2] t2 = {-1, 4}, int64[4] t3 = {0, 0, 2, 2}>
           { r1 = Reshape (x, t1)   # float[s0,2,4]
             r2 = Reshape (r1, t2)  # float[2*s0,4]
             r3 = Reshape (r1, t3)  # float[s0,2,2,2] }"#,
        r#"(float[s0,8] x) => (float[2*s0,4] r2, float[s0,2,2,2] r3)
           <int64[3] t1 = {-1, 2, 4}, int64[2] t2 = {-1, 4}, int64[4] t3 = {0, 0, 2, 2}>
           {
             r1 = Reshape (x, t1)
             r2 = Reshape (x, t2)
             r3 = Reshape (r1, t3)
           }
           # fired: shapes: Reshape of a Reshape"#,
    );
}

#[test]
fn expand_of_a_different_symbolic_dim_keeps_its_shape_input() {
    check_optimized(
        r#"(float[1,8] x, int64[2] n) => (float[s3,8] e)
           { e = Expand (x, n)  # float[s3,8] }"#,
        r#"(float[1,8] x, int64[2] n) => (float[s3,8] e)
           {
             e = Expand (x, n)
           }"#,
    );
}

// ------------------------------------------------------------------------------------------ built in code

#[test]
fn shared_large_transpose_does_not_fold() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(100), f(100)]);
    let w = b.add_initializer(f32_tensor(vec![100, 100], &vec![0.5; 10_000]));
    let wt = b.Transpose(w).perm(&[1, 0]).out();
    let y = b.MatMul(x, wt);
    let z = b.Add(y, w);
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
    let ws = b.Div(wt, s);
    let y = b.MatMul(x, ws);
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
    let bytes = |m: &Model| prost::Message::encode_to_vec(&crate::onnx::save::to_proto(m));
    let mut eager = m.clone();
    let v = eager.graph.nodes[0].inputs[1].expect("weight");
    eager.values[v.index()].constant = Some(Box::new(want.clone()));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("m.onnx");
    let sources = crate::onnx::save::Sources::none();
    crate::onnx::save::save_model(&m, &path, &crate::onnx::save::DataPlacement::Inline, &sources).expect("save");
    assert!(folded.raw.existing().is_none(), "the save computed it whole");
    assert!(std::fs::read(&path).expect("read") == bytes(&eager));
    assert!(folded.raw == want.raw);
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

/// Exact unary ops, bitwise logic, Clip and float32 Log/Exp (correctly rounded through float64);
/// float64 Log stays for the runtime, and a cast below int32's range is its minimum everywhere.
#[test]
fn fold_evaluator_exact_unary_ops() {
    use crate::onnx::ir::Node;
    let node = |op: &str| Node {
        op_type: op.into(),
        domain: String::new(),
        name: String::new(),
        inputs: vec![],
        outputs: vec![],
        attributes: vec![],
        metadata: Default::default(),
    };
    let i64t = |v: &[i64]| TensorData::from_i64s(vec![v.len() as i64], v);
    let eval =
        |op: &str, args: &[&TensorData]| fold::eval(&node(op), &args.iter().map(|a| Some(*a)).collect::<Vec<_>>());
    let x = f32_tensor(vec![5], &[-2.5, -0.5, 0.0, 1.5, 2.5]);
    let floats = |t: Option<TensorData>| t.map(|t| f32s(&t));
    assert_eq!(floats(eval("Floor", &[&x])), Some(vec![-3.0, -1.0, 0.0, 1.0, 2.0]));
    assert_eq!(floats(eval("Ceil", &[&x])), Some(vec![-2.0, -0.0, 0.0, 2.0, 3.0]));
    assert_eq!(floats(eval("Round", &[&x])), Some(vec![-2.0, -0.0, 0.0, 2.0, 2.0]), "ties to even");
    assert_eq!(floats(eval("Sign", &[&x])), Some(vec![-1.0, -1.0, 0.0, 1.0, 1.0]));
    assert_eq!(floats(eval("Abs", &[&x])), Some(vec![2.5, 0.5, 0.0, 1.5, 2.5]));
    let (lo, hi) = (f32_tensor(vec![], &[-1.0]), f32_tensor(vec![], &[2.0]));
    assert_eq!(floats(eval("Clip", &[&x, &lo, &hi])), Some(vec![-1.0, -0.5, 0.0, 1.5, 2.0]));
    assert!(eval("Clip", &[&f32_tensor(vec![1], &[f32::NAN]), &lo]).is_none(), "NaN is the runtime's");
    let e = f32_tensor(vec![3], &[1.0, 10.0, 0.0]);
    let want: Vec<f32> = [1.0f64, 10.0, 0.0].iter().map(|a| a.ln() as f32).collect();
    assert_eq!(floats(eval("Log", &[&e])), Some(want));
    assert_eq!(floats(eval("Sqrt", &[&f32_tensor(vec![1], &[2.0])])), Some(vec![2f32.sqrt()]));
    let d = TensorData { dtype: DType::Double, dims: vec![1], raw: 10f64.to_le_bytes().to_vec().into() };
    assert!(eval("Log", &[&d]).is_none(), "libm's float64 log may differ by machine");
    let a = i64t(&[0b1100, -1]);
    let b = i64t(&[0b1010, 5]);
    let ints = |t: Option<TensorData>| t.and_then(|t| t.to_i64s());
    assert_eq!(ints(eval("BitwiseAnd", &[&a, &b])), Some(vec![0b1000, 5]));
    assert_eq!(ints(eval("BitwiseOr", &[&a, &b])), Some(vec![0b1110, -1]));
    assert_eq!(ints(eval("BitwiseXor", &[&a, &b])), Some(vec![0b0110, -6]));
    assert_eq!(ints(eval("Sign", &[&i64t(&[-7, 0, 3])])), Some(vec![-1, 0, 1]));
    let to_i32 = Node {
        attributes: vec![crate::onnx::ir::Attribute { name: "to".into(), value: AttrValue::Int(DType::Int32 as i64) }],
        ..node("Cast")
    };
    let neg = f32_tensor(vec![2], &[f32::NEG_INFINITY, -3e9]);
    assert_eq!(ints(fold::eval(&to_i32, &[Some(&neg)])), Some(vec![i32::MIN as i64; 2]));
    assert!(fold::eval(&to_i32, &[Some(&f32_tensor(vec![1], &[f32::INFINITY]))]).is_none(), "x86 and ARM differ");
}

#[test]
fn subgraph_reads_follow_replacements() {
    let mut b = Builder::new(20);
    let x = input(&mut b, "x", DType::Float, vec![f(4)]);
    let c = input(&mut b, "c", DType::Bool, vec![]);
    let a = b.Relu(x);
    let dup = b.Relu(x);
    let id = b.Identity(dup);
    b.begin_subgraph("then_branch");
    let t = b.Neg(id);
    let then_g = b.end_subgraph(vec![t]);
    b.begin_subgraph("else_branch");
    let e = b.Abs(a);
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
        let a = b.Relu(r1);
        let c = b.Relu(x);
        let y = b.Add(a, c);
        finish(b, &[(y, "y")])
    };
    let (mut m1, mut m2) = (build(), build());
    optimize(&mut m1);
    optimize(&mut m2);
    let bytes = |m: &Model| prost::Message::encode_to_vec(&crate::onnx::save::to_proto(m));
    assert_eq!(bytes(&m1), bytes(&m2));
    let again = optimize(&mut m1);
    assert_eq!(again.nodes_before, again.nodes_after);
    assert_eq!(ops(&m1), ["Relu", "Add"]);
}

/// A decode step's attention as the e-graph leaves it (`attention-kv`, `rotary-embedding`): the
/// query, key and value reshaped to heads and moved heads-first, the query and key rotated, the
/// result moved back and its heads merged.
const HEADS_FIRST: &str = r#"(float[B,S,32] xq, float[B,S,16] xk, float[B,S,16] xv, float[B,S,4] cos, float[B,S,4] sin,
                              float[B,2,P,8] pk, float[B,2,P,8] pv)
    => (float[B,S,32] y, float[B,2,T,8] ck, float[B,2,T,8] cv)
    <int64[4] hq = {0, 0, 4, 8}, int64[4] hk = {0, 0, 2, 8}, int64[3] m = {0, 0, 32}>
    { q4 = Reshape (xq, hq)                        # float[B,S,4,8]
      k4 = Reshape (xk, hk)                        # float[B,S,2,8]
      v4 = Reshape (xv, hk)                        # float[B,S,2,8]
      qt = Transpose <perm = [0, 2, 1, 3]> (q4)    # float[B,4,S,8]
      kt = Transpose <perm = [0, 2, 1, 3]> (k4)    # float[B,2,S,8]
      vt = Transpose <perm = [0, 2, 1, 3]> (v4)    # float[B,2,S,8]
      qr = RotaryEmbedding (qt, cos, sin)          # float[B,4,S,8]
      kr = RotaryEmbedding (kt, cos, sin)          # float[B,2,S,8]
      a, ck, cv = Attention <scale = 0.25> (qr, kr, vt, , pk, pv)  # float[B,4,S,8]
      o = Transpose <perm = [0, 2, 1, 3]> (a)      # float[B,S,4,8]
      y = Reshape (o, m)                           # float[B,S,32] }"#;

/// At opset 23 the attention and the rotations read the (batch, sequence, heads x head size)
/// values themselves: no Transpose, no Reshape to heads and back.
#[test]
fn attention_reads_merged_heads_at_opset_23() {
    check_optimized_at(
        23,
        HEADS_FIRST,
        r#"(float[B,S,32] xq, float[B,S,16] xk, float[B,S,16] xv, float[B,S,4] cos, float[B,S,4] sin,
            float[B,2,P,8] pk, float[B,2,P,8] pv)
              => (float[B,S,32] y, float[B,2,T,8] ck, float[B,2,T,8] cv)
           {
             qr = RotaryEmbedding <num_heads = 4> (xq, cos, sin)
             kr = RotaryEmbedding <num_heads = 2> (xk, cos, sin)
             y, ck, cv = Attention <scale = 0.25, q_num_heads = 4, kv_num_heads = 2> (qr, kr, xv, , pk, pv)
           }
           # fired: heads: attention over merged heads, noop: Reshape to the same shape x3"#,
    );
}

/// Where a moved value has another reader, or the result is read heads-first, the attention stays
/// 4-D (the Transposes would stay for the other readers: nothing gained).
#[test]
fn attention_stays_heads_first_where_other_nodes_read_the_moved_values() {
    for (from, to) in [
        (
            "y = Reshape (o, m)                           # float[B,S,32] }",
            "y = Reshape (o, m)  # float[B,S,32]\n z = Relu (qt) }",
        ),
        (
            "y = Reshape (o, m)                           # float[B,S,32] }",
            "y = Reshape (o, m)  # float[B,S,32]\n z = Relu (a) }",
        ),
    ] {
        let input = HEADS_FIRST.replace(from, to).replace("float[B,2,T,8] cv)", "float[B,2,T,8] cv, float[B,4,S,8] z)");
        let (mut m, _) = super::testing::parse(23, &input);
        optimize(&mut m);
        assert!(ops(&m).contains(&"Transpose"), "{:?}", ops(&m));
        assert!(m.graph.nodes.iter().all(|n| n.attr("q_num_heads").is_none()), "{:?}", ops(&m));
    }
}

/// A Concat whose other inputs are empty along its axis is its one non-empty input (the partial
/// rotation of Phi-3 with the whole head rotated: `cat([rotated, x[..., 32:]])` of a 32-wide head).
#[test]
fn concat_with_empty_inputs_is_its_one_non_empty_input() {
    check_optimized(
        r#"(float[N,2,S,32] x) => (float[N,2,S,32] y)
           <int64[1] s = {32}, int64[1] e = {9223372036854775807}, int64[1] a = {3}>
           { r = Relu (x)                    # float[N,2,S,32]
             p = Slice (x, s, e, a)          # float[N,2,S,0]
             y = Concat <axis = 3> (r, p)    # float[N,2,S,32] }"#,
        r#"(float[N,2,S,32] x) => (float[N,2,S,32] y)
           { y = Relu (x) }
           # fired: noop: Concat of one non-empty input"#,
    );
}
