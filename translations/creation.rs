//! Factories: zeros / ones / full (and their `_like` forms), arange, scalar_tensor, eye, linspace /
//! logspace, tril / triu indices, one_hot, block_diag, cartesian_prod, combinations.

use crate::translate::prelude::*;
use crate::translations;
use std::f64::consts::PI;

/// A tensor of `shape` filled with `value`, in the node's output type.
fn filled(op: &mut Builder, shape: Value, value: Operand) -> OpResult<Value> {
    let t = op.out_dtype(0).unwrap_or(DType::Float);
    let v = match value {
        Operand::Tensor(v) | Operand::Scalar(Scalar::Dyn(v)) => {
            let v = cast(op, v, t);
            return Ok(op.Expand(v, shape));
        }
        Operand::Scalar(Scalar::Int(i)) => i as f64,
        Operand::Scalar(Scalar::Float(f)) => f,
        Operand::Scalar(Scalar::Bool(b)) => b as i64 as f64,
        Operand::Scalar(Scalar::Complex(..)) => bail!("complex fill values are not supported"),
    };
    let Some(fill) = TensorData::from_f64_as(t, vec![1], &[v]) else {
        bail!("cannot fill a tensor of type {}", t.name())
    };
    Ok(op.ConstantOfShape(shape).value(fill).out())
}

/// Zeros of `torch.float4_e2m1fn_x2` (two 4-bit floats a byte) as a constant: no operator takes
/// float4 below opset 23, so the size must be static. ONNX's shape counts the unpacked elements.
fn float4_zeros(op: &mut Builder, size: &[SymInt]) -> OpResult<Value> {
    let mut dims = Vec::with_capacity(size.len());
    for s in size {
        match s {
            SymInt::Const(n) if *n >= 0 => dims.push(*n),
            _ => bail!(
                "a float4_e2m1fn_x2 tensor of dynamic size cannot be built in ONNX (no operator takes float4 below \
                 opset 23); hint: make its size static"
            ),
        }
    }
    let packed: i64 = dims.iter().product();
    constant_elements(op, "float4 zeros", &dims)?;
    if let Some(last) = dims.last_mut() {
        *last *= 2;
    }
    Ok(op.constant_tensor(TensorData { dtype: DType::Float4E2M1, dims, raw: vec![0u8; packed as usize].into() }))
}

