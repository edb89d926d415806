//! `fxonnx::onnx_graph`: a node whose ONNX was built outside fxonnx, by a Python custom
//! translation (`custom_translation_table`, see `python/fxonnx/_custom.py`) or a TorchScript-era
//! symbolic function (`python/fxonnx/_symbolic.py`). And `onnx_symbolic::_symbolic`: a node
//! `torch.onnx.ops.symbolic` names in the program itself (its op type, domain and attributes). The Python package
//! writes such a node in place of the FX node it translated: its tensor arguments, and the ONNX
//! as a serialized `ModelProto` (hex) whose graph takes them as inputs, in order, and whose outputs
//! are the node's outputs. Its model-local functions were inlined in Python; its nodes are emitted
//! here as they are (the translation is inlined: no function remains in the exported model).

use crate::translate::prelude::*;
use crate::translations;

/// The bytes of a hex string.
fn unhex(text: &str) -> Result<Vec<u8>, OpError> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(OpError::new("fxonnx::onnx_graph: `graph` is not hex")),
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        bail!("fxonnx::onnx_graph: `graph` has an odd number of hex digits");
    }
    bytes.chunks(2).map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

/// A tensor attribute or initializer, from its proto (raw data, or the typed fields ONNX also
/// allows for small tensors).
fn tensor_data(t: &proto::TensorProto) -> Result<TensorData, OpError> {
    let dtype = DType::from_onnx(t.data_type).ok_or_else(|| {
        OpError::new(format!("tensor `{}` has ONNX type {}, which fxonnx does not know", t.name, t.data_type))
    })?;
    let n: i64 = t.dims.iter().product();
    let raw: Vec<u8> = if !t.raw_data.is_empty() {
        t.raw_data.to_vec()
    } else if !t.float_data.is_empty() && dtype == DType::Float {
        t.float_data.iter().flat_map(|v| v.to_le_bytes()).collect()
    } else if !t.double_data.is_empty() && dtype == DType::Double {
        t.double_data.iter().flat_map(|v| v.to_le_bytes()).collect()
    } else if !t.int64_data.is_empty() && dtype == DType::Int64 {
        t.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect()
    } else if !t.int32_data.is_empty() && dtype == DType::Int32 {
        t.int32_data.iter().flat_map(|v| v.to_le_bytes()).collect()
    } else if !t.int32_data.is_empty() && matches!(dtype, DType::Bool | DType::Uint8 | DType::Int8) {
        t.int32_data.iter().map(|&v| v as u8).collect()
    } else if n == 0 {
        Vec::new()
    } else {
        bail!(
            "tensor `{}` of type {}: its values are in a field fxonnx does not read; write raw_data",
            t.name,
            dtype.name()
        );
    };
    if dtype.size().is_some_and(|s| raw.len() as i64 != n * s as i64) {
        bail!("tensor `{}` has {} bytes for {n} elements of {}", t.name, raw.len(), dtype.name());
    }
    Ok(TensorData { dtype, dims: t.dims.clone(), raw: raw.into() })
}

fn attribute(a: &proto::AttributeProto) -> Result<AttrValue, OpError> {
    use proto::attribute_proto::AttributeType as T;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(match T::try_from(a.r#type).unwrap_or(T::Undefined) {
        T::Float => AttrValue::Float(a.f),
        T::Int => AttrValue::Int(a.i),
        T::String => AttrValue::String(text(&a.s)),
        T::Tensor => {
            AttrValue::Tensor(Box::new(tensor_data(a.t.as_ref().ok_or("a tensor attribute without tensor")?)?))
        }
        T::Floats => AttrValue::Floats(a.floats.clone()),
        T::Ints => AttrValue::Ints(a.ints.clone()),
        T::Strings => AttrValue::Strings(a.strings.iter().map(|s| text(s)).collect()),
        T::TypeProto => match a.tp.as_ref().and_then(value_type) {
            Some((container, Some(dtype))) => AttrValue::Type(container, dtype),
            _ => bail!("attribute `{}` is a type other than a tensor, an optional or a sequence of tensors", a.name),
        },
        other => bail!(
            "attribute `{}` is of kind {other:?}, which a Python translation cannot pass to fxonnx yet (subgraphs, \
             sparse tensors and types are not read); hint: build the control flow with onnxscript ops outside the \
             attribute, or write the translation in Rust",
            a.name
        ),
    })
}

