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
    /// The call's arguments; `A::T(name)` names one of `inputs`, `A::SymInt(name)` a SymInt
    /// `sym_size` reads from the batch dimension of input `name`.
    args: Vec<(&'a str, A<'a>)>,
    out: Meta,
}

impl Program for OneOp<'_> {
    fn build(&self, g: &mut GraphWriter) -> std::io::Result<String> {
        let args = inputs_and_args(g, &self.inputs, &self.args)?;
        let args: Vec<(&str, A)> = args.iter().map(|(n, a)| (*n, copy(a))).collect();
        g.op(&format!("torch.ops.{}", self.target), &args, self.out.clone(), "y = op(x)")
    }
}

/// One call of `target` returning a list of tensors (`split`'s), each a user output.
struct ListOp<'a> {
    target: &'a str,
    inputs: Vec<(&'a str, Meta)>,
    args: Vec<(&'a str, A<'a>)>,
    outs: Vec<Meta>,
}

impl Program for ListOp<'_> {
    fn build(&self, g: &mut GraphWriter) -> std::io::Result<String> {
        let args = inputs_and_args(g, &self.inputs, &self.args)?;
        let args: Vec<(&str, A)> = args.iter().map(|(n, a)| (*n, copy(a))).collect();
        let names = g.op_list(&format!("torch.ops.{}", self.target), &args, &self.outs, "y = op(x)")?;
        for n in &names[1..] {
            g.also_output(n);
        }
        Ok(names[0].clone())
    }
}

/// The user inputs written, and the arguments with each `A::SymInt(input)` read by a `sym_size`
/// node from that input's batch dimension.
fn inputs_and_args<'a>(
    g: &mut GraphWriter,
    inputs: &[(&'a str, Meta)],
    args: &[(&'a str, A<'a>)],
) -> std::io::Result<Vec<(&'a str, A<'static>)>> {
    for (name, meta) in inputs {
        g.user_input(name, meta.clone());
    }
    let mut out = Vec::new();
    for (n, a) in args {
        let a = match a {
            A::SymInt(x) => A::SymIntNamed(Box::leak(g.sym_size(x, 0)?.into_boxed_str())),
            a => owned(a),
        };
        out.push((*n, a));
    }
    Ok(out)
}

fn copy<'a>(a: &A<'a>) -> A<'a> {
    match a {
        A::SymInt(n) => A::SymInt(n),
        A::SymIntNamed(n) => A::SymIntNamed(n),
        A::ScalarType(t) => A::ScalarType(*t),
        A::T(n) => A::T(n),
        A::Ints(v) => A::Ints(v.clone()),
        A::Int(i) => A::Int(*i),
        A::Float(x) => A::Float(*x),
        A::Bool(b) => A::Bool(*b),
        A::Str(s) => A::Str(s),
        A::SymInts(v) => A::SymInts(v.clone()),
        A::Ts(v) => A::Ts(v.clone()),
        A::None => A::None,
    }
}

/// An argument for a program of its own (names leaked: a test writes a few).
fn owned(a: &A) -> A<'static> {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    match a {
        A::T(n) => A::T(leak(n)),
        A::Ints(v) => A::Ints(v.clone()),
        A::Int(i) => A::Int(*i),
        A::Float(x) => A::Float(*x),
        A::Bool(b) => A::Bool(*b),
        A::Str(s) => A::Str(leak(s)),
        A::SymInts(v) => A::SymInts(v.iter().map(|r| r.map_err(leak)).collect()),
        A::Ts(v) => A::Ts(v.iter().map(|n| leak(n)).collect()),
        A::SymInt(n) => A::SymInt(leak(n)),
        A::SymIntNamed(n) => A::SymIntNamed(leak(n)),
        A::ScalarType(t) => A::ScalarType(*t),
        A::None => A::None,
    }
}

/// `op` written into an archive and exported with `options`.
fn export_one(op: &OneOp, options: &fxonnx::ExportOptions) -> Result<fxonnx::OnnxProgram, fxonnx::Error> {
    export_program(op.target, op, options)
}

fn export_program(
    target: &str,
    op: &dyn Program,
    options: &fxonnx::ExportOptions,
) -> Result<fxonnx::OnnxProgram, fxonnx::Error> {
    let dir = std::env::temp_dir().join(format!("fxonnx-translation-text-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    // Tests run in parallel, some on the same target: one file each.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{}_{n}.pt2", target.replace('.', "_")));
    write_archive(&path, op, None).expect("write the archive");
    let result = fxonnx::export(&path, options);
    let _ = std::fs::remove_file(&path);
    result
}

