// Wire types (see ../wire.ts): The encoding's shared types: non-finite floats, debug mode names, the one error shape.

/** A float that may be non-finite. */
export type Num = number | 'NaN' | 'Infinity' | '-Infinity';

export type DebugModeName =
  | 'NO_TENSOR'
  | 'CURT_HEALTH'
  | 'CONCISE_HEALTH'
  | 'FULL_HEALTH'
  | 'SHAPE'
  | 'FULL_NUMERICS'
  | 'FULL_TENSOR'
  | 'UNSPECIFIED';

/** Machine-readable error codes: the constants of `api/errors.py` (its STATUS_BY_CODE gives each one's HTTP status). */
export type ErrorCode =
  | 'bad_parameter'
  | 'missing_parameter'
  | 'page_too_large'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_ready'
  | 'internal';

/** Produced by `api/errors.py:error_body`. */
export interface ErrorResponse {
  error: {
    code: ErrorCode;
    message: string;
  };
}
