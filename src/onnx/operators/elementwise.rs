//! Elementwise operators: unary math and activations, binary arithmetic, comparisons, logic and
//! bitwise operators, `Where`, `Clip`, casts, `Identity`, and the random generators.
//!
//! Folding is exact or not done: integer arithmetic wraps as C++ does, float32/float64
//! `Add`/`Sub`/`Mul`/`Div`/`Neg`/`Sqrt` are one IEEE operation each (bit-exact with any runtime),
//! `Floor`/`Ceil`/`Round`/`Sign`/`Abs`/`Clip` are exact, float32 `Log`/`Exp` are evaluated in float64
//! and rounded once (the correctly rounded result), casts fold where the conversion is exact,
//! correctly rounded or the same on every machine.

use super::eval::{self, broadcast_dims, broadcast_index, decode, encode, is_unsigned, Num, INPUT_LIMIT};
use super::{attr_int, input, Facts, Form, FormCtx, Older, Op, Rewrite, Shape, SymInts};
use crate::onnx::ir::{BinOp, DType, Derived, Node, TensorData, Value};

use DType::*;

/// A one-input operator whose output has its input's shape.
const fn same(name: &'static str) -> Op {
    Op { name, shape: Shape::Same, ..Op::NONE }
}

/// [`same`], and the optimizer records its output shapes.
const fn same_learned(name: &'static str) -> Op {
    Op { name, shape: Shape::Same, learned: true, ..Op::NONE }
}

/// Inputs broadcast together (the optimizer records the shapes).
const fn broadcast(name: &'static str) -> Op {
    Op { name, shape: Shape::Broadcast, learned: true, ..Op::NONE }
}

pub(super) const OPS: &[Op] = &[
    // Unary math.
    Op { eval: Some(exact_unary), ..same_learned("Abs") },
    Op { eval: Some(exact_unary), ..same_learned("Neg") },
    Op { eval: Some(exact_unary), ..same_learned("Sign") },
    Op { eval: Some(float_unary), ..same_learned("Sqrt") },
    Op { eval: Some(float_unary), ..same_learned("Exp") },
    Op { eval: Some(float_unary), ..same_learned("Log") },
    Op { eval: Some(float_unary), ..same_learned("Floor") },
    Op { eval: Some(float_unary), ..same_learned("Ceil") },
    Op { eval: Some(float_unary), ..same_learned("Round") },
    same_learned("Erf"),
    same_learned("Reciprocal"),
    same_learned("Sin"),
    same_learned("Cos"),
    same("Tan"),
    same("Asin"),
    same("Acos"),
    same("Atan"),
    same("Sinh"),
    same("Cosh"),
    same_learned("Tanh"),
    same("Asinh"),
    same("Acosh"),
    same("Atanh"),
    same_learned("IsNaN"),
    same_learned("IsInf"),
    // Activations.
    Op { runtime_gaps: &[Int16], ..same_learned("Relu") },
    same_learned("Sigmoid"),
    same_learned("Gelu"),
    same_learned("Elu"),
    same("Celu"),
    same("Selu"),
    same_learned("LeakyRelu"),
    same_learned("HardSigmoid"),
    Op {
        forms: &[Form { since: 14, form: "", used: always, older: Older::Rewrite(Rewrite::HardSwishBody) }],
        ..same_learned("HardSwish")
    },
    same("Mish"),
    same_learned("Softplus"),
    same("Softsign"),
    same("ThresholdedRelu"),
    same("Shrink"),
    same("PRelu"),
    // Arithmetic.
    Op { eval: Some(binary), derive: Some(derive_binary), commutative: true, ..broadcast("Add") },
    Op { eval: Some(binary), derive: Some(derive_binary), ..broadcast("Sub") },
    Op { eval: Some(binary), derive: Some(derive_binary), commutative: true, ..broadcast("Mul") },
    Op { eval: Some(binary), derive: Some(derive_binary), ..broadcast("Div") },
    broadcast("Pow"),
    broadcast("Mod"),
    Op { eval: Some(binary), commutative: true, runtime_gaps: &[Int16, Uint16], ..broadcast("Max") },
    Op { eval: Some(binary), commutative: true, runtime_gaps: &[Int16, Uint16], ..broadcast("Min") },
    broadcast("Mean"),
    broadcast("Sum"),
    Op {
        shape: Shape::Same,
        learned: true,
        eval: Some(clip),
        noop: Some(clip_without_bounds),
        runtime_gaps: &[Int16, Uint16],
        ..Op::NONE
    }
    .named("Clip"),
    // Comparisons and logic.
    Op { eval: Some(binary), commutative: true, ..broadcast("Equal") },
    Op { eval: Some(binary), ..broadcast("Less") },
    Op { eval: Some(binary), ..broadcast("Greater") },
    Op { eval: Some(binary), ..broadcast("LessOrEqual") },
    Op { eval: Some(binary), ..broadcast("GreaterOrEqual") },
    Op { eval: Some(binary), noop: Some(and_true), commutative: true, ..broadcast("And") },
    Op { eval: Some(binary), noop: Some(or_false), commutative: true, ..broadcast("Or") },
    Op { commutative: true, ..broadcast("Xor") },
    Op { eval: Some(exact_unary), ..same_learned("Not") },
    // Bitwise.
    Op { eval: Some(binary), commutative: true, ..broadcast("BitwiseAnd") },
    Op { eval: Some(binary), commutative: true, ..broadcast("BitwiseOr") },
    Op { eval: Some(binary), ..broadcast("BitwiseXor") },
    broadcast("BitShift"),
    Op {
        forms: &[Form { since: 18, form: "", used: always, older: Older::Rewrite(Rewrite::BitwiseNotBySub) }],
        ..same("BitwiseNot")
    },
    // Selection, casts and copies.
    Op {
        eval: Some(where_),
        moves_values: true,
        runtime_gaps: &[Bool, Int16, Uint16, Uint64, BFloat16],
        ..broadcast("Where")
    },
    Op {
        types: Some(cast_to),
        syms: Some(cast_syms),
        eval: Some(cast),
        noop: Some(cast_to_same_type),
        identity_at_output: true,
        ..same_learned("Cast")
    },
    Op { eval: Some(cast_like), noop: Some(cast_like_same_type), ..same_learned("CastLike") },
    Op { syms: Some(identity_syms), eval: Some(identity), noop: Some(identity_noop), ..same_learned("Identity") },
];

