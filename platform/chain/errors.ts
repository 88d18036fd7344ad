// Named failures of the chain layer (local nodes, key store, deployments, token actions), each
// carrying the structured facts a caller needs to react or to print a useful message.
// These are infrastructure errors: the edge maps them onto core/errors.ts codes where they surface.

/** Base class so callers can catch every chain-layer failure with one `instanceof`. */
export class ChainLayerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChainLayerError';
  }
}

export class AnvilStartError extends ChainLayerError {
  readonly binary: string;
  readonly chainId: number;
  /** The last lines anvil printed, for diagnosis; never contains our keys (anvil never sees them). */
  readonly outputTail: readonly string[];

  constructor(
    message: string,
    details: { binary: string; chainId: number; outputTail?: readonly string[] },
    options?: { cause?: unknown },
  ) {
    const tail =
      details.outputTail && details.outputTail.length > 0
        ? `\n${details.outputTail.join('\n')}`
        : '';
    super(`anvil (chain ${details.chainId}, ${details.binary}): ${message}${tail}`, options);
    this.name = 'AnvilStartError';
    this.binary = details.binary;
    this.chainId = details.chainId;
    this.outputTail = details.outputTail ?? [];
  }
}

export class ChainIdMismatchError extends ChainLayerError {
  readonly rpcUrl: string;
  readonly expectedChainId: number;
  readonly actualChainId: number;

  constructor(details: { rpcUrl: string; expectedChainId: number; actualChainId: number }) {
    super(
      `${details.rpcUrl} answers chain id ${details.actualChainId}, expected ${details.expectedChainId}`,
    );
    this.name = 'ChainIdMismatchError';
    this.rpcUrl = details.rpcUrl;
    this.expectedChainId = details.expectedChainId;
    this.actualChainId = details.actualChainId;
  }
}

export class PublishedDevKeyError extends ChainLayerError {
  readonly role: string;

  constructor(role: string) {
    super(
      `the ${role} key is a published development key (anvil/hardhat mnemonic or the deny list); ` +
        'anyone can spend from it, so it is refused in every environment — generate a fresh key',
    );
    this.name = 'PublishedDevKeyError';
    this.role = role;
  }
}

export class InvalidPrivateKeyError extends ChainLayerError {
  readonly role: string;

  constructor(role: string, reason: string) {
    super(`the ${role} private key is invalid: ${reason}`);
    this.name = 'InvalidPrivateKeyError';
    this.role = role;
  }
}

export class KeyFileError extends ChainLayerError {
  readonly path: string;

  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super(`key file ${path}: ${reason}`, options);
    this.name = 'KeyFileError';
    this.path = path;
  }
}

export class KeyFilePermissionsError extends KeyFileError {
  readonly mode: number;

  constructor(path: string, mode: number) {
    super(
      path,
      `mode is ${formatMode(mode)}, but a key file must be readable by its owner only (chmod 600)`,
    );
    this.name = 'KeyFilePermissionsError';
    this.mode = mode;
  }
}

export class DeploymentFailedError extends ChainLayerError {
  readonly contractName: string;
  readonly txHash: `0x${string}`;

  constructor(contractName: string, txHash: `0x${string}`, reason: string) {
    super(`deploying ${contractName} failed (${reason}); transaction ${txHash}`);
    this.name = 'DeploymentFailedError';
    this.contractName = contractName;
    this.txHash = txHash;
  }
}

export class TransactionRevertedError extends ChainLayerError {
  readonly txHash: `0x${string}`;
  readonly action: string;

  constructor(action: string, txHash: `0x${string}`) {
    super(`${action} was mined but reverted; transaction ${txHash}`);
    this.name = 'TransactionRevertedError';
    this.action = action;
    this.txHash = txHash;
  }
}

export function formatMode(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}
