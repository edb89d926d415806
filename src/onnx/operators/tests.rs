//! The operator table's rules on graphs written as ONNX text (`onnx::testing`): each node's output
//! shapes as the export check computes them, and output element types as the builder gives them.

use super::{get, names, onnx_schemas, Older, Rewrite, Shape};
use crate::onnx::ir::{DType, Dim};
use crate::onnx::shape_table::ShapeTable;
use crate::onnx::testing::parse;

/// Every node output of `text` with the shape its operator's rule computes from the shapes before
/// it (recorded ones ignored), one `name: [dims]` per line: `?` where the rule cannot tell, `!why`
/// where the inputs cannot be operands of the operator. With `partial`, dims the rule cannot tell
/// in a shape whose rank it can are `?` (the check's facts); else such shapes are unknown.
fn inferred(text: &str, partial: bool) -> String {
    let (mut model, _) = parse(20, text);
    // Only the graph inputs and constants keep their shapes: the rules must find the rest.
    let keep: Vec<_> = model.graph.inputs.iter().chain(&model.graph.initializers).copied().collect();
    for (i, v) in model.values.iter_mut().enumerate() {
        if !keep.iter().any(|k| k.index() == i) {
            v.shape = None;
        }
    }
    let mut table = if partial { ShapeTable::partial(&model) } else { ShapeTable::new(&model) };
    let mut lines = Vec::new();
    for node in &model.graph.nodes {
        for (i, &out) in node.outputs.iter().enumerate() {
            let op = get(&node.op_type).expect("an operator with a record");
            let text = match op.infer_output(&table.facts(&model), node, i) {
                Ok(Some(s)) => {
                    let dims: Vec<String> = s.iter().map(Dim::to_string).collect();
                    table.set_shape(out, s);
                    format!("[{}]", dims.join(","))
                }
                Ok(None) => "?".into(),
                Err(why) => format!("!{why}"),
            };
            lines.push(format!("{}: {text}", model.value(out).name));
        }
        table.learn(&model, node);
    }
    lines.join("\n")
}

#[track_caller]
fn check(text: &str, expected: &str) {
    assert_eq!(inferred(text, false), expected.trim().lines().map(str::trim).collect::<Vec<_>>().join("\n"));
}

#[track_caller]
fn check_partial(text: &str, expected: &str) {
    assert_eq!(inferred(text, true), expected.trim().lines().map(str::trim).collect::<Vec<_>>().join("\n"));
}

#[test]
fn every_record_is_an_onnx_operator_once() {
    let mut seen = std::collections::HashSet::new();
    for name in names() {
        assert!(onnx_schemas::OPERATORS.contains(&name), "{name} is not an ONNX operator");
        assert!(seen.insert(name), "{name} has two records");
    }
}

#[test]
fn forms_say_what_older_opsets_lack() {
    let mut rewrites = std::collections::HashSet::new();
    for name in names() {
        let op = get(name).expect("a record");
        for f in op.forms {
            assert!((14..=23).contains(&f.since), "{name}: a form from opset {} is older than any export", f.since);
            match f.older {
                // The error names the form: it must say which.
                Older::Nothing => assert!(!f.form.is_empty(), "{name}: an error form without a name"),
                Older::DropAttribute(a) => assert!(!a.is_empty()),
                Older::Rewrite(r) => {
                    rewrites.insert(r);
                }
            }
        }
        if let Some(r) = op.for_runtimes {
            rewrites.insert(r);
        }
    }
    // Every rewrite the builder implements is some operator's.
    for r in [
        Rewrite::AxesAttribute,
        Rewrite::SplitSizes,
        Rewrite::PadAxesAtRunTime,
        Rewrite::PadAxesSpread,
        Rewrite::ShapeThenSlice,
        Rewrite::DftAxisAttribute,
        Rewrite::LayerNormBody,
        Rewrite::HardSwishBody,
        Rewrite::TriluByMask,
        Rewrite::BitwiseNotBySub,
    ] {
        assert!(rewrites.contains(&r), "{r:?} is no operator's");
    }
}

