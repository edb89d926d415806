//! The fast path: the `ModelProto` of [`super::plain`] written field by field straight to the
//! files, never built.
//!
//! [`Encoder::new`] names the model and measures every message once (protobuf writes a message's
//! length before its body); [`Encoder::write`] then writes the fields in tag order, skipping proto3
//! defaults, as prost does, so the bytes are those of the plain path. Weight bytes go from the
//! archive file (or, for folded weights, from their computation) into a few small buffers that
//! a second thread writes out ([`super::write_behind`]): no step holds all weights, or all node
//! metadata strings, in memory.

use std::path::Path;

use super::files::{self, Outputs, Sources};
use super::names::{Name, Names};
use super::plain::attribute;
use super::write_behind::{Target, WriteBehind};
use super::{described, io_values, DataPlacement, SaveError, ALIGNMENT, IR_VERSION, PRODUCER, PROTOBUF_LIMIT};
use crate::onnx::ir::derived::ChunkRoom;
use crate::onnx::ir::*;
use crate::onnx::proto;
use crate::pt2::ArchiveFile;

/// A model ready to write: names assigned, initializers placed, every length measured.
pub struct Encoder<'m> {
    model: &'m Model,
    names: Names<'m>,
    placement: Placement,
    /// The main graph's node message lengths (the graph's is their sum and more).
    node_lens: Vec<u32>,
    graph_len: usize,
    /// Size of the `.onnx` file.
    model_len: usize,
    external: bool,
}

