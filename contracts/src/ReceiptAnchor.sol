// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ReceiptAnchor
/// @notice Publishes the service's receipts in batches. A batch is the RFC 6962 Merkle root
/// (keccak256, leaf 0x00 || data, node 0x01 || left || right; docs/receipts.md) of `count`
/// receipts at the contiguous sequence positions firstSeq .. firstSeq + count - 1. Positions are
/// this contract's own, counted from 0; each is anchored exactly once, so a batch cannot be
/// anchored twice and a receipt cannot be in two batches. Anyone holding a receipt and its audit
/// path checks it against `batchOf(root)` or the `Anchored` event.
/// @dev Writers anchor. The writer set changes only by proposeWriter, then executeWriter once
/// WRITER_DELAY seconds have passed; the delay is fixed at construction and nothing can change it.
/// The admin is fixed too: it proposes and cancels, it cannot anchor (unless also a writer) and
/// cannot skip the delay, so every writer change is public for WRITER_DELAY before it takes
/// effect. A lost or stolen admin key means deploying a new contract; batches anchored here stay
/// verifiable. Executing a due proposal is open to anyone: it only applies what the admin
/// announced, so the admin key can stay offline after proposing. No upgrade path, no owner.
contract ReceiptAnchor {
    /// One storage slot. `count` is 0 for a root that was never anchored.
    struct Batch {
        uint64 firstSeq;
        uint32 count;
        uint64 blockNumber;
    }

    /// One storage slot. `eta` is 0 when no change is pending.
    struct WriterProposal {
        bool allowed;
        uint64 eta;
    }

    /// Longest accepted delay (a year); bounds `eta` far inside uint64.
    uint64 public constant MAX_WRITER_DELAY = 365 days;

    /// Seconds between proposing a writer change and the earliest moment it can be executed.
    uint64 public immutable WRITER_DELAY;
    address public immutable ADMIN;

    /// The sequence position the next batch must start at.
    uint64 public nextSeq;
    mapping(address account => bool) public isWriter;
    mapping(address account => WriterProposal) private _proposals;
    mapping(bytes32 root => Batch) private _batches;

    event Anchored(bytes32 indexed root, uint64 indexed firstSeq, uint32 count, address writer);
    event WriterProposed(address indexed account, bool allowed, uint64 eta);
    event WriterProposalCancelled(address indexed account, bool allowed);
    event WriterSet(address indexed account, bool allowed);

    error WriterDelayOutOfRange(uint256 delay, uint256 maxDelay);
    error AdminZero();
    error NotAdmin(address caller);
    error NotWriter(address caller);
    error RootZero();
    error EmptyBatch();
    error NonContiguousBatch(uint64 expectedFirstSeq, uint64 firstSeq);
    error RootAlreadyAnchored(bytes32 root);
    error WriterZero();
    error WriterUnchanged(address account, bool allowed);
    error WriterProposalPending(address account, uint64 eta);
    error NoWriterProposal(address account);
    error WriterProposalMismatch(address account, bool proposedAllowed);
    error WriterProposalNotDue(address account, uint64 eta);

    modifier onlyAdmin() {
        if (msg.sender != ADMIN) revert NotAdmin(msg.sender);
        _;
    }

    /// @param writerDelay seconds, 1 .. MAX_WRITER_DELAY (three days on mainnet, seconds on devnet)
    /// @param admin the one account that may propose and cancel writer changes
    /// @param initialWriters writers from the start; empty for a deployment whose writer must wait
    /// out the delay like any later one (the mainnet configuration)
    constructor(uint64 writerDelay, address admin, address[] memory initialWriters) {
        if (writerDelay == 0 || writerDelay > MAX_WRITER_DELAY) revert WriterDelayOutOfRange(writerDelay, MAX_WRITER_DELAY);
        if (admin == address(0)) revert AdminZero();
        WRITER_DELAY = writerDelay;
        ADMIN = admin;
        for (uint256 i = 0; i < initialWriters.length; ++i) {
            address writer = initialWriters[i];
            if (writer == address(0)) revert WriterZero();
            if (isWriter[writer]) revert WriterUnchanged(writer, true);
            isWriter[writer] = true;
            emit WriterSet(writer, true);
        }
    }

    /// @notice Anchors the batch of `count` receipts starting at `firstSeq`, which must be `nextSeq`.
    function anchor(bytes32 root, uint64 firstSeq, uint32 count) external {
        if (!isWriter[msg.sender]) revert NotWriter(msg.sender);
        if (root == bytes32(0)) revert RootZero();
        if (count == 0) revert EmptyBatch();
        uint64 expected = nextSeq;
        if (firstSeq != expected) revert NonContiguousBatch(expected, firstSeq);
        if (_batches[root].count != 0) revert RootAlreadyAnchored(root);
        nextSeq = firstSeq + count;
        _batches[root] = Batch({firstSeq: firstSeq, count: count, blockNumber: uint64(block.number)});
        emit Anchored(root, firstSeq, count, msg.sender);
    }

    /// @notice Announces adding (`allowed`) or removing a writer; executable from the returned time.
    function proposeWriter(address account, bool allowed) external onlyAdmin returns (uint64 eta) {
        if (account == address(0)) revert WriterZero();
        if (isWriter[account] == allowed) revert WriterUnchanged(account, allowed);
        uint64 pendingEta = _proposals[account].eta;
        if (pendingEta != 0) revert WriterProposalPending(account, pendingEta);
        eta = uint64(block.timestamp) + WRITER_DELAY;
        _proposals[account] = WriterProposal({allowed: allowed, eta: eta});
        emit WriterProposed(account, allowed, eta);
    }

    /// @notice Applies a due proposal, once. `allowed` must repeat the proposal, so a caller never
    /// applies a change other than the one it meant.
    function executeWriter(address account, bool allowed) external {
        WriterProposal memory proposal = _proposals[account];
        if (proposal.eta == 0) revert NoWriterProposal(account);
        if (proposal.allowed != allowed) revert WriterProposalMismatch(account, proposal.allowed);
        if (block.timestamp < proposal.eta) revert WriterProposalNotDue(account, proposal.eta);
        delete _proposals[account];
        isWriter[account] = allowed;
        emit WriterSet(account, allowed);
    }

    /// @notice Withdraws a pending proposal before (or after) it is due.
    function cancelWriterProposal(address account) external onlyAdmin {
        WriterProposal memory proposal = _proposals[account];
        if (proposal.eta == 0) revert NoWriterProposal(account);
        delete _proposals[account];
        emit WriterProposalCancelled(account, proposal.allowed);
    }

    /// @notice The pending change for `account`; eta 0 means none.
    function proposalOf(address account) external view returns (WriterProposal memory) {
        return _proposals[account];
    }

    /// @notice The batch anchored under `root`; count 0 means none.
    function batchOf(bytes32 root) external view returns (Batch memory) {
        return _batches[root];
    }
}
