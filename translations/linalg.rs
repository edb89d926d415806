//! Linear algebra: matrix, batched and vector products (mm, matmul, addmm, baddbmm, outer, kron,
//! tensordot, multi_dot, inner, _grouped_mm), trace, cross and dot products, distances between
//! vectors (pairwise_distance, pdist, cdist, cosine_similarity). Decompositions and solvers are in
//! `numerics/decompositions/`.

use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::norms::{pairwise, pnorm};

/// A Scalar's number when the program fixes it (a SymInt or SymFloat is known at run time only).
fn number(s: Scalar) -> Option<f64> {
    match s {
        Scalar::Int(i) => Some(i as f64),
        Scalar::Float(f) => Some(f),
        Scalar::Bool(b) => Some(f64::from(u8::from(b))),
        Scalar::Complex(..) | Scalar::Dyn(_) => None,
    }
}

/// `beta·input + alpha·product` with torch's rule that `input` is ignored when `beta` is 0.
/// `beta` and `alpha` may be symbolic (a SymFloat computed from sizes): then they are values, and
/// the rule is a `Where` on `beta == 0`.
fn scaled_sum(op: &mut Builder, input: Value, product: Value, beta: Scalar, alpha: Scalar, t: DType) -> Value {
    let input = cast(op, input, t);
    let p = if number(alpha) == Some(1.0) {
        product
    } else {
        let a = scalar_value(op, alpha, t);
        op.Mul(product, a)
    };
    if number(beta) == Some(0.0) {
        // torch never reads `input` then (NaN and inf in it do not propagate), but still broadcasts.
        let z = op.scalar(t, 0.0);
        let zi = op.Mul(input, z);
        let shape = op.Shape(zi).out();
        let zeros = op.Expand(z, shape);
        return op.Add(p, zeros);
    }
    let c = match number(beta) {
        Some(1.0) => input,
        Some(_) => {
            let b = scalar_value(op, beta, t);
            op.Mul(input, b)
        }
        // Known at run time only: the same rule, as a choice.
        None => {
            let b = scalar_value(op, beta, t);
            let scaled = op.Mul(input, b);
            let zero = op.scalar(t, 0.0);
            let ignored = op.Equal(b, zero);
            op.Where(ignored, zero, scaled)
        }
    };
    op.Add(c, p)
}

/// A size: a number, or a 1-D int64 of one element computed from a shape.
#[derive(Clone, Copy)]
enum Size {
    Fixed(i64),
    Computed(Value),
}

/// The size of `x` along `axis`, whose shape the caller tracks as `shape`.
fn size_of(op: &mut Builder, x: Value, shape: &[Dim], axis: i64) -> Size {
    match shape[axis as usize] {
        Dim::Fixed(n) => Size::Fixed(n),
        Dim::Param(_) => Size::Computed(dim_size(op, x, axis)),
    }
}

/// The product of `x`'s sizes along `axes`: a number when they are static.
fn size_product(op: &mut Builder, x: Value, shape: &[Dim], axes: &[i64]) -> Size {
    let mut fixed = 1i64;
    let mut computed: Option<Value> = None;
    for &d in axes {
        match size_of(op, x, shape, d) {
            Size::Fixed(n) => fixed = fixed.saturating_mul(n),
            Size::Computed(v) => computed = Some(computed.map_or(v, |c| op.Mul(c, v))),
        }
    }
    match computed {
        None => Size::Fixed(fixed),
        Some(c) if fixed == 1 => Size::Computed(c),
        Some(c) => {
            let f = op.const_i64s(&[fixed]);
            Size::Computed(op.Mul(c, f))
        }
    }
}

/// A shape vector of `sizes`: a constant when every size is a number.
fn sizes_vector(op: &mut Builder, sizes: &[Size]) -> Value {
    if let Some(fixed) = sizes
        .iter()
        .map(|s| match s {
            Size::Fixed(n) => Some(*n),
            Size::Computed(_) => None,
        })
        .collect::<Option<Vec<i64>>>()
    {
        return op.const_i64s(&fixed);
    }
    let parts: Vec<Value> = sizes
        .iter()
        .map(|s| match *s {
            Size::Fixed(n) => op.const_i64s(&[n]),
            Size::Computed(v) => v,
        })
        .collect();
    op.Concat(&parts).axis(0).out()
}

/// The cross product of 3-vectors along `dim` (torch's `linalg_cross`, broadcasting).
fn cross_along(op: &mut Builder, self_: Value, other: Value, dim: i64) -> OpResult<Value> {
    let r = rank_of(op, self_)?.max(rank_of(op, other)?);
    let axis = normalize_axis(dim, r)?;
    let t = result_dtype(op, self_)?;
    let a = cast(op, self_, t);
    let b = cast(op, other, t);
    let ai: Vec<Value> = (0..3).map(|i| slice_along(op, a, axis, i, i + 1)).collect();
    let bi: Vec<Value> = (0..3).map(|i| slice_along(op, b, axis, i, i + 1)).collect();
    let mut parts = Vec::new();
    for (i, j) in [(1, 2), (2, 0), (0, 1)] {
        let p = op.Mul(ai[i], bi[j]);
        let q = op.Mul(ai[j], bi[i]);
        parts.push(op.Sub(p, q));
    }
    Ok(op.Concat(&parts).axis(axis).out())
}

