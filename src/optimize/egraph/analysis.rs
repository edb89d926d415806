//! What an e-class knows about its value: element type, symbolic shape, constant contents (when the
//! value is a constant), and how many readers the original graph gave it.
//!
//! Facts come from the model (values of the window, leaves from outside it) or from the rule that
//! built a node; nothing is guessed. Rules only fire on facts they can check exactly, so an unknown
//! shape or type means "skip".

use std::collections::{BTreeMap, HashMap};

use egg::{Analysis, DidMerge, EGraph, Id};

use super::lang::{AttrTable, ONode};
use crate::onnx::ir::{DType, Dim, TensorData};

#[derive(Debug, Clone, Default)]
pub struct Data {
    pub dtype: Option<DType>,
    pub shape: Option<Vec<Dim>>,
    /// Constant contents (weights keep pointing into the archive's memory map).
    pub konst: Option<TensorData>,
    /// Readers in the original graph (saturating; `u32::MAX` when read outside the window or a graph
    /// output). Fusions that would have to keep an intermediate alive check it is 1.
    pub uses: u32,
}

/// Per-window state shared by the analysis and the rules.
#[derive(Debug, Default)]
pub struct OnnxAnalysis {
    pub opset: i64,
    pub attrs: AttrTable,
    /// Constants built by rules (`ONode::Const`).
    pub consts: Vec<TensorData>,
    /// Facts about leaves (values from outside the window), by value index.
    pub leaves: HashMap<u32, Data>,
    /// Facts for the next node `add_with` adds (set just before egg calls `make`).
    pub pending: Option<Data>,
    /// Each rule application is evaluated once: `(rule, bound classes)` → result.
    pub memo: HashMap<(usize, Vec<Id>), Option<Id>>,
    pub fired: BTreeMap<&'static str, usize>,
    pub rejected: BTreeMap<(&'static str, &'static str), usize>,
}

pub type OGraph = EGraph<ONode, OnnxAnalysis>;

impl Analysis<ONode> for OnnxAnalysis {
    type Data = Data;

    fn make(egraph: &mut OGraph, enode: &ONode, _id: Id) -> Data {
        match enode {
            ONode::Leaf(v) => egraph.analysis.leaves.get(v).cloned().unwrap_or_default(),
            ONode::Const(c) => {
                let t = &egraph.analysis.consts[*c as usize];
                Data {
                    dtype: Some(t.dtype),
                    shape: Some(t.dims.iter().map(|&d| Dim::Fixed(d)).collect()),
                    konst: Some(t.clone()),
                    uses: 0,
                }
            }
            ONode::Op(..) | ONode::Proj(..) => egraph.analysis.pending.take().unwrap_or_default(),
            ONode::Attrs(_) | ONode::Absent | ONode::Root(_) => Data::default(),
        }
    }

    fn merge(&mut self, a: &mut Data, b: Data) -> DidMerge {
        let mut changed = false;
        if a.dtype.is_none() && b.dtype.is_some() {
            a.dtype = b.dtype;
            changed = true;
        }
        match (&mut a.shape, b.shape) {
            (None, Some(s)) => {
                a.shape = Some(s);
                changed = true;
            }
            // Equal values, so equal shapes: a fixed size is the more precise spelling of a symbol.
            (Some(sa), Some(sb)) if sa.len() == sb.len() => {
                for (da, db) in sa.iter_mut().zip(sb) {
                    if matches!(da, Dim::Param(_)) && matches!(db, Dim::Fixed(_)) {
                        *da = db;
                        changed = true;
                    }
                }
            }
            _ => {}
        }
        if a.konst.is_none() && b.konst.is_some() {
            a.konst = b.konst;
            changed = true;
        }
        if b.uses > 0 {
            // Readers of both classes now read the merged one.
            a.uses = a.uses.saturating_add(b.uses);
            changed = true;
        }
        DidMerge(changed, true)
    }
}

/// Add `node` with the facts `data` (used only if the node is new).
pub fn add_with(egraph: &mut OGraph, node: ONode, data: Data) -> Id {
    egraph.analysis.pending = Some(data);
    let id = egraph.add(node);
    egraph.analysis.pending = None;
    id
}
