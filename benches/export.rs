//! Export benchmarks on synthetic archives (no torch): `cargo bench --bench export`.
//!
//! Archives come from `tests/support/pt2_writer.rs` (repeated transformer and conv blocks) and are
//! cached in `target/bench-archives/` (or `$FXONNX_BENCH_DIR`). Each case runs in a fresh child
//! process (this binary re-executed with `--child`), so its peak memory is its own: the child reads
//! its own `VmHWM` (peak RSS; a fresh `exec` starts a fresh counter, unlike `ru_maxrss`, which
//! inherits the parent's high-water mark) and samples `RssAnon` every 2 ms from a thread (Linux has
//! no peak anonymous RSS counter). Times are wall and CPU (the main thread's on-CPU time from
//! `/proc/thread-self/schedstat`, so the sampler is not counted) per stage: open (map and index the
//! zip), parse (JSON), resolve (signature), lower (translation, table build included), optimize
//! (`fxonnx::internals::optimize`, as `fxonnx export` runs it), encode (names and message sizes),
//! save (write the files).
//!
//! Flags (after `--`): `--large` (or `FXONNX_BENCH_LARGE=1`) adds the 1M-node transformer (and with
//! `FXONNX_BENCH_HUGE=1` the 1M-node convnet, ~12 GB) and the
//! 4 GB-weight case; `--only SUBSTR` filters cases; `--runs N` runs each case of up to 100k nodes
//! and 100 MB N times and reports the run of median time; `--report` rewrites the synthetic sections of
//! `reports/performance.md` (the zoo section written by `compare_torch.py` is kept).

#[path = "../tests/support/pt2_writer.rs"]
mod pt2_writer;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

// The allocator the `fxonnx` binary uses, tuned the same way, so that stage times are the CLI's.
#[path = "../src/allocator.rs"]
// Its unit tests are the binary's; here they would be unused code.
#[allow(dead_code, unused_imports)]
mod allocator;
use std::time::{Duration, Instant};

use pt2_writer::{ConvNet, Program, Transformer};

const STAGES: [&str; 7] = ["open", "parse", "resolve", "lower", "optimize", "encode", "save"];
const MB: u64 = 1_000_000;

#[derive(Clone)]
struct Case {
    name: String,
    kind: &'static str,
    nodes: usize,
    weights: u64,
    external: bool,
    /// Export twice and compare the files byte for byte; compare external data with the archive.
    verify: bool,
}

fn cases(large: bool) -> Vec<Case> {
    let mut v = Vec::new();
    let mut add = |kind: &'static str, nodes: usize, weights: u64, external: bool, verify: bool| {
        let w =
            if weights >= 1_000 * MB { format!("{}GB", weights / (1_000 * MB)) } else { format!("{}MB", weights / MB) };
        let name = format!("{kind}_{}_{w}{}", human(nodes), if external { "_ext" } else { "" });
        v.push(Case { name, kind, nodes, weights, external, verify });
    };
    // Scaling in FX nodes, weights kept small so that time is per-node cost.
    for n in [1_000, 10_000, 100_000] {
        add("transformer", n, MB, false, false);
    }
    if large {
        add("transformer", 1_000_000, MB, false, false);
    }
    // Conv blocks carry 7 tensors per 7 nodes (a zip entry, an initializer and its metadata
    // each): 1M nodes would need ~12 GB, more than a shared 24 GB machine should give one bench.
    for n in [1_000, 10_000, 100_000] {
        add("convnet", n, MB, false, false);
    }
    if large && std::env::var("FXONNX_BENCH_HUGE").is_ok_and(|v| v == "1") {
        add("convnet", 1_000_000, MB, false, false);
    }
    // Scaling in weight bytes, inline and external.
    for w in [10 * MB, 100 * MB, 1_000 * MB] {
        add("transformer", 1_000, w, false, w == 100 * MB);
    }
    add("transformer", 1_000, 1_000 * MB, true, true);
    if large {
        add("transformer", 1_000, 4_000 * MB, true, true);
    }
    v
}