/// Random generators: two nodes never merge.
pub(super) const RANDOM: &[Op] = &[
    Op { random: true, ..Op::NONE }.named("RandomNormal"),
    Op { random: true, ..Op::NONE }.named("RandomUniform"),
    Op { random: true, ..same("RandomNormalLike") },
    Op { random: true, ..same("RandomUniformLike") },
    Op { random: true, ..Op::NONE }.named("Multinomial"),
    Op { random: true, ..Op::NONE }.named("Bernoulli"),
];

fn always(_: &FormCtx) -> bool {
    true
}

// --- types and contents -----------------------------------------------------------------------

/// `Cast` makes the type its `to` attribute names.
fn cast_to(node: &Node, _: &dyn Fn(usize) -> Option<DType>, i: usize) -> Option<DType> {
    match node.attr("to") {
        Some(crate::onnx::ir::AttrValue::Int(to)) if i == 0 => DType::from_onnx(*to as i32),
        _ => None,
    }
}

fn identity_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    facts.syms(input(node, 0)?).cloned()
}

fn cast_syms(facts: &dyn Facts, node: &Node) -> Option<SymInts> {
    let v = input(node, 0)?;
    if attr_int(node, "to", 0) != Int64 as i64 || facts.dtype(v) != Some(Int64) {
        return None;
    }
    facts.syms(v).cloned()
}

// --- no-ops -------------------------------------------------------------------------------------

fn identity_noop(_: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    (node.outputs.len() == 1).then_some((input(node, 0)?, "noop: Identity"))
}

fn cast_to_same_type(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    let t = facts.dtype(x)?;
    (t as i64 == attr_int(node, "to", -1)).then_some((x, "noop: Cast to the same type"))
}

