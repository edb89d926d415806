//! [`Model`] → ONNX protobuf, written straight to disk (inline or with external data).
//!
//! Names are settled here: values the lowering did not name become `val_<k>`, nodes
//! `node_<OpType>_<k>`, numbered in graph order, so the same model always encodes to the same bytes.
//!
//! Saving streams: [`Encoder`] computes every name and message length once, then writes the
//! `ModelProto` field by field into the file, weight bytes straight from the archive's memory map
//! (to the model's `raw_data` or to the `.data` file). No `ModelProto` is built, so no step holds
//! all weights, or all node metadata strings, in anonymous memory. The bytes are exactly those of
//! prost's `encode_to_vec` of [`Encoder::to_proto`] (tests check it): prost writes fields in tag
//! order and skips proto3 defaults, and so does this writer.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use super::derived::ChunkRoom;
use super::ir::*;
use super::proto;
use super::write_behind::{Target, WriteBehind};

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

// ------------------------------------------------------------------------------------------------
// Names
// ------------------------------------------------------------------------------------------------

/// The value or node has a name of its own in the IR.
const GIVEN: u32 = u32::MAX;
/// The value is not referenced by the encoded model.
const UNNAMED: u32 = u32::MAX - 1;

/// Every name the encoded model uses, assigned in one walk over the graph (in the order the
/// encoder visits values), so both the streaming writer and [`to_proto`] use the same names.
///
/// Generated names are stored as their number only (`val_<k>`, `node_<OpType>_<k>`): no string
/// per value is allocated.
pub struct Names<'m> {
    model: &'m Model,
    /// Per value: [`GIVEN`], [`UNNAMED`] or `k` of `val_<k>`.
    values: Vec<u32>,
    /// Per node of every graph: [`GIVEN`] or `k` of `node_<OpType>_<k>`; each graph's nodes are a
    /// contiguous run starting at `graphs[&graph address]`.
    nodes: Vec<u32>,
    graphs: HashMap<*const Graph, usize>,
}

struct NameWalk<'m> {
    names: Names<'m>,
    /// Names given in the IR, which generated names must avoid.
    used: HashSet<&'m str>,
    // Only when some given name looks like a generated one do candidates need a lookup.
    check_values: bool,
    check_nodes: bool,
    next_value: u32,
    next_node: u32,
}

impl<'m> Names<'m> {
    pub fn new(model: &'m Model) -> Self {
        // Only given names shaped like generated ones can collide with them.
        let used: HashSet<&str> = model
            .values
            .iter()
            .map(|v| v.name.as_str())
            .filter(|n| n.starts_with("val_") || n.starts_with("node_"))
            .collect();
        let check_values = used.iter().any(|n| n.starts_with("val_"));
        let check_nodes = used.iter().any(|n| n.starts_with("node_"));
        let mut walk = NameWalk {
            names: Names {
                model,
                values: vec![UNNAMED; model.values.len()],
                nodes: Vec::with_capacity(model.graph.nodes.len()),
                graphs: HashMap::new(),
            },
            used,
            check_values,
            check_nodes,
            next_value: 0,
            next_node: 0,
        };
        walk.graph(&model.graph, true);
        walk.names
    }

    fn value(&self, v: Value) -> Name<'m> {
        match self.values[v.index()] {
            GIVEN => Name::Given(&self.model.values[v.index()].name),
            UNNAMED => Name::Given(""), // unreachable: the walk names every value the writer uses
            k => Name::Value(k),
        }
    }

    /// Where the node names of `graph` start in `nodes`.
    fn base(&self, graph: &Graph) -> usize {
        self.graphs.get(&(graph as *const Graph)).copied().unwrap_or(0)
    }

    fn node<'a>(&self, graph: &'a Graph, base: usize, j: usize) -> Name<'a> {
        let node = &graph.nodes[j];
        match self.nodes.get(base + j).copied().unwrap_or(GIVEN) {
            GIVEN => Name::Given(&node.name),
            k => Name::Node(&node.op_type, k),
        }
    }
}

impl<'m> NameWalk<'m> {
    fn value(&mut self, v: Value) {
        let i = v.index();
        if self.names.values[i] != UNNAMED {
            return;
        }
        if !self.names.model.values[i].name.is_empty() {
            self.names.values[i] = GIVEN;
            return;
        }
        loop {
            let k = self.next_value;
            self.next_value += 1;
            if !self.check_values || !self.used.contains(format!("val_{k}").as_str()) {
                self.names.values[i] = k;
                return;
            }
        }
    }

