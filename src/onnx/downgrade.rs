//! Older forms for older opsets. The builder's methods (`ops.rs`) write each operator in the form
//! of its newest version; right after a node is built, [`Builder::downgrade`] rewrites it into the
//! form the export's opset has, or records why it cannot be expressed there. Translations stay
//! written against one form ("reading a translation is reading the ONNX it emits").
//!
//! Which forms an operator's older versions lack, from which opset, and how an older opset gets
//! each is the operator table's ([`operators::Form`]); here is how the builder carries out the
//! rewrites the table names ([`Rewrite`]): the same operator in another form (`Reduce*` axes as an
//! attribute, `Split` sizes instead of `num_outputs`, `DFT`'s axis attribute, `Shape` then
//! `Slice`), or an operator the opset lacks written as its ONNX function body or an exact
//! equivalent (`LayerNormalization`, `HardSwish`, `Trilu`, `BitwiseNot`). A form nothing older
//! computes is a [`BuildError`] naming the operator, the form and the lowest opset that has it;
//! the lowering adds the FX node.
//!
//! At the newest forms (opset 20 and above) nothing here runs, so those exports do not change.

use super::builder::{BuildError, Builder};
use super::ir::{AttrValue, Attribute, DType, Dim, Node, TensorData, Value};
use super::operators::{self, FormCtx, Older, Rewrite};

fn int_attr(node: &Node, name: &str) -> Option<i64> {
    match node.attr(name) {
        Some(AttrValue::Int(v)) => Some(*v),
        _ => None,
    }
}

fn input(node: &Node, i: usize) -> Option<Value> {
    node.inputs.get(i).copied().flatten()
}

impl Builder {
    /// Rewrite node `*node` (the last of the current graph), an `op_type` whose builder form is
    /// valid from opset `since_version`, for the export's opset: the first of the operator's
    /// older forms (the operator table's [`operators::Form`]s) that the opset lacks and the node
    /// uses decides. Returns the outputs of a replacement when the node was replaced (it is then
    /// gone), `None` when the node stays (as it was, rewritten, or with an error recorded;
    /// `*node` is then its position, still the last).
    pub(super) fn downgrade(
        &mut self,
        node: &mut usize,
        op_type: &'static str,
        since_version: i64,
        n_outputs: usize,
    ) -> Option<Vec<Value>> {
        let opset = self.opset();
        if opset >= 20 && since_version <= opset {
            return None;
        }
        let too_old = |since_version| BuildError::OpsetTooOld { op_type, since_version, opset };
        let record = operators::get(op_type);
        let introduced = record.and_then(|op| op.introduced);
        if let Some(introduced) = introduced.filter(|&v| opset < v) {
            self.errors.push(too_old(introduced));
            return None;
        }
        let form = record.and_then(|op| {
            let ctx = FormCtx { node: self.node_ref(*node), facts: self, outputs: n_outputs };
            op.forms.iter().find(|f| opset < f.since && (f.used)(&ctx))
        });
        let error = match form.map(|f| (f, f.older)) {
            Some((f, Older::Nothing)) => {
                Some(BuildError::FormTooOld { op_type, form: f.form, since_version: f.since, opset })
            }
            Some((_, Older::DropAttribute(name))) => {
                self.drop_attribute(*node, name);
                None
            }
            Some((f, Older::Rewrite(rewrite))) => return self.rewrite(node, op_type, rewrite, f.since, n_outputs),
            None => None,
        };
        match error {
            Some(e) => self.errors.push(e),
            // An operator whose older versions its forms describe is valid at any opset from the
            // one it was introduced in.
            None if since_version > opset && introduced.is_none() => self.errors.push(too_old(since_version)),
            None => {}
        }
        None
    }

