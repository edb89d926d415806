//! Factories: zeros / ones / full (and their `_like` forms), arange, scalar_tensor.

use crate::translate::prelude::*;
use crate::translations;

/// A tensor of `shape` filled with `value`, in the node's output type.
fn filled(op: &mut Builder, shape: Value, value: Scalar) -> OpResult<Value> {
    let t = op.out_dtype(0).unwrap_or(DType::Float);
    let v = match value {
        Scalar::Dyn(v) => {
            let v = cast(op, v, t);
            return Ok(op.Expand(v, shape).out());
        }
        Scalar::Int(i) => i as f64,
        Scalar::Float(f) => f,
        Scalar::Bool(b) => b as i64 as f64,
        Scalar::Complex(..) => bail!("complex fill values are not supported"),
    };
    let Some(fill) = TensorData::from_f64_as(t, vec![1], &[v]) else {
        bail!("cannot fill a tensor of type {}", t.name())
    };
    Ok(op.ConstantOfShape(shape).value(fill).out())
}

translations! {
    /// zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::zeros", "aten::new_zeros", "aten::empty.memory_format", "aten::new_empty")]
    fn zeros(op, size: Vec<SymInt>) -> OpResult<Value> {
        // empty() is uninitialised in torch; zeros are one valid content.
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(0))
    }

    /// ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::ones", "aten::new_ones")]
    fn ones(op, size: Vec<SymInt>) -> OpResult<Value> {
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(1))
    }

    /// full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::full", "aten::new_full")]
    fn full(op, size: Vec<SymInt>, fill_value: Scalar) -> OpResult<Value> {
        let shape = shape_vec(op, &size);
        filled(op, shape, fill_value)
    }

    /// zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::zeros_like", "aten::empty_like")]
    fn zeros_like(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(0))
    }

    /// ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::ones_like")]
    fn ones_like(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(1))
    }

    /// full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::full_like")]
    fn full_like(op, self_: Tensor, fill_value: Scalar) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, fill_value)
    }

    /// scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::scalar_tensor")]
    fn scalar_tensor(op, s: Scalar) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        scalar_value(op, s, t)
    }

    /// arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::arange.start_step", "aten::arange.start", "aten::arange")]
    fn arange(
        op,
        start: Scalar = Scalar::Int(0),
        end: Scalar,
        step: Scalar = Scalar::Int(1),
    ) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        // Range in the output type; float ranges are computed in float64 for torch's accuracy.
        let work = if t.is_float() { DType::Double } else { DType::Int64 };
        let (s, e, d) = (scalar_value(op, start, work), scalar_value(op, end, work), scalar_value(op, step, work));
        let r = op.Range(s, e, d).out();
        cast(op, r, t)
    }

    /// copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor
    #[target("aten::copy")]
    fn copy(op, self_: Tensor, src: Tensor, non_blocking: Ignored) -> OpResult<Value> {
        let t = dtype_of(op, self_)?;
        let s = cast(op, src, t);
        let shape = op.Shape(self_).out();
        Ok(op.Expand(s, shape).out())
    }

    /// zero(Tensor self) -> Tensor
    #[target("aten::zero")]
    fn zero(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(0))
    }

    /// fill.Scalar(Tensor self, Scalar value) -> Tensor
    #[target("aten::fill.Scalar", "aten::fill.Tensor")]
    fn fill(op, self_: Tensor, value: Scalar) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, value)
    }

    /// empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::empty_permuted", "aten::empty_strided", "aten::new_empty_strided")]
    fn empty_permuted(op, size: Vec<SymInt>) -> OpResult<Value> {
        // Uninitialised in torch; zeros are one valid content (as for empty).
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(0))
    }

    /// eye.m(SymInt n, SymInt m, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::eye", "aten::eye.m")]
    fn eye(op, n: SymInt, m: Option<SymInt> = None) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
        let nv = sym_value(op, n);
        let mv = match m {
            Some(m) => sym_value(op, m),
            None => nv,
        };
        let rows = op.Range(zero, nv, one).out();
        let cols = op.Range(zero, mv, one).out();
        let col = op.const_i64s(&[-1, 1]);
        let rows = op.Reshape(rows, col).out();
        let eq = op.Equal(rows, cols).out();
        cast(op, eq, t)
    }

    /// linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target(
        "aten::linspace",
        "aten::linspace.Tensor_Tensor",
        "aten::linspace.Tensor_Scalar",
        "aten::linspace.Scalar_Tensor"
    )]
    fn linspace(op, start: Scalar, end: Scalar, steps: i64) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let work = match t {
            DType::Float | DType::Double => t,
            _ => DType::Double,
        };
        let v = linspace_values(op, start, end, steps, work);
        cast(op, v, t)
    }

    /// logspace(Scalar start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target(
        "aten::logspace",
        "aten::logspace.Tensor_Tensor",
        "aten::logspace.Tensor_Scalar",
        "aten::logspace.Scalar_Tensor"
    )]
    fn logspace(op, start: Scalar, end: Scalar, steps: i64, base: f64 = 10.0) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let work = match t {
            DType::Float | DType::Double => t,
            _ => DType::Double,
        };
        let v = linspace_values(op, start, end, steps, work);
        let b = op.scalar(work, base);
        let p = op.Pow(b, v).out();
        cast(op, p, t)
    }

    /// tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::tril_indices")]
    fn tril_indices(op, row: i64, col: i64, offset: i64 = 0) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        let c = op.constant_tensor(tri_indices(row, col, offset, false));
        cast(op, c, t)
    }

    /// triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::triu_indices")]
    fn triu_indices(op, row: i64, col: i64, offset: i64 = 0) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        let c = op.constant_tensor(tri_indices(row, col, offset, true));
        cast(op, c, t)
    }

    /// one_hot(Tensor self, int num_classes=-1) -> Tensor
    #[target("aten::one_hot")]
    fn one_hot(op, self_: Tensor, num_classes: i64 = -1) -> OpResult<Value> {
        let x = cast(op, self_, DType::Int64);
        let depth = if num_classes >= 0 {
            op.scalar_i64(num_classes)
        } else {
            let m = op.ReduceMax(x, None).keepdims(0).out();
            let one = op.scalar_i64(1);
            op.Add(m, one).out()
        };
        let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
        let classes = op.Range(zero, depth, one).out();
        let last = op.const_i64s(&[-1]);
        let xu = op.Unsqueeze(x, last).out();
        let eq = op.Equal(xu, classes).out();
        Ok(cast(op, eq, DType::Int64))
    }

    /// repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor
    #[target("aten::repeat_interleave.self_int")]
    fn repeat_interleave(
        op,
        self_: Tensor,
        repeats: SymInt,
        dim: Option<i64> = None,
        output_size: Ignored,
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
                    (self_, normalize_axis(d, r), r)
                }
            }
        };
        // [.., n, 1, ..] tiled to [.., n, repeats, ..], then the two axes merged.
        let a = op.const_i64s(&[axis + 1]);
        let xu = op.Unsqueeze(x, a).out();
        let mut reps = vec![SymInt::Const(1); r + 1];
        reps[axis as usize + 1] = repeats;
        let reps = shape_vec(op, &reps);
        let tiled = op.Tile(xu, reps).out();
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

    /// outer(Tensor self, Tensor vec2) -> Tensor
    #[target("aten::outer", "aten::ger")]
    fn outer(op, self_: Tensor, vec2: Tensor) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let (a, b) = (cast(op, self_, t), cast(op, vec2, t));
        let col = op.const_i64s(&[-1, 1]);
        let a = op.Reshape(a, col).out();
        Ok(op.Mul(a, b).out())
    }

    /// kron(Tensor self, Tensor other) -> Tensor
    #[target("aten::kron")]
    fn kron(op, self_: Tensor, other: Tensor) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let (mut sa, mut sb) = (static_shape(op, self_, "kron")?, static_shape(op, other, "kron")?);
        let r = sa.len().max(sb.len());
        while sa.len() < r {
            sa.insert(0, 1);
        }
        while sb.len() < r {
            sb.insert(0, 1);
        }
        // a as [a0, 1, a1, 1, ...], b as [1, b0, 1, b1, ...]; the product merges pairwise.
        let ia: Vec<i64> = sa.iter().flat_map(|&d| [d, 1]).collect();
        let ib: Vec<i64> = sb.iter().flat_map(|&d| [1, d]).collect();
        let out: Vec<i64> = sa.iter().zip(&sb).map(|(a, b)| a * b).collect();
        let (a, b) = (cast(op, self_, t), cast(op, other, t));
        let (ia, ib) = (op.const_i64s(&ia), op.const_i64s(&ib));
        let a = op.Reshape(a, ia).out();
        let b = op.Reshape(b, ib).out();
        let p = op.Mul(a, b).out();
        let out = op.const_i64s(&out);
        Ok(op.Reshape(p, out).out())
    }

    /// tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor
    #[target("aten::tensordot")]
    fn tensordot(op, self_: Tensor, other: Tensor, dims_self: Vec<i64>, dims_other: Vec<i64>) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let (mut sa, mut sb) = (static_shape(op, self_, "tensordot")?, static_shape(op, other, "tensordot")?);
        let (ra, rb) = (sa.len(), sb.len());
        let ca: Vec<i64> = dims_self.iter().map(|&d| normalize_axis(d, ra)).collect();
        let cb: Vec<i64> = dims_other.iter().map(|&d| normalize_axis(d, rb)).collect();
        if ca.len() != cb.len() {
            bail!("tensordot: both sides need as many contracted dims");
        }
        let (mut a, mut b) = (cast(op, self_, t), cast(op, other, t));
        // Like torch: a contracted dim of size 1 on one side sums the other side's dim first.
        for (&da, &db) in ca.iter().zip(&cb) {
            let (x, y) = (sa[da as usize], sb[db as usize]);
            if x == y {
                continue;
            }
            if x == 1 {
                let ax = op.const_i64s(&[db]);
                b = op.ReduceSum(b, Some(ax)).keepdims(1).out();
                sb[db as usize] = 1;
            } else if y == 1 {
                let ax = op.const_i64s(&[da]);
                a = op.ReduceSum(a, Some(ax)).keepdims(1).out();
                sa[da as usize] = 1;
            } else {
                bail!("tensordot: contracted dims of sizes {x} and {y}");
            }
        }
        let fa: Vec<i64> = (0..ra as i64).filter(|d| !ca.contains(d)).collect();
        let fb: Vec<i64> = (0..rb as i64).filter(|d| !cb.contains(d)).collect();
        let k: i64 = ca.iter().map(|&d| sa[d as usize]).product();
        let m: i64 = fa.iter().map(|&d| sa[d as usize]).product();
        let n: i64 = fb.iter().map(|&d| sb[d as usize]).product();
        let pa: Vec<i64> = fa.iter().chain(&ca).copied().collect();
        let pb: Vec<i64> = cb.iter().chain(&fb).copied().collect();
        let a = op.Transpose(a).perm(&pa).out();
        let b = op.Transpose(b).perm(&pb).out();
        let (s2a, s2b) = (op.const_i64s(&[m, k]), op.const_i64s(&[k, n]));
        let a = op.Reshape(a, s2a).out();
        let b = op.Reshape(b, s2b).out();
        let p = op.MatMul(a, b).out();
        let out: Vec<i64> = fa.iter().map(|&d| sa[d as usize]).chain(fb.iter().map(|&d| sb[d as usize])).collect();
        let out = op.const_i64s(&out);
        Ok(op.Reshape(p, out).out())
    }

    /// sum_to_size(Tensor self, SymInt[] size) -> Tensor
    #[target("aten::sum_to_size")]
    fn sum_to_size(op, self_: Tensor, size: Vec<SymInt>) -> OpResult<Value> {
        let r = rank_of(op, self_)?;
        let shape = op.shape(self_).map(|s| s.to_vec()).ok_or("sum_to_size needs the input shape")?;
        if size.len() > r {
            bail!("sum_to_size to a larger rank");
        }
        let lead = r - size.len();
        let mut axes: Vec<i64> = (0..lead as i64).collect();
        for (i, s) in size.iter().enumerate() {
            if *s == SymInt::Const(1) && shape[lead + i] != Dim::Fixed(1) {
                axes.push((lead + i) as i64);
            }
        }
        if axes.is_empty() {
            return Ok(self_);
        }
        let a = op.const_i64s(&axes);
        let s = op.ReduceSum(self_, Some(a)).keepdims(1).out();
        if lead == 0 {
            return Ok(s);
        }
        let l: Vec<i64> = (0..lead as i64).collect();
        let l = op.const_i64s(&l);
        Ok(op.Squeeze(s, Some(l)).out())
    }

    /// isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False,
    ///     bool invert=False) -> Tensor
    #[target("aten::isin.Tensor_Tensor", "aten::isin.Tensor_Scalar", "aten::isin.Scalar_Tensor")]
    fn isin(
        op,
        elements: Option<Scalar> = None,
        test_elements: Option<Scalar> = None,
        test_element: Option<Scalar> = None,
        element: Option<Scalar> = None,
        assume_unique: bool = false,
        invert: bool = false,
    ) -> OpResult<Value> {
        let test = test_elements.or(test_element).ok_or("isin needs test elements")?;
        let e = element.or(elements).ok_or("isin needs elements")?;
        let et = scalar_dtype(op, e);
        let tt = scalar_dtype(op, test);
        let ct = promote(et, tt);
        let ev = scalar_value(op, e, ct);
        let tv = scalar_value(op, test, ct);
        let m1 = op.const_i64s(&[-1]);
        let tv = op.Reshape(tv, m1).out();
        let eu = op.Unsqueeze(ev, m1).out();
        let eq = op.Equal(eu, tv).out();
        let c = cast(op, eq, DType::Int64);
        let n = op.ReduceSum(c, Some(m1)).keepdims(0).out();
        let zero = op.scalar_i64(0);
        Ok(if invert { op.Equal(n, zero).out() } else { op.Greater(n, zero).out() })
    }

    /// unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor,
    ///     Tensor, Tensor)
    #[target("aten::unique_consecutive")]
    fn unique_consecutive(
        op,
        self_: Tensor,
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
        let prev = op.Slice(x, s0, e1, None, None).out();
        let cur = op.Slice(x, s1, big, None, None).out();
        let same = op.Equal(cur, prev).out();
        let diff = op.Not(same).out();
        let n = op.Shape(x).out();
        let first = op.Min(&[n, s1]).out();
        let head =
            op.ConstantOfShape(first).value(TensorData::from_f64_as(DType::Bool, vec![1], &[1.0]).ok_or("bool")?).out();
        let starts = op.Concat(&[head, diff]).axis(0).out();
        let values = op.Compress(x, starts).axis(0).out();
        let si = cast(op, starts, DType::Int64);
        let zero = op.scalar_i64(0);
        let run = op.CumSum(si, zero).out();
        let one = op.scalar_i64(1);
        let inv = op.Sub(run, one).out();
        let shape = op.Shape(self_).out();
        let inverse = op.Reshape(inv, shape).out();
        let pos = op.NonZero(starts).out();
        let pos = op.Reshape(pos, m1).out();
        let ends = op.Concat(&[pos, n]).axis(0).out();
        let hi = op.Slice(ends, s1, big, None, None).out();
        let counts = op.Sub(hi, pos).out();
        Ok(vec![values, inverse, counts])
    }

    /// _unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor,
    ///     Tensor, Tensor)
    #[target("aten::_unique2")]
    fn unique2(
        op,
        self_: Tensor,
        sorted: bool = true,
        return_inverse: bool = false,
        return_counts: bool = false,
    ) -> OpResult<Vec<Value>> {
        // torch's CPU kernel sorts whether or not `sorted` is set (sorting beats its hash table),
        // so both give ascending unique values.
        let _ = sorted;
        let m1 = op.const_i64s(&[-1]);
        let x = op.Reshape(self_, m1).out();
        let [y, _, inv, counts] = op.Unique(x).sorted(1).outs::<4>();
        let shape = op.Shape(self_).out();
        let inverse = op.Reshape(inv, shape).out();
        Ok(vec![y, inverse, counts])
    }

    /// block_diag(Tensor[] tensors) -> Tensor
    #[target("aten::block_diag")]
    fn block_diag(op, tensors: Vec<Tensor>) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let mut mats = Vec::new();
        for &x in &tensors {
            let s = static_shape(op, x, "block_diag")?;
            let (r, c) = match s.as_slice() {
                [] => (1, 1),
                [n] => (1, *n),
                [a, b] => (*a, *b),
                _ => bail!("block_diag expects tensors of rank <= 2"),
            };
            let shape = op.const_i64s(&[r, c]);
            let x = cast(op, x, t);
            mats.push((op.Reshape(x, shape).out(), c));
        }
        let total: i64 = mats.iter().map(|(_, c)| c).sum();
        let zero = op.scalar(t, 0.0);
        let mut left = 0;
        let mut rows = Vec::new();
        for (m, c) in mats {
            let pads = op.const_i64s(&[left, total - left - c]);
            let axes = op.const_i64s(&[1]);
            rows.push(op.Pad(m, pads, Some(zero), Some(axes)).out());
            left += c;
        }
        if rows.is_empty() {
            bail!("block_diag of no tensors");
        }
        Ok(if rows.len() == 1 { rows[0] } else { op.Concat(&rows).axis(0).out() })
    }

    /// cartesian_prod(Tensor[] tensors) -> Tensor
    #[target("aten::cartesian_prod")]
    fn cartesian_prod(op, tensors: Vec<Tensor>) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let k = tensors.len();
        if k == 1 {
            return Ok(tensors[0]);
        }
        // meshgrid(indexing="ij"), flattened and stacked as columns.
        let mut sizes = Vec::new();
        for &x in &tensors {
            sizes.push(op.Shape(x).out());
        }
        let full = op.Concat(&sizes).axis(0).out();
        let m1 = op.const_i64s(&[-1, 1]);
        let mut cols = Vec::new();
        for (i, &x) in tensors.iter().enumerate() {
            let mut shape = vec![1i64; k];
            shape[i] = -1;
            let shape = op.const_i64s(&shape);
            let x = cast(op, x, t);
            let x = op.Reshape(x, shape).out();
            let x = op.Expand(x, full).out();
            cols.push(op.Reshape(x, m1).out());
        }
        Ok(op.Concat(&cols).axis(1).out())
    }
}

