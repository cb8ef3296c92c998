/**
 * The capability catalog behind the navigation tools (codomyrmex `agents/navigation/catalog.py`): a
 * deterministic, read-only index of agent, module and tool records. Pure — no clock, no I/O: the records
 * come from sources (`catalog-sources.ts`), and nothing here constructs, probes or calls anything.
 *
 * Records sort by (kind, name, id); pages are clamped to [1, 500]; search scores the *whole* filtered
 * catalog before cutting the page, so a record that sorts late is never hidden by the page size.
 */
export type CapabilityKind = 'agent' | 'module' | 'tool';
export const CAPABILITY_KINDS: readonly CapabilityKind[] = ['agent', 'module', 'tool'];
export const MAX_LIMIT = 500;

/** One navigable capability; the keys are in codomyrmex's `to_dict()` order. */
export interface CapabilityRecord {
  id: string;
  kind: CapabilityKind;
  name: string;
  display_name: string;
  description: string;
  status: string;
  source: string;
  documentation: string | null;
  provenance: Record<string, unknown>;
  trust: string;
  tags: string[];
  details: Record<string, unknown>;
}

export type CatalogState = 'ready' | 'empty' | 'degraded';

export interface CatalogSummary {
  count: number;
  catalog_state: CatalogState;
  by_kind: Record<string, number>;
  by_status: Record<string, number>;
  errors: string[];
  provenance: Record<string, unknown>;
}

/** Which argument was bad; the navigation tools map it to their error code. */
export type CatalogField = 'kind' | 'limit' | 'query' | 'capability_id' | 'include_tools' | 'include_unavailable';

/** Bad input to the catalog (codomyrmex's ValueError), with codomyrmex's messages. */
export class CatalogInputError extends Error {
  constructor(
    readonly field: CatalogField,
    message: string,
  ) {
    super(message);
    this.name = 'CatalogInputError';
  }
}

export interface PageOptions {
  kind?: unknown;
  limit?: unknown;
  include_unavailable?: unknown;
}

export class CapabilityCatalog {
  private readonly records: readonly CapabilityRecord[];
  readonly errors: readonly string[];
  private readonly provenance: Record<string, unknown>;

  constructor(
    records: readonly CapabilityRecord[],
    errors: readonly string[] = [],
    provenance: Record<string, unknown> = {},
  ) {
    this.records = records.map(safeRecord).sort(compareRecords);
    this.errors = [...new Set(errors.map(String))].sort(compareStrings);
    this.provenance = jsonSafe(provenance) as Record<string, unknown>;
  }

  /** One page of records in (kind, name, id) order; `unavailable` ones only when asked for. */
  list(options: PageOptions = {}): CapabilityRecord[] {
    const kind = validatedKind(options.kind);
    const includeUnavailable = validatedBool(orDefault(options.include_unavailable, false), 'include_unavailable');
    const limit = boundedLimit(orDefault(options.limit, 100));
    return this.filtered(kind, includeUnavailable).slice(0, limit);
  }

  /** Every record whose id is `capabilityId`, or — for an input without `:` — whose name is; in order. */
  find(capabilityId: unknown, options: { kind?: unknown } = {}): CapabilityRecord[] {
    if (typeof capabilityId !== 'string')
      throw new CatalogInputError('capability_id', 'capability_id must be a string');
    const wanted = capabilityId.trim();
    if (!wanted) throw new CatalogInputError('capability_id', 'capability_id must not be empty');
    const kind = validatedKind(options.kind);
    const bare = !wanted.includes(':');
    return this.records.filter(
      (r) => (kind === null || r.kind === kind) && (r.id === wanted || (bare && r.name === wanted)),
    );
  }

  /** The one record `find` returns, or null when there is none or more than one. */
  get(capabilityId: unknown, options: { kind?: unknown } = {}): CapabilityRecord | null {
    const matches = this.find(capabilityId, options);
    return matches.length === 1 ? matches[0]! : null;
  }

