//! The plain path: the model as a prost `ModelProto`, large weights moved to the data file, the
//! message encoded and written. This is the definition of what fxonnx writes; [`super::stream`]
//! writes the same bytes with less memory and time, and tests hold the two to each other.

use std::io::Write;
use std::path::Path;

use bytes::Bytes;
use prost::Message;

use super::files::{self, Outputs, Sources};
use super::names::Names;
use super::{described, io_values, DataPlacement, SaveError, ALIGNMENT, IR_VERSION, PRODUCER, PROTOBUF_LIMIT};
use crate::onnx::ir::*;
use crate::onnx::proto;

/// `model` as a `ModelProto`, every weight inline (stored weights are shared with the model, not
/// copied; folded ones are computed).
pub fn to_proto(model: &Model) -> proto::ModelProto {
    model_proto(&Names::new(model), model, Detail::FULL)
}

/// [`to_proto`] with the initializers `withheld` picks as headers (name, type, dims, metadata;
/// no bytes), for a weight-free model.
pub fn to_proto_withholding(model: &Model, withheld: &dyn Fn(Value) -> bool) -> proto::ModelProto {
    model_proto(&Names::new(model), model, Detail { node_metadata: true, bytes: &|v| !withheld(v) })
}

/// [`to_proto`] without the initializers' bytes and the nodes' metadata: what printing the model
/// without metadata needs, without computing folded weights.
pub fn to_proto_outline(model: &Model) -> proto::ModelProto {
    model_proto(&Names::new(model), model, Detail { node_metadata: false, bytes: &|_| false })
}

/// What a `ModelProto` holds besides the graph: the main graph's nodes' metadata, and which
/// initializers' bytes.
#[derive(Clone, Copy)]
struct Detail<'a> {
    node_metadata: bool,
    bytes: &'a dyn Fn(Value) -> bool,
}

impl Detail<'_> {
    const FULL: Detail<'static> = Detail { node_metadata: true, bytes: &|_| true };
}

/// Write `model` to `path` by building its `ModelProto` (see the module documentation).
pub fn save(model: &Model, path: &Path, placement: &DataPlacement, sources: &Sources) -> Result<(), SaveError> {
    save_proto(to_proto(model), path, placement, sources)
}

/// Write a built `ModelProto` to `path`, its weights placed as `placement` says. The files are
/// unnamed until complete and never replace a source ([`files`]), so a failure leaves no
/// partial output.
pub fn save_proto(
    mut model: proto::ModelProto,
    path: &Path,
    placement: &DataPlacement,
    sources: &Sources,
) -> Result<(), SaveError> {
    let threshold = match placement {
        DataPlacement::Inline => usize::MAX,
        DataPlacement::External { threshold } => *threshold,
    };
    let external: Vec<usize> = model
        .graph
        .iter()
        .flat_map(|g| g.initializer.iter().enumerate())
        .filter(|(_, t)| t.raw_data.len() >= threshold)
        .map(|(i, _)| i)
        .collect();
    let out = Outputs::create(path, !external.is_empty(), sources)?;
    if let (false, Some(graph)) = (external.is_empty(), model.graph.as_mut()) {
        let io = |source| SaveError::Io { path: out.data_path(), source };
        let mut data = std::io::BufWriter::new(out.data_file());
        let mut offset = 0usize;
        let mut placed = Vec::with_capacity(external.len());
        for &i in &external {
            let t = &mut graph.initializer[i];
            // Aligned, so that readers can map every tensor in place.
            let pad = offset.next_multiple_of(ALIGNMENT) - offset;
            data.write_all(&[0u8; ALIGNMENT][..pad]).map_err(io)?;
            offset += pad;
            let len = t.raw_data.len();
            data.write_all(&t.raw_data).map_err(io)?;
            t.raw_data = Bytes::new();
            t.data_location = proto::tensor_proto::DataLocation::External as i32;
            placed.push((i, offset, len));
            offset += len;
        }
        data.flush().map_err(io)?;
        let location = files::data_location(out.stem());
        for (i, offset, len) in placed {
            graph.initializer[i].external_data = external_data(&location, offset, len);
        }
    }
    let size = model.encoded_len();
    if size > PROTOBUF_LIMIT {
        return Err(SaveError::too_large(size, placement));
    }
    let bytes = model.encode_to_vec();
    out.model_file().write_all(&bytes).map_err(|source| SaveError::Io { path: path.to_path_buf(), source })?;
    out.persist()
}

