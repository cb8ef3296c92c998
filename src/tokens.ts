import { createHash, randomBytes } from 'node:crypto';

/**
 * API tokens: `colony_` + 32 random bytes (base64url). Only the sha256 is stored; the token itself is
 * shown once. The prefix lets secret scanners and people recognise one.
 */
export const newToken = (): string => `colony_${randomBytes(32).toString('base64url')}`;

export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');
