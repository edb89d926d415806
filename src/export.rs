//! The library API: [`export`], [`ExportOptions`], [`OnnxProgram`].

use std::collections::HashMap;

use serde::Deserialize;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};
use crate::fx::{InputKind, Program};
use crate::onnx::functions::ModuleFunctions;
use crate::onnx::ir::Model;
use crate::onnx::save::{self, DataPlacement, SaveError, Sources};
use crate::optimize::{Target, WeightQuantization};
use crate::pt2::{Archive, ArchiveError, ArchiveFile};
use crate::report::{ExportRecord, Stage};
use crate::translate::dsl::TranslationTable;
use crate::translate::lower::{self, LowerOptions};

/// torch.onnx's default opset.
pub const DEFAULT_OPSET: i64 = 20;
/// Opsets fxonnx emits.
pub const SUPPORTED_OPSETS: std::ops::RangeInclusive<i64> = 13..=23;

/// Options of [`export`], named after `torch.onnx.export`'s. Every front end maps onto these
/// (the command line's flags, Python's keywords through [`ExportOptions::from_json`]); the
/// defaults are [`ExportOptions::default`]'s.
#[derive(Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExportOptions {
    /// Which program of the archive (`model` unless the archive was packaged with several).
    pub model_name: Option<String>,
    /// Default-domain opset (13 to 23; default 20, like torch.onnx, and 23 for an ONNX Runtime
    /// [`target`](Self::target) where the program calls attention). Below 18 operators take
    /// their older forms, and an op that has none at the opset fails naming the opset it needs.
    pub opset_version: Option<i64>,
    /// Names for the graph inputs, in order (the rest keep their FX names).
    pub input_names: Vec<String>,
    /// Names for the user outputs, in order.
    pub output_names: Vec<String>,
    /// Name inputs and outputs after their place in the program's input and output trees, dotted
    /// (`past_key_values.0.key`, `present.1.value`: the names ONNX Runtime GenAI and Optimum
    /// expect of a decoder's cache), where `input_names` / `output_names` give none. Outputs
    /// reached through tuples and lists only keep their FX names.
    pub tree_names: bool,
    /// Names for symbolic dimensions: `{"s77": "batch"}`.
    pub dim_names: HashMap<String, String>,
    /// Save weights to `<file>.data` beside the model (always done above protobuf's 2 GiB limit).
    pub external_data: bool,
    /// Save the weights with the model (the default). `false` writes a weight-free model, as
    /// torch.onnx's `save(include_initializers=False, keep_initializers_as_inputs=True)` does:
    /// each weight read from the archive becomes a graph input of its type and shape, which
    /// [`apply_weights`](crate::apply_weights) turns back into the initializer it was.
    pub include_initializers: bool,
    /// Translations that extend or override the built-in table, entry by entry.
    #[serde(skip)]
    pub custom_translation_table: Option<TranslationTable>,
    /// Write a markdown report (`fxonnx_export_<time>_<status>.md`) whether the export succeeds or not.
    pub report: bool,
    /// Also render the report as HTML.
    pub report_html: bool,
    /// Where reports go (default: the current folder).
    pub artifacts_dir: Option<PathBuf>,
    /// Optimize the ONNX graph (default on, like torch.onnx's `optimize=True`).
    pub optimize: bool,
    /// Told of every finished stage ([`ProgressEvent`](crate::ProgressEvent)); the CLI prints a line each.
    #[serde(skip)]
    pub progress: Option<crate::report::Progress>,
    /// Asked after every stage but the save; `true` stops the export with
    /// [`ErrorKind::Interrupted`] before anything is written (the Python module asks whether
    /// Ctrl-C was pressed).
    #[serde(skip)]
    pub interrupt: Option<crate::report::Interrupt>,
    /// Also make the value of every FX node of the main graph a graph output named
    /// `debug:<node name>`, after the model's own outputs: for comparing a model node by node
    /// with the program run in torch (`benches/node_diff.py`). Not for deployment: the extra
    /// outputs keep values alive and block fusions.
    pub debug_outputs: bool,
    /// The most memory, in bytes, the export may use for tensor data it computes: constants built
    /// by translations (an adaptive pooling matrix, an im2col index), over which the export fails
    /// naming the node, and values the optimizer folds (past it they are computed at run time).
    /// Weights are not counted: they are read in place from the archive's memory map. `None` (the
    /// default): 256 MiB in all and 64 MiB per constant (less on a machine with under 2 GiB), far
    /// above what real models build and far below what a hostile archive of a few kilobytes asks for.
    /// In JSON, a number of bytes or a size such as `"512M"` ([`parse_size`]).
    #[serde(deserialize_with = "size")]
    pub max_memory: Option<u64>,
    /// Make the calls of these module classes ONNX functions (`--functions`): one function per
    /// class and structure, one call node per module call (see [`ModuleFunctions`]).
    pub module_functions: Option<ModuleFunctions>,
    /// Replace what is at the output path even when it is a symbolic link (the link goes, not its
    /// target), a FIFO, socket or device, or the archive being exported (its map keeps the old
    /// contents readable); these are refused otherwise. A directory is always refused.
    pub force: bool,
    /// Make mutated buffers and user inputs extra graph outputs after the user outputs
    /// (`buffer_mutation_<fqn>`), as the CLI does (the default); `false` drops them as torch.onnx
    /// does, each with a warning naming what was dropped (the Python API's default; static KV
    /// caches need them).
    pub mutations_as_outputs: bool,
    /// The runtime the optimizer writes for (`--target`): standard ONNX (the default), or ONNX
    /// Runtime, where it also rewrites into the forms ONNX Runtime runs faster ([`Target`]). In
    /// JSON: `"onnx"`, `"onnxruntime"`, `"onnxruntime-cpu"` or `"onnxruntime-cuda"`.
    ///
    /// [`Target`]: crate::Target
    pub target: Target,
    /// Weight-only quantization for ONNX Runtime (`--quantize int4|int8`): every float32 MatMul by
    /// a constant weight becomes `com.microsoft.MatMulNBits` ([`WeightQuantization`]); lossy, and
    /// only with an ONNX Runtime [`target`](Self::target). In JSON: `{"bits": 4, "block_size": 32}`.
    ///
    /// [`WeightQuantization`]: crate::WeightQuantization
    pub weight_quantization: Option<WeightQuantization>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            model_name: None,
            opset_version: None,
            input_names: Vec::new(),
            output_names: Vec::new(),
            tree_names: false,
            dim_names: HashMap::new(),
            external_data: false,
            include_initializers: true,
            custom_translation_table: None,
            report: false,
            report_html: false,
            artifacts_dir: None,
            optimize: true,
            progress: None,
            interrupt: None,
            debug_outputs: false,
            max_memory: None,
            module_functions: None,
            force: false,
            mutations_as_outputs: true,
            target: Target::Onnx,
            weight_quantization: None,
        }
    }
}