fn human(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

fn program(kind: &str, nodes: usize, weights: u64) -> Box<dyn Program> {
    match kind {
        "transformer" => Box::new(Transformer::sized(nodes, weights)),
        _ => Box::new(ConvNet::sized(nodes, weights)),
    }
}

fn archive_dir() -> PathBuf {
    std::env::var_os("FXONNX_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-archives"))
}

/// The archive of `case`, written once and reused (the writer is deterministic).
fn archive(case: &Case) -> PathBuf {
    let dir = archive_dir();
    std::fs::create_dir_all(&dir).expect("create the archive folder");
    let path = dir.join(format!("{}_{}_{}.pt2", case.kind, case.nodes, case.weights));
    let done = path.with_extension("pt2.done");
    if !done.exists() {
        let start = Instant::now();
        let info = pt2_writer::write_archive(&path, &*program(case.kind, case.nodes, case.weights), None)
            .expect("write the archive");
        std::fs::write(&done, format!("{} {}\n", info.fx_nodes, info.weight_bytes)).expect("mark the archive");
        eprintln!("wrote {} ({:.1} s)", path.display(), start.elapsed().as_secs_f64());
    }
    path
}

// ------------------------------------------------------------------------------------------------
// Child: run the stages of one export and print one line of results
// ------------------------------------------------------------------------------------------------

fn status_kib(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// User + system time of this process, all threads (`getrusage`).
fn process_cpu_seconds() -> f64 {
    #[repr(C)]
    struct Timeval {
        sec: i64,
        usec: i64,
    }
    #[repr(C)]
    struct Rusage {
        utime: Timeval,
        stime: Timeval,
        rest: [i64; 14],
    }
    extern "C" {
        fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }
    let mut r = Rusage { utime: Timeval { sec: 0, usec: 0 }, stime: Timeval { sec: 0, usec: 0 }, rest: [0; 14] };
    // SAFETY: getrusage(RUSAGE_SELF) fills the struct, laid out as Linux's `struct rusage` on 64-bit.
    if unsafe { getrusage(0, &mut r) } != 0 {
        return 0.0;
    }
    let t = |t: &Timeval| t.sec as f64 + t.usec as f64 * 1e-6;
    t(&r.utime) + t(&r.stime)
}

/// On-CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(s.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0))
}

