"""Every optimizer a watched `fit` applies: `model.optimizer` and any optimizer the model holds as an attribute (a
GAN's custom `train_step` applies `self.d_optimizer` and `self.g_optimizer` of its own, and `compile()` leaves
`model.optimizer` a default never applied). Each one's `apply` is checked (capsule/callback.py wraps it on the
instance); with several, the device state and the capsule hold all their variables (`Several`). A train step that
applies none of them (an optimizer kept elsewhere, variables assigned by hand) is said at its trace: not watched.

Keras is imported in the training process only."""

from __future__ import annotations

from typing import Any

NOT_WATCHED = (
    "NanCapsule: {model}'s train_step applied no optimizer the capsule watches (model.optimizer and the optimizers "
    "held as the model's attributes: {names}): its updates are NOT checked and no capsule will be written. Keep each "
    "optimizer the train_step applies as an attribute of the model (self.d_optimizer = ...) and apply it with "
    "optimizer.apply / apply_gradients"
)


def of_model(model: Any) -> list[Any]:
    """model.optimizer first, then the optimizers among the model's attributes (directly, or in a list, tuple or
    dict attribute), each once."""
    import keras

    found: list[Any] = []

    def add(value: Any) -> None:
        if isinstance(value, keras.optimizers.Optimizer) and not any(value is f for f in found):
            found.append(value)

    add(getattr(model, "optimizer", None))
    for value in list(vars(model).values()):
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        for item in list(items):
            add(item)
    return found


def names(optimizers: list[Any]) -> str:
    return ", ".join(f"{type(o).__name__} {getattr(o, 'name', '?')!r}" for o in optimizers) or "none"


class Several:
    """Several optimizers as one for the device state and the capsule: their variables in turn (the capsule's
    optimizer group), and the step: the largest of their iteration counts."""

    def __init__(self, optimizers: list[Any]) -> None:
        self.optimizers = optimizers

    @property
    def variables(self) -> list[Any]:
        return [v for o in self.optimizers for v in o.variables]

    @property
    def iterations(self) -> Any:
        import tensorflow as tf

        return tf.reduce_max(tf.stack([tf.cast(o.iterations, tf.int64) for o in self.optimizers]))

    @property
    def built(self) -> bool:
        return all(o.built for o in self.optimizers)
