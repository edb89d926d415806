//! Cylinder functions: Bessel J0, J1, Y0, Y1, modified Bessel I0, I1, K0, K1 (plain and
//! exponentially scaled), the spherical Bessel j0 and Airy Ai.
//!
//! Each follows torch's CPU implementation (Cephes coefficients and branch points, from
//! aten/src/ATen/native/Math.h), evaluated in float64 and rounded once to the result type.

use super::float64::{in_float64, polevl, D};
use crate::translate::prelude::*;
use crate::translations;

const PI: f64 = std::f64::consts::PI;

const J_PP0: [f64; 7] = [
    7.96936729297347051624e-04,
    8.28352392107440799803e-02,
    1.23953371646414299388e+00,
    5.44725003058768775090e+00,
    8.74716500199817011941e+00,
    5.30324038235394892183e+00,
    9.99999999999999997821e-01,
];
const J_PQ0: [f64; 7] = [
    9.24408810558863637013e-04,
    8.56288474354474431428e-02,
    1.25352743901058953537e+00,
    5.47097740330417105182e+00,
    8.76190883237069594232e+00,
    5.30605288235394617618e+00,
    1.00000000000000000218e+00,
];
const J_QP0: [f64; 8] = [
    -1.13663838898469149931e-02,
    -1.28252718670509318512e+00,
    -1.95539544257735972385e+01,
    -9.32060152123768231369e+01,
    -1.77681167980488050595e+02,
    -1.47077505154951170175e+02,
    -5.14105326766599330220e+01,
    -6.05014350600728481186e+00,
];
const J_QQ0: [f64; 7] = [
    6.43178256118178023184e+01,
    8.56430025976980587198e+02,
    3.88240183605401609683e+03,
    7.24046774195652478189e+03,
    5.93072701187316984827e+03,
    2.06209331660327847417e+03,
    2.42005740240291393179e+02,
];
const J_RP0: [f64; 4] =
    [-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14, 9.70862251047306323952e+15];
const J_RQ0: [f64; 8] = [
    4.99563147152651017219e+02,
    1.73785401676374683123e+05,
    4.84409658339962045305e+07,
    1.11855537045356834862e+10,
    2.11277520115489217587e+12,
    3.10518229857422583814e+14,
    3.18121955943204943306e+16,
    1.71086294081043136091e+18,
];
const J_PP1: [f64; 7] = [
    7.62125616208173112003e-04,
    7.31397056940917570436e-02,
    1.12719608129684925192e+00,
    5.11207951146807644818e+00,
    8.42404590141772420927e+00,
    5.21451598682361504063e+00,
    1.00000000000000000254e+00,
];
const J_PQ1: [f64; 7] = [
    5.71323128072548699714e-04,
    6.88455908754495404082e-02,
    1.10514232634061696926e+00,
    5.07386386128601488557e+00,
    8.39985554327604159757e+00,
    5.20982848682361821619e+00,
    9.99999999999999997461e-01,
];
const J_QP1: [f64; 8] = [
    5.10862594750176621635e-02,
    4.98213872951233449420e+00,
    7.58238284132545283818e+01,
    3.66779609360150777800e+02,
    7.10856304998926107277e+02,
    5.97489612400613639965e+02,
    2.11688757100572135698e+02,
    2.52070205858023719784e+01,
];
const J_QQ1: [f64; 7] = [
    7.42373277035675149943e+01,
    1.05644886038262816351e+03,
    4.98641058337653607651e+03,
    9.56231892404756170795e+03,
    7.99704160447350683650e+03,
    2.82619278517639096600e+03,
    3.36093607810698293419e+02,
];
const J_RP1: [f64; 4] =
    [-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13, 3.68295732863852883286e+15];