impl ExportOptions {
    /// Options from a JSON object whose keys are the fields' names (`{"opset_version": 17,
    /// "dim_names": {"s77": "batch"}, "max_memory": "512M", "module_functions": "auto"}`); fields
    /// left out keep their defaults, an unknown field is an error.
    ///
    /// ```
    /// let options = fxonnx::ExportOptions::from_json(r#"{"opset_version": 17, "external_data": true}"#)?;
    /// assert_eq!(options.opset_version, Some(17));
    /// assert!(fxonnx::ExportOptions::from_json(r#"{"opset": 17}"#).is_err());
    /// # Ok::<(), fxonnx::Error>(())
    /// ```
    pub fn from_json(text: &str) -> Result<ExportOptions, Error> {
        serde_json::from_str(text).map_err(|e| {
            // Where in the caller's JSON says nothing to a user of the Python keywords it came from.
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message);
            Error::options(message.to_string())
        })
    }
}

/// `4096`, `64K`, `512M`, `2G` (powers of 1024): a size in bytes, as `--max-memory` takes it.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], c.to_ascii_uppercase()),
        _ => (s, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        'T' => 40,
        _ => return Err(format!("unknown unit `{unit}`; use K, M, G or T")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| "expected a size in bytes, e.g. 4096, 512M or 2G".to_string())
}