    fn node(&mut self, op_type: &str) -> u32 {
        loop {
            let k = self.next_node;
            self.next_node += 1;
            if !self.check_nodes || !self.used.contains(format!("node_{op_type}_{k}").as_str()) {
                return k;
            }
        }
    }

    /// Visit `g` in the writer's order: inputs, then per node its name, inputs, outputs and
    /// subgraphs, then outputs and (main graph) initializers.
    fn graph(&mut self, g: &Graph, main: bool) {
        let base = self.names.nodes.len();
        self.names.graphs.insert(g as *const Graph, base);
        self.names.nodes.resize(base + g.nodes.len(), GIVEN);
        for &v in &g.inputs {
            self.value(v);
        }
        for (j, node) in g.nodes.iter().enumerate() {
            if node.name.is_empty() {
                self.names.nodes[base + j] = self.node(&node.op_type);
            }
            for &v in node.inputs.iter().flatten() {
                self.value(v);
            }
            for &v in &node.outputs {
                self.value(v);
            }
            for a in &node.attributes {
                if let AttrValue::Graph(sub) = &a.value {
                    self.graph(sub, false);
                }
            }
        }
        for &v in &g.outputs {
            self.value(v);
        }
        if main {
            for &v in &g.initializers {
                if self.names.model.value(v).constant.is_some() {
                    self.value(v);
                }
            }
        }
    }
}

/// A name as the writer emits it, without allocating the generated ones.
#[derive(Clone, Copy)]
enum Name<'a> {
    Given(&'a str),
    Value(u32),
    Node(&'a str, u32),
}

impl Name<'_> {
    fn len(self) -> usize {
        match self {
            Name::Given(s) => s.len(),
            Name::Value(k) => 4 + digits(k),
            Name::Node(op, k) => 6 + op.len() + digits(k),
        }
    }

    fn put<S: Sink>(self, s: &mut S) {
        match self {
            Name::Given(n) => s.put(n.as_bytes()),
            Name::Value(k) => {
                s.put(b"val_");
                put_decimal(s, k);
            }
            Name::Node(op, k) => {
                s.put(b"node_");
                s.put(op.as_bytes());
                s.put(b"_");
                put_decimal(s, k);
            }
        }
    }

    fn owned(self) -> String {
        match self {
            Name::Given(s) => s.to_string(),
            Name::Value(k) => format!("val_{k}"),
            Name::Node(op, k) => format!("node_{op}_{k}"),
        }
    }
}

fn digits(mut k: u32) -> usize {
    let mut n = 1;
    while k >= 10 {
        k /= 10;
        n += 1;
    }
    n
}

fn put_decimal<S: Sink>(s: &mut S, mut k: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (k % 10) as u8;
        k /= 10;
        if k == 0 {
            break;
        }
    }
    s.put(&buf[i..]);
}

// ------------------------------------------------------------------------------------------------
// ModelProto built in memory (inspection, reports, tests)
// ------------------------------------------------------------------------------------------------

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
    let shape = info.shape.as_ref().map(|dims| proto::TensorShapeProto {
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
    });
    let elem_type = info.dtype.map(|d| d as i32).unwrap_or(0);
    proto::ValueInfoProto {
        name: names.value(v).owned(),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(proto::type_proto::Tensor { elem_type, shape })),
            ..Default::default()
        }),
        metadata_props: props(&info.metadata),
        ..Default::default()
    }
}

