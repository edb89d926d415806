//! The graph builder translations write to.
//!
//! `op.Add(a, b)` appends an `Add` node to the graph under construction and returns its output.
//! One typed method per ONNX operator lives in the generated `ops.rs`; they all funnel into
//! [`Builder::call`]. Attributes are set on the returned [`Call`] (`op.Gemm(a, b, None).transB(1).out()`).

use std::rc::Rc;

use super::ir::*;
use super::operators;

/// Why a node could not be built (reported by the lowering with the FX node that asked for it).
#[derive(Clone, Debug, PartialEq)]
pub enum BuildError {
    OpsetTooOld {
        op_type: &'static str,
        since_version: i64,
        opset: i64,
    },
    /// The operator exists at the opset, but not in this form (`ReduceMean` with computed axes,
    /// `Resize` with `antialias`), and no older form computes the same.
    FormTooOld {
        op_type: &'static str,
        form: &'static str,
        since_version: i64,
        opset: i64,
    },
    /// Every input of an operator that takes one element type was a number: nothing says which type.
    UntypedLiterals {
        op_type: &'static str,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::OpsetTooOld { op_type, since_version, opset } => write!(
                f,
                "ONNX operator {op_type} needs opset {since_version} or newer, but the export targets opset {opset}"
            ),
            BuildError::FormTooOld { op_type, form, since_version, opset } => write!(
                f,
                "ONNX operator {op_type} {form} needs opset {since_version} or newer, but the export targets opset {opset}"
            ),
            BuildError::UntypedLiterals { op_type } => {
                write!(f, "no input of {op_type} is a value of known type, so its numbers have no type to take")
            }
        }
    }
}

/// An input of an operator whose inputs share one element type (`Add`, `Where`'s branches): a value,
/// or a number that becomes a constant of the other inputs' type, so `op.Sub(x, 1.0)` reads like
/// torchlib's `op.Sub(x, 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Input {
    Value(Value),
    Number(f64),
}

impl From<Value> for Input {
    fn from(v: Value) -> Self {
        Input::Value(v)
    }
}

impl From<f64> for Input {
    fn from(x: f64) -> Self {
        Input::Number(x)
    }
}

impl From<i64> for Input {
    fn from(x: i64) -> Self {
        Input::Number(x as f64)
    }
}

/// Builds one [`Model`]: the value arena, a stack of graphs (the main graph at the bottom, subgraphs
/// being built above it), and the metadata stamped onto every new node.
pub struct Builder {
    pub(crate) values: Vec<ValueInfo>,
    pub(crate) graphs: Vec<Graph>,
    opset: i64,
    /// Metadata put on every node created from now on (the current FX node's).
    pub(crate) node_metadata: Rc<MetadataProps>,
    pub(super) errors: Vec<BuildError>,
    /// Deduplicates small constants within the main graph: (dtype, dims, bytes) → value. A table
    /// searched by the parts of the new constant, so that a hit (most lookups) copies nothing.
    const_cache: hashbrown::HashTable<(DType, Vec<i64>, Vec<u8>, Value)>,
    /// Custom domains used, with their versions.
    pub(crate) custom_domains: Vec<(String, i64)>,
    pub(crate) warnings: Vec<String>,
    /// Element types of the FX node being translated, per output (from its TensorMeta).
    pub(crate) out_types: Vec<Option<DType>>,
    /// The bytes of the constants translations built (weights, slices of the archive, not
    /// counted) and the most they may take ([`crate::ExportOptions::max_memory`]).
    pub(crate) bound: MemoryBound,
    /// Why a constant built without a check beforehand passed the bound: the lowering fails the
    /// node with it.
    pub(crate) over_bound: Option<String>,
    /// Nodes appended so far, in every graph: the lowering counts those of each FX node.
    pub(crate) nodes_appended: u64,
}

impl Builder {
    pub(crate) fn new(opset: i64) -> Self {
        Builder {
            values: Vec::new(),
            graphs: vec![Graph { name: "main_graph".into(), ..Default::default() }],
            opset,
            node_metadata: Rc::default(),
            errors: Vec::new(),
            const_cache: hashbrown::HashTable::new(),
            custom_domains: Vec::new(),
            out_types: Vec::new(),
            warnings: Vec::new(),
            bound: MemoryBound::default(),
            over_bound: None,
            nodes_appended: 0,
        }
    }