fn child(archive: &Path, out: &Path, external: bool) {
    let stop = Arc::new(AtomicBool::new(false));
    let peak_anon = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, peak) = (stop.clone(), peak_anon.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(status_kib("RssAnon:"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut last = (Instant::now(), thread_cpu());
    let mut lap = |wall: &mut Vec<f64>, cpu: &mut Vec<f64>| {
        let now = (Instant::now(), thread_cpu());
        wall.push((now.0 - last.0).as_secs_f64());
        cpu.push((now.1.saturating_sub(last.1)).as_secs_f64());
        last = now;
    };
    let archive = fxonnx::internals::Archive::open(archive).expect("open");
    lap(&mut wall, &mut cpu);
    let loaded = archive.load("model").expect("parse");
    lap(&mut wall, &mut cpu);
    let program = fxonnx::internals::Program::new(&loaded).expect("resolve");
    lap(&mut wall, &mut cpu);
    let table = fxonnx::TranslationTable::builtin();
    let dims = Default::default();
    let opts = fxonnx::internals::lower::LowerOptions {
        opset: fxonnx::DEFAULT_OPSET,
        table: &table,
        dim_names: &dims,
        input_names: &[],
        output_names: &[],
        debug_outputs: false,
        max_memory: None,
        mutations_as_outputs: true,
    };
    let (mut model, _) = fxonnx::internals::lower::lower(&program, &opts).expect("lower");
    lap(&mut wall, &mut cpu);
    // What `fxonnx export` runs by default (the ONNX optimizer, dead-code elimination included).
    fxonnx::internals::optimize(&mut model);
    fxonnx::internals::lower::check_types(&model).expect("recorded shapes agree with the optimized graph");
    lap(&mut wall, &mut cpu);
    let placement = if external {
        fxonnx::internals::save::DataPlacement::EXTERNAL
    } else {
        fxonnx::internals::save::DataPlacement::Inline
    };
    let encoder = fxonnx::internals::save::Encoder::new(&model, &placement, out).expect("encode");
    lap(&mut wall, &mut cpu);
    encoder.write(out, &fxonnx::internals::save::Sources::archive(archive.file().as_ref())).expect("save");
    lap(&mut wall, &mut cpu);
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let process_cpu = process_cpu_seconds();
    let onnx_bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    let data_bytes = data_file(out).and_then(|d| std::fs::metadata(d).ok()).map(|m| m.len()).unwrap_or(0);
    let join = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(",");
    println!(
        "RESULT wall={} cpu={} process_cpu={process_cpu:.6} hwm_kib={} anon_kib={} onnx_nodes={} onnx_bytes={onnx_bytes} data_bytes={data_bytes}",
        join(&wall),
        join(&cpu),
        status_kib("VmHWM:"),
        peak_anon.load(Ordering::Relaxed),
        model.graph.nodes.len(),
    );
}

// ------------------------------------------------------------------------------------------------
// Parent
// ------------------------------------------------------------------------------------------------

#[derive(Default, Clone)]
struct Measured {
    wall: Vec<f64>,
    cpu: Vec<f64>,
    /// User + system time of all the child's threads (the save's writer thread included).
    process_cpu: f64,
    hwm_kib: u64,
    anon_kib: u64,
    onnx_nodes: u64,
    onnx_bytes: u64,
    data_bytes: u64,
}

fn run_child(archive: &Path, out: &Path, external: bool) -> Measured {
    let exe = std::env::current_exe().expect("current exe");
    let mut cmd = Command::new(exe);
    cmd.arg("--child").arg(archive).arg(out);
    if external {
        cmd.arg("--external");
    }
    let output = cmd.output().expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find(|l| l.starts_with("RESULT ")).unwrap_or_else(|| {
        panic!("child failed ({}): {}{}", output.status, stdout, String::from_utf8_lossy(&output.stderr))
    });
    let mut m = Measured::default();
    for kv in line["RESULT ".len()..].split_whitespace() {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let floats = || v.split(',').map(|x| x.parse().unwrap_or(0.0)).collect::<Vec<f64>>();
        match k {
            "wall" => m.wall = floats(),
            "cpu" => m.cpu = floats(),
            "process_cpu" => m.process_cpu = v.parse().unwrap_or(0.0),
            "hwm_kib" => m.hwm_kib = v.parse().unwrap_or(0),
            "anon_kib" => m.anon_kib = v.parse().unwrap_or(0),
            "onnx_nodes" => m.onnx_nodes = v.parse().unwrap_or(0),
            "onnx_bytes" => m.onnx_bytes = v.parse().unwrap_or(0),
            "data_bytes" => m.data_bytes = v.parse().unwrap_or(0),
            _ => {}
        }
    }
    m
}

/// Whether two files have the same bytes (read in 8 MiB chunks).
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(mut fa), Ok(mut fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else { return false };
    let (mut ba, mut bb) = (vec![0u8; 8 << 20], vec![0u8; 8 << 20]);
    loop {
        let na = read_full(&mut fa, &mut ba);
        let nb = read_full(&mut fb, &mut bb);
        if na != nb || ba[..na] != bb[..nb] {
            return false;
        }
        if na == 0 {
            return true;
        }
    }
}

fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// Bytes of the saved model's initializers found equal to the archive's tensors.
#[derive(Debug)]
struct Matched {
    /// Written under the archive's name, byte for byte the stored tensor.
    stored: u64,
    /// Folded by the optimizer into the transpose of an archive tensor (a generated name).
    transposed: u64,
}

/// The saved model's weights are the archive's: every initializer named after an archive tensor
/// equals it byte for byte, and every other archive tensor was written transposed (the optimizer
/// folds `Transpose(weight)`) under a generated name, checked against a transpose computed here.
/// External data is read where the model points.
fn weights_match(archive: &Path, onnx: &Path) -> Result<Matched, String> {
    use prost::Message;
    use std::collections::HashMap;
    use std::hash::{Hash, Hasher};
    let model = fxonnx::internals::proto::ModelProto::decode(&std::fs::read(onnx).map_err(|e| e.to_string())?[..])
        .map_err(|e| e.to_string())?;
    let graph = model.graph.ok_or("no graph")?;
    let a = fxonnx::internals::Archive::open(archive).map_err(|e| e.to_string())?;
    let loaded = a.load("model").map_err(|e| e.to_string())?;
    let data = data_file(onnx).and_then(|d| std::fs::File::open(d).ok());
    // SAFETY: a read-only map of a file this process just wrote and nobody else touches.
    let data = data.map(|f| unsafe { memmap2::Mmap::map(&f) }.expect("map the data file"));
    fn bytes_in<'a>(t: &'a fxonnx::internals::proto::TensorProto, data: Option<&'a [u8]>) -> Result<&'a [u8], String> {
        if t.external_data.is_empty() {
            return Ok(&t.raw_data);
        }
        let get = |k: &str| {
            t.external_data.iter().find(|e| e.key == k).and_then(|e| e.value.parse::<usize>().ok()).unwrap_or(0)
        };
        let (off, len) = (get("offset"), get("length"));
        data.ok_or("no data file")?.get(off..off + len).ok_or_else(|| "external data out of range".to_string())
    }
    let data = data.as_deref();
    let bytes_of = |t| bytes_in(t, data);
    let fingerprint = |b: &[u8]| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        b.hash(&mut h);
        (b.len(), h.finish())
    };
    let transpose = |w: &fxonnx::internals::Weight| -> Option<Vec<u8>> {
        let [rows, cols] = w.sizes[..] else { return None };
        let (rows, cols) = (rows as usize, cols as usize);
        let elem = w.raw.len().checked_div(rows * cols)?;
        let mut t = vec![0u8; w.raw.len()];
        for r in 0..rows {
            for c in 0..cols {
                let (from, to) = ((r * cols + c) * elem, (c * rows + r) * elem);
                t[to..to + elem].copy_from_slice(&w.raw[from..from + elem]);
            }
        }
        Some(t)
    };
    let mut m = Matched { stored: 0, transposed: 0 };
    let mut generated = HashMap::new();
    let mut written = std::collections::HashSet::new();
    for t in &graph.initializer {
        if !loaded.weights.config.contains_key(t.name.as_str()) {
            // A folded weight, or a constant the translations made (`val_<k>`).
            generated.insert(fingerprint(bytes_of(t)?), t);
            continue;
        }
        let w = loaded.tensor(&t.name, true).map_err(|e| format!("{}: {e}", t.name))?;
        if bytes_of(t)? != &w.raw[..] {
            return Err(format!("{} differs from the archive", t.name));
        }
        written.insert(t.name.as_str());
        m.stored += w.raw.len() as u64;
    }
    let mut names: Vec<&str> = loaded.weights.config.keys().map(|k| &**k).collect();
    names.sort();
    for name in names {
        if written.contains(name) {
            continue;
        }
        let w = loaded.tensor(name, true).map_err(|e| format!("{name}: {e}"))?;
        let want = transpose(&w).ok_or_else(|| format!("{name} is not in the model and is not 2-D"))?;
        let found = generated
            .get(&fingerprint(&want))
            .ok_or_else(|| format!("{name} is in the model neither as stored nor transposed"))?;
        if bytes_of(found)? != &want[..] {
            return Err(format!("{}: the transpose of {name} differs", found.name));
        }
        m.transposed += want.len() as u64;
    }
    Ok(m)
}

struct Row {
    case: Case,
    /// Runs made; `m` is the one of median total time.
    runs: usize,
    fx_nodes: usize,
    weight_bytes: u64,
    m: Measured,
    identical: Option<bool>,
    matched: Option<Result<Matched, String>>,
}

fn main() {
    allocator::tune();
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        // As `fxonnx export` does (src/main.rs).
        allocator::prefault_in_background();
        child(Path::new(&args[2]), Path::new(&args[3]), args.iter().any(|a| a == "--external"));
        return;
    }
    let large = args.iter().any(|a| a == "--large") || std::env::var("FXONNX_BENCH_LARGE").is_ok_and(|v| v == "1");
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).cloned();
    let report = args.iter().any(|a| a == "--report");
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let out_dir = tempfile::tempdir_in(archive_dir().parent().unwrap_or(Path::new("."))).expect("temp dir");
    let mut rows = Vec::new();
    for case in cases(large) {
        if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        let path = archive(&case);
        let done = std::fs::read_to_string(path.with_extension("pt2.done")).unwrap_or_default();
        let mut it = done.split_whitespace().map(|x| x.parse::<u64>().unwrap_or(0));
        let (fx_nodes, weight_bytes) = (it.next().unwrap_or(0) as usize, it.next().unwrap_or(0));
        let out = out_dir.path().join("a").join("model.onnx");
        std::fs::create_dir_all(out.parent().unwrap()).expect("out dir");
        // Small cases run `runs` times and report the run of median total time: on a shared VM
        // their times vary by 2x between identical runs. Large ones (seconds each) run once.
        let n = if case.nodes <= 100_000 && case.weights <= 100 * MB { runs } else { 1 };
        let mut all: Vec<Measured> = (0..n).map(|_| run_child(&path, &out, case.external)).collect();
        all.sort_by(|a, b| a.wall.iter().sum::<f64>().total_cmp(&b.wall.iter().sum::<f64>()));
        let m = all.swap_remove(all.len() / 2);
        let (mut identical, mut matched) = (None, None);
        if case.verify {
            let out2 = out_dir.path().join("b").join("model.onnx");
            std::fs::create_dir_all(out2.parent().unwrap()).expect("out dir");
            run_child(&path, &out2, case.external);
            let same_data = match (data_file(&out), data_file(&out2)) {
                (Some(a), Some(b)) => a.file_name() == b.file_name() && same_file(&a, &b),
                (a, b) => a.is_none() && b.is_none(),
            };
            identical = Some(same_file(&out, &out2) && same_data);
            matched = Some(weights_match(&path, &out));
            let _ = std::fs::remove_dir_all(out2.parent().unwrap());
        }
        let _ = std::fs::remove_dir_all(out.parent().unwrap());
        let row = Row { case, fx_nodes, weight_bytes, m, runs: n, identical, matched };
        print_row(&row);
        rows.push(row);
    }
    if report {
        write_report(&rows);
    }
}

