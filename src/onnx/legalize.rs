//! Element types an operator does not accept: `Greater` of bools, `MatMul` of uint8, `Neg` of
//! uint8 are legal in torch and not in ONNX's type constraints (`ops::type_constraints`). The
//! builder casts such inputs to the nearest type the operator accepts that holds every value, and
//! the outputs of the same type variable back, which computes what torch computes (integer
//! results wrap on the way back as torch's do).
//!
//! The types are those of the operator's version at the export's opset (`ops::allowed_at`).
//!
//! Also forms a runtime mishandles: a `Pad` with an `axes` input gets pads for every axis.

use super::builder::Builder;
use super::ir::{Container, DType, Value};
use super::operators::onnx_schemas::{allowed_at, type_constraints};
use super::operators::{self, Rewrite};

/// Types that hold every value of `t`, nearest first. Nothing narrows and no float becomes an
/// integer; float64 has no wider type, so an operator without float64 stays illegal (the checker
/// then says so) rather than losing precision.
fn carriers(t: DType) -> &'static [DType] {
    use DType::*;
    match t {
        Bool => &[Uint8, Int32, Int64, Float],
        Uint8 => &[Int32, Int16, Uint32, Int64, Float],
        Int8 => &[Int32, Int16, Int64, Float],
        Int16 | Uint16 => &[Int32, Int64, Float],
        Int32 => &[Int64, Double],
        Uint32 => &[Int64, Uint64, Double],
        Float16 | BFloat16 => &[Float, Double],
        Float => &[Double],
        _ => &[],
    }
}

fn allows(mask: u32, t: DType) -> bool {
    mask & (1 << t as u32) != 0
}

/// `allowed` without the types ONNX Runtime has no kernel for (`gaps`, the operator table's
/// `runtime_gaps`): treated like the spec's own gaps, the carriers hold every value, so the result
/// is the same on any runtime. Types without a carrier stay, valid ONNX for the runtimes that have
/// them: float64 (`Conv`, `Erf`, `Resize`) and every bfloat16 computation (onnxruntime's CPU
/// provider has no bfloat16 `Relu`, `Add` or `Gemm`).
fn runtime_allowed(gaps: &[DType], allowed: u32) -> u32 {
    gaps.iter().fold(allowed, |m, t| m & !(1 << *t as u32))
}

/// Whether `op_type` takes `t` where its first type variable binds, in the spec and in
/// onnxruntime: for rewrites that introduce an operator (the optimizer's `Min(Max(..))` → `Clip`),
/// which must not reach a type the builder would have carried.
pub(crate) fn runs_on(op_type: &str, t: DType) -> bool {
    let gaps = operators::get(op_type).map_or(&[][..], |op| op.runtime_gaps);
    type_constraints(op_type).first().is_none_or(|c| allows(runtime_allowed(gaps, c.allowed), t))
}

impl Builder {
    /// Cast the inputs of node `node` (of the current graph) whose type its operator does not
    /// accept. Returns the node's new position (casts go in front of it) and, per output, the type
    /// it must be cast back to.
    pub(super) fn legalize_types(&mut self, node: usize) -> (usize, Vec<(usize, DType)>) {
        let (constraints, record) = {
            let n = &self.graph_mut().nodes[node];
            if !n.domain.is_empty() {
                return (node, Vec::new());
            }
            (type_constraints(&n.op_type), operators::get(&n.op_type))
        };
        let runtime_gaps = record.map_or(&[][..], |op| op.runtime_gaps);
        let gaps = !runtime_gaps.is_empty();
        let opset = self.opset();
        // The operator's version at an older opset may allow fewer types (`Add` of int8 is from 14).
        // Only below 18: from 18 on exports keep the newest version's types, as they always have
        // (bfloat16, which many operators only take from 22, stays as torch.onnx writes it), but
        // for float16 (below 20: `IsInf`, `QuantizeLinear`), ONNX Runtime's everyday type, where
        // the model would not load and float32 holds every value.
        let older = opset < 18;
        let half_gaps = opset < 20;
        let op_type =
            if gaps || older || half_gaps { self.graph_mut().nodes[node].op_type.clone() } else { String::new() };
        let mut node = node;
        let mut back = Vec::new();
        for (index, c) in constraints.iter().enumerate() {
            let at_opset = if older || half_gaps { allowed_at(&op_type, index, opset) } else { None };
            let allowed = match at_opset {
                Some(m) if older => m,
                Some(m) if !allows(m, DType::Float16) => c.allowed & !(1 << DType::Float16 as u32),
                _ => c.allowed,
            };
            let allowed = if gaps { runtime_allowed(runtime_gaps, allowed) } else { allowed };
            let inputs = self.graph_mut().nodes[node].inputs.clone();
            let bound: Vec<usize> = (0..inputs.len())
                .filter(|i| c.inputs.contains(i) || c.variadic_from.is_some_and(|from| *i >= from))
                // A sequence's or an optional's element type is not the tensor type the constraint
                // lists (the schema table records only tensor types).
                .filter(|&i| inputs[i].is_some_and(|v| self.info(v).container == Container::Tensor))
                .collect();
            let types: Vec<Option<DType>> = bound.iter().map(|&i| inputs[i].and_then(|v| self.dtype(v))).collect();
            let Some(Some(t)) = types.first().copied() else { continue };
            if allows(allowed, t) || types.iter().any(|&x| x != Some(t)) {
                continue;
            }
            // An operator that only moves values (`Where`): int64 carries uint64's bits there and
            // back unchanged.
            let moves = record.is_some_and(|op| op.moves_values);
            let moved = (gaps && moves && t == DType::Uint64).then_some(&[DType::Int64][..]);
            let Some(&carrier) = moved.unwrap_or(carriers(t)).iter().find(|&&k| allows(allowed, k)) else { continue };
            for &i in &bound {
                let Some(v) = inputs[i] else { continue };
                let cast = self.cast_before(v, carrier, node);
                node += 1;
                self.graph_mut().nodes[node].inputs[i] = Some(cast);
            }
            back.extend(c.outputs.iter().map(|&o| (o, t)));
        }
        (node, back)
    }

