"""The check inside Keras 3's jitted JAX train step (NanCapsule with `KERAS_BACKEND=jax`): the loss and every
gradient tested for NaN/inf, and the update held back the way Keras's `LossScaleOptimizer` holds it on JAX (the
stateless apply's result replaced by the old state: `jnp.where` per variable, which XLA fuses into the update's
own kernels). Nothing leaves the device but a few scalars in the step's outputs (the carry below), read by the host
only when it polls (capsule/jax_watch.py).

The carry goes from one step to the next through the step's data (no Keras state is added): `halt` is 0, or +inf
from a trigger on (every later step then holds its update back too, so the variables stay the trigger step's
pre-step state until the host has written the capsule); `arm` is 1 while a trigger must halt (stop and raise
modes; skip mode until its capsules are written); `triggers` counts the non-finite steps.

jax is imported in the training process only."""

from __future__ import annotations

from typing import Any

from . import structure

Carry = structure.Tensors  # the halt flag and trigger counter carried from step to step


def first_carry(arm: bool) -> Carry:
    import jax.numpy as jnp

    return {"halt": jnp.float32(0.0), "arm": jnp.float32(1.0 if arm else 0.0), "triggers": jnp.int32(0)}


def check(checked: list[Any], carry: Carry) -> tuple[Any, Carry]:
    """(whether the step applies its update, the carry out). `checked`: the loss first (when known), then each
    gradient. One reduction per tensor on the every-step path: a sum is non-finite when any value is (finite values
    overflowing the sum are told apart on the rare path, which alone counts NaN/+inf/-inf per tensor)."""
    import jax
    import jax.numpy as jnp

    halt = carry["halt"]
    sums = [_real(jnp.sum(t)).astype(jnp.float32) for t in checked]
    quick = jnp.isfinite(sum(sums, halt))  # halt +inf: one sum says "finite, not halted"
    zeros = jnp.zeros((len(checked), 3), jnp.int32)

    def rare() -> Any:
        return jnp.stack([_counts(t) for t in checked]) if checked else zeros

    counts = jax.lax.cond(quick, lambda: zeros, rare)
    halted = halt > 0
    triggered = jnp.logical_and(jnp.sum(counts) > 0, jnp.logical_not(halted))
    applies = jnp.logical_or(quick, jnp.logical_and(jnp.sum(counts) == 0, jnp.logical_not(halted)))
    new_halt = jnp.where(jnp.logical_and(triggered, carry["arm"] > 0), jnp.float32(jnp.inf), halt)
    out = {
        "halt": new_halt,
        "arm": carry["arm"],
        "triggers": carry["triggers"] + triggered.astype(jnp.int32),
        "triggered": triggered,
        "held": jnp.logical_not(applies),
        "counts": counts,
    }
    return applies, out


def _real(s: Any) -> Any:
    """A complex sum as the sum of its parts (non-finite iff either part is, or they overflow: told apart on the rare
    path); a float cast keeps the real part only. A real sum: itself."""
    import jax.numpy as jnp

    return s.real + s.imag if jnp.iscomplexobj(s) else s


def _counts(t: Any) -> Any:
    """NaN, +inf, -inf of `t`; a complex `t` counted part by part, as capsule/check.py `values` has TensorFlow count
    them."""
    import jax.numpy as jnp

    if not jnp.issubdtype(t.dtype, jnp.inexact):
        return jnp.zeros((3,), jnp.int32)
    if jnp.iscomplexobj(t):
        t = jnp.stack([t.real, t.imag])
    return jnp.stack(
        [jnp.sum(jnp.isnan(t)), jnp.sum(t == jnp.inf), jnp.sum(t == -jnp.inf)],
    ).astype(jnp.int32)


def held_back(applies: Any, new: Any, old: Any) -> Any:
    """The new state where the step applies, else the old one (leaf by leaf: a select XLA fuses into the update)."""
    import jax
    import jax.numpy as jnp

    return jax.tree_util.tree_map(lambda n, o: jnp.where(applies, n, o), new, old)


def see(model: Any, traced: structure.Tensors) -> None:
    """What the check reads, seen as Keras's JAX train step traces (on the instances): the gradients at the
    optimizer's `stateless_apply`, the unscaled loss at the model's `_update_metrics_variables` (the one place it is
    at the step's own trace level: `compute_loss` runs inside `jax.value_and_grad`). `unsee` puts them back."""
    original_apply = model.optimizer.stateless_apply
    original_metrics = model._update_metrics_variables  # noqa: SLF001 - see above

    def stateless_apply(optimizer_variables: Any, grads: Any, trainable_variables: Any) -> Any:
        traced["grads"] = list(grads)
        return original_apply(optimizer_variables, grads, trainable_variables)

    def update_metrics_variables(metrics_variables: Any, unscaled_loss: Any, *args: Any) -> Any:
        traced["loss"] = unscaled_loss
        return original_metrics(metrics_variables, unscaled_loss, *args)

    model.optimizer.stateless_apply = stateless_apply
    model._update_metrics_variables = update_metrics_variables  # noqa: SLF001 - see above


def unsee(model: Any) -> None:
    for owner, name in ((model, "_update_metrics_variables"), (model.optimizer, "stateless_apply")):
        if name in vars(owner):
            delattr(owner, name)


def checked_of(model: Any, traced: structure.Tensors, loss_scaled: bool) -> list[tuple[str, str, Any]]:
    """(kind, name, tensor) of what the step checks: the loss, then each gradient (not under a LossScaleOptimizer:
    its overflowing gradients are its own business, it skips those steps)."""
    from . import structure

    names = structure.unique_names([v.path for v in model.trainable_variables])
    loss, grads = traced.get("loss"), traced.get("grads")
    checked = [] if loss is None else [("loss", "loss", loss)]
    if grads is not None and not loss_scaled:
        checked += [("gradient", n, g) for n, g in zip(names, grads) if g is not None]
    return checked