/// The graph `op` translates to (unoptimized), at `opset` (else the default).
fn lowered(target: &str, op: &dyn Program, opset: Option<i64>) -> String {
    let options = fxonnx::ExportOptions { optimize: false, opset_version: opset, ..Default::default() };
    let program = export_program(target, op, &options).unwrap_or_else(|e| panic!("{target}: {e}"));
    fxonnx::internals::testing::print(program.ir(), &Default::default())
}

#[track_caller]
fn check(op: OneOp, expected: &str) {
    fxonnx::internals::testing::compare(&lowered(op.target, &op, None), expected);
}

#[track_caller]
fn check_at(opset: i64, op: OneOp, expected: &str) {
    fxonnx::internals::testing::compare(&lowered(op.target, &op, Some(opset)), expected);
}

#[track_caller]
fn check_list(op: ListOp, expected: &str) {
    fxonnx::internals::testing::compare(&lowered(op.target, &op, None), expected);
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

#[test]
fn tensor_split_at_indices_slices_between_the_points() {
    // The points are Slice bounds as they are: Slice clamps them and counts negative ones from
    // the end as torch's slice does, whatever the size along the axis.
    check_list(
        ListOp {
            target: "aten.tensor_split.indices",
            inputs: vec![("x", f32(&[B, N(7)]))],
            args: vec![("self", A::T("x")), ("indices", A::SymInts(vec![Ok(1), Ok(-2)])), ("dim", A::Int(-1))],
            outs: vec![f32(&[B, N(1)]), f32(&[B, N(4)]), f32(&[B, N(2)])],
        },
        r#"(float[s77,7] x) => (float[s77,1] getitem, float[s77,4] getitem_1, float[s77,2] getitem_2)
           <int64[1] _0 = {1}, int64[1] _1 = {0}, int64[1] _2 = {-2},
            int64[1] _3 = {9223372036854775807}>
           {
             getitem = Slice (x, _1, _0, _0)
             getitem_1 = Slice (x, _0, _2, _0)
             getitem_2 = Slice (x, _2, _3, _0)
           }"#,
    );
}

#[test]
fn tensor_split_into_sections_of_a_dynamic_axis_computes_the_sizes() {
    // n/k each, the first n%k one more: Split sizes from the axis' size at run time. (The
    // output types are the example batch's, 2 in three: the writer has no expressions of it.)
    check_list(
        ListOp {
            target: "aten.tensor_split.sections",
            inputs: vec![("x", f32(&[B, N(7)]))],
            args: vec![("self", A::T("x")), ("sections", A::Int(3)), ("dim", A::Int(0))],
            outs: vec![f32(&[N(1), N(7)]), f32(&[N(1), N(7)]), f32(&[N(0), N(7)])],
        },
        r#"(float[s77,7] x) => (float[1,7] getitem, float[1,7] getitem_1, float[0,7] getitem_2)
           <int64[1] _0 = {3}, int64[3] _1 = {0, 1, 2}>
           {
             _2 = Shape <start = 0, end = 1> (x)
             _3 = Div (_2, _0)
             _4 = Mod (_2, _0)
             _5 = Less (_1, _4)
             _6 = Cast <to = 7> (_5)
             _7 = Add (_3, _6)
             getitem, getitem_1, getitem_2 = Split <axis = 0> (x, _7)
           }"#,
    );
}

#[test]
fn tensor_split_into_sections_of_a_static_axis_has_constant_sizes() {
    check_list(
        ListOp {
            target: "aten.tensor_split.sections",
            inputs: vec![("x", f32(&[B, N(7)]))],
            args: vec![("self", A::T("x")), ("sections", A::Int(3)), ("dim", A::Int(1))],
            outs: vec![f32(&[B, N(3)]), f32(&[B, N(2)]), f32(&[B, N(2)])],
        },
        r#"(float[s77,7] x) => (float[s77,3] getitem, float[s77,2] getitem_1, float[s77,2] getitem_2)
           <int64[3] _0 = {3, 2, 2}>
           {
             getitem, getitem_1, getitem_2 = Split <axis = 1> (x, _0)
           }"#,
    );
}

fn grid_sampler_of_a_volume() -> OneOp<'static> {
    OneOp {
        target: "aten.grid_sampler.default",
        inputs: vec![("x", f32(&[B, N(3), N(4), N(5), N(6)])), ("grid", f32(&[B, N(2), N(3), N(4), N(3)]))],
        args: vec![
            ("input", A::T("x")),
            ("grid", A::T("grid")),
            ("interpolation_mode", A::Int(0)),
            ("padding_mode", A::Int(2)),
            ("align_corners", A::Bool(true)),
        ],
        out: f32(&[B, N(3), N(2), N(3), N(4)]),
    }
}

