//! The command line on good and bad input: bad archives exit non-zero with a one-line message
//! and leave no output file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn fxonnx(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fxonnx")).args(args).output().expect("run fxonnx")
}

/// An edit of one archive entry: its new bytes, or `None` to drop it.
type EntryEdit<'a> = dyn Fn(&str, Vec<u8>) -> Option<Vec<u8>> + 'a;

/// Rewrite a fixture archive with `edit` applied to each (name, bytes) entry; `None` drops it.
fn repack(src: &Path, dst: &Path, edit: &EntryEdit<'_>) {
    rewrite_zip(src, dst, &|name, bytes| {
        edit(name, bytes).map(|b| (name.to_string(), b, zip::CompressionMethod::Stored))
    });
}

/// An edit of one entry of [`rewrite_zip`]: its new name, bytes and compression method, or `None`
/// to drop it.
type Rewrite<'a> = dyn Fn(&str, Vec<u8>) -> Option<(String, Vec<u8>, zip::CompressionMethod)> + 'a;

/// Rewrite the archive `src` into `dst` with `edit` applied to each entry.
fn rewrite_zip(src: &Path, dst: &Path, edit: &Rewrite<'_>) {
    let mut zin = zip::ZipArchive::new(std::fs::File::open(src).expect("open")).expect("zip");
    let mut zout = zip::ZipWriter::new(std::fs::File::create(dst).expect("create"));
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).expect("entry");
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).expect("read");
        if let Some((name, bytes, method)) = edit(f.name(), bytes) {
            let opts = zip::write::SimpleFileOptions::default().compression_method(method);
            zout.start_file(name, opts).expect("start");
            zout.write_all(&bytes).expect("write");
        }
    }
    zout.finish().expect("finish");
}

/// Export `archive` to a fresh folder; return (stderr, whether any output file exists).
fn export_fails(archive: &Path) -> (String, bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out.onnx");
    let o = fxonnx(&[std::ffi::OsStr::new("export"), archive.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert!(!o.status.success(), "export of {} should fail", archive.display());
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    let leftovers = std::fs::read_dir(dir.path()).expect("ls").count();
    (stderr, leftovers > 0)
}

fn assert_one_line(stderr: &str, needle: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("error: ") && l.contains(needle)), "expected {needle:?} in:\n{stderr}");
    assert!(!stderr.contains("panicked"), "panic:\n{stderr}");
}

#[test]
fn exports_the_readme_example() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("m.onnx");
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tiny_transformer.pt2");
    let o = fxonnx(&[std::ffi::OsStr::new("export"), ex.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::metadata(&out).expect("output").len() > 1000);
    // The model gets the permissions of any new file (the umask's), not a temporary file's 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"x").expect("write");
        let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode(&out), mode(&plain), "the exported model's permissions");
    }
}

/// `fxonnx export --no-weights` then `fxonnx apply-weights`: the normal export, byte for byte.
#[test]
fn no_weights_then_apply_weights_from_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = fixture("convnet.pt2");
    let (normal, free, back) = (dir.path().join("n.onnx"), dir.path().join("free.onnx"), dir.path().join("b/n.onnx"));
    std::fs::create_dir_all(dir.path().join("b")).expect("folder");
    let os = |s: &str| std::ffi::OsString::from(s);
    let run = |args: Vec<std::ffi::OsString>| {
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let o = fxonnx(&refs);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run(vec![os("export"), archive.clone().into(), os("-o"), normal.clone().into()]);
    run(vec![os("export"), archive.clone().into(), os("-o"), free.clone().into(), os("--no-weights")]);
    run(vec![os("apply-weights"), free.clone().into(), archive.into(), os("-o"), back.clone().into()]);
    assert!(std::fs::read(&normal).expect("normal") == std::fs::read(&back).expect("back"));
    assert!(std::fs::metadata(&free).expect("free").len() < std::fs::metadata(&normal).expect("normal").len());
    let o = fxonnx(&[
        "export".as_ref(),
        fixture("convnet.pt2").as_os_str(),
        "-o".as_ref(),
        free.as_os_str(),
        "--no-weights".as_ref(),
        "--external-data".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2), "--no-weights with --external-data is a usage error");
}

/// `fxonnx inspect model.pt2 | head -1`: the reader is gone when the text is written (here before
/// the program even starts writing); the output stops, the process does not panic.
#[test]
fn inspect_into_a_closed_pipe_does_not_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fxonnx"))
        .arg("inspect")
        .arg(fixture("tiny_transformer.pt2"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run fxonnx");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{stderr}");
}

#[test]
fn inspect_prints_the_program() {
    let o = fxonnx(&["inspect".as_ref(), fixture("mlp_bn.pt2").as_os_str()]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("torch.ops.aten.batch_norm.default"), "{text}");
    assert!(text.contains("p_fc1_weight: PARAMETER target='fc1.weight'"), "{text}");
    assert!(text.contains("x: \"f32[s77, 8]\""), "{text}");
    assert!(text.contains("{s77: VR[0, int_oo]}"), "{text}");
}

#[test]
fn truncated_archive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = std::fs::read(fixture("mlp_bn.pt2")).expect("read");
    let p = dir.path().join("truncated.pt2");
    std::fs::write(&p, &bytes[..bytes.len() / 2]).expect("write");
    let (err, left) = export_fails(&p);
    assert_one_line(&err, "not a zip archive");
    assert!(!left, "output left behind");
}

#[test]
fn random_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("random.pt2");
    let noise: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(&p, noise).expect("write");
    let (err, left) = export_fails(&p);
    assert_one_line(&err, "not a zip archive");
    assert!(!left);
}

#[test]
fn missing_file() {
    let (err, left) = export_fails(Path::new("/nonexistent/model.pt2"));
    assert_one_line(&err, "cannot read /nonexistent/model.pt2");
    assert!(!left);
}