const J_RQ1: [f64; 8] = [
    6.20836478118054335476e+02,
    2.56987256757748830383e+05,
    8.35146791431949253037e+07,
    2.21511595479792499675e+10,
    4.74914122079991414898e+12,
    7.84369607876235854894e+14,
    8.95222336184627338078e+16,
    5.32278620332680085395e+18,
];
const Y_YP0: [f64; 8] = [
    1.55924367855235737965e+04,
    -1.46639295903971606143e+07,
    5.43526477051876500413e+09,
    -9.82136065717911466409e+11,
    8.75906394395366999549e+13,
    -3.46628303384729719441e+15,
    4.42733268572569800351e+16,
    -1.84950800436986690637e+16,
];
const Y_YQ0: [f64; 7] = [
    1.04128353664259848412e+03,
    6.26107330137134956842e+05,
    2.68919633393814121987e+08,
    8.64002487103935000337e+10,
    2.02979612750105546709e+13,
    3.17157752842975028269e+15,
    2.50596256172653059228e+17,
];
const Y_YP1: [f64; 6] = [
    1.26320474790178026440e+09,
    -6.47355876379160291031e+11,
    1.14509511541823727583e+14,
    -8.12770255501325109621e+15,
    2.02439475713594898196e+17,
    -7.78877196265950026825e+17,
];
const Y_YQ1: [f64; 8] = [
    5.94301592346128195359e+02,
    2.35564092943068577943e+05,
    7.34811944459721705660e+07,
    1.87601316108706159478e+10,
    3.88231277496238566008e+12,
    6.20557727146953693363e+14,
    6.87141087355300489866e+16,
    3.97270608116560655612e+18,
];
/// √(2/π).
const SQRT_2_PI: f64 = 0.797884560802865355879892119868763737;
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;

/// Hankel asymptotic form for |x| > 5 (Cephes j0/j1/y0/y1): with w = 25/x², p = PP(w)/PQ(w),
/// q = QP(w)/QQ(w), θ = x - phase: √(2/π)/√x · (p·cos θ - 5/x·q·sin θ) for J, and
/// √(2/π)/√x · (p·sin θ + 5/x·q·cos θ) for Y.
fn bessel_asym(op: &mut Builder, ax: Value, order1: bool, y: bool) -> Value {
    let (pp, pq, qp, qq): (&[f64], &[f64], &[f64], &[f64]) =
        if order1 { (&J_PP1, &J_PQ1, &J_QP1, &J_QQ1) } else { (&J_PP0, &J_PQ0, &J_QP0, &J_QQ0) };
    let phase = if order1 { 3.0 * PI / 4.0 } else { PI / 4.0 };
    let five = op.scalar(D, 5.0);
    let fx = op.Div(five, ax);
    let w = op.Mul(fx, fx);
    let a = polevl(op, w, pp);
    let b = polevl(op, w, pq);
    let p = op.Div(a, b);
    let a = polevl(op, w, qp);
    let b = polevl(op, w, qq);
    let q = op.Div(a, b);
    let ph = op.scalar(D, phase);
    let th = op.Sub(ax, ph);
    let c = op.Cos(th);
    let s = op.Sin(th);
    let fq = op.Mul(fx, q);
    let r = if y {
        let a = op.Mul(p, s);
        let b = op.Mul(fq, c);
        op.Add(a, b)
    } else {
        let a = op.Mul(p, c);
        let b = op.Mul(fq, s);
        op.Sub(a, b)
    };
    let cc = op.scalar(D, SQRT_2_PI);
    let r = op.Mul(r, cc);
    let sq = op.Sqrt(ax);
    op.Div(r, sq)
}

/// J0 (Cephes `j0`, as torch's `bessel_j0_forward`).
fn bessel_j0_d(op: &mut Builder, x: Value) -> Value {
    let ax = op.Abs(x);
    let z = op.Mul(ax, ax);
    let rp = polevl(op, z, &J_RP0);
    let rq = polevl(op, z, &J_RQ0);
    let c1 = op.scalar(D, 5.78318596294678452118e+00);
    let c2 = op.scalar(D, 3.04712623436620863991e+01);
    let a = op.Sub(z, c1);
    let b = op.Sub(z, c2);
    let m = op.Mul(a, b);
    let m = op.Mul(m, rp);
    let mid = op.Div(m, rq);
    let four = op.scalar(D, 4.0);
    let one = op.scalar(D, 1.0);
    let zz = op.Div(z, four);
    let tiny = op.Sub(one, zz);
    let big = bessel_asym(op, ax, false, false);
    let five = op.scalar(D, 5.0);
    let le5 = op.LessOrEqual(ax, five);
    let eps = op.scalar(D, 1e-5);
    let lt = op.Less(ax, eps);
    let small = op.Where(lt, tiny, mid);
    op.Where(le5, small, big)
}