fn attribute(names: &Names, a: &Attribute) -> proto::AttributeProto {
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
            p.g = Some(graph_proto(names, g, false, true));
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

/// Values of `g` that get no `value_info` entry of their own: its inputs and outputs are
/// described there already (node outputs are unique, so no other value repeats).
fn io_values(g: &Graph) -> HashSet<Value> {
    g.inputs.iter().chain(&g.outputs).copied().collect()
}

/// `full: false` leaves out the main graph's initializer bytes and its nodes' metadata: what
/// printing the model without metadata needs (a report's copy of a large graph's metadata had
/// been the largest part of its memory).
fn graph_proto(names: &Names, g: &Graph, main: bool, full: bool) -> proto::GraphProto {
    let mut gp = proto::GraphProto { name: g.name.clone(), metadata_props: props(&g.metadata), ..Default::default() };
    gp.input = g.inputs.iter().map(|&v| value_info(names, v)).collect();
    let io = io_values(g);
    let base = names.base(g);
    gp.node.reserve(g.nodes.len());
    for (j, node) in g.nodes.iter().enumerate() {
        let np = proto::NodeProto {
            input: node.inputs.iter().map(|i| i.map(|v| names.value(v).owned()).unwrap_or_default()).collect(),
            output: node.outputs.iter().map(|&v| names.value(v).owned()).collect(),
            name: names.node(g, base, j).owned(),
            op_type: node.op_type.clone(),
            domain: node.domain.clone(),
            attribute: node.attributes.iter().map(|a| attribute(names, a)).collect(),
            metadata_props: if full { props(&node.metadata.to_pairs()) } else { Vec::new() },
            ..Default::default()
        };
        gp.node.push(np);
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
                gp.initializer.push(match full {
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

/// Whether node output `o` gets a `value_info` entry: it has a type and shape from the FX graph
/// and is not a graph input or output.
fn described(model: &Model, io: &HashSet<Value>, o: Value) -> bool {
    let info = model.value(o);
    info.shape.is_some() && info.dtype.is_some() && !io.contains(&o)
}

fn model_proto(names: &Names, model: &Model, full: bool) -> proto::ModelProto {
    proto::ModelProto {
        ir_version: IR_VERSION,
        opset_import: model
            .opset_imports
            .iter()
            .map(|(d, v)| proto::OperatorSetIdProto { domain: d.clone(), version: *v })
            .collect(),
        producer_name: PRODUCER.into(),
        producer_version: model.producer_version.clone(),
        graph: Some(graph_proto(names, &model.graph, true, full)),
        metadata_props: props(&model.metadata),
        ..Default::default()
    }
}

const PRODUCER: &str = "fxonnx";

/// Encode `model` as a `ModelProto` with every weight inline (weights are shared, not copied).
pub fn to_proto(model: &Model) -> proto::ModelProto {
    model_proto(&Names::new(model), model, true)
}

/// [`to_proto`] without the initializers' bytes and the nodes' metadata: what printing the model
/// without metadata needs (the printer shows initializers' types and shapes only), without
/// computing folded weights.
pub fn to_proto_outline(model: &Model) -> proto::ModelProto {
    model_proto(&Names::new(model), model, false)
}

// ------------------------------------------------------------------------------------------------
// Protobuf wire format, written to a sink that either counts or writes
// ------------------------------------------------------------------------------------------------

/// Where encoded bytes go: [`Counter`] measures a message, [`Out`] writes it.
trait Sink {
    fn put(&mut self, b: &[u8]);
    /// Tensor bytes inline in the model (weights: maybe copied from the archive file, or
    /// computed while written).
    fn raw(&mut self, b: &Raw);
    /// Bytes of an external tensor, `pad` zero bytes first (for alignment): to the data file.
    fn external(&mut self, pad: usize, raw: &Raw);
    /// A message body of `len` bytes follows: a sink that only counts takes the length and
    /// returns true (the body need not be walked again).
    fn counted(&mut self, _len: usize) -> bool {
        false
    }
}

struct Counter(usize);

impl Sink for Counter {
    fn put(&mut self, b: &[u8]) {
        self.0 += b.len();
    }
    /// Only the length: a derived tensor is not computed to be measured.
    fn raw(&mut self, b: &Raw) {
        self.0 += b.len();
    }
    fn external(&mut self, _: usize, _: &Raw) {}
    fn counted(&mut self, len: usize) -> bool {
        self.0 += len;
        true
    }
}

/// Writes the model (and the external data) from a second thread ([`WriteBehind`]); the first IO
/// error stops the writing and is returned when the save finishes.
struct Out<'s> {
    files: WriteBehind<'s>,
}

/// Archive weights from this size on are read from the file into the buffers; smaller ones share
/// their pages with their neighbours, and a system call each would cost more than it saves.
const READ_MIN: usize = 64 << 10;

impl Out<'_> {
    fn target(to_data: bool) -> Target {
        if to_data {
            Target::Data
        } else {
            Target::Model
        }
    }

    /// Tensor bytes: stored ones are read from the archive file into the write-behind buffers
    /// (the writer thread hands them to the kernel); derived ones are computed into them.
    ///
    /// Stored weights used to be copied file to file by the kernel (`copy_file_range`); on ext4
    /// that is a splice through a pipe, and reading them into the buffers is faster: 4 GB of
    /// weights as external data 3.5-10.6 s -> 0.94 s. Reading with `pread` rather than through the
    /// map (fault-around, then `release`) made ViT-B/16's export another 18 % faster.
    fn tensor(&mut self, to_data: bool, raw: &Raw) {
        let target = Self::target(to_data);
        // A derived tensor (a folded weight) is computed a chunk at a time straight into the
        // output buffers: it never exists whole in memory.
        struct Room<'a, 's>(&'a mut WriteBehind<'s>, Target);
        impl ChunkRoom for Room<'_, '_> {
            fn room(&mut self, len: usize) -> Option<&mut [u8]> {
                self.0.reserve(self.1, len)
            }
        }
        if raw.compute_into(&mut Room(&mut self.files, target)) {
            // Its source pages were read through the map: not kept resident once written.
            if let Some(d) = raw.derived() {
                crate::pt2::release(d.source());
            }
            return;
        }
        let Some(b) = raw.existing() else { return };
        if b.len() < READ_MIN {
            self.files.write(target, b);
            return;
        }
        // Read from the archive file rather than copied through its map (`copy_out`): the pages
        // are never mapped into the process.
        self.files.write_with(target, b, crate::pt2::copy_out);
    }
}

impl Sink for Out<'_> {
    fn put(&mut self, b: &[u8]) {
        self.files.write(Target::Model, b);
    }
    fn raw(&mut self, b: &Raw) {
        self.tensor(false, b);
    }
    fn external(&mut self, pad: usize, raw: &Raw) {
        self.files.write(Target::Data, &[0u8; 64][..pad]);
        self.tensor(true, raw);
    }
}

const VARINT: u32 = 0;
const I32: u32 = 5;
const LEN: u32 = 2;

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

fn varint<S: Sink>(s: &mut S, mut v: u64) {
    let mut buf = [0u8; 10];
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    s.put(&buf[..=n]);
}

fn key<S: Sink>(s: &mut S, tag: u32, wire: u32) {
    varint(s, ((tag << 3) | wire) as u64);
}

/// A `bytes`/`string` element (repeated fields write every element, empty ones too).
fn bytes_elem<S: Sink>(s: &mut S, tag: u32, b: &[u8]) {
    key(s, tag, LEN);
    varint(s, b.len() as u64);
    s.put(b);
}

/// A singular proto3 `string`/`bytes` field: omitted when empty.
fn string<S: Sink>(s: &mut S, tag: u32, b: &str) {
    if !b.is_empty() {
        bytes_elem(s, tag, b.as_bytes());
    }
}

fn name_elem<S: Sink>(s: &mut S, tag: u32, n: Name) {
    key(s, tag, LEN);
    varint(s, n.len() as u64);
    n.put(s);
}

/// A singular proto3 integer field (`int32` values are sign-extended like prost does).
fn int<S: Sink>(s: &mut S, tag: u32, v: i64) {
    if v != 0 {
        key(s, tag, VARINT);
        varint(s, v as u64);
    }
}

fn packed_ints<S: Sink>(s: &mut S, tag: u32, v: &[i64]) {
    if !v.is_empty() {
        key(s, tag, LEN);
        varint(s, v.iter().map(|&x| varint_len(x as u64)).sum::<usize>() as u64);
        for &x in v {
            varint(s, x as u64);
        }
    }
}

fn packed_floats<S: Sink>(s: &mut S, tag: u32, v: &[f32]) {
    if !v.is_empty() {
        key(s, tag, LEN);
        varint(s, 4 * v.len() as u64);
        for x in v {
            s.put(&x.to_le_bytes());
        }
    }
}

/// A message the writer can emit; its length is measured by writing it to a [`Counter`].
trait Msg {
    fn write<S: Sink>(&self, s: &mut S);
    fn len(&self) -> usize {
        let mut c = Counter(0);
        self.write(&mut c);
        c.0
    }
}

fn message<S: Sink, M: Msg>(s: &mut S, tag: u32, m: &M) {
    message_with_len(s, tag, m, m.len());
}

fn message_with_len<S: Sink, M: Msg>(s: &mut S, tag: u32, m: &M, len: usize) {
    key(s, tag, LEN);
    varint(s, len as u64);
    if !s.counted(len) {
        m.write(s);
    }
}

/// A prost message (rare, small things: tensor and graph attributes).
struct Prost<'a, M: prost::Message>(&'a M);

impl<M: prost::Message> Msg for Prost<'_, M> {
    fn write<S: Sink>(&self, s: &mut S) {
        let mut buf = Vec::with_capacity(self.0.encoded_len());
        self.0.encode_raw(&mut buf);
        s.put(&buf);
    }
    fn len(&self) -> usize {
        self.0.encoded_len()
    }
}

