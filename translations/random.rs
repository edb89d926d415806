//! Random sampling: `rand`, `randn`, `randint`, `bernoulli`, `normal`, `multinomial`, `randperm`,
//! through ONNX's RandomUniformLike / RandomNormalLike / Multinomial.
//!
//! The samples have torch's distribution, shape and type, not torch's values: ONNX runtimes have
//! their own generators, and a torch `Generator` or seed cannot be carried over. Every draw is a
//! separate node, which the optimizer never merges or folds.

use crate::translate::prelude::*;
use crate::translations;

/// Uniform samples in [0, 1) of `shape` (a 1-D int64 value), as float64 when `t` is float64,
/// else float32 (then cast by the caller).
fn uniform(op: &mut Builder, shape: Value, t: DType) -> Value {
    let work = work_type(t);
    let template = op.ConstantOfShape(shape).out();
    op.RandomUniformLike(template).dtype(work as i64).out()
}

/// Standard normal samples of `shape`, in float32 or float64 as [`uniform`].
fn standard_normal(op: &mut Builder, shape: Value, t: DType) -> Value {
    let work = work_type(t);
    let template = op.ConstantOfShape(shape).out();
    op.RandomNormalLike(template).dtype(work as i64).out()
}

/// The type samples for a result of type `t` are drawn in: float64 for float64, else float32.
fn work_type(t: DType) -> DType {
    if t == DType::Double {
        DType::Double
    } else {
        DType::Float
    }
}

/// Integers uniform in [low, high) of `shape`, as `t`: floor(low + u * (high - low)) in float64,
/// exact for ranges below 2^53.
fn uniform_int(op: &mut Builder, shape: Value, low: SymInt, high: SymInt, t: DType) -> Value {
    let u = uniform(op, shape, DType::Double);
    let (lo, hi) = (sym_value(op, low), sym_value(op, high));
    let (lo, hi) = (cast(op, lo, DType::Double), cast(op, hi, DType::Double));
    let range = op.Sub(hi, lo);
    let scaled = op.Mul(u, range);
    let shifted = op.Add(scaled, lo);
    let v = op.Floor(shifted);
    cast(op, v, t)
}

/// The node's output type, float32 when the archive does not say.
fn out_type(op: &Builder) -> DType {
    op.out_dtype(0).unwrap_or(DType::Float)
}

