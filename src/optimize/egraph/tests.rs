//! One small graph per rule, written as data (`optimize::testing`): the rule fires where it should,
//! and for rules that could change results, does not fire when a condition fails. Below them, what
//! text cannot show: metadata, subgraphs, limits, time.

use std::rc::Rc;

use super::*;
use crate::onnx::builder::Builder;
use crate::onnx::ir::{AttrValue, DType, Dim, Model, TensorData};
use crate::optimize::testing::{check_egraph, check_egraph_for, parse, print};

fn ops(m: &Model) -> Vec<&str> {
    m.graph.nodes.iter().map(|n| n.op_type.as_str()).collect()
}

fn fired(st: &OptimizeStats, rule: &str) -> usize {
    st.rules_fired.get(rule).copied().unwrap_or(0)
}

#[test]
fn every_rule_pattern_compiles_and_commutes() {
    let v = super::variants(Target::OnnxRuntimeCpu);
    for x in v {
        // Compiles the egg pattern (panics on a bad pattern).
        let _ = x.rewrite();
    }
    for (i, r) in rules::RULES.iter().chain(rules::ONNXRUNTIME_RULES).enumerate() {
        assert!(v.iter().any(|x| x.rule == i), "{} has no variant", r.name);
    }
    // Standard ONNX runs the standard rules alone, as the first variants of the target's list.
    let standard = super::variants(Target::Onnx);
    assert!(standard.iter().all(|x| x.rule < rules::RULES.len()));
    assert!(standard.iter().zip(v).all(|(a, b)| a.rule == b.rule && a.pat == b.pat));
    // Two commutative nodes give four variants.
    let p = engine::Pat::parse("(Mul (Add ?x #c) ?y)").expect("parse");
    assert_eq!(p.commuted().len(), 4);
    assert_eq!(p.to_egg(), "(Mul (Add ?x ?c ?_attrs1) ?y ?_attrs2)");
}

#[test]
fn rewritten_nodes_keep_the_replaced_nodes_metadata() {
    let (mut m, names) = parse(20, CONV_BN);
    for (i, n) in m.graph.nodes.iter_mut().enumerate() {
        n.metadata = Rc::new(vec![("pkg.torch.onnx.fx_node", format!("node{i}"))].into());
    }
    let bn_meta = m.graph.nodes.iter().find(|n| n.op_type == "BatchNormalization").map(|n| n.metadata.clone());
    let mut st = OptimizeStats::default();
    rewrite(&mut m, 20, Target::Onnx, &mut st);
    crate::onnx::dce::eliminate_dead_code(&mut m.graph);
    assert_eq!(ops(&m), ["Conv"]);
    assert_eq!(Some(m.graph.nodes[0].metadata.clone()), bn_meta);
    assert_eq!(m.graph.nodes[0].outputs, [names["y"]]);
}

#[test]
fn values_read_by_subgraphs_are_kept() {
    let mut b = Builder::new(20);
    let x = b.add_input(Some(DType::Float), Some(vec![Dim::Fixed(2)]));
    let one = b.add_initializer(TensorData::from_f64_as(DType::Float, vec![1], &[1.0]).expect("float"));
    let y = b.Mul(x, one);
    b.info_mut(y).shape = Some(vec![Dim::Fixed(2)]);
    let cond = b.add_input(Some(DType::Bool), Some(vec![]));
    // An If whose branches read `y` from the outer scope.
    b.begin_subgraph("then");
    let th = b.Relu(y);
    let then_g = b.end_subgraph(vec![th]);
    b.begin_subgraph("else");
    let el = b.Neg(y);
    let else_g = b.end_subgraph(vec![el]);
    let out = b.If(cond).then_branch(then_g).else_branch(else_g).out();
    b.graphs[0].outputs = vec![out];
    let mut m = b.finish();
    let mut st = OptimizeStats::default();
    rewrite(&mut m, 20, Target::Onnx, &mut st);
    crate::onnx::dce::eliminate_dead_code(&mut m.graph);
    // y = x * 1 is folded away, and the branches now read x.
    assert_eq!(fired(&st, "mul-one"), 1);
    assert_eq!(ops(&m), ["If"]);
    let Some(AttrValue::Graph(g)) = m.graph.nodes[0].attr("then_branch") else { panic!("no branch") };
    assert_eq!(g.nodes[0].inputs[0], Some(x));
}

#[test]
fn output_is_deterministic() {
    for text in [gelu_tanh_text("0.044715"), layer_norm_text(-1)] {
        let run = || {
            let (mut m, _) = parse(20, &text);
            let mut st = OptimizeStats::default();
            rewrite(&mut m, 20, Target::Onnx, &mut st);
            format!("{:?}", m.graph.nodes)
        };
        assert_eq!(run(), run());
    }
}

#[test]
fn windows_respect_the_node_limit() {
    let (mut m, _) = parse(20, &gelu_tanh_text("0.044715"));
    let mut st = OptimizeStats::default();
    let limits = Limits { max_window_nodes: 3, ..Default::default() };
    rewrite_with(&mut m, 20, &limits, &mut st);
    assert_eq!(fired(&st, "gelu-tanh"), 0, "{}", print(&m, &st));
    assert!(st.egraph_candidates_dropped > 0);
}

/// Rewrite time on chains of 4·n nodes (two rules fire per block). Run with `--ignored --nocapture`
/// to see that time grows linearly with the graph.
#[test]
#[ignore]
fn large_graph_time_is_linear() {
    for n in [20_000usize, 80_000, 320_000] {
        let mut b = Builder::new(20);
        let shape = |b: &mut Builder, v, s: [i64; 2]| b.info_mut(v).shape = Some(s.map(Dim::Fixed).to_vec());
        let mut h = b.add_input(Some(DType::Float), Some(vec![Dim::Fixed(4), Dim::Fixed(8)]));
        let one = b.add_initializer(TensorData::from_f64_as(DType::Float, vec![], &[1.0]).expect("float"));
        for _ in 0..n {
            let t1 = b.Transpose(h).perm(&[1, 0]).out();
            shape(&mut b, t1, [8, 4]);
            let t2 = b.Transpose(t1).perm(&[1, 0]).out();
            shape(&mut b, t2, [4, 8]);
            let c = b.Mul(t2, one);
            shape(&mut b, c, [4, 8]);
            h = b.Neg(c);
            shape(&mut b, h, [4, 8]);
        }
        b.graphs[0].outputs = vec![h];
        let mut m = b.finish();
        let mut st = OptimizeStats::default();
        let start = std::time::Instant::now();
        rewrite(&mut m, 20, Target::Onnx, &mut st);
        let el = start.elapsed();
        crate::onnx::dce::eliminate_dead_code(&mut m.graph);
        assert_eq!(m.graph.nodes.len(), n);
        println!("{} nodes: {:.1} ms, {} windows", 4 * n, el.as_secs_f64() * 1e3, st.egraph_windows);
    }
}

// ------------------------------------------------------------------------------------------ rules as data