/// The container and element type a `TypeProto` declares: a tensor, or an optional or a sequence
/// of tensors (`None` for other types).
fn value_type(t: &proto::TypeProto) -> Option<(Container, Option<DType>)> {
    use proto::type_proto::Value as T;
    let tensor = |t: &proto::TypeProto| match &t.value {
        Some(T::TensorType(x)) => Some(DType::from_onnx(x.elem_type)),
        _ => None,
    };
    match &t.value {
        Some(T::TensorType(_)) => Some((Container::Tensor, tensor(t)?)),
        Some(T::OptionalType(o)) => Some((Container::Optional, tensor(o.elem_type.as_deref()?)?)),
        Some(T::SequenceType(q)) => Some((Container::Sequence, tensor(q.elem_type.as_deref()?)?)),
        _ => None,
    }
}

/// The opset version the graph imports `domain` at.
fn version(model: &proto::ModelProto, domain: &str) -> i64 {
    model.opset_import.iter().find(|o| o.domain == domain).map_or(1, |o| o.version)
}

/// Emit the nodes of the serialized `ModelProto` in `graph` (hex), its inputs bound to `inputs`.
fn emit(op: &mut Builder, inputs: &[Value], graph: &str) -> OpResult<Vec<Value>> {
    let bytes = unhex(graph)?;
    let model: proto::ModelProto = prost::Message::decode(bytes.as_slice())
        .map_err(|e| OpError::new(format!("the ONNX of the translation is not a ModelProto: {e}")))?;
    let g = model.graph.as_ref().ok_or("the ModelProto of the translation has no graph")?;
    if !model.functions.is_empty() {
        bail!("the translation's ONNX still calls model-local functions; they are inlined before it reaches fxonnx");
    }
    let formal: Vec<&str> = g.input.iter().map(|i| i.name.as_str()).collect();
    if formal.len() != inputs.len() {
        bail!("the translation's graph takes {} inputs; the node passes {}", formal.len(), inputs.len());
    }
    let mut env: std::collections::HashMap<&str, Value> = formal.iter().copied().zip(inputs.iter().copied()).collect();
    for init in &g.initializer {
        let v = op.constant_tensor(tensor_data(init)?);
        env.insert(init.name.as_str(), v);
    }
    for n in &g.node {
        let read = |name: &str| match name {
            "" => Ok(None),
            name => env.get(name).copied().map(Some).ok_or_else(|| {
                OpError::new(format!(
                    "the translation's node `{}` ({}) reads `{name}`, which nothing defines",
                    n.name, n.op_type
                ))
            }),
        };
        let ins: Vec<Option<Value>> = n.input.iter().map(|name| read(name)).collect::<Result<_, OpError>>()?;
        let mut call = op.node(&n.domain, version(&model, &n.domain), &n.op_type, ins);
        for a in &n.attribute {
            call = call.attr(&a.name, attribute(a)?);
        }
        let outs = call.outs_vec(n.output.len());
        for (name, v) in n.output.iter().zip(outs) {
            if !name.is_empty() {
                env.insert(name.as_str(), v);
            }
        }
    }
    let output = |name: &str| {
        env.get(name)
            .copied()
            .ok_or_else(|| OpError::new(format!("the translation's output `{name}` is never computed")))
    };
    g.output
        .iter()
        .map(|o| {
            let v = output(&o.name)?;
            // An optional or a sequence, as the graph declares it.
            if let Some((container, _)) = o.r#type.as_ref().and_then(value_type) {
                op.info_mut(v).container = container;
            }
            // Marked by the Python side where the rank depends on the data (see `rank_from_data`).
            if o.metadata_props.iter().any(|p| p.key == RANK_KEY && p.value == "from data") {
                let info = op.info_mut(v);
                info.shape = None;
                info.rank_from_data = Some(0); // the program's rank, once the output is bound
            }
            Ok(v)
        })
        .collect()
}

/// The metadata key of a translation's graph output whose rank is known only at run time.
const RANK_KEY: &str = "fxonnx.rank";