    /// Make room for `nodes` more nodes in the main graph and `values` more values, so that a
    /// large graph is not copied each time its arrays grow.
    pub(crate) fn reserve(&mut self, nodes: usize, values: usize) {
        self.values.reserve(values);
        self.graphs[0].nodes.reserve(nodes);
    }

    /// The element type torch computed for output `i` of the node being translated. Arithmetic
    /// translations compute in it, which settles type promotion the way torch did.
    pub fn out_dtype(&self, i: usize) -> Option<DType> {
        self.out_types.get(i).copied().flatten()
    }

    /// The default-domain opset the model targets.
    pub fn opset(&self) -> i64 {
        self.opset
    }

    pub(crate) fn take_errors(&mut self) -> Vec<BuildError> {
        std::mem::take(&mut self.errors)
    }

    /// A new value (no producer yet), named `val_<k>` until the lowering renames it.
    pub(crate) fn new_value(&mut self) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueInfo { name: String::new(), ..Default::default() });
        v
    }

    pub fn info(&self, v: Value) -> &ValueInfo {
        &self.values[v.index()]
    }

    pub fn info_mut(&mut self, v: Value) -> &mut ValueInfo {
        &mut self.values[v.index()]
    }

    /// The element type of `v`, when known (always for values that come from the FX graph).
    pub fn dtype(&self, v: Value) -> Option<DType> {
        self.values[v.index()].dtype
    }

    /// The rank of `v`, when known.
    pub fn rank(&self, v: Value) -> Option<usize> {
        self.values[v.index()].shape.as_ref().map(|s| s.len())
    }

    pub fn shape(&self, v: Value) -> Option<&[Dim]> {
        self.values[v.index()].shape.as_deref()
    }

    /// The constant contents of `v`, if it is a constant.
    pub fn constant(&self, v: Value) -> Option<&TensorData> {
        self.values[v.index()].constant.as_deref()
    }

    pub(crate) fn graph_mut(&mut self) -> &mut Graph {
        self.graphs.last_mut().expect("the main graph is never popped")
    }

    /// Start building a subgraph (for `If`/`Loop`/`Scan` bodies); nodes go there until [`end_subgraph`].
    ///
    /// [`end_subgraph`]: Builder::end_subgraph
    pub fn begin_subgraph(&mut self, name: &str) {
        // ONNX requires a name; the program's submodule names are read from the archive.
        let name = if name.is_empty() { format!("subgraph_{}", self.graphs.len()) } else { name.to_string() };
        self.graphs.push(Graph { name, ..Default::default() });
    }

    /// Finish the innermost subgraph, with the given outputs. An output that the subgraph does not
    /// compute itself (an outer value, an input, a repeated output) is passed through an `Identity`,
    /// as ONNX requires.
    pub fn end_subgraph(&mut self, outputs: Vec<Value>) -> Graph {
        let mut produced: std::collections::HashSet<Value> =
            self.graph_mut().nodes.iter().flat_map(|n| n.outputs.iter().copied()).collect();
        let mut final_outputs = Vec::with_capacity(outputs.len());
        for v in outputs {
            let v = if produced.remove(&v) {
                v
            } else {
                let id = self.Identity(v);
                let info = self.info(v).clone();
                let new = self.info_mut(id);
                new.dtype = info.dtype;
                new.shape = info.shape;
                new.complex = info.complex;
                produced.remove(&id);
                id
            };
            final_outputs.push(v);
        }
        let mut g = if self.graphs.len() > 1 { self.graphs.pop().unwrap_or_default() } else { Graph::default() };
        g.outputs = final_outputs;
        g
    }

    /// Record a warning for the export's user (something dropped or approximated).
    pub fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// Add a graph input of the innermost graph.
    pub fn add_input(&mut self, dtype: Option<DType>, shape: Option<Vec<Dim>>) -> Value {
        let v = self.new_value();
        let info = self.info_mut(v);
        info.dtype = dtype;
        info.shape = shape;
        self.graph_mut().inputs.push(v);
        v
    }

    /// Add an initializer of the main graph (weights, buffers, lifted constants).
    pub(crate) fn add_initializer(&mut self, data: TensorData) -> Value {
        let v = self.new_value();
        let info = &mut self.values[v.index()];
        info.dtype = Some(data.dtype);
        info.shape = Some(data.dims.iter().map(|&d| Dim::Fixed(d)).collect());
        info.constant = Some(Box::new(data));
        self.graphs[0].initializers.push(v);
        v
    }

    /// A constant tensor. Small constants are shared across the main graph; constants made while a
    /// subgraph is being built also live in the main graph, which subgraphs can read.
    pub fn constant_tensor(&mut self, data: TensorData) -> Value {
        // Translations check a large constant's size before building it (`constant_elements`);
        // one built without that check still fails its node when it passed the bound.
        let bytes = data.raw.len() as u64;
        if let Err(why) = self.bound.room(&format!("a constant of shape {:?}", data.dims), bytes) {
            self.over_bound.get_or_insert(why);
        }
        self.bound.built = self.bound.built.saturating_add(bytes);
        // Only small constants are keyed (and so copied): large ones stay zero-copy `Bytes`.
        if data.raw.len() > 1024 {
            return self.add_initializer(data);
        }
        let hash = |dtype: DType, dims: &[i64], raw: &[u8]| {
            std::hash::BuildHasher::hash_one(&crate::hash::FxBuild::default(), (dtype as i32, dims, raw))
        };
        let h = hash(data.dtype, &data.dims, &data.raw);
        let found = self.const_cache.find(h, |(t, d, r, _)| *t == data.dtype && *d == data.dims && *r == data.raw[..]);
        if let Some(&(.., v)) = found {
            return v;
        }
        let key = (data.dtype, data.dims.clone(), data.raw.to_vec());
        let v = self.add_initializer(data);
        self.const_cache.insert_unique(h, (key.0, key.1, key.2, v), |(t, d, r, _)| hash(*t, d, r));
        v
    }

    /// A 1-D int64 constant (axes, shapes, starts/ends).
    pub fn const_i64s(&mut self, values: &[i64]) -> Value {
        self.constant_tensor(TensorData::from_i64s(vec![values.len() as i64], values))
    }

    /// A 0-d int64 constant.
    pub fn scalar_i64(&mut self, value: i64) -> Value {
        self.constant_tensor(TensorData::from_i64s(vec![], &[value]))
    }

    /// A 0-d constant of the given type.
    pub fn scalar(&mut self, dtype: DType, value: f64) -> Value {
        match TensorData::from_f64_as(dtype, vec![], &[value]) {
            Some(t) => self.constant_tensor(t),
            // Complex and string scalars have no numeric encoding here; float32 keeps the graph valid
            // and the translation that asked is expected to cast.
            None => self.scalar(DType::Float, value),
        }
    }

    /// The values of inputs that share one element type: numbers become constants of the first
    /// value's type (used by the generated op methods).
    pub(crate) fn same_type<const N: usize>(&mut self, op_type: &'static str, inputs: [Input; N]) -> [Value; N] {
        if let Some(values) = all_values(&inputs) {
            return values;
        }
        let typed = inputs.iter().find_map(|i| match i {
            Input::Value(v) => Some(*v),
            Input::Number(_) => None,
        });
        let dtype = typed.and_then(|v| self.dtype(v));
        if dtype.is_none() && inputs.iter().any(|i| matches!(i, Input::Number(_))) {
            self.errors.push(BuildError::UntypedLiterals { op_type });
        }
        inputs.map(|i| match i {
            Input::Value(v) => v,
            Input::Number(x) => self.scalar(dtype.unwrap_or(DType::Float), x),
        })
    }

    /// Append a node of the default domain to the innermost graph. Used by the generated op methods;
    /// `since_version` is the opset the method's form is valid from. When the node is finished,
    /// an older opset gets the older form or an error (`downgrade.rs`).
    pub(crate) fn call(&mut self, op_type: &'static str, since_version: i64, inputs: Vec<Option<Value>>) -> Call<'_> {
        let mut call = self.call_domain(op_type.to_string(), String::new(), inputs);
        call.form = Some((op_type, since_version));
        call
    }

    /// Append a node of any domain (custom operators). The domain is imported at `version`.
    pub fn custom(&mut self, domain: &str, version: i64, op_type: &str, inputs: Vec<Option<Value>>) -> Call<'_> {
        if !self.custom_domains.iter().any(|(d, _)| d == domain) {
            self.custom_domains.push((domain.to_string(), version));
        }
        self.call_domain(op_type.to_string(), domain.to_string(), inputs)
    }

    /// Append a node whose operator is known only at run time (a node of ONNX built outside
    /// fxonnx: a Python custom translation), in `domain` at `version` (the default domain keeps
    /// the export's opset). No older form is chosen for it; types are legalized as for any node.
    pub fn node(&mut self, domain: &str, version: i64, op_type: &str, inputs: Vec<Option<Value>>) -> Call<'_> {
        if domain.is_empty() {
            return self.call_domain(op_type.to_string(), String::new(), inputs);
        }
        self.custom(domain, version, op_type, inputs)
    }

    fn call_domain(&mut self, op_type: String, domain: String, inputs: Vec<Option<Value>>) -> Call<'_> {
        // Trailing omitted inputs are dropped, as ONNX prefers.
        let mut inputs = inputs;
        while matches!(inputs.last(), Some(None)) {
            inputs.pop();
        }
        let metadata = self.node_metadata.clone();
        self.nodes_appended += 1;
        let g = self.graph_mut();
        g.nodes.push(Node {
            op_type,
            domain,
            name: String::new(),
            inputs,
            outputs: Vec::new(),
            attributes: Vec::new(),
            metadata,
        });
        let node = g.nodes.len() - 1;
        Call { b: self, node, form: None }
    }
}