#[test]
fn broken_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("broken.pt2");
    repack(&fixture("mlp_bn.pt2"), &p, &|name, bytes| {
        Some(if name.ends_with("models/model.json") { bytes[..bytes.len() - 10].to_vec() } else { bytes })
    });
    let (err, left) = export_fails(&p);
    assert_one_line(&err, "malformed JSON in `models/model.json`");
    assert!(!left);
}

#[test]
fn missing_weight_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("noweight.pt2");
    repack(&fixture("mlp_bn.pt2"), &p, &|name, bytes| (!name.ends_with("data/weights/weight_0")).then_some(bytes));
    let (err, left) = export_fails(&p);
    assert_one_line(&err, "weight_0");
    assert!(!left);
}

#[test]
fn unknown_op_lists_every_node() {
    let (err, left) = export_fails(&fixture("custom_op.pt2"));
    assert!(err.contains("torch.ops.fxonnx_samples.mix.default"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(!left);
}

/// Usage errors exit with 2 (the README's promise), with one line naming the problem, and write
/// nothing: an opset out of range, a malformed or unknown --dim, names given twice or too many.
#[test]
fn usage_errors_exit_with_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("o.onnx");
    let cases: &[(&[&str], &str)] = &[
        (&["--opset", "12"], "--opset"),
        (&["--opset", "24"], "--opset"),
        (&["--dim", "s77"], "SYMBOL=NAME"),
        (&["--dim", "s999=batch"], "no symbolic dimension named s999"),
        (&["--input-names", "a,a"], "input names given"),
        (&["--input-names", "a", "--output-names", "a"], "`a` is given twice"),
        (&["--output-names", "a,b,c"], "3 output names given"),
    ];
    let archive = fixture("mlp_bn.pt2");
    for (args, needle) in cases {
        let mut all: Vec<&std::ffi::OsStr> =
            vec!["export".as_ref(), archive.as_os_str(), "-o".as_ref(), out.as_os_str()];
        all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
        let o = fxonnx(&all);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle) && !stderr.contains("panicked"), "{args:?}: expected {needle:?} in:\n{stderr}");
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0, "{args:?} left a file");
    }
}

/// An output path naming the archive itself, a directory (also with external data, whose file
/// would go beside it), a FIFO or a symbolic link is refused before anything is written, and
/// leaves what was there as it was.
#[test]
fn output_paths_that_must_not_be_replaced_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = dir.path().join("m.pt2");
    std::fs::copy(fixture("mlp_bn.pt2"), &archive).expect("copy");
    let before = std::fs::read(&archive).expect("read");
    let folder = dir.path().join("out");
    std::fs::create_dir(&folder).expect("mkdir");
    let link = dir.path().join("link.onnx");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&archive, &link).expect("symlink");
    let mut cases: Vec<(PathBuf, &[&str], &str)> = vec![
        (archive.clone(), &[], "it is the archive being exported"),
        (folder.clone(), &["--external-data"], "it is a directory"),
    ];
    #[cfg(unix)]
    {
        let fifo = dir.path().join("fifo.onnx");
        let made = Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
        if made {
            cases.push((fifo, &[], "not a regular file"));
        }
        cases.push((link.clone(), &[], "a symbolic link"));
    }
    let listing = || {
        let mut v: Vec<_> = std::fs::read_dir(dir.path()).expect("ls").map(|e| e.expect("entry").file_name()).collect();
        v.sort();
        v
    };
    let files = listing();
    for (out, extra, needle) in cases {
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["export".as_ref(), archive.as_os_str(), "-o".as_ref(), out.as_os_str()];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        let o = fxonnx(&args);
        assert_eq!(o.status.code(), Some(1), "{}", out.display());
        assert_one_line(&String::from_utf8_lossy(&o.stderr), needle);
        assert_eq!(listing(), files, "{}: a file appeared", out.display());
    }
    assert!(std::fs::read(&archive).expect("read") == before, "the archive is intact");
    assert_eq!(std::fs::read_dir(&folder).expect("ls").count(), 0);
}

