//! The in-memory ONNX graph fxonnx builds: an arena of values shared by the main graph and every
//! subgraph (so an `If` branch can name an outer value by id), plus nodes in topological order.
//!
//! It is deliberately smaller than `ModelProto`: names are only fixed at encode time, constants are
//! values that carry their bytes, and weight bytes stay `Bytes` slices of the archive's memory map.

pub mod derived;

pub use self::derived::{BinOp, Derived, Raw};

/// A value of the graph: an index into `values`. Cheap to copy; translations pass it around freely.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub(crate) u32);

impl Value {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// ONNX element types (`TensorProto.DataType`), with their protobuf numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum DType {
    Float = 1,
    Uint8 = 2,
    Int8 = 3,
    Uint16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    Uint32 = 12,
    Uint64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    BFloat16 = 16,
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
    Float8E8M0 = 24,
    /// Two 4-bit floats a byte; ONNX shapes count the unpacked elements. Its size in bytes per
    /// element is not whole: [`DType::size`] is `None`, so no arithmetic assumes one.
    Float4E2M1 = 23,
}

impl DType {
    /// The type of an ONNX `TensorProto.DataType` number.
    pub fn from_onnx(code: i32) -> Option<DType> {
        use DType::*;
        Some(match code {
            1 => Float,
            2 => Uint8,
            3 => Int8,
            4 => Uint16,
            5 => Int16,
            6 => Int32,
            7 => Int64,
            8 => String,
            9 => Bool,
            10 => Float16,
            11 => Double,
            12 => Uint32,
            13 => Uint64,
            14 => Complex64,
            15 => Complex128,
            16 => BFloat16,
            17 => Float8E4M3FN,
            18 => Float8E4M3FNUZ,
            19 => Float8E5M2,
            20 => Float8E5M2FNUZ,
            23 => Float4E2M1,
            24 => Float8E8M0,
            _ => return None,
        })
    }

    /// Bytes per element (`None` for strings).
    pub fn size(self) -> Option<usize> {
        use DType::*;
        Some(match self {
            Bool | Uint8 | Int8 | Float8E4M3FN | Float8E4M3FNUZ | Float8E5M2 | Float8E5M2FNUZ | Float8E8M0 => 1,
            Uint16 | Int16 | Float16 | BFloat16 => 2,
            Float | Int32 | Uint32 => 4,
            Double | Int64 | Uint64 | Complex64 => 8,
            Complex128 => 16,
            String | Float4E2M1 => return None,
        })
    }

    pub fn is_float(self) -> bool {
        use DType::*;
        matches!(
            self,
            Float
                | Double
                | Float16
                | BFloat16
                | Float8E4M3FN
                | Float8E4M3FNUZ
                | Float8E5M2
                | Float8E5M2FNUZ
                | Float8E8M0
                | Float4E2M1
        )
    }

    pub fn is_int(self) -> bool {
        use DType::*;
        matches!(self, Uint8 | Int8 | Uint16 | Int16 | Int32 | Int64 | Uint32 | Uint64)
    }

    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// The lowercase name torch uses for the same type (for messages).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Float => "float32",
            Uint8 => "uint8",
            Int8 => "int8",
            Uint16 => "uint16",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            String => "string",
            Bool => "bool",
            Float16 => "float16",
            Double => "float64",
            Uint32 => "uint32",
            Uint64 => "uint64",
            Complex64 => "complex64",
            Complex128 => "complex128",
            BFloat16 => "bfloat16",
            Float8E4M3FN => "float8_e4m3fn",
            Float8E4M3FNUZ => "float8_e4m3fnuz",
            Float8E5M2 => "float8_e5m2",
            Float8E5M2FNUZ => "float8_e5m2fnuz",
            Float8E8M0 => "float8_e8m0fnu",
            Float4E2M1 => "float4_e2m1",
        }
    }
}

/// One dimension of a value's shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Fixed(i64),
    /// A symbolic dimension, written as ONNX `dim_param` (`s77`, `2*s77`, or a user-given name).
    /// Shared: every activation of a dynamic batch repeats the same few.
    Param(std::rc::Rc<str>),
}