    /// Rewrite node `node`, an `op_type` of the default domain, out of a form ONNX Runtime
    /// mishandles (the operator table's `for_runtimes`). Returns the node's new position.
    pub(super) fn for_runtimes(&mut self, node: usize, op_type: &str) -> usize {
        match operators::get(op_type).and_then(|op| op.for_runtimes) {
            Some(Rewrite::PadAxesSpread) => self.spread_pad_axes(node),
            _ => node,
        }
    }

    /// A `Pad` with an `axes` input, rewritten with pads for every axis and no `axes`: ONNX
    /// Runtime's transpose optimizer moves a Transpose across a Pad by permuting its pads as if
    /// they covered every axis, and the model then fails to run (timm's VOLO). Needs constant
    /// axes and the input's rank, else the node stays. Returns the node's new position.
    fn spread_pad_axes(&mut self, node: usize) -> usize {
        let n = &self.graph_mut().nodes[node];
        let (Some(&Some(x)), Some(&Some(pads)), Some(&Some(axes))) =
            (n.inputs.first(), n.inputs.get(1), n.inputs.get(3))
        else {
            return node;
        };
        let (Some(r), Some(axes)) =
            (self.shape(x).map(|s| s.len() as i64), self.constant(axes).and_then(|t| t.to_i64s()))
        else {
            return node;
        };
        let axes: Option<Vec<i64>> =
            axes.iter().map(|&a| Some(if a < 0 { a + r } else { a }).filter(|a| (0..r).contains(a))).collect();
        let Some(axes) = axes else { return node };
        // Where each given pad goes among the 2·rank: the begins, then the ends.
        let slots: Vec<i64> = axes.iter().copied().chain(axes.iter().map(|a| a + r)).collect();
        let mut node = node;
        let full = match self.constant(pads).and_then(|t| t.to_i64s()) {
            Some(given) if given.len() == slots.len() => {
                let mut full = vec![0; 2 * r as usize];
                for (&slot, v) in slots.iter().zip(given) {
                    full[slot as usize] = v;
                }
                self.const_i64s(&full)
            }
            Some(_) => return node,
            None => {
                let zeros = self.const_i64s(&vec![0; 2 * r as usize]);
                let slots = self.const_i64s(&slots);
                let full = self.ScatterElements(zeros, slots, pads).axis(0).out();
                let nodes = &mut self.graph_mut().nodes;
                if let Some(scatter) = nodes.pop() {
                    nodes.insert(node, scatter);
                }
                node += 1;
                full
            }
        };
        let inputs = &mut self.graph_mut().nodes[node].inputs;
        inputs[1] = Some(full);
        inputs.truncate(3);
        while inputs.last() == Some(&None) {
            inputs.pop();
        }
        node
    }