/// An export killed (SIGKILL) at any moment, 100 times, over an existing model and its data
/// file, leaves no temporary file in the output folder, and leaves the old pair, untouched, or
/// the complete new pair: never a model with another's data (a data file of the new export
/// beside the old pair at most, which the next save removes); a report in the same folder is
/// complete when it is there.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_export_leaves_the_old_output_or_the_new_one() {
    let archive = fixture("decoder_mistral.pt2");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("m.onnx");
    let args = |archive: &Path, out: &Path| -> Vec<std::ffi::OsString> {
        [
            "export".into(),
            archive.as_os_str().into(),
            "-o".into(),
            out.as_os_str().into(),
            "--external-data".into(),
            "--report".into(),
            "--artifacts-dir".into(),
            out.parent().expect("folder").as_os_str().into(),
            "-q".into(),
        ]
        .to_vec()
    };
    let export = |archive: &Path, out: &Path| {
        let o = Command::new(env!("CARGO_BIN_EXE_fxonnx")).args(args(archive, out)).output().expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let data = fxonnx::internals::save::data_files_of(out);
        assert_eq!(data.len(), 1, "{data:?}");
        let name = data[0].file_name().expect("name").to_string_lossy().into_owned();
        (std::fs::read(out).expect("model"), name, std::fs::read(&data[0]).expect("data"))
    };
    // The complete results, for comparison: the old pair (another archive) and the new one.
    let reference = tempfile::tempdir().expect("tempdir");
    let (old_model, old_name, old_data) = export(&fixture("tiny_transformer.pt2"), &reference.path().join("m.onnx"));
    let start = std::time::Instant::now();
    let (new_model, new_name, new_data) = export(&archive, &reference.path().join("m.onnx"));
    // Kill moments spread over 1.5 times one export (the save included), whatever the machine's speed.
    let span = (start.elapsed().as_micros() as u64 * 3 / 2).max(1000);
    let mut replaced = 0;
    for i in 0..100u64 {
        for e in std::fs::read_dir(dir.path()).expect("ls") {
            std::fs::remove_file(e.expect("entry").path()).expect("clean");
        }
        std::fs::write(&out, &old_model).expect("write");
        std::fs::write(dir.path().join(&old_name), &old_data).expect("write");
        let mut child = Command::new(env!("CARGO_BIN_EXE_fxonnx"))
            .args(args(&archive, &out))
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_micros((i * 7919) % span));
        let _ = child.kill();
        let _ = child.wait();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        // A kill between linking a finished file to its temporary name and renaming it over the
        // existing output leaves `.fxonnx-<pid>-<n>.tmp`, and one before the save is done leaves
        // the old data file's or the old model's second name `.fxonnx-<pid>-keep-<n>.tmp`
        // (complete, never partial); the next export removes them (checked below).
        let (temporaries, names): (Vec<String>, Vec<String>) =
            names.into_iter().partition(|n| n.starts_with(".fxonnx-") && n.ends_with(".tmp"));
        // Reports go last, whole or not at all: each one ends with its last section's table.
        let (reports, mut names): (Vec<String>, Vec<String>) =
            names.into_iter().partition(|n| n.starts_with("fxonnx_export_") && n.ends_with(".md"));
        for r in &reports {
            let text = std::fs::read_to_string(dir.path().join(r)).expect("report");
            assert!(text.contains("## Time and memory per stage") && text.ends_with("|\n"), "kill {i}: {r} is whole");
        }
        for t in &temporaries {
            let bytes = std::fs::read(dir.path().join(t)).expect("temporary");
            // `-keep-` names the old data file or model, held until the new model is in place.
            let kept = t.contains("-keep-") && (bytes == old_data || bytes == old_model);
            let whole = bytes == new_model || bytes == new_data || kept;
            assert!(whole, "kill {i}: {t} is a complete output");
        }
        let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap_or_default();
        let Ok(model) = std::fs::read(&out) else {
            // A kill while the files were switched: no model at the path, never a model beside the
            // other export's data; the old model whole under its second name, the data file in
            // place one export's, whole.
            let kept = temporaries.iter().any(|t| t.contains("-keep-") && read(t) == old_model);
            assert!(kept, "kill {i}: no model, and the old one not kept: {temporaries:?}");
            let data = read(&new_name);
            assert!(data == new_data || data == old_data, "kill {i}: the data file is whole");
            continue;
        };
        // Whichever pair is in place is whole; the other export's data file may be there too
        // (the new one's, linked before the kill; the old one's, not yet removed after it).
        let (ours, ours_data, theirs, theirs_data) = if model == old_model {
            (&old_name, &old_data, &new_name, &new_data)
        } else {
            assert!(model == new_model, "kill {i}: the model is complete");
            replaced += 1;
            (&new_name, &new_data, &old_name, &old_data)
        };
        assert!(read(ours) == *ours_data, "kill {i}: the model's data file is there, whole");
        names.retain(|n| n != "m.onnx" && n != ours);
        if let Some(other) = names.first() {
            assert!(names.len() == 1 && other == theirs && read(other) == *theirs_data, "kill {i}: left {names:?}");
        }
    }
    assert!(replaced < 100, "every kill came after the save: none tested an interrupted export");
    assert!(replaced > 0, "every kill came before the save: none tested a kill after it");
    // A complete export removes what killed ones left, and leaves only its own files.
    for e in std::fs::read_dir(dir.path()).expect("ls") {
        let p = e.expect("entry").path();
        if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("fxonnx_export_")) {
            std::fs::remove_file(p).expect("remove");
        }
    }
    let _ = export(&archive, &out);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names[0].starts_with("fxonnx_export_") && names[0].ends_with("_success.md"), "{names:?}");
    assert_eq!(names[1..], ["m.onnx".to_string(), new_name]);
}

/// `mlp_bn` with its JSON entry ending in `entry` edited by `edit`.
fn with_json_edit(dir: &Path, entry: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let p = dir.join("edited.pt2");
    repack(&fixture("mlp_bn.pt2"), &p, &|name, bytes| {
        if !name.ends_with(entry) {
            return Some(bytes);
        }
        let mut v: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
        edit(&mut v);
        Some(serde_json::to_vec(&v).expect("json"))
    });
    p
}

const WEIGHTS: &str = "data/weights/model_weights_config.json";
const PROGRAM: &str = "models/model.json";

/// Hostile or corrupt numbers in an archive's JSON get a clean error naming the tensor or value,
/// never a panic, an abort or a huge allocation, and leave no file (issue 18's classes).
#[test]
fn hostile_sizes_strides_and_dtypes_are_refused() {
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            WEIGHTS,
            Box::new(|v| {
                v["config"]["fc1.weight"]["tensor_meta"]["storage_offset"] = serde_json::json!({"as_int": i64::MAX - 3})
            }),
            "reaches past the",
        ),
        (
            WEIGHTS,
            Box::new(|v| {
                v["config"]["fc1.weight"]["tensor_meta"]["storage_offset"] = serde_json::json!({"as_int": 100})
            }),
            "reaches past the",
        ),
        (
            WEIGHTS,
            Box::new(|v| {
                v["config"]["fc1.weight"]["tensor_meta"]["sizes"] =
                    serde_json::json!([{"as_int": 1_000_000_000_000_000_000i64}, {"as_int": 8}])
            }),
            "more than 2^40 elements",
        ),
        (
            WEIGHTS,
            Box::new(|v| {
                v["config"]["fc1.weight"]["tensor_meta"]["sizes"] =
                    serde_json::json!([{"as_int": 4_294_967_296i64}, {"as_int": 4_294_967_296i64}])
            }),
            "more than 2^40 elements",
        ),
        (
            WEIGHTS,
            Box::new(|v| {
                v["config"]["fc1.weight"]["tensor_meta"]["sizes"] = serde_json::json!([{"as_int": -16}, {"as_int": 8}])
            }),
            "inconsistent sizes",
        ),
        (
            WEIGHTS,
            Box::new(|v| v["config"]["fc1.weight"]["tensor_meta"]["dtype"] = serde_json::json!(99)),
            "unknown ScalarType id 99",
        ),
        (
            WEIGHTS,
            Box::new(|v| {
                v["config"]["fc1.weight"]["tensor_meta"]["sizes"] = serde_json::json!([{"as_int": 4}, {"as_int": 8}])
            }),
            "stored as float32 [4, 8], but the program reads it as f32[16, 8]",
        ),
        (
            PROGRAM,
            Box::new(|v| {
                v["graph_module"]["graph"]["tensor_values"]["p_fc1_bias"]["sizes"] = serde_json::json!([{"as_int": -1}])
            }),
            "negative size",
        ),
        (
            PROGRAM,
            Box::new(|v| v["graph_module"]["graph"]["tensor_values"]["p_fc1_bias"]["dtype"] = serde_json::json!(1234)),
            "unknown ScalarType id 1234",
        ),
        (
            PROGRAM,
            Box::new(|v| {
                v["graph_module"]["graph"]["tensor_values"]["p_fc1_bias"]["sizes"] =
                    serde_json::json!([{"as_int": 1i64 << 41}])
            }),
            "more than 2^40 elements",
        ),
    ];
    for (entry, edit, needle) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let archive = with_json_edit(dir.path(), entry, edit);
        let (err, left) = export_fails(&archive);
        assert_one_line(&err, needle);
        assert!(!left, "{needle}: a file was left");
    }
}