/// J1 (Cephes `j1`, odd).
fn bessel_j1_d(op: &mut Builder, x: Value) -> Value {
    let ax = op.Abs(x);
    let z = op.Mul(ax, ax);
    let rp = polevl(op, z, &J_RP1);
    let rq = polevl(op, z, &J_RQ1);
    let c1 = op.scalar(D, 1.46819706421238932572e+01);
    let c2 = op.scalar(D, 4.92184563216946036703e+01);
    let r = op.Div(rp, rq);
    let r = op.Mul(r, ax);
    let a = op.Sub(z, c1);
    let b = op.Sub(z, c2);
    let r = op.Mul(r, a);
    let mid = op.Mul(r, b);
    let big = bessel_asym(op, ax, true, false);
    let five = op.scalar(D, 5.0);
    let le5 = op.LessOrEqual(ax, five);
    let v = op.Where(le5, mid, big);
    let zero = op.scalar(D, 0.0);
    let neg = op.Less(x, zero);
    let nv = op.Neg(v);
    op.Where(neg, nv, v)
}

/// Y0 / Y1 (Cephes `y0` / `y1`): -inf at 0, NaN below.
fn bessel_y_d(op: &mut Builder, x: Value, order1: bool) -> Value {
    let z = op.Mul(x, x);
    let l = op.Log(x);
    let tp = op.scalar(D, TWO_OVER_PI);
    let mid = if order1 {
        let yp = polevl(op, z, &Y_YP1);
        let yq = polevl(op, z, &Y_YQ1);
        let r = op.Div(yp, yq);
        let r = op.Mul(x, r);
        let j = bessel_j1_d(op, x);
        let jl = op.Mul(j, l);
        let one = op.scalar(D, 1.0);
        let inv = op.Div(one, x);
        let d = op.Sub(jl, inv);
        let d = op.Mul(tp, d);
        op.Add(r, d)
    } else {
        let yp = polevl(op, z, &Y_YP0);
        let yq = polevl(op, z, &Y_YQ0);
        let r = op.Div(yp, yq);
        let j = bessel_j0_d(op, x);
        let d = op.Mul(tp, l);
        let d = op.Mul(d, j);
        op.Add(r, d)
    };
    let big = bessel_asym(op, x, order1, true);
    let zero = op.scalar(D, 0.0);
    let ninf = op.scalar(D, f64::NEG_INFINITY);
    let nan = op.scalar(D, f64::NAN);
    let is0 = op.Equal(x, zero);
    let neg = op.Less(x, zero);
    let small = op.Where(neg, nan, mid);
    let small = op.Where(is0, ninf, small);
    let five = op.scalar(D, 5.0);
    let le5 = op.LessOrEqual(x, five);
    op.Where(le5, small, big)
}

