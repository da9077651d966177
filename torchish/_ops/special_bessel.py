"""The Bessel-family functions of torch.special (J0, J1, Y0, Y1, K0, K1 and their scaled
forms, Airy Ai), evaluated the way PyTorch's CPU kernels are: Cephes' rational and Chebyshev
approximations per range, in the input's own precision, with its answers at 0, negative
arguments, infinities and NaN. None of them is differentiable in PyTorch (no grad_fn)."""
import jax
import jax.numpy as jnp

from .pointwise import legacy_name
from .registry import Promote, op

P = Promote

# Cephes' coefficients (the numbers PyTorch's kernels use), highest power first.
_AI_AN = (
    3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
    1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
    1.40264691163389668864e+01, 9.99999999999999995305e-01,)
_AI_AD = (
    5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
    1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
    1.40959135607834029598e+01, 1.00000000000000000470e+00,)
_AI_AFN = (
    -1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
    -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
    -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08,)
_AI_AFD = (
    1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
    9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
    4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07,)
_AI_AGN = (
    1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
    5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
    8.11789239554389293311e-08, 3.41551784765923618484e-10,)
_AI_AGD = (
    9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
    5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
    4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
    4.91834570062930015649e-09,)
_J0_PP = (
    7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
    5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
    9.99999999999999997821e-01,)
_J0_PQ = (
    9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
    5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
    1.00000000000000000218e+00,)
_J0_QP = (
    -1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
    -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
    -5.14105326766599330220e+01, -6.05014350600728481186e+00,)
_J0_QQ = (
    6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
    7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
    2.42005740240291393179e+02,)
_J0_RP = (
    -4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
    9.70862251047306323952e+15,)
_J0_RQ = (
    4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
    1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
    3.18121955943204943306e+16, 1.71086294081043136091e+18,)
_J1_PP = (
    7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
    5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
    1.00000000000000000254e+00,)
_J1_PQ = (
    5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
    5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
    9.99999999999999997461e-01,)
_J1_QP = (
    5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
    3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
    2.11688757100572135698e+02, 2.52070205858023719784e+01,)
_J1_QQ = (
    7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
    9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
    3.36093607810698293419e+02,)
_J1_RP = (
    -8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
    3.68295732863852883286e+15,)
_J1_RQ = (
    6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
    2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
    8.95222336184627338078e+16, 5.32278620332680085395e+18,)
_Y0_YP = (
    1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
    -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
    4.42733268572569800351e+16, -1.84950800436986690637e+16,)
_Y0_YQ = (
    1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
    8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
    2.50596256172653059228e+17,)
_Y1_YP = (
    1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
    -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17,)
_Y1_YQ = (
    5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
    1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
    6.87141087355300489866e+16, 3.97270608116560655612e+18,)
_I0_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-09,
    -1.30002500998624804212e-08, 6.04699502254191894932e-08, -2.67079385394061173391e-07,
    1.11738753912010371815e-06, -4.41673835845875056359e-06, 1.64484480707288970893e-05,
    -5.75419501008210370398e-05, 1.88502885095841655729e-04, -5.76375574538582365885e-04,
    1.63947561694133579842e-03, -4.32430999505057594430e-03, 1.05464603945949983183e-02,
    -2.37374148058994688156e-02, 4.93052842396707084878e-02, -9.49010970480476444210e-02,
    1.71620901522208775349e-01, -3.04682672343198398683e-01, 6.76795274409476084995e-01,)
_I1_A = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-09,
    9.38153738649577178388e-09, -4.44505912879632808065e-08, 2.00329475355213526229e-07,
    -8.56872026469545474066e-07, 3.47025130813767847674e-06, -1.32731636560394358279e-05,
    4.78156510755005422638e-05, -1.61760815825896745588e-04, 5.12285956168575772895e-04,
    -1.51357245063125314899e-03, 4.15642294431288815669e-03, -1.05640848946261981558e-02,
    2.47264490306265168283e-02, -5.29459812080949914269e-02, 1.02643658689847095384e-01,
    -1.76416518357834055153e-01, 2.52587186443633654823e-01,)