    /// Apply `rewrite` to node `*node`, whose form needs opset `since`: the outputs of its
    /// replacement, or `None` when it stays (rewritten in place, or with an error recorded).
    fn rewrite(
        &mut self,
        node: &mut usize,
        op_type: &'static str,
        rewrite: Rewrite,
        since: i64,
        n_outputs: usize,
    ) -> Option<Vec<Value>> {
        let opset = self.opset();
        let at = *node;
        match rewrite {
            Rewrite::AxesAttribute => self.reduce_axes_attribute(at, op_type),
            Rewrite::SplitSizes => {
                self.split_without_num_outputs(at);
                None
            }
            Rewrite::PadAxesAtRunTime => {
                if let Some(e) = self.pad_axes_at_run_time(node, op_type) {
                    self.errors.push(e);
                }
                None
            }
            Rewrite::ShapeThenSlice => Some(self.shape_then_slice(at)),
            Rewrite::DftAxisAttribute => {
                if let Some(e) = self.dft_axis_attribute(at, op_type) {
                    self.errors.push(e);
                }
                None
            }
            Rewrite::LayerNormBody => self.layer_norm_body(at, op_type, n_outputs),
            Rewrite::HardSwishBody => Some(self.hard_swish_body(at)),
            Rewrite::TriluByMask => Some(self.trilu_by_mask(at)),
            Rewrite::BitwiseNotBySub => {
                let outs = self.bitwise_not_by_sub(at);
                if outs.is_none() {
                    self.errors.push(BuildError::OpsetTooOld { op_type, since_version: since, opset });
                }
                outs
            }
            // Not an older form: the builder applies it at every opset (`legalize.rs`).
            Rewrite::PadAxesSpread => None,
        }
    }

    fn node_ref(&self, node: usize) -> &Node {
        &self.graphs.last().expect("the main graph is never popped").nodes[node]
    }

    /// Remove attribute `name` of node `node` (an older version's default).
    fn drop_attribute(&mut self, node: usize, name: &str) {
        self.graph_mut().nodes[node].attributes.retain(|a| a.name != name);
    }

    /// Remove the last node of the current graph (being replaced), returning it.
    fn take_node(&mut self, node: usize) -> Node {
        let nodes = &mut self.graph_mut().nodes;
        debug_assert_eq!(node + 1, nodes.len(), "the node being finished is the last one");
        nodes.remove(node)
    }

    /// `Reduce*` before opset 18: constant axes become the `axes` attribute; `noop_with_empty_axes`
    /// with no axes is an `Identity`.
    fn reduce_axes_attribute(&mut self, node: usize, op_type: &'static str) -> Option<Vec<Value>> {
        let n = self.node_ref(node);
        let noop = int_attr(n, "noop_with_empty_axes").unwrap_or(0) != 0;
        let axes = match input(n, 1) {
            None => Some(Vec::new()),
            Some(v) => self.constant(v).and_then(TensorData::to_i64s),
        };
        let Some(axes) = axes else {
            let opset = self.opset();
            self.errors.push(BuildError::FormTooOld { op_type, form: "with computed axes", since_version: 18, opset });
            return None;
        };
        if axes.is_empty() && noop {
            let n = self.take_node(node);
            let x = input(&n, 0)?;
            return Some(vec![self.Identity(x)]);
        }
        let n = &mut self.graph_mut().nodes[node];
        n.inputs.truncate(1);
        n.attributes.retain(|a| a.name != "noop_with_empty_axes");
        if !axes.is_empty() {
            n.attributes.push(Attribute { name: "axes".into(), value: AttrValue::Ints(axes) });
        }
        None
    }

    /// `Split` with `num_outputs` before opset 18: without it, version 13 splits into as many
    /// equal parts as it has outputs, the same where the size divides; a static size that does
    /// not divide gets the sizes `num_outputs` gives (equal parts, the last one smaller).
    fn split_without_num_outputs(&mut self, node: usize) {
        let n = self.node_ref(node);
        let parts = int_attr(n, "num_outputs").unwrap_or(1).max(1);
        let axis = int_attr(n, "axis").unwrap_or(0);
        let size = input(n, 0).and_then(|x| self.shape(x)).and_then(|s| {
            let r = s.len() as i64;
            let a = if axis < 0 { axis + r } else { axis };
            match s.get(usize::try_from(a).ok()?) {
                Some(Dim::Fixed(d)) => Some(*d),
                _ => None,
            }
        });
        let split = match size {
            Some(d) if d % parts != 0 => {
                let chunk = (d + parts - 1) / parts;
                let mut sizes = vec![chunk; parts as usize - 1];
                sizes.push(d - chunk * (parts - 1));
                Some(self.const_i64s(&sizes))
            }
            _ => None,
        };
        let n = &mut self.graph_mut().nodes[node];
        n.attributes.retain(|a| a.name != "num_outputs");
        if let Some(split) = split {
            n.inputs.truncate(1);
            n.inputs.push(Some(split));
        }
    }