#[test]
fn grid_sampler_of_a_volume_is_one_grid_sample_from_opset_20() {
    // torch's grid layout ([N, D, H, W, 3], x first) is GridSample's.
    check(
        grid_sampler_of_a_volume(),
        r#"(float[s77,3,4,5,6] x, float[s77,2,3,4,3] grid) => (float[s77,3,2,3,4] grid_sampler)
           {
             grid_sampler = GridSample <mode = "linear", padding_mode = "reflection", align_corners = 1> (x, grid)
           }"#,
    );
}

#[test]
fn grid_sampler_of_a_volume_below_opset_20_names_the_opset_that_has_it() {
    let options = fxonnx::ExportOptions { opset_version: Some(18), ..Default::default() };
    let op = grid_sampler_of_a_volume();
    let text = export_one(&op, &options).err().expect("the export must fail").to_string();
    assert!(text.contains("GridSample of an input that is not 4-D needs opset 20 or newer"), "{text}");
}

#[test]
fn baddbmm_with_a_symbolic_beta_ignores_the_input_where_beta_is_zero() {
    // beta = x.shape[0]: a value, not a number; torch's rule that beta == 0 ignores the input
    // (NaN in it included) becomes a Where.
    check(
        OneOp {
            target: "aten.baddbmm.default",
            inputs: vec![("x", f32(&[B, N(3), N(5)])), ("a", f32(&[B, N(3), N(4)])), ("b", f32(&[B, N(4), N(5)]))],
            args: vec![
                ("self", A::T("x")),
                ("batch1", A::T("a")),
                ("batch2", A::T("b")),
                ("beta", A::SymInt("x")),
                ("alpha", A::Float(0.5)),
            ],
            out: f32(&[B, N(3), N(5)]),
        },
        r#"(float[s77,3,5] x, float[s77,3,4] a, float[s77,4,5] b) => (float[s77,3,5] baddbmm)
           <int64[1] _0 = {0}, float _1 = {0.5}, float _2 = {0}>
           {
             _3 = Shape <start = 0, end = 1> (x)
             sym_size_int = Squeeze (_3, _0)
             _4 = MatMul (a, b)
             _5 = Mul (_4, _1)
             _6 = Cast <to = 1> (sym_size_int)
             _7 = Mul (x, _6)
             _8 = Equal (_6, _2)
             _9 = Where (_8, _2, _7)
             baddbmm = Add (_9, _5)
           }"#,
    );
}

#[test]
fn tensordot_reads_a_symbolic_kept_size_from_the_input() {
    // [batch, 4·5] @ [4·5, 6]: the batch is the matrix's rows and the result's first size, read
    // from `x`; the static sizes stay constants.
    check(
        OneOp {
            target: "aten.tensordot.default",
            inputs: vec![("x", f32(&[B, N(4), N(5)])), ("y", f32(&[N(4), N(5), N(6)]))],
            args: vec![
                ("self", A::T("x")),
                ("other", A::T("y")),
                ("dims_self", A::Ints(vec![1, 2])),
                ("dims_other", A::Ints(vec![0, 1])),
            ],
            out: f32(&[B, N(6)]),
        },
        r#"(float[s77,4,5] x, float[4,5,6] y) => (float[s77,6] tensordot)
           <int64[1] _0 = {20}, int64[2] _1 = {20, 6}, int64[1] _2 = {6}>
           {
             _3 = Shape <start = 0, end = 1> (x)
             _4 = Concat <axis = 0> (_3, _0)
             _5 = Reshape (x, _4)
             _6 = Reshape (y, _1)
             _7 = MatMul (_5, _6)
             _8 = Shape <start = 0, end = 1> (x)
             _9 = Concat <axis = 0> (_8, _2)
             tensordot = Reshape (_7, _9)
           }"#,
    );
}

/// Schema ScalarType ids the writer has no constant for.
const HALF: i64 = 6;

#[test]
fn nan_to_num_of_float16_below_opset_20_tests_for_infinity_in_float32() {
    // IsInf takes float16 from opset 20; float32 holds every float16, infinities included.
    check_at(
        18,
        OneOp {
            target: "aten.nan_to_num.default",
            inputs: vec![("x", Meta::new(HALF, &[B, N(3)]))],
            args: vec![("self", A::T("x"))],
            out: Meta::new(HALF, &[B, N(3)]),
        },
        r#"(float16[s77,3] x) => (float16[s77,3] nan_to_num)
           <float16 _0 = {0}, float16 _1 = {65504}, float16 _2 = {-65504}>
           {
             _3 = IsNaN (x)
             _4 = Cast <to = 1> (x)
             _5 = IsInf <detect_negative = 0> (_4)
             _6 = Cast <to = 1> (x)
             _7 = IsInf <detect_positive = 0> (_6)
             _8 = Where (_3, _0, x)
             _9 = Where (_5, _1, _8)
             nan_to_num = Where (_7, _2, _9)
           }"#,
    );
}