fn cast_like_same_type(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    let t = facts.dtype(x)?;
    (Some(t) == input(node, 1).and_then(|v| facts.dtype(v))).then_some((x, "noop: CastLike to the same type"))
}

fn clip_without_bounds(_: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    let x = input(node, 0)?;
    (input(node, 1).is_none() && input(node, 2).is_none()).then_some((x, "noop: Clip without bounds"))
}

/// `x AND true` is `x`, if the constant does not widen the result's shape.
fn and_true(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    logic_with(facts, node, 1).map(|keep| (keep, "noop: And with true"))
}

/// `x OR false` is `x`, if the constant does not widen the result's shape.
fn or_false(facts: &dyn Facts, node: &Node) -> Option<(Value, &'static str)> {
    logic_with(facts, node, 0).map(|keep| (keep, "noop: Or with false"))
}

/// The input of a logic node that the other one, a constant filled with `want`, leaves as it is.
fn logic_with(facts: &dyn Facts, node: &Node, want: i64) -> Option<Value> {
    let (x, y) = (input(node, 0)?, input(node, 1)?);
    let out = *node.outputs.first()?;
    let (keep, c) = if is_filled(facts, y, want) {
        (x, y)
    } else if is_filled(facts, x, want) {
        (y, x)
    } else {
        return None;
    };
    let (ks, cs, os) = (facts.shape(keep)?, facts.shape(c)?, facts.shape(out)?);
    if ks != os || cs.len() > ks.len() || facts.dtype(keep) != Some(Bool) {
        return None;
    }
    Some(keep)
}

/// Every element of constant `v` equals `want` (a small bool tensor).
fn is_filled(facts: &dyn Facts, v: Value, want: i64) -> bool {
    match facts.constant(v) {
        Some(c) if c.dtype == Bool && c.numel() <= 4096 => {
            c.to_i64s().is_some_and(|vals| vals.iter().all(|&b| b == want))
        }
        _ => false,
    }
}

// --- evaluation ---------------------------------------------------------------------------------

fn arg<'a>(inputs: &[Option<&'a TensorData>], i: usize) -> Option<&'a TensorData> {
    inputs.get(i).copied().flatten()
}

fn identity(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    arg(inputs, 0).cloned()
}

fn cast(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    eval::cast(arg(inputs, 0)?, DType::from_onnx(attr_int(node, "to", 0) as i32)?)
}

fn cast_like(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    eval::cast(arg(inputs, 0)?, arg(inputs, 1)?.dtype)
}

/// `Neg`, `Abs`, `Not`, `Sign`: exact in every type they fold in.
fn exact_unary(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let out = match (node.op_type.as_str(), decode(x)?) {
        ("Neg", Num::I(v)) if x.dtype != Bool && !is_unsigned(x.dtype) => {
            Num::I(v.iter().map(|a| a.wrapping_neg()).collect())
        }
        ("Neg", Num::F(v)) => Num::F(v.iter().map(|a| -a).collect()),
        ("Neg", Num::D(v)) => Num::D(v.iter().map(|a| -a).collect()),
        ("Abs", Num::I(v)) if x.dtype != Bool => Num::I(v.iter().map(|a| a.wrapping_abs()).collect()),
        ("Sign", Num::I(v)) if x.dtype != Bool => Num::I(v.iter().map(|a| a.signum()).collect()),
        // 0 and NaN are their own sign.
        ("Sign", Num::F(v)) => Num::F(v.iter().map(|&a| if a == 0.0 || a.is_nan() { a } else { a.signum() }).collect()),
        ("Sign", Num::D(v)) => Num::D(v.iter().map(|&a| if a == 0.0 || a.is_nan() { a } else { a.signum() }).collect()),
        ("Abs", Num::F(v)) => Num::F(v.iter().map(|a| a.abs()).collect()),
        ("Abs", Num::D(v)) => Num::D(v.iter().map(|a| a.abs()).collect()),
        ("Not", Num::I(v)) if x.dtype == Bool => Num::I(v.iter().map(|&a| (a == 0) as i64).collect()),
        _ => return None,
    };
    encode(&out, x.dtype, x.dims.clone())
}

