"""GPTQ, AWQ and SmoothQuant: against numpy references written here (an unblocked
GPTQ with the explicit inverse-Hessian elimination, AWQ's loss, SmoothQuant's scales),
stream independence of the codes, and the perplexity of a small byte-level transformer
trained here on the standard library's source (float / RTN int4 / GPTQ / AWQ)."""
import numpy as np
import pytest

import lucid
import lucid.quantization as Q
from lucid import nn
from lucid.quantization.awq import awq_clip, awq_search_scale
from lucid.quantization.gptq import gptq_quantize_weight
from lucid.quantization.llm_calibration import AffineIntGrid, Int4Grid, rtn, dequantize_rtn
from lucid.quantization.smoothquant import smoothing_scales
from lucid.models.tiny_lm import TinyLM, batches, perplexity, stdlib_corpus, train_tiny_lm

f32 = np.float32


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    # the host-side linear algebra (Hessians, Cholesky) on one BLAS thread: the machine is shared
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(1):
        yield


def tinygemm_qparams(w):
    mn, mx = w.min(axis=1), w.max(axis=1)
    s = np.maximum((mx - mn) / f32(15), f32(1e-6))
    return s, (mn + s * f32(8)) - s * f32(8)


def tinygemm_q(w, s, b):
    return np.clip(np.rint((w - b) / s), 0, 15)


def ref_gptq(w, h, g, percdamp):
    """Unblocked GPTQ: round column i, push its error onto the later columns through
    the inverse Hessian of the remaining columns, eliminate i (no Cholesky)."""
    w = w.astype(np.float64).copy()
    h = h.copy()
    n, k = w.shape
    h[np.diag_indices(k)] += percdamp * np.mean(np.diag(h))
    hinv = np.linalg.inv(h)
    codes = np.zeros((n, k))
    for i in range(k):
        if i % g == 0:
            s, b = tinygemm_qparams(w[:, i:i + g].astype(f32))
        q = tinygemm_q(w[:, i].astype(f32), s, b)
        codes[:, i] = q
        dq = (q.astype(f32) * s + b).astype(np.float64)
        e = (w[:, i] - dq) / hinv[i, i]
        w[:, i + 1:] -= np.outer(e, hinv[i, i + 1:])
        hinv = hinv - np.outer(hinv[:, i], hinv[i, :]) / hinv[i, i]
    return codes


def calib_x(rows, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, k)) * np.exp(rng.uniform(-1, 1, k))
    x[:, 3] *= 25  # an outlier channel
    return x


@pytest.mark.parametrize("block", [128, 32, 1])
def test_gptq_matches_unblocked_reference(block):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((24, 128)).astype(f32)
    x = calib_x(512, 128, 1)
    h = 2.0 / x.shape[0] * x.T @ x
    codes, s, b = gptq_quantize_weight(w, h, Int4Grid(32), percdamp=0.01, block_size=block)
    np.testing.assert_array_equal(codes, ref_gptq(w, h, 32, 0.01))
    # and its output error on the calibration data beats round-to-nearest's
    dq = codes.astype(f32) * np.repeat(s, 32, 1) + np.repeat(b, 32, 1)
    rq, rs, rb = rtn(Int4Grid(32), w)
    rdq = dequantize_rtn(Int4Grid(32), rq, rs, rb)
    err = lambda d: np.mean((x @ (d.astype(np.float64) - w).T) ** 2)  # noqa: E731
    assert err(dq) < 0.9 * err(rdq)


