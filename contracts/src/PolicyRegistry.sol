// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title PolicyRegistry
/// @notice The public record of spend policies. An owner registers a policy under the id the
/// service derives off chain, uint256(keccak256(abi.encodePacked(owner, ownerNonce))), together
/// with the hash of its normalised rules, so anyone can check that the service enforces exactly
/// what the owner published. Only the owner changes a record afterwards.
/// @dev There is no admin and no upgrade path: the service reads events, it never writes here.
/// The record is a publication; the service's database stays authoritative for enforcement.
contract PolicyRegistry {
    struct Record {
        address owner;
        bytes32 policyHash;
        /// Unix seconds; 0 means the policy never expires.
        uint64 expiresAt;
        bool paused;
    }

    mapping(uint256 policyId => Record) private _records;

    event PolicyRegistered(uint256 indexed policyId, address indexed owner, bytes32 policyHash, uint64 expiresAt);
    event PolicyUpdated(uint256 indexed policyId, bytes32 policyHash, uint64 expiresAt);
    event PolicyPaused(uint256 indexed policyId);
    event PolicyResumed(uint256 indexed policyId);

    error OwnerNonceZero();
    error PolicyHashZero();
    error PolicyIdTaken(uint256 policyId);
    error PolicyNotRegistered(uint256 policyId);
    error NotPolicyOwner(uint256 policyId, address caller);
    error PolicyAlreadyPaused(uint256 policyId);
    error PolicyNotPaused(uint256 policyId);

    modifier onlyPolicyOwner(uint256 policyId) {
        address owner = _records[policyId].owner;
        if (owner == address(0)) revert PolicyNotRegistered(policyId);
        if (owner != msg.sender) revert NotPolicyOwner(policyId, msg.sender);
        _;
    }

    /// @notice The id the service gives an owner's policy number `ownerNonce` (counted from 1).
    function policyIdOf(address owner, uint256 ownerNonce) public pure returns (uint256) {
        return uint256(keccak256(abi.encodePacked(owner, ownerNonce)));
    }

    /// @notice Registers the caller's policy number `ownerNonce`; the id is derived from the caller,
    /// so nobody can register a policy under another owner's id.
    function register(uint256 ownerNonce, bytes32 policyHash, uint64 expiresAt) external returns (uint256 policyId) {
        if (ownerNonce == 0) revert OwnerNonceZero();
        if (policyHash == bytes32(0)) revert PolicyHashZero();
        policyId = policyIdOf(msg.sender, ownerNonce);
        if (_records[policyId].owner != address(0)) revert PolicyIdTaken(policyId);
        _records[policyId] = Record({owner: msg.sender, policyHash: policyHash, expiresAt: expiresAt, paused: false});
        emit PolicyRegistered(policyId, msg.sender, policyHash, expiresAt);
    }

    /// @notice Publishes a new version's hash (and expiry) for a registered policy.
    function update(uint256 policyId, bytes32 policyHash, uint64 expiresAt) external onlyPolicyOwner(policyId) {
        if (policyHash == bytes32(0)) revert PolicyHashZero();
        Record storage record = _records[policyId];
        record.policyHash = policyHash;
        record.expiresAt = expiresAt;
        emit PolicyUpdated(policyId, policyHash, expiresAt);
    }

    function pause(uint256 policyId) external onlyPolicyOwner(policyId) {
        Record storage record = _records[policyId];
        if (record.paused) revert PolicyAlreadyPaused(policyId);
        record.paused = true;
        emit PolicyPaused(policyId);
    }

    function resume(uint256 policyId) external onlyPolicyOwner(policyId) {
        Record storage record = _records[policyId];
        if (!record.paused) revert PolicyNotPaused(policyId);
        record.paused = false;
        emit PolicyResumed(policyId);
    }

    /// @notice The record of `policyId`; an unregistered id has the zero owner.
    function recordOf(uint256 policyId) external view returns (Record memory) {
        return _records[policyId];
    }
}