/// `x.reshape(-1).copy_(y)`, then `x + 1`: the reshape of a contiguous tensor is a view of it.
struct CopyIntoReshape;

impl Program for CopyIntoReshape {
    fn build(&self, g: &mut GraphWriter) -> std::io::Result<String> {
        g.user_input("x", f32(&[N(2), N(3)]));
        g.user_input("y", f32(&[N(6)]));
        let r = g.op(
            "torch.ops.aten.reshape.default",
            &[("self", A::T("x")), ("shape", A::SymInts(vec![Ok(-1)]))],
            f32(&[N(6)]),
            "r = x.reshape(-1)",
        )?;
        g.op("torch.ops.aten.copy_.default", &[("self", A::T(&r)), ("src", A::T("y"))], f32(&[N(6)]), "r.copy_(y)")?;
        g.op("torch.ops.aten.add.Tensor", &[("self", A::T("x")), ("other", A::Int(1))], f32(&[N(2), N(3)]), "x + 1")
    }
}

#[test]
fn copy_into_a_reshape_of_a_contiguous_tensor_is_written_back_into_it() {
    // The reshape's input is recorded contiguous (strides 3, 1): torch's reshape is a view then,
    // and the copy reaches `x`, which `add` reads: y scattered into x's positions, in its shape.
    // (The user input `x` changed, so it is also an output.)
    fxonnx::internals::testing::compare(
        &lowered("copy_into_reshape", &CopyIntoReshape, None),
        r#"(float[2,3] x, float[6] y) => (float[2,3] add, float[2,3] user_input_mutation_x)
       <int64[1] _0 = {-1}, int64[2,3] _1 = {0, 1, 2, 3, 4, 5}, float _2 = {1}>
       {
         reshape = Reshape (x, _0)
         _3 = Shape (reshape)
         copy_ = Expand (y, _3)
         _4 = Shape (x)
         _5 = Reshape (_1, _0)
         _6 = Shape (_5)
         _7 = Expand (copy_, _6)
         _8 = Reshape (_7, _0)
         _9 = Reshape (_5, _0)
         _10 = Reshape (x, _0)
         _11 = ScatterElements <axis = 0> (_10, _9, _8)
         user_input_mutation_x = Reshape (_11, _4)
         add = Add (user_input_mutation_x, _2)
       }"#,
    );
}

#[test]
fn hann_window_of_a_symbolic_length_computes_the_cosines_in_the_graph() {
    // The length is known at run time only: i / n from a Range, one element being 1.
    check(
        OneOp {
            target: "aten.hann_window.default",
            inputs: vec![("x", f32(&[B]))],
            args: vec![("window_length", A::SymInt("x"))],
            out: f32(&[B]),
        },
        r#"(float[s77] x) => (float[s77] hann_window)
           <int64[1] _0 = {0}, int64 _1 = {0}, int64 _2 = {1}, double _3 = {6.283185307179586},
            double _4 = {0.5}, double _5 = {1}>
           {
             _6 = Shape <start = 0, end = 1> (x)
             sym_size_int = Squeeze (_6, _0)
             _7 = Range (_1, sym_size_int, _2)
             _8 = Cast <to = 11> (_7)
             _9 = Cast <to = 11> (sym_size_int)
             _10 = Div (_8, _9)
             _11 = Mul (_10, _3)
             _12 = Cos (_11)
             _13 = Mul (_12, _4)
             _14 = Sub (_4, _13)
             _15 = Equal (sym_size_int, _2)
             _16 = Where (_15, _5, _14)
             hann_window = Cast <to = 1> (_16)
           }"#,
    );
}