impl<'m> Encoder<'m> {
    /// Name and measure `model` for saving to `path` as `placement` says (the data file's name
    /// depends on the model's). Fails when the `ModelProto` would pass protobuf's 2 GiB limit.
    pub fn new(model: &'m Model, placement: &DataPlacement, path: &Path) -> Result<Encoder<'m>, SaveError> {
        let names = Names::new(model);
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
            placement: Placement::new(model, placement, path),
            node_lens,
            graph_len: 0,
            model_len: 0,
            external: matches!(placement, DataPlacement::External { .. }),
        };
        enc.graph_len = enc.graph_msg().len();
        enc.model_len = enc.encoded_len();
        if enc.model_len > PROTOBUF_LIMIT {
            return Err(SaveError::too_large(enc.model_len, placement));
        }
        Ok(enc)
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

    /// Write the model to `path` (and the external data beside it), stored weights read from
    /// the archive of `sources` when they are slices of its map. Files are unnamed until complete
    /// and never replace a source, so a failure never leaves a partial output
    /// ([`files`]). The model is written with the data file's name holding zeros for its hash,
    /// which the writer thread computes as it writes the data; the digits are then written in.
    pub fn write(&self, path: &Path, sources: &Sources) -> Result<(), SaveError> {
        let archive = sources.archive_file();
        if let Some(a) = archive {
            // Changed since the export read it: its weights are no longer the ones exported
            // (and reading a truncated map would fault).
            a.check_unchanged()?;
        }
        let outputs = Outputs::create(path, self.external && self.placement.any_external, sources)?;
        files::preallocate(outputs.model_file(), self.model_len);
        if outputs.has_data() {
            files::preallocate(outputs.data_file(), self.data_len());
        }
        let data = outputs.has_data().then(|| outputs.data_file());
        let written = std::thread::scope(|scope| {
            let files = WriteBehind::start(scope, outputs.model_file(), data).map_err(|e| (Target::Model, e))?;
            let mut out = Out { files, archive };
            self.write_model(&mut out);
            out.files.finish()
        });
        let io = |target, source| {
            let path = if target == Target::Data { outputs.data_path() } else { outputs.model_path().to_path_buf() };
            SaveError::Io { path, source }
        };
        written.map_err(|(target, source)| io(target, source))?;
        outputs.persist()
    }

    fn graph_msg(&self) -> GraphMsg<'_> {
        GraphMsg {
            names: &self.names,
            g: &self.model.graph,
            initializers: Some(&self.placement),
            node_lens: Some(&self.node_lens),
        }
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
        // Functions hold no weights: built as messages (small) and written as such.
        for f in &m.functions {
            let bytes = prost::Message::encode_to_vec(&super::plain::function_proto(&self.names, m, f));
            bytes_elem(s, 25, &bytes);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Sinks: one counts bytes, one writes them
// ------------------------------------------------------------------------------------------------

/// Where encoded bytes go: [`Counter`] measures a message, [`Out`] writes it.
trait Sink {
    fn put(&mut self, b: &[u8]);
    /// Tensor bytes inline in the model.
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
    /// Only the length: a folded weight is not computed to be measured.
    fn raw(&mut self, b: &Raw) {
        self.0 += b.len();
    }
    fn external(&mut self, _: usize, _: &Raw) {}
    fn counted(&mut self, len: usize) -> bool {
        self.0 += len;
        true
    }
}

/// Writes the model and the external data through the writer thread; the first IO error stops
/// the writing and is returned when the save finishes.
struct Out<'s, 'a> {
    files: WriteBehind<'s>,
    archive: Option<&'a ArchiveFile>,
}

/// Stored weights from this size on are read from the archive file; smaller ones share their
/// pages with their neighbours, and a system call each would cost more than it saves.
const READ_MIN: usize = 64 << 10;

impl Out<'_, '_> {
    /// Tensor bytes into the write buffers: a folded weight computed there a chunk at a time (it
    /// never exists whole in memory), a stored one read from the archive file.
    fn tensor(&mut self, target: Target, raw: &Raw) {
        struct Room<'a, 's>(&'a mut WriteBehind<'s>, Target);
        impl ChunkRoom for Room<'_, '_> {
            fn room(&mut self, len: usize) -> Option<&mut [u8]> {
                self.0.reserve(self.1, len)
            }
        }
        if raw.compute_into(&mut Room(&mut self.files, target)) {
            // Its source pages were read through the map: not kept resident once written.
            if let (Some(d), Some(archive)) = (raw.derived(), self.archive) {
                archive.release(d.source());
            }
            return;
        }
        let Some(b) = raw.existing() else { return };
        match self.archive {
            Some(archive) if b.len() >= READ_MIN => {
                self.files.write_with(target, b, |b, out| archive.read_into(b, out))
            }
            _ => self.files.write(target, b),
        }
    }
}

impl Sink for Out<'_, '_> {
    fn put(&mut self, b: &[u8]) {
        self.files.write(Target::Model, b);
    }
    fn raw(&mut self, b: &Raw) {
        self.tensor(Target::Model, b);
    }
    fn external(&mut self, pad: usize, raw: &Raw) {
        self.files.write(Target::Data, &[0u8; ALIGNMENT][..pad]);
        self.tensor(Target::Data, raw);
    }
}

// ------------------------------------------------------------------------------------------------
// Protobuf wire format
// ------------------------------------------------------------------------------------------------

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
    match n {
        Name::Given(n) => s.put(n.as_bytes()),
        Name::Value(k) => {
            s.put(b"val_");
            decimal(s, k);
        }
        Name::Node(op, k) => {
            s.put(b"node_");
            s.put(op.as_bytes());
            s.put(b"_");
            decimal(s, k);
        }
    }
}

fn decimal<S: Sink>(s: &mut S, mut k: u32) {
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
        let info = self.0;
        if info.container != Container::Tensor || (info.shape.is_none() && info.rank_from_data.is_some()) {
            // Rare (a few values of a TorchScript program): encoded by prost.
            return Prost(&super::plain::type_proto(info)).write(s);
        }
        message(s, 1, &TensorTypeMsg(info));
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
            AttrValue::Tensor(_) | AttrValue::Graph(_) | AttrValue::Type(..) => {
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
    /// The data file's stem ([`files::data_stem`]).
    stem: &'a str,
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
                // `<stem>.data` ([`files::data_location`]).
                message(s, 13, &Entry("location", self.stem, ".data"));
                for (k, v) in [("offset", offset.as_str()), ("length", length.as_str())] {
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
                let m =
                    TensorMsg { name: names.value(v), t: data, metadata: &info.metadata, placed: *t, stem: &p.stem };
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
    /// The data file's stem ([`files::data_stem`]).
    stem: String,
    data_len: usize,
    /// Some tensor goes to the data file (else none is written).
    any_external: bool,
}

impl Placement {
    fn new(model: &Model, placement: &DataPlacement, path: &Path) -> Placement {
        let values: Vec<Value> =
            model.graph.initializers.iter().copied().filter(|&v| model.value(v).constant.is_some()).collect();
        let mut tensors = Vec::with_capacity(values.len());
        let mut offset = 0usize;
        let threshold = match placement {
            DataPlacement::Inline => usize::MAX,
            DataPlacement::External { threshold } => *threshold,
        };
        for &v in &values {
            let len = model.value(v).constant.as_ref().map_or(0, |t| t.raw.len());
            if len < threshold {
                tensors.push(Placed::Inline);
                continue;
            }
            let pad = offset.next_multiple_of(ALIGNMENT) - offset;
            offset += pad;
            tensors.push(Placed::External { offset, pad });
            offset += len;
        }
        let any_external = tensors.iter().any(|t| matches!(t, Placed::External { .. }));
        Placement { values, tensors, stem: files::data_stem(path), data_len: offset, any_external }
    }
}

struct OpsetMsg<'a>(&'a str, i64);

impl Msg for OpsetMsg<'_> {
    fn write<S: Sink>(&self, s: &mut S) {
        string(s, 1, self.0);
        int(s, 2, self.1);
    }
}
