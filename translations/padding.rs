//! Padding: pad in its constant, reflect, replicate and circular modes.

use crate::translate::prelude::*;
use crate::translations;

/// `torch.nn.functional.pad`'s list (last axis first, begin/end pairs) as ONNX `Pad`.
fn pad_impl(op: &mut Builder, x: Value, pad: &[SymInt], mode: &str, value: Option<Value>) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > r {
        bail!("pad list of length {} for a tensor of rank {r}", pad.len());
    }
    let n = pad.len() / 2;
    if n == 0 {
        return Ok(x);
    }
    let axes: Vec<i64> = (0..n).map(|i| (r - 1 - i) as i64).collect();
    let mut v: Vec<SymInt> = (0..n).map(|i| pad[2 * i]).collect();
    v.extend((0..n).map(|i| pad[2 * i + 1]));
    let pads = shape_vec(op, &v);
    let axes = op.const_i64s(&axes);
    if mode == "constant" {
        return Ok(op.Pad(x, pads, value, Some(axes)).out());
    }
    // reflect / replicate / circular: gather each padded axis at torch's source positions
    // (this also covers negative pads, which crop).
    let mut y = x;
    for i in 0..n {
        let axis = (r - 1 - i) as i64;
        let (SymInt::Const(pl), SymInt::Const(pr)) = (pad[2 * i], pad[2 * i + 1]) else {
            bail!("{mode} padding with symbolic pad sizes is not supported");
        };
        if pl == 0 && pr == 0 {
            continue;
        }
        let len = dim_size(op, y, axis);
        let e = op.const_i64s(&[]);
        let len = op.Reshape(len, e).out();
        let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
        let total = op.scalar_i64(pl + pr);
        let out_len = op.Add(len, total);
        let j = op.Range(zero, out_len, one);
        let last = op.Sub(len, one);
        let idx = match mode {
            "replicate" => {
                let s = op.scalar_i64(pl);
                let i = op.Sub(j, s);
                let i = op.Max(&[i, zero]);
                op.Min(&[i, last])
            }
            "reflect" => {
                let s = op.scalar_i64(pl);
                let i = op.Sub(j, s);
                let i = op.Abs(i);
                let d = op.Sub(last, i);
                let d = op.Abs(d);
                op.Sub(last, d)
            }
            "circular" => {
                let in0 = op.scalar_i64(0.max(-pl));
                let crop = op.scalar_i64(0.max(-pl) + 0.max(-pr));
                let m = op.Sub(len, crop);
                let m = op.Max(&[m, one]);
                let s = op.scalar_i64(0.max(pl));
                let i = op.Sub(j, s);
                let i = op.Mod(i, m).fmod(0).out();
                op.Add(i, in0)
            }
            other => bail!("unknown pad mode '{other}'"),
        };
        y = op.Gather(y, idx).axis(axis).out();
    }
    Ok(y)
}

translations! {
    /// pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor
    #[target("aten::pad")]
    fn pad(
        op,
        self_: Tensor,
        pad: Vec<SymInt>,
        mode: &str = "constant",
        value: Option<f64> = None,
    ) -> OpResult<Value> {
        let v = match (mode, value) {
            ("constant", Some(v)) => {
                let t = dtype_of(op, self_)?;
                Some(op.scalar(t, v))
            }
            _ => None,
        };
        pad_impl(op, self_, &pad, mode, v)
    }

    /// constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor
    #[target("aten::constant_pad_nd")]
    fn constant_pad_nd(
        op,
        self_: Tensor,
        pad: Vec<SymInt>,
        value: Scalar = Scalar::Int(0),
    ) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let v = scalar_value(op, value, t);
        pad_impl(op, self_, &pad, "constant", Some(v))
    }

    /// reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor
    #[target("aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d")]
    fn reflection_pad(op, self_: Tensor, padding: Vec<SymInt>) -> OpResult<Value> {
        pad_impl(op, self_, &padding, "reflect", None)
    }

    /// replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor
    #[target("aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d")]
    fn replication_pad(op, self_: Tensor, padding: Vec<SymInt>) -> OpResult<Value> {
        pad_impl(op, self_, &padding, "replicate", None)
    }
}
