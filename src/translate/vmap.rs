//! `torch.vmap` regions of pre-dispatch programs. `torch._functorch.predispatch` calls bracket ops
//! written for one example: `_vmap_increment_nesting(B)` opens a level, `_add_batch_dim(x, dim,
//! level)` makes `x` vary along it, the ops run, `_remove_batch_dim(y, level, B, dim)` gives the
//! batch dim back as an ordinary one, `_vmap_decrement_nesting()` closes the level.
//!
//! A value that varies along open levels is stored with those batch dims after its own (example)
//! dims, outermost level first: `[example dims..., B1, ..., Bk]`, size 1 at a level it does not
//! vary along. Elementwise ops then broadcast exactly as they would per example once every operand
//! carries all k trailing dims, so their translations run unchanged on operands padded with 1s.
//! Any other op reads dims by position and would need them remapped: inside a region it is refused,
//! with its name, rather than translated wrongly.

use super::dsl::OpError;
use crate::hash::FxHashMap;
use crate::onnx::builder::Builder;
use crate::onnx::ir::{Dim, Value};
use crate::pt2::schema::{self, Argument, SymIntArgument};

const PREFIX: &str = "torch._functorch.predispatch.";

/// Whether `target` is one of the vmap bracket calls (lowered here, not by the table).
pub fn is_bracket(target: &str) -> bool {
    target.starts_with(PREFIX)
}

/// Ops that act element by element (and creations that read only a dtype or a shape), which run
/// on batched operands as they are. By table key without the overload.
const ELEMENTWISE: &[&str] = &[
    "aten::__and__",
    "aten::__or__",
    "aten::__xor__",
    "aten::_assert_tensor_metadata",
    "aten::_to_copy",
    "aten::abs",
    "aten::add",
    "aten::alias",
    "aten::bitwise_and",
    "aten::bitwise_not",
    "aten::bitwise_or",
    "aten::bitwise_xor",
    "aten::ceil",
    "aten::clamp",
    "aten::clamp_max",
    "aten::clamp_min",
    "aten::clone",
    "aten::div",
    "aten::eq",
    "aten::exp",
    "aten::floor",
    "aten::floor_divide",
    "aten::fmod",
    "aten::full_like",
    "aten::ge",
    "aten::gt",
    "aten::isinf",
    "aten::isnan",
    "aten::le",
    "aten::log",
    "aten::logical_and",
    "aten::logical_not",
    "aten::logical_or",
    "aten::logical_xor",
    "aten::lt",
    "aten::masked_fill",
    "aten::maximum",
    "aten::minimum",
    "aten::mul",
    "aten::ne",
    "aten::neg",
    "aten::new_full",
    "aten::new_ones",
    "aten::new_zeros",
    "aten::ones_like",
    "aten::pow",
    "aten::reciprocal",
    "aten::relu",
    "aten::remainder",
    "aten::round",
    "aten::rsqrt",
    "aten::scalar_tensor",
    "aten::sigmoid",
    "aten::sign",
    "aten::sqrt",
    "aten::square",
    "aten::sub",
    "aten::tanh",
    "aten::to",
    "aten::trunc",
    "aten::type_as",
    "aten::where",
    "aten::zeros_like",
];

/// Creations whose result does not vary along any level (`new_ones(x, size)`: only x's type).
const UNBATCHED_CREATIONS: &[&str] = &["aten::new_full", "aten::new_ones", "aten::new_zeros", "aten::scalar_tensor"];

fn base(key: &str) -> &str {
    match key.split_once("::") {
        Some((ns, rest)) => &key[..ns.len() + 2 + rest.split('.').next().unwrap_or(rest).len()],
        None => key,
    }
}

/// A bracket call's output: its name, value and the levels it varies along.
pub type Bound<'g> = (&'g str, Value, Vec<bool>);

/// The open levels and, per batched value, the levels it varies along.
#[derive(Default)]
pub struct Vmap<'g> {
    /// Batch sizes of the open levels, outermost first (known once a value varies along the level).
    levels: Vec<Option<Dim>>,
    /// Per batched value, for each level up to its depth, whether it varies along it (else size 1).
    varies: FxHashMap<&'g str, Vec<bool>>,
}