const I0_A: [f64; 30] = [
    -4.41534164647933937950e-18,
    3.33079451882223809783e-17,
    -2.43127984654795469359e-16,
    1.71539128555513303061e-15,
    -1.16853328779934516808e-14,
    7.67618549860493561688e-14,
    -4.85644678311192946090e-13,
    2.95505266312963983461e-12,
    -1.72682629144155570723e-11,
    9.67580903537323691224e-11,
    -5.18979560163526290666e-10,
    2.65982372468238665035e-09,
    -1.30002500998624804212e-08,
    6.04699502254191894932e-08,
    -2.67079385394061173391e-07,
    1.11738753912010371815e-06,
    -4.41673835845875056359e-06,
    1.64484480707288970893e-05,
    -5.75419501008210370398e-05,
    1.88502885095841655729e-04,
    -5.76375574538582365885e-04,
    1.63947561694133579842e-03,
    -4.32430999505057594430e-03,
    1.05464603945949983183e-02,
    -2.37374148058994688156e-02,
    4.93052842396707084878e-02,
    -9.49010970480476444210e-02,
    1.71620901522208775349e-01,
    -3.04682672343198398683e-01,
    6.76795274409476084995e-01,
];
const I0_B: [f64; 25] = [
    -7.23318048787475395456e-18,
    -4.83050448594418207126e-18,
    4.46562142029675999901e-17,
    3.46122286769746109310e-17,
    -2.82762398051658348494e-16,
    -3.42548561967721913462e-16,
    1.77256013305652638360e-15,
    3.81168066935262242075e-15,
    -9.55484669882830764870e-15,
    -4.15056934728722208663e-14,
    1.54008621752140982691e-14,
    3.85277838274214270114e-13,
    7.18012445138366623367e-13,
    -1.79417853150680611778e-12,
    -1.32158118404477131188e-11,
    -3.14991652796324136454e-11,
    1.18891471078464383424e-11,
    4.94060238822496958910e-10,
    3.39623202570838634515e-09,
    2.26666899049817806459e-08,
    2.04891858946906374183e-07,
    2.89137052083475648297e-06,
    6.88975834691682398426e-05,
    3.36911647825569408990e-03,
    8.04490411014108831608e-01,
];
const I1_A: [f64; 29] = [
    2.77791411276104639959e-18,
    -2.11142121435816608115e-17,
    1.55363195773620046921e-16,
    -1.10559694773538630805e-15,
    7.60068429473540693410e-15,
    -5.04218550472791168711e-14,
    3.22379336594557470981e-13,
    -1.98397439776494371520e-12,
    1.17361862988909016308e-11,
    -6.66348972350202774223e-11,
    3.62559028155211703701e-10,
    -1.88724975172282928790e-09,
    9.38153738649577178388e-09,
    -4.44505912879632808065e-08,
    2.00329475355213526229e-07,
    -8.56872026469545474066e-07,
    3.47025130813767847674e-06,
    -1.32731636560394358279e-05,
    4.78156510755005422638e-05,
    -1.61760815825896745588e-04,
    5.12285956168575772895e-04,
    -1.51357245063125314899e-03,
    4.15642294431288815669e-03,
    -1.05640848946261981558e-02,
    2.47264490306265168283e-02,
    -5.29459812080949914269e-02,
    1.02643658689847095384e-01,
    -1.76416518357834055153e-01,
    2.52587186443633654823e-01,
];
const I1_B: [f64; 25] = [
    7.51729631084210481353e-18,
    4.41434832307170791151e-18,
    -4.65030536848935832153e-17,
    -3.20952592199342395980e-17,
    2.96262899764595013876e-16,
    3.30820231092092828324e-16,
    -1.88035477551078244854e-15,
    -3.81440307243700780478e-15,
    1.04202769841288027642e-14,
    4.27244001671195135429e-14,
    -2.10154184277266431302e-14,
    -4.08355111109219731823e-13,
    -7.19855177624590851209e-13,
    2.03562854414708950722e-12,
    1.41258074366137813316e-11,
    3.25260358301548823856e-11,
    -1.89749581235054123450e-11,
    -5.58974346219658380687e-10,
    -3.83538038596423702205e-09,
    -2.63146884688951950684e-08,
    -2.51223623787020892529e-07,
    -3.88256480887769039346e-06,
    -1.10588938762623716291e-04,
    -9.76109749136146840777e-03,
    7.78576235018280120474e-01,
];
const K0_A: [f64; 10] = [
    1.37446543561352307156e-16,
    4.25981614279661018399e-14,
    1.03496952576338420167e-11,
    1.90451637722020886025e-09,
    2.53479107902614945675e-07,
    2.28621210311945178607e-05,
    1.26461541144692592338e-03,
    3.59799365153615016266e-02,
    3.44289899924628486886e-01,
    -5.35327393233902768720e-01,
];
const K0_B: [f64; 25] = [
    5.30043377268626276149e-18,
    -1.64758043015242134646e-17,
    5.21039150503902756861e-17,
    -1.67823109680541210385e-16,
    5.51205597852431940784e-16,
    -1.84859337734377901440e-15,
    6.34007647740507060557e-15,
    -2.22751332699166985548e-14,
    8.03289077536357521100e-14,
    -2.98009692317273043925e-13,
    1.14034058820847496303e-12,
    -4.51459788337394416547e-12,
    1.85594911495471785253e-11,
    -7.95748924447710747776e-11,
    3.57739728140030116597e-10,
    -1.69753450938905987466e-09,
    8.57403401741422608519e-09,
    -4.66048989768794782956e-08,
    2.76681363944501510342e-07,
    -1.83175552271911948767e-06,
    1.39498137188764993662e-05,
    -1.28495495816278026384e-04,
    1.56988388573005337491e-03,
    -3.14481013119645005427e-02,
    2.44030308206595545468e+00,
];
const K1_A: [f64; 11] = [
    -7.02386347938628759343e-18,
    -2.42744985051936593393e-15,
    -6.66690169419932900609e-13,
    -1.41148839263352776110e-10,
    -2.21338763073472585583e-08,
    -2.43340614156596823496e-06,
    -1.73028895751305206302e-04,
    -6.97572385963986435018e-03,
    -1.22611180822657148235e-01,
    -3.53155960776544875667e-01,
    1.52530022733894777053e+00,
];
const K1_B: [f64; 25] = [
    -5.75674448366501715755e-18,
    1.79405087314755922667e-17,
    -5.68946255844285935196e-17,
    1.83809354436663880070e-16,
    -6.05704724837331885336e-16,
    2.03870316562433424052e-15,
    -7.01983709041831346144e-15,
    2.47715442448130437068e-14,
    -8.97670518232499435011e-14,
    3.34841966607842919884e-13,
    -1.28917396095102890680e-12,
    5.13963967348173025100e-12,
    -2.12996783842756842877e-11,
    9.21831518760500529508e-11,
    -4.19035475934189648750e-10,
    2.01504975519703286596e-09,
    -1.03457624656780970260e-08,
    5.74108412545004946722e-08,
    -3.50196060308781257119e-07,
    2.40648494783721712015e-06,
    -1.93619797416608296024e-05,
    1.95215518471351631108e-04,
    -2.85781685962277938680e-03,
    1.03923736576817238437e-01,
    2.72062619048444266945e+00,
];

