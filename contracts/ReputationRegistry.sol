// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The part of the identity registry the reputation registry reads.
interface IIdentityRegistryView {
    function ownerOf(uint256 agentId) external view returns (address);
    function getApproved(uint256 agentId) external view returns (address);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
}

/// @title ReputationRegistry
/// @notice The project's own ERC-8004-compatible reputation registry (int128 value layout of the
/// mainnet deployments), used on local test chains only. Event signatures match mainnet exactly:
///   NewFeedback     topic0 0x6a4a61743519c9d648a14e6493f47dbe3ff1aa29e7785c96c8326a205e58febc
///   FeedbackRevoked topic0 0x25156fd3288212246d8b008d5921fde376c71ed14ac2e072a506eb06fde6d09d
contract ReputationRegistry {
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );

    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);

    event ResponseAppended(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        address indexed responder,
        string responseURI,
        bytes32 responseHash
    );

    struct Feedback {
        int128 value;
        uint8 valueDecimals;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    uint8 public constant MAX_VALUE_DECIMALS = 18;
    int128 public constant MAX_ABS_VALUE = 1e38;

    IIdentityRegistryView private immutable _identityRegistry;

    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => Feedback))) private _feedback;
    mapping(uint256 agentId => mapping(address client => uint64)) private _lastIndex;
    mapping(uint256 agentId => address[]) private _clients;
    mapping(uint256 agentId => mapping(address client => bool)) private _isClient;

    constructor(address identityRegistry_) {
        require(identityRegistry_ != address(0), "bad identity");
        _identityRegistry = IIdentityRegistryView(identityRegistry_);
    }

    function getIdentityRegistry() external view returns (address) {
        return address(_identityRegistry);
    }

    /// @notice Rate an agent. feedbackIndex counts per (agentId, client) from 1.
    /// The agent's owner and its approved operators are refused (self-feedback); zero and negative
    /// values are valid.
    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        require(valueDecimals <= MAX_VALUE_DECIMALS, "too many decimals");
        require(value <= MAX_ABS_VALUE && value >= -MAX_ABS_VALUE, "value out of range");

        // ownerOf reverts for an unknown agent, which refuses the feedback too.
        address owner = _identityRegistry.ownerOf(agentId);
        require(
            msg.sender != owner && !_identityRegistry.isApprovedForAll(owner, msg.sender)
                && _identityRegistry.getApproved(agentId) != msg.sender,
            "Self-feedback not allowed"
        );

        uint64 index = _lastIndex[agentId][msg.sender] + 1;
        _lastIndex[agentId][msg.sender] = index;
        _feedback[agentId][msg.sender][index] =
            Feedback({value: value, valueDecimals: valueDecimals, isRevoked: false, tag1: tag1, tag2: tag2});

        if (!_isClient[agentId][msg.sender]) {
            _isClient[agentId][msg.sender] = true;
            _clients[agentId].push(msg.sender);
        }

        emit NewFeedback(
            agentId, msg.sender, index, value, valueDecimals, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash
        );
    }

    /// @notice Revoke one's own feedback, once.
    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        require(feedbackIndex > 0 && feedbackIndex <= _lastIndex[agentId][msg.sender], "index out of bounds");
        Feedback storage fb = _feedback[agentId][msg.sender][feedbackIndex];
        require(!fb.isRevoked, "Already revoked");
        fb.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    /// @notice Anyone (typically the agent) may append a response to an existing feedback.
    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external {
        require(bytes(responseURI).length > 0, "Empty URI");
        require(feedbackIndex > 0 && feedbackIndex <= _lastIndex[agentId][clientAddress], "index out of bounds");
        emit ResponseAppended(agentId, clientAddress, feedbackIndex, msg.sender, responseURI, responseHash);
    }

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return _lastIndex[agentId][clientAddress];
    }

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked)
    {
        require(feedbackIndex > 0 && feedbackIndex <= _lastIndex[agentId][clientAddress], "index out of bounds");
        Feedback storage fb = _feedback[agentId][clientAddress][feedbackIndex];
        return (fb.value, fb.valueDecimals, fb.tag1, fb.tag2, fb.isRevoked);
    }

    function getClients(uint256 agentId) external view returns (address[] memory) {
        return _clients[agentId];
    }

    /// @notice How many of the feedback the given clients gave the agent are not revoked (those with
    /// tag1 / tag2 only, when given: an empty tag matches any), and their mean. As in the ERC-8004
    /// registry the client list is required (an empty one reverts) and the mean is returned in the
    /// most frequent valueDecimals of the feedback counted (the smallest on a tie), computed in 18
    /// decimals; a mean that does not fit int128 at that precision is truncated (the count is exact).
    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)
    {
        require(clientAddresses.length > 0, "clientAddresses required");
        TagFilter memory filter = TagFilter({
            byTag1: bytes(tag1).length > 0,
            byTag2: bytes(tag2).length > 0,
            hash1: keccak256(bytes(tag1)),
            hash2: keccak256(bytes(tag2))
        });
        int256 sum18;
        uint64[19] memory perDecimals;
        for (uint256 i; i < clientAddresses.length; ++i) {
            (uint64 n, int256 s) = _summarizeClient(agentId, clientAddresses[i], filter, perDecimals);
            count += n;
            sum18 += s;
        }
        if (count == 0) return (0, 0, 0);
        for (uint8 d = 1; d <= MAX_VALUE_DECIMALS; ++d) {
            if (perDecimals[d] > perDecimals[summaryValueDecimals]) summaryValueDecimals = d;
        }
        int256 mean18 = sum18 / int256(uint256(count));
        summaryValue = int128(mean18 / int256(10 ** (MAX_VALUE_DECIMALS - summaryValueDecimals)));
    }

    struct TagFilter {
        bool byTag1;
        bool byTag2;
        bytes32 hash1;
        bytes32 hash2;
    }

    /// @dev One client's non-revoked feedback of the agent that the filter keeps: how many, their sum
    /// in 18 decimals; counts each one's valueDecimals into `perDecimals`.
    function _summarizeClient(uint256 agentId, address client, TagFilter memory filter, uint64[19] memory perDecimals)
        private
        view
        returns (uint64 n, int256 sum18)
    {
        uint64 last = _lastIndex[agentId][client];
        for (uint64 j = 1; j <= last; ++j) {
            Feedback storage fb = _feedback[agentId][client][j];
            if (fb.isRevoked) continue;
            if (filter.byTag1 && keccak256(bytes(fb.tag1)) != filter.hash1) continue;
            if (filter.byTag2 && keccak256(bytes(fb.tag2)) != filter.hash2) continue;
            sum18 += int256(fb.value) * int256(10 ** (MAX_VALUE_DECIMALS - fb.valueDecimals));
            ++perDecimals[fb.valueDecimals];
            ++n;
        }
    }
}
