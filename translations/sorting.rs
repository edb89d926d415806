//! Sorting, searching and cumulative ops: sort, argsort, msort, kthvalue, searchsorted, bucketize,
//! topk, isin, unique, cumsum, cumprod, cummax, cummin, logcumsumexp, trapezoid and
//! cumulative_trapezoid.

use crate::translate::prelude::*;
use crate::translations;

/// Sorted values and indices of `x` along `axis` (TopK breaks ties by the lower index: stable).
fn sort_impl(op: &mut Builder, x: Value, axis: i64, descending: bool) -> OpResult<(Value, Value)> {
    let t = dtype_of(op, x)?;
    let w = cast(op, x, topk_type(t));
    let k = dim_size(op, x, axis);
    if !t.is_float() {
        let [v, i] = op.TopK(w, k).axis(axis).largest(descending as i64).sorted(1).outs::<2>();
        return Ok((cast(op, v, t), i));
    }
    // torch orders NaN above +inf. Sort with NaN as +inf, then stably by "is NaN".
    let nan = op.IsNaN(w);
    let inf = op.scalar(t, f64::INFINITY);
    let key = op.Where(nan, inf, w);
    let [_, i1] = op.TopK(key, k).axis(axis).largest(descending as i64).sorted(1).outs::<2>();
    let nan_i = cast(op, nan, DType::Int32);
    let nan_s = op.GatherElements(nan_i, i1).axis(axis).out();
    let [_, i2] = op.TopK(nan_s, k).axis(axis).largest(descending as i64).sorted(1).outs::<2>();
    let i = op.GatherElements(i1, i2).axis(axis).out();
    let v = op.GatherElements(x, i).axis(axis).out();
    Ok((v, i))
}

/// For a scan along `axis` (length n) of `x` (rank r): `x` unsqueezed to `[.., 1, n, ..]` (the new
/// axis `axis` is the output position i, axis `axis+1` the input position j) and the mask j <= i
/// shaped to broadcast against it.
fn scan_layout(op: &mut Builder, x: Value, axis: i64, r: usize) -> (Value, Value, Value) {
    let ax = op.const_i64s(&[axis]);
    let xu = op.Unsqueeze(x, ax);
    let n = dim_size(op, x, axis);
    let n0 = {
        let s = op.const_i64s(&[]);
        op.Reshape(n, s).out()
    };
    let zero = op.scalar_i64(0);
    let one = op.scalar_i64(1);
    let ar = op.Range(zero, n0, one);
    let col = op.const_i64s(&[-1, 1]);
    let i = op.Reshape(ar, col).out();
    let row = op.const_i64s(&[1, -1]);
    let j = op.Reshape(ar, row).out();
    let mask = op.LessOrEqual(j, i);
    // [n, n] → rank r+1 with i at `axis` and j at `axis + 1`.
    let axes: Vec<i64> = (0..axis).chain(axis + 2..(r + 1) as i64).collect();
    let (mask, j) = if axes.is_empty() {
        (mask, j)
    } else {
        let a = op.const_i64s(&axes);
        (op.Unsqueeze(mask, a), op.Unsqueeze(j, a))
    };
    (xu, mask, j)
}

/// cummax (`is_max`) or cummin values and indices.
fn cum_extreme(op: &mut Builder, x: Value, dim: i64, is_max: bool) -> OpResult<(Value, Value)> {
    let r = rank_of(op, x)?;
    let t = dtype_of(op, x)?;
    if r == 0 {
        let z = op.scalar_i64(0);
        return Ok((x, z));
    }
    let axis = normalize_axis(dim, r)?;
    let w = if t == DType::Bool { cast(op, x, DType::Int32) } else { x };
    let wt = dtype_of(op, w).unwrap_or(t);
    let (xu, mask, j) = scan_layout(op, w, axis, r);
    let fill = op.scalar(wt, if is_max { f64::NEG_INFINITY } else { f64::INFINITY });
    let masked = op.Where(mask, xu, fill);
    let red_axis = op.const_i64s(&[axis + 1]);
    let mut values = if is_max {
        op.ReduceMax(masked, Some(red_axis)).keepdims(0).out()
    } else {
        op.ReduceMin(masked, Some(red_axis)).keepdims(0).out()
    };
    let vu_axes = op.const_i64s(&[axis + 1]);
    let hit = if wt.is_float() {
        // NaN propagates: once seen, the value is NaN and the index the last NaN's.
        let nan = op.IsNaN(xu);
        let nan_m = op.And(nan, mask);
        let nan_i = cast(op, nan_m, DType::Int64);
        let any = op.ReduceMax(nan_i, Some(red_axis)).keepdims(0).out();
        let any = cast(op, any, DType::Bool);
        let nanv = op.scalar(wt, f64::NAN);
        values = op.Where(any, nanv, values);
        let vu = op.Unsqueeze(values, vu_axes);
        let eq = op.Equal(xu, vu);
        let vnan = op.IsNaN(vu);
        let both = op.And(nan, vnan);
        let eq = op.Or(eq, both);
        op.And(eq, mask)
    } else {
        let vu = op.Unsqueeze(values, vu_axes);
        let eq = op.Equal(xu, vu);
        op.And(eq, mask)
    };
    let minus = op.scalar_i64(-1);
    let jj = op.Where(hit, j, minus);
    let idx = op.ReduceMax(jj, Some(red_axis)).keepdims(0).out();
    Ok((cast(op, values, t), idx))
}