/// `Sqrt`, `Log`, `Exp`, `Floor`, `Ceil`, `Round`. Exact everywhere: rounding to an integer and the
/// square root (one IEEE operation). libm's log and exp are not correctly rounded, so a float64
/// result could differ by machine; in float32 they are evaluated in float64 and rounded once,
/// which gives the correctly rounded result (a runtime's own routine is at most an ulp from it).
fn float_unary(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0)?;
    let (f, exact): (fn(f64) -> f64, bool) = match node.op_type.as_str() {
        "Sqrt" => (f64::sqrt, true),
        "Floor" => (f64::floor, true),
        "Ceil" => (f64::ceil, true),
        "Round" => (f64::round_ties_even, true),
        "Log" => (f64::ln, false),
        _ => (f64::exp, false),
    };
    let out = match decode(x)? {
        Num::F(v) => Num::F(v.iter().map(|&a| f(a as f64) as f32).collect()),
        Num::D(v) if exact => Num::D(v.iter().map(|&a| f(a)).collect()),
        _ => return None,
    };
    encode(&out, x.dtype, x.dims.clone())
}

/// Arithmetic, comparisons, logic and bitwise operators of two inputs of one type.
fn binary(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let (a, b) = (arg(inputs, 0)?, arg(inputs, 1)?);
    if a.dtype != b.dtype || inputs.len() != 2 {
        return None;
    }
    let dims = broadcast_dims(&a.dims, &b.dims)?;
    let (ia, ib) = (broadcast_index(&a.dims, &dims)?, broadcast_index(&b.dims, &dims)?);
    binary_numbers(&node.op_type, a.dtype, &decode(a)?, &decode(b)?, &ia, &ib, dims)
}

fn binary_numbers(
    op: &str,
    dtype: DType,
    a: &Num,
    b: &Num,
    ia: &[usize],
    ib: &[usize],
    dims: Vec<i64>,
) -> Option<TensorData> {
    let cmp = matches!(op, "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual");
    let logic = matches!(op, "And" | "Or");
    if logic != (dtype == Bool) {
        return None;
    }
    let bools = |f: &dyn Fn(usize) -> bool| Num::I((0..ia.len()).map(|k| f(k) as i64).collect());
    macro_rules! compare {
        ($x:expr, $y:expr) => {{
            let (x, y) = ($x, $y);
            match op {
                "Equal" => bools(&|k| x[ia[k]] == y[ib[k]]),
                "Less" => bools(&|k| x[ia[k]] < y[ib[k]]),
                "Greater" => bools(&|k| x[ia[k]] > y[ib[k]]),
                "LessOrEqual" => bools(&|k| x[ia[k]] <= y[ib[k]]),
                _ => bools(&|k| x[ia[k]] >= y[ib[k]]),
            }
        }};
    }
    let out = match (a, b) {
        (Num::I(x), Num::I(y)) if cmp => compare!(x, y),
        (Num::F(x), Num::F(y)) if cmp => compare!(x, y),
        (Num::D(x), Num::D(y)) if cmp => compare!(x, y),
        (Num::I(x), Num::I(y)) if logic => {
            let and = op == "And";
            bools(&|k| if and { x[ia[k]] != 0 && y[ib[k]] != 0 } else { x[ia[k]] != 0 || y[ib[k]] != 0 })
        }
        (Num::I(x), Num::I(y)) => {
            let mut v = Vec::with_capacity(ia.len());
            for k in 0..ia.len() {
                let (p, q) = (x[ia[k]], y[ib[k]]);
                v.push(match op {
                    "Add" => p.wrapping_add(q),
                    "Sub" => p.wrapping_sub(q),
                    "Mul" => p.wrapping_mul(q),
                    // Division by zero traps and MIN / -1 overflows in C++: not folded.
                    "Div" if q == 0 || q == -1 => return None,
                    "Div" => p / q,
                    "Max" => p.max(q),
                    "Min" => p.min(q),
                    // Sign-extended (or zero-extended) values keep their extension.
                    "BitwiseAnd" => p & q,
                    "BitwiseOr" => p | q,
                    "BitwiseXor" => p ^ q,
                    _ => return None,
                });
            }
            Num::I(v)
        }
        (Num::F(x), Num::F(y)) => Num::F(float_op(op, x, y, ia, ib)?),
        (Num::D(x), Num::D(y)) => Num::D(float_op(op, x, y, ia, ib)?),
        _ => return None,
    };
    encode(&out, if cmp || logic { Bool } else { dtype }, dims)
}