/// The number of groups of a grouped product, when the program fixes it (`dims` are the sizes
/// that count the groups: the stacked operand's first and the length of `offs`).
fn static_groups(op: &Builder, dims: &[(Value, usize)]) -> Option<usize> {
    dims.iter().find_map(|&(v, axis)| match op.shape(v)?.get(axis)? {
        Dim::Fixed(g) if *g >= 1 => usize::try_from(*g).ok(),
        _ => None,
    })
}

/// Each group's `[start, end)` along a jagged dim whose groups end at `offs`, as 1-element int64
/// tensors (the first group starts at 0).
fn group_bounds(op: &mut Builder, offs: Value, groups: usize) -> Vec<(Value, Value)> {
    let ends = cast(op, offs, DType::Int64);
    let mut start = op.const_i64s(&[0]);
    (0..groups as i64)
        .map(|g| {
            let end = slice_along(op, ends, 0, g, g + 1);
            let bounds = (start, end);
            start = end;
            bounds
        })
        .collect()
}

/// Group `g` of a `[G, ...]` stack of matrices (a constant one is folded by ONNX Runtime at load).
fn group_matrix(op: &mut Builder, stack: Value, g: usize) -> Value {
    let index = op.scalar_i64(g as i64);
    op.Gather(stack, index).axis(0).out()
}

/// `[rows, cols]` of zeros of type `t` (the positions past `offs[-1]`, which torch leaves undefined).
fn zeros_2d(op: &mut Builder, rows: Value, cols: Value, t: DType) -> OpResult<Value> {
    let shape = op.Concat(&[rows, cols]).axis(0).out();
    Ok(op.ConstantOfShape(shape).value(constant_data(t, vec![1], &[0.0])?).out())
}

/// [M, K] x [G, K, N] -> [M, N] with the rows grouped by `offs` and G fixed: each group's rows (a
/// slice: they come sorted by group) times its own matrix, concatenated. The jagged product's
/// own work, `offs[-1]` rows in all; rows past `offs[-1]` are zeros.
fn rows_grouped_unrolled(
    op: &mut Builder,
    a: Value,
    b: Value,
    offs: Value,
    groups: usize,
    t: DType,
) -> OpResult<Value> {
    let axis = op.const_i64s(&[0]);
    let mut parts = Vec::with_capacity(groups + 1);
    let bounds = group_bounds(op, offs, groups);
    for (g, &(start, end)) in bounds.iter().enumerate() {
        let rows = op.Slice(a, start, end, Some(axis), None);
        let w = group_matrix(op, b, g);
        parts.push(op.MatMul(rows, w));
    }
    let m = dim_size(op, a, 0);
    let last = bounds[groups - 1].1;
    let tail = op.Sub(m, last);
    let n = dim_size(op, b, 2);
    parts.push(zeros_2d(op, tail, n, t)?);
    Ok(op.Concat(&parts).axis(0).out())
}

/// [G, M, K] x [K, N] -> [M, N] with the columns grouped by `offs` and G fixed: each group's matrix
/// times its own columns of `b`, side by side; columns past `offs[-1]` are zeros.
fn cols_grouped_unrolled(
    op: &mut Builder,
    a: Value,
    b: Value,
    offs: Value,
    groups: usize,
    t: DType,
) -> OpResult<Value> {
    let axis = op.const_i64s(&[1]);
    let mut parts = Vec::with_capacity(groups + 1);
    let bounds = group_bounds(op, offs, groups);
    for (g, &(start, end)) in bounds.iter().enumerate() {
        let cols = op.Slice(b, start, end, Some(axis), None);
        let x = group_matrix(op, a, g);
        parts.push(op.MatMul(x, cols));
    }
    let m = dim_size(op, a, 1);
    let n = dim_size(op, b, 1);
    let tail = op.Sub(n, bounds[groups - 1].1);
    parts.push(zeros_2d(op, m, tail, t)?);
    Ok(op.Concat(&parts).axis(1).out())
}

/// [M, K] x [K, N] -> [G, M, N] with the shared K grouped by `offs` and G fixed: each group's
/// slice of `a`'s columns times the same rows of `b`, stacked.
fn inner_grouped_unrolled(op: &mut Builder, a: Value, b: Value, offs: Value, groups: usize) -> Value {
    let (cols, rows, stack) = (op.const_i64s(&[1]), op.const_i64s(&[0]), op.const_i64s(&[0]));
    let parts: Vec<Value> = group_bounds(op, offs, groups)
        .into_iter()
        .map(|(start, end)| {
            let x = op.Slice(a, start, end, Some(cols), None);
            let y = op.Slice(b, start, end, Some(rows), None);
            let p = op.MatMul(x, y);
            op.Unsqueeze(p, stack)
        })
        .collect();
    op.Concat(&parts).axis(0).out()
}

/// [M, K] x [G, K, N] -> [M, N] with the rows grouped by `offs` (their ends): every group's
/// product is computed and each row keeps its own group's (G times the work of the jagged
/// product, in plain MatMuls); rows past `offs[-1]` are zeros.
fn rows_grouped_mm(op: &mut Builder, a: Value, b: Value, offs: Value, t: DType) -> Value {
    let all = op.MatMul(a, b);
    let rows = dim_size(op, a, 0);
    let (group, valid) = group_of_positions(op, offs, rows);
    // all[group[m], m, :] for every row m.
    let picked = pick_group(op, all, group, &[1, -1, 1]);
    let col = op.const_i64s(&[-1, 1]);
    let valid = op.Reshape(valid, col).out();
    let zero = op.scalar(t, 0.0);
    op.Where(valid, picked, zero)
}

