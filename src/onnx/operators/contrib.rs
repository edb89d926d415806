//! ONNX Runtime's own operators (domain `com.microsoft`, version 1) that the optimizer's ONNX
//! Runtime rules write (`optimize::egraph::rules::ONNXRUNTIME_RULES`): their output types and
//! shapes, after onnxruntime's `docs/ContribOperators.md` (1.31). The export check reads them as
//! it reads the default domain's records; `onnx.checker` knows no schema of this domain and checks
//! the rest of the model.

use super::dims::shape_of;
use super::{Facts, Inferred, Op, Shape};
use crate::onnx::ir::{DType, Node};

/// The domain of ONNX Runtime's contrib operators.
pub(crate) const DOMAIN: &str = "com.microsoft";

/// The opset version of [`DOMAIN`] the model imports.
pub(crate) const VERSION: i64 = 1;

pub(super) const OPS: &[Op] = &[
    // (input, skip, gamma[, epsilon]) -> (output, mean, inv_std_var, input_skip_bias_sum):
    // input + skip, RMS-normalized over the last axis and scaled by gamma; the sum is output 3.
    Op { types: Some(skip_norm_types), shape: Shape::Rule(skip_norm_shape), ..Op::NONE }
        .named("SkipSimplifiedLayerNormalization"),
    // (A, B packed, scales[, zero points, g_idx, bias]) with attributes K, N, bits, block_size
    // (the `--quantize` pass): A·W with W dequantized per block; A's type, A's shape with N last.
    Op { types: Some(first_input_type), shape: Shape::Rule(matmul_nbits_shape), ..Op::NONE }.named("MatMulNBits"),
];

fn first_input_type(_: &Node, input: &dyn Fn(usize) -> Option<DType>, _: usize) -> Option<DType> {
    input(0)
}

fn matmul_nbits_shape(facts: &dyn Facts, node: &Node, _: usize) -> Inferred {
    let n = super::attr_int(node, "N", -1);
    Ok(shape_of(facts, node, 0).filter(|_| n > 0).map(|a| {
        let mut s = a.to_vec();
        if let Some(last) = s.last_mut() {
            *last = crate::onnx::ir::Dim::Fixed(n);
        }
        s
    }))
}

/// Output and sum of the input's type; mean and inverse standard deviation float32.
fn skip_norm_types(_: &Node, input: &dyn Fn(usize) -> Option<DType>, i: usize) -> Option<DType> {
    match i {
        0 | 3 => input(0),
        _ => Some(DType::Float),
    }
}

/// Output and sum of the input's shape; ONNX Runtime does not document the statistics' shapes.
fn skip_norm_shape(facts: &dyn Facts, node: &Node, i: usize) -> Inferred {
    match i {
        0 | 3 => Ok(shape_of(facts, node, 0).map(<[_]>::to_vec)),
        _ => Ok(None),
    }
}