/// A `StringStringEntryProto`: key, and a value given in two pieces (see [`MetadataProps`]).
struct Entry<'a>(&'a str, &'a str, &'a str);

impl Msg for Entry<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        string(s, 1, self.0);
        let value = self.1.len() + self.2.len();
        if value > 0 {
            key(s, 2, LEN);
            varint(s, value as u64);
            s.put(self.1.as_bytes());
            s.put(self.2.as_bytes());
        }
    }
    fn len(&self) -> usize {
        let field = |n: usize| if n == 0 { 0 } else { 1 + varint_len(n as u64) + n };
        field(self.0.len()) + field(self.1.len() + self.2.len())
    }
}

fn metadata<S: Sink>(s: &mut S, tag: u32, m: &Metadata) {
    for (k, v) in m {
        message(s, tag, &Entry(k, "", v));
    }
}

fn node_metadata<S: Sink>(s: &mut S, tag: u32, m: &MetadataProps) {
    m.for_each(|k, prefix, rest| message(s, tag, &Entry(k, prefix, rest)));
}

struct DimMsg<'a>(&'a Dim);

impl Msg for DimMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        // A oneof member is written even when it holds the default value.
        match self.0 {
            Dim::Fixed(n) => {
                key(s, 1, VARINT);
                varint(s, *n as u64);
            }
            Dim::Param(p) => bytes_elem(s, 2, p.as_bytes()),
        }
    }
}

