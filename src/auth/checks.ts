// What a verified grant allows, one call at a time: powers, tools, folders, ingest, expiry.
// Pure: no database, no clock of its own.
import type { Door } from '../context/door.ts';
import type { Grant } from './verdict.ts';
import { pathAllowed, powerWords, toolAllowed, type Power } from './caveats.ts';
import type { Refusal } from './verdict.ts';

/** The earliest `expires` of a grant, if it has one. */
export function expiryOf(grant: Grant): Date | undefined {
  let at: Date | undefined;
  for (const caveat of grant.caveats) if (caveat.kind === 'expires' && (!at || caveat.at < at)) at = caveat.at;
  return at;
}

/** An `expires` caveat the grant has passed by `now`, as a refusal. */
export function expired(grant: Grant, door: Door, now: Date): Refusal | null {
  for (const [i, caveat] of grant.caveats.entries()) {
    if (caveat.kind === 'expires' && now >= caveat.at) {
      return {
        limit: 'expires',
        caveat: grant.texts[i],
        door,
        reason: `used at ${now.toISOString()}, after it expired at ${caveat.at.toISOString()}`,
        message: `This token expired at ${caveat.at.toISOString()}.`,
        status: 403,
        tokenId: grant.tokenId,
      };
    }
  }
  return null;
}

/** The tool and path caveats, and the call power, for one call (before anything else about it is checked). */
export function allowsTool(grant: Grant, door: Door, tool: string): Refusal | null {
  const power = requirePower(grant, 'call', door, tool);
  if (power) return power;
  for (const [i, caveat] of grant.caveats.entries()) {
    if (caveat.kind === 'tools' && !toolAllowed(caveat.names, tool)) {
      return {
        limit: 'tools',
        caveat: grant.texts[i],
        door,
        tool,
        reason: `tool ${tool} is not among ${caveat.names.join(', ')}`,
        message: `This token may not call ${JSON.stringify(tool)}.`,
        status: 403,
        tokenId: grant.tokenId,
      };
    }
  }
  return null;
}

/** The folders caveats against a file row's path and every path-like argument. */
export function allowsPaths(grant: Grant, door: Door, tool: string, paths: readonly { where: string; path: string }[]): Refusal | null {
  for (const [i, caveat] of grant.caveats.entries()) {
    if (caveat.kind !== 'folders') continue;
    const outside = paths.find((p) => !pathAllowed(caveat.folders, p.path));
    if (outside) {
      return {
        limit: 'folders',
        caveat: grant.texts[i],
        door,
        tool,
        reason: `${outside.where} ${JSON.stringify(outside.path)} is outside ${caveat.folders.join(', ')}`,
        message: `This token may not reach ${outside.where} ${JSON.stringify(outside.path)}: it is outside the token's folders.`,
        status: 403,
        tokenId: grant.tokenId,
      };
    }
  }
  return null;
}

/**
 * Appending a batch: the ingest power, then every `collector` caveat against the batch's collector
 * and every `tools` caveat against each tool its events name (a token may not record calls it
 * could never make). Events naming no tool are not limited by `tools`.
 */
export function allowsIngest(grant: Grant, door: Door, batch: { collector: string; events: readonly { tool?: string | undefined }[] }): Refusal | null {
  const power = requirePower(grant, 'ingest', door);
  if (power) return power;
  for (const [i, caveat] of grant.caveats.entries()) {
    const refuse = (reason: string, message: string, tool?: string): Refusal => ({
      limit: caveat.kind,
      caveat: grant.texts[i],
      door,
      ...(tool && { tool }),
      reason,
      message,
      status: 403,
      tokenId: grant.tokenId,
    });
    if (caveat.kind === 'collector' && !toolAllowed(caveat.names, batch.collector)) {
      return refuse(
        `collector ${batch.collector} is not among ${caveat.names.join(', ')}`,
        `This token may not append batches of collector ${JSON.stringify(batch.collector)}.`,
      );
    }
    if (caveat.kind === 'tools') {
      const outside = batch.events.find((e) => e.tool !== undefined && !toolAllowed(caveat.names, e.tool));
      if (outside) {
        return refuse(
          `an ingested event names tool ${outside.tool}, which is not among ${caveat.names.join(', ')}`,
          `This token may not append events naming the tool ${JSON.stringify(outside.tool)}.`,
          outside.tool,
        );
      }
    }
  }
  return null;
}

export function requirePower(grant: Grant, power: Power, door: Door, tool?: string): Refusal | null {
  if (grant.powers.has(power)) return null;
  const i = grant.caveats.findLastIndex((c) => c.kind === 'powers');
  const words = powerWords[power];
  return {
    limit: 'power',
    caveat: grant.texts[i],
    door,
    ...(tool && { tool }),
    reason: `the token lacks the ${power} power`,
    message: `This token may not ${words}.`,
    status: 403,
    tokenId: grant.tokenId,
  };
}
