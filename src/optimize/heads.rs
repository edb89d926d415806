//! Attention over (batch, sequence, heads x head size), as opset 23 takes it.
//!
//! A program computes attention around the heads: its query, key and value (batch, sequence,
//! heads, head size) are each transposed to put the heads first, the query and key rotated
//! (`RotaryEmbedding`), and the result transposed back so that its heads merge (`Reshape`). Opset
//! 23's `Attention` takes the 3-D values themselves (`q_num_heads`, `kv_num_heads`; its past and
//! present key and value stay 4-D), and so does its `RotaryEmbedding` (`num_heads`). This pass
//! writes those forms: each Transpose in becomes a Reshape merging the last two axes, which reads
//! through a Reshape to heads (then it regroups nothing, and no-op removal drops it, and the
//! Reshape to heads dies), and the Transpose and Reshape out are gone: 8 nodes per decoder layer
//! fewer.
//!
//! A pass of its own, not an e-graph rule: the attention that reads its cache has three outputs,
//! and e-graph windows hold single-output nodes only. It runs once after the e-graph, which made
//! the `Attention` and `RotaryEmbedding` nodes (`optimize_for`). Measured in ONNX Runtime:
//! `reports/deploy.md`, `attention-heads`.

use super::edit::{attr_ints, new_constant, Uses};
use super::Fire;
use crate::hash::FxHashMap;
use crate::onnx::ir::{AttrValue, Attribute, Dim, Model, Node, TensorData, Value};

/// The transposition between (batch, sequence, heads, size) and (batch, heads, sequence, size).
const SWAP: [i64; 4] = [0, 2, 1, 3];

/// A query, key or value the program moved heads-first.
struct Moved {
    /// The Transpose to heads-first (becomes the Reshape merging the heads).
    transpose: usize,
    /// Its rotation (query and key, when rotated).
    rotation: Option<usize>,
    /// The (batch, sequence, heads, head size) value it moved.
    x: Value,
    heads: i64,
    /// (batch, sequence, heads x head size).
    merged: Vec<Dim>,
}

/// One attention to rewrite.
struct Plan {
    attention: usize,
    /// Query, key, value.
    moved: [Moved; 3],
    /// The Transpose and the Reshape out, and the Reshape's (3-D) output.
    out: (usize, usize, Value),
}

pub(crate) fn run(model: &mut Model, fired: &mut super::Firings) -> usize {
    if !model.graph.nodes.iter().any(is_4d_attention) {
        return 0;
    }
    let uses = Uses::new(model);
    let mut producer: FxHashMap<Value, usize> = FxHashMap::default();
    let mut reader: FxHashMap<Value, usize> = FxHashMap::default();
    for (i, n) in model.graph.nodes.iter().enumerate() {
        producer.extend(n.outputs.iter().map(|&o| (o, i)));
        reader.extend(n.inputs.iter().flatten().map(|&v| (v, i)));
    }
    let graph = Graph { model, uses: &uses, producer: &producer, reader: &reader };
    let plans: Vec<Plan> = (0..model.graph.nodes.len()).filter_map(|i| graph.plan(i)).collect();
    let mut dropped = vec![false; model.graph.nodes.len()];
    // One Reshape target per merged size (as deduplication would merge them).
    let mut targets: FxHashMap<i64, Value> = FxHashMap::default();
    for plan in &plans {
        for m in &plan.moved {
            let Some(&Dim::Fixed(size)) = m.merged.last() else { continue };
            // `Reshape`'s 0 keeps the batch and the sequence.
            let target = *targets
                .entry(size)
                .or_insert_with(|| new_constant(model, TensorData::from_i64s(vec![3], &[0, 0, size])));
            // A Reshape to heads of the merged value is read through (the Reshape here then
            // regroups nothing, and no-op removal drops it).
            let source = producer
                .get(&m.x)
                .map(|&p| &model.graph.nodes[p])
                .filter(|p| p.domain.is_empty() && p.op_type == "Reshape")
                .and_then(|p| p.inputs.first().copied().flatten())
                .filter(|&s| model.value(s).shape.as_deref() == Some(&m.merged[..]))
                .unwrap_or(m.x);
            let node = &mut model.graph.nodes[m.transpose];
            node.op_type = "Reshape".into();
            node.inputs = vec![Some(source), Some(target)];
            node.attributes.clear();
            let flat = node.outputs[0];
            model.values[flat.index()].shape = Some(m.merged.clone());
            if let Some(r) = m.rotation {
                let node = &mut model.graph.nodes[r];
                node.attributes.push(int_attr("num_heads", m.heads));
                let rotated = node.outputs[0];
                model.values[rotated.index()].shape = Some(m.merged.clone());
            }
        }
        let node = &mut model.graph.nodes[plan.attention];
        node.attributes.push(int_attr("q_num_heads", plan.moved[0].heads));
        node.attributes.push(int_attr("kv_num_heads", plan.moved[1].heads));
        node.outputs[0] = plan.out.2;
        dropped[plan.out.0] = true;
        dropped[plan.out.1] = true;
        fired.fire("heads: attention over merged heads");
    }
    if !plans.is_empty() {
        let mut i = 0;
        model.graph.nodes.retain(|_| {
            i += 1;
            !dropped[i - 1]
        });
    }
    plans.len()
}