#[test]
fn linspace_of_a_symbolic_count_computes_its_step_from_it() {
    check(
        OneOp {
            target: "aten.linspace.default",
            inputs: vec![("x", f32(&[B]))],
            args: vec![("start", A::Float(0.0)), ("end", A::Float(1.0)), ("steps", A::SymInt("x"))],
            out: f32(&[B]),
        },
        r#"(float[s77] x) => (float[s77] linspace)
           <int64[1] _0 = {0}, float _1 = {0}, float _2 = {1}, int64 _3 = {0}, int64 _4 = {1},
            int64 _5 = {2}>
           {
             _6 = Shape <start = 0, end = 1> (x)
             sym_size_int = Squeeze (_6, _0)
             _7 = Sub (sym_size_int, _4)
             _8 = Cast <to = 1> (_7)
             _9 = Max (_7, _4)
             _10 = Cast <to = 1> (_9)
             _11 = Div (sym_size_int, _5)
             _12 = Max (_11, _4)
             _13 = Range (_3, sym_size_int, _4)
             _14 = Cast <to = 1> (_13)
             _15 = Sub (_2, _1)
             _16 = Div (_15, _10)
             _17 = Mul (_14, _16)
             _18 = Add (_1, _17)
             _19 = Sub (_8, _14)
             _20 = Mul (_19, _16)
             _21 = Sub (_2, _20)
             _22 = Less (_13, _12)
             linspace = Where (_22, _18, _21)
           }"#,
    );
}

#[test]
fn one_hot_of_a_symbolic_class_count_compares_with_a_range_of_it() {
    check(
        OneOp {
            target: "aten.one_hot.default",
            inputs: vec![("x", Meta::new(LONG, &[N(2)]))],
            args: vec![("self", A::T("x")), ("num_classes", A::SymInt("x"))],
            out: Meta::new(LONG, &[N(2), N(2)]),
        },
        r#"(int64[2] x) => (int64[2,2] one_hot)
           <int64[1] _0 = {0}, int64 _1 = {0}, int64 _2 = {1}, int64[1] _3 = {-1}>
           {
             _4 = Shape <start = 0, end = 1> (x)
             sym_size_int = Squeeze (_4, _0)
             _5 = Range (_1, sym_size_int, _2)
             _6 = Unsqueeze (x, _3)
             _7 = Equal (_6, _5)
             one_hot = Cast <to = 7> (_7)
           }"#,
    );
}

// ------------------------------------------------------------------------------------------ one case per family

/// `bessel`.
#[test]
fn family_bessel_spherical_bessel_j0() {
    check(
        OneOp {
            target: "aten.special_spherical_bessel_j0.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("x", A::T("x"))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] special_spherical_bessel_j0)
           <double _0 = {0.00000000016059043836821613}, double _1 = {-0.00000002505210838544172},
            double _2 = {0.0000027557319223985893}, double _3 = {-0.0001984126984126984},
            double _4 = {0.008333333333333333}, double _5 = {-0.16666666666666666}, double _6 = {1},
            double _7 = {0.5}, double _8 = {0}>
           {
             _9 = Cast <to = 11> (x)
             _10 = Mul (_9, _9)
             _11 = Mul (_10, _0)
             _12 = Add (_1, _11)
             _13 = Mul (_10, _12)
             _14 = Add (_2, _13)
             _15 = Mul (_10, _14)
             _16 = Add (_3, _15)
             _17 = Mul (_10, _16)
             _18 = Add (_4, _17)
             _19 = Mul (_10, _18)
             _20 = Add (_5, _19)
             _21 = Mul (_10, _20)
             _22 = Add (_6, _21)
             _23 = Sin (_9)
             _24 = Div (_23, _9)
             _25 = Abs (_9)
             _26 = Less (_25, _7)
             _27 = Where (_26, _22, _24)
             _28 = IsInf (_9)
             _29 = Where (_28, _8, _27)
             special_spherical_bessel_j0 = Cast <to = 1> (_29)
           }"#,
    );
}

/// `creation`.
#[test]
fn family_creation_zeros_like() {
    check(
        OneOp {
            target: "aten.zeros_like.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x"))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] zeros_like)
           {
             _0 = Shape (x)
             zeros_like = ConstantOfShape <value = <tensor>> (_0)
           }"#,
    );
}

/// `decompositions`.
#[test]
fn family_decompositions_vander() {
    check(
        OneOp {
            target: "aten.linalg_vander.default",
            inputs: vec![("x", f32(&[N(3)]))],
            args: vec![("x", A::T("x")), ("N", A::Int(2))],
            out: f32(&[N(3), N(2)]),
        },
        r#"(float[3] x) => (float[3,2] linalg_vander)
           <int64[1] _0 = {-1}, float _1 = {1}>
           {
             _2 = Unsqueeze (x, _0)
             _3 = Shape (_2)
             _4 = Expand (_1, _3)
             linalg_vander = Concat <axis = -1> (_4, _2)
           }"#,
    );
}

