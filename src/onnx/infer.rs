//! Output element types of freshly built nodes, so translations can ask `op.dtype(v)` of
//! intermediate values too. Only element types are inferred here; shapes of FX values come from the
//! archive's TensorMeta, and intermediate shapes are left to ONNX's own inference.

use super::builder::Builder;
use super::ir::{AttrValue, DType};

/// Operators whose outputs take the element type of their first input.
const SAME_AS_FIRST: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Add",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "AveragePool",
    "BatchNormalization",
    "Ceil",
    "Celu",
    "Clip",
    "Concat",
    "Conv",
    "ConvTranspose",
    "Cos",
    "Cosh",
    "CumSum",
    "DepthToSpace",
    "Div",
    "Dropout",
    "Elu",
    "Erf",
    "Exp",
    "Expand",
    "Flatten",
    "Floor",
    "Gather",
    "GatherElements",
    "GatherND",
    "Gelu",
    "Gemm",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "GroupNormalization",
    "HardSigmoid",
    "HardSwish",
    "Identity",
    "InstanceNormalization",
    "LayerNormalization",
    "LeakyRelu",
    "Log",
    "LogSoftmax",
    "LpNormalization",
    "MatMul",
    "Max",
    "MaxPool",
    "Mean",
    "Min",
    "Mish",
    "Mod",
    "Mul",
    "Neg",
    "Pad",
    "Pow",
    "PRelu",
    "Reciprocal",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Relu",
    "Reshape",
    "Resize",
    "ReverseSequence",
    "RMSNormalization",
    "Round",
    "ScatterElements",
    "ScatterND",
    "Selu",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Slice",
    "Softmax",
    "Softplus",
    "Softsign",
    "SpaceToDepth",
    "Split",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Sum",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "Tile",
    "TopK",
    "Transpose",
    "Trilu",
    "Unsqueeze",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitwiseNot",
    "BitShift",
    "Einsum",
    "Attention",
    "Col2Im",
    "Det",
];

const BOOL_OUT: &[&str] =
    &["Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "Not", "IsNaN", "IsInf"];

const INT64_OUT: &[&str] = &["Shape", "Size", "ArgMax", "ArgMin", "NonZero"];

/// One-input operators whose output has their input's shape.
const SAME_SHAPE: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "Cast",
    "CastLike",
    "Ceil",
    "Celu",
    "Clip",
    "Cos",
    "Cosh",
    "Elu",
    "Erf",
    "Exp",
    "Floor",
    "Gelu",
    "HardSigmoid",
    "HardSwish",
    "Identity",
    "IsInf",
    "IsNaN",
    "LeakyRelu",
    "Log",
    "LogSoftmax",
    "Mish",
    "Neg",
    "Not",
    "Reciprocal",
    "Relu",
    "Round",
    "Selu",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Softmax",
    "Softplus",
    "Softsign",
    "Sqrt",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "BitwiseNot",
    "LayerNormalization",
    "BatchNormalization",
    "RMSNormalization",
];

/// Fill in the output element types of node `node` of the innermost graph, where they follow
/// from the operator and its inputs. Leaves already-known types alone.
pub(crate) fn infer_node(b: &mut Builder, node: usize) {
    let g = b.graphs.last().expect("main graph");
    let n = &g.nodes[node];
    if !n.domain.is_empty() {
        return;
    }
    let first = n.inputs.first().copied().flatten().and_then(|v| b.values[v.index()].dtype);
    let op = n.op_type.as_str();
    let mut types: Vec<Option<DType>> = vec![None; n.outputs.len()];
    match op {
        "Cast" => {
            if let Some(AttrValue::Int(to)) = n.attr("to") {
                types[0] = dtype_from_onnx(*to as i32);
            }
        }
        "CastLike" | "Where" => {
            // CastLike takes its target's type, Where its branches' (input 1 in both).
            types[0] = n.inputs.get(1).copied().flatten().and_then(|v| b.values[v.index()].dtype);
        }
        "Constant" => {
            if let Some(AttrValue::Tensor(t)) = n.attr("value") {
                types[0] = Some(t.dtype);
            }
        }
        "ConstantOfShape" => {
            types[0] = match n.attr("value") {
                Some(AttrValue::Tensor(t)) => Some(t.dtype),
                _ => Some(DType::Float),
            };
        }
        "Range" => types[0] = first,
        "TopK" | "MaxPool" => {
            types[0] = first;
            if types.len() > 1 {
                types[1] = Some(DType::Int64);
            }
        }
        "If" | "Loop" | "Scan" => {}
        _ if BOOL_OUT.contains(&op) => types.iter_mut().for_each(|t| *t = Some(DType::Bool)),
        _ if INT64_OUT.contains(&op) => types.iter_mut().for_each(|t| *t = Some(DType::Int64)),
        _ if SAME_AS_FIRST.contains(&op) => {
            // Optional extra outputs (BatchNorm stats, LayerNorm mean) share the type; Dropout's
            // mask is bool.
            types.iter_mut().for_each(|t| *t = first);
            if op == "Dropout" && types.len() > 1 {
                types[1] = Some(DType::Bool);
            }
        }
        _ => {}
    }
    let shape = if SAME_SHAPE.contains(&op) {
        n.inputs.first().copied().flatten().and_then(|v| b.values[v.index()].shape.clone())
    } else {
        None
    };
    let outputs = n.outputs.clone();
    for (i, (v, t)) in outputs.into_iter().zip(types).enumerate() {
        let info = &mut b.values[v.index()];
        if info.dtype.is_none() {
            info.dtype = t;
        }
        if i == 0 && info.shape.is_none() {
            info.shape = shape.clone();
        }
    }
}

/// The [`DType`] of an ONNX `TensorProto.DataType` number.
pub fn dtype_from_onnx(code: i32) -> Option<DType> {
    use DType::*;
    Some(match code {
        1 => Float,
        2 => Uint8,
        3 => Int8,
        4 => Uint16,
        5 => Int16,
        6 => Int32,
        7 => Int64,
        8 => String,
        9 => Bool,
        10 => Float16,
        11 => Double,
        12 => Uint32,
        13 => Uint64,
        14 => Complex64,
        15 => Complex128,
        16 => BFloat16,
        17 => Float8E4M3FN,
        18 => Float8E4M3FNUZ,
        19 => Float8E5M2,
        20 => Float8E5M2FNUZ,
        24 => Float8E8M0,
        _ => return None,
    })
}
