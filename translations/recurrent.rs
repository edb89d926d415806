//! Recurrent layers: torch's multi-layer LSTM, GRU and Elman RNN, one ONNX LSTM / GRU / RNN node per
//! layer (both directions in one node); an LSTM with a projection (`proj_size`) as a Loop over time;
//! the single-step cells (`lstm_cell`, `gru_cell`, `rnn_tanh_cell`, `rnn_relu_cell`) as their
//! equations. Packed sequences reach them from the TorchScript front end as fxonnx's
//! `fxonnx::lstm_padded` (and GRU, RNN): the padded batch, time-major, and each sequence's length,
//! which ONNX's layers take as `sequence_lens` (outputs past a length are zeros, as torch pads them).

use crate::translate::prelude::*;
use crate::translations;

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Lstm,
    Gru,
    RnnTanh,
    RnnRelu,
}

impl Cell {
    fn gates(self) -> i64 {
        match self {
            Cell::Lstm => 4,
            Cell::Gru => 3,
            Cell::RnnTanh | Cell::RnnRelu => 1,
        }
    }

    /// ONNX's gate blocks as torch's: LSTM i,f,g,o → i,o,f,c; GRU r,z,n → z,r,h.
    fn onnx_order(self) -> &'static [i64] {
        match self {
            Cell::Lstm => &[0, 3, 1, 2],
            Cell::Gru => &[1, 0, 2],
            Cell::RnnTanh | Cell::RnnRelu => &[0],
        }
    }
}

/// The arguments every recurrent op shares.
struct Rnn {
    cell: Cell,
    has_biases: bool,
    num_layers: i64,
    bidirectional: bool,
    batch_first: bool,
}

/// One layer's weights for one direction, as torch lists them in `params`.
struct Weights {
    w_ih: Value,
    w_hh: Value,
    b_ih: Option<Value>,
    b_hh: Option<Value>,
    w_hr: Option<Value>,
}

/// Dropout between layers is random in training; without it (`train=False`, `dropout=0`, or a
/// single layer, which torch does not drop) the op is deterministic.
fn no_dropout(dropout: f64, train: bool, num_layers: i64) -> OpResult<()> {
    if train && dropout > 0.0 && num_layers > 1 {
        bail!(
            "dropout={dropout} between recurrent layers in training mode is random and not exported; export \
             the model in eval mode (model.eval())"
        );
    }
    Ok(())
}

impl Rnn {
    fn dirs(&self) -> i64 {
        if self.bidirectional {
            2
        } else {
            1
        }
    }

    /// `params` split per layer and direction: w_ih, w_hh, [b_ih, b_hh], [w_hr].
    fn weights(&self, op: &Builder, params: &[Value]) -> OpResult<Vec<Weights>> {
        if self.num_layers < 1 {
            bail!("num_layers must be positive, got {}", self.num_layers);
        }
        let n = (self.num_layers * self.dirs()) as usize;
        if !params.len().is_multiple_of(n) || params.len() < 2 * n {
            bail!("{} weights do not split into {n} layer directions", params.len());
        }
        let per = params.len() / n;
        let biases = if self.has_biases { 2 } else { 0 };
        let projected = match per - 2 {
            b if b == biases => false,
            b if b == biases + 1 && self.cell == Cell::Lstm => true,
            _ => bail!("unexpected {per} weights per layer direction"),
        };
        let mut out = Vec::with_capacity(n);
        for chunk in params.chunks(per) {
            out.push(Weights {
                w_ih: chunk[0],
                w_hh: chunk[1],
                b_ih: self.has_biases.then(|| chunk[2]),
                b_hh: self.has_biases.then(|| chunk[3]),
                w_hr: projected.then(|| chunk[per - 1]),
            });
        }
        for w in &out {
            if op.rank(w.w_ih) != Some(2) || op.rank(w.w_hh) != Some(2) {
                bail!("recurrent weights must be matrices");
            }
        }
        Ok(out)
    }

