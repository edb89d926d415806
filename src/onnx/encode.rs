//! [`Model`] → `ModelProto`, and writing it to disk (inline or with external data).
//!
//! Names are settled here: values the lowering did not name become `val_<k>`, nodes
//! `node_<OpType>_<k>`, numbered in graph order, so the same model always encodes to the same bytes.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use super::ir::*;
use super::proto;

/// ONNX IR version written (ONNX 1.16+ reads it; it allows metadata_props on nodes and values).
pub const IR_VERSION: i64 = 10;

/// Where initializer bytes go when saving.
#[derive(Clone, Debug)]
pub enum DataPlacement {
    /// In the ModelProto's `raw_data`.
    Inline,
    /// In `location` (a file name relative to the model), for tensors of at least `threshold` bytes.
    External { location: String, threshold: usize },
}

struct Namer<'m> {
    model: &'m Model,
    names: Vec<Option<String>>,
    used: HashSet<String>,
    next_value: usize,
    next_node: usize,
}

impl<'m> Namer<'m> {
    fn new(model: &'m Model) -> Self {
        let used: HashSet<String> =
            model.values.iter().filter(|v| !v.name.is_empty()).map(|v| v.name.clone()).collect();
        let names = model.values.iter().map(|v| (!v.name.is_empty()).then(|| v.name.clone())).collect();
        Namer { model, names, used, next_value: 0, next_node: 0 }
    }

    fn value(&mut self, v: Value) -> String {
        if let Some(n) = &self.names[v.index()] {
            return n.clone();
        }
        let name = loop {
            let n = format!("val_{}", self.next_value);
            self.next_value += 1;
            if !self.used.contains(&n) {
                break n;
            }
        };
        self.used.insert(name.clone());
        self.names[v.index()] = Some(name.clone());
        name
    }

    fn node(&mut self, op_type: &str) -> String {
        loop {
            let n = format!("node_{op_type}_{}", self.next_node);
            self.next_node += 1;
            if !self.used.contains(&n) {
                self.used.insert(n.clone());
                return n;
            }
        }
    }
}

fn props(m: &Metadata) -> Vec<proto::StringStringEntryProto> {
    m.iter().map(|(k, v)| proto::StringStringEntryProto { key: k.clone(), value: v.clone() }).collect()
}

fn tensor_proto(name: String, t: &TensorData, metadata: &Metadata) -> proto::TensorProto {
    proto::TensorProto {
        name,
        dims: t.dims.clone(),
        data_type: t.dtype as i32,
        raw_data: t.raw.clone(),
        metadata_props: props(metadata),
        ..Default::default()
    }
}

fn value_info(namer: &mut Namer, v: Value) -> proto::ValueInfoProto {
    let info = namer.model.value(v);
    let shape = info.shape.as_ref().map(|dims| proto::TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| proto::tensor_shape_proto::Dimension {
                value: Some(match d {
                    Dim::Fixed(n) => proto::tensor_shape_proto::dimension::Value::DimValue(*n),
                    Dim::Param(p) => proto::tensor_shape_proto::dimension::Value::DimParam(p.clone()),
                }),
                ..Default::default()
            })
            .collect(),
    });
    let elem_type = info.dtype.map(|d| d as i32).unwrap_or(0);
    proto::ValueInfoProto {
        name: namer.value(v),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(proto::type_proto::Tensor { elem_type, shape })),
            ..Default::default()
        }),
        metadata_props: props(&info.metadata),
        ..Default::default()
    }
}

fn attribute(namer: &mut Namer, a: &Attribute) -> proto::AttributeProto {
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
            p.g = Some(graph_proto(namer, g, false));
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
    }
    p
}