/// Cephes `chbevl`: the Chebyshev series Σ' c_i T_i(y/2) by Clenshaw's recurrence.
fn chbevl(op: &mut Builder, y: Value, c: &[f64]) -> Value {
    let mut b0 = op.scalar(D, c[0]);
    let mut b1 = op.scalar(D, 0.0);
    let mut b2 = b1;
    for &ci in &c[1..] {
        b2 = b1;
        b1 = b0;
        let m = op.Mul(y, b1);
        let s = op.Sub(m, b2);
        let kc = op.scalar(D, ci);
        b0 = op.Add(s, kc);
    }
    let d = op.Sub(b0, b2);
    let h = op.scalar(D, 0.5);
    op.Mul(d, h)
}

/// e^{-|x|}·I0(x) (`scaled`) or I0(x), as torch's `modified_bessel_i0_forward` / `calc_i0e`.
fn bessel_i0_d(op: &mut Builder, x: Value, scaled: bool) -> Value {
    let ax = op.Abs(x);
    let half = op.scalar(D, 0.5);
    let two = op.scalar(D, 2.0);
    let y = op.Mul(ax, half);
    let y = op.Sub(y, two);
    let small = chbevl(op, y, &I0_A);
    let c32 = op.scalar(D, 32.0);
    let y = op.Div(c32, ax);
    let y = op.Sub(y, two);
    let big = chbevl(op, y, &I0_B);
    let sq = op.Sqrt(ax);
    let big = op.Div(big, sq);
    let eight = op.scalar(D, 8.0);
    let le = op.LessOrEqual(ax, eight);
    let r = op.Where(le, small, big);
    if scaled {
        r
    } else {
        let e = op.Exp(ax);
        op.Mul(e, r)
    }
}

/// e^{-|x|}·I1(x) (`scaled`) or I1(x) (odd), as torch's `modified_bessel_i1_forward` / `calc_i1e`.
fn bessel_i1_d(op: &mut Builder, x: Value, scaled: bool) -> Value {
    let ax = op.Abs(x);
    let half = op.scalar(D, 0.5);
    let two = op.scalar(D, 2.0);
    let y = op.Mul(ax, half);
    let y = op.Sub(y, two);
    let small = chbevl(op, y, &I1_A);
    let small = op.Mul(small, ax);
    let c32 = op.scalar(D, 32.0);
    let y = op.Div(c32, ax);
    let y = op.Sub(y, two);
    let big = chbevl(op, y, &I1_B);
    let sq = op.Sqrt(ax);
    let big = op.Div(big, sq);
    let eight = op.scalar(D, 8.0);
    let le = op.LessOrEqual(ax, eight);
    let mut r = op.Where(le, small, big);
    if !scaled {
        let e = op.Exp(ax);
        r = op.Mul(e, r);
    }
    let zero = op.scalar(D, 0.0);
    let neg = op.Less(x, zero);
    let nr = op.Neg(r);
    op.Where(neg, nr, r)
}