/// Number of elements of `seq` (last axis) below `v` (`right`: at most `v`), per value of `v`.
fn count_below(op: &mut Builder, seq: Value, v: Value, right: bool, seq_rank: usize) -> Value {
    let last = op.const_i64s(&[-1]);
    let vu = op.Unsqueeze(v, last);
    let s = if seq_rank > 1 {
        let a = op.const_i64s(&[-2]);
        op.Unsqueeze(seq, a)
    } else {
        seq
    };
    let c = if right { op.LessOrEqual(s, vu) } else { op.Less(s, vu) };
    let c = cast(op, c, DType::Int64);
    op.ReduceSum(c, Some(last)).keepdims(0).out()
}

/// The type torch accumulates a cumulative sum or product of `t` in: float32 for 16-bit floats,
/// int64 for bools and small integers.
fn accumulation_type(t: DType) -> DType {
    match t {
        DType::Float16 | DType::BFloat16 => DType::Float,
        DType::Bool | DType::Int8 | DType::Uint8 | DType::Int16 => DType::Int64,
        other => other,
    }
}

/// `v` when the caller asked for it, else the empty int64 tensor torch returns in its place.
fn asked_for(op: &mut Builder, v: Value, asked: bool) -> Value {
    if asked {
        v
    } else {
        op.constant_tensor(TensorData::from_i64s(vec![0], &[]))
    }
}

/// The trapezoids dx · (y[:-1] + y[1:]) / 2 along `dim` (dx = diff(x); a 1-D x lies along dim) and
/// that axis.
fn trapezoid_areas(op: &mut Builder, y: Value, x: Value, dim: i64) -> OpResult<(Value, i64)> {
    let t = float_result_dtype(op, y)?;
    let ry = rank_of(op, y)?;
    let rx = rank_of(op, x)?;
    let d = normalize_axis(dim, ry)?;
    if d < 0 || d as usize >= ry {
        bail!("cumulative_trapezoid: dim {dim} out of range");
    }
    // torch adds y and subtracts x in their own types (integers wrap), multiplies in the promoted one.
    let own = |v: DType| if v.is_float() || v == DType::Bool { t } else { v };
    let (ky, kx) = (own(dtype_of(op, y)?), own(dtype_of(op, x)?));
    let (yv, xv) = (cast(op, y, ky), cast(op, x, kx));
    let xv = if rx == 1 && ry > 1 {
        let mut shape = vec![1i64; ry];
        shape[d as usize] = -1;
        let s = op.const_i64s(&shape);
        op.Reshape(xv, s).out()
    } else if rx < ry {
        let lead: Vec<i64> = (0..(ry - rx) as i64).collect();
        let a = op.const_i64s(&lead);
        op.Unsqueeze(xv, a)
    } else {
        xv
    };
    let axes = op.const_i64s(&[d]);
    let (z, one, m1, big) =
        (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]), op.const_i64s(&[i64::MAX]));
    let xl = op.Slice(xv, z, m1, Some(axes), None);
    let xr = op.Slice(xv, one, big, Some(axes), None);
    let dx = op.Sub(xr, xl);
    let yl = op.Slice(yv, z, m1, Some(axes), None);
    let yr = op.Slice(yv, one, big, Some(axes), None);
    let s = op.Add(yl, yr);
    let k = promote(kx, ky);
    let (dx, s) = (cast(op, dx, k), cast(op, s, k));
    let p = op.Mul(dx, s);
    let p = cast(op, p, t);
    let two = op.scalar(t, 2.0);
    let p = op.Div(p, two);
    Ok((p, d))
}