_K0_A = (
    1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
    1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
    -5.35327393233902768720e-01,)
_K0_B = (
    5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
    6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
    -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
    1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
    2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
    -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
    2.44030308206595545468e+00,)
_K1_A = (
    -7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
    -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
    -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
    -3.53155960776544875667e-01, 1.52530022733894777053e+00,)
_K1_B = (
    -5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
    1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
    -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
    3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
    2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
    -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
    1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
    2.72062619048444266945e+00,)


def _check(name, x):
    if x.dtype in (jnp.float16, jnp.bfloat16) or jnp.iscomplexobj(x):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{legacy_name(x)}'")


def _c(x, v):
    return jnp.asarray(v, x.dtype)


def _div(a, b):
    # XLA's CPU float32 division is not correctly rounded (off by an ulp a third of the
    # time); a float64 quotient rounded to float32 is, as the kernels' division is
    if a.dtype == jnp.float32:
        return (a.astype(jnp.float64) / b.astype(jnp.float64)).astype(jnp.float32)
    return a / b


def _horner(z, coefs):
    # starting from 0 (not the first coefficient) keeps 0 * inf = nan where the kernels get it
    acc = jnp.zeros_like(z)
    for c in coefs:
        acc = acc * z + _c(z, c)
    return acc


def _cheb(y, coefs):
    """Clenshaw's sum of a Chebyshev series at y (Cephes' chbevl)."""
    a, q, p = _c(y, coefs[0]), jnp.zeros_like(y), jnp.zeros_like(y)
    for c in coefs[1:]:
        p, q = q, a
        a = y * q - p + _c(y, c)
    return _c(y, 0.5) * (a - p)


_INV_SQRT_PI = 5.64189583547756286948e-01
_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448


def _asymptotic(x, pp, pq, qp, qq, shift, w, sine):
    """The large-x form shared by J0/J1 (cos) and Y0/Y1 (sin): amplitude and phase rationals
    in w = (5 / x)^2."""
    s = x - _c(x, shift)
    p = _div(_horner(w, pp), _horner(w, pq))
    q = _div(_c(x, 5.0), x) * _div(_horner(w, qp), _horner(w, qq))
    val = p * jnp.sin(s) + q * jnp.cos(s) if sine else p * jnp.cos(s) - q * jnp.sin(s)
    return _div(val * _c(x, _SQRT_2_OVER_PI), jnp.sqrt(x))


def _j0(x):
    x = jnp.abs(x)
    xx = x * x
    small = _div((xx - _c(x, 5.78318596294678452118e+00))
                 * (xx - _c(x, 3.04712623436620863991e+01)) * _horner(xx, _J0_RP),
                 _horner(xx, _J0_RQ))
    small = jnp.where(x < _c(x, 1e-5), _c(x, 1.0) - _div(xx, _c(x, 4.0)), small)
    big = _asymptotic(x, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, 0.785398163397448309615660845819875721,
                      _div(_c(x, 25.0), xx), False)
    return jnp.where(x <= _c(x, 5.0), small, big)


def _w1(x):   # J1 and Y1 square 5 / x rather than dividing 25 by x^2
    return _div(_c(x, 5.0), x) * _div(_c(x, 5.0), x)


def _j1_nonneg(x):
    xx = x * x
    small = _div(_horner(xx, _J1_RP), _horner(xx, _J1_RQ)) * x \
        * (xx - _c(x, 1.46819706421238932572e+01)) * (xx - _c(x, 4.92184563216946036703e+01))
    big = _asymptotic(x, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, 2.356194490192344928846982537459627163,
                      _w1(x), False)
    return jnp.where(x <= _c(x, 5.0), small, big)


def _j1(x):
    return jnp.where(x < 0, -_j1_nonneg(-x), _j1_nonneg(x))