/// A size in JSON: a number of bytes, or the text [`parse_size`] reads.
fn size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error as _;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("max_memory {n}: expected a whole number of bytes, 0 or more"))),
        Some(serde_json::Value::String(t)) => {
            parse_size(&t).map(Some).map_err(|e| D::Error::custom(format!("max_memory `{t}`: {e}")))
        }
        Some(other) => {
            Err(D::Error::custom(format!("max_memory {other}: expected a number of bytes or a size such as \"512M\"")))
        }
    }
}

/// The names the graph inputs and outputs are given: the options', else with `tree_names` their
/// paths in the program's trees (explicit names win, one by one); and the names of symbolic dims.
/// A program whose inputs hold a transformers cache object gets tree names and its decoder dims
/// named (`batch_size`, `past_sequence_length`, ...) without asking: the names ONNX Runtime GenAI
/// and Optimum run it by.
fn io_names(program: &Program<'_>, options: &ExportOptions) -> Result<IoNames, Error> {
    let (mut inputs, mut outputs) = (options.input_names.clone(), options.output_names.clone());
    let mut dims = options.dim_names.clone();
    let paths = match crate::fx::tree::paths(&program.loaded().program.graph_module) {
        Ok(paths) if options.tree_names || paths.has_cache => paths,
        Err(e) if options.tree_names => return Err(Error::options(format!("--tree-names: {e}"))),
        _ => return Ok(IoNames { inputs, outputs, dims }),
    };
    // Each in_spec leaf is a user input or a constant one (baked in, not a graph input).
    let mut from_tree = Vec::new();
    let mut leaves = paths.inputs.into_iter();
    for input in program.inputs() {
        match input.kind {
            InputKind::UserTensor | InputKind::UserSymInt => from_tree.push(leaves.next().unwrap_or_default()),
            InputKind::ConstantInput => {
                leaves.next();
            }
            _ => {}
        }
    }
    fill_in(&mut inputs, from_tree);
    fill_in(&mut outputs, paths.outputs.into_iter().map(Option::unwrap_or_default).collect());
    if paths.has_cache {
        let user = program.inputs().iter().filter(|i| matches!(i.kind, InputKind::UserTensor | InputKind::UserSymInt));
        let symbols: Vec<(String, Vec<Option<String>>)> = user
            .zip(&inputs)
            .filter(|(input, _)| input.kind == InputKind::UserTensor)
            .map(|(input, name)| (name.clone(), input_symbols(program, &input.name)))
            .collect();
        for (symbol, name) in crate::fx::tree::decoder_dims(&symbols) {
            // Names the options give win, by symbol and by name.
            if !dims.contains_key(&symbol) && !dims.values().any(|n| *n == name) {
                dims.insert(symbol, name);
            }
        }
    }
    Ok(IoNames { inputs, outputs, dims })
}

/// The names of the graph inputs and outputs (empty: the FX name) and of symbolic dims.
struct IoNames {
    inputs: Vec<String>,
    outputs: Vec<String>,
    dims: HashMap<String, String>,
}

/// Per dim of the program's input `name`, its symbol when the dim is one symbol (`s77`).
fn input_symbols(program: &Program<'_>, name: &str) -> Vec<Option<String>> {
    let Some(meta) = program.graph().tensor_values.get(name) else { return Vec::new() };
    meta.sizes
        .iter()
        .map(|size| match size {
            crate::pt2::schema::SymInt::AsExpr(e) => match crate::sym::parse(&e.expr_str) {
                Ok(crate::sym::SymExpr::Symbol(s)) => Some(s),
                _ => None,
            },
            crate::pt2::schema::SymInt::AsInt(_) => None,
        })
        .collect()
}