struct ShapeMsg<'a>(&'a [Dim]);

impl Msg for ShapeMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        for d in self.0 {
            message(s, 1, &DimMsg(d));
        }
    }
}

struct TensorTypeMsg<'a>(&'a ValueInfo);

impl Msg for TensorTypeMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        int(s, 1, self.0.dtype.map(|d| d as i64).unwrap_or(0));
        if let Some(dims) = &self.0.shape {
            message(s, 2, &ShapeMsg(dims));
        }
    }
}

struct TypeMsg<'a>(&'a ValueInfo);

impl Msg for TypeMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        message(s, 1, &TensorTypeMsg(self.0));
    }
}

struct ValueInfoMsg<'a> {
    names: &'a Names<'a>,
    v: Value,
}

impl Msg for ValueInfoMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        let info = self.names.model.value(self.v);
        let name = self.names.value(self.v);
        if name.len() > 0 {
            name_elem(s, 1, name);
        }
        message(s, 2, &TypeMsg(info));
        metadata(s, 4, &info.metadata);
    }
}

struct AttrMsg<'a> {
    names: &'a Names<'a>,
    a: &'a Attribute,
}

impl Msg for AttrMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        use proto::attribute_proto::AttributeType as T;
        let ty = match &self.a.value {
            AttrValue::Tensor(_) | AttrValue::Graph(_) => {
                // Rare and small next to the graph: encoded by prost.
                return Prost(&attribute(self.names, self.a)).write(s);
            }
            AttrValue::Float(f) => {
                string(s, 1, &self.a.name);
                if *f != 0.0 {
                    key(s, 2, I32);
                    s.put(&f.to_le_bytes());
                }
                T::Float
            }
            AttrValue::Int(i) => {
                string(s, 1, &self.a.name);
                int(s, 3, *i);
                T::Int
            }
            AttrValue::String(v) => {
                string(s, 1, &self.a.name);
                string(s, 4, v);
                T::String
            }
            AttrValue::Floats(v) => {
                string(s, 1, &self.a.name);
                packed_floats(s, 7, v);
                T::Floats
            }
            AttrValue::Ints(v) => {
                string(s, 1, &self.a.name);
                packed_ints(s, 8, v);
                T::Ints
            }
            AttrValue::Strings(v) => {
                string(s, 1, &self.a.name);
                for x in v {
                    bytes_elem(s, 9, x.as_bytes());
                }
                T::Strings
            }
        };
        int(s, 20, ty as i64);
    }
}

struct NodeMsg<'a> {
    names: &'a Names<'a>,
    graph: &'a Graph,
    /// [`Names::base`] of `graph`.
    base: usize,
    j: usize,
}

