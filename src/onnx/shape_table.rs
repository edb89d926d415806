//! What is known of each value while a pass walks a graph in order: its shape (recorded by the
//! program, or computed from its producer by the operator table) and, for small int64 tensors, its
//! elements (`Shape(x)` of a `[s43, s53]` value is `[s43, s53]`).
//!
//! Symbolic dims are compared by their printed expression (sym.rs prints canonically): equal text
//! means equal dims; different text is treated as unknown, never as different.

use super::ir::{DType, Dim, Model, Node, TensorData, Value};
use super::operators::{self, Facts, SymInts};
use crate::hash::FxHashMap;

/// Largest int64 tensor whose contents are tracked (shapes and indices are short).
pub(crate) const MAX_SYM_LEN: usize = 64;

/// Shapes and symbolic int contents per value, filled in as a sweep walks the graph.
///
/// Both are sparse: most values have their shape in the model and few are small int64 tensors,
/// and two dense tables per sweep (tens of MB on large graphs) cost more in page faults than the
/// lookups they saved.
pub(crate) struct ShapeTable {
    shapes: FxHashMap<Value, Vec<Dim>>,
    syms: FxHashMap<Value, SymInts>,
    /// Shapes may hold dims known to be unknown ([`Facts::unknown`]): for the export check, which
    /// compares ranks and numbers, never for the optimizer, which would take them as symbols.
    partial: bool,
}

impl ShapeTable {
    pub fn new(model: &Model) -> Self {
        // Shapes the model already knows are read from it, not copied: copying every value's dims
        // (symbolic ones are strings) was most of the pass's time on large graphs.
        let mut t = ShapeTable { shapes: FxHashMap::default(), syms: FxHashMap::default(), partial: false };
        // Every constant a main-graph node can read is a main-graph initializer (constants are
        // made with one, and passes that drop one redirect its readers).
        for &v in &model.graph.initializers {
            if let Some(s) = model.value(v).constant.as_deref().and_then(const_syms) {
                t.syms.insert(v, s);
            }
        }
        t
    }

    /// A table whose shapes may hold unknown dims (the export check's).
    pub fn partial(model: &Model) -> Self {
        ShapeTable { partial: true, ..ShapeTable::new(model) }
    }

    /// The shape of `v`: the model's, or else the one learned from its producer.
    pub fn shape<'a>(&'a self, model: &'a Model, v: Value) -> Option<&'a [Dim]> {
        model.value(v).shape.as_deref().or_else(|| self.shapes.get(&v).map(|s| s.as_slice()))
    }

    pub fn syms(&self, v: Value) -> Option<&SymInts> {
        self.syms.get(&v)
    }

    pub fn set_shape(&mut self, v: Value, s: Vec<Dim>) {
        self.shapes.entry(v).or_insert(s);
    }

    pub fn set_syms(&mut self, v: Value, s: SymInts) {
        self.syms.insert(v, s);
    }

    /// The facts rules read: the model's values as this table knows them.
    pub fn facts<'a>(&'a self, model: &'a Model) -> Known<'a> {
        Known { model, table: self, uses: None }
    }

    /// Record what `node` tells about its outputs (after the pass has decided to keep it).
    pub fn learn(&mut self, model: &Model, node: &Node) {
        let Some(op) = operators::of(node) else { return };
        let Some(&out) = node.outputs.first() else { return };
        if model.value(out).shape.is_none() && op.learned {
            if let Ok(Some(s)) = op.infer_output(&self.facts(model), node, 0) {
                self.set_shape(out, s);
            }
        }
        if model.value(out).dtype == Some(DType::Int64) {
            if let Some(s) = self.infer_syms(model, node) {
                if s.items.len() <= MAX_SYM_LEN {
                    self.set_syms(out, s);
                }
            }
        }
    }

    /// The symbolic contents of output 0 of `node` (int64 outputs of rank ≤ 1).
    pub fn infer_syms(&self, model: &Model, node: &Node) -> Option<SymInts> {
        operators::of(node)?.syms?(&self.facts(model), node)
    }
}

/// The elements of a small int64 constant.
fn const_syms(c: &TensorData) -> Option<SymInts> {
    if c.dtype != DType::Int64 || c.dims.len() > 1 || c.numel() as usize > MAX_SYM_LEN {
        return None;
    }
    let items = c.to_i64s()?.into_iter().map(Dim::Fixed).collect();
    Some(SymInts { scalar: c.dims.is_empty(), items })
}

/// A model's values as a [`ShapeTable`] knows them, with their readers' count when a pass has it.
pub(crate) struct Known<'a> {
    model: &'a Model,
    table: &'a ShapeTable,
    uses: Option<&'a [u32]>,
}

impl<'a> Known<'a> {
    /// The same facts, and how many times each value is read (per value index).
    pub fn with_uses(self, uses: &'a [u32]) -> Self {
        Known { uses: Some(uses), ..self }
    }
}

impl Facts for Known<'_> {
    fn dtype(&self, v: Value) -> Option<DType> {
        self.model.value(v).dtype
    }

    fn shape(&self, v: Value) -> Option<&[Dim]> {
        self.table.shape(self.model, v)
    }

    fn constant(&self, v: Value) -> Option<&TensorData> {
        self.model.value(v).constant.as_deref()
    }

    fn syms(&self, v: Value) -> Option<&SymInts> {
        self.table.syms(v)
    }

    fn unknown(&self) -> Option<Dim> {
        self.table.partial.then(|| Dim::Param("?".into()))
    }

    fn uses(&self, v: Value) -> u32 {
        match self.uses {
            Some(uses) => uses.get(v.index()).copied().unwrap_or(0),
            None => u32::MAX,
        }
    }
}
