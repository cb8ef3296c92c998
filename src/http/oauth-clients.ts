import { randomBytes } from 'node:crypto';
import express, { type Router } from 'express';
import type { App } from '../app.js';
import type { ClientInfo } from '../actions/oauth.js';
import { oauthClientById } from '../projections/oauth-queries.js';
import { CimdError, isUrlClientId, type MetadataDocuments } from './oauth-cimd.js';
import { OAuthHttpError, type OAuthLimits } from './oauth-errors.js';
import { checkClientName, checkRedirectUri } from './oauth-redirects.js';

/**
 * Who a client_id is: a client logged with its first grant, one registered here and not approved yet
 * (Dynamic Client Registration, RFC 7591, `POST /oauth/register` — kept in memory, at most 100, the
 * oldest dropped: anyone may register, and only the owner's approval makes a client part of the log),
 * or a metadata document URL (oauth-cimd.ts). Colony issues no client secrets: every client is public
 * and proves itself with PKCE.
 */
export const MAX_PENDING_CLIENTS = 100;

export class ClientRegistry {
  private readonly pending = new Map<string, ClientInfo>();

  constructor(
    private readonly app: App,
    private readonly documents: MetadataDocuments,
    private readonly cap = MAX_PENDING_CLIENTS,
  ) {}

  register(clientName: string, redirectUris: string[]): ClientInfo {
    while (this.pending.size >= this.cap) this.pending.delete(this.pending.keys().next().value!);
    const client: ClientInfo = {
      clientId: `colony-client-${randomBytes(16).toString('hex')}`,
      kind: 'dcr',
      clientName,
      redirectUris,
    };
    this.pending.set(client.clientId, client);
    return client;
  }

  /** The client behind a client_id; an OAuthHttpError (shown on a page, never redirected) when there is none. */
  async resolve(clientId: string): Promise<ClientInfo> {
    if (isUrlClientId(clientId)) {
      // Fetched every time (cached briefly) rather than read from the log: the document may have changed.
      try {
        return await this.documents.fetch(clientId);
      } catch (e) {
        if (e instanceof CimdError) throw new OAuthHttpError('invalid_client', e.message, 400);
        throw e;
      }
    }
    const logged = oauthClientById(this.app.engine.db, clientId);
    if (logged) {
      // Logged with its first grant, perhaps by an older Colony whose rules let more through: its redirect
      // URIs are checked again, so none is ever used that registration would refuse today.
      for (const uri of logged.redirectUris) {
        const problem = checkRedirectUri(uri);
        if (problem)
          throw new OAuthHttpError(
            'invalid_client',
            `this client registered a redirect URI Colony refuses: ${problem}`,
          );
      }
      return { clientId, kind: logged.kind, clientName: logged.clientName, redirectUris: logged.redirectUris };
    }
    const pending = this.pending.get(clientId);
    if (pending) return pending;
    throw new OAuthHttpError(
      'invalid_client',
      'unknown client_id: the client must register again (POST /oauth/register) or use a client metadata document URL',
      400,
    );
  }
}

/** `POST /oauth/register` (RFC 7591): redirect URIs checked, everything else normalized to what Colony supports. */
export function mountRegister(router: Router, clients: ClientRegistry, limits: OAuthLimits): void {
  router.post('/oauth/register', express.json({ limit: '16kb' }), (req, res) => {
    limits.register.check(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body))
      throw new OAuthHttpError('invalid_client_metadata', 'the body is a JSON object of client metadata');
    const uris = body.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10)
      throw new OAuthHttpError('invalid_redirect_uri', 'redirect_uris is an array of 1-10 URIs');
    for (const u of uris) {
      const problem = typeof u === 'string' ? checkRedirectUri(u) : 'a redirect URI is a string';
      if (problem) throw new OAuthHttpError('invalid_redirect_uri', problem);
    }
    const name = body.client_name ?? '';
    if (typeof name !== 'string') throw new OAuthHttpError('invalid_client_metadata', 'client_name is a string');
    const badName = checkClientName(name);
    if (badName) throw new OAuthHttpError('invalid_client_metadata', badName);
    limits.register.count(req);
    const client = clients.register(name, uris as string[]);
    res
      .status(201)
      .set('Cache-Control', 'no-store')
      .json({
        client_id: client.clientId,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        client_name: client.clientName || undefined,
        redirect_uris: client.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'mcp',
      });
  });
}
