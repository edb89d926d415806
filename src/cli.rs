//! The `fxonnx` command line: `fxonnx export model.pt2 -o model.onnx`, `fxonnx inspect model.pt2`,
//! `fxonnx inspect model.onnx [--metadata]`, `fxonnx apply-weights graph.onnx model.pt2 -o model.onnx`. Here rather than in the binary so that the Python
//! package's `fxonnx` command runs the very same code ([`run`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};

/// `eprintln!` that cannot panic: progress, warnings and error messages go to stderr best effort.
/// A stderr that is closed, full or a pipe whose reader left (`2>&1 | head -1`) loses them, and
/// changes neither the export nor the exit status.
macro_rules! note {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

#[derive(Parser)]
#[command(name = "fxonnx", version, about = "Convert torch.export .pt2 archives into ONNX models, without Python")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// One value per process, parsed from the command line: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Export a .pt2 archive to ONNX.
    Export {
        /// The archive written by torch.export.save.
        input: PathBuf,
        /// Where to write the ONNX model.
        #[arg(short, long)]
        output: PathBuf,
        /// Default-domain opset (13 to 23; default 20, as torch.onnx; with an ONNX Runtime --target, 23 for
        /// a program that calls attention).
        #[arg(long,
              value_parser = clap::value_parser!(i64).range(*crate::SUPPORTED_OPSETS.start()..=*crate::SUPPORTED_OPSETS.end()))]
        opset: Option<i64>,
        /// Program of the archive to export (default: model).
        #[arg(long)]
        model: Option<String>,
        /// Names for the graph inputs, comma-separated, in order.
        #[arg(long, value_delimiter = ',')]
        input_names: Vec<String>,
        /// Names for the graph outputs, comma-separated, in order.
        #[arg(long, value_delimiter = ',')]
        output_names: Vec<String>,
        /// Name inputs and outputs after their place in the program's input and output trees:
        /// past_key_values.0.key, present.1.value (ONNX Runtime GenAI's and Optimum's names).
        #[arg(long)]
        tree_names: bool,
        /// Also write genai_config.json beside the model, for ONNX Runtime GenAI (a decoder with
        /// its cache); =DIR, a transformers checkpoint folder, gives config.json's values and its
        /// tokenizer files are copied beside the model.
        #[arg(long, value_name = "MODEL_DIR", num_args = 0..=1, require_equals = true)]
        genai_config: Option<Option<PathBuf>>,
        /// Rename a symbolic dimension: --dim s77=batch (repeatable).
        #[arg(long = "dim", value_name = "SYMBOL=NAME", value_parser = parse_dim)]
        dims: Vec<(String, String)>,
        /// Write weights to <output>.data beside the model.
        #[arg(long)]
        external_data: bool,
        /// Write a weight-free model: each weight read from the archive becomes a graph input of
        /// its type and shape (`fxonnx apply-weights` puts the weights back).
        #[arg(long, conflicts_with = "external_data")]
        no_weights: bool,
        /// Make every call of these module classes (comma-separated, full or short names:
        /// BertLayer) one call of an ONNX function per class and structure; `auto`: the classes
        /// called at least twice.
        #[arg(long, value_delimiter = ',', value_name = "CLASS[,CLASS...]|auto")]
        functions: Vec<String>,
        /// Skip the optimizer (only unused nodes and weights are dropped).
        #[arg(long)]
        no_optimize: bool,
        /// Write a markdown export report (also when the export fails).
        #[arg(long)]
        report: bool,
        /// Also render the report as HTML (implies --report).
        #[arg(long)]
        report_html: bool,
        /// Folder for reports (default: the current folder).
        #[arg(long, value_name = "DIR")]
        artifacts_dir: Option<PathBuf>,
        /// Print nothing but errors and warnings.
        #[arg(short, long)]
        quiet: bool,
        /// Also output every FX node's value as `debug:<node name>` (for node-by-node comparison
        /// with torch: benches/node_diff.py).
        #[arg(long)]
        debug_outputs: bool,
        /// Fail when the constants the export computes would take more memory than this
        /// (bytes, or with a K, M or G suffix: 512M). Weights read from the archive don't count.
        /// Default: 256M in all and 64M per constant.
        #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
        max_memory: Option<u64>,
        /// Replace the output path even when it is a symbolic link, a FIFO or device, or the
        /// input archive itself (refused otherwise).
        #[arg(long)]
        force: bool,
        /// The runtime to optimize for: `onnx` (standard ONNX, the default), or ONNX Runtime
        /// (`onnxruntime`, the same as `onnxruntime-cpu`; `onnxruntime-cuda`), whose faster forms
        /// the optimizer then also writes where measured faster.
        #[arg(long, value_name = "onnx|onnxruntime|onnxruntime-cpu|onnxruntime-cuda", value_parser = crate::Target::parse)]
        target: Option<crate::Target>,
        /// With an ONNX Runtime --target: store every float32 MatMul weight as 4- or 8-bit integers
        /// with a scale per block (`com.microsoft.MatMulNBits`). Lossy: results differ from
        /// PyTorch's by the rounding of the weights.
        #[arg(long, value_name = "int4|int8", value_parser = crate::WeightQuantization::parse)]
        quantize: Option<crate::WeightQuantization>,
        /// Weights per quantization block along K (a power of two from 16; default 32).
        #[arg(long, value_name = "N", requires = "quantize")]
        quantize_block: Option<u32>,
    },
    /// Put the weights of the archive back into a model exported with --no-weights: the result is
    /// the model a normal export of the archive (with the same options) writes, byte for byte.
    ApplyWeights {
        /// The weight-free model (`fxonnx export --no-weights`).
        model: PathBuf,
        /// The archive it was exported from.
        archive: PathBuf,
        /// Where to write the model with its weights.
        #[arg(short, long)]
        output: PathBuf,
        /// Write weights to <output>.data beside the model.
        #[arg(long)]
        external_data: bool,
    },
    /// List the ATen / Python targets fxonnx translates; with --check, the targets of an archive
    /// that have no translation.
    Ops {
        /// Only list the targets of this archive that fxonnx cannot translate.
        #[arg(long, value_name = "MODEL.pt2", conflicts_with = "missing")]
        check: Option<PathBuf>,
        /// List what the operator universe (torch.onnx's registry, Core ATen, ATen's aliases) has
        /// that the table neither translates nor refuses with a reason; with --refused, the refusals too.
        #[arg(long)]
        missing: bool,
        /// With --missing: also list the targets refused on purpose, with the reason.
        #[arg(long, requires = "missing")]
        refused: bool,
        #[arg(long, default_value = "model")]
        model: String,
    },
    /// Print a .pt2 archive's program (graph with shapes, signature, range constraints) or an ONNX
    /// model in ONNX's text form; the file's content decides which.
    Inspect {
        /// A .pt2 archive or an .onnx model.
        input: PathBuf,
        /// Program of the archive to print (.pt2 only).
        #[arg(long, default_value = "model")]
        model: String,
        /// Also print metadata_props of the model, graphs, values and nodes (ONNX only).
        #[arg(long)]
        metadata: bool,
    },
}

