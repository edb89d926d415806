//! Special functions: gamma family (lgamma, digamma, polygamma, mvlgamma, Hurwitz zeta, regularized
//! incomplete gamma), error-function family (erf, erfc, erfcx, log_ndtr, erfinv, ndtri), orthogonal
//! polynomials (Chebyshev T/U/V/W and shifted, Hermite H/He, Laguerre, Legendre). Bessel and Airy
//! functions are in `bessel.rs`.
//!
//! ONNX has none of them (except Erf, float32 only in onnxruntime). Each is evaluated in float64
//! with a full-precision algorithm (Lanczos, the asymptotic series torch's `calc_digamma` /
//! `calc_trigamma` / Cephes `zeta` use, Cephes' rational approximations of erf / erfc, three-term
//! recurrences in an ONNX Loop) and rounded once to the result type.

use super::float64::{in_float64, polevl, D};
use crate::translate::prelude::*;
use crate::translations;
use crate::translations::shared::pointwise::{float_t, log1p_f};

const PI: f64 = std::f64::consts::PI;

/// `x^n + c[0]·x^(n-1) + ... + c[n-1]` (Horner with an implicit leading 1).
fn p1evl(op: &mut Builder, x: Value, c: &[f64]) -> Value {
    let mut v = vec![1.0];
    v.extend_from_slice(c);
    polevl(op, x, &v)
}

fn is_neg_or_zero_int(op: &mut Builder, x: Value) -> Value {
    let zero = op.scalar(D, 0.0);
    let le = op.LessOrEqual(x, zero);
    let f = op.Floor(x);
    let int = op.Equal(x, f);
    op.And(le, int)
}

