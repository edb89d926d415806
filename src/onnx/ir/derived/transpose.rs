//! The 2-D transpose folded weights are computed with (a `Transpose` of a weight folded into a
//! new initializer): element moves in cache-sized blocks, and on x86-64 CPUs with AVX 8 × 8 blocks
//! of 4-byte elements moved with vector shuffles. Both give the same bytes (tests compare them);
//! the vector kernel is the one that keeps hf_llama's export time (reports/performance.md).

/// Output elements `start..` of the transpose of a `rows × cols` source (output is `cols × rows`),
/// as many as `dst` holds, with the vector kernel where the CPU has one.
pub(super) fn chunk<const E: usize>(src: &[u8], dst: &mut [u8], rows: usize, cols: usize, start: usize) {
    rows_with::<E>(src, dst, rows, cols, start, avx::available())
}

/// [`chunk`], the vector kernel used if `vector` (and the elements are 4 bytes): whole output rows
/// inside the chunk in 8 × 8 blocks by [`avx`], the rest (other sizes, ragged edges, no AVX) in
/// blocks of 8 source rows × one column by [`block`]; partial rows at the chunk's ends element by
/// element.
fn rows_with<const E: usize>(src: &[u8], dst: &mut [u8], rows: usize, cols: usize, start: usize, vector: bool) {
    let count = dst.len() / E;
    let end = start + count;
    let one = |dst: &mut [u8], k: usize| {
        let (j, i) = (k / rows, k % rows);
        let at = (i * cols + j) * E;
        let o = (k - start) * E;
        dst[o..o + E].copy_from_slice(&src[at..at + E]);
    };
    // Whole output rows j0..j1.
    let j0 = start.div_ceil(rows);
    let j1 = (end / rows).max(j0);
    for k in start..(j0 * rows).min(end) {
        one(dst, k);
    }
    if j1 > j0 {
        let whole = &mut dst[(j0 * rows - start) * E..(j1 * rows - start) * E];
        // The blocks the vector kernel moved: source rows 0..r8, output rows j0..j0 + w8.
        let (r8, w8) = match E {
            4 if vector && avx::available() => {
                let (r8, w8) = (rows / 8 * 8, (j1 - j0) / 8 * 8);
                avx::blocks_4(src, whole, rows, cols, j0, r8, w8);
                (r8, w8)
            }
            _ => (0, 0),
        };
        block::<E>(src, whole, rows, cols, j0, r8..rows, j0..j0 + w8);
        block::<E>(src, whole, rows, cols, j0, 0..rows, j0 + w8..j1);
    }
    for k in (j1 * rows).max(j0 * rows).max(start)..end {
        one(dst, k);
    }
}

/// Output rows `js` (of a chunk whose first row is `j0`), source rows `is`, in blocks of 8 source
/// rows × one column (each output row written in runs of 8 elements).
fn block<const E: usize>(
    src: &[u8],
    out: &mut [u8],
    rows: usize,
    cols: usize,
    j0: usize,
    is: std::ops::Range<usize>,
    js: std::ops::Range<usize>,
) {
    const B: usize = 8;
    for i0 in is.clone().step_by(B) {
        let i1 = (i0 + B).min(is.end);
        for j in js.clone() {
            let o = (j - j0) * rows;
            for (k, e) in out[(o + i0) * E..(o + i1) * E].chunks_exact_mut(E).enumerate() {
                let at = ((i0 + k) * cols + j) * E;
                e.copy_from_slice(&src[at..at + E]);
            }
        }
    }
}