fn graph_proto(namer: &mut Namer, g: &Graph, main: bool) -> proto::GraphProto {
    let mut gp = proto::GraphProto { name: g.name.clone(), metadata_props: props(&g.metadata), ..Default::default() };
    gp.input = g.inputs.iter().map(|&v| value_info(namer, v)).collect();
    let mut described: HashSet<Value> = g.inputs.iter().copied().collect();
    described.extend(g.outputs.iter().copied());
    for node in &g.nodes {
        let name = if node.name.is_empty() { namer.node(&node.op_type) } else { node.name.clone() };
        let np = proto::NodeProto {
            input: node.inputs.iter().map(|i| i.map(|v| namer.value(v)).unwrap_or_default()).collect(),
            output: node.outputs.iter().map(|&v| namer.value(v)).collect(),
            name,
            op_type: node.op_type.clone(),
            domain: node.domain.clone(),
            attribute: node.attributes.iter().map(|a| attribute(namer, a)).collect(),
            metadata_props: props(&node.metadata),
            ..Default::default()
        };
        gp.node.push(np);
        // Shapes and types of intermediate values that came from the FX graph.
        for &o in &node.outputs {
            let info = namer.model.value(o);
            if info.shape.is_some() && info.dtype.is_some() && described.insert(o) {
                gp.value_info.push(value_info(namer, o));
            }
        }
    }
    gp.output = g.outputs.iter().map(|&v| value_info(namer, v)).collect();
    if main {
        for &v in &g.initializers {
            let info = namer.model.value(v);
            if let Some(t) = &info.constant {
                let name = namer.value(v);
                gp.initializer.push(tensor_proto(name, t, &info.metadata));
                if !info.metadata.is_empty() {
                    // torch.onnx keeps initializer metadata on a value_info entry of the same name.
                    gp.value_info.push(value_info(namer, v));
                }
            }
        }
    }
    gp
}

/// Encode `model` as a `ModelProto` with every weight inline.
pub fn to_proto(model: &Model) -> proto::ModelProto {
    let mut namer = Namer::new(model);
    let graph = graph_proto(&mut namer, &model.graph, true);
    proto::ModelProto {
        ir_version: IR_VERSION,
        opset_import: model
            .opset_imports
            .iter()
            .map(|(d, v)| proto::OperatorSetIdProto { domain: d.clone(), version: *v })
            .collect(),
        producer_name: "fxonnx".into(),
        producer_version: model.producer_version.clone(),
        graph: Some(graph),
        metadata_props: props(&model.metadata),
        ..Default::default()
    }
}

/// Errors while writing a model.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the model is {size} bytes with its weights inline, over protobuf's 2 GiB limit; hint: save with external data (--external-data)")]
    TooLarge { size: usize },
}

/// Protobuf cannot encode messages of 2 GiB or more.
pub const PROTOBUF_LIMIT: usize = (1 << 31) - 1;

/// Write `model` to `path`, its weights placed as `placement` says. Files are written to temporary
/// names in the same folder and renamed into place, so a failure never leaves a partial output.
pub fn save(mut model: proto::ModelProto, path: &Path, placement: &DataPlacement) -> Result<(), SaveError> {
    use prost::Message;
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| SaveError::Io { path: p.clone(), source }
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut data_file = None;
    if let DataPlacement::External { location, threshold } = placement {
        let data_path = dir.join(location);
        let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(io(&data_path))?;
        let mut offset = 0usize;
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
            if let Some(g) = model.graph.as_mut() {
                for t in &mut g.initializer {
                    if t.raw_data.len() < *threshold {
                        continue;
                    }
                    // 64-byte alignment lets readers map every tensor in place.
                    let pad = (64 - offset % 64) % 64;
                    w.write_all(&[0u8; 64][..pad]).map_err(io(&data_path))?;
                    offset += pad;
                    let len = t.raw_data.len();
                    w.write_all(&t.raw_data).map_err(io(&data_path))?;
                    t.raw_data = Bytes::new();
                    t.data_location = proto::tensor_proto::DataLocation::External as i32;
                    t.external_data = vec![
                        proto::StringStringEntryProto { key: "location".into(), value: location.clone() },
                        proto::StringStringEntryProto { key: "offset".into(), value: offset.to_string() },
                        proto::StringStringEntryProto { key: "length".into(), value: len.to_string() },
                    ];
                    offset += len;
                }
            }
            w.flush().map_err(io(&data_path))?;
        }
        data_file = Some((tmp, data_path));
    }
    let size = model.encoded_len();
    if size > PROTOBUF_LIMIT {
        return Err(SaveError::TooLarge { size });
    }
    let bytes = model.encode_to_vec();
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(io(path))?;
    tmp.write_all(&bytes).map_err(io(path))?;
    if let Some((data_tmp, data_path)) = data_file {
        data_tmp.persist(&data_path).map_err(|e| SaveError::Io { path: data_path.clone(), source: e.error })?;
    }
    tmp.persist(path).map_err(|e| SaveError::Io { path: path.to_path_buf(), source: e.error })?;
    Ok(())
}