/// A weight whose strides repeat one stored value over a huge shape (zero strides) is stored once
/// and expanded in the graph: a tiny archive does not become a huge model.
#[test]
fn a_zero_stride_weight_is_stored_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    // fc1.bias [16] read with stride 0: every element is the first.
    let archive = with_json_edit(dir.path(), WEIGHTS, |v| {
        v["config"]["fc1.bias"]["tensor_meta"]["strides"] = serde_json::json!([{"as_int": 0}]);
    });
    let out = dir.path().join("m.onnx");
    let o = fxonnx(&["export".as_ref(), archive.as_os_str(), "-o".as_ref(), out.as_os_str(), "--no-optimize".as_ref()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = fxonnx(&["inspect".as_ref(), out.as_os_str()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("float[1] fc1.bias"), "the bias is stored as one value:\n{text}");
    assert!(text.contains("Expand (fc1.bias"), "and expanded in the graph:\n{text}");
}

/// The regression fixtures of fuzzing findings and hostile archives (tests/fixtures/bad/, made by
/// its make.py): each ends within 20 s and 2 GB of address space (issue 31: hangs, aborts on huge
/// allocations, amplification) with its error, one line and no panic text, and no file left; or,
/// where the program is legitimate and within the bounds, with its model written.
#[test]
fn every_bad_archive_gives_its_error() {
    let bad = fixture("bad");
    let cases: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(bad.join("cases.json")).expect("cases.json")).expect("json");
    assert!(cases.len() >= 7);
    for case in cases {
        let archive = case["archive"].as_str().expect("archive");
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out.onnx");
        let mut args: Vec<std::ffi::OsString> =
            vec!["export".into(), bad.join(archive).into(), "-o".into(), out.clone().into(), "--quiet".into()];
        args.extend(case["args"].as_array().into_iter().flatten().map(|a| a.as_str().expect("arg").into()));
        let (o, took) = bounded(&args);
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(took < std::time::Duration::from_secs(20), "{archive}: {took:?}");
        assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{archive}: {stderr}");
        if case["exports"].as_bool() == Some(true) {
            assert!(o.status.success(), "{archive}: {stderr}");
            assert!(out.exists(), "{archive}: no model");
            continue;
        }
        let error = case["error"].as_str().expect("error");
        assert_eq!(o.status.code(), Some(1), "{archive}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{archive}: one line:\n{stderr}");
        assert_one_line(&stderr, error);
        assert!(!stderr.contains("internal error"), "{archive}: {stderr}");
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0, "{archive}: a file was left");
    }
}

/// Run fxonnx with `args`, its address space limited to 2 GB (on Linux) and killed after 60 s;
/// its output and how long it took. Without `RUST_BACKTRACE`, as a user runs it.
fn bounded(args: &[std::ffi::OsString]) -> (std::process::Output, std::time::Duration) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fxonnx"));
    cmd.args(args)
        .env_remove("RUST_BACKTRACE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit { rlim_cur: 2 << 30, rlim_max: 2 << 30 };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let start = std::time::Instant::now();
    let mut child = cmd.spawn().expect("run fxonnx");
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().expect("kill");
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let took = start.elapsed();
    (child.wait_with_output().expect("output"), took)
}

/// A device or a pipe as the input is refused at once: `/dev/zero` would otherwise be read until
/// memory runs out, and a pipe cannot be mapped.
#[cfg(unix)]
#[test]
fn a_device_as_input_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("o.onnx");
    for args in [vec!["inspect", "/dev/zero"], vec!["export", "/dev/zero", "-o", out.to_str().expect("utf-8")]] {
        let o = fxonnx(&args.iter().map(std::ffi::OsStr::new).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_one_line(&String::from_utf8_lossy(&o.stderr), "is not a regular file");
    }
    assert!(!out.exists());
}

