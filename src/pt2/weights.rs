//! Tensor payloads: a storage entry viewed through `sizes` / `strides` / `storage_offset`.

use bytes::Bytes;

use super::schema::{SymInt, TensorMeta};
use super::{ArchiveError, Result};

/// The schema's ScalarType enum (not c10's numbering: FLOAT is 7, BOOL is 12).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    Uint8,
    Int8,
    Int16,
    Int32,
    Int64,
    Float16,
    Float32,
    Float64,
    Complex32,
    Complex64,
    Complex128,
    Bool,
    BFloat16,
    Uint16,
    Float8E4M3FN,
    Float8E5M2,
    Float8E4M3FNUZ,
    Float8E5M2FNUZ,
    Float8E8M0FNU,
    Uint32,
    Uint64,
    /// `torch.float4_e2m1fn_x2`: two 4-bit floats a byte. torch's schema has no number for it;
    /// fxonnx's Python serializer writes 45, c10's.
    Float4E2M1FnX2,
}

/// Map a schema ScalarType id to [`ScalarType`].
pub fn scalar_type(id: i64) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match id {
        1 => Uint8,
        2 => Int8,
        3 => Int16,
        4 => Int32,
        5 => Int64,
        6 => Float16,
        7 => Float32,
        8 => Float64,
        9 => Complex32,
        10 => Complex64,
        11 => Complex128,
        12 => Bool,
        13 => BFloat16,
        28 => Uint16,
        29 => Float8E4M3FN,
        30 => Float8E5M2,
        31 => Float8E4M3FNUZ,
        32 => Float8E5M2FNUZ,
        33 => Float8E8M0FNU,
        34 => Uint32,
        35 => Uint64,
        45 => Float4E2M1FnX2,
        _ => return None,
    })
}

impl ScalarType {
    pub fn size(self) -> usize {
        use ScalarType::*;
        match self {
            Uint8 | Int8 | Bool | Float8E4M3FN | Float8E5M2 | Float8E4M3FNUZ | Float8E5M2FNUZ | Float8E8M0FNU
            | Float4E2M1FnX2 => 1,
            Int16 | Float16 | BFloat16 | Uint16 => 2,
            Int32 | Float32 | Complex32 | Uint32 => 4,
            Int64 | Float64 | Complex64 | Uint64 => 8,
            Complex128 => 16,
        }
    }

    /// torch's name (`torch.float32` → `float32`).
    pub fn name(self) -> &'static str {
        use ScalarType::*;
        match self {
            Uint8 => "uint8",
            Int8 => "int8",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            Float16 => "float16",
            Float32 => "float32",
            Float64 => "float64",
            Complex32 => "complex32",
            Complex64 => "complex64",
            Complex128 => "complex128",
            Bool => "bool",
            BFloat16 => "bfloat16",
            Uint16 => "uint16",
            Float8E4M3FN => "float8_e4m3fn",
            Float8E5M2 => "float8_e5m2",
            Float8E4M3FNUZ => "float8_e4m3fnuz",
            Float8E5M2FNUZ => "float8_e5m2fnuz",
            Float8E8M0FNU => "float8_e8m0fnu",
            Uint32 => "uint32",
            Uint64 => "uint64",
            Float4E2M1FnX2 => "float4_e2m1fn_x2",
        }
    }

    pub fn is_complex(self) -> bool {
        matches!(self, ScalarType::Complex32 | ScalarType::Complex64 | ScalarType::Complex128)
    }
}

/// The most elements one tensor may have (2^40): beyond what any real model stores, and what a
/// corrupt or hostile size would otherwise make the exporter allocate.
pub const MAX_ELEMENTS: i64 = 1 << 40;

/// The most bytes a strided view that reads elements more than once may expand to (anything else
/// is copied at most once from the archive, or not at all).
const MAX_OVERLAP_BYTES: usize = 1 << 28;

/// A weight or constant, as dense little-endian bytes in row-major order.
#[derive(Clone, Debug)]
pub struct Weight {
    pub dtype: ScalarType,
    /// The tensor's shape.
    pub sizes: Vec<i64>,
    /// Dense bytes of `stored_sizes`; a zero-copy slice of the archive unless the view was not
    /// contiguous.
    pub raw: Bytes,
    /// The shape `raw` holds: `sizes` with every broadcast axis (stride 0, or an empty storage
    /// standing for zeros) at 1. The lowering expands it to `sizes` in the graph, so a tiny
    /// archive declaring a huge expanded tensor costs its bytes once, not its size.
    pub stored_sizes: Vec<i64>,
    /// Identifies the stored view: tensors with equal keys are the same tensor (tied weights).
    pub key: (String, Vec<i64>, Vec<i64>, i64, i64),
}

fn concrete(fqn: &str, what: &str, s: &SymInt) -> Result<i64> {
    match s {
        SymInt::AsInt(v) => Ok(*v),
        SymInt::AsExpr(e) => Err(ArchiveError::BadTensor {
            fqn: fqn.to_string(),
            reason: format!("{what} is symbolic ({}), but stored tensors have concrete shapes", e.expr_str),
        }),
    }
}