translations! {
    /// zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::zeros", "aten::new_zeros", "aten::empty.memory_format", "aten::new_empty")]
    fn zeros(op, size: Vec<SymInt>) -> OpResult<Value> {
        if op.out_dtype(0) == Some(DType::Float4E2M1) {
            return float4_zeros(op, &size);
        }
        // empty() is uninitialised in torch; zeros are one valid content.
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(0).into())
    }

    /// ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::ones", "aten::new_ones")]
    fn ones(op, size: Vec<SymInt>) -> OpResult<Value> {
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(1).into())
    }

    /// full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::full", "aten::new_full")]
    fn full(op, size: Vec<SymInt>, fill_value: Scalar) -> OpResult<Value> {
        let shape = shape_vec(op, &size);
        filled(op, shape, fill_value.into())
    }

    /// zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::zeros_like", "aten::empty_like")]
    fn zeros_like(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(0).into())
    }

    /// ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::ones_like")]
    fn ones_like(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(1).into())
    }

    /// full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::full_like")]
    fn full_like(op, self_: Tensor, fill_value: Scalar) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, fill_value.into())
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
        let float_bounds = [start, end, step].into_iter().any(|s| scalar_dtype(op, s).is_float());
        if !t.is_float() && float_bounds {
            return integer_arange_of_floats(op, start, end, step, t);
        }
        // Range in the output type; float ranges are computed in float64 for torch's accuracy.
        let work = if t.is_float() { DType::Double } else { DType::Int64 };
        let (s, e, d) = (scalar_value(op, start, work), scalar_value(op, end, work), scalar_value(op, step, work));
        let r = op.Range(s, e, d);
        cast(op, r, t)
    }

    /// copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor
    #[target("aten::copy")]
    fn copy(op, self_: Tensor, src: Tensor, _non_blocking: Ignored) -> OpResult<Value> {
        // non_blocking only concerns host-device transfers.
        let t = dtype_of(op, self_)?;
        let s = cast(op, src, t);
        let shape = op.Shape(self_).out();
        Ok(op.Expand(s, shape))
    }

    /// zero(Tensor self) -> Tensor
    #[target("aten::zero")]
    fn zero(op, self_: Tensor) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, Scalar::Int(0).into())
    }

    /// fill.Scalar(Tensor self, Scalar value) -> Tensor
    #[target("aten::fill.Scalar", "aten::fill.Tensor")]
    fn fill(op, self_: Tensor, value: Operand) -> OpResult<Value> {
        let shape = op.Shape(self_).out();
        filled(op, shape, value)
    }

    /// empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::empty_permuted", "aten::empty_strided", "aten::new_empty_strided")]
    fn empty_permuted(op, size: Vec<SymInt>) -> OpResult<Value> {
        // Uninitialised in torch; zeros are one valid content (as for empty).
        let shape = shape_vec(op, &size);
        filled(op, shape, Scalar::Int(0).into())
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
        let rows = op.Range(zero, nv, one);
        let cols = op.Range(zero, mv, one);
        let col = op.const_i64s(&[-1, 1]);
        let rows = op.Reshape(rows, col).out();
        let eq = op.Equal(rows, cols);
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
    fn linspace(op, start: Operand, end: Operand, steps: Scalar) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let work = match t {
            DType::Float | DType::Double => t,
            _ => DType::Double,
        };
        let v = linspace_values(op, start, end, steps, work)?;
        Ok(cast(op, v, t))
    }

    /// logspace(Scalar start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target(
        "aten::logspace",
        "aten::logspace.Tensor_Tensor",
        "aten::logspace.Tensor_Scalar",
        "aten::logspace.Scalar_Tensor"
    )]
    fn logspace(op, start: Operand, end: Operand, steps: Scalar, base: f64 = 10.0) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Float);
        let work = match t {
            DType::Float | DType::Double => t,
            _ => DType::Double,
        };
        let v = linspace_values(op, start, end, steps, work)?;
        let b = op.scalar(work, base);
        let p = op.Pow(b, v);
        Ok(cast(op, p, t))
    }

    /// tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::tril_indices")]
    fn tril_indices(op, row: i64, col: i64, offset: i64 = 0) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        let c = tri_indices(op, row, col, offset, false)?;
        let c = op.constant_tensor(c);
        Ok(cast(op, c, t))
    }

    /// triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::triu_indices")]
    fn triu_indices(op, row: i64, col: i64, offset: i64 = 0) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        let c = tri_indices(op, row, col, offset, true)?;
        let c = op.constant_tensor(c);
        Ok(cast(op, c, t))
    }

    /// one_hot(Tensor self, int num_classes=-1) -> Tensor
    #[target("aten::one_hot")]
    fn one_hot(op, self_: Tensor, num_classes: Scalar = Scalar::Int(-1)) -> OpResult<Value> {
        let x = cast(op, self_, DType::Int64);
        let depth = if let Scalar::Dyn(v) = num_classes {
            cast(op, v, DType::Int64)
        } else if let Scalar::Int(n @ 0..) = num_classes {
            op.scalar_i64(n)
        } else {
            let m = op.ReduceMax(x, None).keepdims(0).out();
            let one = op.scalar_i64(1);
            op.Add(m, one)
        };
        let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
        let classes = op.Range(zero, depth, one);
        let last = op.const_i64s(&[-1]);
        let xu = op.Unsqueeze(x, last);
        let eq = op.Equal(xu, classes);
        Ok(cast(op, eq, DType::Int64))
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
            let x = op.Expand(x, full);
            cols.push(op.Reshape(x, m1).out());
        }
        Ok(op.Concat(&cols).axis(1).out())
    }

    /// combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor
    #[target("aten::combinations")]
    fn combinations(
        op,
        self_: Tensor,
        r: i64 = 2,
        with_replacement: bool = false,
    ) -> OpResult<Value> {
        // Every index tuple i1 < i2 < ... (≤ with replacement) in lexicographic order, gathered.
        let shape = static_shape(op, self_, "combinations")?;
        if shape.len() != 1 {
            bail!("combinations needs a 1-D input");
        }
        if r < 1 {
            bail!("combinations with r < 1 is not supported");
        }
        let n = shape[0];
        // The recursion below is r deep.
        unroll_count(r, "combinations' r")?;
        // C(n, r) tuples, or C(n + r - 1, r) with replacement: counted before any is built.
        let r_ = r as i128;
        let top = if with_replacement { n as i128 + r_ - 1 } else { n as i128 };
        let count = (0..r_.min(top + 1)).try_fold(1i128, |c, i| c.checked_mul(top - i).map(|c| c / (i + 1)));
        let count = if r_ > top { Some(0) } else { count };
        let c = count.and_then(|c| i64::try_from(c).ok()).unwrap_or(i64::MAX);
        let mut tuples: Vec<i64> = constant_vec(op, "combinations' index", &[c, r])?;
        let mut cur = vec![0i64; r as usize];
        fn rec(pos: usize, start: i64, n: i64, rep: bool, cur: &mut Vec<i64>, out: &mut Vec<i64>) {
            if pos == cur.len() {
                out.extend_from_slice(cur);
                return;
            }
            for i in start..n {
                cur[pos] = i;
                rec(pos + 1, if rep { i } else { i + 1 }, n, rep, cur, out);
            }
        }
        rec(0, 0, n, with_replacement, &mut cur, &mut tuples);
        let c = tuples.len() as i64 / r;
        let idx = op.constant_tensor(TensorData::from_i64s(vec![c, r], &tuples));
        Ok(op.Gather(self_, idx).axis(0).out())
    }

    /// hann_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::hann_window", "aten::hann_window.periodic")]
    fn hann_window(op, window_length: Scalar, periodic: bool = true) -> OpResult<Value> {
        cosine_window(op, window_length, periodic, [0.5, 0.5, 0.0])
    }

    /// hamming_window.periodic_alpha_beta(int window_length, bool periodic, float alpha, float beta, *,
    ///     ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target(
        "aten::hamming_window",
        "aten::hamming_window.periodic",
        "aten::hamming_window.periodic_alpha",
        "aten::hamming_window.periodic_alpha_beta"
    )]
    fn hamming_window(
        op,
        window_length: Scalar,
        periodic: bool = true,
        alpha: f64 = 0.54,
        beta: f64 = 0.46,
    ) -> OpResult<Value> {
        // Not ONNX HammingWindow: its coefficients are 25/46 and 21/46, torch's 0.54 and 0.46.
        cosine_window(op, window_length, periodic, [alpha, beta, 0.0])
    }

    /// blackman_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None,
    ///     Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::blackman_window", "aten::blackman_window.periodic")]
    fn blackman_window(op, window_length: Scalar, periodic: bool = true) -> OpResult<Value> {
        cosine_window(op, window_length, periodic, [0.42, 0.5, 0.08])
    }

    /// bartlett_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None,
    ///     Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::bartlett_window", "aten::bartlett_window.periodic")]
    fn bartlett_window(op, window_length: i64, periodic: bool = true) -> OpResult<Value> {
        window(op, window_length, periodic, |x| 1.0 - (2.0 * x - 1.0).abs())
    }

    /// tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor
    #[target("aten::tensor.float", "aten::tensor.int", "aten::tensor.bool")]
    fn tensor(op, t: Scalar) -> OpResult<Value> {
        let dtype = op.out_dtype(0).unwrap_or_else(|| scalar_dtype(op, t));
        Ok(scalar_value(op, t, dtype))
    }
}

