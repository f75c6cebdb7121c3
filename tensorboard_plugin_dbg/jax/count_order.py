"""The axis order an elementwise result of a convolution is counted in: the order XLA:CPU stores it in.

XLA:CPU runs every convolution channels-last: its output is stored batch, spatial..., feature whatever the
`dimension_numbers` say, and an elementwise op of it (the ReLU's backward `select`, a bias add) is stored alike. The
count reduction of such a result (instrument._counted: one fusion computing the op and counting it) read it in its
logical order, NCHW from NHWC memory, strided: on the bench's conv net the two backward selects' counts were its
largest count fusions. Counting the transposed view whose logical order is the stored one makes the transpose a
bitcast. A convolution's own output is counted as it is: the same transpose made its count slower there (measured
both ways on `bench/jax_overhead.py`'s conv net, CPU time over plain `jit`, same runs: the instrumented program
alone 1.21-1.26x with every tensor counted as it is, 1.27-1.30x with the conv outputs transposed too, 1.13-1.16x
with only the elementwise results transposed; a weight gradient's conv output transposed too: no difference). The
counts of a tensor do not depend on its axis order: this changes where the program reads, never what is recorded.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

Order = tuple[int, ...]
CONV = "conv_general_dilated"


class CountOrders:
    """Traced values stored in another order than their logical one (as far as the jaxpr says) -> that order."""

    def __init__(self) -> None:
        self._stored: dict[int, tuple[Any, Order, bool]] = {}  # id(value) -> (value, order, a conv's own output)

    def _known(self, x: Any) -> tuple[Order, bool] | None:
        known = self._stored.get(id(x))
        return known[1:] if known is not None and known[0] is x else None

    def note(self, prim: str, params: Any, invals: list[Any], outs: list[Any]) -> None:
        """After an equation: a convolution's output is channels-last; the one result of another op, of the shape
        of an input stored in a known order, is taken to be stored as that input is (an elementwise op's)."""
        if len(outs) != 1:
            return
        out, order = outs[0], None
        if prim == CONV:
            spec = tuple(params["dimension_numbers"].out_spec)  # (batch, feature, spatial...)
            order = (spec[0], *spec[2:], spec[1])
        else:
            shape = getattr(out, "shape", None)
            for x in invals:
                known = self._known(x) if getattr(x, "shape", None) == shape else None
                if known is not None:
                    order = known[0]
                    break
        if order is not None and order != tuple(range(len(order))):
            self._stored[id(out)] = (out, order, prim == CONV)

    def oriented(self, x: Any) -> Any:
        """`x` as it is counted: an elementwise result of a convolution transposed to its stored order."""
        known = self._known(x)
        if known is None or known[1]:
            return x
        return jnp.transpose(x, known[0])