/// The names an export was asked to give must fit the program: no more than its inputs and
/// outputs, none twice, and dims only for symbols it has. Silently ignoring one would export a
/// model the user did not ask for.
fn check_names(
    program: &Program<'_>,
    inputs: &[String],
    outputs: &[String],
    dims: &HashMap<String, String>,
) -> Result<(), Error> {
    let n_inputs =
        program.inputs().iter().filter(|i| matches!(i.kind, InputKind::UserTensor | InputKind::UserSymInt)).count();
    let n_outputs = program.outputs().iter().filter(|o| matches!(o, crate::fx::OutputKind::User(_))).count();
    for (what, names, n) in [("input", inputs, n_inputs), ("output", outputs, n_outputs)] {
        if names.len() > n {
            return Err(Error::options(format!(
                "{} {what} names given, but the program has {n} {what}(s)",
                names.len()
            )));
        }
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = inputs.iter().chain(outputs).filter(|n| !n.is_empty()).find(|n| !seen.insert(n.as_str())) {
        return Err(Error::options(format!(
            "the name `{twice}` is given twice (graph inputs and outputs need distinct names)"
        )));
    }
    let symbols = &program.loaded().program.range_constraints;
    let mut unknown: Vec<&str> = dims.keys().map(String::as_str).filter(|k| !symbols.contains_key(*k)).collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        let known: Vec<&str> = symbols.keys().map(|k| k.as_ref()).collect();
        return Err(Error::options(format!(
            "no symbolic dimension named {} in the program (its symbols: {}); hint: `fxonnx inspect` shows them",
            unknown.join(", "),
            if known.is_empty() { "none, its shapes are static".to_string() } else { known.join(", ") }
        )));
    }
    Ok(())
}

/// `names` extended by `defaults` where it has none (empty keeps the FX name).
fn fill_in(names: &mut Vec<String>, defaults: Vec<String>) {
    for (i, d) in defaults.into_iter().enumerate() {
        match names.get_mut(i) {
            Some(n) if n.is_empty() => *n = d,
            Some(_) => {}
            None => names.push(d),
        }
    }
}

/// An exported model.
pub struct OnnxProgram {
    model: Model,
    external_data: bool,
    /// Replace a link, special file or the archive at the output path ([`ExportOptions::force`]).
    force: bool,
    warnings: Vec<String>,
    report: Option<PathBuf>,
    /// The archive the weights are read from when saving.
    archive: Option<ArchiveFile>,
    /// Save a weight-free model ([`ExportOptions::include_initializers`] false).
    include_initializers: bool,
    /// Where the weights lie in the archive, for a weight-free model's records.
    locator: crate::pt2::Locator,
}

/// Export the program of the `.pt2` archive at `path`.
///
/// ```no_run
/// let program = fxonnx::export("model.pt2", &fxonnx::ExportOptions::default())?;
/// println!("{} nodes", program.node_count());
/// # Ok::<(), fxonnx::Error>(())
/// ```
pub fn export(path: impl AsRef<Path>, options: &ExportOptions) -> Result<OnnxProgram, Error> {
    run(Source::File(path.as_ref()), None, options)
}

/// Export an archive held in memory (what `torch.export.save` wrote to a buffer); weights are
/// slices of `data`, nothing is copied.
///
/// ```no_run
/// let data = std::fs::read("model.pt2").expect("read");
/// let program = fxonnx::export_bytes(data, &fxonnx::ExportOptions::default())?;
/// program.save("model.onnx")?;
/// # Ok::<(), fxonnx::Error>(())
/// ```
pub fn export_bytes(data: impl Into<bytes::Bytes>, options: &ExportOptions) -> Result<OnnxProgram, Error> {
    run(Source::Memory(data.into()), None, options)
}

/// Export a program whose archive entries are already in memory, each its own buffer (what the
/// Python package hands over for an `ExportedProgram`: the program's JSON, its payload configs,
/// and each tensor storage as [`bytes::Bytes`] over the tensor's memory). Names are those inside
/// a `.pt2`'s root folder (`archive_format`, `models/model.json`, `data/weights/weight_0`...);
/// nothing is copied.
pub fn export_entries(
    entries: impl IntoIterator<Item = (String, bytes::Bytes)>,
    options: &ExportOptions,
) -> Result<OnnxProgram, Error> {
    run(Source::Entries(entries.into_iter().collect()), None, options)
}

