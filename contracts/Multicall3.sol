// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title Multicall3
/// @notice The project's own minimal contract with the `aggregate3` function of the Multicall3
/// batching contract found at 0xcA11bde05977b3631167028862bE2a173976CA11 on most EVM chains: same
/// selector (0x82ad56cb), same argument and result layout, same meaning of `allowFailure`. The
/// local nodes of the demo and the tests carry its runtime code at that address from genesis, so
/// the indexer's census batches its reads there exactly as it does on a public chain. Nothing else
/// of Multicall3 is provided (the census needs only this).
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Calls each target in order with its calldata and all the gas left; a failed call
    /// reverts the whole batch unless it allows failure, in which case its result says so.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory results) {
        uint256 n = calls.length;
        results = new Result[](n);
        for (uint256 i; i < n; ++i) {
            Call3 calldata one = calls[i];
            (bool ok, bytes memory data) = one.target.call(one.callData);
            if (!ok && !one.allowFailure) revert("Multicall3: call failed");
            results[i] = Result({success: ok, returnData: data});
        }
    }
}