fn parse_dim(d: &str) -> Result<(String, String), String> {
    match d.split_once('=') {
        Some((s, n)) if !s.is_empty() && !n.is_empty() => Ok((s.to_string(), n.to_string())),
        _ => Err("expected SYMBOL=NAME, e.g. s77=batch".to_string()),
    }
}

/// How a command failed: usage errors (what the user asked cannot be done with this program)
/// exit with 2, like clap's own, everything else with 1.
enum Failure {
    Usage(String),
    Failed(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Failed(message)
    }
}

fn execute(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Export {
            input,
            output,
            opset,
            model,
            input_names,
            output_names,
            tree_names,
            genai_config,
            dims,
            external_data,
            no_weights,
            functions,
            no_optimize,
            report,
            report_html,
            artifacts_dir,
            quiet,
            debug_outputs,
            max_memory,
            force,
            target,
            quantize,
            quantize_block,
        } => {
            let start = Instant::now();
            let options = crate::ExportOptions {
                model_name: model,
                opset_version: opset,
                input_names,
                output_names,
                tree_names,
                dim_names: dims.into_iter().collect(),
                external_data,
                include_initializers: !no_weights,
                custom_translation_table: None,
                report: report || report_html,
                report_html,
                artifacts_dir: artifacts_dir.clone(),
                optimize: !no_optimize,
                debug_outputs,
                max_memory,
                module_functions: crate::ModuleFunctions::from_names(&functions),
                force,
                interrupt: None,
                mutations_as_outputs: true,
                target: target.unwrap_or_default(),
                weight_quantization: quantize
                    .map(|q| crate::WeightQuantization { block_size: quantize_block.unwrap_or(q.block_size), ..q }),
                progress: (!quiet).then(|| {
                    std::sync::Arc::new(|event: &crate::ProgressEvent| {
                        let crate::ProgressEvent::StageFinished { stage, ok, elapsed, .. } = event;
                        let mark = if *ok { "ok" } else { "failed" };
                        note!("[fxonnx] {stage}: {mark} ({:.1} ms)", elapsed.as_secs_f64() * 1e3);
                    }) as crate::Progress
                }),
            };
            let program = crate::export_to_file(&input, &output, &options).map_err(|e| {
                // Not when the report itself could not be written.
                let message = match e.report_path() {
                    Some(path) => format!("{e}\n(the export report is {})", path.display()),
                    None => e.to_string(),
                };
                match e.kind() {
                    crate::ErrorKind::Options(_) => Failure::Usage(message),
                    _ => Failure::Failed(message),
                }
            })?;
            // The process ends right after: freeing a large graph value by value would only add time.
            let program = std::mem::ManuallyDrop::new(program);
            for w in program.warnings() {
                note!("warning: {w}");
            }
            if let Some(r) = program.report_path() {
                note!("report: {}", r.display());
            }
            if let Some(dir) = &genai_config {
                let files = crate::genai::write_config(&program.model(), &output, dir.as_deref()).map_err(|e| {
                    format!("{e}\n(the model was written to {}; genai_config.json was not)", output.display())
                })?;
                for w in &files.warnings {
                    eprintln!("warning: {w}");
                }
                if !quiet {
                    for f in &files.written {
                        eprintln!("wrote {}", f.display());
                    }
                }
            }
            if quiet {
                return Ok(());
            }
            note!(
                "exported {} -> {} ({} nodes, {} initializers, {:.1} ms)",
                input.display(),
                output.display(),
                program.node_count(),
                program.initializer_count(),
                start.elapsed().as_secs_f64() * 1e3
            );
            Ok(())
        }
        Command::ApplyWeights { model, archive, output, external_data } => {
            let start = Instant::now();
            let count = crate::apply_weights(&model, &archive, &output, external_data).map_err(|e| e.to_string())?;
            note!(
                "applied {count} weights of {} to {} -> {} ({:.1} ms)",
                archive.display(),
                model.display(),
                output.display(),
                start.elapsed().as_secs_f64() * 1e3
            );
            Ok(())
        }
        Command::Ops { check: None, missing: true, refused, .. } => Ok(universe(refused)?),
        Command::Ops { check: None, .. } => {
            let table = crate::TranslationTable::builtin();
            let (min, max) = (crate::SUPPORTED_OPSETS.start(), crate::SUPPORTED_OPSETS.end());
            let mut text = format!(
                "# {} targets; exports target opsets {min} to {max} (an op that needs a newer opset says so when used)\n",
                table.len()
            );
            for key in table.keys() {
                let doc = table.get(key).map(|e| e.schema()).unwrap_or_default();
                text.push_str(&format!("{key}\t{doc}\n"));
            }
            Ok(write_out(&text)?)
        }
        Command::Ops { check: Some(path), model, .. } => {
            let table = crate::TranslationTable::builtin();
            let missing = crate::inspect::untranslated_ops(&path, &model, &table).map_err(|e| e.to_string())?;
            if missing.is_empty() {
                return Ok(write_out(&format!("every target of {} has a translation\n", path.display()))?);
            }
            let mut text = String::new();
            for op in &missing {
                text.push_str(&format!("{}\t{} node(s): {}\n", op.target, op.nodes.len(), op.nodes.join(", ")));
            }
            write_out(&text)?;
            Err(Failure::Failed(format!("{} target(s) have no translation", missing.len())))
        }
        Command::Inspect { input, model, metadata } => Ok(inspect(&input, &model, metadata)?),
    }
}

