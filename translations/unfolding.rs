//! Sliding windows laid out as columns: unfold, im2col, col2im.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::window::expand_param;

/// The padded-input positions every window reads along one axis, as `[k, out]`: `ki·d + i·s`.
/// A constant when the axis is static; else `Range(0, size + 2p - d(k-1), s)` plus the taps,
/// whose element count is the output length `(size + 2p - d(k-1) - 1) / s + 1`.
fn window_positions(op: &mut Builder, x: Value, axis: usize, [k, d, p, s]: [i64; 4]) -> OpResult<(Value, Option<i64>)> {
    let reach = d * (k - 1) + 1;
    if let Some(Dim::Fixed(size)) = op.shape(x).and_then(|sh| sh.get(axis)).cloned() {
        let out = (size + 2 * p - reach) / s + 1;
        if out < 1 {
            bail!("im2col: the kernel does not fit the input");
        }
        constant_elements(op, "the windows' positions", &[k, out])?;
        let taps: Vec<i64> = (0..k).flat_map(|ki| (0..out).map(move |i| ki * d + i * s)).collect();
        return Ok((op.constant_tensor(TensorData::from_i64s(vec![k, out], &taps)), Some(out)));
    }
    let shape = op.Shape(x).out();
    let axis = op.scalar_i64(axis as i64);
    let size = op.Gather(shape, axis).axis(0).out();
    let room = op.scalar_i64(reach - 1 - 2 * p);
    let limit = op.Sub(size, room);
    let (zero, step) = (op.scalar_i64(0), op.scalar_i64(s));
    let starts = op.Range(zero, limit, step);
    constant_elements(op, "the windows' taps", &[k])?;
    let taps: Vec<i64> = (0..k).map(|ki| ki * d).collect();
    let taps = op.constant_tensor(TensorData::from_i64s(vec![k, 1], &taps));
    Ok((op.Add(starts, taps), None))
}

/// `im2col` with symbolic sizes, one axis at a time: gather the rows every window reads
/// (`[.., C, kh, oh, W]`), then the columns (`[.., C, kh, oh, kw, ow]`), bring `kw` before `oh`
/// and merge. A column gather that reads every column once (kw = 1, stride 1) is skipped.
fn im2col_dynamic(
    op: &mut Builder,
    x: Value,
    [kh, kw]: [i64; 2],
    [dh, dw]: [i64; 2],
    [ph, pw]: [i64; 2],
    [sh, sw]: [i64; 2],
) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if r != 3 && r != 4 {
        bail!("im2col needs a 3-D or 4-D input");
    }
    let channels = match op.shape(x).map(|s| s[r - 3].clone()) {
        Some(Dim::Fixed(c)) => Some(c),
        _ => None,
    };
    let (rows, oh) = window_positions(op, x, r - 2, [kh, dh, ph, sh])?;
    let (cols, ow) = window_positions(op, x, r - 1, [kw, dw, pw, sw])?;
    let r = r as i64;
    let padded = if ph != 0 || pw != 0 {
        let pads = op.const_i64s(&[ph, pw, ph, pw]);
        let axes = op.const_i64s(&[r - 2, r - 1]);
        op.Pad(x, pads, None, Some(axes)).out()
    } else {
        x
    };
    let g = op.Gather(padded, rows).axis(r - 2).out();
    let g = if kw == 1 && sw == 1 {
        g
    } else {
        let g = op.Gather(g, cols).axis(r).out();
        if kw == 1 || oh == Some(1) {
            g
        } else {
            let mut perm: Vec<i64> = (0..r + 2).collect();
            perm.swap(r as usize - 1, r as usize);
            op.Transpose(g).perm(&perm).out()
        }
    };
    // [lead.., C·kh·kw, oh·ow]; Reshape's 0 copies the batch axis.
    let lead = vec![0; r as usize - 3];
    let target = |last_two: [i64; 2]| [lead.as_slice(), &last_two].concat();
    let merged = match (channels, oh.zip(ow)) {
        (Some(c), _) => target([c * kh * kw, -1]),
        (None, Some((oh, ow))) => target([-1, oh * ow]),
        (None, None) => {
            // Both the channels and the window count are symbolic: merge the windows first.
            let windows = op.const_i64s(&[lead.as_slice(), &[0, kh * kw, -1]].concat());
            let g = op.Reshape(g, windows).out();
            let l = op.Shape(g).start(-1).out();
            let head = op.const_i64s(&[lead.as_slice(), &[-1]].concat());
            let out = op.Concat(&[head, l]).axis(0).out();
            return Ok(op.Reshape(g, out).out());
        }
    };
    let merged = op.const_i64s(&merged);
    Ok(op.Reshape(g, merged).out())
}