/// `elementwise`.
#[test]
fn family_elementwise_add() {
    check(
        OneOp {
            target: "aten.add.Tensor",
            inputs: vec![("x", f32(&[B, N(3)])), ("y", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("other", A::T("y"))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x, float[s77,3] y) => (float[s77,3] add)
           {
             add = Add (x, y)
           }"#,
    );
}

/// `fft`.
#[test]
fn family_fft_rfft() {
    check(
        OneOp {
            target: "aten._fft_r2c.default",
            inputs: vec![("x", f32(&[B, N(4)]))],
            args: vec![
                ("self", A::T("x")),
                ("dim", A::Ints(vec![1])),
                ("normalization", A::Int(0)),
                ("onesided", A::Bool(true)),
            ],
            out: Meta::new(10, &[B, N(3)]),
        },
        r#"(float[s77,4] x) => (float[s77,3,2] _fft_r2c)
           <int64[1] _0 = {-1}, int64 _1 = {1}>
           {
             _2 = Unsqueeze (x, _0)
             _fft_r2c = DFT <inverse = 0, onesided = 1> (_2, , _1)
           }"#,
    );
}

/// `indexing`.
#[test]
fn family_indexing_index_select() {
    check(
        OneOp {
            target: "aten.index_select.default",
            inputs: vec![("x", f32(&[B, N(3)])), ("i", Meta::new(LONG, &[N(2)]))],
            args: vec![("self", A::T("x")), ("dim", A::Int(1)), ("index", A::T("i"))],
            out: f32(&[B, N(2)]),
        },
        r#"(float[s77,3] x, int64[2] i) => (float[s77,2] index_select)
           <int64[1] _0 = {-1}>
           {
             _1 = Reshape (i, _0)
             index_select = Gather <axis = 1> (x, _1)
           }"#,
    );
}

/// `joins`.
#[test]
fn family_joins_cat() {
    check(
        OneOp {
            target: "aten.cat.default",
            inputs: vec![("x", f32(&[B, N(3)])), ("y", f32(&[B, N(2)]))],
            args: vec![("tensors", A::Ts(vec!["x", "y"])), ("dim", A::Int(1))],
            out: f32(&[B, N(5)]),
        },
        r#"(float[s77,3] x, float[s77,2] y) => (float[s77,5] cat)
           {
             cat = Concat <axis = 1> (x, y)
           }"#,
    );
}

/// `linalg`.
#[test]
fn family_linalg_mm() {
    check(
        OneOp {
            target: "aten.mm.default",
            inputs: vec![("x", f32(&[N(2), N(3)])), ("y", f32(&[N(3), N(4)]))],
            args: vec![("self", A::T("x")), ("mat2", A::T("y"))],
            out: f32(&[N(2), N(4)]),
        },
        r#"(float[2,3] x, float[3,4] y) => (float[2,4] mm)
           {
             mm = MatMul (x, y)
           }"#,
    );
}

/// `loss`.
#[test]
fn family_loss_mse_loss() {
    check(
        OneOp {
            target: "aten.mse_loss.default",
            inputs: vec![("x", f32(&[B, N(3)])), ("t", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("target", A::T("t")), ("reduction", A::Int(1))],
            out: f32(&[]),
        },
        r#"(float[s77,3] x, float[s77,3] t) => (float mse_loss)
           {
             _0 = Sub (x, t)
             _1 = Mul (_0, _0)
             _2 = ReduceSum <keepdims = 0> (_1)
             _3 = Size (_1)
             _4 = Cast <to = 1> (_3)
             mse_loss = Div (_2, _4)
           }"#,
    );
}

/// `math`.
#[test]
fn family_math_log() {
    check(
        OneOp {
            target: "aten.log.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x"))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] log)
           {
             log = Log (x)
           }"#,
    );
}

/// `nn`.
#[test]
fn family_nn_linear() {
    check(
        OneOp {
            target: "aten.linear.default",
            inputs: vec![("x", f32(&[B, N(3)])), ("w", f32(&[N(2), N(3)]))],
            args: vec![("input", A::T("x")), ("weight", A::T("w"))],
            out: f32(&[B, N(2)]),
        },
        r#"(float[s77,3] x, float[2,3] w) => (float[s77,2] linear)
           {
             linear = Gemm <transB = 1> (x, w)
           }"#,
    );
}

/// `padding`.
#[test]
fn family_padding_constant_pad_nd() {
    check(
        OneOp {
            target: "aten.constant_pad_nd.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("pad", A::Ints(vec![1, 2])), ("value", A::Float(0.0))],
            out: f32(&[B, N(6)]),
        },
        r#"(float[s77,3] x) => (float[s77,6] constant_pad_nd)
           <float _0 = {0}, int64[4] _1 = {0, 1, 0, 2}>
           {
             constant_pad_nd = Pad (x, _1, _0)
           }"#,
    );
}

