//! The ONNX language for egg.
//!
//! An operator e-node carries its op type, domain and output count; its children are its inputs
//! followed by one attribute leaf, so a pattern like `(Transpose ?x ?perm)` binds the attributes to
//! `?perm` and a rule can read or rebuild them. Multi-output operators are one e-class (the tuple)
//! read through `Proj` nodes. Values from outside the window are `Leaf` nodes, constants made by
//! rules are `Const` nodes, an omitted optional input is `Absent`, and one `Root` holds every
//! output of the window so extraction sees them all at once.
//!
//! Names are `Arc<str>` rather than egg's interned `Symbol`: `Symbol`'s order is its interning
//! order, which depends on what else ran in the process, and egg sorts e-nodes by it.

use std::collections::HashMap;
use std::sync::Arc;

use egg::{FromOp, Id, Language};

use crate::onnx::ir::{AttrValue, Attribute, DType, TensorData};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpKey {
    pub op: Arc<str>,
    pub domain: Arc<str>,
    pub outputs: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ONode {
    /// An operator: inputs, then the attribute leaf as the last child.
    Op(OpKey, Vec<Id>),
    /// The attributes of one operator, interned in [`AttrTable`].
    Attrs(u32),
    /// A value from outside the window, by its index in the model's value arena.
    Leaf(u32),
    /// A constant a rule made, by its index in the analysis' constant table.
    Const(u32),
    /// An omitted optional input.
    Absent,
    /// Output `i` of a multi-output operator's e-class.
    Proj(u32, [Id; 1]),
    /// Every output of the window.
    Root(Vec<Id>),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ODiscr {
    Op(OpKey, usize),
    Attrs(u32),
    Leaf(u32),
    Const(u32),
    Absent,
    Proj(u32),
    Root(usize),
}

impl Language for ONode {
    type Discriminant = ODiscr;

    fn discriminant(&self) -> ODiscr {
        match self {
            ONode::Op(k, c) => ODiscr::Op(k.clone(), c.len()),
            ONode::Attrs(a) => ODiscr::Attrs(*a),
            ONode::Leaf(v) => ODiscr::Leaf(*v),
            ONode::Const(c) => ODiscr::Const(*c),
            ONode::Absent => ODiscr::Absent,
            ONode::Proj(i, _) => ODiscr::Proj(*i),
            ONode::Root(c) => ODiscr::Root(c.len()),
        }
    }

    fn matches(&self, other: &Self) -> bool {
        // Hot in pattern search: compare in place (the discriminant would clone the names).
        match (self, other) {
            (ONode::Op(a, ca), ONode::Op(b, cb)) => ca.len() == cb.len() && a == b,
            (ONode::Attrs(a), ONode::Attrs(b)) => a == b,
            (ONode::Leaf(a), ONode::Leaf(b)) => a == b,
            (ONode::Const(a), ONode::Const(b)) => a == b,
            (ONode::Absent, ONode::Absent) => true,
            (ONode::Proj(a, _), ONode::Proj(b, _)) => a == b,
            (ONode::Root(a), ONode::Root(b)) => a.len() == b.len(),
            _ => false,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            ONode::Op(_, c) | ONode::Root(c) => c,
            ONode::Proj(_, c) => c,
            _ => &[],
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            ONode::Op(_, c) | ONode::Root(c) => c,
            ONode::Proj(_, c) => c,
            _ => &mut [],
        }
    }
}

impl std::fmt::Display for ONode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ONode::Op(k, _) => write!(f, "{}", k.op),
            ONode::Attrs(a) => write!(f, "attrs{a}"),
            ONode::Leaf(v) => write!(f, "leaf{v}"),
            ONode::Const(c) => write!(f, "const{c}"),
            ONode::Absent => write!(f, "absent"),
            ONode::Proj(i, _) => write!(f, "proj{i}"),
            ONode::Root(_) => write!(f, "root"),
        }
    }
}

/// Rules are written with single-output default-domain operators only; `Absent` is the one leaf a
/// pattern may name.
impl FromOp for ONode {
    type Error = String;

