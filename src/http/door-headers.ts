// Request headers as a plain record for the boundary: the server adapter's Headers is a ponyfill,
// not an instance of the global Headers class.
export function plainHeaders(headers: { forEach(fn: (value: string, name: string) => void): void }): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
}