/// A node just appended by [`Builder::call`]: set attributes, then take its outputs.
#[must_use = "a node's outputs must be taken with .out() or .outs()"]
pub struct Call<'b> {
    b: &'b mut Builder,
    node: usize,
    /// For a default-domain operator: its type and the opset its form is valid from.
    form: Option<(&'static str, i64)>,
}

impl<'b> Call<'b> {
    fn node_mut(&mut self) -> &mut Node {
        let node = self.node;
        &mut self.b.graph_mut().nodes[node]
    }

    /// Set an attribute by name.
    pub fn attr(mut self, name: &str, value: AttrValue) -> Self {
        let node = self.node_mut();
        node.attributes.retain(|a| a.name != name);
        // Exactly sized: an attribute is large (a subgraph fits inline) and most nodes have one or
        // two, where growing would reserve four.
        node.attributes.reserve_exact(1);
        node.attributes.push(Attribute { name: name.to_string(), value });
        self
    }

    pub fn attr_int(self, name: &str, v: i64) -> Self {
        self.attr(name, AttrValue::Int(v))
    }
    pub fn attr_float(self, name: &str, v: f32) -> Self {
        self.attr(name, AttrValue::Float(v))
    }
    pub fn attr_str(self, name: &str, v: &str) -> Self {
        self.attr(name, AttrValue::String(v.to_string()))
    }
    pub fn attr_ints(self, name: &str, v: &[i64]) -> Self {
        self.attr(name, AttrValue::Ints(v.to_vec()))
    }
    pub fn attr_floats(self, name: &str, v: &[f32]) -> Self {
        self.attr(name, AttrValue::Floats(v.to_vec()))
    }
    pub fn attr_strs(self, name: &str, v: &[&str]) -> Self {
        self.attr(name, AttrValue::Strings(v.iter().map(|s| s.to_string()).collect()))
    }
    pub fn attr_tensor(self, name: &str, v: TensorData) -> Self {
        self.attr(name, AttrValue::Tensor(Box::new(v)))
    }
    pub fn attr_graph(self, name: &str, v: Graph) -> Self {
        self.attr(name, AttrValue::Graph(Box::new(v)))
    }