    /// The hidden size: w_hh has `gates · hidden` rows.
    fn hidden(&self, op: &Builder, w: &Weights) -> OpResult<i64> {
        let s = static_shape(op, w.w_hh, "a recurrent layer")?;
        if s[0] % self.cell.gates() != 0 {
            bail!("w_hh has {} rows, not a multiple of {} gates", s[0], self.cell.gates());
        }
        Ok(s[0] / self.cell.gates())
    }

    /// The whole op: (output, h_n, and c_n for LSTM) from the input and the initial states.
    fn run(
        &self,
        op: &mut Builder,
        input: Value,
        h0: Value,
        c0: Option<Value>,
        params: &[Value],
        lengths: Option<Value>,
    ) -> OpResult<Vec<Value>> {
        if rank_of(op, input)? != 3 {
            bail!("recurrent layers take a 3-D input");
        }
        // ONNX Runtime's recurrent kernels are float32 (GRU and RNN have no others): other float
        // types compute in float32 and are cast back, which rounds differently from torch's 16-bit
        // steps and is less precise than its float64 ones.
        let orig = dtype_of(op, input)?;
        if !orig.is_float() {
            bail!("recurrent layers of {orig:?} are not supported (floating-point inputs only)");
        }
        let t = DType::Float;
        let input = cast(op, input, t);
        let h0 = cast(op, h0, t);
        let c0 = c0.map(|c| cast(op, c, t));
        let params: Vec<Value> = params.iter().map(|&p| cast(op, p, t)).collect();
        let weights = self.weights(op, &params)?;
        let lengths = lengths.map(|l| cast(op, l, DType::Int32));
        // ONNX runs time-major: [T, B, features].
        let mut x = if self.batch_first { op.Transpose(input).perm(&[1, 0, 2]).out() } else { input };
        let d = self.dirs() as usize;
        let (mut hs, mut cs) = (Vec::new(), Vec::new());
        for (l, dirs) in weights.chunks(d).enumerate() {
            let start = (l * d) as i64;
            let h = slice_along(op, h0, 0, start, start + d as i64);
            let c = c0.map(|c0| slice_along(op, c0, 0, start, start + d as i64));
            let (y, hn, cn) = match (dirs[0].w_hr.is_some(), lengths) {
                (true, None) => self.projected_layer(op, x, dirs, h, c)?,
                (true, Some(_)) => {
                    bail!("an LSTM with a projection (proj_size) over packed sequences is not translated")
                }
                (false, _) => self.layer(op, x, dirs, h, c, lengths)?,
            };
            x = y;
            hs.push(hn);
            cs.extend(cn);
        }
        let y = if self.batch_first { op.Transpose(x).perm(&[1, 0, 2]).out() } else { x };
        let mut outs = vec![y, op.Concat(&hs).axis(0).out()];
        if self.cell == Cell::Lstm {
            outs.push(op.Concat(&cs).axis(0).out());
        }
        if orig != t {
            outs = outs.into_iter().map(|v| op.Cast(v).to(orig as i64).out()).collect();
        }
        Ok(outs)
    }

    /// `w` with its gate blocks of `hidden` rows in ONNX's order.
    fn reordered(&self, op: &mut Builder, w: Value, hidden: i64) -> Value {
        let order = self.cell.onnx_order();
        if order.len() == 1 {
            return w;
        }
        let rows: Vec<i64> = order.iter().flat_map(|g| g * hidden..(g + 1) * hidden).collect();
        let rows = op.const_i64s(&rows);
        op.Gather(w, rows).axis(0).out()
    }