/// A window of `length` samples `f(n / (N - 1))`, where N is `length + 1` when `periodic` (torch
/// computes one sample more and drops it) and `length` otherwise; torch's `[1]` for length 1.
/// The samples are constants: `window_length` is an int, never symbolic.
fn window(op: &mut Builder, length: i64, periodic: bool, f: impl Fn(f64) -> f64) -> OpResult<Value> {
    let t = op.out_dtype(0).unwrap_or(DType::Float);
    if length < 0 {
        bail!("window_length must be non-negative, got {length}");
    }
    let n = if periodic { length + 1 } else { length };
    constant_elements(op, "the window", &[length])?;
    let values: Vec<f64> = match length {
        0 => vec![],
        1 => vec![1.0],
        _ => (0..length).map(|i| f(i as f64 / (n - 1) as f64)).collect(),
    };
    Ok(op.constant_tensor(constant_data(t, vec![length], &values)?))
}

/// The window `a0 - a1·cos(2πx) + a2·cos(4πx)` at `x = i / (n - 1)` (hann, hamming, blackman):
/// computed when its length is known, else in the graph from the length's value (torch's one
/// element is 1).
fn cosine_window(op: &mut Builder, length: Scalar, periodic: bool, [a0, a1, a2]: [f64; 3]) -> OpResult<Value> {
    let length = match length {
        Scalar::Int(n) => {
            return window(op, n, periodic, |x| a0 - a1 * (2.0 * PI * x).cos() + a2 * (4.0 * PI * x).cos());
        }
        Scalar::Dyn(v) => cast(op, v, DType::Int64),
        other => bail!("window_length must be an int, got {other:?}"),
    };
    let t = op.out_dtype(0).unwrap_or(DType::Float);
    let d = |op: &mut Builder, v: f64| op.scalar(DType::Double, v);
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let i = op.Range(zero, length, one);
    let i = cast(op, i, DType::Double);
    let n = cast(op, length, DType::Double);
    let last = if periodic {
        n
    } else {
        let one = d(op, 1.0);
        op.Sub(n, one)
    };
    // A window of one element divides by zero below; its value is the `Where`'s other branch.
    let x = op.Div(i, last);
    let two_pi = d(op, 2.0 * PI);
    let angle = op.Mul(x, two_pi);
    let (c1, k1, k0) = (op.Cos(angle), d(op, a1), d(op, a0));
    let c1 = op.Mul(c1, k1);
    let mut w = op.Sub(k0, c1);
    if a2 != 0.0 {
        let two = d(op, 2.0);
        let angle2 = op.Mul(angle, two);
        let (c2, k2) = (op.Cos(angle2), d(op, a2));
        let c2 = op.Mul(c2, k2);
        w = op.Add(w, c2);
    }
    let single = op.Equal(length, one);
    let unit = d(op, 1.0);
    let w = op.Where(single, unit, w);
    Ok(cast(op, w, t))
}