    /// The node's only (or first) output.
    pub fn out(self) -> Value {
        self.outs_vec(1)[0]
    }

    /// The node's first `N` outputs.
    pub fn outs<const N: usize>(self) -> [Value; N] {
        let v = self.outs_vec(N);
        std::array::from_fn(|i| v[i])
    }

    /// The node's first `n` outputs (variadic outputs such as `Split`'s).
    pub fn outs_vec(self, n: usize) -> Vec<Value> {
        let Call { b, mut node, form } = self;
        if let Some((op_type, since_version)) = form {
            node = b.for_runtimes(node, op_type);
            if let Some(outs) = b.downgrade(&mut node, op_type, since_version, n) {
                return outs;
            }
        }
        let (node, cast_back) = b.legalize_types(node);
        let mut outs: Vec<Value> = (0..n).map(|_| b.new_value()).collect();
        let node_ref = &mut b.graph_mut().nodes[node];
        node_ref.outputs = outs.clone();
        b.infer_outputs(node);
        for (o, t) in cast_back {
            if let Some(v) = outs.get_mut(o) {
                *v = b.Cast(*v).to(t as i64).out();
            }
        }
        outs
    }
}

impl Builder {
    /// Fill in the element types of the outputs of node `node` of the innermost graph, and the
    /// shape of output 0 when the operator keeps its input's shape (the operator table says
    /// which), so translations can ask `op.dtype(v)` of intermediate values too. Leaves known
    /// ones alone. Other shapes are left to ONNX's own inference.
    fn infer_outputs(&mut self, node: usize) {
        let g = self.graphs.last().expect("the main graph is never popped");
        let n = &g.nodes[node];
        let values = &self.values;
        let input_type = |k: usize| n.inputs.get(k).copied().flatten().and_then(|v| values[v.index()].dtype);
        let types: Vec<Option<DType>> =
            (0..n.outputs.len()).map(|i| operators::output_type(n, &input_type, i)).collect();
        let input_container =
            |k: usize| n.inputs.get(k).copied().flatten().map_or(Container::Tensor, |v| values[v.index()].container);
        let value_container = |v: Value| values[v.index()].container;
        let containers: Vec<Container> = (0..n.outputs.len())
            .map(|i| operators::output_container(n, &input_container, &value_container, i))
            .collect();
        let same_shape = operators::of(n).is_some_and(|op| matches!(op.shape, operators::Shape::Same));
        let shape = if same_shape { input_type_shape(values, n) } else { None };
        let outputs = n.outputs.clone();
        for (i, ((v, t), c)) in outputs.into_iter().zip(types).zip(containers).enumerate() {
            let info = &mut self.values[v.index()];
            info.container = c;
            if info.dtype.is_none() {
                info.dtype = t;
            }
            if i == 0 && info.shape.is_none() {
                info.shape = shape.clone();
            }
        }
    }

