//! The operator-corpus conformance run: export every case of a corpus folder, check the models in
//! onnxruntime against PyTorch's outputs, compare with torch.onnx, and write the coverage reports.
//!
//! ```text
//! cargo run --release --example conformance -- [DIR] [--out reports/coverage.md] [--filter SUBSTR]
//!     [--threads 2] [--keep DIR] [--copy-subset N DEST]
//! ```
//!
//! DIR defaults to `../shared/conformance/ops` beside the crate. The checks run in `$FXONNX_PYTHON`
//! (else `python3`), which needs onnx, onnxruntime and numpy. `--out X.md` also writes `X.json`
//! (per-case results). `--copy-subset N DEST` then refreshes a fixture folder such as
//! `tests/fixtures/ops` with up to N passing cases per translation family.

#[path = "../tests/support/conformance.rs"]
mod conformance;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

const DEFAULT_CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/conformance/ops");
const DEFAULT_OUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/reports/coverage.md");

#[derive(Parser)]
#[command(about = "Run fxonnx over an operator corpus and write a coverage report")]
struct Args {
    /// Corpus folder: case folders with model.pt2, inputs.npz, expected.npz and meta.json.
    dir: Option<PathBuf>,
    /// The Markdown report; the JSON report goes next to it with the extension .json.
    #[arg(long, default_value = DEFAULT_OUT)]
    out: PathBuf,
    /// Only cases whose name (`abs/0-core`) contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Export threads and checker processes.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Keep the exported models, the checker's manifest and its results in this folder.
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Start the report with the operator universe's tables (torch.onnx's registry, Core ATen,
    /// ATen's aliases: translated, refused with a reason, missing).
    #[arg(long)]
    universe: bool,
    /// Export at this opset (13 to 23; default fxonnx's).
    #[arg(long)]
    opset: Option<i64>,
    /// After the run, copy up to N passing cases per translation family into DEST (replacing its cases).
    #[arg(long, num_args = 2, value_names = ["N", "DEST"])]
    copy_subset: Option<Vec<String>>,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let copy_subset = match &args.copy_subset {
        Some(v) => {
            let n = v[0].parse::<usize>().map_err(|e| format!("--copy-subset N: `{}`: {e}", v[0]))?;
            Some((n, PathBuf::from(&v[1])))
        }
        None => None,
    };
    // The reports name the corpus as given, not by this machine's absolute path.
    let (dir, label) = match &args.dir {
        Some(d) => (d.clone(), d.display().to_string()),
        None => (PathBuf::from(DEFAULT_CORPUS), "../shared/conformance/ops".to_string()),
    };
    let python = std::env::var("FXONNX_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into());
    let options = conformance::Options {
        python: Some(python),
        filter: args.filter.clone(),
        threads: args.threads,
        work_dir: args.keep.clone(),
        progress: true,
        label,
        opset: args.opset,
    };

    let report = conformance::run(&dir, &options)?;
    let mut markdown = conformance::render_markdown(&report);
    if args.universe {
        markdown = insert_after_first_paragraph(&markdown, &universe_markdown());
    }
    write(&args.out, &markdown)?;
    write(&args.out.with_extension("json"), &conformance::render_json(&report))?;

    let passed = report.cases.iter().filter(|c| c.passed()).count();
    let torch: Vec<bool> = report.cases.iter().filter_map(|c| c.torch_onnx.as_ref().map(|t| t.passed)).collect();
    eprintln!(
        "conformance: fxonnx {passed}/{} passed, torch.onnx {}/{}; {} cases only torch.onnx passes",
        report.cases.len(),
        torch.iter().filter(|&&p| p).count(),
        torch.len(),
        report.regressions().len()
    );
    eprintln!(
        "conformance: export {:.1} s, checks {:.1} s; wrote {}",
        report.export_time.as_secs_f64(),
        report.check_time.as_secs_f64(),
        args.out.display()
    );

    if let Some((n, dest)) = copy_subset {
        let copied = conformance::copy_subset(&report, &dir, n, &dest)?;
        eprintln!("conformance: copied {} cases into {}: {}", copied.len(), dest.display(), copied.join(" "));
    }
    Ok(())
}

/// The operator universe as Markdown: counts per source, then every refused target with its
/// reason and every missing one.
fn universe_markdown() -> String {
    use fxonnx::inspect::{Source, Status};
    let all = fxonnx::inspect::universe(&fxonnx::TranslationTable::builtin());
    let mut md = String::from(
        "## The operator universe\n\nEvery target of torch.onnx's registry (torch 2.15 + onnxscript 0.7.2), of the Core ATen \
         IR and every overload of ATen's aliases, and what the built-in table does with it (`fxonnx ops --missing \
         --refused` prints the same).\n\n| source | targets | translated | refused with a reason | missing |\n\
         |---|---:|---:|---:|---:|\n",
    );
    for source in Source::ALL {
        let of: Vec<_> = all.iter().filter(|t| t.source == source).collect();
        let tr = of.iter().filter(|t| matches!(t.status, Status::Translated(_))).count();
        let rf = of.iter().filter(|t| matches!(t.status, Status::Refused(_))).count();
        md.push_str(&format!("| {} | {} | {tr} | {rf} | {} |\n", source.label(), of.len(), of.len() - tr - rf));
    }
    let mut refused: Vec<(&str, &str)> = all
        .iter()
        .filter_map(|t| match t.status {
            Status::Refused(why) => Some((t.key.as_str(), why)),
            _ => None,
        })
        .collect();
    refused.sort();
    refused.dedup();
    md.push_str("\nRefused on purpose (`src/translate/refused.rs`):\n\n| target | reason |\n|---|---|\n");
    for (key, why) in refused {
        md.push_str(&format!("| `{key}` | {why} |\n"));
    }
    let missing: Vec<&str> = all.iter().filter(|t| t.status == Status::Missing).map(|t| t.key.as_str()).collect();
    md.push_str(&format!(
        "\nMissing ({}): {}\n\n",
        missing.len(),
        missing.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
    ));
    md
}

/// `text` with `insert` after its first paragraph (the title and the corpus line stay on top).
fn insert_after_first_paragraph(text: &str, insert: &str) -> String {
    let at = text.find("\n\n").map(|i| i + 2).unwrap_or(text.len());
    let second = text[at..].find("\n\n").map(|i| at + i + 2).unwrap_or(text.len());
    format!("{}{insert}{}", &text[..second], &text[second..])
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