/// `quantized`.
#[test]
fn family_quantized_dequantize_per_tensor() {
    check(
        OneOp {
            target: "quantized_decomposed.dequantize_per_tensor.default",
            inputs: vec![("x", Meta::new(2, &[B, N(3)]))],
            args: vec![
                ("input", A::T("x")),
                ("scale", A::Float(0.5)),
                ("zero_point", A::Int(1)),
                ("quant_min", A::Int(-128)),
                ("quant_max", A::Int(127)),
            ],
            out: f32(&[B, N(3)]),
        },
        r#"(int8[s77,3] x) => (float[s77,3] dequantize_per_tensor)
           <float _0 = {0.5}, int64[0] _1 = {}, int8 _2 = {1}>
           {
             _3 = Reshape (_0, _1)
             _4 = Reshape (_2, _1)
             dequantize_per_tensor = DequantizeLinear (x, _3, _4)
           }"#,
    );
}

/// `random`.
#[test]
fn family_random_rand_like() {
    check(
        OneOp {
            target: "aten.rand_like.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x"))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] rand_like)
           {
             _0 = Shape (x)
             _1 = ConstantOfShape (_0)
             _2 = RandomUniformLike <dtype = 1> (_1)
             rand_like = Cast <to = 1> (_2)
           }"#,
    );
}

/// `reduction`.
#[test]
fn family_reduction_sum() {
    check(
        OneOp {
            target: "aten.sum.dim_IntList",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("dim", A::Ints(vec![1])), ("keepdim", A::Bool(false))],
            out: f32(&[B]),
        },
        r#"(float[s77,3] x) => (float[s77] sum)
           <int64[1] _0 = {1}>
           {
             sum = ReduceSum <keepdims = 0> (x, _0)
           }"#,
    );
}

/// `reorder`.
#[test]
fn family_reorder_flip() {
    check(
        OneOp {
            target: "aten.flip.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("dims", A::Ints(vec![1]))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] flip)
           <int64[1] _0 = {-1}, int64[1] _1 = {-9223372036854775808}, int64[1] _2 = {1}>
           {
             flip = Slice (x, _0, _1, _2, _0)
           }"#,
    );
}

/// `slicing`.
#[test]
fn family_slicing_select() {
    check(
        OneOp {
            target: "aten.select.int",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("dim", A::Int(1)), ("index", A::Int(0))],
            out: f32(&[B]),
        },
        r#"(float[s77,3] x) => (float[s77] select)
           <int64 _0 = {0}>
           {
             select = Gather <axis = 1> (x, _0)
           }"#,
    );
}

/// `sorting`.
#[test]
fn family_sorting_cumsum() {
    check(
        OneOp {
            target: "aten.cumsum.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x")), ("dim", A::Int(1))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] cumsum)
           <int64 _0 = {1}>
           {
             cumsum = CumSum (x, _0)
           }"#,
    );
}

/// `special`.
#[test]
fn family_special_erf() {
    check(
        OneOp {
            target: "aten.erf.default",
            inputs: vec![("x", f32(&[B, N(3)]))],
            args: vec![("self", A::T("x"))],
            out: f32(&[B, N(3)]),
        },
        r#"(float[s77,3] x) => (float[s77,3] erf)
           {
             erf = Erf (x)
           }"#,
    );
}

/// `statistics`.
#[test]
fn family_statistics_median() {
    check(
        OneOp {
            target: "aten.median.default",
            inputs: vec![("x", f32(&[N(3)]))],
            args: vec![("self", A::T("x"))],
            out: f32(&[]),
        },
        r#"(float[3] x) => (float median)
           <int64[1] _0 = {-1}, float _1 = {inf}, int64 _2 = {1}, int64 _3 = {0}, int64 _4 = {2},
            int64[1] _5 = {0}>
           {
             _6 = Reshape (x, _0)
             _7 = IsNaN (_6)
             _8 = Where (_7, _1, _6)
             _9 = Shape <start = 0, end = 1> (_6)
             _10, _11 = TopK <axis = 0, largest = 0, sorted = 1> (_8, _9)
             _12 = Sub (_9, _2)
             _13 = Max (_12, _3)
             _14 = Div (_13, _4)
             _15 = Gather <axis = 0> (_11, _14)
             _16 = Cast <to = 6> (_7)
             _17 = ReduceMax <keepdims = 1> (_16, _5)
             _18 = Cast <to = 9> (_17)
             _19 = ArgMax <axis = 0, keepdims = 1, select_last_index = 0> (_16)
             _20 = Where (_18, _19, _15)
             _21 = GatherElements <axis = 0> (_6, _20)
             median = Squeeze (_21, _5)
           }"#,
    );
}