/// `8` or `s77`, as ONNX text writes a dimension.
impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Fixed(n) => write!(f, "{n}"),
            Dim::Param(p) => f.write_str(p),
        }
    }
}

/// A constant tensor: little-endian element bytes, in ONNX's `raw_data` layout.
///
/// Weights keep pointing into the archive's memory map; nothing is copied until the final write.
/// Large folded weights are [`Derived`]: computed from the stored bytes while they are written.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorData {
    pub dtype: DType,
    pub dims: Vec<i64>,
    pub raw: Raw,
}

impl TensorData {
    /// Decode a numeric constant as f64s (floats of every width, integers, bools).
    pub fn to_f64s(&self) -> Option<Vec<f64>> {
        let t = self;
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
            DType::Float => {
                (0..n).map(|i| f32::from_le_bytes(arr(i)[..4].try_into().unwrap_or([0; 4])) as f64).collect()
            }
            DType::Double => (0..n).map(|i| f64::from_le_bytes(arr(i))).collect(),
            DType::Float16 => {
                (0..n).map(|i| f16_bits_to_f32(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])) as f64).collect()
            }
            DType::BFloat16 => (0..n)
                .map(|i| f32::from_bits((u16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as u32) << 16) as f64)
                .collect(),
            DType::Int64 => (0..n).map(|i| i64::from_le_bytes(arr(i)) as f64).collect(),
            DType::Int32 => {
                (0..n).map(|i| i32::from_le_bytes(arr(i)[..4].try_into().unwrap_or([0; 4])) as f64).collect()
            }
            DType::Int16 => (0..n).map(|i| i16::from_le_bytes([b[2 * i], b[2 * i + 1]]) as f64).collect(),
            DType::Int8 => b[..n].iter().map(|&x| x as i8 as f64).collect(),
            DType::Uint8 | DType::Bool => b[..n].iter().map(|&x| x as f64).collect(),
            _ => return None,
        })
    }

    pub fn numel(&self) -> i64 {
        self.dims.iter().product()
    }

    pub fn from_i64s(dims: Vec<i64>, values: &[i64]) -> Self {
        let mut raw = Vec::with_capacity(values.len() * 8);
        for v in values {
            raw.extend_from_slice(&v.to_le_bytes());
        }
        TensorData { dtype: DType::Int64, dims, raw: raw.into() }
    }

    pub fn from_f64_as(dtype: DType, dims: Vec<i64>, values: &[f64]) -> Option<Self> {
        let raw = encode_scalars(dtype, values)?;
        Some(TensorData { dtype, dims, raw: raw.into() })
    }

    /// The values as i64, for small integer/bool constants (shape arithmetic, axes).
    pub fn to_i64s(&self) -> Option<Vec<i64>> {
        let b = &self.raw[..];
        let n = self.numel() as usize;
        Some(match self.dtype {
            DType::Int64 => {
                (0..n).map(|i| i64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))).collect()
            }
            DType::Int32 => {
                (0..n).map(|i| i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap_or([0; 4])) as i64).collect()
            }
            DType::Bool | DType::Uint8 => b[..n].iter().map(|&x| x as i64).collect(),
            DType::Int8 => b[..n].iter().map(|&x| x as i8 as i64).collect(),
            _ => return None,
        })
    }
}

/// Encode `values` as little-endian elements of `dtype` (floats rounded, ints truncated).
pub fn encode_scalars(dtype: DType, values: &[f64]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(values.len() * dtype.size().unwrap_or(1));
    for &v in values {
        match dtype {
            DType::Float => out.extend_from_slice(&(v as f32).to_le_bytes()),
            DType::Double => out.extend_from_slice(&v.to_le_bytes()),
            DType::Float16 => out.extend_from_slice(&f32_to_f16_bits(v as f32).to_le_bytes()),
            DType::BFloat16 => out.extend_from_slice(&f32_to_bf16_bits(v as f32).to_le_bytes()),
            DType::Int64 => out.extend_from_slice(&(v as i64).to_le_bytes()),
            DType::Int32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
            DType::Int16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
            DType::Int8 => out.push(v as i8 as u8),
            DType::Uint8 => out.push(v as u8),
            DType::Uint16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
            DType::Uint32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
            DType::Uint64 => out.extend_from_slice(&(v as u64).to_le_bytes()),
            DType::Bool => out.push((v != 0.0) as u8),
            _ => return None,
        }
    }
    Some(out)
}