/// Where an archive is read from.
enum Source<'a> {
    File(&'a Path),
    Memory(bytes::Bytes),
    Entries(Vec<(String, bytes::Bytes)>),
}

impl Source<'_> {
    /// How reports and errors name the archive.
    fn path(&self) -> &Path {
        match self {
            Source::File(p) => p,
            Source::Memory(_) => Path::new("<archive in memory>"),
            Source::Entries(_) => Path::new("<program in memory>"),
        }
    }

    fn open(self) -> Result<Archive, ArchiveError> {
        match self {
            Source::File(p) => Archive::open(p),
            Source::Memory(data) => Archive::from_bytes(Path::new("<archive in memory>"), data),
            Source::Entries(entries) => Archive::from_entries(entries),
        }
    }
}

/// Export the archive at `input` and save the model to `output`, as one reported export (the
/// report, if asked for, covers the save too). This is what `fxonnx export` does.
pub fn export_to_file(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    options: &ExportOptions,
) -> Result<OnnxProgram, Error> {
    run(Source::File(input.as_ref()), Some(output.as_ref()), options)
}

fn run(input: Source<'_>, output: Option<&Path>, options: &ExportOptions) -> Result<OnnxProgram, Error> {
    let mut record = ExportRecord {
        archive: input.path().to_path_buf(),
        progress: options.progress.clone(),
        interrupt: options.interrupt.clone(),
        ..Default::default()
    };
    // The report's folder is checked first: a report that cannot be written fails the export
    // before any model is, naming the folder's own problem.
    let report_dir = options.report.then(|| options.artifacts_dir.clone().unwrap_or_else(|| PathBuf::from(".")));
    if let Some(dir) = &report_dir {
        save::check_folder(dir).map_err(|source| Error::from(ErrorKind::Report { path: dir.clone(), source }))?;
    }
    // A panic that escapes a stage is a bug: it becomes an error, so that a service or a batch
    // job calling the library carries on (the save's temporary files are dropped on unwinding).
    // An interrupt between stages unwinds the same way, and is no bug.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stages(input, output, options, &mut record)))
        .unwrap_or_else(|panic| {
            if let Some(crate::report::Interrupted(stage)) = panic.downcast_ref() {
                return Err(ErrorKind::Interrupted { stage: *stage }.into());
            }
            let message = crate::util::panic_message(panic.as_ref()).to_string();
            let stage = record.fail_running(&message);
            Err(ErrorKind::Internal { stage, message }.into())
        });
    let stage = record.failed_stage();
    let Some(dir) = report_dir else { return result.map_err(|e| e.located(stage, None)) };
    match (record.write(&dir, options.report_html), result) {
        (Ok(path), Ok(p)) => Ok(OnnxProgram { report: Some(path), ..p }),
        (Ok(path), Err(e)) => Err(e.located(stage, Some(path))),
        (Err(source), Ok(_)) => Err(ErrorKind::Report { path: dir, source }.into()),
        // A failed export's own error says what went wrong; the report's would hide it.
        (Err(_), Err(e)) => Err(e.located(stage, None)),
    }
}

/// The opset of an export whose options name none: torch.onnx's default, 20, except for ONNX
/// Runtime where the program calls attention: there opset 23, whose `Attention` (reading the KV
/// cache and grouped heads itself) and `RotaryEmbedding` make the benchmark's decoders 0.74-0.95x
/// of the same graph at 20 (`reports/deploy.md`). Not elsewhere, and not where an operator the
/// program needs would not run: ONNX Runtime 1.31 has no kernel for the opset-22 forms of `RoiAlign`
/// and the random operators (`RandomUniformLike`, ...), and its QDQ optimizer makes a
/// `QuantizeLinear` its own checks refuse from opset 21 (`tests/optimizer.rs` runs every fixture).
fn default_opset(target: Target, graph: &crate::pt2::schema::Graph) -> i64 {
    if !target.is_onnxruntime() {
        return DEFAULT_OPSET;
    }
    // (`aten.dropout` of an eval program is an identity; `native_dropout` draws.)
    const OLDER: &[&str] =
        &["quantize", "roi_align", "rand", "bernoulli", "native_dropout", "normal", "uniform", "multinomial"];
    let (mut attention, mut older) = (false, false);
    lower::visit_nodes(graph, &mut |node, _| {
        attention |= node.target.contains("scaled_dot_product");
        older |= OLDER.iter().any(|t| node.target.contains(t));
    });
    if attention && !older {
        ONNXRUNTIME_ATTENTION_OPSET
    } else {
        DEFAULT_OPSET
    }
}