/// The `external_data` entries of a tensor at `offset` of the data file.
pub(super) fn external_data(location: &str, offset: usize, len: usize) -> Vec<proto::StringStringEntryProto> {
    [("location", location.to_string()), ("offset", offset.to_string()), ("length", len.to_string())]
        .into_iter()
        .map(|(k, v)| proto::StringStringEntryProto { key: k.into(), value: v })
        .collect()
}

fn model_proto(names: &Names, model: &Model, detail: Detail) -> proto::ModelProto {
    proto::ModelProto {
        ir_version: IR_VERSION,
        opset_import: model
            .opset_imports
            .iter()
            .map(|(d, v)| proto::OperatorSetIdProto { domain: d.clone(), version: *v })
            .collect(),
        producer_name: PRODUCER.into(),
        producer_version: model.producer_version.clone(),
        graph: Some(graph_proto(names, &model.graph, true, detail)),
        metadata_props: props(&model.metadata),
        functions: model.functions.iter().map(|f| function_proto(names, model, f)).collect(),
        ..Default::default()
    }
}

/// A model-local function: its body's nodes (with their metadata), inputs and outputs by name,
/// importing the model's opsets but its own domain.
pub(super) fn function_proto(names: &Names, model: &Model, f: &Function) -> proto::FunctionProto {
    let body = graph_proto(names, &f.body, false, Detail::FULL);
    let name = |v: &proto::ValueInfoProto| v.name.clone();
    proto::FunctionProto {
        name: f.name.clone(),
        domain: f.domain.clone(),
        input: body.input.iter().map(name).collect(),
        output: body.output.iter().map(name).collect(),
        node: body.node,
        opset_import: model
            .opset_imports
            .iter()
            .filter(|(d, _)| *d != f.domain)
            .map(|(d, v)| proto::OperatorSetIdProto { domain: d.clone(), version: *v })
            .collect(),
        ..Default::default()
    }
}

fn graph_proto(names: &Names, g: &Graph, main: bool, detail: Detail) -> proto::GraphProto {
    let mut gp = proto::GraphProto { name: g.name.clone(), metadata_props: props(&g.metadata), ..Default::default() };
    gp.input = g.inputs.iter().map(|&v| value_info(names, v)).collect();
    let io = io_values(g);
    let base = names.base(g);
    gp.node.reserve(g.nodes.len());
    for (j, node) in g.nodes.iter().enumerate() {
        gp.node.push(proto::NodeProto {
            input: node.inputs.iter().map(|i| i.map(|v| names.value(v).owned()).unwrap_or_default()).collect(),
            output: node.outputs.iter().map(|&v| names.value(v).owned()).collect(),
            name: names.node(g, base, j).owned(),
            op_type: node.op_type.clone(),
            domain: node.domain.clone(),
            attribute: node.attributes.iter().map(|a| attribute(names, a)).collect(),
            metadata_props: if detail.node_metadata { props(&node.metadata.to_pairs()) } else { Vec::new() },
            ..Default::default()
        });
        // Shapes and types of intermediate values that came from the FX graph.
        for &o in &node.outputs {
            if described(names.model, &io, o) {
                gp.value_info.push(value_info(names, o));
            }
        }
    }
    gp.output = g.outputs.iter().map(|&v| value_info(names, v)).collect();
    if main {
        for &v in &g.initializers {
            let info = names.model.value(v);
            if let Some(t) = &info.constant {
                let name = names.value(v).owned();
                gp.initializer.push(match (detail.bytes)(v) {
                    true => tensor_proto(name, t, &info.metadata),
                    false => tensor_header(name, t, &info.metadata),
                });
                if !info.metadata.is_empty() {
                    // torch.onnx keeps initializer metadata on a value_info entry of the same name.
                    gp.value_info.push(value_info(names, v));
                }
            }
        }
    }
    gp
}

fn props(m: &Metadata) -> Vec<proto::StringStringEntryProto> {
    m.iter().map(|(k, v)| proto::StringStringEntryProto { key: k.to_string(), value: v.clone() }).collect()
}