/// A 1-D linspace of `steps` points in `work` (torch's two-sided formula), before the final cast.
fn linspace_values(op: &mut Builder, start: Scalar, end: Scalar, steps: i64, work: DType) -> Value {
    let (s, e) = (scalar_value(op, start, work), scalar_value(op, end, work));
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let n = op.scalar_i64(steps);
    let i = op.Range(zero, n, one).out();
    let fi = cast(op, i, work);
    let denom = op.scalar(work, (steps - 1).max(1) as f64);
    let span = op.Sub(e, s).out();
    let step = op.Div(span, denom).out();
    // i < steps/2: start + i·step; else end - (steps-1-i)·step.
    let lo = op.Mul(fi, step).out();
    let lo = op.Add(s, lo).out();
    let last = op.scalar(work, (steps - 1) as f64);
    let back = op.Sub(last, fi).out();
    let hi = op.Mul(back, step).out();
    let hi = op.Sub(e, hi).out();
    let half = op.scalar_i64(steps / 2);
    let first = op.Less(i, half).out();
    op.Where(first, lo, hi).out()
}

/// Indices of the lower (`upper` = false) or upper triangle of a row × col matrix, as [2, N].
fn tri_indices(row: i64, col: i64, offset: i64, upper: bool) -> TensorData {
    let (mut rs, mut cs) = (Vec::new(), Vec::new());
    for i in 0..row.max(0) {
        for j in 0..col.max(0) {
            let keep = if upper { j - i >= offset } else { j - i <= offset };
            if keep {
                rs.push(i);
                cs.push(j);
            }
        }
    }
    let n = rs.len() as i64;
    rs.extend(cs);
    TensorData::from_i64s(vec![2, n], &rs)
}

/// Static shape of `x`, or an error naming `what`.
fn static_shape(op: &Builder, x: Value, what: &str) -> OpResult<Vec<i64>> {
    let Some(s) = op.shape(x) else { bail!("{what} needs a known shape") };
    s.iter()
        .map(|d| match d {
            Dim::Fixed(n) => Ok(*n),
            _ => Err(OpError::new(format!("{what} needs static shapes"))),
        })
        .collect()
}