translations! {
    /// rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::rand", "aten::rand.generator")]
    fn rand(op, size: Vec<SymInt>) -> Value {
        let t = out_type(op);
        let shape = shape_vec(op, &size);
        let u = uniform(op, shape, t);
        cast(op, u, t)
    }

    /// randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::randn", "aten::randn.generator")]
    fn randn(op, size: Vec<SymInt>) -> Value {
        let t = out_type(op);
        let shape = shape_vec(op, &size);
        let n = standard_normal(op, shape, t);
        cast(op, n, t)
    }

    /// rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::rand_like", "aten::rand_like.generator")]
    fn rand_like(op, self_: Tensor) -> Value {
        let t = out_type(op);
        let shape = op.Shape(self_).out();
        let u = uniform(op, shape, t);
        cast(op, u, t)
    }

    /// randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::randn_like", "aten::randn_like.generator")]
    fn randn_like(op, self_: Tensor) -> Value {
        let t = out_type(op);
        let shape = op.Shape(self_).out();
        let n = standard_normal(op, shape, t);
        cast(op, n, t)
    }

    /// randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=4, Layout? layout=None,
    ///     Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::randint.low", "aten::randint", "aten::randint.generator", "aten::randint.low_generator")]
    fn randint(op, low: SymInt = SymInt::Const(0), high: SymInt, size: Vec<SymInt>) -> Value {
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        let shape = shape_vec(op, &size);
        uniform_int(op, shape, low, high, t)
    }

    /// randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, ScalarType? dtype=None,
    ///     Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
    #[target("aten::randint_like.low_dtype", "aten::randint_like", "aten::randint_like.generator")]
    fn randint_like(op, self_: Tensor, low: SymInt = SymInt::Const(0), high: SymInt) -> Value {
        let t = out_type(op);
        let shape = op.Shape(self_).out();
        uniform_int(op, shape, low, high, t)
    }

    /// uniform(Tensor self, float from=0, float to=1, *, Generator? generator=None) -> Tensor
    #[target("aten::uniform", "aten::uniform_")]
    fn uniform_like(op, self_: Tensor, r#from: f64 = 0.0, to: f64 = 1.0, _generator: Ignored) -> Value {
        // `generator`: see the module comment; its draws cannot be reproduced.
        let t = out_type(op);
        let shape = op.Shape(self_).out();
        let u = uniform(op, shape, t);
        let work = work_type(t);
        let scale = op.scalar(work, to - r#from);
        let low = op.scalar(work, r#from);
        let s = op.Mul(u, scale);
        let v = op.Add(s, low);
        cast(op, v, t)
    }

    /// normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor
    #[target("aten::normal.Tensor_Tensor", "aten::normal.Tensor_float", "aten::normal.float_Tensor")]
    fn normal(op, mean: Operand, std: Operand, _generator: Ignored) -> OpResult<Value> {
        // `generator`: see the module comment.
        let t = out_type(op);
        let (m, s) = (operand_value(op, mean, t), operand_value(op, std, t));
        // The samples take the broadcast shape of mean and std.
        let zero = op.scalar(t, 0.0);
        let m0 = op.Mul(m, zero);
        let s0 = op.Mul(s, zero);
        let template = op.Add(m0, s0);
        let shape = op.Shape(template).out();
        let n = standard_normal(op, shape, t);
        let n = cast(op, n, t);
        let scaled = op.Mul(n, s);
        Ok(op.Add(scaled, m))
    }

    /// normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None,
    ///     ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    #[target("aten::normal.float_float")]
    fn normal_float_float(op, mean: f64, std: f64, size: Vec<SymInt>, _generator: Ignored) -> Value {
        // `generator`: see the module comment.
        let t = out_type(op);
        let shape = shape_vec(op, &size);
        sample_normal(op, shape, mean, std, t)
    }

    /// normal_functional(Tensor self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor
    #[target("aten::normal_functional", "aten::normal_")]
    fn normal_functional(op, self_: Tensor, mean: f64 = 0.0, std: f64 = 1.0, _generator: Ignored) -> Value {
        // `generator`: see the module comment.
        let t = out_type(op);
        let shape = op.Shape(self_).out();
        sample_normal(op, shape, mean, std, t)
    }

    /// bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor
    #[target("aten::bernoulli.p", "aten::bernoulli", "aten::bernoulli.Tensor")]
    fn bernoulli(op, self_: Tensor, p: Option<Operand> = None, _generator: Ignored) -> Value {
        // `generator`: see the module comment. Without `p`, `self` holds the probabilities.
        let t = out_type(op);
        let shape = op.Shape(self_).out();
        let u = uniform(op, shape, DType::Double);
        let p = match p {
            Some(p) => operand_value(op, p, DType::Double),
            None => cast(op, self_, DType::Double),
        };
        let hit = op.Less(u, p);
        cast(op, hit, t)
    }

    /// multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor
    #[target("aten::multinomial")]
    fn multinomial(
        op,
        self_: Tensor,
        num_samples: i64,
        replacement: bool = false,
        _generator: Ignored,
    ) -> OpResult<Value> {
        // `generator`: see the module comment.
        if !replacement && num_samples > 1 {
            bail!("multinomial without replacement draws each category once; ONNX Multinomial draws with replacement");
        }
        // ONNX takes unnormalized log-probabilities; torch takes (unnormalized) weights.
        let w = cast(op, self_, DType::Float);
        let logits = op.Log(w);
        let r = rank_of(op, self_)?;
        let batched = if r == 1 {
            let axes = op.const_i64s(&[0]);
            op.Unsqueeze(logits, axes)
        } else {
            logits
        };
        let s = op.Multinomial(batched).sample_size(num_samples).dtype(DType::Int64 as i64).out();
        Ok(if r == 1 {
            let axes = op.const_i64s(&[0]);
            op.Squeeze(s, Some(axes))
        } else {
            s
        })
    }

    /// randperm(SymInt n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None,
    ///     bool? pin_memory=None) -> Tensor
    #[target("aten::randperm", "aten::randperm.generator")]
    fn randperm(op, n: SymInt) -> Value {
        // The order that sorts n uniform samples is a uniform random permutation.
        let t = op.out_dtype(0).unwrap_or(DType::Int64);
        let n = sym_value(op, n);
        let shape = {
            let axes = op.const_i64s(&[0]);
            op.Unsqueeze(n, axes)
        };
        let u = uniform(op, shape, DType::Float);
        let [_, idx] = op.TopK(u, shape).outs::<2>();
        cast(op, idx, t)
    }
}

/// Normal samples with `mean` and `std` of `shape`, as `t`.
fn sample_normal(op: &mut Builder, shape: Value, mean: f64, std: f64, t: DType) -> Value {
    let n = standard_normal(op, shape, t);
    let work = work_type(t);
    let (s, m) = (op.scalar(work, std), op.scalar(work, mean));
    let scaled = op.Mul(n, s);
    let v = op.Add(scaled, m);
    cast(op, v, t)
}