/// The classic bad inputs of issue 18's catalogue not covered above, each with its error kind and
/// text, and no file left.
#[test]
fn classic_bad_archives_get_their_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stored = zip::CompressionMethod::Stored;
    type Edit = Box<dyn Fn(&str, Vec<u8>) -> (String, Vec<u8>, zip::CompressionMethod)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "entry names climbing out with ../",
            Box::new(move |n, b| {
                let n = if n.ends_with(PROGRAM) { format!("../../{n}") } else { n.to_string() };
                (n, b, stored)
            }),
            "no program named `model` in the archive; it holds: none",
        ),
        (
            "JSON nested 10,000 deep",
            Box::new(move |n, b| {
                let deep = format!("{{\"deep\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
                let b = if n.ends_with(PROGRAM) { deep.into_bytes() } else { b };
                (n.to_string(), b, stored)
            }),
            "malformed JSON in `models/model.json`",
        ),
        (
            "an argument of an unknown kind",
            Box::new(move |n, b| {
                if !n.ends_with(PROGRAM) {
                    return (n.to_string(), b, stored);
                }
                // The first argument of the first node.
                let text = String::from_utf8(b).expect("utf-8");
                let nodes = text.find("\"nodes\"").expect("nodes");
                let (head, tail) = text.split_at(nodes);
                let text = format!("{head}{}", tail.replacen("\"as_tensor\"", "\"as_hologram\"", 1));
                (n.to_string(), text.into_bytes(), stored)
            }),
            "as_hologram",
        ),
        (
            "a wrong archive_format",
            Box::new(move |n, b| {
                let b = if n.ends_with("archive_format") { b"pickle".to_vec() } else { b };
                (n.to_string(), b, stored)
            }),
            "not a .pt2 program",
        ),
    ];
    for (what, edit, error) in cases {
        let p = dir.path().join("case.pt2");
        rewrite_zip(&fixture("mlp_bn.pt2"), &p, &|n, b| Some(edit(n, b)));
        check(what, &p, error);
    }
    // A compressed entry: the program's headers say deflate (the zip crate here writes stored
    // entries only). The reader takes the method from the central directory.
    let p = dir.path().join("compressed.pt2");
    rewrite_zip(&fixture("mlp_bn.pt2"), &p, &|n, b| Some((n.to_string(), b, stored)));
    let mut bytes = std::fs::read(&p).expect("read");
    // (signature, offset of the method, of the name length, of the name) of local and central headers.
    for (signature, method, name_len, name) in [(*b"PK\x03\x04", 8, 26, 30), (*b"PK\x01\x02", 10, 28, 46)] {
        let at = (0..bytes.len() - name)
            .find(|&i| {
                bytes[i..i + 4] == signature && {
                    let len = u16::from_le_bytes([bytes[i + name_len], bytes[i + name_len + 1]]) as usize;
                    bytes.get(i + name..i + name + len).is_some_and(|n| n.ends_with(PROGRAM.as_bytes()))
                }
            })
            .expect("the program's header");
        bytes[at + method] = 8;
    }
    std::fs::write(&p, bytes).expect("write");
    check("a compressed entry", &p, "is compressed (method 8)");
}

fn check(what: &str, p: &Path, error: &str) {
    {
        let (stderr, left) = export_fails(p);
        assert_one_line(&stderr, error);
        assert!(!stderr.contains("internal error"), "{what}: {stderr}");
        assert!(!left, "{what}: a file was left");
    }
}

/// `--max-memory` turns a constant a translation would build past the limit into an error
/// naming the node; a malformed size is a usage error.
#[test]
fn max_memory_bounds_the_constants_an_export_builds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("m.onnx");
    let run = |limit: &str| {
        fxonnx(&[
            "export".as_ref(),
            fixture("windows_norms.pt2").as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
            "--max-memory".as_ref(),
            limit.as_ref(),
        ])
    };
    let o = run("1K");
    assert_eq!(o.status.code(), Some(1));
    assert_one_line(&String::from_utf8_lossy(&o.stderr), "over the memory limit of 1024 bytes (--max-memory)");
    assert!(!out.exists());
    assert!(run("64M").status.success());
    for bad in ["12Q", "lots", "-5"] {
        assert_eq!(run(bad).status.code(), Some(2), "{bad}");
    }
}

/// With `--force`, a symbolic link at the output path is replaced (its target is untouched),
/// and so is the input archive itself (its map keeps the old bytes readable while exporting).
#[cfg(unix)]
#[test]
fn force_replaces_links_and_the_input_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("target.txt");
    std::fs::write(&target, "keep me").expect("write");
    let link = dir.path().join("link.onnx");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let export = |input: &Path, out: &Path, force: bool| {
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["export".as_ref(), input.as_os_str(), "-o".as_ref(), out.as_os_str()];
        if force {
            args.push("--force".as_ref());
        }
        fxonnx(&args)
    };
    assert!(!export(&fixture("mlp_bn.pt2"), &link, false).status.success());
    assert!(export(&fixture("mlp_bn.pt2"), &link, true).status.success());
    assert!(!std::fs::symlink_metadata(&link).expect("stat").file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep me");
    let copy = dir.path().join("copy.pt2");
    std::fs::copy(fixture("mlp_bn.pt2"), &copy).expect("copy");
    let o = export(&copy, &copy, false);
    assert_one_line(&String::from_utf8_lossy(&o.stderr), "the archive being exported");
    assert!(export(&copy, &copy, true).status.success());
    let reference = dir.path().join("reference.onnx");
    assert!(export(&fixture("mlp_bn.pt2"), &reference, false).status.success());
    assert_eq!(std::fs::read(&copy).expect("read"), std::fs::read(&reference).expect("read"));
}

/// An archive truncated while an export reads it: an error message and exit status 1 (or a
/// finished export, when the truncation came after the last read), never death by SIGBUS.
#[cfg(target_os = "linux")]
#[test]
fn an_archive_truncated_during_an_export_is_an_error() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = dir.path().join("big.pt2");
    let out = dir.path().join("m.onnx");
    let mut faults = 0;
    for attempt in 0..30u64 {
        std::fs::copy(fixture("decoder_mistral.pt2"), &archive).expect("copy");
        let child = Command::new(env!("CARGO_BIN_EXE_fxonnx"))
            .args(["export".as_ref(), archive.as_os_str(), "-o".as_ref(), out.as_os_str(), "--quiet".as_ref()])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        // Truncate to nothing at a moment spread over the export's first milliseconds.
        std::thread::sleep(std::time::Duration::from_micros(attempt * 700));
        std::fs::OpenOptions::new().write(true).open(&archive).expect("open").set_len(0).expect("truncate");
        let o = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.signal(), None, "killed by a signal: {stderr}");
        assert!(matches!(o.status.code(), Some(0 | 1)), "{:?}: {stderr}", o.status);
        assert!(!stderr.contains("panicked"), "{stderr}");
        faults += usize::from(stderr.contains("the archive changed while it was read"));
        let _ = std::fs::remove_file(&out);
    }
    eprintln!("{faults} of 30 truncations hit the memory map");
}

