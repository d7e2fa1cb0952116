// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice Receiver hook of ERC-721 safe transfers.
interface IERC721Receiver {
    function onERC721Received(address operator, address from, uint256 tokenId, bytes calldata data)
        external
        returns (bytes4);
}

/// @title IdentityRegistry
/// @notice The project's own ERC-8004-compatible identity registry, used on local test chains only.
/// An agent is an ERC-721 token; agentId is a counter starting at 0. The events carry exactly the
/// signatures of the ERC-8004 mainnet deployments so that an indexer sees the same topic0 values.
/// Deliberately minimal: no upgradeability, no EIP-712 wallet binding, no owner role.
contract IdentityRegistry {
    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    // ---- ERC-721 / ERC-4906 events ----
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    event MetadataUpdate(uint256 _tokenId);

    // ---- ERC-8004 events ----
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );

    string public constant name = "AgentIdentity";
    string public constant symbol = "AGENT";

    /// @dev The "agentWallet" key is managed by the registry itself (set on mint, cleared on transfer).
    string private constant AGENT_WALLET_KEY = "agentWallet";
    bytes32 private constant AGENT_WALLET_KEY_HASH = keccak256("agentWallet");

    uint256 private _nextAgentId;
    mapping(uint256 agentId => address) private _owners;
    mapping(address owner => uint256) private _balances;
    mapping(uint256 agentId => address) private _tokenApprovals;
    mapping(address owner => mapping(address operator => bool)) private _operatorApprovals;
    mapping(uint256 agentId => string) private _agentURIs;
    mapping(uint256 agentId => mapping(string key => bytes)) private _metadata;

    // ------------------------------------------------------------------ registration

    function register() external returns (uint256 agentId) {
        agentId = _register("");
    }

    function register(string calldata agentURI) external returns (uint256 agentId) {
        agentId = _register(agentURI);
    }

    function register(string calldata agentURI, MetadataEntry[] calldata metadata)
        external
        returns (uint256 agentId)
    {
        agentId = _register(agentURI);
        for (uint256 i = 0; i < metadata.length; i++) {
            _setMetadata(agentId, metadata[i].metadataKey, metadata[i].metadataValue);
        }
    }

    /// @dev Log order follows the mainnet registry: Transfer, MetadataUpdate, Registered,
    /// MetadataSet(agentWallet). The minter (msg.sender) is the first owner.
    function _register(string memory agentURI) private returns (uint256 agentId) {
        agentId = _nextAgentId++;
        _owners[agentId] = msg.sender;
        _balances[msg.sender] += 1;
        emit Transfer(address(0), msg.sender, agentId);

        _agentURIs[agentId] = agentURI;
        emit MetadataUpdate(agentId);
        emit Registered(agentId, agentURI, msg.sender);

        bytes memory wallet = abi.encodePacked(msg.sender);
        _metadata[agentId][AGENT_WALLET_KEY] = wallet;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, wallet);

        _checkReceiver(address(0), msg.sender, agentId, "");
    }

    /// @notice Number of agents minted so far (the next agentId).
    function totalAgents() external view returns (uint256) {
        return _nextAgentId;
    }

    // ------------------------------------------------------------------ URI and metadata

    function tokenURI(uint256 agentId) external view returns (string memory) {
        _requireOwned(agentId);
        return _agentURIs[agentId];
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external {
        _requireAuthorized(agentId);
        _agentURIs[agentId] = newURI;
        emit MetadataUpdate(agentId);
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    function getMetadata(uint256 agentId, string calldata metadataKey) external view returns (bytes memory) {
        return _metadata[agentId][metadataKey];
    }

    function setMetadata(uint256 agentId, string calldata metadataKey, bytes calldata metadataValue) external {
        _requireAuthorized(agentId);
        _setMetadata(agentId, metadataKey, metadataValue);
    }

    function _setMetadata(uint256 agentId, string memory key, bytes memory value) private {
        require(keccak256(bytes(key)) != AGENT_WALLET_KEY_HASH, "reserved key");
        _metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    function getAgentWallet(uint256 agentId) external view returns (address) {
        _requireOwned(agentId);
        bytes memory raw = _metadata[agentId][AGENT_WALLET_KEY];
        if (raw.length != 20) return address(0);
        return address(bytes20(raw));
    }

    // ------------------------------------------------------------------ ERC-721

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 // ERC-165
            || interfaceId == 0x80ac58cd // ERC-721
            || interfaceId == 0x5b5e139f // ERC-721 metadata
            || interfaceId == 0x49064906; // ERC-4906
    }

    function balanceOf(address owner) external view returns (uint256) {
        require(owner != address(0), "zero address");
        return _balances[owner];
    }

    function ownerOf(uint256 agentId) public view returns (address) {
        return _requireOwned(agentId);
    }

    function approve(address to, uint256 agentId) external {
        address owner = _requireOwned(agentId);
        require(msg.sender == owner || _operatorApprovals[owner][msg.sender], "Not authorized");
        _tokenApprovals[agentId] = to;
        emit Approval(owner, to, agentId);
    }

    function getApproved(uint256 agentId) public view returns (address) {
        _requireOwned(agentId);
        return _tokenApprovals[agentId];
    }

    function setApprovalForAll(address operator, bool approved) external {
        require(operator != address(0), "zero operator");
        _operatorApprovals[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function isApprovedForAll(address owner, address operator) public view returns (bool) {
        return _operatorApprovals[owner][operator];
    }

    /// @notice Transfers to any address except 0 (burn-address owners such as 0x…dEaD are allowed).
    function transferFrom(address from, address to, uint256 agentId) public {
        require(to != address(0), "zero receiver");
        address owner = _requireOwned(agentId);
        require(owner == from, "wrong from");
        require(
            msg.sender == owner || _operatorApprovals[owner][msg.sender] || _tokenApprovals[agentId] == msg.sender,
            "Not authorized"
        );

        // The verified agent wallet does not follow the token: clear it before the Transfer log,
        // as the mainnet registry does.
        delete _metadata[agentId][AGENT_WALLET_KEY];
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, "");

        delete _tokenApprovals[agentId];
        _balances[from] -= 1;
        _balances[to] += 1;
        _owners[agentId] = to;
        emit Transfer(from, to, agentId);
    }

    function safeTransferFrom(address from, address to, uint256 agentId) external {
        safeTransferFrom(from, to, agentId, "");
    }

    function safeTransferFrom(address from, address to, uint256 agentId, bytes memory data) public {
        transferFrom(from, to, agentId);
        _checkReceiver(from, to, agentId, data);
    }

    // ------------------------------------------------------------------ internals

    function _requireOwned(uint256 agentId) private view returns (address owner) {
        owner = _owners[agentId];
        require(owner != address(0), "unknown agent");
    }

    function _requireAuthorized(uint256 agentId) private view {
        address owner = _requireOwned(agentId);
        require(
            msg.sender == owner || _operatorApprovals[owner][msg.sender] || _tokenApprovals[agentId] == msg.sender,
            "Not authorized"
        );
    }

    function _checkReceiver(address from, address to, uint256 agentId, bytes memory data) private {
        if (to.code.length == 0) return;
        bytes4 answer = IERC721Receiver(to).onERC721Received(msg.sender, from, agentId, data);
        require(answer == IERC721Receiver.onERC721Received.selector, "not an ERC721 receiver");
    }
}