translations! {
    /// unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)
    #[target("aten::unfold", "aten::unfold_copy")]
    fn unfold(op, self_: Tensor, dimension: i64, size: i64, step: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            let one = op.const_i64s(&[1]);
            return Ok(op.Reshape(self_, one).out());
        }
        let axis = normalize_axis(dimension, r)?;
        // Window starts 0, step, ... up to n - size; window w takes start_w + [0, size).
        let n = dim_size(op, self_, axis);
        let e = op.const_i64s(&[]);
        let n0 = op.Reshape(n, e).out();
        let sz = op.scalar_i64(size);
        let lim = op.Sub(n0, sz);
        let one = op.scalar_i64(1);
        let lim = op.Add(lim, one);
        let zero = op.scalar_i64(0);
        let st = op.scalar_i64(step);
        let starts = op.Range(zero, lim, st);
        let col = op.const_i64s(&[-1, 1]);
        let starts = op.Reshape(starts, col).out();
        let within = op.Range(zero, sz, one);
        let idx = op.Add(starts, within);
        let g = op.Gather(self_, idx).axis(axis).out();
        // [pre, windows, size, post] → size last.
        let mut perm: Vec<i64> = (0..=axis).collect();
        perm.extend((axis + 2)..(r as i64 + 1));
        perm.push(axis + 1);
        let identity = perm.iter().enumerate().all(|(i, &p)| i as i64 == p);
        Ok(if identity { g } else { op.Transpose(g).perm(&perm).out() })
    }

    /// im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
    #[target("aten::im2col")]
    fn im2col(
        op,
        self_: Tensor,
        kernel_size: Vec<i64>,
        dilation: Vec<i64>,
        padding: Vec<i64>,
        stride: Vec<i64>,
    ) -> OpResult<Value> {
        // [N?, C, H, W] → [N?, C·kh·kw, L]: gather each window position from the padded, flattened plane.
        let two = |v: &[i64], default| expand_param(v, 2, default).map(|p| (p[0], p[1]));
        let (kh, kw) = two(&kernel_size, 1)?;
        let ((dh, dw), (ph, pw), (sh, sw)) = (two(&dilation, 1)?, two(&padding, 0)?, two(&stride, 1)?);
        let Ok(shape) = static_shape(op, self_, "im2col") else {
            return im2col_dynamic(op, self_, [kh, kw], [dh, dw], [ph, pw], [sh, sw]);
        };
        let r = shape.len();
        if r != 3 && r != 4 {
            bail!("im2col needs a 3-D or 4-D input");
        }
        let (h, w) = (shape[r - 2] + 2 * ph, shape[r - 1] + 2 * pw);
        let oh = (h - (dh * (kh - 1) + 1)) / sh + 1;
        let ow = (w - (dw * (kw - 1) + 1)) / sw + 1;
        if oh < 1 || ow < 1 {
            bail!("im2col: the kernel does not fit the input");
        }
        let mut idx = Vec::with_capacity(constant_elements(op, "im2col's index", &[kh, kw, oh, ow])?);
        for ki in 0..kh {
            for kj in 0..kw {
                for i in 0..oh {
                    for j in 0..ow {
                        idx.push((i * sh + ki * dh) * w + j * sw + kj * dw);
                    }
                }
            }
        }
        let x = self_;
        let x = if ph != 0 || pw != 0 {
            let pads = op.const_i64s(&[ph, pw, ph, pw]);
            let axes = op.const_i64s(&[r as i64 - 2, r as i64 - 1]);
            op.Pad(x, pads, None, Some(axes)).out()
        } else {
            x
        };
        let lead: Vec<i64> = shape[..r - 2].to_vec();
        let mut flat = lead.clone();
        flat.push(h * w);
        let fs = op.const_i64s(&flat);
        let x = op.Reshape(x, fs).out();
        let iv = op.constant_tensor(TensorData::from_i64s(vec![kh * kw, oh * ow], &idx));
        let g = op.Gather(x, iv).axis(r as i64 - 2).out();
        let mut out: Vec<i64> = shape[..r - 3].to_vec();
        out.push(shape[r - 3] * kh * kw);
        out.push(oh * ow);
        let os = op.const_i64s(&out);
        Ok(op.Reshape(g, os).out())
    }

    /// col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding,
    ///     int[2] stride) -> Tensor
    #[target("aten::col2im")]
    fn col2im(
        op,
        self_: Tensor,
        output_size: Vec<SymInt>,
        kernel_size: Vec<i64>,
        dilation: Vec<i64>,
        padding: Vec<i64>,
        stride: Vec<i64>,
    ) -> OpResult<Value> {
        // ONNX Col2Im is torch's fold: [N, C·kh·kw, L] summed into [N, C, H, W]; unbatched inputs
        // ([C·kh·kw, L]) get a batch axis.
        let unbatched = match rank_of(op, self_)? {
            2 => true,
            3 => false,
            r => bail!("col2im needs a 2-D or 3-D input, got rank {r}"),
        };
        let p = expand_param(&padding, 2, 0)?;
        let (kernel, dilation, stride) =
            (expand_param(&kernel_size, 2, 1)?, expand_param(&dilation, 2, 1)?, expand_param(&stride, 2, 1)?);
        let zero = op.const_i64s(&[0]);
        let x = if unbatched { op.Unsqueeze(self_, zero) } else { self_ };
        // ONNX Runtime's Col2Im is float32 only: other types sum in float32 (the driver casts back).
        let t = dtype_of(op, x)?;
        let x = cast(op, x, DType::Float);
        let image = shape_vec(op, &output_size);
        let block = op.const_i64s(&kernel);
        let y = op.Col2Im(x, image, block).dilations(&dilation).pads(&[p[0], p[1], p[0], p[1]]).strides(&stride).out();
        let y = cast(op, y, t);
        Ok(if unbatched { op.Squeeze(y, Some(zero)) } else { y })
    }
}