def test_gptq_act_order_and_dead_inputs():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((16, 64)).astype(f32)
    x = calib_x(256, 64, 3)
    x[:, 7] = 0.0  # a dead input: its weight column becomes 0
    h = 2.0 / x.shape[0] * x.T @ x
    grid = AffineIntGrid(8, Q.MappingType.SYMMETRIC, None, 2.0 ** -23)
    codes, s, z = gptq_quantize_weight(w, h, grid, act_order=True)
    assert np.all(codes[:, 7] == 0) and codes.min() >= -128 and codes.max() <= 127
    # act_order keeps per-row qparams from the unquantized weight (torchao's int8 grid)
    np.testing.assert_array_equal(s[:, 0], np.maximum(np.abs(np.where(np.arange(64) == 7, 0, w)).max(1)
                                                      / f32(127.5), f32(2.0 ** -23)))
    dq = codes * s
    rq, rs, _ = rtn(grid, np.where(np.arange(64) == 7, 0, w).astype(f32))
    err = lambda d: np.mean((x @ (d - w).T) ** 2)  # noqa: E731
    assert err(dq) < err(rq * rs)
    with pytest.raises(ValueError, match="positive definite"):
        gptq_quantize_weight(w, -np.eye(64), grid, percdamp=0.0)


def test_awq_search_never_worse_than_rtn_on_calibration():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((32, 128)).astype(f32)
    x = calib_x(1024, 128, 5)
    grid = Int4Grid(64)
    s, codes, sc, z = awq_search_scale(w, x, grid, n_grid=20, clip=False, duo_scaling=False)
    # the stored weight is Q(W * s); the layer computes (x / s) @ Q(W * s)^T
    eff = dequantize_rtn(grid, codes, sc, z).astype(np.float64) / s
    rq, rs, rb = rtn(grid, w)
    loss = lambda d: np.mean((x @ d.T - x @ w.astype(np.float64).T) ** 2)  # noqa: E731
    assert loss(eff) < 0.8 * loss(dequantize_rtn(grid, rq, rs, rb).astype(np.float64))
    assert s[3] == s.max()  # the outlier channel is scaled up most


def test_awq_clip_matches_exhaustive_reference():
    # per output row and group of 32: the clamp [-c amax, c amax], c = 1 - i/20, i < 10, whose
    # tinygemm-rounded weights give the least squared error of that group's partial product
    rng = np.random.default_rng(6)
    w = (rng.standard_normal((12, 64)) * rng.uniform(0.2, 3.0, (12, 1))).astype(f32)
    w[2, 5] = 9.0  # an outlier weight: clipping it pays off
    x = calib_x(300, 64, 7)
    got = awq_clip(Int4Grid(32), w, x)
    want = w.copy()
    for r in range(12):
        for j in range(0, 64, 32):
            wg, xg = w[r:r + 1, j:j + 32], x[:, j:j + 32]
            amax = np.abs(wg).max()
            errs, cands = [], []
            for i in range(10):
                m = f32(amax * f32(1.0 - i / 20))
                c = np.clip(wg, -m, m).astype(f32)
                s, b = tinygemm_qparams(c)
                dq = tinygemm_q(c, s[:, None], b[:, None]).astype(f32) * s[:, None] + b[:, None]
                errs.append(np.mean((xg @ (dq.astype(np.float64) - wg).T) ** 2))
                cands.append(c)
            want[r:r + 1, j:j + 32] = cands[int(np.argmin(errs))]
    np.testing.assert_array_equal(got, want)
    assert np.abs(got[2]).max() < 9.0  # the outlier was clipped


class _PreNorm(nn.Module):
    def __init__(self, residual_from_norm=False):
        super().__init__()
        self.residual_from_norm = residual_from_norm
        self.ln = nn.LayerNorm(64)
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 64)

    def forward(self, x):
        y = self.ln(x)
        out = self.fc2(nn.functional.gelu(self.fc1(y)))
        return out + y if self.residual_from_norm else out + x


def _prenorm(residual_from_norm=False):
    lucid.manual_seed(3)
    m = _PreNorm(residual_from_norm)
    with lucid.no_grad():
        m.ln.weight.data = lucid.tensor(np.linspace(0.5, 2.0, 64).astype(f32))
    return m.eval()