/// ln Γ(x) for float64 `x` (Lanczos, g = 7, with reflection below 1/2).
fn lgamma_d(op: &mut Builder, x: Value) -> Value {
    const G: [f64; 9] = [
        0.999_999_999_999_809_93,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_13,
        -176.615_029_162_140_59,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_571_6e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let half = op.scalar(D, 0.5);
    let one = op.scalar(D, 1.0);
    let small = op.Less(x, half);
    // y >= 1/2 is the argument the series sees: x, or 1 - x for the reflection.
    let omx = op.Sub(one, x);
    let y = op.Where(small, omx, x);
    let z = op.Sub(y, one);
    let mut a = op.scalar(D, G[0]);
    for (i, &g) in G.iter().enumerate().skip(1) {
        let ki = op.scalar(D, i as f64);
        let den = op.Add(z, ki);
        let kg = op.scalar(D, g);
        let term = op.Div(kg, den);
        a = op.Add(a, term);
    }
    let g75 = op.scalar(D, 7.5);
    let t = op.Add(z, g75);
    let lt = op.Log(t);
    let zh = op.Add(z, half);
    let p = op.Mul(zh, lt);
    let p = op.Sub(p, t);
    let la = op.Log(a);
    let p = op.Add(p, la);
    let c = op.scalar(D, 0.5 * (2.0 * PI).ln());
    let lg = op.Add(p, c);
    // Reflection: ln Γ(x) = ln π - ln|sin(πx)| - ln Γ(1 - x), with sin of the reduced argument.
    let r = op.Round(x);
    let frac = op.Sub(x, r);
    let kpi = op.scalar(D, PI);
    let arg = op.Mul(kpi, frac);
    let s = op.Sin(arg);
    let s = op.Abs(s);
    let ls = op.Log(s);
    let lpi = op.scalar(D, PI.ln());
    let refl = op.Sub(lpi, ls);
    let refl = op.Sub(refl, lg);
    let res = op.Where(small, refl, lg);
    // Poles and infinities: +inf.
    let inf = op.scalar(D, f64::INFINITY);
    let pole = is_neg_or_zero_int(op, x);
    let res = op.Where(pole, inf, res);
    let is_inf = op.IsInf(x).out();
    op.Where(is_inf, inf, res)
}

/// ψ(x) for float64 `x`, as torch's `calc_digamma` computes it.
fn digamma_d(op: &mut Builder, x: Value) -> Value {
    const A: [f64; 7] = [
        8.333_333_333_333_333_333_33E-2,
        -2.109_279_609_279_609_279_61E-2,
        7.575_757_575_757_575_757_58E-3,
        -4.166_666_666_666_666_666_67E-3,
        3.968_253_968_253_968_253_97E-3,
        -8.333_333_333_333_333_333_33E-3,
        8.333_333_333_333_333_333_33E-2,
    ];
    let zero = op.scalar(D, 0.0);
    let one = op.scalar(D, 1.0);
    let ten = op.scalar(D, 10.0);
    let neg = op.Less(x, zero);
    let omx = op.Sub(one, x);
    let mut y = op.Where(neg, omx, x);
    // Push y to >= 10: at most ten steps for y > 0.
    let mut acc = op.scalar(D, 0.0);
    for _ in 0..10 {
        let lt = op.Less(y, ten);
        let inv = op.Reciprocal(y);
        let sub = op.Sub(acc, inv);
        acc = op.Where(lt, sub, acc);
        let y1 = op.Add(y, one);
        y = op.Where(lt, y1, y);
    }
    let y2 = op.Mul(y, y);
    let z = op.Reciprocal(y2);
    let pz = polevl(op, z, &A);
    let series = op.Mul(z, pz);
    let big = op.scalar(D, 1.0e17);
    let huge = op.GreaterOrEqual(y, big);
    let series = op.Where(huge, zero, series);
    let ly = op.Log(y);
    let halfinv = op.Reciprocal(y);
    let h = op.scalar(D, 0.5);
    let halfinv = op.Mul(halfinv, h);
    let r = op.Add(acc, ly);
    let r = op.Sub(r, halfinv);
    let r = op.Sub(r, series);
    let psi10 = op.scalar(D, 2.251_752_589_066_721_107_64);
    let at10 = op.Add(acc, psi10);
    let is10 = op.Equal(y, ten);
    let r = op.Where(is10, at10, r);
    // Reflection for x < 0: ψ(1 - x) - π / tan(π · frac(x)).
    let tr = op.Floor(x);
    let cl = op.Ceil(x);
    let ipart = op.Where(neg, cl, tr);
    let frac = op.Sub(x, ipart);
    let kpi = op.scalar(D, PI);
    let arg = op.Mul(kpi, frac);
    let (s, c) = (op.Sin(arg), op.Cos(arg));
    let tan = op.Div(s, c);
    let corr = op.Div(kpi, tan);
    let refl = op.Sub(r, corr);
    let r = op.Where(neg, refl, r);
    // Negative integers: NaN; ±0: ∓inf.
    let nan = op.scalar(D, f64::NAN);
    let is_int = op.Equal(x, ipart);
    let neg_int = op.And(neg, is_int);
    let r = op.Where(neg_int, nan, r);
    let is0 = op.Equal(x, zero);
    let inv = op.Reciprocal(x);
    let neg0 = op.Less(inv, zero);
    let (pinf, minf) = (op.scalar(D, f64::INFINITY), op.scalar(D, f64::NEG_INFINITY));
    let zval = op.Where(neg0, pinf, minf);
    op.Where(is0, zval, r)
}

/// ψ'(x) for float64 `x`, as torch's `calc_trigamma` computes it.
fn trigamma_d(op: &mut Builder, x: Value) -> Value {
    let half = op.scalar(D, 0.5);
    let one = op.scalar(D, 1.0);
    let small = op.Less(x, half);
    let kpi = op.scalar(D, PI);
    let arg = op.Mul(kpi, x);
    let s = op.Sin(arg);
    let s2 = op.Mul(s, s);
    let pi2 = op.scalar(D, PI * PI);
    let refl = op.Div(pi2, s2);
    let omx = op.Sub(one, x);
    let mut y = op.Where(small, omx, x);
    let mut acc = op.scalar(D, 0.0);
    for _ in 0..6 {
        let y2 = op.Mul(y, y);
        let inv = op.Reciprocal(y2);
        acc = op.Add(acc, inv);
        y = op.Add(y, one);
    }
    // (1 + 1/(2y) + ixx·(1/6 - ixx·(1/30 - ixx/42))) / y
    let y2 = op.Mul(y, y);
    let ixx = op.Reciprocal(y2);
    let c42 = op.scalar(D, 1.0 / 42.0);
    let t = op.Mul(ixx, c42);
    let c30 = op.scalar(D, 1.0 / 30.0);
    let t = op.Sub(c30, t);
    let t = op.Mul(ixx, t);
    let c6 = op.scalar(D, 1.0 / 6.0);
    let t = op.Sub(c6, t);
    let t = op.Mul(ixx, t);
    let two = op.scalar(D, 2.0);
    let y2x = op.Mul(two, y);
    let inv2 = op.Reciprocal(y2x);
    let t = op.Add(t, inv2);
    let t = op.Add(t, one);
    let t = op.Div(t, y);
    let total = op.Add(acc, t);
    // x < 1/2: -( -π²/sin² + ψ'(1 - x) ) = π²/sin² - ψ'(1 - x)
    let reflected = op.Sub(refl, total);
    op.Where(small, reflected, total)
}

/// Hurwitz ζ(s, q) for float64 `s > 1` (a constant or a tensor broadcasting with `q`) and float64
/// `q`, as Cephes' `zeta` (which torch uses) computes it: a direct sum until the argument passes 9,
/// then Euler–Maclaurin. Domain checks on `s` are the caller's.
fn zeta_d(op: &mut Builder, s: Value, q: Value) -> OpResult<Value> {
    const A: [f64; 12] = [
        12.0,
        -720.0,
        30240.0,
        -1209600.0,
        47900160.0,
        -1.892_437_580_318_379_160_6e9,
        7.472_424_96e10,
        -2.950_130_727_918_164_224e12,
        1.164_678_281_435_006_724_9e14,
        -4.597_978_722_407_472_610_5e15,
        1.815_210_540_194_354_677_3e17,
        -7.166_165_256_175_667_011_3e18,
    ];
    // Terms per element: I = max(9, floor(9 - q) + 1); the sum runs over j = 0..=I.
    let nine = op.scalar(D, 9.0);
    let one = op.scalar(D, 1.0);
    let fin_inf = op.IsInf(q).out();
    let fin_nan = op.IsNaN(q);
    let bad = op.Or(fin_inf, fin_nan);
    let qf = op.Where(bad, nine, q);
    let nmq = op.Sub(nine, qf);
    let fl = op.Floor(nmq);
    let fl = op.Add(fl, one);
    let count = op.Max(&[fl, nine]);
    // The longest sum over all elements decides the width of the broadcast.
    let flat = as_1d(op, count);
    let nine_1 = as_1d(op, nine);
    let flat = op.Concat(&[flat, nine_1]).axis(0).out();
    let top = op.ReduceMax(flat, None).keepdims(0).out();
    let zero = op.scalar(D, 0.0);
    let top1 = op.Add(top, one);
    let js = op.Range(zero, top1, one);
    let axis = op.const_i64s(&[-1]);
    let qu = op.Unsqueeze(q, axis);
    let cu = op.Unsqueeze(count, axis);
    let base = op.Add(qu, js);
    let ms = op.Neg(s);
    let su = op.Unsqueeze(ms, axis);
    let terms = op.Pow(base, su);
    let keep = op.LessOrEqual(js, cu);
    let terms = op.Where(keep, terms, zero);
    let sum = op.ReduceSum(terms, Some(axis)).keepdims(0).out();
    // Tail at w = q + I: b·w/(s-1) - b/2 + Σ a_i·b / (A_i · w^(2i+1)).
    let w = op.Add(q, count);
    let b = op.Pow(w, ms);
    let bw = op.Mul(b, w);
    let sm1 = op.Sub(s, one);
    let t1 = op.Div(bw, sm1);
    let sum = op.Add(sum, t1);
    let half = op.scalar(D, 0.5);
    let hb = op.Mul(half, b);
    let mut sum = op.Sub(sum, hb);
    let winv = op.Reciprocal(w);
    let winv2 = op.Mul(winv, winv);
    let mut a = op.scalar(D, 1.0);
    let mut kk = 0.0;
    let mut bpow = op.Mul(b, winv);
    for ai in A {
        let kc = op.scalar(D, kk);
        let sk = op.Add(s, kc);
        a = op.Mul(a, sk);
        let aik = op.scalar(D, ai);
        let c = op.Div(a, aik);
        let term = op.Mul(c, bpow);
        sum = op.Add(sum, term);
        kk += 1.0;
        let kc = op.scalar(D, kk);
        let sk = op.Add(s, kc);
        a = op.Mul(a, sk);
        kk += 1.0;
        bpow = op.Mul(bpow, winv2);
    }
    // q a non-positive integer: a pole.
    let inf = op.scalar(D, f64::INFINITY);
    let pole = is_neg_or_zero_int(op, q);
    Ok(op.Where(pole, inf, sum))
}

/// erf(x) for |x| <= 1 (Cephes: x·T(x²)/U(x²)).
fn erf_small(op: &mut Builder, x: Value) -> Value {
    const T: [f64; 5] = [
        9.604_973_739_870_516_387_49E0,
        9.002_601_972_038_426_892_17E1,
        2.232_005_345_946_843_192_26E3,
        7.003_325_141_128_050_754_73E3,
        5.559_230_130_103_949_627_68E4,
    ];
    const U: [f64; 5] = [
        3.356_171_416_475_031_996_47E1,
        5.213_579_497_801_526_797_95E2,
        4.594_323_829_709_801_279_87E3,
        2.262_900_006_138_909_342_46E4,
        4.926_739_426_086_359_210_86E4,
    ];
    let z = op.Mul(x, x);
    let p = polevl(op, z, &T);
    let q = p1evl(op, z, &U);
    let r = op.Div(p, q);
    op.Mul(x, r)
}

/// exp(x²)·erfc(x) for x >= 1 (Cephes' rational approximations, and the asymptote 1/(x√π)).
fn erfcx_large(op: &mut Builder, x: Value) -> Value {
    const P: [f64; 9] = [
        2.461_969_814_735_305_125_24E-10,
        5.641_895_648_310_688_219_77E-1,
        7.463_210_564_422_699_126_87E0,
        4.863_719_709_856_813_666_14E1,
        1.965_208_329_560_770_982_42E2,
        5.264_451_949_954_773_586_31E2,
        9.345_285_271_719_576_075_40E2,
        1.027_551_886_895_157_102_72E3,
        5.575_353_353_693_993_275_26E2,
    ];
    const Q: [f64; 8] = [
        1.322_819_511_547_449_925_08E1,
        8.670_721_408_859_897_423_29E1,
        3.549_377_788_878_198_910_62E2,
        9.757_085_017_432_054_897_53E2,
        1.823_909_166_879_097_362_89E3,
        2.246_337_608_187_109_817_92E3,
        1.656_663_091_941_613_501_82E3,
        5.575_353_408_177_276_755_46E2,
    ];
    const R: [f64; 6] = [
        5.641_895_835_477_550_739_84E-1,
        1.275_366_707_599_781_044_16E0,
        5.019_050_422_511_804_774_14E0,
        6.160_210_979_930_535_851_95E0,
        7.409_742_699_504_489_391_60E0,
        2.978_866_653_721_002_406_70E0,
    ];
    const S: [f64; 6] = [
        2.260_528_632_201_172_765_90E0,
        9.396_035_249_380_014_346_73E0,
        1.204_895_398_080_966_566_05E1,
        1.708_144_507_475_658_972_22E1,
        9.608_968_090_632_858_781_98E0,
        3.369_076_451_000_815_160_50E0,
    ];
    let p = polevl(op, x, &P);
    let q = p1evl(op, x, &Q);
    let mid = op.Div(p, q);
    let r = polevl(op, x, &R);
    let s = p1evl(op, x, &S);
    let far = op.Div(r, s);
    let eight = op.scalar(D, 8.0);
    let lt8 = op.Less(x, eight);
    let v = op.Where(lt8, mid, far);
    // Beyond 1e7 the polynomials overflow; 1/(x√π) is exact to 1/(2x²) there.
    let c = op.scalar(D, 1.0 / PI.sqrt());
    let asym = op.Div(c, x);
    let lim = op.scalar(D, 1e7);
    let huge = op.Greater(x, lim);
    op.Where(huge, asym, v)
}

/// erfc(x) in float64.
fn erfc_d(op: &mut Builder, x: Value) -> Value {
    let one = op.scalar(D, 1.0);
    let two = op.scalar(D, 2.0);
    let ax = op.Abs(x);
    let lt1 = op.Less(ax, one);
    let es = erf_small(op, x);
    let near = op.Sub(one, es);
    // |x| >= 1: exp(-x²)·erfcx(|x|), reflected for x < 0. (|x| < 1 lanes take `near`.)
    let safe = op.Where(lt1, one, ax);
    let cx = erfcx_large(op, safe);
    let x2 = op.Mul(ax, ax);
    let nx2 = op.Neg(x2);
    let e = op.Exp(nx2);
    let tail = op.Mul(e, cx);
    let zero = op.scalar(D, 0.0);
    let neg = op.Less(x, zero);
    let refl = op.Sub(two, tail);
    let far = op.Where(neg, refl, tail);
    let r = op.Where(lt1, near, far);
    // ±inf: 0 and 2 (the products above give NaN).
    let pinf = op.IsInf(x).detect_negative(0).out();
    let minf = op.IsInf(x).detect_positive(0).out();
    let r = op.Where(pinf, zero, r);
    op.Where(minf, two, r)
}

/// erfcx(x) = exp(x²)·erfc(x) in float64.
fn erfcx_d(op: &mut Builder, x: Value) -> Value {
    let one = op.scalar(D, 1.0);
    let lt1 = op.Less(x, one);
    let safe = op.Where(lt1, one, x);
    let big = erfcx_large(op, safe);
    let x2 = op.Mul(x, x);
    let e = op.Exp(x2);
    let c = erfc_d(op, x);
    let small = op.Mul(e, c);
    let r = op.Where(lt1, small, big);
    // +inf: 0; -inf: inf.
    let zero = op.scalar(D, 0.0);
    let pinf = op.IsInf(x).detect_negative(0).out();
    op.Where(pinf, zero, r)
}

/// Φ⁻¹(y) for float64 `y` (Cephes `ndtri`, which torch uses).
fn ndtri_d(op: &mut Builder, y0: Value) -> Value {
    const P0: [f64; 5] = [
        -5.996_335_010_141_078_952_67E1,
        9.800_107_541_859_996_615_36E1,
        -5.667_628_574_690_702_934_39E1,
        1.393_126_093_872_796_795_03E1,
        -1.239_165_838_673_812_580_16E0,
    ];
    const Q0: [f64; 8] = [
        1.954_488_583_381_417_598_34E0,
        4.676_279_128_988_815_384_53E0,
        8.636_024_213_908_905_905_75E1,
        -2.254_626_878_541_193_705_27E2,
        2.002_602_123_800_606_603_59E2,
        -8.203_722_561_683_333_399_12E1,
        1.590_562_251_262_116_955_15E1,
        -1.183_316_211_213_300_031_42E0,
    ];
    const P1: [f64; 9] = [
        4.055_448_923_059_624_199_23E0,
        3.152_510_945_998_938_661_54E1,
        5.716_281_922_464_212_881_62E1,
        4.408_050_738_932_008_347_00E1,
        1.468_495_619_288_580_240_14E1,
        2.186_633_068_507_902_675_39E0,
        -1.402_560_791_713_544_958_75E-1,
        -3.504_246_268_278_482_034_18E-2,
        -8.574_567_851_546_854_136_11E-4,
    ];
    const Q1: [f64; 8] = [
        1.577_998_832_564_667_497_31E1,
        4.539_076_351_288_792_105_84E1,
        4.131_720_382_546_720_304_40E1,
        1.504_253_856_929_075_034_08E1,
        2.504_649_462_083_094_159_79E0,
        -1.421_829_228_547_877_885_74E-1,
        -3.808_064_076_915_782_771_94E-2,
        -9.332_594_808_954_574_273_72E-4,
    ];
    const P2: [f64; 9] = [
        3.237_748_917_769_460_359_70E0,
        6.915_228_890_689_842_116_95E0,
        3.938_810_252_924_744_434_15E0,
        1.333_034_608_158_075_423_89E0,
        2.014_853_895_491_790_815_38E-1,
        1.237_166_348_178_200_213_58E-2,
        3.015_815_535_082_354_160_07E-4,
        2.658_069_746_867_375_508_32E-6,
        6.239_745_391_849_832_937_30E-9,
    ];
    const Q2: [f64; 8] = [
        6.024_270_393_647_420_142_55E0,
        3.679_835_638_561_608_594_03E0,
        1.377_020_994_890_813_302_71E0,
        2.162_369_935_944_966_358_90E-1,
        1.342_040_060_885_431_890_37E-2,
        3.280_144_646_821_277_391_04E-4,
        2.892_478_647_453_806_839_36E-6,
        6.790_194_080_099_812_744_25E-9,
    ];
    let one = op.scalar(D, 1.0);
    let zero = op.scalar(D, 0.0);
    let e2 = op.scalar(D, 0.135_335_283_236_612_691_89);
    let hi_cut = op.scalar(D, 1.0 - 0.135_335_283_236_612_691_89);
    let upper = op.Greater(y0, hi_cut);
    let omy = op.Sub(one, y0);
    let y = op.Where(upper, omy, y0);
    // Central region: y - 1/2 rational in (y - 1/2)².
    let half = op.scalar(D, 0.5);
    let yc = op.Sub(y0, half);
    let y2 = op.Mul(yc, yc);
    let p = polevl(op, y2, &P0);
    let q = p1evl(op, y2, &Q0);
    let r = op.Div(p, q);
    let r = op.Mul(y2, r);
    let r = op.Mul(yc, r);
    let xc = op.Add(yc, r);
    let s2pi = op.scalar(D, (2.0 * PI).sqrt());
    let central = op.Mul(xc, s2pi);
    // Tails: x = sqrt(-2 ln y), x0 - z·P(z)/Q(z) with z = 1/x.
    let pos = op.Greater(y, zero);
    let safe = op.Where(pos, y, half);
    let ly = op.Log(safe);
    let m2 = op.scalar(D, -2.0);
    let x = op.Mul(m2, ly);
    let x = op.Sqrt(x);
    let lx = op.Log(x);
    let lxx = op.Div(lx, x);
    let x0 = op.Sub(x, lxx);
    let z = op.Reciprocal(x);
    let p1 = polevl(op, z, &P1);
    let q1 = p1evl(op, z, &Q1);
    let r1 = op.Div(p1, q1);
    let p2 = polevl(op, z, &P2);
    let q2 = p1evl(op, z, &Q2);
    let r2 = op.Div(p2, q2);
    let eight = op.scalar(D, 8.0);
    let lt8 = op.Less(x, eight);
    let rr = op.Where(lt8, r1, r2);
    let x1 = op.Mul(z, rr);
    let tail = op.Sub(x0, x1);
    let ntail = op.Neg(tail);
    let tail = op.Where(upper, tail, ntail);
    let in_center = op.Greater(y, e2);
    let r = op.Where(in_center, central, tail);
    // Ends and outside (0, 1).
    let (pinf, minf, nan) = (op.scalar(D, f64::INFINITY), op.scalar(D, f64::NEG_INFINITY), op.scalar(D, f64::NAN));
    let is0 = op.Equal(y0, zero);
    let is1 = op.Equal(y0, one);
    let below = op.Less(y0, zero);
    let above = op.Greater(y0, one);
    let out = op.Or(below, above);
    let r = op.Where(is0, minf, r);
    let r = op.Where(is1, pinf, r);
    op.Where(out, nan, r)
}

/// erf(x) in float64 over the whole line.
fn erf_d(op: &mut Builder, x: Value) -> Value {
    let one = op.scalar(D, 1.0);
    let ax = op.Abs(x);
    let lt1 = op.Less(ax, one);
    let s = erf_small(op, x);
    let c = erfc_d(op, x);
    let big = op.Sub(one, c);
    op.Where(lt1, s, big)
}

/// erf⁻¹(y) in float64: Φ⁻¹((y + 1)/2)/√2, polished by two Newton steps on erf.
fn erfinv_d(op: &mut Builder, y: Value) -> Value {
    let one = op.scalar(D, 1.0);
    let half = op.scalar(D, 0.5);
    let p = op.Add(y, one);
    let p = op.Mul(p, half);
    let n = ndtri_d(op, p);
    let r2 = op.scalar(D, std::f64::consts::FRAC_1_SQRT_2);
    let mut x = op.Mul(n, r2);
    let c = op.scalar(D, 2.0 / PI.sqrt());
    for _ in 0..2 {
        let e = erf_d(op, x);
        let diff = op.Sub(e, y);
        let x2 = op.Mul(x, x);
        let nx2 = op.Neg(x2);
        let g = op.Exp(nx2);
        let g = op.Mul(c, g);
        let step = op.Div(diff, g);
        let nx = op.Sub(x, step);
        // Keep ±inf (and the exact zero) from the initial value.
        let fin = op.IsInf(x).out();
        x = op.Where(fin, x, nx);
    }
    x
}

/// `n` as torch sees it: promoted to the result type `t`, then truncated toward zero (in float64).
fn degree(op: &mut Builder, n: Value, t: DType) -> Value {
    let nt = cast(op, n, t);
    let nd = cast(op, nt, D);
    let zero = op.scalar(D, 0.0);
    let neg = op.Less(nd, zero);
    let c = op.Ceil(nd);
    let f = op.Floor(nd);
    let tr = op.Where(neg, c, f);
    // NaN, ±inf and values beyond int64 convert to INT64_MIN (x86 cvttsd2si), a negative degree.
    let a = op.Abs(nd);
    let lim = op.scalar(D, 9.223_372_036_854_775_808e18);
    let ok = op.Less(a, lim);
    let m1 = op.scalar(D, -1.0);
    op.Where(ok, tr, m1)
}

/// An orthogonal polynomial of degree `n` (float64, integer-valued, any shape broadcasting with
/// `x`) by its three-term recurrence: P_0 = `p0`, P_1 = `p1`, P_j = `step(j, P_{j-2}, P_{j-1})`;
/// 0 for n < 0 (torch's convention). The recurrence runs in an ONNX Loop up to the largest n, each
/// element advancing only while j <= its own n.
fn poly_rec(
    op: &mut Builder,
    x: Value,
    n: Value,
    p0: f64,
    p1: Value,
    step: impl Fn(&mut Builder, Value, Value, Value) -> Value,
) -> Value {
    let sum = op.Add(x, n);
    let shp = op.Shape(sum).out();
    let one = op.scalar(D, 1.0);
    let p0v = op.scalar(D, p0);
    let p = op.Expand(p0v, shp);
    let q = op.Expand(p1, shp);
    // Trip count: max(n) - 1 (iterations j = 2..=max n), at least 0.
    let nf = as_1d(op, n);
    let one1 = as_1d(op, one);
    let all = op.Concat(&[nf, one1]).axis(0).out();
    let mx = op.ReduceMax(all, None).keepdims(0).out();
    let m = op.Sub(mx, one);
    let m = cast(op, m, DType::Int64);
    let tru = op.scalar(DType::Bool, 1.0);
    op.begin_subgraph("poly_recurrence");
    let it = op.add_input(Some(DType::Int64), Some(vec![]));
    let _c = op.add_input(Some(DType::Bool), Some(vec![]));
    let pp = op.add_input(Some(D), None);
    let qq = op.add_input(Some(D), None);
    let itd = cast(op, it, D);
    let two = op.scalar(D, 2.0);
    let j = op.Add(itd, two);
    let r = step(op, j, pp, qq);
    let active = op.LessOrEqual(j, n);
    let p2 = op.Where(active, qq, pp);
    let q2 = op.Where(active, r, qq);
    let c = op.Identity(tru);
    let body = op.end_subgraph(vec![c, p2, q2]);
    let outs = op.Loop(Some(m), Some(tru), &[p, q]).body(body).outs_vec(2);
    let zero = op.scalar(D, 0.0);
    let is0 = op.Equal(n, zero);
    let r = op.Where(is0, p, outs[1]);
    let neg = op.Less(n, zero);
    op.Where(neg, zero, r)
}

/// Which polynomial family `poly` evaluates.
#[derive(Clone, Copy)]
enum Poly {
    ChebT,
    ChebU,
    ChebV,
    ChebW,
    HermiteH,
    HermiteHe,
    Laguerre,
    Legendre,
}

/// Evaluates polynomial `kind` of degree `n` at `x`; `shifted` substitutes 2x - 1 (Chebyshev).
fn poly(op: &mut Builder, x: Operand, n: Operand, kind: Poly, shifted: bool) -> Value {
    let t = op.out_dtype(0);
    let t = match t {
        Some(t) if t.is_float() => t,
        _ => DType::Float,
    };
    let xv = operand_value(op, x, t);
    let mut x = cast(op, xv, D);
    let nv = operand_value(op, n, t);
    let n = degree(op, nv, t);
    if shifted {
        let one = op.scalar(D, 1.0);
        let xx = op.Add(x, x);
        x = op.Sub(xx, one);
    }
    let one = op.scalar(D, 1.0);
    let two_x = op.Add(x, x);
    let p1 = match kind {
        Poly::ChebT | Poly::HermiteHe | Poly::Legendre => x,
        Poly::ChebU | Poly::HermiteH => two_x,
        Poly::ChebV => op.Sub(two_x, one),
        Poly::ChebW => op.Add(two_x, one),
        Poly::Laguerre => op.Sub(one, x),
    };
    let r = poly_rec(op, x, n, 1.0, p1, move |op, j, p, q| {
        let one = op.scalar(D, 1.0);
        let jm1 = op.Sub(j, one);
        match kind {
            // 2x·q - p
            Poly::ChebT | Poly::ChebU | Poly::ChebV | Poly::ChebW => {
                let xx = op.Add(x, x);
                let a = op.Mul(xx, q);
                op.Sub(a, p)
            }
            // 2x·q - 2(j-1)·p
            Poly::HermiteH => {
                let xx = op.Add(x, x);
                let a = op.Mul(xx, q);
                let c = op.Add(jm1, jm1);
                let b = op.Mul(c, p);
                op.Sub(a, b)
            }
            // x·q - (j-1)·p
            Poly::HermiteHe => {
                let a = op.Mul(x, q);
                let b = op.Mul(jm1, p);
                op.Sub(a, b)
            }
            // ((2j - 1)·x·q - (j-1)·p) / j
            Poly::Legendre => {
                let jj = op.Add(jm1, j);
                let a = op.Mul(jj, x);
                let a = op.Mul(a, q);
                let b = op.Mul(jm1, p);
                let d = op.Sub(a, b);
                op.Div(d, j)
            }
            // ((2j - 1 - x)·q - (j-1)·p) / j
            Poly::Laguerre => {
                let jj = op.Add(jm1, j);
                let c = op.Sub(jj, x);
                let a = op.Mul(c, q);
                let b = op.Mul(jm1, p);
                let d = op.Sub(a, b);
                op.Div(d, j)
            }
        }
    });
    let r = match kind {
        // torch gives NaN past a per-type degree limit (getHermitianLimit: 128 for float,
        // 512 for double).
        Poly::HermiteH | Poly::HermiteHe => {
            let limit = if t == DType::Double {
                512.0
            } else if t == DType::Float {
                128.0
            } else {
                1024.0
            };
            let lim = op.scalar(D, limit);
            let over = op.Greater(n, lim);
            let nan = op.scalar(D, f64::NAN);
            op.Where(over, nan, r)
        }
        _ => r,
    };
    cast(op, r, t)
}

/// Regularized incomplete gamma P(a, x) (`upper` false) or Q(a, x) (`upper` true) for float64
/// `a`, `x`, with torch's `calc_igamma` / `calc_igammac` special cases. The value is evaluated to
/// float64 precision: the power series for x < a + 1, Lentz's continued fraction for Q
/// otherwise, both iterated in an ONNX Loop until every element has converged.
fn igamma_d(op: &mut Builder, a: Value, x: Value, upper: bool) -> Value {
    let zero = op.scalar(D, 0.0);
    let one = op.scalar(D, 1.0);
    // Broadcast, and replace the special cases by a harmless (1, 1) so the loop always ends.
    let s0 = op.Add(a, x);
    let shp = op.Shape(s0).out();
    let a = op.Expand(a, shp);
    let x = op.Expand(x, shp);
    let a_ok = op.Greater(a, zero);
    let x_ok = op.Greater(x, zero);
    let a_inf = op.IsInf(a).out();
    let x_inf = op.IsInf(x).out();
    let a_fin = op.Not(a_inf);
    let x_fin = op.Not(x_inf);
    let ok = op.And(a_ok, x_ok);
    let ok = op.And(ok, a_fin);
    let ok = op.And(ok, x_fin);
    let aa = op.Where(ok, a, one);
    let xx = op.Where(ok, x, one);
    let ap1 = op.Add(aa, one);
    let use_series = op.Less(xx, ap1);
    let use_cf = op.Not(use_series);
    // Series state: ap, del, sum. Continued-fraction state: b, c, d, h.
    let del0 = op.Reciprocal(aa);
    // b = (x + 1) - a.
    let xp1 = op.Add(xx, one);
    let b0 = op.Sub(xp1, aa);
    let fpmin = 1e-300;
    let c0 = op.scalar(D, 1.0 / fpmin);
    let c0 = op.Expand(c0, shp);
    let fpk = op.scalar(D, fpmin);
    let absb = op.Abs(b0);
    let tiny = op.Less(absb, fpk);
    let bsafe = op.Where(tiny, fpk, b0);
    let d0 = op.Reciprocal(bsafe);
    let h0 = d0;
    let eps = op.scalar(D, f64::EPSILON);
    let tru = op.scalar(DType::Bool, 1.0);
    let maxit = op.const_i64s(&[1_000_000]);
    let maxit = op.Squeeze(maxit, None);

    op.begin_subgraph("igamma_iteration");
    let it = op.add_input(Some(DType::Int64), Some(vec![]));
    let _c = op.add_input(Some(DType::Bool), Some(vec![]));
    let ap = op.add_input(Some(D), None);
    let del = op.add_input(Some(D), None);
    let sum = op.add_input(Some(D), None);
    let b = op.add_input(Some(D), None);
    let c = op.add_input(Some(D), None);
    let d = op.add_input(Some(D), None);
    let h = op.add_input(Some(D), None);
    // Series: ap += 1; del *= x / ap; sum += del.
    let ap2 = op.Add(ap, one);
    let r = op.Div(xx, ap2);
    let del2 = op.Mul(del, r);
    let sum2 = op.Add(sum, del2);
    let adel = op.Abs(del2);
    let asum = op.Abs(sum2);
    let lim = op.Mul(asum, eps);
    let s_done = op.Less(adel, lim);
    // Continued fraction (i = it + 1): an = -i (i - a); b += 2; d = 1/(an d + b); c = b + an/c.
    let itd = cast(op, it, D);
    let i = op.Add(itd, one);
    let ima = op.Sub(i, aa);
    let an = op.Mul(i, ima);
    let an = op.Neg(an);
    let two = op.scalar(D, 2.0);
    let b2 = op.Add(b, two);
    let ad = op.Mul(an, d);
    let dn = op.Add(ad, b2);
    let adn = op.Abs(dn);
    let t = op.Less(adn, fpk);
    let dn = op.Where(t, fpk, dn);
    let ac = op.Div(an, c);
    let cn = op.Add(b2, ac);
    let acn = op.Abs(cn);
    let t = op.Less(acn, fpk);
    let cn = op.Where(t, fpk, cn);
    let dn = op.Reciprocal(dn);
    let dl = op.Mul(dn, cn);
    let h2 = op.Mul(h, dl);
    let dm1 = op.Sub(dl, one);
    let adm1 = op.Abs(dm1);
    let eps4 = op.scalar(D, 4.0 * f64::EPSILON);
    let c_done = op.Less(adm1, eps4);
    // Each element stops advancing once its own method has converged.
    let s_go = op.Not(s_done);
    let s_go = op.And(use_series, s_go);
    let c_go = op.Not(c_done);
    let c_go = op.And(use_cf, c_go);
    let ap_o = op.Where(use_series, ap2, ap);
    let del_o = op.Where(use_series, del2, del);
    let sum_o = op.Where(use_series, sum2, sum);
    let b_o = op.Where(use_cf, b2, b);
    let c_o = op.Where(use_cf, cn, c);
    let d_o = op.Where(use_cf, dn, d);
    let h_o = op.Where(use_cf, h2, h);
    let go = op.Or(s_go, c_go);
    let go = cast(op, go, DType::Int32);
    let go = as_1d(op, go);
    let z1 = op.const_i64s(&[0]);
    let z1 = cast(op, z1, DType::Int32);
    let go = op.Concat(&[go, z1]).axis(0).out();
    let go = op.ReduceMax(go, None).keepdims(0).out();
    let go = cast(op, go, DType::Bool);
    let body = op.end_subgraph(vec![go, ap_o, del_o, sum_o, b_o, c_o, d_o, h_o]);
    // The first iteration runs unconditionally (every element needs at least one step).
    let outs = op.Loop(Some(maxit), Some(tru), &[aa, del0, del0, b0, c0, d0, h0]).body(body).outs_vec(7);
    let (sum, h) = (outs[2], outs[6]);
    // Prefactor x^a e^{-x} / Γ(a).
    let lx = op.Log(xx);
    let alx = op.Mul(aa, lx);
    let e = op.Sub(alx, xx);
    let lg = lgamma_d(op, aa);
    let e = op.Sub(e, lg);
    let pref = op.Exp(e);
    let p_ser = op.Mul(sum, pref);
    let q_cf = op.Mul(h, pref);
    let r = if upper {
        let q_ser = op.Sub(one, p_ser);
        op.Where(use_series, q_ser, q_cf)
    } else {
        let p_cf = op.Sub(one, q_cf);
        op.Where(use_series, p_ser, p_cf)
    };
    // Special cases, innermost first (torch checks them in the opposite order).
    let (on_x_inf, on_a_inf, on_x0, on_a0) = if upper { (0.0, 1.0, 1.0, 0.0) } else { (1.0, 0.0, 0.0, 1.0) };
    let nan = op.scalar(D, f64::NAN);
    let v = op.scalar(D, on_x_inf);
    let r = op.Where(x_inf, v, r);
    let v = op.scalar(D, on_a_inf);
    let r_ai = op.Where(x_inf, nan, v);
    let r = op.Where(a_inf, r_ai, r);
    let x0 = op.Equal(x, zero);
    let v = op.scalar(D, on_x0);
    let r = op.Where(x0, v, r);
    let a0 = op.Equal(a, zero);
    let v = op.scalar(D, on_a0);
    let r_a0 = op.Where(x_ok, v, nan);
    let r = op.Where(a0, r_a0, r);
    let xneg = op.Less(x, zero);
    let aneg = op.Less(a, zero);
    let neg = op.Or(xneg, aneg);
    let r = op.Where(neg, nan, r);
    let xn = op.IsNaN(x);
    let an = op.IsNaN(a);
    let nn = op.Or(xn, an);
    op.Where(nn, nan, r)
}

/// The most terms of mvlgamma written one lgamma each (54 nodes a term).
const MVLGAMMA_UNROLLED: i64 = 16;

/// mvlgamma of `p` terms at once: `x - j/2` for every j along a new last axis, one lgamma, summed,
/// plus p(p-1)/4 · ln π. The nodes do not grow with `p`; the `[p]` constant counts toward the
/// export's memory bound.
fn mvlgamma_terms(op: &mut Builder, x: Value, p: i64, t: DType) -> OpResult<Value> {
    let n = constant_elements(op, "mvlgamma's terms", &[p])?;
    let halves: Vec<f64> = (0..n).map(|j| j as f64 / 2.0).collect();
    let Some(halves) = TensorData::from_f64_as(D, vec![p], &halves) else { bail!("mvlgamma's terms") };
    let halves = op.constant_tensor(halves);
    let last = op.const_i64s(&[-1]);
    let xs = op.Unsqueeze(x, last);
    let a = op.Sub(xs, halves);
    let l = lgamma_d(op, a);
    let sum = op.ReduceSum(l, Some(last)).keepdims(0).out();
    let c = op.scalar(D, p as f64 * (p - 1) as f64 / 4.0 * PI.ln());
    let r = op.Add(c, sum);
    Ok(cast(op, r, t))
}

/// igamma / igammac: promoted to the result type, evaluated in float64, rounded once.
fn igamma_op(op: &mut Builder, a: Value, x: Value, upper: bool) -> Value {
    let t = match op.out_dtype(0) {
        Some(t) if t.is_float() => t,
        _ => DType::Float,
    };
    let a = cast(op, a, t);
    let a = cast(op, a, D);
    let x = cast(op, x, t);
    let x = cast(op, x, D);
    let r = igamma_d(op, a, x, upper);
    cast(op, r, t)
}

translations! {
    /// lgamma(Tensor self) -> Tensor
    #[target("aten::lgamma")]
    fn lgamma(op, self_: Tensor) -> Value {
        in_float64(op, self_, lgamma_d)
    }

    /// digamma(Tensor self) -> Tensor
    #[target("aten::digamma", "aten::special_digamma", "aten::special_psi")]
    fn digamma(op, self_: Tensor) -> Value {
        in_float64(op, self_, digamma_d)
    }

    /// polygamma(int n, Tensor self) -> Tensor
    #[target("aten::polygamma", "aten::special_polygamma")]
    fn polygamma(op, n: i64, self_: Tensor) -> OpResult<Value> {
        let t = float_t(op, self_);
        let x = cast(op, self_, D);
        let r = match n {
            n if n < 0 => bail!("polygamma is only defined for n >= 0, got {n}"),
            0 => digamma_d(op, x),
            1 => trigamma_d(op, x),
            n => {
                // (-1)^(n+1) · n! · ζ(n + 1, x)
                let sv = op.scalar(D, (n + 1) as f64);
                let z = zeta_d(op, sv, x)?;
                // n! in float64 is infinite from 171 on: the product stops there, whatever n.
                let fact: f64 = if n > 170 { f64::INFINITY } else { (1..=n).map(|i| i as f64).product() };
                let c = op.scalar(D, if n % 2 == 1 { fact } else { -fact });
                op.Mul(c, z)
            }
        };
        Ok(cast(op, r, t))
    }

    /// mvlgamma(Tensor self, int p) -> Tensor
    #[target("aten::mvlgamma", "aten::special_multigammaln")]
    fn mvlgamma(op, self_: Tensor, p: i64) -> OpResult<Value> {
        if p < 1 {
            bail!("mvlgamma: p must be >= 1, got {p}");
        }
        let t = float_t(op, self_);
        let x = cast(op, self_, D);
        if p > MVLGAMMA_UNROLLED {
            return mvlgamma_terms(op, x, p, t);
        }
        // Σ_{j<p} lgamma(x - j/2) + p(p-1)/4 · ln π
        let mut acc = op.scalar(D, (p * (p - 1)) as f64 / 4.0 * PI.ln());
        for j in 0..p {
            let c = op.scalar(D, j as f64 / 2.0);
            let a = op.Sub(x, c);
            let l = lgamma_d(op, a);
            acc = op.Add(acc, l);
        }
        Ok(cast(op, acc, t))
    }

    /// erf(Tensor self) -> Tensor
    #[target("aten::erf", "aten::special_erf")]
    fn erf(op, self_: Tensor) -> Value {
        // ONNX Runtime's float32 Erf is within an ulp of torch's: used for every type but float64
        // (no float64 kernel), half types through float32 as torch computes them.
        match op.out_dtype(0) {
            Some(DType::Double) | None => in_float64(op, self_, erf_d),
            Some(t) => {
                let x = cast(op, self_, DType::Float);
                let y = op.Erf(x);
                cast(op, y, t)
            }
        }
    }

    /// erfc(Tensor self) -> Tensor
    #[target("aten::erfc", "aten::special_erfc")]
    fn erfc(op, self_: Tensor) -> Value {
        in_float64(op, self_, erfc_d)
    }

    /// special_erfcx(Tensor self) -> Tensor
    #[target("aten::special_erfcx")]
    fn special_erfcx(op, self_: Tensor) -> Value {
        in_float64(op, self_, erfcx_d)
    }

    /// special_ndtr(Tensor self) -> Tensor
    #[target("aten::special_ndtr")]
    fn special_ndtr(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| {
            // torch (Cephes ndtr): t = x/√2; |t| < 1/√2 ? (1 + erf(t))/2 : erfc(|t|)/2, mirrored for t > 0.
            let r2 = op.scalar(D, std::f64::consts::FRAC_1_SQRT_2);
            let t = op.Mul(x, r2);
            let z = op.Abs(t);
            let half = op.scalar(D, 0.5);
            let e = erf_d(op, t);
            let inner = op.Mul(e, half);
            let inner = op.Add(inner, half);
            let c = erfc_d(op, z);
            let outer = op.Mul(c, half);
            let one = op.scalar(D, 1.0);
            let flipped = op.Sub(one, outer);
            let zero = op.scalar(D, 0.0);
            let pos = op.Greater(t, zero);
            let outer = op.Where(pos, flipped, outer);
            let near = op.Less(z, r2);
            op.Where(near, inner, outer)
        })
    }

    /// special_log_ndtr(Tensor self) -> Tensor
    #[target("aten::special_log_ndtr")]
    fn special_log_ndtr(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| {
            // torch: x < -1 ? log(erfcx(-x/√2)/2) - x²/2 : log1p(-erfc(x/√2)/2)
            let r2 = op.scalar(D, std::f64::consts::FRAC_1_SQRT_2);
            let tt = op.Mul(x, r2);
            let nt = op.Neg(tt);
            let cx = erfcx_d(op, nt);
            let half = op.scalar(D, 0.5);
            let h = op.Mul(cx, half);
            let l = op.Log(h);
            let t2 = op.Mul(tt, tt);
            let lo = op.Sub(l, t2);
            let c = erfc_d(op, tt);
            let mh = op.scalar(D, -0.5);
            let arg = op.Mul(c, mh);
            let hi = log1p_f(op, arg, D);
            let m1 = op.scalar(D, -1.0);
            let below = op.Less(x, m1);
            op.Where(below, lo, hi)
        })
    }

    /// erfinv(Tensor self) -> Tensor
    #[target("aten::erfinv", "aten::special_erfinv")]
    fn erfinv(op, self_: Tensor) -> Value {
        in_float64(op, self_, erfinv_d)
    }

    /// special_ndtri(Tensor self) -> Tensor
    #[target("aten::special_ndtri")]
    fn special_ndtri(op, self_: Tensor) -> Value {
        in_float64(op, self_, ndtri_d)
    }

    /// special_chebyshev_polynomial_t(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_chebyshev_polynomial_t",
        "aten::special_chebyshev_polynomial_t.x_scalar",
        "aten::special_chebyshev_polynomial_t.n_scalar"
    )]
    fn special_chebyshev_polynomial_t(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebT, false)
    }

    /// special_chebyshev_polynomial_u(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_chebyshev_polynomial_u",
        "aten::special_chebyshev_polynomial_u.x_scalar",
        "aten::special_chebyshev_polynomial_u.n_scalar"
    )]
    fn special_chebyshev_polynomial_u(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebU, false)
    }

    /// special_chebyshev_polynomial_v(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_chebyshev_polynomial_v",
        "aten::special_chebyshev_polynomial_v.x_scalar",
        "aten::special_chebyshev_polynomial_v.n_scalar"
    )]
    fn special_chebyshev_polynomial_v(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebV, false)
    }

    /// special_chebyshev_polynomial_w(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_chebyshev_polynomial_w",
        "aten::special_chebyshev_polynomial_w.x_scalar",
        "aten::special_chebyshev_polynomial_w.n_scalar"
    )]
    fn special_chebyshev_polynomial_w(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebW, false)
    }

    /// special_shifted_chebyshev_polynomial_t(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_shifted_chebyshev_polynomial_t",
        "aten::special_shifted_chebyshev_polynomial_t.x_scalar",
        "aten::special_shifted_chebyshev_polynomial_t.n_scalar"
    )]
    fn special_shifted_chebyshev_polynomial_t(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebT, true)
    }

    /// special_shifted_chebyshev_polynomial_u(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_shifted_chebyshev_polynomial_u",
        "aten::special_shifted_chebyshev_polynomial_u.x_scalar",
        "aten::special_shifted_chebyshev_polynomial_u.n_scalar"
    )]
    fn special_shifted_chebyshev_polynomial_u(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebU, true)
    }

    /// special_shifted_chebyshev_polynomial_v(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_shifted_chebyshev_polynomial_v",
        "aten::special_shifted_chebyshev_polynomial_v.x_scalar",
        "aten::special_shifted_chebyshev_polynomial_v.n_scalar"
    )]
    fn special_shifted_chebyshev_polynomial_v(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebV, true)
    }

    /// special_shifted_chebyshev_polynomial_w(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_shifted_chebyshev_polynomial_w",
        "aten::special_shifted_chebyshev_polynomial_w.x_scalar",
        "aten::special_shifted_chebyshev_polynomial_w.n_scalar"
    )]
    fn special_shifted_chebyshev_polynomial_w(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::ChebW, true)
    }

    /// special_hermite_polynomial_h(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_hermite_polynomial_h",
        "aten::special_hermite_polynomial_h.x_scalar",
        "aten::special_hermite_polynomial_h.n_scalar"
    )]
    fn special_hermite_polynomial_h(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::HermiteH, false)
    }

    /// special_hermite_polynomial_he(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_hermite_polynomial_he",
        "aten::special_hermite_polynomial_he.x_scalar",
        "aten::special_hermite_polynomial_he.n_scalar"
    )]
    fn special_hermite_polynomial_he(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::HermiteHe, false)
    }

    /// special_laguerre_polynomial_l(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_laguerre_polynomial_l",
        "aten::special_laguerre_polynomial_l.x_scalar",
        "aten::special_laguerre_polynomial_l.n_scalar"
    )]
    fn special_laguerre_polynomial_l(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::Laguerre, false)
    }

    /// special_legendre_polynomial_p(Tensor x, Tensor n) -> Tensor
    #[target(
        "aten::special_legendre_polynomial_p",
        "aten::special_legendre_polynomial_p.x_scalar",
        "aten::special_legendre_polynomial_p.n_scalar"
    )]
    fn special_legendre_polynomial_p(op, x: Operand, n: Operand) -> Value {
        poly(op, x, n, Poly::Legendre, false)
    }

    /// igamma(Tensor self, Tensor other) -> Tensor
    #[target("aten::igamma")]
    fn igamma(op, self_: Tensor, other: Tensor) -> Value {
        igamma_op(op, self_, other, false)
    }

    /// igammac(Tensor self, Tensor other) -> Tensor
    #[target("aten::igammac")]
    fn igammac(op, self_: Tensor, other: Tensor) -> Value {
        igamma_op(op, self_, other, true)
    }

    /// special_zeta(Tensor self, Tensor other) -> Tensor
    #[target("aten::special_zeta", "aten::special_zeta.self_scalar", "aten::special_zeta.other_scalar")]
    fn special_zeta(op, self_: Operand, other: Operand) -> OpResult<Value> {
        let t = match op.out_dtype(0) {
            Some(t) if t.is_float() => t,
            _ => DType::Float,
        };
        let xs = operand_value(op, self_, t);
        let x = cast(op, xs, D);
        let qs = operand_value(op, other, t);
        let q = cast(op, qs, D);
        let z = zeta_d(op, x, q)?;
        // Cephes: x == 1 → +inf; x < 1 → NaN; q <= 0: an integer q is a pole (+inf, already in
        // zeta_d), otherwise a non-integer x gives NaN.
        let one = op.scalar(D, 1.0);
        let zero = op.scalar(D, 0.0);
        let inf = op.scalar(D, f64::INFINITY);
        let nan = op.scalar(D, f64::NAN);
        let qle = op.LessOrEqual(q, zero);
        let qf = op.Floor(q);
        let qint = op.Equal(q, qf);
        let xf = op.Floor(x);
        let xint = op.Equal(x, xf);
        let xnon = op.Not(xint);
        let qnon = op.Not(qint);
        let bad = op.And(qle, qnon);
        let bad = op.And(bad, xnon);
        let r = op.Where(bad, nan, z);
        let pole = op.And(qle, qint);
        let r = op.Where(pole, inf, r);
        let lt1 = op.Less(x, one);
        let r = op.Where(lt1, nan, r);
        let eq1 = op.Equal(x, one);
        let r = op.Where(eq1, inf, r);
        Ok(cast(op, r, t))
    }
}