#[test]
fn neutral_element_at_a_graph_output_becomes_an_identity_under_the_output_name() {
    check_egraph(
        20,
        r#"(float[2,3] x) => (float[2,3] y)
           <float[1] one = {1}>
           { y = Mul (x, one)  # float[2,3] }"#,
        r#"(float[2,3] x) => (float[2,3] y)
           {
             y = Identity (x)
           }
           # fired: mul-one"#,
    );
}

#[test]
fn transposes_compose() {
    // out[i] = x[p1[p2[i]]]: p1 = [1, 0, 2], p2 = [0, 2, 1] → [1, 2, 0].
    check_egraph(
        20,
        r#"(float[2,3,4] x) => (float[3,4,2] e)
           { b = Transpose <perm = [1, 0, 2]> (x)  # float[3,2,4]
             c = Transpose <perm = [0, 2, 1]> (b)  # float[3,4,2]
             e = Relu (c)                          # float[3,4,2] }"#,
        r#"(float[2,3,4] x) => (float[3,4,2] e)
           {
             c = Transpose <perm = [1, 2, 0]> (x)
             e = Relu (c)
           }
           # fired: transpose-transpose"#,
    );
    // Inverse permutations cancel.
    check_egraph(
        20,
        r#"(float[2,3] x) => (float[2,3] e)
           { a = Transpose <perm = [1, 0]> (x)  # float[3,2]
             b = Transpose <perm = [1, 0]> (a)  # float[2,3]
             e = Relu (b)                       # float[2,3] }"#,
        r#"(float[2,3] x) => (float[2,3] e)
           {
             e = Relu (x)
           }
           # fired: transpose-transpose"#,
    );
}

#[test]
fn casts_through_a_wider_type_merge() {
    // float → double is exact, so float → double → int64 is float → int64.
    check_egraph(
        20,
        r#"(float[4] x) => (int64[4] c)
           { b = Cast <to = 11> (x)  # double[4]
             c = Cast <to = 7> (b)   # int64[4] }"#,
        r#"(float[4] x) => (int64[4] c)
           {
             c = Cast <to = 7> (x)
           }
           # fired: cast-cast"#,
    );
    // float → int32 → float rounds: kept.
    check_egraph(
        20,
        r#"(float[4] x) => (float[4] b)
           { a = Cast <to = 6> (x)  # int32[4]
             b = Cast <to = 1> (a)  # float[4] }"#,
        r#"(float[4] x) => (float[4] b)
           {
             a = Cast <to = 6> (x)
             b = Cast <to = 1> (a)
           }"#,
    );
}

#[test]
fn unsqueeze_chain_merges() {
    check_egraph(
        20,
        r#"(float[N] x) => (float[1,1,N,1] u3)
           <int64[1] a0 = {0}, int64[1] a1 = {1}, int64[1] a3 = {3}>
           { u1 = Unsqueeze (x, a0)   # float[1,N]
             u2 = Unsqueeze (u1, a1)  # float[1,1,N]
             u3 = Unsqueeze (u2, a3)  # float[1,1,N,1] }"#,
        r#"(float[N] x) => (float[1,1,N,1] u3)
           <int64[3] _0 = {0, 1, 3}>
           {
             u3 = Unsqueeze (x, _0)
           }
           # fired: unsqueeze-unsqueeze x4"#,
    );
    // Inner axes land between the outer ones: x[N] →(axis 0)→ [1, N] →(axis 0)→ [1, 1, N].
    check_egraph(
        20,
        r#"(float[N] x) => (float[1,1,N] u2)
           <int64[1] a0 = {0}>
           { u1 = Unsqueeze (x, a0)   # float[1,N]
             u2 = Unsqueeze (u1, a0)  # float[1,1,N] }"#,
        r#"(float[N] x) => (float[1,1,N] u2)
           <int64[2] _0 = {0, 1}>
           {
             u2 = Unsqueeze (x, _0)
           }
           # fired: unsqueeze-unsqueeze"#,
    );
}

#[test]
fn neutral_elements() {
    for (op, v) in [("Mul", 1), ("Div", 1), ("Add", 0), ("Sub", 0)] {
        let input = format!(
            "(float[N,3] x) => (float[N,3] z)
             <float[1,3] c = {{{v}, {v}, {v}}}>
             {{ y = {op} (x, c)  # float[N,3]
               z = Relu (y)     # float[N,3] }}"
        );
        let rule = format!("{}-{}", op.to_lowercase(), if v == 1 { "one" } else { "zero" });
        check_egraph(20, &input, &format!("(float[N,3] x) => (float[N,3] z) {{ z = Relu (x) }} # fired: {rule}"));
    }
    // A neutral operand that broadcasts the input to a higher rank changes the shape: kept.
    check_egraph(
        20,
        r#"(float[3] x) => (float[2,3] y)
           <float[2,3] c = {1, 1, 1, 1, 1, 1}>
           { y = Mul (x, c)  # float[2,3] }"#,
        r#"(float[3] x) => (float[2,3] y)
           <float[2,3] c = {1, 1, 1, 1, 1, 1}>
           {
             y = Mul (x, c)
           }"#,
    );
    // Commuted: 1 * x.
    check_egraph(
        20,
        r#"(float[3] x) => (float[3] z)
           <float c = {1}>
           { y = Mul (c, x)  # float[3]
             z = Relu (y)    # float[3] }"#,
        r#"(float[3] x) => (float[3] z)
           {
             z = Relu (x)
           }
           # fired: mul-one"#,
    );
}

#[test]
fn min_max_becomes_clip_unless_the_bounds_cross() {
    check_egraph(
        20,
        r#"(float[N,3] x) => (float[N,3] b)
           <float lo = {0}, float hi = {6}>
           { a = Max (x, lo)  # float[N,3]
             b = Min (a, hi)  # float[N,3] }"#,
        r#"(float[N,3] x) => (float[N,3] b)
           <float _0 = {0}, float _1 = {6}>
           {
             b = Clip (x, _0, _1)
           }
           # fired: min-max-clip"#,
    );
    // Max(Min(x, hi), lo) with lo > hi is lo everywhere; Clip would give hi.
    check_egraph(
        20,
        r#"(float[N,3] x) => (float[N,3] b)
           <float lo = {6}, float hi = {0}>
           { a = Min (x, hi)  # float[N,3]
             b = Max (a, lo)  # float[N,3] }"#,
        r#"(float[N,3] x) => (float[N,3] b)
           <float lo = {6}, float hi = {0}>
           {
             a = Min (x, hi)
             b = Max (a, lo)
           }"#,
    );
    // onnxruntime has no Clip, Max or Min of int16: the builder runs Max and Min in int32, and no
    // Clip of int16 appears between them.
    check_egraph(
        20,
        r#"(int16[N,3] x) => (int16[N,3] b)
           <int16 lo = {0}, int16 hi = {6}>
           { a = Max (x, lo)  # int16[N,3]
             b = Min (a, hi)  # int16[N,3] }"#,
        r#"(int16[N,3] x) => (int16[N,3] b)
           <int16 lo = {0}, int16 hi = {6}>
           {
             _0 = Cast <to = 6> (x)
             _1 = Cast <to = 6> (lo)
             _2 = Max (_0, _1)
             a = Cast <to = 5> (_2)
             _3 = Cast <to = 6> (a)
             _4 = Cast <to = 6> (hi)
             _5 = Min (_3, _4)
             b = Cast <to = 5> (_5)
           }"#,
    );
}

#[test]
fn relu_chains() {
    check_egraph(
        20,
        r#"(float[4] x) => (float[4] b)
           { a = Relu (x)  # float[4]
             b = Relu (a)  # float[4] }"#,
        r#"(float[4] x) => (float[4] b)
           {
             b = Relu (x)
           }
           # fired: relu-relu"#,
    );
    check_egraph(
        20,
        r#"(float[4] x) => (float[4] b)
           <float lo = {-1}, float hi = {6}>
           { a = Relu (x)          # float[4]
             b = Clip (a, lo, hi)  # float[4] }"#,
        r#"(float[4] x) => (float[4] b)
           <float _0 = {0}, float _1 = {6}>
           {
             b = Clip (x, _0, _1)
           }
           # fired: relu-clip"#,
    );
    // Relu(Clip(x, lo, hi)) with hi < 0 is all zeros: kept.
    check_egraph(
        20,
        r#"(float[4] x) => (float[4] b)
           <float lo = {-3}, float hi = {-1}>
           { a = Clip (x, lo, hi)  # float[4]
             b = Relu (a)          # float[4] }"#,
        r#"(float[4] x) => (float[4] b)
           <float lo = {-3}, float hi = {-1}>
           {
             a = Clip (x, lo, hi)
             b = Relu (a)
           }"#,
    );
}

#[test]
fn sum_over_count_is_mean() {
    check_egraph(
        20,
        r#"(float[N,4,8] x) => (float[N,4,1] y)
           <int64[1] ax = {-1}, float n = {8}>
           { s = ReduceSum (x, ax)  # float[N,4,1]
             y = Div (s, n)         # float[N,4,1] }"#,
        r#"(float[N,4,8] x) => (float[N,4,1] y)
           <int64[1] ax = {-1}>
           {
             y = ReduceMean (x, ax)
           }
           # fired: sum-div-mean"#,
    );
    check_egraph(
        20,
        r#"(float[N,4,8] x) => (float[N,4,1] y)
           <int64[1] ax = {-1}, float n = {4}>
           { s = ReduceSum (x, ax)  # float[N,4,1]
             y = Div (s, n)         # float[N,4,1] }"#,
        r#"(float[N,4,8] x) => (float[N,4,1] y)
           <int64[1] ax = {-1}, float n = {4}>
           {
             s = ReduceSum (x, ax)
             y = Div (s, n)
           }"#,
    );
}

/// Below opset 18 the mean takes its axes as an attribute.
#[test]
fn sum_over_count_is_mean_with_axes_attribute_before_18() {
    check_egraph(
        17,
        r#"(float[N,4,8] x) => (float[N,4,1] y)
           <int64[1] ax = {-1}, float n = {8}>
           { s = ReduceSum (x, ax)  # float[N,4,1]
             y = Div (s, n)         # float[N,4,1] }"#,
        r#"(float[N,4,8] x) => (float[N,4,1] y)
           {
             y = ReduceMean <axes = [-1]> (x)
           }
           # fired: sum-div-mean"#,
    );
}

#[test]
fn matmul_average_is_global_average_pool() {
    let pool = |mh: &str, mw: &str| {
        format!(
            "(float[N,8,7,5] x) => (float[N,8,1,1] e)
             <float[7,1] mh = {{{mh}}}, float[5,1] mw = {{{mw}}}>
             {{ a = Transpose <perm = [0, 1, 3, 2]> (x)  # float[N,8,5,7]
               b = MatMul (a, mh)                      # float[N,8,5,1]
               c = Transpose <perm = [0, 1, 3, 2]> (b)  # float[N,8,1,5]
               e = MatMul (c, mw)                      # float[N,8,1,1] }}"
        )
    };
    let seventh = ["0.14285715"; 7].join(", ");
    check_egraph(
        20,
        &pool(&seventh, "0.2, 0.2, 0.2, 0.2, 0.2"),
        r#"(float[N,8,7,5] x) => (float[N,8,1,1] e)
           {
             e = GlobalAveragePool (x)
           }
           # fired: global-average-pool"#,
    );
    // A weighted (not uniform) pooling matrix is not a mean.
    check_egraph(
        20,
        &pool(&seventh, "0.1, 0.2, 0.2, 0.2, 0.3"),
        r#"(float[N,8,7,5] x) => (float[N,8,1,1] e)
           <float[7,1] mh = {0.14285715, 0.14285715, 0.14285715, 0.14285715, 0.14285715, 0.14285715, 0.14285715},
            float[5,1] mw = {0.1, 0.2, 0.2, 0.2, 0.3}>
           {
             a = Transpose <perm = [0, 1, 3, 2]> (x)
             b = MatMul (a, mh)
             c = Transpose <perm = [0, 1, 3, 2]> (b)
             e = MatMul (c, mw)
           }"#,
    );
}

#[test]
fn hard_sigmoid_and_hard_swish() {
    let sigmoid = |three: &str| {
        format!(
            "(float[N,4] x) => (float[N,4] y)
             <float c3 = {{{three}}}, float c0 = {{0}}, float c6 = {{6}}>
             {{ a = Add (x, c3)          # float[N,4]
               c = Clip (a, c0, c6)     # float[N,4]
               y = Div (c, c6)          # float[N,4] }}"
        )
    };
    check_egraph(
        20,
        &sigmoid("3"),
        r#"(float[N,4] x) => (float[N,4] y)
           {
             y = HardSigmoid <alpha = 0.16666667, beta = 0.5> (x)
           }
           # fired: hard-sigmoid"#,
    );
    check_egraph(
        20,
        &sigmoid("2"),
        r#"(float[N,4] x) => (float[N,4] y)
           <float c3 = {2}, float c0 = {0}, float c6 = {6}>
           {
             a = Add (x, c3)
             c = Clip (a, c0, c6)
             y = Div (c, c6)
           }"#,
    );
    check_egraph(
        20,
        r#"(float[N,4] x) => (float[N,4] y)
           <float c3 = {3}, float c0 = {0}, float c6 = {6}>
           { a = Add (x, c3)       # float[N,4]
             c = Clip (a, c0, c6)  # float[N,4]
             mu = Mul (x, c)       # float[N,4]
             y = Div (mu, c6)      # float[N,4] }"#,
        r#"(float[N,4] x) => (float[N,4] y)
           {
             y = HardSwish (x)
           }
           # fired: hard-swish"#,
    );
}

#[test]
fn zero_padding_folds_into_the_conv() {
    // Pad of the two spatial axes, listed in reverse (torch's F.pad order), asymmetric.
    check_egraph(
        20,
        r#"(float[N,2,5,5] x) => (float[N,3,6,6] y)
           <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6},
            int64[4] pads = {0, 0, 1, 1}, float zero = {0}, int64[2] axes = {3, 2}>
           { p = Pad (x, pads, zero, axes)                                 # float[N,2,6,6]
             y = Conv <kernel_shape = [1, 1], pads = [0, 0, 0, 0]> (p, w)  # float[N,3,6,6] }"#,
        r#"(float[N,2,5,5] x) => (float[N,3,6,6] y)
           <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6}>
           {
             y = Conv <kernel_shape = [1, 1], pads = [0, 0, 1, 1]> (x, w)
           }
           # fired: pad-conv"#,
    );
    // No padding value (0 by default) and the axes given: the same.
    check_egraph(
        20,
        r#"(float[N,2,5,5] x) => (float[N,3,6,6] y)
           <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6}, int64[4] pads = {0, 0, 1, 1}, int64[2] axes = {3, 2}>
           { p = Pad (x, pads, , axes)                    # float[N,2,6,6]
             y = Conv <kernel_shape = [1, 1]> (p, w)  # float[N,3,6,6] }"#,
        r#"(float[N,2,5,5] x) => (float[N,3,6,6] y)
           <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6}>
           {
             y = Conv <kernel_shape = [1, 1], pads = [0, 0, 1, 1]> (x, w)
           }
           # fired: pad-conv"#,
    );
    // A padding value other than 0, or of the channel axis, is not the Conv's: kept.
    for (value, axes, pads) in [("1", "{3, 2}", "{0, 0, 1, 1}"), ("0", "{1, 2}", "{1, 0, 0, 1}")] {
        let text = format!(
            r#"(float[N,2,5,5] x) => (float[N,3,6,5] y)
               <float[3,2,1,1] w = {{1, 2, 3, 4, 5, 6}},
                int64[4] pads = {pads}, float zero = {{{value}}}, int64[2] axes = {axes}>
               {{ p = Pad (x, pads, zero, axes)                   # float[N,3,6,5]
                 y = Conv <kernel_shape = [1, 1]> (p, w)  # float[N,3,6,5] }}"#
        );
        let (mut m, _) = parse(20, &text);
        let mut st = OptimizeStats::default();
        rewrite(&mut m, 20, Target::Onnx, &mut st);
        assert_eq!(fired(&st, "pad-conv"), 0, "{}", print(&m, &st));
    }
}

/// Conv (1x1 kernel) + BatchNormalization with known numbers: f = s / sqrt(var) = [1, 1, 1],
/// W' = W * f, b' = (cb - mean) * f + beta.
const CONV_BN: &str = r#"(float[N,2,1,1] x) => (float[N,3,1,1] y)
    <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6}, float[3] cb = {0.5, -0.5, 1}, float[3] s = {2, 1, 0.5},
     float[3] b = {0.1, 0.2, 0.3}, float[3] mean = {1, 0, -1}, float[3] var = {4, 1, 0.25}>
    { conv = Conv <kernel_shape = [1, 1]> (x, w, cb)                      # float[N,3,1,1]
      y = BatchNormalization <epsilon = 0.0> (conv, s, b, mean, var)  # float[N,3,1,1] }"#;

#[test]
fn batchnorm_folds_into_conv() {
    check_egraph(
        20,
        CONV_BN,
        r#"(float[N,2,1,1] x) => (float[N,3,1,1] y)
           <float[3,2,1,1] _0 = {1, 2, 3, 4, 5, 6}, float[3] _1 = {-0.4, -0.3, 2.3}>
           {
             y = Conv <kernel_shape = [1, 1]> (x, _0, _1)
           }
           # fired: batchnorm-conv"#,
    );
    // Conv output read elsewhere: folding would duplicate the conv.
    let read_twice = CONV_BN
        .replace("=> (float[N,3,1,1] y)", "=> (float[N,3,1,1] y, float[N,3,1,1] r)")
        .replace("# float[N,3,1,1] }", "# float[N,3,1,1]\n r = Relu (conv)  # float[N,3,1,1] }");
    check_egraph(
        20,
        &read_twice,
        r#"(float[N,2,1,1] x) => (float[N,3,1,1] y, float[N,3,1,1] r)
           <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6}, float[3] cb = {0.5, -0.5, 1},
            float[3] s = {2, 1, 0.5}, float[3] b = {0.1, 0.2, 0.3}, float[3] mean = {1, 0, -1},
            float[3] var = {4, 1, 0.25}>
           {
             conv = Conv <kernel_shape = [1, 1]> (x, w, cb)
             y = BatchNormalization <epsilon = 0.0> (conv, s, b, mean, var)
             r = Relu (conv)
           }"#,
    );
    // Weights that are not constants cannot be folded.
    let computed = CONV_BN
        .replace("(float[N,2,1,1] x)", "(float[N,2,1,1] x, float[3,2,1,1] w)")
        .replace("float[3,2,1,1] w = {1, 2, 3, 4, 5, 6}, ", "");
    check_egraph(
        20,
        &computed,
        r#"(float[N,2,1,1] x, float[3,2,1,1] w) => (float[N,3,1,1] y)
           <float[3] cb = {0.5, -0.5, 1}, float[3] s = {2, 1, 0.5}, float[3] b = {0.1, 0.2, 0.3},
            float[3] mean = {1, 0, -1}, float[3] var = {4, 1, 0.25}>
           {
             conv = Conv <kernel_shape = [1, 1]> (x, w, cb)
             y = BatchNormalization <epsilon = 0.0> (conv, s, b, mean, var)
           }"#,
    );
}

#[test]
fn batchnorm_folds_into_conv_transpose_per_output_channel() {
    // Weights [C_in = 2, M = 3, 1, 1]: element (ci, j) scales by f[j].
    check_egraph(
        20,
        r#"(float[N,2,1,1] x) => (float[N,3,1,1] y)
           <float[2,3,1,1] w = {1, 1, 1, 1, 1, 1}, float[3] s = {1, 2, 3}, float[3] b = {0, 0, 0},
            float[3] mean = {0, 0, 0}, float[3] var = {1, 1, 1}>
           { conv = ConvTranspose (x, w)                                        # float[N,3,1,1]
             y = BatchNormalization <epsilon = 0.0> (conv, s, b, mean, var)  # float[N,3,1,1] }"#,
        r#"(float[N,2,1,1] x) => (float[N,3,1,1] y)
           <float[2,3,1,1] _0 = {1, 2, 3, 1, 2, 3}, float[3] _1 = {0, 0, 0}>
           {
             y = ConvTranspose (x, _0, _1)
           }
           # fired: batchnorm-convtranspose"#,
    );
}

#[test]
fn batchnorm_folds_into_gemm() {
    check_egraph(
        20,
        r#"(float[N,2] x) => (float[N,3] y)
           <float[3,2] w = {1, 1, 1, 1, 1, 1}, float[3] s = {1, 2, 3}, float[3] b = {1, 1, 1},
            float[3] mean = {0, 0, 0}, float[3] var = {1, 1, 1}>
           { g = Gemm <transB = 1> (x, w)                                    # float[N,3]
             y = BatchNormalization <epsilon = 0.0> (g, s, b, mean, var)  # float[N,3] }"#,
        r#"(float[N,2] x) => (float[N,3] y)
           <float[3,2] _0 = {1, 1, 2, 2, 3, 3}, float[3] _1 = {1, 1, 1}>
           {
             y = Gemm <transB = 1> (x, _0, _1)
           }
           # fired: batchnorm-gemm"#,
    );
}

#[test]
fn matmul_add_becomes_gemm_only_for_2d() {
    let graph = |batch: &str| {
        format!(
            "(float[{batch}N,4] a) => (float[{batch}N,3] y)
             <float[4,3] w = {{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}},
              float[3] c = {{1, 1, 1}}>
             {{ mm = MatMul (a, w)  # float[{batch}N,3]
               y = Add (mm, c)     # float[{batch}N,3] }}"
        )
    };
    check_egraph(
        20,
        &graph(""),
        r#"(float[N,4] a) => (float[N,3] y)
           <float[4,3] w = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
            float[3] c = {1, 1, 1}>
           {
             y = Gemm (a, w, c)
           }
           # fired: matmul-add-gemm"#,
    );
    check_egraph(
        20,
        &graph("B,"),
        r#"(float[B,N,4] a) => (float[B,N,3] y)
           <float[4,3] w = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
            float[3] c = {1, 1, 1}>
           {
             mm = MatMul (a, w)
             y = Add (mm, c)
           }"#,
    );
}

fn layer_norm_text(axes: i64) -> String {
    format!(
        "(float[N,5,8] x) => (float[N,5,8] y)
         <int64[1] ax = {{{axes}}}, float two = {{2}}, float eps = {{1e-5}},
          float[8] w = {{1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5}},
          float[8] b = {{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}}>
         {{ mean = ReduceMean (x, ax)  # float[N,5,1]
           dd = Sub (x, mean)         # float[N,5,8]
           sq = Pow (dd, two)         # float[N,5,8]
           var = ReduceMean (sq, ax)  # float[N,5,1]
           ve = Add (var, eps)        # float[N,5,1]
           sd = Sqrt (ve)             # float[N,5,1]
           n = Div (dd, sd)           # float[N,5,8]
           s = Mul (n, w)             # float[N,5,8]
           y = Add (b, s)             # float[N,5,8] }}"
    )
}

#[test]
fn layer_norm_over_trailing_axes_only() {
    check_egraph(
        20,
        &layer_norm_text(-1),
        r#"(float[N,5,8] x) => (float[N,5,8] y)
           <float[8] w = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5},
            float[8] b = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}>
           {
             y = LayerNormalization <axis = 2, epsilon = 1e-5> (x, w, b)
           }
           # fired: layer-norm x2"#,
    );
    // Normalizing over a leading axis is not LayerNormalization.
    check_egraph(
        20,
        &layer_norm_text(1),
        r#"(float[N,5,8] x) => (float[N,5,8] y)
           <int64[1] ax = {1}, float two = {2}, float eps = {0.00001},
            float[8] w = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5},
            float[8] b = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}>
           {
             mean = ReduceMean (x, ax)
             dd = Sub (x, mean)
             sq = Pow (dd, two)
             var = ReduceMean (sq, ax)
             ve = Add (var, eps)
             sd = Sqrt (ve)
             n = Div (dd, sd)
             s = Mul (n, w)
             y = Add (b, s)
           }"#,
    );
}

const GELU_ERF: &str = r#"(float[N,4] x) => (float[N,4] y)
    <float s = {0.70710677}, float h = {0.5}, float one = {1}>
    { a = Mul (x, s)     # float[N,4]
      e = Erf (a)        # float[N,4]
      p = Add (e, one)   # float[N,4]
      xh = Mul (x, h)    # float[N,4]
      y = Mul (xh, p)    # float[N,4] }"#;

#[test]
fn gelu_erf_needs_opset_20() {
    check_egraph(
        20,
        GELU_ERF,
        r#"(float[N,4] x) => (float[N,4] y)
           {
             y = Gelu (x)
           }
           # fired: gelu-erf"#,
    );
    check_egraph(
        18,
        GELU_ERF,
        r#"(float[N,4] x) => (float[N,4] y)
           <float s = {0.70710677}, float h = {0.5}, float one = {1}>
           {
             a = Mul (x, s)
             e = Erf (a)
             p = Add (e, one)
             xh = Mul (x, h)
             y = Mul (xh, p)
           }"#,
    );
}

fn gelu_tanh_text(k: &str) -> String {
    format!(
        "(float[N,4] x) => (float[N,4] y)
         <float h = {{0.5}}, float three = {{3}}, float k = {{{k}}}, float c = {{0.7978846}}, float one = {{1}}>
         {{ xh = Mul (x, h)      # float[N,4]
           p = Pow (x, three)   # float[N,4]
           pk = Mul (p, k)      # float[N,4]
           s = Add (x, pk)      # float[N,4]
           sc = Mul (s, c)      # float[N,4]
           th = Tanh (sc)       # float[N,4]
           a = Add (th, one)    # float[N,4]
           y = Mul (xh, a)      # float[N,4] }}"
    )
}

#[test]
fn gelu_tanh_pattern() {
    check_egraph(
        20,
        &gelu_tanh_text("0.044715"),
        r#"(float[N,4] x) => (float[N,4] y)
           {
             y = Gelu <approximate = "tanh"> (x)
           }
           # fired: gelu-tanh"#,
    );
    check_egraph(
        20,
        &gelu_tanh_text("0.05"),
        r#"(float[N,4] x) => (float[N,4] y)
           <float h = {0.5}, float three = {3}, float k = {0.05}, float c = {0.7978846},
            float one = {1}>
           {
             xh = Mul (x, h)
             p = Pow (x, three)
             pk = Mul (p, k)
             s = Add (x, pk)
             sc = Mul (s, c)
             th = Tanh (sc)
             a = Add (th, one)
             y = Mul (xh, a)
           }"#,
    );
}

const RMS_NORM: &str = r#"(float[N,5,8] x) => (float[N,5,8] y)
    <float two = {2}, int64[1] ax = {-1}, float eps = {1e-6},
     float[8] w = {2, 2, 2, 2, 2, 2, 2, 2}>
    { sq = Pow (x, two)          # float[N,5,8]
      ms = ReduceMean (sq, ax)   # float[N,5,1]
      a = Add (ms, eps)          # float[N,5,1]
      r = Sqrt (a)               # float[N,5,1]
      inv = Reciprocal (r)       # float[N,5,1]
      n = Mul (x, inv)           # float[N,5,8]
      y = Mul (w, n)             # float[N,5,8] }"#;

#[test]
fn rms_norm_needs_opset_23() {
    check_egraph(
        23,
        RMS_NORM,
        r#"(float[N,5,8] x) => (float[N,5,8] y)
           <float[8] w = {2, 2, 2, 2, 2, 2, 2, 2}>
           {
             y = RMSNormalization <axis = 2, epsilon = 1e-6> (x, w)
           }
           # fired: rms-norm x2"#,
    );
    check_egraph(
        20,
        RMS_NORM,
        r#"(float[N,5,8] x) => (float[N,5,8] y)
           <float two = {2}, int64[1] ax = {-1}, float eps = {0.000001},
            float[8] w = {2, 2, 2, 2, 2, 2, 2, 2}>
           {
             sq = Pow (x, two)
             ms = ReduceMean (sq, ax)
             a = Add (ms, eps)
             r = Sqrt (a)
             inv = Reciprocal (r)
             n = Mul (x, inv)
             y = Mul (w, n)
           }"#,
    );
}

/// A norm without a scale (or whose unit scale was folded into the next MatMul): the scale is ones.
#[test]
fn rms_norm_without_scale_gets_a_unit_one() {
    check_egraph(
        23,
        r#"(float[N,5,8] x) => (float[N,5,8] y)
            <float two = {2}, int64[1] ax = {-1}, float eps = {1e-6}>
            { sq = Pow (x, two)          # float[N,5,8]
              ms = ReduceMean (sq, ax)   # float[N,5,1]
              a = Add (ms, eps)          # float[N,5,1]
              r = Sqrt (a)               # float[N,5,1]
              inv = Reciprocal (r)       # float[N,5,1]
              y = Mul (x, inv)           # float[N,5,8] }"#,
        r#"(float[N,5,8] x) => (float[N,5,8] y)
           <float[8] _0 = {1, 1, 1, 1, 1, 1, 1, 1}>
           {
             y = RMSNormalization <axis = 2, epsilon = 1e-6> (x, _0)
           }
           # fired: rms-norm"#,
    );
}

const ATTENTION: &str = r#"(float[B,2,L,4] q, float[B,2,L,4] k, float[B,2,L,4] v, bool[B,1,L,L] mask)
    => (float[B,2,L,4] y)
    <float sc = {0.5}, float ninf = {-inf}>
    { kt = Transpose <perm = [0, 1, 3, 2]> (k)  # float[B,2,4,L]
      s = MatMul (q, kt)                      # float[B,2,L,L]
      ss = Mul (s, sc)                        # float[B,2,L,L]
      w = Where (mask, ss, ninf)              # float[B,2,L,L]
      p = Softmax <axis = -1> (w)             # float[B,2,L,L]
      y = MatMul (p, v)                       # float[B,2,L,4] }"#;

/// `ATTENTION` as it stays where no rule fires.
const ATTENTION_UNFUSED: &str = r#"(float[B,2,L,4] q, float[B,2,L,4] k, float[B,2,L,4] v, bool[B,1,L,L] mask) => (float[B,2,L,4] y)
           <float sc = {0.5}, float ninf = {-inf}>
           {
             kt = Transpose <perm = [0, 1, 3, 2]> (k)
             s = MatMul (q, kt)
             ss = Mul (s, sc)
             w = Where (mask, ss, ninf)
             p = Softmax <axis = -1> (w)
             y = MatMul (p, v)
           }"#;

/// A mask known to hide no whole row fuses at opset 23 (where `Attention` exists).
const ATTENTION_CONST_MASK: &str = r#"(float[1,2,2,4] q, float[1,2,2,4] k, float[1,2,2,4] v) => (float[1,2,2,4] y)
    <float sc = {0.5}, float ninf = {-inf}, bool[1,1,2,2] mask = {1, 0, 1, 1}>
    { kt = Transpose <perm = [0, 1, 3, 2]> (k)  # float[1,2,4,2]
      s = MatMul (q, kt)                      # float[1,2,2,2]
      ss = Mul (s, sc)                        # float[1,2,2,2]
      w = Where (mask, ss, ninf)              # float[1,2,2,2]
      p = Softmax <axis = -1> (w)             # float[1,2,2,2]
      y = MatMul (p, v)                       # float[1,2,2,4] }"#;

#[test]
fn attention_needs_opset_23() {
    check_egraph(
        23,
        ATTENTION_CONST_MASK,
        r#"(float[1,2,2,4] q, float[1,2,2,4] k, float[1,2,2,4] v) => (float[1,2,2,4] y)
           <bool[1,1,2,2] mask = {1, 0, 1, 1}>
           {
             y = Attention <scale = 0.5> (q, k, v, mask)
           }
           # fired: attention"#,
    );
    check_egraph(20, ATTENTION, ATTENTION_UNFUSED);
}

/// A mask only known at run time may hide a whole row: softmax over -inf alone is NaN there and
/// `Attention` gives zeros, so the graph stays as it is.
#[test]
fn attention_keeps_a_runtime_mask() {
    check_egraph(23, ATTENTION, ATTENTION_UNFUSED);
}

/// A decode step's attention as a decoder writes it: the cache grown by the new keys and values
/// (graph outputs), each of 2 key/value heads repeated for 2 of the 4 query heads.
const ATTENTION_KV: &str = r#"(float[2,4,3,8] q, float[2,2,3,8] k, float[2,2,3,8] v, float[2,2,5,8] pk,
                               float[2,2,5,8] pv, float[2,1,3,8] mask)
    => (float[2,4,3,8] y, float[2,2,8,8] ck, float[2,2,8,8] cv)
    <int64[1] ax = {2}, int64[5] e = {1, 1, 2, 1, 1}, int64[4] r = {2, 4, 8, 8}>
    { ck = Concat <axis = 2> (pk, k)   # float[2,2,8,8]
      cv = Concat <axis = 2> (pv, v)   # float[2,2,8,8]
      uk = Unsqueeze (ck, ax)          # float[2,2,1,8,8]
      ek = Expand (uk, e)              # float[2,2,2,8,8]
      rk = Reshape (ek, r)             # float[2,4,8,8]
      uv = Unsqueeze (cv, ax)          # float[2,2,1,8,8]
      ev = Expand (uv, e)              # float[2,2,2,8,8]
      rv = Reshape (ev, r)             # float[2,4,8,8]
      y = Attention <scale = 0.25> (q, rk, rv, mask)  # float[2,4,3,8] }"#;

#[test]
fn attention_reads_its_cache_and_grouped_heads_itself() {
    check_egraph(
        23,
        ATTENTION_KV,
        r#"(float[2,4,3,8] q, float[2,2,3,8] k, float[2,2,3,8] v, float[2,2,5,8] pk, float[2,2,5,8] pv, float[2,1,3,8] mask)
              => (float[2,4,3,8] y, float[2,2,8,8] ck, float[2,2,8,8] cv)
           {
             y, ck, cv = Attention <scale = 0.25> (q, k, v, mask, pk, pv)
           }
           # fired: attention-kv x2"#,
    );
    // Causal attention keeps its cache (where the causal mask starts after a cache is the
    // runtime's reading) but still reads the heads grouped.
    let causal = ATTENTION_KV.replace("<scale = 0.25>", "<is_causal = 1, scale = 0.25>");
    check_egraph(
        23,
        &causal,
        r#"(float[2,4,3,8] q, float[2,2,3,8] k, float[2,2,3,8] v, float[2,2,5,8] pk, float[2,2,5,8] pv, float[2,1,3,8] mask)
              => (float[2,4,3,8] y, float[2,2,8,8] ck, float[2,2,8,8] cv)
           {
             ck = Concat <axis = 2> (pk, k)
             cv = Concat <axis = 2> (pv, v)
             y = Attention <is_causal = 1, scale = 0.25> (q, ck, cv, mask)
           }
           # fired: attention-kv"#,
    );
    // A repetition that is not each head's group in a row (heads tiled: Expand before the heads).
    let tiled = ATTENTION_KV
        .replace("int64[5] e = {1, 1, 2, 1, 1}", "int64[5] e = {1, 2, 1, 1, 1}")
        .replace("int64[1] ax = {2}", "int64[1] ax = {1}")
        .replace("float[2,2,1,8,8]", "float[2,1,2,8,8]");
    let (mut m, _) = parse(23, &tiled);
    let mut stats = OptimizeStats::default();
    rewrite(&mut m, 23, Target::Onnx, &mut stats);
    assert!(ops(&m).contains(&"Expand"), "tiled heads were read as groups: {:?}", ops(&m));
}

/// transformers' padding mask, `attention_mask[batch_idx, kv_idx]` with both counts from 0 laid
/// on two axes and broadcast against each other (Add of a product with zero).
const INDEX_GRID: &str = r#"(bool[B,T] x, float[B,N] k) => (bool[B,1,1,N] y)
    <int64[1] zero = {0}, int64 s = {0}, int64 d = {1}, int64[3] ua = {1, 2, 3}, int64[3] ub = {0, 1, 2},
     int64 z = {0}, int64[1] last = {-1}>
    { sb = Shape <start = 0, end = 1> (x)   # int64[1]
      b = Squeeze (sb, zero)                 # int64
      sn = Shape <start = 1, end = 2> (k)   # int64[1]
      n = Squeeze (sn, zero)                 # int64
      r0 = Range (s, b, d)                   # int64[B]
      r1 = Range (s, n, d)                   # int64[N]
      u0 = Unsqueeze (r0, ua)                # int64[B,1,1,1]
      u1 = Unsqueeze (r1, ub)                # int64[1,1,1,N]
      m1 = Mul (u1, z)                       # int64[1,1,1,N]
      m0 = Mul (u0, z)                       # int64[B,1,1,1]
      g0 = Add (u0, m1)                      # int64[B,1,1,N]
      g1 = Add (u1, m0)                      # int64[B,1,1,N]
      e0 = Unsqueeze (g0, last)              # int64[B,1,1,N,1]
      e1 = Unsqueeze (g1, last)              # int64[B,1,1,N,1]
      idx = Concat <axis = -1> (e0, e1)      # int64[B,1,1,N,2]
      y = GatherND (x, idx)                  # bool[B,1,1,N] }"#;

/// Counts in the other order (columns on the earlier axis) would need a transpose: left alone.
#[test]
fn index_grid_keeps_columns_before_rows() {
    let swapped = INDEX_GRID
        .replace("int64[3] ua = {1, 2, 3}, int64[3] ub = {0, 1, 2}", "int64[3] ua = {0, 1, 2}, int64[3] ub = {0, 1, 3}")
        .replace("u0 = Unsqueeze (r0, ua)                # int64[B,1,1,1]", "u0 = Unsqueeze (r0, ua)  # int64[1,1,1,B]")
        .replace(
            "u1 = Unsqueeze (r1, ub)                # int64[1,1,1,N]",
            "u1 = Unsqueeze (r1, ub)  # int64[1,1,N,1]",
        );
    let (mut m, _) = parse(23, &swapped);
    let mut stats = OptimizeStats::default();
    rewrite(&mut m, 23, Target::Onnx, &mut stats);
    assert!(ops(&m).contains(&"GatherND"), "{:?}", ops(&m));
    assert!(stats.rules_rejected.contains_key("index-grid: columns before rows"), "{:?}", stats.rules_rejected);
}

/// transformers' `apply_rotary_pos_emb` on (batch, heads, sequence, 8): halves rotated.
const ROTARY: &str = r#"(float[N,2,S,8] x, float[N,S,4] f) => (float[N,2,S,8] y)
    <int64[1] one = {1}, int64[1] zero = {0}, int64[1] half = {4}, int64[1] end = {9223372036854775807},
     int64[1] last = {3}>
    { cat = Concat <axis = -1> (f, f)        # float[N,S,8]
      cos = Cos (cat)                        # float[N,S,8]
      sin = Sin (cat)                        # float[N,S,8]
      uc = Unsqueeze (cos, one)              # float[N,1,S,8]
      us = Unsqueeze (sin, one)              # float[N,1,S,8]
      a = Mul (x, uc)                        # float[N,2,S,8]
      x1 = Slice (x, zero, half, last, one)  # float[N,2,S,4]
      x2 = Slice (x, half, end, last, one)   # float[N,2,S,4]
      n = Neg (x2)                           # float[N,2,S,4]
      r = Concat <axis = -1> (n, x1)         # float[N,2,S,8]
      b = Mul (r, us)                        # float[N,2,S,8]
      y = Add (a, b)                         # float[N,2,S,8] }"#;

/// [`ROTARY`] with one set of angles for the whole batch.
fn shared_angles() -> String {
    ROTARY
        .replace("float[N,S,4] f", "float[1,S,4] f")
        .replace("float[N,S,8]", "float[1,S,8]")
        .replace("float[N,1,S,8]", "float[1,1,S,8]")
}

#[test]
fn rotary_embedding_needs_opset_23_and_the_halves_swapped() {
    check_egraph(
        23,
        ROTARY,
        r#"(float[N,2,S,8] x, float[N,S,4] f) => (float[N,2,S,8] y)
           {
             _0 = Cos (f)
             _1 = Sin (f)
             y = RotaryEmbedding (x, _0, _1)
           }
           # fired: rotary-embedding"#,
    );
    // Angles shared by the batch (a prefill's positions): the batch and heads rotate as one axis.
    check_egraph(
        23,
        &shared_angles(),
        r#"(float[N,2,S,8] x, float[1,S,4] f) => (float[N,2,S,8] y)
           <int64[4] _0 = {1, -1, 0, 8}, int64[4] _1 = {-1, 2, 0, 8}>
           {
             _2 = Reshape (x, _0)
             _3 = Cos (f)
             _4 = Sin (f)
             _5 = RotaryEmbedding (_2, _3, _4)
             y = Reshape (_5, _1)
           }
           # fired: rotary-embedding"#,
    );
    for (text, why) in [
        (ROTARY.to_string(), "opset 20"),
        (ROTARY.replace("r = Concat <axis = -1> (n, x1)", "r = Concat <axis = -1> (x1, n)"), "halves not swapped"),
        (ROTARY.replace("n = Neg (x2)", "n = Abs (x2)"), "no negation"),
    ] {
        let opset = if why == "opset 20" { 20 } else { 23 };
        let (mut m, _) = parse(opset, &text);
        let mut stats = OptimizeStats::default();
        rewrite(&mut m, opset, Target::Onnx, &mut stats);
        assert_eq!(fired(&stats, "rotary-embedding"), 0, "{why}");
    }
}

/// The opset-23 rules compute what the graphs did, in ONNX Runtime (with `FXONNX_PYTHON`:
/// `tests/check_pairs.py`, symbolic dims at 1, 2 and 3): the cache and grouped heads read by
/// `Attention` itself, and `RotaryEmbedding`.
#[test]
fn opset_23_rules_compute_what_the_graphs_did_in_onnxruntime() {
    check_pairs_in_onnxruntime(
        23,
        Target::Onnx,
        &[
            ("attention-kv", ATTENTION_KV, "attention-kv"),
            ("rotary", ROTARY, "rotary-embedding"),
            ("rotary-shared", &shared_angles(), "rotary-embedding"),
        ],
    );
}

#[test]
fn extraction_counts_shared_nodes_once() {
    // y = Relu(a) and z = Relu(Relu(a)): the rewrite makes z's class equal y's; one Relu remains.
    check_egraph(
        20,
        r#"(float[4] x) => (float[4] b, float[4] c)
           { a = Relu (x)  # float[4]
             b = Relu (a)  # float[4]
             c = Neg (a)   # float[4] }"#,
        r#"(float[4] x) => (float[4] b, float[4] c)
           {
             b = Relu (x)
             c = Neg (b)
           }
           # fired: relu-relu"#,
    );
}

#[test]
fn reshape_shape_from_output_shape() {
    check_egraph(
        20,
        r#"(float[N,8,1,1] x) => (float[N,8] y)
           <int64[1] rest = {8}>
           { sh = Shape <end = 1> (x)                # int64[1]
             cat = Concat <axis = 0> (sh, rest)     # int64[2]
             y = Reshape (x, cat)                   # float[N,8] }"#,
        r#"(float[N,8,1,1] x) => (float[N,8] y)
           <int64[2] _0 = {-1, 8}>
           {
             y = Reshape (x, _0)
           }
           # fired: reshape-static-shape"#,
    );
    // Two symbolic sizes: no single -1 can stand for both.
    check_egraph(
        20,
        r#"(float[N,M,8] x) => (float[N,M] y)
           { sh = Shape <end = 2> (x)  # int64[2]
             y = Reshape (x, sh)      # float[N,M] }"#,
        r#"(float[N,M,8] x) => (float[N,M] y)
           {
             sh = Shape <end = 2> (x)
             y = Reshape (x, sh)
           }"#,
    );
}

/// An RMS norm without a scale after a residual sum that is read again (a decoder's unit-scale
/// norm folded into the next MatMul).
const SKIP_RMS_NORM: &str = r#"(float[N,5,8] a, float[N,5,8] b) => (float[N,5,8] y)
    <float two = {2}, int64[1] ax = {-1}, float eps = {1e-6}>
    { x = Add (a, b)             # float[N,5,8]
      sq = Pow (x, two)          # float[N,5,8]
      ms = ReduceMean (sq, ax)   # float[N,5,1]
      v = Add (ms, eps)          # float[N,5,1]
      r = Sqrt (v)               # float[N,5,1]
      inv = Reciprocal (r)       # float[N,5,1]
      n = Mul (x, inv)           # float[N,5,8]
      y = Add (x, n)             # float[N,5,8] }"#;

#[test]
fn onnxruntime_rms_norm_without_scale_after_a_sum_is_one_skip_norm() {
    check_egraph_for(
        20,
        Target::OnnxRuntimeCpu,
        SKIP_RMS_NORM,
        r#"(float[N,5,8] a, float[N,5,8] b) => (float[N,5,8] y)
           <float[8] _0 = {1, 1, 1, 1, 1, 1, 1, 1}>
           {
             n, _1, _2, x = SkipSimplifiedLayerNormalization <epsilon = 1e-6> (a, b, _0)
             y = Add (x, n)
           }
           # fired: skip-simplified-layer-norm x2"#,
    );
    // Standard ONNX keeps the graph.
    check_egraph(
        20,
        SKIP_RMS_NORM,
        r#"(float[N,5,8] a, float[N,5,8] b) => (float[N,5,8] y)
           <float two = {2}, int64[1] ax = {-1}, float eps = {0.000001}>
           {
             x = Add (a, b)
             sq = Pow (x, two)
             ms = ReduceMean (sq, ax)
             v = Add (ms, eps)
             r = Sqrt (v)
             inv = Reciprocal (r)
             n = Mul (x, inv)
             y = Add (x, n)
           }"#,
    );
}

#[test]
fn onnxruntime_rms_norm_with_scale_takes_the_form_onnxruntime_fuses() {
    check_egraph_for(
        20,
        Target::OnnxRuntimeCpu,
        RMS_NORM,
        r#"(float[N,5,8] x) => (float[N,5,8] y)
           <float two = {2}, int64[1] ax = {-1}, float eps = {0.000001},
            float[8] w = {2, 2, 2, 2, 2, 2, 2, 2}>
           {
             sq = Pow (x, two)
             ms = ReduceMean (sq, ax)
             a = Add (ms, eps)
             r = Sqrt (a)
             _0 = Div (x, r)
             y = Mul (w, _0)
           }
           # fired: rms-norm-div"#,
    );
    // Without a scale ONNX Runtime does not fuse the Div form, which is then no faster: kept.
    let unscaled = r#"(float[N,5,8] x) => (float[N,5,8] y)
        <float two = {2}, int64[1] ax = {-1}, float eps = {1e-6}>
        { sq = Pow (x, two)          # float[N,5,8]
          ms = ReduceMean (sq, ax)   # float[N,5,1]
          a = Add (ms, eps)          # float[N,5,1]
          r = Sqrt (a)               # float[N,5,1]
          inv = Reciprocal (r)       # float[N,5,1]
          y = Mul (x, inv)           # float[N,5,8] }"#;
    check_egraph_for(
        20,
        Target::OnnxRuntimeCpu,
        unscaled,
        r#"(float[N,5,8] x) => (float[N,5,8] y)
           <float two = {2}, int64[1] ax = {-1}, float eps = {0.000001}>
           {
             sq = Pow (x, two)
             ms = ReduceMean (sq, ax)
             a = Add (ms, eps)
             r = Sqrt (a)
             inv = Reciprocal (r)
             y = Mul (x, inv)
           }"#,
    );
}

/// The ONNX Runtime target's rewrites compute what the graphs did, in ONNX Runtime (with
/// `FXONNX_PYTHON`: `tests/check_pairs.py`, symbolic dims at 1, 2 and 3): a scaled RMS norm in the
/// Div form and an unscaled one after a residual sum as `SkipSimplifiedLayerNormalization`.
#[test]
fn onnxruntime_rules_compute_what_the_graphs_did_in_onnxruntime() {
    check_pairs_in_onnxruntime(
        20,
        Target::OnnxRuntimeCpu,
        &[("scaled", RMS_NORM, "rms-norm-div"), ("skip", SKIP_RMS_NORM, "skip-simplified-layer-norm")],
    );
}

/// Each graph as written and as optimized for `target` at `opset` (the rule named must fire), run
/// in ONNX Runtime by `tests/check_pairs.py` on the same inputs: every output must agree.
fn check_pairs_in_onnxruntime(opset: i64, target: Target, cases: &[(&str, &str, &str)]) {
    let Some(py) = std::env::var("FXONNX_PYTHON").ok().filter(|p| !p.is_empty()) else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    for &(name, text, rule) in cases {
        let (original, _) = parse(opset, text);
        let (mut optimized, _) = parse(opset, text);
        let stats = crate::optimize::optimize_for(&mut optimized, target);
        assert!(fired(&stats, rule) > 0, "{name}: {rule} did not fire: {:?}", stats.rules_fired);
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).expect("mkdir");
        for (file, model) in [("a.onnx", &original), ("b.onnx", &optimized)] {
            let placement = crate::onnx::save::DataPlacement::Inline;
            crate::onnx::save::save_model(model, &folder.join(file), &placement, &crate::onnx::save::Sources::none())
                .expect("save");
        }
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_pairs.py");
    let o = std::process::Command::new(py).arg(script).arg(dir.path()).output().expect("run python");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{report}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(report.contains(&format!(r#""evaluated": {}"#, cases.len())), "{report}");
}

// ------------------------------------------------------------------------------------------ every rule's example

/// A rule's example: the graph it rewrites, at an opset it runs at, and the graph it gives (rules
/// fired included) under its target's rules: the standard ones, or the ONNX Runtime target's.
struct Example {
    rule: &'static str,
    opset: i64,
    input: String,
    expected: String,
}

/// [`Example`]'s target: the ONNX Runtime target for its rules, standard ONNX for the others.
fn target_of(rule: &str) -> Target {
    if rules::ONNXRUNTIME_RULES.iter().any(|r| r.name == rule) {
        Target::OnnxRuntimeCpu
    } else {
        Target::Onnx
    }
}

/// One example per rule of [`rules::RULES`] and [`rules::ONNXRUNTIME_RULES`] (a new rule adds
/// its own: `every_rule_has_an_example` fails without). The tests above hold the cases where a
/// rule must not fire.
fn examples() -> Vec<Example> {
    let ex = |rule, opset, input: &str, expected: &str| Example {
        rule,
        opset,
        input: input.to_string(),
        expected: expected.to_string(),
    };
    let neutral = |op: &str, v: i64| {
        format!(
            "(float[N,3] x) => (float[N,3] z)
             <float[1,3] c = {{{v}, {v}, {v}}}>
             {{ y = {op} (x, c)  # float[N,3]
               z = Relu (y)     # float[N,3] }}"
        )
    };
    let neutral_gone = |rule: &str| format!("(float[N,3] x) => (float[N,3] z) {{ z = Relu (x) }} # fired: {rule}");
    vec![
        ex(
            "transpose-transpose",
            20,
            r#"(float[2,3,4] x) => (float[3,4,2] e)
               { b = Transpose <perm = [1, 0, 2]> (x)  # float[3,2,4]
                 c = Transpose <perm = [0, 2, 1]> (b)  # float[3,4,2]
                 e = Relu (c)                          # float[3,4,2] }"#,
            r#"(float[2,3,4] x) => (float[3,4,2] e)
               { c = Transpose <perm = [1, 2, 0]> (x)
                 e = Relu (c) }
               # fired: transpose-transpose"#,
        ),
        ex(
            "cast-cast",
            20,
            r#"(float[4] x) => (int64[4] c)
               { b = Cast <to = 11> (x)  # double[4]
                 c = Cast <to = 7> (b)   # int64[4] }"#,
            r#"(float[4] x) => (int64[4] c) { c = Cast <to = 7> (x) } # fired: cast-cast"#,
        ),
        ex(
            "reshape-static-shape",
            20,
            r#"(float[N,8,1,1] x) => (float[N,8] y)
               <int64[1] rest = {8}>
               { sh = Shape <end = 1> (x)             # int64[1]
                 cat = Concat <axis = 0> (sh, rest)  # int64[2]
                 y = Reshape (x, cat)                # float[N,8] }"#,
            r#"(float[N,8,1,1] x) => (float[N,8] y)
               <int64[2] _0 = {-1, 8}>
               { y = Reshape (x, _0) }
               # fired: reshape-static-shape"#,
        ),
        ex(
            "unsqueeze-unsqueeze",
            20,
            r#"(float[N] x) => (float[1,1,N] u2)
               <int64[1] a0 = {0}>
               { u1 = Unsqueeze (x, a0)   # float[1,N]
                 u2 = Unsqueeze (u1, a0)  # float[1,1,N] }"#,
            r#"(float[N] x) => (float[1,1,N] u2)
               <int64[2] _0 = {0, 1}>
               { u2 = Unsqueeze (x, _0) }
               # fired: unsqueeze-unsqueeze"#,
        ),
        ex("mul-one", 20, &neutral("Mul", 1), &neutral_gone("mul-one")),
        ex("div-one", 20, &neutral("Div", 1), &neutral_gone("div-one")),
        ex("add-zero", 20, &neutral("Add", 0), &neutral_gone("add-zero")),
        ex("sub-zero", 20, &neutral("Sub", 0), &neutral_gone("sub-zero")),
        ex(
            "min-max-clip",
            20,
            r#"(float[N,3] x) => (float[N,3] b)
               <float lo = {0}, float hi = {6}>
               { a = Max (x, lo)  # float[N,3]
                 b = Min (a, hi)  # float[N,3] }"#,
            r#"(float[N,3] x) => (float[N,3] b)
               <float _0 = {0}, float _1 = {6}>
               { b = Clip (x, _0, _1) }
               # fired: min-max-clip"#,
        ),
        ex(
            "relu-relu",
            20,
            r#"(float[4] x) => (float[4] b)
               { a = Relu (x)  # float[4]
                 b = Relu (a)  # float[4] }"#,
            r#"(float[4] x) => (float[4] b) { b = Relu (x) } # fired: relu-relu"#,
        ),
        ex(
            "relu-clip",
            20,
            r#"(float[4] x) => (float[4] b)
               <float lo = {-1}, float hi = {6}>
               { a = Relu (x)          # float[4]
                 b = Clip (a, lo, hi)  # float[4] }"#,
            r#"(float[4] x) => (float[4] b)
               <float _0 = {0}, float _1 = {6}>
               { b = Clip (x, _0, _1) }
               # fired: relu-clip"#,
        ),
        ex(
            "sum-div-mean",
            20,
            r#"(float[N,4,8] x) => (float[N,4,1] y)
               <int64[1] ax = {-1}, float n = {8}>
               { s = ReduceSum (x, ax)  # float[N,4,1]
                 y = Div (s, n)         # float[N,4,1] }"#,
            r#"(float[N,4,8] x) => (float[N,4,1] y)
               <int64[1] ax = {-1}>
               { y = ReduceMean (x, ax) }
               # fired: sum-div-mean"#,
        ),
        ex(
            "global-average-pool",
            20,
            r#"(float[N,8,7,5] x) => (float[N,8,1,1] e)
               <float[7,1] mh = {0.14285715, 0.14285715, 0.14285715, 0.14285715, 0.14285715, 0.14285715, 0.14285715},
                float[5,1] mw = {0.2, 0.2, 0.2, 0.2, 0.2}>
               { a = Transpose <perm = [0, 1, 3, 2]> (x)  # float[N,8,5,7]
                 b = MatMul (a, mh)                      # float[N,8,5,1]
                 c = Transpose <perm = [0, 1, 3, 2]> (b)  # float[N,8,1,5]
                 e = MatMul (c, mw)                      # float[N,8,1,1] }"#,
            r#"(float[N,8,7,5] x) => (float[N,8,1,1] e)
               { e = GlobalAveragePool (x) }
               # fired: global-average-pool"#,
        ),
        ex(
            "hard-sigmoid",
            20,
            r#"(float[N,4] x) => (float[N,4] y)
               <float c3 = {3}, float c0 = {0}, float c6 = {6}>
               { a = Add (x, c3)       # float[N,4]
                 c = Clip (a, c0, c6)  # float[N,4]
                 y = Div (c, c6)       # float[N,4] }"#,
            r#"(float[N,4] x) => (float[N,4] y)
               { y = HardSigmoid <alpha = 0.16666667, beta = 0.5> (x) }
               # fired: hard-sigmoid"#,
        ),
        ex(
            "hard-swish",
            20,
            r#"(float[N,4] x) => (float[N,4] y)
               <float c3 = {3}, float c0 = {0}, float c6 = {6}>
               { a = Add (x, c3)       # float[N,4]
                 c = Clip (a, c0, c6)  # float[N,4]
                 mu = Mul (x, c)       # float[N,4]
                 y = Div (mu, c6)      # float[N,4] }"#,
            r#"(float[N,4] x) => (float[N,4] y) { y = HardSwish (x) } # fired: hard-swish"#,
        ),
        ex(
            "pad-conv",
            20,
            r#"(float[N,2,5,5] x) => (float[N,3,6,6] y)
               <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6},
                int64[4] pads = {0, 0, 1, 1}, float zero = {0}, int64[2] axes = {3, 2}>
               { p = Pad (x, pads, zero, axes)                                 # float[N,2,6,6]
                 y = Conv <kernel_shape = [1, 1], pads = [0, 0, 0, 0]> (p, w)  # float[N,3,6,6] }"#,
            r#"(float[N,2,5,5] x) => (float[N,3,6,6] y)
               <float[3,2,1,1] w = {1, 2, 3, 4, 5, 6}>
               { y = Conv <kernel_shape = [1, 1], pads = [0, 0, 1, 1]> (x, w) }
               # fired: pad-conv"#,
        ),
        ex(
            "batchnorm-conv",
            20,
            CONV_BN,
            r#"(float[N,2,1,1] x) => (float[N,3,1,1] y)
               <float[3,2,1,1] _0 = {1, 2, 3, 4, 5, 6}, float[3] _1 = {-0.4, -0.3, 2.3}>
               { y = Conv <kernel_shape = [1, 1]> (x, _0, _1) }
               # fired: batchnorm-conv"#,
        ),
        ex(
            "batchnorm-convtranspose",
            20,
            r#"(float[N,2,1,1] x) => (float[N,3,1,1] y)
               <float[2,3,1,1] w = {1, 1, 1, 1, 1, 1}, float[3] s = {1, 2, 3}, float[3] b = {0, 0, 0},
                float[3] mean = {0, 0, 0}, float[3] var = {1, 1, 1}>
               { conv = ConvTranspose (x, w)                                        # float[N,3,1,1]
                 y = BatchNormalization <epsilon = 0.0> (conv, s, b, mean, var)  # float[N,3,1,1] }"#,
            r#"(float[N,2,1,1] x) => (float[N,3,1,1] y)
               <float[2,3,1,1] _0 = {1, 2, 3, 1, 2, 3}, float[3] _1 = {0, 0, 0}>
               { y = ConvTranspose (x, _0, _1) }
               # fired: batchnorm-convtranspose"#,
        ),
        ex(
            "batchnorm-gemm",
            20,
            r#"(float[N,2] x) => (float[N,3] y)
               <float[3,2] w = {1, 1, 1, 1, 1, 1}, float[3] s = {1, 2, 3}, float[3] b = {1, 1, 1},
                float[3] mean = {0, 0, 0}, float[3] var = {1, 1, 1}>
               { g = Gemm <transB = 1> (x, w)                                    # float[N,3]
                 y = BatchNormalization <epsilon = 0.0> (g, s, b, mean, var)  # float[N,3] }"#,
            r#"(float[N,2] x) => (float[N,3] y)
               <float[3,2] _0 = {1, 1, 2, 2, 3, 3}, float[3] _1 = {1, 1, 1}>
               { y = Gemm <transB = 1> (x, _0, _1) }
               # fired: batchnorm-gemm"#,
        ),
        ex(
            "matmul-add-gemm",
            20,
            r#"(float[N,4] a) => (float[N,3] y)
               <float[4,3] w = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
                float[3] c = {1, 1, 1}>
               { mm = MatMul (a, w)  # float[N,3]
                 y = Add (mm, c)     # float[N,3] }"#,
            r#"(float[N,4] a) => (float[N,3] y)
               <float[4,3] w = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
                float[3] c = {1, 1, 1}>
               { y = Gemm (a, w, c) }
               # fired: matmul-add-gemm"#,
        ),
        ex(
            "layer-norm",
            20,
            &layer_norm_text(-1),
            r#"(float[N,5,8] x) => (float[N,5,8] y)
               <float[8] w = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5},
                float[8] b = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}>
               { y = LayerNormalization <axis = 2, epsilon = 1e-5> (x, w, b) }
               # fired: layer-norm x2"#,
        ),
        ex("gelu-erf", 20, GELU_ERF, r#"(float[N,4] x) => (float[N,4] y) { y = Gelu (x) } # fired: gelu-erf"#),
        ex(
            "gelu-tanh",
            20,
            &gelu_tanh_text("0.044715"),
            r#"(float[N,4] x) => (float[N,4] y)
               { y = Gelu <approximate = "tanh"> (x) }
               # fired: gelu-tanh"#,
        ),
        ex(
            "rms-norm",
            23,
            RMS_NORM,
            r#"(float[N,5,8] x) => (float[N,5,8] y)
               <float[8] w = {2, 2, 2, 2, 2, 2, 2, 2}>
               { y = RMSNormalization <axis = 2, epsilon = 1e-6> (x, w) }
               # fired: rms-norm x2"#,
        ),
        ex(
            "attention",
            23,
            ATTENTION_CONST_MASK,
            r#"(float[1,2,2,4] q, float[1,2,2,4] k, float[1,2,2,4] v) => (float[1,2,2,4] y)
               <bool[1,1,2,2] mask = {1, 0, 1, 1}>
               { y = Attention <scale = 0.5> (q, k, v, mask) }
               # fired: attention"#,
        ),
        ex(
            "attention-kv",
            23,
            ATTENTION_KV,
            r#"(float[2,4,3,8] q, float[2,2,3,8] k, float[2,2,3,8] v, float[2,2,5,8] pk, float[2,2,5,8] pv, float[2,1,3,8] mask)
                  => (float[2,4,3,8] y, float[2,2,8,8] ck, float[2,2,8,8] cv)
               { y, ck, cv = Attention <scale = 0.25> (q, k, v, mask, pk, pv) }
               # fired: attention-kv x2"#,
        ),
        ex(
            "index-grid",
            23,
            INDEX_GRID,
            r#"(bool[B,T] x, float[B,N] k) => (bool[B,1,1,N] y)
               <int64[1] zero = {0}, int64[1] _0 = {0}, int64[1] _1 = {1}, int64[2] _2 = {1, 2}>
               { sn = Shape <start = 1, end = 2> (k)
                 n = Squeeze (sn, zero)
                 _3 = Unsqueeze (n, _0)
                 _4 = Slice (x, _0, _3, _1)
                 y = Unsqueeze (_4, _2) }
               # fired: index-grid"#,
        ),
        ex(
            "rotary-embedding",
            23,
            ROTARY,
            r#"(float[N,2,S,8] x, float[N,S,4] f) => (float[N,2,S,8] y)
               { _0 = Cos (f)
                 _1 = Sin (f)
                 y = RotaryEmbedding (x, _0, _1) }
               # fired: rotary-embedding"#,
        ),
        ex(
            "rms-norm-div",
            20,
            RMS_NORM,
            r#"(float[N,5,8] x) => (float[N,5,8] y)
               <float two = {2}, int64[1] ax = {-1}, float eps = {0.000001},
                float[8] w = {2, 2, 2, 2, 2, 2, 2, 2}>
               { sq = Pow (x, two)
                 ms = ReduceMean (sq, ax)
                 a = Add (ms, eps)
                 r = Sqrt (a)
                 _0 = Div (x, r)
                 y = Mul (w, _0) }
               # fired: rms-norm-div"#,
        ),
        ex(
            "skip-simplified-layer-norm",
            20,
            SKIP_RMS_NORM,
            r#"(float[N,5,8] a, float[N,5,8] b) => (float[N,5,8] y)
               <float[8] _0 = {1, 1, 1, 1, 1, 1, 1, 1}>
               { n, _1, _2, x = SkipSimplifiedLayerNormalization <epsilon = 1e-6> (a, b, _0)
                 y = Add (x, n) }
               # fired: skip-simplified-layer-norm x2"#,
        ),
    ]
}

/// Every rule of both rule sets has an example, and each example gives its expected graph with its
/// rule fired (a rule without an example fails here, naming it).
#[test]
fn every_rule_has_an_example() {
    let examples = examples();
    let all: Vec<&str> = rules::RULES.iter().chain(rules::ONNXRUNTIME_RULES).map(|r| r.name).collect();
    let missing: Vec<&&str> = all.iter().filter(|r| !examples.iter().any(|e| e.rule == **r)).collect();
    assert!(missing.is_empty(), "rules without an example graph and expected rewrite in examples(): {missing:?}");
    for e in &examples {
        assert!(all.contains(&e.rule), "{}: no such rule", e.rule);
        let fired_line = e.expected.lines().last().unwrap_or("").split("# fired:").nth(1).unwrap_or("");
        assert!(fired_line.split([',', ' ']).any(|r| r == e.rule), "{}: the expected graph does not fire it", e.rule);
        check_egraph_for(e.opset, target_of(e.rule), &e.input, &e.expected);
    }
}

/// Every rule's example computes what the graph did, in ONNX Runtime (with `FXONNX_PYTHON`:
/// `tests/check_pairs.py`, symbolic dims at 1, 2 and 3): the example as written against its
/// e-graph rewrite under the rule's target.
#[test]
fn every_rule_example_computes_the_same_in_onnxruntime() {
    let Some(py) = std::env::var("FXONNX_PYTHON").ok().filter(|p| !p.is_empty()) else { return };
    let examples = examples();
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, e) in examples.iter().enumerate() {
        let (original, _) = parse(e.opset, &e.input);
        let (mut rewritten, _) = parse(e.opset, &e.input);
        let mut stats = OptimizeStats::default();
        rewrite(&mut rewritten, e.opset, target_of(e.rule), &mut stats);
        crate::onnx::dce::eliminate_dead_code(&mut rewritten.graph);
        assert!(fired(&stats, e.rule) > 0, "{}: did not fire", e.rule);
        let folder = dir.path().join(format!("{i:02}-{}", e.rule));
        std::fs::create_dir_all(&folder).expect("mkdir");
        for (file, model) in [("a.onnx", &original), ("b.onnx", &rewritten)] {
            let placement = crate::onnx::save::DataPlacement::Inline;
            crate::onnx::save::save_model(model, &folder.join(file), &placement, &crate::onnx::save::Sources::none())
                .expect("save");
        }
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_pairs.py");
    let o = std::process::Command::new(py).arg(script).arg(dir.path()).output().expect("run python");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{report}\n{}", String::from_utf8_lossy(&o.stderr));
    // Every example evaluated: none skipped for a kernel ONNX Runtime lacks.
    assert!(report.contains(&format!(r#""evaluated": {}"#, examples.len())), "{report}");
}

/// The ONNX Runtime rules' measurements are in `reports/deploy.md`, each under its rule's name.
#[test]
fn every_onnxruntime_rule_has_its_measurement_in_the_deploy_report() {
    let report = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/deploy.md"))
        .expect("reports/deploy.md");
    for r in rules::ONNXRUNTIME_RULES {
        assert!(report.contains(&format!("- **`{}`**", r.name)), "{}: no entry in reports/deploy.md", r.name);
    }
}
