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

/// Decode a numeric constant as f64s (floats of every width, integers, bools).
pub fn to_f64s(t: &TensorData) -> Option<Vec<f64>> {
    let n = usize::try_from(t.numel()).ok()?;
    let b = &t.raw[..];
    let size = t.dtype.size()?;
    if b.len() < n * size {
        return None;
    }
    let chunk = |i: usize| &b[i * size..(i + 1) * size];
    let arr = |i: usize| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..size].copy_from_slice(chunk(i));
        a
    };
    Some(match t.dtype {
        DType::Float => (0..n).map(|i| f32::from_le_bytes(arr(i)[..4].try_into().unwrap_or([0; 4])) as f64).collect(),
        DType::Double => (0..n).map(|i| f64::from_le_bytes(arr(i))).collect(),
        DType::Float16 => (0..n).map(|i| f16_to_f32(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])) as f64).collect(),
        DType::BFloat16 => {
            (0..n).map(|i| f32::from_bits((u16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as u32) << 16) as f64).collect()
        }
        DType::Int64 => (0..n).map(|i| i64::from_le_bytes(arr(i)) as f64).collect(),
        DType::Int32 => (0..n).map(|i| i32::from_le_bytes(arr(i)[..4].try_into().unwrap_or([0; 4])) as f64).collect(),
        DType::Int16 => (0..n).map(|i| i16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as f64).collect(),
        DType::Int8 => b[..n].iter().map(|&x| x as i8 as f64).collect(),
        DType::Uint8 | DType::Bool => b[..n].iter().map(|&x| x as f64).collect(),
        _ => return None,
    })
}

/// IEEE binary16 bits → f32.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: value is m * 2^-24.
            let v = m as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}
