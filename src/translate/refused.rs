//! Targets of the operator universe the built-in table declines on purpose, each with its reason.
//!
//! A program that calls one fails with the reason beside the target's name (not a bare
//! "unsupported"); a custom table may still translate it, since the table is looked up first.
//! `fxonnx ops --missing` counts these as refused, not missing.

/// `aten::atan2.out` and the other `out=` overloads.
const OUT: &str = "an `out=` overload writes into a preallocated tensor; torch.export functionalizes it to the \
                   functional overload, so an exported program never calls it";

const STRIDES: &str = "ONNX tensors have no strides or storage offset: a program that reads them depends on a memory \
                       layout ONNX does not have";

/// `(target, reason)`.
const REFUSED: &[(&str, &str)] = &[
    (
        "_operator.getitem",
        "torch.export.save lists a multi-output node's outputs on the node itself: `getitem` never appears in a \
         .pt2 archive",
    ),
    ("aten::sym_stride.int", STRIDES),
    (
        "torchvision::deform_conv2d.default",
        "deformable convolution samples the input at learned per-position offsets; ONNX has no operator \
         for it and fxonnx does not build it from gathers yet: translate it in a custom table",
    ),
    (
        "torchvision::ps_roi_pool.default",
        "position-sensitive ROI pooling averages integer-rounded bins, which neither MaxRoiPool nor \
         RoiAlign computes; not translated yet: use ps_roi_align, or translate it in a custom table",
    ),
    ("prims::resize.default", "resizes a tensor's storage in place; ONNX values are immutable and have no storage"),
    (
        "onnx_symbolic::_symbolic.default",
        "torch.onnx.ops.symbolic names an ONNX operator inside the program; fxonnx does not emit operators from a \
         program's own description yet: translate the surrounding op in a custom table instead",
    ),
    (
        "onnx_symbolic::_symbolic_multi_out.default",
        "torch.onnx.ops.symbolic_multi_out names an ONNX operator inside the program; fxonnx does not emit operators \
         from a program's own description yet: translate the surrounding op in a custom table instead",
    ),
];

/// Why the built-in table declines `key`, if it does on purpose.
pub fn reason(key: &str) -> Option<&'static str> {
    if let Some(&(_, why)) = REFUSED.iter().find(|(k, _)| *k == key) {
        return Some(why);
    }
    let overload = key.split_once("::").and_then(|(_, rest)| rest.split_once('.')).map(|(_, o)| o);
    overload.filter(|o| o.starts_with("out") || o.ends_with("_out")).map(|_| OUT)
}
