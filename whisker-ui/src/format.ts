// Display helpers.
export function fmtBytes(n: number): string {
  if (n < 1024) return n + ' B';
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (v < 10 ? v.toFixed(1) : Math.round(v)) + ' ' + u[i];
}
export function fmtTime(iso: string): string {
  // "2026-12-01T18:20:15Z" -> "12-01 18:20:15" (UTC, compact)
  return iso.length >= 19 ? iso.slice(5, 10) + ' ' + iso.slice(11, 19) : iso;
}
export function fmtCount(n: number): string {
  return n.toLocaleString('en-US');
}