/// K0 / K1 (`order1`), optionally scaled by e^x, as torch's `[scaled_]modified_bessel_k{0,1}_forward`:
/// +inf at 0, NaN below.
fn bessel_k_d(op: &mut Builder, x: Value, order1: bool, scaled: bool) -> Value {
    let two = op.scalar(D, 2.0);
    let half = op.scalar(D, 0.5);
    let z = op.Mul(x, x);
    let y = op.Sub(z, two);
    let hx = op.Mul(half, x);
    let l = op.Log(hx);
    let mut small = if order1 {
        let a = chbevl(op, y, &K1_A);
        let a = op.Div(a, x);
        let i = bessel_i1_d(op, x, false);
        let li = op.Mul(l, i);
        op.Add(li, a)
    } else {
        let a = chbevl(op, y, &K0_A);
        let i = bessel_i0_d(op, x, false);
        let li = op.Mul(l, i);
        op.Sub(a, li)
    };
    let eight = op.scalar(D, 8.0);
    let y = op.Div(eight, x);
    let y = op.Sub(y, two);
    let b = chbevl(op, y, if order1 { &K1_B } else { &K0_B });
    let sq = op.Sqrt(x);
    let mut big = op.Div(b, sq);
    if scaled {
        let e = op.Exp(x);
        small = op.Mul(small, e);
    } else {
        let nx = op.Neg(x);
        let e = op.Exp(nx);
        big = op.Mul(e, big);
    }
    let le = op.LessOrEqual(x, two);
    let r = op.Where(le, small, big);
    let zero = op.scalar(D, 0.0);
    let inf = op.scalar(D, f64::INFINITY);
    let nan = op.scalar(D, f64::NAN);
    let is0 = op.Equal(x, zero);
    let neg = op.Less(x, zero);
    let r = op.Where(neg, nan, r);
    op.Where(is0, inf, r)
}

/// j0(x) = sin x / x (Taylor series below 1/2, 0 at ±inf), as torch's `spherical_bessel_j0_forward`.
fn spherical_j0_d(op: &mut Builder, x: Value) -> Value {
    let z = op.Mul(x, x);
    let coef = [1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0];
    // 1 + z(c5 + z(c4 + ...)) evaluated from the innermost term outwards.
    let mut acc = op.scalar(D, coef[0]);
    for &c in &coef[1..] {
        let m = op.Mul(z, acc);
        let kc = op.scalar(D, c);
        acc = op.Add(kc, m);
    }
    let m = op.Mul(z, acc);
    let one = op.scalar(D, 1.0);
    let series = op.Add(one, m);
    let s = op.Sin(x);
    let direct = op.Div(s, x);
    let ax = op.Abs(x);
    let half = op.scalar(D, 0.5);
    let lt = op.Less(ax, half);
    let r = op.Where(lt, series, direct);
    let inf = op.IsInf(x).out();
    let zero = op.scalar(D, 0.0);
    op.Where(inf, zero, r)
}

const AIRY_AN: [f64; 8] = [
    3.46538101525629032477e-01,
    1.20075952739645805542e+01,
    7.62796053615234516538e+01,
    1.68089224934630576269e+02,
    1.59756391350164413639e+02,
    7.05360906840444183113e+01,
    1.40264691163389668864e+01,
    9.99999999999999995305e-01,
];
const AIRY_AD: [f64; 8] = [
    5.67594532638770212846e-01,
    1.47562562584847203173e+01,
    8.45138970141474626562e+01,
    1.77318088145400459522e+02,
    1.64234692871529701831e+02,
    7.14778400825575695274e+01,
    1.40959135607834029598e+01,
    1.00000000000000000470e+00,
];
const AIRY_AFN: [f64; 9] = [
    -1.31696323418331795333e-01,
    -6.26456544431912369773e-01,
    -6.93158036036933542233e-01,
    -2.79779981545119124951e-01,
    -4.91900132609500318020e-02,
    -4.06265923594885404393e-03,
    -1.59276496239262096340e-04,
    -2.77649108155232920844e-06,
    -1.67787698489114633780e-08,
];
const AIRY_AFD: [f64; 9] = [
    1.33560420706553243746e+01,
    3.26825032795224613948e+01,
    2.67367040941499554804e+01,
    9.18707402907259625840e+00,
    1.47529146771666414581e+00,
    1.15687173795188044134e-01,
    4.40291641615211203805e-03,
    7.54720348287414296618e-05,
    4.51850092970580378464e-07,
];
const AIRY_AGN: [f64; 11] = [
    1.97339932091685679179e-02,
    3.91103029615688277255e-01,
    1.06579897599595591108e+00,
    9.39169229816650230044e-01,
    3.51465656105547619242e-01,
    6.33888919628925490927e-02,
    5.85804113048388458567e-03,
    2.82851600836737019778e-04,
    6.98793669997260967291e-06,
    8.11789239554389293311e-08,
    3.41551784765923618484e-10,
];
const AIRY_AGD: [f64; 10] = [
    9.30892908077441974853e+00,
    1.98352928718312140417e+01,
    1.55646628932864612953e+01,
    5.47686069422975497931e+00,
    9.54293611618961883998e-01,
    8.64580826352392193095e-02,
    4.12656523824222607191e-03,
    1.01259085116509135510e-04,
    1.17166733214413521882e-06,
    4.91834570062930015649e-09,
];
/// 1/√π.
const FRAC_1_SQRT_PI: f64 = 5.64189583547756286948e-01;

