//! XXH64 (seed 0) of the external data file, streamed as its bytes are written: the data file's
//! name carries it (`model.onnx.<16 hex digits>.data`, see [`super::files`]), so that a data file
//! of other contents never takes the name a model already refers to, and the same contents always
//! take the same name (the same input gives the same bytes). XXH64 is specified
//! (github.com/Cyan4973/xxHash, doc/xxhash_spec.md), fast (the writer thread hashes while the
//! encoder fills the next buffers) and is not a security measure here: the data is the user's own.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

/// The streaming state: four lanes over 32-byte stripes, and the bytes of a partial stripe.
#[derive(Clone)]
pub(crate) struct Xxh64 {
    lanes: [u64; 4],
    pending: [u8; 32],
    pending_len: usize,
    total: u64,
}

fn round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(P2)).rotate_left(31).wrapping_mul(P1)
}

fn merge(acc: u64, lane: u64) -> u64 {
    (acc ^ round(0, lane)).wrapping_mul(P1).wrapping_add(P4)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl Default for Xxh64 {
    fn default() -> Self {
        Xxh64 { lanes: [P1.wrapping_add(P2), P2, 0, 0u64.wrapping_sub(P1)], pending: [0; 32], pending_len: 0, total: 0 }
    }
}

impl Xxh64 {
    fn stripe(&mut self, s: &[u8]) {
        for (k, lane) in self.lanes.iter_mut().enumerate() {
            *lane = round(*lane, u64_at(s, 8 * k));
        }
    }

    pub fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.pending_len > 0 {
            let n = (32 - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + n].copy_from_slice(&bytes[..n]);
            self.pending_len += n;
            bytes = &bytes[n..];
            if self.pending_len < 32 {
                return;
            }
            let full = self.pending;
            self.stripe(&full);
            self.pending_len = 0;
        }
        let mut stripes = bytes.chunks_exact(32);
        for s in &mut stripes {
            self.stripe(s);
        }
        let rest = stripes.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    pub fn finish(&self) -> u64 {
        let [v1, v2, v3, v4] = self.lanes;
        let mut h = if self.total >= 32 {
            let h = v1.rotate_left(1).wrapping_add(v2.rotate_left(7)).wrapping_add(v3.rotate_left(12));
            let h = h.wrapping_add(v4.rotate_left(18));
            [v1, v2, v3, v4].into_iter().fold(h, merge)
        } else {
            P5
        };
        h = h.wrapping_add(self.total);
        let mut rest = &self.pending[..self.pending_len];
        while rest.len() >= 8 {
            h = (h ^ round(0, u64_at(rest, 0))).rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
            rest = &rest[8..];
        }
        if rest.len() >= 4 {
            let w = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as u64;
            h = (h ^ w.wrapping_mul(P1)).rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
            rest = &rest[4..];
        }
        for &b in rest {
            h = (h ^ (b as u64).wrapping_mul(P5)).rotate_left(11).wrapping_mul(P1);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(P2);
        h ^= h >> 29;
        h = h.wrapping_mul(P3);
        h ^ (h >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::Xxh64;

    fn xxh64(b: &[u8]) -> u64 {
        let mut h = Xxh64::default();
        h.update(b);
        h.finish()
    }

    /// The reference implementation's values (python-xxhash 3.x, `xxhash.xxh64(b).hexdigest()`).
    #[test]
    fn matches_the_reference_and_any_split_of_the_input() {
        let long: Vec<u8> = (0..100_003u32).map(|i| (i * 7 % 251) as u8).collect();
        let ramp: Vec<u8> = (0..5).flat_map(|_| 0..=255u8).collect();
        let cases: [(&[u8], u64); 6] = [
            (b"", 0xef46db3751d8e999),
            (b"a", 0xd24ec4f1a98c6e5b),
            (b"abc", 0x44bc2cf5ad770999),
            (b"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1),
            (&ramp, 0xafc184ad7938a354),
            (&long, 0x1d0edb76d73b0886),
        ];
        for (bytes, want) in cases {
            assert_eq!(xxh64(bytes), want, "{} bytes", bytes.len());
        }
        // Streamed in pieces of every size around a stripe: the same value.
        for piece in [1, 3, 8, 31, 32, 33, 100, 4099] {
            let mut h = Xxh64::default();
            long.chunks(piece).for_each(|c| h.update(c));
            assert_eq!(h.finish(), 0x1d0edb76d73b0886, "pieces of {piece}");
        }
    }
}