/// One IEEE operation per element (bit-exact everywhere). Max/Min are not folded: runtimes differ
/// on NaN.
fn float_op<T>(op: &str, x: &[T], y: &[T], ia: &[usize], ib: &[usize]) -> Option<Vec<T>>
where
    T: Copy
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>,
{
    let f: fn(T, T) -> T = match op {
        "Add" => |p, q| p + q,
        "Sub" => |p, q| p - q,
        "Mul" => |p, q| p * q,
        "Div" => |p, q| p / q,
        _ => return None,
    };
    Some((0..ia.len()).map(|k| f(x[ia[k]], y[ib[k]])).collect())
}

/// A float op of a large constant with a small one that broadcasts to the large one's shape.
fn derive_binary(node: &Node, inputs: &[Option<&TensorData>], second: bool) -> Option<TensorData> {
    if inputs.len() != 2 {
        return None;
    }
    let (x, k) = if second { (arg(inputs, 1)?, arg(inputs, 0)?) } else { (arg(inputs, 0)?, arg(inputs, 1)?) };
    if k.numel() > INPUT_LIMIT || broadcast_dims(&x.dims, &k.dims)? != x.dims {
        return None;
    }
    Derived::binary(x, BinOp::from_name(&node.op_type)?, k, second)
}

fn where_(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let (c, a, b) = (arg(inputs, 0)?, arg(inputs, 1)?, arg(inputs, 2)?);
    if c.dtype != Bool || a.dtype != b.dtype {
        return None;
    }
    let dims = broadcast_dims(&broadcast_dims(&c.dims, &a.dims)?, &b.dims)?;
    let (ci, ai, bi) =
        (broadcast_index(&c.dims, &dims)?, broadcast_index(&a.dims, &dims)?, broadcast_index(&b.dims, &dims)?);
    let es = a.dtype.size()?;
    let mut raw = Vec::with_capacity(ci.len() * es);
    for k in 0..ci.len() {
        let (src, i) = if *c.raw.get(ci[k])? != 0 { (a, ai[k]) } else { (b, bi[k]) };
        raw.extend_from_slice(src.raw.get(i * es..i * es + es)?);
    }
    Some(TensorData { dtype: a.dtype, dims, raw: raw.into() })
}

/// min(max(x, lo), hi) with scalar bounds (absent ones open): exact, NaN left to the runtime.
fn clip(_: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    let x = arg(inputs, 0).filter(|x| x.dtype != Uint64)?;
    // Some(None): no bound; None: a bound that cannot be folded.
    let bound = |i: usize| match arg(inputs, i) {
        None => Some(None),
        Some(b) if b.dtype == x.dtype && b.numel() == 1 => decode(b).map(Some),
        Some(_) => None,
    };
    let (lo, hi) = (bound(1)?, bound(2)?);
    let out = match decode(x)? {
        Num::F(v) if !v.iter().any(|a| a.is_nan()) => {
            let end = |b: Option<Num>, open: f32| match b {
                None => Some(open),
                Some(Num::F(b)) if !b[0].is_nan() => Some(b[0]),
                Some(_) => None,
            };
            let (lo, hi) = (end(lo, f32::NEG_INFINITY)?, end(hi, f32::INFINITY)?);
            Num::F(v.iter().map(|&a| a.max(lo).min(hi)).collect())
        }
        Num::I(v) => {
            let end = |b: Option<Num>, open: i64| match b {
                None => Some(open),
                Some(Num::I(b)) => Some(b[0]),
                Some(_) => None,
            };
            let (lo, hi) = (end(lo, i64::MIN)?, end(hi, i64::MAX)?);
            Num::I(v.iter().map(|&a| a.max(lo).min(hi)).collect())
        }
        _ => return None,
    };
    encode(&out, x.dtype, x.dims.clone())
}
