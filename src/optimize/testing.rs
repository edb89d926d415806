//! Optimizer tests as data: a graph written in ONNX's text syntax (the subset `fxonnx inspect`
//! prints, after `onnx.printer.to_text`), run through a pass, and the expected graph in the same
//! syntax, rules fired included:
//!
//! ```text
//! check_optimized(
//!     r#"(float[N,3] x) => (float[N,3] y)
//!        <float[1] one = {1}>
//!        { a = Mul (x, one)  # float[N,3]
//!          y = Relu (a) }"#,
//!     r#"(float[N,3] x) => (float[N,3] y)
//!        { y = Relu (x) }
//!        # fired: ..."#,
//! );
//! ```
//!
//! The syntax is `onnx::testing`'s.

use super::{optimize, OptimizeStats, Target};
pub use crate::onnx::testing::{compare, parse};

/// The graph with the rules that fired.
pub fn print(m: &crate::onnx::ir::Model, stats: &OptimizeStats) -> String {
    crate::onnx::testing::print(m, &stats.rules_fired)
}

/// `input` optimized as an export does, compared with `expected`.
#[track_caller]
pub fn check_optimized(input: &str, expected: &str) {
    check_optimized_at(20, input, expected)
}

/// [`check_optimized`] at `opset`.
#[track_caller]
pub fn check_optimized_at(opset: i64, input: &str, expected: &str) {
    let (mut m, _) = parse(opset, input);
    let stats = optimize(&mut m);
    compare(&print(&m, &stats), expected);
}

/// `input` through the linear passes only.
#[track_caller]
pub fn check_linear(input: &str, expected: &str) {
    let (mut m, _) = parse(20, input);
    let mut stats = OptimizeStats::default();
    super::linear_passes(&mut m, &mut stats);
    compare(&print(&m, &stats), expected);
}

/// `input` (at `opset`) through the e-graph rewriter only, then dead-code elimination.
#[track_caller]
pub fn check_egraph(opset: i64, input: &str, expected: &str) {
    check_egraph_for(opset, Target::Onnx, input, expected)
}

/// [`check_egraph`] with the rules of `target`.
#[track_caller]
pub fn check_egraph_for(opset: i64, target: Target, input: &str, expected: &str) {
    let (mut m, _) = parse(opset, input);
    let mut stats = OptimizeStats::default();
    super::egraph::rewrite(&mut m, opset, target, &mut stats);
    crate::onnx::dce::eliminate_dead_code(&mut m.graph);
    compare(&print(&m, &stats), expected);
}
