"""A small self-contained PPO in PyTorch for batched vector environments with flat observations.

Used by ``benchmarks/envgen_crafter.py --obs symbolic`` (and profiled against stable-baselines3
by ``benchmarks/ppo_profile.py``). It expects a gymnasium vector environment whose ``step``
returns one numpy observation batch and resets finished games in the same step
(``AutoresetMode.SAME_STEP``, ``infos["final_obs"]`` for them), such as
:class:`llmgym.envs.crafter.vector.CrafterSymbolicVectorEnv`. The algorithm is the paper's PPO
(clipped surrogate, GAE, value loss, entropy bonus, gradient clipping, per-minibatch advantage
normalisation, optionally a linearly annealed learning rate). The policy is either an MLP with
separate policy and value heads on a shared trunk (``policy="mlp"``) or, for observations that
start with a one-hot grid of cells (Crafter's symbolic view, :class:`GridLayout`), a small conv
net over that grid beside the flat rest (``policy="conv"``, :class:`GridActorCritic`).

Time is accounted in three parts (``PPO.timing``, CPU seconds of this process, which other
programs on a shared machine blur less than wall-clock time): ``env`` (inside ``vec.step``), ``act``
(the policy's forward pass and sampling during rollouts, plus buffer bookkeeping) and
``update`` (advantages and the gradient epochs).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

PPO_SETTINGS: dict[str, Any] = {
    "policy": "mlp",
    "conv_channels": (32, 32),
    "conv_stride": 1,
    "hidden": 256,
    "layers": 2,
    "layer_norm": False,
    "learning_rate": 3e-4,
    "anneal_lr": False,
    "gamma": 0.95,
    "gae_lambda": 0.65,
    "n_epochs": 3,
    "n_minibatches": 8,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "clip_range": 0.2,
    "max_grad_norm": 0.5,
    "norm_value": False,
}
"""The paper's agent as :class:`PPO`'s keywords (``anneal_lr`` aside: ``anneal_steps`` is the
run's length when it is set): an MLP with the paper's PPO settings."""

EpisodeCallback = Callable[[dict[str, Any]], None]
"""Called with ``{"return", "length", "achievements", "design"}`` for every finished episode."""


def _mlp(size: int, hidden: int, layers: int, layer_norm: bool) -> nn.Sequential:
    """``layers`` x (Linear to ``hidden``, LayerNorm if ``layer_norm``, ReLU)."""
    parts: list[nn.Module] = []
    for _ in range(layers):
        parts += [
            nn.Linear(size, hidden),
            *([nn.LayerNorm(hidden)] if layer_norm else []),
            nn.ReLU(),
        ]
        size = hidden
    return nn.Sequential(*parts)


class MLPActorCritic(nn.Module):
    """A shared MLP trunk (``hidden`` units x ``layers``, ReLU, optionally layer-normalised)
    with policy and value heads."""

    def __init__(
        self,
        obs_size: int,
        n_actions: int,
        hidden: int = 256,
        layers: int = 2,
        layer_norm: bool = False,
    ) -> None:
        super().__init__()
        self.trunk = _mlp(obs_size, hidden, layers, layer_norm)
        self.policy = nn.Linear(hidden, n_actions)
        self.value = nn.Linear(hidden, 1)
        _init_heads(self, list(self.trunk))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action logits and state values."""
        features = self.trunk(obs)
        return self.policy(features), self.value(features).squeeze(-1)


@dataclasses.dataclass(frozen=True)
class GridLayout:
    """Where an observation vector's grid is: its first ``width x height x channels`` values,
    indexed ``[x, y, channel]``; the values after it are flat features (inventory, status)."""

    width: int
    height: int
    channels: int

    @property
    def size(self) -> int:
        """The number of grid values at the start of the observation."""
        return self.width * self.height * self.channels


class GridActorCritic(nn.Module):
    """Conv layers (3x3, ReLU, same padding; the last with stride ``conv_stride``, which shrinks
    what the trunk's first layer reads) over the grid, their output flattened and joined
    with the flat features, then an MLP trunk (``hidden`` units x ``layers``) with policy and
    value heads. The first conv on one-hot cells is a learned embedding of each cell's contents
    mixed with its neighbours'; weight sharing across cells is what the MLP lacks."""

    def __init__(
        self,
        obs_size: int,
        n_actions: int,
        layout: GridLayout,
        conv_channels: tuple[int, ...] = (32, 32),
        conv_stride: int = 1,
        hidden: int = 256,
        layers: int = 2,
        layer_norm: bool = False,
    ) -> None:
        super().__init__()
        self.layout = layout
        convs: list[nn.Module] = []
        channels, width, height = layout.channels, layout.width, layout.height
        for index, out_channels in enumerate(conv_channels):
            stride = conv_stride if index == len(conv_channels) - 1 else 1
            convs += [nn.Conv2d(channels, out_channels, 3, stride, padding=1), nn.ReLU()]
            channels = out_channels
            width, height = (width - 1) // stride + 1, (height - 1) // stride + 1
        self.convs = nn.Sequential(*convs, nn.Flatten())
        size = channels * width * height + obs_size - layout.size
        self.trunk = _mlp(size, hidden, layers, layer_norm)
        self.policy = nn.Linear(hidden, n_actions)
        self.value = nn.Linear(hidden, 1)
        _init_heads(self, [*self.convs, *self.trunk])

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action logits and state values."""
        layout = self.layout
        grid = obs[:, : layout.size].reshape(-1, layout.width, layout.height, layout.channels)
        features = torch.cat((self.convs(grid.permute(0, 3, 1, 2)), obs[:, layout.size :]), 1)
        features = self.trunk(features)
        return self.policy(features), self.value(features).squeeze(-1)


POLICIES = ("mlp", "conv")
"""The policy networks :func:`make_policy` builds."""


def make_policy(
    name: str,
    obs_size: int,
    n_actions: int,
    *,
    hidden: int = 256,
    layers: int = 2,
    layer_norm: bool = False,
    layout: GridLayout | None = None,
    conv_channels: tuple[int, ...] = (32, 32),
    conv_stride: int = 1,
) -> nn.Module:
    """The actor-critic ``name`` (one of :data:`POLICIES`); ``conv`` needs the grid's ``layout``."""
    if name == "mlp":
        return MLPActorCritic(obs_size, n_actions, hidden, layers, layer_norm)
    if name == "conv":
        if layout is None:
            raise ValueError("policy 'conv' needs the observation's grid layout")
        return GridActorCritic(
            obs_size, n_actions, layout, conv_channels, conv_stride, hidden, layers, layer_norm
        )
    raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {name!r}")


def _init_heads(net: nn.Module, body: list[nn.Module]) -> None:
    """Orthogonal init as in the PPO implementations the paper builds on: gain sqrt(2) for the
    body's layers, 0.01 for the policy head (near-uniform first actions), 1 for the value."""
    for module in body:
        if isinstance(module, nn.Linear | nn.Conv2d):
            nn.init.orthogonal_(module.weight, np.sqrt(2))
            nn.init.zeros_(module.bias)
    nn.init.orthogonal_(net.policy.weight, 0.01)
    nn.init.zeros_(net.policy.bias)
    nn.init.orthogonal_(net.value.weight, 1.0)
    nn.init.zeros_(net.value.bias)


class PPO:
    """PPO over a batched vector environment; :meth:`learn` may be called repeatedly (the
    rollout state carries over, as stable-baselines3's ``reset_num_timesteps=False``)."""

    def __init__(
        self,
        obs_size: int,
        n_actions: int,
        num_envs: int,
        *,
        n_steps: int = 512,
        gamma: float = 0.95,
        gae_lambda: float = 0.65,
        n_epochs: int = 3,
        n_minibatches: int = 8,
        ent_coef: float = 0.01,
        vf_coef: float = 0.5,
        clip_range: float = 0.2,
        learning_rate: float = 3e-4,
        anneal_steps: int = 0,
        max_grad_norm: float = 0.5,
        norm_value: bool = False,
        policy: str = "mlp",
        hidden: int = 256,
        layers: int = 2,
        layer_norm: bool = False,
        layout: GridLayout | None = None,
        conv_channels: tuple[int, ...] = (32, 32),
        conv_stride: int = 1,
        device: str = "cpu",
        seed: int = 0,
    ) -> None:
        """``anneal_steps`` > 0 lowers the learning rate linearly to 0 over that many steps
        (per rollout); 0 keeps it constant. ``norm_value``: the value head predicts returns
        standardised by their running mean and deviation (Moon et al.'s PPO on Crafter), so
        that its loss keeps one scale as returns grow. ``policy``, ``hidden``, ``layers``,
        ``layer_norm``, ``layout``, ``conv_channels`` and ``conv_stride`` are
        :func:`make_policy`'s."""
        torch.manual_seed(seed)
        self.device = torch.device(device)
        self.net = make_policy(
            policy,
            obs_size,
            n_actions,
            hidden=hidden,
            layers=layers,
            layer_norm=layer_norm,
            layout=layout,
            conv_channels=conv_channels,
            conv_stride=conv_stride,
        ).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=learning_rate, eps=1e-5)
        self.learning_rate, self.anneal_steps = learning_rate, anneal_steps
        self.norm_value = norm_value
        self._return_stats = [0.0, 0.0, 1.0]  # count, mean, variance of the returns seen
        self.num_envs, self.n_steps = num_envs, n_steps
        self.gamma, self.gae_lambda = gamma, gae_lambda
        self.n_epochs, self.n_minibatches = n_epochs, n_minibatches
        self.ent_coef, self.vf_coef = ent_coef, vf_coef
        self.clip_range, self.max_grad_norm = clip_range, max_grad_norm
        self._generator = torch.Generator(device="cpu").manual_seed(seed)
        shape = (n_steps, num_envs)
        self._obs = torch.zeros((*shape, obs_size), device=self.device)
        self._actions = torch.zeros(shape, dtype=torch.long, device=self.device)
        self._logprobs = torch.zeros(shape, device=self.device)
        self._values = torch.zeros(shape, device=self.device)
        self._rewards = torch.zeros(shape, device=self.device)
        self._dones = torch.zeros(shape, device=self.device)
        self._last_obs: torch.Tensor | None = None
        self._vec: Any = None
        self.num_timesteps = 0
        self.timing = {"env": 0.0, "act": 0.0, "update": 0.0}

    # ------------------------------------------------------------------ acting
    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(self.device)

    @torch.inference_mode()
    def act(self, obs: np.ndarray, deterministic: bool = False) -> np.ndarray:
        """Actions for a batch of observations."""
        logits, _ = self.net(self._tensor(obs))
        if deterministic:
            return logits.argmax(-1).cpu().numpy()
        return _sample(logits, self._generator).cpu().numpy()

    # ------------------------------------------------------------------ training
    def learn(
        self, vec: Any, total_timesteps: int, on_episode: EpisodeCallback | None = None
    ) -> None:
        """Train for at least ``total_timesteps`` environment steps (whole rollouts of
        ``n_steps x num_envs``) in ``vec``."""
        if vec is not self._vec or self._last_obs is None:
            started = time.process_time()
            obs, _ = vec.reset()
            self.timing["env"] += time.process_time() - started
            self._vec, self._last_obs = vec, self._tensor(obs)
        target = self.num_timesteps + total_timesteps
        while self.num_timesteps < target:
            if self.anneal_steps:
                left = max(0.0, 1.0 - self.num_timesteps / self.anneal_steps)
                for group in self.optimizer.param_groups:
                    group["lr"] = self.learning_rate * left
            last_values = self._rollout(vec, on_episode)
            started = time.process_time()
            self._update(last_values)
            self.timing["update"] += time.process_time() - started

    @torch.inference_mode()
    def _rollout(self, vec: Any, on_episode: EpisodeCallback | None) -> torch.Tensor:
        timing, clock = self.timing, time.process_time
        for step in range(self.n_steps):
            started = clock()
            obs = self._last_obs
            logits, values = self.net(obs)
            values = self._unscaled(values)
            actions = _sample(logits, self._generator)
            logprobs = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
            self._obs[step] = obs
            self._actions[step] = actions
            self._logprobs[step] = logprobs
            self._values[step] = values
            actions_np = actions.cpu().numpy()
            middle = clock()
            next_obs, rewards, terminated, truncated, infos = vec.step(actions_np)
            after = clock()
            rewards = np.asarray(rewards, dtype=np.float32)
            if "_final_obs" in infos and truncated.any():
                # bootstrap the value of an episode cut short by its time limit
                cut = np.flatnonzero(truncated & infos["_final_obs"])
                if len(cut):
                    _, final_values = self.net(self._tensor(infos["final_obs"][cut]))
                    final_values = self._unscaled(final_values)
                    rewards[cut] += self.gamma * final_values.cpu().numpy()
            self._rewards[step] = torch.from_numpy(rewards).to(self.device)
            self._dones[step] = torch.from_numpy(terminated | truncated).to(self.device)
            self._last_obs = self._tensor(next_obs)
            if on_episode is not None and "_episode" in infos:
                for index in np.flatnonzero(infos["_episode"]):
                    on_episode(
                        {
                            "return": float(infos["episode"]["r"][index]),
                            "length": int(infos["episode"]["l"][index]),
                            "achievements": infos["achievements"][index],
                            "design": int(infos["design"][index]),
                        }
                    )
            timing["env"] += after - middle
            timing["act"] += (middle - started) + (clock() - after)
        self.num_timesteps += self.n_steps * self.num_envs
        _, last_values = self.net(self._last_obs)
        return self._unscaled(last_values)

    def _unscaled(self, values: torch.Tensor) -> torch.Tensor:
        """The value head's output in return units."""
        if not self.norm_value:
            return values
        _, mean, variance = self._return_stats
        return values * float(np.sqrt(variance) + 1e-8) + mean

    def _value_targets(self, returns: torch.Tensor) -> torch.Tensor:
        """The value head's targets: ``returns``, standardised by the running statistics
        (updated with these returns first) when ``norm_value``."""
        if not self.norm_value:
            return returns
        count, mean, variance = self._return_stats
        batch_count = returns.numel()
        batch_mean, batch_variance = float(returns.mean()), float(returns.var(unbiased=False))
        total = count + batch_count
        delta = batch_mean - mean
        mean += delta * batch_count / total
        variance = (
            variance * count + batch_variance * batch_count + delta**2 * count * batch_count / total
        ) / total
        self._return_stats = [total, mean, variance]
        return (returns - mean) / float(np.sqrt(variance) + 1e-8)

    def _update(self, last_values: torch.Tensor) -> None:
        advantages = torch.zeros_like(self._rewards)
        gae = torch.zeros(self.num_envs, device=self.device)
        next_values = last_values
        for step in reversed(range(self.n_steps)):
            alive = 1.0 - self._dones[step]
            delta = self._rewards[step] + self.gamma * next_values * alive - self._values[step]
            gae = delta + self.gamma * self.gae_lambda * alive * gae
            advantages[step] = gae
            next_values = self._values[step]
        returns = advantages + self._values
        size = self.n_steps * self.num_envs
        obs = self._obs.reshape(size, -1)
        actions, old_logprobs = self._actions.reshape(size), self._logprobs.reshape(size)
        advantages = advantages.reshape(size)
        returns = self._value_targets(returns.reshape(size))
        batch = size // self.n_minibatches
        for _ in range(self.n_epochs):
            order = torch.randperm(size, generator=self._generator).to(self.device)
            for start in range(0, size, batch):
                index = order[start : start + batch]
                logits, values = self.net(obs[index])
                logprobs_all = torch.log_softmax(logits, -1)
                logprobs = logprobs_all.gather(1, actions[index, None]).squeeze(1)
                entropy = -(logprobs_all.exp() * logprobs_all).sum(-1).mean()
                advantage = advantages[index]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                ratio = (logprobs - old_logprobs[index]).exp()
                clipped = ratio.clamp(1 - self.clip_range, 1 + self.clip_range)
                policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
                value_loss = (returns[index] - values).pow(2).mean()
                loss = policy_loss + self.vf_coef * value_loss - self.ent_coef * entropy
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
                self.optimizer.step()


def _sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row, drawn from softmax(logits) (seeded: runs are reproducible)."""
    probabilities = torch.softmax(logits, -1)
    return (
        torch.multinomial(probabilities.cpu(), 1, generator=generator).squeeze(1).to(logits.device)
    )