def test_awq_folds_scales_into_the_layernorm_before_it():
    m, ref = _prenorm(), _prenorm()
    x = _calib(seed=5)[0]
    Q.awq(m, _calib(), Q.AWQConfig(Q.Int4WeightOnlyConfig(64)))
    assert isinstance(m.fc1, nn.quantized.QuantizedLinearMLX)  # the scale went into ln
    assert isinstance(m.fc2, Q.InputScaledLinear)  # after the GELU: no op to fold into
    s = ref.ln.weight.numpy() / m.ln.weight.numpy()
    np.testing.assert_allclose(ref.ln.bias.numpy() / s, m.ln.bias.numpy(), atol=1e-7)
    assert s.max() / s.min() > 1.5  # a real per-channel scale, not all ones
    err = float((m(x) - ref(x)).abs().max())
    plain = _prenorm()
    Q.quantize_(plain, Q.Int4WeightOnlyConfig(64))
    assert err < 2.0 * float((plain(x) - ref(x)).abs().max())
    # the LayerNorm's output also feeds the residual: folding would change the model, so it is refused
    m = _prenorm(residual_from_norm=True)
    Q.awq(m, _calib(), Q.AWQConfig(Q.Int4WeightOnlyConfig(64)))
    assert isinstance(m.fc1, Q.InputScaledLinear)
    np.testing.assert_array_equal(m.ln.weight.numpy(), _prenorm().ln.weight.numpy())


def test_smoothing_scales_hand_values():
    a = np.array([4.0, 1.0, 0.0, 9.0])
    w = np.array([[1.0, -4.0, 2.0, 0.0], [0.5, 2.0, -1.0, 0.0]])
    s = smoothing_scales(a, w, alpha=0.5)
    np.testing.assert_allclose(s, [2.0 / 1.0, 1.0 / 2.0, 1.0, 1.0])  # sqrt(a) / sqrt(w); 1 where either is 0


def _mlp(seed=0):
    lucid.manual_seed(seed)
    m = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))
    return m.eval()


def _calib(seed=1, n=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        x = rng.standard_normal((32, 64)).astype(f32)
        x[:, 3] *= 20
        out.append(lucid.tensor(x))
    return out


def _codes(model):
    out = []
    for _, mod in model.named_modules():
        for name in ("packed_weight", "qdata", "scales", "biases", "scale", "input_scale", "weight"):
            t = getattr(mod, name, None)
            if isinstance(t, lucid.Tensor) and "Module" not in type(t).__name__:
                out.append(t.numpy())
    return out


@pytest.mark.parametrize("algo", ["gptq", "gptq_act", "awq", "awq_clip_prenorm", "smoothquant"])
def test_same_codes_on_both_streams(algo):
    got = {}
    for dev in ("cpu", "gpu"):
        m = (_prenorm() if algo == "awq_clip_prenorm" else _mlp()).to(dev)
        cal = [c.to(dev) for c in _calib()]
        if algo == "gptq":
            Q.gptq(m, cal, Q.Int4WeightOnlyConfig(32))
        elif algo == "gptq_act":
            Q.gptq(m, cal, Q.GPTQConfig(Q.Int8WeightOnlyConfig(), act_order=True))
        elif algo == "awq":
            Q.awq(m, cal, Q.Int4WeightOnlyConfig(64))
        elif algo == "awq_clip_prenorm":
            Q.awq(m, cal, Q.AWQConfig(Q.Int4WeightOnlyConfig(64), clip=True))
        else:
            Q.smoothquant(m, cal, alpha=0.5)
        assert next(iter(m.buffers())).device == dev
        got[dev] = _codes(m)
        y = m(cal[0])
        assert y.device == dev and y.shape == (32, 64)
    assert len(got["cpu"]) >= 4
    for a, b in zip(got["cpu"], got["gpu"]):
        np.testing.assert_array_equal(a, b)


def test_modules_produced_and_errors():
    m = _mlp()
    Q.gptq(m, _calib(), Q.Int4WeightOnlyConfig(32))
    assert isinstance(m[0], nn.quantized.QuantizedLinearMLX) and isinstance(m[2], nn.quantized.QuantizedLinearMLX)
    m = _mlp()
    Q.awq(m, _calib(), Q.Int8WeightOnlyConfig())
    assert isinstance(m[0], Q.InputScaledLinear) and isinstance(m[0].inner, Q.AffineWeightOnlyLinear)
    m = _mlp()
    Q.smoothquant(m, _calib())
    assert isinstance(m[2].inner, Q.Int8DynamicLinear)
    ref = _mlp()
    x = _calib(seed=9)[0]
    smooth_err = float((m(x) - ref(x)).abs().max())
    plain = _mlp()
    Q.quantize_(plain, Q.Int8DynamicActivationInt8WeightConfig())
    assert smooth_err < float((plain(x) - ref(x)).abs().max())  # the outlier channel hurts plain int8 more
    with pytest.raises(ValueError, match="calibration_batches"):
        Q.gptq(_mlp(), [])
    with pytest.raises(TypeError, match="base config"):
        Q.gptq(_mlp(), _calib(), Q.Int8DynamicActivationInt8WeightConfig())
    with pytest.raises(ValueError, match="alpha"):
        Q.smoothquant(_mlp(), _calib(), alpha=2)
    with pytest.raises(ValueError, match="calibration_device"):
        Q.awq(_mlp(), _calib(), calibration_device="tpu")


class _Overflow(nn.Module):
    def forward(self, x):
        return x * float("inf")


def test_failure_in_a_later_layer_leaves_the_model_float():
    lucid.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 64), _Overflow(), nn.Linear(64, 64))
    with pytest.raises(ValueError, match="NaN or infinite"):
        Q.gptq(m, _calib(), Q.Int4WeightOnlyConfig(32))
    assert type(m[0]) is nn.Linear and type(m[2]) is nn.Linear