/// `--genai-config` writes genai_config.json from the model's own inputs and outputs; with a
/// checkpoint folder, its config's values and its tokenizer files; a model that is no decoder
/// with a cache is refused, naming what it lacks.
#[test]
fn genai_config_beside_an_exported_decoder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("decoder.onnx");
    let archive = fixture("hf_cache_llama.pt2");
    let export = |extra: &[&std::ffi::OsStr]| {
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["export".as_ref(), archive.as_os_str(), "-o".as_ref(), out.as_os_str()];
        args.extend_from_slice(extra);
        fxonnx(&args)
    };
    let o = export(&["--genai-config".as_ref()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("warning: genai_config.json: context_length 2048"), "{stderr}");
    let read = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.path().join("genai_config.json")).expect("genai_config.json"))
            .expect("json")
    };
    let config = read();
    let decoder = &config["model"]["decoder"];
    assert_eq!(config["model"]["type"], "decoder");
    assert_eq!(config["model"]["vocab_size"], 64);
    assert_eq!(decoder["filename"], "decoder.onnx");
    assert_eq!((decoder["num_hidden_layers"].as_i64(), decoder["num_key_value_heads"].as_i64()), (Some(2), Some(2)));
    assert_eq!(decoder["head_size"], 8);
    assert_eq!(decoder["inputs"]["position_ids"], "position_ids");
    assert_eq!(decoder["inputs"]["past_key_names"], "past_key_values.%d.key");
    assert_eq!(decoder["outputs"]["present_value_names"], "present.%d.value");
    assert!(config["model"].get("eos_token_id").is_none());

    // A checkpoint folder: its context length, tokens, heads and tokenizer files.
    let ckpt = dir.path().join("checkpoint");
    std::fs::create_dir(&ckpt).expect("mkdir");
    let cfg = r#"{"max_position_embeddings": 128, "num_attention_heads": 4, "hidden_size": 32, "eos_token_id": 2}"#;
    std::fs::write(ckpt.join("config.json"), cfg).expect("write");
    std::fs::write(ckpt.join("generation_config.json"), r#"{"eos_token_id": [2, 5], "bos_token_id": 1}"#)
        .expect("write");
    std::fs::write(ckpt.join("tokenizer.json"), "{}").expect("write");
    let flag = std::ffi::OsString::from(format!("--genai-config={}", ckpt.display()));
    let o = export(&[&flag, "-q".as_ref()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let config = read();
    assert_eq!(config["model"]["context_length"], 128);
    assert_eq!(config["search"]["max_length"], 128);
    assert_eq!(config["model"]["eos_token_id"], serde_json::json!([2, 5]), "generation_config.json first");
    assert_eq!(config["model"]["bos_token_id"], 1);
    assert_eq!(config["model"]["decoder"]["num_attention_heads"], 4);
    assert_eq!(std::fs::read(dir.path().join("tokenizer.json")).expect("copied"), b"{}");

    // A folder without config.json, and a model with no cache: errors that say so.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let flag = std::ffi::OsString::from(format!("--genai-config={}", empty.display()));
    let o = export(&[&flag]);
    assert!(!o.status.success());
    assert_one_line(&String::from_utf8_lossy(&o.stderr), "no config.json");
    let convnet = fixture("convnet.pt2");
    let o =
        fxonnx(&["export".as_ref(), convnet.as_os_str(), "-o".as_ref(), out.as_os_str(), "--genai-config".as_ref()]);
    assert_eq!(o.status.code(), Some(1));
    assert_one_line(&String::from_utf8_lossy(&o.stderr), "the model has no past_key_values.N.key inputs");
}

/// A program of many dynamic inputs and outputs exports in time linear in their number (issue
/// 31: binding each output scanned the whole input list; 200,000 inputs took 46 s where this takes
/// about 8, 400,000 took 161 s). Each input `x<i>: [s<i>, 2]` has its own symbol and goes through
/// one relu to its own output.
#[test]
fn many_dynamic_inputs_export_in_linear_time() {
    let n = 200_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = dir.path().join("many.pt2");
    let meta = |s: &str| {
        format!(
            r#"{{"dtype":7,"sizes":[{{"as_expr":{{"expr_str":"Symbol('{s}', positive=True, integer=True)","hint":{{"as_int":4}}}}}},{{"as_int":2}}],"requires_grad":false,"device":{{"type":"cpu","index":null}},"strides":[{{"as_int":2}},{{"as_int":1}}],"storage_offset":{{"as_int":0}},"layout":7}}"#
        )
    };
    let list = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(",");
    let leaf = r#"{"type":null,"context":null,"children_spec":[]}"#;
    let tuple = |k: usize| {
        format!(r#"{{"type":"builtins.tuple","context":"null","children_spec":[{}]}}"#, vec![leaf; k].join(","))
    };
    let in_spec = format!(
        r#"[1,{{"type":"builtins.tuple","context":"null","children_spec":[{},{{"type":"builtins.dict","context":"[]","children_spec":[]}}]}}]"#,
        tuple(n)
    );
    let out_spec = format!("[1,{}]", tuple(n));
    let json = format!(
        r#"{{"graph_module":{{"graph":{{"inputs":[{}],"outputs":[{}],"nodes":[{}],"tensor_values":{{{},{}}},"sym_int_values":{{}},"sym_bool_values":{{}},"is_single_tensor_return":false,"custom_obj_values":{{}},"sym_float_values":{{}}}},"signature":{{"input_specs":[{}],"output_specs":[{}]}},"module_call_graph":[{{"fqn":"","signature":{{"inputs":[],"outputs":[],"in_spec":{},"out_spec":{},"forward_arg_names":null}}}}],"metadata":{{}},"treespec_namedtuple_fields":{{}}}},"opset_version":{{"aten":10}},"range_constraints":{{{}}},"schema_version":{{"major":8,"minor":20}},"verifiers":["TRAINING"],"torch_version":"2.15.0","guards_code":[]}}"#,
        list(&|i| format!(r#"{{"as_tensor":{{"name":"x{i}"}}}}"#)),
        list(&|i| format!(r#"{{"as_tensor":{{"name":"y{i}"}}}}"#)),
        list(&|i| format!(
            r#"{{"target":"torch.ops.aten.relu.default","inputs":[{{"name":"self","arg":{{"as_tensor":{{"name":"x{i}"}}}},"kind":1}}],"outputs":[{{"as_tensor":{{"name":"y{i}"}}}}],"metadata":{{}},"is_hop_single_tensor_return":null,"name":"y{i}"}}"#
        )),
        list(&|i| format!(r#""x{i}":{}"#, meta(&format!("s{i}")))),
        list(&|i| format!(r#""y{i}":{}"#, meta(&format!("s{i}")))),
        list(&|i| format!(r#"{{"user_input":{{"arg":{{"as_tensor":{{"name":"x{i}"}}}}}}}}"#)),
        list(&|i| format!(r#"{{"user_output":{{"arg":{{"as_tensor":{{"name":"y{i}"}}}}}}}}"#)),
        serde_json::to_string(&in_spec).expect("json"),
        serde_json::to_string(&out_spec).expect("json"),
        list(&|i| format!(r#""s{i}":{{"min_val":2,"max_val":1024}}"#)),
    );
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive).expect("create"));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (entry, bytes) in [
        ("archive_format", b"pt2".as_slice()),
        ("archive_version", b"0"),
        (".data/version", b"6\n"),
        ("byteorder", b"little"),
        ("data/weights/model_weights_config.json", br#"{"config": {}}"#),
        ("data/constants/model_constants_config.json", br#"{"config": {}}"#),
        ("models/model.json", json.as_bytes()),
    ] {
        zip.start_file(format!("many/{entry}"), stored).expect("start");
        zip.write_all(bytes).expect("write");
    }
    zip.finish().expect("finish");
    drop(json);
    let out = dir.path().join("many.onnx");
    let (o, took) = bounded(&["export".into(), archive.into(), "-o".into(), out.clone().into(), "--quiet".into()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.exists());
    assert!(took < std::time::Duration::from_secs(20), "{n} inputs took {took:?}");
}

/// The data file beside a model is torch.onnx's `<file>.data` (issue 38: it was
/// `<file>.<16 hex digits>.data`), the model names it, and an inline save over the model removes it.
#[test]
fn external_data_goes_to_the_model_s_name_plus_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("c.onnx");
    let export = |external: bool| {
        let mut args = vec!["export".into(), fixture("convnet.pt2").into_os_string(), "-o".into(), out.clone().into()];
        if external {
            args.push("--external-data".into());
        }
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a: &std::ffi::OsString| a.as_os_str()).collect();
        let o = fxonnx(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let names = || {
        let mut n: Vec<String> = std::fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        n.sort();
        n
    };
    export(true);
    assert_eq!(names(), ["c.onnx", "c.onnx.data"]);
    let model = std::fs::read(&out).expect("read");
    assert!(model.windows(b"c.onnx.data".len()).any(|w| w == b"c.onnx.data"), "the model names its data file");
    export(true);
    assert_eq!(names(), ["c.onnx", "c.onnx.data"], "a second save replaces the pair");
    export(false);
    assert_eq!(names(), ["c.onnx"], "an inline save removes the data file the old model read");
}

/// An archive whose signature repeats one user input (a kept hostile archive of issue 38: 8,000
/// specs took 5.5-8.7 s of CPU, a millisecond a node, from naming each `x_<k>` by trying every
/// suffix from 1): the export is linear in the specs, 8,000 and 64,000 of them well within bounds.
#[test]
fn duplicated_input_specs_export_in_linear_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let meta = r#"{"dtype":7,"sizes":[{"as_int":4},{"as_int":2}],"requires_grad":false,"device":{"type":"cpu","index":null},"strides":[{"as_int":2},{"as_int":1}],"storage_offset":{"as_int":0},"layout":7}"#;
    for (n, bound) in [(8_000usize, 5u64), (64_000, 20)] {
        let leaf = r#"{"type":null,"context":null,"children_spec":[]}"#;
        let tuple = |k: usize| {
            format!(r#"{{"type":"builtins.tuple","context":"null","children_spec":[{}]}}"#, vec![leaf; k].join(","))
        };
        let in_spec = format!(
            r#"[1,{{"type":"builtins.tuple","context":"null","children_spec":[{},{{"type":"builtins.dict","context":"[]","children_spec":[]}}]}}]"#,
            tuple(n)
        );
        let repeat = |s: &str| vec![s; n].join(",");
        let json = format!(
            r#"{{"graph_module":{{"graph":{{"inputs":[{}],"outputs":[{{"as_tensor":{{"name":"y"}}}}],"nodes":[{{"target":"torch.ops.aten.relu.default","inputs":[{{"name":"self","arg":{{"as_tensor":{{"name":"x"}}}},"kind":1}}],"outputs":[{{"as_tensor":{{"name":"y"}}}}],"metadata":{{}},"is_hop_single_tensor_return":null,"name":"y"}}],"tensor_values":{{"x":{meta},"y":{meta}}},"sym_int_values":{{}},"sym_bool_values":{{}},"is_single_tensor_return":false,"custom_obj_values":{{}},"sym_float_values":{{}}}},"signature":{{"input_specs":[{}],"output_specs":[{{"user_output":{{"arg":{{"as_tensor":{{"name":"y"}}}}}}}}]}},"module_call_graph":[{{"fqn":"","signature":{{"inputs":[],"outputs":[],"in_spec":{},"out_spec":{},"forward_arg_names":null}}}}],"metadata":{{}},"treespec_namedtuple_fields":{{}}}},"opset_version":{{"aten":10}},"range_constraints":{{}},"schema_version":{{"major":8,"minor":20}},"verifiers":["TRAINING"],"torch_version":"2.15.0","guards_code":[]}}"#,
            repeat(r#"{"as_tensor":{"name":"x"}}"#),
            repeat(r#"{"user_input":{"arg":{"as_tensor":{"name":"x"}}}}"#),
            serde_json::to_string(&in_spec).expect("json"),
            serde_json::to_string(&format!("[1,{}]", tuple(1))).expect("json"),
        );
        let archive = dir.path().join(format!("dup{n}.pt2"));
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive).expect("create"));
        let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for (entry, bytes) in [
            ("archive_format", b"pt2".as_slice()),
            ("archive_version", b"0"),
            (".data/version", b"6\n"),
            ("byteorder", b"little"),
            ("data/weights/model_weights_config.json", br#"{"config": {}}"#),
            ("data/constants/model_constants_config.json", br#"{"config": {}}"#),
            ("models/model.json", json.as_bytes()),
        ] {
            zip.start_file(format!("dup/{entry}"), stored).expect("start");
            zip.write_all(bytes).expect("write");
        }
        zip.finish().expect("finish");
        let out = dir.path().join(format!("dup{n}.onnx"));
        let (o, took) = bounded(&["export".into(), archive.into(), "-o".into(), out.clone().into(), "--quiet".into()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(took < std::time::Duration::from_secs(bound), "{n} duplicated specs took {took:?}");
    }
}

/// Where an `ExportOptions` field reaches users: a Python keyword of `fxonnx.export`, a flag of
/// `fxonnx export`, or absent from that surface on purpose, for the reason given.
enum Surface {
    Named(&'static str),
    Absent(&'static str),
}
use Surface::{Absent, Named};

/// Every `ExportOptions` field (src/export.rs): `(field, Python keyword, CLI flag)`.
const OPTION_SURFACES: &[(&str, Surface, Surface)] = &[
    ("model_name", Absent("the package exports the program it is given, as torch.onnx does"), Named("--model")),
    ("opset_version", Named("opset_version"), Named("--opset")),
    ("input_names", Named("input_names"), Named("--input-names")),
    ("output_names", Named("output_names"), Named("--output-names")),
    ("tree_names", Named("tree_names"), Named("--tree-names")),
    ("dim_names", Named("dim_names"), Named("--dim")),
    ("external_data", Named("external_data"), Named("--external-data")),
    ("include_initializers", Named("export_params"), Named("--no-weights")),
    (
        "custom_translation_table",
        Named("custom_translation_table"),
        Absent("a table is code (Rust built into a binary, as examples/custom_table does, or Python functions)"),
    ),
    ("report", Named("report"), Named("--report")),
    (
        "report_html",
        Absent("torch.onnx's report is markdown; HTML is the CLI's rendering of it"),
        Named("--report-html"),
    ),
    ("artifacts_dir", Named("artifacts_dir"), Named("--artifacts-dir")),
    ("optimize", Named("optimize"), Named("--no-optimize")),
    ("progress", Absent("a Rust callback; the package prints its own (verbose)"), Named("--quiet")),
    (
        "interrupt",
        Absent("the extension sets it itself, so that Ctrl-C stops an export"),
        Absent("the CLI process stops on a signal"),
    ),
    (
        "debug_outputs",
        Absent("node-by-node comparison with torch (benches/node_diff.py) drives the CLI"),
        Named("--debug-outputs"),
    ),
    ("max_memory", Named("max_memory"), Named("--max-memory")),
    ("module_functions", Named("functions"), Named("--functions")),
    (
        "force",
        Absent("the package's saves keep the refusals (a symbolic link, the input): no keyword overrides them"),
        Named("--force"),
    ),
    (
        "mutations_as_outputs",
        Named("mutations_as_outputs"),
        Absent("the CLI writes mutated state as graph outputs, the form an archive's program has"),
    ),
    ("target", Named("target"), Named("--target")),
    ("weight_quantization", Named("quantize"), Named("--quantize")),
];

/// Every `ExportOptions` field is a Python keyword and a CLI flag, or is named above as absent from
/// one with its reason: a new option fails here until it reaches both or says why not.
#[test]
fn every_export_option_is_a_python_keyword_and_a_cli_flag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let export = std::fs::read_to_string(root.join("src/export.rs")).expect("src/export.rs");
    let body = export.split("pub struct ExportOptions {").nth(1).and_then(|s| s.split("\n}").next()).expect("struct");
    let fields: Vec<&str> =
        body.lines().filter_map(|l| l.trim().strip_prefix("pub ")?.split_once(':').map(|(name, _)| name)).collect();
    let listed: Vec<&str> = OPTION_SURFACES.iter().map(|(f, _, _)| *f).collect();
    assert_eq!(fields, listed, "ExportOptions' fields and OPTION_SURFACES differ");

    let api = std::fs::read_to_string(root.join("python/fxonnx/_api.py")).expect("_api.py");
    let signature = api.split("\ndef export(").nth(1).and_then(|s| s.split(") -> ").next()).expect("def export");
    let keywords: Vec<&str> =
        signature.lines().filter_map(|l| l.trim().split_once(':').map(|(k, _)| k.trim_start_matches('*'))).collect();
    let help = fxonnx(&["export".as_ref(), "--help".as_ref()]);
    let help = String::from_utf8_lossy(&help.stdout);
    for (field, python, cli) in OPTION_SURFACES {
        match python {
            Named(k) => assert!(keywords.contains(k), "{field}: fxonnx.export has no keyword {k}"),
            Absent(why) => assert!(!why.is_empty(), "{field}: absent from Python without a reason"),
        }
        match cli {
            Named(flag) => assert!(
                help.lines().any(|l| l.split([' ', ',', '=', '[', '<']).any(|w| w == *flag)),
                "{field}: fxonnx export has no flag {flag}"
            ),
            Absent(why) => assert!(!why.is_empty(), "{field}: absent from the CLI without a reason"),
        }
    }
}