/// For positions `0..n` of a jagged dim whose groups end at `offs`: each position's group (the
/// count of ends at or before it, clamped to the last group) and whether it lies before
/// `offs[-1]`.
fn group_of_positions(op: &mut Builder, offs: Value, n: Value) -> (Value, Value) {
    let ends = cast(op, offs, DType::Int64);
    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
    let empty = op.const_i64s(&[]);
    let n = op.Reshape(n, empty).out();
    let positions = op.Range(zero, n, one);
    let col = op.const_i64s(&[-1, 1]);
    let positions = op.Reshape(positions, col).out();
    let passed = op.LessOrEqual(ends, positions);
    let passed = cast(op, passed, DType::Int64);
    let axis = op.const_i64s(&[1]);
    let group = op.ReduceSum(passed, Some(axis)).keepdims(0).out();
    let count = dim_size(op, ends, 0);
    let last = op.Sub(count, one);
    let valid = op.Less(group, count);
    let group = op.Min(&[group, last]);
    (group, valid)
}

/// `all[group[p], ...]` at every position p of a `[G, ...]` stack of products, where `group` is
/// laid out for broadcasting as `layout` says (`[1, -1, 1]`: one group per row).
fn pick_group(op: &mut Builder, all: Value, group: Value, layout: &[i64]) -> Value {
    let layout = op.const_i64s(layout);
    let g = op.Reshape(group, layout).out();
    let tail = op.Shape(all).start(1).out();
    let one = op.const_i64s(&[1]);
    let target = op.Concat(&[one, tail]).axis(0).out();
    let index = op.Expand(g, target);
    let picked = op.GatherElements(all, index).axis(0).out();
    let axis = op.const_i64s(&[0]);
    op.Squeeze(picked, Some(axis))
}

/// addr of bool tensors: `(beta ∧ self) ∨ (alpha ∧ vec1 ⊗ vec2)` with the outer product of ∧, as
/// torch computes it.
fn addr_bool(op: &mut Builder, self_: Value, vec1: Value, vec2: Value, beta: bool, alpha: bool) -> Value {
    let b = DType::Bool;
    let (a, v) = (cast(op, vec1, b), cast(op, vec2, b));
    let (c, r) = (op.const_i64s(&[1]), op.const_i64s(&[0]));
    let a = op.Unsqueeze(a, c);
    let v = op.Unsqueeze(v, r);
    let p = op.And(a, v);
    let f = op.constant_tensor(TensorData::from_f64_as(b, vec![], &[0.0]).expect("bool constant"));
    let p = if alpha { p } else { op.And(p, f) };
    let s = cast(op, self_, b);
    // self still broadcasts to the result when beta is false.
    let s = if beta { s } else { op.And(s, f) };
    op.Or(s, p)
}

/// inner of N-d tensors: the sum over the last dims of every pair of their slices, shaped
/// `self.shape[:-1] + other.shape[:-1]`; a 0-d operand multiplies.
fn inner_nd(op: &mut Builder, a: Value, b: Value) -> OpResult<Value> {
    let t = op.out_dtype(0).map_or_else(|| result_dtype(op, a), Ok)?;
    let (ra, rb) = (rank_of(op, a)?, rank_of(op, b)?);
    let w = accumulation_type(t);
    let (a, b) = (cast(op, a, w), cast(op, b, w));
    if ra == 0 || rb == 0 {
        let p = op.Mul(a, b);
        return Ok(cast(op, p, t));
    }
    // a as [A..., 1 × (rb - 1), k] against b as [B..., k].
    let axes: Vec<i64> = (ra as i64 - 1..(ra + rb) as i64 - 2).collect();
    let a = if axes.is_empty() {
        a
    } else {
        let ax = op.const_i64s(&axes);
        op.Unsqueeze(a, ax)
    };
    let p = op.Mul(a, b);
    let ax = op.const_i64s(&[-1]);
    let s = op.ReduceSum(p, Some(ax)).keepdims(0).out();
    Ok(cast(op, s, t))
}

/// MatMul, through int64 for the narrow integers ONNX's MatMul does not take.
fn matmul_wide(op: &mut Builder, a: Value, b: Value) -> Value {
    match op.dtype(a) {
        Some(t) if accumulation_type(t) != t => {
            let w = accumulation_type(t);
            let (x, y) = (cast(op, a, w), cast(op, b, w));
            let p = op.MatMul(x, y);
            cast(op, p, t)
        }
        _ => op.MatMul(a, b),
    }
}

/// The type products and sums are computed in: int64 for the narrow integers that ONNX's MatMul
/// and ReduceSum do not take (the result wrapped to their width is torch's).
fn accumulation_type(t: DType) -> DType {
    match t {
        DType::Uint8 | DType::Int8 | DType::Uint16 | DType::Int16 => DType::Int64,
        _ => t,
    }
}

