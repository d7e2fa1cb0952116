-- Registration files, domain proofs and live endpoints (issue 33).
--
-- agent_registrations: one row per agent whose agentURI (Registered / URIUpdated) is not empty,
-- keyed like the agent. The row is also the durable fetch queue of that file, with the same
-- states and lease as feedback_documents (queued → leased → succeeded | retry → … | failed; an
-- expired lease is taken again). The ingest writes it in the transaction that sets the URI: a new
-- URI, or the same one set again by a later event (uri_block, uri_log_index), queues the file
-- afresh and forgets what the earlier one said. A fetched file is fetched again on a schedule
-- (next_try_at of a succeeded row).
CREATE TABLE IF NOT EXISTS agent_registrations (
  network            TEXT NOT NULL,
  agent_id           TEXT NOT NULL,
  uri                TEXT NOT NULL,
  -- position of the event that set the URI (NULL for a row backfilled from an older index)
  uri_block          BIGINT,
  uri_log_index      INTEGER,
  state              TEXT NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'leased', 'retry', 'succeeded', 'failed')),
  attempts           INTEGER NOT NULL DEFAULT 0,
  next_try_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  lease_owner        TEXT,
  lease_expires_at   TIMESTAMPTZ,
  -- the last fetch's error code (NULL after a success)
  reason             TEXT,
  created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- what the file is: NULL until a first outcome (served as `pending`)
  file_state         TEXT CHECK (file_state IN ('valid', 'invalid', 'unreachable', 'changed')),
  -- the fields that failed: [{field, problem}]
  problems           JSONB,
  -- keccak256 of the first bytes fetched for this URI; later other bytes are `changed`
  first_keccak256    TEXT,
  blob_sha256        TEXT,
  blob_keccak256     TEXT,
  byte_length        INTEGER,
  content_type       TEXT,
  -- the last fetch that returned bytes; the last fetch that ended (either way); when the bytes first changed
  fetched_at         TIMESTAMPTZ,
  checked_at         TIMESTAMPTZ,
  changed_at         TIMESTAMPTZ,
  parser_version     TEXT,
  -- what the file declares (hostile text, kept as text and capped; never rendered as markup)
  name               TEXT,
  description        TEXT,
  image              TEXT,
  x402_support       BOOLEAN,
  active             BOOLEAN,
  supported_trust    JSONB,
  -- the file's registrations[] against this agent's own registry and id
  registrations_check TEXT CHECK (registrations_check IN ('listed', 'absent', 'mismatch')),
  PRIMARY KEY (network, agent_id)
);
CREATE INDEX IF NOT EXISTS agent_registrations_due_idx ON agent_registrations (state, next_try_at);

-- The services (services[], or the older endpoints[]) of the last file parsed, in the file's
-- order, each with its domain proof (https endpoints: the host's
-- /.well-known/agent-registration.json lists this agent or not) and its liveness at the protocol
-- level (A2A card parsed, MCP initialize + tools/list, web 2xx), probed on a schedule. Deleted with
-- its registration row.
CREATE TABLE IF NOT EXISTS agent_endpoints (
  network            TEXT NOT NULL,
  agent_id           TEXT NOT NULL,
  position           INTEGER NOT NULL,
  -- the service's name as declared (A2A, MCP, web, OASF, ENS, …), capped
  service_type       TEXT NOT NULL,
  url                TEXT NOT NULL,
  version            TEXT,
  -- how it is probed: a2a, mcp, web (any other http(s) service), none (not an http(s) URL)
  probe_kind         TEXT NOT NULL CHECK (probe_kind IN ('a2a', 'mcp', 'web', 'none')),
  -- lower-cased host[:port] of an http(s) URL (the unit of the per-host rate)
  host               TEXT,
  domain_proof       TEXT CHECK (domain_proof IN ('verified', 'absent', 'mismatch', 'unreachable')),
  domain_reason      TEXT,
  domain_checked_at  TIMESTAMPTZ,
  liveness           TEXT CHECK (liveness IN ('alive', 'dead')),
  liveness_reason    TEXT,
  last_probe_at      TIMESTAMPTZ,
  last_alive_at      TIMESTAMPTZ,
  -- tools listed (MCP) or skills in the card (A2A) at the last successful probe
  tool_count         INTEGER,
  skill_count        INTEGER,
  latency_ms         INTEGER,
  -- the next probe (NULL: never probed, probe_kind none); a leased probe moves it forward
  next_probe_at      TIMESTAMPTZ,
  PRIMARY KEY (network, agent_id, position),
  FOREIGN KEY (network, agent_id) REFERENCES agent_registrations (network, agent_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS agent_endpoints_due_idx ON agent_endpoints (host, next_probe_at) WHERE next_probe_at IS NOT NULL;

-- The per-host rate of the liveness probes: a host is probed at most once per interval, whichever
-- process probes (a probe round leases the host by moving next_allowed_at, SKIP LOCKED).
CREATE TABLE IF NOT EXISTS liveness_hosts (
  host               TEXT PRIMARY KEY,
  next_allowed_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Agents an index already holds: their files are queued now.
INSERT INTO agent_registrations (network, agent_id, uri, uri_block, uri_log_index)
SELECT network, agent_id, agent_uri, uri_block, uri_log_index FROM agents
 WHERE agent_uri IS NOT NULL AND btrim(agent_uri) <> ''
ON CONFLICT (network, agent_id) DO NOTHING;