    /// A `Cast` of `v` to `to`, placed at position `at` of the current graph (before the node
    /// there).
    fn cast_before(&mut self, v: Value, to: DType, at: usize) -> Value {
        let out = self.Cast(v).to(to as i64).out();
        let nodes = &mut self.graph_mut().nodes;
        if let Some(cast) = nodes.pop() {
            nodes.insert(at, cast);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op_types(b: &mut Builder) -> Vec<String> {
        b.graph_mut().nodes.iter().map(|n| n.op_type.clone()).collect()
    }

    #[test]
    fn comparisons_of_bools_compare_bytes() {
        let mut b = Builder::new(20);
        let (x, y) = (b.add_input(Some(DType::Bool), None), b.add_input(Some(DType::Bool), None));
        let gt = b.Greater(x, y);
        assert_eq!(op_types(&mut b), ["Cast", "Cast", "Greater"]);
        // Greater's output has its own type variable: nothing to cast back.
        assert_eq!(b.dtype(gt), Some(DType::Bool));
    }

    /// Pads for some axes become pads for every axis: constant ones folded, computed ones
    /// scattered into zeros in front of the Pad.
    #[test]
    fn pad_with_axes_gets_pads_for_every_axis() {
        use crate::onnx::ir::Dim;
        let mut b = Builder::new(20);
        let dims = vec![Dim::Fixed(2), Dim::Fixed(3), Dim::Fixed(4)];
        let x = b.add_input(Some(DType::Float), Some(dims));
        let (pads, axes) = (b.const_i64s(&[1, 2]), b.const_i64s(&[-1]));
        b.Pad(x, pads, None, Some(axes)).out();
        let node = &b.graph_mut().nodes[0];
        assert_eq!(node.inputs.len(), 2, "no axes, no empty trailing input");
        let full = node.inputs[1].and_then(|v| b.constant(v)).and_then(|t| t.to_i64s());
        assert_eq!(full, Some(vec![0, 0, 1, 0, 0, 2]));
        let computed = b.add_input(Some(DType::Int64), Some(vec![Dim::Fixed(2)]));
        let axes = b.const_i64s(&[1]);
        b.Pad(x, computed, None, Some(axes)).out();
        assert_eq!(op_types(&mut b), ["Pad", "ScatterElements", "Pad"]);
    }

    #[test]
    fn uint8_matmul_runs_in_int32_and_wraps_back() {
        let mut b = Builder::new(20);
        let (x, y) = (b.add_input(Some(DType::Uint8), None), b.add_input(Some(DType::Uint8), None));
        let m = b.MatMul(x, y);
        assert_eq!(op_types(&mut b), ["Cast", "Cast", "MatMul", "Cast"]);
        assert_eq!(b.dtype(m), Some(DType::Uint8));
    }

    #[test]
    fn where_of_bools_runs_on_bytes() {
        // Allowed by ONNX, missing in onnxruntime's CPU kernels.
        let mut b = Builder::new(20);
        let c = b.add_input(Some(DType::Bool), None);
        let (x, y) = (b.add_input(Some(DType::Bool), None), b.add_input(Some(DType::Bool), None));
        let w = b.Where(c, x, y);
        assert_eq!(op_types(&mut b), ["Cast", "Cast", "Where", "Cast"]);
        assert_eq!(b.dtype(w), Some(DType::Bool));
    }

    #[test]
    fn where_of_uint64_moves_int64_bits_and_clip_of_int16_runs_in_int32() {
        let mut b = Builder::new(20);
        let c = b.add_input(Some(DType::Bool), None);
        let (x, y) = (b.add_input(Some(DType::Uint64), None), b.add_input(Some(DType::Uint64), None));
        let w = b.Where(c, x, y);
        assert_eq!(op_types(&mut b), ["Cast", "Cast", "Where", "Cast"]);
        assert_eq!(b.graph_mut().nodes[2].inputs[1].and_then(|v| b.dtype(v)), Some(DType::Int64));
        assert_eq!(b.dtype(w), Some(DType::Uint64));
        let mut b = Builder::new(20);
        let x = b.add_input(Some(DType::Int16), None);
        let lo = b.add_input(Some(DType::Int16), None);
        let clipped = b.Clip(x, Some(lo), None);
        assert_eq!(op_types(&mut b), ["Cast", "Cast", "Clip", "Cast"]);
        assert_eq!(b.dtype(clipped), Some(DType::Int16));
    }

    #[test]
    fn accepted_and_unwidenable_types_are_left_alone() {
        let mut b = Builder::new(20);
        let (x, y) = (b.add_input(Some(DType::Float), None), b.add_input(Some(DType::Float), None));
        let _ = b.MatMul(x, y);
        assert_eq!(op_types(&mut b), ["MatMul"]);
        // Conv has no int64 and float64 holds int64 only in part: no cast, the checker decides.
        let mut b = Builder::new(20);
        let (x, w) = (b.add_input(Some(DType::Int64), None), b.add_input(Some(DType::Int64), None));
        let _ = b.Conv(x, w, None).out();
        assert_eq!(op_types(&mut b), ["Conv"]);
    }
}
