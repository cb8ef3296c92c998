/**
 * How a goal bundle fails a check: the first failure's code, where it is (an event's log position or a
 * stream), and a sentence. Colony's verifier and the independent tools/verify-bundle.mjs report the same
 * codes. Inside the checks a failure is thrown (`fail`) and caught once, by checkBundle.
 */
export type BundleFailureCode =
  | 'bad_format'
  | 'unsupported_version'
  | 'bad_key'
  | 'untrusted_key'
  | 'bad_signature'
  | 'bad_manifest'
  | 'bad_head_proof'
  | 'event_out_of_order'
  | 'beyond_checkpoint'
  | 'foreign_stream'
  | 'event_hash_mismatch'
  | 'bad_inclusion_proof'
  | 'missing_event'
  | 'broken_link'
  | 'head_mismatch'
  | 'missing_stream'
  | 'snapshot_mismatch';

export interface BundleFailure {
  code: BundleFailureCode;
  position?: number;
  streamId?: string;
  message: string;
}

export class Failed extends Error {
  constructor(readonly failure: BundleFailure) {
    super(failure.message);
  }
}
export function fail(
  code: BundleFailureCode,
  message: string,
  where: { position?: number; streamId?: string } = {},
): never {
  throw new Failed({ code, ...where, message });
}