impl Msg for NodeMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        let node = &self.graph.nodes[self.j];
        for i in &node.inputs {
            match i {
                Some(v) => name_elem(s, 1, self.names.value(*v)),
                None => bytes_elem(s, 1, b""),
            }
        }
        for &o in &node.outputs {
            name_elem(s, 2, self.names.value(o));
        }
        let name = self.names.node(self.graph, self.base, self.j);
        if name.len() > 0 {
            name_elem(s, 3, name);
        }
        string(s, 4, &node.op_type);
        for a in &node.attributes {
            message(s, 5, &AttrMsg { names: self.names, a });
        }
        string(s, 7, &node.domain);
        node_metadata(s, 9, &node.metadata);
    }
}

/// Where one initializer's bytes go.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Placed {
    Inline,
    /// At `offset` of the data file, after `pad` zero bytes of alignment.
    External {
        offset: usize,
        pad: usize,
    },
}

struct TensorMsg<'a> {
    name: Name<'a>,
    t: &'a TensorData,
    metadata: &'a Metadata,
    placed: Placed,
    location: &'a str,
}

impl Msg for TensorMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        packed_ints(s, 1, &self.t.dims);
        int(s, 2, self.t.dtype as i64);
        if self.name.len() > 0 {
            name_elem(s, 8, self.name);
        }
        match self.placed {
            Placed::Inline => {
                if !self.t.raw.is_empty() {
                    key(s, 9, LEN);
                    varint(s, self.t.raw.len() as u64);
                    s.raw(&self.t.raw);
                }
            }
            Placed::External { offset, pad } => {
                s.external(pad, &self.t.raw);
                let (offset, length) = (offset.to_string(), self.t.raw.len().to_string());
                for (k, v) in [("location", self.location), ("offset", offset.as_str()), ("length", length.as_str())] {
                    message(s, 13, &Entry(k, "", v));
                }
                int(s, 14, proto::tensor_proto::DataLocation::External as i64);
            }
        }
        metadata(s, 16, self.metadata);
    }
}

struct GraphMsg<'a> {
    names: &'a Names<'a>,
    g: &'a Graph,
    /// The main graph writes initializers, placed as the encoder decided.
    initializers: Option<&'a Placement>,
    /// Lengths of the nodes, when known already (the main graph's, measured once).
    node_lens: Option<&'a [u32]>,
}

impl Msg for GraphMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        let (names, g) = (self.names, self.g);
        let base = names.base(g);
        for j in 0..g.nodes.len() {
            let m = NodeMsg { names, graph: g, base, j };
            match self.node_lens {
                Some(lens) => message_with_len(s, 1, &m, lens[j] as usize),
                None => message(s, 1, &m),
            }
        }
        string(s, 2, &g.name);
        if let Some(p) = self.initializers {
            for (t, &v) in p.tensors.iter().zip(&p.values) {
                let info = names.model.value(v);
                let Some(data) = &info.constant else { continue };
                let m = TensorMsg {
                    name: names.value(v),
                    t: data,
                    metadata: &info.metadata,
                    placed: *t,
                    location: &p.location,
                };
                message(s, 5, &m);
            }
        }
        for &v in &g.inputs {
            message(s, 11, &ValueInfoMsg { names, v });
        }
        for &v in &g.outputs {
            message(s, 12, &ValueInfoMsg { names, v });
        }
        let io = io_values(g);
        for node in &g.nodes {
            for &o in &node.outputs {
                if described(names.model, &io, o) {
                    message(s, 13, &ValueInfoMsg { names, v: o });
                }
            }
        }
        if self.initializers.is_some() {
            for &v in &g.initializers {
                let info = names.model.value(v);
                if info.constant.is_some() && !info.metadata.is_empty() {
                    message(s, 13, &ValueInfoMsg { names, v });
                }
            }
        }
        metadata(s, 16, &g.metadata);
    }
}

/// Where every initializer of the main graph goes.
struct Placement {
    values: Vec<Value>,
    tensors: Vec<Placed>,
    location: String,
    data_len: usize,
}

impl Placement {
    fn new(model: &Model, placement: &DataPlacement) -> Placement {
        let values: Vec<Value> =
            model.graph.initializers.iter().copied().filter(|&v| model.value(v).constant.is_some()).collect();
        let mut tensors = Vec::with_capacity(values.len());
        let mut offset = 0usize;
        let (location, threshold) = match placement {
            DataPlacement::Inline => (String::new(), usize::MAX),
            DataPlacement::External { location, threshold } => (location.clone(), *threshold),
        };
        for &v in &values {
            let len = model.value(v).constant.as_ref().map_or(0, |t| t.raw.len());
            if len < threshold {
                tensors.push(Placed::Inline);
                continue;
            }
            // 64-byte alignment lets readers map every tensor in place.
            let pad = (64 - offset % 64) % 64;
            offset += pad;
            tensors.push(Placed::External { offset, pad });
            offset += len;
        }
        Placement { values, tensors, location, data_len: offset }
    }
}