/// What the driver does with a node inside an open region.
pub enum Plan<'g> {
    /// Not in a region, or reading no batched value: translate as usual.
    Plain,
    /// Translate on these operands (padded to every open level), then record the outputs as
    /// varying along `varies`.
    Batched { values: Vec<(&'g str, Value)>, varies: Vec<bool> },
}

impl<'g> Vmap<'g> {
    pub fn is_open(&self) -> bool {
        !self.levels.is_empty()
    }

    /// Lower a bracket call (`value` reads an argument's ONNX value, `logical_rank` its example
    /// rank): the output to bind, with the levels it varies along ([`Vmap::bind`]).
    pub fn lower_bracket(
        &mut self,
        op: &mut Builder,
        node: &'g schema::Node<'g>,
        value: &dyn Fn(&str) -> Option<Value>,
        logical_rank: &dyn Fn(&str) -> Option<usize>,
    ) -> Result<Option<Bound<'g>>, String> {
        let name = node.target.strip_prefix(PREFIX).unwrap_or(&node.target);
        let arg = |i: usize| node.inputs.get(i).map(|a| &a.arg);
        let int = |i: usize| match arg(i) {
            Some(Argument::Int(n)) | Some(Argument::SymInt(SymIntArgument::AsInt(n))) => Some(*n),
            _ => None,
        };
        let out = node.outputs.first().and_then(|o| match &o {
            Argument::Tensor(t) => Some(t.name.as_str()),
            _ => None,
        });
        match name {
            "lazy_load_decompositions" => Ok(None),
            "_vmap_increment_nesting" => {
                // The size is recorded when a value first varies along the level (its dim there).
                self.levels.push(None);
                Ok(None)
            }
            "_vmap_decrement_nesting" => {
                self.levels.pop().ok_or("_vmap_decrement_nesting without an open level")?;
                Ok(None)
            }
            "_add_batch_dim" => {
                let (Some(Argument::Tensor(x)), Some(in_dim), Some(level)) = (arg(0), int(1), int(2)) else {
                    return Err("_add_batch_dim(x, in_dim, level) with arguments of other kinds".into());
                };
                let level = self.level_index(level)?;
                let v = value(&x.name).ok_or_else(|| format!("`{}` is not defined", x.name))?;
                let r = logical_rank(&x.name).ok_or("the batched input's rank is unknown")?;
                // Pad to the enclosing levels, then move the example dim to the end: level `level`.
                let mut varies = self.varies.get(x.name.as_str()).cloned().unwrap_or_default();
                let v = pad(op, v, r, &mut varies, level);
                let d = normalize(in_dim, r).ok_or("in_dim out of range")?;
                let mut perm: Vec<i64> = (0..(r + level) as i64).filter(|&a| a != d).collect();
                perm.push(d);
                let size = op.shape(v).and_then(|s| s.get(d as usize).cloned());
                let y = op.Transpose(v).perm(&perm).out();
                if self.levels[level].is_none() {
                    self.levels[level] = size;
                }
                varies.push(true);
                let out = out.ok_or("_add_batch_dim without an output")?;
                Ok(Some((out, y, varies)))
            }
            "_remove_batch_dim" => {
                let (Some(Argument::Tensor(x)), Some(level), Some(out_dim)) = (arg(0), int(1), int(3)) else {
                    return Err("_remove_batch_dim(x, level, batch_size, out_dim) with arguments of other kinds".into());
                };
                let level = self.level_index(level)?;
                if level + 1 != self.levels.len() {
                    return Err("_remove_batch_dim of a level that is not the innermost".into());
                }
                let v = value(&x.name).ok_or_else(|| format!("`{}` is not defined", x.name))?;
                let r = logical_rank(&x.name).ok_or("the batched value's rank is unknown")?;
                let mut varies = self.varies.get(x.name.as_str()).cloned().unwrap_or_default();
                let mut v = pad(op, v, r, &mut varies, level + 1);
                if !varies[level] {
                    // Constant along the level: the same example repeated B times.
                    let size = match arg(2) {
                        Some(Argument::Int(n)) | Some(Argument::SymInt(SymIntArgument::AsInt(n))) => {
                            op.const_i64s(&[*n])
                        }
                        Some(Argument::SymInt(SymIntArgument::AsName(n))) => {
                            let s = value(n).ok_or_else(|| format!("`{n}` is not defined"))?;
                            let one = op.const_i64s(&[1]);
                            op.Reshape(s, one).out()
                        }
                        _ => return Err("_remove_batch_dim with a batch size of another kind".into()),
                    };
                    let ones = op.const_i64s(&vec![1; r + level]);
                    let shape = op.Concat(&[ones, size]).axis(0).out();
                    v = op.Expand(v, shape);
                }
                let d = normalize(out_dim, r + 1).ok_or("out_dim out of range")?;
                // [example..., B1..Bk] -> example dims with Bk at out_dim, then B1..B(k-1).
                let last = (r + level) as i64;
                let mut perm: Vec<i64> = (0..r as i64).collect();
                perm.insert(d as usize, last);
                perm.extend(r as i64..last);
                let mut y = op.Transpose(v).perm(&perm).out();
                varies.pop();
                if !varies.iter().any(|&b| b) && !varies.is_empty() {
                    // Varies along no enclosing level: an ordinary value again, without the 1s.
                    let axes: Vec<i64> = ((r + 1)..(r + 1 + varies.len())).map(|a| a as i64).collect();
                    let axes = op.const_i64s(&axes);
                    y = op.Squeeze(y, Some(axes));
                    varies.clear();
                }
                let out = out.ok_or("_remove_batch_dim without an output")?;
                Ok(Some((out, y, varies)))
            }
            other => Err(format!("torch.vmap's `{other}` is not supported")),
        }
    }

    /// How to lower `node` (table key `key`) inside an open region.
    pub fn plan(
        &self,
        op: &mut Builder,
        node: &'g schema::Node<'g>,
        key: &str,
        value: &dyn Fn(&str) -> Option<Value>,
        logical_rank: &dyn Fn(&str) -> Option<usize>,
    ) -> Result<Plan<'g>, OpError> {
        let mut batched = Vec::new();
        for input in &node.inputs {
            crate::fx::for_each_value_name(&input.arg, &mut |n| {
                if self.varies.contains_key(n) {
                    batched.push(n);
                }
            });
        }
        if !self.is_open() || batched.is_empty() {
            return Ok(Plan::Plain);
        }
        if !ELEMENTWISE.contains(&base(key)) {
            return Err(OpError::new(format!(
                "inside torch.vmap only elementwise ops are translated, and `{key}` reads the batched `{}`",
                batched[0]
            ))
            .with_hint("compute it outside the vmap, or translate the whole function in a custom table"));
        }
        let k = self.levels.len();
        if UNBATCHED_CREATIONS.contains(&base(key)) {
            return Ok(Plan::Batched { values: Vec::new(), varies: Vec::new() });
        }
        // Every tensor operand padded to all k levels (batched ones with 1s at levels they skip,
        // the others with k 1s), so that broadcasting matches the example dims and the levels.
        let mut values = Vec::new();
        let mut varies = vec![false; k];
        for input in &node.inputs {
            let mut names = Vec::new();
            crate::fx::for_each_value_name(&input.arg, &mut |n| names.push(n));
            for n in names {
                let (Some(v), Some(r)) = (value(n), logical_rank(n)) else { continue };
                let mut var = self.varies.get(n).cloned().unwrap_or_default();
                let padded = pad(op, v, r, &mut var, k);
                for (a, b) in varies.iter_mut().zip(&var) {
                    *a |= *b;
                }
                values.push((n, padded));
            }
        }
        Ok(Plan::Batched { values, varies })
    }

    /// Record an output that varies along `varies` (none: an ordinary value); its recorded shape, the
    /// example's (`logical_rank` dims), gains the level dims.
    pub fn bind(&mut self, op: &mut Builder, name: &'g str, v: Value, varies: Vec<bool>, logical_rank: usize) {
        if varies.iter().all(|&b| !b) {
            return;
        }
        let dims: Option<Vec<Dim>> =
            self.levels.iter().zip(&varies).map(|(d, &b)| if b { d.clone() } else { Some(Dim::Fixed(1)) }).collect();
        let info = op.info_mut(v);
        match (info.shape.as_mut(), dims) {
            (Some(shape), Some(dims)) if shape.len() == logical_rank => shape.extend(dims),
            (Some(shape), _) if shape.len() == logical_rank + varies.len() => {}
            _ => info.shape = None,
        }
        self.varies.insert(name, varies);
    }

    /// The index of a level number (torch numbers them from 1, outermost first).
    fn level_index(&self, level: i64) -> Result<usize, String> {
        let i = usize::try_from(level - 1).map_err(|_| format!("vmap level {level}"))?;
        if i >= self.levels.len() {
            return Err(format!("vmap level {level} is not open"));
        }
        Ok(i)
    }
}

/// `v` (example rank `r`, carrying `varies.len()` level dims) with trailing 1s up to `k` levels.
fn pad(op: &mut Builder, v: Value, r: usize, varies: &mut Vec<bool>, k: usize) -> Value {
    if varies.len() >= k {
        return v;
    }
    let axes: Vec<i64> = ((r + varies.len())..(r + k)).map(|a| a as i64).collect();
    varies.resize(k, false);
    let axes = op.const_i64s(&axes);
    op.Unsqueeze(v, axes)
}

fn normalize(d: i64, r: usize) -> Option<i64> {
    let d = if d < 0 { d + r as i64 } else { d };
    (0..r as i64).contains(&d).then_some(d)
}