    /// `Pad` with an `axes` input before opset 18, where `legalize_pad_axes` could not spread the
    /// pads over every axis (the input's rank is not known here): the same spreading at run time,
    /// the rank being the size of the input's shape. Computed axes have no older form.
    fn pad_axes_at_run_time(&mut self, node: &mut usize, op_type: &'static str) -> Option<BuildError> {
        let n = self.node_ref(*node);
        let (x, pads, axes) = (input(n, 0)?, input(n, 1)?, input(n, 3)?);
        let Some(axes) = self.constant(axes).and_then(TensorData::to_i64s) else {
            let opset = self.opset();
            return Some(BuildError::FormTooOld { op_type, form: "with computed axes", since_version: 18, opset });
        };
        // The new nodes go in front of the Pad, which stays the last node.
        let pad = self.take_node(*node);
        let shape = self.Shape(x).out();
        let rank = self.Shape(shape).out();
        let twice = self.Add(rank, rank);
        let zeros = self.ConstantOfShape(twice).value(TensorData::from_i64s(vec![1], &[0])).out();
        // Where each given pad goes among the 2·rank: begins at the axis, ends rank later.
        let negative: Vec<i64> = axes.iter().map(|&a| i64::from(a < 0)).collect();
        let negative = self.const_i64s(&negative);
        let axes = self.const_i64s(&axes);
        let shift = self.Mul(rank, negative);
        let begins = self.Add(axes, shift);
        let ends = self.Add(begins, rank);
        let slots = self.Concat(&[begins, ends]).axis(0).out();
        let full = self.ScatterElements(zeros, slots, pads).axis(0).out();
        let mut pad = pad;
        pad.inputs[1] = Some(full);
        pad.inputs.truncate(3);
        while pad.inputs.last() == Some(&None) {
            pad.inputs.pop();
        }
        let nodes = &mut self.graph_mut().nodes;
        nodes.push(pad);
        *node = nodes.len() - 1;
        None
    }

    /// `DFT` at opsets 17 to 19: version 17 takes the axis as an attribute.
    fn dft_axis_attribute(&mut self, node: usize, op_type: &'static str) -> Option<BuildError> {
        let opset = self.opset();
        let n = self.node_ref(node);
        let axis = match input(n, 2) {
            // Version 20's default axis.
            None => Some(-2),
            Some(a) => self.constant(a).and_then(TensorData::to_i64s).and_then(|v| (v.len() == 1).then(|| v[0])),
        };
        let Some(axis) = axis else {
            return Some(BuildError::FormTooOld { op_type, form: "with a computed axis", since_version: 20, opset });
        };
        let n = &mut self.graph_mut().nodes[node];
        n.inputs.truncate(2);
        while n.inputs.last() == Some(&None) {
            n.inputs.pop();
        }
        n.attributes.push(Attribute { name: "axis".into(), value: AttrValue::Int(axis) });
        None
    }

    /// `Shape` with `start`/`end` before opset 15: the whole shape, sliced (`Slice` clamps its
    /// bounds as `Shape` does).
    fn shape_then_slice(&mut self, node: usize) -> Vec<Value> {
        let n = self.take_node(node);
        let (start, end) = (int_attr(&n, "start").unwrap_or(0), int_attr(&n, "end").unwrap_or(i64::MAX));
        let x = n.inputs[0].expect("Shape has an input");
        let shape = self.Shape(x).out();
        let (starts, ends) = (self.const_i64s(&[start]), self.const_i64s(&[end]));
        vec![self.Slice(shape, starts, ends, None, None)]
    }

    /// `HardSwish` before opset 14: its ONNX function body, `X · HardSigmoid(X)` with alpha 1/6
    /// and beta 0.5.
    fn hard_swish_body(&mut self, node: usize) -> Vec<Value> {
        let n = self.take_node(node);
        let x = n.inputs[0].expect("HardSwish has an input");
        let hs = self.HardSigmoid(x).alpha(1.0 / 6.0).beta(0.5).out();
        vec![self.Mul(x, hs)]
    }

