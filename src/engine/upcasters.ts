/**
 * Upcasting on read. Stored events are never rewritten — the hash chain depends on it —
 * so an event whose data shape changed is upgraded every time it is read: state loads, rebuilds,
 * replays and tails all go through `upcast`.
 *
 * An upcaster takes the data of `type` at schema version `from` and returns it at version `from + 1`.
 * Chains run in order (v1 → v2 → v3). The version written on append is the type's current version:
 * one more than its highest registered upcaster, else 1.
 */
export interface Upcaster {
  readonly type: string;
  readonly from: number;
  readonly upcast: (data: unknown) => unknown;
}

const upcasters = new Map<string, Upcaster>();
const currentVersions = new Map<string, number>();

const key = (type: string, version: number): string => `${type}@${version}`;

export function registerUpcaster(upcaster: Upcaster): void {
  const k = key(upcaster.type, upcaster.from);
  const existing = upcasters.get(k);
  if (existing === upcaster) return;
  if (existing) throw new Error(`an upcaster for ${k} is already registered`);
  upcasters.set(k, upcaster);
  const next = upcaster.from + 1;
  if (next > (currentVersions.get(upcaster.type) ?? 1)) currentVersions.set(upcaster.type, next);
}

/** The schema version new events of this type are written with. */
export const currentSchemaVersion = (type: string): number => currentVersions.get(type) ?? 1;

export function upcast(type: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown } {
  let version = schemaVersion;
  let value = data;
  for (let u = upcasters.get(key(type, version)); u; u = upcasters.get(key(type, version))) {
    value = u.upcast(value);
    version += 1;
  }
  return { schemaVersion: version, data: value };
}

/** Whether any upcaster exists for this type: lets hot read paths skip the lookup. */
export const hasUpcasters = (type: string): boolean => currentVersions.has(type);

/** How many upcasters are registered: part of every decider snapshot's key, so a new one retires old snapshots. */
export const upcasterCount = (): number => upcasters.size;