    /// Finish the model (the main graph as built, with its opset imports).
    pub(crate) fn finish(mut self) -> Model {
        let graph = std::mem::take(&mut self.graphs[0]);
        let mut opset_imports = vec![(String::new(), self.opset)];
        opset_imports.extend(self.custom_domains);
        Model {
            values: self.values,
            graph,
            functions: Vec::new(),
            opset_imports,
            producer_version: env!("CARGO_PKG_VERSION").to_string(),
            metadata: Vec::new(),
            bound: self.bound,
        }
    }
}

/// The shape of `node`'s first input.
fn input_type_shape(values: &[ValueInfo], node: &Node) -> Option<Vec<Dim>> {
    node.inputs.first().copied().flatten().and_then(|v| values[v.index()].shape.clone())
}

/// What the operator table's rules read of the values being built (older forms, types).
impl operators::Facts for Builder {
    fn dtype(&self, v: Value) -> Option<DType> {
        self.values[v.index()].dtype
    }

    fn shape(&self, v: Value) -> Option<&[Dim]> {
        self.values[v.index()].shape.as_deref()
    }

    fn constant(&self, v: Value) -> Option<&TensorData> {
        self.values[v.index()].constant.as_deref()
    }
}

/// The values, when no input is a number.
fn all_values<const N: usize>(inputs: &[Input; N]) -> Option<[Value; N]> {
    let mut values = [Value(0); N];
    for (slot, input) in values.iter_mut().zip(inputs) {
        match input {
            Input::Value(v) => *slot = *v,
            Input::Number(_) => return None,
        }
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_take_the_type_of_the_other_input() {
        let mut b = Builder::new(20);
        let x = b.add_input(Some(DType::Int64), Some(vec![Dim::Fixed(2)]));
        b.Sub(x, 3.0);
        let node = b.graphs[0].nodes.last().expect("a Sub node");
        let three = node.inputs[1].expect("second input");
        assert_eq!(b.dtype(three), Some(DType::Int64));
        assert_eq!(b.constant(three).and_then(TensorData::to_i64s), Some(vec![3]));
        assert!(b.take_errors().is_empty());

        b.Add(1.0, 2.0);
        assert_eq!(b.take_errors(), vec![BuildError::UntypedLiterals { op_type: "Add" }]);
    }
}