/// Round-to-nearest-even float32 → bfloat16 bits.
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) as u16) | 0x40;
    }
    let round = ((bits >> 16) & 1) + 0x7fff;
    ((bits + round) >> 16) as u16
}

/// Round-to-nearest-even float32 → IEEE binary16 bits.
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && (r & 1) == 1) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && (r & 1) == 1) {
        r += 1;
    }
    sign | r as u16
}

/// An attribute value. Subgraph attributes own their [`Graph`]; their values live in the shared arena.
///
/// Tensors and graphs are boxed: they are rare, and inline they made every attribute 168 bytes
/// (a million-node graph holds about as many attributes).
#[derive(Clone, Debug)]
pub enum AttrValue {
    Float(f32),
    Int(i64),
    String(String),
    Tensor(Box<TensorData>),
    Graph(Box<Graph>),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    Strings(Vec<String>),
    /// A type (`Optional`'s `type`, `SequenceEmpty`'s `dtype` is an int): a container of tensors
    /// of this element type, or a tensor.
    Type(Container, DType),
}

#[derive(Clone, Debug)]
pub struct Attribute {
    pub name: String,
    pub value: AttrValue,
}

/// `(key, value)` pairs written to `metadata_props`, in order. Keys are the fixed names of
/// `crate::translate::metadata` (one set per FX node: not worth an allocation each).
pub type Metadata = Vec<(&'static str, String)>;

/// A node's `metadata_props`. Every node made for one FX node shares one (behind an `Rc`).
#[derive(Clone, Debug, PartialEq)]
pub enum MetadataProps {
    /// The pairs as written.
    Pairs(Metadata),
    /// Values made of a prefix shared with other nodes and text of their own.
    Prefixed(PrefixedProps),
}

/// `metadata_props` whose value for `keys[i]` is `prefixes[i]` followed by the `i`-th part of
/// `own`. torch.onnx's `namespace`, `class_hierarchy` and `name_scopes` start with the node's
/// module stack, the same for every node of a module: shared, they no longer take a third of a
/// large graph's metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct PrefixedProps {
    pub keys: &'static [&'static str],
    /// One per key (empty for none).
    pub prefixes: std::rc::Rc<[Box<str>]>,
    /// The values' own parts, concatenated; part `i` ends at byte `ends[i]`.
    pub own: Box<str>,
    pub ends: Box<[u32]>,
}

impl MetadataProps {
    /// Call `f(key, prefix, rest)` for each pair, in order: the value is `prefix` then `rest`.
    pub fn for_each(&self, mut f: impl FnMut(&'static str, &str, &str)) {
        match self {
            MetadataProps::Pairs(pairs) => pairs.iter().for_each(|(k, v)| f(k, "", v)),
            MetadataProps::Prefixed(m) => {
                let mut start = 0;
                for ((key, prefix), &end) in m.keys.iter().zip(m.prefixes.iter()).zip(m.ends.iter()) {
                    f(key, prefix, m.own.get(start..end as usize).unwrap_or(""));
                    start = end as usize;
                }
            }
        }
    }

    /// The pairs, each value in one piece.
    pub fn to_pairs(&self) -> Metadata {
        let mut pairs = Vec::new();
        self.for_each(|k, prefix, rest| pairs.push((k, format!("{prefix}{rest}"))));
        pairs
    }
}

impl Default for MetadataProps {
    fn default() -> Self {
        MetadataProps::Pairs(Vec::new())
    }
}

impl From<Metadata> for MetadataProps {
    fn from(pairs: Metadata) -> Self {
        MetadataProps::Pairs(pairs)
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub op_type: String,
    pub domain: String,
    pub name: String,
    /// `None` is an omitted optional input (encoded as the empty name).
    pub inputs: Vec<Option<Value>>,
    pub outputs: Vec<Value>,
    pub attributes: Vec<Attribute>,
    pub metadata: std::rc::Rc<MetadataProps>,
}

impl Node {
    /// `output = Identity(input)`: how a rewrite keeps a graph output's name when it now stands for
    /// another value.
    pub fn identity(input: Value, output: Value, metadata: std::rc::Rc<MetadataProps>) -> Node {
        Node {
            op_type: "Identity".into(),
            domain: String::new(),
            name: String::new(),
            inputs: vec![Some(input)],
            outputs: vec![output],
            attributes: Vec::new(),
            metadata,
        }
    }