/// The opset an ONNX Runtime target writes for a program with attention ([`default_opset`]).
pub const ONNXRUNTIME_ATTENTION_OPSET: i64 = 23;

fn stages(
    input: Source<'_>,
    output: Option<&Path>,
    options: &ExportOptions,
    record: &mut ExportRecord,
) -> Result<OnnxProgram, Error> {
    if let Some(q) = options.weight_quantization {
        if !options.target.is_onnxruntime() {
            return Err(Error::options(
                "weight quantization writes com.microsoft.MatMulNBits, an ONNX Runtime operator; \
                 hint: add --target onnxruntime (Python: target=\"onnxruntime\")",
            ));
        }
        q.check().map_err(|why| Error::options(format!("weight quantization: {why}")))?;
    }
    if let Some(opset) = options.opset_version.filter(|o| !SUPPORTED_OPSETS.contains(o)) {
        return Err(Error::options(format!(
            "opset {opset} is not supported; choose one of {}..={}",
            SUPPORTED_OPSETS.start(),
            SUPPORTED_OPSETS.end()
        )));
    }
    let name = options.model_name.as_deref().unwrap_or("model");
    let archive = record.stage_part(Stage::ReadArchive, || input.open())?;
    let loaded = record.stage(Stage::ReadArchive, || archive.load(name))?;
    let opset =
        options.opset_version.unwrap_or_else(|| default_opset(options.target, &loaded.program.graph_module.graph));
    record.opset = Some(opset);
    let mut table = crate::translations::default_table();
    if let Some(custom) = &options.custom_translation_table {
        table.merge(custom);
    }
    if options.report {
        record.program_text = Some(crate::fx::format_program(&loaded));
        record.analysis = Some(crate::report::analysis(&loaded, &table, &options.dim_names));
    }
    let program = record.stage(Stage::ResolveProgram, || Program::new(&loaded))?;
    let IoNames { inputs: input_names, outputs: output_names, dims: dim_names } = io_names(&program, options)?;
    check_names(&program, &input_names, &output_names, &options.dim_names)?;
    let lower_options = LowerOptions {
        opset,
        table: &table,
        dim_names: &dim_names,
        input_names: &input_names,
        output_names: &output_names,
        debug_outputs: options.debug_outputs,
        max_memory: options.max_memory,
        mutations_as_outputs: options.mutations_as_outputs,
    };
    let (mut model, mut warnings) = record.stage(Stage::Translate, || lower::lower(&program, &lower_options))?;
    // The model no longer needs the parsed program (weights are slices of the map, held by the
    // model): freed now, its memory serves the optimizer instead of adding to its peak.
    drop(program);
    drop(loaded);
    record.warnings = warnings.clone();
    let mut stats = record.stage_part(Stage::Optimize, || {
        Ok::<_, Error>(if options.optimize {
            crate::optimize::optimize_for(&mut model, options.target)
        } else {
            crate::optimize::clean_up(&mut model)
        })
    })?;
    if let Some(q) = options.weight_quantization {
        // int8 arithmetic on the activations where the kernels run on the CPU (ONNX Runtime GenAI's
        // builder asks for it too; reports/deploy.md measures it).
        let accuracy_level = (options.target != Target::OnnxRuntimeCuda).then_some(4);
        let done = crate::optimize::quantize::quantize_weights(&mut model, q, accuracy_level);
        warnings.push(match (done.weights, done.nodes) {
            (0, _) => format!(
                "nothing quantized to {} bits: no float32 weight of at least 16 x 16 that a MatMul or Gemm multiplies by",
                q.bits
            ),
            (n, nodes) => format!(
                "{n} MatMul/Gemm weight(s) quantized to {} bits in blocks of {} (com.microsoft.MatMulNBits{}): results \
                 differ from PyTorch's by the rounding of the weights",
                q.bits,
                q.block_size,
                if nodes < n { format!("; those of one input packed: {nodes} nodes") } else { String::new() }
            ),
        });
        record.warnings = warnings.clone();
    }
    if options.weight_quantization.is_none() && options.optimize && options.target.is_onnxruntime() {
        // The products of one input as one MatMul, as the quantization packs them (measured:
        // reports/deploy.md, `pack-products`).
        let packed = crate::optimize::quantize::pack_products(&mut model);
        if packed > 0 {
            stats.rules_fired.insert("pack-products: MatMuls of one input".into(), packed);
        }
    }
    record.optimize = Some(stats);
    // The stage ends with the checks (one progress event for it): the recorded types and shapes,
    // and the archive's weights, which an archive written over in place meanwhile (or zeros, where
    // the recovering truncation guard caught a fault) would turn into a model of mixed weights.
    record.stage(Stage::Optimize, || -> Result<(), Error> {
        lower::check_types(&model)?;
        match archive.file() {
            Some(file) => Ok(file.check_unchanged()?),
            None => Ok(()),
        }
    })?;
    if let Some(which) = &options.module_functions {
        let stats = crate::onnx::functions::extract(&mut model, which);
        if let Some((scope, why)) = stats.inline.first() {
            let more = stats.inline.len() - 1;
            let more = if more > 0 { format!(" (and {more} more, listed in the report)") } else { String::new() };
            warnings.push(format!("--functions: module `{scope}` stays inline: {why}{more}"));
        }
        if stats.functions.is_empty() {
            warnings.push("--functions: no module call became a function".into());
        }
        record.warnings = warnings.clone();
        record.functions = Some(stats);
    }
    let program = OnnxProgram {
        model,
        external_data: options.external_data,
        force: options.force,
        warnings,
        report: None,
        archive: archive.file(),
        include_initializers: options.include_initializers,
        locator: archive.locator(),
    };
    if options.report {
        // Initializers print as type and shape only: their bytes (folded weights are computed on
        // reading) are left out.
        let proto = save::to_proto_outline(&program.model);
        record.model_text = Some(crate::onnx::text::model_text(&proto, false));
    }
    if let Some(out) = output {
        record.stage(Stage::Save, || program.save(out))?;
    }
    Ok(program)
}