fn print_row(r: &Row) {
    let total: f64 = r.m.wall.iter().sum();
    let cpu: f64 = r.m.cpu.iter().sum();
    let stages: Vec<String> =
        STAGES.iter().zip(r.m.wall.iter().zip(&r.m.cpu)).map(|(s, (w, c))| format!("{s} {w:.3}/{c:.3}")).collect();
    println!(
        "{:32} {:>8} FX nodes {:>9.1} MB weights: {:7.3} s wall ({:.1} µs/node) {:7.3} s CPU, {:.3} s process CPU, median of {} | peak RSS {:.0} MB, anon {:.0} MB | wall/CPU s: {}{}{}",
        r.case.name,
        r.fx_nodes,
        r.weight_bytes as f64 / 1e6,
        total,
        total * 1e6 / r.fx_nodes.max(1) as f64,
        cpu,
        r.m.process_cpu,
        r.runs,
        r.m.hwm_kib as f64 / 1024.0,
        r.m.anon_kib as f64 / 1024.0,
        stages.join(", "),
        r.identical.map(|b| format!(" | deterministic: {b}")).unwrap_or_default(),
        r.matched.as_ref().map(|m| format!(" | weights match: {m:?}")).unwrap_or_default(),
    );
}

const BEGIN: &str = "<!-- synthetic: begin (cargo bench --bench export -- --report) -->";
const END: &str = "<!-- synthetic: end -->";