    /// Call `f` on every value the node reads: its inputs, and what its subgraphs read from
    /// enclosing scopes (their outputs and their nodes' reads, recursively).
    pub fn for_each_read(&self, f: &mut impl FnMut(Value)) {
        self.inputs.iter().flatten().for_each(|&v| f(v));
        for a in &self.attributes {
            if let AttrValue::Graph(g) = &a.value {
                g.outputs.iter().for_each(|&v| f(v));
                for n in &g.nodes {
                    n.for_each_read(f);
                }
            }
        }
    }

    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attributes.iter().find(|a| a.name == name).map(|a| &a.value)
    }
}

/// What is known about a value. Names are unique across the whole model (subgraphs included).
#[derive(Clone, Debug, Default)]
pub struct ValueInfo {
    pub name: String,
    pub dtype: Option<DType>,
    pub shape: Option<Vec<Dim>>,
    /// Constant contents: set for initializers and for constants translations create. Boxed:
    /// most values are not constants, and inline it would double every value's size.
    pub constant: Option<Box<TensorData>>,
    /// The value is the real view (trailing dimension 2) of a complex torch tensor.
    pub complex: bool,
    /// Its rank is known only at run time (`squeeze` of an axis whose size is dynamic), so its
    /// `shape` stays unknown, whatever the program records. ONNX requires a shape on a graph
    /// output: it is written with this many axes (the example's rank) of unknown size.
    pub rank_from_data: Option<usize>,
    /// What the value holds: a tensor, or an optional or a sequence of tensors, which `dtype`
    /// and `shape` then describe.
    pub container: Container,
    pub metadata: Metadata,
}

/// ONNX's value types fxonnx writes: a tensor, an optional tensor (`Optional`, an `If` of
/// TorchScript's `Optional[Tensor]`) or a sequence of tensors (a list grown in a loop).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Container {
    #[default]
    Tensor,
    Optional,
    Sequence,
}

/// A graph (the main one or a subgraph): node order is topological.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub name: String,
    pub inputs: Vec<Value>,
    pub outputs: Vec<Value>,
    pub nodes: Vec<Node>,
    /// Values of this graph with a `constant`; written as initializers.
    pub initializers: Vec<Value>,
    pub metadata: Metadata,
}

/// A model-local ONNX function (`FunctionProto`): a body graph without initializers, called by
/// nodes whose `op_type` and `domain` are its `name` and `domain`.
#[derive(Clone, Debug, Default)]
pub struct Function {
    pub name: String,
    pub domain: String,
    pub body: Graph,
}

/// The whole model: the value arena, the main graph, and the opsets it imports.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub values: Vec<ValueInfo>,
    pub graph: Graph,
    /// Model-local functions (`--functions`), written after the graph.
    pub functions: Vec<Function>,
    /// `(domain, version)`, the default domain `""` first.
    pub opset_imports: Vec<(String, i64)>,
    pub producer_version: String,
    pub metadata: Metadata,
    /// What the translations built, and what the optimizer may still fold within.
    pub bound: MemoryBound,
}

/// The bound on the tensor data an export makes beyond the archive's weights: constants the
/// translations build (index tables, averaging matrices) and values the optimizer folds.
/// Weights are not counted: they are read in place from the archive's map. Without a limit from
/// the user ([`crate::ExportOptions::max_memory`]) the default applies, far above what real models
/// build (under 1 MB in the DEV sweep) and low enough that a few kilobytes of archive cannot
/// become a model of hundreds of megabytes, or take the machine's memory, without being asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBound {
    /// Bytes built so far.
    pub built: u64,
    /// The most they may reach.
    pub limit: u64,
    /// The most one constant may take.
    pub per_constant: u64,
    /// The limit is the user's (`--max-memory`), not the default.
    pub explicit: bool,
}