impl OnnxProgram {
    /// The serialized ONNX model with its weights inline, byte-identical to what [`save`](Self::save)
    /// writes for a model under protobuf's 2 GiB limit.
    pub fn model_bytes(&self) -> Vec<u8> {
        prost::Message::encode_to_vec(&save::to_proto(&self.model))
    }

    /// A read-only view of the model as it will be saved (names, shapes, nodes and their metadata;
    /// no weight bytes). It is built on each call.
    pub fn model(&self) -> crate::view::Model {
        crate::view::Model::new(save::to_proto_outline(&self.model))
    }

    /// The default-domain opset the model imports (the options' `opset_version`, or the default
    /// the export chose).
    pub fn opset(&self) -> i64 {
        self.model.opset_imports.iter().find(|(d, _)| d.is_empty() || d == "ai.onnx").map_or(0, |(_, v)| *v)
    }

    /// Nodes of the main graph.
    pub fn node_count(&self) -> usize {
        self.model.graph.nodes.len()
    }

    /// Initializers (weights and constants) of the main graph.
    pub fn initializer_count(&self) -> usize {
        self.model.graph.initializers.len()
    }

    /// The model in ONNX's text form (what `fxonnx inspect` prints of the saved model): the
    /// signature, initializers by type and shape (never their data), one line per node.
    ///
    /// ```no_run
    /// let program = fxonnx::export("model.pt2", &Default::default())?;
    /// print!("{}", program.text());
    /// # Ok::<(), fxonnx::Error>(())
    /// ```
    pub fn text(&self) -> String {
        crate::onnx::text::model_text(&save::to_proto_outline(&self.model), false)
    }

