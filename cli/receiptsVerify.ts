// `spend-control receipts verify <receiptId|intentId> --rpc <url> [--contract <address>]
// [--service <url>] [--receipt-file <path>] [--writer-delay <seconds>]`: checks a receipt's
// anchoring without trusting the service. The contract is the user's (--contract); without it the
// service's is used with a printed warning. The contract's WRITER_DELAY must be the spec's three
// days (--writer-delay names another, e.g. a devnet's seconds): a shorter delay would let a new
// writer be added before anyone could object. The leaf is receiptId ‖ digest, the digest recomputed from the receipt itself where
// there is one (a consumer receipt's public body, or a preflight response for a decision receipt;
// JCS + keccak256); the audit path is walked to a root, and the root and batch size must be what
// the ReceiptAnchor contract holds (batchOf, one eth_call on the RPC the user chose). Exit 0
// verified, 1 not.
import fs from 'node:fs';
import { type Address, type Hex, createPublicClient, getAddress, http, isAddress } from 'viem';
import { receiptAnchorAbi } from '../contracts/artifacts/abis';
import { hashJson } from '../core/canon/jcs';
import {
  leafHash,
  proofFromHex,
  receiptLeafData,
  receiptMerkleHash,
  rootFromInclusionProof,
} from '../core/canon/merkle';
import { decisionReceiptBodyOf, decisionReceiptDigest } from '../core/receipts/anchor';
import { bytesToHex } from 'viem';
import { MAINNET_WRITER_DELAY_SECONDS } from '../platform/chain/receiptAnchor';
import { parseCommandArgs, UsageError } from './args';

export const RECEIPTS_USAGE =
  'usage: spend-control receipts verify <receiptId|intentId> --rpc <url> [--contract <address>] [--service <url>] [--receipt-file <path>] [--writer-delay <seconds>]';
const DEFAULT_SERVICE = 'http://127.0.0.1:4000';
const HEX32 = /^0x[0-9a-f]{64}$/;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents from the network, checked field by field
type Json = Record<string, any>;
type Out = (line: string) => void;

class NotVerified extends Error {}

async function fetchJson(url: string): Promise<Json> {
  const response = await fetch(url);
  const body = (await response.json().catch(() => null)) as Json | null;
  if (!response.ok || body === null)
    throw new NotVerified(`${url} answered ${response.status}${body?.code ? ` ${body.code}` : ''}`);
  return body;
}

/** What is checked: the anchor object and the digest, and where the digest came from. */
interface Subject {
  readonly anchor: Json;
  readonly digest: string;
  readonly source: string;
}

/** The digest of a receipt document: a consumer receipt body, or a preflight response. */
function digestOf(document: Json): { digest: string; source: string } {
  if (typeof document.integrity === 'object' && document.integrity !== null) {
    const { integrity: _integrity, anchor: _anchor, ...covered } = document;
    return { digest: hashJson(covered), source: 'recomputed from the consumer receipt body' };
  }
  return {
    digest: decisionReceiptDigest(decisionReceiptBodyOf(document)),
    source: 'recomputed from the decision receipt (preflight response)',
  };
}

async function subjectOf(
  target: string,
  service: string,
  file: string | undefined,
): Promise<Subject> {
  if (file !== undefined) {
    const document = JSON.parse(fs.readFileSync(file, 'utf8')) as Json;
    const receiptId = String(
      document.anchor?.receiptId ?? document.receiptId ?? target,
    ).toLowerCase();
    const anchor =
      document.anchor?.state === 'ANCHORED'
        ? document.anchor
        : await fetchJson(`${service}/receipt_status/${receiptId}`);
    return { anchor, ...digestOf(document) };
  }
  if (target.startsWith('ci_')) {
    const body = await fetchJson(`${service}/consumer/receipt/${encodeURIComponent(target)}`);
    return { anchor: body.anchor ?? {}, ...digestOf(body) };
  }
  const anchor = await fetchJson(`${service}/receipt_status/${encodeURIComponent(target)}`);
  return {
    anchor,
    digest: String(anchor.proof?.digest ?? ''),
    source: 'as published in the proof (pass --receipt-file to recompute it from the receipt)',
  };
}

interface CheckOptions {
  readonly rpc: string;
  /** The user's contract; undefined: the service's, with a warning. */
  readonly contract: string | undefined;
  /** The WRITER_DELAY the contract must have, in seconds. */
  readonly writerDelayS: bigint;
}

