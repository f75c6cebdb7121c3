/**
 * Wire types: the JSON the backend sends, one type per route response, in one file per area under `wire/`.
 *
 * This module is the contract between `tensorboard_plugin_dbg/api/` and the frontend. Each response type names
 * the Python function that produces it; `tests/test_contract.py` checks real responses against the JSON Schema
 * generated from this file (`npm run schema`), so the two sides cannot drift.
 *
 * Encoding rules (one JSON encoder, `tensorboard_plugin_dbg/api/json_encoding.py`):
 *  - A non-finite float is sent as the string "NaN", "Infinity" or "-Infinity" (see `Num`). Only fields typed
 *    `Num` may carry them; counts and indices are always plain integers.
 *  - numpy scalars and arrays become JSON numbers and arrays.
 *  - Times are wall-clock seconds since the epoch (float).
 *  - Every error is `ErrorResponse` with HTTP 400 (bad parameter) or 404 (unknown run, index, graph, op, frame).
 */
export type * from './wire/common.ts';
export type * from './wire/health.ts';
export type * from './wire/runs.ts';
export type * from './wire/alerts.ts';
export type * from './wire/traces.ts';
export type * from './wire/graph.ts';
export type * from './wire/source.ts';
export type * from './wire/root_cause.ts';
export type * from './wire/tensor_values.ts';
export type * from './wire/health_map.ts';
export type * from './wire/capsules.ts';
export type * from './wire/capsule_layers.ts';
export type * from './wire/capsule_samples.ts';
export type * from './wire/compare.ts';
export type * from './wire/compare_values.ts';
