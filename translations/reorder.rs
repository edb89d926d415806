//! Reorderings and repeats: flip, roll, rot90, repeat, tile, repeat_interleave, pixel and channel
//! shuffles.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::axes::swap_axes;

/// `x` reversed along `axes`.
fn flip_axes(op: &mut Builder, x: Value, axes: &[i64]) -> Value {
    if axes.is_empty() {
        return x;
    }
    let starts = op.const_i64s(&vec![-1; axes.len()]);
    let ends = op.const_i64s(&vec![i64::MIN; axes.len()]);
    let steps = op.const_i64s(&vec![-1; axes.len()]);
    let axes = op.const_i64s(axes);
    op.Slice(x, starts, ends, Some(axes), Some(steps))
}

/// `repeat_interleave(repeats)`: i repeated repeats[i] times, for i in order.
fn repeated_positions(op: &mut Builder, repeats: Value) -> Value {
    // Position j of the result holds i when the running total of repeats[..=i-1] <= j <
    // total of repeats[..=i]: the count of inclusive running totals <= j.
    let r = cast(op, repeats, DType::Int64);
    let zero = op.scalar_i64(0);
    let totals = op.CumSum(r, zero).out();
    let total = op.ReduceSum(r, None).keepdims(0).out();
    let one = op.scalar_i64(1);
    let positions = op.Range(zero, total, one);
    let col = op.const_i64s(&[-1, 1]);
    let positions = op.Reshape(positions, col).out();
    let passed = op.LessOrEqual(totals, positions);
    let passed = cast(op, passed, DType::Int64);
    let axes = op.const_i64s(&[1]);
    op.ReduceSum(passed, Some(axes)).keepdims(0).out()
}

/// `x` repeated `repeats[i]` times along each axis; more repeats than axes add leading axes of size
/// one first (torch's `repeat`).
fn repeat_by(op: &mut Builder, x: Value, repeats: &[SymInt]) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    let x = if repeats.len() > r {
        let axes: Vec<i64> = (0..(repeats.len() - r) as i64).collect();
        let axes = op.const_i64s(&axes);
        op.Unsqueeze(x, axes)
    } else {
        x
    };
    let reps = shape_vec(op, repeats);
    Ok(op.Tile(x, reps))
}

/// pixel_shuffle (`up`) / pixel_unshuffle with torch's channel order, any number of batch axes.
/// `pixel_impl` with symbolic sizes: the same reshapes, their shapes computed from `Shape(x)`.
fn pixel_impl_dynamic(op: &mut Builder, x: Value, r: usize, f: i64, up: bool) -> Value {
    let r = r as i64;
    let batch = op.Shape(x).end(r - 3).out();
    let c = op.Shape(x).start(r - 3).end(r - 2).out();
    let h = op.Shape(x).start(r - 2).end(r - 1).out();
    let w = op.Shape(x).start(r - 1).out();
    let (ff, fv, m1) = (op.const_i64s(&[f * f]), op.const_i64s(&[f]), op.const_i64s(&[-1]));
    let (mid, perm, fin) = if up {
        let oc = op.Div(c, ff);
        let (hf, wf) = (op.Mul(h, fv), op.Mul(w, fv));
        (vec![m1, oc, fv, fv, h, w], [0, 1, 4, 2, 5, 3], vec![batch, oc, hf, wf])
    } else {
        let (oh, ow) = (op.Div(h, fv), op.Div(w, fv));
        let cf = op.Mul(c, ff);
        (vec![m1, c, oh, fv, ow, fv], [0, 1, 3, 5, 2, 4], vec![batch, cf, oh, ow])
    };
    let mid = op.Concat(&mid).axis(0).out();
    let y = op.Reshape(x, mid).out();
    let y = op.Transpose(y).perm(&perm).out();
    let fin = op.Concat(&fin).axis(0).out();
    op.Reshape(y, fin).out()
}

fn pixel_impl(op: &mut Builder, x: Value, f: i64, up: bool) -> OpResult<Value> {
    let r = rank_of(op, x)?;
    if r < 3 {
        bail!("pixel_(un)shuffle needs at least 3 dims");
    }
    let shape: Option<Vec<i64>> = match op.shape(x) {
        Some(s) => s
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Some(*n),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>(),
        None => None,
    };
    let Some(shape) = shape else {
        return Ok(pixel_impl_dynamic(op, x, r, f, up));
    };
    let batch = &shape[..r - 3];
    let (c, h, w) = (shape[r - 3], shape[r - 2], shape[r - 1]);
    let b: i64 = batch.iter().product();
    let (mid, perm, fin): (Vec<i64>, [i64; 6], Vec<i64>) = if up {
        let oc = c / (f * f);
        (vec![b, oc, f, f, h, w], [0, 1, 4, 2, 5, 3], vec![oc, h * f, w * f])
    } else {
        let (oh, ow) = (h / f, w / f);
        (vec![b, c, oh, f, ow, f], [0, 1, 3, 5, 2, 4], vec![c * f * f, oh, ow])
    };
    let mut out_shape = batch.to_vec();
    out_shape.extend(fin);
    // Reshape reads a 0 as "keep the input's size": right only where that size is 0 too.
    let keeps = |to: &[i64], from: &[i64]| to.iter().enumerate().all(|(i, &d)| d != 0 || from.get(i) == Some(&0));
    let moved: Vec<i64> = perm.iter().map(|&p| mid[p as usize]).collect();
    if !keeps(&mid, &shape) || !keeps(&out_shape, &moved) {
        // An empty input: the result is empty too.
        let zero = constant_data(dtype_of(op, x)?, vec![1], &[0.0])?;
        let s = op.const_i64s(&out_shape);
        return Ok(op.ConstantOfShape(s).value(zero).out());
    }
    let s = op.const_i64s(&mid);
    let y = op.Reshape(x, s).out();
    let y = op.Transpose(y).perm(&perm).out();
    let s = op.const_i64s(&out_shape);
    Ok(op.Reshape(y, s).out())
}