fn int_attr(name: &str, v: i64) -> Attribute {
    Attribute { name: name.into(), value: AttrValue::Int(v) }
}

fn is_4d_attention(n: &Node) -> bool {
    n.domain.is_empty() && n.op_type == "Attention" && n.attr("q_num_heads").is_none()
}

struct Graph<'a> {
    model: &'a Model,
    uses: &'a Uses,
    producer: &'a FxHashMap<Value, usize>,
    /// A reader of each value (the only one where a check needs it: `single` first).
    reader: &'a FxHashMap<Value, usize>,
}

impl Graph<'_> {
    fn node(&self, i: usize) -> &Node {
        &self.model.graph.nodes[i]
    }

    /// Read by one node, not a graph output.
    fn single(&self, v: Value) -> bool {
        self.uses.count(v) == 1 && !self.uses.is_output(v)
    }

    fn op(&self, i: usize, op: &str) -> bool {
        let n = self.node(i);
        n.domain.is_empty() && n.op_type == op
    }

    /// The (batch, sequence, heads, size) shape of `v`, heads and size known.
    fn heads(&self, v: Value) -> Option<(&[Dim], i64, i64)> {
        match self.model.value(v).shape.as_deref()? {
            s @ [_, _, Dim::Fixed(h), Dim::Fixed(d)] => Some((s, *h, *d)),
            _ => None,
        }
    }

    /// The only reader of `v` (the first output of node `i`), when it is a `op`.
    fn only_reader(&self, i: usize, op: &str) -> Option<usize> {
        let v = *self.node(i).outputs.first()?;
        let r = *self.reader.get(&v).filter(|_| self.single(v))?;
        self.op(r, op).then_some(r)
    }

    fn plan(&self, a: usize) -> Option<Plan> {
        let n = self.node(a);
        if !is_4d_attention(n) {
            return None;
        }
        let input = |i: usize| n.inputs.get(i).copied().flatten();
        let [q, k, v] = [(0, true), (1, true), (2, false)].map(|(i, rotated)| self.moved(input(i)?, rotated));
        let (q, k, v) = (q?, k?, v?);
        let ((qs, _, _), (ks, _, _), (vs, _, dv)) = (self.heads(q.x)?, self.heads(k.x)?, self.heads(v.x)?);
        // One batch; key and value over one sequence and heads; query and key of one head size;
        // the query's heads in groups of the key's.
        if qs[0] != ks[0] || ks[..3] != vs[..3] || qs[3] != ks[3] || q.heads % k.heads != 0 {
            return None;
        }
        // Out: (batch, heads, sequence, value size) transposed back and its heads merged.
        let t = self.only_reader(a, "Transpose")?;
        let r = self.only_reader(t, "Reshape")?;
        let (tn, rn) = (self.node(t), self.node(r));
        let moved = rn.inputs.first().copied().flatten() == tn.outputs.first().copied();
        if attr_ints(tn, "perm") != Some(&SWAP[..]) || !moved {
            return None;
        }
        let out = *rn.outputs.first()?;
        let merged = [qs[0].clone(), qs[1].clone(), Dim::Fixed(q.heads * dv)];
        if self.model.value(out).shape.as_deref() != Some(&merged[..]) {
            return None;
        }
        Some(Plan { attention: a, moved: [q, k, v], out: (t, r, out) })
    }

    /// The Transpose to heads-first that `v` is (or that it rotates, when `rotated` may be), read
    /// only on this way.
    fn moved(&self, v: Value, rotated: bool) -> Option<Moved> {
        let mut p = *self.producer.get(&v)?;
        let mut rotation = None;
        if rotated && self.op(p, "RotaryEmbedding") {
            let rn = self.node(p);
            // The 3-D form reads the caches per position as the 4-D one does; with position ids
            // or already 3-D, left alone.
            if !self.single(v) || rn.attr("num_heads").is_some() || rn.inputs.get(3).copied().flatten().is_some() {
                return None;
            }
            rotation = Some(p);
            p = *self.producer.get(&rn.inputs.first().copied().flatten()?)?;
        }
        let t = self.node(p);
        let out = *t.outputs.first()?;
        if !self.op(p, "Transpose") || attr_ints(t, "perm") != Some(&SWAP[..]) || !self.single(out) {
            return None;
        }
        if rotation.is_none() && out != v {
            return None;
        }
        let x = t.inputs.first().copied().flatten()?;
        let (s, heads, size) = self.heads(x)?;
        let merged = vec![s[0].clone(), s[1].clone(), Dim::Fixed(heads * size)];
        Some(Moved { transpose: p, rotation, x, heads, merged })
    }
}
