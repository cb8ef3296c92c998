/**
 * The console's one way to the server: same-origin fetch with the session cookie (HttpOnly, so never
 * visible here) and, on every state-changing request, the CSRF token the session handed out. The
 * token a person signs in with is sent once, in POST /api/session, and kept nowhere.
 */
export interface Principal { kind: 'owner' | 'agent'; id: number; name: string; tenant: number }
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details?: unknown) {
    super(message);
  }
}

let csrf: string | null = null;
let onSignedOut: () => void = () => undefined;
export const whenSignedOut = (fn: () => void): void => { onSignedOut = fn; };

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  if (res.status === 204) return undefined as T;
  const json = await res.json().catch(() => ({})) as { error?: { code: string; message: string; details?: unknown } };
  if (!res.ok) {
    const e = json.error ?? { code: `Http${res.status}`, message: res.statusText };
    if (res.status === 401 && path !== '/api/session') onSignedOut();
    throw new ApiError(res.status, e.code, e.message, e.details);
  }
  return json as T;
}

export const get = <T>(path: string): Promise<T> => call<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}): Promise<T> => call<T>('POST', path, body);

/** Who signed in, and the log position the live feed starts after (the head as the session was answered). */
export interface SignedIn { principal: Principal; position: number }

export async function signIn(token: string): Promise<SignedIn> {
  const r = await call<{ principal: Principal; csrf: string; position: number }>('POST', '/api/session', { token });
  csrf = r.csrf;
  return { principal: r.principal, position: r.position };
}

/** The session the cookie still holds, if any (a reload keeps you signed in). */
export async function currentSession(): Promise<SignedIn | null> {
  try {
    const r = await call<{ principal: Principal; csrf: string; position: number }>('GET', '/api/session');
    csrf = r.csrf;
    return { principal: r.principal, position: r.position };
  } catch {
    return null;
  }
}

export async function signOut(): Promise<void> {
  await call('DELETE', '/api/session').catch(() => undefined);
  csrf = null;
}

/** `?a=1&b=2` from the defined values. */
export const query = (params: Record<string, string | number | null | undefined>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

/** What a failed call says to the person: the API's code and message, or the error as it is. */
export const errorText = (e: unknown): string => (e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
