//! The kernel, stride, dilation and padding parameters of convolution and pooling windows.

/// `[n]` repeated `k` times for a pooling/conv attribute given as one value or `k` values.
pub fn expand_param(v: &[i64], k: usize, default: i64) -> Vec<i64> {
    match v.len() {
        0 => vec![default; k],
        1 => vec![v[0]; k],
        _ => v.to_vec(),
    }
}

/// ONNX `pads` (begins then ends) from torch's symmetric padding.
pub fn pads_of(padding: &[i64], k: usize) -> Vec<i64> {
    let p = expand_param(padding, k, 0);
    p.iter().chain(p.iter()).copied().collect()
}