    /// `Trilu` before opset 14: a `Where` over the positions whose column minus row is at least
    /// `k` (upper) or at most `k` (lower); the same elements, zeros elsewhere.
    fn trilu_by_mask(&mut self, node: usize) -> Vec<Value> {
        let n = self.take_node(node);
        let x = n.inputs[0].expect("Trilu has an input");
        let upper = int_attr(&n, "upper").unwrap_or(1) != 0;
        let k = match input(&n, 1) {
            Some(k) => k,
            None => self.scalar_i64(0),
        };
        let shape = self.Shape(x).out();
        let (rows_at, cols_at) = (self.scalar_i64(-2), self.scalar_i64(-1));
        let rows = self.Gather(shape, rows_at).axis(0).out();
        let cols = self.Gather(shape, cols_at).axis(0).out();
        let (zero, one) = (self.scalar_i64(0), self.scalar_i64(1));
        let row = self.Range(zero, rows, one);
        let last = self.const_i64s(&[-1]);
        let row = self.Unsqueeze(row, last);
        let col = self.Range(zero, cols, one);
        let diagonal = self.Sub(col, row);
        let keep = if upper { self.GreaterOrEqual(diagonal, k) } else { self.LessOrEqual(diagonal, k) };
        let dtype = self.dtype(x).unwrap_or(DType::Float);
        let zeros = self.scalar(dtype, 0.0);
        vec![self.Where(keep, x, zeros)]
    }

    /// `BitwiseNot` before opset 18: all ones minus `x`, which flips every bit and never
    /// overflows (`-1 - x` for signed types).
    fn bitwise_not_by_sub(&mut self, node: usize) -> Option<Vec<Value>> {
        let x = input(self.node_ref(node), 0)?;
        let dtype = self.dtype(x).filter(|t| t.is_int())?;
        self.take_node(node);
        let ones = self.constant_tensor(TensorData { dtype, dims: vec![], raw: vec![0xff; dtype.size()?].into() });
        Some(vec![self.Sub(ones, x)])
    }

    /// `LayerNormalization` before opset 17: its ONNX function body, as torch computes it: the
    /// mean and the biased variance over the axes from `axis` on, `(x - mean) / sqrt(var + eps)`,
    /// times `Scale` plus `B`. float16 and bfloat16 are normalized in float32 (torch's
    /// accumulation type; the operator's `stash_type` 1), the others in their own type. `Mean`
    /// and `InvStdDev` come out as that computation type.
    fn layer_norm_body(&mut self, node: usize, op_type: &'static str, n_outputs: usize) -> Option<Vec<Value>> {
        let x = input(self.node_ref(node), 0)?;
        let Some(rank) = self.rank(x) else {
            let opset = self.opset();
            self.errors.push(BuildError::FormTooOld {
                op_type,
                form: "of an input of unknown rank",
                since_version: 17,
                opset,
            });
            return None;
        };
        let n = self.take_node(node);
        let (scale, bias) = (n.inputs.get(1).copied().flatten()?, input(&n, 2));
        let epsilon = match n.attr("epsilon") {
            Some(AttrValue::Float(e)) => *e,
            _ => 1e-5,
        };
        let axis = int_attr(&n, "axis").unwrap_or(-1);
        let rank = rank as i64;
        let axis = if axis < 0 { axis + rank } else { axis };
        let axes: Vec<i64> = (axis..rank).collect();
        let t = self.dtype(x).unwrap_or(DType::Float);
        let stash = if matches!(t, DType::Float16 | DType::BFloat16) { DType::Float } else { t };
        let xs = if stash == t { x } else { self.Cast(x).to(stash as i64).out() };
        let axes = self.const_i64s(&axes);
        let mean = self.ReduceMean(xs, Some(axes)).keepdims(1).out();
        let d = self.Sub(xs, mean);
        let dd = self.Mul(d, d);
        let var = self.ReduceMean(dd, Some(axes)).keepdims(1).out();
        let var_eps = self.Add(var, f64::from(epsilon));
        let std = self.Sqrt(var_eps);
        let inv_std = self.Reciprocal(std);
        let normalized = self.Mul(d, inv_std);
        let normalized = if stash == t { normalized } else { self.Cast(normalized).to(t as i64).out() };
        let y = self.Mul(normalized, scale);
        let y = match bias {
            Some(b) => self.Add(y, b),
            None => y,
        };
        let mut outs = vec![y, mean, inv_std];
        outs.truncate(n_outputs.max(1));
        Some(outs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::ir::Dim;

    fn op_types(b: &mut Builder) -> Vec<String> {
        b.graph_mut().nodes.iter().map(|n| n.op_type.clone()).collect()
    }

    fn input_f32(b: &mut Builder, dims: &[i64]) -> Value {
        b.add_input(Some(DType::Float), Some(dims.iter().map(|&d| Dim::Fixed(d)).collect()))
    }

    #[test]
    fn reductions_take_constant_axes_as_an_attribute_before_18() {
        let mut b = Builder::new(17);
        let x = input_f32(&mut b, &[2, 3]);
        let axes = b.const_i64s(&[1]);
        b.ReduceMean(x, Some(axes)).keepdims(0).out();
        let n = &b.graph_mut().nodes[0];
        assert_eq!(n.inputs.len(), 1);
        assert!(matches!(n.attr("axes"), Some(AttrValue::Ints(a)) if a == &[1]));
        assert!(b.take_errors().is_empty());
        // Computed axes have no older form.
        let computed = b.add_input(Some(DType::Int64), Some(vec![Dim::Fixed(1)]));
        b.ReduceMax(x, Some(computed)).out();
        let e = b.take_errors();
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].to_string(),
            "ONNX operator ReduceMax with computed axes needs opset 18 or newer, but the export targets opset 17"
        );
        // ReduceSum's axes are an input from 13 on: unchanged.
        b.ReduceSum(x, Some(axes)).out();
        assert_eq!(b.graph_mut().nodes.last().map(|n| n.inputs.len()), Some(2));
        assert!(b.take_errors().is_empty());
    }