/// Airy Ai(x), as torch's `airy_ai_forward` (Cephes `airy`): asymptotic rational forms below
/// -2.09 and from 2.09 on, the Maclaurin series between (its 12 float64 terms at |x| = 2.09 are
/// covered by 16); NaN at ±inf, 0 above 103.892.
fn airy_ai_d(op: &mut Builder, x: Value) -> Value {
    let one = op.scalar(D, 1.0);
    // x < -2.09: with ζ = -2x√(-x)/3, z = 1/ζ, θ = ζ + π/4:
    // (sin θ·(1 + z²·AFN/AFD) - cos θ·z·AGN/AGD) / (√π·(-x)^¼).
    let nx = op.Neg(x);
    let snx = op.Sqrt(nx);
    let m23 = op.scalar(D, -2.0 / 3.0);
    let zt = op.Mul(m23, x);
    let zt = op.Mul(zt, snx);
    let z = op.Reciprocal(zt);
    let zz = op.Mul(z, z);
    let afn = polevl(op, zz, &AIRY_AFN);
    let afd = polevl(op, zz, &AIRY_AFD);
    let agn = polevl(op, zz, &AIRY_AGN);
    let agd = polevl(op, zz, &AIRY_AGD);
    let q4 = op.scalar(D, 0.25 * PI);
    let th = op.Add(zt, q4);
    let sn = op.Sin(th);
    let cs = op.Cos(th);
    let f1 = op.Mul(zz, afn);
    let f1 = op.Div(f1, afd);
    let f1 = op.Add(one, f1);
    let f1 = op.Mul(sn, f1);
    let g1 = op.Mul(z, agn);
    let g1 = op.Div(g1, agd);
    let g1 = op.Mul(cs, g1);
    let d = op.Sub(f1, g1);
    let c = op.scalar(D, FRAC_1_SQRT_PI);
    let qq = op.Sqrt(snx);
    let l = op.Div(c, qq);
    let neg = op.Mul(l, d);
    // x >= 2.09: ζ = 2x√x/3; Ai = AN(1/ζ)/AD(1/ζ) / (2√π·x^¼·e^ζ).
    let sx = op.Sqrt(x);
    let p23 = op.scalar(D, 2.0 / 3.0);
    let ze = op.Mul(p23, x);
    let ze = op.Mul(ze, sx);
    let iz = op.Reciprocal(ze);
    let an = polevl(op, iz, &AIRY_AN);
    let ad = polevl(op, iz, &AIRY_AD);
    let r = op.Div(an, ad);
    let r = op.Mul(c, r);
    let two = op.scalar(D, 2.0);
    let qx = op.Sqrt(sx);
    let den = op.Mul(two, qx);
    let e = op.Exp(ze);
    let den = op.Mul(den, e);
    let pos = op.Div(r, den);
    // Between: f = Σ m_j, g = Σ n_j with m_0 = 1, n_0 = x and z = x³, as Cephes steps them.
    let z3 = op.Mul(x, x);
    let z3 = op.Mul(z3, x);
    let (mut f, mut g, mut m, mut n) = (one, x, one, x);
    let mut kk = 1.0;
    for _ in 0..16 {
        m = op.Mul(m, z3);
        kk += 1.0;
        let c = op.scalar(D, kk);
        m = op.Div(m, c);
        n = op.Mul(n, z3);
        kk += 1.0;
        let c = op.scalar(D, kk);
        n = op.Div(n, c);
        m = op.Div(m, c);
        f = op.Add(f, m);
        kk += 1.0;
        let c = op.scalar(D, kk);
        n = op.Div(n, c);
        g = op.Add(g, n);
    }
    let c1 = op.scalar(D, 0.355028053887817239260);
    let c2 = op.scalar(D, 0.258819403792806798405);
    let a = op.Mul(c1, f);
    let b = op.Mul(c2, g);
    let mid = op.Sub(a, b);
    let lo = op.scalar(D, -2.09);
    let hi = op.scalar(D, 2.09);
    let is_hi = op.GreaterOrEqual(x, hi);
    let r = op.Where(is_hi, pos, mid);
    let is_lo = op.Less(x, lo);
    let r = op.Where(is_lo, neg, r);
    let big = op.scalar(D, 103.892);
    let over = op.Greater(x, big);
    let zero = op.scalar(D, 0.0);
    let r = op.Where(over, zero, r);
    let inf = op.IsInf(x).out();
    let nan = op.scalar(D, f64::NAN);
    op.Where(inf, nan, r)
}

