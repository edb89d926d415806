//! PT2E quantization (`quantized_decomposed::*`, what `convert_pt2e` leaves in a program) as ONNX
//! `QuantizeLinear` / `DequantizeLinear` pairs, the QDQ form ONNX Runtime runs with integer
//! kernels. The optimizer keeps them: a quantized weight stays an integer initializer behind its
//! `DequantizeLinear`.

use crate::translate::prelude::*;
use crate::translations;

/// The ONNX type of a quantized `dtype`, if this opset's QuantizeLinear produces it.
fn quantized_type(op: &Builder, dtype: ScalarType) -> OpResult<DType> {
    let t = onnx_dtype(dtype);
    match t {
        DType::Int8 | DType::Uint8 => Ok(t),
        DType::Int16 | DType::Uint16 if op.opset() >= 21 => Ok(t),
        DType::Int16 | DType::Uint16 => {
            bail!("16-bit quantization needs QuantizeLinear of opset 21; export with --opset 21")
        }
        _ => bail!("quantization to {dtype:?} has no ONNX QuantizeLinear (int8 and uint8; 16-bit from opset 21)"),
    }
}

/// The full range of an integer type.
fn type_range(t: DType) -> (i64, i64) {
    match t {
        DType::Int8 => (-128, 127),
        DType::Uint8 => (0, 255),
        DType::Int16 => (-32768, 32767),
        _ => (0, 65535),
    }
}

/// A per-tensor quantization parameter as the 0-d tensor QuantizeLinear takes (a `[1]` one would
/// read as per-axis).
fn per_tensor(op: &mut Builder, x: Operand, t: DType) -> Value {
    let v = operand_value(op, x, t);
    let scalar = op.const_i64s(&[]);
    op.Reshape(v, scalar).out()
}

/// QuantizeLinear saturates to the type's range; torch clamps to `[quant_min, quant_max]`, which
/// may be narrower (symmetric int8 weights: -127..127).
fn clamp_to(op: &mut Builder, q: Value, t: DType, quant_min: i64, quant_max: i64) -> OpResult<Value> {
    let (lo, hi) = type_range(t);
    if quant_min < lo || quant_max > hi || quant_min > quant_max {
        bail!("quantization range [{quant_min}, {quant_max}] does not fit {t:?}");
    }
    if (quant_min, quant_max) == (lo, hi) {
        return Ok(q);
    }
    let (a, b) = (op.scalar(t, quant_min as f64), op.scalar(t, quant_max as f64));
    Ok(op.Clip(q, Some(a), Some(b)))
}

/// QuantizeLinear of `input` (in its float type `f`) to `dtype` (ONNX type `q`), per tensor or
/// along `axis`, clamped to torch's range; `params` makes the scale (type `f`) and zero point (`q`).
fn quantize(
    op: &mut Builder,
    input: Value,
    dtype: ScalarType,
    axis: Option<i64>,
    (quant_min, quant_max): (i64, i64),
    params: impl FnOnce(&mut Builder, DType, DType) -> (Value, Value),
) -> OpResult<Value> {
    let q = quantized_type(op, dtype)?;
    let f = float_type(op.dtype(input));
    let x = cast(op, input, f);
    let (s, z) = params(op, f, q);
    let y = match axis {
        Some(axis) => op.QuantizeLinear(x, s, Some(z)).axis(axis).out(),
        None => op.QuantizeLinear(x, s, Some(z)).out(),
    };
    clamp_to(op, y, q, quant_min, quant_max)
}

/// The float type quantization reads from, and dequantization writes: the input's (float32 for
/// anything ONNX's scales cannot be).
fn float_type(t: Option<DType>) -> DType {
    match t {
        Some(t @ (DType::Float | DType::Float16 | DType::BFloat16)) => t,
        _ => DType::Float,
    }
}

/// A dequantized value in the node's result type (`out_dtype`, else float32).
fn dequantized(op: &mut Builder, y: Value) -> Value {
    match op.out_dtype(0) {
        Some(t) if t != DType::Float => cast(op, y, t),
        _ => y,
    }
}

translations! {
    /// quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
    ///     ScalarType dtype) -> Tensor
    #[target("quantized_decomposed::quantize_per_tensor", "quantized_decomposed::quantize_per_tensor.tensor")]
    fn quantize_per_tensor(
        op,
        input: Tensor,
        scale: Operand,
        zero_point: Operand,
        quant_min: i64,
        quant_max: i64,
        dtype: ScalarType,
    ) -> OpResult<Value> {
        quantize(op, input, dtype, None, (quant_min, quant_max), |op, f, q| {
            (per_tensor(op, scale, f), per_tensor(op, zero_point, q))
        })
    }

    /// dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
    ///     ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor
    #[target("quantized_decomposed::dequantize_per_tensor", "quantized_decomposed::dequantize_per_tensor.tensor")]
    fn dequantize_per_tensor(
        op,
        input: Tensor,
        scale: Operand,
        zero_point: Operand,
        _quant_min: Ignored,
        _quant_max: Ignored,
        _dtype: Ignored,
        _out_dtype: Ignored,
    ) -> OpResult<Value> {
        // Values are already in [quant_min, quant_max]: dequantization is (x - zero_point) * scale.
        let q = dtype_of(op, input)?;
        let s = per_tensor(op, scale, DType::Float);
        let z = per_tensor(op, zero_point, q);
        let y = op.DequantizeLinear(input, s, Some(z)).out();
        Ok(dequantized(op, y))
    }

    /// quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min,
    ///     int quant_max, ScalarType dtype) -> Tensor
    #[target("quantized_decomposed::quantize_per_channel")]
    fn quantize_per_channel(
        op,
        input: Tensor,
        scales: Tensor,
        zero_points: Tensor,
        axis: i64,
        quant_min: i64,
        quant_max: i64,
        dtype: ScalarType,
    ) -> OpResult<Value> {
        let axis = normalize_axis(axis, rank_of(op, input)?)?;
        quantize(op, input, dtype, Some(axis), (quant_min, quant_max), |op, f, q| {
            (cast(op, scales, f), cast(op, zero_points, q))
        })
    }

    /// dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min,
    ///     int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor
    #[target("quantized_decomposed::dequantize_per_channel")]
    fn dequantize_per_channel(
        op,
        input: Tensor,
        scales: Tensor,
        zero_points: Option<Tensor>,
        axis: i64,
        _quant_min: Ignored,
        _quant_max: Ignored,
        _dtype: Ignored,
        _out_dtype: Ignored,
    ) -> OpResult<Value> {
        let q = dtype_of(op, input)?;
        let s = cast(op, scales, DType::Float);
        let z = zero_points.map(|z| cast(op, z, q));
        let axis = normalize_axis(axis, rank_of(op, input)?)?;
        let y = op.DequantizeLinear(input, s, z).axis(axis).out();
        Ok(dequantized(op, y))
    }
}