/// `fxonnx ops --missing`: per source of the operator universe, the counts, then every missing
/// target (and with `refused`, every refused one with its reason). Fails when any is missing.
fn universe(refused: bool) -> Result<(), String> {
    use crate::inspect::{Source, Status};
    let all = crate::inspect::universe(&crate::TranslationTable::builtin());
    let mut out = String::new();
    let mut missing = 0;
    for source in Source::ALL {
        let of: Vec<_> = all.iter().filter(|t| t.source == source).collect();
        let count = |f: &dyn Fn(&Status) -> bool| of.iter().filter(|t| f(&t.status)).count();
        let (tr, rf) = (count(&|s| matches!(s, Status::Translated(_))), count(&|s| matches!(s, Status::Refused(_))));
        let miss = of.len() - tr - rf;
        missing += miss;
        out.push_str(&format!(
            "# {}: {} targets, {tr} translated, {rf} refused, {miss} missing\n",
            source.label(),
            of.len()
        ));
        for t in &of {
            match &t.status {
                Status::Missing => out.push_str(&format!("missing\t{}\n", t.key)),
                Status::Refused(why) if refused => out.push_str(&format!("refused\t{}\t{why}\n", t.key)),
                _ => {}
            }
        }
    }
    write_out(&out)?;
    if missing > 0 {
        return Err(format!("{missing} target(s) of the operator universe have no translation and no stated reason"));
    }
    Ok(())
}