translations! {
    /// repeat(Tensor self, SymInt[] repeats) -> Tensor
    #[target("aten::repeat")]
    fn repeat(op, self_: Tensor, repeats: Vec<SymInt>) -> OpResult<Value> {
        repeat_by(op, self_, &repeats)
    }

    /// tile(Tensor self, SymInt[] dims) -> Tensor
    #[target("aten::tile")]
    fn tile(op, self_: Tensor, dims: Vec<SymInt>) -> OpResult<Value> {
        // torch pads `dims` with leading ones to the input's rank, then repeats.
        let r = rank_of(op, self_)?;
        let mut repeats = vec![SymInt::Const(1); r.saturating_sub(dims.len())];
        repeats.extend(dims);
        repeat_by(op, self_, &repeats)
    }

    /// flip(Tensor self, int[] dims) -> Tensor
    #[target("aten::flip")]
    fn flip(op, self_: Tensor, dims: Vec<i64>) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            return Ok(self_);
        }
        let axes: Vec<i64> = dims.iter().map(|&d| normalize_axis(d, r)).collect::<OpResult<Vec<_>>>()?;
        Ok(flip_axes(op, self_, &axes))
    }

    /// flipud(Tensor self) -> Tensor
    #[target("aten::flipud")]
    fn flipud(op, self_: Tensor) -> Value {
        flip_axes(op, self_, &[0])
    }

    /// fliplr(Tensor self) -> Tensor
    #[target("aten::fliplr")]
    fn fliplr(op, self_: Tensor) -> Value {
        flip_axes(op, self_, &[1])
    }

    /// roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor
    #[target("aten::roll")]
    fn roll(op, self_: Tensor, shifts: Vec<SymInt>, dims: Vec<i64> = vec![]) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let (x, pairs, reshape) = if dims.is_empty() {
            let shape = op.Shape(self_).out();
            let m1 = op.const_i64s(&[-1]);
            (op.Reshape(self_, m1).out(), vec![(shifts[0], 0i64)], Some(shape))
        } else {
            if dims.len() != shifts.len() {
                bail!("roll: shifts and dims differ in length");
            }
            let pairs = shifts.iter().zip(&dims).map(|(&s, &d)| Ok((s, normalize_axis(d, r)?)));
            (self_, pairs.collect::<OpResult<Vec<_>>>()?, None)
        };
        // Rolling keeps the shape: the sizes are read once, before any Concat hides them.
        let sizes = op.shape(x).map(<[Dim]>::to_vec);
        let mut x = x;
        for (shift, axis) in pairs {
            // out = cat(x[n-s:], x[:n-s]) with s = shift mod n; static where n and the shift are.
            let static_n = sizes.as_ref().and_then(|sh| match sh.get(axis as usize) {
                Some(Dim::Fixed(n)) => Some(*n),
                _ => None,
            });
            let cut = match (static_n, shift) {
                (Some(0), _) => continue,
                (Some(n), SymInt::Const(s)) => op.const_i64s(&[n - s.rem_euclid(n)]),
                _ => {
                    let n = dim_size(op, x, axis);
                    let s = sym_value(op, shift);
                    let s = as_1d(op, s);
                    let one = op.const_i64s(&[1]);
                    let n1 = op.Max(&[n, one]);
                    let s = op.Mod(s, n1).fmod(0).out();
                    op.Sub(n, s)
                }
            };
            let axes = op.const_i64s(&[axis]);
            let big = op.const_i64s(&[i64::MAX]);
            let zero = op.const_i64s(&[0]);
            let tail = op.Slice(x, cut, big, Some(axes), None);
            let head = op.Slice(x, zero, cut, Some(axes), None);
            x = op.Concat(&[tail, head]).axis(axis).out();
        }
        Ok(match reshape {
            Some(s) => op.Reshape(x, s).out(),
            None => x,
        })
    }

    /// rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor
    #[target("aten::rot90")]
    fn rot90(op, self_: Tensor, k: i64 = 1, dims: Vec<i64> = vec![0, 1]) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if dims.len() != 2 {
            bail!("rot90 needs two dims");
        }
        let (d0, d1) = (normalize_axis(dims[0], r)?, normalize_axis(dims[1], r)?);
        Ok(match k.rem_euclid(4) {
            1 => {
                let f = flip_axes(op, self_, &[d1]);
                swap_axes(op, f, r, d0, d1)
            }
            2 => flip_axes(op, self_, &[d0, d1]),
            3 => {
                let f = flip_axes(op, self_, &[d0]);
                swap_axes(op, f, r, d0, d1)
            }
            _ => self_,
        })
    }

    /// pixel_shuffle(Tensor self, int upscale_factor) -> Tensor
    #[target("aten::pixel_shuffle")]
    fn pixel_shuffle(op, self_: Tensor, upscale_factor: i64) -> OpResult<Value> {
        pixel_impl(op, self_, upscale_factor, true)
    }

    /// pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor
    #[target("aten::pixel_unshuffle")]
    fn pixel_unshuffle(op, self_: Tensor, downscale_factor: i64) -> OpResult<Value> {
        pixel_impl(op, self_, downscale_factor, false)
    }

    /// channel_shuffle(Tensor self, SymInt groups) -> Tensor
    #[target("aten::channel_shuffle", "aten::native_channel_shuffle")]
    fn channel_shuffle(op, self_: Tensor, groups: SymInt) -> OpResult<Value> {
        // [N, C, *] viewed as [N, g, C/g, *], the two group axes swapped, viewed back.
        let r = rank_of(op, self_)?;
        if r < 3 {
            bail!("channel_shuffle needs an input of at least 3 dims, got rank {r}");
        }
        let shape = op.Shape(self_).out();
        let n = op.Shape(self_).start(0).end(1).out();
        let c = op.Shape(self_).start(1).end(2).out();
        let rest = op.Shape(self_).start(2).out();
        let g = sym_value(op, groups);
        let g = as_1d(op, g);
        let per = op.Div(c, g);
        let mid = op.Concat(&[n, g, per, rest]).axis(0).out();
        let y = op.Reshape(self_, mid).out();
        let mut perm: Vec<i64> = (0..=r as i64).collect();
        perm.swap(1, 2);
        let y = op.Transpose(y).perm(&perm).out();
        Ok(op.Reshape(y, shape).out())
    }

    /// repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
    #[target("aten::repeat_interleave.self_int")]
    fn repeat_interleave(
        op,
        self_: Tensor,
        repeats: SymInt,
        dim: Option<i64> = None,
        // A hint saving torch a sync; the size follows from `repeats`.
        _output_size: Ignored,
    ) -> OpResult<Value> {
        let (x, axis, r) = match dim {
            None => {
                let m1 = op.const_i64s(&[-1]);
                (op.Reshape(self_, m1).out(), 0i64, 1usize)
            }
            Some(d) => {
                let r = rank_of(op, self_)?;
                if r == 0 {
                    let m1 = op.const_i64s(&[-1]);
                    (op.Reshape(self_, m1).out(), 0, 1)
                } else {
                    (self_, normalize_axis(d, r)?, r)
                }
            }
        };
        // [.., n, 1, ..] tiled to [.., n, repeats, ..], then the two axes merged.
        let a = op.const_i64s(&[axis + 1]);
        let xu = op.Unsqueeze(x, a);
        let mut reps = vec![SymInt::Const(1); r + 1];
        reps[axis as usize + 1] = repeats;
        let reps = shape_vec(op, &reps);
        let tiled = op.Tile(xu, reps);
        let mut parts = Vec::new();
        if axis > 0 {
            parts.push(op.Shape(x).start(0).end(axis).out());
        }
        parts.push(op.const_i64s(&[-1]));
        if (axis as usize) < r - 1 {
            parts.push(op.Shape(x).start(axis + 1).out());
        }
        let shape = if parts.len() == 1 { parts[0] } else { op.Concat(&parts).axis(0).out() };
        Ok(op.Reshape(tiled, shape).out())
    }

    /// repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor
    #[target("aten::repeat_interleave.Tensor")]
    fn repeat_interleave_counts(
        op,
        repeats: Tensor,
        // A hint saving torch a sync; the size follows from `repeats`.
        _output_size: Ignored,
    ) -> Value {
        repeated_positions(op, repeats)
    }

    /// repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
    #[target("aten::repeat_interleave.self_Tensor")]
    fn repeat_interleave_tensor(
        op,
        self_: Tensor,
        repeats: Tensor,
        dim: Option<i64> = None,
        // A hint saving torch a sync; the size follows from `repeats`.
        _output_size: Ignored,
    ) -> OpResult<Value> {
        // x gathered along the axis at repeat_interleave(repeats); one repeat count serves every element.
        let r = rank_of(op, self_)?;
        let (x, axis) = match dim {
            Some(d) if r > 0 => (self_, normalize_axis(d, r)?),
            _ => {
                let m1 = op.const_i64s(&[-1]);
                (op.Reshape(self_, m1).out(), 0)
            }
        };
        let m1 = op.const_i64s(&[-1]);
        let counts = op.Reshape(repeats, m1).out();
        let n = dim_size(op, x, axis);
        let counts = op.Expand(counts, n);
        let pos = repeated_positions(op, counts);
        Ok(op.Gather(x, pos).axis(axis).out())
    }
}
