// How a streamed answer ended, and what is published of it as it arrives: shared by the request
// context (an outbound call's cut-off), the capture tee and the live stream registry.

export type StreamState = 'COMPLETE' | 'PARTIAL' | 'MISSING';

/** Why a stream stopped before its end, when it did. */
export type StreamCut = 'CUTOFF' | 'SOURCE_ERROR';

/**
 * Published as bytes arrive, in order, for subscribers. The bytes are raw: a publisher must redact
 * secrets (SecretRedactor) before they leave the process.
 */
export type StreamChunk =
  | { type: 'CHUNK'; sequence: number; offset: number; bytes: Uint8Array }
  | { type: 'END'; sequence: number; size: number; state: StreamState; sha256: string; cut?: StreamCut };
