//! The kernel, stride, dilation and padding parameters of convolution and pooling windows.

use crate::translate::prelude::*;

/// The largest kernel, stride, dilation or padding accepted: far above any real window, and small
/// enough that sizes computed from them cannot overflow.
const MAX_WINDOW: i64 = 1 << 24;

/// `[n]` repeated `k` times for a pooling/conv attribute given as one value or `k` values (none:
/// `default`). Each value must lie in `default..=2^24`: kernels, strides and dilations are at
/// least 1, paddings at least 0; anything else is not a program torch traced.
pub fn expand_param(v: &[i64], k: usize, default: i64) -> OpResult<Vec<i64>> {
    let out = match v.len() {
        0 => vec![default; k],
        1 => vec![v[0]; k],
        n if n == k => v.to_vec(),
        n => bail!("a window parameter has {n} values for {k} spatial axes: {v:?}"),
    };
    if let Some(bad) = out.iter().find(|&&x| !(default..=MAX_WINDOW).contains(&x)) {
        bail!("window parameter {bad} is out of range ({default} to {MAX_WINDOW}) in {v:?}");
    }
    Ok(out)
}

/// ONNX `pads` (begins then ends) from torch's symmetric padding.
pub fn pads_of(padding: &[i64], k: usize) -> OpResult<Vec<i64>> {
    let p = expand_param(padding, k, 0)?;
    Ok(p.iter().chain(p.iter()).copied().collect())
}