translations! {
    /// special_bessel_j0(Tensor self) -> Tensor
    #[target("aten::special_bessel_j0")]
    fn special_bessel_j0(op, self_: Tensor) -> Value {
        in_float64(op, self_, bessel_j0_d)
    }

    /// special_bessel_j1(Tensor self) -> Tensor
    #[target("aten::special_bessel_j1")]
    fn special_bessel_j1(op, self_: Tensor) -> Value {
        in_float64(op, self_, bessel_j1_d)
    }

    /// special_bessel_y0(Tensor self) -> Tensor
    #[target("aten::special_bessel_y0")]
    fn special_bessel_y0(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_y_d(op, x, false))
    }

    /// special_bessel_y1(Tensor self) -> Tensor
    #[target("aten::special_bessel_y1")]
    fn special_bessel_y1(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_y_d(op, x, true))
    }

    /// i0(Tensor self) -> Tensor
    #[target("aten::i0", "aten::special_i0", "aten::special_modified_bessel_i0")]
    fn i0(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_i0_d(op, x, false))
    }

    /// special_i0e(Tensor self) -> Tensor
    #[target("aten::special_i0e")]
    fn special_i0e(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_i0_d(op, x, true))
    }

    /// special_i1(Tensor self) -> Tensor
    #[target("aten::special_i1", "aten::special_modified_bessel_i1")]
    fn special_i1(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_i1_d(op, x, false))
    }

    /// special_i1e(Tensor self) -> Tensor
    #[target("aten::special_i1e")]
    fn special_i1e(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_i1_d(op, x, true))
    }

    /// special_modified_bessel_k0(Tensor self) -> Tensor
    #[target("aten::special_modified_bessel_k0")]
    fn special_modified_bessel_k0(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_k_d(op, x, false, false))
    }

    /// special_modified_bessel_k1(Tensor self) -> Tensor
    #[target("aten::special_modified_bessel_k1")]
    fn special_modified_bessel_k1(op, self_: Tensor) -> Value {
        in_float64(op, self_, |op, x| bessel_k_d(op, x, true, false))
    }

    /// special_scaled_modified_bessel_k0(Tensor x) -> Tensor
    #[target("aten::special_scaled_modified_bessel_k0")]
    fn special_scaled_modified_bessel_k0(op, x: Tensor) -> Value {
        in_float64(op, x, |op, x| bessel_k_d(op, x, false, true))
    }

    /// special_scaled_modified_bessel_k1(Tensor x) -> Tensor
    #[target("aten::special_scaled_modified_bessel_k1")]
    fn special_scaled_modified_bessel_k1(op, x: Tensor) -> Value {
        in_float64(op, x, |op, x| bessel_k_d(op, x, true, true))
    }

    /// special_spherical_bessel_j0(Tensor x) -> Tensor
    #[target("aten::special_spherical_bessel_j0")]
    fn special_spherical_bessel_j0(op, x: Tensor) -> Value {
        in_float64(op, x, spherical_j0_d)
    }

    /// special_airy_ai(Tensor x) -> Tensor
    #[target("aten::special_airy_ai")]
    fn special_airy_ai(op, x: Tensor) -> Value {
        in_float64(op, x, airy_ai_d)
    }
}