def _y_edges(x, val):
    val = jnp.where(x < 0, jnp.nan, val)   # NaN inputs stay NaN through the formulas
    return jnp.where(x == 0, -jnp.inf, val)


def _y0(x):
    xx = x * x
    small = _div(_horner(xx, _Y0_YP), _horner(xx, _Y0_YQ)) \
        + _c(x, _TWO_OVER_PI) * jnp.log(x) * _j0(x)
    big = _asymptotic(x, _J0_PP, _J0_PQ, _J0_QP, _J0_QQ, 0.785398163397448309615660845819875721,
                      _div(_c(x, 25.0), xx), True)
    return _y_edges(x, jnp.where(x <= _c(x, 5.0), small, big))


def _y1(x):
    xx = x * x
    small = x * _div(_horner(xx, _Y1_YP), _horner(xx, _Y1_YQ)) \
        + _c(x, _TWO_OVER_PI) * (_j1_nonneg(x) * jnp.log(x) - _div(_c(x, 1.0), x))
    big = _asymptotic(x, _J1_PP, _J1_PQ, _J1_QP, _J1_QQ, 2.356194490192344928846982537459627163,
                      _w1(x), True)
    return _y_edges(x, jnp.where(x <= _c(x, 5.0), small, big))


def _i0_small(x):   # I0 on [0, 8] (PyTorch's modified_bessel_i0 kernel, used by K0)
    return jnp.exp(x) * _cheb(x / _c(x, 2.0) - _c(x, 2.0), _I0_A)


def _i1_small(x):   # I1 on [0, 8]
    return _cheb(x / _c(x, 2.0) - _c(x, 2.0), _I1_A) * x * jnp.exp(x)


def _k_edges(x, val):
    val = jnp.where(x < 0, jnp.nan, val)
    return jnp.where(x == 0, jnp.inf, val)


def _k0_parts(x, scaled):
    small_series = _cheb(x * x - _c(x, 2.0), _K0_A)
    if not scaled and x.dtype == jnp.float32:
        # PyTorch's unscaled float kernel takes log(0.5 * x) in double (an untyped 0.5) and
        # rounds the difference once
        xd = x.astype(jnp.float64)
        small = (small_series.astype(jnp.float64)
                 - jnp.log(0.5 * xd) * _i0_small(x).astype(jnp.float64)).astype(x.dtype)
    else:
        small = small_series - jnp.log(_c(x, 0.5) * x) * _i0_small(x)
    big = _cheb(_div(_c(x, 8.0), x) - _c(x, 2.0), _K0_B)
    return small, big


def _k0(x):
    small, big = _k0_parts(x, False)
    big = _div(jnp.exp(-x) * big, jnp.sqrt(x))
    return _k_edges(x, jnp.where(x <= _c(x, 2.0), small, big))


def _k0e(x):
    small, big = _k0_parts(x, True)
    return _k_edges(x, jnp.where(x <= _c(x, 2.0), small * jnp.exp(x), _div(big, jnp.sqrt(x))))


def _k1_parts(x):
    small = jnp.log(_c(x, 0.5) * x) * _i1_small(x) + _div(_cheb(x * x - _c(x, 2.0), _K1_A), x)
    big = _cheb(_div(_c(x, 8.0), x) - _c(x, 2.0), _K1_B)
    return small, big


def _k1(x):
    small, big = _k1_parts(x)
    big = _div(jnp.exp(-x) * big, jnp.sqrt(x))
    return _k_edges(x, jnp.where(x <= _c(x, 2.0), small, big))


def _k1e(x):
    small, big = _k1_parts(x)
    return _k_edges(x, jnp.where(x <= _c(x, 2.0), small * jnp.exp(x), _div(big, jnp.sqrt(x))))