# ---- the language model ----

SEQ = 64


@pytest.fixture(scope="module")
def lm():
    lucid.set_num_threads(1)
    data = stdlib_corpus(300_000)
    train, held = data[:270_000], data[270_000:]
    model = train_tiny_lm(train, steps=LM_STEPS, seq_len=SEQ, batch_size=32, d_model=128, n_layers=2, n_heads=4)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    calib = [lucid.tensor(b[:, :-1]) for b in batches(train, SEQ, 16, 8, seed=123)]
    return state, calib, held


LM_STEPS = 400


def _fresh(state):
    m = TinyLM(d_model=128, n_layers=2, n_heads=4, max_len=SEQ)
    m.load_state_dict({k: lucid.tensor(v) for k, v in state.items()})
    return m.eval()


@pytest.fixture(scope="module")
def lm_ppl(lm):
    state, calib, held = lm
    ppl = {"float": perplexity(_fresh(state), held, SEQ)}
    m = _fresh(state)
    Q.quantize_(m, Q.Int4WeightOnlyConfig(128))
    ppl["rtn"] = perplexity(m, held, SEQ)
    m = _fresh(state)
    Q.gptq(m, calib, Q.GPTQConfig(Q.Int4WeightOnlyConfig(128), act_order=True))
    ppl["gptq"] = perplexity(m, held, SEQ)
    m = _fresh(state)
    Q.awq(m, calib, Q.AWQConfig(Q.Int4WeightOnlyConfig(128)))
    ppl["awq"] = perplexity(m, held, SEQ)
    return ppl


def test_lm_gptq_perplexity_target(lm_ppl):
    ppl = lm_ppl
    rtn_inc = ppl["rtn"] - ppl["float"]
    assert ppl["float"] < 6.0, ppl  # it learned (a uniform byte model has 256)
    assert rtn_inc > 0, ppl
    assert ppl["gptq"] - ppl["float"] <= 0.5 * rtn_inc, ppl


def test_lm_awq_improves_on_rtn(lm_ppl):
    ppl = lm_ppl
    assert ppl["awq"] < ppl["rtn"], ppl


@pytest.mark.xfail(reason="not met by the published algorithm on this model (bench/llm_quant.py, increase over float "
                          "as a fraction of RTN's: scale search 0.59, + clipping search 1.28, as published with float "
                          "statistics 1.38, duo scaling 1.21; GPTQ 0.39): its activations have no outlier channels "
                          "(max / median of mean |x| per channel <= 3.3), so per-channel scaling has little to protect",
                   strict=False)
def test_lm_awq_perplexity_target(lm_ppl):
    ppl = lm_ppl
    assert ppl["awq"] - ppl["float"] <= 0.5 * (ppl["rtn"] - ppl["float"]), ppl