/// The element count of `sizes`, if it is at most [`MAX_ELEMENTS`].
pub fn element_count(sizes: &[i64]) -> Option<i64> {
    sizes.iter().try_fold(1i64, |n, &s| n.checked_mul(s)).filter(|n| (0..=MAX_ELEMENTS).contains(n))
}

impl Weight {
    /// The tensor's shape differs from what `raw` holds: it is expanded in the graph.
    pub fn is_broadcast(&self) -> bool {
        self.stored_sizes != self.sizes
    }

    /// View `storage` (the whole stored entry) as described by `meta`. Every size, stride and
    /// offset is checked before use; the view must lie inside the stored bytes.
    pub fn view(fqn: &str, path: &str, storage: Bytes, meta: &TensorMeta) -> Result<Weight> {
        let bad = |reason: String| ArchiveError::BadTensor { fqn: fqn.to_string(), reason };
        let dtype = scalar_type(meta.dtype).ok_or_else(|| bad(format!("unknown ScalarType id {}", meta.dtype)))?;
        let sizes = meta.sizes.iter().map(|s| concrete(fqn, "size", s)).collect::<Result<Vec<_>>>()?;
        let strides = meta.strides.iter().map(|s| concrete(fqn, "stride", s)).collect::<Result<Vec<_>>>()?;
        let offset = concrete(fqn, "storage_offset", &meta.storage_offset)?;
        if sizes.len() != strides.len() || sizes.iter().any(|&s| s < 0) || strides.iter().any(|&s| s < 0) || offset < 0
        {
            return Err(bad(format!("inconsistent sizes {sizes:?} / strides {strides:?} / offset {offset}")));
        }
        let numel = element_count(&sizes)
            .ok_or_else(|| bad(format!("sizes {sizes:?} hold more than 2^40 elements; no real model stores that")))?;
        let key = (path.to_string(), sizes.clone(), strides.clone(), offset, meta.dtype);
        let es = dtype.size();
        if numel == 0 {
            return Ok(Weight { dtype, stored_sizes: sizes.clone(), sizes, raw: Bytes::new(), key });
        }
        if storage.is_empty() {
            // A 0-byte payload stands for a zero-size storage, which torch materialises as zeros:
            // one zero, expanded in the graph.
            let ones = vec![1; sizes.len()];
            return Ok(Weight { dtype, sizes, stored_sizes: ones, raw: Bytes::from(vec![0u8; es]), key });
        }
        // Broadcast axes (stride 0) are stored once: the view of the others is read, and the
        // lowering expands it.
        let stored_sizes: Vec<i64> = sizes.iter().zip(&strides).map(|(&n, &s)| if s == 0 { 1 } else { n }).collect();
        let past_end = || {
            bad(format!(
                "view (sizes {sizes:?}, strides {strides:?}, offset {offset}) reaches past the {} stored bytes of {path}",
                storage.len()
            ))
        };
        // The furthest element the view reaches must lie inside the stored bytes.
        let last = stored_sizes
            .iter()
            .zip(&strides)
            .try_fold(offset, |acc, (&n, &s)| (n - 1).checked_mul(s).and_then(|d| acc.checked_add(d)))
            .ok_or_else(past_end)?;
        let end = usize::try_from(last).ok().and_then(|l| l.checked_add(1)).and_then(|n| n.checked_mul(es));
        if end.is_none_or(|end| end > storage.len()) {
            return Err(past_end());
        }
        // Every number below is now bounded by the stored bytes, or by MAX_ELEMENTS.
        let stored_numel = element_count(&stored_sizes).unwrap_or(0) as usize;
        let nbytes = stored_numel * es;
        if nbytes > storage.len() && nbytes > MAX_OVERLAP_BYTES {
            return Err(bad(format!(
                "a view of {nbytes} bytes reads the {} stored bytes of {path} repeatedly (overlapping strides {strides:?})",
                storage.len()
            )));
        }
        let contiguous = {
            let mut expect = 1i64;
            let mut ok = true;
            for (&n, &s) in stored_sizes.iter().zip(&strides).rev() {
                if n != 1 && s != expect {
                    ok = false;
                    break;
                }
                expect *= n;
            }
            ok
        };
        let start = offset as usize * es;
        let raw = if contiguous {
            storage.slice(start..start + nbytes)
        } else {
            // Gather a strided view (rare: buffers that are transposed views of another buffer).
            let mut out = Vec::with_capacity(nbytes);
            let mut index = vec![0i64; stored_sizes.len()];
            for _ in 0..stored_numel {
                let pos = offset + index.iter().zip(&strides).map(|(i, s)| i * s).sum::<i64>();
                let p = pos as usize * es;
                out.extend_from_slice(&storage[p..p + es]);
                for d in (0..stored_sizes.len()).rev() {
                    index[d] += 1;
                    if index[d] < stored_sizes[d] {
                        break;
                    }
                    index[d] = 0;
                }
            }
            Bytes::from(out)
        };
        Ok(Weight { dtype, sizes, stored_sizes, raw, key })
    }
}