/// The trapezoids dx · (y[:-1] + y[1:]) / 2 along `dim` for a constant spacing, and that axis.
fn trapezoid_areas_dx(op: &mut Builder, y: Value, dx: f64, dim: i64) -> OpResult<(Value, i64)> {
    let t = float_result_dtype(op, y)?;
    let r = rank_of(op, y)?;
    let d = normalize_axis(dim, r)?;
    if d < 0 || d as usize >= r {
        bail!("trapezoid: dim {dim} out of range");
    }
    let yv = cast(op, y, t);
    let axes = op.const_i64s(&[d]);
    let (z, one, m1, big) =
        (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]), op.const_i64s(&[i64::MAX]));
    let yl = op.Slice(yv, z, m1, Some(axes), None);
    let yr = op.Slice(yv, one, big, Some(axes), None);
    let s = op.Add(yl, yr);
    let h = op.scalar(t, dx / 2.0);
    Ok((op.Mul(s, h), d))
}

translations! {
    /// sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
    #[target("aten::sort", "aten::sort.stable")]
    fn sort(
        op,
        self_: Tensor,
        // Honoured whatever its value: the sort is TopK, which is stable (ONNX: "Given two equivalent
        // values, ... the element with the lower index will appear first"); an unstable torch sort may
        // order ties either way.
        _stable: Ignored,
        dim: i64 = -1,
        descending: bool = false,
    ) -> OpResult<(Value, Value)> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            let z = op.scalar_i64(0);
            return Ok((self_, z));
        }
        sort_impl(op, self_, normalize_axis(dim, r)?, descending)
    }

    /// argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor
    #[target("aten::argsort", "aten::argsort.stable")]
    fn argsort(
        op,
        self_: Tensor,
        // Honoured whatever its value: the sort is TopK, which is stable (see `sort`).
        _stable: Ignored,
        dim: i64 = -1,
        descending: bool = false,
    ) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            return Ok(op.scalar_i64(0));
        }
        Ok(sort_impl(op, self_, normalize_axis(dim, r)?, descending)?.1)
    }

    /// msort(Tensor self) -> Tensor
    #[target("aten::msort")]
    fn msort(op, self_: Tensor) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        if r == 0 {
            return Ok(self_);
        }
        Ok(sort_impl(op, self_, 0, false)?.0)
    }

    /// kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
    #[target("aten::kthvalue")]
    fn kthvalue(
        op,
        self_: Tensor,
        k: SymInt,
        dim: i64 = -1,
        keepdim: bool = false,
    ) -> OpResult<(Value, Value)> {
        let r = rank_of(op, self_)?;
        let t = dtype_of(op, self_)?;
        if r == 0 {
            let z = op.scalar_i64(0);
            return Ok((self_, z));
        }
        let axis = normalize_axis(dim, r)?;
        let k = sym_value(op, k);
        let k1 = as_1d(op, k);
        let w = cast(op, self_, topk_type(t));
        let [v, i] = op.TopK(w, k1).axis(axis).largest(0).sorted(1).outs::<2>();
        let one = op.scalar_i64(1);
        let last = op.Sub(k, one);
        let at = if keepdim { as_1d(op, last) } else { last };
        let v = op.Gather(v, at).axis(axis).out();
        let i = op.Gather(i, at).axis(axis).out();
        Ok((cast(op, v, t), i))
    }

    /// searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False,
    ///     str? side=None, Tensor? sorter=None) -> Tensor
    #[target("aten::searchsorted.Tensor", "aten::searchsorted.Scalar")]
    fn searchsorted(
        op,
        sorted_sequence: Tensor,
        self_: Operand,
        out_int32: bool = false,
        right: bool = false,
        side: Option<&str> = None,
        sorter: Option<Tensor> = None,
    ) -> OpResult<Value> {
        let sr = rank_of(op, sorted_sequence)?;
        let st = dtype_of(op, sorted_sequence)?;
        let right = match side {
            Some("right") => true,
            Some("left") => false,
            _ => right,
        };
        let seq = match sorter {
            Some(s) => {
                let s = cast(op, s, DType::Int64);
                op.GatherElements(sorted_sequence, s).axis(-1).out()
            }
            None => sorted_sequence,
        };
        let v = match self_ {
            Operand::Tensor(v) | Operand::Scalar(Scalar::Dyn(v)) => v,
            s => operand_value(op, s, st),
        };
        let vt = dtype_of(op, v).unwrap_or(st);
        let ct = promote(st, vt);
        let (seq, v) = (cast(op, seq, ct), cast(op, v, ct));
        let c = count_below(op, seq, v, right, sr);
        Ok(if out_int32 { cast(op, c, DType::Int32) } else { c })
    }

    /// bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor
    #[target("aten::bucketize.Tensor", "aten::bucketize.Scalar")]
    fn bucketize(
        op,
        self_: Operand,
        boundaries: Tensor,
        out_int32: bool = false,
        right: bool = false,
    ) -> OpResult<Value> {
        let bt = dtype_of(op, boundaries)?;
        let v = match self_ {
            Operand::Tensor(v) | Operand::Scalar(Scalar::Dyn(v)) => v,
            s => operand_value(op, s, bt),
        };
        let ct = promote(bt, dtype_of(op, v).unwrap_or(bt));
        let (b, v) = (cast(op, boundaries, ct), cast(op, v, ct));
        // bucketize's `right` is searchsorted's: right=False counts boundaries < v.
        let c = count_below(op, b, v, right, 1);
        Ok(if out_int32 { cast(op, c, DType::Int32) } else { c })
    }

    /// cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::cumsum")]
    fn cumsum(op, self_: Tensor, dim: i64, _dtype: Ignored) -> OpResult<Value> {
        // `dtype` is the node's recorded result type, which this reads.
        let r = rank_of(op, self_)?;
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let work = accumulation_type(t);
        let x = cast(op, self_, work);
        if r == 0 {
            return Ok(cast(op, x, t));
        }
        let axis = op.scalar_i64(normalize_axis(dim, r)?);
        let c = op.CumSum(x, axis).out();
        Ok(cast(op, c, t))
    }

    /// cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
    #[target("aten::cumprod")]
    fn cumprod(op, self_: Tensor, dim: i64, _dtype: Ignored) -> OpResult<Value> {
        // `dtype` is the node's recorded result type, which this reads.
        let r = rank_of(op, self_)?;
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let work = accumulation_type(t);
        let x = cast(op, self_, work);
        if r == 0 {
            return Ok(cast(op, x, t));
        }
        let axis = normalize_axis(dim, r)?;
        // out[i] = Π_{j<=i} x[j]: mask the pairs j > i with 1 and reduce over j.
        let (xu, mask, _) = scan_layout(op, x, axis, r);
        let one = op.scalar(work, 1.0);
        let m = op.Where(mask, xu, one);
        let a = op.const_i64s(&[axis + 1]);
        let p = op.ReduceProd(m, Some(a)).keepdims(0).out();
        Ok(cast(op, p, t))
    }

    /// cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)
    #[target("aten::cummax")]
    fn cummax(op, self_: Tensor, dim: i64) -> OpResult<(Value, Value)> {
        cum_extreme(op, self_, dim, true)
    }

    /// cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)
    #[target("aten::cummin")]
    fn cummin(op, self_: Tensor, dim: i64) -> OpResult<(Value, Value)> {
        cum_extreme(op, self_, dim, false)
    }

    /// logcumsumexp(Tensor self, int dim) -> Tensor
    #[target("aten::logcumsumexp")]
    fn logcumsumexp(op, self_: Tensor, dim: i64) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let x = cast(op, self_, t);
        if r == 0 {
            return Ok(x);
        }
        let axis = normalize_axis(dim, r)?;
        let (xu, mask, _) = scan_layout(op, x, axis, r);
        let ninf = op.scalar(t, f64::NEG_INFINITY);
        let m = op.Where(mask, xu, ninf);
        // log Σ exp, shifted by the running maximum for range.
        let a = op.const_i64s(&[axis + 1]);
        let mx = op.ReduceMax(m, Some(a)).keepdims(1).out();
        let finite = op.IsInf(mx).out();
        let zero = op.scalar(t, 0.0);
        let shift = op.Where(finite, zero, mx);
        let d = op.Sub(m, shift);
        let e = op.Exp(d);
        let s = op.ReduceSum(e, Some(a)).keepdims(1).out();
        let l = op.Log(s);
        let out = op.Add(l, shift);
        Ok(op.Squeeze(out, Some(a)))
    }

    /// cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
    #[target("aten::cumulative_trapezoid.x")]
    fn cumulative_trapezoid(op, y: Tensor, x: Tensor, dim: i64 = -1) -> OpResult<Value> {
        // cumsum(dx · (y[:-1] + y[1:]) / 2) along dim, dx = diff(x) (a 1-D x lies along dim).
        let (p, d) = trapezoid_areas(op, y, x, dim)?;
        let ax = op.scalar_i64(d);
        Ok(op.CumSum(p, ax).out())
    }

    /// cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor
    #[target("aten::cumulative_trapezoid.dx")]
    fn cumulative_trapezoid_dx(op, y: Tensor, dx: f64 = 1.0, dim: i64 = -1) -> OpResult<Value> {
        let (p, d) = trapezoid_areas_dx(op, y, dx, dim)?;
        let ax = op.scalar_i64(d);
        Ok(op.CumSum(p, ax).out())
    }

    /// trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor
    #[target("aten::trapezoid.x", "aten::trapz.x")]
    fn trapezoid(op, y: Tensor, x: Tensor, dim: i64 = -1) -> OpResult<Value> {
        // sum(dx · (y[:-1] + y[1:]) / 2) along dim.
        let (p, d) = trapezoid_areas(op, y, x, dim)?;
        let ax = op.const_i64s(&[d]);
        Ok(op.ReduceSum(p, Some(ax)).keepdims(0).out())
    }

    /// trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor
    #[target("aten::trapezoid.dx", "aten::trapz.dx")]
    fn trapezoid_dx(op, y: Tensor, dx: f64 = 1.0, dim: i64 = -1) -> OpResult<Value> {
        let (p, d) = trapezoid_areas_dx(op, y, dx, dim)?;
        let ax = op.const_i64s(&[d]);
        Ok(op.ReduceSum(p, Some(ax)).keepdims(0).out())
    }

    /// topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
    #[target("aten::topk")]
    fn topk(
        op,
        self_: Tensor,
        k: SymInt,
        dim: i64 = -1,
        largest: bool = true,
        sorted: bool = true,
    ) -> OpResult<(Value, Value)> {
        let r = rank_of(op, self_)?;
        let k = sym_value(op, k);
        let k = as_1d(op, k);
        let x = if r == 0 { as_1d(op, self_) } else { self_ };
        let axis = normalize_axis(dim, r.max(1))?;
        let [values, indices] = op.TopK(x, k).axis(axis).largest(largest as i64).sorted(sorted as i64).outs::<2>();
        if r == 0 {
            let empty = op.const_i64s(&[]);
            let v = op.Reshape(values, empty).out();
            let i = op.Reshape(indices, empty).out();
            return Ok((v, i));
        }
        Ok((values, indices))
    }

    /// isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False,
    ///     bool invert=False) -> Tensor
    #[target("aten::isin.Tensor_Tensor", "aten::isin.Tensor_Scalar", "aten::isin.Scalar_Tensor")]
    fn isin(
        op,
        elements: Option<Operand> = None,
        test_elements: Option<Operand> = None,
        test_element: Option<Scalar> = None,
        element: Option<Scalar> = None,
        // A hint for torch's algorithm; the membership test here does not need it.
        _assume_unique: Ignored,
        invert: bool = false,
    ) -> OpResult<Value> {
        let test = test_elements.or(test_element.map(Operand::Scalar)).ok_or("isin needs test elements")?;
        let e = element.map(Operand::Scalar).or(elements).ok_or("isin needs elements")?;
        let et = operand_dtype(op, e);
        let tt = operand_dtype(op, test);
        let ct = promote(et, tt);
        let ev = operand_value(op, e, ct);
        let tv = operand_value(op, test, ct);
        let m1 = op.const_i64s(&[-1]);
        let tv = op.Reshape(tv, m1).out();
        let eu = op.Unsqueeze(ev, m1);
        let eq = op.Equal(eu, tv);
        let c = cast(op, eq, DType::Int64);
        let n = op.ReduceSum(c, Some(m1)).keepdims(0).out();
        let zero = op.scalar_i64(0);
        Ok(if invert { op.Equal(n, zero) } else { op.Greater(n, zero) })
    }

    /// unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor,
    ///     Tensor, Tensor)
    #[target("aten::unique_consecutive")]
    fn unique_consecutive(
        op,
        self_: Tensor,
        // Inverse and counts not asked for are empty in torch, and so here.
        return_inverse: bool = false,
        return_counts: bool = false,
        dim: Option<i64> = None,
    ) -> OpResult<Vec<Value>> {
        if dim.is_some() {
            bail!("unique_consecutive along a dim is not supported yet");
        }
        let m1 = op.const_i64s(&[-1]);
        let x = op.Reshape(self_, m1).out();
        // A new run starts at 0 and wherever x[i] != x[i-1].
        let (s0, s1, e1, big) =
            (op.const_i64s(&[0]), op.const_i64s(&[1]), op.const_i64s(&[-1]), op.const_i64s(&[i64::MAX]));
        let prev = op.Slice(x, s0, e1, None, None);
        let cur = op.Slice(x, s1, big, None, None);
        let same = op.Equal(cur, prev);
        let diff = op.Not(same);
        let n = op.Shape(x).out();
        let first = op.Min(&[n, s1]);
        let head =
            op.ConstantOfShape(first).value(constant_data(DType::Bool, vec![1], &[1.0])?).out();
        let starts = op.Concat(&[head, diff]).axis(0).out();
        let values = op.Compress(x, starts).axis(0).out();
        let si = cast(op, starts, DType::Int64);
        let zero = op.scalar_i64(0);
        let run = op.CumSum(si, zero).out();
        let one = op.scalar_i64(1);
        let inv = op.Sub(run, one);
        let shape = op.Shape(self_).out();
        let inverse = op.Reshape(inv, shape).out();
        let pos = op.NonZero(starts);
        let pos = op.Reshape(pos, m1).out();
        let ends = op.Concat(&[pos, n]).axis(0).out();
        let hi = op.Slice(ends, s1, big, None, None);
        let counts = op.Sub(hi, pos);
        Ok(vec![values, asked_for(op, inverse, return_inverse), asked_for(op, counts, return_counts)])
    }

    /// _unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor,
    ///     Tensor, Tensor)
    #[target("aten::_unique2")]
    fn unique2(
        op,
        self_: Tensor,
        // torch's CPU kernel sorts whether or not `sorted` is set (sorting beats its hash table),
        // so both give ascending unique values.
        _sorted: Ignored,
        // As in unique_consecutive: empty when not asked for.
        return_inverse: bool = false,
        return_counts: bool = false,
    ) -> OpResult<Vec<Value>> {
        let m1 = op.const_i64s(&[-1]);
        let x = op.Reshape(self_, m1).out();
        let [y, _, inv, counts] = op.Unique(x).sorted(1).outs::<4>();
        let shape = op.Shape(self_).out();
        let inverse = op.Reshape(inv, shape).out();
        Ok(vec![y, asked_for(op, inverse, return_inverse), asked_for(op, counts, return_counts)])
    }

    /// _unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (Tensor, Tensor)
    #[target("aten::_unique")]
    fn unique(
        op,
        self_: Tensor,
        // As in _unique2: torch's CPU kernel sorts either way.
        _sorted: Ignored,
        return_inverse: bool = false,
    ) -> (Value, Value) {
        let m1 = op.const_i64s(&[-1]);
        let x = op.Reshape(self_, m1).out();
        let [y, _, inv, _] = op.Unique(x).sorted(1).outs::<4>();
        let shape = op.Shape(self_).out();
        let inverse = op.Reshape(inv, shape).out();
        (y, asked_for(op, inverse, return_inverse))
    }

    /// unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) ->
    ///     (Tensor, Tensor, Tensor)
    #[target("aten::unique_dim")]
    fn unique_dim(
        op,
        self_: Tensor,
        dim: i64,
        // torch sorts the slices lexicographically whatever `sorted` says, as ONNX Unique does.
        _sorted: Ignored,
        return_inverse: bool = false,
        return_counts: bool = false,
    ) -> OpResult<Vec<Value>> {
        let r = rank_of(op, self_)?;
        let axis = normalize_axis(dim, r)?;
        let [y, _, inv, counts] = op.Unique(self_).axis(axis).sorted(1).outs::<4>();
        Ok(vec![y, asked_for(op, inv, return_inverse), asked_for(op, counts, return_counts)])
    }
}