fn tensor_proto(name: String, t: &TensorData, metadata: &Metadata) -> proto::TensorProto {
    proto::TensorProto { raw_data: t.raw.to_bytes(), ..tensor_header(name, t, metadata) }
}

/// A `TensorProto` without the bytes.
fn tensor_header(name: String, t: &TensorData, metadata: &Metadata) -> proto::TensorProto {
    proto::TensorProto {
        name,
        dims: t.dims.clone(),
        data_type: t.dtype as i32,
        metadata_props: props(metadata),
        ..Default::default()
    }
}

fn value_info(names: &Names, v: Value) -> proto::ValueInfoProto {
    let info = names.model.value(v);
    proto::ValueInfoProto {
        name: names.value(v).owned(),
        r#type: Some(type_proto(info)),
        metadata_props: props(&info.metadata),
        ..Default::default()
    }
}

/// The ONNX type of a value: its tensor type, wrapped in the value's container.
pub(super) fn type_proto(info: &ValueInfo) -> proto::TypeProto {
    let shape = match (&info.shape, info.rank_from_data) {
        // A rank known only at run time: axes without a size, as ONNX requires some shape.
        (None, Some(rank)) => {
            Some(proto::TensorShapeProto { dim: vec![proto::tensor_shape_proto::Dimension::default(); rank] })
        }
        (shape, _) => shape.as_ref().map(|dims| proto::TensorShapeProto {
            dim: dims
                .iter()
                .map(|d| proto::tensor_shape_proto::Dimension {
                    value: Some(match d {
                        Dim::Fixed(n) => proto::tensor_shape_proto::dimension::Value::DimValue(*n),
                        Dim::Param(p) => proto::tensor_shape_proto::dimension::Value::DimParam(p.to_string()),
                    }),
                    ..Default::default()
                })
                .collect(),
        }),
    };
    contained(info.container, tensor_type(info.dtype, shape))
}

fn tensor_type(dtype: Option<DType>, shape: Option<proto::TensorShapeProto>) -> proto::TypeProto {
    let elem_type = dtype.map(|d| d as i32).unwrap_or(0);
    proto::TypeProto {
        value: Some(proto::type_proto::Value::TensorType(proto::type_proto::Tensor { elem_type, shape })),
        ..Default::default()
    }
}

/// `element` (a tensor type) as the container holds it.
fn contained(container: Container, element: proto::TypeProto) -> proto::TypeProto {
    use proto::type_proto::{Optional, Sequence, Value as T};
    let value = match container {
        Container::Tensor => return element,
        Container::Optional => T::OptionalType(Box::new(Optional { elem_type: Some(Box::new(element)) })),
        Container::Sequence => T::SequenceType(Box::new(Sequence { elem_type: Some(Box::new(element)) })),
    };
    proto::TypeProto { value: Some(value), ..Default::default() }
}

pub(super) fn attribute(names: &Names, a: &Attribute) -> proto::AttributeProto {
    use proto::attribute_proto::AttributeType as T;
    let mut p = proto::AttributeProto { name: a.name.clone(), ..Default::default() };
    match &a.value {
        AttrValue::Float(f) => {
            p.r#type = T::Float as i32;
            p.f = *f;
        }
        AttrValue::Int(i) => {
            p.r#type = T::Int as i32;
            p.i = *i;
        }
        AttrValue::String(s) => {
            p.r#type = T::String as i32;
            p.s = Bytes::from(s.clone().into_bytes());
        }
        AttrValue::Tensor(t) => {
            p.r#type = T::Tensor as i32;
            p.t = Some(tensor_proto(String::new(), t, &Vec::new()));
        }
        AttrValue::Graph(g) => {
            p.r#type = T::Graph as i32;
            p.g = Some(graph_proto(names, g, false, Detail::FULL));
        }
        AttrValue::Floats(v) => {
            p.r#type = T::Floats as i32;
            p.floats = v.clone();
        }
        AttrValue::Ints(v) => {
            p.r#type = T::Ints as i32;
            p.ints = v.clone();
        }
        AttrValue::Strings(v) => {
            p.r#type = T::Strings as i32;
            p.strings = v.iter().map(|s| Bytes::from(s.clone().into_bytes())).collect();
        }
        AttrValue::Type(c, t) => {
            p.r#type = T::TypeProto as i32;
            p.tp = Some(contained(*c, tensor_type(Some(*t), None)));
        }
    }
    p
}