    /// The in-memory graph, for fxonnx's own tests and benches.
    #[doc(hidden)]
    pub fn ir(&self) -> &Model {
        &self.model
    }

    /// The model as a prost `ModelProto` (weights inline), for fxonnx's own tests.
    #[doc(hidden)]
    pub fn model_proto(&self) -> crate::onnx::proto::ModelProto {
        save::to_proto(&self.model)
    }

    /// Optimize the graph (what [`ExportOptions::optimize`] does during an export), for programs
    /// exported with `optimize: false`.
    ///
    /// ```no_run
    /// let options = fxonnx::ExportOptions { optimize: false, ..Default::default() };
    /// let mut program = fxonnx::export("model.pt2", &options)?;
    /// let stats = program.optimize();
    /// println!("{} -> {} nodes", stats.nodes_before, stats.nodes_after);
    /// # Ok::<(), fxonnx::Error>(())
    /// ```
    pub fn optimize(&mut self) -> crate::optimize::OptimizeStats {
        crate::optimize::optimize(&mut self.model)
    }

    /// Save weights to `<file>.data` beside the model from now on (or inline again), whatever the
    /// export asked for.
    pub fn set_external_data(&mut self, external: bool) {
        self.external_data = external;
    }

    /// Whether [`save`](Self::save) writes the weights to `<file>.data` beside the model.
    pub fn external_data(&self) -> bool {
        self.external_data
    }

    /// Save the weights with the model from now on (or not: a weight-free model, see
    /// [`ExportOptions::include_initializers`]), whatever the export asked for.
    ///
    /// ```no_run
    /// let mut program = fxonnx::export("model.pt2", &fxonnx::ExportOptions::default())?;
    /// program.set_include_initializers(false);
    /// program.save("graph.onnx")?;
    /// fxonnx::apply_weights("graph.onnx", "model.pt2", "model.onnx", false)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_include_initializers(&mut self, include: bool) {
        self.include_initializers = include;
    }

    /// Things the export dropped or changed that a user should know about.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The export report, when [`ExportOptions::report`] asked for one.
    pub fn report_path(&self) -> Option<&Path> {
        self.report.as_deref()
    }

    /// Total bytes of the initializers.
    pub fn weight_bytes(&self) -> usize {
        self.model
            .graph
            .initializers
            .iter()
            .filter_map(|&v| self.model.value(v).constant.as_ref())
            .map(|t| t.raw.len())
            .sum()
    }

    /// Write the model to `path`. Weights go to a data file beside it, `<file name>.<hash>.data`
    /// (named after its contents, so that the model and its data file are replaced as one), when
    /// the export asked for external data or when they would not fit in one protobuf message
    /// (2 GiB). Fails, writing nothing, when `path` is the archive (without
    /// [`ExportOptions::force`]) or when the archive changed in place since the export.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let sources = Sources::archive(self.archive.as_ref()).forced(self.force);
        if !self.include_initializers {
            // Small: the weights stay behind, so the plain path's message is no burden.
            let proto = crate::weights::withhold(&self.model, &self.locator);
            return Ok(save::save_proto(proto, path, &DataPlacement::Inline, &sources)?);
        }
        if self.external_data {
            return Ok(save::save_model(&self.model, path, &DataPlacement::EXTERNAL, &sources)?);
        }
        // The encoder measures the whole message first: over the limit inline (weights plus a large
        // graph), the weights move out.
        match save::save_model(&self.model, path, &DataPlacement::Inline, &sources) {
            Err(SaveError::TooLarge { .. }) => {
                Ok(save::save_model(&self.model, path, &DataPlacement::EXTERNAL, &sources)?)
            }
            other => Ok(other?),
        }
    }

    /// Fail when the archive the weights are read from changed in place since the export (a
    /// rewrite of the same file, a truncation): what [`save`](Self::save) checks before and after
    /// writing, for callers that read the model otherwise ([`model_bytes`](Self::model_bytes)).
    pub fn check_archive(&self) -> Result<(), Error> {
        match &self.archive {
            Some(a) => Ok(a.check_unchanged()?),
            None => Ok(()),
        }
    }
}
