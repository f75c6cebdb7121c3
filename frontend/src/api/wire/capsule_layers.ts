// Wire types (see ../wire.ts): a capsule's per-layer history (#36), a field of the capsule card.

// ---------------------------------------------------------------------------------------------------------------
// produced by `analysis/capsule_layers.py:card_fields`, carried by the capsule card (wire/capsules.ts)
// ---------------------------------------------------------------------------------------------------------------

/** Per trainable variable, its gradient norm over the last K steps up to the trigger (capsule/layer_history.py). */
export interface CapsuleLayerHistory {
  /** e.g. "first out of band: dense_3/kernel, 4 steps before the trigger (…)"; older capsules: "not recorded by this
   * capsule's version". */
  text: string;
  /** The heatmap's rows (at most 48: the most out of band, in the model's order). */
  variables: string[];
  /** log10 of each row's gradient norm per step, oldest first, the trigger's step last; null where non-finite. */
  grad_norm: (number | null)[][];
  /** Steps per row. */
  steps: number;
  /** Variables recorded in all (before the cap of `variables`). */
  total: number;
  /** The variable that left its band first, null when none did or nothing was recorded. */
  first: string | null;
  /** How many steps before the trigger it left its band. */
  lead: number | null;
}