// ------------------------------------------------------------------------------------------------
// Saving
// ------------------------------------------------------------------------------------------------

/// Errors while writing a model.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the model is {size} bytes with its weights inline, over protobuf's 2 GiB limit; hint: save with external data (--external-data)")]
    TooLarge { size: usize },
    #[error(
        "the model is {size} bytes without its weights (mostly graph and metadata_props), over protobuf's 2 GiB limit"
    )]
    GraphTooLarge { size: usize },
}

/// Protobuf cannot encode messages of 2 GiB or more.
pub const PROTOBUF_LIMIT: usize = (1 << 31) - 1;

/// A model ready to write: names assigned, initializers placed, every length measured.
pub struct Encoder<'m> {
    model: &'m Model,
    names: Names<'m>,
    placement: Placement,
    node_lens: Vec<u32>,
    graph_len: usize,
    /// Size of the `.onnx` file.
    model_len: usize,
    external: bool,
}

/// A temporary file in `dir` for an output that is renamed into place once complete, created with
/// the mode any new file gets (0666 less the umask): tempfile's default, 0600, made saved models
/// readable by their owner only.
fn output_temp(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Reserve `len` bytes of disk for `file` before writing it (`fallocate`, keeping its size), so
/// that the writes find their blocks allocated: ext4 otherwise reserves each 4 KiB block of a
/// buffered write as it comes (ViT-B/16: 10 % less kernel time; hf_llama: 4 % less wall time).
/// Best effort: a file system that cannot preallocate is written as before, and the file's size
/// is what was written, whatever was reserved.
fn preallocate(file: &std::fs::File, len: usize) {
    // 64-bit only: there glibc's `fallocate` takes a 64-bit `off_t` (on 32-bit it is `fallocate64`).
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        use std::os::fd::AsRawFd;
        use std::os::raw::c_int;
        extern "C" {
            fn fallocate(fd: c_int, mode: c_int, offset: i64, len: i64) -> c_int;
        }
        const FALLOC_FL_KEEP_SIZE: c_int = 1;
        if let Ok(len) = i64::try_from(len) {
            if len > 0 {
                // SAFETY: a plain system call on an open file descriptor of ours.
                unsafe { fallocate(file.as_raw_fd(), FALLOC_FL_KEEP_SIZE, 0, len) };
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    let _ = (file, len);
}

impl<'m> Encoder<'m> {
    /// Name and measure `model` for saving as `placement` says. Fails when the `ModelProto` would
    /// pass protobuf's 2 GiB limit.
    pub fn new(model: &'m Model, placement: &DataPlacement) -> Result<Encoder<'m>, SaveError> {
        let names = Names::new(model);
        let placement_plan = Placement::new(model, placement);
        let mut node_lens = Vec::with_capacity(model.graph.nodes.len());
        let base = names.base(&model.graph);
        for j in 0..model.graph.nodes.len() {
            let len = NodeMsg { names: &names, graph: &model.graph, base, j }.len();
            // A message this large is over the limit anyway; clamp so the sum still says so.
            node_lens.push(u32::try_from(len).unwrap_or(u32::MAX));
        }
        let mut enc = Encoder {
            model,
            names,
            placement: placement_plan,
            node_lens,
            graph_len: 0,
            model_len: 0,
            external: matches!(placement, DataPlacement::External { .. }),
        };
        enc.graph_len = enc.graph_msg().len();
        let size = enc.encoded_len();
        enc.model_len = size;
        if size > PROTOBUF_LIMIT {
            return Err(if enc.external { SaveError::GraphTooLarge { size } } else { SaveError::TooLarge { size } });
        }
        Ok(enc)
    }

    fn graph_msg(&self) -> GraphMsg<'_> {
        GraphMsg {
            names: &self.names,
            g: &self.model.graph,
            initializers: Some(&self.placement),
            node_lens: Some(&self.node_lens),
        }
    }

    /// Size of the `.onnx` file.
    pub fn encoded_len(&self) -> usize {
        let mut c = Counter(0);
        self.write_model(&mut c);
        c.0
    }

    /// Size of the external data file (0 when every weight is inline).
    pub fn data_len(&self) -> usize {
        self.placement.data_len
    }

    fn write_model<S: Sink>(&self, s: &mut S) {
        let m = self.model;
        int(s, 1, IR_VERSION);
        string(s, 2, PRODUCER);
        string(s, 3, &m.producer_version);
        message_with_len(s, 7, &self.graph_msg(), self.graph_len);
        for (d, v) in &m.opset_imports {
            message(s, 8, &OpsetMsg(d, *v));
        }
        metadata(s, 14, &m.metadata);
    }

    /// The `ModelProto` this encoder writes, built in memory (weights shared, not copied): the
    /// reference the streamed bytes are checked against.
    pub fn to_proto(&self) -> proto::ModelProto {
        let mut p = model_proto(&self.names, self.model, true);
        if let Some(g) = p.graph.as_mut() {
            for (t, placed) in g.initializer.iter_mut().zip(&self.placement.tensors) {
                if let Placed::External { offset, .. } = placed {
                    let len = t.raw_data.len();
                    t.raw_data = Bytes::new();
                    t.data_location = proto::tensor_proto::DataLocation::External as i32;
                    t.external_data = [
                        ("location", self.placement.location.clone()),
                        ("offset", offset.to_string()),
                        ("length", len.to_string()),
                    ]
                    .into_iter()
                    .map(|(k, v)| proto::StringStringEntryProto { key: k.into(), value: v })
                    .collect();
                }
            }
        }
        p
    }

    /// Write the model to `path` (and the external data beside it). Files are written to
    /// temporary names in the same folder and renamed into place, so a failure never leaves a
    /// partial output.
    pub fn write(&self, path: &Path) -> Result<(), SaveError> {
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| SaveError::Io { path: p.clone(), source }
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let data_path = dir.join(&self.placement.location);
        let model_tmp = output_temp(&dir).map_err(io(path))?;
        let data_tmp = match self.external {
            true => Some(output_temp(&dir).map_err(io(&data_path))?),
            false => None,
        };
        preallocate(model_tmp.as_file(), self.model_len);
        if let Some(t) = &data_tmp {
            preallocate(t.as_file(), self.data_len());
        }
        let written = std::thread::scope(|scope| {
            let files = WriteBehind::start(scope, model_tmp.as_file(), data_tmp.as_ref().map(|t| t.as_file()))
                .map_err(|e| (Target::Model, e))?;
            let mut out = Out { files };
            self.write_model(&mut out);
            out.files.finish()
        });
        if let Err((target, source)) = written {
            let p = if target == Target::Data { &data_path } else { path };
            return Err(SaveError::Io { path: p.to_path_buf(), source });
        }
        if let Some(data_tmp) = data_tmp {
            data_tmp.persist(&data_path).map_err(|e| SaveError::Io { path: data_path.clone(), source: e.error })?;
        }
        model_tmp.persist(path).map_err(|e| SaveError::Io { path: path.to_path_buf(), source: e.error })?;
        Ok(())
    }
}

struct OpsetMsg<'a>(&'a str, i64);

impl Msg for OpsetMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        string(s, 1, self.0);
        int(s, 2, self.1);
    }
}

