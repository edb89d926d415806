//! A small `.pt2` writer for tests and benches, without torch.
//!
//! It writes archives the way `torch.export.save` does (see `pt2-format.md`): a zip of stored
//! entries, each entry's data 64-byte aligned by an `FB` extra block of `Z`s in the local header,
//! general-purpose flags `0x0808` with sizes and CRC in a data descriptor after the data, zero DOS
//! dates, and a Zip64 end record before the classic one. Entries whose size or offset passes
//! 4 GiB get Zip64 extra fields. Everything is streamed: `models/model.json` and the payload
//! configs are written node by node, and weight payloads come from a fill callback in 1 MiB
//! chunks, so a 4 GB archive never holds its weights in memory.
//!
//! Two program generators, both with a dynamic batch dimension (`s77`): a repeated
//! transformer-ish block ([`Transformer`]) and a repeated residual conv block ([`ConvNet`]),
//! parameterised by block count and width; `sized` picks those for a target FX node count and
//! weight size.
//!
//! Include it with `#[path = "support/pt2_writer.rs"] mod pt2_writer;`.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::Path;

// ------------------------------------------------------------------------------------------------
// Zip container
// ------------------------------------------------------------------------------------------------

const LIMIT32: u64 = 0xFFFF_FFFF;

struct CdEntry {
    name: String,
    crc: u32,
    size: u64,
    offset: u64,
    zip64_local: bool,
}

struct Current {
    name: String,
    offset: u64,
    size: u64,
    crc: crc32fast::Hasher,
    zip64_local: bool,
}

/// A zip writer laid out like torch's `PyTorchFileWriter`. Entries are written one at a time:
/// [`ZipOut::begin`], then `write` (the type implements [`Write`] for the open entry), then
/// [`ZipOut::end`].
pub struct ZipOut<W: Write> {
    w: W,
    pos: u64,
    root: String,
    entries: Vec<CdEntry>,
    current: Option<Current>,
}

impl<W: Write> ZipOut<W> {
    /// `root` is the archive's top folder (`model` for `model.pt2`).
    pub fn new(w: W, root: &str) -> Self {
        ZipOut { w, pos: 0, root: root.to_string(), entries: Vec::new(), current: None }
    }

