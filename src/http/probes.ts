import type { Express, Request, Response } from 'express';
import { fireProbe } from '../actions/probes.js';
import type { App } from '../app.js';

/**
 * The probe trigger (xylocopa's probes): `POST /probes/<token>` and xylocopa's own path
 * `POST /api/probe-trigger/<token>`. No bearer auth — the token in the URL is the credential — and the
 * body is never read (no prompt-injection surface). Mounted before `/api`, whose router demands a bearer
 * token for everything under it. Refusals carry xylocopa's `detail` and Colony's `{error}` envelope.
 */
export function mountProbes(http: Express, app: App): void {
  const trigger = (req: Request, res: Response): void => {
    const outcome = fireProbe(app, String(req.params.token));
    res.status(outcome.status).json(outcome.body);
  };
  http.post('/probes/:token', trigger);
  http.post('/api/probe-trigger/:token', trigger);
}