fn write_report(rows: &[Row]) {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{BEGIN}\n## Synthetic archives (`cargo bench --bench export`)\n");
    let _ = writeln!(
        s,
        "Archives written by `tests/support/pt2_writer.rs` (no torch), each case in a fresh process on {} cores. \
         Stage times are wall seconds; cases of up to 100k nodes and 100 MB ran `runs` times and show the run of median \
         total time (identical runs vary by up to 2x on this VM). CPU (main) is the exporting thread's on-CPU time; CPU \
         (process) adds the save's writer thread and the memory sampler. Peak RSS is the child's own `VmHWM` \
         (it includes the pages of the archive's memory map that were read: file-backed, not anonymous memory); \
         peak anon is the largest `RssAnon` sampled every 2 ms.\n",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    s.push_str("| case | FX nodes | ONNX nodes | weights MB | ");
    s.push_str(&STAGES.iter().map(|st| format!("{st} s")).collect::<Vec<_>>().join(" | "));
    s.push_str(
        " | total s | µs / FX node | CPU s (main) | CPU s (process) | runs | peak RSS MB | peak anon MB | .onnx MB | .data MB |\n|---|",
    );
    s.push_str(&"---:|".repeat(STAGES.len() + 12));
    s.push('\n');
    for r in rows {
        let total: f64 = r.m.wall.iter().sum();
        let cpu: f64 = r.m.cpu.iter().sum();
        let _ = write!(
            s,
            "| {} | {} | {} | {:.1} | ",
            r.case.name,
            r.fx_nodes,
            r.m.onnx_nodes,
            r.weight_bytes as f64 / 1e6
        );
        s.push_str(&r.m.wall.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(" | "));
        let _ = writeln!(
            s,
            " | {total:.3} | {:.1} | {cpu:.3} | {:.3} | {} | {:.0} | {:.1} | {:.1} | {:.1} |",
            total * 1e6 / r.fx_nodes.max(1) as f64,
            r.m.process_cpu,
            r.runs,
            r.m.hwm_kib as f64 / 1024.0,
            r.m.anon_kib as f64 / 1024.0,
            r.m.onnx_bytes as f64 / 1e6,
            r.m.data_bytes as f64 / 1e6
        );
    }
    let checked: Vec<&Row> = rows.iter().filter(|r| r.identical.is_some()).collect();
    if !checked.is_empty() {
        let _ = writeln!(s, "\n### Determinism and weight bytes\n");
        s.push_str("Each case exported twice in fresh processes; the two `.onnx` (and `.data`) files compared byte for byte, and the first one's weights compared with the archive's tensors byte for byte: initializers under an archive name as stored, and every other archive tensor against the transpose the optimizer folded it into (computed here, found among the generated initializers).\n\n");
        s.push_str(
            "| case | external data | byte-identical twice | weights equal the archive's |\n|---|---|---|---|\n",
        );
        for r in checked {
            let matched = match &r.matched {
                Some(Ok(m)) => format!(
                    "yes ({:.1} MB as stored, {:.1} MB transposed)",
                    m.stored as f64 / 1e6,
                    m.transposed as f64 / 1e6
                ),
                Some(Err(e)) => format!("NO: {e}"),
                None => "–".into(),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {matched} |",
                r.case.name,
                if r.case.external { "yes" } else { "no" },
                if r.identical == Some(true) { "yes" } else { "NO" }
            );
        }
    }
    let _ = writeln!(s, "\n{END}");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/performance.md");
    let old = std::fs::read_to_string(&path).unwrap_or_else(|_| "# Performance\n".into());
    let new = match (old.find(BEGIN), old.find(END)) {
        (Some(b), Some(e)) if e > b => format!("{}{}{}", &old[..b], s, old[e + END.len()..].trim_start_matches('\n')),
        _ => format!("{}\n\n{s}", old.trim_end()),
    };
    std::fs::write(&path, new).expect("write reports/performance.md");
    eprintln!("wrote {}", path.display());
}

/// The data file of the model at `onnx` (`<file>.<hash>.data`), if it has one.
fn data_file(onnx: &Path) -> Option<std::path::PathBuf> {
    fxonnx::internals::save::data_files_of(onnx).into_iter().next()
}
