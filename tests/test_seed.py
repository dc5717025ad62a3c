"""The seed rule M = N·B, V = M + A: hand-computed values and the seed page's worked example."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vramplan.errors import ConflictingOptions, NotFinite, OutOfRange
from vramplan.parts import Component
from vramplan.presets.optimizers import OPTIMIZERS, OptimizerPreset
from vramplan.seed import estimate_seed, seed_inputs
from vramplan.units import BYTES_PER_GB


def test_worked_example_of_the_seed_page() -> None:
    # The seed calculator's worked example: 7B with Adam in mixed precision = 112 GB of model
    # states; plus 20 GB of activations = 132 GB, more than one 80 GB accelerator.
    states_only = estimate_seed(seed_inputs(7, OptimizerPreset.ADAM_MIXED))
    assert states_only.model_states_bytes == 112 * BYTES_PER_GB
    assert states_only.total_bytes == 112 * BYTES_PER_GB
    with_activations = estimate_seed(seed_inputs(7, OptimizerPreset.ADAM_MIXED, activations_gb=20))
    assert with_activations.total_bytes == 132 * BYTES_PER_GB


def test_adam_mixed_breakdown_is_2_2_4_4_4() -> None:
    estimate = estimate_seed(seed_inputs(7, OptimizerPreset.ADAM_MIXED))
    assert [item.bytes_per_param for item in estimate.breakdown] == [2, 2, 4, 4, 4]
    assert [item.component for item in estimate.breakdown] == [
        Component.WEIGHTS, Component.GRADIENTS, Component.MASTER_WEIGHTS,
        Component.OPTIMIZER_STATES, Component.OPTIMIZER_STATES,
    ]
    assert estimate.breakdown[0].memory_bytes == 14 * BYTES_PER_GB


def test_8bit_adam_is_ten_physical_bytes_and_a_planning_margin() -> None:
    # Dettmers et al. 2022: 8-bit moments; with fp16 weights/grads and an fp32 master copy,
    # 2 + 2 + 4 + 1 + 1 = 10 bytes/param. The seed's 12 is a round figure.
    spec = OPTIMIZERS[OptimizerPreset.ADAM_8BIT]
    assert spec.physical_bytes_per_param == 10
    assert spec.bytes_per_param == 12
    estimate = estimate_seed(seed_inputs(10, OptimizerPreset.ADAM_8BIT))
    assert estimate.model_states_bytes == 120 * BYTES_PER_GB
    margin = [i for i in estimate.breakdown if i.component is Component.PLANNING_MARGIN]
    assert [m.memory_bytes for m in margin] == [20 * BYTES_PER_GB]


def test_sgd_momentum_is_eight_bytes() -> None:
    estimate = estimate_seed(seed_inputs(7, OptimizerPreset.SGD_MOMENTUM))
    assert estimate.model_states_bytes == 56 * BYTES_PER_GB
    assert not [i for i in estimate.breakdown if i.component is Component.PLANNING_MARGIN]


def test_custom_bytes_per_param_has_no_breakdown() -> None:
    estimate = estimate_seed(seed_inputs(7.5, bytes_per_param=10, activations_gb=2.5))
    assert estimate.breakdown == ()
    assert estimate.model_states_bytes == 75 * BYTES_PER_GB
    assert estimate.total_bytes == 77_500_000_000


def test_default_is_adam_mixed() -> None:
    assert seed_inputs(1).optimizer is OptimizerPreset.ADAM_MIXED


def test_optimizer_and_custom_bytes_conflict() -> None:
    with pytest.raises(ConflictingOptions) as caught:
        seed_inputs(7, OptimizerPreset.ADAM_MIXED, bytes_per_param=16)
    assert caught.value.field == "optimizer"


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"params_billion": 0}, OutOfRange, "params"),
        ({"params_billion": -7}, OutOfRange, "params"),
        ({"params_billion": 100_001}, OutOfRange, "params"),
        ({"params_billion": float("nan")}, NotFinite, "params"),
        ({"params_billion": float("inf")}, NotFinite, "params"),
        ({"params_billion": 7, "bytes_per_param": 0}, OutOfRange, "bytes_per_param"),
        ({"params_billion": 7, "bytes_per_param": 1001}, OutOfRange, "bytes_per_param"),
        ({"params_billion": 7, "activations_gb": -1}, OutOfRange, "activations"),
        ({"params_billion": 7, "activations_gb": float("-inf")}, NotFinite, "activations"),
    ],
)
def test_bad_values_are_refused_with_their_field(
    kwargs: dict[str, float], error: type[Exception], field: str
) -> None:
    with pytest.raises(error) as caught:
        seed_inputs(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


params = st.floats(min_value=0.001, max_value=10_000, allow_nan=False)
bytes_pp = st.floats(min_value=0.5, max_value=100, allow_nan=False)
activations = st.floats(min_value=0, max_value=10_000, allow_nan=False)


@given(params, bytes_pp, activations)
def test_total_is_never_below_model_states(n: float, b: float, a: float) -> None:
    estimate = estimate_seed(seed_inputs(n, bytes_per_param=b, activations_gb=a))
    assert estimate.total_bytes >= estimate.model_states_bytes


@given(params, bytes_pp, activations, st.integers(min_value=2, max_value=9))
def test_total_is_linear_in_each_input(n: float, b: float, a: float, k: int) -> None:
    def total(n_: float, b_: float, a_: float) -> int:
        return estimate_seed(seed_inputs(n_, bytes_per_param=b_, activations_gb=a_)).total_bytes

    base = estimate_seed(seed_inputs(n, bytes_per_param=b, activations_gb=a))
    # Scaling N or B by k scales M by k, up to the rounding to whole parameters (k of them at
    # most, b bytes each) and to whole bytes.
    tolerance = 2 * k * (b + 1)
    scaled_n = estimate_seed(seed_inputs(n * k, bytes_per_param=b, activations_gb=a))
    assert scaled_n.model_states_bytes == pytest.approx(k * base.model_states_bytes, abs=tolerance)
    scaled_b = estimate_seed(seed_inputs(n, bytes_per_param=b * k, activations_gb=a))
    assert scaled_b.model_states_bytes == pytest.approx(k * base.model_states_bytes, abs=tolerance)
    # A adds to V one for one.
    assert total(n, b, a * k) - total(n, b, 0) == pytest.approx(k * a * 1e9, abs=1)


@pytest.mark.parametrize("preset", list(OptimizerPreset), ids=lambda p: p.value)
def test_every_preset_breakdown_sums_to_its_figure(preset: OptimizerPreset) -> None:
    estimate = estimate_seed(seed_inputs(3, preset))
    assert sum(i.bytes_per_param for i in estimate.breakdown) == OPTIMIZERS[preset].bytes_per_param
    assert sum(i.memory_bytes for i in estimate.breakdown) == estimate.model_states_bytes
    assert OPTIMIZERS[preset].source