def _airy_series(x):
    """Ai near 0 from its Maclaurin series f(x^3), g(x^3), summed per element until the
    term falls to the dtype's epsilon (as many terms as PyTorch's loop takes)."""
    eps = _c(x, jnp.finfo(x.dtype).eps)
    z = x * x * x
    one = jnp.ones_like(x)

    def cond(c):
        return jnp.any(c[0])

    def body(c):
        live, f, g, k, m, n = c
        m1 = m * z
        k1 = k + one
        m1 = _div(m1, k1)
        n1 = n * z
        k2 = k1 + one
        n1 = _div(n1, k2)
        m1 = _div(m1, k2)
        f1 = f + m1
        k3 = k2 + one
        n1 = _div(n1, k3)
        g1 = g + n1
        still = live & (jnp.abs(_div(m1, f1)) > eps)
        pick = lambda new, old: jnp.where(live, new, old)  # noqa: E731
        return still, pick(f1, f), pick(g1, g), pick(k3, k), pick(m1, m), pick(n1, n)
    init = (jnp.ones(x.shape, bool), one, x, one, one, x)
    _, f, g, _, _, _ = jax.lax.while_loop(cond, body, init)
    return _c(x, 0.355028053887817239260) * f - _c(x, 0.258819403792806798405) * g


def _airy_ai(x):
    lo, hi = _c(x, -2.09), _c(x, 2.09)
    # the negative side: an oscillating asymptotic form in z = 1 / zeta
    xn = jnp.where(x < lo, x, -_c(x, 4.0))
    zeta_n = _div(_c(x, -2.0) * xn * jnp.sqrt(-xn), _c(x, 3.0))
    z = _div(_c(x, 1.0), zeta_n)
    zz = z * z
    f = _c(x, 1.0) + _div(zz * _horner(zz, _AI_AFN), _horner(zz, _AI_AFD))
    g = _div(z * _horner(zz, _AI_AGN), _horner(zz, _AI_AGD))
    t = zeta_n + _c(x, 0.25) * _c(x, 3.14159265358979323846264338327950288)
    neg = _div(_c(x, _INV_SQRT_PI), jnp.sqrt(jnp.sqrt(-xn))) * (jnp.sin(t) * f - jnp.cos(t) * g)
    # the positive side: exponentially small, a rational in 1 / zeta
    xp = jnp.where(x >= hi, x, _c(x, 4.0))
    zeta = _div(_c(x, 2.0) * xp * jnp.sqrt(xp), _c(x, 3.0))
    r = _div(_c(x, 1.0), zeta)
    pos = _div(_c(x, _INV_SQRT_PI) * _div(_horner(r, _AI_AN), _horner(r, _AI_AD)),
               _c(x, 2.0) * jnp.sqrt(jnp.sqrt(xp)) * jnp.exp(zeta))
    inner = ~(x < lo) & ~(x >= hi)   # NaN goes through the series, as in the kernel
    mid = _airy_series(jnp.where(inner, x, jnp.zeros_like(x)))
    out = jnp.where(x < lo, neg, jnp.where(x >= hi, pos, mid))
    out = jnp.where(x > _c(x, 103.892), jnp.zeros_like(x), out)
    return jnp.where(jnp.isinf(x), jnp.nan, out)


def _declare(name, fn):
    def impl(input):
        _check(name, input)
        return fn(input)
    impl.__name__ = impl.__qualname__ = f"_special_{name}"
    impl.__doc__ = f"torch.special.{name}(input)."
    return op(f"special_{name}", promote=P.INT_TO_FLOAT, differentiable=False, function=False,
              method=False)(impl)


special_bessel_j0 = _declare("bessel_j0", _j0)
special_bessel_j1 = _declare("bessel_j1", _j1)
special_bessel_y0 = _declare("bessel_y0", _y0)
special_bessel_y1 = _declare("bessel_y1", _y1)
special_modified_bessel_k0 = _declare("modified_bessel_k0", _k0)
special_modified_bessel_k1 = _declare("modified_bessel_k1", _k1)
special_scaled_modified_bessel_k0 = _declare("scaled_modified_bessel_k0", _k0e)
special_scaled_modified_bessel_k1 = _declare("scaled_modified_bessel_k1", _k1e)
special_airy_ai = _declare("airy_ai", _airy_ai)