async function check(subject: Subject, options: CheckOptions, out: Out) {
  const { rpc, contract: contractFlag } = options;
  const { anchor } = subject;
  if (anchor.state !== 'ANCHORED')
    throw new NotVerified(
      `the receipt is ${anchor.state ?? 'unknown'}${anchor.reason ? `: ${anchor.reason}` : ''}; only an ANCHORED receipt has a proof`,
    );
  const receiptId = String(anchor.receiptId).toLowerCase();
  if (!HEX32.test(receiptId) || !HEX32.test(subject.digest))
    throw new NotVerified('the receipt id or digest is not 32 bytes of hex');
  const { index, treeSize, path } = anchor.proof as {
    index: number;
    treeSize: number;
    path: Hex[];
  };
  const leaf = leafHash(
    receiptMerkleHash,
    receiptLeafData(receiptId as Hex, subject.digest as Hex),
  );
  const walked = rootFromInclusionProof(
    receiptMerkleHash,
    leaf,
    index,
    treeSize,
    proofFromHex(path),
  );
  const root = walked === null ? null : bytesToHex(walked);
  out(`digest    ${subject.digest} (${subject.source})`);
  out(`root      ${root ?? 'none: the proof does not fit a tree of that size'}`);
  if (root === null || root !== String(anchor.batchRoot).toLowerCase())
    throw new NotVerified('the proof does not lead from this receipt to the published batch root');
  const contract = (contractFlag ?? anchor.contract) as string;
  if (!isAddress(contract)) throw new NotVerified(`no contract address (${String(contract)})`);
  if (contractFlag === undefined)
    out(
      `WARNING   no --contract given: checking against ${contract}, the contract the service names; pass the ReceiptAnchor address you trust`,
    );
  const client = createPublicClient({ transport: http(rpc) });
  const delay = await client.readContract({
    address: getAddress(contract) as Address,
    abi: receiptAnchorAbi,
    functionName: 'WRITER_DELAY',
  });
  out(`delay     WRITER_DELAY ${delay} s`);
  if (BigInt(delay) !== options.writerDelayS)
    throw new NotVerified(
      `ReceiptAnchor ${contract} has a writer delay of ${delay} s, not the ${options.writerDelayS} s required (three days: ${MAINNET_WRITER_DELAY_SECONDS} s)`,
    );
  const batch = await client.readContract({
    address: getAddress(contract) as Address,
    abi: receiptAnchorAbi,
    functionName: 'batchOf',
    args: [root],
  });
  if (batch.count === 0)
    throw new NotVerified(`ReceiptAnchor ${contract} has no batch with root ${root}`);
  if (batch.count !== treeSize)
    throw new NotVerified(
      `the contract's batch has ${batch.count} receipts, the proof says ${treeSize}`,
    );
  out(
    `verified  receipt ${receiptId} is leaf ${index} of ${treeSize} in batch ${root}, anchored in block ${batch.blockNumber} (ReceiptAnchor ${contract}, chain ${await client.getChainId()})`,
  );
}

export async function receiptsMain(
  argv: readonly string[],
  out: Out = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'verify') throw new UsageError(RECEIPTS_USAGE);
  const { values, positionals } = parseCommandArgs(
    rest,
    {
      rpc: { type: 'string' },
      contract: { type: 'string' },
      service: { type: 'string', default: DEFAULT_SERVICE },
      'receipt-file': { type: 'string' },
      'writer-delay': { type: 'string', default: String(MAINNET_WRITER_DELAY_SECONDS) },
    },
    true,
  );
  if (positionals.length !== 1 || values.rpc === undefined) throw new UsageError(RECEIPTS_USAGE);
  if (!/^[0-9]{1,10}$/.test(values['writer-delay'])) throw new UsageError(RECEIPTS_USAGE);
  try {
    const service = values.service.replace(/\/+$/, '');
    const subject = await subjectOf(positionals[0], service, values['receipt-file']);
    await check(
      subject,
      {
        rpc: values.rpc,
        contract: values.contract,
        writerDelayS: BigInt(values['writer-delay']),
      },
      out,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof NotVerified) && !(error instanceof Error)) throw error;
    out(`NOT verified: ${error.message.split('\n')[0]}`);
    return 1;
  }
}