impl Default for MemoryBound {
    fn default() -> Self {
        MemoryBound::new(None)
    }
}

impl MemoryBound {
    /// The default bound on all the constants an export builds: 256 MiB, or an eighth of the
    /// memory the process may use when that is less.
    pub const DEFAULT_LIMIT: u64 = 256 << 20;
    /// The default bound on one constant: 64 MiB.
    pub const DEFAULT_PER_CONSTANT: u64 = 64 << 20;

    /// The bound of an export: the user's `max_memory` (for all the constants together and for
    /// each), else the default.
    pub fn new(max_memory: Option<u64>) -> Self {
        match max_memory {
            Some(limit) => MemoryBound { built: 0, limit, per_constant: limit, explicit: true },
            None => {
                let limit = Self::DEFAULT_LIMIT.min(usable_memory().map_or(u64::MAX, |m| m / 8));
                MemoryBound { built: 0, limit, per_constant: Self::DEFAULT_PER_CONSTANT.min(limit), explicit: false }
            }
        }
    }

    /// Whether one more constant of `bytes` stays within the bound; if not, why (`what` names it:
    /// "tril_indices' index of shape [2, 32004000]").
    pub fn room(&self, what: &str, bytes: u64) -> Result<(), String> {
        let total = self.built.saturating_add(bytes);
        if self.explicit {
            return match total > self.limit {
                true => Err(format!(
                    "{what} would take the constants built to {total} bytes, over the memory limit of {} bytes \
                     (--max-memory)",
                    self.limit
                )),
                false => Ok(()),
            };
        }
        let (amount, bound) = if bytes > self.per_constant {
            (format!("would be a constant of {}", size(bytes)), format!("{} per constant", size(self.per_constant)))
        } else if total > self.limit {
            (format!("would take the constants built to {}", size(total)), format!("{} in all", size(self.limit)))
        } else {
            return Ok(());
        };
        Err(format!(
            "{what} {amount}, over the default bound of {bound} on the data an export builds beyond the archive's \
             weights; hint: real models need far less; if this one does, raise the bound with --max-memory \
             (Python: max_memory=)"
        ))
    }

    /// Count `bytes` more as built, if they fit (else nothing changes and `false`).
    pub fn charge(&mut self, bytes: u64) -> bool {
        let fits = bytes <= self.per_constant && self.built.saturating_add(bytes) <= self.limit;
        if fits {
            self.built += bytes;
        }
        fits
    }
}

/// `1.5 GiB`, `64 MiB`, `12 KiB`, `100 bytes`.
fn size(bytes: u64) -> String {
    let units = [(30, "GiB"), (20, "MiB"), (10, "KiB")];
    match units.iter().find(|(shift, _)| bytes >= 1 << shift) {
        Some((shift, unit)) if bytes.is_multiple_of(1 << shift) => format!("{} {unit}", bytes >> shift),
        Some((shift, unit)) => format!("{:.1} {unit}", bytes as f64 / (1u64 << shift) as f64),
        None => format!("{bytes} bytes"),
    }
}

/// The memory this process may use: the physical memory, or the address-space limit
/// (`ulimit -v`) when that is lower. `None` where neither is known.
fn usable_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf and getrlimit only read system values into the given locals.
        let physical = unsafe {
            let (pages, page) = (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE));
            (pages > 0 && page > 0).then(|| (pages as u64).saturating_mul(page as u64))
        };
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: as above.
        let address_space = (unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
            && limit.rlim_cur != libc::RLIM_INFINITY)
            .then_some(limit.rlim_cur);
        match (physical, address_space) {
            (Some(p), Some(a)) => Some(p.min(a)),
            (p, a) => p.or(a),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

impl Model {
    pub fn value(&self, v: Value) -> &ValueInfo {
        &self.values[v.index()]
    }
}

/// IEEE binary16 bits → f32.
pub fn f16_bits_to_f32(h: u16) -> f32 {
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
