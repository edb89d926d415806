//! Translations as data: one ATen call, written into a one-node archive (`support/pt2_writer.rs`),
//! exported without the optimizer, and the graph compared with the ONNX it must emit, in the text
//! form the optimizer's tests use (`onnx/testing.rs`: `fxonnx inspect`'s, with the constants'
//! values). Each test reads as the call and the nodes its translation writes; the numerics of the
//! same translations are checked against torch by the fixtures (`tests/fixtures.rs`).
//! `UPDATE_EXPECT=FILE` records the actual graphs instead of failing.

#[path = "support/pt2_writer.rs"]
mod pt2_writer;

use pt2_writer::{write_archive, Dim, GraphWriter, Meta, Program, A, LONG};

/// One call of `target` on user inputs (each an FX placeholder of its own type).
struct OneOp<'a> {
    target: &'a str,
    inputs: Vec<(&'a str, Meta)>,
    /// The call's arguments; `A::T(name)` names one of `inputs`.
    args: Vec<(&'a str, A<'a>)>,
    out: Meta,
}

impl Program for OneOp<'_> {
    fn build(&self, g: &mut GraphWriter) -> std::io::Result<String> {
        for (name, meta) in &self.inputs {
            g.user_input(name, meta.clone());
        }
        let args: Vec<(&str, A)> = self.args.iter().map(|(n, a)| (*n, copy(a))).collect();
        g.op(&format!("torch.ops.{}", self.target), &args, self.out.clone(), "y = op(x)")
    }
}

fn copy<'a>(a: &A<'a>) -> A<'a> {
    match a {
        A::T(n) => A::T(n),
        A::Ints(v) => A::Ints(v.clone()),
        A::Int(i) => A::Int(*i),
        A::Float(x) => A::Float(*x),
        A::Bool(b) => A::Bool(*b),
        A::Str(s) => A::Str(s),
        A::SymInts(v) => A::SymInts(v.clone()),
        A::None => A::None,
    }
}

/// `op` written into an archive and exported with `options`.
fn export_one(op: &OneOp, options: &fxonnx::ExportOptions) -> Result<fxonnx::OnnxProgram, fxonnx::Error> {
    let dir = std::env::temp_dir().join(format!("fxonnx-translation-text-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    // Tests run in parallel, some on the same target: one file each.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{}_{n}.pt2", op.target.replace('.', "_")));
    write_archive(&path, op, None).expect("write the archive");
    let result = fxonnx::export(&path, options);
    let _ = std::fs::remove_file(&path);
    result
}

/// The graph `op` translates to (unoptimized).
fn lowered(op: &OneOp) -> String {
    let options = fxonnx::ExportOptions { optimize: false, ..Default::default() };
    let program = export_one(op, &options).unwrap_or_else(|e| panic!("{}: {e}", op.target));
    fxonnx::internals::testing::print(program.ir(), &Default::default())
}

#[track_caller]
fn check(op: OneOp, expected: &str) {
    fxonnx::internals::testing::compare(&lowered(&op), expected);
}

fn f32(sizes: &[Dim]) -> Meta {
    Meta::f32(sizes)
}

use Dim::{Batch as B, N};

