// The public receipt of a purchase: both payment legs with their transactions and the anchor state,
// followed live over the public anchorUpdated subscription until it settles.
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api';
import { shortHex } from './format';
import { Empty, Problem, Time } from './ui';

const RECEIPT = `query ($id: ID!) { consumerReceipt(intentId: $id) }`;
const ANCHOR = `subscription ($r: ID!) { anchorUpdated(receiptId: $r) }`;

interface Leg {
  chain: string;
  asset: string;
  amount: string;
  sender: string;
  recipient: string;
  txHash: string;
}
interface Receipt {
  intentId: string;
  capability: string;
  state: string;
  createdAt: string;
  updatedAt: string;
  paymentLegs: { funding: Leg | null; settlement: Leg | null };
  anchor: {
    state: string;
    receiptId?: string;
    txHash?: string;
    blockNumber?: number;
    reason?: string;
  };
  integrity: { digest: string };
}

function LegRow({ name, leg }: { name: string; leg: Leg | null }) {
  return (
    <tr>
      <th scope="row">{name}</th>
      {leg ? (
        <>
          <td>{leg.chain}</td>
          <td class="mono">
            {leg.amount} (atomic, {shortHex(leg.asset)})
          </td>
          <td class="mono" title={leg.sender}>
            {shortHex(leg.sender)} → <span title={leg.recipient}>{shortHex(leg.recipient)}</span>
          </td>
          <td class="mono" title={leg.txHash}>
            {shortHex(leg.txHash)}
          </td>
        </>
      ) : (
        <td colSpan={4}>Not paid yet</td>
      )}
    </tr>
  );
}

export function ReceiptPage({ api, intentId }: { api: Api; intentId: string }) {
  const [receipt, setReceipt] = useState<Receipt | null | undefined>(undefined);
  const [anchor, setAnchor] = useState<Receipt['anchor'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let stop = () => undefined as void;
    api.query<{ consumerReceipt: Receipt | null }>(RECEIPT, { id: intentId }).then((d) => {
      setReceipt(d.consumerReceipt);
      const receiptId = d.consumerReceipt?.anchor.receiptId;
      if (receiptId)
        stop = api.subscribe<{ anchorUpdated: Receipt['anchor'] }>(
          ANCHOR,
          { r: receiptId },
          (m) => setAnchor(m.anchorUpdated),
          setError,
        );
    }, setError);
    return () => stop();
  }, [api, intentId]);
  const current = anchor ?? receipt?.anchor;
  return (
    <section aria-labelledby="receipt-title">
      <h2 id="receipt-title">Receipt {shortHex(intentId)}</h2>
      <Problem error={error} />
      {receipt === undefined && !error && <p>Reading the receipt…</p>}
      {receipt === null && (
        <Empty>There is no receipt for this purchase: it is unknown or not funded yet.</Empty>
      )}
      {receipt && (
        <>
          <p>
            {receipt.capability} · <strong>{receipt.state}</strong> · created{' '}
            <Time iso={receipt.createdAt} />
          </p>
          <table>
            <caption>Payment legs</caption>
            <thead>
              <tr>
                <th scope="col">Leg</th>
                <th scope="col">Chain</th>
                <th scope="col">Amount</th>
                <th scope="col">From → to</th>
                <th scope="col">Transaction</th>
              </tr>
            </thead>
            <tbody>
              <LegRow name="Funding" leg={receipt.paymentLegs.funding} />
              <LegRow name="Settlement" leg={receipt.paymentLegs.settlement} />
            </tbody>
          </table>
          <p role="status" aria-label="Anchor state">
            Anchor: <strong>{current?.state}</strong>
            {current?.txHash && (
              <span class="mono">
                {' '}
                · tx {shortHex(current.txHash)} in block {current.blockNumber}
              </span>
            )}
            {current?.reason && <span> · {current.reason}</span>}
          </p>
          <p class="mono muted">Integrity digest {receipt.integrity.digest}</p>
        </>
      )}
    </section>
  );
}