#[test]
fn output_types_follow_the_schema_unless_an_attribute_decides() {
    let (m, v) = parse(
        23,
        r#"(float16[2,8] x, float[8] s, int64[2] i) => (float16[2,8] y)
           { e = Equal (i, i)
             t, idx = TopK (x, i)
             r = RMSNormalization (x, s)
             c = Cast <to = 7> (x)
             y, mean, inv = LayerNormalization <stash_type = 1> (x, s)
             w = Where (e, i, i) }"#,
    );
    let t = |n: &str| m.value(v[n]).dtype;
    assert_eq!(t("e"), Some(DType::Bool));
    assert_eq!((t("t"), t("idx")), (Some(DType::Float16), Some(DType::Int64)));
    // The schema gives Y the type of `scale`, not of X.
    assert_eq!(t("r"), Some(DType::Float));
    assert_eq!(t("c"), Some(DType::Int64));
    assert_eq!((t("y"), t("mean"), t("inv")), (Some(DType::Float16), Some(DType::Float), Some(DType::Float)));
    assert_eq!(t("w"), Some(DType::Int64));
}

#[test]
fn same_shape_operators_keep_their_input_shape_in_the_builder() {
    let (m, v) = parse(20, "(float[N,3] x, int64[N,3] i) => (float[N,3] y) { y = ScatterElements (x, i, x) }");
    let dims: Vec<String> = m.value(v["y"]).shape.iter().flatten().map(Dim::to_string).collect();
    assert_eq!(dims, ["N", "3"]);
    assert!(matches!(get("ScatterElements").map(|op| op.shape), Some(Shape::Same)));
}

#[test]
fn broadcasting() {
    check(
        r#"(float[N,1,4] a, float[3,1] b, float[2,3] c, float[4,3] d) => ()
           { x = Add (a, b)
             y = Sub (c, d) }"#,
        "x: [N,3,4]
         y: !shapes [2, 3] and [4, 3] do not broadcast",
    );
    // A symbol meeting a number: unknown to the optimizer, the number to the check.
    check("(float[N,4] a, float[8,4] b) => () { x = Mul (a, b) }", "x: ?");
    check_partial(
        "(float[N,4] a, float[8,4] b, float[M,4] c) => () { x = Mul (a, b) y = Mul (a, c) }",
        "x: [8,4]\ny: [?,4]",
    );
}

#[test]
fn reshape_resolves_its_target_over_symbols_and_numbers_alike() {
    check(
        r#"(float[N,4,6] x) => ()
           <int64[3] t1 = {0, -1, 3}, int64[2] t2 = {-1, 5}, int64[2] t3 = {2, 2}>
           { a = Reshape (x, t1)
             b = Reshape (x, t3) }"#,
        "a: ?
         b: [2,2]",
    );
    check(
        r#"(float[2,4,6] x) => ()
           <int64[3] t1 = {0, -1, 3}, int64[2] t2 = {-1, 5}, int64[2] t3 = {4, 12}>
           { a = Reshape (x, t1)
             b = Reshape (x, t2)
             c = Reshape (x, t3) }"#,
        "a: [2,8,3]
         b: !Reshape of [2, 4, 6] (48 elements) into [-1, 5]
         c: [4,12]",
    );
    // Evaluation on numbers uses the same rule: the folded tensor has the dims the rule computes.
    let (m, v) = parse(20, "(float[2,4,6] x) => () <int64[3] t = {0, -1, 3}> { a = Reshape (x, t) }");
    let node = &m.graph.nodes[0];
    let x = crate::onnx::ir::TensorData::from_f64_as(DType::Float, vec![2, 4, 6], &[0.0; 48]).expect("float32");
    let folded = super::eval(node, &[Some(&x), m.value(v["t"]).constant.as_deref()]).expect("folds");
    assert_eq!(folded.dims, [2, 8, 3]);
}

