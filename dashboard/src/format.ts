// Display helpers: atomic amounts in display units with the symbol (bigint, no floats), times in
// the viewer's zone with the UTC instant for a tooltip.
export interface AssetUnits {
  readonly symbol: string;
  readonly decimals: number;
}

export function formatAmount(atomic: string | null | undefined, asset: AssetUnits): string {
  if (atomic === null || atomic === undefined || !/^-?\d+$/.test(atomic)) return '—';
  const negative = atomic.startsWith('-');
  const digits = (negative ? atomic.slice(1) : atomic).padStart(asset.decimals + 1, '0');
  const whole = digits.slice(0, digits.length - asset.decimals);
  let fraction = digits.slice(digits.length - asset.decimals).replace(/0+$/, '');
  if (fraction.length < 2 && asset.decimals >= 2) fraction = fraction.padEnd(2, '0');
  const grouped = BigInt(whole).toLocaleString('en-US');
  return `${negative ? '−' : ''}${grouped}${fraction ? `.${fraction}` : ''} ${asset.symbol}`;
}

/** Display units ("1.50") to atomic ("1500000"); null when not a plain decimal. */
export function toAtomic(display: string, decimals: number): string | null {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(display.trim());
  if (!match || (match[2]?.length ?? 0) > decimals) return null;
  return (
    BigInt(match[1]) * 10n ** BigInt(decimals) +
    BigInt((match[2] ?? '').padEnd(decimals, '0') || '0')
  ).toString();
}

export function localTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function countdown(ms: number): string {
  if (ms <= 0) return 'expired';
  const total = Math.floor(ms / 1000);
  const minutes = Math.floor(total / 60);
  const seconds = total % 60;
  return `${minutes}:${String(seconds).padStart(2, '0')} left`;
}

export function shortHex(hex: string | null | undefined): string {
  if (!hex) return '—';
  return hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-6)}` : hex;
}