/// `fxonnx inspect`: a zip file (starting with `PK`) is a .pt2 archive, anything else must decode as
/// an ONNX ModelProto. External data files are not read: the text form shows no weights.
fn inspect(input: &Path, model: &str, metadata: bool) -> Result<(), String> {
    use std::io::Read;
    // A FIFO or device is refused before a byte is read: neither would ever end.
    let cannot_read = |e: std::io::Error| format!("cannot read {}: {e}", input.display());
    let mut file = crate::input::open_regular(input).map_err(|e| match e {
        crate::input::OpenError::Io(e) => cannot_read(e),
        crate::input::OpenError::NotAFile => format!(
            "{} is not a regular file; hint: pass the path of a .pt2 archive or an .onnx model",
            input.display()
        ),
    })?;
    let mut bytes = Vec::new();
    (&mut file).take(2).read_to_end(&mut bytes).map_err(cannot_read)?;
    if bytes == b"PK" {
        let text = crate::inspect::program_text(input, model).map_err(|e| e.to_string())?;
        return write_out(&text);
    }
    file.read_to_end(&mut bytes).map_err(cannot_read)?;
    let text = crate::inspect::onnx_text(bytes, metadata)
        .map_err(|e| format!("{} is neither a .pt2 archive nor an ONNX model: {}", input.display(), e.0))?;
    write_out(&text)
}

/// A command's output to stdout. A reader that went away (`| head`) ends it quietly, as the
/// listing was wanted only that far; any other failure (a full device, a closed stdout) is the
/// command's failure: what it was asked to print is not there.
fn write_out(text: &str) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    // SAFETY: F_GETFD on a descriptor number only reads its flags. Rust's stdout swallows EBADF,
    // so a closed stdout is asked about directly.
    if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
        return Err("cannot write the output: stdout is closed".into());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write the output to stdout: {e}")),
        _ => Ok(()),
    }
}

/// Run the command line on `args` (the program name first, as `std::env::args_os` gives them);
/// returns the exit status: 0, 1 when the command failed, 2 for a usage error.
pub fn run(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are "errors" that print to stdout and exit 0.
            let _ = e.print();
            return e.exit_code();
        }
    };
    quiet_panics();
    // A panic is a bug: the export turns its own into an error naming the stage or node; one
    // anywhere else still ends as one line, not an unwinding through `main`.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| execute(cli))).unwrap_or_else(|panic| {
        Err(Failure::Failed(format!(
            "internal error: {}; this is a bug in fxonnx, please report it with the command and its input",
            crate::util::panic_message(panic.as_ref())
        )))
    });
    match outcome {
        Ok(()) => 0,
        Err(Failure::Failed(e)) => {
            note!("error: {e}");
            1
        }
        Err(Failure::Usage(e)) => {
            note!("error: {e}");
            2
        }
    }
}

/// The panics fxonnx catches are reported as one `error:` line (naming the FX node when a
/// translation panicked); Rust's default hook would first print the panic's text and, with
/// `RUST_BACKTRACE`, a backtrace. The hook is quiet unless `RUST_BACKTRACE` asks for the
/// backtrace, which a bug report may then include.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
            return;
        }
        std::panic::set_hook(Box::new(|_| {}));
    });
}
