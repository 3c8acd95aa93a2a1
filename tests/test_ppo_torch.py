"""The symbolic path's PPO (benchmarks/ppo_torch.py): its policies and value normalisation."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.extras import need

need("torch")
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from ppo_torch import PPO, PPO_SETTINGS, GridLayout, make_policy

LAYOUT = GridLayout(9, 7, 17)
OBS_SIZE = LAYOUT.size + 22


def test_the_conv_policy_reads_the_grid_cell_by_cell() -> None:
    """A cell's contents reach the conv only through that cell's neighbourhood: changing a
    corner cell changes the first conv layer's output near that corner alone."""
    torch.manual_seed(0)
    net = make_policy("conv", OBS_SIZE, 17, layout=LAYOUT, conv_channels=(4,))
    obs = torch.zeros(2, OBS_SIZE)
    obs[1, 0 * 7 * 17 + 0 * 17 + 5] = 1.0  # x=0, y=0, channel 5
    grid = obs[:, : LAYOUT.size].reshape(-1, 9, 7, 17).permute(0, 3, 1, 2)
    first = net.convs[0](grid)
    changed = (first[0] != first[1]).any(0)
    assert changed[:2, :2].all() and changed.sum() == 4
    logits, values = net(obs)
    assert logits.shape == (2, 17) and values.shape == (2,)


def test_make_policy_refuses_what_it_cannot_build() -> None:
    with pytest.raises(ValueError, match="grid layout"):
        make_policy("conv", OBS_SIZE, 17)
    with pytest.raises(ValueError, match="mlp, conv"):
        make_policy("resnet", OBS_SIZE, 17)


def test_value_normalisation_tracks_every_return_seen() -> None:
    ppo = PPO(OBS_SIZE, 17, 2, n_steps=4, norm_value=True)
    batches = [torch.randn(64) * 3 + 5, torch.randn(32) * 0.5 - 1, torch.randn(128) + 2]
    for batch in batches:
        targets = ppo._value_targets(batch)
    pooled = torch.cat(batches).numpy().astype(np.float64)
    count, mean, variance = ppo._return_stats
    assert count == len(pooled)
    assert mean == pytest.approx(pooled.mean(), rel=1e-5)
    assert variance == pytest.approx(pooled.var(), rel=1e-4)
    assert torch.allclose(targets, (batches[-1] - mean) / np.sqrt(variance), atol=1e-4)
    assert torch.allclose(ppo._unscaled(targets), batches[-1], atol=1e-4)


def test_the_paper_settings_are_ppos_defaults() -> None:
    """``PPO_SETTINGS`` (what a run records as the paper's agent) is what ``PPO()`` builds."""
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(PPO).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    settings = {key: value for key, value in PPO_SETTINGS.items() if key != "anneal_lr"}
    assert settings == {key: defaults[key] for key in settings}
    assert defaults["anneal_steps"] == 0 and not PPO_SETTINGS["anneal_lr"]