/// 8 × 8 block transposes of 4-byte elements with AVX shuffles: pure moves, so the bytes are
/// exactly those of an element-by-element copy (NaN payloads included).
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx")
    }

    /// Into `out` (output rows `j0..j0 + w8` of a `cols × rows` transpose, `rows` elements each):
    /// source rows `0..r8` of every one of those output rows. `r8` and `w8` are multiples of 8.
    pub fn blocks_4(src: &[u8], out: &mut [u8], rows: usize, cols: usize, j0: usize, r8: usize, w8: usize) {
        // Every access below stays inside these bounds.
        assert!(available() && r8.is_multiple_of(8) && w8.is_multiple_of(8) && r8 <= rows && j0 + w8 <= cols);
        let bytes = |a: usize, b: usize| a.checked_mul(b).and_then(|n| n.checked_mul(4));
        assert!(bytes(rows, cols).is_some_and(|n| src.len() >= n) && bytes(w8, rows).is_some_and(|n| out.len() >= n));
        // SAFETY: AVX is available and every block lies inside the slices (asserted above).
        unsafe { blocks(src.as_ptr().cast::<f32>(), out.as_mut_ptr().cast::<f32>(), rows, cols, j0, r8, w8) }
    }

    /// The loops, compiled for AVX so that `block` is inlined into them.
    #[target_feature(enable = "avx")]
    unsafe fn blocks(s: *const f32, d: *mut f32, rows: usize, cols: usize, j0: usize, r8: usize, w8: usize) {
        for i0 in (0..r8).step_by(8) {
            for j in (0..w8).step_by(8) {
                // Source rows i0..i0 + 8 at columns j0 + j..j0 + j + 8; output rows j..j + 8 at
                // columns i0..i0 + 8; unaligned loads and stores.
                block(s.add(i0 * cols + j0 + j), cols, d.add(j * rows + i0), rows);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn block(s: *const f32, ss: usize, d: *mut f32, ds: usize) {
        // Explicit loads, not a closure: a closure would not inherit the AVX target feature.
        let r = [
            _mm256_loadu_ps(s),
            _mm256_loadu_ps(s.add(ss)),
            _mm256_loadu_ps(s.add(2 * ss)),
            _mm256_loadu_ps(s.add(3 * ss)),
            _mm256_loadu_ps(s.add(4 * ss)),
            _mm256_loadu_ps(s.add(5 * ss)),
            _mm256_loadu_ps(s.add(6 * ss)),
            _mm256_loadu_ps(s.add(7 * ss)),
        ];
        let t0 = _mm256_unpacklo_ps(r[0], r[1]);
        let t1 = _mm256_unpackhi_ps(r[0], r[1]);
        let t2 = _mm256_unpacklo_ps(r[2], r[3]);
        let t3 = _mm256_unpackhi_ps(r[2], r[3]);
        let t4 = _mm256_unpacklo_ps(r[4], r[5]);
        let t5 = _mm256_unpackhi_ps(r[4], r[5]);
        let t6 = _mm256_unpacklo_ps(r[6], r[7]);
        let t7 = _mm256_unpackhi_ps(r[6], r[7]);
        let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
        let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
        let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
        let rows = [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ];
        for (k, row) in rows.into_iter().enumerate() {
            _mm256_storeu_ps(d.add(k * ds), row);
        }
    }
}

/// Where AVX is not available: no vector kernel ([`rows_with`] never calls it then).
#[cfg(not(target_arch = "x86_64"))]
mod avx {
    pub fn available() -> bool {
        false
    }

    pub fn blocks_4(_: &[u8], _: &mut [u8], _: usize, _: usize, _: usize, _: usize, _: usize) {
        unreachable!("no vector kernel on this architecture")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Element `k` of the transpose, one at a time.
    fn reference<const E: usize>(src: &[u8], rows: usize, cols: usize) -> Vec<u8> {
        let mut out = vec![0u8; rows * cols * E];
        for k in 0..rows * cols {
            let (j, i) = (k / rows, k % rows);
            out[k * E..k * E + E].copy_from_slice(&src[(i * cols + j) * E..(i * cols + j) * E + E]);
        }
        out
    }

    fn check<const E: usize>(rows: usize, cols: usize) {
        let src: Vec<u8> = (0..rows * cols * E).map(|i| (i * 131 % 251) as u8).collect();
        let want = reference::<E>(&src, rows, cols);
        let n = rows * cols;
        // Whole, and chunks that start and end mid-row.
        for (a, b) in [(0, n), (1, n), (n / 3, n / 2 + 7), (n - 1, n), (0, rows * 9 + 3), (5, rows * 17 + 2)] {
            let b = b.min(n);
            for vector in [false, true] {
                let mut out = vec![0u8; (b - a) * E];
                rows_with::<E>(&src, &mut out, rows, cols, a, vector);
                assert!(out == want[a * E..b * E], "{rows} x {cols}, elements {a}..{b}, vector {vector}");
            }
        }
    }

    #[test]
    fn vector_and_scalar_transposes_equal_element_moves() {
        // Exactly one 8 × 8 block, ragged edges both ways, tall and wide, ViT-B/16's MLP weights.
        for (rows, cols) in [(8, 8), (37, 29), (13, 8), (24, 41), (40, 17), (3072, 768), (768, 3072), (2, 9)] {
            check::<4>(rows, cols);
        }
        check::<2>(33, 129);
        check::<8>(17, 99);
        check::<1>(9, 31);
    }
}