    fn raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.w.write_all(b)?;
        self.pos += b.len() as u64;
        Ok(())
    }

    /// Open entry `<root>/<name>`. `size_hint` is the final size when known (it decides whether
    /// the local header needs a Zip64 field, as torch's writer does); streamed JSON passes 0.
    pub fn begin(&mut self, name: &str, size_hint: u64) -> io::Result<()> {
        assert!(self.current.is_none(), "entry {name} opened while another is open");
        let full = format!("{}/{name}", self.root);
        let offset = self.pos;
        let zip64_local = size_hint >= LIMIT32 || offset >= LIMIT32;
        let mut extra = Vec::new();
        if zip64_local {
            // Zip64 extended information: sizes (0: they follow in the data descriptor) and, past
            // 4 GiB, the header offset.
            let mut body = Vec::new();
            body.extend_from_slice(&0u64.to_le_bytes());
            body.extend_from_slice(&0u64.to_le_bytes());
            if offset >= LIMIT32 {
                body.extend_from_slice(&offset.to_le_bytes());
            }
            extra.extend_from_slice(&1u16.to_le_bytes());
            extra.extend_from_slice(&(body.len() as u16).to_le_bytes());
            extra.extend_from_slice(&body);
        }
        // The FB padding block puts the data on a multiple of 64 (it is always present, possibly empty).
        let start = offset + 30 + full.len() as u64 + extra.len() as u64 + 4;
        let pad = ((64 - start % 64) % 64) as usize;
        extra.extend_from_slice(b"FB");
        extra.extend_from_slice(&(pad as u16).to_le_bytes());
        extra.extend(std::iter::repeat_n(b'Z', pad));

        let (sz32, ver) = if zip64_local { (LIMIT32 as u32, 45u16) } else { (0u32, 0u16) };
        let mut h = Vec::with_capacity(30 + full.len() + extra.len());
        h.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        h.extend_from_slice(&ver.to_le_bytes()); // version needed to extract
        h.extend_from_slice(&0x0808u16.to_le_bytes()); // data descriptor + UTF-8 names
        h.extend_from_slice(&0u16.to_le_bytes()); // stored
        h.extend_from_slice(&0u16.to_le_bytes()); // time
        h.extend_from_slice(&0u16.to_le_bytes()); // date
        h.extend_from_slice(&0u32.to_le_bytes()); // crc: in the data descriptor
        h.extend_from_slice(&sz32.to_le_bytes());
        h.extend_from_slice(&sz32.to_le_bytes());
        h.extend_from_slice(&(full.len() as u16).to_le_bytes());
        h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        h.extend_from_slice(full.as_bytes());
        h.extend_from_slice(&extra);
        self.raw(&h)?;
        debug_assert_eq!(self.pos % 64, 0);
        self.current = Some(Current { name: full, offset, size: 0, crc: crc32fast::Hasher::new(), zip64_local });
        Ok(())
    }

    /// Close the open entry: write its data descriptor.
    pub fn end(&mut self) -> io::Result<()> {
        let c = self.current.take().expect("no open entry");
        let crc = c.crc.finalize();
        let mut d = Vec::with_capacity(24);
        d.extend_from_slice(&0x0807_4b50u32.to_le_bytes());
        d.extend_from_slice(&crc.to_le_bytes());
        if c.zip64_local {
            d.extend_from_slice(&c.size.to_le_bytes());
            d.extend_from_slice(&c.size.to_le_bytes());
        } else {
            assert!(c.size < LIMIT32, "entry {} passed 4 GiB without a size hint", c.name);
            d.extend_from_slice(&(c.size as u32).to_le_bytes());
            d.extend_from_slice(&(c.size as u32).to_le_bytes());
        }
        self.raw(&d)?;
        self.entries.push(CdEntry { name: c.name, crc, size: c.size, offset: c.offset, zip64_local: c.zip64_local });
        Ok(())
    }

    /// A whole small entry.
    pub fn entry(&mut self, name: &str, data: &[u8]) -> io::Result<()> {
        self.begin(name, data.len() as u64)?;
        self.write_all(data)?;
        self.end()
    }

    /// Write the central directory and the end records; returns the inner writer and the file size.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        assert!(self.current.is_none(), "finish with an open entry");
        let cd_start = self.pos;
        let entries = std::mem::take(&mut self.entries);
        for e in &entries {
            let mut extra = Vec::new();
            if e.size >= LIMIT32 {
                extra.extend_from_slice(&e.size.to_le_bytes());
                extra.extend_from_slice(&e.size.to_le_bytes());
            }
            if e.offset >= LIMIT32 {
                extra.extend_from_slice(&e.offset.to_le_bytes());
            }
            let extra = if extra.is_empty() {
                extra
            } else {
                let mut x = Vec::with_capacity(4 + extra.len());
                x.extend_from_slice(&1u16.to_le_bytes());
                x.extend_from_slice(&(extra.len() as u16).to_le_bytes());
                x.extend_from_slice(&extra);
                x
            };
            let ver: u16 = if !extra.is_empty() || e.zip64_local { 45 } else { 0 };
            let size32 = e.size.min(LIMIT32) as u32;
            let off32 = e.offset.min(LIMIT32) as u32;
            let mut h = Vec::with_capacity(46 + e.name.len() + extra.len());
            h.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // version made by
            h.extend_from_slice(&ver.to_le_bytes()); // version needed
            h.extend_from_slice(&0x0808u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // stored
            h.extend_from_slice(&0u32.to_le_bytes()); // time, date
            h.extend_from_slice(&e.crc.to_le_bytes());
            h.extend_from_slice(&size32.to_le_bytes());
            h.extend_from_slice(&size32.to_le_bytes());
            h.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes()); // comment
            h.extend_from_slice(&0u16.to_le_bytes()); // disk
            h.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
            h.extend_from_slice(&0u32.to_le_bytes()); // external attributes
            h.extend_from_slice(&off32.to_le_bytes());
            h.extend_from_slice(e.name.as_bytes());
            h.extend_from_slice(&extra);
            self.raw(&h)?;
        }
        let cd_size = self.pos - cd_start;
        let n = entries.len() as u64;
        // Zip64 end of central directory record and locator: torch always writes them.
        let z64 = self.pos;
        let mut r = Vec::with_capacity(56 + 20 + 22);
        r.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
        r.extend_from_slice(&44u64.to_le_bytes());
        r.extend_from_slice(&0x031eu16.to_le_bytes());
        r.extend_from_slice(&45u16.to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
        r.extend_from_slice(&n.to_le_bytes());
        r.extend_from_slice(&n.to_le_bytes());
        r.extend_from_slice(&cd_size.to_le_bytes());
        r.extend_from_slice(&cd_start.to_le_bytes());
        r.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
        r.extend_from_slice(&z64.to_le_bytes());
        r.extend_from_slice(&1u32.to_le_bytes());
        r.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        r.extend_from_slice(&(n.min(0xFFFF) as u16).to_le_bytes());
        r.extend_from_slice(&(n.min(0xFFFF) as u16).to_le_bytes());
        r.extend_from_slice(&(cd_size.min(LIMIT32) as u32).to_le_bytes());
        r.extend_from_slice(&(cd_start.min(LIMIT32) as u32).to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        self.raw(&r)?;
        self.w.flush()?;
        Ok((self.w, self.pos))
    }

    fn crcs(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().map(|e| e.crc)
    }
}

impl<W: Write> Write for ZipOut<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.write_all(buf)?;
        self.pos += buf.len() as u64;
        let c = self.current.as_mut().expect("write outside an entry");
        c.crc.update(buf);
        c.size += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

// ------------------------------------------------------------------------------------------------
// JSON pieces
// ------------------------------------------------------------------------------------------------

/// A JSON string literal (ASCII-escaped like Python's `json.dumps`).
fn js(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut b = [0u16; 2];
                for u in c.encode_utf16(&mut b) {
                    let _ = write!(o, "\\u{:04x}", u);
                }
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A float the way Python's json writes it (`1e-05` style is also accepted by every reader).
fn jf(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e16 {
        format!("{x:.1}")
    } else {
        format!("{x:?}")
    }
}

pub const BATCH_SYMBOL: &str = "s77";
const BATCH_EXPR: &str = "Symbol('s77', positive=True, integer=True)";
/// The example batch size recorded as the symbol's hint.
pub const BATCH_HINT: i64 = 2;

/// A dimension of a tensor: the dynamic batch size, or a number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dim {
    Batch,
    N(i64),
}

/// Schema ScalarType ids (not c10's numbering).
pub const FLOAT: i64 = 7;
pub const LONG: i64 = 5;

fn dtype_size(dtype: i64) -> u64 {
    match dtype {
        FLOAT => 4,
        LONG => 8,
        _ => panic!("unsupported dtype {dtype}"),
    }
}

/// A TensorMeta: dtype, sizes (the batch only in front) and strides in elements.
#[derive(Clone, Debug)]
pub struct Meta {
    pub dtype: i64,
    pub sizes: Vec<Dim>,
    pub strides: Vec<i64>,
    pub requires_grad: bool,
}

