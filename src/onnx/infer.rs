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
pub(crate) const SAME_SHAPE: &[&str] = &[
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

/// How an operator's outputs get their element types and shapes, from the lists above.
#[derive(Clone, Copy, Default)]
struct Class {
    same_as_first: bool,
    bool_out: bool,
    int64_out: bool,
    same_shape: bool,
}

/// The lists as one table: every node built asks, and a scan of the lists compared the op type
/// with up to a hundred names.
fn class(op: &str) -> Class {
    static TABLE: std::sync::OnceLock<crate::hash::FxHashMap<&'static str, Class>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t: crate::hash::FxHashMap<&'static str, Class> = Default::default();
        for &o in SAME_AS_FIRST {
            t.entry(o).or_default().same_as_first = true;
        }
        for &o in BOOL_OUT {
            t.entry(o).or_default().bool_out = true;
        }
        for &o in INT64_OUT {
            t.entry(o).or_default().int64_out = true;
        }
        for &o in SAME_SHAPE {
            t.entry(o).or_default().same_shape = true;
        }
        t
    });
    table.get(op).copied().unwrap_or_default()
}

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
    let class = class(op);
    // The type of output 0 and of the others.
    let (head, rest): (Option<DType>, Option<DType>) = match op {
        "Cast" => match n.attr("to") {
            Some(AttrValue::Int(to)) => (dtype_from_onnx(*to as i32), None),
            _ => (None, None),
        },
        // CastLike takes its target's type, Where its branches' (input 1 in both).
        "CastLike" | "Where" => (n.inputs.get(1).copied().flatten().and_then(|v| b.values[v.index()].dtype), None),
        "Constant" => match n.attr("value") {
            Some(AttrValue::Tensor(t)) => (Some(t.dtype), None),
            _ => (None, None),
        },
        "ConstantOfShape" => match n.attr("value") {
            Some(AttrValue::Tensor(t)) => (Some(t.dtype), None),
            _ => (Some(DType::Float), None),
        },
        "Range" => (first, None),
        // TopK's and MaxPool's indices, Unique's indices, inverse and counts are int64.
        "TopK" | "MaxPool" | "Unique" => (first, Some(DType::Int64)),
        // Mean and InvStdDev are of `stash_type`, float32 unless set.
        "LayerNormalization" => (
            first,
            match n.attr("stash_type") {
                Some(AttrValue::Int(t)) => dtype_from_onnx(*t as i32),
                _ => Some(DType::Float),
            },
        ),
        "If" | "Loop" | "Scan" => (None, None),
        _ if class.bool_out => (Some(DType::Bool), Some(DType::Bool)),
        _ if class.int64_out => (Some(DType::Int64), Some(DType::Int64)),
        // Optional extra outputs (BatchNorm stats) share the type; Dropout's mask
        // is bool.
        "Dropout" if class.same_as_first => (first, Some(DType::Bool)),
        _ if class.same_as_first => (first, first),
        _ => (None, None),
    };
    let shape = if class.same_shape {
        n.inputs.first().copied().flatten().and_then(|v| b.values[v.index()].shape.clone())
    } else {
        None
    };
    let mut shape = Some(shape);
    for (i, &v) in n.outputs.iter().enumerate() {
        let info = &mut b.values[v.index()];
        if info.dtype.is_none() {
            info.dtype = if i == 0 { head } else { rest };
        }
        if i == 0 && info.shape.is_none() {
            info.shape = shape.take().flatten();
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
        23 => Float4E2M1,
        24 => Float8E8M0,
        _ => return None,
    })
}