    #[test]
    fn newest_forms_are_kept_at_18_and_above() {
        let mut b = Builder::new(18);
        let x = input_f32(&mut b, &[2, 3]);
        let axes = b.const_i64s(&[1]);
        b.ReduceMean(x, Some(axes)).out();
        b.Shape(x).start(1).out();
        assert_eq!(op_types(&mut b), ["ReduceMean", "Shape"]);
        assert_eq!(b.graph_mut().nodes[0].inputs.len(), 2);
    }

    #[test]
    fn shape_with_bounds_is_a_slice_before_15() {
        let mut b = Builder::new(14);
        let x = input_f32(&mut b, &[2, 3, 4]);
        b.Shape(x).start(1).end(-1).out();
        assert_eq!(op_types(&mut b), ["Shape", "Slice"]);
        assert!(b.graph_mut().nodes[0].attributes.is_empty());
        assert!(b.take_errors().is_empty());
    }

    #[test]
    fn split_sizes_replace_num_outputs_before_18() {
        let mut b = Builder::new(13);
        let x = input_f32(&mut b, &[2, 8]);
        b.Split(x, None).axis(-1).num_outputs(4).outs::<4>();
        let n = &b.graph_mut().nodes[0];
        assert!(n.attr("num_outputs").is_none() && n.inputs.len() == 1, "equal parts: no sizes");
        let y = input_f32(&mut b, &[7]);
        b.Split(y, None).num_outputs(3).outs::<3>();
        let n = b.graph_mut().nodes[1].clone();
        assert_eq!(n.inputs[1].and_then(|s| b.constant(s)).and_then(TensorData::to_i64s), Some(vec![3, 3, 1]));
    }

    #[test]
    fn missing_operators_become_their_function_bodies() {
        let mut b = Builder::new(13);
        let x = input_f32(&mut b, &[2, 4, 4]);
        b.HardSwish(x);
        assert_eq!(op_types(&mut b), ["HardSigmoid", "Mul"]);
        let mut b = Builder::new(16);
        let x = input_f32(&mut b, &[2, 4, 8]);
        let (s, bias) = (input_f32(&mut b, &[8]), input_f32(&mut b, &[8]));
        let [_, mean, inv] = b.LayerNormalization(x, s, Some(bias)).axis(-1).outs::<3>();
        assert!(!op_types(&mut b).contains(&"LayerNormalization".to_string()));
        assert_eq!(b.graph_mut().nodes[0].attr("axes").cloned().map(|a| format!("{a:?}")), Some("Ints([2])".into()));
        assert_eq!((b.dtype(mean), b.dtype(inv)), (Some(DType::Float), Some(DType::Float)));
        assert!(b.take_errors().is_empty());
    }

    #[test]
    fn forms_without_an_older_equivalent_are_errors() {
        let mut b = Builder::new(15);
        let x = input_f32(&mut b, &[2, 4]);
        let i = b.add_input(Some(DType::Int64), Some(vec![Dim::Fixed(2), Dim::Fixed(4)]));
        b.ScatterElements(x, i, x).reduction("add").out();
        let mut b2 = Builder::new(13);
        let y = b2.add_input(Some(DType::Int64), None);
        b2.BitwiseAnd(y, y);
        assert_eq!(
            b.take_errors()[0].to_string(),
            "ONNX operator ScatterElements with a reduction needs opset 16 or newer, but the export targets opset 15"
        );
        assert_eq!(
            b2.take_errors(),
            vec![BuildError::OpsetTooOld { op_type: "BitwiseAnd", since_version: 18, opset: 13 }]
        );
    }
}
