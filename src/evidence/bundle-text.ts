import { canonicalize } from '../canonical.js';
import type { EventRow } from '../engine/event.js';
import type { Bundle, BundleEvent } from './bundle.js';

/**
 * The bundle file's text: RFC 8785 canonical JSON of the bundle, plus one LF — written out member by
 * member in canonical key order rather than canonicalizing the whole object, because each event's data
 * and meta are stored as canonical JSON already (engine/store.ts) and re-serializing a goal's tens of
 * megabytes is most of an export's time. The golden-bundle test holds this to canonicalize(bundle).
 */
export function bundleText(bundle: Bundle, rows: ReadonlyMap<number, EventRow>): string {
  const events = bundle.events.map((e) => eventText(e, rows.get(e.position)));
  return (
    `{"checkpoint":${canonicalize(bundle.checkpoint)},"events":[${events.join(',')}],"format":${JSON.stringify(bundle.format)},` +
    `"goalId":${bundle.goalId},"manifest":${canonicalize(bundle.manifest)},"publicKey":${JSON.stringify(bundle.publicKey)},"snapshot":${canonicalize(bundle.snapshot)},` +
    `"streams":${canonicalize(bundle.streams)},"version":${bundle.version}}\n`
  );
}

function eventText(e: BundleEvent, row: EventRow | undefined): string {
  // A row stored before canonical.ts (json-canonicalize left objects with a `toJSON` key unsorted) is
  // written canonically; its hash will not match, which is what such a row is.
  const raw = (text: string | undefined, value: unknown) =>
    text !== undefined && !text.includes('"toJSON"') ? text : canonicalize(value);
  return (
    `{"data":${raw(row?.data, e.data)},"hash":"${e.hash}","meta":${raw(row?.meta, e.meta)},"position":${e.position},` +
    `"prevHash":"${e.prevHash}","proof":[${e.proof.map((p) => `"${p}"`).join(',')}],"recordedAt":${JSON.stringify(e.recordedAt)},` +
    `"schemaVersion":${e.schemaVersion},"streamId":${JSON.stringify(e.streamId)},"type":${JSON.stringify(e.type)},"version":${e.version}}`
  );
}