/// `torchvision`.
#[test]
fn family_torchvision_nms() {
    check(
        OneOp {
            target: "torchvision.nms.default",
            inputs: vec![("boxes", f32(&[N(4), N(4)])), ("scores", f32(&[N(4)]))],
            args: vec![("dets", A::T("boxes")), ("scores", A::T("scores")), ("iou_threshold", A::Float(0.5))],
            out: Meta::new(LONG, &[N(4)]),
        },
        r#"(float[4,4] boxes, float[4] scores) => (int64[4] nms)
           <int64[1] _0 = {0}, float _1 = {0.5}, int64 _2 = {2}>
           {
             _3 = Unsqueeze (boxes, _0)
             _4 = Unsqueeze (scores, _0)
             _5 = Unsqueeze (_4, _0)
             _6 = Shape <start = 0, end = 1> (boxes)
             _7 = NonMaxSuppression <center_point_box = 0> (_3, _5, _6, _1)
             nms = Gather <axis = 1> (_7, _2)
           }"#,
    );
}

/// `unfolding`.
#[test]
fn family_unfolding_unfold() {
    check(
        OneOp {
            target: "aten.unfold.default",
            inputs: vec![("x", f32(&[B, N(4)]))],
            args: vec![("self", A::T("x")), ("dimension", A::Int(1)), ("size", A::Int(2)), ("step", A::Int(2))],
            out: f32(&[B, N(2), N(2)]),
        },
        r#"(float[s77,4] x) => (float[s77,2,2] unfold)
           <int64[0] _0 = {}, int64 _1 = {2}, int64 _2 = {1}, int64 _3 = {0}, int64[2] _4 = {-1, 1}>
           {
             _5 = Shape <start = 1, end = 2> (x)
             _6 = Reshape (_5, _0)
             _7 = Sub (_6, _1)
             _8 = Add (_7, _2)
             _9 = Range (_3, _8, _1)
             _10 = Reshape (_9, _4)
             _11 = Range (_3, _1, _2)
             _12 = Add (_10, _11)
             unfold = Gather <axis = 1> (x, _12)
           }"#,
    );
}
/// Families without a case here, each with why a one-node archive of user tensors cannot hold
/// their ops (the fixtures check them).
const FAMILIES_WITHOUT_A_TEXT_CASE: &[(&str, &str)] = &[
    ("control_flow", "higher-order ops take subgraphs, which a one-node archive does not hold (fixtures: cond, scan)"),
    ("operator", "Python's operators compute on SymInts of sizes, not on tensors a user passes"),
    ("python", "the ONNX a Python custom translation built comes from Python (python/tests)"),
    ("recurrent", "a layer returns a tuple and takes its weights as a list, which OneOp does not write"),
];

/// Every family (`translations/mod.rs`, `FAMILIES`) has a case in this file, the test a new
/// translation copies (translations/README.md), or is named above with its reason.
#[test]
fn every_family_has_a_text_case() {
    let source = include_str!("translation_text.rs");
    let keys: Vec<String> = source
        .split("target: \"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(|t| fxonnx::internals::target_key(&format!("torch.ops.{t}")))
        .collect();
    let mut problems = Vec::new();
    for (family, register) in fxonnx::internals::FAMILIES {
        let mut table = fxonnx::TranslationTable::new();
        register(&mut table);
        let covered = table.keys().iter().any(|k| keys.iter().any(|key| key == k));
        let excused = FAMILIES_WITHOUT_A_TEXT_CASE.iter().any(|(f, _)| f == family);
        match (covered, excused) {
            (false, false) => problems.push(format!("{family}: no case")),
            (true, true) => problems.push(format!("{family}: has a case and is listed as without one")),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn conv_tbc_is_a_conv_of_the_transposed_input_and_weight() {
    // Time, batch, channels; the weight is [kernel, in, out].
    check(
        OneOp {
            target: "aten.conv_tbc.default",
            inputs: vec![("x", f32(&[B, N(2), N(4)])), ("w", f32(&[N(3), N(4), N(2)])), ("b", f32(&[N(2)]))],
            args: vec![("self", A::T("x")), ("weight", A::T("w")), ("bias", A::T("b")), ("pad", A::Int(1))],
            out: f32(&[B, N(2), N(2)]),
        },
        r#"(float[s77,2,4] x, float[3,4,2] w, float[2] b) => (float[s77,2,2] conv_tbc)
           {
             _0 = Transpose <perm = [1, 2, 0]> (x)
             _1 = Transpose <perm = [2, 1, 0]> (w)
             _2 = Conv <strides = [1], pads = [1, 1], dilations = [1], group = 1> (_0, _1, b)
             conv_tbc = Transpose <perm = [2, 0, 1]> (_2)
           }"#,
    );
}