/// `torch.onnx.ops`' attributes, encoded as lists for FX (its `EncodedAttrs`): per key, a type
/// and the range of its values in the list of that type.
fn symbolic_attributes(
    keys: &[&str],
    types: &[&str],
    pos: &[Vec<i64>],
    ints: &[i64],
    floats: &[f64],
    strs: &[&str],
) -> OpResult<Vec<(String, AttrValue)>> {
    if keys.len() != types.len() || keys.len() != pos.len() {
        bail!("onnx_symbolic: {} attribute keys for {} types and {} ranges", keys.len(), types.len(), pos.len());
    }
    let range = |p: &Vec<i64>, len: usize| -> OpResult<std::ops::Range<usize>> {
        match p[..] {
            [a, b] if a >= 0 && a <= b && (b as usize) <= len => Ok(a as usize..b as usize),
            _ => bail!("onnx_symbolic: the attribute range {p:?} is outside its list of {len}"),
        }
    };
    keys.iter()
        .zip(types)
        .zip(pos)
        .map(|((&k, &t), p)| {
            let value = match t {
                "i" => AttrValue::Int(ints[range(p, ints.len())?].first().copied().unwrap_or_default()),
                "f" => AttrValue::Float(floats[range(p, floats.len())?].first().copied().unwrap_or_default() as f32),
                "s" => AttrValue::String(strs[range(p, strs.len())?].first().copied().unwrap_or_default().into()),
                "is" => AttrValue::Ints(ints[range(p, ints.len())?].to_vec()),
                "fs" => AttrValue::Floats(floats[range(p, floats.len())?].iter().map(|&f| f as f32).collect()),
                "ss" => AttrValue::Strings(strs[range(p, strs.len())?].iter().map(|s| s.to_string()).collect()),
                other => bail!("onnx_symbolic: attribute `{k}` of unknown type `{other}`"),
            };
            Ok((k.to_string(), value))
        })
        .collect()
}

/// The node `torch.onnx.ops.symbolic` asks for, with `outputs` outputs.
#[allow(clippy::too_many_arguments)]
fn symbolic_node(
    op: &mut Builder,
    inputs: Vec<Option<Value>>,
    op_type: &str,
    domain: &str,
    version: Option<i64>,
    attributes: Vec<(String, AttrValue)>,
    outputs: usize,
) -> Vec<Value> {
    let version = version.unwrap_or(if domain.is_empty() { op.opset() } else { 1 });
    let mut call = op.node(domain, version, op_type, inputs);
    for (name, value) in attributes {
        call = call.attr(&name, value);
    }
    call.outs_vec(outputs)
}

translations! {
    /// onnx_symbolic::_symbolic(Tensor?[] inputs, str op_type, int onnx_dtype, *, SymInt[] shape,
    ///     str[] attr_keys, str[] attr_types, int[][] attr_pos, int[] attr_ints, float[] attr_floats,
    ///     str[] attr_strs, str[] metadata_props_keys, str[] metadata_props_values, str domain="",
    ///     int? version=None) -> Tensor
    #[target("onnx_symbolic::_symbolic")]
    fn symbolic(
        op,
        inputs: Vec<Option<Tensor>>,
        op_type: &str,
        _onnx_dtype: Ignored,
        _shape: Ignored,
        attr_keys: Vec<&str>,
        attr_types: Vec<&str>,
        attr_pos: Vec<Vec<i64>>,
        attr_ints: Vec<i64>,
        attr_floats: Vec<f64>,
        attr_strs: Vec<&str>,
        _metadata_props_keys: Ignored,
        _metadata_props_values: Ignored,
        domain: &str = "",
        version: Option<i64> = None,
    ) -> OpResult<Value> {
        let attributes = symbolic_attributes(&attr_keys, &attr_types, &attr_pos, &attr_ints, &attr_floats, &attr_strs)?;
        Ok(symbolic_node(op, inputs, op_type, domain, version, attributes, 1)[0])
    }

    /// onnx_symbolic::_symbolic_multi_out(Tensor?[] inputs, str op_type, int[] onnx_dtypes, *,
    ///     SymInt[][] shapes, ...) -> Tensor[]
    #[target("onnx_symbolic::_symbolic_multi_out")]
    fn symbolic_multi_out(
        op,
        inputs: Vec<Option<Tensor>>,
        op_type: &str,
        onnx_dtypes: Vec<i64>,
        _shapes: Ignored,
        attr_keys: Vec<&str>,
        attr_types: Vec<&str>,
        attr_pos: Vec<Vec<i64>>,
        attr_ints: Vec<i64>,
        attr_floats: Vec<f64>,
        attr_strs: Vec<&str>,
        _metadata_props_keys: Ignored,
        _metadata_props_values: Ignored,
        domain: &str = "",
        version: Option<i64> = None,
    ) -> OpResult<Vec<Value>> {
        let attributes = symbolic_attributes(&attr_keys, &attr_types, &attr_pos, &attr_ints, &attr_floats, &attr_strs)?;
        Ok(symbolic_node(op, inputs, op_type, domain, version, attributes, onnx_dtypes.len()))
    }

    /// onnx_graph(Tensor[] inputs, str graph) -> Tensor[]
    #[target("fxonnx::onnx_graph")]
    fn onnx_graph(op, inputs: Vec<Tensor>, graph: &str) -> OpResult<Vec<Value>> {
        emit(op, &inputs, graph)
    }
}