    /// One layer through ONNX's node: W, R, B stacked over the directions; Y [T, D, B, H] back to
    /// torch's [T, B, D·H].
    fn layer(
        &self,
        op: &mut Builder,
        x: Value,
        dirs: &[Weights],
        h0: Value,
        c0: Option<Value>,
        lengths: Option<Value>,
    ) -> OpResult<(Value, Value, Option<Value>)> {
        let hidden = self.hidden(op, &dirs[0])?;
        let zero = op.const_i64s(&[0]);
        let (mut ws, mut rs, mut bs) = (Vec::new(), Vec::new(), Vec::new());
        for w in dirs {
            let wi = self.reordered(op, w.w_ih, hidden);
            ws.push(op.Unsqueeze(wi, zero));
            let wh = self.reordered(op, w.w_hh, hidden);
            rs.push(op.Unsqueeze(wh, zero));
            if let (Some(bi), Some(bh)) = (w.b_ih, w.b_hh) {
                let bi = self.reordered(op, bi, hidden);
                let bh = self.reordered(op, bh, hidden);
                let b = op.Concat(&[bi, bh]).axis(0).out();
                bs.push(op.Unsqueeze(b, zero));
            }
        }
        let stack = |op: &mut Builder, v: Vec<Value>| if v.len() == 1 { v[0] } else { op.Concat(&v).axis(0).out() };
        let (w, r) = (stack(op, ws), stack(op, rs));
        let b = if bs.is_empty() { None } else { Some(stack(op, bs)) };
        let direction = if self.bidirectional { "bidirectional" } else { "forward" };
        let (y, hn, cn) = match self.cell {
            Cell::Lstm => {
                let [y, hn, cn] = op
                    .LSTM(x, w, r, b, lengths, Some(h0), c0, None)
                    .hidden_size(hidden)
                    .direction(direction)
                    .outs::<3>();
                (y, hn, Some(cn))
            }
            Cell::Gru => {
                // torch applies the reset gate after the recurrent matrix product (r ⊙ (W_hn h + b_hn)).
                let [y, hn] = op
                    .GRU(x, w, r, b, lengths, Some(h0))
                    .hidden_size(hidden)
                    .direction(direction)
                    .linear_before_reset(1)
                    .outs::<2>();
                (y, hn, None)
            }
            Cell::RnnTanh | Cell::RnnRelu => {
                let f = if self.cell == Cell::RnnTanh { "Tanh" } else { "Relu" };
                let acts = vec![f; dirs.len()];
                let [y, hn] = op
                    .RNN(x, w, r, b, lengths, Some(h0))
                    .hidden_size(hidden)
                    .direction(direction)
                    .activations(&acts)
                    .outs::<2>();
                (y, hn, None)
            }
        };
        let y = op.Transpose(y).perm(&[0, 2, 1, 3]).out();
        let shape = op.const_i64s(&[0, 0, dirs.len() as i64 * hidden]);
        Ok((op.Reshape(y, shape).out(), hn, cn))
    }

    /// One LSTM layer with a projection (ONNX LSTM has none): per direction a Loop over time steps
    /// of torch's cell, `h = W_hr (o ⊙ tanh c)`.
    fn projected_layer(
        &self,
        op: &mut Builder,
        x: Value,
        dirs: &[Weights],
        h0: Value,
        c0: Option<Value>,
    ) -> OpResult<(Value, Value, Option<Value>)> {
        let Some(c0) = c0 else { bail!("an LSTM needs an initial cell state") };
        let (mut ys, mut hs, mut cs) = (Vec::new(), Vec::new(), Vec::new());
        for (k, w) in dirs.iter().enumerate() {
            let h = slice_along(op, h0, 0, k as i64, k as i64 + 1);
            let c = slice_along(op, c0, 0, k as i64, k as i64 + 1);
            let zero = op.const_i64s(&[0]);
            let (h, c) = (op.Squeeze(h, Some(zero)), op.Squeeze(c, Some(zero)));
            let (y, hn, cn) = projected_direction(op, x, w, h, c, k == 1)?;
            ys.push(y);
            hs.push(op.Unsqueeze(hn, zero));
            cs.push(op.Unsqueeze(cn, zero));
        }
        let cat = |op: &mut Builder, v: Vec<Value>, axis: i64| {
            if v.len() == 1 {
                v[0]
            } else {
                op.Concat(&v).axis(axis).out()
            }
        };
        let y = cat(op, ys, 2);
        let h = cat(op, hs, 0);
        let c = cat(op, cs, 0);
        Ok((y, h, Some(c)))
    }
}