/// torch's multi_dot order: `mm` for two, the cheaper association for three, else the
/// matrix-chain order of least cost (the first split of least cost). `split[i][j]` is the split
/// of the chain i..=j.
fn chain_product(op: &mut Builder, ms: &[Value], split: &[Vec<usize>], i: usize, j: usize) -> Value {
    if i == j {
        return ms[i];
    }
    let k = split[i][j];
    let l = chain_product(op, ms, split, i, k);
    let r = chain_product(op, ms, split, k + 1, j);
    op.MatMul(l, r)
}

/// The longest chain whose multiplication order multi_dot searches (in time cubic in its length).
const MAX_CHAIN_SEARCH: usize = 256;

/// A multi_dot product with the row (`first_1d`) and column (`last_1d`) axes of 1-D ends squeezed out.
fn squeeze_ends(op: &mut Builder, p: Value, first_1d: bool, last_1d: bool) -> Value {
    let squeeze: Vec<i64> = match (first_1d, last_1d) {
        (true, true) => vec![0, 1],
        (true, false) => vec![0],
        (false, true) => vec![1],
        (false, false) => vec![],
    };
    if squeeze.is_empty() {
        p
    } else {
        let ax = op.const_i64s(&squeeze);
        op.Squeeze(p, Some(ax))
    }
}

