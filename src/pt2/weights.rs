//! Tensor payloads: a storage entry viewed through `sizes` / `strides` / `storage_offset`.

use bytes::Bytes;

use super::schema::{SymInt, TensorMeta};
use super::{Pt2Error, Result};

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
        _ => return None,
    })
}

impl ScalarType {
    pub fn size(self) -> usize {
        use ScalarType::*;
        match self {
            Uint8 | Int8 | Bool | Float8E4M3FN | Float8E5M2 | Float8E4M3FNUZ | Float8E5M2FNUZ | Float8E8M0FNU => 1,
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
        }
    }

    pub fn is_complex(self) -> bool {
        matches!(self, ScalarType::Complex32 | ScalarType::Complex64 | ScalarType::Complex128)
    }
}

/// A weight or constant, as dense little-endian bytes in row-major order.
#[derive(Clone, Debug)]
pub struct Weight {
    pub dtype: ScalarType,
    pub sizes: Vec<i64>,
    /// Dense bytes; a zero-copy slice of the archive unless the view was not contiguous.
    pub raw: Bytes,
    /// Identifies the stored view: tensors with equal keys are the same tensor (tied weights).
    pub key: (String, Vec<i64>, Vec<i64>, i64, i64),
}

fn concrete(fqn: &str, what: &str, s: &SymInt) -> Result<i64> {
    match s {
        SymInt::AsInt(v) => Ok(*v),
        SymInt::AsExpr(e) => Err(Pt2Error::BadTensor {
            fqn: fqn.to_string(),
            reason: format!("{what} is symbolic ({}), but stored tensors have concrete shapes", e.expr_str),
        }),
    }
}

impl Weight {
    /// View `storage` (the whole stored entry) as described by `meta`.
    pub fn view(fqn: &str, path: &str, storage: Bytes, meta: &TensorMeta) -> Result<Weight> {
        let bad = |reason: String| Pt2Error::BadTensor { fqn: fqn.to_string(), reason };
        let dtype = scalar_type(meta.dtype).ok_or_else(|| bad(format!("unknown ScalarType id {}", meta.dtype)))?;
        let sizes = meta.sizes.iter().map(|s| concrete(fqn, "size", s)).collect::<Result<Vec<_>>>()?;
        let strides = meta.strides.iter().map(|s| concrete(fqn, "stride", s)).collect::<Result<Vec<_>>>()?;
        let offset = concrete(fqn, "storage_offset", &meta.storage_offset)?;
        if sizes.len() != strides.len() || sizes.iter().any(|&s| s < 0) || offset < 0 {
            return Err(bad(format!("inconsistent sizes {sizes:?} / strides {strides:?} / offset {offset}")));
        }
        let key = (path.to_string(), sizes.clone(), strides.clone(), offset, meta.dtype);
        let es = dtype.size();
        let numel: i64 = sizes.iter().product();
        let nbytes = numel as usize * es;
        if numel == 0 {
            return Ok(Weight { dtype, sizes, raw: Bytes::new(), key });
        }
        if storage.is_empty() {
            // A 0-byte payload stands for a zero-size storage; torch materialises zeros.
            return Ok(Weight { dtype, sizes, raw: Bytes::from(vec![0u8; nbytes]), key });
        }
        // The furthest element the view reaches must lie inside the stored bytes.
        let last: i64 = offset + sizes.iter().zip(&strides).map(|(&n, &s)| (n - 1) * s.max(0)).sum::<i64>();
        if strides.iter().any(|&s| s < 0) || (last as usize + 1) * es > storage.len() {
            return Err(bad(format!(
                "view (sizes {sizes:?}, strides {strides:?}, offset {offset}) reaches past the {} stored bytes of {path}",
                storage.len()
            )));
        }
        let contiguous = {
            let mut expect = 1i64;
            let mut ok = true;
            for (&n, &s) in sizes.iter().zip(&strides).rev() {
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
            let mut index = vec![0i64; sizes.len()];
            for _ in 0..numel {
                let pos = offset + index.iter().zip(&strides).map(|(i, s)| i * s).sum::<i64>();
                let p = pos as usize * es;
                out.extend_from_slice(&storage[p..p + es]);
                for d in (0..sizes.len()).rev() {
                    index[d] += 1;
                    if index[d] < sizes[d] {
                        break;
                    }
                    index[d] = 0;
                }
            }
            Bytes::from(out)
        };
        Ok(Weight { dtype, sizes, raw, key })
    }
}
