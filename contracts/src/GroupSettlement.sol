// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @dev The EIP-3009 entry the group calls: the `bytes signature` form (USDC v2.2 and our devnet
/// token), which takes a 65-byte ECDSA signature as well as an ERC-1271 one.
interface IEip3009TransferWithAuthorization {
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @title GroupSettlement
/// @notice Submits a group of signed EIP-3009 transfer authorizations in one transaction. Each
/// authorization is tried on its own: one that fails (bad signature, no balance, nonce already
/// used, outside its window) never reverts the group. The contract holds nothing and needs no
/// trust: every authorization names its own payee and anyone may submit it; the token's
/// AuthorizationUsed and Transfer events are the truth about which ones moved money.
contract GroupSettlement {
    struct Authorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        bytes signature;
    }

    /// @notice One per authorization, after its attempt; `reason` is the revert selector when it failed.
    event AuthorizationSettled(
        address indexed token, address indexed authorizer, bytes32 indexed nonce, bool settled, bytes4 reason
    );

    /// @notice No authorization of the group moved money: the transaction reverts, as a single
    /// transferWithAuthorization would (the caller treats it as one reverted settlement per member).
    error NothingSettled(uint256 size);

    /// @notice The group was sent with too little gas to give every authorization a fair attempt.
    error GroupOutOfGas(uint256 index, uint256 gasLeft);

    /// @dev Below this much gas an attempt might fail for want of gas rather than for its own
    /// fault, and be reported as failed while still usable: the whole group reverts instead.
    uint256 public constant MIN_GAS_PER_AUTHORIZATION = 120_000;

    function settle(address token, Authorization[] calldata authorizations)
        external
        returns (bool[] memory settled)
    {
        settled = new bool[](authorizations.length);
        uint256 count = 0;
        for (uint256 i = 0; i < authorizations.length; ++i) {
            if (gasleft() < MIN_GAS_PER_AUTHORIZATION) revert GroupOutOfGas(i, gasleft());
            Authorization calldata a = authorizations[i];
            bytes4 reason;
            try IEip3009TransferWithAuthorization(token).transferWithAuthorization(
                a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.signature
            ) {
                settled[i] = true;
                ++count;
            } catch (bytes memory revertData) {
                if (revertData.length >= 4) reason = bytes4(revertData);
            }
            emit AuthorizationSettled(token, a.from, a.nonce, settled[i], reason);
        }
        if (count == 0) revert NothingSettled(authorizations.length);
    }
}