    fn from_op(op: &str, children: Vec<Id>) -> Result<Self, String> {
        if op == "Absent" && children.is_empty() {
            return Ok(ONode::Absent);
        }
        if children.is_empty() || !op.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            return Err(format!("not an operator pattern: {op}"));
        }
        Ok(ONode::Op(OpKey { op: op.into(), domain: "".into(), outputs: 1 }, children))
    }
}

/// A hashable attribute value (floats by their bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttrLit {
    Int(i64),
    Float(u32),
    Str(String),
    Ints(Vec<i64>),
    Floats(Vec<u32>),
    Strs(Vec<String>),
    Tensor(i32, Vec<i64>, Vec<u8>),
}

/// The attributes of one node, in the node's order (so untouched nodes come back unchanged).
pub type AttrSet = Vec<(String, AttrLit)>;

/// Convert a node's attributes; `None` for subgraph attributes, which never enter a window.
pub fn attr_set(attrs: &[Attribute]) -> Option<AttrSet> {
    attrs
        .iter()
        .map(|a| {
            let lit = match &a.value {
                AttrValue::Int(i) => AttrLit::Int(*i),
                AttrValue::Float(x) => AttrLit::Float(x.to_bits()),
                AttrValue::String(s) => AttrLit::Str(s.clone()),
                AttrValue::Ints(v) => AttrLit::Ints(v.clone()),
                AttrValue::Floats(v) => AttrLit::Floats(v.iter().map(|x| x.to_bits()).collect()),
                AttrValue::Strings(v) => AttrLit::Strs(v.clone()),
                AttrValue::Tensor(t) => AttrLit::Tensor(t.dtype as i32, t.dims.clone(), t.raw.to_vec()),
                AttrValue::Graph(_) | AttrValue::Type(..) => return None,
            };
            Some((a.name.clone(), lit))
        })
        .collect()
}

/// Back to IR attributes.
pub fn to_attributes(set: &AttrSet) -> Vec<Attribute> {
    set.iter()
        .map(|(name, lit)| {
            let value = match lit {
                AttrLit::Int(i) => AttrValue::Int(*i),
                AttrLit::Float(b) => AttrValue::Float(f32::from_bits(*b)),
                AttrLit::Str(s) => AttrValue::String(s.clone()),
                AttrLit::Ints(v) => AttrValue::Ints(v.clone()),
                AttrLit::Floats(v) => AttrValue::Floats(v.iter().map(|b| f32::from_bits(*b)).collect()),
                AttrLit::Strs(v) => AttrValue::Strings(v.clone()),
                AttrLit::Tensor(dt, dims, raw) => AttrValue::Tensor(Box::new(TensorData {
                    dtype: crate::onnx::ir::DType::from_onnx(*dt).unwrap_or(DType::Float),
                    dims: dims.clone(),
                    raw: raw.clone().into(),
                })),
            };
            Attribute { name: name.clone(), value }
        })
        .collect()
}

/// Interned attribute sets: equal sets get equal `Attrs` leaves, so hash-consing sees equal nodes.
#[derive(Debug, Default)]
pub struct AttrTable {
    sets: Vec<AttrSet>,
    index: HashMap<AttrSet, u32>,
}

impl AttrTable {
    pub fn intern(&mut self, set: AttrSet) -> u32 {
        if let Some(&i) = self.index.get(&set) {
            return i;
        }
        let i = self.sets.len() as u32;
        self.sets.push(set.clone());
        self.index.insert(set, i);
        i
    }

    pub fn get(&self, i: u32) -> &AttrSet {
        &self.sets[i as usize]
    }
}

/// Typed reads of an attribute set.
pub fn get_int(set: &AttrSet, name: &str) -> Option<i64> {
    set.iter().find(|(n, _)| n == name).and_then(|(_, v)| if let AttrLit::Int(i) = v { Some(*i) } else { None })
}

pub fn get_float(set: &AttrSet, name: &str) -> Option<f32> {
    set.iter().find(|(n, _)| n == name).and_then(|(_, v)| {
        if let AttrLit::Float(b) = v {
            Some(f32::from_bits(*b))
        } else {
            None
        }
    })
}

pub fn get_ints<'a>(set: &'a AttrSet, name: &str) -> Option<&'a [i64]> {
    set.iter().find(|(n, _)| n == name).and_then(|(_, v)| if let AttrLit::Ints(i) = v { Some(&i[..]) } else { None })
}