/// `x` reversed along axis 0.
/// `x · wᵀ + b`.
fn linear(op: &mut Builder, x: Value, w: Value, b: Option<Value>) -> Value {
    let wt = op.Transpose(w).perm(&[1, 0]).out();
    let y = op.MatMul(x, wt);
    match b {
        Some(b) => op.Add(y, b),
        None => y,
    }
}

/// A cell's gate pre-activations: `x · w_ihᵀ + b_ih + h · w_hhᵀ + b_hh`.
fn gate_inputs(
    op: &mut Builder,
    x: Value,
    h: Value,
    w_ih: Value,
    w_hh: Value,
    b_ih: Option<Value>,
    b_hh: Option<Value>,
) -> Value {
    let xs = linear(op, x, w_ih, b_ih);
    let hs = linear(op, h, w_hh, b_hh);
    op.Add(xs, hs)
}

fn reverse_time(op: &mut Builder, x: Value) -> Value {
    let s = op.const_i64s(&[-1]);
    let e = op.const_i64s(&[i64::MIN]);
    let a = op.const_i64s(&[0]);
    let st = op.const_i64s(&[-1]);
    op.Slice(x, s, e, Some(a), Some(st))
}

/// One direction of a projected LSTM layer: x [T, B, In], h [B, P], c [B, H] → (y [T, B, P], h_T,
/// c_T). The input products for all steps are one MatMul before the Loop.
fn projected_direction(
    op: &mut Builder,
    x: Value,
    w: &Weights,
    h0: Value,
    c0: Value,
    reverse: bool,
) -> OpResult<(Value, Value, Value)> {
    let t = dtype_of(op, w.w_ih)?;
    let Some(w_hr) = w.w_hr else { bail!("a projected LSTM needs w_hr") };
    let x = if reverse { reverse_time(op, x) } else { x };
    let wi = op.Transpose(w.w_ih).perm(&[1, 0]).out();
    let mut xw = op.MatMul(x, wi);
    for b in [w.b_ih, w.b_hh].into_iter().flatten() {
        xw = op.Add(xw, b);
    }
    let wh = op.Transpose(w.w_hh).perm(&[1, 0]).out();
    let wr = op.Transpose(w_hr).perm(&[1, 0]).out();
    let steps = op.Shape(x).start(0).end(1).out();
    let zero = op.const_i64s(&[0]);
    let steps = op.Squeeze(steps, Some(zero));
    let tru = op.scalar(DType::Bool, 1.0);
    op.begin_subgraph("lstm_projected_step");
    let it = op.add_input(Some(DType::Int64), Some(vec![]));
    let _cond = op.add_input(Some(DType::Bool), Some(vec![]));
    let h = op.add_input(Some(t), None);
    let c = op.add_input(Some(t), None);
    let xg = op.Gather(xw, it).axis(0).out();
    let hg = op.MatMul(h, wh);
    let g = op.Add(xg, hg);
    // torch's gate order: input, forget, cell, output.
    let [i, f, gg, o] = op.Split(g, None).axis(-1).num_outputs(4).outs::<4>();
    let (i, f, o) = (op.Sigmoid(i), op.Sigmoid(f), op.Sigmoid(o));
    let gg = op.Tanh(gg);
    let fc = op.Mul(f, c);
    let ig = op.Mul(i, gg);
    let c2 = op.Add(fc, ig);
    let tc = op.Tanh(c2);
    let oh = op.Mul(o, tc);
    let h2 = op.MatMul(oh, wr);
    let cond = op.Identity(tru);
    let y = op.Identity(h2);
    let body = op.end_subgraph(vec![cond, h2, c2, y]);
    let [hn, cn, y] = op.Loop(Some(steps), None, &[h0, c0]).body(body).outs::<3>();
    // Loop outputs carry no type of their own; the next layer's products need it.
    for v in [hn, cn, y] {
        op.info_mut(v).dtype = Some(t);
    }
    let y = if reverse { reverse_time(op, y) } else { y };
    Ok((y, hn, cn))
}