/// Write `model` to `path`, its weights placed as `placement` says, streaming (see [`Encoder`]).
pub fn save_model(model: &Model, path: &Path, placement: &DataPlacement) -> Result<(), SaveError> {
    Encoder::new(model, placement)?.write(path)
}

/// Write an already built `model` to `path`, its weights placed as `placement` says. Files are
/// written to temporary names in the same folder and renamed into place, so a failure never
/// leaves a partial output. [`save_model`] does the same from the IR without building the proto.
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
        let mut tmp = output_temp(&dir).map_err(io(&data_path))?;
        let mut offset = 0usize;
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
            if let Some(g) = model.graph.as_mut() {
                for t in &mut g.initializer {
                    if t.raw_data.len() < *threshold {
                        continue;
                    }
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
    let mut tmp = output_temp(&dir).map_err(io(path))?;
    {
        // A built ModelProto is encoded whole in memory; exports use save_model, which streams.
        let bytes = model.encode_to_vec();
        tmp.write_all(&bytes).map_err(io(path))?;
    }
    if let Some((data_tmp, data_path)) = data_file {
        data_tmp.persist(&data_path).map_err(|e| SaveError::Io { path: data_path.clone(), source: e.error })?;
    }
    tmp.persist(path).map_err(|e| SaveError::Io { path: path.to_path_buf(), source: e.error })?;
    Ok(())
}
