//! A read-only view of an exported model: its inputs and outputs with their shapes, its nodes with
//! their operator types and `metadata_props`, its initializers' names — everything as it will be
//! saved, without the weights' bytes and without the in-memory graph behind it.
//!
//! ```no_run
//! let program = fxonnx::export("model.pt2", &fxonnx::ExportOptions::default())?;
//! let model = program.model();
//! for input in model.inputs() {
//!     println!("{}: {:?} {:?}", input.name(), input.dtype(), input.shape());
//! }
//! for node in model.nodes() {
//!     println!("{} <- {:?}", node.op_type(), node.metadata("pkg.torch.onnx.fx_node"));
//! }
//! # Ok::<(), fxonnx::Error>(())
//! ```

use crate::onnx::proto::{self, tensor_shape_proto::dimension, type_proto};

pub use crate::onnx::ir::DType;

/// The model of an [`OnnxProgram`](crate::OnnxProgram), as it will be saved.
#[derive(Debug)]
pub struct Model {
    proto: proto::ModelProto,
}

impl Model {
    pub(crate) fn new(proto: proto::ModelProto) -> Self {
        Model { proto }
    }

    fn graph(&self) -> &proto::GraphProto {
        static EMPTY: std::sync::OnceLock<proto::GraphProto> = std::sync::OnceLock::new();
        self.proto.graph.as_ref().unwrap_or_else(|| EMPTY.get_or_init(Default::default))
    }

    /// The default-domain opset the model imports.
    pub fn opset(&self) -> i64 {
        self.opset_imports().find(|(domain, _)| domain.is_empty()).map_or(0, |(_, v)| v)
    }

    /// Every imported opset: `(domain, version)`, the default domain as `""`.
    pub fn opset_imports(&self) -> impl Iterator<Item = (&str, i64)> {
        self.proto.opset_import.iter().map(|o| (o.domain.as_str(), o.version))
    }

    /// The graph inputs, in order (user inputs; weights are initializers).
    pub fn inputs(&self) -> impl ExactSizeIterator<Item = ValueView<'_>> {
        self.graph().input.iter().map(ValueView)
    }

    /// The graph outputs, in order (user outputs, then mutated buffers and inputs).
    pub fn outputs(&self) -> impl ExactSizeIterator<Item = ValueView<'_>> {
        self.graph().output.iter().map(ValueView)
    }

    /// The initializers' names (parameter and buffer FQNs, constants), in order.
    pub fn initializer_names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.graph().initializer.iter().map(|t| t.name.as_str())
    }

    /// The main graph's nodes, in order (subgraphs of `If`/`Loop`/`Scan` are inside them).
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = NodeView<'_>> {
        self.graph().node.iter().map(NodeView)
    }

    /// The graph's `metadata_props` value for `key`.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        find(&self.graph().metadata_props, key)
    }
}

/// A graph input or output.
#[derive(Clone, Copy, Debug)]
pub struct ValueView<'m>(&'m proto::ValueInfoProto);

impl<'m> ValueView<'m> {
    pub fn name(&self) -> &'m str {
        &self.0.name
    }

    /// The element type (`None` when the value is not a tensor).
    pub fn dtype(&self) -> Option<DType> {
        crate::onnx::ir::DType::from_onnx(self.tensor_type()?.elem_type)
    }

    /// The shape, one entry per axis (`None` when the rank is unknown).
    pub fn shape(&self) -> Option<Vec<Dim<'m>>> {
        let shape = self.tensor_type()?.shape.as_ref()?;
        Some(
            shape
                .dim
                .iter()
                .map(|d| match &d.value {
                    Some(dimension::Value::DimValue(n)) => Dim::Fixed(*n),
                    Some(dimension::Value::DimParam(p)) => Dim::Symbolic(p),
                    None => Dim::Unknown,
                })
                .collect(),
        )
    }

    /// The value's `metadata_props` value for `key`.
    pub fn metadata(&self, key: &str) -> Option<&'m str> {
        find(&self.0.metadata_props, key)
    }

    fn tensor_type(&self) -> Option<&'m type_proto::Tensor> {
        match self.0.r#type.as_ref()?.value.as_ref()? {
            type_proto::Value::TensorType(t) => Some(t),
            _ => None,
        }
    }
}

/// One axis of a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim<'m> {
    Fixed(i64),
    /// A symbolic size by its ONNX `dim_param`: `s77`, `2*s77`, or the name given in `dim_names`.
    Symbolic(&'m str),
    Unknown,
}

/// A node of the graph.
#[derive(Clone, Copy, Debug)]
pub struct NodeView<'m>(&'m proto::NodeProto);

impl<'m> NodeView<'m> {
    pub fn name(&self) -> &'m str {
        &self.0.name
    }

    pub fn op_type(&self) -> &'m str {
        &self.0.op_type
    }

    /// The operator's domain (`""` for ONNX's default domain).
    pub fn domain(&self) -> &'m str {
        &self.0.domain
    }

    /// The names of the values it reads (`""` for an omitted optional input).
    pub fn inputs(&self) -> impl ExactSizeIterator<Item = &'m str> {
        self.0.input.iter().map(String::as_str)
    }

    /// The names of the values it writes.
    pub fn outputs(&self) -> impl ExactSizeIterator<Item = &'m str> {
        self.0.output.iter().map(String::as_str)
    }

    /// The node's `metadata_props` value for `key` (`namespace`, `pkg.torch.onnx.fx_node`, ...).
    pub fn metadata(&self, key: &str) -> Option<&'m str> {
        find(&self.0.metadata_props, key)
    }

    /// Every `metadata_props` pair, in order.
    pub fn metadata_props(&self) -> impl Iterator<Item = (&'m str, &'m str)> {
        self.0.metadata_props.iter().map(|e| (e.key.as_str(), e.value.as_str()))
    }

    /// The attribute `name`, when the node has it.
    pub fn attribute(&self, name: &str) -> Option<Attribute<'m>> {
        use proto::attribute_proto::AttributeType as T;
        let a = self.0.attribute.iter().find(|a| a.name == name)?;
        Some(match T::try_from(a.r#type).ok()? {
            T::Int => Attribute::Int(a.i),
            T::Float => Attribute::Float(a.f),
            T::String => Attribute::String(&a.s),
            T::Ints => Attribute::Ints(&a.ints),
            T::Floats => Attribute::Floats(&a.floats),
            T::Strings => Attribute::Strings(a.strings.iter().map(|s| &s[..]).collect()),
            _ => Attribute::Other,
        })
    }
}

/// A node attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attribute<'m> {
    Int(i64),
    Float(f32),
    String(&'m [u8]),
    Ints(&'m [i64]),
    Floats(&'m [f32]),
    Strings(Vec<&'m [u8]>),
    /// A tensor, graph or type attribute (not shown by this view).
    Other,
}

fn find<'m>(props: &'m [proto::StringStringEntryProto], key: &str) -> Option<&'m str> {
    props.iter().find(|e| e.key == key).map(|e| e.value.as_str())
}