  /**
   * Scores every record of the filtered catalog per query term — +12 when the term is the name or id,
   * else +8 when the name starts with it, else +3 when any text field contains it — drops zeros, and
   * returns the best page, ties in (kind, name, id) order. A blank query is an error, never a listing.
   */
  search(query: unknown, options: PageOptions = {}): CapabilityRecord[] {
    const kind = validatedKind(options.kind);
    const includeUnavailable = validatedBool(orDefault(options.include_unavailable, false), 'include_unavailable');
    if (typeof query !== 'string') throw new CatalogInputError('query', 'query must be a string');
    const normalized = query.trim();
    if (!normalized) throw new CatalogInputError('query', 'query must not be empty');
    const terms = searchTerms(normalized);
    if (terms.length === 0) throw new CatalogInputError('query', 'query must contain searchable characters');
    const scored = this.filtered(kind, includeUnavailable)
      .map((record) => ({ record, score: scoreRecord(record, terms) }))
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || compareRecords(a.record, b.record));
    return scored.slice(0, boundedLimit(orDefault(options.limit, 20))).map((s) => s.record);
  }

  /** Counts over the whole catalog (unavailable records included), the sources' errors, provenance. */
  summary(): CatalogSummary {
    const byKind: Record<string, number> = {};
    const byStatus: Record<string, number> = {};
    for (const r of this.records) {
      byKind[r.kind] = (byKind[r.kind] ?? 0) + 1;
      byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    }
    const state: CatalogState = this.errors.length > 0 ? 'degraded' : this.records.length === 0 ? 'empty' : 'ready';
    return {
      count: this.records.length,
      catalog_state: state,
      by_kind: sortedKeys(byKind),
      by_status: sortedKeys(byStatus),
      errors: [...this.errors],
      provenance: structuredClone(this.provenance),
    };
  }

  /** Every record of one kind (or all), unavailable ones included, unpaged. */
  all(kind: CapabilityKind | null = null): CapabilityRecord[] {
    return this.records.filter((r) => kind === null || r.kind === kind);
  }

  private filtered(kind: CapabilityKind | null, includeUnavailable: boolean): CapabilityRecord[] {
    return this.records.filter(
      (r) => (kind === null || r.kind === kind) && (includeUnavailable || r.status !== 'unavailable'),
    );
  }
}

/** The lower-cased terms of a query: runs of `[a-z0-9_:-]` (everything else separates terms). */
export const searchTerms = (query: string): string[] => query.toLowerCase().match(/[a-z0-9_:-]+/g) ?? [];

export function scoreRecord(record: CapabilityRecord, terms: readonly string[]): number {
  const id = record.id.toLowerCase();
  const name = record.name.toLowerCase();
  const fields = [
    id,
    name,
    record.display_name,
    record.description,
    record.source,
    record.documentation ?? '',
    record.tags.join(' '),
  ].map((f) => f.toLowerCase());
  let score = 0;
  for (const term of terms) {
    if (name === term || id === term) score += 12;
    else if (name.startsWith(term)) score += 8;
    else if (fields.some((f) => f.includes(term))) score += 3;
  }
  return score;
}

export function validatedKind(value: unknown): CapabilityKind | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || !(CAPABILITY_KINDS as readonly string[]).includes(value)) {
    throw new CatalogInputError('kind', `Unsupported capability kind: ${pyRepr(value)}`);
  }
  return value as CapabilityKind;
}

export function validatedBool(value: unknown, field: 'include_tools' | 'include_unavailable'): boolean {
  if (typeof value !== 'boolean') throw new CatalogInputError(field, `${field} must be a boolean`);
  return value;
}

/** An integer (not a boolean, not a numeric string) clamped to [1, 500]: `0` gives one record. */
export function boundedLimit(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new CatalogInputError('limit', 'limit must be an integer');
  return Math.max(1, Math.min(value, MAX_LIMIT));
}

/**
 * Metadata as deterministic JSON: mappings get sorted keys, sets become sorted arrays, non-finite
 * numbers become strings, anything else that JSON cannot hold becomes `{unsupported_type}`.
 */
export function jsonSafe(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number')
    return Number.isFinite(value) ? value : String(value).toLowerCase().replace('infinity', 'inf');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value instanceof Set)
    return [...value].map(jsonSafe).sort((a, b) => compareStrings(JSON.stringify(a), JSON.stringify(b)));
  if (value instanceof Map) return sortedKeys(Object.fromEntries([...value].map(([k, v]) => [String(k), jsonSafe(v)])));
  if (typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    return sortedKeys(Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, jsonSafe(v)])));
  }
  const type =
    value === undefined
      ? 'undefined'
      : typeof value === 'object'
        ? (value.constructor?.name ?? 'Object')
        : typeof value;
  return { unsupported_type: type };
}

/** An omitted argument takes its default; an explicit null does not (it is then rejected, as in codomyrmex). */
export const orDefault = (value: unknown, fallback: unknown): unknown => (value === undefined ? fallback : value);

const safeRecord = (r: CapabilityRecord): CapabilityRecord => ({
  id: r.id,
  kind: r.kind,
  name: r.name,
  display_name: r.display_name,
  description: r.description,
  status: r.status,
  source: r.source,
  documentation: r.documentation,
  provenance: jsonSafe(r.provenance) as Record<string, unknown>,
  trust: r.trust,
  tags: r.tags.map(String),
  details: jsonSafe(r.details) as Record<string, unknown>,
});

export const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const compareRecords = (a: CapabilityRecord, b: CapabilityRecord): number =>
  compareStrings(a.kind, b.kind) || compareStrings(a.name, b.name) || compareStrings(a.id, b.id);

const sortedKeys = <T>(o: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => compareStrings(a, b)));

/** How codomyrmex's `{kind!r}` prints the value it rejects. */
const pyRepr = (v: unknown): string =>
  typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : (JSON.stringify(v) ?? String(v));