#[test]
fn leaky_relu_selects_x_or_its_scaled_copy() {
    check(
        OneOp {
            target: "aten.leaky_relu.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("negative_slope", A::Float(0.2))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] leaky_relu)
           <float _0 = {0}, float _1 = {0.2}>
           {
             _2 = Mul (x, _1)
             _3 = Greater (x, _0)
             leaky_relu = Where (_3, x, _2)
           }"#,
    );
}

#[test]
fn view_reads_the_batch_from_the_input() {
    check(
        OneOp {
            target: "aten.view.default",
            inputs: vec![("x", f32(&[B, N(6)]))],
            args: vec![("self", A::T("x")), ("size", A::SymInts(vec![Ok(-1), Ok(2), Ok(3)]))],
            out: f32(&[B, N(2), N(3)]),
        },
        r#"(float[s77,6] x) => (float[s77,2,3] view)
           <int64[3] _0 = {-1, 2, 3}>
           {
             view = Reshape (x, _0)
           }"#,
    );
}

#[test]
fn embedding_dense_backward_adds_each_row_gradient_into_its_row() {
    check(
        OneOp {
            target: "aten.embedding_dense_backward.default",
            inputs: vec![("g", f32(&[B, N(5), N(4)])), ("idx", Meta::new(LONG, &[B, N(5)]))],
            args: vec![
                ("grad_output", A::T("g")),
                ("indices", A::T("idx")),
                ("num_weights", A::Int(10)),
                ("padding_idx", A::Int(2)),
                ("scale_grad_by_freq", A::Bool(false)),
            ],
            out: f32(&[N(10), N(4)]),
        },
        r#"(float[s77,5,4] g, int64[s77,5] idx) => (float[10,4] embedding_dense_backward)
           <int64[1] _0 = {-1}, int64 _1 = {2}, float _2 = {0}, int64[1] _3 = {10}>
           {
             _4 = Reshape (idx, _0)
             _5 = Shape <start = -1> (g)
             _6 = Concat <axis = 0> (_0, _5)
             _7 = Reshape (g, _6)
             _8 = Equal (_4, _1)
             _9 = Unsqueeze (_8, _0)
             _10 = Where (_9, _2, _7)
             _11 = Concat <axis = 0> (_3, _5)
             _12 = Expand (_2, _11)
             _13 = Unsqueeze (_4, _0)
             embedding_dense_backward = ScatterND <reduction = "add"> (_12, _13, _10)
           }"#,
    );
}

#[test]
fn adaptive_avg_pool2d_backward_spreads_each_axis_by_a_matrix() {
    check(
        OneOp {
            target: "aten._adaptive_avg_pool2d_backward.default",
            inputs: vec![("g", f32(&[B, N(2), N(2), N(1)])), ("x", f32(&[B, N(2), N(3), N(2)]))],
            args: vec![("grad_output", A::T("g")), ("self", A::T("x"))],
            out: f32(&[B, N(2), N(3), N(2)]),
        },
        r#"(float[s77,2,2,1] g, float[s77,2,3,2] x) => (float[s77,2,3,2] _adaptive_avg_pool2d_backward)
           <float[2,3] _0 = {0.5, 0.5, 0, 0, 0.5, 0.5}, float[1,2] _1 = {0.5, 0.5}>
           {
             _2 = Transpose <perm = [0, 1, 3, 2]> (g)
             _3 = MatMul (_2, _0)
             _4 = Transpose <perm = [0, 1, 3, 2]> (_3)
             _adaptive_avg_pool2d_backward = MatMul (_4, _1)
           }"#,
    );
}

#[test]
fn avg_pool2d_in_ceil_mode_writes_the_windows_torch_keeps() {
    // Width 3, kernel 2, stride 2, padding 1: ONNX's ceil_mode keeps a third window that starts
    // in the padding, torch drops it; the end padding is grown instead, and the last window's
    // divisor corrected (torch counts the padding it has, not the grown part).
    check(
        OneOp {
            target: "aten.avg_pool2d.default",
            inputs: vec![("x", f32(&[B, N(1), N(4), N(3)]))],
            args: vec![
                ("self", A::T("x")),
                ("kernel_size", A::Ints(vec![3, 2])),
                ("stride", A::Ints(vec![2, 2])),
                ("padding", A::Ints(vec![1, 1])),
                ("ceil_mode", A::Bool(true)),
            ],
            out: f32(&[B, N(1), N(3), N(2)]),
        },
        r#"(float[s77,1,4,3] x) => (float[s77,1,3,2] avg_pool2d)
           <float[3,2] _0 = {1, 1, 1, 1, 1.5, 1.5}>
           {
             _1 = AveragePool <kernel_shape = [3, 2], strides = [2, 2], pads = [1, 1, 2, 0], ceil_mode = 0, count_include_pad = 1> (x)
             avg_pool2d = Mul (_1, _0)
           }"#,
    );
}

/// A translation that writes a size of the example where the program records a symbolic one
/// would give a model right at the example's size only (issue 31: HaloNet): the export check
/// refuses the node. Here the program itself fixes the view's size to the example batch (2) and
/// records the batch symbol for its output, as a translation that baked it would leave it.
#[test]
fn a_size_fixed_where_the_program_records_a_symbol_is_refused() {
    let op = OneOp {
        target: "aten.view.default",
        inputs: vec![("x", f32(&[B, N(6)]))],
        args: vec![("self", A::T("x")), ("size", A::SymInts(vec![Ok(2), Ok(2), Ok(3)]))],
        out: f32(&[B, N(2), N(3)]),
    };
    let text = export_one(&op, &Default::default()).err().expect("the export must fail").to_string();
    assert!(text.contains("node `view`") && text.contains("fixed to one size"), "{text}");
}
