import type { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';

/** The 2025-11-25 leg's open sessions (mcp.ts), each bound to one principal and capped. */
export interface Session {
  transport: NodeStreamableHTTPServerTransport;
  key: string;
  lastSeen: number;
}

/**
 * Open sessions, least recently seen first — overall and per principal (a Map iterates in insertion
 * order; a touch re-inserts, so the first entry is always the stalest). A new session first makes room
 * under its principal's cap by closing that principal's stalest session, then under the global cap by
 * closing the stalest overall. The per-principal cap comes first and is much smaller, so a principal
 * flooding `initialize` only churns its own sessions: it can push out at most `perPrincipal` sessions of
 * others (the ones it opens while under its own cap), and only the ones seen least recently.
 * A session leaves both maps at once, so the counts hold even before its transport finishes closing.
 */
export class SessionTable {
  private readonly all = new Map<string, Session>();
  private readonly byKey = new Map<string, Map<string, Session>>();

  constructor(
    readonly perPrincipal: number,
    readonly max: number,
  ) {
    if (![perPrincipal, max].every((n) => Number.isSafeInteger(n) && n >= 1))
      throw new RangeError(`session caps must be positive integers: ${perPrincipal}, ${max}`);
  }

  get size(): number {
    return this.all.size;
  }

  get(id: string): Session | undefined {
    return this.all.get(id);
  }

  touch(id: string, s: Session): void {
    s.lastSeen = Date.now();
    this.all.delete(id);
    this.all.set(id, s);
    const mine = this.byKey.get(s.key)!;
    mine.delete(id);
    mine.set(id, s);
  }

  add(id: string, s: Session): void {
    const mine = this.byKey.get(s.key) ?? new Map<string, Session>();
    while (mine.size >= this.perPrincipal) this.evict(mine.keys().next().value!);
    while (this.all.size >= this.max) this.evict(this.all.keys().next().value!);
    this.byKey.set(s.key, mine);
    mine.set(id, s);
    this.all.set(id, s);
  }

  remove(id: string): Session | undefined {
    const s = this.all.get(id);
    if (!s) return undefined;
    this.all.delete(id);
    const mine = this.byKey.get(s.key)!;
    mine.delete(id);
    if (mine.size === 0) this.byKey.delete(s.key);
    return s;
  }

  /** Sessions not seen since `cutoff`: they sit at the front, so the walk stops at the first fresh one. */
  closeIdle(cutoff: number): void {
    for (const [id, s] of this.all) {
      if (s.lastSeen >= cutoff) break;
      this.evict(id);
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.all.keys()].map((id) => this.remove(id)!.transport.close()));
  }

  private evict(id: string): void {
    void this.remove(id)?.transport.close();
  }
}