translations! {
    /// linalg_multi_dot(Tensor[] tensors) -> Tensor
    #[target("aten::linalg_multi_dot")]
    fn linalg_multi_dot(op, tensors: Vec<Tensor>) -> OpResult<Value> {
        let what = "multi_dot";
        let n = tensors.len();
        if n < 2 {
            bail!("{what} needs at least two tensors");
        }
        let t = op.out_dtype(0).map_or_else(|| result_dtype(op, tensors[0]), Ok)?;
        let (first_1d, last_1d) = (rank_of(op, tensors[0])? == 1, rank_of(op, tensors[n - 1])? == 1);
        // A 1-D first tensor is a row, a 1-D last one a column; they are squeezed out at the end.
        let mut ms = Vec::new();
        let mut dims = Vec::new();
        for (i, &x) in tensors.iter().enumerate() {
            let s = static_shape(op, x, what)?;
            let x = cast(op, x, accumulation_type(t));
            let (x, s) = match s.len() {
                1 if i == 0 => {
                    let ax = op.const_i64s(&[0]);
                    (op.Unsqueeze(x, ax), vec![1, s[0]])
                }
                1 if i == n - 1 => {
                    let ax = op.const_i64s(&[1]);
                    (op.Unsqueeze(x, ax), vec![s[0], 1])
                }
                2 => (x, s),
                r => bail!("{what}: tensor {i} must be 2-D (the first and last may be 1-D), got {r}-D"),
            };
            if i == 0 {
                dims.push(s[0]);
            }
            dims.push(s[1]);
            ms.push(x);
        }
        if n > MAX_CHAIN_SEARCH {
            // The order search is cubic in the count: a longer chain (no real model has one)
            // multiplies left to right, in time and nodes linear in the count.
            let p = ms[1..].iter().fold(ms[0], |acc, &m| op.MatMul(acc, m));
            let p = cast(op, p, t);
            return Ok(squeeze_ends(op, p, first_1d, last_1d));
        }
        let mut split = vec![vec![0usize; n]; n];
        if n == 3 {
            let (a, b, c, d) = (dims[0], dims[1], dims[2], dims[3]);
            split[0][2] = if a * c * (b + d) > b * d * (a + c) { 0 } else { 1 };
            split[1][2] = 1;
            split[0][1] = 0;
        } else if n > 3 {
            let mut cost = vec![vec![0i64; n]; n];
            for l in 1..n {
                for i in 0..n - l {
                    let j = i + l;
                    cost[i][j] = i64::MAX;
                    for k in i..j {
                        let q = cost[i][k]
                            .saturating_add(cost[k + 1][j])
                            .saturating_add(dims[i].saturating_mul(dims[k + 1]).saturating_mul(dims[j + 1]));
                        if q < cost[i][j] {
                            cost[i][j] = q;
                            split[i][j] = k;
                        }
                    }
                }
            }
        }
        let p = chain_product(op, &ms, &split, 0, n - 1);
        let p = cast(op, p, t);
        Ok(squeeze_ends(op, p, first_1d, last_1d))
    }

    /// einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
    #[target("aten::einsum")]
    fn einsum(
        op,
        equation: &str,
        tensors: Vec<Tensor>,
        // A contraction order: how torch computes it, not what.
        _path: Ignored,
    ) -> OpResult<Value> {
        // ONNX's Einsum follows numpy's rules, as torch does (explicit and implicit output,
        // ellipses, repeated subscripts); it takes one element type, torch's result type.
        let t = op.out_dtype(0).ok_or_else(|| OpError::new("einsum: the result's element type is unknown"))?;
        // ONNX Runtime's Einsum computes float, double and 32/64-bit integers only: other types
        // are computed in int64 or float and cast back (a bool sum of products is any product).
        let work = match t {
            DType::Bool | DType::Int8 | DType::Uint8 | DType::Int16 | DType::Uint16 | DType::Uint32 => DType::Int64,
            DType::BFloat16 => DType::Float,
            t => t,
        };
        let inputs: Vec<Value> = tensors.iter().map(|&x| cast(op, x, work)).collect();
        let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
        let y = op.Einsum(&inputs).equation(&equation).out();
        Ok(cast(op, y, t))
    }

    /// baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::baddbmm")]
    fn baddbmm(
        op,
        self_: Tensor,
        batch1: Tensor,
        batch2: Tensor,
        beta: Scalar = Scalar::Int(1),
        alpha: Scalar = Scalar::Int(1),
    ) -> OpResult<Value> {
        let t = result_dtype(op, batch1)?;
        let p = matmul_wide(op, batch1, batch2);
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::addbmm")]
    fn addbmm(
        op,
        self_: Tensor,
        batch1: Tensor,
        batch2: Tensor,
        beta: Scalar = Scalar::Int(1),
        alpha: Scalar = Scalar::Int(1),
    ) -> OpResult<Value> {
        let t = result_dtype(op, batch1)?;
        let w = accumulation_type(t);
        let p = if w != t {
            let (x, y) = (cast(op, batch1, w), cast(op, batch2, w));
            let p = op.MatMul(x, y);
            let axes = op.const_i64s(&[0]);
            let p = op.ReduceSum(p, Some(axes)).keepdims(0).out();
            cast(op, p, t)
        } else {
            let p = op.MatMul(batch1, batch2);
            let axes = op.const_i64s(&[0]);
            op.ReduceSum(p, Some(axes)).keepdims(0).out()
        };
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::addmv")]
    fn addmv(
        op,
        self_: Tensor,
        mat: Tensor,
        vec: Tensor,
        beta: Scalar = Scalar::Int(1),
        alpha: Scalar = Scalar::Int(1),
    ) -> OpResult<Value> {
        let t = result_dtype(op, mat)?;
        let p = op.MatMul(mat, vec);
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::addr")]
    fn addr(
        op,
        self_: Tensor,
        vec1: Tensor,
        vec2: Tensor,
        beta: Scalar = Scalar::Int(1),
        alpha: Scalar = Scalar::Int(1),
    ) -> OpResult<Value> {
        let t = result_dtype(op, vec1)?;
        if t == DType::Bool {
            let (Some(beta), Some(alpha)) = (number(beta), number(alpha)) else {
                bail!("addr of booleans with a symbolic beta or alpha");
            };
            return Ok(addr_bool(op, self_, vec1, vec2, beta != 0.0, alpha != 0.0));
        }
        let (c, r) = (op.const_i64s(&[1]), op.const_i64s(&[0]));
        let a = op.Unsqueeze(vec1, c);
        let b = op.Unsqueeze(vec2, r);
        let p = op.Mul(a, b);
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// mv(Tensor self, Tensor vec) -> Tensor
    #[target("aten::mv")]
    fn mv(op, self_: Tensor, vec: Tensor) -> Value {
        op.MatMul(self_, vec)
    }

    /// dot(Tensor self, Tensor tensor) -> Tensor
    #[target("aten::dot", "aten::vdot", "aten::inner")]
    fn dot(
        op,
        self_: Tensor,
        tensor: Option<Tensor> = None,
        other: Option<Tensor> = None,
    ) -> OpResult<Value> {
        let Some(b) = tensor.or(other) else { bail!("dot needs two tensors") };
        if op.info(self_).complex {
            bail!("dot of complex tensors is not supported");
        }
        if other.is_some() && (rank_of(op, self_)? != 1 || rank_of(op, b)? != 1) {
            return inner_nd(op, self_, b);
        }
        if rank_of(op, self_)? != 1 || rank_of(op, b)? != 1 {
            bail!("dot/vdot/inner are translated for 1-D tensors only");
        }
        let t = result_dtype(op, self_)?;
        let w = accumulation_type(t);
        if w != t {
            let (x, y) = (cast(op, self_, w), cast(op, b, w));
            let p = op.Mul(x, y);
            let s = op.ReduceSum(p, None).keepdims(0).out();
            return Ok(cast(op, s, t));
        }
        let p = op.Mul(self_, b);
        let p = cast(op, p, t);
        Ok(op.ReduceSum(p, None).keepdims(0).out())
    }

    /// trace(Tensor self) -> Tensor
    #[target("aten::trace")]
    fn trace(op, self_: Tensor) -> OpResult<Value> {
        if rank_of(op, self_)? != 2 {
            bail!("trace needs a matrix");
        }
        let t = result_dtype(op, self_)?;
        let x = cast(op, self_, t);
        // The diagonal selected with Where (x·I would turn off-diagonal inf/NaN into NaN).
        let eye = op.EyeLike(x).dtype(DType::Int64 as i64).out();
        let eye = cast(op, eye, DType::Bool);
        let zero = op.scalar(t, 0.0);
        let d = op.Where(eye, x, zero);
        Ok(op.ReduceSum(d, None).keepdims(0).out())
    }

    /// linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor
    #[target("aten::linalg_cross")]
    fn linalg_cross(op, self_: Tensor, other: Tensor, dim: i64 = -1) -> OpResult<Value> {
        cross_along(op, self_, other, dim)
    }

    /// linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor
    #[target("aten::linalg_vecdot")]
    fn linalg_vecdot(op, x: Tensor, y: Tensor, dim: i64 = -1) -> OpResult<Value> {
        if op.info(x).complex || op.info(y).complex {
            bail!("linalg_vecdot of complex tensors is not supported");
        }
        let r = rank_of(op, x)?.max(rank_of(op, y)?);
        let t = result_dtype(op, x)?;
        let a = cast(op, x, t);
        let b = cast(op, y, t);
        let p = op.Mul(a, b);
        let axes = op.const_i64s(&[normalize_axis(dim, r)?]);
        Ok(op.ReduceSum(p, Some(axes)).keepdims(0).out())
    }

    /// addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
    #[target("aten::addmm")]
    fn addmm(
        op,
        self_: Tensor,
        mat1: Tensor,
        mat2: Tensor,
        beta: Scalar = Scalar::Int(1),
        alpha: Scalar = Scalar::Int(1),
    ) -> OpResult<Value> {
        let t = dtype_of(op, mat1)?;
        if let (true, Some(beta), Some(alpha)) = (t.is_float(), number(beta), number(alpha)) {
            return Ok(op.Gemm(mat1, mat2, Some(self_)).alpha(alpha as f32).beta(beta as f32).out());
        }
        let p = matmul_wide(op, mat1, mat2);
        Ok(scaled_sum(op, self_, p, beta, alpha, t))
    }

    /// matmul(Tensor self, Tensor other) -> Tensor
    #[target("aten::matmul")]
    fn matmul(op, self_: Tensor, other: Tensor) -> Value {
        matmul_wide(op, self_, other)
    }

    /// _grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None) ->
    ///     Tensor
    #[target("aten::_grouped_mm")]
    fn grouped_mm(
        op,
        self_: Tensor,
        mat2: Tensor,
        offs: Option<Tensor> = None,
        bias: Option<Tensor> = None,
        // The result type is the node's, which the lowering enforces.
        _out_dtype: Ignored,
    ) -> OpResult<Value> {
        // Mixture-of-experts matmuls: `offs[g]` ends group g of the jagged dim of a 2-D operand;
        // torch leaves positions past `offs[-1]` undefined, here they are zeros. With the number of
        // groups fixed (a model's expert count), one MatMul per group on its own slice: the jagged
        // product's work. Otherwise every group's product is computed and each position keeps its
        // own group's (G times the work, in plain MatMuls).
        if bias.is_some() {
            bail!("_grouped_mm with a bias is not supported yet");
        }
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let (a, b) = (cast(op, self_, t), cast(op, mat2, t));
        let (ra, rb) = (rank_of(op, a)?, rank_of(op, b)?);
        let groups = match (ra, rb, offs) {
            (2, 3, Some(offs)) => static_groups(op, &[(b, 0), (offs, 0)]),
            (3, 2, Some(offs)) => static_groups(op, &[(a, 0), (offs, 0)]),
            (2, 2, Some(offs)) => static_groups(op, &[(offs, 0)]),
            _ => None,
        };
        match (ra, rb, offs, groups) {
            (3, 3, None, _) => Ok(op.MatMul(a, b)),
            // [M, K] x [G, K, N] -> [M, N]: rows grouped.
            (2, 3, Some(offs), Some(g)) => rows_grouped_unrolled(op, a, b, offs, g, t),
            (2, 3, Some(offs), None) => Ok(rows_grouped_mm(op, a, b, offs, t)),
            // [G, M, K] x [K, N] -> [M, N]: columns grouped.
            (3, 2, Some(offs), Some(g)) => cols_grouped_unrolled(op, a, b, offs, g, t),
            (3, 2, Some(offs), None) => {
                let all = op.MatMul(a, b);
                let cols = dim_size(op, b, 1);
                let (group, valid) = group_of_positions(op, offs, cols);
                let picked = pick_group(op, all, group, &[1, 1, -1]);
                let zero = op.scalar(t, 0.0);
                Ok(op.Where(valid, picked, zero))
            }
            // [M, K] x [K, N] -> [G, M, N]: the shared K grouped.
            (2, 2, Some(offs), Some(g)) => Ok(inner_grouped_unrolled(op, a, b, offs, g)),
            (2, 2, Some(offs), None) => {
                let k = dim_size(op, a, 1);
                let (group, valid) = group_of_positions(op, offs, k);
                let groups = {
                    let n = dim_size(op, offs, 0);
                    let empty = op.const_i64s(&[]);
                    let n = op.Reshape(n, empty).out();
                    let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
                    let ids = op.Range(zero, n, one);
                    let col = op.const_i64s(&[-1, 1]);
                    op.Reshape(ids, col).out()
                };
                // mask[g, k]: k belongs to group g; A masked per group is [G, M, K].
                let in_group = op.Equal(groups, group);
                let mask = op.And(in_group, valid);
                let mask = cast(op, mask, t);
                let axis = op.const_i64s(&[1]);
                let mask = op.Unsqueeze(mask, axis);
                let masked = op.Mul(a, mask);
                Ok(op.MatMul(masked, b))
            }
            (ra, rb, offs, _) => bail!(
                "_grouped_mm of a {ra}-D and a {rb}-D operand {} offsets is not a form torch defines",
                if offs.is_some() { "with" } else { "without" }
            ),
        }
    }

    /// transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor
    ///
    /// transformers' mixture-of-experts matmul (`integrations/moe.py`): rows of `input` sorted
    /// by expert, `offs` the cumulative row counts; rows past `offs[-1]` are zeros.
    #[target("transformers::grouped_mm_fallback")]
    fn grouped_mm_fallback(op, input: Tensor, weight: Tensor, offs: Tensor) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, input)?);
        let (a, b) = (cast(op, input, t), cast(op, weight, t));
        match (rank_of(op, a)?, rank_of(op, b)?) {
            (2, 3) => match static_groups(op, &[(b, 0), (offs, 0)]) {
                Some(g) => rows_grouped_unrolled(op, a, b, offs, g, t),
                None => Ok(rows_grouped_mm(op, a, b, offs, t)),
            },
            (ra, rb) => bail!("grouped_mm_fallback takes a 2-D input and 3-D weights, not {ra}-D and {rb}-D"),
        }
    }

    /// mm(Tensor self, Tensor mat2) -> Tensor
    #[target("aten::mm", "aten::bmm")]
    fn mm(op, self_: Tensor, mat2: Tensor) -> Value {
        matmul_wide(op, self_, mat2)
    }

    /// cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor
    #[target("aten::cosine_similarity")]
    fn cosine_similarity(
        op,
        x1: Tensor,
        x2: Tensor,
        dim: i64 = 1,
        eps: f64 = 1e-8,
    ) -> OpResult<Value> {
        // Σ (x1 / max(‖x1‖, eps)) · (x2 / max(‖x2‖, eps)) over dim, on broadcast operands.
        let t = float_result_dtype(op, x1)?;
        let r = rank_of(op, x1)?.max(rank_of(op, x2)?);
        let (a, b) = (cast(op, x1, t), cast(op, x2, t));
        let sa = op.Shape(a).out();
        let sb = op.Shape(b).out();
        let one = op.scalar(t, 1.0);
        let ones_a = op.Expand(one, sa);
        let ones = op.Expand(ones_a, sb);
        let a = op.Mul(a, ones);
        let b = op.Mul(b, ones);
        // Of 0-d operands torch takes the norms over dim 0 of their 1-element views.
        let (a, b, r) = if r == 0 { (as_1d(op, a), as_1d(op, b), 1) } else { (a, b, r) };
        let axis = normalize_axis(dim, r)?;
        let e = op.scalar(t, eps);
        let na = pnorm(op, a, 2.0, &[axis], true)?;
        let na = op.Max(&[na, e]);
        let nb = pnorm(op, b, 2.0, &[axis], true)?;
        let nb = op.Max(&[nb, e]);
        let a = op.Div(a, na);
        let b = op.Div(b, nb);
        let p = op.Mul(a, b);
        let axes = op.const_i64s(&[axis]);
        Ok(op.ReduceSum(p, Some(axes)).keepdims(0).out())
    }

    /// pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07,
    ///     bool keepdim=False) -> Tensor
    #[target("aten::pairwise_distance")]
    fn pairwise_distance(
        op,
        x1: Tensor,
        x2: Tensor,
        p: f64 = 2.0,
        eps: f64 = 1e-6,
        keepdim: bool = false,
    ) -> OpResult<Value> {
        let t = float_result_dtype(op, x1)?;
        pairwise(op, x1, x2, p, eps, keepdim, t)
    }

    /// _cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor
    #[target("aten::_cdist_forward", "aten::cdist")]
    fn _cdist_forward(
        op,
        x1: Tensor,
        x2: Tensor,
        p: f64 = 2.0,
        // Whether torch computes p = 2 through a matrix product (‖a‖² + ‖b‖² - 2a·b): the same
        // distances, less accurately; the differences are taken directly here.
        _compute_mode: Ignored,
    ) -> OpResult<Value> {
        // [..., P, M] and [..., R, M] → ‖x1_i - x2_j‖_p as [..., P, R], batch dims broadcast.
        let t = float_result_dtype(op, x1)?;
        if p < 0.0 {
            bail!("cdist needs p >= 0, got {p}");
        }
        if rank_of(op, x1)? < 2 || rank_of(op, x2)? < 2 {
            bail!("cdist needs inputs of rank 2 or more");
        }
        let (a, b) = (cast(op, x1, t), cast(op, x2, t));
        let (ax, bx) = (op.const_i64s(&[-2]), op.const_i64s(&[-3]));
        let a = op.Unsqueeze(a, ax);
        let b = op.Unsqueeze(b, bx);
        let d = op.Sub(a, b);
        pnorm(op, d, p, &[-1], false)
    }

    /// pdist(Tensor self, float p=2.) -> Tensor
    #[target("aten::pdist", "aten::_pdist_forward")]
    fn pdist(op, self_: Tensor, p: f64 = 2.0) -> OpResult<Value> {
        // ‖x_i - x_j‖_p for i < j, row-major.
        let t = float_result_dtype(op, self_)?;
        let shape = static_shape(op, self_, "pdist")?;
        if shape.len() != 2 {
            bail!("pdist needs a 2-D input");
        }
        if p < 0.0 {
            bail!("pdist needs p >= 0");
        }
        let n = shape[0];
        // The n(n-1)/2 pairs, checked against the memory bound before they are built.
        let k = i64::try_from(n as i128 * (n as i128 - 1) / 2).unwrap_or(i64::MAX);
        constant_elements(op, "pdist's index pairs", &[2, k])?;
        let (mut is, mut js): (Vec<i64>, Vec<i64>) =
            (constant_vec(op, "pdist's index", &[k])?, constant_vec(op, "pdist's index", &[k])?);
        for i in 0..n {
            for j in i + 1..n {
                is.push(i);
                js.push(j);
            }
        }
        let x = cast(op, self_, t);
        let k = is.len() as i64;
        let iv = op.constant_tensor(TensorData::from_i64s(vec![k], &is));
        let jv = op.constant_tensor(TensorData::from_i64s(vec![k], &js));
        let a = op.Gather(x, iv).axis(0).out();
        let b = op.Gather(x, jv).axis(0).out();
        let d = op.Sub(a, b);
        pnorm(op, d, p, &[1], false)
    }

    /// outer(Tensor self, Tensor vec2) -> Tensor
    #[target("aten::outer", "aten::ger")]
    fn outer(op, self_: Tensor, vec2: Tensor) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let (a, b) = (cast(op, self_, t), cast(op, vec2, t));
        let col = op.const_i64s(&[-1, 1]);
        let a = op.Reshape(a, col).out();
        Ok(op.Mul(a, b))
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
        let p = op.Mul(a, b);
        let out = op.const_i64s(&out);
        Ok(op.Reshape(p, out).out())
    }

    /// tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor
    #[target("aten::tensordot")]
    fn tensordot(op, self_: Tensor, other: Tensor, dims_self: Vec<i64>, dims_other: Vec<i64>) -> OpResult<Value> {
        let t = op.out_dtype(0).unwrap_or(dtype_of(op, self_)?);
        let shape_of = |op: &Builder, x: Value| {
            op.shape(x).map(<[Dim]>::to_vec).ok_or_else(|| OpError::new("tensordot needs the inputs' ranks"))
        };
        let (mut sa, mut sb) = (shape_of(op, self_)?, shape_of(op, other)?);
        let (ra, rb) = (sa.len(), sb.len());
        let ca: Vec<i64> = dims_self.iter().map(|&d| normalize_axis(d, ra)).collect::<OpResult<Vec<_>>>()?;
        let cb: Vec<i64> = dims_other.iter().map(|&d| normalize_axis(d, rb)).collect::<OpResult<Vec<_>>>()?;
        if ca.len() != cb.len() {
            bail!("tensordot: both sides need as many contracted dims");
        }
        let (mut a, mut b) = (cast(op, self_, t), cast(op, other, t));
        // Like torch: a contracted dim of size 1 on one side sums the other side's dim first.
        // Symbolic sizes torch has checked are equal (a size 1 would have been fixed by its trace).
        for (&da, &db) in ca.iter().zip(&cb) {
            match (&sa[da as usize], &sb[db as usize]) {
                (x, y) if x == y => {}
                (Dim::Fixed(1), _) => {
                    let ax = op.const_i64s(&[db]);
                    b = op.ReduceSum(b, Some(ax)).keepdims(1).out();
                    sb[db as usize] = Dim::Fixed(1);
                }
                (_, Dim::Fixed(1)) => {
                    let ax = op.const_i64s(&[da]);
                    a = op.ReduceSum(a, Some(ax)).keepdims(1).out();
                    sa[da as usize] = Dim::Fixed(1);
                }
                (Dim::Fixed(x), Dim::Fixed(y)) => bail!("tensordot: contracted dims of sizes {x} and {y}"),
                _ => {}
            }
        }
        let fa: Vec<i64> = (0..ra as i64).filter(|d| !ca.contains(d)).collect();
        let fb: Vec<i64> = (0..rb as i64).filter(|d| !cb.contains(d)).collect();
        // [free, contracted] @ [contracted, free], each side flattened to a matrix.
        let k = size_product(op, a, &sa, &ca);
        let m = size_product(op, a, &sa, &fa);
        let n = size_product(op, b, &sb, &fb);
        let pa: Vec<i64> = fa.iter().chain(&ca).copied().collect();
        let pb: Vec<i64> = cb.iter().chain(&fb).copied().collect();
        let (s2a, s2b) = (sizes_vector(op, &[m, k]), sizes_vector(op, &[k, n]));
        let in_order = |p: &[i64]| p.iter().enumerate().all(|(i, &d)| d == i as i64);
        let a = if in_order(&pa) { a } else { op.Transpose(a).perm(&pa).out() };
        let b = if in_order(&pb) { b } else { op.Transpose(b).perm(&pb).out() };
        let a = op.Reshape(a, s2a).out();
        let b = op.Reshape(b, s2b).out();
        let p = op.MatMul(a, b);
        let mut out: Vec<Size> = fa.iter().map(|&d| size_of(op, self_, &sa, d)).collect();
        out.extend(fb.iter().map(|&d| size_of(op, other, &sb, d)));
        let out = sizes_vector(op, &out);
        Ok(op.Reshape(p, out).out())
    }

    /// cross(Tensor self, Tensor other, int? dim=None) -> Tensor
    #[target("aten::cross")]
    fn cross(op, self_: Tensor, other: Tensor, dim: Option<i64> = None) -> OpResult<Value> {
        // Without `dim`, torch takes the first dim of size 3. A symbolic dim is not it: had it been
        // 3, torch's trace would have made it static.
        let dim = match dim {
            Some(d) => d,
            None => {
                let Some(shape) = op.shape(self_) else {
                    bail!("cross without dim needs the input's shape")
                };
                match shape.iter().position(|s| *s == Dim::Fixed(3)) {
                    Some(d) => d as i64,
                    None => bail!("cross without dim needs a dim of size 3, the shape is {shape:?}"),
                }
            }
        };
        cross_along(op, self_, other, dim)
    }
}