/// An integer `arange` whose bounds or step are floats, as torch computes it: `ceil((end - start) /
/// step)` elements, counted in float64, each `trunc(start) + i * trunc(step)`. Casting the bounds
/// first would lose the fraction's element (`arange(8.5)` has 9).
fn integer_arange_of_floats(op: &mut Builder, start: Scalar, end: Scalar, step: Scalar, t: DType) -> Value {
    let (s, e, d) = (
        scalar_value(op, start, DType::Double),
        scalar_value(op, end, DType::Double),
        scalar_value(op, step, DType::Double),
    );
    let span = op.Sub(e, s);
    let count = op.Div(span, d);
    let count = op.Ceil(count);
    let count = cast(op, count, DType::Int64);
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let i = op.Range(zero, count, one);
    let (s, d) = (cast(op, s, DType::Int64), cast(op, d, DType::Int64));
    let offsets = op.Mul(i, d);
    let r = op.Add(s, offsets);
    cast(op, r, t)
}

/// A 1-D linspace of `steps` points in `work` (torch's two-sided formula), before the final cast.
fn linspace_values(op: &mut Builder, start: Operand, end: Operand, steps: Scalar, work: DType) -> OpResult<Value> {
    let (s, e) = (operand_value(op, start, work), operand_value(op, end, work));
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    // The count, the step's divisor (steps - 1, at least 1), the last index and where the values
    // switch to counting back from `end` (steps / 2, and 1 for a single step, which is `start`):
    // numbers when `steps` is known, else computed from its value.
    let (n, denom, last, half) = match steps {
        Scalar::Int(steps) => (
            op.scalar_i64(steps),
            op.scalar(work, (steps - 1).max(1) as f64),
            op.scalar(work, (steps - 1) as f64),
            op.scalar_i64(if steps == 1 { 1 } else { steps / 2 }),
        ),
        Scalar::Dyn(v) => {
            let n = cast(op, v, DType::Int64);
            let before = op.Sub(n, one);
            let last = cast(op, before, work);
            let denom = op.Max(&[before, one]);
            let denom = cast(op, denom, work);
            let two = op.scalar_i64(2);
            let half = op.Div(n, two);
            let half = op.Max(&[half, one]);
            (n, denom, last, half)
        }
        other => bail!("steps must be an int, got {other:?}"),
    };
    let i = op.Range(zero, n, one);
    let fi = cast(op, i, work);
    let span = op.Sub(e, s);
    let step = op.Div(span, denom);
    // i < steps/2: start + i·step; else end - (steps-1-i)·step.
    let lo = op.Mul(fi, step);
    let lo = op.Add(s, lo);
    let back = op.Sub(last, fi);
    let hi = op.Mul(back, step);
    let hi = op.Sub(e, hi);
    let first = op.Less(i, half);
    Ok(op.Where(first, lo, hi))
}

/// Indices of the lower (`upper` = false) or upper triangle of a row × col matrix, as [2, N]. The
/// size is known before anything is built, and only the rows that hold indices are visited: the
/// work is that of the indices written, which the export's memory bound limits.
fn tri_indices(op: &Builder, row: i64, col: i64, offset: i64, upper: bool) -> OpResult<TensorData> {
    let what = if upper { "triu_indices" } else { "tril_indices" };
    let (row, col, offset) = (row.max(0) as i128, col.max(0) as i128, offset as i128);
    // Row i keeps the columns j with j - i <= offset (lower) or j - i >= offset (upper).
    let span = |i: i128| if upper { ((i + offset).clamp(0, col), col) } else { (0, (i + offset + 1).clamp(0, col)) };
    let (first, end) = if upper { (0, row.min(col - offset)) } else { ((-offset).max(0), row) };
    let rows = (end - first).max(0);
    // Each of these rows holds at least one index.
    constant_elements(op, &format!("{what}' index"), &[2, i64::try_from(rows).unwrap_or(i64::MAX)])?;
    let n: i128 = (first..first + rows).map(|i| span(i).1 - span(i).0).sum();
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    let mut out: Vec<i64> = constant_vec(op, &format!("{what}' index"), &[2, n])?;
    for i in first..first + rows {
        let (a, b) = span(i);
        out.extend(std::iter::repeat_n(i as i64, (b - a) as usize));
    }
    for i in first..first + rows {
        let (a, b) = span(i);
        out.extend((a..b).map(|j| j as i64));
    }
    Ok(TensorData::from_i64s(vec![2, n], &out))
}