translations! {
    /// lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout,
    ///     bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)
    #[target("aten::lstm.input")]
    fn lstm(
        op,
        input: Tensor,
        hx: Vec<Tensor>,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
        batch_first: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let [h0, c0] = hx[..] else { bail!("lstm needs the initial hidden and cell states") };
        let rnn = Rnn { cell: Cell::Lstm, has_biases, num_layers, bidirectional, batch_first };
        rnn.run(op, input, h0, Some(c0), &params, None)
    }

    /// gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train,
    ///     bool bidirectional, bool batch_first) -> (Tensor, Tensor)
    #[target("aten::gru.input")]
    fn gru(
        op,
        input: Tensor,
        hx: Tensor,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
        batch_first: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let rnn = Rnn { cell: Cell::Gru, has_biases, num_layers, bidirectional, batch_first };
        rnn.run(op, input, hx, None, &params, None)
    }

    /// rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout,
    ///     bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
    #[target("aten::rnn_tanh.input")]
    fn rnn_tanh(
        op,
        input: Tensor,
        hx: Tensor,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
        batch_first: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let rnn = Rnn { cell: Cell::RnnTanh, has_biases, num_layers, bidirectional, batch_first };
        rnn.run(op, input, hx, None, &params, None)
    }

    /// rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout,
    ///     bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
    #[target("aten::rnn_relu.input")]
    fn rnn_relu(
        op,
        input: Tensor,
        hx: Tensor,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
        batch_first: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let rnn = Rnn { cell: Cell::RnnRelu, has_biases, num_layers, bidirectional, batch_first };
        rnn.run(op, input, hx, None, &params, None)
    }

    /// fxonnx::lstm_padded(Tensor input, Tensor lengths, Tensor[] hx, Tensor[] params, bool has_biases,
    ///     int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)
    #[target("fxonnx::lstm_padded")]
    fn lstm_padded(
        op,
        input: Tensor,
        lengths: Tensor,
        hx: Vec<Tensor>,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let [h0, c0] = hx[..] else { bail!("lstm needs the initial hidden and cell states") };
        let rnn = Rnn { cell: Cell::Lstm, has_biases, num_layers, bidirectional, batch_first: false };
        rnn.run(op, input, h0, Some(c0), &params, Some(lengths))
    }

    /// fxonnx::gru_padded(Tensor input, Tensor lengths, Tensor hx, Tensor[] params, bool has_biases,
    ///     int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)
    #[target("fxonnx::gru_padded")]
    fn gru_padded(
        op,
        input: Tensor,
        lengths: Tensor,
        hx: Tensor,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let rnn = Rnn { cell: Cell::Gru, has_biases, num_layers, bidirectional, batch_first: false };
        rnn.run(op, input, hx, None, &params, Some(lengths))
    }

    /// fxonnx::rnn_tanh_padded(Tensor input, Tensor lengths, Tensor hx, Tensor[] params, bool has_biases,
    ///     int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)
    #[target("fxonnx::rnn_tanh_padded")]
    fn rnn_tanh_padded(
        op,
        input: Tensor,
        lengths: Tensor,
        hx: Tensor,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let rnn = Rnn { cell: Cell::RnnTanh, has_biases, num_layers, bidirectional, batch_first: false };
        rnn.run(op, input, hx, None, &params, Some(lengths))
    }

    /// fxonnx::rnn_relu_padded(Tensor input, Tensor lengths, Tensor hx, Tensor[] params, bool has_biases,
    ///     int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)
    #[target("fxonnx::rnn_relu_padded")]
    fn rnn_relu_padded(
        op,
        input: Tensor,
        lengths: Tensor,
        hx: Tensor,
        params: Vec<Tensor>,
        has_biases: bool,
        num_layers: i64,
        dropout: f64,
        train: bool,
        bidirectional: bool,
    ) -> OpResult<Vec<Value>> {
        no_dropout(dropout, train, num_layers)?;
        let rnn = Rnn { cell: Cell::RnnRelu, has_biases, num_layers, bidirectional, batch_first: false };
        rnn.run(op, input, hx, None, &params, Some(lengths))
    }

    /// lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers,
    ///     float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)
    #[target("aten::lstm.data", "aten::gru.data", "aten::rnn_tanh.data", "aten::rnn_relu.data")]
    fn rnn_packed(op, _data: Ignored, _batch_sizes: Ignored) -> OpResult<Vec<Value>> {
        bail!(
            "packed sequences (PackedSequence, the .data overloads) are not translated; pass a padded tensor \
             (pad_packed_sequence) to the recurrent layer instead"
        )
    }

    /// rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) ->
    ///     Tensor
    #[target("aten::rnn_tanh_cell")]
    fn rnn_tanh_cell(
        op,
        input: Tensor,
        hx: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Option<Tensor> = None,
        b_hh: Option<Tensor> = None,
    ) -> Value {
        let pre = gate_inputs(op, input, hx, w_ih, w_hh, b_ih, b_hh);
        op.Tanh(pre)
    }

    /// rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) ->
    ///     Tensor
    #[target("aten::rnn_relu_cell")]
    fn rnn_relu_cell(
        op,
        input: Tensor,
        hx: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Option<Tensor> = None,
        b_hh: Option<Tensor> = None,
    ) -> Value {
        let pre = gate_inputs(op, input, hx, w_ih, w_hh, b_ih, b_hh);
        op.Relu(pre)
    }

    /// lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) ->
    ///     (Tensor, Tensor)
    #[target("aten::lstm_cell")]
    fn lstm_cell(
        op,
        input: Tensor,
        hx: Vec<Tensor>,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Option<Tensor> = None,
        b_hh: Option<Tensor> = None,
    ) -> OpResult<(Value, Value)> {
        let [h, c] = hx[..] else {
            bail!("lstm_cell takes hx as [h, c], got {} tensors", hx.len())
        };
        // Gates i, f, g, o in torch's order.
        let gates = gate_inputs(op, input, h, w_ih, w_hh, b_ih, b_hh);
        let [i, f, g, o] = op.Split(gates, None).axis(-1).num_outputs(4).outs::<4>();
        let (i, f, g, o) = (op.Sigmoid(i), op.Sigmoid(f), op.Tanh(g), op.Sigmoid(o));
        let kept = op.Mul(f, c);
        let added = op.Mul(i, g);
        let c_next = op.Add(kept, added);
        let squashed = op.Tanh(c_next);
        Ok((op.Mul(o, squashed), c_next))
    }

    /// gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor
    #[target("aten::gru_cell")]
    fn gru_cell(
        op,
        input: Tensor,
        hx: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Option<Tensor> = None,
        b_hh: Option<Tensor> = None,
    ) -> Value {
        // r and z from both halves summed; n = tanh(x_n + r * h_n), the reset applied after the
        // hidden matmul as torch does; h' = (1 - z) * n + z * h = n + z * (h - n).
        let x_part = linear(op, input, w_ih, b_ih);
        let h_part = linear(op, hx, w_hh, b_hh);
        let [xr, xz, xn] = op.Split(x_part, None).axis(-1).num_outputs(3).outs::<3>();
        let [hr, hz, hn] = op.Split(h_part, None).axis(-1).num_outputs(3).outs::<3>();
        let r = op.Add(xr, hr);
        let r = op.Sigmoid(r);
        let z = op.Add(xz, hz);
        let z = op.Sigmoid(z);
        let reset = op.Mul(r, hn);
        let n = op.Add(xn, reset);
        let n = op.Tanh(n);
        let d = op.Sub(hx, n);
        let zd = op.Mul(z, d);
        op.Add(n, zd)
    }
}
