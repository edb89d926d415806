//! The `fxonnx` command line: `fxonnx export model.pt2 -o model.onnx`, `fxonnx inspect model.pt2`,
//! `fxonnx inspect model.onnx [--metadata]`, `fxonnx apply-weights graph.onnx model.pt2 -o model.onnx`. Here rather than in the binary so that the Python
//! package's `fxonnx` command runs the very same code ([`run`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "fxonnx", version, about = "Convert torch.export .pt2 archives into ONNX models, without Python")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Export a .pt2 archive to ONNX.
    Export {
        /// The archive written by torch.export.save.
        input: PathBuf,
        /// Where to write the ONNX model.
        #[arg(short, long)]
        output: PathBuf,
        /// Default-domain opset (13 to 23).
        #[arg(long, default_value_t = crate::DEFAULT_OPSET,
              value_parser = clap::value_parser!(i64).range(*crate::SUPPORTED_OPSETS.start()..=*crate::SUPPORTED_OPSETS.end()))]
        opset: i64,
        /// Program of the archive to export.
        #[arg(long, default_value = "model")]
        model: String,
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
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_memory: Option<u64>,
        /// Replace the output path even when it is a symbolic link, a FIFO or device, or the
        /// input archive itself (refused otherwise).
        #[arg(long)]
        force: bool,
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

/// `4096`, `64K`, `512M`, `2G` (powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
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
        } => {
            let start = Instant::now();
            let options = crate::ExportOptions {
                model_name: Some(model),
                opset_version: Some(opset),
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
                module_functions: match functions.as_slice() {
                    [] => None,
                    [auto] if auto == "auto" => Some(crate::ModuleFunctions::Auto),
                    classes => Some(crate::ModuleFunctions::Classes(classes.to_vec())),
                },
                force,
                mutations_as_outputs: true,
                progress: (!quiet).then(|| {
                    std::sync::Arc::new(|event: &crate::ProgressEvent| {
                        let crate::ProgressEvent::StageFinished { stage, ok, elapsed, .. } = event;
                        let mark = if *ok { "ok" } else { "failed" };
                        eprintln!("[fxonnx] {stage}: {mark} ({:.1} ms)", elapsed.as_secs_f64() * 1e3);
                    }) as crate::Progress
                }),
            };
            let program = crate::export_to_file(&input, &output, &options).map_err(|e| {
                let message = if options.report {
                    let dir = artifacts_dir.clone().unwrap_or_else(|| PathBuf::from("."));
                    format!("{e}\n(the export report is in {})", dir.display())
                } else {
                    e.to_string()
                };
                match e {
                    crate::Error::Options(_) => Failure::Usage(message),
                    _ => Failure::Failed(message),
                }
            })?;
            // The process ends right after: freeing a large graph value by value would only add time.
            let program = std::mem::ManuallyDrop::new(program);
            for w in program.warnings() {
                eprintln!("warning: {w}");
            }
            if let Some(r) = program.report_path() {
                eprintln!("report: {}", r.display());
            }
            if quiet {
                return Ok(());
            }
            eprintln!(
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
            eprintln!(
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
            // Written, not printed: a closed pipe (`fxonnx ops | head`) ends the listing quietly.
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "# {} targets; exports target opsets {min} to {max} (an op that needs a newer opset says so when used)",
                table.len()
            );
            for key in table.keys() {
                let doc = table.get(key).map(|e| e.schema()).unwrap_or_default();
                if writeln!(out, "{key}\t{doc}").is_err() {
                    break;
                }
            }
            Ok(())
        }
        Command::Ops { check: Some(path), model, .. } => {
            let table = crate::TranslationTable::builtin();
            let missing = crate::inspect::untranslated_ops(&path, &model, &table).map_err(|e| e.to_string())?;
            let mut out = std::io::stdout().lock();
            if missing.is_empty() {
                let _ = writeln!(out, "every target of {} has a translation", path.display());
                return Ok(());
            }
            for op in &missing {
                if writeln!(out, "{}\t{} node(s): {}", op.target, op.nodes.len(), op.nodes.join(", ")).is_err() {
                    break;
                }
            }
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
    let mut out = std::io::stdout().lock();
    let mut missing = 0;
    for source in Source::ALL {
        let of: Vec<_> = all.iter().filter(|t| t.source == source).collect();
        let count = |f: &dyn Fn(&Status) -> bool| of.iter().filter(|t| f(&t.status)).count();
        let (tr, rf) = (count(&|s| matches!(s, Status::Translated(_))), count(&|s| matches!(s, Status::Refused(_))));
        let miss = of.len() - tr - rf;
        missing += miss;
        let _ =
            writeln!(out, "# {}: {} targets, {tr} translated, {rf} refused, {miss} missing", source.label(), of.len());
        for t in &of {
            match &t.status {
                Status::Missing => _ = writeln!(out, "missing\t{}", t.key),
                Status::Refused(why) if refused => _ = writeln!(out, "refused\t{}\t{why}", t.key),
                _ => {}
            }
        }
    }
    if missing > 0 {
        return Err(format!("{missing} target(s) of the operator universe have no translation and no stated reason"));
    }
    Ok(())
}

/// `fxonnx inspect`: a zip file (starting with `PK`) is a .pt2 archive, anything else must decode as
/// an ONNX ModelProto. External data files are not read: the text form shows no weights.
fn inspect(input: &Path, model: &str, metadata: bool) -> Result<(), String> {
    let mut magic = [0u8; 2];
    let is_zip = std::fs::File::open(input)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .map(|()| &magic == b"PK")
        .unwrap_or(false);
    if is_zip {
        let text = crate::inspect::program_text(input, model).map_err(|e| e.to_string())?;
        write_out(&text);
        return Ok(());
    }
    let meta = std::fs::metadata(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{} is not a regular file; hint: pass the path of a .pt2 archive or an .onnx model",
            input.display()
        ));
    }
    let bytes = std::fs::read(input).map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let text = crate::inspect::onnx_text(bytes, metadata)
        .map_err(|e| format!("{} is neither a .pt2 archive nor an ONNX model: {}", input.display(), e.0))?;
    write_out(&text);
    Ok(())
}

/// Text to stdout; a reader that went away (`| head`) ends the output, not the process with a panic.
fn write_out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
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
    match execute(cli) {
        Ok(()) => 0,
        Err(Failure::Failed(e)) => {
            eprintln!("error: {e}");
            1
        }
        Err(Failure::Usage(e)) => {
            eprintln!("error: {e}");
            2
        }
    }
}