impl Meta {
    /// A contiguous tensor.
    pub fn new(dtype: i64, sizes: &[Dim]) -> Meta {
        assert!(sizes.iter().skip(1).all(|d| *d != Dim::Batch), "the batch dimension must come first");
        let mut strides = vec![1i64; sizes.len()];
        for i in (0..sizes.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1]
                * match sizes[i + 1] {
                    Dim::N(n) => n,
                    Dim::Batch => unreachable!(),
                };
        }
        Meta { dtype, sizes: sizes.to_vec(), strides, requires_grad: false }
    }

    pub fn f32(sizes: &[Dim]) -> Meta {
        Meta::new(FLOAT, sizes)
    }

    fn fixed(dtype: i64, sizes: &[i64]) -> Meta {
        Meta::new(dtype, &sizes.iter().map(|&n| Dim::N(n)).collect::<Vec<_>>())
    }

    fn permuted(&self, perm: &[usize]) -> Meta {
        Meta {
            dtype: self.dtype,
            sizes: perm.iter().map(|&p| self.sizes[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            requires_grad: false,
        }
    }

    fn json(&self) -> String {
        let sym = |d: &Dim| match d {
            Dim::N(n) => format!("{{\"as_int\": {n}}}"),
            Dim::Batch => {
                format!("{{\"as_expr\": {{\"expr_str\": {}, \"hint\": {{\"as_int\": {BATCH_HINT}}}}}}}", js(BATCH_EXPR))
            }
        };
        let sizes: Vec<String> = self.sizes.iter().map(sym).collect();
        let strides: Vec<String> = self.strides.iter().map(|s| format!("{{\"as_int\": {s}}}")).collect();
        format!(
            "{{\"dtype\": {}, \"sizes\": [{}], \"requires_grad\": {}, \"device\": {{\"type\": \"cpu\", \"index\": null}}, \"strides\": [{}], \"storage_offset\": {{\"as_int\": 0}}, \"layout\": 7}}",
            self.dtype,
            sizes.join(", "),
            self.requires_grad,
            strides.join(", ")
        )
    }

    fn numel(&self) -> i64 {
        self.sizes.iter().map(|d| if let Dim::N(n) = d { *n } else { BATCH_HINT }).product()
    }
}

/// A node argument.
pub enum A<'a> {
    T(&'a str),
    Ints(Vec<i64>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'a str),
    /// SymInt list items: `Ok(literal)` or `Err(name of a SymInt value)`.
    SymInts(Vec<Result<i64, &'a str>>),
    /// A list of tensors (`cat`'s): each names a value.
    Ts(Vec<&'a str>),
    /// A SymInt read from the batch dimension of the named input (a test writes the `sym_size`).
    SymInt(&'a str),
    /// A SymInt value by name (`as_sym_int`).
    SymIntNamed(&'a str),
    /// A dtype, as a schema ScalarType id.
    ScalarType(i64),
    None,
}

impl A<'_> {
    fn json(&self) -> String {
        match self {
            A::T(n) => format!("{{\"as_tensor\": {{\"name\": {}}}}}", js(n)),
            A::Ints(v) => format!("{{\"as_ints\": [{}]}}", v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
            A::Int(i) => format!("{{\"as_int\": {i}}}"),
            A::Float(x) => format!("{{\"as_float\": {}}}", jf(*x)),
            A::Bool(b) => format!("{{\"as_bool\": {b}}}"),
            A::Str(s) => format!("{{\"as_string\": {}}}", js(s)),
            A::SymInts(v) => {
                let items: Vec<String> = v
                    .iter()
                    .map(|s| match s {
                        Ok(i) => format!("{{\"as_int\": {i}}}"),
                        Err(n) => format!("{{\"as_name\": {}}}", js(n)),
                    })
                    .collect();
                format!("{{\"as_sym_ints\": [{}]}}", items.join(", "))
            }
            A::Ts(v) => {
                let items: Vec<String> = v.iter().map(|n| format!("{{\"name\": {}}}", js(n))).collect();
                format!("{{\"as_tensors\": [{}]}}", items.join(", "))
            }
            A::SymInt(n) | A::SymIntNamed(n) => format!("{{\"as_sym_int\": {{\"as_name\": {}}}}}", js(n)),
            A::ScalarType(t) => format!("{{\"as_scalar_type\": {t}}}"),
            A::None => "{\"as_none\": true}".to_string(),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Program writer
// ------------------------------------------------------------------------------------------------

/// How the default fill initialises a tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    /// Uniform in ±1/√fan_in (weights and biases of linear/conv layers).
    Uniform { fan_in: i64 },
    /// 1 ± 0.1 (norm scales, running variances).
    One,
    /// ±0.1 (norm shifts, running means).
    Small,
    /// All zero bytes (num_batches_tracked).
    Zero,
}

/// One stored tensor (a parameter or persistent buffer) of a written archive.
#[derive(Clone, Debug)]
pub struct TensorInfo {
    pub fqn: String,
    pub placeholder: String,
    pub dtype: i64,
    pub sizes: Vec<i64>,
    pub is_param: bool,
    /// `data/weights/<path_name>`.
    pub path_name: String,
    pub init: Init,
    /// Position in the archive's weights (also the fill seed).
    pub index: usize,
}

impl TensorInfo {
    pub fn nbytes(&self) -> u64 {
        self.sizes.iter().product::<i64>() as u64 * dtype_size(self.dtype)
    }
}

/// Streams `models/model.json`'s nodes while recording values, parameters and inputs.
pub struct GraphWriter<'w> {
    out: &'w mut dyn Write,
    nodes: usize,
    values: Vec<(String, Meta)>,
    sym_ints: Vec<String>,
    tensors: Vec<TensorInfo>,
    user_inputs: Vec<String>,
    counters: HashMap<String, usize>,
    modules: Vec<String>,
    /// User outputs after the one `Program::build` returns.
    more_outputs: Vec<String>,
    /// `nn_module_stack` of the nodes being written.
    pub module_stack: String,
    line: usize,
}

impl<'w> GraphWriter<'w> {
    fn new(out: &'w mut dyn Write) -> Self {
        GraphWriter {
            out,
            nodes: 0,
            values: Vec::new(),
            sym_ints: Vec::new(),
            tensors: Vec::new(),
            user_inputs: Vec::new(),
            counters: HashMap::new(),
            modules: Vec::new(),
            more_outputs: Vec::new(),
            module_stack: "L__self__,,__main__.Model".into(),
            line: 100,
        }
    }

    /// FX-style unique names: `linear`, `linear_1`, ...
    fn fresh(&mut self, base: &str) -> String {
        let k = self.counters.entry(base.to_string()).or_insert(0);
        let name = if *k == 0 { base.to_string() } else { format!("{base}_{k}") };
        *k += 1;
        name
    }

    /// Enter submodule `path` of class `class` (for `nn_module_stack`) and record it in the
    /// module call graph.
    pub fn module(&mut self, path: &str, class: &str) {
        let key = format!("L__self___{}", path.replace('.', "_"));
        self.module_stack = format!("L__self__,,__main__.Model;{key},{path},{class}");
        self.modules.push(path.to_string());
    }

    /// A parameter (`is_param`) or persistent buffer; returns its placeholder name.
    pub fn tensor(&mut self, fqn: &str, dtype: i64, sizes: &[i64], is_param: bool, init: Init) -> String {
        let placeholder = format!("{}_{}", if is_param { "p" } else { "b" }, fqn.replace('.', "_"));
        let mut meta = Meta::fixed(dtype, sizes);
        meta.requires_grad = is_param;
        self.values.push((placeholder.clone(), meta));
        self.tensors.push(TensorInfo {
            fqn: fqn.to_string(),
            placeholder: placeholder.clone(),
            dtype,
            sizes: sizes.to_vec(),
            is_param,
            path_name: String::new(),
            init,
            index: 0,
        });
        placeholder
    }

    pub fn param(&mut self, fqn: &str, sizes: &[i64], init: Init) -> String {
        self.tensor(fqn, FLOAT, sizes, true, init)
    }

    pub fn user_input(&mut self, name: &str, meta: Meta) -> String {
        self.values.push((name.to_string(), meta));
        self.user_inputs.push(name.to_string());
        name.to_string()
    }

    pub fn meta(&self, name: &str) -> &Meta {
        // Values are looked up right after they are made; search from the end.
        &self.values.iter().rev().find(|(n, _)| n == name).expect("unknown value").1
    }

    fn write_node(
        &mut self,
        target: &str,
        name: &str,
        inputs: &[(&str, A)],
        outputs: &str,
        call: &str,
    ) -> io::Result<()> {
        let base = target.rsplit('.').nth(1).unwrap_or(target);
        let args: Vec<String> = inputs
            .iter()
            .map(|(n, a)| {
                let kind = if *n == "approximate" { 2 } else { 1 };
                format!("{{\"name\": {}, \"arg\": {}, \"kind\": {kind}}}", js(n), a.json())
            })
            .collect();
        self.line += 1;
        let trace = format!(
            "File \"bench/models.py\", line {}, in forward\n    {call}\n  File \"torch/nn/modules/module.py\", line 1786, in _call_impl\n    return forward_call(*args, **kwargs)",
            self.line
        );
        let k = self.counters.get(&format!("fn:{base}")).copied().unwrap_or(0) + 1;
        self.counters.insert(format!("fn:{base}"), k);
        if self.nodes > 0 {
            self.out.write_all(b", ")?;
        }
        write!(
            self.out,
            "{{\"target\": {}, \"inputs\": [{}], \"outputs\": [{outputs}], \"metadata\": {{\"stack_trace\": {}, \"nn_module_stack\": {}, \"torch_fn\": {}}}, \"is_hop_single_tensor_return\": null, \"name\": {}}}",
            js(target),
            args.join(", "),
            js(&trace),
            js(&self.module_stack),
            js(&format!("{base}_{k};OpOverload.{base}")),
            js(name)
        )?;
        self.nodes += 1;
        Ok(())
    }

    /// A node with one tensor output of type `out`; returns the output's name.
    pub fn op(&mut self, target: &str, inputs: &[(&str, A)], out: Meta, call: &str) -> io::Result<String> {
        let base = target.rsplit('.').nth(1).unwrap_or(target).to_string();
        let name = self.fresh(&base);
        let outputs = format!("{{\"as_tensor\": {{\"name\": {}}}}}", js(&name));
        self.write_node(target, &name, inputs, &outputs, call)?;
        self.values.push((name.clone(), out));
        Ok(name)
    }

    /// A node with a list of tensor outputs (`split`'s), of types `outs`; returns their names.
    pub fn op_list(
        &mut self,
        target: &str,
        inputs: &[(&str, A)],
        outs: &[Meta],
        call: &str,
    ) -> io::Result<Vec<String>> {
        let base = target.rsplit('.').nth(1).unwrap_or(target).to_string();
        let name = self.fresh(&base);
        let names: Vec<String> = outs.iter().map(|_| self.fresh("getitem")).collect();
        let items: Vec<String> = names.iter().map(|n| format!("{{\"name\": {}}}", js(n))).collect();
        let outputs = format!("{{\"as_tensors\": [{}]}}", items.join(", "));
        self.write_node(target, &name, inputs, &outputs, call)?;
        self.values.extend(names.iter().cloned().zip(outs.iter().cloned()));
        Ok(names)
    }

    /// Make `name` a user output too, after the one `Program::build` returns.
    pub fn also_output(&mut self, name: &str) {
        self.more_outputs.push(name.to_string());
    }

    /// `aten.sym_size.int(x, dim)` for the batch dimension; returns the SymInt's name.
    pub fn sym_size(&mut self, x: &str, dim: i64) -> io::Result<String> {
        let name = self.fresh("sym_size_int");
        let outputs = format!("{{\"as_sym_int\": {{\"as_name\": {}}}}}", js(&name));
        self.write_node(
            "torch.ops.aten.sym_size.int",
            &name,
            &[("self", A::T(x)), ("dim", A::Int(dim))],
            &outputs,
            "B = x.shape[0]",
        )?;
        self.sym_ints.push(name.clone());
        Ok(name)
    }

    // Typed helpers for the ops the generators use.

    pub fn linear(&mut self, x: &str, fqn: &str, out_features: i64) -> io::Result<String> {
        let m = self.meta(x).clone();
        let Dim::N(in_features) = *m.sizes.last().unwrap() else { panic!("symbolic features") };
        let w =
            self.param(&format!("{fqn}.weight"), &[out_features, in_features], Init::Uniform { fan_in: in_features });
        let b = self.param(&format!("{fqn}.bias"), &[out_features], Init::Uniform { fan_in: in_features });
        let mut sizes = m.sizes.clone();
        *sizes.last_mut().unwrap() = Dim::N(out_features);
        self.op(
            "torch.ops.aten.linear.default",
            &[("input", A::T(x)), ("weight", A::T(&w)), ("bias", A::T(&b))],
            Meta::f32(&sizes),
            "return F.linear(input, self.weight, self.bias)",
        )
    }

    pub fn layer_norm(&mut self, x: &str, fqn: &str) -> io::Result<String> {
        let m = self.meta(x).clone();
        let Dim::N(d) = *m.sizes.last().unwrap() else { panic!("symbolic features") };
        let w = self.param(&format!("{fqn}.weight"), &[d], Init::One);
        let b = self.param(&format!("{fqn}.bias"), &[d], Init::Small);
        self.op(
            "torch.ops.aten.layer_norm.default",
            &[
                ("input", A::T(x)),
                ("normalized_shape", A::Ints(vec![d])),
                ("weight", A::T(&w)),
                ("bias", A::T(&b)),
                ("eps", A::Float(1e-5)),
                ("cudnn_enable", A::Bool(false)),
            ],
            Meta::f32(&m.sizes),
            "return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)",
        )
    }

    pub fn unary(&mut self, target: &str, x: &str, extra: &[(&str, A)], call: &str) -> io::Result<String> {
        let m = Meta::f32(&self.meta(x).sizes);
        let mut inputs = vec![("self", A::T(x))];
        for (n, a) in extra {
            inputs.push((
                n,
                match a {
                    A::Str(s) => A::Str(s),
                    A::Int(i) => A::Int(*i),
                    A::Float(f) => A::Float(*f),
                    A::Bool(b) => A::Bool(*b),
                    _ => unimplemented!(),
                },
            ));
        }
        self.op(target, &inputs, m, call)
    }

    pub fn add(&mut self, a: &str, b: &str) -> io::Result<String> {
        let m = Meta::f32(&self.meta(a).sizes);
        self.op("torch.ops.aten.add.Tensor", &[("self", A::T(a)), ("other", A::T(b))], m, "x = x + h")
    }

    pub fn view(&mut self, x: &str, batch: &str, rest: &[i64], reshape: bool) -> io::Result<String> {
        let mut items = vec![Err(batch)];
        items.extend(rest.iter().map(|&n| Ok(n)));
        let mut sizes = vec![Dim::Batch];
        sizes.extend(rest.iter().map(|&n| Dim::N(n)));
        let (target, arg) =
            if reshape { ("torch.ops.aten.reshape.default", "shape") } else { ("torch.ops.aten.view.default", "size") };
        self.op(target, &[("self", A::T(x)), (arg, A::SymInts(items))], Meta::f32(&sizes), "q = q.view(B, T, H, D)")
    }

    pub fn permute(&mut self, x: &str, perm: &[usize]) -> io::Result<String> {
        let m = self.meta(x).permuted(perm);
        let dims: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
        self.op(
            "torch.ops.aten.permute.default",
            &[("self", A::T(x)), ("dims", A::Ints(dims))],
            m,
            "q = q.permute(0, 2, 1, 3)",
        )
    }

    pub fn matmul(&mut self, a: &str, b: &str) -> io::Result<String> {
        let (ma, mb) = (self.meta(a).clone(), self.meta(b).clone());
        let mut sizes = ma.sizes.clone();
        *sizes.last_mut().unwrap() = *mb.sizes.last().unwrap();
        self.op(
            "torch.ops.aten.matmul.default",
            &[("self", A::T(a)), ("other", A::T(b))],
            Meta::f32(&sizes),
            "s = q @ k",
        )
    }
}

/// A generated program.
pub trait Program {
    /// Write the graph's nodes; returns the name of the (single) user output.
    fn build(&self, g: &mut GraphWriter) -> io::Result<String>;
}

/// A stack of pre-norm transformer-ish blocks on `x: [batch, seq, d_model]`: layer_norm, three
/// linears, view/permute into heads, matmul, scale, softmax, matmul, permute/reshape back,
/// linear, residual add, layer_norm, MLP with relu (even blocks) or gelu (odd blocks), residual add.
#[derive(Clone, Debug)]
pub struct Transformer {
    pub blocks: usize,
    pub d_model: i64,
    pub heads: i64,
    pub ffn: i64,
    pub seq: i64,
}

impl Transformer {
    pub const NODES_PER_BLOCK: usize = 23;

    /// About `nodes` FX nodes and `weight_bytes` bytes of float32 weights (the width is at least 8).
    pub fn sized(nodes: usize, weight_bytes: u64) -> Transformer {
        let blocks = (nodes.saturating_sub(1) / Self::NODES_PER_BLOCK).max(1);
        // Per block: 4·d² (attention) + 2·d·4d (MLP) floats, plus vectors.
        let d = ((weight_bytes as f64 / (48.0 * blocks as f64)).sqrt() as i64 / 4 * 4).max(8);
        Transformer { blocks, d_model: d, heads: if d >= 32 { 4 } else { 2 }, ffn: 4 * d, seq: 8 }
    }

    pub fn fx_nodes(&self) -> usize {
        1 + self.blocks * Self::NODES_PER_BLOCK
    }
}

impl Program for Transformer {
    fn build(&self, g: &mut GraphWriter) -> io::Result<String> {
        let (t, d, h) = (self.seq, self.d_model, self.heads);
        let dh = d / h;
        assert_eq!(dh * h, d, "d_model must be a multiple of heads");
        let x = g.user_input("x", Meta::f32(&[Dim::Batch, Dim::N(t), Dim::N(d)]));
        let b = g.sym_size(&x, 0)?;
        let mut x = x;
        for i in 0..self.blocks {
            let p = format!("blocks.{i}");
            g.module(&format!("{p}.ln1"), "torch.nn.modules.normalization.LayerNorm");
            let n = g.layer_norm(&x, &format!("{p}.ln1"))?;
            let mut heads = Vec::new();
            for (name, perm) in [("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])] {
                g.module(&format!("{p}.attn.{name}"), "torch.nn.modules.linear.Linear");
                let y = g.linear(&n, &format!("{p}.attn.{name}"), d)?;
                g.module(&format!("{p}.attn"), "__main__.Attention");
                let y = g.view(&y, &b, &[t, h, dh], false)?;
                heads.push(g.permute(&y, &perm)?);
            }
            let s = g.matmul(&heads[0], &heads[1])?;
            let scale = 1.0 / (dh as f64).sqrt();
            let m = Meta::f32(&g.meta(&s).sizes);
            let s = g.op(
                "torch.ops.aten.mul.Tensor",
                &[("self", A::T(&s)), ("other", A::Float(scale))],
                m,
                "s = s * self.scale",
            )?;
            let a = g.unary("torch.ops.aten.softmax.int", &s, &[("dim", A::Int(-1))], "a = s.softmax(-1)")?;
            let o = g.matmul(&a, &heads[2])?;
            let o = g.permute(&o, &[0, 2, 1, 3])?;
            let o = g.view(&o, &b, &[t, d], true)?;
            g.module(&format!("{p}.attn.o"), "torch.nn.modules.linear.Linear");
            let o = g.linear(&o, &format!("{p}.attn.o"), d)?;
            g.module(&p, "__main__.Block");
            x = g.add(&x, &o)?;
            g.module(&format!("{p}.ln2"), "torch.nn.modules.normalization.LayerNorm");
            let n = g.layer_norm(&x, &format!("{p}.ln2"))?;
            g.module(&format!("{p}.fc1"), "torch.nn.modules.linear.Linear");
            let f = g.linear(&n, &format!("{p}.fc1"), self.ffn)?;
            g.module(&p, "__main__.Block");
            let f = if i % 2 == 0 {
                g.unary("torch.ops.aten.relu.default", &f, &[], "f = torch.relu(f)")?
            } else {
                g.unary(
                    "torch.ops.aten.gelu.default",
                    &f,
                    &[("approximate", A::Str("tanh"))],
                    "f = F.gelu(f, approximate='tanh')",
                )?
            };
            g.module(&format!("{p}.fc2"), "torch.nn.modules.linear.Linear");
            let f = g.linear(&f, &format!("{p}.fc2"), d)?;
            g.module(&p, "__main__.Block");
            x = g.add(&x, &f)?;
        }
        Ok(x)
    }
}

/// A stack of residual conv blocks on `x: [batch, channels, hw, hw]`: conv2d 3×3, batch_norm,
/// relu, conv2d 3×3, batch_norm, add the block input, relu.
#[derive(Clone, Debug)]
pub struct ConvNet {
    pub blocks: usize,
    pub channels: i64,
    pub hw: i64,
}

impl ConvNet {
    pub const NODES_PER_BLOCK: usize = 7;

    /// About `nodes` FX nodes and `weight_bytes` bytes of weights (at least 2 channels).
    pub fn sized(nodes: usize, weight_bytes: u64) -> ConvNet {
        let blocks = (nodes / Self::NODES_PER_BLOCK).max(1);
        // Per block: two 3×3 convs, 2·9·C² floats.
        let c = ((weight_bytes as f64 / (72.0 * blocks as f64)).sqrt() as i64).max(2);
        ConvNet { blocks, channels: c, hw: 8 }
    }

    pub fn fx_nodes(&self) -> usize {
        self.blocks * Self::NODES_PER_BLOCK
    }
}

impl ConvNet {
    fn conv_bn(&self, g: &mut GraphWriter, x: &str, p: &str, k: usize) -> io::Result<String> {
        let c = self.channels;
        g.module(&format!("{p}.conv{k}"), "torch.nn.modules.conv.Conv2d");
        let w = g.param(&format!("{p}.conv{k}.weight"), &[c, c, 3, 3], Init::Uniform { fan_in: 9 * c });
        let b = g.param(&format!("{p}.conv{k}.bias"), &[c], Init::Uniform { fan_in: 9 * c });
        let m = Meta::f32(&g.meta(x).sizes);
        let y = g.op(
            "torch.ops.aten.conv2d.default",
            &[
                ("input", A::T(x)),
                ("weight", A::T(&w)),
                ("bias", A::T(&b)),
                ("stride", A::Ints(vec![1, 1])),
                ("padding", A::Ints(vec![1, 1])),
            ],
            m.clone(),
            "return self._conv_forward(input, self.weight, self.bias)",
        )?;
        let bn = format!("{p}.bn{k}");
        g.module(&bn, "torch.nn.modules.batchnorm.BatchNorm2d");
        let gamma = g.param(&format!("{bn}.weight"), &[c], Init::One);
        let beta = g.param(&format!("{bn}.bias"), &[c], Init::Small);
        let mean = g.tensor(&format!("{bn}.running_mean"), FLOAT, &[c], false, Init::Small);
        let var = g.tensor(&format!("{bn}.running_var"), FLOAT, &[c], false, Init::One);
        g.tensor(&format!("{bn}.num_batches_tracked"), LONG, &[], false, Init::Zero);
        g.op(
            "torch.ops.aten.batch_norm.default",
            &[
                ("input", A::T(&y)),
                ("weight", A::T(&gamma)),
                ("bias", A::T(&beta)),
                ("running_mean", A::T(&mean)),
                ("running_var", A::T(&var)),
                ("training", A::Bool(false)),
                ("momentum", A::Float(0.1)),
                ("eps", A::Float(1e-5)),
                ("cudnn_enabled", A::Bool(false)),
            ],
            m,
            "return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias, False, 0.1, self.eps)",
        )
    }
}

impl Program for ConvNet {
    fn build(&self, g: &mut GraphWriter) -> io::Result<String> {
        let (c, hw) = (self.channels, self.hw);
        let mut x = g.user_input("x", Meta::f32(&[Dim::Batch, Dim::N(c), Dim::N(hw), Dim::N(hw)]));
        for i in 0..self.blocks {
            let p = format!("blocks.{i}");
            let y = self.conv_bn(g, &x, &p, 1)?;
            g.module(&p, "__main__.ConvBlock");
            let y = g.unary("torch.ops.aten.relu.default", &y, &[], "y = torch.relu(y)")?;
            let y = self.conv_bn(g, &y, &p, 2)?;
            g.module(&p, "__main__.ConvBlock");
            let y = g.add(&y, &x)?;
            x = g.unary("torch.ops.aten.relu.default", &y, &[], "x = torch.relu(y + x)")?;
        }
        Ok(x)
    }
}

// ------------------------------------------------------------------------------------------------
// Weights
// ------------------------------------------------------------------------------------------------

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The default payload: deterministic pseudo-random values per [`Init`], the same for any
/// chunking (each element depends only on the tensor index and its position).
pub fn default_fill(t: &TensorInfo, offset: u64, buf: &mut [u8]) {
    match t.init {
        Init::Zero => buf.fill(0),
        init => {
            assert_eq!(t.dtype, FLOAT);
            let (center, scale) = match init {
                Init::Uniform { fan_in } => (0.0f32, 1.0 / (fan_in as f32).sqrt()),
                Init::One => (1.0, 0.1),
                _ => (0.0, 0.1),
            };
            let seed = (t.index as u64).wrapping_mul(0x1000_0000_01b3) << 1;
            let first = offset / 4;
            for (i, c) in buf.chunks_exact_mut(4).enumerate() {
                let r = splitmix(seed ^ (first + i as u64));
                let u = (r >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0; // [-1, 1)
                c.copy_from_slice(&(center + scale * u).to_le_bytes());
            }
        }
    }
}

/// The fill callback: tensor, byte offset in it, buffer to fill (a multiple of 8 bytes except at
/// the tensor's end).
pub type Fill<'a> = &'a mut dyn FnMut(&TensorInfo, u64, &mut [u8]);

/// What was written.
#[derive(Clone, Debug)]
pub struct ArchiveInfo {
    pub fx_nodes: usize,
    pub tensors: Vec<TensorInfo>,
    pub weight_bytes: u64,
    pub file_bytes: u64,
    pub model_json_bytes: u64,
    pub output: String,
}

/// Write `program` as a `.pt2` archive at `path`, weights from `fill` (default: [`default_fill`]).
pub fn write_archive(path: &Path, program: &dyn Program, fill: Option<Fill>) -> io::Result<ArchiveInfo> {
    let mut default = default_fill;
    let fill: Fill = match fill {
        Some(f) => f,
        None => &mut default,
    };
    let root = path.file_stem().and_then(|s| s.to_str()).unwrap_or("archive").to_string();
    let file = std::fs::File::create(path)?;
    let mut zip = ZipOut::new(BufWriter::with_capacity(1 << 20, file), &root);

    // models/model.json, streamed; the graph's other sections follow its nodes (key order carries
    // no meaning in the format).
    zip.begin("models/model.json", 0)?;
    let start = zip.pos;
    zip.write_all(b"{\"graph_module\": {\"graph\": {\"nodes\": [")?;
    let (outputs, nodes, values, sym_ints, mut tensors, user_inputs, modules) = {
        let mut g = GraphWriter::new(&mut zip);
        let mut outputs = vec![program.build(&mut g)?];
        outputs.append(&mut g.more_outputs);
        (outputs, g.nodes, g.values, g.sym_ints, g.tensors, g.user_inputs, g.modules)
    };
    let output_args: Vec<String> = outputs.iter().map(|o| A::T(o).json()).collect();
    // Graph inputs in torch's order: parameters, buffers, user inputs.
    tensors.sort_by_key(|t| !t.is_param);
    for (i, t) in tensors.iter_mut().enumerate() {
        t.index = i;
        t.path_name = format!("weight_{i}");
    }
    let mut inputs: Vec<String> = tensors.iter().map(|t| t.placeholder.clone()).collect();
    inputs.extend(user_inputs.iter().cloned());
    write!(zip, "], \"inputs\": [")?;
    for (i, n) in inputs.iter().enumerate() {
        write!(zip, "{}{}", if i > 0 { ", " } else { "" }, A::T(n).json())?;
    }
    write!(zip, "], \"outputs\": [{}], \"tensor_values\": {{", output_args.join(", "))?;
    for (i, (n, m)) in values.iter().enumerate() {
        write!(zip, "{}{}: {}", if i > 0 { ", " } else { "" }, js(n), m.json())?;
    }
    write!(zip, "}}, \"sym_int_values\": {{")?;
    for (i, n) in sym_ints.iter().enumerate() {
        write!(
            zip,
            "{}{}: {{\"as_expr\": {{\"expr_str\": {}, \"hint\": {{\"as_int\": {BATCH_HINT}}}}}}}",
            if i > 0 { ", " } else { "" },
            js(n),
            js(BATCH_EXPR)
        )?;
    }
    write!(
        zip,
        "}}, \"sym_bool_values\": {{}}, \"is_single_tensor_return\": false, \"custom_obj_values\": {{}}, \"sym_float_values\": {{}}}}, \"signature\": {{\"input_specs\": ["
    )?;
    for (i, t) in tensors.iter().enumerate() {
        let sep = if i > 0 { ", " } else { "" };
        if t.is_param {
            write!(
                zip,
                "{sep}{{\"parameter\": {{\"arg\": {{\"name\": {}}}, \"parameter_name\": {}}}}}",
                js(&t.placeholder),
                js(&t.fqn)
            )?;
        } else {
            write!(
                zip,
                "{sep}{{\"buffer\": {{\"arg\": {{\"name\": {}}}, \"buffer_name\": {}, \"persistent\": true}}}}",
                js(&t.placeholder),
                js(&t.fqn)
            )?;
        }
    }
    for (i, n) in user_inputs.iter().enumerate() {
        let sep = if i > 0 || !tensors.is_empty() { ", " } else { "" };
        write!(zip, "{sep}{{\"user_input\": {{\"arg\": {}}}}}", A::T(n).json())?;
    }
    let leaf = r#"{"type": null, "context": null, "children_spec": []}"#;
    let leaves = vec![leaf; user_inputs.len()].join(", ");
    let in_spec = format!(
        r#"[1, {{"type": "builtins.tuple", "context": "null", "children_spec": [{{"type": "builtins.tuple", "context": "null", "children_spec": [{leaves}]}}, {{"type": "builtins.dict", "context": "[]", "children_spec": []}}]}}]"#
    );
    let out_spec = if outputs.len() == 1 {
        format!("[1, {leaf}]")
    } else {
        let leaves = vec![leaf; outputs.len()].join(", ");
        format!(r#"[1, {{"type": "builtins.tuple", "context": "null", "children_spec": [{leaves}]}}]"#)
    };
    let output_specs: Vec<String> =
        output_args.iter().map(|a| format!("{{\"user_output\": {{\"arg\": {a}}}}}")).collect();
    let arg_names: Vec<String> = user_inputs.iter().map(|n| js(n)).collect();
    write!(
        zip,
        "], \"output_specs\": [{}]}}, \"module_call_graph\": [{{\"fqn\": \"\", \"signature\": {{\"inputs\": [], \"outputs\": [], \"in_spec\": {}, \"out_spec\": {}, \"forward_arg_names\": [{}]}}}}",
        output_specs.join(", "),
        js(&in_spec),
        js(&out_spec),
        arg_names.join(", ")
    )?;
    let mut seen = std::collections::HashSet::new();
    for m in &modules {
        if seen.insert(m.as_str()) {
            write!(zip, ", {{\"fqn\": {}, \"signature\": null}}", js(m))?;
        }
    }
    write!(
        zip,
        "], \"metadata\": {{}}, \"treespec_namedtuple_fields\": {{}}}}, \"opset_version\": {{\"aten\": 10}}, \"range_constraints\": {{{}: {{\"min_val\": 0, \"max_val\": null}}}}, \"schema_version\": {{\"major\": 8, \"minor\": 20}}, \"verifiers\": [\"TRAINING\"], \"torch_version\": \"2.15.0+cu132\", \"guards_code\": []}}",
        js(BATCH_SYMBOL)
    )?;
    let model_json_bytes = zip.pos - start;
    zip.end()?;

    // Weights, one storage per tensor, streamed from the fill callback.
    let mut buf = vec![0u8; 1 << 20];
    let mut weight_bytes = 0;
    for t in &tensors {
        let n = t.nbytes();
        zip.begin(&format!("data/weights/{}", t.path_name), n)?;
        let mut off = 0u64;
        while off < n {
            let len = (n - off).min(buf.len() as u64) as usize;
            fill(t, off, &mut buf[..len]);
            zip.write_all(&buf[..len])?;
            off += len as u64;
        }
        zip.end()?;
        weight_bytes += n;
    }

    zip.begin("data/weights/model_weights_config.json", 0)?;
    write!(zip, "{{\"config\": {{")?;
    for (i, t) in tensors.iter().enumerate() {
        let mut meta = Meta::fixed(t.dtype, &t.sizes);
        meta.requires_grad = t.is_param;
        write!(
            zip,
            "{}{}: {{\"path_name\": {}, \"is_param\": {}, \"use_pickle\": false, \"tensor_meta\": {}}}",
            if i > 0 { ", " } else { "" },
            js(&t.fqn),
            js(&t.path_name),
            t.is_param,
            meta.json()
        )?;
    }
    write!(zip, "}}}}")?;
    zip.end()?;
    zip.entry("data/constants/model_constants_config.json", b"{\"config\": {}}")?;
    zip.entry("data/sample_inputs/model.pt", b"")?;
    zip.entry("archive_format", b"pt2")?;
    zip.entry("archive_version", b"0")?;
    zip.entry(".data/version", b"6\n")?;
    zip.entry("byteorder", b"little")?;
    // torch derives the id from the written data; a digest of the CRCs does the same job here.
    let id = zip.crcs().fold(0u64, |h, c| splitmix(h ^ c as u64));
    let id = format!("{:020}{:020}", id, splitmix(id));
    zip.entry(".data/serialization_id", &id.as_bytes()[..40])?;
    let (_, file_bytes) = zip.finish()?;
    Ok(ArchiveInfo { fx_nodes: nodes, tensors, weight_bytes, file_bytes, model_json_bytes, output: outputs[0].clone() })
}

/// The bytes of tensor `t` as the archive stores them (for checks on small archives).
pub fn tensor_bytes(t: &TensorInfo, fill: Option<Fill>) -> Vec<u8> {
    let mut default = default_fill;
    let fill: Fill = match fill {
        Some(f) => f,
        None => &mut default,
    };
    let mut v = vec![0u8; t.nbytes() as usize];
    fill(t, 0, &mut v);
    v
}