#[test]
fn matrix_products() {
    check(
        r#"(float[B,1,3,4] a, float[5,4,2] b, float[4] v, float[3,4] p, float[5,4] q) => ()
           { x = MatMul (a, b)
             y = MatMul (v, b)
             z = MatMul (p, q)
             g = Gemm <transB = 1> (p, q) }"#,
        "x: [B,5,3,2]
         y: [5,2]
         z: !MatMul of [3, 4] and [5, 4]: inner dims 4 and 5
         g: [3,5]",
    );
}

#[test]
fn windows() {
    check(
        r#"(float[N,3,32,30] x, float[8,3,3,3] w) => ()
           { c = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (x, w)
             p = MaxPool <kernel_shape = [2, 2]> (x)
             g = GlobalAveragePool (x)
             e = AveragePool <kernel_shape = [40, 40]> (x) }"#,
        "c: [N,8,16,15]
         p: [N,3,31,29]
         g: [N,3,1,1]
         e: !a window of 40 does not fit the padded input of 32 (dim 2)",
    );
}

#[test]
fn slicing_splitting_and_joining() {
    check(
        r#"(float[N,10] x, float[N,2] y) => ()
           <int64[1] s = {-1}, int64[1] e = {-100000}, int64[1] ax = {1}, int64[1] st = {-3},
            int64[2] sizes = {3, 7}>
           { a = Slice (x, s, e, ax, st)
             b, c = Split <axis = 1> (x, sizes)
             d = Concat <axis = 1> (x, y)
             f = Concat <axis = 0> (x, y) }"#,
        "a: [N,4]
         b: [N,3]
         c: [N,7]
         d: [N,12]
         f: !inputs [N, 10] and [N, 2] differ off axis 0",
    );
}

#[test]
fn axes_and_permutations() {
    check(
        r#"(float[N,1,4] x) => ()
           <int64[1] z = {1}, int64[1] big = {5}, int64[2] u = {0, -1}>
           { a = Squeeze (x, z)
             b = Squeeze (x, big)
             c = Unsqueeze (x, u)
             d = Transpose <perm = [2, 0, 1]> (x)
             e = Transpose <perm = [0, 0, 1]> (x) }"#,
        "a: [N,4]
         b: !axes [5] are out of range for rank 3
         c: [1,N,1,4,1]
         d: [4,N,1]
         e: !perm [0, 0, 1] is not a permutation of the dims of a rank-3 input",
    );
}

#[test]
fn reductions_and_searches() {
    check(
        r#"(float[N,3,5] x) => ()
           <int64[1] ax = {-1}, int64[1] k = {2}>
           { a = ReduceMean <keepdims = 0> (x, ax)
             b = ReduceSum (x)
             c = ArgMax <axis = 1> (x)
             v, i = TopK <axis = 2> (x, k) }"#,
        "a: [N,3]
         b: [1,1,1]
         c: [N,1,5]
         v: [N,3,2]
         i: [N,3,2]",
    );
}

#[test]
fn shapes_of_shapes_are_known_element_by_element() {
    // Shape → Gather → Unsqueeze → Concat: the target of the Reshape is [2, 12].
    check(
        r#"(float[2,3,4] x) => ()
           <int64 zero = {0}, int64[1] ax = {0}, int64[1] twelve = {12}>
           { s = Shape (x)
             n = Gather (s, zero)
             n1 = Unsqueeze (n, ax)
             t = Concat <axis = 0> (n1, twelve)
             r = Reshape (x, t) }"#,
        "s: [3]
         n: []
         n1: [1]
         t: [2]
         r: [2,12]",
    );
}

#[test]
fn resize_sizes_agree_in_float32_and_float64_or_are_unknown() {
    // 5 · 1.1 floors to 5 in both; 10 · 0.7 is 7 in float32 but floors to 6 in float64.
    check(
        r#"(float[1,1,5,10] x) => ()
           <float[4] ok = {1, 1, 1.1, 1}, float[4] split = {1, 1, 1, 0.7}>
           { a = Resize (x, , ok)
             b = Resize (x, , split) }"#,
        "a: [1,1,5,10]
         b: ?",
    );
}
